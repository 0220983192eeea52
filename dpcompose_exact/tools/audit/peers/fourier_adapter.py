"""Adapter for fourier-accountant (``fourier``): FFT accounting of subsampled Gaussians.

``fourier_accountant.get_delta_R`` / ``get_epsilon_R`` (Koskela, Jalko, Honkela, "Computing
Tight Differential Privacy Guarantees Using FFT", arXiv 1906.03049; ``pip install
fourier-accountant``) compose Poisson-subsampled Gaussian mechanisms under the remove/add
relation: arrays ``sigma`` (noise scale over sensitivity), ``q`` (the rate, 1 for no
subsampling) and ``ncomp`` (the counts).  Claim: estimate -- the docstrings say the
functions "rely on numerical approximations, which are influenced by choice of parameters
nx and L" and that "corner cases exist where this function sometimes returns inaccurate
values"; no direction is promised.  The integration window ``[-L, L]`` must hold the
queried eps (the docstring: "L must be chosen large enough to cover the computed
epsilon"): the adapter takes ``L = max(20, 1.5 * largest queried eps + 5)`` and the
library's default ``nx = 10^6``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....regions.protocol import LossPair
from ..adapters import Claim, Job, Series, register
from ..boundary import Numbers
from . import PeerAdapter, noise_of, per_query

__all__ = ["FourierAdapter"]

NX = 10**6
"""The library's default number of discretisation points."""


def window(eps: list[float]) -> float:
    """The integration half-width ``L`` the adapter passes (the library's default 20 or more)."""
    return max(20.0, 1.5 * max(eps, default=0.0) + 5.0)


class FourierAdapter(PeerAdapter):
    """fourier-accountant's ``get_delta_R`` / ``get_epsilon_R`` (an estimate)."""

    name = "fourier"
    library = "fourier_accountant"
    distribution = "fourier-accountant"
    series = (Series("fourier", Claim.ESTIMATE, Claim.ESTIMATE, "fourier_accountant (R)"),)
    forms = frozenset({"gaussian", "noise"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian noise, Poisson subsampled or not."""
        noise = noise_of(mechanism, pair)
        if noise is not None and noise.kind == "gaussian":
            return None
        return f"fourier-accountant models subsampled Gaussians only, not {mechanism.describe()}"

    def settings(self, options: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """``nx`` and the time limit (``L`` depends on the queries)."""
        return [("fourier_nx", NX), *super().settings(options)]

    def compute(self, job: Job) -> Numbers:
        """``get_delta_R`` at each eps, ``get_epsilon_R`` at each delta."""
        import fourier_accountant as fa
        import numpy as np

        sig, q, k = self._arrays(job)
        arrays = {"sigma": np.array(sig), "q": np.array(q), "ncomp": np.array(k, dtype=np.int64)}
        L = window(job.eps)
        notes: list[str] = []
        ds = per_query(
            lambda e: fa.get_delta_R(target_eps=e, nx=NX, L=L, **arrays),
            job.eps,
            "delta at eps",
            notes,
            raise_all=False,  # eps = 0 and q = 1 fail for different reasons
        )
        es = per_query(
            lambda d: fa.get_epsilon_R(target_delta=d, nx=NX, L=L, **arrays),
            job.deltas,
            "eps at delta",
            notes,
            raise_all=False,
        )
        return {self.name: (ds, es, notes)}

    def _arrays(self, job: Job) -> tuple[list[float], list[float], list[int]]:
        """``(sigma, q, ncomp)`` of the used items, as lists."""
        sig, q, k = [], [], []
        for (m, c), p in zip(job.items, job.loss_pairs()):
            if c:
                noise = noise_of(m, p)
                assert noise is not None
                sig.append(noise.multiplier)
                q.append(float(noise.rate))
                k.append(c)
        return sig, q, k

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """``get_delta_R`` or ``get_epsilon_R`` with the adapter's ``nx`` and ``L``."""
        sig, q, k = self._arrays(job)
        lines = ["import fourier_accountant as fa", "import numpy as np", ""]
        lines.append(f"sigma, q = np.array({sig!r}), np.array({q!r})")
        lines.append(f"ncomp = np.array({k!r}, dtype=np.int64)")
        common = f"nx={NX!r}, L={window(job.eps)!r}, sigma=sigma, q=q, ncomp=ncomp"
        if quantity == "delta":
            return [*lines, f"reported = fa.get_delta_R(target_eps={at!r}, {common})"]
        return [*lines, f"reported = fa.get_epsilon_R(target_delta={at!r}, {common})"]


register(FourierAdapter())
