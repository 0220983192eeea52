"""The small-delta route of the loss grid tries the grid's own folds first (section 15).

When the width asked (``ROUTE_WIDTH`` times the estimate of eps) is several grid steps,
the folds already built answer it; the finer grid is built only when they do not.
"""

from __future__ import annotations

from fractions import Fraction as F

import pytest

import dpcompose_exact as dx
from dpcompose_exact.engines import gridfold, subsample_grid


def _count_folds(monkeypatch):
    built = []
    original = gridfold._Fold.__init__

    def counting(self, *args, **kwargs):
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(gridfold._Fold, "__init__", counting)
    return built


def test_laplace_small_delta_is_answered_on_its_own_grid(monkeypatch):
    subsample_grid._cell_masses.cache_clear()
    built = _count_folds(monkeypatch)
    comp = dx.compose(dx.laplace_noise(2).subsample("1/20"), 1000)
    lo, hi = (F(x) for x in comp.epsilon("1e-7").interval(12))
    # two upper folds for the guess, two tilted per deciding direction; the finer grid's
    # four more were built before
    assert len(built) <= 6
    assert hi - lo <= F(1, 10**4) * hi
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pldm

    def pld(pessimistic):
        return pldm.from_laplace_mechanism(
            2.0, 1, sampling_prob=0.05, value_discretization_interval=1e-4,
            pessimistic_estimate=pessimistic, use_connect_dots=pessimistic,
        ).self_compose(1000).get_epsilon_for_delta(1e-7)

    # dp_accounting's optimistic and pessimistic values bracket the truth (up to their
    # own rounding): the ranges meet
    assert lo <= F(pld(True)) * (1 + F(1, 10**6)) and F(pld(False)) <= hi * (1 + F(1, 10**6))


def test_a_narrow_width_asked_goes_to_the_finer_grid(monkeypatch):
    # eps about 0.7 at q = 1/1000: the width asked is below 3 grid steps, the finer grid
    # answers (the enclosure is the same as before the change)
    subsample_grid._cell_masses.cache_clear()
    comp = dx.compose(dx.gaussian_noise("4/5").subsample("1/1000"), 1000)
    lo, hi = (F(x) for x in comp.epsilon("1e-7").interval(12))
    assert F("0.7036975387") <= hi and lo <= F("0.7037293411") and hi - lo <= F(1, 10**4) * hi


def test_the_weaker_direction_of_a_tiny_delta_builds_no_tilted_lower_fold(monkeypatch):
    # below the guesses' floor both directions are tilted; the reverse one only has to be
    # shown below delta at the upper end, so its tilted lower fold is never read
    from dpcompose_exact.engines import gridtilt

    sides = []
    original = gridtilt._Tilted._side

    def counting(self, upper):
        sides.append((self._args[1], upper))
        return original(self, upper)

    def ask():
        subsample_grid._cell_masses.cache_clear()
        comp = dx.compose(dx.gaussian_noise(3).subsample("1/10"), 20)
        return [F(x) for x in comp.epsilon("1e-12").interval(12)]

    monkeypatch.setattr(gridtilt._Tilted, "_side", counting)
    lo, hi = ask()
    assert ("rev", True) in sides and ("rev", False) not in sides
    assert hi - lo <= F(1, 10**4) * hi
    # every lower fold built at once (as before): the same certified enclosure
    original_init = gridtilt._Tilted.__init__

    def eager(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        assert self.lo is not None

    monkeypatch.setattr(gridtilt._Tilted, "__init__", eager)
    assert ask() == [lo, hi]


def test_an_eps_of_a_large_delta_wider_than_the_goal_is_answered_on_a_finer_grid():
    # delta above the tilts' range: the automatic grid's answer was 5.4e-4 wide (goal 1e-4)
    subsample_grid._cell_masses.cache_clear()
    mech = dx.gaussian_noise("4.18").subsample("0.00707")
    lo, hi = (F(x) for x in dx.compose(mech, 222).epsilon("0.0056").interval(12))
    assert hi - lo <= F(1, 10**4) * hi
    # inside the enclosure of the automatic grid's own width (given: no refinement)
    pair = mech.loss_pair().grid_noise()
    coarse = subsample_grid.NoiseGridComposition([(pair, 222)], F(1, 20000))
    c_lo, c_hi = (F(x) for x in coarse.epsilon(F(56, 10000)).interval(12))
    assert c_hi - c_lo > F(1, 10**4) * c_hi
    assert c_lo <= lo <= hi <= c_hi


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_tiny_delta_whose_deep_folds_outgrow_the_fft_is_answered_on_a_coarser_grid(
    monkeypatch,
):
    # before: refused (the box's gau(0.785)@0.112 x405028 eps(2.2e-15): a tilted fold of
    # 26.9M points at 1e-4).  Here the limit is set just below the deep folds' largest
    # length, so that only a coarser deep grid fits; its enclosure holds the value too.
    sizes = []
    original = gridfold._Fold.__init__

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        sizes.append(self.nfft)

    monkeypatch.setattr(gridfold._Fold, "__init__", recording)
    subsample_grid._cell_masses.cache_clear()
    mech = dx.gaussian_noise(2).subsample("1/10")
    lo, hi = (F(x) for x in dx.compose(mech, 10).epsilon("1e-16").interval(12))
    monkeypatch.setattr(gridfold, "MAX_FFT", max(sizes) - 1)
    subsample_grid._cell_masses.cache_clear()
    clo, chi = (F(x) for x in dx.compose(mech, 10).epsilon("1e-16").interval(12))
    assert clo <= hi and lo <= chi  # both enclose eps(1e-16)
    assert chi - clo <= F(1, 100) * chi


def test_a_narrowing_fold_too_long_to_build_leaves_the_certified_ends(monkeypatch):
    # before: bench_widths --seed 3, q 1.53e-6 eps 8.56 sigma 2.86 k 750, stopped the whole
    # query with ResourceLimitError (a deep tilted fold of 21.6M points, only a narrowing);
    # now [3.9567e-859, 3.9570e-859] in 4 s.  Here every tilted fold is "too long".
    import mpmath as mp
    from quadrature import two_uses

    from dpcompose_exact.engines import griddeep
    from dpcompose_exact.errors import ResourceLimitError

    tried = []

    def too_long(*args, **kwargs):
        tried.append(args[1:3])
        raise ResourceLimitError("a tilted fold over the limit (stand-in)")

    monkeypatch.setattr(griddeep, "_Tilted", too_long)
    subsample_grid._cell_masses.cache_clear()
    mech = dx.gaussian_noise(2).subsample("0.0001")
    lo, hi = dx.compose(mech, 2).delta(3).probability().ends()
    assert tried  # the narrowing was asked for, and refused
    ref = two_uses("0.0001", "3", "2")  # forward; the reverse is far smaller here
    assert mp.mpf(lo.lower().str(20, radius=False)) <= ref * (1 + mp.mpf("2e-6"))
    assert ref * (1 - mp.mpf("2e-6")) <= mp.mpf(hi.upper().str(20, radius=False))
