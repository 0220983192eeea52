"""A tiny delta(eps) at a small rate, split by the number of large uses (engines.gridsplit).

The reference is computed apart from the package: two uses of the Poisson-subsampled
Gaussian in mpmath, the first use's output integrated against the one-use closed form of
the second (``g(t) = E_A[(1 - e^{t - L})_+]``, a difference of normal tails at the crossing
point), at 30 digits.
"""

from __future__ import annotations

from fractions import Fraction

import flint
import mpmath as mp

import dpcompose_exact as dx
from dpcompose_exact.engines import gridsplit


def _two_uses(q: str, eps: str, sigma: str) -> mp.mpf:
    """Forward delta(eps) of two uses (sensitivity 1, add/remove), by quadrature."""
    with mp.workdps(30):
        q_, e, s = mp.mpf(q), mp.mpf(eps), mp.mpf(sigma)

        def tail(x):  # P(N(0, s^2) > x)
            return mp.erfc(x / (s * mp.sqrt(2))) / 2

        def g(t):
            w = mp.exp(t) - 1 + q_
            if w <= 0:
                return 1 - mp.exp(t)
            xb = mp.log(w / q_) * s**2 + mp.mpf(1) / 2
            return q_ * tail(xb - 1) - w * tail(xb)

        def loss(x):
            return mp.log(1 - q_ + q_ * mp.exp((2 * x - 1) / (2 * s**2)))

        def density(x):
            return (1 - q_) * mp.npdf(x, 0, s) + q_ * mp.npdf(x, 1, s)

        # the integrand has two bumps, each about half the value: the first use in the bulk
        # (the second one large) and the first use near xs, a peak about s / 20 wide; both
        # on intervals of at most s / 16 there (wider ones left 1.2e-4 relative errors)
        xs = mp.log((mp.exp(e) - 1 + q_) / q_) * s**2 + mp.mpf(1) / 2
        assert xs > 14 * s
        bulk = [-mp.inf, *[s * d for d in range(-12, 13)]]
        peak = [s * 12, *[xs + s * d / 16 for d in range(-32, 33)], mp.inf]
        f = lambda x: density(x) * g(e - loss(x))  # noqa: E731
        return mp.quad(f, bulk) + mp.quad(f, peak)


def test_a_tiny_delta_at_a_small_rate_has_a_positive_lower_end_around_the_reference():
    """The sweep's q 2.72e-6, sigma 1.93, two uses, delta(0.113) ~ 1.8465e-99: was [0, ...].

    The reverse direction is 0 here (its losses are at most -2 ln(1 - q) < eps), so the
    answer is the forward value.
    """
    ref = _two_uses("2.72e-6", "0.113", "1.93")
    v = dx.compose(dx.gaussian_noise("1.93").subsample("2.72e-6"), 2).delta("0.113")
    lo, hi = v.ends()
    assert lo > 0
    with mp.workdps(30):
        inside = flint.arb(mp.nstr(ref, 25)).overlaps(flint.arb(lo).union(hi))
    assert inside, (mp.nstr(ref, 12), lo, hi)
    assert (hi - lo) / lo < flint.arb("1e-3")  # was 1.0e-2 (the tail's cells were the deep grid's)


def test_split_delta_is_not_for_one_use_or_other_noise():
    """One use has its closed form, Laplace noise no logs of its deep masses: None."""
    gauss = dx.gaussian_noise("1").subsample("1/1000").loss_pair().grid_noise()
    lap = dx.laplace_noise("1").subsample("1/1000").loss_pair().grid_noise()
    assert gridsplit.split_delta(gauss, 1, Fraction(1), Fraction(1, 10000)) is None
    assert gridsplit.split_delta(lap, 5, Fraction(1), Fraction(1, 10000)) is None
