"""The presentation layer's writers: JSON, CSV, aligned tables, LaTeX tables.

Nothing here computes privacy: it turns results into text.  Exact values are written as
strings that ``sympy.sympify`` parses back (rationals, ``exp`` and ``log`` only, no
floating-point numbers); decimals come from the certified evaluation (correct to one
unit in the last place) and are only shortened here, never invented.

Numbers become strings in one place, :mod:`dpcompose_exact.numbers.format`, and rows are made
in :mod:`.rows`; this module lays out tables and LaTeX around them, with the one table aligner
(:func:`align`).  A LaTeX table is a typed column layout (:func:`latex_layout`: one
:class:`LatexColumn` per column, read from typed :class:`LatexRow` values) and a writer
(:func:`to_latex`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Any

from ..numbers import ExpDomain, QzElem
from ..numbers.format import (
    _latex_closed_form,
    check_rounding,
    directed_decimal,
    exact_or_rounded,
    latex_decimal,
    latex_epsilon,
    mpf_str,
    rounding_note,
)
from .naming import comment_block
from .readable import DIGIT_BREAK, Readable, parts_of, readable_many, x_definition

__all__ = [
    "latex_escape",
    "latex_table",
    "markdown_table",
    "format_brackets",
    "elem_closed_form",
    "to_json",
    "to_csv",
    "iter_csv",
    "to_table",
    "to_latex",
    "latex_layout",
    "LatexColumn",
    "LatexLayout",
    "LatexRow",
    "EpsForm",
    "ExactColumn",
    "align",
    "EXACT_CHOICES",
    "TABLE_SHORT",
    "LATEX_SHORT",
    "TABLE_EPS_DIGITS",
    "LATEX_DIGITS",
]

SHORT = 80  # readable closed forms up to this many characters are shown in tables
TABLE_SHORT = SHORT
LATEX_SHORT = 100  # --exact auto: LaTeX shows exact deltas when every one is this short
LATEX_EPS_LONG = 3000  # --exact auto: LaTeX shows exact eps(delta) up to this length
FRAC_SHORT = 48  # a LaTeX form is a \frac when its numerator and denominator are this short
CELL_LONG = 600  # LaTeX: an exact form longer than this (plain text) is listed after the table
CELL_CHARS = 40  # LaTeX: characters of plain text per line of the wrapping column (estimate)
TABLE_LINES = 40  # LaTeX: a table of more lines (estimated) is a longtable (breaks across pages)
READ_LIMIT = 60000  # --exact auto: longer closed forms are not rewritten (never shown)
TABLE_EPS_DIGITS = 12  # significant digits of irrational epsilons in the text table
LATEX_DIGITS = 3  # default significant digits of LaTeX decimals
EXACT_CHOICES = ("auto", "always", "never")


def elem_closed_form(domain: ExpDomain, x: QzElem) -> str:
    """Exact string of an element; the denominator is written factored (FLINT factor)."""
    return domain.elem_closed_form(x)


# ---------------------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------------------


def align(head: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    """The one aligner of plain-text tables: header, dashes, left-aligned columns.

    >>> align(["a", "bb"], [["xyz", "1"]])
    ['a    bb', '---  --', 'xyz  1']
    """
    widths = [max([len(h)] + [len(b[j]) for b in body]) for j, h in enumerate(head)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(c.ljust(w) for c, w in zip(b, widths)).rstrip() for b in body]
    return out


def latex_escape(text: str) -> str:
    r"""Text for LaTeX's text mode: the special characters escaped.

    >>> latex_escape("50% of k_1 & {x}")
    '50\\% of k\\_1 \\& \\{x\\}'
    """
    out = []
    for ch in text:
        if ch in "&%$#_{}":
            out.append("\\" + ch)
        elif ch == "~":
            out.append("\\textasciitilde{}")
        elif ch == "^":
            out.append("\\textasciicircum{}")
        elif ch == "\\":
            out.append("\\textbackslash{}")
        else:
            out.append(ch)
    return "".join(out)


def latex_table(head: Sequence[str], body: Sequence[Sequence[str]], caption: str = "") -> str:
    """The one plain booktabs table writer: text cells (escaped here), left-aligned.

    The region tables of :func:`to_latex` add math cells and column blocks around the same
    booktabs frame.
    """
    lines = [
        "\\begin{table}[htbp]",
        "\\centering",
        "\\begin{tabular}{" + "l" * len(head) + "}",
        "\\toprule",
        " & ".join(latex_escape(h) for h in head) + " \\\\",
        "\\midrule",
    ]
    lines += [" & ".join(latex_escape(c) for c in row) + " \\\\" for row in body]
    lines += ["\\bottomrule", "\\end{tabular}"]
    if caption:
        lines.append(f"\\caption{{{latex_escape(caption)}}}")
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


def to_json(payload: dict[str, Any]) -> str:
    """Serialize a result payload (one JSON object)."""
    return json.dumps(payload, indent=1)


def _directed_rows(rows: Sequence[dict[str, Any]]) -> bool:
    return bool(rows) and all("delta_rounded" in r or "epsilon_rounded" in r for r in rows)


def _directed_row(r: dict[str, Any], rounding: str) -> dict[str, Any]:
    """A row whose decimal columns print its directed decimals, and say which way."""
    if "delta_rounded" not in r and "epsilon_rounded" not in r:
        return r
    out = {k: v for k, v in r.items() if not k.endswith("_rounded")}
    for name in ("epsilon", "delta"):
        if f"{name}_rounded" in r:
            out[f"{name}_decimal"] = r[f"{name}_rounded"]
    out["rounding"] = rounding
    return out


def to_csv(rows: Iterable[dict[str, Any]], rounding: str = "up") -> str:
    """CSV with a header line (nested values such as ``delta_structured`` as JSON).

    When the rows carry directed decimals (``epsilon_rounded``, ``delta_rounded``, made
    with the direction ``rounding``), the columns ``epsilon_decimal`` and ``delta_decimal``
    print them, and a last column ``rounding`` says which way they were rounded (``up``
    by default: never below the exact values).
    """
    return "".join(iter_csv(rows, rounding))


def iter_csv(rows: Iterable[dict[str, Any]], rounding: str = "up") -> Iterator[str]:
    """The text of :func:`to_csv` in pieces, one row at a time (rows may be made lazily)."""
    check_rounding(rounding)
    buf = io.StringIO()
    writer = None
    union = None
    if isinstance(rows, Sequence):  # a list (a curve's rows): the columns of every row
        rows = [_directed_row(r, rounding) for r in rows]
        union = _flat_columns(rows)
    for r in rows:
        r = _directed_row(r, rounding)
        if writer is None:
            # flat columns only (a null cell, such as a relative_width with no lower end, is empty)
            fields = _flat_columns([r]) if union is None else union
            writer = csv.DictWriter(
                buf, fieldnames=fields, lineterminator="\n", extrasaction="ignore"
            )
            writer.writeheader()
            yield buf.getvalue()
            buf.seek(0)
            buf.truncate()
        cells = {k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in r.items()}
        line = _plain_csv_line([cells.get(k, "") for k in fields])
        if line is not None:  # what the writer would write, without copying the long forms
            yield line
            continue
        writer.writerow(cells)
        yield buf.getvalue()
        buf.seek(0)
        buf.truncate()


def _flat_columns(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The flat columns of ``rows``, in the order they first appear, ``rounding`` last.

    A curve's rows differ in their columns (an exact 0 prints ``delta_decimal``, an
    enclosure ``delta_lower`` and ``delta_upper``): the header holds every row's columns,
    and a row leaves the others empty.
    """
    fields: dict[str, None] = {}
    for r in rows:
        fields.update((k, None) for k, v in r.items() if isinstance(v, str) or v is None)
    if "rounding" in fields:
        del fields["rounding"]
        fields["rounding"] = None
    return list(fields)


_X = re.compile(r"(?<![A-Za-z])x(?![A-Za-z])")


class _Forms:
    """Readable forms (:mod:`.readable`) of the exact deltas and ``log`` epsilons of rows.

    Every form of the rows is written over one ``x = e^{g}``; a form longer than
    ``max_len`` characters (JSON text), or one outside the language of closed forms, has
    none (the caller then prints the JSON text or a reference).
    """

    def __init__(
        self, rows: Sequence[dict[str, Any]], max_len: int | None, enabled: bool = True
    ) -> None:
        n = len(rows)
        deltas = [r.get("delta") if enabled else None for r in rows]
        epss = [
            r.get("epsilon") if enabled and _is_log_form(r.get("epsilon")) else None for r in rows
        ]
        self.g, red = readable_many(deltas + epss, max_len)
        self.delta: list[Readable | None] = red[:n]
        self.eps: list[Readable | None] = red[n:]

    def delta_text(self, i: int) -> str | None:
        """The readable plain text of row ``i``'s delta (None when there is none)."""
        red = self.delta[i]
        return red.text() if red is not None else None

    def eps_text(self, i: int) -> str | None:
        """The readable plain text of row ``i``'s exact ``log`` epsilon (or None)."""
        red = self.eps[i]
        return red.text() if red is not None else None


def _is_log_form(text: Any) -> bool:
    """Whether an exact epsilon is ``log(...)`` of a form with exponentials (its parts say)."""
    parts = parts_of(text)
    return parts is not None and parts.log and parts.exponents()[0] is not None


def _uses_x(cells: Iterable[str]) -> bool:
    return any(_X.search(c) for c in cells if c and not c.startswith("["))


_CSV_SPECIAL = re.compile(r'[,"\r\n]')


def _plain_csv_line(values: list[Any]) -> str | None:
    """The CSV line of ``values`` when no cell needs quoting (else None: use the writer).

    The csv module quotes a cell only when it holds a comma, a quote or a line break (or
    is the one empty cell of a row); a closed form of megabytes holds none, and copying it
    through the writer's buffer costs more than making it.
    """
    if len(values) == 1 and values[0] == "":
        return None
    for v in values:
        if not isinstance(v, str) or _CSV_SPECIAL.search(v):
            return None
    return ",".join(values) + "\n"


def _abbreviate(text: str, width: int = SHORT) -> str:
    """A form up to ``width`` characters, else a note of its length (never a cut form)."""
    if len(text) <= width:
        return text
    return f"[{len(text)} chars: see --forms FILE]"


def to_table(
    rows: Sequence[dict[str, Any]],
    title: str = "",
    exact: str = "auto",
    eps_digits: int = TABLE_EPS_DIGITS,
    rounding: str = "up",
) -> str:
    """An aligned plain-text table of rows with ``epsilon[_decimal]``/``delta[_decimal]``.

    Args:
        rows: Rows as made by :func:`~dpcompose_exact.presentation.rows.region_rows` (or curve
            points, approximation rows).
        title: A first line (``# ...``).
        exact: ``auto`` shows closed forms up to :data:`TABLE_SHORT` characters and
            abbreviates longer ones (with their length, and a closing note saying so);
            when most exact deltas are longer, their column is left out and a closing
            note says so and how to get them;
            ``always`` prints every closed form in full (last column); ``never`` leaves
            them out.
        eps_digits: Significant digits of irrational epsilons (terminating rational
            epsilons such as ``3/20`` are printed exactly as ``0.15``).
        rounding: the direction the rows' ``*_rounded`` decimals were made with; when the
            rows carry them, the table prints them (epsilons shortened to ``eps_digits``
            in the same direction) and says so at the end of the title line.

    Returns:
        The table, ending with a newline.
    """
    directed = _directed_rows(rows)
    if directed:
        check_rounding(rounding)
    if exact not in EXACT_CHOICES:
        raise ValueError(f"exact = {exact!r}; choose one of {', '.join(EXACT_CHOICES)}")
    head = ["#", "epsilon", "delta", "epsilon (exact)", "delta (exact)"]
    body = []
    abbreviated = 0
    forms = _Forms(rows, None if exact == "always" else READ_LIMIT, exact != "never")
    for i, r in enumerate(rows):
        eps_x = forms.eps_text(i) or r.get("epsilon") or ""
        del_x = forms.delta_text(i) or r.get("delta") or ""
        if "form" in r and not del_x:  # written to a forms file: refer to it
            del_x = f"[{r['form']}]"
        elif exact == "auto" and len(del_x) > SHORT:
            abbreviated += 1
            del_x = _abbreviate(r.get("delta") or del_x)
        if exact == "auto" and len(eps_x) > SHORT:
            eps_x = (
                f"[{r['epsilon_form']}]"
                if "epsilon_form" in r
                else _abbreviate(r.get("epsilon") or eps_x)
            )
        body.append(
            [
                str(i),
                _eps_cell(r, eps_digits, rounding if directed else None),
                r.get("delta_rounded", r["delta_decimal"]) if directed else r["delta_decimal"],
                eps_x,
                del_x,
            ]
        )
    given = sum(1 for b in body if b[4])
    dropped = 0
    if abbreviated and 2 * abbreviated > given:  # mostly pointers: leave the column out
        dropped, abbreviated = abbreviated, 0
        body = [[*b[:4], ""] for b in body]
    show_exact = exact != "never" and any(b[3] or b[4] for b in body)
    if not show_exact:
        head, body = head[:3], [b[:3] for b in body]
    elif not any(b[4] for b in body):  # eps(delta): exact epsilons, the deltas were given
        head, body = head[:4], [b[:4] for b in body]
    if directed:  # the header says how the decimals are rounded
        title = f"{title}\n# {rounding_note(rounding)}" if title else f"# {rounding_note(rounding)}"
    lines = comment_block(title) if title else []
    lines += align(head, body)
    if show_exact and forms.g is not None and _uses_x(c for b in body for c in b[3:]):
        lines.append(f"# exact forms in {x_definition(forms.g)}")  # type: ignore[arg-type]
    if dropped:
        lines += comment_block(
            f"# exact deltas not shown: {dropped} of {given} are longer than {SHORT} "
            "characters; --forms FILE writes them to a file, --exact always prints them"
        )
    if abbreviated:
        lines += comment_block(
            f"# {abbreviated} exact delta(s) longer than {SHORT} characters not shown "
            "(their length as JSON text is given); "
            "--forms FILE writes them to a file, --exact always prints them in full"
        )
    return "\n".join(lines) + "\n"


def _eps_cell(r: dict[str, Any], digits: int, rounding: str | None) -> str:
    """The epsilon of a row: a terminating rational exactly, else ``digits`` digits.

    With ``rounding``, the digits come from the row's directed decimal, same direction.
    """
    if rounding is None or "epsilon_rounded" not in r:
        return exact_or_rounded(r.get("epsilon"), r["epsilon_decimal"], digits)
    exact_text = exact_or_rounded(r.get("epsilon"), "", digits)
    if exact_text:  # a terminating rational: its full decimal, no rounding at all
        return exact_text
    return directed_decimal(r["epsilon_rounded"], digits, rounding)


# ---------------------------------------------------------------------------------------
# LaTeX
# ---------------------------------------------------------------------------------------


class EpsForm(Enum):
    """What a row's exact epsilon is, read once from the row (it picks the LaTeX columns)."""

    NONE = "none"  #: no exact epsilon (a certified result)
    RATIONAL = "rational"  #: a rational number
    LOGS = "logs"  #: ``r + sum c log p`` (written as clean LaTeX)
    LOG_FORM = "log form"  #: ``log(...)`` of a closed form in exponentials (an eps(delta))


@dataclass(frozen=True)
class LatexRow:
    """One row of a LaTeX table, typed: its exact values and the decimals it prints.

    Attributes:
        eps_form: what the exact epsilon is (:class:`EpsForm`).
        eps_tex: the LaTeX of an exact epsilon that is ``r + sum c log p`` (else None).
        eps_text: the exact epsilon as the row gives it (``""`` when none).
        eps_decimal: the epsilon's printed decimal (rounded when the rows are directed).
        delta: the exact delta (None when none).
        delta_decimal: the delta's printed decimal (rounded when the rows are directed).
    """

    eps_form: EpsForm
    eps_tex: str | None
    eps_text: str
    eps_decimal: str
    delta: str | None
    delta_decimal: str

    @classmethod
    def read(cls, r: dict[str, Any], directed: bool) -> LatexRow:
        """The typed row of a row dictionary (:mod:`.rows`): the one place its keys are read."""
        eps = r.get("epsilon")
        tex = latex_epsilon(eps) if eps else None
        if not eps:
            form = EpsForm.NONE
        elif tex is None:
            form = EpsForm.LOG_FORM
        else:
            form = EpsForm.RATIONAL if _is_rational(eps) else EpsForm.LOGS
        eps_dec = r.get("epsilon_rounded", r["epsilon_decimal"]) if directed else None
        del_dec = r.get("delta_rounded", r["delta_decimal"]) if directed else None
        return cls(
            form,
            tex,
            str(eps or ""),
            eps_dec or r["epsilon_decimal"],
            r.get("delta"),
            del_dec or r["delta_decimal"],
        )


def _is_rational(text: str) -> bool:
    """Whether an exact epsilon ``r + sum c log p`` is a rational number (no log terms)."""
    try:
        Fraction(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class LatexColumn:
    """One column of a LaTeX table: its header, its alignment, how a row's value is written.

    Attributes:
        header: the header cell (LaTeX).
        write: how row ``i``'s value is written (a LaTeX cell: ``$...$``, or empty).
        align: its ``tabular`` alignment.
    """

    header: str
    write: Callable[[int], str]
    align: str = "l"


@dataclass(frozen=True)
class ExactColumn:
    """The last column of a LaTeX table: the exact deltas, or the exact eps(delta).

    Attributes:
        header: the header cell (LaTeX).
        cells: the LaTeX of each row's exact form (without ``$``).
        forms: the readable form of each cell (None: written from its plain text).
        lengths: the plain-text length of each row's form (estimates the table's height).
        plain_long: the plain-text forms are long (they wrap too).
    """

    header: str
    cells: tuple[str, ...]
    forms: tuple[Readable | None, ...]
    lengths: tuple[int, ...]
    plain_long: bool

    def wraps(self) -> bool:
        """Whether a cell is too long for an ``l`` column (the column then wraps)."""
        long_forms = any(f is not None and f.is_long(FRAC_SHORT) for f in self.forms)
        return long_forms or self.plain_long

    def wraps_without(self, listed: set[int]) -> bool:
        """:meth:`wraps` once the rows ``listed`` are printed after the table."""
        return any(
            (f.is_long(FRAC_SHORT) if f is not None else self.lengths[i] > LATEX_SHORT)
            for i, f in enumerate(self.forms)
            if i not in listed
        )

    def align(self, wraps: bool) -> str:
        """The column's alignment: a wrapping paragraph column, or ``l``."""
        return ">{\\raggedright\\arraybackslash}p{0.6\\linewidth}" if wraps else "l"


@dataclass(frozen=True)
class LatexLayout:
    """The columns of a LaTeX table and the comments around it (:func:`latex_layout`).

    Attributes:
        columns: the columns before the exact one.
        exact: the exact column (None when it is left out).
        given: the index of the column holding each row's given value (listed forms name it).
        why: why the exact forms are left out (a ``%`` comment; empty when they are not).
        note: ``why`` also goes to the caller's notes.
        x_note: the footnote defining ``x`` (empty when no cell uses it).
    """

    columns: tuple[LatexColumn, ...]
    exact: ExactColumn | None
    given: int
    why: str
    note: bool
    x_note: str

    def headers(self) -> list[str]:
        """The header cells, the exact column's last."""
        tail = [self.exact.header] if self.exact is not None else []
        return [c.header for c in self.columns] + tail

    def body(self, n: int) -> list[list[str]]:
        """The cells of the ``n`` rows."""
        tail = self.exact.cells if self.exact is not None else ()
        return [
            [c.write(i) for c in self.columns] + ([f"${tail[i]}$"] if tail else [])
            for i in range(n)
        ]


def latex_layout(
    rows: Sequence[LatexRow], forms: _Forms, exact: str, delta_head: str
) -> LatexLayout:
    """The columns of the LaTeX table of ``rows``: which are shown, their cells.

    Columns: the exact epsilon (unless the eps(delta) column carries it), its decimal (when
    some epsilon is irrational), the delta's decimal, and one exact column: the exact deltas
    (every one at most :data:`LATEX_SHORT` characters under ``auto``) or the exact
    eps(delta) as ``log(...)`` of a form over ``x`` (at most :data:`LATEX_EPS_LONG`).
    """
    eps_logs = [forms.eps[i] if r.eps_tex is None else None for i, r in enumerate(rows)]
    log_rows = [i for i, r in enumerate(rows) if r.eps_tex is None]
    have_eps_logs = bool(log_rows) and all(eps_logs[i] is not None for i in log_rows)
    eps_longest = max((len(e.text()) for e in eps_logs if e is not None), default=0)
    rational_eps = all(r.eps_form is EpsForm.RATIONAL for r in rows)
    have_exact = bool(rows) and all(r.delta is not None for r in rows)
    shown_len = [
        len(red.text()) if red is not None else len(r.delta or "")
        for red, r in zip(forms.delta, rows)
    ]
    longest = max(shown_len, default=0)
    if exact == "always":
        show_exact, show_eps = have_exact, have_eps_logs
    elif exact == "never":
        show_exact = show_eps = False
    else:
        show_exact = have_exact and longest <= LATEX_SHORT
        show_eps = have_eps_logs and eps_longest <= LATEX_EPS_LONG
    why, note = "", False
    if not show_exact and not show_eps and exact != "never":
        logs = [r.eps_text for r in rows if r.eps_form is EpsForm.LOG_FORM]
        if not have_exact and logs:  # eps(delta): exact, but as log(...) of a long form
            why = (
                f"the exact eps(delta) are log(...) forms of up to "
                f"{max(eps_longest, max(map(len, logs)))} characters, too long for a table "
                f"(> {LATEX_EPS_LONG} for --exact auto); --exact always includes them, "
                "--format json carries them"
            )
        elif not have_exact:
            why = "exact deltas are not available here (certified or decimals-only results)"
        else:
            why = (
                f"exact deltas left out: the longest closed form has {longest} characters "
                f"(> {LATEX_SHORT} for --exact auto); --exact always includes them"
            )
        note = have_exact or bool(logs)
    columns: list[LatexColumn] = []
    # the exact epsilons lead the row, unless the eps(delta) column carries them
    if any(r.eps_tex is not None for r in rows) and not show_eps:
        columns.append(
            LatexColumn(
                "$\\varepsilon$",
                lambda i: f"${rows[i].eps_tex}$" if rows[i].eps_tex is not None else "",
            )
        )
    if not rational_eps:
        columns.append(
            LatexColumn(
                "$\\varepsilon$ (decimal)" if columns else "$\\varepsilon$",
                lambda i: f"${latex_decimal(rows[i].eps_decimal)}$",
            )
        )
    columns.append(LatexColumn(delta_head, lambda i: f"${latex_decimal(rows[i].delta_decimal)}$"))
    given = len(columns) - 1 if show_eps else 0  # the row's given value
    column = None
    if show_exact:
        column = ExactColumn(
            delta_head + ", exact",
            tuple(
                red.latex(frac_short=FRAC_SHORT)
                if red is not None
                else _exact_delta_latex(str(r.delta))
                for red, r in zip(forms.delta, rows)
            ),
            tuple(forms.delta),
            tuple(shown_len),
            longest > LATEX_SHORT and any(red is None for red in forms.delta),
        )
    elif show_eps:
        column = ExactColumn(
            "$\\varepsilon(\\delta)$, exact",
            tuple(
                r.eps_tex if r.eps_tex is not None else _readable_latex(e)
                for r, e in zip(rows, eps_logs)
            ),
            tuple(eps_logs),
            tuple(len(e.text()) if e is not None else 0 for e in eps_logs),
            False,
        )
    x_note = ""
    if column is not None and forms.g is not None and _uses_x(column.cells):
        x_note = f"Exact forms in ${x_definition(forms.g, latex=True)}$."
    return LatexLayout(tuple(columns), column, given, why, note, x_note)


def to_latex(
    rows: Sequence[dict[str, Any]],
    *,
    caption: str = "",
    label: str = "",
    exact: str = "auto",
    comment: str = "",
    notes: list[str] | None = None,
    delta_head: str = "$\\delta(\\varepsilon)$",
    rounding: str = "up",
) -> str:
    r"""A booktabs ``table`` for a paper: exact epsilons, certified decimals, exact deltas.

    The decimals are printed as the rows give them (compute the rows at the wanted number
    of significant digits); small and large ones in scientific notation.  The columns are
    chosen by :func:`latex_layout` and written here.

    Args:
        rows: Rows with ``epsilon`` (exact, optional), ``epsilon_decimal``, ``delta``
            (exact, optional) and ``delta_decimal``.
        caption: ``\caption`` text (LaTeX); none when empty.
        label: ``\label`` key; none when empty.
        exact: the exact-delta column: ``always``, ``never``, or ``auto`` (shown when every
            closed form has at most :data:`LATEX_SHORT` characters).  When ``auto`` leaves
            it out, a LaTeX comment says so and, if ``notes`` is given, a note is appended.
        comment: a first ``%`` comment line (e.g. what was composed).
        notes: a list that receives human-readable notes (for stderr).
        delta_head: header of the delta columns (``$\delta$`` for curve points).
        rounding: the direction the rows' ``*_rounded`` decimals were made with; when the
            rows carry them, the table prints them and a footnote line under the table
            says which way they are rounded.

    Returns:
        The LaTeX source (needs ``\usepackage{booktabs}``), ending with a newline.
    """
    directed = _directed_rows(rows)
    if directed:
        check_rounding(rounding)
    if exact not in EXACT_CHOICES:
        raise ValueError(f"exact = {exact!r}; choose one of {', '.join(EXACT_CHOICES)}")
    forms = _Forms(rows, None if exact == "always" else READ_LIMIT, exact != "never")
    layout = latex_layout([LatexRow.read(r, directed) for r in rows], forms, exact, delta_head)
    lines = []
    for line in comment.splitlines():  # the header block, as % comments
        lines += comment_block(line[2:] if line.startswith("# ") else line, prefix="% ")
    n_comment = len(lines)
    lines.append("% needs \\usepackage{booktabs}")
    if layout.why:
        lines.append(f"% {layout.why}")
        if notes is not None and layout.note:
            notes.append(layout.why)
    head = layout.headers()
    spec = [c.align for c in layout.columns]
    body = layout.body(len(rows))
    column = layout.exact
    # many short rows: two blocks side by side keep the table on one page
    blocks = 2 if len(body) > 24 and len(spec) <= 2 and column is None else 1
    # the table's height in lines of text (estimated): past TABLE_LINES it is a longtable
    # (pages break it between rows), and forms longer than CELL_LONG are listed after it
    cell_len = column.lengths if column is not None else (0,) * len(rows)
    long_cells = column is not None and column.wraps()
    stretch = 1.45 if any("\\frac" in c for row in body for c in row) else 1.0
    height = sum(
        max(stretch, -(-n // CELL_CHARS)) if long_cells and n > LATEX_SHORT else stretch
        for n in cell_len
    )
    if height / blocks > TABLE_LINES:
        listed = [i for i, n in enumerate(cell_len) if n > CELL_LONG]
        for i in listed:
            body[i][-1] = f"see ({i + 1})"
        if column is not None:
            long_cells = column.wraps_without(set(listed))
            spec.append(column.align(long_cells))
            if long_cells:
                lines.append("% needs \\usepackage{array} (wrapping column)")
        lines.insert(
            n_comment + 1,
            "% needs \\usepackage{longtable} (one-column layout; run LaTeX twice for its "
            "column widths)",
        )
        lines += _longtable(head, spec, body, caption, label, directed, rounding, layout.x_note)
        if listed and column is not None:
            at = layout.given
            named = [(i, f"{head[at]} $=$ {body[i][at]}", column.cells[i]) for i in listed]
            lines += _listed_forms(named, head[-1])
        return _short_breaks(lines)
    if column is not None:
        spec.append(column.align(long_cells))
        if long_cells:
            lines.append("% needs \\usepackage{array} (wrapping column)")
    return _short_breaks(
        lines + _table_lines(head, spec, body, blocks, caption, label, directed, rounding, layout)
    )


def _table_lines(
    head: list[str],
    spec: list[str],
    body: list[list[str]],
    blocks: int,
    caption: str,
    label: str,
    directed: bool,
    rounding: str,
    layout: LatexLayout,
) -> list[str]:
    """A booktabs ``table`` of ``blocks`` blocks of rows side by side."""
    per = -(-len(body) // blocks)
    lines = ["\\begin{table}[htbp]", "\\centering"]
    if any("\\frac" in c for row in body for c in row):
        lines.append("\\renewcommand{\\arraystretch}{1.45}% room for fractions (local)")
    if caption:
        lines.append(f"\\caption{{{caption}}}")
    if label:
        lines.append(f"\\label{{{label}}}")
    lines.append("\\begin{tabular}{@{}" + "@{\\qquad}".join(["".join(spec)] * blocks) + "@{}}")
    lines.append("\\toprule")
    lines.append(" & ".join(head * blocks) + " \\\\")
    lines.append("\\midrule")
    width = len(spec)
    for i in range(per):
        cells: list[str] = []
        for b in range(blocks):
            j = b * per + i
            cells += body[j] if j < len(body) else [""] * width
        lines.append(" & ".join(cells) + " \\\\")
    lines.append("\\bottomrule")
    lines.append("\\end{tabular}")
    foot = _foot(directed, rounding, layout.x_note)
    if foot:
        lines.append("\\par\\smallskip{\\footnotesize " + foot + "}")
    lines.append("\\end{table}")
    return lines


def _readable_latex(red: Readable | None) -> str:
    """The LaTeX of a readable form the caller knows is there."""
    assert red is not None, "a log(...) epsilon without its readable form"
    return red.latex(frac_short=FRAC_SHORT)


BREAK_MACRO = "\\dpcbrk"  # the marked break inside a long integer, defined by the output


def _short_breaks(lines: list[str]) -> str:
    r"""The LaTeX text, its marked breaks inside long integers written as one short macro.

    A form of the paper's case holds tens of thousands of them: the macro (defined once,
    ``\providecommand``) keeps the text at half the size of the spelled-out breaks.
    """
    text = "\n".join(lines) + "\n"
    if DIGIT_BREAK not in text:
        return text
    text = text.replace(DIGIT_BREAK, BREAK_MACRO + " ")
    at = next(i for i, line in enumerate(lines) if not line.startswith("%"))
    define = f"\\providecommand{{{BREAK_MACRO}}}{{{DIGIT_BREAK}}}% a marked break in an integer"
    head = "\n".join(lines[:at])
    return (head + "\n" if head else "") + define + "\n" + text[len(head) + bool(head) :]


def _foot(directed: bool, rounding: str, x_note: str) -> str:
    """The note under a table: how the decimals are rounded, what ``x`` is."""
    foot = []
    if directed:
        note = rounding_note(rounding)
        foot.append(note[0].upper() + note[1:] + ".")
    if x_note:
        foot.append(x_note)
    return " ".join(foot)


def _longtable(
    head: list[str],
    spec: list[str],
    body: list[list[str]],
    caption: str,
    label: str,
    directed: bool,
    rounding: str,
    x_note: str,
) -> list[str]:
    """A booktabs ``longtable`` (package longtable): the header repeated on every page."""
    out = ["\\begingroup"]
    if any("\\frac" in c for row in body for c in row):
        out.append("\\renewcommand{\\arraystretch}{1.45}% room for fractions (local)")
    out.append("\\begin{longtable}{@{}" + "".join(spec) + "@{}}")
    top = []
    if caption:
        top.append(f"\\caption{{{caption}}}")
    if label:
        top.append(f"\\label{{{label}}}")
    if top:
        out.append("".join(top) + "\\\\")
    header = ["\\toprule", " & ".join(head) + " \\\\", "\\midrule"]
    out += header + ["\\endfirsthead"]
    cont = f"\\multicolumn{{{len(spec)}}}{{@{{}}l}}{{\\footnotesize (continued)}} \\\\"
    out += [cont] + header + ["\\endhead", "\\bottomrule", "\\endfoot"]
    out += [" & ".join(cells) + " \\\\" for cells in body]
    out.append("\\end{longtable}")
    out.append("\\endgroup")
    foot = _foot(directed, rounding, x_note)
    if foot:
        out.append("\\par\\nopagebreak{\\footnotesize\\noindent " + foot + "\\par}")
    return out


def _listed_forms(forms: list[tuple[int, str, str]], what: str) -> list[str]:
    """The exact forms too long for a cell, one paragraph each (TeX breaks lines and pages).

    Each of ``forms`` is ``(row index, the row's given value, LaTeX form)`` and reads
    ``(i) eps = ...: delta(eps) = <form>``, the form in inline math so that TeX may break
    it after any ``+`` or ``-`` (:meth:`~.readable.Readable.latex` writes long forms in
    that breakable layout; integers of more than 40 digits may break too, marked).
    """
    name = what.replace(", exact", "")
    out = ["\\par\\medskip", "\\begingroup\\raggedright  % lines break after + and -"]
    for i, key, tex in forms:
        out.append(
            f"\\noindent\\hangindent=2em\\hangafter=1 ({i + 1})\\enspace {key}: "
            f"{name} $= {tex}$\\par"
        )
    out.append("\\endgroup\\medskip")
    return out


def _exact_delta_latex(text: str) -> str:
    if len(text) <= LATEX_SHORT:
        import sympy

        try:
            return sympy.latex(sympy.sympify(text))
        except (sympy.SympifyError, SyntaxError, TypeError, ValueError):
            pass
    out = _latex_closed_form(_flat_adds(text) if "Add(" in text else text)
    out = _POWER_OF_POWER.sub(r"{\1}^", out)  # (e^{3/20})^{9}: TeX refuses e^{3/20}^{9}
    # a long product may break after a factor or a slash (not only after + and -)
    return out.replace("\\,", "\\,\\allowbreak ").replace(")/(", ")/\\allowbreak (")


_POWER_OF_POWER = re.compile(r"(e\^\{[^{}]*\})\^")


def _flat_adds(text: str) -> str:
    """``Add(a, -b, c)`` written ``(a - b + c)`` (a sum TeX may break after its signs)."""
    out: list[str] = []
    adds: list[bool] = []  # for each open parenthesis: is it an Add's?
    i = 0
    while i < len(text):
        if text.startswith("Add(", i):
            adds.append(True)
            out.append("(")
            i += 4
            continue
        ch = text[i]
        if ch == "(":
            adds.append(False)
        elif ch == ")" and adds:
            adds.pop()
        elif ch == "," and adds and adds[-1]:
            j = i + 1
            while j < len(text) and text[j] == " ":
                j += 1
            negative = text.startswith("-", j)
            out.append(" - " if negative else " + ")
            i = j + negative
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def format_brackets(brackets: Sequence[Any], digits: int = 6) -> str:
    """A plain-text table of the areas (and delta at the eps points) of several brackets.

    Args:
        brackets: Results of :func:`~dpcompose_exact.paper.bracket.bracket_composition`.
        digits: Significant digits of the areas.

    Returns:
        The table, one line per bracket, then one delta block per bracket.
    """

    def show(x: Any) -> str:
        return "-" if x is None else mpf_str(x, digits)

    head = ["f", "k", "n", "area(lower,ref)", "area(ref,upper)", "area(lower,upper)", "seconds"]
    body = [
        [
            b.tradeoff.name,
            str(b.k),
            str(b.pieces),
            show(b.area_lower_reference),
            show(b.area_reference_upper),
            show(b.area_lower_upper),
            f"{b.seconds:.2f}",
        ]
        for b in brackets
    ]
    lines = align(head, body)
    for b in brackets:
        lines.append(f"delta(eps), {b.tradeoff.name}, k = {b.k}, n = {b.pieces}:")
        for r in b.deltas:
            lines.append(
                f"  eps = {r.eps}: lower {r.lower} >= reference {r.reference or '-'} "
                f">= upper {r.upper}"
            )
    return "\n".join(lines) + "\n"


def markdown_table(head: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    r"""The one Markdown (GitHub, MyST) table writer: text cells, ``|`` escaped.

    >>> print(markdown_table(["a", "b"], [["x|y", "1"]]), end="")
    | a | b |
    |---|---|
    | x\|y | 1 |
    """

    def cell(text: str) -> str:
        return " ".join(str(text).split()).replace("|", "\\|")

    lines = ["| " + " | ".join(cell(h) for h in head) + " |"]
    lines.append("|" + "---|" * len(head))
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in body]
    return "\n".join(lines) + "\n"
