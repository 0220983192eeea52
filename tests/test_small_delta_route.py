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
