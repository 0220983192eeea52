"""Tests of dpcompose_exact.paper.approx (docs/theory.md, section 9; paper section IV, Figure 3).

Expected values come from the paper's Figure 3, from closed forms derived here
independently of the module (the Gaussian privacy profile, chord slopes, areas of simple
polygons), or from perturbation arguments (a local optimum cannot be improved).
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from functools import cache

import flint
import pytest
from mpmath import mp

from dpcompose_exact.errors import CertificationError, InvalidParameterError
from dpcompose_exact.paper.approx import (
    Approximation,
    SmoothTradeoff,
    approx_from_above,
    approx_from_below,
    area_between,
    certify_constraints,
    gaussian,
    gaussian_composition,
    laplace,
    piecewise_area,
    tradeoff_from_callable,
)

G1 = gaussian(1)


@cache
def g1(side: str, n: int, rule: str = "optimal") -> Approximation:
    if side == "below":
        return approx_from_below(G1, n, rule=rule)
    return approx_from_above(G1, n)


def gauss_profile(eps, mu=1):
    """delta(eps) of G_mu (Balle-Wang), an independent closed form of the tangent delta."""
    return mp.ncdf(-eps / mu + mu / mp.mpf(2)) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / mp.mpf(2))


def sqrt_tradeoff(t):
    """f(t) = (1 - sqrt t)^2: symmetric, convex, f(0) = 1, fixed point 1/4."""
    return (1 - mp.sqrt(t)) ** 2


def sqrt_ball(t: Fraction) -> flint.arb:
    return (1 - flint.arb(flint.fmpq(t.numerator, t.denominator)).sqrt()) ** 2


# --------------------------------------------------------------------------- trade-offs


def test_gaussian_fixed_point_area_and_derivatives():
    with mp.workdps(30):
        mu = mp.mpf(1)
        assert abs(G1.fixed_point(30) - mp.ncdf(-mu / 2)) < mp.mpf(10) ** -25
        # area under G_mu is P(Z - Z' >= mu) = Phi(-mu/sqrt2)
        assert abs(G1.area(25) - mp.ncdf(-mu / mp.sqrt(2))) < mp.mpf(10) ** -20
        t = mp.mpf("0.2")
        assert abs(G1.df(t) - mp.diff(G1.f, t)) < mp.mpf(10) ** -15
        assert abs(G1.d2f(t) - mp.diff(G1.f, t, 2)) < mp.mpf(10) ** -10
        assert G1.value(0, 30) == 1 and G1.value(1, 30) == 0


def test_gaussian_composition_is_mu_sqrt_k():
    composed = gaussian_composition(1, 4)
    two = gaussian(2)
    with mp.workdps(30):
        for t in ("0.01", "0.3", "0.77"):
            assert abs(composed.value(t, 30) - two.value(t, 30)) < mp.mpf(10) ** -25
    with pytest.raises(InvalidParameterError, match="k must be >= 1"):
        gaussian_composition(1, 0)


def test_laplace_matches_cdf_definition_and_is_not_strictly_convex():
    eps = Fraction(1, 2)
    lap = laplace(eps)

    def cdf(x):
        return mp.exp(x) / 2 if x < 0 else 1 - mp.exp(-x) / 2

    def cdf_inv(p):
        return mp.log(2 * p) if p < mp.mpf(1) / 2 else -mp.log(2 * (1 - p))

    with mp.workdps(30):
        e = mp.mpf(1) / 2
        for t in ("0.05", "0.3", "0.5", "0.8"):
            tt = mp.mpf(t)
            assert abs(lap.value(t, 30) - cdf(cdf_inv(1 - tt) - e)) < mp.mpf(10) ** -25
        assert abs(lap.fixed_point(30) - mp.exp(-e / 2) / 2) < mp.mpf(10) ** -25
        # affine near 0: f' = -e^eps, f'' = 0 (the reason it is not strictly convex)
        assert abs(lap.df(mp.mpf("0.1")) + mp.exp(e)) < mp.mpf(10) ** -25
        assert lap.d2f(mp.mpf("0.1")) == 0
        assert lap.d2f(mp.mpf("0.4")) > 0


def test_normal_rotation_properties():
    with mp.workdps(30):
        c = G1.fixed_point(30)
        z = G1.rotation_z(30)
        assert abs(z + 1 / mp.sqrt(2)) < mp.mpf(10) ** -28
        assert abs(G1.rotation(0, 30) - mp.sqrt(2) * c) < mp.mpf(10) ** -25
        assert abs(G1.rotation(z, 30) + z) < mp.mpf(10) ** -20  # g(z) = f(0)/sqrt2
        u = mp.mpf("-0.3")
        assert abs(G1.rotation(u, 30) - G1.rotation(-u, 30)) < mp.mpf(10) ** -25  # even
        assert abs(G1.rotation_derivative(0, 30)) < mp.mpf(10) ** -20
        h = mp.mpf("1e-8")  # central differences: O(h^2) error, values good to ~1e-33
        num1 = mp.diff(lambda v: G1.rotation(v, 45), u, h=h)
        num2 = mp.diff(lambda v: G1.rotation_derivative(v, 45), u, h=h)
        assert abs(G1.rotation_derivative(u, 30) - num1) < mp.mpf(10) ** -12
        assert abs(G1.rotation_second_derivative(u, 30) - num2) < mp.mpf(10) ** -10
        assert G1.rotation_second_derivative(u, 30) > 0


def test_smooth_tradeoff_is_frozen_and_precision_does_not_leak():
    before, flint_before = mp.prec, flint.ctx.prec
    assert approx_from_above(laplace(1), 2).certified  # runs mpmath and arb at other precisions
    assert mp.prec == before and flint.ctx.prec == flint_before
    with pytest.raises(dataclasses.FrozenInstanceError):
        G1.name = "other"  # type: ignore[misc]


# --------------------------------------------------------------------------- Figure 3


def test_figure3_from_below_paper_rule():
    a = g1("below", 2, "paper")
    (e1, d1), (e2, d2) = a.unrounded
    # Figure 3: eps ~ (1.31983, 0.37496), delta ~ (0.07743, 0.27215)
    assert abs(e1 - mp.mpf("1.31983")) < 5e-6 and abs(e2 - mp.mpf("0.37496")) < 5e-6
    assert abs(d1 - mp.mpf("0.07743")) < 5e-6 and abs(d2 - mp.mpf("0.27215")) < 5e-6
    # the tangent deltas are the Gaussian privacy profile at these eps
    with mp.workdps(40):
        assert abs(d1 - gauss_profile(e1)) < 1e-30 and abs(d2 - gauss_profile(e2)) < 1e-30
    assert a.certified and a.rule == "paper"
    assert a.eps == (Fraction(1320, 1000), Fraction(375, 1000))  # rounded up on the grid


def test_figure3_from_above_matches_proposition2_closed_form():
    a = g1("above", 2)
    (e1, d1), (e2, d2) = a.unrounded
    # Figure 3: eps ~ (1.37838, 0.38215), delta ~ (0, 0.23932)
    assert abs(e1 - mp.mpf("1.37838")) < 5e-6 and abs(e2 - mp.mpf("0.38215")) < 5e-6
    assert d1 == 0 and abs(d2 - mp.mpf("0.23932")) < 5e-6
    # Proposition 2 in closed form for G_1: f'(t) = -exp(w - 1/2) with t = Phi(-w), so
    # f'(t*) = (c - 1)/c gives w* = log((1 - c)/c) + 1/2; no root finding needed.
    with mp.workdps(40):
        c = mp.ncdf(mp.mpf(-1) / 2)
        w = mp.log((1 - c) / c) + mp.mpf(1) / 2
        ts, fts = mp.ncdf(-w), mp.ncdf(w - 1)
        eps1 = mp.log((1 - fts) / ts)
        eps2 = mp.log((fts - c) / (c - ts))
        delta2 = 1 - c - c * mp.exp(eps2)
        assert abs(e1 - eps1) < 1e-30 and abs(e2 - eps2) < 1e-30 and abs(d2 - delta2) < 1e-30
    assert a.constraints[0] == (Fraction(1378, 1000), Fraction(0))  # eps rounded down
    assert a.eps[1] == Fraction(382, 1000)
    assert a.certified


def test_optimal_below_is_a_local_maximum_and_beats_the_paper_rule():
    opt, paper = g1("below", 2), g1("below", 2, "paper")
    with mp.workdps(30):
        under_g1 = mp.ncdf(-1 / mp.sqrt(2))  # area under G_1 (test above)

        def gap(eps_pair):
            return under_g1 - piecewise_area([(e, gauss_profile(e)) for e in eps_pair], 25)

        best = gap([e for e, _ in opt.unrounded])
        assert abs(best - mp.mpf("0.0067746")) < 1e-7
        assert abs(gap([e for e, _ in paper.unrounded]) - mp.mpf("0.0073840")) < 1e-7
        e1, e2 = (e for e, _ in opt.unrounded)
        for d1, d2 in [(0.01, 0), (-0.01, 0), (0, 0.01), (0, -0.01), (0.01, 0.01)]:
            assert gap([e1 + d1, e2 + d2]) > best
        # the rounded, certified version loses only a little area
        assert 0 < opt.gap_area() - best < 1e-6


def test_optimal_single_piece_matches_golden_section_search():
    with mp.workdps(30):

        def area(e):
            return piecewise_area([(e, gauss_profile(e))], 30)

        a, b, r = mp.mpf("0.3"), mp.mpf("0.9"), (mp.sqrt(5) - 1) / 2
        for _ in range(70):
            c, d = b - r * (b - a), a + r * (b - a)
            a, b = (a, d) if area(c) > area(d) else (c, b)
        assert abs(g1("below", 1).unrounded[0][0] - (a + b) / 2) < 1e-9


@pytest.mark.parametrize("side", ["below", "above"])
def test_bracket_tightens_with_more_pieces(side):
    areas = [g1(side, n).gap_area(20) for n in (1, 2, 3, 4)]
    assert all(a > 0 for a in areas)
    assert all(x > y for x, y in zip(areas, areas[1:]))
    assert areas[3] < areas[0] / 8
    assert all(g1(side, n).certified and len(g1(side, n).constraints) == n for n in (1, 2, 3, 4))


def test_laplace_brackets_are_certified_and_tighten():
    lap = laplace("1/2")
    below = [approx_from_below(lap, n) for n in (1, 2, 3)]
    above = [approx_from_above(lap, n) for n in (1, 2, 3)]
    assert all(a.certified for a in below + above)
    for approxs in (below, above):
        gaps = [a.gap_area(20) for a in approxs]
        assert gaps[0] > gaps[1] > gaps[2] > 0
    # the affine part of f (slope -e^(1/2), through (0, 1)) is the steepest lower piece
    assert below[2].eps[0] == Fraction(1, 2)


def test_bracket_contains_the_gaussian_pointwise():
    lo, hi = g1("below", 3), g1("above", 3)
    with mp.workdps(30):
        for j in range(1, 50):
            t = mp.mpf(j) / 50
            assert lo.evaluate(t, 30) <= G1.f(t) <= hi.evaluate(t, 30)


def test_one_piece_closed_forms():
    # above, one chord from (0, 1) to (c, c): e^eps = (1 - c)/c
    a = g1("above", 1)
    with mp.workdps(30):
        c = mp.ncdf(mp.mpf(-1) / 2)
        assert a.constraints == ((Fraction(math.floor(1000 * mp.log((1 - c) / c)), 1000), 0),)
    # f = (1 - sqrt t)^2 has c = 1/4, so the chord slope is -3 and eps = log 3
    sq = tradeoff_from_callable(sqrt_tradeoff, name="sq", f_ball=sqrt_ball)
    assert approx_from_above(sq, 1).constraints == ((Fraction(1098, 1000), Fraction(0)),)
    # Laplace(1) is (1, 0)-DP and f is affine near 0: the best single line is that piece;
    # delta is pushed one grid step up so that the inequality is strict (certifiable)
    assert approx_from_below(laplace(1), 1).constraints == ((Fraction(1), Fraction(1, 10**8)),)


def test_grids_exact_types_and_order():
    a = approx_from_below(G1, 3, eps_denominator=64, delta_denominator=2**20)
    assert a.eps_denominator == 64 and a.delta_denominator == 2**20
    assert list(a.eps) == sorted(a.eps, reverse=True)
    for e, d in a.constraints:
        assert type(e) is Fraction and type(d) is Fraction
        assert (e * 64).denominator == 1 and (d * 2**20).denominator == 1
        assert 0 <= d <= 1
    # rounding up eps and taking the tangent delta never lies above the exact profile
    with mp.workdps(40):
        for (e, d), (ue, _) in zip(a.constraints, a.unrounded):
            e_mp, d_mp = mp.mpf(e.numerator) / e.denominator, mp.mpf(d.numerator) / d.denominator
            assert ue <= e_mp < ue + mp.mpf(1) / 64
            assert gauss_profile(e_mp) < d_mp < gauss_profile(e_mp) + mp.mpf(2) ** -20


def test_rounding_to_the_grid_is_exact_and_directed():
    from dpcompose_exact.paper.approx.common import _round_to_grid

    with mp.workdps(30):
        x = mp.mpf("-0.0015")
        assert _round_to_grid(x, 1000, up=True) == Fraction(-1, 1000)
        assert _round_to_grid(x, 1000, up=False) == Fraction(-2, 1000)
        assert _round_to_grid(mp.mpf(1) / 3, 1000, up=True) == Fraction(334, 1000)
        assert _round_to_grid(mp.mpf(1) / 3, 1000, up=False) == Fraction(333, 1000)
        assert _round_to_grid(mp.mpf("0.25"), 4, up=True) == Fraction(1, 4)  # exact stays


# --------------------------------------------------------------------------- certification


def test_certification_counts_subintervals():
    a = g1("below", 2)
    assert "arb" in a.certificate
    assert certify_constraints(G1, a.constraints, "below") > 0
    assert certify_constraints(G1, g1("above", 2).constraints, "above") > 0


def test_certification_rejects_wrong_direction_rounding():
    a = g1("below", 2)
    # rounding eps down (the unsafe direction) puts the lines above f near the tangents
    wrong = [
        (Fraction(math.floor(1000 * ue), 1000), d)
        for (_, d), (ue, _) in zip(a.constraints, a.unrounded)
    ]
    with pytest.raises(CertificationError, match="fails at t ="):
        certify_constraints(G1, wrong, "below")
    b = g1("above", 2)
    up = [(e + Fraction(1, 1000), d) for e, d in b.constraints]
    with pytest.raises(CertificationError, match="fails at t ="):
        certify_constraints(G1, up, "above")
    # too coarse: delta lowered by 1e-6 is not below f any more
    coarse = [(e, d - Fraction(1, 10**6)) for e, d in a.constraints]
    with pytest.raises(CertificationError, match=r"f_eps,delta <= f fails"):
        certify_constraints(G1, coarse, "below")


def test_certification_cannot_decide_an_exact_touch():
    # f_{1,0} coincides with Laplace(1) on [0, e^-1/2]: true, but not decidable with balls
    with pytest.raises(CertificationError, match="could not certify"):
        certify_constraints(laplace(1), [(Fraction(1), Fraction(0))], "below", max_intervals=500)


def test_user_callable_certified_only_with_interval_version():
    plain = tradeoff_from_callable(sqrt_tradeoff, name="sq")
    boxed = tradeoff_from_callable(sqrt_tradeoff, name="sq", f_ball=sqrt_ball)
    a, b = approx_from_below(plain, 2), approx_from_below(boxed, 2)
    assert not a.certified and "numerically checked" in a.certificate
    assert b.certified and "proven" in b.certificate
    assert a.constraints == b.constraints
    assert plain.fixed_point(30) - mp.mpf(1) / 4 < 1e-25
    with pytest.raises(InvalidParameterError, match="no interval version"):
        certify_constraints(plain, a.constraints, "below")


# --------------------------------------------------------------------------- areas


def test_piecewise_area_closed_forms():
    with mp.workdps(30):
        assert abs(piecewise_area([(0, 0)]) - mp.mpf(1) / 2) < 1e-25  # f = 1 - t
        # pure eps-DP: vertices (0, 1), (c, c), (1, 0) with c = 1/(1 + e^eps): area c
        assert abs(piecewise_area([(1, 0)]) - 1 / (1 + mp.e)) < 1e-25
        # (0, delta): 1 - delta - t, area (1 - delta)^2 / 2
        assert abs(piecewise_area([(0, Fraction(1, 5))]) - mp.mpf("0.32")) < 1e-25
        # a redundant constraint does not change the area
        assert abs(piecewise_area([(1, 0), (2, 0)]) - 1 / (1 + mp.e)) < 1e-25
        gap = area_between([(1, 0)], lambda t: 1 - t, 30)
        assert abs(gap - (mp.mpf(1) / 2 - 1 / (1 + mp.e))) < 1e-20


def test_area_between_accepts_every_kind_of_curve():
    lo, hi = g1("below", 2), g1("above", 2)
    total = area_between(lo, hi, 25)
    assert abs(total - (lo.gap_area(25) + hi.gap_area(25))) < 1e-15
    assert abs(area_between(lo.constraints, G1, 25) - lo.gap_area(25)) < 1e-15


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("mu", [0, -1, "-0.5", Fraction(0)])
def test_gaussian_rejects_non_positive_mu(mu):
    with pytest.raises(InvalidParameterError, match="mu must be > 0"):
        gaussian(mu)


def test_bad_parameters():
    with pytest.raises(InvalidParameterError, match="eps must be > 0"):
        laplace(0)
    with pytest.raises(TypeError, match="float"):
        gaussian(1.0)
    with pytest.raises(InvalidParameterError, match="pieces must be >= 1"):
        approx_from_below(G1, 0)
    with pytest.raises(InvalidParameterError, match="pieces must be >= 1"):
        approx_from_above(G1, -2)
    with pytest.raises(TypeError, match="pieces must be an int"):
        approx_from_below(G1, 2.0)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="eps_denominator must be >= 1"):
        approx_from_above(G1, 2, eps_denominator=0)
    with pytest.raises(InvalidParameterError, match="rule must be"):
        approx_from_below(G1, 2, rule="best")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="side must be"):
        certify_constraints(G1, [(1, 0)], "left")  # type: ignore[arg-type]


def _polyline(points):
    """Piecewise-linear interpolation of the given (t, f(t)) points."""

    def f(t):
        for (a, fa), (b, fb) in zip(points, points[1:]):
            if t <= b:
                return fa + (fb - fa) * (t - a) / (b - a)
        return points[-1][1]

    return f


def test_callable_that_is_not_convex_is_rejected():
    # symmetric about y = x (vertices (0.1, 0.8) and (0.8, 0.1) mirror), but the slope
    # drops from -2 to -6 at t = 0.1
    pts = [
        (0, 1),
        (mp.mpf("0.1"), mp.mpf("0.8")),
        (mp.mpf("0.2"), mp.mpf("0.2")),
        (mp.mpf("0.8"), mp.mpf("0.1")),
        (1, 0),
    ]
    with pytest.raises(InvalidParameterError, match=r"not convex at t = 0\.09375"):
        tradeoff_from_callable(_polyline(pts), name="kinked")


def test_callable_that_is_not_symmetric_is_rejected():
    with pytest.raises(InvalidParameterError, match=r"not symmetric .* at t = 0\.015625"):
        tradeoff_from_callable(lambda t: (1 - t) ** 2, name="square")


def test_callable_that_is_not_a_tradeoff_function_is_rejected():
    with pytest.raises(InvalidParameterError, match=r"outside \[0, 1 - t\]"):
        tradeoff_from_callable(lambda t: 1 - t * t, name="concave")
    with pytest.raises(InvalidParameterError, match="differs from f0"):
        tradeoff_from_callable(sqrt_tradeoff, f0=Fraction(1, 2))
    assert isinstance(tradeoff_from_callable(sqrt_tradeoff), SmoothTradeoff)
