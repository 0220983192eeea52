"""Progress of a sweep: a bar with the cells done and an ETA when stderr is a terminal."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Progress", "terminal_progress"]


Progress = Callable[[int, int], None]


def terminal_progress(stream: Any = None) -> Progress | None:
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
