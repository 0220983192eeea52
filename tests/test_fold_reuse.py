"""A small delta(eps) builds fewer folds: reuse across the finer grids (docs/theory.md, 15).

"Reusing the folds": no untilted lower fold when the tilted ones follow, no tilted lower fold
of a direction whose upper end is below the other's lower end, the finer grids tilt only the
directions that can hold the answer and go straight to the halving the width asks for.
"Bounded losses on the finer deep grid": Laplace's deep folds again on the grid its width
asks for.  References that do not come from the code under test: the closed form of ``k``
Gaussian uses at rate 1 (``mu``-GDP, ``mu = sqrt(k) / sigma``) in mpmath; for Laplace, where
nothing closed exists, the enclosure of the deep grid without the finer one (certified on its
own: the two must meet) and the width asked for.
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.engines import gridfold, subsample_grid
from dpcompose_exact.engines.subsample_grid import NoiseGridComposition


def _mp(x: F) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _gdp_delta(mu: mpmath.mpf, eps: F) -> mpmath.mpf:
    """``delta(eps)`` of mu-GDP: ``Phi(-e/mu + mu/2) - e^e Phi(-e/mu - mu/2)``, 50 digits."""
    with mpmath.workdps(50):
        e = _mp(eps)
        return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


def _count_folds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    built = [0]
    real = gridfold._Fold.__init__

    def counted(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        built[0] += 1
        real(self, *args, **kwargs)

    monkeypatch.setattr(gridfold._Fold, "__init__", counted)
    return built


def test_finer_grids_reuse_the_coarse_enclosures(monkeypatch: pytest.MonkeyPatch) -> None:
    """A small delta(eps) wide on its grid: the tilted folds of one finer grid, no more.

    Four Gaussian uses (sigma 20, rate 1) on a coarse start (``1/500``: the tilted
    enclosure is wider than 1e-3 there) at ``eps = 0.55`` (``delta`` about ``4.3e-10``):
    the answer holds the closed form, is within the width asked for, and costs ten folds
    (two untilted upper, four tilted on the coarse grid, four on the grid halved three
    times at once: the two directions are equal at rate 1, neither can be dropped);
    thirty-two before (the untilted lower folds, and eight on every finer grid in turn).
    """
    monkeypatch.setattr(subsample_grid, "DEFAULT_GRID", F(1, 500))
    sub, eps = dx.gaussian_noise("20").subsample("1"), F(55, 100)
    comp = NoiseGridComposition([(sub, 4)])
    built = _count_folds(monkeypatch)
    lo, hi = comp.delta_bounds(eps)
    ref = _gdp_delta(mpmath.mpf(2) / 20, eps)
    assert 1e-15 < ref < 1e-6
    assert _mp(lo) <= ref <= _mp(hi)
    assert hi - lo <= F(1, 1000) * hi
    assert built[0] <= 10


def test_a_direction_below_the_other_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many uses at a small rate: the reverse direction, below the forward one, is dropped.

    ``q = 0.0209``, ``sigma = 3.77``, ``k = 50000``, ``delta(11)`` about ``5.54e-17``: the
    reverse direction's tilted upper end lies below the forward one's lower end, so its
    tilted lower fold is not built and no finer grid tilts it: seven folds (24 before),
    the enclosure positive and within the width asked for.
    """
    sub = dx.gaussian_noise("3.77").subsample("0.0209").loss_pair().grid_noise()
    comp = NoiseGridComposition([(sub, 50000)])
    built = _count_folds(monkeypatch)
    lo, hi = comp.delta_bounds(F(11))
    assert 0 < lo and hi - lo <= F(1, 1000) * hi
    assert built[0] <= 7
    assert [d for (d, *_), t in comp._tilts.items() if t._lo is None] == ["rev"]


def test_laplace_tiny_delta_on_the_finer_deep_grid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Laplace at many uses and a tiny delta: within 1e-3 (was 4.7e-3 on the deep grid).

    ``q = 3.37e-4``, ``b = 12.4``, ``k = 20000``, ``delta(0.1)`` about ``2.77e-157``: the
    deep grid's enclosure alone (the finer grid turned off) and the finer one's both
    certify the one number, so they meet; the finer one is within the width asked for.
    """
    sub = dx.laplace_noise("12.4").subsample("0.000337").loss_pair().grid_noise()
    eps = F(1, 10)
    lo, hi = NoiseGridComposition([(sub, 20000)]).delta_bounds(eps)
    assert 0 < lo and hi - lo <= F(1, 1000) * hi
    monkeypatch.setattr(
        subsample_grid.NoiseGridComposition, "_bounded_ends", lambda self, *a: None
    )
    lo0, hi0 = NoiseGridComposition([(sub, 20000)]).delta_bounds(eps)
    assert max(lo, lo0) <= min(hi, hi0)
    assert hi0 - lo0 > 4 * (hi - lo)


def test_the_tilted_folds_reuse_this_grids_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    """A grid's tilted folds read the measures the grid holds: none are built again.

    The measures' cache keeps nothing over its budget (64 MiB: a finer grid of a tiny rate,
    ``q = 1.35e-5``, ``sigma = 0.671``, ``k = 33401``, holds 193 MiB at ``h = 7.8e-7``), and
    the tilted folds asked the cache again: 3.5 s of CPU for those measures a second time.
    The cache is emptied here after the grid is built, which makes any second build show.
    """
    from dpcompose_exact.engines import gridcells

    calls = []
    real = gridcells._grid_measures

    def spy(*args):  # noqa: ANN002, ANN202
        calls.append(args[1])
        return real(*args)

    monkeypatch.setattr(gridcells, "_grid_measures", spy)
    comp = NoiseGridComposition([(dx.gaussian_noise("2").subsample("1/100"), 50)])
    built = len(calls)
    gridcells._GRID_CACHE.clear()
    t = comp._tilted("fwd", 1.0, False)
    assert t.up.lam > 0
    assert len(calls) == built
