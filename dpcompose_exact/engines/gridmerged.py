"""Finite kinds on no line: the lower measures of all their uses, merged once on the grid.

A finite kind whose losses lie on no line (an exactly subsampled mechanism: losses
``ln(1 + q (e^l - 1))``) is placed on the loss grid one use at a time
(:mod:`~dpcompose_exact.engines.gridfinite`).  Its upper measures lose only a second-order
term per use (connect the dots), but rounding each use's losses down to the grid costs up
to ``h`` per use in the lower end.  Here the lower measures of all such kinds are one item
of count 1 instead (docs/theory.md, section 19, "Kinds on no line: the uses merged once"):
the composition of their uses pushed forward through the sum of grid indices given to
the atoms (a post-processing, so dominated by the true pair), its P- and Q-masses by two
certified FFT folds, each index's atom placed once at or below ``ln(P/Q)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import flint

from .gridbuckets import _choose_tau
from .gridmeasure import _PREC, _U64, _down, _Measure, _numpy, _up

__all__ = ["MergedLowerItem"]

#: the P- and Q-folds of the merged lower measures in long doubles: their error bound is
#: taken off every entry, so it must be far below the tail's masses (in doubles, about
#: 5e-12 per entry left a 2 % lower end at delta 1e-6 after 3000 uses; in long doubles 0.05 %)
MERGE_LONG = True


def _neutral() -> _Measure:
    """The unit mass at loss 0: the neutral element of composition (no leak, no shift)."""
    return _Measure(_numpy().ones(1), 0, Fraction(0))


class MergedLowerItem:
    """The lower measures of finite kinds on no line, all their uses composed and merged once.

    Args:
        kinds: ``[(item, count), ...]``: one use of each kind (a
            :class:`~dpcompose_exact.engines.gridfinite.FiniteGridItem`, its upper measures
            composed use by use on the grid with ``lower=False``).
        label: a title for ``repr``.

    Rounding each use's losses down to the grid would cost up to ``h`` per use.  Instead
    (docs/theory.md, section 19, "Kinds on no line: the uses merged once"), every atom of
    one use gets a grid index ``k_j`` (the nearest), and the ``n``-fold composition is
    pushed forward through the map ``outcome -> sum of its indices``: a post-processing,
    so the pushed pair is dominated by the true one.  Its P- and Q-masses at each index
    ``T`` are two certified FFT folds of the one-use P-masses ``p_j`` and Q-masses
    ``p_j e^{-l_j}`` placed at ``k_j`` (a Q-mass is the P-mass times ``e^{-L}``, and
    ``e^{-L}`` multiplies over the uses).  With ``m_T`` below the P-mass and ``x_T`` above
    the Q-mass, the atom of P-mass ``m_T`` at loss ``<= ln(m_T / x_T)`` has every hockey
    stick at most the pushed pair's at ``T``; it is placed once on the grid (with one shift
    ``tau``, as the noise's buckets are).  The lower end loses about ``h`` once, not per use.
    """

    def __init__(self, kinds: Sequence[tuple[Any, int]], label: str = "") -> None:
        self.kinds = [(item, int(n)) for item, n in kinds if n]
        self.label = label
        self._measures: dict[Fraction, dict[str, Any]] = {}

    def grid_measures(self, h: Fraction, deep: bool = False) -> dict[str, Any]:
        """Neutral upper measures; each direction's merged lower measure (``deep`` unused)."""
        h = Fraction(h)
        if h not in self._measures:
            self._measures[h] = {
                "fwd_up": _neutral(),
                "rev_up": _neutral(),
                "fwd_lo": _merged_lower([(it.atoms("fwd"), n) for it, n in self.kinds], h),
                "rev_lo": _merged_lower([(it.atoms("rev"), n) for it, n in self.kinds], h),
            }
        return self._measures[h]

    def __repr__(self) -> str:
        return f"MergedLowerItem({self.label or 'finite kinds on no line'})"


def _merged_lower(
    kinds: Sequence[tuple[tuple[list, flint.arb, flint.arb], int]], h: Fraction
) -> _Measure:
    """The merged lower measure of :class:`MergedLowerItem` for one direction.

    ``kinds``: ``[(atoms of one use, count), ...]``
    (:meth:`~dpcompose_exact.engines.gridfinite.FiniteGridItem.atoms`; leaks and dropped
    atoms are left out: a lower measure may lose mass).
    """
    from .gridfold import _Fold

    np = _numpy()
    hf = float(h)
    p_parts, q_parts = [], []
    r_min = 0.0  # a lower bound of sum_uses min_j (l_j - k_j h)
    with flint.ctx.workprec(_PREC):
        hb = flint.arb(flint.fmpq(h.numerator, h.denominator))
        for (atoms, _leak, _dropped), n in kinds:
            if not atoms:
                return _Measure(np.zeros(1), 0, Fraction(0))
            ks = [round(float(loss.mid()) / hf) for _, loss, _ in atoms]
            lo_k = min(ks)
            p_arr = np.zeros(max(ks) - lo_k + 1)
            q_arr = np.zeros(max(ks) - lo_k + 1)
            low_r = math.inf
            for k, (_, loss, m) in zip(ks, atoms):
                p_arr[k - lo_k] += _down(m)
                q_arr[k - lo_k] += _up(m * (-loss).exp())
                low_r = min(low_r, float((loss - k * hb).lower()))
            # the sums of two doubles per cell: rounded outwards
            p_arr *= 1 - 4 * _U64
            q_arr = np.nextafter(q_arr * (1 + 4 * _U64), np.inf)
            p_parts.append((_Measure(p_arr, lo_k, Fraction(0)), n))
            q_parts.append((_Measure(q_arr, lo_k, Fraction(0)), n))
            term = n * math.nextafter(low_r, -math.inf)
            r_min += term * (1 + 4 * _U64) if term < 0 else term * (1 - 4 * _U64)
    r_min -= 4 * _U64 * (abs(r_min) + 1e-300) * max(len(kinds), 1)  # the sums' rounding
    fp, fq = _Fold(p_parts, h, long=MERGE_LONG), _Fold(q_parts, h, long=MERGE_LONG)
    # the indices both windows hold
    a, b = max(fp.w_lo, fq.w_lo), min(fp.w_hi, fq.w_hi)
    if a > b:
        return _Measure(np.zeros(1), 0, Fraction(0))
    yp = np.asarray(fp.y[a - fp.w_lo : b - fp.w_lo + 1], dtype=np.float64)
    yq = np.asarray(fq.y[a - fq.w_lo : b - fq.w_lo + 1], dtype=np.float64)
    # P-mass >= y - E - (outside mass aliased in); Q-mass <= y + E (aliasing only adds);
    # y rounded to a double moves by at most u |y|, taken off (or added) too
    out_p = (float(fp.p_lo) + float(fp.p_hi)) * (1 + 1e-9)
    m = yp - (float(fp.err2) * (1 + 1e-9) + out_p + 2 * _U64 * np.abs(yp))
    m = np.maximum(m, 0.0) * (1 - 4 * _U64)
    x = np.maximum(yq, 0.0) + float(fq.err2) * (1 + 1e-9) + 2 * _U64 * np.abs(yq)
    x = np.nextafter(x * (1 + 4 * _U64), np.inf)
    keep = m > 0
    t_idx = np.arange(a, b + 1)[keep]
    m, x = m[keep], x[keep]
    if m.size == 0:
        return _Measure(np.zeros(1), 0, Fraction(0))
    # a loss at most the pushed loss ln(P_T / Q_T): ln(m / x) rounded down (logs within a
    # few ulps), or T h + r_min (every outcome at index T has its loss there or above)
    ell = np.log(m) - np.log(x)
    ell = ell - 8 * _U64 * (np.abs(np.log(m)) + np.abs(np.log(x)) + 1) - 1e-300
    floor_t = t_idx * hf + r_min  # hf and the product within u each of |T h|
    floor_t = floor_t - 8 * _U64 * (np.abs(t_idx * hf) + abs(r_min) + 1)
    ell = np.maximum(ell, floor_t)
    ell = ell - 1e-12 * (np.abs(ell) + 1)  # margin for the grid index's float division
    j = np.floor(ell / hf).astype(np.int64)  # j h <= ell
    dev = (j + 1) * hf - ell  # the grid point above: within dev of the loss
    dev = dev + 1e-12 * (np.abs(ell) + 1)
    tau = _choose_tau(list(zip(dev.tolist(), m.tolist())), hf)
    up = dev <= tau
    j = np.where(up, j + 1, j)
    base = int(j.min())
    arr = np.bincount(j - base, weights=m, minlength=int(j.max()) - base + 1)
    arr *= 1 - (4 + 2 * int(np.max(np.bincount(j - base)))) * _U64
    return _Measure(arr, base, Fraction(0), Fraction(tau))
