"""The Gaussian pair ``G_mu`` in closed form, certified in Arb, and the certified inversion.

Any composition of Gaussian mechanisms is one Gaussian ``G_mu`` with ``mu^2 = sum count_i /
sigma_i^2`` (docs/theory.md, section 18, "Gaussian"), and

    ``delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)``

is evaluated in Arb (``erfc``) at increasing precision: :func:`gaussian_delta` and
:func:`gaussian_epsilon` return certified enclosures of the exact values.

``eps(delta)`` of any decreasing ``delta(eps)`` known by upper and lower bounds is enclosed
by :func:`certify_epsilon`: ``[e1, e2]`` with ``delta_lower(e1) > delta >= delta_upper(e2)``
(section 18); the Gaussian, the Laplace grid (:mod:`~dpcompose_exact.engines.pldgrid`), the
loss grid (:mod:`~dpcompose_exact.engines.gridepsilon`) and the mixed lists
(:mod:`~dpcompose_exact.engines.mixed`) all invert through it.

Both return :class:`~dpcompose_exact.numbers.value.Value` enclosures (``Value.from_interval``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers.convert import rational_ball
from ..numbers.value import Value

__all__ = [
    "certify_epsilon",
    "gaussian_delta",
    "gaussian_delta_ball",
    "gaussian_epsilon",
]

_PREC = 128


def _arb(q: Fraction | int) -> flint.arb:
    q = Fraction(q)
    return rational_ball(q)


def _hi(ball: flint.arb) -> Fraction:
    """The upper end of a ball as an exact rational."""
    man, exp = (int(v) for v in ball.upper().mid().man_exp())
    return Fraction(man) * Fraction(2) ** exp


def _lo(ball: flint.arb) -> Fraction:
    """The lower end of a ball as an exact rational."""
    man, exp = (int(v) for v in ball.lower().mid().man_exp())
    return Fraction(man) * Fraction(2) ** exp


# ---------------------------------------------------------------------------------------
# Gaussian: closed form


def gaussian_delta_ball(mu2: Fraction, eps: Fraction, bits: int) -> flint.arb:
    """A ball containing ``delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)`` of G_mu."""
    with flint.ctx.workprec(bits):
        mu = _arb(mu2).sqrt()
        x = _arb(eps)
        r2 = flint.arb(2).sqrt()

        def phi(t: flint.arb) -> flint.arb:
            return (-t / r2).erfc() / 2

        return phi(mu / 2 - x / mu) - x.exp() * phi(-mu / 2 - x / mu)


def _check_mu2(mu2: Fraction) -> Fraction:
    mu2 = Fraction(mu2)
    if mu2 <= 0:
        raise InvalidParameterError(f"mu^2 = {mu2} must be > 0")
    return mu2


def gaussian_delta(mu2: Fraction, eps: Fraction) -> Value:
    """Certified enclosure of ``delta(eps)`` of the Gaussian pair G_mu, ``mu^2 = mu2``.

    >>> v = gaussian_delta(Fraction(1), Fraction(1))
    >>> v.decimal(12)
    '0.126936737507'
    """
    mu2 = _check_mu2(mu2)
    eps = Fraction(eps)
    if eps < 0:
        raise InvalidParameterError(f"eps = {eps} is negative; valid range: eps >= 0")
    bits = _PREC
    while True:
        ball = gaussian_delta_ball(mu2, eps, bits)
        if ball.rel_accuracy_bits() >= 80 or bits >= 1 << 13:
            break
        bits *= 2
    with flint.ctx.workprec(bits):
        lo = ball.lower()
        lo = lo if lo > 0 else flint.arb(0)
        return Value.from_interval(lo, ball.upper())


def _float_root(f: Any, lo: float, hi: float, iters: int = 200) -> float:
    """Bisection for a decreasing ``f`` with ``f(lo) > 0 >= f(hi)``."""
    for _ in range(iters):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi


def certify_epsilon(
    delta_hi: Any, delta_lo: Any, target: Fraction, guess: float, steps: int = 40,
    first_step: float = 2.0**-44, guess_lo: float | None = None,
    tol: Fraction | None = None, lo_from_hi: bool = False,
) -> Value:
    """Enclose ``eps(target)`` for a decreasing delta known by upper/lower bounds.

    ``delta_hi(e)`` / ``delta_lo(e)`` return rationals; the answer ``[e1, e2]`` has
    ``delta_lo(e1) > target`` (so the exact eps is above ``e1``) and ``delta_hi(e2) <=
    target`` (so it is at most ``e2``).  Each end is found by moving away from the float
    guess (``guess_lo``, when given, for ``e1``) by ``first_step`` (relative), 4 times
    more each time, until it holds, then bisected ``steps`` times towards the guess (fewer
    once the bracket is at most ``tol``, when given).  ``lo_from_hi``: ``e1`` is sought
    from ``e2`` (when ``guess_lo`` is None): the two ends are close, and ``e2`` is nearer to
    ``e1`` than a rough guess.  The guesses and steps only place the evaluations: any give a
    certified enclosure.
    """
    step = Fraction(first_step) * Fraction(max(abs(guess), 1.0))

    def outward(ok: Any, sign: int) -> Fraction:
        """The end on side ``sign`` of the guess: ``ok`` holds there, fails just inside."""
        g = Fraction(guess if sign > 0 or guess_lo is None else guess_lo)
        good = bad = None
        if ok(max(Fraction(0), g)):
            good = max(Fraction(0), g)
        else:
            bad = g
        d = step
        for _ in range(400):
            if good is not None and bad is not None:
                break
            if good is None:  # move outwards until ok
                cand = max(Fraction(0), g + sign * d)
                if ok(cand):
                    good = cand
                else:
                    bad = cand
                    if cand == 0:
                        break
            else:  # move inwards until not ok
                cand = max(Fraction(0), g - sign * d)
                if not ok(cand):
                    bad = cand
                else:
                    good = cand
                    if cand == 0:
                        break
            d *= 4
        if good is None:
            if sign < 0:
                return Fraction(0)
            raise ResourceLimitError(f"could not certify an upper bound of eps({target})")
        if bad is None:
            return good
        for _ in range(steps):
            if tol is not None and abs(good - bad) <= tol:
                break
            mid = Fraction(float((good + bad) / 2))  # keep the numbers short
            if mid in (good, bad):
                break
            if ok(mid):
                good = mid
            else:
                bad = mid
        return good

    e2 = outward(lambda e: delta_hi(e) <= target, +1)
    if lo_from_hi and guess_lo is None:
        guess_lo = float(e2)
    e1 = outward(lambda e: e == 0 or delta_lo(e) > target, -1)
    return Value.from_interval(_arb(e1), _arb(e2))


def gaussian_epsilon(mu2: Fraction, delta: Fraction) -> Value:
    """Certified enclosure of ``eps(delta)`` of G_mu (0 when ``delta(0) <= delta``).

    >>> v = gaussian_epsilon(Fraction(1), Fraction(1, 100000))
    >>> v.decimal(10)
    '4.377178096'
    """
    mu2 = _check_mu2(mu2)
    delta = Fraction(delta)
    if not 0 < delta < 1:
        raise InvalidParameterError(f"delta = {delta} must lie in (0, 1)")

    def hi(e: Fraction) -> Fraction:
        return _hi(gaussian_delta_ball(mu2, e, 160))

    def lo(e: Fraction) -> Fraction:
        return _lo(gaussian_delta_ball(mu2, e, 160))

    if hi(Fraction(0)) <= delta:
        return Value.from_rational(0)

    def f(x: float) -> float:
        return float(gaussian_delta_ball(mu2, Fraction(x), 80).mid()) - float(delta)

    top = 1.0
    while f(top) > 0:
        top *= 2
    guess = _float_root(f, 0.0, top)
    return certify_epsilon(hi, lo, delta, guess)
