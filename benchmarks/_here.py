"""Make a benchmark measure the checkout it sits in, not an installed copy.

``python benchmarks/bench_x.py`` puts ``benchmarks/`` first on ``sys.path``, so an
installed (older) ``dpcompose_exact`` would be imported and timed instead of this
checkout's.  Every benchmark imports this module first: it puts the checkout's root
first on ``sys.path`` and on ``PYTHONPATH`` (for the child processes some benchmarks
start to measure memory).
"""

import os
import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent.parent)
if sys.path[:1] != [ROOT]:
    sys.path.insert(0, ROOT)
_rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != ROOT]
os.environ["PYTHONPATH"] = os.pathsep.join([ROOT, *_rest])
