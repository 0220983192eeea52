"""Exact rounding and certification of the approximations, and the public entry points.

Part of :mod:`dpcompose_exact.paper.approx` (its docstring states the mathematics).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import flint
from mpmath import mp

from ...errors import CertificationError, InvalidParameterError
from ...numbers.format import mpf_str
from .approximation import Approximation, _pl_lines
from .common import (
    DEFAULT_DPS,
    Constraint,
    Rule,
    Side,
    _arb,
    _mpf,
    _parse_rational,
    _positive_int,
    _round_to_grid,
)
from .solve import _solve_above, _solve_below, _tangent_delta
from .tradeoffs import SmoothTradeoff

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
