"""Composing lists of mechanisms, heterogeneous and multi-constraint (docs/theory.md, section 10).

The job of this module is composition dispatch.  A *kind*
(:class:`~dpcompose_exact.specs.MechanismKind`, parsed from ``--mech`` text or a spec
file by :mod:`dpcompose_exact.specs`) is a mechanism satisfying several (eps, delta)
constraints at once, used ``count`` times.

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

The spec names (``MechanismKind``, ``parse_mech_spec``, ``load_spec``, ...) are
re-exported here for existing importers; the package imports them from
:mod:`dpcompose_exact.specs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import factorial
from typing import Any

from .certified import CertifiedRegion
from .errors import InvalidParameterError
from .genfunc import DEFAULT_MEMORY_LIMIT, common_domain, compose_plds
from .numbers import Loss, QzElem
from .pld import PLD, canonical_pair
from .routes import MODES, Mode, compose_routed
from .specs import (
    DEFAULT_DP,
    DEFAULT_K,
    MAX_COUNT,
    MechanismKind,
    kinds_from_options,
    load_spec,
    parse_count,
    parse_dp_pair,
    parse_k,
    parse_mech_spec,
)
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


def compose_mechanisms(
    kinds: Sequence[MechanismKind],
    mode: Mode | str = "auto",
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
    mode: Mode | str = "auto",
    digits: int = 30,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    progress: Any = None,
    closed_forms: bool = True,
    allow_bounds: bool = False,
    width: Any = None,
) -> tuple[Region | CertifiedRegion, str]:
    """Compose dominating pairs with counts, choosing the route (see compose_mechanisms)."""
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
