"""Audit numeric privacy accountants against the exact composition: the comparison.

What is audited and why.  Numeric accountants compose privacy-loss distributions in
floating point on a grid (:mod:`dpcompose_exact.tools.audit.accountants`), and each library
*presents* some of its numbers as upper bounds (pessimistic PLD, RDP, PRV upper bound).
For a mechanism that satisfies several (eps, delta) constraints at once this package knows
the composed privacy curve exactly, so each such claim can be checked: is the reported
delta at eps (or eps at delta) really at least the exact one, and how large is the error?

:func:`audit` hands the exact dominating pair of docs/theory.md, section 1 (a finite
privacy-loss distribution, section 3; :mod:`dpcompose_exact.tools.audit.boundary`) to the
registered adapters (:mod:`~dpcompose_exact.tools.audit.adapters`: the built-in
:mod:`~dpcompose_exact.tools.audit.pld_adapter`, :mod:`~dpcompose_exact.tools.audit.rdp_adapter`
and :mod:`~dpcompose_exact.tools.audit.prv_adapter`, and those of other packages), and
compares the float series they return with the exact values.  An adapter that raises
gives ``nan`` rows noted ``crashed``; a number that is no delta or eps (``nan``,
negative, a delta above 1) has the verdict ``invalid value``
(:attr:`~dpcompose_exact.tools.audit.report.AuditRow.verdict`): neither stops the audit.

The exact curve comes from :func:`dpcompose_exact.engines.results.delta_of_eps` /
:func:`~dpcompose_exact.engines.results.eps_of_delta` (certified decimals; ball arithmetic for
large k).  A reported number is compared with the exact value as a rational: ``sound``
means ``reported >= exact`` (minus ``rtol * exact``, default 0).  A double cannot hold the
exact value: a reported number below it by at most :data:`FLOAT_ULPS` units in the last
place of a double (relative ``4 * 2^-52``) is what a float computation of the exact answer
gives, so it counts as *sound up to float rounding* (``float_rounding`` on the row), unless
``exact_comparison`` is asked for.  The grid values are exact decimals; the libraries
receive the nearest double, which moves the curve by about 1e-16 relatively, far below the
accountants' own errors.  The rows and the report are in
:mod:`dpcompose_exact.tools.audit.report`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

from ... import api
from ...composition import Composition
from ...engines.finiteroutes import Method
from ...engines.results import CurvePoint
from ...errors import BelowLeakError, DPComposeError, InvalidParameterError
from ...numbers.convert import parse_eps
from ...numbers.value import Value
from ...regions.specs import MechanismKind, merge_kinds
from . import adapters as _adapters
from .accountants import (
    AccountantsMissingError,
    available_accountants,
    library_versions,
    missing_message,
)
from .adapters import Adapter, Claim, Job, Series
from .boundary import Numbers
from .report import AuditReport, AuditRow, invalid_value

__all__ = [
    "audit",
    "DEFAULT_DELTAS",
    "DEFAULT_PLD_GRID",
    "DEFAULT_PRV_EPS_ERROR",
    "DEFAULT_PRV_DELTA_ERROR",
    "FLOAT_ULPS",
    "FLOAT_ROUNDING",
]

DEFAULT_DELTAS = ("1e-3", "1e-5", "1e-6")
"""The deltas where eps(delta) is compared by default."""
DEFAULT_PLD_GRID = 1e-4
"""Default ``value_discretization_interval`` of the dp_accounting PLD."""
DEFAULT_PRV_EPS_ERROR = 1e-2
"""Default ``eps_error`` of ``PRVAccountant``."""
DEFAULT_PRV_DELTA_ERROR = 1e-9
"""Default ``delta_error`` of ``PRVAccountant``."""
FLOAT_ULPS = 4
"""Shortfall (in units of 2^-52, relative) that still counts as float rounding."""
FLOAT_ROUNDING = Fraction(FLOAT_ULPS, 2**52)
""":data:`FLOAT_ULPS` as a relative shortfall."""


def _as_fraction(text: str) -> Fraction:
    return Fraction(Decimal(text))


def _compare(
    reported: float, exact: str, upper: bool, rtol: float, strict: bool = False
) -> tuple[float, float, bool | None, bool]:
    """``(abs_error, rel_error, sound, float_rounding)`` of a float against a certified decimal.

    The certified decimal is correct to one unit in its 30th significant digit; a float
    that close to it is treated as equal (a double has 16 digits).  A float below the
    exact value by at most ``FLOAT_ULPS * 2^-52`` relative is ``float_rounding``: sound,
    unless ``strict``.
    """
    if math.isnan(reported):
        return math.nan, math.nan, None, False
    if exact == "inf":
        ok = math.isinf(reported) and reported > 0
        return (0.0 if ok else -math.inf), (0.0 if ok else -1.0), (ok if upper else None), False
    ex = _as_fraction(exact)
    if math.isinf(reported):
        return reported, reported, (reported > 0 if upper else None), False
    rep = Fraction(reported)  # the float, exactly
    diff = rep - ex
    abs_err = float(diff)
    if ex == 0:
        rel = 0.0 if rep == 0 else math.copysign(math.inf, abs_err)
    else:
        rel = float(diff / ex)
    if not upper:
        return abs_err, rel, None, False
    ulp = abs(ex) * Fraction(1, 10**28)  # the certificate's slack (1 ulp at 30 digits)
    slack = -ulp - Fraction(rtol) * abs(ex)
    if diff >= slack:
        return abs_err, rel, True, False
    rounding = diff >= slack - FLOAT_ROUNDING * abs(ex)
    return abs_err, rel, bool(rounding and not strict), bool(rounding)


def _default_eps_grid(
    comp: Composition, points: int = 9, largest_loss: bool = True
) -> tuple[str, ...]:
    """``points`` eps values from 0 to about eps(1e-6), as short exact decimals.

    When eps(1e-6) has no answer (below the leak) the grid ends at the largest loss
    (``largest_loss``) or at 1.
    """
    try:
        top = Decimal(comp.epsilon("1e-6").decimal(12))
    except DPComposeError:
        top = Decimal(comp.constraints[-1][0].decimal(12)) if largest_loss else Decimal(1)
    if top <= 0:
        top = Decimal(1)
    out: list[str] = []
    for i in range(points):
        v = top * i / (points - 1)
        s = "0" if v == 0 else format(Decimal(f"{v:.2g}").normalize(), "f")
        if s not in out:
            out.append(s)
    return tuple(out)


def _exact_eps(comp: Composition, delta: str) -> str:
    try:
        return comp.epsilon(delta).decimal(30)
    except BelowLeakError:
        return "inf"  # delta below the leak: no finite eps


def audit(
    kinds: Sequence[MechanismKind],
    eps_grid: Sequence[str] | None = None,
    deltas: Sequence[str] | None = None,
    accountants: Sequence[str] | None = None,
    pld_grid: float = DEFAULT_PLD_GRID,
    prv_eps_error: float = DEFAULT_PRV_EPS_ERROR,
    prv_delta_error: float = DEFAULT_PRV_DELTA_ERROR,
    rtol: float = 0.0,
    method: Method | str = Method.AUTO,
    strict: bool = False,
    exact_comparison: bool = False,
) -> AuditReport:
    """Audit numeric accountants against the exact composition of ``kinds``.

    Args:
        kinds: mechanism kinds (each satisfies all its constraints; used ``count`` times).
        eps_grid: eps values (exact decimal strings) where delta(eps) is compared;
            default: 9 values from 0 to about eps(1e-6).
        deltas: delta values where eps(delta) is compared (default 1e-3, 1e-5, 1e-6).
        accountants: names of registered adapters (default: all, the built-in
            :data:`~dpcompose_exact.tools.audit.ACCOUNTANTS` first).
        pld_grid: ``value_discretization_interval`` of the dp_accounting PLD.
        prv_eps_error: ``eps_error`` of ``PRVAccountant``.
        prv_delta_error: ``delta_error`` of ``PRVAccountant``.
        rtol: relative slack allowed before an upper bound counts as unsound (default 0).
        method: the :class:`~dpcompose_exact.engines.finiteroutes.Method` of the exact composition
            (``auto``, ``exact``, ``certified``).
        strict: raise :class:`AccountantsMissingError` if any requested accountant's
            library is missing (default: skip it and record why in ``skipped``).
        exact_comparison: count an upper bound below the exact value by only float
            rounding (a few ulps of a double) as unsound too (default: sound up to float
            rounding, flagged ``float_rounding``).

    Returns:
        An :class:`AuditReport`.

    Raises:
        AccountantsMissingError: no requested accountant can run (or ``strict``).
        InvalidParameterError: unknown accountant names, bad grids or mechanisms.
    """
    registered = _adapters.registry()
    failed = _adapters.load_errors()
    if accountants is None:  # every adapter but other projects' (peers: run when named)
        own = (n for n, a in registered.items() if not a.peer)
        accountants = (*own, *(n for n in failed if n not in registered))
    accountants = tuple(accountants)
    unknown = [a for a in accountants if a not in registered and a not in failed]
    if unknown or not accountants:
        raise InvalidParameterError(
            f"unknown accountant(s) {', '.join(map(repr, unknown)) or '(none given)'}; "
            f"choose from {', '.join(registered)}"
        )
    if not (isinstance(pld_grid, (int, float)) and 0 < pld_grid < 1):
        raise InvalidParameterError(f"pld_grid = {pld_grid!r} must be a float in (0, 1)")
    status = available_accountants(accountants)
    skipped = [(a, status[a]) for a in accountants if status[a] is not None]
    run = [a for a in accountants if status[a] is None]
    if not run or (strict and skipped):
        raise AccountantsMissingError(missing_message("the audit", skipped))

    kinds = tuple(kinds)
    merged = merge_kinds(kinds)
    comp = api.compose(
        list(merged),
        method=method,
        closed_forms=False,
    )
    method = comp.method
    grid = tuple(str(e).strip() for e in eps_grid) if eps_grid else _default_eps_grid(comp)
    dgrid = tuple(str(d).strip() for d in deltas) if deltas else DEFAULT_DELTAS
    forms = [parse_eps(e) for e in grid]
    exact_d = [CurvePoint(Value.from_form(f), comp.result.delta(f), 30) for f in forms]
    exact_e = [_exact_eps(comp, d) for d in dgrid]
    exact_delta = tuple(p.delta_decimal for p in exact_d)

    # ---- float boundary: grids and pairs become doubles for the libraries ----
    eps_f = [float(p.epsilon_decimal) for p in exact_d]
    job = Job(
        [(api.mechanism_of(k), k.count) for k in kinds],
        eps_f,
        [float(d) for d in dgrid],
        {"pld_grid": pld_grid, "prv_eps_error": prv_eps_error, "prv_delta_error": prv_delta_error},
    )
    numbers: Numbers = {}
    claims: dict[str, Series] = {}
    for name in run:
        adapter = registered[name]
        refused = [
            why for (m, _), p in zip(job.items, job.loss_pairs()) if (why := adapter.accepts(m, p))
        ]
        if refused:
            skipped.append((name, f"unsupported: {refused[0]}"))
            continue
        claims.update((s.name, s) for s in adapter.series)
        numbers.update(run_adapter(adapter, job))

    rows = _rows(numbers, claims, grid, exact_delta, dgrid, tuple(exact_e), rtol, exact_comparison)
    settings: list[tuple[str, Any]] = []
    for adapter in registered.values():  # registration order: the report is stable
        if adapter.name in run:
            settings += [kv for kv in adapter.settings(job.options) if kv not in settings]
    if rtol:
        settings.append(("rtol", rtol))
    if exact_comparison:
        settings.append(("strict", 1))
    return AuditReport(
        kinds=kinds,
        method=method,
        eps_grid=grid,
        deltas=dgrid,
        exact_delta=exact_delta,
        exact_eps=tuple(exact_e),
        rows=tuple(rows),
        versions=library_versions(run),
        skipped=tuple((a, str(r)) for a, r in skipped),
        settings=tuple(settings),
    )


def run_adapter(adapter: Adapter, job: Job) -> Numbers:
    """Run one adapter; a crash, a timeout or a malformed answer becomes ``nan`` numbers.

    Every series the adapter declares gets ``len(job.eps)`` deltas and
    ``len(job.deltas)`` epsilons; the note of a crash starts with ``crashed:``.
    """
    try:
        got = adapter.run_timed(job)  # the time limit every adapter has
        for s in adapter.series:
            ds, es, _ = got[s.name]
            if len(ds) != len(job.eps) or len(es) != len(job.deltas):
                raise ValueError(
                    f"series {s.name} has {len(ds)} deltas and {len(es)} epsilons for "
                    f"{len(job.eps)} and {len(job.deltas)} queries"
                )
        return {
            s.name: (
                [float(x) for x in got[s.name][0]],
                [float(x) for x in got[s.name][1]],
                list(got[s.name][2]),
            )
            for s in adapter.series
        }
    except Exception as exc:  # noqa: BLE001 - a library failure is a row, not a crash
        why = f"crashed: {type(exc).__name__}: {exc}".splitlines()[0]
        return {
            s.name: ([math.nan] * len(job.eps), [math.nan] * len(job.deltas), [why])
            for s in adapter.series
        }


def _rows(
    numbers: Numbers,
    claims: dict[str, Series],
    grid: tuple[str, ...],
    exact_delta: tuple[str, ...],
    dgrid: tuple[str, ...],
    exact_eps: tuple[str, ...],
    rtol: float,
    strict: bool = False,
) -> list[AuditRow]:
    rows: list[AuditRow] = []
    for series, (ds, es, notes) in numbers.items():
        note = "; ".join(notes)
        for quantity, ats, exacts, reps in (
            ("delta", grid, exact_delta, ds),
            ("epsilon", dgrid, exact_eps, es),
        ):
            spec = claims.get(series)
            if spec is not None and spec.claim(quantity) is None:
                continue  # the library reports no such number
            upper = spec is not None and spec.claim(quantity) is Claim.UPPER
            for at, ex, rep in zip(ats, exacts, reps):
                a, r, s, fr = _compare(rep, ex, upper, rtol, strict)
                why = (note or invalid_value(rep, quantity)) if math.isnan(rep) else ""
                rows.append(AuditRow(series, quantity, at, rep, ex, a, r, upper, s, why, fr))
    return rows
