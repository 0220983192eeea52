"""The tilted folds of small and tiny deltas: the deep grid, where it ends and how fine it is.

Below the absolute error of the untilted folds, ``delta(eps)`` of each direction is bounded
by the folds of the lattice measures tilted at the saddle point ``lam`` of ``eps``
(:class:`~dpcompose_exact.engines.gridtilt._Tilted`: masses ``p_T e^{lam T h - C}``, so the
FFT's error is relative to the Chernoff bound ``e^{C - lam eps}``), on this grid in doubles
or on the deep grid (tails to ``e^{DEEP_TAIL_LOG}``) in long doubles.  Where the deep grid
ends is a choice (:meth:`DeepTilts._deep_cut`: ``k`` times one use's tail beyond its top is
about :data:`DEEP_CUT` of the answer), and so is its width (:meth:`DeepTilts._deep_fine`:
``lam h`` at most :data:`DEEP_LAM_H`; :meth:`DeepTilts._deep_grid`; for bounded losses
the width their enclosure asks for, :meth:`DeepTilts._bounded_ends`): every choice gives
certified bounds, each intersected with the enclosure so far.  The argument is
docs/theory.md, section 15 ("Small and tiny deltas: exponential tilting", "Where the deep
grid ends", "Choosing the route of a small delta", "Reusing the folds", "Bounded losses on
the finer deep grid", "When the deep folds cannot narrow": which deep folds are not built,
:meth:`DeepTilts._deep_guess`, :meth:`DeepTilts._futile`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..errors import ResourceLimitError
from ..numbers.convert import log_fraction
from .gridcells import align_grid, cell_masses, log_tails
from .gridfold import _Fold, fold_length
from .gridmeasure import _log_mgf, _numpy
from .gridsteps import DEEP_TAIL_LOG, _loss_index_range
from .gridtilt import _saddle, _Tilted, _window_tilt

__all__: list[str] = []


#: tilted directions kept for later queries (the most recent; each holds two folds)
TILT_CACHE = 2
#: delta(eps) between ROUTE_FLOOR and TILT_BELOW: this grid's tilted folds in doubles first,
#: the deep grid's only when their enclosure is relatively wider than this
DELTA_ROUTE_WIDTH = Fraction(1, 1000)
#: the deep tilted folds of delta(eps) keep a finer automatic grid when one use spans at
#: most this many cells of it and the tilted fold's estimated FFT length is at most this
DEEP_FINE_CELLS = 1 << 20
DEEP_FINE_FFT = 1 << 20
#: ... and only for a direction whose enclosure so far spans at most a factor e^FINE_REACH
#: (the finer grid narrows ``log(hi / lo)`` by about the square of the grids' ratio)
FINE_REACH = 32.0
_FINE_FACTOR = Fraction(math.exp(FINE_REACH))
#: the deep grid's top (:meth:`DeepTilts._deep_cut`): where the uses' tail mass
#: beyond it is about this share of the estimated answer (rounded down to a multiple of
#: DEEP_CUT_STEP in its log), re-estimated at most DEEP_CUTS times
DEEP_CUT = 1e-7
DEEP_CUT_STEP = 16.0
DEEP_CUTS = 3
#: ... and halved while the tilt times the grid's width is over DEEP_LAM_H, one use spans at
#: most DEEP_LAM_CELLS cells and the tilted fold's estimated FFT length is at most
#: DEEP_LAM_FFT (:meth:`DeepTilts._deep_fine`)
DEEP_LAM_H = 2e-3
DEEP_LAM_CELLS = 1 << 21
DEEP_LAM_FFT = 1 << 22
#: ... unless the Chernoff bound at the tilt is over e^DEEP_LOOSE times the fold's estimate
DEEP_LOOSE = 35.0
#: the finer deep grid's tilted folds of a direction are not built (:meth:`DeepTilts._futile`)
#: when the deep grid's own folds of it, scaled to the finer width, predict a log-width at
#: least DEEP_GAIN times that of its enclosure so far
DEEP_GAIN = 2.0
#: bounded (Laplace) losses: the finer deep grid's tilted folds of estimated FFT length at
#: most this (:meth:`DeepTilts._bounded_ends`)
BOUNDED_FFT = 1 << 23
#: ... its width ``h0 sqrt(DELTA_ROUTE_WIDTH / (BOUNDED_SLACK w))`` (the alignment may move
#: it by up to a quarter, and the width falls a little slower than ``h^2``)
BOUNDED_SLACK = 2
#: ... in long doubles (else doubles: the tilt makes the fold's error relative to the
#: Chernoff bound at the query either way; each fold certifies its own error)
BOUNDED_LONG = False


class DeepTilts:
    """The tilted folds of ``delta(eps)`` per direction, on this grid or the deep one (a mixin).

    The class that uses it (:class:`~.subsample_grid.NoiseGridComposition`) gives ``kinds``,
    ``h``, ``h_deep``, ``auto``, ``_cells`` (this grid's measures of each kind), ``_tilts``
    (the cache of tilted directions), ``_deep_h`` (per direction, the grid of its last deep
    tilted fold), ``_deep_seen`` (per direction and query, what its deep tilted folds
    showed: :meth:`_futile`) and ``_bounded()``.
    """

    kinds: list[tuple[Any, int]]
    _cells: list[tuple[dict[str, Any], int]]
    h: Fraction
    h_deep: Fraction
    auto: bool
    _tilts: dict
    _deep_h: dict
    _deep_seen: dict
    _bounded: Any

    def _deep_ends(
        self, ends: dict[str, tuple[Fraction, Fraction]], eps: Fraction, top: Fraction,
        known: tuple[Fraction, Fraction],
    ) -> tuple[Fraction, Fraction]:
        """The enclosure so far (``known``) after the finer deep grid.

        A tiny delta within the deep grid's reach, still relatively wider than
        :data:`DELTA_ROUTE_WIDTH`: the deep grid of this finer grid's width when affordable
        (:meth:`_deep_grid`), intersected, for the directions that may narrow the answer
        (:func:`_may_narrow`; ``ends``, per direction, are narrowed in place; section 15).
        """
        lo, hi = known
        if 0 < lo and hi - lo > DELTA_ROUTE_WIDTH * hi:
            try:
                if self.auto and self._bounded():
                    self._bounded_ends(ends, eps, top)
                else:
                    self._tilt_ends(ends, eps, top, True, fine=True)
            except ResourceLimitError:  # a narrowing only: the enclosure so far stands
                return known
            lo = max(lo, max(e[0] for e in ends.values()))
            hi = min(hi, max(e[1] for e in ends.values()))
        return min(lo, hi), hi

    def _bounded_ends(
        self, ends: dict[str, tuple[Fraction, Fraction]], eps: Fraction, top: Fraction
    ) -> None:
        """Narrow ``ends`` (in place) on the deep grid its width asks for: bounded losses.

        Laplace losses lie on the grid whole (no top to place: the tail beyond the largest
        loss is exactly 0), and every use of the tilted composition carries the grid's error
        (about ``(lam h)^2`` relative, times ``k``), so the relative width ``w`` of a
        direction's enclosure from the deep grid ``h0`` is second order in the width: the
        deep tilted folds are built again on ``h0 sqrt(DELTA_ROUTE_WIDTH / (BOUNDED_SLACK
        w))`` (``h0 / 2`` when the lower end is 0), realigned (:func:`align_grid`), in
        doubles (:data:`BOUNDED_LONG`), coarser while one use spans over
        :data:`DEEP_LAM_CELLS` cells or the fold's estimated FFT length (:func:`fold_length`,
        from the measures of ``h0``) is over :data:`BOUNDED_FFT`; for each direction that
        can hold the answer and is relatively wider than :data:`DELTA_ROUTE_WIDTH`,
        intersected (docs/theory.md, section 15,
        "Bounded losses on the finer deep grid").  A choice: every grid is certified.
        """
        subs, total = [m for m, _ in self.kinds], sum(n for _, n in self.kinds)
        for d in sorted(ends, key=lambda d: -ends[d][1]):
            lo_d, hi_d = ends[d]
            h0 = self._deep_h.get(d)
            if (
                h0 is None or hi_d <= max(e[0] for e in ends.values())
                or hi_d - lo_d <= DELTA_ROUTE_WIDTH * hi_d
            ):
                continue  # it moves neither end of the answer (or is narrow already)
            shrink = 0.5
            if lo_d > 0:
                shrink = min(0.5, math.sqrt(
                    float(DELTA_ROUTE_WIDTH * hi_d / (BOUNDED_SLACK * (hi_d - lo_d)))
                ))
            fwd = d == "fwd"  # the forward measures only, when they are all it reads
            coarse = [(cell_masses(m, h0, deep=True, forward=fwd), n) for m, n in self.kinds]
            parts = [(c[f"{d}_up"], n) for c, n in coarse]
            lam0 = _saddle(parts, float(h0), float(eps))
            fine = align_grid(subs, h0 * Fraction(shrink), total)
            while fine < h0 / 2 and (
                any(r[1] - r[0] > DEEP_LAM_CELLS
                    for r in (_loss_index_range(m, fine, DEEP_TAIL_LOG) for m in subs))
                or fold_length(parts, float(h0), lam0, float(fine)) > BOUNDED_FFT
            ):
                fine = align_grid(subs, fine * 2, total)
            if not fine < h0:
                continue
            cells = [(cell_masses(m, fine, deep=True, forward=fwd), n) for m, n in self.kinds]
            ups = [(c[f"{d}_up"], n) for c, n in cells]
            lam = float(f"{_saddle(ups, float(fine), float(eps)):.3g}")
            del coarse, parts
            t = self._keep_tilt(
                (d, lam, True, fine),
                lambda c=cells, d=d, lam=lam, h=fine: _Tilted(c, d, lam, h, long=BOUNDED_LONG),
            )
            self._deep_h[d] = fine
            hi_d = min(hi_d, t.up.bound(eps, True))
            if hi_d > max(e[0] for e in ends.values()):
                lo_d = max(lo_d, t.lo.bound(top, False))
            ends[d] = (lo_d, hi_d)
            del t

    def _tilt_ends(
        self, ends: dict[str, tuple[Fraction, Fraction]], eps: Fraction, top: Fraction,
        deep: bool, fine: bool = False, guess: tuple[float, float, float] | None = None,
        cut: bool = True,
    ) -> None:
        """Narrow ``ends`` (per direction, in place) by the folds tilted at ``eps``.

        Each bound is intersected with the tilted one (both certified).  ``deep``: the deep
        grid in long doubles, else this grid in doubles; ``fine``: the deep grid of
        :meth:`_deep_grid`; ``guess``: :meth:`_deep_guess` of ``eps``, by which the forward
        deep folds are not built when they cannot narrow its enclosure (:func:`_hopeless`);
        ``cut=False``: the deep forward fold on the deep grid as it is, not cut where the
        answer needs it (:meth:`_deep_cut`; a choice: both certified).
        """
        for d in sorted(ends, key=lambda d: -ends[d][1]):
            if ends[d][1] < max(e[0] for e in ends.values()) or ends[d][1] == 0:
                continue  # this direction cannot decide either end
            if d == "fwd" and guess is not None and _hopeless(guess, ends[d]):
                self._deep_seen[(d, eps)] = guess  # for the finer grid (:meth:`_futile`)
                continue  # the deep grid's gap is wider than the enclosure so far
            if fine and (not _may_narrow(ends, d) or self._futile(d, eps, ends[d])):
                continue  # a finer deep grid cannot bring the answer nearer its width
            try:
                t = self._tilted(d, eps, deep, fine, cut=cut)
            except ResourceLimitError:
                continue  # a narrowing fold too long to build: the certified ends stand
            self._deep_h[d] = t.up.h  # the grid that gave this width (:meth:`_bounded_ends`)
            lo_d, hi_d = ends[d][0], min(ends[d][1], t.up.bound(eps, True))
            if hi_d > max(e[0] for e in ends.values()):  # else its lower end, at most
                # hi_d, cannot raise the answer's (another direction's is higher): the
                # tilted lower fold is not built (section 15, "Reusing the folds")
                lo_d = max(lo_d, t.lo.bound(top, False))
            ends[d] = (lo_d, hi_d)
            # what the deep grid showed, for the finer one (_futile); a cut fold only: an
            # uncut one (cut=False) leaves the finer pass to cut it
            if deep and not fine and cut:
                self._deep_seen[(d, eps)] = (
                    t.up.h, t.up.lam, t.up.logc, t.lower_logc(), t.up.nfft
                )
            del t  # not alive next to the other direction's folds (the cache decides)

    def _futile(self, d: str, eps: Fraction, known: tuple[Fraction, Fraction]) -> bool:
        """Whether the finer deep grid's tilted folds of ``d`` cannot narrow ``known``.

        A choice of work, not of soundness (docs/theory.md, section 15, "When the deep folds
        cannot narrow"), read from the deep grid's folds of ``d`` at this query (grid
        ``h``, tilt ``lam``, ``C_+`` and ``C_-`` the logs of the tilted upper and lower
        measures' MGF bounds times the uses, FFT length ``n``: :meth:`_tilt_ends`).  True
        when the finer grid ``h'`` (:meth:`_deep_grid`, at most ``h``) is ``h`` itself (the
        same folds again), or when ``n h / h'`` is over :data:`DEEP_FINE_FFT`, the length
        :meth:`_deep_grid` allows (the window, in loss units, is that of the same tilt and
        top); else, only when ``known`` has a positive lower end, when the Chernoff bound
        ``e^{C_+ - lam eps}`` is over ``e^DEEP_LOOSE`` times the upper end of ``known`` (the
        folds' error, relative to that bound, swamps the answer on any grid: the finer
        grid's tilt and top are those of the same query), or when the measures' gap ``C_+ -
        C_-``, about the folds' own log-width, times ``(h' / h)^2`` (the gap is first order
        in the grid where one use's bulk lies within a cell, second order where its cells
        resolve it: the square is the smaller estimate) is at least :data:`DEEP_GAIN` times
        ``log(hi / lo)`` of ``known``.  Where those folds were only guessed
        (:meth:`_deep_guess`, not built: :func:`_hopeless`), the guess is read the same way.
        """
        seen = self._deep_seen.get((d, eps))
        if seen is None:
            return False
        if len(seen) == 3:  # the deep grid's folds were not built, only guessed
            ratio = float(self._deep_grid(d, eps) / self.h_deep)
            return ratio == 1 or _hopeless((seen[0], seen[1], min(ratio, seen[2])), known)
        h, lam, c_up, c_lo, nfft = seen
        ratio = float(min(self._deep_grid(d, eps), h) / h)
        if ratio == 1 or nfft > DEEP_FINE_FFT * ratio:
            return True  # the same folds again, or a window too long for the finer grid
        lo, hi = known
        if not 0 < lo < hi:
            return False
        log_hi = log_fraction(hi)
        if c_up - lam * float(eps) - log_hi > DEEP_LOOSE:
            return True
        if c_lo is None:
            return False
        width = log_hi - log_fraction(lo)
        return (c_up - c_lo) * ratio * ratio >= DEEP_GAIN * width

    def _tilted(
        self, direction: str, eps: Fraction | float, deep: bool, fine: bool = False,
        long: bool = False, cut: bool = True, mixed: bool = False,
    ) -> _Tilted:
        """The direction tilted at the saddle point of ``eps`` (cached).

        ``deep``: the deep grid in long doubles (tiny deltas); else the default grid in
        doubles (small deltas, where the untilted doubles' absolute error shows), or in long
        doubles when ``long`` (where the doubles' error bound holds most of an enclosure's
        width: docs/theory.md, section 15, "Choosing the route of a small delta"), or with
        long-double forward transforms when ``mixed`` (most of that width removed for less).
        ``fine``: the deep grid of :meth:`_deep_grid` (this grid's width when affordable).
        ``cut=False``: the deep forward fold as made, without :meth:`_deep_cut`.
        """
        h = (self._deep_grid(direction, eps) if fine else self.h_deep) if deep else self.h
        # this grid's own measures when they are these (the cache keeps none over its
        # budget: a fine grid's would be built again, 4.2 s at 6.3M cells)
        cells = self._cells if not deep else [
            (cell_masses(m, h, deep=deep), n) for m, n in self.kinds
        ]
        hf = float(h)
        parts = [(c[f"{direction}_up"], n) for c, n in cells]
        lam = _saddle(parts, hf, float(eps))
        if not deep:  # a shorter window for a Chernoff bound a little above the saddle's
            lam = _window_tilt(parts, hf, float(eps), lam)
        lam = float(f"{lam:.3g}")  # nearby queries share the tilt
        mixed = mixed and not (deep or long)
        key = (direction, lam, deep, h) + (("long",) if long and not deep else ()) + (
            ("mixed",) if mixed else ()
        )
        t = self._keep_tilt(
            key, lambda: _Tilted(cells, direction, lam, h, long=deep or long, mixed=mixed)
        )
        if deep and direction == "fwd" and cut:
            del t  # held by the cache only (_deep_cut may drop it: peak memory)
            return self._deep_cut(key, float(eps), h)
        return t

    def _keep_tilt(self, key: tuple, make: Any) -> _Tilted:
        """The tilted direction of ``key``, made by ``make()`` unless kept.

        Only the :data:`TILT_CACHE` most recently used are kept (the oldest go first, before
        a new one is made: peak memory).
        """
        t = self._tilts.pop(key, None)  # the most recent last
        if t is None:
            while len(self._tilts) >= TILT_CACHE:
                del self._tilts[next(iter(self._tilts))]
            t = make()
        self._tilts[key] = t
        return t

    def _deep_cut(self, key: tuple, eps: float, h: Fraction) -> _Tilted:
        """The deep fold of ``key`` on a deep grid cut where the answer needs it.

        The deep grid's top cut (:data:`DEEP_TAIL_LOG`) is a choice: the tail beyond the top
        is the leak (at most ``k`` times one use's tail), and the tilt's Chernoff bound, to
        which the folds' error is relative, is that of the measures on the grid.  Where one
        use's loss has a heavy upper tail (a small rate: ``e^{lam L}`` grows faster than
        the tail's mass falls), a far top makes the tilted measures' mass sit at the top, far
        from the query, and the bound is loose by many orders; a near top leaves a large
        leak.  So the top is placed where ``k`` times one use's tail is about
        :data:`DEEP_CUT` times the fold's own estimate of the answer (below the doubles'
        range too: the masses carry logs), re-estimated on the new grid up to
        :data:`DEEP_CUTS` times while the top moves (docs/theory.md, section 15, "Where the
        deep grid ends").  A choice: every top gives certified bounds.
        """
        t = self._tilts[key]
        if not all(log_tails(m) for m, _ in self.kinds):
            return t
        total = sum(n for _, n in self.kinds)
        tail_log = DEEP_TAIL_LOG
        between: tuple | None = None  # a top tried on the way: dropped when the next is made
        for _ in range(DEEP_CUTS):
            found = _log_terms(t.up, eps)
            leak = log_fraction(t.up.leak)
            if found is None or found < leak + math.log(DEEP_CUT):  # the answer lies beyond
                want = 2 * tail_log  # the top (mostly): twice as deep
            else:
                want = found + math.log(DEEP_CUT) - math.log(total)
            want = DEEP_CUT_STEP * math.floor(want / DEEP_CUT_STEP)  # nearby queries share
            if want == tail_log:
                break
            tail_log = want
            cells = [  # the forward measures only: the tilted forward folds read no other
                (cell_masses(m, h, deep=True, tail_log=want, forward=True), n)
                for m, n in self.kinds
            ]
            parts = [(c["fwd_up"], n) for c, n in cells]
            lam = float(f"{_saddle(parts, float(h), eps):.3g}")
            k2 = ("fwd", lam, True, h, want)
            if between is not None and between != k2:
                # a third top: the one tried on the way was asked for its estimate only, and
                # the first (``key``) is what TILT_CACHE would drop next; both go before the
                # new folds are made (peak memory: four long folds fewer alive)
                self._tilts.pop(between, None)
                self._tilts.pop(key, None)
            del t  # the cache's reference only: a dropped top is freed before the new folds
            t = self._keep_tilt(
                k2, lambda cells=cells, lam=lam: _Tilted(cells, "fwd", lam, h, long=True)
            )
            between = k2
        return self._deep_fine(t, eps, h, tail_log)

    def _deep_fine(self, t: _Tilted, eps: float, h: Fraction, tail_log: float) -> _Tilted:
        """The deep fold ``t`` again on a grid fine enough for its tilt, when affordable.

        Tilted at ``lam``, a cell of width ``h`` weighs its two ends ``e^{lam h}`` apart:
        the upper measure's error is about ``(lam h)^2`` and the lower measure's rounding
        about ``lam h`` relative, per use in the tail.  Where ``lam h`` is over
        :data:`DEEP_LAM_H` (a small rate and a tiny answer: ``lam`` in the thousands), the
        grid is halved until it is not, while one use's grid spans at most
        :data:`DEEP_LAM_CELLS` cells and the fold's estimated FFT length is at most
        :data:`DEEP_LAM_FFT` (section 15, "Where the deep grid ends"); only a grid chosen
        here (``auto``).  Not where the Chernoff bound at the tilt is over
        ``e^DEEP_LOOSE`` times the fold's estimate (a heavy tail: the folds' error, relative
        to that bound, then swamps the answer on any grid).  A choice: every grid gives
        certified bounds.
        """
        lam = t.up.lam
        if not self.auto or not lam * float(h) > DEEP_LAM_H:
            return t
        found = _log_terms(t.up, eps)
        if found is None or t.up.logc - lam * eps - found > DEEP_LOOSE:
            return t
        def forward_cells(step: Fraction) -> list:
            return [
                (cell_masses(m, step, deep=True, tail_log=tail_log, forward=True), n)
                for m, n in self.kinds
            ]

        fine = self._lam_width(
            lam, h, tail_log, lambda: [(c["fwd_up"], n) for c, n in forward_cells(h)]
        )
        if fine == h:
            return t
        cells = forward_cells(fine)
        ups = [(c["fwd_up"], n) for c, n in cells]
        lam2 = float(f"{_saddle(ups, float(fine), eps):.3g}")
        key = ("fwd", lam2, True, fine, tail_log)
        try:
            return self._keep_tilt(key, lambda: _Tilted(cells, "fwd", lam2, fine, long=True))
        except ResourceLimitError:
            return t

    def _lam_width(self, lam: float, h: Fraction, tail_log: float, up: Any) -> Fraction:
        """The width :meth:`_deep_fine` refines a deep fold of grid ``h`` tilted at ``lam`` to.

        ``h / 2^j``, the coarsest with ``lam h / 2^j`` at most :data:`DEEP_LAM_H`, as long as
        one use's grid (up to ``e^tail_log``) spans at most :data:`DEEP_LAM_CELLS` cells of
        it and the fold's estimated FFT length (:func:`fold_length`, from the forward upper
        measures ``up()`` of ``h``, made only when asked) is at most :data:`DEEP_LAM_FFT`;
        ``h`` itself when none is (section 15, "Where the deep grid ends").  A choice.
        """
        fine = h
        while lam * float(fine) > DEEP_LAM_H:
            finer = fine / 2
            spans = [_loss_index_range(m, finer, tail_log) for m, _ in self.kinds]
            if any(r[1] - r[0] > DEEP_LAM_CELLS for r in spans):
                break
            fine = finer
        if fine == h:
            return h
        parts = up()
        while fine < h and fold_length(parts, float(h), lam, float(fine)) > DEEP_LAM_FFT:
            fine *= 2
        return fine

    def _deep_guess(self, eps: Fraction) -> tuple[float, float, float] | None:
        """Float guesses of the forward deep tilted folds at ``eps``, before any is built.

        ``(gap, chernoff, r)`` from one use's deep measures of ``h = h_deep`` (the grid's
        top at :data:`DEEP_TAIL_LOG`), tilted at the saddle point ``lam`` of ``eps``: ``gap``
        the measures' gap ``sum k (K_+(lam) - K_-(lam))`` (``K_+``, ``K_-`` the log-MGFs of
        the upper and lower measures), about the folds' log-width on ``h``; ``r = h' / h``
        for the width ``h'`` the fold would be refined to (:meth:`_lam_width`: the gap
        times ``r^2`` is the smaller estimate of the refined folds', see :meth:`_futile`);
        ``chernoff`` the log of the upper measures' Chernoff bound ``sum k K_+(lam) - lam
        eps``.  None off a grid chosen here.  Only a choice of the order of the routes
        (docs/theory.md, section 15, "When the deep folds cannot narrow").
        """
        if not self.auto:
            return None
        h, hf = self.h_deep, float(self.h_deep)
        cells = [(cell_masses(m, h, deep=True), n) for m, n in self.kinds]
        ups = [(c["fwd_up"], n) for c, n in cells]
        lam = _saddle(ups, hf, float(eps))
        c_up = math.fsum(n * _log_mgf(c["fwd_up"], hf, lam) for c, n in cells)
        c_lo = math.fsum(n * _log_mgf(c["fwd_lo"], hf, lam) for c, n in cells)
        if not (math.isfinite(c_up) and math.isfinite(c_lo)):
            return None
        r = float(self._lam_width(lam, h, DEEP_TAIL_LOG, lambda: ups) / h)
        return c_up - c_lo, c_up - lam * float(eps), r

    def _deep_grid(self, direction: str, eps: Fraction | float) -> Fraction:
        """The finer deep grid's width for ``delta(eps)`` when affordable, else ``h_deep``.

        Only for a grid chosen here (``auto``): its own width when finer than ``h_deep`` (a
        small rate: one use's loss spread covers few cells of ``h_deep``), else half of
        ``h_deep``; kept when one use's deep grid spans at most :data:`DEEP_FINE_CELLS`
        cells of it and the tilted
        fold's estimated FFT length (:func:`fold_length`, from the deep grid of
        ``h_deep`` tilted at the saddle point of ``eps``) is at most
        :data:`DEEP_FINE_FFT`; else ``h_deep`` (section 15, "Choosing the route of a small
        delta").  A choice: every grid gives certified bounds.
        """
        if not self.auto:
            return self.h_deep
        # subsampled noise only (not an allocation's epoch, a mixture): read by its fields,
        # as the one mechanism protocol asks (no isinstance on mechanism classes)
        if not all(hasattr(m, "noise") and hasattr(m, "q") for m, _ in self.kinds):
            return self.h_deep
        fine = self.h if self.h < self.h_deep else self.h_deep / 2
        for m, _ in self.kinds:
            lo, hi, _, _ = _loss_index_range(m, fine, DEEP_TAIL_LOG)
            if hi - lo > DEEP_FINE_CELLS:
                return self.h_deep
        coarse = [(cell_masses(m, self.h_deep, deep=True), n) for m, n in self.kinds]
        parts = [(c[f"{direction}_up"], n) for c, n in coarse]
        hf = float(self.h_deep)
        lam = _saddle(parts, hf, float(eps))
        if fold_length(parts, hf, lam, float(fine)) > DEEP_FINE_FFT:
            return self.h_deep
        return fine


def _log_terms(fold: _Fold, eps: float) -> float | None:
    """The log of a tilted fold's float estimate of its lattice part at ``eps`` (no leak).

    Below the doubles' range too: the terms are summed in units of their largest weight
    (a float guess: it places the deep grid's top only).  None when no term is positive.
    """
    np = _numpy()
    h = float(fold.h)
    j = max(math.floor(eps / h) + 1 - fold.w_lo, 0)
    if j >= fold.T.size:
        return None
    t = fold.T[j:] * h
    arg = fold.logc - fold.lam * t
    top = float(np.max(arg))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        s = float(np.sum(np.maximum(fold.y[j:], 0) * -np.expm1(eps - t) * np.exp(arg - top)))
    return top + math.log(s) if s > 0 else None



def _hopeless(guess: tuple[float, float, float], known: tuple[Fraction, Fraction]) -> bool:
    """Whether deep folds of :meth:`DeepTilts._deep_guess` ``guess`` cannot narrow ``known``.

    A choice of work (section 15, "When the deep folds cannot narrow"): only when ``known``
    has a positive lower end and the guess's measures can hold it (their Chernoff bound at
    least its lower end: else the answer lies beyond their top, where the deep grid's own
    top is moved, and the guess says nothing); then when the guessed gap is at least
    :data:`DEEP_GAIN` times ``log(hi / lo)`` of ``known``.
    """
    lo, hi = known
    if not 0 < lo < hi:
        return False
    gap, chernoff, r = guess
    log_lo = log_fraction(lo)
    return chernoff >= log_lo and gap * r * r >= DEEP_GAIN * (log_fraction(hi) - log_lo)


def _may_narrow(ends: dict[str, tuple[Fraction, Fraction]], d: str) -> bool:
    """Whether the finer deep grid's tilted folds of direction ``d`` are worth building.

    A choice of work, not of soundness (section 15, "Choosing the route of a small delta"):
    always when ``d`` holds the answer's upper end and the answer's lower end is positive
    (its own lower end may be 0: the finer grid still lowers its upper end); else not when
    ``d``'s enclosure so far spans a factor over ``e^FINE_REACH`` (lower end 0 included: a
    value beyond the deep grid's tails and long doubles, which a grid a few
    times finer leaves as wide), nor when ``d``'s upper end is relatively more than
    :data:`DELTA_ROUTE_WIDTH` below the largest one while the lower end of the answer is
    positive (``d`` can then neither lower the answer's upper end nor raise its lower end
    to within that width of it).
    """
    lo, hi = ends[d]
    top = max(e[1] for e in ends.values())
    bottom = max(e[0] for e in ends.values())
    if bottom > 0 and hi >= (1 - DELTA_ROUTE_WIDTH) * top:
        return True  # d holds the answer's upper end: lowering it narrows the answer
    if not (lo > 0 and hi <= _FINE_FACTOR * lo):
        return False
    return hi >= (1 - DELTA_ROUTE_WIDTH) * top or bottom == 0
