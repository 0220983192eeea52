"""Trade-off functions and privacy regions with exact vertices (docs/theory.md, sections 1 and 2).

A symmetric piecewise-affine trade-off function ``f`` is stored canonically as its
irredundant list of DP constraints ``(eps_j, delta_j)``, sorted by increasing eps: exactly
the lines ``1 - delta_j - e^{eps_j} t`` that carry an edge of positive length of the graph
of ``f`` on ``[0, c]`` (``c`` the fixed point).  ``f = max_j f_{eps_j, delta_j}``, and the
privacy region is the intersection of the ``R(eps_j, delta_j)``.

Mixtures of tests (Lemma 1, Corollary 1) are weighted Minkowski sums of regions; they
are computed two independent ways that must agree exactly: the Minkowski merge of edges
sorted by slope, and Appendix H's convex conjugates ``f_m = (sum a_i f_i*)*``.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from ..errors import InactiveConstraintWarning, InvalidParameterError
from ..numbers import ExpDomain, Loss, QzElem, domain_for, parse_exact, parse_rational
from ..numbers.convert import parse_delta

__all__ = [
    "Region",
    "dp_region",
    "exact_region",
    "trivial_region",
    "mixture_minkowski",
    "mixture_conjugate",
    "Vertex",
]

Vertex = tuple[QzElem, QzElem]
_ONE = QzElem.from_rational(1)
_ZERO = QzElem.from_rational(0)

# Edge keys order slopes: ("+inf",) is the vertical drop at t = 0, a loss l is the slope
# -e^l, ("-inf",) is the horizontal tail where f = 0.
_TOP = ("+inf",)
_BOTTOM = ("-inf",)


@dataclass(frozen=True, eq=False)
class Region:
    """A symmetric privacy region given by its irredundant (eps, delta) list.

    Attributes:
        domain: the exact domain of the epsilons and of Q(z).
        constraints: ``((loss, delta), ...)`` sorted by increasing loss (eps >= 0), one
            entry per edge of the boundary on ``[0, c]``.

    Equal regions compare equal and hash equal, whatever domain they were built in.
    """

    domain: ExpDomain
    constraints: tuple[tuple[Loss, QzElem], ...]

    def __post_init__(self) -> None:
        """Canonicalise or refuse: constraints sorted by eps, one per eps, eps >= 0.

        ``Region(r.domain, tuple(reversed(r.constraints)))`` therefore equals ``r``.
        Redundancy is not re-checked here (that needs the hull); use
        :meth:`from_constraints` for arbitrary lists.
        """
        cons = tuple((tuple(loss), QzElem.coerce(d)) for loss, d in self.constraints)
        if not cons:
            raise InvalidParameterError("a region needs at least one (eps, delta) constraint")
        dom = self.domain
        for loss, _ in cons:
            if len(loss) != dom.dim:
                raise InvalidParameterError(
                    f"loss vector {loss} does not belong to the domain (length {dom.dim})"
                )
        ordered = all(dom.compare_loss(a[0], b[0]) < 0 for a, b in zip(cons, cons[1:]))
        if not ordered:
            cons = tuple(sorted(cons, key=lambda c: dom.loss_key(c[0])))
            for a, b in zip(cons, cons[1:]):
                if a[0] == b[0]:
                    raise InvalidParameterError(
                        f"two constraints with eps = {dom.loss_str(a[0])}; use "
                        "Region.from_constraints to intersect them"
                    )
        if dom.loss_sign(cons[0][0]) < 0:
            raise InvalidParameterError(f"eps = {dom.loss_str(cons[0][0])} must be >= 0")
        object.__setattr__(self, "constraints", cons)

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def from_constraints(
        cls,
        domain: ExpDomain,
        constraints: Iterable[tuple[Loss, QzElem]],
        warn: bool = True,
    ) -> Region:
        """Intersect ``R(eps_i, delta_i)`` and keep the active constraints.

        Inactive constraints (those that never carry an edge of the boundary) are
        dropped with an :class:`InactiveConstraintWarning` naming them.
        """
        given = [(loss, QzElem.coerce(d)) for loss, d in constraints]
        if not given:
            raise InvalidParameterError("a region needs at least one (eps, delta) constraint")
        for loss, d in given:
            if domain.loss_sign(loss) < 0:
                raise InvalidParameterError(f"eps = {domain.loss_str(loss)} must be >= 0")
            if domain.sign(d) < 0 or domain.compare(d, _ONE) > 0:
                raise InvalidParameterError(f"delta = {domain.decimal(d, 10)} must lie in [0, 1]")
        kept = _active_constraints(domain, given)
        if not kept:  # every delta is 1: f = 0, the trivial region R(0, 1)
            kept = [(domain.zero_loss(), _ONE)]
        if warn:
            dropped = []
            for loss, d in given:
                if not any(loss == kl and d == kd for kl, kd in kept):
                    dropped.append(f"({domain.loss_str(loss)}, {domain.elem_str(d)})")
            dropped = sorted(set(dropped))
            if dropped:
                warnings.warn(
                    InactiveConstraintWarning(
                        "inactive constraint(s) dropped (implied by the others): "
                        + ", ".join(dropped)
                    ),
                    stacklevel=2,
                )
        return cls(domain, tuple(sorted(kept, key=lambda c: domain.loss_key(c[0]))))

    @classmethod
    def from_vertices(cls, domain: ExpDomain, vertices: Sequence[Vertex]) -> Region:
        """The symmetric region whose lower boundary passes through ``vertices``.

        ``vertices`` run from ``(0, f(0))`` to ``(1, 0)``; collinear points are allowed.
        """
        out: list[tuple[Loss, QzElem]] = []
        for (x0, y0), (x1, y1) in zip(vertices, vertices[1:]):
            dx = x1 - x0
            if domain.sign(dx) == 0:
                continue
            slope = (y0 - y1) / dx  # = e^l for an edge of slope -e^l
            loss = _loss_of_slope(domain, slope)
            if loss is None or domain.loss_sign(loss) < 0:
                continue
            delta = 1 - y0 - domain.exp_loss(loss) * x0
            if out and out[-1][0] == loss:
                continue
            out.append((loss, delta))
        if not out:  # f == 0: the trivial region R(0, 1)
            out = [(domain.zero_loss(), _ONE)]
        return cls(domain, tuple(sorted(out, key=lambda c: domain.loss_key(c[0]))))

    # -- canonical form, equality ---------------------------------------------------------
    def _key(self) -> tuple:
        """Domain-independent canonical key: (loss forms, reduced deltas in minimal z)."""
        dom = self.domain
        gcd_exp = 0
        for _, d in self.constraints:
            num, den = d.canonical
            for p in (num, den):
                for i, c in enumerate(p.coeffs()):
                    if c:
                        gcd_exp = math.gcd(gcd_exp, i)
        forms = tuple(dom.form(loss) for loss, _ in self.constraints)
        deltas = []
        for _, d in self.constraints:
            num, den = d.canonical
            if gcd_exp > 1:
                num, den = num.deflate(gcd_exp), den.deflate(gcd_exp)
            step = (dom.g0 * gcd_exp) if (dom.g0 is not None and gcd_exp) else None
            deltas.append(
                (step, tuple(int(c) for c in num.coeffs()), tuple(int(c) for c in den.coeffs()))
            )
        return forms, tuple(deltas)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Region):
            return NotImplemented
        if len(self.constraints) != len(other.constraints):
            return False
        a, b = unify(self, other)
        return all(
            la == lb and da == db for (la, da), (lb, db) in zip(a.constraints, b.constraints)
        )

    def __hash__(self) -> int:
        forms, deltas = self._key()
        # the z-step in deltas depends on g0; hash only what is domain independent
        return hash((forms, tuple((n, d) for _, n, d in deltas)))

    def in_domain(self, domain: ExpDomain) -> Region:
        """The same region re-expressed in a finer domain."""
        if domain == self.domain:
            return self
        return Region(
            domain,
            tuple(
                (self.domain.convert_loss(loss, domain), self.domain.convert_elem(d, domain))
                for loss, d in self.constraints
            ),
        )

    # -- queries --------------------------------------------------------------------------
    @property
    def losses(self) -> tuple[Loss, ...]:
        """The epsilons (as loss vectors), increasing."""
        return tuple(loss for loss, _ in self.constraints)

    @property
    def deltas(self) -> tuple[QzElem, ...]:
        """The deltas, aligned with :attr:`losses` (decreasing)."""
        return tuple(d for _, d in self.constraints)

    def half_vertices(self) -> list[Vertex]:
        """Vertices of the boundary on ``[0, c]``, from ``(0, f(0))`` to ``(c, c)``."""
        dom = self.domain
        cons = list(reversed(self.constraints))  # steepest first
        verts: list[Vertex] = [(_ZERO, 1 - cons[0][1])]
        for (la, da), (lb, db) in zip(cons, cons[1:]):
            x = (db - da) / (dom.exp_loss(la) - dom.exp_loss(lb))
            verts.append((x, 1 - da - dom.exp_loss(la) * x))
        ll, dl = cons[-1]
        c = (1 - dl) / (1 + dom.exp_loss(ll))
        if dom.loss_sign(ll) > 0:
            verts.append((c, c))
        return verts

    def fixed_point(self) -> QzElem:
        """``c`` with ``f(c) = c``."""
        ll, dl = self.constraints[0]
        return (1 - dl) / (1 + self.domain.exp_loss(ll))

    def vertices(self) -> list[Vertex]:
        """All vertices of ``f`` on ``[0, 1]``, from ``(0, f(0))`` to ``(1, 0)``."""
        half = self.half_vertices()
        if self.domain.loss_sign(self.constraints[0][0]) == 0:
            mirrored = [(y, x) for x, y in reversed(half)]
        else:
            mirrored = [(y, x) for x, y in reversed(half[:-1])]
        verts = half + mirrored
        if self.domain.sign(verts[-1][0] - 1) != 0:
            verts.append((_ONE, _ZERO))
        return verts

    def edges(self) -> list[tuple[tuple, QzElem, QzElem]]:
        """Edges ``(key, dx, dy)`` of the closed chain from (0, 1) down to (1, 0).

        The key orders slopes: ``("+inf",)`` for the vertical drop, a loss ``l`` for
        slope ``-e^l`` (negative losses for the mirrored half), ``("-inf",)`` for f = 0.
        """
        dom = self.domain
        verts = self.vertices()
        out: list[tuple[tuple, QzElem, QzElem]] = []
        drop = 1 - verts[0][1]
        if dom.sign(drop) != 0:
            out.append((_TOP, _ZERO, -drop))
        for (x0, y0), (x1, y1) in zip(verts, verts[1:]):
            dx, dy = x1 - x0, y1 - y0
            if dom.sign(dy) == 0:
                out.append((_BOTTOM, dx, dy))
                continue
            loss = _loss_of_slope(dom, -dy / dx)
            if loss is None:
                raise AssertionError("edge slope is not of the form -e^eps")
            out.append((loss, dx, dy))
        return out

    def __call__(self, t: QzElem | Fraction | int) -> QzElem:
        """Evaluate ``f(t)`` exactly for ``t`` in ``[0, 1]``."""
        t = QzElem.coerce(t)
        dom = self.domain
        if dom.sign(t) < 0 or dom.compare(t, _ONE) > 0:
            raise InvalidParameterError("t must lie in [0, 1]")
        best = _ZERO
        for loss, d in self.constraints:
            e = dom.exp_loss(loss)
            for val in (1 - d - e * t, (1 - d - t) / e):
                if dom.compare(val, best) > 0:
                    best = val
        return best

    def segment(self, i: int) -> tuple[QzElem, QzElem]:
        """``(a, b)`` with ``delta(eps) = a - e^eps b`` for ``l_i <= eps <= l_{i+1}``.

        Between consecutive epsilons ``l_i < l_{i+1}`` of the list, ``delta`` is affine in
        ``e^eps`` (no edge slope lies strictly between), so it interpolates the two listed
        deltas; above the largest (``i = n - 1``) it is the leak (``b = 0``); below the
        smallest (``i = -1``, when 0 is not listed) the maximum of ``1 - f(t) - e^eps t``
        is at the vertex ``(c, c)``: ``a = 1 - c``, ``b = c``.  ``a`` and ``b`` lie in the
        region's own field, whatever field ``eps`` comes from.
        """
        n = len(self.constraints)
        if i == n - 1:
            return self.constraints[-1][1], _ZERO
        if i < 0:
            c = self.fixed_point()
            return 1 - c, c
        (la, da), (lb, db) = self.constraints[i], self.constraints[i + 1]
        ea, eb = self.domain.exp_loss(la), self.domain.exp_loss(lb)
        b = (da - db) / (eb - ea)
        return db + eb * b, b

    def delta_at(self, loss: Loss) -> QzElem:
        """The smallest delta with this region inside ``R(eps, delta)`` (hockey stick).

        ``loss`` is an epsilon of this region's domain;
        :func:`dpcompose_exact.engines.results.delta_value`
        takes any exact epsilon (it uses the same :meth:`segment`).
        """
        dom = self.domain
        i = dom.bisect_losses(self.losses, loss)
        if i >= 0 and self.constraints[i][0] == loss:
            return self.constraints[i][1]
        a, b = self.segment(i)
        return a if b.is_zero() else a - dom.exp_loss(loss) * b

    def __le__(self, other: Region) -> bool:
        """Inclusion of regions: ``self`` is inside ``other`` (self is at least as private)."""
        a, b = unify(self, other)
        return all(a.domain.compare(a.delta_at(loss), d) <= 0 for loss, d in b.constraints)

    def __ge__(self, other: Region) -> bool:
        return other <= self

    def intersect(self, other: Region) -> Region:
        """The intersection of two regions (constraints of both, inactive ones dropped)."""
        a, b = unify(self, other)
        return Region.from_constraints(a.domain, a.constraints + b.constraints, warn=False)


def unify(a: Region, b: Region) -> tuple[Region, Region]:
    """Express two regions in a common domain."""
    if a.domain == b.domain:
        return a, b
    dom = a.domain.join(b.domain)
    return a.in_domain(dom), b.in_domain(dom)


def _loss_of_slope(domain: ExpDomain, e: QzElem) -> Loss | None:
    """The loss l with ``e^l = e`` when ``e`` is a monomial ``c z^n`` in the domain."""
    parts = e.monomial_parts()
    if parts is None or parts[0] <= 0:
        return None
    c, n0 = parts
    vec: list[int] = []
    if domain.g0 is not None:
        vec.append(n0)
    elif n0 != 0:
        return None
    for p in domain.primes:
        k = 0
        num_, den_ = c.numerator, c.denominator
        while num_ % p == 0:
            num_ //= p
            k += 1
        while den_ % p == 0:
            den_ //= p
            k -= 1
        c = Fraction(num_, den_)
        vec.append(k)
    if c != 1:
        return None
    return tuple(vec)


def _active_constraints(
    domain: ExpDomain, given: list[tuple[Loss, QzElem]]
) -> list[tuple[Loss, QzElem]]:
    """Upper envelope of the lines ``1 - delta - e^eps t`` on ``[0, c]``."""
    best: dict[Loss, QzElem] = {}
    for loss, d in given:
        if loss not in best or domain.compare(d, best[loss]) < 0:
            best[loss] = d
    lines = sorted(best.items(), key=lambda c: domain.loss_key(c[0]), reverse=True)
    ex = {loss: domain.exp_loss(loss) for loss in best}

    def cross(a: tuple[Loss, QzElem], b: tuple[Loss, QzElem]) -> QzElem:
        # t where the lines of a (steeper) and b meet
        return (b[1] - a[1]) / (ex[a[0]] - ex[b[0]])

    stack: list[tuple[Loss, QzElem]] = []
    for line in lines:
        while (
            len(stack) >= 2
            and domain.compare(cross(stack[-2], line), cross(stack[-2], stack[-1])) <= 0
        ):
            stack.pop()
        if len(stack) == 1 and domain.compare(line[1], stack[0][1]) <= 0:
            stack.pop()  # the flatter line is above at t = 0, so everywhere on t >= 0
        stack.append(line)
    # drop lines whose piece lies at t <= 0
    while len(stack) >= 2 and domain.sign(cross(stack[0], stack[1])) <= 0:
        stack.pop(0)
    # keep lines up to the one that meets the diagonal inside its piece
    kept: list[tuple[Loss, QzElem]] = []
    left = QzElem.from_rational(0)
    for i, (loss, d) in enumerate(stack):
        c_i = (1 - d) / (1 + ex[loss])
        if domain.compare(c_i, left) <= 0:
            break
        kept.append((loss, d))
        if i + 1 < len(stack):
            right = cross(stack[i], stack[i + 1])
            if domain.compare(c_i, right) <= 0:
                break
            left = right
    return kept


# ---------------------------------------------------------------------------------------
# User-facing constructors
# ---------------------------------------------------------------------------------------


def exact_region(obj: object, what: str) -> Region:
    """``obj`` when it is an exact :class:`Region`; else a TypeError naming ``what`` needs one.

    A certified region (balls) or any other object is refused.
    """
    if not isinstance(obj, Region):
        raise TypeError(f"{what} needs an exact Region, got {type(obj).__name__}")
    return obj


def dp_region(pairs: Sequence[tuple[object, object]], warn: bool = True) -> Region:
    """The region of a mechanism satisfying every ``(eps_i, delta_i)``-DP constraint.

    Args:
        pairs: ``[(eps, delta), ...]`` with exact values (strings like ``"0.3"``,
            fractions, sympy expressions); eps >= 0, 0 <= delta < 1.
        warn: warn about inactive constraints.

    >>> r = dp_region([("0.3", "0"), ("0.15", "0.02")])
    >>> [r.domain.loss_str(l) for l in r.losses]
    ['3/20', '3/10']
    """
    eps_exprs, deltas = validate_pairs(pairs)
    domain = domain_for(eps_exprs)
    cons = [(domain.loss_of(e), QzElem.from_rational(d)) for e, d in zip(eps_exprs, deltas)]
    return Region.from_constraints(domain, cons, warn=warn)


def validate_pairs(pairs: Sequence[tuple[object, object]]) -> tuple[list, list[Fraction]]:
    """Parse and range-check ``(eps, delta)`` pairs; returns (exact eps, Fraction deltas)."""
    if not pairs:
        raise InvalidParameterError("need at least one (eps, delta) constraint")
    eps_exprs, deltas = [], []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InvalidParameterError(f"constraint #{i + 1}: expected (eps, delta), got {pair!r}")
        eps = parse_exact(pair[0], "eps")
        if exact_sign(eps) < 0:
            raise InvalidParameterError(f"eps = {pair[0]!r} is negative; valid range: eps >= 0")
        delta = parse_delta(pair[1])
        eps_exprs.append(eps)
        deltas.append(delta)
    return eps_exprs, deltas


def exact_sign(expr) -> int:
    """Certified sign of an exact epsilon (a Fraction or a sympy expression)."""
    if isinstance(expr, Fraction):
        return (expr > 0) - (expr < 0)
    dom = domain_for([expr])
    return dom.loss_sign(dom.loss_of(expr))


def trivial_region(domain: ExpDomain) -> Region:
    """``R(0, 1)``: f = 0, every test allowed (the leak's region)."""
    return Region(domain, ((domain.zero_loss(), _ONE),))


# ---------------------------------------------------------------------------------------
# Mixtures (Lemma 1 / Corollary 1 / Appendix H)
# ---------------------------------------------------------------------------------------


def _check_weights(domain: ExpDomain, weights: Sequence[QzElem]) -> None:
    total = _ZERO
    for w in weights:
        if domain.sign(w) < 0:
            raise InvalidParameterError(f"mixture weight {domain.decimal(w, 10)} is negative")
        total = total + w
    if domain.compare(total, _ONE) != 0:
        raise InvalidParameterError(f"mixture weights sum to {domain.decimal(total, 10)}, not 1")


def _prepare(weights, regions) -> tuple[ExpDomain, list[QzElem], list[Region]]:
    if len(weights) != len(regions) or not regions:
        raise InvalidParameterError("need as many weights as regions, at least one")
    dom = regions[0].domain
    for r in regions[1:]:
        dom = dom.join(r.domain)
    regs = [r.in_domain(dom) for r in regions]
    ws = [
        QzElem.from_rational(parse_rational(w))
        if isinstance(w, (str, Decimal))
        else QzElem.coerce(w)
        for w in weights
    ]
    _check_weights(dom, ws)
    return dom, ws, regs


def _edge_cmp(domain: ExpDomain):
    def cmp(a: tuple, b: tuple) -> int:
        ka, kb = a[0], b[0]
        if ka == kb:
            return 0
        if ka == _TOP or kb == _BOTTOM:
            return -1
        if kb == _TOP or ka == _BOTTOM:
            return 1
        return -domain.compare_loss(ka, kb)  # larger loss = steeper = earlier

    return cmp


def mixture_minkowski(weights: Sequence, regions: Sequence[Region]) -> Region:
    """Weighted Minkowski sum ``sum a_i F_i`` by merging edges in order of slope.

    Start at ``(0, 1)`` (the sum of the top-left corners) and append every edge of every
    region, scaled by its weight, in order of increasing slope (docs/theory.md, section 2).
    """
    dom, ws, regs = _prepare(weights, regions)
    edges = []
    for w, r in zip(ws, regs):
        if w.is_zero():
            continue
        edges.extend((key, w * dx, w * dy) for key, dx, dy in r.edges())
    edges.sort(key=functools.cmp_to_key(_edge_cmp(dom)))
    merged: list[list] = []
    for key, dx, dy in edges:
        if merged and merged[-1][0] == key:
            merged[-1][1] = merged[-1][1] + dx
            merged[-1][2] = merged[-1][2] + dy
        else:
            merged.append([key, dx, dy])
    x, y = _ZERO, _ONE
    verts: list[Vertex] = []
    for _, dx, dy in merged:
        x, y = x + dx, y + dy
        verts.append((x, y))
    if not verts or merged[0][0] != _TOP:
        verts.insert(0, (_ZERO, _ONE))
    return Region.from_vertices(dom, verts)


def mixture_conjugate(weights: Sequence, regions: Sequence[Region]) -> Region:
    """Weighted infimal convolution via convex conjugates (Appendix H, Props. 4 and 5).

    ``f_i*(s) = max_j (t_j s - f_i(t_j))`` over the breakpoints of ``f_i``; ``h = sum a_i
    f_i*`` is piecewise affine with breakpoints at the slopes ``s`` of the ``f_i``; the
    vertices of ``f_m = h*`` are ``(T, T s - h(s))`` where ``T`` is the slope of ``h`` just
    right of the breakpoint ``s``.
    """
    dom, ws, regs = _prepare(weights, regions)
    verts_i = [r.vertices() for r in regs]
    # the slopes of all f_i (finite ones; the vertical drop is s = -inf)
    slope_keys: set = set()
    for r in regs:
        for key, _, _ in r.edges():
            if key != _TOP:
                slope_keys.add(key)

    def slope(key) -> QzElem:
        return _ZERO if key == _BOTTOM else -dom.exp_loss(key)

    ordered = sorted(
        ((k, None, None) for k in slope_keys), key=functools.cmp_to_key(_edge_cmp(dom))
    )
    s_vals = [slope(k) for k, _, _ in ordered]

    def conj(vs: list[Vertex], s: QzElem) -> QzElem:
        best = None
        for t, ft in vs:
            val = t * s - ft
            if best is None or dom.compare(val, best) > 0:
                best = val
        assert best is not None
        return best

    h = [sum((w * conj(vs, s) for w, vs in zip(ws, verts_i)), _ZERO) for s in s_vals]
    f0 = sum((w * vs[0][1] for w, vs in zip(ws, verts_i)), _ZERO)
    verts: list[Vertex] = [(_ZERO, f0)]
    for j in range(len(s_vals) - 1):
        T = (h[j + 1] - h[j]) / (s_vals[j + 1] - s_vals[j])
        verts.append((T, T * s_vals[j] - h[j]))
    verts.append((_ONE, _ZERO))
    return Region.from_vertices(dom, verts)
