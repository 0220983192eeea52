"""Any list of mechanisms: heterogeneous and multi-constraint together (docs/theory.md, section 10).

A *kind* is a mechanism satisfying several (eps, delta) constraints at once, used
``count`` times.  Specs come from the command line (``EPS,DELTA[+EPS,DELTA...]:COUNT``) or
from a TOML/JSON file a paper can keep in its repository::

    # spec.toml
    [[mechanism]]
    constraints = [["0.3", "0"], ["0.15", "0.02"]]
    count = 20

    [[mechanism]]
    constraints = [["1", "1e-6"]]
    count = 5

Values are strings (or integers): ``0.3`` written as a TOML/JSON float is refused, since
a float is not the exact decimal; write ``"0.3"``.

:func:`compose_mechanisms` composes the dominating pairs of all kinds (exactly by
generating functions, or with certified balls for large k); :func:`mixture_form` computes
the same region the way the paper conjectures for n constraints: the leak plus a
multinomially weighted Minkowski sum of heterogeneous compositions of randomized
responses.  The two agree exactly (tested).

Cost: the exact route is one sparse polynomial power, polynomial in k for a fixed list of
kinds.  With several incommensurable epsilons (e.g. ``0.3`` and ``log 2``) the loss lattice
has several dimensions and the number of distinct loss values grows like k^d; the general
heterogeneous problem is #P-hard (Murtagh and Vadhan), so with many distinct kinds
(e.g. 30 different epsilons used once each) expect exponential growth.  The mixture form
enumerates ``C(k + m - 1, m - 1)`` allocations per kind with m randomized responses and is
meant for checking small cases.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import factorial
from pathlib import Path
from typing import Any

from .certified import CertifiedRegion
from .errors import InvalidParameterError
from .genfunc import DEFAULT_MEMORY_LIMIT, common_domain, compose_plds
from .numbers import Loss, QzElem
from .pld import PLD, canonical_pair
from .routes import compose_routed
from .tradeoff import Region, dp_region, mixture_minkowski, trivial_region

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
    "compose_mechanisms",
    "compose_pairs",
    "mixture_form",
    "MODES",
    "MAX_COUNT",
]

MODES = ("auto", "exact", "certified", "bounds")
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


def parse_count(value: Any, where: str) -> int:
    """Parse a non-negative integer count (from text or a spec file), at most MAX_COUNT."""
    if isinstance(value, bool):
        raise InvalidParameterError(f"{where}: COUNT must be a non-negative integer")
    if isinstance(value, str) and len(value.strip()) > 40:
        raise InvalidParameterError(f"{where}: COUNT is over the limit of {MAX_COUNT}")
    try:
        n = int(value) if isinstance(value, (int, str)) else None
    except ValueError:
        n = None
    if n is None or n < 0:
        raise InvalidParameterError(f"{where}: COUNT {value!r} must be a non-negative integer")
    if n > MAX_COUNT:
        raise InvalidParameterError(f"{where}: COUNT {n} is over the limit of {MAX_COUNT}")
    return n


def parse_k(text: str | None, default: int | None = DEFAULT_K) -> int | None:
    """Parse a composition count given as text; ``None`` gives ``default``."""
    if text is None:
        return default
    if len(text.strip()) > 40:
        raise InvalidParameterError(f"k is over the limit of {MAX_COUNT}")
    try:
        value = int(text)
    except ValueError:
        raise InvalidParameterError(f"k = {text!r} must be a positive integer (k >= 1)") from None
    if value < 1:
        raise InvalidParameterError(f"k = {value} must be a positive integer (k >= 1)")
    if value > MAX_COUNT:
        raise InvalidParameterError(
            f"k = {value} is over the limit of {MAX_COUNT} (no route composes that many)"
        )
    return value


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


def compose_mechanisms(
    kinds: Sequence[MechanismKind],
    mode: str = "auto",
    digits: int = 30,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    progress: Any = None,
    closed_forms: bool = True,
    allow_bounds: bool = False,
    width: Any = None,
) -> tuple[Region | CertifiedRegion, str]:
    """Compose every kind ``count`` times.

    Args:
        kinds: the mechanism kinds.
        mode: ``exact`` (refuse when too large), ``certified`` (ball arithmetic, exact
            structure), or ``auto`` (exact when it fits in ``memory_limit``, else certified).
        digits: digits the certified mode must guarantee.
        memory_limit: bytes allowed for the exact result.
        progress: optional callback for the certified mode.
        closed_forms: False when only decimals are needed (auto then takes the cheapest
            route that certifies every digit; see :mod:`dpcompose_exact.routes`).
        allow_bounds: accept the ``bounds`` route (a :class:`~dpcompose_exact.bounds.Bounded`
            of relative ``width``) when neither exact nor certified can run.
        width: the relative width the bounds route refines to (default 1e-6).

    Returns:
        ``(region, method)`` with method ``"pld"``, ``"certified"`` or ``"bounds"`` (a
        :class:`~dpcompose_exact.routes.Route`: its ``why`` says why it was taken).
    """
    if not kinds:
        raise InvalidParameterError("need at least one mechanism")
    plds = _merged_pairs(kinds)
    return compose_pairs(
        plds, mode, digits, memory_limit, progress, closed_forms, allow_bounds, width
    )


def compose_pairs(
    plds: Sequence[tuple[PLD, int]],
    mode: str = "auto",
    digits: int = 30,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    progress: Any = None,
    closed_forms: bool = True,
    allow_bounds: bool = False,
    width: Any = None,
) -> tuple[Region | CertifiedRegion, str]:
    """Compose dominating pairs with counts, choosing the route (see compose_mechanisms)."""
    if mode not in MODES:
        raise InvalidParameterError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    return compose_routed(
        plds, mode, closed_forms, digits, memory_limit, progress, allow_bounds, width
    )


def _merged_pairs(kinds: Sequence[MechanismKind]) -> list[tuple[PLD, int]]:
    """One dominating pair per distinct mechanism, counts added (identical kinds merged).

    Kinds written identically are merged before anything is computed (10^5 identical
    lines cost one region); kinds with equal regions written differently merge next.
    """
    counts: dict[tuple[tuple[str, str], ...], int] = {}
    for kind in kinds:
        key = tuple((str(e).strip(), str(d).strip()) for e, d in kind.constraints)
        counts[key] = counts.get(key, 0) + kind.count
    by_region: dict[Region, int] = {}
    for key, count in counts.items():
        region = dp_region(list(key))
        by_region[region] = by_region.get(region, 0) + count
    return [(canonical_pair(region), count) for region, count in by_region.items()]


def _rr_weights(pld: PLD) -> dict[Loss, QzElem]:
    """Weight of each |l|-randomized response in a symmetric dominating pair."""
    dom = pld.domain
    out: dict[Loss, QzElem] = {}
    for loss, m in pld.masses:
        key = loss if dom.loss_sign(loss) >= 0 else tuple(-n for n in loss)
        out[key] = out[key] + m if key in out else m
    return out


def _allocations(n: int, parts: int):
    if parts == 1:
        yield (n,)
        return
    for first in range(n + 1):
        for rest in _allocations(n - first, parts - 1):
            yield (first, *rest)


def mixture_form(kinds: Sequence[MechanismKind]) -> Region:
    """The conjectured form: ``dt R(0,1) + sum over allocations of weight * C_allocation``.

    Each kind's dominating pair is a leak plus randomized responses with weights ``w_r``;
    the product of mixtures is the mixture of products, so the composition is the leak
    ``dt = 1 - prod_j (1 - d_j)^{k_j}`` plus, for every allocation ``n_{j,r}`` of the
    ``k_j`` uses among the responses, weight ``prod_j k_j! prod_r w_{j,r}^{n_{j,r}} /
    n_{j,r}!`` times the heterogeneous composition of those responses.
    """
    plds = common_domain([(canonical_pair(k.region()), k.count) for k in kinds if k.count])
    dom = plds[0][0].domain
    per_kind = []
    keep = QzElem.from_rational(1)
    for pld, count in plds:
        rr = sorted(_rr_weights(pld).items(), key=lambda kv: dom.loss_key(kv[0]))
        options = []
        for alloc in _allocations(count, len(rr)):
            w = QzElem.from_rational(Fraction(factorial(count)))
            for (_, wr), n in zip(rr, alloc):
                w = w * wr**n / factorial(n)
            options.append((w, [(loss, n) for (loss, _), n in zip(rr, alloc) if n]))
        per_kind.append(options)
        keep = keep * (1 - pld.leak) ** count
    weights: list[QzElem] = [1 - keep]
    regions: list[Region] = [trivial_region(dom)]
    rr_pairs: dict[Loss, PLD] = {}

    def rr_pld(loss: Loss) -> PLD:
        if loss not in rr_pairs:
            e = dom.exp_loss(loss)
            one = QzElem.from_rational(1)
            if dom.loss_sign(loss) == 0:
                rr_pairs[loss] = PLD.from_masses(dom, [(loss, one)], QzElem.from_rational(0))
            else:
                neg = tuple(-n for n in loss)
                rr_pairs[loss] = PLD.from_masses(
                    dom, [(loss, e / (1 + e)), (neg, one / (1 + e))], QzElem.from_rational(0)
                )
        return rr_pairs[loss]

    def walk(j: int, w: QzElem, uses: list[tuple[Loss, int]]) -> None:
        if j == len(per_kind):
            counts: dict[Loss, int] = {}
            for loss, n in uses:
                counts[loss] = counts.get(loss, 0) + n
            weights.append(w)
            regions.append(
                compose_plds([(rr_pld(loss), n) for loss, n in counts.items()], memory_limit=None)
            )
            return
        for wk, alloc in per_kind[j]:
            walk(j + 1, w * wk, uses + alloc)

    walk(0, QzElem.from_rational(1), [])
    return mixture_minkowski(weights, regions)
