"""The FFT power of lattice measures, in doubles or packed long doubles, and its error bound.

``prod_m mu_m^{*k_m}`` folded modulo ``n``: one real FFT of each measure, the ``k``-th powers
of the spectra (repeated squaring, :func:`_power`) and one inverse FFT, in doubles
(:func:`_real_power`) or in long doubles packed as ``n / 2`` complex numbers in the masses'
own buffer and untangled in place (:func:`_packed_power`, :func:`_untangle`,
:func:`_tangle`).  The error is bounded a posteriori: each forward frequency within
``phi ||x||_1`` (:func:`_fft_rel`; Higham, *Accuracy and Stability of Numerical Algorithms*,
2nd ed., section 24.1), carried through the powers as ``G ((1 + r) prod (1 + e_1/g)^k - 1)``
(:func:`_err_sq`), then the inverse transform's, in 2-norm (Parseval).  The fold that uses
it is :class:`~dpcompose_exact.engines.gridfold._Fold`.  The argument is docs/theory.md,
section 15 ("Composing", "The packed real FFT").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .gridmeasure import _U64, _Measure, _numpy, _sum_up

if TYPE_CHECKING:
    import numpy as np

__all__: list[str] = []


#: frequencies per chunk of the error terms and the powers (no spectrum-long temporaries)
_CHUNK = 1 << 14
#: frequencies per chunk of the packed FFT's untangling and its twiddles (long doubles)
_TANGLE = 1 << 12


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


def mixed_gain(total: int, nfft: int) -> float:
    """About how much smaller :func:`_mixed_power`'s error bound is than :func:`_real_power`'s.

    The ratio of their per-frequency relative terms at a modulus ``g = 1`` for ``total``
    uses at length ``nfft``: the products' rounding ``r`` and the inverse transform's
    ``phi`` in both, the forward ``k e1`` with the long doubles' ``e1_L + 2 u`` or the
    doubles' ``phi`` (a float prediction, to choose a fold's precision; never a bound).
    """
    np = _numpy()
    u, ul = float(np.finfo(np.float64).eps) / 2, float(np.finfo(np.longdouble).eps) / 2
    phi = _fft_rel(nfft, u)
    e1_l = math.sqrt(2) * _fft_rel(max(nfft // 2, 2), ul) + (7 + TWIDDLE_U) * ul
    common = (2 * total + 2) * 4 * u + phi
    return (common + total * (e1_l + 2 * u)) / (common + total * phi)


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
        raw, spec, tail, e1 = _long_spectrum(m_, nfft, tw)
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


def _long_spectrum(
    measure: _Measure, nfft: int, tw: _Twiddles
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The half spectrum of ``measure`` folded modulo ``nfft``, in long doubles, and its ``e1``.

    The packed forward transform of :func:`_packed_power`: the masses folded into one buffer
    of ``nfft`` long doubles (``raw``), one complex FFT of length ``m = nfft / 2`` in place
    and :func:`_untangle`; ``spec`` (a view of ``raw``) holds ``X_0, ..., X_{m-1}`` and
    ``tail`` ``X_m``.  Every frequency is within ``e1 = (sqrt 2 phi_m + (7 u + mu)(1 +
    phi_m) + 2 wraps u) ||x||_1`` of the exact one (``u`` the long doubles' unit roundoff;
    docs/theory.md, section 15, "The packed real FFT").
    """
    np = _numpy()
    from scipy import fft as sfft

    m = nfft // 2
    u = float(np.finfo(np.longdouble).eps) / 2
    mu = TWIDDLE_U * u
    phi = _fft_rel(m, u)
    raw = np.zeros(nfft, dtype=np.longdouble)
    _fold_into(raw, measure.masses)
    spec = raw.view(np.clongdouble)
    out = sfft.fft(spec, overwrite_x=True)
    if not np.shares_memory(out, spec):  # (scipy transforms in place: memory only)
        spec[:] = out
    del out
    tail = _untangle(spec, tw)
    wraps = -(-measure.masses.size // nfft)
    e1 = (
        math.sqrt(2) * phi + (7 * u + mu) * (1 + phi) + 2 * wraps * u
    ) * _sum_up(measure.masses) * (1 + 1e-9)
    return raw, spec, tail, e1


def _mixed_power(parts: Sequence[tuple[_Measure, int]], nfft: int) -> tuple[np.ndarray, float]:
    """:func:`_real_power` with the forward transforms in long doubles (``nfft`` even).

    Each measure's half spectrum by :func:`_long_spectrum` (within ``e1_L`` of the exact one,
    about ``2^-11`` of the doubles' ``e1``), rounded to doubles (each frequency within ``u``
    of its modulus, ``u`` the doubles' unit roundoff); the powers, the products and the
    inverse real FFT in doubles, bounded as in :func:`_real_power` with ``e1 / g`` replaced
    per frequency by ``e1_L / g + 2 u``.  The forward error then no longer dominates the
    bound: the products' rounding ``r`` does (about ``8 k u``; ``1000 k u`` was the doubles'
    forward term at ``n = 2^22``), for about the cost of one long-double transform per
    measure instead of the long doubles' powers (docs/theory.md, section 15, "The packed
    real FFT", "Long-double forward transforms").
    """
    np = _numpy()
    from scipy import fft as sfft

    assert nfft % 2 == 0
    m = nfft // 2
    u = float(np.finfo(np.float64).eps) / 2
    tw = _Twiddles(nfft)
    total = sum(k for _, k in parts)
    r = math.expm1((2 * total + 2 * len(parts)) * math.log1p(4 * u))
    spec_total = log_g = log_up = None
    for meas, k in parts:
        raw, spec, tail, e1 = _long_spectrum(meas, nfft, tw)
        del spec
        x = _complex_in_place(raw, tail)  # rounded to doubles: within u |X_L| <= 2 u g
        del raw, tail
        if log_g is None:  # not alive next to the long-double buffer
            log_g, log_up = np.zeros(m + 1), np.zeros(m + 1)
        for a in range(0, x.size, _CHUNK):
            c = slice(a, a + _CHUNK)
            g = np.abs(x[c]) * (1 + 8 * u) + 1e-300
            with np.errstate(divide="ignore"):
                log_g[c] += k * np.log(g)
            log_up[c] += k * np.log1p(e1 / g + 2 * u)
            x[c] = _power(x[c], k)
        if spec_total is None:
            spec_total = x
        else:
            spec_total *= x
        del x
    assert spec_total is not None and log_g is not None and log_up is not None
    err_sq = 2 * _err_sq(log_g, log_up, r) * (1 + 1e-9)
    del log_g, log_up
    zsq = 0.0
    for a in range(0, spec_total.size, _CHUNK):
        zsq += float(np.sum((np.abs(spec_total[a : a + _CHUNK]) * (1 + 8 * u)) ** 2))
    znorm = math.sqrt(2 * zsq * (1 + (spec_total.size + 2) * _U64))
    y = sfft.irfft(spec_total, nfft, overwrite_x=True)
    del spec_total
    err2 = (math.sqrt(err_sq) + _fft_rel(nfft, u) * znorm) / math.sqrt(nfft) * (1 + 1e-6)
    return y, err2


def _complex_in_place(raw: np.ndarray, tail: np.ndarray) -> np.ndarray:
    """The half spectrum ``X_0, ..., X_m`` as complex doubles in ``raw``'s own buffer.

    ``raw``: the buffer of :func:`_long_spectrum` (``n`` long doubles holding ``X_0, ...,
    X_{m-1}`` as long complex numbers, ``m = n / 2``; no other view of it alive), ``tail``:
    ``X_m``.  Each chunk is read before its complex doubles are written, and those of entry
    ``i`` sit below the long complex of entry ``i``, as in :func:`_doubles_in_place`; the
    buffer is then shrunk to the ``m + 1`` complex doubles (a ``realloc``): the peak is the
    buffer, not the buffer and the spectrum.  Each part is rounded to nearest.
    """
    np = _numpy()
    m = raw.size // 2
    spec = raw.view(np.clongdouble)
    out = raw.view(np.complex128)
    for a in range(0, m, _CHUNK):
        b = min(a + _CHUNK, m)
        out[a:b] = spec[a:b].astype(np.complex128)
    out[m] = tail[0].astype(np.complex128)  # (entry m's bytes: long entry m / 2's, read)
    del spec, out
    raw.resize(m + 1, refcheck=False)  # m + 1 long doubles: the bytes of m + 1 complex ones
    return raw.view(np.complex128)


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
