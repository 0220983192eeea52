"""Certified two-sided bounds (dpcompose_exact.engines.bounds) against the exact routes."""

from __future__ import annotations

from fractions import Fraction

import flint
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcompose_exact.engines.bounds import Bounded, delta_bounds, epsilon_bounds, relative_width
from dpcompose_exact.engines.certified import compose_certified
from dpcompose_exact.engines.genfunc import compose_plds
from dpcompose_exact.engines.grid import enclose, grid_pairs
from dpcompose_exact.engines.logsplit import LogSplit
from dpcompose_exact.engines.results import delta_value, epsilon_value
from dpcompose_exact.errors import CertificationError, InvalidParameterError
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.tradeoff import dp_region

THREE = [("log(2)", "1e-6"), ("log(3)-log(2)", "1e-4"), ("1/10", "0.01")]


def pair(constraints):
    return canonical_pair(dp_region(constraints, warn=False))


def inside(value, enclosure) -> bool:
    """True when the (tight) ball of ``value`` lies inside the enclosure."""
    b, e = value.ball(200), enclosure.ball()
    return bool(e.lower() <= b.lower() and b.upper() <= e.upper())


@pytest.mark.parametrize("k", [3, 8])
@pytest.mark.parametrize("eps", ["0", "1/2", "2"])
def test_three_generators_enclose_the_exact_delta(k, eps):
    p = pair(THREE)
    exact = delta_value(compose_plds([(p, k)]), eps)
    enc = enclose([(p, k)], terms=4001)
    assert inside(exact, enc.delta(eps))


def test_three_generators_enclose_the_exact_epsilon():
    p = pair(THREE)
    region = compose_plds([(p, 6)])
    enc = enclose([(p, 6)], terms=4001)
    for d in ["1e-3", "1/100"]:
        assert inside(epsilon_value(region, d), enc.epsilon(d))


@pytest.mark.slow
@pytest.mark.parametrize("k", [20, 40])
def test_three_generators_contain_exact_at_k_20_to_40(k):
    p = pair(THREE)
    region = compose_plds([(p, k)], memory_limit=None)
    enc = enclose([(p, k)], terms=20001)
    split = LogSplit([(p, k)])
    for eps in ["1", "2"]:
        assert inside(delta_value(region, eps), enc.delta(eps))
        assert inside(delta_value(region, eps), split.delta(eps))
    assert inside(epsilon_value(region, "1/100"), enc.epsilon("1/100"))
    assert inside(epsilon_value(region, "1/100"), split.epsilon("1/100"))


def test_one_generator_bounds_contain_the_certified_route():
    p = pair([("0.3", "0"), ("0.15", "0.02")])
    cert = compose_certified([(p, 300)], digits=30)
    v = delta_bounds([(p, 300)], "1", width="1e-3")
    assert inside(delta_value(cert, "1"), v)


def test_grid_points_are_kept_exactly():
    """With every loss on the grid both pairs equal the true pair: the width is 0."""
    p = pair([("0.3", "0"), ("0.15", "0.02")])
    lower, upper, step = grid_pairs(p, 3)
    assert step == Fraction(1, 20)
    truth = p.to_region()
    for eps in ["0", "3/20", "1/2"]:
        a = delta_value(lower.to_region(), eps)
        b = delta_value(upper.to_region(), eps)
        assert a == delta_value(truth, eps) == b


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(["log(2)", "log(3)-log(2)", "log(5)", "log(3)+1/7", "2*log(2)-1/3"]),
    st.sampled_from(["0", "1e-3", "1/10"]),
    st.integers(min_value=1, max_value=40),
    st.fractions(min_value=0, max_value=3, max_denominator=50),
)
def test_one_step_pairs_are_ordered(eps, delta, refine, t):
    """lower <= true <= upper for delta(t), the per-kind order the proof rests on."""
    p = pair([(eps, delta)])
    lower, upper, _ = grid_pairs(p, refine)
    truth = delta_value(p.to_region(), t)
    assert delta_value(lower.to_region(), t) <= truth <= delta_value(upper.to_region(), t)


def test_finer_grids_give_narrower_lower_bounds():
    """A finer grid's floor is higher: the lower bound cannot decrease when N is multiplied."""
    p = pair(THREE)
    coarse = enclose([(p, 10)], refine=5).delta("1")
    fine = enclose([(p, 10)], refine=40).delta("1")
    assert coarse.ball().lower() <= fine.ball().lower()
    assert relative_width(fine) < relative_width(coarse)


def test_width_target_drives_the_refinement():
    p = pair(THREE)
    loose = delta_bounds([(p, 30)], "2", width="1e-1")
    tight = delta_bounds([(p, 30)], "2", width="1e-4")
    assert relative_width(loose) <= flint.arb("0.1")
    assert relative_width(tight) <= flint.arb("1e-4")


def test_bounds_are_not_presented_as_more_than_they_are():
    p = pair(THREE)
    v = enclose([(p, 20)], refine=2).delta("1")
    with pytest.raises(CertificationError, match="certified to"):
        v.decimal(30)
    lo, hi = v.interval(6)
    assert Fraction(lo) <= Fraction(hi)
    b = v.ball()
    assert flint.arb(lo) <= b.lower() and b.upper() <= flint.arb(hi)


def test_bounded_route_object_caches_and_checks_inputs():
    p = pair(THREE)
    b = Bounded([(p, 5)], width="1e-2")
    assert b.delta("1") is b.delta("1")
    with pytest.raises(TypeError, match="float"):
        Bounded([(p, 5)], width=1e-2)
    with pytest.raises(InvalidParameterError, match="must be > 0"):
        epsilon_bounds([(p, 5)], "1/100", width="0")
    with pytest.raises(InvalidParameterError, match="leak"):
        b.epsilon("1e-9")


def test_upper_rounding_is_a_ceiling_for_small_masses():
    """Regression: FLINT's // truncates, so -((-p) // d) rounded masses below 2^-bits to 0."""
    import flint

    from dpcompose_exact.engines.grid import _shift

    p = flint.fmpz_poly([1, 5, 9, 0, 4, 16])
    assert _shift(p, 2, up=True).coeffs() == [1, 2, 3, 0, 1, 4]
    assert _shift(p, 2, up=False).coeffs() == [0, 1, 2, 0, 1, 4]


def test_bounds_enclose_tiny_deltas_far_in_the_tail():
    """Regression: the upper bound of a delta of about 1e-41 came out as 0."""
    import dpcompose_exact as dx

    m = dx.Mechanism([("0.3", "0"), ("0.15", "0.02")])
    exact = dx.compose(m, 50).delta("14.7")
    lo, hi = dx.compose(m, 50, method="bounds").delta("14.7").interval(12)
    assert Fraction(lo) <= exact <= Fraction(hi) and Fraction(hi) > 0
