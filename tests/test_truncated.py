"""Truncated Poisson sampling (dp_accounting's ``TruncatedSubsampledGaussianDpEvent``).

References computed independently: the weights by exact binomial sums (Fractions), each
part's hockey-stick divergence at its crossing point in mpmath (40 digits), and the true
mechanism of a tiny dataset (every batch enumerated, its output density integrated) below
the pair's curve; dp_accounting's PLD accountant (a looser pair: the truncated part under
replace-one at half the noise) above it.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.mechanisms.truncated import truncation_weights
from dpcompose_exact.regions.protocol import GridEntry, PairForm


def _mp(x):
    if isinstance(x, mpmath.mpf):
        return x
    x = Fraction(x)
    return mpmath.mpf(x.numerator) / x.denominator


def _tail(big_n, q, b):
    """``P(Bin(big_n, q) >= b)`` in mpmath: the pmf by its ratio recurrence, summed."""
    q = _mp(q)
    term, total = (1 - q) ** big_n, mpmath.mpf(0)
    for m in range(big_n + 1):
        if m >= b:
            total += term
        term = term * (big_n - m) / (m + 1) * q / (1 - q)
    return total


def _weights(n, q, b):
    """``(t, p')``: ``P(Bin(n-1, q) >= b)`` and the truncated rate, by binomial sums."""
    with mpmath.workdps(50):
        t = _tail(n - 1, q, b)
        return t, _mp(Fraction(b, n)) * _tail(n, q, b + 1) / t


def _part(rho, c, sigma, g):
    """``(H(A||B), H(B||A))`` at ``g`` of ``rho N(c) + (1 - rho) N(0)`` against ``N(0)``."""
    rho, c, s = _mp(rho), _mp(c), _mp(sigma)

    def sf(x):
        return mpmath.erfc(x / (s * mpmath.sqrt(2))) / 2

    # forward: the ratio 1 - rho + rho e^{(2cx - c^2)/(2 s^2)} crosses g at x1
    x1 = (mpmath.log((g - 1 + rho) / rho)) * s * s / c + c / 2
    fwd = rho * sf(x1 - c) + (1 - rho) * sf(x1) - g * sf(x1)
    rev = mpmath.mpf(0)
    if 1 / g > 1 - rho:  # reverse: B/A crosses g where the ratio is 1/g
        x2 = (mpmath.log((1 / g - 1 + rho) / rho)) * s * s / c + c / 2
        rev = (1 - sf(x2)) - g * (rho * (1 - sf(x2 - c)) + (1 - rho) * (1 - sf(x2)))
    return fwd, rev


def _reference(sigma, n, q, b, eps):
    """delta(eps) of one use of the pair: max over directions of the weighted parts."""
    with mpmath.workdps(40):
        t, p = _weights(n, q, b)
        g = mpmath.exp(_mp(eps))
        f1, r1 = _part(q, 1, sigma, g)
        f2, r2 = _part(p, 2, sigma, g)
        tm = t
        return max((1 - tm) * f1 + tm * f2, (1 - tm) * r1 + tm * r2)


def test_the_weights_are_the_binomial_sums():
    one_t, t, p = truncation_weights(200, Fraction(1, 20), 12)
    t_ref, p_ref = _weights(200, Fraction(1, 20), 12)
    with mpmath.workdps(50):
        for ball, ref in ((t, t_ref), (one_t, 1 - t_ref), (p, p_ref)):
            assert ball.rad() < 1e-40 * abs(float(ball.mid()))
            assert abs(ref - mpmath.mpf(ball.mid().str(45, radius=False))) < mpmath.mpf(10) ** -40


@pytest.mark.parametrize(
    ("n", "q", "b", "eps"), [(300, "1/20", 12, "1/2"), (2000, "1/100", 25, "1/4")]
)
def test_one_use_contains_the_mpmath_value(n, q, b, eps):
    m = dx.truncated_subsampled_gaussian("1", n, q, b)
    assert m.loss_pair().form is PairForm.NOISE
    assert m.loss_pair().grid_entry() is GridEntry.PUBLIC_MIXTURE
    assert m.loss_pair().gaussian_mu2() is None
    lo, hi = dx.compose(m, 1).delta(eps).interval(30)
    ref = _reference(1, n, Fraction(q), b, Fraction(eps))
    assert _mp(lo) <= ref <= _mp(hi)
    assert _mp(hi) - _mp(lo) < 1e-5 * ref


def _true_delta(sigma, n, q, b, others, eps):
    """The mechanism itself on one dataset (1-D records), ``max`` of both directions.

    The differing record is 1; the ``n - 1`` others have the values ``others`` (cycled).
    Every Poisson sample and every truncation is enumerated exactly: the outputs are
    Gaussian mixtures over the batch sums, integrated on a fine grid (trapezoids of width
    1e-4 on [-12, 12]: an error far below the margins compared).
    """
    import numpy as np

    q = Fraction(q)
    vals = [Fraction(others[i % len(others)]) for i in range(n - 1)]

    def batch_law(records):
        law: dict[Fraction, Fraction] = {}
        k = len(records)
        for mask in range(1 << k):
            chosen = [records[i] for i in range(k) if mask >> i & 1]
            pr = q ** len(chosen) * (1 - q) ** (k - len(chosen))
            subsets = [s for s in range(1 << len(chosen)) if bin(s).count("1") == min(b, len(
                chosen))]
            for s in subsets:
                tot = sum((chosen[i] for i in range(len(chosen)) if s >> i & 1), Fraction(0))
                law[tot] = law.get(tot, 0) + pr / len(subsets)
        return law

    x = np.linspace(-12, 12, 240001)

    def dens(law):
        return sum(float(w) * np.exp(-((x - float(c)) ** 2) / (2 * sigma**2)) for c, w in
                   law.items()) / np.sqrt(2 * np.pi * sigma**2)

    big_p, big_q = dens(batch_law([Fraction(1), *vals])), dens(batch_law(vals))
    g = float(np.exp(float(Fraction(eps))))
    return max(float(np.trapezoid(np.maximum(a - g * bb, 0), x)) for a, bb in
               ((big_p, big_q), (big_q, big_p)))


@pytest.mark.parametrize("others", [(-1,), (0,), (1, -1)])
def test_the_pair_dominates_the_mechanism_on_a_small_dataset(others):
    """Five records, rate 1/2, batches cut to 2: the true curve lies below the pair's."""
    for eps in ("1/4", "1"):
        true = _true_delta(1, 5, "1/2", 2, others, eps)
        ref = _reference(1, 5, Fraction(1, 2), 2, Fraction(eps))
        assert true <= ref * (1 + 1e-6)
        lo, hi = dx.compose(dx.truncated_subsampled_gaussian("1", 5, "1/2", 2), 1).delta(
            eps).interval(30)
        assert true <= _mp(hi)


def test_without_truncation_or_at_rate_one_it_is_one_subsampled_gaussian():
    g = dx.gaussian_noise("1")
    assert dx.truncated_subsampled_gaussian("1", 50, "1/10", 50).loss_pair() == g.subsample(
        "1/10").loss_pair()
    fixed = dx.truncated_subsampled_gaussian("1", 50, "1", 5).loss_pair()
    assert fixed == dx.gaussian_noise("1", 2).subsample("1/10").loss_pair()


def test_refusals_name_the_valid_range():
    with pytest.raises(dx.InvalidParameterError, match=r"q = 3/2 is outside the valid range"):
        dx.truncated_subsampled_gaussian("1", 10, "3/2", 2)
    with pytest.raises(dx.InvalidParameterError, match=r"batch_size = 0 must be an integer >= 1"):
        dx.truncated_subsampled_gaussian("1", 10, "1/2", 0)
    with pytest.raises(dx.InvalidParameterError, match="itself the sampling"):
        dx.truncated_subsampled_gaussian("1", 10, "1/2", 2).subsample("1/2")


def test_the_cli_spelling():
    from dpcompose_exact.mechanisms.families import build
    from dpcompose_exact.regions.specs import parse_mech_spec

    m = build(parse_mech_spec("trunc(1,1000,1/10,100):3"))
    assert m == dx.truncated_subsampled_gaussian("1", 1000, "1/10", 100)
    assert m.label == "trunc(1,1000,1/10,100)"


def _events():
    return pytest.importorskip("dp_accounting.dp_event")


def test_the_event_composes_next_to_other_kinds_under_dp_accountings_number():
    """dp_accounting's PLD reads the truncated part under replace-one at half the noise, a
    looser pair than ours (the record replacing one of the batch shifts one side only): its
    numbers lie above our upper ends; with the untruncated Gaussian part they agree."""
    de = _events()
    pld = pytest.importorskip("dp_accounting.pld")
    from dpcompose_exact.integrations.dp_accounting import ExactAccountant

    event = de.ComposedDpEvent([
        de.SelfComposedDpEvent(de.TruncatedSubsampledGaussianDpEvent(300, 0.05, 12, 1.0), 20),
        de.GaussianDpEvent(4.0),
    ])
    acc = ExactAccountant()
    assert acc.supports(event)
    acc.compose(event)
    ours = acc.get_delta(1.0)
    theirs = pld.PLDAccountant(value_discretization_interval=1e-3).compose(event).get_delta(1.0)
    assert ours < theirs
    # nothing truncated: the Poisson-subsampled Gaussian
    plain = de.TruncatedSubsampledGaussianDpEvent(1000, 0.01, 1000, 1.0)
    poisson = de.PoissonSampledDpEvent(0.01, de.GaussianDpEvent(1.0))
    assert ExactAccountant().compose(plain, 50).get_delta(0.5) == ExactAccountant().compose(
        poisson, 50).get_delta(0.5)


def test_the_event_is_refused_under_replace_one_with_its_reason():
    de = _events()
    from dpcompose_exact.integrations.events import EventTreeError, event_kinds

    event = de.TruncatedSubsampledGaussianDpEvent(1000, 0.01, 20, 1.0)
    with pytest.raises(EventTreeError, match="composed under ADD_OR_REMOVE_ONE"):
        event_kinds(event, "REPLACE_ONE")
    assert event_kinds(de.TruncatedSubsampledGaussianDpEvent(1000, 0.0, 20, 1.0)).items == []


def test_without_replacement_under_add_remove_is_the_replace_one_pair():
    """A fixed batch of m of n under add/remove: the record replaces one of the batch with
    probability m/n, the pair read under REPLACE_ONE (theory, section 23); the case q = 1 of
    the truncated sampler, whose pair is built independently of the event reader."""
    de = _events()
    from dpcompose_exact.integrations.dp_events import DpConstraintsEvent
    from dpcompose_exact.integrations.events import EventTreeError, event_kinds

    event = de.SampledWithoutReplacementDpEvent(1000, 10, de.GaussianDpEvent(1.0))
    ((m, _),) = event_kinds(event, "ADD_OR_REMOVE_ONE").items
    assert m.loss_pair() == event_kinds(event, "REPLACE_ONE").items[0][0].loss_pair()
    assert m.loss_pair() == dx.truncated_subsampled_gaussian("1", 1000, "1", 10).loss_pair()
    # the mechanism on five records, batches of 2: below the pair's curve
    for eps in ("1/4", "1"):
        true = _true_delta(1, 5, "1", 2, (-1,), eps)
        pair = dx.gaussian_noise("1", 2).subsample("2/5")
        lo, hi = dx.compose(pair, 1).delta(eps).interval(30)
        assert true <= float(hi) * (1 + 1e-6)
        assert float(lo) <= true * (1 + 1e-6)  # tight: every other record equal
    inner = DpConstraintsEvent([("1", "0")])
    with pytest.raises(EventTreeError, match="does not \\(its guarantee is for the accountant"):
        event_kinds(de.SampledWithoutReplacementDpEvent(100, 10, inner), "ADD_OR_REMOVE_ONE")


# -- RepeatAndSelectDpEvent of an event without a pure eps: Papernot-Steinke's RDP bound --


def _geometric_best_of_gaussian(mu, mean, eps):
    """delta(eps) of the best of K ~ Geometric(1/mean) draws of N(mu, 1) against N(0, 1).

    The best output (the largest draw; its law is g'(F(y)) f(y), g(x) = gamma x / (1 - (1 -
    gamma) x)) is repeat-and-select of the Gaussian with the output as its own score.
    """
    with mpmath.workdps(15):
        gam = 1 / _mp(mean)
        g = mpmath.exp(_mp(eps))

        def dens(y, m):
            f = mpmath.ncdf(y - m)
            return gam / (1 - (1 - gam) * f) ** 2 * mpmath.npdf(y - m)

        pts = [mpmath.mpf(v) for v in range(-12, 16)]
        fwd = mpmath.quad(lambda y: max(dens(y, mu) - g * dens(y, 0), 0), pts)
        rev = mpmath.quad(lambda y: max(dens(y, 0) - g * dens(y, mu), 0), pts)
        return max(fwd, rev)


def test_repeat_and_select_of_a_gaussian_is_bounded_above_the_best_of_k():
    de = _events()
    rdp = pytest.importorskip("dp_accounting.rdp")
    from dpcompose_exact.integrations.dp_accounting import ExactAccountant

    event = de.RepeatAndSelectDpEvent(de.GaussianDpEvent(2.0), 10.0, 1.0)
    acc = ExactAccountant().compose(event)
    assert any("Papernot-Steinke RDP upper bound" in note for note in acc.bound_notes)
    for eps in (1.0, 2.0):
        true = _geometric_best_of_gaussian(Fraction(1, 2), 10, Fraction(eps))
        ours = acc.get_delta(eps)
        assert true <= ours
    # the same theorem in dp_accounting (floats at its orders): within 1 %
    theirs = rdp.RdpAccountant().compose(event).get_epsilon(1e-5)
    assert abs(acc.get_epsilon(1e-5) - theirs) < 1e-2 * theirs
    # mean 1: K = 1, the Gaussian itself
    once = ExactAccountant().compose(de.RepeatAndSelectDpEvent(de.GaussianDpEvent(2.0), 1.0, 1.0))
    assert once.get_epsilon(1e-5) == ExactAccountant().compose(de.GaussianDpEvent(2.0)).get_epsilon(
        1e-5)


def test_repeat_and_select_of_dp_sgd_uses_certified_renyi_orders():
    de = _events()
    rdp = pytest.importorskip("dp_accounting.rdp")
    from dpcompose_exact.integrations.dp_accounting import ExactAccountant
    from dpcompose_exact.integrations.events import EventTreeError, event_kinds

    sgd = de.SelfComposedDpEvent(de.PoissonSampledDpEvent(0.01, de.GaussianDpEvent(1.0)), 100)
    event = de.RepeatAndSelectDpEvent(sgd, 5.0, 0.0)
    ours = ExactAccountant().compose(event).get_epsilon(1e-5)
    theirs = rdp.RdpAccountant().compose(event).get_epsilon(1e-5)
    assert abs(ours - theirs) < 2e-2 * theirs
    alone = ExactAccountant().compose(sgd).get_epsilon(1e-5)
    assert ours > alone
    mog = de.MixtureOfGaussiansDpEvent(1.0, [0, 1, 2], [0.5, 0.25, 0.25])
    with pytest.raises(EventTreeError, match="without certified Renyi divergences"):
        event_kinds(de.RepeatAndSelectDpEvent(mog, 3.0, 1.0))


def _poisson_best_of_gaussian(mu, mean, eps):
    """delta(eps) of the best of K ~ Poisson(mean) draws of N(mu, 1) against N(0, 1).

    K = 0 prints a fixed output (probability e^-mean on both sides); the best of K >= 1
    draws has the density mean e^{mean (F - 1)} f.
    """
    with mpmath.workdps(15):
        m = _mp(mean)
        g = mpmath.exp(_mp(eps))

        def dens(y, c):
            return m * mpmath.exp(m * (mpmath.ncdf(y - c) - 1)) * mpmath.npdf(y - c)

        pts = [mpmath.mpf(v) for v in range(-12, 16)]
        fwd = mpmath.quad(lambda y: max(dens(y, mu) - g * dens(y, 0), 0), pts)
        rev = mpmath.quad(lambda y: max(dens(y, 0) - g * dens(y, mu), 0), pts)
        return max(fwd, rev)


def test_repeat_and_select_with_a_poisson_count_uses_the_events_own_delta():
    """Theorem 6 of Papernot and Steinke with the event's certified delta(eps_hat) (not an
    RDP conversion, as dp_accounting's): below dp_accounting's number, above the truth of
    the best-of-K rule."""
    de = _events()
    rdp = pytest.importorskip("dp_accounting.rdp")
    from dpcompose_exact.integrations.dp_accounting import ExactAccountant

    event = de.RepeatAndSelectDpEvent(de.GaussianDpEvent(2.0), 10.0, float("inf"))
    acc = ExactAccountant().compose(event)
    assert acc.get_epsilon(1e-5) < rdp.RdpAccountant().compose(event).get_epsilon(1e-5)
    assert acc.get_epsilon(1e-5) > ExactAccountant().compose(de.GaussianDpEvent(2.0)).get_epsilon(
        1e-5)
    true = _poisson_best_of_gaussian(Fraction(1, 2), 10, Fraction(2))
    assert true <= acc.get_delta(2.0)


def test_the_accountant_says_the_enclosure_is_of_a_dominating_pair():
    de = _events()
    from dpcompose_exact.integrations.dp_accounting import ExactAccountant

    acc = ExactAccountant().compose(de.TruncatedSubsampledGaussianDpEvent(300, 0.05, 12, 1.0))
    assert any("dominating pair" in note for note in acc.bound_notes)
