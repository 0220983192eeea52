"""Benchmark: a sweep of >= 200 cells, serial loop vs Dask with 1 and 2 worker processes.

The grid is the paper's case family: constraints (eps, 0) and (eps/2, delta), eps in
{0.1, 0.3, 1}, delta in {1e-6, 0.02}, k in {5, 10, 20, 40, 60, 80, 100, 130, 160, 200};
queries delta(0.5), delta(1), delta(2) and eps(1e-5): 60 compositions, 240 cells.

Measured in one run (each sweep with a fresh store, so every cell is computed):
* plain: a plain serial loop over the API (``compose`` then the four queries, the same
  digits and closed forms as a sweep row) -- no store, no Dask;
* serial: ``sweep(..., serial=True)`` -- the same loop plus planning and the SQLite store;
* dask-1, dask-2: ``sweep(..., workers=N)`` on a new LocalCluster (start-up included and
  also shown on its own).

Printed: wall time, cells per second, speed-up over the plain loop, and overhead per cell
((time - plain / workers) / cells, which charges start-up, scheduling, pickling and the
store to each cell).  A checksum confirms the four runs produced the same values.

Run: python benchmarks/bench_sweep.py [--quick]
(--quick: k in {2, 5, 10}, 72 cells: a smoke run of every path, not a measurement)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
import time

import _here  # noqa: F401  (this checkout, not an installed copy)

from dpcompose_exact.api import Mechanism, compose
from dpcompose_exact.tools.sweeps import EXACT_CHARS, sweep

EPS = ["0.1", "0.3", "1"]
DELTA = ["1e-6", "0.02"]
K = [5, 10, 20, 40, 60, 80, 100, 130, 160, 200]
K_QUICK = [2, 5, 10]
D_AT = ["0.5", "1", "2"]
E_AT = ["1e-5"]
DIGITS = 30


def grid(ks: list[int]) -> dict:
    return {
        "mechanism": [{"constraints": [["{eps}", "0"], ["{eps}/2", "{delta}"]], "count": "{k}"}],
        "grid": {"eps": EPS, "delta": DELTA, "k": ks},
        "query": {"delta_at_epsilon": D_AT, "epsilon_at_delta": E_AT},
    }


def plain_loop(ks: list[int]) -> tuple[float, str]:
    """The baseline: the API in a loop, the same outputs as a sweep row."""
    t0 = time.perf_counter()
    values = []
    for eps in EPS:
        for delta in DELTA:
            for k in ks:
                c = compose(Mechanism([(eps, "0"), (f"({eps})/2", delta)]), k)
                for v in [c.delta(a) for a in D_AT] + [c.epsilon(d) for d in E_AT]:
                    values.append(v.decimal(DIGITS))
                    text = v.exact
                    _ = text if text is not None and len(text) <= EXACT_CHARS else None
    return time.perf_counter() - t0, _checksum(values)


def _checksum(values: list[str]) -> str:
    return hashlib.sha256("\n".join(values).encode()).hexdigest()[:12]


def run_sweep(ks: list[int], tmp: str, **kw: object) -> tuple[float, float, str, int]:
    store = os.path.join(tmp, f"s{time.monotonic_ns()}.sqlite")
    t0 = time.perf_counter()
    res = sweep(grid(ks), store=store, resume=False, digits=DIGITS, **kw)
    wall = time.perf_counter() - t0
    assert res.failed == 0, [r["error"] for r in res.rows if r["error"]][:3]
    return wall, res.startup_seconds, _checksum([r["value"] for r in res.rows]), res.cells


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="k in {2, 5, 10}: a smoke run")
    args = ap.parse_args()
    ks = K_QUICK if args.quick else K
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# sweep benchmark: {len(EPS) * len(DELTA) * len(ks)} compositions, k up to {max(ks)}")
    print(f"# cores: {os.cpu_count()}, load average at start: {load:.1f}")
    plain, ref = plain_loop(ks)
    rows = [("plain loop", plain, 0.0, ref, 1)]
    with tempfile.TemporaryDirectory() as tmp:
        wall, up, check, cells = run_sweep(ks, tmp, serial=True)
        rows.append(("sweep --serial", wall, up, check, 1))
        for n in (1, 2):
            wall, up, check, cells = run_sweep(ks, tmp, workers=n)
            rows.append((f"sweep --workers {n}", wall, up, check, n))
    print(f"# {cells} cells; overhead/cell = (time - plain / workers) / cells")
    head = f"{'run':<18} {'seconds':>8} {'start-up':>8} {'cells/s':>8} {'speed-up':>8}"
    print(head + f" {'overhead/cell':>14} {'checksum':>13}")
    for name, wall, up, check, n in rows:
        over = (wall - plain / n) / cells
        print(
            f"{name:<18} {wall:8.2f} {up:8.2f} {cells / wall:8.2f} {plain / wall:8.2f} "
            f"{over * 1000:11.1f} ms {check:>13}"
        )
    same = len({r[3] for r in rows}) == 1
    print("# all runs agree" if same else "# MISMATCH between runs")
    print(
        f"# load average at end: {os.getloadavg()[0]:.1f} (other processes share the cores)"
        if hasattr(os, "getloadavg")
        else ""
    )


if __name__ == "__main__":
    main()
