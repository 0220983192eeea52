"""Mechanisms run on a subsample: the exact subsampled pair of a finite mechanism.

A mechanism with dominating pair ``(P, Q)`` run on a Poisson subsample of rate ``q``
(under the add/remove relation), or on a sample of ``m`` of ``n`` records drawn without
replacement (``q = m/n``, under replace-one), has the dominating pair

    ``A = q P + (1 - q) Q``,  ``B = Q``

(docs/theory.md, section 15).  The pair is asymmetric, so it is kept as a
:class:`~dpcompose_exact.regions.protocol.DirectedPair`: ``forward`` the loss ``ln(A/B)``
under ``A``, ``reverse`` the loss ``ln(B/A)`` under ``B``.  The loss of an outcome with
base loss ``l`` becomes ``ln(q e^l + 1 - q)``: it stays a logarithm of a rational exactly
when ``e^l`` is rational; other pairs leave the field and are bounded from both sides by
the subsampled pairs of a stronger and a weaker mechanism whose epsilons are logarithms
of rationals (:func:`rounded_region`, a
:class:`~dpcompose_exact.regions.protocol.BoundedPair`).  The compositions live in
:mod:`dpcompose_exact.engines.subsample`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import sympy

from ..errors import InvalidParameterError, UnsupportedExpressionError
from ..numbers import ExpDomain, Loss, QzElem
from ..numbers.convert import ball_end
from ..numbers.format import readable_exact
from ..numbers.forms import LinearForm, _log_of_rational
from ..regions.pld import PLD, canonical_pair
from ..regions.protocol import BoundedPair, DirectedPair, LossPair
from ..regions.tradeoff import Region, dp_region
from .noise import parse_rate

__all__ = [
    "SubsampledMechanism",
    "subsample_pld",
    "subsample_region",
    "rounded_region",
    "ROUND_DIGITS",
]


class SubsampledMechanism:
    """A mechanism run on a subsample of rate ``q``: compose it with ``compose(m, k)``.

    Made by :meth:`dpcompose_exact.Mechanism.subsample` (or :func:`subsample_region`).

    Attributes:
        q: the sampling rate.
        base: names the mechanism it was made from.
        pairs: the base mechanism's constraints, exact strings.
        label: the name a family gave the base mechanism (``rr(1/2,2)``), for titles.
    """

    __slots__ = ("_pair", "q", "base", "pairs", "label")

    def __init__(
        self,
        pair: DirectedPair | BoundedPair,
        q: Fraction,
        base: str,
        pairs: tuple[tuple[str, str], ...] = (),
        label: str | None = None,
    ) -> None:
        self._pair = pair
        self.q = q
        self.base = base
        self.pairs = pairs
        self.label = label

    def loss_pair(self) -> LossPair:
        """The directed pair (both directions), or a stronger and a weaker one (bounds)."""
        return self._pair

    def to_dict(self) -> dict[str, Any]:
        """``{"constraints": [[eps, delta], ...], "subsample": q}`` with exact strings."""
        return {"constraints": [list(p) for p in self.pairs], "subsample": str(self.q)}

    def describe(self) -> str:
        """``(eps, delta)+... subsampled at q``, for titles."""
        text = "+".join(f"({readable_exact(e)}, {readable_exact(d)})" for e, d in self.pairs)
        return f"{text} subsampled at {self.q}"

    def _key(self) -> tuple:
        return (self._pair, self.q)

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
            r = _rounded(ball_end(dom.loss_ball(loss, 160).exp(), up), digits, up)
            r = max(r, Fraction(1))
        dq = d.as_rational()
        if dq is None:
            dq = _rounded(ball_end(dom.elem_ball(d, 160), up), digits + 6, up)
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
    rate = parse_rate(q)
    try:
        return SubsampledMechanism(subsample_pld(canonical_pair(region), rate, what), rate, what)
    except UnsupportedExpressionError:
        pass
    lower = subsample_pld(canonical_pair(rounded_region(region, False)), rate, what)
    upper = subsample_pld(canonical_pair(rounded_region(region, True)), rate, what)
    return SubsampledMechanism(BoundedPair(lower, upper), rate, what)


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


def subsample_pld(base: PLD, q: Any, what: str = "the mechanism") -> DirectedPair:
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

    return DirectedPair(pld(fwd, rate * p_leak), pld(rev, rev_leak))


