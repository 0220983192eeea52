"""Adapter for dp-accelerator (``dp_accelerator``): Rust RDP accounting of DP-SGD.

``dp_accelerator.compute_epsilon_batch(q, noise_multiplier, steps_list, orders, delta)``
(``pip install dp-accelerator``; the function ``DPSGDAccountant.get_epsilon`` calls) returns
"the epsilon value that satisfies (epsilon, delta)-DP" for ``steps`` Poisson-subsampled
Gaussian steps (rate ``q = batch_size / dataset_size``, ``noise_multiplier`` = noise scale
over sensitivity), from the RDP curve at the orders ``DPSGDAccountant`` uses ("the same RDP
orders as Google's dp_accounting library").  Claim: an upper bound on eps(delta) (a
guarantee, as the docstring says); it reports no delta(eps).  Its
``DPSGDAccountant.get_rdp_curve(steps)`` ("the full RDP curve", "RDP orders to RDP
values") is reported as the RDP curve, quantity ``renyi``
(:meth:`DPAcceleratorAdapter.compute_quantities`), claimed an upper bound (RDP values of a
mechanism are a Renyi-DP guarantee).

The library takes one (rate, multiplier) per run: a composition of several kinds raises
in :meth:`DPAcceleratorAdapter.compute` (a crashed row whose note names this limit).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ....regions.protocol import LossPair
from ..adapters import Claim, Job, Quantities, Series, register
from ..boundary import Numbers
from . import PeerAdapter, noise_of, per_query

__all__ = ["DPAcceleratorAdapter", "orders"]


def orders() -> list[float]:
    """The RDP orders of ``dp_accelerator.DPSGDAccountant`` (copied from its ``__init__``)."""
    import numpy as np

    return np.concatenate(
        (np.linspace(1.01, 8, num=50), np.arange(8, 64), np.linspace(65, 512, num=10, dtype=int))
    ).tolist()


class DPAcceleratorAdapter(PeerAdapter):
    """dp-accelerator's ``compute_epsilon_batch`` (eps(delta), an upper bound)."""

    name = "dp_accelerator"
    library = "dp_accelerator"
    distribution = "dp-accelerator"
    series = (
        Series("dp_accelerator", None, Claim.UPPER, "dp_accelerator (RDP)", renyi=Claim.UPPER),
    )
    forms = frozenset({"gaussian", "noise"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian noise, Poisson subsampled or not (rate 1)."""
        noise = noise_of(mechanism, pair)
        if noise is not None and noise.kind == "gaussian":
            return None
        return f"dp-accelerator models subsampled Gaussians only, not {mechanism.describe()}"

    def _kind(self, job: Job) -> tuple[Fraction, float, int]:
        """``(rate, noise multiplier, steps)`` of the job's one kind."""
        kinds: dict[tuple[Fraction, float], int] = {}
        for (m, c), p in zip(job.items, job.loss_pairs()):
            noise = noise_of(m, p)
            assert noise is not None
            key = (noise.rate, noise.multiplier)
            kinds[key] = kinds.get(key, 0) + c
        if len(kinds) != 1:
            raise ValueError("dp-accelerator composes one (rate, noise multiplier) per run")
        (rate, sigma), steps = next(iter(kinds.items()))
        return rate, sigma, steps

    def compute(self, job: Job) -> Numbers:
        """``compute_epsilon_batch(q, sigma, [count], orders(), delta)`` at each delta."""
        from dp_accelerator import compute_epsilon_batch

        rate, sigma, steps = self._kind(job)
        q = float(rate)
        notes: list[str] = []
        es = per_query(
            lambda d: compute_epsilon_batch(q, sigma, [steps], orders(), d)[0],
            job.deltas,
            "eps at delta",
            notes,
        )
        return {self.name: ([float("nan")] * len(job.eps), es, notes)}

    def compute_quantities(self, job: Job) -> Quantities:
        """``DPSGDAccountant(sigma, batch, dataset).get_rdp_curve(steps)`` (rate = batch/dataset).

        At the job's orders when given (the accountant's orders otherwise); the curve is the
        library's "full RDP curve" of the training.
        """
        from dp_accelerator import DPSGDAccountant

        rate, sigma, steps = self._kind(job)
        acct = DPSGDAccountant(sigma, rate.numerator, rate.denominator)
        if job.orders:
            acct.orders = list(job.orders)
        curve = acct.get_rdp_curve(steps)
        return {self.name: {"renyi": [(float(a), float(v)) for a, v in curve.items()]}}

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """``compute_epsilon_batch`` at the accountant's orders, or ``get_rdp_curve``."""
        rate, sigma, steps = self._kind(job)
        if quantity == "renyi":
            return [
                "from dp_accelerator import DPSGDAccountant",
                "",
                f"acct = DPSGDAccountant({sigma!r}, {rate.numerator}, {rate.denominator})",
                f"acct.orders = {list(job.orders)!r}" if job.orders else "",
                f"reported = acct.get_rdp_curve({steps})[{at!r}]",
            ]
        return [
            "import numpy as np",
            "from dp_accelerator import compute_epsilon_batch",
            "",
            "# the orders of DPSGDAccountant.__init__",
            "orders = np.concatenate((np.linspace(1.01, 8, num=50), np.arange(8, 64), "
            "np.linspace(65, 512, num=10, dtype=int))).tolist()",
            f"reported = compute_epsilon_batch({float(rate)!r}, {sigma!r}, [{steps}], orders, "
            f"{at!r})[0]",
        ]


register(DPAcceleratorAdapter())
