"""Output rows built from results: the one place where answers become row dictionaries.

A result (:class:`~dpcompose_exact.engines.results.PrivacyResult`) answers ``delta``,
``epsilon``, ``tradeoff`` and ``constraints`` with :class:`~dpcompose_exact.numbers.value.Value`
and says how it knows them in its one exactness field (``kind``,
:class:`~dpcompose_exact.engines.results.Exactness`).  This module lays those answers out
as the rows every output format writes (tables, CSV, LaTeX, JSON):

* :func:`region_rows`: one row per constraint of an exact or certified region (made one
  at a time: a large region prints hundreds of megabytes of closed forms);
* :func:`curve_rows`: the rows of ``delta(eps)`` or ``eps(delta)`` queries: certified
  points (:func:`point_row`), or enclosures (:func:`bounded_rows`) for results of kind
  ``bounds``;
* :func:`table_rows`: enclosure rows as plain table cells.

Exact strings are :class:`~.readable.ExactText`: the string, and the polynomials it was
printed from, from which tables and LaTeX make their readable forms.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from typing import Any

import flint

from ..engines.bounds import reported_width
from ..engines.results import CertifiedResult, Exactness, ExactResult, ListedResult
from ..numbers import ExpDomain, QzElem
from ..numbers.closed import elem_parts, factored_parts
from ..numbers.convert import digits_to_bits
from ..numbers.domain import _start_prec
from ..numbers.format import (
    check_rounding,
    directed_rational,
    exact_decimal,
    exact_or_rounded,
    outward_decimal,
    short_enclosure,
)
from ..numbers.rowforms import RowForms
from ..numbers.value import Value
from .readable import ExactText

__all__ = [
    "region_rows",
    "curve_rows",
    "point_row",
    "bounded_rows",
    "table_rows",
    "ROUNDED_BY",
]


def region_rows(
    result: Any,
    digits: int,
    exact: bool,
    structured: bool = True,
    rounding: str | None = None,
    forms_wanted: Callable[[], bool] | None = None,
    directed_only: bool = False,
    parts_up_to: int | None = None,
) -> Iterator[dict[str, Any]]:
    """One row per constraint of a result's region, increasing epsilon, one at a time.

    Keys: ``epsilon``, ``delta`` (exact; only when ``exact``), ``epsilon_decimal``,
    ``delta_decimal`` (``digits`` significant digits) and, when ``exact`` and
    ``structured``, ``delta_structured``: ``{"g", "num", "den"}``, the delta as two
    coefficient/exponent lists in ``z = exp(g)`` that stay machine-readable at any
    length (:func:`~dpcompose_exact.numbers.read_structured`).  Both exact forms of a
    delta come from one conversion of its coefficients
    (:class:`~dpcompose_exact.numbers.rowforms.RowForms`).  With ``rounding``, also
    ``epsilon_rounded`` and ``delta_rounded``: the same digits rounded in that certified
    direction (:meth:`~dpcompose_exact.numbers.value.Value.rounded`; ``"up"`` is never
    below the exact value).  A certified region has no exact deltas.

    ``forms_wanted`` (asked before each row): False leaves the exact delta's two forms
    out of that row and the rows after it, without making them (the JSON output's size
    budget, :func:`~dpcompose_exact.presentation.forms_file.budget_forms`); the decimals
    then evaluate the delta as it was composed, without reducing it (the digits are
    certified either way).

    ``directed_only`` (with ``rounding``): for a writer that prints the directed decimals
    in the decimal columns (CSV): ``epsilon_decimal`` and ``delta_decimal`` hold the
    directed decimals too, instead of nearest ones made only to be replaced (the keys and
    their order stay; the k = 10^5 CSV spent a fifth of its time on them).

    ``parts_up_to``: an exact delta longer than this many characters carries no parts
    (:class:`~.readable.ExactText` with none): a writer that makes readable forms only of
    shorter ones (tables and LaTeX: ``READ_LIMIT`` under ``--exact auto``; 0 for JSON and
    CSV, which make none) then does not keep every row's reduced element alive until it
    has the rows (``compose --dp 0.5,1e-12 -k 355``: 566 -> 459 MiB peak).  None: every
    exact delta carries its parts.

    Raises:
        ResourceLimitError: the result has no constraint list (curves only).
    """
    if not isinstance(result, ListedResult):
        result.constraints()  # refuses in one line, saying what to ask instead
        raise TypeError(f"{type(result).__name__} has no region rows")
    directed = directed_only and rounding is not None
    if result.kind is Exactness.EXACT:
        return _exact_rows(
            result, digits, exact, structured, rounding, forms_wanted, directed, parts_up_to
        )
    return _certified_rows(result, digits, exact, rounding, directed)


def _exact_rows(
    result: ExactResult,
    digits: int,
    exact: bool,
    structured: bool,
    rounding: str | None,
    forms_wanted: Callable[[], bool] | None,
    directed: bool = False,
    parts_up_to: int | None = None,
) -> Iterator[dict[str, Any]]:
    dom = result.dom
    forms = RowForms(dom) if exact else None
    lost: list[int] = []  # bits the last row's evaluation lost to cancellation
    for loss, d in result.region.constraints:
        row: dict[str, Any] = {}
        struct = None
        value = d  # what the decimal evaluates: the lowest terms when they are at hand
        if forms is not None and forms_wanted is not None and not forms_wanted():
            forms = None  # this row and the rest: no forms
        if exact:
            row["epsilon"] = dom.loss_str(loss)
        if forms is not None:
            closed, struct, value = forms.forms_and_reduced(d, closed=True, structured=structured)
            keep = closed is not None and (parts_up_to is None or len(closed) <= parts_up_to)
            parts = _row_parts(dom, value) if keep else None
            row["delta"] = ExactText(closed, parts)  # type: ignore[arg-type]
        # one ball for both decimals, at the precision the row before needed (the
        # cancellation changes little from row to row) when that is the lower
        delta = Value.from_qz(dom, value, start=_row_start(value, lost))
        plain = _rational_decimal(value, digits)  # an exact rational delta: in full
        if directed:
            assert rounding is not None
            e_rounded = _loss_rounded(dom, loss, digits, rounding)
            d_rounded = plain or delta.rounded(digits, rounding)
            row["epsilon_decimal"], row["delta_decimal"] = e_rounded, d_rounded
        else:
            row["epsilon_decimal"] = _loss_decimal(dom, loss, digits)
            row["delta_decimal"] = plain or delta.decimal(digits)
        if rounding is not None:
            if not directed:
                e_rounded = _loss_rounded(dom, loss, digits, rounding)
                d_rounded = plain or delta.rounded(digits, rounding)
            row["epsilon_rounded"], row["delta_rounded"] = e_rounded, d_rounded
        bits = delta.precision_lost()
        lost[:] = [] if bits is None else [bits]
        if struct is not None:  # exact at any length (numbers.read_structured reads it)
            row["delta_structured"] = struct
        yield row


def _rational_decimal(x: QzElem, digits: int) -> str | None:
    """A delta that is a terminating rational (no ``z``), in full; else None.

    Only an element of low degree is reduced for it (a cheap gcd); a large one is read
    as it is.
    """
    if x.num.degree() > 0 or x.den.degree() != 0:
        if max(x.num.degree(), x.den.degree()) > 64 or x.num.degree() != x.den.degree():
            return None
    q = x.as_rational()
    return None if q is None else exact_decimal(q, digits)


def _row_parts(dom: ExpDomain, x: QzElem) -> Callable[[], Any]:
    """The parts of a row's closed form, as :class:`RowForms` printed it (made on demand)."""

    def make() -> Any:
        parts = x.factored()
        if parts is None or parts[0].is_zero():
            return elem_parts(dom.g0, x)
        return factored_parts(dom.g0, *parts)

    return make


def _row_start(x: QzElem, lost: list[int]) -> Callable[[int], int]:
    """The first working precision of a row's decimals (see :func:`region_rows`).

    The domain's default (:func:`~dpcompose_exact.numbers.domain._start_prec`: as many bits
    as the coefficients, in case they all cancel), or the previous row's loss ``lost``
    plus the digits and 64 guard bits when that is lower; the search doubles from there
    when it is not enough, so only the time depends on it.
    """

    def start(digits: int) -> int:
        full = _start_prec(x, digits)
        if not lost:
            return full
        return min(full, digits_to_bits(digits, 64) + lost[0])

    return start


def _certified_rows(
    result: CertifiedResult,
    digits: int,
    exact: bool,
    rounding: str | None,
    directed: bool = False,
) -> Iterator[dict[str, Any]]:
    """The rows of a certified region (exact epsilons, certified deltas, no exact delta).

    ``directed``: the decimal columns hold the directed decimals (see :func:`region_rows`).
    """
    dom = result.dom
    region = result.region
    for i, loss in enumerate(result.losses):
        row: dict[str, Any] = {"epsilon": dom.loss_str(loss)} if exact else {}
        if rounding is not None:
            e_rounded = _loss_rounded(dom, loss, digits, rounding)
            # decided by this region's ball, or else by the one sharper region
            # (CertifiedResult.sharper, computed once for every row that needs it)
            d_rounded = result.listed_delta(i).rounded(digits, rounding)
        if directed:
            row["epsilon_decimal"], row["delta_decimal"] = e_rounded, d_rounded
        else:
            row["epsilon_decimal"] = _loss_decimal(dom, loss, digits)
            row["delta_decimal"] = region.delta_decimal(i, digits)
        if rounding is not None:
            row["epsilon_rounded"], row["delta_rounded"] = e_rounded, d_rounded
        yield row


def _loss_decimal(dom: ExpDomain, loss: Any, digits: int) -> str:
    """A loss value's decimal, to ``digits`` certified significant digits.

    A terminating rational is printed in full (``0.15``), never padded with zeros.
    """
    form = dom.form(loss)
    if not form.logs:
        text = exact_decimal(Fraction(form.rational), digits)
        if text is not None:
            return text
    return dom.loss_decimal(loss, digits)


def _loss_rounded(dom: ExpDomain, loss: Any, digits: int, rounding: str) -> str:
    """A loss value rounded in the direction ``rounding`` (:meth:`Value.rounded`).

    A rational loss (no logarithms: every loss of a region over ``z = e^{g0}``, g0
    rational) is rounded by exact rational arithmetic at once, without a Value: the rows
    of a certified region of 10^5 losses are made at a few microseconds each.
    """
    form = dom.form(loss)
    if form.logs or rounding == "nearest":
        return Value.from_loss(dom, loss).rounded(digits, rounding)
    q = form.rational
    text = exact_decimal(Fraction(q), digits)  # exact: in full, never padded with zeros
    if text is not None:
        return text
    return directed_rational(flint.fmpq(q.numerator, q.denominator), digits, rounding == "down")


# ---------------------------------------------------------------------------------------
# curves
# ---------------------------------------------------------------------------------------


def _exact_text(value: Value) -> ExactText | None:
    text = value.exact
    return None if text is None else ExactText(text, value.parts)


def point_row(
    eps: Value,
    delta: Value,
    digits: int,
    exact: bool = True,
    rounding: str | None = None,
    given: str = "epsilon",
) -> dict[str, str]:
    """The row of one point of a privacy curve: exact strings (when known) and decimals.

    ``given``: the coordinate the user gave (its closed form is not repeated when it is
    the delta).  With ``rounding``, also the directed decimals ``epsilon_rounded`` and
    ``delta_rounded`` (:meth:`~dpcompose_exact.numbers.value.Value.rounded`).  No closed
    form is made unless ``exact``.
    """
    out: dict[str, str] = {}
    if exact:
        eps_text = _exact_text(eps)
        if eps_text is not None:
            out["epsilon"] = eps_text
        delta_text = None if given == "delta" else _exact_text(delta)
        if delta_text is not None:
            out["delta"] = delta_text
    out["epsilon_decimal"] = _unpadded(eps, digits) or eps.decimal(digits)
    out["delta_decimal"] = _unpadded(delta, digits) or delta.decimal(digits)
    if rounding is not None:
        out["epsilon_rounded"] = _unpadded(eps, digits) or eps.rounded(digits, rounding)
        out["delta_rounded"] = _unpadded(delta, digits) or delta.rounded(digits, rounding)
    return out


def _unpadded(value: Value, digits: int) -> str | None:
    """An exact rational value's full decimal (``0.5``, ``0.00001``), or None.

    Exact inputs are echoed as they are, never padded with zeros to ``digits`` digits.
    """
    q = value.known_rational()  # never builds a closed form (a long one costs minutes)
    if q is None:
        return None
    return exact_decimal(q, digits)


def curve_rows(
    result: Any,
    command: str,
    points: Sequence[Any],
    digits: int,
    exact: bool,
    rounding: str | None = None,
) -> list[dict[str, Any]]:
    """Rows of ``delta`` (at parsed eps forms) or ``epsilon`` (at parsed deltas) answers.

    By the result's exactness: ``bounds``, the enclosures as :func:`bounded_rows` lays
    them out; exact or certified, the certified points of :func:`point_row`.
    """
    if result.kind is Exactness.BOUNDS:
        return bounded_rows(result, command, points, digits, rounding)
    if command == "delta":
        return [
            point_row(Value.from_form(f), result.delta(f).probability(), digits, exact, rounding)
            for f in points
        ]
    return [
        point_row(result.epsilon(d), Value.from_rational(d), digits, exact, rounding, "delta")
        for d in points
    ]


#: a query point's exact text longer than this is written as a decimal when it is one
LONG_QUERY = 40


def query_text(q: Any) -> str:
    """The exact text of a query point: ``str(q)``, or a long ``p/q`` that is a decimal as one.

    A ``delta`` of ``1e-4000`` is the rational ``1/10^4000``: written as a fraction it has
    4000 digits, as a decimal ``1e-4000`` (the same number, read back by the parser).
    Short texts (``1/100000``) are kept as they are.

    >>> query_text(Fraction(1, 10**50)), query_text(Fraction(1, 3 * 10**50))[:6]
    ('1e-50', '1/3000')
    """
    text = str(q)
    if len(text) <= LONG_QUERY or text.count("/") != 1:
        return text
    num, _, den = text.partition("/")
    if not (num.lstrip("-").isdigit() and den.isdigit()):
        return text
    try:
        value = Fraction(int(num), int(den))
    except ValueError:  # past CPython's digit limit of int(str): kept as it is
        return text
    return exact_decimal(value, len(num) + 1) or text


#: ``*_rounded_by`` of a bounds row: the enclosure decides the exact value's directed
#: rounding, or only its outward end is known to be on the safe side
ROUNDED_BY = {True: "value", False: "enclosure"}


def bounded_rows(
    bounded: Any,
    command: str,
    queries: Sequence[Any],
    digits: int = 30,
    rounding: str | None = None,
) -> list[dict[str, str]]:
    """Rows of ``delta`` (``command="delta"``) or ``epsilon`` answers from bounds.

    When every one of ``digits`` digits is certified the row carries the decimal
    (``delta_decimal`` / ``epsilon_decimal``), else ``*_lower`` and ``*_upper`` rounded
    outward, with the certified relative width.  With ``rounding`` ``"up"`` or
    ``"down"`` a certified decimal also comes rounded in that direction (``*_rounded``):
    the exact value's own directed rounding when the enclosure decides it
    (``*_rounded_by``: ``"value"``), else the directed rounding of the enclosure's upper
    (``up``) or lower (``down``) end (``"enclosure"``: on the safe side of the value, but
    perhaps one unit in the last place further out than its own rounding).
    """
    directed = rounding is not None and check_rounding(rounding) != "nearest"
    rows = []
    for q in queries:
        if command == "delta":
            v, given, name = bounded.delta(q).probability(), "epsilon", "delta"
        else:
            v, given, name = bounded.epsilon(q), "delta", "epsilon"
        row = {given: query_text(q)}
        if v.certified_digits() >= digits:
            row[f"{name}_decimal"] = v.decimal(digits)
            if directed:
                text, decided = v.directed(digits, rounding)  # type: ignore[arg-type]
                row[f"{name}_rounded"] = text
                row[f"{name}_rounded_by"] = ROUNDED_BY[decided]
        else:
            lo, hi = v.interval(digits)
            row[f"{name}_lower"] = lo
            row[f"{name}_upper"] = hi
            w = reported_width(v)  # None (JSON null) when the lower end is 0
            row["relative_width"] = (
                None
                if w is None
                else outward_decimal(w.upper(), 3, down=False)
                if w.is_finite()
                else "inf"
            )
        rows.append(row)
    return rows


def table_rows(rows: Sequence[dict[str, str]], digits: int = 30) -> list[dict[str, str]]:
    """:func:`bounded_rows` for a plain table: each value, or ``[lower, upper]``.

    An enclosure is printed with the digits it certifies: its ends to the first digit
    where they differ, plus one, rounded outward, at most ``digits`` significant digits
    (:func:`~dpcompose_exact.numbers.format.short_enclosure`; the JSON keeps the full
    ends).  Rows with directed decimals (``*_rounded``) keep them, an enclosure's outward
    end marked ``(outward end)``; an interval stands for itself in either direction.
    """
    directed = any(k.endswith("_rounded") for r in rows for k in r)
    out = []
    for r in rows:
        cells = {}
        for name in ("epsilon", "delta"):
            if f"{name}_lower" in r:
                lo, hi = short_enclosure(r[f"{name}_lower"], r[f"{name}_upper"], digits)
                cells[f"{name}_decimal"] = f"[{lo}, {hi}]"
                if directed:
                    cells[f"{name}_rounded"] = cells[f"{name}_decimal"]
            else:
                given = r.get(name, "")  # the coordinate given: its exact decimal
                cells[f"{name}_decimal"] = r.get(
                    f"{name}_decimal", exact_or_rounded(given, given, digits) if given else ""
                )
                if f"{name}_rounded" in r:
                    mark = r.get(f"{name}_rounded_by") == ROUNDED_BY[False]
                    cells[f"{name}_rounded"] = r[f"{name}_rounded"] + (
                        " (outward end)" if mark else ""
                    )
        out.append(cells)
    return out
