"""Adapters for gdpnum (``gdpnum`` and ``gdpnum_mu``): numeric Gaussian-DP of DP-SGD.

gdpnum (``pip install gdpnum``; Gomez et al., "Gaussian DP for Reporting Differential
Privacy Guarantees in Machine Learning") builds dp_accounting's connect-the-dots PLD of
Poisson-subsampled Gaussian steps (``CTDAccountant.step(noise_multiplier=...,
sample_rate=...)``, rate 1 for plain Gaussian noise) and reports:

* ``gdpnum``: ``CTDAccountant.get_epsilon(delta=...)``, the Opacus accountant interface's
  epsilon.  Claim: upper bound on eps(delta) (presented as the accountant's guarantee,
  on the pessimistic connect-the-dots PLD); it reports no delta(eps).
* ``gdpnum_mu``: ``CTDAccountant.get_mu_and_regret()``'s mu, documented as "a pessimistic
  value for mu (i.e. so that f_mu <= T(P,Q))": the mechanism is claimed mu-GDP, so its
  privacy curve lies below the Gaussian one, ``delta(eps) <= Phi(-eps/mu + mu/2) -
  e^eps Phi(-eps/mu - mu/2)``.  The adapter reports that curve (computed with mpmath at 30
  digits, rounded up) at the queried eps and its inverse at the queried deltas.  Claim:
  upper bounds -- a number below the truth means the reported mu is too small.  The mu
  itself is in the note of each row (``mu = ...``) and reported as ``gdp_mu``
  (:meth:`GdpnumAdapter.compute_quantities`, claim: upper bound).

``CTDAccountant.get_beta(alpha)``, the symmetrized trade-off function of the pessimistic
PLD, is reported as ``beta`` of the ``gdpnum`` series; claim: a lower bound (pessimistic:
at most the true type-II error).
"""

from __future__ import annotations

import math
from typing import Any

from ....regions.protocol import LossPair
from ..adapters import Claim, Job, Quantities, Series, register
from ..boundary import Numbers
from . import PeerAdapter, noise_of, per_query

__all__ = ["GdpnumAdapter", "gdp_delta", "gdp_epsilon"]


def gdp_delta(mu: float, eps: float) -> float:
    """delta(eps) of mu-GDP, ``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``, rounded up."""
    import mpmath as mp

    with mp.workdps(30):
        m, e = mp.mpf(mu), mp.mpf(eps)
        d = mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)
        return math.nextafter(float(d), math.inf)


def gdp_epsilon(mu: float, delta: float) -> float:
    """The eps where the mu-GDP curve reaches ``delta`` (bisection), rounded up."""
    if delta >= 1:
        return 0.0
    if delta <= 0:
        return math.inf
    lo, hi = 0.0, 1.0
    if gdp_delta(mu, 0.0) <= delta:
        return 0.0
    while gdp_delta(mu, hi) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if gdp_delta(mu, mid) > delta else (lo, mid)
    return hi


class GdpnumAdapter(PeerAdapter):
    """gdpnum's ``CTDAccountant``: eps(delta) and the GDP mu."""

    name = "gdpnum"
    library = "gdpnum"
    distribution = "gdpnum"
    series = (
        Series("gdpnum", None, Claim.UPPER, "gdpnum CTDAccountant.get_epsilon", beta=Claim.LOWER),
        Series(
            "gdpnum_mu",
            Claim.UPPER,
            Claim.UPPER,
            "gdpnum mu (mu-GDP curve)",
            gdp_mu=Claim.UPPER,
            quote=(
                'gdpnum.converter: "Extracting a pessimistic value for \u03bc (i.e. so that '
                'f_\u03bc <= T(P,Q))"; CTDAccountant.get_mu_and_regret returns that pess_mu, '
                "a guarantee: the curve of mu-GDP is judged, and mu itself"
            ),
        ),
    )
    forms = frozenset({"gaussian", "noise"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian noise, Poisson subsampled or not."""
        noise = noise_of(mechanism, pair)
        if noise is not None and noise.kind == "gaussian":
            return None
        return f"gdpnum models DP-SGD's subsampled Gaussian only, not {mechanism.describe()}"

    def _steps(self, job: Job) -> list[tuple[float, float, int]]:
        """``(noise multiplier, sample rate, count)`` of each item."""
        out = []
        for (m, c), p in zip(job.items, job.loss_pairs()):
            noise = noise_of(m, p)
            assert noise is not None
            out.append((noise.multiplier, float(noise.rate), c))
        return out

    _last: tuple[Job, Any] | None = None  # the accountant of the last job (run, then quantities)

    def _accountant(self, job: Job) -> Any:
        """The accountant with the job's steps; built once per job (its PLD is costly)."""
        import gdpnum

        if self._last is not None and self._last[0] is job:
            return self._last[1]
        acct = gdpnum.CTDAccountant()
        for sigma, rate, c in self._steps(job):
            for _ in range(c):
                acct.step(noise_multiplier=sigma, sample_rate=rate)
        self._last = (job, acct)
        return acct

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """The accountant's steps, then ``get_epsilon``, ``get_beta`` or mu and its curve.

        The ``gdpnum_mu`` curve is this module's :func:`gdp_delta` / :func:`gdp_epsilon`
        (mpmath), copied into the script.
        """
        import inspect

        lines = ["import gdpnum", "", "acct = gdpnum.CTDAccountant()"]
        for (m, _), (sigma, rate, c) in zip(job.items, self._steps(job)):
            lines += [f"# {m.describe()} x{c}", f"for _ in range({c}):"]
            lines.append(f"    acct.step(noise_multiplier={sigma!r}, sample_rate={rate!r})")
        if series == "gdpnum" and quantity == "epsilon":
            return [*lines, f"reported = acct.get_epsilon(delta={at!r})"]
        if series == "gdpnum":  # beta, asked at all alphas at once as the adapter does
            alphas = job.alphas or [1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1]
            i = next(j for j, a in enumerate(alphas) if a == at)
            return [
                "import numpy as np",
                *lines,
                f"alphas = np.asarray({list(alphas)!r}, dtype=float)",
                f"reported = acct.get_beta(alpha=alphas)[{i}]  # beta({at!r})",
            ]
        lines.append("mu, regret = acct.get_mu_and_regret()  # 'a pessimistic value for mu'")
        if quantity == "gdp_mu":
            return [*lines, "reported = float(mu)"]
        helpers = ["import math", "", inspect.getsource(gdp_delta), inspect.getsource(gdp_epsilon)]
        call = "gdp_delta" if quantity == "delta" else "gdp_epsilon"
        note = "# the mu-GDP curve the adapter reports (mpmath at 30 digits, rounded up)"
        return [*helpers, *lines, note, f"reported = {call}(float(mu), {at!r})"]

    def compute_quantities(self, job: Job) -> Quantities:
        """The GDP mu (``get_mu_and_regret``) and beta at the job's alphas (``get_beta``).

        Without alphas, the paper's defaults: 1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1.
        """
        import numpy as np

        acct = self._accountant(job)
        mu, _ = acct.get_mu_and_regret()
        alphas = job.alphas or [1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1]
        betas = acct.get_beta(alpha=np.asarray(alphas, dtype=float))
        return {
            "gdpnum": {"beta": [(float(a), float(b)) for a, b in zip(alphas, betas)]},
            "gdpnum_mu": {"gdp_mu": [(math.nan, float(mu))]},
        }

    def compute(self, job: Job) -> Numbers:
        """The accountant's epsilon at each delta; mu's Gaussian curve."""
        acct = self._accountant(job)
        notes: list[str] = []
        es = per_query(lambda d: acct.get_epsilon(delta=d), job.deltas, "eps at delta", notes)
        mu, regret = acct.get_mu_and_regret()
        mu = float(mu)
        mu_notes = [f"mu = {mu!r}, regret = {float(regret)!r}"]
        if not (mu > 0 and math.isfinite(mu)):
            nan = [math.nan] * len(job.eps), [math.nan] * len(job.deltas)
            return {
                "gdpnum": ([math.nan] * len(job.eps), es, notes),
                "gdpnum_mu": (*nan, [f"invalid value: mu = {mu!r}"]),
            }
        ds_mu = per_query(lambda e: gdp_delta(mu, e), job.eps, "delta at eps", mu_notes)
        es_mu = per_query(lambda d: gdp_epsilon(mu, d), job.deltas, "eps at delta", mu_notes)
        return {
            "gdpnum": ([math.nan] * len(job.eps), es, notes),
            "gdpnum_mu": (ds_mu, es_mu, mu_notes),
        }


register(GdpnumAdapter())
