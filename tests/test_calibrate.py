"""Certified calibration (dpcompose_exact.tools.calibrate and ``dpcompose calibrate``)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

import dpcompose_exact as dx
from dpcompose_exact.cli.app import main
from dpcompose_exact.errors import InvalidParameterError
from dpcompose_exact.tools.calibrate import largest_k, largest_parameter

PAPER = dx.Mechanism([("0.3", "0"), ("0.15", "0.02")])


def _meets(comp: dx.Composition, eps: str, delta: str) -> bool:
    """Independent verdict: through eps(delta) instead of delta(eps)."""
    return comp.epsilon(delta) <= eps


def test_largest_k_certificate_agrees_with_theorem3():
    r = largest_k(PAPER, "1", "0.1")
    k = r.answer
    assert r.meets.candidate == k and r.fails.candidate == k + 1
    assert r.meets.meets and not r.fails.meets
    assert r.meets.delta <= Fraction(1, 10) < r.fails.delta
    # Theorem 3's closed form is a different route to the same region
    assert _meets(dx.theorem3_lattice(PAPER, k), "1", "0.1")
    assert not _meets(dx.theorem3_lattice(PAPER, k + 1), "1", "0.1")
    assert r.monotone_at_certificate and r.evaluations == len(r.probes)
    verdicts = [p.meets for p in r.probes]  # probes sorted by k: meets ... then fails
    assert verdicts == sorted(verdicts, reverse=True)


def test_largest_k_dict_is_json_with_an_enclosing_interval():
    r = largest_k([("0.5", "0")], "2", "0")  # pure DP: k * 0.5 <= 2 exactly at k = 4
    assert r.answer == 4
    d = json.loads(json.dumps(r.to_dict(12)))
    assert d["answer"] == "4" and d["certificate"]["fails"]["candidate"] == "5"
    lo, hi = (Fraction(x) for x in d["certificate"]["fails"]["delta_interval"])
    exact = dx.compose(dx.Mechanism.dp("0.5"), 5).delta("2")
    assert lo <= Fraction(exact.decimal(30)) <= hi
    assert d["certificate"]["meets"]["meets_target"] is True
    assert "largest k = 4" in r.summary()


def test_no_k_meets_the_target():
    with pytest.raises(InvalidParameterError, match="no k meets the target"):
        largest_k(dx.Mechanism.dp("0.3"), "0.1", "0")


def test_every_k_meets_the_target_up_to_the_limit():
    with pytest.raises(InvalidParameterError, match="every k up to 10 meets"):
        largest_k(dx.Mechanism.dp("0"), "1", "0", k_max=10)


def test_bad_targets_are_refused():
    with pytest.raises(InvalidParameterError, match=r"outside the valid range \[0, 1\)"):
        largest_k(PAPER, "1", "1.5")
    with pytest.raises(InvalidParameterError, match="must be >= 0"):
        largest_k(PAPER, "-1", "0.1")
    with pytest.raises(TypeError, match="float"):
        largest_k(PAPER, 1.0, "0.1")


def family(x: Fraction) -> dx.Mechanism:
    return dx.Mechanism([(x, 0), (x / 2, "0.02")])


def test_largest_parameter_certificate_by_an_independent_route():
    r = largest_parameter(family, 5, "1", "1e-3", "1/100")
    x = r.answer
    assert x.denominator <= 100 and r.fails.candidate == x + Fraction(1, 100)
    assert _meets(dx.compose(family(x), 5), "1", "1e-3")
    assert not _meets(dx.compose(family(x + Fraction(1, 100)), 5), "1", "1e-3")
    assert r.monotone_at_certificate and r.k == 5 and r.step == Fraction(1, 100)


def test_monotonicity_is_checked_at_the_certificate():
    def crossing(x: Fraction) -> dx.Mechanism:
        # larger x: smaller eps but larger delta; the regions cross
        return dx.Mechanism.dp(1 - 10 * x, x)

    r = largest_parameter(crossing, 1, "1", "0.055", "1/100")
    assert r.answer == Fraction(1, 20)
    assert not r.monotone_at_certificate


def test_largest_parameter_errors():
    with pytest.raises(InvalidParameterError, match="no grid point meets"):
        largest_parameter(family, 100, "0.01", "0", "1/10")
    with pytest.raises(InvalidParameterError, match="every grid point up to"):
        largest_parameter(lambda x: dx.Mechanism.dp("0"), 1, "1", "0", "1", max_doublings=3)
    with pytest.raises(TypeError, match="not a Mechanism"):
        largest_parameter(lambda x: [(x, 0)], 1, "1", "0", "1/10")
    with pytest.raises(InvalidParameterError, match="grid step"):
        largest_parameter(family, 1, "1", "0", "0")


# ---------------------------------------------------------------------------------------
# the command line


def test_cli_largest_k_text(capsys):
    assert main(["calibrate", "--dp", "0.3,0", "--dp", "0.15,0.02", "--target", "1,0.1"]) == 0
    out = capsys.readouterr().out
    k = int(out.split("largest k = ")[1].split(":")[0])
    assert _meets(dx.compose(PAPER, k), "1", "0.1")
    assert not _meets(dx.compose(PAPER, k + 1), "1", "0.1")
    assert "(meets)" in out and "(fails)" in out


def test_cli_parameter_json(capsys):
    argv = ["calibrate", "--dp", "x,0", "--dp", "x/2,0.02", "--param", "x", "--grid", "1/100"]
    assert main([*argv, "-k", "5", "--target", "1,1e-3", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    x = Fraction(data["answer"])
    assert data["quantity"] == "parameter" and data["k"] == 5 and data["grid"] == "1/100"
    assert _meets(dx.compose(family(x), 5), "1", "1e-3")
    assert data["certificate"]["monotone_at_certificate"] is True


GRID = ("--grid", "1/10", "-k", "2")


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--dp", "0.3,0", "--target", "0.1,0"], "no k meets the target"),
        (["--dp", "x,0", "--param", "x", "--target", "1,0"], "--param needs --grid"),
        (
            ["--dp", "0.3,0", "--param", "y", "--grid", "1/10", "-k", "2", "--target", "1,0"],
            "no --dp value uses y",
        ),
        (
            ["--dp", "log,0", "--param", "log", "--grid", "1", "-k", "1", "--target", "1,0"],
            "must be a name",
        ),
        (["--dp", "0.3,0", "--target", "1"], "malformed"),
        (["--dp", "0.3,0", "-k", "3", "--target", "1,0"], "go with --param"),
    ],
)
def test_cli_errors_are_one_line(capsys, argv, message):
    assert main(["calibrate", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


# ---------------------------------------------------------------------------------------
# the two examples of the command's documentation


@pytest.mark.slow
def test_example_largest_k_for_ten_and_1e_5():
    r = largest_k(PAPER, "10", "1e-5")
    assert _meets(dx.compose(PAPER, r.answer), "10", "1e-5")
    assert not _meets(dx.compose(PAPER, r.answer + 1), "10", "1e-5")


@pytest.mark.slow
def test_example_largest_parameter_for_five_and_1e_5():
    r = largest_parameter(family, 100, "5", "1e-5", "1/1000")
    step = Fraction(1, 1000)
    assert _meets(dx.compose(family(r.answer), 100), "5", "1e-5")
    assert not _meets(dx.compose(family(r.answer + step), 100), "5", "1e-5")


# ---------------------------------------------------------------------------------------
# noise mechanisms (DP-SGD)


def _gaussian_eps(mu, delta):
    """eps(delta) of G_mu by mpmath (independent of the package): a 60-digit root."""
    import mpmath

    with mpmath.workdps(60):

        def d(e):
            return mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)

        return mpmath.findroot(
            lambda e: d(e) - delta, (mpmath.mpf(0), mpmath.mpf(50)), solver="bisect"
        )


def test_smallest_gaussian_sigma_is_certified_against_the_closed_form():
    import mpmath

    r = dx.calibrate("2", "1e-5", k=10)
    assert r.quantity == "sigma" and r.step == Fraction(1, 1000)
    assert r.fails.candidate == r.answer - r.step and r.meets.meets and not r.fails.meets
    with mpmath.workdps(60):
        for sigma, above in ((r.answer, False), (r.answer - r.step, True)):
            mu = mpmath.sqrt(10) / (mpmath.mpf(sigma.numerator) / sigma.denominator)
            eps = _gaussian_eps(mu, mpmath.mpf("1e-5"))
            assert (eps > 2) is above
    # the certificate's eps enclosures say the same
    lo, hi = (Fraction(x) for x in r.epsilons[0].interval(20))
    assert hi <= 2 and Fraction(r.epsilons[1].interval(20)[0]) > 2


@pytest.mark.slow
def test_dp_sgd_sigma_certificate_is_bracketed_by_fine_pld():
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pldm

    r = dx.calibrate("2", "1e-5", k=1000, sampling_rate="0.01")
    assert r.quantity == "sigma" and r.meets.meets and not r.fails.meets
    assert Fraction(r.epsilons[0].interval(20)[1]) <= 2 < Fraction(r.epsilons[1].interval(20)[0])

    def eps(sigma, pessimistic):
        pld = pldm.from_gaussian_mechanism(
            float(sigma),
            sampling_prob=0.01,
            value_discretization_interval=2e-5,
            pessimistic_estimate=pessimistic,
            use_connect_dots=pessimistic,
        )
        return pld.self_compose(1000).get_epsilon_for_delta(1e-5)

    # the truth lies between dp_accounting's optimistic and pessimistic values: at the
    # answer it is at most 2, so the optimistic one is too; one grid point below it is
    # above 2, so the pessimistic one is too
    assert eps(r.answer, False) <= 2
    assert eps(r.fails.candidate, True) > 2


def test_noise_calibration_of_k_and_q_and_its_errors(capsys):
    k = dx.calibrate("3", "1e-5", solve="k", scale="2")  # Gaussian sigma = 2, no sampling
    # sqrt(k) / 2 = mu: the largest k whose G_mu meets (1, 1e-5), checked by mpmath
    import mpmath

    with mpmath.workdps(50):
        for n, above in ((k.answer, False), (k.answer + 1, True)):
            assert (_gaussian_eps(mpmath.sqrt(n) / 2, mpmath.mpf("1e-5")) > 3) is above
    q = dx.calibrate("1", "1e-5", solve="q", scale="2", k=10, step="1/20")
    assert q.quantity == "q" and q.meets.meets and not q.fails.meets
    assert q.fails.candidate == q.answer + Fraction(1, 20)
    with pytest.raises(InvalidParameterError, match="noise = 'cauchy': choose gaussian or laplace"):
        dx.calibrate("1", "1e-5", noise="cauchy", k=3)
    with pytest.raises(InvalidParameterError, match="solve k needs the noise scale"):
        dx.calibrate("1", "1e-5", solve="k")
    assert main(["calibrate", "--noise", "gaussian", "--target", "1,1e-5"]) == 2
    assert "--solve sigma needs -k" in capsys.readouterr().err
    assert (
        main(["calibrate", "--noise", "gaussian", "--dp", "1,0", "-k", "3", "--target", "1,1e-5"])
        == 2
    )
    assert "do not combine it with --dp" in capsys.readouterr().err


def test_answer_past_the_certified_limit_is_refused_before_the_costly_probes():
    """Regression: ``calibrate --dp 0.001,0 --target 10,1e-9`` probed k up to 2^17 (6.8 s
    CPU, 23 s on a loaded machine) before k = 2^18 was refused for its 524289 loss values;
    certified bounds at the first k past the limit now refuse it before those probes."""
    import time

    from dpcompose_exact.errors import ResourceLimitError

    m = dx.Mechanism([("0.001", "0")])
    t0 = time.process_time()
    with pytest.raises(
        ResourceLimitError,
        match=r"largest k is at least 250001: delta\(10\) at k = 250001 is at most .* "
        r"composes at most 500001 loss values, k <= 250000",
    ):
        largest_k(m, "10", "1e-9")
    assert time.process_time() - t0 < 4.5


def test_far_end_check_keeps_answers_under_the_limit(monkeypatch):
    """With the limit lowered to k <= 20: an answer past it is refused, one under it is
    the same answer as without the check (the far end, failing, may be its certificate)."""
    from dpcompose_exact.errors import ResourceLimitError
    from dpcompose_exact.tools import calibrate as cal

    m = dx.Mechanism([("0.3", "0"), ("0.15", "0.02")])
    free = [cal.largest_k(m, "1", d).answer for d in ("0.1", "0.06")]
    assert free[0] == 21 and free[1] < 20
    monkeypatch.setattr(cal, "CERTIFIED_TERM_LIMIT", 81)  # width 4k + 1: k <= 20
    with pytest.raises(ResourceLimitError, match=r"largest k is at least 21: .* k <= 20 "):
        cal.largest_k(m, "1", "0.1")
    r = cal.largest_k(m, "1", "0.06")
    assert r.answer == free[1] and r.meets.meets and not r.fails.meets


@pytest.mark.slow
def test_small_rate_sigma_certificate_is_decided_and_bracketed():
    """Regression: at q = 0.001, k = 10^4, target (1, 1e-6) the lower bound of the loss grid
    left delta(1) undecided ([6.5e-7, 1.4e-6]); the sweep of the lower buckets (section 15)
    decides it.  The meeting grid point is checked by dp_accounting's pessimistic PLD at a
    five times finer discretization (an upper bound of the truth: at most 1), the failing
    one by prv_accountant's lower error bound (above 1): independent references, each on
    the side it bounds."""
    pytest.importorskip("dp_accounting")
    prv = pytest.importorskip("prv_accountant")
    from dp_accounting.pld import privacy_loss_distribution as pldm

    r = dx.calibrate("1", "1e-6", k=10000, sampling_rate="0.001")
    assert r.quantity == "sigma" and r.meets.meets and not r.fails.meets
    assert Fraction(r.epsilons[0].interval(20)[1]) <= 1 < Fraction(r.epsilons[1].interval(20)[0])
    pess = pldm.from_gaussian_mechanism(
        float(r.answer), sampling_prob=0.001, value_discretization_interval=2e-5,
        pessimistic_estimate=True, use_connect_dots=True,
    ).self_compose(10000)
    assert pess.get_epsilon_for_delta(1e-6) <= 1
    acc = prv.Accountant(
        noise_multiplier=float(r.fails.candidate), sampling_probability=1e-3, delta=1e-6,
        eps_error=1e-3, max_compositions=10000,
    )
    eps_low, _, _ = acc.compute_epsilon(num_compositions=10000)
    assert eps_low > 1
