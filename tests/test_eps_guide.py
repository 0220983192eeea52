"""The double guess that places eps(delta)'s certification on a loss grid (engines.epsguide._guide).

The guess only saves evaluations (any guess gives a certified enclosure), so these tests check
that it lands on the root of a known decreasing function, within the bracket, with far fewer
evaluations than bisection to 1e-12 (about 40), and that it falls back to bisection when the
estimate is 0 somewhere in the bracket.
"""

import math

import mpmath

from dpcompose_exact.engines.epsguide import _guide


def _counted(f):
    calls = []

    def g(e: float) -> float:
        calls.append(e)
        return f(e)

    return g, calls


def test_guide_finds_the_root_of_a_gaussian_tail_in_few_evaluations() -> None:
    target = 1e-15
    estimate, calls = _counted(math.erfc)
    x = _guide(estimate, target, 4.0, 8.0, math.erfc(8.0))
    with mpmath.workdps(40):  # independent: the root of erfc(x) = 1e-15 at 40 digits
        root = mpmath.findroot(lambda t: mpmath.erfc(t) - mpmath.mpf("1e-15"), 5.6)
    assert abs(x - float(root)) <= 1e-9 * float(root)
    assert len(calls) <= 20


def test_guide_falls_back_to_bisection_where_the_estimate_is_zero() -> None:
    # a grid's estimate is exactly 0 above its largest loss: log undefined at b
    def estimate(e: float) -> float:
        return max(0.0, 3.0 - e) ** 2 / 9

    x = _guide(estimate, 0.25, 0.0, 4.0, 0.0)
    assert abs(x - 1.5) <= 1e-9
    assert 0.0 <= x <= 4.0


def test_guide_near_the_largest_loss_moves_b_below_it_on_a_log_scale() -> None:
    # delta of a bounded loss falls to 0 at its largest loss like a power of (top - e):
    # a bracket whose upper end is past it has an estimate of 0 there (no logarithm)
    top, target = 1.0234567901234568, 2.7e-14

    def quadratic(e: float) -> float:
        return 0.4 * max(0.0, top - e) ** 2

    estimate, calls = _counted(quadratic)
    x = _guide(estimate, target, 1.0, 2.0, 0.0, top)
    root = top - math.sqrt(target / 0.4)  # the closed form
    assert abs(x - root) <= 2.0**-40 * root
    assert len(calls) <= 25  # bisection on [1, 2] to 1e-12 takes about 40
    estimate, calls = _counted(quadratic)
    _guide(estimate, target, 1.0, 2.0, 0.0)  # without the largest loss: the bisection
    assert len(calls) >= 35
