"""Additive noise at PLD speed: Gaussian in closed form, Laplace on a certified loss grid.

Two engines for the mechanisms that dp_accounting's PLD accountant handles numerically
(docs/theory.md, section 18):

* **Gaussian.**  Any composition of Gaussian mechanisms is one Gaussian ``G_mu`` with
  ``mu^2 = sum count_i / sigma_i^2``, and ``delta(eps) = Phi(mu/2 - eps/mu) - e^eps
  Phi(-mu/2 - eps/mu)`` is evaluated in Arb: :func:`gaussian_delta` and
  :func:`gaussian_epsilon` return certified enclosures of the exact values.
* **Laplace.**  ``k`` uses of a Laplace mechanism whose loss is bounded by ``eps0``
  (``eps0 = sensitivity / b``): :class:`LaplaceGrid`.  The privacy-loss distribution is
  tilted by ``e^(-l/2)`` (which makes it symmetric: two atoms at ``+-eps0`` and a flat
  density between); the flat part is replaced, cell by cell of a grid of width
  ``h = eps0 / cells``, by the two cell ends with weights ``tanh(h/4)/2`` (they keep the
  moments ``int e^(+-l/2)``: an upper bound) or by the centres of cells that tile it,
  with weight ``sinh(w/4)`` (a lower bound).  Both are lattice measures; their ``k``-fold
  convolution is computed by one FFT power in doubles, after an exponential tilt that
  centres the part of the distribution that ``delta(eps)`` reads.  Every float error (FFT,
  power, weights, sums; the power's error is bounded from the computed spectrum) and the
  mass outside the FFT window are bounded; the two results enclose the exact
  ``delta(eps)``.  The grid's width is sized to ``k`` (:func:`auto_width`).

Both return :class:`~dpcompose_exact.numbers.value.Value` enclosures (``Value.from_interval``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers.convert import rational_ball
from ..numbers.value import Value
from ..optional import require

np: Any = None  # numpy (a core dependency), imported on first use of the Laplace grid


def _numpy() -> Any:
    """Import numpy lazily (with scipy.fft): only the noise routes need them."""
    global np
    if np is None:
        np = require("numpy", "Laplace noise (the loss grid)")
    return np


def _scipy_fft() -> Any:
    return require("scipy.fft", "Laplace noise (the loss grid)")

__all__ = [
    "certify_epsilon",
    "LaplaceGrid",
    "gaussian_delta",
    "gaussian_delta_ball",
    "gaussian_epsilon",
]

#: the grid width is at most this (0.71 x dp_accounting's default value_discretization_interval
#: 1e-4: the discretisation error is about half of its connect-the-dots error)
DEFAULT_H = Fraction(1, 14000)
#: the automatic grid width is at most ``sqrt(eps0) / ACCURACY_CELLS`` (its discretisation
#: error, second order in ``h``, stays near 1e-5 relative, a tenth of the box's goal)
ACCURACY_CELLS = 1280
#: the automatic grid is coarsened until the FFT window (14 standard deviations of the sum)
#: holds at most this many points; at such k the error relative to eps(delta) is far smaller
WINDOW_POINTS = 1 << 23
#: the coarse grid that places the tilt of an eps(delta) query has at most this many points
COARSE_POINTS = 1 << 18
#: largest FFT length (a power of two) the Laplace engine may use
MAX_FFT = 1 << 26
#: supports up to this length are convolved whole (no window, no tail bounds)
FULL_SUPPORT = 1 << 19
_PREC = 128


def _arb(q: Fraction | int) -> flint.arb:
    q = Fraction(q)
    return rational_ball(q)


def _arb_float(x: float) -> flint.arb:
    """A double (or long double) as the exact arb it is."""
    return _arb(Fraction(float(x))) if np.isfinite(x) else flint.arb("nan")


def _ld_fraction(x: Any) -> Fraction:
    """A numpy long double as the exact rational it is (two doubles carry it exactly)."""
    hi = float(x)
    lo = float(np.longdouble(x) - np.longdouble(hi))
    return Fraction(hi) + Fraction(lo)


def _hi(ball: flint.arb) -> Fraction:
    """The upper end of a ball as an exact rational."""
    man, exp = (int(v) for v in ball.upper().mid().man_exp())
    return Fraction(man) * Fraction(2) ** exp


def _lo(ball: flint.arb) -> Fraction:
    """The lower end of a ball as an exact rational."""
    man, exp = (int(v) for v in ball.lower().mid().man_exp())
    return Fraction(man) * Fraction(2) ** exp


# ---------------------------------------------------------------------------------------
# Gaussian: closed form


def gaussian_delta_ball(mu2: Fraction, eps: Fraction, bits: int) -> flint.arb:
    """A ball containing ``delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)`` of G_mu."""
    with flint.ctx.workprec(bits):
        mu = _arb(mu2).sqrt()
        x = _arb(eps)
        r2 = flint.arb(2).sqrt()

        def phi(t: flint.arb) -> flint.arb:
            return (-t / r2).erfc() / 2

        return phi(mu / 2 - x / mu) - x.exp() * phi(-mu / 2 - x / mu)


def _check_mu2(mu2: Fraction) -> Fraction:
    mu2 = Fraction(mu2)
    if mu2 <= 0:
        raise InvalidParameterError(f"mu^2 = {mu2} must be > 0")
    return mu2


def gaussian_delta(mu2: Fraction, eps: Fraction) -> Value:
    """Certified enclosure of ``delta(eps)`` of the Gaussian pair G_mu, ``mu^2 = mu2``.

    >>> v = gaussian_delta(Fraction(1), Fraction(1))
    >>> v.decimal(12)
    '0.126936737507'
    """
    mu2 = _check_mu2(mu2)
    eps = Fraction(eps)
    if eps < 0:
        raise InvalidParameterError(f"eps = {eps} is negative; valid range: eps >= 0")
    bits = _PREC
    while True:
        ball = gaussian_delta_ball(mu2, eps, bits)
        if ball.rel_accuracy_bits() >= 80 or bits >= 1 << 13:
            break
        bits *= 2
    with flint.ctx.workprec(bits):
        lo = ball.lower()
        lo = lo if lo > 0 else flint.arb(0)
        return Value.from_interval(lo, ball.upper())


def _float_root(f: Any, lo: float, hi: float, iters: int = 200) -> float:
    """Bisection for a decreasing ``f`` with ``f(lo) > 0 >= f(hi)``."""
    for _ in range(iters):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi


def certify_epsilon(
    delta_hi: Any, delta_lo: Any, target: Fraction, guess: float, steps: int = 40,
    first_step: float = 2.0**-44, guess_lo: float | None = None,
    tol: Fraction | None = None, lo_from_hi: bool = False,
) -> Value:
    """Enclose ``eps(target)`` for a decreasing delta known by upper/lower bounds.

    ``delta_hi(e)`` / ``delta_lo(e)`` return rationals; the answer ``[e1, e2]`` has
    ``delta_lo(e1) > target`` (so the exact eps is above ``e1``) and ``delta_hi(e2) <=
    target`` (so it is at most ``e2``).  Each end is found by moving away from the float
    guess (``guess_lo``, when given, for ``e1``) by ``first_step`` (relative), 4 times
    more each time, until it holds, then bisected ``steps`` times towards the guess (fewer
    once the bracket is at most ``tol``, when given).  ``lo_from_hi``: ``e1`` is sought
    from ``e2`` (when ``guess_lo`` is None): the two ends are close, and ``e2`` is nearer to
    ``e1`` than a rough guess.  The guesses and steps only place the evaluations: any give a
    certified enclosure.
    """
    step = Fraction(first_step) * Fraction(max(abs(guess), 1.0))

    def outward(ok: Any, sign: int) -> Fraction:
        """The end on side ``sign`` of the guess: ``ok`` holds there, fails just inside."""
        g = Fraction(guess if sign > 0 or guess_lo is None else guess_lo)
        good = bad = None
        if ok(max(Fraction(0), g)):
            good = max(Fraction(0), g)
        else:
            bad = g
        d = step
        for _ in range(400):
            if good is not None and bad is not None:
                break
            if good is None:  # move outwards until ok
                cand = max(Fraction(0), g + sign * d)
                if ok(cand):
                    good = cand
                else:
                    bad = cand
                    if cand == 0:
                        break
            else:  # move inwards until not ok
                cand = max(Fraction(0), g - sign * d)
                if not ok(cand):
                    bad = cand
                else:
                    good = cand
                    if cand == 0:
                        break
            d *= 4
        if good is None:
            if sign < 0:
                return Fraction(0)
            raise ResourceLimitError(f"could not certify an upper bound of eps({target})")
        if bad is None:
            return good
        for _ in range(steps):
            if tol is not None and abs(good - bad) <= tol:
                break
            mid = Fraction(float((good + bad) / 2))  # keep the numbers short
            if mid in (good, bad):
                break
            if ok(mid):
                good = mid
            else:
                bad = mid
        return good

    e2 = outward(lambda e: delta_hi(e) <= target, +1)
    if lo_from_hi and guess_lo is None:
        guess_lo = float(e2)
    e1 = outward(lambda e: e == 0 or delta_lo(e) > target, -1)
    return Value.from_interval(_arb(e1), _arb(e2))


def gaussian_epsilon(mu2: Fraction, delta: Fraction) -> Value:
    """Certified enclosure of ``eps(delta)`` of G_mu (0 when ``delta(0) <= delta``).

    >>> v = gaussian_epsilon(Fraction(1), Fraction(1, 100000))
    >>> v.decimal(10)
    '4.377178096'
    """
    mu2 = _check_mu2(mu2)
    delta = Fraction(delta)
    if not 0 < delta < 1:
        raise InvalidParameterError(f"delta = {delta} must lie in (0, 1)")

    def hi(e: Fraction) -> Fraction:
        return _hi(gaussian_delta_ball(mu2, e, 160))

    def lo(e: Fraction) -> Fraction:
        return _lo(gaussian_delta_ball(mu2, e, 160))

    if hi(Fraction(0)) <= delta:
        return Value.from_rational(0)

    def f(x: float) -> float:
        return float(gaussian_delta_ball(mu2, Fraction(x), 80).mid()) - float(delta)

    top = 1.0
    while f(top) > 0:
        top *= 2
    guess = _float_root(f, 0.0, top)
    return certify_epsilon(hi, lo, delta, guess)


# ---------------------------------------------------------------------------------------
# Laplace: certified grid


class _Lattice:
    """The tilted loss measure of one Laplace use on a grid ``h Z`` (section 18).

    The exact measure is ``e^(-eps0/2) nu`` times ``e^(l/2)``, ``nu`` of total mass
    ``1 + eps0/2``: atoms ``1/2`` at ``+-eps0`` and density ``1/4`` between.  Masses ``v_i``
    at losses ``i h``, ``|i| <= cells``.

    ``side`` "upper" (``h = eps0 / cells``): each cell's flat mass goes to its two ends with
    the weights that keep the two moments ``int e^(+-l/2)`` (each end gets ``tanh(h/4)/2``,
    rounded up): an upper bound for every ``delta(eps)``.  "lower" (``cells`` cells of width
    ``w = eps0 / cells`` on the lattice of half their width, ``h = w / 2``): the centre of
    each cell, at an odd index, with the mass ``sinh(w/4)`` that keeps both moments
    (rounded down): a lower bound.  The cells tile ``(-eps0, eps0)`` exactly, so no mass
    moves and both moments stay exact for every ``k``.
    """

    def __init__(self, eps0: Fraction, cells: int, side: str) -> None:
        self.eps0, self.side = eps0, side
        if side == "upper":
            self.cells = cells
            self.h = eps0 / cells
            with flint.ctx.workprec(_PREC):
                half = _hi((_arb(self.h) / 4).tanh() / 2)  # >= tanh(h/4)/2, a dyadic rational
            self.quarter = 2 * half
            self.ends = Fraction(1, 2) + half
        else:
            self.cells = 2 * cells  # index range: cell centres at the odd indices
            self.h = eps0 / self.cells
            with flint.ctx.workprec(_PREC):
                self.quarter = _lo((_arb(self.h) / 2).sinh())  # <= sinh(w/4), w = 2h
            self.ends = Fraction(1, 2)

    def mass(self, i: int) -> Fraction:
        n = self.cells
        if abs(i) == n:
            return self.ends
        if abs(i) > n or (self.side == "lower" and i % 2 == 0):
            return Fraction(0)
        return self.quarter

    def log_masses(self, dtype: Any) -> Any:
        n = self.cells
        out = np.full(2 * n + 1, math.log(self.quarter), dtype=dtype)
        if self.side == "lower":
            out[0::2] = -np.inf  # even indices (n is even): no cell centre
        out[0] = out[-1] = math.log(self.ends)
        return out

    def mgf(self, t: flint.arb) -> flint.arb:
        """``sum_i v_i e^(t i h)`` in Arb (exact geometric sums for the flat part)."""
        n, h = self.cells, _arb(self.h)
        if self.side == "upper":
            if t == 0:
                flat = flint.arb(2 * n - 1)
            else:
                flat = ((n - flint.arb(1) / 2) * t * h).sinh() / (t * h / 2).sinh()
        else:  # sum over j = -n/2 .. n/2 - 1 of e^((2j + 1) t h) = sinh(n t h) / sinh(t h)
            flat = flint.arb(n) if t == 0 else (n * t * h).sinh() / (t * h).sinh()
        return _arb(self.quarter) * flat + _arb(self.ends) * 2 * (t * h * n).cosh()


def _best_lambda(logb: Any, top: float = 64.0) -> float:
    """The ``lambda`` in ``(0, top]`` minimising a convex Chernoff exponent ``logb``.

    A float golden-section search: any lambda gives a valid bound, this one a small one.
    """

    def f(lam: float) -> float:
        with flint.ctx.workprec(64):
            v = float(logb(lam).mid())
        return v if math.isfinite(v) else math.inf

    a, b = 0.0, top
    g = (math.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(80):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
        if b - a < 1e-9 * max(b, 1e-6):
            break
    return round((a + b) / 2, 12) or 1e-6


class _Power:
    """``x^(*k)`` of the tilted, normalised lattice, by FFT, with its a priori error bound."""

    def __init__(
        self, lat: _Lattice, k: int, theta: float, dtype: Any, width: float, floor: float,
        estimating: bool = False,
    ) -> None:
        self.lat, self.k, self.theta, self.dtype = lat, k, theta, dtype
        self.estimating = estimating  # a float guess: no error terms, no tail bounds
        n, h = lat.cells, lat.h
        u = float(np.finfo(dtype).eps) / 2
        idx = np.arange(-n, n + 1)
        hf = dtype(float(h))
        logs = lat.log_masses(dtype) + dtype(theta) * (idx.astype(dtype) * hf)
        m = float(np.max(logs))
        a = np.exp(logs - dtype(m))
        total = np.sum(a)
        x = a / total
        # relative error of each entry of a (log, product, exp of arguments up to `big`)
        big = max(abs(math.log(float(lat.quarter))), abs(theta) * float(lat.eps0) * 2, abs(m)) + 4
        rho = 16 * u * big + 4 * u
        # x_i = a_i^exact e^-m / X (1 + err), X = the long double `total`
        self.m = m
        self.X = _ld_fraction(total)
        self.rho = rho
        mean = float(np.sum(x * idx) * float(h))
        var = float(np.sum(x * idx.astype(dtype) ** 2) * float(h) ** 2) - mean**2
        sd = math.sqrt(max(var, 1e-300) * k)
        center = k * mean
        self.center, self.sd = center, sd
        half = max(width * sd, 3.0)  # at least 3 units of loss: a small alias for the lower side
        lo = math.floor((center - half) / float(h)) - 1
        hi = math.ceil((center + half) / float(h)) + 1
        if floor < math.inf:  # the window reaches down to `floor`
            lo = min(lo, math.floor(max(floor, -n * k * float(h)) / float(h)) - 1)
        lo, hi = max(lo, -n * k), min(hi, n * k)
        if 2 * n * k + 1 <= FULL_SUPPORT and not estimating:  # small: the whole support
            lo, hi = -n * k, n * k
        length = hi - lo + 1
        sfft = _scipy_fft()

        nfft = sfft.next_fast_len(max(length, 16), real=True)
        if nfft > MAX_FFT:
            raise ResourceLimitError(
                f"the Laplace grid needs an FFT of length {nfft} > {MAX_FFT} "
                f"(eps0 = {lat.eps0}, k = {k}, h = {h})"
            )

        # (1 + a)^m - 1 as expm1(m log1p(a)), rounded up
        def grow(a: float, m: float) -> float:
            return math.expm1(m * math.log1p(a)) * (1 + 1e-9)

        s1 = float(np.sum(x)) * (1 + (2 * n + 2) * u) * (1 + 1e-15)  # >= ||x||_1
        stages = math.ceil(math.log2(nfft)) + 2
        fft_rel = grow(10 * u, stages)  # componentwise FFT error per unit of ||input||_1
        if x.size > nfft:  # fold modulo nfft: the circular convolution is the same
            folded = np.zeros(nfft, dtype=x.dtype)
            np.add.at(folded, np.arange(x.size) % nfft, x)
            spec = sfft.rfft(folded, nfft)
        else:
            spec = sfft.rfft(x, nfft)
        # the data-dependent bound of the spectral error (docs/theory.md, section 18):
        # |X~ - X| <= e1 per frequency; |P~ - X^k| <= k e1 (|X~| + e1)^(k-1) + r_k |X~|^k
        e1 = fft_rel * s1
        rel_k = grow(4 * u, 2 * k)
        safe = 1 + 1e-6  # covers the roundings of this error computation itself
        with np.errstate(under="ignore", over="ignore"):
            mag = np.abs(spec).astype(np.float64)
            up = (mag * (1 + 4 * u) + e1) * (1 + 4 * u)
            bnd = k * e1 * np.power(up, k - 1) + rel_k * np.power(mag * (1 + 4 * u), k)
            pmag = np.power(mag * (1 + 4 * u), k)
        del mag, up

        def hermitian_sum(v: Any) -> float:
            """Sum over all nfft frequencies of a quantity known on the rfft half."""
            inner = float(np.sum(v[1:-1])) if nfft % 2 == 0 else float(np.sum(v[1:]))
            ends = float(v[0]) + (float(v[-1]) if nfft % 2 == 0 else 0.0)
            return ends + 2 * inner

        bsum, psum = hermitian_sum(bnd), hermitian_sum(pmag) * (1 + rel_k)
        del bnd, pmag
        # the power by repeated squaring, in place (memory: two spectra)
        power: Any = None
        base = spec
        e = k
        while e:
            if e & 1:
                if power is None:
                    power = base.copy()
                else:
                    np.multiply(power, base, out=power)
            e >>= 1
            if e:
                np.multiply(base, base, out=base)
        del base, spec
        y = sfft.irfft(power, nfft)
        del power
        self.nfft = nfft
        # keep only the part of the window that queries read (at or above `floor`)
        keep = lo if not math.isfinite(floor) else max(lo, math.floor(floor / float(h)) - 1)
        pos = (np.arange(keep, hi + 1) + n * k) % nfft
        self.y = y[pos]
        del y, pos
        self.size = hi + 1 - keep  # entries T = keep .. hi
        self.keep = keep
        self.lo, self.hi = lo, hi
        # per entry: |y~_T - x^(*k)(T) - alias_T| <= err (the inverse transform averages the
        # spectral errors; its own rounding is fft_rel times the mean |P~|); terms of the
        # sums that underflowed are below 2^-1074 each
        tiny = float(np.finfo(np.float64).tiny) * 2.0**-52
        err = (bsum + fft_rel * psum) / nfft * (1 + 4 * u) * safe * safe + tiny * nfft * (k + 2)
        self.err = err + 4 * float(np.finfo(dtype).tiny)
        self.u = u
        # mass of x^(*k) outside the window (Chernoff, from the exact MGF)
        self.below = 0.0  # of which below the window (set by _outside)
        self.alias = 0.0 if estimating else self._outside()
        self._above_ball: flint.arb | None = None  # the part beyond the window (any eps)
        if estimating:  # not a bound any more: the float value of the grid
            self.err, self.rho = 0.0, 0.0

    def _xmgf_log(self, beta: float) -> flint.arb:
        """``log sum_i x_i e^(beta i h)``, an upper bound in Arb."""
        with flint.ctx.workprec(_PREC):
            t = _arb(Fraction(self.theta)) + _arb(Fraction(beta))
            mv = self.lat.mgf(t)
            return (
                mv.log()
                - _arb(Fraction(self.m))
                - _arb(self.X).log()
                + _arb(Fraction(self.rho)).log1p()
            )

    def _outside(self) -> float:
        """Mass of ``x^(*k)`` outside the window (both sides); ``below`` keeps the lower side."""
        k = self.k
        total = 0.0
        self.below = 0.0
        with flint.ctx.workprec(_PREC):
            for sign, edge in ((1, self.hi + 1), (-1, self.lo - 1)):
                if (sign > 0 and self.hi >= self.lat.cells * k) or (
                    sign < 0 and self.lo <= -self.lat.cells * k
                ):
                    continue
                def logb(lam: float, sign: int = sign, edge: int = edge) -> flint.arb:
                    return -sign * _arb(Fraction(lam)) * _arb(Fraction(edge)) * _arb(
                        self.lat.h
                    ) + k * self._xmgf_log(sign * lam)

                best = None
                for lam in (_best_lambda(logb), 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64):
                    bound = (
                        -sign * _arb(Fraction(lam)) * _arb(Fraction(edge)) * _arb(self.lat.h)
                        + k * self._xmgf_log(sign * lam)
                    ).exp()
                    val = float(bound.upper())
                    best = val if best is None else min(best, val)
                total += best if best is not None else 1.0
                if sign < 0:
                    self.below = min((best if best is not None else 1.0) * (1 + 1e-12), 1.0)
        return min(total * (1 + 1e-12), 1.0) if total else 0.0

    def _suffix(self) -> None:
        """Suffix sums of ``z_T p_T`` and ``z_T q_T``: delta at any eps is two look-ups.

        ``p = e^((1/2 - theta) s)``, ``q = e^(-(1/2 + theta) s)``.
        """
        dt, h = self.dtype, float(self.lat.h)
        y = self.y
        del self.y  # the suffix sums and logs are all that queries read
        # in place (memory: a few arrays of the window's length)
        y += dt(self.err) if self.lat.side == "upper" else -dt(self.err)
        np.maximum(y, 0, out=y)  # z: >= 0 unless estimating
        # doubles from here, in logs relative to the centre `ref` (no overflow): every relative
        # error below is that of a double (u64); terms that underflow are covered by `floor`
        self.ref = round(self.center, 6)
        s = np.arange(self.keep, self.keep + self.size, dtype=np.float64)
        s *= h
        s -= self.ref
        with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
            logz = np.log(y, out=y)
            buf = s * (0.5 - self.theta)
            buf += logz
            np.exp(buf, out=buf)
            self._zp = np.cumsum(buf[::-1])[::-1]
            np.multiply(s, -(0.5 + self.theta), out=buf)
            del s
            buf += logz
            np.exp(buf, out=buf)
            self._zq = np.cumsum(buf[::-1])[::-1]
            del buf
        self._logz = logz
        # relative error of z (one rounding and the log), of each exp (16 u per unit of
        # argument) and of the running sums (one u per term); absolute: underflowed terms
        u64 = Fraction(2) ** -53
        arg = (abs(self.theta) + 1) * max(abs(self.lo), abs(self.hi)) * h + abs(self.ref)
        arg += float(np.max(np.abs(logz[np.isfinite(logz)]))) if np.any(np.isfinite(logz)) else 0
        self._rel = u64 * (16 * Fraction(arg + 2) + self.size + 8) + 2 * Fraction(self.u)
        self._floor = Fraction(self.size) * Fraction(2) ** -1070

    def bound(self, eps: Fraction) -> Fraction | None:
        """Upper (side "upper") or lower (side "lower") bound of ``delta(eps)``.

        None when ``eps`` lies below the window (the tilt does not fit this eps), unless the
        tilt is ``theta = 1/2`` (the untilted loss law ``omega``, centred at its mean): there
        every loss between ``eps`` and the window weighs at most 1 (``g_eps(l) e^(-l/2) =
        (1 - e^(eps - l))_+ <= 1``), so the lower end drops those terms and the upper end
        adds their mass, at most the Chernoff bound ``below`` of the window's lower side
        (docs/theory.md, section 18).
        """
        lat, k, h = self.lat, self.k, self.lat.h
        first = math.floor(eps / h) + 1  # T with T h > eps
        under = first <= self.keep and self.keep > -lat.cells * k
        if under and (self.theta != 0.5 or self.keep != self.lo):
            return None
        if not hasattr(self, "_zp"):
            self._suffix()
        upper = lat.side == "upper"
        j = max(first - self.keep, 0)
        # cells within one unit of loss above eps: summed directly with -expm1(eps - s) (the
        # difference of the two suffix sums would cancel there); the rest by suffix sums
        band = min(self.size, j + math.ceil(1 / float(h)) + 1)
        if band < self.size and not (
            np.isfinite(self._zp[band]) and np.isfinite(self._zq[band])
        ):  # an overflow: only the trivial bounds are safe, or those of losses below eps
            if under and np.isfinite(self._zp[0]):
                return self._under_bound(eps)
            tails = self._scaled_tails(band)
            if tails is None:
                return Fraction(1) if upper else Fraction(0)
        else:
            tails = None
        # the sums read are scaled by e^-cp and e^-cq (0 unless the suffix sums overflowed)
        cp, cq = (tails[2], tails[3]) if tails is not None else (0.0, 0.0)
        u64 = 2.0**-53
        direct = slack = 0.0
        if j < band:
            sa = np.arange(self.keep + j, self.keep + band, dtype=np.float64) * float(h)
            ef = float(eps)
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                base = np.exp(self._logz[j:band] + (0.5 - self.theta) * (sa - self.ref) - cp)
                w = base * -np.expm1(ef - sa)
            # sums of non-negative doubles in any order: |fl(sum) - sum| <= g sum with
            # g = gamma_(n-1) / (1 - gamma_(n-1)), gamma_m = m u / (1 - m u) (Higham, 4.2)
            direct, total = float(np.sum(w)), float(np.sum(base))
            if not (math.isfinite(direct) and math.isfinite(total)):
                return Fraction(1) if upper else Fraction(0)
            gm = (band - j) * u64 / (1 - (band - j) * u64)
            gsum = gm / (1 - gm) * 1.01  # the extra factor covers this line's own roundings
            # the rounded argument ef - sa is off by at most 4 u (|s| + |eps| + 1)
            slack = total * (1 + gsum) * 4 * u64 * (float(np.max(np.abs(sa))) + abs(ef) + 1)
            slack += float(np.sum(np.abs(w))) * gsum
        with flint.ctx.workprec(_PREC):
            if tails is not None:
                zp, zq = _arb(Fraction(tails[0])), _arb(Fraction(tails[1]))
            elif band < self.size:
                zp = _arb(Fraction(float(self._zp[band])))
                zq = _arb(Fraction(float(self._zq[band])))
            else:
                zp = zq = flint.arb(0)
            if j < self.size:  # the largest p = e^((1/2 - theta) s) over the entries read
                top = self.keep + (j if self.theta >= 0.5 else self.size - 1)
                pmax = (
                    (flint.arb(1) / 2 - _arb(Fraction(self.theta)))
                    * (_arb(top) * _arb(h) - _arb(Fraction(self.ref)))
                ).exp()
            else:
                pmax = flint.arb(0)
            if not upper and pmax is None:
                return Fraction(0)
            # the scaling's subtraction: one more rounding of arguments up to |cp|, |cq|
            rel = _arb(self._rel + Fraction(2) ** -53 * 16 * Fraction(abs(cp) + abs(cq)))
            dirb = _arb(Fraction(direct))
            slb = _arb(Fraction(slack)) * (1 + rel) + _arb(self._floor)
            ref = _arb(Fraction(self.ref))
            theta = _arb(Fraction(self.theta))
            acp, acq = _arb(Fraction(cp)), _arb(Fraction(cq))
            undo_p = ((flint.arb(1) / 2 - theta) * ref + acp).exp()  # undo centring, scaling
            undo_q = (-(flint.arb(1) / 2 + theta) * ref + acq).exp()
            pmax = pmax * (-acp).exp()  # in the units of the scaled sums
            e = _arb(eps).exp()
            rho = _arb(Fraction(self.rho))
            scale = ((_arb(Fraction(self.m)) - _arb(lat.eps0) / 2) * k).exp()
            if upper:
                inner = undo_p * (dirb * (1 + rel) + slb + zp * (1 + rel)) - e * undo_q * zq * (
                    1 - rel
                )
                if under:  # the losses between eps and the window: p = 1 at theta = 1/2
                    inner += _arb(Fraction(self.below)) * (-acp).exp() * undo_p * (1 + rel)
                factor = scale * (_arb(self.X) / (1 - rho)) ** k
                val = factor * inner + self._above(eps)
                if not val.is_finite():
                    return Fraction(1)
                return min(_hi(val), Fraction(1)) if val.upper() > 0 else Fraction(0)
            assert pmax is not None
            inner = undo_p * (dirb * (1 - rel) - slb + zp * (1 - rel)) - e * undo_q * (
                zq * (1 + rel) + _arb(self._floor)
            )
            inner -= _arb(Fraction(self.alias)) * pmax * undo_p * (1 + rel)
            factor = scale * (_arb(self.X) / (1 + rho)) ** k
            val = factor * inner
            if not val.is_finite():
                return Fraction(0)
            return max(_lo(val), Fraction(0))

    def _scaled_tails(self, band: int) -> tuple[float, float, float, float] | None:
        """The suffix sums of ``z p`` and ``z q`` from ``band``, each scaled by its largest term.

        For a query far below a wide window's centre the running sums overflow (``q =
        e^(-(1/2 + theta) s)`` past ``e^709``): summed again from ``band`` with the largest
        exponent ``cp`` (``cq``) taken out, ``(sum_p e^-cp, sum_q e^-cq, cp, cq)``; the same
        error bounds hold (one rounding more of each argument).  None: nothing finite.
        """
        h = float(self.lat.h)
        s = np.arange(self.keep + band, self.keep + self.size, dtype=np.float64)
        s *= h
        s -= self.ref
        logz = self._logz[band:]
        out = []
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            for coef in (0.5 - self.theta, -(0.5 + self.theta)):
                arg = logz + coef * s
                fin = arg[np.isfinite(arg)]
                if not fin.size:
                    out.append((0.0, 0.0))
                    continue
                c = round(float(np.max(fin)), 6)
                total = float(np.sum(np.exp(arg - c)))
                if not math.isfinite(total):
                    return None
                out.append((total, c))
        return out[0][0], out[1][0], out[0][1], out[1][1]

    def _under_bound(self, eps: Fraction) -> Fraction:
        """Bound of ``delta(eps)`` for ``eps`` below the window at ``theta = 1/2`` (``p = 1``).

        Every loss ``l`` of the window lies above ``eps``, so ``(1 - e^(eps - l))`` lies in
        ``[1 - e^(eps - L), 1]``, ``L`` the window's lowest loss: ``delta`` is between that
        factor times the window's mass and the window's mass plus ``below`` (the mass
        between ``eps`` and the window) -- no sum of ``q = e^(-l)`` weights, which overflow
        in doubles below a wide window's centre (docs/theory.md, section 18).
        """
        lat, k = self.lat, self.k
        upper = lat.side == "upper"
        with flint.ctx.workprec(_PREC):
            rel = _arb(self._rel)
            mass = _arb(Fraction(float(self._zp[0])))
            floor = _arb(self._floor)
            rho = _arb(Fraction(self.rho))
            scale = ((_arb(Fraction(self.m)) - _arb(lat.eps0) / 2) * k).exp()
            if upper:
                inner = mass * (1 + rel) + floor + _arb(Fraction(self.below)) * (1 + rel)
                val = scale * (_arb(self.X) / (1 - rho)) ** k * inner + self._above(eps)
                if not val.is_finite():
                    return Fraction(1)
                return min(_hi(val), Fraction(1))
            low = _arb(self.keep) * _arb(lat.h)
            factor = -(_arb(eps) - low).expm1()
            inner = factor * (mass * (1 - rel) - floor) - _arb(Fraction(self.alias)) * (1 + rel)
            val = scale * (_arb(self.X) / (1 + rho)) ** k * inner
            if not val.is_finite():
                return Fraction(0)
            return max(_lo(val), Fraction(0))

    def _above(self, eps: Fraction) -> flint.arb:
        """Bound of the part of delta beyond the window: ``int_{l > H} e^(l/2) d(c nu)^(*k)``.

        It does not depend on ``eps`` (``g_eps <= e^(l/2)``): computed once per power.
        """
        if self._above_ball is None:
            self._above_ball = self._above_bound()
        return self._above_ball

    def _above_bound(self) -> flint.arb:
        lat, k = self.lat, self.k
        if self.hi >= lat.cells * k or self.estimating:
            return flint.arb(0)
        edge = _arb(self.hi) * _arb(lat.h)

        def logb(lam: float) -> flint.arb:
            t = flint.arb(1) / 2 + _arb(Fraction(lam))
            return -_arb(Fraction(lam)) * edge + k * (lat.mgf(t).log() - _arb(lat.eps0) / 2)

        best = None
        for lam in (_best_lambda(logb), 0.0, 0.25, 0.5, 1, 2, 4, 8, 16, 32):
            t = flint.arb(1) / 2 + _arb(Fraction(lam))
            val = (-_arb(Fraction(lam)) * edge + k * (lat.mgf(t).log() - _arb(lat.eps0) / 2)).exp()
            if best is None or val.upper() < best.upper():
                best = val
        return _arb(_hi(best))


def _laplace_one_delta(eps0: Fraction, eps: Fraction) -> Value:
    """One Laplace use: ``delta(eps) = 1 - e^((eps - eps0)/2)`` for ``eps <= eps0``, else 0."""
    if eps >= eps0:
        return Value.from_rational(0)
    with flint.ctx.workprec(_PREC):
        ball = 1 - ((_arb(eps) - _arb(eps0)) / 2).exp()
        return Value.from_interval(ball.lower(), ball.upper())


def _laplace_one_epsilon(eps0: Fraction, delta: Fraction) -> Value:
    """One Laplace use: ``eps(delta) = eps0 + 2 log(1 - delta)`` (0 when that is negative)."""
    with flint.ctx.workprec(_PREC):
        ball = _arb(eps0) + 2 * (1 - _arb(delta)).log()
        if ball.upper() <= 0:
            return Value.from_rational(0)
        lo = ball.lower()
        return Value.from_interval(lo if lo > 0 else flint.arb(0), ball.upper())


def loss_moments(eps0: Fraction) -> tuple[float, float]:
    """The mean and standard deviation of one Laplace loss under ``P`` (floats, to size grids).

    ``omega = e^(-eps0/2) e^(l/2) nu``: atoms ``1/2`` at ``eps0`` and ``e^(-eps0)/2`` at
    ``-eps0``, density ``e^((l - eps0)/2) / 4`` between (docs/theory.md, section 18).
    """
    e0 = float(eps0)
    xs = np.linspace(-e0, e0, 2001)
    w = np.exp((xs - e0) / 2) / 4 * (2 * e0 / 2000)
    w[0] /= 2
    w[-1] /= 2
    ps = np.concatenate((w, [0.5, math.exp(-e0) / 2]))
    ls = np.concatenate((xs, [e0, -e0]))
    mean = float(np.sum(ps * ls) / np.sum(ps))
    return mean, math.sqrt(max(float(np.sum(ps * (ls - mean) ** 2) / np.sum(ps)), 0.0))


def auto_width(eps0: Fraction, k: int) -> Fraction:
    """The grid width of ``k`` uses of Laplace noise with loss bound ``eps0``, when none is given.

    The discretisation gap is second order in ``h`` (section 18): about ``h^2 / eps0``
    relative, so ``h = sqrt(eps0) / ACCURACY_CELLS`` keeps it near ``1e-5 / (1 + eps0)``
    (never finer than :data:`DEFAULT_H`).  For a wide sum (standard deviation ``s``) the
    width grows until the FFT window of ``14 s`` holds :data:`WINDOW_POINTS` points: there
    ``eps(delta)`` is at least ``k`` times the mean loss and the gap, about ``k h^2 / s``,
    is far below its goal, and ``delta(eps)`` at ``eps <= 50`` is about 1.  A choice of
    speed only: every width gives a certified enclosure.
    """
    _numpy()
    e0 = float(eps0)
    spread = 14 * math.sqrt(k) * loss_moments(eps0)[1] / WINDOW_POINTS
    h = min(max(float(DEFAULT_H), spread), e0 / 2)
    return Fraction(h).limit_denominator(1 << 40)


class LaplaceGrid:
    """``k`` uses of a Laplace mechanism with loss bound ``eps0``: certified delta and eps.

    Args:
        eps0: ``sensitivity / b`` (times 2 under replace-one), a positive rational.
        k: number of uses.
        h: grid width upper bound (the grid is ``eps0 / cells``, ``cells = ceil(eps0 / h)``);
            None: :func:`auto_width`.
        dtype: numpy float type of the FFT (default ``float64``; the error bound is
            data-dependent, so doubles suffice).
        lower_coarsening: the lower end uses cells this many times wider (on a lattice of
            half their width: cheaper, the enclosure a little wider, the upper end
            unchanged); default 2 when the whole support fits one FFT, else 8.
        width: FFT window half-width in standard deviations of the tilted sum.

    >>> g = LaplaceGrid(Fraction(1), 3, h=Fraction(1, 2000))
    >>> lo, hi = g.delta(Fraction(1)).interval(8)
    >>> Fraction(lo) <= Fraction("0.31022604") <= Fraction(hi)  # PLD pessimistic: 0.310226048
    True
    """

    def __init__(
        self,
        eps0: Fraction,
        k: int,
        h: Fraction | None = None,
        dtype: Any = None,
        width: float = 7.0,
        lower_coarsening: int | None = None,
    ) -> None:
        _numpy()
        dtype = np.float64 if dtype is None else dtype
        eps0 = Fraction(eps0)
        if eps0 <= 0:
            raise InvalidParameterError(f"eps0 = {eps0} must be > 0")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidParameterError(f"k = {k!r} must be a positive integer")
        self.eps0, self.k = eps0, k
        h = auto_width(eps0, k) if h is None else Fraction(h)
        self.cells = max(2, math.ceil(eps0 / h))
        self.dtype, self.width = dtype, width
        self._powers: dict[tuple[str, float, float], _Power] = {}
        self._estimating = False
        self._coarse_far: LaplaceGrid | None = None  # the grid of eps far below the mean
        # the lower end (the enclosure's other side) on a coarser grid: cheaper, still a bound
        if lower_coarsening is None:  # small: a lattice as long as the upper's; else 1/4
            lower_coarsening = 2 if 2 * self.cells * k + 1 <= FULL_SUPPORT else 8
        # at least 64 lower cells (or as many as the upper grid): the lower end's gap is the
        # larger one, and a coarse upper grid (a wide sum) leaves few cells to coarsen
        low_cells = max(min(self.cells, 64), self.cells // max(1, lower_coarsening), 2)
        self._lat = {"upper": _Lattice(eps0, self.cells, "upper"),
                     "lower": _Lattice(eps0, low_cells, "lower")}

    # -- tilt -------------------------------------------------------------------------------
    def _theta_for(self, eps: float) -> float:
        """The tilt that puts the mean of the tilted sum at ``eps`` (float, any value works)."""
        e0, k = float(self.eps0), self.k
        target = min(max(eps / k, -0.999 * e0), 0.999 * e0)

        def mean(t: float) -> float:
            # d/dt log(cosh(e0 t) + sinh(e0 t)/(2t)), the tilted mean of one use (odd in t)
            if abs(t) < 1e-6:
                return 0.0
            sign, t = (1.0, t) if t > 0 else (-1.0, -t)
            r = math.exp(-2 * e0 * t)  # everything divided by e^(e0 t) / 2
            a = (1 + r) + (1 - r) / (2 * t)
            da = e0 * (1 - r) + (e0 * (1 + r) * t - (1 - r)) / (2 * t * t)
            return sign * da / a

        lo, hi = -1.0, 1.0
        while mean(lo) > target:
            lo *= 2
        while mean(hi) < target and hi < 1e6:
            hi *= 2
        for _ in range(100):
            mid = (lo + hi) / 2
            if mean(mid) < target:
                lo = mid
            else:
                hi = mid
        # never below 1/2: below the mean of the loss the weights e^((1/2 - theta) l) would
        # grow across the window and with them the FFT error term
        return max(round((lo + hi) / 2, 6), 0.5)

    def _power(self, side: str, theta: float, floor: float) -> _Power:
        key = (side, theta, floor)
        if key not in self._powers:
            pw = _Power(
                self._lat[side], self.k, theta, self.dtype, self.width, floor, self._estimating
            )
            self._powers[key] = pw
        return self._powers[key]

    def _bound(
        self, side: str, eps: Fraction, theta: float | None = None, floor: float = math.inf
    ) -> Fraction:
        if eps >= self.k * self.eps0:
            return Fraction(0)  # the loss never exceeds k eps0
        out = None
        if theta is None:  # reuse a tilt whose centre is near eps (same accuracy)
            e = self._target(float(eps))
            for (sd_, th, fl), pw in self._powers.items():
                if sd_ == side and fl <= float(eps) and abs(pw.center - e) <= 2 * pw.sd + 1:
                    theta, floor = th, fl
                    break
        if theta == 0.5:  # the untilted law answers every eps below its window too
            floor = math.inf
        if theta is not None:
            out = self._power(side, theta, floor).bound(eps)
        if out is None:
            e = float(eps)
            theta = self._theta_for(self._target(e))
            if theta == 0.5:  # below the mean the tilt is clamped at 1/2: one shared power
                out = self._power(side, theta, math.inf).bound(eps)
                assert out is not None
                return out
            # reuse a power of that tilt whose window reaches down to eps
            for (sd_, th, fl), pw in self._powers.items():
                if sd_ == side and th == theta and fl <= e:
                    out = pw.bound(eps)
                    if out is not None:
                        break
            if out is None:  # the window kept reaches 2 spreads below eps: later queries
                # nearby (a conditioning sum's shifts) reuse this tilt
                spread = math.sqrt(self.k) * loss_moments(self.eps0)[1]
                out = self._power(side, theta, e - 1.0 - 2 * spread).bound(eps)
        assert out is not None
        return out

    # -- queries ----------------------------------------------------------------------------
    def delta(self, eps: Fraction) -> Value:
        """Certified two-sided enclosure of ``delta(eps)`` of the k-fold composition."""
        eps = Fraction(eps)
        if eps < 0:
            raise InvalidParameterError(f"eps = {eps} is negative; valid range: eps >= 0")
        if eps >= self.k * self.eps0:
            return Value.from_rational(0)  # the loss never exceeds k eps0: pure DP
        if self.k == 1:
            return _laplace_one_delta(self.eps0, eps)
        far = self._far_below(eps)
        if far is not None:
            return far.delta(eps)
        hi = min(self._bound("upper", eps), Fraction(1))
        lo = min(self._bound("lower", eps), hi)
        return Value.from_interval(_arb(lo), _arb(hi))

    def _far_below(self, eps: Fraction) -> LaplaceGrid | None:
        """A coarse grid for an ``eps`` far below the mean loss (None: not far, or not coarser).

        There ``delta`` is about 1 and is answered below the window of the untilted law
        (section 18): its lower end is ``1 - e^(eps - L)`` times the window's mass, ``L``
        the window's lowest loss, on any grid (the lower lattice keeps the mass exactly).
        With ``eps`` at least 20 below ``L`` (``e^-20``: 2e-9) a window of ``2^16`` points
        gives the same enclosure as the fine grid, at a fraction of the cost.
        """
        if self._estimating:
            return None
        mean, sd = loss_moments(self.eps0)
        spread = math.sqrt(self.k) * sd
        if float(eps) > self.k * mean - self.width * spread - 20:
            return None
        if self._coarse_far is None:
            h = Fraction(14 * spread / (1 << 16)).limit_denominator(1 << 40)
            if h <= 2 * self.eps0 / self.cells:
                return None
            self._coarse_far = LaplaceGrid(self.eps0, self.k, h=min(h, self.eps0 / 2))
        return self._coarse_far

    def epsilon(self, delta: Fraction) -> Value:
        """Certified two-sided enclosure of ``eps(delta)`` (0 when ``delta(0) <= delta``).

        ``eps(0) = k eps0`` exactly (pure DP): the loss never exceeds ``k eps0`` and takes
        that value with positive probability, so ``delta(eps) > 0`` for every smaller eps.
        """
        delta = Fraction(delta)
        if delta == 0:
            return Value.from_rational(self.k * self.eps0)
        if not 0 < delta < 1:
            raise InvalidParameterError(f"delta = {delta} must lie in [0, 1)")
        if self.k == 1:  # closed form: delta(eps) = 1 - e^((eps - eps0)/2) on [0, eps0]
            return _laplace_one_epsilon(self.eps0, delta)
        # a float estimate, then one tilt at the estimate for both sides
        guess, theta = self._estimate(delta)
        floor = guess - 1.0 - 0.01 * guess if self._windowed() else -math.inf

        def hi(e: Fraction) -> Fraction | None:
            return self._bound("upper", e, theta, floor)

        def lo(e: Fraction) -> Fraction | None:
            return self._bound("lower", e, theta, floor)

        if guess == 0:  # a (coarse) certified upper bound of delta(0) is <= delta
            return Value.from_rational(0)
        # bisection to a relative 1e-12 of the guess: below the grid's own gap, and the upper
        # end (what an accountant reports) stays at most dp_accounting's pessimistic PLD
        tol = Fraction(guess) / 10**12
        return certify_epsilon(hi, lo, delta, guess, tol=tol, lo_from_hi=True)

    def _windowed(self) -> bool:
        return 2 * self.cells * self.k + 1 > FULL_SUPPORT

    def _estimate(self, delta: Fraction) -> tuple[float, float]:
        """A float estimate of eps(delta) (not certified) and the tilt to certify it with."""
        return self._coarse_estimate(delta)

    def _target(self, eps: float) -> float:
        """Where the tilted sum is centred for a query at ``eps``: a little above it."""
        return eps + min(1.0, 0.5 * (float(self.k * self.eps0) - eps))

    def _coarse_estimate(self, delta: Fraction) -> tuple[float, float]:
        """A float estimate of eps(delta) from a coarse grid (not certified).

        The grid has 128 cells, or fewer when the sum is wide (a window of
        :data:`COARSE_POINTS` points: the guess only places the tilt); the search starts at
        the normal approximation ``k m + z s``, so that its probes share few tilts.
        """
        mean, sd = loss_moments(self.eps0)
        spread = math.sqrt(self.k) * sd
        h = max(self.eps0 / 128, Fraction(28 * spread / COARSE_POINTS).limit_denominator(1 << 40))
        coarse = LaplaceGrid(self.eps0, self.k, h=min(h, self.eps0 / 2), width=10)
        coarse._estimating = True  # float values without the error terms: a guess only
        if coarse._bound("upper", Fraction(0)) <= delta:
            return 0.0, 0.0
        top = float(self.k * self.eps0)
        a, b = 0.0, top

        def above(e: float) -> bool:
            return coarse._bound("upper", Fraction(e)) > delta

        z = math.sqrt(2 * math.log(1 / float(delta)))
        g = min(max(self.k * mean + z * spread, 0.0), top)
        step = max(spread, 1e-3)
        if g < top and above(g):  # walk up from the guess, then bisect
            a = g
            while a + step < top and above(a + step):
                a, step = a + step, 2 * step
            b = min(a + step, top)
        elif g > 0:
            b = g
            while b - step > 0 and not above(b - step):
                b, step = b - step, 2 * step
            a = max(b - step, 0.0)
        for _ in range(80):  # each probe re-tilts when it is far from the existing tilts
            mid = (a + b) / 2
            if coarse._bound("upper", Fraction(mid)) > delta:
                a = mid
            else:
                b = mid
            if b - a < 1e-9 * max(1.0, b):
                break
        return b, self._theta_for(self._target(b))
