"""Exact sparse Laurent polynomials and chambers of loss orderings.

Mathematics (docs/theory.md, section 3): every composed pair in this package has privacy losses
``l = n . eps`` with an integer vector ``n`` over the generators ``eps_1, ..., eps_g``, and all
probabilities are polynomials in ``x_i = e^{eps_i}`` (and ``x_i^{-1}``) divided by a product of
powers of ``1 + x_i``.  Such numerators are Laurent polynomials with integer (or rational)
coefficients, which this module implements as ``{exponent tuple: coefficient}`` dictionaries.
Equality of two Laurent polynomials is then a proof of identity of the underlying rational
functions.

The only thing a concrete value of ``eps`` decides is the *ordering* of the loss values
(which terms enter each ``delta``).  A :class:`Chamber` fixes that ordering by a representative
rational vector ``rep`` (``eps`` proportional to ``rep``) and says how the symbols relate:

* in an open chamber the generators are independent symbols (``monomap`` is the identity), and
  an identity verified there holds on an open set, hence on the whole chamber;
* on a critical ray, where loss values tie, ``eps = g * rep`` with integer ``rep`` and every
  ``x_i`` is the power ``z^{rep_i}`` of a single symbol ``z = e^g`` (``monomap = [rep]``).

No floating point is used in any identity; floats appear only when a counterexample is
evaluated at a sample point for the report.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import sympy

Exp = tuple[int, ...]
Coef = int | Fraction


class Laurent:
    """A sparse Laurent polynomial ``sum c_e x^e`` with exact coefficients."""

    __slots__ = ("terms",)

    def __init__(self, terms: dict[Exp, Coef] | None = None) -> None:
        self.terms: dict[Exp, Coef] = {e: c for e, c in (terms or {}).items() if c}

    @staticmethod
    def mono(exp: Exp, coef: Coef = 1) -> Laurent:
        """Return the monomial ``coef * x^exp``."""
        return Laurent({tuple(exp): coef})

    @staticmethod
    def const(value: Coef, nvars: int) -> Laurent:
        """Return the constant ``value`` in ``nvars`` variables."""
        return Laurent({(0,) * nvars: value})

    @staticmethod
    def _raw(terms: dict[Exp, Coef]) -> Laurent:
        """Wrap a dict known to have no zero coefficients (no copy, no filtering)."""
        out = Laurent.__new__(Laurent)
        out.terms = terms
        return out

    def copy(self) -> Laurent:
        """Return a copy."""
        return Laurent._raw(dict(self.terms))

    def is_zero(self) -> bool:
        """Return True for the zero polynomial."""
        return not self.terms

    def iadd(self, other: Laurent, scale: Coef = 1) -> Laurent:
        """Add ``scale * other`` in place and return self."""
        t = self.terms
        for e, c in other.terms.items():
            v = t.get(e, 0) + scale * c
            if v:
                t[e] = v
            else:
                t.pop(e, None)
        return self

    def iadd_mono(self, exp: Exp, coef: Coef) -> Laurent:
        """Add ``coef * x^exp`` in place and return self."""
        v = self.terms.get(exp, 0) + coef
        if v:
            self.terms[exp] = v
        else:
            self.terms.pop(exp, None)
        return self

    def __add__(self, other: Laurent) -> Laurent:
        return self.copy().iadd(other)

    def __sub__(self, other: Laurent) -> Laurent:
        return self.copy().iadd(other, -1)

    def __neg__(self) -> Laurent:
        return Laurent({e: -c for e, c in self.terms.items()})

    def shift(self, exp: Exp, coef: Coef = 1) -> Laurent:
        """Return ``coef * x^exp * self``."""
        if len(exp) != len(next(iter(self.terms), exp)):
            raise ValueError("exponent length differs from the number of variables")
        if not coef:
            return Laurent()
        return Laurent._raw(
            {tuple(map(operator.add, e, exp)): coef * c for e, c in self.terms.items()}
        )

    def __mul__(self, other: Laurent | Coef) -> Laurent:
        if not isinstance(other, Laurent):
            return Laurent({e: other * c for e, c in self.terms.items()})
        out: dict[Exp, Coef] = {}
        for e1, c1 in self.terms.items():
            for e2, c2 in other.terms.items():
                e = tuple(map(operator.add, e1, e2))
                out[e] = out.get(e, 0) + c1 * c2
        return Laurent(out)

    __rmul__ = __mul__

    def __pow__(self, n: int) -> Laurent:
        if n < 0:
            raise ValueError("negative powers of a Laurent polynomial are not polynomials")
        nv = len(next(iter(self.terms))) if self.terms else 0
        out = Laurent.const(1, nv)
        for _ in range(n):
            out = out * self
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Laurent) and self.terms == other.terms

    __hash__ = None  # type: ignore[assignment]

    def exact_div_binomial(self, ea: Exp, eb: Exp) -> Laurent | None:
        """Divide exactly by ``x^ea - x^eb``; return None when the division is not exact.

        Writing ``Q x^ea (1 - x^g) = N`` with ``g = eb - ea``, the terms of ``Q`` are peeled off
        in increasing order of ``phi(e) = e . g`` (the lowest-``phi`` terms of ``Q (1 - x^g)``
        are those of ``Q``).  If a remainder survives past the largest ``phi`` of ``N`` the
        quotient is not a Laurent polynomial.
        """
        g = tuple(b - a for a, b in zip(ea, eb, strict=True))
        if not any(g):
            raise ZeroDivisionError("division by x^a - x^a")
        rem = self.shift(tuple(-a for a in ea)).terms

        def phi(e: Exp) -> int:
            return sum(a * b for a, b in zip(e, g, strict=True))

        top = max((phi(e) for e in rem), default=0)
        quot: dict[Exp, Coef] = {}
        while rem:
            low = min(phi(e) for e in rem)
            if low > top:
                return None
            for e in [e for e in rem if phi(e) == low]:
                c = rem.pop(e)
                quot[e] = quot.get(e, 0) + c
                e2 = tuple(a + b for a, b in zip(e, g, strict=True))
                v = rem.get(e2, 0) + c
                if v:
                    rem[e2] = v
                else:
                    rem.pop(e2, None)
        return Laurent(quot)

    def to_sympy(self, gens: Sequence[sympy.Symbol]) -> sympy.Expr:
        """Return the sympy expression (for reports only)."""
        out = sympy.Integer(0)
        for e, c in self.terms.items():
            term = sympy.Rational(c.numerator, c.denominator) if isinstance(c, Fraction) else c
            for s, k in zip(gens, e, strict=True):
                term = term * s**k
            out += term
        return out

    def evaluate(self, point: Sequence[mpmath.mpf]) -> mpmath.mpf:
        """Evaluate at a numeric point (for counterexample reports only)."""
        total = mpmath.mpf(0)
        for e, c in self.terms.items():
            term = mpmath.mpf(c.numerator) / c.denominator if isinstance(c, Fraction) else c
            for v, k in zip(point, e, strict=True):
                term *= v**k
            total += term
        return total

    def __repr__(self) -> str:
        return f"Laurent({self.terms!r})"


def sum_laurent(items: Iterable[Laurent], nvars: int) -> Laurent:
    """Return the sum of an iterable of Laurent polynomials."""
    out = Laurent.const(0, nvars)
    for it in items:
        out.iadd(it)
    return out


@dataclass(frozen=True)
class Chamber:
    """A fixed ordering of loss values, given by a representative eps vector.

    Attributes:
        rep: representative values of ``(eps_1, ..., eps_g)`` up to a common positive scale;
            the loss of the integer vector ``n`` is ``n . rep``.
        monomap: rows of an integer matrix ``M``; the monomial ``e^{n . eps}`` is ``y^{M n}`` in
            the chamber's own symbols ``y``.  Identity for an open chamber, one row ``rep`` on a
            critical ray (``x_i = z^{rep_i}``).
        label: human-readable description used in reports.
    """

    rep: tuple[Fraction, ...]
    monomap: tuple[tuple[int, ...], ...]
    label: str

    @property
    def nvars(self) -> int:
        """Number of independent symbols of the chamber."""
        return len(self.monomap)

    @property
    def critical(self) -> bool:
        """True on a critical ray (ties between loss values are merged)."""
        return len(self.monomap) < len(self.rep)

    def value(self, n: Sequence[int]) -> Fraction:
        """Return the loss value ``n . rep`` (orders the losses of the chamber)."""
        return sum((Fraction(a) * r for a, r in zip(n, self.rep, strict=True)), Fraction(0))

    def exp(self, n: Sequence[int]) -> Exp:
        """Return the exponent of ``e^{n . eps}`` in the chamber's symbols."""
        return tuple(sum(m * a for m, a in zip(row, n, strict=True)) for row in self.monomap)

    def mono(self, n: Sequence[int], coef: Coef = 1) -> Laurent:
        """Return ``coef * e^{n . eps}`` as a Laurent polynomial."""
        return Laurent.mono(self.exp(n), coef)

    def one_plus_x(self, i: int) -> Laurent:
        """Return ``1 + e^{eps_i}``."""
        unit = [0] * len(self.rep)
        unit[i] = 1
        return Laurent.const(1, self.nvars) + self.mono(unit)

    def _is_identity(self) -> bool:
        g = len(self.rep)
        return self.monomap == tuple(tuple(int(i == j) for j in range(g)) for i in range(g))

    def symbols(self) -> list[sympy.Symbol]:
        """Return sympy symbols naming the chamber's variables (for reports).

        ``x_i`` in an open chamber, ``z`` on a ray, ``u_1, u_2, ...`` otherwise (a wall: ``eps``
        is ``sum_r y_r c_r`` over the rows ``c_r`` of ``monomap`` and ``u_r = e^{y_r}``).
        """
        if self._is_identity():
            return [sympy.Symbol(f"x{i + 1}") for i in range(len(self.rep))]
        if len(self.monomap) == 1:
            return [sympy.Symbol("z")]
        return [sympy.Symbol(f"u{r + 1}") for r in range(len(self.monomap))]

    def sample_point(self, scale: float = 0.25) -> list[mpmath.mpf]:
        """Return numeric values of the chamber's symbols inside the chamber (reports only)."""
        top = max(self.rep) if max(self.rep) > 0 else Fraction(1)
        if self._is_identity():
            return [
                mpmath.exp(mpmath.mpf(scale) * mpmath.mpf(r.numerator) / r.denominator / float(top))
                for r in self.rep
            ]
        if len(self.monomap) == 1:
            return [mpmath.exp(mpmath.mpf(scale) / mpmath.mpf(top.numerator) * top.denominator)]
        ys = _solve_rows(self.monomap, self.rep)
        t = mpmath.mpf(top.numerator) / top.denominator
        return [
            mpmath.exp(mpmath.mpf(scale) * (mpmath.mpf(y.numerator) / y.denominator) / t)
            for y in ys
        ]


def _solve_rows(rows: Sequence[Sequence[int]], rep: Sequence[Fraction]) -> list[Fraction]:
    """Exact ``y`` with ``sum_r y_r rows[r] = rep`` (normal equations; rows independent)."""
    n = len(rows)
    gram = [
        [Fraction(sum(a * b for a, b in zip(rows[i], rows[j], strict=True))) for j in range(n)]
        for i in range(n)
    ]
    rhs = [sum((a * r for a, r in zip(rows[i], rep, strict=True)), Fraction(0)) for i in range(n)]
    for c in range(n):
        piv = next(i for i in range(c, n) if gram[i][c] != 0)
        gram[c], gram[piv] = gram[piv], gram[c]
        rhs[c], rhs[piv] = rhs[piv], rhs[c]
        for i in range(n):
            if i != c and gram[i][c] != 0:
                f = gram[i][c] / gram[c][c]
                gram[i] = [a - f * b for a, b in zip(gram[i], gram[c], strict=True)]
                rhs[i] -= f * rhs[c]
    return [rhs[i] / gram[i][i] for i in range(n)]


def open_chamber(rep: Sequence[Fraction], label: str) -> Chamber:
    """Return the open chamber containing the generic representative ``rep``."""
    g = len(rep)
    ident = tuple(tuple(int(i == j) for j in range(g)) for i in range(g))
    return Chamber(tuple(Fraction(r) for r in rep), ident, label)


def critical_chamber(rep_int: Sequence[int], label: str) -> Chamber:
    """Return the critical ray ``eps = g * rep_int`` (integers), with ``x_i = z^{rep_i}``."""
    return Chamber(tuple(Fraction(r) for r in rep_int), (tuple(int(r) for r in rep_int),), label)


def cell_chamber(rep: Sequence[int], basis: Sequence[Sequence[int]], label: str) -> Chamber:
    """Return the chamber of a cell whose linear span has the integer ``basis``.

    On the cell ``eps = sum_r y_r basis[r]`` with ``y`` in an open subset of ``R^r``, so
    ``e^{n . eps} = prod_r u_r^{basis[r] . n}`` with independent ``u_r = e^{y_r}``: an
    identity of Laurent polynomials in ``u`` holds on the whole cell.  Ties between losses
    that hold on the cell map to the same monomial.
    """
    return Chamber(tuple(Fraction(r) for r in rep), tuple(tuple(b) for b in basis), label)


def ratio_chambers(vectors: Iterable[Sequence[int]]) -> list[Chamber]:
    """Enumerate every chamber of the orderings of ``a eps1 + b eps2`` for ``eps1 > eps2 > 0``.

    The critical ratios ``r = eps1/eps2 > 1`` are those where two of the given loss vectors
    tie, ``r = -(b - b')/(a - a')``.  Returned: one open chamber per open interval between
    consecutive critical ratios (and ``(1, r_1)``, ``(r_m, inf)``), with a rational
    representative ratio inside it, and one critical chamber per critical ratio, in increasing
    order of ``r``.

    Args:
        vectors: the integer loss vectors ``(a, b)`` whose ordering matters.

    Returns:
        The list of chambers.
    """
    vecs = sorted({(int(v[0]), int(v[1])) for v in vectors})
    crit: set[Fraction] = set()
    for i, (a, b) in enumerate(vecs):
        for a2, b2 in vecs[i + 1 :]:
            if a != a2:
                r = Fraction(-(b - b2), a - a2)
                if r > 1:
                    crit.add(r)
    cr = sorted(crit)
    out: list[Chamber] = []
    bounds = [Fraction(1), *cr]
    for j, lo in enumerate(bounds):
        hi = bounds[j + 1] if j + 1 < len(bounds) else None
        mid = lo + 1 if hi is None else (lo + hi) / 2
        hi_s = "inf" if hi is None else str(hi)
        out.append(open_chamber((mid, Fraction(1)), f"eps1/eps2 in ({lo}, {hi_s})"))
        if hi is not None:
            out.append(
                critical_chamber((hi.numerator, hi.denominator), f"eps1/eps2 = {hi} (ties merged)")
            )
    return out
