"""The ``approx`` and ``plot`` subcommands (docs/theory.md, section 9; Figures 1-3).

* ``approx --gaussian MU | --laplace EPS [--pieces N] [--side below|above|both]
  [--rule optimal|paper] [-k K] [--format table|json] [--digits D]`` prints the exact
  (eps, delta) constraints of the n-piece approximations of G_MU (or of the Laplace
  mechanism) from below (a valid privacy guarantee) and from above (Propositions 1 and 2
  of the paper); with ``-k`` also the exact K-fold compositions of the approximations,
  which bracket the true composition (G_{MU sqrt K} for the Gaussian).
* ``plot --dp EPS,DELTA [--dp ...] [-k K] [--gaussian MU] [--approx below|above|both]
  [--pieces N] [--remarks] -o FILE`` draws every region this CLI can compute into one
  PNG or PDF file with a legend.

The main CLI hooks them in with :func:`add_parsers` and :func:`handle`; the handlers
return the text for stdout and raise :class:`~dpcompose_exact.errors.DPComposeError`
subclasses on bad input (the main CLI prints those as one line and exits 2).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..engines.genfunc import DEFAULT_MEMORY_LIMIT
from ..errors import InvalidParameterError
from ..numbers import parse_rational
from ..numbers.format import fraction_decimal, mpf_str
from ..paper.approx import (
    Approximation,
    Rule,
    Side,
    SmoothTradeoff,
    approx_from_above,
    approx_from_below,
    gaussian,
    gaussian_composition,
    laplace,
)
from ..paper.bracket import DEFAULT_EPS_DENOMINATOR, approximation_region
from ..presentation.formats import format_names, output_format, register_writer
from ..presentation.render import to_json, to_table
from ..regions.specs import kinds_from_options, merge_kinds, parse_k
from ..regions.tradeoff import dp_region
from .common import EXACT_INPUT_HELP, MAX_DIGITS, add_subcommand, bounded_int, check_output

if TYPE_CHECKING:
    from ..composition import Composition

__all__ = ["COMMANDS", "add_parsers", "handle", "handle_approx", "handle_plot"]

#: the subcommands this module adds.
COMMANDS = ("approx", "plot")

SIDES = (Side.BELOW.value, Side.ABOVE.value, "both")  # "both": one of each
RULES = (Rule.OPTIMAL.value, Rule.PAPER.value)
register_writer("table", "approx", lambda payload, blocks: "\n".join(blocks))
register_writer("json", "approx", lambda payload, blocks: to_json(payload) + "\n")
FORMATS = format_names("approx")  # the registry's formats that write approximations

#: eps grid of an approximation that is only printed (as in :mod:`dpcompose_exact.paper.approx`).
LIST_EPS_DENOMINATOR = 1000


def add_parsers(subparsers: Any) -> None:
    """Add the ``approx`` and ``plot`` subcommands to the main parser's subparsers.

    Args:
        subparsers: The object returned by ``parser.add_subparsers(...)``.
    """
    pa = add_subcommand(
        subparsers,
        "approx",
        "approximate G_mu or Laplace by n (eps, delta) constraints (below/above)",
        "Exact (eps, delta) constraints approximating a smooth trade-off function from\n"
        "below (a valid privacy guarantee) and from above (the paper's Propositions 1-2).\n"
        "With -k, also the exact K-fold compositions of both approximations, which bracket\n"
        "the true composition (G_{mu sqrt K} for the Gaussian).\n\n" + EXACT_INPUT_HELP,
        [
            "dpcompose approx --gaussian 1 --pieces 2",
            "dpcompose approx --gaussian 1 --pieces 2 --side both -k 10",
            "dpcompose approx --laplace 1 --pieces 3 --side below --format json",
            "dpcompose approx --gaussian 1 --rule paper     # the paper's Figure 3",
        ],
    )
    _add_tradeoff_options(pa)
    pa.add_argument(
        "--side", default="both", choices=SIDES, help="below, above or both (default both)"
    )
    pa.add_argument(
        "-k",
        type=str,
        default=None,
        help="also print the exact K-fold compositions of the approximations (default: none)",
    )
    pa.add_argument(
        "--format", default="table", choices=FORMATS, help="table or json (default table)"
    )
    pa.add_argument(
        "--digits",
        type=bounded_int("--digits", 1, MAX_DIGITS),
        default=30,
        metavar="N",
        help=f"significant digits, 1..{MAX_DIGITS} (default 30)",
    )

    pp = add_subcommand(
        subparsers,
        "plot",
        "plot trade-off curves (compositions, Remarks 1-2, G_mu, approximations)",
        "Overlay trade-off curves (type II error f(t) against type I error t) in one\n"
        "figure; the file type (PNG, PDF or SVG) follows the suffix of -o.  The output\n"
        "directory must exist.  Composed curves are zoomed to where they bend unless\n"
        "--xlim/--ylim are given.\n\n" + EXACT_INPUT_HELP,
        [
            "dpcompose plot --dp 0.3,0 --dp 0.15,0.02 -k 20 --remarks -o fig2.png",
            "dpcompose plot --gaussian 1 -k 10 --approx both -o bracket.pdf",
            'dpcompose plot --dp 1,1e-6 -k 5 --title "5 uses" --size 3.4x3 -o small.svg',
            'dpcompose plot --mech "gaussian(0.96)@0.01:1000" -o dpsgd.png  # delta(eps) band',
        ],
    )
    pp.add_argument(
        "--dp",
        action="append",
        metavar="EPS,DELTA",
        help="a constraint of the mechanism; repeat for several (default: none)",
    )
    pp.add_argument("-k", type=str, default=None, help="number of compositions (default: none)")
    pp.add_argument(
        "--mech",
        action="append",
        metavar="SPEC[@Q]:COUNT",
        help="a mechanism kind and its count, as compose takes it (noise such as "
        "gaussian(SIGMA)@Q too); repeat for a list.  What Composition.plot() draws: the "
        "trade-off curve of a constraint list, else the certified delta(eps) band "
        "(default: none; alone, not with the other curves)",
    )
    pp.add_argument(
        "--spec",
        metavar="FILE",
        help="TOML or JSON file of mechanism kinds, as compose takes it (default: none)",
    )
    pp.add_argument(
        "--remarks",
        action="store_true",
        help="add the Remark 1 and Remark 2 bounds (needs two --dp and -k; default off)",
    )
    _add_tradeoff_options(pp)
    pp.add_argument(
        "--approx",
        default=None,
        choices=SIDES,
        help="add the approximations of --gaussian/--laplace from below, above or both "
        "(default: none)",
    )
    pp.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="a .png, .pdf or .svg file in an existing directory (required)",
    )
    pp.add_argument(
        "--title", default=None, help="figure title (default: a description of the curves)"
    )
    pp.add_argument(
        "--xlim",
        default=None,
        metavar="LO,HI",
        help="type I error axis limits (default: automatic, [0, 1] or a zoom)",
    )
    pp.add_argument(
        "--ylim",
        default=None,
        metavar="LO,HI",
        help="type II error axis limits (default: automatic, [0, 1] or a zoom)",
    )
    pp.add_argument(
        "--size",
        default="4.5x4",
        metavar="WxH",
        help="figure size in inches (default 4.5x4; 3.4x3 fits a paper column)",
    )
    pp.add_argument(
        "--dpi",
        type=bounded_int("--dpi", 20, 1200),
        default=200,
        help="resolution of a PNG, 20..1200 (default 200)",
    )


def _add_tradeoff_options(p: argparse.ArgumentParser) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--gaussian", metavar="MU", default=None, help="the Gaussian G_MU (default: none)"
    )
    group.add_argument(
        "--laplace",
        metavar="EPS",
        default=None,
        help="the Laplace mechanism with shift EPS (default: none)",
    )
    p.add_argument(
        "--pieces",
        type=bounded_int("--pieces", 1, 64),
        default=2,
        help="number n of constraints of an approximation, 1..64 (default 2)",
    )
    p.add_argument(
        "--rule",
        default="optimal",
        choices=RULES,
        help="from below: optimal (maximal area) or paper (Proposition 1) (default optimal)",
    )
    p.add_argument(
        "--eps-denominator",
        type=bounded_int("--eps-denominator", 1, 10**6),
        default=None,
        help=f"eps grid 1/N of the approximations (default {LIST_EPS_DENOMINATOR}, or "
        f"{DEFAULT_EPS_DENOMINATOR} with -k so that the exact composition stays fast)",
    )


# ---------------------------------------------------------------------------------------
# parsing
# ---------------------------------------------------------------------------------------


def _int_option(text: str, name: str, minimum: int = 1) -> int:
    try:
        value = int(str(text).strip())
    except ValueError:
        raise InvalidParameterError(f"{name} = {text!r} must be an integer >= {minimum}") from None
    if value < minimum:
        raise InvalidParameterError(f"{name} = {value} must be an integer >= {minimum}")
    return value


def _choice(value: str, choices: tuple[str, ...], name: str) -> str:
    if value not in choices:
        raise InvalidParameterError(f"unknown {name} {value!r}; choose one of {', '.join(choices)}")
    return value


def _parse_pair(text: str) -> tuple[str, str]:
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise InvalidParameterError(
            f"--dp {text!r} is malformed; expected EPS,DELTA such as 0.3,1e-5"
        )
    return parts[0].strip(), parts[1].strip()


def _tradeoff(args: argparse.Namespace, required: bool) -> SmoothTradeoff | None:
    if args.gaussian is not None:
        mu = parse_rational(args.gaussian, "mu")
        if mu <= 0:
            raise InvalidParameterError(f"--gaussian mu = {args.gaussian} must be > 0")
        return gaussian(mu)
    if args.laplace is not None:
        eps = parse_rational(args.laplace, "eps")
        if eps <= 0:
            raise InvalidParameterError(f"--laplace eps = {args.laplace} must be > 0")
        return laplace(eps)
    if required:
        raise InvalidParameterError("give the trade-off function: --gaussian MU or --laplace EPS")
    return None


def _approximations(
    f: SmoothTradeoff, args: argparse.Namespace, side: str, k: int | None
) -> dict[str, Approximation]:
    pieces = _int_option(args.pieces, "--pieces")
    rule = _choice(args.rule, RULES, "rule")
    if args.eps_denominator is not None:
        den = _int_option(args.eps_denominator, "--eps-denominator")
    else:
        den = LIST_EPS_DENOMINATOR if k is None else DEFAULT_EPS_DENOMINATOR
    out: dict[str, Approximation] = {}
    if side in ("below", "both"):
        out["below"] = approx_from_below(f, pieces, rule=rule, eps_denominator=den)
    if side in ("above", "both"):
        out["above"] = approx_from_above(f, pieces, eps_denominator=den)
    return out


def _compose(approx: Approximation, k: int) -> Composition:
    from .. import api

    mechanism = api.Mechanism.from_region(approximation_region(approx))
    return api.compose(mechanism, k, method="exact", max_memory=DEFAULT_MEMORY_LIMIT)


# ---------------------------------------------------------------------------------------
# approx
# ---------------------------------------------------------------------------------------


def constraint_rows(approx: Approximation, digits: int = 30) -> list[dict[str, str]]:
    """The constraints of an approximation as rows, increasing eps (like a region's rows).

    Args:
        approx: An approximation.
        digits: Significant digits of the decimals.

    Returns:
        Dicts with ``epsilon``, ``delta`` (exact rationals), ``epsilon_decimal`` and
        ``delta_decimal``.
    """
    return [
        {
            "epsilon": str(e),
            "delta": str(d),
            "epsilon_decimal": fraction_decimal(e, digits),
            "delta_decimal": fraction_decimal(d, digits),
        }
        for e, d in sorted(approx.constraints)
    ]


def handle_approx(args: argparse.Namespace) -> str:
    """Run ``dpcompose approx``; returns the text for stdout.

    Raises:
        InvalidParameterError: on bad input (mu <= 0, pieces < 1, unknown side, bad -k...).
    """
    f = _tradeoff(args, required=True)
    assert f is not None
    side = _choice(args.side, SIDES, "side")
    fmt = _choice(args.format, FORMATS, "format")
    digits = _int_option(args.digits, "--digits")
    k = parse_k(args.k, None)
    pieces = _int_option(args.pieces, "--pieces")
    approxs = _approximations(f, args, side, k)
    payload: dict[str, Any] = {"command": "approx", "tradeoff": f.name, "pieces": pieces}
    if k is not None:
        payload["k"] = k
        if f.name.startswith("G_") and args.gaussian is not None:
            payload["reference"] = gaussian_composition(parse_rational(args.gaussian, "mu"), k).name
    blocks: list[str] = []
    for name, a in approxs.items():
        rel = "<=" if name == "below" else ">="
        entry: dict[str, Any] = {
            "rule": a.rule,
            "eps_denominator": a.eps_denominator,
            "certified": a.certified,
            "certificate": a.certificate,
            "gap_area": mpf_str(a.gap_area(), 8),
            "constraints": constraint_rows(a, digits),
        }
        title = (
            f"# {a.pieces}-piece approximation of {f.name} from {name} "
            f"(f_eps,delta {rel} f; rule {a.rule}; eps grid 1/{a.eps_denominator}; "
            f"area between {entry['gap_area']}; {a.certificate})"
        )
        blocks.append(to_table(entry["constraints"], title=title))
        if k is not None:
            entry["region"] = _compose(a, k).rows(digits, rounding=None)
            side_word = "lower" if name == "below" else "upper"
            blocks.append(
                to_table(
                    entry["region"],
                    title=f"# exact {k}-fold composition of the approximation from {name} "
                    f"({side_word} end of the bracket of {f.name}^(x{k}))",
                )
            )
        payload[name] = entry
    return output_format(fmt, "approx").writer("approx")(payload, blocks)  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------
# plot
# ---------------------------------------------------------------------------------------


def _pair_option(text: str | None, name: str, lo: float, hi: float) -> tuple[float, float] | None:
    """``LO,HI`` (or ``WxH``) as two floats for matplotlib (presentation only)."""
    if text is None:
        return None
    sep = "x" if name == "--size" else ","
    parts = text.lower().split(sep)
    try:
        a, b = (float(parts[0]), float(parts[1])) if len(parts) == 2 else (None, None)
    except ValueError:
        a = b = None
    if (
        a is None
        or b is None
        or not (lo <= a < b <= hi if sep == "," else lo <= min(a, b) and max(a, b) <= hi)
    ):
        form = "WxH such as 3.4x3" if sep == "x" else "LO,HI such as 0,0.5"
        raise InvalidParameterError(
            f"{name} {text!r} is malformed; expected {form} with values in [{lo:g}, {hi:g}]"
        )
    return a, b


def handle_plot(args: argparse.Namespace) -> str:
    """Run ``dpcompose plot``; writes the figure and returns a one-line report.

    Raises:
        InvalidParameterError: on bad input, an unwritable output path, or when there is
            nothing to plot.
    """
    from ..presentation.plot import (
        SUPPORTED_SUFFIXES,
        auto_limits,
        curve_points,
        plain_label,
        plot_regions,
        visible_limit,
    )

    check_output(args.output, SUPPORTED_SUFFIXES)
    xlim = _pair_option(args.xlim, "--xlim", 0.0, 1.0)
    ylim = _pair_option(args.ylim, "--ylim", 0.0, 1.0)
    size = _pair_option(args.size, "--size", 1.0, 40.0)
    assert size is not None
    if args.mech or args.spec:
        return _plot_kinds(args, size, xlim, ylim)
    k = parse_k(args.k, None)
    f = _tradeoff(args, required=False)
    curves: list[tuple[str, Any]] = []
    composed: list[Any] = []  # what the automatic zoom looks at
    described = []
    if args.dp:
        pairs = [_parse_pair(t) for t in args.dp]
        text = ", ".join(f"({e}, {d})" for e, d in pairs)
        described.append("$" + ", ".join(f"({e}, {d})" for e, d in pairs) + "$-DP")
        curves.append((f"mechanism {text}-DP", dp_region(pairs, warn=False)))
        if k is not None:
            from .. import api

            region = api.compose(pairs, k, method="exact").region
            curves.append((f"exact ${k}$-fold composition", region))
            composed.append(region)
            described[-1] += f", $k = {k}$"
        if args.remarks:
            if k is None or len(pairs) != 2:
                raise InvalidParameterError("--remarks needs exactly two --dp constraints and -k")
            from .. import api

            mechanism = api.Mechanism(pairs)
            curves.append((f"Remark 1 bound, $k = {k}$", api.remark1_bound(mechanism, k).region))
            curves.append((f"Remark 2 bound, $k = {k}$", api.remark2_bound(mechanism, k).region))
    elif args.remarks:
        raise InvalidParameterError("--remarks needs exactly two --dp constraints and -k")
    if f is not None:
        mathname = _math_name(args)
        curves.append((f"${mathname}$", f))
        described.append(f"${mathname}$" + (f", $k = {k}$" if k is not None else ""))
        if k is not None and args.gaussian is not None:
            ref = gaussian_composition(parse_rational(args.gaussian, "mu"), k)
            mu = "" if args.gaussian.strip() == "1" else args.gaussian.strip()
            curves.append((f"${mathname}^{{\\otimes {k}}} = G_{{{mu}\\sqrt{{{k}}}}}$", ref))
            composed.append(ref)
        if args.approx is not None:
            side = _choice(args.approx, SIDES, "side")
            for name, a in _approximations(f, args, side, k).items():
                label = f"{a.pieces}-piece approx. from {name}"
                if k is None:
                    curves.append((label, a))
                else:
                    composed.append(_compose(a, k).region)
                    curves.append((f"{label}, composed ${k}$ times", composed[-1]))
    elif args.approx is not None:
        raise InvalidParameterError("--approx needs --gaussian MU or --laplace EPS")
    if not curves:
        raise InvalidParameterError("nothing to plot: give --dp EPS,DELTA and/or --gaussian MU")
    title = args.title if args.title is not None else "Trade-off curves: " + "; ".join(described)
    if xlim is None and ylim is None and composed:
        lim = auto_limits([curve_points(c) for c in composed])
        # every curve of the legend must show in the zoom (G_1 next to G_1^(x10))
        lim = (0.0, visible_limit([curve_points(c) for _, c in curves], lim[1]))
        xlim = ylim = lim
    path = plot_regions(
        curves, args.output, title=title, xlim=xlim, ylim=ylim, size=size, dpi=args.dpi
    )
    names = "; ".join(plain_label(c[0]) for c in curves)
    return f"wrote {path} ({len(curves)} curves: {names})\n"


def _plot_kinds(
    args: argparse.Namespace,
    size: tuple[float, float],
    xlim: tuple[float, float] | None,
    ylim: tuple[float, float] | None,
) -> str:
    """``plot --mech/--spec``: what ``Composition.plot()`` draws, through the front door.

    A composition with an exact region is drawn as its trade-off curve; noise and mixed
    lists as the certified band of their privacy profile ``delta(eps)``
    (docs/theory.md, section 20), whose lower and upper edges enclose the true curve.
    """
    from .. import api
    from ..presentation.naming import composition_name
    from ..presentation.plot import plot_profiles, plot_regions

    others = [
        name
        for name, given in (
            ("--dp", args.dp),
            ("-k", args.k),
            ("--remarks", args.remarks),
            ("--gaussian", args.gaussian),
            ("--laplace", args.laplace),
            ("--approx", args.approx),
        )
        if given
    ]
    if others:
        raise InvalidParameterError(
            f"--mech/--spec draw one composition: do not combine them with {', '.join(others)}"
        )
    kinds = merge_kinds(kinds_from_options(None, None, args.mech, args.spec))
    c = api.compose(kinds)
    name = composition_name(c.kinds)
    if c.has_region:
        title = args.title if args.title is not None else f"Trade-off curve: {name}"
        path = plot_regions(
            [(name, c.region)],
            args.output,
            title=title,
            xlim=xlim,
            ylim=ylim,
            size=size,
            dpi=args.dpi,
        )
        return f"wrote {path} (1 curve: {name})\n"
    if xlim is not None or ylim is not None:
        raise InvalidParameterError(
            "--xlim/--ylim set the trade-off axes; a privacy profile delta(eps) has its own"
        )
    title = args.title if args.title is not None else f"Privacy profile: {name}"
    path = plot_profiles([(name, c.profile_band())], args.output, title, size, args.dpi)
    return f"wrote {path} (certified delta(eps) band: {name})\n"


def _math_name(args: argparse.Namespace) -> str:
    if args.gaussian is not None:
        return f"G_{{{args.gaussian}}}"
    return f"L_{{{args.laplace}}}"


def handle(args: argparse.Namespace) -> str:
    """Dispatch ``approx`` and ``plot``; returns the text for stdout.

    Args:
        args: The parsed arguments (``args.command`` in :data:`COMMANDS`).

    Returns:
        What to write to stdout.

    Raises:
        DPComposeError: (a subclass) on bad input.
    """
    if args.command == "approx":
        return handle_approx(args)
    if args.command == "plot":
        return handle_plot(args)
    raise InvalidParameterError(f"unknown command {args.command!r}")
