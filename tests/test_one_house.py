"""One house: the command line and the API print the same bytes, speak one method
vocabulary, and no module outside a result type's own switches on it."""

from __future__ import annotations

import ast
import io
from contextlib import redirect_stdout
from pathlib import Path

import pytest

import dpcompose_exact as dx
from dpcompose_exact.cli.app import build_parser, main
from dpcompose_exact.engines.finiteroutes import METHODS, Method

ROOT = Path(__file__).resolve().parents[1]
PAPER = dx.Mechanism([("0.3", "0"), ("0.15", "0.02")])
THREE = [("1", "1e-5"), ("log(2)", "1e-3"), ("0.1", "0.05")]


def cli(*argv: str) -> str:
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(list(argv))
    assert code == 0, argv
    return buf.getvalue()


# (CLI arguments, the same request through the API)
REQUESTS = [
    (["compose"], lambda: dx.compose(PAPER, 20).to_json()),
    (
        ["compose", "--dp", "1,1e-5", "--dp", "0.5,1e-3", "-k", "4"],
        lambda: dx.compose([("1", "1e-5"), ("0.5", "1e-3")], 4).to_json(),
    ),
    (
        ["compose", "--mech", "0.3,0+0.15,0.02:3", "--mech", "0.2,0.01:2"],
        lambda: dx.compose([(PAPER, 3), (dx.Mechanism.dp("0.2", "0.01"), 2)]).to_json(),
    ),
    (
        ["compose", "--spec", str(ROOT / "examples" / "figure2.toml")],
        lambda: dx.compose(PAPER, 20).to_json(),
    ),
    (
        ["compose", "-k", "1000", "--decimals-only"],
        lambda: dx.compose(PAPER, 1000, closed_forms=False).to_json(exact=False),
    ),
    (
        ["compose", "-k", "50", "--method", "certified"],
        lambda: dx.compose(PAPER, 50, method="certified").to_json(),
    ),
    (
        ["delta", "--mech", "1,1e-5+log(2),1e-3+0.1,0.05:40", "--method", "bounds", "--eps", "2"],
        lambda: dx.compose(dx.Mechanism(THREE), 40, method="bounds").to_json(delta_at=["2"]),
    ),
    (
        ["delta", "-k", "20", "--eps", "0.5,1"],
        lambda: dx.compose(PAPER, 20, closed_forms=False).to_json(delta_at=["0.5", "1"]),
    ),
    (
        ["epsilon", "-k", "20", "--delta", "1e-5"],
        lambda: dx.compose(PAPER, 20, closed_forms=False).to_json(epsilon_at=["1e-5"]),
    ),
    (
        ["heterogeneous", "--mech", "0.5:3", "--mech", "0.2:5"],
        lambda: dx.heterogeneous_composition([("0.5", 3), ("0.2", 5)]).to_json(),
    ),
    (
        ["heterogeneous", "--mech", "log(3):2", "--mech", "log(2):3", "--method", "theorem1"],
        lambda: dx.theorem1_closed_form("log(3)", 2, "log(2)", 3).to_json(),
    ),
    (
        ["compose", "-k", "6", "--method", "theorem3"],
        lambda: dx.theorem3_lattice(PAPER, 6).to_json(),
    ),
    # every kind of mechanism, through the one router
    (
        ["delta", "--mech", "gaussian(1):10", "--eps", "1"],
        lambda: dx.compose(dx.gaussian_noise("1"), 10, closed_forms=False).to_json(delta_at=["1"]),
    ),
    (
        ["epsilon", "--mech", "gaussian(2):10", "--mech", "0.3,0+0.15,0.02:20", "--delta", "1e-5"],
        lambda: dx.compose([(dx.gaussian_noise("2"), 10), (PAPER, 20)]).to_json(
            epsilon_at=["1e-5"]
        ),
    ),
    (
        ["delta", "--mech", "gaussian(1)@1/100:100", "--mech", "0.3,0+0.15,0.02:20", "--eps", "2"],
        lambda: dx.compose([(dx.gaussian_noise("1").subsample("1/100"), 100), (PAPER, 20)]).to_json(
            delta_at=["2"]
        ),
    ),
    (
        ["delta", "--mech", "laplace(1):2", "--mech", "rr(1/2,2):1", "--eps", "0.5"],
        lambda: dx.compose(
            [(dx.laplace_noise("1"), 2), (dx.randomized_response("1/2"), 1)]
        ).to_json(delta_at=["0.5"]),
    ),
    (
        ["epsilon", "--mech", "log(3),0@1/10:50", "--mech", "gaussian(2):10", "--delta", "1e-5"],
        lambda: dx.compose(
            [(dx.Mechanism.dp("log(3)").subsample("1/10"), 50), (dx.gaussian_noise("2"), 10)]
        ).to_json(epsilon_at=["1e-5"]),
    ),
    (
        ["delta", "--mech", "rr(1/2,2)@1/10:5", "--mech", "laplace(1):3", "--eps", "1"],
        lambda: dx.compose(
            [(dx.randomized_response("1/2").subsample("1/10"), 5), (dx.laplace_noise("1"), 3)]
        ).to_json(delta_at=["1"]),
    ),
    (
        ["summary", "--mech", "laplace(1):2", "--orders", "2"],
        lambda: _summary_json(dx.compose(dx.laplace_noise("1"), 2), ["2"]),
    ),
]


def _summary_json(c, orders):
    """What ``dpcompose summary --format json`` prints, from the API's values."""
    import json

    from dpcompose_exact.cli.summary import JSON_DIGITS, summary

    return json.dumps(summary(c, orders, JSON_DIGITS), indent=1) + "\n"


@pytest.mark.parametrize("argv,api", REQUESTS, ids=[" ".join(a)[:60] for a, _ in REQUESTS])
def test_cli_json_equals_api_json(argv, api):
    assert cli(*argv, "--format", "json") == api()


def test_cli_csv_table_latex_equal_the_api():
    c = dx.compose(PAPER, 5)
    assert cli("compose", "-k", "5", "--format", "csv") == c.to_csv()
    assert cli("compose", "-k", "5", "--digits", "12") == c.to_table(digits=12)
    assert cli("compose", "-k", "5", "--format", "latex") == c.to_latex()
    assert cli("delta", "-k", "5", "--eps", "1", "--format", "latex") == c.to_latex(delta_at=["1"])


def _choices(command: str) -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    action = next(a for a in sub.choices[command]._actions if a.dest == "method")
    return list(action.choices)


@pytest.mark.parametrize("command", ["compose", "delta", "epsilon"])
def test_method_choices_are_the_enum(command):
    assert _choices(command) == [m.value for m in Method] == list(METHODS)


def test_pld_and_certified_flag_are_aliases():
    assert Method.parse("pld") is Method.EXACT
    a = cli("compose", "-k", "30", "--certified", "--format", "json")
    assert a == cli("compose", "-k", "30", "--method", "certified", "--format", "json")
    assert '"method": "certified"' in a
    b = cli("compose", "-k", "3", "--method", "pld", "--format", "json")
    assert '"method": "exact"' in b


def test_bounds_on_compose_is_refused_with_what_to_do(capsys):
    assert main(["compose", "--method", "bounds"]) == 2
    assert "use dpcompose delta" in capsys.readouterr().err


RESULT_TYPES = {"Region": "tradeoff.py", "CertifiedRegion": "certified.py", "Bounded": "bounds.py"}


def _isinstance_on_result_types(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
            if len(node.args) != 2:
                continue
            names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
            for name in names & set(RESULT_TYPES):
                if path.name != RESULT_TYPES[name]:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} isinstance on {name}")
    return found


def test_no_isinstance_on_result_types_outside_their_modules():
    found = []
    for path in sorted((ROOT / "dpcompose_exact").rglob("*.py")):
        found += _isinstance_on_result_types(path)
    assert found == []


def test_the_ast_check_can_fail(tmp_path):
    bad = ROOT / "dpcompose_exact" / "_probe_not_a_module.py"
    try:
        bad.write_text("def f(x):\n    return isinstance(x, Bounded)\n")
        assert _isinstance_on_result_types(bad)
    finally:
        bad.unlink()


def test_audit_speaks_the_same_method_vocabulary(capsys):
    assert _choices("audit") == ["auto", "exact", "certified", "bounds"]
    parser = build_parser()
    args = parser.parse_args(["audit", "--certified"])
    assert args.method == "certified"
    assert parser.parse_args(["audit", "--method", "pld"]).method == "exact"
