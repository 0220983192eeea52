"""The ``k``-fold composition of lattice measures by one FFT power, with certified error bounds.

``prod_m mu_m^{*k_m}`` is computed by one real FFT of each measure on a window of the
composed losses, the ``k``-th powers of the spectra (repeated squaring) and one inverse FFT
(:class:`_Fold`), in doubles or long doubles (there as ``n / 2`` complex numbers in the
masses' own buffer, untangled in place: :func:`_packed_power`, docs/theory.md, section 15,
"The packed real FFT").  Every floating-point error is bounded a posteriori: the forward
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

#: mass of the k-fold composition allowed outside the FFT window (Chernoff)
WINDOW_MASS = 1e-20
#: the FFTs and powers in doubles (True) or in long doubles (each with its error bound)
FFT_DOUBLE = True
#: largest FFT length
MAX_FFT = 1 << 24
#: frequencies per chunk of the error terms and the powers (no spectrum-long temporaries)
_CHUNK = 1 << 14
#: frequencies per chunk of the packed FFT's untangling and its twiddles (long doubles)
_TANGLE = 1 << 12


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

        packed = long or not FFT_DOUBLE  # long doubles: the packed real FFT, in place
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
        if packed:
            y, self.err2 = _packed_power(parts, nfft)
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
            t, y = self._t(j, k), self.y[j:k]
            absy = np.abs(y)
            g = np.exp(args(j, k) - shift)
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


def _fft_rel(n: int, u: float) -> float:
    """The factor ``phi`` of the FFT's error bound at length ``n`` and unit roundoff ``u``.

    ``4 ((1 + 10 u)^s - 1)``, ``s = ceil(log2 n) + 2`` stages (the mixed radices of the
    library covered by the two extra ones): every output of the computed transform is within
    ``phi ||x||_1`` of the exact one, and the whole output within ``phi ||X||_2`` (Higham,
    *Accuracy and Stability of Numerical Algorithms*, 2nd ed., section 24.1; docs/theory.md,
    section 15, "Composing").
    """
    stages = math.ceil(math.log2(max(n, 2))) + 2
    return 4 * math.expm1(stages * math.log1p(10 * u)) * (1 + 1e-9)


def _real_power(parts: Sequence[tuple[_Measure, int]], nfft: int) -> tuple[np.ndarray, float]:
    """``prod_m mu_m^{*k_m}`` folded modulo ``nfft``, in doubles, and its error bound ``err2``.

    One real FFT of each measure (``scipy.fft.rfft``), the powers and products of the
    spectra, one inverse real FFT; ``err2`` bounds the 2-norm of the output's error (the
    bound of the module docstring, docs/theory.md, section 15).
    """
    np = _numpy()
    from scipy import fft as sfft

    total = sum(k for _, k in parts)
    dt = np.float64
    u = float(np.finfo(dt).eps) / 2
    fft_rel = _fft_rel(nfft, u)
    spec_total = None
    log_g = log_up = None
    for m, k in parts:
        x = np.zeros(nfft, dtype=dt)
        _fold_into(x, m.masses)
        spec = sfft.rfft(x, overwrite_x=True)
        del x
        if log_g is None:  # after the transform: not alive next to its input
            log_g, log_up = np.zeros(spec.size), np.zeros(spec.size)
        # componentwise: |X~_j - X_j| <= fft_rel ||x||_1 at every frequency (the bound of
        # docs/theory.md, section 18; ||x||_1 <= sqrt(n) ||x||_2, so never looser than the
        # normwise one), plus the folding's rounding: each folded entry is a sum of at most
        # `wraps` masses, off by at most 2 wraps u of them in all
        wraps = -(-m.masses.size // nfft)
        e1 = (fft_rel + 2 * wraps * u) * _sum_up(m.masses) * (1 + 1e-9)
        # by chunks of frequencies (no spectrum-long temporaries): the moduli's logs,
        # and the k-th power in place
        for a in range(0, spec.size, _CHUNK):
            c = slice(a, a + _CHUNK)
            g = np.abs(spec[c]).astype(np.float64) * (1 + 8 * u) + 1e-300
            with np.errstate(divide="ignore"):
                log_g[c] += k * np.log(g)
            log_up[c] += k * np.log1p(e1 / g)  # not log(g + e1): e1 may be below g's ulp
            spec[c] = _power(spec[c], k)
        if spec_total is None:
            spec_total = spec
        else:
            spec_total *= spec
        del spec
    assert spec_total is not None and log_g is not None and log_up is not None
    # |Z~ - Z| <= G ((1+r) prod (1 + e1/g)^k - 1), G = prod g^k, r: the products' rounding
    r = math.expm1((2 * total + 2 * len(parts)) * math.log1p(4 * u))
    err_sq = 2 * _err_sq(log_g, log_up, r) * (1 + 1e-9)
    del log_g, log_up
    # sum |Z~|^2 by chunks, rounded up as _sum_up rounds (any summation order)
    zsq = 0.0
    for a in range(0, spec_total.size, _CHUNK):
        zsq += float(np.sum((np.abs(spec_total[a : a + _CHUNK]).astype(np.float64)
                             * (1 + 8 * u)) ** 2))
    znorm = math.sqrt(2 * zsq * (1 + (spec_total.size + 2) * _U64))
    y = sfft.irfft(spec_total, nfft, overwrite_x=True)
    del spec_total
    # the output's error vector, in 2-norm (Parseval, the inverse carries 1/n): the
    # exact inverse of Z~ - Z, plus the inverse FFT's rounding (Higham, normwise)
    err2 = (math.sqrt(err_sq) + fft_rel * znorm) / math.sqrt(nfft) * (1 + 1e-6)
    return y, err2


#: ``pi`` to 40 digits (a long double within one rounding of it)
_PI = "3.141592653589793238462643383279502884197"
#: a bound of the twiddles' error ``|omega~^k - omega^k|`` of :class:`_Twiddles`, in units of
#: the long doubles' unit roundoff (docs/theory.md, section 15, "The packed real FFT")
TWIDDLE_U = 40


class _Twiddles:
    """``omega^k = e^{-2 pi i k / n}``, ``0 <= k <= n / 2``, by chunks of :data:`_TANGLE`.

    A table of ``omega^j`` for ``j < _TANGLE`` and one ``omega^a`` per chunk, multiplied:
    each ``omega^j`` is ``cos(t) - i sin(t)`` at ``t = 2 pi j / n <= pi`` rounded (the
    argument within ``3.02 u t <= 9.5 u``; ``cosl``, ``sinl`` within 2 units in the last
    place, twice the largest error glibc's manual lists for them on x86-64), so within
    ``15.2 u``, and the product within ``33.3 u`` (``sqrt 2 gamma_2`` for the complex
    product; Higham, 2nd ed., Lemma 3.5): :data:`TWIDDLE_U` units ``u`` in all.
    """

    def __init__(self, n: int) -> None:
        np = _numpy()
        self.n = n
        self.two_pi = 2 * np.longdouble(_PI)
        self.table = self._direct(np.arange(min(_TANGLE, n // 2 + 1)))

    def _direct(self, k: np.ndarray) -> np.ndarray:
        np = _numpy()
        t = self.two_pi * k.astype(np.longdouble) / np.longdouble(self.n)
        w = np.empty(k.size, dtype=np.clongdouble)
        w.real = np.cos(t)
        w.imag = -np.sin(t)
        return w

    def chunk(self, a: int, b: int) -> np.ndarray:
        """``omega^k`` for ``a <= k < b`` (``b - a <= _TANGLE``, ``b <= n / 2 + 1``)."""
        base = self._direct(_numpy().array([a]))
        return self.table[: b - a] * base[0]


def _untangle(spec: np.ndarray, tw: _Twiddles) -> np.ndarray:
    """The half spectrum of ``x`` from the FFT ``Z`` of ``z_j = x_{2j} + i x_{2j+1}``, in place.

    ``X_k = E_k + omega^k O_k`` with ``E_k = (Z_k + conj Z_{m-k}) / 2`` and ``O_k = (Z_k -
    conj Z_{m-k}) / (2i)`` (``m = n / 2``, indices mod ``m``): ``spec`` becomes ``X_0, ...,
    X_{m-1}``, and ``X_m`` is returned (an array of one entry).  With ``A = Z_k + conj
    Z_{m-k}``, ``C = i omega^k (Z_k - conj Z_{m-k})``: ``X_k = (A - C) / 2``, ``X_{m-k} =
    conj(A + C) / 2``.
    """
    np = _numpy()
    m = spec.size
    z0 = spec[0]
    tail = np.array([z0.real - z0.imag], dtype=np.clongdouble)
    spec[0] = z0.real + z0.imag
    half = m // 2
    for a in range(1, half + 1, _TANGLE):
        b = min(a + _TANGLE, half + 1)
        zk = spec[a:b].copy()
        zc = np.conj(spec[m - b + 1 : m - a + 1][::-1])
        big_a, big_c = zk + zc, (zk - zc) * tw.chunk(a, b) * 1j  # (times i: exact)
        del zk, zc
        spec[a:b] = (big_a - big_c) * 0.5
        spec[m - b + 1 : m - a + 1] = np.conj(big_a + big_c)[::-1] * 0.5
    return tail


def _tangle(spec: np.ndarray, tail: np.ndarray, tw: _Twiddles) -> None:
    """The inverse of :func:`_untangle`, in place: ``Z_k = E_k + i O_k`` from ``X_0, ..., X_m``.

    ``E_k = (X_k + conj X_{m-k}) / 2``, ``O_k = (X_k - conj X_{m-k}) omega^{-k} / 2`` (the
    Hermitian extension of the half spectrum, the imaginary parts of ``X_0`` and ``X_m``
    dropped as an inverse real FFT drops them): the inverse FFT of length ``m`` of ``Z`` is
    ``y_{2j} + i y_{2j+1}``.  With ``A = X_k + conj X_{m-k}``, ``D = i conj(omega^k) (X_k -
    conj X_{m-k})``: ``Z_k = (A + D) / 2``, ``Z_{m-k} = conj(A - D) / 2``.
    """
    np = _numpy()
    m = spec.size
    x0, xm = spec[0].real, tail[0].real
    spec.real[0] = (x0 + xm) * 0.5
    spec.imag[0] = (x0 - xm) * 0.5
    half = m // 2
    for a in range(1, half + 1, _TANGLE):
        b = min(a + _TANGLE, half + 1)
        xk = spec[a:b].copy()
        xc = np.conj(spec[m - b + 1 : m - a + 1][::-1])
        big_a, big_d = xk + xc, (xk - xc) * np.conj(tw.chunk(a, b)) * 1j
        del xk, xc
        spec[a:b] = (big_a + big_d) * 0.5
        spec[m - b + 1 : m - a + 1] = np.conj(big_a - big_d)[::-1] * 0.5


def _spectrum_chunks(spec: np.ndarray, tail: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """The half spectrum ``X_0, ..., X_m`` (``spec`` and ``tail``) as views of chunks."""
    m = spec.size
    out = [(a, spec[a : a + _CHUNK]) for a in range(0, m, _CHUNK)]
    return out + [(m, tail)]


def _packed_power(parts: Sequence[tuple[_Measure, int]], nfft: int) -> tuple[np.ndarray, float]:
    """:func:`_real_power` in long doubles, in one buffer of ``nfft`` long doubles per measure.

    The real FFT of length ``n`` is one complex FFT of length ``m = n / 2`` of the input
    read as ``z_j = x_{2j} + i x_{2j+1}`` (the buffer itself, in place) and
    :func:`_untangle`; the powers are taken in place; the inverse is :func:`_tangle` and one
    inverse complex FFT in place, whose output read as long doubles is ``y`` (returned: the
    buffer).  No spectrum-long array besides the buffers (the error terms of one measure by
    chunks).  The error bound (docs/theory.md, section 15, "The packed real FFT"): each
    forward frequency within ``e1 = (sqrt 2 phi_m + (7 u + mu)(1 + phi_m)) ||x||_1`` (the
    complex transform's ``phi_m ||z||_1``, ``||z||_1 <= ||x||_1``, through the untangling,
    whose coefficients have moduli summing to at most ``sqrt 2``, plus its rounding,
    ``(7 u + mu) / 2`` of ``|Z~_k| + |Z~_{m-k}|``; ``mu`` the twiddles'); the output
    within ``(sqrt(err_sq) + (phi_m + 8 u + mu) ||X~||_2) / sqrt n`` in 2-norm.
    """
    np = _numpy()
    from scipy import fft as sfft

    assert nfft % 2 == 0
    m = nfft // 2
    u = float(np.finfo(np.longdouble).eps) / 2
    mu = TWIDDLE_U * u
    phi = _fft_rel(m, u)
    tw = _Twiddles(nfft)
    total = sum(k for _, k in parts)
    # the products' rounding: |Z~ - Z| <= G ((1+r) prod (1 + e1/g)^k - 1), G = prod g^k
    r = math.expm1((2 * total + 2 * len(parts)) * math.log1p(4 * u))
    # |.| of a long double complex, then a double: rounded up by this factor
    up = 1 + 8 * u + 2 * _U64
    single = len(parts) == 1
    raw_total = spec_total = tail_total = None
    log_g = log_up = None
    err_sq = 0.0
    for m_, k in parts:
        raw = np.zeros(nfft, dtype=np.longdouble)
        _fold_into(raw, m_.masses)
        spec = raw.view(np.clongdouble)
        out = sfft.fft(spec, overwrite_x=True)
        if not np.shares_memory(out, spec):  # (scipy transforms in place: memory only)
            spec[:] = out
        del out
        tail = _untangle(spec, tw)
        wraps = -(-m_.masses.size // nfft)
        e1 = (
            math.sqrt(2) * phi + (7 * u + mu) * (1 + phi) + 2 * wraps * u
        ) * _sum_up(m_.masses) * (1 + 1e-9)
        if not single and log_g is None:
            log_g, log_up = np.zeros(m + 1), np.zeros(m + 1)
        for a, c in _spectrum_chunks(spec, tail):
            g = np.abs(c).astype(np.float64) * up + 1e-300
            with np.errstate(divide="ignore"):
                lg = k * np.log(g)
            lu = k * np.log1p(e1 / g)  # not log(g + e1): e1 may be below g's ulp
            if single:
                err_sq += _err_sq(lg, lu, r)
            else:
                log_g[a : a + c.size] += lg
                log_up[a : a + c.size] += lu
            c[:] = _power(c, k)
        if spec_total is None:
            raw_total, spec_total, tail_total = raw, spec, tail
        else:
            for (_, c), (_, d) in zip(
                _spectrum_chunks(spec_total, tail_total), _spectrum_chunks(spec, tail)
            ):
                c *= d
        del raw, spec, tail
    assert raw_total is not None and spec_total is not None and tail_total is not None
    if not single:
        err_sq = _err_sq(log_g, log_up, r)
        del log_g, log_up
    err_sq = 2 * err_sq * (1 + 1e-9)
    zsq = 0.0  # sum |Z~|^2 over the half spectrum, rounded up (any summation order)
    for _, c in _spectrum_chunks(spec_total, tail_total):
        zsq += float(np.sum((np.abs(c).astype(np.float64) * up) ** 2))
    znorm = math.sqrt(2 * zsq * (1 + (m + 3) * _U64))
    _tangle(spec_total, tail_total, tw)
    out = sfft.ifft(spec_total, overwrite_x=True)
    if not np.shares_memory(out, spec_total):
        spec_total[:] = out
    del out, spec_total, tail_total
    # the exact inverse of Z~ - Z (Parseval), the tangling's rounding, the inverse
    # transform's (Higham, normwise, with its 1/m), all relative to ||X~||_2
    err2 = (math.sqrt(err_sq) + (phi + 8 * u + mu) * znorm) / math.sqrt(nfft) * (1 + 1e-6)
    return raw_total, err2


def _err_sq(log_g: np.ndarray, log_d: np.ndarray, r: float) -> float:
    """``sum (prod g^k ((1 + r) prod (1 + e1/g)^k - 1))^2`` from the logs, rounded up.

    ``log_g = sum k log g`` and ``log_d = sum k log1p(e1 / g)`` per frequency (overwritten).
    With ``D = log_d + log1p(r)``, each term is ``e^{log_g + D} (-expm1(-D))``: no overflow
    where ``g`` is tiny and ``e1 / g`` huge, and no cancellation where ``e1`` is below an
    ulp of ``g`` (``log(g + e1) - log g`` in doubles lost ``e1`` there: a long-double fold's
    ``e1`` of about ``1e-17`` next to ``g`` near 1).  Each float step is within a few ulps,
    relative, of the term: far inside the factor ``1 + 1e-6`` its caller adds.
    """
    np = _numpy()
    with np.errstate(over="ignore", under="ignore"):
        big_d = log_d
        big_d += math.log1p(r)
        log_g += big_d
        np.exp(log_g, out=log_g)
        np.negative(big_d, out=big_d)
        np.expm1(big_d, out=big_d)
        log_g *= big_d
        log_g *= log_g  # (-x)^2: the sign of -expm1(-D) drops out
    return _sum_up(log_g)


def _doubles_in_place(y: np.ndarray, start: int, size: int) -> np.ndarray:
    """``y[(start + i) mod n]``, ``i < size``, as doubles in ``y``'s own buffer (shrunk).

    The long doubles are rounded to doubles in order, into the first half of the buffer
    (chunk by chunk: a chunk is read before its doubles are written, and the doubles of
    entry ``i`` sit below the long double of entry ``i``), rotated in place (three
    reversals), and the buffer is shrunk to the ``size`` doubles (``ndarray.resize``: a
    ``realloc``); the peak is the buffer, not the buffer and a copy.
    """
    np = _numpy()
    n = y.size
    f = y.view(np.float64)
    for a in range(0, n, _CHUNK):
        b = min(a + _CHUNK, n)
        f[a:b] = y[a:b].astype(np.float64)
    if start:
        g = f[:n]
        _reverse(g[:start])
        _reverse(g[start:])
        _reverse(g)
        del g
    del f
    y.resize(-(-size // 2), refcheck=False)
    return y.view(np.float64)[:size]


def _fold_into(x: np.ndarray, masses: np.ndarray) -> None:
    """``x[j] = sum_{i = j mod n} masses[i]`` (``x`` of length ``n``, zeros), in place.

    Added slice by slice, in order: each entry is a float sum of at most ``ceil(size / n)``
    masses (no index arrays or converted copies of the measure's length).
    """
    n = x.size
    for a in range(0, masses.size, n):
        b = min(a + n, masses.size)
        x[: b - a] += masses[a:b]


def _reverse(a: np.ndarray) -> None:
    """Reverse the 1-D array ``a`` in place (by chunks: no copy of its length)."""
    n = a.size
    for i in range(0, n // 2, _CHUNK):
        j = min(i + _CHUNK, n // 2)
        left = a[i:j].copy()
        a[i:j] = a[n - j : n - i][::-1]
        a[n - j : n - i] = left[::-1]


#: the block of :class:`_Suffix`: suffix sums kept per block of this many entries
SUFFIX_BLOCK = 512


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


def _power(spec: np.ndarray, k: int) -> np.ndarray:
    """``spec ** k`` by repeated squaring (at most 2 log2 k products per entry)."""
    out: np.ndarray | None = None
    base = spec.copy()
    e = k
    while e:
        if e & 1:
            if out is None:
                out = base.copy() if e > 1 else base
            else:
                out *= base
        e >>= 1
        if e:
            base *= base
    assert out is not None
    return out
