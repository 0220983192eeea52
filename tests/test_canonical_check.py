"""Check (E) of `verify conjecture`: the canonical pair's own k-fold composition, enumerated,
equals the theorem's formula (n = 3 and 4), and the check can fail."""

from __future__ import annotations

from fractions import Fraction

import dpcompose_exact as dx
from proofs_checks.conjecture import (
    CANONICAL_SAMPLES,
    _hockey,
    canonical_pair_product,
    check_canonical_pair,
    check_conjecture,
    multinomial,
)
from proofs_checks.pair import canonical_weights


def test_part_e_passes_for_n3_and_n4():
    r = check_conjecture(parts="E")
    assert r.passed, r.counterexample
    assert "(E)" in r.scope and "n in {3,4}, k <= 4" in r.scope


def test_part_e_fails_with_a_wrong_mixture_weight():
    def wrong(k, j):  # one multinomial coefficient off by one
        return multinomial(k, j) + (1 if j[0] == k - 1 and k > 1 else 0)

    bad, count = check_canonical_pair((3, 4), (1, 2), wrong, canonical_weights)
    assert count > 0 and bad and "product" in bad[0] and "!= formula" in bad[0]


def test_enumerated_product_agrees_with_the_exact_engine():
    """The enumeration itself, against dx.compose (eps_i = log of the rational e^eps_i)."""
    import sympy

    xs, ds = CANONICAL_SAMPLES[3][0]
    ws = [
        Fraction(int(w.p), int(w.q))
        for w in canonical_weights([sympy.Rational(x) for x in xs], [sympy.Rational(d) for d in ds])
    ]
    mech = dx.Mechanism([(f"log({x})", str(d)) for x, d in zip(xs, ds)])
    c = dx.compose(mech, 2)
    prod = canonical_pair_product(xs, ds, ws, 2)
    for t in sorted(r for r in prod if r is not None and r >= 1)[:6]:
        assert c.delta(f"log({t})") == _hockey(prod, t)
