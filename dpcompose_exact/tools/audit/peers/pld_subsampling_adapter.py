"""Adapter for PLD-subsampling 0.1.6 (``PLD_subsampling``): subsampling of a PLD's PMFs.

PLD-subsampling (``pip install pld-subsampling``) documents
``wrappers.dp_accounting_wrappers.amplify_pld_separate_directions(base_pld,
sampling_prob) -> PrivacyLossDistribution`` as "returns a PLD with amplified remove/add
PMFs" (its README): the subsampled privacy-loss distribution of a mechanism run on a
Poisson subsample of rate ``q``.  The adapter builds the base PLD the way the README
does, dp_accounting's ``from_gaussian_mechanism`` (or ``from_laplace_mechanism``) with
``pessimistic_estimate=True`` at the suite's grid (option ``pld_grid``), amplifies it,
then ``self_compose(k)``.

* ``pld_subsampling``: ``get_delta_for_epsilon`` and ``get_epsilon_for_delta`` of the
  result.  Claim: upper bounds -- the PMFs it returns keep the base PMF's
  ``pessimistic_estimate=True``, which dp_accounting documents as an upper bound on the
  hockey-stick divergence.
"""

from __future__ import annotations

from typing import Any

from ....regions.protocol import LossPair
from ..adapters import Claim, Job, Series, register
from ..boundary import Numbers
from . import PeerAdapter, noise_of, per_query

__all__ = ["PldSubsamplingAdapter"]


class PldSubsamplingAdapter(PeerAdapter):
    """``amplify_pld_separate_directions`` of dp_accounting's noise PLD, self-composed."""

    name = "pld_subsampling"
    library = "PLD_subsampling"
    distribution = "pld-subsampling"
    series = (
        Series(
            "pld_subsampling",
            Claim.UPPER,
            Claim.UPPER,
            "PLD_subsampling amplify_pld_separate_directions",
        ),
    )
    forms = frozenset({"noise"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian or Laplace noise on a Poisson subsample (rate below 1)."""
        noise = noise_of(mechanism, pair)
        if noise is not None and noise.rate < 1:
            return None
        return f"PLD_subsampling amplifies a subsampled PLD, not {mechanism.describe()}"

    def _kind(self, job: Job) -> tuple[Any, int]:
        kinds: dict[Any, int] = {}
        for (m, c), p in zip(job.items, job.loss_pairs()):
            noise = noise_of(m, p)
            assert noise is not None
            kinds[noise] = kinds.get(noise, 0) + c
        if len(kinds) != 1:
            raise ValueError("the adapter amplifies one mechanism kind per run")
        return next(iter(kinds.items()))

    def _base_source(self, job: Job) -> str:
        noise, _ = self._kind(job)
        grid = float(job.options.get("pld_grid", 1e-4))
        scale, sens = float(noise.scale), float(noise.sensitivity)
        if noise.kind == "gaussian":
            head = f"pld.from_gaussian_mechanism(standard_deviation={scale!r}"
        else:
            head = f"pld.from_laplace_mechanism(parameter={scale!r}"
        return (
            f"{head}, sensitivity={sens!r}, value_discretization_interval={grid!r}, "
            "pessimistic_estimate=True)"
        )

    def compute(self, job: Job) -> Numbers:
        """delta(eps) and eps(delta) of the amplified, self-composed PLD."""
        from dp_accounting.pld import privacy_loss_distribution as pld
        from PLD_subsampling import amplify_pld_separate_directions

        noise, k = self._kind(job)
        grid = float(job.options.get("pld_grid", 1e-4))
        common = {
            "sensitivity": float(noise.sensitivity),
            "value_discretization_interval": grid,
            "pessimistic_estimate": True,
        }
        if noise.kind == "gaussian":
            base = pld.from_gaussian_mechanism(standard_deviation=float(noise.scale), **common)
        else:
            base = pld.from_laplace_mechanism(parameter=float(noise.scale), **common)
        composed = amplify_pld_separate_directions(base, float(noise.rate)).self_compose(k)
        notes: list[str] = []
        ds = per_query(composed.get_delta_for_epsilon, job.eps, "delta at eps", notes)
        es = per_query(composed.get_epsilon_for_delta, job.deltas, "eps at delta", notes)
        return {self.name: (ds, es, notes)}

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """The base PLD, the amplification, ``self_compose``, the query."""
        noise, k = self._kind(job)
        call = "get_delta_for_epsilon" if quantity == "delta" else "get_epsilon_for_delta"
        return [
            "from dp_accounting.pld import privacy_loss_distribution as pld",
            "from PLD_subsampling import amplify_pld_separate_directions",
            "",
            f"base = {self._base_source(job)}",
            f"amplified = amplify_pld_separate_directions(base, {float(noise.rate)!r})",
            f"reported = amplified.self_compose({k}).{call}({at!r})",
        ]


register(PldSubsamplingAdapter())
