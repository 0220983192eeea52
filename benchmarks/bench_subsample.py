"""Benchmark: exact Poisson subsampling against dp_accounting's PLD, same process.

For Poisson-subsampled discrete Laplace (``e^a = 2``, sensitivity 1, add/remove) at rate
``q`` used ``k`` times, the table prints our time (exact composition of both directions and
the two queries), the exact delta(1) and eps(1e-6), dp_accounting's time
(``from_discrete_laplace_mechanism(..., sampling_prob=q)`` self-composed, pessimistic, grid
1e-4) and its numbers, and the time ratio.  Randomized response (ratio 3) subsampled the
same way has no dp_accounting counterpart; its times are printed alone.

Poisson-subsampled Gaussian and Laplace noise (the loss grid,
``dpcompose_exact.engines.subsample_grid``, grid 1e-4): for each setting our CPU time for
certified enclosures of eps(1e-5) and delta(1) against ``PLDAccountant`` (grid 1e-4,
pessimistic) in the same process, the time ratio, both enclosures with their widths, and
dp_accounting's pessimistic and optimistic values with their gap.  Then tiny deltas: our
enclosures and their relative widths.

Run: python benchmarks/bench_subsample.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import time
from fractions import Fraction

import _here  # noqa: F401  (this checkout, not an installed copy)


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
        _noise_rows(args.quick)
    print("# Poisson-subsampled randomized response, ratio 3 (exact; no dp_accounting PLD)")
    for q, k in [(0.1, 10)] if args.quick else [(0.1, 10), (0.01, 100), (0.01, 1000)]:
        t0 = time.perf_counter()
        comp = dx.compose(dx.Mechanism.dp("log(3)").subsample(str(q)), k)
        text = comp.epsilon("1e-6").decimal(12)
        print(f"{q:>5} {k:>5} | {time.perf_counter() - t0:7.2f} s  eps(1e-6) = {text}")
    return 0


def _noise_rows(quick: bool) -> None:
    """Subsampled Gaussian and Laplace: certified eps(1e-5) and delta(1) against PLD.

    Per setting: our CPU time for a fresh mechanism (one-use grid, compositions, both
    queries), dp_accounting's (``PLDAccountant(value_discretization_interval=1e-4)``,
    pessimistic, compose and both queries), their ratio; our enclosures and widths; PLD's
    pessimistic and optimistic values (``from_gaussian_mechanism`` /
    ``from_laplace_mechanism`` with ``pessimistic_estimate=False``, untimed) and their gap.
    Both libraries are warmed up (imports, first calls) before anything is timed.
    """
    from dp_accounting import dp_event as d
    from dp_accounting.pld import privacy_loss_distribution as pldm
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

    import dpcompose_exact as dx
    from dpcompose_exact.engines import subsample_grid

    def ours(kind: str, q: str, scale: str, k: int) -> tuple[float, tuple, tuple]:
        subsample_grid._cell_masses.cache_clear()  # a fresh mechanism: the grid is rebuilt
        noise = dx.gaussian_noise(scale) if kind == "gaussian" else dx.laplace_noise(scale)
        t0 = time.process_time()
        comp = dx.compose(noise.subsample(q), k)
        e = comp.epsilon("1e-5")
        dl = comp.delta("1")
        took = time.process_time() - t0
        return took, tuple(float(x) for x in e.interval(8)), tuple(
            float(x) for x in dl.interval(8)
        )

    def theirs(kind: str, q: float, scale: float, k: int) -> tuple[float, float, float]:
        base = d.GaussianDpEvent(scale) if kind == "gaussian" else d.LaplaceDpEvent(scale)
        event = d.SelfComposedDpEvent(d.PoissonSampledDpEvent(q, base), k)
        t0 = time.process_time()
        acc = PLDAccountant(value_discretization_interval=1e-4).compose(event)
        e, dl = acc.get_epsilon(1e-5), acc.get_delta(1.0)
        return time.process_time() - t0, e, dl

    def optimistic(kind: str, q: float, scale: float, k: int) -> tuple[float, float]:
        make = (
            pldm.from_gaussian_mechanism if kind == "gaussian" else pldm.from_laplace_mechanism
        )
        pld = make(
            scale, 1, pessimistic_estimate=False, value_discretization_interval=1e-4,
            sampling_prob=q, use_connect_dots=False,
        ).self_compose(k)
        return pld.get_epsilon_for_delta(1e-5), pld.get_delta_for_epsilon(1.0)

    ours("gaussian", "1/10", "2", 2)  # warm-up: imports and first calls, both libraries
    theirs("gaussian", 0.1, 2.0, 2)
    settings = (
        [("gaussian", "1/10", "2", 10), ("laplace", "1/10", "2", 10)]
        if quick
        else [
            ("gaussian", "1/100", "1", 1000),
            ("gaussian", "1/100", "1", 10000),
            ("gaussian", "1/1000", "4/5", 100000),
            ("gaussian", "1/10", "2", 1000),
            ("laplace", "1/100", "1", 1000),
            ("laplace", "1/10", "2", 1000),
        ]
    )
    print(
        "# Poisson-subsampled Gaussian/Laplace (sensitivity 1, add/remove), grid 1e-4: "
        "CPU times; our certified [lo, hi] and width; PLD pessimistic, optimistic, their gap"
    )
    print(
        f"{'noise':>8} {'q':>6} {'scale':>5} {'k':>6} | {'ours s':>7} {'PLD s':>6} "
        f"{'ratio':>6} | {'eps lo':>11} {'eps hi':>11} {'width':>8} | {'PLD pess':>11} "
        f"{'PLD opt':>11} {'gap':>8} | {'delta lo':>11} {'delta hi':>11} {'width':>8} | "
        f"{'PLD pess':>11} {'PLD opt':>11} {'gap':>8}"
    )
    for kind, q, scale, k in settings:
        qf, sf = float(Fraction(q)), float(Fraction(scale))
        t_ours, (e_lo, e_hi), (d_lo, d_hi) = ours(kind, q, scale, k)
        t_pld, e_p, d_p = theirs(kind, qf, sf, k)
        e_o, d_o = optimistic(kind, qf, sf, k)
        print(
            f"{kind:>8} {q:>6} {scale:>5} {k:>6} | {t_ours:7.2f} {t_pld:6.2f} "
            f"{t_ours / t_pld:5.2f}x | {e_lo:11.6g} {e_hi:11.6g} {e_hi - e_lo:8.2e} | "
            f"{e_p:11.6g} {e_o:11.6g} {e_p - e_o:8.2e} | {d_lo:11.6g} {d_hi:11.6g} "
            f"{d_hi - d_lo:8.2e} | {d_p:11.6g} {d_o:11.6g} {d_p - d_o:8.2e}"
        )
    _tiny_rows(quick)


def _tiny_rows(quick: bool) -> None:
    """Tiny deltas: our certified enclosure and its relative width (size-independent)."""
    import dpcompose_exact as dx

    print("# tiny deltas of the subsampled Gaussian: certified [lo, hi], relative width")
    cases = [("1/1000", 1, "1"), ("1/1000", 1, "30")] if quick else [
        ("1/1000", 1, "1"), ("1/1000", 1, "30"), ("1/1000", 10, "2"), ("1/100", 100, "8"),
        ("1/100", 1000, "12"),
    ]
    for q, k, eps in cases:
        t0 = time.process_time()
        v = dx.compose(dx.gaussian_noise("1").subsample(q), k).delta(eps)
        took = time.process_time() - t0
        lo, hi = (float(x) for x in v.interval(8))
        rel = (hi - lo) / hi if hi > 0 else math.inf
        print(
            f"tiny q={q} k={k} delta({eps}): [{lo:.6g}, {hi:.6g}] rel. width {rel:.2e} "
            f"({took:.2f} s)"
        )


if __name__ == "__main__":
    raise SystemExit(main())
