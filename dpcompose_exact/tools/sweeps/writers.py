"""The result table of a sweep and its writers: CSV, JSON lines, Parquet, LaTeX."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InvalidParameterError
from ...optional import require
from ...presentation.formats import (
    arrow_table,
    format_names,
    output_format,
    tidy_format_for_suffix,
    tidy_suffix_list,
)

__all__ = ["SweepResult", "format_for", "require_pyarrow", "FORMATS"]

FORMATS = format_names("tidy")
"""Output formats (chosen by the output's suffix or explicitly): the registry's tidy-table
formats (:mod:`dpcompose_exact.presentation.formats`)."""


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

    def _tidy(self, fmt: str, caption: str = "") -> str | bytes:
        writer = output_format(fmt, "tidy").writer("tidy")
        return writer(self.rows, self.columns, caption)

    def to_csv(self) -> str:
        """The table as CSV (empty fields for missing values)."""
        return self._tidy("csv")  # type: ignore[return-value]

    def to_jsonl(self) -> str:
        """The table as JSON lines (one object per row; missing values are null)."""
        return self._tidy("jsonl")  # type: ignore[return-value]

    def to_arrow(self) -> Any:
        """The table as a ``pyarrow.Table`` (needs pyarrow, the ``sweep`` extra)."""
        return arrow_table(self.rows, self.columns)

    def to_latex(self, caption: str = "") -> str:
        """A booktabs table: grid values, query, point, series, value, method."""
        return self._tidy("latex", caption)  # type: ignore[return-value]

    def write(self, path: str | os.PathLike[str], fmt: str | None = None) -> None:
        """Write the table to ``path`` in ``fmt`` (default: from the suffix)."""
        out = self._tidy(fmt or format_for(path))
        if isinstance(out, bytes):
            Path(path).write_bytes(out)
        else:
            Path(path).write_text(out)

    def text(self, fmt: str) -> str:
        """The table as text in ``fmt`` (csv, jsonl or latex)."""
        if output_format(fmt, "tidy").binary:
            raise InvalidParameterError("Parquet is binary: write it to a file with -o OUT.parquet")
        return self._tidy(fmt)  # type: ignore[return-value]


def require_pyarrow() -> Any:
    """The pyarrow module, or a one-line error naming the extra that installs it."""
    return require("pyarrow", "Parquet output (or choose csv, jsonl or latex)")


def format_for(path: str | os.PathLike[str] | None, fmt: str | None = None) -> str:
    """The output format: ``fmt`` when given, else from the suffix (``csv`` for stdout).

    Formats and suffixes come from the one registry (:mod:`dpcompose_exact.presentation.formats`).
    """
    if fmt is not None:
        return output_format(fmt, "tidy").name
    if path in (None, "-"):
        return "csv"
    suffix = Path(path).suffix.lower()
    found = tidy_format_for_suffix(suffix)
    if found is None:
        raise InvalidParameterError(
            f"output {str(path)!r}: cannot tell the format from the suffix {suffix or '(none)'}; "
            f"use {tidy_suffix_list()}, or --format"
        )
    return found.name
