"""The paper's results: three exact routes, brute force, KOV, remarks, regressions."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
import sympy
from brute import compose_pairs_k as compose
from brute import (
    double_dp_letters,
    hetero_pairs,
    product,
    region_exact,
    region_mp,
)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dpcompose_exact import InvalidParameterError, ResourceLimitError
from dpcompose_exact.algebra import dp_region
from dpcompose_exact.paper.theorems import (
    heterogeneous_composition,
    kov_composition,
    pld_composition,
    remark1_bound,
    remark2_bound,
    theorem1_closed_form,
    theorem2_mixture,
    theorem3_lattice,
)

PAPER = (["0.3", "0.15"], ["0", "0.02"])

PARAMS = [
    (["0.3", "0.15"], ["0", "0.02"]),
    (["1", "0.5"], ["0", "0.1"]),
    (["0.7", "0.3"], ["0.01", "0.05"]),  # eps1/eps2 = 7/3, delta1 > 0
    (["1.3", "0"], ["0", "0.2"]),  # eps2 = 0: a total-variation constraint
    (["log(3)", "log(2)"], ["0", "1/10"]),  # incommensurable generators log 2, log 3
    (["1/2 + log(2)", "1/4"], ["1/50", "1/10"]),  # mixed rational and log generators
    (["0.4", "0.1"], ["0.001", "0.1"]),
]


def as_pairs(eps, delta):
    return list(zip(eps, delta))


def exact_list(region):
    """[(e^eps, delta)] as Fractions (only for regions whose values are rational)."""
    dom = region.domain
    out = []
    for loss, d in region.constraints:
        e = dom.exp_loss(loss).as_rational()
        r = d.as_rational()
        assert e is not None and r is not None
        out.append((e, r))
    return out


@pytest.mark.parametrize("eps,delta", PARAMS)
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_three_routes_agree_exactly(eps, delta, k):
    a, _ = compose(as_pairs(eps, delta), k)
    b = theorem2_mixture(eps, delta, k)
    c = theorem3_lattice(eps, delta, k)
    assert a == b
    assert a == c
    assert hash(a) == hash(b) == hash(c)
    assert len(a.constraints) >= k // 2 + 1


@pytest.mark.parametrize("k", [8, 12])
def test_three_routes_agree_larger_k(k):
    eps, delta = PAPER
    a, _ = compose(as_pairs(eps, delta), k)
    assert a == theorem2_mixture(eps, delta, k) == theorem3_lattice(eps, delta, k)


@pytest.mark.slow
def test_three_routes_agree_at_the_theorem_limit():
    """At k = THEOREM_K_LIMIT (60) the closed forms equal the exact route, every digit.

    Was: 18-79 s for Theorems 2 and 3 (a gcd per addition of two masses); the masses are
    now summed as integer polynomials over one denominator (a few seconds).
    """
    from dpcompose_exact.paper.theorems import THEOREM_K_LIMIT, pld_composition

    eps, delta = PAPER
    a = pld_composition(as_pairs(eps, delta), THEOREM_K_LIMIT)  # the generating functions
    b = theorem2_mixture(eps, delta, THEOREM_K_LIMIT)
    c = theorem3_lattice(eps, delta, THEOREM_K_LIMIT)
    assert a == b == c  # equal elements: the same canonical forms, printed the same
    assert len(a.constraints) == 121


@pytest.mark.parametrize("k", [6, 9])
def test_closed_forms_agree_on_mixed_generators(k):
    """The common denominator holds for log and mixed rational/log generators too."""
    for eps, delta in PARAMS[4:6]:
        a, _ = compose(as_pairs(eps, delta), k)
        assert a == theorem2_mixture(eps, delta, k) == theorem3_lattice(eps, delta, k)


@pytest.mark.parametrize(
    "z1,z2,d1,d2",
    [
        (Fraction(3), Fraction(2), Fraction(0), Fraction(1, 10)),
        (Fraction(4), Fraction(3, 2), Fraction(1, 20), Fraction(1, 5)),
        (Fraction(2), Fraction(1), Fraction(0), Fraction(1, 4)),  # eps2 = 0
        (Fraction(9, 4), Fraction(3, 2), Fraction(1, 100), Fraction(1, 10)),  # z1 = z2^2
    ],
)
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_brute_force_rational_exponentials(z1, z2, d1, d2, k):
    """e^eps rational: enumeration of the product distribution in Fractions, exactly."""
    eps = [
        sympy.log(sympy.Rational(z1.numerator, z1.denominator)),
        sympy.log(sympy.Rational(z2.numerator, z2.denominator)),
    ]
    p0, p1 = double_dp_letters(z1, z2, d1, d2, one=Fraction(1))
    expected = region_exact(list(product(p0, p1, k)))
    region, _ = compose(as_pairs(eps, [d1, d2]), k)
    assert exact_list(region) == expected
    assert exact_list(theorem3_lattice(eps, [d1, d2], k)) == expected


@pytest.mark.parametrize("k", [2, 4])
def test_brute_force_transcendental(k):
    """Rational eps: enumeration with mpmath at 60 digits agrees to 45 digits."""
    mpmath.mp.dps = 60
    z1, z2 = mpmath.exp(mpmath.mpf(3) / 10), mpmath.exp(mpmath.mpf(3) / 20)
    p0, p1 = double_dp_letters(z1, z2, mpmath.mpf(0), mpmath.mpf(1) / 50, one=mpmath.mpf(1))
    expected = region_mp(list(product(p0, p1, k)), mpmath.mpf(10) ** -40)
    region, _ = compose(as_pairs(*PAPER), k)
    dom = region.domain
    assert len(region.constraints) == len(expected)
    for (loss, d), (ratio, dd) in zip(region.constraints, expected):
        assert abs(mpmath.mpf(dom.loss_decimal(loss, 50)) - mpmath.log(ratio)) < 1e-45
        assert abs(mpmath.mpf(dom.decimal(d, 50)) - dd) < 1e-45


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("eps,delta", [("log(2)", "0"), ("log(3)", "1/10"), ("log(3/2)", "1/50")])
def test_kov_matches_enumeration(eps, delta, k):
    z = Fraction(sympy.exp(sympy.sympify(eps)))
    d = Fraction(delta)
    p0 = {0: (1 - d) * z / (1 + z), 1: (1 - d) / (1 + z), 2: d, 3: Fraction(0)}
    p1 = {0: p0[1], 1: p0[0], 2: Fraction(0), 3: d}
    expected = region_exact(list(product(p0, p1, k)))
    assert exact_list(kov_composition(eps, delta, k)) == expected
    assert kov_composition(eps, delta, k) == pld_composition([(eps, delta)], k)


@pytest.mark.parametrize("k", [1, 2, 5, 9, 16])
def test_kov_equals_generating_function_route(k):
    assert kov_composition("0.3", "1e-5", k) == pld_composition([("0.3", "1e-5")], k)


@pytest.mark.parametrize("x,y", [(1, 0), (0, 2), (2, 3), (4, 1), (3, 3)])
def test_theorem1_matches_enumeration(x, y):
    zs = [Fraction(3)] * x + [Fraction(2)] * y
    expected = region_exact(hetero_pairs(zs))
    region = theorem1_closed_form("log(3)", x, "log(2)", y)
    assert exact_list(region) == expected
    assert region == heterogeneous_composition([("log(3)", x), ("log(2)", y)])


def test_heterogeneous_three_kinds_matches_enumeration():
    zs = [Fraction(3)] * 2 + [Fraction(2)] * 2 + [Fraction(5, 4)] * 3
    expected = region_exact(hetero_pairs(zs))
    region = heterogeneous_composition([("log(3)", 2), ("log(2)", 2), ("log(5/4)", 3)])
    assert exact_list(region) == expected


def test_remark2_is_the_eps2_zero_case():
    """Remark 2's first factor is the double composition with eps2 = 0 and delta2 = eta."""
    k = 4
    z2 = Fraction(3, 2)
    d1, d2 = Fraction(0), Fraction(1, 10)
    eta = d2 + (1 - d2) * (z2 - 1) / (z2 + 1)
    eps = ["log(4)", "log(3/2)"]
    bound = remark2_bound(eps, [d1, d2], k)
    # independent: eps2 = 0 double-DP region by enumeration, intersected with KOV(eps2)
    p0, p1 = double_dp_letters(Fraction(4), Fraction(1), d1, eta, one=Fraction(1))
    tv = dp_region([("log(4)", d1), ("0", eta)])
    assert tv.constraints[0][1].as_rational() == eta
    first = pld_composition([("log(4)", d1), ("0", eta)], k)
    assert exact_list(first) == region_exact(list(product(p0, p1, k)))
    assert bound == first.intersect(kov_composition("log(3/2)", d2, k))
    exact, _ = compose(as_pairs(eps, [d1, d2]), k)
    assert exact <= bound
    assert exact <= remark1_bound(eps, [d1, d2], k)


@pytest.mark.parametrize("k", [3, 20])
def test_remarks_contain_exact_region_figure2(k):
    exact, _ = compose(as_pairs(*PAPER), k)
    r1 = remark1_bound(*PAPER, k)
    r2 = remark2_bound(*PAPER, k)
    assert exact <= r1 and exact <= r2
    assert not r1 <= exact  # the baselines are strictly looser


def test_float_ceiling_drops_tv_constraints_region_too_large():
    """docs/theory.md, section 7: float ceil gives 4 where the exact value is 3; we keep eps = 0.

    Dropping the eps_{u,v} = 0 constraints makes the region LARGER (a looser guarantee).
    """
    k = 5
    e1, e2 = 0.3, 0.15
    floats = [math.ceil((k * e1 - v * (e1 - e2)) / (e1 + e2)) for v in (1, 4)]
    exact = [
        math.ceil((k * Fraction(3, 10) - v * Fraction(3, 20)) / Fraction(9, 20)) for v in (1, 4)
    ]
    # eps_{u,v} = 0 at (u, v) = (3, 1) and (2, 4); the float ceiling pushes both past the
    # lattice boundary (the exact ceiling at v = 4 is 2, not 3)
    assert exact == [3, 2]
    assert floats == [4, 3]
    region = theorem3_lattice(*PAPER, k)
    dom = region.domain
    assert region.constraints[0][0] == dom.zero_loss()
    # the float code's region: the same list without the eps = 0 constraint
    from dpcompose_exact.regions.tradeoff import Region

    wrong = Region.from_constraints(dom, region.constraints[1:], warn=False)
    assert region <= wrong and not wrong <= region
    gap = max(float(dom.decimal(region(x) - wrong(x), 20)) for x, _ in wrong.vertices())
    assert 0.0083 < gap < 0.0085


def test_k1_is_the_mechanism():
    for eps, delta in PARAMS:
        region, _ = compose(as_pairs(eps, delta), 1)
        assert region == dp_region(as_pairs(eps, delta), warn=False)


def test_theorems_need_two_active_constraints():
    with pytest.raises(InvalidParameterError, match="two active constraints"):
        theorem2_mixture(["0.3", "0.15"], ["0", "0.5"], 3)
    with pytest.raises(InvalidParameterError, match="exactly two"):
        theorem3_lattice(["0.3"], ["0"], 3)


def test_bad_k():
    with pytest.raises(InvalidParameterError, match="positive integer"):
        compose(as_pairs(*PAPER), 0)
    with pytest.raises(InvalidParameterError, match="positive integer"):
        kov_composition("0.3", "0", True)


def test_refuses_results_that_do_not_fit():
    with pytest.raises(ResourceLimitError, match="smaller k"):
        compose(as_pairs(*PAPER), 100000)


def test_unknown_method():
    with pytest.raises(InvalidParameterError, match="unknown method 'magic'"):
        compose(as_pairs(*PAPER), 3, method="magic")


# --------------------------------------------------------------------------- properties
eps_st = st.integers(min_value=1, max_value=15)
delta_st = st.sampled_from([Fraction(0), Fraction(1, 100), Fraction(1, 20)])


@st.composite
def double_dp_params(draw):
    n1 = draw(eps_st)
    n2 = draw(st.integers(min_value=0, max_value=n1 - 1)) if n1 > 1 else 0
    d1 = draw(delta_st)
    d2 = d1 + draw(st.sampled_from([Fraction(1, 50), Fraction(1, 10), Fraction(1, 4)]))
    return [Fraction(n1, 10), Fraction(n2, 10)], [d1, d2]


def _is_valid_tradeoff(region):
    dom = region.domain
    verts = region.vertices()
    assert dom.sign(verts[0][0]) == 0 and dom.compare(verts[-1][0], 1) == 0
    assert dom.sign(verts[-1][1]) == 0
    slopes = []
    for (x0, y0), (x1, y1) in zip(verts, verts[1:]):
        assert dom.sign(x1 - x0) > 0
        slopes.append((y1 - y0) / (x1 - x0))
    for s0, s1 in zip(slopes, slopes[1:]):
        assert dom.compare(s0, s1) < 0  # strictly convex at every vertex
    for x, y in verts:
        assert dom.compare(y, 1 - x) <= 0  # f(t) <= 1 - t
        assert dom.sign(y) >= 0
    mirrored = {(y, x) for x, y in verts if dom.sign(x) > 0 or dom.sign(y) == 0}
    for x, y in verts:
        if dom.sign(y) > 0 and dom.compare(y, 1 - 0) != 0:
            assert region(y) == x  # symmetric: f(f(t)) = t on the boundary
    del mirrored


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(double_dp_params(), st.integers(min_value=1, max_value=5))
def test_property_routes_agree_and_region_valid(params, k):
    eps, delta = params
    mech = dp_region(as_pairs(eps, delta), warn=False)
    assume(len(mech.constraints) == 2)
    a, _ = compose(as_pairs(eps, delta), k)
    assert a == theorem3_lattice(eps, delta, k)
    if k <= 3:
        assert a == theorem2_mixture(eps, delta, k)
    _is_valid_tradeoff(a)


@settings(max_examples=20, deadline=None)
@given(double_dp_params(), st.integers(min_value=1, max_value=6))
def test_property_tradeoff_decreases_with_k(params, k):
    """Composing once more lowers f strictly: R_k is a strict subset of R_{k+1}."""
    eps, delta = params
    a, _ = compose(as_pairs(eps, delta), k)
    b, _ = compose(as_pairs(eps, delta), k + 1)
    assert a <= b
    assert not b <= a


@settings(max_examples=20, deadline=None)
@given(double_dp_params())
def test_property_one_copy_is_the_mechanism(params):
    eps, delta = params
    a, _ = compose(as_pairs(eps, delta), 1)
    assert a == dp_region(as_pairs(eps, delta), warn=False)
