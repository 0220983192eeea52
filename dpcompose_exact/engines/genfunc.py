"""Exact composition of privacy-loss distributions by generating functions.

The method is docs/theory.md, section 3.

Composition multiplies pairs, so losses add: the k-fold loss distribution is the k-th
power of the one-step generating polynomial ``sum_y P0(y) w^{n(y)}`` in formal variables
``w = (w_1, ..., w_m)`` indexing the loss vector.  Each P0-mass is an element of Q(z); over a
common denominator ``D(z)`` the polynomial ``N(w, z)`` has integer coefficients, and the
composition of several kinds is ``prod_j N_j^{k_j} / prod_j D_j^{k_j}``.  FLINT's sparse
multivariate ``fmpz_mpoly`` computes the power: with one generator this is the dense
bivariate case, with several it stays sparse over integer exponent vectors.

All deltas then follow from two suffix sums over the losses in decreasing order (P1-mass
is ``e^{-l}`` times P0-mass), and the leaks fold in as
``delta = 1 - prod_j (1 - leak_j)^{k_j} + (finite part)`` (the finite masses already carry
their ``(1 - leak_j)`` factors).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from fractions import Fraction
from itertools import takewhile, tee

import flint

from ..errors import InvalidParameterError, ResourceLimitError
from ..limits import DEFAULT_MEMORY_LIMIT
from ..numbers import ExpDomain, Loss, QzElem
from ..numbers.qz import _factor_product, _unit_root
from ..regions.pld import PLD, suffix_deltas
from ..regions.tradeoff import Region
from .memory import RECURRENCE_MAX_SPAN, estimate_rss, z_density

__all__ = [
    "compose_plds",
    "common_domain",
    "estimate_bytes",
    "too_big_message",
    "dense_degree",
    "exact_refusal",
    "MAX_DENSE_DEGREE",
    "DEFAULT_MEMORY_LIMIT",
]

# Dense polynomials in z of higher degree go to the certified routes (sparse in the
# exponents when the support is small): gcds and suffix sums at this degree take seconds.
MAX_DENSE_DEGREE = 200_000


def _common_denominator(pld: PLD) -> tuple[flint.fmpz_poly, list[tuple[Loss, flint.fmpz_poly]]]:
    den = flint.fmpz_poly([1])
    for _, m in pld.masses:
        d = m.den
        g = den.gcd(d)
        den = den * (d // g)
    nums = []
    for loss, m in pld.masses:
        nums.append((loss, m.num * (den // m.den)))
    return den, nums


def common_domain(kinds: Sequence[tuple[PLD, int]]) -> list[tuple[PLD, int]]:
    """The pairs re-expressed in the join of their domains (at least one pair needed)."""
    if not kinds:
        raise InvalidParameterError("nothing to compose: every count is 0")
    dom = kinds[0][0].domain
    if all(p.domain is dom for p, _ in kinds):  # already normalised (finiteroutes.Problem)
        return list(kinds)
    for p, _ in kinds[1:]:
        dom = dom.join(p.domain)
    return [(p.in_domain(dom), c) for p, c in kinds]


def too_big_message(need: int, limit: int) -> str:
    """The refusal message for an exact result that would not fit."""
    return (
        f"the exact result needs about {need // 2**20} MiB, over the limit of "
        f"{limit // 2**20} MiB; use a smaller k"
    )


def estimate_bytes(kinds: Sequence[tuple[PLD, int]]) -> int:
    """Upper estimate of the memory the exact k-fold computation needs.

    The pairs may live in different domains: nothing is converted (a conversion to a tiny
    common generator is itself a large allocation).  The product has at most ``n_w``
    distinct loss values (the smaller of the lattice box and the product of the per-kind
    counts) and each carries a dense polynomial in ``z`` of the total degree.
    """
    if not kinds:
        return 0
    dom = kinds[0][0].domain
    for p, _ in kinds[1:]:
        dom = dom.join(p.domain)
    box, prod_counts = 1, 1
    for i in range(dom.dim):
        span = 1
        for pld, count in kinds:
            vals = {pld.domain.convert_loss(loss, dom)[i] for loss, _ in pld.masses}
            span += count * (max(vals) - min(vals)) if vals else 0
        box *= span
    for pld, count in kinds:
        prod_counts *= count * max(len(pld.masses) - 1, 0) + 1
    w_count = min(box, prod_counts)
    zdeg, bits = 0, 0
    for pld, count in kinds:
        den, nums = _common_denominator(pld)
        scale = 1
        if pld.domain.g0 is not None and dom.g0 is not None:
            scale = int(pld.domain.g0 / dom.g0)
        zdeg += count * scale * max([p.degree() for _, p in nums] + [den.degree(), 0])
        norm1 = sum(abs(int(c)) for _, p in nums for c in p.coeffs())
        bits += count * max(norm1.bit_length(), 1)
    return w_count * (zdeg + 1) * (bits // 8 + 16)


def dense_degree(kinds: Sequence[tuple[PLD, int]]) -> int:
    """Degree in ``z`` of the exact k-fold polynomial, computed without converting any pair.

    Each pair's degree is rescaled to the common generator and multiplied by its count.
    """
    kinds = [(p, c) for p, c in kinds if c]
    if not kinds:
        return 0
    dom = kinds[0][0].domain
    for p, _ in kinds[1:]:
        dom = dom.join(p.domain)
    total = 0
    for pld, count in kinds:
        scale = 1
        if pld.domain.g0 is not None and dom.g0 is not None:
            scale = int(pld.domain.g0 / dom.g0)
        deg = max(
            [m.num.degree() for _, m in pld.masses] + [m.den.degree() for _, m in pld.masses] + [0]
        )
        total += count * scale * max(deg, 0)
    return total


def exact_refusal(
    kinds: Sequence[tuple[PLD, int]],
    memory_limit: int | None,
    closed_forms: bool | str = True,
    rss: Callable[[], int] | None = None,
) -> str | None:
    """Why the exact route must not start (None when it may): checked before allocating.

    First the degree in ``z`` (computed without converting the pairs: a conversion to a
    tiny common generator is itself a large allocation), then the calibrated peak-RSS
    estimate of :func:`~dpcompose_exact.engines.memory.estimate_rss` against ``memory_limit``
    (``rss``: a callable giving that estimate, when the caller normalised the kinds).
    """
    deg = dense_degree(kinds)
    if deg > MAX_DENSE_DEGREE:
        return (
            f"the exact deltas would be polynomials of degree {deg} in z = e^g, over the "
            f"limit of {MAX_DENSE_DEGREE} (a tiny common generator g next to large "
            "epsilons, or a large k); use a smaller k, coarser epsilons,"
        )
    if memory_limit is None:
        return None
    if rss is not None:  # the caller's normalised problem knows it
        need = rss()
    else:
        need = estimate_rss(common_domain([(p, c) for p, c in kinds if c]), closed_forms)
    if need > memory_limit:
        return too_big_message(need, memory_limit)
    return None


def compose_plds(
    kinds: Sequence[tuple[PLD, int]],
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
) -> Region:
    """Exact region of the composition of ``count`` copies of each pair.

    Args:
        kinds: ``[(pld, count), ...]`` with counts >= 0 (at least one positive).
        memory_limit: refuse (:class:`ResourceLimitError`) when the estimated size of the
            exact result exceeds this many bytes; None disables the check.

    Returns:
        The composed region, one constraint per loss value >= 0 of the composed pair.
    """
    for _, c in kinds:
        if isinstance(c, bool) or not isinstance(c, int) or c < 0:
            raise InvalidParameterError(f"count must be a non-negative integer, got {c!r}")
    kinds = [(p, c) for p, c in kinds if c]
    if not kinds:
        raise InvalidParameterError("nothing to compose: every count is 0")
    refusal = exact_refusal(kinds, memory_limit)
    if refusal is not None:
        raise ResourceLimitError(refusal)
    kinds = common_domain(kinds)
    dom = kinds[0][0].domain
    dim = dom.dim
    total_den = flint.fmpz_poly([1])
    den_content = 1
    den_facs: dict[tuple[int, ...], tuple[flint.fmpz_poly, int]] = {}
    survive = QzElem.from_rational(1)  # prod (1 - leak_j)^{k_j}
    steps: list[tuple[list[tuple[Loss, flint.fmpz_poly]], int]] = []
    for pld, count in kinds:
        den, nums = _common_denominator(pld)
        steps.append((nums, count))
        total_den = total_den * den**count
        content, facs = den.factor()  # a small polynomial: cheap
        den_content *= int(content) ** count
        for f, e in facs:
            key = tuple(int(c) for c in f.coeffs())
            prev = den_facs.get(key, (f, 0))
            den_facs[key] = (f, prev[1] + e * count)
        survive = survive * (1 - pld.leak) ** count
    leak = 1 - survive
    parts = (den_content, list(den_facs.values()))
    units = [f for f, _ in parts[1] if _unit_root(f) is not None]
    # the power recurrence (_top_blocks) keeps the last ``span`` blocks and costs about
    # ``2 span`` products per block (recurrence_is_faster); otherwise FLINT's sparse power
    span = (
        sum(max(loss[0] for loss, _ in n) - min(loss[0] for loss, _ in n) for n, _ in steps if n)
        if dim == 1
        else 0  # no generator (every loss is 0) or several: FLINT's sparse power
    )
    count = sum(c for _, c in steps)
    if dim == 1 and recurrence_is_faster(span, count, lambda: z_density(kinds)):
        top = sum(c * max(loss[0] for loss, _ in nums) for nums, c in steps if nums)
        if any(not nums for nums, _ in steps) or top < 0:
            # no finite loss, or every one below 0 (the forward pair of a non-private
            # mechanism subsampled at q >= 1/2 loses log(1 - q) < 0 or leaks): no loss >= 0
            # has mass, and delta is the leak at every eps >= 0
            blocks: Iterable[tuple[Loss, flint.fmpz_poly, tuple[int, ...]]] = iter(())
            losses: list[Loss] = []
        else:
            blocks = _top_blocks(steps, units)
            losses = [(n,) for n in range(top, -1, -1)]
    else:
        by_loss = _power_by_loss(steps, dim)
        order = dom.sort_losses(by_loss)
        losses = list(takewhile(lambda loss: dom.loss_sign(loss) >= 0, reversed(order)))
        none = (0,) * len(units)
        blocks = ((loss, by_loss.pop(loss), none) for loss in losses)
    return Region(dom, tuple(_deltas(dom, losses, blocks, total_den, leak, parts, units)))


RECURRENCE_WIDE_SPAN = 256
"""Widest support (in units of the generator) the recurrence takes past the narrow ones."""


def recurrence_is_faster(span: int, count: int, density: Callable[[], float]) -> bool:
    """Whether the power recurrence beats FLINT's sparse power (one generator).

    Narrow one-step supports (span <= :data:`RECURRENCE_MAX_SPAN`, the paper case: 4)
    always; wider ones up to :data:`RECURRENCE_WIDE_SPAN` while the number of factors is
    between 3 and the span and the powers are dense in z (``density()``, the share of
    nonzero z-slots, at least 1/2; the recurrence stores dense blocks).  Measured on
    three-constraint mechanisms (``benchmarks/bench_recurrence.py``): span 24, 90, 200
    at k = 5..20 run 1.4-4x faster by the recurrence; k = 2, or k = 40 at span 24, slower.
    The recurrence holds ``span`` dense blocks where the sparse power holds the whole
    product: 229 MB against 1025 MB at span 200, k = 20; but 743 MB against under 300 MB
    for ``z^500`` next to ``z`` (density 0.08), which the density test leaves to the
    sparse power.  The memory estimate keeps the sparse route's figure for the wide spans.
    """
    if span <= RECURRENCE_MAX_SPAN:
        return True
    return 3 <= count <= span <= RECURRENCE_WIDE_SPAN and density() >= 0.5


def _power_by_loss(
    steps: Sequence[tuple[list[tuple[Loss, flint.fmpz_poly]], int]], dim: int
) -> dict[Loss, flint.fmpz_poly]:
    """``prod_j N_j(w, z)^{k_j}`` by FLINT's sparse power, split by the w-monomial."""
    names = tuple(f"w{i}" for i in range(dim)) + ("z",)
    ctx = flint.fmpz_mpoly_ctx.get(names, "lex")
    product = ctx.from_dict({(0,) * (dim + 1): 1})
    offset = [0] * dim
    for nums, count in steps:
        shift = [min((loss[i] for loss, _ in nums), default=0) for i in range(dim)]
        terms: dict[tuple[int, ...], int] = {}
        for loss, poly in nums:
            wexp = tuple(loss[i] - shift[i] for i in range(dim))
            for j, c in enumerate(poly.coeffs()):
                if c:
                    key = wexp + (j,)
                    terms[key] = terms.get(key, 0) + int(c)
        factor = ctx.from_dict(terms) if terms else ctx.from_dict({})
        product = product * factor**count
        for i in range(dim):
            offset[i] += count * shift[i]
    return _split_by_loss(product, dim, offset)


def _wmul(a: list[flint.fmpz_poly], b: list[flint.fmpz_poly]) -> list[flint.fmpz_poly]:
    """Product of two polynomials in w with coefficients in Z[z] (coefficient lists)."""
    out = [flint.fmpz_poly([]) for _ in range(len(a) + len(b) - 1)]
    for i, x in enumerate(a):
        if x.is_zero():
            continue
        for j, y in enumerate(b):
            if not y.is_zero():
                out[i + j] += x * y
    return out


def _unit_valuation(p: flint.fmpz_poly, f: flint.fmpz_poly) -> tuple[int, flint.fmpz_poly]:
    """``(v, p / f^v)`` with ``f^v`` the largest power of ``f = z -+ 1`` dividing ``p != 0``."""
    root = _unit_root(f)
    v = 0
    while not p(root):
        p = p // f
        v += 1
    return v, p


class _Stripped:
    """``poly * prod_i units[i]^vals[i]``: a polynomial with known factors ``z -+ 1`` out.

    The blocks of the power recurrence and their suffix sums carry the powers of ``z - 1``
    and ``z + 1`` they are known to contain as exponents (docs/theory.md, section 16):
    the top blocks of the paper case contain ``(z + 1)^(k - n)``, which would otherwise be
    multiplied in and divided out again by every row.  The zero has ``vals`` None.
    """

    __slots__ = ("poly", "vals", "units")

    def __init__(self, poly: flint.fmpz_poly, vals: tuple[int, ...] | None, units: tuple) -> None:
        self.poly = poly
        self.vals = vals
        self.units = units

    def lifted(self, want: tuple[int, ...]) -> flint.fmpz_poly:
        """``poly * prod f^(vals - want)`` (``want <= vals``)."""
        p = self.poly
        for f, have, w in zip(self.units, self.vals or (), want):
            if have > w:
                p = p * f ** (have - w)
        return p

    def __add__(self, other: _Stripped) -> _Stripped:
        if self.vals is None:
            return other
        if other.vals is None:
            return self
        want = tuple(map(min, self.vals, other.vals))
        return _Stripped(self.lifted(want) + other.lifted(want), want, self.units)


def _top_blocks(
    steps: Sequence[tuple[list[tuple[Loss, flint.fmpz_poly]], int]],
    units: Sequence[flint.fmpz_poly] = (),
) -> Iterator[tuple[Loss, flint.fmpz_poly, tuple[int, ...]]]:
    """``(loss, N_loss(z) / prod f^v, v)`` of ``prod_j N_j^{k_j}``, decreasing loss, to 0.

    One generator (docs/theory.md, section 16): write each ``N_j`` from its top loss down,
    ``r_j(w) = sum_i N_j(top_j - i) w^i``, and ``h = prod_j r_j^{k_j}``; then
    ``F h' = H h`` with ``F = prod_j r_j`` and ``H = sum_j k_j r_j' prod_{i != j} r_i``,
    so ``n F_0 h_n = sum_i H_i h_{n-1-i} - sum_{i>=1} (n - i) F_i h_{n-i}``: each block is
    a few products with the small one-step polynomials and one exact division by
    ``n F_0``, from the top loss down.  Only the losses >= 0 are made (the half the
    region needs), the last ``deg F`` blocks are kept, zero blocks are skipped.  The powers
    ``v`` of the ``units`` (``z -+ 1``) that every term of the recurrence carries are kept
    out of the blocks as exponents.
    """
    units = tuple(units)
    revs: list[list[flint.fmpz_poly]] = []
    top = 0
    for nums, count in steps:
        hi = max(loss[0] for loss, _ in nums)
        lo = min(loss[0] for loss, _ in nums)
        r = [flint.fmpz_poly([]) for _ in range(hi - lo + 1)]
        for loss, poly in nums:
            r[hi - loss[0]] += poly
        revs.append(r)
        top += count * hi
    big_f = [flint.fmpz_poly([1])]
    for r in revs:
        big_f = _wmul(big_f, r)
    big_h = [flint.fmpz_poly([]) for _ in range(max(len(big_f) - 1, 1))]
    for j, ((_, count), r) in enumerate(zip(steps, revs)):
        deriv = [r[i] * (i * count) for i in range(1, len(r))] or [flint.fmpz_poly([])]
        term = deriv
        for i, other in enumerate(revs):
            if i != j:
                term = _wmul(term, other)
        for i, c in enumerate(term):
            if i < len(big_h):
                big_h[i] += c

    def split(p: flint.fmpz_poly) -> tuple[flint.fmpz_poly, tuple[int, ...]]:
        vals = []
        for f in units:
            v, p = _unit_valuation(p, f)
            vals.append(v)
        return p, tuple(vals)

    f_parts = [split(c) if not c.is_zero() else None for c in big_f]
    h_parts = [split(c) if not c.is_zero() else None for c in big_h]
    f0, phi0 = f_parts[0]  # type: ignore[misc]
    deg = len(big_f) - 1
    h0, v0 = flint.fmpz_poly([1]), [0] * len(units)
    for (_, count), r in zip(steps, revs):
        p, vals = split(r[0])
        h0 = h0 * p**count
        v0 = [a + count * b for a, b in zip(v0, vals)]
    powers: dict[tuple, flint.fmpz_poly] = {}

    def times_units(tag: tuple, small: flint.fmpz_poly, extra: tuple[int, ...]) -> flint.fmpz_poly:
        key = (tag, extra)
        out = powers.get(key)
        if out is None:
            out = small
            for f, e in zip(units, extra):
                if e:
                    out = out * f**e
            powers[key] = out
        return out

    window: deque[tuple[flint.fmpz_poly, tuple[int, ...]]] = deque(
        [(h0, tuple(v0))], maxlen=max(deg, 1)
    )
    if not h0.is_zero():
        yield (top,), h0, tuple(v0)
    for n in range(1, top + 1):
        terms = []
        for i in range(min(deg, n)):  # H_i h_{n-1-i}; window[-1] is h_{n-1}
            prev = window[-1 - i]
            if h_parts[i] is not None and not prev[0].is_zero():
                terms.append((("h", i), h_parts[i], prev, 1))
        for i in range(1, min(deg, n) + 1):  # (n - i) F_i h_{n-i}
            prev = window[-i]
            if f_parts[i] is not None and not prev[0].is_zero():
                terms.append((("f", i), f_parts[i], prev, i - n))
        if not terms:
            window.append((flint.fmpz_poly([]), (0,) * len(units)))
            continue
        low = tuple(
            min(part[1][u] + prev[1][u] for _, part, prev, _ in terms) for u in range(len(units))
        )
        acc = flint.fmpz_poly([])
        for tag, (small, vals), (poly, pvals), scale in terms:
            extra = tuple(a + b - c for a, b, c in zip(vals, pvals, low))
            acc += (times_units(tag, small, extra) * scale) * poly
        div = tuple(max(a - b, 0) for a, b in zip(phi0, low))
        vn = tuple(max(b - a, 0) for a, b in zip(phi0, low))
        block = (acc // n) // times_units(("f0",), f0, div)  # exact: n F_0 h_n is that sum
        window.append((block, vn))
        if not block.is_zero():
            yield (top - n,), block, vn


def _shifted(p: flint.fmpz_poly, shift: int, scale: int) -> flint.fmpz_poly:
    """``p * scale * z^shift``, without the copies a shift by 0 or a scale of 1 would make."""
    if shift:
        p = p.left_shift(shift)
    if scale != 1:
        p = p * scale
    return p


def _split_by_loss(
    product: flint.fmpz_mpoly, dim: int, offset: list[int]
) -> dict[Loss, flint.fmpz_poly]:
    """Group the terms of ``N(w, z)`` by the w-monomial: loss -> numerator polynomial in z."""
    monoms = product.monoms()
    coeffs = product.coeffs()
    out: dict[Loss, flint.fmpz_poly] = {}
    i, n = 0, len(monoms)
    while i < n:
        wpart = monoms[i][:dim]
        top = monoms[i][dim]
        dense = [0] * (top + 1)
        while i < n and monoms[i][:dim] == wpart:
            dense[monoms[i][dim]] = coeffs[i]
            i += 1
        loss = tuple(int(wpart[j]) + offset[j] for j in range(dim))
        out[loss] = flint.fmpz_poly(dense)
    return out


def _deltas(
    dom: ExpDomain,
    losses: Sequence[Loss],
    blocks: Iterable[tuple[Loss, flint.fmpz_poly, tuple[int, ...]]],
    den: flint.fmpz_poly,
    leak: QzElem,
    den_parts: tuple[int, list[tuple[flint.fmpz_poly, int]]],
    units: Sequence[flint.fmpz_poly] = (),
) -> list[tuple[Loss, QzElem]]:
    """``delta(l) = leak + (S0(l) - e^l S1(l)) / den`` for every loss l >= 0 with mass.

    ``blocks`` gives ``(l, N_l(z) / prod f^v, v)`` for the losses ``l >= 0`` with mass,
    decreasing (made on demand), ``f`` running over ``units`` (factors ``z -+ 1`` of
    ``den``); ``losses`` lists (at least) those losses, for the common scale below.
    ``den_parts`` is the factorisation ``(content, [(f, e), ...])`` of ``den``.

    ``S0`` and ``S1`` are suffix sums (:func:`~.pld.suffix_deltas`) of P0- and P1-masses
    over losses > l, kept as integer polynomials with their known powers of the units as
    exponents: ``e^{-l} = (b/a) z^{-n0}`` is brought over ``A z^M`` with ``A`` the lcm of
    the ``a`` and ``M`` the largest ``n0``.  Each delta keeps its denominator factored
    (docs/theory.md, section 16), the powers of the units common to both sums cancelled.
    """
    exps = {loss: dom.exp_loss(loss) for loss in losses}  # c z^n0 as QzElem monomials
    mono = {loss: e.monomial_parts() for loss, e in exps.items()}  # e^l = c z^n0
    big_a = 1
    big_m = 0
    for c, n0 in mono.values():
        big_a = math.lcm(big_a, c.numerator)
        big_m = max(big_m, n0)
    # den = content * z^s * prod f^e with small irreducible f: the deltas are reduced by
    # trial division with these (a gcd of two degree-N polynomials per row is the
    # bottleneck of printing large exact regions otherwise)
    den_content, den_factors = den_parts
    zfac = [e for f, e in den_factors if f.degree() == 1 and f.coeffs() == [0, 1]]
    den_z = sum(zfac)
    den_factors = [(f, e) for f, e in den_factors if not (f.degree() == 1 and f.coeffs() == [0, 1])]
    units = tuple(units)
    unit_index = {id(f): i for i, f in enumerate(units)}
    unit_exp = [0] * len(units)
    for f, e in den_factors:
        if id(f) in unit_index:
            unit_exp[unit_index[id(f)]] = e
    leak_q = leak.as_rational()
    cache: dict = {}
    zero_poly = flint.fmpz_poly([])
    last: list = []  # ((exponents), prod f^e) of the previous row

    def den_product(factors: list[tuple[flint.fmpz_poly, int]]) -> flint.fmpz_poly:
        """``prod f^e``: the previous row's times the few factors more.

        The exponents of the units grow by about one a row, going down: no product from
        scratch per row, and none kept beyond the last.
        """
        exps = tuple(e for _, e in factors)
        prod = None
        if last and len(last[0][0]) == len(exps):
            have, prev = last[0]
            if all(a <= b for a, b in zip(have, exps)) and sum(exps) - sum(have) <= 8:
                prod = prev
                for (f, e), a in zip(factors, have):
                    if e > a:
                        prod = prod * f ** (e - a)
        if prod is None:
            prod = _factor_product(factors, None)
        last[:] = [(exps, prod)]
        return prod

    def combine(loss: Loss, s0: _Stripped, s1: _Stripped) -> QzElem:
        c, n0 = mono[loss]
        # cont = s0/den - c z^n0 * s1/(A z^M den)
        #      = (s0 * A c.den z^(M+lift) - c.num * z^(n0+lift) * s1) / (A c.den z^(M+lift) den)
        # with the common power z^t of the two terms, and the powers of z -+ 1 both sums
        # carry, divided out of both sides: the denominator is kept factored
        # (const z^zpow prod f^e), never expanded
        lift = max(0, -n0)
        a_sh, b_sh = big_m + lift, n0 + lift
        t = min(a_sh, b_sh)
        have = [v for v in (s0.vals, s1.vals) if v is not None]
        common = tuple(min([e] + [v[i] for v in have]) for i, e in enumerate(unit_exp))
        p0 = s0.lifted(common) if s0.vals is not None else zero_poly
        p1_ = s1.lifted(common) if s1.vals is not None else zero_poly
        num = _shifted(p0, a_sh - t, big_a * c.denominator) - _shifted(
            p1_, b_sh - t, c.numerator
        )
        const = int(den_content) * big_a * c.denominator
        zpow = a_sh - t + den_z
        factors = [
            (f, e - common[unit_index[id(f)]]) if id(f) in unit_index else (f, e)
            for f, e in den_factors
        ]
        if leak_q is not None:  # (num + leak * cden) / cden, reduced lazily by trial division
            if leak_q:  # over lcm(const, b) for leak = a/b: b mostly divides const already,
                # and the large numerator is then not multiplied at all
                prod = den_product(factors)
                g = math.gcd(const, leak_q.denominator)
                scale = leak_q.denominator // g
                num = _shifted(num, 0, scale) + _shifted(prod, zpow, const // g * leak_q.numerator)
                const *= scale
            return QzElem.with_known_denominator(
                num, None, (const, zpow, factors), cache, field=dom.g0
            )
        cden = (_factor_product(factors, cache) * const).left_shift(zpow)
        elem = leak + QzElem(num, cden)
        elem.field = dom.g0
        return elem

    # P1 numerator over A z^M: poly * e^{-l} * A z^M = poly * (A / c) z^(M - n0)
    def p1(loss: Loss, poly: flint.fmpz_poly) -> flint.fmpz_poly:
        c, n0 = mono[loss]
        return _shifted(poly, big_m - n0, int(Fraction(big_a) / c))

    b0, b1, b2 = tee(blocks, 3)  # one pass over the blocks, made on demand
    out = suffix_deltas(
        (loss for loss, _, _ in b0),
        (_Stripped(poly, vals, units) for _, poly, vals in b1),
        (_Stripped(p1(loss, poly), vals, units) for loss, poly, vals in b2),
        zero=_Stripped(zero_poly, None, units),
        combine=combine,
    )
    out.reverse()
    if not out:
        out = [(dom.zero_loss(), leak)]
    return out
