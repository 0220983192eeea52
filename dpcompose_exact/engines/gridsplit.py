"""A tiny ``delta(eps)`` of subsampled Gaussian noise split by the number of large uses.

At a small rate one use's privacy loss is a bulk near 0 (the uses that did not sample the
record, and most that did) and a thin upper tail ``L ~ beta + ln q`` (``beta`` Gaussian);
a tiny ``delta(eps)`` is then made of a few large losses next to many small ones, and one
exponential tilt cannot centre both: the tilted composition's mass lies far from ``eps``
and the folds' error, relative to the Chernoff bound, swamps the answer.  Cut one use's
upper lattice measure at a loss ``theta``, ``mu = mu_b + mu_t`` (bulk, tail); then
``mu^{*k} = sum_j C(k, j) mu_b^{*(k - j)} * mu_t^{*j}``, and the query, linear in the
composed measure, is the sum of the parts' queries.  Each part is folded tilted at its own
saddle point (:mod:`~dpcompose_exact.engines.gridtilt`), where its Chernoff bound is within
a modest factor of the part; parts whose Chernoff bound is negligible are bounded by it,
and the parts with more than ``J`` large uses by ``C(k, J + 1) M_t^{J + 1} (M_b +
M_t)^{k - J - 1} e^{-lam eps}``.  The same cut splits the lower measure, so the lower end
is the sum of the parts' lower bounds.  The bulk is resolved on a finer lattice where its
mass is (:func:`~.gridcells.mixed_masses`): the folds' lattice error is second order in
``lam h`` per use and the bulk has ``k`` of them; the tail likewise where a folded part's
tilted mass lies (:func:`_tail_cells`).  The parts' bounds are summed in Arb (a negligible
part's bound can be ``e^{-10^8}``, far too many bits for a rational).  Where one large use
carries the answer, its part in closed form (:mod:`~dpcompose_exact.engines.gridonelarge`)
is tried first on a lattice of the bulk alone, fine enough for the bulk's ``k`` uses
(:func:`_one_first`).  The argument is docs/theory.md, section 15 ("Split by the number of
large uses", "One large use in closed form", "The bulk's own lattice").  The parts'
saddles, estimates and certified sum live in :mod:`~dpcompose_exact.engines.gridparts`; this
module chooses the lattices.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..errors import ResourceLimitError
from .gridcells import _measures_on, cell_masses, log_tails, mixed_masses
from .gridfold import fold_length
from .gridmeasure import _log_mgf, _Measure, _numpy
from .gridonelarge import ONE_POINTS, ONE_SHARE, one_large_delta, one_large_tilt
from .gridparts import (
    SPLIT_REST,
    _cut,
    _estimates,
    _gap,
    _Guide,
    _parts,
    _saddle,
    _slope,
    _split,
    _tail_log,
)
from .gridsteps import (
    DEEP_MAX_STRIDE,
    DEEP_SPAN,
    DEEP_TAIL_LOG,
    _grid_points,
    _loss_index_range,
)

__all__ = ["split_delta"]

#: the bulk's lattice: ``SPLIT_C0 k (lam h)^2`` (the measured second-order gap of ``k`` bulk
#: uses) at most SPLIT_GAP, ``h`` halved at most SPLIT_RATIO times over the deep grid's ...
SPLIT_C0 = 3.0
SPLIT_GAP = 2e-4
SPLIT_RATIO = 1 << 16
#: ... where one use's tail at eps is within the deep grid's (a top near eps): the gap at
#: most SPLIT_NEAR_GAP (its measured width is about a tenth of it)
SPLIT_NEAR_GAP = 1e-3
#: ... and ``lam h`` at most SPLIT_STEP (a narrow bulk's buckets lose a first-order share)
SPLIT_STEP = 4e-3
#: ... after a probe of at most SPLIT_PROBE, whose measures place the tilts
SPLIT_PROBE = 64
#: ... the fine cells reaching where one use's tilted log-mass is SPLIT_DROP below its
#: bulk's peak, at most SPLIT_FINE of them
SPLIT_DROP = 30.0
SPLIT_FINE = 1 << 18
#: ... and the fine lattice (up to the grid's top) at most SPLIT_CELLS entries (memory)
SPLIT_CELLS = 1 << 22
#: where one use's tail at eps is within the deep grid's, the cells of that tail near eps at
#: most this wide times its slope (a few uses)
SPLIT_NEAR = 0.01
#: where eps spans fewer than SPLIT_EPS_MIN of the deep grid's cells (no cut fits between 0
#: and eps / 2), the split's own width: the deep grid's halved until eps spans at least
#: SPLIT_EPS_CELLS cells (at a tiny rate one large use's tail falls by e^{-10^4} per unit of
#: loss near eps: the cut and the bulk need cells far below eps)
SPLIT_EPS_MIN = 4
SPLIT_EPS_CELLS = 256
#: the part with one large use in closed form (:mod:`.gridonelarge`) answers alone when its
#: enclosure is relatively at most this wide (else the parts are folded and intersected)
SPLIT_ONE_WIDTH = 1e-4
#: the tail's cells where a folded part's tilted mass lies: ``lam`` times their width at
#: most this (:func:`_tail_cells`), far below the deep grid's tails
SPLIT_TAIL_LH = 0.02
#: the part with one large use first, on a lattice of the bulk alone (:func:`_one_first`):
#: the bulk cut where each part's tilted log-mass has fallen ONE_DROP below its bulk's peak
ONE_DROP = 60.0
#: ... its width ``h / r`` with ``SPLIT_C0 k (lam h / r)^2`` at most ONE_GAP, ``r`` at most
#: ONE_RATIO (a power of 2)
ONE_GAP = 4e-3
ONE_RATIO = 1 << 12
#: ... (not tried when the lattice affordable leaves that ONE_SLACK times larger)
ONE_SLACK = 2.0
#: ... its fine cells (every step of ``h / r``) to SPLIT_DROP below the tilted bulk's peak
#: and ONE_MARGIN steps of ``h`` beyond, at most ONE_FINE grid points in all
ONE_MARGIN = 2
ONE_FINE = 1 << 17
#: ... the bulk's fold weighed in blocks of ``lam`` times their width at most ONE_BLOCK_LH
ONE_BLOCK_LH = 1e-2
#: ... not tried when its window (about ONE_SPREADS standard deviations of the tilted fold)
#: holds more than :data:`~.gridonelarge.ONE_POINTS` blocks
ONE_SPREADS = 16.0
#: ... and it answers alone when relatively at most this wide (else the parts are folded)
ONE_FIRST_WIDTH = 5e-4
#: ... its bulk cut lower where the lattice to the cut would exceed SPLIT_CELLS, when the
#: parts with two or more large uses stay this far (log) below the route's share there
ONE_CUT_SLACK = 5.0


def split_delta(sub: Any, k: int, eps: Fraction, h: Fraction) -> tuple[Fraction, Fraction] | None:
    """``(lower, upper)`` of the forward ``delta(eps)`` of ``k`` uses of ``sub``, by parts.

    ``sub``: subsampled Gaussian noise at a rate below 1 (else None); ``h``: the deep
    grid's width.  Every choice (the cut, the tilts, the bulk's width, which parts are
    folded) is made in floats; every bound is certified (module docstring).
    """
    if k < 2 or not log_tails(sub):
        return None
    if 0 < eps < SPLIT_EPS_MIN * h:  # no cut between 0 and eps / 2: the split's own cells
        while eps < SPLIT_EPS_CELLS * h:
            h /= 2
    ef = float(eps)
    tail_log = _tail_log(sub, ef)
    span = _loss_index_range(sub, h, tail_log)
    if span[1] - span[0] > SPLIT_CELLS:
        return None
    coarse = cell_masses(sub, h, deep=True, tail_log=tail_log)
    up = coarse["fwd_up"]
    hc = float(h)
    cut, lam = _cut(up, k, hc, ef)
    if cut is None:
        return None
    try:  # the part with one large use first, on the bulk's own lattice
        first = _one_first(sub, k, eps, h, up, cut, tail_log)
    except ResourceLimitError:
        first = None
    if first is not None and first[0] > 0 and _narrow(first, ONE_FIRST_WIDTH):
        return first
    # the bulk's width and where its fine cells end: the query weighs the bulk's sum by
    # the tail's own slope at eps (its local tilt), not only by the part's saddle point;
    # then again at the tilt of the largest part, found on the fine measures (the deep
    # grid's cells hide a small rate's bulk: a saddle point there can lie far off)
    slope = tail_slope = max(lam, _slope(sub, ef))
    lo_c = math.floor(math.log1p(-float(sub.q)) / hc) - 2
    near_to, probes, gap, step = None, (SPLIT_PROBE,), SPLIT_GAP, math.inf
    if tail_log > DEEP_TAIL_LOG:  # a shallow top: the tail near eps on graded cells
        near_to = min(span[1], math.ceil((ef + SPLIT_DROP / slope) / hc))
        probes, gap, step = (SPLIT_PROBE, SPLIT_RATIO), SPLIT_NEAR_GAP, SPLIT_STEP
    else:  # one use's tail at eps beyond the deep grid's: its own slope is not the query's
        slope = lam
        probes = (SPLIT_PROBE, SPLIT_RATIO)  # finer only for the closed-form route's tilt
    fine_c: float = _fine_end(up, hc, lam, cut - up.offset)  # in the deep grid's steps
    ratio = 0
    route: tuple[_Measure, float, float] | None = None  # the closed-form route's bulk, tilt
    for probe in probes:  # a coarse probe first, then as fine as needed
        want = 1
        while want < probe and (
            SPLIT_C0 * k * (slope * hc / want) ** 2 > gap or slope * hc / want > step
        ):
            want *= 2
        while want > 1 and (
            _points(fine_c, lo_c, near_to, want, tail_slope * hc) > SPLIT_FINE
            or (span[1] - span[0]) * want > SPLIT_CELLS
            or want > ratio > 0 and _route_points(route, k, hc / want) > ONE_POINTS
        ):
            want //= 2
        if want <= ratio:
            break
        ratio = want
        hf = h / ratio
        fine_to = math.ceil(fine_c * ratio)
        if near_to is None:  # far below the deep grid's tails: the tilts and the tail's
            est = _estimates(_split(up, cut), k, ef, hc)  # cells from the deep grid's
            near = _tail_cells(up, cut, est, ratio, hc)
        else:
            near = (fine_to, near_to * ratio, _near_step(ratio, tail_slope * hc))
        measures = mixed_masses(sub, hf, ratio, fine_to, tail_log, near)
        sides = {name: _split(measures[f"fwd_{name}"], cut * ratio) for name in ("up", "lo")}
        if near_to is None:  # the bulk as fine as the closed-form route's sum wants, if it
            tilt = one_large_tilt(sub, k, ef, sides["up"][0], float(hf), cut * hc, est)
            if tilt is None or tilt <= slope:  # applies (one more pass, at most)
                break
            slope = tilt  # the fine cells' end at that tilt, past this pass's fine end
            bulk = sides["up"][0]
            fine_c = _fine_end(bulk, float(hf), slope, bulk.masses.size) / ratio
            route = (bulk, float(hf), tilt)
            continue
        guide = (_Guide(sides["up"][0], float(hf)), _Guide(sides["up"][1], float(hf)))
        est = _estimates(guide, k, ef, float(hf))
        # the tilts of the parts that matter (the tail's own slope if one with a large use
        # does), and where the bulk's fine cells end at the largest
        best = max(est)[0]
        big = [(j, lam_j) for log_c, j, lam_j in est if log_c >= best + math.log(SPLIT_REST)]
        slope = max(lam_j for _, lam_j in big)
        if any(j for j, _ in big):
            slope = max(slope, tail_slope)
        bulk = sides["up"][0]
        stop = max(1, min(fine_to - bulk.offset + 1, bulk.masses.size))
        fine_c = _fine_end(bulk, float(hf), slope, stop) / ratio
    plain = _split(measures["fwd_lo_plain"], cut * ratio)
    # the lower measure nearer the upper one at the tilt of one large use (a choice)
    gaps = [_gap(sides["up"], low, k, lam, float(hf)) for low in (sides["lo"], plain)]
    if gaps[1] < gaps[0]:
        sides["lo"] = plain
    # far in the tail, one large use carries the answer: its closed-form tail instead of
    # its lattice tail (:mod:`.gridonelarge`), when that alone is tight enough
    low = measures["fwd_lo_plain" if gaps[1] < gaps[0] else "fwd_lo"]
    width = _cell_end(measures["fwd_up"], cut * ratio, (DEEP_MAX_STRIDE + 1) * ratio)
    one = one_large_delta(sub, k, eps, hf, measures["fwd_up"], low, cut * ratio, width, est)
    if one is not None and one[0] > 0 and _narrow(one, SPLIT_ONE_WIDTH):
        return one
    got = _parts(sides, measures["fwd_up"], k, eps, hf, est)
    for other in (one, first):  # all certified: intersected
        if other is not None:
            got = max(got[0], other[0]), min(got[1], other[1])
    return got


def _one_first(
    sub: Any, k: int, eps: Fraction, h: Fraction, up: _Measure, cut: int, tail_log: float
) -> tuple[Fraction, Fraction] | None:
    """The part with one large use in closed form on a lattice of the bulk alone (or None).

    ``up``: one use's deep upper measure on ``h`` (to the top of ``tail_log``), ``cut`` the
    split's index on it.  The bulk is cut lower, at ``cut_b`` (:func:`_low_cut`: the masses
    moved to the tail are small at every part's tilt; any cut gives certified bounds), and
    made on ``h / r`` only up to one of ``up``'s widest cells past ``cut_b``: every step of
    ``h / r`` to where its tilt at the query's slope has fallen :data:`SPLIT_DROP` (and
    :data:`ONE_MARGIN` steps of ``h``), ``up``'s points beyond (graded cells).  The tail's
    MGFs and the leak are ``up``'s, from one of its widest cells below ``cut_b``
    (:func:`~.gridonelarge.one_large_delta`): no lattice of the tail is made, and ``r`` is
    chosen for the bulk's ``k`` uses alone (``SPLIT_C0 k (lam h / r)^2`` at most
    :data:`ONE_GAP`, ``lam`` the larger of the part's tilt and the tail's slope at
    ``eps``), its fold weighed in blocks (docs/theory.md, section 15, "One large use in
    closed form").  Where the lattice to ``cut_b`` would exceed :data:`SPLIT_CELLS` at that
    ``r``, the cut is lowered to where it fits when the parts with two or more large uses
    stay negligible there (:func:`_others_small`), and the part with no large use is
    estimated again on the bulk's lattice, at its own tilt (:func:`_bulk_estimate`):
    choices only (section 15, "The bulk's own lattice").
    """
    hc, ef = float(h), float(eps)
    width = DEEP_MAX_STRIDE + 1  # the widest cell near the cut, in steps of h
    cut_b = _low_cut(up, cut, _estimates(_split(up, cut), k, ef, hc), hc, width)
    c_lo, c_hi, _, cut_hi = _loss_index_range(sub, h, tail_log)
    got = _one_guide(up, k, ef, hc, cut_b, width, _slope(sub, ef))
    if got is None:
        return None
    est, slope, ratio = got
    if (cut_b + 2 * width - c_lo) * ratio > SPLIT_CELLS:  # the bulk's lattice to the cut
        fits = SPLIT_CELLS // ratio + c_lo - 2 * width  # is too long: a lower cut that fits
        low = _one_guide(up, k, ef, hc, fits, width, _slope(sub, ef)) if fits > 2 * width else None
        if low is not None and _others_small(low[0]) and low[2] >= ratio // 2:
            cut_b, (est, slope, ratio) = fits, low
    by_j = {j: lam for _, j, lam in est}
    coarse = [p for p in _grid_points(sub, h, c_lo, c_hi, DEEP_MAX_STRIDE, False) if p >= c_lo]
    fine_c = min(_fine_end(up, hc, slope, max(cut_b - up.offset, 1)) + ONE_MARGIN, cut_b)
    stop = next((p for p in coarse if p > cut_b + width), None)
    start = next((p for p in coarse if p >= fine_c), None)
    if stop is None or start is None:
        return None
    while ratio > 1 and ((start - c_lo) * ratio > ONE_FINE or (stop - c_lo) * ratio > SPLIT_CELLS):
        ratio //= 2
    if SPLIT_C0 * k * (slope * hc / ratio) ** 2 > ONE_GAP * ONE_SLACK:
        return None  # the bulk's lattice would leave it too wide: the parts are folded
    hf = h / ratio
    block = 1
    while slope * 2 * block * hc / ratio <= ONE_BLOCK_LH:
        block *= 2
    if _window_blocks(_split(up, cut_b + width + 1)[0], k, by_j[1], hc, hc / ratio * block) > (
        ONE_POINTS
    ):
        return None  # the bulk's fold would have too many blocks to weigh: declined early
    lo, _, cut_lo, _ = _loss_index_range(sub, hf, tail_log)
    pts = list(range(lo, start * ratio)) + [p * ratio for p in coarse if start <= p <= stop]
    if len(pts) % 2 == 0:  # an even number of cells, as in _grid_points
        pts.append(pts[-1] + ratio)
    ms = _measures_on(
        sub, hf, pts, cut_lo, cut_hi, True, DEEP_SPAN * ratio, both=True, forward=True
    )
    lam1, hff = by_j[1], float(hf)
    head = (cut_b + width) * ratio
    k_up = _log_mgf(_split(ms["fwd_up"], head + 1)[0], hff, lam1)
    low, best = ms["fwd_lo"], math.inf
    for name in ("fwd_lo", "fwd_lo_plain"):  # the lower measure nearer the upper one
        m = ms[name]
        gap = k_up - _log_mgf(_split(m, head + 1)[0], hff, lam1) + lam1 * float(m.shift)
        if gap < best:
            low, best = m, gap
    est = _bulk_estimate(est, _split(ms["fwd_up"], head + 1)[0], k, ef, hff)
    return one_large_delta(
        sub, k, eps, hf, ms["fwd_up"], low, cut_b * ratio, width * ratio, est,
        coarse=(up, h, cut_b - width), block=block,
    )


def _one_guide(
    up: _Measure, k: int, ef: float, hc: float, cut_b: int, width: int, tail_slope: float
) -> tuple[list[tuple[float, int, float]], float, int] | None:
    """The parts' estimates for the bulk cut at ``cut_b``, the query's slope, the ratio wanted.

    The parts as :func:`_one_first` bounds them: the bulk to one widest cell past
    ``cut_b``, the tail from one below it (:func:`~.gridonelarge.one_large_delta`); the
    ratio ``r`` (a power of 2, at most :data:`ONE_RATIO`) with ``SPLIT_C0 k (lam h / r)^2``
    at most :data:`ONE_GAP`, ``lam`` the larger of the part's tilt and the tail's slope
    (``tail_slope``, :func:`_slope`; floats: choices only).  None without a part with one
    large use.
    """
    guide = (_split(up, cut_b + width + 1)[0], _split(up, cut_b - width)[1])
    est = _estimates(guide, k, ef, hc)
    by_j = {j: lam for _, j, lam in est}
    if 1 not in by_j:
        return None
    slope = max(by_j[1], tail_slope)
    ratio = 1
    while ratio < ONE_RATIO and SPLIT_C0 * k * (slope * hc / ratio) ** 2 > ONE_GAP:
        ratio *= 2
    return est, slope, ratio


def _others_small(est: list[tuple[float, int, float]]) -> bool:
    """The parts with two or more large uses far below the one with one (floats: a choice).

    The part with none is left out: the deep grid's estimate of it is far too large at a
    small rate, and :func:`_bulk_estimate` makes it on the bulk's own lattice.
    """
    by_j = {j: c for c, j, _ in est}
    return 1 in by_j and all(
        c <= by_j[1] + math.log(ONE_SHARE) - ONE_CUT_SLACK for j, c in by_j.items() if j >= 2
    )


def _bulk_estimate(
    est: list[tuple[float, int, float]], bulk: _Measure, k: int, ef: float, hf: float
) -> list[tuple[float, int, float]]:
    """``est`` with the part with no large use estimated on ``bulk``'s lattice ``hf``.

    On the deep grid a small rate's bulk sits in a cell or two whose upper ends lie above
    ``eps / k``: the part's Chernoff bound there can exceed the part with one large use by
    hundreds of decades, and the closed-form route declines.  On the bulk's own lattice
    its saddle point lies far up (the bulk's own tilt) and the bound falls below.  The
    smaller of the two is kept (floats: a choice; the bounds are :mod:`.gridonelarge`'s).
    """
    lam = float(f"{_saddle([(bulk, k)], hf, ef):.3g}")
    log_c = k * _log_mgf(bulk, hf, lam) - lam * ef
    return [
        (min(c, log_c), j, lam if log_c < c else lam_j) if j == 0 else (c, j, lam_j)
        for c, j, lam_j in est
    ]


def _window_blocks(bulk: _Measure, k: int, lam: float, hc: float, step: float) -> float:
    """About how many blocks of ``step`` the fold of ``k - 1`` bulk uses tilted at ``lam`` has.

    :data:`ONE_SPREADS` standard deviations of the tilted sum, its variance ``(k - 1)
    K''(lam)`` by a difference of the bulk's float log-MGF on ``hc`` (an estimate: a choice).
    """
    d = 1e-2 * lam
    ks = [_log_mgf(bulk, hc, lam + i * d) for i in (-1, 0, 1)]
    var = (ks[0] - 2 * ks[1] + ks[2]) / (d * d)
    if not math.isfinite(var):
        return math.inf
    return ONE_SPREADS * math.sqrt(max(k - 1, 1) * max(var, 0.0)) / step


def _low_cut(
    up: _Measure, cut: int, est: list[tuple[float, int, float]], hc: float, width: int
) -> int:
    """A grid index at most ``cut``: the masses from ``width`` below it to ``cut`` are small.

    At the tilt ``lam`` of the part with one large use (``est``), ``up``'s tilted log-mass
    ``log mu(l) + lam l`` on ``[cut_b - width, cut)`` is :data:`ONE_DROP` below the tilted
    tail's ``log M_t(lam)`` (the masses from ``cut``): moved from the bulk to the tail, they
    raise the Chernoff bound of a part with ``j`` large uses at that tilt by a factor of at
    most ``(1 + e^{-ONE_DROP})^j`` (the bulk's only falls; floats: a choice, any cut gives
    certified bounds).
    """
    np = _numpy()
    at = min(max(cut - up.offset, 1), up.masses.size)
    logs = up.logs[:at]
    losses = (up.offset + np.arange(at)) * hc
    tail = _split(up, cut)[1]
    first = None
    for _, j, lam in est:
        if j != 1:
            continue
        f = np.where(logs > -math.inf, logs + lam * losses, -math.inf)
        top = _log_mgf(tail, hc, lam)
        # the largest tilted log-mass from each index on, below the cut
        after = np.maximum.accumulate(f[::-1])[::-1]
        low = np.nonzero(after < top - ONE_DROP)[0]
        if not low.size:
            return cut
        first = int(low[0])
    return cut if first is None else min(up.offset + first + width, cut)


def _narrow(got: tuple[Fraction, Fraction], rel: float) -> bool:
    """``hi - lo <= rel lo``, exactly (a float times a rational below 1e-308 would be 0)."""
    lo, hi = got
    return hi - lo <= Fraction(rel) * lo


def _cell_end(up: _Measure, at: int, widest: int) -> int:
    """How far above the index ``at`` the upper measure's cell boundary ``theta`` may lie.

    Its masses sit on its cells' boundaries only, so the first index at or above ``at``
    with a mass is at or above the first boundary there; ``widest`` (the widest cell
    near the cut, in fine steps) when there is none (docs/theory.md, section 15, "One large
    use in closed form").  A tiny ``eps`` puts the cut within the fine cells, where the
    widest coarse cell reached beyond ``eps`` itself.
    """
    np = _numpy()
    i = at - up.offset
    if i < 0 or i >= up.masses.size:
        return widest
    rest = up.logs[i:] > -math.inf if up.logs is not None else up.masses[i:] > 0
    hit = np.nonzero(rest)[0]
    return min(int(hit[0]), widest) if hit.size else widest


def _route_points(route: tuple[_Measure, float, float] | None, k: int, grid: float) -> int:
    """The estimated window of the closed-form route's fold of ``k - 1`` bulk uses on ``grid``.

    ``route``: the bulk on its lattice and the route's tilt (:func:`.one_large_tilt`); its
    fold's entries are weighed one by one in Arb, at most :data:`.ONE_POINTS` of them.
    """
    if route is None:
        return 0
    bulk, hm, tilt = route
    return fold_length([(bulk, k - 1)], hm, tilt, grid)


def _fine_end(m: _Measure, hm: float, lam: float, stop: int) -> int:
    """The grid index where ``m`` tilted at ``lam`` has fallen :data:`SPLIT_DROP` below its peak.

    Among its first ``stop`` entries (the bulk); ``hm`` its width; floats, a choice only.
    """
    np = _numpy()
    idx = np.arange(stop)
    logs = m.logs[:stop]
    tilted = np.where(logs > -math.inf, logs + lam * (m.offset + idx) * hm, -math.inf)
    peak = int(np.argmax(tilted))
    far = np.nonzero(tilted[peak:] < tilted[peak] - SPLIT_DROP)[0]
    end = peak + (int(far[0]) if far.size else stop - peak)
    return m.offset + end


def _near_step(ratio: int, slope_h: float) -> int:
    """The tail's cells near eps, in fine steps: at most :data:`SPLIT_NEAR` over its slope."""
    step = 1
    while step < ratio and slope_h / ratio * step * 2 <= SPLIT_NEAR:
        step *= 2
    return step


def _points(fine_c: float, lo_c: int, near_to: int | None, ratio: int, slope_h: float) -> int:
    """The fine grid points of the split's lattice (bulk and tail near eps), about."""
    extra = 0
    if near_to is not None:
        extra = max(near_to - math.ceil(fine_c), 0) * ratio // _near_step(ratio, slope_h)
    return math.ceil((fine_c - lo_c) * ratio) + extra


def _tail_cells(
    up: _Measure, cut: int, est: list[tuple[float, int, float]], ratio: int, hc: float
) -> tuple[int, int, int] | None:
    """Fine cells ``(a, b, m)`` (indices of the fine lattice ``hc / ratio``) for the tail.

    Tilted at ``lam``, a tail cell of width ``w`` weighs its ends ``e^{lam w}`` apart, and
    each large use of a part loses about ``(lam w)^2 / 8`` of it (second order, both
    measures): at a small rate and a far ``eps`` (``lam`` in the thousands) the deep grid's
    tail cells (up to 4 steps of ``hc``) left a part 10 % wide.  So where one use's tilted
    log-mass at the tilt of a part that may be folded (its estimate within
    :data:`SPLIT_REST` of the largest) is within :data:`SPLIT_DROP` of its peak above the
    cut, the cells are ``m`` fine steps wide, ``m`` the largest power of 2 with
    ``lam m hc / ratio`` at most :data:`SPLIT_TAIL_LH` (at most ``ratio``), as long as
    there are at most :data:`SPLIT_FINE` of them (docs/theory.md, section 15, "Split by
    the number of large uses").  A choice: any cells give certified bounds.
    """
    np = _numpy()
    best = max(e[0] for e in est)
    lams = [lam for log_c, j, lam in est if j and log_c >= best + math.log(SPLIT_REST)]
    at = cut - up.offset
    if not lams or up.logs is None or at >= up.masses.size:
        return None
    losses = (up.offset + np.arange(at, up.masses.size)) * hc
    logs = up.logs[at:]
    a, b = None, None
    for lam in lams:
        tilted = np.where(logs > -math.inf, logs + lam * losses, -math.inf)
        keep = np.nonzero(tilted >= np.max(tilted) - SPLIT_DROP)[0]
        if keep.size:
            lo_i, hi_i = at + int(keep[0]) - 1, at + int(keep[-1]) + DEEP_MAX_STRIDE
            a = lo_i if a is None else min(a, lo_i)
            b = hi_i if b is None else max(b, hi_i)
    if a is None or b is None:
        return None
    m = ratio
    while m > 1 and max(lams) * m * hc / ratio > SPLIT_TAIL_LH:
        m //= 2
    while m < ratio and (b - a) * ratio // m > SPLIT_FINE:
        m *= 2
    return (up.offset + a) * ratio, (up.offset + b) * ratio, m
