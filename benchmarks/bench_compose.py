"""Benchmark: the exact region of eps = (0.3, 0.15), delta = (0, 0.02) at k = 100 and 200.

Measures, in one process (interpreter start-up excluded):
* exact: the exact region by the generating-function route plus the certified 30-digit
  decimals of every (eps, delta) -- what `dpcompose compose --format json --decimals-only`
  prints -- and, separately, the closed forms;
* naive: an enumeration of the k-fold multinomial (a, b, c, d) with mpmath at 100 digits
  (Theorem 3's sum evaluated numerically), the baseline the issue names.

Run: python benchmarks/bench_compose.py [--quick]   (--quick skips the naive run at k = 200)
"""

from __future__ import annotations

import argparse
import time
from math import comb

import mpmath

from dpcompose_exact import compose
from dpcompose_exact.presentation.render import region_rows, to_json

PAIRS = [("0.3", "0"), ("0.15", "0.02")]


def exact_run(k: int) -> tuple[float, float, int]:
    t0 = time.perf_counter()
    region, _ = compose(PAIRS, k)
    text = to_json({"k": k, "method": "pld", "region": region_rows(region, 30, exact=False)})
    t1 = time.perf_counter()
    closed = to_json({"region": region_rows(region, 30, exact=True)})
    t2 = time.perf_counter()
    assert len(text) > 0
    return t1 - t0, t2 - t1, len(closed)


def naive_run(k: int, dps: int = 100) -> float:
    """Enumerate a+b+c+d = k at `dps` digits, group by loss (x, y), suffix sums."""
    t0 = time.perf_counter()
    with mpmath.workdps(dps):
        e1, e2 = mpmath.mpf(3) / 10, mpmath.mpf(3) / 20
        z1, z2 = mpmath.exp(e1), mpmath.exp(e2)
        d1, d2 = mpmath.mpf(0), mpmath.mpf(2) / 100
        oma = (d2 - d1) * (1 + z1) / ((1 - d1) * (z1 - z2))
        p, q = oma / (1 + z1), (1 - oma) / (1 + z2)
        p0: dict[int, mpmath.mpf] = {}
        p1: dict[int, mpmath.mpf] = {}
        for a in range(k + 1):
            for b in range(k + 1 - a):
                for c in range(k + 1 - a - b):
                    d = k - a - b - c
                    w = comb(k, a) * comb(k - a, b) * comb(k - a - b, c)
                    base = w * p ** (a + d) * q ** (b + c)
                    loss = 2 * (a - d) + (b - c)  # in units of 0.15
                    p0[loss] = p0.get(loss, 0) + base * z1**a * z2**b
                    p1[loss] = p1.get(loss, 0) + base * z1**d * z2**c
        s0 = s1 = mpmath.mpf(0)
        out = []
        for loss in sorted(p0, reverse=True):
            if loss < 0:
                break
            out.append((loss, s0 - mpmath.exp(loss * e2) * s1))
            s0, s1 = s0 + p0[loss], s1 + p1[loss]
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="skip the naive baseline at k = 200")
    args = ap.parse_args()
    compose(PAIRS, 5)  # warm up imports and caches
    print(
        f"{'k':>5} {'exact+decimals (s)':>19} {'closed forms (s)':>17} {'closed-form text':>17}"
        f" {'naive 100-digit (s)':>20} {'ratio':>7}"
    )
    for k, target in ((100, 1.0), (200, 3.0)):
        t_exact, t_closed, size = exact_run(k)
        if args.quick and k == 200:
            naive = float("nan")
        else:
            naive = naive_run(k)
        print(
            f"{k:>5} {t_exact:>19.3f} {t_closed:>17.3f} {size / 1e6:>15.1f}MB"
            f" {naive:>20.2f} {naive / t_exact:>6.0f}x   (target {target} s)"
        )


if __name__ == "__main__":
    main()
