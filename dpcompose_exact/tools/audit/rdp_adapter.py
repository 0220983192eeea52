"""Adapter for dp_accounting's Renyi-DP accountant (``rdp``).

The Renyi divergences ``D_a(P0 || P1) = log E_P0[e^{(a-1)L}] / (a-1)`` of the exact
dominating pair (docs/theory.md, section 3) at the library's default orders are computed
at 40 digits and rounded up (:meth:`dpcompose_exact.tools.audit.boundary.FloatPair.renyi`;
infinite with a leak), summed over the composition and converted with the library's
``compute_delta`` / ``compute_epsilon``.
"""

from __future__ import annotations

from .accountants import _import_dp_accounting
from .boundary import FloatPair, Queries

__all__ = ["run_rdp"]


def run_rdp(
    pairs: list[tuple[FloatPair, int]], q: Queries
) -> tuple[list[float], list[float], list[str]]:
    """``(delta at each q.eps, eps at each q.deltas, notes)`` from the composed RDP curve."""
    _, rdp_mod = _import_dp_accounting()
    orders = list(rdp_mod.DEFAULT_RDP_ORDERS)
    rdp = [0.0] * len(orders)
    for pair, count in pairs:
        for i, a in enumerate(orders):
            rdp[i] += count * pair.renyi(a)
    d = [float(rdp_mod.compute_delta(orders, rdp, e)[0]) for e in q.eps]
    e = [float(rdp_mod.compute_epsilon(orders, rdp, x)[0]) for x in q.deltas]
    return d, e, []
