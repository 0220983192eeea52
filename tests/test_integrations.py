"""ExactAccountant (dp_accounting) and the exports to dp_accounting, prv_accountant, OpenDP."""

from __future__ import annotations

import itertools
import math
import warnings
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("dp_accounting")

import dp_accounting  # noqa: E402
import dp_accounting.privacy_accountant_test as pat  # noqa: E402
import mpmath  # noqa: E402
from dp_accounting import (  # noqa: E402
    ComposedDpEvent,
    GaussianDpEvent,
    LaplaceDpEvent,
    NeighboringRelation,
    NoOpDpEvent,
    PoissonSampledDpEvent,
    RandomizedResponseDpEvent,
    SelfComposedDpEvent,
    UnsupportedEventError,
)
from dp_accounting.dp_event import DiscreteLaplaceDpEvent  # noqa: E402

import dpcompose_exact as dx  # noqa: E402
from dpcompose_exact.errors import InactiveConstraintWarning, InvalidParameterError  # noqa: E402
from dpcompose_exact.integrations.dp_accounting import (  # noqa: E402
    DpConstraintsEvent,
    ExactAccountant,
    exact_number,
    gaussian_constraint,
    gaussian_delta_ball,
)

R1 = NeighboringRelation.REPLACE_ONE
PAPER = [("0.3", "0"), ("0.15", "0.02")]


# ---------------------------------------------------------------------------------------
# dp_accounting's own accountant test pattern


class TestExactAccountantPattern(pat.PrivacyAccountantTest):
    """The checks dp_accounting runs on every PrivacyAccountant."""

    def _make_test_accountants(self):
        return [
            ExactAccountant(),
            ExactAccountant(NeighboringRelation.REPLACE_ONE),
            ExactAccountant(NeighboringRelation.REPLACE_SPECIAL),
        ]


# ---------------------------------------------------------------------------------------
# DpConstraintsEvent and the float convention


def test_twenty_paper_mechanisms_delta_at_one_is_a_tight_upper_bound():
    acc = ExactAccountant().compose(SelfComposedDpEvent(DpConstraintsEvent(PAPER), 20))
    reported = acc.get_delta(1.0)
    # exact value by an independent route: Theorem 3's closed form on the (u, v) lattice
    exact = dx.theorem3_lattice(dx.Mechanism(PAPER), 20).delta("1")
    assert exact <= Fraction(reported)
    ex = Fraction(exact.decimal(40))
    assert (Fraction(reported) - ex) / ex <= Fraction(1, 10**15)


def test_get_epsilon_is_an_upper_bound_within_a_few_ulps():
    acc = ExactAccountant().compose(SelfComposedDpEvent(DpConstraintsEvent(PAPER), 20))
    reported = acc.get_epsilon(1e-5)
    exact = dx.theorem2_mixture(dx.Mechanism(PAPER), 20).epsilon("1e-5")
    assert exact <= Fraction(reported)
    assert Fraction(reported) - Fraction(exact.decimal(40)) <= Fraction(4, 10**15)


def test_floats_in_events_are_read_as_their_shortest_decimal():
    # dp_accounting's own events carry floats by design: read as their repr decimal
    rr = RandomizedResponseDpEvent(noise_parameter=0.1, num_buckets=2)
    a = ExactAccountant(NeighboringRelation.REPLACE_ONE).compose(rr)
    # RR(p = 1/10, 2 buckets): ln((2 (1 - p) + p) / p) = ln(19)-DP, exactly
    assert a.composition.epsilon("0").exact == "log(19)"
    # DpConstraintsEvent is this package's event: exact values only, floats refused
    with pytest.raises(TypeError, match=r"DpConstraintsEvent eps: got float 0\.3; .*Decimal"):
        DpConstraintsEvent([(0.3, 0), ("0.15", "0.02")])
    with pytest.raises(TypeError, match=r"DpConstraintsEvent delta: got float 1e-05"):
        DpConstraintsEvent([("0.1", 1e-5)])
    b = ExactAccountant().compose(SelfComposedDpEvent(DpConstraintsEvent(PAPER), 5))
    c = ExactAccountant().compose(
        SelfComposedDpEvent(
            DpConstraintsEvent([(Decimal("0.3"), 0), (Decimal("0.15"), Decimal("2E-2"))]), 5
        )
    )
    assert c.composition == b.composition
    # dp_accounting's serialization round trip keeps the exact strings
    event = DpConstraintsEvent([("0.1", "1e-5"), ("log(2)", "1/3")])
    assert dp_accounting.DpEvent.from_named_tuple(event.to_named_tuple()) == event
    assert exact_number(0.1) == Fraction(1, 10)
    assert exact_number(0.1 + 0.2) == Fraction("0.30000000000000004")
    with pytest.raises(InvalidParameterError, match="not finite"):
        exact_number(float("nan"))


def test_ledger_of_a_used_accountant_replays_exactly():
    # an accountant that was already used: its ledger (the event tree) is the input
    dl = SelfComposedDpEvent(DiscreteLaplaceDpEvent(0.5, 1), 3)
    used = dp_accounting.pld.PLDAccountant().compose(dl).compose(NoOpDpEvent())
    replay = ExactAccountant().compose(used.ledger)
    assert replay.composition == ExactAccountant().compose(dl).composition
    assert replay.get_delta(0.5) >= used.get_delta(0.5) * (1 - 1e-6)
    event = ComposedDpEvent(
        [SelfComposedDpEvent(DpConstraintsEvent(PAPER), 3), DpConstraintsEvent([("1", "1e-6")])]
    )
    ours = ExactAccountant().compose(event)
    again = ExactAccountant().compose(ours.ledger)
    direct = dx.compose([(dx.Mechanism(PAPER), 3), (dx.Mechanism.dp("1", "1e-6"), 1)])
    assert again.composition == direct and again.is_exact


def test_epsilon_is_infinite_below_the_leak_and_zero_at_delta_one():
    acc = ExactAccountant().compose(SelfComposedDpEvent(DpConstraintsEvent([("1", "0.1")]), 2))
    assert acc.get_epsilon(0.01) == math.inf  # leak = 1 - 0.9^2 = 0.19
    assert acc.get_epsilon(1.0) == 0
    assert acc.get_delta(math.inf) >= 0.19
    assert Fraction(acc.get_delta(math.inf)) - Fraction(19, 100) < Fraction(1, 10**15)


def test_unsupported_events_and_bad_parameters_are_refused_with_a_reason():
    acc = ExactAccountant()
    ps = PoissonSampledDpEvent(0.1, dp_accounting.UnsupportedDpEvent())
    assert not acc.supports(ps)
    with pytest.raises(UnsupportedEventError, match="Unsupported event"):
        acc.compose(ps)
    rr = RandomizedResponseDpEvent(0.5, 3)
    assert not ExactAccountant(NeighboringRelation.REPLACE_SPECIAL).supports(rr)
    with pytest.raises(UnsupportedEventError, match="REPLACE_ONE only"):
        ExactAccountant().compose(rr)
    with pytest.raises(UnsupportedEventError, match="outside the valid range"):
        acc.compose(DpConstraintsEvent([("0.1", "1.5")]))
    with pytest.raises(InvalidParameterError, match="pieces"):
        ExactAccountant(pieces=0)


def test_huge_discrete_laplace_sensitivity_is_refused_before_allocating():
    # before: the pair of 10^9 + 1 losses was built until FLINT aborted (SIGABRT, 5.5 GB)
    import time

    from dpcompose_exact.errors import ResourceLimitError
    from dpcompose_exact.integrations.events import event_composition

    event = DiscreteLaplaceDpEvent(1.0, 10**9)
    start = time.process_time()
    with pytest.raises(
        ResourceLimitError,
        match=r"shift 1000000000: .* 1000000001 distinct losses .* memory limit is 6442450944 "
        r"bytes \(6 GiB\), which fits shifts up to \d+",
    ):
        ExactAccountant().compose(event)
    for ev in (event, DiscreteLaplaceDpEvent("log(2)", 10**9)):
        with pytest.raises(ResourceLimitError, match=r"shift 1000000000: .*fits shifts up to"):
            event_composition(ev)
    with pytest.raises(ResourceLimitError, match=r"shift 2000: .*limit is 100000000 bytes"):
        event_composition(DiscreteLaplaceDpEvent(1.0, 1000), R1, max_memory=10**8)
    assert time.process_time() - start < 2.0
    # below the limit the pair is still built and composed
    assert event_composition(DiscreteLaplaceDpEvent(1.0, 3)).epsilon(0).decimal(3) == "3.00"


def test_non_private_variants():
    for event in (
        GaussianDpEvent(0.0),
        LaplaceDpEvent(0),
        DiscreteLaplaceDpEvent(0.0, 1),
    ):
        acc = ExactAccountant().compose(event)
        assert acc.is_non_private and acc.get_epsilon(0.5) == math.inf
        assert acc.get_delta(3.0) == 1
    acc = ExactAccountant(R1).compose(RandomizedResponseDpEvent(0.0, 4))
    assert acc.get_delta(100.0) == 1
    acc = ExactAccountant(R1).compose(RandomizedResponseDpEvent(0.3, 1))  # one bucket
    assert acc.get_epsilon(1e-9) == 0 and acc.composition is None


# ---------------------------------------------------------------------------------------
# randomized response and discrete Laplace against brute-force enumeration


def _mp(q: Fraction) -> mpmath.mpf:
    return mpmath.mpf(q.numerator) / q.denominator


def _rr_pair(p: Fraction, k: int) -> list[tuple[mpmath.mpf, mpmath.mpf]]:
    """Outputs of RR(p, k) on inputs 0 and 1: (P(o | 0), P(o | 1)) per bucket o."""
    out = []
    for o in range(k):
        p0 = (1 - p if o == 0 else 0) + p / k
        p1 = (1 - p if o == 1 else 0) + p / k
        out.append(
            (mpmath.mpf(p0.numerator) / p0.denominator, mpmath.mpf(p1.numerator) / p1.denominator)
        )
    return out


def _dlap_pair(a: Fraction, shift: int, width: int) -> list[tuple[mpmath.mpf, mpmath.mpf]]:
    """Outputs y of DLap(a) noise added to 0 and to ``shift`` (|y| <= width)."""
    aa = mpmath.mpf(a.numerator) / a.denominator
    c = mpmath.tanh(aa / 2)
    return [
        (c * mpmath.exp(-aa * abs(y)), c * mpmath.exp(-aa * abs(y - shift)))
        for y in range(-width, width + shift + 1)
    ]


def _brute_delta(pairs: list[list[tuple]], eps: Fraction) -> mpmath.mpf:
    """sum over the product outcomes of (P(o) - e^eps Q(o))_+."""
    e = mpmath.exp(mpmath.mpf(eps.numerator) / eps.denominator)
    total = mpmath.mpf(0)
    for combo in itertools.product(*pairs):
        p = q = mpmath.mpf(1)
        for a, b in combo:
            p *= a
            q *= b
        d = p - e * q
        if d > 0:
            total += d
    return total


def test_randomized_response_and_discrete_laplace_match_brute_force():
    event = ComposedDpEvent(
        [
            RandomizedResponseDpEvent(0.25, 3),
            SelfComposedDpEvent(RandomizedResponseDpEvent(0.5, 2), 2),
            DiscreteLaplaceDpEvent(0.5, 1),  # REPLACE_ONE: the shift is 2 x sensitivity
        ]
    )
    acc = ExactAccountant(R1).compose(event)
    with mpmath.workdps(40):
        pairs = [
            _rr_pair(Fraction(1, 4), 3),
            _rr_pair(Fraction(1, 2), 2),
            _rr_pair(Fraction(1, 2), 2),
            _dlap_pair(Fraction(1, 2), 2, 160),  # tail beyond 160: e^-80
        ]
        for eps in ("0", "0.5", "1", "2", "3.5"):
            brute = _brute_delta(pairs, Fraction(eps))
            reported = acc.get_delta(float(eps))
            exact = acc.composition.delta(eps)
            assert abs(Fraction(exact.decimal(30)) - Fraction(mpmath.nstr(brute, 30))) <= (
                Fraction(1, 10**25)
            )
            assert exact <= Fraction(reported)


def test_discrete_laplace_alone_matches_brute_force_under_add_or_remove():
    acc = ExactAccountant().compose(SelfComposedDpEvent(DiscreteLaplaceDpEvent(1.0, 2), 2))
    with mpmath.workdps(40):
        pairs = [_dlap_pair(Fraction(1), 2, 50)] * 2  # tail beyond 50: e^-50
        for eps in ("0", "1", "2.5"):
            brute = _brute_delta(pairs, Fraction(eps))
            got = Fraction(acc.composition.delta(eps).decimal(30))
            assert abs(got - Fraction(mpmath.nstr(brute, 30))) <= Fraction(1, 10**20)


def test_get_delta_works_when_the_composition_is_known_by_bounds_only():
    # regression: get_delta read ``region.domain`` and crashed with AttributeError on a
    # Bounded region (RR x400 + discrete Laplace x400 under REPLACE_ONE); max_memory=1
    # sends this small case down the same "bounds" route
    event = ComposedDpEvent(
        [
            SelfComposedDpEvent(RandomizedResponseDpEvent(0.5, 2), 3),
            DiscreteLaplaceDpEvent(1.0, 1),  # REPLACE_ONE: shift 2
        ]
    )
    acc = ExactAccountant(R1, max_memory=1).compose(event)
    assert acc.composition.method == "bounds"
    with mpmath.workdps(40):
        pairs = [_rr_pair(Fraction(1, 2), 2)] * 3 + [_dlap_pair(Fraction(1), 2, 60)]
        for eps in ("0", "1", "2.5"):
            brute = _brute_delta(pairs, Fraction(eps))
            reported = acc.get_delta(float(eps))
            assert brute <= reported <= brute * (1 + mpmath.mpf(10) ** -6)
    assert acc.get_delta(math.inf) == 0.0  # no leak


def test_randomized_response_counts_are_composed():
    # dp_accounting 0.6's PLDAccountant drops the count of SelfComposedDpEvent(RR, n);
    # ours must equal the explicit n-fold ComposedDpEvent.
    rr = RandomizedResponseDpEvent(0.3, 4)
    a = ExactAccountant(R1).compose(SelfComposedDpEvent(rr, 10))
    b = ExactAccountant(R1).compose(ComposedDpEvent([rr] * 10))
    assert a.composition == b.composition
    library = dp_accounting.pld.PLDAccountant(R1).compose(ComposedDpEvent([rr] * 10))
    assert a.get_epsilon(1e-5) <= library.get_epsilon(1e-5)


# ---------------------------------------------------------------------------------------
# Gaussian and Laplace: sound bounds by approximation from below


def test_gaussian_constraint_is_a_certified_guarantee():
    mu2 = Fraction(5, 2)
    eps, delta = gaussian_constraint(mu2, Fraction(1, 10**5))
    assert eps.denominator <= 100 and Fraction(1, 10**6) < delta <= Fraction(1, 10**5)
    with mpmath.workdps(50):
        m = mpmath.sqrt(mpmath.mpf(5) / 2)
        x = mpmath.mpf(eps.numerator) / eps.denominator
        true = mpmath.ncdf(-x / m + m / 2) - mpmath.exp(x) * mpmath.ncdf(-x / m - m / 2)
    assert mpmath.mpf(delta.numerator) / delta.denominator >= true
    assert gaussian_delta_ball(mu2, eps, 128).upper() <= flint_arb(delta)


def flint_arb(q: Fraction):
    import flint

    return flint.arb(flint.fmpq(q.numerator, q.denominator))


def test_gaussian_bound_is_above_the_analytic_gaussian_delta():
    acc = ExactAccountant().compose(SelfComposedDpEvent(GaussianDpEvent(2.0), 10))
    assert not acc.is_exact and acc.bound_notes
    with mpmath.workdps(40):
        m = mpmath.sqrt(10) / 2
        for eps in (0.5, 1.0, 2.0, 4.0):
            e = mpmath.mpf(eps)
            true = mpmath.ncdf(m / 2 - e / m) - mpmath.exp(e) * mpmath.ncdf(-m / 2 - e / m)
            got = acc.get_delta(eps)
            assert true <= got <= true * (1 + mpmath.mpf(10) ** -14)  # closed form, rounded up
    pld = dp_accounting.pld.PLDAccountant().compose(SelfComposedDpEvent(GaussianDpEvent(2.0), 10))
    assert acc.get_epsilon(1e-5) <= pld.get_epsilon(1e-5)  # tighter than the pessimistic PLD


def test_gaussian_and_laplace_answers_are_two_sided_enclosures():
    from test_pldgrid import laplace_delta_truth

    g = ExactAccountant().compose(
        ComposedDpEvent([SelfComposedDpEvent(GaussianDpEvent(2.0), 6), GaussianDpEvent(1.0)])
    )
    with mpmath.workdps(40):
        mu = mpmath.sqrt(mpmath.mpf(6) / 4 + 1)  # mu^2 = 6 / 2^2 + 1 / 1^2
        for eps in ("0.5", "3"):
            e = mpmath.mpf(eps)
            truth = mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)
            lo, hi = g.delta_value(eps).interval(30)
            assert mpmath.mpf(lo) <= truth <= mpmath.mpf(hi)
        lo, hi = (mpmath.mpf(x) for x in g.epsilon_value("1e-5").interval(30))
        d = [
            mpmath.ncdf(mu / 2 - x / mu) - mpmath.exp(x) * mpmath.ncdf(-mu / 2 - x / mu)
            for x in (lo, hi)
        ]
        assert d[0] > mpmath.mpf("1e-5") >= d[1]
    # Laplace under REPLACE_ONE: eps0 = 2 / b = 1, three uses
    lap = ExactAccountant(R1).compose(SelfComposedDpEvent(LaplaceDpEvent(2.0), 3))
    with mpmath.workdps(30):
        for eps in ("0.25", "1.5"):
            truth = laplace_delta_truth(Fraction(1), 3, Fraction(eps))
            lo, hi = lap.delta_value(eps).interval(25)
            assert mpmath.mpf(lo) <= truth <= mpmath.mpf(hi)
            assert truth <= lap.get_delta(float(eps))
    assert lap.get_delta(3.0) == 0.0  # 3 x 1-DP is 3-DP


def test_mixed_gaussian_and_randomized_response_is_the_closed_form():
    # RR(1/2, 2 buckets) is the pair (3/4, 1/4) at losses +-log 3, so conditioning on it
    # delta(eps) = 3/4 delta_G(eps - log 3) + 1/4 delta_G(eps + log 3) for all real eps
    # (independent of the code: mpmath's normal CDF at 40 digits)
    event = ComposedDpEvent([GaussianDpEvent(4.0), RandomizedResponseDpEvent(0.5, 2)])
    acc = ExactAccountant(R1).compose(event)  # REPLACE_ONE: mu = 2 / sigma = 1/2
    assert any("closed form" in note for note in acc.bound_notes) and not acc.is_exact
    with mpmath.workdps(40):
        mu, l3 = mpmath.mpf(1) / 2, mpmath.log(3)

        def dg(x):
            return mpmath.ncdf(mu / 2 - x / mu) - mpmath.exp(x) * mpmath.ncdf(-mu / 2 - x / mu)

        for eps in ("0.5", "1.2", "2", "0"):
            e = mpmath.mpf(eps)
            truth = 3 * dg(e - l3) / 4 + dg(e + l3) / 4
            lo, hi = (mpmath.mpf(x) for x in acc.delta_value(eps).interval(30))
            assert lo <= truth <= hi and hi - lo <= truth * mpmath.mpf(10) ** -25
            assert truth <= acc.get_delta(float(eps)) <= truth * (1 + mpmath.mpf(10) ** -14)
        lo, hi = (mpmath.mpf(x) for x in acc.epsilon_value("1e-5").interval(30))
        assert 3 * dg(lo - l3) / 4 + dg(lo + l3) / 4 > mpmath.mpf("1e-5")
        assert 3 * dg(hi - l3) / 4 + dg(hi + l3) / 4 <= mpmath.mpf("1e-5")
        assert hi - lo <= hi * mpmath.mpf(10) ** -9


def test_gaussian_next_to_constraints_is_within_1e_9_of_the_truth():
    # the Gaussian conditioned on the exact loss of the constraints' pair (its canonical
    # pair, built independently here from the region's vertices: P-masses at +-l)
    pairs = [("0.3", "0"), ("0.15", "0.02")]
    event = ComposedDpEvent(
        [SelfComposedDpEvent(GaussianDpEvent(2.0), 10), DpConstraintsEvent(pairs)]
    )
    acc = ExactAccountant().compose(event)
    # one use of the (0.3, 0) & (0.15, 0.02) mechanism: the six-letter pair of
    # docs/theory.md, section 1, built independently by the brute-force helper
    from brute import double_dp_letters

    with mpmath.workdps(40):
        mp = mpmath.mpf
        p0, p1 = double_dp_letters(
            mpmath.exp(mp("0.3")), mpmath.exp(mp("0.15")), 0, mp("0.02"), mp(1)
        )
        mu = mpmath.sqrt(mp(10) / 4)

        def dg(x):
            return mpmath.ncdf(mu / 2 - x / mu) - mpmath.exp(x) * mpmath.ncdf(-mu / 2 - x / mu)

        leak = sum(p0[x] for x in p0 if p1[x] == 0)
        atoms = [(mpmath.log(p0[x] / p1[x]), p0[x]) for x in p0 if p1[x] != 0 and p0[x] != 0]
        for eps in ("0.5", "2", "4"):
            truth = leak + sum(m * dg(mp(eps) - loss) for loss, m in atoms)
            lo, hi = (mp(x) for x in acc.delta_value(eps).interval(30))
            assert lo <= truth <= hi and hi - lo <= truth * mp(10) ** -20
            assert truth <= acc.get_delta(float(eps)) <= truth * (1 + mp(10) ** -9)
        lo, hi = (mp(x) for x in acc.epsilon_value("1e-5").interval(30))
        for x, above in ((lo, True), (hi, False)):
            d = leak + sum(m * dg(x - loss) for loss, m in atoms)
            assert (d > mp("1e-5")) if above else (d <= mp("1e-5"))
        assert hi - lo <= hi * mp(10) ** -9


def test_laplace_epsilon_is_not_looser_than_pld_on_small_rows():
    for b, k in ((0.5, 10), (1.0, 10), (2.0, 10)):
        event = SelfComposedDpEvent(LaplaceDpEvent(b), k)
        ours = ExactAccountant().compose(event).get_epsilon(1e-5)
        pld = dp_accounting.pld.PLDAccountant().compose(event).get_epsilon(1e-5)
        assert ours <= pld


def test_laplace_bound_is_pure_dp_and_above_the_pld_accountant_optimistic():
    acc = ExactAccountant().compose(SelfComposedDpEvent(LaplaceDpEvent(2.0), 3))
    assert acc.get_delta(1.5) == 0  # 3 x (1/2)-DP is 1.5-DP
    opt = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    opt.compose(SelfComposedDpEvent(LaplaceDpEvent(2.0), 3))
    assert acc.get_delta(0.5) >= opt.get_delta(0.5) * (1 - 1e-3)


# ---------------------------------------------------------------------------------------
# calibrate_dp_mechanism with the exact accountant


def test_calibrate_dp_mechanism_returns_a_parameter_that_meets_the_target_exactly():
    def event(x: float):
        e = Fraction(repr(x))  # the decimal of the float, halved exactly
        return SelfComposedDpEvent(DpConstraintsEvent([(e, 0), (e / 2, "0.02")]), 10)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InactiveConstraintWarning)
        x = dp_accounting.calibrate_dp_mechanism(
            ExactAccountant,
            event,
            target_epsilon=2.0,
            target_delta=1e-5,
            bracket_interval=dp_accounting.ExplicitBracketInterval(0.01, 2.0),
            tol=1e-4,
        )
        e = Fraction(repr(x))
        comp = dx.compose(dx.Mechanism([(e, 0), (e / 2, "0.02")]), 10)
    assert comp.epsilon("1e-5") <= 2  # checked exactly (certified sign of log(...) - 2)
    beyond = e + Fraction(2, 10**4)  # Brent's tolerance is 1e-4: the root is closer
    assert dx.compose(dx.Mechanism([(beyond, 0), (beyond / 2, "0.02")]), 10).epsilon("1e-5") > 2


# ---------------------------------------------------------------------------------------
# exports


@pytest.mark.parametrize(
    "pairs,k",
    [(PAPER, 10), ([("log(3)", "0"), ("log(2)", "1/10")], 4), ([("0.7", "1e-3")], 6)],
)
def test_to_dp_accounting_is_pessimistic(pairs, k):
    comp = dx.compose(dx.Mechanism(pairs), k)
    pld = comp.to_dp_accounting(value_discretization_interval=1e-3)
    for eps in ("0", "0.1", "0.5", "1", "2.3"):
        exact = comp.delta(eps)
        library = Fraction(float(pld.get_delta_for_epsilon(float(eps))))
        assert exact <= library * (1 + Fraction(1, 10**12))  # the library's float sums
    loose = Fraction(float(pld.get_delta_for_epsilon(1.0)))
    assert loose - Fraction(comp.delta("1").decimal(30)) < Fraction(1, 100)


def test_exported_pld_stays_sound_when_composed_with_more_copies_in_dp_accounting():
    m = dx.Mechanism(PAPER)
    pld = m.to_dp_accounting().self_compose(8)
    exact = dx.compose(m, 8)
    for eps in (0.0, 0.5, 1.0, 2.0):
        assert exact.delta(Fraction(repr(eps))) <= Fraction(float(pld.get_delta_for_epsilon(eps)))


def test_to_prv_upper_bound_covers_the_exact_delta():
    prv_accountant = pytest.importorskip("prv_accountant")
    comp = dx.compose(dx.Mechanism(PAPER), 5)
    acc = prv_accountant.PRVAccountant(
        prvs=[dx.Mechanism(PAPER).to_prv()],
        max_self_compositions=[5],
        eps_error=1e-3,
        delta_error=1e-10,
    )
    lo, est, hi = acc.compute_delta(1.0, [5])
    exact = comp.delta("1")
    assert Fraction(lo) <= Fraction(exact.decimal(30)) <= Fraction(hi)
    single = comp.to_prv()
    assert abs(single.pm_inf) == 0 and abs(float(single.cdf(100.0)) - 1) < 1e-12


def test_to_opendp_profile_is_an_upper_bound():
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib", "honest-but-curious")
    comp = dx.compose(dx.Mechanism(PAPER), 20)
    profile = comp.to_opendp()
    got = profile.delta(1.0)
    assert comp.delta("1") <= Fraction(got)
    assert abs(profile.epsilon(1e-5) - float(comp.epsilon("1e-5"))) < 1e-9


def test_certified_route_keeps_the_bounds():
    event = SelfComposedDpEvent(DpConstraintsEvent(PAPER), 50)
    acc = ExactAccountant(max_memory=1).compose(event)  # too small: certified route
    assert not acc.composition.is_exact
    exact = dx.compose(dx.Mechanism(PAPER), 50)
    got = Fraction(acc.get_delta(1.0))
    assert (
        exact.delta("1")
        <= got
        <= Fraction(exact.delta("1").decimal(30)) * (1 + Fraction(1, 10**12))
    )
    assert exact.epsilon("1e-5") <= Fraction(acc.get_epsilon(1e-5))
    exported = acc.composition.to_dp_accounting()
    assert exact.delta("1") <= Fraction(float(exported.get_delta_for_epsilon(1.0)))


@settings(max_examples=12, deadline=None)
@given(
    e1=st.integers(1, 40),
    e2=st.integers(0, 40),
    d2=st.integers(0, 50),
    k=st.integers(1, 6),
    eps=st.floats(0, 6, allow_nan=False),
)
def test_bounds_hold_for_random_mechanisms(e1, e2, d2, k, eps):
    pairs = [(Fraction(e1, 20), 0), (Fraction(e2, 40), Fraction(d2, 1000))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InactiveConstraintWarning)
        acc = ExactAccountant().compose(SelfComposedDpEvent(DpConstraintsEvent(pairs), k))
        exact = dx.compose(dx.Mechanism(pairs), k)
    at = Fraction(repr(eps))
    from dpcompose_exact.presentation.export import delta_upper

    reference = Fraction(exact.delta(at).decimal(30)) if at.denominator <= 100 else None
    got = Fraction(acc.get_delta(eps))
    assert delta_upper(exact.result, at) <= got
    if reference is not None:
        assert reference * (1 - Fraction(1, 10**25)) <= got
    pld = exact.to_dp_accounting(value_discretization_interval=1e-3)
    # dp_accounting evaluates the exported PLD in floats: allow its rounding (1e-12 relative)
    library = Fraction(float(pld.get_delta_for_epsilon(eps))) * (1 + Fraction(1, 10**12))
    assert delta_upper(exact.result, at) <= library
