"""Privacy curves of a composed region: delta(eps) and eps(delta), exactly.

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
:func:`delta_value` and :func:`epsilon_value` return :class:`~dpcompose_exact.value.Value`;
:func:`delta_of_eps` and :func:`eps_of_delta` wrap them as printable :class:`CurvePoint`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint

from .certified import CertifiedRegion
from .errors import (
    BelowLeakError,
    CertificationError,
    InvalidParameterError,
    ResourceLimitError,
    UnsupportedExpressionError,
)
from .numbers import (
    ExpDomain,
    LinearForm,
    QzElem,
    certified_sign,
    check_query_size,
    linear_form,
    parse_exact,
)
from .numbers import parse_rational as _parse_rational
from .tradeoff import Region
from .value import Value

__all__ = ["CurvePoint", "delta_of_eps", "eps_of_delta", "delta_value", "epsilon_value"]


# ---------------------------------------------------------------------------------------
# One view of exact and certified regions
# ---------------------------------------------------------------------------------------


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


class _View:
    """The region's losses, with its deltas and ``e^{l_i}`` as balls (and exactly if known).

    Everything per loss is computed on demand: a certified region of 10^5 losses is
    located by bisection, so a query touches a few dozen of them.
    """

    def __init__(self, region: Region | CertifiedRegion) -> None:
        self.region = region
        self.dom: ExpDomain = region.domain
        self.losses = tuple(region.losses)
        n = len(self.losses)
        self.forms = _Lazy(n, lambda i: self.dom.form(self.losses[i]))
        self.exact = isinstance(region, Region)
        if self.exact:
            self.deltas_x: tuple[QzElem, ...] = region.deltas  # type: ignore[assignment]
            self.exps_x = _Lazy(n, lambda i: self.dom.exp_loss(self.losses[i]))
            self.prec = None
        else:
            self.prec = region.prec  # type: ignore[union-attr]
            self._deltas_b = region.deltas  # type: ignore[union-attr]

            def exp_ball(i: int) -> flint.arb:
                with flint.ctx.workprec(self.prec):
                    return self.dom.loss_ball(self.losses[i], self.prec).exp()

            self._exps_b = _Lazy(n, exp_ball)

    @property
    def n(self) -> int:
        return len(self.losses)

    def delta(self, i: int, prec: int) -> flint.arb:
        if self.exact:
            return self.dom.elem_ball(self.deltas_x[i], prec)
        return self._deltas_b[i]

    def exp(self, i: int, prec: int) -> flint.arb:
        if self.exact:
            return self.dom.elem_ball(self.exps_x[i], prec)
        return self._exps_b[i]

    def delta_vs(self, i: int, d: Fraction) -> int:
        """Sign of ``delta_i - d`` (exact for exact regions; balls, or refuse, if certified)."""
        if self.exact:
            return self.dom.compare(self.deltas_x[i], QzElem.from_rational(d))
        with flint.ctx.workprec(self.prec or 64):
            diff = self._deltas_b[i] - flint.arb(flint.fmpq(d.numerator, d.denominator))
        if diff > 0:
            return 1
        if diff < 0:
            return -1
        raise CertificationError(
            f"delta = {d} is too close to a vertex of the certified region to place it "
            f"with {self.prec} bits"
        )

    def closed(self, x: QzElem) -> Callable[[], str]:
        return lambda: self.dom.elem_closed_form(x)

    def value(self, x: QzElem) -> Value:
        return Value.from_qz(self.dom, x, closed_form=self.closed(x))


def _locate(view: _View, form: LinearForm) -> tuple[int, bool]:
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


def _parse_eps(eps: Any) -> LinearForm:
    e = parse_exact(eps, "eps")
    form = linear_form(e, "eps")
    check_query_size(form, "eps", eps)
    if form.sign() < 0:
        raise InvalidParameterError(f"eps = {eps!r} is negative; valid range: eps >= 0")
    return form


def delta_value(region: Region | CertifiedRegion, eps: Any) -> Value:
    """``delta(eps)``: the smallest delta such that the composition is (eps, delta)-DP.

    Args:
        region: an exact :class:`~dpcompose_exact.tradeoff.Region` or a
            :class:`~dpcompose_exact.certified.CertifiedRegion`.
        eps: any exact epsilon >= 0 (``"0.123457"``, ``"log(2)"``, a Fraction, ...).

    Returns:
        An exact :class:`Value` (closed form ``A - exp(eps)*B``, or an element of the
        region's field when ``eps`` lies in it) for an exact region; a certified
        enclosure for a certified region.
    """
    view = _View(region)
    return _delta(view, _parse_eps(eps))


def _delta(view: _View, form: LinearForm) -> Value:
    i, equal = _locate(view, form)
    if i == view.n - 1 or equal:  # at a listed loss, or above the largest: a listed delta
        if view.exact:
            return view.value(view.deltas_x[i])
        return Value.from_ball(view.delta(i, 0))

    def ball(prec: int) -> flint.arb:
        with flint.ctx.workprec(prec + 16):
            big_e = form.exp_ball(prec + 16)
            if i < 0:  # below every edge slope: the vertex (c, c)
                c = (1 - view.delta(0, prec + 16)) / (1 + view.exp(0, prec + 16))
                return 1 - c * (1 + big_e)
            # delta_{i+1} + (delta_i - delta_{i+1}) (e^{l_{i+1}} - e^eps) / (e^{l_{i+1}} - e^{l_i}):
            # every term is >= 0, so nothing cancels but the factor e^{l_{i+1}} - e^eps
            da, db = view.delta(i, prec + 16), view.delta(i + 1, prec + 16)
            ea, eb = view.exp(i, prec + 16), view.exp(i + 1, prec + 16)
            return db + (da - db) * (eb - big_e) / (eb - ea)

    if not view.exact:
        return Value.from_ball(ball(view.prec or 64))
    dom = view.dom
    a, b = view.region.segment(i)  # type: ignore[union-attr]
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
        return Value.from_qz(joined, x, closed_form=lambda: joined.elem_closed_form(x))

    def closed() -> str:
        return f"{_paren(dom.elem_closed_form(a))} - exp({form})*{_paren(dom.elem_closed_form(b))}"

    # delta > 0 strictly inside a segment (the deltas decrease strictly), so not zero
    return Value(ball, closed_form=closed, is_zero=False, lin=(dom, a, b, form))


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
    d = _parse_rational(delta, "delta")
    check_query_size(LinearForm(d), "delta", delta)
    if not 0 <= d < 1:
        raise InvalidParameterError(f"delta = {delta!r} is outside the valid range [0, 1)")
    return _epsilon(_View(region), d)


def _epsilon(view: _View, d: Fraction) -> Value:
    dom = view.dom
    n = view.n
    if view.delta_vs(n - 1, d) > 0:
        leak = (
            Value.from_qz(dom, view.deltas_x[-1])
            if view.exact
            else Value.from_ball(view.delta(n - 1, 0))
        )
        raise BelowLeakError(
            f"delta = {d} is below the probability {leak.describe()} that the "
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
    dq = Fraction(d)
    if j < 0:  # on [0, l_0]: delta(eps) = 1 - c (1 + e^eps)
        if view.exact:
            c = view.region.fixed_point()  # type: ignore[union-attr]
            if dom.compare(1 - 2 * c, QzElem.from_rational(dq)) <= 0:
                return zero
            big_e = (1 - QzElem.from_rational(dq)) / c - 1
            return _log_value(view, big_e)
        with flint.ctx.workprec(view.prec or 64):
            c_b = (1 - view.delta(0, 0)) / (1 + view.exp(0, 0))
            d_b = flint.arb(flint.fmpq(dq.numerator, dq.denominator))
            if 1 - 2 * c_b <= d_b:
                return zero
            if not 1 - 2 * c_b > d_b:
                raise CertificationError(f"delta = {d} is too close to delta(0) to decide")
            return Value.from_ball(((1 - d_b) / c_b - 1).log())
    if view.exact:
        da, db = view.deltas_x[j], view.deltas_x[j + 1]
        ea, eb = view.exps_x[j], view.exps_x[j + 1]
        big_e = ea + (da - dq) * (eb - ea) / (da - db)
        return _log_value(view, big_e)
    with flint.ctx.workprec(view.prec or 64):
        da_b, db_b = view.delta(j, 0), view.delta(j + 1, 0)
        ea_b, eb_b = view.exp(j, 0), view.exp(j + 1, 0)
        d_b = flint.arb(flint.fmpq(dq.numerator, dq.denominator))
        return Value.from_ball((ea_b + (da_b - d_b) * (eb_b - ea_b) / (da_b - db_b)).log())


def _log_value(view: _View, big_e: QzElem) -> Value:
    dom = view.dom
    return Value.from_log_qz(dom, big_e, closed_form=lambda: f"log({dom.elem_closed_form(big_e)})")


# ---------------------------------------------------------------------------------------
# Printable points (the command line)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CurvePoint:
    """One point of a privacy curve: exact strings (when known) and certified decimals.

    The strings are computed on demand from the two values: a closed form is never built
    unless asked for (``as_dict(exact=False)`` builds none).
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

    def as_dict(self, exact: bool = True, rounding: str | None = None) -> dict[str, str]:
        """JSON row.

        With ``rounding``, also the directed decimals ``epsilon_rounded`` and
        ``delta_rounded`` (:meth:`~dpcompose_exact.value.Value.rounded`).
        """
        out = {}
        if exact and self.epsilon is not None:
            out["epsilon"] = self.epsilon
        if exact and self.delta is not None:
            out["delta"] = self.delta
        out["epsilon_decimal"] = self.epsilon_decimal
        out["delta_decimal"] = self.delta_decimal
        if rounding is not None:
            out["epsilon_rounded"] = self.epsilon_value.rounded(self.digits, rounding)
            out["delta_rounded"] = self.delta_value.rounded(self.digits, rounding)
        return out


def delta_of_eps(region: Region | CertifiedRegion, eps: Any, digits: int = 30) -> CurvePoint:
    """``delta(eps)`` as a printable point (see :func:`delta_value`)."""
    form = _parse_eps(eps)
    return CurvePoint(Value.from_form(form), _delta(_View(region), form), digits)


def eps_of_delta(region: Region | CertifiedRegion, delta: Any, digits: int = 30) -> CurvePoint:
    """``eps(delta)`` as a printable point (see :func:`epsilon_value`)."""
    value = epsilon_value(region, delta)
    given = Value.from_rational(_parse_rational(delta, "delta"))
    return CurvePoint(value, given, digits, given="delta")
