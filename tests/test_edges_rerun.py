"""Edges, second pass: values of any size past CPython's 4300-digit limit of ``str(int)``.

Every expected number is computed apart from the package: mpmath at 8050 digits for the
Gaussian tail's leading term, exact integers for exponents.
"""

from __future__ import annotations

import sys
from fractions import Fraction

import flint
import mpmath
import pytest
from childcli import cli

import dpcompose_exact as dx
from dpcompose_exact.errors import BelowLeakError
from dpcompose_exact.numbers.format import _format_scaled, ball_to_decimal


def log10_gaussian_tail_delta(sigma_exp: int, eps: int) -> mpmath.mpf:
    """log10 of delta(eps) of G_mu, mu = 10^-sigma_exp, from its leading term.

    With a = eps/mu - mu/2, Phi(-a) - e^eps Phi(-a - mu) = phi(a) mu / a^2 (1 + O(mu/a)):
    the Mills series 1/y - 1/y^3 at y = a and y = a + mu, where e^eps phi(a + mu) = phi(a).
    """
    mu = mpmath.mpf(10) ** -sigma_exp
    a = eps / mu - mu / 2
    return (-(a * a) / 2 - mpmath.log(2 * mpmath.pi) / 2 + mpmath.log(mu / (a * a))) / mpmath.log(
        10
    )


def test_a_delta_whose_decimal_exponent_has_8000_digits_is_printed():
    # sigma = 1e4000: delta(1) ~ 10^(-2.17 * 10^7999); its exponent alone has 8000 digits,
    # which Python's str(int) refuses ("input too large or malformed" before the fix)
    out = cli("delta", "--mech", "gaussian(1e4000):1", "--eps", "1", "--format", "csv",
              "--digits", "6", "--rounding", "nearest")
    assert out.returncode == 0, out.stderr
    text = out.stdout.strip().splitlines()[-1].split(",")[2]
    mant, exp = text.split("e")
    with mpmath.workdps(8050):
        ref = log10_gaussian_tail_delta(4000, 1)
        ref_exp = int(mpmath.floor(ref))
        ref_mant = mpmath.power(10, ref - ref_exp)
        limit = sys.get_int_max_str_digits()
        try:
            sys.set_int_max_str_digits(0)
            assert exp == str(ref_exp)
        finally:
            sys.set_int_max_str_digits(limit)
        assert abs(mpmath.mpf(mant) - ref_mant) <= mpmath.mpf("6e-5")


def test_noise_of_any_size_is_named_and_composed_through_the_api():
    # describe(), to_dict() and repr() wrote the scale with str(Fraction): refused past
    # 4300 digits, so dx.compose(gaussian_noise("1e5000"), 1) raised ValueError
    noise = dx.gaussian_noise("1e5000")
    c = dx.compose(noise, 1)
    assert c.epsilon("1e-5") == 0  # delta(0) = 2 Phi(mu/2) - 1 < mu < 1e-5
    assert repr(noise).startswith("gaussian_noise('1" + "0" * 30)
    assert noise.subsample("1/2").to_dict()["scale"] == "1" + "0" * 5000


@pytest.mark.parametrize("power", [4400, -4400])
def test_ball_decimals_far_from_one_keep_their_exponent(power):
    with flint.ctx.workprec(64):
        ball = flint.arb(3) * flint.arb(10) ** power
    assert ball_to_decimal(ball, 5) == f"3.0000e{'+' if power > 0 else '-'}{abs(power)}"


def test_a_decimal_exponent_of_4400_digits_is_written_in_full():
    # the exponent of 3 * 10^(10^4400) has 4401 digits: str(int) refused it before the fix
    power = 10**4400
    text = _format_scaled(3, power)
    limit = sys.get_int_max_str_digits()
    try:
        sys.set_int_max_str_digits(0)
        assert text == f"3e+{power}"
        assert _format_scaled(-3, -power) == f"-3e-{power}"
    finally:
        sys.set_int_max_str_digits(limit)


def test_gdp_mu_of_noise_far_past_the_doubles_next_to_a_finite_part():
    # before: OverflowError (the scan range was m(m/2 + 4) in doubles, m = sqrt(3) 1e300);
    # mu* lies in [max(m, nu), sqrt(m^2 + nu^2)], here narrower than 1e-590 relative
    c = dx.compose([(dx.gaussian_noise("1e-300"), 3), (dx.Mechanism([("1/2", "0")]), 4)])
    lo, hi = c.gdp_mu().interval(12)
    m = mpmath.sqrt(3) * mpmath.mpf(10) ** 300
    assert mpmath.mpf(lo) <= m * (1 + mpmath.mpf("1e-11")) and mpmath.mpf(hi) >= m


def test_gdp_mu_of_a_tiny_scale_next_to_a_finite_part_answers_in_seconds():
    # before: over 60 CPU s (Arb's erfc of an inexact far-tail ball in the slope bound)
    import time

    start = time.process_time()
    c = dx.compose([(dx.gaussian_noise("1e20"), 3), (dx.Mechanism([("1/2", "0")]), 4)])
    lo, hi = c.gdp_mu().interval(8)
    assert time.process_time() - start < 20
    # G_m next to F = (1/2, 0) x4, m ~ 1.7e-20: mu* is F's own mu to 1e-30 (section 20);
    # F's mu solves delta_F(eps) <= delta_G_mu(eps) at F's one kink set: bracket it
    assert mpmath.mpf("1.0") < mpmath.mpf(lo) <= mpmath.mpf(hi) < mpmath.mpf("1.1")


def test_the_summary_of_noise_of_4000_digits_prints_its_mu():
    # before: "input too large" (a rational Value's closed form used str(Fraction))
    out = cli("summary", "--mech", "gaussian(1e4000):3")
    assert out.returncode == 0, out.stderr
    assert "1.732050808e-4000" in out.stdout


def test_a_loss_past_the_doubles_is_answered_by_its_saturated_closed_form():
    # first a ZeroDivisionError, then a one-line refusal (no loss grid holds the loss): at
    # s / sigma = 1e300 a use's loss is infinite but for e^(-1e600), so delta(1) of three
    # uses at rate 1/2 is 1 - (1/2)^3 = 7/8 to within far less than 1e-30
    out = cli("delta", "--mech", "gaussian(1e-300)@1/2:3", "--eps", "1", "--format", "csv",
              "--digits", "30", "--rounding", "nearest")
    assert out.returncode == 0, out.stderr
    row = out.stdout.strip().splitlines()[-1].split(",")
    assert abs(Fraction(row[1]) - Fraction(7, 8)) < Fraction(1, 10**29)


def test_eps_of_laplace_at_a_delta_below_the_doubles_is_bounded_by_its_largest_loss():
    # before: ZeroDivisionError (the guess's z used log(1 / float(delta)), float(1e-4000) = 0).
    # The sum of 1000 losses is 3000 with probability 2^-1000 > 1e-4000, and
    # delta(eps) >= 2^-1000 (1 - e^(eps - 3000)): eps(1e-4000) lies within 1e-3600 of 3000
    lo, hi = dx.compose(dx.laplace_noise("1/3"), 1000).epsilon("1e-4000").interval(10)
    assert Fraction(lo) <= 3000 and Fraction(hi) == 3000


def _mp(q: str) -> mpmath.mpf:
    f = Fraction(q)
    return mpmath.mpf(f.numerator) / f.denominator


def _largest(q: str, top: str = "1") -> mpmath.mpf:
    """The forward largest loss log(1 - q + q e^top) of one subsampled Laplace use."""
    return mpmath.log1p(_mp(q) * mpmath.expm1(_mp(top)))


def _encloses(value: dx.Value, truth: mpmath.mpf, rel: str = "1e-18") -> None:
    lo, hi = value.interval(20)
    assert mpmath.mpf(lo) <= truth <= mpmath.mpf(hi)
    assert mpmath.mpf(hi) - mpmath.mpf(lo) <= truth * mpmath.mpf(rel)


@pytest.mark.parametrize("q", ["1e-300", "1/2"])
def test_eps_at_delta_zero_of_one_subsampled_laplace_use_is_its_largest_loss(q):
    # before: refused ("delta = 0 must lie in (0, 1)"); the loss log(1 - q + q e) is reached
    # with positive probability, and it is the larger direction's
    with mpmath.workdps(60):
        comp = dx.compose(dx.laplace_noise(1).subsample(q), 1)
        _encloses(comp.epsilon(0), _largest(q))


def test_eps_at_delta_zero_of_k_uses_is_k_times_one_uses_largest_loss():
    with mpmath.workdps(60):
        three = dx.compose(dx.laplace_noise(1).subsample("1/2"), 3)
        _encloses(three.epsilon(0), 3 * _largest("1/2"), "1e-9")
        # a list: the sum of each kind's count times its largest loss
        mechs = [
            (dx.laplace_noise(1).subsample("1/2"), 1),
            (dx.laplace_noise(2).subsample("1/3"), 2),
        ]
        truth = _largest("1/2") + 2 * _largest("1/3", "1/2")
        _encloses(dx.compose(mechs).epsilon(0), truth, "1e-9")


def test_eps_at_delta_zero_of_subsampled_laplace_next_to_finite_pairs():
    # before: refused ("delta = 0 must lie in (0, 1)"); the largest losses of independent
    # parts add: the finite part's (0.3 per pure use) and the noise's
    pure = dx.Mechanism.dp("0.3")
    with mpmath.workdps(60):
        for count in (1, 2):
            comp = dx.compose([(dx.laplace_noise(1).subsample("1/2"), count), (pure, 2)])
            _encloses(comp.epsilon(0), count * _largest("1/2") + mpmath.mpf(6) / 10)
        # next to a subsampled finite pair (two directions): the forward ones add up,
        # randomized response with p = 1/2 over 2 buckets is log(3)-DP, at rate 1/3 log(5/3)
        rr = dx.randomized_response("1/2", 2).subsample("1/3")
        comp = dx.compose([(dx.laplace_noise(1).subsample("1/2"), 1), (rr, 2)])
        _encloses(comp.epsilon(0), _largest("1/2") + 2 * mpmath.log(mpmath.mpf(5) / 3))
        # many finite loss values (the shared loss grid): eps(0) from the exact part
        comp = dx.compose([(dx.laplace_noise(1).subsample("1/2"), 1), (pure, 100)])
        _encloses(comp.epsilon(0), _largest("1/2") + 30)
    # plain Laplace next to pure DP: exact, 1 + 2 * 3/10
    assert dx.compose([(dx.laplace_noise(1), 1), (pure, 2)]).epsilon(0).exact == "8/5"


def test_eps_at_delta_zero_is_refused_for_gaussian_noise_or_a_leak():
    pure, leaky = dx.Mechanism.dp("0.3"), dx.Mechanism([("0.3", "1/100")])
    with pytest.raises(dx.InvalidParameterError, match="unbounded.*eps\\(0\\) is infinite"):
        dx.compose([(dx.gaussian_noise(1), 1), (pure, 2)]).epsilon(0)
    with pytest.raises(BelowLeakError, match="delta = 0 is below the probability 0.0199"):
        dx.compose([(dx.laplace_noise(1).subsample("1/2"), 1), (leaky, 2)]).epsilon(0)
