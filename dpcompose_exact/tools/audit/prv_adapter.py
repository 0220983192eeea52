"""Adapter for prv_accountant (``prv_lower``, ``prv_estimate``, ``prv_upper``).

The exact dominating pair (docs/theory.md, section 3) becomes a discrete
``PrivacyRandomVariable`` with the pair's atoms and the leak as ``pm_inf``, built by
:func:`dpcompose_exact.presentation.export.prv_from_atoms` (the same class as
:func:`dpcompose_exact.presentation.export.to_prv`), and is composed by ``PRVAccountant``,
which reports
a lower bound, an estimate and an upper bound for each query.
"""

from __future__ import annotations

import math

from ...presentation.export import prv_from_atoms
from .accountants import SERIES, _import_prv_accountant
from .boundary import FloatPair, Queries

__all__ = ["run_prv"]


def run_prv(
    pairs: list[tuple[FloatPair, int]], q: Queries, eps_error: float, delta_error: float
) -> dict[str, tuple[list[float], list[float], list[str]]]:
    """Per series, ``(delta at each q.eps, eps at each q.deltas, notes)`` of PRVAccountant.

    ``eps_error`` and ``delta_error`` are the accountant's error targets; a query the
    library fails on gives ``nan`` and a note.
    """
    prv = _import_prv_accountant()
    used = [(p, c) for p, c in pairs if c > 0]
    acc = prv.PRVAccountant(
        prvs=[prv_from_atoms(p.loss_decimals, p.p0_decimals, p.leak) for p, _ in used],
        max_self_compositions=[c for _, c in used],
        eps_error=eps_error,
        delta_error=delta_error,
    )
    counts = [c for _, c in used]
    # compute_delta / compute_epsilon recompose the PRVs at every call; the composition
    # does not depend on the query, so memoize it (the library's code path is unchanged).
    composed = acc.compute_composition(counts)
    acc.compute_composition = lambda n: composed if list(n) == counts else None
    out: dict[str, tuple[list[float], list[float], list[str]]] = {
        s: ([], [], []) for s in SERIES["prv"]
    }
    queries = (
        (0, q.eps, acc.compute_delta, "delta at eps"),
        (1, q.deltas, acc.compute_epsilon, "eps at delta"),
    )
    for column, values, compute, label in queries:
        for v in values:
            try:
                triple = compute(v, counts)
            except (ValueError, RuntimeError, FloatingPointError) as exc:
                triple = (math.nan,) * 3
                for s in SERIES["prv"]:
                    out[s][2].append(f"{label}={v}: {exc}")
            for s, r in zip(SERIES["prv"], triple):
                out[s][column].append(float(r))
    return out
