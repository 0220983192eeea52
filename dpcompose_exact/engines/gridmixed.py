"""Noise and finite pairs on one certified loss grid: the grid's width and the compositions.

The finite kinds of a mixed list become items of the loss grid
(:mod:`~dpcompose_exact.engines.gridfinite`) next to the noise (docs/theory.md, section 19,
"The finite part on the loss grid").  Here:

* **the grid width** (:func:`grid_width`): the composed loss spreads over about
  :data:`WINDOW_SIGMAS` standard deviations ``sigma`` (``sigma^2 = sum_i k_i s_i^2``, each
  kind's spread ``s_i``); the automatic width is doubled while that span would take more
  than :data:`FINITE_FFT` grid points (a choice of speed: every width gives certified
  bounds);
* **the composition** (:func:`grid_with_finite`, :class:`MixedGridComposition`): the noise
  items and the finite items on one grid; when the grid was coarsened for the finite part,
  the noise composed first on its own finer grid
  (:class:`~dpcompose_exact.engines.gridcomposednoise.ComposedNoiseItem`; section 19, "The
  noise composed first"), with the noise use by use as a second look for answers wider than
  the box's goal (both enclose the same number: their intersection is returned);
* **one route per query** (:class:`PerQueryComposition`): ``eps(delta)`` with the finite part
  enumerated (:class:`~dpcompose_exact.engines.mixed.MixedComposition`), ``delta(eps)`` on
  the grid; both enclose the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers.convert import parse_delta
from ..numbers.value import Value
from ..regions.pld import PLD
from .bounds import EnclosureRows
from .gridcells import DEFAULT_GRID
from .gridcomposednoise import ComposedNoiseItem
from .gridepsilon import _meet
from .gridfinite import FiniteKind, _directions, finite_grid_items
from .gridmeasure import _frac
from .results import Exactness
from .subsample_grid import NoiseGridComposition

__all__ = [
    "PerQueryComposition",
    "MixedGridComposition",
    "grid_with_finite",
]

#: the composed loss's span in standard deviations, and the most grid points it may take
#: before the grid is coarsened (:func:`grid_width`)
WINDOW_SIGMAS = 30.0
FINITE_FFT = 1 << 20
#: relative widths over which an answer of the composed-noise grid gets a second look
EPS_WIDTH = Fraction(1, 10000)
DELTA_WIDTH = Fraction(1, 1000)


def _kind_spread(kind: FiniteKind) -> float:
    """The larger of a kind's two directions' spreads (:func:`_spread`)."""
    fwd, rev = _directions(kind)
    return max(_spread(fwd), 0.0 if rev is None else _spread(rev))


def _spread(pld: PLD) -> float:
    """The standard deviation of one use's finite loss under P (a float, to size the grid)."""
    dom = pld.domain
    pts = [
        (float(dom.loss_ball(loss, 64).mid()), float(dom.elem_ball(m, 64).mid()))
        for loss, m in pld.masses
    ]
    total = sum(m for _, m in pts)
    if total <= 0:
        return 0.0
    mean = sum(x * m for x, m in pts) / total
    return math.sqrt(max(sum((x - mean) ** 2 * m for x, m in pts) / total, 0.0))


def grid_width(
    noise: Sequence[tuple[Any, int]], finite: Sequence[tuple[FiniteKind, int]]
) -> Fraction | None:
    """The grid width for noise next to finite pairs: None (the grid's own) unless too fine.

    The composed loss spreads over about ``WINDOW_SIGMAS`` standard deviations ``sigma``
    (``sigma^2 = sum_i k_i s_i^2``, each kind's spread ``s_i``:
    :func:`~dpcompose_exact.engines.gridcells.loss_spread` for noise, the finite loss's own
    for finite pairs); the automatic width (fine at small rates) is doubled while that
    span would take more than :data:`FINITE_FFT` grid points.  A choice: every width gives
    certified bounds.
    """
    from .gridcells import auto_grid, loss_spread

    subs = [m for m, _ in noise if getattr(m, "grid_measures", None) is None]
    var = sum(n * _kind_spread(kind) ** 2 for kind, n in finite)
    var += sum(n * loss_spread(m) ** 2 for m, n in noise if m in subs)
    span = WINDOW_SIGMAS * math.sqrt(var)
    h = auto_grid(subs, DEFAULT_GRID) if subs else DEFAULT_GRID
    if span <= FINITE_FFT * float(h):
        return None
    while span > FINITE_FFT * float(h):
        h *= 2
    return h


def largest_list_loss(
    noise: Sequence[tuple[Any, int]], finite: Sequence[tuple[FiniteKind, int]]
) -> Value:
    """``eps(0)`` of noise pairs next to finite kinds: the largest loss of the list.

    The uses' losses are independent and each reaches its largest value with positive
    probability, so in each direction the largest total loss is ``sum_i k_i l_i``: the
    noise's (:func:`~.noiseloss.largest_noise_loss`) plus each finite kind's largest loss
    with a positive mass, ``k`` times; ``eps(0)`` is the larger over the two directions
    (:func:`~.mixed.largest_sum`; docs/theory.md, sections 15 and 19).  No finite kind is
    enumerated.

    Args:
        noise: ``[(loss pair, count), ...]`` of the noise.
        finite: ``[(kind, count), ...]`` as :func:`grid_with_finite` takes them.

    Raises:
        InvalidParameterError: a noise loss is unbounded (Gaussian noise: eps(0) infinite).
        BelowLeakError: a finite kind has a leak (mass at loss ``+inf``).
    """
    from ..errors import BelowLeakError
    from ..numbers.forms import LinearForm
    from .mixed import largest_sum
    from .noiseloss import largest_noise_loss

    sums = []
    for side, direction in enumerate(("fwd", "rev")):
        top = largest_noise_loss(noise, direction)
        if top is None:
            raise InvalidParameterError(
                "delta = 0: the noise's privacy loss is unbounded (Gaussian noise never "
                "reaches delta = 0; eps(0) is infinite); give a delta in (0, 1)"
            )
        form = LinearForm(Fraction(0))
        for kind, n in finite:
            fwd, rev = _directions(kind)
            pld = rev if side and rev is not None else fwd
            if not pld.leak.is_zero():
                leak = float(pld.domain.elem_ball(pld.leak, 64).mid())
                raise BelowLeakError(
                    f"delta = 0 is below the probability {leak:.6g} that a finite pair "
                    "reveals the input outright (its leak): no finite eps achieves it"
                )
            if pld.masses:  # sorted by loss: the last is the largest with a positive mass
                form = form + pld.domain.form(pld.masses[-1][0]).scale(Fraction(n))
        sums.append((form, top))
    return largest_sum(sums)


def grid_with_finite(
    noise: Sequence[tuple[Any, int]],
    finite: Sequence[tuple[FiniteKind, int]],
    h: Fraction | None = None,
    label: str = "",
    largest: Callable[[], Value] | None = None,
) -> Any:
    """The noise items and the finite kinds on one certified loss grid (section 19).

    Args:
        noise: ``[(noise item, count), ...]`` as the loss grid composes them.
        finite: ``[(kind, count), ...]``: a symmetric pair's PLD, or an asymmetric pair's
            ``(forward, reverse)`` PLDs.
        h: the grid width (None: :func:`grid_width`).
        label: what was composed, for ``repr``.
        largest: ``eps(0)`` of the list (:func:`largest_list_loss`), or None (refused).
    """
    chosen = h is None
    if h is None:
        h = grid_width(noise, finite)
    finite_items = finite_grid_items(finite, h, DEFAULT_GRID)
    per_use = list(noise) + finite_items
    from .gridcells import SPREAD_CELLS, auto_grid, loss_spread

    subs = [m for m, _ in noise if getattr(m, "grid_measures", None) is None]
    narrow = any(loss_spread(m) < SPREAD_CELLS * float(h) for m in subs) if h else False
    if chosen and narrow and sum(n for _, n in noise) > 1:
        # the grid was coarsened for the finite part, and one noise use spans fewer cells
        # of it than the automatic grid asks for: the noise is composed first on its own
        # grid and moved once (its lower end then loses tau_f per use, not tau of the
        # coarse grid per use); the per-use grid stays the second look (section 19)
        try:
            composed = ComposedNoiseItem(noise, auto_grid(subs, DEFAULT_GRID))
        except ResourceLimitError:
            composed = None
        if composed is not None and h > composed.h_fine and (h / composed.h_fine).denominator == 1:
            return MixedGridComposition(
                [(composed, 1), *finite_items], h, label,
                fallback=lambda: MixedGridComposition(per_use, h, label, largest=largest),
                largest=largest,
            )
    return MixedGridComposition(per_use, h, label, largest=largest)


class MixedGridComposition(NoiseGridComposition):
    """Noise and finite pairs on one certified loss grid (two-sided bounds).

    ``fallback``: builds a second composition of the same
    list (the noise use by use on this grid), asked only when an answer here is relatively
    wider than the box's goal (:data:`EPS_WIDTH`, :data:`DELTA_WIDTH`); both enclose the
    same number, so their intersection is returned.
    """

    def __init__(
        self,
        kinds: Sequence[tuple[Any, int]],
        h: Fraction | None = None,
        label: str = "",
        fallback: Callable[[], MixedGridComposition] | None = None,
        largest: Callable[[], Value] | None = None,
    ) -> None:
        super().__init__(kinds, h, label)
        self._fallback = fallback
        self._largest = largest
        self._second: MixedGridComposition | None = None

    def _second_look(
        self, first: Callable[[], Value], width: Fraction, ask: Callable[[Any], Value]
    ) -> Value:
        """``first()``, met with the fallback's answer when relatively wider than ``width``.

        The fallback's answer alone when ``first`` is refused (beyond its grid).
        """
        if self._fallback is None:
            return first()
        try:
            v: Value | None = first()
        except ResourceLimitError:
            v = None
        if v is not None:
            lo, hi = (_frac(x) for x in v.ends())
            if hi - lo <= width * hi:
                return v
        try:
            if self._second is None:
                self._second = self._fallback()
            other = ask(self._second)
        except ResourceLimitError:
            if v is None:
                raise
            return v
        return other if v is None else _meet(v, other)

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """An enclosure of ``eps(delta)`` (the second look when wide)."""
        if isinstance(delta, (list, tuple)):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        return self._second_look(
            lambda: super(MixedGridComposition, self).epsilon(delta),
            EPS_WIDTH,
            lambda c: c.epsilon(delta),
        )

    def delta(self, eps: Any) -> Value | list[Value]:
        """An enclosure of ``delta(eps)`` (the second look when wide)."""
        if isinstance(eps, (list, tuple)):
            return [self.delta(e) for e in eps]  # type: ignore[misc]
        return self._second_look(
            lambda: super(MixedGridComposition, self).delta(eps),
            DELTA_WIDTH,
            lambda c: c.delta(eps),
        )

    def _pure_epsilon(self) -> Any:
        """``eps(0)``: the list's largest loss (:func:`largest_list_loss`), when given."""
        if self._largest is None:
            raise InvalidParameterError(
                "delta = 0: a list of noise and finite pairs is answered on a loss grid for "
                "delta in (0, 1); give a delta in (0, 1)"
            )
        return self._largest()

    def describe(self) -> str:
        """``"certified bounds (loss grid, finite pairs on it), two directions"``."""
        return "certified bounds (loss grid, finite pairs on it), two directions"

    def __repr__(self) -> str:
        return f"MixedGridComposition({self.label or 'noise and finite pairs'}; bounds)"


class PerQueryComposition(EnclosureRows):
    """One list, two routes: ``eps(delta)`` with the finite part enumerated, the rest on the grid.

    Args:
        grid: builds the :class:`MixedGridComposition` of the list (when first asked).
        exact: builds the list with its finite part composed exactly
            (:class:`~dpcompose_exact.engines.mixed.MixedComposition`), which answers
            ``eps(delta)``; refused (a resource limit), the grid answers.
        label: what was composed, for ``repr``.

    Both enclose the same numbers (docs/theory.md, section 19, "The finite part on the loss
    grid"): each query goes where it is cheaper.  Anything else is the grid's.
    """

    kind = Exactness.BOUNDS
    no_list = "a composition with noise mechanisms has no single constraint list"

    def __init__(
        self, grid: Callable[[], Any], exact: Callable[[], Any], label: str = ""
    ) -> None:
        self._make_grid, self._make_exact = grid, exact
        self._grid: Any = None
        self._exact: Any = None
        self.label = label

    def grid(self) -> Any:
        """The grid composition (built once)."""
        if self._grid is None:
            self._grid = self._make_grid()
        return self._grid

    def delta(self, eps: Any) -> Value | list[Value]:
        """An enclosure of ``delta(eps)`` on the grid."""
        return self.grid().delta(eps)  # type: ignore[no-any-return]

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """An enclosure of ``eps(delta)`` with the finite part enumerated (else the grid's).

        ``delta = 0`` too (the largest loss, from the exact part:
        :meth:`~.mixed.MixedComposition.epsilon`); ``delta`` outside ``[0, 1)`` is the
        grid's to refuse (with what to give instead).
        """
        if isinstance(delta, (list, tuple)):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        d = delta if isinstance(delta, Fraction) else parse_delta(delta)
        if self._make_exact is not None and 0 <= d < 1:
            try:
                if self._exact is None:
                    self._exact = self._make_exact()
                return self._exact.epsilon(d)  # type: ignore[no-any-return]
            except ResourceLimitError:
                self._make_exact = None  # type: ignore[assignment]
        return self.grid().epsilon(d)  # type: ignore[no-any-return]

    def describe(self) -> str:
        """How the answers are computed, in a few words."""
        return (
            "certified bounds (loss grid, finite pairs on it; eps(delta) with the finite "
            "part enumerated), two directions"
        )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.grid(), name)

    def __repr__(self) -> str:
        return f"PerQueryComposition({self.label or 'noise and finite pairs'}; bounds)"
