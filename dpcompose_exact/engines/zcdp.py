"""The curve a zCDP guarantee implies, bracketed: the Gaussian below, CKS above.

For ``(xi, rho)``-zCDP the truth is ``delta*(eps) = sup delta_M(eps)`` over every
``(xi, rho)``-zCDP mechanism ``M`` (docs/theory.md, section 22).  It is bracketed by

* below: the Gaussian ``G_mu`` with ``mu^2 = 2 rho``, which is ``rho``-zCDP (its Renyi
  divergence of order ``alpha`` is exactly ``rho alpha``), hence one of the mechanisms;
* above: the Canonne-Kamath-Steinke conversion
  (:func:`~dpcompose_exact.mechanisms.zcdp.cks_delta_ball`), valid for every such
  mechanism, at a chosen order, its Arb ball's upper end.

Both ends are certified; the width of the bracket is the looseness of the conversion
(the Gaussian is not known to be the worst case), which :func:`zcdp_delta` and
:func:`zcdp_epsilon` report as a two-sided :class:`~dpcompose_exact.numbers.value.Value`.
"""

from __future__ import annotations

from typing import Any

import flint

from ..errors import InvalidParameterError
from ..mechanisms.zcdp import (
    cks_alpha,
    cks_delta_ball,
    cks_eps_alpha,
    cks_epsilon_ball,
    zcdp_parameters,
)
from ..numbers import parse_rational
from ..numbers.convert import rational_ball
from ..numbers.value import Value
from .gaussian import gaussian_delta, gaussian_epsilon

__all__ = ["zcdp_delta", "zcdp_epsilon"]


def zcdp_delta(rho: Any, eps: Any, xi: Any = 0) -> Value:
    """``delta(eps)`` implied by ``(xi, rho)``-zCDP: ``[delta_G(eps), CKS(eps)]``.

    The lower end is the Gaussian's ``delta`` (``mu^2 = 2 rho``), the upper end the
    Canonne-Kamath-Steinke bound (capped at 1); both certified.

    >>> zcdp_delta("1/2", "2").interval(4)  # dp_accounting's RDP accountant: 0.054305
    ('0.02092', '0.0543')
    """
    r, x = zcdp_parameters(rho, xi)
    e = parse_rational(eps, "eps")
    if e < 0:
        raise InvalidParameterError(f"eps = {e} is negative; valid range: eps >= 0")
    if r == 0:  # xi-DP: 0 from eps = xi on, (e^xi - e^eps) / (1 + e^xi) below (exact)
        if e >= x:
            return Value.from_rational(0)
        with flint.ctx.workprec(128):
            ex = rational_ball(x).exp()
            return Value.from_ball((ex - rational_ball(e).exp()) / (1 + ex), nonnegative=True)
    lo = gaussian_delta(2 * r, e).ends()[0]
    hi = cks_delta_ball(r, x, e, cks_alpha(r, x, e))
    one = flint.arb(1)
    return Value.from_interval(lo, one if hi > 1 or hi.overlaps(one) else hi, nonnegative=True)


def zcdp_epsilon(rho: Any, delta: Any, xi: Any = 0) -> Value:
    """``eps(delta)`` implied by ``(xi, rho)``-zCDP: ``[eps_G(delta), CKS eps(delta)]``.

    >>> zcdp_epsilon("1/100", "1e-5").interval(4)  # dp_accounting's RDP: 0.545813
    ('0.4969', '0.5458')
    """
    r, x = zcdp_parameters(rho, xi)
    d = parse_rational(delta, "delta")
    if not 0 < d < 1:
        raise InvalidParameterError(f"delta = {d} is outside the valid range (0, 1)")
    if r == 0:
        return Value.from_rational(x)
    lo = gaussian_epsilon(2 * r, d).ends()[0]
    hi = cks_epsilon_ball(r, x, d, cks_eps_alpha(r, x, d))
    if hi < 0:
        hi = flint.arb(0)
    return Value.from_interval(lo, hi, nonnegative=True)
