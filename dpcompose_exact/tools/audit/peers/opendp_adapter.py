"""Adapters for OpenDP's privacy maps (``opendp_zcdp`` and ``opendp_pure``).

OpenDP (``pip install opendp``) attaches to every measurement a privacy map that "returns
an upper bound on the privacy loss" for an input distance (each constructor links its
proof document: ``make_gaussian``, ``make_laplace``, ``make_randomized_response``); the
combinators keep that meaning (``make_composition``: "the composition is the linear sum
of the privacy usage of each query").  Claim: upper bounds, for every number of both
adapters.

* ``opendp_zcdp``: each mechanism as a zero-concentrated-DP measurement (Gaussian natively:
  ``make_gaussian(atom_domain(float), absolute_distance(float), scale)``; Laplace, pure DP
  and randomized response cast by ``make_pureDP_to_zCDP``), ``count`` copies composed by
  ``make_composition``, cast by ``make_zCDP_to_approxDP``; the map at the sensitivity is a
  ``PrivacyProfile`` whose ``delta(eps)`` and ``epsilon(delta)`` are the numbers.  The
  composition's rho (its zCDP map) is reported as the RDP curve ``rho * alpha`` that
  rho-zCDP means (an upper bound on the Renyi divergence at every order).
* ``opendp_pure``: Laplace, pure DP and randomized response as pure-DP (``MaxDivergence``)
  measurements composed by ``make_composition``; the map is one eps, reported as
  eps(delta) for every delta (pure DP); no delta(eps).

Conventions: ``make_gaussian``'s ``scale`` is the standard deviation and
``make_laplace``'s the Laplace scale ``b``, with the input distance (``d_in``) the
sensitivity; randomized response is ``make_randomized_response([True, False], prob)`` with
``prob = r / (1 + r)`` the probability of the truth for an ``eps = log r`` pair (OpenDP
computes its eps itself); a pure ``eps``-DP mechanism with no such form is the Laplace
measurement with ``scale = 1 / eps`` at ``d_in = 1`` (its map is eps).  Every kind of one
composition must share OpenDP's input domain (``make_composition`` requires it):
randomized response next to noise is refused by the library (a crashed row).
Poisson subsampling has no OpenDP combinator (unsupported).
"""

from __future__ import annotations

import math
from typing import Any

from ....regions.protocol import LossPair
from ..adapters import Claim, Job, Quantities, Series, register
from ..boundary import Numbers
from . import (
    RDP_ORDERS,
    LibraryUnsupported,
    PeerAdapter,
    eps_float,
    log_ratio,
    noise_of,
    per_query,
    pure_eps,
)

__all__ = ["OpenDPZCDPAdapter", "OpenDPPureAdapter"]


def _prelude() -> Any:
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


_SPACE = "(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))"


def _spec(mechanism: Any, pair: LossPair) -> tuple[str, float, Any, str]:
    """``(constructor, parameter, d_in, measure)`` of one mechanism; measure ``zcdp``/``pure``.

    The constructor is ``make_gaussian`` or ``make_laplace`` (parameter: the scale, on the
    float space) or ``make_randomized_response`` (parameter: ``prob``).
    """
    noise = noise_of(mechanism, pair)
    if noise is not None:
        d_in = float(noise.sensitivity)
        if noise.kind == "gaussian":
            return "make_gaussian", float(noise.scale), d_in, "zcdp"
        return "make_laplace", float(noise.scale), d_in, "pure"
    r = log_ratio(mechanism)
    if r is not None:
        return "make_randomized_response", float(r / (1 + r)), 1, "pure"
    return "make_laplace", 1.0 / eps_float(mechanism), 1.0, "pure"


def _measurement(dp: Any, mechanism: Any, pair: LossPair) -> tuple[Any, Any, str]:
    """``(measurement, d_in, measure)`` of one mechanism (:func:`_spec`)."""
    ctor, x, d_in, measure = _spec(mechanism, pair)
    if ctor == "make_randomized_response":
        return dp.m.make_randomized_response([True, False], prob=x), d_in, measure
    space = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))
    return getattr(dp.m, ctor)(*space, scale=x), d_in, measure


def _composed_source(job: Job, zcdp: bool) -> list[str]:
    """Source lines building ``composed`` and ``d_in`` as the adapters do."""
    lines = ["import opendp.prelude as dp", "", 'dp.enable_features("contrib")']
    lines += [f"space = {_SPACE}", "parts, d_ins = [], set()"]
    for (m, c), p in zip(job.items, job.loss_pairs()):
        ctor, x, d_in, measure = _spec(m, p)
        if ctor == "make_randomized_response":
            expr = f"dp.m.make_randomized_response([True, False], prob={x!r})"
        else:
            expr = f"dp.m.{ctor}(*space, scale={x!r})"
        if zcdp and measure == "pure":
            expr = f"dp.c.make_pureDP_to_zCDP({expr})"
        lines += [f"# {m.describe()} x{c}", f"parts += [{expr}] * {c}", f"d_ins.add({d_in!r})"]
    lines += ["composed = dp.c.make_composition(parts)", "d_in = d_ins.pop()"]
    return lines


def _accepts_pure(mechanism: Any, pair: LossPair) -> bool:
    noise = noise_of(mechanism, pair)
    if noise is not None:
        return noise.rate == 1 and noise.kind == "laplace"
    return pure_eps(mechanism, pair) is not None


class _OpenDP(PeerAdapter):
    library = "opendp"
    distribution = "opendp"

    def load(self) -> Any:
        """Import OpenDP with its ``contrib`` features."""
        return _prelude()


class OpenDPZCDPAdapter(_OpenDP):
    """OpenDP: zCDP composition, then ``make_zCDP_to_approxDP`` (upper bounds)."""

    name = "opendp_zcdp"
    series = (
        Series(
            "opendp_zcdp", Claim.UPPER, Claim.UPPER, "OpenDP zCDP privacy map", renyi=Claim.UPPER
        ),
    )
    forms = frozenset({"gaussian", "noise", "finite"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian and Laplace noise without subsampling, pure DP, randomized response."""
        noise = noise_of(mechanism, pair)
        if (noise is not None and noise.rate == 1) or _accepts_pure(mechanism, pair):
            return None
        return f"OpenDP has no measurement for {mechanism.describe()}"

    def _composed(self, job: Job) -> tuple[Any, Any]:
        """``(composed zCDP measurement, d_in)``."""
        dp = _prelude()
        parts, d_ins = [], set()
        for (m, c), p in zip(job.items, job.loss_pairs()):
            meas, d_in, measure = _measurement(dp, m, p)
            if measure == "pure":
                meas = dp.c.make_pureDP_to_zCDP(meas)
            parts += [meas] * c
            d_ins.add(d_in)
        if len(d_ins) > 1:
            raise ValueError("the kinds have different sensitivities; OpenDP maps one d_in")
        return _composition(dp, parts), d_ins.pop()

    def compute(self, job: Job) -> Numbers:
        """The composed measurement's privacy profile at the sensitivity."""
        dp = _prelude()
        composed, d_in = self._composed(job)
        profile = dp.c.make_zCDP_to_approxDP(composed).map(d_in)
        notes: list[str] = []
        ds = per_query(profile.delta, job.eps, "delta at eps", notes)
        es = per_query(profile.epsilon, job.deltas, "eps at delta", notes)
        return {self.name: (ds, es, notes)}

    def compute_quantities(self, job: Job) -> Quantities:
        """The RDP curve of the composition's rho: ``rho * alpha`` (rho-zCDP, its definition)."""
        composed, d_in = self._composed(job)
        rho = float(composed.map(d_in))
        orders = job.orders or list(RDP_ORDERS)
        return {self.name: {"renyi": [(a, rho * a) for a in orders]}}

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """The composition, then its privacy profile's ``delta``/``epsilon`` or ``rho * alpha``."""
        lines = _composed_source(job, zcdp=True)
        if quantity == "renyi":
            return [*lines, f"reported = float(composed.map(d_in)) * {at!r}  # rho-zCDP"]
        call = "delta" if quantity == "delta" else "epsilon"
        profile = "dp.c.make_zCDP_to_approxDP(composed).map(d_in)"
        return [*lines, f"reported = {profile}.{call}({at!r})"]


def _composition(dp: Any, parts: list[Any]) -> Any:
    """``dp.c.make_composition(parts)``, refusing mixed input domains as unsupported.

    Measurements on different input domains raise
    :class:`~dpcompose_exact.tools.audit.peers.LibraryUnsupported` (OpenDP's own words).

    OpenDP composes measurements of one input domain only: ``make_composition`` raises
    ``DomainMismatch("All input domains must be the same")`` when, for instance, Laplace
    noise (on floats) meets randomized response (on booleans).  That is what the
    library supports, not a failure of it: the case is ``unsupported``, with its words.
    """
    try:
        return dp.c.make_composition(parts)
    except Exception as exc:  # noqa: BLE001 - only the domain mismatch is re-labelled
        if getattr(exc, "variant", "") == "DomainMismatch":
            domains = sorted({str(m.input_domain) for m in parts})
            raise LibraryUnsupported(
                f"OpenDP make_composition: {getattr(exc, 'message', exc)!r} "
                f"(input domains {', '.join(domains)})"
            ) from exc
        raise


class OpenDPPureAdapter(_OpenDP):
    """OpenDP: pure-DP composition (``MaxDivergence``), eps for every delta."""

    name = "opendp_pure"
    series = (Series("opendp_pure", None, Claim.UPPER, "OpenDP pure-DP privacy map"),)
    forms = frozenset({"noise", "finite"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Laplace noise without subsampling, pure DP, randomized response."""
        if _accepts_pure(mechanism, pair):
            return None
        return f"OpenDP has no pure-DP measurement for {mechanism.describe()}"

    def compute(self, job: Job) -> Numbers:
        """The composed pure-DP measurement's eps at the sensitivity, for every delta."""
        dp = _prelude()
        parts, d_ins = [], set()
        for (m, c), p in zip(job.items, job.loss_pairs()):
            meas, d_in, _ = _measurement(dp, m, p)
            parts += [meas] * c
            d_ins.add(d_in)
        if len(d_ins) > 1:
            raise ValueError("the kinds have different sensitivities; OpenDP maps one d_in")
        eps = float(_composition(dp, parts).map(d_ins.pop()))
        es = [eps for _ in job.deltas]
        return {self.name: ([math.nan] * len(job.eps), es, [])}

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """The pure-DP composition's eps (the same for every delta)."""
        lines = _composed_source(job, zcdp=False)
        return [*lines, f"reported = composed.map(d_in)  # pure DP: eps at every delta ({at!r})"]


register(OpenDPZCDPAdapter())
register(OpenDPPureAdapter())
