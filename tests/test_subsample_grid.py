"""Subsampled Gaussian and Laplace noise (engines.subsample_grid): certified two-sided bounds.

Checked against independent references computed here with mpmath at 30 digits: the
hockey-stick divergences of the subsampled pair ``(q P + (1 - q) Q, Q)`` by numerical
integration of the densities (split where the integrand has its kink), a closed form from
the crossing points of the likelihood ratio (k = 1), a one-dimensional integral of closed
forms (k = 2); and against dp_accounting's PLD (pessimistic and optimistic) for the
Poisson-subsampled Gaussian.  Grids coarser than the default keep the tests fast: the
bounds are valid at any grid width.
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.engines import subsample_grid
from dpcompose_exact.engines.subsample_grid import NoiseGridComposition
from dpcompose_exact.errors import InvalidParameterError, ResourceLimitError, UnsupportedQueryError

H = F(1, 2000)  # a coarse grid: fast, still certified


@pytest.fixture(autouse=True)
def _precision():
    with mpmath.workdps(30):
        yield


def _mp(x: F | int) -> mpmath.mpf:
    x = F(x)
    return mpmath.mpf(x.numerator) / x.denominator


class _Gauss:
    """The subsampled Gaussian pair A = q N(s, sig^2) + (1-q) N(0, sig^2), B = N(0, sig^2)."""

    def __init__(self, sigma: F | int, q: F, s: int = 1) -> None:
        self.sig, self.q, self.s = _mp(sigma), _mp(q), mpmath.mpf(s)

    def pdf_a(self, x):
        q, s, sig = self.q, self.s, self.sig
        return q * mpmath.npdf(x, s, sig) + (1 - q) * mpmath.npdf(x, 0, sig)

    def pdf_b(self, x):
        return mpmath.npdf(x, 0, self.sig)

    def cdf_a(self, x):
        q, s, sig = self.q, self.s, self.sig
        return q * mpmath.ncdf((x - s) / sig) + (1 - q) * mpmath.ncdf(x / sig)

    def cdf_b(self, x):
        return mpmath.ncdf(x / self.sig)

    def sf_a(self, x):
        q, s, sig = self.q, self.s, self.sig
        return q * mpmath.ncdf((s - x) / sig) + (1 - q) * mpmath.ncdf(-x / sig)

    def sf_b(self, x):
        return mpmath.ncdf(-x / self.sig)

    def ratio(self, x):
        return 1 - self.q + self.q * mpmath.exp((2 * self.s * x - self.s**2) / (2 * self.sig**2))

    def x_at(self, r):
        """Where A/B = r (None when the ratio stays above r: r <= 1 - q)."""
        t = (r - 1 + self.q) / self.q
        return None if t <= 0 else mpmath.log(t) * self.sig**2 / self.s + self.s / 2


def _quad_delta(pair: _Gauss, eps: mpmath.mpf) -> mpmath.mpf:
    """max(H(A||B), H(B||A)) by numerical integration of the densities (k = 1)."""
    g = mpmath.exp(eps)
    cuts = {mpmath.mpf(0), pair.s / 2, pair.s}
    for r in (g, 1 / g):
        x = pair.x_at(r)
        if x is not None:
            cuts.add(x)
    pts = [-mpmath.inf, *sorted(cuts), mpmath.inf]
    fwd = mpmath.quad(lambda x: max(pair.pdf_a(x) - g * pair.pdf_b(x), 0), pts)
    rev = mpmath.quad(lambda x: max(pair.pdf_b(x) - g * pair.pdf_a(x), 0), pts)
    return max(fwd, rev)


def _closed_delta(pair: _Gauss, eps: mpmath.mpf) -> mpmath.mpf:
    """The same from the crossing points of the increasing ratio A/B (k = 1)."""
    g = mpmath.exp(eps)
    x = pair.x_at(g)
    fwd = 1 - g if x is None else pair.sf_a(x) - g * pair.sf_b(x)
    x = pair.x_at(1 / g)
    rev = mpmath.mpf(0) if x is None else pair.cdf_b(x) - g * pair.cdf_a(x)
    return max(fwd, rev)


def _delta_two_uses(pair: _Gauss, eps: mpmath.mpf) -> mpmath.mpf:
    """k = 2: the inner integral over the second output in closed form, the outer by quad."""
    g = mpmath.exp(eps)

    def fwd(x):
        y = pair.x_at(g / pair.ratio(x))
        if y is None:
            return pair.pdf_a(x) - g * pair.pdf_b(x)
        return pair.pdf_a(x) * pair.sf_a(y) - g * pair.pdf_b(x) * pair.sf_b(y)

    def rev(x):
        y = pair.x_at(1 / (g * pair.ratio(x)))
        if y is None:
            return mpmath.mpf(0)
        return pair.pdf_b(x) * pair.cdf_b(y) - g * pair.pdf_a(x) * pair.cdf_a(y)

    # break points: where the inner crossing point leaves the line (a kink of the integrand)
    pts = {mpmath.mpf(-5), mpmath.mpf(-2), mpmath.mpf(0), pair.s / 2, pair.s, mpmath.mpf(3)}
    for r in (g / (1 - pair.q), 1 / (g * (1 - pair.q))):
        x = pair.x_at(r)
        if x is not None:
            pts.add(x)
    pts = [-mpmath.inf, *sorted(pts), mpmath.inf]
    (a, ea), (b, eb) = (mpmath.quad(f, pts, error=True) for f in (fwd, rev))
    assert max(ea, eb) < mpmath.mpf(10) ** -20  # the reference is accurate
    return max(a, b)


def _encloses(value: dx.Value, want: mpmath.mpf) -> bool:
    lo, hi = (mpmath.mpf(x) for x in value.interval(25))
    return lo <= want <= hi


@pytest.mark.parametrize(("sigma", "q"), [(1, F(1, 100)), (2, F(1, 2)), (F(3, 2), F(1, 10))])
def test_one_use_of_the_subsampled_gaussian_against_two_integrals(sigma, q):
    c = NoiseGridComposition([(dx.gaussian_noise(sigma).subsample(q), 1)], h=H)
    pair = _Gauss(sigma, q)
    for eps in ("0", "0.01", "0.3", "1"):
        want = _quad_delta(pair, mpmath.mpf(eps))
        assert abs(want - _closed_delta(pair, mpmath.mpf(eps))) < mpmath.mpf(10) ** -25
        got = c.delta(eps)
        assert _encloses(got, want), (eps, got.interval(12), want)
        lo, hi = (mpmath.mpf(x) for x in got.interval(20))
        assert hi - lo <= 2e-3 * want + 1e-15  # and reasonably tight at this coarse grid


@pytest.mark.slow
def test_two_uses_of_the_subsampled_gaussian_against_the_integral():
    c = NoiseGridComposition([(dx.gaussian_noise(1).subsample("1/10"), 2)], h=F(1, 4000))
    pair = _Gauss(1, F(1, 10))
    for eps in ("0", "0.1", "0.5", "1.5"):
        want = _delta_two_uses(pair, mpmath.mpf(eps))
        got = c.delta(eps)
        assert _encloses(got, want), (eps, got.interval(12), want)
        lo, hi = (mpmath.mpf(x) for x in got.interval(20))
        assert hi - lo <= 1e-3 * want


@pytest.mark.slow
def test_replace_one_without_replacement_is_the_pair_with_shift_two(monkeypatch):
    pytest.importorskip("dp_accounting")
    monkeypatch.setattr(subsample_grid, "DEFAULT_GRID", H)
    from dp_accounting import dp_event as d

    from dpcompose_exact.integrations.events import event_composition

    event = d.SampledWithoutReplacementDpEvent(100, 10, d.GaussianDpEvent(2.0))
    c = event_composition(event, "REPLACE_ONE")
    pair = _Gauss(2, F(1, 10), s=2)  # dp_accounting: replace-one shifts by 2 x sensitivity
    for eps in ("0", "0.05", "0.4"):
        assert _encloses(c.delta(eps), _quad_delta(pair, mpmath.mpf(eps)))


def test_subsampled_laplace_against_numerical_integration():
    b, q, s = _mp(1), _mp(F(1, 5)), mpmath.mpf(1)

    def lap(x, m):
        return mpmath.exp(-abs(x - m) / b) / (2 * b)

    def delta(eps):
        g = mpmath.exp(eps)
        a = lambda x: q * lap(x, s) + (1 - q) * lap(x, 0)  # noqa: E731
        pts = [-mpmath.inf, 0, mpmath.mpf(1) / 4, s / 2, mpmath.mpf(3) / 4, s, mpmath.inf]
        # the ratio is monotone on [0, s]: add its crossing points as break points
        for r in (g, 1 / g):
            t = (r - 1 + q) / q
            if t > 0 and abs(mpmath.log(t)) < s / b:
                pts.append((mpmath.log(t) * b + s) / 2)
        pts = sorted(set(pts))
        fwd = mpmath.quad(lambda x: max(a(x) - g * lap(x, 0), 0), pts)
        rev = mpmath.quad(lambda x: max(lap(x, 0) - g * a(x), 0), pts)
        return max(fwd, rev)

    c = NoiseGridComposition([(dx.laplace_noise(1).subsample("1/5"), 1)], h=H)
    for eps in ("0", "0.02", "0.1", "0.2"):
        want = delta(mpmath.mpf(eps))
        assert _encloses(c.delta(eps), want)
        lo, hi = (mpmath.mpf(x) for x in c.delta(eps).interval(20))
        assert hi - lo < 1e-3 * want  # the atoms merged with their neighbours (lower end)
    # the loss never exceeds log(1 - q + q e) = 0.2956...: delta is 0 above (upper end too)
    assert c.delta("0.3").interval(5)[1] == "0"


@pytest.mark.slow
def test_rate_one_is_the_plain_mechanism():
    """q = 1: the Gaussian closed form G_mu and the Laplace grid of section 18 (independent)."""
    from dpcompose_exact.engines.gaussian import gaussian_delta
    from dpcompose_exact.engines.pldgrid import LaplaceGrid

    c = NoiseGridComposition([(dx.gaussian_noise(2).subsample(1), 10)], h=F(1, 1000))
    for eps in ("0", "1", "4"):
        lo, hi = (F(x) for x in c.delta(eps).interval(20))
        g_lo, g_hi = (F(x) for x in gaussian_delta(F(10, 4), F(eps)).interval(20))
        assert lo <= g_lo and g_hi <= hi  # mu^2 = k / sigma^2
        assert hi - lo < 1e-5
    c = NoiseGridComposition([(dx.laplace_noise(1).subsample(1), 5)], h=F(1, 2000))
    grid = LaplaceGrid(F(1), 5)
    for eps in ("0", "0.5", "2"):
        lo, hi = (F(x) for x in c.delta(eps).interval(20))
        g_lo, g_hi = (F(x) for x in grid.delta(F(eps)).interval(20))
        assert lo <= g_hi and g_lo <= hi  # two enclosures of one number overlap
        assert hi - lo < 1e-7


@pytest.mark.slow
def test_bracket_dp_accounting_pld_of_the_poisson_subsampled_gaussian():
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pldm

    q, k = 0.01, 100
    c = NoiseGridComposition([(dx.gaussian_noise(1).subsample("0.01"), k)], h=F(1, 4000))

    def pld(interval: float, pessimistic: bool):
        return pldm.from_gaussian_mechanism(
            1.0,
            value_discretization_interval=interval,
            pessimistic_estimate=pessimistic,
            sampling_prob=q,
            use_connect_dots=pessimistic,
        ).self_compose(k)

    opt, pess_fine, opt_fine = pld(1e-4, False), pld(5e-5, True), pld(5e-5, False)
    for eps in (0.0, 0.2, 0.5, 1.0):
        lo, hi = (float(x) for x in c.delta(repr(eps)).interval(17))
        assert hi >= opt.get_delta_for_epsilon(eps)  # our upper end is above the optimistic PLD
        assert lo <= pess_fine.get_delta_for_epsilon(eps) * (1 + 1e-9)
        assert hi >= opt_fine.get_delta_for_epsilon(eps) * (1 - 1e-9)
    e = c.epsilon("1e-5")
    lo, hi = (float(x) for x in e.interval(17))
    assert lo <= pess_fine.get_epsilon_for_delta(1e-5) + 1e-9
    assert hi >= opt_fine.get_epsilon_for_delta(1e-5) - 1e-9
    assert hi - lo < 1e-2 * hi


def test_exact_accountant_answers_subsampled_gaussian_events():
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event as d

    from dpcompose_exact.integrations.dp_accounting import DpConstraintsEvent, ExactAccountant

    event = d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.1, d.LaplaceDpEvent(2.0)), 20)
    acc = ExactAccountant()
    assert acc.supports(event)
    acc.compose(event)
    assert not acc.is_exact and "loss grid" in acc.bound_notes[0]
    front = dx.compose(dx.laplace_noise(2).subsample("1/10"), 20)
    assert acc.get_delta(0.5) == front.delta("0.5").upper()
    assert acc.get_epsilon(1e-6) == front.epsilon("1e-6").upper()
    assert acc.get_delta(float("inf")) == 0.0  # Laplace: the loss is bounded, no tail
    # next to an event of another kind: the finite pair conditioned on, both directions
    acc.compose(DpConstraintsEvent([("log(2)", "0")]))
    noise = dx.laplace_noise(2).subsample("1/10")
    mixed = dx.compose([(noise, 20), (dx.Mechanism.dp("log(2)"), 1)])
    assert "finite part composed exactly" in mixed.why
    assert acc.get_delta(1.0) == mixed.delta("1").upper()
    # a log(2)-DP pair can only add privacy loss: delta(1) is at least the noise's own
    # delta at 1 + log 2 and at most its delta at 1 - log 2 (conditioning on the pair)
    assert front.delta("1 + log(2)").lower() <= mixed.delta("1").upper()
    assert mixed.delta("1").lower() <= front.delta("1 - log(2)").upper()


def test_epsilon_enclosure_is_consistent_with_delta():
    c = NoiseGridComposition([(dx.gaussian_noise(2).subsample("1/20"), 50)], h=H)
    e = c.epsilon("1e-6")
    lo, hi = (F(x) for x in e.interval(12))
    assert lo < hi
    # certified: delta(hi) <= target < delta(lo)
    assert c.delta_bounds(hi * (1 + F(1, 10**9)))[1] <= F(1, 10**6)
    assert c.delta_bounds(lo * (1 - F(1, 10**9)))[0] > F(1, 10**6)
    assert c.epsilon("0.9").exact == "0"  # delta(0) is below 0.9


def test_refusals_name_the_value_and_the_range():
    with pytest.raises(InvalidParameterError, match=r"q = 3/2 is outside the valid range \(0, 1\]"):
        dx.gaussian_noise(1).subsample("1.5")
    with pytest.raises(InvalidParameterError, match=r"q = 0 is outside the valid range \(0, 1\]"):
        dx.laplace_noise(1).subsample(0)
    with pytest.raises(InvalidParameterError, match="sigma = -1 must be > 0"):
        dx.gaussian_noise(-1)
    with pytest.raises(TypeError, match="float"):
        dx.gaussian_noise(1).subsample(0.1)
    sub = dx.gaussian_noise(1).subsample("1/10")
    with pytest.raises(InvalidParameterError, match="eps = -1 is negative"):
        NoiseGridComposition([(sub, 1)], h=H).delta(F(-1))
    mixed = dx.compose([(sub, 2), (dx.Mechanism.dp("log(3)").subsample("1/2"), 1)])
    assert mixed.is_bounded and "both directions" in mixed.why
    c = dx.compose(dx.laplace_noise(1).subsample("1/10"), 3)
    assert c.is_bounded and "loss grid" in c.why
    with pytest.raises(UnsupportedQueryError, match="no single constraint list"):
        c.constraints  # noqa: B018
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event as d

    from dpcompose_exact.integrations.events import EventTreeError, event_composition

    with pytest.raises(EventTreeError, match=r"sampling probability 3/2 is outside \[0, 1\]"):
        event_composition(d.PoissonSampledDpEvent(1.5, d.GaussianDpEvent(1.0)))
    # zero noise sampled at q < 1 reveals the record with probability q: delta = q exactly
    # (it was refused as a non-private event)
    zero = event_composition(d.PoissonSampledDpEvent(0.5, d.LaplaceDpEvent(0.0)))
    assert zero.delta("3") == F(1, 2) and zero.delta("0") == F(1, 2)
    with pytest.raises(EventTreeError, match="non-private event"):
        event_composition(d.PoissonSampledDpEvent(1, d.LaplaceDpEvent(0.0)))


def test_a_grid_too_large_is_refused_before_its_points_are_listed():
    # before: sigma = 1/1000 put about 5e9 points in a list (a raw MemoryError)
    import time

    start = time.process_time()
    with pytest.raises(
        ResourceLimitError,
        match=r"gaussian_noise\('1/1000'\)\.subsample\('1/10'\) \(width h = 1/10000\) spans the "
        r"losses -0\.1056 to 510095: 5100948550 cells and about \d+ points, over the limits of "
        r"50000000 cells and 4000000 points; use more noise or a coarser grid",
    ):
        NoiseGridComposition([(dx.gaussian_noise("1/1000").subsample("1/10"), 2)])
    # the composition answers without that grid: the sampled uses' Gaussians bracket it
    # (mu = 1000: a sampled use's loss is about 5e5, so delta(1) is 1 - (9/10)^2 = 0.19 but
    # for a part below e^(-1e5))
    value = dx.compose(dx.gaussian_noise("1/1000").subsample("1/10"), 2).delta("1")
    lo, hi = (F(x) for x in value.interval(30))
    assert lo <= F(19, 100) <= hi and hi - lo < F(1, 10**20)
    with pytest.raises(ResourceLimitError, match=r"laplace_noise.* cells and about \d+ points"):
        dx.compose(dx.laplace_noise("1/100000").subsample("1/10"), 2)
    assert time.process_time() - start < 2.0


@pytest.mark.slow
def test_gaussian_and_laplace_composed_together_bracket_dp_accounting():
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pldm

    kinds = [
        (dx.gaussian_noise(2).subsample("0.02"), 50),
        (dx.laplace_noise(3).subsample("0.1"), 30),
    ]
    c = NoiseGridComposition(kinds, h=F(1, 2000))
    pairs = []
    for pessimistic in (True, False):
        g = pldm.from_gaussian_mechanism(
            2.0, value_discretization_interval=2e-5, pessimistic_estimate=pessimistic,
            sampling_prob=0.02,
        ).self_compose(50)
        lap = pldm.from_laplace_mechanism(
            3.0, value_discretization_interval=2e-5, pessimistic_estimate=pessimistic,
            sampling_prob=0.1,
        ).self_compose(30)
        pairs.append(g.compose(lap))
    pess, opt = pairs
    for eps in (0.0, 0.3, 0.6):
        lo, hi = (float(x) for x in c.delta(repr(eps)).interval(17))
        assert lo <= pess.get_delta_for_epsilon(eps) * (1 + 1e-9)
        assert hi >= opt.get_delta_for_epsilon(eps) * (1 - 1e-9)
        assert hi - lo < 3e-2 * hi  # a coarse grid


@pytest.mark.slow
def test_the_fft_error_bound_stays_small_at_a_million_uses():
    """k = 10^6, sigma = 0.7, q = 1e-4 on the grid 1e-4: the FFT's error term is small.

    The forward FFT's error is bounded per frequency by ``fft_rel ||x||_1`` (docs/theory.md,
    section 15); the normwise ``fft_rel sqrt(n) ||x||_2`` it replaced put the certified
    upper bound of delta(2) at 3.4e-5 for a value below 1e-6 (PLD's pessimistic eps(1e-6)
    is 1.1378).  dp_accounting's optimistic PLD is a lower bound here: ours stays above it.
    """
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pldm

    sub = dx.gaussian_noise("0.7").subsample("1/10000")
    comp = NoiseGridComposition([(sub, 10**6)], h=F(1, 10000))
    up = max(comp.folds[f"{d}_up"].bound(F(2), True) for d in ("fwd", "rev"))
    assert up < F(1, 10**6)
    opt = pldm.from_gaussian_mechanism(
        0.7, 1, pessimistic_estimate=False, value_discretization_interval=1e-4,
        sampling_prob=1e-4, use_connect_dots=False,
    ).self_compose(10**6)
    assert opt.get_delta_for_epsilon(2.0) <= up
