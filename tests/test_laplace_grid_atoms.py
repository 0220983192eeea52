"""Subsampled Laplace noise: its two loss atoms on grid points (docs/theory.md, section 15).

One use of Laplace noise at rate ``q`` puts most of its mass on two atoms, ``L+`` and
``L-``; off the grid each loses up to ``h`` of the lower end per use.  The automatic width
is moved so that both sit on grid points (``engines.gridcells.align_grid``): checked here
against mpmath (the atoms and the width), and the enclosures against dp_accounting's PLD
on a fine grid (pessimistic above the truth, optimistic below it: a bracket), within the
box's goal where the unaligned grid was 1e-2 wide.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcompose_exact as dx
from dpcompose_exact.engines.gridcells import ALIGN_SPAN, ALIGN_TRIES, align_grid


def _atoms(b: F, q: F) -> tuple[mpmath.mpf, mpmath.mpf]:
    """``(L+, -L-)`` of one use of Laplace(b) at rate q, sensitivity 1, in mpmath."""
    with mpmath.workdps(40):
        e0 = 1 / mpmath.mpf(b.numerator) * b.denominator
        qq = mpmath.mpf(q.numerator) / q.denominator
        return mpmath.log1p(qq * mpmath.expm1(e0)), -mpmath.log1p(qq * mpmath.expm1(-e0))


@settings(max_examples=30, deadline=None)
@given(
    b=st.fractions(min_value=F(1, 2), max_value=F(20), max_denominator=100),
    q=st.fractions(min_value=F(1, 10**5), max_value=F(1, 2), max_denominator=10**5),
    uses=st.integers(min_value=1, max_value=10**6),
)
def test_the_aligned_width_puts_both_atoms_just_above_grid_points(b, q, uses):
    sub = dx.laplace_noise(str(b)).subsample(str(q)).loss_pair().grid_noise()
    h = F(1, 10000)
    aligned = align_grid([sub], h, uses)
    top, bot = _atoms(b, q)
    with mpmath.workdps(40):
        hp = mpmath.mpf(aligned.numerator) / aligned.denominator
        m = int(mpmath.floor(top / hp))
        # L+ is a grid point up to 1e-11 per cell, from above (the forward lower measure)
        assert 0 <= top - m * hp <= hp * m * mpmath.mpf(10) ** -11
        m0 = top * 10000
        assert m >= max(1, math.ceil(m0 / ALIGN_SPAN))  # never coarser than ALIGN_SPAN h
        # -L- is nearest a grid point from above among the widths L+/m' of ALIGN_SPAN
        # (brute force in mpmath: the fraction of -L-/(L+/m') over a grid cell)
        frac = bot / hp - mpmath.floor(bot / hp)
        lo = max(1, math.ceil(m0 / ALIGN_SPAN))
        others = range(lo, min(int(m0 * ALIGN_SPAN), lo + ALIGN_TRIES) + 1)
        best = min((bot * j / top - mpmath.floor(bot * j / top) for j in others), default=1)
        assert frac <= best + mpmath.mpf(10) ** -6


def test_two_laplace_kinds_or_none_keep_the_width():
    a = dx.laplace_noise(2).subsample("1/10").loss_pair().grid_noise()
    b = dx.laplace_noise(3).subsample("1/10").loss_pair().grid_noise()
    g = dx.gaussian_noise(2).subsample("1/10").loss_pair().grid_noise()
    h = F(1, 10000)
    assert align_grid([a, b], h) == h
    assert align_grid([g], h) == h
    assert align_grid([a, g], h) != h  # one Laplace pair next to Gaussian noise: aligned


def _pld_bracket(b, q, k, query, at, grid):
    """dp_accounting's PLD on a fine grid: (optimistic, pessimistic), a bracket of the truth."""
    from dp_accounting.pld import privacy_loss_distribution as pldm

    out = []
    for pessimistic in (False, True):
        pld = pldm.from_laplace_mechanism(
            b, 1, sampling_prob=q, use_connect_dots=pessimistic,
            pessimistic_estimate=pessimistic, value_discretization_interval=grid,
        ).self_compose(k)
        v = pld.get_epsilon_for_delta(at) if query == "eps" else pld.get_delta_for_epsilon(at)
        out.append(F(float(v)))
    return out


@pytest.mark.parametrize(
    "b, q, k, query, at, grid, goal",
    [
        # bench_box seed 0 rows 30 and 24: 1.08e-2 and 1.06e-2 wide on the unaligned grid
        ("1.21", "0.00176", 2, "eps", "6.3e-9", 1e-7, F(1, 10**4)),
        ("1.04", "0.00722", 65, "delta", "0.176", 2e-6, F(1, 10**3)),
    ],
)
def test_laplace_enclosures_meet_the_pld_bracket_within_the_goal(b, q, k, query, at, grid, goal):
    comp = dx.compose(dx.laplace_noise(b).subsample(q), k)
    value = comp.epsilon(at) if query == "eps" else comp.delta(at)
    lo, hi = (F(x) for x in value.interval(12))
    opt, pess = _pld_bracket(float(b), float(q), k, query, float(at), grid)
    assert lo <= pess and opt <= hi  # both contain the truth: they meet
    assert hi - lo <= goal * hi
    assert math.isfinite(float(hi))


def test_many_uses_of_a_tiny_rate_still_align_both_atoms():
    # Laplace(19.5) at rate 7.47e-5, 144437 uses: the composed window (about 19 sqrt(uses)
    # spreads of one use) leaves room for 20 cells per top atom, where both atoms are on
    # grid points; the old cap (40 sqrt(uses) spreads) stopped at 17, bottom atom 0.15 h off
    sub = dx.laplace_noise("19.5").subsample("7.47e-5").loss_pair().grid_noise()
    h = align_grid([sub], F(1, 1280000), 144437)
    top = math.log1p(7.47e-5 * math.expm1(1 / 19.5))
    bot = -math.log1p(7.47e-5 * math.expm1(-1 / 19.5))
    assert (top / float(h)) % 1.0 < 1e-6
    assert (bot / float(h)) % 1.0 < 0.01
