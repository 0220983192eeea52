"""Certified two-sided bounds on delta(eps) and eps(delta) for any structure.

When the exact structure is too large (several incommensurable generators such as
``log 2``, ``log 3 - log 2`` and ``1/10``, many kinds, huge k) the region is still enclosed:
each kind's dominating pair is replaced by a pair on a one-generator grid ``h Z`` that is
*weaker* (a lower pair) and one that is *stronger* (an upper pair), both are composed by
the certified route (:func:`~dpcompose_exact.certified.compose_certified`), and the true
``delta(eps)`` lies between theirs.  The width shrinks as ``h`` is refined.

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

The compositions of the grid pairs are certified enclosures (Arb balls), so the reported
interval is ``[lower end of the lower ball, upper end of the upper ball]``: a rigorous
enclosure, never presented as more (the :class:`~dpcompose_exact.value.Value` holds the
interval and prints only certified digits; :meth:`~dpcompose_exact.value.Value.interval`
rounds outward).

**Accuracy.**  Each use of ``RR(l)`` moves the lower pair's loss by ``l - a`` and the upper
pair's (at second order) by less, so the relative width grows like k times the rounding
error.  Rational parts of the epsilons stay exact (``h`` divides the rational generator);
only logarithms are rounded, and ``h = g / N`` is chosen (a heuristic search over ``N``; any
choice is sound) so that they fall just above grid points.  Cost: the certified route on
``2 k max(l) / h`` loss values, about k log k for a fixed ``h``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint
import mpmath

from .certified import CERTIFIED_TERM_LIMIT, CertifiedRegion, compose_certified
from .curves import delta_value, epsilon_value
from .errors import InvalidParameterError, ResourceLimitError
from .numbers import ExpDomain, Loss, QzElem, _prec, certified_sign
from .pld import PLD
from .value import Value

__all__ = [
    "Enclosure",
    "enclose",
    "delta_bounds",
    "epsilon_bounds",
    "relative_width",
    "DEFAULT_WIDTH",
    "START_TERMS",
]

DEFAULT_WIDTH = Fraction(1, 10**6)  # relative width asked by default
START_TERMS = 20_001  # loss values of the first (coarsest) grid tried
_DIGITS = 12  # digits the certified compositions guarantee: far below any useful width

_H = mpmath.MPContext()  # heuristic only (choice of the grid), its own precision
_H.dps = 20


@dataclass(frozen=True)
class Enclosure:
    """Certified regions of a weaker and a stronger grid composition around the true one.

    Attributes:
        lower: certified region of the composed lower pairs (``delta`` below the truth).
        upper: certified region of the composed upper pairs (``delta`` above the truth).
        step: the grid step ``h``.
        terms: loss values of the composed grid pairs.
    """

    lower: CertifiedRegion
    upper: CertifiedRegion
    step: Fraction
    terms: int

    def delta(self, eps: Any) -> Value:
        """A certified enclosure of ``delta(eps)`` of the true composition."""
        lo = delta_value(self.lower, eps).ball()
        hi = delta_value(self.upper, eps).ball()
        return Value.from_interval(_clip(lo.lower()), _clip(hi.upper()))

    def epsilon(self, delta: Any) -> Value:
        """A certified enclosure of ``eps(delta)`` of the true composition."""
        lo = epsilon_value(self.lower, delta).ball()
        hi = epsilon_value(self.upper, delta).ball()
        return Value.from_interval(_clip(lo.lower()), hi.upper())


def _clip(x: flint.arb) -> flint.arb:
    """Lower ends below 0 carry no information (deltas and epsilons are >= 0)."""
    return x if x >= 0 else flint.arb(0)


def relative_width(v: Value) -> flint.arb:
    """``(upper - lower) / lower`` of an enclosure (an upper bound on it; +inf at 0)."""
    ball = v.ball()
    lo, hi = ball.lower(), ball.upper()
    if not lo > 0:
        return flint.arb("inf") if hi > 0 else flint.arb(0)
    return ((hi - lo) / lo).upper()


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
    with _prec(64):
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
        pld: a symmetric dominating pair (e.g. :func:`~dpcompose_exact.pld.canonical_pair`).
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
# Choosing the grid (heuristic: soundness does not depend on it)
# ---------------------------------------------------------------------------------------


def _approx(dom: ExpDomain, x: QzElem | None = None, loss: Loss | None = None) -> Any:
    with _prec(64):
        ball = dom.loss_ball(loss, 64) if loss is not None else dom.elem_ball(x, 64)  # type: ignore[arg-type]
        man, exp = ball.mid().man_exp()
    return _H.mpf((int(man), int(exp)))


_FIX = 62  # bits of the fixed-point fractions used by the grid search
_MAX_CANDIDATES = 200_000


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
    digits: int = _DIGITS,
) -> Enclosure:
    """Compose the lower and upper grid pairs of every kind (certified).

    Args:
        plds: ``[(symmetric pair, count), ...]`` in any domain (several generators allowed).
        terms: about how many loss values the composed grid pairs may have (finer grids
            give narrower enclosures and cost about terms log terms).
        refine: force ``N`` (grid ``g0 / N``) instead of choosing it within ``terms``.
        digits: digits each certified composition guarantees.
    """
    kinds = [(p, c) for p, c in plds if c]
    if not kinds:
        raise InvalidParameterError("nothing to compose: every count is 0")
    dom = kinds[0][0].domain
    for p, _ in kinds[1:]:
        dom = dom.join(p.domain)
    kinds = [(p.in_domain(dom), c) for p, c in kinds]
    n = refine if refine is not None else _choose_refine(kinds, terms)
    lows, ups = [], []
    step = Fraction(0)
    for pld, count in kinds:
        lo, up, step = grid_pairs(pld, n)
        lows.append((lo, count))
        ups.append((up, count))
    lower = compose_certified(lows, digits=digits)
    upper = compose_certified(ups, digits=digits)
    return Enclosure(lower, upper, step, 2 * len(upper.losses) - 1)


def _refined(
    plds: Sequence[tuple[PLD, int]],
    read: Any,
    target: Fraction,
    time_limit: Any,
    max_terms: int,
) -> tuple[Value, Enclosure]:
    if target <= 0:
        raise InvalidParameterError(f"width = {target} must be > 0 (a relative width)")
    start = time.monotonic()
    terms = START_TERMS
    best: tuple[Value, Enclosure] | None = None
    goal = flint.arb(flint.fmpq(*_nd(target)))
    while True:
        t0 = time.monotonic()
        enc = enclose(plds, terms=terms)
        val = read(enc)
        if best is None or relative_width(val) < relative_width(best[0]):
            best = (val, enc)
        now = time.monotonic()
        if relative_width(val) <= goal:
            return best
        # the next grid costs about 4-5 times this one: stop when it would overrun
        if terms >= max_terms or (
            time_limit is not None and (now - start) + 5 * (now - t0) > time_limit
        ):
            return best
        terms = min(terms * 4, max_terms)


def delta_bounds(
    plds: Sequence[tuple[PLD, int]],
    eps: Any,
    width: Any = DEFAULT_WIDTH,
    time_limit: Any = 30,
    max_terms: int = CERTIFIED_TERM_LIMIT,
) -> Value:
    """A certified enclosure of ``delta(eps)``, refined until its relative width <= ``width``.

    Refinement stops at ``max_terms`` loss values or when the next grid would likely
    overrun ``time_limit`` seconds; the enclosure returned is then wider than asked (read
    its width with :func:`relative_width`; it is never presented as more than it is).
    """
    target = _width(width)
    return _refined(plds, lambda enc: enc.delta(eps), target, time_limit, max_terms)[0]


def epsilon_bounds(
    plds: Sequence[tuple[PLD, int]],
    delta: Any,
    width: Any = DEFAULT_WIDTH,
    time_limit: Any = 30,
    max_terms: int = CERTIFIED_TERM_LIMIT,
) -> Value:
    """A certified enclosure of ``eps(delta)`` (see :func:`delta_bounds`)."""
    target = _width(width)
    return _refined(plds, lambda enc: enc.epsilon(delta), target, time_limit, max_terms)[0]


def _width(width: Any) -> Fraction:
    if isinstance(width, float):
        raise TypeError("width: got a float; pass a str or Fraction such as '1e-6'")
    try:
        return Fraction(width)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"width = {width!r} is not a number; pass a relative width such as '1e-6'"
        ) from None
