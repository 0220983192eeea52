"""Adapter for dp_accounting's PLD accountant (``pld_pessimistic`` and ``pld_optimistic``).

The exact dominating pair (rounded to doubles by :mod:`dpcompose_exact.tools.audit.boundary`) is
handed to ``dp_accounting.pld.privacy_loss_distribution.from_two_probability_mass_functions``
(upper = P0, lower = P1, the leak as an extra letter of P0), self-composed ``count`` times
per kind and composed across kinds, with a pessimistic or an optimistic rounding on the
library's grid; its ``get_delta_for_epsilon`` and ``get_epsilon_for_delta`` are the
reported numbers.  The audit (:mod:`dpcompose_exact.tools.audit.compare`, docs/theory.md,
section 3) compares them with the exact curve.  On a ``DpEvent`` tree the pessimistic
adapter runs the library's own ``PLDAccountant`` (:meth:`PLDAdapter.run_tree`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...optional import install_hint
from ...regions.protocol import LossPair
from .adapters import Adapter, Claim, Job, NoiseParams, Series, TreeJob, noise_params, register
from .boundary import FloatPair, Numbers, Queries

__all__ = ["run_pld", "run_pld_native", "pld_source", "PLDAdapter", "run_dp_accounting_tree"]


def _import() -> Any:
    from . import accountants

    return accountants._IMPORTERS["dp_accounting"]()


def run_pld(
    pairs: list[tuple[FloatPair, int]], q: Queries, grid: float, pessimistic: bool
) -> tuple[list[float], list[float], list[str]]:
    """``(delta at each q.eps, eps at each q.deltas, notes)`` of the composed dp_accounting PLD.

    ``pairs`` holds each kind's pair with its count, ``grid`` is the library's
    ``value_discretization_interval``.
    """
    pld_mod, _ = _import()
    total = None
    for pair, count in pairs:
        if count == 0:
            continue
        one = _pair_pld(pld_mod, pair, pessimistic, grid)
        many = one.self_compose(count) if count > 1 else one
        total = many if total is None else total.compose(many)
    assert total is not None
    d = [float(total.get_delta_for_epsilon(e)) for e in q.eps]
    e = [float(total.get_epsilon_for_delta(x)) for x in q.deltas]
    return d, e, []


def _pair_pld(pld_mod: Any, pair: FloatPair, pessimistic: bool, grid: float) -> Any:
    """The library's PLD of a finite pair; an asymmetric one with both directions."""
    lower, upper = pair.log_masses()
    return pld_mod.from_two_probability_mass_functions(
        lower,
        upper,
        pessimistic_estimate=pessimistic,
        value_discretization_interval=grid,
        symmetric=pair.symmetric,
    )


def _noise_pld(pld_mod: Any, noise: NoiseParams, pessimistic: bool, grid: float) -> Any:
    if noise.kind == "gaussian":
        return pld_mod.from_gaussian_mechanism(
            float(noise.scale),
            sensitivity=float(noise.sensitivity),
            pessimistic_estimate=pessimistic,
            value_discretization_interval=grid,
            sampling_prob=float(noise.rate),
            use_connect_dots=pessimistic,  # the library's choice anyway, without its warning
        )
    return pld_mod.from_laplace_mechanism(
        float(noise.scale),
        sensitivity=float(noise.sensitivity),
        pessimistic_estimate=pessimistic,
        value_discretization_interval=grid,
        sampling_prob=float(noise.rate),
        use_connect_dots=pessimistic,
    )


def run_pld_native(job: Job, pessimistic: bool) -> tuple[list[float], list[float], list[str]]:
    """The composed dp_accounting PLD of items with noise among them.

    Noise goes through the library's own ``from_gaussian_mechanism`` /
    ``from_laplace_mechanism`` (``sampling_prob`` for Poisson subsampling), finite pairs as
    in :func:`run_pld`.
    """
    pld_mod, _ = _import()
    grid = job.options["pld_grid"]
    total = None
    for (mechanism, count), pair, fp in zip(job.items, job.loss_pairs(), job.float_pairs()):
        if count == 0:
            continue
        noise = noise_params(mechanism, pair)
        if fp is not None:
            one = _pair_pld(pld_mod, fp, pessimistic, grid)
        elif noise is not None:
            one = _noise_pld(pld_mod, noise, pessimistic, grid)
        else:
            raise ValueError(f"no PLD for {mechanism.describe()}")
        many = one.self_compose(count) if count > 1 else one
        total = many if total is None else total.compose(many)
    assert total is not None
    d = [float(total.get_delta_for_epsilon(e)) for e in job.eps]
    e = [float(total.get_epsilon_for_delta(x)) for x in job.deltas]
    return d, e, []


def pld_source(job: Job, pessimistic: bool, quantity: str, at: str) -> str | None:
    """Source text of :func:`run_pld` / :func:`run_pld_native` for one query.

    It imports only dp_accounting and binds ``reported``; None for a quantity other than
    ``delta`` and ``epsilon`` or a mechanism the adapter does not take.
    """
    if quantity not in ("delta", "epsilon"):
        return None
    grid = job.options["pld_grid"]
    common = f"pessimistic_estimate={pessimistic}, value_discretization_interval={grid!r}"
    lines = ["from dp_accounting.pld import privacy_loss_distribution as pld_mod", ""]
    lines.append("total = None")
    for (mechanism, count), pair, fp in zip(job.items, job.loss_pairs(), job.float_pairs()):
        if count == 0:
            continue
        lines.append(f"# {mechanism.describe()} x{count}")
        noise = noise_params(mechanism, pair)
        if fp is not None:
            lower, upper = fp.log_masses()
            lines.append(f"upper = {upper!r}  # log P0 of the exact dominating pair")
            lines.append(f"lower = {lower!r}  # log P1")
            both = "" if fp.symmetric else ", symmetric=False"
            lines.append(
                f"one = pld_mod.from_two_probability_mass_functions(lower, upper, {common}{both})"
            )
        elif noise is not None:
            fn = "from_gaussian_mechanism" if noise.kind == "gaussian" else "from_laplace_mechanism"
            lines.append(
                f"one = pld_mod.{fn}({float(noise.scale)!r}, "
                f"sensitivity={float(noise.sensitivity)!r}, {common}, "
                f"sampling_prob={float(noise.rate)!r}, use_connect_dots={pessimistic})"
            )
        else:
            return None
        lines.append(f"many = one.self_compose({count})" if count > 1 else "many = one")
        lines.append("total = many if total is None else total.compose(many)")
    if quantity == "delta":
        lines.append(f"reported = total.get_delta_for_epsilon({float(at)!r})")
    else:
        lines.append(f"reported = total.get_epsilon_for_delta({float(at)!r})")
    return "\n".join(lines) + "\n"


_TREE_FEATURE = "the audit of an event tree"


def run_dp_accounting_tree(
    kind: str, job: TreeJob
) -> tuple[dict[str, tuple[list[float], list[float]]], str | None]:
    """dp_accounting's own ``PLDAccountant`` (``kind="pld"``) or ``RdpAccountant`` on a tree.

    Returns ``({series: (deltas, epsilons)}, None)``, or ``({}, reason)`` with the
    library's own reason when the accountant does not support the tree.
    """
    from ...optional import require

    accountant = require("dp_accounting.privacy_accountant", _TREE_FEATURE)
    relation = accountant.NeighboringRelation[job.relation]
    if kind == "pld":
        pld = require("dp_accounting.pld.pld_privacy_accountant", _TREE_FEATURE)
        acc = pld.PLDAccountant(relation, value_discretization_interval=job.options["pld_grid"])
        series = "pld_pessimistic"
    else:
        rdp = require("dp_accounting.rdp.rdp_privacy_accountant", _TREE_FEATURE)
        acc = rdp.RdpAccountant(neighboring_relation=relation)
        series = "rdp"
    if not acc.supports(job.event):
        detail = acc._maybe_compose(job.event, 1, False)  # the library's own reason
        why = getattr(detail, "error_message", "") or "unsupported"
        return {}, f"{type(acc).__name__} does not support the tree: {why}"
    acc.compose(job.event)
    ds = [float(acc.get_delta(e)) for e in job.eps]
    es = [float(acc.get_epsilon(d)) for d in job.deltas]
    return {series: (ds, es)}, None


class PLDAdapter(Adapter):
    """dp_accounting's PLD with a pessimistic (an upper bound) or optimistic rounding."""

    library = "dp_accounting"
    distribution = "dp-accounting"
    install_hint = install_hint("audit")

    def __init__(self, pessimistic: bool) -> None:
        self.pessimistic = pessimistic
        self.name = "pld_pessimistic" if pessimistic else "pld_optimistic"
        claim = Claim.UPPER if pessimistic else Claim.ESTIMATE
        label = "dp_accounting PLDAccountant" if pessimistic else ""
        self.series = (Series(self.name, claim, claim, label),)
        self.tree_name = "pld" if pessimistic else None

    def load(self) -> Any:
        """Import dp_accounting's PLD and RDP modules."""
        return _import()

    def settings(self, options: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """The grid: ``pld_value_discretization_interval``."""
        return [("pld_value_discretization_interval", options["pld_grid"])]

    forms = frozenset({"finite", "asymmetric", "gaussian", "noise"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Finite pairs (asymmetric too), and Gaussian or Laplace noise (subsampled or not)."""
        if pair.directions() is not None or noise_params(mechanism, pair) is not None:
            return None
        return f"{self.name} does not take {mechanism.describe()}"

    def run(self, job: Job) -> Numbers:
        """The composed PLD of the items.

        Of the exact dominating pairs (:func:`run_pld`) when every item is finite, else with
        the library's own noise PLDs (:func:`run_pld_native`).
        """
        if not job.all_finite():
            return {self.name: run_pld_native(job, self.pessimistic)}
        q = Queries(job.eps, job.deltas)
        return {self.name: run_pld(job.pairs(), q, job.options["pld_grid"], self.pessimistic)}

    def repro_source(self, job: Job, series: str, quantity: str, at: str) -> str | None:
        """The same calls as :meth:`run`, as source text (exact pairs embedded as doubles)."""
        return pld_source(job, self.pessimistic, quantity, at)

    def run_tree(
        self, job: TreeJob
    ) -> tuple[dict[str, tuple[list[float], list[float]]], str | None]:
        """dp_accounting's ``PLDAccountant`` on the tree (pessimistic only)."""
        return run_dp_accounting_tree("pld", job)


register(PLDAdapter(pessimistic=True))
register(PLDAdapter(pessimistic=False))
