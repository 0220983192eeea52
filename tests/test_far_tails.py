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
    assert row[1].endswith("e-222974603") and row[1].startswith("3.629")  # lower end positive
    # the split convex bound (Q^k shared unevenly over the sampled sets) meets the lower
    # end: before, the upper end was 1.6e-222949809 (the moment bound)
    assert row[2].endswith("e-222974603")
    assert float(row[2].split("e")[0]) < float(row[1].split("e")[0]) * 1.00001


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


def _moment_upper(sigma: str, q: str, k: int, eps: mpmath.mpf) -> mpmath.mpf:
    """An upper bound on ``delta(eps)`` from integer Renyi moments, computed in mpmath.

    ``delta(eps) <= E_A[e^(lam (L - eps))] lam^lam / (lam + 1)^(lam + 1)``, one use's moment
    ``sum_j C(a, j) (1 - q)^(a - j) q^j e^(j (j - 1) mu^2 / 2)`` (a = lam + 1), the least
    over a in [2, 40] (the best order here is near 17): the textbook bound, written apart
    from the package.
    """
    qq = mpmath.mpf(Fraction(q).numerator) / Fraction(q).denominator
    mu2 = 1 / mpmath.mpf(sigma) ** 2
    best = mpmath.mpf(1)
    for a in range(2, 41):
        lam = a - 1
        one = mpmath.fsum(
            mpmath.binomial(a, j) * (1 - qq) ** (a - j) * qq**j * mpmath.exp(j * (j - 1) * mu2 / 2)
            for j in range(a + 1)
        )
        bound = mpmath.exp(k * mpmath.log(one) - lam * eps) * lam**lam / (lam + 1) ** (lam + 1)
        best = min(best, bound)
    return best


def test_a_far_tail_whose_grid_is_huge_is_answered_by_the_bracket_at_once():
    # gaussian(1)@1e-3:10 at eps 100: before, no answer in 90 s on the loss grid (one use's
    # deep grid holds 316328 cells); the bracket answers (about 100 relative: the moment bound)
    mpmath.mp.dps = 30
    comp = dx.compose(dx.gaussian_noise(1).subsample("1e-3"), 10)
    start = time.process_time()
    lo, hi = (mpmath.mpf(x) for x in comp.delta("100").interval(12))
    assert time.process_time() - start < 2
    eps = mpmath.mpf(100)
    assert log_all_sampled_lower("1e-3", 10, eps) <= mpmath.log(lo)
    assert lo <= hi <= 2 * _moment_upper("1", "1e-3", 10, eps)
    assert hi < 1000 * lo
    # the route says what answered
    assert "bracket" in comp.why and "answered by it alone" in comp.why


def test_the_route_names_the_bracket_in_json_when_it_answered():
    out = cli("delta", "--mech", "gaussian(1)@1e-6:1000", "--eps", "1e6", "--format", "json")
    assert out.returncode == 0, out.stderr
    import json

    why = json.loads(out.stdout)["why"]
    assert "bracket of the sampled uses' Gaussians" in why


class _WideGrid:
    """A stand-in loss grid whose enclosures are as wide as can be: ``[0, 1]``."""

    def delta(self, eps):
        import flint

        from dpcompose_exact.numbers.value import Value

        return Value.from_interval(flint.arb(0), flint.arb(1))

    def delta_decision(self, eps, target):
        return self.delta(eps)


def test_a_wide_grid_enclosure_is_intersected_with_the_bracket():
    # where both answer, the answer is the intersection of two certified enclosures: a grid
    # enclosure [0, 1] (a lower end of 0 for a positive value) takes the bracket's ends
    from dpcompose_exact.engines.oneuse import FarTails

    tails = FarTails(_WideGrid, dx.gaussian_noise("14.7"), Fraction("0.00399"), 11)
    eps = Fraction("0.0629")
    assert not tails._far(eps)  # the grid answers here (the bracket is far from the goal)
    lo, hi = tails.delta(eps).ends()
    b_lo, b_hi = tails.bracket(eps)
    assert lo == b_lo > 0 and hi == b_hi < 1
    # the bracket's lower end lies below the grid's upper end (bench_widths seed 2026)
    assert mpmath.mpf("3.44e-388") < mpmath.mpf(lo.str(10, radius=False)) < mpmath.mpf("1.1e-363")
    d_lo, _ = tails.delta_decision(eps, Fraction(1, 10**400)).ends()
    assert d_lo == b_lo
    assert "intersected" in tails.answered_note()


def test_far_tails_answers_its_own_protocol_only():
    # before: a __getattr__ handed every unknown name (delta_bounds, folds, h) to the loss
    # grid, so a caller reading them went round the bracket
    tails = dx.compose(dx.gaussian_noise(1).subsample("1e-3"), 10).result
    for name in ("delta_bounds", "folds", "h", "kinds"):
        assert not hasattr(tails, name)
    assert tails.grid.kinds  # the grid itself, when it is wanted
