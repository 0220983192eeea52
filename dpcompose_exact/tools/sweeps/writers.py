"""The result table of a sweep and its writers: CSV, JSON lines, Parquet, LaTeX."""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InvalidParameterError
from ...optional import require
from ...presentation.render import latex_table

__all__ = ["SweepResult", "format_for", "require_pyarrow", "FORMATS"]

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
        """The table as a ``pyarrow.Table`` (needs pyarrow, the ``sweep`` extra)."""
        pa = require_pyarrow()
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
        body = []
        for r in self.rows:
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

    def write(self, path: str | os.PathLike[str], fmt: str | None = None) -> None:
        """Write the table to ``path`` in ``fmt`` (default: from the suffix)."""
        fmt = fmt or format_for(path)
        if fmt == "parquet":
            table = self.to_arrow()  # a clear error when pyarrow is missing
            pq = require("pyarrow.parquet", "Parquet output")
            pq.write_table(table, str(path))
            return
        text = {"csv": self.to_csv, "jsonl": self.to_jsonl, "latex": self.to_latex}[fmt]()
        Path(path).write_text(text)

    def text(self, fmt: str) -> str:
        """The table as text in ``fmt`` (csv, jsonl or latex)."""
        if fmt == "parquet":
            raise InvalidParameterError("Parquet is binary: write it to a file with -o OUT.parquet")
        return {"csv": self.to_csv, "jsonl": self.to_jsonl, "latex": self.to_latex}[fmt]()


def require_pyarrow() -> Any:
    """The pyarrow module, or a one-line error naming the extra that installs it."""
    return require("pyarrow", "Parquet output (or choose csv, jsonl or latex)")


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
