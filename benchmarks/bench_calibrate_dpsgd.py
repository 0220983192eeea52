"""Benchmark: certified DP-SGD calibration against dp_accounting's ``calibrate_dp_mechanism``.

For each DP-SGD setting (Poisson rate ``q``, ``k`` steps, target ``(eps, delta)``) it
prints, in one process:

* ours: the smallest noise multiplier ``sigma`` on the grid of about sigma/1000 whose
  certified ``eps(delta)`` is at most the target, the certified eps there and one grid
  point below (above the target), and the CPU seconds;
* dp_accounting's ``calibrate_dp_mechanism`` on its ``PLDAccountant`` (pessimistic,
  default grid 1e-4) and its ``RdpAccountant``, each with ``tol = 1e-4``: the sigma it
  returns, our certified eps of that sigma, and the verdict: ``OVERSHOOT`` when its sigma
  does not meet the target (certified eps above it), ``ok`` when it does, and the noise it
  leaves on the table (its sigma over the smallest grid sigma that meets the target,
  minus 1) -- RDP's loose conversion shows up there; for PLD also its CPU seconds and our
  time over it (``x``, same process).

The settings include the deltas DP-SGD runs publish (well below 1/n: 1e-7 and 1e-10).  The
summary lines count overshoots and the median noise left on the table per accountant, and
give the worst and median ratio of our CPU time to PLD's calibration.

Run (from the repository root): PYTHONPATH=. python benchmarks/bench_calibrate_dpsgd.py [--quick]
(--quick: one setting, q = 1 and k = 10, a smoke run)
"""

from __future__ import annotations

import argparse
import statistics
import time
from fractions import Fraction

import _here  # noqa: F401  (this checkout, not an installed copy)

SETTINGS = [
    ("0.01", 1000, ("2", "1e-5")),
    ("0.01", 1000, ("8", "1e-5")),
    ("0.1", 100, ("1", "1e-5")),
    ("0.001", 10000, ("1", "1e-6")),
    ("0.01", 1000, ("2", "1e-7")),
    ("0.001", 10000, ("1", "1e-7")),
    ("0.01", 1000, ("4", "1e-10")),
    ("0.001", 10000, ("2", "1e-10")),
]
QUICK = [("1", 10, ("2", "1e-5"))]  # no subsampling: the closed form, seconds


def main(argv: list[str] | None = None) -> int:
    """Print the table (``--quick``: one small setting)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one small setting (a smoke run)")
    args = ap.parse_args(argv)
    import dpcompose_exact as dx

    try:
        import dp_accounting
        from dp_accounting import dp_event as d
        from dp_accounting.pld import PLDAccountant
        from dp_accounting.rdp import RdpAccountant
    except ImportError:
        print("# dp_accounting is not installed: only our calibration is printed")
        dp_accounting = None

    left: dict[str, list[float]] = {"PLD": [], "RDP": []}
    overshoots = {"PLD": 0, "RDP": 0}
    ratios: list[float] = []
    print(
        f"{'q':>6} {'k':>6} {'target':>12} | {'ours sigma':>10} {'eps there':>22} "
        f"{'eps below':>22} {'CPU s':>6} | accountant: sigma, certified eps, verdict"
    )
    for q, k, (eps, delta) in QUICK if args.quick else SETTINGS:
        t0 = time.process_time()
        try:
            cal = dx.calibrate(eps, delta, k=k, sampling_rate=q)
        except dx.DPComposeError as exc:  # e.g. a grid enclosure too wide to decide
            print(f"{q:>6} {k:>6} {f'({eps}, {delta})':>12} | no certified answer: {exc}")
            continue
        cpu = time.process_time() - t0
        there = "[{}, {}]".format(*cal.epsilons[0].interval(6))
        below = "[{}, {}]".format(*cal.epsilons[1].interval(6))
        print(
            f"{q:>6} {k:>6} {f'({eps}, {delta})':>12} | {float(cal.answer):>10.4f} "
            f"{there:>22} {below:>22} {cpu:>6.1f} |",
            end="",
        )
        if dp_accounting is None:
            print()
            continue

        def event(sigma: float, q: str = q, k: int = k) -> object:
            return d.SelfComposedDpEvent(
                d.PoissonSampledDpEvent(float(Fraction(q)), d.GaussianDpEvent(sigma)), k
            )

        parts = []
        for name, make in (("PLD", PLDAccountant), ("RDP", RdpAccountant)):
            t1 = time.process_time()
            sigma = dp_accounting.calibrate_dp_mechanism(
                make,
                event,
                float(Fraction(eps)),
                float(Fraction(delta)),
                dp_accounting.LowerEndpointAndGuess(float(cal.answer) / 2, float(cal.answer)),
                tol=1e-4,
            )
            their_cpu = time.process_time() - t1
            theirs = dx.compose(dx.gaussian_noise(repr(sigma)).subsample(q), k)
            value = theirs.epsilon(delta)
            over = value > Fraction(eps)
            overshoots[name] += bool(over)
            extra = Fraction(repr(sigma)) / cal.answer - 1
            left[name].append(float(extra))
            verdict = "OVERSHOOT" if over else "ok"
            timing = ""
            if name == "PLD":
                ratios.append(cpu / their_cpu)
                timing = f", {their_cpu:.1f} s CPU, ours {cpu / their_cpu:.2f}x"
            parts.append(
                f" {name}: {sigma:.5f}, {value.interval(5)[1]}, {verdict} ({float(extra):+.2%})"
                f"{timing}"
            )
        print(";".join(parts))
    if dp_accounting is not None:
        for name in ("PLD", "RDP"):
            med = statistics.median(left[name]) if left[name] else 0.0
            print(
                f"# {name}: {overshoots[name]} overshoot(s) of {len(left[name])}; median noise "
                f"on the table (their sigma / smallest certified grid sigma - 1): {med:+.2%}"
            )
        if ratios:
            print(
                f"# CPU time against PLD's calibrate_dp_mechanism: worst {max(ratios):.2f}x, "
                f"median {statistics.median(ratios):.2f}x"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
