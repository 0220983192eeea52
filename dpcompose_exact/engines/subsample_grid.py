"""Subsampled Gaussian and Laplace noise: certified two-sided bounds on a loss grid.

Poisson subsampling of rate ``q`` (add/remove) or sampling without replacement (replace-one,
``q = m/n``) of an additive-noise mechanism with noise ``N(0, sigma^2)`` or ``Lap(b)`` and
shift ``s`` (the sensitivity; ``2`` under replace-one, dp_accounting's convention) has the
dominating pair ``A = q P + (1 - q) Q``, ``B = Q`` with ``P`` the noise shifted by ``s`` and
``Q`` the noise (docs/theory.md, section 15).  Its privacy loss ``L(x) = ln(1 - q + q
e^{beta(x)})`` (``beta`` the loss of the base pair) is a non-decreasing function of the
output ``x``, so the cells ``(i h, (i + 1) h]`` of a loss grid are intervals of ``x`` whose
``A``- and ``B``-masses are differences of the noise's distribution function, evaluated in
Arb (:func:`cell_masses`).  Then

* **upper bound** (both directions at once): each cell's restricted pair is replaced by the
  two-point pair with likelihood ratios ``e^{ih}`` and ``e^{(i+1)h}`` and the same masses
  (connect-the-dots), which the cell's pair is a post-processing of; the tail beyond the
  grid by a pair of disjoint supports (its masses go to the leaks of both directions);
* **lower bound** (per direction): buckets of cells (the pair seen through the bucket
  index, with shares of cells drawn at random: a post-processing of the true pair), built
  by a sweep so that each bucket's loss is a grid point up to float rounding (the rest of
  a cell and the share of the next one that lands it there; Laplace atoms are cells of
  their own, the top one swept downwards); a certified deviation is covered by a shift
  ``tau`` (``k tau`` in all) or the bucket is rounded to the grid point below (forward) or
  above (reverse); the tail is dropped.  One use loses only the information inside the
  buckets, second order in ``h``.

The distribution functions are evaluated from their own side (``F`` and ``S = 1 - F``), so
tail cells are relatively accurate; cells are graded (width ``h`` where the mass is, wider
where one use's mass beyond is small: any cells give certified bounds).

The ``k``-fold compositions of the four lattice measures are computed by one FFT power each
(doubles), with an a posteriori bound of every floating-point error and a Chernoff bound
of the mass outside the FFT window (:class:`_Fold`).  ``delta(eps)`` is the larger of the
two directions' values; the answers are :class:`~dpcompose_exact.numbers.value.Value`
enclosures (:class:`NoiseGridComposition`).

Small deltas (below :data:`TILT_REGULAR`) are refined by exponential tilting: the lattice
measures times ``e^{lam l - c}`` (rounded outwards) are composed instead, with ``lam`` at
the saddle point of the query, so the FFT's absolute error bound becomes relative to the
delta (:func:`_tilt`, :class:`_Tilted`); tiny ones (below :data:`TILT_BELOW`) on a deep
grid whose tails reach ``1e-306``, in long doubles.  The argument is in docs/theory.md,
section 15 ("Small and tiny deltas: exponential tilting").
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError
from ..mechanisms.noise import AdditiveNoise, SubsampledNoise
from ..numbers.convert import rational_ball
from ..numbers.value import Value
from ..optional import require
from ..regions.protocol import PairForm
from .bounds import EnclosureRows
from .pldgrid import certify_epsilon
from .results import Exactness

if TYPE_CHECKING:  # numpy comes with the dp-accounting extra: imported where it is used
    import numpy as np


def _numpy() -> Any:
    return require("numpy", "subsampled Gaussian and Laplace noise", extra="dp-accounting")

__all__ = [
    "NoiseGridComposition",
    "cell_masses",
    "compose_noise",
    "DEFAULT_GRID",
]

#: the loss grid width (dp_accounting's default value_discretization_interval is 1e-4)
DEFAULT_GRID = Fraction(1, 10000)
#: mass of one use's tail beyond the grid (it goes to the leak of the upper bound)
TAIL_MASS = 1e-20
#: beyond the loss where one use's tail mass is below this, cells widen geometrically
FINE_MASS = 1e-14
#: the widest cell of a tail, in grid steps
MAX_STRIDE = 256
#: cells of 2 grid steps where one use's A-mass beyond is below this, 4 below this times
#: GRADE_RATIO, ... (the default grid; the deep grid is not graded)
GRADE_MASS = 1e-2
GRADE_RATIO = 1e-1
#: the deep grid (tiny deltas, :class:`_Tilted`): the log of its tail mass, widest tail cell
DEEP_TAIL_LOG = -306 * math.log(10)  # the smallest cells stay normal doubles
DEEP_MAX_STRIDE = 4
#: mass of the k-fold composition allowed outside the FFT window (Chernoff)
WINDOW_MASS = 1e-20
#: deltas whose untilted upper bound is below this are refined by a tilted fold (doubles)
TILT_REGULAR = 1e-3
#: ... and below this by a tilted fold of the deep grid in long doubles
TILT_BELOW = 1e-6
#: the FFTs and powers in doubles (True) or in long doubles (each with its error bound)
FFT_DOUBLE = True
#: largest FFT length
MAX_FFT = 1 << 24
#: most grid points (distribution-function evaluations) of one use
MAX_GRID_POINTS = 4_000_000
#: most grid cells (indices from the lowest to the highest point) of one use
MAX_GRID_CELLS = 50_000_000
_PREC = 128
_U64 = 2.0**-53


def _arb(q: Fraction | int) -> flint.arb:
    return rational_ball(Fraction(q))


def _frac(x: flint.arb) -> Fraction:
    man, exp = (int(v) for v in x.mid().man_exp())
    return Fraction(man) * Fraction(2) ** exp


# ---------------------------------------------------------------------------------------
# one use on the grid


@dataclass
class _Measure:
    """A lattice measure: ``masses[j]`` at loss ``(offset + j) h``, plus a leak at +inf.

    Masses are doubles that are exact numbers (each an upper or a lower end of a ball).
    """

    masses: np.ndarray
    offset: int
    leak: Fraction
    #: the true losses may lie up to this much below the lattice (lower measures only)
    shift: Fraction = Fraction(0)
    #: the indices of the non-zero masses, the lattice losses there (cached by :meth:`nz`)
    _nz: Any = field(default=None, repr=False, compare=False)

    def nz(self) -> tuple[np.ndarray, np.ndarray]:
        """The indices ``j`` with ``masses[j] != 0`` and their masses (computed once)."""
        if self._nz is None:
            idx = _numpy().nonzero(self.masses)[0]
            self._nz = (idx, self.masses[idx])
        return self._nz


def _up(x: flint.arb) -> float:
    """A double >= every point of the ball (and >= 0)."""
    v = float(x.upper())
    v = math.nextafter(v, math.inf) if math.isfinite(v) else math.inf
    return max(v, 0.0)


def _down(x: flint.arb) -> float:
    """A double <= every point of the ball, clipped at 0."""
    v = float(x.lower())
    v = math.nextafter(v, -math.inf) if math.isfinite(v) else 0.0
    return max(v, 0.0)


def _loss_index_range(
    sub: SubsampledNoise, h: Fraction, tail_log: float = math.log(TAIL_MASS)
) -> tuple[int, int, bool, bool]:
    """Grid indices ``(lo, hi)`` and whether each end cuts a tail (else it bounds the loss).

    A Gaussian's grid ends where the tails are below ``e^tail_log`` (a float estimate: the
    exact masses beyond are computed and go to the leak).
    """
    noise, q = sub.noise, sub.q
    br = noise.beta_range()
    hf = float(h)
    if br is not None:  # Laplace: the loss lies in [L(-s/b), L(s/b)]
        lo = math.floor(_loss_float(q, float(br[0])) / hf) - 2
        hi = math.ceil(_loss_float(q, float(br[1])) / hf) + 2
        return lo, hi, False, False
    # Gaussian: cut where the A- (upper) and B- (lower, q = 1 only) tails are below TAIL_MASS
    z = math.sqrt(-2 * tail_log) + 0.5
    hi = math.ceil(_loss_float(q, _beta_float(noise, noise_x(noise, z, True))) / hf) + 1
    if q < 1:
        lo = math.floor(math.log1p(-float(q)) / hf) - 2
        return lo, hi, False, True
    lo = math.floor(_beta_float(noise, noise_x(noise, z, False)) / hf) - 1
    return lo, hi, True, True


def noise_x(noise: AdditiveNoise, z: float, upper: bool) -> float:
    """The output ``z`` standard deviations above the shifted (below the unshifted) centre."""
    sig, s = float(noise.scale), float(noise.shift)
    return s + z * sig if upper else -z * sig


def _beta_float(noise: AdditiveNoise, x: float) -> float:
    sig, s = float(noise.scale), float(noise.shift)
    return (2 * s * x - s * s) / (2 * sig * sig)


def _loss_float(q: Fraction, beta: float) -> float:
    """``ln(1 - q + q e^beta)`` in floats (to place the grid only)."""
    qf = float(q)
    if beta > 30:
        return beta + math.log(qf) + math.log1p((1 - qf) / qf * math.exp(-beta))
    return math.log1p(qf * math.expm1(beta))


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
        f"{cells} cells and about {points} points, over the limits of {MAX_GRID_CELLS} cells "
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

    a, b = lo, hi
    if tail(b) >= mass:
        return hi
    while b - a > 1:
        mid = (a + b) // 2
        a, b = (mid, b) if tail(mid) >= mass else (a, mid)
    return b


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
    tail of a Gaussian at rate 1: strides doubling beyond FINE_MASS.

    Raises:
        ResourceLimitError: the grid is over :data:`MAX_GRID_POINTS` points or
            :data:`MAX_GRID_CELLS` cells (refused before the list is made).
    """
    noise, q = sub.noise, sub.q
    if noise.kind != "gaussian":
        _check_grid_size(sub, h, lo, hi, hi - lo + 1)
        return list(range(lo, hi + 1))
    hf = float(h)
    z = math.sqrt(2 * math.log(1 / FINE_MASS))
    fine_hi = min(hi, math.ceil(_loss_float(q, _beta_float(noise, noise_x(noise, z, True))) / hf))
    fine_lo = lo
    if q == 1:
        fine_lo = max(lo, math.floor(_beta_float(noise, noise_x(noise, z, False)) / hf))
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


def _cdf_table(
    sub: SubsampledNoise, h: Fraction, pts: list[int]
) -> tuple[list, list, list, list, list]:
    """``(FA, FB, SA, SB, tails)`` at the grid losses ``i h``, ``i`` in ``pts``, Arb balls.

    ``FA(l) = A(L <= l)``, ``FB(l) = B(L <= l)``, ``SA = 1 - FA`` and ``SB = 1 - FB`` (each
    side computed from its own tail, so that both are relatively accurate where they are
    small); ``tails``: the A- and B-masses below the first and above the last grid point
    when those ends cut a tail (else 0).
    """
    noise, q = sub.noise, sub.q
    br = noise.beta_range()
    zero, one = flint.arb(0), flint.arb(1)
    n = len(pts)
    fa: list = [zero] * n
    fb: list = [zero] * n
    sa: list = [one] * n
    sb: list = [one] * n
    tails = [zero] * 4  # A below, B below, A above, B above
    qa, one_q = _arb(q), 1 - _arb(q)
    inv_q = 1 / qa
    hb = _arb(h)
    eh = hb.exp()
    sc, sh = _arb(noise.scale), _arb(noise.shift)
    rs = []
    r = (hb * pts[0]).exp()
    for j, i in enumerate(pts):  # e^{i h}: by products along unit steps
        if j:
            r = r * eh if i == pts[j - 1] + 1 else (hb * i).exp()
        rs.append(r)
    if br is None:  # Gaussian: 2 Phi(x / sigma) = erfc(u), u = -x / (sigma sqrt 2)
        m = -1 / (sc * flint.arb(2).sqrt())
        c1 = sc * sc / sh * m  # u = c1 beta + c0
        c0 = sh / 2 * m
        cs = -sh * m  # u_P = u + cs

        def both(v: flint.arb) -> tuple[flint.arb, flint.arb]:
            """``(erfc(v)/2, erfc(-v)/2)``, the smaller one computed, the other 1 minus it."""
            if v.mid() > 0:
                f = v.erfc() / 2
                return f, 1 - f
            g = (-v).erfc() / 2
            return 1 - g, g

        for j in range(n):
            t = (rs[j] - one_q) * inv_q
            if t > 0:
                u = t.log() * c1 + c0
                fq, sq = both(u)
                fp, sp = both(u + cs)
                fa[j], fb[j] = qa * fp + one_q * fq, fq
                sa[j], sb[j] = qa * sp + one_q * sq, sq
                if j == 0 and q == 1:
                    tails[0], tails[1] = fa[0], fb[0]
                if j == n - 1:
                    tails[2], tails[3] = sa[j], sb[j]
            elif not t <= 0:
                raise ResourceLimitError(f"undecided grid point {pts[j]} h of {sub!r}")
        return fa, fb, sa, sb, tails
    # Laplace: the loss lies in [lmin, lmax], atoms at both ends
    lmin = (one_q + qa * _arb(br[0]).exp()).log()
    lmax = (one_q + qa * _arb(br[1]).exp()).log()
    for j, i in enumerate(pts):
        li = hb * i
        if q == 1:  # L = beta: rational ends, compared exactly
            below, above = h * i < br[0], h * i >= br[1]
        else:
            below, above = li < lmin, li >= lmax
            if (not below and not li >= lmin) or (not above and not li < lmax):
                raise ResourceLimitError(f"undecided grid point {i} h of {sub!r}")
        if below:
            fa[j], fb[j] = zero, zero
        elif above:
            fa[j], fb[j] = one, one
        else:
            x = noise.x_of_beta(((rs[j] - one_q) * inv_q).log())  # 0 <= x < s
            fq = 1 - (-x / sc).exp() / 2
            fp = ((x - sh) / sc).exp() / 2
            fa[j], fb[j] = qa * fp + one_q * fq, fq
        sa[j], sb[j] = 1 - fa[j], 1 - fb[j]
    return fa, fb, sa, sb, tails


def _cells(fa: list, fb: list, sa: list, sb: list) -> list[tuple[Any, Any]]:
    """The cells' ``(A, B)``-masses: differences of ``F`` or of ``S``, the narrower ball."""
    out = []
    for j in range(len(fa) - 1):
        a1, a2 = fa[j + 1] - fa[j], sa[j] - sa[j + 1]
        b1, b2 = fb[j + 1] - fb[j], sb[j] - sb[j + 1]
        out.append((a1 if a1.rad() <= a2.rad() else a2, b1 if b1.rad() <= b2.rad() else b2))
    return out


def cell_masses(
    sub: SubsampledNoise, h: Fraction = DEFAULT_GRID, deep: bool = False
) -> dict[str, Any]:
    """The four lattice measures of one use (upper/lower, forward/reverse), section 15.

    Cached (the last 16 mechanisms): a ledger that asks again after more uses only pays
    for the composition.  ``deep``: the Gaussian tails reach :data:`DEEP_TAIL_LOG` with
    cells of at most :data:`DEEP_MAX_STRIDE` steps (for tiny deltas, :class:`_Tilted`).

    Returns:
        ``{"fwd_up", "rev_up", "fwd_lo", "rev_lo"}``: :class:`_Measure` objects (the reverse
        ones indexed by the reverse loss ``-l``); the lower ones carry the shift ``tau``.
    """
    return _cell_masses(sub, Fraction(h), deep)


@functools.lru_cache(maxsize=16)
def _cell_masses(sub: SubsampledNoise, h: Fraction, deep: bool = False) -> dict[str, Any]:
    np = _numpy()
    lo, hi, cut_lo, cut_hi = _loss_index_range(
        sub, h, DEEP_TAIL_LOG if deep else math.log(TAIL_MASS)
    )
    pts = _grid_points(sub, h, lo, hi, DEEP_MAX_STRIDE if deep else MAX_STRIDE, not deep)
    lo, hi = pts[0], pts[-1]
    n = hi - lo
    _check_grid_size(sub, h, lo, hi, len(pts))
    with flint.ctx.workprec(_PREC):
        fa, fb, sa, sb, tails = _cdf_table(sub, h, pts)
        cells = _cells(fa, fb, sa, sb)
        hb = _arb(h)
        rs = [(hb * pts[0]).exp()]
        eh = hb.exp()
        for j in range(1, len(pts)):
            rs.append(rs[-1] * eh if pts[j] == pts[j - 1] + 1 else (hb * pts[j]).exp())
        up_a: dict[int, Any] = {}
        up_b: dict[int, Any] = {}
        for j in range(len(pts) - 1):
            a, b = cells[j]
            if a == 0 and b == 0:
                continue
            r_lo, r_hi = rs[j], rs[j + 1]
            # connect the dots: the B-mass at ratio r_hi; its exact value lies in [0, b],
            # so upper ends only
            beta_hi = (a - r_lo * b) / (r_hi - r_lo)
            b_top = b.upper()
            hi_end = beta_hi.upper() if beta_hi.upper() < b_top else b_top
            lo_end = beta_hi.lower() if beta_hi.lower() > 0 else flint.arb(0)
            rest = b_top - lo_end  # >= the B-mass at ratio r_lo
            i0, i1 = pts[j], pts[j + 1]
            up_a[i0] = up_a.get(i0, 0) + r_lo * rest
            up_a[i1] = up_a.get(i1, 0) + r_hi * hi_end
            up_b[i0] = up_b.get(i0, 0) + rest
            up_b[i1] = up_b.get(i1, 0) + hi_end
        fwd_up = np.zeros(n + 1)
        rev_up = np.zeros(n + 1)
        for i, x in up_a.items():
            fwd_up[i - lo] = _up(x)
        for i, x in up_b.items():
            rev_up[i - lo] = _up(x)
        # lower: buckets of cells (a post-processing), each with a loss near a grid point
        buckets = _certified_buckets(sub, h, pts, fa, cells)  # the same for both directions
        fwd_lo, tau_f = _lower_measure(buckets, h, True, lo, n)
        rev_lo, tau_r = _lower_measure(buckets, h, False, lo, n)
        fwd_lo = fwd_lo * (1 - 4 * _U64)  # a few doubles may share a point: their sums
        rev_lo = rev_lo * (1 - 4 * _U64)
        leak_a = _frac((tails[0] + tails[2]).upper()) if cut_hi or cut_lo else Fraction(0)
        leak_b = _frac((tails[1] + tails[3]).upper()) if cut_hi or cut_lo else Fraction(0)
    return {
        "fwd_up": _Measure(fwd_up, lo, leak_a),
        "rev_up": _Measure(rev_up[::-1].copy(), -hi, leak_b),
        "fwd_lo": _Measure(fwd_lo, lo, Fraction(0), Fraction(tau_f)),
        "rev_lo": _Measure(rev_lo[::-1].copy(), -hi, Fraction(0), Fraction(tau_r)),
    }


def _certified_buckets(
    sub: SubsampledNoise, h: Fraction, pts: list[int], fa: list, cells: list
) -> list[tuple[Any, Any, int, int, int | None, tuple]]:
    """The buckets (:func:`_lower_buckets`) with their certified loss minus the base.

    ``(a, b, i_lo, i_hi, centre, ends)``: ``ends`` are floats enclosing ``l - base h`` (base
    the centre, else ``i_lo``), or the integers ``(i_lo, i_hi)`` when a mass may be 0.
    """
    hb = _arb(h)
    out = []
    for a, b, i_lo, i_hi, c in _lower_buckets(sub, h, pts, fa, cells, True):
        ends: tuple = (i_lo, i_hi)
        if a.lower() > 0 and b.lower() > 0:
            d = (a / b).log() - hb * (i_lo if c is None else c)  # l - base h
            ends = (float(d.lower()), float(d.upper()))
        out.append((a, b, i_lo, i_hi, c, ends))
    return out


def _lower_measure(
    buckets: list, h: Fraction, up: bool, lo: int, n: int
) -> tuple[np.ndarray, float]:
    """The forward (``up``: A-masses) or reverse (B-masses) lower lattice measure and its shift.

    A bucket whose certified loss is on the wrong side of its centre by at most ``tau`` is
    put at the centre (all losses then shift by at most ``tau``); the others at the grid
    point below (forward) or above (reverse) their loss.
    """
    np = _numpy()
    hf = float(h)
    rows = []
    for a, b, i_lo, i_hi, c, ends in buckets:
        m = _down(a if up else b)
        if m == 0:
            continue
        dev = math.inf
        if c is not None and not isinstance(ends[0], int):
            # forward needs l >= c h - tau, reverse l <= c h + tau
            dev = max(0.0, -ends[0] if up else ends[1]) * (1 + 1e-12)
        rows.append((c, m, dev, ends, i_lo, i_hi))
    tau = _choose_tau([(r[2], r[1]) for r in rows], hf)
    out = np.zeros(n + 1)
    for c, m, dev, ends, i_lo, i_hi in rows:
        if dev <= tau:
            out[c - lo] += m
        elif isinstance(ends[0], int):  # only l in (i_lo h, i_hi h] is known
            out[(i_lo if up else i_hi) - lo] += m
        else:  # the grid point below l (forward) or above it (reverse), with margins
            base = i_lo if c is None else c
            if up:
                out[max(i_lo, base + math.floor(ends[0] / hf - 1e-9)) - lo] += m
            else:
                out[min(i_hi, base + math.ceil(ends[1] / hf + 1e-9)) - lo] += m
    return out, tau


def _lower_buckets(
    sub: SubsampledNoise, h: Fraction, pts: list[int], fa: list, cells: list, up: bool
) -> list[tuple[Any, Any, int, int, int | None]]:
    """Buckets of the lower bound: ``(a, b, i_lo, i_hi, centre)``, loss in ``(i_lo h, i_hi h]``.

    Each bucket is a set of outputs (cells, and shares of cells drawn at random: a
    post-processing) whose loss is the grid point ``centre`` up to float rounding (certified
    by the caller; None: no centre, the bucket is rounded).  A sweep (:func:`_sweep`) goes
    up the cells: the bucket being filled aims at the first grid point at or above its
    loss and takes the share of the next cell (loss above that point) that lifts it there
    exactly; the rest of that cell starts the next bucket.  So every bucket but the last
    sits on its grid point, however steep the density (a Gaussian's losses pile up just
    above ``ln(1 - q)``): one use loses only the information inside the buckets, ``O(h^2)``.
    Laplace noise has an atom at each end of its loss range: the top one is swept
    downwards (aiming at the grid point at or below), the two sweeps meet in the middle,
    where their two unfinished buckets are left without centre.  The same buckets serve
    both directions (``up`` is kept for the signature).
    """
    hf = float(h)
    ranges = [(pts[j], pts[j + 1]) for j in range(len(cells))]
    cells = list(cells)
    if sub.noise.kind == "laplace":  # the atoms become cells of their own (same ranges)
        q, e = _arb(sub.q), (-_arb(sub.noise.shift) / _arb(sub.noise.scale)).exp()
        top = (q / 2 + (1 - q) * e / 2, e / 2)  # A- and B-masses of x >= s
        bottom = (q * e / 2 + (1 - q) / 2, flint.arb(1) / 2)  # and of x <= 0
        j_top = next(j for j in range(len(cells)) if fa[j + 1] == 1 and fa[j + 1].is_exact())
        j_bot = max(j for j in range(len(cells)) if fa[j] == 0 and fa[j].is_exact())
        if j_top > j_bot:
            (at, bt), (ab, bb) = cells[j_top], cells[j_bot]
            cells[j_top:j_top + 1] = [(at - top[0], bt - top[1]), top]
            ranges[j_top:j_top + 1] = [ranges[j_top]] * 2
            cells[j_bot:j_bot + 1] = [bottom, (ab - bottom[0], bb - bottom[1])]
            ranges[j_bot:j_bot + 1] = [ranges[j_bot]] * 2
        n = len(cells)
        mid = n // 2
        out, rest_up = _sweep(cells, ranges, hf, list(range(mid)), +1)
        down, rest_down = _sweep(cells, ranges, hf, list(range(n - 1, mid - 1, -1)), -1)
        out += down
        out += [r for r in (rest_up, rest_down) if r is not None]
        return out
    out, rest = _sweep(cells, ranges, hf, list(range(len(cells))), +1)
    if rest is not None:
        out.append(rest)
    return out


def _sweep(
    cells: list, ranges: list[tuple[int, int]], hf: float, order: list[int], step: int
) -> tuple[list[tuple[Any, Any, int, int, int | None]], tuple | None]:
    """Buckets centred on grid points, and the unfinished last one (None when empty).

    The cells are taken along ``order`` (going up, ``step = 1``, or down, ``-1``).

    The bucket being filled has the loss ``l`` (float, from the balls' midpoints) and aims
    at ``c``: the first grid index with ``c h >= l`` going up (``<= l`` going down), or at
    ``l``'s own index when it is within ``1e-9`` of it.  The next cell's loss is on the far
    side of ``c h`` (cells are ordered), so the share ``theta`` of it with
    ``(a + theta a_c) = e^{c h} (b + theta b_c)`` is positive; it is a double (exact), taken
    only when below what is left of the cell (else the whole rest is taken and the sweep
    goes on).  Shares are exact dyadic numbers, what is left of a cell is ``1`` minus those
    taken (a ball containing it), so the buckets partition the outputs.
    """
    out: list[tuple[Any, Any, int, int, int | None]] = []
    acc: list | None = None  # [a, b, i_lo, i_hi, target]

    def target(a: Any, b: Any) -> int | None:
        x = _loss_steps(a, b, hf)
        if x is None:
            return None
        r = round(x)
        if abs(x - r) < 1e-9:
            return r
        return math.ceil(x) if step > 0 else math.floor(x)

    for j in order:
        a_c, b_c = cells[j]
        if a_c.lower() <= 0 and b_c.lower() <= 0:  # (nearly) empty: dropped, which only
            continue  # lowers the lower measure (its terms are >= 0)
        left = flint.arb(1)  # the share of cell j not yet in a bucket
        while True:
            if acc is None:
                a, b = left * a_c, left * b_c
                acc = [a, b, *ranges[j], target(a, b)]
                if acc[4] is not None and _on_target(a, b, acc[4], hf):
                    out.append((a, b, *ranges[j], acc[4]))
                    acc = None
                break
            a, b, i_lo, i_hi, c = acc
            lo_new, hi_new = min(i_lo, ranges[j][0]), max(i_hi, ranges[j][1])
            theta = _share(a, b, a_c, b_c, c, hf)
            if theta < 0:  # past its aim (or no loss yet): aim again
                c = target(a, b)
                if c is not None and _on_target(a, b, c, hf):
                    out.append((a, b, i_lo, i_hi, c))
                    acc = None
                    continue
                theta = _share(a, b, a_c, b_c, c, hf)
            if not 0 <= theta < float(left.mid()) * (1 - 1e-9):
                a, b = a + left * a_c, b + left * b_c  # the whole rest: not there yet
                acc = [a, b, lo_new, hi_new, c]
                break
            t = flint.arb(theta)  # a double: exact
            out.append((a + t * a_c, b + t * b_c, lo_new, hi_new, c))
            left = left - t
            acc = None
    if acc is None:
        return out, None
    a, b, i_lo, i_hi, _ = acc  # unfinished: centred on the nearest grid point, certified
    x = _loss_steps(a, b, hf)  # by the caller (shifted or rounded)
    c = round(x) if x is not None else None
    return out, (a, b, i_lo, i_hi, c if c is not None and i_lo <= c <= i_hi else None)


def _share(a: Any, b: Any, a_c: Any, b_c: Any, c: int | None, hf: float) -> float:
    """The float share ``theta`` of ``(a_c, b_c)`` that brings the loss of ``(a, b)`` to ``c h``.

    Negative when there is none (no aim, or the loss is past it); ``inf`` when the cell's
    loss is ``c h`` itself.
    """
    if c is None or not a.mid() > 0:
        return -1.0
    g = math.exp(c * hf)
    # in units of a (the masses of a deep tail are far below the doubles' range)
    rb, rac, rbc = (float((x / a).mid()) for x in (b, a_c, b_c))
    den = rac - g * rbc  # > 0 going up, < 0 going down
    if den == 0:
        return math.inf
    return (g * rb - 1.0) / den


def _on_target(a: Any, b: Any, c: int, hf: float) -> bool:
    """Whether the float loss of ``(a, b)`` is within ``1e-9`` grid steps of ``c h``."""
    x = _loss_steps(a, b, hf)
    return x is not None and abs(x - c) < 1e-9


def _loss_steps(a: Any, b: Any, hf: float) -> float | None:
    """The float loss ``ln(a / b) / h`` of a bucket (None unless both masses are > 0).

    The ratio is taken in Arb: the masses of a deep tail are far below the doubles' range.
    """
    if not (a.mid() > 0 and b.mid() > 0):
        return None
    r = float((a / b).mid())
    return math.log(r) / hf if 0 < r < math.inf else None


def _choose_tau(devs_masses: list[tuple[float, float]], h: float) -> float:
    """The shift ``tau`` of one direction: buckets within ``tau`` of their centre stay there.

    (Within: on the wrong side by at most ``tau``.)  The others are rounded to the grid
    point below (forward) or above (reverse), which costs them up to ``h`` each; a shift
    ``tau`` costs every use ``tau``.  The ``tau`` that minimises ``tau + h/2 x (share of
    the mass rounded)`` is taken.
    """
    devs = sorted(devs_masses)
    total = math.fsum(m for _, m in devs)
    if not devs or total <= 0:
        return 0.0
    remaining = total
    best, best_cost = 0.0, h / 2
    for dev, m in devs:
        if dev == math.inf:
            break
        remaining -= m
        cost = dev + h / 2 * max(remaining, 0.0) / total
        if cost < best_cost:
            best, best_cost = dev, cost
    return best


# ---------------------------------------------------------------------------------------
# k-fold composition of lattice measures


def _sum_up(x: np.ndarray) -> float:
    """A double >= the exact sum of the non-negative doubles ``x`` (any summation order)."""
    np = _numpy()
    return float(np.sum(x)) * (1 + (x.size + 2) * _U64)


def _dot_up(a: np.ndarray, b: np.ndarray) -> float:
    """A double >= the exact ``sum a_i b_i`` of non-negative doubles (any summation order).

    Below the normal range each product may lose up to ``2^-1074`` more: the caller adds
    that.  (Not ``np.dot``: a threaded BLAS can spend far more CPU time than the sum.)
    """
    np = _numpy()
    return float(np.sum(a * b)) * (1 + (a.size + 3) * _U64)


def _log_mgf(m: _Measure, h: float, lam: float) -> float:
    """An upper bound of ``log sum_j m_j e^{lam (offset + j) h}`` (floats with a margin)."""
    np = _numpy()
    nz, mz = m.nz()
    if nz.size == 0:
        return -math.inf
    arg = lam * (m.offset + nz) * h
    c = float(np.max(arg))
    s = _sum_up(mz * np.exp(arg - c))
    # each term: relative error <= 4 u (|arg| + |c| + 2) (the rounded argument and exp)
    rel = 4 * _U64 * (float(np.max(np.abs(arg))) + abs(c) + 2) + 2 * _U64
    return c + math.log(s) + 2 * rel + 1e-12


def _composed_leak(parts: Sequence[tuple[_Measure, int]]) -> Fraction:
    """An upper bound of the composition's mass with a leaked use (at +inf)."""
    if not any(m.leak for m, _ in parts):
        return Fraction(0)
    # prod (f + l)^k - prod f^k <= prod (f + l)^k * sum k l / (f + l) (no cancellation:
    # relatively accurate however small the leaks)
    with flint.ctx.workprec(_PREC):
        full = flint.arb(1)
        share = flint.arb(0)
        for m, k in parts:
            fl = _arb(Fraction(_sum_up(m.masses))) + _arb(m.leak)
            full *= fl**k
            share += k * _arb(m.leak) / fl
        return _frac((full * share).upper())


class _Fold:
    """``prod_m mu_m^{*k_m}`` of lattice measures by one FFT power, with its error bounds.

    In doubles (:data:`FFT_DOUBLE`), or in long doubles when ``long`` (the tilted folds of
    tiny deltas, whose relative width follows the FFT's relative rounding).
    """

    def __init__(
        self, parts: Sequence[tuple[_Measure, int]], h: Fraction, long: bool = False
    ) -> None:
        np = _numpy()
        self.h = h
        hf = float(h)
        parts = [(m, k) for m, k in parts if k]
        self.parts = parts
        total = sum(k for _, k in parts)
        self.shift = sum((k * m.shift for m, k in parts), Fraction(0))
        self.leak = _composed_leak(parts)
        #: the tilt (0: none): masses are ``p_T e^{lam T h - logc}``, see :func:`_tilt`
        self.lam = 0.0
        self.logc = 0.0
        self._tilt_cache: tuple | None = None
        self._est_cache: tuple | None = None  # suffix sums of the float estimate
        # window: Chernoff bounds at a few lambdas
        lams = [2.0**e for e in range(-6, 7)]

        cache: dict[float, float] = {}

        def logm(lam: float) -> float:
            if lam not in cache:
                cache[lam] = sum(k * _log_mgf(m, hf, lam) for m, k in parts)
            return cache[lam]

        log_tau = math.log(WINDOW_MASS)
        smin = sum(k * m.offset for m, k in parts)
        smax = sum(k * (m.offset + m.masses.size - 1) for m, k in parts)
        t_hi = min((logm(lam) - log_tau) / lam for lam in lams)
        t_lo = max(-(logm(-lam) - log_tau) / lam for lam in lams)
        w_hi = min(smax, math.ceil(t_hi / hf) + 1)
        w_lo = max(smin, math.floor(t_lo / hf) - 1)
        w_lo = min(w_lo, w_hi)
        from scipy import fft as sfft

        nfft = sfft.next_fast_len(max(w_hi - w_lo + 1, 16), real=True)
        if nfft > MAX_FFT:
            raise ResourceLimitError(
                f"the subsampled-noise grid needs an FFT of length {nfft} > {MAX_FFT}: "
                "use a coarser grid or fewer uses"
            )
        self.w_lo, self.w_hi = w_lo, w_lo + nfft - 1
        self.w_hi = min(self.w_hi, smax)

        def chernoff(t_index: int, upper: bool) -> float:
            """Mass of the composition at indices >= t (upper) or <= t (lower)."""
            t = t_index * hf
            best = math.inf
            for lam in lams:
                v = logm(lam) - lam * t if upper else logm(-lam) + lam * t
                best = min(best, v)
            return min(math.exp(best) * (1 + 1e-9) + 1e-300, 1.0) if best < 700 else 1.0

        self.p_hi = 0.0 if self.w_hi >= smax else chernoff(self.w_hi + 1, True)
        self.p_lo = 0.0 if self.w_lo <= smin else chernoff(self.w_lo - 1, False)
        # the power
        dt = np.longdouble if long or not FFT_DOUBLE else np.float64
        u = float(np.finfo(dt).eps) / 2
        stages = math.ceil(math.log2(nfft)) + 2
        fft_rel = 4 * math.expm1(stages * math.log1p(10 * u)) * (1 + 1e-9)
        spec_total = None
        log_g = np.zeros(nfft // 2 + 1)
        log_up = np.zeros(nfft // 2 + 1)
        for m, k in parts:
            x = np.zeros(nfft, dtype=dt)
            pos = np.arange(m.masses.size) % nfft
            np.add.at(x, pos, m.masses.astype(dt))
            spec = sfft.rfft(x)
            # |X~_j - X_j| <= fft_rel ||X||_2 = fft_rel sqrt(n) ||x||_2 (Higham, normwise)
            e1 = fft_rel * math.sqrt(nfft) * math.sqrt(_sum_up(m.masses**2)) * (1 + 1e-9)
            g = np.abs(spec).astype(np.float64) * (1 + 8 * u) + 1e-300
            with np.errstate(divide="ignore"):
                log_g += k * np.log(g)
            log_up += k * np.log(g + e1)
            powered = _power(spec, k)
            spec_total = powered if spec_total is None else spec_total * powered
        assert spec_total is not None
        # |Z~ - Z| <= G ((1+r) prod (1 + e1/g)^k - 1), G = prod g^k, r: the products' rounding
        r = math.expm1((2 * total + 2 * len(parts)) * math.log1p(4 * u))
        with np.errstate(over="ignore", under="ignore"):
            # prod (g + e1)^k (1 + r) - prod g^k, without overflow where g is tiny
            top = log_up + math.log1p(r)
            err_spec = np.exp(top) * -np.expm1(np.minimum(log_g - top, 0.0))
        err_sq = 2 * _sum_up(err_spec.astype(np.float64) ** 2) * (1 + 1e-9)
        znorm = math.sqrt(2 * _sum_up((np.abs(spec_total).astype(np.float64) * (1 + 8 * u)) ** 2))
        y = sfft.irfft(spec_total, nfft)
        # the output's error vector, in 2-norm (Parseval, the inverse carries 1/n): the
        # exact inverse of Z~ - Z, plus the inverse FFT's rounding (Higham, normwise)
        self.err2 = (math.sqrt(err_sq) + fft_rel * znorm) / math.sqrt(nfft) * (1 + 1e-6)
        if not math.isfinite(self.err2):
            raise ResourceLimitError("the FFT error bound overflowed")
        # y[p] is the mass at grid index smin + p (mod nfft): reorder to the window
        idx = np.arange(self.w_lo, self.w_hi + 1)
        self.y = y[(idx - smin) % nfft].astype(np.float64)
        self.T = idx
        self.smin, self.smax = smin, smax

    def bound(self, eps: Fraction, upper: bool) -> Fraction:
        """An upper (``upper``) or lower bound of ``sum_{T h > eps} y_T (1 - e^{eps - T h})``.

        Plus the leak (upper side; the lower measures have none).
        """
        np = _numpy()
        h = self.h
        if not upper:  # the lattice losses may exceed the true ones by `shift` in all
            eps = eps + self.shift
        if self.lam:
            return self._tilted_bound(eps, upper)
        first = math.floor(eps / h) + 1  # T h > eps
        j = max(first - self.w_lo, 0)
        hf, ef = float(h), float(eps)
        extra = 0.0
        if upper:
            extra = self.p_hi + (self.p_lo if first < self.w_lo else 0.0)
        else:
            extra = -(self.p_hi + self.p_lo)
        if j >= self.T.size:
            s = 0.0
        else:
            t = self.T[j:] * hf
            w = -np.expm1(ef - t)
            terms = self.y[j:] * w
            s = float(np.sum(terms))
            # sum_T err_T w_T <= ||err||_2 ||w||_2 (Cauchy-Schwarz; 0 <= w < 1 + eta)
            eta = 8 * _U64 * (abs(ef) + float(np.max(np.abs(t))) + 1)
            wnorm = math.sqrt(_sum_up(w * w)) + eta * math.sqrt(w.size)
            # |w~ - w| <= eta per term (the argument's rounding, 1-Lipschitz, and expm1's);
            # the products, the double y and the sum: (n + 4) u of the sum of |terms|
            slack = (
                self.err2 * wnorm * (1 + 1e-9)
                + eta * _sum_up(np.abs(self.y[j:])) * (1 + 4 * _U64)
                + (terms.size + 4) * _U64 * _sum_up(np.abs(terms))
            )
            s = s + slack if upper else s - slack
        with flint.ctx.workprec(_PREC):
            val = _arb(Fraction(s)) + _arb(Fraction(extra))
            if upper:
                val += _arb(self.leak)
                return min(_frac(val.upper()), Fraction(1))
            return max(_frac(val.lower()), Fraction(0))

    def _tilted_bound(self, eps: Fraction, upper: bool) -> Fraction:
        """:meth:`bound` of a tilted fold: the masses ``y_T`` stand for ``y_T e^{C - lam T h}``.

        Every error term of :meth:`bound` is carried with the weights ``v_T = e^{C - lam T h}
        (1 - e^{eps - T h})`` instead of ``w_T``, so that the FFT's absolute error bound
        becomes relative to the Chernoff bound ``e^{C - lam eps}`` at the query (section 15).
        """
        np = _numpy()
        h, lam, big_c = self.h, self.lam, self.logc
        first = math.floor(eps / h) + 1  # T h > eps
        j = max(first - self.w_lo, 0)
        hf, ef = float(h), float(eps)
        u = _U64
        if self._tilt_cache is None:  # the arrays that do not depend on eps
            t_all = self.T * hf
            arg_all = big_c - lam * t_all  # decreasing (lam > 0)
            rel_g = 16 * u * (abs(big_c) + lam * float(np.max(np.abs(t_all))) + 2)
            absy_all = np.abs(self.y)
            # suffix sums of |y| (sequential, so each within (n + 3) u of the exact sum)
            grow = 1 + (t_all.size + 3) * u

            def suffix(x: np.ndarray) -> np.ndarray:
                return np.append(np.cumsum(x[::-1])[::-1], 0.0) * grow

            s_y = suffix(absy_all)
            sums = None
            if float(arg_all[0] - arg_all[-1]) < 300 * math.log(2):  # no weight subnormal
                g0 = np.exp(arg_all - arg_all[0])  # in units of e^{arg_all[0]}
                sums = (suffix(g0 * g0), suffix(absy_all * g0))
            self._tilt_cache = (t_all, arg_all, absy_all, rel_g, s_y, sums)
        t_all, arg_all, absy_all, rel_g, s_y, sums = self._tilt_cache
        # weights in units of e^shift, shift the largest exponent at this query (a double):
        # those below 2^-60 are dropped (each counted as `drop`), none is subnormal
        shift = float(arg_all[min(j, arg_all.size - 1)])
        drop = 2.0**-59  # >= a dropped weight (2^-60 and the exponent's rounding)
        tiny = 2.0**-399  # >= any rounding below the normal range

        def expo(x: float) -> float:  # >= e^(x - shift) for the exact x this approximates
            x = x - shift + 1e-12 * (abs(x) + abs(big_c) + abs(shift) + 1)
            return math.inf if x > 700 else math.exp(x) * (1 + 1e-12) + tiny

        # the mass outside the window: its weights are at most these
        g_hi = expo(big_c - lam * (self.w_hi + 1) * hf)
        g_eps = expo(big_c - lam * ef)
        if upper:
            extra = self.p_hi * g_hi + (self.p_lo * g_eps if first < self.w_lo else 0.0)
        else:
            extra = -(self.p_hi + self.p_lo) * g_eps
        if not math.isfinite(extra):
            return Fraction(1) if upper else Fraction(0)
        s = 0.0
        if j < self.T.size:
            n = self.T.size - j
            # terms j..k-1 keep their weight, the rest (below 2^-60) are dropped
            k = j + int(np.searchsorted(-(arg_all[j:] - shift), 60 * math.log(2)))
            k = max(k, j + 1)
            t, y, absy = t_all[j:k], self.y[j:k], absy_all[j:k]
            g = np.exp(arg_all[j:k] - shift)
            w = -np.expm1(ef - t)
            eta = 8 * u * (abs(ef) + max(abs(float(t_all[j])), abs(float(t_all[-1]))) + 1)
            v = g * w
            s = float(np.sum(y * v))
            # per term: |v~ - v| <= g~ (eta + 1.01 rel_g) + 2 u v~ + tiny (0 <= w <= 1 + eta);
            # its 2-norm and its sum against |y| by the triangle inequality
            e_g = eta + 1.01 * rel_g
            vv, yv = _dot_up(v, v), _dot_up(absy, v)
            ysum = float(s_y[j])
            if sums is not None:  # cached in units of e^{arg_all[0]}: rescale, rounding up
                r = math.exp(float(arg_all[0]) - shift) * (1 + 1e-12)
                gg, yg = float(sums[0][j]) * r * r * (1 + 1e-12), float(sums[1][j]) * r
            else:
                gg, yg = _dot_up(g, g), _dot_up(absy, g)
            vnorm = math.sqrt(vv) * (1 + 1e-9)
            # a dropped term's weight is off by at most `drop`
            err_norm = e_g * math.sqrt(gg) * (1 + 1e-9) + 2 * u * vnorm + drop * math.sqrt(n)
            slack = (
                self.err2 * (vnorm + err_norm) * (1 + 1e-9)
                + (e_g * yg + 2 * u * yv + drop * ysum) * (1 + 4 * u)
                + (n + 4) * u * yv  # the sum's rounding: sum |y v| (n + 4) u
                + (n + 4) * tiny * (1 + ysum)
            )
            s = s + slack if upper else s - slack
        with flint.ctx.workprec(_PREC):
            val = (_arb(Fraction(s)) + _arb(Fraction(extra))) * _arb(Fraction(shift)).exp()
            if upper:
                val += _arb(self.leak)
                return min(_frac(val.upper()), Fraction(1))
            return max(_frac(val.lower()), Fraction(0))

    def estimate(self, eps: float) -> float:
        """A float value of the sum (no error terms): to place bisections only."""
        np = _numpy()
        first = math.floor(eps / float(self.h)) + 1
        j = max(first - self.w_lo, 0)
        if j >= self.T.size:
            return float(self.leak)
        if not self.lam:  # suffix sums of y and y e^{-T h}: sum y_T (1 - e^{eps - T h})
            if self._est_cache is None:
                with np.errstate(over="ignore", under="ignore"):
                    z = self.y * np.exp(-np.minimum(self.T * float(self.h), 700.0))
                self._est_cache = (
                    np.cumsum(self.y[::-1])[::-1], np.cumsum(z[::-1])[::-1]
                )
            ys, zs = self._est_cache
            return float(ys[j] - math.exp(min(eps, 700.0)) * zs[j]) + float(self.leak)
        t = self.T[j:] * float(self.h)
        w = -np.expm1(eps - t)
        if self.lam:
            with np.errstate(over="ignore", under="ignore"):
                w = w * np.exp(self.logc - self.lam * t)
        return float(np.sum(self.y[j:] * w)) + float(self.leak)


def _tilt(m: _Measure, lam: float, hf: float, upper: bool) -> tuple[_Measure, float]:
    """``m`` tilted by ``e^{lam l}`` and scaled by ``e^{-c}``: ``(tilted measure, c)``.

    The masses ``p_j e^{lam (offset + j) h - c}`` are computed as ``exp(log p_j + lam i h -
    c)`` in doubles and widened by twice a bound of their relative rounding error (up for an
    upper measure, down for a lower one), so the tilted upper (lower) measure dominates (is
    dominated by) the exact tilt of ``m``; ``c`` is a double (exact), about the log of the
    tilted total.  The leak is not tilted (the caller adds the untilted one).
    """
    np = _numpy()
    c = _log_mgf(m, hf, lam)
    out = np.zeros(m.masses.size)
    nz = np.nonzero(m.masses)[0]
    if nz.size and math.isfinite(c):
        lp = np.log(m.masses[nz])
        li = lam * (m.offset + nz) * hf
        with np.errstate(under="ignore"):
            t = np.exp(lp + li - c)
        # log, products, sums and exp: relative error <= 8 u (|log p| + |lam i h| + |c| + 2)
        rel = 8 * _U64 * (np.abs(lp) + np.abs(li) + abs(c) + 2)
        tiny = 2.0**-1070
        out[nz] = t * (1 + 2 * rel) + tiny if upper else np.maximum(t * (1 - 2 * rel) - tiny, 0)
    return _Measure(out, m.offset, Fraction(0), m.shift), c


class _Tilted:
    """One direction of a composition, tilted at ``lam``: certified bounds of small deltas.

    The upper and lower lattice measures (of the deep grid, :func:`cell_masses` with
    ``deep``, for tiny deltas) are tilted (:func:`_tilt`) and composed (:class:`_Fold`, in
    long doubles when ``long``); the untilted leak is added to the upper bound.  Both folds
    answer :meth:`_Fold.bound`.
    """

    def __init__(
        self, deep: Sequence[tuple[dict[str, Any], int]], direction: str, lam: float,
        h: Fraction, long: bool = True,
    ) -> None:
        hf = float(h)
        folds = {}
        for side, upper in (("up", True), ("lo", False)):
            name = f"{direction}_{side}"
            parts = [(c[name], k) for c, k in deep]
            tilted = [(_tilt(m, lam, hf, upper), k) for m, k in parts]
            fold = _Fold([(tm, k) for (tm, _), k in tilted], h, long=long)
            fold.lam = lam
            fold.logc = math.fsum(k * c for (_, c), k in tilted)
            fold.leak = _composed_leak(parts) if upper else Fraction(0)
            folds[side] = fold
        self.up, self.lo = folds["up"], folds["lo"]


def _saddle(parts: Sequence[tuple[_Measure, int]], hf: float, eps: float) -> float:
    """The tilt ``lam >= 0`` minimising ``sum k log M(lam) - lam eps`` (floats: a choice)."""

    def f(lam: float) -> float:
        return sum(k * _log_mgf(m, hf, lam) for m, k in parts) - lam * eps

    a, b = 0.0, 1.0
    while b < 4096 and f(2 * b) < f(b):
        b *= 2
    b = 2 * b
    g = (math.sqrt(5) - 1) / 2
    x1, x2 = b - g * (b - a), a + g * (b - a)
    f1, f2 = f(x1), f(x2)
    for _ in range(40):
        if f1 < f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - g * (b - a)
            f1 = f(x1)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + g * (b - a)
            f2 = f(x2)
    return (a + b) / 2


def _golden(f: Any, a: float, b: float, steps: int = 40) -> float:
    """A minimiser of ``f`` on ``[a, b]`` (golden sections on the log scale; a choice)."""
    la, lb = math.log(a), math.log(b)
    g = (math.sqrt(5) - 1) / 2
    x1, x2 = lb - g * (lb - la), la + g * (lb - la)
    f1, f2 = f(math.exp(x1)), f(math.exp(x2))
    for _ in range(steps):
        if f1 < f2:
            lb, x2, f2 = x2, x1, f1
            x1 = lb - g * (lb - la)
            f1 = f(math.exp(x1))
        else:
            la, x1, f1 = x1, x2, f2
            x2 = la + g * (lb - la)
            f2 = f(math.exp(x2))
    return math.exp((la + lb) / 2)


def _bisect_estimate(fold: _Fold, d: float) -> float:
    """A float eps where the fold's estimate crosses ``d`` (to place the certification)."""
    a, b = 0.0, 1.0
    while fold.estimate(b) > d:
        a, b = b, 2 * b
        if b > 1e6:
            raise ResourceLimitError(f"eps({d}) is beyond the grid of this composition")
    for _ in range(50):
        mid = (a + b) / 2
        a, b = (mid, b) if fold.estimate(mid) > d else (a, mid)
    return b


def _power(spec: np.ndarray, k: int) -> np.ndarray:
    """``spec ** k`` by repeated squaring (at most 2 log2 k products per entry)."""
    out: np.ndarray | None = None
    base = spec.copy()
    e = k
    while e:
        if e & 1:
            out = base.copy() if out is None else out * base
        e >>= 1
        if e:
            base = base * base
    assert out is not None
    return out


# ---------------------------------------------------------------------------------------
# the result


class _LazyFolds:
    """The four folds of a composition by name (``fwd_up``, ...), each built when first used.

    A direction that cannot decide a query never pays for its lower fold.
    """

    def __init__(self, cells: list[tuple[dict[str, Any], int]], h: Fraction) -> None:
        self._cells, self._h = cells, h
        self._built: dict[str, _Fold] = {}

    def __getitem__(self, name: str) -> _Fold:
        if name not in self._built:
            self._built[name] = _Fold([(c[name], n) for c, n in self._cells], self._h)
        return self._built[name]


class NoiseGridComposition(EnclosureRows):
    """Certified two-sided bounds of compositions of subsampled Gaussian/Laplace mechanisms.

    ``delta(eps)`` and ``epsilon(delta)`` are interval Values: the lower end from the
    optimistic lattice measures, the upper end from the connect-the-dots ones (section 15).

    Args:
        kinds: ``[(SubsampledNoise, count), ...]``.
        h: the loss grid width.
        label: what was composed, for ``repr``.
    """

    kind = Exactness.BOUNDS
    no_list = (
        "a composition with subsampled mechanisms has two directions and no single constraint list"
    )

    def __init__(
        self,
        kinds: Sequence[tuple[SubsampledNoise, int]],
        h: Fraction = DEFAULT_GRID,
        label: str = "",
    ) -> None:
        items = [(m, int(n)) for m, n in kinds if n]
        if not items:
            raise InvalidParameterError("nothing to compose: every count is 0")
        self.kinds = items
        self.h = Fraction(h)
        self.label = label
        cells = [(cell_masses(m, self.h), n) for m, n in items]
        self.folds = _LazyFolds(cells, self.h)
        self._tilts: dict[tuple[str, float, bool], _Tilted] = {}

    def delta_bounds(
        self, eps: Fraction, eps_hi: Fraction | None = None
    ) -> tuple[Fraction, Fraction]:
        """``(lower, upper)`` rationals enclosing ``delta`` at every eps in ``[eps, eps_hi]``."""
        f = self.folds
        top = eps if eps_hi is None else eps_hi
        ups = {d: f[f"{d}_up"].bound(eps, True) for d in ("fwd", "rev")}
        ends: dict[str, tuple[Fraction, Fraction]] = {}
        best = Fraction(0)
        for d in sorted(ups, key=lambda d: -ups[d]):  # a direction whose upper bound is at
            low = Fraction(0)  # most the other's lower one cannot raise the lower end: its
            if ups[d] > best:  # lower fold is not built (0 is a lower bound)
                low = f[f"{d}_lo"].bound(top, False)
            best = max(best, low)
            ends[d] = (low, ups[d])
        hi = max(e[1] for e in ends.values())
        if 0 < hi < TILT_REGULAR:  # small: the absolute error terms matter, tilt
            deep = hi < TILT_BELOW
            for d in sorted(ends, key=lambda d: -ends[d][1]):
                if ends[d][1] < max(e[0] for e in ends.values()) or ends[d][1] == 0:
                    continue  # this direction cannot decide either end
                t = self._tilted(d, eps, deep)
                lo_t, hi_t = t.lo.bound(top, False), t.up.bound(eps, True)
                ends[d] = (max(ends[d][0], lo_t), min(ends[d][1], hi_t))
            hi = max(e[1] for e in ends.values())
        lo = max(e[0] for e in ends.values())
        return min(lo, hi), hi

    def _tiny_epsilon(self, d: Fraction) -> Value:
        """``eps(d)`` for a tiny ``d``: each direction tilted near its own answer.

        The tilt is the Chernoff bound's best ``lam`` for ``d``, then the saddle point of the
        tilted fold's estimate of ``eps(d)``; the bounds are those of the untilted folds
        intersected with the tilted ones (all certified, so the intersection is).
        """
        deep = [(cell_masses(m, self.h, deep=True), n) for m, n in self.kinds]
        hf, logd = float(self.h), math.log(float(d))
        f = self.folds
        tilts = {}
        guess = 0.0
        for direction in ("fwd", "rev"):
            parts = [(c[f"{direction}_up"], n) for c, n in deep]

            def chernoff(lam: float, parts: Any = parts) -> float:
                return (sum(k * _log_mgf(m, hf, lam) for m, k in parts) - logd) / lam

            lam = _golden(chernoff, 1e-3, 4096.0)
            e_dir = 0.0
            for _ in range(2):  # the Chernoff tilt, then the saddle of the estimate
                t = _Tilted(deep, direction, float(f"{lam:.3g}"), self.h)
                e_dir = _bisect_estimate(t.up, float(d))
                lam = _saddle(parts, hf, e_dir)
            tilts[direction] = t
            guess = max(guess, e_dir)

        def up(e: Fraction) -> Fraction:
            return max(
                min(f[f"{x}_up"].bound(e, True), tilts[x].up.bound(e, True)) for x in tilts
            )

        def lo(e: Fraction) -> Fraction:
            return max(
                max(f[f"{x}_lo"].bound(e, False), tilts[x].lo.bound(e, False)) for x in tilts
            )

        return certify_epsilon(up, lo, d, guess, steps=24, first_step=2.0**-30)

    def _tilted(self, direction: str, eps: Fraction | float, deep: bool) -> _Tilted:
        """The direction tilted at the saddle point of ``eps`` (cached).

        ``deep``: the deep grid in long doubles (tiny deltas); else the default grid in
        doubles (small deltas, where the untilted doubles' absolute error shows).
        """
        cells = [(cell_masses(m, self.h, deep=deep), n) for m, n in self.kinds]
        hf = float(self.h)
        lam = _saddle([(c[f"{direction}_up"], n) for c, n in cells], hf, float(eps))
        lam = float(f"{lam:.3g}")  # nearby queries share the tilt
        key = (direction, lam, deep)
        if key not in self._tilts:
            self._tilts[key] = _Tilted(cells, direction, lam, self.h, long=deep)
        return self._tilts[key]

    def delta(self, eps: Any) -> Value | list[Value]:
        """An enclosure of ``delta(eps) = max`` of the two directions."""
        if isinstance(eps, (list, tuple)):
            return [self.delta(e) for e in eps]  # type: ignore[misc]
        lo, hi = self.delta_bounds(*_eps_range(eps))
        return Value.from_interval(_arb(lo), _arb(hi))

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """An enclosure of ``eps(delta)`` (0 when ``delta(0) <= delta``)."""
        if isinstance(delta, (list, tuple)):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        d = _parse_delta(delta)
        if self.delta_bounds(Fraction(0))[1] <= d:
            return Value.from_rational(0)
        if d < TILT_BELOW:
            return self._tiny_epsilon(d)
        f = self.folds

        def crossing(est: Any) -> float:
            """A float eps where ``est`` crosses ``d`` (to 2^-32: it places the search)."""
            a, b = 0.0, 1.0
            while est(b) > float(d):
                a, b = b, 2 * b
                if b > 1e6:
                    raise ResourceLimitError(f"eps({d}) is beyond the grid of this composition")
            for _ in range(32):
                mid = (a + b) / 2
                a, b = (mid, b) if est(mid) > float(d) else (a, mid)
            return b

        b = crossing(lambda x: max(f["fwd_up"].estimate(x), f["rev_up"].estimate(x)))
        near = [y for y in ("fwd", "rev") if f[f"{y}_up"].estimate(b) > float(d) / 2]
        b_lo = crossing(
            lambda x: max(
                f[f"{y}_lo"].estimate(x + float(f[f"{y}_lo"].shift)) for y in near or ["fwd"]
            )
        )
        folds = {x: (f[f"{x}_up"], f[f"{x}_lo"]) for x in ("fwd", "rev")}
        if d < TILT_REGULAR:  # tilt each direction that can decide an end: one whose
            # certified upper bound a little below both guesses is below d decides neither
            # (its delta, below d there and beyond, neither breaks delta <= d nor makes
            # delta > d); it stays untilted (a tilt is two more folds)
            low = Fraction(max(min(b, b_lo) * (1 - 1e-3) - 1e-6, 0.0))
            for x in folds:
                if f[f"{x}_up"].estimate(b) > float(d) / 2 and f[f"{x}_up"].bound(low, True) >= d:
                    t = self._tilted(x, b, False)
                    folds[x] = (t.up, t.lo)
        # the direction larger at the guess first; a bound past d decides the comparison
        # alone (the max is past d too), so the other is not computed
        order = sorted(folds, key=lambda x: -f[f"{x}_up"].estimate(b))

        def up(e: Fraction) -> Fraction:
            v = Fraction(0)
            for x in order:
                v = max(v, folds[x][0].bound(e, True))
                if v > d:
                    break
            return v

        def lo(e: Fraction) -> Fraction:
            v = Fraction(0)
            for i, x in enumerate(order):
                if i and folds[x][0].bound(e, True) <= d:
                    continue  # its lower bound is <= d too: it cannot make the max > d
                v = max(v, folds[x][1].bound(e, False))
                if v > d:
                    break
            return v

        return certify_epsilon(up, lo, d, b, steps=8, first_step=2.0**-20, guess_lo=b_lo)

    def leak_upper(self) -> float:
        """A double >= ``delta`` at infinite eps (the tails the grid put at +inf)."""
        leak = max(self.folds["fwd_up"].leak, self.folds["rev_up"].leak)
        v = float(leak)
        return min(1.0, math.nextafter(v, math.inf) if v else 0.0)

    def describe(self) -> str:
        """``"certified bounds (loss grid), two directions"``."""
        return "certified bounds (loss grid), two directions"

    def __repr__(self) -> str:
        return f"NoiseGridComposition({self.label or 'subsampled noise'}; certified bounds)"


def _eps_range(eps: Any) -> tuple[Fraction, Fraction]:
    """Rationals ``lo <= eps <= hi`` (equal unless eps has logarithms, e.g. ``log(2)``)."""
    from ..numbers.convert import parse_eps

    if isinstance(eps, (Fraction, int)):
        e = Fraction(eps)
        if e < 0:
            raise InvalidParameterError(f"eps = {e} is negative; valid range: eps >= 0")
        return e, e
    form = parse_eps(eps)
    if not form.logs:
        return form.rational, form.rational
    with flint.ctx.workprec(_PREC):
        ball = _arb(form.rational)
        for p, c in form.logs:
            ball += _arb(c) * flint.arb(p).log()
        return max(_frac(ball.lower()), Fraction(0)), _frac(ball.upper())


def _parse_delta(delta: Any) -> Fraction:
    from ..numbers.convert import parse_delta

    d = parse_delta(delta) if not isinstance(delta, Fraction) else delta
    if not 0 < d < 1:
        raise InvalidParameterError(f"delta = {d} must lie in (0, 1)")
    return d


def compose_noise(
    kinds: Sequence[tuple[Any, int]], h: Fraction | None = None, label: str = ""
) -> NoiseGridComposition:
    """Compose subsampled noise mechanisms (only those: one line refuses anything else).

    ``h``: the loss grid width (None: :data:`DEFAULT_GRID`, read at the call).
    """
    grid_kinds = []
    for m, count in kinds:
        pair = m.loss_pair()
        if pair.form is not PairForm.NOISE:
            raise InvalidParameterError(
                f"subsampled Gaussian/Laplace noise composes with other subsampled noise only "
                f"(certified loss grid); got {m!r} next to it"
            )
        grid_kinds.append((pair.grid_noise(), count))
    return NoiseGridComposition(grid_kinds, DEFAULT_GRID if h is None else h, label)
