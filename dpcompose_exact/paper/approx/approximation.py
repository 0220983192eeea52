"""The result of an approximation, and areas between trade-off curves (section 9).

Part of :mod:`dpcompose_exact.paper.approx` (its docstring states the mathematics).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from mpmath import mp

from .common import DEFAULT_DPS, Constraint, Side, _mpf
from .tradeoffs import SmoothTradeoff

# ---------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Approximation:
    """A certified (or numerically checked) approximation of f by (eps, delta) constraints.

    Attributes:
        side: ``"below"`` (f_{eps,delta} <= f: a valid privacy guarantee) or ``"above"``
            (f_{eps,delta} >= f: shows how loose the lower one is).
        pieces: The number n of affine pieces requested (n constraints before merging).
        constraints: Exact (eps, delta) pairs, eps on the grid 1/eps_denominator, sorted by
            decreasing eps; pieces whose rounded eps coincide are merged (smallest delta).
        tradeoff: The approximated f.
        rule: ``"optimal"`` or ``"paper"`` (below), ``"chords"`` (above).
        eps_denominator: Common denominator grid of the eps.
        delta_denominator: Grid of the deltas.
        certified: True iff the inequality was proven on [0, 1] with interval arithmetic.
        certificate: A sentence saying how the inequality was established.
        unrounded: The high-precision (eps, delta) of the optimal solution (mpf), before
            rounding.
        touch_points: Tangent points (below) or chord end points (above) in [0, c].
    """

    side: Side
    pieces: int
    constraints: tuple[Constraint, ...]
    tradeoff: SmoothTradeoff = field(repr=False)
    rule: str
    eps_denominator: int
    delta_denominator: int
    certified: bool
    certificate: str
    unrounded: tuple[tuple[Any, Any], ...] = field(repr=False)
    touch_points: tuple[Any, ...] = field(repr=False)

    @property
    def eps(self) -> tuple[Fraction, ...]:
        """The exact eps values (decreasing)."""
        return tuple(e for e, _ in self.constraints)

    @property
    def deltas(self) -> tuple[Fraction, ...]:
        """The exact delta values (in the order of :attr:`eps`)."""
        return tuple(d for _, d in self.constraints)

    def evaluate(self, t: Any, dps: int = DEFAULT_DPS) -> Any:
        """Return f_{eps,delta}(t) as an mpf."""
        return _pl_value(self.constraints, t, dps)

    def gap_area(self, dps: int = 30) -> Any:
        """Return the area between f and this approximation (non-negative)."""
        if self.side is Side.BELOW:
            return area_between(self.constraints, self.tradeoff, dps)
        return area_between(self.tradeoff, self.constraints, dps)


def _pl_lines(constraints: Sequence[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """(slope, intercept) of every line of f_{eps,delta} at the ambient mpmath precision."""
    out = []
    for e, d in constraints:
        e_ = _mpf(e) if isinstance(e, (Fraction, int)) else mp.mpf(e)
        d_ = _mpf(d) if isinstance(d, (Fraction, int)) else mp.mpf(d)
        big = mp.exp(e_)
        out.append((-big, 1 - d_))
        out.append((-1 / big, (1 - d_) / big))
    return out


def _pl_value(constraints: Sequence[tuple[Any, Any]], t: Any, dps: int) -> Any:
    with mp.workdps(dps):
        t_ = _mpf(t) if isinstance(t, (Fraction, int)) else mp.mpf(t)
        return max([mp.mpf(0), *(b + s * t_ for s, b in _pl_lines(constraints))])


def piecewise_area(constraints: Sequence[tuple[Any, Any]], dps: int = 30) -> Any:
    """Return the area under f_{eps,delta} on [0, 1], exactly up to mpmath rounding.

    The function is affine between consecutive breakpoints (pairwise intersections of its
    lines and their zeros), so the trapezoid rule over the breakpoints is exact.

    Args:
        constraints: (eps, delta) pairs (Fractions, ints or mpf).
        dps: Working precision.

    Returns:
        The integral of max(0, lines) over [0, 1] as an mpf.
    """
    with mp.workdps(dps + 10):
        lines = _pl_lines(constraints)
        pts = {mp.mpf(0), mp.mpf(1)}
        for i, (s1, b1) in enumerate(lines):
            pts.add(-b1 / s1)
            for s2, b2 in lines[i + 1 :]:
                if s1 != s2:
                    pts.add((b2 - b1) / (s1 - s2))
        xs = sorted(p for p in pts if 0 <= p <= 1)
        hs = [max([mp.mpf(0), *(b + s * x for s, b in lines)]) for x in xs]
        total = mp.fsum((xs[i + 1] - xs[i]) * (hs[i] + hs[i + 1]) / 2 for i in range(len(xs) - 1))
    with mp.workdps(dps):
        return +total


def _area_of(obj: Any, dps: int) -> Any:
    if isinstance(obj, Approximation):
        return piecewise_area(obj.constraints, dps)
    if isinstance(obj, SmoothTradeoff):
        return obj.area(dps)
    if callable(obj):
        with mp.workdps(dps + 10):
            a = mp.quad(obj, [0, 1])
        with mp.workdps(dps):
            return +a
    return piecewise_area(obj, dps)


def area_between(lower: Any, upper: Any, dps: int = 30) -> Any:
    """Return the integral over [0, 1] of (upper - lower).

    Each side may be a sequence of (eps, delta) constraints, an :class:`Approximation`, a
    :class:`SmoothTradeoff` or a plain callable t -> value (mpmath numbers). For curves
    that lie on the stated sides this is the area between them.

    Args:
        lower: The lower curve.
        upper: The upper curve.
        dps: Working precision (decimal digits).

    Returns:
        The signed area as an mpf.
    """
    with mp.workdps(dps):
        return _area_of(upper, dps) - _area_of(lower, dps)
