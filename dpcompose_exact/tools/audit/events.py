"""dp_accounting ``DpEvent`` trees as mechanism kinds, and their audit.

:func:`events_to_kinds` translates the events an accountant user already has
(``EpsilonDeltaDpEvent``, ``RandomizedResponseDpEvent``, ``SelfComposedDpEvent``,
``ComposedDpEvent``, ``NoOpDpEvent``) into mechanism kinds with (eps, delta) constraints
(:class:`~dpcompose_exact.regions.specs.MechanismKind`, docs/theory.md, section 10);
:func:`audit_events` audits the accountants' own accounting of the tree
(:mod:`dpcompose_exact.tools.audit.event_tree`).  The
events are recognized by their class names, so this module does not import dp_accounting.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

from ...errors import InvalidParameterError
from ...integrations import check_event_depth
from ...numbers.format import float_text
from ...regions.specs import MechanismKind
from .event_tree import EventAuditReport, audit_event_tree

__all__ = ["events_to_kinds", "audit_events"]


def _float_text(value: Any, what: str, event: Any) -> str:
    """An event's float parameter as the decimal it was written as (shortest repr)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Fraction, Decimal)):
        raise InvalidParameterError(f"{type(event).__name__}: {what} = {value!r} is not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidParameterError(f"{type(event).__name__}: {what} = {value!r} is not finite")
    return str(float_text(value))


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
        p = Fraction(Decimal(_float_text(event.noise_parameter, "noise_parameter", event)))
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
        InvalidParameterError: an unsupported event type (named), bad parameters, or a
            tree nested deeper than
            :data:`~dpcompose_exact.integrations.MAX_EVENT_DEPTH` levels.
    """
    check_event_depth(event)
    raw: list[MechanismKind] = []
    _event_kinds(event, 1, raw)
    merged: dict[tuple, int] = {}
    for k in raw:
        merged[k.constraints] = merged.get(k.constraints, 0) + k.count
    kinds = [MechanismKind(c, n) for c, n in merged.items() if n]
    if not kinds:
        raise InvalidParameterError("the DpEvent composes no private mechanism (nothing to audit)")
    return kinds


def audit_events(event: Any, **kwargs: Any) -> EventAuditReport:
    """Audit the accountants' own accounting of a ``DpEvent`` tree against its exact value.

    The tree is composed exactly and handed as it is to dp_accounting's PLDAccountant and
    RdpAccountant and to prv_accountant
    (:func:`~dpcompose_exact.tools.audit.event_tree.audit_event_tree`, whose keyword arguments
    are accepted).  To audit the libraries on the exact dominating pairs of the mapped
    kinds instead, use ``audit(events_to_kinds(event))``.
    """
    return audit_event_tree(event, **kwargs)
