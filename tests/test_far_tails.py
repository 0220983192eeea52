"""Far tails, saturated losses and extreme scales of noise, through the API and the CLI.

Every reference is computed apart from the package with mpmath: lower bounds from one
event of the sampling (all ``k`` uses sampled), closed forms of saturated losses
(``1 - (1 - q)^k``), and the Laplace loss's own law (Gamma integrals).
"""

from __future__ import annotations

import time
from fractions import Fraction

import mpmath
import pytest
from childcli import cli

import dpcompose_exact as dx
from dpcompose_exact.numbers.format import short_enclosure


def log_all_sampled_lower(q: str, k: int, eps: mpmath.mpf) -> mpmath.mpf:
    """log of a lower bound on ``delta(eps)`` of ``k`` uses of ``gaussian(1)@q``.

    With probability ``q^k`` every use is sampled; a use's loss is then at least
    ``log q + beta``, ``beta ~ N(1/2, 1)``, so the sum exceeds ``eps + 1`` with
    probability ``Phi(-(eps + 1 - k log q - k/2) / sqrt k)``, where
    ``1 - e^(eps - L) >= 1 - e^-1``.
    """
    x = (eps + 1 - k * mpmath.log(mpmath.mpf(q)) - mpmath.mpf(k) / 2) / mpmath.sqrt(k)
    tail = mpmath.erfc(x / mpmath.sqrt(2)) / 2
    return k * mpmath.log(mpmath.mpf(q)) + mpmath.log(tail) + mpmath.log(1 - mpmath.e**-1)


def test_delta_far_in_the_tail_of_a_subsampled_gaussian_is_a_tiny_enclosure_at_once():
    # before: 32 s, then OverflowError (the loss grid at eps = 1e6)
    mpmath.mp.dps = 30
    start = time.process_time()
    lo, hi = dx.compose(dx.gaussian_noise(1).subsample("1e-6"), 1000).delta("1e6").interval(12)
    assert time.process_time() - start < 2
    ref = log_all_sampled_lower("1e-6", 1000, mpmath.mpf(10) ** 6)
    log_lo, log_hi = mpmath.log(mpmath.mpf(lo)), mpmath.log(mpmath.mpf(hi))
    assert ref <= log_lo <= log_hi < 0
    assert log_hi / log_lo > 1 - mpmath.mpf("1e-3")  # the same leading exponent


def test_the_far_tail_delta_through_the_command_line():
    out = cli("delta", "--mech", "gaussian(1)@1e-6:1000", "--eps", "1e6", "--format", "csv")
    assert out.returncode == 0, out.stderr
    row = out.stdout.strip().splitlines()[-1].split(",")
    assert row[1].endswith("e-222974603") and row[2].startswith("1.")  # lower end positive
    assert "e-2229" in row[2]


def test_eps_of_a_subsampled_gaussian_at_a_delta_below_the_doubles_is_an_enclosure():
    # before: "could not certify"
    mpmath.mp.dps = 30
    start = time.process_time()
    lo, hi = dx.compose(dx.gaussian_noise(1).subsample("1e-6"), 100).epsilon("1e-4000").interval(8)
    assert time.process_time() - start < 2
    target = -4000 * mpmath.log(10)
    # delta(e) >= the all-sampled bound, which is above 1e-4000 below its root: eps is above
    root = mpmath.findroot(lambda e: log_all_sampled_lower("1e-6", 100, e) - target, 300)
    assert 0 < mpmath.mpf(lo) <= mpmath.mpf(hi) < 2 * mpmath.mpf(lo)
    assert mpmath.mpf(hi) >= root


@pytest.mark.parametrize(("q", "k", "eps"), [("1/2", 2, "1"), ("1/10", 3, "1/2"), ("1e-3", 5, "0")])
def test_a_saturated_subsampled_gaussian_is_one_minus_the_chance_of_no_sample(q, k, eps):
    # s / sigma = 1e160: one use's loss is infinite but for e^(-1e320); before: refused for k >= 2
    mpmath.mp.dps = 50
    v = dx.compose(dx.gaussian_noise("1e-160").subsample(q), k).delta(eps)
    lo, hi = (mpmath.mpf(x) for x in v.interval(40))
    truth = 1 - (1 - mpmath.mpf(mpmath.fraction(*map(int, _frac(q))))) ** k
    assert lo <= truth <= hi and hi - lo < mpmath.mpf("1e-30")


def _frac(text: str) -> tuple[int, int]:
    from fractions import Fraction

    f = Fraction(text)
    return f.numerator, f.denominator


def test_eps_of_a_saturated_subsampled_gaussian_through_the_command_line():
    out = cli("epsilon", "--mech", "gaussian(1e-160)@1/2:2", "--delta", "1e-5", "--format", "csv")
    assert out.returncode == 0, out.stderr
    _, lo, hi, _ = out.stdout.strip().splitlines()[-1].split(",")
    # one sampled use alone: loss ~ N(mu^2/2, mu^2), mu = 1e160; delta = 1e-5 there
    assert mpmath.mpf("1e319") < mpmath.mpf(lo) <= mpmath.mpf(hi) < mpmath.mpf("1e321")


def test_a_tiny_scale_ratio_of_a_subsampled_gaussian_answers_at_once():
    # gaussian(1e300)@1/2:3 at eps 1e-300: before, no answer in 60 s
    mpmath.mp.dps = 40
    start = time.process_time()
    lo, hi = dx.compose(dx.gaussian_noise("1e300").subsample("1/2"), 3).delta("1e-300").interval(8)
    assert time.process_time() - start < 2
    # delta(eps) <= delta(0), the total variation of three uses: at most three times one
    # use's, q (2 Phi(mu/2) - 1) ~ 2e-301; the bound asked is ten times looser
    mu = mpmath.mpf("1e-300")
    one_use_tv = mpmath.mpf(1) / 2 * mpmath.erf(mu / (2 * mpmath.sqrt(2)))  # q (2 Phi(mu/2) - 1)
    assert 0 < mpmath.mpf(lo) <= mpmath.mpf(hi) <= 10 * one_use_tv * 3
    # the sum of the outputs is G with mu' = q mu sqrt 3 to first order in mu: delta(e) =
    # mu' (phi(e/mu') - (e/mu') Phibar(e/mu')) + O(mu'^2), which the enclosure must hold
    m1 = mu / 2 * mpmath.sqrt(3)
    x = mpmath.mpf("1e-300") / m1
    ref = m1 * (mpmath.npdf(x) - x * mpmath.ncdf(-x))
    assert mpmath.mpf(lo) <= ref <= mpmath.mpf(hi) and mpmath.mpf(hi) < 3 * mpmath.mpf(lo)


def laplace_reference(eps0: int, k: int, eps: int) -> mpmath.mpf:
    """delta(eps) of k Laplace uses, loss bound eps0 (scale 1/eps0), up to e^(-eps0) terms.

    Under P a use's loss is eps0 (mass 1/2) or eps0 - 2E, E ~ Exp(1) (density e^-s / 2,
    the part with E > eps0 being the atom at -eps0): with j uses of the second kind
    the sum is k eps0 - 2 S_j, S_j ~ Gamma(j), and 1 - e^(eps - L) > 0 iff S_j < g/2.
    """
    g = k * eps0 - eps
    total = mpmath.mpf(0)
    for j in range(k + 1):
        w = mpmath.binomial(k, j) / mpmath.mpf(2) ** k
        if j == 0:
            total += w * -mpmath.expm1(-g)
            continue

        def f(s: mpmath.mpf, j: int = j) -> mpmath.mpf:
            gamma = s ** (j - 1) * mpmath.exp(-s) / mpmath.factorial(j - 1)
            return -mpmath.expm1(2 * s - g) * gamma

        total += w * mpmath.quad(f, [0, mpmath.mpf(g) / 2])
    return total


@pytest.mark.parametrize("eps", [20000, 29999])
def test_laplace_at_a_huge_loss_bound_has_a_positive_lower_end_past_half_its_top(eps):
    # k eps0 / 2 < eps < k eps0 (eps0 = 1e4, k = 3): before, the lower end was 0
    mpmath.mp.dps = 30
    lo, hi = dx.compose(dx.laplace_noise("1e-4"), 3).delta(str(eps)).interval(20)
    ref = laplace_reference(10000, 3, eps)
    assert 0 < mpmath.mpf(lo) <= ref <= mpmath.mpf(hi)


def test_csv_columns_are_every_rows_when_an_exact_zero_comes_first():
    # before: the header was the first row's (an exact 0): the enclosures' cells were empty
    out = cli("delta", "--mech", "laplace(1/2):3", "--eps", "7,1", "--format", "csv")
    assert out.returncode == 0, out.stderr
    head, first, second = out.stdout.strip().splitlines()
    cols = head.split(",")
    one = dict(zip(cols, second.split(","), strict=True))
    assert dict(zip(cols, first.split(","), strict=True))["delta_decimal"] == "0"
    assert mpmath.mpf(one["delta_lower"]) <= mpmath.mpf(one["delta_upper"])
    assert mpmath.mpf("0.73") < mpmath.mpf(one["delta_lower"])
    assert cols[-1] == "rounding"


def test_short_enclosure_of_ends_far_below_the_doubles_is_quick_and_outward():
    # before: Fraction(Decimal("1.2e-216936156")) built a 216936156-digit integer (minutes)
    start = time.process_time()
    lo, hi = short_enclosure("3.6293e-222974603", "1.2689e-216936156", 10)
    assert time.process_time() - start < 1
    assert (lo, hi) == ("3.6e-222974603", "1.3e-216936156")


@pytest.mark.parametrize(
    ("sigma", "q", "k", "eps"),
    [("1", "1/100", 10, "1"), ("2", "1/2", 20, "2")],
)
def test_the_far_tail_bracket_meets_the_loss_grid_where_both_answer(sigma, q, k, eps):
    # two independent certified methods: their enclosures of the same delta must meet
    from fractions import Fraction

    result = dx.compose(dx.gaussian_noise(sigma).subsample(q), k).result
    lo, hi = result.bracket(Fraction(eps))
    g_lo, g_hi = result.grid.delta(eps).ends()
    assert lo <= g_hi and g_lo <= hi


def test_eps_of_ten_thousand_uses_at_a_delta_below_the_doubles_answers_at_once():
    # k past the bracket's full sum: the terms stop where their weights are negligible
    start = time.process_time()
    lo, hi = dx.compose(dx.gaussian_noise(2).subsample("1e-4"), 10000).epsilon("1e-500").interval(6)
    assert time.process_time() - start < 2
    assert 0 < float(lo) <= float(hi) < 2 * float(lo)


def test_eps_far_in_the_tail_through_the_command_line_names_its_delta_as_a_decimal():
    # before: "could not certify"; and a delta of 1e-4000 was written as 1/10^4000 (4000 digits)
    out = cli("epsilon", "--mech", "gaussian(1)@1e-6:100", "--delta", "1e-4000", "--format", "csv")
    assert out.returncode == 0, out.stderr
    delta, lo, hi, _ = out.stdout.strip().splitlines()[-1].split(",")
    assert delta == "1e-4000" and 0 < float(lo) <= float(hi) < 2 * float(lo)


def test_the_bracket_leaves_a_value_to_the_grid_where_it_is_loose():
    # bench_widths seed 2026, q 0.00222 eps 14.8 sigma 10.7 k 18: the Gaussian envelope is
    # near 1e-301, so the bracket answered [1.8e-9103, 8.3e-6586] (4e2517 relative) in place
    # of the grid's split [2.3495e-9078, 2.3509e-9078]; the bracket must meet the delta goal
    tails = dx.compose(dx.gaussian_noise("10.7").subsample("0.00222"), 18).result
    lo, hi = tails.bracket(Fraction("14.8"))
    assert hi > lo * 1000  # loose here: the grid answers
    assert not tails._far(Fraction("14.8"))
    # far beyond the grid (eps 1e6 at q 1e-6: the split overflows) the bracket answers
    far = dx.compose(dx.gaussian_noise("1").subsample("1e-6"), 1000).result
    assert far._far(Fraction(10**6))
