"""Forward delta(eps) of two subsampled Gaussian uses by mpmath quadrature (test helper).

Nothing here uses dpcompose_exact: one use of the Gaussian mechanism (sensitivity 1, scale
sigma) on a Poisson subsample of rate q, add/remove, its privacy loss in closed form, and the
second use's delta at eps minus the first use's loss integrated against the first use's
density (docs/theory.md, section 15).
"""

from __future__ import annotations

import mpmath as mp


def two_uses(q: str, eps: str, sigma: str, per: int = 1) -> mp.mpf:
    """Forward delta(eps) of two uses (sensitivity 1, add/remove), by quadrature.

    ``per``: pieces per standard deviation (one was 9e-4 off at q 0.00399, sigma 14.7,
    eps 0.0629; four agree with twelve within 4e-9 there).
    """
    with mp.workdps(30):
        q_, e, s = mp.mpf(q), mp.mpf(eps), mp.mpf(sigma)

        def tail(x):  # P(N(0, s^2) > x)
            return mp.erfc(x / (s * mp.sqrt(2))) / 2

        def g(t):  # the two tails cancel about 40 digits far out: 60 more digits
            with mp.workdps(90):
                w = mp.exp(t) - 1 + q_
                if w <= 0:
                    return +(1 - mp.exp(t))
                xb = mp.log(w / q_) * s**2 + mp.mpf(1) / 2
                return +(q_ * tail(xb - 1) - w * tail(xb))

        def loss(x):
            with mp.workdps(90):
                return +mp.log(1 - q_ + q_ * mp.exp((2 * x - 1) / (2 * s**2)))

        def density(x):
            return (1 - q_) * mp.npdf(x, 0, s) + q_ * mp.npdf(x, 1, s)

        xs = mp.log((mp.exp(e) - 1 + q_) / q_) * s**2 + mp.mpf(1) / 2
        # pieces of one standard deviation from -20 s to xs + 10 s (a few pieces left
        # the quadrature 1.4e-4 off at q 2.72e-6: the integrand turns over a short range;
        # within 1e-6 at q 1e-4, but 2.6e-5 off at q = 1e-5, sigma = 3, eps = 1: a sharp peak)
        n = per * (int((xs + 30 * s) / s) + 1)
        # and where g turns (its argument at ln(1 - q): the second use's loss floor)
        xk = mp.log((mp.exp(e) / (1 - q_) - 1 + q_) / q_) * s**2 + mp.mpf(1) / 2
        pts = sorted({-mp.inf, xs, xk, mp.inf, *(-20 * s + i * s / per for i in range(n + 1))})
        return mp.quad(lambda x: density(x) * g(e - loss(x)), pts)
