"""The directed logs of lattice masses (engines.gridmeasure._log_end) against mpmath.

``_log_end`` takes ``math.log`` of the ball's end as a double where that double is normal,
else the end's mantissa and exponent; either way the result must lie on the right side of
the exact log of the end (computed here by mpmath at 60 digits from the end's exact
mantissa and exponent) and within the stated margin of it, on both sides of the switch
(the least normal double ``2^-1022``), far below it, and near the top of the doubles.
"""

from __future__ import annotations

import math

import flint
import mpmath
import pytest

from dpcompose_exact.engines.gridmeasure import _log_end


def _exact_log(end: flint.arb) -> mpmath.mpf:
    man, exp = (int(v) for v in end.mid().man_exp())
    with mpmath.workdps(60):
        return mpmath.log(mpmath.mpf(man)) + exp * mpmath.log(2)


ENDS = [
    "1", "0.5", "0.3", "1e-5", "0.9999999999999999", "123456.789",
    "1e-300", "2.2250738585072014e-308", "2.225073858507201e-308", "1e-310", "4e-324",
    "1e-400", "1e-5000", "1e300", "1.7e308",
]


@pytest.mark.parametrize("text", ENDS)
@pytest.mark.parametrize("up", [True, False])
def test_log_end_is_directed_and_tight(text: str, up: bool) -> None:
    with flint.ctx.workprec(128):
        x = flint.arb(text) * (1 + flint.arb(0, 2.0**-100))  # a ball, not a point
        end = x.upper() if up else x.lower()
    v = _log_end(x, up)
    with mpmath.workdps(60):
        ref = _exact_log(end)
        assert (v >= ref) if up else (v <= ref)
        assert abs(mpmath.mpf(v) - ref) <= 2e-12 * (abs(ref) + 1)


def test_log_end_of_a_ball_that_may_be_zero_is_minus_infinity() -> None:
    x = flint.arb(0, 1e-10)
    assert _log_end(x, False) == -math.inf
    assert _log_end(x, True) > -math.inf
