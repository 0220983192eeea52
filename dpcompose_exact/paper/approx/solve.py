"""The optimality conditions of the n-piece approximations, solved with mpmath (section 9).

Part of :mod:`dpcompose_exact.paper.approx` (its docstring states the mathematics).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mpmath import mp

from ...errors import SolverError
from .common import Rule, _mpf, _solve_increasing
from .tradeoffs import SmoothTradeoff

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
