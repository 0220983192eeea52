"""Finite pairs composed with noise: ``delta = leak + sum_l p(l) delta_N(eps - l)``.

The privacy loss of a composition is the sum of the losses of its parts, independent
under the first hypothesis.  Split the parts into a finite symmetric part ``F`` (every
pair in the exact field, composed exactly: its canonical pair has P-mass ``p(l)`` at each
loss ``l`` and a leak at ``+inf``) and a noise part ``N`` (Gaussian, Laplace, subsampled
noise).  Conditioning on the loss of ``F`` gives, in each direction of ``N``
(docs/theory.md, section 19):

    ``delta(eps) = leak_F + sum_l p(l) delta_N(eps - l)``,

with ``delta_N(t)`` for every real ``t``; below 0 the identity
``delta_N(-t) = 1 - e^-t + e^-t delta_N'(t)`` (``N'`` the other direction) reads it from
the non-negative side.  When ``N`` is Gaussian, ``delta_N`` is the closed form of ``G_mu``
(``mu^2 = sum_i k_i (s_i / sigma_i)^2``), evaluated in Arb at any precision: the sum is
exact up to ball rounding, and the answer refines itself to any number of digits.
Otherwise ``N`` is composed on a certified loss grid (two-sided bounds of ``delta_N``;
the sum is monotone in each of them, so the bounds carry through).

A symmetric finite part has the same loss distribution in both directions, so the answer
is the larger of the two directions of ``N``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import flint

from ..errors import BelowLeakError, InvalidParameterError, ResourceLimitError
from ..numbers import ExpDomain, QzElem
from ..numbers.convert import ball_end, erfc_ball, parse_delta, parse_eps, rational_ball
from ..numbers.forms import LinearForm
from ..numbers.value import Value
from ..regions.pld import PLD, canonical_pair
from ..regions.protocol import GridEntry, LossPair
from ..regions.tradeoff import Region
from .bounds import EnclosureRows
from .gaussian import certify_epsilon
from .results import Exactness

__all__ = [
    "GaussianPart",
    "GridPart",
    "FinitePart",
    "MixedComposition",
    "gaussian_delta_at",
    "grid_part",
    "LaplaceAlone",
    "finite_on_grid",
]

#: the exact finite part is enumerated next to the noise while its composition has at most
#: this many loss values (an upper bound, :func:`~.gridfinite.exact_size`): next to Gaussian
#: noise (the closed form refines to any digits) and next to noise on a loss grid; beyond,
#: the finite part goes on the loss grid with the noise (section 19)
EXACT_FINITE_GAUSSIAN = 1024
EXACT_FINITE_GRID = 64
#: ... and for ``eps(delta)`` next to noise on a loss grid, up to this many (a list whose
#: finite part went on the grid asks ``eps(delta)`` of the exact part: measured on the box's
#: mixed rows, 2 to 5 times faster there, above all at small deltas; ``delta(eps)`` stays
#: on the grid, which is faster for it from about 200 loss values on)
EXACT_FINITE_EPS = 512


def finite_on_grid(finite: Sequence[tuple[Any, int]], gaussian: bool) -> bool:
    """Whether the finite kinds go on the loss grid instead of being enumerated.

    ``finite``: ``[(kind, count), ...]``, a symmetric pair's PLD or an asymmetric pair's
    ``(forward, reverse)`` (each direction enumerated on its own).  ``gaussian``: every
    noise is Gaussian (the exact sum is then the closed form's).
    """
    from .gridfinite import exact_size

    limit = EXACT_FINITE_GAUSSIAN if gaussian else EXACT_FINITE_GRID
    return exact_size(finite) > limit

#: the largest working precision tried before a ball is returned as it is
_MAX_PREC = 1 << 14


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



def _accurate(
    at: Callable[[int], tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]], prec: int
) -> tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]:
    """``at(work)`` at the first working precision from ``prec`` whose balls are tight.

    Masses that are rational functions of ``z = e^g`` of high degree cancel when evaluated
    in balls: at too low a precision a ball is infinite (and a sum over it useless).  The
    precision doubles until the leak and every mass have radius ``<= 2^-(prec - 8)``
    (masses are at most 1: an absolute error), up to ``2^14`` bits.
    """
    want = flint.arb(2) ** -(prec - 8)
    work = prec
    while True:
        leak, atoms = out = at(work)
        if work >= _MAX_PREC or (
            leak.rad() <= want and all(m.rad() <= want and loss.is_finite() for loss, m in atoms)
        ):
            return out
        work *= 2


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

    def ball(self, comp: MixedComposition, eps: flint.arb | Fraction, prec: int) -> flint.arb:
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

    def delta_value(self, comp: MixedComposition, form: LinearForm) -> Value:
        """``delta`` at an exact eps as a Value that refines itself to any digits."""

        def evaluate(prec: int) -> flint.arb:
            work = prec + 32
            ball = self.ball(comp, form.ball(work + 16), work)
            with flint.ctx.workprec(prec):
                return +ball

        return Value(evaluate, nonnegative=True)

    def delta_bounds(
        self, comp: MixedComposition, eps: Fraction, sides: str = "both"
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

    def _sign(self, comp: MixedComposition, x: Fraction, d: Fraction) -> int:
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

    def epsilon(self, comp: MixedComposition, d: Fraction) -> Value:
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

    def _refined(self, comp: MixedComposition, d: Fraction, a: Fraction, b: Fraction) -> Value:
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
    """

    def __init__(
        self,
        upper: Callable[[str, Fraction], Fraction],
        lower: Callable[[str, Fraction], Fraction],
        directions: tuple[str, ...],
        what: str,
    ) -> None:
        self._upper, self._lower = upper, lower
        self.directions = directions
        self.what = what

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

    kind = Exactness.BOUNDS
    # a grid's losses are bounded by its range
    search_cap = 1e7
    summary = "finite pair composed exactly, with noise on a certified loss grid (bounds)"

    def ends(
        self, comp: MixedComposition, eps_lo: Fraction, eps_hi: Fraction, sides: str = "both"
    ) -> tuple[flint.arb, flint.arb]:
        """``(lower, upper)`` balls of delta for every eps in ``[eps_lo, eps_hi]``.

        ``sides``: ``"upper"`` or ``"lower"`` computes only that end (the other is
        returned as the trivial bound 1 or 0).
        """
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

    def delta_value(self, comp: MixedComposition, form: LinearForm) -> Value:
        """``delta`` at an exact eps as a two-sided enclosure."""
        ball = form.ball(128)
        lo, hi = max(Fraction(0), ball_end(ball, up=False)), ball_end(ball)
        d_lo, d_hi = self.ends(comp, lo, hi)
        return Value.from_interval(d_lo, d_hi, nonnegative=True)

    def delta_bounds(
        self, comp: MixedComposition, eps: Fraction, sides: str = "both"
    ) -> tuple[Fraction, Fraction]:
        """``(lower, upper)`` rationals enclosing ``delta(eps)`` (``sides``: one end only)."""
        lo, hi = self.ends(comp, eps, eps, sides)
        return ball_end(lo, up=False), ball_end(hi)

    def estimate(self, comp: MixedComposition, eps: float) -> float:
        """The upper end of delta(eps) as a double (guides the search only)."""
        _, hi = self.ends(comp, Fraction(eps), Fraction(eps), "upper")
        return float(hi.mid())

    def epsilon(self, comp: MixedComposition, d: Fraction) -> Value:
        """``eps(d)``, ``d`` in ``(0, 1)`` above the leak: a certified enclosure.

        A search in doubles on the upper bound (only guides: a grid's losses are bounded by
        its range, up to :attr:`search_cap`) places the certification of both ends
        (:func:`~.gaussian.certify_epsilon`); a grid gives no more digits than that.
        """
        a, b = 0.0, 1.0
        target = float(d)
        while self.estimate(comp, b) > target:
            a, b = b, 2 * b
            if b > self.search_cap:
                raise ResourceLimitError(f"eps({d}) is beyond {b:g}: not searched further")
        for _ in range(60):
            mid = (a + b) / 2
            if mid in (a, b) or b - a < 1e-12 * b:  # the certification bisects further
                break
            a, b = (mid, b) if self.estimate(comp, mid) > target else (a, mid)
        return certify_epsilon(
            lambda e: comp.delta_bounds(e, "upper")[1],
            lambda e: comp.delta_bounds(e, "lower")[0],
            d,
            b,
        )


class FinitePart:
    """The finite symmetric part: the exact region of its composition, read as a pair.

    ``region`` is the exact composed region (``None`` for no finite part: one atom of
    mass 1 at loss 0, no leak).  Its canonical pair (docs/theory.md, section 1) has the
    same trade-off function, which is all a composition depends on.
    """

    directions = ("both",)

    def __init__(self, region: Region | None) -> None:
        self.region = region
        if region is None:
            self.domain = ExpDomain(None)
            self.atoms: tuple[tuple[LinearForm, Any], ...] = ()
            self.leak = None
        else:
            pld: PLD = canonical_pair(region)
            self.domain = pld.domain
            self.atoms = tuple((pld.domain.form(loss), m) for loss, m in pld.masses)
            self.leak = pld.leak
        self._balls: dict[int, tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]] = {}

    @property
    def size(self) -> int:
        """The number of loss values (1 without a finite part)."""
        return max(1, len(self.atoms))

    def balls(
        self, prec: int, direction: str = "both"
    ) -> tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]:
        """``(leak, [(loss, mass), ...])`` as balls at ``prec`` bits (kept per precision).

        The part is symmetric: ``direction`` is accepted for the interface and unused.
        """
        if prec not in self._balls:

            def at(work: int) -> tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]:
                with flint.ctx.workprec(work):
                    if self.region is None:
                        return (flint.arb(0), [(flint.arb(0), flint.arb(1))])
                    dom = self.domain
                    leak = dom.elem_ball(self.leak, work)
                    return leak, [
                        (form.ball(work), dom.elem_ball(m, work)) for form, m in self.atoms
                    ]

            self._balls = {prec: _accurate(at, prec)}  # one precision kept: the last asked
        return self._balls[prec]

    def leak_lower(self) -> Fraction:
        """A rational at or below the finite part's leak."""
        if self.region is None or self.leak.is_zero():
            return Fraction(0)
        ball = self.domain.elem_ball(self.leak, 128)
        return max(Fraction(0), ball_end(ball.lower()))

    def leak_at_least(self, d: Fraction) -> bool:
        """Whether the leak is ``>= d``: a certified comparison in Q(z) (equal included)."""
        if self.region is None or self.leak.is_zero():
            return d <= 0
        return self.domain.sign(self.leak - d) >= 0


class DirectedFinitePart:
    """A finite part with asymmetric pairs: each direction's exact loss distribution.

    Exactly subsampled mechanisms (``asymmetric`` loss pairs) have two directions, the
    forward one (loss ``ln(A/B)`` under ``A``) and the reverse one; symmetric finite pairs
    enter both with their own distribution.  Each direction of the composition is the
    product of the parts' same-direction pairs, so its loss distribution is the
    convolution of theirs: the generating polynomials of docs/theory.md, section 3, raised
    to their counts, every loss kept (below 0 too: the conditioning sum of section 19
    reads ``delta_N(eps - l)`` at every loss ``l`` of the finite part).  The masses are
    exact (integer polynomials in ``z`` over one common denominator) and only evaluated as
    balls, at whatever precision is asked.

    Args:
        items: ``[(loss pair, count), ...]`` of the forms ``finite`` and ``asymmetric``.
        memory_limit: bytes the exact polynomials may use per direction (None: no limit).

    Raises:
        ResourceLimitError: a direction's exact distribution would exceed ``memory_limit``.
    """

    directions = ("fwd", "rev")

    def __init__(self, items: Sequence[tuple[Any, int]], memory_limit: int | None) -> None:
        from .genfunc import _common_denominator, _power_by_loss, common_domain, exact_refusal

        self._exact: dict[str, tuple[ExpDomain, list, flint.fmpz_poly, Any]] = {}
        for direction in self.directions:
            kinds: list[tuple[PLD, int]] = []
            for lp, n in items:
                both = lp.directions()
                if both is None:
                    raise InvalidParameterError(f"a finite part has no pair of form {lp.form}")
                kinds.append((both[0] if direction == "fwd" else both[1], n))
            refusal = exact_refusal(kinds, memory_limit)
            if refusal is not None:
                raise ResourceLimitError(refusal)
            kinds = common_domain(kinds)
            dom = kinds[0][0].domain
            den = flint.fmpz_poly([1])
            survive = QzElem.from_rational(1)
            steps = []
            for pld, count in kinds:
                d, nums = _common_denominator(pld)
                steps.append((nums, count))
                den = den * d**count
                survive = survive * (1 - pld.leak) ** count
            by_loss = _power_by_loss(steps, dom.dim)
            self._exact[direction] = (dom, list(by_loss.items()), den, 1 - survive)
        self._balls: dict[tuple[str, int], tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]] = {}

    @property
    def size(self) -> int:
        """The number of loss values of the larger direction."""
        return max(len(v[1]) for v in self._exact.values())

    def balls(
        self, prec: int, direction: str = "fwd"
    ) -> tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]:
        """``(leak, [(loss, mass), ...])`` of ``direction`` as balls at ``prec`` bits."""
        key = (direction, prec)
        if key not in self._balls:
            dom, atoms, den, leak = self._exact[direction]

            def at(work: int) -> tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]:
                with flint.ctx.workprec(work):
                    z = dom.z_ball(work)
                    inv = 1 / flint.arb_poly(den)(z)
                    return dom.elem_ball(leak, work), [
                        (dom.loss_ball(loss, work), flint.arb_poly(num)(z) * inv)
                        for loss, num in atoms
                    ]

            self._balls = {k: v for k, v in self._balls.items() if k[1] == prec}
            self._balls[key] = _accurate(at, prec)
        return self._balls[key]

    def leak_lower(self) -> Fraction:
        """A rational at or below the larger direction's leak."""
        best = Fraction(0)
        for dom, _, _, leak in self._exact.values():
            if not leak.is_zero():
                best = max(best, ball_end(dom.elem_ball(leak, 128).lower()))
        return best

    def leak_at_least(self, d: Fraction) -> bool:
        """Whether the larger direction's leak is ``>= d`` (certified comparisons in Q(z))."""
        return any(
            dom.sign(leak - d) >= 0 if not leak.is_zero() else d <= 0
            for dom, _, _, leak in self._exact.values()
        )


class MixedComposition(EnclosureRows):
    """A finite symmetric part composed with a noise part (Gaussian or a loss grid).

    ``delta(eps)`` and ``epsilon(delta)`` answer with certified Values: with a Gaussian
    noise part a ball that refines itself to any number of digits, with a grid part a
    two-sided enclosure (docs/theory.md, section 19).

    Args:
        finite: the :class:`FinitePart`.
        noise: a :class:`GaussianPart` or :class:`GridPart`.
        label: what was composed, for ``repr``.
    """

    no_list = "a composition with noise mechanisms has no single constraint list"

    def __init__(
        self,
        finite: FinitePart | DirectedFinitePart,
        noise: GaussianPart | GridPart,
        label: str = "",
    ) -> None:
        self.finite = finite
        self.noise = noise
        self.label = label
        # the Gaussian sum refines itself to any digits; a grid gives an enclosure
        self.kind = noise.kind

    def direction_pairs(self) -> list[tuple[str, str]]:
        """``(finite direction, noise direction)`` pairs whose sums are maximised over.

        A symmetric finite part meets each direction of the noise; an asymmetric one meets
        the noise's same direction (the composition's pair in one direction is the product
        of the parts' pairs in that direction), or its one direction when it is symmetric.
        """
        noise_dirs = self.noise.directions
        if self.finite.directions == ("both",):
            return [("both", d) for d in noise_dirs]
        return [(d, d if d in noise_dirs else "both") for d in self.finite.directions]

    def heavy(
        self, direction: str, prec: int
    ) -> tuple[flint.arb, list[tuple[Fraction, Fraction, flint.arb, flint.arb]], flint.arb]:
        """``(leak, atoms, light)`` of a finite direction, prepared for the grid sums.

        ``atoms``: ``(loss lower, loss upper, mass lower, mass upper)`` for the atoms whose
        masses are not negligible; ``light``: an upper bound of the total mass of the
        others (the smallest masses, summing to at most ``2^-80``).  Their terms lie in
        ``[0, mass]`` (``0 <= delta_N <= 1``): the upper sum adds ``light``, the lower sum
        leaves them out.
        """
        key = (direction, prec)
        cache = self.__dict__.setdefault("_heavy_cache", {})
        if key not in cache:
            leak, atoms = self.finite.balls(prec, direction)
            order = sorted(range(len(atoms)), key=lambda i: float(atoms[i][1].upper().mid()))
            light = flint.arb(0)
            cut = flint.arb(2) ** -80
            skip = set()
            for i in order:
                nxt = light + atoms[i][1].upper()
                if not nxt.upper() <= cut:
                    break
                light = nxt.upper()
                skip.add(i)
            zero = flint.arb(0)
            kept = []
            for i, (loss, mass) in enumerate(atoms):
                if i in skip:
                    continue
                m_lo = mass.lower()
                kept.append(
                    (
                        ball_end(loss.lower()),
                        ball_end(loss.upper()),
                        m_lo if m_lo > 0 else zero,
                        mass.upper(),
                    )
                )
            for other in [k for k in cache if k[1] != prec]:  # one precision kept
                del cache[other]
            cache[key] = (leak, kept, light)
        return cache[key]

    def _delta_value(self, form: LinearForm) -> Value:
        return self.noise.delta_value(self, form)

    def delta_bounds(self, eps: Fraction, sides: str = "both") -> tuple[Fraction, Fraction]:
        """``(lower, upper)`` rationals enclosing ``delta(eps)``.

        ``sides``: ``"upper"`` or ``"lower"`` computes only that end on a grid (the other
        is the trivial bound).
        """
        return self.noise.delta_bounds(self, eps, sides)

    def delta(self, eps: Any) -> Value | list[Value]:
        """A certified enclosure of ``delta(eps)``."""
        if isinstance(eps, (list, tuple)):
            return [self.delta(e) for e in eps]  # type: ignore[misc]
        form = parse_eps(eps)
        return self._delta_value(form)

    # -- epsilon ----------------------------------------------------------------------------
    def epsilon(self, delta: Any) -> Value | list[Value]:
        """A certified enclosure of ``eps(delta)`` (0 when ``delta(0) <= delta``).

        The noise part searches (:meth:`GaussianPart.epsilon`, :meth:`GridPart.epsilon`).

        Raises:
            BelowLeakError: ``delta`` is below the finite part's leak (no finite eps).
        """
        if isinstance(delta, (list, tuple)):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        d = parse_delta(delta) if not isinstance(delta, Fraction) else delta
        if not 0 < d < 1:
            raise InvalidParameterError(f"delta = {d} must lie in (0, 1)")
        if self.finite.leak_at_least(d):
            leak = max(self.finite.leak_lower(), d)
            raise BelowLeakError(
                f"delta = {d} is at or below the probability {float(leak):.6g} that the "
                "composition reveals the input outright (the leak): no finite eps achieves it"
            )
        if self.delta_bounds(Fraction(0))[1] <= d:
            return Value.from_rational(0)
        return self.noise.epsilon(self, d)

    def describe(self) -> str:
        """How the answer was computed, in a few words."""
        return self.noise.summary

    def __repr__(self) -> str:
        return f"MixedComposition({self.label or 'finite and noise'}; {self.describe()})"


def _ends(value: Value) -> tuple[Fraction, Fraction]:
    lo, hi = value.ends()
    return ball_end(lo), ball_end(hi)


class LaplaceAlone(EnclosureRows):
    """One Laplace mechanism composed with itself: the Laplace grid's own answers.

    Its ``epsilon`` places one tilt at the estimate and bisects on it (docs/theory.md,
    section 18), far cheaper than a search through the conditioning sum.
    """

    kind = Exactness.BOUNDS
    no_list = "a composition with noise mechanisms has no single constraint list"

    def __init__(self, grid: Any, label: str = "") -> None:
        self.grid = grid
        self.label = label

    def delta(self, eps: Any) -> Value | list[Value]:
        """A certified enclosure of ``delta(eps)``."""
        if isinstance(eps, (list, tuple)):
            return [self.delta(e) for e in eps]  # type: ignore[misc]
        form = parse_eps(eps)
        if not form.logs:
            return self.grid.delta(form.rational)
        ball = form.ball(128)  # eps = r + c log b: delta is decreasing, take both ends
        lo, hi = max(Fraction(0), ball_end(ball.lower())), ball_end(ball.upper())
        low, high = _ends(self.grid.delta(hi))[0], _ends(self.grid.delta(lo))[1]
        return Value.from_interval(rational_ball(low), rational_ball(high), nonnegative=True)

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """A certified enclosure of ``eps(delta)``."""
        if isinstance(delta, (list, tuple)):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        d = parse_delta(delta) if not isinstance(delta, Fraction) else delta
        return self.grid.epsilon(d)

    def describe(self) -> str:
        """``"certified Laplace grid"``."""
        return "certified Laplace grid (two-sided bounds)"

    def __repr__(self) -> str:
        return f"LaplaceAlone({self.label or 'Laplace'}; certified bounds)"


def _grid_item(lp: LossPair) -> Any:
    """What the loss grid composes for a noise pair: its noise, or a random allocation's epoch."""
    if lp.grid_entry() is GridEntry.ALLOCATION:
        from .allocation import AllocationGrid

        return AllocationGrid(lp.grid_noise())  # builds its own measures on the grid
    return lp.grid_noise()


def plain_laplace_eps0(noise: Sequence[tuple[Any, int]]) -> Fraction | None:
    """``eps0`` of the noise when it is one Laplace mechanism (any count), else None.

    That noise has a grid of its own (docs/theory.md, section 18: :func:`grid_part`).
    """
    laplace = {lp.laplace_eps0() for lp, _ in noise}
    return next(iter(laplace)) if len(laplace) == 1 and None not in laplace else None


def grid_part(
    noise: Sequence[tuple[Any, int]], h: Fraction | None = None
) -> tuple[GridPart, str, Any]:
    """The noise part on a certified grid, a few words saying which, and the grid alone.

    Args:
        noise: ``[(loss pair, count), ...]`` of the forms ``gaussian`` and ``noise``.
        h: the grid width (None: the grid's default); a finer grid, a narrower enclosure
            (the Laplace grid then sums in long doubles: its float error is the larger part).

    Returns:
        ``(part, how, alone)``: ``part`` for the conditioning sum next to finite pairs;
        ``alone`` the result that answers when there are none (the grid's own queries).

    One Laplace mechanism (any count) is the Laplace grid of docs/theory.md, section 18;
    anything else is the loss grid of section 15 (Gaussian and Laplace noise enter it
    with sampling rate 1).
    """
    from .pldgrid import LaplaceGrid
    from .subsample_grid import NoiseGridComposition

    subs: list[tuple[Any, int]] = [(_grid_item(lp), n) for lp, n in noise]
    eps0 = plain_laplace_eps0(noise)
    if eps0 is not None:
        count = sum(n for _, n in subs)
        if h is None:
            grid = LaplaceGrid(eps0, count)
        else:  # a grid asked for is a second look: long doubles, whose error is smaller
            import numpy as np

            grid = LaplaceGrid(eps0, count, h=h, dtype=np.longdouble)
        cache: dict[Fraction, tuple[Fraction, Fraction]] = {}

        def ends(t: Fraction) -> tuple[Fraction, Fraction]:
            if t not in cache:
                cache[t] = _ends(grid.delta(t))
            return cache[t]

        part = GridPart(lambda d, t: ends(t)[1], lambda d, t: ends(t)[0], ("both",), "Laplace grid")
        alone = LaplaceAlone(grid)
        return part, "one Laplace mechanism on the certified Laplace grid", alone
    comp = (
        NoiseGridComposition(subs, label="noise")
        if h is None
        else NoiseGridComposition(subs, h=h, label="noise")
    )
    folds = comp.folds
    symmetric = all(lp.symmetric for lp, _ in noise)

    def upper(direction: str, t: Fraction) -> Fraction:
        return folds[("rev" if direction == "rev" else "fwd") + "_up"].bound(t, True)

    def lower(direction: str, t: Fraction) -> Fraction:
        return folds[("rev" if direction == "rev" else "fwd") + "_lo"].bound(t, False)

    directions = ("both",) if symmetric else ("fwd", "rev")
    how = "certified two-sided bounds on a loss grid (both directions)"
    return GridPart(upper, lower, directions, "loss grid"), how, comp
