"""Finite pairs on the certified loss grid, next to the noise (no exact enumeration).

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

When the grid was coarsened for the finite part, the noise is composed first on its own
finer grid and enters as one item (:class:`ComposedNoiseItem`; section 19, "The noise
composed first"): its lower end then loses its own grid's shift per use and about one
coarse cell once, not the coarse grid's shift per use.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers.convert import parse_delta
from ..numbers.value import Value
from ..regions.pld import PLD
from .bounds import EnclosureRows
from .gridbuckets import _choose_tau
from .gridcells import DEFAULT_GRID
from .gridepsilon import _meet
from .gridmeasure import _PREC, _U64, _down, _frac, _Measure, _numpy, _up
from .gridmerged import MergedLowerItem, _neutral
from .results import Exactness
from .subsample_grid import NoiseGridComposition

__all__ = [
    "FiniteGridItem",
    "PerQueryComposition",
    "MixedGridComposition",
    "exact_size",
    "finite_grid_items",
    "grid_with_finite",
]

#: atoms of a kind's composition whose upper mass is below this go to the leak (upper) or
#: are dropped (lower)
ATOM_CUT = 1e-32
#: the composed loss's span in standard deviations, and the most grid points it may take
#: before the grid is coarsened (:func:`grid_width`)
WINDOW_SIGMAS = 30.0
FINITE_FFT = 1 << 20
#: the working precision of the kind's polynomial power (bits)
POWER_PREC = 192
#: relative widths over which an answer of the composed-noise grid gets a second look
EPS_WIDTH = Fraction(1, 10000)
DELTA_WIDTH = Fraction(1, 1000)


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


def _kind_spread(kind: FiniteKind) -> float:
    """The larger of a kind's two directions' spreads (:func:`_spread`)."""
    fwd, rev = _directions(kind)
    return max(_spread(fwd), 0.0 if rev is None else _spread(rev))


def _spread(pld: PLD) -> float:
    """The standard deviation of one use's finite loss under P (a float, to size the grid)."""
    dom = pld.domain
    pts = [
        (float(dom.loss_ball(loss, 64).mid()), float(dom.elem_ball(m, 64).mid()))
        for loss, m in pld.masses
    ]
    total = sum(m for _, m in pts)
    if total <= 0:
        return 0.0
    mean = sum(x * m for x, m in pts) / total
    return math.sqrt(max(sum((x - mean) ** 2 * m for x, m in pts) / total, 0.0))


def grid_width(
    noise: Sequence[tuple[Any, int]], finite: Sequence[tuple[FiniteKind, int]]
) -> Fraction | None:
    """The grid width for noise next to finite pairs: None (the grid's own) unless too fine.

    The composed loss spreads over about ``WINDOW_SIGMAS`` standard deviations ``sigma``
    (``sigma^2 = sum_i k_i s_i^2``, each kind's spread ``s_i``:
    :func:`~dpcompose_exact.engines.gridcells.loss_spread` for noise, the finite loss's own
    for finite pairs); the automatic width (fine at small rates) is doubled while that
    span would take more than :data:`FINITE_FFT` grid points.  A choice: every width gives
    certified bounds.
    """
    from .gridcells import auto_grid, loss_spread

    subs = [m for m, _ in noise if getattr(m, "grid_measures", None) is None]
    var = sum(n * _kind_spread(kind) ** 2 for kind, n in finite)
    var += sum(n * loss_spread(m) ** 2 for m, n in noise if m in subs)
    span = WINDOW_SIGMAS * math.sqrt(var)
    h = auto_grid(subs, DEFAULT_GRID) if subs else DEFAULT_GRID
    if span <= FINITE_FFT * float(h):
        return None
    while span > FINITE_FFT * float(h):
        h *= 2
    return h


def grid_with_finite(
    noise: Sequence[tuple[Any, int]],
    finite: Sequence[tuple[FiniteKind, int]],
    h: Fraction | None = None,
    label: str = "",
) -> Any:
    """The noise items and the finite kinds on one certified loss grid (section 19).

    Args:
        noise: ``[(noise item, count), ...]`` as the loss grid composes them.
        finite: ``[(kind, count), ...]``: a symmetric pair's PLD, or an asymmetric pair's
            ``(forward, reverse)`` PLDs.
        h: the grid width (None: :func:`grid_width`).
        label: what was composed, for ``repr``.
    """
    chosen = h is None
    if h is None:
        h = grid_width(noise, finite)
    finite_items = finite_grid_items(finite, h, DEFAULT_GRID)
    per_use = list(noise) + finite_items
    from .gridcells import SPREAD_CELLS, auto_grid, loss_spread

    subs = [m for m, _ in noise if getattr(m, "grid_measures", None) is None]
    narrow = any(loss_spread(m) < SPREAD_CELLS * float(h) for m in subs) if h else False
    if chosen and narrow and sum(n for _, n in noise) > 1:
        # the grid was coarsened for the finite part, and one noise use spans fewer cells
        # of it than the automatic grid asks for: the noise is composed first on its own
        # grid and moved once (its lower end then loses tau_f per use, not tau of the
        # coarse grid per use); the per-use grid stays the second look (section 19)
        try:
            composed = ComposedNoiseItem(noise, auto_grid(subs, DEFAULT_GRID))
        except ResourceLimitError:
            composed = None
        if composed is not None and h > composed.h_fine and (h / composed.h_fine).denominator == 1:
            return MixedGridComposition(
                [(composed, 1), *finite_items], h, label,
                fallback=lambda: MixedGridComposition(per_use, h, label),
            )
    return MixedGridComposition(per_use, h, label)


class MixedGridComposition(NoiseGridComposition):
    """Noise and finite pairs on one certified loss grid (two-sided bounds).

    ``fallback``: builds a second composition of the same
    list (the noise use by use on this grid), asked only when an answer here is relatively
    wider than the box's goal (:data:`EPS_WIDTH`, :data:`DELTA_WIDTH`); both enclose the
    same number, so their intersection is returned.
    """

    def __init__(
        self,
        kinds: Sequence[tuple[Any, int]],
        h: Fraction | None = None,
        label: str = "",
        fallback: Callable[[], MixedGridComposition] | None = None,
    ) -> None:
        super().__init__(kinds, h, label)
        self._fallback = fallback
        self._second: MixedGridComposition | None = None

    def _second_look(
        self, first: Callable[[], Value], width: Fraction, ask: Callable[[Any], Value]
    ) -> Value:
        """``first()``, met with the fallback's answer when relatively wider than ``width``.

        The fallback's answer alone when ``first`` is refused (beyond its grid).
        """
        if self._fallback is None:
            return first()
        try:
            v: Value | None = first()
        except ResourceLimitError:
            v = None
        if v is not None:
            lo, hi = (_frac(x) for x in v.ends())
            if hi - lo <= width * hi:
                return v
        try:
            if self._second is None:
                self._second = self._fallback()
            other = ask(self._second)
        except ResourceLimitError:
            if v is None:
                raise
            return v
        return other if v is None else _meet(v, other)

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """An enclosure of ``eps(delta)`` (the second look when wide)."""
        if isinstance(delta, (list, tuple)):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        return self._second_look(
            lambda: super(MixedGridComposition, self).epsilon(delta),
            EPS_WIDTH,
            lambda c: c.epsilon(delta),
        )

    def delta(self, eps: Any) -> Value | list[Value]:
        """An enclosure of ``delta(eps)`` (the second look when wide)."""
        if isinstance(eps, (list, tuple)):
            return [self.delta(e) for e in eps]  # type: ignore[misc]
        return self._second_look(
            lambda: super(MixedGridComposition, self).delta(eps),
            DELTA_WIDTH,
            lambda c: c.delta(eps),
        )

    def _pure_epsilon(self) -> Any:
        raise InvalidParameterError(
            "delta = 0: a list of noise and finite pairs is answered on a loss grid for "
            "delta in (0, 1); give a delta in (0, 1)"
        )

    def describe(self) -> str:
        """``"certified bounds (loss grid, finite pairs on it), two directions"``."""
        return "certified bounds (loss grid, finite pairs on it), two directions"

    def __repr__(self) -> str:
        return f"MixedGridComposition({self.label or 'noise and finite pairs'}; bounds)"


class PerQueryComposition(EnclosureRows):
    """One list, two routes: ``eps(delta)`` with the finite part enumerated, the rest on the grid.

    Args:
        grid: builds the :class:`MixedGridComposition` of the list (when first asked).
        exact: builds the list with its finite part composed exactly
            (:class:`~dpcompose_exact.engines.mixed.MixedComposition`), which answers
            ``eps(delta)``; refused (a resource limit), the grid answers.
        label: what was composed, for ``repr``.

    Both enclose the same numbers (docs/theory.md, section 19, "The finite part on the loss
    grid"): each query goes where it is cheaper.  Anything else is the grid's.
    """

    kind = Exactness.BOUNDS
    no_list = "a composition with noise mechanisms has no single constraint list"

    def __init__(
        self, grid: Callable[[], Any], exact: Callable[[], Any], label: str = ""
    ) -> None:
        self._make_grid, self._make_exact = grid, exact
        self._grid: Any = None
        self._exact: Any = None
        self.label = label

    def grid(self) -> Any:
        """The grid composition (built once)."""
        if self._grid is None:
            self._grid = self._make_grid()
        return self._grid

    def delta(self, eps: Any) -> Value | list[Value]:
        """An enclosure of ``delta(eps)`` on the grid."""
        return self.grid().delta(eps)  # type: ignore[no-any-return]

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """An enclosure of ``eps(delta)`` with the finite part enumerated (else the grid's).

        ``delta`` outside ``(0, 1)`` is the grid's to refuse (with what to give instead).
        """
        if isinstance(delta, (list, tuple)):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        d = delta if isinstance(delta, Fraction) else parse_delta(delta)
        if self._make_exact is not None and 0 < d < 1:
            try:
                if self._exact is None:
                    self._exact = self._make_exact()
                return self._exact.epsilon(d)  # type: ignore[no-any-return]
            except ResourceLimitError:
                self._make_exact = None  # type: ignore[assignment]
        return self.grid().epsilon(d)  # type: ignore[no-any-return]

    def describe(self) -> str:
        """How the answers are computed, in a few words."""
        return (
            "certified bounds (loss grid, finite pairs on it; eps(delta) with the finite "
            "part enumerated), two directions"
        )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.grid(), name)

    def __repr__(self) -> str:
        return f"PerQueryComposition({self.label or 'noise and finite pairs'}; bounds)"
