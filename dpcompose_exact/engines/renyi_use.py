"""The Rényi divergence of one use of a mechanism, in each direction.

A mechanism's loss pair (:mod:`~dpcompose_exact.regions.protocol`) gives ``D_alpha(A || B)``
and ``D_alpha(B || A)`` of one use, ``alpha > 1``, as a :class:`_Div`: a ball at any
precision and a closed form (or an enclosure between two such divergences), with
``D_alpha(P || Q) = log E_Q[(P/Q)^alpha] / (alpha - 1)`` (docs/theory.md, section 20):

* finite pairs (P-masses ``p(l)`` at the losses ``l``): ``log(sum_l p(l) e^{(alpha - 1)
  l}) / (alpha - 1)``, an element of the exact field for integer ``alpha``, Arb otherwise;
  infinite when the pair has a leak; a pair known only by bounds, the enclosure between
  the divergences of its stronger and weaker pairs;
* Gaussian noise ``alpha mu^2 / 2``; Laplace noise with ``eps0 = sensitivity / b`` in
  Mironov's closed form ``log(alpha/(2 alpha - 1) e^{(alpha - 1) eps0} + (alpha - 1)/(2
  alpha - 1) e^{-alpha eps0}) / (alpha - 1)``;
* Poisson-subsampled Gaussian noise: forward, for integer ``alpha``, the binomial
  expansion ``log(sum_j C(alpha, j) (1 - q)^{alpha - j} q^j e^{j (j - 1) mu^2 / 2}) /
  (alpha - 1)``; else a certified Arb integral over unit pieces with bounded tails;
* Poisson-subsampled Laplace noise: three pieces of ``E_B[r^beta]``, two in closed form
  and one certified Arb integral over ``[0, eps0]``.

:func:`_directions` dispatches on the loss pair's form; the sums over the composed
mechanisms are :mod:`~dpcompose_exact.engines.summaries`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import Any

import flint

from ..errors import ResourceLimitError
from ..numbers.convert import rational_ball
from ..regions.pld import PLD
from ..regions.protocol import (
    BoundedPair,
    DirectedPair,
    FinitePair,
    GaussianPair,
    GridEntry,
    LossPair,
    NoiseKind,
    NoisePair,
)

__all__: list[str] = []

#: integer orders up to this use the binomial expansion (subsampled Gaussian, forward)
_BINOMIAL_ORDERS = 256
#: integer orders: ``(e^l)^(alpha - 1)`` in Q(z) while ``(alpha - 1) |l|`` is at most this
#: (``|l|`` the sum of the loss vector's absolute entries); Arb beyond
_FIELD_DEGREE = 4096


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
