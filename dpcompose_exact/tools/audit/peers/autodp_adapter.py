"""Adapters for autodp: its RDP accountant, its KOV composition, its characteristic functions.

Three accountants of the ``autodp`` package (``pip install autodp``):

* ``autodp_rdp``: the Mechanism API (``autodp.mechanism_zoo``): ``GaussianMechanism``,
  ``LaplaceMechanism``, ``RandresponseMechanism``, ``PureDP_Mechanism``, Poisson
  subsampling by ``transformer_zoo.AmplificationBySampling(PoissonSampling=True)``,
  composed by ``transformer_zoo.Composition`` (RDP composition) and read with
  ``get_approxDP(delta)`` / ``get_approx_delta(eps)``.  Claim: upper bounds -- the RDP
  curves are the mechanisms' Renyi-DP guarantees and ``converter.rdp_to_approxdp`` is
  "the RDP to approx-DP conversion due to BBGHS'19's Theorem 21" (a theorem, so the
  numbers are guarantees; the library's docstrings call each characterization a DP bound
  and take "the minimum of all of them").  Its composed RDP curve (``get_RDP(alpha)``, the
  sum of the mechanisms' RDP) is reported too (:meth:`AutodpRDPAdapter.compute_quantities`):
  an upper bound on the Renyi divergence.
* ``autodp_kov``: ``dp_acct.DP_acct`` ("the classical DP accountant by Kairouz, Oh,
  Viswanath", heterogeneous composition of (eps, delta)-DP mechanisms, KOV'15), fed one
  ``update_DPlosses(eps, delta)`` per use of a single-constraint mechanism.  It answers
  eps(delta) only (``get_eps``), at delta = 0 too: the library's own path for "asking for
  pure DP" (a zero delta as the integer 0, :func:`_zero`).  Claim: upper bound (its
  docstring: "make use of KOV'15 to calculate the composition", a composition theorem).
* ``autodp_afa``: the analytical Fourier accountant (``transformer_zoo.ComposeAFA``,
  "optimal accounting ... via characteristic function", arXiv 2106.08567): log
  characteristic functions summed and inverted by Gaussian quadrature
  (``converter.phi_to_cdf``).  Claim: estimate -- the inversion is a quadrature with no
  error bound stated.  Poisson-subsampled Gaussian is composed once per neighbouring
  direction (``SubsampleGaussianMechanism(..., neighboring='remove_only'/'add_only')``),
  the larger answer reported, as the class's docstring prescribes.

Conventions: autodp's ``sigma`` and ``b`` are noise scale over sensitivity; randomized
response's ``p`` is the probability of the truth, ``e^eps / (1 + e^eps)`` for an
``eps``-DP pair; a pure ``eps``-DP mechanism goes to the characteristic-function route as
that randomized response (its dominating pair, docs/theory.md, section 1).
"""

from __future__ import annotations

import math
from typing import Any

from ....regions.protocol import LossPair, PairForm
from ..adapters import Claim, Job, Quantities, Series, register
from ..boundary import Numbers
from . import RDP_ORDERS, PeerAdapter, eps_float, noise_of, per_query, pure_eps, single_constraint

__all__ = ["AutodpRDPAdapter", "AutodpKOVAdapter", "AutodpAFAAdapter"]


def _rr_p(eps: float) -> float:
    """The randomized-response ``p`` of autodp (the truth's probability) of an eps-DP pair."""
    return 1.0 / (1.0 + math.exp(-eps))


def _zero(x: float) -> float | int:
    """A zero delta as the integer ``0``, as autodp's pure-DP path asks for it.

    ``DP_acct.get_eps`` tests ``if delta is 0: # asking for pure DP`` (an identity test:
    the float ``0.0`` takes the approximate-DP path instead and returns ``inf``); a user
    asking for pure DP writes ``update_DPlosses(eps, 0)`` and ``get_eps(0)``.
    """
    return 0 if x == 0 else x


class _Autodp(PeerAdapter):
    library = "autodp"
    distribution = "autodp"


class AutodpRDPAdapter(_Autodp):
    """autodp's Mechanism API composed by RDP: Gaussian, subsampled Gaussian, Laplace, pure DP."""

    name = "autodp_rdp"
    series = (
        Series(
            "autodp_rdp", Claim.UPPER, Claim.UPPER, "autodp Composition (RDP)", renyi=Claim.UPPER
        ),
    )
    forms = frozenset({"gaussian", "noise", "finite"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian (Poisson subsampled or not), Laplace without subsampling, pure DP."""
        noise = noise_of(mechanism, pair)
        if noise is not None and (noise.kind == "gaussian" or noise.rate == 1):
            return None
        if pure_eps(mechanism, pair) is not None:
            return None
        return f"autodp's RDP mechanisms do not include {mechanism.describe()}"

    def _mechanism(self, mechanism: Any, pair: LossPair) -> Any:
        from autodp import mechanism_zoo, transformer_zoo

        noise = noise_of(mechanism, pair)
        if noise is None:
            return mechanism_zoo.PureDP_Mechanism(eps=eps_float(mechanism))
        if noise.kind == "laplace":
            return mechanism_zoo.LaplaceMechanism(b=noise.multiplier)
        base = mechanism_zoo.GaussianMechanism(sigma=noise.multiplier)
        if noise.rate == 1:
            return base
        subsample = transformer_zoo.AmplificationBySampling(PoissonSampling=True)
        return subsample(base, float(noise.rate), improved_bound_flag=True)

    def _source(self, mechanism: Any, pair: LossPair) -> str:
        """:meth:`_mechanism` as source text."""
        noise = noise_of(mechanism, pair)
        if noise is None:
            return f"mechanism_zoo.PureDP_Mechanism(eps={eps_float(mechanism)!r})"
        if noise.kind == "laplace":
            return f"mechanism_zoo.LaplaceMechanism(b={noise.multiplier!r})"
        base = f"mechanism_zoo.GaussianMechanism(sigma={noise.multiplier!r})"
        if noise.rate == 1:
            return base
        subsample = "transformer_zoo.AmplificationBySampling(PoissonSampling=True)"
        return f"{subsample}({base}, {float(noise.rate)!r}, improved_bound_flag=True)"

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """``Composition()(mechs, counts)``, then the query (``get_approx_delta`` and so on)."""
        lines = ["from autodp import mechanism_zoo, transformer_zoo", "", "mechs, counts = [], []"]
        for (m, c), p in zip(job.items, job.loss_pairs()):
            if c:
                lines += [f"# {m.describe()} x{c}", f"mechs.append({self._source(m, p)})"]
                lines.append(f"counts.append({c})")
        lines.append("composed = transformer_zoo.Composition()(mechs, counts)")
        call = {"delta": "get_approx_delta", "epsilon": "get_approxDP", "renyi": "get_RDP"}
        return [*lines, f"reported = composed.{call[quantity]}({at!r})"]

    def _composed(self, job: Job) -> Any:
        from autodp import transformer_zoo

        mechs, counts = [], []
        for (m, c), p in zip(job.items, job.loss_pairs()):
            if c:
                mechs.append(self._mechanism(m, p))
                counts.append(c)
        return transformer_zoo.Composition()(mechs, counts)

    def compute(self, job: Job) -> Numbers:
        """Compose with ``transformer_zoo.Composition`` and query the composed mechanism."""
        composed = self._composed(job)
        notes: list[str] = []
        ds = per_query(composed.get_approx_delta, job.eps, "delta at eps", notes)
        es = per_query(composed.get_approxDP, job.deltas, "eps at delta", notes)
        return {self.name: (ds, es, notes)}

    def compute_quantities(self, job: Job) -> Quantities:
        """The composed RDP curve (``get_RDP``) at the job's orders or :data:`RDP_ORDERS`."""
        composed = self._composed(job)
        orders = job.orders or list(RDP_ORDERS)
        return {self.name: {"renyi": [(a, float(composed.get_RDP(a))) for a in orders]}}


class AutodpKOVAdapter(_Autodp):
    """autodp's ``DP_acct``: KOV'15 composition of (eps, delta)-DP mechanisms (eps only)."""

    name = "autodp_kov"
    series = (
        Series(
            "autodp_kov",
            None,
            Claim.UPPER,
            "autodp DP_acct (KOV)",
            quote=(
                'DP_acct: "the classical DP accountant by Kairouz, Oh, Viswanath"; get_eps: '
                "\"make use of KOV'15 to calculate the composition for hetereogeneous "
                'mechanisms", with "if delta is 0: # asking for pure DP"'
            ),
        ),
    )
    forms = frozenset({"finite"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Finite mechanisms with one (eps, delta) constraint."""
        if pair.form is PairForm.FINITE:
            cons = mechanism.to_dict().get("constraints") or []
            if len(cons) == 1:
                return None
        return f"autodp's DP_acct composes single (eps, delta) pairs, not {mechanism.describe()}"

    def compute(self, job: Job) -> Numbers:
        """One ``update_DPlosses(eps, delta)`` per use, then ``get_eps(delta)``."""
        from autodp import dp_acct

        acct = dp_acct.DP_acct()
        for e, d, c in self._losses(job):
            for _ in range(c):
                acct.update_DPlosses(e, d)
        notes: list[str] = []
        es = per_query(lambda d: acct.get_eps(_zero(d)), job.deltas, "eps at delta", notes)
        return {self.name: ([math.nan] * len(job.eps), es, notes)}

    def _losses(self, job: Job) -> list[tuple[float, float | int, int]]:
        """``(eps, delta, count)`` of each item: doubles, a zero delta as the integer 0."""
        out = []
        for (m, c), p in zip(job.items, job.loss_pairs()):
            one = single_constraint(m, p)
            d = float(one[1]) if one is not None else float(m.constraints[0][1].ball(64).mid())
            out.append((eps_float(m), _zero(d), c))
        return out

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """``update_DPlosses`` per use, then ``get_eps``."""
        lines = ["from autodp import dp_acct", "", "acct = dp_acct.DP_acct()"]
        for (m, _), (e, d, c) in zip(job.items, self._losses(job)):
            lines += [f"# {m.describe()} x{c}", f"for _ in range({c}):"]
            lines.append(f"    acct.update_DPlosses({e!r}, {d!r})")
        return [*lines, f"reported = acct.get_eps({_zero(at)!r})"]


class AutodpAFAAdapter(_Autodp):
    """autodp's analytical Fourier accountant (``ComposeAFA``, characteristic functions)."""

    name = "autodp_afa"
    series = (Series("autodp_afa", Claim.ESTIMATE, Claim.ESTIMATE, "autodp ComposeAFA"),)
    forms = frozenset({"gaussian", "noise", "finite"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian (Poisson subsampled or not), Laplace without subsampling, pure DP."""
        return AutodpRDPAdapter.accepts(self, mechanism, pair)  # type: ignore[arg-type]

    def _specs(
        self, mechanism: Any, pair: LossPair, count: int
    ) -> tuple[tuple[str, dict[str, Any]], tuple[str, dict[str, Any]] | None, int]:
        """``(remove-direction spec, add-direction spec or None: the same, coefficient)``.

        A spec is ``(class name in mechanism_zoo, keyword arguments)``.
        """
        noise = noise_of(mechanism, pair)
        off: dict[str, Any] = {"RDP_off": True, "phi_off": False}
        if noise is None:
            return ("RandresponseMechanism", {"p": _rr_p(eps_float(mechanism)), **off}), None, count
        if noise.kind == "laplace":
            return ("LaplaceMechanism", {"b": noise.multiplier, **off}), None, count
        if noise.rate == 1:
            kw = {"sigma": noise.multiplier, "RDP_off": True, "approxDP_off": True}
            return ("GaussianMechanism", {**kw, "phi_off": False}), None, count
        params = {"prob": float(noise.rate), "sigma": noise.multiplier, "coeff": count}
        sub = {"phi_off": False, "RDP_off": True}
        remove = ("SubsampleGaussianMechanism", {"params": params, **sub})
        add = ("SubsampleGaussianMechanism", {"params": params, **sub})
        remove[1]["neighboring"], add[1]["neighboring"] = "remove_only", "add_only"
        return remove, add, 1  # the count is inside the mechanism

    def _directions(self, job: Job) -> tuple[list[Any], list[Any] | None, list[int]]:
        """Specs of every used item: ``(removes, adds or None, coefficients)``."""
        removes, adds, coeffs = [], [], []
        two = False
        for (m, c), p in zip(job.items, job.loss_pairs()):
            if c:
                r, a, k = self._specs(m, p, c)
                two = two or a is not None
                removes.append(r)
                adds.append(a or r)
                coeffs.append(k)
        return removes, (adds if two else None), coeffs

    def compute(self, job: Job) -> Numbers:
        """``ComposeAFA`` per neighbouring direction; the larger answer of the two."""
        from autodp import mechanism_zoo, transformer_zoo

        def build(spec: tuple[str, dict[str, Any]]) -> Any:
            return getattr(mechanism_zoo, spec[0])(**spec[1])

        remove_specs, add_specs, coeffs = self._directions(job)
        removes = [build(x) for x in remove_specs]
        adds = removes if add_specs is None else [build(x) for x in add_specs]
        compose = transformer_zoo.ComposeAFA()
        both = [compose(removes, coeffs)]
        if adds is not removes:
            both.append(compose(adds, coeffs))
        notes: list[str] = []
        ds = per_query(
            lambda e: max(m.get_approx_delta(e) for m in both), job.eps, "delta at eps", notes
        )
        es = per_query(
            lambda d: max(m.get_approxDP(d) for m in both), job.deltas, "eps at delta", notes
        )
        return {self.name: (ds, es, notes)}

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """``ComposeAFA`` of each direction, the larger ``get_approx_delta``/``get_approxDP``."""

        def source(spec: tuple[str, dict[str, Any]]) -> str:
            args = ", ".join(f"{k}={v!r}" for k, v in spec[1].items())
            return f"mechanism_zoo.{spec[0]}({args})"

        remove_specs, add_specs, coeffs = self._directions(job)
        lines = ["from autodp import mechanism_zoo, transformer_zoo", ""]
        lines.append(f"removes = [{', '.join(source(x) for x in remove_specs)}]")
        lines += [f"coeffs = {coeffs!r}", "compose = transformer_zoo.ComposeAFA()"]
        lines.append("both = [compose(removes, coeffs)]")
        if add_specs is not None:
            lines.append(f"adds = [{', '.join(source(x) for x in add_specs)}]")
            lines.append("both.append(compose(adds, coeffs))  # the other neighbouring direction")
        call = "get_approx_delta" if quantity == "delta" else "get_approxDP"
        return [*lines, f"reported = max(m.{call}({at!r}) for m in both)"]


register(AutodpRDPAdapter())
register(AutodpKOVAdapter())
register(AutodpAFAAdapter())
