"""One task: a composition and the queries asked of it, computed on a worker.

:func:`run_task` composes once and answers every query of its :class:`Task`; it never
raises: a failure (invalid parameters, over the memory limit, a bug) becomes the one-line
``error`` of the cell's row.  Tasks are pickled to Dask workers, so everything here is
plain data.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from dataclasses import dataclass
from typing import Any

from ...api import Mechanism, compose, mechanism_of
from ...errors import CertificationError, DPComposeError, InactiveConstraintWarning
from ...numbers.value import Value
from ...regions.specs import MechanismKind, kind_of_item
from .grid import COLUMNS

__all__ = [
    "Kinds",
    "Query",
    "Task",
    "run_task",
    "row",
    "one_line",
    "died_rows",
    "EXACT_CHARS",
    "package_version",
]

#: Closed forms longer than this many characters are left out of the table by default.
EXACT_CHARS = 200


Kinds = tuple[tuple[tuple[tuple[str, str], ...], int], ...]
#: the tag of a key that is a mechanism's JSON description, not constraints
_DESCRIBED = "mechanism"


def mechanism_key(mechanism: Any) -> tuple[tuple[str, str], ...]:
    """The store key of a mechanism that is not plain constraints: its canonical JSON."""
    return ((_DESCRIBED, json.dumps(mechanism.to_dict(), sort_keys=True)),)


def mechanism_from_key(key: tuple[tuple[str, str], ...]) -> Any:
    """The mechanism of a kind's key: constraints, or a described mechanism."""
    if key and key[0][0] == _DESCRIBED:
        return mechanism_of(kind_of_item({**json.loads(key[0][1]), "count": 1}, "sweep"))
    return Mechanism(key)


def kind_from_key(key: tuple[tuple[str, str], ...], count: int) -> MechanismKind:
    """The :class:`MechanismKind` of a kind's key (for the audit)."""
    if key and key[0][0] == _DESCRIBED:
        return kind_of_item({**json.loads(key[0][1]), "count": count}, "sweep")
    return MechanismKind(key, count)


@dataclass(frozen=True)
class Query:
    """One cell of a task: its store key, its query kind and point."""

    key: str  # the store key of the cell
    kind: str  # one of QUERIES
    at: str  # the query point as written (after substitution); "" for the audit
    points: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # the audit's grids


@dataclass(frozen=True)
class Task:
    """One composition and the queries asked of it (the unit of work on a worker)."""

    mechanisms: Kinds
    queries: tuple[Query, ...]
    digits: int
    max_memory: int | None
    exact_chars: int
    accountants: tuple[str, ...]
    version: str
    size: int = 0


def package_version() -> str:
    """The installed version of dpcompose_exact (part of every cell key)."""
    from ... import __version__

    return __version__


def one_line(exc: BaseException) -> str:
    """An exception as one line (its class named unless it is a DPComposeError)."""
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


def row(q: Query, **fields: Any) -> dict[str, Any]:
    """A table row of cell ``q`` (without the grid columns): ``fields``, else None."""
    out: dict[str, Any] = dict.fromkeys(COLUMNS)
    out.update(query=q.kind, at=q.at, series="dpcompose")
    out.update(fields)
    return out


def run_task(task: Task) -> dict[str, list[dict[str, Any]]]:
    """Compute one task: compose once, answer its queries; never raises.

    Returns:
        ``{cell key: [row, ...]}``; each row lacks the grid columns.  A failure (invalid
        parameters, over the memory limit, a bug) becomes the row's one-line ``error``.
    """
    out: dict[str, list[dict[str, Any]]] = {}
    start = time.perf_counter()
    if task.version != package_version():
        msg = f"this worker runs dpcompose_exact {package_version()}, the sweep {task.version}"
        return {q.key: [row(q, error=msg, _transient=True)] for q in task.queries}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InactiveConstraintWarning)
            comp = compose(
                [(mechanism_from_key(p), n) for p, n in task.mechanisms],
                digits=task.digits,
                max_memory=task.max_memory,
            )
    except (Exception, MemoryError) as exc:  # one row per cell says why
        msg = one_line(exc)
        secs = time.perf_counter() - start
        return {q.key: [row(q, error=msg, seconds=secs)] for q in task.queries}
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
            out[q.key] = [row(q, method=comp.method, seconds=secs, **fields)]
        except (Exception, MemoryError) as exc:
            secs = compose_secs + time.perf_counter() - t0
            out[q.key] = [row(q, method=comp.method, seconds=secs, error=one_line(exc))]
    return out


def _audit_rows(task: Task, q: Query, compose_secs: float) -> list[dict[str, Any]]:
    from ..audit import LIBRARY, SERIES, audit

    t0 = time.perf_counter()
    kinds = [kind_from_key(p, n) for p, n in task.mechanisms]
    try:
        report = audit(
            kinds,
            eps_grid=q.points[0] or None,
            deltas=q.points[1] or None,
            accountants=task.accountants,
        )
    except (Exception, MemoryError) as exc:
        return [row(q, seconds=time.perf_counter() - t0, error=one_line(exc))]
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
        rows.append(row(q, series=name, error=f"skipped: {why}"))
    return rows


def died_rows(task: Task, why: str) -> dict[str, list[dict[str, Any]]]:
    """Rows for every cell of a task that could not be computed (its worker died)."""
    return {q.key: [row(q, error=why)] for q in task.queries}
