"""Smooth trade-off functions: Gaussian, Laplace, and user-supplied f (docs/theory.md, section 9).

Part of :mod:`dpcompose_exact.paper.approx` (its docstring states the mathematics).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import flint
from mpmath import mp

from ...errors import InvalidParameterError
from .common import (
    DEFAULT_DPS,
    Family,
    _arb,
    _mpf,
    _parse_rational,
    _positive_int,
    _positive_rational,
    _solve_increasing,
)

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
