"""The pieces of the log-split sum: rational measures, randomized responses, usage counts.

The log-split sum (:mod:`~dpcompose_exact.engines.logsplit`, docs/theory.md, section 14)
writes each symmetric kind as a leak plus a mixture of randomized responses ``RR(x)``
(P0-masses ``e^x / (1 + e^x)`` at ``+x`` and ``1 / (1 + e^x)`` at ``-x``; a pair is one
exactly when ``P0(l) = e^l P0(-l)`` at every loss, :func:`_check_symmetric`, decided
exactly) and sums over how many times each logarithmic component is used.  This module
holds what that sum is built from:

* :class:`_Measure`: a measure ``P`` on the grid ``g0 Z`` with its suffix sums
  ``S0(c) = sum_{c' >= c} P(c')`` and ``S1(c) = sum_{c' >= c} P(c') e^(-c' g0)``, so that
  one term's hockey-stick part is ``T_P(x) = S0(c*) - e^x S1(c*)`` (``c*`` the first unit
  above ``x``), in Arb balls;
* the P0-polynomials of ``w RR(u g0)`` (:func:`_rr_poly`), their sums and powers (by
  squaring, under a deadline: :func:`_poly_pow`, :func:`check_deadline`);
* the heuristic windows of usage counts (:func:`_window`: the binomial masses
  ``C(n, j) p^j (1 - p)^(n - j)``, ``p = e^l / (1 + e^l)``, above a threshold, in
  doubles; nothing certified depends on them);
* the exact test ``eps >= `` the largest loss (:func:`at_or_above`), above which
  ``delta(eps)`` is the leak, and the exceptions by which the sum gives way to the grid
  enclosure (:class:`TooLarge`, :class:`OutOfTime`).
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError
from ..numbers import ExpDomain, Loss, certified_sign
from ..numbers.convert import binary_power, parse_eps, rational_ball
from ..numbers.value import Value
from ..regions.pld import PLD, suffix_deltas

__all__ = [
    "PREC",
    "MAX_TERMS",
    "MAX_MEASURES",
    "MAX_MEASURE_UNITS",
    "TooLarge",
    "OutOfTime",
    "check_deadline",
    "short_text",
    "at_or_above",
]

PREC = 192  # bits of every ball: far below any width asked for
MAX_TERMS = 600_000  # enumerated terms beyond which the grid enclosure is cheaper
MAX_MEASURES = 400  # rational measures (vectors of m_kappa) beyond which likewise
#: grid units a rational measure may span; beyond it (a tiny rational generator next to
#: large rational losses) the rational losses are enumerated like the logarithmic ones
MAX_MEASURE_UNITS = 50_000
#: a kind whose box of usage counts is this many times :data:`MAX_TERMS` is refused at once
_BOX_FACTOR = 16


class TooLarge(Exception):
    """The log-split sum would be too large; use the grid enclosure instead."""


class OutOfTime(Exception):
    """A build would overrun its deadline (the caller answers with what it has or refuses)."""


def check_deadline(deadline: float | None, predicted: float = 0.0) -> None:
    """Raise :class:`OutOfTime` when ``time.process_time() + predicted`` passes ``deadline``."""
    if deadline is not None and time.process_time() + predicted > deadline:
        raise OutOfTime("the time limit was reached")


@dataclass(frozen=True)
class _Measure:
    """A measure on ``g0 Z`` with its suffix sums: ``P(lo + i)`` for ``i < len(mass)``."""

    lo: int
    mass: tuple[flint.arb, ...]
    s0: tuple[flint.arb, ...]  # s0[i] = sum_{i' >= i} P(lo + i')
    s1: tuple[flint.arb, ...]  # s1[i] = sum_{i' >= i} P(lo + i') e^(-(lo + i') g0)

    # their natural logarithms in doubles (heuristic search only; -inf for an empty sum):
    # no overflow or underflow at any eps; made on first use (delta queries never need them)
    @functools.cached_property
    def ls0(self) -> tuple[float, ...]:
        return tuple(map(_flog, self.s0))

    @functools.cached_property
    def ls1(self) -> tuple[float, ...]:
        return tuple(map(_flog, self.s1))

    @classmethod
    def of(cls, lo: int, poly: flint.arb_poly, step: flint.arb) -> _Measure:
        cs = list(poly.coeffs())
        n = len(cs)
        # P(c) e^(-c g0) from the top unit down, by one multiplication each
        grow, w = step.exp(), (-(step * (lo + n - 1))).exp()
        tilted = []
        for c in reversed(cs):
            tilted.append(c * w)
            w *= grow
        # the sums strictly above index i - 1 are the sums from index i on
        rows = suffix_deltas(
            range(n - 1, -2, -1),
            reversed(cs),
            tilted,
            zero=flint.arb(0),
            combine=lambda _, a, b: (a, b),
        )
        s0 = tuple(a for _, (a, _b) in reversed(rows))
        s1 = tuple(b for _, (_a, b) in reversed(rows))
        return cls(lo, tuple(cs), s0, s1)

    @property
    def total(self) -> flint.arb:
        return self.s0[0] if self.mass else flint.arb(0)

    def hockey(self, x: flint.arb, ex: flint.arb, step: flint.arb) -> tuple[flint.arb, int]:
        """``(sum_c P(c) (1 - e^(x - c g0))_+, i)`` for a ball ``x`` (``ex = e^x``).

        ``i`` is the index of the first unit surely above ``x``.  Units surely above ``x``
        come from the suffix sums; units the ball cannot place (``x`` within its radius of a
        grid point) are added with the positive part of their ball, which contains the true
        term either way.
        """
        q = x / step
        c_lo = int(q.lower().floor().unique_fmpz())
        c_hi = int(q.upper().floor().unique_fmpz())
        n = len(self.mass)
        i = max(0, min(n, c_hi + 1 - self.lo))
        out = self.s0[i] - ex * self.s1[i]
        for c in range(max(c_lo + 1, self.lo), min(c_hi, self.lo + n - 1) + 1):
            out += self.mass[c - self.lo] * (1 - ex * (-(step * c)).exp()).nonnegative_part()
        return out, i


def short_text(x: Any) -> str:
    """A query as text for a message or a cache key, short even for huge rationals.

    ``str`` of a rational with more than 4300 digits raises (Python's limit on integer
    conversions); such an exact delta (e.g. the leak of 1000 uses) is shown by 12 digits.
    """
    if isinstance(x, Fraction) and max(x.numerator.bit_length(), x.denominator.bit_length()) > 128:
        return f"{Value.from_rational(x).decimal(12)}..."
    text = x if isinstance(x, str) else repr(x) if isinstance(x, float) else str(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _poly_pow(p: flint.arb_poly, n: int, deadline: float | None) -> flint.arb_poly:
    """``p ** n`` by squaring, the deadline checked before each product.

    Each product's time is predicted from the last one's, scaled by the square of the
    length ratio (a safe side for FLINT's products of balls of wide dynamic range).
    """
    last = (0, 0.0)  # (length, seconds) of the last product

    def mul(a: flint.arb_poly, b: flint.arb_poly) -> flint.arb_poly:
        nonlocal last
        size = a.degree() + b.degree() + 2
        predicted = last[1] * (size / last[0]) ** 2 if last[0] else 0.0
        check_deadline(deadline, predicted)
        t0 = time.process_time()
        r = a * b
        last = (size, time.process_time() - t0)
        return r

    out = binary_power(p, n, mul)
    return out if out is not None else flint.arb_poly([1])


def _check_symmetric(pld: PLD) -> None:
    """Refuse a pair that is not a mixture of randomized responses (decided exactly).

    ``P0(l) = e^l P0(-l)`` at every loss ``l > 0``.  The products are taken term by term
    when the polynomials are sparse (a tiny generator makes ``e^l`` a monomial of degree
    about ``10^6``, where a dense product takes seconds).
    """
    dom = pld.domain
    at = dict(pld.masses)
    for loss, m in pld.masses:
        if dom.loss_sign(loss) <= 0:
            continue
        mirror = at.get(tuple(-n for n in loss))
        e = dom.exp_loss(loss)
        # m = e * mirror  <=>  m.num * e.den * mirror.den = e.num * mirror.num * m.den
        if mirror is None or not _products_equal(
            (m.num, e.den, mirror.den), (e.num, mirror.num, m.den)
        ):
            raise InvalidParameterError(
                "the log-split sum needs symmetric dominating pairs (a mixture of "
                f"randomized responses); the masses at +-{dom.loss_str(loss)} are not "
                "P0(l) = e^l P0(-l)"
            )
    for loss, _ in pld.masses:  # a negative loss without its positive mirror
        if dom.loss_sign(loss) < 0 and tuple(-n for n in loss) not in at:
            raise InvalidParameterError(
                "the log-split sum needs symmetric dominating pairs (a mixture of "
                f"randomized responses); the loss {dom.loss_str(loss)} has no mirror"
            )


_SPARSE_TERMS = 64  # nonzero coefficients up to which products are taken term by term


def _products_equal(left: tuple[flint.fmpz_poly, ...], right: tuple[flint.fmpz_poly, ...]) -> bool:
    """``prod(left) == prod(right)`` exactly, term by term when every factor is sparse."""
    sparse = []
    for p in left + right:
        terms = _sparse_terms(p)
        if terms is None:
            sparse = None
            break
        sparse.append(terms)
    if sparse is None:
        a, b = flint.fmpz_poly([1]), flint.fmpz_poly([1])
        for p in left:
            a *= p
        for p in right:
            b *= p
        return a == b

    def product(factors: list[dict[int, int]]) -> dict[int, int]:
        out = {0: 1}
        for f in factors:
            nxt: dict[int, int] = {}
            for i, a in out.items():
                for j, b in f.items():
                    nxt[i + j] = nxt.get(i + j, 0) + a * b
            out = {k: v for k, v in nxt.items() if v}
        return out

    n = len(left)
    return product(sparse[:n]) == product(sparse[n:])


def _sparse_terms(p: flint.fmpz_poly) -> dict[int, int] | None:
    """``{degree: coefficient}`` of the nonzero terms, None beyond :data:`_SPARSE_TERMS`.

    The terms are peeled from the top (``truncate`` drops the leading one), so a sparse
    polynomial of degree ``10^6`` costs a few C copies, not ``10^6`` Python objects.
    """
    out: dict[int, int] = {}
    while not p.is_zero():
        if len(out) >= _SPARSE_TERMS:
            return None
        d = p.degree()
        out[d] = int(p[d])
        p = p.truncate(d)
    return out


def _flog(x: flint.arb) -> float:
    """``log`` of a ball's midpoint in doubles (``-inf`` at or below 0), at any exponent."""
    man, exp = (int(v) for v in x.mid().man_exp())
    if man <= 0:
        return -math.inf
    return math.log(man) + exp * _LN2


_LN2 = math.log(2)


def _logaddexp(a: float, b: float) -> float:
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    hi, lo = (a, b) if a >= b else (b, a)
    return hi + math.log1p(math.exp(lo - hi))


_Poly = tuple[int, flint.arb_poly]  # (lowest unit, coefficients from there)


def _rr_poly(w: flint.arb, units: int, ex: flint.arb) -> _Poly:
    """P0-masses of ``w RR(units g0)`` as ``(lowest unit, polynomial)``."""
    if units == 0:
        return 0, flint.arb_poly([w])
    cs = [flint.arb(0)] * (2 * units + 1)
    cs[0] = w / (1 + ex)
    cs[-1] = w * ex / (1 + ex)
    return -units, flint.arb_poly(cs)


def _add(a: _Poly, b: _Poly) -> _Poly:
    lo = min(a[0], b[0])
    return lo, a[1].left_shift(a[0] - lo) + b[1].left_shift(b[0] - lo)


def _log_binom(n: int, j: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1)


def _window(n: int, p: float, base: float, tail: float) -> list[tuple[int, float]]:
    """``(j, base + log Bin(j; n, p))`` for the ``j`` whose log-mass is >= ``tail``.

    Walks out from the mode in both directions; a binomial is unimodal, so each
    direction stops at its first value below ``tail``.  Doubles: a heuristic only.
    """
    if p <= 0.0 or p >= 1.0:
        return [(0 if p <= 0.0 else n, base)] if base >= tail else []
    lp, lq = math.log(p), math.log1p(-p)
    mode = min(n, int((n + 1) * p))
    out = []
    for start, d in ((mode, 1), (mode - 1, -1)):
        j = start
        while 0 <= j <= n:
            lm = base + _log_binom(n, j) + j * lp + (n - j) * lq
            if lm < tail:
                break
            out.append((j, lm))
            j += d
    return out


@dataclass(frozen=True)
class _Kind:
    count: int
    log_index: tuple[int, ...]  # indices into the distinct logarithmic losses
    log_w: tuple[flint.arb, ...]
    log_wf: tuple[float, ...]
    rational: _Poly | None  # R_kappa
    rational_wf: float  # its total mass (float, for the heuristic)


def _mid_fraction(x: flint.arb) -> Fraction:
    """The midpoint of a ball, exactly, rounded to 200 significant bits."""
    man, exp = (int(v) for v in x.mid().man_exp())
    drop = max(0, man.bit_length() - 200)
    return Fraction(man >> drop) * Fraction(2) ** (exp + drop)


def _frac_ball(q: Fraction) -> flint.arb:
    return rational_ball(q)


def at_or_above(domain: ExpDomain, top: Loss, eps: Any) -> bool:
    """Whether ``eps >= top`` (a loss of ``domain``), decided exactly (zero test, then balls).

    From the largest loss on, ``delta(eps)`` is the leak exactly: no loss lies above eps.
    """
    diff = parse_eps(eps) - domain.form(top)
    return certified_sign(diff.ball, diff.is_zero(), "eps minus the largest loss") >= 0


def _eps_ball(eps: Any, prec: int = PREC) -> flint.arb:
    return parse_eps(eps).ball(prec)
