"""Privacy amplification by subsampling, exactly (docs/theory.md, section 15).

A mechanism with dominating pair ``(P, Q)`` run on a Poisson subsample of rate ``q`` (under
the add/remove relation), or on a sample of ``m`` of ``n`` records drawn without
replacement (``q = m/n``, under replace-one), has the dominating pair

    ``A = q P + (1 - q) Q``,  ``B = Q``

and, the relation being symmetric, the privacy profile of k uses is the larger of the two
directions: ``delta(eps) = max(H_{e^eps}(A^k || B^k), H_{e^eps}(B^k || A^k))`` (the "remove"
and "add" directions of dp_accounting).  The pair is asymmetric, so it is kept as two
privacy-loss distributions (:class:`~dpcompose_exact.regions.protocol.DirectedPair`:
``forward`` under ``A``, ``reverse`` under ``B``, built by
:mod:`dpcompose_exact.mechanisms.subsampled`), each composed exactly by the
generating-function engine, and the queries take the larger answer (:class:`SubsampledComposition`).

The loss of an outcome with base loss ``l`` becomes ``ln(q e^l + 1 - q)``: it stays a
logarithm of a rational exactly when ``e^l`` is rational (randomized response, discrete
Laplace with ``e^a`` rational, constraints written as ``log(r)``).  Other pairs (``eps =
0.3``: ``e^0.3`` is transcendental) leave the field and are refused with
:class:`~dpcompose_exact.errors.UnsupportedExpressionError`.

The base pair only enters through its privacy-loss distribution: the loss is a sufficient
statistic of ``(P, Q)`` and ``A / B = q P/Q + 1 - q`` is a function of it, so subsampling
the distribution of the loss is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# the mechanism and its pair moved to mechanisms/subsampled.py; these names stay
# importable from here while other branches still import them from engines.subsample
from ..mechanisms.subsampled import (  # noqa: F401
    ROUND_DIGITS,
    SubsampledMechanism,
    rounded_region,
    subsample_pld,
    subsample_region,
)
from ..numbers import ExpDomain, QzElem
from ..numbers.value import Value
from ..regions.pld import PLD
from ..regions.protocol import LossPair, PairForm
from ..regions.tradeoff import Region
from .bounds import EnclosureRows
from .genfunc import DEFAULT_MEMORY_LIMIT, compose_plds
from .results import Exactness, delta_value, epsilon_value

__all__ = [
    "SubsampledComposition",
    "compose_subsampled",
    "compose_subsampled_mechanisms",
    "SubsampledBounds",
]


def _with_zero(region: Region, tv: QzElem) -> Region:
    dom = region.domain
    if dom.loss_sign(region.constraints[0][0]) == 0:
        return region
    return Region(dom, ((dom.zero_loss(), tv), *region.constraints))


def _in(region: Region, dom: ExpDomain) -> Region:
    if region.domain == dom:
        return region
    src = region.domain
    return Region(
        dom,
        tuple(
            (src.convert_loss(loss, dom), src.convert_elem(d, dom))
            for loss, d in region.constraints
        ),
    )


def _total_variation(fwd: Region, rev: Region) -> QzElem:
    """``delta(0)``, shared by both directions, from the lowest listed losses of each.

    A one-sided region lists ``delta`` at the losses >= 0 that carry mass.  Extended to
    negative eps, the forward profile is ``1 - e^-l (1 - delta_rev(l))`` at ``-l`` and is
    linear in ``e^eps`` between two consecutive losses, so ``delta(0)`` interpolates
    between the lowest reverse loss (mirrored) and the lowest forward loss.
    """
    dom = fwd.domain
    (l2, y2), (l1, d1) = fwd.constraints[0], rev.constraints[0]
    if dom.loss_sign(l2) == 0:
        return y2
    if dom.loss_sign(l1) == 0:
        return d1
    x1 = 1 / dom.exp_loss(l1)
    y1 = 1 - x1 * (1 - d1)
    x2 = dom.exp_loss(l2)
    return y1 + (1 - x1) * (y2 - y1) / (x2 - x1)


class _TwoDirections(EnclosureRows):
    """The one result interface for subsampled compositions: curves only.

    It implements :class:`~dpcompose_exact.engines.results.PrivacyResult`.  The larger of two
    directions' profiles bends at epsilons outside the exact lattice, so there is no exact
    constraint list: ``constraints``, ``rows``, ``tradeoff`` and drawing are refused with
    what to ask instead.
    """

    kind = Exactness.EXACT

    no_list = (
        "a composition with subsampled mechanisms has two directions and no single constraint list"
    )



class SubsampledComposition(_TwoDirections):
    """The exact composition of subsampled (asymmetric) and symmetric pairs.

    ``delta(eps)`` is the larger of the two directions' profiles, ``epsilon(delta)`` the
    larger of their inverses; both are exact :class:`~dpcompose_exact.numbers.value.Value` objects.

    Attributes:
        forward: the region of the forward profile (with its ``delta(0)``).
        reverse: the region of the reverse profile.
        method: ``"exact"``.
    """

    def __init__(self, forward: Region, reverse: Region, label: str = "") -> None:
        self.forward = forward
        self.reverse = reverse
        self.label = label

    def delta(self, eps: Any) -> Value | list[Value]:
        """``delta(eps) = max(delta_forward(eps), delta_reverse(eps))``, exact."""
        if isinstance(eps, (list, tuple)):
            return [self.delta(e) for e in eps]  # type: ignore[misc]
        a = delta_value(self.forward, eps)
        b = delta_value(self.reverse, eps)
        return a if a >= b else b

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """``eps(delta)``: the larger of the two directions' smallest eps, exact."""
        if isinstance(delta, (list, tuple)):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        a = epsilon_value(self.forward, delta)
        b = epsilon_value(self.reverse, delta)
        return a if a >= b else b

    def describe(self) -> str:
        """``"exact, two directions"``."""
        return "exact, two directions"

    def __repr__(self) -> str:
        return f"SubsampledComposition({self.label or 'exact'}; two directions)"


class SubsampledBounds(_TwoDirections):
    """Certified two-sided bounds of a composition with subsampled mechanisms.

    ``lower`` and ``upper`` are exact compositions of stronger and weaker mechanisms
    (:func:`rounded_region`); ``delta(eps)`` and ``epsilon(delta)`` are interval Values
    (``decimal`` certifies the digits the two ends share, ``interval`` gives both ends,
    ``upper()`` a safe double).
    """

    kind = Exactness.BOUNDS

    def __init__(
        self, lower: SubsampledComposition, upper: SubsampledComposition, label: str = ""
    ) -> None:
        self.lower = lower
        self.upper = upper
        self.label = label

    @staticmethod
    def _interval(lo: Value, hi: Value) -> Value:
        # the two ends are apart by the rounding of section 15 (about 1e-7 relative): 64
        # bits of each end are ample, and a Gaussian next to it bisects for every bit
        return Value.from_interval(lo.ball(64), hi.ball(64))

    def delta(self, eps: Any) -> Value | list[Value]:
        """An enclosure of ``delta(eps)``."""
        if isinstance(eps, (list, tuple)):
            return [self.delta(e) for e in eps]  # type: ignore[misc]
        return self._interval(self.lower.delta(eps), self.upper.delta(eps))  # type: ignore[arg-type]

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """An enclosure of ``eps(delta)`` (the stronger mechanism needs the smaller eps)."""
        if isinstance(delta, (list, tuple)):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        return self._interval(self.lower.epsilon(delta), self.upper.epsilon(delta))  # type: ignore[arg-type]

    def describe(self) -> str:
        """``"certified bounds, two directions"``."""
        return "certified bounds, two directions"

    def __repr__(self) -> str:
        return f"SubsampledComposition({self.label or 'bounds'}; certified two-sided bounds)"


def compose_subsampled_mechanisms(
    kinds: Sequence[tuple[LossPair, int]],
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    label: str = "",
) -> SubsampledComposition | SubsampledBounds:
    """Compose finite pairs, symmetric and asymmetric: exact, or two-sided bounds.

    Args:
        kinds: ``[(loss pair, count), ...]`` of the forms ``finite``, ``asymmetric`` and
            ``asymmetric bounds`` (:class:`~dpcompose_exact.regions.protocol.LossPair`).
            Symmetric pairs are taken as they are on both sides of the bounds.
        memory_limit: bytes the exact route may use per direction (None: no limit).
        label: what was composed, for ``repr``.
    """
    if all(lp.form is not PairForm.ASYMMETRIC_BOUNDS for lp, _ in kinds):
        return compose_subsampled(kinds, memory_limit, label)
    sides = [
        compose_subsampled([(lp.sides()[side], n) for lp, n in kinds], memory_limit, label)
        for side in (0, 1)
    ]
    return SubsampledBounds(sides[0], sides[1], label)


def compose_subsampled(
    kinds: Sequence[tuple[LossPair, int]],
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    label: str = "",
) -> SubsampledComposition:
    """Compose subsampled pairs and symmetric pairs (canonical pairs), ``count`` times each.

    Args:
        kinds: ``[(loss pair, count), ...]`` of the exact finite forms: ``finite``
            (symmetric) and ``asymmetric`` (a directed pair).
        memory_limit: bytes the exact route may use per direction (None: no limit).
        label: what was composed, for ``repr``.

    Raises:
        ResourceLimitError: the exact result would not fit ``memory_limit``.
    """
    fwd: list[tuple[PLD, int]] = []
    rev: list[tuple[PLD, int]] = []
    for lp, count in kinds:
        both = lp.directions()
        if both is None:
            raise TypeError(f"expected an exact finite loss pair, got one of form {lp.form}")
        fwd.append((both[0], count))
        rev.append((both[1], count))
    f = compose_plds(fwd, memory_limit=memory_limit)
    r = compose_plds(rev, memory_limit=memory_limit)
    dom = f.domain.join(r.domain)
    f, r = _in(f, dom), _in(r, dom)
    tv = _total_variation(f, r)
    return SubsampledComposition(_with_zero(f, tv), _with_zero(r, tv), label)
