"""The benchmark scripts run in their --quick mode (each helper adds its own function)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-W", "ignore", str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


@pytest.mark.slow
def test_bench_accountant_quick():
    pytest.importorskip("dp_accounting")
    out = _run("bench_accountant.py", "--quick")
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines()[1:] if line.strip()]
    assert len(rows) == 3
    for line in rows:
        assert "BELOW" not in line and "LOOSER" not in line, line
