"""Independent brute-force enumeration of k-fold product distributions (test helper).

Nothing here uses dpcompose_exact: the single-letter distribution is docs/theory.md, section 1's
six-letter mechanism, the product is enumerated letter by letter, and each region
constraint is a hockey-stick divergence sum_y max(0, P0(y) - e^eps P1(y)).
Two arithmetics: Fractions when every e^eps is rational (eps = log of a rational), and
mpmath at a chosen precision otherwise.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath


def double_dp_letters(z1, z2, d1, d2, one=1):
    """P0, P1 over letters -1..4 of docs/theory.md, section 1 (z_i = e^eps_i)."""
    oma = (d2 - d1) * (1 + z1) / ((one - d1) * (z1 - z2))  # 1 - alpha
    alpha = one - oma
    p0 = {
        -1: d1,
        0: (one - d1) * oma * z1 / (z1 + 1),
        1: (one - d1) * alpha * z2 / (z2 + 1),
        2: (one - d1) * alpha / (z2 + 1),
        3: (one - d1) * oma / (z1 + 1),
        4: 0 * one,
    }
    p1 = {x: p0[3 - x] for x in range(-1, 5)}
    return p0, p1


def product(p0, p1, k):
    """Likelihood pairs (P0(y), P1(y)) of every outcome of the k-fold product."""
    letters = [x for x in p0 if p0[x] != 0 or p1[x] != 0]
    for ys in itertools.product(letters, repeat=k):
        a = b = 1
        for y in ys:
            a *= p0[y]
            b *= p1[y]
        if a != 0 or b != 0:
            yield a, b


def region_exact(pairs):
    """[(ratio, delta)] for every distinct likelihood ratio >= 1 (Fractions), increasing.

    The top constraint (largest ratio) has delta = mass with P1 = 0 (the leak).
    """
    ratios = sorted({a / b for a, b in pairs if b != 0 and a >= b})
    out = []
    for r in ratios:
        out.append((r, sum((max(Fraction(0), a - r * b) for a, b in pairs), Fraction(0))))
    return out


def region_mp(pairs, tol):
    """Same as region_exact with mpmath numbers; ratios within tol are merged."""
    raw = sorted(a / b for a, b in pairs if b != 0 and a >= b * (1 - tol))
    ratios = []
    for r in raw:
        if not ratios or abs(r - ratios[-1]) > tol * r:
            ratios.append(r)
    out = []
    for r in ratios:
        r_eff = max(r, mpmath.mpf(1))
        out.append((r_eff, mpmath.fsum(max(0, a - r_eff * b) for a, b in pairs)))
    return out


def rr_letters(z, one=1):
    """Randomized response with likelihood ratio z: letters 0, 1."""
    return {0: z / (1 + z), 1: one / (1 + z)}, {0: one / (1 + z), 1: z / (1 + z)}


def hetero_pairs(zs):
    """Outcome likelihood pairs for a product of randomized responses with ratios zs."""
    pairs = [(1, 1)]
    for z in zs:
        p0, p1 = rr_letters(z, one=type(z)(1) if not isinstance(z, int) else Fraction(1))
        pairs = [(a * p0[y], b * p1[y]) for a, b in pairs for y in (0, 1)]
    return pairs


def compose_kinds(kinds, mode="auto", memory_limit=6 * 2**30, **kwargs):
    """``(region, method name)`` of mechanism kinds, through the front door (``dx.compose``)."""
    import dpcompose_exact as dx

    c = dx.compose(
        [(dx.Mechanism(k.constraints), k.count) for k in kinds],
        method=mode,
        max_memory=memory_limit,
        **kwargs,
    )
    return c.region, str(c.method)


def compose_pairs_k(pairs, k, method="exact"):
    """``(region, method name)`` of k uses of one mechanism (the paper's functions too)."""
    import dpcompose_exact as dx

    c = dx.compose(list(pairs), k, method=method)
    return c.region, str(c.method)
