"""The deep tilted folds not built where they cannot narrow (docs/theory.md, section 15).

"When the deep folds cannot narrow": one Gaussian kind at a small rate whose deep folds'
gap (one use's bulk within a cell of the deep grid) is guessed wider than the goal is split
first, and its forward deep folds are then not built; the finer deep grid is not built
again where it would repeat the deep folds or outgrow its length.  These are choices of
work: the enclosures are checked against another certified route (a grid given by the
caller takes neither the split nor the guess) and the widths against the goal.
"""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import pytest

import dpcompose_exact as dx
from dpcompose_exact.engines import griddeep


def test_split_first_builds_no_forward_deep_fold(monkeypatch):
    """sigma 2, q 1e-4, k 1500, delta(5) ~ e^-406.6: six CPU seconds before, under one now."""
    built = []
    real = griddeep._Tilted

    def counted(cells, direction, *args, **kwargs):
        built.append(direction)
        return real(cells, direction, *args, **kwargs)

    monkeypatch.setattr(griddeep, "_Tilted", counted)
    v = dx.compose(dx.gaussian_noise("2").subsample("1/10000"), 1500).delta("5")
    lo, hi = v.probability().ends()
    assert "fwd" not in built, f"forward deep folds built: {built}"
    assert lo > 0 and (hi - lo) / hi < flint.arb("1e-3"), f"[{lo}, {hi}]"
    monkeypatch.setattr(griddeep, "_Tilted", real)
    # another certified route (a given grid: the deep folds alone, no split, no guess)
    other = dx.compose(
        dx.gaussian_noise("2").subsample("1/10000"), 1500, grid="1/2000"
    ).delta("5")
    o_lo, o_hi = other.probability().ends()
    assert lo <= o_hi and o_lo <= hi, f"[{lo}, {hi}] and [{o_lo}, {o_hi}] are disjoint"
    assert o_lo > 0 and math.isclose(float(flint.arb(lo).log()), -406.612, abs_tol=1e-3)


@pytest.mark.parametrize(
    ("guess", "known", "expected"),
    [
        # the guess's gap 0.294 against an enclosure e^-1496.974 .. e^-1496.912 (row 36)
        ((0.294, -1474.0, 1.0), (-1496.974, -1496.912), True),
        # refined to a quarter of the width: 0.294 / 16 is below twice 0.062
        ((0.294, -1474.0, 0.25), (-1496.974, -1496.912), False),
        # its measures cannot hold the answer (their Chernoff bound below the lower end)
        ((0.294, -1500.0, 1.0), (-1496.974, -1496.912), False),
        # no positive lower end: nothing to compare with
        ((0.294, -1474.0, 1.0), (None, -1496.912), False),
        # a gap narrower than the enclosure
        ((0.05, -1474.0, 1.0), (-1496.974, -1496.0), False),
    ],
)
def test_hopeless_compares_the_guessed_gap_with_the_enclosure(guess, known, expected):
    from dpcompose_exact.engines.griddeep import _hopeless

    def ball(log_value):  # a rational near e^log_value (below the doubles' range)
        if log_value is None:
            return Fraction(0)
        k = math.floor(log_value / math.log(2))
        return Fraction(2) ** k * Fraction(math.exp(log_value - k * math.log(2)))

    assert _hopeless(guess, (ball(known[0]), ball(known[1]))) is expected


def test_finer_grid_not_built_again():
    """The finer deep grid's folds: not when they would repeat the deep ones or outgrow it."""
    comp = dx.compose(dx.gaussian_noise("10").subsample("1/5000"), 50).result.grid
    eps = Fraction(1)
    known = (Fraction(1, 10**200), Fraction(2, 10**200))
    fine = comp._deep_grid("fwd", eps)
    h = comp.h_deep
    assert fine < h  # a finer grid is allowed here
    # deep folds of h with a short window, no gap and a Chernoff bound e^{C - lam eps} near
    # the answer (C = -460, lam = 1): worth the finer grid
    comp._deep_seen[("fwd", eps)] = (h, 1.0, -460.0, -460.0, 1 << 10)
    assert not comp._futile("fwd", eps, known)
    # ... but a Chernoff bound e^40 times the answer's upper end: the error swamps it
    comp._deep_seen[("fwd", eps)] = (h, 1.0, -420.0, -420.0, 1 << 10)
    assert comp._futile("fwd", eps, known)
    # ... or a gap whose (h' / h)^2 share (2) is at least twice the log-width (2 ln 2)
    comp._deep_seen[("fwd", eps)] = (h, 1.0, -460.0, -460.0 - 2 * float(h / fine) ** 2, 1)
    assert comp._futile("fwd", eps, known)
    # the same window times h / h' over the finer grid's length
    n = int(griddeep.DEEP_FINE_FFT * float(fine / h)) + 2
    comp._deep_seen[("fwd", eps)] = (h, 1.0, -460.0, -460.0, n)
    assert comp._futile("fwd", eps, known)
    # folds already on the finer grid: the same folds again
    comp._deep_seen[("fwd", eps)] = (fine, 1.0, -460.0, -460.0, 1 << 10)
    assert comp._futile("fwd", eps, known)


@pytest.mark.parametrize("cut", [False, True])
def test_an_uncut_deep_fold_leaves_the_finer_pass_to_cut_it(cut):
    """Regression: an uncut first deep fold (where the split may answer next) was recorded
    as what the deep grid showed, so the finer pass saw "the same grid again" and was skipped:
    the fold was never cut (the box's sigma 4.75, q 0.00184, k 10975, delta(23.7) went from
    [4.93e-2890, 3.84e-2889] to [4.4e-3224, 4.8e-2879]).  Only a cut fold is recorded."""
    comp = dx.compose(dx.gaussian_noise("10").subsample("1/5000"), 50).result.grid
    eps = Fraction(1)
    ends = {"fwd": (Fraction(0), Fraction(1)), "rev": (Fraction(0), Fraction(1))}
    comp._tilt_ends(ends, eps, eps, True, cut=cut)
    assert (("fwd", eps) in comp._deep_seen) is cut
