"""Audit numeric privacy accountants against the exact composition.

What is audited and why.  Numeric accountants compose privacy-loss distributions in
floating point on a grid: ``dp_accounting`` (Google) discretizes the privacy-loss
distribution (PLD) with a pessimistic or optimistic rounding and also offers a Renyi-DP
(RDP) accountant; ``prv_accountant`` (Microsoft) discretizes the privacy random variable
(PRV) and returns a lower bound, an estimate and an upper bound.  Each library *presents*
some of its numbers as upper bounds (pessimistic PLD, RDP, PRV upper bound).  For a
mechanism that satisfies several (eps, delta) constraints at once this package knows the
composed privacy curve exactly, so each such claim can be checked: is the reported delta
at eps (or eps at delta) really at least the exact one, and how large is the error?

The mechanism each library is given is the exact dominating pair of docs/theory.md, section 1
(the leak plus randomized responses, :func:`dpcompose_exact.pld.canonical_pair`): every
mechanism with the given constraints is a post-processing of it, so its composition is the
exact (tight, adaptive) composition.  Following docs/theory.md, section 3, the pair is a finite
privacy-loss distribution: P0-masses at finite losses ``L = ln(P0/P1)`` plus a leak
(loss +inf).  That distribution is handed to

* ``dp_accounting.pld``: ``from_two_probability_mass_functions`` (upper = P0, lower = P1),
  self-composed ``count`` times per kind and composed across kinds
  (``pld_pessimistic`` and ``pld_optimistic``);
* ``dp_accounting.rdp``: the Renyi divergences ``D_a(P0 || P1) = log E_P0[e^{(a-1)L}] / (a-1)``
  of the pair at the library's default orders (computed here at 40 digits and rounded up;
  infinite with a leak), summed over the composition and converted with the library's
  ``compute_delta`` / ``compute_epsilon`` (``rdp``);
* ``prv_accountant``: a discrete :class:`PrivacyRandomVariable` with the pair's atoms and
  the leak as ``pm_inf``, composed by ``PRVAccountant`` (``prv_lower``, ``prv_estimate``,
  ``prv_upper``).

Floats appear only at this boundary (functions whose names end in ``_float`` and the
accountant adapters): the exact masses and losses are printed as certified decimals and
rounded to the nearest double there.  The exact curve comes from
:func:`dpcompose_exact.curves.delta_of_eps` / :func:`~dpcompose_exact.curves.eps_of_delta`
(certified decimals; ball arithmetic for large k).  A reported number is compared with the
exact value as a rational: ``sound`` means ``reported >= exact`` (minus ``rtol * exact``,
default 0).  A double cannot hold the exact value: a reported number below it by at most
:data:`FLOAT_ULPS` units in the last place of a double (relative ``4 * 2^-52``) is what a
float computation of the exact answer gives, so it counts as *sound up to float
rounding* (``float_rounding`` on the row), unless ``exact_comparison`` is asked for.  The
grid values are exact decimals; the libraries receive the nearest double, which moves the
curve by about 1e-16 relatively, far below the accountants' own errors.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from .certified import CertifiedRegion
from .curves import CurvePoint, delta_of_eps, eps_of_delta
from .errors import BelowLeakError, DPComposeError, InvalidParameterError
from .mechanisms import MechanismKind, compose_mechanisms
from .pld import PLD, canonical_pair
from .tradeoff import Region

__all__ = [
    "ACCOUNTANTS",
    "SERIES",
    "UPPER_BOUND_SERIES",
    "AUDIT_EXTRA_HINT",
    "AccountantsMissingError",
    "AuditRow",
    "AuditReport",
    "audit",
    "audit_events",
    "events_to_kinds",
    "available_accountants",
]

ACCOUNTANTS = ("pld_pessimistic", "pld_optimistic", "rdp", "prv")
"""Accountant names accepted by :func:`audit`."""

SERIES = {
    "pld_pessimistic": ("pld_pessimistic",),
    "pld_optimistic": ("pld_optimistic",),
    "rdp": ("rdp",),
    "prv": ("prv_lower", "prv_estimate", "prv_upper"),
}
"""The numbers each accountant reports (one series per number)."""

UPPER_BOUND_SERIES = frozenset({"pld_pessimistic", "rdp", "prv_upper"})
"""Series the libraries present as upper bounds on delta(eps) and eps(delta)."""

LIBRARY = {"pld_pessimistic": "dp_accounting", "pld_optimistic": "dp_accounting"}
LIBRARY.update({"rdp": "dp_accounting", "prv": "prv_accountant"})

AUDIT_EXTRA_HINT = 'pip install ".[audit]"'
DEFAULT_DELTAS = ("1e-3", "1e-5", "1e-6")
DEFAULT_PLD_GRID = 1e-4
DEFAULT_PRV_EPS_ERROR = 1e-2
DEFAULT_PRV_DELTA_ERROR = 1e-9
_DIGITS = 40  # digits of the decimals handed to the float libraries
FLOAT_ULPS = 4
"""Shortfall (in units of 2^-52, relative) that still counts as float rounding."""
FLOAT_ROUNDING = Fraction(FLOAT_ULPS, 2**52)


class AccountantsMissingError(DPComposeError, ImportError):
    """None of the requested accountant libraries is installed."""


@dataclass(frozen=True)
class AuditRow:
    """One number reported by an accountant next to the exact value.

    Attributes:
        series: ``pld_pessimistic``, ``pld_optimistic``, ``rdp``, ``prv_lower``,
            ``prv_estimate`` or ``prv_upper``.
        quantity: ``"delta"`` (delta at eps = ``at``) or ``"epsilon"`` (eps at delta = ``at``).
        at: the grid value (exact decimal string).
        reported: the library's number (a float from the library; ``nan`` if it failed).
        exact: the exact value, a certified decimal string (``"inf"`` when no finite eps).
        abs_error: ``reported - exact`` (signed; ``nan`` if unknown).
        rel_error: ``(reported - exact) / exact`` (signed; 0 when both are 0).
        upper_bound: the library presents this number as an upper bound.
        sound: for upper bounds, ``reported >= exact`` (up to float rounding unless the
            audit is strict); ``None`` for other numbers or failures.
        note: why the number is missing, when it is.
        float_rounding: an upper bound below the exact value by no more than the rounding
            of a double (:data:`FLOAT_ULPS` ulps); ``sound`` says whether that was accepted.
    """

    series: str
    quantity: str
    at: str
    reported: float
    exact: str
    abs_error: float
    rel_error: float
    upper_bound: bool
    sound: bool | None
    note: str = ""
    float_rounding: bool = False

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly row (non-finite floats as strings)."""
        out: dict[str, Any] = {}
        for key in ("series", "quantity", "at"):
            out[key] = getattr(self, key)
        for key in ("reported", "abs_error", "rel_error"):
            v = getattr(self, key)
            out[key] = v if math.isfinite(v) else str(v)
        out.update(exact=self.exact, upper_bound=self.upper_bound, sound=self.sound)
        out["float_rounding"] = self.float_rounding
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class AuditReport:
    """Result of :func:`audit`.

    Attributes:
        kinds: the composed mechanism kinds.
        method: how the exact curve was computed (``"pld"`` exact or ``"certified"``).
        eps_grid: the eps values where delta was compared.
        deltas: the delta values where eps was compared.
        exact_delta: exact delta(eps) along ``eps_grid``.
        exact_eps: exact eps(delta) along ``deltas`` (decimal strings, ``"inf"`` if none).
        rows: every reported number with its error.
        versions: ``(library, version)`` of the libraries used.
        skipped: ``(accountant, reason)`` for accountants that were not run.
        settings: the accountant parameters (grid sizes, error targets).
    """

    kinds: tuple[MechanismKind, ...]
    method: str
    eps_grid: tuple[str, ...]
    deltas: tuple[str, ...]
    exact_delta: tuple[str, ...]
    exact_eps: tuple[str, ...]
    rows: tuple[AuditRow, ...]
    versions: tuple[tuple[str, str], ...]
    skipped: tuple[tuple[str, str], ...] = ()
    settings: tuple[tuple[str, Any], ...] = field(default=())

    @property
    def sound(self) -> bool:
        """Every number presented as an upper bound is one."""
        return not self.unsound_rows()

    def unsound_rows(self) -> list[AuditRow]:
        """The upper bounds that are below the exact value."""
        return [r for r in self.rows if r.sound is False]

    def series(self) -> list[str]:
        """The series present, in a stable order."""
        order = [s for names in SERIES.values() for s in names]
        have = {r.series for r in self.rows}
        return [s for s in order if s in have] + sorted(have - set(order))

    def max_rel_error(self, series: str, quantity: str | None = None) -> float:
        """Largest ``|rel_error|`` of one series (``nan`` when it has no number).

        Numbers whose exact value is 0 (delta beyond the largest loss) or infinite have no
        relative error and are left out; their absolute error is in the rows.
        """
        errs = [
            abs(r.rel_error)
            for r in self.rows
            if r.series == series
            and (quantity is None or r.quantity == quantity)
            and not math.isnan(r.rel_error)
            and r.exact not in ("0", "inf")
        ]
        return max(errs) if errs else math.nan

    def summary(self) -> list[dict[str, Any]]:
        """Per series: max relative error in delta and eps, soundness, count of numbers."""
        out = []
        for s in self.series():
            rows = [r for r in self.rows if r.series == s]
            upper = s in UPPER_BOUND_SERIES
            out.append(
                {
                    "series": s,
                    "upper_bound": upper,
                    "numbers": len(rows),
                    "failed": sum(1 for r in rows if math.isnan(r.reported)),
                    "max_rel_error_delta": self.max_rel_error(s, "delta"),
                    "max_rel_error_epsilon": self.max_rel_error(s, "epsilon"),
                    "below_exact": sum(1 for r in rows if r.abs_error < 0),
                    "float_rounding": sum(1 for r in rows if r.float_rounding),
                    "sound": (all(r.sound is not False for r in rows) if upper else None),
                }
            )
        return out

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly report."""

        def fin(v: float) -> Any:
            return v if math.isfinite(v) else str(v)

        return {
            "mechanisms": [
                {"constraints": [list(c) for c in k.constraints], "count": k.count}
                for k in self.kinds
            ],
            "method": self.method,
            "versions": dict(self.versions),
            "settings": dict(self.settings),
            "skipped": dict(self.skipped),
            "sound": self.sound,
            "exact": {
                "delta": [
                    {"epsilon": e, "delta": d} for e, d in zip(self.eps_grid, self.exact_delta)
                ],
                "epsilon": [
                    {"delta": d, "epsilon": e} for d, e in zip(self.deltas, self.exact_eps)
                ],
            },
            "summary": [
                {k: (fin(v) if isinstance(v, float) else v) for k, v in row.items()}
                for row in self.summary()
            ],
            "rows": [r.as_dict() for r in self.rows],
        }


# ---------------------------------------------------------------------------------------
# which libraries are installed


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


# ---------------------------------------------------------------------------------------
# the exact pair at the float boundary


@dataclass(frozen=True)
class _FloatPair:
    """A dominating pair rounded to doubles (THE FLOAT BOUNDARY).

    ``losses[i]``, ``p0[i]``, ``p1[i]``: loss and masses of finite letter i; ``leak``: the
    P0-mass at loss +inf.  ``cgf(a)`` is ``log sum_i p0_i e^{a l_i}`` from 40-digit decimals.
    """

    losses: tuple[float, ...]
    p0: tuple[float, ...]
    p1: tuple[float, ...]
    leak: float
    _mp_losses: tuple[str, ...]
    _mp_p0: tuple[str, ...]

    def renyi(self, order: float, conditional: bool = False) -> float:
        """``D_order(P0 || P1)`` rounded up to a double (``inf`` with a leak unless conditional).

        With ``conditional`` the pair is restricted to its finite letters and renormalized
        (the PRV library's convention).
        """
        import mpmath

        if self.leak > 0 and not conditional:
            return math.inf
        with mpmath.workdps(_DIGITS):
            a = mpmath.mpf(order)
            total = mpmath.fsum(
                mpmath.mpf(p) * mpmath.exp((a - 1) * mpmath.mpf(x))
                for x, p in zip(self._mp_losses, self._mp_p0)
            )
            if conditional:
                total /= mpmath.fsum(mpmath.mpf(p) for p in self._mp_p0)
            value = mpmath.log(total) / (a - 1)
            out = float(value)
            if mpmath.mpf(out) < value:  # round up: an upper bound stays one
                out = math.nextafter(out, math.inf)
        return max(out, 0.0)


def _float_pair(pld: PLD) -> _FloatPair:
    """Round an exact pair to doubles (the float boundary)."""
    dom = pld.domain
    losses, p0, p1, ml, mp0 = [], [], [], [], []
    for loss, m in pld.masses:
        ls = dom.loss_decimal(loss, _DIGITS)
        ps = dom.decimal(m, _DIGITS)
        ml.append(ls)
        mp0.append(ps)
        losses.append(float(ls))
        p0.append(float(ps))
        p1.append(float(dom.decimal(pld.p1_mass(loss, m), _DIGITS)))
    leak = float(dom.decimal(pld.leak, _DIGITS))
    return _FloatPair(tuple(losses), tuple(p0), tuple(p1), leak, tuple(ml), tuple(mp0))


# ---------------------------------------------------------------------------------------
# accountant adapters (float code)


@dataclass
class _Queries:
    eps: list[float]
    deltas: list[float]


Numbers = dict[str, tuple[list[float], list[float], list[str]]]
"""series -> (delta at each eps, eps at each delta, notes)."""


def _run_pld(
    pairs: list[tuple[_FloatPair, int]], q: _Queries, grid: float, pessimistic: bool
) -> tuple[list[float], list[float], list[str]]:
    pld_mod, _ = _import_dp_accounting()
    total = None
    for pair, count in pairs:
        if count == 0:
            continue
        upper = {i: math.log(p) for i, p in enumerate(pair.p0) if p > 0}
        lower = {i: math.log(p) for i, p in enumerate(pair.p1) if p > 0}
        if pair.leak > 0:
            upper["leak"] = math.log(pair.leak)
        one = pld_mod.from_two_probability_mass_functions(
            lower,
            upper,
            pessimistic_estimate=pessimistic,
            value_discretization_interval=grid,
        )
        many = one.self_compose(count) if count > 1 else one
        total = many if total is None else total.compose(many)
    assert total is not None
    d = [float(total.get_delta_for_epsilon(e)) for e in q.eps]
    e = [float(total.get_epsilon_for_delta(x)) for x in q.deltas]
    return d, e, []


def _run_rdp(
    pairs: list[tuple[_FloatPair, int]], q: _Queries
) -> tuple[list[float], list[float], list[str]]:
    _, rdp_mod = _import_dp_accounting()
    orders = list(rdp_mod.DEFAULT_RDP_ORDERS)
    rdp = [0.0] * len(orders)
    for pair, count in pairs:
        for i, a in enumerate(orders):
            rdp[i] += count * pair.renyi(a)
    d = [float(rdp_mod.compute_delta(orders, rdp, e)[0]) for e in q.eps]
    e = [float(rdp_mod.compute_epsilon(orders, rdp, x)[0]) for x in q.deltas]
    return d, e, []


def _prv_class() -> type:
    prv = _import_prv_accountant()
    import numpy as np

    class ExactPairPRV(prv.PrivacyRandomVariable):
        """Discrete PRV of a finite pair (atoms at the losses; the leak as ``pm_inf``)."""

        def __init__(self, pair: _FloatPair) -> None:
            order = np.argsort(pair.losses)
            finite = sum(pair.p0)
            self.pair = pair
            self.atoms = np.asarray(pair.losses, dtype=float)[order]
            self.weights = np.asarray(pair.p0, dtype=float)[order] / finite
            self.cum = np.concatenate([[0.0], np.cumsum(self.weights)])
            self.cum[-1] = 1.0

        def cdf(self, t: Any) -> Any:
            return self.cum[np.searchsorted(self.atoms, t, side="right")]

        def mean(self) -> float:
            return float(np.dot(self.atoms, self.weights))

        def rdp(self, alpha: float) -> float:
            return self.pair.renyi(float(alpha), conditional=True)

        @property
        def pm_inf(self) -> float:
            return self.pair.leak

    return ExactPairPRV


def _run_prv(
    pairs: list[tuple[_FloatPair, int]], q: _Queries, eps_error: float, delta_error: float
) -> dict[str, tuple[list[float], list[float], list[str]]]:
    prv = _import_prv_accountant()
    cls = _prv_class()
    used = [(p, c) for p, c in pairs if c > 0]
    acc = prv.PRVAccountant(
        prvs=[cls(p) for p, _ in used],
        max_self_compositions=[c for _, c in used],
        eps_error=eps_error,
        delta_error=delta_error,
    )
    counts = [c for _, c in used]
    # compute_delta / compute_epsilon recompose the PRVs at every call; the composition
    # does not depend on the query, so memoize it (the library's code path is unchanged).
    composed = acc.compute_composition(counts)
    acc.compute_composition = lambda n: composed if list(n) == counts else None
    out: dict[str, tuple[list[float], list[float], list[str]]] = {
        s: ([], [], []) for s in SERIES["prv"]
    }
    queries = (
        (0, q.eps, acc.compute_delta, "delta at eps"),
        (1, q.deltas, acc.compute_epsilon, "eps at delta"),
    )
    for column, values, compute, label in queries:
        for v in values:
            try:
                triple = compute(v, counts)
            except (ValueError, RuntimeError, FloatingPointError) as exc:
                triple = (math.nan,) * 3
                for s in SERIES["prv"]:
                    out[s][2].append(f"{label}={v}: {exc}")
            for s, r in zip(SERIES["prv"], triple):
                out[s][column].append(float(r))
    return out


# ---------------------------------------------------------------------------------------
# comparison with the exact values


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


def _default_eps_grid(region: Region | CertifiedRegion, points: int = 9) -> tuple[str, ...]:
    """``points`` eps values from 0 to about eps(1e-6), as short exact decimals."""
    try:
        top = Decimal(eps_of_delta(region, "1e-6", 12).epsilon_decimal)
    except DPComposeError:
        top = Decimal(region.domain.loss_decimal(region.losses[-1], 12))
    if top <= 0:
        top = Decimal(1)
    out: list[str] = []
    for i in range(points):
        v = top * i / (points - 1)
        s = "0" if v == 0 else format(Decimal(f"{v:.2g}").normalize(), "f")
        if s not in out:
            out.append(s)
    return tuple(out)


def _exact_eps(region: Region | CertifiedRegion, delta: str) -> str:
    try:
        return eps_of_delta(region, delta, 30).epsilon_decimal
    except BelowLeakError:
        return "inf"  # delta below the leak: no finite eps


def audit(
    kinds: Sequence[MechanismKind],
    eps_grid: Sequence[str] | None = None,
    deltas: Sequence[str] | None = None,
    accountants: Sequence[str] = ACCOUNTANTS,
    pld_grid: float = DEFAULT_PLD_GRID,
    prv_eps_error: float = DEFAULT_PRV_EPS_ERROR,
    prv_delta_error: float = DEFAULT_PRV_DELTA_ERROR,
    rtol: float = 0.0,
    mode: str = "auto",
    strict: bool = False,
    exact_comparison: bool = False,
) -> AuditReport:
    """Audit numeric accountants against the exact composition of ``kinds``.

    Args:
        kinds: mechanism kinds (each satisfies all its constraints; used ``count`` times).
        eps_grid: eps values (exact decimal strings) where delta(eps) is compared;
            default: 9 values from 0 to about eps(1e-6).
        deltas: delta values where eps(delta) is compared (default 1e-3, 1e-5, 1e-6).
        accountants: subset of :data:`ACCOUNTANTS`.
        pld_grid: ``value_discretization_interval`` of the dp_accounting PLD.
        prv_eps_error: ``eps_error`` of ``PRVAccountant``.
        prv_delta_error: ``delta_error`` of ``PRVAccountant``.
        rtol: relative slack allowed before an upper bound counts as unsound (default 0).
        mode: exact-composition mode (``auto``, ``exact``, ``certified``).
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
    unknown = [a for a in accountants if a not in ACCOUNTANTS]
    if unknown or not accountants:
        raise InvalidParameterError(
            f"unknown accountant(s) {', '.join(map(repr, unknown)) or '(none given)'}; "
            f"choose from {', '.join(ACCOUNTANTS)}"
        )
    if not (isinstance(pld_grid, (int, float)) and 0 < pld_grid < 1):
        raise InvalidParameterError(f"pld_grid = {pld_grid!r} must be a float in (0, 1)")
    status = available_accountants()
    skipped = [(a, status[a]) for a in accountants if status[a] is not None]
    run = [a for a in accountants if status[a] is None]
    if not run or (strict and skipped):
        reasons = "; ".join(dict.fromkeys(str(r) for _, r in skipped))
        raise AccountantsMissingError(
            f"the numeric accountants are not installed: {reasons}. "
            f"Install the audit extra: {AUDIT_EXTRA_HINT}"
        )

    kinds = tuple(kinds)
    region, method = compose_mechanisms(kinds, mode=mode)
    grid = tuple(str(e).strip() for e in eps_grid) if eps_grid else _default_eps_grid(region)
    dgrid = tuple(str(d).strip() for d in deltas) if deltas else DEFAULT_DELTAS
    exact_d: list[CurvePoint] = [delta_of_eps(region, e, 30) for e in grid]
    exact_e = [_exact_eps(region, d) for d in dgrid]
    exact_delta = tuple(p.delta_decimal for p in exact_d)

    # ---- float boundary: grids and pairs become doubles for the libraries ----
    q = _Queries([float(p.epsilon_decimal) for p in exact_d], [float(d) for d in dgrid])
    pairs = [(_float_pair(canonical_pair(k.region())), k.count) for k in kinds]

    numbers: Numbers = {}
    for name in run:
        if name == "pld_pessimistic":
            numbers[name] = _run_pld(pairs, q, pld_grid, True)
        elif name == "pld_optimistic":
            numbers[name] = _run_pld(pairs, q, pld_grid, False)
        elif name == "rdp":
            numbers[name] = _run_rdp(pairs, q)
        else:
            numbers.update(_run_prv(pairs, q, prv_eps_error, prv_delta_error))

    rows = _rows(numbers, grid, exact_delta, dgrid, tuple(exact_e), rtol, exact_comparison)
    libs = sorted({LIBRARY[a] for a in run})
    settings: list[tuple[str, Any]] = []
    if any(a.startswith("pld") for a in run):
        settings.append(("pld_value_discretization_interval", pld_grid))
    if "prv" in run:
        settings += [("prv_eps_error", prv_eps_error), ("prv_delta_error", prv_delta_error)]
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
        versions=tuple((lib, _version(_DISTS[lib])) for lib in libs),
        skipped=tuple((a, str(r)) for a, r in skipped),
        settings=tuple(settings),
    )


def _rows(
    numbers: Numbers,
    grid: tuple[str, ...],
    exact_delta: tuple[str, ...],
    dgrid: tuple[str, ...],
    exact_eps: tuple[str, ...],
    rtol: float,
    strict: bool = False,
) -> list[AuditRow]:
    rows: list[AuditRow] = []
    for series, (ds, es, notes) in numbers.items():
        upper = series in UPPER_BOUND_SERIES
        note = "; ".join(notes)
        for quantity, ats, exacts, reps in (
            ("delta", grid, exact_delta, ds),
            ("epsilon", dgrid, exact_eps, es),
        ):
            for at, ex, rep in zip(ats, exacts, reps):
                a, r, s, fr = _compare(rep, ex, upper, rtol, strict)
                rows.append(
                    AuditRow(
                        series,
                        quantity,
                        at,
                        rep,
                        ex,
                        a,
                        r,
                        upper,
                        s,
                        note if math.isnan(rep) else "",
                        fr,
                    )
                )
    return rows


# ---------------------------------------------------------------------------------------
# dp_accounting events


def _float_text(value: Any, what: str, event: Any) -> str:
    """An event's float parameter as the decimal it was written as (shortest repr)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Fraction)):
        raise InvalidParameterError(f"{type(event).__name__}: {what} = {value!r} is not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidParameterError(f"{type(event).__name__}: {what} = {value!r} is not finite")
    return repr(value) if isinstance(value, float) else str(value)


def _event_kinds(event: Any, times: int, out: list[MechanismKind]) -> None:
    name = type(event).__name__
    if name == "NoOpDpEvent":
        return
    if name == "SelfComposedDpEvent":
        count = event.count
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InvalidParameterError(f"SelfComposedDpEvent: count = {count!r} must be >= 0")
        _event_kinds(event.event, times * count, out)
        return
    if name == "ComposedDpEvent":
        for e in event.events:
            _event_kinds(e, times, out)
        return
    if name == "EpsilonDeltaDpEvent":
        eps = _float_text(event.epsilon, "epsilon", event)
        delta = _float_text(event.delta, "delta", event)
        out.append(MechanismKind(((eps, delta),), times))
        return
    if name == "RandomizedResponseDpEvent":
        p = _as_fraction(_float_text(event.noise_parameter, "noise_parameter", event))
        k = event.num_buckets
        if not 0 < p <= 1 or isinstance(k, bool) or not isinstance(k, int) or k < 2:
            raise InvalidParameterError(
                f"RandomizedResponseDpEvent(noise_parameter={event.noise_parameter!r}, "
                f"num_buckets={k!r}): need 0 < noise_parameter <= 1 and num_buckets >= 2"
            )
        if p == 1:
            out.append(MechanismKind((("0", "0"),), times))
            return
        # Two inputs x != x' (REPLACE_ONE): P(x|x) = 1 - p + p/k, P(x|x') = p/k, other
        # buckets p/k under both.  Trade-off: ln((k(1-p) + p)/p)-DP and total variation 1 - p
        # (the latter is implied when k = 2).
        ratio = (k * (1 - p) + p) / p
        cons = [(f"log({ratio.numerator}/{ratio.denominator})", "0")]
        if k > 2:
            cons.append(("0", f"{(1 - p).numerator}/{(1 - p).denominator}"))
        out.append(MechanismKind(tuple(cons), times))
        return
    raise InvalidParameterError(
        f"unsupported DpEvent {name}: the audit maps EpsilonDeltaDpEvent, "
        "RandomizedResponseDpEvent, SelfComposedDpEvent, ComposedDpEvent and NoOpDpEvent "
        "to mechanisms with (eps, delta) constraints"
    )


def events_to_kinds(event: Any) -> list[MechanismKind]:
    """Convert a dp_accounting ``DpEvent`` into mechanism kinds (equal kinds merged).

    Float parameters are read as the decimal they print as (``0.1`` is 1/10), the value
    the user wrote.  ``RandomizedResponseDpEvent(p, k)`` uses the REPLACE_ONE relation:
    its trade-off is ``ln((k(1-p)+p)/p)``-DP together with total variation ``1 - p``.

    Raises:
        InvalidParameterError: an unsupported event type (named) or bad parameters.
    """
    raw: list[MechanismKind] = []
    _event_kinds(event, 1, raw)
    merged: dict[tuple, int] = {}
    for k in raw:
        merged[k.constraints] = merged.get(k.constraints, 0) + k.count
    kinds = [MechanismKind(c, n) for c, n in merged.items() if n]
    if not kinds:
        raise InvalidParameterError("the DpEvent composes no private mechanism (nothing to audit)")
    return kinds


def audit_events(event: Any, **kwargs: Any) -> AuditReport:
    """:func:`audit` of a dp_accounting ``DpEvent`` (see :func:`events_to_kinds`)."""
    return audit(events_to_kinds(event), **kwargs)
