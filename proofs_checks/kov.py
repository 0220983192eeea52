"""Check 3: Kairouz-Oh-Viswanath's closed form equals enumeration of k-fold RR plus leak.

Mathematics (docs/theory.md, sections 1, 3, 4).  The canonical pair of one (eps, delta)
constraint is:
with probability ``delta`` a leak letter (``P0 = delta``, ``P1 = 0``, loss ``+inf``) and
its mirror (``P0 = 0``, ``P1 = delta``, loss ``-inf``), otherwise eps-randomized response.
The KOV closed form claims, for ``i = 0..floor(k/2)``, ``eps_i = (k - 2i) eps`` and
``delta_i = 1 - (1-delta)^k (1 - sum_{l<i} C(k,l) (e^{(k-l)eps} - e^{(k-2i+l)eps})/(1+e^eps)^k)``.

The enumeration convolves the k copies of the pair (a product letter containing any leak
has loss ``+inf`` or ``-inf``; one containing both has probability 0 under both hypotheses),
then ``delta(l) = sum_{L > l} (P0 - e^l P1)``.  Both are elements of the rational function
field ``Q(x, delta)`` (sympy's sparse ``FracField``, ``x = e^eps``) and compared exactly.  The
check also confirms that the non-negative losses of the product are exactly ``(k - 2i) eps``.
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb

import sympy
from sympy import QQ
from sympy.polys.fields import FracElement, field

from proofs_checks._result import MAX_REPORTED, CheckResult

NAME = "kov_closed_form"
CLAIM = "KOV closed form = enumeration of k-fold (eps,delta) canonical pair (RR + leak)"

#: KOV hook: (k, i, x, delta) -> delta_i.
KovFormula = Callable[[int, int, FracElement, FracElement], FracElement]

PINF = 10**9
"""Stand-in loss for the ``+inf`` leak letter (never reached by a finite loss here)."""
NINF = -(10**9)
"""Stand-in loss for the ``-inf`` mirror-leak letter."""


def kov_delta(k: int, i: int, x: FracElement, d: FracElement) -> FracElement:
    """Return the KOV delta_i for ``eps_i = (k - 2i) eps`` (docs/theory.md, section 4)."""
    s = sum((comb(k, m) * (x ** (k - m) - x ** (k - 2 * i + m)) for m in range(i)), x * 0)
    return 1 - (1 - d) ** k * (1 - s / (1 + x) ** k)


def _enumerate(k: int, x: FracElement, d: FracElement) -> dict[int, list[FracElement]]:
    one = (1 - d) / (1 + x)
    letters = {PINF: (d, d * 0), 1: (one * x, one), -1: (one, one * x), NINF: (d * 0, d)}
    state: dict[int, list[FracElement]] = {0: [d * 0 + 1, d * 0 + 1]}
    for _ in range(k):
        new: dict[int, list[FracElement]] = {}
        for loss, (p0, p1) in state.items():
            for l2, (q0, q1) in letters.items():
                if {loss, l2} == {PINF, NINF} or (loss in (PINF, NINF) and l2 == -loss):
                    continue  # leak and mirror leak: probability 0 under both
                if loss in (PINF, NINF):
                    key = loss
                elif l2 in (PINF, NINF):
                    key = l2
                else:
                    key = loss + l2
                acc = new.setdefault(key, [d * 0, d * 0])
                acc[0] += p0 * q0
                acc[1] += p1 * q1
        state = new
    return state


def check_kov(
    quick: bool = False, *, max_k: int | None = None, formula: KovFormula = kov_delta
) -> CheckResult:
    """Claim: the KOV (eps_i, delta_i) list is exactly the k-fold composition's edge list.

    Scope: ``1 <= k <= max_k`` (default 12, quick 6); ``x = e^eps`` and ``delta`` symbolic
    (any ``eps > 0``, ``delta in [0, 1)``; there is a single chamber).

    Args:
        quick: lower the scope.
        max_k: override the largest k.
        formula: the closed form (hook for perturbation tests).

    Returns:
        The check result; a failure gives k, i and the nonzero difference.
    """
    kmax = max_k if max_k is not None else (6 if quick else 12)
    _, x, d = field("x,delta", QQ)
    failures: list[str] = []
    nfail = nedges = 0
    for k in range(1, kmax + 1):
        state = _enumerate(k, x, d)
        losses = sorted(state, reverse=True)
        nonneg = [lo for lo in losses if 0 <= lo < PINF]
        expected = [k - 2 * i for i in range(k // 2 + 1)]
        if nonneg != expected:
            nfail += 1
            failures.append(f"k={k}: non-negative losses {nonneg} != KOV's {expected}")
        for i in range(k // 2 + 1):
            nedges += 1
            lv = k - 2 * i
            enum = sum((state[lo][0] - x**lv * state[lo][1] for lo in losses if lo > lv), x * 0)
            diff = formula(k, i, x, d) - enum
            if diff != 0:
                nfail += 1
                if nfail <= MAX_REPORTED:
                    expr = diff.as_expr()
                    pt = expr.subs(
                        {
                            sympy.Symbol("x"): sympy.Rational(3, 2),
                            sympy.Symbol("delta"): sympy.Rational(1, 10),
                        }
                    )
                    failures.append(
                        f"k={k}, i={i} (eps_i = {lv}*eps): formula - enumeration = "
                        f"{str(expr)[:300]}; at e^eps=3/2, delta=1/10: {pt}"
                    )
    if nfail > MAX_REPORTED:
        failures.append(f"... {nfail - MAX_REPORTED} more failing instances")
    return CheckResult(NAME, not failures, f"k<={kmax}, {nedges} (eps,delta) edges", failures)
