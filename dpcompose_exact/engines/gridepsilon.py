"""eps(delta) on a certified loss grid: the search, and the route of a small delta.

The queries ``eps(delta)`` of :class:`~dpcompose_exact.engines.subsample_grid.NoiseGridComposition`
(a mixin, :class:`EpsilonQueries`, that class's one job of inverting its certified bounds).
``delta(eps)`` is non-increasing in ``eps``, so ``eps(d) = inf {eps : delta(eps) <= d}`` lies
in ``[a, b]`` as soon as a certified lower bound of ``delta(a)`` exceeds ``d`` and a certified
upper bound of ``delta(b)`` is at most ``d``
(:func:`~dpcompose_exact.engines.gaussian.certify_epsilon`, docs/theory.md, section 15).  The
bounds are the folds' (:meth:`~dpcompose_exact.engines.gridfold._Fold.bound`); below
:data:`TILT_REGULAR` each direction that can decide an end is tilted at the saddle point of
the guess (its error relative to the Chernoff bound ``e^{K(lam) - lam eps}``); below
:data:`TILT_BELOW` the route is chosen by its cost: the ordinary route first, on the grid
its guesses choose, and the deep grid (:meth:`EpsilonQueries._tiny_epsilon`) only for an
answer still relatively wider than :data:`ROUTE_WIDTH`, the enclosures intersected (both
hold the one number).  Everything float here (the crossings of the folds' estimates, the
secant steps, the grid and tilt chosen) only places the search: the answer is certified
by the bounds alone (section 15, "Choosing the route of a small delta", "Choosing the
tilt", "Deciding, not enclosing"); those float guides live in
:mod:`~dpcompose_exact.engines.epsguide`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers.convert import log_fraction
from ..numbers.value import Value
from .epsguide import _bisect_estimate, _crossing, _fold_gain, _secant, _width_split
from .gaussian import certify_epsilon
from .gridcells import align_grid, cell_masses
from .gridfold import fold_length
from .gridmeasure import _frac, _log_mgf, _numpy
from .gridtilt import _golden, _saddle, _Tilted, _window_tilt

__all__ = ["EpsilonQueries"]

#: deltas whose untilted upper bound is below this are refined by a tilted fold (doubles)
TILT_REGULAR = 1e-3
#: ... and below this by a tilted fold of the deep grid in long doubles; except eps(delta)
#: for delta down to ROUTE_FLOOR: first the ordinary route (tilted doubles) on the grid
#: twice finer than the automatic one, or on it when the finer fold's estimated FFT length
#: is over ROUTE_FFT; its enclosure is kept when its relative width is at most ROUTE_WIDTH,
#: else intersected with the deep route's (docs/theory.md, section 15: "Choosing the route
#: of a small delta")
TILT_BELOW = 1e-6
ROUTE_FLOOR = 1e-15
ROUTE_WIDTH = Fraction(1, 10000)
ROUTE_FFT = 1 << 23
#: ... each finer grid halving the last, at most this many times (:meth:`_finer_epsilon`)
ROUTE_HALVINGS = 3
#: eps(delta) below TILT_REGULAR on the automatic grid: when the untilted folds' float
#: guesses of the two ends are relatively further apart than ROUTE_PREDICT * ROUTE_WIDTH,
#: the query is answered on the finer grid of :meth:`EpsilonQueries._route_grid`
ROUTE_PREDICT = Fraction(3, 4)
#: ... only when the untilted upper folds' certified bound at the upper guess is at most
#: (1 + GUESS_SLACK) delta: else their FFT noise (absolute, far above a tiny delta) may
#: place both guesses anywhere, and their gap predicts nothing (the tilted folds of this
#: grid are built and judged first, and a wide answer is tried again on the finer grid)
GUESS_SLACK = 1
#: the share of :data:`ROUTE_WIDTH` a step of the finer chain aims at (its prediction is a
#: float estimate)
ROUTE_AIM = 0.8
#: ... and below GUESS_FLOOR they are not computed at all (nor the zero test's folds, when
#: one use's total variation is above delta): a Chernoff guess places the tilted folds
GUESS_FLOOR = Fraction(1, 10**9)
#: eps(delta) at or above TILT_REGULAR whose answer is relatively wider than ROUTE_WIDTH:
#: again on the grid ``h / 2^j``, ``4^j >= WIDE_SLACK * width / ROUTE_WIDTH`` (the width
#: is second order in h), at most WIDE_HALVINGS halvings (:meth:`EpsilonQueries._wide_epsilon`)
WIDE_SLACK = 1.5
WIDE_HALVINGS = 4


class EpsilonQueries:
    """``eps(delta)`` of a composition on a certified loss grid (a mixin).

    The class that uses it gives ``kinds``, ``h``, ``h_deep``, ``auto``, ``folds`` (the
    untilted folds by name), ``_cells``, ``_finer``, ``_tilted(direction, eps, deep)``,
    ``delta_bounds(eps)`` and
    ``_pure_epsilon()``, and is built as ``type(self)(kinds, h, label)``.
    """

    kinds: list[tuple[Any, int]]
    h: Fraction
    h_deep: Fraction
    auto: bool
    folds: Any
    label: str
    _cells: list[tuple[dict[str, Any], int]]
    _finer: Any
    _tilts: dict
    _tilted: Any
    _pure_epsilon: Any
    #: the grid and tilted folds of the last :meth:`_ordinary_epsilon` (None: none kept)
    _last_route: tuple[Any, dict[str, Any]] | None = None

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """An enclosure of ``eps(delta)`` (0 when ``delta(0) <= delta``)."""
        if isinstance(delta, (list, tuple)):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        if delta == 0 or (isinstance(delta, str) and Fraction(delta) == 0):
            return self._pure_epsilon()
        d = _parse_delta(delta)
        # below GUESS_FLOOR one use's total variation, when above d, rules delta(0) <= d
        # out without the untilted folds (which such a query does not read otherwise)
        if not (d < GUESS_FLOOR and self._tv_lower() > d) and self._zero_epsilon(d):
            return Value.from_rational(0)
        if d < TILT_BELOW:
            return self._below_top(self._small_epsilon(d))
        first = self._ordinary_epsilon(d)
        if d < TILT_REGULAR and not _narrow(first):  # the finer grids of _route_grid
            first = self._finer_epsilon(d, first)
        elif not _narrow(first):
            first = self._wide_epsilon(d, first)
        return self._below_top(first)

    def _finer_epsilon(self, d: Fraction, first: Value) -> Value:
        """``first``, an enclosure of ``eps(d)``, narrowed by the tilted folds of finer grids.

        ``d`` below :data:`TILT_REGULAR`.  Each step is chosen from the split of the
        enclosure's width (:func:`_width_split`, the tilted folds' float estimates): its
        discretisation part, second order in ``h`` (a halving divides it by about 4), and
        the doubles' FFT error bound (about the same on any grid; about
        :func:`~.gridfft.mixed_gain` of it with long-double forward transforms, none in long
        doubles).  The cheapest of this grid or of the grids of :meth:`_route_grid` (one to
        :data:`ROUTE_HALVINGS` halvings, when their tilted folds' estimated FFT lengths
        allow), each in doubles, with long-double forward transforms or in long doubles,
        predicted to meet :data:`ROUTE_WIDTH` (:func:`_route_step`).  Up to
        :data:`ROUTE_HALVINGS` steps and halvings in all, while the enclosure is relatively
        wider than :data:`ROUTE_WIDTH` (at a tiny rate and many uses the automatic grid's floor,
        ``1e-4 / 2^7``, is a few times too coarse: ``q = 1.45e-5``, ``sigma = 1.22``, ``k =
        627197``, ``eps(1.8e-13)``).  The first step starts from the grid of ``first``'s own
        tilted folds.  Each enclosure is intersected with the ones so far (all certified;
        docs/theory.md, section 15, "Choosing the route of a small delta").  A grid refused
        for its size ends the chain.
        """
        src, folds = self._last_route or (self, {})
        grid, mode, room = src, _DOUBLE, ROUTE_HALVINGS
        for _ in range(ROUTE_HALVINGS):
            try:
                halvings, step = _route_step(first, folds, mode, room)
                # the last folds go before the next are built (peak memory; the tilt cache
                # decides what stays)
                tilted = [x for x, t in folds.items() if t is not None] or None
                folds, self._last_route = {}, None
                fine = grid
                if halvings:
                    hi = float(_frac(first.ends()[1]))
                    # the directions tilted so far (else untilted folds, of a finer grid or
                    # of this one below GUESS_FLOOR, would be built only to name them)
                    fine = grid._route_grid(
                        hi, float(d), chain=grid is not self, halvings=halvings,
                        directions=tilted,
                    )
                    room -= halvings
                if fine is grid and step <= mode:
                    break  # nothing finer or more precise to try
                mode = max(mode, step)
                first = _meet(
                    first,
                    self._ordinary_epsilon(d, fine, long=mode == _LONG, mixed=mode == _MIXED),
                )
                folds = self._last_route[1]
            except ResourceLimitError:
                break
            if _narrow(first):
                break
            grid = fine
        self._last_route = None
        return first

    def _wide_epsilon(self, d: Fraction, first: Value) -> Value:
        """``eps(d)`` again on a finer grid when this grid's answer ``first`` is too wide.

        ``d`` at least :data:`TILT_REGULAR` (no tilt): the width of the untilted folds'
        answer is the discretisation's, second order in ``h`` (docs/theory.md, section 15,
        "Choosing the route of a small delta"), so the grid ``h / 2^j`` with ``4^j`` at
        least the width over :data:`ROUTE_WIDTH` (times :data:`WIDE_SLACK`; at most
        :data:`WIDE_HALVINGS` halvings; for one Laplace pair realigned) is built and
        answers; the two enclosures are intersected (both hold the one number).  Only for a
        grid chosen here (``auto``); a finer grid over the grid's or the FFT's limits keeps
        ``first``.  A choice: every grid gives certified bounds.
        """
        if not self.auto:
            return first
        lo, hi = (_frac(x) for x in first.ends())
        if not hi > 0:
            return first
        ratio = float((hi - lo) / (ROUTE_WIDTH * hi)) * WIDE_SLACK
        j = 1
        while 4**j < ratio and j < WIDE_HALVINGS:
            j += 1
        uses = sum(n for _, n in self.kinds)
        finer = align_grid([m for m, _ in self.kinds], self.h / 2**j, uses)
        try:
            fine = type(self)(self.kinds, finer, self.label)
            return _meet(first, fine._ordinary_epsilon(d))
        except ResourceLimitError:
            return first

    def _bounded(self) -> bool:
        """Whether every kind's loss is bounded (Laplace noise: an ``eps0``; section 15)."""
        return all(getattr(getattr(m, "noise", None), "eps0", None) is not None
                   for m, _ in self.kinds)

    def _below_top(self, v: Value) -> Value:
        """``v`` with its upper end at most ``eps(0)``, the largest loss, when it is bounded.

        ``eps(d) <= eps(0)`` for every ``d >= 0``; Laplace losses are bounded (section 15),
        and a grid's upper end may lie a hair above the largest loss (Laplace x3 next to
        Laplace(2) x2 at delta 1e-14: 4 + 2.9e-12 where every loss is at most 4).
        """
        if not self._bounded():
            return v
        lo, hi = v.ends()
        top = self._pure_epsilon().ends()[1]
        if not hi > top:
            return v
        return Value.from_interval(lo if lo < top else top, top, nonnegative=True)

    def _zero_epsilon(self, d: Fraction) -> bool:
        """Whether ``delta(0) <= d`` is certified (then ``eps(d) = 0``).

        The untilted upper folds only (the lower folds are not built): an upper bound of
        ``delta(0)`` at most ``d`` decides it; one far above ``d`` (twice, and at least
        :data:`TILT_REGULAR`, where no tilt narrows it) leaves the query to the search,
        whose enclosure holds ``eps(d)`` either way; in between, :meth:`delta_bounds` asked
        for a decision only (``target=d``: its stages, tilted when small, stop at the first
        enclosure on one side of ``d``; an undecided one leaves the query to the search).
        """
        f = self.folds
        hi = max(f[f"{x}_up"].bound(Fraction(0), True) for x in ("fwd", "rev"))
        if hi <= d:
            return True
        if hi >= TILT_REGULAR and hi > 2 * d:
            return False
        return self.delta_bounds(Fraction(0), target=d)[1] <= d  # a decision only

    def _tv_lower(self) -> float:
        """A lower bound of ``delta(0)``: one use's total variation, the largest over the kinds.

        ``delta(0)`` is the total variation distance, which a marginal (one use of one kind,
        a post-processing of the composition) does not exceed; one use's is at least its
        forward lower measure's ``sum_j m_j (1 - e^{tau - l_j})_+`` (its lattice losses
        ``l_j`` are at most ``tau`` above the true ones, docs/theory.md, section 15).  The
        float sum of these non-negative terms is within ``(n + 8) u`` of the exact one,
        widened by ``1e-9`` relative.  Used only to skip the zero test: ``eps(d) = 0``
        answered otherwise is still enclosed by the search.
        """
        np = _numpy()
        best = 0.0
        for c, _ in self._cells:
            m = c["fwd_lo"]
            loss = (m.offset + np.arange(m.masses.size)) * float(self.h) - float(m.shift)
            w = -np.expm1(-np.maximum(loss, 0.0))
            best = max(best, float(np.sum(m.masses * w)) * (1 - 1e-9))
        return best

    def _chernoff_guesses(self, d: Fraction) -> dict[str, float]:
        """Each direction's Chernoff guess ``min_lam (K(lam) - ln d) / lam`` (floats).

        ``K`` the direction's upper measures' composed log-MGF: ``e^{K(lam) - lam eps}``
        bounds its delta at ``eps``, so the guess is at least the direction's own
        ``eps(d)``, above it by a few ``1 / lam``: near enough to place the tilted folds,
        whose own estimates then place the search (a float guess, from the measures alone:
        every answer is certified by the bounds alone).
        """
        hf, logd = float(self.h), log_fraction(d)
        out = {}
        for x in ("fwd", "rev"):
            parts = [(c[f"{x}_up"], n) for c, n in self._cells]

            def chernoff(lam: float, parts: Any = parts) -> float:
                return (sum(n * _log_mgf(m, hf, lam) for m, n in parts) - logd) / lam

            out[x] = max(chernoff(_golden(chernoff, 1e-3, 4096.0)), 0.0)
        return out

    def _small_epsilon(self, d: Fraction) -> Value:
        """``eps(d)`` for ``d`` below :data:`TILT_BELOW`: the route chosen by its cost.

        Down to :data:`ROUTE_FLOOR`, the ordinary route (:meth:`_ordinary_epsilon`: its
        tilted folds on the grid of :meth:`_route_grid` when its guesses predict a wide
        answer), and when its enclosure is relatively wider than :data:`ROUTE_WIDTH`, again
        with the tilted folds on the grid of :meth:`_route_grid`, intersected; the answer
        when its relative width is at most :data:`ROUTE_WIDTH`.  Else (or when it is
        refused) the deep route (:meth:`_tiny_epsilon`), intersected with the ordinary
        enclosure: both enclose the same number, so their intersection does (section 15,
        "Choosing the route of a small delta").
        """
        first = None
        if d >= ROUTE_FLOOR:
            try:
                first = self._ordinary_epsilon(d)
                if not _narrow(first):  # at the enclosure's upper end (certified folds'
                    # guess: the untilted ones' may be noise at a tiny d)
                    first = self._finer_epsilon(d, first)
            except ResourceLimitError:
                pass
            if first is not None and _narrow(first):
                return first
        self._tilts.clear()  # the ordinary route's tilted folds: not the deep route's
        try:
            deep = self._tiny_epsilon(d)
        except ResourceLimitError:
            if first is not None:  # an enclosure is known: never refuse it
                return first
            deep = self._coarser_deep_epsilon(d)
        return deep if first is None else _meet(first, deep)

    def _coarser_deep_epsilon(self, d: Fraction) -> Value:
        """The deep route on grids 2, 4, 8, 16 times coarser, when its folds outgrow the FFT.

        Many uses at a tiny delta need a window wider than the FFT limit at the deep grid's
        width (405028 uses at 1e-4: 26.9M points); a coarser grid's bounds are as certified
        (section 15), only wider.  Raises the last refusal when even 16 times is too large.
        """
        refusal: ResourceLimitError | None = None
        for m in (2, 4, 8, 16):
            coarse = type(self)(self.kinds, self.h_deep * m, self.label)
            try:
                return coarse._tiny_epsilon(d)
            except ResourceLimitError as exc:
                refusal = exc
        assert refusal is not None
        raise refusal

    def _route_grid(
        self, b: float, d: float, chain: bool = False, halvings: int = 1,
        directions: list[str] | None = None,
    ) -> Any:
        """The composition whose ordinary route answers a small query near ``(b, d)``.

        ``b``: a float eps, ``d``: a float delta there.  A grid chosen here (``auto``) is
        divided by ``2^halvings`` when the tilted folds of that grid have estimated FFT
        lengths (:func:`~dpcompose_exact.engines.gridfold.fold_length`, from this grid's
        measures tilted at the saddle point of ``b``, before anything of the finer grid is
        built) of at most :data:`ROUTE_FFT` (at small deltas the double folds' error shows as
        a width of about ``h``: a finer grid narrows it), else by fewer halvings (one at
        least); else this grid (a choice: every grid gives certified bounds).  For one
        Laplace pair the finer width is aligned again
        (:func:`~dpcompose_exact.engines.gridcells.align_grid`: halving doubles the bottom
        atom's offset from its grid point, docs/theory.md, section 15, "Choosing the route
        of a small delta").  ``chain``: this grid is itself such a finer grid (its width
        was chosen here too), divided again.  ``directions``: the directions the query
        tilts (None: those whose untilted upper fold's estimate at ``b`` is over ``d / 2``;
        given, no untilted fold of this grid is read).
        """
        if not (self.auto or chain):
            return self
        hf = float(self.h)
        subs, uses = [m for m, _ in self.kinds], sum(n for _, n in self.kinds)
        if directions is None:
            f = self.folds
            directions = [x for x in ("fwd", "rev") if f[f"{x}_up"].estimate(b) > d / 2]
        tilts = []
        for x in directions:  # each direction the query tilts, at its window's tilt
            parts = [(c[f"{x}_up"], n) for c, n in self._cells]
            tilts.append((parts, _window_tilt(parts, hf, b, _saddle(parts, hf, b))))
        for j in range(max(halvings, 1), 0, -1):
            # the finer width; for one Laplace pair realigned (its atoms on grid points:
            # halving doubles the bottom atom's offset, a loss of up to h on every use's
            # lower measure)
            finer = align_grid(subs, self.h / 2**j, uses)
            longest = max((fold_length(p, hf, lam, float(finer)) for p, lam in tilts), default=0)
            if longest <= ROUTE_FFT:
                break
        else:
            return self
        if self._finer is None or self._finer.h != finer:
            self._finer = None  # the last finer grid goes before the next is built
            try:
                self._finer = type(self)(self.kinds, finer, self.label)
            except ResourceLimitError:  # over the grid's point or cell limits
                return self
        return self._finer

    def _ordinary_epsilon(
        self, d: Fraction, src: Any = None, long: bool = False, mixed: bool = False
    ) -> Value:
        """``eps(d)`` from the folds of this grid (tilted in doubles below TILT_REGULAR).

        ``src``: the composition whose grid gives the tilted folds (None: this one, or the
        finer one of :meth:`_route_grid` when the guesses predict a wide answer); the
        untilted folds, guesses and directions are this grid's either way.  ``long``: the
        tilted folds in long doubles; ``mixed``: with long-double forward transforms.  The
        grid and the tilted folds used are kept in ``_last_route`` (for
        :meth:`_finer_epsilon`'s choice of its next step).
        """
        f = self.folds

        def crossing(est: Any) -> float:
            return _crossing(est, d)

        # below GUESS_FLOOR (untilted folds' noise far above d) the Chernoff guess places
        # the tilted folds and no untilted fold is built
        guesses = self._chernoff_guesses(d) if d < GUESS_FLOOR else None
        b = max(guesses.values()) if guesses is not None else 0.0
        if b > 0 and math.isfinite(b):
            near, trusted = ["fwd", "rev"], False
        else:
            b = crossing(lambda x: max(f["fwd_up"].estimate(x), f["rev_up"].estimate(x)))
            near = [y for y in ("fwd", "rev") if f[f"{y}_up"].estimate(b) > float(d) / 2]
            # the untilted guesses hold when the upper folds' certified bound at b is within
            # GUESS_SLACK of d; else (a tiny d: their FFT noise is far above it) the guesses
            # only start the tilted folds' own, and the untilted lower folds are not built
            trusted = d >= TILT_REGULAR or (
                max(f[f"{y}_up"].bound(Fraction(b), True) for y in near or ["fwd"])
                <= (1 + GUESS_SLACK) * d
            )
        b_lo = b
        if trusted:
            b_lo = crossing(
                lambda x: max(
                    f[f"{y}_lo"].estimate(x + float(f[f"{y}_lo"].shift))
                    for y in near or ["fwd"]
                )
            )
        # each direction tilted (a _Tilted, its lower fold built when first read: a direction
        # that never holds the answer's lower end needs its upper fold only) or None: the
        # untilted folds, built when first read
        folds: dict[str, Any] = {x: None for x in ("fwd", "rev")}

        def upper(x: str) -> Any:
            return folds[x].up if folds[x] is not None else f[f"{x}_up"]

        def lower(x: str) -> Any:
            return folds[x].lo if folds[x] is not None else f[f"{x}_lo"]

        # the tilted folds' grid: this one, or the finer one of _route_grid when the float
        # guesses of the two ends (their gap is the discretisation's, second order in h)
        # predict a width over ROUTE_WIDTH (section 15, "Choosing the tilt")
        if src is None:
            src = self
            if (
                self.auto and d < TILT_REGULAR and trusted
                and b - b_lo > ROUTE_PREDICT * ROUTE_WIDTH * b
            ):
                src = self._route_grid(b, float(d))
        if d < TILT_REGULAR:  # tilt each direction that can decide an end: one whose
            # certified upper bound a little below both guesses is below d decides neither
            # (its delta, below d there and beyond, neither breaks delta <= d nor makes
            # delta > d); it stays untilted (a tilt is two more folds)
            low = Fraction(max(min(b, b_lo) * (1 - 1e-3) - 1e-6, 0.0))
            # each direction at the guess, or below it at its own Chernoff guess (at least
            # its own eps(d)) when that is lower: a direction far below d at the guess, tilted
            # there, has its error relative to a Chernoff bound far above d below the guess
            # (q = 0.00789, sigma = 1.72, k = 222, eps(2.3e-14): reverse tilted at lam = 691,
            # its upper bound 0.19 at the answer); tilted at its own guess, below d there
            at = dict.fromkeys(folds, b)
            if not trusted:
                own = guesses if guesses is not None else self._chernoff_guesses(d)
                at = {x: min(b, own[x]) if own[x] > 0 else b for x in folds}
            for x in folds:
                if not trusted or f[f"{x}_up"].bound(low, True) >= d:
                    try:
                        t = src._tilted(x, at[x], False, long=long, mixed=mixed)
                    except ResourceLimitError:  # over the FFT limit on the finer grid
                        src = self
                        t = self._tilted(x, at[x], False, long=long, mixed=mixed)
                    folds[x] = t
        # the direction larger at the guess first; a bound past d decides the comparison
        # alone (the max is past d too), so the other is not computed
        order = sorted(folds, key=lambda x: -upper(x).estimate(b))

        def up(e: Fraction) -> Fraction:
            v = Fraction(0)
            for x in order:
                v = max(v, upper(x).bound(e, True))
                if v > d:
                    break
            return v

        def lo(e: Fraction) -> Fraction:
            v = Fraction(0)
            for i, x in enumerate(order):
                if i and upper(x).bound(e, True) <= d:
                    continue  # its lower bound is <= d too: it cannot make the max > d
                v = max(v, lower(x).bound(e, False))
                if v > d:
                    break
            return v

        first, tol = 2.0**-20, None
        if any(folds[x] is not None for x in folds):
            # tilted: the tilted folds' own float estimates place both ends (their
            # crossings are within the relative error of the folds of the certified ones),
            # so the search starts closer and stops at a bracket of 2^-23 relative
            b = _crossing(lambda x: max(upper(y).estimate(x) for y in order), d, b)
            # the directions again from the tilted estimates at the tilted guess (the
            # untilted ones may have named the wrong one at a tiny d)
            order.sort(key=lambda x: -upper(x).estimate(b))
            near = [y for y in order if upper(y).estimate(b) > float(d) / 2] or order[:1]
            b_lo = _crossing(
                lambda x: max(
                    lower(y).estimate(x + float(lower(y).shift)) for y in near
                ),
                d, b_lo if trusted else b,
            )
            # relative to b itself (certify_epsilon's steps are relative to max(b, 1))
            first = 2.0**-24 * min(b, 1.0) if b > 0 else 2.0**-24
            tol = Fraction(2.0**-23) * Fraction(b) if b > 0 else None
            # one certified bound at each guess moves it by the slope of the estimate's log
            # (a secant step: the bounds' slack is nearly a constant factor of delta there)
            b = _secant(up, b, d, upper(order[0]).estimate, +first)
            b_lo = _secant(lo, b_lo, d, upper(order[0]).estimate, -first)
        self._last_route = (src, folds)
        return certify_epsilon(
            up, lo, d, b, steps=8, first_step=first, guess_lo=b_lo, tol=tol
        )

    def _tiny_epsilon(self, d: Fraction) -> Value:
        """``eps(d)`` for a tiny ``d``: each direction tilted near its own answer.

        The tilt is the Chernoff bound's best ``lam`` for ``d``, then the saddle point of the
        tilted fold's estimate of ``eps(d)``; the bounds are those of the untilted folds
        intersected with the tilted ones (all certified, so the intersection is).
        """
        deep = [(cell_masses(m, self.h_deep, deep=True), n) for m, n in self.kinds]
        hf, logd = float(self.h_deep), log_fraction(d)
        f = self.folds
        tilts = {}
        guess = 0.0
        for direction in ("fwd", "rev"):
            parts = [(c[f"{direction}_up"], n) for c, n in deep]

            def chernoff(lam: float, parts: Any = parts) -> float:
                return (sum(k * _log_mgf(m, hf, lam) for m, k in parts) - logd) / lam

            lam = _golden(chernoff, 1e-3, 4096.0)
            e_dir = 0.0
            for _ in range(2):  # the Chernoff tilt, then the saddle of the estimate
                t = None  # the first tilt's folds are freed before the second's are built
                t = _Tilted(deep, direction, float(f"{lam:.3g}"), self.h_deep)
                e_dir = _bisect_estimate(t.up, float(d))
                lam = _saddle(parts, hf, e_dir)
            tilts[direction] = t
            guess = max(guess, e_dir)

        def up(e: Fraction) -> Fraction:
            return max(
                min(f[f"{x}_up"].bound(e, True), tilts[x].up.bound(e, True)) for x in tilts
            )

        def lo(e: Fraction) -> Fraction:
            return max(
                max(f[f"{x}_lo"].bound(e, False), tilts[x].lo.bound(e, False)) for x in tilts
            )

        return certify_epsilon(up, lo, d, guess, steps=24, first_step=2.0**-30)


#: the precisions of a step of :meth:`EpsilonQueries._finer_epsilon`: the tilted folds in
#: doubles, with long-double forward transforms (:func:`~.gridfft._mixed_power`), in long
#: doubles; and their costs relative to the doubles' (measured powers: 0.29 s, 0.86 s and
#: 1.87 s at 3.8M points, 0.66 s, 1.50 s and 3.63 s at 7.6M, k = 33401)
_DOUBLE, _MIXED, _LONG = 0, 1, 2
_MODE_COST = (1.0, 2.5, 6.0)


def _route_step(
    first: Value, folds: dict[str, Any], mode: int = _DOUBLE, room: int = ROUTE_HALVINGS
) -> tuple[int, int]:
    """The next step of :meth:`EpsilonQueries._finer_epsilon`: ``(halvings, precision)``.

    ``mode``: the precision of the folds that gave ``first``; ``room``: the halvings left.
    From the split of its width (:func:`_width_split`: the discretisation part ``disc``,
    divided by about ``4^j`` by ``j`` halvings, and the FFT part ``fft``, times
    :func:`~.gridfft.mixed_gain` with long-double forward transforms, none in long
    doubles), the cheapest step (``2^j`` times :data:`_MODE_COST`) predicted to bring the
    width within :data:`ROUTE_WIDTH`, its precision never below ``mode``; when none is, one
    halving at ``mode`` (the part beyond the gap may be a leak's, which no precision
    narrows).  When the split is not known, the halvings that would bring the whole width
    within it were it all discretisation (at least one).  A choice only: every grid gives
    certified bounds.
    """
    lo, hi = (_frac(x) for x in first.ends())
    rel = float((hi - lo) / hi) if hi > 0 else math.inf
    aim = float(ROUTE_WIDTH) * ROUTE_AIM
    split = _width_split(first, folds)
    if split is None:
        j = min(1, room)
        while 4**j * aim < rel and j < room:
            j += 1
        return j, mode
    disc, fft = split
    keep = (1.0, _fold_gain(folds), 0.0)  # the FFT part's share left at each precision
    goal = (disc + fft) * aim / rel if rel > 0 else 0.0
    options = []
    for j in range(room + 1):
        for m in range(mode, _LONG + 1):
            if j == 0 and m == mode:
                continue  # this very step again
            part = fft * keep[m] / keep[mode] if keep[mode] else 0.0
            if disc / 4**j + part <= goal:
                options.append((2**j * _MODE_COST[m], j, m))
    if not options:
        return min(1, room), mode
    return min(options)[1:]


def _narrow(v: Value) -> bool:
    """Whether an enclosure's relative width is at most :data:`ROUTE_WIDTH`."""
    lo, hi = (_frac(x) for x in v.ends())
    return hi - lo <= ROUTE_WIDTH * hi


def _meet(a: Value, b: Value) -> Value:
    """The intersection of two enclosures of one number (certified: both contain it)."""
    ends = list(zip(a.ends(), b.ends()))  # (lower ends), (upper ends): exact
    return Value.from_interval(max(ends[0], key=_frac), min(ends[1], key=_frac))


def _parse_delta(delta: Any) -> Fraction:
    from ..numbers.convert import parse_delta

    d = parse_delta(delta) if not isinstance(delta, Fraction) else delta
    if not 0 < d < 1:
        raise InvalidParameterError(f"delta = {d} must lie in (0, 1)")
    return d
