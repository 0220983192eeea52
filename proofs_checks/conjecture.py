"""Check 8: the paper's conjecture for n = 3 constraints (mixture of heterogeneous compositions).

Mathematics (docs/theory.md, sections 1, 2, 3, 10).  Three active constraints
``eps1 > eps2 > eps3 > 0``, ``delta1 < delta2 < delta3``.

(A) Canonical pair (symbolic in ``x_i = e^{eps_i}``, ``delta_i``): leak ``delta1`` and
    eps_j-randomized responses with weights ``w_j = L_j (1 + x_j)`` from the edge lengths of
    ``f`` on ``[0, c]``.  Verified: the letters sum to 1 under both hypotheses and the
    vertices of the pair's curve equal those of ``max`` of the six constraint lines and 0
    (see :mod:`proofs_checks.pair`), i.e. the pair has trade-off ``f_{eps_vec, delta_vec}``.

(B) Composition: ``R_k = dt R(0,1) + (1-dt) sum_{|j|=k} k!/(j1! j2! j3!) w^j C_j(eps)`` where
    ``C_j`` is the heterogeneous composition of ``j_i`` eps_i-RRs given by the closed form of
    Theorem 1 generalised to three generators, and the Minkowski sum is taken by adding
    support functions (section 2).  The other side is the direct k-fold product of the
    canonical pair, enumerated letter by letter.  Both are polynomials in free weights
    ``w1, w2, w3`` (stronger than substituting the canonical ``w_j``); the monomials ``w^j``
    are linearly independent over ``Q(x1, x2, x3)``, so the sides agree iff each coefficient
    agrees, which is compared exactly (the leak folds in identically on both sides).

Chambers for (B): the orderings of the losses ``a.eps`` (``|a1|+|a2|+|a3| <= k``) form a
planar line arrangement; it is *not* enumerated exhaustively.  Checked: several open
chambers, each given by a generic rational representative ``eps`` (verified to have no tied
losses, with pairwise distinct loss orderings), plus the critical ray ``eps = g (3, 2, 1)``
where many losses tie (``x_i = z^{3,2,1}``).  The report prints the exact list.
"""

from __future__ import annotations

from fractions import Fraction
from math import factorial

import sympy

from proofs_checks._laurent import Chamber, Laurent, critical_chamber, open_chamber
from proofs_checks._regions import (
    HeteroSummand,
    Vec,
    describe_diff,
    enumerate_product,
    enumerated_deltas,
    fmt_loss,
    hetero_closed_form,
    hetero_den,
    loss_targets,
    rr_letters,
    support_numerator,
    theorem1_summand,
)
from proofs_checks._result import MAX_REPORTED, CheckResult
from proofs_checks.pair import canonical_weights, pair_vs_constraints

NAME = "conjecture_n3"
CLAIM = "n=3: canonical pair realises f; k-fold product = multinomial mixture of C_j(eps)"

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
"""Candidate representatives (eps1, eps2, eps3) for open chambers."""


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


def chambers3(k: int, max_open: int) -> list[Chamber]:
    """Return generic open chambers with distinct loss orderings, plus the ray ``(3, 2, 1)``."""
    vecs = loss_vectors3(k)
    seen: set[tuple[Vec, ...]] = set()
    out: list[Chamber] = []
    for rep in CANDIDATE_REPS:
        ch = open_chamber(rep, "eps ~ (" + ", ".join(str(r) for r in rep) + ")")
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
    out.append(critical_chamber((3, 2, 1), "eps = g (3, 2, 1) (ties merged)"))
    return out


def _compositions(k: int) -> list[Vec]:
    return [(a, b, k - a - b) for a in range(k + 1) for b in range(k + 1 - a)]


def check_conjecture(
    quick: bool = False,
    *,
    max_k: int | None = None,
    summand: HeteroSummand = theorem1_summand,
) -> CheckResult:
    """Claim: (A) and (B) of the module docstring.

    Scope: (A) symbolic; (B) ``1 <= k <= max_k`` (default 6, quick 2), a sample of open
    chambers (up to 6 distinct orderings) plus one critical ray, weights ``w`` free.

    Args:
        quick: lower the scope.
        max_k: override the largest k.
        summand: the generalised Theorem 1 summand for ``C_j`` (hook for perturbation tests).

    Returns:
        The check result; a failure names k, chamber, ``j``, loss and difference.
    """
    kmax = max_k if max_k is not None else (2 if quick else 6)
    bad: list[str] = []
    xs = list(sympy.symbols("x1:4", positive=True))
    ds = list(sympy.symbols("delta1:4", positive=True))
    weights = canonical_weights(xs, ds)
    subs = {
        xs[0]: 5,
        xs[1]: 3,
        xs[2]: 2,
        ds[0]: sympy.Rational(1, 50),
        ds[1]: sympy.Rational(1, 20),
        ds[2]: sympy.Rational(1, 10),
    }
    bad += ["(A) " + m for m in pair_vs_constraints(xs, ds, ds[0], weights, subs)]
    nfail = nedges = nch = 0
    chamber_labels: set[str] = set()
    for k in range(1, kmax + 1):
        vecs = loss_vectors3(k)
        for ch in chambers3(k, 6):
            nch += 1
            chamber_labels.add(ch.label)
            conflicts: list[str] = []
            targets = loss_targets(ch, vecs)
            letters = [
                ltr
                for g in range(3)
                for ltr in rr_letters(g, 3, tuple(int(i == g) for i in range(3)))
            ]
            direct = enumerated_deltas(ch, enumerate_product(ch, letters, k), targets)
            for j in _compositions(k):
                mult = factorial(k) // (factorial(j[0]) * factorial(j[1]) * factorial(j[2]))
                edges = hetero_closed_form(ch, j, conflicts, summand)
                den = hetero_den(ch, j)
                for val, vec in targets:
                    nedges += 1
                    num = support_numerator(edges, den, ch, vec)
                    if num is None:
                        conflicts.append(f"C_{j}: non-exact vertex division at {fmt_loss(vec)}")
                        continue
                    mix = num * mult
                    dnum = direct.get(j, {}).get(val, Laurent.const(0, ch.nvars))
                    if mix == dnum:
                        continue
                    nfail += 1
                    if nfail <= MAX_REPORTED:
                        bad.append(f"(B) k={k}, chamber {ch.label}, j={j}, eps = {fmt_loss(vec)}:")
                        bad += [
                            "  " + s
                            for s in describe_diff(ch, mix - dnum, den, " (mixture - direct)")
                        ]
            for msg in conflicts:
                nfail += 1
                if nfail <= MAX_REPORTED:
                    bad.append(f"(B) k={k}, chamber {ch.label}: {msg}")
    if nfail > MAX_REPORTED:
        bad.append(f"... {nfail - MAX_REPORTED} more failing instances")
    scope = (
        f"(A) symbolic; (B) k<={kmax}, {nch} (k,chamber) cases, {nedges} edges; chambers: "
        + "; ".join(sorted(chamber_labels))
    )
    return CheckResult(NAME, not bad, scope, bad)
