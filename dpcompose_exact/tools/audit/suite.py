"""Fixed suites of audit cases: every installed adapter on every case, as a verdict matrix.

:func:`audit_suite` runs each registered adapter
(:mod:`~dpcompose_exact.tools.audit.adapters`) on each case of a suite (:data:`SUITES`:
``quick``, five cases for CI; ``standard``, the published conformance matrix of
docs/conformance.md: plain and Poisson-subsampled Gaussian and Laplace noise at DP-SGD
scale, randomized response and pure DP self-composed, multi-constraint mechanisms and
mixtures, each asked at several eps and delta including delta = 0 and eps near 0 and far
in the tail) and compares every number it reports with the certified reference of
:class:`~dpcompose_exact.tools.audit.references.References`: exact decimals where the
value is exact, a certified two-sided enclosure ``[lower, upper]`` otherwise, for
delta(eps), eps(delta), the Renyi divergence at each order the library reports, the GDP
``mu`` and ``beta(alpha)``.  Noise goes to the libraries natively (dp_accounting's
``from_gaussian_mechanism`` and ``RdpAccountant`` events, prv_accountant's mechanisms),
finite mechanisms as their exact dominating pairs rounded to doubles.

The verdicts (:func:`judge`, docs/theory.md, section 3 for the curve): a number the library
presents as a guarantee (an upper bound on delta, eps, a Renyi divergence or ``mu``; a
lower bound on ``beta``) on the wrong side of the enclosure by more than float rounding
is ``UNSOUND`` (with its relative error: negative, a shortfall, for upper bounds); by
float rounding only (:data:`~dpcompose_exact.tools.audit.compare.FLOAT_ULPS` units of
2^-52, relative) ``sound up to float rounding``; on the right side of both ends
``sound``; between the ends (or without a certified reference) ``undecided``.  Other
verdicts: ``not checked`` (an estimate, or a bound in the other direction),
``unsupported`` (the adapter does not take the case's mechanisms), ``crashed`` (the
library failed to import, raised or passed an adapter's time limit), ``invalid value``
(``nan``, a negative value, a delta or beta above 1, a point where a delta(eps) or
eps(delta) curve rises: :func:`non_monotone`).  A series reports only the quantities it
has a claim for (:meth:`~dpcompose_exact.tools.audit.adapters.Series.claim` None: no
rows).

The cases run on the sweep executor (:func:`dpcompose_exact.tools.sweeps.executor.run_tasks`:
in this process, on a local Dask cluster or on ``scheduler``), one task per case, one
store cell per (case, adapter): with a ``store`` file an interrupted suite resumes.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from decimal import Decimal
from typing import Any

from ...errors import InvalidParameterError
from .adapters import Adapter, Claim, Job, registry
from .compare import (
    DEFAULT_PLD_GRID,
    DEFAULT_PRV_DELTA_ERROR,
    DEFAULT_PRV_EPS_ERROR,
    _compare,
    run_adapter,
)
from .references import References
from .report import invalid_value

__all__ = [
    "SuiteCase",
    "SuiteRow",
    "SuiteReport",
    "SUITES",
    "VERDICTS",
    "JSON_ROW_KEYS",
    "DEFAULT_ORDERS",
    "DEFAULT_ALPHAS",
    "SEVERITIES",
    "ZERO_LOWER_END",
    "MATERIAL",
    "FLOAT_ACCUMULATION",
    "severity",
    "FAMILIES",
    "family_of",
    "crash_note",
    "audit_suite",
    "judge",
    "non_monotone",
    "rising_from",
    "case_rows",
    "run_suite_task",
]

VERDICTS = (
    "UNSOUND",
    "crashed",
    "invalid value",
    "undecided",
    "sound up to float rounding",
    "sound",
    "not checked",
    "unsupported",
)
"""The verdicts, the worst first (a matrix cell shows the worst of its rows)."""

JSON_ROW_KEYS = (
    "accountant",
    "library",
    "version",
    "case",
    "quantity",
    "at",
    "reported",
    "exact_lower",
    "exact_upper",
    "claim",
    "verdict",
    "relative_error",
    "severity",
)
"""The keys of a JSON row of the suite, in order."""

MATERIAL = 1e-6
"""A guarantee on the wrong side by more than this (relative) is ``material``."""
FLOAT_ACCUMULATION = 1e-10
"""Up to this (relative), beyond float rounding, the wrong side is ``float accumulation``:
the rounding errors of many float operations (a composition of hundreds of steps), not an
error of method (about 4.5e5 ulps of a double)."""

SEVERITIES = ("material", "small", "float accumulation", "float rounding", "")
"""Grades of a row, the worst first: an ``UNSOUND`` row is ``material`` (relative error
beyond :data:`MATERIAL`), ``small`` (beyond :data:`FLOAT_ACCUMULATION`) or ``float
accumulation`` (beyond the rounding of one double but within :data:`FLOAT_ACCUMULATION`);
a ``sound up to float rounding`` row is ``float rounding``; every other row ``""``."""


def severity(verdict: str, relative_error: float) -> str:
    """The grade (:data:`SEVERITIES`) of a row with ``verdict`` and ``relative_error``.

    The size is ``|relative_error|``: the sign only says which side (for an upper-bound
    claim a shortfall is negative; for a lower-bound claim, judged as its mirror image,
    a number too high is positive).  An ``UNSOUND`` row without a finite relative error
    (the truth is 0 or infinite) is ``material``.
    """
    if verdict == "sound up to float rounding":
        return "float rounding"
    if verdict != "UNSOUND":
        return ""
    size = abs(relative_error)
    if not math.isfinite(size) or size > MATERIAL:
        return "material"
    return "small" if size > FLOAT_ACCUMULATION else "float accumulation"


ZERO_LOWER_END = (
    "not checked for a shortfall: the certified lower end is 0 (a tiny value at a tiny "
    "rate), so only a number at or above the upper end can be judged"
)
"""The note of an ``undecided`` row whose certified enclosure starts at 0."""

DEFAULT_ORDERS = ("1.5", "2", "3", "4", "8", "16", "32", "64", "256")
"""The Renyi orders where an RDP curve is asked (an adapter may report its own)."""
DEFAULT_ALPHAS = ("0.001", "0.01", "0.1", "0.5")
"""The type I errors where ``beta(alpha)`` is asked."""


@dataclass(frozen=True)
class SuiteCase:
    """One case of a suite: mechanisms with counts and where each quantity is asked.

    Attributes:
        name: the mechanism in words (``poisson-subsampled gaussian q=0.01 sigma=1 x1000``).
        build: returns the ``(mechanism, count)`` list (built where the case runs).
        eps: eps values (exact decimals) where delta(eps) is compared.
        deltas: delta values (exact decimals) where eps(delta) is compared.
        orders: Renyi orders asked of the adapters that report an RDP curve.
        alphas: type I errors where ``beta(alpha)`` is asked.
        refine: an ``undecided`` number gets a second look on a finer loss grid
            (:meth:`~dpcompose_exact.tools.audit.references.References.refined`); the
            quick suite's cases turn it off to stay within 30 s of CPU and 1 GB.
        native: per item, what a library's own entry point calls the mechanism when its
            loss pair does not say it, as ``(key, value)`` pairs (an empty tuple: nothing
            to add): ``(("family", "discrete_laplace"), ("a", "1"), ("sensitivity",
            "1"))`` (a discrete Laplace of shift 1 has the pair of every ``a``-DP
            mechanism), ``(("sampler", "without replacement"),)`` (the pair of ``m`` of
            ``n`` records drawn without replacement under replace-one is the Poisson one
            at ``q = m/n``, docs/theory.md, section 15).  Adapters read it as
            ``job.options["native"]``; the others' numbers are of the same pair.
    """

    name: str
    build: Callable[[], list[tuple[Any, int]]]
    eps: tuple[str, ...]
    deltas: tuple[str, ...] = ("1e-3", "1e-5")
    orders: tuple[str, ...] = DEFAULT_ORDERS
    alphas: tuple[str, ...] = DEFAULT_ALPHAS
    refine: bool = True
    native: tuple[tuple[tuple[str, str], ...], ...] = ()

    def points(self) -> list[Any]:
        """The case's queries (part of its store key)."""
        out: list[Any] = [self.name, self.eps, self.deltas, self.orders, self.alphas]
        if self.native:
            out.append([list(map(list, n)) for n in self.native])
        return out if self.refine else [*out, "no second look"]


FAMILIES = (
    ("mixed", "mixed"),
    ("poisson-subsampled gaussian", "sub-gauss"),
    ("sampled-without-replacement gaussian", "sub-gauss"),
    ("dp-sgd", "sub-gauss"),
    ("gaussian", "gauss"),
    ("poisson-subsampled laplace", "sub-lap"),
    ("laplace", "laplace"),
    ("discrete laplace", "laplace"),
    ("randomized response", "pure/rr"),
    ("pure dp", "pure/rr"),
    ("approximate dp", "approx"),
    ("multi-constraint", "approx"),
)
"""``(prefix of a case name, family)``: the first that matches names a case's family (a
case of several mechanisms, `` with `` in its name, is ``mixed``)."""


def family_of(case: str) -> str:
    """The family of a case by its name (:data:`FAMILIES`; ``other`` when none matches)."""
    if " with " in case:
        return "mixed"
    for prefix, family in FAMILIES[1:]:
        if case.startswith(prefix):
            return family
    return "other"


def _gauss(sigma: str, count: int, rate: str | None = None) -> Callable[[], list[Any]]:
    def build() -> list[tuple[Any, int]]:
        from ...mechanisms.noise import gaussian_noise

        m = gaussian_noise(sigma)
        return [(m.subsample(rate) if rate else m, count)]

    return build


def _gauss_shift(sigma: str, shift: str, count: int, rate: str) -> Callable[[], list[Any]]:
    def build() -> list[tuple[Any, int]]:
        from ...mechanisms.noise import gaussian_noise

        return [(gaussian_noise(sigma, shift).subsample(rate), count)]

    return build


def _laplace(b: str, count: int, rate: str | None = None) -> Callable[[], list[Any]]:
    def build() -> list[tuple[Any, int]]:
        from ...mechanisms.noise import laplace_noise

        m = laplace_noise(b)
        return [(m.subsample(rate) if rate else m, count)]

    return build


def _dp(constraints: list[tuple[str, str]], count: int) -> Callable[[], list[Any]]:
    def build() -> list[tuple[Any, int]]:
        from ... import api

        return [(api.Mechanism(constraints), count)]

    return build


def _dlap(a: str, count: int) -> Callable[[], list[Any]]:
    def build() -> list[tuple[Any, int]]:
        from ...mechanisms.discrete_laplace import discrete_laplace

        return [(discrete_laplace(a, 1), count)]

    return build


def _rr(p: str, count: int) -> Callable[[], list[Any]]:
    def build() -> list[tuple[Any, int]]:
        from ... import api

        return [(api.randomized_response(p), count)]

    return build


def _both(*builds: Callable[[], list[Any]]) -> Callable[[], list[Any]]:
    def build() -> list[tuple[Any, int]]:
        return [item for b in builds for item in b()]

    return build


_MULTI = [("0.3", "0"), ("0.15", "0.02")]


def _quick() -> tuple[SuiteCase, ...]:
    # the second look (a finer loss grid) is off: CI's budget is 30 s of CPU and 1 GB
    return (
        SuiteCase("gaussian sigma=1 x100", _gauss("1", 100), ("10", "30", "60"), refine=False),
        SuiteCase(
            "poisson-subsampled gaussian q=0.01 sigma=1 x1000",
            _gauss("1", 1000, "0.01"),
            ("0.5", "1", "2"),
            refine=False,
        ),
        SuiteCase(
            "randomized response p=0.5 x10",
            _rr("1/2", 10),
            ("1", "5", "10"),
            ("0", "1e-3", "1e-5"),  # the edge delta = 0 (pure DP)
            refine=False,
        ),
        SuiteCase(
            "pure dp eps=0.1 x100",
            _dp([("0.1", "0")], 100),
            ("0.5", "1", "2"),
            ("0", "1e-3", "1e-15"),  # the edges delta = 0 and 1e-15
            refine=False,
        ),
        SuiteCase("laplace b=1 x10", _laplace("1", 10), ("1", "3", "6"), refine=False),
    )


def _standard() -> tuple[SuiteCase, ...]:
    tail = ("1e-3", "1e-5", "1e-10")
    pure = ("0", "1e-3", "1e-5")
    return (
        SuiteCase("gaussian sigma=1 x100", _gauss("1", 100), ("0.01", "10", "30", "60"), tail),
        SuiteCase("gaussian sigma=0.5 x1", _gauss("1/2", 1), ("0", "1", "5", "20"), tail),
        SuiteCase("gaussian sigma=20 x10000", _gauss("20", 10000), ("0.01", "1", "5"), tail),
        SuiteCase(
            "poisson-subsampled gaussian q=0.01 sigma=1 x1000",
            _gauss("1", 1000, "0.01"),
            ("0.05", "1", "2", "4"),
            ("1e-3", "1e-5", "1e-8"),
        ),
        SuiteCase(
            "poisson-subsampled gaussian q=0.004 sigma=1.1 x10000",
            _gauss("1.1", 10000, "0.004"),
            ("0.1", "1", "3"),
        ),
        SuiteCase(
            "poisson-subsampled gaussian q=0.1 sigma=2 x100",
            _gauss("2", 100, "0.1"),
            ("0.01", "1", "3"),
        ),
        SuiteCase("laplace b=1 x10", _laplace("1", 10), ("0.01", "1", "3", "6"), pure),
        SuiteCase("laplace b=10 x1000", _laplace("10", 1000), ("0.5", "3", "10")),
        SuiteCase(
            "poisson-subsampled laplace q=0.01 b=1 x100",
            _laplace("1", 100, "0.01"),
            ("0.05", "0.5", "1"),
        ),
        SuiteCase("randomized response p=0.5 x10", _rr("1/2", 10), ("0.01", "1", "5", "10"), pure),
        SuiteCase("randomized response p=0.9 x100", _rr("9/10", 100), ("0.01", "1", "5"), pure),
        SuiteCase("pure dp eps=0.1 x100", _dp([("0.1", "0")], 100), ("0.001", "1", "10"), pure),
        SuiteCase("pure dp eps=1 x10", _dp([("1", "0")], 10), ("0.01", "3", "9.9"), pure),
        SuiteCase(
            "approximate dp eps=1 delta=1e-5 x50",
            _dp([("1", "1e-5")], 50),
            ("0.01", "5", "30"),
            ("1e-2", "1e-3"),
        ),
        SuiteCase(
            "multi-constraint (0.3,0)+(0.15,0.02) x20",
            _dp(_MULTI, 20),
            ("0.01", "1", "3", "5.9"),
            pure,
        ),
        SuiteCase(
            "gaussian sigma=2 x10 with multi-constraint (0.3,0)+(0.15,0.02) x20",
            _both(_gauss("2", 10), _dp(_MULTI, 20)),
            ("0.01", "1", "3"),
        ),
        SuiteCase(
            "laplace b=1 x10 with randomized response p=0.5 x10",
            _both(_laplace("1", 10), _rr("1/2", 10)),
            ("0.01", "3", "10"),
            pure,
        ),
        # the edges where practitioners are: delta = 0 and 1e-15 to 1e-2, eps up to 1000,
        # the subsampled steps of real DP-SGD runs (sigma 0.5-2, q 1e-4-1e-2,
        # k 10^4-10^6) and q = 1e-5 (each library within its CPU-time limit per case)
        SuiteCase(
            "randomized response p=0.5 x1000",
            _rr("1/2", 1000),
            ("10", "100", "1000"),
            ("0", "1e-15", "1e-10", "1e-2"),
        ),
        SuiteCase(
            "poisson-subsampled gaussian q=0.001 sigma=0.8 x100000 (dp-sgd)",
            _gauss("0.8", 100_000, "0.001"),
            ("1", "5"),
            ("1e-15", "1e-5", "1e-2"),
        ),
        SuiteCase(
            "poisson-subsampled gaussian q=0.0001 sigma=0.5 x10000 (dp-sgd)",
            _gauss("0.5", 10_000, "0.0001"),
            ("1",),
            ("1e-15", "1e-5"),
        ),
        SuiteCase(
            "poisson-subsampled gaussian q=0.0001 sigma=0.7 x1000000 (dp-sgd)",
            _gauss("0.7", 1_000_000, "0.0001"),
            ("2",),
            ("1e-6",),
        ),
        # the certified lower end of delta(0.1) is 0 here (upper end 3.1e-19): a number
        # below the upper end is undecided, never sound (judge)
        SuiteCase(
            "poisson-subsampled gaussian q=0.00001 sigma=1 x10000 (dp-sgd)",
            _gauss("1", 10_000, "0.00001"),
            ("0.1",),
            ("1e-5",),
        ),
        # entry points named by the library only: dp_accounting's DiscreteLaplaceDpEvent
        # and SampledWithoutReplacementDpEvent (replace-one: shift 2, noise multiplier 1)
        SuiteCase(
            "discrete laplace a=1 sensitivity=1 x10",
            _dlap("1", 10),
            ("0.01", "3", "9"),
            ("0", "1e-3", "1e-5"),
            native=((("family", "discrete_laplace"), ("a", "1"), ("sensitivity", "1")),),
        ),
        SuiteCase(
            "sampled-without-replacement gaussian m/n=256/60000 sigma=2 shift=2 x1000",
            _gauss_shift("2", "2", 1000, "256/60000"),
            ("0.5", "1", "2"),
            ("1e-5", "1e-8"),
            native=((("sampler", "without replacement"), ("n", "60000"), ("m", "256")),),
        ),
    )


SUITES: dict[str, Callable[[], tuple[SuiteCase, ...]]] = {
    "quick": _quick,
    "standard": _standard,
}
"""The suites by name."""


@dataclass(frozen=True)
class SuiteRow:
    """One number of one adapter on one case, next to the certified reference.

    Attributes:
        accountant: the series (``pld_pessimistic``, ``prv_upper``).
        adapter: the adapter that reported it (``prv``).
        library, version: the library behind it and its installed version.
        case: the case's name.
        quantity: ``delta`` (at eps = ``at``), ``epsilon`` (at delta = ``at``), ``renyi``
            (at the order ``at``), ``gdp_mu`` (``at`` empty) or ``beta`` (at the type I
            error ``at``); ``-`` on an unsupported row.
        at: the query point (exact decimal).
        reported: the library's number (``nan`` when none).
        exact_lower, exact_upper: the certified enclosure of the true value (equal when
            exact; ``"inf"``: infinite; None: no certified reference).
        claim: what the library presents the number as (:class:`Claim` value).
        verdict: one of :data:`VERDICTS`.
        relative_error: ``(reported - end) / end`` against the end it is judged by (the
            lower end for an upper bound: negative is a shortfall); 0 inside the
            enclosure; ``nan`` when unknown.
        note: why a number is missing, unsupported or undecided.
    """

    accountant: str
    adapter: str
    library: str
    version: str
    case: str
    quantity: str
    at: str
    reported: float
    exact_lower: str | None
    exact_upper: str | None
    claim: str
    verdict: str
    relative_error: float
    note: str = ""

    @property
    def severity(self) -> str:
        """The row's grade (:func:`severity`): how far on the wrong side, or ``""``."""
        return severity(self.verdict, self.relative_error)

    @property
    def sign_note(self) -> str:
        """What the sign of :attr:`relative_error` means for this row's claim."""
        lower_claim = self.claim == Claim.LOWER.value
        if self.verdict != "UNSOUND" or not math.isfinite(self.relative_error):
            return ""
        if lower_claim:
            return "a lower bound above the truth: positive is too high"
        return "an upper bound below the truth: negative is a shortfall"

    def as_dict(self) -> dict[str, Any]:
        """JSON row: exactly :data:`JSON_ROW_KEYS` (non-finite floats as strings)."""
        out: dict[str, Any] = {k: getattr(self, k) for k in JSON_ROW_KEYS}
        for k in ("reported", "relative_error"):
            if not math.isfinite(out[k]):
                out[k] = str(out[k])
        return out

    def record(self) -> dict[str, Any]:
        """Every field (what the store keeps)."""
        return asdict(self)


@dataclass(frozen=True)
class SuiteReport:
    """Result of :func:`audit_suite`.

    Attributes:
        suite: the suite's name.
        cases: the case names, in order.
        rows: every number (and every unsupported pair) with its verdict.
        skipped: ``(adapter, reason)`` for adapters whose library is missing.
        settings: the library settings used.
        resumed: cells read back from the store instead of computed.
    """

    suite: str
    cases: tuple[str, ...]
    rows: tuple[SuiteRow, ...]
    skipped: tuple[tuple[str, str], ...] = ()
    settings: tuple[tuple[str, Any], ...] = field(default=())
    resumed: int = 0

    @property
    def sound(self) -> bool:
        """No number presented as a guarantee is on the wrong side beyond float rounding."""
        return not any(r.verdict == "UNSOUND" for r in self.rows)

    def accountants(self) -> list[str]:
        """The series present, in order of first appearance."""
        return list(dict.fromkeys(r.accountant for r in self.rows))

    def versions(self) -> list[str]:
        """``library version`` of every adapter that ran, in order."""
        return list(dict.fromkeys(f"{r.library} {r.version}" for r in self.rows))

    def cell(self, accountant: str, case: str) -> tuple[str, float]:
        """``(worst verdict, worst relative error)`` of one accountant on one case."""
        rows = [r for r in self.rows if r.accountant == accountant and r.case == case]
        if not rows:
            return "", math.nan
        worst = min(rows, key=lambda r: VERDICTS.index(r.verdict)).verdict
        rels = [r.relative_error for r in rows if r.verdict == worst]
        finite = [x for x in rels if math.isfinite(x)]
        return worst, (max(finite, key=abs) if finite else math.nan)

    def counts(self) -> dict[str, dict[str, int]]:
        """Per accountant, how many rows have each verdict."""
        out: dict[str, dict[str, int]] = {}
        for r in self.rows:
            per = out.setdefault(r.accountant, {})
            per[r.verdict] = per.get(r.verdict, 0) + 1
        return out

    def findings(self) -> list[SuiteRow]:
        """The ``UNSOUND`` and ``invalid value`` rows, the most severe first.

        Sorted by :data:`SEVERITIES` (``UNSOUND`` material, small, float accumulation),
        then ``invalid value``, then by the size of the relative error (largest first);
        rows of equal rank keep the suite's order.  What ``--repro`` writes scripts for.
        """
        found = [r for r in self.rows if r.verdict in ("UNSOUND", "invalid value")]

        def rank(r: SuiteRow) -> tuple[int, float]:
            grade = SEVERITIES.index(r.severity) if r.verdict == "UNSOUND" else len(SEVERITIES)
            size = abs(r.relative_error) if math.isfinite(r.relative_error) else math.inf
            return grade, -size

        return sorted(found, key=rank)

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly report: rows with exactly :data:`JSON_ROW_KEYS`, notes apart."""
        notes = [
            {"accountant": r.accountant, "case": r.case, "quantity": r.quantity, "at": r.at,
             "note": r.note}
            for r in self.rows
            if r.note
        ]  # fmt: skip
        return {
            "suite": self.suite,
            "cases": list(self.cases),
            "settings": dict(self.settings),
            "versions": self.versions(),
            "skipped": dict(self.skipped),
            "sound": self.sound,
            "matrix": {a: {c: self.cell(a, c)[0] for c in self.cases} for a in self.accountants()},
            "counts": self.counts(),
            "rows": [r.as_dict() for r in self.rows],
            "notes": notes,
        }


def _negated(text: str) -> str:
    return text[1:] if text.startswith("-") else "-" + text


def _judge_upper(reported: float, lower: str, upper: str, rtol: float) -> tuple[str, float]:
    """Verdict of an upper bound against ``[lower, upper]`` (no invalid-value check)."""
    below = _compare(reported, lower, True, rtol)
    above = _compare(reported, upper, True, rtol)
    if below[2] is False or (below[2] and below[3]):
        rel = below[1]
    elif above[2] is True and above[1] > 0:
        rel = above[1]
    else:
        rel = 0.0
    if below[2] is False:
        return "UNSOUND", rel
    if lower == upper:
        return ("sound up to float rounding" if below[3] else "sound"), rel
    if above[2] is True:
        return ("sound up to float rounding" if above[3] else "sound"), rel
    return "undecided", rel


def judge(
    reported: float,
    lower: str | None,
    upper: str | None,
    claim: Claim,
    quantity: str,
    rtol: float = 0.0,
) -> tuple[str, float]:
    """``(verdict, relative_error)`` of a reported number against ``[lower, upper]``.

    A guarantee is judged: an upper-bound claim on delta, eps, a Renyi divergence or
    ``mu`` (below ``lower`` beyond float rounding: ``UNSOUND``; by float rounding only:
    ``sound up to float rounding``; at or above ``upper``: ``sound``; in between:
    ``undecided``), and a lower-bound claim on ``beta`` (the mirror image).  Other
    claims are ``not checked``; ``lower = upper = None`` (no certified reference)
    gives ``undecided``.  A number that is no value of ``quantity`` is ``invalid value``
    (unless it is already ``UNSOUND``).
    """
    if math.isnan(reported):
        return "invalid value", math.nan
    invalid = invalid_value(reported, quantity)
    if lower is None or upper is None:
        return ("invalid value" if invalid else "undecided"), math.nan
    guarantee = (claim is Claim.UPPER and quantity != "beta") or (
        claim is Claim.LOWER and quantity == "beta"
    )
    if claim is Claim.LOWER and quantity == "beta":
        verdict, rel = _judge_upper(-reported, _negated(upper), _negated(lower), rtol)
    else:
        verdict, rel = _judge_upper(reported, lower, upper, rtol)
    if not guarantee:
        return ("invalid value" if invalid else "not checked"), rel
    if verdict == "UNSOUND":
        return verdict, rel
    return ("invalid value" if invalid else verdict), rel


def _job(case: SuiteCase, items: list[tuple[Any, int]], options: dict[str, Any]) -> Job:
    if case.native:
        options = {**options, "native": [dict(n) for n in case.native]}
    return Job(
        items,
        [float(e) for e in case.eps],
        [float(d) for d in case.deltas],
        options,
        orders=[float(a) for a in case.orders],
        alphas=[float(a) for a in case.alphas],
    )


def _at_text(x: float) -> str:
    """A reported query point as the shortest decimal of its double (``nan``: empty)."""
    if math.isnan(x):
        return ""
    return repr(float(x)).removesuffix(".0") if float(x).is_integer() else repr(float(x))


def non_monotone(values: Sequence[float], ats: Sequence[str], label: str) -> dict[int, str]:
    """The points where a curve that must not increase (delta(eps), eps(delta)) rises.

    Going up in ``at``, a value above the smallest one before it by more than float
    rounding (:data:`~dpcompose_exact.tools.audit.compare.FLOAT_ULPS` units of 2^-52,
    relative) is a point of a non-monotone curve: ``{index: note}``, its verdict
    ``invalid value`` (a curve no mechanism has; docs/theory.md, section 3).  ``nan`` and
    negative values are left out (each is judged on its own).
    """
    from fractions import Fraction

    from .compare import FLOAT_ULPS

    order = sorted(range(len(ats)), key=lambda i: Fraction(Decimal(ats[i])))
    slack = FLOAT_ULPS * 2.0**-52
    out: dict[int, str] = {}
    best, best_at = math.inf, ""
    for i in order:
        v = values[i]
        if math.isnan(v) or v < 0:  # no value at all: judged on its own (invalid value)
            continue
        if v > best and v - best > slack * abs(best):
            out[i] = (
                f"invalid value: non-monotone, {label}({ats[i]}) = {v!r} above "
                f"{label}({best_at}) = {best!r}"
            )
        elif v < best:
            best, best_at = v, ats[i]
    return out


_RISING = re.compile(
    r"non-monotone, \w+\((?P<at>[^)]*)\) = \S+ above \w+\((?P<before>[^)]*)\) = (?P<value>\S+)"
)


def rising_from(note: str) -> tuple[str, float] | None:
    """``(query point, value)`` of the lower point a non-monotone row's curve rises from.

    Reads the note :func:`non_monotone` wrote (``... delta(60) = 0.9 above delta(30) =
    0.1``: ``("30", 0.1)``); None when the note is of another kind.

    >>> rising_from("invalid value: non-monotone, delta(3) = 0.3 above delta(2) = 0.2")
    ('2', 0.2)
    >>> rising_from("crashed: ValueError: x") is None
    True
    """
    found = _RISING.search(note)
    if found is None:
        return None
    return found["before"], float(found["value"])


def _own_note(note: str, quantity: str, at: str) -> str:
    """The part of a series' joined notes about the query ``quantity`` at ``at``.

    Adapters note a failed query as ``delta at eps=X: ...`` or ``eps at delta=X: ...``;
    when one of the notes is this query's, it alone is the row's note.
    """
    label = "delta at eps=" if quantity == "delta" else "eps at delta="
    for part in note.split("; "):
        if part.startswith(label):
            head = part[len(label) :].split(":", 1)[0]
            try:
                if float(head) == float(at):
                    return part
            except ValueError:
                continue
    return note


_UNCLASSIFIED = " [unclassified crash]"


def crash_note(library: str, note: str) -> str:
    """A crashed row's note with its classification (:mod:`.failures`).

    ``[library failure KEY]`` when the failure is traced to the library (the key names
    its reproduction, ``crash_KEY.py`` of ``--repro``; ``time-limit``: the library did
    not answer within the CPU-time limit every adapter has, reproduced per case by
    ``timeout_*.py``), else ``[unclassified crash]``.
    """
    from .failures import classify

    found = classify(library, note)
    if found:
        return f"{note} [library failure {found.key}]"
    return f"{note}{_UNCLASSIFIED}"


def _unsound(
    refs: References, claim: Claim, quantity: str, at: str, rep: float, rtol: float
) -> bool:
    """The number is ``UNSOUND`` against its certified reference (False: no reference)."""
    ref = refs.get(quantity, at)
    if ref is None or math.isnan(rep):
        return False
    return judge(rep, ref[0], ref[1], claim, quantity, rtol)[0] == "UNSOUND"


def case_rows(
    adapter: Adapter,
    case: SuiteCase,
    items: list[tuple[Any, int]],
    refs: References,
    options: dict[str, Any],
    rtol: float = 0.0,
) -> list[SuiteRow]:
    """Every row of one adapter on one case (the library's failures are rows)."""
    head = (adapter.name, adapter.library, adapter.version(), case.name)
    job = _job(case, items, options)
    refused = [
        why for (m, _), p in zip(job.items, job.loss_pairs()) if (why := adapter.accepts(m, p))
    ]
    rows: list[SuiteRow] = []
    if refused:
        for s in adapter.series:
            rows.append(
                SuiteRow(
                    s.name, *head, "-", "-", math.nan, None, None, "-", "unsupported",
                    math.nan, refused[0],
                )
            )  # fmt: skip
        return rows

    def add(
        series: str, claim: Claim, quantity: str, at: str, rep: float, note: str, bad: str = ""
    ) -> None:
        ref = refs.get(quantity, at)
        lo, hi = ref if ref is not None else (None, None)
        verdict, rel = judge(rep, lo, hi, claim, quantity, rtol)
        if verdict == "undecided" and ref is not None and not math.isnan(rep):
            finer = refs.refined(quantity, at)  # a second look on a finer loss grid
            if finer is not None and finer != ref:
                ref, (lo, hi) = finer, finer
                verdict, rel = judge(rep, lo, hi, claim, quantity, rtol)
        if note.startswith("unsupported") and math.isnan(rep):
            # the library itself says it does not support the case (its own reason)
            verdict, rel = "unsupported", math.nan
        elif note.startswith("crashed") or (math.isnan(rep) and note):
            # the library raised (on this query or on the whole job), or its adapter
            # found no valid number (a note starting with "invalid value")
            verdict = "invalid value" if note.startswith("invalid value") else "crashed"
            if verdict == "crashed":
                note = crash_note(adapter.library, _own_note(note, quantity, at))
        elif bad and verdict != "UNSOUND":
            verdict, note = "invalid value", bad  # a point of a non-monotone curve
        elif ref is None and verdict == "undecided":
            note = note or refs.why(quantity, at)
        keep = math.isnan(rep) or ref is None or bool(bad)
        if verdict == "undecided" and lo is not None and lo != "inf" and Decimal(lo) == 0:
            # a lower end of 0 shows no shortfall: only a number at or above the upper end
            # is judged (sound); below it the row stays undecided, never sound
            note, keep = ZERO_LOWER_END, True
        rows.append(
            SuiteRow(
                series, *head, quantity, at, rep, lo, hi, claim.value, verdict, rel,
                note if keep else "",
            )
        )  # fmt: skip

    got = run_adapter(adapter, job)
    for s in adapter.series:
        ds, es, notes = got[s.name]
        note = "; ".join(notes)
        for quantity, ats, reps in (("delta", case.eps, ds), ("epsilon", case.deltas, es)):
            claim = s.claim(quantity)
            if claim is None:
                continue  # the series reports no such number: no rows
            # a point already on the wrong side is judged on its own, not held against
            # the points after it (autodp's eps(0) = 0 would make every eps(delta) "rise")
            shown = [
                math.nan if _unsound(refs, claim, quantity, at, rep, rtol) else rep
                for at, rep in zip(ats, reps)
            ]
            bad = non_monotone(shown, ats, "delta" if quantity == "delta" else "eps")
            for i, (at, rep) in enumerate(zip(ats, reps)):
                add(s.name, claim, quantity, at, rep, note, bad.get(i, ""))
    if any(s.extra_quantities() for s in adapter.series):
        try:
            extra = adapter.quantities_timed(job)
            why = ""
        except Exception as exc:  # noqa: BLE001 - a library failure is a row, not a crash
            extra, why = {}, f"crashed: {type(exc).__name__}: {exc}".splitlines()[0]
        for s in adapter.series:
            for quantity in s.extra_quantities():
                claim = s.claim(quantity)
                assert claim is not None
                if why:  # one row per quantity: the library raised before any query
                    rows.append(
                        SuiteRow(
                            s.name, *head, quantity, "", math.nan, None, None, claim.value,
                            "crashed", math.nan, crash_note(adapter.library, why),
                        )
                    )  # fmt: skip
                    continue
                for at, rep in extra.get(s.name, {}).get(quantity, []):
                    try:
                        rep = float(rep)
                    except (TypeError, ValueError):
                        rep = math.nan
                    add(s.name, claim, quantity, _at_text(float(at)), rep, "")
    return rows


# ---- the suite on the sweep executor -------------------------------------------------

_KIND = "audit_suite"
_CUSTOM: dict[str, SuiteCase] = {}  # cases given as objects (run in this process only)


def _case_by_name(suite: str, name: str) -> SuiteCase:
    if name in _CUSTOM:
        return _CUSTOM[name]
    for c in SUITES[suite]():
        if c.name == name:
            return c
    raise InvalidParameterError(f"unknown case {name!r} of suite {suite!r}")


def run_suite_task(task: Any) -> dict[str, list[dict[str, Any]]]:
    """The sweep runner of one suite case: every adapter asked of it (never raises).

    ``task`` is a :class:`~dpcompose_exact.tools.sweeps.task.Task` whose queries name the
    adapters (``at``) and carry the suite, case and settings (``points``).
    """
    from ..sweeps.task import one_line, package_version

    out: dict[str, list[dict[str, Any]]] = {}
    q0 = task.queries[0]
    (suite, case_name), (settings,) = q0.points
    conf = json.loads(settings)
    if task.version != package_version():
        msg = f"this worker runs dpcompose_exact {package_version()}, the suite {task.version}"
        return {q.key: [{"error": msg, "_transient": True}] for q in task.queries}
    try:
        case = _case_by_name(suite, case_name)
        items = case.build()
        refs = References(items, refine=case.refine)
    except (Exception, MemoryError) as exc:  # every cell of the case says why
        return {q.key: [{"error": one_line(exc)}] for q in task.queries}
    reg = registry()
    for q in task.queries:
        try:
            rows = case_rows(reg[q.at], case, items, refs, conf["options"], conf["rtol"])
            out[q.key] = [r.record() for r in rows]
        except (Exception, MemoryError) as exc:
            out[q.key] = [{"error": one_line(exc)}]
    return out


def _key(case: SuiteCase, adapter: Adapter, settings: str, version: str) -> str:
    text = json.dumps([_KIND, case.points(), adapter.name, adapter.version(), settings, version])
    return hashlib.sha256(text.encode()).hexdigest()


def _stored_row(record: dict[str, Any]) -> SuiteRow:
    """A stored row; a crash stored as unclassified is classified again (:func:`crash_note`).

    The classification is in the note when the cell was computed: a failure traced since
    then is named without recomputing the cell.
    """
    row = SuiteRow(**record)
    if row.verdict == "crashed" and row.note.endswith(_UNCLASSIFIED):
        note = crash_note(row.library, row.note[: -len(_UNCLASSIFIED)])
        row = replace(row, note=note)
    return row


def _rows_of(stored: list[dict[str, Any]], adapter: Adapter, case: SuiteCase) -> list[SuiteRow]:
    if stored and "verdict" in stored[0]:
        return [_stored_row(r) for r in stored]
    why = f"crashed: {stored[0].get('error', 'no result')}" if stored else "crashed"
    why = crash_note(adapter.library, why)
    head = (adapter.name, adapter.library, adapter.version(), case.name)
    return [
        SuiteRow(s.name, *head, "-", "-", math.nan, None, None, "-", "crashed", math.nan, why)
        for s in adapter.series
    ]


def audit_suite(
    suite: str = "quick",
    accountants: Sequence[str] | None = None,
    pld_grid: float = DEFAULT_PLD_GRID,
    prv_eps_error: float = DEFAULT_PRV_EPS_ERROR,
    prv_delta_error: float = DEFAULT_PRV_DELTA_ERROR,
    rtol: float = 0.0,
    cases: Sequence[str | SuiteCase] | None = None,
    *,
    store: str | None = None,
    resume: bool = True,
    workers: int | None = None,
    scheduler: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> SuiteReport:
    """Run every (installed) adapter on every case of ``suite``; see the module docstring.

    Args:
        suite: a name in :data:`SUITES` (``quick``, ``standard``).
        accountants: adapter names (default: every registered one).
        pld_grid: dp_accounting's ``value_discretization_interval``.
        prv_eps_error: PRVAccountant's ``eps_error``.
        prv_delta_error: PRVAccountant's ``delta_error``.
        rtol: relative slack before a guarantee counts as unsound.
        cases: a subset of the suite's case names, or cases of one's own
            (:class:`SuiteCase`, run in this process only), or both (default: the suite's).
        store: a SQLite file keeping each finished (case, adapter) cell; a rerun with
            the same settings and versions reads them back (default: none, in memory).
        resume: reuse the cells in ``store`` (False: recompute them).
        workers: run the cases on a local Dask cluster of this many processes (default:
            in this process).
        scheduler: ``"tcp://HOST:PORT"`` of a Dask scheduler, or a ``distributed.Client``.
        progress: ``callback(done, total)`` after each finished case.

    Raises:
        InvalidParameterError: an unknown suite, case or accountant, or own cases with
            Dask.
        AccountantsMissingError: none of the accountants' libraries is installed.
    """
    from ..sweeps.executor import run_tasks
    from ..sweeps.store import Store
    from ..sweeps.task import Query, Task, package_version

    if suite not in SUITES:
        raise InvalidParameterError(f"unknown suite {suite!r}; choose from {', '.join(SUITES)}")
    all_cases = SUITES[suite]()
    if cases is not None:
        known = {c.name: c for c in all_cases}
        bad = [c for c in cases if not isinstance(c, SuiteCase) and c not in known]
        if bad:
            raise InvalidParameterError(
                f"unknown case(s) {', '.join(map(repr, bad))}; choose from {', '.join(known)}"
            )
        all_cases = tuple(c if isinstance(c, SuiteCase) else known[c] for c in cases)
    serial = workers is None and scheduler is None
    own = [c for c in cases or () if isinstance(c, SuiteCase)]
    if own and not serial:
        raise InvalidParameterError(
            f"case {own[0].name!r} is a SuiteCase object: run it in this process (no workers "
            "or scheduler), or name a case of the suite"
        )
    reg = registry()
    names = tuple(accountants) if accountants is not None else tuple(reg)
    bad = [n for n in names if n not in reg]
    if bad or not names:
        raise InvalidParameterError(
            f"unknown accountant(s) {', '.join(map(repr, bad)) or '(none given)'}; "
            f"choose from {', '.join(reg)}"
        )
    options = {"pld_grid": pld_grid, "prv_eps_error": prv_eps_error}
    options["prv_delta_error"] = prv_delta_error
    skipped = []
    ready: list[Adapter] = []
    for n in names:
        why = reg[n].unavailable()
        if not why and suite == "quick" and accountants is None and not getattr(reg[n], "quick", 1):
            why = f"{n} is left out of the quick suite (CPU time); name it, or run --suite standard"
        if why:
            skipped.append((n, why))
        else:
            ready.append(reg[n])
    if not ready:
        from .accountants import AccountantsMissingError, missing_message

        raise AccountantsMissingError(missing_message("the audit suite", skipped))

    version = package_version()
    settings = json.dumps({"options": options, "rtol": rtol}, sort_keys=True)
    keys = {(c.name, a.name): _key(c, a, settings, version) for c in all_cases for a in ready}
    db = Store(store)
    try:
        found = db.get(list(keys.values())) if resume else {}
        tasks = []
        for c in all_cases:
            queries = tuple(
                Query(keys[c.name, a.name], _KIND, a.name, ((suite, c.name), (settings,)))
                for a in ready
                if keys[c.name, a.name] not in found
            )
            if queries:
                tasks.append(
                    Task((), queries, 30, None, 0, tuple(names), version, size=len(queries))
                )
        _CUSTOM.clear()
        _CUSTOM.update((c.name, c) for c in own)
        try:
            computed, _, _ = run_tasks(
                tasks,
                db,
                runner=run_suite_task,
                serial=serial,
                workers=workers,
                scheduler=scheduler,
                max_memory=None,
                version=version,
                progress=progress,
            )
        finally:
            _CUSTOM.clear()
    finally:
        db.close()
    rows: list[SuiteRow] = []
    for c in all_cases:
        for a in ready:
            k = keys[c.name, a.name]
            rows += _rows_of(computed.get(k) or found.get(k) or [], a, c)
    out_settings: list[tuple[str, Any]] = [("pld_value_discretization_interval", pld_grid)]
    out_settings += [("prv_eps_error", prv_eps_error), ("prv_delta_error", prv_delta_error)]
    if rtol:
        out_settings.append(("rtol", rtol))
    return SuiteReport(
        suite,
        tuple(c.name for c in all_cases),
        tuple(rows),
        tuple(skipped),
        tuple(out_settings),
        resumed=sum(1 for k in keys.values() if k in found),
    )
