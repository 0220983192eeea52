"""Certified summaries of a composition: Rényi divergences and the Gaussian-DP ``mu``.

Every mechanism answers :meth:`~dpcompose_exact.regions.protocol.MechanismLike.loss_pair`;
this module reads those pairs (never the mechanisms' classes) and returns
values (:class:`~dpcompose_exact.numbers.value.Value`; docs/theory.md, section 20):

* :func:`renyi`: the Rényi divergence ``D_alpha`` of order ``alpha > 1`` of the composed
  pair (the RDP epsilon), the sum over the composed mechanisms in each direction and the
  larger of the two directions' sums.  Per use: finite pairs exactly
  (``log(sum_l p(l) e^{(alpha - 1) l}) / (alpha - 1)``, an element of the exact field for
  integer ``alpha``, Arb otherwise; infinite when the pair has a leak); Gaussian noise
  ``alpha mu^2 / 2``; Laplace noise in Mironov's closed form; Poisson-subsampled Gaussian
  noise by the binomial expansion (forward, integer ``alpha``) or a certified Arb integral
  with bounded tails; Poisson-subsampled Laplace noise by three pieces, two in closed
  form and one certified Arb integral.  An exactly subsampled finite mechanism
  contributes its two directions; a subsampled mechanism known only by bounds, an
  enclosure.
* :func:`gdp_mu`: the smallest ``mu`` with ``G_mu`` below the composed trade-off
  function, exactly ``sqrt(sum_i k_i mu_i^2)`` for Gaussian noise (Poisson-subsampled
  or not: subsampling leaves ``mu`` where it was), and the largest
  ``Phi^-1(1 - t) - Phi^-1(f(t))`` over the vertices of an exact region of finite pairs,
  a certified enclosure for both together (``sup_tau h(tau)`` over the Neyman-Pearson
  curve of ``G_m (x) F``); for mechanisms of bounded loss (Laplace,
  subsampled Laplace, subsampled finite pairs) a certified enclosure of
  ``sup_eps m(eps)`` from the composition's privacy profile on ``[0, loss cap]``;
  refused with the reason for other kinds (no finite ``mu`` at all when a pair has a
  leak).

An infinite divergence is the Value :data:`INFINITY` (closed form ``oo``), tested by
:func:`is_infinite`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import comb, isqrt
from typing import Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError, UnsupportedQueryError
from ..mechanisms.region import RegionMechanism
from ..numbers import parse_rational
from ..numbers.convert import ball_end, rational_ball
from ..numbers.value import Value
from ..regions.pld import PLD, canonical_pair
from ..regions.protocol import (
    BoundedPair,
    DirectedPair,
    FinitePair,
    GaussianPair,
    GridEntry,
    LossPair,
    NoiseKind,
    NoisePair,
    PairForm,
)
from ..regions.tradeoff import Region

__all__ = [
    "INFINITY",
    "DEFAULT_ORDERS",
    "is_infinite",
    "parse_order",
    "renyi",
    "renyi_curve",
    "gdp_mu",
    "region_kinds",
]

#: the orders ``dpcompose summary`` prints by default
DEFAULT_ORDERS: tuple[str, ...] = ("1.5", "2", "3", "4", "5", "8", "16", "32", "64")

#: integer orders up to this use the binomial expansion (subsampled Gaussian, forward)
_BINOMIAL_ORDERS = 256
#: integer orders: ``(e^l)^(alpha - 1)`` in Q(z) while ``(alpha - 1) |l|`` is at most this
#: (``|l|`` the sum of the loss vector's absolute entries); Arb beyond
_FIELD_DEGREE = 4096

#: the working precision (bits) of the enclosures of pairs known only by bounds
_ENCLOSURE_BITS = 256


class _Infinite(Value):
    """``+oo`` as a Value: closed form ``oo``, decimals ``inf``, floats ``math.inf``."""

    __slots__ = ()

    def decimal(self, digits: int = 30) -> str:
        """``inf``."""
        return "inf"

    def rounded(self, digits: int = 30, rounding: str = "up") -> str:
        """``inf`` (in every direction)."""
        return "inf"

    def interval(self, digits: int = 30) -> tuple[str, str]:
        """``("inf", "inf")``."""
        return "inf", "inf"

    def __float__(self) -> float:
        return math.inf

    def upper(self) -> float:
        """``math.inf``."""
        return math.inf

    def lower(self) -> float:
        """``math.inf``."""
        return math.inf


#: an infinite divergence (a pair with a leak): closed form ``oo``, decimal ``inf``
INFINITY: Value = _Infinite(lambda prec: flint.arb("inf"), closed_form=lambda: "oo", key=("oo",))


def is_infinite(value: Value) -> bool:
    """True when ``value`` is :data:`INFINITY` (an infinite Rényi divergence)."""
    return value.exact == "oo"


def parse_order(alpha: Any) -> Fraction:
    """An order ``alpha > 1`` as an exact rational (floats raise ``TypeError``).

    >>> parse_order("1.5"), parse_order(2)
    (Fraction(3, 2), Fraction(2, 1))
    """
    a = parse_rational(alpha, "alpha")
    if a <= 1:
        raise InvalidParameterError(f"the Rényi order alpha = {a} must be > 1")
    return a


def region_kinds(region: Region) -> list[tuple[Any, int]]:
    """``[(the region's canonical pair as a mechanism, 1)]``: summarise a region itself.

    The Rényi divergences and the GDP mu of a region are those of its canonical pair
    (docs/theory.md, sections 1 and 20).
    """
    return [(RegionMechanism(region), 1)]


# ---------------------------------------------------------------------------------------
# the divergence of one use, in one direction


@dataclass(frozen=True)
class _Div:
    """``D_alpha`` of one use in one direction: a ball at any precision and a closed form.

    ``lower``/``upper`` (both or neither): the divergence is only enclosed between two
    divergences (a subsampled mechanism known by bounds, a direction known to be below
    the other); then ``ev`` and ``text`` are unused.
    """

    ev: Callable[[int], flint.arb] | None = None
    text: Callable[[], str] | None = None
    zero: bool = False
    infinite: bool = False
    lower: _Div | None = None
    upper: _Div | None = None
    rational: Fraction | None = None

    @property
    def enclosed(self) -> bool:
        return self.lower is not None


_INF_DIV = _Div(infinite=True)


def _rational_div(x: Fraction) -> _Div:
    def ev(prec: int) -> flint.arb:
        with flint.ctx.workprec(prec):
            return rational_ball(x)

    return _Div(ev, lambda: str(x), zero=x == 0, rational=x)


def _pld_div(pld: PLD, alpha: Fraction) -> _Div:
    """``D_alpha(P0 || P1)`` of a finite pair: exact for integer ``alpha``, Arb otherwise."""
    if not pld.leak.is_zero():
        return _INF_DIV
    dom, a1 = pld.domain, alpha - 1
    zero = all(not any(loss) for loss, _ in pld.masses)
    size = max((sum(abs(n) for n in loss) for loss, _ in pld.masses), default=1)
    if a1.denominator == 1 and a1 * max(size, 1) <= _FIELD_DEGREE:  # an element of Q(z)
        n = int(a1)
        s = sum((m * dom.exp_loss(loss) ** n for loss, m in pld.masses), start=pld.leak)

        def ev(prec: int) -> flint.arb:
            with flint.ctx.workprec(prec):
                return dom.elem_ball(s, prec).log() / n

        tail = "" if n == 1 else f"/{n}"
        return _Div(ev, lambda: f"log({dom.elem_str(s)}){tail}", zero=zero)

    def ev_frac(prec: int) -> flint.arb:
        with flint.ctx.workprec(prec):
            c = rational_ball(a1)
            total = flint.arb(0)
            for loss, m in pld.masses:
                total += dom.elem_ball(m, prec) * (c * dom.loss_ball(loss, prec)).exp()
            return total.log() / c

    def text() -> str:
        terms = " + ".join(
            f"({dom.elem_str(m)})*exp(({a1})*({dom.loss_str(loss)}))" for loss, m in pld.masses
        )
        return f"log({terms})/({a1})"

    return _Div(ev_frac, text, zero=zero)


def _laplace_div(eps0: Fraction, alpha: Fraction) -> _Div:
    """Laplace noise with ``eps0 = sensitivity / b`` (Mironov 2017, Proposition 6)."""
    a1, w = alpha - 1, 2 * alpha - 1

    def ev(prec: int) -> flint.arb:
        with flint.ctx.workprec(prec):
            e = rational_ball(eps0)
            inner = (
                rational_ball(alpha / w) * (rational_ball(a1) * e).exp()
                + rational_ball(a1 / w) * (-rational_ball(alpha) * e).exp()
            )
            return inner.log() / rational_ball(a1)

    def text() -> str:
        return (
            f"log(({alpha / w})*exp(({a1})*({eps0})) + ({a1 / w})*exp(-({alpha})*({eps0})))/({a1})"
        )

    return _Div(ev, text)


def _binomial_div(q: Fraction, alpha: int, moment: Callable[[int], tuple[Callable, str]]) -> _Div:
    """``D_alpha(qP + (1-q)Q || Q)`` for integer ``alpha`` by the binomial expansion.

    ``moment(j)`` gives ``E_Q[(P/Q)^j]`` as ``(ball at prec, closed form)``.
    """
    coef = [comb(alpha, j) * (1 - q) ** (alpha - j) * q**j for j in range(alpha + 1)]

    def ev(prec: int) -> flint.arb:
        with flint.ctx.workprec(prec):
            total = flint.arb(0)
            for j, c in enumerate(coef):
                total += rational_ball(c) * moment(j)[0](prec)
            return total.log() / (alpha - 1)

    def text() -> str:
        terms = " + ".join(f"({c})*({moment(j)[1]})" for j, c in enumerate(coef) if c)
        return f"log({terms})/{alpha - 1}"

    return _Div(ev, text)


def _gaussian_moment(mu2: Fraction) -> Callable[[int], tuple[Callable, str]]:
    """``E_Q[(P/Q)^j] = e^{j (j - 1) mu^2 / 2}`` for ``P = N(mu, 1)``, ``Q = N(0, 1)``."""

    def moment(j: int) -> tuple[Callable, str]:
        x = Fraction(j * (j - 1)) * mu2 / 2

        def ev(prec: int) -> flint.arb:
            return rational_ball(x).exp()

        return ev, f"exp({x})"

    return moment


def _laplace_piece_div(eps0: Fraction, q: Fraction, alpha: Fraction, forward: bool) -> _Div:
    """Poisson-subsampled Laplace noise, either direction, any ``alpha > 1``.

    With ``A = q P + (1 - q) Q`` (``P`` the Laplace noise shifted by the sensitivity) and
    ``B = Q``, ``r = A/B`` is ``1 - q + q e^{-eps0}`` below 0, ``1 - q + q e^{eps0}`` above
    the sensitivity and ``1 - q + q e^{2u - eps0}`` at ``x = u b`` between.  Forward
    ``D(A || B) = log E_B[r^alpha] / (alpha - 1)``, reverse ``D(B || A) = log E_B[r^(1 -
    alpha)] / (alpha - 1)``; the middle piece is a certified Arb integral over ``[0, eps0]``.
    """
    power = alpha if forward else 1 - alpha
    whole = power.denominator == 1

    def pw(x: Any, analytic: Any = None) -> Any:
        if whole:
            return x ** int(power)
        return (x.log(analytic=analytic) * flint.acb(rational_ball(power))).exp()

    def ev(prec: int) -> flint.arb:
        with flint.ctx.workprec(prec + 20):
            e, qb = rational_ball(eps0), rational_ball(q)
            lo = 1 - qb + qb * (-e).exp()
            hi = 1 - qb + qb * e.exp()
            ends = (pw(flint.acb(lo)).real + (-e).exp() * pw(flint.acb(hi)).real) / 2

            def f(u: Any, analytic: Any) -> Any:
                base = 1 - qb + qb * (2 * u - e).exp()
                return (-u).exp() / 2 * pw(base, analytic)

            middle = flint.acb.integral(f, 0, e).real
            return (ends + middle).log() / rational_ball(alpha - 1)

    def text() -> str:
        p = f"({power})"
        body = f"(1 - {q} + {q}*exp(2*u - {eps0}))**{p}"
        return (
            f"log((1 - {q} + {q}*exp(-{eps0}))**{p}/2 + exp(-{eps0})*(1 - {q} + "
            f"{q}*exp({eps0}))**{p}/2 + Integral(exp(-u)*{body}/2, (u, 0, {eps0})))"
            f"/({alpha - 1})"
        )

    return _Div(ev, text)


def _gaussian_integral_div(mu: Fraction, q: Fraction, alpha: Fraction, forward: bool) -> _Div:
    """Poisson-subsampled Gaussian noise, either direction, any ``alpha > 1``.

    In units of sigma, ``B = N(0, 1)`` and ``r = A/B = 1 - q + q e^{mu y - mu^2/2}``;
    ``E_B[r^beta]`` (``beta = alpha`` forward, ``1 - alpha`` reverse) is a certified Arb
    integral over ``[-T_lo, T_hi]`` (unit pieces) plus the tails, enclosed in
    ``[0, bound]``: forward, ``r <= 1`` below ``mu/2`` and ``r <= e^{mu y - mu^2/2}``
    above, so the tails are at most ``Q(T_lo) + e^{beta(beta - 1) mu^2/2} Q(T_hi - beta
    mu)``; reverse, ``r >= 1 - q`` everywhere and ``r >= 1`` above ``mu/2``, so at most
    ``(1 - q)^beta Q(T_lo) + Q(T_hi)`` (``Q`` the normal upper tail, ``T_hi >= mu/2``).
    The cut grows with the precision asked, so the value refines to any number of digits.
    """
    beta = alpha if forward else 1 - alpha
    whole = beta.denominator == 1

    def cut(prec: int) -> tuple[int, int, flint.arb]:
        """``T_lo``, ``T_hi`` and the absolute tolerance of the pieces (float guides)."""
        b, m, bits = float(beta), float(mu), (prec + 20) * math.log(2)
        if forward:  # the integral is about q^beta e^{beta(beta - 1) mu^2/2}, and >= 1
            size = max(0.0, b * math.log(float(q)) + b * (b - 1) * m * m / 2)
            lo = math.sqrt(2 * bits) + 1
            hi = max(b * m, m / 2) + math.sqrt(2 * (bits + b * -math.log(float(q)))) + 1
        else:  # the integral is >= 1 (the divergence is >= 0)
            size = 0.0
            lo = math.sqrt(2 * (bits + -b * -math.log1p(-float(q)))) + 1
            hi = max(lo, m / 2 + 1)
        tol = flint.arb(2) ** (-(prec + 10)) * flint.arb(size).exp()
        return math.ceil(lo), math.ceil(hi), tol

    def ev(prec: int) -> flint.arb:
        with flint.ctx.workprec(prec + 30):
            mb, qb, bb = rational_ball(mu), rational_ball(q), rational_ball(beta)
            lo, hi, tol = cut(prec)
            c = 1 / (2 * flint.arb.pi()).sqrt()

            def f(y: Any, analytic: Any) -> Any:
                base = 1 - qb + qb * (mb * y - mb * mb / 2).exp()
                if whole:
                    return c * (-y * y / 2).exp() * base ** int(beta)
                return c * (-y * y / 2).exp() * (base.log(analytic=analytic) * bb).exp()

            def upper_tail(x: flint.arb) -> flint.arb:
                return (x / flint.arb(2).sqrt()).erfc() / 2

            middle = flint.arb(0)
            for y in range(-lo, hi):  # unit pieces: Arb's integration stays local
                middle += flint.acb.integral(f, y, y + 1, abs_tol=tol).real
            t_lo, t_hi = flint.arb(lo), flint.arb(hi)
            if forward:
                grow = (bb * (bb - 1) * mb * mb / 2).exp()
                tails = upper_tail(t_lo) + grow * upper_tail(t_hi - bb * mb)
            else:
                tails = ((1 - qb).log() * bb).exp() * upper_tail(t_lo) + upper_tail(t_hi)
            total = middle + flint.arb(0).union(tails)
            return total.log() / rational_ball(alpha - 1)

    def text() -> str:
        body = f"exp(-y**2/2)/sqrt(2*pi)*(1 - {q} + {q}*exp({mu}*y - ({mu})**2/2))**({beta})"
        return f"log(Integral({body}, (y, -oo, oo)))/({alpha - 1})"

    return _Div(ev, text)


def _noise_divs(
    kind: NoiseKind, mu: Fraction, q: Fraction, alpha: Fraction
) -> tuple[_Div, _Div]:
    """Both directions of (subsampled) Laplace or subsampled Gaussian noise.

    ``mu`` is ``sensitivity / scale``: the Gaussian ``mu`` or the Laplace ``eps0``.
    """
    if kind is NoiseKind.LAPLACE:
        if q == 1:
            d = _laplace_div(mu, alpha)
            return d, d
        return _laplace_piece_div(mu, q, alpha, True), _laplace_piece_div(mu, q, alpha, False)
    if kind is NoiseKind.GAUSSIAN:
        if q == 1:
            d = _rational_div(alpha * mu * mu / 2)
            return d, d
        rev = _gaussian_integral_div(mu, q, alpha, False)
        if alpha.denominator == 1 and alpha <= _BINOMIAL_ORDERS:  # a closed form
            return _binomial_div(q, int(alpha), _gaussian_moment(mu * mu)), rev
        return _gaussian_integral_div(mu, q, alpha, True), rev
    raise ResourceLimitError(f"no Rényi divergence is known for noise of kind {kind!r}")


def _directions(lp: LossPair, alpha: Fraction) -> tuple[_Div, _Div]:
    """``(D(A || B), D(B || A))`` of one use of a mechanism with loss pair ``lp``."""
    match lp:
        case FinitePair(pld):
            d = _pld_div(pld, alpha)
            return d, d
        case DirectedPair(forward, reverse):
            return _pld_div(forward, alpha), _pld_div(reverse, alpha)
        case BoundedPair(DirectedPair(lo_fwd, lo_rev), DirectedPair(up_fwd, up_rev)):
            # a stronger and a weaker mechanism's directed pairs
            return (
                _Div(lower=_pld_div(lo_fwd, alpha), upper=_pld_div(up_fwd, alpha)),
                _Div(lower=_pld_div(lo_rev, alpha), upper=_pld_div(up_rev, alpha)),
            )
        case GaussianPair(mu2):
            d = _rational_div(alpha * mu2 / 2)
            return d, d
        case NoisePair(kind, mu, rate):
            noise = lp.grid_noise()
            if lp.grid_entry() is GridEntry.ALLOCATION:
                raise ResourceLimitError(
                    f"no Rényi divergence is computed for {noise.describe()}: each epoch's "
                    f"is at most that of its Gaussian steps, alpha t a^2/2 = "
                    f"{alpha * lp.gaussian_mu2() / 2}"
                    f" at alpha = {alpha} (joint convexity; docs/theory.md, section 21), not "
                    "certified two-sided"
                )
            own = (GridEntry.MIXTURE, GridEntry.REPLACE, GridEntry.PUBLIC_MIXTURE)
            if lp.grid_entry() in own:
                raise ResourceLimitError(
                    f"no Rényi divergence is computed for {noise.describe()}: it is at most "
                    f"that of its largest sensitivity's Gaussian, alpha mu^2/2 = "
                    f"{alpha * mu * mu / 2} at alpha = {alpha} (joint convexity; "
                    "docs/theory.md, section 23), not certified two-sided"
                )
            return _noise_divs(kind, mu, rate, alpha)
    raise ResourceLimitError(f"no Rényi divergence is known for loss pairs of form {lp.form}")


# ---------------------------------------------------------------------------------------
# sums over the composed mechanisms


def _keyed(value: Value) -> Value:
    """``value`` with its closed form as its key: equal forms are equal without a ball.

    (Different forms may still be equal; those are compared by certified signs.)
    """
    value._key_make = lambda: ("form", value.exact)
    return value


def _exact_sum(terms: Sequence[tuple[int, _Div]]) -> Value:
    """``sum_i k_i D_i`` of exact divergences: a Value certified to any digits."""
    if any(d.infinite for _, d in terms):
        return INFINITY
    rational = sum((n * d.rational for n, d in terms if d.rational is not None), Fraction(0))
    terms = [(n, d) for n, d in terms if not d.zero and d.rational is None]
    if not terms:
        return Value.from_rational(rational)
    if rational:
        terms.append((1, _rational_div(rational)))

    def ev(prec: int) -> flint.arb:
        with flint.ctx.workprec(prec):
            total = flint.arb(0)
            for n, d in terms:
                total += n * d.ev(prec)  # type: ignore[misc]
            return total

    def text() -> str:
        parts = (d.text() if n == 1 else f"{n}*({d.text()})" for n, d in terms)  # type: ignore[misc]
        return " + ".join(parts)

    return _keyed(Value(ev, closed_form=text, is_zero=False))


def _end(d: _Div, upper: bool) -> _Div:
    if not d.enclosed:
        return d
    return d.upper if upper else d.lower  # type: ignore[return-value]


def _direction_total(terms: Sequence[tuple[int, _Div]]) -> Value | tuple[Value, Value]:
    """One direction's sum: a Value, or ``(lower, upper)`` Values when enclosed."""
    if not any(d.enclosed for _, d in terms):
        return _exact_sum(terms)
    return (
        _exact_sum([(n, _end(d, False)) for n, d in terms]),
        _exact_sum([(n, _end(d, True)) for n, d in terms]),
    )


def _max(a: Value, b: Value) -> Value:
    """The larger of two exact values, as an exact value (closed form ``Max(a, b)``)."""
    if is_infinite(a) or is_infinite(b):
        return INFINITY

    def ev(prec: int) -> flint.arb:
        return a.ball(prec).max(b.ball(prec))

    zero = bool(a._zero) and bool(b._zero)  # the exact zero flags of both
    return _keyed(Value(ev, closed_form=lambda: f"Max({a.exact}, {b.exact})", is_zero=zero))


def _interval(lower: Value, upper: Value) -> Value:
    """A certified enclosure ``[lower, upper]`` (an infinite upper end is refused)."""
    if is_infinite(upper):
        if is_infinite(lower):
            return INFINITY
        raise ResourceLimitError(
            "the Rényi divergence lies between a finite value and infinity: the subsampled "
            "mechanism's bounds are too loose to enclose it"
        )
    lo = lower.ball(_ENCLOSURE_BITS)
    hi = upper.ball(_ENCLOSURE_BITS)
    return Value.from_interval(lo, hi, nonnegative=True)


def renyi(kinds: Sequence[tuple[Any, int]], alpha: Any) -> Value:
    """The Rényi divergence of order ``alpha`` of the composition of ``kinds``.

    ``D_alpha`` is additive over the composed mechanisms in each direction; the answer
    is the larger of the two directions' sums (docs/theory.md, section 20).

    Args:
        kinds: ``[(mechanism, count), ...]``: mechanisms speaking the mechanism protocol.
        alpha: the order, an exact rational ``> 1`` (``"1.5"``, ``2``, a Fraction).

    Returns:
        An exact Value (certified to any digits) when every part is exact;
        :data:`INFINITY` when a pair has a leak (mass where the other hypothesis has
        none); a certified enclosure when a subsampled mechanism is known only by bounds.

    Raises:
        InvalidParameterError: ``alpha <= 1``.
        TypeError: a float order.
    """
    a = parse_order(alpha)
    fwd: list[tuple[int, _Div]] = []
    rev: list[tuple[int, _Div]] = []
    for m, n in kinds:
        if not n:
            continue
        d0, d1 = _directions(m.loss_pair(), a)
        fwd.append((int(n), d0))
        rev.append((int(n), d1))
    if all(f is r for (_, f), (_, r) in zip(fwd, rev)):
        return _direction_total(fwd)  # type: ignore[return-value] - never enclosed here
    t0, t1 = _direction_total(fwd), _direction_total(rev)
    if isinstance(t0, Value) and isinstance(t1, Value):
        return _max(t0, t1)
    lo0, hi0 = t0 if isinstance(t0, tuple) else (t0, t0)
    lo1, hi1 = t1 if isinstance(t1, tuple) else (t1, t1)
    return _interval(_max(lo0, lo1), _max(hi0, hi1))


def renyi_curve(
    kinds: Sequence[tuple[Any, int]], orders: Sequence[Any]
) -> list[tuple[Fraction, Value]]:
    """``[(alpha, D_alpha), ...]`` for each order (see :func:`renyi`)."""
    return [(parse_order(a), renyi(kinds, a)) for a in orders]


# ---------------------------------------------------------------------------------------
# Gaussian differential privacy


def _sqrt_value(x: Fraction) -> Value:
    """``sqrt(x)`` for a rational ``x >= 0``: rational when it is a square, else exact."""
    rn, rd = isqrt(x.numerator), isqrt(x.denominator)
    if rn * rn == x.numerator and rd * rd == x.denominator:
        return Value.from_rational(Fraction(rn, rd))

    def ev(prec: int) -> flint.arb:
        with flint.ctx.workprec(prec):
            return rational_ball(x).sqrt()

    key = ("sqrt", x.numerator, x.denominator)
    return Value(ev, closed_form=lambda: f"sqrt({x})", key=key, is_zero=False)


def _vertex_mu(region: Region, t: Any, f: Any) -> tuple[Callable[[int], flint.arb], str]:
    """``mu`` with ``G_mu`` through the vertex ``(t, f)``: ``Phi^-1(1 - t) - Phi^-1(f)``."""
    dom = region.domain

    def ev(prec: int) -> flint.arb:
        with flint.ctx.workprec(prec + 10):
            tb, fb = dom.elem_ball(t, prec + 10), dom.elem_ball(f, prec + 10)
            return flint.arb(2).sqrt() * ((1 - 2 * tb).erfinv() + (1 - 2 * fb).erfinv())

    text = f"sqrt(2)*(erfinv(1 - 2*({dom.elem_str(t)})) + erfinv(1 - 2*({dom.elem_str(f)})))"
    return ev, text


def _finite_mu(region: Region) -> Value:
    """The smallest ``mu`` with ``G_mu <= f`` for a piecewise-linear ``f`` without a leak.

    ``G_mu`` is convex and ``f`` linear between its vertices, so ``G_mu <= f`` holds iff it
    holds at every vertex; the vertex ``(t, f(t))`` asks ``mu >= Phi^-1(1 - t) -
    Phi^-1(f(t))``.  Vertices certified below another (balls up to 2048 bits) are dropped;
    the value is the largest of the others (one closed form when one is left).
    """
    verts = [(t, f) for t, f in region.half_vertices() if not t.is_zero()]
    if not verts:
        return Value.from_rational(0)
    parts = [_vertex_mu(region, t, f) for t, f in verts]
    kept = parts
    for prec in (128, 256, 512, 1024, 2048):  # drop the vertices certified below another
        balls = [ev(prec) for ev, _ in kept]
        if not all(b.is_finite() for b in balls):
            continue
        top = max((b.lower() for b in balls), key=float)  # the largest lower end (a ball)
        kept = [p for p, b in zip(kept, balls) if not b.upper() < top]
        if len(kept) == 1:
            break
    if len(kept) == 1:
        ev, text = kept[0]
        return _keyed(Value(ev, closed_form=lambda: text, is_zero=False))

    def ev_max(prec: int) -> flint.arb:
        out = kept[0][0](prec)
        for e, _ in kept[1:]:
            out = out.max(e(prec))
        return out

    text = "Max(" + ", ".join(t for _, t in kept) + ")"
    return _keyed(Value(ev_max, closed_form=lambda: text, is_zero=False))


def _gauss_delta(eps: flint.arb, mu: flint.arb) -> flint.arb:
    """``delta(eps)`` of ``G_mu`` in Arb: ``Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)``."""
    r2 = flint.arb(2).sqrt()

    def phi(x: flint.arb) -> flint.arb:
        return (-x / r2).erfc() / 2

    return phi(mu / 2 - eps / mu) - eps.exp() * phi(-mu / 2 - eps / mu)


def _float_mu_at(eps: float, d: float) -> float:
    """A float guide: the ``mu`` with ``delta_{G_mu}(eps) = d`` (bisection)."""

    def dg(mu: float) -> float:
        def phi(x: float) -> float:
            return math.erfc(-x / math.sqrt(2)) / 2

        return phi(mu / 2 - eps / mu) - math.exp(eps) * phi(-mu / 2 - eps / mu)

    lo, hi = 1e-9, 64.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if dg(mid) < d else (lo, mid)
    return lo


class _NoisyFinite:
    """The trade-off curve of ``G_m (x) F``, ``F`` finite and symmetric, without a leak.

    With the canonical pair of ``F`` (P-masses ``p_j`` at the losses ``l_j``, Q-masses
    ``q_j = p_j e^{-l_j}``) and ``x_j = (tau - l_j)/m``, the Neyman-Pearson tests that
    reject when the loss exceeds ``tau`` have errors ``alpha(tau) = sum_j q_j
    Phi_bar(x_j + m/2)`` and ``beta(tau) = 1 - bbar(tau)``, ``bbar(tau) = sum_j p_j
    Phi_bar(x_j - m/2)``, and ``G_mu <= f`` iff ``mu >= h(tau) = Psi(alpha) - Psi(bbar)``
    at every ``tau`` (``Psi`` the inverse of ``Phi_bar``; docs/theory.md, section 20).
    Both sums have positive terms only: no cancellation, however far in the tail.
    """

    def __init__(self, m2: Fraction, region: Region) -> None:
        pld = canonical_pair(region)
        self.m2 = m2
        self.dom = pld.domain
        self.masses = pld.masses  # ascending losses
        self._atoms: dict[int, tuple[flint.arb, list[tuple[flint.arb, flint.arb, flint.arb]]]] = {}

    def atoms(self, prec: int) -> tuple[flint.arb, list[tuple[flint.arb, flint.arb, flint.arb]]]:
        """``(m, [(l_j, p_j, q_j), ...])`` as balls at ``prec`` bits."""
        if prec not in self._atoms:
            with flint.ctx.workprec(prec):
                out = []
                for loss, mass in self.masses:
                    lb = self.dom.loss_ball(loss, prec)
                    pb = self.dom.elem_ball(mass, prec)
                    out.append((lb, pb, pb * (-lb).exp()))
                self._atoms[prec] = (rational_ball(self.m2).sqrt(), out)
        return self._atoms[prec]

    def _sums(self, tau: flint.arb, prec: int) -> tuple[flint.arb, flint.arb]:
        """``(2 alpha(tau), 2 bbar(tau))`` in Arb: sums of positive terms."""
        m, atoms = self.atoms(prec)
        with flint.ctx.workprec(prec):
            r2 = flint.arb(2).sqrt()
            half = m / 2
            a = b = flint.arb(0)
            for lb, pb, qb in atoms:
                x = (tau - lb) / m
                a += qb * ((x + half) / r2).erfc()
                b += pb * ((x - half) / r2).erfc()
            return a, b

    def h(self, tau: flint.arb, prec: int) -> flint.arb:
        """``h(tau) = Psi(alpha) - Psi(bbar)`` in Arb at ``prec`` bits."""
        a, b = self._sums(tau, prec)
        with flint.ctx.workprec(prec):
            return flint.arb(2).sqrt() * (a.erfcinv() - b.erfcinv())

    def _derivatives(
        self, tau: flint.arb, za: flint.arb, zb: flint.arb, prec: int
    ) -> tuple[flint.arb, flint.arb]:
        """``(h', h'')`` at ``tau`` (a point or a cell), ``za``, ``zb`` enclosing ``Psi``'s.

        With ``U = sum_j q_j phi(x_j + m/2)``, ``V = sum_j p_j phi(x_j - m/2)`` and
        ``Psi'(u) = -1/phi(Psi(u))``: ``h' = (U/phi(za) - V/phi(zb))/m``, and from
        ``phi'(z) = -z phi(z)``, ``za' = U/(m phi(za))``, ``U' = -(1/m) sum_j q_j (x_j +
        m/2) phi(x_j + m/2)``: ``h'' = ((U' + za U^2/(m phi(za)))/phi(za) - (V' + zb
        V^2/(m phi(zb)))/phi(zb))/m``; every ``phi`` here is computed without its factor
        ``1/sqrt(2 pi)``, which cancels in each ratio.
        """
        m, atoms = self.atoms(prec)
        with flint.ctx.workprec(prec):
            half = m / 2
            u = v = du = dv = flint.arb(0)
            for lb, pb, qb in atoms:
                x = (tau - lb) / m
                eu = qb * (-((x + half) ** 2) / 2).exp()
                ev = pb * (-((x - half) ** 2) / 2).exp()
                u, v = u + eu, v + ev
                du, dv = du - (x + half) * eu / m, dv - (x - half) * ev / m
            pa, pb_ = (-(za**2) / 2).exp(), (-(zb**2) / 2).exp()
            first = (u / pa - v / pb_) / m
            second = ((du + za * u * u / (m * pa)) / pa - (dv + zb * v * v / (m * pb_)) / pb_) / m
            return first, second

    def cell(
        self, lo: flint.arb, hi: flint.arb, c: flint.arb, prec: int
    ) -> tuple[flint.arb, flint.arb, flint.arb, flint.arb]:
        """``(h'(c), h' on the cell, h'' on the cell, top)`` for the cell ``[lo, hi]``.

        ``alpha`` and ``bbar`` decrease with ``tau`` and ``Psi`` decreases, so both
        ``Psi(alpha)`` and ``Psi(bbar)`` increase: on the cell they lie between their
        values at the ends (a ball evaluation of ``erfc`` over a wide cell would lose every
        digit), and ``top = Psi(alpha(hi)) - Psi(bbar(lo))`` bounds ``h`` there.
        """
        a_lo, b_lo = self._sums(lo, prec)
        a_hi, b_hi = self._sums(hi, prec)
        a_c, b_c = self._sums(c, prec)
        with flint.ctx.workprec(prec):
            r2 = flint.arb(2).sqrt()
            za_lo, za_hi = r2 * a_lo.erfcinv(), r2 * a_hi.erfcinv()
            zb_lo, zb_hi = r2 * b_lo.erfcinv(), r2 * b_hi.erfcinv()
            za, zb = za_lo.union(za_hi), zb_lo.union(zb_hi)
            at_c = self._derivatives(c, r2 * a_c.erfcinv(), r2 * b_c.erfcinv(), prec)[0]
            slope, curv = self._derivatives(lo.union(hi), za, zb, prec)
            return at_c, slope, curv, za_hi - zb_lo


def _tail_walk(
    curve: _NoisyFinite, d: flint.arb, y0: Fraction, prec: int
) -> tuple[list[tuple[Fraction, Fraction]], bool]:
    """Certify ``h <= m + d`` for ``y(tau) >= y0``, but on the ranges returned.

    ``y(tau) = (tau - E)/m + m/2``, ``E`` the largest loss of ``F`` (Q-mass ``q_E``),
    ``s_j = (E - l_j)/m >= 0`` and ``u = y - m``: ``alpha = sum_j q_j Phi_bar(y + s_j)`` and
    ``bbar = sum_j p_j Phi_bar(u + s_j)``.  ``Phi_bar`` is log-concave, so ``R_s(y) =
    Phi_bar(y + s)/Phi_bar(y)`` and ``T_c(y) = Psi(c Phi_bar(y)) - y`` (``0 < c <= 1``) do
    not increase with ``y``.  On ``[y_1, y_2]``: ``alpha >= q'' Phi_bar(y)`` with ``q'' =
    sum_j q_j R_{s_j}(y_2)``, ``bbar <= p' Phi_bar(u)`` with ``p' = sum_j p_j
    R_{s_j}(u_1)``, so ``h = Psi(alpha) - Psi(bbar) <= m + T_{q''}(y_1) - T_{p'}(u_2)``.
    Beyond a ``y`` with ``T_{q_E}(y) <= d`` (one term of ``alpha``; ``bbar <= Phi_bar(u)``
    gives ``Psi(bbar) >= u``), ``h <= m + d`` holds for good.  The walk steps ``y`` up by
    1/32 of itself (at least 1/16; shorter steps tried when one fails) and returns the
    ``y`` ranges where a step failed (for the cells), and whether it reached the end
    (docs/theory.md, section 20).
    """
    m, atoms = curve.atoms(prec)
    e_loss, q_e = atoms[-1][0], atoms[-1][2]
    left: list[tuple[Fraction, Fraction]] = []
    with flint.ctx.workprec(prec):
        r2 = flint.arb(2).sqrt()
        gaps = [((e_loss - lb) / m, pb, qb) for lb, pb, qb in atoms]

        def t_of(c: flint.arb, x: flint.arb) -> flint.arb:  # Psi(c Phi_bar(x)) - x
            return r2 * (c * (x / r2).erfc()).erfcinv() - x

        def mix(x: flint.arb, forward: bool) -> flint.arb:  # sum_j w_j R_{s_j}(x)
            base = (x / r2).erfc()
            out = flint.arb(0)
            for s, pb, qb in gaps:
                out += (qb if forward else pb) * ((x + s) / r2).erfc()
            return (out / base).min(flint.arb(1))

        y = y0
        for _ in range(4000):
            yb = rational_ball(y)
            if t_of(q_e, yb) <= d:
                return left, True
            full = step = max(abs(y) / 32, Fraction(1, 16))
            p1 = mix(yb - m, False)
            ok = False
            for _ in range(4):
                y2 = rational_ball(y + step)
                bound = t_of(mix(y2, True), yb) - t_of(p1, y2 - m)
                if bound.is_finite() and bound <= d:
                    ok = True
                    break
                step /= 4
            if not ok:
                step = full
                if left and left[-1][1] == y:
                    left[-1] = (left[-1][0], y + step)
                else:
                    left.append((y, y + step))
            y += step
    return left, False


def _lower_fraction(ball: flint.arb) -> Fraction:
    """A rational at or below every point of ``ball``."""
    return ball_end(ball, up=False)


#: the most cells :func:`_gaussian_finite_mu` evaluates, and the most cell-atom terms
_GAUSS_FINITE_CELLS = 1000
_GAUSS_FINITE_TERMS = 50_000


def _gaussian_finite_mu(m2: Fraction, region: Region, nu: Value) -> Value:
    """``mu*`` of ``G_m (x) F`` (``m^2 = m2``, ``F`` the exact region, ``nu`` its own mu).

    ``mu* = sup_tau h(tau)`` (:class:`_NoisyFinite`); ``h`` is even (``F`` is symmetric),
    so ``tau >= 0`` suffices.  Lower end: ``h`` at points, certified in Arb, and
    ``max(m, nu)``.  Upper end: the scan range ``[0, E + m(m/2 + 4)]`` is cut into
    cells, on each the smallest of ``Psi(alpha(b)) - Psi(bbar(a))``, the mean value
    bound ``h(c) + max|h'| w/2`` and Taylor's ``h(c) + |h'(c)| w/2 + max(sup h'', 0)
    w^2/8`` (``c`` the midpoint, ``w`` the length, ``h'`` and ``h''`` enclosed on the
    whole cell: second order in ``w`` near the maximiser); beyond it the walk of
    :func:`_tail_walk` (its failed ranges become cells too).  Cells above the lower end
    are halved until the enclosure is :data:`GDP_REL_WIDTH` wide; the upper end never
    exceeds ``sqrt(m^2 + nu^2)`` (docs/theory.md, section 20).
    """
    curve = _NoisyFinite(m2, region)
    prec = 128
    with flint.ctx.workprec(_ENCLOSURE_BITS):
        m_ball = rational_ball(m2).sqrt()
        nu_ball = nu.ball(_ENCLOSURE_BITS)
        loose = ball_end((rational_ball(m2) + nu_ball * nu_ball).sqrt())
    lower = max(_lower_fraction(m_ball), _lower_fraction(nu_ball), Fraction(0))
    if not curve.masses or curve.dom.loss_sign(curve.masses[-1][0]) <= 0:
        return _sqrt_value(m2)  # F is the identity pair: G_m (x) F = G_m
    m_f = float(m_ball)
    e_f = float(curve.atoms(prec)[1][-1][0])

    def bound(a: Fraction, b: Fraction) -> Fraction | None:
        nonlocal lower
        c = (a + b) / 2
        work = prec
        for work in (prec, 2 * prec, 4 * prec):
            hv = curve.h(rational_ball(c), work)
            if hv.is_finite() and hv.rad() < abs(hv.mid()) * 2.0**-80:
                break
        if hv.is_finite():
            lower = max(lower, _lower_fraction(hv))
        with flint.ctx.workprec(work):
            cb = rational_ball(c)
            at_c, slope, curv, top = curve.cell(rational_ball(a), rational_ball(b), cb, work)
            half = rational_ball((b - a) / 2)
            mean = hv + abs(slope) * half  # the mean value theorem
            # Taylor: h(c + s) = h(c) + h'(c) s + h''(xi) s^2 / 2, |s| <= w/2
            taylor = hv + abs(at_c) * half + curv.upper().max(0) * half * half / 2
        tops = [ball_end(t) for t in (mean, taylor, top) if t.is_finite()]
        return min(tops) if tops else None

    scan = Fraction(math.ceil((e_f + m_f * (m_f / 2 + 4)) * 64), 64)  # y = m + 4 there
    n0 = 64
    cells = [(scan * i / n0, scan * (i + 1) / n0) for i in range(n0)]
    bounds = [bound(a, b) for a, b in cells]
    # the tail: h <= m + d beyond the scan, d a hair above lower - m; the ranges where
    # the walk fails join the cells
    with flint.ctx.workprec(prec):
        e_ball = curve.atoms(prec)[1][-1][0]
        d = rational_ball(lower) - m_ball + rational_ball(lower * GDP_REL_WIDTH / 4)
        y0 = _lower_fraction((rational_ball(scan) - e_ball) / m_ball + m_ball / 2)
        left, reached = _tail_walk(curve, d, y0, prec)
        tail = ball_end(m_ball + d) if reached else None
        for ya, yb in left:  # tau = E + m (y - m/2), rounded outwards
            t0 = max(scan, _lower_fraction(e_ball + m_ball * (rational_ball(ya) - m_ball / 2)))
            t1 = ball_end(e_ball + m_ball * (rational_ball(yb) - m_ball / 2))
            cells.append((t0, t1))
            bounds.append(bound(t0, t1))
    upper = loose
    budget = min(_GAUSS_FINITE_CELLS, max(256, _GAUSS_FINITE_TERMS // len(curve.masses)))
    while tail is not None:
        known = [x for x in bounds if x is not None]
        top = max(known + [tail])
        if len(known) == len(bounds):
            upper = min(loose, top)
            if top == tail and upper - lower > GDP_REL_WIDTH * upper:
                break  # the tail decides: halving cells cannot lower the upper end
        if upper - lower <= GDP_REL_WIDTH * upper or len(cells) >= budget:
            break
        order = sorted(
            (i for i, x in enumerate(bounds) if x is None or x > lower),
            key=lambda i: -math.inf if bounds[i] is None else -float(bounds[i]),  # type: ignore[arg-type]
        )[:16]
        if not order:
            break
        for i in sorted(order, reverse=True):
            a, b = cells.pop(i)
            bounds.pop(i)
            c = (a + b) / 2
            cells += [(a, c), (c, b)]
            bounds += [bound(a, c), bound(c, b)]
    with flint.ctx.workprec(_ENCLOSURE_BITS):
        return Value.from_interval(rational_ball(lower), rational_ball(upper), nonnegative=True)


def _mixed_mu(pairs: Sequence[tuple[LossPair, int]]) -> Value:
    """Gaussian noise ``G_m`` next to finite pairs ``F`` (``mu_F`` their own ``mu``).

    Plain Gaussian noise: the enclosure of :func:`_gaussian_finite_mu`, to
    :data:`GDP_REL_WIDTH`.  Some of the Gaussian noise Poisson-subsampled:
    ``G_m (x) F >= G_m (x) G_{mu_F} = G_sqrt(m^2 + mu_F^2)``, and ``G_m (x) F`` is below
    both ``G_m`` and ``F``: ``mu*`` lies in ``[max(m, mu_F), sqrt(m^2 + mu_F^2)]`` (its
    ``mu*`` is still ``m`` and it is above ``G_m``, so the same enclosure holds;
    docs/theory.md, section 20).
    """
    from .routes import ComposeOptions, Method, compose_routed

    noise = [(lp, n) for lp, n in pairs if lp.form is not PairForm.FINITE]
    m2 = _gaussian_family_mu2(noise)
    assert m2 is not None
    finite = [(lp.directions()[0], n) for lp, n in pairs if lp.form is PairForm.FINITE]
    result, _ = compose_routed(finite, ComposeOptions(Method.EXACT, closed_forms=False))
    nu = _finite_mu(result.region)
    if all(lp.form is PairForm.GAUSSIAN for lp, _ in noise):
        return _gaussian_finite_mu(m2, result.region, nu)
    with flint.ctx.workprec(_ENCLOSURE_BITS):
        g, f = rational_ball(m2).sqrt(), nu.ball(_ENCLOSURE_BITS)
        return Value.from_interval(g.max(f), (rational_ball(m2) + f * f).sqrt(), nonnegative=True)


def _gaussian_family_mu2(pairs: Sequence[tuple[LossPair, int]]) -> Fraction | None:
    """``sum_i k_i mu_i^2`` when every pair is Gaussian noise, subsampled or not; else None.

    Poisson subsampling at any rate leaves ``mu*`` where it was (docs/theory.md, section
    20): each subsampled Gaussian is dominated by its Gaussian, and far in the tail the
    composition's trade-off function falls below every ``G_mu`` with a smaller ``mu``.
    """
    total = Fraction(0)
    for lp, n in pairs:
        mu2 = lp.gaussian_mu2()
        if mu2 is None:
            return None
        total += n * mu2
    return total


def _loss_cap(pairs: Sequence[tuple[LossPair, int]]) -> Fraction | None:
    """A rational ``E`` with every loss of the composition ``<= E`` in both directions.

    Then ``delta(eps) = 0`` for ``eps >= E`` (docs/theory.md, section 20).  None when a
    pair's loss is unbounded (Gaussian noise).  Per use: a finite pair's largest loss (both
    directions of an asymmetric one, both pairs of bounds), Laplace noise ``eps0``,
    Poisson-subsampled Laplace noise ``ln(q e^eps0 + 1 - q) <= eps0`` forward and
    ``-ln(q e^-eps0 + 1 - q) <= eps0`` reverse (taken as ``eps0``).
    """
    total = Fraction(0)
    for lp, n in pairs:
        cap = lp.loss_cap()
        if cap is None:
            return None
        total += n * cap
    return total


def _gauss_delta_q(eps: Fraction, mu: Fraction) -> flint.arb:
    with flint.ctx.workprec(_ENCLOSURE_BITS):
        return _gauss_delta(rational_ball(eps), rational_ball(mu))


def _mu_bracket(eps: Fraction, d: Fraction) -> tuple[Fraction, Fraction | None]:
    """Rationals ``lo <= m(eps, d) <= hi`` (``hi`` None: none found), about 2^-40 apart.

    ``m(eps, d)`` is the ``mu`` with ``delta_{G_mu}(eps) = d``, for ``0 < d < 1``;
    ``delta_{G_mu}`` increases with ``mu``.  Both ends are certified in Arb
    (``delta_{G_lo}(eps) < d <= delta_{G_hi}(eps)``), from a float guess widened until it
    brackets, then bisected.
    """
    target = rational_ball(d)
    guess = max(_float_mu_at(float(eps), float(d)), 1e-9) if float(d) > 0 else 1e-9
    lo: Fraction | None = None
    hi: Fraction | None = None
    for widen in (1e-6, 1e-3, 0.1, 0.5, 0.9):
        mu = Fraction(guess * (1 - widen)).limit_denominator(10**18)
        if mu > 0 and _gauss_delta_q(eps, mu) < target:
            lo = mu
            break
    for grow in (1e-6, 1e-3, 0.1, 1.0, 10.0, 100.0, 1000.0):
        mu = Fraction(guess * (1 + grow)).limit_denominator(10**18)
        if _gauss_delta_q(eps, mu) >= target:
            hi = mu
            break
    for i in range(1, 81):  # a poor float guide (tiny d): halve and double until bracketed
        if lo is not None and hi is not None:
            break
        if lo is None:
            mu = Fraction(guess) / 2**i
            if _gauss_delta_q(eps, mu) < target:
                lo = mu
        if hi is None:
            mu = Fraction(guess) * 2**i
            if _gauss_delta_q(eps, mu) >= target:
                hi = mu
    if lo is None or hi is None:
        return lo or Fraction(0), hi
    for _ in range(64):
        if hi - lo <= hi * Fraction(1, 2**40):
            break
        mid = Fraction(float((lo + hi) / 2)).limit_denominator(10**18)
        if not lo < mid < hi:
            break
        ball = _gauss_delta_q(eps, mid)
        if ball < target:
            lo = mid
        elif ball >= target:
            hi = mid
        else:
            break  # undecided at this precision: keep the bracket
    return lo, hi


def _mu_below(eps: Fraction, d: Fraction) -> Fraction:
    """A rational ``mu <= m(eps, d)`` (0 when ``d = 0`` or nothing is certified)."""
    if d <= 0:
        return Fraction(0)
    if d >= 1:
        return Fraction(0)
    return _mu_bracket(eps, d)[0]


def _mu_above(eps: Fraction, d: Fraction) -> Fraction | None:
    """A rational ``mu >= m(eps, d)``; None when none exists (``d >= 1``) or is found."""
    if d <= 0:
        return Fraction(0)
    if d >= 1:
        return None
    return _mu_bracket(eps, d)[1]


def _cell_mu(a: Fraction, b: Fraction, da: Fraction, db: Fraction) -> Fraction | None:
    """A rational ``mu`` with ``delta_{G_mu} >= delta`` on ``[a, b]``, given upper bounds.

    ``da >= delta(a)``, ``db >= delta(b)``.  Always valid: ``m(b, da)`` (both curves
    non-increasing).  Tighter (second order in ``b - a``), as functions of ``g = e^eps``
    both curves are convex (a hockey-stick divergence is a supremum of functions affine
    in ``g``): ``delta`` lies below its chord through ``(e^a, da)`` and ``(e^b, db)``, and
    ``delta_{G_mu}`` above its tangent at ``e^c``, ``c = (a + b)/2``, whose slope is
    ``-Phi(-c/mu - mu/2)``; both are affine, so the tangent above the chord at ``e^a`` and
    ``e^b`` suffices (docs/theory.md, section 20).  None when ``da >= 1``.
    """
    crude = _mu_above(b, da)
    if crude is None or crude == 0:
        return crude
    need = max(_mu_bracket(a, da)[1] or crude, _mu_bracket(b, db)[1] or Fraction(0))
    c = (a + b) / 2
    with flint.ctx.workprec(_ENCLOSURE_BITS):
        ga, gb, gc = (rational_ball(x).exp() for x in (a, b, c))
        r2 = flint.arb(2).sqrt()
        bda, bdb = rational_ball(da), rational_ball(db)
        for grow in (1e-13, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2):
            mu = Fraction(float(need) * (1 + grow)).limit_denominator(10**18)
            if mu >= crude:
                break
            mb = rational_ball(mu)
            cb = rational_ball(c)
            value = _gauss_delta(cb, mb)
            slope = (-(-cb / mb - mb / 2) / r2).erfc() / 2  # Phi(-c/mu - mu/2)
            at_a = value + slope * (gc - ga)
            at_b = value - slope * (gb - gc)
            if at_a >= bda and at_b >= bdb:
                return mu
    return crude


#: the relative width at which the profile search stops refining
GDP_REL_WIDTH = Fraction(1, 10**9)
#: the most delta enclosures the profile search asks for
GDP_MAX_QUERIES = 600


def _profile_mu(delta: Callable[[Any], Value], cap: Fraction) -> Value:
    """A certified enclosure of ``mu* = sup_{0 <= eps < cap} m(eps, delta(eps))``.

    ``G_mu`` lies below the composition's trade-off function iff ``delta(eps) <=
    delta_{G_mu}(eps)`` at every ``eps >= 0`` (both directions being in ``delta``), and
    ``delta = 0`` from ``cap`` on (docs/theory.md, section 20).  On a cell ``[a, b]``
    both ``delta`` and ``delta_{G_mu}`` are non-increasing, so ``mu >= m(b, delta_hi(a))``
    covers the cell: the upper end is the largest such value over a partition of
    ``[0, cap]``; the lower end the largest ``m(e, delta_lo(e))`` at a point.  Cells that
    could still hold the supremum are halved until the enclosure is
    :data:`GDP_REL_WIDTH` wide or :data:`GDP_MAX_QUERIES` deltas were asked.
    """
    if cap <= 0:
        return Value.from_rational(0)
    ends: dict[Fraction, tuple[Fraction, Fraction]] = {}

    def at(e: Fraction) -> tuple[Fraction, Fraction]:
        if e not in ends:
            if e >= cap:
                ends[e] = (Fraction(0), Fraction(0))
            else:
                ball = delta(e).ball(128)
                lo = ball.lower()
                ends[e] = (
                    max(Fraction(0), -ball_end(-lo)),
                    min(Fraction(1), ball_end(ball)),
                )
        return ends[e]

    lower = Fraction(0)
    best_at: dict[Fraction, Fraction] = {}

    def point(e: Fraction) -> None:
        nonlocal lower
        if e not in best_at:
            best_at[e] = _mu_below(e, at(e)[0])
            lower = max(lower, best_at[e])

    def cell(a: Fraction, b: Fraction) -> Fraction | None:
        return _cell_mu(a, b, at(a)[1], at(b)[1])

    n0 = 64
    cells: list[tuple[Fraction, Fraction, Fraction | None]] = []
    for i in range(n0):
        a, b = cap * i / n0, cap * (i + 1) / n0
        point(a)
        cells.append((a, b, cell(a, b)))
    while True:
        top = [c for c in cells if c[2] is None or c[2] > lower]
        upper = max((c[2] for c in cells if c[2] is not None), default=Fraction(0))
        unbounded = any(c[2] is None for c in cells)
        done = not unbounded and upper - lower <= GDP_REL_WIDTH * upper
        if done or len(ends) >= GDP_MAX_QUERIES or not top:
            break
        # halve the cells whose upper end is the largest first
        top.sort(key=lambda c: -1 if c[2] is None else -float(c[2]))
        for a, b, _ in top[:8]:
            m = (a + b) / 2
            point(m)
            cells.remove(next(c for c in cells if c[0] == a and c[1] == b))
            cells += [(a, m, cell(a, m)), (m, b, cell(m, b))]
    if unbounded:
        raise ResourceLimitError(
            "gdp_mu: the composition's delta enclosure is too wide near eps = 0 to bound "
            "mu (an upper bound of delta reached 1)"
        )
    with flint.ctx.workprec(_ENCLOSURE_BITS):
        return Value.from_interval(rational_ball(lower), rational_ball(upper), nonnegative=True)


def gdp_mu(
    kinds: Sequence[tuple[Any, int]],
    region: Region | None = None,
    delta: Callable[[Any], Value] | None = None,
) -> Value:
    """The smallest ``mu`` such that the composition is ``mu``-GDP (``G_mu <= f``).

    Exactly ``sqrt(sum_i k_i mu_i^2)`` when every composed mechanism is Gaussian noise,
    Poisson-subsampled or not; for finite symmetric pairs, from the vertices of the exact
    composed region; for both together, a certified enclosure of ``sup_tau h(tau)``
    over the Neyman-Pearson curve (about 1e-9 wide relative; the bracket
    ``[max(m, mu_F), sqrt(m^2 + mu_F^2)]`` when the Gaussian noise is subsampled); when
    every loss is bounded (Laplace noise, subsampled Laplace noise, subsampled finite
    pairs, finite pairs), a certified
    enclosure of the supremum of ``m(eps)`` over ``[0, loss cap]`` from ``delta``
    (docs/theory.md, section 20).

    Args:
        kinds: ``[(mechanism, count), ...]``.
        region: the exact composed region (a
            :class:`~dpcompose_exact.regions.tradeoff.Region`), needed when the kinds are
            finite pairs; None otherwise.
        delta: the composition's ``delta(eps)``: for bounded losses the profile the
            enclosure is computed from (needed there); unused otherwise.

    Raises:
        InvalidParameterError: when a composed pair has a leak (then ``f(0) < 1`` and no
            finite ``mu`` exists), when finite pairs come without their exact region, or
            for the mixes not computed (Gaussian noise next to Laplace noise or
            subsampled mechanisms other than subsampled Gaussian noise:
            :class:`~dpcompose_exact.errors.UnsupportedQueryError`).
    """
    pairs = [(m.loss_pair(), int(n)) for m, n in kinds if n]
    leaky = [m.describe() for (m, n) in kinds if n and m.loss_pair().has_leak()]
    if leaky:
        raise InvalidParameterError(
            f"no finite GDP mu exists: {leaky[0]} has a leak (mass at privacy loss "
            "+infinity, so the trade-off function has f(0) < 1 while every G_mu has "
            "G_mu(0) = 1)"
        )
    forms = {lp.form for lp, _ in pairs}
    if forms == {PairForm.FINITE}:
        if region is None:
            raise InvalidParameterError(
                "gdp_mu of finite pairs is read from the exact composed region; this "
                "composition has none (compose with method 'exact')"
            )
        return _finite_mu(region)
    noise_part = [(lp, n) for lp, n in pairs if lp.form is not PairForm.FINITE]
    if PairForm.FINITE in forms and _gaussian_family_mu2(noise_part) is not None:
        return _mixed_mu(pairs)  # Gaussian noise (some maybe subsampled) next to finite pairs
    family = _gaussian_family_mu2(pairs)
    if family is not None:  # Gaussian noise, some of it Poisson-subsampled: exact
        return _sqrt_value(family)
    cap = _loss_cap(pairs)
    if cap is not None and delta is not None:  # bounded losses: the profile on [0, cap]
        return _profile_mu(delta, cap)
    others = sorted(
        {
            m.describe()
            for (m, n) in kinds
            if n and m.loss_pair().form not in (PairForm.GAUSSIAN, PairForm.FINITE)
        }
    )
    if others:  # a query not answered for this mix: no parameter is invalid
        raise UnsupportedQueryError(
            "gdp_mu is computed for Gaussian noise (subsampled or not: exact), finite pairs "
            "(exact), both together (an enclosure), and for mechanisms of bounded privacy "
            "loss (Laplace, subsampled Laplace, subsampled finite pairs: an enclosure from "
            f"delta); not for {others[0]} in this mix: Gaussian noise next to Laplace or "
            "subsampled mechanisms has unbounded loss and no certified mu is computed"
        )
    return _sqrt_value(_gaussian_family_mu2(pairs) or Fraction(0))
