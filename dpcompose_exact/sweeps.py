"""Sweeps: tables of compositions, curve queries and audits over parameter grids.

A grid file (TOML, or JSON with the same structure) names a mechanism template whose
strings hold ``{placeholders}``, the grid (the cartesian product of the listed values)
and the queries::

    [[mechanism]]
    constraints = [["{eps}", "0"], ["{eps}/2", "{delta}"]]
    count = "{k}"

    [grid]
    eps = ["0.1", "0.3", "1"]
    delta = ["1e-6", "0.02"]
    k = [10, 20, 50, 100]

    [query]
    delta_at_epsilon = ["1", "2"]
    epsilon_at_delta = ["1e-5"]
    audit = false   # true (or a list of accountants): also run the numeric accountants

Placeholders are substituted textually (in parentheses when the string holds more than
the placeholder, so ``"{eps}/2"`` halves the whole value) and the result is parsed
exactly; values are strings or integers, floats are refused.

A *cell* is one grid point and one query.  Cells are computed locally on a Dask
``LocalCluster`` (process workers, one per core), on an existing Dask cluster
(``scheduler="tcp://HOST:PORT"``) or in this process (``serial=True``); the largest
compositions start first.  Every finished cell is written at once to a SQLite store next
to the output, keyed by a hash of the cell in canonical exact form (mechanism list, query,
digits, memory limit, package version), so that a rerun computes only what is missing.
A cell whose worker dies (killed, out of memory) is retried once, then reported as failed;
a cell with invalid parameters gets its one-line error.  Either way the sweep goes on.

>>> grid = {"mechanism": [{"constraints": [["{eps}", "0"]], "count": "{k}"}],
...         "grid": {"eps": ["1/2"], "k": [1, 2]},
...         "query": {"delta_at_epsilon": ["1/2"]}}
>>> res = sweep(grid, serial=True, digits=8)
>>> [(r["k"], r["value"], r["exact"]) for r in res.rows]
[(1, '0', '0'), (2, '0.15245191', '(-exp(1/2) + exp(1))/(1 + exp(1/2))**2')]
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import os
import re
import sqlite3
import sys
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .api import Mechanism, compose
from .errors import (
    CertificationError,
    DPComposeError,
    InactiveConstraintWarning,
    InvalidParameterError,
)
from .genfunc import DEFAULT_MEMORY_LIMIT, estimate_bytes
from .numbers import linear_form, parse_exact, parse_rational
from .pld import canonical_pair
from .specs import parse_count
from .value import Value

__all__ = [
    "Grid",
    "SweepResult",
    "load_grid",
    "sweep",
    "run_task",
    "FORMATS",
    "QUERIES",
    "format_for",
    "store_path_for",
]

QUERIES = ("delta_at_epsilon", "epsilon_at_delta", "audit")
"""Query kinds of a grid file's ``[query]`` table."""

FORMATS = ("csv", "jsonl", "parquet", "latex")
"""Output formats (chosen by the output's suffix or explicitly)."""

_SUFFIXES = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".tex": "latex",
}

#: Memory a worker process needs besides the exact result (interpreter, sympy, FLINT).
WORKER_OVERHEAD = 2**30

#: Closed forms longer than this many characters are left out of the table by default.
EXACT_CHARS = 200

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_FIXED = ("query", "at", "series", "value", "exact", "lower", "upper", "method")
_TAIL = ("rel_error", "sound", "seconds", "error")


# ---------------------------------------------------------------------------------------
# the grid file
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Grid:
    """A validated grid file.

    Attributes:
        source: the file name (for messages).
        mechanisms: ``((constraint templates, count template), ...)``; each constraint
            template is a pair of strings (or ints) with ``{placeholders}``.
        variables: ``((name, values), ...)`` in file order; the grid is their product.
        delta_at_epsilon: epsilon templates where delta(eps) is asked.
        epsilon_at_delta: delta templates where eps(delta) is asked.
        audit: the accountants to run per grid point (empty: no audit).
    """

    source: str
    mechanisms: tuple[tuple[tuple[tuple[str, str], ...], str], ...]
    variables: tuple[tuple[str, tuple[Any, ...]], ...]
    delta_at_epsilon: tuple[str, ...] = ()
    epsilon_at_delta: tuple[str, ...] = ()
    audit: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The grid variables, in file order (the first columns of the table)."""
        return tuple(n for n, _ in self.variables)

    def __len__(self) -> int:
        return math.prod(len(v) for _, v in self.variables)

    def points(self) -> Iterator[dict[str, Any]]:
        """The grid points (cartesian product, last variable fastest)."""
        names = self.names
        for combo in itertools.product(*(v for _, v in self.variables)):
            yield dict(zip(names, combo))

    @property
    def queries_per_point(self) -> int:
        """Cells per grid point (the audit counts as one cell)."""
        return len(self.delta_at_epsilon) + len(self.epsilon_at_delta) + bool(self.audit)


def _fail(source: str, key: str, problem: str, accepted: str) -> InvalidParameterError:
    return InvalidParameterError(f"grid file {source}: {key}: {problem}; {accepted}")


def _read_grid_file(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidParameterError(
            f"grid file {str(path)!r}: cannot read ({exc.strerror})"
        ) from None
    try:
        if path.suffix.lower() == ".json":
            return json.loads(raw)
        try:
            import tomllib
        except ModuleNotFoundError:  # Python < 3.11
            import tomli as tomllib  # type: ignore[no-redef]
        return tomllib.loads(raw.decode())
    except Exception as exc:  # parse errors of either format
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
        raise InvalidParameterError(
            f"grid file {path.name}: cannot parse as {kind} ({first}); expected the "
            "[[mechanism]], [grid] and [query] tables"
        ) from None


def _scalar(source: str, key: str, v: Any, what: str) -> Any:
    """A template or grid value: a string or an int (floats are not exact)."""
    if isinstance(v, bool):
        raise _fail(source, key, f"{v!r} is a boolean", f"expected {what}")
    if isinstance(v, float):
        raise _fail(
            source, key, f"{v!r} is a float, which is not exact", f'write it as a string ("{v}")'
        )
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip():
        return v.strip()
    raise _fail(source, key, f"{v!r} is not a value", f"expected {what}")


def load_grid(source: str | os.PathLike[str] | Mapping[str, Any]) -> Grid:
    """Read and validate a grid file (TOML, or ``.json``) or a dict of the same structure.

    Raises:
        InvalidParameterError: one line naming the file, the key and what is accepted.
    """
    if isinstance(source, Mapping):
        name, data = "<dict>", source
    else:
        path = Path(source)
        name, data = path.name, _read_grid_file(path)
    if not isinstance(data, Mapping):
        raise _fail(name, "(top level)", "not a table", "expected [[mechanism]], [grid], [query]")
    unknown = sorted(set(data) - {"mechanism", "mechanisms", "grid", "query"})
    if unknown:
        raise _fail(
            name, unknown[0], "unknown key", "accepted: mechanism (or mechanisms), grid, query"
        )
    mechs = _load_mechanisms(name, data.get("mechanism", data.get("mechanisms")))
    variables = _load_variables(name, data.get("grid", {}))
    queries = _load_queries(name, data.get("query"))
    grid = Grid(name, mechs, variables, *queries)
    _check_placeholders(grid)
    return grid


def _load_mechanisms(name: str, items: Any) -> tuple:
    if not isinstance(items, list) or not items:
        raise _fail(
            name,
            "mechanism",
            "missing or empty",
            'expected [[mechanism]] tables with constraints = [["EPS", "DELTA"], ...] and count',
        )
    out = []
    for i, item in enumerate(items):
        key = f"mechanism[{i}]"
        if not isinstance(item, Mapping):
            raise _fail(name, key, "not a table", "expected constraints and count")
        extra = sorted(set(item) - {"constraints", "count"})
        if extra:
            raise _fail(name, f"{key}.{extra[0]}", "unknown key", "accepted: constraints, count")
        cons = item.get("constraints")
        if not isinstance(cons, list) or not cons:
            raise _fail(
                name,
                f"{key}.constraints",
                "missing or empty",
                'expected a list of ["EPS", "DELTA"] pairs',
            )
        pairs = []
        for j, c in enumerate(cons):
            ckey = f"{key}.constraints[{j}]"
            if not isinstance(c, list) or len(c) != 2:
                raise _fail(name, ckey, f"{c!r} is not a pair", 'expected ["EPS", "DELTA"]')
            what = 'a string such as "0.3" or "{eps}/2", or an integer'
            pairs.append(tuple(str(_scalar(name, ckey, v, what)) for v in c))
        if "count" not in item:
            raise _fail(name, f"{key}.count", "missing", 'expected an integer or "{k}"')
        count = _scalar(name, f"{key}.count", item["count"], 'an integer or "{k}"')
        out.append((tuple(pairs), str(count)))
    return tuple(out)


def _load_variables(name: str, table: Any) -> tuple:
    if not isinstance(table, Mapping):
        raise _fail(name, "grid", "not a table", "expected [grid] with NAME = [values, ...]")
    out = []
    for var, values in table.items():
        key = f"grid.{var}"
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var):
            raise _fail(name, key, "not a valid name", "names are letters, digits and _")
        if var in _FIXED + _TAIL:
            raise _fail(name, key, "the name is a column of the table", "choose another name")
        if not isinstance(values, list) or not values:
            raise _fail(name, key, f"{values!r} is not a non-empty list", "expected [v1, v2, ...]")
        vals = tuple(
            _scalar(name, f"{key}[{i}]", v, "a string or an integer") for i, v in enumerate(values)
        )
        out.append((var, vals))
    return tuple(out)


def _load_queries(name: str, table: Any) -> tuple:
    accepted = "accepted: delta_at_epsilon, epsilon_at_delta (lists), audit (true or a list)"
    if not isinstance(table, Mapping):
        raise _fail(name, "query", "missing or not a table", accepted)
    extra = sorted(set(table) - set(QUERIES))
    if extra:
        raise _fail(name, f"query.{extra[0]}", "unknown query", accepted)
    lists = []
    for q in ("delta_at_epsilon", "epsilon_at_delta"):
        vals = table.get(q, [])
        if isinstance(vals, (str, int)) and not isinstance(vals, bool):
            vals = [vals]
        if not isinstance(vals, list):
            raise _fail(name, f"query.{q}", f"{vals!r} is not a list", 'expected ["1", "2"]')
        lists.append(
            tuple(
                str(_scalar(name, f"query.{q}[{i}]", v, "a string or an integer"))
                for i, v in enumerate(vals)
            )
        )
    audit = table.get("audit", False)
    from .audit import ACCOUNTANTS  # the accountant names only; no library is imported

    if isinstance(audit, bool):
        accountants = ACCOUNTANTS if audit else ()
    elif isinstance(audit, list) and audit and all(a in ACCOUNTANTS for a in audit):
        accountants = tuple(dict.fromkeys(audit))
    else:
        raise _fail(
            name, "query.audit", f"{audit!r}", f"expected true, false or a list of {ACCOUNTANTS}"
        )
    if not (lists[0] or lists[1] or accountants):
        raise _fail(name, "query", "no query", accepted)
    return lists[0], lists[1], tuple(accountants)


def _check_placeholders(grid: Grid) -> None:
    names = set(grid.names)
    used: set[str] = set()
    templates = [
        (f"mechanism[{i}].constraints", s)
        for i, (cons, _) in enumerate(grid.mechanisms)
        for pair in cons
        for s in pair
    ]
    templates += [(f"mechanism[{i}].count", c) for i, (_, c) in enumerate(grid.mechanisms)]
    templates += [("query.delta_at_epsilon", s) for s in grid.delta_at_epsilon]
    templates += [("query.epsilon_at_delta", s) for s in grid.epsilon_at_delta]
    for key, text in templates:
        for var in _PLACEHOLDER.findall(text):
            if var not in names:
                known = ", ".join(sorted(names)) or "none"
                raise _fail(
                    grid.source,
                    key,
                    f"placeholder {{{var}}} is not a grid variable",
                    f"grid variables: {known}",
                )
            used.add(var)
        if "{" in _PLACEHOLDER.sub("", text) or "}" in _PLACEHOLDER.sub("", text):
            raise _fail(grid.source, key, f"{text!r} has a stray brace", "write {name}")
    for var in grid.names:
        if var not in used:
            raise _fail(
                grid.source,
                f"grid.{var}",
                "used by no {" + var + "} placeholder",
                "every grid variable must appear in a template",
            )


def _substitute(text: str, point: Mapping[str, Any], wrap: bool = True) -> str:
    """Replace the placeholders; parenthesize unless the string is one placeholder."""
    bare = not wrap or _PLACEHOLDER.fullmatch(text) is not None

    def repl(m: re.Match[str]) -> str:
        v = str(point[m.group(1)])
        return v if bare else f"({v})"

    return _PLACEHOLDER.sub(repl, text)


# ---------------------------------------------------------------------------------------
# cells and tasks
# ---------------------------------------------------------------------------------------

Kinds = tuple[tuple[tuple[tuple[str, str], ...], int], ...]


@dataclass(frozen=True)
class _Query:
    key: str  # the store key of the cell
    kind: str  # one of QUERIES
    at: str  # the query point as written (after substitution); "" for the audit
    points: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # the audit's grids


@dataclass(frozen=True)
class Task:
    """One composition and the queries asked of it (the unit of work on a worker)."""

    mechanisms: Kinds
    queries: tuple[_Query, ...]
    digits: int
    max_memory: int | None
    exact_chars: int
    accountants: tuple[str, ...]
    version: str
    size: int = 0


def _version() -> str:
    from . import __version__

    return __version__


def _canonical_kinds(point: Mapping[str, Any], grid: Grid) -> Kinds:
    """The substituted mechanism list in canonical exact form (merged, sorted)."""
    merged: dict[tuple[tuple[str, str], ...], int] = {}
    for cons, count_t in grid.mechanisms:
        pairs = [(_substitute(e, point), _substitute(d, point)) for e, d in cons]
        count = parse_count(_substitute(count_t, point, wrap=False), "count")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InactiveConstraintWarning)
            m = Mechanism(pairs)
        merged[m.pairs] = merged.get(m.pairs, 0) + count
    kinds = tuple(sorted((p, n) for p, n in merged.items() if n))
    if not kinds:
        raise InvalidParameterError("nothing to compose: every count is 0")
    return kinds


def _canonical_point(kind: str, at: str) -> str:
    if kind == "delta_at_epsilon":
        form = linear_form(parse_exact(at, "eps"), "eps")
        return repr((str(form.rational), [(p, str(c)) for p, c in form.logs]))
    return str(parse_rational(at, "delta"))


def _cell_key(payload: Mapping[str, Any]) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _size(kinds: Kinds) -> int:
    """Work estimate for ordering: the exact route's memory estimate (k x constraints)."""
    try:
        return estimate_bytes([(canonical_pair(Mechanism(p).region), n) for p, n in kinds])
    except DPComposeError:
        return sum(n * len(p) for p, n in kinds)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, DPComposeError):
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _value_fields(v: Value, digits: int, exact_chars: int) -> dict[str, Any]:
    out: dict[str, Any] = {"value": None, "exact": None, "lower": None, "upper": None}
    try:
        out["value"] = v.decimal(digits)
    except CertificationError:  # an enclosure too wide for `digits`: its bounds instead
        out["lower"], out["upper"] = v.interval(digits)
        have = v.certified_digits()
        try:
            out["value"] = v.decimal(have) if have > 0 else None
        except CertificationError:
            out["value"] = None
    if v.is_exact:
        text = v.exact
        if text is not None and len(text) <= exact_chars:
            out["exact"] = text
    return out


def _row(q: _Query, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"query": q.kind, "at": q.at, "series": "dpcompose"}
    for col in _FIXED[3:] + _TAIL:
        row[col] = None
    row.update(fields)
    return row


def run_task(task: Task) -> dict[str, list[dict[str, Any]]]:
    """Compute one task: compose once, answer its queries; never raises.

    Returns:
        ``{cell key: [row, ...]}``; each row lacks the grid columns.  A failure (invalid
        parameters, over the memory limit, a bug) becomes the row's one-line ``error``.
    """
    out: dict[str, list[dict[str, Any]]] = {}
    start = time.perf_counter()
    if task.version != _version():
        msg = f"this worker runs dpcompose_exact {_version()}, the sweep {task.version}"
        return {q.key: [_row(q, error=msg, _transient=True)] for q in task.queries}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InactiveConstraintWarning)
            comp = compose(
                [(Mechanism(p), n) for p, n in task.mechanisms],
                digits=task.digits,
                max_memory=task.max_memory,
            )
    except (Exception, MemoryError) as exc:  # one row per cell says why
        msg = _one_line(exc)
        secs = time.perf_counter() - start
        return {q.key: [_row(q, error=msg, seconds=secs)] for q in task.queries}
    compose_secs = time.perf_counter() - start
    for q in task.queries:
        t0 = time.perf_counter()
        try:
            if q.kind == "audit":
                out[q.key] = _audit_rows(task, q, compose_secs)
                continue
            v = comp.delta(q.at) if q.kind == "delta_at_epsilon" else comp.epsilon(q.at)
            fields = _value_fields(v, task.digits, task.exact_chars)
            secs = compose_secs + time.perf_counter() - t0
            out[q.key] = [_row(q, method=comp.method, seconds=secs, **fields)]
        except (Exception, MemoryError) as exc:
            secs = compose_secs + time.perf_counter() - t0
            out[q.key] = [_row(q, method=comp.method, seconds=secs, error=_one_line(exc))]
    return out


def _audit_rows(task: Task, q: _Query, compose_secs: float) -> list[dict[str, Any]]:
    from .audit import LIBRARY, SERIES, audit
    from .specs import MechanismKind

    t0 = time.perf_counter()
    kinds = [MechanismKind(p, n) for p, n in task.mechanisms]
    try:
        report = audit(
            kinds,
            eps_grid=q.points[0] or None,
            deltas=q.points[1] or None,
            accountants=task.accountants,
        )
    except (Exception, MemoryError) as exc:
        return [_row(q, seconds=time.perf_counter() - t0, error=_one_line(exc))]
    secs = compose_secs + time.perf_counter() - t0
    owner = {s: a for a, names in SERIES.items() for s in names}
    rows = []
    for r in report.rows:
        kind = "delta_at_epsilon" if r.quantity == "delta" else "epsilon_at_delta"
        rows.append(
            {
                "query": kind,
                "at": r.at,
                "series": r.series,
                "value": repr(r.reported),
                "exact": None,
                "lower": None,
                "upper": None,
                "method": LIBRARY.get(owner.get(r.series, ""), ""),
                "rel_error": r.rel_error if math.isfinite(r.rel_error) else None,
                "sound": r.sound,
                "seconds": secs,
                "error": r.note or None,
            }
        )
    for name, why in report.skipped:
        rows.append(_row(q, series=name, error=f"skipped: {why}"))
    return rows


# ---------------------------------------------------------------------------------------
# the store
# ---------------------------------------------------------------------------------------


class _Store:
    """Finished cells, written as they finish (SQLite; one transaction per task)."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        try:
            self.db = sqlite3.connect(path or ":memory:")
            if path:
                # a commit survives the process being killed (no fsync: a power cut may
                # lose the last cells, which a rerun then computes again)
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS cells (key TEXT PRIMARY KEY, rows TEXT NOT NULL, "
                "version TEXT NOT NULL, created REAL NOT NULL)"
            )
            self.db.commit()
        except sqlite3.Error as exc:
            raise InvalidParameterError(
                f"store {path!r}: {exc}; pass another --store or remove the file"
            ) from None

    def get(self, keys: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        out = {}
        keys = list(dict.fromkeys(keys))
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ",".join("?" * len(chunk))
            cur = self.db.execute(f"SELECT key, rows FROM cells WHERE key IN ({marks})", chunk)
            out.update((k, json.loads(r)) for k, r in cur)
        return out

    def put(self, results: Mapping[str, list[dict[str, Any]]], version: str) -> None:
        now = time.time()
        self.db.executemany(
            "INSERT OR REPLACE INTO cells VALUES (?, ?, ?, ?)",
            [(k, json.dumps(rows), version, now) for k, rows in results.items()],
        )
        self.db.commit()

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM cells").fetchone()[0])

    def close(self) -> None:
        self.db.close()


def store_path_for(output: str | os.PathLike[str] | None, grid_file: str | None) -> str | None:
    """Where the store lives: ``OUT.sweep.sqlite`` next to the output, else next to the grid."""
    base = output if output not in (None, "-") else grid_file
    if base is None:
        return None
    p = Path(base)
    return str(p.with_name(p.name.split(".")[0] + ".sweep.sqlite"))


# ---------------------------------------------------------------------------------------
# the result table
# ---------------------------------------------------------------------------------------


@dataclass
class SweepResult:
    """The tidy table of a sweep and how it was obtained.

    Attributes:
        rows: one dict per grid point and query (grid values first, then :attr:`columns`).
        columns: the column names, in order.
        cells: grid points times queries.
        reused: cells read from the store.
        computed: cells computed in this run.
        failed: cells whose rows carry an error (cells with invalid parameters are
            found while planning: failed, neither reused nor computed).
        retried: tasks retried after their worker died.
        store: the store's path (None: kept in memory).
        seconds: wall time of the whole sweep.
        startup_seconds: time to start (or reach) the Dask cluster.
    """

    rows: list[dict[str, Any]]
    columns: list[str]
    cells: int
    reused: int = 0
    computed: int = 0
    failed: int = 0
    retried: int = 0
    store: str | None = None
    seconds: float = 0.0
    startup_seconds: float = 0.0
    computed_keys: set[str] = field(default_factory=set)

    def summary(self) -> str:
        """One line: cells, reused, computed, failed, time."""
        where = f" from {self.store}" if self.store else ""
        return (
            f"{self.cells} cells: {self.reused} reused{where}, {self.computed} computed, "
            f"{self.failed} failed, in {self.seconds:.1f} s"
        )

    def to_csv(self) -> str:
        """The table as CSV (empty fields for missing values)."""
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.columns, lineterminator="\n")
        w.writeheader()
        for r in self.rows:
            w.writerow({k: "" if v is None else v for k, v in r.items()})
        return buf.getvalue()

    def to_jsonl(self) -> str:
        """The table as JSON lines (one object per row; missing values are null)."""
        return "".join(json.dumps(r) + "\n" for r in self.rows)

    def to_arrow(self) -> Any:
        """The table as a ``pyarrow.Table`` (needs pyarrow: ``pip install ".[sweep]"``)."""
        pa = _pyarrow()
        types: dict[str, Any] = {}
        for c in self.columns:
            vals = [r[c] for r in self.rows if r[c] is not None]
            if c in ("seconds", "rel_error"):
                types[c] = pa.float64()
            elif c == "sound":
                types[c] = pa.bool_()
            elif vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
                types[c] = pa.int64()
            else:
                types[c] = pa.string()
        schema = pa.schema([(c, types[c]) for c in self.columns])
        data = {
            c: [r[c] if (r[c] is None or types[c] != pa.string()) else str(r[c]) for r in self.rows]
            for c in self.columns
        }
        return pa.Table.from_pydict(data, schema=schema)

    def to_latex(self, caption: str = "") -> str:
        """A booktabs table: grid values, query, point, series, value, method."""
        grid_cols = self.columns[: self.columns.index("query")]
        audit = any(r["series"] != "dpcompose" for r in self.rows)
        cols = grid_cols + ["query", "at"] + (["series"] if audit else []) + ["value", "method"]
        head = [_tex(c.replace("_", " ")) for c in cols]
        lines = [
            "\\begin{table}[htbp]",
            "\\centering",
            "\\begin{tabular}{" + "l" * len(cols) + "}",
            "\\toprule",
            " & ".join(head) + " \\\\",
            "\\midrule",
        ]
        for r in self.rows:
            cells = []
            for c in cols:
                v = r[c]
                if c == "value":
                    if r["error"] and v is None:
                        v = "error: " + r["error"]
                    elif r["lower"] is not None:
                        v = f"[{r['lower']}, {r['upper']}]"
                cells.append(_tex("" if v is None else str(v)))
            lines.append(" & ".join(cells) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        if caption:
            lines.append(f"\\caption{{{_tex(caption)}}}")
        lines.append("\\end{table}")
        return "\n".join(lines) + "\n"

    def write(self, path: str | os.PathLike[str], fmt: str | None = None) -> None:
        """Write the table to ``path`` in ``fmt`` (default: from the suffix)."""
        fmt = fmt or format_for(path)
        if fmt == "parquet":
            table = self.to_arrow()  # a clear error when pyarrow is missing
            import pyarrow.parquet as pq

            pq.write_table(table, str(path))
            return
        text = {"csv": self.to_csv, "jsonl": self.to_jsonl, "latex": self.to_latex}[fmt]()
        Path(path).write_text(text)

    def text(self, fmt: str) -> str:
        """The table as text in ``fmt`` (csv, jsonl or latex)."""
        if fmt == "parquet":
            raise InvalidParameterError("Parquet is binary: write it to a file with -o OUT.parquet")
        return {"csv": self.to_csv, "jsonl": self.to_jsonl, "latex": self.to_latex}[fmt]()


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise InvalidParameterError(
            'Parquet output needs pyarrow: pip install ".[sweep]" (or pyarrow), '
            "or choose csv, jsonl or latex"
        ) from None
    return pyarrow


def _tex(text: str) -> str:
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


def format_for(path: str | os.PathLike[str] | None, fmt: str | None = None) -> str:
    """The output format: ``fmt`` when given, else from the suffix (``csv`` for stdout)."""
    if fmt is not None:
        if fmt == "json":
            return "jsonl"
        if fmt not in FORMATS:
            raise InvalidParameterError(
                f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}"
            )
        return fmt
    if path in (None, "-"):
        return "csv"
    suffix = Path(path).suffix.lower()
    if suffix not in _SUFFIXES:
        raise InvalidParameterError(
            f"output {str(path)!r}: cannot tell the format from the suffix {suffix or '(none)'}; "
            f"use .csv, .jsonl, .parquet or .tex, or --format"
        )
    return _SUFFIXES[suffix]


# ---------------------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------------------

Progress = Callable[[int, int], None]


def _terminal_progress(stream: Any = None) -> Progress | None:
    """A progress bar on ``stream`` (stderr) when it is a terminal, else None."""
    stream = stream or sys.stderr
    if not stream.isatty():
        return None
    start = time.monotonic()

    def show(done: int, total: int) -> None:
        elapsed = time.monotonic() - start
        eta = elapsed / done * (total - done) if done else float("nan")
        width = 30
        fill = int(width * done / total) if total else width
        eta_s = f"{int(eta // 60)}m{int(eta % 60):02d}s" if math.isfinite(eta) else "?"
        bar = "#" * fill + "." * (width - fill)
        stream.write(f"\rsweep [{bar}] {done}/{total} cells, ETA {eta_s} ")
        if done >= total:
            stream.write("\n")
        stream.flush()

    return show


def sweep(
    grid: str | os.PathLike[str] | Mapping[str, Any] | Grid,
    output: str | os.PathLike[str] | None = None,
    *,
    fmt: str | None = None,
    workers: int | None = None,
    scheduler: Any = None,
    serial: bool = False,
    max_memory: int | None = DEFAULT_MEMORY_LIMIT,
    digits: int = 30,
    exact_chars: int = EXACT_CHARS,
    resume: bool = True,
    store: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    runner: Callable[[Task], dict[str, list[dict[str, Any]]]] | None = None,
) -> SweepResult:
    """Run a sweep: every grid point and query, exact or certified, into one tidy table.

    Args:
        grid: a grid file (TOML or JSON), a dict of the same structure, or a :class:`Grid`.
        output: write the table there (format from the suffix or ``fmt``); None: don't.
        fmt: ``csv``, ``jsonl``, ``parquet`` or ``latex``.
        workers: Dask worker processes of the local cluster (default: one per core).
        scheduler: ``"tcp://HOST:PORT"`` of an existing Dask scheduler, or a
            ``distributed.Client``; the local cluster is not started then.
        serial: compute in this process, without Dask (debugging, baselines).
        max_memory: bytes the exact route may use per cell (None: no limit); the local
            workers' memory limit is this plus :data:`WORKER_OVERHEAD`.
        digits: significant digits of the certified decimals.
        exact_chars: closed forms up to this length go into the ``exact`` column.
        resume: reuse the cells already in the store (False: recompute and overwrite).
        store: the SQLite store (default: ``OUT.sweep.sqlite`` next to ``output``, else
            next to the grid file; in memory for a dict without output).
        progress: ``callback(done, total)`` after each finished task.
        runner: the function computing one :class:`Task` (default :func:`run_task`);
            it must be picklable for Dask.

    Returns:
        A :class:`SweepResult`.

    Raises:
        InvalidParameterError: a malformed grid file or bad options (one line).
    """
    t_start = time.perf_counter()
    g = grid if isinstance(grid, Grid) else load_grid(grid)
    if not isinstance(digits, int) or isinstance(digits, bool) or digits < 1:
        raise InvalidParameterError(f"digits = {digits!r} must be a positive integer")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise InvalidParameterError(f"workers = {workers!r} must be a positive integer")
    out_fmt = format_for(output, fmt) if output is not None else None
    if out_fmt == "parquet":
        _pyarrow()  # before any work, not after
    grid_file = None if isinstance(grid, (Mapping, Grid)) else str(grid)
    store_path = str(store) if store is not None else store_path_for(output, grid_file)
    version = _version()

    # plan: canonical cells, their keys, and one task per distinct composition
    plan: list[tuple[dict[str, Any], list[tuple[_Query | None, dict[str, Any] | None]]]] = []
    todo: dict[Kinds, dict[str, _Query]] = {}
    common = {"digits": digits, "max_memory": max_memory, "version": version}
    for point in g.points():
        cells: list[tuple[_Query | None, dict[str, Any] | None]] = []
        try:
            kinds: Any = _canonical_kinds(point, g)
        except (DPComposeError, TypeError) as exc:
            kinds = exc
        if isinstance(kinds, Exception):
            err = _one_line(kinds)
            for kind, at in _point_queries(g, point):
                cells.append((None, _row(_Query("", kind, at), error=err)))
            plan.append((point, cells))
            continue
        mech_json = [[list(map(list, p)), n] for p, n in kinds]
        for kind, at in _point_queries(g, point):
            try:
                if kind == "audit":
                    pts = (
                        tuple(_substitute(a, point) for a in g.delta_at_epsilon),
                        tuple(_substitute(a, point) for a in g.epsilon_at_delta),
                    )
                    canon: Any = [
                        [_canonical_point("delta_at_epsilon", a) for a in pts[0]],
                        [_canonical_point("epsilon_at_delta", a) for a in pts[1]],
                        list(g.audit),
                    ]
                    q = _Query("", kind, at, pts)
                else:
                    canon = _canonical_point(kind, at)
                    q = _Query("", kind, at)
            except (DPComposeError, TypeError) as exc:
                cells.append((None, _row(_Query("", kind, at), error=_one_line(exc))))
                continue
            payload = {"mechanisms": mech_json, "query": kind, "at": canon, **common}
            if kind != "audit":
                payload["exact_chars"] = exact_chars
            q = _Query(_cell_key(payload), q.kind, q.at, q.points)
            cells.append((q, None))
            todo.setdefault(kinds, {})[q.key] = q
        plan.append((point, cells))

    db = _Store(store_path)
    try:
        keys = [q.key for qs in todo.values() for q in qs.values()]
        found = db.get(keys) if resume else {}
        tasks = []
        for kinds, qs in todo.items():
            missing = tuple(q for q in qs.values() if q.key not in found)
            if missing:
                size = _size(kinds)
                tasks.append(
                    Task(kinds, missing, digits, max_memory, exact_chars, g.audit, version, size)
                )
        tasks.sort(key=lambda t: -t.size)  # the largest start first
        results: dict[str, list[dict[str, Any]]] = {}
        result = SweepResult(rows=[], columns=[], cells=0, store=store_path)
        total = sum(len(t.queries) for t in tasks)
        done = 0

        def finish(found_rows: dict[str, list[dict[str, Any]]], keep: bool) -> None:
            nonlocal done
            results.update(found_rows)
            if keep:  # not the cells a worker could not compute (another version)
                good = {
                    k: rows
                    for k, rows in found_rows.items()
                    if not any(r.get("_transient") for r in rows)
                }
                db.put(good, version)
            done += len(found_rows)
            if progress is not None:
                progress(done, total)

        if tasks:
            run = runner or run_task
            if serial:
                for t in tasks:
                    finish(run(t), True)
            else:
                result.retried, result.startup_seconds = _run_dask(
                    tasks, run, finish, workers, scheduler, max_memory
                )
    finally:
        db.close()

    columns = list(g.names) + list(_FIXED) + list(_TAIL)
    rows: list[dict[str, Any]] = []
    reused = computed = failed = cells_n = 0
    for point, cells in plan:
        for q, direct in cells:
            cells_n += 1
            if q is None:  # invalid parameters, found while planning
                got = [direct] if direct is not None else []
            elif q.key in found:
                got = found[q.key]
                reused += 1
            else:
                got = results.get(q.key, [])
                computed += 1
                result.computed_keys.add(q.key)
            if not got or all(r.get("error") and r.get("value") is None for r in got):
                failed += 1  # (an audit cell with one accountant skipped has values)
            for r in got:
                rows.append({**point, **{c: r.get(c) for c in columns if c not in point}})
    result.rows, result.columns, result.cells = rows, columns, cells_n
    result.reused, result.computed, result.failed = reused, computed, failed
    result.seconds = time.perf_counter() - t_start
    if output is not None:
        result.write(output, out_fmt)
    return result


def _point_queries(g: Grid, point: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    for at in g.delta_at_epsilon:
        yield "delta_at_epsilon", _substitute(at, point)
    for at in g.epsilon_at_delta:
        yield "epsilon_at_delta", _substitute(at, point)
    if g.audit:
        yield "audit", ""


def _died_rows(task: Task, why: str) -> dict[str, list[dict[str, Any]]]:
    return {q.key: [_row(q, error=why)] for q in task.queries}


def _run_dask(
    tasks: list[Task],
    run: Callable[[Task], dict[str, list[dict[str, Any]]]],
    finish: Callable[[dict[str, list[dict[str, Any]]], bool], None],
    workers: int | None,
    scheduler: Any,
    max_memory: int | None,
) -> tuple[int, float]:
    """Submit every task, largest first; retry a task once when its worker dies."""
    try:
        import dask
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise InvalidParameterError(
            'parallel sweeps need Dask: pip install ".[sweep]" (or dask[distributed]); '
            "or run with --serial"
        ) from None
    # A death fails the task at once (it is retried here, exactly once).  The local
    # cluster must not give up on a worker that its nanny is restarting (under load a
    # restart can take longer than the default 15 s): it would close the nanny for good.
    cfg = {
        "distributed.scheduler.allowed-failures": 0,
        "distributed.scheduler.worker-saturation": 1.0,
        "distributed.deploy.lost-worker-timeout": "3650 days",
    }
    with dask.config.set(cfg):
        return _run_dask_configured(
            tasks, run, finish, workers, scheduler, max_memory, Client, LocalCluster, as_completed
        )


def _run_dask_configured(
    tasks: list[Task],
    run: Callable[[Task], dict[str, list[dict[str, Any]]]],
    finish: Callable[[dict[str, list[dict[str, Any]]], bool], None],
    workers: int | None,
    scheduler: Any,
    max_memory: int | None,
    Client: Any,  # noqa: N803 - the distributed classes, imported by the caller
    LocalCluster: Any,  # noqa: N803
    as_completed: Any,
) -> tuple[int, float]:
    import logging

    t0 = time.perf_counter()
    cluster = None
    own_client = True
    if scheduler is None:
        from dask.system import CPU_COUNT

        limit = 0 if max_memory is None else max_memory + WORKER_OVERHEAD
        cluster = LocalCluster(
            n_workers=workers or CPU_COUNT,
            threads_per_worker=1,
            processes=True,
            memory_limit=limit,
            dashboard_address=None,
            silence_logs=logging.CRITICAL,
        )
        client = Client(cluster)
    elif isinstance(scheduler, str):
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise InvalidParameterError(
                f"cannot reach the Dask scheduler {scheduler!r} ({_one_line(exc)}); start "
                "one with `dask scheduler` and workers with `dask worker ADDRESS`"
            ) from None
    else:
        client, own_client = scheduler, False
    startup = time.perf_counter() - t0
    retried = 0
    queue = deque(tasks)  # largest first
    attempt: dict[Any, tuple[Task, int]] = {}
    pending = as_completed()

    def submit(task: Task, n: int) -> None:
        f = client.submit(run, task, priority=task.size, pure=False)
        attempt[f.key] = (task, n)
        pending.add(f)

    def fill() -> None:
        # one task per worker thread: a dying worker then takes only its own cell down,
        # and the largest remaining cell is the next to start
        try:
            slots = max(1, sum(client.nthreads().values()))
        except Exception:  # the scheduler is unreachable: the next result() says why
            slots = 1
        while queue and len(attempt) < slots:
            submit(queue.popleft(), 0)

    try:
        fill()
        for fut in pending:
            task, n = attempt.pop(fut.key)
            try:
                res = fut.result()
            except Exception as exc:  # the worker died (KilledWorker) or the link broke
                fut.release()
                if n == 0:
                    retried += 1
                    submit(task, 1)
                    continue
                limit = "no limit" if max_memory is None else f"{max_memory / 2**30:g} GiB"
                why = (
                    "the worker died twice on this cell (killed, or over the memory limit; "
                    f"--max-memory {limit}): {_one_line(exc)}"
                )
                finish(_died_rows(task, why), False)
                fill()
                continue
            fut.release()
            finish(res, True)
            fill()
    finally:
        if own_client:
            client.close()
        if cluster is not None:
            cluster.close()
    return retried, startup
