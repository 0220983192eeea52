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
from ...regions.protocol import LossPair, PairForm
from .adapters import (
    Adapter,
    Claim,
    Job,
    NoiseParams,
    Quantities,
    Series,
    TreeJob,
    noise_params,
    register,
)
from .boundary import FloatPair, Numbers, Queries

__all__ = ["run_rdp", "run_rdp_native", "composed_rdp", "RDPAdapter"]


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


def _noise_event(noise: NoiseParams) -> Any:
    from ...optional import require

    dp_event = require("dp_accounting.dp_event", "the RDP adapter")
    if noise.kind == "gaussian":
        event = dp_event.GaussianDpEvent(noise.multiplier)
    else:
        event = dp_event.LaplaceDpEvent(noise.multiplier)
    if noise.rate != 1:
        event = dp_event.PoissonSampledDpEvent(float(noise.rate), event)
    return event


def composed_rdp(job: Job, orders: list[float]) -> list[float]:
    """The composed RDP curve at ``orders``: the library's for noise, ours for finite pairs.

    Noise goes through the library's ``RdpAccountant`` (``GaussianDpEvent``,
    ``LaplaceDpEvent``, ``PoissonSampledDpEvent``; add/remove), finite pairs by their
    Renyi divergences (rounded up) as in :func:`run_rdp`.
    """
    from .pld_adapter import _import

    _, rdp_mod = _import()
    acc = rdp_mod.RdpAccountant(orders)
    rdp = [0.0] * len(orders)
    for (mechanism, count), pair, fp in zip(job.items, job.loss_pairs(), job.float_pairs()):
        if fp is not None:
            for i, a in enumerate(orders):
                rdp[i] += count * fp.renyi(a)
            continue
        noise = noise_params(mechanism, pair)
        if noise is None:
            raise ValueError(f"no RDP for {mechanism.describe()}")
        acc.compose(_noise_event(noise), count)
    # the accountant's composed RDP at its orders (it has no public reader of them)
    return [r + float(x) for r, x in zip(rdp, acc._rdp)]


def run_rdp_native(job: Job) -> tuple[list[float], list[float], list[str]]:
    """The RDP curve of items with noise among them (:func:`composed_rdp`), converted.

    At the library's default orders, with its ``compute_delta`` / ``compute_epsilon``.
    """
    from .pld_adapter import _import

    _, rdp_mod = _import()
    orders = list(rdp_mod.DEFAULT_RDP_ORDERS)
    rdp = composed_rdp(job, orders)
    d = [float(rdp_mod.compute_delta(orders, rdp, e)[0]) for e in job.eps]
    e = [float(rdp_mod.compute_epsilon(orders, rdp, x)[0]) for x in job.deltas]
    return d, e, []


class RDPAdapter(Adapter):
    """dp_accounting's RDP conversion (an upper bound)."""

    name = "rdp"
    library = "dp_accounting"
    distribution = "dp-accounting"
    install_hint = install_hint("audit")
    series = (
        Series("rdp", Claim.UPPER, Claim.UPPER, "dp_accounting RdpAccountant", renyi=Claim.UPPER),
    )
    tree_name = "rdp"

    def load(self) -> Any:
        """Import dp_accounting's PLD and RDP modules."""
        from .pld_adapter import _import

        return _import()

    forms = frozenset({"finite", "gaussian", "noise"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Finite pairs, and the noise events the library's ``RdpAccountant`` supports."""
        if pair.form is PairForm.FINITE:
            return None
        noise = noise_params(mechanism, pair)
        if noise is not None:
            try:
                _, rdp_mod = self.load()
            except ImportError as exc:
                return str(exc)
            if rdp_mod.RdpAccountant().supports(_noise_event(noise)):
                return None
        return f"RdpAccountant does not support {mechanism.describe()}"

    def run(self, job: Job) -> Numbers:
        """The RDP curve of the items.

        Of the exact dominating pairs (:func:`run_rdp`) when every item is finite, else with
        the library's own noise accounting (:func:`run_rdp_native`).
        """
        if not job.all_finite():
            return {self.name: run_rdp_native(job)}
        return {self.name: run_rdp(job.pairs(), Queries(job.eps, job.deltas))}

    def run_quantities(self, job: Job) -> Quantities:
        """The RDP curve ``RdpAccountant`` composes, at ``job.orders`` (default: its own).

        Reported only when a noise mechanism is among the items: the divergences of
        finite pairs are ours (rounded up), not the library's.
        """
        if job.all_finite():
            return {}
        from .pld_adapter import _import

        orders = list(job.orders) or list(_import()[1].DEFAULT_RDP_ORDERS)
        return {self.name: {"renyi": list(zip(orders, composed_rdp(job, orders)))}}

    def repro_source(self, job: Job, series: str, quantity: str, at: str) -> str | None:
        """dp_accounting's ``RdpAccountant`` (noise) and ``compute_delta``/``compute_epsilon``.

        Finite pairs enter as their Renyi divergences at the orders, computed by
        dpcompose_exact from the exact pair and embedded as doubles.
        """
        from .pld_adapter import _import

        _, rdp_mod = _import()
        orders = [float(at)] if quantity == "renyi" else list(rdp_mod.DEFAULT_RDP_ORDERS)
        lines = [
            "from dp_accounting import dp_event",
            "from dp_accounting.rdp import rdp_privacy_accountant as rdp_mod",
            "",
            f"orders = {orders!r}",
            "acc = rdp_mod.RdpAccountant(orders)",
            "finite = [0.0] * len(orders)  # Renyi divergences of the exact finite pairs",
        ]
        for (mechanism, count), pair, fp in zip(job.items, job.loss_pairs(), job.float_pairs()):
            if fp is not None:
                rdp = [count * fp.renyi(a) for a in orders]
                lines.append(f"# {mechanism.describe()} x{count}")
                lines.append(f"finite = [a + b for a, b in zip(finite, {rdp!r})]")
                continue
            noise = noise_params(mechanism, pair)
            if noise is None:
                return None
            cls = "GaussianDpEvent" if noise.kind == "gaussian" else "LaplaceDpEvent"
            event = f"dp_event.{cls}({noise.multiplier!r})"
            if noise.rate != 1:
                event = f"dp_event.PoissonSampledDpEvent({float(noise.rate)!r}, {event})"
            lines.append(f"acc.compose({event}, {count})")
        lines.append("rdp = [a + float(b) for a, b in zip(finite, acc._rdp)]")
        if quantity == "renyi":
            lines.append("reported = rdp[0]")
        elif quantity == "delta":
            lines.append(f"reported = rdp_mod.compute_delta(orders, rdp, {float(at)!r})[0]")
        else:
            lines.append(f"reported = rdp_mod.compute_epsilon(orders, rdp, {float(at)!r})[0]")
        return "\n".join(lines) + "\n"

    def run_tree(
        self, job: TreeJob
    ) -> tuple[dict[str, tuple[list[float], list[float]]], str | None]:
        """dp_accounting's ``RdpAccountant`` on the tree."""
        from .pld_adapter import run_dp_accounting_tree

        return run_dp_accounting_tree("rdp", job)


register(RDPAdapter())
