"""Tiny deltas of a few uses of subsampled Gaussian noise, below the doubles' range.

The reference is computed apart from the package: two uses in mpmath, the outer use
integrated numerically (``mp.quad`` on 120 uniform pieces around the integrand's peak and
the kink of the inner part) against the inner use's closed form (the one-use hockey-stick
divergence at ``eps - L(x)``: a difference of normal tails at the crossing point of the
monotone likelihood ratio), both directions.
"""

from __future__ import annotations

from fractions import Fraction

import flint
import mpmath as mp
import pytest

import dpcompose_exact as dx


def _two_uses(q: Fraction, eps: Fraction, sigma: Fraction, dps: int = 30) -> mp.mpf:
    """delta(eps) of two uses of ``P = (1-q) N(0, s^2) + q N(1, s^2)`` against ``Q = N(0, s^2)``."""
    with mp.workdps(dps):
        q_, e, s = (mp.mpf(x.numerator) / x.denominator for x in (q, eps, sigma))

        def tail(z):  # P(N(0, 1) > z)
            return mp.erfc(z / mp.sqrt(2)) / 2

        def loss(x):
            return mp.log(1 - q_ + q_ * mp.exp((2 * x - 1) / (2 * s**2)))

        def fwd_one(t):  # E_A[(1 - e^{t - L})_+]
            if mp.exp(t) <= 1 - q_:
                return 1 - mp.exp(t)
            xt = mp.log((mp.exp(t) - 1 + q_) / q_) * s**2 + mp.mpf(1) / 2
            return q_ * tail((xt - 1) / s) + (1 - q_) * tail(xt / s) - mp.exp(t) * tail(xt / s)

        def rev_one(t):  # E_B[(1 - e^{t + L})_+]
            v = mp.exp(-t) - 1 + q_
            if v <= 0:
                return mp.mpf(0)
            xg = mp.log(v / q_) * s**2 + mp.mpf(1) / 2
            return tail(-xg / s) - mp.exp(t) * (
                (1 - q_) * tail(-xg / s) + q_ * tail((1 - xg) / s)
            )

        def fwd(x):
            return (q_ * mp.npdf(x, 1, s) + (1 - q_) * mp.npdf(x, 0, s)) * fwd_one(e - loss(x))

        def rev(x):
            return mp.npdf(x, 0, s) * rev_one(e + loss(x))

        kink = mp.log((mp.exp(e) / (1 - q_) - 1 + q_) / q_) * s**2 + mp.mpf(1) / 2
        out = []
        for f in (fwd, rev):
            xs = [mp.mpf(i) * s for i in range(-60, 300)]
            vals = [f(x) for x in xs]
            if max(vals) <= 0:
                out.append(mp.mpf(0))
                continue
            peak = xs[vals.index(max(vals))]
            pts = sorted([peak - 30 * s + mp.mpf(60) * s * i / 120 for i in range(121)] + [kink])
            out.append(mp.quad(f, [-mp.inf, *pts, mp.inf]))
        return max(out)


@pytest.mark.parametrize(
    ("q", "eps", "sigma", "grid", "width"),
    [
        # a value near 3e-822: the deep grid's old tail (1e-306) and leak gave [0, 2.1e-327]
        ("1/10000", "25", "2", "1/1000", Fraction(15, 100)),
        ("1/1000", "12", "1", "1/4000", Fraction(1, 1000)),
    ],
)
def test_two_uses_below_the_doubles_inside_the_reference(q, eps, sigma, grid, width):
    ref = _two_uses(Fraction(q), Fraction(eps), Fraction(sigma))
    v = dx.compose(dx.gaussian_noise(sigma).subsample(q), 2, grid=grid).delta(eps).probability()
    lo, hi = v.ends()
    assert lo > 0, f"lower end 0 for a positive value {mp.nstr(ref, 6)}"
    inside = flint.arb(mp.nstr(ref, 25)).overlaps(flint.arb(lo).union(hi))
    assert inside, f"{mp.nstr(ref, 12)} outside [{lo}, {hi}]"
    rel = (hi - lo) / lo
    assert rel.upper() < flint.arb(width.numerator) / width.denominator, f"relative width {rel}"


def test_deep_masses_carry_logs_below_the_doubles():
    from dpcompose_exact.engines.gridcells import cell_masses

    sub = dx.compose(dx.gaussian_noise("1").subsample("1/1000"), 2).result.grid.kinds[0][0]
    m = cell_masses(sub, Fraction(1, 1000), deep=True, tail_log=-1100.0)
    assert m["fwd_up"].logs is not None and m["fwd_up"].logs.min() < -1000  # below 1e-434
    assert m["fwd_lo"].logs is not None and m["rev_up"].leak == 0
    # the tilted tail bound at lam = 0 is the untilted tail, the leak's own mass
    t0 = m["fwd_up"].tail(0.0)
    leak = m["fwd_up"].leak
    with flint.ctx.workprec(256):
        ratio = t0 / (flint.arb(leak.numerator) / leak.denominator)
        assert 0 < t0 and abs(ratio - 1) < flint.arb("1e-10"), f"{t0} against {float(ratio)}"


@pytest.mark.parametrize("lam", [0.5, 3.0, 40.0])
def test_tilted_tail_bound_above_the_integral(lam):
    """``E_A[e^{lam L}; L > top]`` (mpmath quadrature) lies below the closed-form bound."""
    from dpcompose_exact.engines.gridcells import _gauss_tail

    q, sigma, top = Fraction(1, 100), Fraction(3, 2), Fraction(4)
    sub = dx.compose(dx.gaussian_noise("3/2").subsample("1/100"), 2).result.grid.kinds[0][0]
    bound = _gauss_tail(sub, top)(lam)
    with mp.workdps(30):
        q_, s = mp.mpf(1) / 100, mp.mpf(3) / 2
        x_top = mp.log((mp.exp(4) - 1 + q_) / q_) * s**2 + mp.mpf(1) / 2

        def f(x):
            loss = mp.log(1 - q_ + q_ * mp.exp((2 * x - 1) / (2 * s**2)))
            return (q_ * mp.npdf(x, 1, s) + (1 - q_) * mp.npdf(x, 0, s)) * mp.exp(lam * loss)

        exact = mp.quad(f, [x_top, x_top + 5, x_top + 20, x_top + 80, mp.inf])
    assert float(top) == 4 and q == Fraction(1, 100) and sigma == Fraction(3, 2)
    assert exact > 0
    assert flint.arb(mp.nstr(exact, 20)) < bound, f"{mp.nstr(exact, 10)} above {bound}"
    # and not loose: within the factor e^{lam (top - b - ln q)} that replaces L by
    # beta + top - b (b = beta at the top; L - beta -> ln q far out), and 1 %
    with mp.workdps(30):
        b = mp.log((mp.exp(4) - 1 + q_) / q_)
        loose = mp.exp(lam * (mp.log(q_ + (1 - q_) * mp.exp(-b)) - mp.log(q_))) * 1.01
    assert bound < flint.arb(mp.nstr(exact * loose, 20))
