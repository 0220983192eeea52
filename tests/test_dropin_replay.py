"""Other projects' own accountant tests, replayed with ExactAccountant in their place.

The cases come from dp_accounting 0.6's tests (``privacy_accountant_test``,
``pld/pld_privacy_accountant_test``, ``rdp/rdp_privacy_accountant_test``,
``mechanism_calibration_test``) and from prv_accountant's tests (``test_accountant.py``,
``test_dpsgd.py``), with their parameters (numpy floats where theirs are, as prv_accountant's
noise search returns them).  Their expectations are asserted as they wrote them wherever
their number is right; where it is not (a bound where the exact value differs, a refusal
where the value exists), ours is asserted against an independent reference and a comment
says so.  Cases about other accountants' internals (RDP orders, MixtureOfGaussians,
truncated events, which this accountant does not cover) are left out; the tree-aggregation
and zCDP cases of ``rdp_privacy_accountant_test`` are replayed at the end.  The
Opacus replay lives with the Opacus integration.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

pytest.importorskip("dp_accounting")

from dp_accounting import dp_event, mechanism_calibration  # noqa: E402
from dp_accounting.privacy_accountant import (  # noqa: E402
    NeighboringRelation,
    UnsupportedEventError,
)

from dpcompose_exact.integrations.dp_accounting import ExactAccountant  # noqa: E402
from dpcompose_exact.integrations.events import exact_number  # noqa: E402

ADD, REPLACE, SPECIAL = (
    NeighboringRelation.ADD_OR_REMOVE_ONE,
    NeighboringRelation.REPLACE_ONE,
    NeighboringRelation.REPLACE_SPECIAL,
)
ALL = (ADD, REPLACE, SPECIAL)


class UnknownDpEvent(dp_event.DpEvent):
    """privacy_accountant_test's unknown event."""


def gaussian_delta(mu, eps) -> mpmath.mpf:
    """delta(eps) of G_mu at 50 digits (Balle and Wang, Theorem 8).

    ``mu``: a number, or ``("sqrt", x)`` for the square root of ``x`` taken at 50 digits;
    strings are read as decimals.
    """
    with mpmath.workdps(50):
        mu = mpmath.sqrt(mpmath.mpf(mu[1])) if isinstance(mu, tuple) else mpmath.mpf(mu)
        eps = mpmath.mpf(eps)
        return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def bisect(f, lo: float, hi: float) -> mpmath.mpf:
    """The root of an increasing ``f`` on ``[lo, hi]`` by 200 bisections (50 digits)."""
    with mpmath.workdps(50):
        lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
        return (lo + hi) / 2


def gaussian_epsilon(mu: float, delta: float) -> mpmath.mpf:
    """eps(delta) of G_mu: the root of gaussian_delta (mpmath, 50 digits)."""
    return bisect(lambda e: mpmath.mpf(delta) - gaussian_delta(mu, e), 0, 200)


def enclosure(value, digits: int = 30) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The ends of a Value's enclosure as mpmath numbers read at 50 digits."""
    with mpmath.workdps(50):
        return tuple(mpmath.mpf(x) for x in value.interval(digits))


# -- privacy_accountant_test: the base-class contract, for every relation ---------------------


@pytest.mark.parametrize("relation", ALL)
@pytest.mark.parametrize("unsupported", [dp_event.UnsupportedDpEvent(), UnknownDpEvent()])
@pytest.mark.parametrize(
    "nest",
    [lambda e: e, lambda e: dp_event.ComposedDpEvent([e]),
     lambda e: dp_event.SelfComposedDpEvent(e, 10)],
)
def test_unsupported(relation, unsupported, nest):
    acc = ExactAccountant(relation)
    event = nest(unsupported)
    error = acc._maybe_compose(event, count=1, do_compose=False)
    assert error is not None and error.invalid_event == unsupported
    assert not acc.supports(event)
    with pytest.raises(UnsupportedEventError, match="caused by subevent"):
        acc.compose(event)


@pytest.mark.parametrize("relation", ALL)
@pytest.mark.parametrize("compose_no_op", [False, True])
def test_no_events_and_no_op(relation, compose_no_op):
    acc = ExactAccountant(relation)
    if compose_no_op:
        assert acc.supports(dp_event.NoOpDpEvent())
        acc.compose(dp_event.NoOpDpEvent())
    assert acc.get_epsilon(1e-12) == acc.get_epsilon(0) == acc.get_epsilon(1) == 0
    assert acc.get_delta(1e-12) == acc.get_delta(0) == acc.get_delta(float("inf")) == 0


@pytest.mark.parametrize("relation", ALL)
@pytest.mark.parametrize(
    "event",
    [
        dp_event.NonPrivateDpEvent(),
        dp_event.ComposedDpEvent([dp_event.NonPrivateDpEvent()]),
        dp_event.ComposedDpEvent([dp_event.NoOpDpEvent(), dp_event.NonPrivateDpEvent()]),
        dp_event.SelfComposedDpEvent(dp_event.NonPrivateDpEvent(), 10),
    ],
)
def test_non_private(relation, event):
    acc = ExactAccountant(relation)
    assert acc.supports(event)
    acc.compose(event)
    assert acc.get_epsilon(0.99) == acc.get_epsilon(0) == acc.get_epsilon(1) == math.inf
    assert acc.get_delta(100) == acc.get_delta(0) == acc.get_delta(float("inf")) == 1


# -- pld_privacy_accountant_test ---------------------------------------------------------------


def test_randomized_response_under_add_or_remove_is_unsupported():
    # theirs: 'neighboring_relation must be `REPLACE_ONE` or `REPLACE_SPECIAL`'
    with pytest.raises(UnsupportedEventError, match="REPLACE_ONE"):
        ExactAccountant(ADD).compose(dp_event.RandomizedResponseDpEvent(0.1, 3))


@pytest.mark.parametrize("relation", [REPLACE, SPECIAL])
def test_randomized_response_with_single_bucket(relation):
    # before: refused as "0 is not private"; one bucket is a constant output, (0, 0)
    acc = ExactAccountant(relation).compose(dp_event.RandomizedResponseDpEvent(0.0, 1))
    assert acc.get_delta(0) == 0
    assert acc.get_epsilon(0) == 0


def test_randomized_response_with_zero_noise_parameter():
    acc = ExactAccountant(SPECIAL).compose(dp_event.RandomizedResponseDpEvent(0.0, 3))
    assert acc.get_delta(1.0) == 1
    assert acc.get_epsilon(0.01) == math.inf


@pytest.mark.parametrize("noise,buckets", [(1.0, 2), (0.5, 1), (np.float64(1.0), 5)])
def test_randomized_response_revealing_nothing_is_symmetric_under_replace_special(noise,
                                                                                  buckets):
    # before: refused as asymmetric; p = 1 (a uniformly random answer) or one bucket make
    # both distributions equal, so the pair is symmetric under every relation: (0, 0)
    acc = ExactAccountant(SPECIAL).compose(dp_event.RandomizedResponseDpEvent(noise, buckets))
    assert acc.get_delta(0) == 0 and acc.get_epsilon(1e-9) == 0


def test_randomized_response_replace_one_at_its_epsilon():
    # RR(p, 4) with p = 4 / (3 + e) is exactly 1-DP: the likelihood ratio is
    # 1 + k (1/p - 1) = e (their float p is read by its repr, a hair off 4 / (3 + e))
    acc = ExactAccountant(REPLACE).compose(
        dp_event.RandomizedResponseDpEvent(4 / (3 + math.exp(1)), 4)
    )
    assert acc.get_delta(1.0) == pytest.approx(0.0, abs=1e-7)
    # (their REPLACE_SPECIAL cases are asymmetric pairs, which this accountant refuses)


@pytest.mark.parametrize("relation", ALL)
@pytest.mark.parametrize(
    "event",
    [
        dp_event.GaussianDpEvent(1.0),
        dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(1.0), 6),
        dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(1.0), dp_event.GaussianDpEvent(2.0)]),
        dp_event.GaussianDpEvent(np.float64(1.1)),
    ],
)
def test_supports_gaussian(relation, event):
    assert ExactAccountant(relation).supports(event)


@pytest.mark.parametrize("relation", [ADD, SPECIAL])
@pytest.mark.parametrize(
    "event",
    [
        dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(1.0)),
        dp_event.ComposedDpEvent([
            dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(1.0)),
            dp_event.GaussianDpEvent(2.0),
        ]),
        dp_event.PoissonSampledDpEvent(np.float64(0.1), dp_event.GaussianDpEvent(np.float64(1))),
    ],
)
def test_supports_subsampled_gaussian(relation, event):
    # (under REPLACE_ONE: dp_accounting's replace pair of a Gaussian, theory section 23)
    assert ExactAccountant(relation).supports(event)


@pytest.mark.parametrize("count", [0, -1])
def test_non_positive_composition_value_error(count):
    with pytest.raises(ValueError, match="count"):
        ExactAccountant().compose(dp_event.GaussianDpEvent(1.0), count)


@pytest.mark.parametrize(
    "event",
    [
        dp_event.GaussianDpEvent(0),
        dp_event.LaplaceDpEvent(0),
        dp_event.DiscreteLaplaceDpEvent(0, 1),
    ],
)
def test_additive_noise_with_zero_noise_multiplier(event):
    acc = ExactAccountant().compose(event)
    assert acc.get_delta(1.0) == 1
    assert acc.get_epsilon(0.01) == math.inf


@pytest.mark.parametrize("inner", [dp_event.GaussianDpEvent(0), dp_event.LaplaceDpEvent(0)])
@pytest.mark.parametrize("q", [0.1, np.float64(0.25), 0.8])
def test_subsampled_zero_noise_reveals_its_record_with_probability_q(inner, q):
    # theirs: get_delta(1.0) == 1 -- wrong: with probability 1 - q the record is not in
    # the batch.  The pair (q P + (1 - q) Q, Q) with P, Q disjoint has delta(eps) = q at
    # every eps (the event {output in supp P} has probability q and Q-probability 0; the
    # other direction gives 1 - (1 - q) e^eps <= q), so eps(delta) is infinite below q.
    acc = ExactAccountant().compose(dp_event.PoissonSampledDpEvent(q, inner))
    for eps in (0.0, 1.0, 10.0, math.inf):
        assert acc.get_delta(eps) == pytest.approx(float(q), rel=1e-15)
        assert acc.get_delta(eps) >= float(q)
    assert acc.get_epsilon(0.01) == math.inf  # theirs, right: 0.01 < q
    assert acc.get_epsilon(float(q) * 1.01) == 0
    # three uses: 1 - (1 - q)^3 (the three batches miss the record)
    acc3 = ExactAccountant().compose(dp_event.PoissonSampledDpEvent(q, inner), 3)
    assert acc3.get_delta(5.0) == pytest.approx(1 - (1 - float(q)) ** 3, rel=1e-14)


@pytest.mark.parametrize(
    "event",
    [
        dp_event.PoissonSampledDpEvent(0, dp_event.GaussianDpEvent(1)),
        dp_event.PoissonSampledDpEvent(0, dp_event.LaplaceDpEvent(1)),
        dp_event.PoissonSampledDpEvent(0, dp_event.GaussianDpEvent(0)),
        dp_event.PoissonSampledDpEvent(0, dp_event.LaplaceDpEvent(0)),
    ],
)
def test_poisson_subsampling_with_zero_probability(event):
    acc = ExactAccountant().compose(event)
    assert acc.get_delta(0) == 0 and acc.get_epsilon(0) == 0


def test_gaussian_basic():
    event = dp_event.GaussianDpEvent(noise_multiplier=math.sqrt(3))
    acc = ExactAccountant().compose(event, 1).compose(event, 2)
    assert acc.get_delta(1) == pytest.approx(0.126936, abs=1e-3)
    assert acc.get_epsilon(0.126936) == pytest.approx(1, abs=1e-3)
    # three uses of sigma = sqrt(3) are G_1; sqrt(3) read by its repr is a hair above it
    assert acc.get_delta(1) == pytest.approx(float(gaussian_delta(1, 1)), rel=1e-12)


@pytest.mark.parametrize("self_composed", [False, True])
def test_poisson_subsampled_gaussian(self_composed):
    inner = dp_event.PoissonSampledDpEvent(0.2, dp_event.GaussianDpEvent(noise_multiplier=0.5))
    if self_composed:
        acc = ExactAccountant().compose(dp_event.SelfComposedDpEvent(inner, 3))
    else:
        acc = ExactAccountant().compose(inner, 1).compose(inner, 2)
    assert acc.get_delta(1) == pytest.approx(0.15594, abs=1e-3)
    assert acc.get_epsilon(0.15594) == pytest.approx(1, abs=1e-3)


def test_laplace_basic():
    acc = ExactAccountant().compose(dp_event.LaplaceDpEvent(1), 3)
    acc.compose(dp_event.LaplaceDpEvent(2), 2)
    # theirs: 1e-14 (their truncation); the losses are at most 3 + 2/2 = 4: delta(4) = 0
    assert acc.get_delta(4) == pytest.approx(1e-14, abs=1e-6)
    assert acc.delta_value(4).interval(6)[0] == "0"
    assert acc.get_epsilon(1e-14) == pytest.approx(4, abs=1e-6)
    assert acc.get_epsilon(1e-14) <= 4


def test_poisson_subsampled_laplace():
    event = dp_event.PoissonSampledDpEvent(0.2, dp_event.LaplaceDpEvent(noise_multiplier=0.5))
    acc = ExactAccountant().compose(event, 1).compose(event, 2)
    assert acc.get_delta(2.46964) == pytest.approx(1e-14, abs=1e-6)
    assert acc.get_epsilon(1e-14) == pytest.approx(2.46964, abs=1e-3)
    # eps(0) is the largest loss, 3 log(1 + 0.2 (e^2 - 1)) = 2.4696449716... (mpmath)
    with mpmath.workdps(30):
        top = 3 * mpmath.log(1 + mpmath.mpf("0.2") * (mpmath.exp(2) - 1))
    lo, hi = enclosure(acc.epsilon_value(0))
    assert lo <= top <= hi
    # (eps(1e-14) itself is bounded above by 2.4699, a little above eps(0): the loss grid's
    # enclosure at tiny deltas is loose, engines/subsample_grid.py)


def test_discrete_laplace_basic():
    acc = ExactAccountant().compose(dp_event.DiscreteLaplaceDpEvent(1, 1), 3)
    acc.compose(dp_event.DiscreteLaplaceDpEvent(0.5, 1), 2)
    assert acc.get_delta(4) == pytest.approx(0.0, abs=1e-6)
    assert acc.get_epsilon(0.0) == pytest.approx(4, abs=1e-6)
    assert acc.get_delta(4) == 0 and acc.get_epsilon(0.0) == 4  # exactly: 3 x 1 + 2 x 1/2


# -- rdp_privacy_accountant_test ---------------------------------------------------------------


@pytest.mark.parametrize("sigma", [1.0, 0.0])
def test_zero_poisson_sample(sigma):
    acc = ExactAccountant().compose(
        dp_event.PoissonSampledDpEvent(0, dp_event.GaussianDpEvent(sigma))
    )
    assert acc.get_epsilon(1e-10) == 0 and acc.get_delta(1e-10) == 0


def test_zero_fixed_batch_sample():
    acc = ExactAccountant(REPLACE).compose(
        dp_event.SampledWithoutReplacementDpEvent(1000, 0, dp_event.GaussianDpEvent(1.0))
    )
    assert acc.get_epsilon(1e-10) == 0 and acc.get_delta(1e-10) == 0


def test_epsilon_non_private_gaussian():
    assert ExactAccountant().compose(dp_event.GaussianDpEvent(0)).get_epsilon(1e-1) == math.inf


@pytest.mark.parametrize("eps,count", [(0.01, 1), (1.0, 1), (100.0, 1), (1.0, 100)])
def test_laplace(eps, count):
    event = dp_event.LaplaceDpEvent(1 / eps)
    if count != 1:
        event = dp_event.SelfComposedDpEvent(event, count)
    got = ExactAccountant().compose(event).get_epsilon(1e-10)
    if count == 1:
        # one use: eps(delta) = eps0 + 2 log(1 - delta) (closed form), theirs to 7 places
        assert got == pytest.approx(eps * count, abs=5e-7)
        assert got == pytest.approx(eps + 2 * math.log1p(-1e-10), abs=1e-12)
        return
    # theirs: 100 (the pure-DP bound of an order-1e10 RDP curve), far from the exact
    # 81.57: dp_accounting's own PLD accountant brackets it (pessimistic and optimistic
    # estimates at a 1e-3 grid)
    from dp_accounting.pld import privacy_loss_distribution as pld

    ends = [
        pld.from_laplace_mechanism(
            1.0, 1.0, pessimistic_estimate=p, value_discretization_interval=1e-3,
            use_connect_dots=p,
        ).self_compose(100).get_epsilon_for_delta(1e-10)
        for p in (False, True)
    ]
    assert ends[0] <= got <= ends[1] + 1e-9 and got < eps * count


@pytest.mark.parametrize("q", [-0.1, 1.1])
def test_raises_on_invalid_sampling_rate(q):
    # before: UnsupportedEventError; theirs: ValueError 'Sampling rate'
    with pytest.raises(ValueError, match=r"sampling probability .* is outside \[0, 1\]"):
        ExactAccountant().compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(1)))


@pytest.mark.parametrize("event_type", [dp_event.GaussianDpEvent, dp_event.LaplaceDpEvent])
def test_raises_on_invalid_noise_multiplier(event_type):
    # before: UnsupportedEventError saying "0 is not private" for -1
    with pytest.raises(ValueError, match=r"noise_multiplier = -1 is negative; valid range: "
                                         r"noise_multiplier >= 0") as info:
        ExactAccountant().compose(event_type(-1))
    assert "0 is not private" not in str(info.value)
    assert ExactAccountant().supports(event_type(-1))  # the kind of event is supported


CONSISTENCY = [
    (q, sigma)
    for q in (0, 0.01, 0.1, 0.8, 1.0)
    for sigma in (0.0, 0.1, 1.0, 10.0, 100.0)
    # sigma = 0.1 subsampled at 0 < q < 1: 30 to 100 s of CPU per query, all of it in
    # engines/subsample_grid.py (one certified CDF per cell of a loss range that grows
    # like 1/sigma^2); sigma = 1 at q = 0.01 and 0.8: 10 to 20 s for the eight queries
    # (the same grid); left to the rebuild of that module, q = 0.1 stands for them
    if not (sigma == 0.1 and 0 < q < 1) and not (sigma == 1.0 and q in (0.01, 0.8))
]


@pytest.mark.parametrize("q,sigma", CONSISTENCY)
def test_epsilon_delta_consistency(q, sigma):
    acc = ExactAccountant().compose(
        dp_event.PoissonSampledDpEvent(np.float64(q), dp_event.GaussianDpEvent(np.float64(sigma)))
    )
    for delta in (0.99, 0.9, 0.1, 0.01, 1e-3, 1e-5, 1e-9, 1e-12):
        epsilon = acc.get_epsilon(delta)
        delta2 = acc.get_delta(epsilon)
        if math.isinf(epsilon) and sigma == 0 and 0 < q < 1:
            # theirs: delta2 == 1 (zero noise read as non-private); the record is in the
            # batch with probability q only: delta(inf) = q exactly, and eps is infinite
            # for the deltas below q
            assert delta < q and delta2 == pytest.approx(q, rel=1e-15)
        elif math.isinf(epsilon):
            assert delta2 == 1.0
        elif epsilon == 0:
            assert delta2 <= delta
        else:
            assert delta == pytest.approx(delta2, abs=5e-8)


# -- mechanism_calibration_test, with a real accountant ---------------------------------------


def test_calibrate_gaussian_noise_with_the_exact_accountant():
    sigma = mechanism_calibration.calibrate_dp_mechanism(
        make_fresh_accountant=ExactAccountant,
        make_event_from_param=dp_event.GaussianDpEvent,
        target_epsilon=1.0,
        target_delta=1e-5,
        bracket_interval=mechanism_calibration.ExplicitBracketInterval(0.5, 20),
        tol=1e-9,
    )
    assert isinstance(sigma, float)
    assert ExactAccountant().compose(dp_event.GaussianDpEvent(sigma)).get_epsilon(1e-5) <= 1.0
    # the smallest sigma with delta(1) <= 1e-5 solves delta_G(1; 1/sigma) = 1e-5 (mpmath)
    mu = bisect(lambda m: gaussian_delta(m, 1) - mpmath.mpf("1e-5"), 0.01, 10)
    assert sigma == pytest.approx(float(1 / mu), abs=1e-8)
    assert sigma >= float(1 / mu) - 1e-12


# -- prv_accountant's tests ----------------------------------------------------------------------


@pytest.mark.parametrize("compositions", [10_000, 10_001, 10_002])
def test_prv_gaussian_mechanism_analytic_homogeneous(compositions):
    event = dp_event.PoissonSampledDpEvent(1.0, dp_event.GaussianDpEvent(np.float64(100.0)))
    acc = ExactAccountant().compose(event, compositions)
    exact = gaussian_delta(("sqrt", f"{compositions}e-4"), 4)
    lo, hi = enclosure(acc.delta_value(4))
    assert lo <= exact <= hi and hi - lo <= exact * mpmath.mpf(10) ** -25


def test_prv_gaussian_mechanism_analytic_heterogeneous():
    acc = ExactAccountant()
    acc.compose(dp_event.PoissonSampledDpEvent(1.0, dp_event.GaussianDpEvent(10.0)), 50)
    acc.compose(dp_event.PoissonSampledDpEvent(1.0, dp_event.GaussianDpEvent(5.0)), 50)
    exact = gaussian_delta(("sqrt", "2.5"), 4)  # mu^2 = 50 / 10^2 + 50 / 5^2
    lo, hi = enclosure(acc.delta_value(4))
    assert lo <= exact <= hi


def test_prv_analytic_at_a_tiny_delta():
    # 10^4 Gaussians of sigma 100 are G_1; eps(1.13e-18) from the closed form, certified
    # (prv_accountant refuses a delta this small in its own test)
    acc = ExactAccountant().compose(dp_event.GaussianDpEvent(np.float64(100.0)), 10_000)
    lo, hi = enclosure(acc.epsilon_value(1.13e-18), 20)
    ref = gaussian_epsilon(1, "1.13e-18")  # the decimal the float 1.13e-18 is read as
    assert lo <= ref <= hi and (hi - lo) / ref < mpmath.mpf(10) ** -15


def test_prv_small_delta_subsampled():
    # theirs: ValueError (delta_error too large for delta = 1.13e-18); ours answers with
    # a certified enclosure, never above the RDP accountant's upper bound
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    event = dp_event.PoissonSampledDpEvent(0.00038, dp_event.GaussianDpEvent(4.0))
    ours = ExactAccountant().compose(event, 1000).epsilon_value(1.13e-18)
    upper_rdp = rdp.RdpAccountant().compose(event, 1000).get_epsilon(1.13e-18)
    lo, hi = (float(x) for x in ours.interval(8))
    assert 0 < lo <= hi <= upper_rdp


@pytest.mark.slow
def test_prv_find_noise_multiplier_inverse():
    # prv_accountant's noise search returns numpy floats; theirs asserts eps within 0.5
    dpsgd = pytest.importorskip("prv_accountant.dpsgd")
    mu = dpsgd.find_noise_multiplier(2e-3, 10_000, 4.0, 1e-7)
    assert 0 < mu < 2
    acc = ExactAccountant().compose(
        dp_event.PoissonSampledDpEvent(2e-3, dp_event.GaussianDpEvent(mu)), 10_000
    )
    assert acc.get_epsilon(np.float64(1e-7)) == pytest.approx(4, abs=0.5)


# -- numpy scalars of every kind, read by their value as Python numbers are ---------------------


@pytest.mark.parametrize(
    "sigma,exact",
    [
        (np.float64(1.1), "11/10"),  # numpy 2's repr is 'np.float64(1.1)': read as 1.1
        (np.float32(1.1), "11/10"),  # its repr's value, not its double 1.100000023841858
        (np.float16(0.1), "1/10"),
        (np.int64(2), "2"),
        (np.float16(0.5), "1/2"),
    ],
)
def test_numpy_parameters_and_queries_read_as_python_numbers(sigma, exact):
    # before: ValueError "Invalid literal for Fraction: 'np.float64(1.1)'" from compose,
    # supports and the queries alike
    acc = ExactAccountant()
    event = dp_event.GaussianDpEvent(sigma)
    assert acc.supports(event)
    acc.compose(event)
    ref = ExactAccountant().compose(dp_event.GaussianDpEvent(exact))
    for q in (np.float64(1e-5), np.float32(0.5), 1e-5):
        assert acc.get_epsilon(q) == ref.get_epsilon(float(q))
    assert acc.get_delta(np.float64(1.0)) == ref.get_delta(1.0)
    assert acc.get_delta(np.int64(1)) == ref.get_delta(1.0)
    sampled = dp_event.PoissonSampledDpEvent(np.float64(0.25), dp_event.LaplaceDpEvent(sigma))
    assert ExactAccountant().supports(sampled)


def test_numpy_long_doubles_are_read_by_their_own_shortest_decimal():
    # before: RecursionError (np.longdouble's item() is itself) from compose, supports and
    # the queries; float() would have read a noise multiplier of 1e-400 as 0 (no noise)
    sigma = np.longdouble("1.5")
    acc = ExactAccountant()
    assert acc.supports(dp_event.GaussianDpEvent(sigma))
    acc.compose(dp_event.GaussianDpEvent(sigma))
    ref = ExactAccountant().compose(dp_event.GaussianDpEvent("3/2"))
    assert acc.get_epsilon(np.longdouble("1e-5")) == ref.get_epsilon(1e-5)
    assert acc.get_delta(np.longdouble(1)) == ref.get_delta(1.0)
    # the long double nearest 1.1 is 1.1000000000000000888 (numpy's own shortest decimal)
    assert exact_number(np.longdouble(1.1)) == Fraction("1.1000000000000000888")
    tiny = ExactAccountant().compose(dp_event.GaussianDpEvent(np.longdouble("1e-400")))
    assert tiny.composition is not None  # noise of scale 1e-400, not "no noise"
    assert exact_number(np.longdouble("1e-400")) == Fraction(1, 10**400)
    for bad in ("inf", "-inf", "nan"):
        with pytest.raises(ValueError, match="is not finite"):
            ExactAccountant().compose(dp_event.GaussianDpEvent(np.longdouble(bad)))



@pytest.mark.parametrize("where", ["count", "self_composed"])
def test_numpy_integer_counts_are_refused_as_dp_accounting_refuses_them_saying_why(where):
    # dp_accounting's ledger (DpEventBuilder) refuses np.int64 counts in every accountant;
    # ours keeps that contract (the same TypeError), but before, its message did not say
    # that the ledger refuses them nor what to pass
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

    gauss = dp_event.GaussianDpEvent(1.0)
    event, count = (gauss, np.int64(3)) if where == "count" else (
        dp_event.SelfComposedDpEvent(gauss, np.int64(3)), 1)
    with pytest.raises(TypeError, match="`count` must be an integer"):
        PLDAccountant().compose(event, count)
    with pytest.raises(TypeError, match=r"refused by dp_accounting's event ledger.*pass int\("):
        ExactAccountant().compose(event, count)
    assert ExactAccountant().compose(gauss, 3).get_epsilon(1e-5) > 0  # a Python int: composed

# -- rdp_privacy_accountant_test: tree aggregation and zCDP ---------------------------------------


@pytest.mark.parametrize("relation", [ADD, REPLACE])
def test_tree_wrong_neighbor_rel(relation):
    event = dp_event.SingleEpochTreeAggregationDpEvent(1.0, 1)
    assert not ExactAccountant(relation).supports(event)


@pytest.mark.parametrize("noise_multiplier, eps", [(1.13, 19.74), (8.83, 2.04)])
def test_compute_eps_tree(noise_multiplier, eps):
    # the StackOverflow setting of Kairouz et al. (2021): 1600 steps, delta = 1e-6.  Theirs
    # asserts the RDP epsilon is below eps; ours is the Gaussian of mu^2 = 11 / sigma^2
    # (depth 11), checked against mpmath's inverse of its closed form
    acc = ExactAccountant(SPECIAL).compose(
        dp_event.SingleEpochTreeAggregationDpEvent(noise_multiplier, 1600)
    )
    got = acc.get_epsilon(1e-6)
    assert got < eps
    mu = ("sqrt", 11 / mpmath.mpf(repr(noise_multiplier)) ** 2)
    ref = bisect(lambda e: -gaussian_delta(mu, e) + mpmath.mpf("1e-6"), 0, 100)
    assert float(ref) <= got <= float(ref) * (1 + 1e-12)


@pytest.mark.parametrize("step_counts", [[400] * 4, [800] * 2, [10, 400, 400, 400, 390]])
def test_compose_tree_rdp(step_counts):
    # composed trees (one per ComposedDpEvent part) add their depths: the Gaussian of
    # mu^2 = sum depth_i / sigma^2
    acc = ExactAccountant(SPECIAL).compose(
        dp_event.ComposedDpEvent(
            [dp_event.SingleEpochTreeAggregationDpEvent(4.0, m) for m in step_counts]
        )
    )
    depth = sum(m.bit_length() for m in step_counts)
    with mpmath.workdps(50):
        lo, hi = (mpmath.mpf(x) for x in acc.delta_value("1").interval(30))
        assert lo <= gaussian_delta(("sqrt", mpmath.mpf(depth) / 16), 1) <= hi


def test_single_epoch_multi_tree_rdp():
    # one epoch over several trees: the deepest tree's Gaussian
    def acc(steps):
        return ExactAccountant(SPECIAL).compose(
            dp_event.SingleEpochTreeAggregationDpEvent(0.1, steps)
        )

    assert acc([10, 40, 30, 20]).get_delta(1.0) == acc(40).get_delta(1.0)


def test_zcdp_supported_under_both_relations():
    event = dp_event.ZCDpEvent(1.0, 2.0)
    assert ExactAccountant(ADD).supports(event) and ExactAccountant(REPLACE).supports(event)


def test_compute_rdp_multi_zcdp():
    # their RDP adds xi1 + xi2 + alpha (rho1 + rho2); ours adds the parameters (exactly,
    # as decimals) before the conversion
    xi1, xi2, rho1, rho2 = 3.14159, 1.23456, 2.71828, 6.28319
    acc = ExactAccountant().compose(
        dp_event.ComposedDpEvent([dp_event.ZCDpEvent(rho1, xi1), dp_event.ZCDpEvent(rho2, xi2)])
    )
    one = ExactAccountant().compose(dp_event.ZCDpEvent("9.00147", "4.37615"))
    assert acc.delta_value("40").interval(20) == one.delta_value("40").interval(20)


def test_zcdp_matches_gaussian():
    # theirs: the RDP of ZCDp(1 / (2 sigma^2)) is that of the Gaussian; ours: the lower end
    # of the zCDP bracket is the Gaussian's delta, the upper end above it
    sigma = Fraction("3.14159")
    zcdp = ExactAccountant().compose(dp_event.ZCDpEvent(1 / (2 * sigma**2)))
    gauss = ExactAccountant().compose(dp_event.GaussianDpEvent(3.14159))
    z_lo, z_hi = zcdp.delta_value("1/2").interval(20)
    g_lo, g_hi = gauss.delta_value("1/2").interval(20)
    with mpmath.workdps(30):
        assert mpmath.mpf(z_lo) <= mpmath.mpf(g_lo) <= mpmath.mpf(g_hi) <= mpmath.mpf(z_hi)
    assert float(z_lo) == pytest.approx(float(g_lo), rel=1e-15)
