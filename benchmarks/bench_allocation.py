"""Benchmark: random allocation (1 of k Gaussian steps) against pld-accounting, same process.

For each setting ``(sigma, k)`` (one epoch, add/remove; sigma in {0.7, 1, 2}, k in {100,
1000, 10^4}), the table prints our CPU time for the certified enclosure of eps(1e-5) from
a fresh mechanism (the epoch's loss grid, ``dpcompose_exact.engines.allocation``: the
linear lattice, or the laws in ln R below sigma ~ 0.7; docs/theory.md section 21), the
enclosure and its width, then pld-accounting's CPU time for
``gaussian_allocation_epsilon_range`` (its float64 upper and lower bounds at its default
accuracy, or with ``--pld-at-our-width`` asked for our width as its absolute accuracy: in a
trial at sigma 1, k = 1000 that did not finish in 10 minutes), its two numbers and their
gap, whether ours lies between them, and the time ratio (ours / theirs).  From 64 steps up
the default rebins the laws in ln R onto a third of their cells (about pld-accounting's
accuracy, docs/theory.md section 21, "The cells of a rebin"); the sigma 0.7 rows are run
again on the loss grid 1e-5 (``compose(..., grid="1e-5")``), which takes every cell: the
narrow enclosure and its cost.  pld-accounting is run up to ``--pld-max-steps`` steps
(default 1000: at 10^4 steps it took more than 10 CPU minutes in a trial).  CPU time
(``time.process_time``).

Run: python benchmarks/bench_allocation.py [--quick]
"""

from __future__ import annotations

import argparse
import time
import warnings

import _here  # noqa: F401  (this checkout, not an installed copy)


def _ours(sigma: str, k: int, grid: str | None = None) -> tuple[float, float, float]:
    import dpcompose_exact as dx
    from dpcompose_exact.engines import allocation

    allocation.allocation_lattice.cache_clear()
    allocation.geometric_laws.cache_clear()
    allocation._measures.cache_clear()
    t0 = time.process_time()
    m = dx.random_allocation(dx.gaussian_noise(sigma), steps=k)
    kw = {} if grid is None else {"grid": grid}
    lo, hi = dx.compose(m, 1, **kw).epsilon("1e-5").interval(12)
    return time.process_time() - t0, float(lo), float(hi)


def _theirs(sigma: str, k: int, accuracy: float) -> tuple[float, float, float] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from PLD_accounting.random_allocation_api import gaussian_allocation_epsilon_range
    except ImportError:
        return None
    from fractions import Fraction

    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        up, lo = gaussian_allocation_epsilon_range(
            delta=1e-5, sigma=float(Fraction(sigma)), num_steps=k, epsilon_accuracy=accuracy
        )
    return time.process_time() - t0, lo, up


def main(argv: list[str] | None = None) -> int:
    """Print the table (``--quick``: one small case)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small case only")
    parser.add_argument(
        "--pld-max-steps", type=int, default=1000, help="run pld-accounting up to this k"
    )
    parser.add_argument(
        "--pld-at-our-width", action="store_true", help="ask pld-accounting for our width"
    )
    args = parser.parse_args(argv)
    full = [(s, k, None) for s in ("7/10", "1", "2") for k in (100, 1000, 10000)]
    # the laws in ln R (sigma 0.7) also with every cell of a rebin (grid 1e-5): narrower,
    # about 8 times the default's time
    full += [("7/10", k, "1e-5") for k in (100, 1000)]
    cases = [("1", 10, None)] if args.quick else full
    print("# random allocation, 1 of k steps, Gaussian noise sigma, one epoch, eps(1e-5)")
    print(
        f"{'sigma':>5} {'k':>6} {'grid':>5} | {'ours s':>7} {'ours eps':>22} {'width':>8} | "
        f"{'pld s':>7} {'pld lower':>9} {'pld upper':>9} {'gap':>8} | inside | ratio"
    )
    for sigma, k, grid in cases:
        t_ours, lo, hi = _ours(sigma, k, grid)
        g = grid or "1e-4"
        if k > args.pld_max_steps:
            print(
                f"{sigma:>5} {k:>6} {g:>5} | {t_ours:7.2f} [{lo:.6f}, {hi:.6f}] {hi - lo:8.1e} | "
                f"pld-accounting not run (k > --pld-max-steps {args.pld_max_steps})"
            )
            continue
        theirs = _theirs(sigma, k, max(hi - lo, 1e-6) if args.pld_at_our_width else -1.0)
        if theirs is None:
            print(
                f"{sigma:>5} {k:>6} {g:>5} | {t_ours:7.2f} [{lo:.6f}, {hi:.6f}] {hi - lo:8.1e} | "
                "pld-accounting is not installed"
            )
            continue
        t_pld, p_lo, p_up = theirs
        inside = "yes" if p_lo <= lo <= hi <= p_up else "NO"
        print(
            f"{sigma:>5} {k:>6} {g:>5} | {t_ours:7.2f} [{lo:.6f}, {hi:.6f}] {hi - lo:8.1e} | "
            f"{t_pld:7.2f} {p_lo:9.6f} {p_up:9.6f} {p_up - p_lo:8.1e} | {inside:>6} | "
            f"{t_ours / t_pld:5.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
