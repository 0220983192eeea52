"""Long closed forms kept out of the main output: a size budget and a separate forms file.

A composition of many mechanisms has exact deltas of thousands of characters each; in
JSON (a string that ``sympy.sympify`` parses plus the structured coefficient lists) the
paper's spec example would take megabytes.  By default the JSON keeps every form only
while their total stays under :data:`JSON_FORMS_BUDGET` bytes; past it the forms are left
out of the rows (the certified and directed decimals stay) and the output says how to get
them: ``--forms FILE`` writes them to a separate JSON file that the rows refer to
(``"form": "FILE#i"``), ``--exact always`` keeps them inline whatever their size.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ["JSON_FORMS_BUDGET", "FORM_KEYS", "budget_forms", "split_forms", "write_forms"]

#: bytes of closed forms the JSON output carries inline by default.
JSON_FORMS_BUDGET = 512 * 1024

#: the row keys that hold an exact delta.
FORM_KEYS = ("delta", "delta_structured")


def _size(rows: Sequence[dict[str, Any]]) -> int:
    return sum(len(json.dumps(r[k])) for r in rows for k in FORM_KEYS if k in r)


def write_forms(rows: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Write ``{"forms": [{"index", "epsilon", "delta", "delta_structured"}, ...]}``."""
    forms = [
        {"index": i, **{k: r[k] for k in ("epsilon", *FORM_KEYS) if k in r}}
        for i, r in enumerate(rows)
    ]
    Path(path).write_text(json.dumps({"forms": forms}, indent=1) + "\n", encoding="utf-8")


def split_forms(
    rows: list[dict[str, Any]],
    forms_path: str | None = None,
    exact: str = "auto",
    budget: int = JSON_FORMS_BUDGET,
) -> tuple[list[dict[str, Any]], str | None]:
    """Rows for the JSON output and a note, or the rows unchanged.

    Args:
        rows: rows with exact forms (``delta``, ``delta_structured``).
        forms_path: where to write every form (then each row refers to it by ``form``).
        exact: ``always`` keeps every form inline; ``never`` drops them; ``auto`` keeps
            them while their total is under ``budget`` bytes.
        budget: the inline size allowed with ``auto``.

    Returns:
        ``(rows, note)``; the note (None when nothing was left out) says what happened.

    >>> rows = [{"epsilon": "0", "delta": "1/2", "delta_decimal": "0.5"}]
    >>> split_forms(rows, budget=1)[0], split_forms(rows, budget=1)[1][:31]
    ([{'epsilon': '0', 'delta_decimal': '0.5'}], 'exact deltas left out (5 bytes;')
    """
    if forms_path is not None:
        write_forms(rows, forms_path)
        out = [{k: v for k, v in r.items() if k not in FORM_KEYS} for r in rows]
        for i, r in enumerate(out):
            r["form"] = f"{forms_path}#{i}"
        return out, f"exact deltas written to {forms_path} (rows refer to them by index)"
    size = _size(rows)
    if exact == "always" or size == 0 or (exact == "auto" and size <= budget):
        return rows, None
    out = [{k: v for k, v in r.items() if k not in FORM_KEYS} for r in rows]
    return out, (
        f"exact deltas left out ({size} bytes; over {budget} for --exact auto): "
        "--forms FILE writes them to a file, --exact always keeps them inline"
    )


def _strip(r: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in r.items() if k not in FORM_KEYS}


def budget_forms(
    rows: Iterable[dict[str, Any]],
    forms: str = "auto",
    forms_path: str | None = None,
    budget: int = JSON_FORMS_BUDGET,
    stop: Callable[[], None] | None = None,
) -> tuple[Iterator[dict[str, Any]], str | None]:
    """:func:`split_forms` for rows made one at a time (the streamed JSON output).

    With ``forms="auto"`` the rows are read until their forms pass ``budget`` bytes: when
    they never do, every row is passed on as it is; else the forms are left out of every
    row (those read and those to come), and the note says so.  ``forms="never"`` leaves
    them out (no note); a ``forms_path`` takes every row and writes the forms there.

    ``stop`` is called as soon as the forms are known to be left out (before the next row
    is made): a producer that listens (``forms_wanted`` of
    :func:`~dpcompose_exact.presentation.rows.region_rows`) makes no more forms,
    which are most of the cost of a large exact region.
    """
    if forms_path is not None:
        out, note = split_forms(list(rows), forms_path, forms)
        return iter(out), note
    it = iter(rows)
    if forms == "never":
        if stop is not None:
            stop()
        return (_strip(r) for r in it), None
    head: list[dict[str, Any]] = []
    size = 0
    for r in it:
        head.append(r)
        size += _size([r])
        if size > budget:
            if stop is not None:
                stop()
            break
    else:
        return iter(head), None
    note = (
        f"exact deltas left out (over {budget} bytes for --exact auto): "
        "--forms FILE writes them to a file, --exact always keeps them inline"
    )

    def stripped() -> Iterator[dict[str, Any]]:
        for r in head:
            yield _strip(r)
        for r in it:
            yield _strip(r)

    return stripped(), note
