"""The GDP ``mu`` of mechanisms of bounded loss, from the privacy profile on ``[0, loss cap]``.

When every loss of the composition is at most ``E`` in both directions (Laplace noise,
subsampled Laplace noise, subsampled finite pairs, finite pairs: :func:`_loss_cap`),
``delta(eps) = 0`` from ``E`` on, and ``G_mu`` lies below the composition's trade-off
function iff ``delta(eps) <= delta_{G_mu}(eps)`` on ``[0, E)``, with ``delta_{G_mu}(eps)
= Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)`` increasing in ``mu``.  So ``mu* =
sup_{0 <= eps < E} m(eps, delta(eps))``, ``m(eps, d)`` the ``mu`` with ``delta_{G_mu}(eps)
= d``.  :func:`_profile_mu` encloses it from the composition's certified ``delta``: the
lower end the largest ``m(e, delta_lo(e))`` at a point, the upper end the largest
``m(b, delta_hi(a))`` over a partition into cells ``[a, b]`` (tightened to second order by
convexity in ``e^eps``: :func:`_cell_mu`), the cells that could hold the supremum halved
until the enclosure is :data:`GDP_REL_WIDTH` wide (docs/theory.md, section 20).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import flint

from ..errors import ResourceLimitError
from ..numbers.convert import ball_end, erfc_ball, rational_ball
from ..numbers.value import Value
from ..regions.protocol import LossPair
from .gaussian import gaussian_delta_ball

__all__: list[str] = []

#: the working precision (bits) of the summaries' enclosures: the GDP ``mu`` and the
#: Rényi divergences of pairs known only by bounds
_ENCLOSURE_BITS = 256

#: the relative width at which the profile search stops refining
GDP_REL_WIDTH = Fraction(1, 10**9)
#: the most delta enclosures the profile search asks for
GDP_MAX_QUERIES = 600


def _float_mu_at(eps: float, d: float) -> float:
    """A float guide: the ``mu`` with ``delta_{G_mu}(eps) = d`` (bisection)."""

    def dg(mu: float) -> float:
        def phi(x: float) -> float:
            return math.erfc(-x / math.sqrt(2)) / 2

        # (a guide only: e^eps capped below the doubles' overflow, at eps = 1e300 too)
        return phi(mu / 2 - eps / mu) - math.exp(min(eps, 700.0)) * phi(-mu / 2 - eps / mu)

    lo, hi = 1e-9, 64.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if dg(mid) < d else (lo, mid)
    return lo


def _loss_cap(pairs: Sequence[tuple[LossPair, int]]) -> Fraction | None:
    """A rational ``E`` with every loss of the composition ``<= E`` in both directions.

    Then ``delta(eps) = 0`` for ``eps >= E`` (docs/theory.md, section 20).  None when a
    pair's loss is unbounded (Gaussian noise).  Per use: a finite pair's largest loss (both
    directions of an asymmetric one, both pairs of bounds), Laplace noise ``eps0``,
    Poisson-subsampled Laplace noise ``ln(q e^eps0 + 1 - q) <= eps0`` forward and
    ``-ln(q e^-eps0 + 1 - q) <= eps0`` reverse (taken as ``eps0``).
    """
    return weighted_sum(pairs, lambda lp: lp.loss_cap())


def weighted_sum(
    pairs: Sequence[tuple[LossPair, int]], per_use: Callable[[LossPair], Fraction | None]
) -> Fraction | None:
    """``sum_i k_i per_use(pair_i)``, or None as soon as one pair has no value."""
    total = Fraction(0)
    for lp, n in pairs:
        value = per_use(lp)
        if value is None:
            return None
        total += n * value
    return total


def _gauss_delta_q(eps: Fraction, mu: Fraction) -> flint.arb:
    """A ball containing ``delta(eps)`` of ``G_mu`` (:func:`~.gaussian.gaussian_delta_ball`)."""
    return gaussian_delta_ball(mu * mu, eps, _ENCLOSURE_BITS)


def _mu_bracket(eps: Fraction, d: Fraction) -> tuple[Fraction, Fraction | None]:
    """Rationals ``lo <= m(eps, d) <= hi`` (``hi`` None: none found), about 2^-40 apart.

    ``m(eps, d)`` is the ``mu`` with ``delta_{G_mu}(eps) = d``, for ``0 < d < 1``;
    ``delta_{G_mu}`` increases with ``mu``.  Both ends are certified in Arb
    (``delta_{G_lo}(eps) < d <= delta_{G_hi}(eps)``), from a float guess widened until it
    brackets, then bisected.
    """
    target = rational_ball(d)
    guess = max(_float_mu_at(float(eps), float(d)), 1e-9) if float(d) > 0 else 1e-9
    lo: Fraction | None = None
    hi: Fraction | None = None
    for widen in (1e-6, 1e-3, 0.1, 0.5, 0.9):
        mu = Fraction(guess * (1 - widen)).limit_denominator(10**18)
        if mu > 0 and _gauss_delta_q(eps, mu) < target:
            lo = mu
            break
    for grow in (1e-6, 1e-3, 0.1, 1.0, 10.0, 100.0, 1000.0):
        mu = Fraction(guess * (1 + grow)).limit_denominator(10**18)
        if _gauss_delta_q(eps, mu) >= target:
            hi = mu
            break
    for i in range(1, 81):  # a poor float guide (tiny d): halve and double until bracketed
        if lo is not None and hi is not None:
            break
        if lo is None:
            mu = Fraction(guess) / 2**i
            if _gauss_delta_q(eps, mu) < target:
                lo = mu
        if hi is None:
            mu = Fraction(guess) * 2**i
            if _gauss_delta_q(eps, mu) >= target:
                hi = mu
    if lo is None or hi is None:
        return lo or Fraction(0), hi
    for _ in range(64):
        if hi - lo <= hi * Fraction(1, 2**40):
            break
        mid = Fraction(float((lo + hi) / 2)).limit_denominator(10**18)
        if not lo < mid < hi:
            break
        ball = _gauss_delta_q(eps, mid)
        if ball < target:
            lo = mid
        elif ball >= target:
            hi = mid
        else:
            break  # undecided at this precision: keep the bracket
    return lo, hi


def _mu_below(eps: Fraction, d: Fraction) -> Fraction:
    """A rational ``mu <= m(eps, d)`` (0 when ``d = 0`` or nothing is certified)."""
    if d <= 0:
        return Fraction(0)
    if d >= 1:
        return Fraction(0)
    return _mu_bracket(eps, d)[0]


def _mu_above(eps: Fraction, d: Fraction) -> Fraction | None:
    """A rational ``mu >= m(eps, d)``; None when none exists (``d >= 1``) or is found."""
    if d <= 0:
        return Fraction(0)
    if d >= 1:
        return None
    return _mu_bracket(eps, d)[1]


def _cell_mu(a: Fraction, b: Fraction, da: Fraction, db: Fraction) -> Fraction | None:
    """A rational ``mu`` with ``delta_{G_mu} >= delta`` on ``[a, b]``, given upper bounds.

    ``da >= delta(a)``, ``db >= delta(b)``.  Always valid: ``m(b, da)`` (both curves
    non-increasing).  Tighter (second order in ``b - a``), as functions of ``g = e^eps``
    both curves are convex (a hockey-stick divergence is a supremum of functions affine
    in ``g``): ``delta`` lies below its chord through ``(e^a, da)`` and ``(e^b, db)``, and
    ``delta_{G_mu}`` above its tangent at ``e^c``, ``c = (a + b)/2``, whose slope is
    ``-Phi(-c/mu - mu/2)``; both are affine, so the tangent above the chord at ``e^a`` and
    ``e^b`` suffices (docs/theory.md, section 20).  None when ``da >= 1``.
    """
    crude = _mu_above(b, da)
    if crude is None or crude == 0:
        return crude
    need = max(_mu_bracket(a, da)[1] or crude, _mu_bracket(b, db)[1] or Fraction(0))
    c = (a + b) / 2
    with flint.ctx.workprec(_ENCLOSURE_BITS):
        ga, gb, gc = (rational_ball(x).exp() for x in (a, b, c))
        r2 = flint.arb(2).sqrt()
        bda, bdb = rational_ball(da), rational_ball(db)
        for grow in (1e-13, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2):
            mu = Fraction(float(need) * (1 + grow)).limit_denominator(10**18)
            if mu >= crude:
                break
            mb = rational_ball(mu)
            cb = rational_ball(c)
            value = gaussian_delta_ball(mu * mu, c, _ENCLOSURE_BITS)
            slope = erfc_ball(-(-cb / mb - mb / 2) / r2) / 2  # Phi(-c/mu - mu/2)
            at_a = value + slope * (gc - ga)
            at_b = value - slope * (gb - gc)
            if at_a >= bda and at_b >= bdb:
                return mu
    return crude


def _profile_mu(delta: Callable[[Any], Value], cap: Fraction) -> Value:
    """A certified enclosure of ``mu* = sup_{0 <= eps < cap} m(eps, delta(eps))``.

    ``G_mu`` lies below the composition's trade-off function iff ``delta(eps) <=
    delta_{G_mu}(eps)`` at every ``eps >= 0`` (both directions being in ``delta``), and
    ``delta = 0`` from ``cap`` on (docs/theory.md, section 20).  On a cell ``[a, b]``
    both ``delta`` and ``delta_{G_mu}`` are non-increasing, so ``mu >= m(b, delta_hi(a))``
    covers the cell: the upper end is the largest such value over a partition of
    ``[0, cap]``; the lower end the largest ``m(e, delta_lo(e))`` at a point.  Cells that
    could still hold the supremum are halved until the enclosure is
    :data:`GDP_REL_WIDTH` wide or :data:`GDP_MAX_QUERIES` deltas were asked.
    """
    if cap <= 0:
        return Value.from_rational(0)
    ends: dict[Fraction, tuple[Fraction, Fraction]] = {}

    def at(e: Fraction) -> tuple[Fraction, Fraction]:
        if e not in ends:
            if e >= cap:
                ends[e] = (Fraction(0), Fraction(0))
            else:
                ball = delta(e).ball(128)
                lo = ball.lower()
                ends[e] = (
                    max(Fraction(0), -ball_end(-lo)),
                    min(Fraction(1), ball_end(ball)),
                )
        return ends[e]

    lower = Fraction(0)
    best_at: dict[Fraction, Fraction] = {}

    def point(e: Fraction) -> None:
        nonlocal lower
        if e not in best_at:
            best_at[e] = _mu_below(e, at(e)[0])
            lower = max(lower, best_at[e])

    def cell(a: Fraction, b: Fraction) -> Fraction | None:
        return _cell_mu(a, b, at(a)[1], at(b)[1])

    n0 = 64
    cells: list[tuple[Fraction, Fraction, Fraction | None]] = []
    for i in range(n0):
        a, b = cap * i / n0, cap * (i + 1) / n0
        point(a)
        cells.append((a, b, cell(a, b)))
    while True:
        top = [c for c in cells if c[2] is None or c[2] > lower]
        upper = max((c[2] for c in cells if c[2] is not None), default=Fraction(0))
        unbounded = any(c[2] is None for c in cells)
        done = not unbounded and upper - lower <= GDP_REL_WIDTH * upper
        if done or len(ends) >= GDP_MAX_QUERIES or not top:
            break
        # halve the cells whose upper end is the largest first
        top.sort(key=lambda c: -1 if c[2] is None else -float(c[2]))
        for a, b, _ in top[:8]:
            m = (a + b) / 2
            point(m)
            cells.remove(next(c for c in cells if c[0] == a and c[1] == b))
            cells += [(a, m, cell(a, m)), (m, b, cell(m, b))]
    if unbounded:
        raise ResourceLimitError(
            "gdp_mu: the composition's delta enclosure is too wide near eps = 0 to bound "
            "mu (an upper bound of delta reached 1)"
        )
    with flint.ctx.workprec(_ENCLOSURE_BITS):
        return Value.from_interval(rational_ball(lower), rational_ball(upper), nonnegative=True)
