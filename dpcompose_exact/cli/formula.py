"""``dpcompose formula``: delta(eps) of a k-fold composition for symbolic parameters.

The subcommand prints :func:`dpcompose_exact.paper.formula.formula` as a text table, LaTeX or
JSON: one closed form per chamber (an order of the composed loss values), with the
chamber's inequalities.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from ..paper.formula import LIMITS, formula
from ..presentation.formats import format_names, output_format, register_writer
from .common import add_subcommand, bounded_int

__all__ = ["add_parser", "handle"]

register_writer("table", "formula", lambda f, expand: f.to_table())
register_writer("latex", "formula", lambda f, expand: f.to_latex())
register_writer("json", "formula", lambda f, expand: f.iter_json(expand_pieces=expand))
FORMATS = format_names("formula")  # the registry's formats that write a formula


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``formula`` subcommand to an ``argparse`` subparsers object."""
    p = add_subcommand(
        subparsers,
        "formula",
        "delta(eps) of a k-fold composition as a formula in symbolic eps_i, delta_i",
        "For symbolic eps_1 > ... > eps_n > 0 and delta_1 <= ... <= delta_n (every\n"
        "constraint active), the hockey-stick delta(eps) of the k-fold composition, one\n"
        "closed form per chamber (an order of the composed loss values j . eps) with the\n"
        "chamber's inequalities; each piece is leak + a sum of terms T_j written once.\n"
        f"Sizes: n = 2 with k <= {LIMITS[2]}, n = 3 with k <= {LIMITS[3]}.\n"
        "Cost of --format json (streamed, one chamber at a time; each chamber names its\n"
        "terms once, in order, and piece i adds the first i of them): n = 3, k = 5: about\n"
        "8 s of CPU, 150 MB of memory, 21 MB of output; n = 3, k = 4: 2.5 s, 90 MB, 3 MB;\n"
        "n = 2, k = 10: 5 s, 85 MB, 0.4 MB.  --expand writes every piece in full: its size\n"
        "grows with the square of a chamber's losses (n = 3, k = 3: 17 s, 5 MB; n = 2,\n"
        "k = 10: 70 s, 166 MB).",
        [
            "dpcompose formula -n 2 -k 3",
            "dpcompose formula -n 2 -k 5 --format latex",
            "dpcompose formula -n 3 -k 2 --format json",
        ],
    )
    p.add_argument(
        "-n",
        type=bounded_int("-n", 2, 3),
        default=2,
        help="number of constraints, 2 or 3 (default 2)",
    )
    p.add_argument(
        "-k",
        type=bounded_int("-k", 1, max(LIMITS.values())),
        default=2,
        help=f"number of compositions (n = 2: k <= {LIMITS[2]}; n = 3: k <= {LIMITS[3]}; "
        "default 2)",
    )
    p.add_argument(
        "--format", choices=FORMATS, default="table", help="table, latex or json (default table)"
    )
    p.add_argument(
        "--expand",
        action="store_true",
        help="json: add each piece's terms, sum and full closed form (long: n = 2, k = 10 "
        "writes 166 MB in 70 s) (default off)",
    )
    return p


def handle(args: argparse.Namespace) -> str | Iterator[str]:
    """Run ``dpcompose formula``; returns the text for stdout (JSON: in pieces, streamed)."""
    f = formula(n=args.n, k=args.k)
    return output_format(args.format, "formula").writer("formula")(f, args.expand)  # type: ignore[no-any-return]
