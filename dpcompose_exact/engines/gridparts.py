"""The parts of a split ``delta(eps)``: by the number of large uses, each at its own saddle.

Cut one use's lattice measure at a loss ``theta``, ``mu = mu_b + mu_t`` (bulk, tail); the
``k``-fold composition is ``sum_j C(k, j) mu_b^{*(k - j)} * mu_t^{*j}`` and a query, linear
in the composed measure, is the sum of the parts' queries (docs/theory.md, section 15,
"Split by the number of large uses").  Here: where to cut (:func:`_cut`, at the saddle of
the tilted fold), the grid's top (:func:`_tail_log`), each part's saddle and float
estimate (:func:`_saddle`, :func:`_estimates`: choices only), and the certified sum of the
parts (:func:`_parts`): each part folded tilted at its saddle (:func:`_fold_part`), those
whose Chernoff bound is negligible bounded by it (:func:`_chernoff`), the parts with more
than ``J`` large uses by one bound (:func:`_remainder`), and the mass beyond the top by the
composed leak (:func:`_leak`); the sums in Arb (a negligible part's bound can be
``e^{-10^8}``).  :mod:`~dpcompose_exact.engines.gridsplit` chooses the lattices and asks.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import flint

from ..errors import ResourceLimitError
from .gridfold import _Fold
from .gridmeasure import _PREC, _arb, _composed_leak, _frac, _log_mgf, _Measure, _numpy
from .gridsteps import DEEP_TAIL_LOG
from .gridtilt import _golden, _tilt, tilted_leak

__all__: list[str] = []

#: the grid's top: this many spreads of the base loss beyond eps (:func:`_tail_log`)
SPLIT_REACH = 6.0
#: ... or, where one use's tail at eps is within the deep grid's, this far below it (log)
SPLIT_TOP = 30.0
#: parts whose Chernoff bound is below this share of the answer are bounded by it (no fold)
SPLIT_REST = 1e-7
#: at most this many large uses are folded part by part (the rest by one Chernoff bound)
SPLIT_PARTS = 12


def _mgf(m: Any, hf: float, lam: float) -> float:
    """``log M(lam)`` of a lattice measure or a :class:`_Guide` (floats: a choice)."""
    return m.log_mgf(lam) if isinstance(m, _Guide) else _log_mgf(m, hf, lam)


class _Guide:
    """A measure's non-zero masses (their logs), to choose tilts: ``log M(lam)`` in floats."""

    def __init__(self, m: _Measure, hf: float) -> None:
        np = _numpy()
        nz = np.nonzero(m.logs > -math.inf)[0]
        self.losses = (m.offset + nz) * hf
        self.logs = m.logs[nz]

    def log_mgf(self, lam: float) -> float:
        """``log sum_j m_j e^{lam l_j}`` (floats, -inf for no mass): a guide only."""
        if self.logs.size == 0:
            return -math.inf
        arg = self.logs + lam * self.losses
        c = float(arg.max())
        return c + math.log(float(_numpy().exp(arg - c).sum()))


def _gap(
    up: tuple[_Measure, _Measure], lo: tuple[_Measure, _Measure], k: int, lam: float, hf: float
) -> float:
    """The float log-MGF gap of the part with one large use between two measures at ``lam``."""
    total = 0.0
    for (mu, ml), n in zip(zip(up, lo), (k - 1, 1)):
        a, b = _log_mgf(mu, hf, lam), _log_mgf(ml, hf, lam) - lam * float(ml.shift)
        if b == -math.inf:
            return math.inf
        total += n * (a - b)
    return total


def _tail_log(sub: Any, ef: float) -> float:
    """The deep grid's tail mass (its log) for a query at ``eps``: its top beyond ``eps``.

    One large use carries the answer near ``eps``, tilted into a bump of about the base
    loss's spread ``s / sigma``: the grid reaches :data:`SPLIT_REACH` of those beyond
    ``eps`` (and at least the deep grid's own tail, :data:`~.gridcells.DEEP_TAIL_LOG`);
    beyond the top the leak is bounded by its tilted tail (a choice only).
    """
    noise, q = sub.noise, float(sub.q)
    sig, s = float(noise.scale), float(noise.shift)
    target = ef + SPLIT_REACH * s / sig
    beta = math.log(math.expm1(min(target, 700.0)) / q + 1)
    z = (beta * sig * sig / s + s / 2 - s) / sig
    deep = min(DEEP_TAIL_LOG, -max(z - 0.5, 0.0) ** 2 / 2)
    # where one use's tail at eps lies within the deep grid's: SPLIT_TOP below it
    at = _tail_z(sub, ef)
    near = -max(at - 0.5, 0.0) ** 2 / 2 - SPLIT_TOP
    return near if near > DEEP_TAIL_LOG else deep


def _tail_z(sub: Any, ef: float) -> float:
    """The output where one use's loss is ``eps``, in spreads of the shifted noise (floats)."""
    noise, q = sub.noise, float(sub.q)
    sig, s = float(noise.scale), float(noise.shift)
    beta = math.log(math.expm1(min(ef, 700.0)) / q + 1)
    return (beta * sig * sig / s + s / 2 - s) / sig


def _slope(sub: Any, ef: float) -> float:
    """How fast one use's log-mass falls with the loss at ``eps`` (floats: a choice only).

    At the output ``x`` where the loss is ``eps`` the shifted noise's log-density falls by
    ``z / sigma`` per unit of ``x`` (``z`` its spreads there), and ``dx/dL = (sigma^2 / s)
    e^L / (e^L - 1 + q)``: at a small rate and a small ``eps`` thousands per unit of loss.
    """
    noise, q = sub.noise, float(sub.q)
    sig, s = float(noise.scale), float(noise.shift)
    em1 = math.expm1(min(ef, 700.0))
    return max(_tail_z(sub, ef), 0.0) * sig / s * (em1 + 1) / (em1 + q)


def _cut(up: _Measure, k: int, hc: float, ef: float) -> tuple[int | None, float]:
    """The cut ``theta`` (a grid index) and the tilt of the part with one large use.

    ``theta`` is where one use's tilted log-mass ``log mu(l) + lam l`` is least between 0
    and ``eps``: below it the tilted bulk falls, above it the tilted tail rises towards the
    query; ``lam`` is the saddle point of the part with one large use, and the two are
    found together by a few alternations (floats: a choice only).
    """
    np = _numpy()
    idx = np.arange(up.masses.size)
    losses = (up.offset + idx) * hc
    inside = (losses > 0) & (losses <= ef / 2) & (up.logs > -math.inf)
    if not inside.any():
        return None, 0.0
    cut = max(1, min(up.masses.size - 1, math.ceil(ef / 2 / hc) - up.offset)) + up.offset
    lam = 0.0
    for _ in range(3):
        bulk, tail = _split(up, cut)
        lam = _saddle([(bulk, k - 1), (tail, 1)], hc, ef)
        f = np.where(inside, up.logs + lam * losses, np.inf)
        cut = up.offset + int(np.argmin(f))
    return cut, lam


def _saddle(parts: list[tuple[Any, int]], hf: float, ef: float) -> float:
    """The tilt minimising ``sum n log M(lam) - lam eps`` on ``[2^-20, 2^24]`` (floats).

    As :func:`~.gridtilt._saddle`, reaching further: at a tiny rate and a small ``eps`` one
    large use's loss falls by ``e^{-10^4}`` per unit and its part's saddle point is there.
    ``parts``: lattice measures or :class:`_Guide` ones.
    """
    parts = [(m, n) for m, n in parts if n]

    def f(lam: float) -> float:
        return sum(n * _mgf(m, hf, lam) for m, n in parts) - lam * ef

    b = 1.0
    while b < 2.0**24 and f(2 * b) < f(b):
        b *= 2
    return _golden(f, max(b / 4, 2.0**-20), 2 * b)


def _split(m: _Measure, cut: int) -> tuple[_Measure, _Measure]:
    """The masses of ``m`` below the grid index ``cut`` and at or above it (no leak).

    Views of ``m``'s arrays, each part on its own indices (the bulk from ``m``'s offset,
    the tail from ``cut``): the same lattice measures as zero-padded copies to ``m``'s
    length, without them (peak memory: the fine lattice of :func:`~.gridcells.mixed_masses`
    reaches millions of entries, and each split held two copies of the masses and their
    logs).  A part with no entry keeps one zero mass (log ``-inf``).
    """
    np = _numpy()
    at = min(max(cut - m.offset, 0), m.masses.size)
    parts = []
    for a, b in ((0, at), (at, m.masses.size)):
        if a == b:  # an empty part: one zero mass at its place (no measure is empty)
            masses = np.zeros(1)
            logs = None if m.logs is None else np.full(1, -math.inf)
        else:
            masses = m.masses[a:b]
            logs = None if m.logs is None else m.logs[a:b]
        parts.append(_Measure(masses, m.offset + a, Fraction(0), m.shift, logs=logs))
    return parts[0], parts[1]


def _estimates(
    guide: tuple[Any, Any], k: int, ef: float, hc: float
) -> list[tuple[float, int, float]]:
    """``(log C_j, j, lam_j)``: each part's Chernoff bound (log) at its saddle point (floats).

    ``guide``: the bulk and the tail (:class:`_Guide`, losses on ``hc``), on which the tilts
    and the parts' estimated sizes are computed: choices only.
    """
    g_bulk, g_tail = guide
    est: list[tuple[float, int, float]] = []
    best = -math.inf
    for j in range(min(k, SPLIT_PARTS) + 1):
        parts = [(m, n) for m, n in ((g_bulk, k - j), (g_tail, j)) if n]
        lam = float(f"{_saddle(parts, hc, ef):.3g}")
        log_c = _log_comb(k, j) + sum(n * _mgf(m, hc, lam) for m, n in parts) - lam * ef
        est.append((log_c, j, lam))
        best = max(best, log_c)
        if log_c < best + math.log(SPLIT_REST) - 10 and j >= 2:
            break
    return est


def _parts(
    sides: dict[str, tuple[_Measure, _Measure]], full: _Measure, k: int, eps: Fraction,
    hf: Fraction, est: list[tuple[float, int, float]],
) -> tuple[Fraction, Fraction]:
    """The sum over the numbers ``j`` of large uses, each part folded or Chernoff-bounded.

    ``est``: the parts' estimated sizes and tilts (:func:`_estimates`); the bounds come
    from ``sides``.
    """
    ef, hff = float(eps), float(hf)
    bulk_up, tail_up = sides["up"]
    bulk_lo, tail_lo = sides["lo"]
    # the sums in Arb, one rational at the end: a negligible part's Chernoff bound can be
    # e^{-10^8} (a saddle point near 2^24), whose exact rational would have a denominator
    # of 10^8 bits and make every later sum and comparison of Fractions take minutes
    with flint.ctx.workprec(_PREC):
        lower, upper = flint.arb(0), flint.arb(0)
        lam_top = max(est, key=lambda e: e[0])[2]
        for log_c, j, lam in sorted(est, reverse=True):
            if lower > 0 and log_c < _log_ball(lower) + math.log(SPLIT_REST):
                upper += _chernoff(k, j, lam, eps, bulk_up, tail_up, hff)
                continue
            try:
                lo_j = _fold_part(bulk_lo, tail_lo, k, j, lam, eps, hf, False)
                up_j = _fold_part(bulk_up, tail_up, k, j, lam, eps, hf, True)
            except ResourceLimitError:
                upper += _chernoff(k, j, lam, eps, bulk_up, tail_up, hff)
                continue
            c = math.comb(k, j)
            lower += c * _arb(lo_j)
            folded = c * _arb(up_j)
            chern = _chernoff(k, j, lam, eps, bulk_up, tail_up, hff)
            upper += folded if folded.upper() < chern.upper() else chern
        last = max(j for _, j, _ in est)
        if last < k:  # the parts with more large uses: one Chernoff bound
            parts = [(m, n) for m, n in ((bulk_up, k - last - 1), (tail_up, last + 1)) if n]
            lam = float(f"{_saddle(parts, hff, ef):.3g}")
            upper += _remainder(k, last + 1, lam, eps, bulk_up, tail_up, hff)
        upper += _leak(full, k, lam_top, hf, eps)
        low = lower.lower()
        return (_frac(low) if low > 0 else Fraction(0)), _frac(upper.upper())


def _fold_part(
    bulk: _Measure, tail: _Measure, k: int, j: int, lam: float, eps: Fraction, hf: Fraction,
    upper: bool,
) -> Fraction:
    """A bound of the part ``mu_b^{*(k - j)} * mu_t^{*j}`` at ``eps``, folded tilted at ``lam``."""
    hff = float(hf)
    parts = [(m, n) for m, n in ((bulk, k - j), (tail, j)) if n]
    if any(_log_mgf(m, hff, 0.0) == -math.inf for m, _ in parts):
        return Fraction(0)  # a measure with no mass: the part is 0
    tilted = [(_tilt(m, lam, hff, upper), n) for m, n in parts]
    fold = _Fold([(tm, n) for (tm, _), n in tilted], hf, long=True)
    fold.lam = lam
    fold.logc = math.fsum(n * c for (_, c), n in tilted)
    fold.leak = Fraction(0)
    return fold.bound(eps, upper)


def _log_comb(k: int, j: int) -> float:
    return math.lgamma(k + 1) - math.lgamma(j + 1) - math.lgamma(k - j + 1)


def _chernoff(
    k: int, j: int, lam: float, eps: Fraction, bulk: _Measure, tail: _Measure, hf: float
) -> flint.arb:
    """``C(k, j) M_b^{k - j} M_t^j e^{-lam eps}``: the part's query is at most this (a ball).

    ``(1 - e^{eps - S})_+ <= e^{lam (S - eps)}``; ``M`` are the upper measures' MGFs at
    ``lam`` (:func:`~.gridmeasure._log_mgf`: float upper bounds with their margins).
    """
    logs = [(n, _log_mgf(m, hf, lam)) for m, n in ((bulk, k - j), (tail, j)) if n]
    if any(v == -math.inf for _, v in logs):
        return flint.arb(0)
    with flint.ctx.workprec(_PREC):
        total = _arb(math.comb(k, j)).log() - _arb(Fraction(lam)) * _arb(eps)
        for n, v in logs:
            total += n * _arb(Fraction(v))
        return flint.arb(total.exp().upper())


def _remainder(
    k: int, j: int, lam: float, eps: Fraction, bulk: _Measure, tail: _Measure, hf: float
) -> flint.arb:
    """The parts with at least ``j`` large uses: ``C(k, j) M_t^j (M_b + M_t)^{k - j} e^{-lam eps}``.

    Choosing ``j`` of the uses to be large and letting the others be anything counts every
    outcome with at least ``j`` large uses at least once (non-negative terms).
    """
    lb, lt = _log_mgf(bulk, hf, lam), _log_mgf(tail, hf, lam)
    if lt == -math.inf:
        return flint.arb(0)
    with flint.ctx.workprec(_PREC):
        mb = _arb(Fraction(lb)).exp() if lb > -math.inf else flint.arb(0)
        mt = _arb(Fraction(lt)).exp()
        total = (
            _arb(math.comb(k, j)).log() + j * mt.log() + (k - j) * (mb + mt).log()
            - _arb(Fraction(lam)) * _arb(eps)
        )
        return flint.arb(total.exp().upper())


def _leak(full: _Measure, k: int, lam: float, hf: Fraction, eps: Fraction) -> flint.arb:
    """The outcomes with a use beyond the grid's top: the smaller of two bounds (a ball).

    Their mass (:func:`~.gridmeasure._composed_leak`) and the tilted bound of their query
    (:func:`~.gridtilt.tilted_leak`, at the tilt of the largest part).
    """
    plain = _arb(_composed_leak([(full, k)]))
    if not plain.upper() > 0 or full.tail is None:
        return plain
    tm, c = _tilt(full, lam, float(hf), True)
    bound = tilted_leak([(full.tail, tm, c, k)], lam, hf)(eps)
    if not bound.upper() < plain.upper():
        return plain
    return flint.arb(bound.upper())


def _log_ball(x: flint.arb) -> float:
    """``log`` of a positive ball's lower end, far below the doubles' range too (a float)."""
    man, exp = (int(v) for v in x.lower().mid().man_exp())
    return math.log(man) + exp * math.log(2)
