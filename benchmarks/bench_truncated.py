"""Benchmark: truncated Poisson sampling on the certified loss grid against dp_accounting's PLD.

For seeded DP-SGD settings (``n`` records, expected batch ``B = q n`` in {64, 256}, batches
cut to ``b = B``, ``1.1 B`` or ``1.25 B``, sigma in {0.8, 1, 1.5}, k in {100, 1000} steps),
the table prints the truncation probability ``t``, our CPU time for the certified enclosure
of eps(1e-5) of ``dx.truncated_subsampled_gaussian`` (a fresh grid; docs/theory.md, section
23) and its width, dp_accounting's CPU time for its ``TruncatedSubsampledGaussianDpEvent``
through ``PLDAccountant`` (default grid 1e-4; its own, looser, pair) and its number, whether
our upper end is at most its number, and the time ratio (ours / theirs).  A baseline of our
own in the same process: Poisson sampling of the same rate without the cut.  CPU time
(``time.process_time``).

Run: python benchmarks/bench_truncated.py [--quick]
"""

from __future__ import annotations

import argparse
import random
import time
import warnings
from fractions import Fraction

import _here  # noqa: F401  (this checkout, not an installed copy)


def _clear() -> None:
    from dpcompose_exact.engines import gridcells

    gridcells._cell_masses.cache_clear()


def _ours(m, k: int) -> tuple[float, float, float]:
    import dpcompose_exact as dx

    _clear()
    t0 = time.process_time()
    lo, hi = dx.compose(m, k).epsilon("1e-5").interval(12)
    return time.process_time() - t0, float(lo), float(hi)


def _theirs(m, k: int) -> tuple[float, float] | None:
    try:
        from dp_accounting import dp_event
        from dp_accounting.pld import PLDAccountant
    except ImportError:
        return None
    t0 = time.process_time()
    event = dp_event.TruncatedSubsampledGaussianDpEvent(
        m.dataset_size, float(m.q), m.batch_size, float(m.sigma)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eps = PLDAccountant().compose(event, k).get_epsilon(1e-5)
    return time.process_time() - t0, eps


def _cases(quick: bool) -> list[tuple[object, int]]:
    import dpcompose_exact as dx

    rng = random.Random(38)
    out = []
    for _ in range(1 if quick else 6):
        n = rng.choice([10_000, 60_000])
        big_b = rng.choice([64, 256])
        b = int(big_b * rng.choice([Fraction(1), Fraction(11, 10), Fraction(5, 4)]))
        sigma = rng.choice(["0.8", "1", "1.5"])
        k = 10 if quick else rng.choice([100, 1000])
        out.append((dx.truncated_subsampled_gaussian(sigma, n, Fraction(big_b, n), b), k))
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the table (``--quick``: one small case)."""
    import dpcompose_exact as dx

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small case only")
    args = parser.parse_args(argv)
    print("# truncated Poisson sampling, eps(1e-5) of k steps: certified grid vs dp_accounting")
    print(
        f"{'mechanism':<32} {'k':>4} {'t':>8} | {'ours s':>7} {'ours eps':>22} {'width':>8} | "
        f"{'pld s':>6} {'pld eps':>9} | below | ratio | {'Poisson s':>9} {'Poisson eps':>11}"
    )
    for m, k in _cases(args.quick):
        t, lo, hi = _ours(m, k)
        theirs = _theirs(m, k)
        trunc = float(m.parts[1][0].mid()) if m.truncates and m.q < 1 else 0.0
        base = dx.gaussian_noise(m.sigma).subsample(m.q)
        _clear()
        t0 = time.process_time()
        eb = float(dx.compose(base, k).epsilon("1e-5").interval(12)[1])
        tb = time.process_time() - t0
        head = f"{m.label[:32]:<32} {k:>4} {trunc:8.2e} | {t:7.2f} [{lo:.6f}, {hi:.6f}] " \
               f"{hi - lo:8.1e} | "
        if theirs is None:
            print(f"{head}{'-':>6} {'-':>9} | {'-':>5} | {'-':>5} | {tb:9.2f} {eb:11.6f}")
            continue
        ts, eps = theirs
        below = "yes" if hi <= eps * (1 + 1e-9) else "no"
        print(
            f"{head}{ts:6.2f} {eps:9.6f} | {below:>5} | {t / max(ts, 1e-9):5.2f} | "
            f"{tb:9.2f} {eb:11.6f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
