"""The dpcompose command line: formats, JSON contract, errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import mpmath
import pytest
import sympy

from dpcompose_exact.cli.app import main


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_default_is_figure2_table(capsys):
    code, out, err = run(capsys, "compose", "--digits", "12")
    assert code == 0 and err == ""
    lines = out.splitlines()
    # the mechanisms in the order given, braced so that "20 x" binds to both
    # (was "20 x (0.15, 0.02)+(0.3, 0)"), and a header block of short lines
    assert lines[0] == "# composition of 20 x {(0.3, 0), (0.15, 0.02)}; method exact"
    assert lines[1] == "# region = intersection of R(epsilon, delta) over the rows"
    assert lines[2] == "# decimals rounded up: never below the exact values"
    assert lines[3].split()[:3] == ["#", "epsilon", "delta"]
    assert len(lines) == 5 + 41 + 2  # eps in {0, 0.15, ..., 6.0}: 41 loss values >= 0
    # regression: 39 of the 41 exact deltas are too long for a table; the column was 39
    # pointers "[N chars: see --forms FILE]": it is left out, one line says how to get them
    assert lines[3].split() == ["#", "epsilon", "delta", "epsilon", "(exact)"]
    assert "chars: see" not in out and "(x - 1)" not in out
    assert " ".join(x.lstrip("# ") for x in lines[-2:]) == (
        "exact deltas not shown: 39 of 41 are longer than 80 characters; "
        "--forms FILE writes them to a file, --exact always prints them"
    )
    assert lines[5].split()[1:4] == ["0", "0.342327323385", "0"]
    assert max(map(len, lines)) <= 100


def test_table_keeps_exact_column_when_most_forms_fit(capsys):
    # k = 3: 5 of 7 exact deltas fit; the column stays (2 pointers), forms read over x
    code, out, _ = run(capsys, "compose", "-k", "3", "--digits", "12")
    assert code == 0 and "delta (exact)" in out.splitlines()[3]
    assert "x^2/(125000 (x - 1)^2)" in out and "2 exact delta(s) longer" in out
    # JSON and CSV are unchanged by the table's choice: they keep every form
    _, js, _ = run(capsys, "compose", "--format", "json")
    assert all("delta_structured" in r for r in json.loads(js)["region"])


def test_json_contract_and_closed_forms_parse(capsys):
    code, out, _ = run(
        capsys,
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
        "25",
    )
    assert code == 0
    data = json.loads(out)
    assert data["mechanisms"][0]["count"] == 4 and data["method"] == "exact"
    region = data["region"]
    eps_vals = [sympy.sympify(r["epsilon"]) for r in region]
    assert eps_vals == sorted(eps_vals) and len(set(eps_vals)) == len(eps_vals)
    for r in region:
        assert set(r) == {
            "epsilon",
            "delta",
            "epsilon_decimal",
            "delta_decimal",
            "epsilon_rounded",
            "delta_rounded",
            "delta_structured",
        }
        assert "." not in r["delta"] and "e-" not in r["delta"]  # no floats in closed forms
        exact = sympy.sympify(r["delta"]).evalf(40)
        dec = mpmath.mpf(r["delta_decimal"])
        if dec == 0:
            assert abs(exact) < sympy.Float(10) ** -38
        else:
            assert abs(mpmath.mpf(str(exact)) - dec) <= abs(dec) * mpmath.mpf(10) ** -24
    # the leak is folded in: delta1 = 0 means the top constraint has delta 0
    assert region[-1]["delta"] == "0"


@pytest.mark.parametrize("method", ["theorem2", "theorem3"])
def test_methods_give_the_same_json(capsys, method):
    base = ["compose", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "5", "--format", "json"]
    _, a, _ = run(capsys, *base)
    _, b, _ = run(capsys, *base, "--method", method)
    ra, rb = json.loads(a)["region"], json.loads(b)["region"]
    assert [r["delta_decimal"] for r in ra] == [r["delta_decimal"] for r in rb]
    for x, y in zip(ra, rb):
        assert sympy.simplify(sympy.sympify(x["delta"]) - sympy.sympify(y["delta"])) == 0


def test_decimals_only(capsys):
    _, out, _ = run(capsys, "compose", "-k", "3", "--format", "json", "--decimals-only")
    region = json.loads(out)["region"]
    assert all(
        set(r) == {"epsilon_decimal", "delta_decimal", "epsilon_rounded", "delta_rounded"}
        for r in region
    )


def test_csv_and_latex(capsys):
    _, out, _ = run(capsys, "compose", "-k", "2", "--format", "csv", "--digits", "6")
    rows = out.strip().splitlines()
    assert rows[0] == "epsilon,delta,epsilon_decimal,delta_decimal,rounding"
    assert len(rows) == 1 + 5
    _, tex, _ = run(capsys, "compose", "-k", "2", "--format", "latex", "--digits", "6")
    assert "\\begin{table}" in tex and tex.strip().endswith("\\end{table}")
    assert "\\toprule" in tex and "\\frac{3}{20}" in tex


def test_heterogeneous_theorem1_equals_pld(capsys):
    args = ["heterogeneous", "--mech", "log(3):2", "--mech", "log(2):3", "--format", "json"]
    _, a, _ = run(capsys, *args)
    _, b, _ = run(capsys, *args, "--method", "theorem1")
    assert json.loads(a)["region"] == json.loads(b)["region"]
    assert json.loads(b)["method"] == "theorem1"


def test_inactive_constraint_note(capsys):
    code, _, err = run(capsys, "compose", "--dp", "0.4,0.26", "--dp", "0.1,0.001", "-k", "2")
    assert code == 0
    assert err.startswith("dpcompose: note: inactive constraint(s) dropped")
    assert "(2/5, 13/50)" in err


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["compose", "--dp", "-0.1,0"], "negative; valid range: eps >= 0"),
        (["compose", "--dp", "nan,0"], "not finite"),
        (["compose", "--dp", "inf,0"], "not finite"),
        (["compose", "--dp", "0.3,1"], r"outside the valid range [0, 1)"),
        (["compose", "--dp", "0.3,-0.1"], "outside the valid range"),
        (["compose", "--dp", "0.3"], "malformed; expected EPS,DELTA"),
        (["compose", "--dp", "0.3,0,1"], "malformed"),
        (["compose", "-k", "0"], "positive integer"),
        (["compose", "-k", "2.5"], "positive integer"),
        (["compose", "-k", "-4"], "positive integer"),
        (["compose", "-k", "10000000"], "use a smaller k"),
        (["compose", "-k", "100000", "--method", "pld"], "use a smaller k"),
        (["compose", "--method", "fast"], "unknown method 'fast'; choose one of auto, exact"),
        (["verify", "nosuch"], "unknown check(s) 'nosuch'"),
        (["compose", "--digits", "200000"], "outside the valid range [1, 100000]"),
        (["delta", "-k", "2", "--eps", "0.5,,1"], "has an empty item"),
        (["plot", "--dp", "1,0", "-o", "/nonexistent/x.png"], "does not exist"),
        (
            ["compose", "--dp", "0.3,0", "--method", "theorem2", "--mech", "1,0:2"],
            "do not combine them",
        ),
        (["compose", "--method", "theorem3", "-k", "500"], "use method exact"),
        (
            ["compose", "--dp", "0.3,0", "--dp", "0.15,0.5", "--method", "theorem2"],
            "two active constraints",
        ),
        (["compose", "--dp", "exp(1),0"], "outside the supported exact field"),
        (["compose", "--dp", "sqrt(2),0"], "uses sqrt(...), which is outside the exact field"),
        (["compose", "--dp", "print(chr(72)),0"], "unknown function 'print'"),
        (["compose", "--dp", "9**9**9,0"], "exponents must be integers from -64 to 64"),
        (["compose", "--dp", "log(0),0"], "not positive"),
        (["compose", "--dp", "0.3,0", "--dp", "1e-9,0.5", "-k", "2"], "coarser grid"),
        (["compose", "--dp", "0.3,0", "--max-memory", "inf"], "not a number of GiB"),
        (["compose", "-k", "2", "--method", "theorem3", "--dp", "0.3,0"], "exactly two active"),
        (["heterogeneous", "--mech", "0.5"], "malformed; expected EPS:COUNT"),
        (["heterogeneous", "--mech", "0.5:x"], "must be a non-negative integer"),
        (["heterogeneous", "--mech", "0.5:2", "--method", "theorem1"], "composes two kinds"),
    ],
)
def test_bad_input_one_line_exit_2(capsys, argv, msg):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("dpcompose") and ": error: " in err
    assert msg in err


def test_argparse_errors_are_one_line(capsys):
    assert main(["compose", "--format", "xml"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid choice: 'xml'" in err


SCRIPT = shutil.which("dpcompose", path=str(Path(sys.executable).parent)) or shutil.which(
    "dpcompose"
)


@pytest.mark.skipif(SCRIPT is None, reason="console script not installed")
def test_console_script_errors_fast_without_traceback():
    t = time.perf_counter()
    proc = subprocess.run(
        [SCRIPT, "compose", "--dp", "0.3,2"], capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - t
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    # a bound against work before validation, not a benchmark (the machine may be loaded)
    assert elapsed < 10.0, f"error path took {elapsed:.2f} s"


def test_module_entry_point():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpcompose_exact.cli",
            "compose",
            "-k",
            "1",
            "--format",
            "csv",
            "--decimals-only",
            "--digits",
            "5",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == [
        "epsilon_decimal,delta_decimal,rounding",
        "0.15,0.02,up",  # exact decimals: not bumped, not padded with zeros
        "0.3,0,up",
    ]


def test_compose_mech_list_and_spec_agree(capsys, tmp_path):
    spec = tmp_path / "paper.toml"
    spec.write_text(
        '[[mechanism]]\nconstraints = [["0.3", "0"], ["0.15", "0.02"]]\ncount = 3\n'
        '[[mechanism]]\nconstraints = [["0.2", "0.01"]]\ncount = 2\n'
    )
    _, a, _ = run(capsys, "compose", "--spec", str(spec), "--format", "json")
    _, b, _ = run(
        capsys, "compose", "--mech", "0.3,0+0.15,0.02:3", "--mech", "0.2,0.01:2", "--format", "json"
    )
    assert json.loads(a)["region"] == json.loads(b)["region"]
    # canonical exact strings: 0.2 is 1/5 (the API's Mechanism.to_dict)
    assert json.loads(a)["mechanisms"][1] == {"constraints": [["1/5", "1/100"]], "count": 2}


def test_certified_flag_matches_exact_digits(capsys):
    base = ["compose", "-k", "30", "--format", "json", "--digits", "20"]
    _, a, _ = run(capsys, *base)
    _, b, _ = run(capsys, *base, "--certified")
    ra, rb = json.loads(a), json.loads(b)
    assert rb["method"] == "certified" and rb["certified"] is True
    assert [r["delta_decimal"] for r in ra["region"]] == [r["delta_decimal"] for r in rb["region"]]
    assert [r["epsilon"] for r in ra["region"]] == [r["epsilon"] for r in rb["region"]]
    assert "delta" not in rb["region"][0]


def test_large_k_goes_certified_automatically(capsys):
    code, out, _ = run(
        capsys, "compose", "-k", "1000", "--format", "csv", "--digits", "12", "--decimals-only"
    )
    assert code == 0
    rows = out.strip().splitlines()
    assert rows[0] == "epsilon_decimal,delta_decimal,rounding" and len(rows) == 1 + 2001


def test_delta_and_epsilon_commands(capsys):
    code, out, _ = run(
        capsys,
        "delta",
        "-k",
        "10",
        "--eps",
        "0.5",
        "--eps",
        "1",
        "--format",
        "json",
        "--digits",
        "25",
    )
    assert code == 0
    curve = json.loads(out)["curve"]
    assert [c["epsilon"] for c in curve] == ["1/2", "1"]
    _, out2, _ = run(
        capsys,
        "epsilon",
        "-k",
        "10",
        "--delta",
        curve[0]["delta_decimal"],
        "--format",
        "json",
        "--digits",
        "20",
    )
    eps = json.loads(out2)["curve"][0]
    assert eps["epsilon"].startswith("log(")
    assert abs(mpmath.mpf(eps["epsilon_decimal"]) - mpmath.mpf("0.5")) < 1e-19


def test_mech_with_dp_is_refused(capsys):
    code, _, err = run(capsys, "compose", "--mech", "0.3,0:2", "-k", "3")
    assert code == 2 and "do not combine them with --dp or -k" in err


def test_ctrl_c_is_clean(capsys, monkeypatch):
    from dpcompose_exact.cli import app as cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_cmd_compose", interrupted)
    code = main(["compose", "-k", "2"])
    err = capsys.readouterr().err
    assert code == 130 and err == "dpcompose: interrupted\n"


def test_progress_bar_only_on_a_terminal(monkeypatch, capsys):
    from dpcompose_exact.engines.certified import stderr_progress

    assert stderr_progress("x") is None  # pytest's stderr is not a terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    report = stderr_progress("dpcompose")
    assert report is not None
    report(0.5)
    report(1.0)
    err = capsys.readouterr().err
    assert "50.0%" in err and err.endswith("100.0%\n")


def _subparsers(parser):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


def test_every_subcommand_explains_itself(capsys):
    from dpcompose_exact.cli.app import build_parser

    subs = _subparsers(build_parser())
    assert set(subs) >= {"compose", "delta", "epsilon", "heterogeneous", "approx", "plot"}
    for name, p in subs.items():
        assert p.description, name
        assert p.epilog and p.epilog.startswith("examples:\n  dpcompose " + name), name
        for action in p._actions:
            if action.dest == "help":
                continue
            assert action.help, f"{name} {action.option_strings}: no help"
            if action.option_strings and action.default is not False:
                assert "default" in action.help or action.required, (
                    f"{name} {action.option_strings}: the help does not state the default"
                )
        assert main([name, "--help"]) == 0
        text = capsys.readouterr().out
        assert "examples:" in text
        if name in ("compose", "delta", "epsilon", "audit"):
            assert "1/2 + log(2)" in text and "[[mechanism]]" in text


def test_version(capsys):
    from dpcompose_exact import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"dpcompose {__version__}"


@pytest.mark.parametrize("cmd", ["delta", "audit"])
def test_comma_lists_equal_repeated_options(capsys, cmd):
    if cmd == "audit":
        pytest.importorskip("dp_accounting")
        pytest.importorskip("prv_accountant")
        base = ["audit", "-k", "2", "--accountant", "rdp", "--format", "json"]
    else:
        base = ["delta", "-k", "3", "--format", "json"]
    a = run(capsys, *base, "--eps", "0.5,1")
    b = run(capsys, *base, "--eps", "0.5", "--eps", "1")
    assert a[0] == b[0] and a[1] == b[1] and a[1]


def test_table_shows_readable_epsilons_and_abbreviated_deltas(capsys):
    code, out, _ = run(capsys, "delta", "-k", "20", "--eps", "0.5,log(2)")
    assert code == 0
    row0, row1 = out.splitlines()[5:7]
    assert row0.split()[1] == "0.5"  # an exact decimal, not 0.500000000000...
    assert row1.split()[1] == "0.6931471806"  # 10 significant digits of log 2 (the default)
    # both exact deltas are long: no column of pointers, one line says how to get them
    assert "exp(" not in out and "chars: see" not in out
    assert out.splitlines()[-2].startswith("# exact deltas not shown: 2 of 2 are longer")
    # regression: a long form is never cut mid-expression; its length and where to get it
    _, few, _ = run(capsys, "delta", "-k", "20", "--eps", "0.5,5.85,5.9,6")
    row0 = few.splitlines()[5]
    assert "chars: see --forms FILE]" in row0 and "exp(" not in row0
    _, full, _ = run(capsys, "delta", "-k", "20", "--eps", "0.5", "--exact", "always")
    # printed in full, as a polynomial in x = e^{1/20} (tests/test_readable_forms.py checks
    # that such forms equal the exact values)
    assert "# exact forms in x = exp(1/20)" in full and "exp(" not in full.splitlines()[5]
    assert "x^144" in full.splitlines()[5] and "chars" not in full
    _, never, _ = run(capsys, "delta", "-k", "20", "--eps", "0.5", "--exact", "never")
    assert "exp(" not in never


def test_k_in_exact_notation_is_read_and_non_integers_are_explained(capsys):
    # before: "-k 1e9" was refused as not "a positive integer"
    from dpcompose_exact.regions.specs import parse_count

    assert parse_count("1e9", "k", positive=True) == 10**9
    assert parse_count("2.5E3", "k") == 2500 and parse_count("10.0", "k") == 10
    code, out, err = run(capsys, "compose", "-k", "3e0", "--format", "json")
    assert code == 0 and json.loads(out)["mechanisms"][0]["count"] == 3
    for k, why in (
        (
            "1.5e0",
            "k = '1.5e0' must be a positive integer (k >= 1); '1.5e0' is 1.5, not a whole "
            "number (exact notation such as 1e9 or 2.5e3 is read exactly)",
        ),
        (
            "x",
            "k = 'x' must be a positive integer (k >= 1); write it in digits (1000000000) or "
            "in exact notation (1e9)",
        ),
        (
            "1e13",
            "k = 10000000000000 uses of (0.15, 0.02)+(0.3, 0): over k = 1000000000000, the "
            "largest k of the exact, certified and bounds routes of finite pairs",
        ),
        ("1e999999999", "k has more than 100 digits (counts are below 10^100)"),
    ):
        code, out, err = run(capsys, "compose", "-k", k)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert why in err, err


def test_sqrt_is_named_outside_the_exact_field(capsys):
    code, out, err = run(capsys, "compose", "--dp", "sqrt(2),0")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "eps: 'sqrt(2)' uses sqrt(...), which is outside the exact field: " in err
    assert "rationals and rational combinations of logs of rationals" in err
