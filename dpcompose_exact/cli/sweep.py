"""``dpcompose sweep GRID``: a table of compositions and queries over a parameter grid.

Hook into ``dpcompose`` with :func:`add_parser` (in ``build_parser``) and :func:`handle`
(in ``main``); ``python -m dpcompose_exact.cli.sweep ...`` runs it standalone.

The grid file is described in :mod:`dpcompose_exact.tools.sweeps`.  ``-o OUT`` writes the table
(format from the suffix: ``.csv``, ``.jsonl``, ``.parquet``, ``.tex``; or ``--format``);
without ``-o`` it goes to stdout.  Cells are computed on a local Dask cluster (one process
per core; ``--workers N``), on an existing one (``--scheduler tcp://HOST:PORT``) or in this
process (``--serial``), and stored as they finish in ``OUT.sweep.sqlite`` (``--store``);
a rerun reuses them (``--fresh`` recomputes).  The summary (cells reused, computed,
failed) goes to stderr, with a progress bar when stderr is a terminal.

Exit status: 0 when every cell has a value, 1 when some rows carry an error (the table is
written anyway), 2 on a malformed grid file or bad options, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from typing import Any

from ..engines.genfunc import DEFAULT_MEMORY_LIMIT
from ..errors import DPComposeError, InvalidParameterError, MissingDependencyError
from ..presentation.formats import format_names
from ..tools.sweeps import (
    EXACT_CHARS,
    MAX_CELLS,
    SERIAL_SECONDS,
    format_for,
    require_dask,
    store_path_for,
    sweep,
)
from .common import MAX_DIGITS, add_subcommand, bounded_int
from .progress import activity_of

__all__ = ["add_parser", "handle"]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer (>= 1)")
    return value


def _memory_gib(text: str) -> Fraction:
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of GiB") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 0 (0 means no limit)")
    return value


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``sweep`` subcommand to an ``argparse`` subparsers object."""
    p = add_subcommand(
        subparsers,
        "sweep",
        "a table of compositions and queries over a parameter grid (local or on Dask)",
        "Compute delta(eps), eps(delta) and optionally the accountant audit for every point\n"
        "of a grid file, on a local Dask cluster (default), an existing Dask cluster\n"
        "(--scheduler tcp://HOST:8786) or serially. Finished cells are stored next to the\n"
        "output and reused by a rerun (the store is OUT.sweep.sqlite).\n\n"
        "grid file (TOML; JSON with the same keys); strings keep values exact:\n"
        "  [[mechanism]]\n"
        '  constraints = [["{eps}", "0"], ["{eps}/2", "{delta}"]]\n'
        '  count = "{k}"\n'
        "  [grid]\n"
        '  eps = ["0.1", "0.3", "1"]\n'
        '  delta = ["1e-6", "0.02"]\n'
        "  k = [10, 20, 50, 100]\n"
        "  [query]\n"
        '  delta_at_epsilon = ["1", "2"]\n'
        '  epsilon_at_delta = ["1e-5"]\n'
        "  audit = false",
        [
            "dpcompose sweep examples/sweep.toml -o results.csv",
            "dpcompose sweep examples/sweep.toml -o results.parquet --workers 2",
            "dpcompose sweep examples/sweep.toml --serial --fresh -o table.tex",
        ],
    )
    p.add_argument("grid", metavar="GRID", help="grid file (TOML, or JSON with the same keys)")
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="output file (.csv .jsonl .parquet .tex; default: CSV on stdout)",
    )
    p.add_argument(
        "--format",
        choices=(*format_names("tidy"), "json"),
        help="output format (default: from the suffix of OUT, else csv)",
    )
    p.add_argument(
        "--workers", type=_positive_int, help="local Dask worker processes (default: one per core)"
    )
    p.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="use an existing Dask cluster (default: start a local one)",
    )
    p.add_argument(
        "--serial",
        action="store_true",
        help="compute in this process, without Dask (default: on for a sweep estimated at "
        f"under {SERIAL_SECONDS:g} s when neither --workers nor --scheduler is given)",
    )
    p.add_argument(
        "--max-memory",
        type=_memory_gib,
        default=Fraction(DEFAULT_MEMORY_LIMIT, 2**30),
        metavar="GIB",
        help="memory the exact route may use per cell (larger cells go certified or fail); "
        "each local worker may use this plus 1 GiB; 0 means no limit (default 6)",
    )
    p.add_argument(
        "--digits",
        type=bounded_int("--digits", 1, MAX_DIGITS),
        default=30,
        help=f"significant digits, 1..{MAX_DIGITS} (default 30)",
    )
    p.add_argument(
        "--exact-chars",
        type=_positive_int,
        default=EXACT_CHARS,
        metavar="N",
        help=f"closed forms up to N characters go into the table (default {EXACT_CHARS})",
    )
    p.add_argument(
        "--max-cells",
        type=_positive_int,
        default=MAX_CELLS,
        metavar="N",
        help=f"refuse a grid of more than N cells (points x queries) at once (default {MAX_CELLS})",
    )
    p.add_argument("--store", metavar="FILE", help="the SQLite store (default: OUT.sweep.sqlite)")
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--resume",
        dest="resume",
        action="store_true",
        default=True,
        help="reuse the cells already in the store (default)",
    )
    g.add_argument(
        "--fresh",
        dest="resume",
        action="store_false",
        help="ignore the store and recompute every cell (default off)",
    )
    return p


def handle(args: argparse.Namespace) -> tuple[str, int]:
    """Run ``dpcompose sweep``; returns ``(stdout text, exit status)``.

    Errors (a malformed grid file, bad options) go to stderr as one line with status 2.
    """
    limit = int(args.max_memory * 2**30) if args.max_memory > 0 else None
    try:
        if args.serial and (args.scheduler or args.workers):
            raise InvalidParameterError("--serial runs without Dask: drop --scheduler/--workers")
        if args.scheduler and args.workers:
            raise InvalidParameterError(
                "--workers sizes the local cluster; an existing cluster (--scheduler) has its own"
            )
        fmt = format_for(args.output, args.format)
        if args.output is None and fmt == "parquet":
            raise InvalidParameterError("Parquet is binary: write it to a file with -o OUT.parquet")
        store = args.store or store_path_for(args.output, args.grid)
        try:
            result = sweep(
                args.grid,
                args.output,
                fmt=fmt,
                workers=args.workers,
                scheduler=args.scheduler,
                serial=args.serial,
                max_memory=limit,
                digits=args.digits,
                exact_chars=args.exact_chars,
                resume=args.resume,
                store=store,
                progress=activity_of(args).counter(),
                max_cells=args.max_cells,
            )
        except KeyboardInterrupt:
            sys.stderr.write(
                f"dpcompose: sweep interrupted; finished cells are kept in {store}: "
                "rerun the same command to compute only the rest\n"
            )
            raise
    except MissingDependencyError as exc:
        if exc.name in ("dask", "distributed"):  # say it in the command line's words
            try:
                require_dask("run with --serial")
            except MissingDependencyError as cli_exc:
                exc = cli_exc
        sys.stderr.write(f"dpcompose: error: {exc}\n")
        return "", 2
    except DPComposeError as exc:
        sys.stderr.write(f"dpcompose: error: {exc}\n")
        return "", 2
    where = f"; wrote {args.output}" if args.output else ""
    sys.stderr.write(f"dpcompose: sweep: {result.summary()}{where}\n")
    out = "" if args.output else result.text(fmt)
    return out, 1 if result.failed else 0
