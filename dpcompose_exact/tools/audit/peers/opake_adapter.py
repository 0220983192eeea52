"""Adapter for opake-accounting (``opake``): PLD accounting in Rust.

``opake.accounting`` (``pip install opake-accounting``) "uses Google's PLD accounting via
the opake-accounting Rust crate"; a process's ``epsilon_at(delta)`` is documented as the
"smallest eps achieving (eps, delta)-DP" and ``delta_at(eps)`` as the "smallest delta
achieving (eps, delta)-DP" which "always returns at least infinity_mass ... the true
delta may be smaller than what is reported"; its discretization "smaller values give
tighter bounds".  Claim: upper bounds for both (the numbers are presented as the
guarantee, bounds that tighten with the grid); ``beta_at(alpha)`` ("type-II error at a
given type-I error") of the same PLD is reported as ``beta``, a lower bound.

Mechanisms, through the Rust extension module itself
(``opake/api/accounting/core/opake_accounting.abi3.so``, loaded from the installed wheel
by :func:`native`): ``eps_delta_pld(eps, delta, config)`` for a single (eps, delta)
constraint (pure DP and randomized response as ``(eps, 0)``), ``gaussian_pld(
noise_multiplier, config)`` ("the PLD for a Gaussian mechanism with sensitivity 1") and
``poisson_pld(base, rate)`` ("plain Poisson subsampling"), composed by ``self_compose``
and ``compose``, with the extension's default ``DiscretizationConfig()`` (grid 1e-4).

Why the extension and not ``import opake.accounting``: on Python 3.11 the Python package
does not import (``TypeError: __weakref__ slot disallowed: either we already got one, or
__itemsize__ != 0``, raised by ``dataclasses`` for a ``slots=True, weakref_slot=True``
dataclass whose base already has a ``__weakref__`` slot; 3.12.1 fails too, 3.13.0 imports
it), although the wheel says ``Requires-Python: >=3.11, <3.14`` and lists "Programming
Language :: Python :: 3.11".  That failure is the library's
(:mod:`~dpcompose_exact.tools.audit.failures`, ``opake-import``); its extension module
imports and is what the Python package wraps ("Rust computes PLDs; Python owns
composition and dispatch", the stub's docstring).
"""

from __future__ import annotations

from typing import Any

from ....regions.protocol import LossPair, PairForm
from ..adapters import Claim, Job, Quantities, Series, register
from ..boundary import Numbers
from . import PeerAdapter, eps_float, noise_of, per_query

__all__ = ["OpakeAdapter", "native"]


class OpakeAdapter(PeerAdapter):
    """opake-accounting's PLD (upper bounds)."""

    name = "opake"
    library = "opake_accounting"  # the extension module (see the module docstring)
    distribution = "opake-accounting"
    series = (Series("opake", Claim.UPPER, Claim.UPPER, "opake.accounting PLD", beta=Claim.LOWER),)
    forms = frozenset({"gaussian", "noise", "finite"})

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian noise (Poisson subsampled or not) and single (eps, delta) constraints."""
        noise = noise_of(mechanism, pair)
        if noise is not None and noise.kind == "gaussian":
            return None
        cons = mechanism.to_dict().get("constraints") or []
        if pair.form is PairForm.FINITE and len(cons) == 1:
            return None
        return f"opake-accounting has no mechanism for {mechanism.describe()}"

    def compute(self, job: Job) -> Numbers:
        """The composed PLD's ``delta_at`` and ``epsilon_at``."""
        total = self._pld(job)
        notes: list[str] = []
        ds = per_query(total.delta_at, job.eps, "delta at eps", notes)
        es = per_query(total.epsilon_at, job.deltas, "eps at delta", notes)
        return {self.name: (ds, es, notes)}

    def compute_quantities(self, job: Job) -> Quantities:
        """``beta_at(alpha)`` of the composed PLD at the job's alphas (or 1e-6 ... 1e-1)."""
        total = self._pld(job)
        alphas = job.alphas or [1e-6, 1e-4, 1e-3, 1e-2, 1e-1]
        return {self.name: {"beta": [(a, float(total.beta_at(a))) for a in alphas]}}

    def load(self) -> Any:
        """The extension module (:func:`native`)."""
        return native()

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """The composed PLD as :meth:`_pld` builds it, then the query (``delta_at`` and so on)."""
        lines = [
            "import importlib.util, pathlib, sysconfig",
            "",
            "# opake.accounting does not import on Python 3.11: load its extension module",
            "so = pathlib.Path(sysconfig.get_paths()['purelib'], " + repr(_NATIVE) + ")",
            "spec = importlib.util.spec_from_file_location('opake_accounting', so)",
            "native = importlib.util.module_from_spec(spec)",
            "spec.loader.exec_module(native)",
            "",
            "config = native.DiscretizationConfig()",
            "total = None",
        ]
        for (m, c), p in zip(job.items, job.loss_pairs()):
            if not c:
                continue
            lines.append(f"# {m.describe()} x{c}")
            noise = noise_of(m, p)
            if noise is not None:
                lines.append(f"one = native.gaussian_pld({noise.multiplier!r}, config)")
                if noise.rate != 1:
                    lines.append(f"one = native.poisson_pld(one, {float(noise.rate)!r})")
            else:
                delta = float(m.constraints[0][1].ball(64).mid())
                lines.append(f"one = native.eps_delta_pld({eps_float(m)!r}, {delta!r}, config)")
            lines.append(f"many = one.self_compose({c})" if c > 1 else "many = one")
            lines.append("total = many if total is None else total.compose(many)")
        call = {"delta": "delta_at", "epsilon": "epsilon_at", "beta": "beta_at"}[quantity]
        return [*lines, f"reported = total.{call}({at!r})"]

    def _pld(self, job: Job) -> Any:
        mod = native()
        config = mod.DiscretizationConfig()
        total = None
        for (m, c), p in zip(job.items, job.loss_pairs()):
            if not c:
                continue
            noise = noise_of(m, p)
            if noise is not None:
                one = mod.gaussian_pld(noise.multiplier, config)
                if noise.rate != 1:
                    one = mod.poisson_pld(one, float(noise.rate))
            else:
                delta = float(m.constraints[0][1].ball(64).mid())
                one = mod.eps_delta_pld(eps_float(m), delta, config)
            many = one.self_compose(c) if c > 1 else one
            total = many if total is None else total.compose(many)
        assert total is not None
        return total


_NATIVE = "opake/api/accounting/core/opake_accounting.abi3.so"
"""The extension module's path in the installed wheel (its RECORD lists it)."""


def native() -> Any:
    """opake-accounting's Rust extension module, loaded from its file in the wheel.

    Raises:
        ImportError: the distribution or its extension file is missing.
    """
    import importlib.util
    import sys
    from importlib.metadata import PackageNotFoundError, files

    if "opake_accounting" in sys.modules:
        return sys.modules["opake_accounting"]
    try:
        found = [f for f in files("opake-accounting") or () if str(f) == _NATIVE]
    except PackageNotFoundError as exc:
        raise ImportError("opake-accounting is not installed") from exc
    if not found:
        raise ImportError(f"opake-accounting has no {_NATIVE}")
    spec = importlib.util.spec_from_file_location("opake_accounting", found[0].locate())
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {found[0].locate()}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["opake_accounting"] = module
    return module


register(OpakeAdapter())
