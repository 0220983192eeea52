"""Certified summaries: Rényi divergences, the GDP mu, the advantage, ``dpcompose summary``.

The references are independent of the package: Rényi sums over letters enumerated by
tests/brute.py (Fractions and mpmath), mpmath quadratures of the noise densities at 40
digits, mpmath's normal CDF, and dp_accounting's RDP accountant as a float cross-check.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import mpmath
import pytest
from brute import double_dp_letters, product, rr_letters

import dpcompose_exact as dx
from dpcompose_exact.engines import gdp_finite, renyi_use, summaries
from dpcompose_exact.errors import InvalidParameterError, UnsupportedQueryError

PAPER = dx.Mechanism([("0.3", "0"), ("0.15", "0.02")])


def interval(value, digits=40):
    lo, hi = value.interval(digits)
    return mpmath.mpf(lo), mpmath.mpf(hi)


def close(value, truth, digits=30):
    """The certified value and the reference agree to ``digits`` significant digits."""
    got = mpmath.mpf(value.decimal(digits + 5))
    assert abs(got - truth) <= abs(truth) * mpmath.mpf(10) ** (-digits), (got, truth)


def mp(x):
    """A Fraction as an mpmath number at the working precision."""
    x = Fraction(x)
    return mpmath.mpf(x.numerator) / x.denominator


def renyi_letters(p0, p1, alpha):
    """D_alpha(P0 || P1) of distributions over letters, summed letter by letter."""
    alpha = mpmath.mpf(alpha)
    s = mpmath.fsum(
        mpmath.mpf(a) ** alpha * mpmath.mpf(b) ** (1 - alpha) for a, b in zip(p0, p1) if a
    )
    return mpmath.log(s) / (alpha - 1)


# ---------------------------------------------------------------------------------------
# finite pairs


@pytest.mark.parametrize("alpha", ["2", "3", "3/2", "7/3"])
def test_finite_pair_against_the_six_letters_and_their_product(alpha):
    with mpmath.workdps(60):
        p0, p1 = double_dp_letters(
            mpmath.exp(mpmath.mpf(3) / 10),
            mpmath.exp(mpmath.mpf(3) / 20),
            mpmath.mpf(0),
            mpmath.mpf(2) / 100,
            one=mpmath.mpf(1),
        )
        pairs = list(product(p0, p1, 3))  # the 3-fold product, outcome by outcome
        a = mpmath.mpf(Fraction(alpha).numerator) / Fraction(alpha).denominator
        truth = renyi_letters([x for x, _ in pairs], [y for _, y in pairs], a)
        close(dx.compose(PAPER, 3).renyi(alpha), truth, 45)
        one = renyi_letters([p0[y] for y in p0], [p1[y] for y in p0], a)
        close(dx.compose(PAPER, 1).renyi(alpha), one, 45)


def test_integer_order_of_a_rational_pair_is_a_rational_logarithm():
    # randomized response log(3)-DP: the Renyi sum is rational, exactly
    p0, p1 = rr_letters(Fraction(3))
    s = sum(p0[y] ** 3 / p1[y] ** 2 for y in p0)  # E_P1[(P0/P1)^3]
    v = dx.compose(dx.randomized_response("1/2"), 2).renyi(3)
    assert v.is_exact
    assert f"log({s.numerator}/{s.denominator})" in v.exact
    with mpmath.workdps(80):
        close(v, mpmath.log(mpmath.mpf(s.numerator) / s.denominator), 70)


def test_heterogeneous_finite_composition_is_additive():
    kinds = [(PAPER, 2), (dx.randomized_response("1/2"), 3)]
    c = dx.compose(kinds)
    d = [dx.compose(m, 1).renyi(4) for m, _ in kinds]
    with mpmath.workdps(50):
        close(c.renyi(4), 2 * mpmath.mpf(d[0].decimal(45)) + 3 * mpmath.mpf(d[1].decimal(45)), 40)


def test_a_leak_makes_the_divergence_infinite():
    c = dx.compose(dx.Mechanism.dp("1", "1e-5"), 2)
    v = c.renyi(2)
    assert summaries.is_infinite(v) and v.exact == "oo"
    assert float(v) == v.upper() == float("inf") and v.decimal(10) == "inf" and v > 10**9
    assert not summaries.is_infinite(dx.compose(PAPER, 2).renyi(2))


def test_orders_are_exact_and_above_one():
    c = dx.compose(PAPER, 2)
    with pytest.raises(TypeError, match="floats are not exact"):
        c.renyi(1.5)
    with pytest.raises(InvalidParameterError, match="must be > 1"):
        c.renyi(1)
    curve = c.renyi_curve(["1.5", 2])
    assert [a for a, _ in curve] == [Fraction(3, 2), Fraction(2)]
    assert curve[0][1] < curve[1][1]  # D_alpha increases with alpha


def test_a_paper_bound_is_summarised_by_its_own_region():
    exact = dx.compose(PAPER, 5)
    bound = dx.remark2_bound(PAPER, 5)  # an outer bound: a weaker region than the exact one
    assert dx.theorem2_mixture(PAPER, 5).renyi(2) == exact.renyi(2)
    assert bound.renyi(2) > exact.renyi(2) and bound.renyi("3/2") > exact.renyi("3/2")
    assert bound.gdp_mu() > exact.gdp_mu()
    assert bound.advantage() == bound.delta(0) > exact.advantage()


def test_exactly_subsampled_pair_takes_the_larger_direction():
    # Poisson subsampling of the log(3)-DP pair P = (3/4, 1/4), Q = (1/4, 3/4)
    q = Fraction(1, 10)
    p, qq = (Fraction(3, 4), Fraction(1, 4)), (Fraction(1, 4), Fraction(3, 4))
    a = [q * x + (1 - q) * y for x, y in zip(p, qq)]
    m = dx.Mechanism.dp("log(3)").subsample("1/10")
    for alpha in (2, 5):
        fwd = sum(x**alpha / y ** (alpha - 1) for x, y in zip(a, qq))
        rev = sum(y**alpha / x ** (alpha - 1) for x, y in zip(a, qq))
        with mpmath.workdps(50):
            truth = 4 * max(mpmath.log(mp(fwd)), mpmath.log(mp(rev))) / (alpha - 1)
            close(dx.compose(m, 4).renyi(alpha), truth, 40)


def test_subsampled_pair_known_by_bounds_is_enclosed():
    m = dx.Mechanism.dp("0.3").subsample("1/10")
    assert m.loss_pair().form.value == "asymmetric bounds"
    q = mpmath.mpf(1) / 10
    with mpmath.workdps(40):
        z = mpmath.exp(mpmath.mpf(3) / 10)
        p, qq = (z / (1 + z), 1 / (1 + z)), (1 / (1 + z), z / (1 + z))
        a = [q * x + (1 - q) * y for x, y in zip(p, qq)]
        truth = 3 * max(renyi_letters(a, qq, 2), renyi_letters(qq, a, 2))
        lo, hi = interval(dx.compose(m, 3).renyi(2), 20)
        assert lo <= truth <= hi


# ---------------------------------------------------------------------------------------
# noise


def test_gaussian_is_alpha_mu2_over_two_exactly():
    c = dx.compose([(dx.gaussian_noise("1"), 3), (dx.gaussian_noise("3", "2"), 2)])
    assert c.renyi("5/2").exact == str(Fraction(5, 2) * (3 + 2 * Fraction(4, 9)) / 2)


def gaussian_rdp(q, sigma, alpha):
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    return float(rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, [alpha])[0])


def laplace_quad(q, eps0, power):
    """E_B[(A/B)^power] for A = q Lap(eps0, 1) + (1 - q) Lap(0, 1), B = Lap(0, 1)."""

    def f(x):
        b = mpmath.exp(-abs(x)) / 2
        r = 1 - q + q * mpmath.exp(abs(x) - abs(x - eps0))
        return b * r**power

    return mpmath.quad(f, [-mpmath.inf, 0, eps0, mpmath.inf])


@pytest.mark.parametrize("alpha", ["3/2", "2", "5"])
def test_laplace_closed_form_against_quadrature_and_dp_accounting(alpha):
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    a = Fraction(alpha)
    c = dx.compose(dx.laplace_noise("2", "1"), 3)  # eps0 = 1/2
    with mpmath.workdps(40):
        am = mpmath.mpf(a.numerator) / a.denominator
        truth = 3 * mpmath.log(laplace_quad(1, mpmath.mpf(1) / 2, am)) / (am - 1)
        close(c.renyi(alpha), truth, 30)
    assert float(c.renyi(alpha)) == pytest.approx(3 * rdp._laplace_rdp(0.5, float(a)), rel=1e-12)


@pytest.mark.parametrize(
    ("q", "sigma", "alpha"), [("1/100", "1", 2), ("1/10", "2", 8), ("1/2", "3/2", 3)]
)
def test_subsampled_gaussian_integer_orders(q, sigma, alpha):
    qf, sf = Fraction(q), Fraction(sigma)
    c = dx.compose(dx.gaussian_noise(sigma).subsample(q), 7)
    v = c.renyi(alpha)
    assert v.is_exact
    assert float(v) == pytest.approx(7 * gaussian_rdp(float(qf), float(sf), alpha), rel=1e-10)
    with mpmath.workdps(40):
        fwd = mpmath.log(gaussian_quad(mp(qf), mp(sf), alpha)) / (alpha - 1)
        rev = mpmath.log(gaussian_quad(mp(qf), mp(sf), 1 - alpha)) / (alpha - 1)
        assert rev <= fwd  # as Mironov, Talwar and Zhang show; the answer computes both
        close(v, 7 * fwd, 25)


def gaussian_quad(q, s, power):
    """E_B[(A/B)^power], A = q N(1, s^2) + (1 - q) N(0, s^2), B = N(0, s^2) (mpmath)."""

    def f(x):
        r = 1 - q + q * mpmath.exp((2 * x - 1) / (2 * s * s))
        return mpmath.npdf(x, 0, s) * r**power

    return mpmath.quad(f, [-mpmath.inf, 0, 1, mpmath.inf])


@pytest.mark.parametrize(("q", "sigma", "alpha"), [("1/10", "2", "3/2"), ("1/100", "1", "13/4")])
def test_subsampled_gaussian_fractional_orders_both_directions(q, sigma, alpha):
    qf, sf, a = Fraction(q), Fraction(sigma), Fraction(alpha)
    v = dx.compose(dx.gaussian_noise(sigma).subsample(q), 5).renyi(alpha)
    with mpmath.workdps(40):
        am = mp(a)
        fwd = mpmath.log(gaussian_quad(mp(qf), mp(sf), am)) / (am - 1)
        rev = mpmath.log(gaussian_quad(mp(qf), mp(sf), 1 - am)) / (am - 1)
        close(v, 5 * max(fwd, rev), 30)
    # dp_accounting's fractional series adds |binomial coefficients|: never below the truth
    assert 5 * gaussian_rdp(float(qf), float(sf), float(a)) >= float(v) * (1 - 1e-12)


def test_subsampled_gaussian_reverse_direction_is_computed_too():
    # next to an exactly subsampled finite pair both directions are sums of known terms
    g = dx.gaussian_noise("1").subsample("1/10")
    lp = g.loss_pair()
    fwd, rev = renyi_use._directions(lp, Fraction(3))
    with mpmath.workdps(40):
        q, s = mpmath.mpf(1) / 10, mpmath.mpf(1)
        close(summaries._exact_sum([(1, rev)]), mpmath.log(gaussian_quad(q, s, -2)) / 2, 30)
        close(summaries._exact_sum([(1, fwd)]), mpmath.log(gaussian_quad(q, s, 3)) / 2, 30)


@pytest.mark.parametrize("alpha", ["2", "5/2", "6"])
def test_subsampled_laplace_both_directions_against_quadrature(alpha):
    a = Fraction(alpha)
    c = dx.compose(dx.laplace_noise("1", "1/2").subsample("1/5"), 4)  # eps0 = 1/2
    with mpmath.workdps(40):
        am = mpmath.mpf(a.numerator) / a.denominator
        q, e = mpmath.mpf(1) / 5, mpmath.mpf(1) / 2
        fwd = mpmath.log(laplace_quad(q, e, am)) / (am - 1)
        rev = mpmath.log(laplace_quad(q, e, 1 - am)) / (am - 1)
        close(c.renyi(alpha), 4 * max(fwd, rev), 30)


def test_subsampled_laplace_at_rate_one_is_the_closed_form():
    piece = renyi_use._laplace_piece_div(Fraction(1, 2), Fraction(1), Fraction(7, 3), True)
    closed = renyi_use._laplace_div(Fraction(1, 2), Fraction(7, 3))
    assert abs(piece.ev(200) - closed.ev(200)) < mpmath.mpf(10) ** -50


# ---------------------------------------------------------------------------------------
# GDP mu and the advantage


def test_gdp_mu_of_gaussians_is_the_exact_square_root():
    kinds = [
        (dx.gaussian_noise("1"), 3),
        (dx.gaussian_noise("2"), 2),
        (dx.gaussian_noise("3", "2"), 1),
    ]
    mu = dx.compose(kinds).gdp_mu()
    total = 3 + 2 * Fraction(1, 4) + Fraction(4, 9)  # sum k_i (sensitivity_i / sigma_i)^2
    assert mu.exact == f"sqrt({total})"
    with mpmath.workdps(70):
        close(mu, mpmath.sqrt(mpmath.mpf(total.numerator) / total.denominator), 50)
    assert dx.compose(dx.gaussian_noise("1"), 4).gdp_mu().exact == "2"


def test_gdp_mu_refuses_leaks_and_kinds_it_does_not_compute():
    with pytest.raises(InvalidParameterError, match="no finite GDP mu exists"):
        dx.compose(dx.Mechanism.dp("1", "1e-5"), 2).gdp_mu()
    # a query not answered for this mix: no parameter is invalid
    with pytest.raises(UnsupportedQueryError, match="not for laplace b=1 in this mix"):
        dx.compose([(dx.laplace_noise("1"), 2), (dx.gaussian_noise("1"), 1)]).gdp_mu()
    with pytest.raises(InvalidParameterError, match="exact composed region"):
        dx.compose(PAPER, 2, method="certified").gdp_mu()


def test_gdp_mu_of_pure_dp_is_twice_the_normal_quantile():
    # eps-DP is mu-GDP exactly for mu = 2 Phi^-1(e^eps / (1 + e^eps)) (the fixed point)
    mu = dx.compose(dx.Mechanism.dp("1"), 1).gdp_mu()
    with mpmath.workdps(60):
        e = mpmath.e
        close(mu, 2 * mpmath.sqrt(2) * mpmath.erfinv(2 * e / (1 + e) - 1), 40)


def brute_mu(p0, p1):
    """max over the Neyman-Pearson points (t, f) of Phi^-1(1 - t) - Phi^-1(f) (mpmath)."""
    pairs = sorted(zip(p0, p1), key=lambda ab: -(ab[1] / ab[0]) if ab[0] else -mpmath.inf)
    best, t, f = mpmath.mpf(0), mpmath.mpf(0), mpmath.mpf(1)
    for a, b in pairs:
        t, f = t + a, f - b
        if 0 < t < 1 and f > 0:
            best = max(
                best,
                -mpmath.sqrt(2) * mpmath.erfinv(2 * t - 1)
                - mpmath.sqrt(2) * mpmath.erfinv(2 * f - 1),
            )
    return best


def test_gdp_mu_of_finite_pairs_against_the_neyman_pearson_points():
    with mpmath.workdps(50):
        p0, p1 = double_dp_letters(
            mpmath.exp(mpmath.mpf(3) / 10),
            mpmath.exp(mpmath.mpf(3) / 20),
            mpmath.mpf(0),
            mpmath.mpf(2) / 100,
            one=mpmath.mpf(1),
        )
        pairs = list(product(p0, p1, 3))
        truth = brute_mu([a for a, _ in pairs], [b for _, b in pairs])
        c = dx.compose(PAPER, 3)
        mu = c.gdp_mu()
        close(mu, truth, 35)

        # and G_mu lies below f: delta of G_mu is above delta(eps), touching it somewhere
        def delta_g(m, x):
            return mpmath.ncdf(m / 2 - x / m) - mpmath.exp(x) * mpmath.ncdf(-m / 2 - x / m)

        m = mpmath.mpf(mu.decimal(40))
        gaps = []
        for i in range(0, 121):
            x = mpmath.mpf(i) / 100
            d = mpmath.mpf(c.delta(Fraction(i, 100)).decimal(40))
            gaps.append(delta_g(m * (1 + mpmath.mpf(10) ** -30), x) - d)
        assert min(gaps) >= 0
        assert min(gaps) < mpmath.mpf(10) ** -3


def test_gdp_mu_of_gaussian_next_to_finite_pairs_is_enclosed():
    c = dx.compose([(dx.gaussian_noise("1"), 2), (dx.randomized_response("1/2"), 1)])
    v = c.gdp_mu()
    assert not v.is_exact
    lo, hi = interval(v, 20)
    with mpmath.workdps(30):
        # delta(eps) = sum_l p(l) delta_G(eps - l), G = G_sqrt(2), p = 3/4, 1/4 at +-log 3
        m, l3 = mpmath.sqrt(2), mpmath.log(3)

        def dg(mu, x):
            return mpmath.ncdf(mu / 2 - x / mu) - mpmath.exp(x) * mpmath.ncdf(-mu / 2 - x / mu)

        def mu_at(x):
            d = mpmath.mpf(3) / 4 * dg(m, x - l3) + mpmath.mpf(1) / 4 * dg(m, x + l3)
            return mpmath.findroot(lambda u: dg(u, x) - d, 1.8)

        x0 = max(range(1, 250), key=lambda i: mu_at(mpmath.mpf(i) / 50))
        sup = max(mu_at(mpmath.mpf(x0) / 50 + mpmath.mpf(j) / 50000) for j in range(-1000, 1001))
        assert lo <= sup * (1 + mpmath.mpf(10) ** -9) and sup <= hi
        assert lo >= mpmath.sqrt(2) and hi - lo < mpmath.mpf(1) / 5


def _profile_sup(m2, letters, k):
    """mu* of G_m (x) F by the definition, in mpmath, independent of the package.

    ``letters``: one use of ``F`` as ``(P-mass, Q-mass)`` pairs; the ``k``-fold product is
    enumerated by brute force.  ``mu* = sup_eps m(eps, delta(eps))`` over ``eps >= 0``
    (symmetric pair), ``delta(eps) = sum_l p(l) delta_{G_m}(eps - l)`` and
    ``m(eps, d)`` the ``mu`` with ``delta_{G_mu}(eps) = d`` (bisection); the supremum by
    a scan and a golden-section search.
    """
    import itertools

    atoms = {}
    for word in itertools.product(letters, repeat=k):
        p = mpmath.fprod(a for a, _ in word)
        q = mpmath.fprod(b for _, b in word)
        key = mpmath.nstr(mpmath.log(p / q), 30)
        atoms[key] = atoms.get(key, (0, mpmath.log(p / q)))
        atoms[key] = (atoms[key][0] + p, atoms[key][1])
    m = mpmath.sqrt(m2)

    def dg(mu, x):
        return mpmath.ncdf(mu / 2 - x / mu) - mpmath.exp(x) * mpmath.ncdf(-mu / 2 - x / mu)

    def mu_at(x):  # bisection: delta_{G_mu}(x) increases with mu
        d = mpmath.fsum(p * dg(m, x - loss) for p, loss in atoms.values())
        lo, hi = mpmath.mpf(m) / 2, 4 * m
        for _ in range(110):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if dg(mid, x) < d else (lo, mid)
        return lo

    grid = [mpmath.mpf(i) / 20 for i in range(0, 160)]
    x0 = max(grid, key=mu_at)
    a, b = max(x0 - mpmath.mpf(1) / 20, 0), x0 + mpmath.mpf(1) / 20
    g = (mpmath.sqrt(5) - 1) / 2
    for _ in range(80):
        c, d = b - g * (b - a), a + g * (b - a)
        if mu_at(c) >= mu_at(d):
            b = d
        else:
            a = c
    return mu_at((a + b) / 2)


@pytest.mark.parametrize(
    "mechs, m2, letters, k",
    [
        # [2.00011582, 2.02758682] and a 4 %-wide enclosure before
        ("gaussian(1):3 0.5,0:4", 3, "eps 1/2", 4),
        ("gaussian(2):2 rr(1/2,2):3", Fraction(1, 2), "rr", 3),
    ],
)
def test_gdp_mu_of_gaussian_next_to_finite_pairs_is_tight(mechs, m2, letters, k):
    kinds = []
    for spec in mechs.split():
        what, count = spec.rsplit(":", 1)
        if what.startswith("gaussian"):
            kinds.append((dx.gaussian_noise(what[9:-1]), int(count)))
        elif what.startswith("rr"):
            kinds.append((dx.randomized_response("1/2"), int(count)))
        else:
            kinds.append((dx.Mechanism([tuple(what.split(","))]), int(count)))
    v = dx.compose(kinds).gdp_mu()
    lo, hi = interval(v, 30)
    with mpmath.workdps(40):
        if letters == "rr":
            pair = [(mpmath.mpf(3) / 4, mpmath.mpf(1) / 4), (mpmath.mpf(1) / 4, mpmath.mpf(3) / 4)]
        else:
            e = mpmath.exp(mpmath.mpf(1) / 2)
            pair = [(e / (1 + e), 1 / (1 + e)), (1 / (1 + e), e / (1 + e))]
        ref = _profile_sup(mpmath.mpf(Fraction(m2).numerator) / Fraction(m2).denominator, pair, k)
        assert lo <= ref <= hi
        assert hi - lo <= hi * mpmath.mpf(10) ** -6


def test_gdp_mu_curve_derivatives_match_finite_differences():
    # h' and h'' of the Neyman-Pearson curve of G_m (x) F bound the cells (theory, section 20)
    import flint

    kind = dx.Mechanism([("3/20", "0")])
    region = dx.compose(kind, 3, method="exact", closed_forms=False).region
    curve = gdp_finite._NoisyFinite(Fraction(16, 75), region)
    with mpmath.workdps(40), flint.ctx.workprec(200):
        r2 = flint.arb(2).sqrt()
        for t in ("0.3", "2.3", "7"):
            tau, e = flint.arb(t), flint.arb("1e-15")
            h = [curve.h(tau + k * e, 200).mid().str(45, radius=False) for k in (-1, 0, 1)]
            h = [mpmath.mpf(x) for x in h]
            a, b = curve._sums(tau, 200)
            d1, d2 = curve._derivatives(tau, r2 * a.erfcinv(), r2 * b.erfcinv(), 200)
            step = mpmath.mpf("1e-15")
            fd1, fd2 = (h[2] - h[0]) / (2 * step), (h[2] - 2 * h[1] + h[0]) / step**2
            assert abs(fd1 - mpmath.mpf(float(d1))) < mpmath.mpf(10) ** -9
            assert abs(fd2 - mpmath.mpf(float(d2))) < mpmath.mpf(10) ** -6


def test_advantage_is_delta_at_zero():
    c = dx.compose(dx.gaussian_noise("1"), 4)  # mu = 2: 2 Phi(mu/2) - 1
    with mpmath.workdps(50):
        lo, hi = interval(c.advantage(), 30)
        truth = 2 * mpmath.ncdf(1) - 1
        assert lo <= truth <= hi
    p = dx.compose(PAPER, 3)
    assert p.advantage() == p.delta("0")


# ---------------------------------------------------------------------------------------
# the command line


def run(*argv):
    return subprocess.run(
        [sys.executable, "-m", "dpcompose_exact", "summary", *argv],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_summary_json():
    out = run(
        "--mech",
        "gaussian(1):3",
        "--mech",
        "gaussian(2):2",
        "--orders",
        "2,3/2",
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == {"command", "mechanisms", "method", "gdp_mu", "advantage", "renyi"}
    assert data["gdp_mu"]["exact"] == "sqrt(7/2)"
    assert [r["alpha"] for r in data["renyi"]] == ["2", "3/2"]
    assert data["renyi"][0]["renyi"]["exact"] == "7/2"


def test_cli_summary_table_reports_what_it_does_not_compute():
    out = run("--dp", "1,1e-5", "-k", "2", "--orders", "2")
    assert out.returncode == 0, out.stderr
    assert "no finite GDP mu exists" in out.stdout
    assert "inf" in out.stdout.splitlines()[-1]
    bad = run("--dp", "1,0", "--orders", "1/2")
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "must be > 1" in bad.stderr


def test_large_orders_leave_the_field_for_arb_and_agree():
    # randomized response log(3)-DP at order 10^5: (e^l)^(alpha - 1) would be huge in Q
    c = dx.compose(dx.randomized_response("1/2"), 3)
    p0, p1 = rr_letters(Fraction(3))
    with mpmath.workdps(60):
        a = mpmath.mpf(10) ** 5
        truth = 3 * renyi_letters([mp(p0[y]) for y in p0], [mp(p1[y]) for y in p0], a)
        close(c.renyi(10**5), truth, 40)
    # the subsampled Gaussian past the binomial orders: the integral, against dp_accounting
    g = dx.compose(dx.gaussian_noise("1").subsample("1/100"), 2)
    assert float(g.renyi(300)) == pytest.approx(2 * gaussian_rdp(0.01, 1.0, 300), rel=1e-10)


@pytest.mark.parametrize(
    "argv",
    [
        ["--mech", "gaussian(1):3", "--orders", "2,3/2"],
        ["--dp", "1,1e-5", "-k", "2", "--orders", "2"],
        ["--mech", "gaussian(2)@1/10:3", "--orders", "3/2,8"],
        ["--mech", "0.5,0@1/10:3", "--orders", "2"],
    ],
)
def test_cli_summary_json_validates_against_the_shipped_schema(argv):
    from importlib import resources

    import jsonschema

    text = resources.files("dpcompose_exact").joinpath("schema/output.schema.json").read_text()
    validator = jsonschema.Draft202012Validator(json.loads(text))
    out = run(*argv, "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    errors = sorted(validator.iter_errors(data), key=str)
    assert not errors, errors[0].message
    bad = {**data, "extra": 1}
    assert list(validator.iter_errors(bad))


def test_closed_forms_parse_and_evaluate_to_the_certified_digits():
    import sympy

    values = [
        dx.compose(PAPER, 2).renyi(2),
        dx.compose(PAPER, 2).renyi("3/2"),
        dx.compose(PAPER, 2).gdp_mu(),
        dx.compose(dx.laplace_noise("2"), 3).renyi("5/2"),
        dx.compose(dx.gaussian_noise("1").subsample("1/10"), 2).renyi(3),
        dx.compose(dx.laplace_noise("1").subsample("1/5"), 2).renyi(2),
        dx.compose([(dx.gaussian_noise("1"), 3), (dx.gaussian_noise("2"), 2)]).gdp_mu(),
    ]
    for v in values:
        expr = sympy.sympify(v.exact)
        with mpmath.workdps(40):
            got = mpmath.mpf(str(sympy.N(expr, 30)))
            assert abs(got - mpmath.mpf(v.decimal(25))) <= mpmath.mpf(10) ** -20 * abs(got), v.exact
