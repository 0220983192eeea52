"""Approximating a smooth f-DP guarantee by finitely many (eps, delta)-DP constraints.

This module implements section 9 of ``docs/theory.md`` (the paper's section IV, Propositions 1
and 2) and its n-piece generalisation, with certified exact output.

Mathematics (docs/theory.md, section 9). A symmetric convex trade-off function f (f = f^-1) with
fixed point c = f(c) is bracketed by the piecewise-affine trade-off functions

    f_{eps,delta}(t) = max_i max(0, 1 - delta_i - e^{eps_i} t, e^{-eps_i} (1 - delta_i - t)).

*Normal rotation.* With u = (x - f(x))/sqrt2 and g(u) = (x_u + f(x_u))/sqrt2 the graph of
f becomes the graph of an even convex function g on [z, -z], z = -f(0)/sqrt2, with
g'(u) = (1 + f'(x_u))/(1 - f'(x_u)) and g''(u) = 2 sqrt2 f''(x_u)/(1 - f'(x_u))^3.
The rotation preserves areas, so the area between f and an approximation is the area
between g and the rotated polygon.

*From below* (f_{eps,delta} <= f, maximal area). Each line is tangent to f; the n tangent
lines with tangent points x_1 < ... < x_n in (0, c) cover consecutive intervals
[q_0, q_1], ..., [q_{n-1}, q_n = 0] of the rotated axis (q_i = the intersection of lines i
and i+1; line n meets its mirror image at u = 0). Stationarity of the area in each
tangent point says: *each tangent touches at the midpoint of the interval it covers*.
The left end q_0 of the first interval is where the first line meets the beta_II axis,
i.e. the rotated point (0, 1 - delta_1): q_0 = -(1 - delta_1)/sqrt2 (rule ``"optimal"``,
the true area maximiser). Proposition 1 of the paper takes q_0 = z = -f(0)/sqrt2 instead
(rule ``"paper"``); for n = 2 this is exactly the paper's equation
g((t+z)/2) + g'((t+z)/2)(t-z)/2 = g(t/2) + g'(t/2) t/2 and reproduces Figure 3, but its
polygon is not area-maximal: the strip between the beta_II axis and the first line is
counted as if the line covered it (for G_1 and n = 2 the gap area is 0.0073840 versus
0.0067746 for the optimum). Both rules give valid lower bounds.

*From above* (f_{eps,delta} >= f, minimal area). The polygon interpolates f at
0 = t_0 < t_1 < ... < t_n = c; stationarity of its area in t_i gives
f'(t_i) = (f(t_{i+1}) - f(t_{i-1}))/(t_{i+1} - t_{i-1}) (for n = 2 this is Proposition 2,
f'(t*) = (c - f(0))/c). Chord i has e^{eps_i} = minus its slope and
1 - delta_i = its intercept at t = 0.

*Exact rounding.* The solution is computed with mpmath at ``dps`` digits and then
rounded to exact :class:`fractions.Fraction` values in the safe direction, every eps on
the grid (1/eps_denominator) Z, every delta on (1/delta_denominator) Z:

- below: eps is rounded *up*; delta is then recomputed as the tangent value
  delta(eps) = 1 - min_t (f(t) + e^eps t) for the rounded eps (the highest line of that
  slope below f) and rounded *up* with a small margin.
- above: eps is rounded *down*; the chord is re-pivoted about its left end point
  (t_{i-1}, f(t_{i-1})), which keeps it above f on [t_{i-1}, t_i]; delta is rounded *down*.

*Certification.* The inequality between f and the rounded f_{eps,delta} is then proven
on all of [0, 1] with python-flint ``arb`` ball arithmetic by adaptive bisection. On a
subinterval [a, b] the convexity of f gives an affine upper bound (the chord) and an affine
lower bound (the secant through a neighbouring point, extended); an affine piece of the
polygon is compared with these at the two end points, which is exact for affine
functions. A point where the inequality fails for certain raises
:class:`CertificationError`, and so does a subinterval that stays undecided. For a
user-supplied f without an interval enclosure only a numerical check on a grid is
possible; the result then says ``certified=False``.

The subpackage has one module per job, imported in this order: :mod:`.common`
(choices, exact rounding, a safeguarded solver), :mod:`.tradeoffs` (smooth trade-off
functions), :mod:`.solve` (the optimality conditions), :mod:`.approximation` (results and
areas), :mod:`.certify` (rounding, certification and the entry points).
"""

from __future__ import annotations

from .approximation import Approximation, area_between, piecewise_area
from .certify import approx_from_above, approx_from_below, certify_constraints
from .common import Family, Rule, Side
from .tradeoffs import (
    SmoothTradeoff,
    gaussian,
    gaussian_composition,
    gaussian_from_mu2,
    laplace,
    tradeoff_from_callable,
)

__all__ = [
    "Approximation",
    "SmoothTradeoff",
    "approx_from_above",
    "approx_from_below",
    "area_between",
    "certify_constraints",
    "gaussian",
    "gaussian_composition",
    "gaussian_from_mu2",
    "laplace",
    "piecewise_area",
    "tradeoff_from_callable",
    "Side",
    "Rule",
    "Family",
]
