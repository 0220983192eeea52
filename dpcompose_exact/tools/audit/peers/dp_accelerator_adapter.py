"""Adapter for dp-accelerator (``dp_accelerator``): Rust RDP accounting of DP-SGD.

``dp_accelerator.compute_epsilon_batch(q, noise_multiplier, steps_list, orders, delta)``
(``pip install dp-accelerator``; the function ``DPSGDAccountant.get_epsilon`` calls) returns
"the epsilon value that satisfies (epsilon, delta)-DP" for ``steps`` Poisson-subsampled
Gaussian steps (rate ``q = batch_size / dataset_size``, ``noise_multiplier`` = noise scale
over sensitivity), from the RDP curve at the orders ``DPSGDAccountant`` uses ("the same RDP
orders as Google's dp_accounting library").  Claim: an upper bound on eps(delta) (a
guarantee, as the docstring says); it reports no delta(eps).  One (rate, multiplier) per
run: a composition of several kinds is refused (``crashed`` with that reason would
misreport the library, so :meth:`DPAcceleratorAdapter.compute` raises only for it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....regions.protocol import LossPair
from ..adapters import Claim, Job, Series, register
from ..boundary import Numbers
from . import PeerAdapter, noise_of, per_query

__all__ = ["DPAcceleratorAdapter", "ORDERS"]

ORDERS = np.concatenate(
    (np.linspace(1.01, 8, num=50), np.arange(8, 64), np.linspace(65, 512, num=10, dtype=int))
).tolist()
"""The RDP orders of ``dp_accelerator.DPSGDAccountant`` (copied from its ``__init__``)."""


class DPAcceleratorAdapter(PeerAdapter):
    """dp-accelerator's ``compute_epsilon_batch`` (eps(delta), an upper bound)."""

    name = "dp_accelerator"
    library = "dp_accelerator"
    distribution = "dp-accelerator"
    series = (Series("dp_accelerator", Claim.NONE, Claim.UPPER, "dp_accelerator (RDP)"),)
    forms = frozenset({"gaussian", "noise"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian noise, Poisson subsampled or not (rate 1)."""
        noise = noise_of(mechanism, pair)
        if noise is not None and noise.kind == "gaussian":
            return None
        return f"dp-accelerator models subsampled Gaussians only, not {mechanism.describe()}"

    def compute(self, job: Job) -> Numbers:
        """``compute_epsilon_batch(q, sigma, [count], ORDERS, delta)`` at each delta."""
        from dp_accelerator import compute_epsilon_batch

        kinds = {}
        for (m, c), p in zip(job.items, job.loss_pairs()):
            noise = noise_of(m, p)
            assert noise is not None
            key = (float(noise.rate), noise.multiplier)
            kinds[key] = kinds.get(key, 0) + c
        if len(kinds) != 1:
            raise ValueError("dp-accelerator composes one (rate, noise multiplier) per run")
        (q, sigma), steps = next(iter(kinds.items()))
        notes: list[str] = []
        es = per_query(
            lambda d: compute_epsilon_batch(q, sigma, [steps], ORDERS, d)[0],
            job.deltas,
            "eps at delta",
            notes,
        )
        return {self.name: ([float("nan")] * len(job.eps), es, notes)}


register(DPAcceleratorAdapter())
