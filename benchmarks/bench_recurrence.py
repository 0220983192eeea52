"""Benchmark: the exact route's two ways to the k-th power, on wide one-generator supports.

The exact route (one generator) makes the composed numerators either by the power
recurrence (``genfunc._top_blocks``: ``span`` blocks held, about ``2 span`` products per
block) or by FLINT's sparse power of the whole generating polynomial
(``genfunc._power_by_loss``); :func:`dpcompose_exact.engines.genfunc.recurrence_is_faster`
picks one.  For three-constraint mechanisms ``eps = (p1, p2, p3) / p1`` (support span
``2 p1``) and several k, in the same process, it prints CPU seconds of
:func:`dpcompose_exact.compose` with each forced (the rule patched), their
ratio, which one the rule picks, and whether the two regions are equal (exactly, row by
row).  The machine may be shared: CPU time, not wall time.

Run: python benchmarks/bench_recurrence.py [--quick]
(``--quick``: span 24 and 90 at k = 2 and 5, a second.)
"""

from __future__ import annotations

import argparse
import time

import _here  # noqa: F401  (this checkout, not an installed copy)

import dpcompose_exact as dx
from dpcompose_exact.engines import genfunc

CASES = {(12, 7, 3): [2, 5, 10, 20, 40, 80], (45, 31, 12): [2, 5, 10, 20, 40],
         (100, 61, 17): [2, 5, 10, 20]}
QUICK_CASES = {(12, 7, 3): [2, 5], (45, 31, 12): [2, 5]}


def mechanism(p: tuple[int, int, int]) -> dx.Mechanism:
    """eps = p / p_1 with deltas (0, 1/1000, 1/50): every constraint active."""
    return dx.Mechanism(
        [(f"{p[0]}/{p[0]}", "0"), (f"{p[1]}/{p[0]}", "1/1000"), (f"{p[2]}/{p[0]}", "1/50")]
    )


def timed(mech: dx.Mechanism, k: int, recurrence: bool) -> tuple[float, dx.Composition]:
    """CPU seconds of ``dx.compose(mech, k)`` with the recurrence forced on or off."""
    forced = (lambda *_: True) if recurrence else (lambda *_: False)
    rule = genfunc.recurrence_is_faster
    genfunc.recurrence_is_faster = forced
    try:
        t = time.process_time()
        c = dx.compose(mech, k)
        return time.process_time() - t, c
    finally:
        genfunc.recurrence_is_faster = rule


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small cases, a second")
    args = parser.parse_args(argv)
    cases = QUICK_CASES if args.quick else CASES
    dx.compose(mechanism((12, 7, 3)), 2)  # imports and caches out of the first figure
    print(f"{'eps * p1':>14} {'span':>5} {'k':>3} {'sparse s':>9} {'recur. s':>9} "
          f"{'ratio':>6}  {'rule picks':<11} equal")
    for p, ks in cases.items():
        mech = mechanism(p)
        span = 2 * p[0]
        for k in ks:
            t_sparse, c_sparse = timed(mech, k, recurrence=False)
            t_rec, c_rec = timed(mech, k, recurrence=True)
            equal = c_sparse.region == c_rec.region
            picked = genfunc.recurrence_is_faster(span, k, lambda: 1.0)  # (dense: checked)
            pick = "recurrence" if picked else "sparse"
            print(f"{str(p):>14} {span:>5} {k:>3} {t_sparse:9.3f} {t_rec:9.3f} "
                  f"{t_sparse / max(t_rec, 1e-9):6.2f}  {pick:<11} {equal}", flush=True)
            if not equal:
                print("MISMATCH: the two routes give different regions")
                return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
