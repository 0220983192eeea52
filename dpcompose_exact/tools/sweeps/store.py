"""The store: finished cells in SQLite, written as they finish, read by a rerun.

Each cell is keyed by a hash of its canonical exact form (see
:mod:`dpcompose_exact.tools.sweeps.plan`); one transaction per finished task, so a killed sweep
keeps every cell it finished.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...errors import InvalidParameterError

__all__ = ["Store", "store_path_for"]


class Store:
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
        """The stored rows of those ``keys`` that are in the store."""
        out = {}
        keys = list(dict.fromkeys(keys))
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ",".join("?" * len(chunk))
            cur = self.db.execute(f"SELECT key, rows FROM cells WHERE key IN ({marks})", chunk)
            out.update((k, json.loads(r)) for k, r in cur)
        return out

    def put(self, results: Mapping[str, list[dict[str, Any]]], version: str) -> None:
        """Store the rows of finished cells (one transaction)."""
        now = time.time()
        self.db.executemany(
            "INSERT OR REPLACE INTO cells VALUES (?, ?, ?, ?)",
            [(k, json.dumps(rows), version, now) for k, rows in results.items()],
        )
        self.db.commit()

    def count(self) -> int:
        """The number of stored cells."""
        return int(self.db.execute("SELECT COUNT(*) FROM cells").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        self.db.close()


def store_path_for(output: str | os.PathLike[str] | None, grid_file: str | None) -> str | None:
    """Where the store lives: ``OUT.sweep.sqlite`` next to the output, else next to the grid."""
    base = output if output not in (None, "-") else grid_file
    if base is None:
        return None
    p = Path(base)
    return str(p.with_name(p.name.split(".")[0] + ".sweep.sqlite"))
