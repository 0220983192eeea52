"""A fixed suite of audit cases: every installed adapter on every case, as a verdict matrix.

:func:`audit_suite` runs each registered adapter
(:mod:`~dpcompose_exact.tools.audit.adapters`) on each case of a suite (:data:`SUITES`;
``quick``: Gaussian noise, Poisson-subsampled Gaussian noise, randomized response, pure DP,
Laplace noise) and compares every number it reports with the certified reference
``dx.compose(case)`` gives: exact decimals for finite mechanisms, a certified two-sided
enclosure ``[lower, upper]`` (:meth:`~dpcompose_exact.numbers.value.Value.interval`) for
noise.  Noise goes to the libraries natively (dp_accounting's ``from_gaussian_mechanism``
and ``RdpAccountant`` events, prv_accountant's mechanisms), finite mechanisms as their exact
dominating pairs rounded to doubles.

A number the library presents as an upper bound (:class:`~dpcompose_exact.tools.audit.Claim`)
is judged against the enclosure's ends: below the lower end by more than float rounding:
``UNSOUND`` (with its relative shortfall); below it by float rounding only: ``sound up to
float rounding``; at or above the upper end: ``sound``; in between: ``undecided``.  Other
verdicts: ``not checked`` (an estimate or a lower bound), ``unsupported`` (the adapter
does not take the case's mechanisms), ``crashed`` (the library raised), ``invalid value``
(``nan``, negative, a delta above 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import BelowLeakError, InvalidParameterError
from .adapters import Claim, Job, registry
from .compare import (
    DEFAULT_PLD_GRID,
    DEFAULT_PRV_DELTA_ERROR,
    DEFAULT_PRV_EPS_ERROR,
    _compare,
    run_adapter,
)
from .report import invalid_value

__all__ = [
    "SuiteCase",
    "SuiteRow",
    "SuiteReport",
    "SUITES",
    "VERDICTS",
    "audit_suite",
    "format_matrix",
    "judge",
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


@dataclass(frozen=True)
class SuiteCase:
    """One case of a suite: mechanisms with counts and where the curve is asked.

    Attributes:
        name: a short name (``gaussian_sigma1_x100``).
        build: returns the ``(mechanism, count)`` list (built when the suite runs).
        eps: eps values (exact decimals) where delta(eps) is compared.
        deltas: delta values (exact decimals) where eps(delta) is compared.
    """

    name: str
    build: Callable[[], list[tuple[Any, int]]]
    eps: tuple[str, ...]
    deltas: tuple[str, ...] = ("1e-3", "1e-5")


def _quick() -> tuple[SuiteCase, ...]:
    from ... import api
    from ...engines.subsample_grid import gaussian_noise, laplace_noise

    def gaussian() -> list[tuple[Any, int]]:
        return [(gaussian_noise(1), 100)]

    def subsampled() -> list[tuple[Any, int]]:
        return [(gaussian_noise(1).subsample("0.01"), 1000)]

    def rr() -> list[tuple[Any, int]]:
        return [(api.randomized_response("1/2"), 10)]

    def pure() -> list[tuple[Any, int]]:
        return [(api.Mechanism([("0.1", "0")]), 100)]

    def laplace() -> list[tuple[Any, int]]:
        return [(laplace_noise(1), 10)]

    return (
        SuiteCase("gaussian_sigma1_x100", gaussian, ("10", "30", "60")),
        SuiteCase("poisson_gaussian_q0.01_sigma1_x1000", subsampled, ("0.5", "1", "2")),
        SuiteCase("randomized_response_p0.5_x10", rr, ("1", "5", "10")),
        SuiteCase("pure_dp_eps0.1_x100", pure, ("0.5", "1", "2")),
        SuiteCase("laplace_b1_x10", laplace, ("1", "3", "6")),
    )


SUITES: dict[str, Callable[[], tuple[SuiteCase, ...]]] = {"quick": _quick}
"""The suites by name."""


@dataclass(frozen=True)
class SuiteRow:
    """One number of one adapter on one case, next to the certified reference.

    Attributes:
        accountant: the series (``pld_pessimistic``, ``prv_upper``).
        adapter: the adapter that reported it (``prv``).
        library, version: the library behind it and its installed version.
        case: the case's name.
        quantity: ``delta`` (at eps = ``at``) or ``epsilon`` (at delta = ``at``).
        at: the grid value (exact decimal).
        reported: the library's number (``nan`` when none).
        exact_lower, exact_upper: the certified enclosure of the true value (equal when
            exact; ``"inf"``: no finite eps).
        claim: what the library presents the number as (:class:`Claim` value).
        verdict: one of :data:`VERDICTS`.
        relative_error: below the lower end: ``(reported - lower) / lower`` (the
            shortfall, negative); above the upper end: ``(reported - upper) / upper``; 0
            inside; ``nan`` when unknown.
        note: why a number is missing or unsupported.
    """

    accountant: str
    adapter: str
    library: str
    version: str
    case: str
    quantity: str
    at: str
    reported: float
    exact_lower: str
    exact_upper: str
    claim: str
    verdict: str
    relative_error: float
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly row (non-finite floats as strings)."""
        out: dict[str, Any] = {}
        for key in ("accountant", "library", "version", "case", "quantity", "at"):
            out[key] = getattr(self, key)
        out["reported"] = self.reported if math.isfinite(self.reported) else str(self.reported)
        out.update(exact_lower=self.exact_lower, exact_upper=self.exact_upper)
        out.update(claim=self.claim, verdict=self.verdict)
        rel = self.relative_error
        out["relative_error"] = rel if math.isfinite(rel) else str(rel)
        out["adapter"] = self.adapter
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class SuiteReport:
    """Result of :func:`audit_suite`.

    Attributes:
        suite: the suite's name.
        cases: the case names, in order.
        rows: every number (and every unsupported pair) with its verdict.
        skipped: ``(adapter, reason)`` for adapters whose library is missing.
        settings: the library settings used.
    """

    suite: str
    cases: tuple[str, ...]
    rows: tuple[SuiteRow, ...]
    skipped: tuple[tuple[str, str], ...] = ()
    settings: tuple[tuple[str, Any], ...] = field(default=())

    @property
    def sound(self) -> bool:
        """No number presented as an upper bound is below the truth beyond float rounding."""
        return not any(r.verdict == "UNSOUND" for r in self.rows)

    def accountants(self) -> list[str]:
        """The series present, in order of first appearance."""
        return list(dict.fromkeys(r.accountant for r in self.rows))

    def cell(self, accountant: str, case: str) -> tuple[str, float]:
        """``(worst verdict, worst relative shortfall)`` of one accountant on one case."""
        rows = [r for r in self.rows if r.accountant == accountant and r.case == case]
        if not rows:
            return "", math.nan
        worst = min(rows, key=lambda r: VERDICTS.index(r.verdict)).verdict
        rels = [r.relative_error for r in rows if r.verdict == worst]
        finite = [x for x in rels if math.isfinite(x)]
        return worst, (min(finite) if finite else math.nan)

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly report."""
        return {
            "suite": self.suite,
            "cases": list(self.cases),
            "settings": dict(self.settings),
            "skipped": dict(self.skipped),
            "sound": self.sound,
            "matrix": {
                a: {c: self.cell(a, c)[0] for c in self.cases} for a in self.accountants()
            },
            "rows": [r.as_dict() for r in self.rows],
        }


def judge(
    reported: float, lower: str, upper: str, claim: Claim, quantity: str, rtol: float = 0.0
) -> tuple[str, float]:
    """``(verdict, relative_error)`` of a reported number against ``[lower, upper]``.

    Only an upper-bound claim is judged: below ``lower`` beyond float rounding is
    ``UNSOUND``, by float rounding only ``sound up to float rounding``, at or above
    ``upper`` ``sound``, between the ends ``undecided``.
    """
    if math.isnan(reported):
        return "invalid value", math.nan
    below = _compare(reported, lower, True, rtol)
    above = _compare(reported, upper, True, rtol)
    if below[2] is False or (below[2] and below[3]):
        rel = below[1]
    elif above[2] is True and above[1] > 0:
        rel = above[1]
    else:
        rel = 0.0
    if claim is not Claim.UPPER:
        return ("invalid value" if invalid_value(reported, quantity) else "not checked"), rel
    if below[2] is False:
        return "UNSOUND", rel
    if invalid_value(reported, quantity):
        return "invalid value", rel
    if lower == upper:
        return ("sound up to float rounding" if below[3] else "sound"), rel
    if above[2] is True:
        return ("sound up to float rounding" if above[3] else "sound"), rel
    return "undecided", rel


def _ends(comp: Any, value: Any) -> tuple[str, str]:
    if comp.is_bounded:
        return value.interval(30)
    text = value.decimal(30)
    return text, text


def _reference(case: SuiteCase, items: list[tuple[Any, int]]) -> tuple[list[Any], list[Any]]:
    from ... import api

    comp = api.compose(items)
    deltas = [_ends(comp, comp.delta(e)) for e in case.eps]
    epsilons = []
    for d in case.deltas:
        try:
            epsilons.append(_ends(comp, comp.epsilon(d)))
        except BelowLeakError:
            epsilons.append(("inf", "inf"))
    return deltas, epsilons


def audit_suite(
    suite: str = "quick",
    accountants: Sequence[str] | None = None,
    pld_grid: float = DEFAULT_PLD_GRID,
    prv_eps_error: float = DEFAULT_PRV_EPS_ERROR,
    prv_delta_error: float = DEFAULT_PRV_DELTA_ERROR,
    rtol: float = 0.0,
    cases: Sequence[str | SuiteCase] | None = None,
) -> SuiteReport:
    """Run every (installed) adapter on every case of ``suite``; see the module docstring.

    Args:
        suite: a name in :data:`SUITES`.
        accountants: adapter names (default: every registered one).
        pld_grid: dp_accounting's ``value_discretization_interval``.
        prv_eps_error: PRVAccountant's ``eps_error``.
        prv_delta_error: PRVAccountant's ``delta_error``.
        rtol: relative slack before an upper bound counts as unsound.
        cases: a subset of the suite's case names, or cases of one's own
            (:class:`SuiteCase`), or both (default: the suite's).

    Raises:
        InvalidParameterError: an unknown suite, case or accountant.
        AccountantsMissingError: none of the accountants' libraries is installed.
    """
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
    ready = []
    for n in names:
        why = reg[n].unavailable()
        if why:
            skipped.append((n, why))
        else:
            ready.append(reg[n])
    if not ready:
        from .accountants import AccountantsMissingError, missing_message

        raise AccountantsMissingError(missing_message("the audit suite", skipped))
    rows: list[SuiteRow] = []
    for case in all_cases:
        items = case.build()
        ref_d, ref_e = _reference(case, items)
        job = Job(items, [float(e) for e in case.eps], [float(d) for d in case.deltas], options)
        for adapter in ready:
            head = (adapter.library, adapter.version(), case.name)
            refused = [
                why
                for (m, _), p in zip(job.items, job.loss_pairs())
                if (why := adapter.accepts(m, p))
            ]
            if refused:
                for s in adapter.series:
                    rows.append(
                        SuiteRow(
                            s.name, adapter.name, *head, "-", "-", math.nan, "-", "-",
                            "", "unsupported", math.nan, refused[0],
                        )
                    )  # fmt: skip
                continue
            got = run_adapter(adapter, job)
            for s in adapter.series:
                ds, es, notes = got[s.name]
                note = "; ".join(notes)
                for quantity, ats, refs, reps in (
                    ("delta", case.eps, ref_d, ds),
                    ("epsilon", case.deltas, ref_e, es),
                ):
                    claim = s.claim(quantity)
                    if claim is Claim.NONE:
                        continue  # the library reports no such number
                    for at, (lo, hi), rep in zip(ats, refs, reps):
                        verdict, rel = judge(rep, lo, hi, claim, quantity, rtol)
                        if note.startswith("crashed"):
                            verdict = "crashed"
                        rows.append(
                            SuiteRow(
                                s.name, adapter.name, *head, quantity, at, rep, lo, hi,
                                claim.value, verdict, rel,
                                note if math.isnan(rep) else "",
                            )
                        )  # fmt: skip
    settings = [("pld_value_discretization_interval", pld_grid)]
    settings += [("prv_eps_error", prv_eps_error), ("prv_delta_error", prv_delta_error)]
    if rtol:
        settings.append(("rtol", rtol))
    return SuiteReport(
        suite, tuple(c.name for c in all_cases), tuple(rows), tuple(skipped), tuple(settings)
    )


def _cell_text(verdict: str, rel: float) -> str:
    if verdict == "UNSOUND" and math.isfinite(rel):
        return f"UNSOUND {rel:+.3g}"
    return verdict or "-"


def format_matrix(report: SuiteReport) -> str:
    """Plain-text verdict matrix (accountants down, cases across), then the unsound rows."""
    from ...numbers.format import float_str
    from ...presentation.render import align

    lines = [f"# audit suite {report.suite}: each accountant on each case, the worst verdict"]
    lines.append("# settings: " + ", ".join(f"{n}={v:g}" for n, v in report.settings))
    versions = dict.fromkeys(f"{r.library} {r.version}" for r in report.rows)
    lines.append("# versions: " + ", ".join(versions))
    for name, why in report.skipped:
        lines.append(f"# skipped {name}: {why}")
    for i, case in enumerate(report.cases, start=1):
        lines.append(f"# case {i}: {case}")
    lines.append("")
    head = ["accountant", "claim"] + [f"case {i}" for i in range(1, len(report.cases) + 1)]
    body = []
    for a in report.accountants():
        claims = {r.claim for r in report.rows if r.accountant == a and r.claim != "-"}
        row = [a, "/".join(sorted(claims)) or "-"]
        row += [_cell_text(*report.cell(a, c)) for c in report.cases]
        body.append(row)
    lines += align(head, body)
    lines.append("")
    bad = [r for r in report.rows if r.verdict == "UNSOUND"]
    if bad:
        lines.append(
            f"# UNSOUND: {len(bad)} number(s) presented as upper bounds are below the truth"
        )
        for r in bad:
            what = "eps" if r.quantity == "epsilon" else "delta"
            at = "delta" if r.quantity == "epsilon" else "eps"
            lines.append(
                f"#   {r.accountant} on {r.case}: {what}({at} = {r.at}) reported "
                f"{float_str(r.reported)}, truth >= {r.exact_lower[:12]} "
                f"(relative shortfall {float_str(r.relative_error, 3)})"
            )
    else:
        lines.append("# every number presented as an upper bound is one (or undecided)")
    return "\n".join(lines) + "\n"
