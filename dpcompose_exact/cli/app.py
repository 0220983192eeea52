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
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..engines.genfunc import DEFAULT_MEMORY_LIMIT
from ..errors import DPComposeError, InactiveConstraintWarning, InvalidParameterError
from ..numbers import parse_rational
from ..numbers.format import ROUNDINGS
from ..paper.theorems import THEOREM_K_LIMIT
from ..presentation.formats import format_names, output_format
from ..presentation.render import EXACT_CHOICES, LATEX_DIGITS, LATEX_SHORT, TABLE_SHORT
from ..regions.specs import DEFAULT_K, kinds_from_options, merge_kinds, parse_count
from . import approx as cli_approx
from . import audit as cli_audit
from . import calibrate as cli_calibrate
from . import formula as cli_formula
from . import summary as cli_summary
from . import sweep as cli_sweep
from .common import (
    EXACT_INPUT_HELP,
    MAX_DIGITS,
    SPEC_HELP,
    OneLineParser,
    add_method_option,
    add_subcommand,
    bounded_int,
    method_type,
    split_values,
)
from .progress import Activity, activity_of

if TYPE_CHECKING:
    from ..composition import Composition

DEFAULT_DIGITS = 30



def _family_spellings() -> str:
    """The registered mechanism families as ``--mech`` spells them, e.g. ``rr(P[,BUCKETS])``."""
    from ..mechanisms.families import load_entry_points
    from ..regions.specs import families

    load_entry_points()
    out = []
    for f in families().values():
        n = len(f.params) - len(f.defaults)
        req = [x.upper() for x in f.params[:n]]
        opt = "".join(f"[,{x.upper()}]" for x in f.params[n:])
        out.append(f"{f.short or f.name}({','.join(req)}{opt})")
    return ", ".join(out)

def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dpcompose_exact")
    except PackageNotFoundError:  # running from a source tree
        from .. import __version__

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
    names = format_names("composition")  # read when the parser is built: any registered
    formats = names if latex else tuple(f for f in names if f != "latex")
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
        f"{output_format('table').digits} in tables, {DEFAULT_DIGITS} in JSON and CSV, "
        f"{LATEX_DIGITS} in LaTeX; exact decimals such as 0.15 are printed in full)",
    )
    p.add_argument(
        "--exact",
        choices=EXACT_CHOICES,
        default="auto",
        help="closed-form deltas in table and latex output, written as polynomials in "
        "x = e^g (a line defines x): always, never, or auto "
        f"(table: full up to {TABLE_SHORT} characters, longer ones abbreviated with their "
        "length, the column left out with a note when most are longer; "
        f"latex: the column only when every closed form has at most {LATEX_SHORT} "
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
    p.add_argument(
        "--grid",
        default=None,
        metavar="H",
        help="loss-grid width of the certified bounds of Laplace and subsampled noise, in "
        "(0, 0.1]; finer is narrower and slower (default: about 1e-4)",
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
        metavar="SPEC[@Q]:COUNT",
        help="a mechanism kind and how often it is used; SPEC is EPS,DELTA[+EPS,DELTA...] "
        f"(constraints joined by +) or one of {_family_spellings()}; @Q runs it on a "
        "subsample of rate Q; repeat for a list of kinds (default: none; not with --dp/-k)",
    )
    p.add_argument(
        "--spec",
        metavar="FILE",
        help="TOML or JSON file of mechanism kinds, format above (default: none)",
    )
    add_method_option(
        p,
        "auto (the cheapest route that gives what is asked) | exact (generating "
        "functions; pld is an alias) | certified (ball arithmetic, exact structure) | "
        "bounds (certified two-sided bounds; delta and epsilon only) | theorem1 | theorem2 "
        f"| theorem3 (the paper's closed forms; theorem2/3 with one kind, k <= "
        f"{THEOREM_K_LIMIT}) (default auto)",
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
        type=method_type,
        choices=("auto", "exact", "certified", "theorem1"),
        metavar="{auto,exact,certified,theorem1}",
        help="auto (exact when it fits --max-memory, else certified) | exact (generating "
        "functions; pld is an alias) | certified | theorem1 (the paper's closed form, two "
        "kinds) (default auto)",
    )
    _add_output_options(ph)

    cli_audit.add_parser(sub)
    cli_calibrate.add_parser(sub)
    cli_approx.add_parsers(sub)
    cli_sweep.add_parser(sub)
    cli_formula.add_parser(sub)
    cli_summary.add_parser(sub, _add_composition_inputs)

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
    fmt = getattr(args, "format", None)
    return output_format(fmt).digits if fmt in format_names("composition") else DEFAULT_DIGITS


def _composition(args: argparse.Namespace) -> Composition:
    """The composition the input options describe, through the front door."""
    from .. import api

    kinds = merge_kinds(kinds_from_options(args.dp, args.k, args.mech, args.spec))
    curve = args.command in ("delta", "epsilon")
    return api.compose(
        kinds,
        method=args.method,
        digits=_digits(args),
        max_memory=_limit(args),
        closed_forms=_closed_forms(args),
        width=getattr(args, "width", None) if curve else None,
        progress=activity_of(args).fractions(),
        grid=getattr(args, "grid", None) if curve else None,
    )


def _closed_forms(args: argparse.Namespace) -> bool | str:
    """What the exact route's memory estimate assumes of the closed forms printed.

    JSON and CSV write the rows one at a time (``"streamed"``), unless ``--forms FILE``
    gathers every form first.
    """
    if args.command != "compose" or args.decimals_only:
        return False
    if getattr(args, "format", "") in ("json", "csv") and getattr(args, "forms", None) is None:
        return "streamed"
    return True


def _emit(c: Composition, args: argparse.Namespace, **query: Any) -> str | Iterator[str]:
    """Print a composition (or one of its curves) in the format asked for.

    The writer comes from the one registry of output formats
    (:mod:`dpcompose_exact.presentation.formats`, through ``Composition.write``).  JSON and
    CSV come as pieces: a large exact region is written row by row, with only one row's
    strings in memory at a time.
    """
    notes: list[str] = []
    text = c.write(
        args.format,
        digits=_digits(args),
        exact=not args.decimals_only,
        shown="never" if args.decimals_only else args.exact,
        rounding=args.rounding,
        forms_file=args.forms,
        caption=getattr(args, "caption", None),
        label=getattr(args, "label", ""),
        notes=notes,
        **query,
    )
    for note in notes:
        sys.stderr.write(f"dpcompose: note: {note}\n")
    return text


def _cmd_compose(args: argparse.Namespace) -> str | Iterator[str]:
    if args.method == "bounds":
        raise InvalidParameterError(
            "--method bounds gives delta(eps) and eps(delta) only: use dpcompose delta "
            "--eps ... or dpcompose epsilon --delta ... (compose prints a whole region)"
        )
    return _emit(_composition(args), args)


def _cmd_curve(args: argparse.Namespace) -> str | Iterator[str]:
    if args.command == "delta":
        query = {"delta_at": split_values(args.eps, "--eps") or []}
    else:
        query = {"epsilon_at": split_values(args.delta, "--delta") or []}
    return _emit(_composition(args), args, **query)


def _cmd_heterogeneous(args: argparse.Namespace) -> str | Iterator[str]:
    from .. import api

    mechs = [_parse_mech(t) for t in args.mech]
    c = api.heterogeneous_composition(mechs, max_memory=_limit(args), method=args.method)
    return _emit(c, args)


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


def _run(args: argparse.Namespace) -> tuple[str | Iterator[str], int]:
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
    if args.command == "summary":
        return cli_summary.handle(args, _composition), 0
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
            if args.command == "verify":  # prints its checks as they pass
                out, code = _run(args)
            else:
                with Activity(f"dpcompose {args.command}") as args.activity:
                    out, code = _run(args)
        for w in caught:
            if issubclass(w.category, InactiveConstraintWarning):
                sys.stderr.write(f"dpcompose: note: {_one_line(str(w.message))}\n")
        if isinstance(out, str):
            sys.stdout.write(out)
        else:  # an iterator of pieces (a large JSON result, written as it is made)
            for piece in out:
                sys.stdout.write(piece)
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
