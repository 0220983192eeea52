"""Progress of a long command: one tqdm line on stderr, on a terminal only.

Every ``dpcompose`` command runs inside one :class:`Activity`.  While nothing reports steps,
the line is an elapsed-time spinner (``dpcompose epsilon: working, 00:12 elapsed``); once a
step count (``counts(done, total)``: the audit suite's cases, a sweep's cells) or a fraction
(``fraction(x)``: the certified route) arrives, it becomes a tqdm bar with an ETA.  The line
shows only after :data:`DELAY` seconds (a quick command prints nothing), is cleared when the
command ends, and never appears when stderr is not a terminal: pipes, files and JSON on
stdout get exactly the bytes they would get without it.
"""

from __future__ import annotations

import io
import os
import sys
import threading
import time
from types import TracebackType
from typing import Any

__all__ = ["DELAY", "Activity", "activity_of"]

DELAY = 1.0
"""Seconds a command runs before its progress line appears."""

_TICK = 0.5  # seconds between refreshes of the elapsed time
_SPIN = "{desc}: working, {elapsed} elapsed"
_BAR = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}]"
_FRACTION = "{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]"


def _columns(stream: Any) -> int:
    """The terminal's width (80 when it reports none, as a fresh pty does)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        columns = 0
    return min(columns, 100) or 80


class Activity:
    """The progress line of one command (a context manager; silent off a terminal).

    Args:
        desc: what the line names (``dpcompose epsilon``).
        stream: where it goes (default ``sys.stderr``); nothing is shown unless
            ``stream.isatty()``.
        quiet: never show anything (a command run without ``main``).
    """

    def __init__(self, desc: str, stream: Any = None, quiet: bool = False) -> None:
        self.desc = desc
        self.stream = stream if stream is not None else sys.stderr
        self.active = not quiet and bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar: Any = None
        self._start = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Activity:
        if self.active:
            from tqdm import tqdm

            self._bar = tqdm(
                total=None,
                desc=self.desc,
                file=self.stream,
                leave=False,
                bar_format=_SPIN,
                ncols=_columns(self.stream),
                nrows=24,  # one line; a fresh pty reports 0 rows, and tqdm then drew nothing
                delay=1e9,  # tqdm draws nothing by itself: _show decides when
            )
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._bar is not None:
            if self._shown:
                self._bar.clear()
            self._bar.disable = True  # nothing more on the terminal (close would draw)
            self._bar.close()

    _shown = False

    def _show(self) -> None:
        """Redraw the line, once :data:`DELAY` seconds have passed."""
        if self._bar is None or time.monotonic() - self._start < DELAY:
            return
        self._bar.refresh()
        self._shown = True

    def _tick(self) -> None:
        while not self._stop.wait(_TICK):
            self._show()

    def counts(self, done: int, total: int) -> None:
        """Report ``done`` of ``total`` steps (the audit suite's and a sweep's callback)."""
        if self._bar is None:
            return
        self._bar.bar_format = _BAR
        self._bar.total = total
        self._bar.n = done
        self._show()

    def fraction(self, frac: float) -> None:
        """Report the fraction done, in ``[0, 1]`` (the certified route's callback)."""
        if self._bar is None:
            return
        self._bar.bar_format = _FRACTION
        self._bar.total = 1000
        self._bar.n = min(max(int(frac * 1000), 0), 1000)
        self._show()

    def counter(self) -> Any:
        """``counts`` on a terminal, else None (callers skip the progress work)."""
        return self.counts if self.active else None

    def fractions(self) -> Any:
        """``fraction`` on a terminal, else None."""
        return self.fraction if self.active else None


def activity_of(args: Any) -> Activity:
    """The progress line ``main`` opened for the parsed ``args`` (a silent one if none)."""
    activity = getattr(args, "activity", None)
    return activity if activity is not None else Activity("", quiet=True)
