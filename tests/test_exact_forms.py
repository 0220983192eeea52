"""The exact route's printed forms against a reference computed the old, slow way.

The exact route keeps denominators factored, reduces by evaluation and Taylor shifts,
makes the blocks by a power recurrence and prints rows lazily, the JSON streamed.  The
reference here shares none of that: the k-fold distribution by direct convolution of the
one-step masses (elements of Q(z), one ``+`` and ``*`` at a time), the deltas by their
definition ``leak + sum_{l' > l} (P0(l') - e^l P1(l'))`` in Q(z), reduced by a gcd, and
the strings by the domain's one-element printers.  Elements must be equal in Q(z), and
every printed string identical.
"""

from __future__ import annotations

import json
from decimal import Decimal

import flint
import pytest
import sympy

from dpcompose_exact.engines.genfunc import compose_plds
from dpcompose_exact.engines.results import ExactResult
from dpcompose_exact.numbers import QzElem
from dpcompose_exact.presentation.jsonstream import dumps, json_chunks
from dpcompose_exact.presentation.render import to_json
from dpcompose_exact.presentation.rows import region_rows as rows_of
from dpcompose_exact.regions.pld import PLD, canonical_pair
from dpcompose_exact.regions.tradeoff import dp_region

PAPER = [("0.3", "0"), ("0.15", "0.02")]


def reference_deltas(kinds: list[tuple[PLD, int]]) -> dict:
    """``{loss: delta}`` for every loss >= 0 with mass, by convolution and definition."""
    dom = kinds[0][0].domain
    for p, _ in kinds[1:]:
        dom = dom.join(p.domain)
    dist = {dom.zero_loss(): QzElem.from_rational(1)}
    keep = QzElem.from_rational(1)
    for pld, count in kinds:
        pld = pld.in_domain(dom)
        for _ in range(count):
            new: dict = {}
            for l1, m1 in dist.items():
                for l2, m2 in pld.masses:
                    loss = tuple(a + b for a, b in zip(l1, l2))
                    term = m1 * m2
                    new[loss] = new[loss] + term if loss in new else term
            dist = {loss: m for loss, m in new.items() if not m.is_zero()}
            keep = keep * (1 - pld.leak)
    leak = 1 - keep
    order = []  # the route writes z first, then the pairs' denominator factors in turn
    for pld, _ in kinds:
        lcm = flint.fmpz_poly([1])  # the pair's common denominator
        for _, m in pld.in_domain(dom).masses:
            lcm = lcm * (m.den // lcm.gcd(m.den))
        for f, _ in lcm.factor()[1]:
            if f not in order and f != Z:
                order.append(f)
    losses = [loss for loss in dom.sort_losses(dist) if dom.loss_sign(loss) >= 0]
    out = {}
    for loss in losses:
        e = dom.exp_loss(loss)
        total = leak
        for other, m in dist.items():
            if dom.compare_loss(other, loss) > 0:
                total = total + (m - e * (m / dom.exp_loss(other)))
        num, den = total.canonical  # gcd-reduced
        out[loss] = printed_as_the_route(QzElem(num, den, dom.g0), order)
    if not out:
        out[dom.zero_loss()] = leak
    return dom, out


Z = flint.fmpz_poly([0, 1])


def printed_as_the_route(x: QzElem, order: list) -> QzElem:
    """``x`` with its denominator's factors listed as the exact route lists them."""
    num, den = x.canonical
    if den.is_one():
        return x
    content, facs = den.factor()
    exps = {tuple(int(c) for c in f.coeffs()): (f, e) for f, e in facs}
    ordered = [exps.pop((0, 1))] if (0, 1) in exps else []
    for f in order:
        key = tuple(int(c) for c in f.coeffs())
        if key in exps:
            ordered.append(exps.pop(key))
    ordered += list(exps.values())
    x.den_factors = (content, ordered)
    return x


def pair(pairs):
    return canonical_pair(dp_region(pairs, warn=False))


CASES = {
    "paper k=1": [(pair(PAPER), 1)],
    "paper k=7": [(pair(PAPER), 7)],
    "paper k=40": [(pair(PAPER), 40)],
    "leak k=12": [(pair([("0.7", "0.01"), ("0.3", "0.05")]), 12)],
    "two kinds": [(pair(PAPER), 6), (pair([("0.45", "0.01")]), 5)],
    "log(2)": [(pair([("log(2)", "0.001"), ("log(3/2)", "0.01")]), 9)],
    "wide support": [(pair([("1.5", "0"), ("0.1", "0.2")]), 6)],  # the sparse power
}


@pytest.mark.parametrize("name", list(CASES))
def test_forms_equal_the_reference(name):
    kinds = CASES[name]
    dom, ref = reference_deltas(kinds)
    region = compose_plds(kinds, memory_limit=None)
    assert [loss for loss, _ in region.constraints] == sorted(ref, key=dom.loss_key)
    rows = list(rows_of(ExactResult(region), 30, True, True, "up"))
    for (loss, d), row in zip(region.constraints, rows):
        r = ref[loss]
        assert d == r  # equal in Q(z)
        assert d.canonical == r.canonical
        assert row["delta"] == dom.elem_closed_form(r)  # den factored by den.factor()
        assert row["delta_structured"] == dom.structured(r)
        # the same decimals; an exact rational delta is printed in full, without the
        # padded zeros
        assert Decimal(row["delta_decimal"]) == Decimal(dom.decimal(r, 30))
        assert Decimal(row["delta_rounded"]) == Decimal(rounded_up_by_mpmath(dom, r, 30))
        assert row["epsilon"] == dom.loss_str(loss)


def rounded_up_by_mpmath(dom, x: QzElem, digits: int) -> str:
    """The least decimal of ``digits`` significant digits >= x: exact for a rational x,
    else from mpmath at 400 digits (the rows' values are not that close to a decimal)."""
    import math
    from decimal import Decimal
    from fractions import Fraction

    import mpmath

    from dpcompose_exact.numbers.format import _format_scaled

    value = x.as_rational()
    if value is None:
        num, den = x.canonical
        with mpmath.workdps(400):
            z = mpmath.exp(mpmath.mpf(dom.g0.numerator) / dom.g0.denominator)
            top = mpmath.polyval([int(c) for c in reversed(num.coeffs())], z)
            bottom = mpmath.polyval([int(c) for c in reversed(den.coeffs())], z)
            value = Fraction(Decimal(mpmath.nstr(top / bottom, 390, strip_zeros=False)))
    if value == 0:
        return "0"
    lead = len(str(abs(value.numerator))) - len(str(value.denominator))
    while Fraction(10) ** lead > abs(value):
        lead -= 1
    while Fraction(10) ** (lead + 1) <= abs(value):
        lead += 1
    e = lead + 1 - digits
    m = math.ceil(value / Fraction(10) ** e)
    if abs(m) == 10**digits:
        m, e = m // 10, e + 1
    return _format_scaled(m, e)


def test_json_forms_over_the_budget_are_not_made(monkeypatch):
    """The JSON output drops the forms past its budget: they are not made then dropped
    (the rows read before the budget is passed are the only ones formed), and every other
    key of every row is what ``--exact always`` prints."""
    from dpcompose_exact import compose
    from dpcompose_exact.numbers.rowforms import RowForms
    from dpcompose_exact.presentation.forms_file import FORM_KEYS

    calls = []
    made = RowForms.forms_and_reduced

    def spy(self, x, *args, **kwargs):
        calls.append(x)
        return made(self, x, *args, **kwargs)

    c = compose(PAPER, 40)
    full = json.loads(c.to_json(forms="always"))
    n = len(full["region"])
    monkeypatch.setattr(RowForms, "forms_and_reduced", spy)
    auto = json.loads(c.to_json())
    assert "left out" in auto["forms"]
    stripped = [{k: v for k, v in r.items() if k not in FORM_KEYS} for r in full["region"]]
    assert auto["region"] == stripped
    # the forms made are those of the rows read until their size passed the budget
    sizes = [sum(len(json.dumps(r[k])) for k in FORM_KEYS) for r in full["region"]]
    head = next(i for i in range(n) if sum(sizes[: i + 1]) > 512 * 1024) + 1
    assert len(calls) == head < n


def test_closed_forms_parse_back_to_the_reference():
    """sympy reads the printed closed form back: its difference with the reference is 0."""
    kinds = [(pair(PAPER), 5)]
    dom, ref = reference_deltas(kinds)
    region = compose_plds(kinds, memory_limit=None)
    z = sympy.exp(sympy.Rational(3, 20))
    for (loss, _), row in zip(region.constraints, region_rows(region)):
        num, den = ref[loss].canonical
        expected = sum(int(c) * z**i for i, c in enumerate(num.coeffs())) / sum(
            int(c) * z**i for i, c in enumerate(den.coeffs())
        )
        assert sympy.simplify(sympy.sympify(row["delta"]) - expected) == 0


def test_streamed_json_is_json_dumps():
    region = compose_plds([(pair(PAPER), 9)], memory_limit=None)
    rows = region_rows(region)
    payload = {"command": "compose", "n": 3, "ok": True, "x": None, "region": rows}
    expected = to_json(payload)
    assert dumps(payload) == expected
    streamed = {**payload, "region": iter(rows)}
    assert "".join(json_chunks(streamed, end="\n")) == expected + "\n"
    assert json.loads(expected)["region"][0]["delta_structured"]["g"] == "3/20"


@pytest.mark.parametrize(
    "value",
    [
        {"a": [["1", 2], ['x"y', 3]], "b": "\u00e9" * 100, "c": "a\n" * 50},
        {"d": [], "e": {}, "f": [1, 2.5, None, True, False], "g": "plain" * 30},
        {"h": {"x": [["\\" * 70, 1]], "y": [[1, 2], ["a", True]]}, "t": (1, "x")},
        {"k": {1: "int key"}, "empty": iter(())},
    ],
)
def test_json_chunks_equal_json_dumps(value):
    plain = {
        k: list(v) if not isinstance(v, (dict, list, tuple, str)) else v for k, v in value.items()
    }
    assert "".join(json_chunks(value)) == json.dumps(plain, indent=1)


def test_cli_json_is_streamed_identically(capsys):
    """The CLI's streamed JSON parses and carries the same rows as region_rows."""
    from dpcompose_exact.cli import main

    assert main(["compose", "-k", "6", "--format", "json", "--exact", "always"]) == 0
    out = json.loads(capsys.readouterr().out)
    region = compose_plds([(pair(PAPER), 6)], memory_limit=None)
    rows = list(rows_of(ExactResult(region), 30, True, True, "up"))
    assert out["region"] == rows and out["rounding"] == "up"


def region_rows(region, digits=30):
    """The rows every output prints (the result interface's, with structured forms)."""
    return list(rows_of(ExactResult(region), digits, exact=True, structured=True))


@pytest.mark.parametrize(
    "values",
    [
        ["0", "3/20", "(1 + 2*exp(3/20))/7", "0.5"],
        ["a,b", "plain"],
        ['say "x"', "y"],
        ["line\nbreak", "z"],
        ["cr\rhere", "z"],
        ["", "", "x"],
        [""],
        ["only"],
        [" spaced ", "'single'", "tab\there", "é"],
    ],
)
def test_plain_csv_lines_are_what_the_csv_writer_writes(values):
    """The CSV fast path (long forms are not copied through the writer) writes exactly
    what csv.writer does, or declines."""
    import csv
    import io

    from dpcompose_exact.presentation.render import _plain_csv_line

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(values)
    line = _plain_csv_line(values)
    assert line is None or line == buf.getvalue()
    if not any(c in v for v in values for c in ',"\r\n') and values != [""]:
        assert line is not None
