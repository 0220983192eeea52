"""Benchmark: mixtures of Gaussians on the certified loss grid against dp_accounting's PLD.

For seeded settings (sensitivity 0 with probability ``1 - q``, ``q`` in {1/10, 1/100},
else one of three in [1/2, 2]; sigma in {1, 2}; k in {100, 1000} uses), the table prints
our CPU time for the certified enclosure of eps(1e-5) of ``dx.mixture_of_gaussians`` (a
fresh grid; docs/theory.md, section 23), its width, dp_accounting's CPU time for its
pessimistic PLD (``from_mixture_gaussian_mechanism`` at its default grid 1e-4,
self-composed) and its number, whether our lower end is at most that upper bound, and the
time ratio (ours / theirs).  A baseline of our own in the same process: the subsampled
Gaussian of the same rate and the largest sensitivity (the mixture {0, c} on the
closed-form path; it dominates the mixture).  CPU time (``time.process_time``).

Run: python benchmarks/bench_mixture.py [--quick]
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
        from dp_accounting.pld import privacy_loss_distribution as pld
    except ImportError:
        return None
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = pld.from_mixture_gaussian_mechanism(
            float(m.sigma), [float(c) for c in m.sensitivities], [float(p) for p in m.probs]
        )
        eps = one.self_compose(k).get_epsilon_for_delta(1e-5)
    return time.process_time() - t0, eps


def _cases(quick: bool) -> list[tuple[object, int]]:
    import dpcompose_exact as dx

    rng = random.Random(38)
    out = []
    for _ in range(1 if quick else 4):
        # as the matrix mechanism's and the samplers' mixtures: sensitivity 0 unless the
        # record is drawn (rate q), then one of three sensitivities in [1/2, 2]
        q = Fraction(1, rng.choice([10, 100]))
        cs = sorted({Fraction(rng.randint(1, 4), 2) for _ in range(3)})
        raw = [rng.randint(1, 20) for _ in cs]
        ps = [1 - q] + [q * Fraction(r, sum(raw)) for r in raw]
        sigma = Fraction(rng.choice([1, 2]))
        k = 10 if quick else rng.choice([100, 1000])
        out.append((dx.mixture_of_gaussians(sigma, [Fraction(0), *cs], ps), k))
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the table (``--quick``: one small case)."""
    import dpcompose_exact as dx

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small case only")
    args = parser.parse_args(argv)
    print("# mixtures of Gaussians, eps(1e-5) of k uses: certified grid vs dp_accounting PLD")
    print(
        f"{'mixture':<44} {'k':>4} | {'ours s':>7} {'ours eps':>22} {'width':>8} | "
        f"{'pld s':>6} {'pld eps':>9} | inside | ratio | {'{0,c} s':>7}"
    )
    for m, k in _cases(args.quick):
        t, lo, hi = _ours(m, k)
        theirs = _theirs(m, k)
        base = dx.gaussian_noise(m.sigma, m.c_max).subsample(1 - m.p0)
        _clear()
        t0 = time.process_time()
        dx.compose(base, k).epsilon("1e-5")
        tb = time.process_time() - t0
        name = m.label[:44]
        if theirs is None:
            print(f"{name:<44} {k:>4} | {t:7.2f} [{lo:.6f}, {hi:.6f}] {hi - lo:8.1e} | "
                  f"{'-':>6} {'-':>9} | {'-':>6} | {'-':>5} | {tb:7.2f}")
            continue
        ts, eps = theirs
        inside = "yes" if lo <= eps * (1 + 1e-12) else "NO"
        print(
            f"{name:<44} {k:>4} | {t:7.2f} [{lo:.6f}, {hi:.6f}] {hi - lo:8.1e} | "
            f"{ts:6.2f} {eps:9.6f} | {inside:>6} | {t / max(ts, 1e-9):5.1f} | {tb:7.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
