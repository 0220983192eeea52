"""The benchmarks run (their --quick modes, a few seconds each) and print their tables."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_compose_quick():
    """Regression: bench_compose.py crashed (`cannot unpack non-iterable Composition`)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_compose.py"), "--quick"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0].split()[:3] == ["k", "power", "(s)"]
    rows = [line.split() for line in lines[1:]]
    assert [r[0] for r in rows] == ["20", "40"]
    for r in rows:
        assert float(r[3]) > 0 and float(r[6]) > 0  # region seconds, JSON megabytes
