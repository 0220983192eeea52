"""The audit suite's verdict matrix as text: one small function per output format.

:data:`MATRIX_FORMATS` maps each ``--format`` of ``dpcompose audit --suite`` to a
function ``report -> str``: ``table`` (aligned plain text), ``json`` (the report with rows
of exactly :data:`~dpcompose_exact.tools.audit.suite.JSON_ROW_KEYS`), ``csv`` (those rows,
one line each), ``markdown`` and ``latex`` (the matrix, the verdict counts and the
findings).  The tables are written by the presentation layer's one writer per format
(:func:`~dpcompose_exact.presentation.render.align`,
:func:`~dpcompose_exact.presentation.render.markdown_table`,
:func:`~dpcompose_exact.presentation.render.latex_table`,
:func:`~dpcompose_exact.presentation.render.to_csv`,
:func:`~dpcompose_exact.presentation.render.to_json`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ...numbers.format import float_str
from ...presentation.render import align, latex_table, markdown_table, to_csv, to_json

__all__ = [
    "MATRIX_FORMATS",
    "matrix_cells",
    "count_cells",
    "finding_lines",
    "matrix_table",
    "format_matrix",
    "matrix_json",
    "matrix_csv",
    "matrix_markdown",
    "matrix_latex",
    "family_cells",
    "maintainer_reports",
    "WIDTH",
    "LEGEND",
    "SHORT",
]


def _cell_text(verdict: str, rel: float) -> str:
    if verdict in ("UNSOUND", "sound", "sound up to float rounding") and math.isfinite(rel):
        if verdict == "UNSOUND" or rel != 0:
            return f"{verdict} {100 * rel:+.3g}%"
    return verdict or "-"


WIDTH = 120
"""The widest line of the text matrix (``--format table``)."""

SHORT = {
    "material": "MAT",
    "small": "small",
    "float accumulation": "facc",
    "float rounding": "ok~",
    "sound": "ok",
    "crashed": "crash",
    "invalid value": "invalid",
    "undecided": "?",
    "not checked": "n/c",
    "unsupported": "-",
}
"""The short word of each grade and verdict in the compact matrix (its legend)."""

LEGEND = (
    "MAT, small, facc: a guarantee on the wrong side of the certified truth (UNSOUND) by a "
    "material amount\n(relative error beyond 1e-6), a small one, or float accumulation "
    "(beyond 4 ulps, within 1e-10);\nok~: sound up to float rounding; ok: sound; ?: "
    "undecided; n/c: not checked (an estimate); -: unsupported.\nThe percentage is the "
    "worst relative error: negative is an upper bound's shortfall, positive a lower\n"
    "bound (beta) too high.  A cell counts its rows of the worst grade (3 MAT: three numbers)."
)


def _grade(row: Any) -> str:
    """The row's grade for the compact matrix: its severity, else its verdict."""
    return row.severity or row.verdict


_ORDER = ("material", "small", "float accumulation", "crashed", "invalid value", "undecided",
          "float rounding", "sound", "not checked", "unsupported")  # fmt: skip


def _family_cell(rows: list[Any], with_error: bool) -> str:
    if not rows:
        return ""
    worst = min((_grade(r) for r in rows), key=_ORDER.index)
    same = [r for r in rows if _grade(r) == worst]
    text = SHORT[worst]
    if worst in ("material", "small", "float accumulation", "crashed", "invalid value"):
        text = f"{len(same)} {text}"
    rels = [r.relative_error for r in same if math.isfinite(r.relative_error)]
    if with_error and rels and worst in ("material", "small", "float accumulation"):
        text += f" {100 * max(rels, key=abs):+.3g}%"
    return text


def family_cells(report: Any, with_error: bool = True) -> tuple[list[str], list[list[str]]]:
    """``(head, body)``: an accountant (series) per row, a case family per column.

    A cell is the worst grade of the series' numbers on the family's cases
    (:data:`SHORT`, :data:`LEGEND`): an ``UNSOUND`` grade with how many numbers have it and
    the worst relative error in percent.
    """
    from .suite import family_of

    families = list(dict.fromkeys(family_of(c) for c in report.cases))
    by: dict[tuple[str, str], list[Any]] = {}
    for r in report.rows:
        by.setdefault((r.accountant, family_of(r.case)), []).append(r)
    head = ["accountant", *families]
    body = [
        [a, *(_family_cell(by.get((a, f), []), with_error) for f in families)]
        for a in report.accountants()
    ]
    return head, body


def _fitted(lines_of: Callable[[bool], list[str]]) -> list[str]:
    """The lines with relative errors, or without them when a line passes :data:`WIDTH`."""
    lines = lines_of(True)
    return lines if max(map(len, lines), default=0) <= WIDTH else lines_of(False)


def matrix_cells(report: Any) -> tuple[list[str], list[list[str]]]:
    """``(head, body)``: a case per row, an accountant per column, the worst verdict.

    An ``UNSOUND`` cell carries its largest relative error in percent; a ``sound`` cell
    the relative error of its worst row (how loose the bound is there).
    """
    accountants = report.accountants()
    head = ["case", *accountants]
    body = [
        [case, *(_cell_text(*report.cell(a, case)) for a in accountants)] for case in report.cases
    ]
    return head, body


def count_cells(report: Any) -> tuple[list[str], list[list[str]]]:
    """``(head, body)``: per accountant, its claims and how many numbers got each grade.

    The grades are the verdicts with ``UNSOUND`` split by severity (``MAT``, ``small``,
    ``facc``) and ``sound up to float rounding`` as ``ok~`` (:data:`SHORT`).
    """
    from .suite import VERDICTS

    counts: dict[str, dict[str, int]] = {}
    for r in report.rows:
        per = counts.setdefault(r.accountant, {})
        per[_grade(r)] = per.get(_grade(r), 0) + 1
    used = [v for v in _ORDER if any(v in c for c in counts.values())]
    assert all(v in _ORDER for v in VERDICTS if v not in ("UNSOUND", "sound up to float rounding"))
    head = ["accountant", "claims", *(SHORT[v] for v in used)]
    body = []
    for a in report.accountants():
        claims = sorted(
            {
                r.claim.split()[0]
                for r in report.rows
                if r.accountant == a and r.claim not in ("", "-")
            }
        )
        body.append([a, "/".join(claims) or "-", *(str(counts[a].get(v, 0)) for v in used)])
    return head, body


def _short(text: str, up: bool, digits: int = 13) -> str:
    """A certified decimal end rounded outward to ``digits`` significant digits."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal

    if text == "inf":
        return text
    rounding = ROUND_CEILING if up else ROUND_FLOOR
    return str(Context(prec=digits, rounding=rounding).plus(Decimal(text)))


def finding_lines(report: Any) -> list[str]:
    """One line per finding, the most severe first: the number next to the truth.

    ``UNSOUND`` rows carry their severity (``UNSOUND (material)``); the relative error is
    signed as in :attr:`~dpcompose_exact.tools.audit.suite.SuiteRow.sign_note`.
    """
    out = []
    for r in report.findings():
        at = f" at {r.at}" if r.at else ""
        truth = (
            "no certified reference"
            if r.exact_lower is None
            else f"certified [{_short(r.exact_lower, False)}, {_short(r.exact_upper, True)}]"
        )
        rel = (
            f", relative error {float_str(r.relative_error, 3)}"
            if math.isfinite(r.relative_error)
            else ""
        )
        grade = f"UNSOUND ({r.severity})" if r.verdict == "UNSOUND" else r.verdict
        out.append(
            f"{grade}: {r.accountant} ({r.library} {r.version}) on {r.case}: "
            f"{r.quantity}{at} reported {r.reported!r} ({r.claim}), {truth}{rel}"
        )
    return out


def _header(report: Any) -> list[str]:
    lines = [f"audit suite {report.suite}: each accountant on each case family, the worst grade"]
    lines.append("settings: " + ", ".join(f"{n}={v:g}" for n, v in report.settings))
    lines.append("versions: " + ", ".join(report.versions()))
    lines += [f"skipped {name}: {why}" for name, why in report.skipped]
    return lines


def matrix_table(report: Any) -> str:
    """Aligned plain text: the family matrix, its legend, the counts, the findings.

    The matrix has an accountant per line and a case family per column
    (:func:`family_cells`), at most :data:`WIDTH` characters wide; the findings (``#``
    comment lines) are sorted by severity.
    """
    import textwrap

    lines = [
        f"# {part}"
        for x in _header(report)
        for part in textwrap.wrap(x, WIDTH - 2, subsequent_indent="  ", break_on_hyphens=False)
    ] + [""]
    lines += _fitted(lambda err: align(*family_cells(report, err))) + [""]
    lines += [f"# {x}" for x in LEGEND.splitlines()] + [""]
    lines += align(*count_cells(report)) + [""]
    found = finding_lines(report)
    if found:
        lines.append(f"# {len(found)} finding(s):")
        lines += [f"#   {x}" for x in found]
    else:
        lines.append("# every number presented as a guarantee is one (or undecided)")
    return "\n".join(lines) + "\n"


format_matrix = matrix_table
"""The default text of the matrix (``--format table``)."""


def matrix_json(report: Any) -> str:
    """The report as one JSON object (``command``: ``audit``)."""
    return to_json({"command": "audit", **report.as_dict()}) + "\n"


def matrix_csv(report: Any) -> str:
    """The rows as CSV: the columns of the JSON rows, one number per line."""
    from .suite import JSON_ROW_KEYS

    rows = []
    for r in report.rows:
        d = r.as_dict()
        rows.append({k: "" if d[k] is None else str(d[k]) for k in JSON_ROW_KEYS})
    return to_csv(rows) if rows else ",".join(JSON_ROW_KEYS) + "\n"


def _truth(row: Any) -> str:
    if row.exact_lower is None:
        return "no certified reference"
    lo, hi = _short(row.exact_lower, False), _short(row.exact_upper, True)
    return lo if lo == hi else f"[{lo}, {hi}]"


def _query(row: Any) -> str:
    if row.quantity == "delta":
        return f"delta(eps={row.at})"
    if row.quantity == "epsilon":
        return f"eps(delta={row.at})"
    if row.quantity == "renyi":
        return f"RDP at order {row.at}"
    if row.quantity == "beta":
        return f"beta(alpha={row.at})"
    return "GDP mu" if row.quantity == "gdp_mu" else row.quantity


def _claim_text(report: Any, series: str, claim: str) -> str:
    """What the library claims for ``series``, quoted when its adapter recorded the words."""
    from .adapters import registry

    for adapter in registry().values():
        for s in adapter.series:
            if s.name == series:
                said = s.quote or s.label or series
                return f"{said} (the audit judges each number as {claim}s)"
    return f"{series} (judged as {claim}s)"


def _options(report: Any) -> dict[str, Any]:
    """The library settings of a report, as :class:`~.adapters.Job` options."""
    s = dict(report.settings)
    return {
        "pld_grid": s.get("pld_value_discretization_interval", 1e-4),
        "prv_eps_error": s.get("prv_eps_error", 0.01),
        "prv_delta_error": s.get("prv_delta_error", 1e-9),
    }


def _repro_text(report: Any, row: Any) -> str | None:
    """The reproduction script of one finding (None when its case is not the suite's)."""
    from .adapters import get
    from .repro import repro_script
    from .suite import SUITES, _job

    cases = {c.name: c for c in SUITES[report.suite]()} if report.suite in SUITES else {}
    case = cases.get(row.case)
    if case is None:
        return None
    try:
        job = _job(case, case.build(), _options(report))
        source = get(row.adapter).repro_source(job, row.accountant, row.quantity, row.at)
    except Exception:  # noqa: BLE001 - the report is written without the script
        return None
    return repro_script(row, source, row.case)


def maintainer_reports(report: Any, scripts: bool = True) -> list[str]:
    """Markdown lines: per library, a report its maintainers can paste into an issue.

    For each library with findings or crashes: what it claims (its words, quoted), a
    table of its findings (the case, the query, its number, the certified truth, the
    relative error, the severity, the reproduction script's name as ``--repro`` writes
    it), the most severe finding's script in full (``scripts``), and its crashes with
    their classification (:mod:`~dpcompose_exact.tools.audit.failures`).
    """
    from .failures import classify
    from .repro import repro_name

    found = report.findings()
    index = {id(r): i for i, r in enumerate(found, start=1)}
    crashed = [r for r in report.rows if r.verdict == "crashed"]
    libraries = list(dict.fromkeys(f"{r.library} {r.version}" for r in found + crashed))
    out: list[str] = []
    for lib in libraries:
        mine = [r for r in found if f"{r.library} {r.version}" == lib]
        out += [f"### {lib}", ""]
        for series in dict.fromkeys(r.accountant for r in mine):
            rows = [r for r in mine if r.accountant == series]
            out.append(f"**{series}**: {_claim_text(report, series, rows[0].claim)}.")
            out.append("")
            head = ["case", "query", "its number", "certified truth", "relative error",
                    "severity", "reproduction"]  # fmt: skip
            body = [
                [
                    r.case,
                    _query(r),
                    repr(r.reported),
                    _truth(r),
                    float_str(r.relative_error, 3) if math.isfinite(r.relative_error) else "-",
                    r.severity or r.verdict,
                    f"`{repro_name(index[id(r)], r)}`",
                ]
                for r in rows
            ]
            out.append(markdown_table(head, body))
            signs = {r.sign_note for r in rows if r.sign_note}
            if signs:
                out += ["Sign of the relative error: " + "; ".join(sorted(signs)) + ".", ""]
            text = _repro_text(report, rows[0]) if scripts else None
            if text:
                out += [
                    "<details><summary>Reproduction of the first row (exits 1 while the "
                    "number is on the wrong side)</summary>",
                    "",
                    "```python",
                    text.rstrip("\n"),
                    "```",
                    "",
                    "</details>",
                    "",
                ]
        broken = [r for r in crashed if f"{r.library} {r.version}" == lib]
        keys: dict[str, int] = {}
        for r in broken:
            f = classify(r.library, r.note)
            k = f.key if f else "unclassified"
            keys[k] = keys.get(k, 0) + 1
        for k, n in keys.items():
            if k == "unclassified":
                out += [f"- {n} crashed row(s) not yet classified (see the JSON notes).", ""]
                continue
            from .failures import failure

            f = failure(k)
            out += [
                f"**Crash `{k}`** ({n} row(s)): `{f.exception}`.  What the library says it "
                f"supports: {f.supports}.  {f.verdict}  Reproduction: "
                + ("`timeout_*.py` (one per case)." if not f.repro else f"`crash_{k}.py`."),
                "",
            ]
    return out


def matrix_markdown(report: Any) -> str:
    """Markdown: the family matrix, the counts, the findings and the maintainer reports.

    The maintainer reports (:func:`maintainer_reports`) come last, one section per
    library, ready to paste into the library's issue tracker.
    """
    head = _header(report)
    lines = [f"**{head[0]}**", ""] + [f"- {x}" for x in head[1:]] + [""]
    lines.append(markdown_table(*family_cells(report)))
    lines += [" ".join(LEGEND.splitlines()), ""]
    lines.append(markdown_table(*count_cells(report)))
    found = finding_lines(report)
    if found:
        lines += [f"{len(found)} finding(s), the most severe first:", ""]
        lines += [f"- {x}" for x in found] + [""]
    else:
        lines += ["Every number presented as a guarantee is one (or undecided).", ""]
    reports = maintainer_reports(report)
    if reports:
        lines += ["## Reports for the maintainers", ""] + reports
    return "\n".join(lines).rstrip("\n") + "\n"


def matrix_latex(report: Any) -> str:
    """LaTeX: the matrix and the verdict counts as booktabs tables."""
    caption = _header(report)[0]
    out = latex_table(*matrix_cells(report), caption=caption)
    out += latex_table(*count_cells(report), caption=f"{report.suite}: verdicts per accountant")
    return out


MATRIX_FORMATS: dict[str, Callable[[Any], str]] = {
    "table": matrix_table,
    "json": matrix_json,
    "csv": matrix_csv,
    "markdown": matrix_markdown,
    "latex": matrix_latex,
}
"""``--format`` name -> ``report -> text`` of the audit suite."""
