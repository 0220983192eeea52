"""Benchmark: a fold's precision -- doubles, long-double forward transforms, long doubles.

For seeded settings drawn from the practitioner's box where the eps(delta) chain refines
(Poisson-subsampled Gaussian noise, sigma log-uniform in [0.5, 4], q in [1e-5, 0.05], k in
[10^3, 10^5]), the forward upper measure of one use on the automatic grid is composed ``k``
times (:class:`~dpcompose_exact.engines.gridfold._Fold`) in doubles, with long-double
forward transforms (``mixed``: :func:`~dpcompose_exact.engines.gridfft._mixed_power`) and
in long doubles (``long``), in one process.  Per setting and precision: the CPU seconds,
the certified 2-norm bound ``err2`` of the output's error, and the measured error (the
2-norm distance to the long doubles' output on their common window, whose own error is at
most their ``err2``, printed on their row: a measured error near it is mostly theirs); then
the ratios to the doubles' time and bound, and how many times each bound exceeds the
measured error (docs/theory.md, section 15, "Long-double forward transforms").

Run (from the repository root): python benchmarks/bench_fold_precision.py [--seed 0] [-n 5]
[--quick]  (``--quick``: 2 settings with k at most 300, a smoke run)
"""

from __future__ import annotations

import argparse
import math
import random
import time

import _here  # noqa: F401  (this checkout, not an installed copy)


def _log_uniform(rng: random.Random, lo: float, hi: float) -> float:
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def draw(rng: random.Random, quick: bool) -> tuple[str, str, int]:
    """``(sigma, q, k)`` as decimal strings and a count (3 significant digits)."""
    sigma = f"{_log_uniform(rng, 0.5, 4.0):.3g}"
    q = f"{_log_uniform(rng, 1e-5, 0.05):.3g}"
    k = round(_log_uniform(rng, 30, 300) if quick else _log_uniform(rng, 1e3, 1e5))
    return sigma, q, k


def main(argv: list[str] | None = None) -> int:
    """Print the table and the summary line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0, help="the draws' seed (printed)")
    ap.add_argument("-n", type=int, default=5, help="settings drawn (default 5)")
    ap.add_argument("--quick", action="store_true", help="2 small settings (smoke run)")
    args = ap.parse_args(argv)
    import numpy as np

    import dpcompose_exact as dx
    from dpcompose_exact.engines.gridfold import _Fold
    from dpcompose_exact.engines.subsample_grid import NoiseGridComposition

    n = 2 if args.quick else args.n
    rng = random.Random(args.seed)
    warm = NoiseGridComposition([(dx.gaussian_noise("2").subsample("0.1"), 3)])
    for prec in ("long", "double", "mixed"):  # imports and first calls, untimed
        _Fold([(warm._cells[0][0]["fwd_up"], 3)], warm.h, long=prec == "long",
              mixed=prec == "mixed")
    print(f"# fold precisions, seed {args.seed}, {n} settings; CPU seconds; err2: certified "
          "2-norm bound of the output's error, meas: measured against the long doubles")
    print(f"{'setting':>30} {'nfft':>9} | {'prec':>6} {'s':>6} {'x dbl':>6} | "
          f"{'err2':>9} {'meas':>9} {'bound/meas':>10} {'err2 / dbl':>10}")
    gains, slack = [], {"double": [], "mixed": []}
    for _ in range(n):
        sigma, q, k = draw(rng, args.quick)
        sub = dx.gaussian_noise(sigma).subsample(q)
        comp = NoiseGridComposition([(sub, k)])
        measure = comp._cells[0][0]["fwd_up"]
        folds = {}
        for prec in ("long", "double", "mixed"):  # long first: the reference
            t = time.process_time()
            f = _Fold([(measure, k)], comp.h, long=prec == "long", mixed=prec == "mixed")
            folds[prec] = (time.process_time() - t, f)
        t_dbl, dbl = folds["double"]
        t_long, ref = folds["long"]
        label = f"gau({sigma})@{q}x{k}"
        for prec in ("double", "mixed", "long"):
            t, f = folds[prec]
            lo, hi = max(f.w_lo, ref.w_lo), min(f.w_hi, ref.w_hi)
            a = f.y[lo - f.w_lo : hi - f.w_lo + 1]
            b = ref.y[lo - ref.w_lo : hi - ref.w_lo + 1]
            meas = float(np.linalg.norm(a - b)) if prec != "long" else float("nan")
            over = f.err2 / meas if prec != "long" and meas > 0 else float("nan")
            if prec in slack and math.isfinite(over):
                slack[prec].append(over)
            print(f"{label:>30} {f.nfft:>9} | {prec:>6} {t:6.2f} {t / max(t_dbl, 1e-9):6.2f} | "
                  f"{f.err2:9.2e} {meas:9.2e} {over:10.1f} {f.err2 / dbl.err2:10.4f}")
            label = ""
        gains.append(dbl.err2 / folds["mixed"][1].err2)
    worst = min(gains)
    print(f"summary seed {args.seed}: mixed bound smaller than the doubles' by {worst:.0f}x "
          f"at least (median {sorted(gains)[len(gains) // 2]:.0f}x); bound over measured "
          f"error: doubles {max(slack['double'], default=float('nan')):.0f}x, mixed "
          f"{max(slack['mixed'], default=float('nan')):.0f}x at most")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
