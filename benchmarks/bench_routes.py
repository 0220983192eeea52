"""Benchmark: decimals-only queries by the automatic route against dp_accounting's PLD.

Paper case eps = (0.3, 0.15), delta = (0, 0.02).  For each k, in one process:

* ``auto``: ``dx.compose(..., closed_forms=False)`` (the route a decimals-only
  query takes now) then ``delta(1)`` and ``eps(1e-5)`` to 30 certified digits;
* ``before``: the exact route (what auto took before when the result fit in memory),
  only for k up to ``--before-max-k``;
* ``dp_accounting``: its PLD of the same dominating pair at grid 1e-4 (pessimistic),
  composed k times, ``get_delta_for_epsilon(1)`` and ``get_epsilon_for_delta(1e-5)``,
  with its relative error against our certified value.

Also the CLI wall time of ``dpcompose compose -k 500 --decimals-only --format json`` and
the enclosures of the bounds route (three incommensurable constraints; a five-kind list),
width 1e-6 asked, with ``--grid`` also the grid enclosure alone for comparison.

Run: python benchmarks/bench_routes.py [--k ...] [--no-cli] [--no-bounds] [--grid] [--quick]
(--quick: k in {20, 100}, the CLI at k = 100, the bounds of the smallest cases only)
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import time
from fractions import Fraction

import _here  # noqa: F401  (this checkout, not an installed copy)

import dpcompose_exact as dx
from dpcompose_exact.engines.bounds import Bounded, relative_width
from dpcompose_exact.engines.grid import enclose
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.specs import parse_mech_spec
from dpcompose_exact.regions.tradeoff import dp_region

PAIRS = (("0.3", "0"), ("0.15", "0.02"))
THREE = (("log(2)", "1e-6"), ("log(3)-log(2)", "1e-4"), ("1/10", "0.01"))
FIVE = ["0.3,0+0.15,0.02", "log(2),1e-5", "0.1,0", "1,1e-6+0.25,1e-3", "log(3)-log(2),0.01"]


def ours(k: int, mode: str) -> tuple[float, str, str, str]:
    """(seconds, route, delta(1), eps(1e-5)) with 30 certified digits."""
    t0 = time.perf_counter()
    c = dx.compose(dx.Mechanism(PAIRS), k, method=mode, closed_forms=False, max_memory=None)
    d = c.delta("1").decimal(30)
    e = c.epsilon("1e-5").decimal(30)
    return time.perf_counter() - t0, str(c.method), d, e


def dp_accounting_run(k: int) -> tuple[float, float, float]:
    """(seconds, delta(1), eps(1e-5)) by dp_accounting's PLD at grid 1e-4."""
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    pld = canonical_pair(dp_region(PAIRS))
    dom = pld.domain
    t0 = time.perf_counter()
    lower, upper = {}, {}
    for i, (loss, m) in enumerate(pld.masses):
        p0 = float(dom.decimal(m, 20))
        upper[i] = math.log(p0)
        lower[i] = math.log(p0) - float(dom.loss_decimal(loss, 20))
    if not pld.leak.is_zero():
        upper["leak"] = math.log(float(dom.decimal(pld.leak, 20)))
    one = pldlib.from_two_probability_mass_functions(
        lower, upper, value_discretization_interval=1e-4
    )
    composed = one.self_compose(k)
    d = composed.get_delta_for_epsilon(1.0)
    e = composed.get_epsilon_for_delta(1e-5)
    return time.perf_counter() - t0, d, e


def rel(x: float, exact: str) -> float:
    v = float(Fraction(exact))
    return abs(x - v) / v if v else abs(x)


def cli_time(k: int) -> float:
    cmd = [sys.executable, "-m", "dpcompose_exact.cli", "compose", "-k", str(k)]
    cmd += ["--decimals-only", "--format", "json"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t0


def bounds_row(name: str, kinds: list[tuple], eps: str, delta: str, width: str) -> None:
    """delta(eps) and eps(delta) by the bounds route (log-split sum, else the grid)."""
    t0 = time.perf_counter()
    b = Bounded(kinds, width=width)
    d = b.delta(eps)
    secs_d = time.perf_counter() - t0
    t0 = time.perf_counter()
    try:
        e = b.epsilon(delta)
        e_txt = f"[{', '.join(e.interval(10))}] w={float(relative_width(e)):.2g}"
    except Exception as exc:  # e.g. delta below the leak: no finite eps
        e_txt = f"({type(exc).__name__}: {str(exc)[:60]})"
    secs_e = time.perf_counter() - t0
    print(
        f"{name:<20} delta({eps}) in [{', '.join(d.interval(12))}] "
        f"w={float(relative_width(d)):.2g} {secs_d:.1f} s; eps({delta}) {e_txt} {secs_e:.1f} s",
        flush=True,
    )


def grid_row(name: str, kinds: list[tuple], eps: str, terms: int) -> None:
    """The grid enclosure alone (the fallback), for comparison."""
    t0 = time.perf_counter()
    d = enclose(kinds, terms=terms).delta(eps)
    secs = time.perf_counter() - t0
    print(
        f"{name:<20} grid terms={terms}: delta({eps}) w={float(relative_width(d)):.2g} "
        f"{secs:.1f} s",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, nargs="*", default=[20, 100, 1000, 10_000, 100_000])
    ap.add_argument("--before-max-k", type=int, default=200)
    ap.add_argument("--no-cli", action="store_true")
    ap.add_argument("--no-bounds", action="store_true")
    ap.add_argument("--grid", action="store_true", help="also time the grid enclosure alone")
    ap.add_argument("--quick", action="store_true", help="small cases only (a smoke run)")
    opts = ap.parse_args()
    if opts.quick:
        opts.k, opts.before_max_k = [20, 100], 100
    print(
        f"{'k':>7} {'route':>9} {'ours s':>8} {'before s':>9} {'dp_acc s':>9} "
        f"{'dp_acc/ours':>11} {'dp rel.err d':>12} {'dp rel.err e':>12}"
    )
    for k in opts.k:
        secs, used, d, e = ours(k, "auto")
        before = ours(k, "exact")[0] if k <= opts.before_max_k else float("nan")
        dsecs, dd, de = dp_accounting_run(k)
        print(
            f"{k:>7} {used:>9} {secs:>8.3f} {before:>9.3f} {dsecs:>9.3f} {dsecs / secs:>11.2f} "
            f"{rel(dd, d):>12.2e} {rel(de, e):>12.2e}",
            flush=True,
        )
    if not opts.no_cli:
        k_cli = 100 if opts.quick else 500
        secs = cli_time(k_cli)
        print(f"CLI compose -k {k_cli} --decimals-only: {secs:.2f} s (process wall time)")
    if opts.no_bounds:
        return
    three = canonical_pair(dp_region(THREE, warn=False))
    for k in (40,) if opts.quick else (40, 1000):
        bounds_row(f"3 constraints k={k}", [(three, k)], "2", "1e-5", "1e-6")
        # the leak (about k 1e-6) is above 1e-5 at k = 1000: eps is asked at 1/100 too
        bounds_row(f"3 constraints k={k}", [(three, k)], "2", "1/100", "1e-6")
        if opts.grid:
            grid_row(f"3 constraints k={k}", [(three, k)], "2", 1_280_001)
    five = [parse_mech_spec(f"{s}:{i + 1}") for i, s in enumerate(FIVE)]
    for m in (16,) if opts.quick else (16, 100):
        kinds = [(canonical_pair(kd.region()), kd.count * m) for kd in five]
        bounds_row(f"5 kinds x{m}", kinds, "2", "1e-5", "1e-6")
        # the five-kind leak is above 1e-5: eps is asked at a delta above it too
        bounds_row(f"5 kinds x{m}", kinds, "2", "0.999" if m == 100 else "0.6", "1e-6")
        if opts.grid:
            grid_row(f"5 kinds x{m}", kinds, "2", 1_280_001)


if __name__ == "__main__":
    main()
