"""All the noise of a mixed list composed first on its own finer grid, as one grid item.

When the grid of a mixed list was coarsened for its finite part
(:func:`~dpcompose_exact.engines.gridmixed.grid_width`), one noise use spans few of its
cells and each use's lower measure would lose the coarse grid's shift ``tau``.
:class:`ComposedNoiseItem` composes the noise first on its own automatic grid of width
``h_f`` and moves each of the four certified folds once onto the coarse grid ``h = m h_f``
(docs/theory.md, section 19, "The noise composed first"): the upper folds connect the dots
to the two coarse points around each mass (a post-processing), the lower folds merge the
masses of one coarse cell into one atom at their mean ``e^{-L}`` (Jensen) with one shift for
the whole composition.  The lower end then loses its own grid's shift per use and about one
coarse cell once, not the coarse grid's shift per use.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError
from .gridbuckets import _choose_tau
from .gridmeasure import _PREC, _U64, _Measure, _numpy, _up
from .subsample_grid import NoiseGridComposition

__all__: list[str] = []


class ComposedNoiseItem:
    """All the noise of a mixed list, composed on its own finer grid, as one item (count 1).

    Args:
        noise: ``[(noise item, count), ...]`` as the loss grid composes them.
        h_fine: the noise's grid width ``h_f`` (the coarse grid is a multiple of it).
        label: a title for ``repr``.

    The noise is composed first on its own automatic grid of width ``h_f``
    (:class:`~dpcompose_exact.engines.subsample_grid.NoiseGridComposition`: each use's lower
    measure there costs only its own shift ``tau_f``); each of the four certified folds is
    then moved once onto the coarser grid ``h = m h_f`` of the finite part (docs/theory.md,
    section 19, "The noise composed first"):

    * **upper**: the fold's masses ``y_T`` at ``T h_f``, clipped at 0, connect the dots to
      the two coarse points around them (``(1 - e^{-x})_+`` is convex in ``e^{-L}``, so every
      hockey stick is at most the interpolation); the FFT's error ``sum |e_T| <= sqrt(n)
      ||e||_2`` and the Chernoff masses outside its window go to the leak;
    * **lower**: each mass lowered by its own error bound (``|e_T| <= ||e||_2``) and the
      window's outside mass (aliasing), those of one coarse cell ``|T h_f - I h| <= h/2``
      merged into one atom at their mean ``e^{-L}`` (Jensen: a post-processing), whose loss
      ``L*`` is at least ``I h - tau`` (one shift for the whole composition, chosen as for
      one use) or else at least ``(I - 1) h``.

    So the lower end loses ``tau_f`` per use and ``tau <= h`` once, instead of ``tau`` of the
    coarse grid per use.
    """

    def __init__(
        self, noise: Sequence[tuple[Any, int]], h_fine: Fraction, label: str = ""
    ) -> None:
        self.noise = [(m, int(n)) for m, n in noise if n]
        self.h_fine = Fraction(h_fine)
        self.comp = NoiseGridComposition(self.noise, self.h_fine, label=label or "noise")
        self.label = label
        self._measures: dict[Fraction, dict[str, Any]] = {}

    def grid_measures(self, h: Fraction, deep: bool = False) -> dict[str, Any]:
        """The four composed measures on the grid of width ``h`` (a multiple of ``h_fine``)."""
        h = Fraction(h)
        if h not in self._measures:
            ratio = h / self.h_fine
            if ratio.denominator != 1 or ratio < 1:
                raise InvalidParameterError(
                    f"the grid width {h} is not a multiple of the noise's grid {self.h_fine}"
                )
            folds = self.comp.folds
            self._measures[h] = {
                name: _rebin(folds[name], int(ratio), h, name.endswith("_up"))
                for name in ("fwd_up", "rev_up", "fwd_lo", "rev_lo")
            }
        return self._measures[h]

    def __repr__(self) -> str:
        return f"ComposedNoiseItem({self.label or 'noise'}; on grid {self.h_fine})"


def _rebin(fold: Any, m: int, h: Fraction, upper: bool) -> _Measure:
    """A certified fold of grid ``h_f`` as a lattice measure of grid ``h = m h_f`` (above)."""
    np = _numpy()
    y = np.asarray(fold.y, dtype=np.float64)
    t_idx = np.asarray(fold.T, dtype=np.int64)
    n = y.size
    err = float(fold.err2) * (1 + 1e-9)
    outside = float(fold.p_lo) + float(fold.p_hi)
    if n == 0:
        return _Measure(np.zeros(1), 0, Fraction(1) if upper else Fraction(0))
    if upper:
        if fold.shift:
            raise InvalidParameterError("an upper fold carries no shift")
        mass = np.maximum(y, 0.0)
        i = t_idx // m
        r = t_idx - i * m
        # (1 - w_r) and w_r, w_r = (1 - e^{-r h_f}) / (1 - e^{-h}), upper ends (Arb)
        keep, move = np.empty(m), np.empty(m)
        with flint.ctx.workprec(_PREC):
            hb = flint.arb(flint.fmpq(h.numerator, h.denominator))
            hfb = hb / m
            den = (-hb).expm1()
            for j in range(m):
                w = (-(hfb * j)).expm1() / den
                keep[j] = _up(1 - w) if j else 1.0
                move[j] = _up(w) if j else 0.0
        keep = np.minimum(keep, 1.0)
        move = np.minimum(move, 1.0)
        base = int(i.min())
        size = int(i.max()) - base + 2
        masses = np.bincount(i - base, weights=mass * keep[r], minlength=size)
        masses += np.bincount(i - base + 1, weights=mass * move[r], minlength=size)
        # each product and each sum rounded: at most 2m + 2 terms per cell
        masses = np.nextafter(masses * (1 + (2 * m + 8) * _U64), np.inf)
        leak = (
            Fraction(fold.leak)
            + Fraction(fold.p_lo)
            + Fraction(fold.p_hi)
            + Fraction(math.sqrt(n) * err * (1 + 1e-9))
        )
        return _Measure(masses[: size], base, min(leak, Fraction(1)))
    low = np.maximum(y - (err + outside * (1 + 1e-9)), 0.0) * (1 - 4 * _U64)
    # centred cells: |T - I m| <= m / 2
    big = (2 * t_idx + m) // (2 * m)
    d = t_idx - big * m  # in [-m/2, m/2)
    hf = float(h) / m
    base = int(big.min())
    size = int(big.max()) - base + 1
    tot = np.bincount(big - base, weights=low, minlength=size)
    xs = np.bincount(big - base, weights=low * np.exp(-d * hf), minlength=size)
    count = np.bincount(big - base, minlength=size)
    out = np.zeros(size + 1)  # index 0: the cell below the lowest
    rows = []
    for j in np.nonzero(tot > 0)[0]:
        c = int(count[j])
        # float mean of e^{-(L - I h)}: each term and sum within (c + 8) u relatively; the
        # logarithm within 2 u more; the exponent's argument within 2 u of h / 2
        rel = (2 * c + 16) * _U64
        dev = -math.log(xs[j] / tot[j]) - 2 * rel - 4 * _U64 * float(h) - 1e-300
        mass = float(tot[j]) * (1 - (c + 4) * _U64)
        if mass > 0:
            rows.append((int(j), mass, max(-dev, 0.0)))
    tau = _choose_tau([(dv, ms) for _, ms, dv in rows], float(h))
    for j, mass, dv in rows:
        out[j + 1 if dv <= tau else j] += mass  # at I, or at I - 1 (L* >= I h - h/2)
    out *= 1 - 4 * _U64  # two masses may share a point
    return _Measure(out, base - 1, Fraction(0), Fraction(fold.shift) + Fraction(tau))

