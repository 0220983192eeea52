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

A *cell* is one grid point and one query.  A grid of more than :data:`MAX_CELLS` cells is
refused at once (``max_cells``).  Cells are computed locally on a Dask
``LocalCluster`` (process workers, one per core), on an existing Dask cluster
(``scheduler="tcp://HOST:PORT"``) or in this process (``serial=True``, and a sweep
estimated at less than :data:`SERIAL_SECONDS` when neither workers nor a scheduler are
given); the largest compositions start first.  Every finished cell is written at once to
a SQLite store next to the output, keyed by a hash of the cell in canonical exact form
(mechanism list, query, digits, memory limit, package version), so that a rerun computes
only what is missing.
A cell whose worker dies (killed, out of memory) is retried once, then reported as failed;
a cell with invalid parameters gets its one-line error.  Either way the sweep goes on.

>>> grid = {"mechanism": [{"constraints": [["{eps}", "0"]], "count": "{k}"}],
...         "grid": {"eps": ["1/2"], "k": [1, 2]},
...         "query": {"delta_at_epsilon": ["1/2"]}}
>>> res = sweep(grid, serial=True, digits=8)
>>> [(r["k"], r["value"], r["exact"]) for r in res.rows]
[(1, '0', '0'), (2, '0.15245191', '(-exp(1/2) + exp(1))/(1 + exp(1/2))**2')]

The package is split by job: :mod:`~dpcompose_exact.tools.sweeps.grid` (the grid file),
:mod:`~dpcompose_exact.tools.sweeps.plan` (cells in canonical form, their keys, the tasks),
:mod:`~dpcompose_exact.tools.sweeps.task` (one composition and its queries, on a worker),
:mod:`~dpcompose_exact.tools.sweeps.store` (SQLite), :mod:`~dpcompose_exact.tools.sweeps.executor`
(serial or Dask), :mod:`~dpcompose_exact.tools.sweeps.progress` and
:mod:`~dpcompose_exact.tools.sweeps.writers` (the table as CSV, JSON lines, Parquet, LaTeX).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from ...engines.genfunc import DEFAULT_MEMORY_LIMIT
from ...errors import InvalidParameterError
from .executor import WORKER_OVERHEAD, check_scheduler, require_dask, run_tasks
from .grid import QUERIES, Grid, load_grid
from .plan import MAX_CELLS, estimated_seconds, make_plan
from .progress import Progress, terminal_progress
from .store import Store, store_path_for
from .task import EXACT_CHARS, Task, package_version, run_task
from .writers import FORMATS, SweepResult, format_for, require_pyarrow

#: Local worker processes allowed (``workers``): 4 per core, at least 64; each is a process.
MAX_WORKERS = max(64, 4 * (os.cpu_count() or 1))

#: A sweep whose compositions are estimated at less than this many seconds in all runs in
#: this process unless ``workers`` or ``scheduler`` is given: starting a local cluster and
#: importing the package in each worker costs about 8 s on a 2-core machine, more than
#: such a sweep can gain (examples/sweep.toml: 4.8 s in one process, 12.9 s on Dask).
SERIAL_SECONDS = 15.0

__all__ = [
    "Grid",
    "SweepResult",
    "load_grid",
    "sweep",
    "run_task",
    "FORMATS",
    "QUERIES",
    "EXACT_CHARS",
    "MAX_CELLS",
    "MAX_WORKERS",
    "SERIAL_SECONDS",
    "require_dask",
    "WORKER_OVERHEAD",
    "format_for",
    "store_path_for",
    "terminal_progress",
]


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
    max_cells: int | None = MAX_CELLS,
) -> SweepResult:
    """Run a sweep: every grid point and query, exact or certified, into one tidy table.

    Args:
        grid: a grid file (TOML or JSON), a dict of the same structure, or a :class:`Grid`.
        output: write the table there (format from the suffix or ``fmt``); None: don't.
        fmt: ``csv``, ``jsonl``, ``parquet`` or ``latex``.
        workers: Dask worker processes of the local cluster (default: one per core).
        scheduler: ``"tcp://HOST:PORT"`` of an existing Dask scheduler, or a
            ``distributed.Client``; the local cluster is not started then.  An address is
            checked at once (a connection with a 2 s timeout).
        serial: compute in this process, without Dask (debugging, baselines).  With
            neither ``workers`` nor ``scheduler``, a sweep estimated at less than
            :data:`SERIAL_SECONDS` of computing runs in this process anyway.
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
        max_cells: refuse a grid with more cells (grid points times queries) at once,
            before planning (None: no limit).

    Returns:
        A :class:`SweepResult`.

    Raises:
        InvalidParameterError: a malformed grid file, too many cells, an unreachable
            scheduler or bad options (one line).
        MissingDependencyError: Dask is needed and not installed (checked before the
            store is created).
    """
    t_start = time.perf_counter()
    g = grid if isinstance(grid, Grid) else load_grid(grid)
    if not isinstance(digits, int) or isinstance(digits, bool) or digits < 1:
        raise InvalidParameterError(f"digits = {digits!r} must be a positive integer")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise InvalidParameterError(f"workers = {workers!r} must be a positive integer")
    if workers is not None and workers > MAX_WORKERS:
        raise InvalidParameterError(
            f"workers = {workers} local processes is more than {MAX_WORKERS} (4 per core, at "
            "least 64); use fewer, or a cluster (--scheduler) for more"
        )
    if max_cells is not None and (not isinstance(max_cells, int) or max_cells < 1):
        raise InvalidParameterError(f"max_cells = {max_cells!r} must be a positive integer")
    out_fmt = format_for(output, fmt) if output is not None else None
    if out_fmt == "parquet":
        require_pyarrow()  # before any work, not after
    if isinstance(scheduler, str) and not serial:
        check_scheduler(scheduler)
    grid_file = None if isinstance(grid, (Mapping, Grid)) else str(grid)
    store_path = str(store) if store is not None else store_path_for(output, grid_file)
    version = package_version()

    plan = make_plan(
        g,
        digits=digits,
        max_memory=max_memory,
        exact_chars=exact_chars,
        version=version,
        max_cells=max_cells,
    )
    auto = not serial and workers is None and scheduler is None
    if auto and estimated_seconds(plan.tasks({})) < SERIAL_SECONDS:
        serial = True  # a small sweep: a cluster would cost more than it gains
    if not serial:
        require_dask()  # before the store is created
    db = Store(store_path)
    try:
        found = db.get(plan.keys()) if resume else {}
        tasks = plan.tasks(found)
        if auto and estimated_seconds(tasks) < SERIAL_SECONDS:
            serial = True  # what is left after resuming is small
        computed, retried, startup = run_tasks(
            tasks,
            db,
            runner=runner or run_task,
            serial=serial,
            workers=workers,
            scheduler=scheduler,
            max_memory=max_memory,
            version=version,
            progress=progress,
        )
    finally:
        db.close()
    result = SweepResult(
        rows=[], columns=[], cells=0, store=store_path, retried=retried, startup_seconds=startup
    )
    plan.assemble(found, computed, result)
    result.seconds = time.perf_counter() - t_start
    if output is not None:
        result.write(output, out_fmt)
    return result
