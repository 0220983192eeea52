"""Subsampled Gaussian and Laplace noise: certified two-sided bounds on a loss grid.

The queries of a composition of subsampled additive noise (:class:`NoiseGridComposition`):
``delta(eps)`` is the larger of the two directions' values ``E_A[(1 - e^{eps - L})_+]``,
each enclosed between the fold of the lower lattice measures (shifted by ``k tau``) and the
fold of the upper ones plus their leak; ``eps(delta)`` is certified from those bounds
(:mod:`~dpcompose_exact.engines.gridepsilon`, the search and its route).  Small deltas
(below :data:`TILT_REGULAR`) are refined by exponentially tilted folds at the saddle point
of the query; tiny ones (below :data:`TILT_BELOW`) on the deep grid in long doubles, except
down to :data:`ROUTE_FLOOR`, where the ordinary route is tried first (``eps(delta)`` on a
finer grid chosen by its estimated FFT length) and the deep one only narrows an answer
still wide (docs/theory.md, section 15: "Gaussian and Laplace noise: a certified loss
grid", "Small and tiny deltas: exponential tilting" and "Choosing the route of a small
delta").

The machinery lives in one module per job, every name re-exported here:

* :mod:`~dpcompose_exact.engines.gridsteps`: the grid of one use (its width, its points);
* :mod:`~dpcompose_exact.engines.gridcells`: the discretisation of one use (distribution
  functions in Arb, the four lattice measures, :func:`cell_masses`);
* :mod:`~dpcompose_exact.engines.gridbuckets`: the lower measures' buckets;
* :mod:`~dpcompose_exact.engines.gridmeasure`: lattice measures and certified float sums;
* :mod:`~dpcompose_exact.engines.gridfold`: the certified FFT folds (:class:`_Fold`), their
  FFT power and its error bound in :mod:`~dpcompose_exact.engines.gridfft`;
* :mod:`~dpcompose_exact.engines.gridtilt`: exponential tilting (:class:`_Tilted`);
* :mod:`~dpcompose_exact.engines.griddeep`: the tilted folds per direction, the deep grid's
  top and width (:class:`~dpcompose_exact.engines.griddeep.DeepTilts`);
* :mod:`~dpcompose_exact.engines.gridepsilon`: ``eps(delta)``, the search and the route of
  a small delta (:class:`~dpcompose_exact.engines.gridepsilon.EpsilonQueries`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError
from ..mechanisms.noise import AdditiveNoise, SubsampledNoise
from ..numbers.convert import log_fraction
from ..numbers.value import Value
from ..regions.protocol import PairForm
from .bounds import EnclosureRows
from .gridbuckets import (
    _certified_buckets,
    _choose_tau,
    _loss_steps,
    _lower_buckets,
    _lower_measure,
    _on_target,
    _share,
    _sweep,
)
from .gridcells import (
    DEEP_MAX_STRIDE,
    DEEP_TAIL_LOG,
    DEFAULT_GRID,
    FINE_MASS,
    GRADE_MASS,
    GRADE_RATIO,
    MAX_GRID_CELLS,
    MAX_GRID_POINTS,
    MAX_STRIDE,
    TAIL_MASS,
    _beta_float,
    _cdf_table,
    _cell_masses,
    _cells,
    _check_grid_size,
    _grid_points,
    _loss_float,
    _loss_index_range,
    _tail_points,
    _upper_tail_index,
    align_grid,
    auto_grid,
    cell_masses,
    log_tails,
    noise_x,
    uses_grid,
)
from .griddeep import (
    _FINE_FACTOR,
    DEEP_CUT,
    DEEP_CUT_STEP,
    DEEP_CUTS,
    DEEP_FINE_CELLS,
    DEEP_FINE_FFT,
    DEEP_GAIN,
    DEEP_LAM_CELLS,
    DEEP_LAM_FFT,
    DEEP_LAM_H,
    DEEP_LOOSE,
    DELTA_ROUTE_WIDTH,
    FINE_REACH,
    TILT_CACHE,
    DeepTilts,
    _log_terms,
    _may_narrow,
)
from .gridepsilon import (
    ROUTE_FFT,
    ROUTE_FLOOR,
    ROUTE_PREDICT,
    ROUTE_WIDTH,
    TILT_BELOW,
    TILT_REGULAR,
    EpsilonQueries,
)
from .gridfold import FFT_DOUBLE, MAX_FFT, WINDOW_MASS, _Fold, _power, fold_length
from .gridmeasure import (
    _PREC,
    _U64,
    _arb,
    _composed_leak,
    _dot_up,
    _down,
    _frac,
    _log_mgf,
    _Measure,
    _numpy,
    _sum_up,
    _up,
)
from .gridreverse import REV_COARSE, REV_GAP, bulk_delta
from .gridsplit import split_delta
from .gridtilt import _golden, _saddle, _tilt, _Tilted, _window_tilt
from .results import Exactness

__all__ = [
    "NoiseGridComposition",
    "cell_masses",
    "compose_noise",
    "DEFAULT_GRID",
]

#: the names kept importable from here since the split (their homes: the modules above)
_REEXPORTED = (
    AdditiveNoise, SubsampledNoise, DEEP_MAX_STRIDE, DEEP_TAIL_LOG, FINE_MASS, GRADE_MASS,
    GRADE_RATIO, MAX_GRID_CELLS, MAX_GRID_POINTS, MAX_STRIDE, TAIL_MASS, FFT_DOUBLE, MAX_FFT,
    WINDOW_MASS, _PREC, _U64, _beta_float, _cdf_table, _cell_masses, _cells, _check_grid_size,
    _grid_points, _loss_float, _loss_index_range, _tail_points, _upper_tail_index, noise_x,
    _certified_buckets, _choose_tau, _loss_steps, _lower_buckets, _lower_measure, _on_target,
    _share, _sweep, _composed_leak, _dot_up, _down, _frac, _log_mgf, _Measure, _numpy,
    _sum_up, _up, _power, _tilt, _Tilted, _saddle, _golden, ROUTE_FFT, ROUTE_PREDICT, ROUTE_WIDTH,
    log_fraction, log_tails, fold_length, _window_tilt, TILT_CACHE, FINE_REACH, _FINE_FACTOR,
    DEEP_FINE_CELLS, DEEP_FINE_FFT, DEEP_CUT, DEEP_CUT_STEP, DEEP_CUTS, DEEP_LAM_H,
    DEEP_LAM_CELLS, DEEP_LAM_FFT, DEEP_LOOSE, _log_terms, _may_narrow,
)

#: ... each finer grid halving the last, at most this many times
ROUTE_HALVINGS = 3
#: ... the halvings of one step the fewest whose ``4^j`` is at least FINER_SLACK times the
#: enclosure's relative width over DELTA_ROUTE_WIDTH (the width is second order in h)
FINER_SLACK = Fraction(5, 4)
#: ... and from this many uses on, the split by the number of large uses (:mod:`.gridsplit`)
#: comes after the finer grids, not before (its bulk's fine cells cost most at many uses,
#: where the finer grids alone reach the width: docs/theory.md, section 15, "Many uses")
SPLIT_LATE_USES = 10**4


class _LazyFolds:
    """The four folds of a composition by name (``fwd_up``, ...), each built when first used.

    A direction that cannot decide a query never pays for its lower fold.
    """

    def __init__(self, cells: list[tuple[dict[str, Any], int]], h: Fraction) -> None:
        self._cells, self._h = cells, h
        self._built: dict[str, _Fold] = {}

    def __getitem__(self, name: str) -> _Fold:
        if name not in self._built:
            self._built[name] = _Fold([(c[name], n) for c, n in self._cells], self._h)
        return self._built[name]


class NoiseGridComposition(EpsilonQueries, DeepTilts, EnclosureRows):
    """Certified two-sided bounds of compositions of subsampled Gaussian/Laplace mechanisms.

    ``delta(eps)`` and ``epsilon(delta)`` are interval Values: the lower end from the
    optimistic lattice measures, the upper end from the connect-the-dots ones (section 15).

    Args:
        kinds: ``[(SubsampledNoise, count), ...]``.
        h: the loss grid width (None: :func:`~dpcompose_exact.engines.gridcells.auto_grid`
            from :data:`DEFAULT_GRID`, finer where one use's loss is narrow).
        label: what was composed, for ``repr``.
    """

    kind = Exactness.BOUNDS
    no_list = (
        "a composition with subsampled mechanisms has two directions and no single constraint list"
    )

    def __init__(
        self,
        kinds: Sequence[tuple[SubsampledNoise, int]],
        h: Fraction | None = None,
        label: str = "",
    ) -> None:
        items = [(m, int(n)) for m, n in kinds if n]
        if not items:
            raise InvalidParameterError("nothing to compose: every count is 0")
        self.kinds = items
        # None: DEFAULT_GRID (read at the call), finer for narrow losses (auto_grid)
        subs = [m for m, _ in items]
        uses = sum(n for _, n in items)
        counts = [n for _, n in items]
        # many uses: a coarser width when the composed loss's window would outgrow the FFT
        # (the grid's error is second order in h; docs/theory.md, section 15, "Many uses")
        wide = uses_grid(subs, DEFAULT_GRID, counts)
        self.h = (
            align_grid(subs, wide if wide > DEFAULT_GRID else auto_grid(subs, wide), uses)
            if h is None else Fraction(h)
        )
        #: the grid was chosen here (a small delta may then be answered on a finer one)
        self.auto = h is None
        #: the deep grid's width (tiny deltas): not refined (its tails to 1e-306 and its
        #: long-double folds grow with 1/h faster than the default grid's)
        self.h_deep = align_grid(subs, wide, uses) if h is None else self.h
        self.label = label
        self._top_loss: Fraction | None = None  # eps(0) of bounded noise, when asked
        self._cells = [(cell_masses(m, self.h), n) for m, n in items]
        self.folds = _LazyFolds(self._cells, self.h)
        self._tilts: dict[tuple[str, float, bool, Fraction], _Tilted] = {}
        self._finer: NoiseGridComposition | None = None
        #: per direction, the grid of its last deep tilted fold (:meth:`_bounded_ends`)
        self._deep_h: dict[str, Fraction] = {}
        #: per (direction, eps), what the deep grid's tilted folds showed, or the guess that
        #: kept them from being built (griddeep: DeepTilts._futile)
        self._deep_seen: dict[tuple[str, Fraction], tuple] = {}

    def _pure_epsilon(self) -> Value:
        """``eps(0)``: the largest loss, ``sum_i k_i log(1 + q_i (e^{eps0_i} - 1))`` (section 15).

        Laplace losses are bounded; the forward direction's bound is the larger and is
        reached with positive probability: :func:`~.noiseloss.largest_noise_loss` (exact
        at rate 1, else a certified Value).  Gaussian noise never reaches delta = 0.
        """
        from .noiseloss import largest_noise_loss

        top = None
        if self._bounded():
            top = largest_noise_loss([(m.loss_pair(), n) for m, n in self.kinds], "fwd")
        if top is None:
            raise InvalidParameterError(
                "delta = 0: Gaussian noise never reaches delta = 0 (eps(0) is infinite); "
                "give a delta in (0, 1)"
            )
        return top

    def _largest_loss(self) -> Fraction:
        """A rational at or above the largest loss ``eps(0)`` of bounded (Laplace) noise."""
        if self._top_loss is None:
            self._top_loss = _frac(self._pure_epsilon().ends()[1])
        return self._top_loss

    def delta_bounds(
        self, eps: Fraction, eps_hi: Fraction | None = None, deep: bool = True,
        target: Fraction | None = None,
    ) -> tuple[Fraction, Fraction]:
        """``(lower, upper)`` rationals enclosing ``delta`` at every eps in ``[eps, eps_hi]``.

        ``deep=False``: never the deep grid (the finer grid's part of a small delta).
        ``target``: a decision only (is ``delta <= target``?): the enclosure is returned as
        soon as it lies on one side of ``target`` (upper end ``<= target`` or lower end
        ``> target``), before any further refinement.
        """
        if self._bounded() and eps >= self._largest_loss():
            return Fraction(0), Fraction(0)  # no loss exceeds eps: exactly 0, no fold built
        f = self.folds
        top = eps if eps_hi is None else eps_hi
        ups = {d: f[f"{d}_up"].bound(eps, True) for d in ("fwd", "rev")}
        if target is not None and max(ups.values()) <= target:
            return Fraction(0), max(ups.values())  # both upper folds decide: no lower fold
        ends: dict[str, tuple[Fraction, Fraction]] = {}
        best = Fraction(0)
        # small and no decision asked: the tilted folds below bound both ends of every
        # direction that can hold the answer, so the untilted lower folds (their error is
        # absolute, far above a small delta) are not built (section 15, "Reusing the folds")
        tilted_next = target is None and 0 < max(ups.values()) < TILT_REGULAR
        for d in sorted(ups, key=lambda d: -ups[d]):  # a direction whose upper bound is at
            low = Fraction(0)  # most the other's lower one cannot raise the lower end: its
            if ups[d] > best and not tilted_next:  # lower fold is not built (0 is a lower
                low = f[f"{d}_lo"].bound(top, False)  # bound)
            best = max(best, low)
            ends[d] = (low, ups[d])
        hi = max(e[1] for e in ends.values())
        if target is not None and _decided(ends, target):
            return min(best, hi), hi
        if 0 < hi < TILT_REGULAR:  # small: the absolute error terms matter, tilt
            # below TILT_BELOW: the default grid's tilt first (doubles), the deep grid's
            # only when that leaves a relative width over DELTA_ROUTE_WIDTH (section 15)
            # the finer grid's (when its folds are not too long), the deep grid's only when
            # those leave a relative width over DELTA_ROUTE_WIDTH (section 15); every
            # enclosure is certified, so they are intersected
            # bounded (Laplace) losses: no tails for the deep grid to reach, so its long
            # doubles on a coarser grid are skipped (the width is :meth:`_bounded_ends`'s)
            bounded = self.auto and self._bounded()
            deep_first = deep and hi < ROUTE_FLOOR and not bounded
            # one Gaussian kind whose deep folds are guessed wider than the goal: the split
            # first, and the forward deep folds only if they can narrow what it leaves
            # (section 15, "When the deep folds cannot narrow")
            guess, early = None, None
            if deep_first and target is None and self.auto and len(self.kinds) == 1:
                guess = self._deep_guess(eps)
                if guess is not None and guess[0] * guess[2] ** 2 > DEEP_GAIN * DELTA_ROUTE_WIDTH:
                    early = self._split_ends(ends, eps, top)
            # where the split may answer next (one kind of subsampled Gaussian noise), the
            # deep forward fold is not cut first (:meth:`_deep_cut`: most of this stage's
            # time): the split's enclosure is relative, the cut's only decides whether the
            # split runs; the deep grid's stage cuts it when still wide (section 15,
            # "Choosing the route of a small delta")
            self._tilt_ends(
                ends, eps, top, deep_first, guess=guess if early else None,
                cut=not self._split_may(),
            )
            small = ROUTE_FLOOR <= hi  # below TILT_REGULAR: finer grids first
            tiny = deep and hi < TILT_BELOW
            lo, hi = (max(e[i] for e in ends.values()) for i in (0, 1))
            if target is not None and _decided(ends, target):
                return min(lo, hi), hi
            # many uses, a small delta: the finer grids first, the split only if still wide
            late = small and sum(n for _, n in self.kinds) >= SPLIT_LATE_USES
            if (
                tiny and not late and hi - lo > DELTA_ROUTE_WIDTH * hi
                and (
                    (early is not None or self._split_ends(ends, eps, top))
                    | self._bulk_ends(ends, eps, top)
                )
            ):
                lo, hi = (max(e[i] for e in ends.values()) for i in (0, 1))
                if hi - lo <= DELTA_ROUTE_WIDTH * hi or (
                    target is not None and _decided(ends, target)
                ):
                    return min(lo, hi), hi
            if small and deep and hi - lo > DELTA_ROUTE_WIDTH * hi:
                lo, hi = self._finer_ends(eps, eps_hi, target, (lo, hi), ends)
                if target is not None and (hi <= target or lo > target):
                    return min(lo, hi), hi
                if late and tiny and hi - lo > DELTA_ROUTE_WIDTH * hi and (
                    self._split_ends(ends, eps, top) | self._bulk_ends(ends, eps, top)
                ):
                    lo = max(lo, max(e[0] for e in ends.values()))
                    hi = min(hi, max(e[1] for e in ends.values()))
                    if hi - lo <= DELTA_ROUTE_WIDTH * hi or (
                        target is not None and (hi <= target or lo > target)
                    ):
                        return min(lo, hi), hi
                if hi < TILT_BELOW and hi - lo > DELTA_ROUTE_WIDTH * hi and not bounded:
                    self._tilt_ends(ends, eps, top, True)
                    lo = max(lo, max(e[0] for e in ends.values()))
                    hi = min(hi, max(e[1] for e in ends.values()))
            if target is not None and (hi <= target or lo > target):
                return min(lo, hi), hi
            if deep and hi < TILT_BELOW:
                if bounded and not lo > 0:  # beyond the doubles' reach: the deep grid's
                    self._tilt_ends(ends, eps, top, True)  # long doubles, as before
                    lo = max(lo, max(e[0] for e in ends.values()))
                    hi = min(hi, max(e[1] for e in ends.values()))
                lo, hi = self._deep_ends(ends, eps, top, (lo, hi))
            return min(lo, hi), hi
        lo = max(e[0] for e in ends.values())
        return min(lo, hi), hi

    def _finer_ends(
        self, eps: Fraction, eps_hi: Fraction | None, target: Fraction | None,
        known: tuple[Fraction, Fraction],
        ends: dict[str, tuple[Fraction, Fraction]] | None = None,
    ) -> tuple[Fraction, Fraction]:
        """The enclosure so far (``known``) after the tilted folds of finer grids.

        The grid of :meth:`_route_grid` (``h / 2^j`` when its folds are not too long), then
        finer again, at most :data:`ROUTE_HALVINGS` halvings in all, while the enclosure is
        relatively wider than :data:`DELTA_ROUTE_WIDTH` (its width, second order in ``h``
        times the tilt, falls about fourfold a halving, so ``j`` is the fewest halvings
        whose ``4^j`` covers :data:`FINER_SLACK` times the width over the goal; one when the
        lower end is 0); each intersected (all certified; docs/theory.md, section 15,
        "Choosing the route of a small delta" and "Reusing the folds").

        ``ends``: the per-direction enclosures so far.  Given, a finer grid tilts only the
        directions that can hold the answer (a direction whose certified upper end is below
        another's certified lower end never does: both bound the same two numbers on every
        grid), builds no untilted fold (the tilted ones bound both ends) and narrows
        ``ends`` in place; else each finer grid's :meth:`delta_bounds` (every stage but the
        deep one).
        """
        lo, hi = known
        top = eps if eps_hi is None else eps_hi
        live = None
        if ends is not None:
            floor = max(e[0] for e in ends.values())
            live = {d: e for d, e in ends.items() if e[1] >= floor and e[1] > 0}
        grid: NoiseGridComposition = self
        done = 0
        while done < ROUTE_HALVINGS:
            j = 1
            if live is not None and lo > 0:  # the width falls about fourfold a halving
                need = FINER_SLACK * (hi - lo) / (DELTA_ROUTE_WIDTH * hi)
                while 4**j < need and j < ROUTE_HALVINGS - done:
                    j += 1
            fine = grid._route_grid(
                float(eps), float(hi), chain=grid is not self, halvings=j,
                directions=None if live is None else list(live),
            )
            if fine is grid:
                break
            try:
                if live is None:
                    lo_f, hi_f = fine.delta_bounds(eps, eps_hi, False, target)
                else:
                    fine._tilt_ends(live, eps, top, False)
                    self._deep_h.update(fine._deep_h)  # the grids of these widths
                    lo_f = max(e[0] for e in live.values())
                    hi_f = max(e[1] for e in live.values())
            except ResourceLimitError:
                break
            lo, hi = max(lo, lo_f), min(hi, hi_f)
            if hi - lo <= DELTA_ROUTE_WIDTH * hi or (
                target is not None and (hi <= target or lo > target)
            ):
                break
            done += round(math.log2(grid.h / fine.h)) if fine.h < grid.h else 1
            grid = fine
        if live is not None and ends is not None:
            ends.update(live)
        return lo, hi

    def _split_may(self) -> bool:
        """Whether :meth:`_split_ends` may apply: one kind of subsampled Gaussian, ``k >= 2``."""
        if not self.auto or len(self.kinds) != 1:
            return False
        (m, n), = self.kinds
        return n >= 2 and log_tails(m)

    def _split_ends(
        self, ends: dict[str, tuple[Fraction, Fraction]], eps: Fraction, top: Fraction
    ) -> bool:
        """Narrow the forward direction of ``ends`` by parts (:mod:`.gridsplit`), if it applies.

        One kind of subsampled Gaussian noise on a grid chosen here: the forward
        ``delta(eps)`` split by the number of large uses, each part tilted at its own
        saddle point (docs/theory.md, section 15, "Split by the number of large uses"),
        intersected with the enclosure so far (both certified).  False when it does not
        apply or is refused for its size.
        """
        if not self.auto or len(self.kinds) != 1 or ends["fwd"][1] == 0:
            return False
        (m, n), = self.kinds
        try:
            got = split_delta(m, n, eps, self.h_deep)
            if got is not None and top != eps:
                far = split_delta(m, n, top, self.h_deep)
                got = None if far is None else (far[0], got[1])
        except ResourceLimitError:
            return False
        if got is None:
            return False
        lo, hi = ends["fwd"]
        ends["fwd"] = (max(lo, got[0]), min(hi, got[1]))
        return True

    def _bulk_ends(
        self, ends: dict[str, tuple[Fraction, Fraction]], eps: Fraction, top: Fraction
    ) -> bool:
        """Narrow each direction of ``ends`` on a grid fine for its bulk (:mod:`.gridreverse`).

        One kind of subsampled Gaussian noise on a grid chosen here, for each direction
        while its enclosure is relatively wider than :data:`DELTA_ROUTE_WIDTH` and its upper
        end is above the answer's lower end (else it moves neither end): the reverse
        ``delta(eps)`` with its large uses raised to a cut, the forward one with the
        outcomes beyond its top as the leak, tilted on a grid fine enough for the bulk of
        small losses (docs/theory.md, section 15, "The reverse direction by its cut"),
        first coarse (:data:`~.gridreverse.REV_COARSE`: enough to show one direction below
        the other), then narrow (:data:`~.gridreverse.REV_GAP`), each intersected with the
        enclosure so far (all certified).  False when it does not apply or is refused for
        its size.
        """
        if not self.auto or len(self.kinds) != 1:
            return False
        (m, n), = self.kinds
        done, skip = False, set()
        for gap in (REV_COARSE, REV_GAP):  # coarse first: often enough to show it below
            for d in sorted(ends, key=lambda d: -ends[d][1]):
                lo, hi = ends[d]
                if d in skip or hi <= max(e[0] for e in ends.values()) or (
                    hi - lo <= DELTA_ROUTE_WIDTH * hi
                ):
                    continue  # it moves neither end of the answer (or is narrow already)
                try:
                    got = bulk_delta(m, n, eps, self.h_deep, d, None if top == eps else top, gap)
                except ResourceLimitError:
                    got = None
                if got is None or got[0] == 0:  # refused, or no bulk carries it: not again
                    skip.add(d)
                if got is not None:
                    ends[d] = (max(lo, got[0]), min(hi, got[1]))
                    done = True
        return done

    def delta_decision(self, eps: Fraction, target: Fraction) -> Value:
        """An enclosure of ``delta(eps)``, refined only until it lies on one side of ``target``.

        The stages of :meth:`delta_bounds` (the upper folds, the lower folds, the tilted
        folds, the finer and the deep grids) stop at the first that decides ``delta(eps) <=
        target``; every stage is certified, so the enclosure is (a calibration's verdict).
        """
        lo, hi = self.delta_bounds(*_eps_range(eps), target=Fraction(target))
        return Value.from_interval(_arb(lo), _arb(hi))

    def delta(self, eps: Any) -> Value | list[Value]:
        """An enclosure of ``delta(eps) = max`` of the two directions."""
        if isinstance(eps, (list, tuple)):
            return [self.delta(e) for e in eps]  # type: ignore[misc]
        lo, hi = self.delta_bounds(*_eps_range(eps))
        return Value.from_interval(_arb(lo), _arb(hi))

    def leak_upper(self) -> float:
        """A double >= ``delta`` at infinite eps (the tails the grid put at +inf)."""
        leak = max(self.folds["fwd_up"].leak, self.folds["rev_up"].leak)
        v = float(leak)
        return min(1.0, math.nextafter(v, math.inf) if v else 0.0)

    def describe(self) -> str:
        """``"certified bounds (loss grid), two directions"``."""
        return "certified bounds (loss grid), two directions"

    def __repr__(self) -> str:
        return f"NoiseGridComposition({self.label or 'subsampled noise'}; certified bounds)"


def _decided(ends: dict[str, tuple[Fraction, Fraction]], target: Fraction) -> bool:
    """Whether per-direction enclosures decide ``max`` of the directions ``<= target``."""
    return max(e[1] for e in ends.values()) <= target or max(e[0] for e in ends.values()) > target


def _eps_range(eps: Any) -> tuple[Fraction, Fraction]:
    """Rationals ``lo <= eps <= hi`` (equal unless eps has logarithms, e.g. ``log(2)``)."""
    from ..numbers.convert import parse_eps

    if isinstance(eps, (Fraction, int)):
        e = Fraction(eps)
        if e < 0:
            raise InvalidParameterError(f"eps = {e} is negative; valid range: eps >= 0")
        return e, e
    form = parse_eps(eps)
    if not form.logs:
        return form.rational, form.rational
    with flint.ctx.workprec(_PREC):
        ball = _arb(form.rational)
        for p, c in form.logs:
            ball += _arb(c) * flint.arb(p).log()
        return max(_frac(ball.lower()), Fraction(0)), _frac(ball.upper())


def compose_noise(
    kinds: Sequence[tuple[Any, int]], h: Fraction | None = None, label: str = ""
) -> NoiseGridComposition:
    """Compose subsampled noise mechanisms (only those: one line refuses anything else).

    ``h``: the loss grid width (None: :func:`~dpcompose_exact.engines.gridcells.auto_grid`
    from :data:`DEFAULT_GRID`, read at the call).
    """
    grid_kinds = []
    for m, count in kinds:
        pair = m.loss_pair()
        if pair.form is not PairForm.NOISE:
            raise InvalidParameterError(
                f"subsampled Gaussian/Laplace noise composes with other subsampled noise only "
                f"(certified loss grid); got {m!r} next to it"
            )
        grid_kinds.append((pair.grid_noise(), count))
    return NoiseGridComposition(grid_kinds, h, label)
