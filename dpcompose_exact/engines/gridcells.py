"""One use of subsampled Gaussian or Laplace noise on a loss grid: the four lattice measures.

Poisson subsampling of rate ``q`` (add/remove) or sampling without replacement (replace-one,
``q = m/n``) of an additive-noise mechanism with noise ``N(0, sigma^2)`` or ``Lap(b)`` and
shift ``s`` (the sensitivity; ``2`` under replace-one, dp_accounting's convention) has the
dominating pair ``A = q P + (1 - q) Q``, ``B = Q`` with ``P`` the noise shifted by ``s`` and
``Q`` the noise (docs/theory.md, section 15).  Its privacy loss ``L(x) = ln(1 - q + q
e^{beta(x)})`` (``beta`` the loss of the base pair) is a non-decreasing function of the
output ``x``, so the cells ``(i h, (i + 1) h]`` of a loss grid are intervals of ``x`` whose
``A``- and ``B``-masses are differences of the noise's distribution function, evaluated in
Arb from their own side (``F`` and ``S = 1 - F``, so tail cells are relatively accurate;
:func:`cell_masses`).  Cells are graded (width ``h`` where the mass is, wider where one
use's mass beyond is small: any cells give certified bounds).

* **upper measures** (both directions at once): each cell's restricted pair is replaced by
  the two-point pair with likelihood ratios ``e^{ih}`` and ``e^{(i+1)h}`` and the same
  masses (connect-the-dots), which the cell's pair is a post-processing of; the tail beyond
  the grid by a pair of disjoint supports (its masses go to the leaks of both directions);
* **lower measures** (per direction): buckets of cells centred on grid points
  (:mod:`~dpcompose_exact.engines.gridbuckets`), a post-processing of the true pair.

The deep grid (``deep``, for tiny deltas) reaches tails of ``e^{DEEP_TAIL_LOG}`` with
cells of at most :data:`DEEP_MAX_STRIDE` steps.  The grid itself (its width and its points,
in floats) is placed by :mod:`~dpcompose_exact.engines.gridsteps`.  The argument is
docs/theory.md, section 15 ("Gaussian and Laplace noise: a certified loss grid").
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction
from typing import Any

import flint
from cachetools import LRUCache, cached

from ..errors import ResourceLimitError
from ..mechanisms.noise import AdditiveNoise, SubsampledNoise
from .gridbuckets import _certified_buckets, _lower_measure
from .gridfold import WINDOW_MASS
from .gridmeasure import _PREC, _U64, _arb, _frac, _log_end, _Measure, _numpy
from .gridsteps import (
    ALIGN_CELLS,
    ALIGN_FFT,
    ALIGN_SPAN,
    ALIGN_TRIES,
    ALIGN_WINDOW,
    AUTO_MAX_CELLS,
    DEEP_MAX_STRIDE,
    DEEP_SPAN,
    DEEP_TAIL_LOG,
    DEFAULT_GRID,
    FINE_MASS,
    FLOOR_CELLS,
    GRADE_MASS,
    GRADE_RATIO,
    LOW_GRADE_LOG,
    MAX_GRID_CELLS,
    MAX_GRID_POINTS,
    MAX_STRIDE,
    MIN_GRID,
    SPREAD_CELLS,
    TAIL_MASS,
    USES_COARSEN,
    USES_FFT,
    USES_MIN,
    _beta_float,
    _check_grid_size,
    _count,
    _grid_points,
    _loss_float,
    _loss_index_range,
    _monotone,
    _monotone_cut_lo,
    _monotone_range,
    _subsampled_tail,
    _tail_points,
    _upper_tail_index,
    align_grid,
    auto_grid,
    loss_spread,
    noise_x,
    uses_grid,
)

__all__ = ["DEFAULT_GRID", "auto_grid", "cell_masses", "noise_x", "uses_grid"]

#: the names kept importable from here since the split (their home: :mod:`.gridsteps`)
_REEXPORTED = (
    AdditiveNoise, WINDOW_MASS, FINE_MASS, LOW_GRADE_LOG, GRADE_MASS, GRADE_RATIO, SPREAD_CELLS,
    MIN_GRID, AUTO_MAX_CELLS, MAX_GRID_POINTS, MAX_GRID_CELLS, loss_spread, ALIGN_SPAN,
    ALIGN_TRIES, ALIGN_CELLS, ALIGN_FFT, ALIGN_WINDOW, align_grid, USES_FFT, USES_MIN,
    USES_COARSEN, _beta_float, _loss_float, _count, _tail_points, _upper_tail_index,
    _subsampled_tail, FLOOR_CELLS, _monotone_range,
)


#: the working precision of ``erfc`` at a grid point (:func:`_erfc_halves`): Arb's ``erfc``
#: costs about half as much at 96 bits as at 128 and keeps 43 bits beyond a double
ERFC_PREC = 96
#: grid points per call of :func:`_erfc_halves` (the precision is switched once per batch)
ERFC_BATCH = 256
#: ``2 / sqrt(pi)``, the largest slope of ``erfc``, rounded up
_ERFC_SLOPE = 1.1283791670955128


def _erfc_halves(vs: list[flint.arb]) -> list[tuple[flint.arb, flint.arb]]:
    """``(erfc(v)/2, erfc(-v)/2)`` of each ball ``v``, from one ``erfc`` at its exact midpoint.

    The smaller one (of ``|m|``, ``m`` the midpoint) is Arb's ``erfc(|m|) / 2`` at
    :data:`ERFC_PREC` bits (relatively accurate however small, as ``m`` is exact), the other
    one as 1 minus it.  For every ``x`` in the ball, ``|erfc(x) - erfc(m)| <= |x - m| (2 /
    sqrt(pi)) max e^{-y^2}`` over the ball (the mean value theorem; ``erfc' = -(2 / sqrt(pi))
    e^{-y^2}``), and ``e^{-v^2}`` evaluated on the ball bounds the max: the ball is widened
    by that (docs/theory.md, section 15, "One erfc per grid point").  The same enclosure
    as :func:`~dpcompose_exact.numbers.convert.erfc_halves` (two ``erfc`` at the ball's
    ends, at the working precision) at about a third of its cost; the precision is set once
    for the whole list.
    """
    mids = [v.mid() for v in vs]
    pos = [m > 0 for m in mids]
    with flint.ctx.workprec(ERFC_PREC):
        es = [(m if p else -m).erfc() for m, p in zip(mids, pos)]
    out = []
    for v, e, p in zip(vs, es, pos):
        r = v.rad()
        if r != 0:
            e += flint.arb(0, (r * (-(v * v)).exp() * _ERFC_SLOPE).upper())
        f = e / 2
        out.append((f, 1 - f) if p else (1 - f, f))
    return out


#: below this rate a grid loss's ``e^beta = (e^l - 1 + q) / q`` comes from ``expm1(l)``
#: (``e^l - (1 - q)`` cancels all but a tiny ``q`` at the working precision)
TINY_RATE = Fraction(1, 2**40)


def _cdf_table(
    sub: SubsampledNoise, h: Fraction, pts: list[int]
) -> tuple[list, list, list, list, list]:
    """``(FA, FB, SA, SB, tails)`` at the grid losses ``i h``, ``i`` in ``pts``, Arb balls.

    ``FA(l) = A(L <= l)``, ``FB(l) = B(L <= l)``, ``SA = 1 - FA`` and ``SB = 1 - FB`` (each
    side computed from its own tail, so that both are relatively accurate where they are
    small); ``tails``: the A- and B-masses below the first and above the last grid point
    when those ends cut a tail (else 0).
    """
    if _monotone(sub):
        return _monotone_cdf_table(sub, h, pts)
    noise, q = sub.noise, sub.q
    br = noise.beta_range()
    zero, one = flint.arb(0), flint.arb(1)
    n = len(pts)
    fa: list = [zero] * n
    fb: list = [zero] * n
    sa: list = [one] * n
    sb: list = [one] * n
    tails = [zero] * 4  # A below, B below, A above, B above
    qa, one_q = _arb(q), 1 - _arb(q)
    inv_q = 1 / qa
    hb = _arb(h)
    eh = hb.exp()
    sc, sh = _arb(noise.scale), _arb(noise.shift)
    rs = []
    r = (hb * pts[0]).exp()
    for j, i in enumerate(pts):  # e^{i h}: by products along unit steps
        if j:
            r = r * eh if i == pts[j - 1] + 1 else (hb * i).exp()
        rs.append(r)
    if br is None:  # Gaussian: 2 Phi(x / sigma) = erfc(u), u = -x / (sigma sqrt 2)
        m = -1 / (sc * flint.arb(2).sqrt())
        c1 = sc * sc / sh * m  # u = c1 beta + c0
        c0 = sh / 2 * m
        cs = -sh * m  # u_P = u + cs
        positive = [False, False]  # t > 0 at the first and at the last point
        for b0 in range(0, n, ERFC_BATCH):  # a batch at a time (few balls alive at once)
            at, us = [], []  # the points with t > 0 and their u
            for j in range(b0, min(n, b0 + ERFC_BATCH)):
                t = (rs[j] - one_q) * inv_q
                if t > 0:
                    at.append(j)
                    us.append(t.log() * c1 + c0)
                elif not t <= 0:
                    raise ResourceLimitError(f"undecided grid point {pts[j]} h of {sub!r}")
            halves = _erfc_halves(us + [u + cs for u in us])
            for j, (fq, sq), (fp, sp) in zip(at, halves, halves[len(us) :]):
                fa[j], fb[j] = qa * fp + one_q * fq, fq
                sa[j], sb[j] = qa * sp + one_q * sq, sq
                positive[0] = positive[0] or j == 0
                positive[1] = positive[1] or j == n - 1
            del at, us, halves
        if positive[0] and q == 1:
            tails[0], tails[1] = fa[0], fb[0]
        if positive[1]:
            tails[2], tails[3] = sa[n - 1], sb[n - 1]
        return fa, fb, sa, sb, tails
    # Laplace: the loss lies in [lmin, lmax], atoms at both ends
    # L(beta) = log1p(q expm1(beta)): relatively accurate at any rate (1 - q + q e^beta
    # loses a tiny q to the ball's radius, and the ends could not be told from the grid)
    lmin = (qa * _arb(br[0]).expm1()).log1p()
    lmax = (qa * _arb(br[1]).expm1()).log1p()
    tiny = q < TINY_RATE
    for j, i in enumerate(pts):
        li = hb * i
        if q == 1:  # L = beta: rational ends, compared exactly
            below, above = h * i < br[0], h * i >= br[1]
        else:
            below, above = li < lmin, li >= lmax
            if (not below and not li >= lmin) or (not above and not li < lmax):
                raise ResourceLimitError(f"undecided grid point {i} h of {sub!r}")
        if below:
            fa[j], fb[j] = zero, zero
        elif above:
            fa[j], fb[j] = one, one
        else:
            # e^beta = (e^l - 1 + q) / q; at a tiny rate from expm1 (no cancellation)
            t = (li.expm1() * inv_q + 1) if tiny else (rs[j] - one_q) * inv_q
            x = noise.x_of_beta(t.log())  # 0 <= x < s
            fq = 1 - (-x / sc).exp() / 2
            fp = ((x - sh) / sc).exp() / 2
            fa[j], fb[j] = qa * fp + one_q * fq, fq
        sa[j], sb[j] = 1 - fa[j], 1 - fb[j]
    return fa, fb, sa, sb, tails


def _monotone_cdf_table(
    sub: Any, h: Fraction, pts: list[int]
) -> tuple[list, list, list, list, list]:
    """:func:`_cdf_table` of a pair item (:func:`_monotone`), every value an Arb ball.

    At each grid loss ``l = i h`` the item gives a ball holding the output ``x`` with
    ``L(x) = l`` (None: ``l`` is at or below the loss's floor, no output has it), and the
    four distribution functions there.
    """
    zero, one = flint.arb(0), flint.arb(1)
    n = len(pts)
    fa: list = [zero] * n
    fb: list = [zero] * n
    sa: list = [one] * n
    sb: list = [one] * n
    tails = [zero] * 4
    cut_lo = _monotone_cut_lo(sub, h, pts[0])
    hb = _arb(h)
    eh = hb.exp()
    r = (hb * pts[0]).exp()
    for j, i in enumerate(pts):
        if j:
            r = r * eh if i == pts[j - 1] + 1 else (hb * i).exp()
        x = sub.x_of_ratio(r)
        if x is None:
            continue
        fa[j], fb[j], sa[j], sb[j] = sub.cdf_pairs(x)
        if j == 0 and cut_lo:
            tails[0], tails[1] = fa[0], fb[0]
        if j == n - 1:
            tails[2], tails[3] = sa[j], sb[j]
    return fa, fb, sa, sb, tails


def _cells(fa: list, fb: list, sa: list, sb: list) -> list[tuple[Any, Any]]:
    """The cells' ``(A, B)``-masses: differences of ``F`` or of ``S``, the narrower ball."""
    out = []
    for j in range(len(fa) - 1):
        a1, a2 = fa[j + 1] - fa[j], sa[j] - sa[j + 1]
        b1, b2 = fb[j + 1] - fb[j], sb[j] - sb[j + 1]
        out.append((a1 if a1.rad() <= a2.rad() else a2, b1 if b1.rad() <= b2.rad() else b2))
    return out


def cell_masses(
    sub: SubsampledNoise, h: Fraction = DEFAULT_GRID, deep: bool = False,
    tail_log: float | None = None, forward: bool = False,
) -> dict[str, Any]:
    """The four lattice measures of one use (upper/lower, forward/reverse), section 15.

    Cached (the most recent, up to :data:`GRID_CACHE_BYTES` of arrays): a ledger that asks again
    after more uses only pays for the composition. ``deep``: the Gaussian tails reach
    ``e^tail_log`` (None: :data:`DEEP_TAIL_LOG`) with cells of at most :data:`DEEP_MAX_STRIDE`
    steps (for tiny deltas, :class:`_Tilted`); the deep measures of subsampled Gaussian noise
    carry their masses' logs (``logs``: they reach far below the doubles' range), the forward
    upper one a bound of its leak's tilted mass (``tail``, :func:`_gauss_tail`), and the reverse
    upper one has no leak (its tail sits at the grid's lowest reverse loss).

    ``forward``: the forward measures only (``fwd_up``, ``fwd_lo``; the same as the four's),
    for a caller that reads no other (the tilted forward folds of a deep grid cut where the
    answer needs it): the reverse lattices are not kept, nor the reverse lower measure
    made (peak memory), unless the four of these arguments are cached already.

    Returns:
        ``{"fwd_up", "rev_up", "fwd_lo", "rev_lo"}``: :class:`_Measure` objects (the reverse
        ones indexed by the reverse loss ``-l``); the lower ones carry the shift ``tau``.
        An item that builds its own measures (``grid_measures(h, deep)``: the epoch of a
        random allocation, :mod:`dpcompose_exact.engines.allocation`) is asked for them.
    """
    own = getattr(sub, "grid_measures", None)
    if own is not None:
        return own(Fraction(h), deep)
    if not deep or tail_log is None or not log_tails(sub):
        tail_log = DEEP_TAIL_LOG
    args = (sub, Fraction(h), deep, float(tail_log))
    if forward:
        with _cell_masses.cache_lock:
            four = _cell_masses.cache.get(_cell_masses.cache_key(*args))
        if four is None:
            return _forward_masses(*args)
        return {d: four[d] for d in ("fwd_up", "fwd_lo")}
    return _cell_masses(*args)


def log_tails(sub: Any) -> bool:
    """Whether the deep measures of ``sub`` carry logs and a tilted tail bound.

    Subsampled Gaussian noise at a rate below 1 (its loss is bounded below by
    ``ln(1 - q)``, so only the upper tail is cut); other items keep the untilted leak.
    """
    if _monotone(sub) or getattr(sub, "noise", None) is None:
        return False
    return sub.noise.kind == "gaussian" and sub.q < 1


def _gauss_tail(sub: SubsampledNoise, top: Fraction) -> Any:
    """``lam -> `` an Arb upper bound of ``E_A[e^{lam L}; L > top]`` (Gaussian, ``lam >= 0``).

    With ``b = beta(top)`` (``e^top = 1 - q + q e^b``), ``L - beta = ln(q + (1-q) e^{-beta})``
    is non-increasing, so ``L <= beta + top - b`` where ``beta >= b``; ``beta`` is affine in
    the output, ``beta = (2 s x - s^2)/(2 sigma^2)``, and for ``x ~ N(mu, sigma^2)``
    ``E[e^{lam beta}; x > x_b] = e^{lam (s mu - s^2/2)/sigma^2 + lam^2 s^2/(2 sigma^2)}
    S((x_b - mu - lam s)/sigma)`` (``S`` the normal tail), summed over ``A = q N(s) +
    (1-q) N(0)`` (docs/theory.md, section 15, "A relative tail bound").
    """
    noise, q = sub.noise, sub.q

    def bound(lam: float) -> flint.arb:
        with flint.ctx.workprec(_PREC):
            lb = _arb(Fraction(lam))
            qa, sc, sh = _arb(q), _arb(noise.scale), _arb(noise.shift)
            t = _arb(top)
            b = ((t.exp() - 1 + qa) / qa).log()
            v2 = sc * sc
            xb = b * v2 / sh + sh / 2
            out = flint.arb(0)
            for mu, w in ((sh, qa), (flint.arb(0), 1 - qa)):
                z = (xb - mu - lb * sh) / (sc * flint.arb(2).sqrt())
                g = (lb * (sh * mu - sh * sh / 2) / v2 + lb * lb * sh * sh / (2 * v2)).exp()
                out += w * g * z.erfc() / 2
            out *= (lb * (t - b)).exp()
            return flint.arb(out.upper())

    return bound


#: grid points per chunk of the distribution-function table (:func:`_cells_and_upper`)
CDF_CHUNK = 4096


def _cells_and_upper(
    sub: SubsampledNoise, h: Fraction, pts: list[int], logs: bool, tail_to_top: bool
) -> tuple[list, list, tuple[list[int], list[int]], Any, Any, dict[str, Any]]:
    """The cells' balls and the upper measures of one use, the table made by chunks.

    ``(cells, tails, atoms, fwd_up, rev_up, logs_up)``: the cells' ``(A, B)``-masses
    (:func:`_cells`), the tails of :func:`_cdf_table`, the indices where ``F_A`` is
    exactly 0 and exactly 1 (Laplace's atoms, :func:`~.gridbuckets._lower_buckets`), and
    the connect-the-dots upper measures (both directions, section 15) as doubles rounded
    up, with the logs of their masses (rounded up) when ``logs``.  The table of
    :func:`_cdf_table` is made :data:`CDF_CHUNK` points at a time (consecutive chunks share
    a point, each ratio ``e^{ih}`` is a ball of its own chunk) and dropped once its cells
    and upper masses are taken; a grid point's upper mass (from the cell below it and the
    cell above it, summed in Arb as before) is rounded when both are in: only the cells'
    balls are kept (peak memory of the deep grid).  ``tail_to_top``: the reverse
    direction's tail (B-mass above the top) is raised to the grid's top point (no leak).
    """
    np = _numpy()
    lo, n, last = pts[0], pts[-1] - pts[0], len(pts) - 1
    fwd_up, rev_up = np.zeros(n + 1), np.zeros(n + 1)
    logs_up: dict[str, Any] = {"fwd": None, "rev": None}
    if logs:
        logs_up = {d: np.full(n + 1, -math.inf) for d in ("fwd", "rev")}
    cells: list = []
    tails = [flint.arb(0)] * 4
    zeros: list[int] = []
    ones: list[int] = []
    pend: dict[int, list] = {}  # a grid point's upper (A, B) masses while cells come in

    def put(i: int) -> None:  # the point's masses are all in: round them
        x_a, x_b = pend.pop(i)
        for x, arr, d in ((x_a, fwd_up, "fwd"), (x_b, rev_up, "rev")):
            if x is None:
                continue
            v = float(x.upper())  # _up, inline: a double >= the ball, and >= 0
            arr[i - lo] = max(math.nextafter(v, math.inf), 0.0) if math.isfinite(v) else math.inf
            if logs:
                logs_up[d][i - lo] = _log_end(x, True)

    def add(i: int, x_a: Any, x_b: Any) -> None:
        slot = pend.setdefault(i, [None, None])
        for k, x in ((0, x_a), (1, x_b)):
            if x is not None:
                slot[k] = (0 if slot[k] is None else slot[k]) + x

    hb = _arb(h)
    eh = hb.exp()
    for s in range(0, max(last, 1), CDF_CHUNK):
        part = pts[s : s + CDF_CHUNK + 1]
        fa, fb, sa, sb, t = _cdf_table(sub, h, part)
        if s == 0:
            tails[0], tails[1] = t[0], t[1]
        if s + len(part) - 1 >= last:
            tails[2], tails[3] = t[2], t[3]
        for j, x in enumerate(fa):
            if (j or not s) and x.is_exact():
                if x == 0:
                    zeros.append(s + j)
                elif x == 1:
                    ones.append(s + j)
        chunk = _cells(fa, fb, sa, sb)
        del fa, fb, sa, sb
        rs = [(hb * part[0]).exp()]
        for j in range(1, len(part)):
            rs.append(rs[-1] * eh if part[j] == part[j - 1] + 1 else (hb * part[j]).exp())
        for j, (a, b) in enumerate(chunk):
            i0, i1 = part[j], part[j + 1]
            if not (a == 0 and b == 0):
                r_lo, r_hi = rs[j], rs[j + 1]
                # connect the dots: the B-mass at ratio r_hi; its exact value lies in
                # [0, b], so upper ends only
                beta_hi = (a - r_lo * b) / (r_hi - r_lo)
                b_top = b.upper()
                hi_end = beta_hi.upper() if beta_hi.upper() < b_top else b_top
                lo_end = beta_hi.lower() if beta_hi.lower() > 0 else flint.arb(0)
                rest = b_top - lo_end  # >= the B-mass at ratio r_lo
                add(i0, r_lo * rest, rest)
                add(i1, r_hi * hi_end, hi_end)
            if i0 in pend:
                put(i0)
        cells.extend(chunk)
        del chunk, rs
    hi = pts[-1]
    if tail_to_top:  # the reverse direction's tail (B-mass above the top, reverse losses
        # below -top) raised to the lowest reverse loss of the grid: no leak
        add(hi, None, tails[3])
        tails[3] = flint.arb(0)
    for i in list(pend):
        put(i)
    return cells, tails, (zeros, ones), fwd_up, rev_up, logs_up


#: bytes of lattice measures the caches keep (the masses and logs of the measures of
#: :func:`cell_masses`; of :func:`mixed_masses`): the least recently used go first, before
#: a new one is kept, and one larger than the whole is not kept (peak memory: a tiny delta
#: makes deep grids of several widths and tops, each up to millions of points; the split's
#: fine lattice, made once for a query, is seldom asked again: a smaller budget); a lock
#: guards each cache, as ``functools.lru_cache`` did (the measures are made outside it)
GRID_CACHE_BYTES = 64 << 20
MIXED_CACHE_BYTES = 32 << 20


def measures_bytes(measures: dict[str, Any]) -> int:
    """The bytes of the arrays of a dict of lattice measures (masses and logs)."""
    total = 0
    for m in measures.values():
        total += m.masses.nbytes + (m.logs.nbytes if m.logs is not None else 0)
    return total


#: the cache of :func:`_cell_masses` and :func:`_forward_masses` (one budget for both)
_GRID_CACHE: LRUCache = LRUCache(GRID_CACHE_BYTES, getsizeof=measures_bytes)
_GRID_LOCK = threading.Lock()


@cached(_GRID_CACHE, lock=_GRID_LOCK, info=True)
def _cell_masses(
    sub: SubsampledNoise, h: Fraction, deep: bool = False, tail_log: float = DEEP_TAIL_LOG
) -> dict[str, Any]:
    return _grid_measures(sub, h, deep, tail_log, False)


@cached(_GRID_CACHE, key=lambda *a: ("forward", *a), lock=_GRID_LOCK, info=True)
def _forward_masses(
    sub: SubsampledNoise, h: Fraction, deep: bool = False, tail_log: float = DEEP_TAIL_LOG
) -> dict[str, Any]:
    """The forward measures of :func:`_cell_masses` alone (:func:`cell_masses`, ``forward``)."""
    return _grid_measures(sub, h, deep, tail_log, True)


def _grid_measures(
    sub: SubsampledNoise, h: Fraction, deep: bool, tail_log: float, forward: bool
) -> dict[str, Any]:
    """The measures of one use on its grid (the default or the deep one), all or forward."""
    lo, hi, cut_lo, cut_hi = _loss_index_range(
        sub, h, tail_log if deep else math.log(TAIL_MASS)
    )
    pts = _grid_points(sub, h, lo, hi, DEEP_MAX_STRIDE if deep else MAX_STRIDE, not deep)
    return _measures_on(sub, h, pts, cut_lo, cut_hi, deep, forward=forward)


@cached(LRUCache(MIXED_CACHE_BYTES, getsizeof=measures_bytes), lock=threading.Lock(), info=True)
def mixed_masses(
    sub: SubsampledNoise, h: Fraction, ratio: int, fine_to: int,
    tail_log: float = DEEP_TAIL_LOG, tail: tuple[int, int, int] | None = None,
) -> dict[str, Any]:
    """The deep measures of one use on the lattice ``h``: cells of ``h`` up to ``fine_to h``.

    Beyond the index ``fine_to`` the cells are those of the deep grid of ``ratio h`` (tails
    to ``e^tail_log``; its points, at most :data:`DEEP_MAX_STRIDE` of its steps apart, times
    ``ratio``): graded cells, which every argument of the grid allows (docs/theory.md,
    section 15, "Graded cells").  So a small rate's bulk, whose losses spread over a few
    steps of the deep grid, is resolved where its mass is, without a fine grid up to the
    deep grid's top (:mod:`~dpcompose_exact.engines.gridsplit`).  Both forward lower
    measures are made: ``fwd_lo`` (the deep buckets' rule over ``DEEP_SPAN * ratio`` steps)
    and ``fwd_lo_plain`` (the plain upward sweep); the forward direction only (the split
    asks for no other: the reverse measures were four more arrays of the fine lattice's
    length).  Subsampled Gaussian noise at a rate below 1 only (:func:`log_tails`).
    ``tail = (a, b, m)``: the cells between the indices ``a`` and ``b`` are ``m`` steps of
    ``h`` wide instead (where a part's tilted tail mass lies,
    :func:`~.gridsplit.split_delta`; graded cells again).
    """
    coarse = h * ratio
    lo, _, cut_lo, _ = _loss_index_range(sub, h, tail_log)
    c_lo, c_hi, _, cut_hi = _loss_index_range(sub, coarse, tail_log)
    far = _grid_points(sub, coarse, c_lo, c_hi, DEEP_MAX_STRIDE, False)
    start = -(-fine_to // ratio)  # the first coarse point at or above fine_to
    far = [p * ratio for p in far if p >= start]
    pts = list(range(lo, far[0])) + far if far and far[0] > lo else far
    if tail is not None:
        a, b, m = max(tail[0], pts[0]), min(tail[1], pts[-1]), max(tail[2], 1)
        if b - a > m:
            pts = sorted({p for p in pts if p < a or p > b} | set(range(a, b + 1, m)))
    if len(pts) % 2 == 0:  # an even number of cells, as in _grid_points
        pts.append(pts[-1] + ratio)
    return _measures_on(
        sub, h, pts, cut_lo, cut_hi, True, DEEP_SPAN * ratio, both=True, forward=True
    )


def _measures_on(
    sub: SubsampledNoise, h: Fraction, pts: list[int], cut_lo: bool, cut_hi: bool, deep: bool,
    span: int | None = DEEP_SPAN, both: bool = False, forward: bool = False,
) -> dict[str, Any]:
    """The four lattice measures of one use from its cells between the grid points ``pts``.

    ``span``: the deep buckets' rule (:func:`~.gridbuckets._sweep`); ``both``: also the
    forward lower measure of the plain upward sweep (``fwd_lo_plain``: every bucket lands on
    its grid point, however wide; the better of the two depends on the query);
    ``forward``: the forward measures only (the reverse ones are dropped as soon as they
    are made, and the reverse lower measure is not made).
    """
    lo, hi = pts[0], pts[-1]
    n = hi - lo
    _check_grid_size(sub, h, lo, hi, len(pts))
    logs = deep and log_tails(sub)
    with flint.ctx.workprec(_PREC):
        cells, tails, atoms, fwd_up, rev_up, logs_up = _cells_and_upper(
            sub, h, pts, logs, logs and cut_hi
        )
        if forward:  # not kept: not alive next to the buckets
            rev_up, logs_up["rev"] = None, None
        # lower: buckets of cells (a post-processing), each with a loss near a grid point
        buckets = _certified_buckets(  # the same for both directions
            sub, h, pts, atoms, cells, span if logs else None, logs
        )
        plain_buckets = None
        if logs and both:  # the forward lower measure of the plain upward sweep as well
            plain_buckets = _certified_buckets(sub, h, pts, atoms, cells, None, logs)
        # the cells' balls are read by the sweeps only: freed before the lattices of the
        # lower measures are made (peak memory: a deep grid has up to millions of balls)
        del cells
        low_f = _lower_measure(buckets, h, True, lo, n, logs)
        low_r = None if forward else _lower_measure(buckets, h, False, lo, n, logs)
        del buckets
        fwd_lo = low_f[0]
        fwd_lo *= 1 - 4 * _U64  # a few doubles may share a point: their sums (in place)
        tau_f = low_f[1]
        plain = None
        if plain_buckets is not None:
            low_p = _lower_measure(plain_buckets, h, True, lo, n, logs)
            del plain_buckets
            plain_lo = low_p[0]
            plain_lo *= 1 - 4 * _U64
            plain = _Measure(plain_lo, lo, Fraction(0), Fraction(low_p[1]), logs=low_p[2])
        leak_a = _frac((tails[0] + tails[2]).upper()) if cut_hi or cut_lo else Fraction(0)
        leak_b = _frac((tails[1] + tails[3]).upper()) if cut_hi or cut_lo else Fraction(0)
    tail = _gauss_tail(sub, hi * h) if logs and cut_hi else None
    out = {"fwd_up": _Measure(fwd_up, lo, leak_a, logs=logs_up["fwd"], tail=tail)}
    if low_r is not None:
        rev_logs = logs_up["rev"]
        out["rev_up"] = _Measure(
            rev_up[::-1].copy(), -hi, leak_b,
            logs=None if rev_logs is None else rev_logs[::-1].copy(),
        )
    out["fwd_lo"] = _Measure(
        fwd_lo, lo, Fraction(0), Fraction(tau_f), logs=low_f[2] if logs else None
    )
    if low_r is not None:
        out["rev_lo"] = _Measure(
            low_r[0][::-1] * (1 - 4 * _U64), -hi, Fraction(0), Fraction(low_r[1]),
            logs=low_r[2][::-1].copy() if logs else None,
        )
    return {
        **out,
        **({"fwd_lo_plain": plain} if plain is not None else {}),
    }
