"""The reverse direction of a tiny ``delta(eps)`` at a small rate: its large uses at a cut.

The reverse pair ``(B, A)`` of subsampled Gaussian noise has the loss ``-L`` under ``B``,
``L = ln(1 - q + q e^beta)``: it is at most ``-ln(1 - q)`` (about ``q``), and its large
uses, the forward direction's heavy upper tail, lie in its *lower* tail.  Split one use at
a loss ``theta`` (``L <= theta``: the bulk; ``L > theta``: the large uses) and raise every
large use's reverse loss to ``-theta``: the reverse ``delta(eps) = E_B[(1 - e^{eps - S})_+]``
is non-decreasing in every loss (couple the outcomes), so the raised pair's value is an
upper bound, and the lattice measures of the grid do this already for the mass beyond their
top (:func:`~.gridcells.cell_masses`, no leak in the reverse direction).  Tilted at
``lam > 0`` the raised uses weigh ``e^{-lam theta}``: with ``theta`` at
:data:`REV_DROP` over ``lam`` they change the Chernoff bound by a relative ``k e^{-40}``,
and every part with a large use (the sum of the forward split's parts ``j >= 1``) is
folded with the bulk in one fold.  What is left is the bulk alone, a moderate deviation of
``k`` small losses of spread about ``q sqrt(e^{s^2/sigma^2} - 1)``: on the deep grid of
``10^-4`` it sits in a cell or two (its tilt ``lam`` in the hundreds of thousands), so the
grid is refined until ``k (lam h)^2`` is at most a ``gap`` (:data:`REV_GAP`), up to the cut
``theta`` only.  The forward direction's bulk likewise (:func:`bulk_delta`), its top where
``k`` times one use's tail is far below the bulk's Chernoff bound and the outcomes beyond it
the leak.  The argument is docs/theory.md, section 15 ("The reverse direction by its cut").
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from .gridcells import _loss_index_range, cell_masses, log_tails, loss_spread
from .gridfold import fold_length
from .gridmeasure import _frac, _log_mgf
from .gridparts import _chernoff, _saddle
from .gridtilt import _Tilted

__all__ = ["bulk_delta", "reverse_delta"]

#: the fine grid's width: ``k (lam h)^2`` (the folds' lattice error, second order in
#: ``lam h`` per use: measured, the relative width is about a quarter of it) at most the
#: ``gap`` asked for (REV_GAP: narrow; REV_COARSE: enough to show the reverse direction
#: below the forward one), and ``lam h`` at most REV_STEP (the buckets' first-order share)
REV_GAP = 1e-3
REV_COARSE = 1e-2
REV_STEP = 4e-3
#: ... after a probe whose grid puts this many cells in one use's loss spread
REV_PROBE = 64
#: the cut ``theta``: ``lam theta`` at least this (the raised uses weigh ``e^{-REV_DROP}``;
#: the probe's: REV_REACH spreads of one use's loss)
REV_DROP = 40.0
REV_REACH = 4.0
#: one use's fine grid at most this many cells, the fold's estimated FFT length at most this
REV_CELLS = 1 << 18
REV_FFT = 1 << 22
#: the grid is refined at most this many times (each from the tilt found on the last)
REV_ROUNDS = 3


def reverse_delta(
    sub: Any, k: int, eps: Fraction, h: Fraction, lower_at: Fraction | None = None,
    gap: float = REV_GAP,
) -> tuple[Fraction, Fraction] | None:
    """``(lower, upper)`` of the reverse ``delta(eps)`` of ``k`` uses of ``sub`` (module doc).

    ``sub``: subsampled Gaussian noise at a rate below 1 (else None); ``h``: the deep
    grid's width, halved until ``k (lam h)^2`` is at most ``gap`` and ``lam h`` at most
    :data:`REV_STEP`.  ``lower_at``: the lower end at this ``eps`` instead (a range of
    ``eps``: its right end).  None when the fine grid or its fold would be too large.
    Every choice (the cut, the width, the tilt) is made in floats; the bounds are those
    of the tilted folds (certified).
    """
    return bulk_delta(sub, k, eps, h, "rev", lower_at, gap)


def bulk_delta(
    sub: Any, k: int, eps: Fraction, h: Fraction, direction: str,
    lower_at: Fraction | None = None, gap: float = REV_GAP,
) -> tuple[Fraction, Fraction] | None:
    """``(lower, upper)`` of one direction's ``delta(eps)`` tilted on a grid fine for its bulk.

    ``direction``: ``"rev"`` (its large uses raised to the cut ``theta = REV_DROP / lam``,
    the grid's top: :func:`reverse_delta`) or ``"fwd"``: the grid's top where ``k`` times
    one use's tail is ``e^-REV_DROP`` of the bulk's Chernoff bound (read from the probe),
    the outcomes beyond it bounded by their mass (the leak, as everywhere on the grid):
    narrow where the bulk carries the answer (a moderate deviation of many small losses),
    a certified but loose upper end where large uses do (the split of
    :mod:`~.gridsplit` is for those).  Choices in floats; certified bounds.
    """
    if k < 2 or not log_tails(sub):
        return None
    q = Fraction(sub.q)
    if direction == "rev" and eps >= k * q / (1 - q):
        # each reverse loss is at most -ln(1 - q) = ln(1 + q / (1 - q)) <= q / (1 - q)
        return Fraction(0), Fraction(0)
    ef = float(eps)
    spread = loss_spread(sub)
    fine = _halved(h, spread / REV_PROBE)
    lam, chern = 0.0, None
    cells: dict[str, Any] | None = None
    was_fine = fine
    for _ in range(REV_ROUNDS):
        top_log = _top_log(sub, REV_REACH * spread)
        if direction == "rev" and lam > 0:
            top_log = _top_log(sub, max(REV_DROP / lam, REV_REACH * spread))
        elif chern is not None:  # forward: the tail beyond the top far below the answer
            top_log = min(top_log, chern - math.log(k) - REV_DROP)
        lo, hi, _, _ = _loss_index_range(sub, fine, top_log)
        if hi - lo > REV_CELLS:
            return _rev_chernoff(cells, direction, k, lam, eps, was_fine)
        was_fine = fine
        cells = cell_masses(sub, fine, deep=True, tail_log=top_log)
        up = cells[f"{direction}_up"]
        was = lam
        lam = _saddle([(up, k)], float(fine), ef)
        chern = k * _log_mgf(up, float(fine), lam) - lam * ef
        want = _halved(h, min(REV_STEP, math.sqrt(gap / k)) / lam)
        if want >= fine and abs(lam - was) <= 0.1 * lam:
            break
        fine = min(want, fine)
    # the width the cells were built on (the last round may have asked a finer one)
    fine = was_fine
    if cells is None or not lam > 0:
        return None
    up = cells[f"{direction}_up"]
    if fold_length([(up, k)], float(fine), lam, float(fine)) > REV_FFT:
        return _rev_chernoff(cells, direction, k, lam, eps, fine)
    lam = float(f"{lam:.3g}")
    t = _Tilted([(cells, k)], direction, lam, fine, long=True)
    upper = t.up.bound(eps, True)
    lower = t.lo.bound(eps if lower_at is None else lower_at, False)
    return lower, upper


def _rev_chernoff(
    cells: dict[str, Any] | None, direction: str, k: int, lam: float, eps: Fraction,
    fine: Fraction,
) -> tuple[Fraction, Fraction] | None:
    """``(0, M(lam)^k e^{-lam eps})`` of the reverse direction on ``cells`` (or None).

    Where the grid fine enough for the bulk's fold is too large, the reverse direction is
    still bounded above by the Chernoff bound of its last grid's upper measure
    (:func:`~.gridparts._chernoff`; the upper measure dominates, its large uses raised to
    its top: module docstring): at a small rate it is often thousands of decades below the
    forward direction, which then carries the answer alone (docs/theory.md, section 15,
    "The reverse direction by its cut").  The forward direction's grid leaks past its top,
    so it is not bounded this way.
    """
    if cells is None or direction != "rev" or not lam > 0:
        return None
    up = cells["rev_up"]
    lam = float(f"{lam:.3g}")
    bound = _chernoff(k, 0, lam, eps, up, up, float(fine)).upper()
    return Fraction(0), _frac(bound)


def _halved(h: Fraction, want: float) -> Fraction:
    """``h / 2^j`` for the least ``j >= 0`` with ``h / 2^j <= want`` (a choice of width)."""
    j = max(0, math.ceil(math.log2(float(h) / want))) if want > 0 else 0
    return h / 2**j


def _top_log(sub: Any, theta: float) -> float:
    """The grid's tail mass (its log) whose top is about the loss ``theta`` (floats).

    :func:`~.gridcells._loss_index_range` ends the grid ``sqrt(-2 t) + 1/2`` spreads of the
    shifted noise above its centre for the tail ``e^t``: ``t`` for the output where the loss
    is ``theta``.
    """
    noise, q = sub.noise, float(sub.q)
    sig, s = float(noise.scale), float(noise.shift)
    beta = math.log(math.expm1(min(theta, 700.0)) / q + 1)
    z = (beta * sig * sig / s + s / 2 - s) / sig
    return -max(z - 0.5, 0.0) ** 2 / 2
