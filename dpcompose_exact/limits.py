"""Resource limits shared by the layers: the default memory budget and the interpreter's share.

* :data:`DEFAULT_MEMORY_LIMIT` -- the bytes an exact computation may use unless the
  caller says otherwise (``compose(..., max_memory=)``, ``--max-memory``);
* :data:`BASE_RSS` -- the resident memory of the interpreter, FLINT and the package as
  the command line starts it, which every memory estimate adds
  (:mod:`dpcompose_exact.engines.memory`).

They live below the mechanisms, which refuse a pair too large to build before
allocating it (``discrete_laplace``), and the engines, which refuse a composition.
"""

from __future__ import annotations

__all__ = ["DEFAULT_MEMORY_LIMIT", "BASE_RSS"]

#: bytes; the exact result must fit well within RAM
DEFAULT_MEMORY_LIMIT = 6 * 2**30

# Interpreter, FLINT and the package as the command line starts it: it imports sympy
# (and mpmath) at start, so every run pays it (measured: 72-77 MiB; without sympy, 40-45
# MiB, the figure used before, under which a decimals-only run at k = 50 measured 76 MiB
# against an estimate of 55 MiB).
BASE_RSS = 78 * 2**20
