"""Each direction of a tiny delta(eps) on a grid fine for its bulk (engines.gridreverse).

The references are computed apart from the package: two uses of the Poisson-subsampled
Gaussian (sensitivity 1, add/remove) in mpmath, the first use's output integrated against
the one-use closed form of the second, in each direction: forward ``E_A[g(eps - L_1)]``
with ``g(t) = E_A[(1 - e^{t - L})_+]``, reverse ``E_B[r(eps + L_1)]`` with ``r(t) =
E_B[(1 - e^{t + L})_+]`` (each a difference of normal tails at the one crossing point).
"""

from __future__ import annotations

from fractions import Fraction

import flint
import mpmath as mp

import dpcompose_exact as dx
from dpcompose_exact.engines import gridreverse


def _two_uses(q: str, eps: str, sigma: str, reverse: bool) -> mp.mpf:
    """delta(eps) of two uses in one direction, by quadrature on pieces of one sigma."""
    with mp.workdps(30):
        q_, e, s = mp.mpf(q), mp.mpf(eps), mp.mpf(sigma)
        half = mp.mpf(1) / 2

        def loss(x):
            with mp.workdps(60):
                return +mp.log(1 - q_ + q_ * mp.exp((2 * x - 1) / (2 * s**2)))

        def forward(t):  # E_A[(1 - e^{t - L})_+]: the output above the crossing point
            with mp.workdps(60):
                w = mp.exp(t) - 1 + q_
                if w <= 0:
                    return +(1 - mp.exp(t))
                xb = mp.log(w / q_) * s**2 + half
                return +(q_ * mp.ncdf(-(xb - 1) / s) - w * mp.ncdf(-xb / s))

        def backward(t):  # E_B[(1 - e^{t + L})_+]: the output below the crossing point
            with mp.workdps(60):
                v = mp.exp(-t) - 1 + q_
                if v <= 0:
                    return mp.mpf(0)
                xg = mp.log(v / q_) * s**2 + half
                return +(mp.ncdf(xg / s) - mp.exp(t) * (
                    (1 - q_) * mp.ncdf(xg / s) + q_ * mp.ncdf((xg - 1) / s)
                ))

        if reverse:
            def f(x):
                return mp.npdf(x, 0, s) * backward(e + loss(x))
        else:
            def f(x):
                dens = (1 - q_) * mp.npdf(x, 0, s) + q_ * mp.npdf(x, 1, s)
                return dens * forward(e - loss(x))
        pts = sorted({-mp.inf, mp.inf, *(-30 * s + i * s for i in range(61))})
        return mp.quad(f, pts)


def _ball(x: Fraction) -> flint.arb:
    return flint.arb(x.numerator) / x.denominator  # a ball around the exact rational


def _inside(ref: mp.mpf, lo: Fraction, hi: Fraction) -> bool:
    with mp.workdps(30):
        return flint.arb(mp.nstr(ref, 25)).overlaps(_ball(lo).union(_ball(hi)))


def _sub(sigma: str, q: str):
    return dx.gaussian_noise(sigma).subsample(q).loss_pair().grid_noise()


def test_the_reverse_direction_of_two_uses_lies_around_the_quadrature():
    """Its large uses raised to the cut, tilted on a grid of its own: 5e-6 wide around it."""
    ref = _two_uses("1e-4", "1.5e-4", "1", reverse=True)  # ~8.79364e-7
    lo, hi = gridreverse.reverse_delta(_sub("1", "1e-4"), 2, Fraction("1.5e-4"), Fraction(1, 10**4))
    assert 0 < lo <= hi
    assert _inside(ref, lo, hi), (mp.nstr(ref, 12), float(lo), float(hi))
    assert hi - lo < Fraction(1, 10**4) * hi


def test_the_fold_reads_the_cells_at_the_width_they_were_built_on(monkeypatch):
    """Regression: when the rounds ran out asking a finer grid, the cells (built on the
    last width) were read at the finer one, every loss shrunk by its ratio: (0, 0) where
    the value is 8.79e-7.  One round forces it here."""
    monkeypatch.setattr(gridreverse, "REV_ROUNDS", 1)
    ref = _two_uses("1e-4", "1.5e-4", "1", reverse=True)  # ~8.79364e-7
    lo, hi = gridreverse.bulk_delta(
        _sub("1", "1e-4"), 2, Fraction("1.5e-4"), Fraction(1, 10**4), "rev"
    )
    assert 0 < lo <= hi
    assert _inside(ref, lo, hi), (mp.nstr(ref, 12), float(lo), float(hi))


def test_the_forward_bulk_of_two_uses_lies_around_the_quadrature():
    """A moderate deviation of two small losses (no large use carries it): the forward fold."""
    ref = _two_uses("1e-4", "3e-5", "14.3", reverse=False)  # ~7.43384e-9
    sub = _sub("14.3", "1e-4")
    lo, hi = gridreverse.bulk_delta(sub, 2, Fraction("3e-5"), Fraction(1, 10**4), "fwd")
    assert 0 < lo <= hi
    assert _inside(ref, lo, hi), (mp.nstr(ref, 12), float(lo), float(hi))
    assert hi - lo < Fraction(1, 10**3) * hi


def test_bulk_delta_is_not_for_one_use_or_other_noise():
    """One use has its closed form, Laplace noise no logs of its deep masses: None."""
    lap = dx.laplace_noise("1").subsample("1/1000").loss_pair().grid_noise()
    assert gridreverse.reverse_delta(_sub("1", "1e-4"), 1, Fraction(1), Fraction(1, 10**4)) is None
    assert gridreverse.bulk_delta(lap, 5, Fraction(1), Fraction(1, 10**4), "fwd") is None


def test_the_reverse_direction_is_exactly_zero_beyond_its_largest_loss():
    """Each reverse loss is at most -ln(1 - q) <= q/(1 - q): no grid there (was 12 s of grid).

    The sweep's q 1.84e-5, k 369, eps 0.0177: 369 q/(1 - q) ~ 0.0068 < eps.
    """
    sub = _sub("11.7", "1.84e-5")
    got = gridreverse.reverse_delta(sub, 369, Fraction("0.0177"), Fraction(1, 10**4))
    assert got == (0, 0)
    q = Fraction("1.84e-5")
    assert 369 * q / (1 - q) < Fraction("0.0177")  # the bound it rests on, exactly


def test_the_reverse_direction_falls_back_to_its_chernoff_bound():
    """q 1.27e-4, sigma 16.3, k 20000, delta(1.46): no grid fine enough fits; was None.

    The answer's reverse upper end stayed at the deep grid's 8.6e-370 for a forward value
    near 1.1e-5964.  The bound is at least the best Chernoff bound of the exact reverse
    loss (numpy, log-sums: its MGF is at most the upper measure's at every tilt).
    """
    import math

    import numpy as np

    k, eps = 20000, Fraction("1.46")
    got = gridreverse.bulk_delta(_sub("16.3", "1.27e-4"), k, eps, Fraction(1, 10**4), "rev")
    assert got is not None and got[0] == 0
    hi = got[1]
    log_hi = (hi.numerator.bit_length() - hi.denominator.bit_length()) * math.log(2)
    q, s = 1.27e-4, 16.3
    x = np.linspace(-60 * s, 60 * s, 400001)
    loss = np.log1p(q * np.expm1((2 * x - 1) / (2 * s * s)))
    dens = -(x**2) / (2 * s * s) - 0.5 * math.log(2 * math.pi * s * s) + math.log(x[1] - x[0])

    def chernoff(lam: float) -> float:
        a = dens - lam * loss
        c = float(a.max())
        return k * (c + math.log(float(np.exp(a - c).sum()))) - lam * float(eps)

    best = min(chernoff(2.0**j) for j in range(16, 26))
    assert best - 1 <= log_hi + 1  # ~ -1.9406e6 and -1.9403e6 (bits rounded: 1 each way)
    assert log_hi < -13000  # far below the forward value, which then carries the answer
