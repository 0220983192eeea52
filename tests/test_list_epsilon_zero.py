"""eps(0) of noise next to finite pairs on one loss grid: the list's largest loss.

References are closed forms in mpmath, written apart from the package: the largest loss of
``k`` uses of Laplace noise of scale ``b`` on a Poisson subsample of rate ``q`` is
``k log(1 + q (e^(1/b) - 1))``, and the paper's pair (0.3, 0) + (0.15, 0.02) loses at most
0.3 per use.
"""

from __future__ import annotations

import time

import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.errors import BelowLeakError, InvalidParameterError

PAPER = dx.Mechanism([("0.3", "0"), ("0.15", "0.02")])


def test_eps_zero_of_subsampled_laplace_next_to_a_large_finite_part():
    # 300 uses of the paper's pair: more loss values (601) than the exact part takes (512),
    # so the finite part goes on the grid alone; before: "a list of noise and finite pairs
    # is answered on a loss grid for delta in (0, 1)"
    comp = dx.compose([(dx.laplace_noise(1).subsample("1/10"), 10), (PAPER, 300)])
    assert "one certified loss grid" in comp.why and "composed exactly" not in comp.why
    start = time.process_time()
    value = comp.epsilon("0")
    assert time.process_time() - start < 2
    with mpmath.workdps(40):
        lo, hi = (mpmath.mpf(x) for x in value.interval(25))
        ref = 10 * mpmath.log1p(mpmath.expm1(1) / 10) + 300 * mpmath.mpf(3) / 10
        assert lo <= ref <= hi and hi - lo < mpmath.mpf("1e-20")


def test_eps_zero_of_plain_laplace_next_to_a_large_finite_part_is_exact():
    comp = dx.compose([(dx.laplace_noise(1), 10), (PAPER, 300)])
    v = comp.epsilon("0")
    assert v.exact == "100"


def test_eps_zero_next_to_subsampled_gaussian_noise_is_refused_as_infinite():
    comp = dx.compose([(dx.gaussian_noise(1).subsample("1/10"), 10), (PAPER, 300)])
    with pytest.raises(InvalidParameterError, match="unbounded .*eps\\(0\\) is infinite"):
        comp.epsilon("0")


def test_eps_zero_with_a_leaking_finite_pair_names_the_leak():
    leaky = dx.Mechanism([("1", "1/100")])
    comp = dx.compose([(dx.laplace_noise(1).subsample("1/10"), 10), (PAPER, 300), (leaky, 1)])
    with pytest.raises(BelowLeakError, match="0.01 that a finite pair reveals"):
        comp.epsilon("0")
