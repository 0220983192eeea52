"""The ``k``-fold composition of lattice measures by one FFT power, with certified error bounds.

``prod_m mu_m^{*k_m}`` is computed by one real FFT of each measure on a window of the
composed losses, the ``k``-th powers of the spectra (repeated squaring) and one inverse FFT
(:class:`_Fold`; the power itself: :mod:`~dpcompose_exact.engines.gridfft`), in doubles or
long doubles (there as ``n / 2`` complex numbers in the masses' own buffer, untangled in
place: :func:`~.gridfft._packed_power`, docs/theory.md, section 15, "The packed real FFT").
Every floating-point error is bounded a posteriori: the forward
transforms' error ``|X~_j - X_j| <= fft_rel ||x||_1`` (Higham, *Accuracy and Stability of
Numerical Algorithms*, 2nd ed., section 24.1), carried through the powers as ``G ((1 + r)
prod (1 + e_1/g)^k - 1)``, then the inverse transform's, in 2-norm (Parseval); the mass
outside the window by a Chernoff bound ``P(T >= t) <= e^{sum k log M(lam) - lam t}``.  A
query ``sum_{T h > eps} y_T (1 - e^{eps - T h})`` then holds the exact value of the lattice
measures' composition within Cauchy-Schwarz of the error vector against the weights
(:meth:`_Fold.bound`); a tilted fold (:mod:`~dpcompose_exact.engines.gridtilt`) carries the
weights ``e^{C - lam T h}`` too, so its error is relative to the Chernoff bound at the
query.  The argument is docs/theory.md, section 15 ("Small and tiny deltas: exponential
tilting").
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

import flint

from ..errors import ResourceLimitError
from .gridfft import (
    _CHUNK,
    _PI,
    _TANGLE,
    TWIDDLE_U,
    _doubles_in_place,
    _err_sq,
    _fft_rel,
    _fold_into,
    _mixed_power,
    _packed_power,
    _power,
    _real_power,
    _reverse,
    _spectrum_chunks,
    _tangle,
    _Twiddles,
    _untangle,
)
from .gridmeasure import (
    _PREC,
    _U64,
    _arb,
    _composed_leak,
    _dot_up,
    _frac,
    _log_mgf,
    _Measure,
    _numpy,
    _sum_up,
)

if TYPE_CHECKING:
    import numpy as np

__all__: list[str] = []

#: the names kept importable from here since the split (their home: :mod:`.gridfft`)
_REEXPORTED = (
    _CHUNK, _PI, _TANGLE, TWIDDLE_U, _err_sq, _fft_rel, _fold_into, _power, _reverse,
    _spectrum_chunks, _tangle, _Twiddles, _untangle,
)

#: mass of the k-fold composition allowed outside the FFT window (Chernoff)
WINDOW_MASS = 1e-20
#: the FFTs and powers in doubles (True) or in long doubles (each with its error bound)
FFT_DOUBLE = True
#: largest FFT length
MAX_FFT = 1 << 24


class _Fold:
    """``prod_m mu_m^{*k_m}`` of lattice measures by one FFT power, with its error bounds.

    In doubles (:data:`FFT_DOUBLE`), or in long doubles when ``long`` (the tilted folds of
    tiny deltas, whose relative width follows the FFT's relative rounding), or with only the
    forward transforms in long doubles when ``mixed`` (:func:`~.gridfft._mixed_power`: the
    doubles' error bound about a hundred times smaller, for about one long-double transform).
    """

    def __init__(
        self, parts: Sequence[tuple[_Measure, int]], h: Fraction, long: bool = False,
        mixed: bool = False,
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
        #: a tilted fold's bound of its leaked outcomes' delta at ``eps`` (None: the
        #: untilted leak only; :func:`~.gridtilt.tilted_leak`)
        self.tail_bound: Callable[[Fraction], flint.arb] | None = None
        self._est_cache: tuple | None = None  # suffix sums of the float estimate
        # window: Chernoff bounds at the best of the lambdas (:data:`_LAMS`)
        cache: dict[float, float] = {}

        def logm(lam: float) -> float:
            if lam not in cache:
                cache[lam] = sum(k * _log_mgf(m, hf, lam, doubles=True) for m, k in parts)
            return cache[lam]

        smin = sum(k * m.offset for m, k in parts)
        smax = sum(k * (m.offset + m.masses.size - 1) for m, k in parts)
        w_lo, w_hi = _window(logm, hf, smin, smax)
        from scipy import fft as sfft

        long = long or not FFT_DOUBLE
        packed = long or mixed  # long doubles: the packed real FFT, in place
        width = max(w_hi - w_lo + 1, 16)
        if packed:  # an even length whose half is fast for the complex transform
            nfft = 2 * sfft.next_fast_len(-(-width // 2))
        else:
            nfft = sfft.next_fast_len(width, real=True)
        if nfft > MAX_FFT:
            # in the user's terms: the uses, and about how many fit (the window grows
            # affinely with the count: Chernoff bounds at fixed lambdas)
            raise ResourceLimitError(
                f"{total} uses of subsampled noise need a loss grid of {nfft} points at "
                f"step {float(h):.3g}, over the limit of {MAX_FFT} points: at most about "
                f"{max(1, total * MAX_FFT // nfft)} uses fit at this step; use fewer uses or "
                "a coarser grid (--grid, the grid= option)"
            )
        self.nfft = nfft
        self.w_lo, self.w_hi = w_lo, w_lo + nfft - 1
        self.w_hi = min(self.w_hi, smax)

        def chernoff(t_index: int, upper: bool) -> float:
            """Mass of the composition at indices >= t (upper) or <= t (lower)."""
            t = t_index * hf
            if upper:
                best = _scan_min(lambda lam: logm(lam) - lam * t)
            else:
                best = _scan_min(lambda lam: logm(-lam) + lam * t)
            return min(math.exp(best) * (1 + 1e-9) + 1e-300, 1.0) if best < 700 else 1.0

        self.p_hi = 0.0 if self.w_hi >= smax else chernoff(self.w_hi + 1, True)
        self.p_lo = 0.0 if self.w_lo <= smin else chernoff(self.w_lo - 1, False)
        # the power
        if long:
            y, self.err2 = _packed_power(parts, nfft)
        elif mixed:
            y, self.err2 = _mixed_power(parts, nfft)
        else:
            y, self.err2 = _real_power(parts, nfft)
        if not math.isfinite(self.err2):
            raise ResourceLimitError("the FFT error bound overflowed")
        # y[p] is the mass at grid index smin + p (mod nfft): reorder to the window (a
        # rotation: the window's first index sits at p = (w_lo - smin) mod nfft)
        size = self.w_hi - self.w_lo + 1
        start = (self.w_lo - smin) % nfft
        if y.dtype != np.float64:  # long doubles: to doubles in their own buffer
            self.y = _doubles_in_place(y, start, size)
        elif start == 0 and size == nfft:
            self.y = y
        else:
            out = np.empty(size)
            head = min(size, nfft - start)
            out[:head] = y[start : start + head]
            out[head:] = y[: size - head]
            self.y = out
        del y
        self.smin, self.smax = smin, smax

    @property
    def T(self) -> np.ndarray:  # noqa: N802 (the paper's name of the composed loss index)
        """The grid indices of the window, ``w_lo, ..., w_hi`` (made when asked)."""
        return _numpy().arange(self.w_lo, self.w_hi + 1)

    def _t(self, a: int, b: int) -> np.ndarray:
        """The losses ``T h`` of the window's entries ``a, ..., b - 1`` (``self.T[a:b] * h``)."""
        return _numpy().arange(self.w_lo + a, self.w_lo + b) * float(self.h)

    def bound(self, eps: Fraction, upper: bool) -> Fraction:
        """An upper (``upper``) or lower bound of ``sum_{T h > eps} y_T (1 - e^{eps - T h})``.

        Plus the leak (upper side; the lower measures have none).  Exactly 0 (plus the leak)
        when no lattice loss of the composition lies above ``eps`` (``smax h <= eps``): the
        exact composed measure has no mass there, whatever the FFT's error.
        """
        np = _numpy()
        h = self.h
        if not upper:  # the lattice losses may exceed the true ones by `shift` in all
            eps = eps + self.shift
        if math.floor(eps / h) + 1 > self.smax and (not upper or not self.leak):
            return Fraction(0)
        if self.lam:
            return self._tilted_bound(eps, upper)
        first = math.floor(eps / h) + 1  # T h > eps
        j = max(first - self.w_lo, 0)
        ef = float(eps)
        extra = 0.0
        if upper:
            extra = self.p_hi + (self.p_lo if first < self.w_lo else 0.0)
        else:
            extra = -(self.p_hi + self.p_lo)
        if j >= self.y.size:
            s = 0.0
        else:
            t = self._t(j, self.y.size)
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
        size = self.y.size
        t_first, t_last = self.w_lo * hf, (self.w_lo + size - 1) * hf

        def args(a: int, b: int) -> np.ndarray:  # the exponents C - lam T h of a..b-1
            return big_c - lam * self._t(a, b)

        def arg_at(i: int) -> float:  # the same double as args(i, i + 1)[0]
            return big_c - lam * (float(self.w_lo + i) * hf)

        if self._tilt_cache is None:  # the sums that do not depend on eps (per block)
            rel_g = 16 * u * (abs(big_c) + lam * max(abs(t_first), abs(t_last)) + 2)
            # suffix sums of |y| (each within (n + 3) u of the exact sum: a term passes
            # through at most BLOCK + n / BLOCK + 1 <= n + 3 additions)
            grow = 1 + (size + 3) * u
            s_y = _Suffix(lambda a, b: np.abs(self.y[a:b]), size)
            sums = None
            arg0 = arg_at(0)
            if arg0 - arg_at(size - 1) < 300 * math.log(2):  # no weight subnormal

                def g0(a: int, b: int) -> np.ndarray:  # in units of e^{arg0}
                    return np.exp(args(a, b) - arg0)

                sums = (
                    _Suffix(lambda a, b: g0(a, b) ** 2, size),
                    _Suffix(lambda a, b: np.abs(self.y[a:b]) * g0(a, b), size),
                )
            self._tilt_cache = (rel_g, grow, s_y, sums, arg0)
        rel_g, grow, s_y, sums, arg0 = self._tilt_cache
        # weights in units of e^shift, shift the largest exponent at this query (a double):
        # those below 2^-60 are dropped (each counted as `drop`), none is subnormal
        shift = arg_at(min(j, size - 1))
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
        if j < size:
            n = size - j
            # terms j..k-1 keep their weight, the rest (below 2^-60) are dropped (the
            # exponents decrease: the first index whose weight is below 2^-60, by bisection)
            cut = 60 * math.log(2)
            k = bisect.bisect_left(range(j, size), cut, key=lambda i: -(arg_at(i) - shift))
            k = max(j + k, j + 1)
            # the masses' far tail (section 15, "Small and tiny deltas"): past the first
            # index whose suffix of |y| g~ is at most TAIL_SHARE of the one from j, the terms
            # are not computed but bounded by the cached suffix sums (the weights' own cut
            # above leaves millions of terms when lam h is small)
            tail_yg = tail_gg = 0.0
            if sums is not None and k - j > TAIL_MIN:
                top = sums[1].at(j) * TAIL_SHARE
                k2 = j + 1 + bisect.bisect_left(
                    range(j + 1, k), True, key=lambda i: sums[1].at(i) <= top
                )
                if k2 < k:
                    r = math.exp(arg0 - shift) * (1 + 1e-12)
                    tail_yg = sums[1].at(k2) * grow * r
                    tail_gg = sums[0].at(k2) * grow * r * r * (1 + 1e-12)
                    k = k2
            t, y = self._t(j, k), self.y[j:k]
            absy = np.abs(y)
            g = np.exp(big_c - lam * t - shift)  # the doubles of args(j, k) - shift
            w = -np.expm1(ef - t)
            eta = 8 * u * (abs(ef) + max(abs(float(self.w_lo + j) * hf), abs(t_last)) + 1)
            v = g * w
            s = float(np.sum(y * v))
            # per term: |v~ - v| <= g~ (eta + 1.01 rel_g) + 2 u v~ + tiny (0 <= w <= 1 + eta);
            # its 2-norm and its sum against |y| by the triangle inequality
            e_g = eta + 1.01 * rel_g
            vv, yv = _dot_up(v, v), _dot_up(absy, v)
            ysum = s_y.at(j) * grow
            if sums is not None:  # cached in units of e^{arg0}: rescale, rounding up
                r = math.exp(arg0 - shift) * (1 + 1e-12)
                gg = sums[0].at(j) * grow * r * r * (1 + 1e-12)
                yg = sums[1].at(j) * grow * r
            else:
                gg, yg = _dot_up(g, g), _dot_up(absy, g)
            vnorm = math.sqrt(vv) * (1 + 1e-9)
            # a dropped term's weight is off by at most `drop`
            err_norm = e_g * math.sqrt(gg) * (1 + 1e-9) + 2 * u * vnorm + drop * math.sqrt(n)
            # the far tail's terms: 0 <= v_T <= g_T <= (1 + 2 e_g) g~_T (g~ the cached
            # weights), so their sum is at most (1 + 2 e_g) sum |y| g~ and their weights'
            # 2-norm (1 + 2 e_g) sqrt(sum g~^2); counted on both sides
            tail_norm = (1 + 2 * e_g) * math.sqrt(tail_gg) * (1 + 1e-9)
            slack = (
                self.err2 * (vnorm + err_norm + tail_norm) * (1 + 1e-9)
                + (e_g * yg + 2 * u * yv + drop * ysum + (1 + 2 * e_g) * tail_yg) * (1 + 4 * u)
                + (n + 4) * u * yv  # the sum's rounding: sum |y v| (n + 4) u
                + (n + 4) * tiny * (1 + ysum)
            )
            s = s + slack if upper else s - slack
        with flint.ctx.workprec(_PREC):
            val = (_arb(Fraction(s)) + _arb(Fraction(extra))) * _arb(Fraction(shift)).exp()
            if upper:
                leak = _arb(self.leak)
                if self.tail_bound is not None:  # the leaked outcomes, relative (section 15)
                    tb = self.tail_bound(eps)
                    if tb.upper() < leak:
                        leak = tb
                val += leak
                return min(_frac(val.upper()), Fraction(1))
            return max(_frac(val.lower()), Fraction(0))

    def estimate(self, eps: float) -> float:
        """A float value of the sum (no error terms): to place bisections only."""
        np = _numpy()
        first = math.floor(eps / float(self.h)) + 1
        j = max(first - self.w_lo, 0)
        size = self.y.size
        if j >= size:
            return float(self.leak)
        hf = float(self.h)
        far = float(max(abs(self.w_lo), abs(self.w_lo + size - 1))) * hf > 700.0
        if not self.lam and not far:  # suffix sums of y and y e^{-T h} (no exp overflows
            # below 700): sum y_T (1 - e^{eps - T h})
            if self._est_cache is None:

                def z(a: int, b: int) -> np.ndarray:
                    with np.errstate(over="ignore", under="ignore"):
                        return self.y[a:b] * np.exp(-np.minimum(self._t(a, b), 700.0))

                self._est_cache = (_Suffix(lambda a, b: self.y[a:b], size), _Suffix(z, size))
            ys, zs = self._est_cache
            return float(ys.at(j) - math.exp(min(eps, 700.0)) * zs.at(j)) + float(self.leak)
        # tilted: suffix sums of z1 = y e^{C - lam T h - a0} and z2 = z1 e^{-(T h - t0)}
        # (a0, t0 at the window's start), so that the sum is e^{a0} (z1_j - e^{eps - t0} z2_j)
        if self._est_cache is None:
            t0 = float(self.w_lo) * hf
            a0 = self.logc - self.lam * t0

            def z1(a: int, b: int) -> np.ndarray:
                with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                    return self.y[a:b] * np.exp(self.logc - self.lam * self._t(a, b) - a0)

            def z2(a: int, b: int) -> np.ndarray:
                with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                    return z1(a, b) * np.exp(-(self._t(a, b) - t0))

            self._est_cache = (_Suffix(z1, size), _Suffix(z2, size), a0, t0)
        s1, s2, a0, t0 = self._est_cache
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            v = (s1.at(j) - math.exp(min(eps - t0, 700.0)) * s2.at(j)) * math.exp(min(a0, 700.0))
        if math.isfinite(v) and a0 < 700:
            return v + float(self.leak)
        t = self._t(j, size)  # out of range in units of the window's start
        w = -np.expm1(eps - t)
        with np.errstate(over="ignore", under="ignore"):
            w = w * np.exp(self.logc - self.lam * t)
        return float(np.sum(self.y[j:] * w)) + float(self.leak)


#: the block of :class:`_Suffix`: suffix sums kept per block of this many entries
SUFFIX_BLOCK = 512
#: a tilted bound's terms past the first index whose suffix sum of ``|y| g`` is at most this
#: share of the one from the query are bounded by the cached suffix sums, not computed
#: (:meth:`_Fold._tilted_bound`; only for more than TAIL_MIN terms)
TAIL_SHARE = 2.0**-40
TAIL_MIN = 1 << 16


class _Suffix:
    """The suffix sums ``sum_{i >= j} x_i`` of an array given by its slices ``part(a, b)``.

    Only the sums of the blocks of :data:`SUFFIX_BLOCK` entries are kept (``n / BLOCK``
    doubles instead of ``n``): a query adds the block suffix to its own block's head, made
    again from ``part``.  Each entry passes through at most ``BLOCK + n / BLOCK + 1`` float
    additions (at most ``n + 3``), so a sum of non-negative entries is within ``(n + 3) u``
    of the exact one, as a sequential suffix sum is.
    """

    def __init__(self, part: Callable[[int, int], np.ndarray], n: int) -> None:
        np = _numpy()
        self.part, self.n = part, n
        b = SUFFIX_BLOCK
        blocks = np.zeros(-(-n // b) + 1)
        for a in range(0, n, b * 256):  # the entries in chunks of 256 blocks
            stop = min(n, a + b * 256)
            x = part(a, stop)
            blocks[a // b : -(-stop // b)] = np.add.reduceat(x, np.arange(0, x.size, b))
        #: after[c]: the sum of the blocks c, c + 1, ... (after[last] = 0)
        self.after = np.cumsum(blocks[::-1])[::-1]

    def at(self, j: int) -> float:
        """``sum_{i >= j} x_i`` (0 past the end)."""
        if j >= self.n:
            return 0.0
        c = -(-j // SUFFIX_BLOCK)
        end = min(c * SUFFIX_BLOCK, self.n)
        head = float(_numpy().sum(self.part(j, end))) if end > j else 0.0
        return head + float(self.after[c])


#: the Chernoff exponents of the window and of the mass outside it (up to 2^20: a narrow
#: loss law, a small rate's, has its best bound at a large exponent)
_LAMS = [2.0**e for e in range(-6, 21)]


def _scan_min(f: Callable[[float], float], hint: list | None = None) -> float:
    """The least ``f(lam)`` over :data:`_LAMS` in increasing order, stopped once it rises twice.

    The Chernoff exponents ``K(lam) - lam t`` (convex in ``lam``) and the window's ends
    ``(K(lam) - log tau) / lam`` (``lam K' - K`` is non-decreasing) are unimodal in ``lam``,
    so the scan stops past the minimum; any ``lam > 0`` gives a valid bound, so a float
    wobble that stops it early only costs tightness.  ``hint``: a one-item list holding the
    index in :data:`_LAMS` where a similar scan found its least value (or None); the scan
    then starts there and walks downhill, stopped once it rises twice, and the list gets the
    new index (a run of scans of nearby functions, :func:`fold_length` over several tilts).
    """
    if hint is not None and hint[0] is not None:
        vals: dict[int, float] = {}

        def at(i: int) -> float:
            if i not in vals:
                vals[i] = f(_LAMS[i])
            return vals[i]

        i0, last = hint[0], len(_LAMS) - 1
        step = -1 if i0 > 0 and at(i0 - 1) < at(i0) else 1
        i, rises, prev = i0, 0, at(i0)
        while 0 <= i + step <= last and rises < 2:
            i += step
            v = at(i)
            rises = rises + 1 if v > prev else 0
            prev = v
        best = min(vals, key=lambda j: vals[j])
        hint[0] = best
        return vals[best]
    best, rises, last, where = math.inf, 0, math.inf, None
    for i, lam in enumerate(_LAMS):
        v = f(lam)
        if v < best:
            best, where = v, i
        rises = rises + 1 if v > last else 0
        if rises >= 2:
            break
        last = v
    if hint is not None:
        hint[0] = where
    return best


def _window(
    logm: Callable[[float], float], hf: float, smin: int, smax: int,
    hints: tuple[list, list] | None = None,
) -> tuple[int, int]:
    """The FFT window ``[w_lo, w_hi]`` (grid indices within ``[smin, smax]``) of a fold.

    ``logm(lam)``: the log-MGF ``sum k log M(lam)`` of the composed losses; beyond the window
    the Chernoff bound at the best of :data:`_LAMS` puts at most :data:`WINDOW_MASS` on each
    side (the exact masses outside are bounded again by :class:`_Fold`: this only places it).
    ``hints``: the upper and lower ends' starting points (:func:`_scan_min`).
    """
    log_tau = math.log(WINDOW_MASS)
    h_hi, h_lo = hints if hints is not None else (None, None)
    t_hi = _scan_min(lambda lam: (logm(lam) - log_tau) / lam, h_hi)
    t_lo = -_scan_min(lambda lam: (logm(-lam) - log_tau) / lam, h_lo)
    w_hi = min(smax, math.ceil(t_hi / hf) + 1)
    w_lo = max(smin, math.floor(t_lo / hf) - 1)
    return min(w_lo, w_hi), w_hi


def fold_length(
    parts: Sequence[tuple[_Measure, int]], hf: float, lam: float, grid: float,
    hints: tuple[list, list] | None = None,
) -> int:
    """An estimate of the FFT length of the fold of ``parts`` tilted at ``lam`` on ``grid``.

    Before anything is built (to choose the grid of a query, section 15): the tilted
    measures' log-MGF is ``K(lam + l) - K(lam)`` with ``K`` that of the measures on their own
    grid ``hf``, and the window (:func:`_window`) is taken in losses and divided by ``grid``
    (a float estimate: the fold itself computes and checks its length).  ``hints``: shared by
    the calls of one search over tilts (:func:`_scan_min`: each scan starts where the last
    one found its least value).
    """
    from scipy import fft as sfft

    parts = [(m, k) for m, k in parts if k]
    cache: dict[float, float] = {}

    def big_k(x: float) -> float:
        if x not in cache:
            cache[x] = sum(k * _log_mgf(m, hf, x) for m, k in parts)
        return cache[x]

    base = big_k(lam)

    def logm(x: float) -> float:
        return big_k(lam + x) - base

    lo = sum(k * m.offset for m, k in parts) * hf
    hi = sum(k * (m.offset + m.masses.size - 1) for m, k in parts) * hf
    smin, smax = math.floor(lo / grid), math.ceil(hi / grid)
    w_lo, w_hi = _window(logm, grid, smin, smax, hints)
    return int(sfft.next_fast_len(max(w_hi - w_lo + 1, 16), real=True))
