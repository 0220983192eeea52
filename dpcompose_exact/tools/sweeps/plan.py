"""The plan of a sweep: its cells in canonical exact form, their keys, one task per composition.

A *cell* is one grid point and one query.  Planning substitutes every grid point into the
templates, brings the mechanism list and the query point to canonical exact form and keys
the cell by a hash of that form (with the digits, the memory limit and the package
version), so that a rerun finds it in the store.  Cells that ask the same composition share
one :class:`~dpcompose_exact.tools.sweeps.task.Task`; a point with invalid parameters gets its
one-line error here, without a task.  :meth:`Plan.assemble` turns the rows found in the
store and the rows computed into the table, in grid order.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...api import Mechanism, mechanism_of
from ...engines.finiteroutes import Problem
from ...engines.genfunc import estimate_bytes
from ...errors import DPComposeError, InactiveConstraintWarning, InvalidParameterError
from ...numbers import linear_form, parse_exact, parse_rational
from ...regions.pld import canonical_pair
from ...regions.specs import kind_of_item, parse_count
from .grid import COLUMNS, Grid, mechanism_items, point_queries, substitute, substitute_item
from .task import Kinds, Query, Task, mechanism_key, one_line, row
from .writers import SweepResult

__all__ = ["Plan", "make_plan", "check_size", "estimated_seconds", "MAX_CELLS", "AUDIT_SECONDS"]

#: A grid with more cells than this is refused before anything is planned (``max_cells``).
MAX_CELLS = 1_000_000

Rows = dict[str, list[dict[str, Any]]]
#: A planned cell: its query (None when its parameters are invalid) or its error row.
Cell = tuple[Query | None, dict[str, Any] | None]


def check_size(grid: Grid, max_cells: int | None) -> int:
    """The number of cells of ``grid``; refuses at once (one line) above ``max_cells``.

    The count is a product of the list lengths: nothing is allocated before the check.

    Raises:
        InvalidParameterError: more than ``max_cells`` cells, with the sizes to change.
    """
    cells = len(grid) * grid.queries_per_point
    if max_cells is not None and cells > max_cells:
        sizes = " x ".join(f"{len(v)} {n}" for n, v in grid.variables)
        per = grid.queries_per_point
        raise InvalidParameterError(
            f"grid file {grid.source}: {cells:,} cells ({sizes} values x "
            f"{per} {'query' if per == 1 else 'queries'}) is more than the limit of {max_cells:,}; "
            "split the grid into several files (the store merges their runs) or raise "
            "--max-cells"
        )
    return cells


@dataclass
class Plan:
    """Every cell of a sweep, in grid order, and the distinct compositions to compute.

    Attributes:
        grid: the grid file.
        points: ``(grid point, [cell, ...])`` in grid order.
        todo: the queries of each distinct composition (canonical kinds), by cell key.
        digits, max_memory, exact_chars, version: what every task carries.
        estimates: ``(size, seconds)`` of each composition, computed once.
    """

    grid: Grid
    digits: int
    max_memory: int | None
    exact_chars: int
    version: str
    points: list[tuple[dict[str, Any], list[Cell]]] = field(default_factory=list)
    todo: dict[Kinds, dict[str, Query]] = field(default_factory=dict)
    estimates: dict[Kinds, tuple[int, float]] = field(default_factory=dict, repr=False)

    def _estimates(self, kinds: Kinds) -> tuple[int, float]:
        if kinds not in self.estimates:  # once per composition, however often planned
            self.estimates[kinds] = _estimates(kinds, bool(self.grid.audit))
        return self.estimates[kinds]

    def keys(self) -> list[str]:
        """The store keys of every valid cell."""
        return [q.key for qs in self.todo.values() for q in qs.values()]

    def tasks(self, found: Mapping[str, Any]) -> list[Task]:
        """One task per composition with cells not in ``found``, the largest first."""
        tasks = []
        for kinds, qs in self.todo.items():
            missing = tuple(q for q in qs.values() if q.key not in found)
            if missing:
                tasks.append(
                    Task(
                        kinds,
                        missing,
                        self.digits,
                        self.max_memory,
                        self.exact_chars,
                        self.grid.audit,
                        self.version,
                        *self._estimates(kinds),
                    )
                )
        tasks.sort(key=lambda t: -t.size)
        return tasks

    def assemble(self, found: Rows, computed: Rows, result: SweepResult) -> SweepResult:
        """Fill ``result`` with the table: the stored rows, the computed ones, the errors."""
        columns = list(self.grid.names) + list(COLUMNS)
        rows: list[dict[str, Any]] = []
        reused = n_computed = failed = cells_n = 0
        for point, cells in self.points:
            for q, direct in cells:
                cells_n += 1
                if q is None:  # invalid parameters, found while planning
                    got = [direct] if direct is not None else []
                elif q.key in found:
                    got = found[q.key]
                    reused += 1
                else:
                    got = computed.get(q.key, [])
                    n_computed += 1
                    result.computed_keys.add(q.key)
                if not got or all(r.get("error") and r.get("value") is None for r in got):
                    failed += 1  # (an audit cell with one accountant skipped has values)
                for r in got:
                    rows.append({**point, **{c: r.get(c) for c in columns if c not in point}})
        result.rows, result.columns, result.cells = rows, columns, cells_n
        result.reused, result.computed, result.failed = reused, n_computed, failed
        return result


def make_plan(
    g: Grid,
    *,
    digits: int,
    max_memory: int | None,
    exact_chars: int,
    version: str,
    max_cells: int | None = MAX_CELLS,
) -> Plan:
    """Plan every cell of ``g`` (after :func:`check_size`)."""
    check_size(g, max_cells)
    plan = Plan(g, digits, max_memory, exact_chars, version)
    common = {"digits": digits, "max_memory": max_memory, "version": version}
    for point in g.points():
        cells: list[Cell] = []
        try:
            kinds: Any = _canonical_kinds(point, g)
        except (DPComposeError, TypeError) as exc:
            kinds = exc
        if isinstance(kinds, Exception):
            err = one_line(kinds)
            for kind, at in point_queries(g, point):
                cells.append((None, row(Query("", kind, at), error=err)))
            plan.points.append((point, cells))
            continue
        mech_json = [[list(map(list, p)), n] for p, n in kinds]
        for kind, at in point_queries(g, point):
            try:
                if kind == "audit":
                    pts = (
                        tuple(substitute(a, point) for a in g.delta_at_epsilon),
                        tuple(substitute(a, point) for a in g.epsilon_at_delta),
                    )
                    canon: Any = [
                        [_canonical_point("delta_at_epsilon", a) for a in pts[0]],
                        [_canonical_point("epsilon_at_delta", a) for a in pts[1]],
                        list(g.audit),
                    ]
                    q = Query("", kind, at, pts)
                else:
                    canon = _canonical_point(kind, at)
                    q = Query("", kind, at)
            except (DPComposeError, TypeError) as exc:
                cells.append((None, row(Query("", kind, at), error=one_line(exc))))
                continue
            payload = {"mechanisms": mech_json, "query": kind, "at": canon, **common}
            if kind != "audit":
                payload["exact_chars"] = exact_chars
            q = Query(_cell_key(payload), q.kind, q.at, q.points)
            cells.append((q, None))
            plan.todo.setdefault(kinds, {})[q.key] = q
        plan.points.append((point, cells))
    return plan


def _canonical_kinds(point: Mapping[str, Any], grid: Grid) -> Kinds:
    """The substituted mechanism list in canonical exact form (merged, sorted).

    A constraints mechanism is keyed by its canonical constraints (as the store has always
    keyed it); any other by the JSON of its canonical description (:func:`mechanism_key`).
    """
    merged: dict[tuple[tuple[str, str], ...], int] = {}
    for i, (template, count_t) in enumerate(mechanism_items(grid)):
        item = substitute_item(template, point)
        count = parse_count(substitute(count_t, point, wrap=False), "count")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InactiveConstraintWarning)
            if set(item) == {"constraints"}:
                key = Mechanism([tuple(c) for c in item["constraints"]]).pairs
            else:
                kind = kind_of_item({**item, "count": count}, f"mechanism[{i}]")
                key = mechanism_key(mechanism_of(kind))
        merged[key] = merged.get(key, 0) + count
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


#: Estimated seconds added to a task that also runs the numeric accountants (an audit).
AUDIT_SECONDS = 2.0


def _estimates(kinds: Kinds, audit: bool) -> tuple[int, float]:
    """Work estimates of one composition: ``(size, seconds)``.

    ``size`` orders the tasks (the exact route's memory estimate, k x constraints);
    ``seconds`` is the exact route's time model (:attr:`~dpcompose_exact.engines.finiteroutes.
    Problem.exact_seconds`), plus :data:`AUDIT_SECONDS` with an audit, and infinite for a
    described mechanism (noise, subsampling), whose cost is not modelled.
    """
    try:
        plds = [(canonical_pair(Mechanism(p).region), n) for p, n in kinds]
    except (DPComposeError, TypeError):  # a described mechanism: no constraints to estimate
        return sum(n * len(p) for p, n in kinds), math.inf
    seconds = Problem.of(plds).exact_seconds + (AUDIT_SECONDS if audit else 0.0)
    return estimate_bytes(plds), seconds


def estimated_seconds(tasks: Iterable[Task]) -> float:
    """The estimated compute time of ``tasks`` in one process (inf when not modelled)."""
    return sum((t.seconds for t in tasks), 0.0)
