"""The accountants the audit knows, the libraries behind them, and which are installed.

Numeric accountants compose privacy-loss distributions in floating point on a grid:
``dp_accounting`` (Google) discretizes the privacy-loss distribution (PLD) with a
pessimistic or optimistic rounding and also offers a Renyi-DP (RDP) accountant;
``prv_accountant`` (Microsoft) discretizes the privacy random variable (PRV) and returns a
lower bound, an estimate and an upper bound.  Each library *presents* some of its numbers
as upper bounds (pessimistic PLD, RDP, PRV upper bound): :data:`UPPER_BOUND_SERIES`.

This module names them (:data:`ACCOUNTANTS`, :data:`SERIES`, :data:`LIBRARY`) and imports
the libraries on demand (:func:`available_accountants`); they are optional dependencies
(``pip install "dpcompose-exact[audit]"``, or ``pip install ".[audit]"`` in a checkout).
What the audit checks is in :mod:`dpcompose_exact.tools.audit.compare` (docs/theory.md,
sections 1 and 3).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...errors import MissingDependencyError
from ...optional import install_hint

__all__ = [
    "ACCOUNTANTS",
    "SERIES",
    "UPPER_BOUND_SERIES",
    "LIBRARY",
    "AUDIT_EXTRA_HINT",
    "AccountantsMissingError",
    "available_accountants",
    "library_versions",
]

ACCOUNTANTS = ("pld_pessimistic", "pld_optimistic", "rdp", "prv")
"""Accountant names accepted by :func:`~dpcompose_exact.tools.audit.audit`."""

SERIES = {
    "pld_pessimistic": ("pld_pessimistic",),
    "pld_optimistic": ("pld_optimistic",),
    "rdp": ("rdp",),
    "prv": ("prv_lower", "prv_estimate", "prv_upper"),
}
"""The numbers each accountant reports (one series per number)."""

UPPER_BOUND_SERIES = frozenset({"pld_pessimistic", "rdp", "prv_upper"})
"""Series the libraries present as upper bounds on delta(eps) and eps(delta)."""

LIBRARY = {
    "pld_pessimistic": "dp_accounting",
    "pld_optimistic": "dp_accounting",
    "rdp": "dp_accounting",
    "prv": "prv_accountant",
}
"""The library each accountant comes from."""

AUDIT_EXTRA_HINT = install_hint("audit")
"""How to install the accountants (the ``audit`` extra)."""


class AccountantsMissingError(MissingDependencyError):
    """None of the requested accountant libraries is installed (the ``audit`` extra)."""


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"


def _import_dp_accounting() -> Any:
    import dp_accounting  # noqa: F401
    from dp_accounting.pld import privacy_loss_distribution
    from dp_accounting.rdp import rdp_privacy_accountant

    return privacy_loss_distribution, rdp_privacy_accountant


def _import_prv_accountant() -> Any:
    import prv_accountant

    return prv_accountant


_IMPORTERS: dict[str, Callable[[], Any]] = {
    "dp_accounting": _import_dp_accounting,
    "prv_accountant": _import_prv_accountant,
}
_DISTS = {"dp_accounting": "dp-accounting", "prv_accountant": "prv-accountant"}


def available_accountants() -> dict[str, str | None]:
    """``{accountant: None}`` when importable, else ``{accountant: reason}``."""
    status: dict[str, str | None] = {}
    cache: dict[str, str | None] = {}
    for name in ACCOUNTANTS:
        lib = LIBRARY[name]
        if lib not in cache:
            try:
                _IMPORTERS[lib]()
                cache[lib] = None
            except ImportError as exc:
                cache[lib] = (
                    f"{_DISTS[lib]} is not installed ({exc}); install it with "
                    f"{AUDIT_EXTRA_HINT} or pip install {_DISTS[lib]}"
                )
        status[name] = cache[lib]
    return status


def library_versions(accountants: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``(library, installed version)`` of the libraries behind ``accountants``, sorted."""
    libs = sorted({LIBRARY[a] for a in accountants})
    return tuple((lib, _version(_DISTS[lib])) for lib in libs)
