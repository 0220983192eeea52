"""Audit dp_accounting's and prv_accountant's own accounting of a ``DpEvent`` tree.

:func:`audit_event_tree` composes the tree exactly
(:func:`dpcompose_exact.integrations.events.event_composition`, which reads the tree once
and composes it through the front door: exact, or certified where noise occurs), hands
**the same
tree** to dp_accounting's ``PLDAccountant`` and ``RdpAccountant`` (and, where its
privacy random variables cover the leaves, to prv_accountant's ``PRVAccountant``), and
compares each reported delta(eps) and eps(delta) with the exact value.  Unlike
:func:`dpcompose_exact.tools.audit.audit`, which feeds the exact dominating pair to the
libraries, this also audits how the libraries *read* events: a branch that forgets a count
shows up here.

The JSON form of a tree (:func:`event_to_json`, :func:`event_from_json`) is the one of
``DpEvent.to_named_tuple()``: an object with ``module_name``, ``class_name`` and the
event's fields, nested events as objects, lists of events as arrays.  A file may also wrap
it as ``{"event": {...}, "neighboring_relation": "REPLACE_ONE"}``.  Only the modules
``dp_accounting.dp_event`` and ``dpcompose_exact.integrations.dp_accounting`` are read.
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from typing import Any

from ...errors import BelowLeakError, DPComposeError, InvalidParameterError
from ...integrations.events import (
    MAX_EVENT_DEPTH,
    check_event_depth,
    check_json_depth,
    infer_relation,
)
from ...optional import require
from .accountants import library_versions
from .adapters import Adapter, Claim, Series, TreeJob, builtin_registry, registry
from .compare import (
    DEFAULT_DELTAS,
    DEFAULT_PLD_GRID,
    DEFAULT_PRV_DELTA_ERROR,
    DEFAULT_PRV_EPS_ERROR,
    _compare,
    _default_eps_grid,
    invalid_value,
)
from .report import AuditRow

__all__ = [
    "TREE_ACCOUNTANTS",
    "tree_adapters",
    "EventAuditReport",
    "audit_event_tree",
    "event_to_json",
    "event_from_json",
    "load_events",
    "infer_relation",
    "format_event_table",
]

TREE_ACCOUNTANTS = tuple(
    a.tree_name for a in builtin_registry().values() if a.tree_name is not None
)
"""Accountants run on an event tree: dp_accounting's PLDAccountant (pessimistic, an upper
bound) and RdpAccountant, and prv_accountant's PRVAccountant (the built-in adapters with a
``tree_name``; :func:`tree_adapters` has those of other packages too)."""

_MODULES = (
    "dp_accounting.dp_event",
    "dpcompose_exact.integrations.dp_accounting",
    "dpcompose_exact.integrations.dp_events",
)


# ---------------------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------------------


def event_to_json(event: Any) -> dict[str, Any]:
    """The JSON object of a ``DpEvent`` (its ``to_named_tuple()`` as nested objects).

    Raises:
        InvalidParameterError: the tree is nested deeper than
            :data:`~dpcompose_exact.integrations.events.MAX_EVENT_DEPTH` levels.
    """
    check_event_depth(event)

    def conv(value: Any) -> Any:
        if hasattr(value, "_asdict") and hasattr(value, "class_name"):
            return {k: conv(v) for k, v in value._asdict().items()}
        if isinstance(value, (list, tuple)):
            return [conv(v) for v in value]
        return value

    return conv(event.to_named_tuple())


def event_from_json(data: Any) -> Any:
    """The ``DpEvent`` of a JSON object written by :func:`event_to_json`.

    Raises:
        InvalidParameterError: not an event object, a module other than dp_accounting's
            events and this package's ``DpConstraintsEvent``, bad fields, or events nested
            deeper than :data:`~dpcompose_exact.integrations.events.MAX_EVENT_DEPTH`.
        MissingDependencyError: dp_accounting is not installed (the ``audit`` extra).
    """
    check_json_depth(data)
    return _event_from_json(data)


def _event_from_json(data: Any) -> Any:
    if not isinstance(data, dict) or "class_name" not in data:
        raise InvalidParameterError(
            f"expected a DpEvent object with 'class_name', got {json.dumps(data)[:80]}"
        )
    module = data.get("module_name", "dp_accounting.dp_event")
    if module not in _MODULES:
        raise InvalidParameterError(
            f"module_name {module!r} is not read; use one of {', '.join(_MODULES)}"
        )
    if module.startswith("dp_accounting"):
        # dp_accounting missing is the audit extra missing, not an unknown event
        require(module, _FEATURE, extra="audit")
    try:
        cls = getattr(importlib.import_module(module), str(data["class_name"]))
    except (ImportError, AttributeError) as exc:
        raise InvalidParameterError(f"unknown DpEvent {data['class_name']!r}: {exc}") from None
    fields = {}
    for key, value in data.items():
        if key in ("module_name", "class_name"):
            continue
        if isinstance(value, dict):
            value = _event_from_json(value)
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            value = [_event_from_json(v) for v in value]
        fields[key] = value
    try:
        return cls(**fields)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"{data['class_name']}: {exc}") from None


def load_events(path: str) -> tuple[Any, str | None]:
    """``(event, neighboring relation or None)`` from a JSON file (see the module docstring)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise InvalidParameterError(f"--events {path!r}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise InvalidParameterError(f"--events {path!r}: not JSON ({exc})") from None
    except RecursionError:
        raise InvalidParameterError(
            f"--events {path!r}: nested too deep for the JSON reader; an event tree may be "
            f"1 to {MAX_EVENT_DEPTH} levels deep"
        ) from None
    relation = None
    if isinstance(data, dict) and "event" in data and "class_name" not in data:
        relation = data.get("neighboring_relation")
        data = data["event"]
    return event_from_json(data), relation


# ---------------------------------------------------------------------------------------
# The accountants on the tree
# ---------------------------------------------------------------------------------------


_FEATURE = "the audit of an event tree"


def tree_adapters() -> dict[str, Adapter]:
    """The registered adapters that read ``DpEvent`` trees, by their tree name."""
    return {a.tree_name: a for a in registry().values() if a.tree_name}


# ---------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventAuditReport:
    """Result of :func:`audit_event_tree`.

    Attributes:
        event: the audited tree as JSON (:func:`event_to_json`).
        relation: the neighbouring relation.
        method: how the exact values were computed.
        eps_grid, deltas: where delta(eps) and eps(delta) were compared.
        exact_delta, exact_eps: the exact values (certified decimals; ``"inf"``: no
            finite eps), or the lower ends of their certified enclosures when only
            two-sided bounds exist.
        rows: every reported number next to the exact one
            (:class:`~dpcompose_exact.tools.audit.AuditRow`).
        versions: ``(library, version)``.
        skipped: ``(accountant, reason)`` for accountants that did not run.
        exact_delta_upper, exact_eps_upper: the upper ends of the enclosures (equal to
            ``exact_delta`` and ``exact_eps`` where the value itself is known; empty:
            every value is known).
    """

    event: dict[str, Any]
    relation: str
    method: str
    eps_grid: tuple[str, ...]
    deltas: tuple[str, ...]
    exact_delta: tuple[str, ...]
    exact_eps: tuple[str, ...]
    rows: tuple[AuditRow, ...]
    versions: tuple[tuple[str, str], ...]
    skipped: tuple[tuple[str, str], ...] = ()
    exact_delta_upper: tuple[str, ...] = ()
    exact_eps_upper: tuple[str, ...] = ()

    @property
    def sound(self) -> bool:
        """No number presented as an upper bound is below the exact value (or enclosure)."""
        return not self.unsound_rows()

    def unsound_rows(self) -> list[AuditRow]:
        """The upper bounds below the exact value (below the lower end of its enclosure)."""
        return [r for r in self.rows if r.sound is False]

    def undecided_rows(self) -> list[AuditRow]:
        """The upper bounds inside the enclosure of the exact value: neither sound nor not."""
        return [r for r in self.rows if r.upper_bound and r.verdict == "undecided"]

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly report."""
        return {
            "event": self.event,
            "neighboring_relation": self.relation,
            "method": self.method,
            "versions": dict(self.versions),
            "skipped": dict(self.skipped),
            "sound": self.sound,
            "unsound": sorted({r.series for r in self.unsound_rows()}),
            "undecided": sorted({r.series for r in self.undecided_rows()}),
            "exact": {
                "delta": [
                    _exact_entry("epsilon", e, "delta", lo, hi)
                    for e, lo, hi in zip(
                        self.eps_grid, self.exact_delta, self.exact_delta_upper or self.exact_delta
                    )
                ],
                "epsilon": [
                    _exact_entry("delta", d, "epsilon", lo, hi)
                    for d, lo, hi in zip(
                        self.deltas, self.exact_eps, self.exact_eps_upper or self.exact_eps
                    )
                ],
            },
            "rows": [r.as_dict() for r in self.rows],
        }


def _exact_entry(at_key: str, at: str, key: str, lo: str, hi: str) -> dict[str, Any]:
    """``{at_key: at, key: value or null, key_lower: lo, key_upper: hi}``."""
    return {at_key: at, key: lo if lo == hi else None, f"{key}_lower": lo, f"{key}_upper": hi}


def _exact_eps(comp: Any, delta: str) -> tuple[str, str]:
    try:
        return _ends(comp, comp.epsilon(delta))
    except BelowLeakError:
        return "inf", "inf"


def _ends(comp: Any, value: Any) -> tuple[str, str]:
    """``(exact, exact)`` decimals, or the ends of a certified two-sided bound."""
    if comp.is_bounded:
        return value.interval(30)
    text = value.decimal(30)
    return text, text


def audit_event_tree(
    event: Any,
    neighboring_relation: Any = None,
    eps_grid: Sequence[str] | None = None,
    deltas: Sequence[str] | None = None,
    accountants: Sequence[str] = TREE_ACCOUNTANTS,
    pld_grid: float = DEFAULT_PLD_GRID,
    prv_eps_error: float = DEFAULT_PRV_EPS_ERROR,
    prv_delta_error: float = DEFAULT_PRV_DELTA_ERROR,
    rtol: float = 0.0,
    exact_comparison: bool = False,
) -> EventAuditReport:
    """Audit the accountants' own accounting of ``event`` against its exact composition.

    Args:
        event: a dp_accounting ``DpEvent`` tree.
        neighboring_relation: ``NeighboringRelation`` or its name; None infers it
            (:func:`infer_relation`).
        eps_grid: eps values (exact decimals) where delta(eps) is compared (default: 9 from
            0 to about eps(1e-6)).
        deltas: deltas where eps(delta) is compared (default 1e-3, 1e-5, 1e-6).
        accountants: a subset of :data:`TREE_ACCOUNTANTS`.
        pld_grid: the PLDAccountant's ``value_discretization_interval``.
        prv_eps_error: PRVAccountant's ``eps_error``.
        prv_delta_error: PRVAccountant's ``delta_error``.
        rtol: relative slack before an upper bound counts as unsound.
        exact_comparison: an upper bound below the exact value by float rounding only is
            unsound too.

    Raises:
        InvalidParameterError: unknown accountants, an event the exact composition does not
            cover, a tree with nothing private, or one nested deeper than
            :data:`~dpcompose_exact.integrations.events.MAX_EVENT_DEPTH` levels.
        AccountantsMissingError: dp_accounting is not installed.
    """
    from ...integrations.events import event_composition
    from .accountants import AccountantsMissingError

    check_event_depth(event)  # every walk below (this module's, the libraries') recurses

    readers = tree_adapters()
    unknown = [a for a in accountants if a not in readers]
    if unknown or not accountants:
        raise InvalidParameterError(
            f"unknown accountant(s) {', '.join(map(repr, unknown)) or '(none given)'} for an "
            f"event tree; choose from {', '.join(readers)}"
        )
    try:
        require("dp_accounting", _FEATURE, extra="audit")
    except ImportError as exc:
        raise AccountantsMissingError(str(exc)) from None
    rel = getattr(neighboring_relation, "name", neighboring_relation)
    relation = str(rel).upper() if rel is not None else infer_relation(event)
    comp = event_composition(event, relation)
    if comp is None:
        raise InvalidParameterError("the DpEvent composes no private mechanism (nothing to audit)")
    if eps_grid:
        grid = tuple(str(e).strip() for e in eps_grid)
    else:  # below the leak: the grid ends at 1 (a tree's result may have no constraint list)
        grid = _default_eps_grid(comp, largest_loss=False)
    dgrid = tuple(str(d).strip() for d in deltas) if deltas else DEFAULT_DELTAS
    delta_ends = [_ends(comp, comp.delta(e)) for e in grid]
    eps_ends = [_exact_eps(comp, d) for d in dgrid]
    # with bounds only, a number is unsound when below the lower end, sound when at least
    # the upper end, undecided in between (_row); the report shows both ends
    exact_delta = tuple(lo for lo, _ in delta_ends)
    exact_eps = tuple(lo for lo, _ in eps_ends)
    upper_ends = {("delta", g): hi for g, (_, hi) in zip(grid, delta_ends)}
    upper_ends.update({("epsilon", g): hi for g, (_, hi) in zip(dgrid, eps_ends)})
    eps_f = [float(e) for e in grid]
    del_f = [float(d) for d in dgrid]

    numbers: dict[str, tuple[list[float], list[float], str]] = {}  # (deltas, eps, crash)
    claims: dict[str, Series] = {}
    skipped: list[tuple[str, str]] = []
    used: list[str] = []
    job = TreeJob(
        event,
        relation,
        eps_f,
        del_f,
        {"pld_grid": pld_grid, "prv_eps_error": prv_eps_error, "prv_delta_error": prv_delta_error},
    )
    for name in dict.fromkeys(accountants):
        adapter = readers[name]
        missing = adapter.unavailable()
        if missing:
            skipped.append((name, missing))
            continue
        used.append(adapter.name)
        try:
            got, why = adapter.run_tree(job)
        except DPComposeError:
            raise
        except Exception as exc:  # noqa: BLE001 - a library failure is a row, not a crash
            why = f"crashed: {type(exc).__name__}: {exc}".splitlines()[0]
            got = {
                s.name: ([math.nan] * len(eps_f), [math.nan] * len(del_f)) for s in adapter.series
            }
        if why and not got:
            skipped.append((name, why))
            continue
        claims.update((s.name, s) for s in adapter.series)
        numbers.update({k: (ds, es, why or "") for k, (ds, es) in got.items()})
    rows = []
    for series, (ds, es, crash) in numbers.items():
        for quantity, ats, exacts, reps in (
            ("delta", grid, exact_delta, ds),
            ("epsilon", dgrid, exact_eps, es),
        ):
            spec = claims.get(series)
            upper = spec is not None and spec.claim(quantity) is Claim.UPPER
            for at, ex, rep in zip(ats, exacts, reps):
                hi = upper_ends[(quantity, at)]
                rows.append(
                    _row(series, quantity, at, rep, (ex, hi), upper, rtol, exact_comparison, crash)
                )
    return EventAuditReport(
        event=event_to_json(event) if hasattr(event, "to_named_tuple") else {"repr": repr(event)},
        relation=relation,
        method=getattr(comp, "method", "exact"),
        eps_grid=grid,
        deltas=dgrid,
        exact_delta=exact_delta,
        exact_eps=exact_eps,
        rows=tuple(rows),
        versions=library_versions(used),
        skipped=tuple(skipped),
        exact_delta_upper=tuple(hi for _, hi in delta_ends),
        exact_eps_upper=tuple(hi for _, hi in eps_ends),
    )


def _row(
    series: str,
    quantity: str,
    at: str,
    rep: float,
    ends: tuple[str, str],
    upper: bool,
    rtol: float,
    strict: bool,
    crash: str,
) -> AuditRow:
    """One reported number against the exact value, or against a certified enclosure.

    With an enclosure ``[lo, hi]`` of the true value, an upper bound below ``lo`` is
    unsound, one at or above ``hi`` is sound, and one in between is undecided; the errors
    are measured against the nearer end (which understates their size) and are ``nan``
    inside the enclosure, where not even their sign is known.
    """
    lo, hi = ends
    note = (crash or invalid_value(rep, quantity)) if math.isnan(rep) else ""
    a, r, s, fr = _compare(rep, lo, upper, rtol, strict)
    if hi == lo:
        return AuditRow(series, quantity, at, rep, lo, a, r, upper, s, note, fr)
    a_hi, r_hi, s_hi, _ = _compare(rep, hi, upper, rtol, strict)
    if not note:
        note = f"the exact value lies in [{lo}, {hi}]"
    if math.isnan(rep) or (a < 0 and s is not True):
        pass  # below the lower end (or no number): judged against the lower end
    elif a_hi >= 0 or s_hi is True:
        a, r, s = a_hi, r_hi, (True if upper else None)  # at or above the upper end
    elif a < 0:
        a, r = math.nan, math.nan  # below the lower end within float rounding only
        s, fr = None, False
        note += ": undecided"
    else:
        a, r, s, fr = math.nan, math.nan, None, False  # inside the enclosure
        note += ": inside it" + (", undecided" if upper else "")
    return AuditRow(series, quantity, at, rep, lo, a, r, upper, s, note, fr, hi)


def _enclosure_text(lo: str, hi: str, digits: int = 9) -> str:
    """``[lo, hi]`` with both ends rounded outward to ``digits`` significant digits."""
    if "inf" in (lo, hi):
        return f"[{lo}, {hi}]"
    down = Context(prec=digits, rounding=ROUND_FLOOR).plus(Decimal(lo))
    up = Context(prec=digits, rounding=ROUND_CEILING).plus(Decimal(hi))
    return f"[{_plain(down)}, {_plain(up)}]"


def _plain(x: Decimal) -> str:
    """A decimal without trailing zeros, in positional or short scientific notation."""
    x = x.normalize()
    return format(x, "f") if x == 0 or abs(x.adjusted()) < 5 else format(x, "e").replace("+", "")


def _event_text(data: dict[str, Any]) -> str:
    name = data.get("class_name", "?")
    fields = [
        f"{k}={_event_text(v) if isinstance(v, dict) else v}"
        for k, v in data.items()
        if k not in ("module_name", "class_name")
    ]
    return f"{name}({', '.join(fields)})"


def _label(series: str) -> str:
    for adapter in registry().values():
        for spec in adapter.series:
            if spec.name == series and spec.label:
                return spec.label
    return series


def format_event_table(report: EventAuditReport) -> str:
    """Plain-text report: the tree, each accountant's numbers next to the exact ones."""
    from ...numbers.format import distinct_decimals, float_str
    from ...presentation.render import align

    lines = [
        f"# audit of the accountants on the DpEvent tree {_event_text(report.event)}",
        f"# neighbouring relation {report.relation}; exact values by the {report.method} "
        "composition of the tree",
        "# versions: " + ", ".join(f"{n} {v}" for n, v in report.versions),
    ]
    for name, why in report.skipped:
        lines.append(f"# skipped {name}: {why}")
    lines.append("")
    head = ["series", "quantity", "at", "reported", "exact", "rel.err", "sound"]
    body = []
    for r in report.rows:
        if r.is_enclosure:
            rep, ex = float_str(r.reported, 8), _enclosure_text(r.exact, str(r.exact_upper))
        else:
            rep, ex = distinct_decimals(r.reported, r.exact)
        verdict = {"UNSOUND": "NO", "sound": "yes", "undecided": "undecided"}.get(r.verdict)
        if verdict is None:
            verdict = "-" if r.sound is None else ("yes" if r.sound else "NO")
        if r.float_rounding:
            verdict += " (float rounding)"
        err = "inside" if r.is_enclosure and math.isnan(r.rel_error) else float_str(r.rel_error, 3)
        body.append([r.series, r.quantity, r.at, rep, ex, err, verdict])
    lines += align(head, body)
    lines.append("")
    if any(r.is_enclosure for r in report.rows):
        lines.append(
            "# [lo, hi]: only a certified enclosure of the exact value is known; rel.err is "
            "measured against its nearer end (inside: unknown); an upper bound below lo is "
            "unsound, at or above hi sound, in between undecided"
        )
    bad = report.unsound_rows()
    if not report.rows:
        lines.append("# no accountant supports this tree: nothing was compared")
    elif bad:
        lines.append(
            f"# UNSOUND: {len(bad)} number(s) presented as upper bounds are below the exact value"
        )
        for series in dict.fromkeys(r.series for r in bad):
            worst = [r for r in bad if r.series == series]
            eps_rows = [r for r in worst if r.quantity == "epsilon"]
            r = (eps_rows or worst)[0]
            what = "eps" if r.quantity == "epsilon" else "delta"
            at = "delta" if r.quantity == "epsilon" else "eps"
            lines.append(
                f"#   {series} ({_label(series)}): {what}({at} = {r.at}) reported "
                f"{float_str(r.reported)}, exact "
                + (_enclosure_text(r.exact, str(r.exact_upper)) if r.is_enclosure else r.exact)
            )
    else:
        undecided = report.undecided_rows()
        if undecided:
            lines.append(
                f"# no number presented as an upper bound is below the exact value; "
                f"{len(undecided)} {'lies' if len(undecided) == 1 else 'lie'} inside its "
                "enclosure: undecided"
            )
        else:
            lines.append("# every number presented as an upper bound is one")
    return "\n".join(lines) + "\n"
