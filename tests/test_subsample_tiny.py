"""Tiny deltas of the subsampled Gaussian (engines.subsample_grid, tilted folds).

The loss grid's FFT has an absolute error bound; deltas far below it are computed on the
deep grid with an exponentially tilted composition (docs/theory.md, section 15), so that
the enclosure's relative width does not depend on the delta's size.  References are
computed here with mpmath at 40 digits: the closed form of one use (the crossing point of
the likelihood ratio and Gaussian tails), and for two uses a one-dimensional integral of
that closed form, split at its kink.
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest

import dpcompose_exact as dx


@pytest.fixture(autouse=True)
def _precision():
    with mpmath.workdps(40):
        yield


def _one_use(q: str, t: mpmath.mpf) -> mpmath.mpf:
    """``E_A[(1 - e^{t - L})_+]`` of one use (forward), sigma = 1, sensitivity 1."""
    q = mpmath.mpf(q)
    et = mpmath.e**t
    if et <= 1 - q:  # L > t everywhere
        return 1 - et
    x = mpmath.log((et - 1 + q) / q) + mpmath.mpf(1) / 2  # the base loss is x - 1/2

    def sf(y: mpmath.mpf) -> mpmath.mpf:
        return mpmath.erfc(y / mpmath.sqrt(2)) / 2

    return q * sf(x - 1) + (1 - q) * sf(x) - et * sf(x)


def _two_uses(q: str, eps: int) -> mpmath.mpf:
    """``delta(eps)`` of two uses: the first use's output integrated against the second."""
    qm = mpmath.mpf(q)

    def integrand(x: mpmath.mpf) -> mpmath.mpf:
        a = qm * mpmath.npdf(x, 1, 1) + (1 - qm) * mpmath.npdf(x, 0, 1)
        loss = mpmath.log(1 - qm + qm * mpmath.exp(x - mpmath.mpf(1) / 2))
        return a * _one_use(q, eps - loss)

    kink_loss = eps - mpmath.log(1 - qm)  # beyond it the second use's factor is 1 - e^t
    kink = mpmath.log((mpmath.exp(kink_loss) - 1 + qm) / qm) + mpmath.mpf(1) / 2
    pts = sorted({-mpmath.inf, -5, 0, 2, 4, 5, 6, 7, kink, 8, 9, 10, 12, 15, mpmath.inf})
    return mpmath.quad(integrand, pts, maxdegree=10)


def _check(value: dx.Value, truth: mpmath.mpf, rel: float = 1e-3) -> None:
    lo, hi = (mpmath.mpf(x) for x in value.interval(20))
    assert lo <= truth <= hi, (lo, truth, hi)
    assert (hi - lo) / truth < rel, ((hi - lo) / truth, lo, hi)


def test_one_use_delta_1_is_enclosed_with_a_small_relative_width():
    comp = dx.compose(dx.gaussian_noise("1").subsample("1/1000"), 1)
    truth = _one_use("0.001", mpmath.mpf(1))  # about 2.2e-16: far below the FFT's error
    assert 1e-16 < truth < 1e-15
    _check(comp.delta("1"), truth)


def test_a_delta_near_1e_minus_300_keeps_its_relative_width():
    comp = dx.compose(dx.gaussian_noise("1").subsample("1/1000"), 1)
    truth = _one_use("0.001", mpmath.mpf(30))
    assert mpmath.mpf("1e-300") < truth < mpmath.mpf("1e-290")
    _check(comp.delta("30"), truth)


def test_two_uses_against_the_integral():
    comp = dx.compose(dx.gaussian_noise("1").subsample("1/1000"), 2)
    truth = _two_uses("0.001", 2)
    assert 1e-21 < truth < 1e-19
    _check(comp.delta("2"), truth)


def test_epsilon_of_a_tiny_delta_is_bracketed_by_the_closed_form():
    comp = dx.compose(dx.gaussian_noise("1").subsample("1/1000"), 1)
    target = F(2231, 10**19)  # about delta(1)
    lo, hi = (mpmath.mpf(x) for x in comp.epsilon(target).interval(20))
    d = mpmath.mpf(target.numerator) / target.denominator
    # delta decreases in eps: the exact eps(target) lies in [lo, hi] iff these hold
    assert _one_use("0.001", lo) >= d >= _one_use("0.001", hi)
    assert hi - lo < 1e-3


def _one_use_both(sigma: str, q: str, t: str) -> mpmath.mpf:
    """``delta(t)`` of one use at any sigma: the larger of the two directions' closed forms.

    Forward ``(A, B)``: ``L > t`` iff ``x > x_f``; reverse ``(B, A)``: ``-L > t`` iff
    ``x < x_r`` (shift 1, ``beta(x) = (2x - 1) / (2 sigma^2)``).
    """
    sig, qm, tm = mpmath.mpf(sigma), mpmath.mpf(q), mpmath.mpf(t)
    et = mpmath.e**tm

    def sf(y: mpmath.mpf) -> mpmath.mpf:
        return mpmath.erfc(y / mpmath.sqrt(2)) / 2

    x_f = mpmath.log((et - 1 + qm) / qm) * sig**2 + mpmath.mpf(1) / 2
    fwd = qm * sf((x_f - 1) / sig) + (1 - qm) * sf(x_f / sig) - et * sf(x_f / sig)
    rev = mpmath.mpf(0)
    if mpmath.e**-tm > 1 - qm:
        x_r = mpmath.log((mpmath.e**-tm - 1 + qm) / qm) * sig**2 + mpmath.mpf(1) / 2
        rev = sf(-x_r / sig) - et * (qm * sf((1 - x_r) / sig) + (1 - qm) * sf(-x_r / sig))
    return max(fwd, rev)


@pytest.mark.parametrize(
    ("sigma", "q", "eps"), [("2", "1/1000", "0.001"), ("1", "1e-4", "1e-4"), ("1", "1e-5", "1e-4")]
)
def test_a_small_rate_at_a_small_eps_is_enclosed_to_1e_minus_3(sigma, q, eps):
    """A rate so small that one use's loss spans a few cells of 1e-4.

    The grid is refined to the loss's spread (docs/theory.md, section 15, "The grid
    width"); on the fixed grid of 1e-4 the first case was 1.1 % wide and the others had a
    lower end of 0.
    """
    comp = dx.compose(dx.gaussian_noise(sigma).subsample(q), 1)
    truth = _one_use_both(sigma, q, eps)
    if sigma == "2":  # the closed form of the issue, to 20 digits
        assert mpmath.almosteq(truth, mpmath.mpf("2.61132593837909866366e-5"), rel_eps=1e-19)
    _check(comp.delta(eps), truth)
