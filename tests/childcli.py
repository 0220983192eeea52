"""Run the command line in a child process (test helper).

A child process gets its own interpreter state (CPython's integer-digit limit is per process),
so a test sees exactly what a user's shell would: stdout, stderr and the exit status.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cli(*argv: str) -> subprocess.CompletedProcess:
    """``python -m dpcompose_exact *argv`` from the checkout's root, text output, 120-s cap."""
    return subprocess.run(
        [sys.executable, "-m", "dpcompose_exact", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
