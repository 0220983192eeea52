"""Check 5: Appendix H's convex-conjugate route equals the Minkowski edge merge.

Mathematics (docs/theory.md, section 2; Lemma 1, Corollary 1, Appendix H).  A mechanism that picks
component ``i`` with probability ``a_i`` and reveals it has trade-off function
``f_m = (sum_i a_i f_i^*)^*`` (Prop. 5), where for piecewise affine ``f_i`` on ``[0, 1]``
``f_i^*(s) = max_j (t_j s - f_i(t_j))`` over the breakpoints ``t_j`` of ``f_i`` including 0 and
1 (Prop. 4).  Equivalently (Corollary 1) its region is ``sum_i a_i F_i`` and the lower boundary
starts at ``(0, sum_i a_i f_i(0))`` and follows every edge of every ``f_i``, scaled by ``a_i``,
in order of increasing slope.

Components: ``f_i = f_{eps_i, delta_i}`` with symbols ``x_i = e^{eps_i}``, ``delta_i`` and
symbolic weights ``a_i`` (not even required to sum to 1).  Its breakpoints are
``0, c_i = (1-delta_i)/(1+x_i), 1-delta_i, 1`` and its edges have slopes ``-x_i, -1/x_i, 0``.

Conjugate route, exactly as Appendix H: (1) ``f_i^*`` at every breakpoint ``s`` of
``f_m^*`` (the distinct edge slopes), with the maximising breakpoint ``t_j`` being the vertex
whose left/right edge slopes bracket ``s`` (convexity; also confirmed to be the numeric
maximum at an exact sample point of the chamber); (2) ``f_m^* = sum a_i f_i^*``; (3) ``f_m``
is the maximum of the lines ``s t - f_m^*(s)``: its vertices are the intersections of
consecutive lines, plus ``t = 0`` and ``t = sum a_i``.  Both vertex lists are compared as
rational functions in all symbols.

Chambers: the order of the slopes is fixed by the weak ordering of ``x_1, ..., x_n``
(ties substituted, e.g. ``x_2 = x_1``) and by whether the smallest ``eps`` is 0 (``x = 1``,
total-variation component); every weak ordering is checked, for ``n = 2`` and ``n = 3``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from fractions import Fraction

import sympy
from sympy import QQ
from sympy.polys.fields import FracElement, field

from proofs_checks._result import MAX_REPORTED, CheckResult

NAME = "mixture_conjugate"
CLAIM = "Appendix H conjugate route = Minkowski edge merge, mixtures of 2 and 3 regions"

Combine = Callable[[Sequence[FracElement], Sequence[FracElement]], FracElement]


def weighted_sum(weights: Sequence[FracElement], values: Sequence[FracElement]) -> FracElement:
    """``f_m^*(s) = sum_i a_i f_i^*(s)`` (Appendix H)."""
    return sum((a * v for a, v in zip(weights, values, strict=True)), weights[0] * 0)


def weak_orderings(n: int) -> list[list[list[int]]]:
    """All ordered set partitions of ``range(n)`` (blocks listed from largest x down)."""
    out: list[list[list[int]]] = []

    def rec(rest: list[int], acc: list[list[int]]) -> None:
        if not rest:
            out.append(acc)
            return
        for r in range(1, len(rest) + 1):
            for block in itertools.combinations(rest, r):
                rec([e for e in rest if e not in block], [*acc, list(block)])

    rec(list(range(n)), [])
    return out


def _slopes(x: FracElement, xv: Fraction) -> list[tuple[FracElement, Fraction]]:
    """Edge slopes of ``f_{eps, delta}`` with their values at the sample point."""
    return [(-x, -xv), (-1 / x, -1 / xv), (x * 0, Fraction(0))]


def _vertices_merge(xs, xv, ds, ws) -> list[tuple]:
    edges = []
    for x, v, d, w in zip(xs, xv, ds, ws, strict=True):
        c = (1 - d) / (1 + x)
        (s1, k1), (s2, k2), (s3, k3) = _slopes(x, v)
        edges += [(k1, w * c, -w * x * c), (k2, w * x * c, -w * c), (k3, w * d, w * 0)]
    edges.sort(key=lambda e: e[0])
    verts = [(ws[0] * 0, sum((w * (1 - d) for d, w in zip(ds, ws, strict=True)), ws[0] * 0))]
    prev = None
    for key, dx, dy in edges:
        t, b = verts[-1]
        if prev is not None and key == prev:
            verts[-1] = (t + dx, b + dy)
        else:
            verts.append((t + dx, b + dy))
        prev = key
    return verts


def _conjugate_at(x, xv, d, dv, s, sv) -> tuple[FracElement, list[str]]:
    c = (1 - d) / (1 + x)
    cv = (1 - dv) / (1 + xv)
    zero, one = x * 0, x * 0 + 1
    pts = [(zero, 1 - d), (c, c), (1 - d, zero), (one, zero)]
    pts_v = [(Fraction(0), 1 - dv), (cv, cv), (1 - dv, Fraction(0)), (Fraction(1), Fraction(0))]
    left = [None, -xv, -1 / xv, Fraction(0)]
    right = [-xv, -1 / xv, Fraction(0), None]
    pick = next(
        j
        for j in range(4)
        if (left[j] is None or left[j] <= sv) and (right[j] is None or sv <= right[j])
    )
    notes = []
    vals_v = [t * sv - f for t, f in pts_v]
    if vals_v[pick] != max(vals_v):
        notes.append(f"Prop. 4 argmax by convexity is not the numeric max at s={sv}")
    t, f = pts[pick]
    return t * s - f, notes


def _vertices_conjugate(xs, xv, ds, dv, ws, combine: Combine) -> tuple[list[tuple], list[str]]:
    slopes: list[tuple[FracElement, Fraction]] = []
    for x, v in zip(xs, xv, strict=True):
        for s, k in _slopes(x, v):
            if all(k != k2 for _, k2 in slopes):
                slopes.append((s, k))
    slopes.sort(key=lambda e: e[1])
    notes: list[str] = []
    fstar = []
    for s, sv in slopes:
        vals = []
        for x, v, d, dd in zip(xs, xv, ds, dv, strict=True):
            val, n = _conjugate_at(x, v, d, dd, s, sv)
            vals.append(val)
            notes += n
        fstar.append(combine(ws, vals))
    verts = [(ws[0] * 0, -fstar[0])]
    for j in range(len(slopes) - 1):
        t = (fstar[j + 1] - fstar[j]) / (slopes[j + 1][0] - slopes[j][0])
        verts.append((t, slopes[j][0] * t - fstar[j]))
    tend = sum(ws, ws[0] * 0)
    verts.append((tend, slopes[-1][0] * tend - fstar[-1]))
    return verts, notes


def check_mixture(quick: bool = False, *, combine: Combine = weighted_sum) -> CheckResult:
    """Claim: Prop. 4/5's conjugate computation gives exactly the Minkowski-merged polygon.

    Scope: mixtures of ``n = 2`` and ``n = 3`` symbolic regions ``R(eps_i, delta_i)`` with
    symbolic weights; every weak ordering of the ``eps_i`` (slope chambers), each with the
    smallest ``eps`` positive or 0 (quick: ``n = 2`` only).

    Args:
        quick: lower the scope.
        combine: how the conjugates are combined (hook for perturbation tests).

    Returns:
        The check result; a failure names the chamber, vertex and difference.
    """
    bad: list[str] = []
    nch = 0
    for n in (2,) if quick else (2, 3):
        names = [f"x{i}" for i in range(1, n + 1)] + [f"delta{i}" for i in range(1, n + 1)]
        names += [f"a{i}" for i in range(1, n + 1)]
        fld, *gens = field(",".join(names), QQ)
        xgen, ds, ws = gens[:n], gens[n : 2 * n], gens[2 * n :]
        dv = [Fraction(1, 10 + i) for i in range(n)]
        wv = [Fraction(1, 2 + i) for i in range(n)]
        for order in weak_orderings(n):
            for tv in (False, True):
                nch += 1
                xs: list[FracElement] = [fld.one] * n
                xv = [Fraction(1)] * n
                for r, block in enumerate(order):
                    rank_from_bottom = len(order) - 1 - r
                    for i in block:
                        if not (tv and rank_from_bottom == 0):
                            xs[i] = xgen[block[0]]
                            xv[i] = Fraction(2 + rank_from_bottom)
                label = " > ".join("=".join(f"eps{i + 1}" for i in b) for b in order) + (
                    " (smallest = 0)" if tv else ""
                )
                merge = _vertices_merge(xs, xv, ds, ws)
                conj, notes = _vertices_conjugate(xs, xv, ds, dv, ws, combine)
                msgs = list(notes)
                if len(merge) != len(conj):
                    msgs.append(f"{len(merge)} merge vertices vs {len(conj)} conjugate vertices")
                else:
                    sample = dict(zip(names, [*xv, *dv, *wv], strict=True))
                    for j, (p, q) in enumerate(zip(merge, conj, strict=True)):
                        for coord, u, v in (("beta_I", p[0], q[0]), ("beta_II", p[1], q[1])):
                            if u != v:
                                expr = (u - v).as_expr()
                                at = expr.subs(
                                    {
                                        sympy.Symbol(k): sympy.Rational(w.numerator, w.denominator)
                                        for k, w in sample.items()
                                    }
                                )
                                msgs.append(
                                    f"vertex {j} {coord}: merge - conjugate = {str(expr)[:200]}"
                                    f"; at x={[str(t) for t in xv]}, delta={[str(t) for t in dv]}"
                                    f", a={[str(t) for t in wv]}: {at}"
                                )
                bad += [f"n={n}, chamber {label}: {m}" for m in msgs]
    if len(bad) > MAX_REPORTED * 2:
        bad = bad[: MAX_REPORTED * 2] + [f"... {len(bad) - MAX_REPORTED * 2} more mismatches"]
    scope = f"n in {{2{'' if quick else ',3'}}} regions, {nch} slope chambers"
    return CheckResult(NAME, not bad, scope, bad)
