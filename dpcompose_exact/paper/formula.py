"""Symbolic formulas: delta(eps) of the k-fold composition for symbolic parameters.

For a mechanism that satisfies ``n`` constraints ``(eps_i, delta_i)`` at once, with symbolic
``eps_1 > ... > eps_n > 0`` and ``delta_1 <= ... <= delta_n`` (every constraint active), the
k-fold composition's hockey-stick divergence ``delta(eps)`` is a closed form on each
*chamber*: a set of parameters on which the composed privacy-loss values ``j . eps``
(``j`` an integer vector) keep one order.  Inside a chamber, between two consecutive
loss values, ``delta(eps) = leak + sum_j (A_j - e^eps B_j)`` over the loss values above
``eps`` (docs/theory.md, "Symbolic formulas per chamber").

The construction is the canonical pair (docs/theory.md, section 1): a leak of mass
``delta_1`` and ``n`` randomized responses of weights ``w_i = (t_i - t_{i-1})(1 + x_i)``
(``x_i = e^{eps_i}``, ``t_0 = 0``, ``t_i = (delta_{i+1} - delta_i)/(x_i - x_{i+1})``,
``t_n = (1 - delta_n)/(1 + x_n)``).  A k-fold outcome draws ``a_i`` "+" and ``b_i`` "-"
letters from response ``i``; its loss is ``(a - b) . eps`` and it contributes
``k!/prod(a_i! b_i!) prod (w_i/(1+x_i))^(a_i+b_i) (x^a - e^eps x^b)`` when its loss
exceeds ``eps``.  The leak contributes ``1 - (1 - delta_1)^k``.

The chambers are found exactly: every tie ``(j - j') . eps = 0`` between two loss
values is a hyperplane; on the slice ``eps_1 = 1`` they are points (n = 2) or lines
(n = 3), and each open cell gets an exact rational sample point that decides the order.
A formula holds on the closure of its chamber too (delta is continuous in eps and in
the parameters: a tie contributes ``P0 (1 - e^(eps - l)) = 0`` at ``eps = l``).

Sizes: n = 2 with k <= 10 and n = 3 with k <= 5 (:data:`LIMITS`); beyond, the chambers
number thousands and the formulas are too long to read, and :func:`formula` refuses.

>>> f = formula(n=2, k=1)
>>> len(f.chambers), [str(l) for _, l in f.chambers[0].losses]
(1, ['epsilon_1', 'epsilon_2'])
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from math import factorial, gcd, lcm
from typing import Any

import sympy

from ..errors import InvalidParameterError
from ..numbers.parsing import parse_rational

__all__ = ["LIMITS", "Chamber", "Formula", "Piece", "formula", "irredundant", "loss_vectors"]

JSON_FORMAT = 2
"""The version of :meth:`Formula.to_dict`: 2 lists each chamber's terms once (``order``)."""

LIMITS: dict[int, int] = {2: 10, 3: 5}
"""Largest k for each number n of constraints."""

Vec = tuple[int, ...]


def loss_vectors(n: int, k: int) -> list[Vec]:
    """Every ``j = a - b`` of a k-fold outcome: ``sum |j_i| <= k`` of the parity of ``k``.

    >>> loss_vectors(1, 3)
    [(-3,), (-1,), (1,), (3,)]
    """
    out = []
    for j in itertools.product(range(-k, k + 1), repeat=n):
        s = sum(abs(v) for v in j)
        if s <= k and (k - s) % 2 == 0:
            out.append(j)
    return out


def _primitive(d: Sequence[int]) -> Vec:
    g = 0
    for v in d:
        g = gcd(g, v)
    out = tuple(v // g for v in d)
    first = next(v for v in out if v)
    return out if first > 0 else tuple(-v for v in out)


def _sample_points(n: int, vectors: Sequence[Vec]) -> list[tuple[Fraction, ...]]:
    """One exact point ``(1, eps_2, ..., eps_n)`` in every open chamber.

    The chambers are the cells of ``1 > eps_2 > ... > eps_n > 0`` cut by the tie planes
    ``(j - j') . eps = 0`` and the sign planes ``j . eps = 0``.
    """
    normals = {
        _primitive(tuple(x - y for x, y in zip(a, b)))
        for a, b in itertools.combinations(sorted(set(vectors) | {(0,) * n}), 2)
    }
    if n == 2:  # points y = -d0/d1 on the segment 0 < y < 1
        cuts = sorted(
            {Fraction(-d[0], d[1]) for d in normals if d[1] != 0} | {Fraction(0), Fraction(1)}
        )
        cuts = [c for c in cuts if 0 <= c <= 1]
        return [(Fraction(1), (a + b) / 2) for a, b in itertools.pairwise(cuts)]
    if n != 3:
        raise InvalidParameterError(f"n = {n}: chambers are enumerated for n = 2 and 3 only")
    # lines d0 + d1 y + d2 z = 0 in the triangle 1 > y > z > 0: slabs between the abscissae
    # of every crossing, and in each slab one point between consecutive lines
    corners = [(Fraction(0), Fraction(0)), (Fraction(1), Fraction(0)), (Fraction(1), Fraction(1))]
    lines = []
    for d in normals:
        vals = [d[0] + d[1] * y + d[2] * z for y, z in corners]
        if min(vals) < 0 < max(vals):
            lines.append(d)
    xs = {Fraction(0), Fraction(1)}
    sides = [(0, 0, 1), (-1, 1, 0), (0, 1, -1)]
    for p, q in itertools.combinations(lines + sides, 2):
        det = p[1] * q[2] - p[2] * q[1]
        if det:
            y = Fraction(-p[0] * q[2] + p[2] * q[0], det)
            z = Fraction(-p[1] * q[0] + p[0] * q[1], det)
            if 0 <= z <= y <= 1:
                xs.add(y)
    out = []
    for a, b in itertools.pairwise(sorted(xs)):
        y = (a + b) / 2
        zs = {Fraction(0), y}
        for d in lines:
            if d[2] != 0:
                z = -(d[0] + d[1] * y) / d[2]
                if 0 < z < y:
                    zs.add(z)
        for z0, z1 in itertools.pairwise(sorted(zs)):
            out.append((Fraction(1), y, (z0 + z1) / 2))
    return out


@dataclass(frozen=True)
class Piece:
    """``delta(eps) = leak + sum of T_j(eps)`` for ``lower <= eps <= upper`` in a chamber.

    Attributes:
        lower: the loss value below (``0`` for the lowest piece, a sympy expression).
        upper: the loss value above (``sympy.oo`` for the top piece).
        above: the loss vectors ``j`` whose loss exceeds ``eps`` on this piece; the piece is
            ``leak + sum_{j in above} T_j(eps)`` with ``T_j = A_j - e^eps B_j``
            (:attr:`Formula.terms`).
    """

    lower: sympy.Expr
    upper: sympy.Expr
    above: tuple[Vec, ...]

    def compact(self) -> sympy.Expr:
        """``leak + T_j + ...`` in the symbols ``leak`` and ``T_j`` (:func:`term_symbol`)."""
        return sympy.Add(LEAK, *[term_symbol(j) for j in self.above])


@dataclass
class Chamber:
    """One chamber: an order of the positive composed loss values, and its formulas.

    Attributes:
        index: position in :attr:`Formula.chambers`.
        sample: an exact point ``(eps_1, ..., eps_n)`` inside (``eps_1 = 1``).
        losses: ``(j, j . eps)`` for the positive loss values, decreasing on the chamber.
        inequalities: the strict inequalities (sympy) that define the chamber: the
            consecutive positive losses in decreasing order and the smallest one > 0
            (with the global assumptions ``eps_1 > ... > eps_n > 0``).
        pieces: ``delta(eps)`` between consecutive loss values, from the top down.
    """

    index: int
    sample: tuple[Fraction, ...]
    losses: list[tuple[Vec, sympy.Expr]]
    inequalities: list[sympy.Basic]
    pieces: list[Piece] = field(default_factory=list)

    def contains(self, eps: Sequence[Fraction]) -> bool:
        """Whether the exact point ``eps`` lies in the closure of the chamber."""
        vals = [sum(a * b for a, b in zip(j, eps)) for j, _ in self.losses]
        if any(v < 0 for v in vals) or any(a < b for a, b in itertools.pairwise(vals)):
            return False
        listed = {j for j, _ in self.losses}
        n = len(eps)
        return all(
            sum(a * b for a, b in zip(j, eps)) <= 0
            for j in loss_vectors(n, _k_of(self))
            if j not in listed
        )


def _normal(q: sympy.Basic, n: int) -> Vec:
    """The integer normal ``d`` of an inequality ``d . eps > 0`` (as :func:`formula` builds it)."""
    form = q.lhs - q.rhs
    return tuple(int(form.coeff(e)) for e in EPSILONS[:n])


def _global_normals(n: int) -> list[Vec]:
    """``eps_1 - eps_2, ..., eps_{n-1} - eps_n, eps_n``: the global order, as normals."""
    out = [tuple(1 if t == i else -1 if t == i + 1 else 0 for t in range(n)) for i in range(n - 1)]
    out.append(tuple(1 if t == n - 1 else 0 for t in range(n)))
    return out


def _positive_primitive(d: Vec) -> Vec:
    """``d`` divided by the gcd of its entries (a positive number: the direction is kept)."""
    g = 0
    for v in d:
        g = gcd(g, v)
    return tuple(v // g for v in d) if g else d


def irredundant(normals: Sequence[Vec], n: int) -> list[Vec]:
    """The normals ``d`` that the others and the global order do not imply, decided exactly.

    The chamber ``{eps : d . eps > 0}`` (with ``eps_1 > ... > eps_n > 0``) is a pointed
    polyhedral cone; on the slice ``eps_1 = 1`` its closure is a polytope.  Its vertices are
    computed exactly (intersections of ``n - 1`` of the hyperplanes, in rationals, kept when
    they satisfy every inequality); an inequality is implied by the others exactly when it
    is not a facet, i.e. when the vertices on its hyperplane do not span an ``(n - 2)``-face.
    Positive multiples of one normal count once; a normal of the global order is implied.

    Args:
        normals: the chamber's inequalities ``d . eps > 0``, as integer vectors.
        n: the number of constraints (the length of the vectors).

    Returns:
        The facet normals among ``normals``, each once, in their first order.

    >>> irredundant([(1, -1), (1, -3), (1, -5)], 2)
    [(1, -5)]
    """
    glob = _global_normals(n)
    own = list(dict.fromkeys(_positive_primitive(d) for d in normals))
    own = [d for d in own if d not in glob]
    system = own + glob
    # the slice eps_1 = 1: d . (1, y) >= 0 with y = (eps_2, ..., eps_n)
    vertices: set[tuple[Fraction, ...]] = set()
    for rows in itertools.combinations(system, n - 1):
        sol = _solve([[Fraction(d[i]) for i in range(1, n)] + [Fraction(-d[0])] for d in rows])
        if sol is None:
            continue
        y = (Fraction(1), *sol)
        if all(sum(a * b for a, b in zip(d, y)) >= 0 for d in system):
            vertices.add(y)
    out = []
    for d in own:
        on = [v for v in vertices if sum(a * b for a, b in zip(d, v)) == 0]
        if n == 2:
            facet = len(on) >= 1
        else:  # n - 1 affinely independent vertices on the hyperplane
            facet = len(on) >= n - 1 and _affine_rank(on) >= n - 2
        if facet:
            out.append(d)
    return out


def _eliminate(rows: list[list[Fraction]], columns: int) -> int:
    """Gauss-Jordan elimination in place on the first ``columns`` columns; returns the rank."""
    rank = 0
    for col in range(columns):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][col] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        top = rows[rank]
        inv = 1 / top[col]
        top[:] = [v * inv for v in top]
        for r in range(len(rows)):
            if r != rank and rows[r][col] != 0:
                f = rows[r][col]
                rows[r] = [a - f * b for a, b in zip(rows[r], top)]
        rank += 1
    return rank


def _solve(augmented: list[list[Fraction]]) -> list[Fraction] | None:
    """The solution of a square system ``[A | b]`` in rationals, None when ``A`` is singular."""
    size = len(augmented)
    rows = [list(r) for r in augmented]
    if _eliminate(rows, size) < size:
        return None
    return [r[-1] for r in rows]


def _affine_rank(points: Sequence[tuple[Fraction, ...]]) -> int:
    """The dimension of the affine hull of ``points`` (exact)."""
    base = points[0]
    diffs = [[a - b for a, b in zip(p, base)] for p in points[1:]]
    return _eliminate(diffs, len(base)) if diffs else 0


def _k_of(ch: Chamber) -> int:
    return max(sum(abs(v) for v in j) for j, _ in ch.losses)


EPS = sympy.Symbol("epsilon", real=True)
EPSILONS = sympy.symbols("epsilon_1:5", positive=True)
DELTAS = sympy.symbols("delta_1:5", nonnegative=True)
XS = sympy.symbols("x_1:5", positive=True)
WS = sympy.symbols("w_1:5", positive=True)


LEAK = sympy.Symbol("leak")


def term_symbol(j: Vec) -> sympy.Symbol:
    """The symbol ``T_j`` (``T_2_m1`` for ``j = (2, -1)``; LaTeX ``T_{(2,-1)}``)."""
    name = "T_" + "_".join(str(v) if v >= 0 else f"m{-v}" for v in j)
    return sympy.Symbol(name)


@dataclass
class Formula:
    """delta(eps) of the k-fold composition of n symbolic constraints, per chamber.

    Attributes:
        n, k: the number of constraints and of compositions.
        chambers: the chambers, each with its inequalities, pieces and region.
        weights: ``w_i`` as sympy expressions of ``x_i = e^{eps_i}`` and ``delta_i``.
        leak: ``1 - (1 - delta_1)^k``.
    """

    n: int
    k: int
    chambers: list[Chamber]
    weights: list[sympy.Expr]
    leak: sympy.Expr
    terms: dict[Vec, tuple[sympy.Expr, sympy.Expr]]
    _factored: dict[Vec, sympy.Expr] = field(default_factory=dict, repr=False)
    _texts: dict[Any, Any] = field(default_factory=dict, repr=False)

    def term(self, j: Vec) -> sympy.Expr:
        """``T_j(eps) = A_j - e^eps B_j`` in ``epsilon``, ``x_i``, ``w_i`` (factored)."""
        if j not in self._factored:
            a, b = self.terms[j]
            e = sympy.Symbol("E", positive=True)
            self._factored[j] = sympy.factor(a - e * b).subs(e, sympy.exp(EPS))
        return self._factored[j]

    def region(self, chamber: Chamber) -> list[tuple[sympy.Expr, sympy.Expr]]:
        """The composed region's ``(eps, delta)`` list on a chamber, increasing eps.

        ``(l, delta(l))`` for ``l = 0`` and the positive loss values; the region is the
        intersection of ``R(l, delta(l))``; deltas in ``x_i``, ``w_i`` (:meth:`expand`).
        """
        return [(p.lower, self.piece_expr(p, at=p.lower)) for p in reversed(chamber.pieces)]

    def piece_expr(self, piece: Piece, at: sympy.Expr | None = None) -> sympy.Expr:
        """A piece's closed form in ``epsilon`` (or at ``epsilon = at``), ``x_i``, ``w_i``."""
        expr = sympy.Add(
            self.leak, *[a - sympy.exp(EPS) * b for a, b in (self.terms[j] for j in piece.above)]
        )
        return expr if at is None else expr.subs(EPS, at)

    def definitions(self) -> dict[sympy.Symbol, sympy.Expr]:
        """``x_i -> e^{eps_i}`` and ``w_i ->`` its expression (for :meth:`expand`)."""
        out: dict[sympy.Symbol, sympy.Expr] = {}
        for i in range(self.n):
            out[WS[i]] = self.weights[i]
        return out

    def expand(self, expr: sympy.Expr) -> sympy.Expr:
        """An expression in ``epsilon_i``, ``delta_i`` only (``w_i`` and ``x_i`` substituted)."""
        e = expr.subs(self.definitions())
        return e.subs({XS[i]: sympy.exp(EPSILONS[i]) for i in range(self.n)})

    def _point(self, eps: Sequence[Any]) -> list[Fraction]:
        """``eps`` as ``n`` exact rationals, checked (see :meth:`chamber_of`)."""
        names = [f"eps_{i + 1}" for i in range(self.n)]
        if isinstance(eps, (str, bytes)) or not hasattr(eps, "__iter__"):
            raise TypeError(
                f"eps: expected a sequence of {self.n} exact values ({', '.join(names)}), "
                f"got {type(eps).__name__} {eps!r}"
            )
        raw = list(eps)
        if len(raw) != self.n:
            raise InvalidParameterError(
                f"eps has {len(raw)} value(s); formula(n={self.n}, k={self.k}) takes exactly "
                f"{self.n}: ({', '.join(names)})"
            )
        point = [parse_rational(v, name) for v, name in zip(raw, names)]
        if point[-1] < 0 or any(a < b for a, b in itertools.pairwise(point)):
            raise InvalidParameterError(
                f"eps = ({', '.join(map(str, point))}) is outside the valid range "
                f"{' >= '.join(names)} >= 0 (the order the formulas assume)"
            )
        return point

    def chamber_of(self, eps: Sequence[Any]) -> Chamber:
        """A chamber whose closure contains the exact point ``eps`` (``eps_1 > ... > 0``).

        On a wall, any neighbouring chamber does: their formulas agree there (continuity).

        Args:
            eps: exactly ``n`` exact values ``eps_1 >= ... >= eps_n >= 0``: Fractions, ints,
                Decimals or strings such as ``"1/3"``.

        Raises:
            TypeError: a float (pass a string such as ``"0.5"`` or a Fraction) or a value
                that is not a sequence.
            InvalidParameterError: not ``n`` values, or out of order or negative.
        """
        eps = self._point(eps)
        vectors = loss_vectors(self.n, self.k)
        vals = {j: sum(a * b for a, b in zip(j, eps)) for j in vectors}
        key = tuple(sorted((j for j in vectors if vals[j] > 0), key=lambda j: -vals[j]))
        for ch in self.chambers:
            if tuple(j for j, _ in ch.losses) == key:
                return ch
        for ch in self.chambers:
            if ch.contains(eps):
                return ch
        raise InvalidParameterError(f"no chamber contains {tuple(map(str, eps))}")

    def piece_at(self, eps_vec: Sequence[Any], eps: Any) -> Piece:
        """The piece that gives ``delta(eps)`` at the exact parameters ``eps_vec``.

        Args:
            eps_vec: the parameters, as for :meth:`chamber_of`.
            eps: where delta is wanted, exact and ``>= 0`` (a Fraction, int, Decimal or a
                string such as ``"1/2"``).

        Raises:
            TypeError: a float (pass a string such as ``"0.5"`` or a Fraction).
            InvalidParameterError: bad ``eps_vec`` (:meth:`chamber_of`) or ``eps < 0``.
        """
        eps_vec = self._point(eps_vec)
        eps = parse_rational(eps, "eps")
        ch = self.chamber_of(eps_vec)
        for p in ch.pieces:
            lo = _value(p.lower, eps_vec)
            hi = None if p.upper == sympy.oo else _value(p.upper, eps_vec)
            if lo <= eps and (hi is None or eps <= hi):
                return p
        raise InvalidParameterError(f"eps = {eps} must be >= 0")

    # -- output ---------------------------------------------------------------------------
    def to_dict(self, expand_pieces: bool = False) -> dict[str, Any]:
        """JSON-ready (format :data:`JSON_FORMAT`): every expression a string ``sympify`` reads.

        The terms ``T_j`` are given once (``terms``).  A chamber lists its positive loss
        values in decreasing order (``losses``) and the name of each one's term (``order``,
        same length); piece ``i`` runs from ``losses[i]`` up to ``losses[i - 1]`` and is
        ``delta(epsilon) = leak + `` the first ``n_above`` terms of ``order`` (``n_above =
        i``), so a chamber's size grows with its number of losses, not with its square.
        The region of a chamber is its pieces from the bottom up, each at ``epsilon =
        lower``.  With ``expand_pieces`` each piece also carries ``above`` (the ``j`` of its
        terms), ``delta`` (``leak + T_j + ...``) and ``delta_closed_form`` in ``epsilon``,
        ``x_i``, ``w_i`` (long: their size grows with the square of the losses).
        """
        out = self._header()
        out["chambers"] = [self._chamber_dict(ch, expand_pieces) for ch in self.chambers]
        return out

    def _header(self) -> dict[str, Any]:
        return {
            "command": "formula",
            "format": JSON_FORMAT,
            "n": self.n,
            "k": self.k,
            "assumptions": _assumptions(self.n),
            "definitions": {
                **{f"x_{i + 1}": f"exp(epsilon_{i + 1})" for i in range(self.n)},
                **{f"w_{i + 1}": str(w) for i, w in enumerate(self.weights)},
                "leak": str(self.leak),
            },
            "terms": {str(term_symbol(j)): str(self.term(j)) for j in sorted(self.terms)},
            "note": "in a chamber, piece i holds for losses[i] <= epsilon <= losses[i - 1] "
            "(lower, upper) and delta(epsilon) = leak + the first n_above terms T_j named in "
            "order; the chamber's region is (lower, delta(lower)) for its pieces",
        }

    def _chamber_dict(self, ch: Chamber, expand: bool) -> dict[str, Any]:
        """One chamber as JSON-ready data; the strings of shared pieces are made once."""
        texts = self._texts
        for q in ch.inequalities:
            if q not in texts:
                texts[q] = str(q)
        for j, loss in ch.losses:
            if j not in texts:
                texts[j] = (str(loss), str(term_symbol(j)))
        order = [j for j, _ in ch.losses]
        names = [texts[j][1] for j in order]
        bounds = ["oo"] + [texts[j][0] for j in order] + ["0"]
        pieces = []
        for i in range(len(order) + 1):
            row: dict[str, Any] = {"lower": bounds[i + 1], "upper": bounds[i], "n_above": i}
            if expand:
                p = ch.pieces[i]
                row["above"] = [list(j) for j in order[:i]]
                row["delta"] = " + ".join(["leak", *names[:i]])
                row["delta_closed_form"] = str(self.piece_expr(p))
            pieces.append(row)
        return {
            "index": ch.index,
            "sample": [str(v) for v in ch.sample],
            "inequalities": [texts[q] for q in ch.inequalities],
            "losses": bounds[1:-1],
            "order": names,
            "pieces": pieces,
        }

    def iter_json(self, expand_pieces: bool = False) -> Iterator[str]:
        """:meth:`to_json` in pieces, one chamber at a time (the same text, streamed).

        Only one chamber's text is held at a time: ``dpcompose formula --format json``
        writes each as it is made.
        """
        head = json.dumps(self._header(), indent=1)
        yield head[:-2] + ',\n "chambers": ['
        for i, ch in enumerate(self.chambers):
            text = json.dumps(self._chamber_dict(ch, expand_pieces), indent=1)
            yield ("\n" if i == 0 else ",\n") + _indent(text, "  ")
        yield ("\n ]" if self.chambers else "]") + "\n}\n"

    def to_json(self, expand_pieces: bool = False) -> str:
        """:meth:`to_dict` as JSON text (``json.dumps(..., indent=1)`` and a newline)."""
        return "".join(self.iter_json(expand_pieces))

    def _used_terms(self) -> list[Vec]:
        used = {j for ch in self.chambers for p in ch.pieces for j in p.above}
        return sorted(used, key=lambda j: (-sum(abs(v) for v in j), [-v for v in j]))

    def to_table(self) -> str:
        """Plain text: the definitions and terms, then each chamber's inequalities and pieces."""
        lines = [
            f"# delta(eps) of the {self.k}-fold composition of {self.n} symbolic constraints; "
            f"{len(self.chambers)} chamber(s)",
            "# assumptions: " + "; ".join(_assumptions(self.n)),
        ]
        for i in range(self.n):
            lines.append(f"# x_{i + 1} = exp(epsilon_{i + 1});  w_{i + 1} = {self.weights[i]}")
        lines.append(f"# leak = {self.leak}")
        for j in self._used_terms():
            lines.append(f"# {term_symbol(j)} = {self.term(j)}")
        for ch in self.chambers:
            lines.append("")
            lines.append(f"chamber {ch.index}: " + ",  ".join(map(str, ch.inequalities)))
            for p in ch.pieces:
                hi = "inf" if p.upper == sympy.oo else str(p.upper)
                lines.append(f"  {p.lower} <= epsilon <= {hi}:  delta = {p.compact()}")
        return "\n".join(lines) + "\n"

    def term_parts(self, j: Vec) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
        """``T_j = C_j (x^{j+} - e^eps x^{j-})``: ``(C_j, x^{j+}, x^{j-})``, exactly.

        Every outcome with ``a - b = j`` has ``x^a = x^j x^b``, so ``A_j = x^j B_j`` and
        ``T_j = (B_j / x^{j-}) (x^{j+} - e^eps x^{j-})`` with ``j+``, ``j-`` the positive and
        negative parts of ``j``; ``C_j = B_j / x^{j-}`` (factored) is a sum of positive terms
        (``x^{j-}`` divides every ``x^b``), so the form has no leading minus sign.
        """
        _, b = self.terms[j]
        plus = sympy.Mul(*[XS[i] ** max(v, 0) for i, v in enumerate(j)])
        minus = sympy.Mul(*[XS[i] ** max(-v, 0) for i, v in enumerate(j)])
        return sympy.factor(sympy.cancel(b / minus)), plus, minus

    def conditions(self, chamber: Chamber) -> list[Vec]:
        """The chamber's irredundant inequalities ``d . eps > 0`` (:func:`irredundant`).

        The inequalities implied by the others and the global order
        ``eps_1 > ... > eps_n > 0`` are dropped (decided exactly); the chamber is the same.
        """
        return irredundant([_normal(q, self.n) for q in chamber.inequalities], self.n)

    def to_latex(self) -> str:
        r"""A LaTeX fragment (needs ``amsmath``): definitions and terms, then the chambers.

        One glyph, ``\varepsilon``, for the parameters ``\varepsilon_i`` and the query
        ``\varepsilon``; each term ``T_j = C_j (x^{j+} - e^{\varepsilon} x^{j-})``
        (:meth:`term_parts`) is written once, in display math; each chamber lists only its
        irredundant inequalities (:meth:`conditions`), each as ``positive > positive``; a
        piece is ``leak + T_j + ...`` in inline math, so that long lines break.
        """
        n = self.n

        def tex(expr: sympy.Expr) -> str:
            return sympy.latex(expr, symbol_names=_TEX_NAMES)

        ts = ", ".join(
            f"t_{{{i + 1}}} = \\dfrac{{\\delta_{{{i + 2}}} - \\delta_{{{i + 1}}}}}"
            f"{{x_{{{i + 1}}} - x_{{{i + 2}}}}}"
            for i in range(n - 1)
        )
        out = [
            f"% delta(eps) of the {self.k}-fold composition of {n} symbolic constraints",
            "% needs \\usepackage{amsmath}",
            "\\paragraph{Definitions.} Assumptions: "
            + "; ".join(f"${a}$" for a in _tex_assumptions(n))
            + ". With "
            + ", ".join(f"$x_{{{i + 1}}} = e^{{\\varepsilon_{{{i + 1}}}}}$" for i in range(n))
            + ",",
            "\\[",
            f"  t_{{0}} = 0,\\quad {ts},\\quad t_{{{n}}} = "
            f"\\dfrac{{1 - \\delta_{{{n}}}}}{{1 + x_{{{n}}}}},",
            "\\]",
            f"the weights are $w_i = (1 + x_i)(t_i - t_{{i-1}})$ "
            f"($i = {', '.join(str(i + 1) for i in range(n))}$) and "
            f"$\\mathrm{{leak}} = {tex(self.leak)}$.  On a piece, $\\delta(\\varepsilon)$ is "
            "the leak plus the terms listed:",
        ]
        for j in self._used_terms():
            c, plus, minus = self.term_parts(j)
            num, den = sympy.fraction(c)
            poly = sympy.Integer(1)
            if len(tex(num)) > _TEX_NUM_LONG:  # a long sum: named P_j, written after
                factors = sympy.Mul.make_args(num)
                poly = sympy.Mul(*[f for f in factors if f.has(sympy.Add)])
                num = sympy.Mul(*[f for f in factors if not f.has(sympy.Add)])
            coef = f"\\dfrac{{{tex(num)}}}{{{tex(den)}}}" if den != 1 else tex(num)
            named = "" if poly == 1 else f"\\, P_{{{_tex_index(j)}}}"
            tail = "" if minus == 1 else " " + tex(minus)
            out.append(
                f"\\[ {_tex_term(j)} = {coef}{named} \\left({tex(plus)} - e^{{\\varepsilon}}"
                f"{tail}\\right){',' if poly != 1 else ''} \\]"
            )
            if poly != 1:
                out.append(f"where $P_{{{_tex_index(j)}}} = {tex(poly)}$.")
        for ch in self.chambers:
            conds = self.conditions(ch)
            ineq = (
                ",\\ ".join(_tex_inequality(d) for d in conds)
                if conds
                else "\\text{no condition beyond the assumptions}"
            )
            out.append(f"\\paragraph{{Chamber {ch.index}.}} ${ineq}$.")
            out.append("\\begin{itemize}")
            for p in ch.pieces:
                hi = "\\infty" if p.upper == sympy.oo else tex(p.upper)
                terms = " + ".join(["\\mathrm{leak}"] + [_tex_term(j) for j in p.above])
                out.append(
                    f"\\item ${tex(p.lower)} \\le \\varepsilon \\le {hi}$: "
                    f"$\\delta(\\varepsilon) = {terms}$"
                )
            out.append("\\end{itemize}")
        return "\n".join(out) + "\n"


_TEX_NAMES: dict[sympy.Symbol, str] = {
    EPS: "\\varepsilon",
    **{e: f"\\varepsilon_{{{i + 1}}}" for i, e in enumerate(EPSILONS)},
}
"""One glyph in LaTeX: ``\\varepsilon`` for the query and the parameters alike."""


def _tex_inequality(d: Vec) -> str:
    r"""``d . eps > 0`` as ``positive > positive`` (``\varepsilon_1 > 5\varepsilon_2``)."""

    def side(pairs: list[tuple[int, int]]) -> str:
        return " + ".join(
            ("" if c == 1 else str(c)) + f"\\varepsilon_{{{i + 1}}}" for i, c in pairs
        )

    left = [(i, v) for i, v in enumerate(d) if v > 0]
    right = [(i, -v) for i, v in enumerate(d) if v < 0]
    return f"{side(left)} > {side(right) if right else '0'}"


def _indent(text: str, prefix: str) -> str:
    """Every line of ``text`` indented by ``prefix`` (JSON text has no blank lines)."""
    return prefix + text.replace("\n", "\n" + prefix)


def _value(expr: sympy.Expr, eps_vec: Sequence[Fraction]) -> Fraction:
    """A loss ``j . eps`` (a linear sympy form) at exact parameters."""
    coeffs = [int(expr.coeff(e)) for e in EPSILONS[: len(eps_vec)]]
    return sum((Fraction(c) * Fraction(v) for c, v in zip(coeffs, eps_vec)), Fraction(0))


def _tex_index(j: Vec) -> str:
    return "(" + ",".join(map(str, j)) + ")"


def _tex_term(j: Vec) -> str:
    return "T_{" + _tex_index(j) + "}"


_TEX_NUM_LONG = 60
"""LaTeX characters of a term's numerator beyond which its sum is named and written after."""


def _assumptions(n: int) -> list[str]:
    order = " > ".join(f"epsilon_{i + 1}" for i in range(n))
    deltas = " <= ".join(f"delta_{i + 1}" for i in range(n))
    ws = ", ".join(f"w_{i + 1}" for i in range(n))
    return [f"{order} > 0", f"0 <= {deltas} < 1", f"every constraint active: {ws} > 0"]


def _tex_assumptions(n: int) -> list[str]:
    order = " > ".join(f"\\varepsilon_{{{i + 1}}}" for i in range(n))
    deltas = " \\le ".join(f"\\delta_{{{i + 1}}}" for i in range(n))
    ws = ", ".join(f"w_{{{i + 1}}}" for i in range(n))
    return [f"{order} > 0", f"0 \\le {deltas} < 1", f"{ws} > 0"]


def _weights(n: int) -> list[sympy.Expr]:
    xs, ds = XS[:n], DELTAS[:n]
    ts: list[sympy.Expr] = [sympy.Integer(0)]
    for i in range(n - 1):
        ts.append((ds[i + 1] - ds[i]) / (xs[i] - xs[i + 1]))
    ts.append((1 - ds[n - 1]) / (1 + xs[n - 1]))
    return [sympy.factor((ts[i + 1] - ts[i]) * (1 + xs[i])) for i in range(n)]


def _class_terms(n: int, k: int) -> dict[Vec, tuple[sympy.Expr, sympy.Expr]]:
    """``j -> (A_j, B_j)``: the outcomes with ``a - b = j`` give ``A_j - e^eps B_j``."""
    acc: dict[Vec, list[sympy.Expr]] = {}
    for ab in itertools.product(range(k + 1), repeat=2 * n):
        if sum(ab) != k:
            continue
        a, b = ab[:n], ab[n:]
        mult = factorial(k)
        for v in ab:
            mult //= factorial(v)
        base = sympy.Integer(mult)
        for i in range(n):
            c = a[i] + b[i]
            if c:
                base *= (WS[i] / (1 + XS[i])) ** c
        j = tuple(x - y for x, y in zip(a, b))
        xa = sympy.Mul(*[XS[i] ** a[i] for i in range(n)])
        xb = sympy.Mul(*[XS[i] ** b[i] for i in range(n)])
        pair = acc.setdefault(j, [sympy.Integer(0), sympy.Integer(0)])
        pair[0] += base * xa
        pair[1] += base * xb
    return {j: (A, B) for j, (A, B) in acc.items()}


def formula(n: int = 2, k: int = 2) -> Formula:
    """delta(eps) of the k-fold composition of ``n`` symbolic constraints, per chamber.

    Args:
        n: the number of constraints (2 or 3).
        k: the number of compositions (``1 <= k <= LIMITS[n]``).

    Raises:
        InvalidParameterError: for ``n`` or ``k`` outside :data:`LIMITS`.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n not in LIMITS:
        raise InvalidParameterError(
            f"n = {n!r}: symbolic formulas are available for n = 2 (k <= {LIMITS[2]}) and "
            f"n = 3 (k <= {LIMITS[3]})"
        )
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= LIMITS[n]:
        raise InvalidParameterError(
            f"k = {k!r} is outside the valid range [1, {LIMITS[n]}] for n = {n}: beyond, the "
            "chambers number thousands and the formulas are too long to read (compose "
            "numeric parameters with dpcompose compose instead)"
        )
    vectors = loss_vectors(n, k)
    terms = _class_terms(n, k)
    eps_syms = EPSILONS[:n]
    leak = 1 - (1 - DELTAS[0]) ** k
    loss_expr = {j: sympy.Add(*[a * e for a, e in zip(j, eps_syms)]) for j in vectors}
    chambers: list[Chamber] = []
    seen: set[tuple[Vec, ...]] = set()
    relations: dict[Vec, sympy.Basic] = {}

    def strict(d: Vec) -> sympy.Basic:
        """``d . eps > 0`` as sympy builds it, each ``d`` built once.

        Thousands of chambers share the same differences; a ``d`` without a negative
        entry is a sum of positive symbols, which sympy evaluates to ``true``: skipped
        without building it.
        """
        if all(v >= 0 for v in d):
            return sympy.true
        if d not in relations:
            form = sympy.Add(*[a * e for a, e in zip(d, eps_syms)])
            relations[d] = sympy.StrictGreaterThan(form, 0)
        return relations[d]

    for sample in _sample_points(n, vectors):
        m = lcm(*(v.denominator for v in sample))
        ints = [int(v * m) for v in sample]  # the order is decided in integers
        vals = {j: sum(a * b for a, b in zip(j, ints)) for j in vectors}
        pos = sorted((j for j in vectors if vals[j] > 0), key=lambda j: -vals[j])
        key = tuple(pos)
        if key in seen:
            continue
        seen.add(key)
        ineqs: list[sympy.Basic] = []
        for hi, lo in itertools.pairwise(pos):
            ineqs.append(strict(tuple(a - b for a, b in zip(hi, lo))))
        if pos:  # the negative losses are the mirrors -j of the positive ones
            ineqs.append(strict(pos[-1]))
        # (eps_1 > ... > eps_n > 0 are the global assumptions, not repeated here)
        ineqs = list(dict.fromkeys(q for q in ineqs if q is not sympy.true))  # no repeats
        ch = Chamber(len(chambers), tuple(sample), [(j, loss_expr[j]) for j in pos], ineqs)
        bounds = [sympy.oo] + [loss_expr[j] for j in pos] + [sympy.Integer(0)]
        for i in range(len(bounds) - 1):
            ch.pieces.append(Piece(bounds[i + 1], bounds[i], tuple(pos[:i])))
        chambers.append(ch)
    return Formula(n, k, chambers, _weights(n), leak, terms)
