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
about 0.7), the laws in ``ln R`` summed by doubling take its place, and each record in
``t > 1`` steps has the laws of a reduction and of two statistics
(:mod:`dpcompose_exact.engines.allocation_laws`); this module puts them on the loss grid.
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
from .allocation_laws import (
    _PREC,
    _U,
    LEAK_MASS,
    TINY_RATIO,
    _cell,
    _down,
    _resolution,
    _up,
    _upper_tail,
    geometric_laws,
    reduced_laws,
)
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
