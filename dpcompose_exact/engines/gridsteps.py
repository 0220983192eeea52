"""The loss grid of one use of subsampled noise: its width and the points where it is evaluated.

One use of Poisson-subsampled (or replace-one) Gaussian or Laplace noise has a privacy loss
``L(x) = ln(1 - q + q e^{beta(x)})`` non-decreasing in the output ``x`` (docs/theory.md,
section 15), so a loss grid of width ``h`` is a set of outputs.  This module only places the
grid, in floats (any grid gives certified bounds): its width (:func:`auto_grid`, finer where
one use's loss spread covers few cells; :func:`align_grid`, Laplace's two loss atoms on grid
points; :func:`uses_grid`, coarser where many uses outgrow the FFT, the grid's error being
second order in ``h``: section 15, "Many uses"), its index range (:func:`_loss_index_range`,
the tails cut where their mass is below ``e^tail_log``) and its points (:func:`_grid_points`,
every index in the bulk, graded cells beyond: section 15, "Graded cells").  The cell masses
on these points are :mod:`~dpcompose_exact.engines.gridcells`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..errors import ResourceLimitError
from ..mechanisms.noise import AdditiveNoise, SubsampledNoise
from .gridfold import WINDOW_MASS

__all__ = ["DEFAULT_GRID", "auto_grid", "noise_x", "uses_grid"]

#: the loss grid width (dp_accounting's default value_discretization_interval is 1e-4)
DEFAULT_GRID = Fraction(1, 10000)
#: mass of one use's tail beyond the grid (it goes to the leak of the upper bound)
TAIL_MASS = 1e-20
#: beyond the loss where one use's tail mass is below this, cells widen geometrically
FINE_MASS = 1e-14
#: the widest cell of a tail, in grid steps
MAX_STRIDE = 256
#: the lower tail of subsampled Gaussian noise (rate below 1, graded grids) widens
#: geometrically below the output where one use's B-mass below is about e^LOW_GRADE_LOG
#: (its loss piles up near ln(1 - q), where every cell is needed, far above this mass)
LOW_GRADE_LOG = -70.0
#: cells of 2 grid steps where one use's A-mass beyond is below this, 4 below this times
#: GRADE_RATIO, ... (the default grid; the deep grid is not graded)
GRADE_MASS = 1e-2
GRADE_RATIO = 1e-1
#: the deep grid (tiny deltas, :class:`~.gridtilt._Tilted`): the log of its tail mass,
#: its widest tail cell
DEEP_TAIL_LOG = -306 * math.log(10)  # the smallest cells stay normal doubles
DEEP_MAX_STRIDE = 4
#: the deep grid's buckets: a bucket that a whole cell this many steps above its aim cannot
#: lift there is closed and rounded (:func:`~.gridbuckets._sweep`)
DEEP_SPAN = 2
#: the automatic grid (:func:`auto_grid`): one use's loss spread covers at least this many
#: cells, halving the width from DEFAULT_GRID down to MIN_GRID, while one use's grid spans
#: at most AUTO_MAX_CELLS cells
SPREAD_CELLS = 32
MIN_GRID = Fraction(1, 10000 * 2**7)
AUTO_MAX_CELLS = 1 << 21
#: most grid points (distribution-function evaluations) of one use
MAX_GRID_POINTS = 4_000_000
#: most grid cells (indices from the lowest to the highest point) of one use
MAX_GRID_CELLS = 50_000_000


def _loss_index_range(
    sub: SubsampledNoise, h: Fraction, tail_log: float = math.log(TAIL_MASS)
) -> tuple[int, int, bool, bool]:
    """Grid indices ``(lo, hi)`` and whether each end cuts a tail (else it bounds the loss).

    A Gaussian's grid ends where the tails are below ``e^tail_log`` (a float estimate: the
    exact masses beyond are computed and go to the leak).
    """
    if _monotone(sub):
        return _monotone_range(sub, h, tail_log)
    noise, q = sub.noise, sub.q
    br = noise.beta_range()
    hf = float(h)
    if br is not None:  # Laplace: the loss lies in [L(-s/b), L(s/b)]
        lo = math.floor(_loss_float(q, _clamped(br[0])) / hf) - 2
        hi = math.ceil(_loss_float(q, _clamped(br[1])) / hf) + 2
        return lo, hi, False, False
    # Gaussian: cut where the A- (upper) and B- (lower, q = 1 only) tails are below TAIL_MASS
    z = math.sqrt(-2 * tail_log) + 0.5
    hi = math.ceil(_loss_float(q, _beta_float(noise, noise_x(noise, z, True))) / hf) + 1
    if q < 1:
        lo = math.floor(math.log1p(-float(q)) / hf) - 2
        return lo, hi, False, True
    lo = math.floor(_beta_float(noise, noise_x(noise, z, False)) / hf) - 1
    return lo, hi, True, True


def loss_spread(sub: SubsampledNoise) -> float:
    """A float scale of one use's privacy loss (to choose the grid width only).

    Under ``B = Q`` the loss is ``ln(1 + q (e^beta - 1))``, about ``q (e^beta - 1)`` for a
    small rate: its standard deviation is ``q sqrt(e^{s^2/sigma^2} - 1)`` for the Gaussian
    (``beta ~ N(-s^2/(2 sigma^2), s^2/sigma^2)``), about ``q sinh(s/b)`` for Laplace (``beta``
    in ``[-s/b, s/b]``); never more than the base loss's own spread (``s/sigma``, ``s/b``).
    """
    if _monotone(sub):
        return sub.spread_float()
    # the ratio s / sigma exactly, then capped: a float of each end alone can overflow or
    # vanish (a scale of 1e-400 or 1e400) where the ratio itself is a fine double
    exact = Fraction(sub.noise.shift) / Fraction(sub.noise.scale)
    q, ratio = float(sub.q), (1e300 if exact > 10**300 else float(exact))
    if sub.noise.kind == "gaussian":
        wide = math.sqrt(math.expm1(min(ratio * ratio, 700.0)))
    else:
        wide = math.sinh(min(ratio, 700.0))
    return min(q * wide, ratio)


def auto_grid(subs: list[SubsampledNoise], h: Fraction = DEFAULT_GRID) -> Fraction:
    """The grid width for a composition of these kinds: ``h``, finer where a loss is narrow.

    A bucket of the lower measure spans up to about ``2h`` of loss (docs/theory.md,
    section 15), so a use whose whole loss spread is a few cells (a small rate ``q``: the
    spread is about ``q``) loses its information in the buckets, and its upper measure
    moves every use's loss by up to ``h``.  The width is halved until every kind's spread
    (:func:`loss_spread`) covers :data:`SPREAD_CELLS` cells, down to :data:`MIN_GRID` and
    while one use's grid spans at most :data:`AUTO_MAX_CELLS` cells (the deep grid of tiny
    deltas keeps ``h``).  A choice: every width gives certified bounds.
    """
    # an item that builds its own measures (a random allocation's epoch) keeps the grid
    subs = [sub for sub in subs if getattr(sub, "grid_measures", None) is None]
    if not subs:
        return h
    spread = min(loss_spread(sub) for sub in subs)
    tail, most = math.log(TAIL_MASS), AUTO_MAX_CELLS
    while h / 2 >= MIN_GRID and spread < SPREAD_CELLS * float(h):
        finer = h / 2
        spans = (_loss_index_range(sub, finer, tail) for sub in subs)
        if any(r[1] - r[0] > most for r in spans):
            break
        h = finer
    return h


#: :func:`align_grid` tries the widths ``L+ / m`` for ``m`` within this factor of ``L+ / h``
#: (both ways), at most ALIGN_TRIES of them
ALIGN_SPAN = 1.25
ALIGN_TRIES = 4096
#: ... and up to this many cells per ``L+`` however wide ``h`` is, while the composition
#: stays small (its FFT window about ALIGN_FFT cells): a few uses are cheap on a finer grid
ALIGN_CELLS = 256
#: ... and never finer than this (``h^2`` stays a normal double)
ALIGN_FLOOR = 2.0**-500
ALIGN_FFT = 1 << 18
#: the composed loss's FFT window in standard deviations: ``2 sqrt(2 ln(1 / WINDOW_MASS))``
#: (the Gaussian tails beyond it hold WINDOW_MASS each, :func:`~.gridfold._window`)
ALIGN_WINDOW = 2 * math.sqrt(2 * math.log(1 / WINDOW_MASS))


def align_grid(subs: list[Any], h: Fraction, uses: int = 1) -> Fraction:
    """A width near ``h`` with subsampled Laplace's two loss atoms (nearly) on grid points.

    One use of Laplace noise of scale ``b`` (sensitivity ``s``, ``eps0 = s / b``) at rate
    ``q`` has atoms at its largest loss ``L+ = log(1 + q (e^{eps0} - 1))`` (``x >= s``) and
    its smallest ``L- = log(1 + q (e^{-eps0} - 1))`` (``x <= 0``) carrying most of its mass
    (docs/theory.md, section 15).  The lower measures put an atom at the grid point at or
    below its loss (forward; at or above in the reverse direction), so an atom off the grid
    loses up to ``h`` on every use.  The width returned is ``L+ / m`` (a double just below
    it, as an exact rational), ``m`` within :data:`ALIGN_SPAN` of ``L+ / h`` (or up to
    :data:`ALIGN_CELLS` when ``uses``, the composition's count, keeps it small), the one whose
    ``-L- / h'`` is nearest an integer from above: both atoms are then grid points up to a
    fraction of ``h'`` (forward: ``L+ >= m h'``; reverse: ``-L- >= m' h'``).  Only when the
    kinds hold exactly one Laplace pair (rate and scale); else ``h``.  A choice: every width
    gives certified bounds (each atom's certified loss is what the measures read).
    """
    atoms, laplace = set(), None
    for sub in subs:
        noise = getattr(sub, "noise", None)
        eps0 = getattr(noise, "eps0", None)
        if eps0 is None:
            if getattr(sub, "grid_measures", None) is not None:
                return h  # an item with its own measures keeps the grid
            continue
        atoms.add((eps0, sub.q))
        laplace = sub
    if len(atoms) != 1:
        return h
    eps0, q = next(iter(atoms))
    if eps0 > 700:  # a loss beyond doubles: nothing to align
        return h
    top = math.log1p(float(q) * math.expm1(float(eps0)))
    bot = -math.log1p(float(q) * math.expm1(-float(eps0)))
    if not (top > 0 and bot > 0):
        return h
    m0 = top / float(h)
    lo = max(1, math.ceil(m0 / ALIGN_SPAN))
    # finer widths (up to ALIGN_CELLS cells per L+) while the composed loss's window, about
    # ALIGN_WINDOW sqrt(uses) spreads of one use (loss_spread), stays within ALIGN_FFT cells
    spread = max(loss_spread(laplace), 1e-300)
    cheap = int(ALIGN_FFT * top / (ALIGN_WINDOW * math.sqrt(max(uses, 1)) * spread))
    hi = max(math.floor(m0 * ALIGN_SPAN), min(ALIGN_CELLS, cheap))
    hi = min(hi, lo + ALIGN_TRIES, math.floor(top / ALIGN_FLOOR))
    # (never finer than ALIGN_FLOOR: a loss of 1e-300 aligned on its own width would leave
    # the doubles that place the grid; an atom within one cell of 0 needs no alignment)
    best_m, best = 0, math.inf
    for m in range(lo, hi + 1):
        frac = (bot * m / top) % 1.0
        if frac < best - 1e-9:
            best_m, best = m, frac
    if not best_m:
        return h
    return Fraction(top / best_m * (1 - 1e-12))


#: many uses (:func:`uses_grid`): the composed loss's FFT window, about ALIGN_WINDOW
#: standard deviations of the loss sum, is held within this many cells by the widths
#: ``h 2^j`` (the discretisation's width, second order in ``h``, is then relatively about
#: ``(ALIGN_WINDOW / USES_FFT)^2 k / 2``: ``4.6e-5`` at ``k = 10^6``)
USES_FFT = 1 << 21
#: ... only for compositions of at least USES_MIN uses (a few uses of a wide loss are bound
#: by one use's grid, whose limits name the width), and at most USES_COARSEN times 1e-4
USES_MIN = 1000
USES_COARSEN = 1 << 10


def uses_grid(subs: list[Any], h: Fraction, counts: list[int]) -> Fraction:
    """``h 2^j``, the finest with the composed loss's window within :data:`USES_FFT` cells.

    The composed loss of ``k`` uses has a standard deviation of about ``sqrt(k)`` times one
    use's (:func:`loss_spread`; ``sqrt(sum k_m s_m^2)`` over the kinds), and the folds'
    window spans about :data:`ALIGN_WINDOW` of them.  At many uses and a wide loss
    (``k = 405028``, ``sigma = 0.785``, ``q = 0.112``: about 2700 loss units, 27M cells
    of ``10^-4``) the folds at ``h`` outgrow the FFT, while the grid's error is second
    order in the width: the lattice moves each use's cumulant generating function by
    ``O(h^2)``, so ``eps(delta)`` by about ``k h^2`` times a constant, against ``eps``
    itself about ``k s^2 / 2`` (the mean of the loss sum, half its variance): a relative
    ``(h / s)^2``, whatever ``k``.  So the width is doubled until the window fits
    (docs/theory.md, section 15, "Many uses").  A choice: every width gives certified
    bounds.  Only from :data:`USES_MIN` uses on, and at most :data:`USES_COARSEN` times
    ``h``; items that build their own measures keep ``h``.
    """
    if sum(counts) < USES_MIN or any(
        getattr(sub, "grid_measures", None) is not None for sub in subs
    ):
        return h
    var = sum(n * loss_spread(sub) ** 2 for sub, n in zip(subs, counts))
    window, most = ALIGN_WINDOW * math.sqrt(var), h * USES_COARSEN
    while window > USES_FFT * float(h) and h < most:
        h *= 2
    return h


def noise_x(noise: AdditiveNoise, z: float, upper: bool) -> float:
    """The output ``z`` standard deviations above the shifted (below the unshifted) centre."""
    sig, s = float(noise.scale), float(noise.shift)
    return s + z * sig if upper else -z * sig


def _beta_float(noise: AdditiveNoise, x: float) -> float:
    sig, s = float(noise.scale), float(noise.shift)
    try:
        beta = (2 * s * x - s * s) / (2 * sig * sig)
    except (ZeroDivisionError, OverflowError):
        beta = math.inf
    if not math.isfinite(beta):  # (s / sigma)^2 past the doubles: no loss grid holds it
        raise ResourceLimitError(
            f"{noise!r}: one use's privacy loss spans about (sensitivity/scale)^2, "
            "beyond what a loss grid can hold (sensitivity/scale up to about 1e150); "
            "one use alone has a closed form"
        )
    return beta


def _clamped(x: Fraction) -> float:
    """``x`` as a double, held within ``[-1e300, 1e300]``.

    An exact end past the doubles (a Laplace scale of 1e-400) still places a grid, which is
    then refused by its size.
    """
    if abs(x) > 10**300:
        return 1e300 if x > 0 else -1e300
    return float(x)


def _loss_float(q: Fraction, beta: float) -> float:
    """``ln(1 - q + q e^beta)`` in floats (to place the grid only)."""
    qf = float(q)
    if beta > 30:
        return beta + math.log(qf) + math.log1p((1 - qf) / qf * math.exp(-beta))
    return math.log1p(qf * math.expm1(beta))


def _count(n: int) -> str:
    """A count in full, or in short form past 15 digits (a grid of 5e+203 cells)."""
    return str(n) if n < 10**15 else f"{n:.3g}"


def _check_grid_size(sub: SubsampledNoise, h: Fraction, lo: int, hi: int, points: int) -> None:
    """Refuse, before any list is made, a grid over :data:`MAX_GRID_POINTS` or ``_CELLS``.

    Raises:
        ResourceLimitError: the message gives the grid's size, its limit and the way out.
    """
    cells = hi - lo
    if points <= MAX_GRID_POINTS and cells <= MAX_GRID_CELLS:
        return
    raise ResourceLimitError(
        f"the loss grid of {sub!r} (width h = {h}) spans the losses {float(lo * h):.6g} to "
        f"{float(hi * h):.6g}: "
        f"{_count(cells)} cells and about {_count(points)} points, over the limits of "
        f"{MAX_GRID_CELLS} cells "
        f"and {MAX_GRID_POINTS} points; use more noise or a coarser grid "
        "(compose_noise(..., h=...))"
    )


def _tail_points(span: int, stride: int = MAX_STRIDE) -> int:
    """Points of a tail of ``span`` cells at strides doubling up to ``stride`` (a bound)."""
    return 0 if span <= 0 else 10 + -(-span // stride)


def _upper_tail_index(sub: SubsampledNoise, h: float, lo: int, hi: int, mass: float) -> int:
    """The first grid index (in ``[lo, hi]``) above which one use's A-mass is below ``mass``.

    A float estimate (it only places the grid points): the Gaussian tails at the output
    where the loss is the grid loss, found by bisection.
    """
    if _monotone(sub):

        def tail(i: int) -> float:
            return sub.a_tail_float(sub.x_of_loss_float(i * h))

    else:
        tail = _subsampled_tail(sub, h)

    a, b = lo, hi
    if tail(b) >= mass:
        return hi
    while b - a > 1:
        mid = (a + b) // 2
        a, b = (mid, b) if tail(mid) >= mass else (a, mid)
    return b


def _subsampled_tail(sub: SubsampledNoise, h: float) -> Any:
    """``i -> A(L > i h)`` of subsampled Gaussian noise, in floats."""
    noise, q = sub.noise, float(sub.q)
    sig, s = float(noise.scale), float(noise.shift)

    def tail(i: int) -> float:
        el = math.exp(min(i * h, 700.0))
        if el <= 1 - q:
            return 1.0
        beta = math.log((el - 1 + q) / q)
        x = beta * sig * sig / s + s / 2
        return q * math.erfc((x - s) / sig / math.sqrt(2)) / 2 + (1 - q) * math.erfc(
            x / sig / math.sqrt(2)
        ) / 2

    return tail


def _grid_points(
    sub: SubsampledNoise, h: Fraction, lo: int, hi: int, stride: int = MAX_STRIDE,
    graded: bool = True,
) -> list[int]:
    """The grid indices where the distribution functions are evaluated (cells between).

    Every index in the bulk.  Above it (``graded``): cells of 2 steps where one use's
    A-mass beyond is below :data:`GRADE_MASS`, 4 steps below ``GRADE_MASS *
    GRADE_RATIO``, and so on up to ``stride`` (float estimates: this only places the
    points; any cells give certified bounds, the narrow ones carry the mass).  Not graded:
    strides doubling up to ``stride`` beyond a tail mass of :data:`FINE_MASS`.  The lower
    tail of a Gaussian at rate 1: strides doubling beyond FINE_MASS; at a rate below 1
    (graded): strides doubling below the output where one use's B-mass below is
    ``e^LOW_GRADE_LOG`` (the A-mass there is smaller still, ``A <= B`` where the loss is
    negative).

    Raises:
        ResourceLimitError: the grid is over :data:`MAX_GRID_POINTS` points or
            :data:`MAX_GRID_CELLS` cells (refused before the list is made).
    """
    hf = float(h)
    z = math.sqrt(2 * math.log(1 / FINE_MASS))
    if _monotone(sub):
        fine_hi = min(hi, math.ceil(sub.loss_float(sub.x_top(z)) / hf))
        fine_lo = lo
        if _monotone_cut_lo(sub, h, lo):
            fine_lo = max(lo, math.floor(sub.loss_float(sub.x_bottom(z)) / hf))
    else:
        noise, q = sub.noise, sub.q
        if noise.kind != "gaussian":
            _check_grid_size(sub, h, lo, hi, hi - lo + 1)
            return list(range(lo, hi + 1))
        fine_hi = min(
            hi, math.ceil(_loss_float(q, _beta_float(noise, noise_x(noise, z, True))) / hf)
        )
        fine_lo = lo
        if q == 1:
            fine_lo = max(lo, math.floor(_beta_float(noise, noise_x(noise, z, False)) / hf))
        elif graded:  # below the output where one use's B-mass is e^LOW_GRADE_LOG
            x_low = noise_x(noise, math.sqrt(-2 * LOW_GRADE_LOG), False)
            fine_lo = max(lo, math.floor(_loss_float(q, _beta_float(noise, x_low)) / hf))
    # graded: the index where each stride (2, 4, ...) starts
    starts: list[int] = []
    if graded:
        mass, st = GRADE_MASS, 2
        while st <= stride:
            starts.append(_upper_tail_index(sub, hf, max(fine_lo, lo), hi, mass))
            mass *= GRADE_RATIO
            st *= 2
        fine_hi = min(fine_hi, starts[0]) if starts else fine_hi
    points = fine_hi - fine_lo + 2 + _tail_points(fine_lo - lo, stride)
    if starts:
        ends = [*starts[1:], hi]
        points += sum(-(-(e - b) // 2 ** (m + 1)) + 1 for m, (b, e) in enumerate(zip(starts, ends)))
    else:
        points += _tail_points(hi - fine_hi, stride)
    _check_grid_size(sub, h, lo, hi, points)
    pts: list[int] = []
    i, step = fine_lo, 1
    while i > lo:  # the lower tail (q = 1), from the bulk outwards
        step = min(2 * step, stride)
        i = max(lo, i - step)
        pts.append(i)
    pts.reverse()
    pts += list(range(fine_lo, fine_hi + 1))
    i, step = fine_hi, 1
    if starts:  # graded
        while i < hi:
            step = 2 ** sum(1 for b in starts if i >= b)
            i = min(hi, i + step)
            pts.append(i)
    while i < hi:
        step = min(2 * step, stride)
        i = min(hi, i + step)
        pts.append(i)
    if len(pts) % 2 == 0:  # an even number of cells: the lower bound pairs them
        pts.insert(len(pts) - 1, pts[-1] - 1) if pts[-1] - pts[-2] > 1 else pts.append(pts[-1] + 1)
    return pts



def _monotone(sub: Any) -> bool:
    """True for a pair item that knows its own distribution functions (``cdf_pairs``).

    Such an item (a mixture of Gaussians, the replace-one subsampled Gaussian;
    :mod:`dpcompose_exact.mechanisms.mixture`) has a loss ``L(x)`` increasing in the output
    ``x``, the float helpers that place the grid (``loss_float``, ``x_of_loss_float``,
    ``a_tail_float``, ``x_top``, ``x_bottom``, ``loss_floor``, ``spread_float``) and, in
    Arb, ``x_of_ratio`` (a ball holding the ``x`` of a likelihood ratio) and ``cdf_pairs``
    (docs/theory.md, section 23).
    """
    return hasattr(sub, "cdf_pairs")


#: a pair item whose loss is bounded below (``ln p0``) is not cut there when the lower
#: tail's cut would be at most this many cells above the bound
FLOOR_CELLS = 64


def _monotone_range(sub: Any, h: Fraction, tail_log: float) -> tuple[int, int, bool, bool]:
    """``(lo, hi, cut_lo, cut_hi)`` of a pair item (:func:`_monotone`).

    The top is cut where ``A(X > x)`` is below ``e^tail_log`` (float estimates: the exact
    masses beyond go to the leak); the bottom where ``B(X <= x)`` is, unless the loss's
    floor ``ln p0`` is within :data:`FLOOR_CELLS` cells (then every loss is on the grid).
    """
    hf = float(h)
    z = math.sqrt(-2 * tail_log) + 0.5
    hi = math.ceil(sub.loss_float(sub.x_top(z)) / hf) + 1
    low = sub.loss_float(sub.x_bottom(z))
    floor = sub.loss_floor()
    if floor > -math.inf and (low - floor) / hf <= FLOOR_CELLS:
        return math.floor(floor / hf) - 2, hi, False, True
    return math.floor(low / hf) - 1, hi, True, True


def _monotone_cut_lo(sub: Any, h: Fraction, lo: int) -> bool:
    """Whether the grid of a pair item starting at ``lo`` cuts its lower tail."""
    floor = sub.loss_floor()
    return floor == -math.inf or lo != math.floor(floor / float(h)) - 2

