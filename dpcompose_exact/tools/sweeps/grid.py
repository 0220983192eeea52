"""The grid file: a mechanism template, the grid of values, the queries.

A grid file (TOML, or JSON with the same structure) names a mechanism template whose
strings hold ``{placeholders}``, the grid (the cartesian product of the listed values)
and the queries; see :mod:`dpcompose_exact.tools.sweeps`.  This module reads and validates it
(:func:`load_grid`) and substitutes a grid point into the templates (:func:`substitute`):
in parentheses when the string holds more than the placeholder, so ``"{eps}/2"`` halves
the whole value.  Values are strings or integers; floats are refused.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import InvalidParameterError
from ...regions.specs import families as known_families

__all__ = [
    "Grid",
    "load_grid",
    "substitute",
    "substitute_item",
    "mechanism_items",
    "point_queries",
    "QUERIES",
    "COLUMNS",
]

QUERIES = ("delta_at_epsilon", "epsilon_at_delta", "audit")
"""Query kinds of a grid file's ``[query]`` table."""

#: The table's columns after the grid variables: the cell, its value, how it was found.
COLUMNS = (
    "query",
    "at",
    "series",
    "value",
    "exact",
    "lower",
    "upper",
    "method",
    "rel_error",
    "sound",
    "seconds",
    "error",
)

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Grid:
    """A validated grid file.

    Attributes:
        source: the file name (for messages).
        mechanisms: ``((item template, count template), ...)``: each item template is the
            JSON of a spec-file item without its count (``{"constraints": [[EPS, DELTA],
            ...]}``, ``{"noise": "gaussian", "scale": "{sigma}", "subsample": "{q}"}``,
            ...), its strings holding ``{placeholders}``.
        variables: ``((name, values), ...)`` in file order; the grid is their product.
        delta_at_epsilon: epsilon templates where delta(eps) is asked.
        epsilon_at_delta: delta templates where eps(delta) is asked.
        audit: the accountants to run per grid point (empty: no audit).
    """

    source: str
    mechanisms: tuple[tuple[str, str], ...]
    variables: tuple[tuple[str, tuple[Any, ...]], ...]
    delta_at_epsilon: tuple[str, ...] = ()
    epsilon_at_delta: tuple[str, ...] = ()
    audit: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The grid variables, in file order (the first columns of the table)."""
        return tuple(n for n, _ in self.variables)

    def __len__(self) -> int:
        return math.prod(len(v) for _, v in self.variables)

    def points(self) -> Iterator[dict[str, Any]]:
        """The grid points (cartesian product, last variable fastest)."""
        names = self.names
        for combo in itertools.product(*(v for _, v in self.variables)):
            yield dict(zip(names, combo))

    @property
    def queries_per_point(self) -> int:
        """Cells per grid point (the audit counts as one cell)."""
        return len(self.delta_at_epsilon) + len(self.epsilon_at_delta) + bool(self.audit)


def _fail(source: str, key: str, problem: str, accepted: str) -> InvalidParameterError:
    return InvalidParameterError(f"grid file {source}: {key}: {problem}; {accepted}")


def _read_grid_file(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidParameterError(
            f"grid file {str(path)!r}: cannot read ({exc.strerror})"
        ) from None
    try:
        if path.suffix.lower() == ".json":
            return json.loads(raw)
        try:
            import tomllib
        except ModuleNotFoundError:  # Python < 3.11
            import tomli as tomllib  # type: ignore[no-redef]
        return tomllib.loads(raw.decode())
    except Exception as exc:  # parse errors of either format
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
        raise InvalidParameterError(
            f"grid file {path.name}: cannot parse as {kind} ({first}); expected the "
            "[[mechanism]], [grid] and [query] tables"
        ) from None


def _scalar(source: str, key: str, v: Any, what: str) -> Any:
    """A template or grid value: a string or an int (floats are not exact)."""
    if isinstance(v, bool):
        raise _fail(source, key, f"{v!r} is a boolean", f"expected {what}")
    if isinstance(v, float):
        raise _fail(
            source, key, f"{v!r} is a float, which is not exact", f'write it as a string ("{v}")'
        )
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip():
        return v.strip()
    raise _fail(source, key, f"{v!r} is not a value", f"expected {what}")


def load_grid(source: str | os.PathLike[str] | Mapping[str, Any]) -> Grid:
    """Read and validate a grid file (TOML, or ``.json``) or a dict of the same structure.

    Raises:
        InvalidParameterError: one line naming the file, the key and what is accepted.
    """
    if isinstance(source, Mapping):
        name, data = "<dict>", source
    else:
        path = Path(source)
        name, data = path.name, _read_grid_file(path)
    if not isinstance(data, Mapping):
        raise _fail(name, "(top level)", "not a table", "expected [[mechanism]], [grid], [query]")
    unknown = sorted(set(data) - {"mechanism", "mechanisms", "grid", "query"})
    if unknown:
        raise _fail(
            name, unknown[0], "unknown key", "accepted: mechanism (or mechanisms), grid, query"
        )
    mechs = _load_mechanisms(name, data.get("mechanism", data.get("mechanisms")))
    variables = _load_variables(name, data.get("grid", {}))
    queries = _load_queries(name, data.get("query"))
    grid = Grid(name, mechs, variables, *queries)
    _check_placeholders(grid)
    return grid


def _load_mechanisms(name: str, items: Any) -> tuple:
    if not isinstance(items, list) or not items:
        raise _fail(
            name,
            "mechanism",
            "missing or empty",
            'expected [[mechanism]] tables with constraints = [["EPS", "DELTA"], ...] and count',
        )
    out = []
    for i, item in enumerate(items):
        key = f"mechanism[{i}]"
        if not isinstance(item, Mapping):
            raise _fail(name, key, "not a table", "expected constraints and count")
        families = [k for k in item if k in known_families() or k == "noise"]
        if families:  # a mechanism of another family: its spec-file item, templated
            out.append((_family_template(name, key, item), _count(name, key, item)))
            continue
        extra = sorted(set(item) - {"constraints", "count", "subsample"})
        if extra:
            raise _fail(
                name,
                f"{key}.{extra[0]}",
                "unknown key",
                f"accepted: constraints, count, subsample, noise, {', '.join(known_families())}",
            )
        cons = item.get("constraints")
        if not isinstance(cons, list) or not cons:
            raise _fail(
                name,
                f"{key}.constraints",
                "missing or empty",
                'expected a list of ["EPS", "DELTA"] pairs',
            )
        pairs = []
        for j, c in enumerate(cons):
            ckey = f"{key}.constraints[{j}]"
            if not isinstance(c, list) or len(c) != 2:
                raise _fail(name, ckey, f"{c!r} is not a pair", 'expected ["EPS", "DELTA"]')
            what = 'a string such as "0.3" or "{eps}/2", or an integer'
            pairs.append([str(_scalar(name, ckey, v, what)) for v in c])
        template: dict[str, Any] = {"constraints": pairs}
        if "subsample" in item:
            template["subsample"] = str(
                _scalar(name, f"{key}.subsample", item["subsample"], 'a rate such as "{q}"')
            )
        out.append((json.dumps(template, sort_keys=True), _count(name, key, item)))
    return tuple(out)


def _count(name: str, key: str, item: Mapping[str, Any]) -> str:
    if "count" not in item:
        raise _fail(name, f"{key}.count", "missing", 'expected an integer or "{k}"')
    return str(_scalar(name, f"{key}.count", item["count"], 'an integer or "{k}"'))


def _family_template(name: str, key: str, item: Mapping[str, Any]) -> str:
    """A family's item (noise, randomized response, ...) as a JSON template, leaves checked."""

    def leaves(value: Any, where: str) -> Any:
        if isinstance(value, Mapping):
            return {str(k): leaves(v, f"{where}.{k}") for k, v in value.items()}
        return str(_scalar(name, where, value, 'a string such as "1/2" or "{sigma}"'))

    return json.dumps(
        {k: leaves(v, f"{key}.{k}") for k, v in item.items() if k != "count"}, sort_keys=True
    )


def mechanism_items(grid: Grid) -> list[tuple[dict[str, Any], str]]:
    """The mechanism templates as ``(spec-file item without count, count template)``."""
    return [(json.loads(item), count) for item, count in grid.mechanisms]


def _template_strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _template_strings(v, f"{where}.{k}")
    elif isinstance(value, list):
        for j, v in enumerate(value):
            yield from _template_strings(v, f"{where}[{j}]")
    else:
        yield where, str(value)


def substitute_item(item: Any, point: Mapping[str, Any]) -> Any:
    """:func:`substitute` in every string of a mechanism template."""
    if isinstance(item, Mapping):
        return {k: substitute_item(v, point) for k, v in item.items()}
    if isinstance(item, list):
        return [substitute_item(v, point) for v in item]
    return substitute(str(item), point)


def _load_variables(name: str, table: Any) -> tuple:
    if not isinstance(table, Mapping):
        raise _fail(name, "grid", "not a table", "expected [grid] with NAME = [values, ...]")
    out = []
    for var, values in table.items():
        key = f"grid.{var}"
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var):
            raise _fail(name, key, "not a valid name", "names are letters, digits and _")
        if var in COLUMNS:
            raise _fail(name, key, "the name is a column of the table", "choose another name")
        if not isinstance(values, list) or not values:
            raise _fail(name, key, f"{values!r} is not a non-empty list", "expected [v1, v2, ...]")
        vals = tuple(
            _scalar(name, f"{key}[{i}]", v, "a string or an integer") for i, v in enumerate(values)
        )
        out.append((var, vals))
    return tuple(out)


def _load_queries(name: str, table: Any) -> tuple:
    accepted = "accepted: delta_at_epsilon, epsilon_at_delta (lists), audit (true or a list)"
    if not isinstance(table, Mapping):
        raise _fail(name, "query", "missing or not a table", accepted)
    extra = sorted(set(table) - set(QUERIES))
    if extra:
        raise _fail(name, f"query.{extra[0]}", "unknown query", accepted)
    lists = []
    for q in ("delta_at_epsilon", "epsilon_at_delta"):
        vals = table.get(q, [])
        if isinstance(vals, (str, int)) and not isinstance(vals, bool):
            vals = [vals]
        if not isinstance(vals, list):
            raise _fail(name, f"query.{q}", f"{vals!r} is not a list", 'expected ["1", "2"]')
        lists.append(
            tuple(
                str(_scalar(name, f"query.{q}[{i}]", v, "a string or an integer"))
                for i, v in enumerate(vals)
            )
        )
    audit = table.get("audit", False)
    from ..audit import ACCOUNTANTS  # the accountant names only; no library is imported

    if isinstance(audit, bool):
        accountants = ACCOUNTANTS if audit else ()
    elif isinstance(audit, list) and audit and all(a in ACCOUNTANTS for a in audit):
        accountants = tuple(dict.fromkeys(audit))
    else:
        raise _fail(
            name, "query.audit", f"{audit!r}", f"expected true, false or a list of {ACCOUNTANTS}"
        )
    if not (lists[0] or lists[1] or accountants):
        raise _fail(name, "query", "no query", accepted)
    return lists[0], lists[1], tuple(accountants)


def _check_placeholders(grid: Grid) -> None:
    names = set(grid.names)
    used: set[str] = set()
    templates = [
        pair
        for i, (item, _) in enumerate(mechanism_items(grid))
        for pair in _template_strings(item, f"mechanism[{i}]")
    ]
    templates += [(f"mechanism[{i}].count", c) for i, (_, c) in enumerate(grid.mechanisms)]
    templates += [("query.delta_at_epsilon", s) for s in grid.delta_at_epsilon]
    templates += [("query.epsilon_at_delta", s) for s in grid.epsilon_at_delta]
    for key, text in templates:
        for var in _PLACEHOLDER.findall(text):
            if var not in names:
                known = ", ".join(sorted(names)) or "none"
                raise _fail(
                    grid.source,
                    key,
                    f"placeholder {{{var}}} is not a grid variable",
                    f"grid variables: {known}",
                )
            used.add(var)
        if "{" in _PLACEHOLDER.sub("", text) or "}" in _PLACEHOLDER.sub("", text):
            raise _fail(grid.source, key, f"{text!r} has a stray brace", "write {name}")
    for var in grid.names:
        if var not in used:
            raise _fail(
                grid.source,
                f"grid.{var}",
                "used by no {" + var + "} placeholder",
                "every grid variable must appear in a template",
            )


def substitute(text: str, point: Mapping[str, Any], wrap: bool = True) -> str:
    """Replace the placeholders; parenthesize unless the string is one placeholder."""
    bare = not wrap or _PLACEHOLDER.fullmatch(text) is not None

    def repl(m: re.Match[str]) -> str:
        v = str(point[m.group(1)])
        return v if bare else f"({v})"

    return _PLACEHOLDER.sub(repl, text)


def point_queries(g: Grid, point: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    """The queries of one grid point: ``(kind, point as written)``; the audit's is ``""``."""
    for at in g.delta_at_epsilon:
        yield "delta_at_epsilon", substitute(at, point)
    for at in g.epsilon_at_delta:
        yield "epsilon_at_delta", substitute(at, point)
    if g.audit:
        yield "audit", ""
