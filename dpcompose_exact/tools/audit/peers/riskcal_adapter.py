"""Adapter for riskcal 1.5.1 (``riskcal``): its Opacus-compatible connect-the-dots accountant.

riskcal (``pip install riskcal``; Kulynych, Gomez et al., "Attack-Aware Noise Calibration
for Differential Privacy") ships ``riskcal.accountants.CTDAccountant``, "Opacus-compatible
Connect the Dots accountant" that "tracks privacy loss for DP-SGD using Google's Connect
the Dots (CTD) method via the dp_accounting library" (its docstring): Poisson-subsampled
Gaussian steps ``step(noise_multiplier=, sample_rate=)`` (rate 1: plain Gaussian noise),
composed on dp_accounting's PLD (``from_gaussian_mechanism(..., use_connect_dots=True,
value_discretization_interval=grid_step)``, ``grid_step = 1e-4`` by default).

* ``riskcal``: ``get_epsilon(delta=)``, documented as the "Epsilon value for
  (epsilon, delta)-DP".  Claim: upper bound on eps(delta) (a guarantee; the PLD is
  dp_accounting's pessimistic one).  It reports no delta(eps).
* ``get_beta(alpha=)`` (the "False negative rate corresponding to alpha" of the
  pessimistic PLD's trade-off curve, ``riskcal.analysis.get_beta_from_pld``) is reported
  as ``beta``; claim: a lower bound (at most the true type-II error, the f-DP guarantee's
  direction).
"""

from __future__ import annotations

import math
from typing import Any

from ....regions.protocol import LossPair
from ..adapters import Claim, Job, Quantities, Series, register
from ..boundary import Numbers
from . import PeerAdapter, noise_of, per_query

__all__ = ["RiskcalAdapter"]

_ALPHAS = (1e-3, 1e-2, 1e-1, 0.5)  # the alphas asked when the job names none


class RiskcalAdapter(PeerAdapter):
    """riskcal's ``CTDAccountant``: eps(delta) and beta(alpha)."""

    quick = False  # seconds of CPU: left out of the quick suite unless named

    name = "riskcal"
    library = "riskcal"
    distribution = "riskcal"
    series = (Series("riskcal", None, Claim.UPPER, "riskcal CTDAccountant", beta=Claim.LOWER),)
    forms = frozenset({"gaussian", "noise"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian noise of sensitivity 1, Poisson subsampled or not (DP-SGD steps)."""
        noise = noise_of(mechanism, pair)
        if noise is not None and noise.kind == "gaussian" and noise.sensitivity == 1:
            return None
        return f"riskcal's CTDAccountant models DP-SGD steps only, not {mechanism.describe()}"

    def _history(self, job: Job) -> list[tuple[float, float, int]]:
        """``(noise_multiplier, sample_rate, steps)`` per item, as ``step`` would record it."""
        out = []
        for (m, c), p in zip(job.items, job.loss_pairs()):
            noise = noise_of(m, p)
            assert noise is not None
            out.append((noise.multiplier, float(noise.rate), c))
        return out

    def _pld(self, job: Job) -> Any:
        """``CTDAccountant.get_pld()`` of the job's history (kept for the job's next call)."""
        from riskcal.accountants import CTDAccountant

        history = self._history(job)
        cached = getattr(self, "_cached", None)
        if cached is None or cached[0] != history:
            acct = CTDAccountant()
            acct.history = history  # what ``step`` records, one entry per run
            self._cached = (history, acct.get_pld())
        return self._cached[1]

    def compute(self, job: Job) -> Numbers:
        """``get_epsilon(delta=...)`` at each delta.

        ``get_epsilon`` is ``get_pld(**kwargs).get_epsilon_for_delta(delta)`` (its source):
        the composed PLD, ``get_pld()`` at its default ``grid_step``, is built once and
        asked at every delta, the same numbers in one composition instead of one per query.
        """
        pld = self._pld(job)
        notes: list[str] = []
        es = per_query(pld.get_epsilon_for_delta, job.deltas, "eps at delta", notes)
        return {self.name: ([math.nan] * len(job.eps), es, notes)}

    def compute_quantities(self, job: Job) -> Quantities:
        """``get_beta(alpha=...)`` at the job's alphas (all at once, as the README does).

        ``get_beta`` is ``get_beta_from_pld(get_pld(), alpha)`` (its source), called so.
        """
        import numpy as np
        from riskcal.analysis import get_beta_from_pld

        alphas = list(job.alphas or _ALPHAS)
        pld = self._pld(job)
        betas = get_beta_from_pld(pld, np.asarray(alphas, dtype=float))
        return {self.name: {"beta": [(float(a), float(b)) for a, b in zip(alphas, betas)]}}

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """The accountant's history, then ``get_epsilon`` or ``get_beta``."""
        lines = [
            "from riskcal.accountants import CTDAccountant",
            "",
            "acct = CTDAccountant()",
            f"acct.history = {self._history(job)!r}  # (noise_multiplier, sample_rate, steps)",
        ]
        if quantity == "epsilon":
            return [*lines, f"reported = acct.get_epsilon(delta={at!r})"]
        alphas = list(job.alphas or _ALPHAS)
        i = next(j for j, a in enumerate(alphas) if a == at)
        return [
            "import numpy as np",
            *lines,
            f"reported = acct.get_beta(alpha=np.asarray({alphas!r}))[{i}]  # beta({at!r})",
        ]


register(RiskcalAdapter())
