"""Calibrated memory estimate of the exact route (peak resident set size of a run).

The exact route (:func:`~dpcompose_exact.compose.compose_plds`) holds, at its peak, the
k-fold polynomial ``N(w, z)`` (FLINT), its terms converted to Python objects, the region's
deltas (one polynomial of about the same degree and coefficient size per loss value) and
their decimal closed forms.  All scale with two sizes of the problem:

* ``terms``: loss values times (z-degree + 1), the number of coefficients of ``N``
  (an upper count: the sumset of the one-step supports is used per generator);
* ``coef_bytes``: ``terms`` times the bytes of the largest coefficient (from the one-step
  l1 norms, ``k log2 ||N_1||_1`` bits).

The model ``base + a * coef_bytes + b * terms`` was fitted to the max RSS of
``dpcompose compose ... --format json`` runs in fresh processes (``benchmarks/
bench_memory.py`` prints estimate against measurement: the paper case k = 50..700, a
five-kind list, two and three generators); every case lies within the promised factor
1.5 of the estimate.  The estimate is used to refuse runs over ``--max-memory`` up front.
"""

from __future__ import annotations

from collections.abc import Sequence

from .compose import _common_denominator
from .pld import PLD

__all__ = ["problem_sizes", "estimate_rss", "BASE_RSS"]

BASE_RSS = 110 * 2**20  # interpreter, FLINT, sympy and the package (measured)
_PER_COEF_BYTE = 4.0  # bytes of RSS per byte of coefficient (fitted)
_PER_TERM = 150.0  # bytes of RSS per coefficient slot (Python objects; fitted)


def problem_sizes(kinds: Sequence[tuple[PLD, int]]) -> tuple[int, int]:
    """``(terms, coef_bytes)`` of the exact k-fold polynomial (see the module docstring).

    ``kinds`` must share one domain (:func:`~dpcompose_exact.compose.common_domain`).
    """
    kinds = [(p, c) for p, c in kinds if c]
    if not kinds:
        return 0, 0
    dim = kinds[0][0].domain.dim
    w_count = 1
    for i in range(dim):
        span = 1
        for pld, count in kinds:
            vals = {loss[i] for loss, _ in pld.masses}
            span += count * max(len(vals) - 1, 0)
        w_count *= span
    zdeg, bits = 0, 0
    for pld, count in kinds:
        den, nums = _common_denominator(pld)
        zdeg += count * max([p.degree() for _, p in nums] + [den.degree(), 0])
        norm1 = sum(abs(int(c)) for _, p in nums for c in p.coeffs())
        bits += count * max(norm1.bit_length(), 1)
    terms = w_count * (zdeg + 1)
    return terms, terms * (bits // 8 + 8)


def estimate_rss(kinds: Sequence[tuple[PLD, int]]) -> int:
    """Estimated peak RSS in bytes of an exact-route run (calibrated, see module docstring)."""
    terms, coef_bytes = problem_sizes(kinds)
    return int(BASE_RSS + _PER_COEF_BYTE * coef_bytes + _PER_TERM * terms)
