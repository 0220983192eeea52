"""JSON written piece by piece: the text of ``json.dumps(payload, indent=1)``, streamed.

An exact region at k = 300 prints about 450 MB of JSON.  ``json.dumps`` builds that text
in memory (and, with an indent, through Python's pure-Python encoder: millions of small
pieces); :func:`json_chunks` yields the same characters one value at a time, and the
values of a payload may be iterators (the rows of
:func:`~dpcompose_exact.presentation.rows.region_rows`, made one at a time).  Lists of
``[string, integer]`` pairs (the coefficient lists of the structured forms) take a fast
path.  Only JSON types are accepted (dicts with string keys, lists, tuples, strings,
integers, floats, booleans, None).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring_ascii
from typing import Any

from ..numbers.rowforms import DigitPairs

__all__ = ["json_chunks", "dumps"]


# printable ASCII that JSON writes as itself (not '"' or a backslash)
_PLAIN = bytes(range(0x20, 0x7F)).replace(b'"', b"").replace(b"\\", b"")


def _is_plain(text: str) -> bool:
    """Whether ``text`` needs no escaping (a byte-level scan: megabyte-long closed forms)."""
    return text.isascii() and not text.encode("ascii").translate(None, _PLAIN)


def _string(text: str) -> str:
    if len(text) > 64 and _is_plain(text):
        return f'"{text}"'
    return encode_basestring_ascii(text)


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return _string(value)
    return json.dumps(value)


def _pairs(items: list, depth: int) -> str | None:
    """The fast path: a list of ``[str, int]`` pairs, or None when it is not one."""
    if type(items) is DigitPairs:  # decimal integers and exponents, by construction
        outer = " " * (depth + 1)
        inner = " " * (depth + 2)
        return (
            f"[\n{outer}"
            + f",\n{outer}".join(f'[\n{inner}"{s}",\n{inner}{i}\n{outer}]' for s, i in items)
            + f"\n{' ' * depth}]"
        )
    for it in items:
        if not (
            isinstance(it, list) and len(it) == 2 and isinstance(it[0], str) and type(it[1]) is int
        ):
            return None
    outer = " " * (depth + 1)
    inner = " " * (depth + 2)
    if _is_plain("".join(s for s, _ in items)):  # one scan for the whole list
        body = f",\n{outer}".join(f'[\n{inner}"{s}",\n{inner}{i}\n{outer}]' for s, i in items)
    else:
        enc = encode_basestring_ascii
        body = f",\n{outer}".join(f"[\n{inner}{enc(s)},\n{inner}{i}\n{outer}]" for s, i in items)
    return f"[\n{outer}{body}\n{' ' * depth}]"


def _text(value: Any, depth: int) -> str:
    """``value`` at nesting ``depth`` (indent 1), as ``json.dumps(..., indent=1)``."""
    return "".join(_pieces(value, depth))


def _pieces(value: Any, depth: int) -> Iterator[str]:
    """The text of :func:`_text` in pieces (long strings are not copied into a parent)."""
    if isinstance(value, dict):
        if not value:
            yield "{}"
            return
        if not all(isinstance(k, str) for k in value):  # json's own key conversions
            yield json.dumps(value, indent=1).replace("\n", "\n" + " " * depth)
            return
        pad = "\n" + " " * (depth + 1)
        sep = "{" + pad
        for k, v in value.items():
            yield f"{sep}{_key(k)}: "
            yield from _pieces(v, depth + 1)
            sep = "," + pad
        yield "\n" + " " * depth + "}"
        return
    if isinstance(value, (list, tuple)):
        if not value:
            yield "[]"
            return
        fast = _pairs(value, depth) if isinstance(value, list) else None
        if fast is not None:
            yield fast
            return
        pad = "\n" + " " * (depth + 1)
        sep = "[" + pad
        for v in value:
            yield sep
            yield from _pieces(v, depth + 1)
            sep = "," + pad
        yield "\n" + " " * depth + "]"
        return
    yield _scalar(value)


def _key(key: str) -> str:
    return encode_basestring_ascii(key)


def json_chunks(payload: dict[str, Any], end: str = "") -> Iterator[str]:
    """Pieces whose concatenation is ``json.dumps(payload, indent=1) + end``.

    Values of the top-level dict that are iterators (not lists, tuples, dicts or strings)
    are consumed one item at a time, each item written as soon as it is made.
    """
    if not payload:
        yield "{}" + end
        return
    if not all(isinstance(k, str) for k in payload):
        yield json.dumps(payload, indent=1) + end
        return
    yield "{"
    first = True
    for key, value in payload.items():
        yield ("\n " if first else ",\n ") + _key(key) + ": "
        first = False
        if isinstance(value, Iterable) and not isinstance(value, (str, list, tuple, dict)):
            yield from _stream_list(value)
        else:
            yield from _pieces(value, 1)
    yield "\n}" + end


def _stream_list(items: Iterable[Any]) -> Iterator[str]:
    it = iter(items)
    try:
        head = next(it)
    except StopIteration:
        yield "[]"
        return
    yield "[\n  "
    yield from _pieces(head, 2)
    for item in it:
        yield ",\n  "
        yield from _pieces(item, 2)
    yield "\n ]"


def dumps(payload: dict[str, Any]) -> str:
    """``json.dumps(payload, indent=1)``, through :func:`json_chunks` (for tests)."""
    return "".join(json_chunks(payload))
