"""Printed decimals are rounded in a certified direction (by default up: never below the
exact value, so a paper's table never understates privacy loss)."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from fractions import Fraction

import flint
import mpmath
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from test_latex import compile_tex, needs_tex

import dpcompose_exact as dx
from dpcompose_exact.cli import main
from dpcompose_exact.errors import InvalidParameterError
from dpcompose_exact.numbers.format import directed_decimal, latex_decimal, readable_exact
from dpcompose_exact.numbers.value import Value

PAPER = ["compose", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "20", "--format", "latex"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def brute_directed(q: Fraction, digits: int, up: bool) -> Fraction:
    """The least (up) / greatest (down) decimal with ``digits`` significant digits around q,
    by exact integer arithmetic (independent of the package)."""
    if q == 0:
        return q
    lead = 0
    while Fraction(10) ** lead > abs(q):
        lead -= 1
    while Fraction(10) ** (lead + 1) <= abs(q):
        lead += 1
    unit = Fraction(10) ** (lead + 1 - digits)
    n = q / unit
    m = -((-n.numerator) // n.denominator) if up else n.numerator // n.denominator
    return m * unit


def mp_value(closed_form: str, dps: int = 80) -> mpmath.mpf:
    """An independent evaluation of a closed form (sympy -> mpmath at ``dps`` digits)."""
    with mpmath.workdps(dps):
        return sympy.N(sympy.sympify(closed_form), dps)


# -- the directed rounding itself ---------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.fractions(min_value=Fraction(-(10**6)), max_value=Fraction(10**6), max_denominator=10**9),
    st.integers(1, 12),
)
def test_rational_directed_equals_brute_force(q, digits):
    v = Value.from_rational(q)
    up, down = v.rounded(digits, "up"), v.rounded(digits, "down")
    assert Fraction(Decimal(up)) == brute_directed(q, digits, True)
    assert Fraction(Decimal(down)) == brute_directed(q, digits, False)


@settings(max_examples=100, deadline=None)
@given(st.decimals(min_value=-1000, max_value=1000, places=8, allow_nan=False), st.integers(1, 6))
def test_directed_decimal_of_strings(d, digits):
    text = str(d)
    q = Fraction(d)
    up = directed_decimal(text, digits, "up")
    assert Fraction(Decimal(up)) == brute_directed(q, digits, True)
    assert Fraction(Decimal(directed_decimal(text, digits, "down"))) == brute_directed(
        q, digits, False
    )


def test_exactly_representable_values_are_not_bumped():
    assert Value.from_rational(Fraction(1, 50)).rounded(3, "up") == "0.0200"
    assert Value.from_rational(Fraction(1, 50)).rounded(30, "down") == "0.02" + "0" * 29
    dom_value = dx.compose(dx.Mechanism([("0.3", 0), ("0.15", "0.02")]), 3).constraints[1][0]
    assert dom_value.exact == "3/20"
    assert dom_value.rounded(30, "up") == "0.15" + "0" * 28  # a ball never is 0.15: exact test


def test_transcendental_values_rounded_both_ways():
    # log values (eps(delta)) and elements of Q(e^(3/20)) (deltas), against mpmath
    c = dx.compose(dx.Mechanism([("0.3", 0), ("0.15", "0.02")]), 20)
    values = [c.epsilon("1e-5"), c.epsilon("1/1000")] + [d for _, d in c.constraints[:6]]
    for v in values:
        x = mp_value(v.exact)
        for digits in (1, 3, 7, 20):
            up, down = v.rounded(digits, "up"), v.rounded(digits, "down")
            with mpmath.workdps(80):
                assert mpmath.mpf(down) < x < mpmath.mpf(up)
            q = Fraction(Decimal(mpmath.nstr(x, 75)))  # far from any short decimal
            assert Fraction(Decimal(up)) == brute_directed(q, digits, True)
            assert Fraction(Decimal(down)) == brute_directed(q, digits, False)


def test_log_of_a_power_of_z_is_recognised_exactly():
    from dpcompose_exact.numbers import ExpDomain, LinearForm

    dom = ExpDomain.for_forms([LinearForm(Fraction(3, 20))])
    z3 = dom.exp_loss(dom.loss(LinearForm(Fraction(9, 20))))
    v = Value.from_log_qz(dom, z3)  # log(e^(9/20)) = 0.45 exactly
    assert v.rounded(3, "up") == "0.450" and v.rounded(3, "down") == "0.450"


def test_certified_enclosure_rounds_outward():
    with flint.ctx.workprec(200):
        ball = flint.arb("0.3423273233") + flint.arb(0, 1e-12)
    v = Value.from_ball(ball)
    assert v.rounded(3, "up") == "0.343" and v.rounded(3, "down") == "0.342"
    assert Fraction(Decimal(v.rounded(12, "up"))) >= Fraction("0.342327323301")


def test_unknown_rounding_is_refused():
    with pytest.raises(InvalidParameterError, match="choose one of up, nearest, down"):
        Value.from_rational(1).rounded(3, "sideways")


# -- the outputs ---------------------------------------------------------------------------


def test_issue_values_are_rounded_up(capsys):
    # regression: delta(0) = 0.342327... was printed as 0.342 (understated)
    tex = run(capsys, *PAPER)
    assert "$0.343$" in tex and "$0.295$" in tex and "$0.249$" in tex
    assert "$0.342$" not in tex and "$0.294$" not in tex and "$0.248$" not in tex
    assert "Decimals rounded up" in tex
    tex_near = run(capsys, *PAPER, "--rounding", "nearest")
    assert "$0.342$" in tex_near and "rounded to nearest" in tex_near


_NUM = r"(-?[0-9.]+(?: \\times 10\^\{-?[0-9]+\})?)"


def _latex_number(cell: str) -> Fraction:
    cell = cell.strip().strip("$")
    m = re.fullmatch(r"\\frac\{(\d+)\}\{(\d+)\}", cell)
    if m:
        return Fraction(int(m.group(1)), int(m.group(2)))
    m = re.fullmatch(r"([0-9.]+) \\times 10\^\{(-?[0-9]+)\}", cell)
    if m:
        return Fraction(Decimal(m.group(1))) * Fraction(10) ** int(m.group(2))
    return Fraction(Decimal(cell))


def _body_cells(tex: str) -> list[list[str]]:
    body = tex.split("\\midrule", 1)[1].split("\\bottomrule", 1)[0]
    return [
        [c.strip() for c in line.rstrip("\\ ").split("&")]
        for line in body.strip().splitlines()
        if line.strip()
    ]


@needs_tex
def test_paper_latex_compiles_and_never_understates(capsys, tmp_path):
    tex = run(capsys, *PAPER)
    compile_tex(tmp_path, tex)
    c = dx.compose(dx.Mechanism([("0.3", 0), ("0.15", "0.02")]), 20)
    rows = _body_cells(tex)
    printed = []
    for block in range(len(rows[0]) // 2):  # blocks side by side, each read top down
        for cells in rows:
            eps_cell, delta_cell = cells[2 * block], cells[2 * block + 1]
            if eps_cell:
                printed.append((_latex_number(eps_cell), _latex_number(delta_cell)))
    assert len(printed) == len(c.constraints) > 20
    for (eps, shown), (eps_x, delta_x) in zip(printed, c.constraints):
        assert eps_x.exact == str(eps)
        x = mp_value(delta_x.exact)
        with mpmath.workdps(80):
            assert mpmath.mpf(shown.numerator) / shown.denominator >= x
        assert delta_x <= shown  # certified comparison agrees
    # eps(delta) of `epsilon`: every printed eps is >= the exact value
    deltas = ["1e-5", "1e-3", "0.02", "0.1"]
    tex = run(capsys, "epsilon", "-k", "20", "--delta", ",".join(deltas), "--format", "latex")
    compile_tex(tmp_path, tex, name="eps")
    rows = _body_cells(tex)
    assert len(rows) == len(deltas)
    for cells, d in zip(rows, deltas):
        shown = _latex_number(cells[0])
        exact = c.epsilon(d)
        with mpmath.workdps(80):
            assert mpmath.mpf(shown.numerator) / shown.denominator >= mp_value(exact.exact)
        assert exact <= shown


def test_json_keeps_certified_digits_and_the_directed_string(capsys):
    out = json.loads(run(capsys, "compose", "-k", "3", "--format", "json", "--digits", "12"))
    assert out["rounding"] == "up"
    for row in out["region"]:
        x = mp_value(row["delta"])
        with mpmath.workdps(80):
            assert mpmath.mpf(row["delta_rounded"]) >= x
            assert abs(mpmath.mpf(row["delta_decimal"]) - x) <= 10 ** (
                mpmath.floor(mpmath.log10(x)) - 10 if x else 0
            )
    down = json.loads(
        run(capsys, "compose", "-k", "3", "--format", "json", "--digits", "4", "--rounding", "down")
    )
    assert down["rounding"] == "down"
    assert all(
        Fraction(Decimal(r["delta_rounded"]))
        <= Fraction(Decimal(r["delta_decimal"])) + Fraction(1, 10**5)
        for r in down["region"]
    )


def test_csv_and_table_say_how_they_round(capsys):
    csv_text = run(capsys, "compose", "-k", "2", "--format", "csv", "--digits", "3")
    lines = csv_text.strip().splitlines()
    assert lines[0].endswith(",rounding") and all(line.endswith(",up") for line in lines[1:])
    first = lines[1].split(",")
    assert first[3] == "0.108"  # delta(0) = 0.10724048..., rounded up
    table = run(capsys, "compose", "-k", "2", "--digits", "3")
    assert "# decimals rounded up: never below the exact values" in table.splitlines()[:4]
    assert "0.108" in table
    down = run(capsys, "compose", "-k", "2", "--digits", "3", "--rounding", "down")
    assert "0.107" in down and "rounded down" in down


def test_composition_methods_round_up_by_default():
    c = dx.compose(dx.Mechanism([("0.3", 0), ("0.15", "0.02")]), 2)
    assert "0.108" in c.to_table(digits=3) and "rounded up" in c.to_table(digits=3)
    assert "Decimals rounded up" in c.to_latex()
    assert c.to_dict(digits=3)["region"][0]["delta_rounded"] == "0.108"
    assert c.to_csv(digits=3).splitlines()[1].endswith("0.108,up")


# -- long forms: never cut, JSON under a size budget, --forms FILE --------------------------


def test_spec_json_is_small_by_default_and_forms_go_to_a_file(capsys, tmp_path):
    spec = ["compose", "--spec", "examples/paper.toml"]
    out = run(capsys, *spec, "--format", "json")
    assert len(out.encode()) < 1_000_000  # 9.5 MB with every form inline
    data = json.loads(out)
    assert "exact deltas left out" in data["forms"]
    assert all("delta" not in r and "delta_rounded" in r for r in data["region"])
    forms = tmp_path / "forms.json"
    table = run(capsys, *spec, "--forms", str(forms))
    written = json.loads(forms.read_text())["forms"]
    assert len(written) == len(data["region"])
    assert f"[{forms}#{0}]" in table and " ... " not in table  # a reference, not a cut form
    first = sympy.sympify(written[0]["delta"])
    with mpmath.workdps(40):
        assert abs(sympy.N(first, 40) - mpmath.mpf(data["region"][0]["delta_decimal"])) < 1e-25
    full = json.loads(run(capsys, *spec, "--format", "json", "--exact", "always"))
    assert all("delta" in r for r in full["region"]) and "forms" not in full


def test_epsilon_latex_does_not_call_an_exact_result_unavailable(capsys):
    tex = run(capsys, "epsilon", "-k", "20", "--delta", "1e-5", "--format", "latex")
    assert "not available" not in tex and "3 + \\log" in tex  # the exact form is printed


# -- the text table's epsilon column ----------------------------------------------------


def test_table_epsilons_keep_every_digit_of_a_terminating_rational(capsys):
    # regression: printed 0.6, 0.3 and 0.2 (Decimal.normalize at 28 digits)
    out = run(capsys, "compose", "--dp", "0.3000000000000000000000000000001,0.02", "-k", "2")
    assert " 0.6000000000000000000000000000002 " in out
    assert "2 x (0.3000000000000000000000000000001, 0.02)" in out  # the title too
    down = run(capsys, "compose", "--dp", "0.3000000000000000000000000000001,0.02", "-k", "2",
               "--rounding", "down")  # fmt: skip
    assert " 0.6000000000000000000000000000002 " in down
    out = run(capsys, "delta", "--dp", "0.3,0.02", "-k", "2", "--eps",
              "0.300000000000000000000000000001")  # fmt: skip
    assert " 0.300000000000000000000000000001 " in out
    out = run(capsys, "heterogeneous", "--mech", "0.1000000000000000000000000000003:2")
    assert " 0.2000000000000000000000000000006 " in out


def test_decimal_helpers_do_not_round_at_28_digits():
    assert readable_exact("3000000000000000000000000000001/5000000000000000000000000000000") == (
        "0.6000000000000000000000000000002"
    )
    big = "1234567890123456789012345678901234500"
    assert latex_decimal(big) == "1.2345678901234567890123456789012345 \\times 10^{36}"
