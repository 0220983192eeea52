"""The grid enclosure: lower and upper grid pairs composed in fixed point (theory, section 14).

Each kind's dominating pair is rounded to a lattice of step ``h`` in both directions
(:func:`grid_pairs`: the losses down and up, the masses moved so that the rounded pairs
bracket the exact one), the two pairs are composed in fixed point with directed rounding
(:class:`GridCurve`), and :func:`enclose` returns the :class:`Enclosure` whose two curves
bound ``delta(eps)`` and ``eps(delta)`` of the true composition.  The grid is chosen by a
heuristic (soundness does not depend on it).  :mod:`.bounds` drives this enclosure and the
log-split sum to the width asked.
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

from ..errors import BelowLeakError, InvalidParameterError, ResourceLimitError
from ..numbers import (
    ExpDomain,
    Loss,
    QzElem,
    certified_sign,
)
from ..numbers.convert import binary_power, parse_delta, parse_eps, rational_ball
from ..numbers.value import Value
from ..regions.pld import PLD
from .genfunc import common_domain
from .logsplit import (
    at_or_above,
    check_deadline,
)

__all__ = ["Enclosure", "GridCurve", "enclose", "grid_pairs", "START_TERMS", "MAX_TERMS"]


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
        if hi.upper() > 1:  # a delta is at most 1 (the atom at infinity may pass it)
            hi = flint.arb(1)
        # the ends at the balls' own precision (lower end of the lower ball, upper of the upper)
        return Value.from_interval(lo, hi, nonnegative=True)

    def epsilon(self, delta: Any) -> Value:
        """A certified enclosure of ``eps(delta)`` of the true composition."""
        d = parse_delta(delta)
        at_leak = self._versus_leak(d)
        if at_leak is not None:
            return at_leak
        lo = self.lower.epsilon_bound(d, upper=False)
        hi = self.upper.epsilon_bound(d, upper=True)
        if hi is None:  # d within the upper curve's atom of the leak: the largest loss
            if not self.kinds:
                raise InvalidParameterError(
                    f"delta = {_short_fraction(d)} is too close to the leak for the grid "
                    "enclosure; ask a larger delta"
                )
            dom = self.kinds[0][0].domain
            with flint.ctx.workprec(self.upper.bits + 64):
                hi = dom.loss_ball(_top_loss(self.kinds), self.upper.bits + 64).upper()
        assert lo is not None
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
            if leak < rational_ball(d) or not self.kinds:
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


_Fixed = tuple[int, flint.fmpz_poly, int]  # (lowest unit, coefficients, atom at +infinity)


def _trim_low(lo: int, p: flint.fmpz_poly) -> tuple[int, flint.fmpz_poly]:
    """Drop the zero coefficients at the low end: ``(lo + dropped, p / x^dropped)``.

    The number of leading zeros is found by an exponential then binary search on the
    (monotone) predicate "the first ``i`` coefficients add up to 0" (they are >= 0).
    """
    if p.is_zero() or p[0] != 0:
        return lo, p
    step = 1
    while step <= p.degree() and p.truncate(step + 1)(1) == 0:
        step *= 2
    good, bad = step // 2, min(step, p.degree())  # 0..good are zero; 0..bad are not all
    while bad - good > 1:
        mid = (good + bad) // 2
        if p.truncate(mid + 1)(1) == 0:
            good = mid
        else:
            bad = mid
    # coefficients 0..good are zero (good >= 0 since p[0] == 0)
    return lo + good + 1, p.right_shift(good + 1)


@dataclass(frozen=True)
class GridCurve:
    """The k-fold finite masses of grid pairs in fixed point, rounded in one direction.

    ``coeffs / 2^bits`` are P0-masses at the losses ``(lo + i) h``.  Every one-step mass
    and every exact integer product is shifted back by ``bits`` rounding *down*, and the
    zero coefficients at the low end are dropped (the high end is dropped by FLINT): the
    polynomials keep only the support of the masses above ``2^-bits``, a few standard
    deviations wide, instead of the whole span ``2 k max(l) / h``.

    * Lower curve (``up=False``): the masses stay coefficientwise below the exact ones
      (all terms are non-negative), so ``delta(eps) = leak + sum_{l > eps} P0(l) (1 -
      e^(eps - l))``, whose weights are non-negative, is bounded from below.
    * Upper curve (``up=True``): the mass lost by rounding down is put on an atom at
      ``+infinity`` (:attr:`extra`), which adds to ``delta`` at every ``eps`` its whole
      mass (weight ``1 >= 1 - e^(eps - l)``).  Invariant: the exact masses are ``nu +
      rho`` with ``nu <= coeffs / 2^bits`` coefficientwise and ``|rho| <= extra``; for
      a product, ``(nu_a + rho_a) * (nu_b + rho_b)`` has ``nu_a nu_b <= (a b) / 2^2bits``
      and ``|rho| <= (S_a + E_a)(S_b + E_b) - S_a S_b`` (sums of coefficients ``S``), so
      ``extra = ceil((S_a + E_a)(S_b + E_b) / 2^bits) - S_ab`` keeps it (every mass
      lost by the shift goes to the atom).  So ``delta`` plus the atom bounds the truth
      from above.
    """

    domain: ExpDomain
    step: Fraction
    lo: int
    coeffs: flint.fmpz_poly
    bits: int
    leak: flint.arb
    up: bool
    extra: int = 0  # the atom at +infinity, in units of 2^-bits (upper curve only)

    @classmethod
    def compose(
        cls,
        kinds: Sequence[tuple[PLD, int]],
        bits: int,
        up: bool,
        deadline: float | None = None,
    ) -> GridCurve:
        """Compose one-generator grid pairs ``count`` times each.

        With a ``deadline`` (a ``time.process_time()`` instant), each product's time is
        predicted from the last one's (``n log n`` in its length); :class:`OutOfTime` is
        raised before a product that would end past the deadline.
        """
        dom = kinds[0][0].domain
        last: list[float] = [0.0, 0.0]  # (length, seconds) of the last product
        one = 1 << bits

        def mul(a: _Fixed, b: _Fixed) -> _Fixed:
            n = a[1].degree() + b[1].degree() + 2
            if last[0] > 0:
                ratio = n / last[0]
                check_deadline(
                    deadline,
                    last[1] * ratio * max(1.0, math.log2(max(n, 2)) / math.log2(max(last[0], 2))),
                )
            else:
                check_deadline(deadline)
            t0 = time.process_time()
            lo, p = _trim_low(a[0] + b[0], _shift(a[1] * b[1], bits, up=False))
            extra = 0
            if up:  # every mass lost by the shift (and the atoms') goes to the atom
                sa, sb = int(a[1](1)) + a[2], int(b[1](1)) + b[2]
                extra = -((-sa * sb) // one) - int(p(1))
            last[0], last[1] = n, time.process_time() - t0
            return lo, p, extra

        prec = bits + 64
        total: _Fixed | None = None
        survive = QzElem.from_rational(1)
        for pld, count in kinds:
            units = [loss[0] for loss, _ in pld.masses]
            first = min(units)
            dense = [0] * (max(units) - first + 1)
            atom = 0
            for loss, m in pld.masses:
                with flint.ctx.workprec(prec):  # not the 53 bits of the default context
                    ball = dom.elem_ball(m, prec) * flint.arb(2) ** bits
                dense[loss[0] - first] = _round_int(ball, False)
                if up:
                    atom += _round_int(ball, True) - dense[loss[0] - first]
            base: _Fixed = (*_trim_low(first, flint.fmpz_poly(dense)), atom)
            survive = survive * (1 - pld.leak) ** count
            total = binary_power(base, count, mul, total)
        assert total is not None
        with flint.ctx.workprec(prec):
            leak = 1 - dom.elem_ball(survive, prec)
        lo, coeffs, extra = total
        return cls(dom, dom.g0 or Fraction(1), lo, coeffs, bits, leak, up, extra)

    @property
    def terms(self) -> int:
        """Number of grid losses of the composed pair."""
        return self.coeffs.degree() + 1

    def _delta_above(self, first: int, eps_exp: flint.arb) -> flint.arb:
        """``leak + atom + sum_{units n >= first} P0(n h) (1 - e^eps e^(-n h))`` as a ball."""
        prec = self.bits + 64
        with flint.ctx.workprec(prec):
            scale = flint.arb(2) ** (-self.bits)
            base = self.leak + flint.arb(self.extra) * scale
            i0 = max(first - self.lo, 0)
            if i0 > self.coeffs.degree():
                return base
            tail = self.coeffs.right_shift(i0) if i0 else self.coeffs
            s0 = flint.arb(tail(1)) * scale
            h = rational_ball(self.step)
            x = (-h).exp()
            s1 = flint.arb_poly(tail)(x) * (-(h * (self.lo + i0))).exp() * scale
            return base + s0 - eps_exp * s1

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
            h = rational_ball(self.step)
            return self._delta_above(n + 1, (h * n).exp())

    def epsilon_bound(self, d: Fraction, upper: bool) -> flint.arb | None:
        """A lower (``upper=False``) or upper end for this curve's ``eps(d)``.

        The curve is non-increasing.  Lower end: the largest grid unit ``m`` with
        ``delta(m h) > d`` certified, refined on ``(m h, (m + 1) h]`` where ``delta =
        leak + S0 - e^eps S1``.  Upper end: the smallest ``M`` with ``delta(M h) <= d``
        certified, refined on ``[(M - 1) h, M h]``; None when ``d`` is not certainly
        above ``leak + atom`` (the atom at infinity is in every ``delta`` of the upper
        curve; a ``d`` above the leak by less than the balls' radius likewise): the
        caller, which has decided ``d > leak`` exactly, bounds ``eps(d)`` by the largest
        loss instead.
        """
        prec = self.bits + 64
        with flint.ctx.workprec(prec):
            db = rational_ball(d)
            top = self.lo + self.terms  # above every loss: delta = leak (+ the atom)
            if not upper and self.leak.lower() > db:
                raise InvalidParameterError(
                    f"delta = {d} is below the leak (the probability that the composition "
                    "reveals the input outright): no finite eps achieves it"
                )
            if upper and not self._delta_above(top, flint.arb(1)).upper() <= db:
                return None  # d within the balls of the leak plus the atom
            h = rational_ball(self.step)

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
        deadline: a ``time.process_time()`` instant the composition must not pass
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
