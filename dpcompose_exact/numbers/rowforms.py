"""The printed exact forms of many elements of one domain, made together and on demand.

A region of the exact route has one delta per loss value, each ``num / den`` with a
denominator known factored (``const z^zpow prod f^e``, docs/theory.md, section 16).  Its
closed form (:meth:`~.domain.ExpDomain.elem_closed_form`) and its structured form
(:meth:`~.domain.ExpDomain.structured`) print the same numerator coefficients, and
neighbouring rows often share their denominator up to the power of ``z``.
:class:`RowForms` makes both strings of one element at once: each coefficient is
converted to decimal once, the denominator's coefficients are kept for the next rows (a
small cache), and the canonical form is computed for printing without being stored on
the element (a region of thousands of rows keeps one polynomial per row).  The strings are
exactly those of the two :class:`~.domain.ExpDomain` methods (tests compare them).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import flint

from . import domain as _domain
from .format import int_str, rat_str, sum_text
from .qz import QzElem, _factor_key, _factor_product, reduce_factored

__all__ = ["RowForms", "DigitPairs"]

_DEN_CACHE = 4  # denominators kept (rows alternate between a few of them)


class DigitPairs(list):
    """A list of ``[decimal integer string, exponent]`` pairs, made here from FLINT integers.

    A plain list in every respect; the JSON writer (:mod:`dpcompose_exact.presentation.jsonstream`)
    recognises it and writes the strings without scanning them for characters to escape.
    """

    __slots__ = ()


class RowForms:
    """Closed and structured forms of the elements of one domain (see module docstring)."""

    def __init__(self, domain: _domain.ExpDomain) -> None:
        self.domain = domain
        self._zs: dict[int, str] = {}
        self._dens: OrderedDict[tuple, list[tuple[str, int]]] = OrderedDict()
        self._prods: dict = {}
        self._g = rat_str(domain.g0) if domain.g0 is not None else "0"

    def _z(self, i: int) -> str:
        text = self._zs.get(i)
        if text is None:
            assert self.domain.g0 is not None
            text = self._zs[i] = f"exp({rat_str(self.domain.g0 * i)})"
        return text

    def _poly_text(self, terms: list[tuple[int, str]]) -> str:
        """:meth:`ExpDomain._poly_str` from ``(exponent, decimal coefficient)`` pairs."""
        zs = self._z
        out = []
        for i, s in terms:
            neg = s[0] == "-"
            mag = s[1:] if neg else s
            if i == 0:
                term = mag
            elif mag == "1":
                term = zs(i)
            else:
                term = f"{mag}*{self._zs[i] if i in self._zs else zs(i)}"
            out.append((neg, term))
        return sum_text(out)

    def _den_terms(self, const: int, left: list[tuple[flint.fmpz_poly, int]]) -> list:
        key = (const, _factor_key(left))
        terms = self._dens.get(key)
        if terms is None:
            prod = _factor_product(left, self._prods) * const
            terms = [(str(c), j) for j, c in enumerate(prod.coeffs()) if c]
            self._dens[key] = terms
            if len(self._dens) > _DEN_CACHE:
                self._dens.popitem(last=False)
        else:
            self._dens.move_to_end(key)
        return terms

    def forms(
        self, x: QzElem, closed: bool = True, structured: bool = True
    ) -> tuple[str | None, dict[str, Any] | None]:
        """``(closed form, structured form)`` of ``x`` (None for the one not asked for)."""
        closed_text, struct, _ = self.forms_and_reduced(x, closed, structured)
        return closed_text, struct

    def forms_and_reduced(
        self, x: QzElem, closed: bool = True, structured: bool = True
    ) -> tuple[str | None, dict[str, Any] | None, QzElem]:
        """:meth:`forms`, and ``x`` in lowest terms.

        The reduced element keeps its denominator factored and is not stored on ``x``: it
        is the cheaper one to evaluate for the decimals.
        """
        parts = x.factored()
        if parts is None or parts[0].is_zero():
            dom = self.domain
            return (
                dom.elem_closed_form(x) if closed else None,
                dom.structured(x) if structured else None,
                x,
            )
        if x._canon is not None and x.den_factors is not None:  # factored() is canonical
            num, const, zpow, left = parts
        else:
            num, const, zpow, left = reduce_factored(*parts)
        red = QzElem.with_known_denominator(num, None, (const, zpow, left), self._prods, x.field)
        terms = [(i, str(c)) for i, c in enumerate(num.coeffs()) if c]
        closed_text = self._closed(terms, const, zpow, left) if closed else None
        struct = None
        if structured:
            den = DigitPairs([[s, j + zpow] for s, j in self._den_terms(const, left)])
            struct = {"g": self._g, "num": DigitPairs([[s, i] for i, s in terms]), "den": den}
        return closed_text, struct, red

    def _closed(self, terms: list[tuple[int, str]], const: int, zpow: int, left: list) -> str:
        ns = self._poly_text(terms)
        if const == 1 and not zpow and not left:  # the denominator is 1
            return ns
        factors = ([(flint.fmpz_poly([0, 1]), zpow)] if zpow else []) + left
        parts = [] if const == 1 else [int_str(const)]
        for poly, e in factors:
            text = self._poly_text([(i, str(c)) for i, c in enumerate(poly.coeffs()) if c])
            if poly.degree() > 0 and len([c for c in poly.coeffs() if c]) > 1:
                text = f"({text})"
            parts.append(text if e == 1 else f"{text}**{e}")
        if len(terms) > 1 or ns.startswith("-"):
            ns = f"({ns})"
        den_str = "*".join(parts)
        return f"{ns}/({den_str})" if len(parts) > 1 else f"{ns}/{den_str}"
