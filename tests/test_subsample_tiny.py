"""Tiny deltas of the subsampled Gaussian (engines.subsample_grid, tilted folds).

The loss grid's FFT has an absolute error bound; deltas far below it are computed on the
deep grid with an exponentially tilted composition (docs/theory.md, section 15), so that
the enclosure's relative width does not depend on the delta's size.  References are
computed here with mpmath at 40 digits: the closed form of one use (the crossing point of
the likelihood ratio and Gaussian tails), and for two uses a one-dimensional integral of
that closed form, split at its kink.
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest

import dpcompose_exact as dx


@pytest.fixture(autouse=True)
def _precision():
    with mpmath.workdps(40):
        yield


def _one_use(q: str, t: mpmath.mpf) -> mpmath.mpf:
    """``E_A[(1 - e^{t - L})_+]`` of one use (forward), sigma = 1, sensitivity 1."""
    q = mpmath.mpf(q)
    et = mpmath.e**t
    if et <= 1 - q:  # L > t everywhere
        return 1 - et
    x = mpmath.log((et - 1 + q) / q) + mpmath.mpf(1) / 2  # the base loss is x - 1/2

    def sf(y: mpmath.mpf) -> mpmath.mpf:
        return mpmath.erfc(y / mpmath.sqrt(2)) / 2

    return q * sf(x - 1) + (1 - q) * sf(x) - et * sf(x)


def _two_uses(q: str, eps: int) -> mpmath.mpf:
    """``delta(eps)`` of two uses: the first use's output integrated against the second."""
    qm = mpmath.mpf(q)

    def integrand(x: mpmath.mpf) -> mpmath.mpf:
        a = qm * mpmath.npdf(x, 1, 1) + (1 - qm) * mpmath.npdf(x, 0, 1)
        loss = mpmath.log(1 - qm + qm * mpmath.exp(x - mpmath.mpf(1) / 2))
        return a * _one_use(q, eps - loss)

    kink_loss = eps - mpmath.log(1 - qm)  # beyond it the second use's factor is 1 - e^t
    kink = mpmath.log((mpmath.exp(kink_loss) - 1 + qm) / qm) + mpmath.mpf(1) / 2
    pts = sorted({-mpmath.inf, -5, 0, 2, 4, 5, 6, 7, kink, 8, 9, 10, 12, 15, mpmath.inf})
    return mpmath.quad(integrand, pts, maxdegree=10)


def _grid(sigma: str, q: str):
    """One use on the loss grid (the router answers one use by its closed form, engines.oneuse:
    the grid's tilted folds, which more uses need, are checked against that closed form)."""
    from dpcompose_exact.engines.subsample_grid import NoiseGridComposition

    return NoiseGridComposition([(dx.gaussian_noise(sigma).subsample(q), 1)])


def _check(value: dx.Value, truth: mpmath.mpf, rel: float = 1e-3) -> None:
    lo, hi = (mpmath.mpf(x) for x in value.interval(20))
    assert lo <= truth <= hi, (lo, truth, hi)
    assert (hi - lo) / truth < rel, ((hi - lo) / truth, lo, hi)


def test_one_use_delta_1_is_enclosed_with_a_small_relative_width():
    comp = _grid("1", "1/1000")
    truth = _one_use("0.001", mpmath.mpf(1))  # about 2.2e-16: far below the FFT's error
    assert 1e-16 < truth < 1e-15
    _check(comp.delta("1"), truth)


def test_a_delta_near_1e_minus_300_keeps_its_relative_width():
    comp = _grid("1", "1/1000")
    truth = _one_use("0.001", mpmath.mpf(30))
    assert mpmath.mpf("1e-300") < truth < mpmath.mpf("1e-290")
    _check(comp.delta("30"), truth)


def test_two_uses_against_the_integral():
    comp = dx.compose(dx.gaussian_noise("1").subsample("1/1000"), 2)
    truth = _two_uses("0.001", 2)
    assert 1e-21 < truth < 1e-19
    _check(comp.delta("2"), truth)


def test_epsilon_of_a_tiny_delta_is_bracketed_by_the_closed_form():
    comp = _grid("1", "1/1000")
    target = F(2231, 10**19)  # about delta(1)
    lo, hi = (mpmath.mpf(x) for x in comp.epsilon(target).interval(20))
    d = mpmath.mpf(target.numerator) / target.denominator
    # delta decreases in eps: the exact eps(target) lies in [lo, hi] iff these hold
    assert _one_use("0.001", lo) >= d >= _one_use("0.001", hi)
    assert hi - lo < 1e-3


def _one_use_both(sigma: str, q: str, t: str) -> mpmath.mpf:
    """``delta(t)`` of one use at any sigma: the larger of the two directions' closed forms.

    Forward ``(A, B)``: ``L > t`` iff ``x > x_f``; reverse ``(B, A)``: ``-L > t`` iff
    ``x < x_r`` (shift 1, ``beta(x) = (2x - 1) / (2 sigma^2)``).
    """
    sig, qm, tm = mpmath.mpf(sigma), mpmath.mpf(q), mpmath.mpf(t)
    et = mpmath.e**tm

    def sf(y: mpmath.mpf) -> mpmath.mpf:
        return mpmath.erfc(y / mpmath.sqrt(2)) / 2

    x_f = mpmath.log((et - 1 + qm) / qm) * sig**2 + mpmath.mpf(1) / 2
    fwd = qm * sf((x_f - 1) / sig) + (1 - qm) * sf(x_f / sig) - et * sf(x_f / sig)
    rev = mpmath.mpf(0)
    if mpmath.e**-tm > 1 - qm:
        x_r = mpmath.log((mpmath.e**-tm - 1 + qm) / qm) * sig**2 + mpmath.mpf(1) / 2
        rev = sf(-x_r / sig) - et * (qm * sf((1 - x_r) / sig) + (1 - qm) * sf(-x_r / sig))
    return max(fwd, rev)


@pytest.mark.parametrize(
    ("sigma", "q", "eps"), [("2", "1/1000", "0.001"), ("1", "1e-4", "1e-4"), ("1", "1e-5", "1e-4")]
)
def test_a_small_rate_at_a_small_eps_is_enclosed_to_1e_minus_3(sigma, q, eps):
    """A rate so small that one use's loss spans a few cells of 1e-4.

    The grid is refined to the loss's spread (docs/theory.md, section 15, "The grid
    width"); on the fixed grid of 1e-4 the first case was 1.1 % wide and the others had a
    lower end of 0.
    """
    comp = _grid(sigma, q)
    truth = _one_use_both(sigma, q, eps)
    if sigma == "2":  # the closed form of the issue, to 20 digits
        assert mpmath.almosteq(truth, mpmath.mpf("2.61132593837909866366e-5"), rel_eps=1e-19)
    _check(comp.delta(eps), truth)


@pytest.mark.parametrize("target", [F(1, 10**7), F(1, 10**9)])
def test_epsilon_of_a_small_delta_is_answered_by_the_ordinary_route(monkeypatch, target):
    """Deltas in [1e-15, 1e-6]: the ordinary tilted route on a finer grid, never the deep one."""
    from dpcompose_exact.engines.subsample_grid import NoiseGridComposition

    def refused(self, d):
        raise AssertionError(f"the deep route was taken for eps({d})")

    monkeypatch.setattr(NoiseGridComposition, "_tiny_epsilon", refused)
    comp = _grid("1", "1/100")
    lo, hi = (mpmath.mpf(x) for x in comp.epsilon(target).interval(20))
    d = mpmath.mpf(target.numerator) / target.denominator
    # delta decreases in eps: the exact eps(target) lies in [lo, hi] iff these hold
    assert _one_use_both("1", "0.01", lo) >= d >= _one_use_both("1", "0.01", hi)
    assert hi - lo <= mpmath.mpf("1e-4") * hi


def test_a_wide_ordinary_answer_falls_back_to_the_deep_route_and_intersects():
    """On a coarse grid the ordinary enclosure is wider than 1e-4: the deep one narrows it."""
    from dpcompose_exact.engines.subsample_grid import NoiseGridComposition

    calls = []
    deep = NoiseGridComposition._tiny_epsilon

    def spy(self, d):
        calls.append(d)
        return deep(self, d)

    sub = dx.gaussian_noise("1").subsample("1/100").loss_pair().grid_noise()
    comp = NoiseGridComposition([(sub, 1)], h=F(1, 500))
    target = F(1, 10**9)
    ordinary = [F(x) for x in comp._ordinary_epsilon(target).interval(30)]
    assert ordinary[1] - ordinary[0] > F(1, 10**4) * ordinary[1]  # the case tested
    NoiseGridComposition._tiny_epsilon = spy
    try:
        got = [F(x) for x in comp.epsilon(target).interval(30)]
    finally:
        NoiseGridComposition._tiny_epsilon = deep
    assert calls == [target]
    alone = [F(x) for x in comp._tiny_epsilon(target).interval(30)]
    assert max(alone[0], ordinary[0]) <= got[0] <= got[1] <= min(alone[1], ordinary[1])
    d = mpmath.mpf(target.numerator) / target.denominator
    lo, hi = (mpmath.mpf(x) for x in comp.epsilon(target).interval(20))
    assert _one_use_both("1", "0.01", lo) >= d >= _one_use_both("1", "0.01", hi)


def test_the_fft_length_is_estimated_before_the_finer_grid_is_built():
    """fold_length, from the grid h tilted at lam, against the fold built on h/2."""
    from dpcompose_exact.engines.gridfold import fold_length
    from dpcompose_exact.engines.gridtilt import _Tilted
    from dpcompose_exact.engines.subsample_grid import NoiseGridComposition, cell_masses

    sub = dx.gaussian_noise("0.8").subsample("1/1000").loss_pair().grid_noise()
    h = F(1, 20000)
    coarse = [(cell_masses(sub, h), 1000)]
    lam = 7.5
    est = fold_length([(c["fwd_up"], n) for c, n in coarse], float(h), lam, float(h / 2))
    fine = NoiseGridComposition([(sub, 1000)], h=h / 2)
    built = _Tilted(fine._cells, "fwd", lam, h / 2, long=False).up.nfft
    assert built / 1.25 <= est <= built * 1.25, (est, built)


def test_delta_of_a_small_value_skips_the_deep_grid_when_the_doubles_suffice(monkeypatch):
    """delta(eps) below 1e-6 after 1000 uses: the grid's tilt in doubles decides alone.

    (One use falls back to the deep grid: its graded tail cells are too wide there; the
    enclosures of both routes are checked against the closed forms above.)
    """
    from dpcompose_exact.engines.subsample_grid import NoiseGridComposition

    tilted = NoiseGridComposition._tilted
    deep = []

    def spy(self, direction, eps, is_deep, fine=False, **options):
        deep.append(is_deep)
        return tilted(self, direction, eps, is_deep, fine, **options)

    monkeypatch.setattr(NoiseGridComposition, "_tilted", spy)
    got = dx.compose(dx.gaussian_noise("1").subsample("1/100"), 1000).delta("2.5")
    assert deep and not any(deep)
    lo, hi = (mpmath.mpf(x) for x in got.interval(20))
    assert mpmath.mpf("1e-15") < lo and hi < mpmath.mpf("1e-6")  # the range of this route
    assert hi - lo <= mpmath.mpf("1e-3") * hi


def test_the_finer_deep_grid_is_skipped_where_it_cannot_narrow_the_answer():
    """A direction that can move neither end, or spans more than e^32 without holding the
    answer's upper end, is not refined."""
    from dpcompose_exact.engines.subsample_grid import _may_narrow

    tiny = F(1, 10**300)
    # fwd holds the answer's upper end and the answer's lower end is positive: refined
    # however wide fwd is (the width sweep, q 0.000819, sigma 10.5, k 1705, eps 0.082: rev
    # [0, 1.45e-120] next to fwd's lower end 1.14e-138 came down to 1.142e-138 on the
    # finer grid; skipping it left the answer 1.3e18 wide)
    ends = {"fwd": (tiny, F(1, 10**34)), "rev": (F(8, 10**104), F(5, 10**103))}
    assert _may_narrow(ends, "fwd")
    row = {"fwd": (F(114, 10**140), F(121, 10**132)), "rev": (F(0), F(145, 10**122))}
    assert _may_narrow(row, "rev")
    # rev is narrow enough but its upper end is far below the answer's, whose lower end is
    # positive: refining it can move neither end of the answer within its width
    assert not _may_narrow(ends, "rev")
    # the same rev when it decides the upper end, or when no lower end is positive yet
    assert _may_narrow({"fwd": (F(0), F(1, 10**104)), "rev": ends["rev"]}, "rev")
    assert _may_narrow({"fwd": (F(0), F(1, 10**34)), "rev": (F(0), F(1, 10**35))}, "fwd") is False
    assert _may_narrow({"fwd": (F(1, 10**36), F(1, 10**34)), "rev": (F(0), F(1, 10**35))}, "fwd")


def test_a_finer_deep_grid_over_the_fft_limit_leaves_the_enclosure_so_far(monkeypatch):
    """Regression: the box's ``gau(9.98)@0.000197 x125002 delta(2.94)`` was refused after
    50 s (``ResourceLimitError``: the finer deep grid's fold needed 3.9e8 points); that
    grid only narrows, so the enclosure found before it is the answer."""
    from dpcompose_exact.engines.subsample_grid import NoiseGridComposition
    from dpcompose_exact.errors import ResourceLimitError

    sub = dx.gaussian_noise("2").subsample("1/100").loss_pair().grid_noise()
    comp = NoiseGridComposition([(sub, 10)])

    def over(*args, **kwargs):
        raise ResourceLimitError("need a loss grid of 387420489 points")

    monkeypatch.setattr(comp, "_tilt_ends", over)
    known = (F(1, 10**30), F(1, 10**20))
    ends = {"fwd": known, "rev": (F(0), F(1, 10**25))}
    assert comp._deep_ends(ends, F(3), F(5), known) == known


def test_a_moderate_delta_at_a_tiny_rate_goes_through_finer_grids():
    """q 2.83e-5, sigma 2.77, 58 uses, delta(1.48e-4) ~ 1.327e-6: 6.5e-3 wide on one grid.

    Its width is the grid's (second order in the tilt times the width): the finer grids,
    each halving the last, narrow it.  dp_accounting's PLD (grid 3e-7) brackets it: its
    pessimistic estimate above, its optimistic one below (floats, not certified).
    """
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pldm

    ends = []
    for pessimistic in (False, True):
        pld = pldm.from_gaussian_mechanism(
            2.77, 1, pessimistic_estimate=pessimistic, value_discretization_interval=3e-7,
            sampling_prob=2.83e-5, use_connect_dots=pessimistic,
        ).self_compose(58)
        ends.append(F(float(pld.get_delta_for_epsilon(1.48e-4))))
    v = dx.compose(dx.gaussian_noise("2.77").subsample("2.83e-5"), 58).delta("1.48e-4")
    lo, hi = (F(x) for x in v.interval(30))
    assert ends[0] <= lo and hi <= ends[1] * (1 + F(1, 10**9))
    assert hi - lo < F(1, 1000) * lo
