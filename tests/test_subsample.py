"""Subsampling (engines.subsample, Mechanism.subsample, event trees), checked against
an independent brute-force enumeration of the product distributions (mpmath, 60 digits)
and against dp_accounting's PLD where it is correct (it brackets the exact value)."""

from __future__ import annotations

import itertools
import math
from decimal import Decimal
from fractions import Fraction as F

import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.engines.subsample import subsample_pld
from dpcompose_exact.errors import InvalidParameterError, UnsupportedExpressionError
from dpcompose_exact.regions.pld import canonical_pair


@pytest.fixture(autouse=True)
def _precision():
    with mpmath.workdps(60):
        yield


def _mp(x: F) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _brute_delta(steps: list[tuple[list[F], list[F]]], eps: mpmath.mpf) -> mpmath.mpf:
    """max(H(A||B), H(B||A)) of the product of the listed pairs, by enumerating outcomes."""
    g = mpmath.exp(eps)
    fwd = rev = mpmath.mpf(0)
    for outcome in itertools.product(*[range(len(a)) for a, _ in steps]):
        x = y = mpmath.mpf(1)
        for (a, b), i in zip(steps, outcome):
            x *= _mp(a[i])
            y *= _mp(b[i])
        fwd += max(0, x - g * y)
        rev += max(0, y - g * x)
    return max(fwd, rev)


def _brute_delta_mp(steps: list[tuple[list, list]], eps: mpmath.mpf) -> mpmath.mpf:
    """:func:`_brute_delta` for pairs given as mpmath numbers."""
    g = mpmath.exp(eps)
    fwd = rev = mpmath.mpf(0)
    for outcome in itertools.product(*[range(len(a)) for a, _ in steps]):
        x = y = mpmath.mpf(1)
        for (a, b), i in zip(steps, outcome):
            x *= a[i]
            y *= b[i]
        fwd += max(0, x - g * y)
        rev += max(0, y - g * x)
    return max(fwd, rev)


def _subsampled(p: list[F], qm: list[F], q: F) -> tuple[list[F], list[F]]:
    return [q * a + (1 - q) * b for a, b in zip(p, qm)], list(qm)


# randomized response, 2 buckets, noise 1/2: P = (3/4, 1/4), Q = (1/4, 3/4)
RR_P, RR_Q = [F(3, 4), F(1, 4)], [F(1, 4), F(3, 4)]


def test_poisson_subsampled_rr_is_exact_and_agrees_to_30_digits():
    m = dx.Mechanism.dp("log(3)").subsample("1/10")  # RR(1/2, 2 buckets) is log(3)-DP exactly
    c = dx.compose(m, 10)
    assert c.is_exact
    step = _subsampled(RR_P, RR_Q, F(1, 10))
    for eps in ("0", "0.1", "0.5", "1", "2"):
        got = c.delta(eps)
        assert got.exact is not None  # a closed form, not a ball
        want = _brute_delta([step] * 10, mpmath.mpf(eps))
        assert abs(mpmath.mpf(got.decimal(40)) - want) <= want * mpmath.mpf(10) ** -30
        if want:  # the 30 printed digits agree (up to the rounding of the last one)
            assert (
                got.decimal(30)[:-1] == mpmath.nstr(want, 30, min_fixed=-30, strip_zeros=False)[:-1]
            )
        else:
            assert got.exact == "0"


def test_poisson_subsampled_rr_epsilon_is_exact():
    c = dx.compose(dx.Mechanism.dp("log(3)").subsample("1/10"), 10)
    e = c.epsilon("1e-3")
    assert e.exact is not None and e.exact.startswith("log(")
    # the exact eps is a kink: delta there is at most 1e-3, and just below it is above
    step = _subsampled(RR_P, RR_Q, F(1, 10))
    at = mpmath.mpf(e.decimal(40))
    assert _brute_delta([step] * 10, at) <= mpmath.mpf("1e-3") * (1 + mpmath.mpf(10) ** -30)
    assert _brute_delta([step] * 10, at - mpmath.mpf("1e-6")) > mpmath.mpf("1e-3")


def test_subsampled_with_leak_and_mixed_with_plain_kinds():
    base = dx.Mechanism([("log(3)", "0"), ("log(2)", "1/100")])
    pair = canonical_pair(base.region)
    # the base pair as outcomes: finite losses, P-leak (Q = 0), Q-leak (P = 0)
    p = [m.as_rational() for _, m in pair.masses]
    qm = [m.as_rational() / pair.domain.exp_loss(loss).as_rational() for loss, m in pair.masses]
    leak = pair.leak.as_rational()
    p += [leak, F(0)]
    qm += [F(0), 1 - sum(qm)]
    q = F(1, 4)
    plain = dx.Mechanism.dp("log(2)")  # RR with ratio 2: P = (2/3, 1/3)
    steps = [_subsampled(p, qm, q)] * 3 + [([F(2, 3), F(1, 3)], [F(1, 3), F(2, 3)])] * 2
    c = dx.compose([(base.subsample(q), 3), (plain, 2)])
    for eps in ("0", "0.3", "1.2"):
        want = _brute_delta(steps, mpmath.mpf(eps))
        got = mpmath.mpf(c.delta(eps).decimal(40))
        assert abs(got - want) <= want * mpmath.mpf(10) ** -35


def test_rate_one_is_the_plain_composition():
    m = dx.Mechanism([("log(3)", "0"), ("log(2)", "1/50")])
    sub = dx.compose(m.subsample(1), 4)
    plain = dx.compose(m, 4)
    for eps in ("0", "log(2)", "0.7", "log(9)"):
        assert sub.delta(eps) == plain.delta(eps)


def test_subsampled_discrete_laplace_is_bracketed_by_dp_accounting():
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event as d
    from dp_accounting.pld import privacy_loss_distribution as pldm

    from dpcompose_exact.integrations.events import event_composition

    q, k = 0.1, 20
    event = d.SelfComposedDpEvent(
        d.PoissonSampledDpEvent(q, d.DiscreteLaplaceDpEvent("log(2)", 1)), k
    )
    c = event_composition(event, "ADD_OR_REMOVE_ONE")
    plds = [
        pldm.from_discrete_laplace_mechanism(
            math.log(2),
            1,
            value_discretization_interval=1e-4,
            pessimistic_estimate=pess,
            sampling_prob=q,
        ).self_compose(k)
        for pess in (True, False)
    ]
    for eps in (0.0, 0.2, 0.5, 1.0):
        exact = float(c.delta(repr(eps)))
        hi, lo = (p.get_delta_for_epsilon(eps) for p in plds)
        assert lo * (1 - 1e-9) <= exact <= hi * (1 + 1e-9)
        assert hi - lo < 0.05 * exact  # and the bracket is narrow: the same mechanism
    exact_eps = float(c.epsilon("1e-6"))
    hi, lo = (p.get_epsilon_for_delta(1e-6) for p in plds)
    assert lo - 1e-9 <= exact_eps <= hi + 1e-9


def test_without_replacement_equals_the_poisson_pair_under_replace_one():
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event as d

    from dpcompose_exact.integrations.events import event_composition

    rr = d.RandomizedResponseDpEvent(0.5, 2)
    tree = d.SelfComposedDpEvent(d.SampledWithoutReplacementDpEvent(100, 10, rr), 10)
    c = event_composition(tree, "REPLACE_ONE")
    front = dx.compose(dx.Mechanism.dp("log(3)").subsample("10/100"), 10)
    for eps in ("0", "0.5", "log(6/5)"):
        assert c.delta(eps) == front.delta(eps)


def test_refusals_name_the_value():
    with pytest.raises(TypeError, match="floats are not exact"):
        dx.Mechanism.dp("log(3)").subsample(0.1)
    assert dx.Mechanism.dp("log(3)").subsample(Decimal("0.1")).q == F(1, 10)
    with pytest.raises(InvalidParameterError, match=r"q = 3/2 is outside the valid range"):
        dx.Mechanism.dp("log(3)").subsample("3/2")
    with pytest.raises(InvalidParameterError, match="method certified"):
        dx.compose(dx.Mechanism.dp("log(3)").subsample("1/2"), 3, method="certified")
    with pytest.raises(UnsupportedExpressionError, match=r"eps = 3/10 leaves the exact field"):
        subsample_pld(canonical_pair(dx.Mechanism.dp("0.3").region), "1/10")


def test_irrational_eps_gives_certified_bounds():
    # e^0.3 is transcendental: the subsampled losses leave the field; the bounds route
    # (eps rounded to logs of rationals both ways) must enclose the true value.  Before
    # the memory estimate counted multisets, this composition was refused (petabytes).
    m = dx.Mechanism.dp("0.3").subsample("1/10")
    assert m.loss_pair().form == "asymmetric bounds"  # e^0.3 is not rational: bounds
    c = dx.compose(m, 10)
    assert c.is_bounded and not c.is_exact
    g = mpmath.exp(mpmath.mpf("0.3"))
    p = [g / (1 + g), 1 / (1 + g)]
    qm = [1 / (1 + g), g / (1 + g)]
    a = [(p[i] + 9 * qm[i]) / 10 for i in range(2)]
    for eps in ("0", "0.1", "0.3"):
        want = _brute_delta_mp([(a, qm)] * 10, mpmath.mpf(eps))
        lo, hi = (mpmath.mpf(x) for x in c.delta(eps).interval(20))
        assert lo <= want <= hi
        assert hi - lo < 1e-4 * want
    e_lo, e_hi = (mpmath.mpf(x) for x in c.epsilon("1e-5").interval(20))
    assert _brute_delta_mp([(a, qm)] * 10, e_hi) <= mpmath.mpf("1e-5") * (1 + 1e-20)
    assert e_lo <= e_hi < e_lo + mpmath.mpf("1e-3")


def test_event_tree_refuses_what_it_cannot_compose_exactly():
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event as d

    from dpcompose_exact.integrations.events import EventTreeError, event_composition

    with pytest.raises(EventTreeError, match="unsupported DpEvent UnsupportedDpEvent"):
        event_composition(d.ComposedDpEvent([d.GaussianDpEvent(1.0), d.UnsupportedDpEvent()]))
    gauss = event_composition(d.GaussianDpEvent(1.0))  # the closed form of G_1
    assert "closed form" in gauss.why and gauss.delta("1").decimal(12) == "0.126936737507"
    with pytest.raises(EventTreeError, match="PoissonSampledDpEvent is composed under ADD_OR"):
        event_composition(
            d.PoissonSampledDpEvent(0.1, d.RandomizedResponseDpEvent(0.5, 2)), "REPLACE_ONE"
        )
    # a float discrete Laplace parameter (e^1 irrational): bounds, bracketing dp_accounting
    from dp_accounting.pld import privacy_loss_distribution as pldm

    sub = d.PoissonSampledDpEvent(0.1, d.DiscreteLaplaceDpEvent(1.0, 1))
    c = event_composition(d.SelfComposedDpEvent(sub, 5))
    assert c.is_bounded
    pess, opt = (
        pldm.from_discrete_laplace_mechanism(
            1.0,
            1,
            value_discretization_interval=1e-4,
            pessimistic_estimate=b,
            sampling_prob=0.1,
        ).self_compose(5)
        for b in (True, False)
    )
    for eps in (0.0, 0.1, 0.4):
        lo, hi = (float(x) for x in c.delta(repr(eps)).interval(17))
        assert lo <= pess.get_delta_for_epsilon(eps) * (1 + 1e-9)
        assert hi >= opt.get_delta_for_epsilon(eps) * (1 - 1e-9)
        assert hi - lo < 1e-4 * hi


def test_exact_accountant_composes_subsampled_events():
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event as d
    from dp_accounting.privacy_accountant import NeighboringRelation

    from dpcompose_exact.integrations.dp_accounting import DpConstraintsEvent, ExactAccountant

    rr = d.RandomizedResponseDpEvent(0.5, 2)
    acc = ExactAccountant(NeighboringRelation.REPLACE_ONE)
    acc.compose(d.SelfComposedDpEvent(d.SampledWithoutReplacementDpEvent(100, 10, rr), 10))
    exact = dx.compose(dx.Mechanism.dp("log(3)").subsample("1/10"), 10)
    for eps in (0.0, 0.5, 1.0):
        want = exact.delta(repr(eps))
        got = acc.get_delta(eps)
        assert want.upper() == got and got >= float(want)
    assert acc.get_epsilon(1e-5) == exact.epsilon("1e-5").upper()
    assert acc.is_exact
    assert acc.composition.delta("1/2") == exact.delta("1/2")  # the subsampled composition
    # Poisson sampling of a DpConstraintsEvent next to a plain one (ADD_OR_REMOVE_ONE)
    acc = ExactAccountant()
    inner = DpConstraintsEvent([("log(3)", "0")])
    acc.compose(d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.25, inner), 3))
    acc.compose(DpConstraintsEvent([("log(2)", "0")]))
    both = dx.compose(
        [(dx.Mechanism.dp("log(3)").subsample("1/4"), 3), (dx.Mechanism.dp("log(2)"), 1)]
    )
    assert acc.get_delta(0.3) == both.delta("0.3").upper()
    assert ExactAccountant().supports(d.PoissonSampledDpEvent(0.1, d.GaussianDpEvent(1.0)))
    assert not ExactAccountant().supports(d.PoissonSampledDpEvent(0.1, rr))  # RR: REPLACE_ONE


def test_rr_four_buckets_without_replacement_against_the_raw_distributions():
    # an independent base pair: randomized response over 4 buckets, noise 1/4, inputs x, x'
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event as d

    from dpcompose_exact.integrations.events import event_composition

    p = F(1, 4)
    keep, other = 1 - p + p / 4, p / 4
    base_p = [keep, other, other, other]
    base_q = [other, keep, other, other]
    q = F(3, 10)
    steps = [_subsampled(base_p, base_q, q)] * 4
    rr = d.RandomizedResponseDpEvent(0.25, 4)
    tree = d.SelfComposedDpEvent(d.SampledWithoutReplacementDpEvent(10, 3, rr), 4)
    c = event_composition(tree, "REPLACE_ONE")
    assert c.is_exact
    for eps in ("0", "0.4", "1.5", "log(13/10)"):
        want = _brute_delta(
            steps, mpmath.log(mpmath.mpf(13) / 10) if "log" in eps else mpmath.mpf(eps)
        )
        got = mpmath.mpf(c.delta(eps).decimal(40))
        assert abs(got - want) <= want * mpmath.mpf(10) ** -35
