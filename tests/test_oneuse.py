"""One use of subsampled Gaussian or Laplace noise: the closed form, certified in Arb.

Every reference is computed apart from the package: the Gaussian's two hockey-stick
integrals as differences of normal tails in mpmath at 60 digits (each direction written
out from the densities), Laplace's by mpmath quadrature of ``(a(x) - e^t b(x))_+`` over
the outputs, and dp_accounting's PLD brackets for a few settings with more uses.  The
settings are rows of ``benchmarks/bench_widths.py`` (seed 2026), where the loss grid gave
lower ends of 0 and relative widths up to 507.
"""

from __future__ import annotations

import time
from fractions import Fraction as F

import mpmath
import pytest

import dpcompose_exact as dx


@pytest.fixture(autouse=True)
def _sixty_digits():
    """Every reference at 60 digits, whatever another test file left in mpmath.mp."""
    with mpmath.workdps(60):
        yield


def _mp(x):
    """An exact decimal or fraction string (or an mpf) as an mpf at 60 digits."""
    if isinstance(x, str):
        return mpmath.mpf(F(x).numerator) / F(x).denominator
    return mpmath.mpf(x)


def _gauss(sigma, q, t):
    """``max(H_{e^t}(A||B), H_{e^t}(B||A))`` of one use, ``A = (1-q) N(0,s^2) + q N(1,s^2)``."""
    sig, qm, tm = (_mp(x) for x in (sigma, q, t))
    et = mpmath.exp(tm)

    def sf(y):
        return mpmath.erfc(y / mpmath.sqrt(2)) / 2

    # forward: p/q grows with x; the crossing point solves (1-q) + q e^{(2x-1)/(2 s^2)} = e^t
    x_f = sig**2 * mpmath.log((et - 1 + qm) / qm) + mpmath.mpf(1) / 2
    fwd = qm * sf((x_f - 1) / sig) + (1 - qm) * sf(x_f / sig) - et * sf(x_f / sig)
    rev = mpmath.mpf(0)
    if 1 / et > 1 - qm:
        x_r = sig**2 * mpmath.log((1 / et - 1 + qm) / qm) + mpmath.mpf(1) / 2
        rev = (1 - sf(x_r / sig)) - et * (
            (1 - qm) * (1 - sf(x_r / sig)) + qm * (1 - sf((x_r - 1) / sig))
        )
    return max(fwd, rev, mpmath.mpf(0))


def _laplace(b, q, t):
    """The same for Laplace noise of scale ``b``, by quadrature over the outputs."""
    bm, qm, tm = (_mp(x) for x in (b, q, t))
    et = mpmath.exp(tm)

    def dens(x):
        return mpmath.exp(-abs(x) / bm) / (2 * bm)

    def a(x):
        return qm * dens(x - 1) + (1 - qm) * dens(x)

    def integral(f):
        # the integrand's kink: where f changes sign in (0, 1), found by bisection
        pts = [-mpmath.inf, mpmath.mpf(0), mpmath.mpf(1), mpmath.inf]
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        if f(lo) * f(hi) < 0:
            for _ in range(220):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if f(mid) * f(lo) > 0 else (lo, mid)
            pts.insert(2, lo)
        return mpmath.quad(lambda x: max(f(x), 0), pts)

    fwd = integral(lambda x: a(x) - et * dens(x))
    rev = integral(lambda x: dens(x) - et * a(x))
    return max(fwd, rev)


def _inside(value, truth, rel):
    lo, hi = (mpmath.mpf(x) for x in value.interval(30))
    assert lo > 0, (lo, hi)
    assert lo <= truth <= hi, (lo, truth, hi)
    assert (hi - lo) / truth <= rel, ((hi - lo) / truth, lo, hi)


# (q, eps, sigma): the k = 1 rows of the width sweep, seed 2026 (values from 3e-5 down to
# 2e-2960; the grid gave [0, 6.0e-72], [0, 2.4e-616], [0, 1.9e-319], [0, 8.4e-341],
# [5.9e-17, 3.0e-14], [0, 7.8e-320])
SWEEP = [
    ("5.18e-6", "0.0731", "3.3"),
    ("1.83e-5", "0.00271", "18.6"),
    ("0.000556", "9.89", "6.71"),
    ("5e-6", "0.0769", "7.96"),
    ("1.42e-6", "0.0019", "0.805"),
    ("0.00103", "0.0536", "13.1"),
    ("0.0406", "1.91", "4.35"),
    ("0.317", "0.000364", "6.36"),
]


@pytest.mark.parametrize(("q", "eps", "sigma"), SWEEP)
def test_one_use_of_the_subsampled_gaussian_is_certified_to_30_digits(q, eps, sigma):
    comp = dx.compose(dx.gaussian_noise(sigma).subsample(q), 1)
    truth = _gauss(sigma, q, eps)
    assert truth > 0
    _inside(comp.delta(eps), truth, 1e-25)
    assert comp.result.kind.value == "certified" and not comp.is_bounded


def test_the_reverse_direction_is_the_larger_at_a_large_rate_and_small_eps():
    # e^-eps > 1 - q: the reverse integral exists; at q = 1/2, eps = 0.01, sigma = 1/2 it wins
    sigma, q, eps = "1/2", "1/2", "1/100"
    comp = dx.compose(dx.gaussian_noise(sigma).subsample(q), 1)
    truth = _gauss(sigma, q, eps)
    _inside(comp.delta(eps), truth, 1e-25)


@pytest.mark.parametrize(("b", "q", "eps"), [("1", "1/10", "1/100"), ("1/2", "1/1000", "0.005"),
                                             ("2", "1/2", "1/20"), ("1/2", "1/10", "0.4")])
def test_one_use_of_subsampled_laplace_matches_the_quadrature(b, q, eps):
    comp = dx.compose(dx.laplace_noise(b).subsample(q), 1)
    truth = _laplace(b, q, eps)
    _inside(comp.delta(eps), truth, 1e-25)


def test_laplace_beyond_its_largest_loss_is_exactly_0():
    # one use loses at most log(1 + q (e^2 - 1)) < 1 at b = 1/2, q = 1/10
    comp = dx.compose(dx.laplace_noise("1/2").subsample("1/10"), 1)
    assert comp.delta("1").interval(10) == ("0", "0")


@pytest.mark.parametrize(("q", "sigma", "delta"), [("1e-6", "1", "1e-15"),
                                                   ("0.001", "2", "1e-8"),
                                                   ("0.3", "0.7", "1e-100")])
def test_epsilon_of_one_use_is_bracketed_by_the_reference(q, sigma, delta):
    comp = dx.compose(dx.gaussian_noise(sigma).subsample(q), 1)
    lo, hi = (mpmath.mpf(x) for x in comp.epsilon(delta).interval(25))
    d = mpmath.mpf(delta)
    # delta decreases in eps: the exact eps(delta) lies in [lo, hi] iff these hold
    assert _gauss(sigma, q, lo) >= d >= _gauss(sigma, q, hi)
    assert hi - lo <= mpmath.mpf("1e-20") * hi


def test_the_router_names_the_closed_form():
    comp = dx.compose(dx.gaussian_noise("1").subsample("1/100"), 1)
    assert "one-use closed form" in comp.why
    # two uses, or a plain mechanism next to it, keep the loss grid
    assert "one-use" not in dx.compose(dx.gaussian_noise("1").subsample("1/100"), 2).why


def test_a_small_noise_at_a_large_rate_is_answered_in_a_blink():
    """``PoissonSampledDpEvent(0.8, GaussianDpEvent(0.1))``: 26-36 s CPU on the loss grid
    (1.6 M certified cells: the loss range grows as 1/sigma^2)."""
    from dp_accounting import dp_event as d

    from dpcompose_exact.integrations.dp_accounting import ExactAccountant

    t0 = time.process_time()
    acc = ExactAccountant()
    acc.compose(d.PoissonSampledDpEvent(0.8, d.GaussianDpEvent(0.1)))
    eps = acc.get_epsilon(1e-5)
    took = time.process_time() - t0
    assert took < 3, took
    e = mpmath.mpf(eps)
    # the float eps is the certified upper end rounded up: delta(eps) <= 1e-5, and not far
    assert _gauss("0.1", "0.8", e) <= mpmath.mpf("1e-5") <= _gauss("0.1", "0.8", e * (1 - 1e-12))


def _pld_bracket(q, eps, sigma, k):
    """dp_accounting's (optimistic, pessimistic) delta(eps), grid 1e-4 (not certified)."""
    from dp_accounting.pld import privacy_loss_distribution as pldm

    out = []
    for pessimistic in (False, True):
        pld = pldm.from_gaussian_mechanism(
            float(sigma), 1, pessimistic_estimate=pessimistic,
            value_discretization_interval=1e-4, sampling_prob=float(q),
            use_connect_dots=pessimistic,
        ).self_compose(k)
        out.append(pld.get_delta_for_epsilon(float(eps)))
    return out


@pytest.mark.parametrize(("q", "eps", "sigma", "k", "rel"), [
    ("0.00542", "0.0477", "2.96", 8, 2e-3),  # was 5.0e-3 wide: the finer deep grid
    ("0.00291", "0.000138", "6.88", 28, 1e-3),
    ("0.0513", "0.0863", "2.66", 60, 1e-3),
])
def test_sweep_rows_with_more_uses_meet_the_pld_bracket(q, eps, sigma, k, rel):
    comp = dx.compose(dx.gaussian_noise(sigma).subsample(q), k)
    lo, hi = (float(x) for x in comp.delta(eps).interval(10))
    opt, pess = _pld_bracket(q, eps, sigma, k)
    assert 0 < lo and opt <= hi * (1 + 1e-9) and lo <= pess * (1 + 1e-9), (lo, hi, opt, pess)
    assert (hi - lo) / lo <= rel, (hi - lo) / lo


def test_a_tiny_delta_at_a_small_rate_is_narrowed_on_a_finer_deep_grid():
    """q = 8.19e-4, sigma = 10.5, k = 1705, delta(0.082) ~ 1.1e-138: [1.1e-138, 1.8e-112]
    on the deep grid of 1e-4 (a relative width of 1.6e26); the finer deep grid's enclosure
    is intersected with it."""
    from dpcompose_exact.engines.subsample_grid import NoiseGridComposition

    sub = dx.gaussian_noise("10.5").subsample("0.000819")
    comp = dx.compose(sub, 1705)
    lo, hi = (F(x) for x in comp.delta("0.082").interval(10))
    assert 0 < lo and (hi - lo) / lo < F(5, 100), float((hi - lo) / lo)
    # the coarse deep grid alone encloses the same number: the two meet
    grid = NoiseGridComposition([(sub.loss_pair().grid_noise(), 1705)])
    t = grid._tilted("fwd", F("0.082"), True)
    assert t.lo.bound(F("0.082"), False) <= hi and lo <= t.up.bound(F("0.082"), True)
