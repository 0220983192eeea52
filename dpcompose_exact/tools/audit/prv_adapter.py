"""Adapter for prv_accountant (``prv_lower``, ``prv_estimate``, ``prv_upper``).

The exact dominating pair (docs/theory.md, section 3) becomes a discrete
``PrivacyRandomVariable`` with the pair's atoms and the leak as ``pm_inf``, built by
:func:`dpcompose_exact.presentation.export.prv_from_atoms` (the same class as
:func:`dpcompose_exact.presentation.export.to_prv`), and is composed by ``PRVAccountant``,
which reports a lower bound, an estimate and an upper bound for each query.  On a
``DpEvent`` tree the library's own privacy random variables of the leaves are composed
(:meth:`PRVAdapter.run_tree`), where it has them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ...optional import install_hint
from ...presentation.export import prv_from_atoms
from ...regions.protocol import LossPair, PairForm
from .adapters import Adapter, Claim, Job, Series, TreeJob, noise_params, register
from .boundary import FloatPair, Numbers, Queries

__all__ = ["run_prv", "prv_source", "PRVAdapter", "PRV_SERIES"]

PRV_SERIES = ("prv_lower", "prv_estimate", "prv_upper")
"""The three numbers PRVAccountant reports for each query."""


def _import() -> Any:
    from . import accountants

    return accountants._IMPORTERS["prv_accountant"]()


def _query_all(
    acc: Any, counts: list[int], eps: list[float], deltas: list[float], notes: list[str] | None
) -> dict[str, tuple[list[float], list[float]]]:
    out: dict[str, tuple[list[float], list[float]]] = {s: ([], []) for s in PRV_SERIES}
    queries = (
        (0, eps, acc.compute_delta, "delta at eps"),
        (1, deltas, acc.compute_epsilon, "eps at delta"),
    )
    for column, values, compute, label in queries:
        for v in values:
            try:
                triple = compute(v, counts)
            except (ValueError, RuntimeError, FloatingPointError) as exc:
                triple = (math.nan,) * 3
                if notes is not None:
                    notes.append(f"{label}={v}: {exc}")
            for s, r in zip(PRV_SERIES, triple):
                out[s][column].append(float(r))
    return out


def _memoize(acc: Any, counts: list[int]) -> None:
    """Compose the PRVs once for every query.

    ``compute_delta`` / ``compute_epsilon`` recompose them at every call, and the
    composition does not depend on the query (the library's code path is unchanged).
    """
    composed = acc.compute_composition(counts)
    acc.compute_composition = lambda n: composed if list(n) == counts else None


def run_prv(
    pairs: list[tuple[FloatPair, int]], q: Queries, eps_error: float, delta_error: float
) -> dict[str, tuple[list[float], list[float], list[str]]]:
    """Per series, ``(delta at each q.eps, eps at each q.deltas, notes)`` of PRVAccountant.

    ``eps_error`` and ``delta_error`` are the accountant's error targets; a query the
    library fails on gives ``nan`` and a note.
    """
    prv = _import()
    used = [(p, c) for p, c in pairs if c > 0]
    acc = prv.PRVAccountant(
        prvs=[prv_from_atoms(p.loss_decimals, p.p0_decimals, p.leak) for p, _ in used],
        max_self_compositions=[c for _, c in used],
        eps_error=eps_error,
        delta_error=delta_error,
    )
    counts = [c for _, c in used]
    _memoize(acc, counts)
    notes: list[str] = []
    got = _query_all(acc, counts, q.eps, q.deltas, notes)
    return {s: (ds, es, list(notes)) for s, (ds, es) in got.items()}


def _pure_eps(mechanism: Any, pair: LossPair) -> float | None:
    """Eps (a double) of a finite mechanism with the one constraint ``(eps, 0)``."""
    cons = mechanism.to_dict().get("constraints")
    if pair.form is PairForm.FINITE and cons and len(cons) == 1 and cons[0][1] == "0":
        return float(mechanism.constraints[0][0].ball(64).mid())
    return None


def _prv_of(mechanism: Any, prv: Any) -> Any:
    """prv_accountant's privacy random variable of one mechanism (None: it has none)."""
    pair = mechanism.loss_pair()
    desc = mechanism.to_dict()
    if pair.form is PairForm.GAUSSIAN:
        scale = float(Fraction(desc["scale"]) / Fraction(desc["sensitivity"]))
        return prv.PoissonSubsampledGaussianMechanism(1.0, scale)
    if pair.form is PairForm.NOISE:
        scale = float(Fraction(desc["scale"]) / Fraction(desc["sensitivity"]))
        rate = Fraction(desc.get("subsample", "1"))
        if desc["noise"] == "gaussian":
            return prv.PoissonSubsampledGaussianMechanism(float(rate), scale)
        # prv_accountant's LaplaceMechanism(mu) takes the loss bound mu = sensitivity / b
        return prv.LaplaceMechanism(1 / scale) if rate == 1 else None
    eps = _pure_eps(mechanism, pair)
    return None if eps is None else prv.PureDPMechanism(eps=eps)


_PRV_CLASS_SOURCE = """\
import math

import numpy as np
from prv_accountant import PrivacyRandomVariable


class ExactPairPRV(PrivacyRandomVariable):
    \"\"\"Discrete PRV of a finite pair: atoms at the losses, the leak as pm_inf.\"\"\"

    def __init__(self, losses, masses, leak):
        self.losses = np.asarray(losses, dtype=float)
        self.masses = np.asarray(masses, dtype=float)
        self.leak = leak
        order = np.argsort(self.losses)
        self.atoms = self.losses[order]
        self.weights = self.masses[order] / math.fsum(self.masses)
        self.cum = np.concatenate([[0.0], np.cumsum(self.weights)])
        self.cum[-1] = 1.0

    def cdf(self, t):
        return self.cum[np.searchsorted(self.atoms, t, side="right")]

    def mean(self):
        return float(np.dot(self.atoms, self.weights))

    def rdp(self, alpha):  # the Renyi divergence of the finite letters (in floats)
        top = float(np.max((alpha - 1) * self.atoms))
        s = math.fsum(w * math.exp((alpha - 1) * x - top) for x, w in zip(self.atoms, self.weights))
        return max(0.0, (top + math.log(s)) / (alpha - 1))

    @property
    def pm_inf(self):
        return self.leak
"""


def prv_source(job: Job, series: str, quantity: str, at: str) -> str | None:
    """Source text of :meth:`PRVAdapter.run` for one query (prv_accountant and numpy only).

    Finite pairs are embedded as their atoms (losses and P0-masses, doubles) in a small
    ``PrivacyRandomVariable`` class; None for another quantity or an unknown mechanism.
    """
    if quantity not in ("delta", "epsilon") or series not in PRV_SERIES:
        return None
    o = job.options
    lines = [_PRV_CLASS_SOURCE, "import prv_accountant as prv", "", "prvs, counts = [], []"]
    for (mechanism, count), pair, fp in zip(job.items, job.loss_pairs(), job.float_pairs()):
        if count == 0:
            continue
        lines.append(f"# {mechanism.describe()} x{count}")
        noise = noise_params(mechanism, pair)
        pure = _pure_eps(mechanism, pair) if not job.all_finite() else None
        if pure is not None:
            rv = f"prv.PureDPMechanism(eps={pure!r})"
        elif fp is not None:
            losses = [float(x) for x in fp.loss_decimals]
            masses = [float(x) for x in fp.p0_decimals]
            rv = f"ExactPairPRV({losses!r}, {masses!r}, {fp.leak!r})"
        elif noise is not None and noise.kind == "gaussian":
            rate, scale = float(noise.rate), noise.multiplier
            rv = f"prv.PoissonSubsampledGaussianMechanism({rate!r}, {scale!r})"
        elif noise is not None and noise.rate == 1:
            lines.append("# LaplaceMechanism takes the loss bound sensitivity / b")
            rv = f"prv.LaplaceMechanism({1 / noise.multiplier!r})"
        else:
            return None
        lines.append(f"prvs.append({rv})")
        lines.append(f"counts.append({count})")
    lines.append(
        "acc = prv.PRVAccountant(prvs=prvs, max_self_compositions=counts, "
        f"eps_error={o['prv_eps_error']!r}, delta_error={o['prv_delta_error']!r})"
    )
    call = "compute_delta" if quantity == "delta" else "compute_epsilon"
    i = PRV_SERIES.index(series)
    lines.append(f"reported = acc.{call}({float(at)!r}, counts)[{i}]  # (lower, estimate, upper)")
    return "\n".join(lines) + "\n"


class PRVAdapter(Adapter):
    """prv_accountant's PRVAccountant: a lower bound, an estimate and an upper bound."""

    name = "prv"
    library = "prv_accountant"
    distribution = "prv-accountant"
    install_hint = install_hint("audit")
    series = (
        Series("prv_lower", Claim.LOWER, Claim.LOWER),
        Series("prv_estimate", Claim.ESTIMATE, Claim.ESTIMATE),
        Series("prv_upper", Claim.UPPER, Claim.UPPER, "prv_accountant PRVAccountant, upper bound"),
    )
    tree_name = "prv"

    def load(self) -> Any:
        """Import prv_accountant."""
        return _import()

    def settings(self, options: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """The error targets ``prv_eps_error`` and ``prv_delta_error``."""
        return [
            ("prv_eps_error", options["prv_eps_error"]),
            ("prv_delta_error", options["prv_delta_error"]),
        ]

    forms = frozenset({"finite", "gaussian", "noise"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Finite pairs, Gaussian noise (Poisson subsampled or not), Laplace noise."""
        if pair.form is PairForm.FINITE:
            return None
        noise = noise_params(mechanism, pair)
        if noise is not None and (noise.kind == "gaussian" or noise.rate == 1):
            return None
        return f"prv_accountant has no privacy random variable for {mechanism.describe()}"

    def run(self, job: Job) -> Numbers:
        """PRVAccountant on the items.

        On the exact dominating pairs (:func:`run_prv`) when every item is finite, else with
        the library's own classes (``PoissonSubsampledGaussianMechanism``,
        ``LaplaceMechanism``, ``PureDPMechanism``), the pairs' PRVs for the other items.
        """
        q = Queries(job.eps, job.deltas)
        o = job.options
        if job.all_finite():
            return run_prv(job.pairs(), q, o["prv_eps_error"], o["prv_delta_error"])
        prv = _import()
        leaves = []
        for (mechanism, count), fp in zip(job.items, job.float_pairs()):
            if count == 0:
                continue
            # the library's own class first (PureDPMechanism for a pure eps-DP item among
            # noise: atoms next to a continuous PRV fail the library's discretiser check
            # "Discrete mean differs from continuous mean significantly")
            rv = _prv_of(mechanism, prv)
            if rv is None and fp is not None:
                rv = prv_from_atoms(fp.loss_decimals, fp.p0_decimals, fp.leak)
            if rv is None:
                raise ValueError(f"no privacy random variable for {mechanism.describe()}")
            leaves.append((rv, count))
        acc = prv.PRVAccountant(
            prvs=[p for p, _ in leaves],
            max_self_compositions=[c for _, c in leaves],
            eps_error=o["prv_eps_error"],
            delta_error=o["prv_delta_error"],
        )
        counts = [c for _, c in leaves]
        _memoize(acc, counts)
        notes: list[str] = []
        got = _query_all(acc, counts, job.eps, job.deltas, notes)
        return {s: (ds, es, list(notes)) for s, (ds, es) in got.items()}

    def repro_source(self, job: Job, series: str, quantity: str, at: str) -> str | None:
        """:meth:`run`'s calls as source text (:func:`prv_source`)."""
        return prv_source(job, series, quantity, at)

    def run_tree(
        self, job: TreeJob
    ) -> tuple[dict[str, tuple[list[float], list[float]]], str | None]:
        """PRVAccountant on the library's privacy random variables of the tree's leaves."""
        prv = _import()
        leaves: list[tuple[Any, int]] = []
        for mechanism, count in job.items():
            rv = _prv_of(mechanism, prv)
            if rv is None:
                return {}, (
                    f"prv_accountant has no privacy random variable for {mechanism.describe()}"
                )
            if count:
                leaves.append((rv, count))
        if not leaves:
            return {}, "no leaf to account"
        acc = prv.PRVAccountant(
            prvs=[p for p, _ in leaves],
            max_self_compositions=[c for _, c in leaves],
            eps_error=job.options["prv_eps_error"],
            delta_error=job.options["prv_delta_error"],
        )
        counts = [c for _, c in leaves]
        return _query_all(acc, counts, job.eps, job.deltas, None), None


register(PRVAdapter())
