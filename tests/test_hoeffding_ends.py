"""Many uses of subsampled Laplace noise: lower ends by Hoeffding's bound (positive values).

The loss grid's lower ends lose about ``k h`` of loss to its rounding: at ``k = 10^10``
``eps(1e-5)`` of ``laplace(1)@1/100`` came back as ``[0, 601388]``.  The references are
computed apart from the package with mpmath: one use's divergence ``KL(A || B)`` by
quadrature of ``a log(a / b)``, the loss range from the closed form of the ratio.
"""

from __future__ import annotations

from fractions import Fraction

import flint
import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.engines.oneuse import HOEFFDING_USES, HoeffdingEnds, hoeffding_ends
from dpcompose_exact.numbers.value import Value


def mpf(x: str | Fraction) -> mpmath.mpf:
    """An mpmath number of an exact fraction."""
    f = Fraction(x)
    return mpmath.mpf(f.numerator) / f.denominator


def kl_one_use(b: str, q: str, reverse: bool = False) -> mpmath.mpf:
    """``KL(A || B)`` of one use, ``A = q Lap(1, b) + (1 - q) Lap(0, b)``, ``B = Lap(0, b)``.

    ``reverse``: ``KL(B || A)``.
    """
    bb, qq = mpf(b), mpf(q)

    def lap(x, mu):
        return mpmath.exp(-abs(x - mu) / bb) / (2 * bb)

    def f(x):
        a, b_ = qq * lap(x, 1) + (1 - qq) * lap(x, 0), lap(x, 0)
        return b_ * mpmath.log(b_ / a) if reverse else a * mpmath.log(a / b_)

    return mpmath.quad(f, [-mpmath.inf, 0, 1, mpmath.inf])


class _Grid:
    """A stand-in loss grid: eps enclosures ``[0, 10^9]``, delta ``[0, 1]`` (lower ends 0)."""

    def delta(self, eps):
        return Value.from_interval(flint.arb(0), flint.arb(1))

    def delta_decision(self, eps, target):
        return self.delta(eps)

    def epsilon(self, delta):
        return Value.from_interval(flint.arb(0), flint.arb(10**9))

    def describe(self):
        return "grid"


@pytest.mark.parametrize(("b", "q"), [("1", "1/100"), ("1/2", "1/10")])
def test_the_lower_end_of_eps_is_within_hoeffdings_slack_of_k_kl(b, q):
    k, d = 10**10, Fraction(1, 10**5)
    ends = HoeffdingEnds(_Grid, dx.laplace_noise(b), Fraction(q), k)
    lo, hi = ends.epsilon(d).ends()
    with mpmath.workdps(30):
        kkl = k * kl_one_use(b, q)
        e0, qq = 1 / mpf(b), mpf(q)
        r = mpmath.log((1 - qq + qq * mpmath.e**e0) / (1 - qq + qq * mpmath.e**-e0))
        slack = r * mpmath.sqrt(k * -mpmath.log1p(-2 * mpf(d)) / 2) + mpmath.log(2)
        low = mpmath.mpf(lo.str(30, radius=False))
        # a lower bound (at most k KL, the loss's centre) and within the slack (plus the
        # KL's fourth-order bound: u_max^2 relative, u_max = q (e^eps0 - 1)) of it
        assert 0 < low <= kkl
        assert low >= kkl - slack - kkl * (qq * mpmath.expm1(e0)) ** 2
        # the upper end: above both directions' centre, within Hoeffding's upper width
        # (plus the divergences' bounds from above) of it
        centre = max(kkl, k * kl_one_use(b, q, reverse=True))
        width = r * mpmath.sqrt(k * -mpmath.log(mpf(d)) / 2)
        high = mpmath.mpf(hi.str(30, radius=False))
        assert centre < high <= centre * (1 + 2 * qq * mpmath.expm1(e0)) + width


def test_the_lower_end_of_delta_is_positive_below_k_kl():
    k = 10**10
    ends = HoeffdingEnds(_Grid, dx.laplace_noise(1), Fraction(1, 100), k)
    with mpmath.workdps(30):
        kkl = k * kl_one_use("1", "1/100")
    # at eps = k KL - 4000 (about three Hoeffding widths below the centre) the lower end is
    # near 1: most of A^k's mass lies above eps + 1
    eps = Fraction(int(kkl) - 4000)
    lo, hi = ends.delta(eps).ends()
    assert mpmath.mpf("0.5") < mpmath.mpf(lo.str(20, radius=False)) <= 1 == hi
    # above k KL the bound says nothing: the grid's ends stay
    lo, _ = ends.delta(Fraction(int(kkl) + 1)).ends()
    assert lo == 0


def test_the_route_takes_hoeffdings_lower_ends_past_a_million_uses():
    pair = dx.laplace_noise(1).subsample("1/100").loss_pair()
    assert hoeffding_ends(pair, HOEFFDING_USES, None) is None  # the grid alone
    assert hoeffding_ends(pair, HOEFFDING_USES + 1, None) is not None
    assert hoeffding_ends(dx.gaussian_noise(1).subsample("1/100").loss_pair(), 10**9, None) is None
    comp = dx.compose(dx.laplace_noise(1).subsample("1/100"), 10**10)
    assert "Hoeffding" in comp.why


def test_where_the_grid_is_refused_hoeffdings_bounds_answer_alone():
    # laplace(1)@1/100 at k = 10^12: before, refused (a loss grid of 1.2e8 points)
    import time

    comp = dx.compose(dx.laplace_noise(1).subsample("1/100"), 10**12)
    start = time.process_time()
    lo, hi = (mpmath.mpf(x) for x in comp.epsilon("1e-5").interval(12))
    top = comp.epsilon("0")
    assert time.process_time() - start < 2
    with mpmath.workdps(30):
        kkl = 10**12 * kl_one_use("1", "1/100")
        assert 0 < lo <= kkl < hi < kkl * mpmath.mpf("1.02")
        largest = 10**12 * mpmath.log1p(mpmath.expm1(1) / 100)
        t_lo, t_hi = (mpmath.mpf(x) for x in top.interval(20))
        assert t_lo <= largest <= t_hi
    assert "refused for its size" in comp.result.describe()
