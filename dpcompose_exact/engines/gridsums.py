"""A fold's bounds of ``delta_N(t)`` at many arguments at once: suffix sums in long doubles.

The conditioning sum of a mixed list (docs/theory.md, section 19) asks a composed loss grid
for ``delta_N(t)`` at one argument per loss value of the finite part, at every step of a
search.  On an untilted fold (:class:`~dpcompose_exact.engines.gridfold._Fold`: masses
``y_T`` at the grid indices ``T = w_lo, ..., w_hi``, width ``h``, FFT error ``err2`` in
2-norm) the sum it certifies is

    ``S(t) = sum_{T >= J} y_T (1 - e^{t - T h}) = A_J - e^{t - t_0} B_J``,
    ``J = floor(t / h) + 1``, ``t_0 = w_lo h``,

with the suffix sums ``A_J = sum_{T >= J} y_T`` and ``B_J = sum_{T >= J} y_T g_T``,
``g_T = e^{-(T - w_lo) h}``, computed once per fold (:class:`FoldSums`), so that each
argument costs a few operations on arrays.  The weights' 2-norm, which the FFT's error is
measured against (Cauchy-Schwarz), is ``||w||^2 = N_J - 2 e^{t - t_0} G_J + e^{2(t - t_0)}
H_J`` (``N_J`` terms, ``G``, ``H`` the suffix sums of ``g`` and ``g^2``).  The sums and
differences cancel, so they are computed in long doubles (``u = 2^-64`` on x86-64; the
bound uses the unit roundoff of the platform's type, whatever it is): the recursive sums
are within ``gamma_n = n u / (1 - n u)`` of their absolute sums (Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed., section 4.2; any order), each ``exp`` within
:data:`EXP_ULPS` units of the type's last place (the C library's ``expl`` and ``expm1l``,
which numpy calls on long doubles: glibc's manual, "Known Maximum Errors in Math
Functions", lists a few ulps, and its test suite refuses any listed error above 9 ulps
for these formats; the margin is 16)
plus the rounding of its argument, and every product and difference within ``u``.  The
bounds are docs/theory.md, section 19, "Cost of the grid sums"; they hold the exact value
of the fold's lattice measure within the same terms as :meth:`_Fold.bound`, whose answers
these equal up to those roundings (the digits of an enclosure do not move).

Arguments are exact doubles; ``delta_N`` is non-increasing, so a caller asks an upper
bound at a double at or below its argument and a lower bound at one at or above.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from .gridmeasure import _numpy

__all__ = ["FoldSums", "down_double", "up_double"]

#: the margin taken for ``expl``'s error, in units of the long double's last place
EXP_ULPS = 16
#: the widest window (in loss) summed this way: ``e^{2 (t - t_0)}`` stays in range
_SPAN = 4000.0


def down_double(x: Fraction) -> float:
    """A double at or below the rational ``x``."""
    v = float(x)
    return math.nextafter(v, -math.inf) if Fraction(v) > x else v


def up_double(x: Fraction) -> float:
    """A double at or above the rational ``x``."""
    v = float(x)
    return math.nextafter(v, math.inf) if Fraction(v) < x else v


class FoldSums:
    """``delta_N`` bounds of one untilted fold at arrays of exact double arguments.

    Args:
        fold: an untilted :class:`~dpcompose_exact.engines.gridfold._Fold` (``lam == 0``).

    :meth:`usable` says whether the fold's window fits the long doubles' range
    (``e^{2 span}``); otherwise callers ask the fold one argument at a time.
    """

    def __init__(self, fold: Any) -> None:
        self.fold = fold
        self._sums: tuple | None = None

    @staticmethod
    def usable(fold: Any) -> bool:
        """Whether :meth:`bounds` may be asked of ``fold`` (untilted, a window in range)."""
        np = _numpy()
        if fold.lam:
            return False
        span = float(fold.y.size + 1) * float(fold.h)
        lim = math.log(float(np.finfo(np.longdouble).max)) / 4
        return span < min(_SPAN, lim) and abs(float(fold.w_lo) * float(fold.h)) < lim

    def _prepare(self) -> tuple:
        """The suffix sums and the rounding terms that do not depend on the argument."""
        if self._sums is None:
            np = _numpy()
            ld = np.longdouble
            f = self.fold
            u = float(np.finfo(ld).eps) / 2
            h = Fraction(f.h)
            hl = ld(h.numerator) / ld(h.denominator)
            # |hl - h| <= r_h h, measured exactly (hl is a dyadic rational)
            r_h = float(abs(Fraction(*hl.as_integer_ratio()) - h) / h) * 1.01 + 1e-300
            n = f.y.size
            y = f.y.astype(ld)
            arg = np.arange(n, dtype=ld) * hl  # (T - w_lo) h, each within (r_h + u) of it
            g = np.exp(-arg)
            ay = np.abs(y)

            def suffix(x: Any) -> Any:  # x_j + ... + x_{n-1}, one recursive sum each
                out = np.zeros(n + 1, dtype=ld)
                out[:n] = np.cumsum(x[::-1])[::-1]
                return out

            # v_m = 1 - e^{-m h} (expm1: no cancellation), its prefix sums and its squares'
            v = -np.expm1(-arg)
            pv1, pv2 = np.zeros(n + 1, dtype=ld), np.zeros(n + 1, dtype=ld)
            pv1[1:], pv2[1:] = np.cumsum(v), np.cumsum(v * v)
            sums = (suffix(y), suffix(ay), suffix(y * g), suffix(ay * g), pv1, pv2)
            span = float(n) * float(h)
            # g_T's and v_m's relative errors: their arguments' (span (r_h + u)) and expl's
            # (expm1 of -x, x > 0, has relative condition number at most 1)
            rho_g = (span * (r_h + u) + EXP_ULPS * u) * 1.01
            t0 = ld(f.w_lo) * hl  # within |w_lo| h (r_h + u) of w_lo h
            t0_err = abs(float(f.w_lo)) * float(h) * (r_h + u) * 1.01
            self._sums = (sums, u, hl, r_h, rho_g, t0, t0_err)
        return self._sums

    def bounds(self, t: Any, upper: bool) -> Any:
        """Bounds of ``delta_N`` at the doubles ``t`` (each exact), as doubles.

        ``upper``: each entry ``>=`` the fold's upper bound's value at ``t`` (its masses'
        sum with every error term, the Chernoff masses outside its window and its leak);
        else ``<=`` the lower bound's (at ``t`` plus the fold's ``shift``, rounded up
        here).  Clipped to ``[0, 1]``.
        """
        np = _numpy()
        ld = np.longdouble
        f = self.fold
        sums, u, hl, r_h, rho_g, t0, t0_err = self._prepare()
        a, a_abs, b, b_abs, pv1, pv2 = sums
        n = f.y.size
        t = np.asarray(t, dtype=np.float64)
        if not upper and f.shift:  # the lattice losses exceed the true ones by `shift`
            sh = up_double(Fraction(f.shift))
            t = np.nextafter(t + sh, np.inf)
        # J = floor(t / h) + 1 exactly: the long double quotient, checked where it is
        # within rounding of an integer (there, in rationals)
        tl = t.astype(ld)
        q = np.floor(tl / hl)
        rem = tl - q * hl
        tol = 1e-6 * hl + 16 * u * np.abs(tl)  # far above the quotient's rounding
        near = (rem < tol) | (rem > hl - tol)
        if near.any():
            h = Fraction(f.h)
            for i in np.nonzero(near)[0]:
                q[i] = math.floor(Fraction(float(t[i])) / h)
        first = q + 1  # the grid index of the first loss above t
        beyond = first > f.smax  # no lattice loss of the composition above t
        j = np.clip(first - f.w_lo, 0, n).astype(np.int64)
        cnt = n - j  # the terms summed
        gamma = ((cnt + 2) * u / (1 - (cnt + 2) * u)).astype(ld)  # recursive sums of cnt
        # t - t0, within t0_err + u |t - t0| (clipped above the window, where j = n and
        # the entry is not read)
        x = np.minimum(tl - t0, ld(float(n + 1) * float(f.h)))
        e = np.exp(x)
        rho_e = (t0_err + u * np.abs(x).astype(np.float64)) * 1.01 + EXP_ULPS * u
        rho_e = rho_e.astype(ld)
        aj, bj = a[j], b[j]
        eb = e * bj
        s = aj - eb
        # |s~ - S|: A's sum, B's sum and weights, the product, the difference
        err = (
            gamma * a_abs[j]
            + e * b_abs[j] * (rho_e + rho_g + 2 * gamma + 3 * u) * 1.01
            + u * np.abs(s)
        )
        # the weights' 2-norm: w_{J+m} = c + e^{-d} v_m with d = (w_lo + j) h - t > 0 and
        # c = 1 - e^{-d}, so ||w||^2 = N c^2 + 2 c e^{-d} V1_N + e^{-2d} V2_N: non-negative
        # terms, each rounded up (d within d_err; c and e^{-d} monotone in d)
        d = (ld(f.w_lo) + j.astype(ld)) * hl - tl
        d_err = (np.abs(ld(f.w_lo) + j.astype(ld)) * hl * (r_h + u) + u * np.abs(d)) * 1.01
        d_hi = np.maximum(d + d_err, 0)
        d_lo = np.maximum(d - d_err, 0)
        c_up = -np.expm1(-d_hi) * (1 + (EXP_ULPS + 2) * u)
        ed_up = np.minimum(np.exp(-d_lo) * (1 + (EXP_ULPS + 2) * u), 1)
        grow = (1 + gamma) * (1 + rho_g) * (1 + 4 * u)
        cl = cnt.astype(ld)
        w2 = (cl * c_up * c_up + 2 * c_up * ed_up * pv1[cnt] * grow
              + ed_up * ed_up * pv2[cnt] * grow * (1 + rho_g))
        w2 = np.minimum(w2 * (1 + 8 * u), cl)
        wnorm = np.sqrt(w2) * (1 + 4 * u)
        slack = err + ld(f.err2) * wnorm * (1 + 1e-9)
        leak = ld(up_double(Fraction(f.leak))) if f.leak else ld(0)
        if upper:
            extra = ld(f.p_hi) + np.where(first < f.w_lo, ld(f.p_lo), ld(0))
            val = (s + slack + extra) * (1 + 8 * u) + leak
            val = np.where(j >= n, ld(f.p_hi) + leak, val)
            val = np.where(beyond, leak, val)
            out = val.astype(np.float64)
            out = np.where(out.astype(ld) < val, np.nextafter(out, np.inf), out)
            return np.minimum(out, 1.0)
        val = s - slack - ld(f.p_hi + f.p_lo) * (1 + 4 * u)
        val = val - 8 * u * (np.abs(s) + slack)
        val = np.where((j >= n) | beyond, ld(0), val)
        out = val.astype(np.float64)
        out = np.where(out.astype(ld) > val, np.nextafter(out, -np.inf), out)
        return np.maximum(out, 0.0)
