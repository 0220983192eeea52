"""The certified loss grid of one epoch of random allocation (docs/theory.md, section 21).

One epoch of Gaussian random allocation (:class:`~dpcompose_exact.mechanisms.allocation.
RandomAllocation`, ``t = 1``) has the dominating pair ``(A, B) = (T B, B)`` with
``T = (R_1 + ... + R_k) / k`` and ``R_i = exp(a Z_i - a^2/2)`` independent under ``B``.
Its loss ``ln T`` has no closed-form law, but ``T`` is a mean of independent copies of a
lognormal ``R``, so

* upper bound: ``R`` truncated at ``M`` (the rest is a leak) and spread onto a linear
  lattice of step ``g`` (in every cell, the two-point law with the same mass and mean: a
  larger law in the convex order, so its pair is at least as informative: Blackwell);
* lower bound: ``R`` replaced by its conditional means on cells (a post-processing of the
  true pair), put on the lattice below (forward) or above (reverse), up to ``tau``;

and each law of ``S = k T`` is the ``k``-fold convolution of a lattice law, computed by
one FFT power with its a posteriori error bound (the fold of
:mod:`dpcompose_exact.engines.subsample_grid`).  The laws of ``T`` then go onto the loss
grid of width ``h``: losses raised (upper, forward), lowered (lower), and the four lattice
measures are those :func:`~dpcompose_exact.engines.subsample_grid.cell_masses` gives for
subsampled noise, so the random allocation composes with every other noise kind, over
epochs, by the same folds.

Where the linear lattice would need more than :data:`MAX_POINTS` points (``sigma`` below
about 0.7), :func:`geometric_laws` takes its place: the laws of ``R`` on cells geometric in
``R``, summed by doubling, each sum rebinned onto cells (the upper law spread onto cell
ends, the lower one by conditional means, enclosed).  Each record in ``t > 1`` steps:
:func:`reduced_laws` (upper: the product of ``t`` epochs of 1 of ``k/t`` steps; lower: the
Gaussian pair of the sum of the outputs).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint

from ..errors import ResourceLimitError
from ..numbers.convert import rational_ball
from .subsample_grid import _Fold, _frac, _Measure, _numpy, _sum_up

__all__ = [
    "AllocationGrid",
    "allocation_measures",
    "allocation_lattice",
    "geometric_laws",
    "reduced_laws",
    "CELLS_PER_SD",
    "LEAK_MASS",
]

#: the lattice step of ``R`` is the largest power of 2 at most ``sd(R) / CELLS_PER_SD``
CELLS_PER_SD = 32
#: the truncation of ``R`` leaks at most this much per epoch (upper bound)
LEAK_MASS = 1e-14
#: the largest lattice of ``R`` (points) and of ``S`` (the FFT, in subsample_grid)
MAX_POINTS = 1 << 22
#: cells of the lattice step where ``B(R > r)`` is at least this; wider ones beyond
GRADE_MASS = 1e-4
MAX_STRIDE = 1024
#: the far tail of the upper law whose computed A-mass is below this is lumped (a leak)
TAIL_LUMP = 1e-10
#: the share of a point's B-mass on the upper grid point is raised by this (float rounding)
W_SLACK = 1e-10
#: the buckets' losses may lie this much below their grid points (float rounding of ratios)
BUCKET_SHIFT = Fraction(1, 10**8)
_PREC = 128
_U = 2.0**-53


def _phi(x: flint.arb) -> flint.arb:
    """``P(Z <= x)``."""
    return (-x / flint.arb(2).sqrt()).erfc() / 2


def _phis(x: flint.arb) -> flint.arb:
    """``P(Z > x)`` (no cancellation in the upper tail)."""
    return (x / flint.arb(2).sqrt()).erfc() / 2


def _narrow(d1: flint.arb, d2: flint.arb) -> flint.arb:
    return d1 if d1.rad() <= d2.rad() else d2


def _cell(a: flint.arb, r1: flint.arb | None, r2: flint.arb) -> tuple[flint.arb, flint.arb]:
    """``(B(r1 < R <= r2), E_B[R; r1 < R <= r2])`` as balls (``r1`` None: from 0)."""
    half = a * a / 2
    z2 = ((r2.log() + half) / a) if r2 > 0 else None
    if r1 is None:
        return _phi(z2), _phi(z2 - a)
    z1 = (r1.log() + half) / a
    b = _narrow(_phi(z2) - _phi(z1), _phis(z1) - _phis(z2))
    m = _narrow(_phi(z2 - a) - _phi(z1 - a), _phis(z1 - a) - _phis(z2 - a))
    return b, m


def _upper_tail(a: flint.arb, r: flint.arb) -> tuple[flint.arb, flint.arb]:
    """``(B(R > r), E_B[R; R > r])``."""
    z = (r.log() + a * a / 2) / a
    return _phis(z), _phis(z - a)


def _tail_float(a: float, r: float) -> float:
    """``B(R > r)`` in floats (only places cells)."""
    if r <= 0:
        return 1.0
    z = (math.log(r) + a * a / 2) / a
    return 0.5 * math.erfc(z / math.sqrt(2))


def _plan(mu2: Fraction, k: int) -> tuple[float, int, list[int]]:
    """The lattice step ``g`` (a power of 2), the truncation index ``J`` and the cells."""
    a = math.sqrt(mu2)
    sd = math.sqrt(math.expm1(float(mu2)))
    g = 2.0 ** math.floor(math.log2(sd / CELLS_PER_SD))
    # B-tail of the truncation: E[R; R > M] = P(Z > z*) with z* for LEAK_MASS / k
    zs = 1.0
    while 0.5 * math.erfc(zs / math.sqrt(2)) > LEAK_MASS / k:
        zs += 0.01
    log_m = a * zs + a * a / 2
    jmax = math.ceil(math.exp(log_m) / g)
    if jmax > MAX_POINTS:
        raise ResourceLimitError(
            f"random allocation with a^2 = (sensitivity/sigma)^2 = {mu2} over {k} steps: the "
            f"lognormal likelihood ratio needs {jmax} > {MAX_POINTS} lattice points up to its "
            f"truncation at {math.exp(log_m):.3g} (a linear lattice of step {g:.3g}); a larger "
            "sigma is accounted"
        )
    # cells: the lattice step while B(R > r) >= GRADE_MASS, then wider (graded tails)
    pts = [0]
    stride = 1
    level = GRADE_MASS
    while pts[-1] < jmax:
        j = pts[-1]
        if stride < MAX_STRIDE and _tail_float(a, j * g) < level:
            stride *= 2
            level /= 10
        pts.append(min(j + stride, jmax))
    return g, jmax, pts


def _laws(mu2: Fraction, k: int) -> dict[str, Any]:
    """The lattice laws of ``R``: spread (upper), conditional means (floor, ceil), leaks."""
    np = _numpy()
    g, jmax, pts = _plan(mu2, k)
    tau = g * 2.0**-30
    up = np.zeros(jmax + 1)
    lo_f = np.zeros(jmax + 2)
    lo_c = np.zeros(jmax + 2)
    with flint.ctx.workprec(_PREC):
        a = rational_ball(mu2).sqrt()
        gb = flint.arb(g)
        cells = []
        for i in range(len(pts) - 1):
            j1, j2 = pts[i], pts[i + 1]
            b, m = _cell(a, None if j1 == 0 else gb * j1, gb * j2)
            if b.upper() <= 0:
                continue
            if b.lower() > 0 and m.lower() > 0:
                cells.append((b, m))
            # upper: the two-point law on j1 g, j2 g with the cell's mass and mean
            r1, r2 = gb * j1, gb * j2
            beta2 = (m - r1 * b) / (r2 - r1)
            b_top = b.upper()
            hi_end = beta2.upper() if beta2.upper() < b_top else b_top
            lo_end = beta2.lower() if beta2.lower() > 0 else flint.arb(0)
            up[j2] += _up(hi_end)
            up[j1] += _up(b_top - lo_end)
        # lower: the conditional means of the cells, merged into buckets whose means sit
        # on lattice points (a sweep as in section 15: the bucket takes the share theta of
        # the next cell that brings its mean to the lattice point at or above it; a coin
        # flip on a cell's outputs and merging outputs are post-processings)
        cur_b = cur_m = None
        target = 0
        for b, m in cells:
            if cur_b is None:
                cur_b, cur_m = b, m
                target = math.floor(float((m / b).mid()) / g) + 1
                continue
            r = gb * target
            need = r * cur_b - cur_m  # > 0: the bucket's mean is below r
            gain = m - r * b  # > 0: this cell's mean is above r
            theta = float((need / gain).mid()) if gain > 0 else 2.0
            if 0 <= theta <= 1:
                theta_b = flint.arb(theta)
                _bucket(lo_f, lo_c, cur_b + theta_b * b, cur_m + theta_b * m, target, g, tau)
                cur_b, cur_m = (1 - theta_b) * b, (1 - theta_b) * m
                target = math.floor(float((m / b).mid()) / g) + 1
            else:
                cur_b, cur_m = cur_b + b, cur_m + m
        if cur_b is not None:
            _bucket(lo_f, lo_c, cur_b, cur_m, None, g, tau)
        p_m, m_m = _upper_tail(a, gb * jmax)
        leak_a = _frac((m_m + (k - 1) * p_m).upper())
        leak_b = _frac((k * p_m).upper())
    # E[T^2] of the spread law as used (its masses are upper ends), in floats, upwards:
    # (E[R^2] m0^(k-1) + (k - 1) E[R]^2 m0^(k-2)) / k, m0 the total mass
    r = np.arange(jmax + 1) * g
    e1, e2, m0 = _sum_up(up * r), _sum_up(up * r * r), max(_sum_up(up), 1.0)
    second = (e2 * m0 ** (k - 1) + (k - 1) * e1 * e1 * m0 ** max(k - 2, 0)) / k
    second *= 1 + 4 * (jmax + k + 8) * _U
    return {
        "g": g,
        "tau": tau,
        "up": up * (1 + 4 * _U),
        "floor": lo_f * (1 - 4 * _U),
        "ceil": lo_c * (1 - 4 * _U),
        "leak_a": leak_a,
        "leak_b": leak_b,
        "second": second,
        "jmax": jmax,
    }


def _bucket(
    lo_f: Any, lo_c: Any, b: flint.arb, m: flint.arb, target: int | None, g: float, tau: float
) -> None:
    """Put a bucket's B-mass (lower end) on the lattice.

    At its target when its certified mean is within ``tau`` of it, else on the point below
    (``lo_f``) and above (``lo_c``).
    """
    if not b.lower() > 0:
        return
    mean = m / b
    bl = _down(b)
    lo_end, hi_end = float(mean.lower()), float(mean.upper())
    top = lo_f.size - 1
    jf = target if target is not None and lo_end >= target * g - tau else math.floor(lo_end / g)
    jc = target if target is not None and hi_end <= target * g + tau else math.ceil(hi_end / g)
    if 0 <= jf <= top:
        lo_f[jf] += bl
    if 0 <= jc <= top:
        lo_c[jc] += bl


def _up(x: flint.arb) -> float:
    v = float(x.upper())
    return max(math.nextafter(v, math.inf), 0.0)


def _down(x: flint.arb) -> float:
    v = float(x.lower())
    return max(math.nextafter(v, -math.inf), 0.0)


def _fold(masses: Any, k: int, jmax: int) -> _Fold:
    """The ``k``-fold convolution of a lattice law on ``0..jmax`` (window by Chernoff)."""
    # the fold's Chernoff parameters are in units of its step: 1/jmax puts S/M in [0, k]
    return _Fold([(_Measure(masses, 0, Fraction(0)), k)], Fraction(1, max(jmax, 1)), long=True)


@functools.lru_cache(maxsize=8)
def allocation_lattice(mu2: Fraction, k: int, res: Any = None) -> dict[str, Any]:
    """The folded laws of ``S = k T`` (upper, floor, ceil) with their error bounds.

    The linear lattice when it has at most :data:`MAX_POINTS` points, else the laws in
    ``ln R`` summed by doubling (:func:`geometric_laws`, key ``"points"``).

    Returns:
        ``{"g", "tau", "k", "up", "floor", "ceil", ...}``: each fold has ``T`` (the
        lattice indices of ``S / g`` in its window), ``y`` (the masses), ``err2`` (a bound
        on the 2-norm of their error) and ``p_lo``, ``p_hi`` (the masses outside); or
        ``{"k", "points", "leak_a", "leak_b"}`` (the geometric route).
    """
    try:
        laws = _laws(mu2, k)
    except ResourceLimitError:
        return geometric_laws(mu2, k, res)
    out = dict(laws)
    out["k"] = k
    for name in ("up", "floor", "ceil"):
        out["fold_" + name] = _fold(laws[name], k, laws["jmax"])
    return out


def allocation_measures(mech: Any, h: Fraction, deep: bool = False) -> dict[str, Any]:
    """The four lattice measures of one epoch on the loss grid of width ``h``.

    ``mech`` has ``mu2`` (``a^2``), ``steps`` (``k``) and maybe ``t`` (1 by default);
    ``deep`` is accepted for the interface of ``cell_masses`` (the tails are cut at
    :data:`LEAK_MASS` either way).  For ``t > 1``: the upper measures of the reduction to
    ``t`` epochs of 1 of ``k/t`` steps, the lower ones of the sum of the outputs
    (:func:`reduced_laws`).
    """
    t = int(getattr(mech, "t", 1))
    if t > 1:
        lat = reduced_laws(
            Fraction(mech.mu2), int(mech.steps), t, _resolution(Fraction(h), int(mech.steps))
        )
        return _point_measures(lat, h)
    return _measures(Fraction(mech.mu2), int(mech.steps), Fraction(h))


# ---------------------------------------------------------------------------------------
# the geometric route: the laws of R on cells in ln R, summed by doubling with a rebin
# ---------------------------------------------------------------------------------------

#: the step in ``z = (ln R + a^2/2) / a`` of the cells of ``R``
Z_STEP = 1 / 128
#: the cells of ``R`` start at ``z = -Z_LOW`` (the first cell is ``[0, r(-Z_LOW)]``)
Z_LOW = 9.0
#: boundaries of a rebin: this many evenly in the bulk (mean +- BULK_SD sd), as many in ln
REBIN_POINTS = 1024
BULK_SD = 8.0
#: the tails' boundaries: this many per decade of tail mass, over this many decades
TAIL_PER_DECADE = 32
TAIL_DECADES = 18
HIST_BINS = 1 << 16
#: the loss grid at and below which a rebin takes every cell (coarser grids: fewer cells)
FINE_GRID = 1e-5
#: the share of the cells of a rebin on grids coarser than FINE_GRID, from COARSE_FROM steps
COARSE = 0.316
COARSE_FROM = 64
#: ratios below this are put to the leaks (upper) or dropped (lower)
TINY_RATIO = 1e-250
#: the laws in ln R keep |ln R| and |ln S| below this (products of t epochs: t times it)
MAX_LOG_RATIO = 150.0


def _r_law(a_f: float, mu2: Fraction, k: int) -> tuple[dict[str, Any], Fraction, Fraction]:
    """The laws of ``R`` on cells evenly spaced in ``z`` (geometric in ``R``), and leaks.

    Upper: each cell's two-point spread on its ends (mass and mean kept, both raised);
    mean: each cell's conditional mean, enclosed in ``[lo, hi]``, its mass lowered.
    """
    np = _numpy()
    zs = 1.0
    while 0.5 * math.erfc(zs / math.sqrt(2)) > LEAK_MASS / k:
        zs += 0.01
    log_m = a_f * zs + a_f * a_f / 2
    log_lo = -a_f * Z_LOW - a_f * a_f / 2
    if log_m + math.log(k) > MAX_LOG_RATIO or log_lo < -MAX_LOG_RATIO:
        raise ResourceLimitError(
            f"random allocation with a^2 = (sensitivity/sigma)^2 = {mu2} over {k} steps: the "
            f"lognormal ratio spans e^{log_lo:.4g} to e^{log_m:.4g}, beyond the floats of "
            f"the laws in ln R (|ln| <= {MAX_LOG_RATIO}); a larger sigma is accounted"
        )
    nz = math.ceil((zs + Z_LOW) / Z_STEP)
    z = -Z_LOW + Z_STEP * np.arange(nz + 1)
    ends = np.exp(a_f * z - a_f * a_f / 2)
    ends = np.concatenate([[0.0], ends])
    up = np.zeros(ends.size)
    vf, vc, ym = [], [], []
    with flint.ctx.workprec(_PREC):
        a = rational_ball(mu2).sqrt()
        for j in range(ends.size - 1):
            r1 = None if j == 0 else flint.arb(float(ends[j]))
            r2 = flint.arb(float(ends[j + 1]))
            b, m = _cell(a, r1, r2)
            if b.upper() <= 0:
                continue
            lo = flint.arb(0) if r1 is None else r1
            beta2 = (m - lo * b) / (r2 - lo)
            b_top = b.upper()
            hi_end = beta2.upper() if beta2.upper() < b_top else b_top
            lo_end = beta2.lower() if beta2.lower() > 0 else flint.arb(0)
            up[j + 1] += _up(hi_end)
            up[j] += _up(b_top - lo_end)
            if b.lower() > 0 and m.lower() > 0:
                mean = m / b
                vf.append(_down(mean))
                vc.append(_up(mean))
                ym.append(_down(b))
        p_m, m_m = _upper_tail(a, flint.arb(float(ends[-1])))
        leak_a = _frac((m_m + (k - 1) * p_m).upper())
        leak_b = _frac((k * p_m).upper())
    laws = {
        "up": (ends, up),
        "mean": (np.array(vf), np.array(vc), np.array(ym)),
    }
    return laws, leak_a, leak_b


def _resolution(h: Fraction, k: int = 1) -> tuple[int, int, float]:
    """The cells of a rebin for the loss grid of width ``h`` and ``k`` steps.

    From :data:`COARSE_FROM` steps up, grids coarser than :data:`FINE_GRID` (the default
    ``1e-4``, and the halves of it the small-delta route takes) rebin onto :data:`COARSE`
    of the cells, which at ``sigma = 0.7`` meets pld-accounting's default accuracy in less
    of its time; fewer steps (few rebins: cheap) or a grid of ``1e-5`` or finer take every
    cell (section 21, "The cells of a rebin").  One resolution for all the grids of a
    query, so the laws are built once.

    Returns ``(bulk points, tail points per decade, bulk half-width in sd)``.
    """
    if float(h) <= FINE_GRID or k < COARSE_FROM:
        return REBIN_POINTS, TAIL_PER_DECADE, BULK_SD
    return round(REBIN_POINTS * COARSE), round(TAIL_PER_DECADE * COARSE), 6.0


def _bounds(v: Any, y: Any, mean: float, sd: float, res: Any = None) -> Any:
    """Cell boundaries for a law with support ``v``: even in the bulk, by mass in the tails.

    In the bulk (mean +- :data:`BULK_SD` sd) :data:`REBIN_POINTS` even cells; beyond, a
    boundary wherever the upper tail's A-mass (``sum v y`` above it) or the lower tail's
    B-mass crosses ``10^{-j/TAIL_PER_DECADE}``, read on a fine histogram in ``ln v``.  Any
    partition is valid (the spread and the conditional means hold for every cell); this
    one only decides the accuracy.
    """
    np = _numpy()
    points, per_decade, bulk_sd = res or (REBIN_POINTS, TAIL_PER_DECADE, BULK_SD)
    lo, hi = float(v.min()), float(v.max())
    parts = [np.array([lo, hi])]
    b1, b2 = max(lo, mean - bulk_sd * sd), min(hi, mean + bulk_sd * sd)
    if b2 > b1:
        parts.append(np.linspace(b1, b2, points))
    pos = v > 0
    if pos.any():
        lv = np.log(v[pos])
        l0, l1 = float(lv.min()), float(lv.max())
        nb = HIST_BINS
        step = max((l1 - l0) / nb, 1e-300)
        idx = np.minimum(((lv - l0) / step).astype(np.int64), nb - 1)
        bm = np.bincount(idx, weights=y[pos], minlength=nb)
        am = np.bincount(idx, weights=y[pos] * v[pos], minlength=nb)
        edges = np.exp(l0 + step * np.arange(1, nb + 1))
        levels = 10.0 ** (-np.arange(1, TAIL_DECADES * per_decade) / per_decade)
        up_tail = np.cumsum(am[::-1])[::-1] / max(float(am.sum()), 1e-300)  # A above bin
        lo_tail = np.cumsum(bm) / max(float(bm.sum()), 1e-300)  # B up to bin's top
        iu = np.searchsorted(-up_tail, -levels)  # first bin whose A above is <= level
        il = np.searchsorted(lo_tail, levels)  # first bin whose B below reaches level
        parts.append(edges[np.clip(iu, 0, nb - 1)])
        parts.append(edges[np.clip(il, 0, nb - 1)])
    out = np.unique(np.concatenate(parts))
    return out[(out >= lo) & (out <= hi)]


def _conv_points(
    law1: tuple[Any, Any], law2: tuple[Any, Any], op: Any = None
) -> tuple[Any, Any, Any]:
    """All sums ``v_i + w_j`` (products: ``op``) enclosed, and the products of masses.

    Returns ``(s_lo, s_hi, mass)``; each product is raised by one ulp (which also covers
    its underflow), so the masses are upper ends of the exact products.
    """
    np = _numpy()
    v1, y1 = law1
    v2, y2 = law2
    s = (op or np.add).outer(v1, v2).ravel()
    w = np.nextafter((y1[:, None] * y2[None, :]).ravel(), np.inf)
    # a sum or product of two non-negative doubles is within one rounding (relative
    # 2^-53) of it; one ulp more covers a product's underflow
    s_hi = np.where(s > 0, np.nextafter(s * (1 + 2 * _U), np.inf), 0.0)
    return s * (1 - 2 * _U), s_hi, w


def _rebin_up(
    law1: Any, law2: Any, stats: tuple[float, float], op: Any = None, res: Any = None
) -> tuple[Any, Any]:
    """The law of ``X + Y`` spread onto cell ends: larger in the convex order, masses up.

    A sum known to lie in ``[s_lo, s_hi]`` within the cell ``[L, U]`` goes to ``U`` with
    share ``(s_hi - L)/(U - L)`` and to ``L`` with ``(U - s_lo)/(U - L)``, both rounded
    up: at least the two-point law with its mean (the connect-the-dots of section 15),
    plus non-negative mass.
    """
    np = _numpy()
    s_lo, s_hi, w = _conv_points(law1, law2, op)
    bounds = _bounds(s_hi, w, *stats, res)
    bounds = np.unique(np.concatenate([bounds, [float(s_lo.min())]]))
    i_u = np.searchsorted(bounds, s_hi, "left")
    i_l = np.searchsorted(bounds, s_lo, "right") - 1
    i_u = np.minimum(i_u, bounds.size - 1)
    i_l = np.maximum(i_l, 0)
    same = i_u == i_l
    span = np.where(same, 1.0, bounds[i_u] - bounds[i_l])
    p_u = np.where(same, 1.0, (s_hi - bounds[i_l]) / span * (1 + 4 * _U))
    p_l = np.where(same, 0.0, (bounds[i_u] - s_lo) / span * (1 + 4 * _U))
    m_u, m_l = w * p_u, w * p_l
    n = bounds.size
    mass = np.bincount(i_u, weights=m_u, minlength=n) + np.bincount(i_l, weights=m_l, minlength=n)
    count = np.bincount(i_u, minlength=n) + np.bincount(i_l, minlength=n)
    mass = mass * (1 + (count + 4) * _U)
    keep = mass > 0
    return bounds[keep], mass[keep]


def _rebin_mean(
    law1: Any, law2: Any, stats: tuple[float, float], op: Any = None, res: Any = None
) -> Any:
    """The law of ``X + Y`` by its conditional means on cells, each value enclosed.

    A law here is ``(lo, hi, mass)``: points whose values lie in ``[lo, hi]``.  Seeing
    only the cell is a post-processing (smaller in the convex order); the cell's mean lies
    between the means of the ends; masses are lowered.  The floor law (``lo``, forward)
    and the ceil law (``hi``, reverse) keep lower bounds (section 21).
    """
    np = _numpy()
    lo1, hi1, y1 = law1
    lo2, hi2, y2 = law2
    outer = (op or np.add).outer
    s_lo = outer(lo1, lo2).ravel() * (1 - 2 * _U)
    s_hi = outer(hi1, hi2).ravel()
    s_hi = np.where(s_hi > 0, np.nextafter(s_hi * (1 + 2 * _U), np.inf), 0.0)
    w = np.nextafter((y1[:, None] * y2[None, :]).ravel(), 0) * (1 - 2 * _U)
    bounds = _bounds(s_lo, w, *stats, res)
    i = np.clip(np.searchsorted(bounds, s_lo, "right") - 1, 0, bounds.size - 1)
    n = bounds.size
    mass = np.bincount(i, weights=w, minlength=n)
    f_lo = np.bincount(i, weights=w * s_lo, minlength=n)
    f_hi = np.bincount(i, weights=w * s_hi, minlength=n)
    count = np.bincount(i, minlength=n)
    keep = mass > 0
    mass, f_lo, f_hi, count = mass[keep], f_lo[keep], f_hi[keep], count[keep]
    err = (2 * count + 8) * _U
    return f_lo / mass * (1 - err), f_hi / mass * (1 + err), mass * (1 - (count + 4) * _U)


def _stats(law: tuple[Any, Any]) -> tuple[float, float]:
    np = _numpy()
    v, y = law[0], law[-1]
    tot = float(np.sum(y))
    mean = float(np.sum(v * y)) / tot
    var = float(np.sum((v - mean) ** 2 * y)) / tot
    return mean, math.sqrt(max(var, 0.0))


def _joint(st1: tuple[float, float], st2: tuple[float, float], product: bool) -> Any:
    """Mean and sd of the sum (or the product) of two independent laws."""
    (m1, s1), (m2, s2) = st1, st2
    if not product:
        return m1 + m2, math.hypot(s1, s2)
    var = (s1 * s1 + m1 * m1) * (s2 * s2 + m2 * m2) - (m1 * m2) ** 2
    return m1 * m2, math.sqrt(max(var, 0.0))


def _power(law: Any, k: int, rebin: Any, product: bool = False) -> Any:
    """The ``k``-fold sum (or product) of independent copies, by doubling.

    The binary digits of ``k`` decide the steps; each step is rebinned by ``rebin``.
    """
    np = _numpy()
    op = np.multiply if product else None
    result = None
    base = law
    while True:
        if k & 1:
            if result is None:
                result = base
            else:
                stats = _joint(_stats(result), _stats(base), product)
                result = rebin(result, base, stats, op)
        k >>= 1
        if not k:
            return result
        base = rebin(base, base, _joint(_stats(base), _stats(base), product), op)


@functools.lru_cache(maxsize=8)
def reduced_laws(mu2: Fraction, k: int, t: int, res: Any = None) -> dict[str, Any]:
    """Each record in ``t`` of ``k`` steps: certified bounds from two simpler pairs.

    Upper: with ``k = q t + r``, the product of the ratios of ``t - r`` epochs of 1 of
    ``q`` steps and ``r`` epochs of 1 of ``q + 1`` (a uniform ``t``-subset is one step
    drawn in each block of a uniform random partition into blocks of those sizes, and
    revealing the partition is the reduction; docs/theory.md, section 21), each epoch's
    law of ``S`` from :func:`geometric_laws`, multiplied and rebinned like the sums
    (products of independent non-negative laws keep the convex orders).  Lower: the sum
    of the ``k`` outputs, a post-processing, is the Gaussian pair of ``mu^2 = t^2 a^2 /
    k``, its lognormal ratio by conditional means on cells.

    Returns:
        The dict :func:`_point_measures` reads: ``k`` (the product of the block sizes: the
        upper law is of the product of the ``S``), ``k_lower`` (1), ``points``, leaks.
    """
    q, r = divmod(k, t)
    parts = [(q, t - r), (q + 1, r)]

    law = None
    leak_a = leak_b = Fraction(0)
    scale = 1
    for m, n in parts:
        if not n:
            continue
        g = geometric_laws(mu2, m, res)
        v = g["points"]["up"][0]
        span = max(math.log(float(v.max())), -math.log(float(v[v > 0].min())))
        if n * span > 600:
            raise ResourceLimitError(
                f"t = {t} of {k} steps at a^2 = {mu2}: the product of the epochs' ratios "
                f"spans e^+-{n * span:.4g}, beyond the floats (a smaller t or a larger sigma "
                "is accounted)"
            )
        leak_a += n * g["leak_a"]  # a union bound: the product leaks where a factor does
        leak_b += n * g["leak_b"]
        scale *= m**n
        up = functools.partial(_rebin_up, res=res)
        p = _power(g["points"]["up"], n, up, product=True)
        if law is None:
            law = p
        else:
            law = up(law, p, _joint(_stats(law), _stats(p), True), _numpy().multiply)
    mu2_sum = Fraction(t * t) * mu2 / k
    lower, _, _ = _r_law(math.sqrt(float(mu2_sum)), mu2_sum, 1)
    lo, hi, y = _larger_lower(lower["mean"], max_law(mu2, k, t))
    return {
        "k": scale,
        "k_lower": 1,
        "points": {"up": law, "floor": (lo, y), "ceil": (hi, y)},
        "leak_a": leak_a,
        "leak_b": leak_b,
    }


#: the cells of the largest output: this step in ``z = y / sigma``, over the range where
#: its law under either side has mass above MAX_TAIL
MAX_STEP = 1 / 128
MAX_TAIL = 1e-25
#: the lower law of t > 1 steps is the one with the larger one-epoch eps at this delta
CHOICE_DELTA = 1e-5


def _cdf_max(a: flint.arb, k: int, t: int, c: flint.arb) -> tuple[flint.arb, flint.arb]:
    """``(P(max <= c), P(max > c))`` of ``k`` standard normals, ``t`` of them shifted by ``a``.

    ``ln P(max <= c) = t ln Phi(c - a) + (k - t) ln Phi(c)``, each ``ln Phi`` from the
    smaller tail, the complement by ``expm1``: relatively accurate on both sides.
    """
    r2 = flint.arb(2).sqrt()

    def log_phi(x: flint.arb) -> flint.arb:
        if x.mid() > 0:
            return (-(x / r2).erfc() / 2).log1p()
        return ((-x / r2).erfc() / 2).log()

    log_in = (t * log_phi(c - a) if t else 0) + (k - t) * log_phi(c)
    return log_in.exp(), -log_in.expm1()


def max_law(mu2: Fraction, k: int, t: int) -> tuple[Any, Any, Any]:
    """The pair seen through the largest output, on cells: a lower law (section 21).

    The record in ``t`` of ``k`` steps (``a^2 = mu2``) against none: the largest of the
    ``k`` outputs has ``P(max <= c) = Phi(c - a)^t Phi(c)^(k - t)`` (any ``t``-subset: the
    same law) against ``Phi(c)^k``.  Seeing only the cell of the largest output is a
    post-processing; each cell is a point of ratio ``A_j / B_j`` (enclosed) and B-mass
    ``B_j`` (lowered), the two tails beyond the range dropped.

    Returns:
        ``(lo, hi, mass)``: the ratios' lower and upper ends and the B-masses.
    """
    np = _numpy()
    a_f = math.sqrt(float(mu2))
    # the range (floats: a choice): Phi(c)^k >= MAX_TAIL below, and above, the record's
    # P(max > c) <= t P(Z > c - a) + (k - t) P(Z > c) <= MAX_TAIL
    c_lo = -8.0
    while k * math.log(0.5 * math.erfc(-c_lo / math.sqrt(2))) < math.log(MAX_TAIL):
        c_lo += 0.25
    c_hi = a_f + 1.0
    while k * 0.5 * math.erfc((c_hi - a_f) / math.sqrt(2)) > MAX_TAIL:
        c_hi += 0.25
    n = math.ceil((c_hi - c_lo) / MAX_STEP)
    lo, hi, ys = [], [], []
    with flint.ctx.workprec(_PREC):
        a = rational_ball(mu2).sqrt()
        prev = None
        for j in range(n + 1):
            c = rational_ball(Fraction(c_lo) + j * Fraction(MAX_STEP))
            f1, g1 = _cdf_max(a, k, t, c)
            f0, g0 = _cdf_max(a, k, 0, c)
            if prev is not None:
                pf1, pg1, pf0, pg0 = prev
                b = _narrow(f0 - pf0, pg0 - g0)
                m = _narrow(f1 - pf1, pg1 - g1)
                if b.lower() > 0 and m.lower() > 0:
                    ratio = m / b
                    lo.append(_down(ratio))
                    hi.append(_up(ratio))
                    ys.append(_down(b))
            prev = (f1, g1, f0, g0)
    return np.array(lo), np.array(hi), np.array(ys)


def _larger_lower(law1: tuple[Any, Any, Any], law2: tuple[Any, Any, Any]) -> Any:
    """Of two lower laws of one epoch, the one with the larger ``eps(CHOICE_DELTA)``.

    Forward, one epoch, in floats (a choice: either law is a valid lower law); ties go to
    ``law1``.
    """
    np = _numpy()

    def eps_at(law: tuple[Any, Any, Any]) -> float:
        v, _, y = law
        lo, hi = 0.0, 60.0
        for _ in range(50):
            mid = (lo + hi) / 2
            if float(np.sum(y * np.maximum(v - math.exp(mid), 0.0))) > CHOICE_DELTA:
                lo = mid
            else:
                hi = mid
        return lo

    return law2 if eps_at(law2) > eps_at(law1) else law1


@functools.lru_cache(maxsize=8)
def geometric_laws(mu2: Fraction, k: int, res: Any = None) -> dict[str, Any]:
    """The laws of ``S = k T`` on cells in ``ln R``, for any ``a`` (section 21).

    Returns:
        ``{"k", "points": {"up", "floor", "ceil"}, "leak_a", "leak_b"}``; each law is
        ``(values of S, masses)``: the upper law larger in the convex order (masses up),
        the floor / ceil laws smaller in the increasing / decreasing convex order.
    """
    a_f = math.sqrt(float(mu2))
    laws, leak_a, leak_b = _r_law(a_f, mu2, k)
    np = _numpy()
    zero = (np.zeros(1), np.ones(1))  # the point mass at 0: a rebin of the law alone
    rebin_up = functools.partial(_rebin_up, res=res)
    rebin_mean = functools.partial(_rebin_mean, res=res)
    up = rebin_up(laws["up"], zero, _stats(laws["up"]))
    up = _power(up, k, rebin_up)
    lo, hi, y = laws["mean"]
    mean = rebin_mean(laws["mean"], (zero[0], zero[0], zero[1]), _stats((lo, y)))
    lo, hi, y = _power(mean, k, rebin_mean)
    points = {"up": up, "floor": (lo, y), "ceil": (hi, y)}
    return {"k": k, "points": points, "leak_a": leak_a, "leak_b": leak_b}


@dataclass(frozen=True)
class AllocationGrid:
    """A random allocation's epoch as an item of the loss grid (it builds its measures)."""

    mechanism: Any

    def grid_measures(self, h: Fraction, deep: bool = False) -> dict[str, Any]:
        """The four lattice measures (:func:`allocation_measures`)."""
        return allocation_measures(self.mechanism, h, deep)

    def __repr__(self) -> str:
        return repr(self.mechanism)


@functools.lru_cache(maxsize=8)
def _measures(mu2: Fraction, k: int, h: Fraction) -> dict[str, Any]:
    np = _numpy()
    lat = allocation_lattice(mu2, k, _resolution(h, k))
    if "points" in lat:
        return _point_measures(lat, h)
    g, tau = lat["g"], lat["tau"]
    hf = float(h)
    out: dict[str, Any] = {}

    def loss_index(x: Any, upward: bool) -> Any:
        """``ceil(ln x / h)`` (``upward``) or ``floor``, with a margin for the rounding."""
        ln = np.log(x)
        margin = 1e-12 * (1 + np.abs(ln))
        if upward:
            return np.ceil((ln + margin) / hf).astype(np.int64)
        return np.floor((ln - margin) / hf).astype(np.int64)

    # upper: the spread law of S, every mass raised by the fold's error; the entries of
    # the far tail (their computed A-mass below TAIL_LUMP) are lumped, so that the error
    # there counts once in 2-norm (Cauchy-Schwarz) instead of once per entry
    f = lat["fold_up"]
    x = f.T.astype(np.float64) * g / k
    tail_a = np.cumsum((x * np.abs(f.y))[::-1])[::-1]
    cut = int(np.searchsorted(-tail_a, -TAIL_LUMP))  # first entry with tail A-mass <= it
    cut = max(cut, 1)
    y = np.maximum(f.y[:cut] + f.err2, 0.0) * (1 + 1e-9)
    xs = x[:cut]
    pos = xs > 0
    zero_mass = float(np.sum(y[~pos])) * (1 + 1e-9)
    # connect the dots: the point of ratio x in [e^{ih}, e^{(i+1)h}] is a post-processing
    # of the two-point pair on the grid with its masses (section 15); the share w of its
    # B-mass at i + 1 is computed in floats and raised by W_SLACK (its rounding is below
    # u / h), every mass raised
    i0, w = _dots(xs[pos], hf)
    r0, r1 = np.exp(i0 * hf), np.exp((i0 + 1) * hf)
    b1 = y[pos] * (np.minimum(w, 1.0) + W_SLACK)
    b0 = y[pos] * (np.minimum(1.0 - w, 1.0) + W_SLACK)
    up_f = 1 + 16 * _U
    a_mass = np.concatenate([r0 * b0 * up_f, r1 * b1 * up_f])
    idx_a = np.concatenate([i0, i0 + 1])
    # the lumped tail: A-mass sum x y + err2 ||x||_2, to the leak (loss +inf)
    lump_a = lump_b = 0.0
    if cut < x.size:
        xt, yt = x[cut:], f.y[cut:]
        lump_a = (_sum_up(np.abs(xt * yt)) + f.err2 * math.sqrt(_sum_up(xt * xt))) * (1 + 1e-9)
        lump_b = (_sum_up(np.abs(yt)) + f.err2 * math.sqrt(xt.size)) * (1 + 1e-9)
    # the A-mass above the window: E[T; S > W] <= sqrt(E[T^2] B(S > W)) (Cauchy-Schwarz)
    above = math.sqrt(lat["second"] * f.p_hi) * (1 + 1e-9) if f.p_hi > 0 else 0.0
    leak_a = lat["leak_a"] + Fraction(above) + Fraction(lump_a)
    x_lo = float(xs[pos][0]) if pos.any() else 0.0
    if f.p_lo > 0 and x_lo > 0:  # below the window: A-mass at most x_lo per unit
        idx_a = np.append(idx_a, loss_index(np.array([x_lo]), True))
        a_mass = np.append(a_mass, x_lo * f.p_lo * (1 + 1e-9))
    out["fwd_up"] = _place(idx_a, a_mass, leak_a)
    # reverse: B-masses at the reverse loss -ln x raised; S = 0 and below the window leak;
    # the lumped tail and the mass above the window at the reverse loss of the cut
    idx_b = np.concatenate([-i0, -(i0 + 1)])
    b_mass = np.concatenate([b0, b1]) * (1 + 4 * _U)
    if lump_b + f.p_hi > 0:
        top = float(x[cut]) if cut < x.size else float(x[-1])
        idx_b = np.append(idx_b, -loss_index(np.array([top]), False))
        b_mass = np.append(b_mass, (lump_b + f.p_hi) * (1 + 1e-9))
    leak_b = lat["leak_b"] + Fraction(zero_mass) + Fraction(f.p_lo)
    out["rev_up"] = _place(idx_b, b_mass, leak_b)
    # lower: floor law forward, ceil law reverse; masses lowered by the error and aliasing,
    # then merged into buckets whose ratios sit on the grid (a post-processing)
    for name, side in (("fwd_lo", "floor"), ("rev_lo", "ceil")):
        f = lat["fold_" + side]
        y = np.maximum(f.y - f.err2 - (f.p_hi + f.p_lo), 0.0) * (1 - 1e-9)
        x = f.T.astype(np.float64) * g / k
        xs = x - tau if name == "fwd_lo" else x + tau
        keep = (xs > 0) & (y > 0)
        out[name] = _bucketed(xs[keep], y[keep], hf, name == "fwd_lo")
    return out


def _buckets(cell_a: Any, cell_b: Any, lo: int, hf: float) -> tuple[Any, Any, Any]:
    """Merge cells ``(A_i, B_i)`` (ratio in ``[e^{ih}, e^{(i+1)h})``) into buckets on the grid.

    A sweep up the cells (as in section 15): the bucket being filled aims at the grid
    point ``e^{th}`` at or above its ratio and takes the share ``theta`` of the next cell
    (ratio above ``e^{th}``) that brings it there, ``(A + theta A_j) = e^{th} (B + theta
    B_j)``; the rest of that cell starts the next bucket.  Taking a share of a cell's
    outputs by a coin flip and merging outputs are post-processings.  The last bucket
    goes to the grid point below its ratio.  The float rounding of the ratios is covered
    by :data:`BUCKET_SHIFT`.

    Returns:
        ``(indices, A-masses, B-masses)`` of the buckets (numpy arrays).
    """
    np = _numpy()
    out_i, out_a, out_b = [], [], []
    ca, cb = cell_a.tolist(), cell_b.tolist()
    cur_a = cur_b = 0.0
    target = None
    for j in range(len(cb)):
        aj, bj = ca[j], cb[j]
        if bj <= 0:
            continue
        if target is None:
            cur_a, cur_b, target = aj, bj, lo + j + 1
            continue
        r = math.exp(target * hf)
        # lo + j >= target: this cell's ratio is at or above e^{target h}
        need = r * cur_b - cur_a
        gain = aj - r * bj
        if gain > 0 and need <= gain:
            theta = need / gain if need > 0 else 0.0
            out_i.append(target)
            out_a.append(cur_a + theta * aj)
            out_b.append(cur_b + theta * bj)
            cur_a, cur_b = (1 - theta) * aj, (1 - theta) * bj
            target = lo + j + 1
        else:
            cur_a, cur_b = cur_a + aj, cur_b + bj
    if target is not None and cur_b > 0:
        ratio = cur_a / cur_b
        out_i.append(math.floor((math.log(ratio) - 1e-12 * (1 + abs(math.log(ratio)))) / hf))
        out_a.append(cur_a)
        out_b.append(cur_b)
    return (
        np.array(out_i, dtype=np.int64),
        np.array(out_a, dtype=np.float64),
        np.array(out_b, dtype=np.float64),
    )


def _place(index: Any, mass: Any, leak: Fraction) -> _Measure:
    np = _numpy()
    keep = mass > 0
    index, mass = index[keep], mass[keep]
    if index.size == 0:
        return _Measure(np.zeros(1), 0, leak)
    lo, hi = int(index.min()), int(index.max())
    arr = np.bincount(index - lo, weights=mass, minlength=hi - lo + 1)
    return _Measure(arr.astype(np.float64), lo, leak)


def _dots(x: Any, hf: float) -> tuple[Any, Any]:
    """The grid cell ``i`` with ``e^{ih} <= x`` (certainly) and the share ``w`` above."""
    np = _numpy()
    ln = np.log(x)
    i = np.floor((ln - 1e-12 * (1 + np.abs(ln))) / hf).astype(np.int64)
    r0 = np.exp(i * hf)
    r1 = np.exp((i + 1) * hf)
    return i, np.maximum((x - r0) / (r1 - r0), 0.0)


def _point_measures(lat: dict[str, Any], h: Fraction) -> dict[str, Any]:
    """The four lattice measures from the geometric route's laws of ``S`` (section 21).

    Upper: every point of ratio ``x = S/k`` connects the dots of its grid cell (shares
    raised by :data:`W_SLACK`, masses raised); the ratio 0 is a reverse leak.  Lower: the
    ratios rounded down (forward) or up (reverse), then the buckets of :func:`_buckets`.
    """
    np = _numpy()
    k = lat["k"]
    hf = float(h)
    out: dict[str, Any] = {}
    v, y = lat["points"]["up"]
    x = v / k
    pos = x > TINY_RATIO  # ratios below it: B-mass to the reverse leak, A-mass forward
    zero_mass = _sum_up(y[~pos]) if (~pos).any() else 0.0
    tiny_a = Fraction(TINY_RATIO * zero_mass)
    xs, ys = x[pos], y[pos]
    i0, w = _dots(xs, hf)
    r0, r1 = np.exp(i0 * hf), np.exp((i0 + 1) * hf)
    b1 = ys * (np.minimum(w, 1.0) + W_SLACK)
    b0 = ys * (np.minimum(1.0 - w, 1.0) + W_SLACK)
    up_f = 1 + 16 * _U
    a_mass = np.concatenate([r0 * b0 * up_f, r1 * b1 * up_f])
    idx = np.concatenate([i0, i0 + 1])
    out["fwd_up"] = _place(idx, a_mass, lat["leak_a"] + tiny_a)
    b_mass = np.concatenate([b0, b1]) * (1 + 4 * _U)
    out["rev_up"] = _place(-idx, b_mass, lat["leak_b"] + Fraction(zero_mass))
    k_lower = lat.get("k_lower", k)
    for name, side in (("fwd_lo", "floor"), ("rev_lo", "ceil")):
        v, y = lat["points"][side]
        x = v / k_lower * ((1 - 2 * _U) if side == "floor" else (1 + 2 * _U))
        keep = (x > TINY_RATIO) & (y > 0)
        out[name] = _bucketed(x[keep], y[keep] * (1 - 1e-9), hf, name == "fwd_lo")
    return out


def _bucketed(xs: Any, ys: Any, hf: float, forward: bool) -> _Measure:
    """A lower lattice measure: points of ratio ``xs`` and B-mass ``ys``, bucketed.

    The ratios are already on the safe side (lowered for the forward measure, raised for
    the reverse one) and the masses lowered; the points of each grid cell are merged and
    the cells swept into buckets on grid points (:func:`_buckets`), whose A-masses
    (forward, at the bucket's loss) or B-masses (reverse, at minus it) are lowered once
    more for their float sums; their losses may lie :data:`BUCKET_SHIFT` below the grid.
    """
    np = _numpy()
    i0, _ = _dots(xs, hf)
    lo_i = int(i0.min())
    cell_b = np.bincount(i0 - lo_i, weights=ys)
    cell_a = np.bincount(i0 - lo_i, weights=xs * ys)
    idx, a_b, b_b = _buckets(cell_a, cell_b, lo_i, hf)
    if forward:
        m = _place(idx, a_b * (1 - 1e-9), Fraction(0))
    else:
        m = _place(-idx, b_b * (1 - 1e-9), Fraction(0))
    m.shift = BUCKET_SHIFT
    return m
