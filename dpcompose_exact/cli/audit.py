"""``dpcompose audit``: check numeric accountants against the exact composition.

Hook into ``dpcompose`` with :func:`add_parser` (in ``build_parser``) and :func:`handle`
(in ``main``); ``python -m dpcompose_exact.cli.audit ...`` runs it standalone.

Inputs (as ``dpcompose compose``): ``--dp EPS,DELTA ... -k K``, or ``--mech SPEC ...``, or
``--spec FILE`` (default: the paper's Figure 2 case, eps = (0.3, 0.15),
delta = (0, 0.02), k = 20).  ``--eps`` values (delta(eps) compared; default 9 values from 0
to about eps(1e-6)) and ``--delta`` values (eps(delta) compared; default 1e-3, 1e-5, 1e-6),
each repeatable or comma-separated.  ``--format table|json``; ``--plot FILE`` draws the
exact curve, each accountant's curve, and the relative error on a log scale.

``--suite quick|standard`` runs a fixed set of cases on every installed accountant
(:mod:`dpcompose_exact.tools.audit.suite`) and prints the verdict matrix
(``--format table|json|csv|markdown|latex``); ``--store FILE`` keeps finished cells (a
rerun resumes), ``--workers N`` / ``--scheduler ADDRESS`` run the cases on Dask, and
``--repro DIR`` writes a standalone script for every UNSOUND or invalid-value row.

Exit status: 0 when every number a library presents as an upper bound is one, 1 when
one is not, 2 on bad input or when the accountants are not installed
(``pip install ".[audit]"``).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ..errors import DPComposeError, InvalidParameterError
from ..numbers.format import distinct_decimals, float_str
from ..optional import install_hint
from ..presentation.render import align, to_json
from ..regions.specs import DEFAULT_K, MechanismKind, kinds_from_options
from ..tools.audit import (
    ACCOUNTANTS,
    DEFAULT_PLD_GRID,
    DEFAULT_PRV_DELTA_ERROR,
    DEFAULT_PRV_EPS_ERROR,
    FLOAT_ULPS,
    AuditReport,
    AuditRow,
    audit,
)
from .common import (
    EXACT_INPUT_HELP,
    SPEC_HELP,
    add_method_option,
    add_subcommand,
    check_output,
    split_values,
)
from .progress import activity_of

__all__ = ["add_parser", "handle", "kinds_from_args", "format_table", "plot_report"]


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return n


def _float_in(lo: float, hi: float) -> Any:
    def parse(text: str) -> float:
        try:
            value = float(text)  # accountant settings are float parameters of the libraries
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not lo < value < hi:
            raise argparse.ArgumentTypeError(f"{text!r} must lie in ({lo:g}, {hi:g})")
        return value

    return parse


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``audit`` subcommand to an ``argparse`` subparsers object."""
    p = add_subcommand(
        subparsers,
        "audit",
        "audit numeric accountants (dp_accounting, prv_accountant) against the exact composition",
        "Compare the delta(eps) and eps(delta) reported by dp_accounting (PLD\n"
        "pessimistic/optimistic, RDP) and prv_accountant with the exact values; --suite runs\n"
        "the accountants of eight libraries that are installed: dp_accounting, prv_accountant,\n"
        "OpenDP, opake-accounting, autodp, gdpnum, fourier-accountant and dp-accelerator\n"
        "(the audit-peers extra; docs/ecosystem.md).  Exit status\n"
        "1 when a number presented as an upper bound is below the exact value; a number\n"
        f"below it by no more than the rounding of a double ({FLOAT_ULPS} ulps, relative\n"
        f"{FLOAT_ULPS} * 2^-52) is reported as sound up to float rounding (--strict: unsound).\n"
        "Needs the audit extra: "
        + install_hint("audit")
        + ".\n\n"
        + EXACT_INPUT_HELP
        + "\n\n"
        + SPEC_HELP,
        [
            "dpcompose audit                                   # the paper's case, k = 20",
            "dpcompose audit --dp 0.3,0 --dp 0.15,0.02 -k 100 --eps 0.5,1,2",
            'dpcompose audit --mech "0.5,0:3" --strict',
            "dpcompose audit --accountant pld_pessimistic --accountant rdp --format json",
            "dpcompose audit -k 50 --plot audit.png",
            "dpcompose audit --events examples/rr_selfcomposed.json",
            "dpcompose audit --suite quick --format json",
            "dpcompose audit --suite quick --accountant rdp --format markdown --repro findings",
        ],
    )
    p.add_argument(
        "--dp",
        action="append",
        metavar="EPS,DELTA",
        help="a constraint the mechanism satisfies; repeat for several (default: the "
        "paper's Figure 2 case --dp 0.3,0 --dp 0.15,0.02)",
    )
    p.add_argument(
        "-k", default=None, help=f"number of compositions with --dp (default {DEFAULT_K})"
    )
    p.add_argument(
        "--mech",
        action="append",
        metavar="EPS,DELTA[+EPS,DELTA...]:COUNT",
        help="a mechanism kind and how often it is used; repeat (default: none)",
    )
    p.add_argument(
        "--spec", metavar="FILE", help="TOML or JSON file of mechanism kinds (default: none)"
    )
    p.add_argument(
        "--events",
        metavar="FILE",
        help="a dp_accounting DpEvent tree as JSON (DpEvent.to_named_tuple as objects): the "
        "accountants run on the tree itself, next to its exact composition (default: none)",
    )
    p.add_argument(
        "--suite",
        metavar="NAME",
        help="run a fixed suite of cases (quick: Gaussian, subsampled Gaussian, randomized "
        "response, pure DP, Laplace; standard: the published conformance matrix, 24 cases) "
        "on every installed accountant and print the verdict matrix; noise goes to the "
        "libraries natively (default: none)",
    )
    p.add_argument(
        "--repro",
        metavar="DIR",
        help="with --suite: write a standalone script (calling only the library) for every "
        "UNSOUND or invalid-value row into DIR (default: none)",
    )
    p.add_argument(
        "--store",
        metavar="FILE",
        help="with --suite: keep each finished (case, accountant) cell in this SQLite file; "
        "a rerun resumes (default: none)",
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help="with --suite --store: recompute the cells in the store (default off)",
    )
    p.add_argument(
        "--workers",
        type=_positive_int,
        help="with --suite: run the cases on a local Dask cluster of N processes (default: "
        "in this process)",
    )
    p.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="with --suite: run the cases on an existing Dask cluster (default: none)",
    )
    p.add_argument(
        "--relation",
        choices=("ADD_OR_REMOVE_ONE", "REPLACE_ONE", "REPLACE_SPECIAL"),
        help="neighbouring relation of --events (default: the file's, else REPLACE_ONE for "
        "randomized response and fixed-size batches, ADD_OR_REMOVE_ONE otherwise)",
    )
    add_method_option(
        p,
        "how the exact curve is computed: auto (exact when it fits, else certified) | "
        "exact | certified (ball arithmetic) | bounds (default auto)",
        choices=("auto", "exact", "certified", "bounds"),
    )
    p.add_argument(
        "--eps",
        action="append",
        metavar="EPS[,EPS...]",
        help="eps values where delta(eps) is compared (repeat or comma-separate; default: "
        "9 values from 0 to about eps(1e-6))",
    )
    p.add_argument(
        "--delta",
        action="append",
        metavar="DELTA[,DELTA...]",
        help="delta values where eps(delta) is compared (repeat or comma-separate; default "
        "1e-3,1e-5,1e-6)",
    )
    p.add_argument(
        "--accountant",
        action="append",
        metavar="NAME",
        help=f"accountants to audit (repeat; {', '.join(ACCOUNTANTS)}, or an adapter another "
        "package registers; default: all installed)",
    )
    p.add_argument(
        "--pld-grid",
        type=_float_in(0.0, 1.0),
        default=DEFAULT_PLD_GRID,
        help="dp_accounting value_discretization_interval (default %(default)g)",
    )
    p.add_argument(
        "--prv-eps-error",
        type=_float_in(0.0, 10.0),
        default=DEFAULT_PRV_EPS_ERROR,
        help="prv_accountant eps_error (default %(default)g)",
    )
    p.add_argument(
        "--prv-delta-error",
        type=_float_in(0.0, 1.0),
        default=DEFAULT_PRV_DELTA_ERROR,
        help="prv_accountant delta_error (default %(default)g)",
    )
    p.add_argument(
        "--rtol",
        type=_float_in(-1e-300, 1.0),
        default=0.0,
        help="relative slack before an upper bound counts as unsound (default 0)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="exact comparison: an upper bound below the exact value by float rounding only "
        "is unsound too (default off)",
    )
    p.add_argument(
        "--format",
        choices=("table", "json", "csv", "markdown", "latex"),
        default="table",
        help="table or json; with --suite also csv (one line per number), markdown or latex "
        "(default table)",
    )
    p.add_argument(
        "--plot",
        metavar="FILE",
        help="write a figure (.png, .pdf or .svg, in an existing directory) (default: none)",
    )
    return p


def kinds_from_args(args: argparse.Namespace) -> list[MechanismKind]:
    """The mechanism kinds the ``--dp/-k``, ``--mech`` or ``--spec`` options describe."""
    return kinds_from_options(args.dp, args.k, args.mech, args.spec)


def _verdict(row: AuditRow) -> str:
    if row.sound is None:
        return "-"
    if row.float_rounding:
        return "yes, up to float rounding" if row.sound else "NO (float rounding)"
    return "yes" if row.sound else "NO"


def format_table(report: AuditReport) -> str:
    """Plain-text report: header, summary per series, every number."""
    mech = ", ".join(
        f"{k.count} x "
        + (
            "+".join(f"({e}, {d})" for e, d in k.constraints)
            if k.family == "dp" and k.subsample is None
            else k.describe()
        )
        for k in report.kinds
    )
    lines = [
        f"# audit of numeric accountants on {mech}; exact curve by {report.method}",
        "# versions: " + ", ".join(f"{n} {v}" for n, v in report.versions),
        "# settings: " + ", ".join(f"{n}={v:g}" for n, v in report.settings),
    ]
    for name, why in report.skipped:
        lines.append(f"# skipped {name}: {why}")
    lines.append("")
    head = ["series", "upper bound", "max rel.err delta", "max rel.err eps", "below exact", "sound"]
    body = []
    for s in report.summary():
        body.append(
            [
                s["series"],
                "yes" if s["upper_bound"] else "no",
                float_str(s["max_rel_error_delta"]),
                float_str(s["max_rel_error_epsilon"]),
                f"{s['below_exact']}/{s['numbers']}",
                "-"
                if s["sound"] is None
                else ("yes" if s["sound"] else "NO")
                + (f" ({s['float_rounding']} up to float rounding)" if s["float_rounding"] else ""),
            ]
        )
    lines += align(head, body)
    lines.append("")
    head = ["series", "quantity", "at", "reported", "exact", "rel.err", "sound"]
    body = []
    for r in report.rows:
        rep, ex = distinct_decimals(r.reported, r.exact)
        body.append([r.series, r.quantity, r.at, rep, ex, float_str(r.rel_error, 3), _verdict(r)])
    lines += align(head, body)
    lines.append("")
    bad = report.unsound_rows()
    rounding = [r for r in report.rows if r.float_rounding and r.sound]
    if bad:
        lines.append(
            f"# UNSOUND: {len(bad)} number(s) presented as upper bounds are below the exact value"
        )
    else:
        lines.append("# every number presented as an upper bound is one")
    if rounding:
        lines.append(
            f"# {len(rounding)} of them only up to float rounding: below the exact value by at "
            f"most {FLOAT_ULPS} ulps of a double (relative {FLOAT_ULPS} * 2^-52), what a float "
            "computation of the exact answer gives; --strict counts them as unsound"
        )
    return "\n".join(lines) + "\n"


def plot_report(report: AuditReport, path: str) -> None:
    """Figure: delta(eps) exact vs each series, and |relative error| on a log scale."""
    from ..optional import require
    from ..presentation.plot import style

    figure = require("matplotlib.figure", "dpcompose audit --plot", extra="audit")
    agg = require("matplotlib.backends.backend_agg", "dpcompose audit --plot", extra="audit")
    fig = figure.Figure(figsize=(10, 4.2))
    agg.FigureCanvasAgg(fig)
    ax1, ax2 = fig.subplots(1, 2)
    xs = [float(e) for e in report.eps_grid]
    exact = [float(d) for d in report.exact_delta]
    ax1.plot(xs, exact, label="exact", zorder=5, **(style(0) | {"linewidth": 2.2}))
    markers = "os^vD<>"
    for i, s in enumerate(report.series(), start=1):
        kw = style(i) | {"marker": markers[(i - 1) % len(markers)], "ms": 4, "linewidth": 1}
        rows = [r for r in report.rows if r.series == s and r.quantity == "delta"]
        ax1.plot(xs, [r.reported for r in rows], label=s, **kw)
        errs = [(x, abs(r.rel_error)) for x, r in zip(xs, rows) if r.exact != "0"]
        errs = [(x, e) for x, e in errs if math.isfinite(e) and e > 0]
        if errs:
            ax2.semilogy(*zip(*errs), label=s, **kw)
    ax1.set_yscale("log")
    ax1.set_xlabel("$\\varepsilon$")
    ax1.set_ylabel("$\\delta(\\varepsilon)$")
    ax1.set_title("privacy curve", fontsize=10)
    ax1.legend(fontsize=7)
    ax2.set_xlabel("$\\varepsilon$")
    ax2.set_ylabel("|reported $-$ exact| / exact")
    ax2.set_title("relative error in $\\delta$", fontsize=10)
    ax2.legend(fontsize=7)
    total = sum(k.count for k in report.kinds)
    fig.suptitle(f"accountant audit, {total} compositions ({report.method})")
    fig.tight_layout()
    fig.savefig(path, dpi=150)


def handle(args: argparse.Namespace) -> tuple[str, int]:
    """Run ``dpcompose audit``; returns ``(stdout text, exit status)``.

    Errors (bad input, missing accountants) go to stderr as one line with status 2.
    """
    if getattr(args, "suite", None):
        return _handle_suite(args)
    suite_only = [
        opt
        for opt, value in (
            ("--repro", getattr(args, "repro", None)),
            ("--store", getattr(args, "store", None)),
            ("--fresh", getattr(args, "fresh", None) or None),
            ("--workers", getattr(args, "workers", None)),
            ("--scheduler", getattr(args, "scheduler", None)),
        )
        if value is not None
    ]
    if getattr(args, "format", "table") not in ("table", "json"):
        suite_only.append(f"--format {args.format}")
    if suite_only:
        sys.stderr.write(f"dpcompose: error: {', '.join(suite_only)} needs --suite\n")
        return "", 2
    if getattr(args, "events", None):
        return _handle_events(args)
    try:
        kinds = kinds_from_args(args)
        if args.plot:
            check_output(args.plot, (".png", ".pdf", ".svg"), "--plot")
        report = audit(
            kinds,
            eps_grid=split_values(args.eps, "--eps"),
            deltas=split_values(args.delta, "--delta"),
            accountants=tuple(dict.fromkeys(args.accountant)) if args.accountant else None,
            pld_grid=args.pld_grid,
            prv_eps_error=args.prv_eps_error,
            prv_delta_error=args.prv_delta_error,
            rtol=args.rtol,
            method=args.method,
            exact_comparison=args.strict,
        )
        if args.plot:
            try:
                plot_report(report, args.plot)
            except OSError as exc:
                raise InvalidParameterError(f"--plot {args.plot!r}: {exc}") from None
    except DPComposeError as exc:
        sys.stderr.write(f"dpcompose: error: {exc}\n")
        return "", 2
    for name, why in report.skipped:
        sys.stderr.write(f"dpcompose: note: skipped {name}: {why}\n")
    payload = {"command": "audit", **report.as_dict()}
    out = to_json(payload) + "\n" if args.format == "json" else format_table(report)
    return out, 0 if report.sound else 1


def _handle_events(args: argparse.Namespace) -> tuple[str, int]:
    """``dpcompose audit --events FILE``: the accountants on the tree itself."""
    from ..tools.audit import audit_event_tree, format_event_table, load_events, registry
    from ..tools.audit.tree_audit import tree_adapters

    try:
        if args.dp or args.mech or args.spec or args.k is not None or args.plot:
            raise InvalidParameterError(
                "--events audits a DpEvent tree: do not combine it with --dp, -k, --mech, "
                "--spec or --plot"
            )
        readers = {a.name: t for t, a in tree_adapters().items()}
        names = list(dict.fromkeys(args.accountant or readers))
        for name in names:
            if name not in readers:
                why = (
                    "dp_accounting's PLDAccountant has no optimistic mode"
                    if name == "pld_optimistic"
                    else "it does not read DpEvent trees"
                    if name in registry()
                    else "no such accountant"
                )
                raise InvalidParameterError(
                    f"--accountant {name}: {why}; on an event tree choose "
                    f"{', '.join(list(readers)[:-1])} or {list(readers)[-1]}"
                )
        event, relation = load_events(args.events)
        report = audit_event_tree(
            event,
            neighboring_relation=args.relation or relation,
            eps_grid=split_values(args.eps, "--eps"),
            deltas=split_values(args.delta, "--delta"),
            accountants=tuple(readers[n] for n in names),
            pld_grid=args.pld_grid,
            prv_eps_error=args.prv_eps_error,
            prv_delta_error=args.prv_delta_error,
            rtol=args.rtol,
            exact_comparison=args.strict,
        )
    except DPComposeError as exc:
        sys.stderr.write(f"dpcompose: error: {exc}\n")
        return "", 2
    return _printed(report, args, format_event_table)


def _handle_suite(args: argparse.Namespace) -> tuple[str, int]:
    """``dpcompose audit --suite NAME``: every accountant on a fixed set of cases."""
    from ..tools.audit.matrix import MATRIX_FORMATS
    from ..tools.audit.repro import write_repros
    from ..tools.audit.suite import audit_suite

    try:
        given = [
            opt
            for opt, value in (
                ("--dp", args.dp),
                ("-k", args.k),
                ("--mech", args.mech),
                ("--spec", args.spec),
                ("--events", args.events),
                ("--plot", args.plot),
                ("--eps", args.eps),
                ("--delta", args.delta),
                ("--strict", args.strict or None),
            )
            if value is not None
        ]
        if given:
            raise InvalidParameterError(
                f"--suite runs fixed cases: do not combine it with {', '.join(given)}"
            )
        report = audit_suite(
            args.suite,
            accountants=tuple(dict.fromkeys(args.accountant)) if args.accountant else None,
            pld_grid=args.pld_grid,
            prv_eps_error=args.prv_eps_error,
            prv_delta_error=args.prv_delta_error,
            rtol=args.rtol,
            store=args.store,
            resume=not args.fresh,
            workers=args.workers,
            scheduler=args.scheduler,
            progress=activity_of(args).counter(),
        )
        if args.repro:
            options = {"pld_grid": args.pld_grid, "prv_eps_error": args.prv_eps_error}
            options["prv_delta_error"] = args.prv_delta_error
            paths = write_repros(report, args.repro, options)
            sys.stderr.write(
                f"dpcompose: note: wrote {len(paths)} reproduction script(s) to {args.repro}\n"
            )
    except DPComposeError as exc:
        sys.stderr.write(f"dpcompose: error: {exc}\n")
        return "", 2
    for name, why in report.skipped:
        sys.stderr.write(f"dpcompose: note: skipped {name}: {why}\n")
    return MATRIX_FORMATS[args.format](report), 0 if report.sound else 1


def _printed(report: Any, args: argparse.Namespace, text: Any) -> tuple[str, int]:
    """A report's skipped accountants as notes on stderr, the report as JSON or ``text``.

    Exit status 1 when a number presented as an upper bound is below the truth.
    """
    for name, why in report.skipped:
        sys.stderr.write(f"dpcompose: note: skipped {name}: {why}\n")
    if args.format == "json":
        out = to_json({"command": "audit", **report.as_dict()}) + "\n"
    else:
        out = text(report)
    return out, 0 if report.sound else 1
