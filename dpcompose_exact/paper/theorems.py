"""The paper's composition results as named functions (docs/theory.md, sections 4 to 8).

* :func:`kov_composition` -- Kairouz-Oh-Viswanath, one (eps, delta) constraint (section 4).
* :func:`theorem1_closed_form` -- Theorem 1 / Algorithm 1, x eps1-DP with y eps2-DP (section 5);
  :func:`heterogeneous_composition` composes any list of pure-DP kinds by generating functions.
* :func:`theorem2_mixture` -- Theorem 2, the mixture of heterogeneous compositions (section 6).
* :func:`theorem3_lattice` -- Theorem 3, the closed form on the (u, v) lattice (section 7); the
  lattice condition ``u >= ceil(...)`` is decided as the exact sign of ``eps_{u,v}``, never
  through a floating-point ceiling.
* :func:`pld_composition` -- the generating-function route for any constraint list (section 3).
* :func:`remark1_bound`, :func:`remark2_bound` -- the baselines of section 8.

Theorems 2 and 3 and the generating-function route return identical exact regions.
Every function takes exact user values (strings such as ``"0.3"``, fractions, sympy
expressions) and returns a :class:`~dpcompose_exact.regions.tradeoff.Region`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import comb, factorial

import flint

from ..engines.certified import CertifiedRegion, compose_certified
from ..engines.genfunc import DEFAULT_MEMORY_LIMIT, common_domain, compose_plds, exact_refusal
from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers import ExpDomain, Loss, QzElem, domain_for
from ..regions.pld import PLD, canonical_pair, suffix_deltas
from ..regions.specs import MechanismKind, parse_count
from ..regions.tradeoff import Region, dp_region, mixture_minkowski, trivial_region, validate_pairs

__all__ = [
    "mixture_form",
    "DoubleDP",
    "double_dp",
    "kov_composition",
    "theorem1_closed_form",
    "heterogeneous_composition",
    "theorem2_mixture",
    "theorem3_lattice",
    "pld_composition",
    "remark1_bound",
    "remark2_bound",
    "THEOREM_K_LIMIT",
]

#: Theorems 2 and 3 enumerate O(k^3) terms in Python: above this k the exact route gives
#: the same region (the one definition of this limit)
THEOREM_K_LIMIT = 60
_ZERO = QzElem.from_rational(0)


def check_k(k: object) -> int:
    """Validate a composition count (:func:`~dpcompose_exact.regions.specs.parse_count`)."""
    return parse_count(k, "k", positive=True)


# ---------------------------------------------------------------------------------------
# Double-DP parameters (docs/theory.md, section 1)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DoubleDP:
    """Two active constraints ``eps1 > eps2 >= 0``, ``delta1 < delta2`` in one domain.

    ``alpha`` is the paper's mixing weight: with probability ``(1 - delta1)(1 - alpha)``
    the mechanism runs eps1-randomized response, with ``(1 - delta1) alpha`` eps2-RR.
    """

    domain: ExpDomain
    l1: Loss
    l2: Loss
    delta1: QzElem
    delta2: QzElem

    @property
    def z1(self) -> QzElem:
        """``e^{eps1}``."""
        return self.domain.exp_loss(self.l1)

    @property
    def z2(self) -> QzElem:
        """``e^{eps2}``."""
        return self.domain.exp_loss(self.l2)

    @property
    def one_minus_alpha(self) -> QzElem:
        """``1 - alpha = (delta2 - delta1)(1 + e^eps1) / ((1 - delta1)(e^eps1 - e^eps2))``."""
        z1, z2 = self.z1, self.z2
        return (self.delta2 - self.delta1) * (1 + z1) / ((1 - self.delta1) * (z1 - z2))

    @property
    def alpha(self) -> QzElem:
        """The paper's alpha."""
        return 1 - self.one_minus_alpha


def double_dp(eps: Sequence, delta: Sequence) -> DoubleDP:
    """Parse and check a double-DP mechanism; the order of the two pairs is free.

    Raises:
        InvalidParameterError: unless both constraints are active (then use
            :func:`kov_composition` or :func:`pld_composition`).
    """
    if len(eps) != len(delta) or not eps:
        raise InvalidParameterError(
            f"need as many eps as delta values, got {len(eps)} eps and {len(delta)} delta"
        )
    region = dp_region(list(zip(eps, delta)), warn=False)
    if len(region.constraints) != 2:
        raise InvalidParameterError(
            "Theorems 2 and 3 need exactly two active constraints; here "
            + ", ".join(
                f"({region.domain.loss_str(l_)}, {region.domain.elem_str(d)})"
                for l_, d in region.constraints
            )
            + f" {'is' if len(region.constraints) == 1 else 'are'} active "
            "(use the pld method / pld_composition, or kov_composition for one)"
        )
    (l2, d2), (l1, d1) = region.constraints
    return DoubleDP(region.domain, l1, l2, d1, d2)


# ---------------------------------------------------------------------------------------
# Sums of many masses over one denominator (Theorems 2 and 3)
# ---------------------------------------------------------------------------------------
#
# The masses of Theorems 2 and 3 are products of powers (exponents 0..k) of a few elements
# of Q(z) with different denominators; added as elements, every addition takes a gcd of
# two large polynomials.  Written over the one denominator D = prod_x den(x)^k, each power
# x^e is the integer polynomial num(x)^e den(x)^(k - e), the sums are sums of integer
# polynomials, and D is known factored (from the small denominators), so each delta is
# reduced by trial division only.  The values are the same elements of Q(z).

_Mono = tuple[int, int]  # c z^s
_Poly = flint.fmpz_poly | _Mono


def _as_mono(p: flint.fmpz_poly) -> _Poly:
    """``(c, s)`` when ``p = c z^s`` (multiplied by a shift), else ``p``."""
    d = p.degree()
    if d >= 0 and p.truncate(d).is_zero():
        return int(p[d]), d
    return p


def _times(p: flint.fmpz_poly, m: _Poly, c: int = 1) -> flint.fmpz_poly:
    """``c p m`` (a monomial ``m`` by a scalar product and a shift)."""
    if isinstance(m, tuple):
        return (p * (c * m[0])).left_shift(m[1])
    return p * m * c if c != 1 else p * m


def _prod(a: _Poly, b: _Poly) -> _Poly:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return a[0] * b[0], a[1] + b[1]
    if isinstance(a, tuple):
        return _times(b, a)  # type: ignore[arg-type]
    return _times(a, b)


class _OverCommon:
    """Powers of elements of Q(z) as integer numerators over one denominator ``D``.

    :meth:`pair` gives ``x^i y^(k-i)``, ``0 <= i <= k``, over the least common multiple of
    their denominators (the shared factors of ``den(x)`` and ``den(y)`` counted once);
    :meth:`single` gives ``x^e``, ``0 <= e <= k``, over ``den(x)^k``.  ``D`` is the product
    of these, known factored; :meth:`delta` turns sums of numerators over ``D`` back into
    elements of Q(z) whose denominators are reduced by trial division only.
    """

    def __init__(self, dom: ExpDomain, k: int) -> None:
        self.dom, self.k = dom, k
        self._tables: list[list[_Poly]] = []
        self.const, self.zpow = 1, 0
        self._factors: dict[tuple[int, ...], list] = {}
        self._cache: dict = {}
        self._den: flint.fmpz_poly | None = None

    @staticmethod
    def _parts(den: flint.fmpz_poly) -> tuple[int, dict[tuple[int, ...], list]]:
        """``(c, {key: [f, e]})`` with ``den = c prod f^e``, each ``f`` of positive lead."""
        c, parts = den.factor()
        c = int(c)
        out: dict[tuple[int, ...], list] = {}
        for f, e in parts:
            if f.leading_coefficient() < 0:
                f, c = -f, c * (-1) ** e
            out[tuple(int(v) for v in f.coeffs())] = [f, e]
        return c, out

    def _take(self, c: int, parts: dict[tuple[int, ...], list]) -> None:
        """Multiply ``D`` by ``c prod f^e``."""
        self.const *= c
        for key, (f, e) in parts.items():
            if key == (0, 1):
                self.zpow += e
            elif key in self._factors:
                self._factors[key][1] += e
            else:
                self._factors[key] = [f, e]
        self._den = None

    def pair(self, x: QzElem, y: QzElem) -> list[_Poly]:
        """Numerators of ``x^i y^(k-i)``, ``i = 0..k``, over their least common denominator."""
        k = self.k
        (nx, dx), (ny, dy) = x.canonical, y.canonical
        cx, fx = self._parts(dx)
        cy, fy = self._parts(dy)
        big_c = 1
        for i in range(k + 1):
            big_c = math.lcm(big_c, abs(cx**i * cy ** (k - i)))
        keys = set(fx) | set(fy)
        top = {key: k * max(fx.get(key, [0, 0])[1], fy.get(key, [0, 0])[1]) for key in keys}
        poly = {key: (fx.get(key) or fy.get(key))[0] for key in keys}
        table: list[_Poly] = []
        for i in range(k + 1):
            num = nx**i * ny ** (k - i) * (big_c // (cx**i * cy ** (k - i)))
            for key in keys:
                e = top[key] - i * fx.get(key, [0, 0])[1] - (k - i) * fy.get(key, [0, 0])[1]
                if e:
                    num = num.left_shift(e) if key == (0, 1) else num * poly[key] ** e
            table.append(_as_mono(num))
        self._take(big_c, {key: [poly[key], top[key]] for key in keys if top[key]})
        self._tables.append(table)
        return table

    def single(self, x: QzElem) -> list[_Poly]:
        """Numerators of ``x^e``, ``e = 0..k``, over ``den(x)^k``."""
        k = self.k
        num, den = x.canonical
        nump, denp = [flint.fmpz_poly([1])], [flint.fmpz_poly([1])]
        for _ in range(k):
            nump.append(nump[-1] * num)
            denp.append(denp[-1] * den)
        c, parts = self._parts(den)
        self._take(c**k, {key: [f, e * k] for key, (f, e) in parts.items()})
        table = [_as_mono(nump[e] * denp[k - e]) for e in range(k + 1)]
        self._tables.append(table)
        return table

    @property
    def factors(self) -> list[tuple[flint.fmpz_poly, int]]:
        """The factors of ``D`` other than ``z``: ``[(f, e), ...]``."""
        return [(f, e) for f, e in self._factors.values()]

    @property
    def den(self) -> flint.fmpz_poly:
        """``D`` expanded."""
        if self._den is None:
            prod = flint.fmpz_poly([1])
            for f, e in self.factors:
                prod = prod * f**e
            self._den = (prod * self.const).left_shift(self.zpow)
        return self._den

    def delta(self, loss: Loss, s0: flint.fmpz_poly, s1: flint.fmpz_poly, keep: QzElem) -> QzElem:
        """``(1 - keep) + keep (S0 - e^loss S1)`` for sums ``S0 = s0 / D``, ``S1 = s1 / D``."""
        c, n = self.dom.exp_loss(loss).monomial_parts()  # e^loss = c z^n
        kq = keep.as_rational()
        assert c is not None and kq is not None
        const, zpow = self.const * c.denominator, self.zpow
        if n >= 0:
            num = s0 * c.denominator - s1.left_shift(n) * c.numerator
            den = self.den * c.denominator
        else:
            num = s0.left_shift(-n) * c.denominator - s1 * c.numerator
            den = (self.den * c.denominator).left_shift(-n)
            zpow -= n
        num = den * (kq.denominator - kq.numerator) + num * kq.numerator
        return QzElem.with_known_denominator(
            num,
            None,
            (const * kq.denominator, zpow, self.factors),
            self._cache,
            field=self.dom.g0,
        )


# ---------------------------------------------------------------------------------------
# Section 4: Kairouz-Oh-Viswanath
# ---------------------------------------------------------------------------------------


def kov_composition(eps: object, delta: object, k: int) -> Region:
    """Exact k-fold composition of one (eps, delta) constraint (KOV's closed form).

    ``eps_i = (k - 2i) eps`` and ``delta_i = 1 - (1-delta)^k (1 - sum_{l<i} C(k,l)
    (e^{(k-l)eps} - e^{(k-2i+l)eps}) / (1+e^eps)^k)`` for ``i = 0..floor(k/2)``.

    >>> r = kov_composition("log(2)", "0", 2)
    >>> [(r.domain.loss_str(l), r.domain.elem_str(d)) for l, d in r.constraints]
    [('0', '1/3'), ('2*log(2)', '0')]
    """
    k = check_k(k)
    (eps_e,), (d,) = validate_pairs([(eps, delta)])
    dom = domain_for([eps_e])
    return _kov(dom, dom.loss_of(eps_e), QzElem.from_rational(d), k)


def _kov(dom: ExpDomain, l1: Loss, delta: QzElem, k: int) -> Region:
    """KOV's closed form in a given domain (``delta`` may be any element of Q(z))."""
    z = dom.exp_loss(l1)
    keep = (1 - delta) ** k
    norm = (1 + z) ** k
    cons = []
    for i in range(k // 2 + 1):
        s = sum((comb(k, j) * (z ** (k - j) - z ** (k - 2 * i + j)) for j in range(i)), _ZERO)
        delta_i = 1 - keep * (1 - s / norm)
        cons.append((tuple((k - 2 * i) * n for n in l1), delta_i))
    return Region.from_constraints(dom, cons, warn=False)  # eps = 0: all i merge


# ---------------------------------------------------------------------------------------
# Section 5: Theorem 1 / Algorithm 1
# ---------------------------------------------------------------------------------------


def _theorem1(dom: ExpDomain, l1: Loss, x: int, l2: Loss, y: int) -> Region:
    """Algorithm 1 in a given domain (losses ``l1``, ``l2`` may be equal or zero)."""
    z1, z2 = dom.exp_loss(l1), dom.exp_loss(l2)
    p0: dict[Loss, QzElem] = {}
    p1: dict[Loss, QzElem] = {}
    for a in range(x + 1):
        for b in range(y + 1):
            loss = tuple((2 * a - x) * u + (2 * b - y) * v for u, v in zip(l1, l2))
            w = comb(x, a) * comb(y, b)
            m0 = w * z1**a * z2**b
            m1 = w * z1 ** (x - a) * z2 ** (y - b)
            p0[loss] = p0[loss] + m0 if loss in p0 else m0
            p1[loss] = p1[loss] + m1 if loss in p1 else m1
    norm = (1 + z1) ** x * (1 + z2) ** y
    top = [loss for loss in reversed(dom.sort_losses(p0)) if dom.loss_sign(loss) >= 0]
    cons = suffix_deltas(
        top,
        (p0[loss] for loss in top),
        (p1[loss] for loss in top),
        zero=QzElem.from_rational(0),
        combine=lambda loss, s0, s1: (s0 - dom.exp_loss(loss) * s1) / norm,
    )
    return Region(dom, tuple(reversed(cons)))


def theorem1_closed_form(eps1: object, x: int, eps2: object, y: int) -> Region:
    """Theorem 1: exact region of x eps1-DP and y eps2-DP mechanisms (Algorithm 1).

    ``delta_{ab} = sum_{l_{a'b'} > l_{ab}} C(x,a') C(y,b') (e^{a' eps1 + b' eps2} -
    e^{l_{ab}} e^{(x-a') eps1 + (y-b') eps2}) / ((1+e^eps1)^x (1+e^eps2)^y)`` for every
    ``l_{ab} = (2a - x) eps1 + (2b - y) eps2 >= 0``.
    """
    for name, n in (("x", x), ("y", y)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InvalidParameterError(f"{name} = {n!r} must be a non-negative integer")
    if x + y == 0:
        raise InvalidParameterError("x + y must be >= 1")
    (e1, e2), _ = validate_pairs([(eps1, "0"), (eps2, "0")])
    dom = domain_for([e1, e2])
    return _theorem1(dom, dom.loss_of(e1), x, dom.loss_of(e2), y)


def heterogeneous_composition(
    mechs: Sequence[tuple[object, int]],
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    digits: int = 30,
) -> Region | CertifiedRegion:
    """Compose ``count`` copies of each pure ``eps``-DP mechanism (any number of kinds).

    Args:
        mechs: ``[(eps, count), ...]``; equal epsilons are merged first.
        memory_limit: see :func:`~dpcompose_exact.engines.genfunc.compose_plds`.  When the exact
            result would not fit (or would need polynomials of too high a degree, e.g. a
            tiny epsilon next to a large one), the certified route answers instead
            (a :class:`~dpcompose_exact.engines.certified.CertifiedRegion`).
        digits: significant digits the certified route guarantees.
    """
    if not mechs:
        raise InvalidParameterError("need at least one (eps, count) mechanism")
    counts: dict[Region, int] = {}
    for eps, count in mechs:
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InvalidParameterError(f"count = {count!r} must be a non-negative integer")
        region = dp_region([(eps, "0")])
        counts[region] = counts.get(region, 0) + count
    kinds = [(canonical_pair(r), c) for r, c in counts.items() if c]
    if not kinds:
        raise InvalidParameterError("nothing to compose: every count is 0")
    refusal = exact_refusal(kinds, memory_limit)
    if refusal is not None:
        try:
            return compose_certified(kinds, digits=digits)
        except InvalidParameterError:
            raise ResourceLimitError(refusal) from None
    return compose_plds(kinds, memory_limit=None)


# ---------------------------------------------------------------------------------------
# Section 6: Theorem 2
# ---------------------------------------------------------------------------------------


def theorem2_mixture(eps: Sequence, delta: Sequence, k: int) -> Region:
    """Theorem 2: ``R_k = dt R(0,1) + (1-dt) sum_i C(k,i)(1-alpha)^i alpha^(k-i) C_{i,k-i}``.

    The weighted Minkowski sum of revealed mixtures is the region of the mixture of their
    pairs: its ``delta(eps)`` is the weighted sum of the parts' (docs/theory.md, section
    2).  So the heterogeneous compositions ``C_{i,k-i}`` of Algorithm 1 (masses
    ``C(i,a) C(k-i,b) e^(a eps1 + b eps2) / ((1+e^eps1)^i (1+e^eps2)^(k-i))`` at the loss
    ``(2a-i) eps1 + (2b-k+i) eps2``) are mixed with the weights of Theorem 2 and the deltas
    taken by suffix sums at every loss >= 0, the masses summed over one common
    denominator.
    """
    k = check_k(k)
    m = double_dp(eps, delta)
    dom = m.domain
    keep = (1 - m.delta1) ** k
    z1, z2 = m.z1, m.z2
    # weight / norm of C_{i,k-i}: C(k,i) ((1-alpha)/(1+e^eps1))^i (alpha/(1+e^eps2))^(k-i)
    common = _OverCommon(dom, k)
    weights = common.pair(m.one_minus_alpha / (1 + z1), m.alpha / (1 + z2))
    t1, t2 = common.single(z1), common.single(z2)
    zz = [[_prod(t1[a], t2[b]) for b in range(k + 1)] for a in range(k + 1)]

    def loss_of(xx: int, yy: int) -> Loss:
        return tuple(xx * u + yy * v for u, v in zip(m.l1, m.l2))

    p0: dict[Loss, flint.fmpz_poly] = {}
    p1: dict[Loss, flint.fmpz_poly] = {}
    for i in range(k + 1):  # C_{i,k-i}: i uses of eps1-RR, k - i of eps2-RR
        weight = weights[i]
        if isinstance(weight, tuple):
            weight = flint.fmpz_poly([weight[0]]).left_shift(weight[1])
        weight = weight * comb(k, i)
        for a in range(i + 1):
            wa = weight * comb(i, a)
            for b in range(k - i + 1):
                w = comb(k - i, b)
                loss = loss_of(2 * a - i, 2 * b - (k - i))
                m0 = _times(wa, zz[a][b], w)
                m1 = _times(wa, zz[i - a][k - i - b], w)
                p0[loss] = p0[loss] + m0 if loss in p0 else m0
                p1[loss] = p1[loss] + m1 if loss in p1 else m1
    top = [loss for loss in reversed(dom.sort_losses(p0)) if dom.loss_sign(loss) >= 0]
    cons = suffix_deltas(
        top,
        (p0[loss] for loss in top),
        (p1[loss] for loss in top),
        zero=flint.fmpz_poly([]),
        combine=lambda loss, s0, s1: common.delta(loss, s0, s1, keep),
    )
    return Region.from_constraints(dom, cons, warn=False)


# ---------------------------------------------------------------------------------------
# Section 7: Theorem 3
# ---------------------------------------------------------------------------------------


def theorem3_lattice(eps: Sequence, delta: Sequence, k: int) -> Region:
    """Theorem 3: the intersection over the (u, v) lattice of ``R(eps_uv, delta_uv)``.

    ``eps_uv = eps1 (u + v - k) + eps2 (u - v)`` for ``u, v in [0, k]`` with ``eps_uv >= 0``
    (the paper's ``u >= ceil((k eps1 - v (eps1 - eps2)) / (eps1 + eps2))``, decided exactly),
    ``delta_uv = sum_{a+b+c+d=k, eps1(a-d)+eps2(b-c) > eps_uv} k!/(a!b!c!d!)
    ((1-alpha)/(1+e^eps1))^(a+d) (alpha/(1+e^eps2))^(b+c) (e^(a eps1 + b eps2) -
    e^eps_uv e^(d eps1 + c eps2))``, then ``delta = dt + (1 - dt) delta_uv``.
    """
    k = check_k(k)
    m = double_dp(eps, delta)
    dom = m.domain
    z1, z2 = m.z1, m.z2
    p = m.one_minus_alpha / (1 + z1)
    q = m.alpha / (1 + z2)
    # p^i q^j z1^a z2^b as integer polynomials over one denominator (sums without gcds)
    common = _OverCommon(dom, k)
    pq = [  # p^(a+d) q^(b+c) with a + d = i
        flint.fmpz_poly([t[0]]).left_shift(t[1]) if isinstance(t, tuple) else t
        for t in common.pair(p, q)
    ]
    z1pow, z2pow = common.single(z1), common.single(z2)
    zz = [[_prod(z1pow[a], z2pow[b]) for b in range(k + 1)] for a in range(k + 1)]

    def loss_of(xx: int, yy: int) -> Loss:
        return tuple(xx * u + yy * v for u, v in zip(m.l1, m.l2))

    p0: dict[Loss, flint.fmpz_poly] = {}
    p1: dict[Loss, flint.fmpz_poly] = {}
    for a in range(k + 1):
        for b in range(k + 1 - a):
            for c in range(k + 1 - a - b):
                d = k - a - b - c
                w = factorial(k) // (factorial(a) * factorial(b) * factorial(c) * factorial(d))
                base = pq[a + d]
                loss = loss_of(a - d, b - c)
                m0, m1 = _times(base, zz[a][b], w), _times(base, zz[d][c], w)
                p0[loss] = p0[loss] + m0 if loss in p0 else m0
                p1[loss] = p1[loss] + m1 if loss in p1 else m1
    wanted: dict[Loss, None] = {}  # the lattice losses eps_uv >= 0, in (u, v) order
    for u in range(k + 1):
        for v in range(k + 1):
            e_uv = loss_of(u + v - k, u - v)
            if dom.loss_sign(e_uv) >= 0:
                wanted[e_uv] = None
    top = [loss for loss in reversed(dom.sort_losses(p0)) if dom.loss_sign(loss) >= 0]
    keep = (1 - m.delta1) ** k
    # delta = dt + (1 - dt) delta_uv from the sums over losses strictly above eps_uv, at
    # the wanted losses only
    cons = dict(
        suffix_deltas(
            top,
            (p0[loss] for loss in top),
            (p1[loss] for loss in top),
            zero=flint.fmpz_poly([]),
            combine=lambda loss, s0, s1: (
                common.delta(loss, s0, s1, keep) if loss in wanted else None
            ),
        )
    )
    return Region.from_constraints(dom, [(e, cons[e]) for e in wanted], warn=False)


# ---------------------------------------------------------------------------------------
# Section 3: any constraint list by generating functions
# ---------------------------------------------------------------------------------------


def pld_composition(
    pairs: Sequence[tuple[object, object]],
    k: int,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
) -> Region:
    """k-fold composition of a mechanism satisfying every given constraint (any number).

    The dominating pair of the intersection region (leak plus randomized responses) is
    composed by one polynomial power (docs/theory.md, section 3).
    """
    k = check_k(k)
    region = dp_region(pairs)
    return compose_plds([(canonical_pair(region), k)], memory_limit=memory_limit)


# ---------------------------------------------------------------------------------------
# Section 8: baselines
# ---------------------------------------------------------------------------------------


def remark1_bound(eps: Sequence, delta: Sequence, k: int) -> Region:
    """Remark 1: ``R_k(eps1, delta1)`` intersected with ``R_k(eps2, delta2)`` (two KOVs)."""
    k = check_k(k)
    m = double_dp(eps, delta)
    return _kov(m.domain, m.l1, m.delta1, k).intersect(_kov(m.domain, m.l2, m.delta2, k))


def remark2_bound(eps: Sequence, delta: Sequence, k: int) -> Region:
    """Remark 2 (Ghazi-Issa): ``R_k((eps1, 0), (delta1, eta))`` intersect ``R_k(eps2, delta2)``.

    ``eta = delta2 + (1 - delta2)(e^eps2 - 1)/(e^eps2 + 1)`` is the total-variation level
    implied by the eps2 constraint; the first factor is a double-DP composition with
    ``eps2 = 0``, computed by the generating-function route.
    """
    k = check_k(k)
    m = double_dp(eps, delta)
    dom = m.domain
    z2 = m.z2
    eta = m.delta2 + (1 - m.delta2) * (z2 - 1) / (z2 + 1)
    tv = Region.from_constraints(dom, [(m.l1, m.delta1), (dom.zero_loss(), eta)], warn=False)
    first = compose_plds([(canonical_pair(tv), k)])
    kov = _kov(dom, m.l2, m.delta2, k)
    return first.intersect(kov)


# ---------------------------------------------------------------------------------------
# Section 10: the conjectured mixture form for n constraints and lists of kinds
# ---------------------------------------------------------------------------------------
#
# mixture_form computes a composition of kinds the way the paper conjectures for n
# constraints: the leak plus a multinomially weighted Minkowski sum of heterogeneous
# compositions of randomized responses.  It enumerates C(k + m - 1, m - 1) allocations per
# kind with m randomized responses and is meant for checking small cases; it agrees
# exactly with the generating-function route (tested; proof in docs/proofs/conjecture.md).


def _rr_weights(pld: PLD) -> dict[Loss, QzElem]:
    """Weight of each |l|-randomized response in a symmetric dominating pair."""
    dom = pld.domain
    out: dict[Loss, QzElem] = {}
    for loss, m in pld.masses:
        key = loss if dom.loss_sign(loss) >= 0 else tuple(-n for n in loss)
        out[key] = out[key] + m if key in out else m
    return out


def _allocations(n: int, parts: int):
    if parts == 1:
        yield (n,)
        return
    for first in range(n + 1):
        for rest in _allocations(n - first, parts - 1):
            yield (first, *rest)


def mixture_form(kinds: Sequence[MechanismKind]) -> Region:
    """The conjectured form: ``dt R(0,1) + sum over allocations of weight * C_allocation``.

    Each kind's dominating pair is a leak plus randomized responses with weights ``w_r``;
    the product of mixtures is the mixture of products, so the composition is the leak
    ``dt = 1 - prod_j (1 - d_j)^{k_j}`` plus, for every allocation ``n_{j,r}`` of the
    ``k_j`` uses among the responses, weight ``prod_j k_j! prod_r w_{j,r}^{n_{j,r}} /
    n_{j,r}!`` times the heterogeneous composition of those responses.
    """
    plds = common_domain([(canonical_pair(k.region()), k.count) for k in kinds if k.count])
    dom = plds[0][0].domain
    per_kind = []
    keep = QzElem.from_rational(1)
    for pld, count in plds:
        rr = sorted(_rr_weights(pld).items(), key=lambda kv: dom.loss_key(kv[0]))
        options = []
        for alloc in _allocations(count, len(rr)):
            w = QzElem.from_rational(Fraction(factorial(count)))
            for (_, wr), n in zip(rr, alloc):
                w = w * wr**n / factorial(n)
            options.append((w, [(loss, n) for (loss, _), n in zip(rr, alloc) if n]))
        per_kind.append(options)
        keep = keep * (1 - pld.leak) ** count
    weights: list[QzElem] = [1 - keep]
    regions: list[Region] = [trivial_region(dom)]
    rr_pairs: dict[Loss, PLD] = {}

    def rr_pld(loss: Loss) -> PLD:
        if loss not in rr_pairs:
            e = dom.exp_loss(loss)
            one = QzElem.from_rational(1)
            if dom.loss_sign(loss) == 0:
                rr_pairs[loss] = PLD.from_masses(dom, [(loss, one)], QzElem.from_rational(0))
            else:
                neg = tuple(-n for n in loss)
                rr_pairs[loss] = PLD.from_masses(
                    dom, [(loss, e / (1 + e)), (neg, one / (1 + e))], QzElem.from_rational(0)
                )
        return rr_pairs[loss]

    def walk(j: int, w: QzElem, uses: list[tuple[Loss, int]]) -> None:
        if j == len(per_kind):
            counts: dict[Loss, int] = {}
            for loss, n in uses:
                counts[loss] = counts.get(loss, 0) + n
            weights.append(w)
            regions.append(
                compose_plds([(rr_pld(loss), n) for loss, n in counts.items()], memory_limit=None)
            )
            return
        for wk, alloc in per_kind[j]:
            walk(j + 1, w * wk, uses + alloc)

    walk(0, QzElem.from_rational(1), [])
    return mixture_minkowski(weights, regions)
