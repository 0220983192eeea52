"""ZCDp, single-epoch tree aggregation, sampled compositions of Gaussians, RepeatAndSelect.

References are independent of the code under test: the Canonne-Kamath-Steinke bound
minimised over the order by mpmath at 40 digits, the Gaussian's closed form in mpmath,
dp_accounting's PLD accountant (pessimistic and optimistic at a fine grid) and its RDP
accountant.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("dp_accounting")

from dp_accounting import dp_event  # noqa: E402
from dp_accounting.pld import privacy_loss_distribution  # noqa: E402
from dp_accounting.privacy_accountant import (  # noqa: E402
    NeighboringRelation,
    UnsupportedEventError,
)
from dp_accounting.rdp import rdp_privacy_accountant  # noqa: E402

import dpcompose_exact as dx  # noqa: E402
from dpcompose_exact.errors import InvalidParameterError  # noqa: E402
from dpcompose_exact.integrations.dp_accounting import (  # noqa: E402
    DpConstraintsEvent,
    ExactAccountant,
)
from dpcompose_exact.integrations.events import event_kinds, tree_depth  # noqa: E402

ADD, SPECIAL = NeighboringRelation.ADD_OR_REMOVE_ONE, NeighboringRelation.REPLACE_SPECIAL
G = dp_event.GaussianDpEvent


def mp_frac(x) -> mpmath.mpf:
    if isinstance(x, mpmath.mpf):
        return x
    x = Fraction(x)
    return mpmath.mpf(x.numerator) / x.denominator


def cks_mp(rho, eps, xi=0) -> mpmath.mpf:
    """inf over alpha > 1 of the CKS bound, by mpmath's minimiser at 40 digits (capped at 1)."""
    with mpmath.workdps(40):
        r, e, x = mp_frac(rho), mp_frac(eps), mp_frac(xi)

        def log_bound(a):
            return (a - 1) * (x + r * a - e) - mpmath.log(a) + (a - 1) * mpmath.log(1 - 1 / a)

        # the log-bound is convex in alpha: scan a grid, then refine around the best point
        grid = [1 + mpmath.mpf(10) ** (k / mpmath.mpf(20)) for k in range(-200, 120)]
        best = min(grid, key=log_bound)
        a = mpmath.findroot(lambda t: mpmath.diff(log_bound, t), best)
        value = min(log_bound(a), log_bound(best))
        return min(mpmath.mpf(1), mpmath.exp(value))


def gauss_mp(mu2, eps) -> mpmath.mpf:
    """delta(eps) of G_mu, mu^2 = mu2, at 40 digits (Balle and Wang)."""
    with mpmath.workdps(40):
        mu, e = mpmath.sqrt(mp_frac(mu2)), mp_frac(eps)
        return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


def ends(value) -> tuple[mpmath.mpf, mpmath.mpf]:
    lo, hi = value.interval(25)
    with mpmath.workdps(40):
        return mpmath.mpf(lo), mpmath.mpf(hi)


# -- the zCDP bracket ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "rho, eps", [("1/2", "2"), ("1/2", "0"), ("1/100", "1/2"), ("3", "5"), ("1e-4", "1/20")]
)
def test_zcdp_delta_bracket_is_gaussian_below_and_the_cks_infimum_above(rho, eps):
    lo, hi = ends(dx.zcdp_delta(rho, eps))
    with mpmath.workdps(40):
        assert lo <= gauss_mp(2 * Fraction(rho), eps) <= lo * (1 + mpmath.mpf(10) ** -15)
        ref = cks_mp(rho, eps)
        # the upper end bounds the infimum from above, and the chosen order is near-optimal
        assert ref <= hi <= ref * (1 + mpmath.mpf(10) ** -9)


def test_zcdp_upper_end_is_not_above_dp_accountings_rdp_conversion():
    # dp_accounting's RdpAccountant converts the same RDP curve at a finite list of orders
    for rho, eps in (("0.5", 2.0), ("0.01", 0.5), ("2", 6.0)):
        acc = rdp_privacy_accountant.RdpAccountant()
        acc.compose(dp_event.ZCDpEvent(float(rho)))
        assert float(dx.zcdp_delta(rho, repr(eps)).interval(17)[1]) <= acc.get_delta(eps)


@settings(max_examples=25, deadline=None)
@given(
    st.fractions(min_value=Fraction(1, 10**4), max_value=5, max_denominator=10**4),
    st.fractions(min_value=0, max_value=8, max_denominator=100),
)
def test_zcdp_bracket_is_ordered_and_contains_the_gaussian(rho, t):
    # eps = rho + t sqrt(rho): deltas from 1 down to about 1e-15 (users' range)
    eps = rho + (t * Fraction(float(rho) ** 0.5)).limit_denominator(1000)
    lo, hi = ends(dx.zcdp_delta(rho, eps))
    assert lo <= gauss_mp(2 * rho, eps) <= hi


def test_zcdp_epsilon_bracket_inverts_the_delta_bracket():
    v = dx.zcdp_epsilon("1/100", "1e-5")
    lo, hi = ends(v)
    with mpmath.workdps(40):
        # at the upper eps the CKS bound is <= delta; at the lower eps the Gaussian's is delta
        assert cks_mp("1/100", hi) <= mpmath.mpf("1e-5") * (1 + mpmath.mpf(10) ** -9)
        assert gauss_mp(Fraction(1, 50), lo) >= mpmath.mpf("1e-5") * (1 - mpmath.mpf(10) ** -15)
    assert hi - lo > 0.04  # the looseness of the conversion, stated in the docs (0.0489)


def test_xi_adds_to_the_rdp_curve_and_rho_zero_is_pure_dp():
    lo, hi = ends(dx.zcdp_delta("1/2", "2", xi="1/10"))
    assert mpmath.almosteq(hi, cks_mp("1/2", "2", "1/10"), rel_eps=1e-9)
    assert dx.zcdp("0", "1/4") == dx.Mechanism.dp("1/4")
    with mpmath.workdps(30):
        e = mpmath.e ** mpmath.mpf("0.25")
        pure = (e - mpmath.e ** mpmath.mpf("0.1")) / (1 + e)
    lo, hi = ends(dx.zcdp_delta("0", "1/10", xi="1/4"))
    assert lo <= pure <= hi


def test_zcdp_constraints_are_valid_points_of_the_upper_curve():
    m = dx.zcdp("1/2")
    assert len(m.pairs) > 40
    for eps, delta in m.pairs:
        assert mp_frac(Fraction(delta)) >= cks_mp("1/2", Fraction(eps))


@pytest.mark.parametrize("rho", ["1/2", "1e-4", "3"])
def test_zcdp_mechanism_alone_is_within_3_percent_of_cks_and_above_the_gaussian(rho):
    c = dx.compose(dx.zcdp(rho), 1)
    r = Fraction(rho)
    for e in (r, 2 * r + Fraction(1, 10), 4 * r**0.5 if r < 1 else 2 * r):
        e = Fraction(e).limit_denominator(1000)
        lo, hi = ends(c.delta(e))
        ref = cks_mp(rho, e)
        assert gauss_mp(2 * r, e) <= lo
        # between grid points the constraints are looser (measured: at most 1.9%)
        assert hi <= max(ref * mpmath.mpf("1.03"), ref + mpmath.mpf(10) ** -13)


@pytest.mark.parametrize(
    "other",
    [
        dx.Mechanism([("0.3", "0"), ("0.15", "0.02")]),
        dx.randomized_response("1/2"),
        dx.discrete_laplace("1", 1),
        dx.laplace_noise("1").subsample("1/10"),
        dx.randomized_response("1/2").subsample("1/10"),
        dx.random_allocation(dx.gaussian_noise("1"), 10),
    ],
    ids=["constraints", "rr", "dlap", "sampled-laplace", "sampled-rr", "allocation"],
)
def test_zcdp_composes_next_to_every_old_kind_above_its_gaussian(other):
    # the 1/2-zCDP Gaussian (sigma = 1) in the zCDP mechanism's place bounds it from below
    up = dx.compose([(dx.zcdp("1/2"), 1), (other, 5)]).delta("3")
    low = dx.compose([(dx.gaussian_noise("1"), 1), (other, 5)]).delta("3")
    assert low.upper() <= up.lower() < 1


# -- ZCDpEvent in the accountant ---------------------------------------------------------------
def test_zcdp_events_add_their_rho_first():
    a = ExactAccountant()
    a.compose(dp_event.ZCDpEvent(0.25), 2)
    a.compose(dp_event.SelfComposedDpEvent(dp_event.ZCDpEvent(0.125), 4))
    b = ExactAccountant().compose(dp_event.ZCDpEvent(1.0))
    assert a.zcdp_only and a.delta_value("2").interval(20) == b.delta_value("2").interval(20)
    assert a.get_epsilon(1e-5) == b.get_epsilon(1e-5)
    kinds = event_kinds(dp_event.ComposedDpEvent([dp_event.ZCDpEvent(0.5)] * 3))
    assert kinds.rho == Fraction(3, 2) and kinds.items == [(kinds.zcdp_mechanism, 1)]
    assert any("upper bound" in n for n in kinds.notes)


def test_zcdp_alone_at_the_ends_of_the_curve():
    acc = ExactAccountant().compose(dp_event.ZCDpEvent(0.5))
    # the conversion tends to 0 (the constraints' last delta, 1e-13, is no leak of zCDP)
    assert acc.get_delta(float("inf")) == 0.0
    assert acc.get_epsilon(0.0) == float("inf")
    with pytest.raises(InvalidParameterError, match="no finite eps at delta = 0"):
        acc.epsilon_value(0)
    pure = ExactAccountant().compose(dp_event.ZCDpEvent(0.0, 0.5))  # xi-DP
    assert pure.get_epsilon(0.0) == 0.5


def test_zcdp_next_to_gaussians_lies_between_the_gaussian_and_the_rdp_conversion():
    events = [dp_event.ZCDpEvent(0.5), dp_event.SelfComposedDpEvent(G(2.0), 3)]
    acc = ExactAccountant()
    rdp = rdp_privacy_accountant.RdpAccountant()
    for e in events:
        acc.compose(e)
        rdp.compose(e)
    assert not acc.zcdp_only and any("upper bound" in n for n in acc.bound_notes)
    lo, hi = ends(acc.delta_value("2"))
    # below: the Gaussian of rho = 1/2 (mu^2 = 1) composed with three G(2): mu^2 = 7/4
    assert gauss_mp(Fraction(7, 4), 2) <= lo
    # measured: 0.15778 against the RDP conversion of the total rho = 7/8, 0.19450
    assert hi < rdp.get_delta(2.0) * 0.9


def test_zcdp_next_to_constraints_and_subsampled_gaussians():
    acc = ExactAccountant()
    acc.compose(dp_event.ZCDpEvent(0.5))
    acc.compose(dp_event.PoissonSampledDpEvent(0.1, G(1.0)), 10)
    acc.compose(DpConstraintsEvent([("0.5", "0")]), 3)
    d = acc.get_delta(3.0)
    # below: the same events with the rho-zCDP Gaussian (sigma = 1) in the zCDP event's
    # place (one of the mechanisms the zCDP event stands for)
    gauss = ExactAccountant().compose(G(1.0))
    gauss.compose(dp_event.PoissonSampledDpEvent(0.1, G(1.0)), 10)
    gauss.compose(DpConstraintsEvent([("0.5", "0")]), 3)
    assert gauss.delta_value("3").lower() <= d < 0.1
    sampled = dp_event.PoissonSampledDpEvent(0.1, dp_event.ZCDpEvent(0.5))
    with pytest.raises(UnsupportedEventError, match="not amplified by subsampling"):
        ExactAccountant().compose(sampled)
    with pytest.raises(ValueError, match="negative"):
        ExactAccountant().compose(dp_event.ZCDpEvent(-1.0))
    assert ExactAccountant().compose(dp_event.ZCDpEvent(0.0)).get_delta(0.0) == 0.0


def test_zcdp_spellings():
    from dpcompose_exact.mechanisms.families import build
    from dpcompose_exact.regions.specs import parse_mech_spec

    assert build(parse_mech_spec("zcdp(1/2):1")) == dx.zcdp("1/2")
    assert build(parse_mech_spec("zcdp(1/2,1/10):1")) == dx.zcdp("1/2", "1/10")
    with pytest.raises(InvalidParameterError, match="negative"):
        dx.zcdp("-1")


# -- tree aggregation ----------------------------------------------------------------------------
def test_tree_depth_is_the_bit_length_of_the_largest_count():
    import math

    for m in range(1, 300):
        assert tree_depth(m) == math.ceil(math.log2(m + 1))
    assert tree_depth([0, 5, 2]) == 3 and tree_depth([0]) == 0


@pytest.mark.parametrize("sigma, steps, count", [(2.0, [3, 100], 2), (1.5, 7, 1), (3.0, 1000, 5)])
def test_tree_aggregation_is_the_gaussian_of_depth_over_sigma_squared(sigma, steps, count):
    acc = ExactAccountant(SPECIAL)
    acc.compose(dp_event.SingleEpochTreeAggregationDpEvent(sigma, steps), count)
    depth = max(steps if isinstance(steps, list) else [steps]).bit_length()
    mu2 = count * depth / Fraction(repr(sigma)) ** 2
    for eps in ("0.5", "2"):
        lo, hi = ends(acc.delta_value(eps))
        assert lo <= gauss_mp(mu2, eps) <= hi
    # dp_accounting's RDP accountant (the same Gaussian's RDP curve, converted): above ours
    rdp = rdp_privacy_accountant.RdpAccountant(neighboring_relation=SPECIAL)
    rdp.compose(dp_event.SingleEpochTreeAggregationDpEvent(sigma, steps), count)
    assert acc.get_delta(1.0) <= rdp.get_delta(1.0)


def test_tree_aggregation_next_to_other_events_and_refusals():
    acc = ExactAccountant(SPECIAL)
    acc.compose(dp_event.SingleEpochTreeAggregationDpEvent(4.0, 15), 3)  # depth 4: 12 uses
    acc.compose(dp_event.LaplaceDpEvent(10.0), 2)
    assert 0 < acc.get_delta(1.0) < 1
    assert not ExactAccountant(ADD).supports(dp_event.SingleEpochTreeAggregationDpEvent(1.0, 3))
    with pytest.raises(UnsupportedEventError, match="REPLACE_SPECIAL"):
        ExactAccountant(ADD).compose(dp_event.SingleEpochTreeAggregationDpEvent(1.0, 3))
    with pytest.raises(ValueError, match="step_counts"):
        ExactAccountant(SPECIAL).compose(dp_event.SingleEpochTreeAggregationDpEvent(1.0, 0))
    zero = ExactAccountant(SPECIAL).compose(dp_event.SingleEpochTreeAggregationDpEvent(0.0, 3))
    assert zero.is_non_private


# -- sampled compositions ---------------------------------------------------------------------
def _pld_bracket(sigma, q, count, eps):
    """dp_accounting's optimistic and pessimistic PLD of a subsampled Gaussian (1e-4 grid)."""
    out = []
    for pessimistic in (False, True):
        one = privacy_loss_distribution.from_gaussian_mechanism(
            sigma,
            sampling_prob=q,
            pessimistic_estimate=pessimistic,
            value_discretization_interval=1e-4,
        )
        out.append(one.self_compose(count).get_delta_for_epsilon(eps))
    return out


@pytest.mark.parametrize(
    "inner, sigma",
    [
        (dp_event.ComposedDpEvent([G(3.0), G(4.0)]), 2.4),  # 1/9 + 1/16 = (5/12)^2
        (dp_event.SelfComposedDpEvent(G(2.0), 4), 1.0),
        (dp_event.ComposedDpEvent([G(1.0), dp_event.NoOpDpEvent()]), 1.0),
    ],
)
def test_sampled_composition_of_gaussians_is_one_subsampled_gaussian(inner, sigma):
    acc = ExactAccountant().compose(dp_event.PoissonSampledDpEvent(0.1, inner), 50)
    one = dp_event.PoissonSampledDpEvent(0.1, G(sigma))
    lo, hi = (float(x) for x in acc.delta_value("1").interval(17))
    optimistic, pessimistic = _pld_bracket(sigma, 0.1, 50, 1.0)
    assert optimistic * (1 - 1e-9) <= hi and lo <= pessimistic * (1 + 1e-9)
    assert acc.get_delta(1.0) == ExactAccountant().compose(one, 50).get_delta(1.0)


def test_sampled_gaussians_with_irrational_mu_are_bracketed_by_rational_ones():
    # before: refused; 1/1 + 1/4 = 5/4 is no square: read between the rational mu just
    # below and just above sqrt(5/4), both sides kept (the note says so)
    event = dp_event.PoissonSampledDpEvent(0.1, dp_event.ComposedDpEvent([G(1.0), G(2.0)]))
    acc = ExactAccountant().compose(event, 100)
    assert any("irrational mu" in n for n in acc.bound_notes)
    lo, hi = (float(x) for x in acc.delta_value("1").interval(17))
    optimistic, pessimistic = _pld_bracket(5**-0.5 * 2, 0.1, 100, 1.0)
    # measured: [0.27982419, 0.27982426]; dp_accounting at a 1e-5 grid: [0.279729, 0.279824237]
    assert optimistic <= hi and lo <= pessimistic and hi - lo < 1e-7
    e_lo, e_hi = (float(x) for x in acc.epsilon_value("1e-5").interval(17))
    assert e_lo <= acc.get_epsilon(1e-5) and e_hi <= acc.get_epsilon(1e-5) * (1 + 1e-12)


def test_other_sampled_compositions_are_refused_with_what_is_supported():
    mixed = dp_event.ComposedDpEvent([dp_event.LaplaceDpEvent(1.0), G(2.0)])
    with pytest.raises(UnsupportedEventError, match="every part is a GaussianDpEvent"):
        ExactAccountant().compose(dp_event.PoissonSampledDpEvent(0.1, mixed))
    details = ExactAccountant()._maybe_compose(dp_event.PoissonSampledDpEvent(0.1, mixed), 1, False)
    assert "unsupported DpEvent ComposedDpEvent" not in details.error_message


def _best_of(q, g):
    """Output law of the best of K runs of a mechanism with output law q on 0 < 1 < ...

    ``g`` is the probability generating function of K; P(best <= y) = g(F(y)), and the
    mass g(0) (K = 0) is the fixed output of no run.
    """
    out, cdf = [g(mpmath.mpf(0))], mpmath.mpf(0)
    for mass in q:
        out.append(g(cdf + mass) - g(cdf))
        cdf += mass
    return out


def _max_log_ratio(p, p2):
    return max(abs(mpmath.log(a / b)) for a, b in zip(p, p2) if a > 0 or b > 0)


def _tnb_pgf(eta, gamma):
    if eta == 0:  # logarithmic
        return lambda x: mpmath.log(1 - (1 - gamma) * x) / mpmath.log(gamma)
    return lambda x: ((1 - (1 - gamma) * x) ** -eta - 1) / (gamma**-eta - 1)


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 3.0, float("inf")])
def test_repeat_and_select_of_pure_dp_bounds_brute_force(shape):
    # randomized response p = 1/2 (log 3-DP) and a 3-output pure-DP mechanism, repeated
    # K times keeping the best output: the exact law of the best output, by its generating
    # function at 40 digits, for several means; its largest log-ratio is below our bound
    rr = dp_event.RandomizedResponseDpEvent(0.5, 2)
    acc = ExactAccountant(NeighboringRelation.REPLACE_ONE)
    acc.compose(dp_event.RepeatAndSelectDpEvent(rr, 3.0, shape))
    bound = acc.get_epsilon(0.0)
    worst = mpmath.mpf(0)
    with mpmath.workdps(40):
        pairs = [
            ([mpmath.mpf(3) / 4, mpmath.mpf(1) / 4], [mpmath.mpf(1) / 4, mpmath.mpf(3) / 4]),
            ([mpmath.mpf(x) / 15 for x in (9, 3, 3)], [mpmath.mpf(x) / 15 for x in (3, 3, 9)]),
            ([mpmath.mpf(x) / 13 for x in (1, 9, 3)], [mpmath.mpf(x) / 13 for x in (3, 9, 1)]),
        ]
        for gamma in ("0.9", "0.5", "0.1", "0.01"):
            if shape == float("inf"):  # the bound depends on the mean: the event's, 3

                def g(x):
                    return mpmath.exp(3 * (x - 1))
            else:
                g = _tnb_pgf(mpmath.mpf(repr(shape)), mpmath.mpf(gamma))
            for q, q2 in pairs:
                worst = max(worst, _max_log_ratio(_best_of(q, g), _best_of(q2, g)))
    assert worst <= bound
    # looseness (measured): the geometric bound 3 log 3 = 3.296 against 2.60 here
    assert worst > bound / 2


def test_repeat_and_select_composes_and_refuses_without_a_pure_eps():
    lap = dp_event.RepeatAndSelectDpEvent(dp_event.LaplaceDpEvent(2.0), 5.0, 1.0)
    acc = ExactAccountant().compose(lap)
    assert acc.get_epsilon(0.0) == 1.5  # 3 x (1/2): Liu and Talwar's geometric bound
    acc.compose(G(2.0), 3)
    assert 0 < acc.get_delta(2.0) < 1
    # a Gaussian: Papernot and Steinke's Renyi bounds (tests/test_truncated.py); an event
    # without certified Renyi divergences is refused with the reason
    assert ExactAccountant().supports(dp_event.RepeatAndSelectDpEvent(G(1.0), 3.0, 1.0))
    mog = dp_event.MixtureOfGaussiansDpEvent(1.0, [0, 1, 2], [0.5, 0.25, 0.25])
    event = dp_event.RepeatAndSelectDpEvent(mog, 3.0, float("inf"))
    assert not ExactAccountant().supports(event)
    with pytest.raises(UnsupportedEventError, match="without certified Renyi divergences"):
        ExactAccountant().compose(event)
    with pytest.raises(ValueError, match="mean >= 1"):
        ExactAccountant().compose(dp_event.RepeatAndSelectDpEvent(lap.event, 0.5, 1.0))
