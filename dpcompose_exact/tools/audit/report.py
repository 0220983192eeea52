"""The audit's result: one row per reported number, and the report with its summaries.

:class:`AuditRow` holds a number an accountant reported next to the exact value, its
signed errors and the soundness decision of :mod:`dpcompose_exact.tools.audit.compare`;
:class:`AuditReport` gathers the rows of one :func:`~dpcompose_exact.tools.audit.audit` with the
exact curve, per-series summaries (largest relative error, soundness) and a JSON-friendly
form (:meth:`AuditReport.as_dict`).  What is compared and why: docs/theory.md, sections 1
and 3, and :mod:`dpcompose_exact.tools.audit.compare`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ...regions.specs import MechanismKind
from .accountants import SERIES

__all__ = ["AuditRow", "AuditReport", "invalid_value"]


def invalid_value(reported: float, quantity: str) -> str:
    """Why ``reported`` is no value of ``quantity`` (``""`` when it is one)."""
    if math.isnan(reported):
        return "invalid value: nan"
    if reported < 0:
        return f"invalid value: negative {quantity}"
    if quantity in ("delta", "beta") and reported > 1:
        return f"invalid value: {quantity} above 1"
    return ""


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
            of a double (:data:`~dpcompose_exact.tools.audit.compare.FLOAT_ULPS` ulps); ``sound``
            says whether that was accepted.
        exact_upper: None when ``exact`` is the value itself; else the reference is only a
            certified enclosure ``[exact, exact_upper]`` (``exact`` is its lower end), the
            errors are measured against the nearer end (``nan`` inside it: a lower bound
            on the size of the true error outside it), and an upper bound is unsound below
            the lower end, sound at or above the upper end, undecided in between.
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
    exact_upper: str | None = None

    @property
    def is_enclosure(self) -> bool:
        """The reference is a two-sided enclosure ``[exact, exact_upper]``, not a value."""
        return self.exact_upper is not None and self.exact_upper != self.exact

    @property
    def verdict(self) -> str:
        """One word for the row.

        ``crashed`` (the library raised), ``invalid value`` (``nan``, negative, a delta
        above 1), ``UNSOUND`` (an upper bound below the exact value), ``undecided`` (an
        upper bound inside a two-sided enclosure of the exact value), ``sound up to float
        rounding``, ``sound``, or ``not checked`` (a number not presented as an upper
        bound).
        """
        if self.note.startswith("crashed"):
            return "crashed"
        if invalid_value(self.reported, self.quantity):
            return "invalid value" if self.sound is not False else "UNSOUND"
        if not self.upper_bound:
            return "not checked"
        if self.sound is None:
            return "undecided"
        if self.sound is False:
            return "UNSOUND"
        return "sound up to float rounding" if self.float_rounding else "sound"

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly row (non-finite floats as strings)."""
        out: dict[str, Any] = {}
        for key in ("series", "quantity", "at"):
            out[key] = getattr(self, key)
        for key in ("reported", "abs_error", "rel_error"):
            v = getattr(self, key)
            out[key] = v if math.isfinite(v) else str(v)
        # "exact" is the value itself, or null when only an enclosure of it is known
        out["exact"] = None if self.is_enclosure else self.exact
        out["exact_lower"] = self.exact
        out["exact_upper"] = self.exact if self.exact_upper is None else self.exact_upper
        out.update(upper_bound=self.upper_bound, sound=self.sound, verdict=self.verdict)
        out["float_rounding"] = self.float_rounding
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class AuditReport:
    """Result of :func:`~dpcompose_exact.tools.audit.audit`.

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
            upper = any(r.upper_bound for r in rows)
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
                if k.family == "dp" and k.subsample is None
                else {"mechanism": k.describe(), "count": k.count}
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
