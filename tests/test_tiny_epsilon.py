"""eps(delta) at tiny deltas and tiny rates on the certified loss grid (docs/theory.md, section 15).

Three regressions, each checked against what does not come from the code under test:

* where two sweeps of the lower measure's buckets meet ("Where the sweeps meet"), their
  unfinished buckets are landed on a grid point instead of rounded: the lower measure's mean
  loss is a post-processing's Kullback-Leibler divergence, so it is at most the true one
  (data processing) and, landed, within a hair of it (mpmath quadrature of the true
  divergence; rounded, it was below zero);
* a tilted fold's crossing is bracketed from its guess, not from ``[0, 1]`` ("Choosing the
  tilt"): a synthetic estimate that is garbage far below its crossing, and a composition
  whose lower end came back 0 on its own grid;
* the box's row that was ``2.1e-3`` wide (Laplace at rate ``7.47e-5``, ``144437`` uses,
  ``eps(2.1e-11)``): narrow, with a positive lower end, and inside the enclosure the same
  composition gives on another grid (two certified enclosures of one number intersect).
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest

import dpcompose_exact as dx
from dpcompose_exact.engines import epsguide
from dpcompose_exact.engines.gridcells import cell_masses
from dpcompose_exact.engines.subsample_grid import NoiseGridComposition


def _mp(x: str) -> mpmath.mpf:
    f = F(x)
    return mpmath.mpf(f.numerator) / f.denominator


def _laplace_kl(b: str, q: str) -> tuple[mpmath.mpf, mpmath.mpf]:
    """``(E_A[L], E_B[-L])`` of one use of Laplace(b) at rate q (sensitivity 1), mpmath."""
    with mpmath.workdps(30):
        bb, qq = _mp(b), _mp(q)

        def loss(x: mpmath.mpf) -> mpmath.mpf:
            return mpmath.log(1 - qq + qq * mpmath.e ** ((abs(x) - abs(x - 1)) / bb))

        def p_q(x: mpmath.mpf) -> mpmath.mpf:
            return mpmath.e ** (-abs(x) / bb) / (2 * bb)

        def p_a(x: mpmath.mpf) -> mpmath.mpf:
            return qq * p_q(x - 1) + (1 - qq) * p_q(x)

        pts = [-mpmath.inf, 0, 1, mpmath.inf]
        return (
            mpmath.quad(lambda x: p_a(x) * loss(x), pts),
            mpmath.quad(lambda x: p_q(x) * -loss(x), pts),
        )


def _gauss_kl(sigma: str, q: str) -> tuple[mpmath.mpf, mpmath.mpf]:
    """``(E_A[L], E_B[-L])`` of one use of N(0, sigma^2) at rate q (sensitivity 1), mpmath."""
    with mpmath.workdps(30):
        s, qq = _mp(sigma), _mp(q)

        def loss(x: mpmath.mpf) -> mpmath.mpf:
            return mpmath.log(1 - qq + qq * mpmath.e ** ((2 * x - 1) / (2 * s**2)))

        def p_a(x: mpmath.mpf) -> mpmath.mpf:
            return qq * mpmath.npdf(x, 1, s) + (1 - qq) * mpmath.npdf(x, 0, s)

        pts = [-mpmath.inf, -10 * s, 0, 1, 10 * s + 1, mpmath.inf]
        return (
            mpmath.quad(lambda x: p_a(x) * loss(x), pts),
            mpmath.quad(lambda x: mpmath.npdf(x, 0, s) * -loss(x), pts),
        )


def _lower_means(cells: dict, h: F) -> tuple[float, float, float, float]:
    """The lower measures' mean losses ``(forward, reverse)`` and their shifts ``tau``."""
    out = []
    for name in ("fwd_lo", "rev_lo"):
        m = cells[name]
        losses = (m.offset + np.arange(m.masses.size)) * float(h)
        out.append(math.fsum(m.masses * losses))
    return out[0], out[1], float(cells["fwd_lo"].shift), float(cells["rev_lo"].shift)


def test_laplace_buckets_where_the_sweeps_meet_keep_the_mean_loss():
    # the automatic grid of the box's row: L+ / 17 (the bottom atom 0.15 of a cell off)
    b, q = "19.5", "7.47e-5"
    top = math.log1p(float(F(q)) * math.expm1(1 / float(F(b))))
    h = F(top / 17 * (1 - 1e-12))
    sub = dx.laplace_noise(b).subsample(q).loss_pair().grid_noise()
    fwd, rev, tau_f, tau_r = _lower_means(cell_masses(sub, h), h)
    kl_a, kl_b = _laplace_kl(b, q)
    # data processing: a post-processing's divergence is at most the true one (the lattice
    # losses may sit up to tau above the buckets' own)
    assert fwd - tau_f <= float(kl_a) * (1 + 1e-9)
    assert rev - tau_r <= float(kl_b) * (1 + 1e-9)
    # landed: within 1e-13 of it (rounded, the meeting buckets cost 9.2e-11: the mean was
    # -8.5e-11 where the divergence is 7.2e-12)
    assert fwd >= float(kl_a) - 1e-13
    assert rev >= float(kl_b) - 1e-13


def test_deep_gaussian_buckets_where_the_sweeps_meet_keep_the_mean_loss():
    sigma, q, h = "2", "1/1000", F(1, 10000)
    sub = dx.gaussian_noise(sigma).subsample(q).loss_pair().grid_noise()
    fwd, rev, tau_f, tau_r = _lower_means(cell_masses(sub, h, deep=True), h)
    kl_a, kl_b = _gauss_kl(sigma, q)
    assert fwd - tau_f <= float(kl_a) * (1 + 1e-9)
    assert rev - tau_r <= float(kl_b) * (1 + 1e-9)
    # within 2 % of the divergence (rounded: -5.0e-6 against 1.42e-7, 36 times it below)
    assert fwd >= 0.98 * float(kl_a)
    assert rev >= 0.98 * float(kl_b)


def test_a_tilted_crossing_is_bracketed_from_its_guess():
    # garbage far below the crossing (a tilted fold's FFT noise blown up by e^{C - lam T h}),
    # a decreasing curve near it: delta 1e-12 crossed at eps = 50
    def est(x: float) -> float:
        return -1e6 if x < 10 else 1e-12 * math.exp(-(x - 50))

    assert epsguide._crossing(est, F(1, 10**12)) < 1  # from [0, 1]: a false crossing
    got = epsguide._crossing(est, F(1, 10**12), 49.0)
    assert abs(got - 50) < 1e-6


def test_the_ordinary_route_of_a_tiny_delta_has_a_positive_lower_end():
    # on its own grid its lower end was 0 (the tilted lower fold's crossing found near 0)
    sub = dx.laplace_noise("1").subsample("1/2").loss_pair().grid_noise()
    comp = NoiseGridComposition([(sub, 400)])
    d = F(1, 10**13)
    lo, hi = (F(x) for x in comp._ordinary_epsilon(d, comp).interval(12))
    assert 0 < lo <= hi
    assert hi - lo <= F(1, 10**4) * hi


def test_laplace_at_a_tiny_rate_and_delta_is_narrow_and_positive():
    mech = dx.laplace_noise("19.5").subsample("7.47e-5")
    value = dx.compose([(mech, 144437)]).epsilon("2.1e-11")
    lo, hi = (F(x) for x in value.interval(12))
    assert lo > 0
    assert hi - lo <= F(1, 10**4) * hi  # was 2.1e-3
    # another grid (L+ / 20, aligned by hand: the bottom atom 2.9e-4 of a cell off) gives a
    # certified enclosure of the same number: the two must meet
    top = math.log1p(float(F("7.47e-5")) * math.expm1(1 / 19.5))
    other = NoiseGridComposition(
        [(mech.loss_pair().grid_noise(), 144437)], F(top / 20 * (1 - 1e-12))
    )
    lo2, hi2 = (F(x) for x in other.epsilon(F("2.1e-11")).interval(12))
    assert max(lo, lo2) <= min(hi, hi2)


@pytest.mark.parametrize("delta", ["1e-5", "1e-6"])
def test_laplace_at_a_tiny_rate_is_bracketed_by_dp_accounting_where_its_noise_allows(delta):
    # dp_accounting's PLD on a fine grid (1e-6), pessimistic: its delta at our lower end is
    # above the true one, which is above delta (certified); its FFT noise (2.4e-11 of tail
    # mass here) rules out smaller deltas, and its optimistic value is 0
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pldm

    b, q, k = "19.5", "7.47e-5", 144437
    value = dx.compose([(dx.laplace_noise(b).subsample(q), k)]).epsilon(delta)
    lo, hi = (float(x) for x in value.interval(12))
    assert 0 < lo <= hi
    pess = pldm.from_laplace_mechanism(
        19.5, 1, sampling_prob=7.47e-5, pessimistic_estimate=True,
        value_discretization_interval=1e-6, use_connect_dots=True,
    ).self_compose(k)
    assert pess.get_delta_for_epsilon(lo) >= float(delta) * (1 - 1e-6)


def _counted(f: object) -> tuple[list[int], object]:
    calls = [0]

    def est(x: float) -> float:
        calls[0] += 1
        return f(x)  # type: ignore[operator]

    return calls, est


@pytest.mark.parametrize("a, c, d", [(1 / 3, 1.0, 1e-9), (0.5, 0.0, 1e-6), (0.0, 1000.0, 1e-5),
                                     (2.0, 0.1, 1e-15), (1e-3, 3.0, 1e-2)])
def test_a_crossing_is_narrowed_in_a_few_steps_to_what_bisection_gives(a: float, c: float,
                                                                       d: float) -> None:
    # est = e^{-a x^3 - c x}, decreasing and smooth in log: the answer b must have est(b) <= d
    # and est(b - w) > d, w the bracket over 2^32 (what 32 bisections give), found here in at
    # most 14 evaluations (bisection took 34); the crossing itself, from a root finder
    def f(x: float) -> float:
        return math.exp(-a * x**3 - c * x)

    target = F(d)
    root = float(mpmath.findroot(lambda x: -a * x**3 - c * x - mpmath.log(d), 1.0))
    calls, est = _counted(f)
    lo, hi = 0.0, 2 * root + 1
    got = epsguide._narrow_crossing(est, target, lo, hi)
    w = (hi - lo) * 2.0**-32
    assert f(got) <= d < f(got - w)
    assert abs(got - root) <= 2 * w
    assert calls[0] <= 14


def test_a_crossing_in_noise_falls_back_to_bisection() -> None:
    # an estimate that is 0 above its crossing (no log: no secant) still gets the bracket
    # of 32 bisections
    calls, est = _counted(lambda x: 0.0 if x > 3.3 else 0.5)
    got = epsguide._narrow_crossing(est, F(1, 10**5), 0.0, 8.0)
    assert 3.3 <= got <= 3.3 + 8 * 2.0**-32
    assert calls[0] <= 34
