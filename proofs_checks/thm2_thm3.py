"""Check 2: Theorem 2 (mixture form) = Theorem 3 (lattice closed form) = enumeration.

Mathematics (docs/theory.md, sections 5-7).  With ``A = (1 - alpha)/(1 + x1)``,
``B = alpha/(1 + x2)``:

* Theorem 3: ``delta_{u,v} = sum_{a+b+c+d=k, eps1(a-d)+eps2(b-c) > eps_{u,v}}
  k!/(a!b!c!d!) A^{a+d} B^{b+c} (x1^a x2^b - e^{eps_{u,v}} x1^d x2^c)`` over the lattice
  ``u, v in [0, k]``, ``u >= ceil((k eps1 - v (eps1 - eps2)) / (eps1 + eps2))``,
  ``eps_{u,v} = eps1 (u + v - k) + eps2 (u - v)``.
* Theorem 2: the weighted Minkowski sum ``sum_i C(k,i) (1-alpha)^i alpha^{k-i} C_{i,k-i}`` with
  ``C_{x,y}`` from Theorem 1 (section 5); Minkowski sums add support functions (module
  :mod:`proofs_checks._regions`), so its delta at ``l`` is
  ``sum_i C(k,i) (1-alpha)^i alpha^{k-i} delta_{C_{i,k-i}}(l)``, where ``delta_C(l)`` at a loss
  that is not a breakpoint of ``C`` comes from the tangent vertex of ``C``'s polygon.
* Enumeration: the k-fold product of the continuous part of the section-1 pair (letters
  0..3), by convolution.
* The leak folds in identically on all sides (``delta = dt + (1 - dt) delta_cont``,
  ``dt = 1 - (1 - delta1)^k``), so the continuous deltas are compared.

Every side is a polynomial in ``alpha`` written in the basis
``(1 - alpha)^i alpha^{k-i} / ((1 + x1)^i (1 + x2)^{k-i})``, ``i = 0..k``, with Laurent-polynomial
coefficients in ``x1, x2``.  Powers ``(1-alpha)^i alpha^{k-i}`` are linearly independent over
``Q(x1, x2)``, so the sides are equal as rational functions in ``(x1, x2, alpha)`` iff every
coefficient agrees; that is what is compared, exactly.  Since ``alpha`` is a free symbol, the
identity holds in particular for the paper's ``alpha(x1, x2, delta1, delta2)`` (section 1),
i.e. as rational functions of ``(x1, x2, delta1, delta2)``.

Chambers: every ordering of the losses ``a eps1 + b eps2`` (``|a| + |b| <= k``,
``a + b = k mod 2``) with ``eps1 > eps2 > 0``; see :func:`proofs_checks._laurent.ratio_chambers`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from math import comb, factorial

from proofs_checks._laurent import Chamber, Laurent, ratio_chambers
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
    support_numerator,
    theorem1_summand,
)
from proofs_checks._result import MAX_REPORTED, CheckResult

NAME = "thm2_equals_thm3"
CLAIM = (
    "Theorem 2 (mixture of C_{i,k-i}) = Theorem 3 (u,v lattice) = k-fold enumeration, "
    "every chamber of eps1/eps2"
)

#: Theorem-3 summand hook: (k, a, b, c, d) ->
#: (coefficient, power i of (1-alpha), loss vector, P0 exponent, P1 exponent).
Theorem3Term = Callable[[int, int, int, int, int], tuple[int, int, Vec, Vec, Vec]]


def theorem3_term(k: int, a: int, b: int, c: int, d: int) -> tuple[int, int, Vec, Vec, Vec]:
    """Theorem 3's summand for ``(a, b, c, d)`` (docs/theory.md, section 7).

    Returns:
        ``(k!/(a!b!c!d!), a + d, (a - d, b - c), (a, b), (d, c))``: the multinomial, the power
        of ``(1 - alpha)`` (with ``alpha`` to the power ``k - i`` and the denominator
        ``(1+x1)^i (1+x2)^{k-i}``), the loss vector of the outcome, and the exponents of
        ``x1^a x2^b`` and ``x1^d x2^c``.
    """
    coef = factorial(k) // (factorial(a) * factorial(b) * factorial(c) * factorial(d))
    return coef, a + d, (a - d, b - c), (a, b), (d, c)


def lattice_vectors(k: int) -> list[Vec]:
    """Return the loss vectors ``(x, y)`` with ``|x| + |y| <= k``, ``x + y = k mod 2`` (set B)."""
    return [
        (x, y)
        for x in range(-k, k + 1)
        for y in range(-k, k + 1)
        if abs(x) + abs(y) <= k and (x + y - k) % 2 == 0
    ]


def theorem3_deltas(
    ch: Chamber, k: int, term: Theorem3Term, conflicts: list[str]
) -> dict[Fraction, tuple[Vec, dict[int, Laurent]]]:
    """Theorem 3's (eps_{u,v}, delta_{u,v}) on the ceiling-restricted lattice, per basis index.

    Returns:
        ``{value of eps_{u,v}: ((u+v-k, u-v), {i: numerator})}``; distinct ``(u, v)`` with the
        same value must give equal numerators (else a message is appended to ``conflicts``).
    """
    e1, e2 = ch.rep
    tuples = [
        (a, b, c, k - a - b - c)
        for a in range(k + 1)
        for b in range(k + 1 - a)
        for c in range(k + 1 - a - b)
    ]
    pre = []
    for t in tuples:
        coef, i, lvec, p0, p1 = term(k, *t)
        pre.append((ch.value(lvec), coef, i, p0, p1))
    out: dict[Fraction, tuple[Vec, dict[int, Laurent]]] = {}
    for u in range(k + 1):
        for v in range(k + 1):
            if u < math.ceil((k * e1 - v * (e1 - e2)) / (e1 + e2)):
                continue
            lvec = (u + v - k, u - v)
            lv = ch.value(lvec)
            nums: dict[int, Laurent] = {}
            for val, coef, i, p0, p1 in pre:
                if val > lv:
                    num = nums.setdefault(i, Laurent.const(0, ch.nvars))
                    num.iadd_mono(ch.exp(p0), coef)
                    num.iadd_mono(ch.exp((lvec[0] + p1[0], lvec[1] + p1[1])), -coef)
            nums = {i: n for i, n in nums.items() if not n.is_zero()}
            if lv in out and out[lv][1] != nums:
                conflicts.append(
                    f"Theorem 3: (u,v) lattice points {out[lv][0]} and {lvec} share "
                    f"eps = {lv} (chamber units) but give different delta_(u,v)"
                )
            out.setdefault(lv, (lvec, nums))
    return out


def theorem2_deltas(
    ch: Chamber,
    k: int,
    targets: list[tuple[Fraction, Vec]],
    summand: HeteroSummand,
    conflicts: list[str],
) -> dict[Fraction, dict[int, Laurent]]:
    """Theorem 2's deltas at the target losses, per basis index ``i`` (Minkowski support sum)."""
    out: dict[Fraction, dict[int, Laurent]] = {val: {} for val, _ in targets}
    for i in range(k + 1):
        counts = (i, k - i)
        edges = hetero_closed_form(ch, counts, conflicts, summand)
        den = hetero_den(ch, counts)
        for val, vec in targets:
            num = support_numerator(edges, den, ch, vec)
            if num is None:
                conflicts.append(
                    f"Theorem 1 edges of C_{counts} do not form a polygon with exact vertices "
                    f"(non-exact division at {fmt_loss(vec)})"
                )
                continue
            if not num.is_zero():
                out[val][i] = num * comb(k, i)
    return out


PAIR_LETTERS = [
    ((1,), (1, 0), (1, (1, 0)), (1, (0, 0))),
    ((1,), (-1, 0), (1, (0, 0)), (1, (1, 0))),
    ((0,), (0, 1), (1, (0, 1)), (1, (0, 0))),
    ((0,), (0, -1), (1, (0, 0)), (1, (0, 1))),
]
"""Section-1 letters 0, 3, 1, 2 (continuous part): tag = power of (1 - alpha), loss, P0, P1."""


def enumeration_deltas(
    ch: Chamber, k: int, targets: list[tuple[Fraction, Vec]]
) -> dict[Fraction, dict[int, Laurent]]:
    """Deltas of the k-fold product of the section-1 pair, per basis index."""
    pld = enumerate_product(ch, PAIR_LETTERS, k)
    per_tag = enumerated_deltas(ch, pld, targets)
    out: dict[Fraction, dict[int, Laurent]] = {val: {} for val, _ in targets}
    for tag, res in per_tag.items():
        for val, num in res.items():
            if not num.is_zero():
                out[val][tag[0]] = num
    return out


def check_thm2_thm3(
    quick: bool = False,
    *,
    max_k: int | None = None,
    theorem3: Theorem3Term = theorem3_term,
    theorem1: HeteroSummand = theorem1_summand,
) -> CheckResult:
    """Claim: Theorems 2 and 3 (and direct enumeration) give identical (eps, delta) edges.

    Scope: every ``k <= max_k`` (default 8, quick 3) and every chamber of ``eps1/eps2 > 1``
    (open intervals between critical ratios and the critical ratios themselves, where tied
    losses merge); symbols ``x1, x2, alpha`` free (see module docstring).  Verified per
    chamber: (a) Theorem 3's ceiling-restricted lattice gives exactly the non-negative losses
    of B; (b) tied lattice points give equal deltas; (c) for every such loss, Theorem 2's delta,
    Theorem 3's delta and the enumerated delta agree coefficient-wise.

    Args:
        quick: lower the scope.
        max_k: override the largest k.
        theorem3: Theorem 3's summand (hook for perturbation tests).
        theorem1: Theorem 1's summand used inside Theorem 2 (hook).

    Returns:
        The check result; a failure lists chamber, k, loss and the differing numerators.
    """
    kmax = max_k if max_k is not None else (3 if quick else 8)
    failures: list[str] = []
    nfail = 0
    nchambers = 0
    nedges = 0
    for k in range(1, kmax + 1):
        vecs = lattice_vectors(k)
        for ch in ratio_chambers(vecs):
            nchambers += 1
            conflicts: list[str] = []
            targets = loss_targets(ch, vecs)
            t3 = theorem3_deltas(ch, k, theorem3, conflicts)
            t2 = theorem2_deltas(ch, k, targets, theorem1, conflicts)
            en = enumeration_deltas(ch, k, targets)
            if set(t3) != {val for val, _ in targets}:
                conflicts.append(
                    "Theorem 3's lattice losses differ from the non-negative losses of B: "
                    f"missing {sorted({v for v, _ in targets} - set(t3))}, "
                    f"extra {sorted(set(t3) - {v for v, _ in targets})}"
                )
            for msg in conflicts:
                nfail += 1
                if nfail <= MAX_REPORTED:
                    failures.append(f"k={k}, chamber {ch.label}: {msg}")
            for val, vec in targets:
                nedges += 1
                n3 = t3.get(val, (vec, {}))[1]
                n2, ne = t2[val], en[val]
                for i in range(k + 1):
                    zero = Laurent.const(0, ch.nvars)
                    a2, a3, ae = n2.get(i, zero), n3.get(i, zero), ne.get(i, zero)
                    if a2 == a3 == ae:
                        continue
                    nfail += 1
                    if nfail > MAX_REPORTED:
                        continue
                    den = hetero_den(ch, (i, k - i))
                    failures.append(
                        f"k={k}, chamber {ch.label}, eps = {fmt_loss(vec)}, "
                        f"basis (1-alpha)^{i} alpha^{k - i}:"
                    )
                    if a2 != a3:
                        failures += [
                            "  " + s
                            for s in describe_diff(ch, a2 - a3, den, " (Theorem 2 - Theorem 3)")
                        ]
                    if ae != a3:
                        failures += [
                            "  " + s
                            for s in describe_diff(ch, ae - a3, den, " (enumeration - Theorem 3)")
                        ]
    if nfail > MAX_REPORTED:
        failures.append(f"... {nfail - MAX_REPORTED} more failing instances")
    scope = f"k<=%d, {nchambers} chambers, {nedges} (eps,delta) edges" % kmax
    return CheckResult(NAME, not failures, scope, failures)
