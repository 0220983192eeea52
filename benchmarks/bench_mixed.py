"""Benchmark: finite pairs next to noise (docs/theory.md, section 19), same process.

Each row composes a finite part with noise through ``dx.compose`` and prints the CPU
seconds of delta(1) and eps(1e-5) together, the certified enclosure of eps(1e-5) and its
relative width; the baseline is dp_accounting's PLD of the same list (pessimistic, grid
1e-4; one PLD per direction for the asymmetric subsampled pair, the larger eps), its time
and eps(1e-5), and the time ratio.

* Laplace noise (b = 1) next to the mechanism (0.3, 0) + (0.15, 0.02): the Laplace grid
  summed over the finite part's loss values;
* Gaussian noise (sigma = 2) next to log(3)-DP subsampled at 1/10: both directions of the
  subsampled pair, with the Gaussian closed form.

Run: python benchmarks/bench_mixed.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import time

import _here  # noqa: F401  (this checkout, not an installed copy)


def _pld_pair(upper: dict, lower: dict, k: int):
    from dp_accounting.pld import privacy_loss_distribution as pldm

    return pldm.from_two_probability_mass_functions(
        {x: math.log(v) for x, v in lower.items() if v},
        {x: math.log(v) for x, v in upper.items() if v},
        value_discretization_interval=1e-4,
    ).self_compose(k)


def main(argv: list[str] | None = None) -> int:
    """Print the table (``--quick``: small counts)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small counts only")
    args = parser.parse_args(argv)
    import dpcompose_exact as dx

    try:
        from dp_accounting.pld import privacy_loss_distribution as pldm
    except ImportError:
        pldm = None
        print("# dp_accounting is not installed: the comparison is skipped")
    paper = dx.Mechanism([("3/10", "0"), ("3/20", "1/50")])
    # the paper pair's letters (docs/theory.md, section 1), for dp_accounting
    z1, z2, d2 = math.exp(0.3), math.exp(0.15), 0.02
    oma = d2 * (1 + z1) / (z1 - z2)
    p0 = {
        0: oma * z1 / (z1 + 1),
        1: (1 - oma) * z2 / (z2 + 1),
        2: (1 - oma) / (z2 + 1),
        3: oma / (z1 + 1),
    }
    p1 = {x: p0[3 - x] for x in p0}
    a, b = {0: 0.3, 1: 0.7}, {0: 0.25, 1: 0.75}  # log(3)-DP subsampled at 1/10
    counts = [(5, 10)] if args.quick else [(10, 50), (20, 100)]
    print(
        f"{'case':<34} | {'ours s':>7} {'eps(1e-5) enclosure':>36} {'rel width':>9} | "
        f"{'PLD s':>6} {'eps(1e-5)':>9} | ratio"
    )
    for kn, kf in counts:
        rows = [
            (
                f"Laplace(1) x{kn} + paper x{kf}",
                [(dx.laplace_noise("1"), kn), (paper, kf)],
                lambda kn=kn, kf=kf: [
                    _pld_pair(p0, p1, kf).compose(
                        pldm.from_laplace_mechanism(
                            1.0, value_discretization_interval=1e-4
                        ).self_compose(kn)
                    )
                ],
            ),
            (
                f"Gauss(2) x{kn} + log3@1/10 x{kf}",
                [(dx.gaussian_noise("2"), kn), (dx.Mechanism.dp("log(3)").subsample("1/10"), kf)],
                lambda kn=kn, kf=kf: [  # one PLD per direction (each pair is asymmetric)
                    _pld_pair(up, low, kf).compose(
                        pldm.from_gaussian_mechanism(
                            2.0, value_discretization_interval=1e-4
                        ).self_compose(kn)
                    )
                    for up, low in ((a, b), (b, a))
                ],
            ),
        ]
        for name, items, pld in rows:
            t0 = time.process_time()
            c = dx.compose(items)
            c.delta("1").interval(12)
            lo, hi = c.epsilon("1e-5").interval(14)
            ours = time.process_time() - t0
            width = (float(hi) - float(lo)) / float(hi)
            tail = "|"
            if pldm is not None and pld is not None:
                t0 = time.process_time()
                comps = pld()
                max(comp.get_delta_for_epsilon(1.0) for comp in comps)
                pe = max(comp.get_epsilon_for_delta(1e-5) for comp in comps)
                theirs = time.process_time() - t0
                tail = f"| {theirs:6.2f} {pe:9.5f} | {ours / theirs:5.1f}x"
            else:
                tail = f"| {'-':>6} {'-':>9} | -"
            print(f"{name:<34} | {ours:7.2f} [{lo}, {hi}] {width:9.1e} {tail}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
