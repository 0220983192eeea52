"""Readable exact forms (tables, LaTeX) equal the exact values; JSON forms parse with sympify.

The readable forms are polynomials in ``x = e^g`` (presentation.readable).  They are checked
here against the structured form of the same delta (``delta_structured``: two coefficient
lists in ``z = e^{g0}``), which is made by another code path (numbers.rowforms), through
independent readers: sympy's parser for the plain text, a small LaTeX-to-text rewriting
plus mpmath at 60 digits for the LaTeX, and a walk over the sympy tree into exact FLINT
polynomials for the JSON text.
"""

from __future__ import annotations

import json
import re
import time
from fractions import Fraction

import flint
import mpmath
import pytest
import sympy
from sympy.parsing.sympy_parser import (
    convert_xor,
    implicit_multiplication_application,
    parse_expr,
    standard_transformations,
)
from test_latex import compile_tex, needs_tex

import dpcompose_exact as dx
from dpcompose_exact.cli import main
from dpcompose_exact.numbers.closed import ClosedParts, ClosedTerm
from dpcompose_exact.numbers.format import FLAT_SUM_TERMS, latex_epsilon
from dpcompose_exact.presentation.readable import ExactText, readable_form, readable_many

X = sympy.Symbol("x")
TWO = dx.Mechanism([("5", 0), ("0.01", "0.3")])  # two generators: g = 1/100, x^500 = e^5
PAPER_KIND = dx.Mechanism([("0.3", 0), ("0.15", "0.02")])


def run(capsys, *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def structured_value(s: dict, dps: int = 60) -> mpmath.mpf:
    """The value of a structured form at ``dps`` digits (mpmath only)."""
    with mpmath.workdps(dps + 20):
        g = Fraction(s["g"])
        z = mpmath.exp(mpmath.mpf(g.numerator) / g.denominator)
        num = mpmath.fsum(int(c) * z**e for c, e in s["num"])
        den = mpmath.fsum(int(c) * z**e for c, e in s["den"])
        return num / den


def structured_polys(s: dict) -> tuple[Fraction, flint.fmpz_poly, flint.fmpz_poly]:
    def poly(terms: list) -> flint.fmpz_poly:
        top = max((e for _, e in terms), default=0)
        coeffs = [0] * (top + 1)
        for c, e in terms:
            coeffs[e] += int(c)
        return flint.fmpz_poly(coeffs)

    return Fraction(s["g"]), poly(s["num"]), poly(s["den"])


def plain_to_sympy(text: str) -> sympy.Expr:
    """The plain text of a readable form read by sympy (x^3, 125000x^2, (x + 1) (x - 1))."""
    rules = (*standard_transformations, implicit_multiplication_application, convert_xor)
    return parse_expr(text, transformations=rules, local_dict={"x": X})


def latex_to_plain(tex: str) -> str:
    """The LaTeX of a readable form as plain text (only the constructs it uses)."""
    out = re.sub(r"\{(\d+) \\cdot 10\^\{(\d+)\}\}", r"(\1*10^\2)", tex)  # {m \cdot 10^{k}}
    for a, b in (
        ("\\left(", "("),
        ("\\right)", ")"),
        ("\\Bigl(", "("),
        ("\\Bigr)", ")"),
        ("\\bigl(", "("),
        ("\\bigr)", ")"),
        ("\\big/", "/"),
        ("\\allowbreak", ""),
        ("\\discretionary{\\hbox{$\\hookleftarrow$}}{}{}", ""),  # a break inside an integer
        ("\\dpcbrk ", ""),  # the same, as the macro to_latex defines
        ("\\cdot", "*"),
        ("\\,", " "),
        ("\\log", "log"),
    ):
        out = out.replace(a, b)
    out = re.sub(r"\^\{(\d+)\}", r"^\1", out)
    while "\\frac{" in out:  # innermost first: no brace inside
        out, n = re.subn(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"((\1)/(\2))", out)
        assert n, out
    assert "\\" not in out and "{" not in out, out
    return out


def readable_equals_structured(text: str, g: Fraction, s: dict) -> None:
    """``text`` (plain, over x = e^g) equals the structured form exactly (polynomials)."""
    g0, num, den = structured_polys(s)
    m = g / g0
    assert m.denominator == 1
    # read by sympy, then walked into exact FLINT polynomials in z = e^{g0} (x = z^m)
    n, d = sympy_to_flint(plain_to_sympy(text), g0, x_power=int(m))
    assert n * flint.fmpq_poly(den.coeffs()) == flint.fmpq_poly(num.coeffs()) * d


# -- the readable forms are the exact values ----------------------------------------------


@pytest.mark.parametrize(
    "mech,k", [(PAPER_KIND, 3), (PAPER_KIND, 5), (TWO, 2)], ids=["paper3", "paper5", "two"]
)
def test_readable_text_equals_the_structured_form(mech, k):
    rows = dx.compose(mech, k).rows(digits=10)
    g, reds = readable_many([r["delta"] for r in rows])
    assert g is not None and all(red is not None for red in reds)
    for r, red in zip(rows, reds):
        readable_equals_structured(red.text(), g, r["delta_structured"])


def test_readable_forms_of_the_issue_examples():
    # exactly the shapes the issue asks for: integer coefficients, x^n, factored denominator
    rows = dx.compose(PAPER_KIND, 3).rows(digits=10)
    g, reds = readable_many([r["delta"] for r in rows])
    assert g == Fraction(3, 20)
    texts = [red.text() for red in reds]
    assert texts[5] == "x^2/(125000 (x - 1)^2)"
    assert texts[4] == "(74x^3 - 74x^2 - x)/(62500 (x - 1)^2 (x + 1))"
    assert "exp" not in "".join(texts) and "**" not in "".join(texts)
    # two generators: x = e^{1/100}, the denominator gathered into x^499 - 1 (e^5 - e^{1/100}
    # = x (x^499 - 1)), not 499 cyclotomic terms
    rows = dx.compose(TWO, 2).rows(digits=10)
    g, reds = readable_many([r["delta"] for r in rows])
    assert g == Fraction(1, 100)
    assert reds[3].text() == "9x^499/(100 (x^499 - 1))"
    assert all(len(red.text()) < 100 for red in reds)  # JSON forms of up to 22,747 chars


@pytest.mark.parametrize(
    "argv",
    [
        ["compose", "-k", "3", "--format", "latex", "--exact", "always"],
        ["compose", "--dp", "5,0", "--dp", "0.01,0.3", "-k", "2", "--format", "latex"],
        ["delta", "-k", "3", "--eps", "0.5,log(2)", "--format", "latex", "--exact", "always"],
    ],
    ids=["paper3", "two", "delta"],
)
def test_latex_forms_equal_the_exact_values(capsys, argv):
    """Every exact cell of the LaTeX, read back, equals the delta at 60 digits."""
    tex = run(capsys, *argv)
    m = re.search(r"Exact forms in \$x = e\^\{(-?\d+(?:/\d+)?)\}\$", tex)
    assert m, tex[-400:]
    g = Fraction(m.group(1))
    data = json.loads(run(capsys, *argv[: argv.index("--format")], "--format", "json",
                          "--exact", "always"))
    rows = data.get("region") or data["curve"]
    body = tex.split("\\midrule", 1)[1].split("\\bottomrule", 1)[0].strip().splitlines()
    assert len(body) == len(rows)
    for line, r in zip(body, rows):
        cell = line.rstrip("\\ ").split("&")[-1].strip().strip("$")
        expr = plain_to_sympy(latex_to_plain(cell))
        with mpmath.workdps(80):
            shown = sympy.N(expr.subs(X, sympy.exp(sympy.Rational(g.numerator, g.denominator))), 70)
            exact = sympy.N(sympy.sympify(r["delta"]), 70)
            assert abs(mpmath.mpf(str(shown)) - mpmath.mpf(str(exact))) <= mpmath.mpf(10) ** -60
            if "delta_structured" in r:
                ref = structured_value(r["delta_structured"])
                assert abs(mpmath.mpf(str(shown)) - ref) <= mpmath.mpf(10) ** -60


def test_forms_listed_after_a_longtable_equal_the_exact_values(capsys):
    """--exact always of 41 rows: the forms over 600 characters are listed after the table
    (integers of more than 40 digits with marked break points); each equals the exact delta
    of its row at 60 digits (the structured form, mpmath only)."""
    argv = ["compose", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "20"]
    tex = run(capsys, *argv, "--format", "latex", "--exact", "always")
    rows = json.loads(run(capsys, *argv, "--format", "json", "--exact", "always"))["region"]
    listed = re.findall(r"^\\noindent\\hangindent=2em\\hangafter=1 \((\d+)\)\\enspace "
                        r"\$\\varepsilon\$ \$=\$ \$([^$]*)\$: \$\\delta\(\\varepsilon\)\$ "
                        r"\$= (.*)\$\\par$", tex, re.M)
    cells = re.findall(r"^\$([^$]*)\$ & \$[^$]*\$ & see \((\d+)\) \\\\$", tex, re.M)
    assert len(listed) == len(cells) >= 20 and len(rows) == 41
    assert [i for _, i in cells] == [i for i, _, _ in listed]
    assert "\\providecommand{\\dpcbrk}{\\discretionary{\\hbox{$\\hookleftarrow$}}{}{}}" in tex
    assert tex.count("\\dpcbrk ") > 10
    for i, eps, form in listed:
        r = rows[int(i) - 1]
        assert latex_epsilon(r["epsilon"]) == eps  # the row it says
        expr = plain_to_sympy(latex_to_plain(form))
        shown = sympy.N(expr.subs(X, sympy.exp(sympy.Rational(3, 20))), 70)
        with mpmath.workdps(80):
            ref = structured_value(r["delta_structured"])
            assert abs(mpmath.mpf(str(shown)) - ref) <= mpmath.mpf(10) ** -60


def test_epsilon_latex_prints_the_exact_log_form(capsys):
    """eps(delta) of an exact result: k g + log(...) over x, equal to the exact epsilon."""
    deltas = ["1e-5", "0.01"]
    tex = run(capsys, "epsilon", "-k", "3", "--delta", ",".join(deltas), "--format", "latex")
    assert "not available" not in tex and "\\log" in tex
    assert "Exact forms in $x = e^{3/20}$" in tex
    c = dx.compose(PAPER_KIND, 3)
    body = tex.split("\\midrule", 1)[1].split("\\bottomrule", 1)[0].strip().splitlines()
    for line, d in zip(body, deltas):
        cells = [x.strip().strip("$") for x in line.rstrip("\\ ").split("&")]
        expr = plain_to_sympy(latex_to_plain(cells[-1]))
        shown = sympy.N(expr.subs(X, sympy.exp(sympy.Rational(3, 20))), 60)
        exact = c.epsilon(d)
        with mpmath.workdps(60):
            ref = sympy.N(sympy.sympify(exact.exact), 60)
            assert abs(mpmath.mpf(str(shown)) - mpmath.mpf(str(ref))) < mpmath.mpf(10) ** -50
        assert exact <= Fraction(cells[0])  # the decimal column still rounds up


def test_epsilon_latex_of_the_readme_example_is_exact(capsys):
    # README: `dpcompose epsilon -k 20 --delta 1e-5 --format latex  # eps(delta) = log(exact)`
    tex = run(capsys, "epsilon", "-k", "20", "--delta", "1e-5", "--format", "latex")
    assert "$3.57$" in tex and "3 + \\log" in tex and "x = e^{3/20}" in tex


@needs_tex
def test_readable_latex_compiles(capsys, tmp_path):
    parts = [
        run(capsys, "compose", "-k", "3", "--format", "latex", "--exact", "always"),
        run(capsys, "compose", "--dp", "5,0", "--dp", "0.01,0.3", "-k", "2", "--format", "latex"),
        run(capsys, "epsilon", "-k", "3", "--delta", "1e-5,0.01", "--format", "latex"),
        run(capsys, "epsilon", "-k", "20", "--delta", "1e-5", "--format", "latex"),
        run(capsys, "compose", "--spec", "examples/paper.toml", "--format", "latex"),
    ]
    log = compile_tex(tmp_path, "\n".join(parts))
    assert "Overfull \\hbox" not in log


def test_tables_show_short_readable_forms_and_refer_to_the_long_ones(capsys, tmp_path):
    table = run(capsys, "compose", "--dp", "5,0", "--dp", "0.01,0.3", "-k", "2")
    assert "9x^499/(100 (x^499 - 1))" in table and "# exact forms in x = exp(1/100)" in table
    assert "exp(" not in table.split("\n# exact forms")[0]
    forms = tmp_path / "forms.json"
    spec = run(capsys, "compose", "--spec", "examples/paper.toml", "--forms", str(forms))
    assert f"[{forms}#{0}]" in spec and " ... " not in spec


def test_curves_write_their_forms_file_too(capsys, tmp_path):
    """Regression: a curve's table said "see --forms FILE" but wrote no file."""
    forms = tmp_path / "eps.json"
    table = run(capsys, "epsilon", "-k", "3", "--delta", "1e-5,0.01", "--forms", str(forms))
    written = json.loads(forms.read_text())["forms"]
    assert [f["index"] for f in written] == [0, 1] and written[1]["epsilon"].startswith("log(")
    rows = table.splitlines()
    head = next(i for i, row in enumerate(rows) if row.endswith("(exact)"))  # the header
    assert rows[head].split()[-2:] == ["epsilon", "(exact)"]  # no empty exact-delta column
    assert rows[head + 2].endswith("9/20 + log((-x^3 + 15x^2 - 15x + 5)/4)")
    assert rows[head + 3].endswith(f"[{forms}#{1}]")
    c = dx.compose(PAPER_KIND, 3)
    assert sympy.simplify(sympy.sympify(written[1]["epsilon"]) - sympy.sympify(
        c.epsilon("0.01").exact)) == 0
    forms = tmp_path / "delta.json"
    table = run(capsys, "delta", "-k", "3", "--eps", "0.5", "--forms", str(forms))
    assert f"[{forms}#{0}]" in table
    assert json.loads(forms.read_text())["forms"][0]["delta"] == c.delta("0.5").exact


# -- the JSON contract: sympify parses every form, at any length --------------------------


def sympy_to_flint(
    expr: sympy.Expr, g: Fraction, x_power: int | None = None
) -> tuple[flint.fmpq_poly, flint.fmpq_poly]:
    """An expression of rationals, + * ** and exp(multiples of g) as num/den in z = e^g.

    Exponents may be negative (a Laurent monomial goes to the denominator).  With
    ``x_power``, the symbol x stands for ``z^x_power``.
    """
    if x_power is not None and expr == X:
        return flint.fmpq_poly([0] * x_power + [1]), flint.fmpq_poly([1])
    if expr.is_Rational:
        return flint.fmpq_poly([flint.fmpq(int(expr.p), int(expr.q))]), flint.fmpq_poly([1])
    if expr is sympy.E or isinstance(expr, sympy.exp) or (expr.is_Pow and expr.base is sympy.E):
        arg = 1 if expr is sympy.E else expr.exp if expr.is_Pow else expr.args[0]
        k = Fraction(str(arg)) / g
        assert k.denominator == 1
        n = int(k)
        mono = flint.fmpq_poly([0] * abs(n) + [1])
        return (mono, flint.fmpq_poly([1])) if n >= 0 else (flint.fmpq_poly([1]), mono)
    if expr.is_Add:
        num, den = flint.fmpq_poly([0]), flint.fmpq_poly([1])
        for a in expr.args:
            n2, d2 = sympy_to_flint(a, g, x_power)
            num, den = num * d2 + n2 * den, den * d2
        return num, den
    if expr.is_Mul:
        num, den = flint.fmpq_poly([1]), flint.fmpq_poly([1])
        for a in expr.args:
            n2, d2 = sympy_to_flint(a, g, x_power)
            num, den = num * n2, den * d2
        return num, den
    if expr.is_Pow and expr.exp.is_Integer:
        n, d = sympy_to_flint(expr.base, g, x_power)
        e = int(expr.exp)
        return (n**e, d**e) if e >= 0 else (d**-e, n**-e)
    raise AssertionError(f"unexpected node {type(expr).__name__}")


def assert_json_form_exact(text: str, s: dict) -> float:
    """sympify(text) equals the structured form exactly; returns the sympify time."""
    t0 = time.perf_counter()
    expr = sympy.sympify(text)
    seconds = time.perf_counter() - t0
    g, num, den = structured_polys(s)
    n, d = sympy_to_flint(expr, g)
    ref_n, ref_d = flint.fmpq_poly(num.coeffs()), flint.fmpq_poly(den.coeffs())
    assert n * ref_d == ref_n * d  # exactly equal rational functions of x = e^g
    return seconds


def test_short_json_forms_read_as_before():
    rows = dx.compose(PAPER_KIND, 3).rows(digits=10)
    assert rows[0]["delta"] == (
        "(-31176 - 86325*exp(3/20) + 93750*exp(3/10) + 31250*exp(9/20))"
        "/(31250*(1 + exp(3/20))**3)"
    )
    for r in rows:
        assert "Add(" not in r["delta"]
        assert_json_form_exact(r["delta"], r["delta_structured"])


@pytest.mark.slow
def test_sympify_parses_a_form_of_over_100k_characters():
    """The issue's failure: flat sums of thousands of terms made sympify recurse too deep."""
    rows = dx.compose(TWO, 8).rows(digits=10)
    longest = max(rows, key=lambda r: len(r["delta"]))
    assert len(longest["delta"]) > 100_000 and "Add(" in longest["delta"]
    seconds = assert_json_form_exact(longest["delta"], longest["delta_structured"])
    assert seconds < 60  # measured about 2 s; a RecursionError before
    # and the value agrees with the certified decimal
    with mpmath.workdps(40):
        value = sympy.N(sympy.sympify(longest["delta"]), 35)
        assert abs(mpmath.mpf(str(value)) - mpmath.mpf(longest["delta_decimal"])) < 1e-9
    # the same text for the log forms of eps(delta) (ExpDomain.elem_closed_form)
    assert sum(1 for r in rows if "Add(" in r["delta"]) > 1


def test_flat_sums_start_past_the_threshold():
    from dpcompose_exact.numbers.format import sum_text

    terms = [(i % 2 == 1, f"{i}*exp({i}/7)") for i in range(1, FLAT_SUM_TERMS + 2)]
    short, long = sum_text(terms[:-1]), sum_text(terms)
    assert not short.startswith("Add(") and long.startswith("Add(")
    last = -sympy.Integer(FLAT_SUM_TERMS + 1) if terms[-1][0] else sympy.Integer(FLAT_SUM_TERMS + 1)
    diff = sympy.sympify(long) - sympy.sympify(short) - last * sympy.exp(
        sympy.Rational(FLAT_SUM_TERMS + 1, 7)
    )
    assert sympy.expand(diff) == 0


def parts_of_text(text: str, g: Fraction) -> ClosedParts:
    """Test helper: the parts of a closed form written by hand, over ``z = e^{g}``.

    sympy (not the package) reads the text: each ``exp(r)`` becomes ``z^(r/g)``; the
    numerator and denominator are then integer polynomials in ``z`` (the denominator
    one factor, as :meth:`ExpDomain.elem_str` prints it expanded).
    """
    z = sympy.Symbol("z")
    step = sympy.Rational(g.numerator, g.denominator)
    expr = sympy.sympify(text).replace(sympy.exp, lambda a: z ** (sympy.Rational(a) / step))
    num, den = sympy.fraction(sympy.cancel(sympy.together(expr)))

    def poly(e: sympy.Expr) -> flint.fmpz_poly:
        return flint.fmpz_poly([int(c) for c in reversed(sympy.Poly(e, z).all_coeffs())])

    return ClosedParts(g, (ClosedTerm(1, Fraction(0), poly(num), 1, ((poly(den), 1),)),))


def test_latex_writes_round_numbers_as_powers_of_ten():
    text = "(3000000000*exp(1/2) - 7)/(50000000000*(exp(1/4) + 1))"
    red = readable_form(parts_of_text(text, Fraction(1, 4)), Fraction(1, 4))
    assert red.text() == "(3000000000x^2 - 7)/(50000000000 (x + 1))"
    tex = red.latex()
    assert tex == "\\frac{{3 \\cdot 10^{9}}\\,x^{2} - 7}{{5 \\cdot 10^{10}}\\,(x + 1)}"
    back = plain_to_sympy(latex_to_plain(tex))
    assert sympy.simplify(back - (3 * 10**9 * X**2 - 7) / (5 * 10**10 * (X + 1))) == 0


@pytest.mark.parametrize(
    "text,expected",
    [
        # a cyclotomic denominator gathered into x^5 - 1; the missing x - 1 goes up
        ("1/(1 + exp(1/10) + exp(1/5) + exp(3/10) + exp(2/5))", "(x - 1)/(x^5 - 1)"),
        # x^6 - 1 = (x - 1)(x + 1)(x^2 + x + 1)(x^2 - x + 1); the second x^2 - x + 1 stays
        # (x^3 + 1 would need one more x + 1 in the numerator: no shorter)
        (
            "7/((exp(1/10) - 1)*(exp(1/10) + 1)*(exp(1/5) + exp(1/10) + 1)"
            "*(exp(1/5) - exp(1/10) + 1)*(exp(1/5) - exp(1/10) + 1))",
            "7/((x^2 - x + 1) (x^6 - 1))",
        ),
        # x^3 + 1 = (x + 1)(x^2 - x + 1): squared, with one x + 1 more in the numerator
        ("1/((exp(1/10) + 1)*(exp(1/5) - exp(1/10) + 1)**2)", "(x + 1)/(x^3 + 1)^2"),
        # small factors stay as they are; a negative power of x goes down
        ("exp(-1/5)/(3*(1 + exp(1/10))**2)", "1/(3 x^2 (x + 1)^2)"),
    ],
)
def test_denominators_are_gathered_when_shorter(text, expected):
    red = readable_form(parts_of_text(text, Fraction(1, 10)), Fraction(1, 10))
    assert red.text() == expected
    e = sympy.exp(sympy.Rational(1, 10))
    value = sympy.sympify(text)
    assert sympy.simplify(plain_to_sympy(expected).subs(X, e) - value) == 0


def test_forms_of_a_huge_degree_in_x_are_left_as_they_are():
    """Regression: delta(0.123457) beside multiples of 1/20 puts x = e^{1/1000000}; its
    polynomials of degree 10^5 and more made the table take minutes and GMP abort under
    a memory cap.  Such a form is printed as it is; the others still read over x."""
    g0 = Fraction(3, 20)
    z = flint.fmpz_poly([0, 1])
    near_parts = ClosedParts(g0, (ClosedTerm(1, Fraction(0), z**2, 125000, ((z - 1, 2),)),))
    far_parts = ClosedParts(
        g0,
        (
            ClosedTerm(1, Fraction(0), 1 + z, 2, ()),
            ClosedTerm(-1, Fraction(123457, 1000000), z**2, 5, ()),
        ),
    )
    near = ExactText("exp(3/10)/(125000*(-1 + exp(3/20))**2)", near_parts)
    far = ExactText("(1 + exp(3/20))/2 - exp(123457/1000000)*(exp(3/10))/5", far_parts)
    g, reds = readable_many([near, far])
    assert g == Fraction(3, 20) and reds[1] is None
    assert reds[0].text() == "x^2/(125000 (x - 1)^2)"


def test_readable_form_refuses_other_parts_quietly():
    # not a rational function of x: None (the caller prints the text as it is)
    assert readable_form(None, None) is None
    one = flint.fmpz_poly([1])
    with_log = ClosedParts(None, (ClosedTerm(1, None, one, 1, ()),))  # exp(1/2 + log(3))
    assert readable_form(with_log, None) is None
    z = flint.fmpz_poly([0, 1])
    third = ClosedParts(Fraction(1, 3), (ClosedTerm(1, Fraction(0), z, 1, ()),))  # exp(1/3)
    assert readable_form(third, Fraction(1, 2)) is None
    # a plain string has no parts: no readable form, whatever it says
    assert readable_many(["exp(3/10)"]) == (None, [None])


# -- refusals are unchanged: one line, exit 2 ---------------------------------------------


# messages as printed before this change (taken from the main branch)
@pytest.mark.parametrize(
    "argv,message",
    [
        (
            ["compose", "--dp", "0.3,1.5"],
            "dpcompose: error: delta = '1.5' is outside the valid range [0, 1)",
        ),
        (
            ["compose", "--dp", "sqrt(2),0"],
            # (since: sqrt named outside the exact field, no longer an unknown function)
            "dpcompose: error: eps: 'sqrt(2)' uses sqrt(...), which is outside the exact "
            "field: the exact field holds rationals and rational combinations of logs of "
            "rationals (e.g. '0.3', 'log(2)', '1/2 + log(3/2)'); if a value near it will do, "
            "write that value as a decimal or a fraction",
        ),
        (["compose", "-k", "0"], "dpcompose: error: k = 0 must be a positive integer (k >= 1)"),
        (
            ["epsilon", "-k", "3", "--delta", "1.5", "--format", "latex"],
            "dpcompose: error: delta = '1.5' is outside the valid range [0, 1)",
        ),
    ],
    ids=["delta", "eps", "k", "epsilon-latex"],
)
def test_refusals_are_one_line_and_unchanged(capsys, argv, message):
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == message + "\n"


def test_factors_met_before_are_divided_out_first():
    """A table's denominators share factors: _factor divides out the irreducible factors
    it met before and factors only the rest; the result is FLINT's factorisation."""
    from dpcompose_exact.presentation.readable import _factor, _key

    x = flint.fmpz_poly([0, 1])
    phi = flint.fmpz_poly.cyclotomic(499)
    _factor(phi**2 * (x + 1))  # learns phi
    for p in (phi**12 * (x + 1) ** 11 * (x - 1) ** 11 * (x**2 + x + 3), phi * (x**4 - 2)):
        got = sorted((_key(f), e) for f, e in _factor(p))
        want = sorted((_key(-f if f.coeffs()[-1] < 0 else f), e) for f, e in p.factor()[1])
        assert got == want


def test_a_form_printed_as_it_is_in_latex_equals_the_exact_value(capsys):
    """delta(0.123457) beside multiples of 1/20 has no readable form (degree over 20,000 in
    x): LaTeX prints the closed form itself, e^{...} and all; read back, it is exact."""
    argv = ["delta", "-k", "20", "--eps", "0.123457,1"]
    tex = run(capsys, *argv, "--format", "latex", "--exact", "always")
    curve = json.loads(run(capsys, *argv, "--format", "json", "--exact", "always"))["curve"]
    form = re.search(r"^\\noindent.*\(1\)\\enspace .*\$= (.*)\$\\par$", tex, re.M).group(1)
    assert "e^{3/20}" in form and "e^{3/20}^" not in form
    text = re.sub(r"\{?e\^\{(-?\d+(?:/\d+)?)\}\}?", r"exp(\1)", form)
    for a, b in (("\\,\\allowbreak ", "*"), ("\\allowbreak ", ""), ("\\,", "*")):
        text = text.replace(a, b)
    text = re.sub(r"\^\{(\d+)\}", r"**\1", text)
    assert "\\" not in text and "{" not in text, text[:200]
    with mpmath.workdps(60):
        shown = sympy.N(sympy.sympify(text), 55)
        exact = sympy.N(sympy.sympify(curve[0]["delta"]), 55)
        assert abs(mpmath.mpf(str(shown)) - mpmath.mpf(str(exact))) <= mpmath.mpf(10) ** -50


def test_sums_written_add_are_flattened_for_latex_exactly():
    """The LaTeX of a form printed as it is writes Add(a, -b, c) as (a - b + c)."""
    from dpcompose_exact.presentation.render import _flat_adds

    texts = [
        "Add(-3, 5*exp(1/20), -exp(3/20)*(1 + Add(2, -exp(1/10))), 7)/(Add(1, exp(1/20)))**2",
        "Add(1,-2, -3)*Add(Add(4, -5), -Add(6, 7))",
        "2 - Add(-1, exp(1/20))",
    ]
    for text in texts:
        flat = _flat_adds(text)
        assert "Add" not in flat and "," not in flat
        assert sympy.simplify(sympy.sympify(flat) - sympy.sympify(text)) == 0, flat
