"""``delta(eps)`` near the largest loss, by enumerating every outcome above ``eps``.

Near the largest loss of a composition, ``delta(eps)`` is a sum over a few outcomes: only
those whose loss exceeds ``eps`` count (docs/theory.md, section 14).  Write ``top`` for the
largest loss (each kind's largest loss times its count) and, for an outcome, its *deficit*
``top - loss``, the sum over the components of ``(kind's largest loss) - (component's
loss)``: every term is non-negative.  The outcomes with ``loss > eps`` are those with
deficit ``< top - eps =: D``; when ``D`` is small against the gaps between a kind's
losses there are few of them, and::

    delta(eps) = leak + sum over outcomes with deficit < D of P0(outcome) (1 - e^(eps - loss))

is summed *completely*: no mass is omitted, so the enclosure is as narrow as the balls.

**Enumeration.**  Per kind, the outcomes are multisets of its atoms (``count`` of them);
an outcome with ``n_l`` atoms at loss ``l`` has P0-mass ``count! / prod n_l! prod m_l^n_l``.
A depth-first walk over the kinds and their atoms in order of deficit adds atoms while the
deficit can still be below ``D``: a branch is cut only when its deficit is certainly
``>= D`` (ball comparison), and deficits only grow along a branch, so no outcome with loss
above ``eps`` is skipped.  Outcomes the balls cannot place (deficit within rounding of
``D``) are kept, with the positive part of their term's ball, which contains the true
term (0 or positive) either way.  Beyond ``max_terms`` outcomes the walk gives up
(:class:`~dpcompose_exact.engines.logsplit.TooLarge`): the query is not near enough to the top.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import flint

from ..numbers.convert import rational_ball
from ..numbers.value import Value
from ..regions.pld import PLD
from .genfunc import common_domain
from .logsplit import PREC, TooLarge, _frac_ball, _mid_fraction, check_deadline

__all__ = ["top_delta", "top_epsilon", "top_loss_ball", "TOP_TERMS"]

TOP_TERMS = 5_000  # outcomes beyond which the query is not near enough to the top


def top_delta(
    kinds: Sequence[tuple[PLD, int]],
    eps: flint.arb,
    max_terms: int = TOP_TERMS,
    deadline: float | None = None,
) -> Value:
    """A certified enclosure of ``delta(eps)`` summed over every outcome above ``eps``.

    Args:
        kinds: ``[(pair, count), ...]`` (any pairs; joined into one domain here).
        eps: a ball containing ``eps`` (``>= 0``).
        max_terms: give up beyond this many outcomes.
        deadline: a ``time.process_time()`` instant (checked every 256 outcomes).

    Raises:
        TooLarge: more than ``max_terms`` outcomes lie above ``eps``, or none does
            (``eps`` at or above the largest loss: delta is the leak, given exactly
            elsewhere).
    """
    kinds = common_domain([(p, c) for p, c in kinds if c])
    dom = kinds[0][0].domain
    with flint.ctx.workprec(PREC):
        survive = flint.arb(1)
        per_kind = []  # (count, [(deficit ball, log of mass ball... mass ball)], top ball)
        top = flint.arb(0)
        for pld, count in kinds:
            survive *= (1 - dom.elem_ball(pld.leak, PREC)) ** count
            if not pld.masses:
                continue
            high = dom.sort_losses([loss for loss, _ in pld.masses])[-1]
            hb = dom.loss_ball(high, PREC)
            top += count * hb
            # the top atom first (deficit exactly 0), then the others by deficit; the mass
            # balls are made when an outcome first uses them (a ball of an element with a
            # tiny generator evaluates a polynomial of huge degree)
            first = next(m for loss, m in pld.masses if loss == high)
            rest = sorted(
                (
                    (hb - dom.loss_ball(loss, PREC), _LazyBall(dom, m))
                    for loss, m in pld.masses
                    if loss != high
                ),
                key=lambda a: float(a[0].mid()),
            )
            per_kind.append((count, dom.elem_ball(first, PREC), rest))
        leak = 1 - survive
        budget = top - eps  # outcomes with deficit < budget count
        total = flint.arb(0)
        e_eps_top = (eps - top).exp()
        terms = 0

        def walk_kind(i: int, deficit: flint.arb, weight: flint.arb) -> None:
            nonlocal total, terms
            if i == len(per_kind):
                terms += 1
                if terms > max_terms:
                    raise TooLarge("too many outcomes above eps")
                if not terms & 255:
                    check_deadline(deadline)
                total += weight * (1 - e_eps_top * deficit.exp()).nonnegative_part()
                return
            count, m_top, rest = per_kind[i]

            def walk_atom(j: int, left: int, deficit: flint.arb, weight: flint.arb) -> None:
                # atoms j, j+1, ... of ``rest`` may still be added; ``left`` slots remain
                # and will hold the top atom
                walk_kind(i + 1, deficit, weight * m_top**left)
                for jj in range(j, len(rest)):
                    gap, lazy = rest[jj]
                    d, w, n = deficit, weight, 0
                    while n < left:
                        d = d + gap
                        if d.lower() >= budget.upper():  # loss <= eps surely: term 0
                            break
                        n += 1
                        # choose the n atoms among the ``left`` slots: C(left, n)
                        w2 = w * flint.arb(left).bin(n) * lazy.ball**n
                        walk_atom(jj + 1, left - n, d, w2)

            walk_atom(0, count, deficit, weight)

        if budget.upper() <= 0:  # at or above the largest loss: delta is the leak, which
            # the other routes give exactly (here it would be a ball)
            raise TooLarge("eps is at or above the largest loss")
        walk_kind(0, flint.arb(0), flint.arb(1))
        lo = (leak + total).lower()
        hi = (leak + total).upper()
    return Value.from_interval(lo if lo > 0 else flint.arb(0), hi)


class _LazyBall:
    """The ball of an element of the domain at :data:`PREC` bits, made on first use."""

    __slots__ = ("_dom", "_elem", "_ball")

    def __init__(self, dom: Any, elem: Any) -> None:
        self._dom, self._elem, self._ball = dom, elem, None

    @property
    def ball(self) -> flint.arb:
        if self._ball is None:
            self._ball = self._dom.elem_ball(self._elem, PREC)
        return self._ball


def top_loss_ball(kinds: Sequence[tuple[PLD, int]]) -> Any:
    """A ball containing the largest loss of the composition."""
    kinds = common_domain([(p, c) for p, c in kinds if c])
    dom = kinds[0][0].domain
    with flint.ctx.workprec(PREC):
        top = flint.arb(0)
        for pld, count in kinds:
            if pld.masses:
                high = dom.sort_losses([loss for loss, _ in pld.masses])[-1]
                top += count * dom.loss_ball(high, PREC)
    return top


def top_epsilon(
    kinds: Sequence[tuple[PLD, int]],
    delta: Fraction,
    width: Fraction,
    max_terms: int = TOP_TERMS,
    deadline: float | None = None,
) -> Value:
    """A certified enclosure of ``eps(delta)`` for a ``delta`` met near the largest loss.

    ``delta(eps)`` is non-increasing; :func:`top_delta` gives certified ends near the
    top.  Stepping down from the largest loss (gaps doubling) finds ``e1`` with
    ``delta_lower(e1) > delta``; bisection on exact rationals then narrows ``[e1, e2]``
    (``delta_upper(e2) <= delta`` certified) to the relative width asked.

    Raises:
        TooLarge: ``delta`` is not met near enough to the top (too many outcomes above
            the ``eps`` where it is), or ``delta`` is not above the leak.
    """
    db = rational_ball(delta)
    top = top_loss_ball(kinds)
    with flint.ctx.workprec(PREC):
        # an exact rational just above the top: delta there is the leak
        hi = _mid_fraction(top.upper()) + Fraction(1, 2**64)

        def ends(e: Fraction) -> tuple[flint.arb, flint.arb]:
            with flint.ctx.workprec(PREC):
                v = top_delta(kinds, _frac_ball(e), max_terms, deadline).ball()
                return v.lower(), v.upper()

        leak_hi = _leak_upper(kinds)
        if not leak_hi < db:  # at or below the leak: the other routes decide it exactly
            raise TooLarge("delta is not above the leak")
        gap = Fraction(1, 2**20)
        lo = None
        while lo is None:
            e = hi - gap
            if e <= 0:
                raise TooLarge("delta is not met near the largest loss")
            low, high = ends(e)
            if low > db:
                lo = e
            else:
                if high <= db:  # still at or below delta: the crossing is lower
                    hi = e
                gap *= 2
        # bisection: delta_lower(lo) > d, delta_upper(hi) <= d
        for _ in range(400):
            if hi - lo <= width * lo:
                break
            mid = (lo + hi) / 2
            low, high = ends(mid)
            if low > db:
                lo = mid
            elif high <= db:
                hi = mid
            else:  # the balls cannot decide at mid: the enclosure is as narrow as it gets
                break
            lo, hi = _round_down(lo), _round_up(hi)
        return Value.from_interval(_frac_ball(lo), _frac_ball(hi))


def _round_down(q: Fraction) -> Fraction:
    return Fraction(math.floor(q * 2**80), 2**80) if q.denominator > 2**80 else q


def _round_up(q: Fraction) -> Fraction:
    return Fraction(math.ceil(q * 2**80), 2**80) if q.denominator > 2**80 else q


def _leak_upper(kinds: Sequence[tuple[PLD, int]]) -> flint.arb:
    with flint.ctx.workprec(PREC):
        survive = flint.arb(1)
        for pld, count in kinds:
            if count:
                survive *= (1 - pld.domain.elem_ball(pld.leak, PREC)) ** count
        return (1 - survive).upper()
