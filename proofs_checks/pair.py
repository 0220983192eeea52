"""Check 1: the paper's alpha gives a pair whose trade-off function is f_{eps_vec, delta_vec}.

Mathematics (docs/theory.md, section 1).  For active constraints ``eps1 > eps2 >= 0``,
``delta1 < delta2``, the pair with letters ``-1..4``

    P0 = (delta1, (1-delta1)(1-alpha) x1/(x1+1), (1-delta1) alpha x2/(x2+1),
          (1-delta1) alpha/(x2+1), (1-delta1)(1-alpha)/(x1+1), 0),   P1(y) = P0(3 - y),

with ``1 - alpha = (delta2 - delta1)(1 + x1) / ((1 - delta1)(x1 - x2))``, ``x_i = e^{eps_i}``.

Verified as identities of rational functions in ``(x1, x2, delta1, delta2)``:

1. ``P0`` and ``P1`` sum to 1, and the likelihood ratios ``P1/P0`` of letters 3, 2, 1, 0
   are ``x1, x2, 1/x2, 1/x1`` (so sorting letters by ratio is fixed by ``x1 > x2 > 1``).
2. ``alpha (1 - delta1)(x1 - x2) = (1 - delta2)(1 + x1) - (1 - delta1)(1 + x2)``: so
   ``alpha > 0`` is exactly the activity condition and ``alpha < 1`` is ``delta1 < delta2``.
3. Tightness: the pair's ``delta(eps1) = delta1`` and ``delta(eps2) = delta2`` (section 3).
4. Region: the vertices of the pair's trade-off curve (cumulative sums of the letters sorted
   by decreasing ``P1/P0``) equal the vertices of ``max`` of the constraint lines
   ``1 - delta_i - x_i t``, ``(1 - delta_i - t)/x_i`` and ``0``, taken in slope order
   (consecutive intersections).  The letter masses are positive, so these vertices increase
   in ``t``; a convex chain through all lines in slope order with increasing vertices is
   their upper envelope, hence the curve *is* ``f_{eps_vec, delta_vec}``.
5. The canonical weights ``w_j = L_j (1 + e^{l_j})`` (edge lengths of ``f`` on ``[0, c]``) are
   ``(1-delta1)(1-alpha)`` and ``(1-delta1) alpha``, and ``delta1 + w_1 + w_2 = 1``.

Chambers: ``x1 > x2 > 1`` (generic symbols) and ``x2 = 1`` (``eps2 = 0``, a total-variation
constraint: the eps2-RR is pure noise, its two letters merge and the two eps2 lines coincide).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sympy

from proofs_checks._result import CheckResult

NAME = "pair_alpha"
CLAIM = "the paper's alpha pair has trade-off f_{eps,delta}: tight constraints, equal vertices"

AlphaFormula = Callable[[sympy.Expr, sympy.Expr, sympy.Expr, sympy.Expr], sympy.Expr]

X1, X2, D1, D2 = sympy.symbols("x1 x2 delta1 delta2", positive=True)
SAMPLE = {
    X1: sympy.Integer(3),
    X2: sympy.Integer(2),
    D1: sympy.Rational(1, 20),
    D2: sympy.Rational(1, 10),
}
"""An exact point inside the generic chamber (both constraints active), for reports."""


def paper_alpha(x1: sympy.Expr, x2: sympy.Expr, d1: sympy.Expr, d2: sympy.Expr) -> sympy.Expr:
    """Return the paper's ``alpha`` (docs/theory.md, section 1)."""
    return 1 - (d2 - d1) * (1 + x1) / ((1 - d1) * (x1 - x2))


def is_zero(expr: sympy.Expr) -> bool:
    """Exact zero test of a rational function: the expanded numerator of ``together``.

    ``together`` writes the expression as ``p / q`` with ``q`` a product of the (nonzero)
    denominators, so the expression is zero iff the polynomial ``p`` expands to 0; this
    avoids the gcd computations of ``cancel``.
    """
    num, _ = sympy.fraction(sympy.together(expr))
    return sympy.expand(num) == 0


def _report(label: str, lhs: sympy.Expr, rhs: sympy.Expr, subs: dict) -> str:
    diff = sympy.cancel(sympy.together(lhs - rhs))
    pt = diff.subs(subs)
    return f"{label}: difference {str(diff)[:250]}; at {subs}: {pt}"


def line_vertices(xs: Sequence[sympy.Expr], ds: Sequence[sympy.Expr]) -> list[tuple]:
    """Vertices of ``max`` of the constraint lines of ``(x_j, d_j)``, all taken in slope order.

    Lines ``1 - d_j - x_j t`` (j ascending), mirrors ``(1 - d_j - t)/x_j`` (j descending) and 0.
    A mirror equal to its line (``x_j = 1``) is not repeated.
    """
    lines = [(-x, 1 - d) for x, d in zip(xs, ds, strict=True)]
    for x, d in reversed(list(zip(xs, ds, strict=True))):
        if x != 1:
            lines.append((-1 / x, (1 - d) / x))
    lines.append((sympy.Integer(0), sympy.Integer(0)))
    verts = [(sympy.Integer(0), lines[0][1])]
    for (s1, b1), (s2, b2) in zip(lines, lines[1:], strict=False):
        t = (b2 - b1) / (s1 - s2)
        verts.append((t, b1 + s1 * t))
    verts.append((sympy.Integer(1), sympy.Integer(0)))
    return verts


def letters_of_pair(
    xs: Sequence[sympy.Expr], leak: sympy.Expr, weights: Sequence[sympy.Expr]
) -> list[tuple[sympy.Expr, sympy.Expr, sympy.Expr]]:
    """Letters ``(P0, P1, claimed P1/P0)`` of the canonical pair, by decreasing ``P1/P0``.

    The mirror leak (``P0 = 0``) comes first and the leak (``P1 = 0``) last; the two letters
    of an ``eps = 0`` randomized response are merged (equal ratio 1).
    """
    low = [(w / (1 + x), w * x / (1 + x), x) for x, w in zip(xs, weights, strict=True)]
    high = [(w * x / (1 + x), w / (1 + x), 1 / x) for x, w in zip(xs, weights, strict=True)]
    out: list[tuple[sympy.Expr, sympy.Expr, sympy.Expr]] = [(sympy.Integer(0), leak, sympy.oo)]
    out += low[:-1]
    if xs[-1] == 1:
        out.append((low[-1][0] + high[-1][0], low[-1][1] + high[-1][1], sympy.Integer(1)))
    else:
        out += [low[-1], high[-1]]
    out += list(reversed(high[:-1]))
    out.append((leak, sympy.Integer(0), sympy.Integer(0)))
    return out


def pair_vs_constraints(
    xs: Sequence[sympy.Expr],
    ds: Sequence[sympy.Expr],
    leak: sympy.Expr,
    weights: Sequence[sympy.Expr],
    subs: dict,
) -> list[str]:
    """Compare the canonical pair's curve with ``f_{eps_vec, delta_vec}`` (items 1 and 4).

    Returns:
        Messages describing every mismatch (empty when all identities hold).
    """
    bad: list[str] = []
    letters = letters_of_pair(xs, leak, weights)
    if not is_zero(sum(p0 for p0, _, _ in letters) - 1):
        bad.append(_report("sum of P0 != 1", sum(p0 for p0, _, _ in letters), 1, subs))
    if not is_zero(sum(p1 for _, p1, _ in letters) - 1):
        bad.append(_report("sum of P1 != 1", sum(p1 for _, p1, _ in letters), 1, subs))
    for j, (p0, p1, ratio) in enumerate(letters[1:-1], start=1):
        if not is_zero(p1 - ratio * p0):
            bad.append(_report(f"letter {j}: P1/P0 != {ratio}", p1, ratio * p0, subs))
    verts = [(sympy.Integer(0), sympy.Integer(1))]
    for p0, p1, _ in letters:
        verts.append((verts[-1][0] + p0, verts[-1][1] - p1))
    verts = verts[1:]
    target = line_vertices(xs, ds)
    if len(verts) != len(target):
        bad.append(f"vertex count {len(verts)} (pair) != {len(target)} (constraints)")
        return bad
    for j, ((t1, b1), (t2, b2)) in enumerate(zip(verts, target, strict=True)):
        if not (is_zero(t1 - t2) and is_zero(b1 - b2)):
            bad.append(_report(f"vertex {j} beta_I", t1, t2, subs))
            bad.append(_report(f"vertex {j} beta_II", b1, b2, subs))
    return bad


def canonical_weights(xs: Sequence[sympy.Expr], ds: Sequence[sympy.Expr]) -> list[sympy.Expr]:
    """``w_j = L_j (1 + x_j)`` from the edge lengths of ``f`` on ``[0, c]`` (section 1)."""
    ts = [sympy.Integer(0)]
    for j in range(len(xs) - 1):
        ts.append((ds[j + 1] - ds[j]) / (xs[j] - xs[j + 1]))
    ts.append((1 - ds[-1]) / (1 + xs[-1]))  # fixed point c on the last line
    return [(ts[j + 1] - ts[j]) * (1 + xs[j]) for j in range(len(xs))]


def check_pair(quick: bool = False, *, alpha: AlphaFormula = paper_alpha) -> CheckResult:
    """Claim: the section-1 pair built from ``alpha`` realises ``f_{eps_vec, delta_vec}`` exactly.

    Scope: symbols ``x1 > x2 > 1, delta1 < delta2`` (chamber where both constraints are
    active), and the chamber ``x2 = 1`` (eps2 = 0).  Items 1-5 of the module docstring.

    Args:
        quick: unused (the check is already fast).
        alpha: the formula for ``alpha`` (hook for perturbation tests).

    Returns:
        The check result; a failure names the identity, the difference and its value at
        ``x1 = 3, x2 = 2, delta1 = 1/20, delta2 = 1/10`` (or ``x2 = 1``).
    """
    bad: list[str] = []
    for x2v, label in ((X2, "x1 > x2 > 1"), (sympy.Integer(1), "x2 = 1 (eps2 = 0)")):
        subs = dict(SAMPLE)
        subs.pop(X2)
        if x2v == X2:
            subs[X2] = SAMPLE[X2]
        a = alpha(X1, x2v, D1, D2)
        weights = [(1 - D1) * (1 - a), (1 - D1) * a]
        msgs = pair_vs_constraints([X1, x2v], [D1, D2], D1, weights, subs)
        lhs = a * (1 - D1) * (X1 - x2v)
        rhs = (1 - D2) * (1 + X1) - (1 - D1) * (1 + x2v)
        if not is_zero(lhs - rhs):
            msgs.append(_report("alpha (1-d1)(x1-x2) != activity margin", lhs, rhs, subs))
        letters = letters_of_pair([X1, x2v], D1, weights)
        p0_top, p1_top = letters[-2][0], letters[-2][1]  # letter 0, loss eps1
        if not is_zero(D1 + p0_top - x2v * p1_top - D2):
            msgs.append(_report("delta(eps2) != delta2", D1 + p0_top - x2v * p1_top, D2, subs))
        for j, (w, wc) in enumerate(
            zip(weights, canonical_weights([X1, x2v], [D1, D2]), strict=True), start=1
        ):
            if not is_zero(w - wc):
                msgs.append(_report(f"canonical weight w_{j}", w, wc, subs))
        bad += [f"chamber {label}: {m}" for m in msgs]
    return CheckResult(NAME, not bad, "symbolic x1,x2,delta1,delta2; 2 chambers", bad)
