"""Finite pairs on the certified loss grid next to noise (docs/theory.md, section 19).

The grid route (``engines.gridfinite``, ``engines.gridmixed``) is checked against the exact
finite part (the conditioning sum of ``engines.mixed``, and the Gaussian closed form
conditioned on it): the exact answer lies inside the grid's enclosure.  A kind's composed
losses are checked against a brute-force convolution in exact rationals; lists at the box's
counts, whose exact finite part is refused, are answered within a CPU-time bound and meet
dp_accounting's PLD bracket.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction as F

import flint
import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcompose_exact as dx
from dpcompose_exact.engines import gridfinite as gridfinite_module
from dpcompose_exact.engines import gridmixed as gridmixed_module
from dpcompose_exact.engines import mixed as mixed_module
from dpcompose_exact.engines.gridcomposednoise import ComposedNoiseItem
from dpcompose_exact.engines.gridfinite import FiniteGridItem, _place, exact_size
from dpcompose_exact.engines.gridmixed import grid_with_finite
from dpcompose_exact.engines.mixed import _grid_item
from dpcompose_exact.regions.protocol import PairForm

PAPER = [("3/10", "0"), ("3/20", "1/50")]


def _split(items):
    pairs = [(m.loss_pair(), n) for m, n in items]
    noise = [(_grid_item(lp), n) for lp, n in pairs if lp.form is not PairForm.FINITE]
    finite = [(lp.directions()[0], n) for lp, n in pairs if lp.form is PairForm.FINITE]
    return noise, finite


def _ends(value):
    lo, hi = value.interval(12)
    return F(lo), F(hi)


def _exact_route(items, monkeypatch):
    """The exact finite part whatever its size (the thresholds raised)."""
    monkeypatch.setattr(mixed_module, "EXACT_FINITE_GRID", 10**9)
    monkeypatch.setattr(mixed_module, "EXACT_FINITE_GAUSSIAN", 10**9)
    comp = dx.compose(items)
    assert "finite part" in comp.why and "not enumerated" not in comp.why
    return comp


@pytest.mark.parametrize(
    "items, query, at",
    [
        # randomized response: losses log(8), placed after composing its 40 uses
        ([(dx.laplace_noise(2).subsample("1/10"), 20), (dx.randomized_response("7/10", 3), 30)],
         "eps", "1e-5"),
        # the paper's pair (rational losses on grid points) and discrete Laplace, one use each
        ([(dx.laplace_noise(2).subsample("1/20"), 30), (dx.Mechanism(PAPER), 12),
          (dx.discrete_laplace("7/10"), 6)], "delta", "1"),
        # all three finite kinds next to subsampled Gaussian noise
        ([(dx.gaussian_noise(2).subsample("1/10"), 20), (dx.randomized_response("1/2", 4), 6),
          (dx.Mechanism(PAPER), 2), (dx.discrete_laplace("1/2"), 3)], "delta", "2"),
    ],
)
def test_the_exact_finite_part_lies_inside_the_grid_enclosure(items, query, at, monkeypatch):
    exact = _exact_route(items, monkeypatch)
    noise, finite = _split(items)
    grid = grid_with_finite(noise, finite)
    ask = (lambda c: c.epsilon(at)) if query == "eps" else (lambda c: c.delta(at))
    e_lo, e_hi = _ends(ask(exact))
    g_lo, g_hi = _ends(ask(grid))
    assert g_lo <= e_lo <= e_hi <= g_hi
    assert (g_hi - g_lo) <= F(1, 10**4) * g_hi  # within the box's goal (eps 1e-4)


def test_the_noise_composed_first_keeps_a_coarse_grid_narrow(monkeypatch):
    """300 Laplace uses next to 30 randomized responses on a grid coarsened 32 times.

    The grid's point limit is lowered so that the list's spread coarsens the width to
    ``2/625``; use by use, the noise's lower buckets then cost ``k tau`` (a relative width
    of 7.8e-4 at eps(1e-5)); composed first on its own grid and moved once (section 19,
    "The noise composed first"), the enclosure is within the box's goal and holds the exact
    finite part's answer.  At 1e-13 the composed noise's absolute error terms leave its
    answer refused or wide: the list use by use answers (a second look), still holding it.
    """
    items = [(dx.laplace_noise(2).subsample("1/10"), 300), (dx.randomized_response("7/10", 3), 30)]
    exact = _exact_route(items, monkeypatch)
    monkeypatch.setattr(gridmixed_module, "FINITE_FFT", 1 << 16)
    noise, finite = _split(items)
    grid = grid_with_finite(noise, finite)
    assert isinstance(grid.kinds[0][0], ComposedNoiseItem) and grid.h == F(2, 625)
    e_lo, e_hi = _ends(exact.epsilon("1e-5"))
    g_lo, g_hi = _ends(grid.epsilon("1e-5"))
    assert g_lo <= e_lo <= e_hi <= g_hi
    assert g_hi - g_lo <= F(1, 10**4) * g_hi
    assert grid._second is None  # answered without the second look
    e_lo, e_hi = _ends(exact.epsilon("1e-13"))
    g_lo, g_hi = _ends(grid.epsilon("1e-13"))
    assert g_lo <= e_lo <= e_hi <= g_hi and grid._second is not None


def test_the_gaussian_closed_form_lies_inside_the_grid_enclosure(monkeypatch):
    items = [(dx.gaussian_noise(3), 10), (dx.randomized_response("7/10", 3), 30),
             (dx.discrete_laplace("3/10"), 5)]
    exact = _exact_route(items, monkeypatch)
    assert "closed form" in exact.why
    noise, finite = _split(items)
    grid = grid_with_finite(noise, finite)
    for d in ("1e-5",):
        e_lo, e_hi = _ends(exact.epsilon(d))
        g_lo, g_hi = _ends(grid.epsilon(d))
        assert g_lo <= e_lo <= e_hi <= g_hi
    e_lo, e_hi = _ends(exact.delta("5"))
    g_lo, g_hi = _ends(grid.delta("5"))
    assert g_lo <= e_lo <= e_hi <= g_hi and g_hi - g_lo <= F(1, 1000) * g_hi


def _brute(alpha, beta, gamma, n):
    """Exact masses of the composed randomized-response loss multiple ``t`` (convolution)."""
    dist = {0: F(1)}
    for _ in range(n):
        nxt: dict[int, F] = {}
        for t, m in dist.items():
            for step, p in ((1, alpha), (0, beta), (-1, gamma)):
                nxt[t + step] = nxt.get(t + step, F(0)) + m * p
        dist = nxt
    return dist


@settings(max_examples=12, deadline=None)
@given(
    p=st.fractions(min_value=F(1, 20), max_value=F(19, 20), max_denominator=40),
    buckets=st.integers(min_value=2, max_value=8),
    n=st.integers(min_value=1, max_value=30),
)
def test_a_kind_composed_on_its_line_holds_the_brute_force_masses(p, buckets, n):
    rr = dx.randomized_response(str(p), buckets)
    pld = rr.loss_pair().directions()[0]
    alpha, gamma = 1 - p + p / buckets, p / buckets  # kept w.p. 1 - p, else uniform
    beta = 1 - alpha - gamma
    truth = _brute(alpha, beta, gamma, n)
    step = math.log(alpha / gamma)
    with flint.ctx.workprec(128):
        step_ball = flint.arb(flint.fmpq(alpha.numerator, alpha.denominator)).log() - flint.arb(
            flint.fmpq(gamma.numerator, gamma.denominator)
        ).log()
    atoms, leak, dropped = FiniteGridItem(pld, n).atoms()
    assert leak.contains(0) and dropped.upper() < 1e-25
    kept = set()
    for _exact, loss, mass in atoms:
        t = round(float(loss.mid()) / step)
        assert loss.overlaps(t * step_ball)
        with flint.ctx.workprec(256):
            exact = flint.arb(flint.fmpq(truth[t].numerator, truth[t].denominator))
        assert mass.contains(exact)
        kept.add(t)
    # every atom of mass 1e-31 or more is kept, the others' total is at most `dropped`
    assert {t for t, m in truth.items() if m >= F(1, 10**31)} <= kept
    rest = sum((m for t, m in truth.items() if t not in kept), F(0))
    assert rest <= F(dropped.upper().mid().str(30, radius=False)) * (1 + F(1, 10**20))


def test_a_rational_loss_on_a_grid_point_is_placed_there_whole():
    # (a regression: a ball around 3/10 straddled the grid point and the lower measure put
    # the atom one cell below, a bias of h per use)
    with flint.ctx.workprec(128):
        loss = flint.arb(3) / 10
    m = flint.arb(1) / 4
    out = _place([(F(3, 10), loss, m)], flint.arb(0), flint.arb(0), F(1, 10**4))
    up, lo = out["fwd_up"], out["fwd_lo"]
    assert up.offset == lo.offset == 3000
    assert up.masses.size == lo.masses.size == 1
    assert lo.masses[0] <= 0.25 <= up.masses[0] and up.masses[0] - lo.masses[0] < 1e-15


def test_an_irrational_loss_is_connected_to_its_two_grid_points():
    # loss log(3) between grid points i h and (i + 1) h: the upper measure splits the mass
    # a into a (1 - w) and a w with w = (1 - e^{-t}) / (1 - e^{-h}), the lower one puts it
    # at i h; computed here in mpmath-free closed form with Python's log at the check
    h = F(1, 1000)
    with flint.ctx.workprec(128):
        loss = flint.arb(3).log()
    out = _place([(None, loss, flint.arb(1))], flint.arb(0), flint.arb(0), h)
    i = math.floor(math.log(3) / float(h))
    t = math.log(3) - i * float(h)
    w = -math.expm1(-t) / -math.expm1(-float(h))
    up, lo = out["fwd_up"], out["fwd_lo"]
    assert up.offset == i and lo.offset == i
    assert up.masses[0] == pytest.approx(1 - w, rel=1e-12) and up.masses[1] == pytest.approx(w)
    assert lo.masses[0] == pytest.approx(1.0) and lo.masses.size == 1


def test_the_exact_size_bound():
    rr = dx.randomized_response("1/2", 4).loss_pair().directions()[0]
    paper = dx.Mechanism(PAPER).loss_pair().directions()[0]
    assert exact_size([(rr, 10)]) == 21  # losses -10 l, ..., 10 l
    assert exact_size([(paper, 3)]) == 13  # multiples of 3/20 from -6 to 6
    assert exact_size([(rr, 10), (paper, 3)]) == 21 * 13


def _box_list(noise, rr, dlap=None):
    items = [noise, (dx.randomized_response(*rr[0]), rr[1])]
    if dlap is not None:
        items.append((dx.discrete_laplace(dlap[0]), dlap[1]))
    return items


@pytest.mark.parametrize(
    "items, query, at, pld, width, bound",
    [
        # the box, seed 0, row 8: refused before (the exact finite part); PLD 3.2 s.  The
        # width (1.8e-3 measured) is the 4653 noise uses' lower buckets on the coarse grid
        # that the finite part's spread asks for: not the goal's 1e-4
        (_box_list((dx.laplace_noise("19.7").subsample("0.0127"), 4653), (("0.49", 7), 283),
                   ("7/10", 22)), "eps", "3.2e-6", (406.3546, 406.5363), F(1, 400), 60.0),
        # counts of 10^4: randomized response 10^4 times next to a Gaussian
        (_box_list((dx.gaussian_noise("0.8"), 16), (("1/2", 6), 10**4)), "eps", "1e-6",
         None, F(1, 10**4), 60.0),
    ],
)
def test_box_count_lists_are_answered(items, query, at, pld, width, bound):
    start = time.process_time()
    comp = dx.compose(items)
    value = comp.epsilon(at) if query == "eps" else comp.delta(at)
    lo, hi = _ends(value)
    spent = time.process_time() - start
    assert "not enumerated" in comp.why
    assert 0 < lo <= hi and (hi - lo) <= width * hi
    assert spent < bound  # CPU seconds (measured: about 1 s on the 2-core machine)
    if pld is not None:  # dp_accounting's optimistic and pessimistic PLD, grid 1e-4
        assert lo <= F(pld[1]) and F(pld[0]) <= hi


def test_a_list_whose_exact_part_is_refused_is_answered_on_the_grid():
    items = [(dx.gaussian_noise("2").subsample("1/100"), 100),
             (dx.randomized_response("3/4", 5), 3000), (dx.Mechanism(PAPER), 3000),
             (dx.discrete_laplace("1/2"), 3000)]
    comp = dx.compose(items)
    assert "not enumerated" in comp.why
    lo, hi = _ends(comp.delta("50"))
    assert 0 <= lo <= hi <= 1 and hi - lo <= F(1, 1000) * max(hi, F(1, 10**12))


def test_delta_zero_next_to_many_finite_loss_values_is_the_largest_loss():
    # before: refused on the shared grid ("delta = 0: ... give a delta in (0, 1)"); the
    # exact part answers: 100 uses of RR(1/2, 4) (log 5 each) and 5 uses of Laplace noise
    # of eps0 = 1/2 on a 1/10 subsample, log(1 + (e^(1/2) - 1) / 10) each
    items = [(dx.laplace_noise(2).subsample("1/10"), 5), (dx.randomized_response("1/2", 4), 100)]
    with mpmath.workdps(40):
        truth = 100 * mpmath.log(5) + 5 * mpmath.log1p(mpmath.expm1(mpmath.mpf(1) / 2) / 10)
        lo, hi = dx.compose(items).epsilon(0).interval(20)
        assert mpmath.mpf(lo) <= truth <= mpmath.mpf(hi)
        assert mpmath.mpf(hi) - mpmath.mpf(lo) <= truth * mpmath.mpf("1e-18")


def test_delta_zero_on_the_grid_is_the_largest_loss():
    # before: refused ("delta = 0: ... give a delta in (0, 1)"); the finite part (no leak:
    # (0.3, 0) holds) loses at most 0.3 per use, a Laplace use log(1 + q (e^(1/2) - 1))
    pure = dx.Mechanism([("0.3", "0"), ("0.1", "1/100")])
    comp = dx.compose([(dx.laplace_noise(2).subsample("1/10"), 5), (pure, 100)])
    with mpmath.workdps(40):
        ref = 5 * mpmath.log1p(mpmath.expm1(mpmath.mpf(1) / 2) / 10) + 30
        lo, hi = (mpmath.mpf(x) for x in comp.epsilon(0).interval(30))
        assert lo <= ref <= hi and hi - lo < mpmath.mpf("1e-25")


def _directed_split(items):
    """Noise items and finite kinds, an asymmetric kind as its ``(forward, reverse)``."""
    pairs = [(m.loss_pair(), n) for m, n in items]
    finite_forms = (PairForm.FINITE, PairForm.ASYMMETRIC)
    noise = [(_grid_item(lp), n) for lp, n in pairs if lp.form not in finite_forms]
    finite = [
        (lp.directions() if lp.form is PairForm.ASYMMETRIC else lp.directions()[0], n)
        for lp, n in pairs
        if lp.form in finite_forms
    ]
    return noise, finite


@pytest.mark.parametrize(
    "items, at, width",
    [
        # subsampled randomized response (three losses, on no line) next to plain RR
        ([(dx.gaussian_noise(2), 10), (dx.randomized_response("1/2", 3).subsample("1/10"), 12),
          (dx.randomized_response("7/10", 3), 2)], "6", F(1, 500)),
        ([(dx.gaussian_noise(3), 6), (dx.randomized_response("3/4", 2).subsample("1/5"), 60)],
         "2", F(1, 500)),
    ],
)
def test_asymmetric_kinds_on_the_grid_hold_the_gaussian_closed_form(items, at, width, monkeypatch):
    """Exactly subsampled pairs on the grid, each direction placed in its own measures.

    The reference is the Gaussian closed form conditioned on each direction's exact finite
    part (``engines.mixed``, certified to any digits); the grid's enclosure (width 1/1000,
    coarse to keep the test quick) holds it, and is narrow: the uses' lower measures are
    merged once (``MergedLowerItem``), not rounded down use by use.
    """
    exact = _exact_route(items, monkeypatch)
    assert "closed form" in exact.why and "asymmetric" in exact.why
    noise, finite = _directed_split(items)
    grid = grid_with_finite(noise, finite, F(1, 1000))
    assert any(isinstance(item, gridfinite_module.MergedLowerItem) for item, _ in grid.kinds)
    e_lo, e_hi = _ends(exact.delta(at))
    g_lo, g_hi = _ends(grid.delta(at))
    assert g_lo <= e_lo <= e_hi <= g_hi
    assert g_hi - g_lo <= width * g_hi


def test_a_subsampled_finite_kind_at_a_large_count_goes_on_the_grid():
    """1000 uses of subsampled randomized response next to subsampled Gaussian noise.

    It was enumerated exactly in both directions (6.8 s CPU; the paper's pair subsampled,
    100 uses, did not finish in 15 minutes); on the grid it is answered in about 0.2 s,
    and the enclosure meets the exact route's (measured: [1.8118105, 1.8118416]).
    """
    items = [(dx.gaussian_noise("2").subsample("1/100"), 1000),
             (dx.randomized_response("1/2", 2).subsample("1/100"), 1000)]
    start = time.process_time()
    comp = dx.compose(items)
    lo, hi = _ends(comp.epsilon("1e-6"))
    spent = time.process_time() - start
    assert "not enumerated" in comp.why and "asymmetric" in comp.why
    assert lo <= F("1.8118416") and F("1.8118105") <= hi
    assert hi - lo <= F(1, 10**4) * hi
    assert spent < 10  # CPU seconds (measured: about 0.2 s)


def test_eps_of_a_small_finite_part_on_the_grid_comes_from_the_exact_part():
    """The box's seed 2 row 36: 101 loss values, over the grid route's 64.

    ``eps(1.4e-15)`` on the grid was ``1.5e-3`` relatively wide (over the box's ``1e-4``)
    in 2.3 s CPU; with the finite part enumerated (at most ``EXACT_FINITE_EPS`` loss
    values) it is ``5.4e-8`` wide in about 1 s.  ``delta(eps)`` stays on the grid (faster
    there), and both routes enclose the same number.
    """
    items = [(dx.laplace_noise("10.8").subsample("0.00866"), 756),
             (dx.randomized_response("0.94", 7), 100)]
    comp = dx.compose(items)
    assert "not enumerated" in comp.why and "eps(delta) with the finite part" in comp.why
    assert isinstance(comp.result, gridmixed_module.PerQueryComposition)
    lo, hi = _ends(comp.epsilon("1.4e-15"))
    assert 0 < lo <= hi and hi - lo <= F(1, 10**4) * hi
    grid = comp.result.grid()
    assert isinstance(grid, gridmixed_module.MixedGridComposition)
    e_lo, e_hi = _ends(comp.epsilon("1e-5"))
    g_lo, g_hi = _ends(grid.epsilon("1e-5"))
    assert g_lo <= e_hi and e_lo <= g_hi  # the same number: the enclosures meet
