"""``dpcompose formula``: delta(eps) of a k-fold composition for symbolic parameters.

The subcommand prints :func:`dpcompose_exact.paper.formula.formula` as a text table, LaTeX or
JSON: one closed form per chamber (an order of the composed loss values), with the
chamber's inequalities.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..paper.formula import LIMITS, formula
from .common import add_subcommand, bounded_int

__all__ = ["add_parser", "handle"]

FORMATS = ("table", "latex", "json")


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
        f"Sizes: n = 2 with k <= {LIMITS[2]}, n = 3 with k <= {LIMITS[3]}.",
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
        help="json: add each piece's full closed form (long) (default off)",
    )
    return p


def handle(args: argparse.Namespace) -> str:
    """Run ``dpcompose formula``; returns the text for stdout."""
    f = formula(n=args.n, k=args.k)
    if args.format == "json":
        return f.to_json(expand_pieces=args.expand)
    if args.format == "latex":
        return f.to_latex()
    return f.to_table()
