"""The ``dpcompose`` command line.

Subcommands:

* ``compose --dp EPS,DELTA [--dp ...] -k K [--method auto|pld|theorem2|theorem3]``
  composes K copies of a mechanism satisfying all given constraints (default: the paper's
  Figure 2 case, eps = (0.3, 0.15), delta = (0, 0.02), k = 20).
* ``heterogeneous --mech EPS:COUNT [--mech ...] [--method auto|pld|theorem1]`` composes
  COUNT copies of each pure EPS-DP mechanism.
* ``compose --mech "EPS,DELTA[+EPS,DELTA...]:COUNT" [--mech ...]`` or ``--spec FILE``
  composes any list of multi-constraint mechanisms; ``--certified`` uses ball arithmetic
  (chosen automatically when the exact result would not fit in memory).
* ``delta --eps E`` and ``epsilon --delta D`` (same inputs) print the privacy curve.
* ``approx --gaussian MU | --laplace EPS`` approximates f-DP by DP constraints
  (Propositions 1-2), ``plot`` draws regions, ``audit`` checks numeric accountants.
* ``verify`` runs the symbolic proof checks of ``proofs_checks``.

Output: ``--format table|json|csv|latex``, ``--digits N``, ``--decimals-only``.
Bad input gives one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from fractions import Fraction
from typing import NoReturn

from . import cli_approx, cli_audit, cli_sweep
from .certified import CertifiedRegion, stderr_progress
from .compose import DEFAULT_MEMORY_LIMIT
from .curves import delta_of_eps, eps_of_delta
from .errors import DPComposeError, InactiveConstraintWarning, InvalidParameterError
from .mechanisms import (
    DEFAULT_DP,
    DEFAULT_K,
    MechanismKind,
    compose_mechanisms,
    kinds_from_options,
    parse_count,
    parse_dp_pair,
    parse_k,
)
from .render import region_rows, to_csv, to_json, to_latex, to_table
from .theorems import METHODS, compose, heterogeneous_composition, theorem1_closed_form
from .tradeoff import Region, dp_region

# Theorems 2 and 3 are enumerations in Python (O(k^3) terms): keep them for checking.
THEOREM_K_LIMIT = 60


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


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


def _add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("table", "json", "csv", "latex"), default="table")
    p.add_argument(
        "--digits", type=_positive_int, default=30, help="significant digits (default 30)"
    )
    p.add_argument(
        "--decimals-only",
        action="store_true",
        help="leave the exact closed forms out (json/csv/table)",
    )
    p.add_argument(
        "--max-memory",
        type=_memory_gib,
        default=Fraction(DEFAULT_MEMORY_LIMIT, 2**30),
        metavar="GIB",
        help="refuse (or, automatically, go certified for) exact computations estimated to "
        "need more memory; 0 means no limit (default 6)",
    )


def _add_composition_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dp",
        action="append",
        metavar="EPS,DELTA",
        help="a constraint the mechanism satisfies; repeat for several (default: "
        "the paper's Figure 2 case 0.3,0 and 0.15,0.02)",
    )
    p.add_argument(
        "-k", type=str, default=None, help=f"number of compositions (default {DEFAULT_K})"
    )
    p.add_argument(
        "--mech",
        action="append",
        metavar="EPS,DELTA[+EPS,DELTA...]:COUNT",
        help="a mechanism kind and how often it is used; repeat for a heterogeneous list",
    )
    p.add_argument("--spec", metavar="FILE", help="TOML or JSON file of mechanism kinds")
    p.add_argument("--method", default="auto", help="auto|pld|theorem2|theorem3 (with --dp)")
    p.add_argument(
        "--certified",
        action="store_true",
        help="ball arithmetic with exact structure (default: automatic for large k)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``dpcompose``."""
    parser = _OneLineParser(
        prog="dpcompose",
        description="Exact composition of differentially private mechanisms that satisfy "
        "several (eps, delta) constraints at once.",
    )
    sub = parser.add_subparsers(dest="command", parser_class=_OneLineParser)

    pc = sub.add_parser("compose", help="compose K copies of a multi-constraint mechanism")
    _add_composition_inputs(pc)
    _add_output_options(pc)

    pd = sub.add_parser("delta", help="delta(eps) of a composition, exact and certified")
    _add_composition_inputs(pd)
    pd.add_argument("--eps", action="append", required=True, metavar="EPS")
    _add_output_options(pd)

    pe = sub.add_parser("epsilon", help="eps(delta) of a composition, exact and certified")
    _add_composition_inputs(pe)
    pe.add_argument("--delta", action="append", required=True, metavar="DELTA")
    _add_output_options(pe)

    ph = sub.add_parser("heterogeneous", help="compose pure-DP mechanisms of several kinds")
    ph.add_argument("--mech", action="append", metavar="EPS:COUNT", required=True)
    ph.add_argument("--method", default="auto", help="auto|pld|theorem1")
    _add_output_options(ph)

    cli_audit.add_parser(sub)
    cli_approx.add_parsers(sub)
    cli_sweep.add_parser(sub)

    pv = sub.add_parser("verify", help="run the symbolic proof checks (proofs_checks)")
    pv.add_argument("names", nargs="*", help="checks to run (default: all)")
    pv.add_argument("--quick", action="store_true", help="smaller scopes, for a fast run")
    pv.add_argument("--list", action="store_true", help="list the checks and exit")
    return parser


def _parse_mech(text: str) -> tuple[str, int]:
    eps, sep, count = text.rpartition(":")
    if not sep or not eps.strip():
        raise InvalidParameterError(
            f"--mech {text!r} is malformed; expected EPS:COUNT such as 0.5:3"
        )
    return eps.strip(), parse_count(count, f"--mech {text!r}")


def _emit(
    region: Region | CertifiedRegion, args: argparse.Namespace, meta: dict, title: str
) -> str:
    exact = not args.decimals_only
    if args.format == "latex":
        return to_latex(region, digits=args.digits, caption=title)
    rows = region_rows(region, digits=args.digits, exact=exact)
    if args.format == "json":
        return to_json({**meta, "region": rows}) + "\n"
    if args.format == "csv":
        return to_csv(rows)
    return to_table(rows, title=title)


def _mechanism_meta(region: Region) -> list[dict[str, str]]:
    dom = region.domain
    return [
        {"epsilon": dom.loss_str(loss), "delta": dom.elem_str(d)} for loss, d in region.constraints
    ]


def _composition(args: argparse.Namespace) -> tuple[Region | CertifiedRegion, dict, str]:
    """Compute the composition the input options describe; returns (region, meta, title)."""
    if args.method not in METHODS:
        raise InvalidParameterError(
            f"unknown method {args.method!r}; choose one of {', '.join(METHODS)}"
        )
    if args.mech or args.spec:
        kinds = kinds_from_options(args.dp, args.k, args.mech, args.spec)
        if args.method not in ("auto", "pld"):
            raise InvalidParameterError(f"--method {args.method} needs --dp and -k")
        mode = "certified" if args.certified else "auto"
        region, used = compose_mechanisms(
            kinds,
            mode=mode,
            digits=args.digits,
            memory_limit=_limit(args),
            progress=stderr_progress("dpcompose"),
        )
        meta = {
            "method": used,
            "mechanisms": [
                {"constraints": [list(c) for c in kind.constraints], "count": kind.count}
                for kind in kinds
            ],
        }
        title = "# composition of " + ", ".join(
            f"{kind.count} x " + "+".join(f"({e}, {d})" for e, d in kind.constraints)
            for kind in kinds
        )
        return region, meta, title + f"; method {used}"
    pairs = [parse_dp_pair(t) for t in (args.dp or list(DEFAULT_DP))]
    k = parse_k(args.k, DEFAULT_K)
    if args.method in ("theorem2", "theorem3") and k > THEOREM_K_LIMIT:
        raise InvalidParameterError(
            f"--method {args.method} enumerates O(k^3) terms; k = {k} is over its limit "
            f"{THEOREM_K_LIMIT}: use --method pld (same exact region)"
        )
    mech = dp_region(pairs, warn=False)  # the composition below warns once
    if args.method == "auto" or args.certified:
        mode = "certified" if args.certified else "auto"
        region, used = compose_mechanisms(
            [MechanismKind(tuple(pairs), k)],
            mode=mode,
            digits=args.digits,
            memory_limit=_limit(args),
            progress=stderr_progress("dpcompose"),
        )
    else:
        region, used = compose(pairs, k, method=args.method, memory_limit=_limit(args))
    meta = {"k": k, "method": used, "mechanism": _mechanism_meta(mech)}
    title = (
        f"# {k}-fold composition of a mechanism satisfying "
        + ", ".join(f"({p[0]}, {p[1]})" for p in pairs)
        + f"-DP; method {used}"
    )
    return region, meta, title


def _cmd_compose(args: argparse.Namespace) -> str:
    region, meta, title = _composition(args)
    if isinstance(region, CertifiedRegion):
        meta["certified"] = True
    return _emit(
        region, args, meta, title + "; region = intersection of R(epsilon, delta) over the rows"
    )


def _cmd_curve(args: argparse.Namespace) -> str:
    region, meta, title = _composition(args)
    exact = not args.decimals_only
    if args.command == "delta":
        points = [delta_of_eps(region, e, args.digits) for e in args.eps]
        title += "; delta(eps)"
    else:
        points = [eps_of_delta(region, d, args.digits) for d in args.delta]
        title += "; eps(delta)"
    rows = [p.as_dict(exact) for p in points]
    if args.format == "json":
        return to_json({**meta, "curve": rows}) + "\n"
    if args.format == "csv":
        return to_csv(rows)
    if args.format == "latex":
        raise InvalidParameterError("--format latex is for regions; use table, json or csv")
    return to_table(rows, title=title)


def _cmd_heterogeneous(args: argparse.Namespace) -> str:
    mechs = [_parse_mech(t) for t in args.mech]
    if args.method not in ("auto", "pld", "theorem1"):
        raise InvalidParameterError(
            f"unknown method {args.method!r}; choose one of auto, pld, theorem1"
        )
    if args.method == "theorem1":
        if len(mechs) != 2:
            raise InvalidParameterError("--method theorem1 needs exactly two --mech kinds")
        (e1, x), (e2, y) = mechs
        region, used = theorem1_closed_form(e1, x, e2, y), "theorem1"
    else:
        region, used = heterogeneous_composition(mechs, memory_limit=_limit(args)), "pld"
    meta = {
        "mechanisms": [{"epsilon": e, "count": n} for e, n in mechs],
        "method": used,
    }
    title = "# heterogeneous composition of " + ", ".join(f"{n} x {e}-DP" for e, n in mechs)
    return _emit(region, args, meta, title)


def _cmd_verify(args: argparse.Namespace) -> int:
    try:
        from proofs_checks import runner
    except ImportError as exc:  # pragma: no cover - packaging problem
        raise InvalidParameterError(f"proofs_checks is not installed ({exc})") from None
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
    while i < len(argv):
        tok = argv[i]
        if tok in ("--dp", "--mech", "-k") and i + 1 < len(argv) and argv[i + 1][:1] == "-":
            nxt = argv[i + 1]
            if len(nxt) > 1 and (nxt[1].isdigit() or nxt[1] == "."):
                out.append(f"{tok}={nxt}")
                i += 2
                continue
        out.append(tok)
        i += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpcompose`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(_glue_negative_values(list(sys.argv[1:] if argv is None else argv)))
    if args.command is None:
        parser.print_help()
        return 0
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", InactiveConstraintWarning)
            if args.command == "verify":
                return _cmd_verify(args)
            code = 0
            if args.command == "audit":
                out, code = cli_audit.handle(args)
            elif args.command == "sweep":
                out, code = cli_sweep.handle(args)
            elif args.command in cli_approx.COMMANDS:
                out = cli_approx.handle(args)
            else:
                handlers = {
                    "compose": _cmd_compose,
                    "delta": _cmd_curve,
                    "epsilon": _cmd_curve,
                    "heterogeneous": _cmd_heterogeneous,
                }
                out = handlers[args.command](args)
        for w in caught:
            if issubclass(w.category, InactiveConstraintWarning):
                sys.stderr.write(f"dpcompose: note: {w.message}\n")
        sys.stdout.write(out)
        return code
    except DPComposeError as exc:
        sys.stderr.write(f"dpcompose: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("dpcompose: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
