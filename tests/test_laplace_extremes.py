"""Laplace noise at extreme scales, and a delta of exactly 0 above the largest loss.

Loss bounds ``eps0 = 1/b`` beyond the grid's floats (``b = 1e-300``, ``1e300``, ``1e4000``)
are answered between two binary pairs (docs/theory.md, section 18, "Laplace at extreme
scales"); one use of subsampled Laplace noise is exactly 0 at and above its largest loss.
References: the exact loss law of ``k`` Laplace uses integrated in mpmath at 1400 digits
(``test_pldgrid.laplace_delta_truth``), the one-use hockey-stick divergence integrated in
mpmath from the two noise densities, and the composition's loss bound ``k eps0``.
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from typing import Any

import mpmath
import pytest

pytest.importorskip("numpy")

from test_pldgrid import laplace_delta_truth  # noqa: E402

import dpcompose_exact as dx  # noqa: E402
from dpcompose_exact.engines.pldgrid import LaplaceGrid  # noqa: E402
from dpcompose_exact.numbers.convert import ball_end  # noqa: E402


def _exact(end: Any) -> Fraction:
    """An exact end of a Value (:meth:`Value.ends`) as a rational."""
    return ball_end(end)


def _inside(value: Any, truth: mpmath.mpf, digits: int = 40) -> bool:
    lo, hi = (Fraction(x) for x in value.interval(digits))
    return mpmath.mpf(lo.numerator) / lo.denominator <= truth <= (
        mpmath.mpf(hi.numerator) / hi.denominator
    )


@pytest.mark.parametrize(
    ("b", "k", "eps"),
    [("1e300", 2, "1e-300"), ("4194304", 3, "0"), ("4194304", 3, "5/8388608")],
)
def test_tiny_loss_bounds_enclose_the_exact_delta_tightly(b, k, eps):
    # regression: eps0 = 1e-300 failed with ZeroDivisionError (the grid width rounded to 0)
    eps0, e = 1 / Fraction(b), Fraction(eps)
    v = LaplaceGrid(eps0, k).delta(e)
    # the reference subtracts terms of size 1 and the ends differ by about eps0^3: 3 x 300
    # digits and more at b = 1e300
    with mpmath.workdps(1000 if b == "1e300" else 60):
        truth = laplace_delta_truth(eps0, k, e)
        assert _inside(v, truth)
    lo, hi = (_exact(x) for x in v.ends())
    assert 0 < lo and hi - lo <= hi * 4 * eps0  # relative width about eps0


@pytest.mark.parametrize("b", ["1e300", "1e4000"])
def test_tiny_loss_bound_is_pure_dp_above_k_eps0(b):
    eps0 = 1 / Fraction(b)
    comp = dx.compose([(dx.laplace_noise(b), 2)])
    assert comp.delta(2 * eps0).interval(5) == ("0", "0")
    assert comp.delta(1).interval(5) == ("0", "0")
    lo, hi = (_exact(x) for x in comp.delta(0).ends())
    # delta(0) of two uses is eps0 / 2 - (5/6) eps0^3 + ... (mpmath at 1400 digits, b = 1e300;
    # the front door's Value keeps its ends to 53 bits)
    tol = eps0 / 2 / 10**15
    assert 0 < lo and abs(eps0 / 2 - lo) <= tol and abs(hi - eps0 / 2) <= tol


@pytest.mark.parametrize("b", ["1e-300", "1/5000"])
def test_huge_loss_bounds_give_delta_near_one(b):
    # regression: b = 1e-300 failed with "cannot convert NaN to integer ratio"
    eps0 = 1 / Fraction(b)
    grid = LaplaceGrid(eps0, 2)
    lo, hi = (Fraction(x) for x in grid.delta(Fraction(1)).interval(30))
    assert hi == 1 and 1 - lo < Fraction(1, 10**20)  # truth: 1 - O(e^(-eps0/2))
    assert grid.delta(2 * eps0).interval(5) == ("0", "0")
    with mpmath.workdps(60):  # b = 1/5000, eps = 9999: the exact value, inside a wide bracket
        if b == "1/5000":
            v = grid.delta(Fraction(9999))
            assert _inside(v, laplace_delta_truth(eps0, 2, Fraction(9999)))


def test_extreme_epsilon_brackets_the_root():
    eps0 = Fraction(1, 10**300)
    grid = LaplaceGrid(eps0, 3)
    assert grid.epsilon(Fraction(0)).known_rational() == 3 * eps0  # eps(0) = k eps0 exactly
    target = Fraction(1, 10**301)
    lo, hi = (Fraction(x) for x in grid.epsilon(target).interval(20))
    assert 0 < lo <= hi < 3 * eps0 and hi - lo <= hi / 10**12
    with mpmath.workdps(400):  # delta is decreasing: delta(lo) >= target >= delta(hi)
        d = mpmath.mpf(target.numerator) / target.denominator
        assert laplace_delta_truth(eps0, 3, lo) >= d >= laplace_delta_truth(eps0, 3, hi)


def _mpq(q: Fraction) -> mpmath.mpf:
    return mpmath.mpf(q.numerator) / q.denominator


def _one_use_truth(q: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    """max of the two hockey-stick divergences of q Lap(1, 1) + (1 - q) Lap(0, 1) vs Lap(0, 1)."""
    g = lambda x: mpmath.exp(-abs(x)) / 2  # noqa: E731
    p = lambda x: mpmath.exp(-abs(x - 1)) / 2  # noqa: E731
    a = lambda x: q * p(x) + (1 - q) * g(x)  # noqa: E731
    w = mpmath.exp(eps)
    cuts = [-mpmath.inf, 0, 1, mpmath.inf]
    for r in (w - 1 + q, 1 / w - 1 + q):  # where p/g = r/q crosses inside (0, 1): a kink
        if r > 0:
            x = (1 + mpmath.log(r / q)) / 2
            if 0 < x < 1:
                cuts = sorted([*cuts, x])
    fwd = mpmath.quad(lambda x: max(mpmath.mpf(0), a(x) - w * g(x)), cuts)
    rev = mpmath.quad(lambda x: max(mpmath.mpf(0), g(x) - w * a(x)), cuts)
    return max(fwd, rev)


@pytest.mark.parametrize("eps", ["1", "1e6", "2e-300"])
def test_subsampled_laplace_is_exactly_zero_above_its_largest_loss(eps):
    # regression: 'could not certify 30 digits with 1048576 bits' (a ball of an exact 0);
    # the largest loss is log(1 - q + q e) ~ 1.72e-300 < eps
    comp = dx.compose([(dx.laplace_noise(1).subsample("1e-300"), 1)])
    assert comp.delta(eps).decimal(30) == "0"
    with mpmath.workdps(30):
        assert _one_use_truth(mpmath.mpf(10) ** -300, _mpq(Fraction(eps))) == 0


def test_subsampled_laplace_just_below_its_largest_loss_is_positive():
    comp = dx.compose([(dx.laplace_noise(1).subsample("1/2"), 1)])
    with mpmath.workdps(40):
        for eps in ("0.62", "0.5"):
            v = comp.delta(eps)
            truth = _one_use_truth(mpmath.mpf(1) / 2, _mpq(Fraction(eps)))
            assert truth > 0 and _inside(v, truth, 20)  # quadrature: 20 digits
        assert _one_use_truth(mpmath.mpf(1) / 2, mpmath.mpf("0.63")) == 0
    assert comp.delta("0.63").decimal(10) == "0"


def test_cli_answers_extreme_laplace_scales():
    out = subprocess.run(
        [sys.executable, "-m", "dpcompose_exact", "delta", "--mech", "laplace(1e-300):2",
         "--eps", "1", "--format", "csv"],
        capture_output=True, text=True, check=False,
    )
    assert out.returncode == 0 and out.stdout.splitlines()[-1].startswith("1,"), out.stderr


def test_gdp_profile_float_guide_survives_huge_eps():
    # regression: summary of laplace(1e-300):2 died with OverflowError (math.exp(eps) of the
    # float guide at eps ~ 1e300); the guide only places the certified bisection
    from dpcompose_exact.engines.gdp_profile import _float_mu_at

    mu = _float_mu_at(1e300, 0.5)
    assert 0 < mu <= 64
