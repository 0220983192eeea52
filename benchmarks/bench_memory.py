"""Benchmark: memory estimate of the exact route against the measured max RSS.

Each case runs ``dpcompose compose ... --format json --decimals-only`` forced onto the
exact route (``--closed-forms``: with the closed forms) in a fresh child process, with no
memory limit, and reads the
child's peak resident set size (``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``).  The
table prints the calibrated estimate (:func:`dpcompose_exact.engines.memory.estimate_rss`), the
old estimate (:func:`dpcompose_exact.engines.genfunc.estimate_bytes`), the measured RSS and the
ratios.  Cases above ``--max-gib`` (by the calibrated estimate) are skipped.

Run: python benchmarks/bench_memory.py [--quick] [--max-gib 6] [--only NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

import _here  # noqa: F401  (this checkout, not an installed copy)

PAPER = ["--dp", "0.3,0", "--dp", "0.15,0.02"]
FIVE = ["0.3,0+0.15,0.02", "0.5,1e-5", "0.1,0", "1,1e-6+0.25,1e-3", "0.2,0.01"]
THREE = ["--dp", "log(2),1e-6", "--dp", "log(3)-log(2),1e-4", "--dp", "1/10,0.01"]
TWO = ["--mech", "log(2),1e-6:{a}", "--mech", "0.1,0.01+0.05,0.02:{b}"]


def cases(quick: bool) -> list[tuple[str, list[str]]]:
    """(name, CLI arguments after ``compose``) of every case measured."""
    out = []
    for k in [50, 100, 200] if quick else [50, 100, 200, 300, 500, 700]:
        out.append((f"paper k={k}", [*PAPER, "-k", str(k), "--method", "pld"]))
    for m in [1, 2] if quick else [1, 2, 4, 8]:
        args = []
        for i, spec in enumerate(FIVE):
            args += ["--mech", f"{spec}:{(i + 1) * m}"]
        out.append((f"5 kinds x{m}", [*args, "--method", "pld"]))
    for a, b in [(5, 20)] if quick else [(5, 20), (10, 40), (20, 80)]:
        out.append((f"2 gens {a}+{b}", [*(t.format(a=a, b=b) for t in TWO), "--method", "pld"]))
    for k in [10] if quick else [10, 20, 30, 40]:
        out.append((f"3 gens k={k}", [*THREE, "-k", str(k), "--method", "pld"]))
    for k in [12] if quick else [12, 24, 48]:  # one generator, sparse support {+-500, +-1}
        out.append(
            (f"sparse k={k}", ["--dp", "5,0", "--dp", "0.01,0.3", "-k", str(k), "--method", "pld"])
        )
    # one generator on the recurrence route with a sparse z-field (every fourth z-power)
    for k in [100] if quick else [300, 600, 1000]:
        args = ["--dp", "0.25,0.999", "--dp", "1,0.99", "-k", str(k), "--method", "pld"]
        out.append((f"sparse recurrence k={k}", args))
    return out


_CHILD = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, "
    "time.perf_counter() - t, r.returncode)\n"
)


def measure(args: list[str], timeout: float, closed: bool) -> tuple[int, float, int]:
    """(max RSS in bytes, seconds, exit status) of one CLI run in a fresh child."""
    cmd = [sys.executable, "-m", "dpcompose_exact.cli", "compose", *args]
    cmd += ["--format", "json", "--max-memory", "0"] + ([] if closed else ["--decimals-only"])
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, *cmd],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # so a timeout ends the CLI grandchild too
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return 0, timeout, -9
    rss, secs, rc = out.split()
    return int(rss), float(secs), int(rc)


def estimates(args: list[str], closed: bool) -> tuple[int, int]:
    """(calibrated estimate, old estimate) in bytes for the CLI arguments of a case."""
    from dpcompose_exact.engines.genfunc import common_domain, estimate_bytes
    from dpcompose_exact.engines.memory import estimate_rss
    from dpcompose_exact.regions.pld import canonical_pair
    from dpcompose_exact.regions.specs import kinds_from_options

    dp, mech, k = [], [], None
    it = iter(args)
    for a in it:
        if a == "--dp":
            dp.append(next(it))
        elif a == "--mech":
            mech.append(next(it))
        elif a == "-k":
            k = next(it)
        elif a == "--method":
            next(it)
    kinds = kinds_from_options(dp or None, k, mech or None, None)
    plds = common_domain([(canonical_pair(kd.region()), kd.count) for kd in kinds])
    return estimate_rss(plds, closed_forms=closed), estimate_bytes(plds)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--max-gib", type=float, default=6.0)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--only", default=None, help="substring of the case names to run")
    ap.add_argument("--json", action="store_true", help="also print one JSON line per case")
    ap.add_argument(
        "--closed-forms",
        action="store_true",
        help="print closed forms too (slow: decimal rendering of huge coefficients)",
    )
    opts = ap.parse_args()
    print(
        f"{'case':<16} {'estimate':>10} {'old est.':>10} {'max RSS':>10} "
        f"{'RSS/est':>8} {'RSS/old':>8} {'time s':>8}"
    )
    for name, args in cases(opts.quick):
        if opts.only and opts.only not in name:
            continue
        est, old = estimates(args, opts.closed_forms)
        if est > opts.max_gib * 2**30:
            print(f"{name:<16} {est / 2**20:>8.0f}Mi {old / 2**20:>8.0f}Mi  skipped (> limit)")
            continue
        t0 = time.perf_counter()
        rss, secs, rc = measure(args, opts.timeout, opts.closed_forms)
        _ = time.perf_counter() - t0
        if rc == -9:
            print(f"{name:<16} {est / 2**20:>8.0f}Mi {old / 2**20:>8.0f}Mi  timed out", flush=True)
            continue
        status = "" if rc == 0 else f"  exit {rc}"
        print(
            f"{name:<16} {est / 2**20:>8.0f}Mi {old / 2**20:>8.0f}Mi {rss / 2**20:>8.0f}Mi "
            f"{rss / est:>8.2f} {rss / old:>8.2f} {secs:>8.1f}{status}",
            flush=True,
        )
        if opts.json:
            print(json.dumps({"case": name, "est": est, "old": old, "rss": rss, "s": secs}))


if __name__ == "__main__":
    main()
