"""Privacy amplification by subsampling, exactly (docs/theory.md, section 15).

A mechanism with dominating pair ``(P, Q)`` run on a Poisson subsample of rate ``q`` (under
the add/remove relation), or on a sample of ``m`` of ``n`` records drawn without
replacement (``q = m/n``, under replace-one), has the dominating pair

    ``A = q P + (1 - q) Q``,  ``B = Q``

and, the relation being symmetric, the privacy profile of k uses is the larger of the two
directions: ``delta(eps) = max(H_{e^eps}(A^k || B^k), H_{e^eps}(B^k || A^k))`` (the "remove"
and "add" directions of dp_accounting).  The pair is asymmetric, so it is kept as two
privacy-loss distributions (:class:`SubsampledPair`: ``forward`` under ``A``, ``reverse``
under ``B``), each composed exactly by the generating-function engine, and the queries
take the larger answer (:class:`SubsampledComposition`).

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

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint
import sympy

from ..errors import InvalidParameterError, UnsupportedExpressionError
from ..mechanisms.noise import parse_rate
from ..numbers import ExpDomain, Loss, QzElem
from ..numbers.format import readable_exact
from ..numbers.forms import LinearForm, _log_of_rational
from ..numbers.value import Value
from ..regions.pld import PLD, canonical_pair
from ..regions.protocol import LossPair, PairForm
from ..regions.tradeoff import Region, dp_region
from .bounds import EnclosureRows
from .genfunc import DEFAULT_MEMORY_LIMIT, compose_plds
from .results import Exactness, delta_value, epsilon_value

__all__ = [
    "SubsampledPair",
    "SubsampledMechanism",
    "SubsampledComposition",
    "subsample_pld",
    "compose_subsampled",
    "compose_subsampled_mechanisms",
    "SubsampledBounds",
    "subsample_region",
    "rounded_region",
    "ROUND_DIGITS",
]


@dataclass(frozen=True)
class SubsampledPair:
    """The pair ``(A, B) = (qP + (1-q)Q, Q)`` as two privacy-loss distributions.

    Attributes:
        forward: the loss ``ln(A/B)`` under ``A`` (the "remove" direction).
        reverse: the loss ``ln(B/A)`` under ``B`` (the "add" direction).
        q: the sampling rate.
    """

    forward: PLD
    reverse: PLD
    q: Fraction


class SubsampledMechanism:
    """A mechanism run on a subsample of rate ``q``: compose it with ``compose(m, k)``.

    Made by :meth:`dpcompose_exact.Mechanism.subsample` (or :func:`subsample_region`).

    Attributes:
        pair: the exact asymmetric pair, or None when only bounds exist.
        bounds: ``(lower, upper)``: the subsampled pairs of a stronger and a weaker
            mechanism whose epsilons are logarithms of rationals (None when exact).
        base: names the mechanism it was made from.
    """

    __slots__ = ("pair", "bounds", "base", "pairs")

    def __init__(
        self,
        pair: SubsampledPair | None,
        base: str,
        bounds: tuple[SubsampledPair, SubsampledPair] | None = None,
        pairs: tuple[tuple[str, str], ...] = (),
    ) -> None:
        if (pair is None) == (bounds is None):
            raise InvalidParameterError("a subsampled mechanism has a pair or bounds, not both")
        self.pair = pair
        self.bounds = bounds
        self.base = base
        self.pairs = pairs  # the base mechanism's constraints, exact strings

    def loss_pair(self) -> LossPair:
        """The asymmetric pair (both directions), or a weaker and a stronger one (bounds)."""
        if self.pair is not None:
            return LossPair(PairForm.ASYMMETRIC, self.pair, symmetric=False)
        return LossPair(PairForm.ASYMMETRIC_BOUNDS, self.bounds, symmetric=False)

    def to_dict(self) -> dict[str, Any]:
        """``{"constraints": [[eps, delta], ...], "subsample": q}`` with exact strings."""
        return {"constraints": [list(p) for p in self.pairs], "subsample": str(self.q)}

    def describe(self) -> str:
        """``(eps, delta)+... subsampled at q``, for titles."""
        text = "+".join(f"({readable_exact(e)}, {readable_exact(d)})" for e, d in self.pairs)
        return f"{text} subsampled at {self.q}"

    @property
    def q(self) -> Fraction:
        """The sampling rate."""
        return self.pair.q if self.pair is not None else self.bounds[0].q  # type: ignore[index]

    def _key(self) -> tuple:
        return (self.pair, self.bounds)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SubsampledMechanism):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"{self.base}.subsample({self.q})"


#: e^eps of a constraint is rounded to a rational of this many decimals (bounds route)
ROUND_DIGITS = 6


def _endpoint(ball: flint.arb, up: bool) -> Fraction:
    """An exact rational at the upper (``up``) or lower end of a ball."""
    end = ball.upper() if up else ball.lower()
    man, exp = (int(v) for v in end.mid().man_exp())
    return Fraction(man) * Fraction(2) ** exp


def _rounded(x: Fraction, digits: int, up: bool) -> Fraction:
    scale = 10**digits
    n = x * scale
    return Fraction(math.ceil(n) if up else math.floor(n), scale)


def rounded_region(region: Region, up: bool, digits: int = ROUND_DIGITS) -> Region:
    """A weaker (``up``) or stronger region whose epsilons are logarithms of rationals.

    Each constraint ``(eps, delta)`` becomes ``(log r, d)`` with ``r >= e^eps`` and
    ``d >= delta`` rounded up (``up``), or ``r <= e^eps``, ``d <= delta`` rounded down: the
    mechanism with the rounded constraints is less (more) private than the given one, so
    whatever is computed from it is an upper (lower) bound (docs/theory.md, section 15).
    """
    dom = region.domain
    out: list[tuple[str, Fraction]] = []
    for loss, d in region.constraints:
        r = dom.exp_loss(loss).as_rational()
        if r is None:
            r = _rounded(_endpoint(dom.loss_ball(loss, 160).exp(), up), digits, up)
            r = max(r, Fraction(1))
        dq = d.as_rational()
        if dq is None:
            dq = _rounded(_endpoint(dom.elem_ball(d, 160), up), digits + 6, up)
            dq = min(max(dq, Fraction(0)), Fraction(1))
        if dq >= 1:
            continue  # a vacuous constraint
        eps = "0" if r == 1 else f"log({r.numerator}/{r.denominator})"
        out.append((eps, dq))
    if not out:
        out.append(("0", Fraction(1, 2) if up else Fraction(0)))  # never reached in practice
    return dp_region(out, warn=False)


def subsample_region(region: Region, q: Any, what: str = "the mechanism") -> SubsampledMechanism:
    """The subsampled mechanism of a symmetric region: exact, or bounds when it must be.

    Exact when every ``e^eps`` and every delta of the region is rational; otherwise the
    regions of :func:`rounded_region` (both directions) give certified two-sided bounds.
    """
    try:
        return SubsampledMechanism(subsample_pld(canonical_pair(region), q, what), what)
    except UnsupportedExpressionError:
        pass
    lower = subsample_pld(canonical_pair(rounded_region(region, False)), q, what)
    upper = subsample_pld(canonical_pair(rounded_region(region, True)), q, what)
    return SubsampledMechanism(None, what, (lower, upper))


def _log_form(r: Fraction) -> LinearForm:
    return _log_of_rational(sympy.Rational(r.numerator, r.denominator))


def _rational_exp(dom: ExpDomain, loss: Loss, what: str) -> Fraction:
    e = dom.exp_loss(loss).as_rational()
    if e is None:
        pos = loss if dom.loss_sign(loss) >= 0 else tuple(-n for n in loss)
        raise UnsupportedExpressionError(
            f"subsampling {what} with eps = {dom.loss_str(pos)} leaves the exact field "
            "(e^eps is not rational, so ln(q e^eps + 1 - q) is no combination of logarithms "
            "of rationals); write each eps as log(r) with r rational, e.g. log(27/20) "
            "(rounding eps up keeps an upper bound)"
        )
    return e


def subsample_pld(base: PLD, q: Any, what: str = "the mechanism") -> SubsampledPair:
    """The subsampled pair of a base pair given by its privacy-loss distribution.

    Args:
        base: the base pair's PLD (P0-masses at losses with rational ``e^l``, P0-leak).
        q: the sampling rate in ``(0, 1]``.
        what: how the base mechanism is named in error messages.

    Raises:
        UnsupportedExpressionError: a loss with irrational ``e^l``.
    """
    rate = parse_rate(q)
    dom = base.domain
    # outcomes of the merged pair: (P-mass, Q-mass); ratio P/Q rational (None: Q = 0)
    outcomes: list[tuple[Fraction, Fraction]] = []
    q_finite = Fraction(0)
    for loss, m in base.masses:
        p = m.as_rational()
        e = _rational_exp(dom, loss, what)
        if p is None:
            raise UnsupportedExpressionError(
                f"subsampling {what}: a mass is not rational ({dom.elem_str(m)})"
            )
        outcomes.append((p, p / e))
        q_finite += p / e
    p_leak = base.leak.as_rational()
    if p_leak is None:
        raise UnsupportedExpressionError(f"subsampling {what}: the leak is not rational")
    q_leak = 1 - q_finite  # Q-mass where P = 0
    if q_leak < 0:
        raise InvalidParameterError(f"subsampling {what}: the pair's Q-masses exceed 1")
    if q_leak:
        outcomes.append((Fraction(0), q_leak))
    fwd: list[tuple[Fraction, Fraction]] = []  # (ratio A/B, A-mass)
    rev: list[tuple[Fraction, Fraction]] = []  # (ratio B/A, B-mass)
    rev_leak = Fraction(0)
    for p, qm in outcomes:
        a = rate * p + (1 - rate) * qm
        if a == 0:  # q = 1 and P = 0: B-mass where A = 0
            rev_leak += qm
            continue
        fwd.append((a / qm, a))
        rev.append((qm / a, qm))
    forms = [_log_form(r) for r, _ in fwd + rev]
    sub = ExpDomain.for_forms(forms) if forms else ExpDomain(None, ())

    def pld(items: list[tuple[Fraction, Fraction]], leak: Fraction) -> PLD:
        return PLD.from_masses(
            sub,
            [(sub.loss(_log_form(r)), QzElem.from_rational(m)) for r, m in items],
            QzElem.from_rational(leak),
        )

    return SubsampledPair(pld(fwd, rate * p_leak), pld(rev, rev_leak), rate)


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
        return compose_subsampled([(lp.payload, n) for lp, n in kinds], memory_limit, label)
    sides = []
    for side in (0, 1):
        items: list[tuple[SubsampledPair | PLD, int]] = [
            (lp.payload[side] if lp.form is PairForm.ASYMMETRIC_BOUNDS else lp.payload, n)
            for lp, n in kinds
        ]
        sides.append(compose_subsampled(items, memory_limit, label))
    return SubsampledBounds(sides[0], sides[1], label)


def compose_subsampled(
    kinds: Sequence[tuple[SubsampledPair | PLD, int]],
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    label: str = "",
) -> SubsampledComposition:
    """Compose subsampled pairs and symmetric pairs (canonical pairs), ``count`` times each.

    Args:
        kinds: ``[(SubsampledPair or symmetric PLD, count), ...]``.
        memory_limit: bytes the exact route may use per direction (None: no limit).
        label: what was composed, for ``repr``.

    Raises:
        ResourceLimitError: the exact result would not fit ``memory_limit``.
    """
    fwd: list[tuple[PLD, int]] = []
    rev: list[tuple[PLD, int]] = []
    for item, count in kinds:
        if isinstance(item, SubsampledPair):
            fwd.append((item.forward, count))
            rev.append((item.reverse, count))
        elif isinstance(item, PLD):
            fwd.append((item, count))
            rev.append((item, count))
        else:
            raise TypeError(f"expected a SubsampledPair or a PLD, got {type(item).__name__}")
    f = compose_plds(fwd, memory_limit=memory_limit)
    r = compose_plds(rev, memory_limit=memory_limit)
    dom = f.domain.join(r.domain)
    f, r = _in(f, dom), _in(r, dom)
    tv = _total_variation(f, r)
    return SubsampledComposition(_with_zero(f, tv), _with_zero(r, tv), label)
