"""Progress of a sweep: a tqdm bar of the cells done, with an ETA, when stderr is a terminal.

The command line draws its own line (``cli/progress.py``); this is for a sweep run from
Python that wants the same bar.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["Progress", "terminal_progress"]


Progress = Callable[[int, int], None]


def terminal_progress(stream: Any = None) -> Progress | None:
    """A tqdm bar of the cells on ``stream`` (stderr) when it is a terminal, else None."""
    stream = stream or sys.stderr
    if not stream.isatty():
        return None
    from tqdm import tqdm

    # nrows/ncols given: a terminal that reports no size (a fresh pty) made tqdm draw nothing
    bar = tqdm(total=0, desc="sweep", unit="cell", file=stream, ncols=80, nrows=24)

    def show(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()

    return show
