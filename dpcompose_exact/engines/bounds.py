"""Certified two-sided bounds on delta(eps) and eps(delta) for any structure.

When the exact structure is too large (several incommensurable generators such as
``log 2``, ``log 3 - log 2`` and ``1/10``, many kinds, huge k) the region is still enclosed
(docs/theory.md, section 14), by the first of two schemes that reaches the relative width
asked:

0. near the largest loss, ``delta(eps)`` summed over every outcome above ``eps``
   (:mod:`~dpcompose_exact.engines.toploss`): complete, no omitted mass;
1. the log-split sum (:mod:`~dpcompose_exact.engines.logsplit`): logarithmic losses kept exact,
   their usage counts enumerated above a threshold, the omitted mass bounded;
2. the grid enclosure below, the fallback when the sum would need too many terms: each
   kind's dominating pair is replaced by a pair on a one-generator grid ``h Z`` that is
   *weaker* (a lower pair) and one that is *stronger* (an upper pair), both are composed
   on the grid, and the true ``delta(eps)`` lies between theirs.  The width shrinks as
   ``h`` is refined.

**The pairs.**  A symmetric dominating pair (docs/theory.md, section 1) is a leak ``lambda``
plus a mixture, with revealed component, of randomized responses: weight ``w_r`` on
``RR(l_r)``, the pair ``P = (e^l, 1) / (1 + e^l)``, ``Q = (1, e^l) / (1 + e^l)`` with losses
``+-l``.  For ``l >= 0`` write ``a = h floor(l / h)``, ``b = a + h`` and
``s(x) = 1 / (1 + e^x)``.

* Lower pair: ``RR(l)`` becomes ``RR(a)``.
* Upper pair: ``RR(l)`` becomes ``alpha RR(b) + (1 - alpha) RR(a)`` (revealed component) with
  ``alpha = (s(a) - s(l)) / (s(a) - s(b))`` in ``[0, 1]`` (the "connect the dots" pair).
* Losses already on the grid (``l = a``) are kept; the leak and weights are kept exactly.

**Why the bounds hold.**  Write ``H_t(P || Q) = sum (P - t Q)_+`` for the hockey-stick
divergence, so ``delta(eps) = H_{e^eps}``.  For ``RR(x)``, ``t = e^eps`` and ``eps >= 0``:
``H_t(RR(x)) = (e^x - t)_+ / (1 + e^x) = (1 - (1 + t) s(x))_+``.

1. *Lower.*  ``H_t(RR(x))`` is non-decreasing in ``x`` (``s`` decreases), so
   ``H_t(RR(a)) <= H_t(RR(l))`` for every ``t >= 1``.
2. *Upper.*  Let ``M = alpha RR(b) + (1 - alpha) RR(a)``; with the component revealed,
   ``H_t(M) = alpha H_t(RR(b)) + (1 - alpha) H_t(RR(a))``.  By the choice of ``alpha``,
   ``alpha s(b) + (1 - alpha) s(a) = s(l)``.  If ``t <= e^a`` all three terms are positive
   parts of non-negative numbers and ``H_t(M) - H_t(RR(l)) = (1 + t)(s(l) - alpha s(b) -
   (1 - alpha) s(a)) = 0``.  If ``e^a < t <= e^l``, ``H_t(RR(a)) = 0`` and
   ``alpha (1 - (1 + t) s(b)) - (1 - (1 + t) s(l)) = (1 - alpha)((1 + t) s(a) - 1) >= 0``
   since ``(1 + t) s(a) >= 1``.  If ``t > e^l``, ``H_t(RR(l)) = 0 <= H_t(M)``.  So
   ``H_t(M) >= H_t(RR(l))`` for every ``t >= 1``.
3. A revealed-component mixture adds the divergences with the same weights, and the leak
   adds ``lambda`` to all three.  Hence, per kind, ``H_t(lower) <= H_t(true) <= H_t(upper)``
   for every ``t >= 1``; all three pairs are symmetric, and for a symmetric pair
   ``H_t = 1 - t + t H_{1/t}`` covers ``t < 1``, so the inequalities hold for every
   ``t >= 0``.  That is the order of trade-off functions (``f_lower >= f_true >=
   f_upper``), i.e. by Blackwell's theorem each weaker pair is a post-processing of the
   stronger one.  Post-processing commutes with composition (apply the kernels
   coordinatewise), and the hockey-stick divergence does not increase under
   post-processing (data processing inequality).  So for the k-fold compositions,
   ``delta_lower(eps) <= delta(eps) <= delta_upper(eps)`` for every ``eps``.
4. ``eps(delta)`` is the smallest eps with ``delta(eps) <= delta`` and every curve is
   non-increasing, so ``eps_lower(delta) <= eps(delta) <= eps_upper(delta)``.

**Composing the grid pairs.**  Only one curve value is needed per query, to an absolute
accuracy far below the width, so the grid masses are composed in fixed point
(:class:`GridCurve`): every one-step mass is rounded down (lower pair) or up (upper pair)
to a multiple of ``2^-bits``, the powers are exact FLINT integer products, each shifted back
by ``bits`` with the same rounding.  All quantities are non-negative, so the lower pair's
computed masses stay below its exact masses and the upper pair's above; ``delta(eps) =
leak + sum_{l > eps} P0(l) (1 - e^(eps - l))`` has non-negative weights, so the sums (Arb
balls) keep the sides.  (The certified route, :mod:`~dpcompose_exact.engines.certified`, certifies
every mass to a relative accuracy: on these grids it is 10-30 times slower and is not
needed.)  The reported interval is ``[lower end of the lower ball, upper end of the upper
ball]``: a rigorous enclosure, never presented as more (the
:class:`~dpcompose_exact.numbers.value.Value` holds the interval and prints only certified
digits; :meth:`~dpcompose_exact.numbers.value.Value.interval` rounds outward).

**Accuracy.**  Each use of ``RR(l)`` moves the lower pair's loss by ``l - a`` and the upper
pair's (at second order) by less, so the relative width grows like k times the rounding
error of the lower pair.  Rational parts of the epsilons stay exact (``h`` divides the
rational generator); only logarithms are rounded, and ``h = g / N`` is chosen (a heuristic
search over ``N``; any
choice is sound) so that they fall just above grid points.  Cost: about log k integer
polynomial products of ``2 k max(l) / h`` coefficients of ``bits`` bits each.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint
import mpmath

from ..errors import BelowLeakError, CertificationError, InvalidParameterError, ResourceLimitError
from ..numbers import (
    ExpDomain,
    Loss,
    QzElem,
    certified_sign,
    parse_rational,
)
from ..numbers.convert import parse_eps
from ..numbers.format import outward_decimal
from ..numbers.value import Value
from ..regions.pld import PLD
from .genfunc import common_domain
from .logsplit import (
    LogSplit,
    OutOfTime,
    TooLarge,
    _eps_ball,
    at_or_above,
    check_deadline,
    short_text,
)
from .toploss import top_delta, top_epsilon

__all__ = [
    "Enclosure",
    "enclose",
    "delta_bounds",
    "epsilon_bounds",
    "relative_width",
    "ABSOLUTE_FLOOR",
    "Bounded",
    "grid_pairs",
    "bounded_rows",
    "table_rows",
    "DEFAULT_WIDTH",
    "START_TERMS",
]

DEFAULT_WIDTH = Fraction(1, 10**6)  # relative width asked by default
START_TERMS = 20_001  # loss values of the first (coarsest) grid tried
MAX_TERMS = 4_000_001  # loss values of the finest grid (about 1 GB of fixed-point masses)
_BITS = 128  # fixed-point bits of the composed masses: far below any useful width

_H = mpmath.MPContext()  # heuristic only (choice of the grid), its own precision
_H.dps = 20


@dataclass(frozen=True)
class Enclosure:
    """The composed lower and upper grid pairs: the true curves lie between theirs.

    Attributes:
        lower: the composition of the lower pairs (its ``delta`` is below the truth).
        upper: the composition of the upper pairs (its ``delta`` is above the truth).
        step: the grid step ``h``.
        terms: loss values of the composed grid pairs.
    """

    lower: GridCurve
    upper: GridCurve
    step: Fraction
    terms: int
    kinds: tuple[tuple[PLD, int], ...] = ()

    def delta(self, eps: Any) -> Value:
        """A certified enclosure of ``delta(eps)`` of the true composition.

        From the largest loss of the true composition on it is the leak, exactly.
        """
        if self.kinds:
            dom = self.kinds[0][0].domain
            if at_or_above(dom, _top_loss(self.kinds), eps):
                return Value.from_qz(dom, _exact_leak(self.kinds))
        lo = self.lower.delta_ball(eps)
        hi = self.upper.delta_ball(eps)
        # the ends at the balls' own precision (lower end of the lower ball, upper of the upper)
        return Value.from_interval(lo, hi, nonnegative=True)

    def epsilon(self, delta: Any) -> Value:
        """A certified enclosure of ``eps(delta)`` of the true composition."""
        d = parse_rational(delta, "delta")
        if not 0 <= d < 1:
            raise InvalidParameterError(
                f"delta = {short_text(delta)} is outside the valid range [0, 1)"
            )
        at_leak = self._versus_leak(d)
        if at_leak is not None:
            return at_leak
        lo = self.lower.epsilon_bound(d, upper=False)
        hi = self.upper.epsilon_bound(d, upper=True)
        return Value.from_interval(_clip(lo), hi, nonnegative=True)

    def _versus_leak(self, d: Fraction) -> Value | None:
        """``eps(d)`` when ``d`` is exactly the leak (the largest loss), else None.

        The grid curves hold the leak as a ball; when it contains ``d`` the exact leak
        ``1 - prod (1 - lambda)^k`` decides: below it, no finite eps (refused); equal to
        it, ``delta(eps) = leak`` exactly from the largest loss of the true composition on
        (every larger loss has mass 0, the largest one has positive mass), so ``eps(d)`` is
        that loss, an exact value.
        """
        leak = self.upper.leak
        with flint.ctx.workprec(self.upper.bits + 64):
            if leak < flint.arb(flint.fmpq(d.numerator, d.denominator)) or not self.kinds:
                return None
        dom = self.kinds[0][0].domain
        leak_x = _exact_leak(self.kinds)
        sign = dom.compare(leak_x, QzElem.from_rational(d))
        if sign > 0:
            raise BelowLeakError(
                f"delta = {_short_fraction(d)} is below the leak {Value.from_qz(dom, leak_x)} "
                "(the probability that the composition reveals the input outright): no finite "
                "eps achieves it"
            )
        if sign < 0:
            return None
        return Value.from_loss(dom, _top_loss(self.kinds))


def _short_fraction(q: Fraction) -> str:
    text = str(q)
    return text if len(text) <= 40 else f"{Value.from_rational(q).decimal(12)}..."


def _exact_leak(kinds: Sequence[tuple[PLD, int]]) -> QzElem:
    """``1 - prod (1 - lambda)^k`` exactly (every pair in one domain)."""
    survive = QzElem.from_rational(1)
    for pld, count in kinds:
        survive = survive * (1 - pld.leak) ** count
    return 1 - survive


def _top_loss(kinds: Sequence[tuple[PLD, int]]) -> Loss:
    """The largest loss of the composition: the sum of each kind's largest, exactly."""
    dom = kinds[0][0].domain
    total = dom.zero_loss()
    for pld, count in kinds:
        best = dom.zero_loss()
        for loss, _ in _components(pld):
            if dom.compare_loss(loss, best) > 0:
                best = loss
        total = tuple(t + count * b for t, b in zip(total, best))
    return total


def _clip(x: flint.arb) -> flint.arb:
    """Lower ends below 0 carry no information (deltas and epsilons are >= 0)."""
    return x if x >= 0 else flint.arb(0)


#: Widths are measured against ``max(lower end, ABSOLUTE_FLOOR)``: an enclosure of an exact
#: zero, or of a value below ``1e-300`` (far below any delta a user asks about), counts as
#: narrow once its absolute width is ``width * 1e-300``.
ABSOLUTE_FLOOR = Fraction(1, 10**300)


def relative_width(v: Value) -> flint.arb:
    """``(upper - lower) / max(lower, ABSOLUTE_FLOOR)`` of an enclosure (an upper bound on it).

    An exact value, an exact zero included, has width 0; an enclosure reaching down to 0
    (or below :data:`ABSOLUTE_FLOOR`) is measured against the floor instead of its lower
    end, so the width is finite and shrinks with the enclosure.
    """
    if v.is_exact:  # a closed form: known to every digit
        return flint.arb(0)
    try:
        lo, hi = v.ends()
    except CertificationError:  # no finite enclosure
        return flint.arb("inf")
    if lo == hi:
        return flint.arb(0)
    # enough bits that the difference of the two exact points is exact
    span = max(lo.mid().bits(), hi.mid().bits(), 53)
    top = max(_exp2(lo), _exp2(hi))
    bottom = min(_exp2(lo, low=True), _exp2(hi, low=True))
    with flint.ctx.workprec(min(max(span, top - bottom + 8), 1 << 20) + 16):
        floor = flint.arb(flint.fmpq(*_nd(ABSOLUTE_FLOOR)))
        base = lo if lo > floor else floor.lower()
        return ((hi - lo) / base).upper()


def _exp2(x: flint.arb, low: bool = False) -> int:
    """The binary exponent of the highest (or, ``low``, the lowest) bit of an exact point."""
    man, exp = (int(v) for v in x.mid().man_exp())
    if man == 0:
        return 0
    return exp if low else exp + abs(man).bit_length()


# ---------------------------------------------------------------------------------------
# The grid pairs
# ---------------------------------------------------------------------------------------


def _components(pld: PLD) -> list[tuple[Loss, QzElem]]:
    """``(l, w)`` per randomized response ``RR(l)``, ``l >= 0``, of a symmetric pair."""
    dom = pld.domain
    out: dict[Loss, QzElem] = {}
    for loss, m in pld.masses:
        key = loss if dom.loss_sign(loss) >= 0 else tuple(-n for n in loss)
        out[key] = out[key] + m if key in out else m
    return list(out.items())


def _to_grid_elem(dom: ExpDomain, x: QzElem, n: int) -> QzElem:
    """An element of ``Q(e^g0)`` re-expressed in ``Q(e^(g0 / n))``."""
    if dom.g0 is None:
        return QzElem.from_rational(Fraction(int(x.num(1)), int(x.den(1))))
    return x.inflate(n)


def _floor_units(dom: ExpDomain, loss: Loss, step: Fraction) -> tuple[int, bool]:
    """``(floor(l / h), l == h floor(l / h))`` for a loss ``l >= 0``, decided exactly."""
    form = dom.form(loss)
    if not form.logs:
        q = form.rational / step
        return q.numerator // q.denominator, q.denominator == 1
    with flint.ctx.workprec(64):
        man, exp = (dom.loss_ball(loss, 64) / flint.arb(flint.fmpq(*_nd(step)))).mid().man_exp()
    guess = (int(man) << int(exp)) if exp >= 0 else int(man) >> -int(exp)

    def above(n: int) -> int:  # sign of l - n h; never 0 (l is irrational)
        return certified_sign(
            lambda prec: dom.loss_ball(loss, prec) - n * flint.arb(flint.fmpq(*_nd(step))),
            False,
            "loss - grid point",
        )

    while above(guess) < 0:
        guess -= 1
    while above(guess + 1) > 0:
        guess += 1
    return guess, False


def _nd(q: Fraction) -> tuple[int, int]:
    return q.numerator, q.denominator


def _rr_masses(w: QzElem, n: int) -> list[tuple[Loss, QzElem]]:
    """P0-masses of ``w RR(n h)`` in the grid domain."""
    if n == 0:
        return [((0,), w)]
    e = QzElem.monomial(1, n)
    return [((n,), w * e / (1 + e)), ((-n,), w / (1 + e))]


def grid_pairs(pld: PLD, refine: int) -> tuple[PLD, PLD, Fraction]:
    """The lower and upper grid pairs of one symmetric pair (module docstring).

    Args:
        pld: a symmetric dominating pair (e.g. :func:`~dpcompose_exact.regions.pld.canonical_pair`).
        refine: ``N``; the grid step is ``h = g0 / N`` (``1 / N`` without a rational part).

    Returns:
        ``(lower, upper, h)``, both pairs in the one-generator domain of ``h``.
    """
    dom = pld.domain
    g0 = dom.g0 if dom.g0 is not None else Fraction(1)
    step = g0 / refine
    grid = ExpDomain(step)
    lower: list[tuple[Loss, QzElem]] = []
    upper: list[tuple[Loss, QzElem]] = []
    for loss, w_old in _components(pld):
        w = _to_grid_elem(dom, w_old, refine)
        a, exact = _floor_units(dom, loss, step)
        lower += _rr_masses(w, a)
        if exact:
            upper += _rr_masses(w, a)
            continue
        e_l = _to_grid_elem(dom, dom.exp_loss(loss), refine)
        s_l = 1 / (1 + e_l)
        s_a = 1 / (1 + QzElem.monomial(1, a))
        s_b = 1 / (1 + QzElem.monomial(1, a + 1))
        alpha = (s_a - s_l) / (s_a - s_b)
        upper += _rr_masses(w * alpha, a + 1) + _rr_masses(w * (1 - alpha), a)
    leak = _to_grid_elem(dom, pld.leak, refine)
    return (
        PLD.from_masses(grid, lower, leak),
        PLD.from_masses(grid, upper, leak),
        step,
    )


# ---------------------------------------------------------------------------------------
# Composing a grid pair: fixed point with directed rounding
# ---------------------------------------------------------------------------------------


def _dyadic(x: flint.arb) -> Fraction:
    man, exp = (int(v) for v in x.man_exp())
    return Fraction(man) * Fraction(2) ** exp


def _round_int(ball: flint.arb, up: bool) -> int:
    """``ceil`` of the upper end (``up``) or ``floor`` of the lower end of a ball, exactly."""
    m, r = _dyadic(ball.mid()), _dyadic(ball.rad())
    v = m + r if up else m - r
    return -((-v.numerator) // v.denominator) if up else v.numerator // v.denominator


def _shift(p: flint.fmpz_poly, bits: int, up: bool) -> flint.fmpz_poly:
    """Coefficientwise ``ceil`` (``up``) or ``floor`` of ``p / 2^bits`` (coefficients >= 0).

    FLINT's polynomial ``//`` truncates towards zero, which is the floor only for
    non-negative coefficients; the ceiling is therefore ``(p + (d - 1)) // d`` taken
    coefficient by coefficient (``-((-p) // d)`` would truncate, i.e. round down).
    """
    d = 1 << bits
    if not up:
        return p // d
    n = p.degree() + 1
    if n <= 0:
        return p
    return (p + flint.fmpz_poly([d - 1] * n)) // d


@dataclass(frozen=True)
class GridCurve:
    """The k-fold finite masses of grid pairs in fixed point, rounded in one direction.

    ``coeffs / 2^bits`` is coefficientwise below (``up=False``) or above (``up=True``) the
    P0-masses of the composed grid pair at losses ``(lo + i) h``: every one-step mass is
    rounded that way, and after each exact integer product the result is shifted back by
    ``bits`` with the same rounding, so each partial product stays on its side of the exact
    one (all terms are non-negative).  ``delta(eps) = leak + sum_{l > eps} P0(l) (1 -
    e^(eps - l))`` has non-negative weights, so the sums bound it on the same side.
    """

    domain: ExpDomain
    step: Fraction
    lo: int
    coeffs: flint.fmpz_poly
    bits: int
    leak: flint.arb
    up: bool

    @classmethod
    def compose(
        cls,
        kinds: Sequence[tuple[PLD, int]],
        bits: int,
        up: bool,
        deadline: float | None = None,
    ) -> GridCurve:
        """Compose one-generator grid pairs ``count`` times each.

        With a ``deadline`` (a ``time.monotonic()`` instant), each product's time is
        predicted from the last one's (``n log n`` in its length); :class:`OutOfTime` is
        raised before a product that would end past the deadline.
        """
        dom = kinds[0][0].domain
        last: list[float] = [0.0, 0.0]  # (length, seconds) of the last product

        def mul(a: flint.fmpz_poly, b: flint.fmpz_poly) -> flint.fmpz_poly:
            n = a.degree() + b.degree() + 2
            if last[0] > 0:
                ratio = n / last[0]
                check_deadline(
                    deadline,
                    last[1] * ratio * max(1.0, math.log2(max(n, 2)) / math.log2(max(last[0], 2))),
                )
            else:
                check_deadline(deadline)
            t0 = time.monotonic()
            out = _shift(a * b, bits, up)
            last[0], last[1] = n, time.monotonic() - t0
            return out

        prec = bits + 64
        total: flint.fmpz_poly | None = None
        lo = 0
        survive = QzElem.from_rational(1)
        for pld, count in kinds:
            units = [loss[0] for loss, _ in pld.masses]
            first = min(units)
            dense = [0] * (max(units) - first + 1)
            for loss, m in pld.masses:
                with flint.ctx.workprec(prec):  # not the 53 bits of the default context
                    ball = dom.elem_ball(m, prec) * flint.arb(2) ** bits
                dense[loss[0] - first] = _round_int(ball, up)
            base = flint.fmpz_poly(dense)
            lo += count * first
            survive = survive * (1 - pld.leak) ** count
            n = count
            while n:
                if n & 1:
                    total = base if total is None else mul(total, base)
                n >>= 1
                if n:
                    base = mul(base, base)
        assert total is not None
        with flint.ctx.workprec(prec):
            leak = 1 - dom.elem_ball(survive, prec)
        return cls(dom, dom.g0 or Fraction(1), lo, total, bits, leak, up)

    @property
    def terms(self) -> int:
        """Number of grid losses of the composed pair."""
        return self.coeffs.degree() + 1

    def _delta_above(self, first: int, eps_exp: flint.arb) -> flint.arb:
        """``leak + sum_{units n >= first} P0(n h) (1 - e^eps e^(-n h))`` as a ball."""
        prec = self.bits + 64
        with flint.ctx.workprec(prec):
            i0 = max(first - self.lo, 0)
            cs = self.coeffs.coeffs()
            if i0 >= len(cs):
                return self.leak
            tail = flint.fmpz_poly(cs[i0:])
            scale = flint.arb(2) ** (-self.bits)
            s0 = flint.arb(sum(int(c) for c in cs[i0:])) * scale
            h = flint.arb(flint.fmpq(self.step.numerator, self.step.denominator))
            x = (-h).exp()
            s1 = flint.arb_poly(tail)(x) * (-(h * (self.lo + i0))).exp() * scale
            return self.leak + s0 - eps_exp * s1

    def delta_ball(self, eps: Any) -> flint.arb:
        """A ball containing this curve's ``delta(eps)`` (bounding the truth on its side)."""
        form = parse_eps(eps)  # checked eps >= 0; a LinearForm from the front door as is
        edom = ExpDomain.for_forms([form])
        loss = edom.loss(form)
        n, _ = _floor_units(edom, loss, self.step)
        with flint.ctx.workprec(self.bits + 64):
            ee = edom.loss_ball(loss, self.bits + 64).exp()
        return self._delta_above(n + 1, ee)

    def _delta_at_unit(self, n: int) -> flint.arb:
        with flint.ctx.workprec(self.bits + 64):
            h = flint.arb(flint.fmpq(self.step.numerator, self.step.denominator))
            return self._delta_above(n + 1, (h * n).exp())

    def epsilon_bound(self, d: Fraction, upper: bool) -> flint.arb:
        """A lower (``upper=False``) or upper end for this curve's ``eps(d)``.

        The curve is non-increasing.  Lower end: the largest grid unit ``m`` with
        ``delta(m h) > d`` certified, refined on ``(m h, (m + 1) h]`` where ``delta =
        leak + S0 - e^eps S1``.  Upper end: the smallest ``M`` with ``delta(M h) <= d``
        certified, refined on ``[(M - 1) h, M h]``.
        """
        prec = self.bits + 64
        with flint.ctx.workprec(prec):
            db = flint.arb(flint.fmpq(d.numerator, d.denominator))
            top = self.lo + self.terms  # above every loss: delta = leak
            if not self.leak.upper() <= db if upper else self.leak.lower() > db:
                raise InvalidParameterError(
                    f"delta = {d} is below the leak (the probability that the composition "
                    "reveals the input outright): no finite eps achieves it"
                )
            h = flint.arb(flint.fmpq(self.step.numerator, self.step.denominator))

            def seg(first: int) -> tuple[flint.arb, flint.arb]:
                # delta = A - e^eps B on the segment just below unit ``first``
                a = self._delta_above(first, flint.arb(0))
                b = self._delta_above(first, flint.arb(1))
                return a, a - b

            if upper:
                if self._delta_at_unit(0).upper() <= db:
                    return flint.arb(0)
                lo_n, hi_n = 0, top  # delta(lo_n h) > d possibly; delta(hi_n h) <= d certified
                while hi_n - lo_n > 1:
                    mid = (lo_n + hi_n) // 2
                    if self._delta_at_unit(mid).upper() <= db:
                        hi_n = mid
                    else:
                        lo_n = mid
                a, b = seg(hi_n)
                cand = ((a - db) / b).log() if b > 0 and a > db else h * hi_n
                return min_arb(cand.upper(), (h * hi_n).upper())
            if not self._delta_at_unit(0).lower() > db:
                return flint.arb(0)
            lo_n, hi_n = 0, top  # delta(lo_n h) > d certified
            while hi_n - lo_n > 1:
                mid = (lo_n + hi_n) // 2
                if self._delta_at_unit(mid).lower() > db:
                    lo_n = mid
                else:
                    hi_n = mid
            a, b = seg(lo_n + 1)
            cand = ((a - db) / b).log() if b > 0 and a > db else h * lo_n
            return max_arb(cand.lower(), (h * lo_n).lower())


def min_arb(x: flint.arb, y: flint.arb) -> flint.arb:
    """The smaller of two exact points (an upper end stays an upper end)."""
    return x if x < y else y


def max_arb(x: flint.arb, y: flint.arb) -> flint.arb:
    """The larger of two exact points (a lower end stays a lower end)."""
    return x if x > y else y


# ---------------------------------------------------------------------------------------
# Choosing the grid (heuristic: soundness does not depend on it)
# ---------------------------------------------------------------------------------------


def _approx(dom: ExpDomain, x: QzElem | None = None, loss: Loss | None = None) -> Any:
    with flint.ctx.workprec(64):
        ball = dom.loss_ball(loss, 64) if loss is not None else dom.elem_ball(x, 64)  # type: ignore[arg-type]
        man, exp = ball.mid().man_exp()
    return _H.mpf((int(man), int(exp)))


_FIX = 62  # bits of the fixed-point fractions used by the grid search
_MAX_CANDIDATES = 200_000


def _grid_terms(plds: Sequence[tuple[PLD, int]], refine: int) -> int:
    """About how many loss values the composed grid pairs of ``g0 / refine`` have."""
    dom = plds[0][0].domain
    g0 = _H.mpf(dom.g0.numerator) / dom.g0.denominator if dom.g0 is not None else _H.mpf(1)
    span = 0
    for pld, count in plds:
        top = max((_approx(dom, loss=loss) for loss, _ in _components(pld)), default=0)
        span += count * (int(_H.floor(top / g0 * refine)) + 1)
    return 2 * span + 1


def _choose_refine(plds: Sequence[tuple[PLD, int]], budget: int) -> int:
    """The ``N`` (grid ``g0 / N``) within ``budget`` loss values with the least predicted error.

    Predicted error: ``sum count * w * (l - a)`` over the rounded responses (the lower
    pair's drift; the upper pair's is of second order), scanned over every ``N`` up to the
    budget in fixed point (Diophantine: some ``N`` put all logarithms just above grid
    points).  Only a heuristic: any ``N`` gives sound bounds.
    """
    dom = plds[0][0].domain
    g0 = _H.mpf(dom.g0.numerator) / dom.g0.denominator if dom.g0 is not None else _H.mpf(1)
    comps: list[tuple[int, int]] = []  # (l / g0 in fixed point, count * w in fixed point)
    span = _H.mpf(0)
    for pld, count in plds:
        top = _H.mpf(0)
        for loss, w in _components(pld):
            lv = _approx(dom, loss=loss)
            top = max(top, lv)
            if dom.form(loss).logs:
                units = int(_H.floor(lv / g0 * 2**_FIX))
                comps.append((units, max(1, int(count * _approx(dom, x=w) * 2**30))))
        span += count * top / g0
    n_max = max(1, int((budget - 1) / (2 * span + 2))) if span > 0 else 1
    if not comps:
        return n_max
    mask = (1 << _FIX) - 1
    best, best_err = n_max, None
    for n in range(n_max, max(0, n_max - _MAX_CANDIDATES), -1):
        err = sum(wc * ((units * n) & mask) for units, wc in comps) // n
        if best_err is None or err < best_err:
            best, best_err = n, err
    return best


# ---------------------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------------------


def enclose(
    plds: Sequence[tuple[PLD, int]],
    terms: int = START_TERMS,
    refine: int | None = None,
    bits: int = _BITS,
    deadline: float | None = None,
) -> Enclosure:
    """Compose the lower and upper grid pairs of every kind (certified).

    Args:
        plds: ``[(symmetric pair, count), ...]`` in any domain (several generators allowed).
        terms: about how many loss values the composed grid pairs may have (finer grids
            give narrower enclosures and cost about terms log terms).
        refine: force ``N`` (grid ``g0 / N``) instead of choosing it within ``terms``.
        bits: fixed-point bits of the masses (absolute accuracy about ``2^-bits``).
        deadline: a ``time.monotonic()`` instant the composition must not pass
            (:class:`~dpcompose_exact.engines.logsplit.OutOfTime` otherwise).

    Raises:
        ResourceLimitError: the grid would have more than :data:`MAX_TERMS` loss values.
    """
    kinds = common_domain([(p, c) for p, c in plds if c])
    n = refine if refine is not None else _choose_refine(kinds, terms)
    need = _grid_terms(kinds, n)
    if need > MAX_TERMS:  # checked before anything is allocated
        dom = kinds[0][0].domain
        g0 = dom.g0 if dom.g0 is not None else Fraction(1)
        raise ResourceLimitError(
            f"the grid enclosure needs about {need} loss values (grid step {g0 / n}, the "
            f"common divisor of the rational epsilons divided by {n}), over its limit of "
            f"{MAX_TERMS}: use rational epsilons with a larger common divisor than {g0}, "
            "or smaller counts"
        )
    lows, ups = [], []
    step = Fraction(0)
    for pld, count in kinds:
        lo, up, step = grid_pairs(pld, n)
        lows.append((lo, count))
        ups.append((up, count))
    lower = GridCurve.compose(lows, bits, up=False, deadline=deadline)
    upper = GridCurve.compose(ups, bits, up=True, deadline=deadline)
    return Enclosure(lower, upper, step, upper.terms, tuple(kinds))


def _refined(
    plds: Sequence[tuple[PLD, int]],
    read: Any,
    target: Fraction,
    deadline: float | None,
    max_terms: int,
    grids: dict[str, Any] | None = None,
) -> tuple[Value, Enclosure] | None:
    """The narrowest grid answer within the deadline (None when no grid was finished).

    ``grids`` keeps the finest composed grid (``"enc"``) with its refinement (``"n"``)
    and the budget that chose it (``"terms"``): a :class:`Bounded` composes each grid
    once, every later query starts from the finest, and a coarser grid is dropped when a
    finer one is built (at most one grid pair is held between queries).
    """
    if target <= 0:
        raise InvalidParameterError(f"width = {target} must be > 0 (a relative width)")
    kinds = common_domain([(p, c) for p, c in plds if c])
    grids = {} if grids is None else grids
    terms = grids.get("terms", START_TERMS)
    best: tuple[Value, Enclosure] | None = None
    goal = flint.arb(flint.fmpq(*_nd(target)))
    last_n = None
    while True:
        n = grids["n"] if grids.get("terms") == terms else _choose_refine(kinds, terms)
        enc = grids.get("enc") if grids.get("n") == n else None
        if n != last_n:
            last_n = n
            t0 = time.monotonic()
            if enc is None:
                try:
                    enc = enclose(kinds, refine=n, deadline=deadline)
                except OutOfTime:
                    return best
                grids.update(enc=enc, terms=terms, n=n)  # supersedes the coarser grid
            val = read(enc)
            if best is None or relative_width(val) < relative_width(best[0]):
                best = (val, enc)
            if relative_width(val) <= goal:
                return best
            # the next grid costs about 4-5 times this one: stop when it would overrun
            now = time.monotonic()
            if deadline is not None and now + 5 * (now - t0) > deadline:
                return best
        if terms >= max_terms:
            return best
        terms = min(terms * 4, max_terms)


def _split_read(
    plds: Sequence[tuple[PLD, int]],
    read: Any,
    target: Fraction,
    deadline: float | None,
    cache: dict[float, LogSplit] | None = None,
) -> Value | None:
    """The answer of the log-split sum (:mod:`~dpcompose_exact.engines.logsplit`), or None.

    The enumeration threshold starts at ``target e^-16`` and is lowered, by as much as
    the width still missing, until the enclosure is as narrow as asked or the time is
    spent; None when the structure is too large for the sum.  A structure found too
    large (or too slow) is remembered in ``cache`` (under the key ``"too large"``).
    """
    start = time.monotonic()
    left = None if deadline is None else deadline - start
    goal = flint.arb(flint.fmpq(*_nd(target)))
    tail = _first_tail(target)
    best: Value | None = None
    if cache is not None and cache.get("too large"):  # type: ignore[call-overload]
        return None
    while True:
        split = cache.get(tail) if cache is not None else None
        if split is None:
            try:
                split = LogSplit(plds, tail=tail, deadline=deadline)
            except (TooLarge, OutOfTime):
                if best is None and cache is not None:
                    cache["too large"] = True  # type: ignore[index]
                return best
            if cache is not None:
                cache[tail] = split
        try:
            val = read(split, deadline)
        except OutOfTime:
            return best
        except TooLarge:  # the omitted mass is too large for this query: lower the threshold
            if left is not None and 4 * (time.monotonic() - start) > left:
                return best
            tail -= 16
            continue
        width = relative_width(val)
        if best is None or width < relative_width(best):
            best = val
        spent = time.monotonic() - start
        if width <= goal or (left is not None and 4 * spent > left):
            return best
        # the omitted mass scales like e^tail: lower it by the factor still missing
        # (an enclosure reaching down to 0 is measured against the absolute floor, a huge
        # width that says nothing about the factor missing: the former fixed step)
        measurable = width.is_finite() and val.ends()[0] > 0
        missing = float((width / goal).log().upper()) if measurable else 16.0
        tail -= max(4.0, min(missing + 4.0, 64.0))


def _first_tail(target: Fraction) -> float:
    """The first enumeration threshold tried for a relative width ``target`` (heuristic)."""
    return math.log(float(target)) - 16


def _answer(
    plds: Sequence[tuple[PLD, int]],
    split_read: Any,
    grid_read: Any,
    target: Fraction,
    time_limit: Any,
    max_terms: int,
    cache: dict[float, LogSplit] | None = None,
    grids: dict[str, Any] | None = None,
) -> Value:
    """The log-split answer, or the grid enclosure's when the sum is too large.

    The log-split sum may spend 3/4 of ``time_limit`` (its build checks the deadline
    inside its loops), the grid the rest (each product's time is predicted first).

    Raises:
        ResourceLimitError: neither finished within ``time_limit`` seconds (one line,
            saying what to change).
    """
    start = time.monotonic()
    limit = None if time_limit is None else float(time_limit)
    split_deadline = None if limit is None else start + 0.75 * limit
    val = _split_read(plds, split_read, target, split_deadline, cache)
    if val is not None:
        return val
    out = _refined(
        plds, grid_read, target, None if limit is None else start + limit, max_terms, grids
    )
    if out is None:
        kinds = common_domain([(p, c) for p, c in plds if c])
        need = _grid_terms(kinds, _choose_refine(kinds, START_TERMS))
        counts = ", ".join(str(c) for _, c in kinds)
        raise ResourceLimitError(
            f"no certified bounds within the time limit of {time_limit} s: the log-split sum "
            f"is too large for counts {counts} and the grid enclosure ({need} loss values) "
            "is too slow; use smaller counts or fewer incommensurable epsilons (or a larger "
            "time_limit)"
        )
    return out[0]


def delta_bounds(
    plds: Sequence[tuple[PLD, int]],
    eps: Any,
    width: Any = DEFAULT_WIDTH,
    time_limit: Any = 30,
    max_terms: int = MAX_TERMS,
    cache: dict[float, LogSplit] | None = None,
    grids: dict[str, Any] | None = None,
) -> Value:
    """A certified enclosure of ``delta(eps)`` of relative width <= ``width`` where possible.

    The log-split sum (exact logarithmic losses, certified tail) is tried first; when the
    structure is too large for it, the grid enclosure is refined until its relative width
    is ``width``, ``max_terms`` loss values are reached, or the next grid would likely
    overrun ``time_limit`` seconds.  The enclosure returned may then be wider than asked
    (read its width with :func:`relative_width`; it is never presented as more than it
    is).  ``cache`` and ``grids`` keep the log-split sums and the composed grids for
    later queries (:class:`Bounded`).

    Raises:
        ResourceLimitError: no enclosure within ``time_limit`` seconds, or a grid over
            :data:`MAX_TERMS` loss values.
    """
    target = _width(width)
    try:  # near the largest loss: every outcome above eps, summed completely
        return top_delta(plds, _eps_ball(eps), deadline=_top_deadline(time_limit))
    except (TooLarge, OutOfTime):
        pass
    return _answer(
        plds,
        lambda split, _deadline: split.delta(eps),
        lambda enc: enc.delta(eps),
        target,
        time_limit,
        max_terms,
        cache,
        grids,
    )


def epsilon_bounds(
    plds: Sequence[tuple[PLD, int]],
    delta: Any,
    width: Any = DEFAULT_WIDTH,
    time_limit: Any = 30,
    max_terms: int = MAX_TERMS,
    cache: dict[float, LogSplit] | None = None,
    grids: dict[str, Any] | None = None,
) -> Value:
    """A certified enclosure of ``eps(delta)`` (see :func:`delta_bounds`).

    A ``delta`` below the composition's leak (computed from the exact leaks at once) is
    refused before anything is built.
    """
    target = _width(width)
    _refuse_below_leak(plds, delta)
    try:  # a delta met near the largest loss: every outcome above eps summed completely
        d = parse_rational(delta, "delta")
        return top_epsilon(plds, d, target / 2, deadline=_top_deadline(time_limit))
    except (TooLarge, OutOfTime):
        pass
    return _answer(
        plds,
        lambda split, deadline: split.epsilon(delta, width=target / 2, deadline=deadline),
        lambda enc: enc.epsilon(delta),
        target,
        time_limit,
        max_terms,
        cache,
        grids,
    )


def _top_deadline(time_limit: Any) -> float | None:
    """The sum near the largest loss may spend a tenth of the time limit (at most 2 s)."""
    if time_limit is None:
        return time.monotonic() + 2.0
    return time.monotonic() + min(2.0, float(time_limit) / 10)


def _refuse_below_leak(plds: Sequence[tuple[PLD, int]], delta: Any) -> None:
    """Raise :class:`BelowLeakError` when ``delta`` is surely below the leak.

    The leak ``1 - prod (1 - lambda_kappa)^k_kappa`` is read as a ball from the exact
    leaks; a ball that cannot decide (``delta`` at the leak) is left to the routes,
    which decide it exactly.
    """
    d = parse_rational(delta, "delta")
    if not 0 <= d < 1:
        raise InvalidParameterError(
            f"delta = {short_text(delta)} is outside the valid range [0, 1)"
        )
    with flint.ctx.workprec(128):
        survive = flint.arb(1)
        for pld, count in plds:
            if count:
                survive *= (1 - pld.domain.elem_ball(pld.leak, 128)) ** count
        leak = 1 - survive
        if leak.lower() > flint.arb(flint.fmpq(d.numerator, d.denominator)):
            raise BelowLeakError(
                f"delta = {short_text(delta)} is below the leak {float(leak.mid()):.6g} (the "
                "probability that the composition reveals the input outright): no finite eps "
                "achieves it"
            )


def _width(width: Any) -> Fraction:
    if isinstance(width, float):
        raise TypeError("width: got a float; pass a str or Fraction such as '1e-6'")
    try:
        out = Fraction(width)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"width = {width!r} is not a number; pass a relative width such as '1e-6'"
        ) from None
    if out <= 0:
        raise InvalidParameterError(f"width = {width} must be > 0 (a relative width)")
    return out


class Bounded:
    """A composition known by certified two-sided bounds only (the ``bounds`` route).

    Each query refines the grid until its enclosure has relative width ``width`` or the
    refinement limit is reached (:func:`delta_bounds`); results are cached, and so are
    the log-split sums and the composed grids (built once per composition, read by every
    query) and a refusal for lack of time (given again at once).

    Attributes:
        kinds: ``((pair, count), ...)`` composed.
        width: the relative width asked for each answer.
    """

    kind = "bounds"
    exact = False

    def __init__(self, kinds: Sequence[tuple[PLD, int]], width: Any = None) -> None:
        self.kinds = tuple(kinds)
        self.width = _width(width if width is not None else DEFAULT_WIDTH)
        self._cache: dict[Any, Value] = {}
        self._splits: dict[float, LogSplit] = {}  # log-split sums, by threshold
        self._grids: dict[str, Any] = {}  # the finest composed grid and its budget
        self._refusal: ResourceLimitError | None = None

    def split_ready(self, time_limit: Any = 15) -> bool:
        """Build the log-split sum for :attr:`width` now; False when it is too large."""
        tail = _first_tail(self.width)
        if self._splits.get("too large"):  # type: ignore[call-overload]
            return False
        if tail not in self._splits:
            deadline = None if time_limit is None else time.monotonic() + float(time_limit)
            try:
                self._splits[tail] = LogSplit(self.kinds, tail=tail, deadline=deadline)
            except (TooLarge, OutOfTime):
                self._splits["too large"] = True  # type: ignore[index]
                return False
        return True

    # -- the one result interface (dpcompose_exact.engines.results.PrivacyResult) ------------------
    @property
    def region(self) -> Bounded:
        """The bounds themselves (there is no region object)."""
        return self

    def describe(self) -> str:
        """``"certified bounds"``."""
        return "certified bounds"

    def _refuse(self, what: str) -> ResourceLimitError:
        return ResourceLimitError(
            f"this composition is known by certified two-sided bounds only (its exact "
            f"structure is too large): {what} is not available; ask for delta(eps) or "
            "epsilon(delta)"
        )

    def constraints(self) -> list[tuple[Value, Value]]:
        """Refused: bounds have no constraint list."""
        raise self._refuse("the constraint list")

    def rows(self, digits: int, exact: bool, structured: bool = True) -> list[dict[str, Any]]:
        """Refused: bounds have no constraint list."""
        raise self._refuse("the constraint list")

    def iter_rows(
        self, digits: int, exact: bool, structured: bool = True, rounding: str | None = None
    ) -> Any:
        """Refused, as :meth:`rows`."""
        raise self._refuse("the constraint list")

    def upper_region(self) -> Any:
        """Refused: exports need the constraint list."""
        raise self._refuse("an exact region for export")

    def tradeoff(self, t: Fraction) -> Value:
        """Refused: the trade-off function needs the constraint list."""
        raise self._refuse("the trade-off function")

    def curve_floats(self) -> tuple[list[float], list[float]]:
        """Refused: drawing needs the constraint list."""
        raise self._refuse("a drawing of the region")

    def curve_rows(
        self,
        command: str,
        points: Sequence[Any],
        digits: int,
        exact: bool,
        rounding: str | None = None,
    ) -> list[dict[str, Any]]:
        """Rows of ``delta`` or ``epsilon`` answers (:func:`bounded_rows`).

        The intervals are rounded outward, so no other direction applies.
        """
        return bounded_rows(self, command, points, digits)

    def _query(self, name: str, query: Any, compute: Any, time_limit: Any) -> Value:
        # a rational is its own key (str of one with > 4300 digits raises)
        key = (name, query if isinstance(query, (Fraction, int)) else str(query))
        if key in self._cache:
            return self._cache[key]
        if self._refusal is not None:
            raise self._refusal
        try:
            val = compute(
                self.kinds,
                query,
                self.width,
                time_limit,
                cache=self._splits,
                grids=self._grids,
            )
        except ResourceLimitError as exc:  # the structure, not the query: refuse again
            self._refusal = exc
            raise
        self._cache[key] = val
        return val

    def delta(self, eps: Any, time_limit: Any = 30) -> Value:
        """Certified enclosure of ``delta(eps)``."""
        return self._query("d", eps, delta_bounds, time_limit)

    def epsilon(self, delta: Any, time_limit: Any = 30) -> Value:
        """Certified enclosure of ``eps(delta)``."""
        return self._query("e", delta, epsilon_bounds, time_limit)


def bounded_rows(
    bounded: Bounded, command: str, queries: Sequence[Any], digits: int = 30
) -> list[dict[str, str]]:
    """Rows of ``delta`` (``command="delta"``) or ``epsilon`` answers from bounds.

    When every one of ``digits`` digits is certified the row carries the decimal
    (``delta_decimal`` / ``epsilon_decimal``), else ``*_lower`` and ``*_upper`` rounded
    outward, with the certified relative width.
    """
    rows = []
    for q in queries:
        if command == "delta":
            v, given, name = bounded.delta(q), "epsilon", "delta"
        else:
            v, given, name = bounded.epsilon(q), "delta", "epsilon"
        row = {given: str(q)}
        if v.certified_digits() >= digits:
            row[f"{name}_decimal"] = v.decimal(digits)
        else:
            lo, hi = v.interval(digits)
            row[f"{name}_lower"] = lo
            row[f"{name}_upper"] = hi
            w = relative_width(v)
            row["relative_width"] = (
                outward_decimal(w.upper(), 3, down=False) if w.is_finite() else "inf"
            )
        rows.append(row)
    return rows


def table_rows(rows: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """:func:`bounded_rows` for a plain table: each value, or ``[lower, upper]``."""
    out = []
    for r in rows:
        cells = {}
        for name in ("epsilon", "delta"):
            if f"{name}_lower" in r:
                cells[f"{name}_decimal"] = f"[{r[f'{name}_lower']}, {r[f'{name}_upper']}]"
            else:
                cells[f"{name}_decimal"] = r.get(f"{name}_decimal", r.get(name, ""))
        out.append(cells)
    return out
