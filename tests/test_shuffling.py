"""Shuffled training from below: Chua et al.'s cube test certified, and the larger bound.

References are independent of the package: the cube masses in mpmath at 150 digits from
their closed form (``P(max_t y_t <= C) = Phi((C - m)/sigma) Phi(C/sigma)^(k-1)``), the
count over epochs by enumerating every outcome of the epochs' indicators (not the
binomial formula), the authors' published float64 figures (google-research
``dpsgd_batch_sampler_accounting``, one epoch of 1000 steps), and the certified upper end
of the replace-one pair's enclosure (a lower bound never lies above it).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import flint
import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.engines.shuffle import CubeTest, cube_masses
from dpcompose_exact.numbers.convert import ball_end
from dpcompose_exact.tools.shuffling import CUBE, ENCLOSURE, ZERO_OUT


def mp_masses(sigma, k, epochs, test):
    """``(A(E), B(E))`` of a test in mpmath, the count by enumerating the epochs' outcomes."""
    mu_p, mu_q = {"replace-one": (2, 0), "zero-out": (2, 1)}[test.pair]
    s = mpmath.mpf(sigma.numerator) / sigma.denominator
    c = mpmath.mpf(test.cap.numerator) / test.cap.denominator

    def inside(mu):
        return mpmath.ncdf((c - mu) / s) * mpmath.ncdf(c / s) ** (k - 1)

    if test.forward:
        a, b = 1 - inside(mu_p), 1 - inside(mu_q)
    else:
        a, b = inside(mu_q), inside(mu_p)

    def count_at_least(p):
        total = mpmath.mpf(0)
        for outcome in itertools.product((0, 1), repeat=epochs):
            if sum(outcome) >= test.count:
                total += mpmath.fprod(p if o else 1 - p for o in outcome)
        return total

    return count_at_least(a), count_at_least(b)


@pytest.mark.parametrize(
    "sigma, k, epochs, test",
    [
        (Fraction(1), 1000, 1, CubeTest("replace-one", Fraction("5.99863"), 1, True)),
        (Fraction(7, 20), 1000, 1, CubeTest("zero-out", Fraction("1.63"), 1, True)),
        (Fraction(1), 10, 3, CubeTest("replace-one", Fraction("2.12"), 2, True)),
        (Fraction(3, 2), 20, 2, CubeTest("zero-out", Fraction("-1.5"), 1, False)),
        (Fraction(1, 2), 50, 1, CubeTest("replace-one", Fraction("9"), 1, True)),
    ],
)
def test_cube_masses_enclose_the_mpmath_values(sigma, k, epochs, test):
    with mpmath.workdps(150):  # 1 - Phi(..) Phi(..)^(k-1) cancels about 45 digits at C = 9
        ref_a, ref_b = mp_masses(sigma, k, epochs, test)
        a, b = cube_masses(sigma, k, epochs, test)
        for ball, ref in ((a, ref_a), (b, ref_b)):
            with flint.ctx.workprec(256):  # the ends exactly, not at the 53 bits of the context
                lo, hi = (mpf(ball_end(ball, up)) for up in (False, True))
            assert 0 < lo <= ref <= hi
            assert hi - lo <= mpmath.mpf(10) ** -30 * ref


def upper(value):
    """The certified upper end of a value (its decimal rounded up)."""
    return Fraction(value.interval(12)[1])


def mpf(q):
    return mpmath.mpf(q.numerator) / q.denominator


def test_the_published_zero_out_figures_are_certified():
    # dpsgd_batch_sampler_accounting/example.py and dpsgd_bounds.py: one epoch of 1000
    # steps; their float64 ShuffleAccountant (caps on a grid of step 0.01) prints
    # delta(1) >= 0.753147 and eps(1e-5) >= 15.6578 at sigma 0.35, eps(1e-5) >= 2.88209
    # and delta(1) >= 9.98732e-4 at sigma 1; ours refines the cap, so it is at least theirs
    for sigma, d1, e5 in (("0.35", "0.753147", "15.6578"), ("1", "0.000998732", "2.88209")):
        b = dx.shuffling_lower_bound(sigma, steps=1000)
        e = b.epsilon("1e-5", enclosure=False)
        d = b.delta("1", enclosure=False)
        assert Fraction(e5) <= e.candidates[ZERO_OUT] < Fraction(e5) + Fraction(1, 1000)
        assert Fraction(d1) <= d.candidates[ZERO_OUT] < Fraction(d1) * Fraction(10001, 10000)
        # the replace-one pair's own test is larger (its Q puts less mass above the cap)
        assert e.source == d.source == CUBE
        assert e.candidates[CUBE] > e.candidates[ZERO_OUT]
        assert e.notes[ENCLOSURE].startswith("not asked")
    # at sigma 0.35 the replace-one pair's test gives eps(1e-5) >= 33.04
    assert dx.shuffling_lower_bound("0.35", 1000).epsilon("1e-5", enclosure=False).text(4) == (
        "33.04"
    )


def test_the_larger_bound_is_the_cube_test_deep_in_the_tail_and_the_enclosure_elsewhere():
    # sigma 1, 100 steps: at delta 1e-5 the one test beats the enclosure's lower end (on
    # the grid 1e-3: [5.39252, 5.39823]), at eps 1 the enclosure wins; neither exceeds the
    # enclosure's certified upper end
    b = dx.shuffling_lower_bound("1", steps=100)
    pair = dx.random_allocation(dx.gaussian_noise("1", 2), steps=100)
    comp = dx.compose(pair, 1, grid="1/1000")
    e = b.epsilon("1e-5", grid="1/1000")
    assert e.source == CUBE
    assert e.candidates[ENCLOSURE] < e.candidates[CUBE] <= upper(comp.epsilon("1e-5"))
    d = b.delta("1", grid="1/1000")
    assert d.source == ENCLOSURE
    assert d.candidates[CUBE] < d.candidates[ENCLOSURE] <= upper(comp.delta("1"))
    assert e.value.known_rational() == max(v for v in e.candidates.values() if v is not None)


@pytest.mark.parametrize("sigma, k, epochs", [("2", 10, 2), ("2", 5, 3)])
def test_over_epochs_the_counted_test_stays_below_the_enclosure(sigma, k, epochs):
    b = dx.shuffling_lower_bound(sigma, steps=k, epochs=epochs)
    comp = dx.compose(dx.random_allocation(dx.gaussian_noise(sigma, 2), steps=k), epochs)
    e = b.epsilon("1e-5", enclosure=False)
    d = b.delta("1", enclosure=False)
    assert 0 < e.candidates[CUBE] <= upper(comp.epsilon("1e-5"))
    assert 0 < d.candidates[CUBE] <= upper(comp.delta("1"))
    # more epochs, a larger bound (the test counts the epochs in the event)
    one = dx.shuffling_lower_bound(sigma, steps=k).epsilon("1e-5", enclosure=False)
    assert e.candidates[CUBE] > one.candidates[CUBE]


def test_no_test_reaches_a_delta_above_every_mass():
    b = dx.shuffling_lower_bound("20", steps=10).epsilon("0.9", enclosure=False)
    assert b.source == "none" and b.value.known_rational() == 0
    assert "no test of the replace-one pair gives eps > 0" in b.notes[CUBE]


def test_inputs_are_checked():
    with pytest.raises(TypeError, match="float"):
        dx.shuffling_lower_bound(0.5, steps=10)
    with pytest.raises(dx.InvalidParameterError, match=r"steps = 0 must be an integer in \[1,"):
        dx.shuffling_lower_bound("1", steps=0)
    with pytest.raises(dx.InvalidParameterError, match="epochs"):
        dx.shuffling_lower_bound("1", steps=10, epochs=0)
    with pytest.raises(dx.InvalidParameterError, match=r"outside the valid range \[0, 1\)"):
        dx.shuffling_lower_bound("1", steps=10).epsilon("2", enclosure=False)
