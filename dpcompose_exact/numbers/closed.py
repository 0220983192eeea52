"""The structure of a printed closed form: the polynomials its string was written from.

Every exact string the package prints for a delta or an ``eps(delta)`` is written from
polynomials in ``z = e^{g0}`` (:meth:`~.domain.ExpDomain.elem_closed_form`,
:class:`~.rowforms.RowForms`, the ``A - exp(eps) B`` form of a query between two losses,
docs/theory.md, section 3).  :class:`ClosedParts` keeps those polynomials next to the
string, as they were printed (the denominator in the factors written), so that the
readable forms of the presentation layer are made from them, never by reading the
string back.  :meth:`ClosedParts.exponents` are the ``exp(...)`` arguments the string
holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import flint

from .qz import QzElem

__all__ = ["ClosedParts", "ClosedTerm", "elem_parts", "factored_parts"]

_Z = flint.fmpz_poly([0, 1])


@dataclass(frozen=True)
class ClosedTerm:
    """``sign * e^{shift} * num(z) / (const * prod f(z)^e)``, as printed.

    Attributes:
        sign: +1 or -1.
        shift: the rational ``shift`` of the factor ``e^{shift}`` (0: none); None when the
            factor is not a rational exponential (``exp(1/2 + log(3))``).
        num: the numerator, an integer polynomial in ``z``.
        const: the constant of the denominator (nonzero).
        factors: the denominator's factors ``(f, e)`` as printed (``z`` itself included).
    """

    sign: int
    shift: Fraction | None
    num: flint.fmpz_poly
    const: int
    factors: tuple[tuple[flint.fmpz_poly, int], ...]


@dataclass(frozen=True)
class ClosedParts:
    """A closed form as the sum of its :class:`ClosedTerm` over ``z = e^{g0}``.

    Attributes:
        g0: the generator of ``z`` (None: the terms are constants).
        terms: the terms of the sum.
        log: the form is ``log(...)`` of the sum (an exact ``eps(delta)``).
    """

    g0: Fraction | None
    terms: tuple[ClosedTerm, ...]
    log: bool = False

    def exponents(self) -> tuple[Fraction | None, Fraction]:
        """The gcd and the largest absolute value of the string's ``exp`` arguments.

        ``(None, 0)`` when it has none.  Integer arithmetic on the exponent indices: a
        long form holds thousands of them.
        """
        idx = 0  # gcd of the indices of z written
        top = 0  # largest index written
        shifts: list[Fraction] = []
        for t in self.terms:
            for p in (t.num, *(f for f, _ in t.factors)):
                coeffs = p.coeffs()
                for i in range(1, len(coeffs)):
                    if coeffs[i]:
                        idx = math.gcd(idx, i)
                if len(coeffs) > 1:
                    top = max(top, len(coeffs) - 1)
            if t.shift:
                shifts.append(abs(t.shift))
        g = Fraction(0)
        if idx and self.g0 is not None:
            g = self.g0 * idx
        big = self.g0 * top if top and self.g0 is not None else Fraction(0)
        for s in shifts:
            g = Fraction(math.gcd(g.numerator * s.denominator, s.numerator * g.denominator),
                         g.denominator * s.denominator)
            big = max(big, s)
        return (g or None), big

    @property
    def readable(self) -> bool:
        """Whether every term is a rational function of one exponential (no logarithms)."""
        return all(t.shift is not None for t in self.terms)


def factored_parts(
    g0: Fraction | None,
    num: flint.fmpz_poly,
    const: int,
    zpow: int,
    left: list[tuple[flint.fmpz_poly, int]],
) -> ClosedParts:
    """The parts of ``num / (const z^zpow prod left)`` (:class:`~.rowforms.RowForms`)."""
    factors = ((_Z, zpow),) if zpow else ()
    return ClosedParts(g0, (ClosedTerm(1, Fraction(0), num, int(const), factors + tuple(left)),))


def _elem_term(x: QzElem, sign: int = 1, shift: Fraction | None = Fraction(0)) -> ClosedTerm:
    """The term of an element as :meth:`~.domain.ExpDomain.elem_closed_form` prints it."""
    num, den = x.canonical
    if den.is_one():
        return ClosedTerm(sign, shift, num, 1, ())
    content, factors = x.den_factors if x.den_factors is not None else den.factor()
    return ClosedTerm(sign, shift, num, int(content), tuple((f, int(e)) for f, e in factors))


def elem_parts(
    g0: Fraction | None,
    x: QzElem,
    log: bool = False,
    minus: tuple[QzElem, Fraction | None] | None = None,
) -> ClosedParts:
    """The parts of an element as printed (``log(x)`` with ``log``; ``x - e^s y`` with ``minus``).

    ``minus = (y, s)``: the form ``A - exp(eps)*B`` of a query between two losses, ``s``
    the rational ``eps`` (None: ``eps`` has logarithms).
    """
    terms = [_elem_term(x)]
    if minus is not None:
        terms.append(_elem_term(minus[0], -1, minus[1]))
    return ClosedParts(g0, tuple(terms), log)
