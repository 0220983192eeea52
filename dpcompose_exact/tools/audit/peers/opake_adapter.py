"""Adapter for opake-accounting (``opake``): PLD accounting in Rust.

``opake.accounting`` (``pip install opake-accounting``) "uses Google's PLD accounting via
the opake-accounting Rust crate"; a process's ``epsilon_at(delta)`` is documented as the
"smallest eps achieving (eps, delta)-DP" and ``delta_at(eps)`` as the "smallest delta
achieving (eps, delta)-DP" which "always returns at least infinity_mass ... the true
delta may be smaller than what is reported"; its discretization "smaller values give
tighter bounds".  Claim: upper bounds for both (the numbers are presented as the
guarantee, bounds that tighten with the grid); ``beta_at(alpha)`` ("type-II error at a
given type-I error") of the same PLD is reported as ``beta``, a lower bound.

Mechanisms: ``acc.eps_delta(eps, delta)`` for a single (eps, delta) constraint (pure DP and
randomized response as ``(eps, 0)``), and the extension's ``gaussian_pld(noise_multiplier,
config)`` and ``poisson_pld(base, rate)`` for Gaussian noise (the Python factories live in
``opake-dpsgd``; the extension documents these functions itself), composed by ``*`` (count)
and ``|`` / ``compose``, at the library's default discretization.
"""

from __future__ import annotations

from typing import Any

from ....regions.protocol import LossPair, PairForm
from ..adapters import Claim, Job, Quantities, Series, register
from ..boundary import Numbers
from . import PeerAdapter, eps_float, noise_of, per_query

__all__ = ["OpakeAdapter"]


class OpakeAdapter(PeerAdapter):
    """opake-accounting's PLD (upper bounds)."""

    name = "opake"
    library = "opake.accounting"
    distribution = "opake-accounting"
    series = (Series("opake", Claim.UPPER, Claim.UPPER, "opake.accounting PLD", beta=Claim.LOWER),)
    forms = frozenset({"gaussian", "noise", "finite"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian noise (Poisson subsampled or not) and single (eps, delta) constraints."""
        noise = noise_of(mechanism, pair)
        if noise is not None and noise.kind == "gaussian":
            return None
        cons = mechanism.to_dict().get("constraints") or []
        if pair.form is PairForm.FINITE and len(cons) == 1:
            return None
        return f"opake-accounting has no mechanism for {mechanism.describe()}"

    def compute(self, job: Job) -> Numbers:
        """The composed PLD's ``delta_at`` and ``epsilon_at``."""
        total = self._pld(job)
        notes: list[str] = []
        ds = per_query(total.delta_at, job.eps, "delta at eps", notes)
        es = per_query(total.epsilon_at, job.deltas, "eps at delta", notes)
        return {self.name: (ds, es, notes)}

    def compute_quantities(self, job: Job) -> Quantities:
        """``beta_at(alpha)`` of the composed PLD at the job's alphas (or 1e-6 ... 1e-1)."""
        total = self._pld(job)
        alphas = job.alphas or [1e-6, 1e-4, 1e-3, 1e-2, 1e-1]
        return {self.name: {"beta": [(a, float(total.beta_at(a))) for a in alphas]}}

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """The composed PLD as :meth:`_pld` builds it, then the query (``delta_at`` and so on)."""
        lines = [
            "import opake.accounting as acc",
            "from opake.api.accounting.core import _native",
            "from opake.api.accounting.core.discretization import get_discretization",
            "",
            "config = get_discretization().to_native()",
            "total = None",
        ]
        for (m, c), p in zip(job.items, job.loss_pairs()):
            if not c:
                continue
            lines.append(f"# {m.describe()} x{c}")
            noise = noise_of(m, p)
            if noise is not None:
                lines.append(f"one = _native.gaussian_pld({noise.multiplier!r}, config)")
                if noise.rate != 1:
                    lines.append(f"one = _native.poisson_pld(one, {float(noise.rate)!r})")
            else:
                delta = float(m.constraints[0][1].ball(64).mid())
                lines.append(f"one = acc.eps_delta({eps_float(m)!r}, {delta!r}).pld()")
            lines.append(f"many = one.self_compose({c})" if c > 1 else "many = one")
            lines.append("total = many if total is None else total.compose(many)")
        call = {"delta": "delta_at", "epsilon": "epsilon_at", "beta": "beta_at"}[quantity]
        return [*lines, f"reported = total.{call}({at!r})"]

    def _pld(self, job: Job) -> Any:
        import opake.accounting as acc
        from opake.api.accounting.core import _native
        from opake.api.accounting.core.discretization import get_discretization

        config = get_discretization().to_native()
        total = None
        for (m, c), p in zip(job.items, job.loss_pairs()):
            if not c:
                continue
            noise = noise_of(m, p)
            if noise is not None:
                one = _native.gaussian_pld(noise.multiplier, config)
                if noise.rate != 1:
                    one = _native.poisson_pld(one, float(noise.rate))
            else:
                delta = float(m.constraints[0][1].ball(64).mid())
                one = acc.eps_delta(eps_float(m), delta).pld()
            many = one.self_compose(c) if c > 1 else one
            total = many if total is None else total.compose(many)
        assert total is not None
        return total


register(OpakeAdapter())
