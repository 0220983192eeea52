"""Check 8: the paper's n-constraint conjecture, step by step (docs/proofs/conjecture.md).

Claim (docs/theory.md, sections 1, 2, 3, 10): for active constraints
``eps1 > ... > eps_n >= 0``, ``delta1 < ... < delta_n``, with canonical weights
``w_i = L_i (1 + e^{eps_i})`` (``L_i`` the edge lengths of ``f`` on ``[0, c]``),

    R_k(eps, delta) = (1 - (1 - delta1)^k) R(0, 1)
                      + sum_{|j| = k} k! / (j_1! ... j_n!) w^j C_j(eps),

a convex combination (the weights sum to ``(delta1 + sum w_i)^k = 1``).  Steps checked:

(A) Canonical pair (symbolic in ``x_i = e^{eps_i}``, ``delta_i``), ``n = 3`` and ``n = 4``, in
    every case of the hypotheses: ``delta1 = 0`` or a free symbol, ``eps_n = 0`` (``x_n = 1``,
    a total-variation constraint) or a free symbol.  The leak ``delta1`` plus the
    ``eps_i``-randomized responses with weights ``w_i`` has letters summing to 1 and a
    trade-off curve whose vertices equal those of ``max`` of the ``2n`` constraint lines and 0
    (:func:`proofs_checks.pair.pair_vs_constraints`): its trade-off is ``f_{eps, delta}``.
    At an exact sample point of each case all weights are positive (the case is non-empty).
(B) Regrouping: ``(l L + sum_i w_i G_i)^k``, expanded sequence by sequence over all
    ``(n+1)^k`` label sequences (each the product of its components' privacy-loss generating
    polynomials, for ``P0`` and ``P1``), equals ``sum k!/(m! j!) l^m w^j L^m prod G_i^{j_i}``
    as polynomials in *free* weights ``l, w_i``, ``n = 3, 4``, ``k <= 4``.  The loss distribution
    decides the trade-off (section 3), so each group is ``C_j`` (or ``R(0, 1)`` if ``m > 0``:
    every output then carries a leak letter, whose ``P1`` is 0).
(C) The final identity for ``n = 3`` in *every cell* of the tie arrangement (exhaustive, see
    :mod:`proofs_checks._arrangement`): the cone ``eps1 > eps2 > eps3 > 0`` sliced at
    ``eps1 = 1`` (faces, edges and vertices of the slice are the 3-d chambers, 2-d walls and
    critical rays of the cone), plus the boundary facet ``eps3 = 0``.  In each cell the
    k-fold product of the mixture, enumerated letter by letter with free weights, has at
    every loss value ``l >= 0`` of the product the delta
    ``sum_j k!/j! w^j delta_{C_j}(l)``, where ``C_j`` is Theorem 1's closed form
    generalised to three generators and ``delta_{C_j}(l)`` its support function
    (:mod:`proofs_checks._regions`).  Both sides are compared coefficient by coefficient
    in ``w`` as Laurent polynomials in the cell's own symbols, exactly.  The leak folds in
    identically on both sides (``delta = dt + (1 - dt) delta_cont``).
(D) Beyond the exhaustive range: the same identity in sampled open chambers plus the
    critical ray ``eps = g (3, 2, 1)``.

Default scope: (C) every cell for ``k <= 4`` and (D) for ``k = 5, 6`` (about 20 s on a
loaded 2-core machine).  Every cell
for ``k = 5`` (1597 + 2511 + 915 cells and 31 on the facet) is ``exhaustive_k=5``, a slow test.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from fractions import Fraction
from math import factorial, lcm

import sympy

from proofs_checks._arrangement import (
    Cell,
    census,
    facet_cells,
    slice_cells,
    span_basis,
    tie_normals,
)
from proofs_checks._laurent import (
    Chamber,
    Laurent,
    cell_chamber,
    critical_chamber,
    open_chamber,
)
from proofs_checks._regions import (
    HeteroSummand,
    Vec,
    convolve,
    describe_diff,
    fmt_loss,
    rr_letters,
    theorem1_summand,
)
from proofs_checks._result import MAX_REPORTED, CheckResult
from proofs_checks.pair import canonical_weights, pair_vs_constraints

NAME = "conjecture"
CLAIM = (
    "n-constraint conjecture: canonical pair = f (n=3,4), multinomial regrouping, "
    "R_k = mixture of C_j in every cell (n=3)"
)

#: Mixture weight hook: (k, j) -> the integer coefficient of ``w^j``.
WeightFn = Callable[[int, Vec], int]
#: Cell enumeration hook: normals -> (lines, cells), as :func:`slice_cells`.
CellsFn = Callable[[Sequence[Vec]], tuple[list[Vec], list[Cell]]]
#: Canonical weight hook, as :func:`proofs_checks.pair.canonical_weights`.
PairWeightsFn = Callable[[Sequence[sympy.Expr], Sequence[sympy.Expr]], list[sympy.Expr]]

EXHAUSTIVE_K = 4
"""Largest k checked in every cell (default scope)."""
SAMPLED_K = 6
"""Largest k checked in sampled chambers (default scope)."""

CANDIDATE_REPS = [
    (Fraction(29, 10), Fraction(17, 10), Fraction(1)),
    (Fraction(23, 10), Fraction(13, 10), Fraction(1)),
    (Fraction(47, 10), Fraction(31, 10), Fraction(1)),
    (Fraction(37, 10), Fraction(13, 10), Fraction(1)),
    (Fraction(61, 10), Fraction(19, 10), Fraction(1)),
    (Fraction(53, 10), Fraction(41, 10), Fraction(1)),
    (Fraction(83, 10), Fraction(27, 10), Fraction(1)),
    (Fraction(17, 10), Fraction(11, 10), Fraction(1)),
    (Fraction(97, 10), Fraction(71, 10), Fraction(1)),
    (Fraction(113, 10), Fraction(29, 10), Fraction(1)),
]
"""Candidate representatives (eps1, eps2, eps3) for the sampled open chambers of (D)."""


def multinomial(k: int, j: Vec) -> int:
    """``k! / (j_1! ... j_n!)``."""
    out = factorial(k)
    for v in j:
        out //= factorial(v)
    return out


def loss_vectors3(k: int) -> list[Vec]:
    """Loss vectors ``(a1, a2, a3)`` of k-fold products of the three RRs."""
    r = range(-k, k + 1)
    return [
        (a, b, c)
        for a in r
        for b in r
        for c in r
        if abs(a) + abs(b) + abs(c) <= k and (a + b + c - k) % 2 == 0
    ]


def compositions(k: int, n: int) -> list[Vec]:
    """All ``j`` in ``N^n`` with ``|j| = k`` (zero entries allowed)."""
    if n == 1:
        return [(k,)]
    return [(a, *rest) for a in range(k, -1, -1) for rest in compositions(k - a, n - 1)]


# --------------------------------------------------------------------------------------------
# (A) the canonical pair for n = 3 and n = 4 in every case of the hypotheses


def _pair_sample(n: int, delta1_zero: bool, tv: bool) -> tuple[list[int], list[Fraction]]:
    xs = [9, 6, 4, 3][-n:]
    ds = [Fraction(1, 100), Fraction(1, 50), Fraction(1, 20), Fraction(1, 10)][-n:]
    if tv:
        xs[-1] = 1
        ds[-1] = Fraction(1, 6)  # keeps the TV constraint active at this point
    if delta1_zero:
        ds[0] = Fraction(0)
    return xs, ds


def check_pairs(ns: Sequence[int], weights_fn: PairWeightsFn) -> tuple[list[str], int]:
    """Part (A); returns (messages, number of cases)."""
    bad: list[str] = []
    ncase = 0
    for n in ns:
        for delta1_zero, tv in itertools.product((False, True), repeat=2):
            ncase += 1
            label = (
                f"n={n}, delta1{' = 0' if delta1_zero else ' > 0'}, "
                f"eps{n}{' = 0' if tv else ' > 0'}"
            )
            xs: list[sympy.Expr] = list(sympy.symbols(f"x1:{n + 1}", positive=True))
            ds: list[sympy.Expr] = list(sympy.symbols(f"delta1:{n + 1}", positive=True))
            xv, dv = _pair_sample(n, delta1_zero, tv)
            subs = {s: sympy.Rational(v) for s, v in zip(xs + ds, xv + dv, strict=True)}
            if delta1_zero:
                ds[0] = sympy.Integer(0)
            if tv:
                xs[-1] = sympy.Integer(1)
            weights = weights_fn(xs, ds)
            msgs = pair_vs_constraints(xs, ds, ds[0], weights, subs)
            if not msgs:
                wv = [sympy.nsimplify(w.subs(subs)) for w in weights]
                if not all(w > 0 for w in wv):
                    msgs.append(f"sample point not in the case: weights {wv}")
            bad += [f"(A) {label}: {m}" for m in msgs]
    return bad, ncase


# --------------------------------------------------------------------------------------------
# (B) regrouping by counts with multinomial weights, free weights


def check_regrouping(n: int, k: int, weight: WeightFn) -> list[str]:
    """Part (B) for one ``(n, k)``; returns messages.

    Variables (exponent positions): ``l, w_1..w_n`` (free weights), ``x_1..x_n``,
    ``s_1..s_n`` (loss tracking: ``s^a`` is loss ``a . eps``), ``lam`` (leak letter).  RR
    numerators are over ``1 + x_i``; on both sides the coefficient of ``w^j`` carries the
    same denominator ``prod (1 + x_i)^{j_i}``.
    """
    nv = 1 + 3 * n + 1
    leak_v, lam = 0, 3 * n + 1

    def e(*pairs: tuple[int, int]) -> Laurent:
        v = [0] * nv
        for i, p in pairs:
            v[i] += p
        return Laurent.mono(tuple(v))

    def w(i: int) -> int:
        return 1 + i

    def x(i: int) -> int:
        return 1 + n + i

    def s(i: int) -> int:
        return 1 + 2 * n + i

    # Component generating polynomials without weights (leak first), for P0 and for P1.
    comp0 = [e((lam, 1))] + [e((x(i), 1), (s(i), 1)) + e((s(i), -1)) for i in range(n)]
    comp1 = [e((lam, -1))] + [e((s(i), 1)) + e((x(i), 1), (s(i), -1)) for i in range(n)]
    wts = [e((leak_v, 1))] + [e((w(i), 1)) for i in range(n)]
    bad: list[str] = []
    for side, comp in (("P0", comp0), ("P1", comp1)):
        lhs = Laurent.const(0, nv)
        for seq in itertools.product(range(n + 1), repeat=k):
            term = Laurent.const(1, nv)
            for c in seq:
                term = term * wts[c] * comp[c]
            lhs.iadd(term)
        rhs = Laurent.const(0, nv)
        for jm in compositions(k, n + 1):
            grp = Laurent.const(weight(k, jm), nv)
            for c, cnt in enumerate(jm):
                grp = grp * (wts[c] * comp[c]) ** cnt
            rhs.iadd(grp)
        if lhs != rhs:
            diff = lhs - rhs
            some = sorted(diff.terms.items())[:2]
            bad.append(
                f"(B) n={n}, k={k}, {side}: sequence expansion - multinomial regrouping has "
                f"{len(diff.terms)} nonzero terms, e.g. {some}"
            )
    return bad


# --------------------------------------------------------------------------------------------
# (C), (D) the final identity in one chamber of the loss ordering


class Generic:
    """Cell-independent data for one ``k``: the tagged k-fold product in generic symbols."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.vecs = loss_vectors3(k)
        gen = open_chamber((Fraction(3), Fraction(2), Fraction(1)), "generic")
        letters = [
            ltr for g in range(3) for ltr in rr_letters(g, 3, tuple(int(i == g) for i in range(3)))
        ]
        prod = convolve(gen, [letters] * k)
        self.direct: dict[Vec, list[tuple[Vec, Laurent, Laurent]]] = {}
        for (tag, loss), (p0, p1) in prod.items():
            self.direct.setdefault(tag, []).append((loss, p0, p1))
        self.comps = compositions(k, 3)
        self.grid: dict[Vec, list[tuple[Vec, Vec]]] = {
            j: [
                (a, tuple(2 * ai - ji for ai, ji in zip(a, j, strict=True)))
                for a in itertools.product(*(range(c + 1) for c in j))
            ]
            for j in self.comps
        }
        self.jlosses = {j: sorted({loss for _, loss in g}) for j, g in self.grid.items()}
        self._terms: dict[tuple[HeteroSummand, Vec], list[tuple[Vec, Vec, int, Vec, Vec]]] = {}

    def terms(self, summand: HeteroSummand, j: Vec) -> list[tuple[Vec, Vec, int, Vec, Vec]]:
        """``(a, loss, coefficient, P0 exponent, P1 exponent)`` of Theorem 1's sum for ``C_j``."""
        key = (summand, j)
        if key not in self._terms:
            out = []
            for a, loss in self.grid[j]:
                coef, p0, p1 = summand(j, a)
                out.append((a, loss, coef, tuple(p0), tuple(p1)))
            self._terms[key] = out
        return self._terms[key]


def _map(lau: Laurent, rows: Sequence[Sequence[int]], cache: dict[Vec, Vec]) -> Laurent:
    """Substitute ``x_i = u^{M e_i}`` (exponent map ``e -> M e``)."""
    out: dict[Vec, int | Fraction] = {}
    for e, c in lau.terms.items():
        f = cache.get(e)
        if f is None:
            f = tuple(sum(r * a for r, a in zip(row, e, strict=True)) for row in rows)
            cache[e] = f
        out[f] = out.get(f, 0) + c
    return Laurent(out)


def _int_rep(rep: Sequence[Fraction]) -> list[int]:
    m = lcm(*(Fraction(r).denominator for r in rep))
    return [int(Fraction(r) * m) for r in rep]


def chamber_identity(
    ch: Chamber,
    gen: Generic,
    summand: HeteroSummand,
    weight: WeightFn,
    done: dict[tuple, int] | None = None,
) -> tuple[list[str], int]:
    """The final identity of (C) in one chamber; returns (failure lines, number of identities).

    For every ``j``, the ``w^j`` coefficient of the enumerated delta of the k-fold product,
    ``delta(l) = S0(l) - T S1(l)`` with ``T = e^l`` and ``S0, S1`` the sums of ``P0, P1`` over
    letters of tag ``j`` with loss ``> l``, is compared with ``weight(k, j)`` times the support
    function of ``C_j`` built from its closed-form edge list (numerators over
    ``prod (1 + x_i)^{j_i}``):

    * at every breakpoint ``l_a >= 0`` of ``C_j``: ``weight * N_a = S0 - e^{l_a} S1``;
    * on every open interval ``l_b < l < l_a`` between consecutive breakpoints that meets
      ``l >= 0`` (and above the largest), where the support function is
      ``[N_a (T - e^{l_b}) + N_b (e^{l_a} - T)] / (e^{l_a} - e^{l_b})``: the two sides,
      multiplied by the nonzero ``e^{l_a} - e^{l_b}``, agree as polynomials in ``T``
      (coefficients of ``1`` and ``T``), and no letter of the product has its loss inside.

    Together these give equality of the two support functions at every ``l >= 0``, in
    particular at every loss value of the k-fold product (the breakpoints of ``R_k``), so
    that ``R_k``'s delta equals the weighted sum of the ``C_j`` deltas there (Minkowski sums
    add support functions, section 2).

    The computation for one ``j`` reads the chamber only through the weak ordering of the
    losses of ``C_j`` and 0 and through the monomial map; ``done`` (when given) records the
    ``(j, ordering, map)`` keys already verified, whose identities are then not recomputed
    (a failure is never cached).
    """
    r = _int_rep(ch.rep)
    rows = ch.monomap
    cache: dict[Vec, Vec] = {}
    ecache: dict[Vec, Vec] = {}

    def val(v: Sequence[int]) -> int:
        return sum(a * b for a, b in zip(v, r, strict=True))

    def ex(v: Vec) -> Vec:
        out = ecache.get(v)
        if out is None:
            out = ch.exp(v)
            ecache[v] = out
        return out

    nv = ch.nvars
    pcache: dict[tuple[int, int], Laurent] = {}

    def powers(i: int, cnt: int) -> Laurent:
        if (i, cnt) not in pcache:
            pcache[(i, cnt)] = ch.one_plus_x(i) ** cnt
        return pcache[(i, cnt)]

    bad: list[str] = []
    nid = 0
    vals = {v: val(v) for v in gen.vecs}
    for j in gen.comps:
        gvals = [vals[v] for v in gen.jlosses[j]]
        ranks = {v: i for i, v in enumerate(sorted({0, *gvals}))}
        key = (j, tuple(ranks[v] for v in gvals), ranks[0], rows)
        if done is not None and key in done:
            nid += done[key]
            continue
        nid_start = nid
        mult = weight(gen.k, j)
        den = Laurent.const(1, nv)
        for i, cnt in enumerate(j):
            den = den * powers(i, cnt)
        # Closed form of C_j (Theorem 1 with three generators), by decreasing loss value.
        outcomes = [
            (vals[loss], loss, coef, p0, p1) for _, loss, coef, p0, p1 in gen.terms(summand, j)
        ]
        outcomes.sort(key=lambda t: t[0], reverse=True)
        s0 = Laurent.const(0, nv)
        s1 = Laurent.const(0, nv)
        edges: dict[int, tuple[Vec, Laurent]] = {}
        pos = 0
        while pos < len(outcomes) and outcomes[pos][0] >= 0:
            lv = outcomes[pos][0]
            block = [o for o in outcomes[pos:] if o[0] == lv]
            for _, loss, _, _, _ in block:
                num = s0 - s1.shift(ex(loss))
                if lv in edges and edges[lv][1] != num:
                    bad.append(f"k={gen.k}, {ch.label}: C_{j} tied losses give different deltas")
                edges.setdefault(lv, (loss, num))
            for _, _, coef, p0, p1 in block:
                s0.iadd_mono(ex(p0), coef)
                s1.iadd_mono(ex(p1), coef)
            pos += len(block)
        full: list[tuple[int, Vec, Laurent]] = [(v, e, n) for v, (e, n) in edges.items()]
        full.sort(key=lambda t: t[0], reverse=True)
        v, e, n = full[-1]
        if v > 0:  # only the mirror of the smallest breakpoint bounds an interval at l >= 0
            neg = tuple(-a for a in e)
            full.append((-v, neg, den - (den - n).shift(ex(neg))))
        # Enumerated k-fold product, tag j, by decreasing loss value.
        items = sorted(
            (
                (vals[loss], loss, _map(p0, rows, cache), _map(p1, rows, cache))
                for loss, p0, p1 in gen.direct.get(j, [])
            ),
            key=lambda t: t[0],
            reverse=True,
        )
        d0 = Laurent.const(0, nv)
        d1 = Laurent.const(0, nv)
        ip = 0
        fails: list[tuple[str, list[tuple[str, Laurent]]]] = []
        # Above the largest breakpoint: constant N_0 against the (empty) sums.
        v0, e0, n0 = full[0]
        nid += 1
        if any(it[0] > v0 for it in items) or n0 * mult != d0:
            fails.append((f"l > {fmt_loss(e0)}", [("", n0 * mult - d0)]))
        for i, (va, ea, na) in enumerate(full):
            while ip < len(items) and items[ip][0] > va:
                d0.iadd(items[ip][2])
                d1.iadd(items[ip][3])
                ip += 1
            if va >= 0:
                nid += 1
                diff = na * mult - (d0 - d1.shift(ex(ea)))
                if not diff.is_zero():
                    fails.append((f"l = {fmt_loss(ea)}", [("", diff)]))
            if va <= 0 or i + 1 == len(full):
                break
            vb, eb, nb = full[i + 1]
            # d0, d1 now sum the letters with loss >= va, i.e. > l for l in (vb, va).
            while ip < len(items) and items[ip][0] == va:
                d0.iadd(items[ip][2])
                d1.iadd(items[ip][3])
                ip += 1
            nid += 1
            inside = ip < len(items) and items[ip][0] > vb
            xa, xb = ex(ea), ex(eb)
            const = (nb.shift(xa) - na.shift(xb)) * mult - (d0.shift(xa) - d0.shift(xb))
            lin = (na - nb) * mult + (d1.shift(xa) - d1.shift(xb))
            if inside or not const.is_zero() or not lin.is_zero():
                parts = [(" [constant term]", const), (" [coefficient of e^l]", lin)]
                if inside:
                    parts.append((" [a product loss inside the interval]", const * 0))
                fails.append((f"l in ({fmt_loss(eb)}, {fmt_loss(ea)})", parts))
        if not fails and done is not None:
            done[key] = nid - nid_start
        for where, parts in fails:
            bad.append(f"k={gen.k}, {ch.label}, j={j}, {where}:")
            for suffix, diff in parts:
                if not diff.is_zero() or "inside" in suffix:
                    bad += [
                        "  " + t
                        for t in describe_diff(ch, diff, den, f" (mixture - direct){suffix}")
                    ]
    return bad, nid


def _cell_chamber(cell: Cell, lines: Sequence[Vec], k: int) -> Chamber:
    rep = cell.integer_rep()
    basis = span_basis(cell.zero_normals(lines))
    kind = {0: "ray", 1: "wall", 2: "chamber"}[cell.dim + (1 if cell.facet else 0)]
    where = "eps3=0, " if cell.facet else ""
    label = f"{kind} {where}eps ~ ({', '.join(str(v) for v in rep)})"
    if len(basis) == 1:
        return critical_chamber(rep, label)
    return cell_chamber(rep, basis, label)


def sampled_chambers(k: int, max_open: int) -> list[Chamber]:
    """Generic open chambers with distinct loss orderings, plus the ray ``(3, 2, 1)``."""
    vecs = loss_vectors3(k)
    seen: set[tuple[Vec, ...]] = set()
    out: list[Chamber] = []
    for rep in CANDIDATE_REPS:
        ch = open_chamber(rep, "chamber eps ~ (" + ", ".join(str(r) for r in rep) + ")")
        vals = [ch.value(v) for v in vecs]
        if len(set(vals)) != len(vals):
            continue  # not generic: some losses tie
        order = tuple(v for _, v in sorted(zip(vals, vecs, strict=True)))
        if order in seen:
            continue
        seen.add(order)
        out.append(ch)
        if len(out) == max_open:
            break
    out.append(critical_chamber((3, 2, 1), "ray eps = g (3, 2, 1)"))
    return out


# -- (E) the canonical pair's own k-fold composition, enumerated ---------------------------

#: exact sample points ``(e^eps, delta)`` with rational ``e^eps_i`` (so every probability is
#: rational): active constraints, ``eps_n > 0`` and ``eps_n = 0`` (a total-variation one).
CANONICAL_SAMPLES: dict[int, list[tuple[tuple[Fraction, ...], tuple[Fraction, ...]]]] = {
    3: [
        (
            (Fraction(4), Fraction(3), Fraction(2)),
            (Fraction(1, 100), Fraction(1, 20), Fraction(1, 8)),
        ),
        (
            (Fraction(5, 2), Fraction(3, 2), Fraction(1)),
            (Fraction(0), Fraction(1, 10), Fraction(1, 4)),
        ),
    ],
    4: [
        (
            (Fraction(5), Fraction(4), Fraction(3), Fraction(2)),
            (Fraction(1, 200), Fraction(1, 50), Fraction(1, 20), Fraction(1, 8)),
        ),
        (
            (Fraction(7, 2), Fraction(3), Fraction(2), Fraction(1)),
            (Fraction(1, 100), Fraction(1, 40), Fraction(1, 10), Fraction(1, 5)),
        ),
    ],
}


def _hockey(atoms: dict[Fraction | None, tuple[Fraction, Fraction]], t: Fraction) -> Fraction:
    """``sum over ratio P/Q > t of (P - t Q)`` (ratio None: Q = 0, an infinite loss)."""
    out = Fraction(0)
    for ratio, (p, q) in atoms.items():
        if ratio is None or ratio > t:
            out += p - t * q
    return out


def _add_atom(atoms: dict, p: Fraction, q: Fraction) -> None:
    ratio = None if q == 0 else p / q
    if ratio == 0:
        return  # P = 0: never counts for t >= 0
    a, b = atoms.get(ratio, (Fraction(0), Fraction(0)))
    atoms[ratio] = (a + p, b + q)


def canonical_pair_product(
    xs: Sequence[Fraction], deltas: Sequence[Fraction], weights: Sequence[Fraction], k: int
) -> dict:
    """The k-fold product of the canonical pair, enumerated letter sequence by sequence.

    Letters: the leak (P = delta_1, Q = 0), and for each i the two letters of the
    eps_i-randomized response with weight w_i; mirror letters with P = 0 are dropped (they
    never count for a threshold t >= 0).
    """
    letters = [(deltas[0], Fraction(0))]
    for x, w in zip(xs, weights, strict=True):
        letters.append((w * x / (1 + x), w / (1 + x)))
        letters.append((w / (1 + x), w * x / (1 + x)))
    atoms: dict = {}
    for seq in itertools.product(letters, repeat=k):
        p, q = Fraction(1), Fraction(1)
        for lp, lq in seq:
            p *= lp
            q *= lq
        if p:
            _add_atom(atoms, p, q)
    return atoms


def hetero_rr_atoms(xs: Sequence[Fraction], j: Vec) -> dict:
    """C_j: the product of j_i copies of the e^eps_i = x_i randomized response (binomials)."""
    atoms: dict = {}
    for a in itertools.product(*(range(v + 1) for v in j)):
        p = q = Fraction(1)
        for x, ji, ai in zip(xs, j, a, strict=True):
            c = factorial(ji) // (factorial(ai) * factorial(ji - ai))
            p *= c * x**ai / (1 + x) ** ji
            q *= c * x ** (ji - ai) / (1 + x) ** ji
        _add_atom(atoms, p, q)
    return atoms


def check_canonical_pair(
    ns: Sequence[int], ks: Sequence[int], weight: WeightFn, pair_weights: PairWeightsFn
) -> tuple[list[str], int]:
    """(E): the enumerated k-fold product of the canonical pair equals the theorem's formula.

    At every loss value ``l >= 0`` of the product (threshold ``t = e^l >= 1``),
    ``delta(l)`` of the product against ``1 - (1 - delta_1)^k + sum_{|j|=k} weight(k, j)
    w^j delta_{C_j}(l)``, in exact rationals (``e^{eps_i}`` rational).  Returns the failure
    lines and the number of comparisons.
    """
    bad: list[str] = []
    count = 0
    for n in ns:
        for xs, ds in CANONICAL_SAMPLES[n]:
            ws_sym = pair_weights([sympy.Rational(x) for x in xs], [sympy.Rational(d) for d in ds])
            ws = [Fraction(int(sympy.Rational(w).p), int(sympy.Rational(w).q)) for w in ws_sym]
            if any(w <= 0 for w in ws):
                bad.append(f"(E) n={n} sample {xs}: weights {ws} not all positive")
                continue
            for k in ks:
                prod = canonical_pair_product(xs, ds, ws, k)
                parts = []
                for j in itertools.product(range(k + 1), repeat=n):
                    if sum(j) == k:
                        c = Fraction(weight(k, j))
                        for w, v in zip(ws, j, strict=True):
                            c *= w**v
                        parts.append((c, hetero_rr_atoms(xs, j)))
                leak = 1 - (1 - ds[0]) ** k
                ts = sorted({r for r in prod if r is not None and r >= 1} | {Fraction(1)})
                for t in ts:
                    lhs = _hockey(prod, t)
                    rhs = leak + sum((c * _hockey(at, t) for c, at in parts), Fraction(0))
                    count += 1
                    if lhs != rhs and len(bad) < MAX_REPORTED:
                        bad.append(
                            f"(E) n={n} k={k} e^eps={tuple(map(str, xs))} at e^l={t}: "
                            f"product {lhs} != formula {rhs}"
                        )
    return bad, count


def check_conjecture(
    quick: bool = False,
    *,
    exhaustive_k: int | None = None,
    max_k: int | None = None,
    parts: str = "ABCDE",
    summand: HeteroSummand = theorem1_summand,
    weight: WeightFn = multinomial,
    cells: CellsFn = slice_cells,
    pair_weights: PairWeightsFn = canonical_weights,
) -> CheckResult:
    """Claim: (A)-(D) of the module docstring.

    Scope (default): (A) ``n in {3, 4}``, 4 cases each, symbolic; (B) ``n in {3, 4}``,
    ``k <= 4``; (C) every cell for ``k <= 4``; (D) sampled chambers for ``k = 5, 6``.
    Quick: (A) ``n = 3``; (B) ``n = 3, k <= 2``; (C) ``k <= 2``; no (D).

    Args:
        quick: lower the scope.
        exhaustive_k: override the largest k of (C).
        max_k: override the largest k of (D) (no (D) when ``max_k <= exhaustive_k``).
        parts: which of the parts A, B, C, D to run (the scope line lists those run).
        summand: the generalised Theorem 1 summand for ``C_j`` (hook for perturbation tests).
        weight: the mixture weight of ``w^j`` (hook for perturbation tests).
        cells: the cell enumeration of the slice (hook for perturbation tests).
        pair_weights: the canonical weights of (A) (hook for perturbation tests).

    Returns:
        The check result; its scope prints the cell counts of each dimension.
    """
    kx = exhaustive_k if exhaustive_k is not None else (2 if quick else EXHAUSTIVE_K)
    km = max_k if max_k is not None else (kx if quick else SAMPLED_K)
    bad: list[str] = []
    scope: list[str] = []
    if "A" in parts:
        pair_bad, ncase = check_pairs((3,) if quick else (3, 4), pair_weights)
        bad += pair_bad
        scope.append(
            f"(A) pair = f, symbolic, {ncase} cases (n in {{{'3' if quick else '3,4'}}} x "
            "delta1 =0/>0 x eps_n =0/>0)"
        )
    if "B" in parts:
        reg_scope = ((3, 2),) if quick else ((3, 4), (4, 4))
        for n, kr in reg_scope:
            for k in range(1, kr + 1):
                bad += check_regrouping(n, k, weight)
        scope.append(
            "(B) regrouping, free weights, " + ", ".join(f"n={n} k<={kr}" for n, kr in reg_scope)
        )
    nfail = 0
    ncmp = 0
    done: dict[tuple, int] = {}
    if "C" in parts:
        counts: list[str] = []
        for k in range(1, kx + 1):
            gen = Generic(k)
            normals = tie_normals(gen.vecs)
            lines, interior = cells(normals)
            flines, facet = facet_cells(normals)
            bad += ["(C) census " + m for m in census(lines, interior)]
            bad += ["(C) census " + m for m in census(flines, facet, facet=True)]
            per = [sum(1 for c in interior if c.dim == d) for d in (2, 1, 0)]
            fper = [sum(1 for c in facet if c.dim == d) for d in (1, 0)]
            counts.append(f"k={k}: {per[0]}/{per[1]}/{per[2]} + facet {fper[0]}/{fper[1]}")
            for cell, ls in [(c, lines) for c in interior] + [(c, flines) for c in facet]:
                ch = _cell_chamber(cell, ls, k)
                msgs, n = chamber_identity(ch, gen, summand, weight, done)
                ncmp += n
                if msgs:
                    nfail += 1
                    if nfail <= MAX_REPORTED:
                        bad += ["(C) " + m for m in msgs[:4]]
        scope.append(
            "(C) exhaustive n=3, every cell of eps1>eps2>eps3>0 sliced at eps1=1, "
            "faces/edges/vertices (cone dims 3/2/1) + facet eps3=0 intervals/points: "
            + "; ".join(counts)
        )
    if "D" in parts and km > kx:
        sampled: list[str] = []
        for k in range(kx + 1, km + 1):
            gen = Generic(k)
            chambers = sampled_chambers(k, 6)
            sampled.append(f"k={k}: {len(chambers) - 1} open + 1 ray")
            for ch in chambers:
                msgs, n = chamber_identity(ch, gen, summand, weight, done)
                ncmp += n
                if msgs:
                    nfail += 1
                    if nfail <= MAX_REPORTED:
                        bad += ["(D) " + m for m in msgs[:4]]
        scope.append(
            "(D) sampled (not exhaustive) chambers with distinct loss orderings, ray (3,2,1): "
            + ", ".join(sampled)
        )
    if "E" in parts:
        ks = (1, 2) if quick else (1, 2, 3, 4)
        e_bad, e_count = check_canonical_pair((3, 4), ks, weight, pair_weights)
        bad += e_bad
        scope.append(
            f"(E) the canonical pair's own k-fold product, enumerated, equals the formula: "
            f"n in {{3,4}}, k <= {ks[-1]}, {e_count} exact comparisons at rational e^eps"
        )
    if nfail > MAX_REPORTED:
        bad.append(f"... {nfail - MAX_REPORTED} more failing chambers")
    if "C" in parts or "D" in parts:
        scope.append(f"{ncmp} support-function identities")
    return CheckResult(NAME, not bad, "; ".join(scope), bad)
