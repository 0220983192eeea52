"""Privacy regions as exact (eps, delta) edge lists; enumeration; the mixture support function.

Mathematics (docs/theory.md, sections 1-3, 5):

* A symmetric piecewise-affine region is the intersection of ``R(l, delta(l))`` over its
  breakpoint losses ``l >= 0``.  Here such a region is an *edge list*: the pairs
  ``(l, N(l))`` with ``delta(l) = N(l) / den`` for a common denominator ``den`` (a product of
  powers of ``1 + x_i``), sorted by decreasing ``l``.
* For a finite pair (``P1 = e^{-L} P0`` at every finite letter),
  ``delta(l) = sum_{L(y) > l} (P0(y) - e^l P1(y))`` (section 3).  This formula holds for *every*
  real ``l``, not only breakpoints; it is the support function of the region in the direction
  of slope ``-e^l``: ``1 - delta(l) = min_t f(t) + e^l t``.
* Conversely, from an edge list the support function at a non-breakpoint ``l`` is obtained
  from the tangent vertex, i.e. the intersection of the two neighbouring constraint lines
  ``l_j > l > l_{j+1}``:
  ``delta(l) = [delta_j (e^l - e^{l_{j+1}}) + delta_{j+1} (e^{l_j} - e^l)]
  / (e^{l_j} - e^{l_{j+1}})``
  with the symmetric continuation ``delta(-m) = 1 - e^{-m} (1 - delta(m))`` below the smallest
  breakpoint, and ``delta(l) = delta(l_1)`` above the largest.
* Minkowski sums (mixtures, section 2 / Corollary 1) add support functions:
  ``delta_mix(l) = sum_i a_i delta_i(l)``, because ``1 - delta(l) = -f^*(-e^l)`` and
  ``f_m^* = sum a_i f_i^*`` (Appendix H, Prop. 5).
* Heterogeneous pure composition (Theorem 1, section 5, generalised to any number of
  generators): ``delta(l_a) = sum_{l_{a'} > l_a} prod_i C(j_i, a'_i)
  (e^{a' . eps} - e^{l_a} e^{(j - a') . eps}) / prod_i (1 + e^{eps_i})^{j_i}``,
  ``l_a = (2a - j) . eps``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from math import comb

from proofs_checks._laurent import Chamber, Laurent

Vec = tuple[int, ...]
Edge = tuple[Fraction, Vec, Laurent]
#: Theorem-1 summand hook: (counts j, a') -> (coefficient, P0 exponent, P1 exponent).
HeteroSummand = Callable[[Vec, Vec], tuple[int, Vec, Vec]]


def theorem1_summand(counts: Vec, a2: Vec) -> tuple[int, Vec, Vec]:
    """Return Theorem 1's summand for the outcome ``a'``: ``prod C(j_i, a'_i)``, ``a'``, ``j - a'``.

    Args:
        counts: numbers ``j_i`` of ``eps_i``-randomized responses.
        a2: the number ``a'_i`` of "high" outputs of each family.

    Returns:
        ``(coefficient, P0 exponent vector, P1 exponent vector)``.
    """
    coef = 1
    for j, a in zip(counts, a2, strict=True):
        coef *= comb(j, a)
    return coef, tuple(a2), tuple(j - a for j, a in zip(counts, a2, strict=True))


def _grid(counts: Sequence[int]) -> list[Vec]:
    out: list[Vec] = [()]
    for j in counts:
        out = [p + (a,) for p in out for a in range(j + 1)]
    return out


def hetero_den(ch: Chamber, counts: Sequence[int]) -> Laurent:
    """Return ``prod_i (1 + e^{eps_i})^{counts_i}`` in the chamber's symbols."""
    out = Laurent.const(1, ch.nvars)
    for i, j in enumerate(counts):
        out = out * ch.one_plus_x(i) ** j
    return out


def merge_ties(entries: list[Edge], conflicts: list[str], what: str) -> list[Edge]:
    """Merge entries with equal loss value (they must carry equal numerators).

    Args:
        entries: ``(value, vector, numerator)`` triples.
        conflicts: list receiving a message for every tie whose numerators differ.
        what: description for the conflict message.

    Returns:
        The merged entries sorted by decreasing value.
    """
    by_val: dict[Fraction, Edge] = {}
    for val, vec, num in entries:
        if val in by_val:
            if by_val[val][2] != num:
                conflicts.append(
                    f"{what}: loss vectors {by_val[val][1]} and {vec} tie at value {val} "
                    "but give different deltas"
                )
        else:
            by_val[val] = (val, vec, num)
    return sorted(by_val.values(), key=lambda e: e[0], reverse=True)


def hetero_closed_form(
    ch: Chamber,
    counts: Vec,
    conflicts: list[str],
    summand: HeteroSummand = theorem1_summand,
) -> list[Edge]:
    """Theorem 1 (generalised): the edge list of the composition of ``counts_i`` eps_i-RRs.

    Args:
        ch: the chamber fixing the loss ordering.
        counts: number of randomized responses of each generator.
        conflicts: receives messages about ties with different deltas.
        summand: the closed form's summand (hook for perturbation tests).

    Returns:
        Edge list ``(value, loss vector, numerator over hetero_den(counts))`` for ``l >= 0``.
    """
    grid = _grid(counts)
    losses = {a: tuple(2 * ai - j for ai, j in zip(a, counts, strict=True)) for a in grid}
    vals = {a: ch.value(v) for a, v in losses.items()}
    terms = {a: summand(counts, a) for a in grid}
    entries: list[Edge] = []
    for a in grid:
        lv = vals[a]
        if lv < 0:
            continue
        num = Laurent.const(0, ch.nvars)
        for a2 in grid:
            if vals[a2] > lv:
                coef, p0, p1 = terms[a2]
                num.iadd_mono(ch.exp(p0), coef)
                num.iadd_mono(
                    ch.exp(tuple(x + y for x, y in zip(losses[a], p1, strict=True))), -coef
                )
        entries.append((lv, losses[a], num))
    return merge_ties(entries, conflicts, f"closed form C_{counts}")


def support_numerator(edges: list[Edge], den: Laurent, ch: Chamber, qvec: Vec) -> Laurent | None:
    """Numerator of the support function ``delta(l)`` at the loss vector ``qvec``.

    Uses the tangent-vertex interpolation and symmetric continuation described in the
    module docstring.  Returns None if a division that must be exact is not (which means
    the edge list is not a polygon with the claimed rational vertices).
    """
    full: list[Edge] = list(edges)
    for val, vec, num in reversed(edges):
        if val > 0:
            neg = tuple(-v for v in vec)
            mirrored = den - (den - num).shift(ch.exp(neg))
            full.append((-val, neg, mirrored))
    q = ch.value(qvec)
    if q >= full[0][0]:
        return full[0][2].copy()
    for j in range(len(full) - 1):
        vj, ej, nj = full[j]
        vn, en, nn = full[j + 1]
        if q == vj:
            return nj.copy()
        if q == vn:
            return nn.copy()
        if vn < q < vj:
            xq, xj, xn = ch.exp(qvec), ch.exp(ej), ch.exp(en)
            num = nj * (Laurent.mono(xq) - Laurent.mono(xn)) + nn * (
                Laurent.mono(xj) - Laurent.mono(xq)
            )
            return num.exact_div_binomial(xj, xn)
    raise ValueError("query loss below the symmetric range of the edge list")


Letter = tuple[Vec, Vec, tuple[int, Vec], tuple[int, Vec]]


def convolve(
    ch: Chamber, factors: Sequence[Sequence[Letter]]
) -> dict[tuple[Vec, Vec], tuple[Laurent, Laurent]]:
    """Product of finite pairs by direct convolution (docs/theory.md, section 3).

    Args:
        ch: chamber (decides the symbols of the monomials).
        factors: one letter list per factor.  A letter is
            ``(tag, loss vector, (c0, e0), (c1, e1))`` with ``P0 = c0 x^e0`` and
            ``P1 = c1 x^e1`` (numerators; tags index the common denominators and weights,
            e.g. the power of ``1 - alpha`` or the counts of each randomized response).

    Returns:
        ``{(tag sum, loss vector sum): (P0 numerator, P1 numerator)}``.
    """
    ntag = len(factors[0][0][0])
    nl = len(factors[0][0][1])
    state: dict[tuple[Vec, Vec], tuple[Laurent, Laurent]] = {
        ((0,) * ntag, (0,) * nl): (Laurent.const(1, ch.nvars), Laurent.const(1, ch.nvars))
    }
    for letters in factors:
        new: dict[tuple[Vec, Vec], tuple[Laurent, Laurent]] = {}
        for (tag, loss), (p0, p1) in state.items():
            for t2, l2, (c0, e0), (c1, e1) in letters:
                key = (
                    tuple(a + b for a, b in zip(tag, t2, strict=True)),
                    tuple(a + b for a, b in zip(loss, l2, strict=True)),
                )
                q0 = p0.shift(ch.exp(e0), c0)
                q1 = p1.shift(ch.exp(e1), c1)
                if key in new:
                    new[key][0].iadd(q0)
                    new[key][1].iadd(q1)
                else:
                    new[key] = (q0, q1)
        state = new
    return state


def enumerate_product(
    ch: Chamber, letters: Sequence[Letter], k: int
) -> dict[tuple[Vec, Vec], tuple[Laurent, Laurent]]:
    """k-fold product of one finite pair by direct convolution (see :func:`convolve`)."""
    return convolve(ch, [letters] * k)


def rr_letters(gen: int, ngen: int, tag: Vec) -> list[Letter]:
    """Return the two letters of the ``eps_gen``-RR (numerators over ``1 + x``)."""
    up = tuple(int(i == gen) for i in range(ngen))
    down = tuple(-u for u in up)
    zero = (0,) * ngen
    return [(tag, up, (1, up), (1, zero)), (tag, down, (1, zero), (1, up))]


def enumerated_deltas(
    ch: Chamber,
    pld: dict[tuple[Vec, Vec], tuple[Laurent, Laurent]],
    targets: Sequence[tuple[Fraction, Vec]],
) -> dict[Vec, dict[Fraction, Laurent]]:
    """``delta(l) = sum_{L > l} P0 - e^l P1`` per tag at each target loss (section 3).

    Returns:
        ``{tag: {target value: numerator}}``.
    """
    by_tag: dict[Vec, list[tuple[Fraction, Laurent, Laurent]]] = {}
    for (tag, loss), (p0, p1) in pld.items():
        by_tag.setdefault(tag, []).append((ch.value(loss), p0, p1))
    out: dict[Vec, dict[Fraction, Laurent]] = {}
    for tag, items in by_tag.items():
        items.sort(key=lambda t: t[0], reverse=True)
        res: dict[Fraction, Laurent] = {}
        s0 = Laurent.const(0, ch.nvars)
        s1 = Laurent.const(0, ch.nvars)
        pos = 0
        for val, vec in sorted(targets, key=lambda t: t[0], reverse=True):
            while pos < len(items) and items[pos][0] > val:
                s0.iadd(items[pos][1])
                s1.iadd(items[pos][2])
                pos += 1
            res[val] = s0 - s1.shift(ch.exp(vec))
        out[tag] = res
    return out


def loss_targets(ch: Chamber, vectors: Sequence[Vec]) -> list[tuple[Fraction, Vec]]:
    """Distinct non-negative loss values of ``vectors`` (one representative vector each)."""
    seen: dict[Fraction, Vec] = {}
    for v in vectors:
        val = ch.value(v)
        if val >= 0 and val not in seen:
            seen[val] = tuple(v)
    return sorted(seen.items(), key=lambda t: t[0], reverse=True)


def fmt_loss(vec: Sequence[int]) -> str:
    """Format ``a*eps1 + b*eps2 + ...``."""
    return " + ".join(f"{a}*eps{i + 1}" for i, a in enumerate(vec))


def describe_diff(ch: Chamber, diff: Laurent, den: Laurent, extra: str = "") -> list[str]:
    """Report lines for a nonzero numerator difference (expression and a numeric value)."""
    import sympy

    expr = sympy.expand(diff.to_sympy(ch.symbols()))
    text = str(expr)
    if len(text) > 300:
        text = text[:300] + " ..."
    pt = ch.sample_point()
    val = diff.evaluate(pt) / den.evaluate(pt)
    names = ", ".join(f"{s}={float(p):.6g}" for s, p in zip(ch.symbols(), pt, strict=True))
    return [
        f"difference of numerators{extra}: {text}",
        f"at {names}: difference of deltas = {mpmath_str(val)}",
    ]


def mpmath_str(v: object) -> str:
    """Short string for an mpmath number."""
    import mpmath

    return mpmath.nstr(v, 8)
