"""Running the tasks of a sweep: in this process, or on a Dask cluster (local or remote).

:func:`run_tasks` hands each finished task to the store at once (so a killed sweep keeps
it) and to the progress callback.  On Dask, one task runs per worker thread, the largest
first; a task whose worker dies (killed, out of memory) is retried once, then its cells
get a one-line error.  A scheduler address is checked (its form, then a connection with a
short timeout) before any work.
"""

from __future__ import annotations

import socket
import time
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from ...errors import InvalidParameterError
from ...optional import require
from .progress import Progress
from .store import Store
from .task import Task, died_rows, one_line

__all__ = ["run_tasks", "check_scheduler", "require_dask", "WORKER_OVERHEAD"]

#: Memory a worker process needs besides the exact result (interpreter, sympy, FLINT).
WORKER_OVERHEAD = 2**30

Rows = dict[str, list[dict[str, Any]]]
Runner = Callable[[Task], Rows]


def run_tasks(
    tasks: list[Task],
    store: Store,
    *,
    runner: Runner,
    serial: bool,
    workers: int | None,
    scheduler: Any,
    max_memory: int | None,
    version: str,
    progress: Progress | None,
) -> tuple[Rows, int, float]:
    """Compute ``tasks``; store each as it finishes.

    Returns:
        ``(rows by cell key, tasks retried, seconds to start or reach the cluster)``.
    """
    results: Rows = {}
    total = sum(len(t.queries) for t in tasks)
    done = 0

    def finish(found_rows: Rows, keep: bool) -> None:
        nonlocal done
        results.update(found_rows)
        if keep:  # not the cells a worker could not compute (another version)
            good = {
                k: rows
                for k, rows in found_rows.items()
                if not any(r.get("_transient") for r in rows)
            }
            store.put(good, version)
        done += len(found_rows)
        if progress is not None:
            progress(done, total)

    retried, startup = 0, 0.0
    if tasks:
        if serial:
            for t in tasks:
                finish(runner(t), True)
        else:
            retried, startup = _run_dask(tasks, runner, finish, workers, scheduler, max_memory)
    return results, retried, startup


def require_dask(hint: str = "pass serial=True") -> tuple[Any, Any]:
    """The ``dask`` and ``distributed`` modules, or one line naming the extra and ``hint``.

    Args:
        hint: how to do without Dask, in the caller's words: ``"pass serial=True"`` (Python)
            or ``"run with --serial"`` (the command line).

    Raises:
        MissingDependencyError: Dask is not installed.
    """
    feature = f"a parallel sweep (or {hint})"
    return require("dask", feature), require("distributed", feature)


def check_scheduler(address: str, timeout: float = 2.0) -> None:
    """Check a Dask scheduler address at once: its form, then a TCP connection.

    ``tcp://HOST:PORT`` (the scheme may be left out), ``tls://``, ``ws://`` and ``wss://``
    are checked by connecting with ``timeout`` seconds; other schemes (``inproc://``,
    ``ucx://``) only by their form.

    Raises:
        InvalidParameterError: one line naming the address and what is wrong.
    """
    hint = "start one with `dask scheduler` and workers with `dask worker ADDRESS`"
    if not isinstance(address, str) or not address.strip():
        raise InvalidParameterError(
            f"--scheduler {address!r} is not an address; expected tcp://HOST:PORT"
        )
    text = address.strip()
    parts = urlsplit(text if "://" in text else "tcp://" + text)
    if parts.scheme not in ("tcp", "tls", "ws", "wss"):
        if parts.scheme in ("inproc", "ucx"):
            return
        raise InvalidParameterError(
            f"--scheduler {address!r}: unknown scheme {parts.scheme!r}; expected tcp://HOST:PORT"
        )
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None or not 0 < port < 65536:
        raise InvalidParameterError(
            f"--scheduler {address!r} is not HOST:PORT with a port in 1..65535; "
            "expected tcp://HOST:PORT (a Dask scheduler listens on 8786)"
        )
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            pass
    except OSError as exc:
        why = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or one_line(exc))
        raise InvalidParameterError(
            f"cannot reach the Dask scheduler {address!r} ({why}; waited at most {timeout:g} s); "
            + hint
        ) from None


def _run_dask(
    tasks: list[Task],
    run: Callable[[Task], dict[str, list[dict[str, Any]]]],
    finish: Callable[[dict[str, list[dict[str, Any]]], bool], None],
    workers: int | None,
    scheduler: Any,
    max_memory: int | None,
) -> tuple[int, float]:
    """Submit every task, largest first; retry a task once when its worker dies."""
    dask, distributed = require_dask()
    Client, LocalCluster = distributed.Client, distributed.LocalCluster  # noqa: N806
    as_completed = distributed.as_completed
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
        cpus = require("dask.system", "a parallel sweep").CPU_COUNT
        limit = 0 if max_memory is None else max_memory + WORKER_OVERHEAD
        cluster = LocalCluster(
            n_workers=workers or cpus,
            threads_per_worker=1,
            processes=True,
            memory_limit=limit,
            dashboard_address=None,
            silence_logs=logging.CRITICAL,
        )
        client = Client(cluster)
    elif isinstance(scheduler, str):
        check_scheduler(scheduler)
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise InvalidParameterError(
                f"cannot reach the Dask scheduler {scheduler!r} ({one_line(exc)}); start "
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
                    f"--max-memory {limit}): {one_line(exc)}"
                )
                finish(died_rows(task, why), False)
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
