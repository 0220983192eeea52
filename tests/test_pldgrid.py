"""The additive-noise engines (gaussian, pldgrid): Gaussian closed form, certified Laplace grid.

Truths are computed independently in mpmath: the Gaussian delta formula, and for Laplace
the exact loss distribution of k uses (atoms and the k-fold convolution of the flat part,
integrated piecewise), written here from the definition of the mechanism.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from dpcompose_exact.engines.gaussian import gaussian_delta, gaussian_epsilon
from dpcompose_exact.engines.pldgrid import LaplaceGrid
from dpcompose_exact.errors import InvalidParameterError


def _mp(q: Fraction) -> mpmath.mpf:
    return mpmath.mpf(q.numerator) / q.denominator


def _gauss_delta(mu: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)


def _laplace_losses(eps0: mpmath.mpf) -> tuple[mpmath.mpf, mpmath.mpf, mpmath.mpf]:
    """One use of Laplace noise, sensitivity 1, scale b = 1/eps0 (X ~ Lap(0, b) vs Lap(1, b)).

    The loss l(x) = (|x - 1| - |x|) / b is eps0 for x <= 0 (P-mass 1/2), -eps0 for x >= 1
    (mass e^-eps0 / 2) and (1 - 2x)/b in between; there the density of l is
    (b/2) e^(-x/b) / (2b) with x = (1 - b l)/2, i.e. e^(-eps0/2) e^(l/2) / 4.
    """
    return mpmath.mpf(1) / 2, mpmath.exp(-eps0) / 2, mpmath.exp(-eps0 / 2) / 4


def _box_power(j: int, eps0: mpmath.mpf, y: mpmath.mpf) -> mpmath.mpf:
    """The j-fold convolution of the indicator of (-eps0, eps0), at y (a spline)."""
    u = (y + j * eps0) / (2 * eps0)
    if u <= 0 or u >= j:
        return mpmath.mpf(0)
    s = sum((-1) ** i * mpmath.binomial(j, i) * (u - i) ** (j - 1) for i in range(int(u) + 1))
    return (2 * eps0) ** (j - 1) * s / mpmath.factorial(j - 1)


def laplace_delta_truth(eps0: Fraction, k: int, eps: Fraction) -> mpmath.mpf:
    """delta(eps) = E[(1 - e^(eps - L))_+] for L the sum of k losses (mpmath)."""
    e0, e = _mp(eps0), _mp(eps)
    top_mass, bottom_mass, dens = _laplace_losses(e0)
    total = mpmath.mpf(0)
    for j in range(k + 1):
        for m in range(k - j + 1):
            n = k - j - m
            w = (
                mpmath.binomial(k, j)
                * mpmath.binomial(k - j, m)
                * top_mass**m
                * bottom_mass**n
                * dens**j
            )
            x = e0 * (m - n)
            if j == 0:
                total += w * max(mpmath.mpf(0), 1 - mpmath.exp(e - x))
                continue
            hi = j * e0
            lo = max(-hi, e - x)
            if lo >= hi:
                continue
            cuts = [lo] + [-hi + 2 * e0 * i for i in range(1, j) if -hi + 2 * e0 * i > lo]

            def f(y: mpmath.mpf, j: int = j, x: mpmath.mpf = x) -> mpmath.mpf:
                return (1 - mpmath.exp(e - x - y)) * mpmath.exp(y / 2) * _box_power(j, e0, y)

            total += w * mpmath.quad(f, [*cuts, hi])
    return total


def _inside(value, truth: mpmath.mpf) -> bool:
    lo, hi = value.interval(25)
    return mpmath.mpf(lo) <= truth <= mpmath.mpf(hi)


# ---------------------------------------------------------------------------------------
# Gaussian


@pytest.mark.parametrize("mu2", [Fraction(1, 25), Fraction(1), Fraction(5, 2), Fraction(400)])
def test_gaussian_delta_and_epsilon_enclose_the_mpmath_values(mu2):
    with mpmath.workdps(50):
        mu = mpmath.sqrt(_mp(mu2))
        for eps in (Fraction(0), Fraction(1, 10), Fraction(1), Fraction(7, 2), Fraction(30)):
            truth = _gauss_delta(mu, _mp(eps))
            if truth < mpmath.mpf(10) ** -300:
                continue
            v = gaussian_delta(mu2, eps)
            assert _inside(v, truth)
            assert v.certified_digits() >= 15 or truth < mpmath.mpf(10) ** -200
        for delta in (Fraction(1, 10), Fraction(1, 100000), Fraction(1, 10**12)):
            e = gaussian_epsilon(mu2, delta)
            lo, hi = (_mp(Fraction(x)) for x in e.interval(25))
            if hi == 0:
                assert _gauss_delta(mu, mpmath.mpf(0)) <= _mp(delta)
                continue
            # delta(lo) > target >= delta(hi): the exact eps lies in [lo, hi]
            assert _gauss_delta(mu, lo) > _mp(delta) >= _gauss_delta(mu, hi)
            assert hi - lo <= mpmath.mpf(10) ** -9 * max(hi, 1)


# ---------------------------------------------------------------------------------------
# Laplace


@pytest.mark.parametrize(
    "eps0, k",
    [
        (Fraction(1), 1),
        (Fraction(2), 1),
        (Fraction(1, 2), 2),
        (Fraction(1), 3),
        (Fraction(2), 4),
        (Fraction(1, 2), 5),
    ],
)
def test_laplace_grid_encloses_the_exact_delta(eps0, k):
    grid = LaplaceGrid(eps0, k)
    with mpmath.workdps(30):
        for frac in (Fraction(0), Fraction(1, 7), Fraction(1, 3), Fraction(2, 3), Fraction(9, 10)):
            eps = frac * k * eps0
            truth = laplace_delta_truth(eps0, k, eps)
            v = grid.delta(eps)
            assert _inside(v, truth), (eps, v.interval(20), truth)
            lo, hi = (Fraction(x) for x in v.interval(20))
            assert hi - lo <= Fraction(1, 10**7) * max(hi, Fraction(1, 10**30)) + Fraction(
                1, 10**28
            )


def test_laplace_grid_epsilon_brackets_the_exact_root():
    eps0, k, target = Fraction(1), 3, Fraction(1, 1000)
    e = LaplaceGrid(eps0, k).epsilon(target)
    lo, hi = (Fraction(x) for x in e.interval(20))
    with mpmath.workdps(30):
        assert laplace_delta_truth(eps0, k, lo) > _mp(target)
        assert laplace_delta_truth(eps0, k, hi) <= _mp(target)
    assert hi - lo < Fraction(1, 10**6)


def test_laplace_grid_refuses_bad_parameters():
    with pytest.raises(InvalidParameterError, match="eps0 = 0 must be > 0"):
        LaplaceGrid(Fraction(0), 3)
    with pytest.raises(InvalidParameterError, match="k = 0 must be a positive integer"):
        LaplaceGrid(Fraction(1), 0)
    with pytest.raises(InvalidParameterError, match=r"delta = 2 must lie in \[0, 1\)"):
        LaplaceGrid(Fraction(1), 3).epsilon(Fraction(2))
    with pytest.raises(InvalidParameterError, match="eps = -1 is negative"):
        LaplaceGrid(Fraction(1), 3).delta(Fraction(-1))


def test_laplace_grid_is_zero_beyond_pure_dp():
    assert LaplaceGrid(Fraction(1, 2), 7).delta(Fraction(7, 2)).exact == "0"


@pytest.mark.slow
def test_laplace_grid_windowed_agrees_with_dp_accounting_and_beats_it_in_the_tail():
    # k = 40 uses the FFT window and the tail bounds.  dp_accounting (independent code)
    # gives an optimistic and a pessimistic PLD: our enclosure must meet [opt, pess], and in
    # the tail (delta about 1e-6) our upper end is below its pessimistic value
    from dp_accounting.pld import privacy_loss_distribution as pm

    k = 40
    grid = LaplaceGrid(Fraction(1), k)
    pess = pm.from_laplace_mechanism(1.0, value_discretization_interval=1e-4).self_compose(k)
    opt = pm.from_laplace_mechanism(
        1.0, pessimistic_estimate=False, value_discretization_interval=1e-4
    ).self_compose(k)
    for eps, tail in ((12, False), (20, False), (30, True)):
        lo, hi = (float(Fraction(x)) for x in grid.delta(Fraction(eps)).interval(20))
        p, o = pess.get_delta_for_epsilon(float(eps)), opt.get_delta_for_epsilon(float(eps))
        assert o * (1 - 1e-9) <= hi and lo <= p * (1 + 1e-9)
        assert math.isclose(lo, hi, rel_tol=1e-4)  # the lower end pays the window alias
        if tail:
            assert 1e-7 < hi <= p


# ---------------------------------------------------------------------------------------
# The Laplace upper end is sound and at least as tight as dp_accounting's
# pessimistic PLD (default discretisation); regressions of the tail bounds and the import


def _pld_pessimistic_delta(b: float, k: int, eps: float) -> float:
    pm = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    return pm.from_laplace_mechanism(b).self_compose(k).get_delta_for_epsilon(eps)


def test_laplace_upper_end_between_the_exact_value_and_pld_pessimistic():
    # eps0 = 1 (b = 1), k = 10: the exact value from the loss distribution (mpmath above)
    eps0, k, eps = Fraction(1), 10, Fraction("9.989")
    grid = LaplaceGrid(eps0, k)
    hi = Fraction(grid.delta(eps).interval(30)[1])
    with mpmath.workdps(30):
        truth = laplace_delta_truth(eps0, k, eps)
    assert _mp(hi) >= truth
    assert float(hi) <= _pld_pessimistic_delta(1.0, k, float(eps))


@pytest.mark.slow
def test_laplace_upper_end_below_pld_pessimistic_windowed():
    # b = 1/2 (eps0 = 2), k = 200: windowed FFT; the independent value is the Fourier
    # inversion of the benchmark (mpmath, no grid)
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    bench = pytest.importorskip("bench_accountant")
    eps0, k, eps = Fraction(2), 200, Fraction(300)
    lo, hi = (Fraction(x) for x in LaplaceGrid(eps0, k).delta(eps).interval(30))
    with mpmath.workdps(30):
        ref, err = bench.laplace_delta_fourier(_mp(eps0), k, _mp(eps))
        assert _mp(lo) <= ref + err and _mp(hi) >= ref - err
    assert float(hi) <= _pld_pessimistic_delta(0.5, k, float(eps))


def test_laplace_lower_end_is_not_trivial_for_a_wide_sum():
    # regression: the Chernoff bounds of the window used lambda >= 1/4 only; for a sum of
    # standard deviation ~67 (k = 3000, eps0 = 2, a coarse grid to keep it fast) the alias
    # bound became 1 and the lower end 0
    grid = LaplaceGrid(Fraction(2), 3000, h=Fraction(1, 200))
    lo, hi = (Fraction(x) for x in grid.delta(Fraction(3650)).interval(20))
    assert 0 < hi and (hi - lo) <= Fraction(1, 10) * hi
    assert all(pw.alias < 1e-6 for pw in grid._powers.values())


def test_pldgrid_imports_without_numpy():
    # numpy is not a core dependency: importing the modules and the Gaussian engine need none
    import subprocess
    import sys

    code = (
        "import sys; from fractions import Fraction as F; "
        "import dpcompose_exact.engines.pldgrid; "
        "import dpcompose_exact.engines.gaussian as g; g.gaussian_delta(F(1), F(1)); "
        "print('numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
