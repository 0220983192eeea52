"""Laplace noise at PLD speed: ``k`` uses of one Laplace mechanism on a certified loss grid.

``k`` uses of a Laplace mechanism whose loss is bounded by ``eps0`` (``eps0 = sensitivity /
b``): :class:`LaplaceGrid` (docs/theory.md, section 18, "Laplace").  The half-tilted loss
measure of one use is put on an upper and a lower lattice that keep its two exponential
moments, and their ``k``-fold powers are computed by FFT with certified error bounds
(:mod:`~dpcompose_exact.engines.laplace_lattice`); the two results enclose the exact
``delta(eps) = E_P[(1 - e^(eps - L))_+]``.  Here: the grid's width, sized to ``k``
(:func:`auto_width`), the tilt that centres the window on each query, a coarse grid for the
queries far below the mean loss, the closed forms of one use, and ``eps(delta)`` by
:func:`~dpcompose_exact.engines.gaussian.certify_epsilon` around a float estimate from a
coarse grid.

Both queries return :class:`~dpcompose_exact.numbers.value.Value` enclosures
(``Value.from_interval``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers.convert import log_fraction
from ..numbers.format import rat_str
from ..numbers.value import Value
from .gaussian import _PREC, _arb, certify_epsilon
from .laplace_lattice import FULL_SUPPORT, _Lattice, _Power
from .laplace_lattice import _numpy as _lattice_numpy

np: Any = None  # numpy (a core dependency), imported on first use of the Laplace grid


def _numpy() -> Any:
    """Import numpy lazily: only the noise routes need it."""
    global np
    if np is None:
        np = _lattice_numpy()
    return np


__all__ = ["LaplaceGrid"]


#: the grid width is at most this (0.71 x dp_accounting's default value_discretization_interval
#: 1e-4: the discretisation error is about half of its connect-the-dots error)
DEFAULT_H = Fraction(1, 14000)
#: the automatic grid width is at most ``sqrt(eps0) / ACCURACY_CELLS`` (its discretisation
#: error, second order in ``h``, stays near 1e-5 relative, a tenth of the box's goal)
ACCURACY_CELLS = 1280
#: the automatic grid is coarsened until the FFT window (14 standard deviations of the sum)
#: holds at most this many points; at such k the error relative to eps(delta) is far smaller
WINDOW_POINTS = 1 << 23
#: the coarse grid that places the tilt of an eps(delta) query has at most this many points
COARSE_POINTS = 1 << 18
#: below this loss bound the grid's floats cannot resolve one use (and its window would need
#: more cells than it has): the sandwich of two binary pairs answers, its relative width
#: about ``eps0`` (:class:`BinarySandwich`)
SANDWICH_BELOW = Fraction(1, 1 << 20)
#: above this loss bound the grid's window would need more than 10^9 cells: the sandwich
#: answers, its width about ``k e^(-eps0/2)`` for every eps below ``k eps0 / 2``
SANDWICH_ABOVE = Fraction(1 << 12)
#: the sandwich sums up to ``k + 1`` terms per query: it answers up to this many uses
SANDWICH_MAX_K = 10**5


def _laplace_one_delta(eps0: Fraction, eps: Fraction) -> Value:
    """One Laplace use: ``delta(eps) = 1 - e^((eps - eps0)/2)`` for ``eps <= eps0``, else 0."""
    if eps >= eps0:
        return Value.from_rational(0)
    with flint.ctx.workprec(_PREC):
        ball = -((_arb(eps) - _arb(eps0)) / 2).expm1()  # no cancellation at any scale
        return Value.from_interval(ball.lower(), ball.upper())


def _laplace_one_epsilon(eps0: Fraction, delta: Fraction) -> Value:
    """One Laplace use: ``eps(delta) = eps0 + 2 log(1 - delta)`` (0 when that is negative)."""
    with flint.ctx.workprec(_PREC):
        ball = _arb(eps0) + 2 * (1 - _arb(delta)).log()
        if ball.upper() <= 0:
            return Value.from_rational(0)
        lo = ball.lower()
        return Value.from_interval(lo if lo > 0 else flint.arb(0), ball.upper())


def _binary_delta(
    p: flint.arb, q: flint.arb, e: flint.arb, k: int, eps: Fraction, i_max: int
) -> flint.arb:
    """``delta(eps)`` of ``k`` uses of the binary pair ``P = (p, q)``, ``Q = (q, p)``.

    Its loss is ``(k - 2i) e`` (``e = log(p / q)``, ``q = 1 - p``) with mass ``C(k, i)
    p^(k-i) q^i`` when ``i`` uses give the second outcome, so (docs/theory.md, section 18,
    "Laplace at extreme scales")
    ``delta(eps) = sum_{i <= i_max} C(k, i) p^(k-i) q^i (-expm1(eps - (k - 2i) e))``,
    each term without cancellation at any scale of ``e``; the caller passes the ``i_max``
    up to which every term is positive, and ``q`` apart from ``p`` (no cancellation when
    ``p`` is near 1).  At the caller's working precision.
    """
    total = flint.arb(0)
    term = p**k  # C(k, i) p^(k - i) q^i at i = 0
    ratio = q / p
    ee = _arb(eps)
    for i in range(i_max + 1):
        total -= term * (ee - (k - 2 * i) * e).expm1()
        term = term * ratio * (k - i) / (i + 1)
    return total


def _threshold_lower(eps0: Fraction, k: int, eps: Fraction, u: Fraction) -> flint.arb:
    """A lower bound on ``delta(eps)`` of ``k`` Laplace uses from the threshold ``u`` below 1.

    Laplace noise of scale ``b = 1/eps0`` (sensitivity 1), post-processed by ``x > 1 - u b``
    (``0 < u <= eps0/2``; ``u = eps0/2`` is the threshold ``1/2`` of the lower pair), is
    the binary pair of masses ``a = 1 - e^-u / 2`` under ``P`` and ``r = e^-(eps0 - u) / 2``
    under ``Q``, losses ``l_a = log(a/r)`` and ``l_b = log((1 - a)/(1 - r)) < 0``
    (docs/theory.md, section 18, "Laplace at extreme scales").  Its ``k``-fold ``delta`` is
    ``sum_i C(k, i) a^(k-i) (1 - a)^i (-expm1(eps - (k - i) l_a - i l_b))`` over the ``i``
    where the loss exceeds ``eps``; every term is non-negative, so the terms certified
    positive (from ``i = 0`` on, the loss decreasing in ``i``) give a lower bound.  Past
    ``k eps0 / 2`` the caller takes ``u = (k eps0 - eps)/(k + 1)``: the ``i = 0`` term is
    then about ``1 - k e^-u / 2 - e^-u``, positive where the threshold ``1/2`` gives 0.
    At the caller's working precision.
    """
    u = min(u, eps0 / 2)
    if not u > 0:
        return flint.arb(0)
    x, uu, ee = _arb(eps0), _arb(u), _arb(eps)
    one_minus_a = (-uu).exp() / 2
    la = (-one_minus_a).log1p() + (x - uu) + flint.arb(2).log()
    lb = -uu - flint.arb(2).log() - (-(uu - x).exp() / 2).log1p()
    term = ((-one_minus_a).log1p() * k).exp()  # C(k, i) a^(k - i) (1 - a)^i at i = 0
    ratio = one_minus_a / (1 - one_minus_a)
    total = flint.arb(0)
    for i in range(k + 1):
        gap = ee - (k - i) * la - i * lb
        if not gap < 0:
            break
        total += term * -gap.expm1()
        term = term * ratio * (k - i) / (i + 1)
    return total


class BinarySandwich:
    """``k`` uses of Laplace noise at an extreme loss bound ``eps0``, between two binary pairs.

    One Laplace use (loss bound ``eps0``) is dominated by the pure pair ``(eps0, 0)``
    (randomized response, ``p = e^eps0 / (1 + e^eps0)``: every ``(eps0, 0)``-DP pair is its
    post-processing) and dominates its own post-processing by the threshold ``x <= 1/2``
    on the output, the binary pair of ``p' = 1 - e^(-eps0/2) / 2`` (loss bound
    ``e' = log(2 e^(eps0/2) - 1)``, at least ``max(eps0/2, eps0 - eps0^2)``).  Composition
    keeps both orders, so ``delta(eps)`` of the ``k``-fold Laplace lies between the two
    binary pairs' ``delta`` (docs/theory.md, section 18, "Laplace at extreme scales").  The
    two differ by about ``eps0`` relatively when ``eps0`` is small, and by about ``k
    e^(-eps0/2)`` below ``k eps0 / 2`` when it is large: the grid's floats cannot resolve
    either scale.  ``delta(eps) = 0`` exactly from ``eps = k eps0`` on.
    """

    def __init__(self, eps0: Fraction, k: int) -> None:
        self.eps0, self.k = eps0, k
        self._cache: dict[Fraction, tuple[flint.arb, flint.arb]] = {}

    def _ends(self, eps: Fraction, prec: int) -> tuple[flint.arb, flint.arb]:
        k, e0 = self.k, self.eps0
        with flint.ctx.workprec(prec):
            x = _arb(e0)
            p_up, q_up = 1 / (1 + (-x).exp()), 1 / (1 + x.exp())
            i_up = math.ceil((k - eps / e0) / 2) - 1  # (k - 2i) eps0 > eps exactly
            upper = _binary_delta(p_up, q_up, x, k, eps, i_up) if i_up >= 0 else flint.arb(0)
            q_lo = (-x / 2).exp() / 2
            p_lo = 1 - q_lo
            e_lo = (2 * (x / 2).expm1()).log1p()
            # the terms with (k - 2i) e' > eps: e' >= e_floor, so the rational test is safe
            e_floor = max(e0 / 2, e0 - e0 * e0)
            i_lo = math.ceil((k - eps / e_floor) / 2) - 1
            lower = (
                _binary_delta(p_lo, q_lo, e_lo, k, eps, i_lo) if i_lo >= 0 else flint.arb(0)
            )
            if not lower > 0 and eps < k * e0:  # past k eps0 / 2: a threshold nearer the shift
                lower = _threshold_lower(e0, k, eps, (k * e0 - eps) / (k + 1))
            return lower.lower(), upper.upper()

    def _enclose(self, eps: Fraction) -> tuple[flint.arb, flint.arb]:
        """Exact arb ends ``(lower, upper)`` in ``[0, 1]`` enclosing ``delta(eps)``."""
        if eps >= self.k * self.eps0:
            return flint.arb(0), flint.arb(0)
        if self.k > SANDWICH_MAX_K:
            raise ResourceLimitError(
                f"k = {self.k} uses of Laplace noise with loss bound eps0 = "
                f"{rat_str(self.eps0)}: at this scale the route sums k terms per query and "
                f"answers up to k = {SANDWICH_MAX_K}; use a smaller k"
            )
        if eps not in self._cache:
            e0 = self.eps0
            scale = max(0, e0.denominator.bit_length() - e0.numerator.bit_length())
            prec = _PREC + 2 * scale + 2 * self.k.bit_length()
            while True:  # the terms have no cancellation: the bits of the scale suffice
                lo, hi = self._ends(eps, prec)
                narrow = hi.is_finite() and (hi - lo).upper() <= hi * flint.arb(2) ** -30
                if narrow or prec > 1 << 16:
                    break
                prec *= 2
            hi = hi if hi < 1 else flint.arb(1)
            lo = flint.arb(0) if not lo > 0 else lo if lo < hi else hi
            self._cache[eps] = (lo, hi)
        return self._cache[eps]

    def delta(self, eps: Fraction) -> Value:
        """Certified enclosure of ``delta(eps)`` (exactly 0 from ``k eps0`` on)."""
        eps = Fraction(eps)
        if eps < 0:
            raise InvalidParameterError(f"eps = {eps} is negative; valid range: eps >= 0")
        if eps >= self.k * self.eps0:
            return Value.from_rational(0)
        lo, hi = self._enclose(eps)
        return Value.from_interval(lo, hi, nonnegative=True)

    def epsilon(self, delta: Fraction) -> Value:
        """Certified enclosure of ``eps(delta)``: two bisections in units of ``eps0``.

        The upper end ``e2`` has an upper ``delta(e2) <= delta``, the lower end ``e1`` a
        lower ``delta(e1) > delta`` (or is 0); ``eps(0) = k eps0``.
        """
        delta = Fraction(delta)
        if delta == 0:
            return Value.from_rational(self.k * self.eps0)
        if not 0 < delta < 1:
            raise InvalidParameterError(f"delta = {delta} must lie in [0, 1)")
        e0, k, d = self.eps0, self.k, _arb(delta)
        if self._enclose(Fraction(0))[1] <= d:
            return Value.from_rational(0)
        a, b = Fraction(0), Fraction(k)  # upper delta(b eps0) = 0 <= delta
        for _ in range(64):  # the upper end: upper delta(b eps0) <= delta
            m = (a + b) / 2
            if self._enclose(m * e0)[1] <= d:
                b = m
            else:
                a = m
        top = b
        a, b = Fraction(0), top  # the lower end: lower delta(a eps0) > delta (or a = 0)
        if self._enclose(Fraction(0))[0] > d:
            for _ in range(64):
                m = (a + b) / 2
                if self._enclose(m * e0)[0] > d:
                    a = m
                else:
                    b = m
        return Value.from_interval(_arb(a * e0).lower(), _arb(top * e0).upper(), nonnegative=True)


def loss_moments(eps0: Fraction) -> tuple[float, float]:
    """The mean and standard deviation of one Laplace loss under ``P`` (floats, to size grids).

    ``omega = e^(-eps0/2) e^(l/2) nu``: atoms ``1/2`` at ``eps0`` and ``e^(-eps0)/2`` at
    ``-eps0``, density ``e^((l - eps0)/2) / 4`` between (docs/theory.md, section 18).
    """
    e0 = float(eps0)
    xs = np.linspace(-e0, e0, 2001)
    w = np.exp((xs - e0) / 2) / 4 * (2 * e0 / 2000)
    w[0] /= 2
    w[-1] /= 2
    ps = np.concatenate((w, [0.5, math.exp(-e0) / 2]))
    ls = np.concatenate((xs, [e0, -e0]))
    mean = float(np.sum(ps * ls) / np.sum(ps))
    return mean, math.sqrt(max(float(np.sum(ps * (ls - mean) ** 2) / np.sum(ps)), 0.0))


def auto_width(eps0: Fraction, k: int) -> Fraction:
    """The grid width of ``k`` uses of Laplace noise with loss bound ``eps0``, when none is given.

    The discretisation gap is second order in ``h`` (section 18): about ``h^2 / eps0``
    relative, so ``h = sqrt(eps0) / ACCURACY_CELLS`` keeps it near ``1e-5 / (1 + eps0)``
    (never finer than :data:`DEFAULT_H`).  For a wide sum (standard deviation ``s``) the
    width grows until the FFT window of ``14 s`` holds :data:`WINDOW_POINTS` points: there
    ``eps(delta)`` is at least ``k`` times the mean loss and the gap, about ``k h^2 / s``,
    is far below its goal, and ``delta(eps)`` at ``eps <= 50`` is about 1.  A choice of
    speed only: every width gives a certified enclosure.
    """
    _numpy()
    e0 = float(eps0)
    spread = 14 * math.sqrt(k) * loss_moments(eps0)[1] / WINDOW_POINTS
    h = min(max(float(DEFAULT_H), spread), e0 / 2)
    return Fraction(h).limit_denominator(1 << 40)


class LaplaceGrid:
    """``k`` uses of a Laplace mechanism with loss bound ``eps0``: certified delta and eps.

    Args:
        eps0: ``sensitivity / b`` (times 2 under replace-one), a positive rational.
        k: number of uses.
        h: grid width upper bound (the grid is ``eps0 / cells``, ``cells = ceil(eps0 / h)``);
            None: :func:`auto_width`.
        dtype: numpy float type of the FFT (default ``float64``; the error bound is
            data-dependent, so doubles suffice).
        lower_coarsening: the lower end uses cells this many times wider (on a lattice of
            half their width: cheaper, the enclosure a little wider, the upper end
            unchanged); default 2 when the whole support fits one FFT, else 8.
        width: FFT window half-width in standard deviations of the tilted sum.

    >>> g = LaplaceGrid(Fraction(1), 3, h=Fraction(1, 2000))
    >>> lo, hi = g.delta(Fraction(1)).interval(8)
    >>> Fraction(lo) <= Fraction("0.31022604") <= Fraction(hi)  # PLD pessimistic: 0.310226048
    True
    """

    def __init__(
        self,
        eps0: Fraction,
        k: int,
        h: Fraction | None = None,
        dtype: Any = None,
        width: float = 7.0,
        lower_coarsening: int | None = None,
    ) -> None:
        _numpy()
        dtype = np.float64 if dtype is None else dtype
        eps0 = Fraction(eps0)
        if eps0 <= 0:
            raise InvalidParameterError(f"eps0 = {eps0} must be > 0")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidParameterError(f"k = {k!r} must be a positive integer")
        self.eps0, self.k = eps0, k
        # beyond the floats' reach: the two binary pairs' sandwich (section 18)
        extreme = eps0 < SANDWICH_BELOW or eps0 > SANDWICH_ABOVE
        self._sandwich = BinarySandwich(eps0, k) if extreme and k > 1 else None
        if self._sandwich is not None or k == 1:
            return  # closed forms only: no grid
        h = auto_width(eps0, k) if h is None else Fraction(h)
        self.cells = max(2, math.ceil(eps0 / h))
        self.dtype, self.width = dtype, width
        self._powers: dict[tuple[str, float, float], _Power] = {}
        self._estimating = False
        self._coarse_far: LaplaceGrid | None = None  # the grid of eps far below the mean
        # the lower end (the enclosure's other side) on a coarser grid: cheaper, still a bound
        if lower_coarsening is None:  # small: a lattice as long as the upper's; else 1/4
            lower_coarsening = 2 if 2 * self.cells * k + 1 <= FULL_SUPPORT else 8
        # at least 64 lower cells (or as many as the upper grid): the lower end's gap is the
        # larger one, and a coarse upper grid (a wide sum) leaves few cells to coarsen
        low_cells = max(min(self.cells, 64), self.cells // max(1, lower_coarsening), 2)
        self._lat = {"upper": _Lattice(eps0, self.cells, "upper"),
                     "lower": _Lattice(eps0, low_cells, "lower")}

    # -- tilt -------------------------------------------------------------------------------
    def _theta_for(self, eps: float) -> float:
        """The tilt that puts the mean of the tilted sum at ``eps`` (float, any value works)."""
        e0, k = float(self.eps0), self.k
        target = min(max(eps / k, -0.999 * e0), 0.999 * e0)

        def mean(t: float) -> float:
            # d/dt log(cosh(e0 t) + sinh(e0 t)/(2t)), the tilted mean of one use (odd in t)
            if abs(t) < 1e-6:
                return 0.0
            sign, t = (1.0, t) if t > 0 else (-1.0, -t)
            r = math.exp(-2 * e0 * t)  # everything divided by e^(e0 t) / 2
            a = (1 + r) + (1 - r) / (2 * t)
            da = e0 * (1 - r) + (e0 * (1 + r) * t - (1 - r)) / (2 * t * t)
            return sign * da / a

        lo, hi = -1.0, 1.0
        while mean(lo) > target:
            lo *= 2
        while mean(hi) < target and hi < 1e6:
            hi *= 2
        for _ in range(100):
            mid = (lo + hi) / 2
            if mean(mid) < target:
                lo = mid
            else:
                hi = mid
        # never below 1/2: below the mean of the loss the weights e^((1/2 - theta) l) would
        # grow across the window and with them the FFT error term
        return max(round((lo + hi) / 2, 6), 0.5)

    def _power(self, side: str, theta: float, floor: float) -> _Power:
        key = (side, theta, floor)
        if key not in self._powers:
            pw = _Power(
                self._lat[side], self.k, theta, self.dtype, self.width, floor, self._estimating
            )
            self._powers[key] = pw
        return self._powers[key]

    def _bound(
        self, side: str, eps: Fraction, theta: float | None = None, floor: float = math.inf
    ) -> Fraction:
        if eps >= self.k * self.eps0:
            return Fraction(0)  # the loss never exceeds k eps0
        out = None
        if theta is None:  # reuse a tilt whose centre is near eps (same accuracy)
            e = self._target(float(eps))
            for (sd_, th, fl), pw in self._powers.items():
                if sd_ == side and fl <= float(eps) and abs(pw.center - e) <= 2 * pw.sd + 1:
                    theta, floor = th, fl
                    break
        if theta == 0.5:  # the untilted law answers every eps below its window too
            floor = math.inf
        if theta is not None:
            out = self._power(side, theta, floor).bound(eps)
        if out is None:
            e = float(eps)
            theta = self._theta_for(self._target(e))
            if theta == 0.5:  # below the mean the tilt is clamped at 1/2: one shared power
                out = self._power(side, theta, math.inf).bound(eps)
                assert out is not None
                return out
            # reuse a power of that tilt whose window reaches down to eps
            for (sd_, th, fl), pw in self._powers.items():
                if sd_ == side and th == theta and fl <= e:
                    out = pw.bound(eps)
                    if out is not None:
                        break
            if out is None:  # the window kept reaches 2 spreads below eps: later queries
                # nearby (a conditioning sum's shifts) reuse this tilt
                spread = math.sqrt(self.k) * loss_moments(self.eps0)[1]
                out = self._power(side, theta, e - 1.0 - 2 * spread).bound(eps)
        assert out is not None
        return out

    # -- queries ----------------------------------------------------------------------------
    def delta(self, eps: Fraction) -> Value:
        """Certified two-sided enclosure of ``delta(eps)`` of the k-fold composition."""
        eps = Fraction(eps)
        if eps < 0:
            raise InvalidParameterError(f"eps = {eps} is negative; valid range: eps >= 0")
        if eps >= self.k * self.eps0:
            return Value.from_rational(0)  # the loss never exceeds k eps0: pure DP
        if self.k == 1:
            return _laplace_one_delta(self.eps0, eps)
        if self._sandwich is not None:
            return self._sandwich.delta(eps)
        far = self._far_below(eps)
        if far is not None:
            return far.delta(eps)
        hi = min(self._bound("upper", eps), Fraction(1))
        lo = min(self._bound("lower", eps), hi)
        return Value.from_interval(_arb(lo), _arb(hi))

    def _far_below(self, eps: Fraction) -> LaplaceGrid | None:
        """A coarse grid for an ``eps`` far below the mean loss (None: not far, or not coarser).

        There ``delta`` is about 1 and is answered below the window of the untilted law
        (section 18): its lower end is ``1 - e^(eps - L)`` times the window's mass, ``L``
        the window's lowest loss, on any grid (the lower lattice keeps the mass exactly).
        With ``eps`` at least 20 below ``L`` (``e^-20``: 2e-9) a window of ``2^16`` points
        gives the same enclosure as the fine grid, at a fraction of the cost.
        """
        if self._estimating:
            return None
        mean, sd = loss_moments(self.eps0)
        spread = math.sqrt(self.k) * sd
        if float(eps) > self.k * mean - self.width * spread - 20:
            return None
        if self._coarse_far is None:
            h = Fraction(14 * spread / (1 << 16)).limit_denominator(1 << 40)
            if h <= 2 * self.eps0 / self.cells:
                return None
            self._coarse_far = LaplaceGrid(self.eps0, self.k, h=min(h, self.eps0 / 2))
        return self._coarse_far

    def epsilon(self, delta: Fraction) -> Value:
        """Certified two-sided enclosure of ``eps(delta)`` (0 when ``delta(0) <= delta``).

        ``eps(0) = k eps0`` exactly (pure DP): the loss never exceeds ``k eps0`` and takes
        that value with positive probability, so ``delta(eps) > 0`` for every smaller eps.
        """
        delta = Fraction(delta)
        if delta == 0:
            return Value.from_rational(self.k * self.eps0)
        if not 0 < delta < 1:
            raise InvalidParameterError(f"delta = {delta} must lie in [0, 1)")
        if self.k == 1:  # closed form: delta(eps) = 1 - e^((eps - eps0)/2) on [0, eps0]
            return _laplace_one_epsilon(self.eps0, delta)
        if self._sandwich is not None:
            return self._sandwich.epsilon(delta)
        # a float estimate, then one tilt at the estimate for both sides
        guess, theta = self._estimate(delta)
        floor = guess - 1.0 - 0.01 * guess if self._windowed() else -math.inf

        def hi(e: Fraction) -> Fraction | None:
            return self._bound("upper", e, theta, floor)

        def lo(e: Fraction) -> Fraction | None:
            return self._bound("lower", e, theta, floor)

        if guess == 0:  # a (coarse) certified upper bound of delta(0) is <= delta
            return Value.from_rational(0)
        # bisection to a relative 1e-12 of the guess: below the grid's own gap, and the upper
        # end (what an accountant reports) stays at most dp_accounting's pessimistic PLD
        tol = Fraction(guess) / 10**12
        return certify_epsilon(hi, lo, delta, guess, tol=tol, lo_from_hi=True)

    def _windowed(self) -> bool:
        return 2 * self.cells * self.k + 1 > FULL_SUPPORT

    def _estimate(self, delta: Fraction) -> tuple[float, float]:
        """A float estimate of eps(delta) (not certified) and the tilt to certify it with."""
        return self._coarse_estimate(delta)

    def _target(self, eps: float) -> float:
        """Where the tilted sum is centred for a query at ``eps``: a little above it."""
        return eps + min(1.0, 0.5 * (float(self.k * self.eps0) - eps))

    def _coarse_estimate(self, delta: Fraction) -> tuple[float, float]:
        """A float estimate of eps(delta) from a coarse grid (not certified).

        The grid has 128 cells, or fewer when the sum is wide (a window of
        :data:`COARSE_POINTS` points: the guess only places the tilt); the search starts at
        the normal approximation ``k m + z s``, so that its probes share few tilts.
        """
        mean, sd = loss_moments(self.eps0)
        spread = math.sqrt(self.k) * sd
        h = max(self.eps0 / 128, Fraction(28 * spread / COARSE_POINTS).limit_denominator(1 << 40))
        coarse = LaplaceGrid(self.eps0, self.k, h=min(h, self.eps0 / 2), width=10)
        coarse._estimating = True  # float values without the error terms: a guess only
        if coarse._bound("upper", Fraction(0)) <= delta:
            return 0.0, 0.0
        top = float(self.k * self.eps0)
        a, b = 0.0, top

        def above(e: float) -> bool:
            return coarse._bound("upper", Fraction(e)) > delta

        z = math.sqrt(-2 * log_fraction(delta))
        g = min(max(self.k * mean + z * spread, 0.0), top)
        step = max(spread, 1e-3)
        if g < top and above(g):  # walk up from the guess, then bisect
            a = g
            while a + step < top and above(a + step):
                a, step = a + step, 2 * step
            b = min(a + step, top)
        elif g > 0:
            b = g
            while b - step > 0 and not above(b - step):
                b, step = b - step, 2 * step
            a = max(b - step, 0.0)
        for _ in range(80):  # each probe re-tilts when it is far from the existing tilts
            mid = (a + b) / 2
            if coarse._bound("upper", Fraction(mid)) > delta:
                a = mid
            else:
                b = mid
            if b - a < 1e-9 * max(1.0, b):
                break
        return b, self._theta_for(self._target(b))
