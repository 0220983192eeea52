"""The one result interface (exact, certified, bounded) and the curves delta(eps), eps(delta).

:class:`PrivacyResult` is what every engine returns (docs/architecture.md);
:class:`ExactResult` and :class:`CertifiedResult` share the curve algorithms below, written
once in :class:`ListedResult`.

Between two consecutive loss values ``l_i < l_{i+1}`` of the composed pair no loss lies,
so ``delta(eps) = sum_{l > eps} (P0(l) - e^eps P1(l)) = A - e^eps B`` is affine in
``e^eps`` there, with the region's own deltas at both ends (docs/theory.md, section 3):

* ``B = (delta_i - delta_{i+1}) / (e^{l_{i+1}} - e^{l_i})`` and ``A = delta_{i+1} +
  e^{l_{i+1}} B`` are elements of the region's own field; ``e^eps`` stays one exact factor
  in its own right.  The query never joins the composition's exponent field, so its cost
  does not depend on the query's denominator (``0.123457`` next to losses in steps of
  ``3/20`` would otherwise need polynomials of degree ``10^5`` times larger).
* The segment holding ``eps`` is found by certified comparisons of ``eps`` with the
  region's losses (an exact zero test on their linear forms, then balls).
* ``eps(delta) = log(e^{l_i} + (delta_i - delta) (e^{l_{i+1}} - e^{l_i})
  / (delta_i - delta_{i+1}))`` on the segment where ``delta_{i+1} <= delta < delta_i``:
  the log of an exact element (the rational ``delta`` lies in every field), not a bisection.
* Below the smallest loss ``l_0 > 0`` the maximising point is the vertex ``(c, c)``,
  ``c = (1 - delta_0) / (1 + e^{l_0})``: ``delta(eps) = (1 - c) - e^eps c``.

Exact regions and certified regions (large k, ball deltas) share this one implementation
through a small adapter: only where the deltas and the ``e^{l_i}`` come from differs.
:func:`delta_value` and :func:`epsilon_value` return :class:`~dpcompose_exact.numbers.value.Value`;
:func:`delta_of_eps` and :func:`eps_of_delta` wrap them as printable :class:`CurvePoint`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

import flint

from ..errors import (
    BelowLeakError,
    CertificationError,
    ResourceLimitError,
    UnsupportedExpressionError,
    UnsupportedQueryError,
)
from ..numbers import (
    ExpDomain,
    LinearForm,
    QzElem,
    certified_sign,
)
from ..numbers import parse_rational as _parse_rational
from ..numbers.closed import ClosedParts, elem_parts
from ..numbers.convert import (
    bits_to_digits,
    parse_delta,
    parse_eps,
    rational_ball,
)
from ..numbers.value import Value, ball_ends
from ..regions.tradeoff import Region
from .certified import CertifiedRegion, compose_certified
from .genfunc import compose_plds
from .memory import exact_seconds_estimate

__all__ = [
    "Exactness",
    "PrivacyResult",
    "ListedResult",
    "CurvesOnly",
    "ExactResult",
    "CertifiedResult",
    "listed_result",
    "CurvePoint",
    "delta_of_eps",
    "eps_of_delta",
    "delta_value",
    "epsilon_value",
]


# ---------------------------------------------------------------------------------------
# One interface for exact, certified and bounded results
# ---------------------------------------------------------------------------------------


class Exactness(str, Enum):
    """How a result knows its numbers: the one exactness field of every result.

    It compares equal to its string (``Exactness.EXACT == "exact"``).
    """

    EXACT = "exact"  #: closed forms (elements of the exact field)
    CERTIFIED = "certified"  #: certified balls, every printed digit certified
    BOUNDS = "bounds"  #: certified two-sided enclosures (an interval, not every digit)

    def __str__(self) -> str:
        return self.value


@runtime_checkable
class PrivacyResult(Protocol):
    """What every composition result answers, whatever route computed it.

    Implemented by :class:`ExactResult` (closed forms), :class:`CertifiedResult` (exact
    structure, ball deltas) and :class:`~dpcompose_exact.engines.bounds.Bounded` (two-sided bounds
    only), as dp_accounting's dense and sparse PMFs share one interface.  Queries arrive
    parsed (:mod:`dpcompose_exact.numbers.convert`): the front door parses once.
    A result that cannot answer a query (bounds have no constraint list) raises
    :class:`~dpcompose_exact.errors.ResourceLimitError` with what to ask instead.
    """

    kind: Exactness  #: the one exactness field: exact, certified or bounds

    @property
    def region(self) -> Any:
        """The underlying expert object (Region, CertifiedRegion or Bounded)."""

    def delta(self, eps: LinearForm) -> Value:
        """``delta(eps)`` at a parsed epsilon."""

    def epsilon(self, delta: Fraction) -> Value:
        """``eps(delta)`` at a parsed delta in ``[0, 1)``."""

    def tradeoff(self, t: Fraction) -> Value:
        """The trade-off function at ``t`` in ``[0, 1]``."""

    def constraints(self) -> list[tuple[Value, Value]]:
        """The irredundant ``(eps, delta)`` list, increasing eps."""

    def describe(self) -> str:
        """A few words for ``repr``: the kind and the size."""

    def upper_region(self) -> Region:
        """An exact region containing this one (itself when exact), for exports."""


class CurvesOnly:
    """The part of the interface shared by results that answer curves only.

    Certified two-sided bounds and compositions with subsampled mechanisms answer
    ``delta(eps)`` and ``epsilon(delta)`` but have no constraint list: the calls that need
    one refuse in one line (:class:`~dpcompose_exact.errors.UnsupportedQueryError`), saying
    why (:attr:`no_list`) and what to ask instead.
    """

    #: why there is no constraint list (the start of every refusal)
    no_list = "this composition has no constraint list"

    @property
    def region(self) -> Any:
        """The result itself (there is no region object)."""
        return self

    def refuse(self, what: str) -> UnsupportedQueryError:
        """The one-line refusal of ``what`` (raise it)."""
        return self._refuse(what)

    def _refuse(self, what: str) -> UnsupportedQueryError:
        return UnsupportedQueryError(
            f"{self.no_list}: {what} is not available; ask for delta(eps) or epsilon(delta)"
        )

    def delta_decision(self, eps: Fraction, target: Fraction) -> Value:
        """An enclosure of ``delta(eps)`` for deciding whether ``delta(eps) <= target``.

        Certified like :meth:`delta`, but an engine may stop refining as soon as the
        enclosure lies on one side of ``target`` (a calibration needs only the side); this
        default is :meth:`delta`.
        """
        return self.delta(eps)  # type: ignore[attr-defined, no-any-return]

    def constraints(self) -> list[tuple[Value, Value]]:
        """Refused: no constraint list."""
        raise self._refuse("the constraint list")

    def upper_region(self) -> Any:
        """Refused: exports need one exact region."""
        raise self._refuse("an exact region for export")

    def tradeoff(self, t: Fraction) -> Value:
        """Refused: the trade-off function needs the constraint list."""
        raise self._refuse("the trade-off function")

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

class ExactResult(ListedResult):
    """An exact region: every delta is an element of Q(z), every answer a closed form."""

    kind = Exactness.EXACT

    def __init__(self, region: Region) -> None:
        super().__init__(region)
        self.deltas_x: tuple[QzElem, ...] = region.deltas
        self.exps_x = _Lazy(self.n, lambda i: self.dom.exp_loss(self.losses[i]))

    def delta_ball(self, i: int, prec: int) -> flint.arb:  # noqa: D102
        return self.dom.elem_ball(self.deltas_x[i], prec)

    def exp_ball(self, i: int, prec: int) -> flint.arb:  # noqa: D102
        return self.dom.elem_ball(self.exps_x[i], prec)

    def delta_vs(self, i: int, d: Fraction) -> int:  # noqa: D102
        return self.dom.compare(self.deltas_x[i], QzElem.from_rational(d))

    def listed_delta(self, i: int) -> Value:  # noqa: D102
        return self.value(self.deltas_x[i])

    def between(self, i: int, form: LinearForm) -> Value:  # noqa: D102
        return _exact_between(self, i, form)

    def below_first(self, d: Fraction) -> Value:  # noqa: D102
        return _exact_below_first(self, d)

    def on_segment(self, j: int, d: Fraction) -> Value:  # noqa: D102
        return _exact_on_segment(self, j, d)

    def value(self, x: QzElem) -> Value:
        """An exact Value of an element of the region's field."""
        return Value.from_element(self.dom, x)

    def upper_region(self) -> Region:
        """The region itself."""
        return self._region

    def tradeoff(self, t: Fraction) -> Value:
        """``f(t)``, exact."""
        return Value.from_qz(self.dom, self._region(t))

class CertifiedResult(ListedResult):
    """A certified region: exact losses, Arb-ball deltas (large k)."""

    kind = Exactness.CERTIFIED

    def __init__(self, region: CertifiedRegion, level: int = 0) -> None:
        super().__init__(region)
        self.prec = region.prec
        self._exact: ExactResult | None | bool = False
        self._deltas_b = region.deltas
        self._level = level  # how many times this region was recomputed more sharply
        self._sharp: CertifiedResult | None | bool = False  # made on the first need
        self._below_one: bool | None = None  # every delta < 1 (certified on first need)

        def exp_ball(i: int) -> flint.arb:
            with flint.ctx.workprec(self.prec):
                return self.dom.loss_ball(self.losses[i], self.prec).exp()

        self._exps_b = _Lazy(self.n, exp_ball)

    def delta_ball(self, i: int, prec: int) -> flint.arb:  # noqa: D102
        return self._deltas_b[i]

    def exp_ball(self, i: int, prec: int) -> flint.arb:  # noqa: D102
        return self._exps_b[i]

    def delta_vs(self, i: int, d: Fraction) -> int:  # noqa: D102
        with flint.ctx.workprec(self.prec or 64):
            diff = self._deltas_b[i] - rational_ball(d)
        if diff > 0:
            return 1
        if diff < 0:
            return -1
        exact_leak = self._region.exact_leak
        if i == self.n - 1 and exact_leak is not None:  # the last delta is the leak
            return self.dom.compare(exact_leak, QzElem.from_rational(d))
        raise _VertexTie(
            f"delta = {_short_rational(d)} is too close to a vertex of the certified region "
            f"to place it with {self.prec} bits"
        )

    def epsilon(self, delta: Fraction) -> Value:
        """``eps(delta)``; a delta equal to a vertex delta is decided on the exact region.

        A vertex is an exact point of the structure: when the balls cannot place ``delta``
        the exact region is computed once (when estimated affordable) and answers, as the
        exact route does.
        """
        try:
            return _epsilon(self, delta)
        except _VertexTie as tie:
            exact = self._exact_region()
            if exact is None:
                raise CertificationError(
                    f"{tie}; deciding it exactly needs the exact region, which is too large "
                    "here (estimated over 20 s or the memory limit)"
                ) from None
            return _epsilon(exact, delta)

    def _exact_region(self) -> ExactResult | None:
        """The exact result of this region, when its kinds are known and it is affordable."""
        if self._exact is not False:  # computed (or refused) for an earlier tie
            return self._exact
        exact = None
        kinds = self._region.kinds
        if kinds and exact_seconds_estimate(kinds) <= _TIE_SECONDS:
            try:
                exact = ExactResult(compose_plds(kinds))
            except ResourceLimitError:
                exact = None
        self._exact = exact
        return exact

    def sharper(self) -> CertifiedResult | None:
        """The same region recomputed once at a higher precision (cached), or None.

        A directed rounding (``--rounding up``) that a delta's ball does not decide (the
        ball straddles a decimal of the printed length) is decided on this region's
        balls, narrower by about 50 bits; that region has its own :meth:`sharper`, up to
        :data:`_SHARPER_LEVELS` recomputations.  One recomputation serves every row and
        query: the rows the first balls decide (nearly all; every one of the 200001 rows
        of the paper's case at k = 10^5) never ask.  None when the composed kinds are not
        known, or past the last level.
        """
        if self._sharp is False:
            sharp = None
            kinds = self._region.kinds
            if kinds and self._level < _SHARPER_LEVELS:
                digits = bits_to_digits(self.prec) + 12  # beyond every bit of these balls
                try:
                    region = compose_certified(list(kinds), digits=digits)
                except (CertificationError, ResourceLimitError):
                    region = None  # (the outward ends are printed instead)
                if region is not None and region.losses == self._region.losses:
                    sharp = CertifiedResult(region, self._level + 1)
            self._sharp = sharp
        return self._sharp  # type: ignore[return-value]

    def below_one(self) -> bool:
        """Whether every delta of the region is certified < 1 (decided once, cached).

        Every delta is at most ``delta(0) = 1 - sum_l min(P0(l), P1(l))``, the sum over
        the finite losses, where both masses are positive; so every delta is < 1 exactly
        when some mass lies at a finite loss, that is when the leak (the last delta) is
        < 1: decided exactly on the exact leak when it is known, else on its ball.  A
        delta such as ``1 - 1e-877`` then has its directed roundings (``1.00...`` up,
        ``0.99...9`` down) although its ball straddles 1 at any affordable precision.
        """
        if self._below_one is None:
            leak = self._region.exact_leak
            try:
                if leak is not None:
                    below = self.dom.compare(leak, QzElem.from_rational(1)) < 0
                else:
                    ball = self._deltas_b[-1]
                    below = (
                        certified_sign(lambda prec: 1 - ball, False, "1 - leak", max_bits=64) > 0
                    )
            except CertificationError:
                below = False
            self._below_one = below
        return self._below_one

    def _sharper_value(
        self, make: Callable[[CertifiedResult], Value]
    ) -> Callable[[], Value | None]:
        """A ``sharper`` callback (:meth:`Value.from_ball`): ``make`` on :meth:`sharper`."""

        def sharp() -> Value | None:
            view = self.sharper()
            if view is None:
                return None
            try:
                return make(view)
            except CertificationError:  # (a decision the sharper balls leave open)
                return None

        return sharp

    def listed_delta(self, i: int) -> Value:
        """``delta_i`` as a certified enclosure (refined on demand for a directed rounding).

        The last delta, the leak, is refined to its exact value when that is known: it may
        be a short decimal itself (``1/4``), which no ball decides.
        """
        leak = self._region.exact_leak
        if i == self.n - 1 and leak is not None:
            dom = self.dom
            return Value.from_ball(
                self._deltas_b[i],
                nonnegative=True,
                sharper=lambda: Value.from_qz(dom, leak),
                below_one=self.below_one(),
            )
        return Value.from_ball(
            self._deltas_b[i],
            nonnegative=True,
            sharper=self._sharper_value(lambda view: view.listed_delta(i)),
            below_one=self.below_one(),
        )

    def between(self, i: int, form: LinearForm) -> Value:  # noqa: D102
        return Value.from_ball(
            _segment_ball(self, i, form)(self.prec),
            nonnegative=True,
            sharper=self._sharper_value(lambda view: view.between(i, form)),
            below_one=self.below_one(),
        )

    def below_first(self, d: Fraction) -> Value:  # noqa: D102
        return _ball_below_first(self, d)

    def on_segment(self, j: int, d: Fraction) -> Value:  # noqa: D102
        return _ball_on_segment(self, j, d)

    def tradeoff(self, t: Fraction) -> Value:
        """An enclosure of ``f(t) = max(0, 1 - d - e^l t, e^-l (1 - d - t))`` over the list."""
        region = self._region
        with flint.ctx.workprec(region.prec):
            tb = rational_ball(t)
            lo = hi = flint.arb(0)
            for i, d in enumerate(region.deltas):
                e = self.exp_ball(i, region.prec)
                for val in (1 - d - e * tb, (1 - d - tb) / e):
                    if val.lower() > lo:
                        lo = val.lower()
                    if val.upper() > hi:
                        hi = val.upper()
            return Value.from_interval(lo, hi, nonnegative=True)

    def upper_region(self) -> Region:
        """An exact region containing this one: each delta ball replaced by its upper end.

        A (by at most the ball radii) larger region: a sound, slightly looser one.
        """
        cons = []
        for loss, ball in zip(self.losses, self._deltas_b):
            # the upper end at the ball's own precision (``ball.upper()`` rounds to 53 bits)
            man, exp = (int(v) for v in ball_ends(ball)[1].mid().man_exp())
            hi = Fraction(man) * Fraction(2) ** exp
            cons.append((loss, min(max(hi, Fraction(0)), Fraction(1))))
        return Region.from_constraints(self.dom, cons, warn=False)

#: the exact region is computed to break a vertex tie when estimated to take at most this
_TIE_SECONDS = 20.0

#: how many times a certified region is recomputed at a higher precision to decide the
#: directed roundings its balls leave open (:meth:`CertifiedResult.sharper`)
_SHARPER_LEVELS = 3

#: the result class of each listed region type (the one place that maps a region to its
#: result; the routes construct results directly)
_RESULTS: dict[type, type[ListedResult]] = {Region: ExactResult, CertifiedRegion: CertifiedResult}


def listed_result(region: Region | CertifiedRegion) -> ListedResult:
    """The result object of an exact or certified region (for expert callers)."""
    try:
        return _RESULTS[type(region)](region)
    except KeyError:
        raise TypeError(
            f"expected a Region or a CertifiedRegion, got {type(region).__name__}"
        ) from None


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


# ---------------------------------------------------------------------------------------
# delta(eps)
# ---------------------------------------------------------------------------------------


def delta_value(region: Region | CertifiedRegion, eps: Any) -> Value:
    """``delta(eps)``: the smallest delta such that the composition is (eps, delta)-DP.

    Args:
        region: an exact :class:`~dpcompose_exact.regions.tradeoff.Region` or a
            :class:`~dpcompose_exact.engines.certified.CertifiedRegion`.
        eps: any exact epsilon >= 0 (``"0.123457"``, ``"log(2)"``, a Fraction, ...).

    Returns:
        An exact :class:`Value` (closed form ``A - exp(eps)*B``, or an element of the
        region's field when ``eps`` lies in it) for an exact region; a certified
        enclosure for a certified region.
    """
    return listed_result(region).delta(parse_eps(eps))


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


def _exact_between(view: ExactResult, i: int, form: LinearForm) -> Value:
    """``delta(eps)`` strictly inside segment ``i`` of an exact region, as a closed form."""
    dom = view.dom
    a, b = view.region.segment(i)
    try:  # eps in the region's own field: one exact element, no growth (l_0 <= ... < l_n)
        loss = dom.loss(form)
    except UnsupportedExpressionError:
        loss = None
    if loss is not None:
        return view.value(a - dom.exp_loss(loss) * b)
    joined = _cheap_join(dom, form)
    if joined is not None:  # a small field extension keeps one canonical exact element
        x = dom.convert_elem(a, joined) - joined.exp_loss(joined.loss(form)) * dom.convert_elem(
            b, joined
        )
        return Value.from_qz(
            joined,
            x,
            closed_form=lambda: joined.elem_closed_form(x),
            parts=lambda: elem_parts(joined.g0, x),
        )

    def closed() -> str:
        return f"{_paren(dom.elem_closed_form(a))} - exp({form})*{_paren(dom.elem_closed_form(b))}"

    def parts() -> ClosedParts:
        shift = None if form.logs else form.rational
        return elem_parts(dom.g0, a, minus=(b, shift))

    # delta > 0 strictly inside a segment (the deltas decrease strictly), so not zero
    ball = _segment_ball(view, i, form)
    return Value(ball, closed_form=closed, is_zero=False, lin=(dom, a, b, form), parts=parts)


#: largest factor by which a query may raise the degrees of the region's elements when it
#: joins their field (beyond: the closed form stays ``A - exp(eps) B``).
_MAX_JOIN_FACTOR = 8


def _cheap_join(dom: ExpDomain, form: LinearForm) -> ExpDomain | None:
    """The field of the region and ``eps`` together, when joining costs little, else None.

    Joining multiplies every degree in ``z`` by ``g0 / g0'`` (``g0'`` the joined generator):
    new primes cost nothing, and a region without ``z`` (all constants) gains a degree-one
    generator.  A query such as ``0.123457`` next to losses in steps of ``3/20`` would
    multiply degrees by 150000, and is answered as ``A - exp(eps) B`` instead.
    """
    try:
        joined = dom.join(ExpDomain.for_forms([form]))
    except (UnsupportedExpressionError, ResourceLimitError):
        return None
    if dom.g0 is not None and joined.g0 is not None and dom.g0 / joined.g0 > _MAX_JOIN_FACTOR:
        return None
    try:
        joined.loss(form)
    except UnsupportedExpressionError:
        return None
    return joined


def _paren(text: str) -> str:
    return text if text.isdigit() else f"({text})"


# ---------------------------------------------------------------------------------------
# eps(delta)
# ---------------------------------------------------------------------------------------


def epsilon_value(region: Region | CertifiedRegion, delta: Any) -> Value:
    """``eps(delta)``: the smallest eps >= 0 such that the composition is (eps, delta)-DP.

    Raises:
        InvalidParameterError: outside ``[0, 1)``, or below the leak (no finite eps).
    """
    return listed_result(region).epsilon(parse_delta(delta))


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


def _exact_below_first(view: ExactResult, dq: Fraction) -> Value:
    c = view.region.fixed_point()
    if view.dom.compare(1 - 2 * c, QzElem.from_rational(dq)) <= 0:
        return Value.from_rational(0)
    return _log_value(view, (1 - QzElem.from_rational(dq)) / c - 1)


def _exact_on_segment(view: ExactResult, j: int, dq: Fraction) -> Value:
    da, db = view.deltas_x[j], view.deltas_x[j + 1]
    ea, eb = view.exps_x[j], view.exps_x[j + 1]
    return _log_value(view, ea + (da - dq) * (eb - ea) / (da - db))


def _ball_below_first(view: CertifiedResult, dq: Fraction) -> Value:
    with flint.ctx.workprec(view.prec):
        c_b = (1 - view.delta_ball(0, 0)) / (1 + view.exp_ball(0, 0))
        d_b = rational_ball(dq)
        if 1 - 2 * c_b <= d_b:
            return Value.from_rational(0)
        if not 1 - 2 * c_b > d_b:
            raise _VertexTie(f"delta = {_short_rational(dq)} is too close to delta(0) to decide")
        return Value.from_ball(
            ((1 - d_b) / c_b - 1).log(),
            nonnegative=True,
            sharper=view._sharper_value(lambda sharp: _ball_below_first(sharp, dq)),
        )


def _ball_on_segment(view: CertifiedResult, j: int, dq: Fraction) -> Value:
    with flint.ctx.workprec(view.prec):
        da_b, db_b = view.delta_ball(j, 0), view.delta_ball(j + 1, 0)
        ea_b, eb_b = view.exp_ball(j, 0), view.exp_ball(j + 1, 0)
        d_b = rational_ball(dq)
        return Value.from_ball(
            (ea_b + (da_b - d_b) * (eb_b - ea_b) / (da_b - db_b)).log(),
            nonnegative=True,
            sharper=view._sharper_value(lambda sharp: _ball_on_segment(sharp, j, dq)),
        )


def _log_value(view: ExactResult, big_e: QzElem) -> Value:
    dom = view.dom
    return Value.from_log_qz(
        dom,
        big_e,
        closed_form=lambda: f"log({dom.elem_closed_form(big_e)})",
        parts=lambda: elem_parts(dom.g0, big_e, log=True),
    )


# ---------------------------------------------------------------------------------------
# Printable points (the command line)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CurvePoint:
    """One point of a privacy curve: exact strings (when known) and certified decimals.

    The strings are computed on demand from the two values: a closed form is never built
    unless asked for (the rows of :func:`~dpcompose_exact.presentation.rows.point_row`
    build none unless asked).
    """

    epsilon_value: Value
    delta_value: Value
    digits: int = 30
    given: str = "epsilon"  # the coordinate the user gave (not repeated as a closed form)

    @property
    def epsilon(self) -> str | None:
        """The exact epsilon, or None when only certified."""
        return self.epsilon_value.exact

    @property
    def delta(self) -> str | None:
        """The exact delta (None when only certified, or when delta was the input)."""
        return None if self.given == "delta" else self.delta_value.exact

    @property
    def epsilon_decimal(self) -> str:
        """Certified decimal of epsilon."""
        return self.epsilon_value.decimal(self.digits)

    @property
    def delta_decimal(self) -> str:
        """Certified decimal of delta."""
        return self.delta_value.decimal(self.digits)


def delta_of_eps(region: Region | CertifiedRegion, eps: Any, digits: int = 30) -> CurvePoint:
    """``delta(eps)`` as a printable point (see :func:`delta_value`)."""
    form = parse_eps(eps)
    return CurvePoint(Value.from_form(form), listed_result(region).delta(form), digits)


def eps_of_delta(region: Region | CertifiedRegion, delta: Any, digits: int = 30) -> CurvePoint:
    """``eps(delta)`` as a printable point (see :func:`epsilon_value`)."""
    value = epsilon_value(region, delta)
    given = Value.from_rational(_parse_rational(delta, "delta"))
    return CurvePoint(value, given, digits, given="delta")
