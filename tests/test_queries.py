"""delta(eps) and eps(delta) at any exact query point, for exact and certified regions.

The query never joins the composition's field: these tests check the values against an
independent brute-force hockey-stick sum (tests/brute.py, mpmath), against the certified
route, and against the closed forms read back by sympy.
"""

from __future__ import annotations

import time
from fractions import Fraction

import mpmath
import pytest
import sympy
from brute import double_dp_letters, product

from dpcompose_exact.engines.certified import compose_certified
from dpcompose_exact.engines.results import delta_of_eps, delta_value, eps_of_delta, epsilon_value
from dpcompose_exact.errors import InvalidParameterError
from dpcompose_exact.numbers import linear_form, parse_exact
from dpcompose_exact.paper.theorems import pld_composition
from dpcompose_exact.presentation.rows import point_row
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.tradeoff import dp_region

PAIRS = [("0.3", "0"), ("0.15", "0.02")]
QUERIES = ["0.123457", "0", "0.15", "0.3", "0.45", "1/7", "log(2)", "1/3 + log(3/2)", "2.4", "7"]


@pytest.fixture(scope="module")
def region4():
    return pld_composition(PAIRS, 4)


def _brute_delta(eps: str, k: int = 4) -> mpmath.mpf:
    with mpmath.workdps(60):
        z1, z2 = mpmath.exp(mpmath.mpf(3) / 10), mpmath.exp(mpmath.mpf(3) / 20)
        p0, p1 = double_dp_letters(z1, z2, mpmath.mpf(0), mpmath.mpf(2) / 100, one=mpmath.mpf(1))
        r = mpmath.exp(mpmath.mpf(str(sympy.N(parse_exact(eps), 70))))
        return mpmath.fsum(max(0, a - r * b) for a, b in product(p0, p1, k))


@pytest.mark.parametrize("eps", QUERIES)
def test_delta_matches_brute_force_hockey_stick(region4, eps):
    got = delta_value(region4, eps)
    want = _brute_delta(eps)
    with mpmath.workdps(60):
        if want == 0:
            assert got.decimal(30) == "0"
        else:
            assert abs(mpmath.mpf(got.decimal(30)) / want - 1) < mpmath.mpf(10) ** -28


@pytest.mark.parametrize("eps", QUERIES)
def test_closed_form_reads_back(region4, eps):
    v = delta_value(region4, eps)
    expr = sympy.sympify(v.exact)
    assert not expr.free_symbols and not expr.has(sympy.Float)
    with mpmath.workdps(50):
        back = mpmath.mpf(str(sympy.N(expr, 45)))
        dec = mpmath.mpf(v.decimal(35))
        assert abs(back - dec) <= abs(dec) * mpmath.mpf(10) ** -33


def test_query_outside_the_field_keeps_a_e_eps_b_form(region4):
    text = delta_value(region4, "0.123457").exact
    assert "exp(123457/1000000)" in text  # e^eps is one factor, not a new generator
    # in the region's field (a multiple of 3/20): an element of Q(z) as before
    assert "exp(" in delta_value(region4, "0.45").exact
    assert "123457" not in delta_value(region4, "0.45").exact


def test_listed_loss_gives_the_listed_delta_exactly(region4):
    dom = region4.domain
    for loss, d in region4.constraints:
        v = delta_value(region4, dom.loss_str(loss))
        assert v.exact == dom.elem_closed_form(d)


def test_in_field_query_agrees_with_region_delta_at(region4):
    dom = region4.domain
    for eps in ("0", "0.15", "0.45", "0.6", "3"):
        loss = dom.loss(linear_form(Fraction(eps)))
        assert delta_value(region4, eps) == region4.delta_at(loss).as_rational() or (
            delta_value(region4, eps).decimal(40) == dom.decimal(region4.delta_at(loss), 40)
        )


def test_exact_and_certified_agree():
    region = pld_composition(PAIRS, 30)
    cert = compose_certified([(canonical_pair(dp_region(PAIRS)), 30)], digits=40)
    for eps in ("0.123457", "0", "0.7", "log(3)", "4.5", "100"):
        assert delta_value(cert, eps).decimal(25) == delta_value(region, eps).decimal(25)
    for d in ("1e-5", "0.3", "0.01", "1e-40"):
        assert epsilon_value(cert, d).decimal(25) == epsilon_value(region, d).decimal(25)


@pytest.mark.parametrize("d", ["0.5", "0.3", "0.1", "1e-3", "1e-9", "0"])
def test_eps_of_delta_inverts_delta_of_eps(region4, d):
    e = epsilon_value(region4, d)
    with mpmath.workdps(60):
        want = mpmath.mpf(Fraction(d).numerator) / Fraction(d).denominator
        if e.decimal(5) == "0":  # delta(0) is already below d
            assert _brute_delta("0") <= want
            return
        # the brute-force hockey stick at the certified 45-digit eps gives back d
        got = _brute_delta(e.decimal(45))
        assert abs(got - want) <= mpmath.mpf(10) ** -40


def test_query_cost_does_not_depend_on_the_denominator():
    """Regression: 0.123457 next to steps of 3/20 made every degree 10^5 times larger."""
    region = pld_composition(PAIRS, 20)
    t = time.perf_counter()
    for eps in ("0.123457", "123456789/1000000000000", "0.6666667"):
        delta_value(region, eps).decimal(30)
    assert time.perf_counter() - t < 10  # was minutes and gigabytes


def test_curve_points_build_no_closed_form_unless_asked(region4):
    p = delta_of_eps(region4, "0.123457", 20)
    row = point_row(p.epsilon_value, p.delta_value, 20, exact=False)
    assert row.keys() == {"epsilon_decimal", "delta_decimal"}
    assert p.delta_value._cache == {} or "closed" not in p.delta_value._cache
    q = eps_of_delta(region4, "1e-3", 20)
    assert q.delta is None and q.epsilon.startswith("log(")


def test_bad_queries(region4):
    with pytest.raises(InvalidParameterError, match="negative"):
        delta_value(region4, "-0.1")
    with pytest.raises(InvalidParameterError, match="outside the valid range"):
        epsilon_value(region4, "1")
    leaky = pld_composition([("0.3", "0.01")], 3)
    with pytest.raises(InvalidParameterError, match="below the probability"):
        epsilon_value(leaky, "0.001")


def test_equal_values_with_different_closed_forms_compare_equal_exactly():
    """A - exp(eps) B (query outside the field) equals the same delta computed in the
    joined field: balls cannot decide equality, the exact zero test does."""
    from fractions import Fraction

    import dpcompose_exact as dx
    from dpcompose_exact.algebra import domain_for
    from dpcompose_exact.engines.results import delta_value

    region = dx.compose(dx.Mechanism.dp("3/20"), 2).region
    far = delta_value(region, "1/7")  # degrees would grow 21-fold: kept as A - exp(eps) B
    assert "exp(1/7)" in far.exact
    joined = region.domain.join(domain_for([Fraction(1, 7)]))
    near = delta_value(region.in_domain(joined), "1/7")  # one element of the joined field
    assert far == near and far <= near and not far < near
    assert far != dx.compose(dx.Mechanism.dp("3/20"), 2).delta("1/8")
