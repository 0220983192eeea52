"""The loss grid's fixed cost: one erfc per normal law and grid point, a graded lower tail,
and the tilt search's window scans started where the last one ended.

References are independent: mpmath's erfc at 60 digits, the closed form of one use of the
subsampled Gaussian (the crossing points of its increasing likelihood ratio), and the
window scans run from the start (no hint).
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import flint
import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.engines import gridcells, gridmeasure, gridtilt
from dpcompose_exact.engines.gridcells import _erfc_halves, _grid_points, _loss_index_range
from dpcompose_exact.engines.gridfold import _LAMS, _scan_min, fold_length
from dpcompose_exact.engines.subsample_grid import NoiseGridComposition


def _ball_ends(b: flint.arb) -> tuple[mpmath.mpf, mpmath.mpf]:
    lo, hi = b.lower(), b.upper()
    return (mpmath.mpf(x.mid().str(60, radius=False)) for x in (lo, hi))


@pytest.mark.parametrize("x", [-37.5, -9.1, -1.3, -1e-3, 0.0, 2e-7, 0.6, 3.3, 11.0, 26.7, 37.9])
def test_one_erfc_per_point_encloses_mpmath_over_the_whole_ball(x):
    with flint.ctx.workprec(128), mpmath.workdps(60):
        # an inexact ball around x (radius about 1e-38 relative), as the grid's u is
        v = (flint.arb(x) + flint.arb(1) / 3).exp().log() - flint.arb(1) / 3
        assert v.rad() > 0
        (f, s), = _erfc_halves([v])
        ends = _ball_ends(v)
        for end in ends:  # every point of the ball: both ends (erfc is monotone)
            for ball, want in ((f, mpmath.erfc(end) / 2), (s, mpmath.erfc(-end) / 2)):
                lo, hi = _ball_ends(ball)
                assert lo <= want <= hi, (x, ball, want)
        # relatively tight, however small (down to 1e-620)
        for ball in (f, s):
            lo, hi = _ball_ends(ball)
            assert hi - lo <= mpmath.mpf(10) ** -24 * hi


def test_the_lower_tail_of_a_subsampled_gaussian_is_graded_and_still_certified():
    sub = dx.gaussian_noise("159/10").subsample("153/500")  # a box row: 4277 points before
    h = F(1, 10000)
    lo, hi, _, _ = _loss_index_range(sub, h, math.log(gridcells.TAIL_MASS))
    pts = _grid_points(sub, h, lo, hi)
    assert len(pts) < 2500  # was 4277 (2202 of them where one use's A-mass below is < 1e-20)
    assert pts[0] == lo and pts[1] - pts[0] > 1  # the bottom is still a grid point
    # one use, both directions, against the closed form (the reverse direction's loss is
    # largest at the bottom: its tail is the graded one)
    sig, q = mpmath.mpf(3) / 2, mpmath.mpf(3) / 10
    c = NoiseGridComposition([(dx.gaussian_noise("3/2").subsample("3/10"), 1)], h=F(1, 2000))

    def closed(eps: mpmath.mpf) -> mpmath.mpf:
        def x_at(r):  # where A/B = r, None when the ratio stays above r
            t = (r - 1 + q) / q
            return None if t <= 0 else mpmath.log(t) * sig**2 + mpmath.mpf(1) / 2

        g = mpmath.exp(eps)
        x = x_at(g)
        fwd = 1 - g if x is None else (
            q * mpmath.ncdf((1 - x) / sig) + (1 - q) * mpmath.ncdf(-x / sig)
            - g * mpmath.ncdf(-x / sig)
        )
        x = x_at(1 / g)
        rev = mpmath.mpf(0) if x is None else (
            mpmath.ncdf(x / sig)
            - g * (q * mpmath.ncdf((x - 1) / sig) + (1 - q) * mpmath.ncdf(x / sig))
        )
        return max(fwd, rev)

    with mpmath.workdps(30):
        for eps in ("0.05", "0.2", "0.34"):
            want = closed(mpmath.mpf(eps))
            lo_v, hi_v = (mpmath.mpf(v) for v in c.delta(eps).interval(25))
            assert lo_v <= want <= hi_v, (eps, lo_v, hi_v, want)
            assert hi_v - lo_v <= 2e-3 * want


def _parts():
    sub = dx.gaussian_noise("68/25").subsample("107/1000000")  # a box row (55 uses)
    h = F(1, 10000 * 2**7)
    c = gridcells.cell_masses(sub, h)
    return [(c["fwd_up"], 55)], float(h)


def test_window_scans_from_a_hint_find_the_scans_from_the_start():
    parts, hf = _parts()
    lam = gridtilt._saddle(parts, hf, 1e-4)
    hints = ([None], [None])
    for j in range(gridtilt.TILT_STEPS, 0, -1):
        x = lam * j / gridtilt.TILT_STEPS
        assert fold_length(parts, hf, x, hf, hints) == fold_length(parts, hf, x, hf)
    # a unimodal function: the same least value from any start
    for centre in (-3.0, 2.5, 9.0, 19.0):
        def f(lam: float, c: float = centre) -> float:
            return (math.log2(lam) - c) ** 2
        full = _scan_min(f)
        for start in (0, 5, 13, len(_LAMS) - 1):
            assert _scan_min(f, [start]) == full


def test_the_tilt_search_reads_the_log_mgf_a_few_hundred_times(monkeypatch):
    parts, hf = _parts()
    lam = gridtilt._saddle(parts, hf, 1e-4)
    calls = []
    real = gridmeasure._log_mgf

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    import dpcompose_exact.engines.gridfold as gridfold

    monkeypatch.setattr(gridfold, "_log_mgf", counted)
    monkeypatch.setattr(gridtilt, "_log_mgf", counted)
    gridtilt._window_tilt(parts, hf, 1e-4, lam)
    assert len(calls) < 400  # 199; every window scan from 2^-6, one power of 2 at a time,
    # to its least value (2^9 and more here): 784
