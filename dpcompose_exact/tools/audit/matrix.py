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
]


def _cell_text(verdict: str, rel: float) -> str:
    if verdict in ("UNSOUND", "sound", "sound up to float rounding") and math.isfinite(rel):
        if verdict == "UNSOUND" or rel != 0:
            return f"{verdict} {100 * rel:+.3g}%"
    return verdict or "-"


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
    """``(head, body)``: per accountant, its claim and how many numbers got each verdict."""
    from .suite import VERDICTS

    counts = report.counts()
    used = [v for v in VERDICTS if any(v in c for c in counts.values())]
    head = ["accountant", "claims", *used]
    body = []
    for a in report.accountants():
        claims = sorted(
            {r.claim for r in report.rows if r.accountant == a and r.claim not in ("", "-")}
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
    """One line per ``UNSOUND`` or ``invalid value`` row: the number next to the truth."""
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
        out.append(
            f"{r.verdict}: {r.accountant} ({r.library} {r.version}) on {r.case}: "
            f"{r.quantity}{at} reported {r.reported!r} ({r.claim}), {truth}{rel}"
        )
    return out


def _header(report: Any) -> list[str]:
    lines = [f"audit suite {report.suite}: each accountant on each case, the worst verdict"]
    lines.append("settings: " + ", ".join(f"{n}={v:g}" for n, v in report.settings))
    lines.append("versions: " + ", ".join(report.versions()))
    lines += [f"skipped {name}: {why}" for name, why in report.skipped]
    return lines


def matrix_table(report: Any) -> str:
    """Aligned plain text: the matrix, the counts, the findings (``#`` comment lines)."""
    lines = [f"# {x}" for x in _header(report)] + [""]
    lines += align(*matrix_cells(report)) + [""]
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


def matrix_markdown(report: Any) -> str:
    """Markdown: the matrix, the verdict counts, the findings as a list."""
    head = _header(report)
    lines = [f"**{head[0]}**", ""] + [f"- {x}" for x in head[1:]] + [""]
    lines.append(markdown_table(*matrix_cells(report)))
    lines.append(markdown_table(*count_cells(report)))
    found = finding_lines(report)
    if found:
        lines += [f"{len(found)} finding(s):", ""] + [f"- {x}" for x in found]
    else:
        lines.append("Every number presented as a guarantee is one (or undecided).")
    return "\n".join(lines) + "\n"


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
