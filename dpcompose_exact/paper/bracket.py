"""Bracketing the k-fold composition of a smooth f-DP guarantee (docs/theory.md, section 9).

The paper's section IV (Propositions 1 and 2, Figure 3) approximates a symmetric smooth
trade-off function f -- the Gaussian G_mu above all -- from below and from above by n
(eps, delta)-DP constraints (:mod:`dpcompose_exact.paper.approx`). Composition is monotone, so
composing both approximations k times with the *exact* engine
(:func:`dpcompose_exact.engines.genfunc.compose_plds`) brackets the true k-fold composition:

    lower_k(t) <= f^{(x)k}(t) <= upper_k(t)    for every t in [0, 1],

where ``lower_k`` is the k-fold composition of the approximation from below. As regions
(the sets above the curves) this reads ``upper_k <= lower_k`` (inclusion). For the
Gaussian the middle term is known exactly, ``G_mu^{(x)k} = G_{mu sqrt k}`` (Dong-Roth-Su),
and ``lower_k`` is a *valid* privacy guarantee for k runs of the Gaussian mechanism
stated as finitely many exact (eps, delta) pairs. As the number n of pieces grows both
approximations tighten (docs/theory.md, section 9, last item), and so does the bracket.

Distances reported by :func:`bracket_composition`:

* the area between the curves (lower vs. reference, reference vs. upper, lower vs.
  upper). The area under an exact region is the trapezoid sum over its exact vertices,
  evaluated in ``arb`` ball arithmetic (a certified enclosure); the area under
  G_m is the closed form ``Phi(-m/sqrt2)`` (``P(Z_1 - Z_2 > m)`` for independent
  standard normals: draw t uniform, G_m(t) = P(Z_2 < Phi^-1(1 - t) - m)), evaluated with
  mpmath;
* the hockey-stick divergence delta(eps) at a few eps: for a region
  ``max_v (1 - f(t_v) - e^eps t_v)`` over its exact vertices (certified balls); for
  G_m the closed form ``Phi(-eps/m + m/2) - e^eps Phi(-eps/m - m/2)`` (mpmath).

Cost. The exact composition works in Q(z) with z = e^{g0}, g0 the gcd of all eps, so
its cost grows quickly with max(eps)/g0. The approximations are therefore rounded to the
coarse grid 1/20 by default (:data:`DEFAULT_EPS_DENOMINATOR`): soundness does not depend
on the grid (eps rounded up below, down above, both re-certified by
:mod:`dpcompose_exact.paper.approx`), only the tightness does a little.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import flint
from mpmath import mp

from ..engines.genfunc import DEFAULT_MEMORY_LIMIT, compose_plds
from ..engines.results import delta_value
from ..errors import InvalidParameterError
from ..numbers import ExpDomain, QzElem, parse_rational
from ..numbers.certify import refine
from ..numbers.format import mpf_str
from ..regions.pld import canonical_pair
from ..regions.tradeoff import Region, dp_region
from .approx import (
    Approximation,
    Family,
    Rule,
    SmoothTradeoff,
    approx_from_above,
    approx_from_below,
)
from .approx import gaussian_from_mu2 as _gaussian_mu2
from .theorems import check_k

__all__ = [
    "DEFAULT_EPS_DENOMINATOR",
    "DEFAULT_EPS_POINTS",
    "Bracket",
    "DeltaRow",
    "approximation_region",
    "bracket_composition",
    "bracket_sequence",
    "gaussian_delta",
    "gaussian_mu_squared",
    "region_area",
    "region_delta",
]

#: eps grid of the approximations composed by :func:`bracket_composition`. Measured on a
#: 2-core machine for G_1 and k = 10: n = 2, 3, 4 pieces compose in about 0.3 s, 3 s and
#: 5 s (both sides); the grid 1/50 needs about 0.1 s, 25 s and 80 s.
DEFAULT_EPS_DENOMINATOR = 20

#: eps at which :func:`bracket_composition` reports delta(eps) by default.
DEFAULT_EPS_POINTS: tuple[Fraction, ...] = (Fraction(0), Fraction(1, 2), Fraction(1), Fraction(2))

#: bits of relative accuracy asked of every vertex ball.
_BITS = 96


# ---------------------------------------------------------------------------------------
# certified numerics of exact regions
# ---------------------------------------------------------------------------------------


def _elem_ball(dom: ExpDomain, x: QzElem, bits: int = _BITS) -> flint.arb:
    """A ball around the real value of x with about ``bits`` bits of relative accuracy.

    The vertices of a composed region are ratios of high-degree polynomials in z; the
    precision is doubled until the ball is narrow (cancellation can be severe).
    """
    if x.is_zero():
        return flint.arb(0)
    return refine(
        lambda prec: dom.elem_ball(x, prec),
        lambda ball: ball.is_finite() and ball.rel_accuracy_bits() >= bits,
        2 * bits + max(x.num.height_bits(), x.den.height_bits()),
        ceiling=1 << 16,
        failure=f"could not evaluate a vertex to {bits} bits",
    )


def _vertex_balls(region: Region, bits: int = _BITS) -> list[tuple[flint.arb, flint.arb]]:
    dom = region.domain
    return [(_elem_ball(dom, x, bits), _elem_ball(dom, y, bits)) for x, y in region.vertices()]


def region_area(region: Region, bits: int = _BITS) -> flint.arb:
    """Certified enclosure of the area under the trade-off curve of an exact region.

    The curve is affine between its exact vertices, so the trapezoid sum over the
    vertices is the exact area; it is evaluated with ``arb`` balls.

    Args:
        region: An exact region.
        bits: Relative accuracy of every vertex ball.

    Returns:
        A ``flint.arb`` ball containing the integral of f over [0, 1].
    """
    return _area_from_balls(_vertex_balls(region, bits), bits)


def _area_from_balls(verts: list[tuple[flint.arb, flint.arb]], bits: int) -> flint.arb:
    with flint.ctx.workprec(2 * bits + 64):
        total = flint.arb(0)
        for (x0, y0), (x1, y1) in zip(verts, verts[1:]):
            total += (x1 - x0) * (y0 + y1) / 2
    return total


def region_delta(region: Region, eps: Any, bits: int = _BITS) -> flint.arb:
    """Certified enclosure of delta(eps), the smallest delta with region inside R(eps, delta).

    The one implementation of delta(eps) (:func:`~dpcompose_exact.engines.results.delta_value`),
    evaluated as a ball of relative accuracy about ``bits``; any rational eps >= 0, also
    off the region's eps grid.

    Args:
        region: An exact region.
        eps: A rational eps >= 0 (int, Fraction or string; no floats).
        bits: Working precision of the ball.

    Returns:
        A ``flint.arb`` ball containing delta(eps).
    """
    e = parse_rational(eps, "eps")
    if e < 0:
        raise InvalidParameterError(f"eps = {e} must be >= 0")
    return delta_value(region, e).ball(2 * bits + 64)


def approximation_region(approx: Approximation) -> Region:
    """The exact region of a mechanism satisfying all constraints of an approximation."""
    return dp_region(list(approx.constraints), warn=False)


# ---------------------------------------------------------------------------------------
# the Gaussian reference G_m, m^2 = mu^2 k
# ---------------------------------------------------------------------------------------


def gaussian_mu_squared(f: SmoothTradeoff) -> Fraction | None:
    """The exact mu^2 of a Gaussian trade-off function built by ``approx``, else None."""
    params = dict(f.params)
    mu2 = params.get("mu^2")
    return Fraction(mu2) if mu2 is not None and f.family is Family.GAUSSIAN else None


def gaussian_delta(mu2: Fraction, eps: Any, dps: int = 30) -> Any:
    """delta(eps) of G_m with m = sqrt(mu2): Phi(-eps/m + m/2) - e^eps Phi(-eps/m - m/2).

    Args:
        mu2: The exact m^2 > 0.
        eps: A rational eps >= 0.
        dps: mpmath working precision.

    Returns:
        The mpf value.
    """
    e = parse_rational(eps, "eps")
    with mp.workdps(dps + 10):
        m = mp.sqrt(mp.mpf(mu2.numerator) / mu2.denominator)
        x = mp.mpf(e.numerator) / e.denominator
        val = mp.ncdf(-x / m + m / 2) - mp.exp(x) * mp.ncdf(-x / m - m / 2)
    with mp.workdps(dps):
        return +val


def _gaussian_area(mu2: Fraction, dps: int = 30) -> Any:
    """Area under G_m: P(Z_2 <= Z_1 - m) for independent standard normals = Phi(-m/sqrt2)."""
    with mp.workdps(dps + 10):
        val = mp.ncdf(-mp.sqrt(mp.mpf(mu2.numerator) / mu2.denominator / 2))
    with mp.workdps(dps):
        return +val


# ---------------------------------------------------------------------------------------
# the bracket
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeltaRow:
    """delta(eps) of the three curves at one eps (decimal strings).

    Attributes:
        eps: The exact eps.
        lower: delta of the composed approximation from below (certified decimal): the
            valid guarantee, the largest of the three.
        reference: delta of the exact reference (mpmath), or None without a reference.
        upper: delta of the composed approximation from above (certified decimal).
    """

    eps: Fraction
    lower: str
    reference: str | None
    upper: str


@dataclass(frozen=True)
class Bracket:
    """The k-fold compositions of the n-piece approximations from below and above.

    Attributes:
        tradeoff: The approximated f (one mechanism).
        k: Number of compositions.
        pieces: Number n of (eps, delta) constraints of each approximation.
        below: The approximation from below (f_{eps,delta} <= f).
        above: The approximation from above (f_{eps,delta} >= f).
        lower: Exact k-fold composition of ``below``: a valid privacy region for the
            k-fold composition of f (its curve lies below f^{(x)k}).
        upper: Exact k-fold composition of ``above`` (its curve lies above f^{(x)k};
            ``upper <= lower`` as regions).
        reference: f^{(x)k} when it is known in closed form (G_{mu sqrt k}), else None.
        area_lower_reference: Area between ``lower`` and the reference (None without one).
        area_reference_upper: Area between the reference and ``upper`` (None without one).
        area_lower_upper: Area between ``lower`` and ``upper`` (certified ball midpoint).
        deltas: delta(eps) of the three curves at a few eps.
        seconds: Wall-clock time of the whole computation (approximations, exact
            compositions, certified areas and deltas).
    """

    tradeoff: SmoothTradeoff = field(repr=False)
    k: int
    pieces: int
    below: Approximation = field(repr=False)
    above: Approximation = field(repr=False)
    lower: Region = field(repr=False)
    upper: Region = field(repr=False)
    reference: SmoothTradeoff | None = field(repr=False)
    area_lower_reference: Any
    area_reference_upper: Any
    area_lower_upper: Any
    deltas: tuple[DeltaRow, ...]
    seconds: float

    @property
    def width(self) -> Any:
        """The area between the two composed curves (the size of the bracket)."""
        return self.area_lower_upper


def bracket_composition(
    f: SmoothTradeoff,
    k: int,
    pieces: int = 2,
    *,
    rule: Rule | str = Rule.OPTIMAL,
    eps_denominator: int = DEFAULT_EPS_DENOMINATOR,
    delta_denominator: int = 10**8,
    eps_points: Sequence[Any] = DEFAULT_EPS_POINTS,
    reference: SmoothTradeoff | None = None,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    digits: int = 12,
) -> Bracket:
    """Compose the n-piece approximations of f from below and above k times, exactly.

    Args:
        f: A smooth symmetric trade-off function (``gaussian(mu)``, ``laplace(eps)``...).
        k: Number of compositions, >= 1.
        pieces: Number n >= 1 of (eps, delta) constraints of each approximation.
        rule: Rule of the approximation from below (``"optimal"`` or the paper's
            ``"paper"``).
        eps_denominator: Grid of the eps of both approximations (coarse keeps the exact
            composition fast; see :data:`DEFAULT_EPS_DENOMINATOR`).
        delta_denominator: Grid of the deltas.
        eps_points: Rational eps at which delta(eps) is compared.
        reference: The exact f^{(x)k}; by default G_{mu sqrt k} when f is G_mu, else None.
        memory_limit: Passed to :func:`~dpcompose_exact.engines.genfunc.compose_plds`.
        digits: Significant digits of the decimals in :attr:`Bracket.deltas`.

    Returns:
        The :class:`Bracket`.

    Raises:
        InvalidParameterError: on a bad k, pieces or eps point.
        CertificationError: if an approximation cannot be certified.
        ResourceLimitError: if the exact composition would exceed ``memory_limit``.
    """
    k = check_k(k)
    if isinstance(pieces, bool) or not isinstance(pieces, int) or pieces < 1:
        raise InvalidParameterError(f"pieces must be an integer >= 1, got {pieces!r}")
    points = [parse_rational(e, "eps") for e in eps_points]
    for e in points:
        if e < 0:
            raise InvalidParameterError(f"eps point {e} must be >= 0")
    mu2 = gaussian_mu_squared(f)
    if reference is None and mu2 is not None:
        reference = _gaussian_mu2(mu2 * k, f"{f.name}^(x{k})")
    start = time.perf_counter()
    below = approx_from_below(
        f,
        pieces,
        rule=rule,
        eps_denominator=eps_denominator,
        delta_denominator=delta_denominator,
    )
    above = approx_from_above(
        f, pieces, eps_denominator=eps_denominator, delta_denominator=delta_denominator
    )
    lower = compose_plds(
        [(canonical_pair(approximation_region(below)), k)], memory_limit=memory_limit
    )
    upper = compose_plds(
        [(canonical_pair(approximation_region(above)), k)], memory_limit=memory_limit
    )

    balls_lower = _vertex_balls(lower)
    balls_upper = _vertex_balls(upper)
    area_lower = _area_from_balls(balls_lower, _BITS)
    area_upper = _area_from_balls(balls_upper, _BITS)
    with mp.workdps(30):
        a_lo = mp.mpf(area_lower.mid().str(30, radius=False))
        a_up = mp.mpf(area_upper.mid().str(30, radius=False))
        if reference is not None:
            ref_mu2 = gaussian_mu_squared(reference)
            a_ref = _gaussian_area(ref_mu2) if ref_mu2 is not None else reference.area()
            area_lr, area_ru = a_ref - a_lo, a_up - a_ref
        else:
            area_lr = area_ru = None
        area_lu = a_up - a_lo

    ref_mu2 = gaussian_mu_squared(reference) if reference is not None else None
    rows = []
    for e in points:
        ref_text = None
        if ref_mu2 is not None:
            ref_text = mpf_str(gaussian_delta(ref_mu2, e), digits)
        rows.append(
            DeltaRow(
                e,
                delta_value(lower, e).decimal(digits),
                ref_text,
                delta_value(upper, e).decimal(digits),
            )
        )
    seconds = time.perf_counter() - start
    return Bracket(
        f,
        k,
        pieces,
        below,
        above,
        lower,
        upper,
        reference,
        area_lr,
        area_ru,
        area_lu,
        tuple(rows),
        seconds,
    )


def bracket_sequence(
    f: SmoothTradeoff, k: int, pieces: Sequence[int] = (2, 3, 4), **kwargs: Any
) -> list[Bracket]:
    """:func:`bracket_composition` for several numbers of pieces (to watch it shrink).

    Args:
        f: The trade-off function.
        k: Number of compositions.
        pieces: The numbers n of pieces.
        **kwargs: Passed to :func:`bracket_composition`.

    Returns:
        One :class:`Bracket` per n, in the given order.
    """
    return [bracket_composition(f, k, n, **kwargs) for n in pieces]
