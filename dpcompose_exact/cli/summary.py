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

import flint

from ..engines.summaries import DEFAULT_ORDERS, is_infinite, parse_order
from ..errors import DPComposeError
from ..numbers import MAX_DIGITS
from ..numbers.format import (
    ball_to_decimal,
    decimal_or_interval,
    exact_decimal,
    short_enclosure,
)
from ..numbers.value import Value
from ..presentation.formats import format_names, output_format, register_writer
from ..presentation.naming import TITLE_WIDTH, comment_block, composition_name
from .common import add_subcommand, bounded_int, split_values

__all__ = ["add_parser", "handle", "FORMATS"]

register_writer("table", "summary", lambda c, data: _table(data, _label(c), data["digits"]))
register_writer(
    "json",
    "summary",
    lambda c, data: json.dumps({k: v for k, v in data.items() if k != "digits"}, indent=1) + "\n",
)
FORMATS = format_names("summary")  # the registry's formats that write a summary
#: significant digits of the table (JSON: :data:`JSON_DIGITS`), unless --digits says
DEFAULT_DIGITS = 10
JSON_DIGITS = 20
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
        default=None,
        metavar="N",
        help=f"significant digits of the certified decimals, 1..{MAX_DIGITS} "
        f"(default {DEFAULT_DIGITS} in the table, {JSON_DIGITS} in JSON)",
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


def _shown(number: dict[str, Any], digits: int) -> str:
    """A table cell: an exact rational in full, a decimal, or an enclosure.

    An exact rational is printed in full (``3.5``, never padded zeros), an enclosure with
    the digits it certifies (:func:`short_enclosure`).
    """
    text, exact = number["decimal"], number["exact"]
    try:
        q = Fraction(exact) if exact not in (None, "oo") else None
    except (ValueError, ZeroDivisionError):
        q = None
    shown = None if q is None else exact_decimal(q, digits)
    if shown is not None:
        return shown
    if not text.startswith("["):
        return text
    lo, hi = short_enclosure(*text[1:-1].split(", "), digits)
    return f"[{lo}, {hi}]"


def clt_mu(kinds: Any, digits: int = 4) -> str | None:
    """The central-limit GDP mu of subsampled Gaussian steps: an approximation.

    ``mu_CLT = sqrt(sum_i T_i q_i^2 (exp((s_i / sigma_i)^2) - 1))`` (Bu, Dong, Long, Su,
    "Deep learning with Gaussian differential privacy", 2020; the ``mu`` of Opacus's and
    gdpnum's GDP accountants) for ``T_i`` steps of Gaussian noise ``sigma_i``, sensitivity
    ``s_i``, sampled at rate ``q_i``: the limit as ``T -> oo`` with ``q sqrt(T)`` fixed, not
    a bound at any finite ``T`` (the strict mu, docs/theory.md section 20, is).  None
    unless every kind is Gaussian noise and one is subsampled.  The formula is evaluated
    in ball arithmetic and printed to ``digits`` certified digits (of the approximation).
    """
    total = flint.arb(0)
    sampled = False
    for m, n in kinds:
        d = m.to_dict()
        if d.get("noise") != "gaussian":
            return None
        q = Fraction(d.get("subsample", "1"))
        ratio = Fraction(d["sensitivity"]) / Fraction(d["scale"])
        sampled = sampled or q < 1
        r2 = flint.arb(flint.fmpq(ratio.numerator**2, ratio.denominator**2))
        total += n * flint.arb(flint.fmpq(q.numerator**2, q.denominator**2)) * (r2.exp() - 1)
    if not sampled:
        return None
    return ball_to_decimal(total.sqrt(), digits)


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
    clt = clt_mu(c.kinds)
    if clt is not None:  # what DP-SGD users know as mu: an approximation, labelled so
        out["gdp_mu_clt_approximation"] = clt
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


def _table(data: dict[str, Any], title: str, digits: int = 30) -> str:
    lines = comment_block(f"# certified summary of {title}\n# every printed digit certified")
    if data["gdp_mu"] is None:
        lines += comment_block(
            f"gdp mu      : not computed: {data['gdp_mu_reason']}", prefix="", width=TITLE_WIDTH
        )
    else:
        mu = data["gdp_mu"]
        lines.append(
            f"gdp mu      : {_shown(mu, digits)}  "
            "(strict: the smallest mu with the composition mu-GDP)"
        )
        if mu["exact"] is not None:
            lines.append(f"              {_short(mu['exact'])}")
    if "gdp_mu_clt_approximation" in data:
        lines.append(
            f"gdp mu (CLT): ~{data['gdp_mu_clt_approximation']}  (central-limit approximation "
            "of Opacus/gdpnum;"
        )
        lines.append("              not a guarantee: use the strict mu)")
    adv = data["advantage"]
    lines.append(f"advantage   : {_shown(adv, digits)}  (delta at eps = 0)")
    lines.append("")
    lines.append(f"{'alpha':>8}  renyi epsilon (D_alpha)")
    for row in data["renyi"]:
        if row["renyi"] is None:
            lines.append(f"{row['alpha']:>8}  not computed: {row['reason']}")
        else:
            lines.append(f"{row['alpha']:>8}  {_shown(row['renyi'], digits)}")
    return "\n".join(lines) + "\n"


def handle(args: argparse.Namespace, composition: Callable[[argparse.Namespace], Any]) -> str:
    """Run ``dpcompose summary``; ``composition(args)`` builds the composition."""
    orders = split_values(args.orders, "--orders") or list(DEFAULT_ORDERS)
    for alpha in orders:  # a malformed order is an error of the command line
        parse_order(alpha)
    c = composition(args)
    digits = args.digits or (JSON_DIGITS if args.format == "json" else DEFAULT_DIGITS)
    data = {**summary(c, orders, digits), "digits": digits}
    return output_format(args.format, "summary").writer("summary")(c, data)  # type: ignore[no-any-return]


def _label(c: Any) -> str:
    return composition_name(c.kinds)
