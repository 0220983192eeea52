"""Privacy-loss distributions of finite dominating pairs (docs/theory.md, sections 1 and 3).

A :class:`PLD` stores the distribution of the privacy loss ``L = ln(P0/P1)`` under P0:
a P0-mass at each finite loss value (an exact loss vector) plus a ``leak``, the P0-mass
of letters with ``P1 = 0`` (loss +inf).  Under P1 the mass at loss ``l`` is
``e^{-l}`` times the P0-mass, so one distribution gives both hypotheses.

:func:`canonical_pair` builds the dominating pair of a symmetric piecewise-affine trade-off
function (docs/theory.md, section 1): a leak of mass ``1 - f(0)`` and, for each edge of slope
``-e^{l_j}`` and horizontal length ``L_j`` on ``[0, c]``, P1-mass ``L_j`` at loss ``l_j`` and
P0-mass ``L_j`` at loss ``-l_j`` (times ``e^{l_j}`` for the other hypothesis).
:meth:`PLD.to_region` reads the region back: one constraint per loss ``l >= 0`` with
``delta(l) = leak + sum_{l' > l} (P0(l') - e^l P1(l'))``.

:func:`suffix_deltas` is the one place that recurrence is written (two suffix sums over
the losses in decreasing order); the exact route (genfunc), the certified routes (certified,
dense and sparse) and the closed forms of theorems call it with their own number types.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate, takewhile
from typing import Any, TypeVar

from ..errors import InvalidParameterError
from ..numbers import ExpDomain, Loss, QzElem
from .tradeoff import Region

__all__ = ["PLD", "canonical_pair", "deltas_from_masses", "suffix_deltas"]

_ZERO = QzElem.from_rational(0)

L = TypeVar("L")  # a loss, in whatever form the caller indexes them


def suffix_deltas(
    losses: Iterable[L],
    mass0: Iterable[Any],
    mass1: Iterable[Any],
    exps: Iterable[Any] = (),
    leak: Any = 0,
    zero: Any = 0,
    combine: Callable[[L, Any, Any], Any] | None = None,
) -> list[tuple[L, Any]]:
    """``(l, delta(l))`` for each loss of ``losses`` (decreasing): the suffix-sum recurrence.

    ``delta(l) = leak + S0(l) - e^l S1(l)`` with ``S0(l)``, ``S1(l)`` the sums of the P0-
    and P1-masses over the losses strictly above ``l``, i.e. over the entries before ``l``
    in ``losses``.  Only losses that are listed contribute, so the caller lists every loss
    with mass above the lowest delta it wants (losses below it are never needed).

    The routine is generic in the number type (exact :class:`~.numbers.QzElem`, Arb balls,
    integer polynomials, ``Fraction``): it only adds masses (``zero + m + m' + ...``, in
    the order given) and evaluates ``leak + s0 - e * s1``.  The sums are running sums
    (:func:`itertools.accumulate`, a C loop) and the last total is never formed.

    Args:
        losses: the losses, in decreasing order (any iterable; only its length and items
            are used, handed back with the deltas).
        mass0: P0-mass at each loss (aligned with ``losses``; may be lazy).
        mass1: P1-mass at each loss (aligned with ``losses``; may be lazy).
        exps: ``e^l`` at each loss (aligned; unused with ``combine``).
        leak: mass at loss +inf, added to every delta.
        zero: the zero of the masses' type (the sums above the top loss).
        combine: ``combine(l, S0(l), S1(l))`` replaces ``leak + S0 - e^l S1`` when the sums
            are kept in another representation (genfunc: integer polynomials over a common
            denominator) or only some deltas are wanted.

    Returns:
        ``[(l, delta(l)), ...]`` in the order of ``losses`` (decreasing).

    >>> from fractions import Fraction as F
    >>> suffix_deltas([2, 1, 0], [F(1, 2), F(1, 4), F(1, 4)], [0, F(1, 4), F(1, 4)],
    ...               [F(4), F(2), F(1)], leak=F(1, 8))
    [(2, Fraction(1, 8)), (1, Fraction(5, 8)), (0, Fraction(5, 8))]
    """
    s0 = accumulate(mass0, initial=zero)  # S0 of each loss: the masses before it
    s1 = accumulate(mass1, initial=zero)
    # zip stops at the end of ``losses`` before asking the sums for their last total
    if combine is not None:
        return [(loss, combine(loss, a, b)) for loss, a, b in zip(losses, s0, s1)]
    return [(loss, leak + a - e * b) for loss, e, a, b in zip(losses, exps, s0, s1)]


@dataclass(frozen=True)
class PLD:
    """Privacy-loss distribution: P0-masses at finite losses (sorted) and a leak."""

    domain: ExpDomain
    masses: tuple[tuple[Loss, QzElem], ...]
    leak: QzElem

    @classmethod
    def from_masses(
        cls, domain: ExpDomain, masses: Iterable[tuple[Loss, QzElem]], leak: QzElem
    ) -> PLD:
        """Merge equal losses, drop zero masses, sort by loss."""
        acc: dict[Loss, QzElem] = {}
        for loss, m in masses:
            acc[loss] = acc[loss] + m if loss in acc else m
        items = [(loss, m) for loss, m in acc.items() if not m.is_zero()]
        items.sort(key=lambda c: domain.loss_key(c[0]))
        return cls(domain, tuple(items), leak)

    def in_domain(self, dom: ExpDomain) -> PLD:
        """The same distribution in a finer domain."""
        if dom == self.domain:
            return self
        src = self.domain
        return PLD.from_masses(
            dom,
            [(src.convert_loss(loss, dom), src.convert_elem(m, dom)) for loss, m in self.masses],
            src.convert_elem(self.leak, dom),
        )

    def p1_mass(self, loss: Loss, p0: QzElem) -> QzElem:
        """P1-mass at a finite loss with P0-mass ``p0``."""
        return p0 / self.domain.exp_loss(loss)

    def total_mass(self, hypothesis: int = 0) -> QzElem:
        """Total mass under P0 (``hypothesis=0``) or P1 (finite part only for P1)."""
        if hypothesis == 0:
            return sum((m for _, m in self.masses), self.leak)
        return sum((self.p1_mass(loss, m) for loss, m in self.masses), _ZERO)

    def to_region(self) -> Region:
        """The region of this pair: one edge per loss value >= 0, leak folded into delta."""
        return Region(self.domain, tuple(deltas_from_masses(self.domain, self.masses, self.leak)))

    def mix(self, weight: QzElem, other: PLD) -> PLD:
        """``weight * self + (1 - weight) * other`` (a mixture with revealed component)."""
        if self.domain != other.domain:
            raise InvalidParameterError("mix PLDs of one domain")
        rest = 1 - weight
        return PLD.from_masses(
            self.domain,
            [(loss, weight * m) for loss, m in self.masses]
            + [(loss, rest * m) for loss, m in other.masses],
            weight * self.leak + rest * other.leak,
        )


def deltas_from_masses(
    domain: ExpDomain, masses: Iterable[tuple[Loss, QzElem]], leak: QzElem
) -> list[tuple[Loss, QzElem]]:
    """``(l, delta(l))`` for every loss ``l >= 0``, increasing (two suffix sums).

    ``masses`` must be sorted by increasing loss and free of duplicates.
    """
    top = list(takewhile(lambda c: domain.loss_sign(c[0]) >= 0, reversed(list(masses))))
    exps = [domain.exp_loss(loss) for loss, _ in top]
    out = suffix_deltas(
        [loss for loss, _ in top],
        [m for _, m in top],
        [m / e for (_, m), e in zip(top, exps)],  # P1 = e^{-l} P0
        exps,
        leak,
        _ZERO,
    )
    out.reverse()
    if not out:  # no loss >= 0 has mass: only the leak distinguishes
        out = [(domain.zero_loss(), leak)]
    return out


def canonical_pair(region: Region) -> PLD:
    """The dominating pair of a symmetric piecewise-affine region (docs/theory.md, section 1)."""
    dom = region.domain
    verts = region.half_vertices()
    cons = list(reversed(region.constraints))  # steepest first, aligned with the edges
    xs = [x for x, _ in verts[1:]]
    c = region.fixed_point()
    if len(xs) < len(cons):  # the last edge (eps = 0) crosses the diagonal
        xs.append(c)
    masses: list[tuple[Loss, QzElem]] = []
    left = _ZERO
    for (loss, _), right in zip(cons, xs):
        length = right - left
        left = right
        if length.is_zero():
            continue
        if dom.loss_sign(loss) == 0:
            masses.append((loss, 2 * length))
        else:
            masses.append((loss, dom.exp_loss(loss) * length))
            masses.append((tuple(-n for n in loss), length))
    leak = 1 - verts[0][1]
    return PLD.from_masses(dom, masses, leak)
