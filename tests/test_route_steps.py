"""The steps of a small delta's finer chain: finer grids, long-double forward transforms or
long doubles (docs/theory.md, §15).

An enclosure of ``eps(d)`` from tilted folds is as wide as the upper and lower measures'
gap (the discretisation's, second order in ``h``) plus the bounds' error terms (the doubles'
FFT error bound, about the same on every grid).  Where the second holds half the width a
halving cannot bring it within the goal (``q = 1.35e-5``, ``sigma = 0.671``, ``k = 33401``,
``eps(5.7e-6)``: ``1.7e-4`` wide after three steps), long-double forward transforms (or
long doubles) can.  The split is read
off the folds' float estimates (:func:`~dpcompose_exact.engines.epsguide._width_split`);
here it is checked on folds whose estimates are closed forms, and the long-double step
against the closed form of Gaussian uses at rate 1 (``mu``-GDP) in mpmath.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.engines import gridepsilon, subsample_grid
from dpcompose_exact.engines.epsguide import _width_split
from dpcompose_exact.engines.gridepsilon import _route_step
from dpcompose_exact.engines.gridmeasure import _arb
from dpcompose_exact.engines.subsample_grid import NoiseGridComposition
from dpcompose_exact.numbers.value import Value

SLOPE = 300.0  # -d ln(delta) / d eps of the stand-in folds


class _Est:
    """A fold whose float estimate is ``c e^{-SLOPE eps}`` (shift ``s``, no leak)."""

    def __init__(self, c: float, s: float = 0.0) -> None:
        self.c, self.shift = c, F(s)
        self.leak, self.tail_bound = F(0), None

    def estimate(self, eps: float) -> float:
        return self.c * math.exp(-SLOPE * eps)


class _Pair:
    def __init__(self, up: _Est, lo: _Est) -> None:
        self.up, self._lo, self.lo = up, lo, lo


def _enclosure(gap: float, fft: float, mid: float = 0.0227) -> Value:
    """The ``[a, b]`` whose width in ``ln delta`` is ``gap + fft`` at slope :data:`SLOPE`."""
    half = (gap + fft) / SLOPE / 2
    return _interval(mid - half, mid + half)


def _interval(a: float, b: float) -> Value:
    """The enclosure ``[a, b]`` (exact ends)."""
    return Value.from_interval(_arb(F(a)), _arb(F(b)))


D, M, L = gridepsilon._DOUBLE, gridepsilon._MIXED, gridepsilon._LONG


@pytest.mark.parametrize(
    ("gap", "fft", "width", "step"),
    [
        # the row above after its first step: the halved grid with long-double forward
        # transforms (the FFT part down to MIXED_GAIN of it) reaches it, for less than long
        # doubles there
        (2.3e-3, 5.8e-4, 3.9e-4, (1, M)),
        # the discretisation alone: a halving in doubles suffices (the cheapest)
        (1.0e-3, 1.0e-5, 1.5e-4, (1, D)),
        # the discretisation alone, far off: two halvings at once
        (4.0e-3, 1.0e-5, 6.0e-4, (2, D)),
        # the error terms alone: the same grid with long-double forward transforms
        (1.0e-4, 1.0e-3, 1.6e-4, (0, M)),
        # ... or in long doubles, when the forward transforms' share left is not enough
        (1.0e-4, 5.0e-2, 5.0e-3, (0, L)),
        # nothing reaches it in one step: halve in doubles (the part beyond the gap may be
        # a leak's, which long doubles would not narrow)
        (4.0e-2, 2.0e-2, 1e-2, (1, D)),
        (4.0e-2, 1.0e-3, 1e-2, (1, D)),
    ],
)
def test_the_step_is_the_cheapest_predicted_to_reach_the_goal(
    gap: float, fft: float, width: float, step: tuple[int, int]
) -> None:
    """Stand-in folds whose estimates are closed forms: the split and the step they give."""
    v = _enclosure(gap, fft)
    a, b = (float(x.mid()) for x in v.ends())
    # the upper estimate falls by gap + fft across [a, b]; the lower one sits `gap` below
    up = _Est(1e-5)
    folds = {"fwd": _Pair(up, _Est(1e-5 * math.exp(-gap))), "rev": None}
    split = _width_split(v, folds)
    assert split is not None
    assert split[0] == pytest.approx(gap, rel=1e-6)
    assert split[1] == pytest.approx(fft, rel=1e-4, abs=1e-9)
    # the enclosure's relative width is what scales the goal: rebuild it at that width
    mid = (a + b) / 2
    scaled = _interval(mid * (1 - width / 2), mid * (1 + width / 2))
    slope = (gap + fft) / (mid * width)
    up2 = _Est(1e-5)
    up2.estimate = lambda e: 1e-5 * math.exp(-slope * e)  # type: ignore[method-assign]
    lo2 = _Est(0.0)
    lo2.estimate = lambda e: 1e-5 * math.exp(-slope * e - gap)  # type: ignore[method-assign]
    assert _route_step(scaled, {"fwd": _Pair(up2, lo2)}) == step


def test_no_split_halves_as_the_width_asks() -> None:
    """Without one tilted direction (both folds built) the split is unknown: the halvings
    that would bring the whole width within the goal were it all discretisation (a quarter
    per halving), within the halvings left, at the precision so far."""
    v = _interval(0.01, 0.0101)  # relative width 1e-2: 4^3 * 8e-5 = 5.1e-3 still short
    assert _width_split(v, {"fwd": None, "rev": None}) is None
    assert _route_step(v, {"fwd": None}) == (3, D)
    assert _route_step(v, {"fwd": None}, M, 2) == (2, M)
    # both directions tilted: the other's bound may hold an end, so no split is read
    both = {x: _Pair(_Est(1e-5), _Est(0.9e-5)) for x in ("fwd", "rev")}
    assert _width_split(v, both) is None
    assert _route_step(_interval(0.01, 0.010002), both) == (1, D)  # 2e-4: one halving


def _gdp_epsilon(mu: mpmath.mpf, d: F) -> mpmath.mpf:
    """``eps(d)`` of mu-GDP, bisected to 120 bits on ``[0, 4]``."""
    with mpmath.workdps(40):
        dd = mpmath.mpf(d.numerator) / d.denominator

        def gap(e: mpmath.mpf) -> mpmath.mpf:
            tail = mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)
            return mpmath.ncdf(-e / mu + mu / 2) - tail - dd

        lo, hi = mpmath.mpf(0), mpmath.mpf(4)
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if gap(mid) > 0 else (lo, mid)
        return (lo + hi) / 2


@pytest.mark.parametrize("mode, tag", [(L, "long"), (M, "mixed")])
def test_a_finer_step_keeps_the_closed_form(
    monkeypatch: pytest.MonkeyPatch, mode: int, tag: str
) -> None:
    """Every step in long doubles, or with long-double forward transforms: the tilted folds
    are built so (their key says which), and the answer holds the truth.

    4 Gaussian uses (sigma 20, rate 1) at ``eps(1e-8)`` from a grid of ``1/500`` (quick),
    the goal made unreachable so that two steps run, both forced to that precision (the
    first on the same grid, the second on the halved one).
    """
    monkeypatch.setattr(gridepsilon, "ROUTE_WIDTH", F(1, 10**12))
    monkeypatch.setattr(gridepsilon, "ROUTE_HALVINGS", 2)
    monkeypatch.setattr(subsample_grid, "DEFAULT_GRID", F(1, 500))
    steps = iter([(0, mode), (1, mode)])
    monkeypatch.setattr(gridepsilon, "_route_step", lambda *args: next(steps))
    comp = NoiseGridComposition([(dx.gaussian_noise("20").subsample("1"), 4)])
    seen: list[tuple[bool, bool]] = []
    real = NoiseGridComposition._ordinary_epsilon

    def spy(self, d, src=None, long=False, mixed=False):  # noqa: ANN001, ANN202
        seen.append((long, mixed))
        return real(self, d, src, long, mixed)

    monkeypatch.setattr(NoiseGridComposition, "_ordinary_epsilon", spy)
    d = F(1, 10**8)
    lo, hi = (F(x) for x in comp.epsilon(d).interval(15))
    ref = _gdp_epsilon(mpmath.sqrt(4) / 20, d)
    assert mpmath.mpf(lo.numerator) / lo.denominator <= ref
    assert ref <= mpmath.mpf(hi.numerator) / hi.denominator
    step = (mode == L, mode == M)
    assert seen == [(False, False), step, step]
    keys = list(comp._tilts) + (list(comp._finer._tilts) if comp._finer is not None else [])
    assert any(len(key) == 5 and key[-1] == tag for key in keys)


def test_a_direction_far_below_delta_is_tilted_at_its_own_guess() -> None:
    """``q = 0.00789``, ``sigma = 1.72``, ``k = 222``, ``eps(2.3e-14)`` (the practitioner's
    box, seed 2): below GUESS_FLOOR both directions are tilted; the reverse one, whose delta
    is about 1e-24 there, was tilted at the saddle point of the forward guess (``lam =
    691``), where its error, relative to a Chernoff bound far above delta below the guess,
    held the upper end at 0.677 (6.4% wide; the deep route then took 7 s).  Tilted at its
    own Chernoff guess (below the forward one), its bound is below delta over the whole
    enclosure: the ordinary route's first answer is 0.2% wide (its ends certified as
    ever; containment is checked against closed forms elsewhere)."""
    comp = NoiseGridComposition([(dx.gaussian_noise("1.72").subsample("0.00789"), 222)])
    d = F(23, 10**15)
    assert d < gridepsilon.GUESS_FLOOR
    lo, hi = (F(x) for x in comp._ordinary_epsilon(d).interval(12))
    assert 0 < lo and hi - lo < F(1, 100) * hi
