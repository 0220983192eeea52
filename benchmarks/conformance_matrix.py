"""Regenerate docs/conformance.md: the standard audit suite on the installed accountants.

Runs ``dx.audit_suite("standard")`` (every registered adapter on the 30 cases of the
standard suite, kept in a SQLite store so that an interrupted run resumes), prints the
verdict counts per accountant and the CPU time, and writes the matrix as Markdown into
docs/conformance.md.  ``--quick`` runs two cases into a temporary file and checks the
page renders (no docs are written).

    python benchmarks/conformance_matrix.py            # writes docs/conformance.md
    python benchmarks/conformance_matrix.py --quick
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import _here  # noqa: F401  (this checkout, not an installed copy)

from dpcompose_exact.tools.audit.matrix import matrix_markdown
from dpcompose_exact.tools.audit.repro import write_repros
from dpcompose_exact.tools.audit.suite import audit_suite

ROOT = Path(__file__).resolve().parents[1]

INTRO = """\
# Conformance matrix

The standard audit suite (`dpcompose audit --suite standard`, `dx.audit_suite("standard")`)
runs every installed accountant on a fixed set of cases and compares every number it
reports with the certified reference: the exact composition, or a certified two-sided
enclosure of it (see [the CLI guide](cli.md) and `docs/theory.md`, section 3).  A number
presented as a guarantee (an upper bound on delta, eps, a Rényi divergence or a GDP mu; a
lower bound on beta(alpha)) is `UNSOUND` when it is on the wrong side of the truth by more
than float rounding, graded by how far: `material` (relative error beyond 1e-6), `small`,
or `float accumulation` (beyond 4 ulps, within 1e-10); `sound up to float rounding` when
by a few ulps only; `undecided` when it lies inside the enclosure or no certified
reference exists; `not checked` for estimates and bounds in the other direction.  The
sign of a relative error: negative is an upper bound's shortfall; positive is a lower
bound (beta) too high.  The matrix has an accountant per row and a case family per
column; a cell shows the worst grade of its numbers (with how many numbers have it, and
the worst relative error in percent).  A `crash` row names the library's exception and
its classification (`[library failure KEY]`, with a reproduction `crash_KEY.py`).  The
findings come sorted by severity, and the last section has one report per library, ready
to paste into its issue tracker.

Regenerate with `python benchmarks/conformance_matrix.py` (this page is its output; the
accountants are those installed when it ran: with `pip install ".[audit,audit-peers]"`,
other projects' accountants too; the findings are discussed in [the ecosystem
page](ecosystem.md)).

"""


def main() -> None:
    """Run the suite, print the counts and CPU time, write the page (unless ``--quick``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two cases, no docs written")
    ap.add_argument("--store", help="the SQLite store (default: benchmarks/.conformance.sqlite)")
    ap.add_argument("--workers", type=int, help="local Dask workers (default: this process)")
    ap.add_argument("--repro", help="also write the findings' reproduction scripts here")
    args = ap.parse_args()
    tmp = None
    if args.quick:
        tmp = tempfile.mkdtemp()
        store = os.path.join(tmp, "suite.sqlite")
        cases = ("gaussian sigma=0.5 x1", "pure dp eps=1 x10")
    else:
        store = args.store or str(ROOT / "benchmarks" / ".conformance.sqlite")
        cases = None
    t0, w0 = time.process_time(), time.perf_counter()
    report = audit_suite("standard", cases=cases, store=store, workers=args.workers)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    print(f"standard suite: {len(report.cases)} cases, {len(report.rows)} numbers, "
          f"{report.resumed} cells resumed from {store}")  # fmt: skip
    print(f"CPU {cpu:.1f} s (this process), wall {wall:.1f} s")
    for acc, counts in report.counts().items():
        print(f"  {acc}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    print(f"findings (UNSOUND or invalid value): {len(report.findings())}")
    python = f"Python {platform.python_version()} ({platform.python_implementation()})."
    page = INTRO + f"Generated on {python}\n\n" + matrix_markdown(report)
    if args.repro:
        options = {"pld_grid": 1e-4, "prv_eps_error": 1e-2, "prv_delta_error": 1e-9}
        paths = write_repros(report, args.repro, options)
        print(f"wrote {len(paths)} reproduction script(s) to {args.repro}")
    if args.quick:
        assert "| accountant |" in page and "gaussian sigma=0.5 x1" in page
        print("quick: the page renders")
        return
    (ROOT / "docs" / "conformance.md").write_text(page, encoding="utf-8")
    print("wrote docs/conformance.md")


if __name__ == "__main__":
    main()
