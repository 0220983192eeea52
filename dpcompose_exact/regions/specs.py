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
import numbers
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers.format import compact_exact
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
    "MAX_COUNT_DIGITS",
    "MAX_KINDS",
    "check_kind_count",
    "FAMILIES",
    "Family",
    "add_family",
    "families",
    "on_first_lookup",
    "family_named",
    "parse_family",
    "kind_of_item",
]

DEFAULT_DP = ("0.3,0", "0.15,0.02")  # the paper's Figure 2 mechanism
DEFAULT_K = 20


@dataclass(frozen=True)
class Family:
    """A family of mechanisms a spec can name, and how its parameters are written.

    Attributes:
        name: the spec-file key and the CLI name (``gaussian``).
        params: the parameters' names, required ones first (``("sigma", "sensitivity")``).
        defaults: the defaults of the optional parameters (the last ``len(defaults)``).
        short: a shorter CLI name (``rr`` for ``randomized_response``), or None.
    """

    name: str
    params: tuple[str, ...]
    defaults: tuple[str, ...] = ()
    short: str | None = None

    @property
    def spelling(self) -> str:
        """``gaussian(SIGMA[,SENSITIVITY])``: how the CLI writes it."""
        need = len(self.params) - len(self.defaults)
        req = ",".join(p.upper() for p in self.params[:need])
        opt = "".join(f"[,{p.upper()}]" for p in self.params[need:])
        return f"{self.short or self.name}({req}{opt})"

    def filled(self, args: Sequence[str], where: str) -> tuple[str, ...]:
        """The parameters with the defaults filled in (a wrong count refused)."""
        need = len(self.params) - len(self.defaults)
        if not need <= len(args) <= len(self.params) or not all(args):
            count = need if not self.defaults else f"{need} to {len(self.params)}"
            raise InvalidParameterError(
                f"{where}: {self.name} takes {count} parameter(s); expected {self.spelling}"
            )
        return tuple(args) + self.defaults[len(args) - need :]


#: every family a spec can name (``dp`` is written EPS,DELTA[+EPS,DELTA...]); the
#: mechanisms layer registers the builders (:mod:`dpcompose_exact.mechanisms.families`),
#: third-party families included (read them through :func:`families`)
FAMILIES: dict[str, Family] = {}

#: run once, before the first lookup of a family: the layers above add families they
#: find late (the entry points of :mod:`dpcompose_exact.mechanisms.families`)
_LOADERS: list[Callable[[], None]] = []


def on_first_lookup(loader: Callable[[], None]) -> None:
    """Run ``loader`` once before the families are next looked up (it may add some)."""
    _LOADERS.append(loader)


def families() -> dict[str, Family]:
    """Every family a spec can name, those of the entry points included."""
    while _LOADERS:
        _LOADERS.pop(0)()
    return FAMILIES


def add_family(family: Family) -> Family:
    """Make ``family`` known to the spec parsers (its CLI and spec-file spellings).

    Raises:
        InvalidParameterError: the name or the short name is taken by another family.
    """
    for name in (family.name, family.short):
        known = family_named(name) if name else None
        if known is not None and known != family:
            raise InvalidParameterError(f"a mechanism family named {name!r} exists already")
    FAMILIES[family.name] = family
    return family


def family_named(name: str) -> Family | None:
    """The family of a name or short name (case-insensitive), or None."""
    key = name.strip().lower()
    known = families()
    return known.get(key) or next((f for f in known.values() if f.short == key), None)


for _builtin in (
    Family("gaussian", ("sigma", "sensitivity"), ("1",)),
    Family("laplace", ("b", "sensitivity"), ("1",)),
    Family("randomized_response", ("p", "buckets"), ("2",), short="rr"),
    Family("discrete_laplace", ("a", "sensitivity"), ("1",), short="dlap"),
    Family("random_allocation", ("sigma", "steps", "t", "sensitivity"), ("1", "1"), "allocate"),
    Family("mixture_of_gaussians", ("sigma", "sensitivities", "probs"), (), "mog"),
):
    add_family(_builtin)


@dataclass(frozen=True)
class MechanismKind:
    """One kind of mechanism, used ``count`` times.

    Attributes:
        constraints: the (eps, delta) constraints that hold at once (family ``dp``).
        count: the number of uses.
        family: ``dp`` (constraints) or the name of a :class:`Family` of :data:`FAMILIES`
            (``gaussian``, ``laplace``, ``randomized_response``, ``discrete_laplace``, and
            any registered one).
        params: the family's parameters as exact strings, defaults filled in (none for
            ``dp``).
        subsample: the sampling rate when the mechanism runs on a subsample (None: not).
    """

    constraints: tuple[tuple[Any, Any], ...]
    count: int
    family: str = "dp"
    params: tuple[str, ...] = ()
    subsample: str | None = None

    def region(self) -> Region:
        """The region of one use (inactive constraints dropped with a warning).

        Raises:
            InvalidParameterError: a family other than ``dp``, or a subsampled kind: no
                (eps, delta) constraint list describes it.
        """
        if self.family != "dp" or self.subsample is not None:
            raise InvalidParameterError(
                f"{self.describe()} has no (eps, delta) constraint list; only EPS,DELTA "
                "mechanisms have one"
            )
        return dp_region(list(self.constraints))

    def describe(self) -> str:
        """The spec as written on the command line (without the count)."""
        if self.family == "dp":
            body = "+".join(f"{e},{d}" for e, d in self.constraints)
        else:
            fam = families().get(self.family)
            params = ",".join(compact_exact(p) for p in self.params)
            body = f"{(fam.short if fam else None) or self.family}({params})"
        rate = "" if self.subsample is None else f"@{compact_exact(self.subsample)}"
        return body + rate


def _split_top(text: str) -> list[str]:
    """Split at the commas outside parentheses (``log(2),1`` is two arguments)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    out.append(cur)
    return [p.strip() for p in out]


def parse_family(body: str, where: str) -> tuple[str, tuple[str, ...]] | None:
    """``gaussian(1)`` -> ``("gaussian", ("1", "1"))``; None when ``body`` names no family."""
    name, sep, rest = body.strip().partition("(")
    family = family_named(name) if sep else None
    if family is None:
        return None
    if not rest.endswith(")"):
        raise InvalidParameterError(f"{where} {body!r}: missing ')'; expected {family.spelling}")
    return family.name, family.filled(_split_top(rest[:-1]), f"{where} {body!r}")


def parse_dp_pair(text: str, where: str = "--dp") -> tuple[str, str]:
    """Parse ``EPS,DELTA``."""
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise InvalidParameterError(
            f"{where} {text!r} is malformed; expected EPS,DELTA such as 0.3,1e-5"
        )
    return parts[0].strip(), parts[1].strip()


def parse_mech_spec(text: str) -> MechanismKind:
    """Parse ``SPEC[@Q]:COUNT``, SPEC one of :data:`FAMILIES` (docs/cli.md, "Mechanisms").

    >>> k = parse_mech_spec("0.3,0+0.15,0.02:5")
    >>> k.constraints, k.count
    ((('0.3', '0'), ('0.15', '0.02')), 5)
    >>> k = parse_mech_spec("gaussian(1)@1/100:1000")
    >>> k.family, k.params, k.subsample, k.count
    ('gaussian', ('1', '1'), '1/100', 1000)
    """
    body, sep, count = text.rpartition(":")
    if not sep or not body.strip():
        raise InvalidParameterError(
            f"--mech {text!r} is malformed; expected SPEC[@Q]:COUNT such as 0.3,0+0.15,0.02:5, "
            "gaussian(1)@1/100:1000, laplace(2):10, rr(1/2,2):5 or dlap(log(2),1):3"
        )
    if not count.strip():  # "0.3,0:" (was: "0.3,0: = '' must be a non-negative integer")
        raise InvalidParameterError(
            f"--mech {text!r} has no count after ':'; expected SPEC[@Q]:COUNT such as "
            f"{body.strip()}:5 (the number of uses, an integer >= 0)"
        )
    body, at, rate = body.partition("@")
    if at and not rate.strip():
        raise InvalidParameterError(f"--mech {text!r}: a sampling rate follows '@' (e.g. @1/100)")
    subsample = rate.strip() if at else None
    fam = parse_family(body, "--mech")
    if fam is not None:
        return MechanismKind((), parse_count(count, text), fam[0], fam[1], subsample)
    name, paren, _ = body.strip().partition("(")
    called = re.fullmatch(r"[A-Za-z_]\w*", name.strip()) and body.strip().endswith(")")
    if (  # "foo(1)": a family that is not known (not an epsilon such as "log(2),0")
        paren
        and called
        and len(_split_top(body)) == 1
        and name.strip().lower() not in ("log", "ln", "exp")
    ):
        raise InvalidParameterError(
            f"--mech {text!r}: unknown mechanism {name.strip()!r}; the kinds are EPS,DELTA "
            "constraints joined by + (0.3,0+0.15,0.02) and "
            + ", ".join(f.spelling for f in FAMILIES.values())
        )
    pairs = tuple(parse_dp_pair(p, "--mech") for p in body.split("+"))
    return MechanismKind(pairs, parse_count(count, text), subsample=subsample)


#: The largest count a route whose cost grows with ``k`` composes (exact, certified, bounds,
#: loss grids, exact subsampling); it is checked by the router (``engines.routes``), route
#: by route, never here: the Gaussian closed form composes any ``k`` (docs/theory.md,
#: section 18), ``gaussian(1):1e24`` included.
MAX_COUNT = 10**12

#: A count is written with at most this many digits (an input-size guard of the parser:
#: ``1e999999999`` would be a billion-digit integer before any route sees it).
MAX_COUNT_DIGITS = 100

#: Distinct mechanism kinds read at once from --mech/--spec (identical ones merge first).
#: 1,000 distinct kinds of one family compose in about a second; 3,000 took 45 s (the
#: certified route's tilted windows) and 10^5 gave no answer in a minute.
MAX_KINDS = 1_000


def parse_count(value: Any, where: str, positive: bool = False) -> int:
    """The one validation of a composition count (``k``, a kind's ``count``).

    Args:
        value: an int or its text (a spec file's value, a command-line word): digits, or
            a decimal literal whose exact value is an integer (``"1e9"``, ``"2.5e3"``).
        where: the parameter's name or place, shown in the message.
        positive: refuse 0 (``k >= 1``).

    Raises:
        TypeError: a float (with the hint to pass an int).
        InvalidParameterError: not an integer, negative (or 0 when ``positive``), or of
            more than :data:`MAX_COUNT_DIGITS` digits.  (A route's own largest ``k`` is
            checked by the router: only the Gaussian closed form composes any ``k``.)
    """
    if getattr(value, "shape", None) == () and hasattr(value, "item"):  # a 0-d numpy array
        value = value.item()
    if isinstance(value, numbers.Integral) and not isinstance(value, (int, bool)):
        value = operator.index(value)  # numpy integers: exact
    if isinstance(value, float) or (
        isinstance(value, numbers.Real) and not isinstance(value, (numbers.Rational, Decimal))
    ):
        raise TypeError(f"{where} = {value!r} is a float; pass an int")
    low = 1 if positive else 0
    kind = "a positive integer (k >= 1)" if positive else "a non-negative integer"
    bad = f"{where} = {value!r} must be {kind}"
    if isinstance(value, bool):
        raise InvalidParameterError(bad)
    too_long = (
        f"{where} has more than {MAX_COUNT_DIGITS} digits (counts are below "
        f"10^{MAX_COUNT_DIGITS})"
    )
    if isinstance(value, str) and len(value.strip()) > MAX_COUNT_DIGITS + 2:
        raise InvalidParameterError(too_long)
    if isinstance(value, Decimal) and value.is_finite():  # exact, like its string
        if value.adjusted() >= MAX_COUNT_DIGITS:
            raise InvalidParameterError(too_long)
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
    if n >= 10**MAX_COUNT_DIGITS:
        raise InvalidParameterError(too_long)
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
    if d.adjusted() >= MAX_COUNT_DIGITS:
        raise InvalidParameterError(
            f"{where} has more than {MAX_COUNT_DIGITS} digits (counts are below "
            f"10^{MAX_COUNT_DIGITS})"
        )
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
        check_kind_count(kinds, f"--spec {Path(spec).name}" if spec else "--mech")
        return kinds
    pairs = tuple(parse_dp_pair(t) for t in (dp or DEFAULT_DP))
    return [MechanismKind(pairs, parse_k(k) or DEFAULT_K)]


def check_kind_count(kinds: Sequence[MechanismKind], where: str) -> int:
    """Refuse more than :data:`MAX_KINDS` distinct kinds at once, before any is built.

    Each distinct kind is built, validated and normalised on its own, and composed as a
    kind of its own, so 10^5 of them gave no answer in a minute; identical kinds merge
    first and cost one.

    Returns:
        The number of distinct kinds.

    Raises:
        ResourceLimitError: the count and the limit, in one line.
    """
    n = len(merge_kinds(kinds))
    if n > MAX_KINDS:
        raise ResourceLimitError(
            f"{where}: {n} distinct mechanisms, over the limit of {MAX_KINDS} "
            "(identical mechanisms merge: write each kind once, with its count)"
        )
    return n


def merge_kinds(kinds: Sequence[MechanismKind]) -> list[MechanismKind]:
    """Kinds written identically merged, counts added (10^5 identical lines cost one kind).

    Returns the kinds in first-seen order; kinds with equal regions written differently
    are merged later, by the front door.
    """
    counts: dict[tuple, MechanismKind] = {}
    for kind in kinds:
        cons = tuple((str(e).strip(), str(d).strip()) for e, d in kind.constraints)
        key = (cons, kind.family, kind.params, kind.subsample)
        seen = counts.get(key)
        total = kind.count + (seen.count if seen is not None else 0)
        counts[key] = MechanismKind(cons, total, kind.family, kind.params, kind.subsample)
    return list(counts.values())


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
    where = f"--spec {p.name}: mechanism #"
    return [kind_of_item(item, f"{where}{i + 1}") for i, item in enumerate(items)]


def kind_of_item(item: Any, where: str) -> MechanismKind:
    """One spec-file item (a table with ``count``) as a :class:`MechanismKind`.

    The item is ``constraints = [[eps, delta], ...]``, or a family's own table
    (``randomized_response = {p = "1/2"}``), or ``noise = "gaussian"`` with ``scale``; each
    with ``count`` and an optional ``subsample`` (docs/cli.md, "Mechanisms of every kind").
    These are also the JSON output's ``mechanisms`` entries.

    Raises:
        InvalidParameterError: a malformed item (the message says where and what is
            expected), a float value, or a bad count.
    """
    other = _family_item(item, where)
    if other is not None:
        return other
    cons = item.get("constraints") if isinstance(item, dict) else None
    if not isinstance(cons, list) or not cons:
        raise InvalidParameterError(
            f"{where}: expected 'constraints' (a list of [eps, delta]), 'noise' "
            f"(gaussian or laplace, with 'scale') or a family ({', '.join(families())})"
        )
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
    count = parse_count(item.get("count"), where)
    return MechanismKind(tuple(pairs), count, subsample=_rate_of(item, where))


def _text(value: Any, where: str) -> str:
    if isinstance(value, list):  # a list parameter (a mixture's sensitivities): (a,b,c)
        return "(" + ",".join(_text(v, where) for v in value) + ")"
    if isinstance(value, float):
        raise InvalidParameterError(
            f'{where}: {value!r} is a float; write it as a string ("{value}") so it is exact'
        )
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidParameterError(f"{where}: {value!r} is not a number written as a string")
    return str(value).strip()


def _rate_of(item: dict[str, Any], where: str) -> str | None:
    rate = item.get("subsample")
    return None if rate is None else _text(rate, f"{where} subsample")


def _family_item(item: Any, where: str) -> MechanismKind | None:
    """A spec-file item of a family other than constraints (None: not one).

    ``{"randomized_response": {"p": "1/2", "buckets": 2}, "count": 3}``: the family's name
    holding its parameters by name; Gaussian and Laplace noise also as the JSON output's
    ``mechanisms`` write them, ``{"noise": "gaussian", "scale": "1", "sensitivity": "1"}``.
    Each item has ``count`` and an optional ``subsample``.
    """
    if not isinstance(item, dict):
        raise InvalidParameterError(f"{where}: expected a table/object, got {item!r}")
    if "noise" in item:
        fam = family_named(str(item["noise"]))
        if fam is None or fam.name not in ("gaussian", "laplace") or "scale" not in item:
            raise InvalidParameterError(
                f"{where}: 'noise' is gaussian or laplace, with 'scale' (sigma or b) and an "
                "optional 'sensitivity'"
            )
        spec = {fam.params[0]: item["scale"], "sensitivity": item.get("sensitivity", "1")}
    else:
        names = [key for key in item if key in families()]
        if not names:
            return None
        fam = families()[names[0]]
        spec = item[fam.name]
        if not isinstance(spec, dict):
            raise InvalidParameterError(
                f"{where}: '{fam.name}' takes a table of its parameters "
                f"({', '.join(fam.params)}), e.g. {{{fam.params[0]} = \"...\"}}"
            )
    unknown = sorted(set(spec) - set(fam.params))
    if unknown:
        raise InvalidParameterError(
            f"{where}: {fam.name} has no parameter {unknown[0]!r}; its parameters are "
            f"{', '.join(fam.params)}"
        )
    given = []
    for name in fam.params:
        if name not in spec:
            break
        given.append(_text(spec[name], f"{where} {name}"))
    params = fam.filled(given, where)
    count = parse_count(item.get("count"), where)
    return MechanismKind((), count, fam.name, params, _rate_of(item, where))
