"""``dpcompose summary``: GDP mu, membership-inference advantage and the Rényi curve.

The subcommand reads the same inputs as ``dpcompose delta`` (``--dp``/``-k``, ``--mech``,
``--spec``), builds the composition through the front door and prints its certified
summaries (:meth:`~dpcompose_exact.composition.Composition.gdp_mu`, ``advantage`` and
``renyi``; docs/theory.md, section 20) as a table or JSON.  A summary that is not
computed for these kinds (GDP mu of Laplace or subsampled noise) is reported with its
reason instead of failing the command.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from ..engines.summaries import DEFAULT_ORDERS, is_infinite, parse_order
from ..errors import DPComposeError
from ..numbers import MAX_DIGITS
from ..numbers.format import decimal_or_interval
from ..numbers.value import Value
from ..presentation.formats import format_names, output_format, register_writer
from .common import add_subcommand, bounded_int, split_values

__all__ = ["add_parser", "handle", "FORMATS"]

register_writer("table", "summary", lambda c, data: _table(data, _label(c)))
register_writer("json", "summary", lambda c, data: json.dumps(data, indent=1) + "\n")
FORMATS = format_names("summary")  # the registry's formats that write a summary
DEFAULT_DIGITS = 20
#: closed forms up to this many characters are shown in the table
TABLE_FORM = 80


def add_parser(
    subparsers: Any, add_inputs: Callable[[argparse.ArgumentParser], None]
) -> argparse.ArgumentParser:
    """Add the ``summary`` subcommand; ``add_inputs`` adds the composition input options."""
    p = add_subcommand(
        subparsers,
        "summary",
        "GDP mu, advantage and Renyi divergences of a composition, certified",
        "Certified summaries of a composition: the smallest mu with the composition\n"
        "mu-GDP (Gaussian noise or finite pairs; the reason otherwise), the largest\n"
        "membership-inference advantage delta(0), and the Renyi divergence D_alpha (the\n"
        "RDP epsilon) at each order: exact for finite pairs, Gaussian and Laplace noise,\n"
        "oo when a pair has a leak, certified for subsampled noise.",
        [
            'dpcompose summary --mech "gaussian(1):3" --mech "gaussian(2):2"',
            "dpcompose summary --dp 0.5,0 -k 10 --orders 2,4,8 --format json",
            'dpcompose summary --mech "gaussian(1)@0.01:100" --orders 2,8,32',
        ],
    )
    add_inputs(p)
    p.add_argument(
        "--orders",
        action="append",
        metavar="ALPHA[,ALPHA...]",
        help="Renyi orders alpha > 1, exact (repeat or comma-separate; default "
        f"{','.join(DEFAULT_ORDERS)})",
    )
    p.add_argument(
        "--format", choices=FORMATS, default="table", help="table or json (default table)"
    )
    p.add_argument(
        "--digits",
        type=bounded_int("--digits", 1, MAX_DIGITS),
        default=DEFAULT_DIGITS,
        metavar="N",
        help=f"significant digits of the certified decimals, 1..{MAX_DIGITS} "
        f"(default {DEFAULT_DIGITS})",
    )
    p.add_argument(
        "--max-memory",
        type=Fraction,
        default=Fraction(6),
        metavar="GIB",
        help="memory limit of the exact route in GiB; 0 means no limit (default 6)",
    )
    p.set_defaults(decimals_only=False, exact="auto", rounding="up", forms=None)
    return p


def _number(value: Value, digits: int) -> dict[str, Any]:
    """A Value as JSON: ``exact`` (closed form or null), ``decimal`` and ``upper``."""
    if is_infinite(value):
        return {"exact": "oo", "decimal": "inf", "upper": "inf"}
    return {
        "exact": value.exact,
        "decimal": decimal_or_interval(value, digits),
        "upper": value.rounded(digits, "up"),
    }


def summary(c: Any, orders: list[str], digits: int) -> dict[str, Any]:
    """The JSON object ``dpcompose summary --format json`` prints."""
    out: dict[str, Any] = {
        "command": "summary",
        "mechanisms": [{**m.to_dict(), "count": n} for m, n in c.kinds],
        "method": str(c.method),
    }
    try:
        out["gdp_mu"] = _number(c.gdp_mu(), digits)
    except DPComposeError as exc:
        out["gdp_mu"] = None
        out["gdp_mu_reason"] = str(exc)
    out["advantage"] = _number(c.advantage(), digits)
    curve = []
    for alpha in orders:
        try:
            ((a, v),) = c.renyi_curve([alpha])
        except DPComposeError as exc:
            curve.append({"alpha": alpha, "renyi": None, "reason": str(exc)})
            continue
        curve.append({"alpha": str(a), "renyi": _number(v, digits)})
    out["renyi"] = curve
    return out


def _short(exact: str | None) -> str:
    """The closed form when short, else its length (``--format json`` has it)."""
    if exact is None:
        return "certified enclosure"
    if len(exact) <= TABLE_FORM:
        return f"exact {exact}"
    return f"exact form of {len(exact)} characters: --format json"


def _table(data: dict[str, Any], title: str) -> str:
    lines = [f"# certified summary of {title}; every printed digit certified"]
    if data["gdp_mu"] is None:
        lines.append(f"gdp mu      : not computed: {data['gdp_mu_reason']}")
    else:
        mu = data["gdp_mu"]
        lines.append(f"gdp mu      : {mu['decimal']}  ({_short(mu['exact'])})")
    adv = data["advantage"]
    lines.append(f"advantage   : {adv['decimal']}  (delta at eps = 0)")
    lines.append("")
    lines.append(f"{'alpha':>8}  renyi epsilon (D_alpha)")
    for row in data["renyi"]:
        if row["renyi"] is None:
            lines.append(f"{row['alpha']:>8}  not computed: {row['reason']}")
        else:
            lines.append(f"{row['alpha']:>8}  {row['renyi']['decimal']}")
    return "\n".join(lines) + "\n"


def handle(args: argparse.Namespace, composition: Callable[[argparse.Namespace], Any]) -> str:
    """Run ``dpcompose summary``; ``composition(args)`` builds the composition."""
    orders = split_values(args.orders, "--orders") or list(DEFAULT_ORDERS)
    for alpha in orders:  # a malformed order is an error of the command line
        parse_order(alpha)
    c = composition(args)
    data = summary(c, orders, args.digits)
    return output_format(args.format, "summary").writer("summary")(c, data)  # type: ignore[no-any-return]


def _label(c: Any) -> str:
    return ", ".join(f"{n} x {m.describe()}" for m, n in c.kinds)
