"""Check 4: Remark 2 (Ghazi-Issa, DP plus total variation) as the eps2 = 0 double-DP case.

Mathematics (docs/theory.md, sections 1, 6-8).  Remark 2 replaces ``(eps2, delta2)`` by the total
variation constraint ``(0, eta)``, ``eta = delta2 + (1 - delta2)(e^eps2 - 1)/(e^eps2 + 1)``, and
composes the double constraint ``((eps1, 0), (delta1, eta))``.  What is verified, exactly:

(a) ``eta`` is the support value ``delta(0)`` of ``R(eps2, delta2)``, computed from its
    canonical pair as ``sum_{L > 0} (P0 - P1)``: so ``(0, eta)`` is the tightest total
    variation constraint implied by ``(eps2, delta2)`` (identity in ``e^eps2, delta2``);
(b) the section-1 pair with ``x2 = 1`` and ``delta2 = eta`` has trade-off function
    ``f_{(eps1, 0), (delta1, eta)}`` (vertices equal, weights canonical; identity in
    ``x1, e^eps2, delta1, delta2`` -- see :mod:`proofs_checks.pair`);
(c) for every ``k <= K`` the k-fold composition of that pair, computed three ways -- the
    Theorem 3 lattice formula with ``eps2 = 0``, the Theorem 2 Minkowski mixture of the
    ``C_{i,k-i}(eps1, 0)`` (Theorem 1 with ``x2 = 1``), and direct enumeration of the k-fold
    product -- gives the same (eps, delta) list, as rational functions of ``x1`` and a free
    ``alpha`` (compared coefficient-wise in the basis ``(1-alpha)^i alpha^{k-i}``, see
    :mod:`proofs_checks.thm2_thm3`); the leak ``delta1`` folds in identically.

With ``eps2 = 0`` all losses are integer multiples of ``eps1`` and the many tied lattice
points ``(u, v)`` must give equal deltas, which is checked too.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import sympy

from proofs_checks._laurent import Chamber, Laurent
from proofs_checks._regions import (
    describe_diff,
    fmt_loss,
    hetero_den,
    loss_targets,
    theorem1_summand,
)
from proofs_checks._result import MAX_REPORTED, CheckResult
from proofs_checks.pair import D1, D2, X1, is_zero, pair_vs_constraints, paper_alpha
from proofs_checks.thm2_thm3 import (
    Theorem3Term,
    enumeration_deltas,
    lattice_vectors,
    theorem2_deltas,
    theorem3_deltas,
    theorem3_term,
)

NAME = "remark2_tv"
CLAIM = (
    "Remark 2: eta = delta(0) of R(eps2,delta2); double-DP composition with eps2=0 "
    "(lattice = mixture) = enumeration"
)

EtaFormula = Callable[[sympy.Expr, sympy.Expr], sympy.Expr]
Y = sympy.Symbol("y", positive=True)
"""``y = e^{eps2}`` of the original second constraint."""


def paper_eta(y: sympy.Expr, d2: sympy.Expr) -> sympy.Expr:
    """Remark 2's ``eta = delta2 + (1 - delta2)(e^eps2 - 1)/(e^eps2 + 1)``."""
    return d2 + (1 - d2) * (y - 1) / (y + 1)


EPS2_ZERO = Chamber((Fraction(1), Fraction(0)), ((1, 0),), "eps2 = 0 (x2 = 1)")
"""The eps2 = 0 chamber: symbol ``z = x1``, ``x2 = z^0 = 1``."""


def check_remark2(
    quick: bool = False,
    *,
    max_k: int | None = None,
    eta: EtaFormula = paper_eta,
    theorem3: Theorem3Term = theorem3_term,
) -> CheckResult:
    """Claim: Remark 2's first factor is computed exactly by the eps2 = 0 double-DP formulas.

    Scope: items (a), (b) symbolic; item (c) for ``1 <= k <= max_k`` (default 12, quick 4).

    Args:
        quick: lower the scope.
        max_k: override the largest k.
        eta: Remark 2's ``eta`` formula (hook for perturbation tests).
        theorem3: Theorem 3's summand (hook).

    Returns:
        The check result; a failure names the item, k, the loss and the difference.
    """
    kmax = max_k if max_k is not None else (4 if quick else 12)
    bad: list[str] = []
    # (a) eta is delta(0) of R(eps2, delta2): leak delta2 + (1 - delta2) (P0 - P1) of the
    # up letter of eps2-RR (the only finite letter with loss > 0).
    support0 = D2 + (1 - D2) * (Y / (1 + Y) - 1 / (1 + Y))
    eta_expr = eta(Y, D2)
    if not is_zero(support0 - eta_expr):
        diff = sympy.cancel(support0 - eta_expr)
        bad.append(
            f"(a) delta(0) of R(eps2, delta2) - eta = {diff}; at y=2, delta2=1/10: "
            f"{diff.subs({Y: 2, D2: sympy.Rational(1, 10)})}"
        )
    # (b) the pair with x2 = 1, delta2 = eta realises f_{(eps1,0),(delta1,eta)}.
    a = paper_alpha(X1, sympy.Integer(1), D1, eta_expr)
    weights = [(1 - D1) * (1 - a), (1 - D1) * a]
    subs = {X1: 4, Y: sympy.Rational(3, 2), D1: sympy.Rational(1, 20), D2: sympy.Rational(1, 10)}
    bad += [
        "(b) " + m
        for m in pair_vs_constraints([X1, sympy.Integer(1)], [D1, eta_expr], D1, weights, subs)
    ]
    # (c) lattice = mixture = enumeration, eps2 = 0.
    ch = EPS2_ZERO
    nfail = nedges = 0
    for k in range(1, kmax + 1):
        vecs = lattice_vectors(k)
        conflicts: list[str] = []
        targets = loss_targets(ch, vecs)
        t3 = theorem3_deltas(ch, k, theorem3, conflicts)
        t2 = theorem2_deltas(ch, k, targets, theorem1_summand, conflicts)
        en = enumeration_deltas(ch, k, targets)
        if set(t3) != {v for v, _ in targets}:
            conflicts.append("Theorem 3's lattice losses differ from the support's")
        for msg in conflicts:
            nfail += 1
            if nfail <= MAX_REPORTED:
                bad.append(f"(c) k={k}: {msg}")
        for val, vec in targets:
            nedges += 1
            n3 = t3.get(val, (vec, {}))[1]
            for i in range(k + 1):
                zero = Laurent.const(0, ch.nvars)
                a2, a3, ae = t2[val].get(i, zero), n3.get(i, zero), en[val].get(i, zero)
                if a2 == a3 == ae:
                    continue
                nfail += 1
                if nfail <= MAX_REPORTED:
                    den = hetero_den(ch, (i, k - i))
                    bad.append(f"(c) k={k}, eps = {fmt_loss(vec)}, basis (1-alpha)^{i}:")
                    for diff, what in (
                        (a2 - a3, " (mixture - lattice)"),
                        (ae - a3, " (enum - lattice)"),
                    ):
                        if not diff.is_zero():
                            bad += ["  " + s for s in describe_diff(ch, diff, den, what)]
    if nfail > MAX_REPORTED:
        bad.append(f"... {nfail - MAX_REPORTED} more failing instances")
    scope = f"(a),(b) symbolic; (c) k<={kmax}, {nedges} (eps,delta) edges"
    return CheckResult(NAME, not bad, scope, bad)
