"""Tests of the front door: Mechanism, compose, Composition, Value."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from brute import double_dp_letters, product

import dpcompose_exact as dx
from dpcompose_exact import cli
from dpcompose_exact.errors import InvalidParameterError

PAPER = [("0.3", "0"), ("0.15", "0.02")]


def _cli_lines(argv: list[str], capsys) -> list[str]:
    assert cli.main(argv) == 0
    return capsys.readouterr().out.splitlines()


def test_issue_snippet_runs_as_written():
    m = dx.Mechanism([("0.3", "0"), ("0.15", "0.02")])
    c = dx.compose(m, k=20)
    assert isinstance(c, dx.Composition) and c.is_exact
    assert isinstance(c.delta("1"), dx.Value)
    assert isinstance(c.epsilon("1e-5"), dx.Value)
    eps = [e for e, _ in c.constraints]
    assert all(a < b for a, b in zip(eps, eps[1:]))
    mixed = dx.compose([(m, 20), (dx.Mechanism([("1", "1e-6")]), 5)])
    assert mixed.is_exact and len(mixed.kinds) == 2


def test_delta_matches_the_cli_digits(capsys):
    c = dx.compose(dx.Mechanism(PAPER), k=20)
    argv = ["delta", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "20", "--eps", "1"]
    rows = json.loads("\n".join(_cli_lines([*argv, "--format", "json", "--digits", "25"], capsys)))
    rows = rows["curve"]
    assert c.delta("1").decimal(25) == rows[0]["delta_decimal"]
    assert c.delta("1").exact == rows[0]["delta"]


@pytest.mark.slow
def test_large_k_is_certified_with_the_same_interface():
    c = dx.compose(dx.Mechanism(PAPER), k=100000)
    assert not c.is_exact and c.method == "certified"
    assert "memory" in c.why or "degree" in c.why
    d = c.delta("1")
    assert d.exact is None and 0 < float(d) <= 1
    assert len(d.decimal(20).replace("0.", "").lstrip("0")) >= 19


def test_certified_agrees_with_exact():
    m = dx.Mechanism(PAPER)
    exact = dx.compose(m, k=40)
    cert = dx.compose(m, k=40, method="certified")
    assert not cert.is_exact and cert.method == "certified"
    assert len(exact.constraints) == len(cert.constraints)
    for (e1, d1), (e2, d2) in zip(exact.constraints, cert.constraints):
        assert e1 == e2  # exact epsilons on both routes
        assert d1.decimal(25) == d2.decimal(25)
        lo, hi = d2.interval(30)
        assert Fraction(lo) <= d1 and d1 <= Fraction(hi)
    for q in ("1/2", "1", "log(3)"):
        a, b = exact.delta(q), cert.delta(q)
        assert a.decimal(20) == b.decimal(20)
    assert exact.epsilon("1e-5").decimal(20) == cert.epsilon("1e-5").decimal(20)
    assert exact.tradeoff("1/10").decimal(20) == cert.tradeoff("1/10").decimal(20)
    # inclusion between certified and exact: decided where the regions differ ...
    bigger = dx.compose(m, k=41)
    assert cert <= bigger and not bigger <= cert
    # ... and refused, not guessed, where certified enclosures cannot separate equal values
    with pytest.raises(dx.CertificationError, match="cannot decide"):
        _ = cert <= exact


def test_delta_against_brute_force_enumeration():
    # eps = (log 3, log 2): every likelihood ratio is rational, so Fractions are exact
    z1, z2, d2 = Fraction(3), Fraction(2), Fraction(1, 10)
    p0, p1 = double_dp_letters(z1, z2, Fraction(0), d2, one=Fraction(1))
    pairs = list(product(p0, p1, 3))
    c = dx.compose(dx.Mechanism([("log(3)", "0"), ("log(2)", "1/10")]), k=3)
    for ratio in (Fraction(1), Fraction(5, 2), Fraction(5), Fraction(30)):
        want = sum((max(Fraction(0), a - ratio * b) for a, b in pairs), Fraction(0))
        got = c.delta(f"log({ratio})")
        assert got == want, ratio
        assert got.upper() >= want >= got.lower()


def test_paper_theorems_take_the_same_inputs_and_agree():
    m = dx.Mechanism(PAPER)
    ref = dx.compose(m, k=6)
    for c in (dx.theorem2_mixture(m, 6), dx.theorem3_lattice(PAPER, 6)):
        assert isinstance(c, dx.Composition)
        assert c == ref and hash(c) == hash(ref)
    assert dx.compose(m, 6, method="theorem3").method == "theorem3"
    assert ref <= dx.remark2_bound(m, 6) and ref <= dx.remark1_bound(m, 6)
    single = dx.Mechanism.dp("0.5", "1e-3")
    assert dx.kov_composition(single, 7) == dx.compose(single, 7)
    het = dx.heterogeneous_composition([("0.5", 3), ("0.2", 2)])
    assert dx.theorem1_closed_form("0.5", 3, "0.2", 2) == het


def test_mechanism_canonical_form_and_constructors():
    m = dx.Mechanism([("0.3", "0"), ("0.15", "0.02")])
    assert m == dx.Mechanism([("3/20", "1/50"), ("3/10", 0)])
    assert hash(m) == hash(dx.Mechanism.dp("3/20", "1/50") & dx.Mechanism.dp("3/10"))
    assert m.pairs == (("3/20", "1/50"), ("3/10", "0"))
    assert [e.exact for e, _ in m.constraints] == ["3/20", "3/10"]
    assert dx.Mechanism.dp(Fraction(1, 2)) == dx.Mechanism([("1/2", "0")])
    with pytest.warns(dx.InactiveConstraintWarning, match="inactive"):
        assert dx.Mechanism([("0.4", "0.26"), ("0.1", "0.001")]) == dx.Mechanism.dp("0.1", "1e-3")


def test_identical_kinds_are_merged():
    m = dx.Mechanism(PAPER)
    assert dx.compose([(m, 3), (dx.Mechanism(PAPER), 4)]) == dx.compose(m, k=7)
    assert dx.compose([(m, 3), (dx.Mechanism(PAPER), 4)]).kinds == ((m, 7),)


def test_mixture_is_a_mechanism():
    a, b = dx.Mechanism.dp("1.3"), dx.Mechanism.dp("0.5", "0.2")
    mix = dx.mixture([("1/2", a), ("1/2", b)])
    assert isinstance(mix, dx.Mechanism)
    # the mixture is less private than b alone on the eps = 1.3 constraint, more than a
    c = dx.compose(mix, 1)
    assert c.delta("1.3") > 0 and c.delta("1.3") < dx.compose(b, 1).delta("1.3")


def test_iterables_and_monotonicity():
    c = dx.compose(dx.Mechanism(PAPER), k=10)
    ds = c.delta(["0", "1/2", "1", "2"])
    assert all(a > b for a, b in zip(ds, ds[1:]))
    es = c.epsilon(("1e-2", "1e-4", "1e-6"))
    assert all(a < b for a, b in zip(es, es[1:]))
    ts = c.tradeoff([0, "1/4", "1/2", 1])
    assert ts[-1] == 0 and all(a >= b for a, b in zip(ts, ts[1:]))
    # R_k grows with k: the 10-fold composition is strictly more private than the 11-fold
    c11 = dx.compose(dx.Mechanism(PAPER), k=11)
    assert c <= c11 and not c11 <= c


def test_value_conversions_are_directed():
    v = dx.compose(dx.Mechanism(PAPER), k=20).delta("1")
    assert v.lower() <= float(v) <= v.upper()
    assert Fraction(v.upper()) >= v >= Fraction(v.lower())
    assert math.isclose(float(v), float(v.decimal(30)), rel_tol=1e-15)
    assert v.sympy().is_real is not False
    assert v.latex()
    assert dx.compose(dx.Mechanism(PAPER), k=2).delta("100").decimal(5) == "0"


def test_outputs_are_what_the_cli_prints(capsys):
    c = dx.compose(dx.Mechanism(PAPER), k=4)
    payload = c.to_dict(digits=12)
    assert payload["method"] == "exact" and payload["certified"] is False
    assert payload["mechanisms"] == [{"constraints": [["3/20", "1/50"], ["3/10", "0"]], "count": 4}]
    assert json.loads(c.to_json(digits=12)) == payload
    cli_rows = json.loads(
        "\n".join(
            _cli_lines(
                [
                    "compose",
                    "--dp",
                    "0.3,0",
                    "--dp",
                    "0.15,0.02",
                    "-k",
                    "4",
                    "--format",
                    "json",
                    "--digits",
                    "12",
                ],
                capsys,
            )
        )
    )["region"]
    assert payload["region"] == cli_rows
    csv_text = c.to_csv(digits=12)
    assert csv_text.splitlines()[0].startswith("epsilon")
    tex = c.to_latex(caption="Four uses", label="tab:k4")
    assert "\\toprule" in tex and "\\caption{Four uses}" in tex and "\\label{tab:k4}" in tex
    assert "3/20" in c.to_table(digits=12) or "0.15" in c.to_table(digits=12)


def test_plot_draws_on_given_axes():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    ax = Figure().add_subplot()
    out = dx.compose(dx.Mechanism(PAPER), k=3).plot(ax=ax, label="k = 3")
    assert out is ax and ax.get_lines()[0].get_label() == "k = 3"
    xs, ys = ax.get_lines()[0].get_data()
    assert ys[-1] == 0 and all(a >= b for a, b in zip(ys, ys[1:]))


def test_decimal_is_accepted_wherever_a_string_is():
    # regression: Mechanism([(Decimal("0.3"), 0)]) was refused though a Decimal is exact
    m = dx.Mechanism([(Decimal("0.3"), 0), (Decimal("0.15"), Decimal("2E-2"))])
    assert m == dx.Mechanism(PAPER) and m.pairs == (("3/20", "1/50"), ("3/10", "0"))
    comp = dx.compose(m, k=Decimal("20"))
    ref = dx.compose(dx.Mechanism(PAPER), k=20)
    assert comp.delta(Decimal("1")).exact == ref.delta("1").exact
    assert comp.epsilon(Decimal("1E-5")).decimal(25) == ref.epsilon("1e-5").decimal(25)
    # independent: a brute-force enumeration (eps = log 3, log 2: rational ratios)
    p0, p1 = double_dp_letters(Fraction(3), Fraction(2), Fraction(0), Fraction(1, 10), Fraction(1))
    pairs = list(product(p0, p1, 3))
    c = dx.compose(dx.Mechanism([("log(3)", Decimal("0")), ("log(2)", Decimal("0.1"))]), k=3)
    want = sum((max(Fraction(0), a - Fraction(5, 2) * b) for a, b in pairs), Fraction(0))
    assert c.delta("log(5/2)") == want
    with pytest.raises(dx.InvalidParameterError, match="must be a positive integer"):
        dx.compose(m, k=Decimal("2.5"))
    # a count no route of finite pairs reaches is a resource limit that names the largest k
    with pytest.raises(dx.ResourceLimitError, match=r"over k = \d+, the largest k"):
        dx.compose(m, k=Decimal("1E+60"))


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: dx.Mechanism([(0.3, "0")]), TypeError, "floats are not exact"),
        (lambda: dx.Mechanism(("0.3", "0")), dx.InvalidParameterError, r"Mechanism\.dp"),
        (lambda: dx.Mechanism([("0.3", "1")]), dx.InvalidParameterError, r"\[0, 1\)"),
        (lambda: dx.compose(dx.Mechanism(PAPER)), dx.InvalidParameterError, "k is missing"),
        (lambda: dx.compose(dx.Mechanism(PAPER), 0), dx.InvalidParameterError, "k >= 1"),
        (lambda: dx.compose(dx.Mechanism(PAPER), 2.0), TypeError, "float"),
        (
            lambda: dx.compose(dx.Mechanism(PAPER), 3, method="nosuch"),
            dx.InvalidParameterError,
            "choose one of",
        ),
        (lambda: dx.compose("0.3"), TypeError, "compose takes"),
        (lambda: dx.compose(dx.Mechanism(PAPER), 3).delta(0.5), TypeError, "floats"),
        (
            lambda: dx.compose(dx.Mechanism(PAPER), 3).delta("-1"),
            dx.InvalidParameterError,
            "eps >= 0",
        ),
        (
            lambda: dx.compose(dx.Mechanism(PAPER), 3).epsilon("1"),
            dx.InvalidParameterError,
            r"\[0, 1\)",
        ),
        (
            lambda: dx.compose(dx.Mechanism(PAPER), 3).tradeoff("2"),
            dx.InvalidParameterError,
            r"\[0, 1\]",
        ),
        (
            lambda: dx.compose(dx.Mechanism.dp("1"), 3, method="theorem2"),
            dx.InvalidParameterError,
            "two active constraints",
        ),
    ],
)
def test_errors_name_the_value_and_the_range(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_experts_find_the_internals_in_algebra():
    from dpcompose_exact import algebra

    assert "ExpDomain" not in dx.__all__ and "QzElem" not in dx.__all__
    region = dx.compose(dx.Mechanism(PAPER), k=2).region
    assert isinstance(region, algebra.Region)
    assert isinstance(region.domain, algebra.ExpDomain)


def test_top_level_compose_is_the_function_not_a_module():
    import importlib

    assert callable(dx.compose)
    genfunc = importlib.import_module("dpcompose_exact.engines.genfunc")
    assert callable(genfunc.compose_plds)
    from dpcompose_exact import compose

    assert compose is dx.compose


def test_delta_below_the_leak_is_a_specific_error():
    from dpcompose_exact.errors import BelowLeakError

    c = dx.compose(dx.Mechanism([("0.3", "0.01"), ("0.15", "0.02")]), 3)
    with pytest.raises(BelowLeakError, match="reveals the input outright"):
        c.epsilon("1e-9")


def test_bounds_share_the_interface_and_enclose_the_exact_value():
    three = dx.Mechanism([("log(2)", "1e-6"), ("log(3)-log(2)", "1e-4"), ("1/10", "0.01")])
    exact = dx.compose(three, 3)
    bounded = dx.compose(three, 3, method="bounds", width="1e-3")
    assert bounded.is_bounded and not bounded.is_exact and bounded.method == "bounds"
    for q in ("1/2", "2"):
        v = bounded.delta(q)
        lo, hi = v.interval(12)
        assert Fraction(lo) <= exact.delta(q) <= Fraction(hi)
        assert v.lower() <= float(exact.delta(q)) <= v.upper()
    with pytest.raises(dx.UnsupportedQueryError, match="two-sided bounds only"):
        _ = bounded.constraints


def test_review_regressions_values():
    """Regressions found in review: rational epsilons compare with rationals exactly,
    equal values hash equal, directed doubles exist for large exact deltas, and outward
    intervals work far outside the double range."""
    from dpcompose_exact.numbers.value import Value

    m = dx.Mechanism(PAPER)
    e, _ = m.constraints[0]
    assert e == "3/20" and e <= Fraction(3, 20) and not e < "3/20"
    assert hash(Value.from_rational(Fraction(3, 20))) == hash(e)
    v = dx.compose(m, 120).constraints[0][1]  # a delta with large integer coefficients
    lo, hi = v.lower(), v.upper()
    assert lo <= hi and lo == lo and Fraction(lo) <= v <= Fraction(hi)
    a, b = Value.from_rational(Fraction(1, 10**400)).interval(10)
    assert Fraction(a) <= Fraction(1, 10**400) <= Fraction(b)
    d = dx.compose(m, 40, method="certified").delta("1")
    assert d == d
    bounded = dx.compose(m, 5, method="bounds")
    assert "bounds" in str(bounded)


def test_k_is_an_exact_integer_int_or_text():
    """k given as exact text is the same composition as the int; non-integers are refused.

    Regression: ``k="20"`` was accepted while the guide said nothing of it; the guide now
    states the rule (an int or the text of a whole number) and shows it.
    """
    m = dx.Mechanism([("0.3", "0"), ("0.15", "0.02")])
    c = dx.compose(m, k=5)
    assert dx.compose(m, k="5") == dx.compose(m, k=" 5 ") == dx.compose(m, k="5e0") == c
    assert dx.compose([(m, "5")]) == c
    with pytest.raises(InvalidParameterError, match=r"k = '5.5' .*not a whole number"):
        dx.compose(m, k="5.5")
    with pytest.raises(InvalidParameterError, match=r"k = 'five' must be a positive integer"):
        dx.compose(m, k="five")
    with pytest.raises(TypeError, match=r"k = 5.0 is a float; pass an int"):
        dx.compose(m, k=5.0)
    guide = (Path(__file__).resolve().parent.parent / "docs" / "api_guide.md").read_text()
    assert 'dx.compose(m, k="20") == dx.compose(m, k=20)' in guide
    assert "an `int`, or a string whose exact value is a whole number" in guide


def test_compose_grid_narrows_the_noise_enclosure() -> None:
    """``compose(..., grid=)``: a finer loss grid, a narrower enclosure of the same truth."""
    import mpmath as mp

    pytest.importorskip("numpy", reason="the loss grid needs numpy (dp-accounting extra)")
    m = dx.gaussian_noise("1").subsample("1/10")
    with mp.workdps(40):  # one use, forward direction: the closed form at the crossing
        q, e = mp.mpf(1) / 10, mp.mpf(1) / 2
        x = mp.mpf(1) / 2 + mp.log((mp.e**e - 1 + q) / q)
        sf = lambda t: mp.erfc(t / mp.sqrt(2)) / 2  # noqa: E731
        ref = q * sf(x - 1) + (1 - q) * sf(x) - mp.e**e * sf(x)
        for grid in (None, "1e-5"):
            lo, hi = dx.compose(m, 1, grid=grid).delta("1/2").interval(25)
            assert mp.mpf(lo) <= ref <= mp.mpf(hi)
    coarse = [Fraction(v) for v in dx.compose(m, 3).delta("1/2").interval(25)]
    fine = [Fraction(v) for v in dx.compose(m, 3, grid="1e-5").delta("1/2").interval(25)]
    assert max(coarse[0], fine[0]) <= min(coarse[1], fine[1])  # both hold the truth
    assert fine[1] - fine[0] < (coarse[1] - coarse[0]) / 10


def test_compose_grid_is_checked() -> None:
    with pytest.raises(InvalidParameterError, match=r"grid = 1/2 is outside the valid range"):
        dx.compose(dx.laplace_noise("1"), 10, grid="0.5")
    with pytest.raises(TypeError, match="floats are not exact"):
        dx.compose(dx.laplace_noise("1"), 10, grid=1e-5)
