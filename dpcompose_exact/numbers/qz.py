"""Elements of the rational function field Q(z), ``z = e^g`` transcendental.

``e^eps = (prod_i p_i^{n_i}) z^{n_0}`` with ``z = e^{g0}`` transcendental, so every delta,
alpha, slope and breakpoint is an element of Q(z) (docs/theory.md, section 3); a
:class:`QzElem` holds it as a quotient of two integer polynomials (FLINT ``fmpz_poly``).
A nonzero polynomial does not vanish at a transcendental point, so the zero test is
exact.  What ``z`` stands for is the business of :class:`~.domain.ExpDomain`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Union

import flint

from ..errors import InvalidParameterError

__all__ = ["QzElem", "ExactLike", "reduce_factored"]

if TYPE_CHECKING:
    import sympy  # noqa: F401  (named in ExactLike)

_ZERO_POLY = flint.fmpz_poly([])
_ONE_POLY = flint.fmpz_poly([1])


def _poly_from_fraction(c: Fraction) -> tuple[flint.fmpz_poly, flint.fmpz_poly]:
    return flint.fmpz_poly([c.numerator]), flint.fmpz_poly([c.denominator])


def _same_field(a: QzElem, b: QzElem) -> Fraction | None:
    """The common field tag of two elements; elements of different fields do not mix.

    A constant (no ``z``) belongs to every field, so only non-constant elements carrying
    different generators are refused: ``z`` would mean two different numbers.
    """
    fa, fb = a.field, b.field
    if fa is None or fb is None or fa == fb:
        return fa if fa is not None else fb
    if a.num.degree() <= 0 and a.den.degree() <= 0:
        return fb
    if b.num.degree() <= 0 and b.den.degree() <= 0:
        return fa
    raise InvalidParameterError(
        f"elements of different fields: z = e^({fa}) and z = e^({fb}); convert one with "
        "ExpDomain.convert_elem (or compare Values) before mixing them"
    )


def _is_z(f: flint.fmpz_poly) -> bool:
    return f.degree() == 1 and f[0] == 0 and f[1] == 1


def _unit_root(f: flint.fmpz_poly) -> int | None:
    """``r`` when ``f = z - r`` with ``r = 1`` or ``-1`` (divisibility by evaluation)."""
    if f.degree() == 1 and f[1] == 1 and f[0] in (1, -1):
        return -int(f[0])
    return None


def _factor_key(factors: Sequence[tuple[flint.fmpz_poly, int]]) -> tuple:
    return tuple((tuple(int(c) for c in f.coeffs()), e) for f, e in factors)


def _factor_product(
    factors: Sequence[tuple[flint.fmpz_poly, int]], cache: dict | None
) -> flint.fmpz_poly:
    """``prod f^e`` (kept in ``cache`` by the factors' coefficients and multiplicities)."""
    key = ("prod", _factor_key(factors))
    prod = cache.get(key) if cache is not None else None
    if prod is None:
        prod = _ONE_POLY
        for f, e in factors:
            prod = prod * f**e
        if cache is not None:
            cache[key] = prod
    return prod


def _factor_height_bits(factors: Sequence[tuple[flint.fmpz_poly, int]]) -> int:
    """A bound on ``height_bits`` of ``prod f^e``, without expanding it.

    The height is at most the l1 norm, which is submultiplicative:
    ``sum e log2 ||f||_1`` bits (rounded up; about ``e`` bits for ``(z -+ 1)^e``, whose
    height is about ``e - log2(e) / 2`` bits).
    """
    total = 0
    for f, e in factors:
        norm = sum(abs(int(c)) for c in f.coeffs())
        total += e * math.log2(norm) if norm > 1 else 0
    return math.ceil(total) + 1


# A Taylor shift fills every coefficient and grows them by about a bit per degree: it pays
# for dense numerators of moderate degree; above this degree (sparse numerators of a tiny
# generator, z^500 beside z) the factors are divided out one at a time.
_TAYLOR_MAX_DEGREE = 2000


def _strip_root(num: flint.fmpz_poly, root: int, most: int) -> tuple[flint.fmpz_poly, int]:
    """Divide ``num`` by ``(z - root)^m``, ``m`` its multiplicity capped at ``most``.

    The Taylor shift ``num(z + root)`` (FLINT's compose with a linear polynomial) has the
    multiplicity as its number of vanishing low coefficients; shifting back the quotient
    costs one more Taylor shift, instead of ``m`` divisions.  Returns ``(quotient,
    most - m)``.
    """
    shifted = num(flint.fmpz_poly([root, 1]))
    m = 0
    while m < most and not shifted[m]:
        m += 1
    if not m:
        return num, most
    return shifted.right_shift(m)(flint.fmpz_poly([-root, 1])), most - m


def reduce_factored(
    num: flint.fmpz_poly,
    const: int,
    zpow: int,
    factors: Sequence[tuple[flint.fmpz_poly, int]],
) -> tuple[flint.fmpz_poly, int, int, list[tuple[flint.fmpz_poly, int]]]:
    """Cancel ``num / (const z^zpow prod f^e)`` to lowest terms; the factors stay factored.

    Returns ``(num', const', zpow', left)`` with ``num' / (const' z^zpow' prod left)`` equal
    to the input, ``num'`` and the denominator coprime in Z[z], and the sign of
    ``const'`` chosen so that the expanded denominator has a positive leading coefficient.
    The same conditions on ``factors`` as :meth:`QzElem.reduced`; ``num`` nonzero.
    Divisibility by ``z - 1`` and ``z + 1`` is tested by evaluating at 1 and -1 (a sum of
    the coefficients) rather than by a division with remainder.
    """
    low = 0
    while low < zpow and not num[low]:  # indexing: no copy of the coefficients
        low += 1
    if low:
        num, zpow = num.right_shift(low), zpow - low
    left: list[tuple[flint.fmpz_poly, int]] = []
    for f, e in factors:
        root = _unit_root(f)
        if root is not None and e >= 2 and not num(root):
            num, e = num // f, e - 1  # exact; a second factor is rarer, and then many are
            if e and num.degree() <= _TAYLOR_MAX_DEGREE and not num(root):
                num, e = _strip_root(num, root, e)
        while e:
            if root is not None:
                if num(root):
                    break
                num = num // f  # exact
            else:
                q, r = divmod(num, f)
                if not r.is_zero():
                    break
                num = q
            e -= 1
        if e:
            left.append((f, e))
    const = int(const)
    g = math.gcd(int(num.content()), const)
    if g > 1:
        num, const = num // g, const // g
    lead = const
    for f, e in left:  # the sign of the expanded denominator's leading coefficient
        if e % 2 and f.leading_coefficient() < 0:
            lead = -lead
    if lead < 0:
        num, const = -num, -const
    return num, const, zpow, left


class QzElem:
    """An element ``num(z) / den(z)`` of Q(z), both integer polynomials.

    Elements are light and immutable: arithmetic returns new elements and does not
    reduce (a gcd per operation would dominate the hot paths); :attr:`canonical` computes
    the reduced form once, on demand, for hashing and printing.  Equality is exact
    (cross multiplication).  What ``z`` stands for is the business of an
    :class:`ExpDomain`, which owns conversion to sympy, signs and decimals.
    """

    __slots__ = ("num", "_den", "_canon", "den_factors", "_hint", "field")

    def __init__(
        self,
        num: flint.fmpz_poly,
        den: flint.fmpz_poly = _ONE_POLY,
        field: Fraction | None = None,
    ) -> None:
        if den.is_zero():
            raise ZeroDivisionError("QzElem with zero denominator")
        self.num = num
        self._den: flint.fmpz_poly | None = den
        # the generator g of z = e^g when known (elements built by a domain carry it);
        # None: not tagged (constants belong to every field)
        self.field = field
        self._canon: tuple[flint.fmpz_poly, flint.fmpz_poly] | None = None
        # (content, [(irreducible, multiplicity), ...]) of the canonical denominator, when
        # known from how the element was built (saves a factorisation when printing)
        self.den_factors: tuple[int, list[tuple[flint.fmpz_poly, int]]] | None = None
        # (num, const, zpow, factors, cache): the element is num / (const z^zpow prod f^e)
        # with the denominator kept factored (docs/theory.md, section 16)
        self._hint: tuple | None = None

    @property
    def den(self) -> flint.fmpz_poly:
        """The denominator polynomial (expanded on first use when it is kept factored)."""
        den = self._den
        if den is None:
            _, const, zpow, factors, cache = self._hint  # type: ignore[misc]
            den = (_factor_product(factors, cache) * const).left_shift(zpow)
            self._den = den
        return den

    @classmethod
    def with_known_denominator(
        cls,
        num: flint.fmpz_poly,
        den: flint.fmpz_poly | None,
        parts: tuple[int, int, Sequence[tuple[flint.fmpz_poly, int]]],
        cache: dict | None = None,
        field: Fraction | None = None,
    ) -> QzElem:
        """``num / den`` where ``den = const z^zpow prod f^e`` (``parts``).

        ``den`` may be None: the denominator is then kept factored and expanded only if
        :attr:`den` is read (the exact route's rows are printed from the factors, so a
        region of many rows holds one polynomial per row, not two).  ``factors`` must be
        distinct primitive irreducible polynomials with positive leading coefficient,
        other than ``z``, and ``const`` nonzero.  The canonical form is computed as
        :meth:`reduced` does, only when asked for.
        """
        out = cls.__new__(cls)
        const, zpow, factors = parts
        if not const:
            raise ZeroDivisionError("QzElem with zero denominator")
        out.num = num
        out._den = den
        out.field = field
        out._canon = None
        out.den_factors = None
        out._hint = (num, const, zpow, factors, cache)
        return out

    def factored(
        self,
    ) -> tuple[flint.fmpz_poly, int, int, list[tuple[flint.fmpz_poly, int]]] | None:
        """``(num, const, zpow, factors)`` with ``self = num / (const z^zpow prod f^e)``.

        Known when the element was built with its denominator factored (the canonical
        form when it was computed, else the form it was built with); None otherwise.
        """
        if self._canon is not None and self.den_factors is not None:
            const, parts = self.den_factors
            zpow = sum(e for f, e in parts if _is_z(f))
            return self._canon[0], const, zpow, [(f, e) for f, e in parts if not _is_z(f)]
        if self._hint is not None:
            num, const, zpow, factors, _ = self._hint
            return num, const, zpow, list(factors)
        return None

    def den_height_bits(self) -> int:
        """``den.height_bits()``, or a bound on it for a factored denominator.

        A factored denominator is not expanded: the bits of ``const`` plus a bound on the
        height bits of ``prod f^e`` from the factors' l1 norms (a start precision for the
        decimals, docs/theory.md section 16: a bound is all it needs).
        """
        if self._den is not None or self._hint is None:
            return self.den.height_bits()
        _, const, _, factors, _ = self._hint
        return _factor_height_bits(factors) + abs(int(const)).bit_length()

    @classmethod
    def reduced(
        cls,
        num: flint.fmpz_poly,
        const: int,
        zpow: int,
        factors: Sequence[tuple[flint.fmpz_poly, int]],
        cache: dict | None = None,
    ) -> QzElem:
        """``num / (const z^zpow prod f^e)`` in canonical form, by trial division only.

        ``factors`` must be distinct primitive irreducible polynomials other than ``z``
        (e.g. from one small ``factor()`` call): then cancelling each of them, ``z`` and the
        integer content is the full gcd, at the cost of a few divisions instead of a gcd
        of two large polynomials (docs/theory.md, section 16).  ``cache`` (a dict) keeps
        denominators between calls that share ``factors``.
        """
        if num.is_zero():
            return cls(_ZERO_POLY)
        num, const, zpow, left = reduce_factored(num, const, zpow, factors)
        den = (_factor_product(left, cache) * const).left_shift(zpow)
        out = cls(num, den)
        out._canon = (num, den)
        parts = ([(flint.fmpz_poly([0, 1]), zpow)] if zpow else []) + left
        out.den_factors = (const, parts)
        return out

    # -- constructors -------------------------------------------------------------------
    @classmethod
    def from_rational(cls, c: Fraction | int) -> QzElem:
        """The constant ``c``."""
        c = Fraction(c)
        return cls(*_poly_from_fraction(c))

    @classmethod
    def monomial(cls, c: Fraction | int, n: int) -> QzElem:
        """``c * z**n`` for any integer ``n``."""
        c = Fraction(c)
        num, den = _poly_from_fraction(c)
        if n >= 0:
            return cls(num.left_shift(n), den)
        return cls(num, den.left_shift(-n))

    @classmethod
    def coerce(cls, value: QzElem | Fraction | int) -> QzElem:
        """Accept an element or a rational constant."""
        if isinstance(value, QzElem):
            return value
        if isinstance(value, (int, Fraction)) and not isinstance(value, bool):
            return cls.from_rational(value)
        raise TypeError(f"cannot use {type(value).__name__} {value!r} as an element of Q(z)")

    # -- arithmetic ---------------------------------------------------------------------
    def __add__(self, other: QzElem | Fraction | int) -> QzElem:
        o = QzElem.coerce(other)
        f = _same_field(self, o)
        if self.den == o.den:
            return QzElem(self.num + o.num, self.den, f)
        if o.den.is_one():
            return QzElem(self.num + o.num * self.den, self.den, f)
        if self.den.is_one():
            return QzElem(self.num * o.den + o.num, o.den, f)
        g = self.den.gcd(o.den)
        if g.is_one():
            return QzElem(self.num * o.den + o.num * self.den, self.den * o.den, f)
        a, b = self.den // g, o.den // g
        return QzElem(self.num * b + o.num * a, a * o.den, f)

    __radd__ = __add__

    def __neg__(self) -> QzElem:
        return QzElem(-self.num, self.den, self.field)

    def __sub__(self, other: QzElem | Fraction | int) -> QzElem:
        return self + (-QzElem.coerce(other))

    def __rsub__(self, other: QzElem | Fraction | int) -> QzElem:
        return QzElem.coerce(other) + (-self)

    def __mul__(self, other: QzElem | Fraction | int) -> QzElem:
        o = QzElem.coerce(other)
        return QzElem(self.num * o.num, self.den * o.den, _same_field(self, o))

    __rmul__ = __mul__

    def __truediv__(self, other: QzElem | Fraction | int) -> QzElem:
        o = QzElem.coerce(other)
        if o.num.is_zero():
            raise ZeroDivisionError("division by the zero element of Q(z)")
        return QzElem(self.num * o.den, self.den * o.num, _same_field(self, o))

    def __rtruediv__(self, other: QzElem | Fraction | int) -> QzElem:
        return QzElem.coerce(other) / self

    def __pow__(self, n: int) -> QzElem:
        if n >= 0:
            return QzElem(self.num**n, self.den**n, self.field)
        return (1 / self) ** (-n)

    def inflate(self, m: int) -> QzElem:
        """Substitute ``z -> z**m`` (used when a domain's generator is refined)."""
        if m == 1:
            return self
        field = self.field / m if self.field is not None else None
        return QzElem(self.num.inflate(m), self.den.inflate(m), field)

    # -- exact tests ----------------------------------------------------------------------
    def is_zero(self) -> bool:
        """Exact zero test (z is transcendental, so only the zero polynomial vanishes)."""
        return self.num.is_zero()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (int, Fraction)) and not isinstance(other, bool):
            other = QzElem.from_rational(other)
        if not isinstance(other, QzElem):
            return NotImplemented
        _same_field(self, other)
        return self.num * other.den == other.num * self.den

    @property
    def canonical(self) -> tuple[flint.fmpz_poly, flint.fmpz_poly]:
        """Reduced ``(num, den)``: coprime over Z, ``den`` with positive leading coefficient."""
        if self._canon is None and self._hint is not None:
            red = QzElem.reduced(*self._hint)
            self._canon, self.den_factors = red._canon, red.den_factors
        if self._canon is None:
            num, den = self.num, self.den
            if num.is_zero():
                num, den = _ZERO_POLY, _ONE_POLY
            else:
                g = num.gcd(den)
                if not g.is_one():
                    num, den = num // g, den // g
                if den.leading_coefficient() < 0:
                    num, den = -num, -den
            self._canon = (num, den)
        return self._canon

    def __hash__(self) -> int:
        value = self.as_rational()
        if value is not None:  # equal to a Fraction, so hash like one
            return hash(value)
        num, den = self.canonical
        return hash((tuple(int(c) for c in num.coeffs()), tuple(int(c) for c in den.coeffs())))

    def monomial_parts(self) -> tuple[Fraction, int] | None:
        """``(c, n)`` with ``self = c z^n`` (any integer n), or None if not a monomial."""
        num, den = self.num, self.den
        ni = [i for i, c in enumerate(num.coeffs()) if c]
        di = [i for i, c in enumerate(den.coeffs()) if c]
        if len(ni) != 1 or len(di) != 1:
            num, den = self.canonical  # e.g. (z^3 - z^2) / (z - 1)
            ni = [i for i, c in enumerate(num.coeffs()) if c]
            di = [i for i, c in enumerate(den.coeffs()) if c]
            if len(ni) != 1 or len(di) != 1:
                return None
        c = Fraction(int(num.coeffs()[ni[0]]), int(den.coeffs()[di[0]]))
        return c, ni[0] - di[0]

    def as_rational(self) -> Fraction | None:
        """The value as a Fraction when it does not depend on z, else None."""
        num, den = self.canonical
        if num.degree() <= 0 and den.degree() == 0:
            n = int(num.coeffs()[0]) if not num.is_zero() else 0
            return Fraction(n, int(den.coeffs()[0]))
        return None

    def __repr__(self) -> str:
        num, den = self.canonical
        return f"QzElem(({num})/({den}))"


#: What the exact entry points accept: strings, integers, rationals, sympy expressions and
#: elements of Q(z).
ExactLike = Union[str, int, Fraction, "sympy.Basic", "QzElem"]
