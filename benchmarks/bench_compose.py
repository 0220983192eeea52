"""Benchmark: the exact route on the paper case, eps = (0.3, 0.15), delta = (0, 0.02).

For each k, in one process (interpreter start-up excluded), it prints:

* ``power``: FLINT's sparse power of the one-step generating polynomial alone (the
  arithmetic floor the issue compares against);
* ``region``: the exact region (:func:`dpcompose_exact.compose`, generating functions);
* ``json``: what ``dpcompose compose -k K --format json`` prints, written row by row to
  ``/dev/null`` (closed forms, structured forms and 30-digit decimals);
* ``max RSS``: the process's peak resident set so far (FLINT's buffers included; the k
  run in increasing order, so it is the peak of the largest k run);
* the calibrated estimate (:func:`dpcompose_exact.engines.memory.estimate_rss`) that
  ``--max-memory`` compares.

A k whose estimate is over ``--max-gib`` is not run (its estimate is printed): by default
k = 1000 (estimated 5.7 GiB for the region, and about 16 GB of JSON: the text grows like
k^3) runs only with ``--max-gib 6``.

Run: python benchmarks/bench_compose.py [--quick] [--ks 100,200,300,500,1000] [--max-gib 2]
(``--quick``: k = 20 and 40, a few seconds.)
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import flint

import dpcompose_exact as dx
from dpcompose_exact.engines.genfunc import _common_denominator
from dpcompose_exact.engines.memory import estimate_rss
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.tradeoff import dp_region

PAIRS = [("0.3", "0"), ("0.15", "0.02")]


def flint_power(k: int) -> float:
    """Seconds of FLINT's sparse power of the one-step polynomial N(w, z)^k alone."""
    den, nums = _common_denominator(canonical_pair(dp_region(PAIRS)))
    ctx = flint.fmpz_mpoly_ctx.get(("w0", "z"), "lex")
    low = min(loss[0] for loss, _ in nums)
    terms = {}
    for loss, poly in nums:
        for j, c in enumerate(poly.coeffs()):
            if c:
                terms[(loss[0] - low, j)] = int(c)
    step = ctx.from_dict(terms)
    t0 = time.perf_counter()
    product = step**k
    dt = time.perf_counter() - t0
    del product
    return dt


def max_rss() -> int:
    """The process's peak resident set size so far, in bytes (Linux: KiB units)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def exact_run(k: int) -> tuple[float, float, int, int]:
    """(region seconds, JSON seconds, JSON characters, peak RSS) of the exact route."""
    t0 = time.perf_counter()
    c = dx.compose(list(PAIRS), k, method="exact", max_memory=None)
    t1 = time.perf_counter()
    size = 0
    with open(os.devnull, "w") as out:  # what `dpcompose compose --format json` writes
        for piece in c.iter_json(forms="always"):
            size += len(piece)
            out.write(piece)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, size, max_rss()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="k = 20 and 40 only (seconds)")
    ap.add_argument("--ks", default="100,200,300,500,1000", help="comma-separated k values")
    ap.add_argument("--max-gib", type=float, default=2.0, help="skip k over this estimate")
    args = ap.parse_args()
    ks = [20, 40] if args.quick else [int(x) for x in args.ks.split(",")]
    dx.compose(list(PAIRS), 5)  # warm up imports and caches
    print(
        f"{'k':>5} {'power (s)':>10} {'region (s)':>11} {'json (s)':>9} {'total (s)':>10}"
        f" {'total/power':>12} {'JSON MB':>9} {'max RSS':>9} {'estimate':>9}"
    )
    pld = canonical_pair(dp_region(PAIRS))
    for k in ks:
        est = estimate_rss([(pld, k)], closed_forms=True)
        if est > args.max_gib * 2**30:
            print(
                f"{k:>5} {'':>10} {'':>11} {'':>9} {'':>10} {'':>12} {'':>9} {'':>9}"
                f" {est / 2**30:>7.1f}Gi  not run (estimate over --max-gib)",
                flush=True,
            )
            continue
        power = flint_power(k)
        t_region, t_json, size, rss = exact_run(k)
        total = t_region + t_json
        print(
            f"{k:>5} {power:>10.2f} {t_region:>11.2f} {t_json:>9.2f} {total:>10.2f}"
            f" {total / power:>11.1f}x {size / 1e6:>9.1f} {rss / 2**30:>7.2f}Gi"
            f" {est / 2**30:>7.2f}Gi",
            flush=True,
        )


if __name__ == "__main__":
    main()
