"""Symbolic formulas per chamber (dx.formula, dpcompose formula) against exact numbers.

Every piece is evaluated exactly (in the field Q(z), z = e^(1/L)) at random rational points
inside its chamber and compared with ``dx.compose`` (the generating-function route, an
independent construction); for n = 2 every term is checked symbolically against Theorem 3
written from the paper (alpha, the (a, b, c, d) sum, the (u, v) lattice).

The n = 3 chambers are narrow open cones, so their points are constructed, not drawn: the
integer points of smallest size in each cone, listed exactly coordinate by coordinate
(:func:`_lattice_points`), scaled at random; deltas are drawn so that every constraint is
active (:func:`active_deltas`).  Coverage: ``POINTS`` points in every chamber for n = 2,
k <= 5 and n = 3, k <= 3; for n = 3, k = 4 and 5 in seeded samples of chambers (every chamber
with DPCOMPOSE_FORMULA_ALL=1).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import time
import warnings
from fractions import Fraction
from math import factorial, lcm

import flint
import pytest
import sympy
from test_latex import compile_tex, needs_tex

import dpcompose_exact as dx
from dpcompose_exact.cli import main
from dpcompose_exact.errors import InactiveConstraintWarning, InvalidParameterError
from dpcompose_exact.numbers import ExpDomain, LinearForm, QzElem
from dpcompose_exact.numbers.value import Value
from dpcompose_exact.paper.formula import DELTAS, EPS, WS, XS, formula, loss_vectors, term_symbol

POINTS = 20
SAMPLE = {4: 12, 5: 4}
"""Chambers sampled per k in the n = 3 property test (every chamber: DPCOMPOSE_FORMULA_ALL=1)."""


def to_qz(expr: sympy.Expr, env: dict[sympy.Basic, QzElem], memo: dict | None = None) -> QzElem:
    """Evaluate a sympy expression (+, *, integer powers, rationals, symbols) in Q(z).

    ``memo`` caches subexpressions (the factors ``w_i / (1 + x_i)`` recur in every term).
    """
    if memo is not None and expr in memo:
        return memo[expr]
    if expr.is_Rational:
        out = QzElem.from_rational(Fraction(int(expr.p), int(expr.q)))
    elif expr.is_Symbol or isinstance(expr, sympy.exp):
        out = env[expr]
    elif expr.is_Add:
        out = QzElem.from_rational(0)
        for a in expr.args:
            out = out + to_qz(a, env, memo)
    elif expr.is_Mul:
        out = QzElem.from_rational(1)
        for a in expr.args:
            out = out * to_qz(a, env, memo)
    elif expr.is_Pow and expr.exp.is_Integer:
        base = to_qz(expr.base, env, memo)
        e = int(expr.exp)
        out = base**e if e >= 0 else QzElem.from_rational(1) / base ** (-e)
    else:
        raise TypeError(f"cannot evaluate {expr!r}")
    if memo is not None:
        memo[expr] = out
    return out


def _dot(d, p) -> Fraction | int:
    return sum(a * b for a, b in zip(d, p))


def _inside(ch, eps: list[Fraction]) -> bool:
    """Whether ``eps`` is strictly inside the chamber, decided from all the loss vectors:
    the listed losses are positive and strictly decreasing, every other one negative."""
    if any(a <= b for a, b in itertools.pairwise([*eps, 0])):
        return False
    vals = [_dot(j, eps) for j, _ in ch.losses]
    if not all(v > 0 for v in vals) or any(a <= b for a, b in itertools.pairwise(vals)):
        return False
    listed = {j for j, _ in ch.losses}
    k = max(sum(map(abs, j)) for j in listed)
    return all(_dot(j, eps) < 0 for j in loss_vectors(len(eps), k) if j not in listed and any(j))


def _cone_normals(ch) -> list[tuple[int, ...]]:
    """The open chamber as a polyhedral cone ``{eps : d . eps > 0 for every d}``.

    The normals are the differences of consecutive positive losses (in the chamber's
    decreasing order), the smallest positive loss, and the global order
    ``eps_1 > ... > eps_n > 0``.
    """
    n = len(ch.sample)
    js = [j for j, _ in ch.losses]
    out = [tuple(a - b for a, b in zip(hi, lo)) for hi, lo in itertools.pairwise(js)]
    out.append(js[-1])
    for i in range(n - 1):
        out.append(tuple(1 if t == i else -1 if t == i + 1 else 0 for t in range(n)))
    out.append(tuple(1 if t == n - 1 else 0 for t in range(n)))
    return sorted(set(out))


def _last_interval(normals, prefix: tuple[int, ...]) -> tuple[int, int] | None:
    """The open interval ``(lo, hi)`` of last coordinates ``p_n`` with
    ``d . (prefix, p_n) > 0`` for every normal ``d``, in integers (None when it is empty)."""
    lo, hi = 0, prefix[-1]  # 0 < p_n < p_{n-1}
    for d in normals:
        c = _dot(d, prefix)
        if d[-1] == 0:
            if c <= 0:
                return None
        elif d[-1] > 0:  # p_n > -c / d_n, i.e. p_n >= floor(-c / d_n) + 1
            lo = max(lo, (-c) // d[-1])
        else:  # p_n < c / |d_n|, i.e. p_n <= ceil(c / |d_n|) - 1
            hi = min(hi, -((-c) // -d[-1]))
        if hi - lo < 2:
            return None
    return lo, hi


def _lattice_points(ch, extra: int = 4) -> list[tuple[int, ...]]:
    """Integer points strictly inside the chamber's cone, constructed directly (cached).

    The chambers are open polyhedral cones (:func:`_cone_normals`), some very narrow
    (k = 5: a smallest integer point has ``p_1`` up to 100), so random rational points are
    rarely inside.  Instead, for ``m = n, n + 1, ...`` the integer points with ``p_1 = m``
    are listed exactly: the middle coordinates run over ``m > p_2 > ... > p_{n-1} > 0`` and
    the last one over the open interval the normals leave (:func:`_last_interval`).  The
    first ``m`` with a point and the ``extra`` values after it give the points of smallest
    size: ``eps = s p / p_1`` has exponents ``z^(p_i)`` (z = e^(s / p_1)) of small degree,
    which keeps the exact composition small.  Every point is checked again.
    """
    if getattr(ch, "_lattice", None) is None:
        normals = _cone_normals(ch)
        n = len(ch.sample)
        found: list[tuple[int, ...]] = []
        m, stop = n, None
        while stop is None or m <= stop:
            assert m < 10_000, f"chamber {ch.index}: no integer point with p_1 < 10000"
            for mid in itertools.combinations(range(m - 1, 0, -1), n - 2):
                iv = _last_interval(normals, (m, *mid))
                if iv is not None:
                    found.extend((m, *mid, p) for p in range(iv[0] + 1, iv[1]))
            if found and stop is None:
                stop = m + extra
            m += 1
        assert all(_dot(d, p) > 0 for p in found for d in normals), ch.index
        ch._lattice = found
    return ch._lattice


def random_point(ch, rng: random.Random) -> list[Fraction]:
    """A random exact point strictly inside the chamber: a lattice point of the cone
    (:func:`_lattice_points`) scaled at random so that ``eps_1`` is 1/3, 1/2, 1 or 2;
    membership is checked again from all the loss vectors (:func:`_inside`)."""
    p = rng.choice(_lattice_points(ch))
    scale = rng.choice([Fraction(1, 3), Fraction(1, 2), Fraction(1), Fraction(2)]) / p[0]
    eps = [v * scale for v in p]
    assert _inside(ch, eps), (ch.index, eps)
    return eps


def active_deltas(eps: list[Fraction], rng: random.Random) -> list[Fraction]:
    """Random rational ``delta_1 <= ... <= delta_n`` for which every constraint is active.

    Active means ``t_1 < ... < t_n`` (docs/theory.md, section 1).  With ``u_i = eps_i -
    eps_(i+1)``, ``e^u - 1 >= u`` and ``1 - e^(-u) <= u`` give sufficient rational
    conditions: ``delta_n - delta_(n-1) < (1 - delta_n) u_(n-1) / 2`` and
    ``delta_(i+1) - delta_i < (delta_(i+2) - delta_(i+1)) u_i / u_(i+1)``; the gaps are
    drawn below these bounds (each a random fraction of the next), so the sum of the gaps
    is below ``eps_1 / 8 <= 1/4`` and the first condition holds with room.
    """
    n = len(eps)

    def frac() -> Fraction:
        return Fraction(rng.randint(1, 9), 10)

    def grid(g: Fraction) -> Fraction:  # down to a multiple of 10^-6 (small numbers)
        down = Fraction(int(g * 10**6), 10**6)
        return down if down > 0 else g

    gaps = [grid((eps[n - 2] - eps[n - 1]) / 8 * frac())]
    for i in range(n - 3, -1, -1):
        bound = gaps[0] * (eps[i] - eps[i + 1]) / (eps[i + 1] - eps[i + 2])
        gaps.insert(0, grid(bound * frac()))
    deltas = [Fraction(rng.choice([0, 0, 1, 3]), 1000)]
    for g in gaps:
        deltas.append(deltas[-1] + g)
    return deltas


_COEFFS: dict = {}


def _coeffs(expr: sympy.Expr, n: int) -> list[Fraction]:
    """The integer coefficients of a loss ``j . eps`` (cached: every point asks again)."""
    from dpcompose_exact.paper.formula import EPSILONS

    key = (expr, n)
    if key not in _COEFFS:
        _COEFFS[key] = [Fraction(int(expr.coeff(e))) for e in EPSILONS[:n]]
    return _COEFFS[key]


US = sympy.symbols("U_1:5")  # U_i = w_i / (1 + x_i): the mass of each letter of response i


def _term_polys(f, j: tuple[int, ...]):
    """``(A_j, B_j)`` of the formula as polynomials in ``U_i = w_i / (1 + x_i)`` and ``x_i``
    (``w_i -> U_i (1 + x_i)`` substituted into the formula's own expressions; cached).

    Every outcome of the k-fold product draws k letters, so both are homogeneous of degree
    k in the ``U_i`` (checked): over the common denominator ``D`` of the ``U_i`` at a point,
    ``A_j = (sum of integer polynomials) / D^k``, and the pieces add up without a gcd.
    """
    cache = f.__dict__.setdefault("_test_polys", {})
    if j not in cache:
        n = f.n
        subs = {WS[i]: US[i] * (1 + XS[i]) for i in range(n)}
        pair = []
        for expr in f.terms[j]:
            poly = sympy.Poly(sympy.expand(expr.subs(subs)), *US[:n], *XS[:n])
            assert all(sum(m[:n]) == f.k for m in poly.monoms()), (j, poly)
            pair.append([(m, int(c)) for m, c in poly.terms()])
        cache[j] = tuple(pair)
    return cache[j]


def _eval_poly(terms, n: int, powers, xexp: list[int]):
    """``sum c prod N_i^e_i z^(a . p)``: a term polynomial's numerator over ``D^k``."""
    out = flint.fmpz_poly(0)
    for m, c in terms:
        mono = flint.fmpz_poly(c)
        for i in range(n):
            if m[i]:
                mono = mono * powers[i][m[i]]
        out += mono.left_shift(sum(m[n + i] * xexp[i] for i in range(n)))
    return out


def _check_rows(ch, c, eps_vec, big_l: int, dom, leak: QzElem, terms, den_k) -> None:
    """Every piece at both of its ends: the composed region's rows against the formula.

    ``c.region.constraints`` lists ``(loss, delta(loss))`` at every composed loss value
    >= 0; inside the chamber the positive ones must be exactly the chamber's losses (the
    order is checked with them), and at each the formula's piece there must give that
    delta.  Both sides are ``X - e^eps Y`` on a piece, so agreeing at its two ends is
    agreeing on all of it: this checks every piece on its whole interval.  The leak is
    a rational constant, folded into the numerator (``leak + N / D^k`` over ``D^k``).
    """
    region = c.region
    g0 = region.domain.g0
    got = {
        loss[0] * g0: region.domain.convert_elem(d, dom) for loss, d in region.constraints
    }
    vals = [(_dot(j, eps_vec), j) for j, _ in ch.losses]  # decreasing (chamber order)
    assert sorted(v for v in got if v > 0) == sorted(v for v, _ in vals), (ch.index, eps_vec)
    q = leak.as_rational()
    lnum, lden = q.numerator, q.denominator
    den = den_k * lden
    sum_a = sum_b = flint.fmpz_poly(0)
    below = [*vals, (Fraction(0), None)] if Fraction(0) in got else vals
    for i, (v, _) in enumerate(below):
        if i:  # the losses above v: one term more than at the previous row
            j = below[i - 1][1]
            sum_a, sum_b = sum_a + terms[j][0], sum_b + terms[j][1]
        num = den_k * lnum + (sum_a - sum_b.left_shift(int(v * big_l))) * lden
        mine = QzElem(num, den, dom.exp_loss((1,)).field)
        assert mine == got[v], (ch.index, eps_vec, v)


def check_point(
    f, ch, eps_vec: list[Fraction], rng: random.Random, rows: bool = False
) -> int:
    """Every piece of the chamber at one exact point against one ``dx.compose``.

    Random deltas (active by construction); in every piece a query ``eps`` at a random
    quarter of the piece (its ends included; the top piece runs to ``lower + 1``).  A
    piece is ``leak + sum_j A_j - e^eps sum_j B_j`` over its ``above``: the formula's terms
    evaluated once per point in Q(z), z = e^(1/L), over one common denominator
    (:func:`_term_polys`), and summed down the pieces.  One of the four top pieces is
    also evaluated through its full closed form ``piece_expr`` (weights and all, term by
    term in Q(z): an independent check of the substitution), as is the piece ``piece_at``
    picks there.  Returns the number of comparisons.

    ``rows=True``: every piece at both ends through the composed region's rows instead
    (:func:`_check_rows`, a stronger check that costs less), and two pieces through the
    query API.
    """
    n = len(eps_vec)
    deltas = active_deltas(eps_vec, rng)
    mech = dx.Mechanism([(str(e), str(d)) for e, d in zip(eps_vec, deltas)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", InactiveConstraintWarning)
        c = dx.compose(mech, f.k)
    assert len(mech.constraints) == n and c.is_exact
    big_l = lcm(*(v.denominator for v in eps_vec))
    queries = []
    for piece in ch.pieces:  # on the grid 1/L of the point: the field stays Q(e^(1/L))
        lo = _dot(_coeffs(piece.lower, n), eps_vec)
        hi = lo + 1 if piece.upper == sympy.oo else _dot(_coeffs(piece.upper, n), eps_vec)
        queries.append(lo + Fraction(rng.randint(0, int((hi - lo) * big_l)), big_l))
    dom = ExpDomain.for_forms([LinearForm(Fraction(1, big_l))])
    z = dom.exp_loss(dom.loss(LinearForm(Fraction(1, big_l))))
    xexp = [int(e * big_l) for e in eps_vec]
    env: dict[sympy.Basic, QzElem] = {XS[i]: z ** xexp[i] for i in range(n)}
    env.update({DELTAS[i]: QzElem.from_rational(deltas[i]) for i in range(n)})
    memo: dict = {}
    env.update({WS[i]: to_qz(f.weights[i], env, memo) for i in range(n)})
    leak = to_qz(f.leak, env, memo)
    # U_i = w_i / (1 + x_i) = N_i / D over one common denominator D
    us = [(env[WS[i]] / (1 + env[XS[i]])).canonical for i in range(n)]
    big_d = flint.fmpz_poly(1)
    for _, den in us:
        big_d = big_d * den // big_d.gcd(den)
    powers = []
    for num, den in us:
        base = num * (big_d // den)
        powers.append([flint.fmpz_poly(1)] + [base**e for e in range(1, f.k + 1)])
    den_k = big_d**f.k
    terms = {}
    for j, _ in ch.losses:
        pa, pb = _term_polys(f, j)
        terms[j] = (_eval_poly(pa, n, powers, xexp), _eval_poly(pb, n, powers, xexp))
    zero = flint.fmpz_poly(0)
    if rows:
        _check_rows(ch, c, eps_vec, big_l, dom, leak, terms, den_k)
        # and two pieces through the query API as well (the rows bypass c.delta)
        picked = set(rng.sample(range(len(ch.pieces)), min(2, len(ch.pieces))))
    above: tuple = ()
    sum_a = sum_b = zero
    for i, (piece, q) in enumerate(zip(ch.pieces, queries, strict=True)):
        if rows and i not in picked:
            continue
        if piece.above[: len(above)] != above:  # not a prefix: start the sums again
            above, sum_a, sum_b = (), zero, zero
        for j in piece.above[len(above) :]:  # (the pieces run down the losses: one term more)
            sum_a, sum_b = sum_a + terms[j][0], sum_b + terms[j][1]
        above = piece.above
        cont = QzElem(sum_a - sum_b.left_shift(int(q * big_l)), den_k, z.field)
        mine = leak + cont
        assert Value.from_qz(dom, mine) == c.delta(str(q)), (ch.index, eps_vec, deltas, q)
    i = rng.randrange(min(4, len(queries)))  # (a top piece: few terms, to_qz is slow)
    env[sympy.exp(EPS)] = z ** int(queries[i] * big_l)
    for piece in {ch.pieces[i], f.piece_at(eps_vec, queries[i])}:
        closed = to_qz(f.piece_expr(piece), env, dict(memo))
        assert Value.from_qz(dom, closed) == c.delta(str(queries[i])), (ch.index, piece)
    return len(queries)


def _run_property(
    n: int, k: int, chambers=None, points: int = POINTS, seed: int = 0, rows: bool = False
) -> int:
    """``points`` random exact points in every chamber (or in ``chambers(f)``), every piece
    checked at each (``rows``: see :func:`check_point`); returns the number of points."""
    rng = random.Random(seed)
    f = formula(n=n, k=k)
    checked = 0
    for ch in chambers(f) if chambers else f.chambers:
        for _ in range(points):
            assert check_point(f, ch, random_point(ch, rng), rng, rows) == len(ch.pieces)
            checked += 1
    return checked


def test_lattice_points_are_the_smallest():
    """The constructed points against a brute force over all integer vectors (n = 3, k = 2):
    the same smallest ``p_1`` and the same points up to it (decided by :func:`_inside`)."""
    f = formula(3, 2)
    for ch in f.chambers:
        pts = _lattice_points(ch, extra=0)
        m = pts[0][0]
        brute = [
            (m, b, c)
            for b in range(1, m)
            for c in range(1, b)
            if _inside(ch, [Fraction(m), Fraction(b), Fraction(c)])
        ]
        smaller = [
            (a, b, c)
            for a in range(3, m)
            for b in range(1, a)
            for c in range(1, b)
            if _inside(ch, [Fraction(a), Fraction(b), Fraction(c)])
        ]
        assert sorted(pts) == sorted(brute) and brute and not smaller, ch.index


@pytest.mark.parametrize(
    ("seed", "k", "where", "which", "rows"),
    [(5, 2, 2, 0, False), (6, 3, 3, 1, True)],
    ids=["queries", "rows"],
)
def test_property_check_can_fail(seed, k, where, which, rows):
    """A formula with one term off is caught: A_j doubled for the top loss of a chamber
    (random queries through ``c.delta``), B_j doubled for its second loss (``rows``: every
    piece at both ends)."""
    rng = random.Random(seed)
    f = formula(3, k)
    ch = f.chambers[len(f.chambers) // where]
    j = ch.losses[which][0]
    a, b = f.terms[j]
    f.terms[j] = (a, 2 * b) if rows else (2 * a, b)
    with pytest.raises(AssertionError, match=str(ch.index)):
        check_point(f, ch, random_point(ch, rng), rng, rows=rows)


def test_active_deltas_are_active():
    """Every drawn delta vector keeps all the constraints (no InactiveConstraintWarning)."""
    rng = random.Random(7)
    f = formula(3, 4)
    for ch in rng.sample(f.chambers, 40):
        eps = random_point(ch, rng)
        mech = [(str(e), str(d)) for e, d in zip(eps, active_deltas(eps, rng))]
        with warnings.catch_warnings():
            warnings.simplefilter("error", InactiveConstraintWarning)
            assert len(dx.Mechanism(mech).constraints) == 3


def test_n2_small_k_every_chamber():
    assert _run_property(2, 1) + _run_property(2, 2) == POINTS * 3


@pytest.mark.slow
@pytest.mark.parametrize("k", [3, 4, 5])
def test_n2_every_chamber(k):
    assert _run_property(2, k, seed=k) == POINTS * len(formula(2, k).chambers)


@pytest.mark.slow
def test_n3_k2_every_chamber():
    assert _run_property(3, 2, seed=32) == POINTS * len(formula(3, 2).chambers)


@pytest.mark.slow
def test_n3_k3_every_chamber():
    """All 102 chambers, ``POINTS`` points each, every piece at each point (23 a chamber)."""
    assert _run_property(3, 3, seed=33) == POINTS * 102


@pytest.mark.slow
@pytest.mark.parametrize("k", [4, 5])
def test_n3_sampled_chambers(k):
    """k = 4 and 5 have 404 and 1597 chambers: a seeded sample of ``SAMPLE[k]`` of them,
    ``POINTS`` points each, every piece at each point (43 and 74 pieces per chamber).

    Every piece is checked at both ends through the region's rows (:func:`_check_rows`)
    and two through ``c.delta``.  ``DPCOMPOSE_FORMULA_ALL=1`` checks every chamber instead
    (about 0.06 s a point for k = 4, 8 minutes in all, and 0.3 s for k = 5, 2.7 hours).
    """
    rng = random.Random(30 + k)
    every = os.environ.get("DPCOMPOSE_FORMULA_ALL") == "1"

    def pick(f):
        return f.chambers if every else rng.sample(f.chambers, SAMPLE[k])

    expected = {4: 404, 5: 1597}[k] if every else SAMPLE[k]
    assert _run_property(3, k, chambers=pick, seed=k, rows=True) == POINTS * expected


# -- Theorem 3, symbolically (n = 2) ----------------------------------------------------


P, Q, E = sympy.symbols("P Q E", positive=True)  # P = (1-alpha)/(1+x1), Q = alpha/(1+x2)


def paper_alpha() -> sympy.Expr:
    """alpha of the paper: 1 - alpha = (d2 - d1)(1 + e^eps1) / ((1 - d1)(e^eps1 - e^eps2))."""
    x1, x2, d1, d2 = XS[0], XS[1], DELTAS[0], DELTAS[1]
    return 1 - (d2 - d1) * (1 + x1) / ((1 - d1) * (x1 - x2))


def theorem3_terms(k: int) -> dict[tuple[int, int], sympy.Expr]:
    """(1 - delta_tilde) times Theorem 3's summands, grouped by (a - d, b - c), as
    polynomials in P, Q, x_1, x_2, E = e^eps and delta_1 (written from the paper)."""
    x1, x2, d1 = XS[0], XS[1], DELTAS[0]
    out: dict[tuple[int, int], sympy.Expr] = {}
    for a in range(k + 1):
        for b in range(k + 1 - a):
            for c in range(k + 1 - a - b):
                d = k - a - b - c
                mult = factorial(k) // (factorial(a) * factorial(b) * factorial(c) * factorial(d))
                term = mult * P ** (a + d) * Q ** (b + c) * (x1**a * x2**b - E * x1**d * x2**c)
                key = (a - d, b - c)
                out[key] = out.get(key, 0) + (1 - d1) ** k * term
    return out


def test_weights_are_the_papers_mixture():
    """w_1 = (1 - delta_1)(1 - alpha), w_2 = (1 - delta_1) alpha (the canonical pair)."""
    f = formula(n=2, k=1)
    alpha, d1 = paper_alpha(), DELTAS[0]
    assert sympy.cancel(f.weights[0] - (1 - d1) * (1 - alpha)) == 0
    assert sympy.cancel(f.weights[1] - (1 - d1) * alpha) == 0


@pytest.mark.parametrize(
    "k",
    [1, 2, 3, 5, pytest.param(8, marks=pytest.mark.slow), pytest.param(10, marks=pytest.mark.slow)],
)
def test_n2_agrees_with_theorem3_symbolically(k):
    f = formula(n=2, k=k)
    x1, x2, d1 = XS[0], XS[1], DELTAS[0]
    thm = theorem3_terms(k)
    # the loss values: Theorem 3's lattice (x, y) = (u + v - k, u - v), u, v in [0, k]
    lattice = {(u + v - k, u - v) for u in range(k + 1) for v in range(k + 1)}
    assert lattice == set(loss_vectors(2, k)) == set(thm) == set(f.terms)
    assert sympy.expand(f.leak - (1 - (1 - d1) ** k)) == 0
    # with w_1 = (1 - d1)(1 + x1) P and w_2 = (1 - d1)(1 + x2) Q (the identity above)
    subs = {WS[0]: (1 - d1) * (1 + x1) * P, WS[1]: (1 - d1) * (1 + x2) * Q}
    for j, (a, b) in f.terms.items():
        mine = sympy.cancel((a - E * b).subs(subs))
        assert sympy.expand(mine - thm[j]) == 0, j
    # every chamber's pieces are the cumulative sums down its order of losses
    for ch in f.chambers:
        assert [p.above for p in ch.pieces] == [
            tuple(j for j, _ in ch.losses[:i]) for i in range(len(ch.losses) + 1)
        ]


# -- refusals and output -----------------------------------------------------------------


def test_refuses_beyond_limits():
    with pytest.raises(InvalidParameterError, match=r"k = 6 is outside the valid range \[1, 5\]"):
        formula(n=3, k=6)
    with pytest.raises(InvalidParameterError, match="n = 4: symbolic formulas are available"):
        formula(n=4, k=2)
    with pytest.raises(InvalidParameterError, match=r"valid range \[1, 10\]"):
        formula(n=2, k=11)


def test_chamber_of_and_piece_at_refuse_wrong_lengths_and_floats():
    # before: a third value was silently ignored and floats were accepted
    f = formula(n=2, k=2)
    with pytest.raises(
        InvalidParameterError,
        match=r"eps has 3 value\(s\); formula\(n=2, k=2\) takes exactly 2: \(eps_1, eps_2\)",
    ):
        f.chamber_of([Fraction(1), Fraction(1, 2), Fraction(1, 3)])
    with pytest.raises(InvalidParameterError, match=r"eps has 1 value\(s\)"):
        f.piece_at([Fraction(1)], Fraction(1, 2))
    with pytest.raises(TypeError, match=r"eps_1: got float 1\.0; .*pass the decimal as a string"):
        f.chamber_of([1.0, 0.5])
    with pytest.raises(TypeError, match=r"eps: got float 0\.5; .*fractions\.Fraction"):
        f.piece_at([Fraction(1), Fraction(1, 2)], 0.5)
    with pytest.raises(TypeError, match="expected a sequence of 2 exact values"):
        f.chamber_of("1/2")
    with pytest.raises(
        InvalidParameterError, match=r"eps = \(1/2, 1\) is outside the valid range eps_1 >= eps_2"
    ):
        f.chamber_of([Fraction(1, 2), 1])
    # exact values of every accepted type give the same chamber and piece
    ch = f.chamber_of([Fraction(1), Fraction(1, 2)])
    assert f.chamber_of(["1", "1/2"]) is ch and f.chamber_of([1, "0.5"]) is ch
    piece = f.piece_at([Fraction(1), Fraction(1, 2)], Fraction(1, 2))
    assert f.piece_at([1, "1/2"], "1/2") == piece


def test_cli_refusal_is_one_line(capsys):
    assert main(["formula", "-n", "3", "-k", "6"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "k = 6 is outside the valid range [1, 5]" in err


def test_json_parses_back(capsys):
    assert main(["formula", "-n", "2", "-k", "3", "--format", "json", "--expand"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["command"] == "formula" and data["n"] == 2 and data["k"] == 3
    f = formula(n=2, k=3)
    assert len(data["chambers"]) == len(f.chambers)
    names = {str(s): s for s in (EPS, *XS, *DELTAS, *WS)}
    for text in data["terms"].values():
        assert sympy.sympify(text, locals=names).free_symbols <= set(names.values())
    for ch_json, ch in zip(data["chambers"], f.chambers):
        for p_json, p in zip(ch_json["pieces"], ch.pieces):
            closed = sympy.sympify(p_json["delta_closed_form"], locals=names)
            assert sympy.simplify(closed - f.piece_expr(p)) == 0
            compact = sympy.sympify(p_json["delta"])
            assert {str(s) for s in compact.free_symbols} == {"leak"} | {
                f"T_{'_'.join(str(v) if v >= 0 else f'm{-v}' for v in j)}" for j in p.above
            }


@needs_tex
def test_latex_n2_k5_compiles(capsys, tmp_path):
    assert main(["formula", "-n", "2", "-k", "5", "--format", "latex"]) == 0
    tex = capsys.readouterr().out
    assert tex.count("\\paragraph{Chamber") == len(formula(2, 5).chambers)
    compile_tex(tmp_path, tex, name="formula", packages="\\usepackage{amsmath}\n")


def _latex_of(capsys, n: int, k: int) -> str:
    assert main(["formula", "-n", str(n), "-k", str(k), "--format", "latex"]) == 0
    return capsys.readouterr().out


@needs_tex
@pytest.mark.parametrize(("n", "k"), [(2, 3), (3, 2)])
def test_latex_is_one_glyph_display_fractions_irredundant_and_compiles(capsys, tmp_path, n, k):
    """Regression: the LaTeX mixed \\varepsilon_1 (definitions) with \\epsilon_1 (chamber
    inequalities) and e^{\\epsilon}, set the terms as small inline fractions with a leading
    minus sign, and listed implied inequalities (n = 2, k = 3, chamber 0: eps_1 - eps_2 > 0,
    eps_1 - 3 eps_2 > 0, eps_1 - 5 eps_2 > 0 where eps_1 > 5 eps_2 says it all)."""
    tex = _latex_of(capsys, n, k)
    assert "\\epsilon" not in tex and "\\varepsilon_{1}" in tex and "e^{\\varepsilon}" in tex
    term_lines = [line for line in tex.splitlines() if line.startswith("\\[ T_{")]
    assert term_lines and all("\\dfrac{" in line for line in term_lines)
    assert not any(re.search(r"T_\{\([-\d,]+\)\} = -", line) for line in term_lines)
    assert "\\frac{" not in tex.replace("\\dfrac{", "")
    f = formula(n, k)
    assert tex.count("\\paragraph{Chamber") == len(f.chambers)
    if (n, k) == (2, 3):
        assert "\\paragraph{Chamber 0.} $\\varepsilon_{1} > 5\\varepsilon_{2}$." in tex
        assert "\\paragraph{Chamber 2.} $3\\varepsilon_{2} > \\varepsilon_{1},\\ " in tex
    log = compile_tex(tmp_path, tex, name=f"formula{n}{k}", packages="\\usepackage{amsmath}\n")
    assert "Overfull \\hbox" not in log


@pytest.mark.parametrize(("n", "k"), [(2, 3), (3, 2)])
def test_latex_terms_equal_the_json_terms(n, k):
    """T_j = C_j (x^{j+} - e^eps x^{j-}) (the LaTeX form) is A_j - e^eps B_j, exactly."""
    f = formula(n, k)
    for j, (a, b) in f.terms.items():
        c, plus, minus = f.term_parts(j)
        assert sympy.cancel(c * (plus - sympy.exp(EPS) * minus) - (a - sympy.exp(EPS) * b)) == 0
        num, _ = sympy.fraction(c)
        assert all(t.as_coeff_Mul()[0] > 0 for t in sympy.Add.make_args(sympy.expand(num)))


def _slice_min(d, system, n: int):
    """min of d . (1, y) over the closed slice {y : e . (1, y) >= 0 for e in system}, exact."""
    ys = sympy.symbols(f"y2:{n + 1}")
    pt = (1, *ys)
    lin = [sum(c * v for c, v in zip(e, pt)) >= 0 for e in system]
    return sympy.solvers.simplex.lpmin(sum(c * v for c, v in zip(d, pt)), lin)[0]


@pytest.mark.parametrize(("n", "k"), [(2, 2), (2, 3), (2, 4), (3, 2), (3, 3)])
def test_chamber_conditions_are_irredundant_and_define_the_chamber(n, k):
    """Checked by exact linear programs (sympy's simplex over the rationals), independently
    of the vertex test: every dropped inequality is implied by the kept ones and the global
    order (its minimum over their closed slice eps_1 = 1 is >= 0), and every kept one is
    not implied by all the others (its minimum without it is < 0)."""
    import sympy.solvers.simplex  # noqa: F401

    f = formula(n, k)
    glob = [tuple(1 if t == i else -1 if t == i + 1 else 0 for t in range(n)) for i in range(n - 1)]
    glob.append(tuple(1 if t == n - 1 else 0 for t in range(n)))
    for ch in f.chambers:
        allq = [tuple(int((q.lhs - q.rhs).coeff(e)) for e in f_eps(n)) for q in ch.inequalities]
        kept = f.conditions(ch)
        assert set(kept) <= {_prim(d) for d in allq}
        for d in allq:
            assert _slice_min(d, kept + glob, n) >= 0, (ch.index, d)
        for d in kept:
            others = [e for e in {_prim(e) for e in allq} if e != d] + glob
            assert _slice_min(d, others, n) < 0, (ch.index, d)


def f_eps(n: int):
    from dpcompose_exact.paper.formula import EPSILONS

    return EPSILONS[:n]


def _prim(d):
    from math import gcd

    g = 0
    for v in d:
        g = gcd(g, v)
    return tuple(v // g for v in d)


@pytest.mark.parametrize(("n", "k"), [(2, 3), (3, 2)])
def test_json_names_each_chamber_term_once_and_keeps_every_value(capsys, n, k):
    """The JSON (format 2) against the values the old format wrote: a piece's ``above``
    (now the first ``n_above`` names of the chamber's ``order``), its bounds, the compact
    ``delta``, the chamber's losses, inequalities and region; streamed, the same text as
    ``json.dumps(to_dict(), indent=1)``."""
    assert main(["formula", "-n", str(n), "-k", str(k), "--format", "json"]) == 0
    out = capsys.readouterr().out
    f = formula(n, k)
    assert out == json.dumps(f.to_dict(), indent=1) + "\n" == f.to_json()
    data = json.loads(out)
    assert data["format"] == 2 and len(data["chambers"]) == len(f.chambers)
    names = {str(s): s for s in (EPS, *f_eps(n), *XS, *DELTAS, *WS)}
    for ch_json, ch in zip(data["chambers"], f.chambers):
        assert ch_json["inequalities"] == [str(q) for q in ch.inequalities]
        assert ch_json["losses"] == [str(loss) for _, loss in ch.losses]
        assert ch_json["order"] == [str(term_symbol(j)) for j, _ in ch.losses]
        assert len(ch_json["pieces"]) == len(ch.pieces)
        for p_json, p in zip(ch_json["pieces"], ch.pieces):
            assert (p_json["lower"], p_json["upper"]) == (str(p.lower), str(p.upper))
            terms = ch_json["order"][: p_json["n_above"]]
            assert terms == [str(term_symbol(j)) for j in p.above]
            assert sympy.sympify(" + ".join(["leak", *terms])) == p.compact()
        region = [
            (sympy.sympify(p["lower"], locals=names), ch_json["order"][: p["n_above"]])
            for p in reversed(ch_json["pieces"])
        ]
        for (lo, terms), (eps, delta) in zip(region, f.region(ch)):
            assert lo == eps
            expr = sympy.Add(f.leak, *[f.term(_vec(t)) for t in terms]).subs(EPS, lo)
            assert sympy.simplify(expr - delta) == 0


def _vec(name: str) -> tuple[int, ...]:
    return tuple(-int(v[1:]) if v.startswith("m") else int(v) for v in name[2:].split("_"))


def test_json_grows_with_the_losses_not_their_square():
    """Regression: every piece repeated every term above it (as a list and as a sum) and
    the region repeated them again: n = 3, k = 3 wrote 2.29 MB in 2.5 s of CPU after the
    terms (n = 3, k = 4: 28.8 MB, k = 5: 320 MB); now 0.41 MB in a few hundredths."""
    f = formula(3, 3)
    f.to_json()  # the terms, factored once (they are the same in both formats)
    start = time.process_time()
    text = f.to_json()
    spent = time.process_time() - start
    assert len(text) < 600_000, len(text)
    assert spent < 1.0, spent
