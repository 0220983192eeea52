"""Benchmark: the width of the GDP mu of Gaussian noise next to finite pairs.

Over a seeded sweep of mixed lists (Gaussian noise of sigma in [1/4, 4] used 1-5 times,
next to one or two finite kinds: pure eps-DP with eps in [1/20, 2] or randomized response
with p in [1/10, 9/10], used 1-10 times), in one process:

* ``ours``: ``Composition.gdp_mu()``, the enclosure of ``sup_tau h(tau)`` over the
  Neyman-Pearson curve (docs/theory.md, section 20), its relative width and CPU seconds;
* ``bracket``: the enclosure this replaced, ``[max(m, mu_F), sqrt(m^2 + mu_F^2)]``, from
  the same composition (``mu_F`` the finite part's exact mu), its relative width, and the
  ratio of the two widths.

It prints one row per list, then the worst relative width and the total CPU time.

Run: python benchmarks/bench_gdp_mu.py [--cases N] [--seed S] [--quick]
(--quick: 4 cases, a smoke run)
"""

from __future__ import annotations

import argparse
import random
import time
from fractions import Fraction

import _here  # noqa: F401  (this checkout, not an installed copy)
import flint

import dpcompose_exact as dx
from dpcompose_exact.engines.gdp_finite import _finite_mu

#: two lists whose former enclosures were 1.4 % and 4 % wide
ISSUE = [
    ([("gaussian", "1", 3), ("dp", "1/2", 4)]),
    ([("gaussian", "2", 2), ("rr", "1/2", 3)]),
]


def draw(rng: random.Random) -> list[tuple[str, str, int]]:
    """One seeded mixed list: Gaussian noise and one or two finite kinds."""
    items = [("gaussian", str(Fraction(rng.randint(1, 16), 4)), rng.randint(1, 5))]
    for _ in range(rng.randint(1, 2)):
        if rng.random() < 0.5:
            items.append(("dp", str(Fraction(rng.randint(1, 40), 20)), rng.randint(1, 10)))
        else:
            items.append(("rr", str(Fraction(rng.randint(1, 9), 10)), rng.randint(1, 10)))
    return items


def build(items: list[tuple[str, str, int]]) -> list[tuple[object, int]]:
    out: list[tuple[object, int]] = []
    for kind, par, n in items:
        if kind == "gaussian":
            out.append((dx.gaussian_noise(par), n))
        elif kind == "rr":
            out.append((dx.randomized_response(par), n))
        else:
            out.append((dx.Mechanism([(par, "0")]), n))
    return out


def label(items: list[tuple[str, str, int]]) -> str:
    names = {"gaussian": "gaussian({})", "rr": "rr({})", "dp": "{},0"}
    return " ".join(f"{names[k].format(p)}:{n}" for k, p, n in items)


def bracket(items: list[tuple[str, str, int]]) -> tuple[float, float]:
    """The former enclosure ``[max(m, mu_F), sqrt(m^2 + mu_F^2)]`` (floats of its ends)."""
    m2 = sum(Fraction(n) / Fraction(p) ** 2 for k, p, n in items if k == "gaussian")
    region = dx.compose(build(items)[1:], method="exact", closed_forms=False).region
    nu = _finite_mu(region).ball(128)
    with flint.ctx.workprec(128):
        m = flint.arb(flint.fmpq(m2.numerator, m2.denominator)).sqrt()
        lo = m.max(nu)
        hi = (m * m + nu * nu).sqrt()
    return float(lo.lower()), float(hi.upper())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--seed", type=int, default=40)
    ap.add_argument("--quick", action="store_true", help="4 cases (a smoke run)")
    opts = ap.parse_args()
    rng = random.Random(opts.seed)
    n = 4 if opts.quick else opts.cases
    cases = ISSUE + [draw(rng) for _ in range(max(0, n - len(ISSUE)))]
    print(
        f"{'mechanisms':<44} {'mu lower':>14} {'mu upper':>14} {'rel.width':>10} "
        f"{'cpu s':>6} {'bracket w':>10} {'ratio':>9}"
    )
    worst, total = 0.0, 0.0
    for items in cases:
        comp = dx.compose(build(items))
        t0 = time.process_time()
        lo, hi = (Fraction(x) for x in comp.gdp_mu().interval(20))
        secs = time.process_time() - t0
        total += secs
        width = float((hi - lo) / hi)
        worst = max(worst, width)
        b_lo, b_hi = bracket(items)
        b_width = (b_hi - b_lo) / b_hi
        ratio = b_width / width if width else float("inf")
        print(
            f"{label(items):<44} {float(lo):>14.10f} {float(hi):>14.10f} {width:>10.2e} "
            f"{secs:>6.2f} {b_width:>10.2e} {ratio:>9.2e}",
            flush=True,
        )
    print(f"worst relative width: {worst:.3e} over {len(cases)} lists; {total:.1f} s CPU in all")


if __name__ == "__main__":
    main()
