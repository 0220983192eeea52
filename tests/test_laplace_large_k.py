"""Plain Laplace noise at large k: answered, and the lower end sound and tight.

The sum of ``k`` Laplace losses spreads as ``sqrt(k)``: its grid is sized to a window of a
bounded number of points (``pldgrid.auto_width``), the lower lattice keeps both moments
exactly (no mass lost per use), queries below the window at ``theta = 1/2`` are answered
from it, and suffix sums that overflow are summed again with their scale taken out
(docs/theory.md, section 18).  References: the loss law's atoms and mean (closed forms),
and enclosures on two different grids, which must meet (each is certified on its own).
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

pytest.importorskip("numpy")

import dpcompose_exact as dx  # noqa: E402
from dpcompose_exact.engines import pldgrid  # noqa: E402
from dpcompose_exact.engines.pldgrid import LaplaceGrid  # noqa: E402


def _ends(v) -> tuple[Fraction, Fraction]:
    lo, hi = v.interval(20)
    return Fraction(lo), Fraction(hi)


def test_lower_end_keeps_its_mass_at_large_k():
    # regression: the lower lattice moved its two half cells at the ends down, losing a
    # mass of order h^2 per use; at k = 288467 (b = 4.15) on 73 cells the lower end of
    # delta(5.5) ~ 1 (the mean loss is ~7740, 62 standard deviations above 5.5) was 0.83
    grid = LaplaceGrid(1 / Fraction("4.15"), 288467, h=Fraction(1, 300))
    lo, hi = _ends(grid.delta(Fraction("5.5")))
    assert 1 - Fraction(1, 10**6) < lo <= hi <= 1


def test_plain_laplace_at_half_a_million_uses_is_answered(monkeypatch):
    # regression: k = 5e5 uses of Laplace(0.7) was refused (an FFT of 1.2e8 points, the
    # coarse estimate's window reaching down from the mean to eps = 0); the window is now
    # bounded (64 times smaller here than by default, to keep the test fast)
    monkeypatch.setattr(pldgrid, "WINDOW_POINTS", 1 << 17)
    monkeypatch.setattr(pldgrid, "COARSE_POINTS", 1 << 16)
    comp = dx.compose([(dx.laplace_noise("0.7"), 500000)])
    lo, hi = _ends(comp.epsilon("1e-6"))
    assert 0 < lo <= hi and hi - lo <= hi / 10**3  # at this window; 7e-7 by default
    # the mean loss k (eps0 - 1 + e^-eps0) is below eps(1e-6), and eps(1e-6) is below
    # mean + 5 standard deviations (Chebyshev would allow more; the law is near normal)
    e0 = 10 / 7
    mean = 500000 * (e0 - 1 + math.exp(-e0))
    assert mean < lo and hi < mean + 5 * math.sqrt(500000) * 1.3
    # a second grid (another window) gives an enclosure that must meet this one
    monkeypatch.setattr(pldgrid, "WINDOW_POINTS", 1 << 16)
    lo2, hi2 = _ends(dx.compose([(dx.laplace_noise("0.7"), 500000)]).epsilon("1e-6"))
    assert lo2 <= hi and lo <= hi2


def test_queries_far_below_a_wide_window_centre_keep_their_lower_end():
    # regression: the suffix sums of q = e^(-(1/2 + theta) s) overflowed for a query 1500
    # below the centre of a window of standard deviation ~500 (b = 1/2, k = 1e5): the lower
    # end was 0; they are now summed again with their scale taken out
    grid = LaplaceGrid(Fraction(2), 100000, h=Fraction(1, 50))
    e = grid.epsilon(Fraction(1, 10**10))
    top = Fraction(e.interval(10)[1])
    # the tilt of that query, read 1500 below its centre: q weights up to e^1500
    (_, theta, floor), power = next(iter(grid._powers.items()))
    assert power.sd > 300 and power.center > top - 10
    far = top - 1500
    lo = grid._bound("lower", far, theta, floor)
    hi = grid._bound("upper", far, theta, floor)
    assert 0 < lo <= hi and hi - lo <= hi / 10  # a coarse grid (h = 1/50): not narrow
    assert lo > Fraction(1, 10**10)  # delta decreases in eps
    # the same value from a tilt centred there (no overflow) meets it
    lo2, hi2 = _ends(grid.delta(far))
    assert lo2 <= hi and lo <= hi2


def test_eps_far_below_the_mean_is_answered_on_a_coarse_grid():
    # delta(50) of 3000 uses of Laplace(2): the mean loss is ~320, 7 standard deviations
    # (~26) and 20 more above 50, so delta ~ 1 and a window of 2^16 points answers it; it
    # must meet the fine grid's own enclosure, and be as tight
    grid = LaplaceGrid(Fraction(1, 2), 3000, h=Fraction(1, 2000))
    lo, hi = _ends(grid.delta(Fraction(50)))
    assert grid._coarse_far is not None and grid._coarse_far.cells < grid.cells
    fine_lo, fine_hi = grid._bound("lower", Fraction(50)), grid._bound("upper", Fraction(50))
    assert fine_lo <= hi and lo <= fine_hi
    assert 1 - Fraction(1, 10**8) < lo <= hi <= 1
