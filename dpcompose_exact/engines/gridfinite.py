"""Finite pairs as items of the certified loss grid, next to the noise (no exact enumeration).

The exact finite part of a mixed list (:mod:`~dpcompose_exact.engines.mixed`) enumerates
every loss value of the composition of its kinds: a product over the kinds, far too large
at counts of ``10^4``.  Here each kind instead becomes an item of the loss grid of
:class:`~dpcompose_exact.engines.subsample_grid.NoiseGridComposition`, with the four lattice
measures of section 15 (docs/theory.md, section 19, "The finite part on the loss grid"):

* **the kind's losses**: the losses of one use lie on a line ``t s`` (``t`` an integer,
  ``s`` the kind's loss step), so ``n`` uses have at most ``n (t_max - t_min) + 1`` loss
  values, the coefficients of ``P(x)^n``, ``P(x) = sum_t p_t x^t`` (one Arb polynomial
  power; the leak is ``1 - (1 - lambda)^n``).  When ``s`` is a rational multiple of the
  grid width every loss is a grid point: one use is the item and the grid's FFT power
  composes the ``n`` uses, exactly placed.  Otherwise the ``n`` uses are composed here and
  placed once (a kind whose losses are on no line is placed use by use);
* **upper measures** (connect the dots): an atom of P-mass ``a`` at the loss ``L = i h +
  t``, ``0 <= t <= h``, is the two-point pair with ratios ``e^{ih}`` and ``e^{(i+1)h}`` and
  P-masses ``a (1 - w)`` and ``a w``, ``w = (1 - e^{-t}) / (1 - e^{-h})``, of which the atom
  is a post-processing; masses are upper ends, the atoms of upper mass below
  :data:`ATOM_CUT` go to the leak (loss ``+inf``);
* **lower measures**: each atom at the grid point at or below its loss, with the lower
  end of its mass (the hockey-stick ``E_P[(1 - e^{eps - L})_+]`` is non-decreasing in
  every use's loss and in every mass); the atoms below the cut are dropped.

A symmetric pair has the same loss distribution in both directions, so the reverse
measures are the forward ones.  An asymmetric pair (an exactly subsampled mechanism,
``(forward, reverse)``) places each direction's atoms in that direction's measures: the
forward loss ``ln(A/B)`` under ``A`` in the forward ones, the reverse loss ``ln(B/A)``
under ``B`` in the reverse ones, as the noise's directions are (section 19, "Asymmetric
pairs on the grid").

The items are composed with the noise, and the grid's width chosen for them, by
:mod:`~dpcompose_exact.engines.gridmixed`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError
from ..regions.pld import PLD
from .gridmeasure import _PREC, _U64, _down, _frac, _Measure, _numpy, _up
from .gridmerged import MergedLowerItem, _neutral

__all__ = [
    "FiniteGridItem",
    "exact_size",
    "finite_grid_items",
]

#: atoms of a kind's composition whose upper mass is below this go to the leak (upper) or
#: are dropped (lower)
ATOM_CUT = 1e-32
#: the working precision of the kind's polynomial power (bits)
POWER_PREC = 192


def _loss_step(pld: PLD) -> tuple[tuple[int, ...], list[int]] | None:
    """``(u, [t_1, ...])`` with every loss ``t_j u`` (``u`` a loss vector), or None.

    ``u`` is the primitive vector of the first non-zero loss divided further by the gcd of
    the multiples, so the ``t_j`` are coprime integers.
    """
    losses = [tuple(int(x) for x in loss) for loss, _ in pld.masses]
    first = next((v for v in losses if any(v)), None)
    if first is None:
        return (tuple(0 for _ in losses[0]) if losses else (), [0] * len(losses))
    g = 0
    for x in first:
        g = math.gcd(g, x)
    u = tuple(x // g for x in first)
    lead = next(i for i, x in enumerate(u) if x)
    ts = []
    for v in losses:
        t, rem = divmod(v[lead], u[lead])
        if rem or any(v[i] != t * u[i] for i in range(len(u))):
            return None
        ts.append(t)
    d = 0
    for t in ts:
        d = math.gcd(d, t)
    d = d or 1
    return tuple(x * d for x in u), [t // d for t in ts]


def _exact_loss(pld: PLD, loss: tuple[int, ...]) -> Fraction | None:
    """A loss as a rational, or None when it has a logarithm."""
    form = pld.domain.form(loss)
    return None if form.logs else Fraction(form.rational)


def _rational_step(pld: PLD, u: tuple[int, ...]) -> Fraction | None:
    """The loss ``u`` as a rational, or None when it has a logarithm."""
    form = pld.domain.form(u)
    return None if form.logs else Fraction(form.rational)


#: a finite kind: a symmetric pair's PLD, or an asymmetric pair's ``(forward, reverse)``
FiniteKind = PLD | tuple[PLD, PLD]


def _directions(kind: FiniteKind) -> tuple[PLD, PLD | None]:
    """``(forward, reverse)`` of a finite kind (reverse None: symmetric)."""
    if isinstance(kind, PLD):
        return kind, None
    fwd, rev = kind
    return fwd, (None if rev is fwd else rev)


def _one_size(pld: PLD, n: int) -> int:
    line = _loss_step(pld)
    if line is not None:
        ts = line[1]
        return n * (max(ts) - min(ts)) + 1 if ts else 1
    a = len(pld.masses)
    return math.comb(n + a - 1, a - 1)


def exact_size(kinds: Sequence[tuple[FiniteKind, int]]) -> int:
    """An upper bound of the number of loss values of the exact composition of ``kinds``.

    A kind on a line (:func:`_loss_step`) has at most ``n (t_max - t_min) + 1`` loss values
    after ``n`` uses; any other at most ``C(n + a - 1, a - 1)`` (``a`` its loss values);
    the composition has at most their product.  With asymmetric kinds (``(forward,
    reverse)``) each direction is composed on its own: the larger direction's product.
    """
    totals = [1, 1]
    for kind, n in kinds:
        if not n:
            continue
        fwd, rev = _directions(kind)
        for i, pld in enumerate((fwd, fwd if rev is None else rev)):
            totals[i] *= _one_size(pld, n)
    return max(totals)


class FiniteGridItem:
    """``uses`` uses of a finite pair as one item of the loss grid.

    Args:
        pld: the pair of one use: symmetric, its canonical pair (P-masses at finite losses,
            a leak); asymmetric, its forward direction (the loss ``ln(A/B)`` under ``A``).
        uses: how many uses this item stands for (1: the grid's FFT power composes them).
        label: a title for ``repr``.
        reverse: an asymmetric pair's reverse direction (the loss ``ln(B/A)`` under ``B``);
            None for a symmetric pair.
        lower: False: the lower measures are the unit mass at loss 0 (the neutral element
            of composition), the uses' lower measures being given merged by a
            :class:`~dpcompose_exact.engines.gridmerged.MergedLowerItem` next to it.

    ``grid_measures(h, deep)`` gives the four lattice measures of the module docstring,
    kept per grid width.
    """

    def __init__(
        self, pld: PLD, uses: int = 1, label: str = "", reverse: PLD | None = None,
        lower: bool = True,
    ) -> None:
        if uses < 1:
            raise InvalidParameterError(f"uses = {uses} must be >= 1")
        self.pld = pld
        self.reverse = reverse
        self.lower = lower
        self.uses = int(uses)
        self.label = label
        self._measures: dict[Fraction, dict[str, Any]] = {}

    def atoms(
        self, direction: str = "fwd"
    ) -> tuple[list[tuple[Fraction | None, flint.arb, flint.arb]], flint.arb, flint.arb]:
        """``([(exact loss, loss, mass), ...], leak, dropped)`` of the ``uses``-fold composition.

        Losses and masses are balls; ``exact loss`` is the loss as a rational when it is one
        (else None), so that a loss on a grid point is placed there exactly.

        ``dropped``: a ball above the total mass of the atoms left out (each of upper mass
        below :data:`ATOM_CUT`).  A pair whose losses are on no line is composed only for
        ``uses = 1``.  ``direction``: ``"rev"`` for an asymmetric pair's reverse direction.
        """
        pld = self.reverse if direction == "rev" and self.reverse is not None else self.pld
        n = self.uses
        dom = pld.domain
        prec = POWER_PREC
        with flint.ctx.workprec(prec):
            leak1 = dom.elem_ball(pld.leak, prec)
            leak = 1 - (1 - leak1) ** n if n > 1 else leak1
            line = _loss_step(pld) if n > 1 else None
            if n > 1 and line is None:
                raise InvalidParameterError(
                    f"{self.label or 'a finite pair'}: its losses lie on no line; it enters "
                    "the grid one use at a time"
                )
            if line is None:
                pairs = [
                    (_exact_loss(pld, loss), dom.loss_ball(loss, prec), dom.elem_ball(m, prec))
                    for loss, m in pld.masses
                ]
            else:
                u, ts = line
                step = dom.loss_ball(u, prec)
                exact = _rational_step(pld, u)
                lo = min(ts)
                coeffs = [flint.arb(0)] * (max(ts) - lo + 1)
                for t, (_, m) in zip(ts, pld.masses):
                    coeffs[t - lo] += dom.elem_ball(m, prec)
                poly = flint.arb_poly(coeffs) ** n if n > 1 else flint.arb_poly(coeffs)
                base = n * lo
                pairs = [
                    (
                        None if exact is None else exact * (base + j),
                        step * (base + j),
                        poly[j],
                    )
                    for j in range(poly.degree() + 1)
                ]
            kept, dropped = [], flint.arb(0)
            cut = flint.arb(ATOM_CUT)
            for exact_loss, loss, m in pairs:
                if m.upper() < cut:
                    dropped += m.upper()
                else:
                    kept.append((exact_loss, loss, m))
            return kept, leak, dropped

    def grid_measures(self, h: Fraction, deep: bool = False) -> dict[str, Any]:
        """The four lattice measures on the grid of width ``h`` (``deep`` is not used)."""
        h = Fraction(h)
        if h not in self._measures:
            placed = _place(*self.atoms(), h)
            if self.reverse is not None:  # asymmetric: each direction its own atoms
                rev = _place(*self.atoms("rev"), h)
                placed = {**placed, "rev_up": rev["fwd_up"], "rev_lo": rev["fwd_lo"]}
            if not self.lower:
                placed = {**placed, "fwd_lo": _neutral(), "rev_lo": _neutral()}
            self._measures[h] = placed
        return self._measures[h]

    def __repr__(self) -> str:
        what = self.label or "finite pair"
        return f"FiniteGridItem({what} x{self.uses})"


def _place(
    atoms: list[tuple[Fraction | None, flint.arb, flint.arb]],
    leak: flint.arb,
    dropped: flint.arb,
    h: Fraction,
) -> dict[str, Any]:
    """Upper (connect the dots) and lower (rounded down) measures of the atoms on the grid.

    An atom with a rational loss on a grid point is placed there, whole, in both.
    """
    np = _numpy()
    up: dict[int, flint.arb] = {}
    down: dict[int, flint.arb] = {}
    with flint.ctx.workprec(_PREC):
        hb = flint.arb(flint.fmpq(h.numerator, h.denominator))
        den = (-hb).expm1()  # e^{-h} - 1 < 0
        for exact, loss, m in atoms:
            m_hi, m_lo = m.upper(), m.lower()
            if exact is not None and (exact / h).denominator == 1:
                i = int(exact / h)
                up[i] = up.get(i, flint.arb(0)) + m_hi
                if m_lo > 0:
                    down[i] = down.get(i, flint.arb(0)) + m_lo
                continue
            i = math.floor(_frac(loss) / h)
            t = loss - i * hb
            if t.upper() > hb:
                i += 1
                t = loss - i * hb
            if t.lower() < -hb or t.upper() > hb:
                raise InvalidParameterError(f"a loss ball {loss} is wider than the grid step {h}")
            w = (-t).expm1() / den  # (1 - e^{-t}) / (1 - e^{-h}), in [0, 1] for t in [0, h]
            w_hi = w.upper() if w.upper() < 1 else flint.arb(1)
            w_lo = w.lower() if w.lower() > 0 else flint.arb(0)
            up[i] = up.get(i, flint.arb(0)) + m_hi * (1 - w_lo)
            if w_hi > 0:
                up[i + 1] = up.get(i + 1, flint.arb(0)) + m_hi * w_hi
            # lower: the grid point at or below the loss (certainly), the mass's lower end
            j = i if t.lower() >= 0 else i - 1
            if m_lo > 0:
                down[j] = down.get(j, flint.arb(0)) + m_lo
        leak_up = _frac((leak.upper() + dropped.upper()).upper())
        leak_up = min(max(leak_up, Fraction(0)), Fraction(1))

        def measure(cells: dict[int, flint.arb], upper: bool, leak_end: Fraction) -> _Measure:
            if not cells:
                return _Measure(np.zeros(1), 0, leak_end)
            lo, hi = min(cells), max(cells)
            arr = np.zeros(hi - lo + 1)
            for i, x in cells.items():
                arr[i - lo] = _up(x) if upper else _down(x)
            if not upper:
                arr *= 1 - 4 * _U64
            return _Measure(arr, lo, leak_end)

        fwd_up = measure(up, True, leak_up)
        fwd_lo = measure(down, False, Fraction(0))
    # symmetric: the reverse loss has the forward loss's distribution
    rev_up = _Measure(fwd_up.masses, fwd_up.offset, fwd_up.leak)
    rev_lo = _Measure(fwd_lo.masses, fwd_lo.offset, Fraction(0))
    return {"fwd_up": fwd_up, "rev_up": rev_up, "fwd_lo": fwd_lo, "rev_lo": rev_lo}



def finite_grid_items(
    finite: Sequence[tuple[FiniteKind, int]], h: Fraction | None, default: Fraction
) -> list[tuple[FiniteGridItem, int]]:
    """``[(item, count), ...]`` for the grid: one use per item where that is exactly placed.

    A kind whose loss step is a rational multiple of the grid width (``h``, or ``default``
    when the grid chooses its own: every automatic width divides it) enters as one use with
    its count (the grid's FFT power composes the uses); any other kind on a line as one item
    of all its uses (count 1); a kind on no line use by use, its lower measures those of
    one :class:`~dpcompose_exact.engines.gridmerged.MergedLowerItem` of all such kinds
    (count 1).  An asymmetric kind (``(forward, reverse)``) asks this of both directions.
    """
    grid = Fraction(h) if h is not None else Fraction(default)
    out: list[Any] = []
    merged: list[tuple[FiniteGridItem, int]] = []
    for kind, n in finite:
        if not n:
            continue
        fwd, rev = _directions(kind)
        both = (fwd,) if rev is None else (fwd, rev)
        lines = [(pld, _loss_step(pld)) for pld in both]
        label = f"finite pair with {len(fwd.masses)} loss values"
        if rev is not None:
            label = f"asymmetric {label}"
        if any(line is None for _, line in lines):
            if n == 1:
                out.append((FiniteGridItem(fwd, 1, label, rev), n))
            else:  # upper use by use; the lower measures of all such kinds merged once
                item = FiniteGridItem(fwd, 1, label, rev, lower=False)
                out.append((item, n))
                merged.append((item, n))
            continue
        steps = [_rational_step(pld, line[0]) for pld, line in lines]  # type: ignore[index]
        if all(step is not None and (step / grid).denominator == 1 for step in steps):
            out.append((FiniteGridItem(fwd, 1, label, rev), n))
        else:
            out.append((FiniteGridItem(fwd, n, label, rev), 1))
    if merged:
        out.append((MergedLowerItem(merged), 1))
    return out
