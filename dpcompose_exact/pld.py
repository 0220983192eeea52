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
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .errors import InvalidParameterError
from .numbers import ExpDomain, Loss, QzElem
from .tradeoff import Region

__all__ = ["PLD", "canonical_pair", "deltas_from_masses"]

_ZERO = QzElem.from_rational(0)


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
    items = list(masses)
    out: list[tuple[Loss, QzElem]] = []
    s0 = _ZERO  # P0-mass above the current loss
    s1 = _ZERO  # P1-mass above the current loss
    for loss, m in reversed(items):
        if domain.loss_sign(loss) < 0:
            break
        out.append((loss, leak + s0 - domain.exp_loss(loss) * s1))
        s0 = s0 + m
        s1 = s1 + m / domain.exp_loss(loss)
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
