"""Adapter for Opacus's accountants (``opacus``): RDP, PRV and GDP of DP-SGD steps.

Opacus (``pip install torch==2.13.0`` first on the machines of this project, then ``pip
install opacus``) accounts for DP-SGD as a history of ``(noise_multiplier, sample_rate,
steps)``: Poisson-subsampled Gaussian steps of sensitivity 1 (rate 1: plain Gaussian
noise).  Its three accountants are driven through their own interface (``step`` or
``history``, then ``get_epsilon(delta)``); none reports delta(eps).

* ``opacus_rdp``: ``opacus.accountants.RDPAccountant.get_epsilon(delta)``, the RDP curve of
  the sampled Gaussian converted by "Theorem 21 in the arXiv version" of Balle et al.
  (its ``get_privacy_spent`` docstring).  Claim: upper bound on eps(delta) (RDP is a
  guarantee).  Its RDP curve, ``opacus.accountants.analysis.rdp.compute_rdp(q,
  noise_multiplier, steps, orders)``, is reported as ``renyi``; claim: upper bound.
* ``opacus_prv``: ``PRVAccountant.get_epsilon(delta)`` (defaults ``eps_error=0.01``,
  ``delta_error=delta/1000``), which returns the ``eps_upper`` of the discretised PRV,
  "return upper bound as we want guarantee, not just estimate" (its source).  Claim:
  upper bound.
* ``opacus_gdp``: ``GaussianAccountant.get_epsilon(delta)``, the central-limit mu of
  Poisson subsampling (``compute_eps_poisson``); the class warns on construction "GDP
  accounting is experimental and can underestimate privacy expenditure".  Claim: an
  estimate (not judged as a bound).  It takes one ``(noise_multiplier, sample_rate)`` per
  run: a composition of several kinds raises (a crashed row naming the limit).

``opacus.accountants.utils.get_noise_multiplier`` is a calibration, not a number of a
fixed mechanism, so it is audited by :func:`calibration_check` (the sigma it returns for
a target, and the certified eps of that sigma at the target delta) rather than in the
suite's rows.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ....regions.protocol import LossPair
from ..adapters import Claim, Job, Quantities, Series, register
from ..boundary import Numbers
from . import PeerAdapter, noise_of, per_query

__all__ = ["OpacusAdapter", "calibration_check", "history_of"]


def history_of(job: Job) -> list[tuple[float, float, int]]:
    """Opacus's history of the job: ``(noise_multiplier, sample_rate, steps)`` per kind.

    Kinds of equal (multiplier, rate) are merged; the values are the nearest doubles.
    """
    merged: dict[tuple[float, float], int] = {}
    for (m, c), p in zip(job.items, job.loss_pairs()):
        noise = noise_of(m, p)
        assert noise is not None and noise.kind == "gaussian"
        key = (noise.multiplier, float(noise.rate))
        merged[key] = merged.get(key, 0) + c
    return [(sigma, q, n) for (sigma, q), n in merged.items()]


def _accountant(kind: str, history: list[tuple[float, float, int]]) -> Any:
    from opacus.accountants import GaussianAccountant, PRVAccountant, RDPAccountant

    if kind == "gdp":
        if len(history) != 1:
            raise ValueError(
                "GaussianAccountant: 'Noise multiplier and sample rate have to stay constant'"
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "GDP accounting is experimental ..."
            acct = GaussianAccountant()
    else:
        acct = RDPAccountant() if kind == "rdp" else PRVAccountant()
    acct.history = list(history)
    return acct


def _epsilon(acct: Any, delta: float) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # RDP: "Optimal order is the largest alpha"
        return float(acct.get_epsilon(delta=delta))


class OpacusAdapter(PeerAdapter):
    """Opacus's ``RDPAccountant``, ``PRVAccountant`` and ``GaussianAccountant``."""

    quick = False  # seconds of CPU: left out of the quick suite unless named

    name = "opacus"
    library = "opacus"
    distribution = "opacus"
    install_hint = 'pip install torch==2.13.0 && pip install "dpcompose-exact[opacus]"'
    series = (
        Series("opacus_rdp", None, Claim.UPPER, "opacus RDPAccountant", renyi=Claim.UPPER),
        Series("opacus_prv", None, Claim.UPPER, "opacus PRVAccountant"),
        Series("opacus_gdp", None, Claim.ESTIMATE, "opacus GaussianAccountant (CLT)"),
    )
    forms = frozenset({"gaussian", "noise"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian noise of any sensitivity, Poisson subsampled or not (DP-SGD steps)."""
        noise = noise_of(mechanism, pair)
        if noise is not None and noise.kind == "gaussian":
            return None
        return f"Opacus accounts for DP-SGD's subsampled Gaussian only, not {mechanism.describe()}"

    def compute(self, job: Job) -> Numbers:
        """Each accountant's ``get_epsilon(delta)`` at each delta (no delta(eps))."""
        history = history_of(job)
        nan = [math.nan] * len(job.eps)
        out: Numbers = {}
        for kind in ("rdp", "prv", "gdp"):
            notes: list[str] = []
            acct = _accountant(kind, history)
            es = per_query(lambda d, a=acct: _epsilon(a, d), job.deltas, "eps at delta", notes)
            out[f"opacus_{kind}"] = (nan, es, notes)
        return out

    def compute_quantities(self, job: Job) -> Quantities:
        """The RDP curve ``sum compute_rdp(q, sigma, steps, orders)`` at the job's orders."""
        from opacus.accountants.analysis.rdp import compute_rdp

        orders = job.orders or [1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        total = [0.0] * len(orders)
        for sigma, q, n in history_of(job):
            part = compute_rdp(q=q, noise_multiplier=sigma, steps=n, orders=orders)
            total = [t + float(v) for t, v in zip(total, part)]
        return {"opacus_rdp": {"renyi": list(zip(map(float, orders), total))}}

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """The accountant with the job's history, then ``get_epsilon`` or ``compute_rdp``."""
        history = history_of(job)
        if quantity == "renyi":
            lines = ["from opacus.accountants.analysis.rdp import compute_rdp", ""]
            lines.append("reported = 0.0")
            for sigma, q, n in history:
                lines.append(
                    f"reported += float(compute_rdp(q={q!r}, noise_multiplier={sigma!r}, "
                    f"steps={n}, orders=[{at!r}])[0])"
                )
            return lines
        cls = {"opacus_rdp": "RDPAccountant", "opacus_prv": "PRVAccountant"}.get(
            series, "GaussianAccountant"
        )
        return [
            f"from opacus.accountants import {cls}",
            "",
            f"acct = {cls}()",
            f"acct.history = {history!r}  # (noise_multiplier, sample_rate, steps)",
            f"reported = acct.get_epsilon(delta={at!r})",
        ]


def calibration_check(
    target_epsilon: float,
    target_delta: float,
    sample_rate: float,
    steps: int,
    accountant: str = "prv",
) -> dict[str, Any]:
    """Opacus's ``get_noise_multiplier`` for a target, checked by the certified composition.

    Returns ``{"sigma": ..., "certified": Value, "meets": bool}``: the noise multiplier
    Opacus returns with ``accountant`` (claimed to reach ``(target_epsilon,
    target_delta)`` after ``steps`` Poisson-subsampled Gaussian steps), the certified
    eps(target_delta) of those steps (:func:`dpcompose_exact.compose`, docs/theory.md,
    sections 15 and 18), and whether its upper end is at most the target (``False``: the
    calibration is on the wrong side; undecided enclosures count as not meeting it).
    """
    from fractions import Fraction

    from opacus.accountants.utils import get_noise_multiplier

    from ....api import compose
    from ....mechanisms.noise import gaussian_noise

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sigma = float(
            get_noise_multiplier(
                target_epsilon=target_epsilon,
                target_delta=target_delta,
                sample_rate=sample_rate,
                steps=steps,
                accountant=accountant,
            )
        )
    base = gaussian_noise(Fraction(repr(sigma)))
    q = Fraction(repr(sample_rate))
    value = compose(base if q == 1 else base.subsample(q), steps).epsilon(
        Fraction(repr(target_delta))
    )
    return {"sigma": sigma, "certified": value, "meets": value.upper() <= target_epsilon}


register(OpacusAdapter())
