"""The lattice of one Laplace use and its ``k``-fold power by FFT, with certified error bounds.

The loss of one use of a Laplace mechanism with loss bound ``eps0`` (``eps0 = sensitivity /
b``), tilted by ``e^(-l/2)``, is symmetric: two atoms at ``+-eps0`` and a flat density between
(docs/theory.md, section 18, "Laplace").  :class:`_Lattice` replaces the flat part, cell by
cell of a grid of width ``h = eps0 / cells``, by the two cell ends with weights
``tanh(h/4)/2`` (they keep the moments ``int e^(+-l/2)``: an upper bound) or by the centres
of cells that tile it, with weight ``sinh(w/4)`` (a lower bound); section 18,
"Discretisation that keeps two exponential moments".

:class:`_Power` computes the ``k``-fold convolution of such a lattice by one FFT power in
doubles, after an exponential tilt that centres the part of the distribution that
``delta(eps)`` reads (section 18, "Composing the lattice measures").  Every float error
(FFT, power, weights, sums; the power's error is bounded from the computed spectrum) and the
mass outside the FFT window (Chernoff, from the lattice's exact MGF) are bounded, so its
:meth:`_Power.bound` is a certified upper (lower) bound of ``delta(eps)`` on the upper
(lower) lattice.  :class:`~dpcompose_exact.engines.pldgrid.LaplaceGrid` chooses the grid,
the tilts and the windows.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import flint

from ..errors import ResourceLimitError
from ..optional import require
from .gaussian import _PREC, _arb, _hi, _lo

__all__: list[str] = []

np: Any = None  # numpy (a core dependency), imported on first use of the Laplace grid


def _numpy() -> Any:
    """Import numpy lazily (with scipy.fft): only the noise routes need them."""
    global np
    if np is None:
        np = require("numpy", "Laplace noise (the loss grid)")
    return np


def _scipy_fft() -> Any:
    return require("scipy.fft", "Laplace noise (the loss grid)")


#: largest FFT length (a power of two) the Laplace engine may use
MAX_FFT = 1 << 26
#: supports up to this length are convolved whole (no window, no tail bounds)
FULL_SUPPORT = 1 << 19


def _ld_fraction(x: Any) -> Fraction:
    """A numpy long double as the exact rational it is (two doubles carry it exactly)."""
    hi = float(x)
    lo = float(np.longdouble(x) - np.longdouble(hi))
    return Fraction(hi) + Fraction(lo)


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
