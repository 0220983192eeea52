"""Mechanism specs: ``--dp``/``--mech`` text and spec files become mechanism kinds.

The job of this module is parsing (docs/theory.md, section 10): a *kind* is a mechanism
satisfying several (eps, delta) constraints at once, used ``count`` times.  Specs come
from the command line (``EPS,DELTA[+EPS,DELTA...]:COUNT``) or from a TOML/JSON file a
paper can keep in its repository::

    # spec.toml
    [[mechanism]]
    constraints = [["0.3", "0"], ["0.15", "0.02"]]
    count = 20

    [[mechanism]]
    constraints = [["1", "1e-6"]]
    count = 5

Values are strings (or integers): ``0.3`` written as a TOML/JSON float is refused, since
a float is not the exact decimal; write ``"0.3"``.

Composing the kinds is the job of the front door (:func:`dpcompose_exact.compose`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..errors import InvalidParameterError
from .tradeoff import Region, dp_region

__all__ = [
    "MechanismKind",
    "parse_mech_spec",
    "parse_dp_pair",
    "parse_count",
    "parse_k",
    "kinds_from_options",
    "DEFAULT_DP",
    "DEFAULT_K",
    "load_spec",
    "MAX_COUNT",
]

DEFAULT_DP = ("0.3,0", "0.15,0.02")  # the paper's Figure 2 mechanism
DEFAULT_K = 20


@dataclass(frozen=True)
class MechanismKind:
    """One kind of mechanism: all its constraints hold at once; used ``count`` times."""

    constraints: tuple[tuple[Any, Any], ...]
    count: int

    def region(self) -> Region:
        """The region of one use (inactive constraints dropped with a warning)."""
        return dp_region(list(self.constraints))


def parse_dp_pair(text: str, where: str = "--dp") -> tuple[str, str]:
    """Parse ``EPS,DELTA``."""
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise InvalidParameterError(
            f"{where} {text!r} is malformed; expected EPS,DELTA such as 0.3,1e-5"
        )
    return parts[0].strip(), parts[1].strip()


def parse_mech_spec(text: str) -> MechanismKind:
    """Parse ``EPS,DELTA[+EPS,DELTA...]:COUNT``.

    >>> parse_mech_spec("0.3,0+0.15,0.02:5")
    MechanismKind(constraints=(('0.3', '0'), ('0.15', '0.02')), count=5)
    """
    body, sep, count = text.rpartition(":")
    if not sep or not body.strip():
        raise InvalidParameterError(
            f"--mech {text!r} is malformed; expected EPS,DELTA[+EPS,DELTA...]:COUNT "
            "such as 0.3,0+0.15,0.02:5"
        )
    pairs = tuple(parse_dp_pair(p, "--mech") for p in body.split("+"))
    return MechanismKind(pairs, parse_count(count, text))


MAX_COUNT = 10**12  # a count beyond this cannot be composed by any route (documented)


def parse_count(value: Any, where: str, positive: bool = False) -> int:
    """The one validation of a composition count (``k``, a kind's ``count``).

    Args:
        value: an int or its text (a spec file's value, a command-line word): digits, or
            a decimal literal whose exact value is an integer (``"1e9"``, ``"2.5e3"``).
        where: the parameter's name or place, shown in the message.
        positive: refuse 0 (``k >= 1``).

    Raises:
        TypeError: a float (with the hint to pass an int).
        InvalidParameterError: not an integer, negative (or 0 when ``positive``), or over
            :data:`MAX_COUNT`.
    """
    if isinstance(value, float):
        raise TypeError(f"{where} = {value!r} is a float; pass an int")
    low = 1 if positive else 0
    kind = "a positive integer (k >= 1)" if positive else "a non-negative integer"
    bad = f"{where} = {value!r} must be {kind}"
    if isinstance(value, bool):
        raise InvalidParameterError(bad)
    if isinstance(value, str) and len(value.strip()) > 40:
        raise InvalidParameterError(f"{where} is over the limit of {MAX_COUNT}")
    if isinstance(value, Decimal) and value.is_finite():  # exact, like its string
        if value.adjusted() > 40:
            raise InvalidParameterError(f"{where} is over the limit of {MAX_COUNT}")
        if value == value.to_integral_value():
            value = int(value)
    try:
        n = int(value) if isinstance(value, (int, str)) else None
    except ValueError:
        n = _exact_integer_text(value, where, bad)
    if n is None:
        raise InvalidParameterError(
            f"{bad}; write it in digits (1000000000) or in exact notation (1e9)"
            if isinstance(value, str)
            else bad
        )
    if n < low:
        raise InvalidParameterError(f"{where} = {n} must be {kind}")
    if n > MAX_COUNT:
        raise InvalidParameterError(
            f"{where} = {n} is over the limit of {MAX_COUNT} (no route composes that many)"
        )
    return n


def _exact_integer_text(text: str, where: str, bad: str) -> int | None:
    """The integer a decimal literal such as ``"1e9"`` or ``"2.5e3"`` denotes exactly.

    None when the text is no decimal literal; refused when it is one but not an integer
    (``"1.5e0"``) or too large to be a count.
    """
    try:
        d = Decimal(text.strip())
    except ArithmeticError:
        return None
    if not d.is_finite():
        return None
    if d.adjusted() > 40:
        raise InvalidParameterError(f"{where} is over the limit of {MAX_COUNT}")
    if d != d.to_integral_value():
        raise InvalidParameterError(
            f"{bad}; {text.strip()!r} is {d.normalize():f}, not a whole number (exact "
            "notation such as 1e9 or 2.5e3 is read exactly)"
        )
    return int(d)


def parse_k(text: str | None, default: int | None = DEFAULT_K) -> int | None:
    """Parse a composition count given as text; ``None`` gives ``default``."""
    if text is None:
        return default
    return parse_count(text, "k", positive=True)


def kinds_from_options(
    dp: Sequence[str] | None,
    k: str | None,
    mech: Sequence[str] | None,
    spec: str | None,
) -> list[MechanismKind]:
    """The kinds that command-line options describe: ``--dp``/``-k`` or ``--mech``/``--spec``.

    Without any of them: the paper's Figure 2 mechanism, k = 20.
    """
    if mech or spec:
        if dp or k is not None:
            raise InvalidParameterError(
                "--mech/--spec give each kind its own count; do not combine them with --dp or -k"
            )
        kinds = [parse_mech_spec(t) for t in mech or []]
        if spec:
            kinds += load_spec(spec)
        return kinds
    pairs = tuple(parse_dp_pair(t) for t in (dp or DEFAULT_DP))
    return [MechanismKind(pairs, parse_k(k) or DEFAULT_K)]


def merge_kinds(kinds: Sequence[MechanismKind]) -> list[tuple[tuple[tuple[Any, Any], ...], int]]:
    """Kinds written identically merged, counts added (10^5 identical lines cost one kind).

    Returns ``[(constraints, count), ...]`` in first-seen order; kinds with equal regions
    written differently are merged later, by the front door.
    """
    counts: dict[tuple[tuple[str, str], ...], int] = {}
    for kind in kinds:
        key = tuple((str(e).strip(), str(d).strip()) for e, d in kind.constraints)
        counts[key] = counts.get(key, 0) + kind.count
    return list(counts.items())


def load_spec(path: str | Path) -> list[MechanismKind]:
    """Read a TOML (``.toml``) or JSON file of mechanism kinds (see the module docstring)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise InvalidParameterError(f"--spec {str(path)!r}: cannot read ({exc.strerror})") from None
    try:
        if p.suffix.lower() == ".toml":
            try:
                import tomllib
            except ModuleNotFoundError:  # Python < 3.11
                import tomli as tomllib  # type: ignore[no-redef]
            data = tomllib.loads(raw.decode())
        else:
            data = json.loads(raw)
    except Exception as exc:  # parse errors of either format
        raise InvalidParameterError(f"--spec {str(path)!r}: cannot parse ({exc})") from None
    items = data.get("mechanism", data.get("mechanisms")) if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise InvalidParameterError(
            f"--spec {str(path)!r}: expected a list 'mechanism' (TOML [[mechanism]] tables "
            "or JSON {\"mechanisms\": [...]}) with 'constraints' and 'count'"
        )
    kinds = []
    for i, item in enumerate(items):
        where = f"--spec {p.name}: mechanism #{i + 1}"
        cons = item.get("constraints") if isinstance(item, dict) else None
        if not isinstance(cons, list) or not cons:
            raise InvalidParameterError(f"{where}: 'constraints' must be a list of [eps, delta]")
        pairs = []
        for c in cons:
            if not isinstance(c, list) or len(c) != 2:
                raise InvalidParameterError(f"{where}: constraint {c!r} is not [eps, delta]")
            for v in c:
                if isinstance(v, float):
                    raise InvalidParameterError(
                        f'{where}: {v!r} is a float; write it as a string ("{v}") so it is exact'
                    )
            pairs.append((str(c[0]), str(c[1])))
        kinds.append(MechanismKind(tuple(pairs), parse_count(item.get("count"), where)))
    return kinds
