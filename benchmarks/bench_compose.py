"""Benchmark: the exact route on the paper case, eps = (0.3, 0.15), delta = (0, 0.02).

For each k, in a fresh process forked for that k (so that its peak memory is its own;
interpreter start-up and imports excluded), it prints CPU seconds (the machine may be
shared: CPU time, not wall time) of:

* ``power``: FLINT's sparse power of the one-step generating polynomial alone (the
  arithmetic floor the exact route is compared with), in the same process;
* ``region``: the exact region (:func:`dpcompose_exact.compose`, generating functions:
  the power recurrence, the suffix sums and the deltas);
* ``json``: what ``dpcompose compose -k K --format json`` prints, written row by row to
  ``/dev/null``: every row's 30-digit decimals, nearest and rounded up, and the closed
  forms only while they fit the JSON budget (past it they are not made at all);
* ``total/power``: (region + json) / power;
* ``JSON MB``: the size of that output;
* ``max RSS``: the peak resident set of the process of that k, after the region and the
  JSON (FLINT's buffers included; the power alone runs after them: its own peak, which
  holds the whole product, is printed in parentheses);
* ``estimate``: the calibrated estimate that ``--max-memory`` compares for this output
  (:func:`dpcompose_exact.engines.memory.estimate_rss`, closed forms written row by row),
  and ``ratio``: measured / estimate (below 1: the run stayed under its estimate).

With ``--always`` (k <= 300 by default: the full text grows like k^3) it also times
``--exact always`` (every closed and structured form inline).  A k whose estimate is over
``--max-gib`` is not run (its estimate is printed).

Run: python benchmarks/bench_compose.py [--quick] [--ks 100,200,300,500,1000] [--max-gib 6]
(``--quick``: k = 20 and 40, a few seconds.)
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import time
from typing import Any

import _here  # noqa: F401  (this checkout, not an installed copy)
import flint

import dpcompose_exact as dx
from dpcompose_exact.engines.genfunc import _common_denominator
from dpcompose_exact.engines.memory import estimate_rss
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.tradeoff import dp_region

PAIRS = [("0.3", "0"), ("0.15", "0.02")]


def flint_power(k: int) -> float:
    """CPU seconds of FLINT's sparse power of the one-step polynomial N(w, z)^k alone."""
    den, nums = _common_denominator(canonical_pair(dp_region(PAIRS)))
    ctx = flint.fmpz_mpoly_ctx.get(("w0", "z"), "lex")
    low = min(loss[0] for loss, _ in nums)
    terms = {}
    for loss, poly in nums:
        for j, c in enumerate(poly.coeffs()):
            if c:
                terms[(loss[0] - low, j)] = int(c)
    step = ctx.from_dict(terms)
    t0 = time.process_time()
    product = step**k
    dt = time.process_time() - t0
    del product
    return dt


def max_rss() -> int:
    """The process's peak resident set size so far, in bytes (Linux: KiB units)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _write(c: Any, forms: str) -> tuple[float, int]:
    """(CPU seconds, characters) of the JSON output written to /dev/null."""
    t0 = time.process_time()
    size = 0
    with open(os.devnull, "w") as out:
        for piece in c.iter_json(forms=forms):
            size += len(piece)
            out.write(piece)
    return time.process_time() - t0, size


def exact_run(k: int, always: bool) -> dict[str, float]:
    """The figures of one k (run in its own process)."""
    out: dict[str, float] = {}
    t0 = time.process_time()
    c = dx.compose(list(PAIRS), k, method="exact", max_memory=None)
    out["region"] = time.process_time() - t0
    out["json"], out["size"] = _write(c, "auto")
    out["rss"] = max_rss()  # the route's peak, before anything else runs
    if always:
        out["always"], out["always_size"] = _write(c, "always")
        out["always_rss"] = max_rss()
    del c
    out["power"] = flint_power(k)  # FLINT's whole power holds more than the route
    out["power_rss"] = max_rss()
    return out


def _child(conn: Any, k: int, always: bool) -> None:
    try:
        conn.send(exact_run(k, always))
    except BaseException as exc:  # report, do not hang the parent
        conn.send({"error": f"{type(exc).__name__}: {exc}"})
    finally:
        conn.close()


def run_forked(k: int, always: bool) -> dict[str, Any]:
    """:func:`exact_run` in a forked process (its own peak RSS)."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, k, always))
    proc.start()
    child.close()
    result = parent.recv()
    proc.join()
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="k = 20 and 40 only (seconds)")
    ap.add_argument("--ks", default="100,200,300,500,1000", help="comma-separated k values")
    ap.add_argument("--max-gib", type=float, default=6.0, help="skip k over this estimate")
    ap.add_argument("--always", action="store_true", help="also time --exact always JSON")
    ap.add_argument("--always-max-k", type=int, default=300, help="largest k for --always")
    args = ap.parse_args()
    ks = [20, 40] if args.quick else [int(x) for x in args.ks.split(",")]
    dx.compose(list(PAIRS), 5).to_json()  # warm up imports and caches (before forking)
    print(
        f"{'k':>5} {'power (s)':>10} {'region (s)':>11} {'json (s)':>9} {'total (s)':>10}"
        f" {'total/power':>12} {'JSON MB':>9} {'max RSS':>9} {'estimate':>9} {'ratio':>6}"
        + (f" {'always (s)':>11} {'always MB':>10} {'RSS':>10}" if args.always else "")
    )
    pld = canonical_pair(dp_region(PAIRS))
    for k in ks:
        est = estimate_rss([(pld, k)], closed_forms="streamed")
        if est > args.max_gib * 2**30:
            print(
                f"{k:>5} {'':>10} {'':>11} {'':>9} {'':>10} {'':>12} {'':>9} {'':>9}"
                f" {est / 2**30:>7.2f}Gi  not run (estimate over --max-gib)",
                flush=True,
            )
            continue
        r = run_forked(k, args.always and k <= args.always_max_k)
        if "error" in r:
            print(f"{k:>5} failed: {r['error']}", flush=True)
            continue
        total = r["region"] + r["json"]
        line = (
            f"{k:>5} {r['power']:>10.2f} {r['region']:>11.2f} {r['json']:>9.2f} {total:>10.2f}"
            f" {total / max(r['power'], 1e-9):>11.1f}x {r['size'] / 1e6:>9.2f}"
            f" {r['rss'] / 2**30:>7.2f}Gi {est / 2**30:>7.2f}Gi {r['rss'] / est:>6.2f}"
        )
        if "always" in r:
            line += f" {r['always']:>11.2f} {r['always_size'] / 1e6:>10.1f}"
            line += f" {r['always_rss'] / 2**30:>8.2f}Gi"
        line += f"  (with the power: {r['power_rss'] / 2**30:.2f}Gi)"
        print(line, flush=True)


if __name__ == "__main__":
    main()
