"""Fuzz the command line: every input ends in exit 0, or exit 2 with one line, in bounded time.

Random strings go into every value option of every subcommand, and random argument lists
are built from each subcommand's real options.  ``dpcompose_exact.cli.app`` runs in-process
with stdout/stderr captured; a few cases run the console entry point in a subprocess.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dpcompose_exact.cli.app import build_parser, main

TIME_LIMIT = 20.0  # seconds per command (the engine is fast at these sizes)

# parse-level inputs whose refusal belongs to the exact engine's parser (known holes)
KNOWN_PARSE_HOLES = re.compile(r"\*\*|[eE]\d{4,}|\d{19,}")
# epsilons on a very fine grid (1e-5 next to 0.15: z-degree 6 * 10^5) are accepted by the
# engine's size check and then run for minutes: a known engine limit, not a CLI one
FINE_GRID = re.compile(r"\.\d{3,}|/\s*\d{3,}|[eE]\s*-|\d{4,}")
EPS_OPTIONS = ("--dp", "--mech", "--eps", "--gaussian", "--laplace")

ALPHABET = "0123456789.,:+-*/() eElogxnsqrt_"
TEXT = st.text(alphabet=ALPHABET, max_size=14)
INTERESTING = st.sampled_from(
    [
        "0",
        "1",
        "0.3,0",
        "0.15,0.02",
        "0.5:2",
        "0.3,0+0.15,0.02:2",
        "log(2)",
        "1/2 + log(2)",
        "3/20",
        "1e-5",
        "-1",
        "nan",
        "inf",
        "",
        ",",
        ":",
        "0.3,1",
        "log(0),0",
        "sqrt(2),0",
        "a,b",
        "1/0,0",
        "(((1)))",
        "0.5,,1",
    ]
)
SMALL_INT = st.sampled_from(["0", "1", "2", "3", "-2", "x", "1.5", "", "2e0", " 2"])


def _subparsers():
    import argparse

    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    raise AssertionError("no subcommands")


SUBS = _subparsers()
# commands whose success path is quick at small sizes (audit and verify run long jobs)
FAST = ["compose", "delta", "epsilon", "heterogeneous", "approx", "plot"]


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def run_cli(argv: list[str]) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT)
    t = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except _Timeout:
        pytest.fail(f"dpcompose {argv!r} ran longer than {TIME_LIMIT} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return code, out.getvalue(), err.getvalue(), time.perf_counter() - t


def check(argv: list[str], allowed: tuple[int, ...] = (0, 2)) -> None:
    code, _, err, _ = run_cli(argv)
    assert "Traceback" not in err, err
    assert code in allowed, (argv, code, err)
    if code == 2:
        assert err.count("\n") == 1 and err.endswith("\n"), (argv, err)
        assert err.startswith("dpcompose"), (argv, err)


def _value_options(name: str) -> list[tuple[str, str]]:
    """(option string, kind) of each option of a subcommand that takes a value."""
    out = []
    for action in SUBS[name]._actions:
        if not action.option_strings or action.nargs == 0 or action.dest == "help":
            continue
        opt = action.option_strings[-1]
        kind = "int" if opt in ("-k", "--digits", "--pieces", "--dpi") else "text"
        if opt in ("-o", "--output", "--plot", "--spec"):
            kind = "path"
        out.append((opt, kind))
    return out


def _flags(name: str) -> list[str]:
    return [
        a.option_strings[-1]
        for a in SUBS[name]._actions
        if a.option_strings and a.nargs == 0 and a.dest not in ("help",)
    ]


def _value(kind: str) -> st.SearchStrategy[str]:
    if kind == "int":
        return SMALL_INT
    if kind == "path":
        return st.sampled_from(["out.png", "out.pdf", "nodir/x.png", "x.gif", "", "spec.toml"])
    return st.one_of(INTERESTING, TEXT)


@st.composite
def argument_lists(draw) -> list[str]:
    name = draw(st.sampled_from(FAST))
    argv = [name]
    opts = _value_options(name)
    flags = _flags(name)
    for _ in range(draw(st.integers(0, 5))):
        if flags and draw(st.booleans()) and draw(st.booleans()):
            flag = draw(st.sampled_from(flags))
            if flag != "--certified":  # certified mode at random sizes is a long job
                argv.append(flag)
            continue
        opt, kind = draw(st.sampled_from(opts))
        argv += [opt, draw(_value(kind))]
    if name == "plot" and "-o" not in argv:
        argv += ["-o", "out.png"]
    if "-k" not in argv and name != "heterogeneous":
        argv += ["-k", "2"]  # keep the success path short
    return argv


def _known_hole(argv: list[str]) -> bool:
    if any(KNOWN_PARSE_HOLES.search(a) for a in argv):
        return True
    return any(prev in EPS_OPTIONS and FINE_GRID.search(a) for prev, a in zip(argv, argv[1:]))


@pytest.fixture(autouse=True)
def _in_tmp_dir():
    with tempfile.TemporaryDirectory() as tmp:
        old = os.getcwd()
        os.chdir(tmp)
        try:
            yield
        finally:
            os.chdir(old)


SETTINGS = settings(
    max_examples=int(os.environ.get("DPCOMPOSE_FUZZ_EXAMPLES", "25")),  # more: a longer hunt
    deadline=None,  # TIME_LIMIT bounds each command instead (a slow machine is not a bug)
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    database=None,
)


@SETTINGS
@given(argv=argument_lists())
def test_random_argument_lists(argv):
    assume(not _known_hole(argv))
    check(argv)


@SETTINGS
@given(
    name=st.sampled_from(["compose", "delta", "epsilon", "heterogeneous", "audit"]),
    text=st.one_of(INTERESTING, TEXT),
    where=st.sampled_from(["--dp", "--mech", "--eps", "--delta", "-k", "--digits", "--spec"]),
)
def test_random_strings_in_every_value(name, text, where):
    assume(not _known_hole([where, text]))
    opts = {o for o, _ in _value_options(name)}
    assume(where in opts)
    argv = [name, where, text]
    if where not in ("-k", "--mech", "--spec") and name != "heterogeneous":
        argv += ["-k", "2"]
    if name == "delta" and where != "--eps":
        argv += ["--eps", "1"]
    if name == "epsilon" and where != "--delta":
        argv += ["--delta", "1e-3"]
    if name == "heterogeneous" and where != "--mech":
        argv += ["--mech", "0.5:2"]
    if name == "audit":  # only the error paths: a valid audit is a long job
        assume(where in ("--dp", "--mech", "--eps", "--delta"))
        argv += ["-k", "0"] if where not in ("--mech",) else ["--dp", "1,0"]
    check(argv, allowed=(0, 1, 2) if name == "audit" else (0, 2))


@SETTINGS
@given(st.lists(st.one_of(TEXT, st.sampled_from(["--", "-", "--dp", "-k", "--help"])), max_size=4))
def test_random_words(words):
    assume(not _known_hole(words) and "--help" not in words[1:])
    code, _, err, _ = run_cli(words)
    assert "Traceback" not in err
    assert code in (0, 2)
    if code == 2:
        assert err.count("\n") == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "nosuch"],
        ["plot", "--dp", "1,0", "-o", "/nonexistent/x.png"],
        ["compose", "--digits", "200000"],
        ["compose", "--spec", "/nonexistent.toml"],
        ["delta", "--eps", "0.5,,1"],
    ],
)
def test_console_entry_point_one_line(argv):
    proc = subprocess.run(
        [sys.executable, "-m", "dpcompose_exact.cli", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert not os.path.exists("/nonexistent")


@pytest.mark.slow
@pytest.mark.parametrize(
    "value",
    [
        "((((10**64)**64)**64)**64)**64,0",
        "0.3,((((10**64)**64)**64)**64)**64",
        "log(1000000000000000000000000000000000000000000000000000000000000000000000037),0",
        "1e999999,0",
    ],
)
def test_parse_level_holes_are_closed(value):
    """Regressions: nested powers, a 70-digit log argument (no factoring) and huge
    exponents answer or refuse in one line within a time bound."""
    _run_bounded(["compose", "-k", "2", "--dp", value], value)


@pytest.mark.slow
def test_fine_grid_eps_query_is_cheap():
    """Regression: an eps on a much finer grid than the mechanism's (1e-5 next to 0.15)
    no longer joins the composition's field (it ran for minutes)."""
    _run_bounded(["delta", "--eps", "1e-5"], "1e-5")


def _run_bounded(argv, value):
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "dpcompose_exact.cli", *argv],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"--dp {value[:30]}... ran longer than 10 s")
    assert "Traceback" not in proc.stderr
    if proc.returncode == 0:  # answered
        return
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    parts = [p for p in value.split(",") if len(p) > 1] or [value]
    assert any(p[:10] in proc.stderr for p in parts)  # names the input
