"""Time and peak memory of ordinary CLI queries, each in a capped subprocess.

Every example runs as ``python -m dpcompose_exact.cli ...`` under an address-space cap and
a wall-clock timeout; the script prints wall time, CPU time and peak RSS of the child
(``os.wait4``), exit status and the first line of stderr.  Wall time depends on the
machine's load; CPU time much less so.

Then two rows against a baseline measured in the same run, each the
same query in a child process twice, the output compared byte for byte:

* ``compose -k 100000 --format csv --decimals-only`` (CPU seconds): the baseline makes
  every row's nearest decimals too, which the CSV replaces by the directed ones (what the
  rows did before ``directed_only``);
* ``compose --dp 0.5,1e-12 -k 355`` (peak RSS): the baseline keeps every row's reduced
  exact delta for its readable form, however long the form (before ``parts_up_to``).

Usage: ``python benchmarks/bench_queries.py [--cap-gib 4] [--timeout 60] [--quick] [substring ...]``
(``--quick``: the examples marked quick below and the baselines at k = 10000 and k = 250,
a smoke run; ``--no-baselines`` leaves the baselines out)
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

import _here  # noqa: F401  (this checkout, not an installed copy)

EXAMPLES = [
    ["delta", "-k", "20", "--eps", "0.123457"],
    ["delta", "-k", "5", "--eps", "0.123457"],
    ["delta", "--dp", "0.25,0.999", "--dp", "1,0.99", "-k", "40", "--eps", "666667/1000000"],
    ["delta", "--dp", "0.5,0.5", "--dp", "2,1e-12", "-k", "48", "--eps", "0.1234"],
    ["heterogeneous", "--mech", "0.000001:3", "--mech", "1:3"],
    ["heterogeneous", "--mech", "0.000001:3", "--mech", "1:3", "--decimals-only"],
    ["compose", "--dp", "0.5,1e-12", "-k", "355"],
    ["compose", "--dp", "2*log(2),0", "--dp", "log(2),0.05", "-k", "2500", "--format", "json"],
    ["delta", "--dp", "0.5,1e-12", "-k", "400", "--eps", "1", "--decimals-only"],
    ["compose", "--dp", "5,0", "--dp", "0.01,0.3", "-k", "12", "--format", "json"],
    ["compose", "--spec", "@SPEC100000"],
    ["compose", "-k", "100000", "--format", "csv", "--decimals-only"],
    ["approx", "--gaussian", "1", "--pieces", "1000000", "-k", "2"],
    ["delta", "--eps", "1e-999999999"],
    ["epsilon", "--delta", "1e-999999999"],
    ["compose", "--max-memory", "1e999999999"],
    ["epsilon", "--delta", "1e-999999"],
]

#: A smoke run (``--quick``): a small answer and the refusals, a few seconds in all.
QUICK = [EXAMPLES[1], EXAMPLES[13], EXAMPLES[15]]

#: a child that runs the CLI (``new``) or the CLI with the former rows (``baseline``) and
#: prints its CPU seconds, peak RSS (MiB) and the SHA-256 of its output on stderr
CHILD = r"""
import contextlib, hashlib, io, resource, sys
from dpcompose_exact.cli.app import main
from dpcompose_exact.presentation import formats, rows
if sys.argv[1] == "baseline":
    plain = rows.region_rows
    def region_rows(*args, **kw):  # the former rows: nearest decimals made, parts kept
        kw.pop("directed_only", None)
        kw.pop("parts_up_to", None)
        return plain(*args, **kw)
    formats.region_rows = region_rows
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main(sys.argv[2:])
    except SystemExit:
        pass
u = resource.getrusage(resource.RUSAGE_SELF)
digest = hashlib.sha256(out.getvalue().encode()).hexdigest()[:16]
print(u.ru_utime + u.ru_stime, u.ru_maxrss / 1024, digest, file=sys.stderr)
"""


def child(mode: str, argv: list[str]) -> tuple[float, float, str]:
    """(CPU seconds, peak RSS MiB, output digest) of the CLI in a child, ``new`` or ``baseline``."""
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, mode, *argv], capture_output=True, text=True, env=env
    )
    cpu, rss, digest = proc.stderr.strip().splitlines()[-1].split()
    return float(cpu), float(rss), digest


def baselines(quick: bool) -> None:
    """The two rows against their baselines (see the module docstring)."""
    k = "10000" if quick else "100000"
    csv = ["compose", "-k", k, "--format", "csv", "--decimals-only"]
    table = ["compose", "--dp", "0.5,1e-12", "-k", "250" if quick else "355"]
    for argv, what in ((csv, "cpu"), (table, "rss")):
        b_cpu, b_rss, b_digest = child("baseline", argv)
        n_cpu, n_rss, n_digest = child("new", argv)
        same = "same bytes" if b_digest == n_digest else "OUTPUT DIFFERS"
        if what == "cpu":
            figures = f"{n_cpu:7.2f} s cpu, baseline {b_cpu:7.2f} s: ratio {b_cpu / n_cpu:5.2f}"
        else:
            figures = f"{n_rss:7.0f} MiB, baseline {b_rss:7.0f} MiB: ratio {b_rss / n_rss:5.2f}"
        print(f"baseline row: {figures}  ({same})  dpcompose {' '.join(argv)}", flush=True)


def _spec_file() -> str:
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "dpcompose_bench_100000.json")
    if not os.path.exists(path):
        import json

        items = [{"constraints": [["0.3", "0"], ["0.15", "0.02"]], "count": 1}] * 100000
        with open(path, "w") as fh:
            json.dump({"mechanisms": items}, fh)
    return path


def run(argv: list[str], cap_gib: float, timeout: float) -> tuple[float, float, float, str, str]:
    """(wall seconds, CPU seconds, peak RSS MiB, status, first stderr line) of one CLI call."""
    import tempfile
    import threading

    argv = [_spec_file() if a == "@SPEC100000" else a for a in argv]
    cap = int(cap_gib * 2**30)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    cmd = [sys.executable, "-m", "dpcompose_exact.cli", *argv]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, preexec_fn=limit)
        killed = []
        timer = threading.Timer(timeout, lambda: (killed.append(1), proc.kill()))
        timer.start()
        _, status_word, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status_word)
        seconds = time.perf_counter() - start
        err.seek(0)
        lines = err.read().strip().splitlines()
    status = "timeout" if killed else str(proc.returncode)
    first = (lines[0] if lines else "")[:110]
    if len(lines) > 1:
        first = f"[{len(lines)} lines] " + lines[-1][:90]
    if killed:
        first = f"> {timeout:g} s, killed"
    cpu = usage.ru_utime + usage.ru_stime  # robust to a loaded machine, unlike wall time
    return seconds, cpu, usage.ru_maxrss / 1024, status, first


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cap-gib", type=float, default=4.0)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--quick", action="store_true", help="a few examples (a smoke run)")
    parser.add_argument("--no-baselines", action="store_true")
    parser.add_argument("only", nargs="*")
    args = parser.parse_args()
    for ex in QUICK if args.quick else EXAMPLES:
        text = " ".join(ex)
        if args.only and not any(s in text for s in args.only):
            continue
        seconds, cpu, rss, status, first = run(ex, args.cap_gib, args.timeout)
        print(
            f"{seconds:7.2f} s wall {cpu:7.2f} s cpu {rss:7.0f} MiB  exit {status:>7}  "
            f"dpcompose {text}"
        )
        if first:
            print(f"{'':35}stderr: {first}")
        sys.stdout.flush()
    if not args.no_baselines and not args.only:
        baselines(args.quick)


if __name__ == "__main__":
    main()
