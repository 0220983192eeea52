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


def one_large_use(q: str, eps: str, sigma: str, k: int, n: int = 200_001) -> mp.mpf:
    """Forward delta(eps) of ``k`` uses where one large use carries it: a saddle-point value.

    Not a certified value: ``delta ~ k E[G(C)]``, ``G(c)`` the one-use tail's closed form
    (the second use's delta at ``eps - c`` above, in mpmath) and ``C`` the other ``k - 1``
    uses' bulk (losses below ``eps / 2``), tilted at ``lam = (ln G)'(m)`` with ``m`` the
    tilted sum's mean: ``k M(lam)^{k - 1} G(m) e^{-lam m} (1 + v (ln G)''(m) / 2)``, ``M``,
    ``m``, ``v`` the bulk's moments by Simpson's rule on ``n`` points in doubles (log-sums).
    The terms left out (the tilted sum's higher cumulants, the parts with two large uses)
    are far below ``1e-4`` of it where one large use carries the value: it agreed with an
    mpmath quadrature of the same moments within 1e-8 and lay inside the package's
    enclosures 1e-4 wide at k from 20 to 47560 (q 1.84e-5 to 1.27e-4).
    """
    import math

    import numpy as np

    qf, ef, sf = float(mp.mpf(q)), float(mp.mpf(eps)), float(mp.mpf(sigma))
    with mp.workdps(30):
        q_, e, s = mp.mpf(q), mp.mpf(eps), mp.mpf(sigma)

        def tail(x):  # P(N(0, s^2) > x)
            return mp.erfc(x / (s * mp.sqrt(2))) / 2

        def log_g(c):  # ln G(c): the large use reaching eps - c (c < eps: w > q)
            w = mp.exp(e - c) - 1 + q_
            xb = mp.log(w / q_) * s**2 + mp.mpf(1) / 2
            return mp.log(q_ * tail(xb - 1) - w * tail(xb))

        top = sf * sf * math.log(math.expm1(ef / 2) / qf + 1) + 0.5  # the bulk's top output
        x = np.linspace(-30 * sf, top, n)
        loss = np.log1p(qf * np.expm1((2 * x - 1) / (2 * sf * sf)))
        dens = np.logaddexp(
            math.log1p(-qf) - x**2 / (2 * sf * sf), math.log(qf) - (x - 1) ** 2 / (2 * sf * sf)
        )
        simpson = np.full(n, 2.0)
        simpson[1::2], simpson[0], simpson[-1] = 4.0, 1.0, 1.0
        dens += np.log(simpson * (x[1] - x[0]) / 3 / math.sqrt(2 * math.pi * sf * sf))
        m = mp.mpf(0)
        for _ in range(3):
            lam = float(mp.diff(log_g, m))
            a = dens + lam * loss
            peak = float(a.max())
            w = np.exp(a - peak)
            m0 = float(w.sum())
            k1 = float((w * loss).sum()) / m0
            k2 = float((w * (loss - k1) ** 2).sum()) / m0
            log_m = peak + math.log(m0)
            m = mp.mpf((k - 1) * k1)
        v = (k - 1) * k2
        curv = mp.diff(log_g, m, 2)
        return k * mp.exp((k - 1) * log_m + log_g(m) - lam * m) * (1 + v * curv / 2)
