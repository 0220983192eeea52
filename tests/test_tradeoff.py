"""Regions: active constraints, vertices, evaluation, inclusion, dominating pairs, mixtures."""

from __future__ import annotations

import warnings
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcompose_exact import InactiveConstraintWarning, InvalidParameterError
from dpcompose_exact.algebra import (
    QzElem,
    canonical_pair,
    dp_region,
    mixture_conjugate,
    mixture_minkowski,
    trivial_region,
)


def test_inactive_constraint_is_dropped_and_named():
    with pytest.warns(InactiveConstraintWarning, match=r"\(2/5, 13/50\)"):
        r = dp_region([("0.4", "0.26"), ("0.1", "0.001")])
    assert [r.domain.loss_str(l_) for l_ in r.losses] == ["1/10"]


def test_duplicate_and_dominated_constraints():
    with pytest.warns(InactiveConstraintWarning, match=r"\(3/10, 1/10\)"):
        r = dp_region([("0.3", "0.05"), ("0.3", "0.1")])
    assert len(r.constraints) == 1


def test_active_pair_keeps_both_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = dp_region([("0.3", "0"), ("0.15", "0.02")])
    assert len(r.constraints) == 2


@pytest.mark.parametrize(
    "pairs,msg",
    [
        ([("-0.1", "0")], "negative"),
        ([("0.1", "1")], r"outside the valid range \[0, 1\)"),
        ([("0.1", "-0.01")], "outside the valid range"),
        ([], "at least one"),
        ([("0.1",)], "expected \\(eps, delta\\)"),
    ],
)
def test_bad_constraints(pairs, msg):
    with pytest.raises(InvalidParameterError, match=msg):
        dp_region(pairs)


def test_vertices_of_a_single_constraint():
    # f_{log 2, 1/10}: f(0) = 9/10, fixed point c = (9/10)/3 = 3/10
    r = dp_region([("log(2)", "1/10")])
    verts = [(x.as_rational(), y.as_rational()) for x, y in r.vertices()]
    assert verts == [
        (0, Fraction(9, 10)),
        (Fraction(3, 10), Fraction(3, 10)),
        (Fraction(9, 10), 0),
        (1, 0),
    ]
    assert r(Fraction(1, 10)).as_rational() == Fraction(7, 10)
    assert r(Fraction(1, 2)).as_rational() == Fraction(1, 5)  # mirrored line (9/10 - t)/2


def test_inclusion_and_equality():
    a = dp_region([("log(2)", "0")])
    b = dp_region([("log(3)", "0")])
    assert a <= b and not b <= a
    assert a.intersect(b) == a
    assert a != b


def test_canonical_pair_reproduces_the_region():
    for pairs in (
        [("0.3", "0"), ("0.15", "0.02")],
        [("1", "0.01"), ("0.5", "0.1"), ("0", "0.3")],
        [("log(3)", "1/10")],
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InactiveConstraintWarning)
            r = dp_region(pairs)
        pld = canonical_pair(r)
        assert pld.total_mass(0) == 1
        assert pld.leak + pld.total_mass(1) == 1  # P1 has the mirrored leak
        assert pld.to_region() == r


def test_figure1_mixture():
    """Figure 1: f_{1.3,0} and f_{0.5,0.2} mixed with weights 1/2 (both routes agree)."""
    a = dp_region([("1.3", "0")])
    b = dp_region([("0.5", "0.2")])
    m1 = mixture_minkowski([Fraction(1, 2), Fraction(1, 2)], [a, b])
    m2 = mixture_conjugate([Fraction(1, 2), Fraction(1, 2)], [a, b])
    assert m1 == m2
    # the mixture's f at 0 is the average of f_i(0): (1 + 0.8)/2
    assert m1(0).as_rational() == Fraction(9, 10)
    # neither contains the other (caption of Figure 1)
    assert not m1 <= a and not a <= m1
    # the mixture equals the region of the mixed dominating pairs
    half = QzElem.from_rational(Fraction(1, 2))
    mixed = canonical_pair(a.in_domain(m1.domain)).mix(half, canonical_pair(b.in_domain(m1.domain)))
    assert mixed.to_region() == m1


def test_mixture_with_trivial_region_folds_a_leak():
    r = dp_region([("log(2)", "0")])
    m = mixture_minkowski([Fraction(1, 4), Fraction(3, 4)], [trivial_region(r.domain), r])
    # delta' = 1/4 + 3/4 delta at each eps
    assert m == dp_region([("log(2)", "1/4")])


def test_all_deltas_one_is_the_trivial_region():
    """Regression: from_constraints returned an empty list when every delta was 1."""
    from dpcompose_exact.numbers import ExpDomain
    from dpcompose_exact.regions.tradeoff import Region

    dom = ExpDomain(None)
    r = Region.from_constraints(dom, [((), QzElem.from_rational(1))])
    assert r == trivial_region(dom)
    assert r.intersect(r) == r
    assert r(Fraction(1, 3)).as_rational() == 0


def test_mixture_weights_must_sum_to_one():
    r = dp_region([("log(2)", "0")])
    with pytest.raises(InvalidParameterError, match="sum to"):
        mixture_minkowski([Fraction(1, 2), Fraction(1, 3)], [r, r])


region_st = st.lists(
    st.tuples(st.integers(0, 12), st.sampled_from([0, 1, 5, 20, 50])), min_size=1, max_size=3
)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(region_st, min_size=2, max_size=3), st.lists(st.integers(1, 5), min_size=3, max_size=3)
)
def test_property_conjugate_equals_minkowski(specs, raw_weights):
    regions = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InactiveConstraintWarning)
        for spec in specs:
            regions.append(dp_region([(Fraction(n, 10), Fraction(d, 100)) for n, d in spec]))
    ws = raw_weights[: len(regions)]
    weights = [Fraction(w, sum(ws)) for w in ws]
    m1 = mixture_minkowski(weights, regions)
    m2 = mixture_conjugate(weights, regions)
    assert m1 == m2
    # a mixture is at least as private as its least private part, no more than its most
    f0 = sum(w * r(0).as_rational() for w, r in zip(weights, regions))
    assert m1(0).as_rational() == f0
