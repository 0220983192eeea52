"""Many uses on the certified loss grid: the width chosen from k (docs/theory.md, section 15).

At many uses and a wide loss the composed loss's window outgrew the FFT at ``h = 1e-4`` (the
box's ``sigma = 0.785``, ``q = 0.112``, ``k = 405028``, ``eps(2.2e-15)``: the deep route on
grids 2-16 times coarser, 5.5 % wide in 76 s).  The grid's error is second order in ``h``,
so the automatic width is doubled until the window fits
(:func:`~dpcompose_exact.engines.gridcells.uses_grid`, "Many uses").  The checks run the
same rule with a smaller window limit (so that a few hundred uses trigger it quickly) and
compare with what does not come from the code under test: the closed form of ``k`` Gaussian
uses at rate 1 (``mu``-GDP with ``mu = sqrt(k) s / sigma``) in mpmath.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.engines import gridcells, gridepsilon, gridsteps, subsample_grid
from dpcompose_exact.engines.gridcells import DEFAULT_GRID, loss_spread, uses_grid
from dpcompose_exact.engines.subsample_grid import NoiseGridComposition


def _mp(x: F) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _gdp_epsilon(mu: mpmath.mpf, d: F, guess: float) -> mpmath.mpf:
    """``eps(d)`` of mu-GDP: the root of ``Phi(-e/mu + mu/2) - e^e Phi(-e/mu - mu/2) = d``.

    Bisected on ``[0, 2 guess]`` to 120 bits (``guess`` at least half the root).
    """
    with mpmath.workdps(40):

        def gap(e: mpmath.mpf) -> mpmath.mpf:
            return (mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)
                    - _mp(d))

        lo, hi = mpmath.mpf(0), mpmath.mpf(2 * guess)
        assert gap(lo) > 0 > gap(hi)
        for _ in range(120):  # bisection: gap is decreasing in e
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if gap(mid) > 0 else (lo, mid)
        return (lo + hi) / 2


def test_uses_grid_window_fits() -> None:
    """The width is ``1e-4 2^j``, the finest whose window estimate fits; few uses keep 1e-4."""
    sub = dx.gaussian_noise("0.785").subsample("0.112")
    assert uses_grid([sub], DEFAULT_GRID, [100]) == DEFAULT_GRID
    # a few uses of a huge loss keep the width (one use's grid limits name it), many are capped
    wide = dx.gaussian_noise("1/1000").subsample("1/10")
    assert uses_grid([wide], DEFAULT_GRID, [2]) == DEFAULT_GRID
    assert uses_grid([wide], DEFAULT_GRID, [10**6]) == DEFAULT_GRID * gridcells.USES_COARSEN
    h = uses_grid([sub], DEFAULT_GRID, [405028])
    window = gridcells.ALIGN_WINDOW * math.sqrt(405028) * loss_spread(sub)
    assert window <= gridcells.USES_FFT * float(h) < 2 * window
    assert h / DEFAULT_GRID == 2 ** round(math.log2(h / DEFAULT_GRID))


@pytest.mark.parametrize(("k", "delta"), [(300, F(1, 10**6)), (300, F(1, 10**12))])
def test_many_uses_coarser_grid_contains_closed_form(
    monkeypatch: pytest.MonkeyPatch, k: int, delta: F
) -> None:
    """k Gaussian uses (sigma 2, rate 1) on the coarser grid: narrow, around the closed form.

    With a window limit of ``2^14`` cells (and the rule from 100 uses on), ``k = 300`` needs
    the width ``0.0128`` (128 times ``1e-4``; without the rule the grid stayed at ``1e-4``);
    the enclosure is relatively ``6e-5`` wide (the error is second order in ``h``: about
    ``0.1 (h / s)^2``).
    """
    monkeypatch.setattr(gridsteps, "USES_FFT", 1 << 14)  # where uses_grid reads them
    monkeypatch.setattr(gridsteps, "USES_MIN", 100)
    comp = NoiseGridComposition([(dx.gaussian_noise("2").subsample("1"), k)])
    assert comp.h > DEFAULT_GRID and comp.h_deep == comp.h
    lo, hi = (F(x) for x in comp.epsilon(delta).interval(12))
    ref = _gdp_epsilon(mpmath.sqrt(k) / 2, delta, float(hi))
    assert _mp(lo) <= ref <= _mp(hi)
    assert hi - lo <= F(2, 10**4) * hi


def test_few_uses_keep_the_finer_automatic_grid() -> None:
    """A small rate's finer automatic width stays when the window fits (not raised to 1e-4)."""
    sub = dx.gaussian_noise("1").subsample("0.001")
    comp = NoiseGridComposition([(sub, 10)])
    assert comp.h == gridcells.auto_grid([sub]) < DEFAULT_GRID


def test_small_delta_chains_finer_grids(monkeypatch: pytest.MonkeyPatch) -> None:
    """eps(d) below 1e-6 is narrowed on up to three halved grids, around the closed form.

    The width asked for is made unreachable (``ROUTE_WIDTH``), so the chain runs its whole
    length: three halvings after the first grid (one before the chain; in one step or
    several, as the width asks), each enclosure
    intersected; the result still holds the closed form of 4 Gaussian uses (sigma 20) and
    is narrower than the single halving's (from a grid of ``1/500``, where the
    discretisation's width, second order in ``h``, dominates: quick, and each halving
    divides it by about 4).
    """
    sub, d = dx.gaussian_noise("20").subsample("1"), F(1, 10**8)
    ref = _gdp_epsilon(mpmath.sqrt(4) / 20, d, 0.6)
    widths = {}
    for halvings in (1, 3):
        monkeypatch.setattr(gridepsilon, "ROUTE_WIDTH", F(1, 10**12))
        monkeypatch.setattr(gridepsilon, "ROUTE_HALVINGS", halvings)
        monkeypatch.setattr(subsample_grid, "DEFAULT_GRID", F(1, 500))  # a quick start
        comp = NoiseGridComposition([(sub, 4)])
        calls = []
        real = type(comp)._ordinary_epsilon

        def spy(self, d, src=None, long=False, mixed=False, calls=calls, real=real):  # noqa: ANN001, ANN202
            calls.append(src)
            return real(self, d, src, long, mixed)

        monkeypatch.setattr(type(comp), "_ordinary_epsilon", spy)
        lo, hi = (F(x) for x in comp.epsilon(d).interval(12))
        monkeypatch.undo()
        # up to `halvings` steps, the halvings in all (several at once when the width asks)
        assert 2 <= len(calls) <= 1 + halvings
        assert calls[-1].h == comp.h / 2 ** (1 + halvings)  # after the first route grid
        assert _mp(lo) <= ref <= _mp(hi)
        widths[halvings] = hi - lo
    assert widths[3] < widths[1] / 4


@pytest.mark.parametrize(
    ("late_from", "order"), [(1, ["finer", "split"]), (10**9, ["split", "finer"])]
)
def test_many_uses_try_the_finer_grids_before_the_split(
    monkeypatch: pytest.MonkeyPatch, late_from: int, order: list[str]
) -> None:
    """A small delta(eps) from SPLIT_LATE_USES uses on: the finer grids first, then the split.

    The stages are replaced by recorders (each a narrowing only: returning the enclosure so
    far is sound) and every enclosure is made too wide, so the order is all that is checked:
    below the count the split comes first, as before.
    """
    seen: list[str] = []
    cls = subsample_grid.NoiseGridComposition
    monkeypatch.setattr(subsample_grid, "DELTA_ROUTE_WIDTH", F(0))
    monkeypatch.setattr(subsample_grid, "SPLIT_LATE_USES", late_from)
    monkeypatch.setattr(cls, "_tilt_ends", lambda self, *a, **k: None)
    monkeypatch.setattr(cls, "_deep_ends", lambda self, ends, eps, top, known: known)

    def finer(self, eps, eps_hi, target, known, ends=None):  # noqa: ANN001, ANN202
        seen.append("finer")
        return known

    def split(self, ends, eps, top):  # noqa: ANN001, ANN202
        seen.append("split")
        return False

    monkeypatch.setattr(cls, "_finer_ends", finer)
    monkeypatch.setattr(cls, "_split_ends", split)
    comp = cls([(dx.gaussian_noise("1").subsample("1/10"), 100)])
    lo, hi = comp.delta_bounds(F(9))
    assert 10**-15 <= hi < 10**-6 and 0 <= lo <= hi
    assert seen == order
