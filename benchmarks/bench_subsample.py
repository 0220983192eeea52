"""Benchmark: exact Poisson subsampling against dp_accounting's PLD, same process.

For Poisson-subsampled discrete Laplace (``e^a = 2``, sensitivity 1, add/remove) at rate
``q`` used ``k`` times, the table prints our time (exact composition of both directions and
the two queries), the exact delta(1) and eps(1e-6), dp_accounting's time
(``from_discrete_laplace_mechanism(..., sampling_prob=q)`` self-composed, pessimistic, grid
1e-4) and its numbers, and the time ratio.  Randomized response (ratio 3) subsampled the
same way has no dp_accounting counterpart; its times are printed alone.

Poisson-subsampled Gaussian noise (``PoissonSampledDpEvent(q, GaussianDpEvent(sigma))``,
``k`` uses): our certified enclosure of eps(1e-5) from the loss grid
(``dpcompose_exact.engines.subsample_grid``, grid 1e-4) and its width, against
``PLDAccountant`` (default grid 1e-4, connect-the-dots), time and value.

Run: python benchmarks/bench_subsample.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import time


def main(argv: list[str] | None = None) -> int:
    """Print the table (``--quick``: two small cases)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two small cases only")
    args = parser.parse_args(argv)
    import dpcompose_exact as dx

    try:
        from dp_accounting import dp_event as d
        from dp_accounting.pld import privacy_loss_distribution as pldm

        from dpcompose_exact.integrations.events import event_composition
    except ImportError:
        d = None
        print("# dp_accounting is not installed: the comparison is skipped")

    cases = (
        [(0.01, 100), (0.1, 20)]
        if args.quick
        else [(0.01, 100), (0.01, 1000), (0.1, 20), (0.1, 200)]
    )
    head = (
        f"{'q':>5} {'k':>5} | {'ours s':>7} {'delta(1)':>22} {'eps(1e-6)':>18} | "
        f"{'PLD s':>6} {'delta(1)':>10} {'eps(1e-6)':>9} | ratio"
    )
    if d is not None:
        print("# Poisson-subsampled discrete Laplace, e^a = 2, sensitivity 1 (ADD_OR_REMOVE_ONE)")
        print(head)
    for q, k in cases if d is not None else []:
        event = d.SelfComposedDpEvent(
            d.PoissonSampledDpEvent(q, d.DiscreteLaplaceDpEvent("log(2)", 1)), k
        )
        t0 = time.perf_counter()
        comp = event_composition(event)
        ours_d, ours_e = comp.delta("1").decimal(15), comp.epsilon("1e-6").decimal(12)
        ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        pld = pldm.from_discrete_laplace_mechanism(
            math.log(2), 1, value_discretization_interval=1e-4, sampling_prob=q
        ).self_compose(k)
        pld_d, pld_e = pld.get_delta_for_epsilon(1.0), pld.get_epsilon_for_delta(1e-6)
        theirs = time.perf_counter() - t0
        print(
            f"{q:>5} {k:>5} | {ours:7.2f} {ours_d:>22} {ours_e:>18} | {theirs:6.2f} "
            f"{pld_d:10.3g} {pld_e:9.5f} | {ours / theirs:5.1f}x"
        )
    if d is not None:
        _gaussian_rows(d, args.quick)
    print("# Poisson-subsampled randomized response, ratio 3 (exact; no dp_accounting PLD)")
    for q, k in [(0.1, 10)] if args.quick else [(0.1, 10), (0.01, 100), (0.01, 1000)]:
        t0 = time.perf_counter()
        comp = dx.compose(dx.Mechanism.dp("log(3)").subsample(str(q)), k)
        text = comp.epsilon("1e-6").decimal(12)
        print(f"{q:>5} {k:>5} | {time.perf_counter() - t0:7.2f} s  eps(1e-6) = {text}")
    return 0


def _gaussian_rows(d: object, quick: bool) -> None:
    """Subsampled Gaussian: our enclosure of eps(1e-5) and its width against PLDAccountant."""
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

    from dpcompose_exact.integrations.dp_accounting import ExactAccountant

    print("# Poisson-subsampled Gaussian, eps(1e-5): ours (certified [lo, hi]) vs PLDAccountant")
    print(
        f"{'q':>5} {'sigma':>5} {'k':>6} | {'ours s':>7} {'lo':>10} {'hi':>10} {'width':>9} | "
        f"{'PLD s':>6} {'PLD eps':>10} | ratio"
    )
    rows = [(0.1, 2.0, 10)] if quick else [(0.01, 1.0, 1000), (0.01, 1.0, 10000), (0.1, 2.0, 100)]
    for q, sigma, k in rows:
        event = d.SelfComposedDpEvent(d.PoissonSampledDpEvent(q, d.GaussianDpEvent(sigma)), k)  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        acc = ExactAccountant().compose(event)
        lo, hi = (float(x) for x in acc.epsilon_value(1e-5).interval(10))
        ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        pld = PLDAccountant().compose(event)
        theirs_eps = pld.get_epsilon(1e-5)
        theirs = time.perf_counter() - t0
        print(
            f"{q:>5} {sigma:>5} {k:>6} | {ours:7.2f} {lo:10.6f} {hi:10.6f} {hi - lo:9.2e} | "
            f"{theirs:6.2f} {theirs_eps:10.6f} | {ours / theirs:5.1f}x"
        )


if __name__ == "__main__":
    raise SystemExit(main())
