"""Edges, third pass: subsampled noise at scales and rates past the doubles.

Every expected value is derived apart from the package: the largest loss of one use of
Laplace noise at rate ``q`` is ``ln(1 + q (e^{s/b} - 1))`` (docs/theory.md, section 15),
so ``k`` uses whose largest losses sum below ``eps`` have ``delta(eps) = 0`` exactly.
"""

from __future__ import annotations

import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.errors import ResourceLimitError


def largest_loss(scale: str, q: str) -> mpmath.mpf:
    """``ln(1 + q (e^{1/b} - 1))`` at 60 digits (sensitivity 1)."""
    with mpmath.workdps(60):
        return mpmath.log1p(mpmath.mpf(q) * mpmath.expm1(1 / mpmath.mpf(scale)))


@pytest.mark.parametrize(
    ("scale", "q", "k"), [("1", "1e-300", 5), ("1e400", "1/10", 3), ("1/10", "1e-300", 3)]
)
def test_tiny_losses_at_any_scale_or_rate_give_delta_zero_above_their_sum(scale, q, k):
    # scale 1e400 divided by zero and 1e-300 left "undecided grid point -74 h" before
    assert k * largest_loss(scale, q) < 1
    c = dx.compose(dx.laplace_noise(scale).subsample(q), k)
    assert c.delta("1").upper() == 0
    d0 = c.delta("0")
    assert 0 <= d0.lower() <= d0.upper() <= 1


def test_a_laplace_scale_below_the_doubles_is_refused_by_its_grid_size():
    # scale 1e-400: one use's largest loss is about 1e400; float(1e400) overflowed before
    with pytest.raises(ResourceLimitError, match=r"loss grid of laplace_noise\('1e-400'\)"):
        dx.compose(dx.laplace_noise("1e-400").subsample("1/10"), 3).delta("1")


def test_the_engines_time_limits_count_cpu_time_not_waiting():
    # the bounds' time limit (30 s by default) was wall-clock: under load a query that
    # needs a few CPU seconds was refused "within the time limit"; a sleep is no CPU time
    import time

    from dpcompose_exact.engines import bounds
    from dpcompose_exact.engines.logmeasures import check_deadline

    deadline = time.process_time() + 0.2
    time.sleep(0.3)
    check_deadline(deadline)  # no OutOfTime: waiting is not computing
    assert 0 < bounds._top_deadline(1) - time.process_time() <= 0.1


def test_numpy_integers_are_exact_inputs_and_numpy_floats_get_the_float_hint():
    # np.int64(2) was refused ("unsupported type int64"; as k: "must be a positive
    # integer"), a 0-d array as a query point failed with "iteration over a 0-d array"
    import numpy as np

    from dpcompose_exact.numbers.parsing import parse_exact

    mu2 = mpmath.sqrt(2)  # two uses of gaussian(1): G_mu, mu = sqrt(2)
    ref = mpmath.ncdf(-1 / mu2 + mu2 / 2) - mpmath.e * mpmath.ncdf(-1 / mu2 - mu2 / 2)
    for two, one in [(np.int64(2), np.int32(1)), (np.array(2), np.array(1))]:
        c = dx.compose(dx.gaussian_noise(one), two)
        d = c.delta(one)
        assert d.lower() <= ref <= d.upper()
        assert d.decimal(15) == dx.compose(dx.gaussian_noise(1), 2).delta("1").decimal(15)
    for f in (np.float32(0.5), np.float16(0.5), np.array(0.5)):
        with pytest.raises(TypeError, match=r"eps: got float .*pass the decimal as a string"):
            parse_exact(f, "eps")
        with pytest.raises(TypeError, match=r"k = .* is a float; pass an int"):
            dx.compose(dx.gaussian_noise(1), f)
