"""The noise part of a mixed list: ``delta_N(t)`` for the conditioning sum, and its search.

Conditioning on the loss of the finite part ``F`` (:mod:`~dpcompose_exact.engines.finiteparts`)
gives, in each direction of the noise part ``N`` (docs/theory.md, section 19):

    ``delta(eps) = leak_F + sum_l p(l) delta_N(eps - l)``,

with ``delta_N(t)`` for every real ``t``; below 0 the identity
``delta_N(-t) = 1 - e^-t + e^-t delta_N'(t)`` (``N'`` the other direction) reads it from
the non-negative side.  Every noise part speaks one protocol, :class:`NoisePart`:

* :class:`GaussianPart`: ``N = G_mu`` (``mu^2 = sum_i k_i (s_i / sigma_i)^2``), whose
  ``delta_N`` is a closed form evaluated in Arb at any precision: the sum is exact up to
  ball rounding, and the answers refine themselves to any number of digits;
* :class:`GridPart`: ``N`` composed on a certified loss grid (docs/theory.md, sections 15
  and 18), known by two-sided bounds of ``delta_N``; the sum is monotone in each of them,
  so the bounds carry through;
* :class:`~dpcompose_exact.engines.oneuse.OneUsePart`: one use of subsampled noise, its
  closed form (section 15).

Each part also says its largest privacy loss in each direction (:meth:`NoisePart.largest_loss`):
``eps(0)`` of the list is the largest total loss, the finite part's plus the noise's (the
losses of independent parts add); Gaussian noise has none (its loss is unbounded).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, Protocol

import flint

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers.convert import ball_end, erfc_ball, rational_ball
from ..numbers.forms import LinearForm
from ..numbers.value import Value
from .epsguide import _guide
from .finiteparts import _MAX_PREC, DirectedFinitePart, FinitePart
from .gaussian import certify_epsilon
from .results import Exactness

__all__ = [
    "Conditioned",
    "NoisePart",
    "GaussianPart",
    "GridPart",
    "gaussian_delta_at",
]


class Conditioned(Protocol):
    """What a noise part reads of the composition it serves (:class:`~.mixed.MixedComposition`)."""

    finite: FinitePart | DirectedFinitePart

    def direction_pairs(self) -> list[tuple[str, str]]:
        """``(finite direction, noise direction)`` pairs whose sums are maximised over."""

    def heavy(
        self, direction: str, prec: int
    ) -> tuple[flint.arb, list[tuple[Fraction, Fraction, flint.arb, flint.arb]], flint.arb]:
        """``(leak, atoms, light)`` of a finite direction, prepared for the grid sums."""

    def heavy_arrays(self, direction: str) -> tuple[Any, Any, Any, Any]:
        """The atoms of :meth:`heavy` as doubles rounded outwards (losses, masses)."""

    def delta_bounds(self, eps: Fraction, sides: str = "both") -> tuple[Fraction, Fraction]:
        """``(lower, upper)`` rationals enclosing ``delta(eps)`` of the composition."""


class NoisePart(Protocol):
    """The one protocol of the noise parts: what the conditioning sum asks of ``N``.

    ``directions``: ``("both",)`` for a symmetric part, ``("fwd", "rev")`` otherwise;
    ``kind``: how its answers are known; ``summary``: a few words for ``describe``.
    """

    directions: tuple[str, ...]
    kind: Exactness
    summary: str

    def describe(self) -> str:
        """A title."""

    def delta_value(self, comp: Conditioned, form: LinearForm) -> Value:
        """``delta(eps)`` of the composition at an exact eps."""

    def delta_bounds(
        self, comp: Conditioned, eps: Fraction, sides: str = "both"
    ) -> tuple[Fraction, Fraction]:
        """``(lower, upper)`` rationals enclosing ``delta(eps)`` of the composition."""

    def epsilon(self, comp: Conditioned, d: Fraction) -> Value:
        """``eps(d)`` of the composition, ``d`` in ``(0, 1)`` above the finite part's leak."""

    def largest_loss(self, direction: str) -> Value | None:
        """The largest privacy loss of the part in ``direction`` (None: unbounded)."""


def gaussian_delta_at(mu2: Fraction, t: flint.arb) -> flint.arb:
    """``delta(t) = Phi(mu/2 - t/mu) - e^t Phi(-mu/2 - t/mu)`` of ``G_mu``, any real ``t``.

    At the working precision of the caller; ``t`` may be a ball (the result then contains
    every value on it, delta being monotone).
    """
    mu = rational_ball(mu2).sqrt()
    r2 = flint.arb(2).sqrt()
    # Phi(x) = erfc(-x / sqrt 2) / 2
    first = erfc_ball((t / mu - mu / 2) / r2) / 2
    second = erfc_ball((t / mu + mu / 2) / r2) / 2
    return first - t.exp() * second


# a Gaussian part's delta bounds stop refining at this precision (bits); a bound below
# 2^-_TINY_BITS is reported as [0, 2^-_TINY_BITS] (a safe enclosure of a few bytes)
_MAX_BOUND_PREC = 4096
_TINY_BITS = 1 << 20
_TINY = flint.arb(2) ** -_TINY_BITS
# eps(delta) of a Gaussian part is searched up to 2^(2^16) (about 10^19728)
_EPS_EXPONENTS = 1 << 16


class GaussianPart:
    """The Gaussian noise part ``G_mu``: a closed form in both directions (symmetric).

    The conditioning sum with it is exact up to ball rounding, so the answers refine
    themselves to any number of digits (kind ``certified``).
    """

    directions = ("both",)
    kind = Exactness.CERTIFIED
    summary = "finite pair composed exactly, with the Gaussian closed form (certified)"

    def __init__(self, mu2: Fraction) -> None:
        if mu2 <= 0:
            raise InvalidParameterError(f"mu^2 = {mu2} must be > 0")
        self.mu2 = Fraction(mu2)

    def describe(self) -> str:
        """``G_mu with mu^2 = ...``."""
        return f"G_mu with mu^2 = {self.mu2}"

    def largest_loss(self, direction: str) -> Value | None:
        """None: the Gaussian loss is unbounded (``eps(0)`` is infinite)."""
        return None

    def ball(self, comp: Conditioned, eps: flint.arb | Fraction, prec: int) -> flint.arb:
        """``delta(eps)`` of the sum at ``prec`` bits (a Fraction read at ``prec``)."""
        best = None
        for direction in comp.finite.directions:  # G_mu is symmetric: one noise direction
            leak, atoms = comp.finite.balls(prec, direction)
            with flint.ctx.workprec(prec):
                at = rational_ball(eps) if isinstance(eps, Fraction) else eps
                total = leak
                for loss, mass in atoms:
                    total += mass * gaussian_delta_at(self.mu2, at - loss)
                best = total if best is None else best.max(total)
        return best  # type: ignore[return-value]

    def delta_value(self, comp: Conditioned, form: LinearForm) -> Value:
        """``delta`` at an exact eps as a Value that refines itself to any digits."""

        def evaluate(prec: int) -> flint.arb:
            work = prec + 32
            ball = self.ball(comp, form.ball(work + 16), work)
            with flint.ctx.workprec(prec):
                return +ball

        return Value(evaluate, nonnegative=True)

    def delta_bounds(
        self, comp: Conditioned, eps: Fraction, sides: str = "both"
    ) -> tuple[Fraction, Fraction]:
        """``(lower, upper)`` rationals enclosing ``delta(eps)`` (both ends: one ball).

        The ball is asked at a higher precision while it is not finite or its radius
        exceeds 2^-20 of its midpoint (up to :data:`_MAX_BOUND_PREC` bits); its ends are
        clipped to [0, 1] before they become rationals, and a ball below 2^-(2^20) is
        reported as [0, 2^-(2^20)] (its ends would be rationals of a million digits).
        """
        prec = 128
        ball = self.ball(comp, eps, prec)
        while prec < _MAX_BOUND_PREC and not (
            ball.is_finite() and ball.rad() <= abs(ball.mid()) * flint.arb(2) ** -20
        ):
            prec *= 2
            ball = self.ball(comp, eps, prec)
        if not ball.is_finite():
            return Fraction(0), Fraction(1)
        if ball.upper() < _TINY:
            return Fraction(0), Fraction(1, 1 << _TINY_BITS)
        lo = ball_end(ball, up=False) if ball.lower() > 0 else Fraction(0)
        hi = ball_end(ball) if ball.upper() < 1 else Fraction(1)
        return lo, hi

    def _sign(self, comp: Conditioned, x: Fraction, d: Fraction) -> int:
        """The sign of ``delta(x) - d``, decided in Arb; 0 when undecided at the top precision.

        The precision starts at 64 bits plus the bits of ``x``'s integer part (near
        ``x = mu^2 / 2``, ``x / mu - mu / 2`` cancels them: a tiny sigma) and doubles while
        the ball straddles 0, up to :data:`_MAX_PREC` bits more.
        """
        size = max(0, x.numerator.bit_length() - x.denominator.bit_length())
        prec = 64 + size
        while True:
            with flint.ctx.workprec(prec):
                diff = self.ball(comp, x, prec) - rational_ball(d)
            if diff > 0:
                return 1
            if diff < 0:
                return -1
            if prec >= _MAX_PREC + size:
                return 0
            prec *= 2

    def epsilon(self, comp: Conditioned, d: Fraction) -> Value:
        """``eps(d)``, ``d`` in ``(0, 1)`` above the leak, as a Value that refines itself.

        docs/theory.md, section 19.  No double takes part, so any eps is answered (sigma =
        1e-400 gives about ``mu^2 / 2 = 5e799``).  A bracket of powers of two
        ``[2^(e-1), 2^e]`` (or ``[0, 2^e]``) is found first: ``e`` gallops from 0 (doubling
        upwards, up to ``2^16``; downwards to ``-64`` when ``delta(1) < d``), then is
        bisected.  Every step decides the sign of ``delta(2^e) - d`` in Arb (:meth:`_sign`);
        an undecided sign (``delta(2^e) = d`` to ``2^14`` bits) is skipped in the gallop and
        stops the bisection.  The bracket is then bisected to the digits asked
        (:meth:`_refined`).

        Raises:
            ResourceLimitError: ``eps(d)`` is beyond ``2^(2^16)``.
        """

        def sign(e: int) -> int:
            return self._sign(comp, Fraction(2) ** e, d)

        lo_e: int | None = None  # delta(2^lo_e) > d, certified (None: the lower end is 0)
        e = 0
        while True:  # upwards: the first e with delta(2^e) < d
            s = sign(e)
            if s < 0:
                hi_e = e
                break
            if s > 0:
                lo_e = e
            e = 2 * e if e else 1
            if e > _EPS_EXPONENTS:
                raise ResourceLimitError(
                    f"eps({d}) is beyond 2^{_EPS_EXPONENTS}: not searched further"
                )
        e = -1
        while lo_e is None and hi_e <= 0 and e >= -64:  # downwards: delta(1) < d
            s = sign(e)
            if s > 0:
                lo_e = e
            elif s < 0:
                hi_e = e
            e *= 2
        while lo_e is not None and hi_e - lo_e > 1:
            mid = (lo_e + hi_e) // 2
            s = sign(mid)
            if s == 0:
                break
            lo_e, hi_e = (mid, hi_e) if s > 0 else (lo_e, mid)
        lo = Fraction(0) if lo_e is None else Fraction(2) ** lo_e
        return self._refined(comp, d, lo, Fraction(2) ** hi_e)

    def _refined(self, comp: Conditioned, d: Fraction, a: Fraction, b: Fraction) -> Value:
        """``eps(d)`` in ``[a, b]`` (certified) as a Value that bisects for more digits.

        Each step decides the sign of ``delta(mid) - d`` in Arb (a higher precision when
        the ball straddles 0): ``delta(mid) > d`` puts eps above ``mid``, ``< d`` at most
        ``mid``.
        """
        state = [a, b]

        def evaluate(prec: int) -> flint.arb:
            a, b = state
            want = Fraction(1, 1 << (prec + 2)) * max(b, Fraction(1))
            work = prec + 40
            while b - a > want:
                with flint.ctx.workprec(work):
                    target = rational_ball(d)
                mid = (a + b) / 2
                with flint.ctx.workprec(work):
                    diff = self.ball(comp, mid, work) - target
                if diff > 0:
                    a = mid
                elif diff < 0:
                    b = mid
                elif work < _MAX_PREC:
                    work *= 2
                else:
                    break  # delta(mid) = d to 2^14 bits: keep [a, b] as it is
            state[0], state[1] = a, b
            with flint.ctx.workprec(prec + 8):
                return rational_ball(a).union(rational_ball(b))

        return Value(evaluate, nonnegative=True)


class GridPart:
    """A noise part known by certified two-sided bounds of ``delta_N(t)``, ``t >= 0``.

    Args:
        upper: ``upper(direction, t)`` a rational ``>= delta_direction(t)`` for ``t >= 0``.
        lower: ``lower(direction, t)`` a rational ``<= delta_direction(t)``.
        directions: ``("both",)`` for a symmetric part, ``("fwd", "rev")`` otherwise.
        what: a title.
        largest: ``largest(direction)`` the largest loss of the noise in that direction
            (:func:`~.noiseloss.largest_noise_loss`); None: not known (taken as unbounded).
        many: ``many(direction, t, upper)`` the bounds of ``upper``/``lower`` at an array
            of exact doubles ``t >= 0`` at once, as doubles (None: not available for that
            side, or no such function): the sums of :meth:`ends` are then summed as arrays.
    """

    def __init__(
        self,
        upper: Callable[[str, Fraction], Fraction],
        lower: Callable[[str, Fraction], Fraction],
        directions: tuple[str, ...],
        what: str,
        largest: Callable[[str], Value | None] | None = None,
        many: Callable[[str, Any, bool], Any] | None = None,
    ) -> None:
        self._upper, self._lower = upper, lower
        self.directions = directions
        self.what = what
        self._largest = largest
        self._many = many
        self._calls = 0

    def _other(self, direction: str) -> str:
        return {"fwd": "rev", "rev": "fwd"}.get(direction, direction)

    def bound(self, direction: str, t: Fraction, upper: bool, prec: int) -> flint.arb:
        """A ball that contains a bound of ``delta_direction(t)`` on its side, any real ``t``.

        ``upper``: the ball's upper end is ``>= delta(t)``; else its lower end is ``<=``.
        """
        side = self._upper if upper else self._lower
        if t >= 0:
            return rational_ball(min(max(side(direction, t), Fraction(0)), Fraction(1)))
        # delta_d(-s) = 1 - e^-s + e^-s delta_d'(s), s = -t > 0: monotone in delta_d'(s)
        s = -t
        inner = rational_ball(min(max(side(self._other(direction), s), Fraction(0)), Fraction(1)))
        with flint.ctx.workprec(prec):
            e = (-rational_ball(s)).exp()
            return 1 - e + e * inner

    def describe(self) -> str:
        """The title given."""
        return self.what

    def largest_loss(self, direction: str) -> Value | None:
        """The largest loss of the noise on the grid in ``direction`` (None: unbounded)."""
        return None if self._largest is None else self._largest(direction)

    kind = Exactness.BOUNDS
    # a grid's losses are bounded by its range
    search_cap = 1e7
    #: the sums run one atom at a time for this many calls of :meth:`ends`, as arrays after
    #: (the arrays' suffix sums cost a pass over the fold: a search repays it, one
    #: ``delta(eps)`` with few atoms does not; box seed 0 row 15, 23 atoms: 0.029 s either way)
    arrays_after = 2
    #: ... and for at least this many atoms (below, the arrays' fixed cost per call, about
    #: four passes of a few dozen array operations, exceeds the atoms' own bounds: box seed 2
    #: mixed row 20, 2 atoms, 0.077 s with arrays, 0.046 s without)
    arrays_atoms = 8
    summary = "finite pair composed exactly, with noise on a certified loss grid (bounds)"

    def _many_at(self, direction: str, t: Any, upper: bool) -> Any:
        """:meth:`bound` at an array of exact doubles ``t`` (any sign) as doubles, or None.

        Below 0 the reflection ``delta_d(-s) = 1 - e^-s (1 - delta_d'(s))`` in long
        doubles, ``exp`` within :data:`~.gridsums.EXP_ULPS` ulps, rounded outwards.
        """
        if self._many is None:
            return None
        import numpy as np

        from .gridsums import EXP_ULPS

        neg = t < 0
        out = np.empty(t.size)
        if (~neg).any():
            pos = self._many(direction, t[~neg], upper)
            if pos is None:
                return None
            out[~neg] = pos
        if neg.any():
            s = -t[neg]
            inner = self._many(self._other(direction), s, upper)
            if inner is None:
                return None
            ld = np.longdouble
            u = float(np.finfo(ld).eps) / 2
            e = np.exp(-s.astype(ld))
            rel = (EXP_ULPS + 2) * u
            if upper:
                val = 1 - e * (1 - rel) * (1 - inner.astype(ld)) + 4 * u
                vd = val.astype(np.float64)
                vd = np.where(vd.astype(ld) < val, np.nextafter(vd, np.inf), vd)
                out[neg] = np.minimum(vd, 1.0)
            else:
                e_hi = np.minimum(e * (1 + rel), 1)
                val = 1 - e_hi * (1 - inner.astype(ld)) - 4 * u
                vd = val.astype(np.float64)
                vd = np.where(vd.astype(ld) > val, np.nextafter(vd, -np.inf), vd)
                out[neg] = np.maximum(vd, 0.0)
        return out

    def _ends_arrays(
        self, comp: Conditioned, eps_lo: Fraction, eps_hi: Fraction, sides: str
    ) -> tuple[flint.arb, flint.arb] | None:
        """:meth:`ends` with each direction's atoms as arrays (None: a side has no arrays).

        The arguments are doubles at or below ``eps^- - l^+`` (upper) and at or above
        ``eps^+ - l^-`` (lower): ``delta_N`` is non-increasing, so the bounds there bound
        it at the exact arguments.  The sums of non-negative products round outwards by
        :func:`~.gridmeasure._dot_up`'s bound (and ``2^-1074`` per product below the
        normal range).
        """
        import numpy as np

        from .gridsums import down_double, up_double

        want_lo, want_hi = sides != "upper", sides != "lower"
        e_lo, e_hi = down_double(eps_lo), up_double(eps_hi)
        u = 2.0**-53
        tiny = 2.0**-1074
        best_lo = best_hi = None
        zero, one = flint.arb(0), flint.arb(1)
        with flint.ctx.workprec(128):
            for finite_direction, direction in comp.direction_pairs():
                leak, _, light = comp.heavy(finite_direction, 128)
                loss_lo, loss_hi, m_lo, m_hi = comp.heavy_arrays(finite_direction)
                n = loss_lo.size
                lo_sum, hi_sum = zero, one
                if want_hi:
                    with np.errstate(over="ignore", invalid="ignore"):
                        t = np.nextafter(e_lo - loss_hi, -np.inf)
                    if not np.isfinite(t).all():
                        return None
                    d = self._many_at(direction, t, True)
                    if d is None:
                        return None
                    s = float(np.sum(m_hi * d)) * (1 + (n + 3) * u) + n * tiny
                    hi_sum = (leak.upper() + light + rational_ball(Fraction(s))).upper()
                if want_lo:
                    with np.errstate(over="ignore", invalid="ignore"):
                        t = np.nextafter(e_hi - loss_lo, np.inf)
                    if not np.isfinite(t).all():
                        return None
                    d = self._many_at(direction, t, False)
                    if d is None:
                        return None
                    s = max(float(np.sum(m_lo * d)) * (1 - (n + 3) * u) - n * tiny, 0.0)
                    lo_sum = (leak.lower() + rational_ball(Fraction(s))).lower()
                best_lo = lo_sum if best_lo is None else best_lo.max(lo_sum)
                best_hi = hi_sum if best_hi is None else best_hi.max(hi_sum)
            best_lo = best_lo.max(zero).min(one)  # type: ignore[union-attr]
            best_hi = best_hi.min(one)  # type: ignore[union-attr]
        return best_lo, best_hi

    def ends(
        self, comp: Conditioned, eps_lo: Fraction, eps_hi: Fraction, sides: str = "both"
    ) -> tuple[flint.arb, flint.arb]:
        """``(lower, upper)`` balls of delta for every eps in ``[eps_lo, eps_hi]``.

        ``sides``: ``"upper"`` or ``"lower"`` computes only that end (the other is
        returned as the trivial bound 1 or 0).  With ``many`` given, the atoms are summed
        as arrays (:meth:`_ends_arrays`) from the call after :attr:`arrays_after` on; else
        one bound per atom.
        """
        self._calls += 1
        if (
            self._many is not None
            and self._calls > self.arrays_after
            and max(comp.heavy_arrays(f)[0].size for f, _ in comp.direction_pairs())
            >= self.arrays_atoms
        ):
            fast = self._ends_arrays(comp, eps_lo, eps_hi, sides)
            if fast is not None:
                return fast
        prec = 128
        best_lo = best_hi = None
        want_lo, want_hi = sides != "upper", sides != "lower"
        zero = flint.arb(0)
        one = flint.arb(1)
        with flint.ctx.workprec(prec):
            for finite_direction, direction in comp.direction_pairs():
                leak, atoms, light = comp.heavy(finite_direction, prec)
                lo_sum = leak.lower()
                hi_sum = leak.upper() + light
                for loss_lo, loss_hi, m_lo, m_hi in atoms:
                    if want_hi:  # every t on [eps_lo - loss_hi, eps_hi - loss_lo]
                        d_hi = self.bound(direction, eps_lo - loss_hi, True, prec).upper()
                        hi_sum += m_hi * d_hi
                    if want_lo:
                        d_lo = self.bound(direction, eps_hi - loss_lo, False, prec).lower()
                        lo_sum += m_lo * (d_lo if d_lo > 0 else zero)
                lo_sum = lo_sum.lower() if want_lo else zero
                hi_sum = hi_sum.upper() if want_hi else one
                best_lo = lo_sum if best_lo is None else best_lo.max(lo_sum)
                best_hi = hi_sum if best_hi is None else best_hi.max(hi_sum)
            best_lo = best_lo.max(zero).min(one)  # type: ignore[union-attr]
            best_hi = best_hi.min(one)  # type: ignore[union-attr]
        return best_lo, best_hi

    def delta_value(self, comp: Conditioned, form: LinearForm) -> Value:
        """``delta`` at an exact eps as a two-sided enclosure."""
        ball = form.ball(128)
        lo, hi = max(Fraction(0), ball_end(ball, up=False)), ball_end(ball)
        d_lo, d_hi = self.ends(comp, lo, hi)
        return Value.from_interval(d_lo, d_hi, nonnegative=True)

    def delta_bounds(
        self, comp: Conditioned, eps: Fraction, sides: str = "both"
    ) -> tuple[Fraction, Fraction]:
        """``(lower, upper)`` rationals enclosing ``delta(eps)`` (``sides``: one end only)."""
        lo, hi = self.ends(comp, eps, eps, sides)
        return ball_end(lo, up=False), ball_end(hi)

    def _top(self, comp: Conditioned) -> float | None:
        """The largest loss of the composition as a double (a guide only), or None.

        The largest over the directions of the finite part's largest loss plus the
        noise's (docs/theory.md, section 19); None when either is unbounded or unknown.
        """
        tops = []
        for finite_direction, direction in comp.direction_pairs():
            noise = self.largest_loss(direction)
            finite = comp.finite.largest_loss(finite_direction)
            if noise is None or finite is None:
                return None
            tops.append(float(finite.ball(64).mid()) + float(noise.ball(64).mid()))
        return max(tops) if tops else None

    def epsilon(self, comp: Conditioned, d: Fraction) -> Value:
        """``eps(d)``, ``d`` in ``(0, 1)`` above the leak: a certified enclosure.

        A search in doubles on the upper bound (only guides: a grid's losses are bounded by
        its range, up to :attr:`search_cap`), then one on the lower bound below it, places
        the certification of each end (:func:`~.gaussian.certify_epsilon`, which stops
        within ``2^-42`` of the ends, relative: a grid gives no more digits than its two
        bounds' roots).  Each bound is computed once per point (the guides' last points
        are the certification's first).
        """
        memo: dict[tuple[Fraction, str], tuple[Fraction, Fraction]] = {}

        def bounds(e: Fraction, side: str) -> tuple[Fraction, Fraction]:
            if (e, side) not in memo:
                memo[(e, side)] = comp.delta_bounds(e, side)
            return memo[(e, side)]

        def upper(e: float) -> float:
            return float(bounds(Fraction(e), "upper")[1])

        def lower(e: float) -> float:
            return float(bounds(Fraction(e), "lower")[0])

        a, b = 0.0, 1.0
        target = float(d)
        while (at_b := upper(b)) > target:
            a, b = b, 2 * b
            if b > self.search_cap:
                raise ResourceLimitError(f"eps({d}) is beyond {b:g}: not searched further")
        top = self._top(comp)
        guess = _guide(upper, target, a, b, at_b, top)
        # the lower bound's root is at or below the upper's: bracket it below the guess
        guess_lo = None
        at_g = lower(guess)
        if at_g <= target:
            lo_b, step = guess, max(guess, 1e-300) * 2.0**-20
            while lo_b > 0:
                lo_a = max(0.0, guess - step)
                if lower(lo_a) > target:
                    guess_lo = _guide(lower, target, lo_a, lo_b, lower(lo_b), top, True)
                    break
                if lo_a == 0:
                    break
                lo_b, step = lo_a, step * 16
        return certify_epsilon(
            lambda e: bounds(e, "upper")[1],
            lambda e: bounds(e, "lower")[0],
            d,
            guess,
            guess_lo=guess_lo,
            tol=Fraction(2.0**-42) * Fraction(max(guess, 1.0)),
        )
