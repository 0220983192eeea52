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

The module is standalone: it imports no other ``dpcompose_exact`` module.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum
from fractions import Fraction
from typing import Any

import flint
from mpmath import mp

from .errors import CertificationError, InvalidParameterError, SolverError
from .numbers import parse_rational
from .numbers.format import mpf_str

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
    return flint.arb(flint.fmpq(q.numerator, q.denominator))


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


# ---------------------------------------------------------------------------------------
# smooth trade-off functions
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SmoothTradeoff:
    """A symmetric convex trade-off function f with derivatives, evaluated by mpmath.

    The callables take and return mpmath numbers and work at the ambient mpmath
    precision; the methods below set the precision themselves (``mp.workdps``) and leave
    the global mpmath state unchanged.

    Attributes:
        name: A label, e.g. ``"G_1"``.
        f: t -> f(t) on [0, 1].
        df: t -> f'(t) on (0, 1).
        d2f: t -> f''(t) on (0, 1) (one-sided where f'' jumps).
        f0: The exact value f(0) = 1 - (probability of a revealing output).
        f_ball: Optional interval version: an exact rational t in [0, 1] -> a
            ``flint.arb`` ball containing f(t), at the ambient flint precision. Without it
            an approximation can only be checked numerically, not certified.
        kinks: Optional callable returning the points of (0, 1) where f is not analytic
            (used to split numerical integrals).
        params: Exact parameters, for display, e.g. ``(("mu", Fraction(1)),)``.
        family: :class:`Family` of f (Gaussian, Laplace or custom).
    """

    name: str
    f: Callable[[Any], Any] = field(repr=False)
    df: Callable[[Any], Any] = field(repr=False)
    d2f: Callable[[Any], Any] = field(repr=False)
    f0: Fraction = Fraction(1)
    f_ball: Callable[[Fraction], flint.arb] | None = field(default=None, repr=False)
    kinks: Callable[[], tuple[Any, ...]] | None = field(default=None, repr=False)
    params: tuple[tuple[str, Fraction], ...] = ()
    family: Family = Family.CUSTOM

    def value(self, t: Any, dps: int = DEFAULT_DPS) -> Any:
        """Return f(t) as an mpf with ``dps`` digits."""
        with mp.workdps(dps):
            return +self.f(mp.mpf(t) if not isinstance(t, Fraction) else _mpf(t))

    def fixed_point(self, dps: int = DEFAULT_DPS) -> Any:
        """Return c with f(c) = c (bisection on the increasing t - f(t))."""
        with mp.workdps(dps + 10):
            c = _solve_increasing(
                lambda t: t - self.f(t), lambda t: 1 - self.df(t), mp.mpf(0), mp.mpf(1)
            )
        with mp.workdps(dps):
            return +c

    def rotation_z(self, dps: int = DEFAULT_DPS) -> Any:
        """Return z = -f(0)/sqrt2, the left end of the rotated domain [z, -z]."""
        with mp.workdps(dps):
            return -_mpf(self.f0) / mp.sqrt(2)

    def rotation_point(self, u: Any, dps: int = DEFAULT_DPS) -> Any:
        """Return x_u in [0, 1], the solution of (x - f(x))/sqrt2 = u."""
        with mp.workdps(dps + 10):
            s2 = mp.sqrt(2)
            u = mp.mpf(u)
            x = _solve_increasing(
                lambda x: (x - self.f(x)) / s2 - u,
                lambda x: (1 - self.df(x)) / s2,
                mp.mpf(0),
                mp.mpf(1),
            )
        with mp.workdps(dps):
            return +x

    def rotation(self, u: Any, dps: int = DEFAULT_DPS) -> Any:
        """Return the normal rotation g(u) = (x_u + f(x_u))/sqrt2."""
        x = self.rotation_point(u, dps + 10)
        with mp.workdps(dps):
            return (x + self.f(x)) / mp.sqrt(2)

    def rotation_derivative(self, u: Any, dps: int = DEFAULT_DPS) -> Any:
        """Return g'(u) = (1 + f'(x_u))/(1 - f'(x_u))."""
        x = self.rotation_point(u, dps + 10)
        with mp.workdps(dps):
            d = self.df(x)
            return (1 + d) / (1 - d)

    def rotation_second_derivative(self, u: Any, dps: int = DEFAULT_DPS) -> Any:
        """Return g''(u) = 2 sqrt2 f''(x_u)/(1 - f'(x_u))^3."""
        x = self.rotation_point(u, dps + 10)
        with mp.workdps(dps):
            return 2 * mp.sqrt(2) * self.d2f(x) / (1 - self.df(x)) ** 3

    def area(self, dps: int = 30) -> Any:
        """Return the area under f, i.e. the integral of f over [0, 1]."""
        with mp.workdps(dps + 10):
            pts = sorted({mp.mpf(0), mp.mpf(1), *(self.kinks() if self.kinks else ())})
            a = mp.quad(self.f, pts)
        with mp.workdps(dps):
            return +a

    @property
    def has_interval_version(self) -> bool:
        """Whether approximations of f can be certified with interval arithmetic."""
        return self.f_ball is not None


def gaussian_from_mu2(mu2: Fraction, name: str) -> SmoothTradeoff:
    """G_mu given the exact rational mu^2 (so G_{mu sqrt k} stays exact: mu^2 k)."""

    def mu() -> Any:
        return mp.sqrt(_mpf(mu2))

    cache: dict[tuple[Any, int], Any] = {}

    def w_of(x: Any) -> Any:  # Phi^-1(1 - x); f and f' at one point share it
        key = (x, mp.prec)
        w = cache.get(key)
        if w is None:
            if len(cache) > 64:
                cache.clear()
            w = cache[key] = mp.sqrt(2) * mp.erfinv(1 - 2 * x)
        return w

    def f(x: Any) -> Any:
        if x <= 0:
            return mp.mpf(1)
        if x >= 1:
            return mp.mpf(0)
        return mp.ncdf(w_of(x) - mu())

    def df(x: Any) -> Any:
        if x <= 0:
            return mp.ninf
        m = mu()
        return -mp.exp(m * w_of(x) - m * m / 2)

    def d2f(x: Any) -> Any:
        m = mu()
        w = w_of(x)
        return m * mp.exp(m * w - m * m / 2) / mp.npdf(w)

    def f_ball(t: Fraction) -> flint.arb:
        if t <= 0:
            return flint.arb(1)
        if t >= 1:
            return flint.arb(0)
        sqrt2 = flint.arb(2).sqrt()
        w = sqrt2 * (2 * _arb(t)).erfcinv()  # Phi^-1(1 - t)
        return ((_arb(mu2).sqrt() - w) / sqrt2).erfc() / 2  # Phi(w - mu)

    return SmoothTradeoff(
        name, f, df, d2f, Fraction(1), f_ball, None, (("mu^2", mu2),), Family.GAUSSIAN
    )


def gaussian(mu: Any) -> SmoothTradeoff:
    """The Gaussian trade-off function G_mu(t) = Phi(Phi^-1(1 - t) - mu).

    Args:
        mu: The (exact, rational) mean shift, > 0; int, Fraction, Decimal or string.

    Returns:
        The trade-off function, with an arb interval version (certifiable).

    Raises:
        InvalidParameterError: if mu <= 0.
        TypeError: if mu is a float (not exact) or of another type.
    """
    m = _positive_rational(mu, "mu")
    return gaussian_from_mu2(m * m, f"G_{m}")


def gaussian_composition(mu: Any, k: int) -> SmoothTradeoff:
    """The exact k-fold composition of G_mu, which is G_{mu sqrt k} (Dong-Roth-Su).

    Args:
        mu: The rational mean shift of one mechanism, > 0.
        k: The number of compositions, >= 1.

    Returns:
        G_{mu sqrt k} (stored through mu^2 k, so it stays exact).
    """
    m = _positive_rational(mu, "mu")
    kk = _positive_int(k, "k")
    return gaussian_from_mu2(m * m * kk, f"G_{m}^(x{kk})")


def laplace(eps: Any) -> SmoothTradeoff:
    """The trade-off function of the Laplace mechanism (scale b = 1, shift eps).

    f(t) = F(F^-1(1 - t) - eps) with F the Laplace CDF, which works out to
    1 - e^eps t on [0, e^-eps/2], e^-eps/(4t) on [e^-eps/2, 1/2] and e^-eps (1 - t) on
    [1/2, 1]. f is C^1 and convex but affine near both ends (not strictly convex); the
    approximation equations handle the affine part (a tangent point may lie anywhere on
    it).

    Args:
        eps: The exact rational shift, > 0.

    Returns:
        The trade-off function, with an arb interval version.
    """
    e = _positive_rational(eps, "eps")

    def big_e() -> Any:
        return mp.exp(_mpf(e))

    def f(x: Any) -> Any:
        E = big_e()
        if x <= 1 / (2 * E):
            return 1 - E * x
        if x <= mp.mpf(1) / 2:
            return 1 / (4 * E * x)
        return (1 - x) / E

    def df(x: Any) -> Any:
        E = big_e()
        if x <= 1 / (2 * E):
            return -E
        if x <= mp.mpf(1) / 2:
            return -1 / (4 * E * x * x)
        return -1 / E

    def d2f(x: Any) -> Any:
        E = big_e()
        if x < 1 / (2 * E) or x > mp.mpf(1) / 2:
            return mp.mpf(0)
        return 1 / (2 * E * x**3)

    def f_ball(t: Fraction) -> flint.arb:
        if t > Fraction(1, 2):
            return (1 - _arb(t)) / _arb(e).exp()
        E = _arb(e).exp()
        x = _arb(t)
        linear = 1 - E * x
        hyper = 1 / (4 * E * x) if t > 0 else linear
        cond = 2 * E * x - 1  # <= 0 on the affine part
        if cond <= 0:
            return linear
        if cond >= 0:
            return hyper
        return linear.union(hyper)  # both formulas agree at the kink (f is C^1)

    def kinks() -> tuple[Any, ...]:
        return (1 / (2 * big_e()), mp.mpf(1) / 2)

    return SmoothTradeoff(
        f"Laplace_{e}", f, df, d2f, Fraction(1), f_ball, kinks, (("eps", e),), Family.LAPLACE
    )


def tradeoff_from_callable(
    f: Callable[[Any], Any],
    *,
    name: str = "f",
    df: Callable[[Any], Any] | None = None,
    d2f: Callable[[Any], Any] | None = None,
    f0: Any = 1,
    f_ball: Callable[[Fraction], flint.arb] | None = None,
    check_points: int = 64,
    check_dps: int = 20,
) -> SmoothTradeoff:
    """Wrap a user-supplied symmetric convex trade-off function, after checking it.

    f is checked on the grid t_j = j/check_points at ``check_dps`` digits: f(0) = f0 <= 1,
    0 <= f(t) <= 1 - t, f non-increasing, second differences >= 0 (convex) and
    f(f(t)) = t wherever f(t) > 0 (symmetric), each up to a tolerance of
    10^-(check_dps/2). Missing derivatives are computed numerically with ``mpmath.diff``.

    Args:
        f: t -> f(t), mpmath numbers in and out, at the ambient mpmath precision.
        name: A label.
        df: f' (optional).
        d2f: f'' (optional).
        f0: The exact value of f(0).
        f_ball: Optional interval version (see :class:`SmoothTradeoff`); only with it
            can approximations of f be certified.
        check_points: Number of grid intervals for the checks.
        check_dps: Precision of the checks.

    Returns:
        The wrapped trade-off function.

    Raises:
        InvalidParameterError: naming the offending point if a check fails.
    """
    if not callable(f):
        raise TypeError(f"f must be callable, got {type(f).__name__}")
    n = _positive_int(check_points, "check_points")
    q0 = _parse_rational(f0, "f0")
    if not 0 < q0 <= 1:
        raise InvalidParameterError(f"f0 = f(0) must lie in (0, 1], got {q0}")
    with mp.workdps(check_dps):
        tol = mp.mpf(10) ** (-(check_dps // 2))
        ts = [mp.mpf(j) / n for j in range(n + 1)]
        try:
            vs = [mp.mpf(f(t)) for t in ts]
        except Exception as exc:  # noqa: BLE001 - report any failure of the user's f
            raise InvalidParameterError(f"{name}: evaluating f on [0, 1] failed: {exc}") from exc
        if abs(vs[0] - _mpf(q0)) > tol:
            raise InvalidParameterError(
                f"{name}: f(0) = {mp.nstr(vs[0], 10)} differs from f0 = {q0}"
            )
        for t, v in zip(ts, vs):
            if v < -tol or v > 1 - t + tol:
                raise InvalidParameterError(
                    f"{name}: not a trade-off function at t = {mp.nstr(t, 10)}: "
                    f"f(t) = {mp.nstr(v, 10)} is outside [0, 1 - t]"
                )
        for j in range(n):
            if vs[j + 1] > vs[j] + tol:
                raise InvalidParameterError(
                    f"{name}: f is not non-increasing at t = {mp.nstr(ts[j], 10)}: "
                    f"f({mp.nstr(ts[j + 1], 10)}) > f({mp.nstr(ts[j], 10)})"
                )
        for j in range(1, n):
            second = vs[j - 1] - 2 * vs[j] + vs[j + 1]
            if second < -tol:
                raise InvalidParameterError(
                    f"{name}: f is not convex at t = {mp.nstr(ts[j], 10)}: second difference "
                    f"{mp.nstr(second, 5)} < 0"
                )
        for t, v in zip(ts, vs):
            if v > tol:
                back = mp.mpf(f(v))
                if abs(back - t) > tol:
                    raise InvalidParameterError(
                        f"{name}: f is not symmetric (f(f(t)) != t) at t = {mp.nstr(t, 10)}: "
                        f"f(f(t)) = {mp.nstr(back, 10)}"
                    )

    def num_df(x: Any) -> Any:
        return mp.diff(f, x)

    def num_d2f(x: Any) -> Any:
        return mp.diff(f, x, 2)

    return SmoothTradeoff(name, f, df or num_df, d2f or num_d2f, q0, f_ball, None, ())


# ---------------------------------------------------------------------------------------
# solving the optimality conditions
# ---------------------------------------------------------------------------------------


def _logistic(y: Any) -> Any:
    return 1 / (1 + mp.exp(-y))


def _logit(p: Any) -> Any:
    return mp.log(p / (1 - p))


def _findroot(equations: Callable[[list[Any]], list[Any]], y0: list[Any], what: str) -> list[Any]:
    """Solve equations(y) = 0 by mpmath's (multidimensional) Newton, checking the residual."""
    try:
        if len(y0) == 1:
            sol = [mp.findroot(lambda y: equations([y])[0], y0[0], verify=False)]
        else:
            res = mp.findroot(lambda *ys: equations(list(ys)), y0, verify=False)
            sol = [res[i] for i in range(len(y0))]
    except (ZeroDivisionError, ValueError, OverflowError, TypeError) as exc:  # TypeError: mpmath LU
        raise SolverError(f"{what}: Newton iteration failed ({exc})") from exc
    resid = max(abs(r) for r in equations(sol))
    if not mp.isfinite(resid) or resid > mp.mpf(10) ** (-(mp.dps - 8)):
        raise SolverError(f"{what}: optimality equations not solved (residual {mp.nstr(resid, 5)})")
    return sol


def _below_residuals(tr: SmoothTradeoff, rule: Rule, xs: list[Any]) -> list[Any]:
    """Midpoint conditions u_i - (q_{i-1} + q_i)/2 for tangent points xs (module docstring).

    Coinciding lines (possible on an affine part of f) get the residual -1 for the right
    one and +1 for the left one, pushing the points apart.
    """
    s2 = mp.sqrt(2)
    ls = []
    for x in xs:
        fx = tr.f(x)
        s = tr.df(x)
        ls.append((s, fx - s * x, (x - fx) / s2))  # slope, intercept, rotated touch u
    qs: list[Any] = [-_mpf(tr.f0) / s2 if rule is Rule.PAPER else -ls[0][1] / s2]
    for (sl, bl, _), (sr, br, _) in zip(ls, ls[1:]):
        if sl == sr:
            qs.append(None)
            continue
        x = (br - bl) / (sl - sr)
        qs.append((x - (bl + sl * x)) / s2)
    qs.append(mp.mpf(0))
    out = []
    for i, (_, _, u) in enumerate(ls):
        if qs[i] is None:
            out.append(mp.mpf(-1))
        elif qs[i + 1] is None:
            out.append(mp.mpf(1))
        else:
            out.append(u - (qs[i] + qs[i + 1]) / 2)
    return out


def _above_residuals(tr: SmoothTradeoff, c: Any, ts: list[Any]) -> list[Any]:
    """Chord conditions f'(t_i)(t_{i+1} - t_{i-1}) - (f(t_{i+1}) - f(t_{i-1}))."""
    full = [mp.mpf(0), *ts, c]
    fs = [_mpf(tr.f0), *(tr.f(t) for t in ts), c]
    return [
        tr.df(full[i]) * (full[i + 1] - full[i - 1]) - (fs[i + 1] - fs[i - 1])
        for i in range(1, len(full) - 1)
    ]


def _solve_points(
    residuals: Callable[[list[Any]], list[Any]], x0: list[Any], c: Any, what: str
) -> list[Any]:
    """Solve residuals(xs) = 0 for 0 < x_1 < ... < x_m < c.

    Newton's method in the coordinates y_i = logit(x_i / c) is tried first. If it fails
    (a poor start, e.g. on an affine part of f), a few Gauss-Seidel sweeps precondition
    it: residual i goes from negative to positive as x_i moves from its left neighbour
    x_{i-1} to its right one x_{i+1} (x_0 = 0, x_{m+1} = c), so each sweep bisects for
    x_i between them at modest precision; then Newton is run again.
    """

    def eqs(ys: list[Any]) -> list[Any]:
        return residuals([c * _logistic(y) for y in ys])

    def newton(start: list[Any]) -> list[Any]:
        xs = [c * _logistic(y) for y in _findroot(eqs, [_logit(x / c) for x in start], what)]
        if any(not a < b for a, b in zip(xs, xs[1:])):
            raise SolverError(f"{what}: points not increasing: {[mp.nstr(x, 8) for x in xs]}")
        return xs

    try:
        return newton(x0)
    except SolverError:
        pass  # a poor start (e.g. on an affine part of f): precondition, then retry
    m = len(x0)
    with mp.workdps(20):
        xs = [+x for x in x0]
        for _ in range(4 + 2 * m):
            for i in range(m):
                lo = xs[i - 1] if i > 0 else mp.mpf(0)
                hi = xs[i + 1] if i + 1 < m else c

                def fi(x: Any, i: int = i) -> Any:
                    return residuals([*xs[:i], x, *xs[i + 1 :]])[i]

                if lo < hi:
                    xs[i] = _solve_increasing(fi, None, lo, hi)
    return newton(xs)


def _solve_below(tr: SmoothTradeoff, n: int, rule: Rule, c: Any) -> list[Any]:
    """Tangent points x_1 < ... < x_n in (0, c) of the n-piece approximation from below."""
    z = -_mpf(tr.f0) / mp.sqrt(2)
    x0 = [tr.rotation_point(z + (2 * i + 1) * (-z) / (2 * n), 20) for i in range(n)]
    return _solve_points(
        lambda xs: _below_residuals(tr, rule, xs),
        x0,
        c,
        f"{tr.name}: {n}-piece approximation from below",
    )


def _solve_above(tr: SmoothTradeoff, n: int, c: Any) -> list[Any]:
    """Vertices 0 = t_0 < t_1 < ... < t_n = c of the n-piece approximation from above."""
    if n == 1:
        return [mp.mpf(0), c]
    z = -_mpf(tr.f0) / mp.sqrt(2)
    x0 = [tr.rotation_point(z + i * (-z) / n, 20) for i in range(1, n)]
    ts = _solve_points(
        lambda ts: _above_residuals(tr, c, ts),
        x0,
        c,
        f"{tr.name}: {n}-piece approximation from above",
    )
    return [mp.mpf(0), *ts, c]


def _tangent_delta(tr: SmoothTradeoff, eps: Any, c: Any) -> Any:
    """delta(eps) = 1 - min_t (f(t) + e^eps t): the highest line of slope -e^eps below f."""
    slope = -mp.exp(eps)
    if tr.df(c) <= slope:  # the minimiser lies beyond c; cannot happen for eps >= 0
        x = c
    else:
        tiny = mp.mpf(2) ** (-mp.prec)
        if tr.df(tiny) >= slope:
            x = mp.mpf(0)
        else:
            x = _solve_increasing(lambda t: tr.df(t) - slope, tr.d2f, tiny, c)
    fx = _mpf(tr.f0) if x == 0 else tr.f(x)
    return 1 - fx + slope * x


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


# ---------------------------------------------------------------------------------------
# certification
# ---------------------------------------------------------------------------------------


def certify_constraints(
    tradeoff: SmoothTradeoff,
    constraints: Sequence[Constraint],
    side: Side | str,
    *,
    prec: int = 200,
    split_points: Sequence[Fraction] = (),
    max_intervals: int = 100_000,
) -> int:
    """Prove f_{eps,delta} <= f (side "below") or >= f ("above") on all of [0, 1].

    Adaptive bisection with ``flint.arb`` balls at ``prec`` bits. On [a, b], convexity of
    f bounds it above by its chord and below by the extension of the secant through a
    neighbouring point; each affine piece of f_{eps,delta} is compared with these bounds at
    a and b (exact for affine functions). The eps are irrational exponents e^eps, handled
    as balls. Relies on f being convex (true of every trade-off function).

    Args:
        tradeoff: f, with an interval version ``f_ball``.
        constraints: Exact (eps, delta) pairs.
        side: "below" or "above".
        prec: arb working precision in bits.
        split_points: Extra rational points to start the subdivision with.
        max_intervals: Budget of subintervals before giving up.

    Returns:
        The number of subintervals used by the proof.

    Raises:
        CertificationError: if the inequality fails at some point (with the point), or
            stays undecided within the budget.
        InvalidParameterError: if f has no interval version, or a parameter is bad.
    """
    side = Side.parse(side)
    if tradeoff.f_ball is None:
        raise InvalidParameterError(
            f"{tradeoff.name} has no interval version (f_ball); it cannot be certified"
        )
    cons = [(_parse_rational(e, "eps"), _parse_rational(d, "delta")) for e, d in constraints]
    for e, d in cons:
        if e < 0 or not 0 <= d <= 1:
            raise InvalidParameterError(f"constraint (eps, delta) = ({e}, {d}) is out of range")
    f_ball = tradeoff.f_ball
    with flint.ctx.workprec(prec):
        bigs = [(d, _arb(e).exp()) for e, d in cons]
        cache: dict[Fraction, flint.arb] = {}
        line_cache: dict[Fraction, list[flint.arb]] = {}

        def fb(t: Fraction) -> flint.arb:
            v = cache.get(t)
            if v is None:
                v = cache[t] = f_ball(t)
            return v

        def lv(t: Fraction) -> list[flint.arb]:
            # values of all lines at t; the rational parts are formed exactly, so a line
            # through (0, 1 - delta) or (1 - delta, 0) is exact there
            v = line_cache.get(t)
            if v is None:
                v = line_cache[t] = [
                    y
                    for d, big in bigs
                    for y in (_arb(1 - d) - big * _arb(t), _arb(1 - d - t) / big)
                ]
            return v

        def violated(t: Fraction) -> bool:
            ft = fb(t)
            vals = lv(t)
            if side is Side.BELOW:
                return any(v - ft > 0 for v in vals)
            return ft > 0 and all(v - ft < 0 for v in vals)

        pts = sorted({Fraction(j, 64) for j in range(65)} | {p for p in split_points if 0 < p < 1})
        stack = [(pts[i], pts[i + 1]) for i in range(len(pts) - 1)][::-1]
        done = 0
        min_width = Fraction(1, 2 ** (prec - 8))
        while stack:
            a, b = stack.pop()
            done += 1
            fa, fb_ = fb(a), fb(b)
            va, vb = lv(a), lv(b)
            if side is Side.BELOW:
                if a > 0:
                    a2 = max(Fraction(0), 2 * a - b)
                    slope = (fa - fb(a2)) / _arb(a - a2)
                    la, lb = fa, fa + slope * _arb(b - a)
                else:
                    b2 = min(Fraction(1), 2 * b - a)
                    slope = (fb(b2) - fb_) / _arb(b2 - b)
                    la, lb = fb_ - slope * _arb(b - a), fb_
                ok = all(
                    ((la - ya) >= 0 and (lb - yb) >= 0) or (ya <= 0 and yb <= 0)
                    for ya, yb in zip(va, vb)
                )
            else:
                ok = (fa <= 0 and fb_ <= 0) or any(
                    (ya - fa) >= 0 and (yb - fb_) >= 0 for ya, yb in zip(va, vb)
                )
            if ok:
                continue
            for t in (a, b):
                if violated(t):
                    rel = "<=" if side is Side.BELOW else ">="
                    raise CertificationError(
                        f"{tradeoff.name}: f_eps,delta {rel} f fails at t = {t} "
                        f"(~{mpf_str(t, 12)}): f(t) = {fb(t).str(10, radius=False)}, constraints "
                        f"{[(str(e), str(d)) for e, d in cons]}"
                    )
            if done + len(stack) > max_intervals or b - a < min_width:
                raise CertificationError(
                    f"{tradeoff.name}: could not certify f_eps,delta {side} f on "
                    f"[{mpf_str(a, 12)}, {mpf_str(b, 12)}] within {max_intervals} subintervals at "
                    f"{prec} bits (the rounding is too tight or on the wrong side)"
                )
            m = (a + b) / 2
            stack.append((m, b))
            stack.append((a, m))
    return done


def _numeric_check(
    tradeoff: SmoothTradeoff,
    constraints: Sequence[Constraint],
    side: Side | str,
    extra: Sequence[Any],
    dps: int,
    points: int = 2048,
) -> int:
    """Check the inequality at grid points with mpmath only (no proof)."""
    side = Side.parse(side)
    with mp.workdps(dps):
        lines = _pl_lines(constraints)
        ts = [mp.mpf(j) / points for j in range(points + 1)] + [mp.mpf(x) for x in extra]
        for t in ts:
            h = max([mp.mpf(0), *(b + s * t for s, b in lines)])
            ft = tradeoff.f(t)
            if (side is Side.BELOW and h > ft) or (side is Side.ABOVE and h < ft):
                raise CertificationError(
                    f"{tradeoff.name}: numerical check of f_eps,delta {side} f failed at "
                    f"t = {mp.nstr(t, 12)}: f_eps,delta(t) = {mp.nstr(h, 12)}, "
                    f"f(t) = {mp.nstr(ft, 12)}"
                )
    return len(ts)


def _finish(
    tr: SmoothTradeoff,
    side: Side | str,
    n: int,
    rule: Rule,
    rounded: list[Constraint],
    unrounded: list[tuple[Any, Any]],
    touch: list[Any],
    eps_den: int,
    delta_den: int,
    certify: bool,
    dps: int,
) -> Approximation:
    merged: dict[Fraction, Fraction] = {}
    for e, d in rounded:
        merged[e] = min(d, merged.get(e, d))
    constraints = tuple(sorted(merged.items(), key=lambda p: p[0], reverse=True))
    if certify and tr.f_ball is not None:
        splits = [_round_to_grid(x, 2**64, up=False) for x in touch if 0 < x < 1]
        count = certify_constraints(
            tr, constraints, side, prec=max(128, 4 * dps), split_points=splits
        )
        certified = True
        certificate = (
            f"proven on [0, 1] with arb ball arithmetic ({max(128, 4 * dps)} bits, "
            f"{count} subintervals), using the convexity of f"
        )
    else:
        count = _numeric_check(tr, constraints, side, touch, dps)
        certified = False
        why = "certification disabled" if not certify else "f has no interval version"
        certificate = f"numerically checked only at {count} points with mpmath ({why})"
    return Approximation(
        side,
        n,
        constraints,
        tr,
        rule,
        eps_den,
        delta_den,
        certified,
        certificate,
        tuple(unrounded),
        tuple(touch),
    )


MAX_PIECES = 64  # each piece is one unknown of the optimality system (solved at dps digits)
MAX_DPS = 10_000


def _common_args(pieces: Any, eps_denominator: Any, delta_denominator: Any, dps: Any) -> None:
    if _positive_int(pieces, "pieces") > MAX_PIECES:
        raise InvalidParameterError(
            f"pieces = {pieces} is over the limit of {MAX_PIECES} (the optimality system is "
            "solved at high precision; the approximation error is already tiny at 10 pieces)"
        )
    _positive_int(eps_denominator, "eps_denominator")
    _positive_int(delta_denominator, "delta_denominator")
    if not 20 <= _positive_int(dps, "dps") <= MAX_DPS:
        raise InvalidParameterError(f"dps must lie in [20, {MAX_DPS}], got {dps}")


def approx_from_below(
    f: SmoothTradeoff,
    pieces: int = 2,
    *,
    rule: Rule | str = Rule.OPTIMAL,
    eps_denominator: int = 1000,
    delta_denominator: int = 10**8,
    dps: int = DEFAULT_DPS,
    certify: bool = True,
) -> Approximation:
    """Best approximation of f from below by ``pieces`` (eps, delta) constraints.

    Solves "each tangent touches f at the midpoint (in rotated coordinates) of the
    interval it covers" (module docstring), rounds eps up to the grid 1/eps_denominator,
    takes the tangent delta of the rounded eps, rounds it up to the grid
    1/delta_denominator, and certifies f_{eps,delta} <= f on [0, 1].

    Args:
        f: The trade-off function.
        pieces: Number n >= 1 of constraints.
        rule: ``"optimal"`` (maximal area, the default) or ``"paper"`` (the paper's
            Proposition 1 condition, first interval starting at z = -f(0)/sqrt2; it
            reproduces Figure 3 but is not area-maximal).
        eps_denominator: Every eps is a multiple of 1/eps_denominator.
        delta_denominator: Every delta is a multiple of 1/delta_denominator.
        dps: Working precision of the solve (decimal digits, >= 20).
        certify: Prove the inequality (needs ``f.f_ball``); otherwise check it numerically.

    Returns:
        The approximation; ``certified`` tells whether it was proven.

    Raises:
        InvalidParameterError: on a bad parameter.
        SolverError: if the optimality equations cannot be solved.
        CertificationError: if the rounded constraints cannot be proven to lie below f.
    """
    _common_args(pieces, eps_denominator, delta_denominator, dps)
    rule = Rule.parse(rule)
    if rule is Rule.CHORDS:
        raise InvalidParameterError(
            "rule 'chords' is for approx_from_above; use 'optimal' or 'paper'"
        )
    with mp.workdps(dps + 15):
        c = f.fixed_point(mp.dps)
        xs = _solve_below(f, pieces, rule, c)
        margin = mp.mpf(10) ** (-(dps // 2))
        unrounded, rounded = [], []
        for x in xs:
            s = f.df(x)
            eps, delta = mp.log(-s), 1 - f.f(x) + s * x
            unrounded.append((+eps, +delta))
            e_r = _round_to_grid(eps, eps_denominator, up=True)
            d_r = _round_to_grid(
                _tangent_delta(f, _mpf(e_r), c) + margin, delta_denominator, up=True
            )
            if d_r > 1:
                raise CertificationError(f"{f.name}: rounded delta {d_r} exceeds 1")
            rounded.append((e_r, d_r))
    return _finish(
        f,
        Side.BELOW,
        pieces,
        rule,
        rounded,
        unrounded,
        xs,
        eps_denominator,
        delta_denominator,
        certify,
        dps,
    )


def approx_from_above(
    f: SmoothTradeoff,
    pieces: int = 2,
    *,
    eps_denominator: int = 1000,
    delta_denominator: int = 10**8,
    dps: int = DEFAULT_DPS,
    certify: bool = True,
) -> Approximation:
    """Best approximation of f from above by ``pieces`` (eps, delta) constraints.

    Solves f'(t_i) = slope of the chord from t_{i-1} to t_{i+1} (t_0 = 0, t_n = c;
    Proposition 2 for n = 2), rounds each chord's eps down to the grid
    1/eps_denominator, re-pivots the chord about its left end point, rounds delta down to
    the grid 1/delta_denominator, and certifies f_{eps,delta} >= f on [0, 1].

    Args:
        f: The trade-off function.
        pieces: Number n >= 1 of constraints.
        eps_denominator: Every eps is a multiple of 1/eps_denominator.
        delta_denominator: Every delta is a multiple of 1/delta_denominator.
        dps: Working precision of the solve (decimal digits, >= 20).
        certify: Prove the inequality (needs ``f.f_ball``); otherwise check it numerically.

    Returns:
        The approximation; ``certified`` tells whether it was proven.

    Raises:
        InvalidParameterError: on a bad parameter.
        SolverError: if the optimality equations cannot be solved.
        CertificationError: if the rounded constraints cannot be proven to lie above f.
    """
    _common_args(pieces, eps_denominator, delta_denominator, dps)
    with mp.workdps(dps + 15):
        c = f.fixed_point(mp.dps)
        ts = _solve_above(f, pieces, c)
        fs = [_mpf(f.f0), *(f.f(t) for t in ts[1:-1]), c]
        margin = mp.mpf(10) ** (-(dps // 2))
        unrounded, rounded = [], []
        for i in range(1, len(ts)):
            slope = (fs[i] - fs[i - 1]) / (ts[i] - ts[i - 1])
            unrounded.append((mp.log(-slope), 1 - fs[i - 1] + slope * ts[i - 1]))
            e_r = _round_to_grid(mp.log(-slope), eps_denominator, up=False)
            if i == 1:  # pivot at t_0 = 0: delta = 1 - f(0) exactly
                d_r = Fraction(math.floor((1 - f.f0) * delta_denominator), delta_denominator)
            else:
                d = 1 - fs[i - 1] - mp.exp(_mpf(e_r)) * ts[i - 1]
                d_r = max(Fraction(0), _round_to_grid(d - margin, delta_denominator, up=False))
            rounded.append((e_r, d_r))
    return _finish(
        f,
        Side.ABOVE,
        pieces,
        Rule.CHORDS,
        rounded,
        unrounded,
        ts,
        eps_denominator,
        delta_denominator,
        certify,
        dps,
    )
