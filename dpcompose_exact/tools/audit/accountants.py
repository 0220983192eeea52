"""The accountants the audit knows, the libraries behind them, and which are installed.

Numeric accountants compose privacy-loss distributions in floating point on a grid:
``dp_accounting`` (Google) discretizes the privacy-loss distribution (PLD) with a
pessimistic or optimistic rounding and also offers a Renyi-DP (RDP) accountant;
``prv_accountant`` (Microsoft) discretizes the privacy random variable (PRV) and returns a
lower bound, an estimate and an upper bound.  Each library *presents* some of its numbers
as upper bounds (pessimistic PLD, RDP, PRV upper bound): :data:`UPPER_BOUND_SERIES`.

Every accountant is an :class:`~dpcompose_exact.tools.audit.adapters.Adapter` in the
registry of :mod:`dpcompose_exact.tools.audit.adapters`; the names here
(:data:`ACCOUNTANTS`, :data:`SERIES`, :data:`UPPER_BOUND_SERIES`, :data:`LIBRARY`) are
derived from the built-in adapters.  The libraries are imported on demand
(:func:`available_accountants`); they are optional dependencies
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
    "missing_message",
    "available_accountants",
    "library_versions",
]

AUDIT_EXTRA_HINT = install_hint("audit")
"""How to install the accountants (the ``audit`` extra)."""


class AccountantsMissingError(MissingDependencyError):
    """None of the requested accountant libraries is installed (the ``audit`` extra)."""


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
"""The built-in adapters import their libraries through these (patch them in tests)."""


def _derive() -> tuple[tuple[str, ...], dict[str, tuple[str, ...]], frozenset[str], dict[str, str]]:
    from .adapters import Claim, builtin_registry

    reg = builtin_registry()
    series = {n: tuple(s.name for s in a.series) for n, a in reg.items()}
    upper = frozenset(
        s.name for a in reg.values() for s in a.series if Claim.UPPER in (s.delta, s.epsilon)
    )
    return tuple(reg), series, upper, {n: a.library for n, a in reg.items()}


ACCOUNTANTS, SERIES, UPPER_BOUND_SERIES, LIBRARY = _derive()
# ACCOUNTANTS: the built-in accountant names (pld_pessimistic, pld_optimistic, rdp, prv);
# SERIES: the numbers each reports (one series per number); UPPER_BOUND_SERIES: the series
# the libraries present as upper bounds; LIBRARY: the library each comes from.  Adapters of
# other packages (entry points) are in adapters.registry(), not here.


def available_accountants(names: Sequence[str] | None = None) -> dict[str, str | None]:
    """``{accountant: None}`` when importable, else ``{accountant: reason}``.

    ``names`` defaults to every registered accountant (the built-in ones and those of
    entry points; an entry point that failed to load is listed with its reason).
    """
    from .adapters import load_errors, registry

    reg = registry()
    errors = load_errors()
    status: dict[str, str | None] = {}
    cache: dict[str, str | None] = {}
    for name in names if names is not None else (*reg, *errors):
        if name not in reg:
            status[name] = errors.get(name, f"no accountant named {name!r} is registered")
            continue
        adapter = reg[name]
        if adapter.library not in cache:
            cache[adapter.library] = adapter.unavailable()
        status[name] = cache[adapter.library]
    return status


def missing_message(feature: str, skipped: Sequence[tuple[str, str]]) -> str:
    """One short line: which libraries ``feature`` needs, and the extra, named once.

    Args:
        feature: what needs the accountants (``"the audit"``).
        skipped: ``(accountant, reason)`` of the accountants that cannot run.

    Returns:
        ``"<feature> needs A and B, which are not installed: pip install ..."``, with the
        reasons that are not a missing library appended.

    >>> missing_message("the audit", [("rdp", "dp-accounting is not installed (x); ...")])
    'the audit needs dp-accounting, which is not installed: pip install "dpcompose-exact[audit]" (in a source checkout: pip install ".[audit]")'
    """  # noqa: E501
    from .adapters import registry

    reg = registry()
    missing: dict[str, str] = {}  # distribution -> install hint
    others: list[str] = []
    for name, reason in skipped:
        adapter = reg.get(name)
        if adapter is not None and reason.startswith(f"{adapter.distribution} is not installed"):
            missing[adapter.distribution] = adapter.install_hint or AUDIT_EXTRA_HINT
        else:
            others.append(str(reason))
    parts = []
    if missing:
        names = list(missing)
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        verb = "is" if len(names) == 1 else "are"
        hints = "; ".join(dict.fromkeys(missing.values()))
        parts.append(f"{feature} needs {listed}, which {verb} not installed: {hints}")
    else:
        parts.append(f"{feature} has no accountant to run")
    return "; ".join(parts + list(dict.fromkeys(others)))


def library_versions(accountants: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``(library, installed version)`` of the libraries behind ``accountants``, sorted."""
    from .adapters import registry

    reg = registry()
    libs = {reg[a].library: reg[a].version() for a in accountants if a in reg}
    return tuple(sorted(libs.items()))
