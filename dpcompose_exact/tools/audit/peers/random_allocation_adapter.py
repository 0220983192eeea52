"""Adapters for random-allocation 1.0.5 (``random_allocation``): its baselines of the suite's cases.

random-allocation (``pip install random-allocation``; "Privacy Amplification by Random
Allocation", Feldman and Shenfeld) compares the random-allocation scheme with the schemes
it is measured against, each a pair of functions ``*_epsilon(params, config)`` /
``*_delta(params, config)`` on ``PrivacyParams(sigma, num_steps, num_selected,
num_epochs, epsilon or delta)`` ("Exactly one value in {delta, epsilon} should be set to
None", its README) and ``SchemeConfig()`` (its defaults: ``discretization = 1e-4``,
``epsilon_tolerance = 1e-3``).  The random-allocation scheme itself (each record in
``num_selected`` of ``num_steps`` steps drawn at random) is not a mechanism of the suite;
its baselines are:

* ``random_allocation_local``: ``other_schemes.local.local_delta`` / ``local_epsilon``,
  "the privacy profile in case the index where each element is used is public (no
  amplification)": the Gaussian mechanism of noise ``sigma`` (sensitivity 1) composed
  ``num_selected * num_epochs`` times, i.e. the suite's plain Gaussian cases
  (``num_steps = num_selected = 1``, ``num_epochs = k``).  Claim: upper bounds (a privacy
  profile; ``Gaussian_epsilon`` inverts it by a search whose ``BoundType.UPPER`` default
  is documented to "ensure y <= y_target", an eps whose delta is at most the target).
* ``random_allocation_poisson_pld`` and ``random_allocation_poisson_rdp``:
  ``other_schemes.poisson.Poisson_epsilon_PLD`` / ``Poisson_delta_PLD`` ("the Poisson
  scheme with the Gaussian mechanism based on pld": dp_accounting's connect-the-dots PLD,
  ``pessimistic_estimate=True``) and ``Poisson_epsilon_RDP`` / ``Poisson_delta_RDP``
  (dp_accounting's ``RdpAccountant``) for ``k`` Poisson-subsampled Gaussian steps
  (``num_steps = k``, ``num_epochs = 1``, ``sampling_prob = q``; ``Poisson_delta_RDP``
  takes the rate as ``num_selected / num_steps``, so it answers when ``q k`` is a whole
  number).  Claims: upper bounds (pessimistic PLD; RDP).

It is installed by its own extra, ``random-allocation`` (with pandas, which it imports
without declaring it), not by ``audit-peers``: it caps numpy below 2.2, which would
downgrade numpy for everything else in the environment.

Every call is made with ``Direction.BOTH``, the functions' default (add and remove).
Eps = 0 is refused by ``PrivacyParams`` ("epsilon must be positive"): such a query is a
row whose note quotes the error.
"""

from __future__ import annotations

import math
from typing import Any

from ....optional import install_hint as _install_hint
from ....regions.protocol import LossPair
from ..adapters import Claim, Job, Series, register
from ..boundary import Numbers
from . import LibraryUnsupported, PeerAdapter, noise_of, per_query

__all__ = ["RandomAllocationLocalAdapter", "RandomAllocationPoissonAdapter"]


def _gaussian_kind(job: Job, what: str) -> tuple[float, float, int]:
    """``(noise multiplier, rate, count)`` of the job's one Gaussian kind."""
    kinds: dict[tuple[float, float], int] = {}
    for (m, c), p in zip(job.items, job.loss_pairs()):
        noise = noise_of(m, p)
        assert noise is not None
        key = (noise.multiplier, float(noise.rate))
        kinds[key] = kinds.get(key, 0) + c
    if len(kinds) != 1:
        raise ValueError(f"{what} takes one (sigma, rate) per run")
    (sigma, q), k = next(iter(kinds.items()))
    return sigma, q, k


class _RandomAllocation(PeerAdapter):
    quick = False  # seconds of CPU: left out of the quick suite unless named
    library = "random_allocation"
    distribution = "random-allocation"
    install_hint = _install_hint("random-allocation")  # not in audit-peers: it caps numpy
    forms = frozenset({"gaussian", "noise"})


class RandomAllocationLocalAdapter(_RandomAllocation):
    """``local_delta`` / ``local_epsilon``: k Gaussian steps without amplification."""

    name = "random_allocation_local"
    series = (
        Series(
            "random_allocation_local",
            Claim.UPPER,
            Claim.UPPER,
            "random_allocation local_delta/local_epsilon",
        ),
    )

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian noise, not subsampled."""
        noise = noise_of(mechanism, pair)
        if noise is not None and noise.kind == "gaussian" and noise.rate == 1:
            return None
        return f"random_allocation's local scheme is the plain Gaussian, not {mechanism.describe()}"

    def compute(self, job: Job) -> Numbers:
        """``local_delta`` at each eps and ``local_epsilon`` at each delta."""
        from random_allocation.comparisons.structs import PrivacyParams, SchemeConfig
        from random_allocation.other_schemes.local import local_delta, local_epsilon

        sigma, _, k = _gaussian_kind(job, "local_delta")
        config = SchemeConfig()

        def params(**query: float) -> Any:
            return PrivacyParams(sigma=sigma, num_steps=1, num_selected=1, num_epochs=k, **query)

        notes: list[str] = []
        ds = per_query(
            lambda e: local_delta(params(epsilon=e), config), job.eps, "delta at eps", notes
        )
        es = per_query(
            lambda d: local_epsilon(params(delta=d), config), job.deltas, "eps at delta", notes
        )
        return {self.name: (ds, es, notes)}

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """One ``local_delta`` or ``local_epsilon`` call."""
        sigma, _, k = _gaussian_kind(job, "local_delta")
        fn, arg = ("local_delta", "epsilon") if quantity == "delta" else ("local_epsilon", "delta")
        return [
            "from random_allocation.comparisons.structs import PrivacyParams, SchemeConfig",
            f"from random_allocation.other_schemes.local import {fn}",
            "",
            f"params = PrivacyParams(sigma={sigma!r}, num_steps=1, num_selected=1, "
            f"num_epochs={k}, {arg}={at!r})",
            f"reported = {fn}(params, SchemeConfig())",
        ]


class RandomAllocationPoissonAdapter(_RandomAllocation):
    """``Poisson_*_PLD`` and ``Poisson_*_RDP``: k Poisson-subsampled Gaussian steps."""

    name = "random_allocation_poisson"
    series = (
        Series(
            "random_allocation_poisson_pld",
            Claim.UPPER,
            Claim.UPPER,
            "random_allocation Poisson_delta_PLD/Poisson_epsilon_PLD",
        ),
        Series(
            "random_allocation_poisson_rdp",
            Claim.UPPER,
            Claim.UPPER,
            "random_allocation Poisson_delta_RDP/Poisson_epsilon_RDP",
        ),
    )

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian noise on a Poisson subsample (rate below 1)."""
        noise = noise_of(mechanism, pair)
        if noise is not None and noise.kind == "gaussian" and noise.rate < 1:
            return None
        return (
            "random_allocation's Poisson scheme is the subsampled Gaussian, not "
            f"{mechanism.describe()}"
        )

    @staticmethod
    def _selected(q: float, k: int) -> int:
        """``num_selected`` with ``num_selected / k == q`` (``Poisson_delta_RDP``'s rate)."""
        n = round(q * k)
        if n < 1 or n / k != q:
            raise LibraryUnsupported(  # its signature cannot state the rate: no crash
                f"Poisson_delta_RDP takes the rate as num_selected / num_steps; q = {q!r} "
                f"is not a multiple of 1/{k}"
            )
        return n

    def compute(self, job: Job) -> Numbers:
        """The PLD and RDP functions at each eps and each delta."""
        from random_allocation.comparisons.structs import Direction, PrivacyParams, SchemeConfig
        from random_allocation.other_schemes import poisson

        sigma, q, k = _gaussian_kind(job, "Poisson_PLD")
        config = SchemeConfig()

        def params(selected: int = 1, **query: float) -> Any:
            return PrivacyParams(
                sigma=sigma, num_steps=k, num_selected=selected, num_epochs=1, **query
            )

        out: Numbers = {}
        notes: list[str] = []
        # Poisson_delta_PLD / Poisson_epsilon_PLD build Poisson_PLD(...) and ask it once
        # (their source); the same PLD is built once here and asked at every point
        composed = poisson.Poisson_PLD(
            sigma=sigma,
            num_steps=k,
            num_epochs=1,
            sampling_prob=q,
            discretization=config.discretization,
            direction=Direction.BOTH,
        )
        ds = per_query(composed.get_delta_for_epsilon, job.eps, "delta at eps", notes)
        es = per_query(composed.get_epsilon_for_delta, job.deltas, "eps at delta", notes)
        out["random_allocation_poisson_pld"] = (ds, es, notes)
        notes = []
        try:
            selected = self._selected(q, k)
        except LibraryUnsupported as exc:  # delta(eps) only: eps(delta) takes the rate as is
            notes.append(f"unsupported: {exc}")
            ds = [math.nan] * len(job.eps)
        else:
            ds = per_query(
                lambda e: poisson.Poisson_delta_RDP(params(selected, epsilon=e), config),
                job.eps,
                "delta at eps",
                notes,
            )
        es = per_query(
            lambda d: poisson.Poisson_epsilon_RDP(params(delta=d), config, sampling_prob=q),
            job.deltas,
            "eps at delta",
            notes,
        )
        out["random_allocation_poisson_rdp"] = (ds, es, notes)
        return out

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """One ``Poisson_*`` call, with the rate as the function takes it."""
        sigma, q, k = _gaussian_kind(job, "Poisson_PLD")
        kind = "PLD" if series.endswith("_pld") else "RDP"
        fn = f"Poisson_{'delta' if quantity == 'delta' else 'epsilon'}_{kind}"
        arg = "epsilon" if quantity == "delta" else "delta"
        selected = self._selected(q, k) if fn == "Poisson_delta_RDP" else 1
        rate = "" if fn == "Poisson_delta_RDP" else f", sampling_prob={q!r}"
        return [
            "from random_allocation.comparisons.structs import PrivacyParams, SchemeConfig",
            f"from random_allocation.other_schemes.poisson import {fn}",
            "",
            f"params = PrivacyParams(sigma={sigma!r}, num_steps={k}, num_selected={selected}, "
            f"num_epochs=1, {arg}={at!r})",
            f"reported = {fn}(params, SchemeConfig(){rate})",
        ]


register(RandomAllocationLocalAdapter())
register(RandomAllocationPoissonAdapter())
