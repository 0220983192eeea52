"""Tests of dpcompose_exact.paper.bracket (docs/theory.md, section 9: bracketing G_mu^(x)k)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from mpmath import mp

from dpcompose_exact.algebra import dp_region
from dpcompose_exact.errors import InvalidParameterError
from dpcompose_exact.paper.approx import gaussian, laplace, piecewise_area
from dpcompose_exact.paper.bracket import (
    approximation_region,
    bracket_composition,
    bracket_sequence,
    gaussian_delta,
    region_area,
    region_delta,
)
from dpcompose_exact.presentation.render import format_brackets


def _mpf(ball) -> mp.mpf:
    return mp.mpf(ball.mid().str(40, radius=False))


@pytest.fixture(scope="module")
def shrinking():
    """G_1, k = 3, n = 2, 3, 4 (about 1.5 s in all)."""
    return bracket_sequence(gaussian(1), 3, (2, 3, 4))


def _g(m2: Fraction, t: Fraction) -> mp.mpf:
    """G_m(t) = Phi(Phi^-1(1 - t) - m), written out independently of approx.py."""
    if t == 0:
        return mp.mpf(1)
    if t == 1:
        return mp.mpf(0)
    tt = mp.mpf(t.numerator) / t.denominator
    return mp.ncdf(
        -mp.sqrt(2) * mp.erfinv(2 * tt - 1) - mp.sqrt(mp.mpf(m2.numerator) / m2.denominator)
    )


def test_pointwise_ordering_lower_reference_upper(shrinking):
    b = shrinking[0]
    ts = [Fraction(j, 60) for j in range(61)] + [Fraction(1, 10**j) for j in range(2, 7)]
    strict = 0
    with mp.workdps(30):
        for t in ts:
            lo = mp.mpf(b.lower.domain.decimal(b.lower(t), 25))
            up = mp.mpf(b.upper.domain.decimal(b.upper(t), 25))
            g = _g(Fraction(3), t)
            assert lo <= g + mp.mpf(10) ** -20, t
            assert g <= up + mp.mpf(10) ** -20, t
            strict += lo < g - mp.mpf(10) ** -6
    assert strict > 30  # the bracket is not degenerate


def test_upper_region_inside_lower_region(shrinking):
    for b in shrinking:
        assert b.upper <= b.lower
        assert not b.lower <= b.upper


def test_deltas_are_ordered_and_tv_matches_closed_form(shrinking):
    for b in shrinking:
        assert [r.eps for r in b.deltas] == [0, Fraction(1, 2), 1, 2]
        for r in b.deltas:
            assert mp.mpf(r.lower) >= mp.mpf(r.reference) >= mp.mpf(r.upper)
    # delta(0) of G_m is the total variation 2 Phi(m/2) - 1 (m = sqrt 3)
    tv = 2 * mp.ncdf(mp.sqrt(3) / 2) - 1
    assert mp.almosteq(mp.mpf(shrinking[0].deltas[0].reference), tv, 1e-11)


def test_bracket_shrinks_with_the_number_of_pieces(shrinking):
    widths = [b.area_lower_upper for b in shrinking]
    assert widths[0] > widths[1] > widths[2] > 0
    lowers = [b.area_lower_reference for b in shrinking]
    assert lowers[0] > lowers[1] > lowers[2] > 0
    for b in shrinking:
        assert b.area_reference_upper > 0
        assert mp.almosteq(b.area_lower_reference + b.area_reference_upper, b.width, 1e-12)
    # the composed regions are exact: more pieces give more constraints
    assert len(shrinking[2].lower.constraints) > len(shrinking[0].lower.constraints)


def test_k1_is_the_approximation_itself():
    b = bracket_composition(gaussian(1), 1, 2, eps_points=(0, 1))
    assert b.lower == approximation_region(b.below)
    assert b.upper == approximation_region(b.above)
    # area via exact vertices + arb equals the approximation's own piecewise area
    with mp.workdps(30):
        assert mp.almosteq(_mpf(region_area(b.lower)), piecewise_area(b.below.constraints), 1e-20)
    # and the gap to G_1 is positive but below 0.01 (the paper: about 0.007 for n = 2)
    assert 0 < b.area_lower_reference < mp.mpf("0.01")


def test_gaussian_area_closed_form_matches_quadrature():
    b = bracket_composition(gaussian(1), 2, 1, eps_points=())
    g2 = b.reference
    assert g2 is not None
    with mp.workdps(25):
        quad = mp.quad(lambda t: _g(Fraction(2), Fraction(0)) if t == 0 else g2.f(t), [0, 0.5, 1])
        area_lower = _mpf(region_area(b.lower))
        assert mp.almosteq(b.area_lower_reference, quad - area_lower, 1e-12)


def test_gaussian_delta_matches_tangent_definition():
    # delta(eps) = 1 - min_t (G(t) + e^eps t): minimise numerically, independently
    m2 = Fraction(4)
    for eps in (Fraction(0), Fraction(1, 2), Fraction(3, 2)):
        with mp.workdps(30):
            big = mp.exp(mp.mpf(eps.numerator) / eps.denominator)
            # optimum where G'(t) = -e^eps, i.e. t = Phi(-(eps/m + m/2))
            t = mp.ncdf(-(mp.mpf(eps.numerator) / eps.denominator / 2 + 1))
            g = mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * t - 1) - 2)
            expected = 1 - g - big * t
            assert mp.almosteq(gaussian_delta(m2, eps), expected, 1e-25)


def test_region_delta_of_a_single_constraint():
    r = dp_region([("1", "0.1")])
    with mp.workdps(30):
        tenth, e = mp.mpf("0.1"), mp.e
        assert mp.almosteq(_mpf(region_delta(r, 1)), tenth, 1e-25)
        # eps = 0: TV = delta + (1 - delta)(e - 1)/(e + 1)
        assert mp.almosteq(_mpf(region_delta(r, 0)), tenth + (1 - tenth) * (e - 1) / (e + 1), 1e-25)
        # between 0 and 1 the vertex (c, c), c = 0.9/(1 + e), gives 1 - c - e^(1/2) c
        c = (1 - tenth) / (1 + e)
        assert mp.almosteq(_mpf(region_delta(r, "1/2")), 1 - c - mp.sqrt(e) * c, 1e-25)
        # beyond eps = 1 only the leak at t = 0 remains: delta(eps) = 0.1
        assert mp.almosteq(_mpf(region_delta(r, 2)), tenth, 1e-25)
    with pytest.raises(InvalidParameterError, match="must be >= 0"):
        region_delta(r, -1)


def test_laplace_has_no_reference_but_a_bracket():
    b = bracket_composition(laplace(1), 2, 2, eps_points=(1,))
    assert b.reference is None and b.area_lower_reference is None
    assert b.upper <= b.lower
    assert b.area_lower_upper > 0
    assert mp.mpf(b.deltas[0].lower) >= mp.mpf(b.deltas[0].upper)
    assert "Laplace_1" in format_brackets([b])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"k": 0}, "k"),
        ({"k": 2, "pieces": 0}, "pieces must be an integer >= 1"),
        ({"k": 2, "eps_points": ("-1",)}, "must be >= 0"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        bracket_composition(gaussian(1), **kwargs)


def test_format_lists_every_bracket(shrinking):
    text = format_brackets(shrinking)
    assert text.count("G_1  3") == 3
    assert "eps = 1/2: lower" in text
