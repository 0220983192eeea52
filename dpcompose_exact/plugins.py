"""One loader of entry points: the plugins of other packages, each failure recorded.

Three registries take plugins through an ``importlib.metadata`` entry-point group:
mechanism families (``dpcompose_exact.mechanisms``, :mod:`dpcompose_exact.mechanisms.families`),
output formats (``dpcompose_exact.formats``, :mod:`dpcompose_exact.presentation.formats`) and
the audit's accountants (``dpcompose_exact.accountants``,
:mod:`dpcompose_exact.tools.audit.adapters`).  Each calls :func:`load_entry_points` with its
group, what to do with a loaded object and how to word a failure: a plugin that fails to
load (an import error, an exception, an object of the wrong kind, a name taken) is
recorded under its entry point's name, never raised, so that a broken plugin cannot break
the parser, the output or the audit.  Nothing here knows about privacy.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

__all__ = ["READ_FAILED", "load_entry_points", "failure_message"]

READ_FAILED = "entry points"
"""The key of the failure to read the group itself (broken package metadata)."""


def failure_message(entry_point: Any, exc: BaseException) -> str:
    """The default record of a plugin that failed: ``VALUE: TYPE: MESSAGE``.

    >>> from importlib.metadata import EntryPoint
    >>> failure_message(EntryPoint("x", "pkg.mod:obj", "g"), ImportError("no pkg"))
    'pkg.mod:obj: ImportError: no pkg'
    """
    return f"{entry_point.value}: {type(exc).__name__}: {exc}"


def load_entry_points(
    group: str,
    accept: Callable[[str, Any], None],
    errors: MutableMapping[str, str],
    *,
    skip: Callable[[str], bool] | None = None,
    message: Callable[[Any, BaseException], str] = failure_message,
) -> None:
    """Load every entry point of ``group`` and hand each object to ``accept``.

    Args:
        group: the entry-point group (``dpcompose_exact.formats``).
        accept: ``accept(name, obj)`` registers the loaded object; an exception it raises
            (not the registry's kind, a name taken) is recorded like a failed import.
        errors: receives ``{entry point name: message}`` for each plugin that failed, and
            :data:`READ_FAILED` when the group cannot be read at all.
        skip: ``skip(name)`` true: the entry point is not loaded (already registered).
        message: words a failure (default :func:`failure_message`).

    >>> seen, errors = [], {}
    >>> load_entry_points("dpcompose_exact.no-such-group", lambda n, o: seen.append(n), errors)
    >>> seen, errors
    ([], {})
    """
    from importlib.metadata import entry_points

    try:
        found = entry_points(group=group)
    except Exception as exc:  # noqa: BLE001 - broken metadata must not break the caller
        errors[READ_FAILED] = f"reading the entry points failed: {exc}"
        return
    for ep in found:
        if skip is not None and skip(ep.name):
            continue
        try:
            accept(ep.name, ep.load())
        except Exception as exc:  # noqa: BLE001 - recorded, never raised
            errors[ep.name] = message(ep, exc)
