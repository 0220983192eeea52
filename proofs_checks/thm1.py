"""Check 6: Theorem 1's closed form equals enumeration of x eps1-RRs and y eps2-RRs.

Mathematics (docs/theory.md, section 5).  The product of ``x`` eps1-randomized responses and ``y``
eps2-randomized responses has losses ``l_{ab} = (2a - x) eps1 + (2b - y) eps2`` and its region
is the intersection of ``R(l_{ab}, delta_{ab})`` over ``l_{ab} >= 0`` with
``delta_{ab} = sum_{l_{a'b'} > l_{ab}} C(x,a') C(y,b') (e^{a' eps1 + b' eps2}
- e^{l_{ab}} e^{(x-a') eps1 + (y-b') eps2}) / ((1+e^eps1)^x (1+e^eps2)^y)``.

The enumeration side multiplies the ``x + y`` binary pairs letter by letter (convolution of
``P0`` and ``P1`` separately; nothing about binomial coefficients or about ``P1 = e^{-L} P0`` is
assumed) and computes ``delta(l) = sum_{L > l} P0 - e^l P1`` by suffix sums (section 3).
Both deltas are compared as Laurent polynomials in ``x1 = e^eps1, x2 = e^eps2`` over the
common denominator, in every chamber of ``eps1/eps2`` (see
:func:`proofs_checks._laurent.ratio_chambers`): on open chambers ``x1, x2`` are independent
symbols, on critical ratios ``x1 = z^p, x2 = z^q`` and tied losses merge (tied ``(a, b)`` must
give the same delta, which is also checked).
"""

from __future__ import annotations

from proofs_checks._laurent import ratio_chambers
from proofs_checks._regions import (
    HeteroSummand,
    convolve,
    describe_diff,
    enumerated_deltas,
    fmt_loss,
    hetero_closed_form,
    hetero_den,
    rr_letters,
    theorem1_summand,
)
from proofs_checks._result import MAX_REPORTED, CheckResult

NAME = "thm1_closed_form"
CLAIM = "Theorem 1's closed form = enumeration of x eps1-RRs and y eps2-RRs, every chamber"


def check_thm1(
    quick: bool = False,
    *,
    max_total: int | None = None,
    summand: HeteroSummand = theorem1_summand,
) -> CheckResult:
    """Claim: Theorem 1's (eps, delta) list equals the enumerated product's, edge by edge.

    Scope: all ``x, y >= 0`` with ``1 <= x + y <= max_total`` (default 12, quick 5), every
    chamber of ``eps1/eps2 > 1`` (open intervals and critical ratios) for that ``(x, y)``.

    Args:
        quick: lower the scope.
        max_total: override the bound on ``x + y``.
        summand: Theorem 1's summand (hook for perturbation tests).

    Returns:
        The check result; a failure names ``(x, y)``, the chamber, the loss and the difference.
    """
    nmax = max_total if max_total is not None else (5 if quick else 12)
    failures: list[str] = []
    nfail = nch = nedges = 0
    for total in range(1, nmax + 1):
        for x in range(total + 1):
            y = total - x
            vecs = [(2 * a - x, 2 * b - y) for a in range(x + 1) for b in range(y + 1)]
            for ch in ratio_chambers(vecs):
                nch += 1
                conflicts: list[str] = []
                edges = hetero_closed_form(ch, (x, y), conflicts, summand)
                factors = [rr_letters(0, 2, (0,))] * x + [rr_letters(1, 2, (0,))] * y
                pld = convolve(ch, factors)
                targets = [(val, vec) for val, vec, _ in edges]
                enum = enumerated_deltas(ch, pld, targets)[(0,)]
                support = {ch.value(loss) for (_, loss) in pld}
                if {v for v, _ in targets} != {v for v in support if v >= 0}:
                    conflicts.append("closed-form losses differ from the product's support")
                for msg in conflicts:
                    nfail += 1
                    if nfail <= MAX_REPORTED:
                        failures.append(f"x={x}, y={y}, chamber {ch.label}: {msg}")
                den = hetero_den(ch, (x, y))
                for val, vec, num in edges:
                    nedges += 1
                    if num == enum[val]:
                        continue
                    nfail += 1
                    if nfail <= MAX_REPORTED:
                        failures.append(f"x={x}, y={y}, chamber {ch.label}, eps = {fmt_loss(vec)}:")
                        failures += [
                            "  " + s
                            for s in describe_diff(
                                ch, num - enum[val], den, " (Theorem 1 - enumeration)"
                            )
                        ]
    if nfail > MAX_REPORTED:
        failures.append(f"... {nfail - MAX_REPORTED} more failing instances")
    scope = f"x+y<={nmax}, {nch} (x,y,chamber) cases, {nedges} (eps,delta) edges"
    return CheckResult(NAME, not failures, scope, failures)
