"""Shared pieces of the f-DP approximations: choices, exact rounding, a safeguarded solver.

Part of :mod:`dpcompose_exact.paper.approx` (its docstring states the mathematics).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from enum import Enum
from fractions import Fraction
from typing import Any

import flint
from mpmath import mp

from ...errors import InvalidParameterError, SolverError
from ...numbers import parse_rational
from ...numbers.convert import rational_ball


class _Choice(str, Enum):
    """A string enum whose parser names the accepted values."""

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value: Any) -> Any:
        """The member for ``value`` (a member or its string), else a one-line error."""
        if isinstance(value, cls):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            names = " or ".join(repr(m.value) for m in cls)
            raise InvalidParameterError(
                f"{cls.__name__.lower()} must be {names}, got {value!r}"
            ) from None


class Side(_Choice):
    """Which side of f an approximation lies on."""

    BELOW = "below"  #: f_{eps,delta} <= f: a valid privacy guarantee (Proposition 1)
    ABOVE = "above"  #: f_{eps,delta} >= f: how loose the lower one is (Proposition 2)


class Rule(_Choice):
    """How the pieces of an approximation are placed."""

    OPTIMAL = "optimal"  #: maximal area from below (the default)
    PAPER = "paper"  #: the paper's Proposition 1 condition (reproduces Figure 3)
    CHORDS = "chords"  #: chords from above (Proposition 2)


class Family(_Choice):
    """What a :class:`SmoothTradeoff` is, for decisions that depend on it."""

    GAUSSIAN = "gaussian"  #: G_mu, with the exact mu^2 in ``params``
    LAPLACE = "laplace"
    CUSTOM = "custom"


Constraint = tuple[Fraction, Fraction]

#: default working precision (decimal digits) of the mpmath solves.
DEFAULT_DPS = 50


def _parse_rational(value: Any, what: str) -> Fraction:
    """Parse an exact rational at the boundary (floats refused, see numbers.parse_rational)."""
    if isinstance(value, Decimal):
        return Fraction(value)
    return parse_rational(value, what)


def _positive_rational(value: Any, what: str) -> Fraction:
    q = _parse_rational(value, what)
    if q <= 0:
        raise InvalidParameterError(f"{what} must be > 0, got {q}")
    return q


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
    if value < 1:
        raise InvalidParameterError(f"{what} must be >= 1, got {value}")
    return value


def _mpf(q: Fraction | int) -> Any:
    """The rational q as an mpf at the ambient mpmath precision."""
    q = Fraction(q)
    return mp.mpf(q.numerator) / q.denominator


def _arb(q: Fraction | int) -> flint.arb:
    """An arb ball enclosing the rational q at the ambient flint precision."""
    q = Fraction(q)
    return rational_ball(q)


def _exact_fraction(x: Any) -> Fraction:
    """The exact value of a finite mpf as a Fraction."""
    x = mp.mpf(x)
    if not mp.isfinite(x):
        raise SolverError(f"cannot round the non-finite value {x}")
    sign, man, exp, _ = x._mpf_
    return (-1) ** sign * Fraction(int(man)) * (Fraction(2) ** int(exp))


def _round_to_grid(x: Any, den: int, up: bool) -> Fraction:
    """Round the mpf x to the grid (1/den) Z: up (ceiling) or down (floor), exactly."""
    scaled = _exact_fraction(x) * den
    n = scaled.numerator // scaled.denominator
    if up and n * scaled.denominator != scaled.numerator:
        n += 1
    return Fraction(n, den)


def _solve_increasing(
    fn: Callable[[Any], Any], dfn: Callable[[Any], Any] | None, lo: Any, hi: Any
) -> Any:
    """Root of the non-decreasing fn on [lo, hi] (fn(lo) <= 0 <= fn(hi)).

    Safeguarded Newton: a Newton step (with derivative dfn) is taken when it stays inside
    the current bracket, a bisection step otherwise; stops at the ambient precision.
    """
    x = (lo + hi) / 2
    tol = mp.mpf(2) ** (24 - mp.prec)  # ~7 guard digits below the working precision
    for _ in range(mp.prec + 8):
        v = fn(x)
        if v == 0:
            return x
        if v > 0:
            hi = x
        else:
            lo = x
        step = None
        if dfn is not None:
            d = dfn(x)
            if mp.isfinite(d) and d > 0:
                if abs(v / d) <= tol * (abs(x) + tol):
                    return x - v / d
                step = x - v / d
        if step is None or not lo < step < hi:
            step = (lo + hi) / 2
        if hi - lo <= tol * (abs(x) + tol):
            return step
        x = step
    return x
