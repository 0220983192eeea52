"""A tiny delta(eps) at a small rate, split by the number of large uses (engines.gridsplit).

The reference is computed apart from the package: two uses of the Poisson-subsampled
Gaussian in mpmath, the first use's output integrated against the one-use closed form of
the second (``g(t) = E_A[(1 - e^{t - L})_+]``, a difference of normal tails at the crossing
point), at 30 digits (the difference of the tails and the loss at 90), on pieces of one
standard deviation.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import flint
import mpmath as mp
from quadrature import one_large_use as _one_large_use
from quadrature import two_uses as _two_uses

import dpcompose_exact as dx
from dpcompose_exact.engines import gridsplit


@functools.cache
def _reference() -> mp.mpf:
    """The two-use quadrature of q 2.72e-6, sigma 1.93, delta(0.113) (shared: 1 CPU second)."""
    return _two_uses("2.72e-6", "0.113", "1.93")


def test_a_tiny_delta_at_a_small_rate_has_a_positive_lower_end_around_the_reference():
    """The sweep's q 2.72e-6, sigma 1.93, two uses, delta(0.113) ~ 1.85e-99: was [0, ...].

    The reverse direction is 0 here (its losses are at most -2 ln(1 - q) < eps), so the
    answer is the forward value.
    """
    ref = _reference()
    v = dx.compose(dx.gaussian_noise("1.93").subsample("2.72e-6"), 2).delta("0.113")
    lo, hi = v.ends()
    assert lo > 0
    # the quadrature on pieces of one standard deviation is 2.2e-6 below its value on
    # pieces of a quarter and of an eighth (1.846503758e-99, both): a ball of 1e-5
    with mp.workdps(30):
        ball = flint.arb(mp.nstr(ref, 25), mp.nstr(ref * mp.mpf("1e-5"), 5))
        inside = ball.overlaps(flint.arb(lo).union(hi))
    assert inside, (mp.nstr(ref, 12), lo, hi)
    assert (hi - lo) / lo < flint.arb("1e-3")  # was 1.0e-2: the tail near eps on the deep cells


def test_split_delta_is_not_for_one_use_or_other_noise():
    """One use has its closed form, Laplace noise no logs of its deep masses: None."""
    gauss = dx.gaussian_noise("1").subsample("1/1000").loss_pair().grid_noise()
    lap = dx.laplace_noise("1").subsample("1/1000").loss_pair().grid_noise()
    assert gridsplit.split_delta(gauss, 1, Fraction(1), Fraction(1, 10000)) is None
    assert gridsplit.split_delta(lap, 5, Fraction(1), Fraction(1, 10000)) is None


def test_split_ends_are_rationals_of_the_values_size():
    """A negligible part's Chernoff bound (e^{-10^5} and below) no longer sets the bits.

    The parts were summed as Fractions: a part bounded by ``e^{-lam eps}`` at a saddle point
    near ``2^24`` made the upper end a rational with a denominator of half a million bits
    for a value near ``2^-328``, and every later sum and comparison of the enclosure slow
    (q 0.00222, sigma 10.7, k 18, delta(14.8) ~ 2.3e-9078 took 425 s, 25 s now).
    """
    sub = dx.gaussian_noise("1.93").subsample("2.72e-6").loss_pair().grid_noise()
    lo, hi = gridsplit.split_delta(sub, 2, Fraction("0.113"), Fraction(1, 1000))
    assert 0 < lo <= hi
    size = hi.denominator.bit_length() - hi.numerator.bit_length()  # about -log2(hi)
    assert 300 < size < 400  # the value is about 2^-328 (1.85e-99)
    for end in (lo, hi):
        assert end.denominator.bit_length() <= size + 256, end.denominator.bit_length()


def test_the_split_answers_without_cutting_the_deep_fold_first(monkeypatch):
    """Where the split answers, the deep forward fold is not cut before it (its cost).

    The box's q 0.00182, sigma 1.92, k 2120, delta(0.869) spent 4.2 of 5.9 CPU seconds
    cutting the deep fold (``_deep_cut``) only to learn that the split applies (3.8 s now,
    the same enclosure).  Here the two-use case above, with the cut made to fail: the split
    alone gives an enclosure around the reference.
    """
    from dpcompose_exact.engines.subsample_grid import NoiseGridComposition

    def no_cut(*args, **kwargs):
        raise AssertionError("the deep fold was cut before the split")

    monkeypatch.setattr(NoiseGridComposition, "_deep_cut", no_cut)
    ref = _reference()
    lo, hi = dx.compose(dx.gaussian_noise("1.93").subsample("2.72e-6"), 2).delta("0.113").ends()
    with mp.workdps(30):
        ball = flint.arb(mp.nstr(ref, 25), mp.nstr(ref * mp.mpf("1e-5"), 5))
        assert ball.overlaps(flint.arb(lo).union(hi)), (mp.nstr(ref, 12), lo, hi)
    assert lo > 0 and (hi - lo) / lo < flint.arb("1e-3")


def _around(ref: mp.mpf, lo: Fraction, hi: Fraction, rel: str) -> bool:
    """The enclosure meets a ball of relative radius ``rel`` around ``ref``."""
    with mp.workdps(30):
        ball = flint.arb(mp.nstr(ref, 25), mp.nstr(ref * mp.mpf(rel), 5))
        ends = [flint.arb(x.numerator) / x.denominator for x in (lo, hi)]
        return ball.overlaps(ends[0].union(ends[1]))


def test_one_large_use_answers_where_the_deep_grid_overrated_the_bulk():
    """The sweep's q 1.84e-5, sigma 11.7, eps 0.0177 (there k 369) at k 150: was [0, 3.3e-1172].

    On the deep grid the bulk's cells end above eps / k: its part's estimate was 10^-280,
    the closed-form route (one large use) declined; on the bulk's own lattice, at its own
    tilt, that part is far below, and the route answers.
    """
    sub = dx.gaussian_noise("11.7").subsample("1.84e-5").loss_pair().grid_noise()
    lo, hi = gridsplit.split_delta(sub, 150, Fraction("0.0177"), Fraction(1, 10**4))
    assert 0 < lo <= hi
    assert hi - lo < Fraction(1, 10**3) * lo
    ref = _one_large_use("1.84e-5", "0.0177", "11.7", 150)  # ~2.1138e-1413
    assert _around(ref, lo, hi, "1e-4"), (mp.nstr(ref, 12), lo, hi)


def test_a_lower_cut_fits_the_bulks_lattice_at_many_uses():
    """q 1.27e-4, sigma 16.3, k 5000, delta(1.2): was [3.3e-8891, 1.4e-146] (2.6 s).

    The bulk's lattice up to the cut (loss 0.6) was too long at the ratio the bulk's 5000
    uses want, so the closed-form route declined; the cut is lowered where the lattice
    fits and the parts with two large uses stay negligible.
    """
    v = dx.compose(dx.gaussian_noise("16.3").subsample("1.27e-4"), 5000).delta("1.2")
    lo, hi = (Fraction(t) for t in v.interval(8))
    assert 0 < lo <= hi
    assert hi - lo < Fraction(1, 10**3) * lo
    ref = _one_large_use("1.27e-4", "1.2", "16.3", 5000)  # ~1.6305e-5559
    assert _around(ref, lo, hi, "1e-4"), (mp.nstr(ref, 12), lo, hi)


def test_eps_below_the_deep_grids_cells_is_split_on_finer_cells():
    """q 5.76e-6, sigma 12.4, eps 1.02e-4 (about one deep cell of 1e-4), two uses.

    The split's cut lies between 0 and eps / 2: on the deep grid's cells there was no cell
    there and the split declined (None), leaving the grid's floor (bench_widths seed 5 at
    seven uses: [2.2e-296, 5.1e-31]).  On its own cells (eps over at least 256 of them) the
    split encloses the reference, about 4.3292e-295, within 1e-4.  The reference:
    tests/quadrature.py, two pieces per standard deviation (four agree within 1e-6), a ball
    of relative radius 1e-5.
    """
    sub = dx.gaussian_noise("12.4").subsample("0.00000576").loss_pair().grid_noise()
    got = gridsplit.split_delta(sub, 2, Fraction("0.000102"), Fraction(1, 10000))
    assert got is not None
    lo, hi = got
    ref = _two_uses("0.00000576", "0.000102", "12.4", 2)
    with mp.workdps(30):
        ball = flint.arb(mp.nstr(ref, 25), mp.nstr(ref * mp.mpf("1e-5"), 5))
    ends = [flint.arb(x.numerator) / x.denominator for x in (lo, hi)]
    assert ball.overlaps(ends[0].union(ends[1])), (mp.nstr(ref, 12), lo, hi)
    assert 0 < lo and (hi - lo) / lo < Fraction(1, 10**4)
