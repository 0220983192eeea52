"""The ``dpcompose`` command line.

Subcommands (``dpcompose SUBCOMMAND --help`` shows each one's options and examples):

* ``compose``: the exact (eps, delta) region of a composition.  Inputs: ``--dp EPS,DELTA
  [--dp ...] -k K`` (K copies of a mechanism satisfying all constraints; default: the
  paper's Figure 2 case), ``--mech "EPS,DELTA[+EPS,DELTA...]:COUNT"`` (repeat for a list of
  kinds) or ``--spec FILE``.  Large compositions switch to the certified mode.
* ``delta --eps E`` and ``epsilon --delta D`` (same inputs) print the privacy curve.
* ``heterogeneous --mech EPS:COUNT`` composes pure-DP mechanisms of several kinds.
* ``approx``, ``plot``, ``audit``, ``verify``: f-DP approximations, figures, audits of
  numeric accountants, symbolic proof checks.

Output: ``--format table|json|csv|latex``, ``--digits N``, ``--exact auto|always|never``,
``--decimals-only``; the JSON follows ``dpcompose_exact/schema/output.schema.json`` (the same
top-level keys whatever the input mode).  Bad input gives one line on stderr and exit
status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from . import cli_approx, cli_audit, cli_calibrate, cli_formula, cli_sweep
from .bounds import Bounded, bounded_rows, table_rows
from .certified import CertifiedRegion, stderr_progress
from .cli_common import (
    EXACT_INPUT_HELP,
    MAX_DIGITS,
    SPEC_HELP,
    OneLineParser,
    add_subcommand,
    bounded_int,
    split_values,
)
from .curves import delta_of_eps, eps_of_delta
from .errors import DPComposeError, InactiveConstraintWarning, InvalidParameterError
from .forms_file import split_forms
from .genfunc import DEFAULT_MEMORY_LIMIT
from .mechanisms import compose_mechanisms
from .numbers import parse_rational
from .numbers.format import ROUNDINGS, latex_input
from .render import (
    EXACT_CHOICES,
    LATEX_DIGITS,
    LATEX_SHORT,
    TABLE_SHORT,
    region_rows,
    to_csv,
    to_json,
    to_latex,
    to_table,
)
from .specs import (
    DEFAULT_DP,
    DEFAULT_K,
    MechanismKind,
    kinds_from_options,
    parse_count,
    parse_dp_pair,
    parse_k,
)
from .theorems import METHODS, compose, heterogeneous_composition, theorem1_closed_form
from .tradeoff import Region

# Theorems 2 and 3 are enumerations in Python (O(k^3) terms): keep them for checking.
THEOREM_K_LIMIT = 60
DEFAULT_DIGITS = 30
FORMATS = ("table", "json", "csv", "latex")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dpcompose_exact")
    except PackageNotFoundError:  # running from a source tree
        from . import __version__

        return __version__


def _memory_gib(text: str) -> Fraction:
    try:
        value = parse_rational(text, "--max-memory")  # bounded size, decided before parsing
    except (ValueError, DPComposeError) as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of GiB ({exc})") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 0 (0 means no limit)")
    return value


def _add_output_options(p: argparse.ArgumentParser, latex: bool = True) -> None:
    formats = FORMATS if latex else FORMATS[:3]
    p.add_argument(
        "--format",
        choices=formats,
        default="table",
        help="output format: " + ", ".join(formats) + " (default table)",
    )
    p.add_argument(
        "--digits",
        type=bounded_int("--digits", 1, MAX_DIGITS),
        default=None,
        metavar="N",
        help=f"significant digits of the certified decimals, 1..{MAX_DIGITS} (default "
        f"{DEFAULT_DIGITS}; {LATEX_DIGITS} for --format latex)",
    )
    p.add_argument(
        "--exact",
        choices=EXACT_CHOICES,
        default="auto",
        help="closed-form deltas in table and latex output: always, never, or auto "
        f"(table: full up to {TABLE_SHORT} characters, longer ones abbreviated with their "
        f"length; latex: the column only when every closed form has at most {LATEX_SHORT} "
        "characters, else left out with a note) (default auto)",
    )
    p.add_argument(
        "--rounding",
        choices=ROUNDINGS,
        default="up",
        help="direction of the printed decimals of deltas and epsilons: up (never below the "
        "exact value: a printed number never understates privacy loss), nearest, or down; "
        "json keeps the certified digits and adds the directed ones (default up)",
    )
    p.add_argument(
        "--forms",
        metavar="FILE",
        default=None,
        help="write the exact deltas to this JSON file; json and table output refer to it "
        "by index instead of carrying long forms (default: none; json keeps the forms "
        "inline while they total under 512 KiB)",
    )
    p.add_argument(
        "--decimals-only",
        action="store_true",
        help="leave every exact closed form out of the output (json, csv, table, latex)",
    )
    if latex:
        p.add_argument(
            "--caption",
            default=None,
            help="LaTeX \\caption text (default: a description of the composition; '' for none)",
        )
        p.add_argument("--label", default="", help="LaTeX \\label key (default: none)")
    p.add_argument(
        "--max-memory",
        type=_memory_gib,
        default=Fraction(DEFAULT_MEMORY_LIMIT, 2**30),
        metavar="GIB",
        help="refuse (or, automatically, go certified for) exact computations estimated to "
        "need more memory; 0 means no limit (default 6)",
    )


def _add_width(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--width",
        default="1e-6",
        help="relative width of certified bounds, when only bounds are possible (default 1e-6)",
    )


def _add_composition_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dp",
        action="append",
        metavar="EPS,DELTA",
        help="a constraint the mechanism satisfies; repeat for several (default: "
        "the paper's Figure 2 case --dp 0.3,0 --dp 0.15,0.02)",
    )
    p.add_argument(
        "-k",
        type=str,
        default=None,
        help=f"number of compositions with --dp (default {DEFAULT_K})",
    )
    p.add_argument(
        "--mech",
        action="append",
        metavar="EPS,DELTA[+EPS,DELTA...]:COUNT",
        help="a mechanism kind (its constraints joined by +) and how often it is used; "
        "repeat for a list of kinds (default: none; not with --dp/-k)",
    )
    p.add_argument(
        "--spec",
        metavar="FILE",
        help="TOML or JSON file of mechanism kinds, format above (default: none)",
    )
    p.add_argument(
        "--method",
        default="auto",
        choices=METHODS,
        help="auto (generating functions) | pld | theorem2 | theorem3 (the last two with "
        f"--dp, k <= {THEOREM_K_LIMIT}); all give the same exact region (default auto)",
    )
    p.add_argument(
        "--certified",
        action="store_true",
        help="ball arithmetic with exact structure (default: automatic when the exact "
        "result would exceed --max-memory)",
    )


_INPUT_NOTES = "\n\n" + EXACT_INPUT_HELP + "\n\n" + SPEC_HELP


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``dpcompose``."""
    parser = OneLineParser(
        prog="dpcompose",
        description="Exact composition of differentially private mechanisms that satisfy "
        "several (eps, delta) constraints at once.\n\n" + EXACT_INPUT_HELP,
        epilog="examples:\n"
        "  dpcompose compose --dp 0.3,0 --dp 0.15,0.02 -k 20\n"
        "  dpcompose delta -k 20 --eps 0.5,1\n"
        "  dpcompose compose --spec examples/paper.toml --format latex\n"
        "Run 'dpcompose SUBCOMMAND --help' for each subcommand's options and examples.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"dpcompose {_version()}")
    sub = parser.add_subparsers(dest="command", parser_class=OneLineParser, metavar="SUBCOMMAND")

    pc = add_subcommand(
        sub,
        "compose",
        "the exact (eps, delta) region of a composition",
        "Compose mechanisms exactly and print the region: one row per privacy-loss value\n"
        "eps >= 0 of the composed pair with the exact delta(eps); the composition is\n"
        "(eps, delta)-DP for every row, and the rows together are tight.\n"
        "Inputs: --dp/-k (K copies of one mechanism satisfying every --dp constraint),\n"
        "or --mech/--spec (any list of kinds).  Default: the paper's Figure 2 case." + _INPUT_NOTES,
        [
            "dpcompose compose                                   # the paper's case, k = 20",
            "dpcompose compose --dp 0.3,0 --dp 0.15,0.02 -k 20 --format latex",
            "dpcompose compose --dp 1,1e-5 --dp 0.5,1e-3 -k 10 --format json",
            'dpcompose compose --mech "0.3,0+0.15,0.02:20" --mech "1,1e-6:5"',
            "dpcompose compose --spec examples/paper.toml --format csv",
            "dpcompose compose -k 1000 --decimals-only          # certified mode",
        ],
    )
    _add_composition_inputs(pc)
    _add_output_options(pc)

    pd = add_subcommand(
        sub,
        "delta",
        "delta(eps) of a composition, exact and certified",
        "The smallest delta such that the composition is (eps, delta)-DP, for each --eps,\n"
        "as a closed form and certified decimals." + _INPUT_NOTES,
        [
            "dpcompose delta -k 20 --eps 0.5,1",
            "dpcompose delta --dp 1,1e-6 -k 50 --eps 5 --format latex",
            'dpcompose delta --mech "0.5,0:3" --eps "log(2)" --format json',
        ],
    )
    _add_composition_inputs(pd)
    pd.add_argument(
        "--eps",
        action="append",
        required=True,
        metavar="EPS[,EPS...]",
        help="eps values (repeat or comma-separate; required, no default)",
    )
    _add_output_options(pd)
    _add_width(pd)

    pe = add_subcommand(
        sub,
        "epsilon",
        "eps(delta) of a composition, exact and certified",
        "The smallest eps such that the composition is (eps, delta)-DP, for each --delta,\n"
        "as an exact log(...) and certified decimals." + _INPUT_NOTES,
        [
            "dpcompose epsilon -k 20 --delta 1e-5",
            "dpcompose epsilon --dp 1,1e-7 -k 50 --delta 1e-3,1e-5 --format latex",
        ],
    )
    _add_composition_inputs(pe)
    pe.add_argument(
        "--delta",
        action="append",
        required=True,
        metavar="DELTA[,DELTA...]",
        help="delta values in [0, 1) (repeat or comma-separate; required, no default)",
    )
    _add_output_options(pe)
    _add_width(pe)

    ph = add_subcommand(
        sub,
        "heterogeneous",
        "compose pure-DP mechanisms of several kinds",
        "Compose COUNT uses of each pure EPS-DP mechanism (--mech EPS:COUNT, repeat).\n"
        "--method theorem1 uses the paper's closed form for two kinds." + _INPUT_NOTES,
        [
            "dpcompose heterogeneous --mech 0.5:3 --mech 0.2:5",
            'dpcompose heterogeneous --mech "log(3):2" --mech "log(2):3" --method theorem1',
        ],
    )
    ph.add_argument(
        "--mech",
        action="append",
        metavar="EPS:COUNT",
        required=True,
        help="COUNT uses of a pure EPS-DP mechanism; repeat for several kinds (required)",
    )
    ph.add_argument(
        "--method",
        default="auto",
        choices=("auto", "pld", "theorem1"),
        help="auto|pld (generating functions) or theorem1 (two kinds) (default auto)",
    )
    _add_output_options(ph)

    cli_audit.add_parser(sub)
    cli_calibrate.add_parser(sub)
    cli_approx.add_parsers(sub)
    cli_sweep.add_parser(sub)
    cli_formula.add_parser(sub)

    pv = add_subcommand(
        sub,
        "verify",
        "run the symbolic proof checks (proofs_checks)",
        "Run the symbolic verifications of the paper's lemmas (sympy); exit status 1 if\n"
        "one fails.",
        ["dpcompose verify --list", "dpcompose verify --quick", "dpcompose verify pair_alpha"],
    )
    pv.add_argument("names", nargs="*", help="checks to run (default: all; see --list)")
    pv.add_argument(
        "--quick", action="store_true", help="smaller scopes, for a fast run (default off)"
    )
    pv.add_argument("--list", action="store_true", help="list the checks and exit (default off)")
    return parser


def _parse_mech(text: str) -> tuple[str, int]:
    eps, sep, count = text.rpartition(":")
    if not sep or not eps.strip():
        raise InvalidParameterError(
            f"--mech {text!r} is malformed; expected EPS:COUNT such as 0.5:3"
        )
    return eps.strip(), parse_count(count, f"--mech {text!r}")


def _digits(args: argparse.Namespace) -> int:
    if args.digits is not None:
        return int(args.digits)
    return LATEX_DIGITS if getattr(args, "format", "") == "latex" else DEFAULT_DIGITS


def mechanisms_meta(kinds: Sequence[MechanismKind]) -> list[dict[str, Any]]:
    """The ``"mechanisms"`` list of the JSON output (the input as given)."""
    return [
        {"constraints": [[str(e), str(d)] for e, d in kind.constraints], "count": kind.count}
        for kind in kinds
    ]


def describe_kinds(kinds: Sequence[MechanismKind]) -> str:
    """``20 x (0.3, 0)+(0.15, 0.02)``-style text for titles."""
    return ", ".join(
        f"{kind.count} x " + "+".join(f"({e}, {d})" for e, d in kind.constraints) for kind in kinds
    )


def _latex_caption(kinds: Sequence[MechanismKind], what: str) -> str:
    def pair(e: str, d: str) -> str:
        return f"$({latex_input(str(e))}, {latex_input(str(d))})$"

    parts = []
    for kind in kinds:
        cons = " and ".join(pair(e, d) for e, d in kind.constraints)
        parts.append(f"{kind.count} uses of a mechanism satisfying {cons}-DP")
    return f"{what} of the composition of " + "; ".join(parts) + "."


def _composition(
    args: argparse.Namespace,
) -> tuple[Region | CertifiedRegion, list[MechanismKind], str]:
    """Compute the composition the input options describe; returns (region, kinds, method)."""
    if args.mech or args.spec:
        kinds = kinds_from_options(args.dp, args.k, args.mech, args.spec)
        if args.method not in ("auto", "pld"):
            raise InvalidParameterError(
                f"--method {args.method} needs --dp and -k (one kind of mechanism)"
            )
    else:
        pairs = tuple(parse_dp_pair(t) for t in (args.dp or list(DEFAULT_DP)))
        k = parse_k(args.k, DEFAULT_K)
        assert k is not None
        kinds = [MechanismKind(pairs, k)]
        if args.method in ("theorem2", "theorem3"):
            if k > THEOREM_K_LIMIT:
                raise InvalidParameterError(
                    f"--method {args.method} enumerates O(k^3) terms; k = {k} is over its "
                    f"limit {THEOREM_K_LIMIT}: use --method pld (same exact region)"
                )
            if not args.certified:
                region, used = compose(
                    list(pairs), k, method=args.method, memory_limit=_limit(args)
                )
                return region, kinds, used
    # an explicit --method pld asks for the exact route (refused when too large)
    mode = "certified" if args.certified else ("exact" if args.method == "pld" else "auto")
    region, used = compose_mechanisms(
        kinds,
        mode=mode,
        digits=_digits(args),
        memory_limit=_limit(args),
        progress=stderr_progress("dpcompose"),
        **_route_options(args),
    )
    return region, kinds, used


def _payload(kinds: Sequence[MechanismKind], method: str, region: Any) -> dict[str, Any]:
    return {
        "command": "",
        "mechanisms": mechanisms_meta(kinds),
        "method": str(method),
        "why": getattr(method, "why", "") or "asked for",
        "certified": not isinstance(region, Region),
    }


def _emit(
    rows: list[dict[str, Any]],
    args: argparse.Namespace,
    payload: dict[str, Any],
    key: str,
    title: str,
    caption: str,
    delta_head: str = "$\\delta(\\varepsilon)$",
) -> str:
    rounding = getattr(args, "rounding", "up")
    forms = getattr(args, "forms", None)
    if key == "region" and (forms is not None or args.format == "json"):
        rows, note = split_forms(rows, forms, exact="never" if args.decimals_only else args.exact)
        if note is not None and args.format == "json":
            payload = {**payload, "forms": note}
        elif note is not None:
            sys.stderr.write(f"dpcompose: note: {note}\n")
    if args.format == "json":
        return to_json({**payload, "rounding": rounding, key: rows}) + "\n"
    if args.format == "csv":
        return to_csv(rows, rounding=rounding)
    exact = "never" if args.decimals_only else args.exact
    if args.format == "latex":
        notes: list[str] = []
        cap = caption if args.caption is None else args.caption
        text = to_latex(
            rows,
            caption=cap,
            label=args.label,
            exact=exact,
            comment=title[2:],
            notes=notes,
            delta_head=delta_head,
            rounding=rounding,
        )
        for note in notes:
            sys.stderr.write(f"dpcompose: note: {note}\n")
        return text
    return to_table(rows, title=title, exact=exact, rounding=rounding)


def _cmd_compose(args: argparse.Namespace) -> str:
    region, kinds, used = _composition(args)
    rows = region_rows(
        region,
        digits=_digits(args),
        exact=not args.decimals_only,
        structured=args.format == "json",
        rounding=args.rounding,
    )
    payload = {**_payload(kinds, used, region), "command": "compose"}
    title = (
        f"# composition of {describe_kinds(kinds)}; method {used}; "
        "region = intersection of R(epsilon, delta) over the rows"
    )
    caption = _latex_caption(kinds, "Exact privacy region $\\delta(\\varepsilon)$")
    return _emit(rows, args, payload, "region", title, caption)


def _route_options(args: argparse.Namespace) -> dict:
    """Closed forms only for ``compose`` without --decimals-only; bounds for curves."""
    curve = args.command in ("delta", "epsilon")
    return {
        "closed_forms": args.command == "compose" and not args.decimals_only,
        "allow_bounds": curve,
        "width": getattr(args, "width", None),
    }


def _cmd_curve(args: argparse.Namespace) -> str:
    if args.command == "delta":
        values = split_values(args.eps, "--eps") or []
    else:
        values = split_values(args.delta, "--delta") or []
    region, kinds, used = _composition(args)
    digits = _digits(args)
    what = "delta(eps)" if args.command == "delta" else "eps(delta)"
    if isinstance(region, Bounded):
        rows = bounded_rows(region, args.command, values, digits)
        what += f", certified bounds (relative width asked: {region.width})"
        if args.format not in ("json", "csv"):
            rows = table_rows(rows)  # intervals in the decimal columns
    elif args.command == "delta":
        rows = [
            delta_of_eps(region, e, digits).as_dict(not args.decimals_only, args.rounding)
            for e in values
        ]
    else:
        rows = [
            eps_of_delta(region, d, digits).as_dict(not args.decimals_only, args.rounding)
            for d in values
        ]
    payload = {**_payload(kinds, used, region), "command": args.command}
    title = f"# {what} of the composition of {describe_kinds(kinds)}; method {used}"
    quantity = "$\\delta(\\varepsilon)$" if args.command == "delta" else "$\\varepsilon(\\delta)$"
    caption = _latex_caption(kinds, "Privacy curve " + quantity)
    return _emit(rows, args, payload, "curve", title, caption, delta_head="$\\delta$")


def _cmd_heterogeneous(args: argparse.Namespace) -> str:
    mechs = [_parse_mech(t) for t in args.mech]
    if args.method == "theorem1":
        if len(mechs) != 2:
            raise InvalidParameterError("--method theorem1 needs exactly two --mech kinds")
        (e1, x), (e2, y) = mechs
        region, used = theorem1_closed_form(e1, x, e2, y), "theorem1"
    else:
        region, used = heterogeneous_composition(mechs, memory_limit=_limit(args)), "pld"
    kinds = [MechanismKind(((e, "0"),), n) for e, n in mechs]
    rows = region_rows(
        region,
        digits=_digits(args),
        exact=not args.decimals_only,
        structured=args.format == "json",
        rounding=args.rounding,
    )
    payload = {**_payload(kinds, used, region), "command": "heterogeneous"}
    title = f"# composition of {describe_kinds(kinds)}; method {used}"
    caption = _latex_caption(kinds, "Exact privacy region $\\delta(\\varepsilon)$")
    return _emit(rows, args, payload, "region", title, caption)


def _cmd_verify(args: argparse.Namespace) -> int:
    try:
        from proofs_checks import runner
    except ImportError as exc:  # pragma: no cover - packaging problem
        raise InvalidParameterError(f"proofs_checks is not installed ({exc})") from None
    known = [name for name, _ in runner.list_checks()]
    unknown = [n for n in args.names if n not in known]
    if unknown:
        raise InvalidParameterError(
            f"unknown check(s) {', '.join(map(repr, unknown))}; choose from {', '.join(known)}"
        )
    if args.list:
        for name, claim in runner.list_checks():
            print(f"{name}: {claim}")
        return 0
    return runner.run(args.names or None, stream=sys.stdout, quick=args.quick)


def _limit(args: argparse.Namespace) -> int | None:
    return int(args.max_memory * 2**30) if args.max_memory > 0 else None  # 0: no limit


def _glue_negative_values(argv: list[str]) -> list[str]:
    """Let ``--dp -0.1,0`` reach our range check instead of argparse's option parser."""
    out: list[str] = []
    i = 0
    valued = ("--dp", "--mech", "-k", "--eps", "--delta", "--gaussian", "--laplace")
    while i < len(argv):
        tok = argv[i]
        if tok in valued and i + 1 < len(argv) and argv[i + 1][:1] == "-":
            nxt = argv[i + 1]
            if len(nxt) > 1 and (nxt[1].isdigit() or nxt[1] == "."):
                out.append(f"{tok}={nxt}")
                i += 2
                continue
        out.append(tok)
        i += 1
    return out


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _run(args: argparse.Namespace) -> tuple[str, int]:
    if args.command == "verify":
        return "", _cmd_verify(args)
    if args.command == "audit":
        return cli_audit.handle(args)
    if args.command == "calibrate":
        return cli_calibrate.handle(args)
    if args.command == "sweep":
        return cli_sweep.handle(args)
    if args.command == "formula":
        return cli_formula.handle(args), 0
    if args.command in cli_approx.COMMANDS:
        return cli_approx.handle(args), 0
    handlers = {
        "compose": _cmd_compose,
        "delta": _cmd_curve,
        "epsilon": _cmd_curve,
        "heterogeneous": _cmd_heterogeneous,
    }
    return handlers[args.command](args), 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpcompose`` console script; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(
            _glue_negative_values(list(sys.argv[1:] if argv is None else argv))
        )
    except SystemExit as exc:  # --help, --version (0) and usage errors (2, one line)
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    if args.command is None:
        parser.print_help()
        return 0
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", InactiveConstraintWarning)
            out, code = _run(args)
        for w in caught:
            if issubclass(w.category, InactiveConstraintWarning):
                sys.stderr.write(f"dpcompose: note: {_one_line(str(w.message))}\n")
        sys.stdout.write(out)
        sys.stdout.flush()
        return code
    except DPComposeError as exc:
        sys.stderr.write(f"dpcompose: error: {_one_line(str(exc))}\n")
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:  # writing the output (stdout, a figure)
        where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        sys.stderr.write(f"dpcompose: error: cannot write{where}: {exc.strerror or exc}\n")
        return 2
    except (ValueError, OverflowError, RecursionError, MemoryError, ZeroDivisionError) as exc:
        # inputs past a size the engine refuses late (huge numbers, deep nesting)
        sys.stderr.write(
            f"dpcompose: error: input too large or malformed ({type(exc).__name__}: "
            f"{_one_line(str(exc))[:200]})\n"
        )
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("dpcompose: interrupted\n")
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
