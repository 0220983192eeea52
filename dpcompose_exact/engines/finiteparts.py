"""The finite part of a mixed list: the exact loss distribution the noise is conditioned on.

A list of finite pairs and noise composes by conditioning on the loss of its finite part
``F`` (docs/theory.md, section 19): ``delta(eps) = leak_F + sum_l p(l) delta_N(eps - l)``,
where ``p(l)`` is the P-mass of ``F``'s composed pair at the loss ``l`` and ``leak_F`` its
mass at ``+inf``.  This module holds ``F`` in the two forms the sum reads:

* :class:`FinitePart`: symmetric pairs, composed exactly into one region, read through its
  canonical pair (docs/theory.md, section 1: the same trade-off function), one loss
  distribution for both directions;
* :class:`DirectedFinitePart`: asymmetric pairs (exactly subsampled mechanisms), each
  direction's loss distribution the convolution of the parts' same-direction ones (the
  generating polynomials of docs/theory.md, section 3, raised to their counts).

The masses are exact elements of Q(z), ``z = e^g``, evaluated as balls at the precision
asked (:func:`_accurate` raises it until the balls are tight).  Each part also answers its
largest loss (the top of its loss distribution, exact) for ``eps(0)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers import ExpDomain, QzElem
from ..numbers.convert import ball_end
from ..numbers.forms import LinearForm
from ..regions.pld import PLD, canonical_pair
from ..regions.tradeoff import Region

__all__ = ["FinitePart", "DirectedFinitePart"]

#: the largest working precision tried before a ball is returned as it is
_MAX_PREC = 1 << 14


def _accurate(
    at: Callable[[int], tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]], prec: int
) -> tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]:
    """``at(work)`` at the first working precision from ``prec`` whose balls are tight.

    Masses that are rational functions of ``z = e^g`` of high degree cancel when evaluated
    in balls: at too low a precision a ball is infinite (and a sum over it useless).  The
    precision doubles until the leak and every mass have radius ``<= 2^-(prec - 8)``
    (masses are at most 1: an absolute error), up to ``2^14`` bits.
    """
    want = flint.arb(2) ** -(prec - 8)
    work = prec
    while True:
        leak, atoms = out = at(work)
        if work >= _MAX_PREC or (
            leak.rad() <= want and all(m.rad() <= want and loss.is_finite() for loss, m in atoms)
        ):
            return out
        work *= 2


class FinitePart:
    """The finite symmetric part: the exact region of its composition, read as a pair.

    ``region`` is the exact composed region (``None`` for no finite part: one atom of
    mass 1 at loss 0, no leak).  Its canonical pair (docs/theory.md, section 1) has the
    same trade-off function, which is all a composition depends on.
    """

    directions = ("both",)

    def __init__(self, region: Region | None) -> None:
        self.region = region
        if region is None:
            self.domain = ExpDomain(None)
            self.atoms: tuple[tuple[LinearForm, Any], ...] = ()
            self.leak = None
        else:
            pld: PLD = canonical_pair(region)
            self.domain = pld.domain
            self.atoms = tuple((pld.domain.form(loss), m) for loss, m in pld.masses)
            self.leak = pld.leak
        self._balls: dict[int, tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]] = {}

    @property
    def size(self) -> int:
        """The number of loss values (1 without a finite part)."""
        return max(1, len(self.atoms))

    def balls(
        self, prec: int, direction: str = "both"
    ) -> tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]:
        """``(leak, [(loss, mass), ...])`` as balls at ``prec`` bits (kept per precision).

        The part is symmetric: ``direction`` is accepted for the interface and unused.
        """
        if prec not in self._balls:

            def at(work: int) -> tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]:
                with flint.ctx.workprec(work):
                    if self.region is None:
                        return (flint.arb(0), [(flint.arb(0), flint.arb(1))])
                    dom = self.domain
                    leak = dom.elem_ball(self.leak, work)
                    return leak, [
                        (form.ball(work), dom.elem_ball(m, work)) for form, m in self.atoms
                    ]

            self._balls = {prec: _accurate(at, prec)}  # one precision kept: the last asked
        return self._balls[prec]

    def leak_lower(self) -> Fraction:
        """A rational at or below the finite part's leak."""
        if self.region is None or self.leak.is_zero():
            return Fraction(0)
        ball = self.domain.elem_ball(self.leak, 128)
        return max(Fraction(0), ball_end(ball.lower()))

    def largest_loss(self, direction: str = "both") -> LinearForm | None:
        """The largest loss of the part, exact (0 without one); None when it has a leak.

        The canonical pair's losses are increasing: the last with a non-zero mass.
        ``direction`` is accepted for the interface and unused (the part is symmetric).
        """
        if self.region is None:
            return LinearForm(Fraction(0))
        if not self.leak.is_zero():
            return None
        return next(
            (form for form, m in reversed(self.atoms) if not m.is_zero()), LinearForm(Fraction(0))
        )

    def leak_at_least(self, d: Fraction) -> bool:
        """Whether the leak is ``>= d``: a certified comparison in Q(z) (equal included)."""
        if self.region is None or self.leak.is_zero():
            return d <= 0
        return self.domain.sign(self.leak - d) >= 0


class DirectedFinitePart:
    """A finite part with asymmetric pairs: each direction's exact loss distribution.

    Exactly subsampled mechanisms (``asymmetric`` loss pairs) have two directions, the
    forward one (loss ``ln(A/B)`` under ``A``) and the reverse one; symmetric finite pairs
    enter both with their own distribution.  Each direction of the composition is the
    product of the parts' same-direction pairs, so its loss distribution is the
    convolution of theirs: the generating polynomials of docs/theory.md, section 3, raised
    to their counts, every loss kept (below 0 too: the conditioning sum of section 19
    reads ``delta_N(eps - l)`` at every loss ``l`` of the finite part).  The masses are
    exact (integer polynomials in ``z`` over one common denominator) and only evaluated as
    balls, at whatever precision is asked.

    Args:
        items: ``[(loss pair, count), ...]`` of the forms ``finite`` and ``asymmetric``.
        memory_limit: bytes the exact polynomials may use per direction (None: no limit).

    Raises:
        ResourceLimitError: a direction's exact distribution would exceed ``memory_limit``.
    """

    directions = ("fwd", "rev")

    def __init__(self, items: Sequence[tuple[Any, int]], memory_limit: int | None) -> None:
        from .genfunc import _common_denominator, _power_by_loss, common_domain, exact_refusal

        self._exact: dict[str, tuple[ExpDomain, list, flint.fmpz_poly, Any]] = {}
        for direction in self.directions:
            kinds: list[tuple[PLD, int]] = []
            for lp, n in items:
                both = lp.directions()
                if both is None:
                    raise InvalidParameterError(f"a finite part has no pair of form {lp.form}")
                kinds.append((both[0] if direction == "fwd" else both[1], n))
            refusal = exact_refusal(kinds, memory_limit)
            if refusal is not None:
                raise ResourceLimitError(refusal)
            kinds = common_domain(kinds)
            dom = kinds[0][0].domain
            den = flint.fmpz_poly([1])
            survive = QzElem.from_rational(1)
            steps = []
            for pld, count in kinds:
                d, nums = _common_denominator(pld)
                steps.append((nums, count))
                den = den * d**count
                survive = survive * (1 - pld.leak) ** count
            by_loss = _power_by_loss(steps, dom.dim)
            self._exact[direction] = (dom, list(by_loss.items()), den, 1 - survive)
        self._balls: dict[tuple[str, int], tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]] = {}

    @property
    def size(self) -> int:
        """The number of loss values of the larger direction."""
        return max(len(v[1]) for v in self._exact.values())

    def balls(
        self, prec: int, direction: str = "fwd"
    ) -> tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]:
        """``(leak, [(loss, mass), ...])`` of ``direction`` as balls at ``prec`` bits."""
        key = (direction, prec)
        if key not in self._balls:
            dom, atoms, den, leak = self._exact[direction]

            def at(work: int) -> tuple[flint.arb, list[tuple[flint.arb, flint.arb]]]:
                with flint.ctx.workprec(work):
                    z = dom.z_ball(work)
                    inv = 1 / flint.arb_poly(den)(z)
                    return dom.elem_ball(leak, work), [
                        (dom.loss_ball(loss, work), flint.arb_poly(num)(z) * inv)
                        for loss, num in atoms
                    ]

            self._balls = {k: v for k, v in self._balls.items() if k[1] == prec}
            self._balls[key] = _accurate(at, prec)
        return self._balls[key]

    def largest_loss(self, direction: str) -> LinearForm | None:
        """The largest loss of ``direction`` with a positive mass, exact; None with a leak.

        Found by certified comparisons of the exact losses (docs/theory.md, section 3).
        """
        dom, atoms, _, leak = self._exact[direction]
        if not leak.is_zero():
            return None
        best = None
        for loss, num in atoms:
            if not num.is_zero() and (best is None or dom.compare_loss(loss, best) > 0):
                best = loss
        return dom.form(best) if best is not None else LinearForm(Fraction(0))

    def leak_lower(self) -> Fraction:
        """A rational at or below the larger direction's leak."""
        best = Fraction(0)
        for dom, _, _, leak in self._exact.values():
            if not leak.is_zero():
                best = max(best, ball_end(dom.elem_ball(leak, 128).lower()))
        return best

    def leak_at_least(self, d: Fraction) -> bool:
        """Whether the larger direction's leak is ``>= d`` (certified comparisons in Q(z))."""
        return any(
            dom.sign(leak - d) >= 0 if not leak.is_zero() else d <= 0
            for dom, _, _, leak in self._exact.values()
        )
