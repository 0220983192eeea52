"""Edges: an abort, a hang, a refusal, deltas printed above 1, counts capped where no cap is needed.

Every expected number is computed apart from the package: mpmath at 80 digits for the
Gaussian closed form, exact rationals for directed roundings, closed forms for Laplace.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import flint
import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcompose_exact as dx
from dpcompose_exact.cli.app import main
from dpcompose_exact.errors import InvalidParameterError, ResourceLimitError
from dpcompose_exact.numbers.value import Value
from dpcompose_exact.tools.calibrate import calibrate_noise

ROOT = Path(__file__).resolve().parents[1]


def cli(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The command in a child process: an abort (signal 6) fails the test, not the run."""
    return subprocess.run(
        [sys.executable, "-m", "dpcompose_exact", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def digits80():
    """mpmath at 80 digits for the references, restored after each test."""
    with mpmath.workdps(80):
        yield


def gaussian_delta(mu: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    """delta(eps) of G_mu: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


# -- 1. directed rounding of a value within a hair of 0 or 1 --------------------------------


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 4000),
    extra=st.one_of(st.integers(0, 3000), st.integers(1, 80).map(lambda e: 10**e)),
    digits=st.integers(1, 40),
    near_one=st.booleans(),
    down=st.booleans(),
    evaluated=st.booleans(),
)
def test_directed_rounding_near_0_and_1_at_any_precision(n, extra, digits, near_one, down,
                                                         evaluated):
    # a ball around 1 - 2^-n (or 2^-n) of radius 2^-(n + extra + 1) (extra up to 10^80:
    # the radius of an evaluation of 1 - e^{-10^800}), held as a certified enclosure or
    # returned by an evaluator (an exact value's path)
    x = 1 - Fraction(1, 2**n) if near_one else Fraction(1, 2**n)
    with flint.ctx.workprec(n + 64):
        radius = flint.arb(2) ** -(n + extra + 1)
        ball = flint.arb(x.numerator) / flint.arb(x.denominator) + flint.arb(0, radius)
    v = Value(lambda prec: ball) if evaluated else Value.from_ball(ball)
    start = time.process_time()
    text, _ = v.directed(digits, "down" if down else "up")
    assert time.process_time() - start < 20
    # the direction holds for every point of the ball, x included; the text is at most
    # the radius and two units of its last digit away (an outward end when undecided)
    got = Fraction(Decimal(text))
    assert (got <= x) if down else (got >= x)
    radius = Fraction(1 + Fraction(1, 2**20), 2 ** (n + min(extra, 5000) + 1))  # (30-bit mag)
    assert abs(got - x) <= radius + 2 * (x + radius) / 10 ** (digits - 1)
    mantissa = Decimal(text).as_tuple().digits
    assert len(mantissa) <= digits + 1


@pytest.mark.parametrize("exponent", [80, 10**6, 10**80])
@pytest.mark.parametrize("down", [False, True])
def test_directed_rounding_of_a_ball_at_one_with_a_radius_of_any_exponent(exponent, down):
    # before: a ball 1 +/- 10^-(10^80) (the delta of gaussian(1e-400) at eps 1) was read
    # with 10^80 digits: FLINT aborted the process ("Unable to allocate memory")
    with flint.ctx.workprec(64):
        ball = flint.arb(1) + flint.arb(0, flint.arb(10) ** (-exponent))
    v = Value(lambda prec: ball)
    start = time.process_time()
    text, _ = v.directed(30, "down" if down else "up")
    assert time.process_time() - start < 20
    outward = "0." + "9" * 30 if down else "1." + "0" * 28 + "1"  # the ball straddles 1
    assert text == outward
    assert v.probability().rounded(30, "up") == "1." + "0" * 29


@pytest.mark.parametrize("sigma", ["80", "300"])
def test_a_delta_below_ten_to_the_4300_prints_its_certified_digits(sigma):
    # before: the decimal exponent of the endpoint was read from str() of its denominator,
    # which Python refuses beyond 4300 digits (ValueError in numbers/format.py)
    mu = 1 / mpmath.mpf(sigma)
    with mpmath.workdps(60):
        tail = lambda x: mpmath.erfc(-x / mpmath.sqrt(2)) / 2  # noqa: E731
        exact = tail(-2 / mu + mu / 2) - mpmath.e**2 * tail(-2 / mu - mu / 2)
        lo, hi = dx.compose(dx.gaussian_noise(sigma), 1).delta("2").interval(20)
        assert mpmath.mpf(lo) <= exact <= mpmath.mpf(hi)
        assert exact < mpmath.mpf("1e-4300")


def test_the_interval_of_a_delta_near_ten_to_minus_21_million_prints_in_a_second():
    # before: minutes (the leading digit's exponent was found with Python's
    # Fraction(10) ** 21714736, quadratic in the exponent): delta of gaussian(5000) at eps 2
    mu, eps = 1 / mpmath.mpf(5000), mpmath.mpf(2)
    with mpmath.workdps(60):
        exact = mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)
        v = dx.compose(dx.gaussian_noise("5000"), 1).delta("2")
        start = time.process_time()
        lo, hi = v.interval(25)
        assert time.process_time() - start < 5
        assert mpmath.mpf(lo) <= exact <= mpmath.mpf(hi)
        assert mpmath.mpf("1e-21714737") < exact < mpmath.mpf("1e-21714735")
        assert (mpmath.mpf(hi) - mpmath.mpf(lo)) / exact < mpmath.mpf("1e-23")


@pytest.mark.parametrize("sigma", ["1e5", "1e8", "1e20"])
def test_one_subsampled_use_of_huge_noise_has_a_relatively_accurate_tiny_delta(sigma):
    # before: sigma 1e5 took 23 s (the enclosure's ends were made exact rationals with a
    # power 2^(1.6e10)) and sigma 1e8 never answered (Arb's erfc of an inexact ball far in
    # the tail has no relative accuracy; the two tails' difference stayed [+/- ...])
    with mpmath.workdps(90):
        c, q = mpmath.mpf(sigma), mpmath.mpf(1) / 2
        w = mpmath.e - 1 + q  # e^eps - 1 + q at eps 1; x where the base loss is log(w/q)
        x = mpmath.log(w / q) * c * c + mpmath.mpf(1) / 2
        tail = lambda z: mpmath.erfc(z / (c * mpmath.sqrt(2))) / 2  # noqa: E731
        exact = q * tail(x - 1) - w * tail(x)
        v = dx.compose(dx.gaussian_noise(sigma).subsample("1/2"), 1).delta("1")
        start = time.process_time()
        lo, hi = v.interval(8)
        assert time.process_time() - start < 10
        assert mpmath.mpf(lo) <= exact <= mpmath.mpf(hi)
        assert (mpmath.mpf(hi) - mpmath.mpf(lo)) / exact < mpmath.mpf("1e-6")


def test_headers_name_huge_and_tiny_scales_in_short_exact_form(capsys):
    # before: the header wrote sigma 1e-400 as 1/1000...0 with 400 zeros
    assert main(["delta", "--mech", "gaussian(1e-400)@1e-30:1", "--eps", "1"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert "gaussian(1e-400)@1e-30" in head and len(head) < 100


@pytest.mark.parametrize("rounding", ["up", "down", "nearest"])
def test_a_directed_delta_whose_evaluation_loses_5400_bits_is_decided(capsys, rounding):
    # before: --rounding up/down hung (the precision stopped at 4096 bits, below the ~5400
    # bits the closed form loses at e^(-5e11), and the undecided ball's candidate decimal
    # 1e-217147240947 was turned into a Fraction to test equality): now the ceiling covers
    # the bits lost, and no such Fraction is built
    with mpmath.workdps(120):  # (the two tails cancel and e^(-5e11) costs 12 digits: 80 do not)
        mu, eps = mpmath.mpf("1e-4"), mpmath.mpf(100)
        exact = gaussian_delta(mu, eps)  # 4.894635264795201065419733080281e-217147240947
        start = time.process_time()
        code, out, err = run(capsys, "delta", "--mech", "gaussian(1e4):1", "--eps", "100",
                             "--format", "csv", "--rounding", rounding, "--digits", "30")
        assert time.process_time() - start < 10
        assert code == 0, err
        got = mpmath.mpf(out.splitlines()[1].split(",")[2])
        unit = mpmath.mpf(10) ** (-217147240947 - 29)
        assert abs(got - exact) < unit
        assert got >= exact if rounding == "up" else got <= exact


@pytest.mark.parametrize("down", [False, True])
def test_directed_decimals_of_rationals_near_ten_to_minus_21_million(down):
    # the exact fallback too (a power of 10 is a decimal: the cheap reading cannot decide it)
    from dpcompose_exact.numbers.format import directed_rational, outward_decimal

    n = 21714736
    start = time.process_time()
    third = directed_rational(flint.fmpq(1, 3 * flint.fmpz(10) ** n), 25, down)
    assert third == "3." + "3" * 23 + ("3" if down else "4") + f"e-{n + 1}"
    power = directed_rational(flint.fmpq(1, flint.fmpz(10) ** n), 25, down)
    assert power == "1." + "0" * 24 + f"e-{n}"
    with mpmath.workdps(40):
        ref = mpmath.mpf(2) ** -72000001  # 1.026037794038250586386999130...e-21674160
        text = outward_decimal(flint.arb(2) ** -72000001, 25, down)
        unit = mpmath.mpf(10) ** (-21674160 - 24)
        assert (mpmath.mpf(text) <= ref) if down else (mpmath.mpf(text) >= ref)
        assert abs(mpmath.mpf(text) - ref) < unit
    assert time.process_time() - start < 10


@pytest.mark.parametrize("sigma", ["1e-400", "1e-22", "1e-21"])
@pytest.mark.parametrize("rounding", ["up", "down"])
def test_cli_answers_a_delta_within_a_hair_of_one(sigma, rounding):
    # before: signal 6 (FLINT exception) for sigma <= 1e-22 with --rounding up or down
    res = cli("delta", "--mech", f"gaussian({sigma}):1", "--eps", "1", "--rounding", rounding,
              "--format", "csv")
    assert res.returncode == 0, res.stderr
    delta = res.stdout.splitlines()[1].split(",")[2]
    # the exact delta is 1 - (about e^{-1/(8 sigma^2)}): rounded up 1, down 0.99...9
    assert delta == ("1." + "0" * 29 if rounding == "up" else "0." + "9" * 30)


# -- 2 and 3. calibration at target delta = 0 -----------------------------------------------


def test_gaussian_calibration_at_delta_zero_is_refused_in_one_line():
    # before: no answer in 300 s (every sigma fails, the search doubled sigma 40 times and
    # certified ever tinier deltas)
    start = time.time()
    res = cli("calibrate", "--noise", "gaussian", "-k", "10", "--target", "2,0", timeout=60)
    assert time.time() - start < 60
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1
    assert "Gaussian noise never reaches delta = 0" in res.stderr
    for solve in ({}, {"solve": "k", "scale": "1"}, {"solve": "q", "scale": "1", "k": 3}):
        options = {"k": 10, **solve}
        with pytest.raises(InvalidParameterError, match="Gaussian noise never reaches delta = 0"):
            calibrate_noise("2", "0", noise="gaussian", **options)


def test_laplace_calibration_answers_a_pure_dp_target(capsys):
    # before: "delta = 0 must lie in (0, 1)"; three uses of Laplace(b) lose at most 3/b,
    # so the smallest b on the grid 1/100 meeting (1, 0) is 3 exactly
    code, out, err = run(
        capsys, "calibrate", "--noise", "laplace", "-k", "3", "--target", "1,0", "--step", "1/100"
    )
    assert code == 0, err
    assert out.startswith("smallest b = 3 on the grid 1/100 Z (k = 3)")
    cal = calibrate_noise("1", "0", noise="laplace", k=3, step="1/100")
    assert cal.answer == 3 and cal.fails.candidate == Fraction(299, 100)
    assert cal.epsilons[0] == 1  # eps(0) = k / b exactly
    # the fails side: eps(0) = 3 / 2.99 > 1
    assert Fraction(cal.epsilons[1].interval(20)[0]) <= Fraction(300, 299)
    assert Fraction(cal.epsilons[1].interval(20)[1]) >= Fraction(300, 299)


def test_pure_epsilon_of_subsampled_laplace_is_its_largest_loss():
    b, q, k = Fraction(63, 100), Fraction(1, 10), 3
    c = dx.compose(dx.laplace_noise(b).subsample(q), k)
    lo, hi = (Fraction(x) for x in c.epsilon(0).interval(20))
    ref = k * mpmath.log(1 + mpmath.mpf(1) / 10 * (mpmath.exp(mpmath.mpf(100) / 63) - 1))
    assert lo <= Fraction(mpmath.nstr(ref, 40)) <= hi + Fraction(1, 10**35)
    assert hi - lo < Fraction(1, 10**18)
    with pytest.raises(InvalidParameterError, match="Gaussian noise never reaches delta = 0"):
        dx.compose(dx.gaussian_noise(1).subsample(q), k).epsilon(0)


# -- 4. a probability never prints above 1 ----------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "csv", "table", "latex"])
@pytest.mark.parametrize("digits", ["3", "10", "25", "40"])
@pytest.mark.parametrize("mech,eps", [("gaussian(1/1000):1", "100"), ("gaussian(1e-10):1", "1")])
def test_a_delta_rounded_up_never_leaves_the_unit_interval(capsys, fmt, digits, mech, eps):
    # before: delta_rounded 1.000000000000000000000001 (json, 25 digits), 1.000000001 (csv)
    code, out, err = run(capsys, "delta", "--mech", mech, "--eps", eps, "--format", fmt,
                         "--digits", digits)
    assert code == 0, err
    if fmt == "json":
        row = json.loads(out)["curve"][0]
        values = [row["delta_decimal"], row["delta_rounded"]]
    elif fmt == "csv":
        values = [out.splitlines()[1].split(",")[2]]
    else:
        words = [w.strip("$\\,{}") for w in out.replace("&", " ").split()]
        values = [w for w in words if w[:3] in ("1.0", "0.9")]
    assert values
    for text in values:
        assert Decimal(text) <= 1, (fmt, text)


def test_probability_values_clip_every_reading_to_the_unit_interval():
    c = dx.compose(dx.gaussian_noise("1/1000"), 1)
    v = c.delta("100")
    # the exact value lies within 1e-40 of 1 and below it (mpmath)
    assert 1 - gaussian_delta(mpmath.mpf(1000), mpmath.mpf(100)) < mpmath.mpf("1e-40")
    assert v.rounded(25) == "1." + "0" * 24
    assert v.rounded(25, "down") == "0." + "9" * 25
    assert v.upper() == 1.0 and Decimal(v.interval(30)[1]) <= 1
    with flint.ctx.workprec(200):
        over = Value.from_ball(1 - flint.arb("1e-40") + flint.arb(0, 1e-30))
    assert over.rounded(5) == "1.0001"  # a Value not known to be a probability
    assert over.probability().rounded(5) == "1.0000"
    assert over.probability().directed(5, "up") == ("1.0000", True)
    assert over.probability().interval(5)[1] == "1"
    with flint.ctx.workprec(200):
        neg = Value.from_ball(flint.arb("1e-40") + flint.arb(0, 1e-30))
    assert neg.probability().rounded(5, "down") == "0"


# -- 7. counts capped only where a route's cost grows with k ---------------------------------


def test_gaussian_answers_any_count_through_its_closed_form(capsys):
    # before: "k = 10^24 is over the limit of 10^12" for every route
    code, out, err = run(capsys, "delta", "--mech", "gaussian(1):1e24", "--eps", "1",
                         "--format", "csv", "--rounding", "down")
    assert code == 0, err
    # mu = 10^12: delta(1) = 1 - (about e^{-mu^2/8}), just below 1
    assert out.splitlines()[1].split(",")[2] == "0." + "9" * 30
    # 10^24 uses of sigma = 10^12 are G_1: delta(1) = 0.126936737507...
    code, out, err = run(capsys, "delta", "--mech", "gaussian(1e12):1e24", "--eps", "1",
                         "--format", "json", "--digits", "25")
    assert code == 0, err
    ref = gaussian_delta(mpmath.mpf(1), mpmath.mpf(1))
    got = json.loads(out)["curve"][0]["delta_decimal"]
    assert abs(mpmath.mpf(got) - ref) <= mpmath.mpf(10) ** -25
    c = dx.compose(dx.gaussian_noise(10**12), 10**24)
    assert abs(mpmath.mpf(c.delta("1").decimal(40)) - ref) <= mpmath.mpf(10) ** -40


@pytest.mark.parametrize(
    "mech,route",
    [
        ("laplace(1):1e13", "the certified loss grids"),
        ("0.5,0:1e13", "the exact, certified and bounds routes of finite pairs"),
        ("gaussian(1)@1/100:1e24", "the certified loss grids"),
        ("0.3,0@1/10:1e13", "exact subsampling"),
    ],
)
def test_a_count_past_a_growing_route_names_its_largest_k(capsys, mech, route):
    start = time.process_time()
    code, out, err = run(capsys, "delta", "--mech", mech, "--eps", "1")
    assert time.process_time() - start < 10
    assert code == 2 and err.count("\n") == 1
    assert f"over k = 1000000000000, the largest k of {route}" in err
    with pytest.raises(ResourceLimitError, match="the largest k of"):
        dx.compose(dx.laplace_noise(1), 10**13)


def test_the_certified_route_names_its_own_largest_k(capsys):
    # (0.5, 0)-DP: 2 loss values per use, 500001 at most: k <= 250000
    code, _, err = run(capsys, "delta", "--mech", "0.5,0:250001", "--eps", "1")
    assert code == 2 and "this route composes at most k = 250000 uses" in err
    code, _, err = run(capsys, "delta", "--mech", "0.5,0:250000", "--eps", "1", "--format", "csv")
    assert code == 0, err


# -- hostile strings ------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["0x10", "0b1", "0o7", "1+0x10", "log(0x2)"])
def test_python_literals_that_are_not_decimals_are_refused_by_the_parser(capsys, text):
    # before: a bare ValueError ("Invalid literal for Fraction: '0x10'"), outside the
    # package's errors; the CLI printed it as "input too large or malformed"
    from dpcompose_exact.integrations.dp_accounting import ExactAccountant

    literal = text[text.index("0"):].rstrip(")")
    with pytest.raises(InvalidParameterError, match=f"'{literal}' is not a decimal literal"):
        dx.compose(dx.gaussian_noise(1), 1).delta(text)
    code, out, err = run(capsys, "delta", "--mech", "gaussian(1):1", "--eps", text)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"cannot parse '{text}'" in err and "not a decimal literal" in err
    with pytest.raises(ValueError, match="not a decimal literal"):
        ExactAccountant().compose(dp_event_gaussian(text)).get_epsilon(1e-5)


def dp_event_gaussian(sigma: str):
    from dp_accounting import dp_event

    return dp_event.GaussianDpEvent(sigma)


def test_a_delta_far_below_the_least_double_is_bounded_by_it_at_once():
    # before: ExactAccountant.get_delta and Value.upper() of gaussian(1e6)'s delta at eps
    # 100 (about e^(-5e15): mpmath below) refined toward 60 certified bits for minutes
    # (the closed form loses ~79 million bits); its first ball already lies below 5e-324
    from dp_accounting import dp_event

    from dpcompose_exact.integrations.dp_accounting import ExactAccountant

    mu, eps = mpmath.mpf("1e-6"), mpmath.mpf(100)
    assert gaussian_delta(mu, eps) < mpmath.mpf("1e-2171472385737")  # the tails' bound
    start = time.process_time()
    acc = ExactAccountant().compose(dp_event.GaussianDpEvent(1e6))
    assert acc.get_delta(100.0) == 5e-324
    assert dx.compose(dx.gaussian_noise("1e6"), 1).delta("100").upper() == 5e-324
    assert time.process_time() - start < 5
    # a value above the least double keeps its sharp bound (mpmath: 7.6627...e-1396 is
    # below it, 2.0751220205e-4 above)
    assert ExactAccountant().compose(dp_event.GaussianDpEvent(3.0)).get_delta(1.0) == (
        pytest.approx(float(gaussian_delta(mpmath.mpf(1) / 3, mpmath.mpf(1))), rel=1e-15)
    )


def test_exact_accountant_answers_the_pure_epsilon_of_laplace_noise():
    # before: get_epsilon(0.0) was inf for every noise (epsilon_value(0) knew 1), so
    # dp_accounting's own calibrate_dp_mechanism found no bracket for a (1, 0) target,
    # which the CLI's calibrate answers (b = 3)
    from dp_accounting import dp_event, mechanism_calibration

    from dpcompose_exact.integrations.dp_accounting import ExactAccountant

    def laplace3(b):
        return dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(b), 3)

    assert ExactAccountant().compose(laplace3(3.0)).get_epsilon(0.0) == 1.0  # 3 / b
    sub = ExactAccountant().compose(
        dp_event.PoissonSampledDpEvent(0.1, dp_event.LaplaceDpEvent(1.0)), 3
    )
    ref = 3 * mpmath.log(1 + mpmath.mpf(1) / 10 * (mpmath.e - 1))  # 0.475695236221287...
    assert ref <= sub.get_epsilon(0.0) <= ref * (1 + mpmath.mpf("1e-15"))
    gauss = ExactAccountant().compose(dp_event.GaussianDpEvent(1.0))
    assert gauss.get_epsilon(0.0) == math.inf  # Gaussian noise has no pure eps
    b = mechanism_calibration.calibrate_dp_mechanism(
        ExactAccountant, laplace3, 1.0, 0.0, mechanism_calibration.LowerEndpointAndGuess(0.1, 1)
    )
    assert 3 <= b < 3.001


def _tiny_sigma_root(sigma: str, delta: str) -> mpmath.mpf:
    """mpmath's eps(delta) of G_mu, mu = 1/sigma, at the digits eps ~ mu^2 / 2 needs.

    Solved for ``y`` in ``eps = mu^2 / 2 + mu y`` (well conditioned however large mu is):
    ``delta(eps) = Phi(-y) - e^eps Phi(-mu - y)``.
    """
    digits = int(sigma.split("e-")[1])
    mpmath.mp.dps = 60 + 2 * digits  # the conftest restores it
    mu = 1 / mpmath.mpf(sigma)
    d = mpmath.mpf(delta)

    def gap(y):
        eps = mu**2 / 2 + mu * y
        return mpmath.ncdf(-y) - mpmath.exp(eps) * mpmath.ncdf(-mu - y) - d

    y = mpmath.findroot(gap, mpmath.findroot(lambda z: mpmath.ncdf(-z) - d, 4))
    return mu**2 / 2 + mu * y


@pytest.mark.parametrize("sigma", ["1e-9", "1e-18", "1e-100", "1e-400"])
def test_tiny_sigma_epsilon_is_answered_and_contains_the_closed_form(sigma):
    """eps(1e-5) of G_mu, mu = 1/sigma huge: answered within seconds, around mpmath's root.

    Before: sigma 1e-8..1e-12 hung (Arb's erfc of an inexact ball far in the tail is
    [0 +/- e^-(x^2)], which e^eps blew up to 10^(10^9) and ball_end turned into a vast
    rational), sigma 1e-18 was refused ("beyond 2.5e30") and 1e-100 crashed in man_exp;
    sigma below 1e-154 was refused ("beyond 5.35754e+300": the search ran in doubles).
    """
    t0 = time.process_time()
    lo, hi = dx.compose([(dx.gaussian_noise(sigma), 1)]).epsilon("1e-5").interval(12)
    assert time.process_time() - t0 < 10
    root = _tiny_sigma_root(sigma, "1e-5")
    assert mpmath.mpf(lo) <= root <= mpmath.mpf(hi)
    assert (mpmath.mpf(hi) - mpmath.mpf(lo)) / root < mpmath.mpf("1e-10")


def test_eps_of_sigma_1e_400_in_the_cli_and_the_accountant(capsys):
    """sigma = 1e-400: eps(1e-5) ~ 5e799 answered in the CLI and by ``ExactAccountant``.

    Before: "eps(1/100000) is beyond 5.35754e+300: not searched further" in both (the
    search for eps ran in doubles).
    """
    root = _tiny_sigma_root("1e-400", "1e-5")
    assert main(["epsilon", "--mech", "gaussian(1e-400):1", "--delta", "1e-5",
                 "--format", "csv", "--digits", "40"]) in (0, None)
    text = capsys.readouterr().out.splitlines()[1].split(",")[0]
    assert root <= mpmath.mpf(text) <= root * (1 + mpmath.mpf("1e-39"))  # rounded up
    np = pytest.importorskip("numpy")
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    from dpcompose_exact.integrations.dp_accounting import ExactAccountant

    acc = ExactAccountant().compose(dp_event.GaussianDpEvent(np.longdouble("1e-400")))
    lo, hi = acc.epsilon_value("1e-5").interval(40)
    assert mpmath.mpf(lo) <= root <= mpmath.mpf(hi)
    assert acc.get_epsilon(1e-5) == math.inf  # the double above 5e799


def test_sigma_1e_3000_is_answered_in_the_cli(capsys):
    # before: "input too large or malformed (ValueError: Exceeds the limit (4300 digits) for
    # integer string conversion" from the route's description, which printed mu^2 = 10^6000
    # with str().  eps(1e-5) = mu^2 / 2 + mu z (z ~ 4.26) is 5e5999 to 2999 digits: nearest
    # rounding (rounding up would certify that it is above 5e5999, bisecting 10^4 bits)
    assert main(["epsilon", "--mech", "gaussian(1e-3000):1", "--delta", "1e-5", "--format",
                 "csv", "--rounding", "nearest"]) in (0, None)
    assert capsys.readouterr().out.splitlines()[1].split(",")[0] == "5." + "0" * 29 + "e+5999"
    assert main(["delta", "--mech", "gaussian(1e-3000):1", "--eps", "1", "--format",
                 "json"]) in (0, None)
    assert json.loads(capsys.readouterr().out)["curve"][0]["delta_rounded"] == "1." + "0" * 29


def test_delta_equal_to_the_leak_next_to_noise_has_no_finite_eps():
    # three (1, 1/10) uses leak 1 - (9/10)^3 = 271/1000 exactly; at delta = 271/1000 no finite
    # eps exists (the noise adds a positive term).  Before: ResourceLimitError ("could not
    # certify an upper bound of eps(271/1000)") next to Gaussian and Laplace noise, the leak
    # compared with delta through a ball's lower end (below 271/1000)
    from dpcompose_exact.errors import BelowLeakError

    finite = (dx.Mechanism([("1", "1/10")]), 3)
    for noise in (dx.gaussian_noise("1"), dx.laplace_noise("1")):
        comp = dx.compose([(noise, 2), finite])
        with pytest.raises(BelowLeakError, match="at or below the probability 0.271"):
            comp.epsilon("271/1000")
    # just above the leak: a finite eps (mpmath: delta of the closed form sums at 11.2127)
    lo, hi = dx.compose([(dx.gaussian_noise("1"), 2), finite]).epsilon("0.27100001").interval(6)
    with mpmath.workdps(40):
        mu = mpmath.sqrt(2)
        p = mpmath.exp(1) / (1 + mpmath.exp(1)) * mpmath.mpf("0.9")  # canonical (1, 1/10)

        def delta(eps):
            total = 1 - mpmath.mpf("0.9") ** 3
            for j in range(4):  # j of the three uses at loss +1, the others at -1
                mass = mpmath.binomial(3, j) * p**j * (mpmath.mpf("0.9") - p) ** (3 - j)
                t = eps - (2 * j - 3)
                g = mpmath.ncdf(mu / 2 - t / mu) - mpmath.exp(t) * mpmath.ncdf(-mu / 2 - t / mu)
                total += mass * g
            return total

        assert delta(mpmath.mpf(lo)) > mpmath.mpf("0.27100001") >= delta(mpmath.mpf(hi))
