"""Benchmark: the readable exact forms of a table against computing the table.

For ``--dp 5,0 --dp 0.01,0.3`` (forms over ``x = e^{1/100}``, denominators ``(x^499 - 1)^k``:
the case where factoring every row's denominator made the text table ten times slower than
the composition) and several k, in the same process, it prints CPU seconds of
:func:`dpcompose_exact.compose`, of its rows (exact forms as text), of the text table with
every form laid out (``to_table(exact="always")``: polynomials in x, factored denominators)
and of the LaTeX (``to_latex(exact="always")``), and the ratio of the table's seconds to the
composition's.  Each row's readable form, evaluated from its factors with mpmath, is
compared with the row's certified decimal (30 digits): ``agree`` says whether all do.  The
machine may be shared: CPU time, not wall time.

Run: python benchmarks/bench_readable.py [--quick]
(``--quick``: k = 2 and 4, a few seconds.)
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from fractions import Fraction
from typing import TypeVar

import _here  # noqa: F401  (this checkout, not an installed copy)
import mpmath

import dpcompose_exact as dx
from dpcompose_exact.presentation.readable import Readable, readable_many
from dpcompose_exact.presentation.render import to_latex, to_table

KS = [4, 8, 12]
QUICK_KS = [2, 4]
MECH = dx.Mechanism([("5", "0"), ("0.01", "0.3")])
T = TypeVar("T")


def cpu(f: Callable[[], T]) -> tuple[float, T]:
    """``(CPU seconds, result)`` of ``f()``."""
    t = time.process_time()
    out = f()
    return time.process_time() - t, out


def value(red: Readable, g: Fraction) -> mpmath.mpf:
    """A readable form's value from its factors (not from its text)."""
    x = mpmath.exp(mpmath.mpf(g.numerator) / g.denominator)

    def prod(factors: list) -> mpmath.mpf:
        out = mpmath.mpf(1)
        for p, e in factors:
            out *= mpmath.polyval([int(c) for c in reversed(p.coeffs())], x) ** e
        return out

    return red.num_const * prod(red.num) / (red.den_const * prod(red.den))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="k = 2 and 4 only")
    args = parser.parse_args()
    print(f"{'k':>3} {'rows':>5} {'compose s':>10} {'rows s':>8} {'table s':>8} "
          f"{'latex s':>8} {'table/compose':>14}  agree")
    for k in QUICK_KS if args.quick else KS:
        t_c, c = cpu(lambda: dx.compose(MECH, k))  # noqa: B023 - called at once
        t_r, rows = cpu(lambda: c.rows(digits=30))  # noqa: B023
        t_t, _ = cpu(lambda: to_table(rows, exact="always"))  # noqa: B023
        t_l, _ = cpu(lambda: to_latex(rows, exact="always"))  # noqa: B023
        g, reds = readable_many([r["delta"] for r in rows])
        with mpmath.workdps(60):
            agree = g is not None and all(
                red is not None
                and abs(value(red, g) - mpmath.mpf(r["delta_decimal"])) <= mpmath.mpf(10) ** -25
                for red, r in zip(reds, rows)
            )
        print(f"{k:>3} {len(rows):>5} {t_c:>10.2f} {t_r:>8.2f} {t_t:>8.2f} {t_l:>8.2f} "
              f"{t_t / max(t_c, 1e-9):>14.2f}  {'yes' if agree else 'NO'}")


if __name__ == "__main__":
    main()
