"""Sweeps over grids: grid files, the store, Dask workers, interrupts and dying workers."""

from __future__ import annotations

import functools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
import sympy

from dpcompose_exact import cli
from dpcompose_exact.errors import InvalidParameterError
from dpcompose_exact.tools.sweeps import load_grid, run_task, sweep

ROOT = Path(__file__).resolve().parents[1]

SMALL = """
[[mechanism]]
constraints = [["{eps}", "0"], ["{eps}/2", "{delta}"]]
count = "{k}"

[grid]
eps = ["0.3", "1"]
delta = ["0", "0.02"]
k = [4, 9]

[query]
delta_at_epsilon = ["1", "1/2"]
epsilon_at_delta = ["1e-5"]
"""


def _write(tmp_path: Path, text: str, name: str = "grid.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _cli_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert cli.main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _expected(capsys: pytest.CaptureFixture[str], eps: str, delta: str, k: int) -> dict:
    """Single-cell CLI results (``dpcompose delta/epsilon ... --format json``)."""
    half = f"({eps})/2"
    base = ["--dp", f"{eps},0", "--dp", f"{half},{delta}", "-k", str(k), "--format", "json"]
    out = {}
    d = _cli_json(capsys, ["delta", *base, "--eps", "1", "--eps", "1/2"])["curve"]
    out[("delta_at_epsilon", "1")] = (d[0]["delta_decimal"], d[0]["delta"])
    out[("delta_at_epsilon", "1/2")] = (d[1]["delta_decimal"], d[1]["delta"])
    e = _cli_json(capsys, ["epsilon", *base, "--delta", "1e-5"])["curve"]
    out[("epsilon_at_delta", "1e-5")] = (e[0]["epsilon_decimal"], e[0]["epsilon"])
    return out


def _check_rows_against_cli(rows: list[dict], capsys: pytest.CaptureFixture[str]) -> int:
    cache: dict = {}
    checked = 0
    for r in rows:
        key = (r["eps"], r["delta"], r["k"])
        if key not in cache:
            cache[key] = _expected(capsys, *key)
        value, exact = cache[key][(r["query"], r["at"])]
        assert r["error"] is None
        assert r["value"] == value
        assert r["exact"] in (None, exact)  # left out only when longer than exact_chars
        assert r["exact"] is not None or len(exact) > 200
        checked += 1
    return checked


# ---------------------------------------------------------------------------------------
# grid files


@pytest.mark.parametrize(
    "text, needle",
    [
        (SMALL.replace('eps = ["0.3", "1"]', "eps = [0.3, 1]"), "grid.eps[0]: 0.3 is a float"),
        (SMALL.replace('"{eps}/2"', '"{epz}/2"'), "placeholder {epz} is not a grid variable"),
        (SMALL.replace("[grid]", "[grid"), "cannot parse as TOML"),
        (SMALL.replace("[[mechanism]]", "[[mechanisms_x]]"), "mechanisms_x: unknown key"),
        (SMALL.replace("delta_at_epsilon", "delta_at_eps"), "query.delta_at_eps: unknown query"),
        (SMALL.replace("k = [4, 9]", "k = [4, 9]\nz = [1]"), "grid.z: used by no {z}"),
        (SMALL + "audit = 'yes'\n", "query.audit: 'yes'"),
        (SMALL.replace('count = "{k}"', "count = 2.5"), "mechanism[0].count: 2.5 is a float"),
        (SMALL.replace('"{eps}/2"', '"{eps/2"'), "has a stray brace"),
    ],
)
def test_malformed_grid_gives_one_line_and_exit_2(tmp_path, capsys, text, needle):
    grid = _write(tmp_path, text)
    assert cli.main(["sweep", str(grid), "--serial"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dpcompose: error: grid file grid.toml")
    assert needle in err
    with pytest.raises(InvalidParameterError, match="grid file grid.toml"):
        load_grid(grid)


def test_malformed_grid_from_the_console_script(tmp_path):
    grid = tmp_path / "bad.json"
    grid.write_text(json.dumps({"mechanism": [{"constraints": [["{e}", 0.1]], "count": 2}]}))
    proc = subprocess.run(
        [sys.executable, "-m", "dpcompose_exact.cli", "sweep", str(grid)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "mechanism[0].constraints[0]: 0.1 is a float" in proc.stderr
    assert proc.stdout == ""


def test_placeholders_are_parenthesized_and_exact():
    grid = {
        "mechanism": [{"constraints": [["{eps}/2", "0"]], "count": "{k}"}],
        "grid": {"eps": ["1 + log(4)"], "k": [1]},
        "query": {"epsilon_at_delta": ["0"]},
    }
    (row,) = sweep(grid, serial=True).rows
    # eps(0) of one pure (eps/2)-DP mechanism is (1 + log 4)/2, not 1 + log(4)/2
    assert sympy.sympify(row["exact"]) == sympy.Rational(1, 2) + sympy.log(2)
    assert row["error"] is None


# ---------------------------------------------------------------------------------------
# serial runs, failing cells, formats, the store


def test_serial_rows_equal_single_cell_cli_and_bad_cells_get_errors(tmp_path, capsys):
    text = SMALL.replace('delta = ["0", "0.02"]', 'delta = ["0.02", "1"]').replace(
        "k = [4, 9]", "k = [4]"
    )
    grid = _write(tmp_path, text)
    out = tmp_path / "res.csv"
    assert cli.main(["sweep", str(grid), "--serial", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "12 cells: 0 reused" in err and "6 failed" in err
    res = sweep(grid, out, serial=True)  # the same store (next to the output)
    assert (res.reused, res.computed, res.failed) == (6, 0, 6)  # bad cells: not stored
    good = [r for r in res.rows if r["delta"] != "1"]
    bad = [r for r in res.rows if r["delta"] == "1"]
    assert _check_rows_against_cli(good, capsys) == 6
    assert all("outside the valid range [0, 1)" in r["error"] for r in bad)
    assert all(r["value"] is None for r in bad)
    assert out.read_text().count("\n") == 13


def test_over_the_memory_limit_bounds_answer(tmp_path):
    # two incommensurable epsilons: no certified route; over the limit, certified two-sided
    # bounds answer, shown as lower/upper (never as a value they are not)
    grid = {
        "mechanism": [{"constraints": [["log(2)", "0"], ["0.3", "{delta}"]], "count": "{k}"}],
        "grid": {"delta": ["0.01"], "k": [40]},
        "query": {"delta_at_epsilon": ["1"]},
    }
    res = sweep(grid, serial=True, max_memory=2**10)
    (row,) = res.rows
    assert row["error"] is None and row["method"] == "bounds" and res.failed == 0
    assert row["exact"] is None and Fraction(row["lower"]) < Fraction(row["upper"])
    # the value column holds the digits the enclosure certifies (one unit in the last place)
    digits = len(row["value"].split(".")[1])
    assert abs(Fraction(row["value"]) - Fraction(row["lower"])) <= Fraction(1, 10**digits)


def test_formats_from_suffix_agree(tmp_path):
    pa = pytest.importorskip("pyarrow.parquet")
    grid = _write(tmp_path, SMALL.replace("k = [4, 9]", "k = [3]"))
    base = sweep(grid, tmp_path / "t.csv", serial=True, digits=12)
    for name in ("t.jsonl", "t.parquet", "t.tex"):
        res = sweep(grid, tmp_path / name, serial=True, digits=12)
        assert res.reused == res.cells == base.cells == 12  # one store for all four formats
    lines = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    table = pa.read_table(tmp_path / "t.parquet").to_pylist()
    assert [r["value"] for r in lines] == [r["value"] for r in table]
    assert [r["value"] for r in lines] == [r["value"] for r in base.rows]
    assert table[0]["k"] == 3 and isinstance(table[0]["seconds"], float)
    tex = (tmp_path / "t.tex").read_text()
    assert "\\toprule" in tex and "delta\\_at\\_epsilon" in tex
    assert tex.count("\\\\") == 13


def test_parquet_without_pyarrow_is_one_clear_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    grid = _write(tmp_path, SMALL)
    assert cli.main(["sweep", str(grid), "--serial", "-o", str(tmp_path / "t.parquet")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs pyarrow, which is not installed" in err
    assert 'pip install "dpcompose-exact[sweep]"' in err and 'pip install ".[sweep]"' in err
    assert not (tmp_path / "t.sweep.sqlite").exists()  # refused before any work


def test_fresh_recomputes_and_digits_change_the_key(tmp_path):
    grid = _write(tmp_path, SMALL.replace("k = [4, 9]", "k = [2]"))
    first = sweep(grid, tmp_path / "a.csv", serial=True, digits=10)
    assert first.computed == 12
    assert sweep(grid, tmp_path / "a.csv", serial=True, digits=10).reused == 12
    assert sweep(grid, tmp_path / "a.csv", serial=True, digits=10, resume=False).computed == 12
    more = sweep(grid, tmp_path / "a.csv", serial=True, digits=11)
    assert more.computed == 12 and more.reused == 0


def test_run_task_reports_a_version_mismatch(tmp_path):
    grid = load_grid(
        {
            "mechanism": [{"constraints": [["1", "0"]], "count": 1}],
            "query": {"delta_at_epsilon": ["0"]},
        }
    )
    res = sweep(grid, serial=True, runner=_old_version_runner, store=tmp_path / "s.sqlite")
    assert "this worker runs dpcompose_exact" in res.rows[0]["error"]
    again = sweep(grid, serial=True, store=tmp_path / "s.sqlite")  # that row was not stored
    assert again.computed == 1 and again.rows[0]["error"] is None


def _old_version_runner(task):
    from dataclasses import replace

    return run_task(replace(task, version="0.0.0-old"))


# ---------------------------------------------------------------------------------------
# killed halfway: the rerun computes only what is missing

SLOW = """
[[mechanism]]
constraints = [["{eps}", "0"], ["{eps}/2", "0.02"]]
count = "{k}"

[grid]
eps = ["0.3", "0.2", "0.1", "1", "0.5", "0.7"]
k = [20, 30, 40]

[query]
delta_at_epsilon = ["1"]
epsilon_at_delta = ["1e-5"]
"""


def _stored_keys(db: Path) -> set[str]:
    con = sqlite3.connect(db)
    try:
        return {k for (k,) in con.execute("SELECT key FROM cells")}
    except sqlite3.OperationalError:  # the table does not exist yet
        return set()
    finally:
        con.close()


def _default_sigint() -> None:
    # the child starts as from a terminal: SIGINT raises KeyboardInterrupt even if the test
    # process (after hundreds of tests and their libraries) inherited or set SIG_IGN, which a
    # child would keep (the sweep then ran to the end and exited 0 in the full suite)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_and_stop(argv: list[str], db: Path, sig: int, at_least: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpcompose_exact.cli", "sweep", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=_default_sigint,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists() and len(_stored_keys(db)) >= at_least:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep finished before it could be interrupted"
    proc.send_signal(sig)
    proc.wait(timeout=60)
    return proc


def test_killed_sweep_resumes_without_recomputing(tmp_path):
    grid = _write(tmp_path, SLOW)
    out = tmp_path / "r.csv"
    db = tmp_path / "r.sweep.sqlite"
    proc = _start_and_stop([str(grid), "--serial", "-o", str(out)], db, signal.SIGKILL, 6)
    assert proc.returncode == -signal.SIGKILL
    before = _stored_keys(db)
    assert 6 <= len(before) < 36
    res = sweep(grid, out, serial=True)
    assert res.reused == len(before)
    assert res.computed == 36 - len(before)
    assert not res.computed_keys & before  # nothing stored was computed again
    assert _stored_keys(db) == before | res.computed_keys
    assert res.failed == 0 and len(res.rows) == 36
    assert out.read_text().count("\n") == 37


# cells of one size (about 0.3 s each): SLOW starts its largest compositions first and the
# rest finish within a few hundredths of a second under two workers, which a loaded machine
# let outrun the interrupt (the sweep ended with status 0 before SIGINT landed)
EVEN = SLOW.replace('"0.7"]', '"0.7", "0.4", "0.6", "0.9"]').replace("[20, 30, 40]", "[120, 125]")


@pytest.mark.slow
def test_interrupted_dask_sweep_stops_cleanly_and_resumes(tmp_path):
    grid = _write(tmp_path, EVEN)
    out = tmp_path / "r.jsonl"
    db = tmp_path / "r.sweep.sqlite"
    argv = [str(grid), "--workers", "2", "-o", str(out)]
    parent = signal.getsignal(signal.SIGINT)
    proc = _start_and_stop(argv, db, signal.SIGINT, 4)
    err = proc.stderr.read()
    stored = len(_stored_keys(db))
    assert proc.returncode == 130, (proc.returncode, parent, stored, err[-500:])
    assert "rerun the same command" in err
    before = _stored_keys(db)
    res = sweep(grid, out, serial=True)
    assert res.reused == len(before) >= 4
    assert not res.computed_keys & before
    assert res.reused + res.computed == 36 and res.failed == 0


# ---------------------------------------------------------------------------------------
# a real LocalCluster with 2 process workers; one worker dies once, another cell kills
# its worker every time


def _claim(path: Path, key: str) -> bool:
    """True for the first task that claims ``path`` (and for that task's retries)."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return path.read_text() == key
    os.write(fd, key.encode())
    os.close(fd)
    return True


def _dying_runner(marker_dir: str, task):
    count, key, tmp = task.mechanisms[0][1], task.queries[0].key, Path(marker_dir)
    # the first k = 9 composition kills its worker once: the retry must succeed
    if count == 9 and not (tmp / "died-once").exists() and _claim(tmp / "died-once", key):
        os._exit(1)
    # the first k = 7 composition kills its worker every time: reported as failed
    if count == 7 and _claim(tmp / "doomed", key):
        os._exit(1)
    return run_task(task)


@pytest.fixture(scope="module")
def cluster_sweep(tmp_path_factory):
    pytest.importorskip("distributed")
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    tmp = tmp_path_factory.mktemp("cluster")
    grid = _write(tmp, SMALL.replace("k = [4, 9]", "k = [4, 9, 7]"))
    runner = functools.partial(_dying_runner, str(tmp))
    res = sweep(grid, tmp / "c.csv", workers=2, runner=runner)
    return res, tmp


@pytest.mark.slow
def test_local_cluster_rows_equal_single_cell_cli(cluster_sweep, capsys):
    res, _ = cluster_sweep
    good = [r for r in res.rows if not r["error"]]
    assert len(res.rows) == 36 and len(good) == 33
    assert _check_rows_against_cli(good, capsys) == 33


@pytest.mark.slow
def test_worker_dying_once_is_retried_and_twice_is_a_failed_row(cluster_sweep):
    res, tmp = cluster_sweep
    dead = [r for r in res.rows if r["error"]]
    assert len(dead) == 3 and res.failed == 3  # the doomed composition's three queries
    assert {r["k"] for r in dead} == {7}
    assert all("the worker died twice on this cell" in r["error"] for r in dead)
    assert (tmp / "died-once").exists()
    assert res.retried >= 2  # the k = 9 composition once, the doomed one once
    # failures of the infrastructure are not stored: a rerun tries them again
    again = sweep(tmp / "grid.toml", tmp / "c.csv", serial=True)
    assert again.reused == 33 and again.computed == 3 and again.failed == 0


def test_nine_million_cell_grid_is_refused_at_once(tmp_path, capsys):
    # regression: a 9-million-cell grid neither answered nor refused in 40 s
    values = {
        "eps": [f"{i}/100" for i in range(1, 301)],
        "delta": [f"{i}/10000" for i in range(300)],
        "k": list(range(1, 101)),
    }
    grid = tmp_path / "big.json"
    grid.write_text(
        json.dumps(
            {
                "mechanism": [{"constraints": [["{eps}", "{delta}"]], "count": "{k}"}],
                "grid": values,
                "query": {"delta_at_epsilon": ["1"]},
            }
        )
    )
    t0 = time.perf_counter()
    assert cli.main(["sweep", str(grid), "--serial"]) == 2
    assert time.perf_counter() - t0 < 5
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "9,000,000 cells (300 eps x 300 delta x 100 k values x 1 query)" in err
    assert "--max-cells" in err
    assert not (tmp_path / "big.sweep.sqlite").exists()  # refused before any work
    # the limit is an option: a small grid over a small limit, and the count is exact
    small = _write(tmp_path, SMALL)  # 2 x 2 x 2 points x 3 queries = 24 cells
    with pytest.raises(InvalidParameterError, match=r"24 cells .* limit of 23;"):
        sweep(small, serial=True, max_cells=23, store=str(tmp_path / "s.sqlite"))
    assert sweep(small, serial=True, max_cells=24, store=str(tmp_path / "s.sqlite")).cells == 24


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    "address, needle",
    [
        ("tcp://127.0.0.1:1", "cannot reach the Dask scheduler 'tcp://127.0.0.1:1'"),
        (None, "cannot reach the Dask scheduler"),  # a free port on this machine
        ("tcp://127.0.0.1:99999", "port in 1..65535"),
        ("tcp://127.0.0.1", "port in 1..65535"),
        ("http://127.0.0.1:8786", "unknown scheme 'http'"),
    ],
)
def test_bad_scheduler_fails_at_once_in_one_line(tmp_path, capsys, address, needle):
    # regression: --scheduler tcp://127.0.0.1:1 took 20 s to fail
    address = address or f"127.0.0.1:{_closed_port()}"
    grid = _write(tmp_path, SMALL)
    t0 = time.perf_counter()
    assert cli.main(["sweep", str(grid), "--scheduler", address]) == 2
    assert time.perf_counter() - t0 < 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dpcompose: error:")
    assert needle in err
    assert not (tmp_path / "grid.sweep.sqlite").exists()  # before any work


def test_too_many_local_workers_are_refused_at_once(tmp_path, capsys):
    from dpcompose_exact.tools.sweeps import MAX_WORKERS

    grid = _write(tmp_path, SMALL)
    t0 = time.perf_counter()
    assert cli.main(["sweep", str(grid), "--workers", str(MAX_WORKERS + 1)]) == 2
    assert time.perf_counter() - t0 < 3  # no process started
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"more than {MAX_WORKERS}" in err and "--scheduler" in err
    assert MAX_WORKERS >= 64


# ---------------------------------------------------------------------------------------
# every kind of mechanism


def test_noise_and_subsampled_mechanisms_sweep_like_the_front_door(tmp_path):
    import dpcompose_exact as dx

    grid = {
        "mechanism": [
            {"noise": "gaussian", "scale": "{sigma}", "subsample": "1/100", "count": "{k}"},
            {"randomized_response": {"p": "{p}"}, "count": 2},
        ],
        "grid": {"sigma": ["1", "2"], "p": ["1/2"], "k": [10]},
        "query": {"delta_at_epsilon": ["1"], "epsilon_at_delta": ["1e-5"]},
    }
    res = sweep(grid, serial=True, digits=8, output=str(tmp_path / "noise.csv"))
    assert not any(r["error"] for r in res.rows) and len(res.rows) == 4
    for r in res.rows:
        c = dx.compose(
            [
                (dx.gaussian_noise(r["sigma"]).subsample("1/100"), 10),
                (dx.randomized_response(r["p"]), 2),
            ]
        )
        v = c.delta(r["at"]) if r["query"] == "delta_at_epsilon" else c.epsilon(r["at"])
        if r["lower"] is None:  # every digit certified
            assert r["value"] == v.decimal(8)
        else:
            assert (r["lower"], r["upper"]) == v.interval(8)
        assert r["method"] == "bounds"
    # the same rows from the store on a rerun: nothing recomputed
    again = sweep(grid, serial=True, digits=8, output=str(tmp_path / "noise.csv"))
    assert again.computed == 0 and again.rows == res.rows
    # the Gaussian alone, spelled as its family: every digit certified
    one = sweep(
        {
            "mechanism": [{"gaussian": {"sigma": "{sigma}"}, "count": 10}],
            "grid": {"sigma": ["1"]},
            "query": {"delta_at_epsilon": ["1"]},
        },
        serial=True,
        digits=12,
    )
    assert one.rows[0]["value"] == dx.compose(dx.gaussian_noise(1), 10).delta("1").decimal(12)


def test_a_typo_in_a_family_item_is_one_line(tmp_path):
    grid = {
        "mechanism": [{"gaussian": {"sigmaa": "{s}"}, "count": 1}],
        "grid": {"s": ["1"]},
        "query": {"delta_at_epsilon": ["1"]},
    }
    res = sweep(grid, serial=True, digits=8)
    assert "gaussian has no parameter 'sigmaa'" in res.rows[0]["error"]
    with pytest.raises(InvalidParameterError, match="unknown key"):
        load_grid(
            {
                "mechanism": [{"gauss": {}, "count": 1}],
                "grid": {"s": ["1"]},
                "query": {"delta_at_epsilon": ["{s}"]},
            }
        )
