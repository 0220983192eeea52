"""The one registry of output formats: a name, and a writer for each kind of output it serves.

Two kinds of output are written through it:

* ``"composition"``: a :class:`~dpcompose_exact.composition.Composition` (its region, or
  one of its curves) with :class:`OutputOptions`.  ``Composition.to_table``, ``to_json``,
  ``to_csv``, ``to_latex`` and ``Composition.write`` call these writers, and the command
  line's ``--format`` choices and output are read from here.
* ``"tidy"``: a tidy table (a list of row dictionaries and the column names), the result
  of a parameter sweep (:mod:`dpcompose_exact.tools.sweeps`): ``dpcompose sweep -o OUT``
  chooses the format by ``--format`` or by the suffix of ``OUT`` (:attr:`OutputFormat.suffixes`).

A new format is one :func:`register` call with its writers (docs/architecture.md,
"Output formats"); the command line and the sweeps then offer it.  Another distribution
registers one without code of ours: an entry point of the group
:data:`ENTRY_POINT_GROUP` names an :class:`OutputFormat` whose ``writers`` are filled
(or a callable returning one), read once before the first lookup of a format.  The command line's
other commands (``summary``, ``formula``, ``approx``) register their own kinds of output
(:func:`register_writer`) and read their ``--format`` choices here too.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..engines.results import Exactness
from ..errors import InvalidParameterError
from ..numbers.convert import parse_delta
from ..numbers.format import check_rounding, exact_or_rounded, latex_input, readable_exact
from ..optional import require
from .forms_file import budget_forms, split_forms
from .jsonstream import json_chunks
from .naming import TITLE_WIDTH, composition_name, mechanism_name
from .render import (
    LATEX_DIGITS,
    READ_LIMIT,
    iter_csv,
    latex_escape,
    latex_table,
    to_latex,
    to_table,
)
from .rows import region_rows, table_rows

__all__ = [
    "OutputOptions",
    "OutputFormat",
    "METHOD_KEYWORDS",
    "method_options",
    "composition_title",
    "composition_caption",
    "json_head",
    "register",
    "register_writer",
    "output_format",
    "format_names",
    "tidy_format_for_suffix",
    "tidy_suffix_list",
    "arrow_table",
    "ENTRY_POINT_GROUP",
    "load_entry_points",
    "load_errors",
]

ENTRY_POINT_GROUP = "dpcompose_exact.formats"
"""The ``importlib.metadata`` entry-point group of third-party output formats."""


@dataclass(frozen=True)
class OutputOptions:
    r"""What a composition writer is asked to print.

    Attributes:
        digits: significant digits of the decimals (None: the format's default).
        exact: include closed forms at all (``--decimals-only`` is False).
        shown: the exact forms of tables and LaTeX, and the JSON's inline forms:
            ``auto``, ``always`` or ``never``.
        rounding: direction of the printed decimals (``up``, ``nearest``, ``down``).
        delta_at: eps values: print ``delta(eps)`` there instead of the region.
        epsilon_at: deltas: print ``eps(delta)`` there instead of the region.
        forms_file: a file the exact deltas are written to (JSON and tables refer to it).
        caption: LaTeX ``\caption`` (None: a description of the composition).
        label: LaTeX ``\label`` key.
        notes: a list that receives notes of the layout (for stderr).
    """

    digits: int | None = None
    exact: bool = True
    shown: str = "auto"
    rounding: str = "up"
    delta_at: Any = None
    epsilon_at: Any = None
    forms_file: str | None = None
    caption: str | None = None
    label: str = ""
    notes: list[str] | None = None

    def digits_for(self, fmt: OutputFormat) -> int:
        """The digits asked for, or the format's default."""
        return self.digits if self.digits is not None else fmt.digits

    def query(self) -> dict[str, Any]:
        """The curve query (``delta_at`` or ``epsilon_at``) and the rounding, as keywords."""
        return {
            "delta_at": self.delta_at,
            "epsilon_at": self.epsilon_at,
            "rounding": self.rounding,
        }


#: the keywords of each ``Composition.to_*`` method, and the :class:`OutputOptions` field
#: each one sets (the methods keep the names users call them with: ``to_json(forms=...)``
#: sets ``shown``, ``to_table(exact=...)`` and ``to_latex(exact=...)`` set ``shown``)
METHOD_KEYWORDS: dict[str, dict[str, str]] = {
    "json": {
        **{k: k for k in ("digits", "exact", "delta_at", "epsilon_at", "rounding")},
        "forms": "shown",
        "forms_file": "forms_file",
    },
    "csv": {k: k for k in ("digits", "exact", "delta_at", "epsilon_at", "rounding")},
    "table": {
        **{k: k for k in ("digits", "delta_at", "epsilon_at", "rounding", "forms_file")},
        "exact": "shown",
        "notes": "notes",
    },
    "latex": {
        **{k: k for k in ("digits", "delta_at", "epsilon_at", "rounding", "caption", "label")},
        "exact": "shown",
        "notes": "notes",
    },
}


def method_options(
    fmt: str, options: OutputOptions | int | None, keywords: dict[str, Any]
) -> OutputOptions:
    """The :class:`OutputOptions` of a ``Composition.to_<fmt>`` call.

    Args:
        fmt: ``json``, ``csv``, ``table`` or ``latex`` (the keys of :data:`METHOD_KEYWORDS`).
        options: the options as a value, or the significant digits, or None.
        keywords: the method's keywords (their names as in :data:`METHOD_KEYWORDS`).

    Raises:
        TypeError: a keyword the method does not take (the message lists those it takes).
    """
    names = METHOD_KEYWORDS[fmt]
    unknown = sorted(set(keywords) - set(names))
    if unknown:
        raise TypeError(
            f"to_{fmt}() got unexpected keyword(s) {', '.join(unknown)}; "
            f"it takes {', '.join(names)}"
        )
    fields = {names[k]: v for k, v in keywords.items()}
    if isinstance(options, OutputOptions):
        return replace(options, **fields)
    if options is not None:
        fields = {"digits": options, **fields}
    return OutputOptions(**fields)


def composition_title(c: Any, delta_at: Any = None, epsilon_at: Any = None) -> str:
    """The header block of a table: what was composed, the method, the route.

    The first line (``# composition of 20 x {(0.15, 0.02), (0.3, 0)}; method exact``)
    stays within :data:`~dpcompose_exact.presentation.naming.TITLE_WIDTH` characters:
    a longer list of mechanisms moves to a line of its own below it.
    """
    label = composition_name(c.kinds)
    if delta_at is None and epsilon_at is None:
        what, more = "composition", "# region = intersection of R(epsilon, delta) over the rows"
    else:
        what = "delta(eps)" if delta_at is not None else "eps(delta)"
        what += " of the composition"
        more = f"# route: {c.result.describe()}"
    head = f"# {what} of {label}; method {c.method}"
    if len(head) > TITLE_WIDTH:
        count = sum(n for _, n in c.kinds)
        head = (
            f"# {what} of {count} mechanisms ({len(c.kinds)} kinds); "
            f"method {c.method}\n# mechanisms: {label}"
        )
    return f"{head}\n{more}"


def composition_caption(c: Any, what: str) -> str:
    """A LaTeX caption: ``what`` of the composition of its mechanisms."""

    def pair(e: str, d: str) -> str:
        return f"$({latex_input(e)}, {latex_input(d)})$"

    parts = []
    for m, n in c.kinds:
        pairs = getattr(m, "pairs", None)
        if not pairs:  # noise: no (eps, delta) list; its title says what it is
            parts.append(f"{n} uses of {latex_escape(mechanism_name(m))}")
            continue
        cons = " and ".join(pair(readable_exact(e), readable_exact(d)) for e, d in pairs)
        parts.append(f"{n} uses of a mechanism satisfying {cons}-DP")
    if not parts:
        return f"{what} ({c.method})."
    return f"{what} of the composition of " + "; ".join(parts) + "."


def json_head(c: Any, rounding: str) -> dict[str, Any]:
    """The first keys of the JSON object (what was composed, how, the rounding)."""
    return {
        "command": c.command,
        "mechanisms": [{**m.to_dict(), "count": n} for m, n in c.kinds],
        "method": str(c.method),
        "why": c.why,
        "certified": not c.is_exact,
        "rounding": rounding,
    }


#: a writer of a composition: ``(composition, options) -> text or text in pieces``
CompositionWriter = Callable[[Any, OutputOptions], "str | Iterator[str]"]
#: a writer of a tidy table: ``(rows, columns, caption) -> text or bytes``
TidyWriter = Callable[[Sequence[dict[str, Any]], Sequence[str], str], "str | bytes"]


@dataclass(frozen=True)
class OutputFormat:
    """One output format: its name, and a writer for each kind of output it serves.

    Attributes:
        name: its ``--format`` name.
        description: a few words.
        suffixes: output file suffixes that select it for tidy tables (first: canonical).
        digits: the default significant digits of its decimals.
        binary: its tidy writer returns bytes (written to a file only).
        aliases: other names accepted for it.
        writers: the writer of each kind of output (``"composition"``: a
            :data:`CompositionWriter`; ``"tidy"``: a :data:`TidyWriter`; the command
            line's other commands register theirs, e.g. ``"summary"``).
    """

    name: str
    description: str
    suffixes: tuple[str, ...] = ()
    digits: int = 30
    binary: bool = False
    aliases: tuple[str, ...] = ()
    writers: dict[str, Callable[..., Any]] = field(default_factory=dict, compare=False)

    def writes(self, kind: str) -> bool:
        """Whether the format serves ``kind``."""
        return kind in self.writers

    def writer(self, kind: str) -> Callable[..., Any]:
        """The writer of ``kind`` (raises InvalidParameterError when it has none)."""
        try:
            return self.writers[kind]
        except KeyError:
            raise InvalidParameterError(
                f"format {self.name!r} does not write {kind} output; choose one of "
                f"{', '.join(format_names(kind))}"
            ) from None


_REGISTRY: dict[str, OutputFormat] = {}
_ORDER: dict[str, list[str]] = {}  # kind -> format names, in the order of their writers


def register(fmt: OutputFormat, **writers: Callable[..., Any]) -> OutputFormat:
    """Add a format and its writers (``composition=..., tidy=...``) to the registry.

    The order of registration is the order of the ``--format`` choices.
    """
    if fmt.name in _REGISTRY:
        raise ValueError(f"output format {fmt.name!r} is already registered")
    _REGISTRY[fmt.name] = fmt
    for kind, writer in writers.items():
        register_writer(fmt.name, kind, writer)
    return fmt


def register_writer(name: str, kind: str, writer: Callable[..., Any]) -> None:
    """Give the registered format ``name`` a writer of ``kind`` (one per kind)."""
    fmt = _REGISTRY[name]
    if kind in fmt.writers:
        raise ValueError(f"output format {name!r} already writes {kind} output")
    fmt.writers[kind] = writer
    _ORDER.setdefault(kind, []).append(name)


_LOADED = {"entry_points": False}
_LOAD_ERRORS: dict[str, str] = {}


def load_entry_points(force: bool = False) -> None:
    """Register the formats of the entry-point group :data:`ENTRY_POINT_GROUP` (once).

    An entry point that fails to load (import error, not an :class:`OutputFormat`, a
    name taken) is recorded (:func:`load_errors`), never raised.
    """
    if _LOADED["entry_points"] and not force:
        return
    _LOADED["entry_points"] = True
    from ..plugins import load_entry_points as load_group

    def accept(name: str, fmt: Any) -> None:
        if not isinstance(fmt, OutputFormat) and callable(fmt):
            fmt = fmt()
        if not isinstance(fmt, OutputFormat):
            raise TypeError(f"expected an OutputFormat, got {type(fmt).__name__}")
        if fmt.name not in _REGISTRY:
            register(replace(fmt, writers={}), **fmt.writers)

    load_group(ENTRY_POINT_GROUP, accept, _LOAD_ERRORS)


def load_errors() -> dict[str, str]:
    """Entry points of formats that failed to load: ``{entry point name: reason}``."""
    load_entry_points()
    return dict(_LOAD_ERRORS)


def format_names(kind: str) -> tuple[str, ...]:
    """The names of the formats serving ``kind``, in the order their writers came."""
    load_entry_points()
    return tuple(_ORDER.get(kind, ()))


def output_format(name: str, kind: str = "composition") -> OutputFormat:
    """The format of that name (or alias) serving ``kind``.

    Raises:
        InvalidParameterError: no such format, naming those there are.
    """
    load_entry_points()
    for fmt in _REGISTRY.values():
        if (name == fmt.name or name in fmt.aliases) and fmt.writes(kind):
            return fmt
    raise InvalidParameterError(
        f"unknown format {name!r}; choose one of {', '.join(format_names(kind))}"
    )


def tidy_format_for_suffix(suffix: str) -> OutputFormat | None:
    """The tidy-table format an output file's suffix selects (``.csv``), or None."""
    for name in format_names("tidy"):
        if suffix in _REGISTRY[name].suffixes:
            return _REGISTRY[name]
    return None


def tidy_suffix_list() -> str:
    """``.csv, .jsonl, .parquet or .tex``: the canonical suffix of each tidy format."""
    names = [_REGISTRY[n].suffixes[0] for n in format_names("tidy") if _REGISTRY[n].suffixes]
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


# ---------------------------------------------------------------------------------------
# the writers of a composition (the text of Composition.to_table / to_json / ...)
# ---------------------------------------------------------------------------------------


def _curve(c: Any, o: OutputOptions, exact: bool) -> list[dict[str, Any]]:
    """The curve rows asked for, as table cells (enclosures as ``[lower, upper]``)."""
    digits = o.digits_for(TABLE)
    rows = c.curve_rows(o.delta_at, o.epsilon_at, digits, exact, o.rounding)
    if c.result.kind is Exactness.BOUNDS:
        return table_rows(rows, digits)
    if o.epsilon_at is not None:  # the deltas given: exact decimals, never padded zeros
        given = o.epsilon_at if isinstance(o.epsilon_at, (list, tuple)) else [o.epsilon_at]
        for r, d in zip(rows, given):
            exact_d = str(parse_delta(d))
            for key in ("delta_decimal", "delta_rounded"):
                if key in r:
                    r[key] = exact_or_rounded(exact_d, r[key], digits)
    return rows


def _is_curve(o: OutputOptions) -> bool:
    return o.delta_at is not None or o.epsilon_at is not None


def _region(
    c: Any, digits: int, exact: str, structured: bool, rounding: str | None
) -> list[dict[str, Any]]:
    """A region's rows for a table or LaTeX: parts only for the forms made readable.

    Readable forms are made of the exact deltas of at most ``READ_LIMIT`` characters
    (every one under ``exact = "always"``, none under ``"never"``), so the longer ones
    carry no parts (:func:`~.rows.region_rows`, ``parts_up_to``).
    """
    limit = None if exact == "always" else READ_LIMIT
    rows = region_rows(c.result, digits, exact != "never", structured, rounding, parts_up_to=limit)
    return list(rows)


def _table(c: Any, o: OutputOptions) -> str:
    """An aligned text table (:func:`~.render.to_table`); exact forms to ``forms_file``."""
    digits, exact, notes = o.digits_for(TABLE), o.shown, o.notes
    forms_file = o.forms_file
    if not _is_curve(o):
        rows = _region(c, digits, exact, forms_file is not None, o.rounding)
        if forms_file is not None:
            rows, note = split_forms(rows, forms_file, exact)
            if note is not None and notes is not None:
                notes.append(note)
    else:
        rows = _curve(c, replace(o, digits=digits), exact != "never")
        if forms_file is not None:  # the exact forms of a curve (eps(delta) too) go there
            rows, note = split_forms(rows, forms_file, exact)
            if o.epsilon_at is not None:  # the file holds the exact epsilons
                rows = [
                    {**{k: v for k, v in r.items() if k != "form"}, "epsilon_form": r["form"]}
                    for r in rows
                ]
                note = f"exact epsilons written to {forms_file} (rows refer to them by index)"
            if note is not None and notes is not None:
                notes.append(note)
    return to_table(
        rows, title=composition_title(c, o.delta_at, o.epsilon_at), exact=exact, rounding=o.rounding
    )


def _json(c: Any, o: OutputOptions) -> Iterator[str]:
    """One JSON object, in pieces: a region's rows made and written one at a time.

    Curves are computed first (an error then prints nothing).  The exact deltas are kept
    inline while they total under the forms budget (``shown`` ``auto``), always, or never
    (:func:`~.forms_file.budget_forms`; ``forms_file`` holds them instead).
    """
    digits, exact, rounding = o.digits_for(JSON), o.exact, o.rounding
    check_rounding(rounding)
    if _is_curve(o):  # the curve first: the route's why then says what answered it
        curve = c.curve_rows(o.delta_at, o.epsilon_at, digits, exact, rounding)
        out = json_head(c, rounding)
        out["command"] = "delta" if o.delta_at is not None else "epsilon"
        out["curve"] = curve
        return json_chunks(out, end="\n")
    out = json_head(c, rounding)
    wanted = [True]  # emptied by budget_forms: then no more forms are made
    rows = region_rows(
        c.result, digits, exact, True, rounding, forms_wanted=lambda: bool(wanted), parts_up_to=0
    )
    if exact and o.shown != "always":
        rows, note = budget_forms(rows, o.shown, o.forms_file, stop=wanted.clear)
        if note is not None:
            out["forms"] = note
    out["region"] = rows
    return json_chunks(out, end="\n")


def _csv(c: Any, o: OutputOptions) -> Iterator[str]:
    """CSV in pieces (a region's rows made one at a time)."""
    digits, exact, rounding = o.digits_for(CSV), o.exact, o.rounding
    if not _is_curve(o):
        rows = region_rows(
            c.result, digits, exact, False, rounding, directed_only=True, parts_up_to=0
        )
        return iter_csv(rows, rounding)
    rows = c.curve_rows(o.delta_at, o.epsilon_at, digits, exact, rounding)
    return iter_csv(rows, rounding)


#: the deltas of the LaTeX table of a composition without a constraint list (noise)
LATEX_DELTAS = ("1e-3", "1e-4", "1e-5", "1e-6", "1e-7", "1e-8")


def _latex(c: Any, o: OutputOptions) -> str:
    """A booktabs LaTeX table (:func:`~.render.to_latex`) of the region or a curve.

    A composition without a constraint list (noise, subsampled mechanisms) is tabulated
    as its certified ``eps(delta)`` at :data:`LATEX_DELTAS` (enclosures as ``[lo, hi]``).
    """
    digits, exact = o.digits_for(LATEX), o.shown
    if not _is_curve(o) and not c.has_region:  # noise: its eps(delta) at the usual deltas
        o = replace(o, epsilon_at=list(LATEX_DELTAS))
    if _is_curve(o):
        rows = _curve(c, replace(o, digits=digits), exact != "never")
        quantity = "\\delta(\\varepsilon)" if o.delta_at is not None else "\\varepsilon(\\delta)"
        what, head = f"Privacy curve ${quantity}$", "$\\delta$"
    else:
        rows = _region(c, digits, exact, False, o.rounding)
        what, head = "Exact privacy region $\\delta(\\varepsilon)$", "$\\delta(\\varepsilon)$"
    cap = composition_caption(c, what) if o.caption is None else o.caption
    return to_latex(
        rows,
        caption=cap,
        label=o.label,
        exact=exact,
        comment=composition_title(c, o.delta_at, o.epsilon_at),
        notes=o.notes if o.notes is not None else [],
        delta_head=head,
        rounding=o.rounding,
    )


# ---------------------------------------------------------------------------------------
# the writers of a tidy table (sweeps)
# ---------------------------------------------------------------------------------------


def _tidy_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str], caption: str = "") -> str:
    """CSV (empty fields for missing values)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: "" if v is None else v for k, v in r.items()})
    return buf.getvalue()


def _tidy_jsonl(rows: Sequence[dict[str, Any]], columns: Sequence[str], caption: str = "") -> str:
    """JSON lines (one object per row; missing values are null)."""
    return "".join(json.dumps(r) + "\n" for r in rows)


def arrow_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> Any:
    """A tidy table as a ``pyarrow.Table`` (needs pyarrow, the ``sweep`` extra).

    Floats for ``seconds`` and ``rel_error``, booleans for ``sound``, integers for
    integer columns, strings otherwise.
    """
    pa = require("pyarrow", "Parquet output (or choose csv, jsonl or latex)")
    types: dict[str, Any] = {}
    for c in columns:
        vals = [r[c] for r in rows if r[c] is not None]
        if c in ("seconds", "rel_error"):
            types[c] = pa.float64()
        elif c == "sound":
            types[c] = pa.bool_()
        elif vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
            types[c] = pa.int64()
        else:
            types[c] = pa.string()
    schema = pa.schema([(c, types[c]) for c in columns])
    data = {
        c: [r[c] if (r[c] is None or types[c] != pa.string()) else str(r[c]) for r in rows]
        for c in columns
    }
    return pa.Table.from_pydict(data, schema=schema)


def _tidy_parquet(
    rows: Sequence[dict[str, Any]], columns: Sequence[str], caption: str = ""
) -> bytes:
    """Parquet (binary)."""
    table = arrow_table(rows, columns)  # a clear error when pyarrow is missing
    pa = require("pyarrow", "Parquet output")
    pq = require("pyarrow.parquet", "Parquet output")
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue())


def _tidy_latex(rows: Sequence[dict[str, Any]], columns: Sequence[str], caption: str = "") -> str:
    """A booktabs table: grid values, query, point, series, value, method."""
    columns = list(columns)
    grid_cols = columns[: columns.index("query")]
    audit = any(r["series"] != "dpcompose" for r in rows)
    cols = grid_cols + ["query", "at"] + (["series"] if audit else []) + ["value", "method"]
    body = []
    for r in rows:
        cells = []
        for c in cols:
            v = r[c]
            if c == "value":
                if r["error"] and v is None:
                    v = "error: " + r["error"]
                elif r["lower"] is not None:
                    v = f"[{r['lower']}, {r['upper']}]"
            cells.append("" if v is None else str(v))
        body.append(cells)
    return latex_table([c.replace("_", " ") for c in cols], body, caption)


# ---------------------------------------------------------------------------------------
# the registry (the order is the order of the --format choices)
# ---------------------------------------------------------------------------------------

#: tables print 10 significant digits (``--digits N`` for more); JSON and CSV keep 30
TABLE = register(OutputFormat("table", "aligned text table", digits=10), composition=_table)
JSON = register(OutputFormat("json", "one JSON object"), composition=_json)
CSV = register(
    OutputFormat("csv", "comma-separated values", suffixes=(".csv",)),
    composition=_csv,
    tidy=_tidy_csv,
)
JSONL = register(
    OutputFormat("jsonl", "JSON lines", suffixes=(".jsonl", ".ndjson", ".json"), aliases=("json",)),
    tidy=_tidy_jsonl,
)
PARQUET = register(
    OutputFormat("parquet", "Parquet", suffixes=(".parquet", ".pq"), binary=True),
    tidy=_tidy_parquet,
)
LATEX = register(
    OutputFormat("latex", "booktabs LaTeX table", suffixes=(".tex",), digits=LATEX_DIGITS),
    composition=_latex,
    tidy=_tidy_latex,
)
