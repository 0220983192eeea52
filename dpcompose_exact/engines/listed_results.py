"""Exact and certified results: the two listed results and where their numbers come from.

Both answer through the curve algorithms of :mod:`~dpcompose_exact.engines.curves`
(docs/theory.md, section 3) and differ only in where the deltas and the ``e^{l_i}`` come
from:

* :class:`ExactResult`: an exact region, every delta an element of Q(z), ``z = e^g``;
  ``delta(eps) = A - e^eps B`` on a segment, with ``B = (delta_i - delta_{i+1}) /
  (e^{l_{i+1}} - e^{l_i})`` and ``A = delta_{i+1} + e^{l_{i+1}} B`` elements of the
  region's own field (the query never joins it unless that is cheap:
  :func:`_cheap_join`), and ``eps(delta) = log(e^{l_i} + (delta_i - delta) (e^{l_{i+1}}
  - e^{l_i}) / (delta_i - delta_{i+1}))``, the log of an exact element;
* :class:`CertifiedResult`: exact losses, Arb-ball deltas (large k, docs/theory.md,
  section 13); a query the balls cannot place (a vertex tie) is decided on the exact
  region when that is affordable, and a directed rounding the balls leave open on the
  region recomputed at a higher precision (:meth:`CertifiedResult.sharper`).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import flint

from ..errors import (
    CertificationError,
    ResourceLimitError,
    UnsupportedExpressionError,
)
from ..numbers import ExpDomain, LinearForm, QzElem, certified_sign
from ..numbers.closed import ClosedParts, elem_parts
from ..numbers.convert import bits_to_digits, rational_ball
from ..numbers.value import Value, ball_ends
from ..regions.tradeoff import Region
from .certified import CertifiedRegion, compose_certified
from .curves import ListedResult, _epsilon, _Lazy, _segment_ball, _short_rational, _VertexTie
from .genfunc import compose_plds
from .memory import exact_seconds_estimate
from .result_interface import Exactness

__all__ = ["ExactResult", "CertifiedResult", "listed_result"]


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
