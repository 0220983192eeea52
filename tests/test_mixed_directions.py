"""Exactly subsampled finite pairs next to noise: both directions conditioned on the noise.

References are independent of the code under test: the k-fold loss distribution of the
subsampled pure-DP pair enumerated by hand (a binomial) with mpmath's Gaussian delta, and
dp_accounting's PLD at a fine discretization, pessimistic and optimistic, per direction.
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath as mp
import pytest

import dpcompose_exact as dx

K, Q = 50, F(1, 10)
# Mechanism.dp("log(3)"): the pair P = (3/4, 1/4), Q = (1/4, 3/4); subsampled at 1/10,
# A = q P + (1 - q) Q = (3/10, 7/10) and B = Q = (1/4, 3/4)
A = (F(3, 10), F(7, 10))
B = (F(1, 4), F(3, 4))


def _gauss_delta(mu: mp.mpf, t: mp.mpf) -> mp.mpf:
    return mp.ncdf(-t / mu + mu / 2) - mp.e**t * mp.ncdf(-t / mu - mu / 2)


def _directions() -> list[tuple[F, F, F]]:
    """``(mass of the first outcome, its ratio, the other's ratio)`` under A and under B."""
    return [(A[0], A[0] / B[0], A[1] / B[1]), (B[0], B[0] / A[0], B[1] / A[1])]


def _reference(eps: mp.mpf, mu2: F, k: int = K) -> mp.mpf:
    mu = mp.sqrt(mp.mpf(mu2.numerator) / mu2.denominator)
    best = mp.mpf(0)
    for p0, r0, r1 in _directions():
        p, l0, l1 = (
            mp.mpf(p0.numerator) / p0.denominator,
            mp.log(mp.mpf(r0.numerator) / r0.denominator),
            mp.log(mp.mpf(r1.numerator) / r1.denominator),
        )
        s = mp.fsum(
            mp.binomial(k, j)
            * p**j
            * (1 - p) ** (k - j)
            * _gauss_delta(mu, eps - j * l0 - (k - j) * l1)
            for j in range(k + 1)
        )
        best = max(best, s)
    return best


def test_subsampled_pair_next_to_gaussian_equals_the_binomial_sum():
    with mp.workdps(50):
        _pair_next_to_gaussian_equals_the_binomial_sum()


def _pair_next_to_gaussian_equals_the_binomial_sum():
    c = dx.compose([(dx.Mechanism.dp("log(3)").subsample("1/10"), K), (dx.gaussian_noise("2"), 10)])
    assert c.method == "certified"
    assert "asymmetric, both directions" in c.why and "closed form" in c.why
    for eps in ("0", "1/2", "2", "log(3)"):
        want = _reference(
            mp.log(3) if eps == "log(3)" else mp.mpf(F(eps).numerator) / F(eps).denominator,
            F(10, 4),
        )
        got = c.delta(eps).decimal(35)
        assert abs(mp.mpf(got) - want) < mp.mpf(10) ** -33, (eps, got, want)
    lo, hi = (mp.mpf(x) for x in c.epsilon("1e-5").interval(25))
    assert hi - lo < mp.mpf(10) ** -20
    assert (
        _reference(lo - mp.mpf(10) ** -15, F(10, 4))
        > mp.mpf("1e-5")
        > _reference(hi + mp.mpf(10) ** -15, F(10, 4))
    )


def test_small_case_takes_the_larger_direction():
    """A small case (k = 5, one Gaussian): the larger of the two directions' sums."""
    c = dx.compose([(dx.Mechanism.dp("log(3)").subsample("1/10"), 5), (dx.gaussian_noise("4"), 1)])
    with mp.workdps(30):
        for eps in ("0", "1"):
            want = _reference(mp.mpf(F(eps).numerator), F(1, 16), k=5)
            assert abs(mp.mpf(c.delta(eps).decimal(25)) - want) < mp.mpf(10) ** -23


def _dp_accounting_brackets(noise_pld, eps: float, k: int) -> tuple[float, float]:
    """(optimistic, pessimistic) delta of the subsampled pair k times with the noise PLDs."""
    from dp_accounting.pld import privacy_loss_distribution as pldm

    out = []
    for pess in (False, True):
        best = 0.0
        for upper, lower in ((A, B), (B, A)):
            pair = pldm.from_two_probability_mass_functions(
                {i: float(mp.log(float(lower[i]))) for i in (0, 1)},
                {i: float(mp.log(float(upper[i]))) for i in (0, 1)},
                pessimistic_estimate=pess,
                value_discretization_interval=1e-5,
            )
            comp = pair.self_compose(k).compose(noise_pld(pess))
            best = max(best, comp.get_delta_for_epsilon(eps))
        out.append(best)
    return out[0], out[1]


@pytest.mark.parametrize("kind", ["laplace", "subsampled gaussian"])
def test_subsampled_pair_next_to_grid_noise_brackets_dp_accounting(kind):
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pldm

    k = 10
    if kind == "laplace":
        noise = dx.laplace_noise("1")

        def noise_pld(pess):
            return pldm.from_laplace_mechanism(
                1.0, pessimistic_estimate=pess, value_discretization_interval=1e-5
            ).self_compose(5)

    else:
        noise = dx.gaussian_noise("2").subsample("1/10")

        def noise_pld(pess):
            return pldm.from_gaussian_mechanism(
                2.0,
                pessimistic_estimate=pess,
                value_discretization_interval=1e-5,
                sampling_prob=0.1,
            ).self_compose(5)

    c = dx.compose([(dx.Mechanism.dp("log(3)").subsample("1/10"), k), (noise, 5)])
    assert c.is_bounded and "asymmetric, both directions" in c.why
    for eps in (0.5, 1.0):
        opt, pess = _dp_accounting_brackets(noise_pld, eps, k)
        lo, hi = (float(x) for x in c.delta(repr(eps)).interval(17))
        assert lo <= pess * (1 + 1e-9) and hi >= opt * (1 - 1e-9), (eps, lo, hi, opt, pess)
        assert hi - lo < 1e-4 * hi


def test_rounded_subsampled_pair_next_to_noise_is_an_enclosure():
    """eps = 0.3 leaves the field: a stronger and a weaker exact pair bound the answer."""
    c = dx.compose([(dx.Mechanism.dp("0.3").subsample("1/10"), 20), (dx.gaussian_noise("2"), 10)])
    assert c.is_bounded and "stronger and a weaker" in c.why
    lo, hi = (F(x) for x in c.delta("1").interval(20))
    # the same with eps = log(27/20) >= 0.3 and log(4/3) <= 0.3: exact pairs on either side
    up = dx.compose(
        [(dx.Mechanism.dp("log(27/20)").subsample("1/10"), 20), (dx.gaussian_noise("2"), 10)]
    )
    down = dx.compose(
        [(dx.Mechanism.dp("log(4/3)").subsample("1/10"), 20), (dx.gaussian_noise("2"), 10)]
    )
    assert F(down.delta("1").interval(20)[0]) <= lo <= hi <= F(up.delta("1").interval(20)[1])
    assert hi - lo < F(1, 10**6)


def test_laplace_next_to_a_large_finite_part_is_fast_and_brackets_dp_accounting():
    """Laplace x10 next to the paper's pair x50 (201 loss values): CPU time and enclosure.

    The finite part goes on the Laplace's loss grid (docs/theory.md, section 19): 0.8 s and
    a relative width of 6e-8 for eps(1e-5) (its exact enumeration: 3.7 s and 1.3e-9).
    The reference is dp_accounting's PLD of the six-letter pair of tests/brute.py (floats)
    composed with its Laplace PLD, pessimistic and optimistic, at discretization 1e-5.
    """
    pytest.importorskip("dp_accounting")
    import time

    from brute import double_dp_letters
    from dp_accounting.pld import privacy_loss_distribution as pldm

    paper = dx.Mechanism([("3/10", "0"), ("3/20", "1/50")])
    c = dx.compose([(dx.laplace_noise("1"), 10), (paper, 50)])
    start = time.process_time()
    lo, hi = (float(x) for x in c.delta("1").interval(17))
    lo_e, hi_e = (float(x) for x in c.epsilon("1e-5").interval(17))
    spent = time.process_time() - start
    assert spent < 20, spent  # 39 s before the grid sums were batched
    assert hi - lo < 1e-6 * hi and hi_e - lo_e < 1e-6 * hi_e
    p0, p1 = double_dp_letters(mp.exp(mp.mpf("0.3")), mp.exp(mp.mpf("0.15")), 0, mp.mpf("0.02"))
    ref = {}
    for pess in (False, True):
        pair = pldm.from_two_probability_mass_functions(
            {x: float(mp.log(v)) for x, v in p1.items() if v},
            {x: float(mp.log(v)) for x, v in p0.items() if v},
            pessimistic_estimate=pess,
            value_discretization_interval=1e-5,
        )
        lap = pldm.from_laplace_mechanism(
            1.0, pessimistic_estimate=pess, value_discretization_interval=1e-5
        )
        ref[pess] = pair.self_compose(50).compose(lap.self_compose(10))
    assert lo <= ref[True].get_delta_for_epsilon(1.0) * (1 + 1e-9)
    assert hi >= ref[False].get_delta_for_epsilon(1.0) * (1 - 1e-9)
    assert lo_e <= ref[True].get_epsilon_for_delta(1e-5) + 1e-9
    assert hi_e >= ref[False].get_epsilon_for_delta(1e-5) - 1e-9


def test_symmetric_and_subsampled_pairs_next_to_gaussian_equal_a_convolution():
    """The paper's pair x3 (six letters, tests/brute.py) with log(3)-DP at 1/10 x4 and
    Gaussian noise: per direction, the convolution of the letters' losses with the
    binomial, in mpmath, summed against the Gaussian delta."""
    from brute import double_dp_letters

    with mp.workdps(40):
        p0, p1 = double_dp_letters(mp.exp(mp.mpf("0.3")), mp.exp(mp.mpf("0.15")), 0, mp.mpf("0.02"))
        one = [(p0[x], mp.log(p0[x] / p1[x])) for x in p0 if p0[x] and p1[x]]
        leak1 = sum(p0[x] for x in p0 if p0[x] and not p1[x])
        sym = [(mp.mpf(1), mp.mpf(0))]
        for _ in range(3):
            sym = [(m * n, x + r) for m, x in sym for n, r in one]
        leak = 1 - (1 - leak1) ** 3
        mu = mp.sqrt(mp.mpf(2) / 4)

        def truth(eps):
            best = mp.mpf(0)
            for p0_, r0, r1 in _directions():
                p = mp.mpf(p0_.numerator) / p0_.denominator
                l0 = mp.log(mp.mpf(r0.numerator) / r0.denominator)
                l1 = mp.log(mp.mpf(r1.numerator) / r1.denominator)
                s = leak
                for j in range(5):
                    w = mp.binomial(4, j) * p**j * (1 - p) ** (4 - j)
                    for m, x in sym:
                        s += w * m * _gauss_delta(mu, eps - x - j * l0 - (4 - j) * l1)
                best = max(best, s)
            return best

        paper = dx.Mechanism([("3/10", "0"), ("3/20", "1/50")])
        c = dx.compose(
            [
                (paper, 3),
                (dx.Mechanism.dp("log(3)").subsample("1/10"), 4),
                (dx.gaussian_noise("2"), 2),
            ]
        )
        assert c.method == "certified"
        for eps in ("0", "1/2", "3/2"):
            want = truth(mp.mpf(F(eps).numerator) / F(eps).denominator)
            got = mp.mpf(c.delta(eps).decimal(30))
            assert abs(got - want) < mp.mpf(10) ** -28, (eps, got, want)


def test_exact_accountant_composes_sampled_finite_events_next_to_noise():
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event as d

    from dpcompose_exact.integrations.dp_accounting import ExactAccountant

    sampled = d.PoissonSampledDpEvent("1/10", d.DiscreteLaplaceDpEvent("log(2)", 1))
    event = d.ComposedDpEvent(
        [d.SelfComposedDpEvent(sampled, 10), d.SelfComposedDpEvent(d.GaussianDpEvent(2), 3)]
    )
    acc = ExactAccountant()
    acc.compose(event)
    # the same list through the API: discrete Laplace e^a = 2 is a finite pair
    c = dx.compose(
        [(dx.discrete_laplace("log(2)").subsample("1/10"), 10), (dx.gaussian_noise("2"), 3)]
    )
    lo, hi = (F(x) for x in c.delta("1").interval(20))
    assert lo <= F(acc.get_delta(1.0)) <= hi + F(1, 10**15)
