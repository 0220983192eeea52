"""Peak memory of the loss-grid folds: the window, what a fold keeps, the tilt cache.

docs/theory.md, section 15: the FFT window of a fold is placed by Chernoff bounds (any
``lam > 0`` is valid; the best one gives the shortest window), a fold keeps its masses and
per-block suffix sums only, and a composition keeps its most recent tilted directions.
References are independent of the code under test: exact rational suffix sums, a dense
search of the Chernoff exponent, ``tracemalloc``'s count of the bytes held.
"""

from __future__ import annotations

import math
import tracemalloc
from fractions import Fraction as F

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcompose_exact as dx
from dpcompose_exact.engines import gridfold
from dpcompose_exact.engines.gridfold import _Fold, _scan_min, _Suffix
from dpcompose_exact.engines.gridmeasure import _log_mgf
from dpcompose_exact.engines.subsample_grid import TILT_CACHE, NoiseGridComposition

U = 2.0**-53


def _sub(sigma: str, q: str):
    return dx.gaussian_noise(sigma).subsample(q).loss_pair().grid_noise()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0, 1e6, allow_subnormal=False), min_size=1, max_size=1500),
    st.integers(0, 1600),
)
def test_block_suffix_sums_are_within_the_sequential_bound(xs, j):
    """``_Suffix.at(j)`` against the exact rational suffix sum: within ``(n + 3) u``."""
    x = np.array(xs)
    s = _Suffix(lambda a, b: x[a:b], x.size)
    exact = sum((F(v) for v in xs[j:]), F(0))
    got = F(s.at(j))
    assert abs(got - exact) <= F((x.size + 3) * U) * exact


def test_scan_min_finds_the_least_exponent_of_a_unimodal_bound():
    """The scan stops past the minimum: the same least value as all of ``_LAMS``."""
    for t in (0.01, 0.5, 3.0, 40.0, 5e4):  # Chernoff exponents of N(0, v) at t: v lam^2/2 - lam t
        for v in (1e-6, 1e-3, 1.0, 30.0):

            def f(lam: float, t: float = t, v: float = v) -> float:
                return v * lam * lam / 2 - lam * t

            assert _scan_min(f) == min(f(lam) for lam in gridfold._LAMS)


def test_the_window_of_a_narrow_law_is_placed_by_its_best_exponent():
    """sigma 10, q 2e-4, 10^5 uses: the composed loss is narrow (sd about 6e-3).

    The window is at most 10 percent longer than the one of the best exponent found by a
    dense search (2^(e/16)); with the exponents stopped at 2^6 it was 12x longer.
    """
    comp = NoiseGridComposition([(_sub("10", "1/5000"), 100000)])
    fold = comp.folds["fwd_up"]
    hf = float(comp.h)
    parts = [(c["fwd_up"], n) for c, n in comp._cells]
    log_tau = math.log(gridfold.WINDOW_MASS)
    lams = [2.0 ** (e / 16) for e in range(-96, 20 * 16)]

    def logm(lam: float) -> float:
        return sum(k * _log_mgf(m, hf, lam) for m, k in parts)

    t_hi = min((logm(lam) - log_tau) / lam for lam in lams)
    t_lo = max(-(logm(-lam) - log_tau) / lam for lam in lams)
    best = (t_hi - t_lo) / hf
    assert fold.y.size <= 1.1 * best + 8
    assert fold.nfft <= 1.25 * best + 64


def test_a_fold_keeps_its_masses_and_little_else():
    """After its queries (bounds, estimates, tilted too), a fold holds about one double per
    window entry, and its construction peaks at three spectra (it held ten arrays and peaked
    at about ten before)."""
    comp = NoiseGridComposition([(_sub("1.5", "1/50"), 3000)])
    parts = [(c["fwd_up"], n) for c, n in comp._cells]
    _Fold(parts, comp.h)  # imports, and the measures' cached non-zero entries
    tracemalloc.start()
    try:
        fold = _Fold(parts, comp.h)
        built, peak = tracemalloc.get_traced_memory()
        fold.lam, fold.logc = 1.0, 0.0  # a tilt's weights (any lam: only the bytes count)
        for eps in (F(1, 2), F(1), F(2)):
            fold.estimate(float(eps))
            fold.bound(eps, True)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    n = fold.y.size
    assert n > 100_000
    assert held <= 8 * n * 1.1 + 200_000
    assert peak <= 8 * fold.nfft * 3


def test_a_composition_keeps_its_most_recent_tilts():
    """Queries at several small deltas: at most TILT_CACHE tilted directions are kept."""
    comp = NoiseGridComposition([(_sub("1", "1/100"), 200)])
    for d in ("1e-4", "1e-5", "3e-6", "1e-4"):
        comp.epsilon(d)
        assert len(comp._tilts) <= TILT_CACHE


def test_the_deep_cell_tables_are_not_kept_as_balls():
    """The deep grid of one use (sigma 1.88, q 1/400, tails to e^-60: about 8000 points)
    peaks at under 350 traced bytes per grid point: the distribution functions are made by
    chunks and dropped, the upper masses rounded as they come, the buckets kept as columns
    of doubles.  Every table of balls held at once, it peaked at about 690 bytes per point
    (the deep grids of tiny deltas reach hundreds of thousands of points).  The measures
    are those of the sweep one bucket at a time: checked against an independent sum, the
    lower measure's total below the upper one's and within 1e-12 of it."""
    from dpcompose_exact.engines import gridcells

    sub = _sub("1.88", "1/400")
    gridcells._cell_masses(sub, F(1, 10000), True, -20.0)  # imports, caches
    gridcells._cell_masses.cache_clear()
    tracemalloc.start()
    try:
        r = gridcells._cell_masses(sub, F(1, 10000), True, -60.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    n = r["fwd_up"].masses.size
    assert n > 5000
    assert peak <= 350 * n
    for d in ("fwd", "rev"):
        up = math.fsum(r[f"{d}_up"].masses.tolist())  # correctly rounded sums
        low = math.fsum(r[f"{d}_lo"].masses.tolist())
        assert low <= up and up - low <= 1e-12
        # each lower mass at most e^(its log) (the logs are lower ends too)
        lo_m, lo_l = r[f"{d}_lo"].masses, r[f"{d}_lo"].logs
        pos = lo_m > 0
        assert np.all(np.log(lo_m[pos]) >= lo_l[pos] - 1e-9)


def test_the_split_of_a_measure_holds_no_copy_of_it():
    """``gridparts._split`` of a long measure with logs: its parts are views (no new bytes
    beyond a few objects), and each part is the measure on its own indices: every lattice
    loss below the cut in the bulk, every other in the tail, masses and logs unchanged
    (checked index by index against the measure).  The zero-padded copies it made held
    four arrays of the measure's length (32 bytes per entry)."""
    from dpcompose_exact.engines import gridparts
    from dpcompose_exact.engines.gridmeasure import _Measure

    rng = np.random.default_rng(5)
    masses = rng.random(200_000)
    logs = np.log(masses)
    m = _Measure(masses, -300, F(0), F(1, 7), logs=logs)
    for cut in (-1000, -300, 5_000, 199_700, 10**6):
        tracemalloc.start()
        try:
            bulk, tail = gridparts._split(m, cut)
            held = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert held < 10_000
        for part in (bulk, tail):
            assert part.leak == 0 and part.shift == m.shift
        count = 0
        for part, below in ((bulk, True), (tail, False)):
            j = np.nonzero(part.masses)[0]
            i = part.offset + j  # the lattice indices
            assert np.all((i < cut) == below)
            assert np.array_equal(part.masses[j], masses[i + 300])
            assert np.array_equal(part.logs[j], logs[i + 300])
            count += j.size
        assert count == masses.size  # every mass in exactly one part


def test_the_split_grid_keeps_the_forward_measures_only(monkeypatch):
    """The fine lattice of the split (``mixed_masses``) keeps its forward measures only,
    equal entry by entry to those made next to the reverse ones on the same points (the
    reverse measures were four more arrays of its length)."""
    from dpcompose_exact.engines import gridcells

    made = {}
    measures_on = gridcells._measures_on

    def spy(*args, **kwargs):
        made["both"] = measures_on(*args, **{**kwargs, "forward": False})
        return measures_on(*args, **kwargs)

    monkeypatch.setattr(gridcells, "_measures_on", spy)
    got = gridcells.mixed_masses.__wrapped__(_sub("2", "1/300"), F(1, 10000), 2, 2000, -40.0)
    both = made["both"]
    assert set(got) == {"fwd_up", "fwd_lo", "fwd_lo_plain"}
    assert {"rev_up", "rev_lo"} <= set(both)
    assert got["fwd_up"].masses.size > 500
    for name in got:
        a, b = got[name], both[name]
        assert a.offset == b.offset and a.shift == b.shift and a.leak == b.leak
        assert np.array_equal(a.masses, b.masses) and np.array_equal(a.logs, b.logs)


def test_the_grid_cache_is_bounded_by_bytes():
    """The grid cache counts the bytes of the arrays it keeps (masses and logs, summed here
    apart) and keeps at most GRID_CACHE_BYTES of them (it kept 16 grids, however large)."""
    from dpcompose_exact.engines import gridcells

    gridcells._cell_masses.cache_clear()
    sub = _sub("1.5", "1/50")
    for tail in (-20.0, -30.0, -40.0):
        gridcells._cell_masses(sub, F(1, 1000), True, tail)
    cache = gridcells._cell_masses.cache
    held = sum(
        m.masses.nbytes + (0 if m.logs is None else m.logs.nbytes)
        for v in cache.values() for m in v.values()
    )
    assert len(cache) == 3 and held > 0
    assert cache.currsize == held <= cache.maxsize == gridcells.GRID_CACHE_BYTES


def test_the_deep_forward_measures_alone_equal_the_four_and_share_their_cache():
    """``cell_masses(..., forward=True)`` (the deep fold's cut and fine grids read no
    other) makes the forward measures alone, equal entry by entry to those made with the
    reverse ones, in half the bytes; when the four are cached already it hands out theirs
    (no second grid)."""
    from dpcompose_exact.engines import gridcells

    sub, h = _sub("1.5", "1/50"), F(1, 2000)
    gridcells._cell_masses.cache_clear()
    alone = gridcells.cell_masses(sub, h, deep=True, tail_log=-60.0, forward=True)
    four = gridcells.cell_masses(sub, h, deep=True, tail_log=-60.0)
    assert set(alone) == {"fwd_up", "fwd_lo"} and set(four) >= {"rev_up", "rev_lo"}
    assert alone["fwd_up"].masses.size > 500 and alone["fwd_up"].logs is not None
    for name in alone:
        a, b = alone[name], four[name]
        assert a.offset == b.offset and a.shift == b.shift and a.leak == b.leak
        assert np.array_equal(a.masses, b.masses) and np.array_equal(a.logs, b.logs)
    assert 2 * gridcells.measures_bytes(alone) == gridcells.measures_bytes(four)
    again = gridcells.cell_masses(sub, h, deep=True, tail_log=-60.0, forward=True)
    assert again["fwd_up"] is four["fwd_up"] and again["fwd_lo"] is four["fwd_lo"]
