"""Benchmark: certified (ball arithmetic) region for large k, 30 digits.

eps = (0.3, 0.15), delta = (0, 0.02).  Measures compose_certified plus the 30-digit
decimals of every (eps, delta) of the region, against a naive baseline run in the same
process: the k-fold loss distribution by repeated dense convolution in mpmath at 80 digits
(O(k * width) operations), followed by the same suffix sums.  The last column is the CPU
time of the rows as ``dpcompose compose -k K --format csv --decimals-only`` makes them
(both decimals and their certified roundings up: k = 10^5 took 448 s when each
rounding read a 20000-digit rational end of its ball, and must stay within seconds).

Run: python benchmarks/bench_certified.py [--k 1000 10000 100000] [--naive-k 1000] [--quick]
(--quick: k = 200 only, a smoke run)
"""

from __future__ import annotations

import argparse
import time

import _here  # noqa: F401  (this checkout, not an installed copy)
import mpmath

from dpcompose_exact.engines.certified import compose_certified
from dpcompose_exact.engines.results import CertifiedResult
from dpcompose_exact.presentation.rows import region_rows
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.tradeoff import dp_region

PAIRS = [("0.3", "0"), ("0.15", "0.02")]


def certified_run(k: int) -> tuple[float, int, float]:
    """Seconds of the region and its decimals, its precision, CPU seconds of the rows."""
    pld = canonical_pair(dp_region(PAIRS))
    t0 = time.perf_counter()
    region = compose_certified([(pld, k)], digits=30)
    decimals = [region.delta_decimal(i, 30) for i in range(len(region.losses))]
    assert len(decimals) == len(region.losses)
    seconds = time.perf_counter() - t0
    c0 = time.process_time()
    rows = sum(1 for _ in region_rows(CertifiedResult(region), 30, False, rounding="up"))
    assert rows == len(region.losses)
    return seconds, region.prec, time.process_time() - c0


def naive_run(k: int, dps: int = 80) -> float:
    t0 = time.perf_counter()
    with mpmath.workdps(dps):
        z1, z2 = mpmath.exp(mpmath.mpf(3) / 10), mpmath.exp(mpmath.mpf(3) / 20)
        d2 = mpmath.mpf(2) / 100
        l1 = d2 / (z1 - z2)  # edge lengths of the canonical pair (docs/theory.md, section 1)
        l2 = (1 - d2) / (1 + z2) - l1
        step = {-2: l1, -1: l2, 1: z2 * l2, 2: z1 * l1}
        dist = {0: mpmath.mpf(1)}
        for _ in range(k):
            new: dict[int, mpmath.mpf] = {}
            for n, p in dist.items():
                for s, q in step.items():
                    new[n + s] = new.get(n + s, 0) + p * q
            dist = new
        s0 = s1 = mpmath.mpf(0)
        e_g = mpmath.exp(mpmath.mpf(3) / 20)
        for n in range(2 * k, -1, -1):
            _ = s0 - e_g**n * s1
            s0 += dist.get(n, 0)
            s1 += dist.get(-n, 0)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, nargs="*", default=[1000, 10000, 100000])
    ap.add_argument("--naive-k", type=int, nargs="*", default=[1000])
    ap.add_argument("--quick", action="store_true", help="k = 200 only (a smoke run)")
    args = ap.parse_args()
    if args.quick:
        args.k, args.naive_k = [200], [200]
    compose_certified([(canonical_pair(dp_region(PAIRS)), 5)])
    naive = {k: naive_run(k) for k in args.naive_k}
    print(
        f"{'k':>7} {'certified+decimals (s)':>23} {'prec (bits)':>12} "
        f"{'naive 80-digit (s)':>19} {'rows rounded up (CPU s)':>24}"
    )
    for k in args.k:
        t, prec, rows = certified_run(k)
        nv = f"{naive[k]:.1f} ({naive[k] / t:.0f}x)" if k in naive else "-"
        print(f"{k:>7} {t:>23.3g} {prec:>12} {nv:>19} {rows:>24.2f}", flush=True)


if __name__ == "__main__":
    main()
