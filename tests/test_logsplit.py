"""The log-split sum (dpcompose_exact.engines.logsplit) against the exact generating functions."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dpcompose_exact.engines.bounds import Bounded, delta_bounds, relative_width
from dpcompose_exact.engines.genfunc import compose_plds
from dpcompose_exact.engines.logsplit import LogSplit, TooLarge
from dpcompose_exact.engines.results import delta_value, epsilon_value
from dpcompose_exact.errors import BelowLeakError, InvalidParameterError
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.specs import parse_mech_spec
from dpcompose_exact.regions.tradeoff import dp_region

THREE = [("log(2)", "1e-6"), ("log(3)-log(2)", "1e-4"), ("1/10", "0.01")]
FIVE = ["0.3,0+0.15,0.02", "log(2),1e-5", "0.1,0", "1,1e-6+0.25,1e-3", "log(3)-log(2),0.01"]


def pair(constraints):
    return canonical_pair(dp_region(constraints, warn=False))


def inside(value, enclosure) -> bool:
    b, e = value.ball(200), enclosure.ball()
    return bool(e.lower() <= b.lower() and b.upper() <= e.upper())


@pytest.mark.parametrize("k", [1, 3, 8])
@pytest.mark.parametrize("eps", ["0", "1/2", "2", "log(2)", "log(3)-log(2)+1/10"])
def test_three_constraints_enclose_the_exact_delta(k, eps):
    """Also eps on a lattice loss (the ball cannot place the grid point: clipped term)."""
    p = pair(THREE)
    exact = delta_value(compose_plds([(p, k)]), eps)
    v = LogSplit([(p, k)]).delta(eps)
    assert inside(exact, v)
    assert relative_width(v) < 1e-12 or exact.ball(50).upper() < 1e-30


def test_a_shallow_threshold_stays_sound_and_says_so():
    """Almost every term omitted: the omitted mass widens the enclosure, never breaks it."""
    p = pair(THREE)
    exact = delta_value(compose_plds([(p, 8)]), "1/2")
    v = LogSplit([(p, 8)], tail=-2.0).delta("1/2")
    assert inside(exact, v)
    assert relative_width(v) > 1e-2


def test_five_kinds_enclose_the_exact_delta_and_epsilon():
    kinds = [
        (canonical_pair(parse_mech_spec(f"{s}:1").region()), i % 2 + 1) for i, s in enumerate(FIVE)
    ]
    region = compose_plds(kinds, memory_limit=None)
    split = LogSplit(kinds)
    for eps in ["0", "1", "3/2"]:
        assert inside(delta_value(region, eps), split.delta(eps))
    e = split.epsilon("1/10")
    assert inside(epsilon_value(region, "1/10"), e)
    assert relative_width(e) < 1e-6


def test_epsilon_encloses_the_exact_value():
    p = pair(THREE)
    region = compose_plds([(p, 6)])
    split = LogSplit([(p, 6)])
    for d in ["1e-3", "1/100", "1/2"]:
        assert inside(epsilon_value(region, d), split.epsilon(d))
    with pytest.raises(BelowLeakError, match="leak"):
        split.epsilon("1e-7")
    with pytest.raises(InvalidParameterError, match=r"valid range \[0, 1\)"):
        split.epsilon("1")


def test_too_large_structures_are_refused_and_bounds_fall_back_to_the_grid():
    p = pair(THREE)
    with pytest.raises(TooLarge, match="too many"):
        LogSplit([(p, 200)], max_terms=50)
    exact = delta_value(compose_plds([(p, 4)]), "1")
    assert inside(exact, delta_bounds([(p, 4)], "1", width="1e-3"))


def test_bounded_reuses_the_sum_across_queries():
    p = pair(THREE)
    b = Bounded([(p, 30)], width="1e-6")
    d1, d2 = b.delta("1"), b.delta("2")
    assert len(b._splits) == 1
    assert relative_width(d1) <= 1e-6 and relative_width(d2) <= 1e-6
    assert d2 < d1


@pytest.mark.slow
def test_three_constraints_at_k_1000_meet_the_width_target():
    """The issue's case: delta(2) at k = 1000 to relative width 1e-6 (about 6 s here)."""
    p = pair(THREE)
    v = delta_bounds([(p, 1000)], "2", width="1e-6")
    assert relative_width(v) <= 1e-6
    # contains the (much wider) grid enclosure's midpoint region: 0.93362...
    assert v.ball().lower() > 0.9336 and v.ball().upper() < 0.9337
    with pytest.raises(BelowLeakError, match="leak"):
        Bounded([(p, 1000)]).epsilon("1e-5")


def test_enclosures_keep_every_bit_of_their_ends():
    """Regression: the union of the two ends and the width were taken at 53 bits, so no
    enclosure could be narrower than about 1e-16 however many digits were asked."""
    import flint

    from dpcompose_exact.numbers.value import Value

    with flint.ctx.workprec(200):
        lo = flint.arb(1) / 3
        hi = lo + flint.arb(2) ** -150
        lo, hi = lo.lower(), hi.upper()
    v = Value.from_interval(lo, hi)
    assert relative_width(v) < 1e-40
    assert v.certified_digits() >= 40
    p = pair(THREE)
    exact = delta_value(compose_plds([(p, 5)]), "1/2")
    d = delta_bounds([(p, 5)], "1/2", width="1e-31")
    assert inside(exact, d) and d.decimal(30) == exact.decimal(30)


def test_decimals_only_with_several_generators_take_the_log_split_sum():
    from dpcompose_exact.engines.bounds import Bounded
    from dpcompose_exact.engines.finiteroutes import ComposeOptions, compose_routed

    p = pair(THREE)
    region, route = compose_routed([(p, 30)], ComposeOptions(closed_forms=False, allow_bounds=True))
    assert route.method == "bounds" and "log-split" in route.why
    assert isinstance(region, Bounded)
    assert region.delta("2").certified_digits() >= 30
    # closed forms asked: still the exact route; small k: the exact route is cheap
    assert compose_routed([(p, 3)], ComposeOptions(closed_forms=True))[1].method == "exact"
    decimals = ComposeOptions(closed_forms=False, allow_bounds=True)
    assert compose_routed([(p, 3)], decimals)[1].method == "exact"


@pytest.mark.slow
def test_log_split_digits_equal_the_exact_routes_digits():
    from dpcompose_exact.engines.finiteroutes import ComposeOptions, compose_routed

    p = pair(THREE)
    region, _ = compose_routed([(p, 30)], ComposeOptions(closed_forms=False, allow_bounds=True))
    exact = compose_plds([(p, 30)], memory_limit=None)
    for eps in ["1", "2"]:
        assert region.delta(eps).decimal(30) == delta_value(exact, eps).decimal(30)
    assert region.epsilon("1/1000").decimal(30) == epsilon_value(exact, "1/1000").decimal(30)


def test_asymmetric_pairs_are_refused():
    from dpcompose_exact.numbers import ExpDomain, QzElem
    from dpcompose_exact.regions.pld import PLD

    half = QzElem.from_rational(Fraction(1, 2))
    dom = ExpDomain(Fraction(1))
    coin = PLD.from_masses(dom, [((1,), half), ((-1,), half)], QzElem.from_rational(0))
    with pytest.raises(InvalidParameterError, match="symmetric"):
        LogSplit([(coin, 3)])
