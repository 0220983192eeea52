"""Bridges to other differential-privacy libraries (optional dependencies).

* :mod:`dpcompose_exact.integrations.dp_accounting`: ``ExactAccountant``, a drop-in
  ``dp_accounting.PrivacyAccountant`` that composes exactly, and ``DpConstraintsEvent``,
  a ``DpEvent`` for a mechanism with several (eps, delta) constraints
  (the ``dp-accounting`` extra: ``pip install ".[dp-accounting]"`` in a checkout; importing
  it without dp_accounting raises one line naming the extra).

Exports of a single mechanism or a composition to dp_accounting, prv_accountant and
OpenDP are methods of :class:`~dpcompose_exact.api.Mechanism` and
:class:`~dpcompose_exact.composition.Composition` (implemented in
:mod:`dpcompose_exact.presentation.export`).
The submodules import their library when they are imported, not this package.

This package holds the depth limit of a ``DpEvent`` tree (:data:`MAX_EVENT_DEPTH`,
:func:`check_event_depth`, :func:`check_json_depth`): the walkers of event trees
(:mod:`~dpcompose_exact.integrations.event_tree`, the audit's
:mod:`~dpcompose_exact.tools.audit.events` and :mod:`~dpcompose_exact.tools.audit.event_tree`)
and dp_accounting's own accountants recurse once or twice per level, so a tree nested
thousands of levels deep would end in Python's ``RecursionError``; these refuse it up
front, in one line that states the limit, by an explicit stack.  They import neither
dp_accounting nor a submodule: events are recognized by their fields, as in the audit.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidParameterError

__all__ = ["MAX_EVENT_DEPTH", "check_event_depth", "check_json_depth"]

MAX_EVENT_DEPTH = 200
"""Most levels of a ``DpEvent`` tree (a leaf alone is one level).

Real trees (DP-SGD steps, a few composed mechanisms) are a handful of levels deep; 200
leaves room under Python's default recursion limit (1000) for walkers that take up to
three frames per level and for their callers."""

_HINT = (
    "flatten nested ComposedDpEvent lists into one list, and write repetitions as "
    "SelfComposedDpEvent(event, count)"
)


def _refuse(what: str, limit: int) -> InvalidParameterError:
    return InvalidParameterError(
        f"{what} is nested more than {limit} levels deep; the valid range is 1 to {limit} "
        f"levels: {_HINT}"
    )


def _event_children(event: Any) -> list[Any]:
    out = []
    inner = getattr(event, "event", None)
    if inner is not None and not isinstance(inner, (str, bytes)):
        out.append(inner)
    events = getattr(event, "events", None)
    if events is not None and not isinstance(events, (str, bytes)):
        try:
            out.extend(events)
        except TypeError:
            pass
    return out


def check_event_depth(event: Any, limit: int = MAX_EVENT_DEPTH) -> int:
    """The depth of a ``DpEvent`` tree; refused beyond ``limit`` levels.

    Children are an event's ``event`` field (sampled and self-composed events) and the
    items of its ``events`` field (composed events).  The walk uses an explicit stack and
    stops at the first level beyond the limit.

    Args:
        event: the root of the tree.
        limit: the most levels allowed.

    Returns:
        The depth (a leaf alone: 1).

    Raises:
        InvalidParameterError: the tree is deeper than ``limit``; the message states the
            limit and how to flatten the tree.

    >>> class Leaf: pass
    >>> check_event_depth(Leaf())
    1
    """
    deepest = 0
    stack = [(event, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise _refuse(f"the DpEvent tree {type(event).__name__}(...)", limit)
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in _event_children(node))
    return deepest


def check_json_depth(data: Any, limit: int = MAX_EVENT_DEPTH, what: str = "the event") -> int:
    """The depth of the JSON form of an event tree (objects nested in objects or arrays).

    Each event is one level (an array of events is not one more).

    Args:
        data: the decoded JSON (dicts, lists, scalars).
        limit: the most event levels allowed.
        what: the input's name, for the message.

    Returns:
        The number of nested event objects on the longest path.

    Raises:
        InvalidParameterError: deeper than ``limit`` events.

    >>> check_json_depth({"class_name": "ComposedDpEvent", "events": [{"class_name": "X"}]})
    2
    """
    deepest = 0
    stack = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            depth += 1
            if depth > limit:
                raise _refuse(what, limit)
            deepest = max(deepest, depth)
            stack.extend((v, depth) for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, depth) for v in node if isinstance(v, (dict, list)))
    return deepest
