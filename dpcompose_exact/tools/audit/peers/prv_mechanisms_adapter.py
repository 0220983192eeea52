"""prv_accountant through its own mechanism classes (``prv_classes``).

The built-in :mod:`~dpcompose_exact.tools.audit.prv_adapter` hands ``PRVAccountant`` a
finite mechanism as its exact dominating pair (a privacy random variable of its atoms) and
noise through the library's classes only where a finite item sits next to it; this adapter
describes every item the way a user of the library does, with the privacy random
variables prv_accountant ships (``prv_accountant.privacy_random_variables``):

* Gaussian noise: ``GaussianMechanism(noise_multiplier=sigma, l2_sensitivity=shift)``
  (its ``mu = l2_sensitivity / noise_multiplier``); Poisson subsampled:
  ``PoissonSubsampledGaussianMechanism(sampling_probability=q, noise_multiplier=sigma /
  shift)``;
* Laplace noise: ``LaplaceMechanism(mu=shift / b)`` (the loss bound);
* a pure ``eps``-DP mechanism (one constraint ``(eps, 0)``; randomized response among
  them): ``PureDPMechanism(eps=eps)``;
* an ``(eps, delta)``-DP mechanism (one constraint, ``delta > 0``):
  ``ApproximateDPMechanism(epsilon=eps, delta=delta)``;

and composes them with ``PRVAccountant(prvs, max_self_compositions=counts, eps_error,
delta_error)``.  Any other mechanism (several constraints, subsampled Laplace) is
``unsupported``: the library has no class for it.

Claims.  ``PRVAccountant.compute_delta``: "Return lower bound for delta, estimate for
delta and upper bound for delta" (its LaTeX spelled out; ``compute_epsilon`` the same for
epsilon); the
series reports the upper one, judged as an upper bound (docs/theory.md, section 3).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ....regions.protocol import LossPair, PairForm
from ..adapters import Claim, Job, Series, register
from ..boundary import Numbers
from . import PeerAdapter, eps_float, noise_of, per_query

__all__ = ["PRVMechanismsAdapter", "prv_class_source"]

_QUOTE = (
    'PRVAccountant.compute_delta: "Return lower bound for $\\delta$, estimate for $\\delta$ '
    'and upper bound for $\\delta$"; compute_epsilon: "Return lower bound for $\\varepsilon$, '
    'estimate for $\\varepsilon$ and upper bound for $\\varepsilon$" '
    "(prv_accountant/accountant.py; the audit judges the upper one)"
)


def prv_class_source(mechanism: Any, pair: LossPair) -> str | None:
    """The library's privacy random variable of one mechanism, as source (None: none).

    The arguments are doubles (``repr``) in the library's conventions (module docstring).
    """
    noise = noise_of(mechanism, pair)
    if noise is not None:
        if noise.kind == "gaussian" and noise.rate == 1:
            sigma, shift = float(noise.scale), float(noise.sensitivity)
            return f"prv.GaussianMechanism(noise_multiplier={sigma!r}, l2_sensitivity={shift!r})"
        if noise.kind == "gaussian":
            rate, multiplier = float(noise.rate), noise.multiplier
            return (
                f"prv.PoissonSubsampledGaussianMechanism(sampling_probability={rate!r}, "
                f"noise_multiplier={multiplier!r})"
            )
        if noise.rate == 1:
            return f"prv.LaplaceMechanism(mu={float(noise.sensitivity / noise.scale)!r})"
        return None
    if pair.form is not PairForm.FINITE:
        return None
    cons = mechanism.to_dict().get("constraints")
    if not cons or len(cons) != 1:
        return None
    delta = Fraction(cons[0][1])
    eps = eps_float(mechanism)  # log(r) of randomized response included
    if delta == 0:
        return f"prv.PureDPMechanism(eps={eps!r})"
    return f"prv.ApproximateDPMechanism(epsilon={eps!r}, delta={float(delta)!r})"


def _leaves(job: Job) -> list[tuple[str, int]]:
    out = []
    for (m, c), p in zip(job.items, job.loss_pairs()):
        if c:
            source = prv_class_source(m, p)
            assert source is not None  # accepts() refused the others
            out.append((source, c))
    return out


class PRVMechanismsAdapter(PeerAdapter):
    """prv_accountant's ``PRVAccountant`` on its own mechanism classes (upper bounds)."""

    name = "prv_mechanisms"
    library = "prv_accountant"
    distribution = "prv-accountant"
    series = (
        Series(
            "prv_classes",
            Claim.UPPER,
            Claim.UPPER,
            "prv_accountant PRVAccountant (its mechanism classes), upper bound",
            quote=_QUOTE,
        ),
    )
    forms = frozenset({"finite", "gaussian", "noise"})
    quick = False  # the built-in prv adapter runs in the quick suite already

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian (Poisson subsampled or not) and Laplace noise, one-constraint DP."""
        if prv_class_source(mechanism, pair) is not None:
            return None
        return f"prv_accountant has no mechanism class for {mechanism.describe()}"

    def compute(self, job: Job) -> Numbers:
        """``PRVAccountant`` on the classes; each query's upper end (per-query failures: nan)."""
        prv = self.imported()
        leaves = _leaves(job)
        scope = {"prv": prv}
        prvs = [eval(source, scope) for source, _ in leaves]  # noqa: S307 - our own text
        counts = [c for _, c in leaves]
        acc = prv.PRVAccountant(
            prvs=prvs,
            max_self_compositions=counts,
            eps_error=job.options["prv_eps_error"],
            delta_error=job.options["prv_delta_error"],
        )
        composed = acc.compute_composition(counts)  # once for every query (as prv_adapter)
        acc.compute_composition = lambda n: composed if list(n) == counts else None
        notes: list[str] = []
        ds = per_query(lambda e: acc.compute_delta(e, counts)[2], job.eps, "delta at eps", notes)
        es = per_query(lambda d: acc.compute_epsilon(d, counts)[2], job.deltas, "eps at delta",
                       notes)  # fmt: skip
        return {"prv_classes": (ds, es, notes)}

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """The classes, the accountant and the query, as source lines."""
        leaves = _leaves(job)
        lines = ["import prv_accountant as prv", ""]
        lines.append(f"prvs = [{', '.join(s for s, _ in leaves)}]")
        lines.append(f"counts = {[c for _, c in leaves]!r}")
        lines.append(
            "accountant = prv.PRVAccountant(prvs=prvs, max_self_compositions=counts, "
            f"eps_error={job.options['prv_eps_error']!r}, "
            f"delta_error={job.options['prv_delta_error']!r})"
        )
        call = "compute_delta" if quantity == "delta" else "compute_epsilon"
        lines.append(f"reported = accountant.{call}({at!r}, counts)[2]  # (lower, estimate, upper)")
        return lines


register(PRVMechanismsAdapter())
