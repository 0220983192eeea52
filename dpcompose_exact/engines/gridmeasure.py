"""Lattice measures of a loss grid and the certified float arithmetic on them.

A lattice measure (:class:`_Measure`) is a non-negative mass ``m_j`` at each loss
``(offset + j) h`` of the grid plus a leak at ``+inf``; the masses are doubles that are
exact numbers (upper or lower ends of Arb balls, rounded outwards by :func:`_up` and
:func:`_down`).  The sums that certify bounds on such measures round upwards with the
classical bound for recursive summation of ``n`` non-negative doubles, ``|s~ - s| <=
(n - 1) u sum |x_i|`` with ``u = 2^-53`` (Higham, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., section 4.2; any summation order): :func:`_sum_up`, :func:`_dot_up`.
:func:`_log_mgf` bounds ``log sum_j m_j e^{lam (offset + j) h}`` from above (numpy's
``exp`` is within a few ulps, taken as 2 u relative per call with margin, docs/theory.md,
section 15), and :func:`_composed_leak` the mass of a composition with at least one leaked
use, ``prod (f + l)^k - prod f^k <= prod (f + l)^k sum k l / (f + l)`` (docs/theory.md,
section 15, "Gaussian and Laplace noise: a certified loss grid").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import flint

from ..numbers.convert import rational_ball
from ..optional import require

if TYPE_CHECKING:  # numpy (a core dependency) is imported where it is used
    import numpy as np

__all__: list[str] = []

_PREC = 128
_U64 = 2.0**-53
#: the least positive normal double (below it a double's relative error grows)
_NORMAL = 2.0**-1022


_NUMPY: list[Any] = []


def _numpy() -> Any:
    """numpy, imported once (the folds ask for it thousands of times per query)."""
    if not _NUMPY:
        _NUMPY.append(require("numpy", "Gaussian and Laplace noise (the loss grid)"))
    return _NUMPY[0]


def _arb(q: Fraction | int) -> flint.arb:
    return rational_ball(Fraction(q))


def _frac(x: flint.arb) -> Fraction:
    man, exp = (int(v) for v in x.mid().man_exp())
    return Fraction(man) * Fraction(2) ** exp


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
    #: the natural logs of the masses as doubles (-inf for 0), rounded outwards (up for an
    #: upper measure, down for a lower one), for masses below the doubles' range (the deep
    #: grid of tiny deltas: the tilt then starts from them, :func:`~.gridtilt._tilt`)
    logs: Any = field(default=None, repr=False, compare=False)
    #: ``lam -> `` an Arb upper bound of ``E[e^{lam L}; leaked]``, the leak's tilted mass
    #: at its true losses (None: unknown, the leak counts only untilted); docs/theory.md,
    #: section 15, "A relative tail bound"
    tail: Any = field(default=None, repr=False, compare=False)
    #: the indices of the non-zero masses, the lattice losses there (cached by :meth:`nz`)
    _nz: Any = field(default=None, repr=False, compare=False)

    #: per grid width ``h``: the lattice losses of the non-zero masses (or logs), their
    #: least and largest (:meth:`losses`), and the logs there (cached for :func:`_log_mgf`)
    _at: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def nz(self) -> tuple[np.ndarray, np.ndarray]:
        """The indices ``j`` with ``masses[j] != 0`` and their masses (computed once)."""
        if self._nz is None:
            idx = _numpy().nonzero(self.masses)[0]
            self._nz = (idx, self.masses[idx])
        return self._nz

    def losses(self, h: float, logs: bool = False) -> tuple[Any, Any, float, float]:
        """``(values, losses, least, largest)`` at the non-zero masses (computed once per h).

        ``values``: the masses, or (``logs``) the logs that are not ``-inf``; ``losses``: the
        doubles ``(offset + j) h`` there (each within a rounding of the exact loss).  Empty
        arrays and ``(inf, -inf)`` when there is none.
        """
        key = (h, logs)
        if key not in self._at:
            np = _numpy()
            if logs:
                idx = np.nonzero(self.logs > -math.inf)[0]
                vals = self.logs[idx]
            else:
                idx, vals = self.nz()
            pos = (self.offset + idx) * h
            ends = (float(pos[0]), float(pos[-1])) if idx.size else (math.inf, -math.inf)
            self._at[key] = (vals, pos, *ends)
        return self._at[key]


def _float_up(x: flint.arb) -> float:
    """A double >= every point of the ball (any sign; inf if it is not finite)."""
    v = float(x.upper())
    return math.nextafter(v, math.inf) if math.isfinite(v) else math.inf


def _float_down(x: flint.arb) -> float:
    """A double <= every point of the ball (any sign; -inf if it is not finite)."""
    v = float(x.lower())
    return math.nextafter(v, -math.inf) if math.isfinite(v) else -math.inf


def _up(x: flint.arb) -> float:
    """A double >= every point of the ball (and >= 0)."""
    return max(_float_up(x), 0.0)


def _log_end(x: flint.arb, up: bool) -> float:
    """A double >= (``up``) or <= the log of every point of the ball (-inf: it may be 0).

    Where the end is a normal double (within one ulp: ``|ln f - ln end| <= 2^-52``) from
    ``math.log`` of that double, else from the end's mantissa and exponent (no underflow
    however small the mass); either way with a relative margin of ``1e-12`` over the
    rounding of ``log``, of the conversion and of the sum (docs/theory.md, section 15).
    """
    end = x.upper() if up else x.lower()
    if not end > 0:
        return -math.inf
    f = float(end)
    if _NORMAL <= f < math.inf:  # a normal double: one ulp of the end at most
        v = math.log(f)
    else:
        man, exp = (int(v) for v in end.mid().man_exp())
        v = math.log(man) + exp * math.log(2)
    margin = 1e-12 * (abs(v) + 1)
    return v + margin if up else v - margin


def _down(x: flint.arb) -> float:
    """A double <= every point of the ball, clipped at 0."""
    return max(_float_down(x), 0.0)


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


def _log_mgf(m: _Measure, h: float, lam: float, doubles: bool = False) -> float:
    """An upper bound of ``log sum_j m_j e^{lam (offset + j) h}`` (floats with a margin).

    A measure that carries its masses' logs (``logs``) is read from them (the doubles of
    masses below their range are rounded up to the smallest one, far above the masses),
    unless ``doubles``: the folded array itself (a fold's window and its Chernoff bounds).
    """
    np = _numpy()
    if m.logs is not None and not doubles:
        lp, pos, _, _ = m.losses(h, True)
        if lp.size == 0:
            return -math.inf
        arg = lp + lam * pos
        c = float(np.max(arg))
        s = _sum_up(np.exp(arg - c))
        rel = 4 * _U64 * (float(np.max(np.abs(arg))) + _max_abs(m, h) + abs(c) + 2)
        return c + math.log(s) + 2 * (rel + 2 * _U64) + 1e-12
    mz, pos, least, largest = m.losses(h)
    if mz.size == 0:
        return -math.inf
    arg = lam * pos
    # the largest (and the largest |.|) of the rounded products lam * pos are those of the
    # end losses: rounding is monotone
    c = lam * largest if lam >= 0 else lam * least
    big = max(abs(lam * least), abs(lam * largest))
    s = _sum_up(mz * np.exp(arg - c))
    # each term: relative error <= 4 u (|arg| + |c| + 2) (the rounded argument and exp)
    rel = 4 * _U64 * (big + abs(c) + 2) + 2 * _U64
    return c + math.log(s) + 2 * rel + 1e-12


def _max_abs(m: _Measure, h: float) -> float:
    """``max |log p_j|`` over the logs of ``m`` that are not ``-inf`` (cached per measure)."""
    key = ("max_abs", h)
    if key not in m._at:
        lp = m.losses(h, True)[0]
        m._at[key] = float(_numpy().max(_numpy().abs(lp))) if lp.size else 0.0
    return m._at[key]


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
