"""dp_accounting ``DpEvent`` trees as mechanism kinds, and their audit.

:func:`events_to_kinds` turns a tree (read once, by
:func:`dpcompose_exact.integrations.events.event_kinds`) into mechanism kinds with (eps,
delta) constraints (:class:`~dpcompose_exact.regions.specs.MechanismKind`, docs/theory.md,
section 10); :func:`audit_events` audits the accountants' own accounting of the tree
(:mod:`dpcompose_exact.tools.audit.tree_audit`).
"""

from __future__ import annotations

from typing import Any

from ...errors import InvalidParameterError
from ...regions.protocol import PairForm
from ...regions.specs import MechanismKind
from .tree_audit import EventAuditReport, audit_event_tree

__all__ = ["events_to_kinds", "audit_events"]


def events_to_kinds(event: Any) -> list[MechanismKind]:
    """Convert a dp_accounting ``DpEvent`` into mechanism kinds (equal kinds merged).

    The tree is read by the one reader of events
    (:func:`~dpcompose_exact.integrations.events.event_kinds`, relation ``REPLACE_ONE``,
    that of randomized response); every mechanism must have an (eps, delta) constraint
    list.  Float parameters are read as the decimal they print as (``0.1`` is 1/10).

    Raises:
        InvalidParameterError: an unsupported event type (named), a mechanism without a
            constraint list (noise), or bad parameters.
    """
    from ...integrations.events import event_kinds

    read = event_kinds(event, "REPLACE_ONE")
    if read.non_private:
        raise InvalidParameterError("the DpEvent contains a non-private event: eps is infinite")
    kinds = []
    for mechanism, count in read.items:
        pairs = getattr(mechanism, "pairs", None)
        if mechanism.loss_pair().form is not PairForm.FINITE or pairs is None:
            raise InvalidParameterError(
                f"{mechanism.describe()} has no (eps, delta) constraint list; audit the tree "
                "itself with audit_events (dpcompose audit --events)"
            )
        kinds.append(MechanismKind(tuple(pairs), count))
    if not kinds:
        raise InvalidParameterError("the DpEvent composes no private mechanism (nothing to audit)")
    return kinds


def audit_events(event: Any, **kwargs: Any) -> EventAuditReport:
    """Audit the accountants' own accounting of a ``DpEvent`` tree against its exact value.

    The tree is composed exactly and handed as it is to dp_accounting's PLDAccountant and
    RdpAccountant and to prv_accountant
    (:func:`~dpcompose_exact.tools.audit.tree_audit.audit_event_tree`, whose keyword arguments
    are accepted).  To audit the libraries on the exact dominating pairs of the mapped
    kinds instead, use ``audit(events_to_kinds(event))``.
    """
    return audit_event_tree(event, **kwargs)
