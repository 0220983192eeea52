"""The laws of one epoch of random allocation in ``ln R``, summed by doubling (section 21).

Where the linear lattice of :mod:`dpcompose_exact.engines.allocation` would need too many
points (``sigma`` below about 0.7), :func:`geometric_laws` gives the laws of ``S = k T``:
the laws of ``R`` on cells geometric in ``R`` (the upper law spread onto cell ends, the
lower one by conditional means, enclosed), summed by doubling, each sum rebinned onto
cells.  Each record in ``t > 1`` steps: :func:`reduced_laws` (upper: the product of ``t``
epochs of 1 of ``k/t`` steps; lower: the pair seen through the sum of the outputs or
through the largest output, :func:`max_law`).  Also the certified primitives both routes
share: the cell masses and first moments of the lognormal ratio ``R``, and the safe
roundings of balls to doubles.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import flint

from ..errors import ResourceLimitError
from ..numbers.convert import rational_ball
from .subsample_grid import _frac, _numpy

__all__ = ["geometric_laws", "reduced_laws", "max_law", "LEAK_MASS"]

#: the truncation of ``R`` leaks at most this much per epoch (upper bound)
LEAK_MASS = 1e-14
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


def _up(x: flint.arb) -> float:
    v = float(x.upper())
    return max(math.nextafter(v, math.inf), 0.0)


def _down(x: flint.arb) -> float:
    v = float(x.lower())
    return max(math.nextafter(v, -math.inf), 0.0)


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
