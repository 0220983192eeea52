"""Audit numeric privacy accountants (dp_accounting, prv_accountant) against the exact composition.

One module per job:

* :mod:`~dpcompose_exact.tools.audit.adapters`: the one adapter interface
  (:class:`~dpcompose_exact.tools.audit.adapters.Adapter`, :class:`Claim`) and the registry
  (:func:`register`, entry points of the group ``dpcompose_exact.accountants``);
* :mod:`~dpcompose_exact.tools.audit.accountants`: the accountants' names, the libraries
  behind them, which are installed (derived from the registry);
* :mod:`~dpcompose_exact.tools.audit.boundary`: the exact dominating pair rounded to doubles
  (the float boundary);
* :mod:`~dpcompose_exact.tools.audit.pld_adapter`, :mod:`~dpcompose_exact.tools.audit.rdp_adapter`,
  :mod:`~dpcompose_exact.tools.audit.prv_adapter`: the built-in adapters, one file per
  library;
* :mod:`~dpcompose_exact.tools.audit.compare`: :func:`audit`, the exact values against the float
  series and the soundness decisions (what is audited and why: docs/theory.md, sections 1
  and 3);
* :mod:`~dpcompose_exact.tools.audit.report`: :class:`AuditRow` and :class:`AuditReport`;
* :mod:`~dpcompose_exact.tools.audit.events`: dp_accounting ``DpEvent`` trees as mechanism kinds;
* :mod:`~dpcompose_exact.tools.audit.tree_audit`: the accountants' own accounting of a ``DpEvent``
  tree against its exact composition, and the JSON form of the trees.

The names below are re-exported here, so ``from dpcompose_exact.tools.audit import audit`` works.
Patch a function where it is looked up: the PLD adapter calls ``pld_adapter.run_pld`` (and
the other adapters their ``run_*``) through their modules, and the built-in adapters import
their libraries through ``accountants._IMPORTERS``.
"""

from __future__ import annotations

from .accountants import (
    _IMPORTERS,
    ACCOUNTANTS,
    AUDIT_EXTRA_HINT,
    LIBRARY,
    SERIES,
    UPPER_BOUND_SERIES,
    AccountantsMissingError,
    _import_dp_accounting,
    _import_prv_accountant,
    available_accountants,
)
from .adapters import (
    ENTRY_POINT_GROUP,
    Adapter,
    Claim,
    Job,
    Series,
    TreeJob,
    register,
    registry,
    unregister,
)
from .compare import (
    DEFAULT_DELTAS,
    DEFAULT_PLD_GRID,
    DEFAULT_PRV_DELTA_ERROR,
    DEFAULT_PRV_EPS_ERROR,
    FLOAT_ROUNDING,
    FLOAT_ULPS,
    _compare,
    audit,
)
from .events import audit_events, events_to_kinds
from .report import AuditReport, AuditRow
from .tree_audit import (
    TREE_ACCOUNTANTS,
    EventAuditReport,
    audit_event_tree,
    event_from_json,
    event_to_json,
    format_event_table,
    load_events,
)

__all__ = [
    "Adapter",
    "Claim",
    "Series",
    "Job",
    "TreeJob",
    "register",
    "unregister",
    "registry",
    "ENTRY_POINT_GROUP",
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
    "audit_event_tree",
    "EventAuditReport",
    "TREE_ACCOUNTANTS",
    "event_to_json",
    "event_from_json",
    "format_event_table",
    "load_events",
    "available_accountants",
]
