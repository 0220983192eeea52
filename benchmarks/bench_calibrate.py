"""Benchmark: certified calibration and the exact dp_accounting accountant.

Prints the answer, the certificate and the time of

* the largest k with (0.3, 0) & (0.15, 0.02) composed k times (10, 1e-5)-DP;
* the largest x on the grid 1/1000 with (x, 0) & (x/2, 0.02) composed 100 times
  (5, 1e-5)-DP;
* ``ExactAccountant.get_epsilon(1e-5)`` for 20 uses of the same mechanism, next to
  dp_accounting's PLD accountant on 30 discrete Laplace queries (when installed).

Run: python benchmarks/bench_calibrate.py [--quick]
(--quick: targets (3, 1e-5) and (2, 1e-5) with 10 uses, grid 1/100, 3 uses in the
accountants: a smoke run)
"""

from __future__ import annotations

import argparse
import time
import warnings
from fractions import Fraction

import _here  # noqa: F401  (this checkout, not an installed copy)

from dpcompose_exact import InactiveConstraintWarning, Mechanism
from dpcompose_exact.tools.calibrate import largest_k, largest_parameter


def family(x: Fraction) -> Mechanism:
    return Mechanism([(x, 0), (x / 2, "0.02")])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small targets (a smoke run)")
    quick = ap.parse_args().quick
    warnings.simplefilter("ignore", InactiveConstraintWarning)
    r = largest_k(Mechanism([("0.3", "0"), ("0.15", "0.02")]), "3" if quick else "10", "1e-5")
    print(r.summary(20))
    if quick:
        r = largest_parameter(family, 10, "2", "1e-5", "1/100")
    else:
        r = largest_parameter(family, 100, "5", "1e-5", "1/1000")
    print(r.summary(20))
    uses = 3 if quick else 20
    try:
        from dp_accounting import SelfComposedDpEvent
        from dp_accounting.dp_event import DiscreteLaplaceDpEvent
        from dp_accounting.pld import PLDAccountant

        from dpcompose_exact.integrations.dp_accounting import DpConstraintsEvent, ExactAccountant
    except ImportError:
        print('dp_accounting is not installed: pip install ".[dp-accounting]"')
        return
    t0 = time.perf_counter()
    event = SelfComposedDpEvent(DpConstraintsEvent([("0.3", "0"), ("0.15", "0.02")]), uses)
    eps = ExactAccountant().compose(event).get_epsilon(1e-5)
    print(
        f"ExactAccountant, {uses} x paper mechanism: eps(1e-5) <= {eps!r}  "
        f"({time.perf_counter() - t0:.2f} s)"
    )
    n_dl = 3 if quick else 30
    dl = SelfComposedDpEvent(DiscreteLaplaceDpEvent(0.2, 1), n_dl)
    for name, make in (("ExactAccountant", ExactAccountant), ("PLDAccountant", PLDAccountant)):
        t0 = time.perf_counter()
        eps = make().compose(dl).get_epsilon(1e-6)
        print(
            f"{name}, {n_dl} x discrete Laplace(0.2): eps(1e-6) = {eps!r}  "
            f"({time.perf_counter() - t0:.2f} s)"
        )


if __name__ == "__main__":
    main()
