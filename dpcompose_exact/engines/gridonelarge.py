"""The part with one large use of a split ``delta(eps)``, through that use's closed-form tail.

Far in the tail a subsampled Gaussian's ``delta(eps)`` is carried by outcomes with one
large use (:mod:`~dpcompose_exact.engines.gridsplit`).  One use's loss ``L`` is a
non-decreasing function of its output, so for a real ``theta >= 0`` and a loss ``c`` of the
other uses, ``G_theta(c) = E_A[(1 - e^{eps - c - L})_+; L > theta] = q S(x_t - s) - (e^{eps -
c} - 1 + q) S(x_t)`` with ``t = max(eps - c, theta)`` and ``x_t`` the output where the loss is
``t`` (``S`` the noise's normal tail): erfc in Arb, relatively accurate at any depth.  The
part with one large use is then ``k`` times a sum over the other ``k - 1`` uses' composed
lattice masses of ``G`` at their losses (a tilted fold of the bulk alone, whose error is
relative), bounded above through the upper lattice bulk and below through the lower one
(``G`` is non-decreasing in ``c``); the other parts are bounded by Chernoff bounds, added
to the upper end and, weighted by ``j - 1``, taken off the lower one.  The argument,
including the cut's cells and the dropped masses, is docs/theory.md, section 15 ("One large
use in closed form").
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import flint

from .gridfold import _Fold
from .gridmeasure import (
    _PREC,
    _U64,
    _arb,
    _composed_leak,
    _float_down,
    _float_up,
    _frac,
    _log_mgf,
    _Measure,
    _numpy,
)
from .gridtilt import _golden, _tilt, tilted_leak

__all__ = ["one_large_delta", "one_large_tilt"]

#: the route applies when the other parts' Chernoff bounds (floats) are at most this share
#: of the part with one large use's
ONE_SHARE = 1e-6
#: at most this many blocks of the bulk's fold are weighed in Arb (else the route declines)
ONE_POINTS = 1 << 16
#: ... and at most this many entries in all (memory)
ONE_WINDOW = 1 << 22
#: a block of the fold's entries is weighed by ``V e^{i l}`` when ``|l|`` times its length is
#: at most this (else entry by entry: :func:`_weights`)
ONE_BLOCK_EXP = 50.0
#: the pieces of the bulk's range outside the fold's window grow by this share each
#: (:func:`_outside`)
ONE_GROWTH = 0.05
#: the parts with more large uses evaluated one by one, the rest by one bound
ONE_PARTS = 12
#: the points of the bulk's range of losses where the sum's tilt is chosen (:func:`_sum_tilt`)
ONE_TILT_POINTS = 4096
#: ... and it replaces the part's own tilt when its bound of the sum is smaller by at least
#: this (log); it is tried when the part's own tilt leaves the route relatively wider than
#: ONE_NARROW (its fold's window can be far longer): below the widths at which the split
#: takes the route alone (1e-4 and 5e-4), since at a tilt below the sum's the weights grow
#: across the window and the fold's error, weighed by them, can alone leave 1e-3
#: (bench_widths seed 7, q 5.11e-6 eps 0.0241 sigma 8.16 k 4: 1.4e-3 at the part's tilt,
#: 6e-5 at the sum's)
ONE_TILT_GAIN = 20.0
ONE_NARROW = 1e-5


def one_large_delta(
    sub: Any, k: int, eps: Fraction, hf: Fraction, up: _Measure, lo: _Measure, cut: int,
    width: int, est: list[tuple[float, int, float]],
    coarse: tuple[_Measure, Fraction, int] | None = None, block: int = 1,
) -> tuple[Fraction, Fraction] | None:
    """``(lower, upper)`` of the forward ``delta(eps)`` of ``k`` uses, by the one-large-use part.

    ``up``, ``lo``: one use's forward upper and lower lattice measures on ``hf``; ``cut``:
    the split's grid index; ``width``: an upper bound of the upper measure's cells (in
    steps of ``hf``) near the cut; ``est``: the parts' estimates ``(log C_j, j, lam_j)``
    (:func:`~.gridparts._estimates`).  ``coarse = (m, h, first)``: the tail's MGFs and the
    leak from ``m``, one use's upper measure on the coarser lattice ``h`` (to its own top),
    at its indices from ``first`` (at least one of its widest cells below the cut: every
    cell with mass above the split lies there); then ``up`` and ``lo`` need to reach only
    past ``cut + width`` (the bulk).  ``block``: the bulk's fold is weighed in blocks of
    that many entries (:func:`_sum_part`).  None when the other parts are not negligible
    or a measure cannot be bounded (the caller folds the parts instead).
    """
    if k < 2 or not sub.q < 1 or up.leak and up.tail is None:
        return None
    lam = _applies(est)
    if lam is None:
        return None
    bulk_up = _head(up, cut + width)
    bulk_lo = _head(lo, cut + width)
    if coarse is None:
        tail_in, full, h_tail = _tail(up, cut), up, hf  # the cells above a cut at cut h on
    else:
        tail_in, full, h_tail = _tail(coarse[0], coarse[2]), coarse[0], coarse[1]
    if up.offset + up.masses.size <= cut + width:
        return None  # the bulk's lattice stops short of the split: not every cell below it
    with flint.ctx.workprec(_PREC):
        rest = _rest(k, eps, bulk_up, tail_in, full, est, hf, h_tail)
        if rest is None:
            return None
        theta_up, theta_lo = cut * hf, (cut + width) * hf
        # the part's own tilt first; where that leaves the sums wide, the sum's own saddle
        # point (:func:`_sum_tilt`, both sums at the upper one's), intersected
        best: tuple[flint.arb, flint.arb] | None = None
        tilts = [lam, _sum_tilt(sub, k - 1, float(eps), bulk_up, float(hf), float(theta_up), lam)]
        for tilt in tilts if tilts[1] != lam else tilts[:1]:
            got = []
            for bulk, upper, theta in ((bulk_up, True, theta_up), (bulk_lo, False, theta_lo)):
                s = _sum_part(sub, k - 1, eps, hf, bulk, tilt, upper, theta, block)
                if s is None:
                    break
                got.append(k * s)
            if len(got) < 2:
                continue
            up_end = flint.arb((got[0] + rest[0]).upper())
            lo_end = (got[1] - rest[1]).lower()
            lo_end = flint.arb(lo_end) if lo_end > 0 else flint.arb(0)
            if best is not None:
                up_end = up_end if up_end.upper() < best[1].upper() else best[1]
                lo_end = lo_end if lo_end.lower() > best[0].lower() else best[0]
            best = (lo_end, up_end)
            if lo_end > 0 and up_end - lo_end <= ONE_NARROW * lo_end:
                break
        if best is None:
            return None
        low = best[0].lower()
        return (_frac(low) if low > 0 else Fraction(0)), _frac(best[1].upper())


def _applies(est: list[tuple[float, int, float]]) -> float | None:
    """The tilt of the part with one large use when the route applies to ``est``, else None.

    It applies when the other parts' estimates are at most :data:`ONE_SHARE` of its own.
    """
    by_j = {j: (log_c, lam) for log_c, j, lam in est}
    if 1 not in by_j:
        return None
    log1, lam = by_j[1]
    if any(v > log1 + math.log(ONE_SHARE) for v, j, _ in est if j != 1):
        return None
    return lam


def one_large_tilt(
    sub: Any, k: int, ef: float, bulk: _Measure, hf: float, theta: float,
    est: list[tuple[float, int, float]],
) -> float | None:
    """The tilt of the route's fold of the bulk's ``k - 1`` uses (:func:`_sum_tilt`), or None.

    None when the route does not apply to the estimates ``est``; ``bulk``: one use's upper
    bulk on the lattice ``hf``, ``theta`` the cut's loss.  The split refines the bulk's
    lattice for this tilt (a choice only).
    """
    lam = _applies(est)
    if lam is None or k < 2:
        return None
    return _sum_tilt(sub, k - 1, ef, bulk, hf, theta, lam)


def _head(m: _Measure, last: int) -> _Measure:
    """``m``'s masses at grid indices up to ``last`` (no leak; views of its arrays)."""
    np = _numpy()
    at = min(max(last - m.offset + 1, 1), m.masses.size)
    logs = None if m.logs is None else m.logs[:at]
    out = _Measure(m.masses[:at], m.offset, Fraction(0), m.shift, logs=logs)
    if not np.any(out.masses) and (logs is None or not np.any(logs > -math.inf)):
        out = _Measure(np.zeros(1), m.offset, Fraction(0), m.shift,
                       logs=None if logs is None else np.full(1, -math.inf))
    return out


def _tail(m: _Measure, first: int) -> _Measure:
    """``m``'s masses at grid indices ``first`` and above (its leak apart: see the callers)."""
    at = min(max(first - m.offset, 0), m.masses.size - 1)
    logs = None if m.logs is None else m.logs[at:]
    return _Measure(m.masses[at:], m.offset + at, Fraction(0), m.shift, logs=logs)


def _mgf_ball(part: _Measure, lam: float, hf: float) -> flint.arb:
    """An upper bound (a ball) of the lattice measure ``part``'s MGF at ``lam`` (no leak)."""
    v = _log_mgf(part, hf, lam)
    out = flint.arb(0) if v == -math.inf else _arb(Fraction(v)).exp()
    return flint.arb(out.upper())


def _rest(
    k: int, eps: Fraction, bulk: _Measure, tail: _Measure, full: _Measure,
    est: list[tuple[float, int, float]], h: Fraction, h_tail: Fraction | None = None,
) -> tuple[flint.arb, flint.arb] | None:
    """Chernoff bounds of the other parts: ``(sum_{j != 1} P_j, sum_{j >= 2} (j - 1) P_j)``.

    The first is added to the upper end, the second taken off the lower one (balls; the
    part with no large use only bounds the upper end).  ``P_j <= C(k, j) M_b^{k - j} M_t^j
    e^{-lam eps}`` at each part's own tilt; the parts beyond :data:`ONE_PARTS` (or the
    estimates) together by ``k M_t C(k - 1, J) M_t^J (M_b + M_t)^{k - 1 - J} e^{-lam eps}``
    (``J`` of the other uses chosen large, the rest anything), which bounds both sums.
    ``h``: the bulk's lattice; ``h_tail``: the tail's and ``full``'s (default ``h``).
    """
    lams = {j: lam for _, j, lam in est}
    last = min(max(lams), ONE_PARTS, k)
    ef = float(eps)
    hf, ht = float(h), float(h if h_tail is None else h_tail)
    upper, lower = flint.arb(0), flint.arb(0)
    for j in range(last + 1):
        if j == 1:
            continue
        lam = _best_lam([(bulk, k - j, hf), (tail, j, ht)], ef)
        mb, mt = _mgf_ball(bulk, lam, hf), _mgf_ball(tail, lam, ht)
        term = math.comb(k, j) * mb ** (k - j) * mt**j * (-_arb(Fraction(lam)) * _arb(eps)).exp()
        upper += term
        if j >= 2:
            lower += (j - 1) * term
    if last < k:
        lam = _best_lam([(bulk, k - last - 1, hf), (tail, last + 1, ht)], ef)
        mb, mt = _mgf_ball(bulk, lam, hf), _mgf_ball(tail, lam, ht)
        beyond = (
            k * math.comb(k - 1, last) * mt ** (last + 1) * (mb + mt) ** (k - 1 - last)
            * (-_arb(Fraction(lam)) * _arb(eps)).exp()
        )
        upper += beyond
        lower += beyond
    # the outcomes with a use beyond the grid's top: each counted once in the upper sum,
    # at most k - 1 times in the lower one
    leaked = _leaked(full, k, lams[1], ht, eps)
    return flint.arb((upper + leaked).upper()), flint.arb((lower + (k - 1) * leaked).upper())


def _best_lam(parts: list[tuple[_Measure, int, float]], ef: float) -> float:
    """The tilt minimising ``sum n log M(lam) - lam eps`` on ``[2^-20, 2^26]`` (a choice).

    ``parts``: ``(measure, uses, its lattice's width)``.
    """
    parts = [(m, n, hm) for m, n, hm in parts if n]

    def f(lam: float) -> float:
        return sum(n * _log_mgf(m, hm, lam) for m, n, hm in parts) - lam * ef

    return _golden(f, 2.0**-20, 2.0**26, steps=60)


def _leaked(full: _Measure, k: int, lam: float, hf: float, eps: Fraction) -> flint.arb:
    """The delta of the outcomes with a use beyond the grid's top: the smaller of two bounds.

    Their mass (:func:`~.gridmeasure._composed_leak`) and the tilted bound of their query
    (:func:`~.gridtilt.tilted_leak`), as in :mod:`~dpcompose_exact.engines.gridsplit`.
    """
    plain = _arb(_composed_leak([(full, k)]))
    if not plain.upper() > 0 or full.tail is None:
        return plain
    tm, c = _tilt(full, lam, hf, True)
    bound = tilted_leak([(full.tail, tm, c, k)], lam, Fraction(hf))(eps)
    return plain if not bound.upper() < plain.upper() else flint.arb(bound.upper())


def _sum_tilt(
    sub: Any, n: int, ef: float, bulk: _Measure, hf: float, theta: float, lam: float
) -> float:
    """The tilt of the bulk's fold for ``sum_c B(c) G_theta(c)`` (floats: a choice only).

    ``B`` the ``n``-fold bulk: the tilt minimising ``n K(lam) + max_c (log G_theta(c) - lam
    c)`` over the bulk's range of ``c`` (``K`` its log-MGF), the saddle point of the sum
    itself, where the tilted fold's mass lies where ``B G`` does.  The part's own saddle
    point ``lam`` (from its lattice Chernoff bound) can lie far off: at a small rate ``log
    G`` is convex in ``c`` and the lattice tail's Chernoff bound loose by ``e^{200}``.
    """
    np = _numpy()
    idx = np.nonzero(bulk.logs > -math.inf)[0] if bulk.logs is not None else np.nonzero(
        bulk.masses > 0)[0]
    if idx.size == 0 or n < 1:
        return lam
    lo_c = n * (bulk.offset + int(idx[0])) * hf
    hi_c = n * (bulk.offset + int(idx[-1])) * hf
    cs = np.linspace(lo_c, hi_c, ONE_TILT_POINTS)
    log_g = _log_g_float(sub, ef, cs, theta)
    if not np.any(np.isfinite(log_g)):
        return lam

    def f(t: float) -> float:
        return n * _log_mgf(bulk, hf, t) + float(np.max(log_g - t * cs))

    best = _golden(f, 2.0**-20, 2.0**26, steps=60)
    return best if f(best) < f(lam) - ONE_TILT_GAIN else lam


def _sum_part(
    sub: Any, n: int, eps: Fraction, hf: Fraction, bulk: _Measure, lam: float, upper: bool,
    theta: Fraction, block: int = 1,
) -> flint.arb | None:
    """A bound of ``sum_c B(c) G_theta(c)``, ``B`` the ``n``-fold bulk, as a ball.

    Folded tilted at ``lam`` (entries ``y_T`` stand for ``y_T e^{C - lam T h}``); for a
    lower bound at the losses less the bulk's shift.  Every entry of the window is weighed
    by ``v_T = e^{C - lam T h} G_theta(T h)``, or by a bound of it (:func:`_weights`: ``w_T
    >= v_T`` for the upper end, ``<= v_T`` for the lower one, from ``G`` in Arb at the
    start of each ``block`` of entries); the fold's error by Cauchy-Schwarz against
    ``||w||_2``; the mass outside the window (at most ``p`` on each side) by the largest
    weight there, bounded on pieces ``[c_i, c_{i + 1}]`` of the bulk's range by ``e^{C -
    lam c_i} G_theta(c_{i + 1})`` (``G`` is non-decreasing); for the lower bound that mass
    may have wrapped into the window, and is taken off at the window's largest weight.
    None when the window has more than :data:`ONE_POINTS` blocks.
    """
    tm, c = _tilt(bulk, lam, float(hf), upper)
    if not math.isfinite(c):
        return flint.arb(0) if not upper else None
    fold = _Fold([(tm, n)], hf, long=True)
    y = fold.y
    if -(-y.size // block) > ONE_POINTS or y.size > ONE_WINDOW:
        return None
    shift = Fraction(0) if upper else n * bulk.shift
    g = _Tail(sub, eps)
    blocks = _weights(g, theta, lam, n * c, fold.w_lo * hf - shift, hf, y.size, block, upper)
    total, vsq, absy, vmax = _weighed(y, blocks, upper)
    # the fold's error (Cauchy-Schwarz) and the double rounding of its entries (u each)
    slack = _arb(Fraction(fold.err2)) * vsq.sqrt() + _U64 * absy
    if upper:  # the true masses outside the window, by Chernoff bounds on pieces
        slack += _outside(bulk, n, hf, fold.w_hi + 1, fold.smax, g, theta, True)
        slack += _outside(bulk, n, hf, fold.smin, fold.w_lo - 1, g, theta, False)
        return flint.arb((total + slack).upper())
    slack += _arb(Fraction(fold.p_hi + fold.p_lo)) * flint.arb(vmax.upper())
    low = (total - slack).lower()
    return flint.arb(0) if not low > 0 else flint.arb(low)


def _weights(
    g: _Tail, theta: Fraction, lam: float, logc: float, c0: Fraction, hf: Fraction,
    size: int, block: int, upper: bool,
) -> list[tuple[int, int, flint.arb, float]]:
    """Blocks ``(start, length, V, l)`` with ``V e^{i l}`` bounding ``v`` at the block's entries.

    ``v(c) = e^{C - lam c} G_theta(c)`` at ``c = c0 + T h`` (entry ``T`` of the window);
    for the ``i``-th entry of a block starting at ``c_a``, ``V e^{i l} >= v`` (``upper``) or
    ``<= v``.  ``psi = log v`` has the derivative ``-lam + G'/G`` with ``G'(c) = e^{eps - c}
    S(x_t)`` (``t = max(eps - c, theta)``, ``S`` the noise's normal tail: the ``B``-mass
    of ``L > t``), ``e^{eps - c}`` non-increasing and ``S(x_t)``, ``G`` non-decreasing in
    ``c``; so on ``[c_a, c_b]`` (``c_b`` the next block's start) ``psi' <= -lam + e^{eps -
    c_a} S_b / G_a`` and ``>= -lam + e^{eps - c_b} S_a / G_b``, and ``psi(c) - psi(c_a)``
    lies between ``(c - c_a)`` times those (docs/theory.md, section 15, "One large use in
    closed form").  Where ``G_a`` may be 0: ``e^{C - lam c_a} G_b`` above, ``e^{C - lam c_b}
    G_a`` below, flat.  A block whose ``|l|`` times its length exceeds
    :data:`ONE_BLOCK_EXP` is weighed entry by entry.  ``V`` is an exact ball (a point),
    ``l`` a double (a bound).
    """
    lam_b, logc_b = _arb(Fraction(lam)), _arb(Fraction(logc))
    c0_b, hf_b, eps_b, theta_b = _arb(c0), _arb(hf), _arb(g.eps), _arb(theta)
    # entries at or below ``last`` have t = eps - c >= theta (exact, in integers)
    last = math.floor((g.eps - theta - c0) / hf)

    def point(i: int) -> tuple[flint.arb, flint.arb, flint.arb]:
        # (e^{C - lam c}, G(c), S(x_t)) at entry i, c a ball around c0 + i h
        c = c0_b + i * hf_b
        return (logc_b - lam_b * c).exp(), *g.with_slope_ball(eps_b - c, theta_b, i <= last)

    def single(i: int) -> tuple[int, int, flint.arb, float]:
        e, gi, _ = point(i)
        low = (e * gi).lower()
        return i, 1, flint.arb((e * gi).upper() if upper else (low if low > 0 else 0)), 0.0

    if block <= 1:  # every entry weighed in Arb
        return [single(i) for i in range(size)]
    starts = list(range(0, size, block))
    ends = {i: point(i) for i in starts + [size]}
    out: list[tuple[int, int, flint.arb, float]] = []
    for a in starts:
        m = min(block, size - a)
        b = a + m  # the next block's start (or the window's end): c_b >= the last entry
        (ea, ga, sa), (eb, gb, sb) = ends[a], ends[b]
        if m == 1:
            out.append(single(a))
            continue
        if ga.lower() > 0:
            # e^{eps - c} at c_a (upper) or c_b (lower): from the tilts, e^{-c} = (e^{C - lam
            # c} e^{-C})^{1/lam} is slower than one exp of the ball c itself
            ca = c0_b + a * hf_b
            if upper:
                d = -lam_b + (eps_b - ca).exp() * sb / ga
                ell = _float_up(d * hf_b)
            else:
                d = -lam_b + (eps_b - ca - m * hf_b).exp() * sa / gb
                ell = _float_down(d * hf_b)
            v = ea * ga
            if not abs(ell) * m <= ONE_BLOCK_EXP:  # steep (or not finite): entry by entry
                out.extend(single(i) for i in range(a, b))
                continue
        else:  # G may be 0 at c_a: flat bounds from the block's two ends
            v, ell = (ea * gb, 0.0) if upper else (eb * ga, 0.0)
        low = v.lower()
        out.append((a, m, flint.arb(v.upper() if upper else (low if low > 0 else 0)), ell))
    return out


def _weighed(
    y: Any, blocks: list[tuple[int, int, flint.arb, float]], upper: bool
) -> tuple[flint.arb, flint.arb, flint.arb, flint.arb]:
    """``(sum y w, sum w^2, sum |y| w, max w)`` for the weights ``w = V E_i`` of ``blocks``.

    ``E_i`` is ``exp(i l)`` in doubles, within ``8 u (|i l| + 2)`` of ``e^{i l}`` (the
    product's rounding and ``exp``'s, as for :func:`~.gridtilt._tilt`), widened by twice that
    outwards (and by ``2^-1000`` up, or set to 0 below ``2^-1000``, where doubles lose
    their relative accuracy), so ``w >= V e^{i l}`` (``upper``) or ``<=``; a block's dot
    products carry ``(m + 3) u`` of the sum of their absolute values
    (:func:`~.gridmeasure._dot_up`).  ``sum y w`` is a ball, the others upper bounds.
    """
    np = _numpy()
    total, vsq, absy, vmax = flint.arb(0), flint.arb(0), flint.arb(0), flint.arb(0)
    if not blocks:
        return total, vsq, absy, vmax
    tiny = 2.0**-1000
    starts = np.array([a for a, _, _, _ in blocks])
    lens = np.array([m for _, m, _, _ in blocks])
    ells = np.array([ell for _, _, _, ell in blocks])
    # every entry's E = exp(i l) with i its place in its block (the blocks tile the window)
    first = np.repeat(starts, lens)
    arg = (np.arange(first.size) - first) * np.repeat(ells, lens)
    rel = 8 * _U64 * (np.abs(arg) + 2)
    e = np.exp(arg)
    if upper:
        e = e * (1 + 2 * rel) + tiny
    else:
        e = np.where(e < tiny, 0.0, e * (1 - 2 * rel))
    yy = y[: first.size]
    s1 = np.add.reduceat(yy * e, starts)
    sa = np.add.reduceat(np.abs(yy) * e, starts) * (1 + (lens + 3) * _U64)
    s2 = np.add.reduceat(e * e, starts) * (1 + (lens + 3) * _U64)
    top = np.maximum.reduceat(e, starts)
    for n, (_, m, v, _) in enumerate(blocks):
        if v == 0:
            continue
        a_n = float(sa[n])
        err = flint.arb(0, float((m + 3) * _U64 * a_n) * (1 + 4 * _U64)) if a_n else 0
        total += v * (flint.arb(float(s1[n])) + err)
        vsq += v * v * flint.arb(float(s2[n]))
        absy += v * flint.arb(a_n)
        t = v * flint.arb(float(top[n]))
        vmax = vmax if vmax >= t else t
    return total, vsq, absy, vmax


def _outside(
    bulk: _Measure, n: int, hf: Fraction, lo_i: int, hi_i: int, g: Any, theta: Fraction,
    above: bool,
) -> flint.arb:
    """An upper bound of ``sum_{lo_i <= T <= hi_i} B(T) G_theta(T h)`` outside the window.

    On pieces ``[c_i, c_{i + 1}]`` of that range (growing away from the window), ``G <=
    G(c_{i + 1})`` and the pieces' mass is at most the Chernoff bound ``e^{n K(mu) - mu
    c_i}`` of ``B(T h >= c_i)``
    (``above``) or ``e^{n K(-mu) + mu c_{i + 1}}`` of ``B(T h <= c_{i + 1})``, ``K`` the
    bulk's log-MGF rounded up and ``mu >= 0`` the best of a fixed ladder (a choice).
    """
    np = _numpy()
    if hi_i < lo_i:
        return flint.arb(0)
    hff = float(hf)
    mus = [0.0] + [2.0 ** (j / 4) for j in range(-40, 96)]
    ks = np.array([n * _log_mgf(bulk, hff, m if above else -m) for m in mus])
    mu_a = np.array(mus)
    out = flint.arb(0)
    # pieces growing by ONE_GROWTH away from the window (where the mass is)
    cuts, d = [0], 1
    while cuts[-1] < hi_i - lo_i + 1:
        cuts.append(min(cuts[-1] + d, hi_i - lo_i + 1))
        d = max(d, math.ceil(cuts[-1] * ONE_GROWTH))
    for u, v in zip(cuts, cuts[1:]):
        if above:
            lo_c, hi_c = (lo_i + u) * hf, (lo_i + v - 1) * hf
        else:
            lo_c, hi_c = (hi_i - v + 1) * hf, (hi_i - u) * hf
        at = lo_c if above else hi_c
        expo = ks - mu_a * float(at) if above else ks + mu_a * float(at)
        j = int(np.argmin(np.where(np.isfinite(expo), expo, np.inf)))
        if not math.isfinite(float(ks[j])):
            continue
        mu = _arb(Fraction(mus[j]))
        log_mass = _arb(Fraction(float(ks[j]))) + (-mu if above else mu) * _arb(at)
        out += log_mass.exp() * g.at(hi_c, theta)
    return flint.arb(out.upper())


class _Tail:
    """``G_theta(c) = E_A[(1 - e^{eps - c - L})_+; L > theta]`` of one use, in Arb."""

    def __init__(self, sub: Any, eps: Fraction) -> None:
        noise = sub.noise
        self.eps = eps
        self.q, self.sc, self.sh = _arb(sub.q), _arb(noise.scale), _arb(noise.shift)
        self.r2 = self.sc * flint.arb(2).sqrt()

    def at(self, c: Fraction, theta: Fraction) -> flint.arb:
        """``G_theta(c)`` (``theta >= 0``): a ball, its lower end clipped at 0."""
        return self.with_slope(c, theta)[0]

    def with_slope_ball(
        self, u: flint.arb, theta: flint.arb, free: bool
    ) -> tuple[flint.arb, flint.arb]:
        """:meth:`with_slope` at a ball ``u`` around ``eps - c``: ``free`` when ``u >= theta``.

        ``t`` is ``u`` (``free``) or ``theta``; ``e^{eps - c} - 1 + q`` is ``q e^beta`` at
        ``t = u``.  Every function is monotone or evaluated in ball arithmetic (erfc at the
        ball's two ends, :func:`~dpcompose_exact.numbers.convert.erfc_ball`), so the balls
        contain the values at every point of ``u``.
        """
        from ..numbers.convert import erfc_ball

        q, sc, sh = self.q, self.sc, self.sh
        beta = ((u if free else theta).expm1() / q).log1p()
        x = beta * sc * sc / sh + sh / 2
        w = q * beta.exp() if free else u.expm1() + q
        s_b = erfc_ball(x / self.r2) / 2
        g = q * erfc_ball((x - sh) / self.r2) / 2 - w * s_b
        if g.lower() < 0:
            g = flint.arb(0).union(g.upper()) if g.upper() > 0 else flint.arb(0)
        return g, s_b

    def with_slope(self, c: Fraction, theta: Fraction) -> tuple[flint.arb, flint.arb]:
        """``(G_theta(c), S(x_t))``: ``G' = e^{eps - c} S(x_t)`` (:func:`_weights`).

        ``G`` is a ball with its lower end clipped at 0; ``S(x_t)`` the ``B``-mass of ``L >
        t``, ``t = max(eps - c, theta)``.
        """
        from ..numbers.convert import erfc_ball

        t = max(self.eps - c, theta)
        q, sc, sh = self.q, self.sc, self.sh
        tb = _arb(t)
        beta = (tb.expm1() / q).log1p()
        x = beta * sc * sc / sh + sh / 2
        # e^{eps - c} - 1 + q: at t = eps - c it is q e^beta (no cancellation)
        w = q * beta.exp() if t == self.eps - c else _arb(self.eps - c).expm1() + q
        s_b = erfc_ball(x / self.r2) / 2
        g = q * erfc_ball((x - sh) / self.r2) / 2 - w * s_b
        if g.lower() < 0:
            g = flint.arb(0).union(g.upper()) if g.upper() > 0 else flint.arb(0)
        return g, s_b


def _log_g_float(sub: Any, ef: float, c: Any, theta: float) -> Any:
    """A float estimate of ``log G_theta(c)`` over an array of ``c`` (a choice only)."""
    np = _numpy()
    from scipy.special import log_ndtr

    q, sig, s = float(sub.q), float(sub.noise.scale), float(sub.noise.shift)
    t = np.maximum(ef - c, theta)
    beta = np.log1p(np.expm1(np.minimum(t, 700.0)) / q)
    x = beta * sig * sig / s + s / 2
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        la = math.log(q) + log_ndtr(-(x - s) / sig)
        lw = np.log(np.expm1(np.minimum(ef - c, 700.0)) + q)
        lb = lw + log_ndtr(-x / sig)
        out = la + np.log(np.maximum(-np.expm1(np.minimum(lb - la, 0.0)), 1e-300))
    return np.where(np.isfinite(out), out, -np.inf)
