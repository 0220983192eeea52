"""Exponential tilting of lattice measures: bounds of small and tiny deltas relative to delta.

The FFT's error bound (:mod:`~dpcompose_exact.engines.gridfold`) is absolute, about
``1e-16`` times the composed mass.  A delta far below it is computed from the measures
times ``e^{lam l - c}`` instead (:func:`_tilt`, rounded outwards: up for an upper measure,
down for a lower one, by twice a bound of the relative rounding of numpy's ``log`` and
``exp``), composed by the same fold: the composition of the tilted measures is the tilted
composition, ``(mu e^{lam l})^{*k} = mu^{*k} e^{lam T}``, so the fold's absolute error
becomes relative to the Chernoff bound ``e^{C - lam eps}`` at the query.  ``lam`` is the
saddle point of the query (:func:`_saddle`, floats: a choice, any ``lam >= 0`` is sound).
The argument is docs/theory.md, section 15 ("Small and tiny deltas: exponential tilting").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import flint

from .gridfold import _Fold, fold_length
from .gridmeasure import _U64, _composed_leak, _log_mgf, _Measure, _numpy

__all__: list[str] = []

#: the tilt of a query (:func:`_window_tilt`): the Chernoff bound at the query may be at
#: most this factor above its value at the saddle point ...
TILT_LOSS = 16.0
#: ... among the tilts ``lam* j / TILT_STEPS`` (``j = 1, ..., TILT_STEPS``), the one of the
#: shortest FFT window (the largest within :data:`TILT_SLACK` of the shortest)
TILT_STEPS = 16
TILT_SLACK = 1.05
#: ... and only when the saddle's window is at least this many times the shortest
TILT_GAIN = 2


def _tilt(m: _Measure, lam: float, hf: float, upper: bool) -> tuple[_Measure, float]:
    """``m`` tilted by ``e^{lam l}`` and scaled by ``e^{-c}``: ``(tilted measure, c)``.

    The masses ``p_j e^{lam (offset + j) h - c}`` are computed as ``exp(log p_j + lam i h -
    c)`` in doubles and widened by twice a bound of their relative rounding error (up for an
    upper measure, down for a lower one), so the tilted upper (lower) measure dominates (is
    dominated by) the exact tilt of ``m``; ``c`` is a double (exact), about the log of the
    tilted total.  A measure that carries its masses' logs (``logs``, rounded outwards: the
    deep grid, whose masses reach far below the doubles' range) is tilted from them, so the
    scale ``e^{lam l - c}`` is applied before anything is a double.  The leak is not tilted
    (the caller bounds it: :func:`tilted_leak`).
    """
    np = _numpy()
    c = _log_mgf(m, hf, lam)
    out = np.zeros(m.masses.size)
    if m.logs is not None:
        nz = np.nonzero(m.logs > -math.inf)[0]
    else:
        nz = np.nonzero(m.masses)[0]
    if nz.size and math.isfinite(c):
        lp = m.logs[nz] if m.logs is not None else np.log(m.masses[nz])
        li = lam * (m.offset + nz) * hf
        with np.errstate(under="ignore"):
            t = np.exp(lp + li - c)
        # log, products, sums and exp: relative error <= 8 u (|log p| + |lam i h| + |c| + 2)
        rel = 8 * _U64 * (np.abs(lp) + np.abs(li) + abs(c) + 2)
        tiny = 2.0**-1070
        out[nz] = t * (1 + 2 * rel) + tiny if upper else np.maximum(t * (1 - 2 * rel) - tiny, 0)
    return _Measure(out, m.offset, Fraction(0), m.shift), c


class _Tilted:
    """One direction of a composition, tilted at ``lam``: certified bounds of small deltas.

    The upper and lower lattice measures (of the deep grid, :func:`cell_masses` with
    ``deep``, for tiny deltas) are tilted (:func:`_tilt`) and composed (:class:`_Fold`, in
    long doubles when ``long``, with long-double forward transforms when ``mixed``); the
    untilted leak is added to the upper bound.  Both folds
    answer :meth:`_Fold.bound`.  The lower fold is built when first read (:attr:`lo`): a
    direction that only has to be shown below a delta needs its upper fold alone.
    """

    def __init__(
        self, deep: Sequence[tuple[dict[str, Any], int]], direction: str, lam: float,
        h: Fraction, long: bool = True, mixed: bool = False,
    ) -> None:
        self._args = (deep, direction, lam, h, long, mixed)
        self._lo: _Fold | None = None
        self.up = self._side(True)

    @property
    def lo(self) -> _Fold:
        """The tilted lower fold (built on first use)."""
        if self._lo is None:
            self._lo = self._side(False)
            self._args = None  # both folds built: the measures are no longer needed
        return self._lo

    def lower_logc(self) -> float | None:
        """The tilted lower fold's ``logc`` (None when that fold is not built)."""
        return None if self._lo is None else self._lo.logc

    def _side(self, upper: bool) -> _Fold:
        """The tilted upper (``upper``) or lower fold."""
        deep, direction, lam, h, long, mixed = self._args
        hf = float(h)
        parts = [(c[f"{direction}_{'up' if upper else 'lo'}"], k) for c, k in deep]
        tilted = [(_tilt(m, lam, hf, upper), k) for m, k in parts]
        fold = _Fold([(tm, k) for (tm, _), k in tilted], h, long=long, mixed=mixed)
        fold.lam = lam
        fold.logc = math.fsum(k * c for (_, c), k in tilted)
        fold.leak = _composed_leak(parts) if upper else Fraction(0)
        if upper and fold.leak and all(m.tail is not None or not m.leak for m, _ in parts):
            fold.tail_bound = tilted_leak(
                [(m.tail, tm, c, k) for (m, k), ((tm, c), _) in zip(parts, tilted)],
                lam, h,
            )
        return fold


def tilted_leak(
    parts: Sequence[tuple[Any, _Measure, float, int]], lam: float, h: Fraction
) -> Any:
    """``eps -> `` an Arb upper bound of the delta of the outcomes with a leaked use.

    ``parts``: ``(tail, tilted, c, k)`` per kind: ``tail(lam)`` bounds ``T = E[e^{lam L};
    leaked]`` (None: no leak), ``tilted`` the kind's tilted finite measure (masses ``p e^{lam
    l - c}`` rounded up, so ``M = e^c sum`` bounds its untilted MGF).  As ``(1 - e^{eps -
    S})_+ <= e^{lam (S - eps)}`` and at least one use leaks (a union over the uses),
    ``e^{-lam eps} prod (M + T)^k sum k T / (M + T)``: relative to the Chernoff bound of the
    answer, not a fixed mass at ``+inf`` (docs/theory.md, section 15, "A relative tail
    bound").
    """
    from .gridmeasure import _PREC, _arb, _sum_up

    with flint.ctx.workprec(_PREC):
        logfull, share = flint.arb(0), flint.arb(0)
        for tail, tm, c, k in parts:
            mm = _arb(Fraction(_sum_up(tm.masses))) * _arb(Fraction(c)).exp()
            t = tail(lam) if tail is not None else flint.arb(0)
            logfull += k * (mm + t).log()
            share += k * t / (mm + t)
        lb = _arb(Fraction(lam))

    def bound(eps: Fraction) -> Any:
        with flint.ctx.workprec(_PREC):
            return (logfull - lb * _arb(eps)).exp() * share

    return bound


def _saddle(parts: Sequence[tuple[_Measure, int]], hf: float, eps: float) -> float:
    """The tilt ``lam >= 0`` minimising ``sum k log M(lam) - lam eps`` (floats: a choice)."""

    def f(lam: float) -> float:
        return sum(k * _log_mgf(m, hf, lam) for m, k in parts) - lam * eps

    a, b = 0.0, 1.0
    while b < 4096 and f(2 * b) < f(b):
        b *= 2
    b = 2 * b
    g = (math.sqrt(5) - 1) / 2
    x1, x2 = b - g * (b - a), a + g * (b - a)
    f1, f2 = f(x1), f(x2)
    for _ in range(40):
        if f1 < f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - g * (b - a)
            f1 = f(x1)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + g * (b - a)
            f2 = f(x2)
    return (a + b) / 2


def _window_tilt(
    parts: Sequence[tuple[_Measure, int]], hf: float, eps: float, lam: float
) -> float:
    """The tilt of a query at ``eps``: at most the saddle point ``lam``, on a short window.

    Tilting by ``e^{lam l}`` makes the fold's error relative to the Chernoff bound
    ``e^{K(lam) - lam eps}`` (``K`` the composed log-MGF), smallest at the saddle point; but
    the tilted measures ``mu e^{lam l - K(lam)}`` have the log-MGF ``K(lam + x) - K(lam)``,
    whose upper tail grows fast with ``lam`` where rare large losses dominate (small rates,
    many uses: the window of the saddle's fold can be ten times the untilted one).  Among
    ``lam j / TILT_STEPS`` whose Chernoff bound is within :data:`TILT_LOSS` of the saddle's,
    this takes the shortest estimated window (:func:`~.gridfold.fold_length`; the largest
    tilt within :data:`TILT_SLACK` of it) when the saddle's is :data:`TILT_GAIN` times
    longer or more, else the saddle point.  Floats, a choice: the
    folds are certified for every ``lam > 0`` (docs/theory.md, section 15, "Choosing the
    tilt").
    """
    parts = [(m, k) for m, k in parts if k]
    if not lam > 0 or not parts:
        return lam

    def chern(x: float) -> float:
        return sum(k * _log_mgf(m, hf, x) for m, k in parts) - x * eps

    best = chern(lam)
    if not math.isfinite(best):
        return lam
    limit = best + math.log(TILT_LOSS)
    cands = []
    hints: tuple[list, list] = ([None], [None])  # each window scan starts at the last's best
    for j in range(TILT_STEPS, 0, -1):
        x = lam * j / TILT_STEPS
        if j < TILT_STEPS and not chern(x) <= limit:
            continue
        cands.append((fold_length(parts, hf, x, hf, hints), x))
    shortest = min(n for n, _ in cands)
    if TILT_GAIN * shortest > max(n for n, x in cands if x == lam):
        return lam  # the saddle's window is short enough: keep its smaller error
    return max(x for n, x in cands if n <= TILT_SLACK * shortest)


def _golden(f: Any, a: float, b: float, steps: int = 40) -> float:
    """A minimiser of ``f`` on ``[a, b]`` (golden sections on the log scale; a choice)."""
    la, lb = math.log(a), math.log(b)
    g = (math.sqrt(5) - 1) / 2
    x1, x2 = lb - g * (lb - la), la + g * (lb - la)
    f1, f2 = f(math.exp(x1)), f(math.exp(x2))
    for _ in range(steps):
        if f1 < f2:
            lb, x2, f2 = x2, x1, f1
            x1 = lb - g * (lb - la)
            f1 = f(math.exp(x1))
        else:
            la, x1, f1 = x1, x2, f2
            x2 = la + g * (lb - la)
            f2 = f(math.exp(x2))
    return math.exp((la + lb) / 2)
