"""The curves ``delta(eps)`` and ``eps(delta)`` of a listed region, written once.

A listed result (:class:`ListedResult`) knows its losses ``l_0 < ... < l_{n-1}`` (exact)
and the deltas ``delta_i`` of its constraint list.  Between two consecutive losses no
loss lies, so ``delta(eps) = sum_{l > eps} (P0(l) - e^eps P1(l)) = A - e^eps B`` is affine
in ``e^eps`` there, with the region's own deltas at both ends (docs/theory.md, section 3):

* the segment holding ``eps`` is found by bisection, each step a certified comparison of
  ``eps`` with a loss (an exact zero test on their linear forms, then balls:
  :func:`_locate`);
* ``delta(eps)`` at or above a listed loss is a listed delta; strictly inside segment
  ``i`` it is ``delta_{i+1} + (delta_i - delta_{i+1}) (e^{l_{i+1}} - e^eps)
  / (e^{l_{i+1}} - e^{l_i})`` (:func:`_segment_ball`); below ``l_0`` the maximising point
  is the vertex ``(c, c)``, ``c = (1 - delta_0) / (1 + e^{l_0})``:
  ``delta(eps) = (1 - c) - e^eps c``;
* ``eps(delta)`` bisects the decreasing deltas for the segment where
  ``delta_{j+1} <= delta < delta_j``, and is a listed loss, the log of an exact element
  on the segment, or on the piece below ``l_0`` (:func:`_epsilon`); below the leak no
  finite eps exists.

Where the deltas and the ``e^{l_i}`` come from (exact elements, or certified balls) is
each subclass's (:mod:`~dpcompose_exact.engines.listed_results`).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import flint

from ..errors import BelowLeakError, CertificationError
from ..numbers import ExpDomain, LinearForm, certified_sign
from ..numbers.value import Value
from .result_interface import Exactness

__all__ = ["ListedResult"]


class _Lazy:
    """``f(i)`` for the indices asked for only, cached (a query touches O(log n) of them)."""

    def __init__(self, n: int, f: Callable[[int], Any]) -> None:
        self._n, self._f, self._cache = n, f, {}

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: int) -> Any:
        i = i + self._n if i < 0 else i
        if i not in self._cache:
            self._cache[i] = self._f(i)
        return self._cache[i]


class _VertexTie(CertificationError):
    """A query delta that the balls of a certified region cannot place (a vertex tie)."""


def _short_rational(q: Fraction) -> str:
    """A rational for a message: as is when short, else its 12-digit decimal."""
    text = str(q)
    return text if len(text) <= 40 else f"{Value.from_rational(q).decimal(12)}..."


class ListedResult:
    """A result with its constraint list: the losses ``l_i`` and their deltas.

    The curve algorithms (:func:`_locate`, :func:`_delta`, :func:`_epsilon`) are written
    once here; the two subclasses say where the deltas and the ``e^{l_i}`` come from
    (exact elements, or certified balls).  Everything per loss is computed on demand: a
    certified region of 10^5 losses is located by bisection, so a query touches a few
    dozen of them.
    """

    kind: Exactness  # set by each subclass

    def __init__(self, region: Any) -> None:
        self._region = region
        self.dom: ExpDomain = region.domain
        self.losses = tuple(region.losses)
        self.forms = _Lazy(len(self.losses), lambda i: self.dom.form(self.losses[i]))
        self._constraints: list[tuple[Value, Value]] | None = None

    @property
    def region(self) -> Any:
        """The underlying region (expert view)."""
        return self._region

    @property
    def n(self) -> int:
        """Number of constraints."""
        return len(self.losses)

    def describe(self) -> str:
        """``"exact, 41 constraints"``-style text."""
        return f"{self.kind}, {self.n} constraints"

    # -- what the subclasses provide ------------------------------------------------------
    def delta_ball(self, i: int, prec: int) -> flint.arb:
        """A ball containing ``delta_i``."""
        raise NotImplementedError

    def exp_ball(self, i: int, prec: int) -> flint.arb:
        """A ball containing ``e^{l_i}``."""
        raise NotImplementedError

    def delta_vs(self, i: int, d: Fraction) -> int:
        """Sign of ``delta_i - d``."""
        raise NotImplementedError

    def listed_delta(self, i: int) -> Value:
        """``delta_i`` as a Value."""
        raise NotImplementedError

    def between(self, i: int, form: LinearForm) -> Value:
        """``delta(eps)`` for ``l_i < eps < l_{i+1}`` (``i = -1``: below ``l_0``)."""
        raise NotImplementedError

    def below_first(self, d: Fraction) -> Value:
        """``eps(delta)`` when ``delta`` lies on the piece below ``l_0``."""
        raise NotImplementedError

    def on_segment(self, j: int, d: Fraction) -> Value:
        """``eps(delta)`` when ``delta_{j+1} < delta < delta_j``."""
        raise NotImplementedError

    # -- the interface --------------------------------------------------------------------
    def delta(self, eps: LinearForm) -> Value:
        """``delta(eps)`` (module docstring)."""
        return _delta(self, eps)

    def epsilon(self, delta: Fraction) -> Value:
        """``eps(delta)`` (module docstring)."""
        return _epsilon(self, delta)

    def constraints(self) -> list[tuple[Value, Value]]:
        """The ``(eps, delta)`` list as Values, increasing eps (cached)."""
        if self._constraints is None:
            self._constraints = [
                (Value.from_loss(self.dom, loss), self.listed_delta(i))
                for i, loss in enumerate(self.losses)
            ]
        return self._constraints


def _locate(view: ListedResult, form: LinearForm) -> tuple[int, bool]:
    """``(i, equal)``: the largest i with ``l_i <= eps`` (-1 below all), ``equal`` if ``l_i = eps``.

    Bisection; each step is one certified comparison of two exact linear forms.
    """
    lo, hi = -1, view.n - 1
    equal_at = None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        diff = view.forms[mid] - form
        s = certified_sign(diff.ball, diff.is_zero(), "a loss minus the query epsilon")
        if s <= 0:
            lo = mid
            if s == 0:
                equal_at = mid
        else:
            hi = mid - 1
    return lo, equal_at == lo and lo >= 0


def _delta(view: ListedResult, form: LinearForm) -> Value:
    i, equal = _locate(view, form)
    if i == view.n - 1 or equal:  # at a listed loss, or above the largest: a listed delta
        return view.listed_delta(i)
    return view.between(i, form)


def _segment_ball(view: ListedResult, i: int, form: LinearForm) -> Callable[[int], flint.arb]:
    """``delta(eps)`` as balls for ``l_i < eps < l_{i+1}`` (``i = -1``: below ``l_0``)."""

    def ball(prec: int) -> flint.arb:
        with flint.ctx.workprec(prec + 16):
            big_e = form.exp_ball(prec + 16)
            if i < 0:  # below every edge slope: the vertex (c, c)
                c = (1 - view.delta_ball(0, prec + 16)) / (1 + view.exp_ball(0, prec + 16))
                return 1 - c * (1 + big_e)
            # delta_{i+1} + (delta_i - delta_{i+1}) (e^{l_{i+1}} - e^eps) / (e^{l_{i+1}} - e^{l_i}):
            # every term is >= 0, so nothing cancels but the factor e^{l_{i+1}} - e^eps
            da, db = view.delta_ball(i, prec + 16), view.delta_ball(i + 1, prec + 16)
            ea, eb = view.exp_ball(i, prec + 16), view.exp_ball(i + 1, prec + 16)
            return db + (da - db) * (eb - big_e) / (eb - ea)

    return ball


def _epsilon(view: ListedResult, d: Fraction) -> Value:
    n = view.n
    if view.delta_vs(n - 1, d) > 0:
        leak = view.listed_delta(n - 1)
        raise BelowLeakError(
            f"delta = {_short_rational(d)} is below the probability {leak.describe()} that the "
            "composition reveals the input outright (the leak): no finite eps achieves it"
        )
    zero = Value.from_rational(0)
    lowest_is_zero = view.forms[0].is_zero()
    if lowest_is_zero and view.delta_vs(0, d) <= 0:
        return zero
    # j: the last index with delta_j > d (-1: d lies on the piece below l_0)
    j = -1
    lo, hi = -1, n - 1
    while lo < hi:  # deltas decrease strictly: bisection
        mid = (lo + hi + 1) // 2
        if view.delta_vs(mid, d) > 0:
            lo = mid
        else:
            hi = mid - 1
    j = lo
    if view.delta_vs(j + 1, d) == 0:
        return Value.from_form(view.forms[j + 1])
    if j < 0:  # on [0, l_0]: delta(eps) = 1 - c (1 + e^eps)
        return view.below_first(Fraction(d))
    return view.on_segment(j, Fraction(d))
