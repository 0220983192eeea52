"""Zero-concentrated DP as (eps, delta) constraints: the ``zcdp`` family.

A mechanism is ``(xi, rho)``-zCDP when its Renyi divergences satisfy
``D_alpha(P || Q) <= xi + rho alpha`` for every order ``alpha > 1`` (both directions).
Canonne, Kamath and Steinke (2020, Proposition 12) convert one order into (eps, delta):
for every ``alpha > 1``,

    delta(eps) <= exp((alpha - 1)(xi + rho alpha - eps)) / alpha * (1 - 1/alpha)^(alpha - 1),

so the infimum over ``alpha`` is an upper bound of ``delta(eps)`` of every such mechanism
(docs/theory.md, section 22).  :func:`cks_delta_ball` evaluates it in Arb at one
``alpha``; any ``alpha`` gives a valid bound, :func:`cks_alpha` picks a good one (the
root of the bound's derivative, found in floating point: the choice never affects
validity).

:func:`zcdp` is the guarantee as a mechanism of the paper: the constraints
``(eps_j, delta_j)`` at a few points of that upper curve, each ``delta_j`` the upper end
of the Arb ball rounded up to a rational.  Every ``(xi, rho)``-zCDP mechanism satisfies
all of them, so composing this multi-constraint mechanism exactly gives an **upper
bound** on any composition that contains a zCDP mechanism; it is not the curve of one
mechanism.  ``k`` uses of ``rho``-zCDP are ``k rho``-zCDP: compose ``zcdp(k rho)`` once
(the dp_accounting reader adds the rhos of its events first).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import flint
from mpmath import mp

from ..errors import InvalidParameterError
from ..numbers import parse_rational
from ..numbers.convert import ball_end, rational_ball
from ..regions.tradeoff import dp_region
from .dp import Mechanism

__all__ = [
    "zcdp",
    "scaled_cks_bound",
    "rdp_curve_bound",
    "zcdp_parameters",
    "cks_alpha",
    "cks_delta_ball",
    "cks_eps_alpha",
    "cks_epsilon_ball",
    "ZCDP_DELTAS",
]

#: the smallest delta whose eps on the upper curve ends the grid of constraints
ZCDP_DELTAS = (Fraction(1, 10**13),)
#: the number of steps of the grid of constraints (from eps = 0 to that eps)
ZCDP_POINTS = 120
_PREC = 128


def zcdp_parameters(rho: Any, xi: Any = 0) -> tuple[Fraction, Fraction]:
    """``(rho, xi)`` as exact rationals, both ``>= 0``.

    Raises:
        InvalidParameterError: a negative parameter (the message shows it).
    """
    r = parse_rational(rho, "zCDP rho")
    x = parse_rational(xi, "zCDP xi")
    for name, v in (("rho", r), ("xi", x)):
        if v < 0:
            raise InvalidParameterError(f"zCDP {name} = {v} is negative; valid range: >= 0")
    return r, x


def cks_delta_ball(
    rho: Fraction, xi: Fraction, eps: Fraction, alpha: Fraction, prec: int = _PREC
) -> flint.arb:
    """A ball containing the Canonne-Kamath-Steinke bound at order ``alpha > 1``.

    ``exp((alpha - 1)(xi + rho alpha - eps)) / alpha * (1 - 1/alpha)^(alpha - 1)``
    (docs/theory.md, section 22): its upper end bounds ``delta(eps)`` of every
    ``(xi, rho)``-zCDP mechanism.
    """
    if alpha <= 1:
        raise InvalidParameterError(f"order alpha = {alpha} must be > 1")
    with flint.ctx.workprec(prec):
        a = rational_ball(alpha)
        e = (a - 1) * (rational_ball(xi) + rational_ball(rho) * a - rational_ball(eps))
        return e.exp() / a * ((a - 1) / a) ** (a - 1)


def cks_epsilon_ball(
    rho: Fraction, xi: Fraction, delta: Fraction, alpha: Fraction, prec: int = _PREC
) -> flint.arb:
    """A ball containing the eps at which the bound at order ``alpha`` equals ``delta``.

    ``xi + rho alpha + (log(1/delta) + (alpha - 1) log(1 - 1/alpha) - log alpha) /
    (alpha - 1)``: its upper end bounds ``eps(delta)`` of every ``(xi, rho)``-zCDP
    mechanism (the bound of :func:`cks_delta_ball` solved for eps).
    """
    if alpha <= 1 or not 0 < delta < 1:
        raise InvalidParameterError(f"need alpha = {alpha} > 1 and delta = {delta} in (0, 1)")
    with flint.ctx.workprec(prec):
        a = rational_ball(alpha)
        d = rational_ball(delta)
        tail = (-d.log() + (a - 1) * ((a - 1) / a).log() - a.log()) / (a - 1)
        return rational_ball(xi) + rational_ball(rho) * a + tail


def _round_alpha(a: Any) -> Fraction:
    """An order > 1 near the float ``a``, as a short rational (any order is valid)."""
    out = Fraction(str(mp.nstr(a, 12))).limit_denominator(10**12)
    return out if out > 1 else Fraction(1) + Fraction(1, 10**9)


def cks_alpha(rho: Fraction, xi: Fraction, eps: Fraction) -> Fraction:
    """A good order for :func:`cks_delta_ball` at ``eps`` (``rho > 0``).

    The logarithm of the bound has derivative ``xi + (2 alpha - 1) rho - eps +
    log(1 - 1/alpha)`` in ``alpha``, increasing from ``-inf`` (``alpha -> 1``) to
    ``+inf``: its root, found by bisection in floating point, minimises the bound.
    """
    with mp.workdps(30):
        r = mp.mpf(rho.numerator) / rho.denominator
        x = mp.mpf(xi.numerator) / xi.denominator
        e = mp.mpf(eps.numerator) / eps.denominator

        def slope(a: Any) -> Any:
            return x + (2 * a - 1) * r - e + mp.log(1 - 1 / a)

        lo, hi = mp.mpf(1) + mp.mpf(10) ** -20, mp.mpf(2)
        while slope(hi) < 0:
            lo, hi = hi, 2 * hi
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if slope(mid) < 0 else (lo, mid)
        return _round_alpha(hi)


def cks_eps_alpha(rho: Fraction, xi: Fraction, delta: Fraction) -> Fraction:
    """A good order for :func:`cks_epsilon_ball` at ``delta`` (``rho > 0``).

    Minimises the eps of :func:`cks_epsilon_ball` over ``alpha`` by golden-section search
    in floating point (any order gives a valid bound).
    """
    with mp.workdps(30):
        r = mp.mpf(rho.numerator) / rho.denominator
        d = mp.mpf(delta.numerator) / delta.denominator

        def eps(a: Any) -> Any:
            return r * a + (-mp.log(d) + (a - 1) * mp.log(1 - 1 / a) - mp.log(a)) / (a - 1)

        guess = 1 + mp.sqrt(-mp.log(d) / r)  # the minimiser of rho a + log(1/d)/(a - 1)
        lo, hi = mp.mpf(1) + mp.mpf(10) ** -12, 4 * guess + 2
        g = (mp.sqrt(5) - 1) / 2
        for _ in range(200):
            m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
            if eps(m1) < eps(m2):
                hi = m2
            else:
                lo = m1
        return _round_alpha((lo + hi) / 2)


def _upper_rational(ball: flint.arb, digits: int = 4) -> Fraction:
    """A rational ``>=`` every point of ``ball``, with ``digits`` significant digits."""
    hi = ball_end(ball)
    if hi <= 0:
        return Fraction(0)
    scale = Fraction(10) ** (digits - 1 - math.floor(math.log10(hi)))
    return Fraction(math.ceil(hi * scale)) / scale


def _step(top: Fraction, points: int) -> Fraction:
    """``top / points`` rounded down to one significant digit (1, 2 or 5 times a power of 10)."""
    raw = top / points
    power = Fraction(10) ** math.floor(math.log10(raw))
    return max(m * power for m in (1, 2, 5) if m * power <= raw)


def _constraints(
    rho: Fraction, xi: Fraction, factor: Fraction = Fraction(1)
) -> list[tuple[Fraction, Fraction]]:
    """Points of the upper curve: ``eps_j`` on a uniform grid, ``delta_j`` rounded up.

    The grid runs from 0 to the eps of the smallest delta of :data:`ZCDP_DELTAS`, in
    :data:`ZCDP_POINTS` steps of one significant digit (a short common denominator keeps
    the exact composition next to other constraints small).  ``factor``: the curve is
    ``factor`` times the Canonne-Kamath-Steinke bound (a Rényi curve with the extra term
    ``log(factor)/(alpha - 1)``, as repeat-and-select's; docs/theory.md, section 22).
    """
    d_min = ZCDP_DELTAS[-1]
    top = ball_end(cks_epsilon_ball(rho, xi, d_min / factor, cks_eps_alpha(rho, xi, d_min)))
    step = _step(top, ZCDP_POINTS)
    out = []
    for j in range(math.ceil(top / step) + 1):
        eps = j * step
        ball = cks_delta_ball(rho, xi, eps, cks_alpha(rho, xi, eps)) * rational_ball(factor)
        delta = _upper_rational(ball)
        if delta < 1:
            out.append((eps, delta))
    return out


def scaled_cks_bound(rho: Any, xi: Any, factor: Any, label: str) -> Mechanism:
    """``factor`` times the CKS curve of ``(xi, rho)``-zCDP, as (eps, delta) constraints.

    A mechanism whose Rényi divergence of every order ``alpha > 1`` is at most ``xi + rho
    alpha + log(factor)/(alpha - 1)`` has ``delta(eps) <= factor x`` the bound of
    :func:`cks_delta_ball` (the same conversion; docs/theory.md, section 22): an upper
    bound, titled ``label``.

    >>> scaled_cks_bound("1/2", "1/10", "3", "r&s").label
    'r&s'
    """
    r, x = zcdp_parameters(rho, xi)
    f = parse_rational(factor, "factor")
    if r <= 0 or f < 1:
        raise InvalidParameterError(f"rho = {r} must be > 0 and factor = {f} >= 1")
    out = Mechanism.from_region(dp_region(_constraints(r, x, f), warn=False))
    out._label = label
    return out


def zcdp(rho: Any, xi: Any = 0) -> Mechanism:
    """A ``(xi, rho)``-zCDP guarantee as (eps, delta) constraints: an upper bound.

    The constraints are points of the Canonne-Kamath-Steinke curve (see the module
    docstring; docs/theory.md, section 22), which every ``(xi, rho)``-zCDP mechanism
    satisfies: composed with anything, the result bounds the composition of every such
    mechanism from above.  ``rho = 0`` is ``xi``-DP (the divergence of order infinity is at
    most ``xi``).

    >>> zcdp("1/2").label
    'zcdp(1/2) [CKS upper bound]'
    >>> zcdp("0", "1/4").pairs
    (('1/4', '0'),)
    """
    r, x = zcdp_parameters(rho, xi)
    if r == 0:
        out = Mechanism.dp(x)
    else:
        # points below the curve's other constraints are implied: dropped without a warning
        out = Mechanism.from_region(dp_region(_constraints(r, x), warn=False))
    name = f"zcdp({r})" if x == 0 else f"zcdp({r},{x})"
    out._label = name if r == 0 else f"{name} [CKS upper bound]"  # titles say what it is
    return out


def _rdp_delta(curve: list[tuple[Fraction, Fraction]], eps: Fraction) -> flint.arb:
    """The least of the CKS bounds at the curve's orders: ``delta(eps)`` from above."""
    best = None
    with flint.ctx.workprec(_PREC):
        for alpha, rdp in curve:
            a = rational_ball(alpha)
            ball = ((a - 1) * (rational_ball(rdp) - rational_ball(eps))).exp() / a * (
                (a - 1) / a) ** (a - 1)
            if best is None or ball.upper() < best.upper():
                best = ball
    assert best is not None
    return best


def _rdp_epsilon(curve: list[tuple[Fraction, Fraction]], delta: Fraction) -> flint.arb:
    """The least of the CKS eps bounds at the curve's orders: ``eps(delta)`` from above."""
    best = None
    with flint.ctx.workprec(_PREC):
        d = rational_ball(delta)
        for alpha, rdp in curve:
            a = rational_ball(alpha)
            ball = rational_ball(rdp) + (-d.log() + (a - 1) * ((a - 1) / a).log() - a.log()) / (
                a - 1)
            if best is None or ball.upper() < best.upper():
                best = ball
    assert best is not None
    return best


def rdp_curve_bound(curve: Any, label: str) -> Mechanism:
    """A Rényi curve known at finitely many orders, as (eps, delta) constraints: an upper bound.

    ``curve``: ``[(alpha, eps_alpha), ...]`` with ``alpha > 1`` and ``eps_alpha`` at or above
    the mechanism's Rényi divergence of order ``alpha`` (both directions), rationals.  Each
    order gives the Canonne-Kamath-Steinke bound ``exp((alpha - 1)(eps_alpha - eps)) / alpha
    (1 - 1/alpha)^(alpha - 1)`` on ``delta(eps)``; the least of them, rounded up, at a grid
    of eps as for :func:`zcdp` (docs/theory.md, section 22), titled ``label``.

    >>> rdp_curve_bound([(Fraction(2), Fraction(1, 2))], "r").label
    'r'
    """
    pts = [(Fraction(a), Fraction(e)) for a, e in curve if Fraction(a) > 1]
    if not pts:
        raise InvalidParameterError("a Rényi curve needs an order alpha > 1")
    top = ball_end(_rdp_epsilon(pts, ZCDP_DELTAS[-1]))
    step = _step(top, ZCDP_POINTS)
    out = []
    for j in range(math.ceil(top / step) + 1):
        delta = _upper_rational(_rdp_delta(pts, j * step))
        if delta < 1:
            out.append((j * step, delta))
    mech = Mechanism.from_region(dp_region(out, warn=False))
    mech._label = label
    return mech
