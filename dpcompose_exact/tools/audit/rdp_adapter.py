"""Adapter for dp_accounting's Renyi-DP accountant (``rdp``).

The Renyi divergences ``D_a(P0 || P1) = log E_P0[e^{(a-1)L}] / (a-1)`` of the exact
dominating pair (docs/theory.md, section 3) at the library's default orders are computed
at 40 digits and rounded up (:meth:`dpcompose_exact.tools.audit.boundary.FloatPair.renyi`;
infinite with a leak), summed over the composition and converted with the library's
``compute_delta`` / ``compute_epsilon``.  On a ``DpEvent`` tree it runs the library's own
``RdpAccountant``.
"""

from __future__ import annotations

from typing import Any

from ...optional import install_hint
from .adapters import Adapter, Claim, Job, Series, TreeJob, register
from .boundary import FloatPair, Numbers, Queries

__all__ = ["run_rdp", "RDPAdapter"]


def run_rdp(
    pairs: list[tuple[FloatPair, int]], q: Queries
) -> tuple[list[float], list[float], list[str]]:
    """``(delta at each q.eps, eps at each q.deltas, notes)`` from the composed RDP curve."""
    from .pld_adapter import _import

    _, rdp_mod = _import()
    orders = list(rdp_mod.DEFAULT_RDP_ORDERS)
    rdp = [0.0] * len(orders)
    for pair, count in pairs:
        for i, a in enumerate(orders):
            rdp[i] += count * pair.renyi(a)
    d = [float(rdp_mod.compute_delta(orders, rdp, e)[0]) for e in q.eps]
    e = [float(rdp_mod.compute_epsilon(orders, rdp, x)[0]) for x in q.deltas]
    return d, e, []


class RDPAdapter(Adapter):
    """dp_accounting's RDP conversion (an upper bound)."""

    name = "rdp"
    library = "dp_accounting"
    distribution = "dp-accounting"
    install_hint = install_hint("audit")
    series = (Series("rdp", Claim.UPPER, Claim.UPPER, "dp_accounting RdpAccountant"),)
    tree_name = "rdp"

    def load(self) -> Any:
        """Import dp_accounting's PLD and RDP modules."""
        from .pld_adapter import _import

        return _import()

    def run(self, job: Job) -> Numbers:
        """The RDP curve of the exact dominating pairs (:func:`run_rdp`)."""
        return {self.name: run_rdp(job.pairs(), Queries(job.eps, job.deltas))}

    def run_tree(
        self, job: TreeJob
    ) -> tuple[dict[str, tuple[list[float], list[float]]], str | None]:
        """dp_accounting's ``RdpAccountant`` on the tree."""
        from .pld_adapter import run_dp_accounting_tree

        return run_dp_accounting_tree("rdp", job)


register(RDPAdapter())
