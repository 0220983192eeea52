"""Adapters for pld-accounting 2.0 (``PLD_accounting``): random allocation and PLD subsampling.

pld-accounting (``pip install pld-accounting``; Shenfeld et al., numerical accounting for
random allocation) answers two of the suite's mechanisms through its public API
(``PLD_accounting/__init__.py``):

* ``pld_accounting_allocation``: ``gaussian_allocation_epsilon_range(delta=, sigma=,
  num_steps=1, num_selected=1, num_epochs=k)``, "epsilon bounds for Gaussian
  random-allocation (adaptive refinement)", returning ``(upper_bound, lower_bound)``.  With
  one step per epoch and one selection, every record is in every step: ``k`` epochs are
  ``k`` Gaussian mechanisms of noise ``sigma`` (sensitivity 1, add/remove), the suite's
  plain Gaussian cases.  Claims: the two series ``pld_accounting_allocation`` (the upper
  bound) and ``pld_accounting_allocation_lower`` (the lower bound) on eps(delta).  Its
  delta(eps) entry (``gaussian_allocation_delta_configurable``) costs seconds per query at
  the default accuracy and is not asked.  Random allocation over several steps is not a
  mechanism of the suite.
* ``pld_accounting_subsample``: ``subsample_pld(pld=..., sampling_probability=q)`` on
  dp_accounting's PLD of one Gaussian or Laplace mechanism
  (``from_gaussian_mechanism`` / ``from_laplace_mechanism``, ``pessimistic_estimate=True``,
  value discretisation :data:`PLD_accounting.DEFAULT_LOSS_DISCRETIZATION`, the library's
  own default), then ``self_compose(k)``.  The subsampled PMFs are built with
  ``BoundType.DOMINATES``, documented as "the upper (pessimistic) bound"; claim: upper
  bounds on delta(eps) and eps(delta).
"""

from __future__ import annotations

import math
from typing import Any

from ....regions.protocol import LossPair
from ..adapters import Claim, Job, Series, register
from ..boundary import Numbers
from . import PeerAdapter, noise_of, per_query

__all__ = ["PldAccountingAllocationAdapter", "PldAccountingSubsampleAdapter"]


def _one_kind(job: Job, what: str) -> tuple[Any, int]:
    """The job's one noise kind and its count (a second kind raises)."""
    kinds: dict[Any, int] = {}
    for (m, c), p in zip(job.items, job.loss_pairs()):
        noise = noise_of(m, p)
        assert noise is not None
        kinds[noise] = kinds.get(noise, 0) + c
    if len(kinds) != 1:
        raise ValueError(f"{what} composes one mechanism kind per run")
    return next(iter(kinds.items()))


class _PldAccounting(PeerAdapter):
    library = "PLD_accounting"
    distribution = "pld-accounting"
    forms = frozenset({"gaussian", "noise"})


class PldAccountingAllocationAdapter(_PldAccounting):
    """``gaussian_allocation_epsilon_range`` with one step per epoch (k Gaussian steps)."""

    quick = False  # seconds of CPU: left out of the quick suite unless named

    name = "pld_accounting_allocation"
    series = (
        Series(
            "pld_accounting_allocation",
            None,
            Claim.UPPER,
            "PLD_accounting gaussian_allocation_epsilon_range (upper)",
        ),
        Series(
            "pld_accounting_allocation_lower",
            None,
            Claim.LOWER,
            "PLD_accounting gaussian_allocation_epsilon_range (lower)",
        ),
    )

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian noise of sensitivity 1, not subsampled."""
        noise = noise_of(mechanism, pair)
        if noise is not None and noise.kind == "gaussian" and noise.rate == 1:
            if noise.sensitivity == 1:
                return None
        return (
            "pld-accounting's random allocation of one step per epoch is the plain Gaussian "
            f"of sensitivity 1, not {mechanism.describe()}"
        )

    def compute(self, job: Job) -> Numbers:
        """``gaussian_allocation_epsilon_range`` at each delta: (upper, lower)."""
        from PLD_accounting import gaussian_allocation_epsilon_range

        noise, k = _one_kind(job, "gaussian_allocation_epsilon_range")
        sigma = noise.multiplier
        nan = [math.nan] * len(job.eps)
        notes: list[str] = []
        pairs = []
        for d in job.deltas:
            try:
                up, lo = gaussian_allocation_epsilon_range(
                    delta=d, sigma=sigma, num_steps=1, num_selected=1, num_epochs=k
                )
                pairs.append((float(up), float(lo)))
            except Exception as exc:  # noqa: BLE001 - one query's failure is a row
                notes.append(f"eps at delta={d:g}: {type(exc).__name__}: {exc}".splitlines()[0])
                pairs.append((math.nan, math.nan))
        if pairs and all(math.isnan(u) for u, _ in pairs):
            raise ValueError(notes[0])
        return {
            "pld_accounting_allocation": (nan, [u for u, _ in pairs], notes),
            "pld_accounting_allocation_lower": (nan, [lo for _, lo in pairs], list(notes)),
        }

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """The one call; the upper or the lower end of its pair."""
        noise, k = _one_kind(job, "gaussian_allocation_epsilon_range")
        end = 1 if series.endswith("_lower") else 0
        return [
            "from PLD_accounting import gaussian_allocation_epsilon_range",
            "",
            f"pair = gaussian_allocation_epsilon_range(delta={at!r}, sigma={noise.multiplier!r}, "
            f"num_steps=1, num_selected=1, num_epochs={k})",
            f"reported = pair[{end}]  # (upper_bound, lower_bound)",
        ]


class PldAccountingSubsampleAdapter(_PldAccounting):
    """``subsample_pld`` of dp_accounting's Gaussian or Laplace PLD, self-composed."""

    name = "pld_accounting_subsample"
    series = (
        Series(
            "pld_accounting_subsample", Claim.UPPER, Claim.UPPER, "PLD_accounting subsample_pld"
        ),
    )

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian or Laplace noise on a Poisson subsample (rate below 1)."""
        noise = noise_of(mechanism, pair)
        if noise is not None and noise.rate < 1:
            return None
        return f"pld-accounting's subsample_pld subsamples a PLD, not {mechanism.describe()}"

    def _base_call(self, noise: Any) -> str:
        """The dp_accounting constructor of the base PLD (source text)."""
        from PLD_accounting import DEFAULT_LOSS_DISCRETIZATION as grid

        scale, sens = float(noise.scale), float(noise.sensitivity)
        if noise.kind == "gaussian":
            return (
                f"pld.from_gaussian_mechanism(standard_deviation={scale!r}, sensitivity={sens!r}, "
                f"value_discretization_interval={grid!r}, pessimistic_estimate=True)"
            )
        return (
            f"pld.from_laplace_mechanism(parameter={scale!r}, sensitivity={sens!r}, "
            f"value_discretization_interval={grid!r}, pessimistic_estimate=True)"
        )

    def _composed(self, job: Job) -> Any:
        from dp_accounting.pld import privacy_loss_distribution as pld
        from PLD_accounting import DEFAULT_LOSS_DISCRETIZATION as grid
        from PLD_accounting import subsample_pld

        noise, k = _one_kind(job, "subsample_pld")
        scale, sens = float(noise.scale), float(noise.sensitivity)
        if noise.kind == "gaussian":
            base = pld.from_gaussian_mechanism(
                standard_deviation=scale,
                sensitivity=sens,
                value_discretization_interval=grid,
                pessimistic_estimate=True,
            )
        else:
            base = pld.from_laplace_mechanism(
                parameter=scale,
                sensitivity=sens,
                value_discretization_interval=grid,
                pessimistic_estimate=True,
            )
        return subsample_pld(pld=base, sampling_probability=float(noise.rate)).self_compose(k)

    def compute(self, job: Job) -> Numbers:
        """delta(eps) and eps(delta) of the composed subsampled PLD."""
        composed = self._composed(job)
        notes: list[str] = []
        ds = per_query(composed.get_delta_for_epsilon, job.eps, "delta at eps", notes)
        es = per_query(composed.get_epsilon_for_delta, job.deltas, "eps at delta", notes)
        return {self.name: (ds, es, notes)}

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """The base PLD, ``subsample_pld``, ``self_compose``, then the query."""
        noise, k = _one_kind(job, "subsample_pld")
        call = "get_delta_for_epsilon" if quantity == "delta" else "get_epsilon_for_delta"
        return [
            "from dp_accounting.pld import privacy_loss_distribution as pld",
            "from PLD_accounting import subsample_pld",
            "",
            f"base = {self._base_call(noise)}",
            f"sub = subsample_pld(pld=base, sampling_probability={float(noise.rate)!r})",
            f"reported = sub.self_compose({k}).{call}({at!r})",
        ]


register(PldAccountingAllocationAdapter())
register(PldAccountingSubsampleAdapter())
