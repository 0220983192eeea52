"""Exact number domain: the field Q(z), z = e^g, and exponents in Q + Q log 2 + Q log 3 + ...

Every privacy parameter the engine touches is exact (docs/theory.md, sections 1 and 3):

* An epsilon (a privacy-loss value) is a Q-linear combination of 1 and logarithms of
  primes, ``eps = r + sum_p c_p log p``.  Given the epsilons of a problem, the
  :class:`ExpDomain` picks generators ``g0 = gcd`` of the rational parts and the primes
  that occur, and writes each epsilon as an integer vector ``n`` with
  ``eps = n_0 g0 + sum_i n_i log p_i``.  The numbers ``1, log 2, log 3, ...`` are linearly
  independent over Q (Lindemann, unique factorisation), so two epsilons are equal exactly
  when their vectors are: the zero test is exact.
* ``e^eps = (prod_i p_i^{n_i}) z^{n_0}`` with ``z = e^{g0}`` transcendental, so every delta,
  alpha, slope and breakpoint is an element of the rational function field Q(z); a
  :class:`QzElem` holds it as a quotient of two integer polynomials (FLINT ``fmpz_poly``).
  A nonzero polynomial does not vanish at a transcendental point, so again the zero test
  is exact, and the sign of a nonzero element is decided by ball arithmetic at increasing
  precision (:func:`certified_sign`), never by a float comparison.

Floats are rejected at the boundary (:func:`parse_exact`): ``"0.3"`` means 3/10.
Decimal output (:meth:`ExpDomain.decimal`) is correct to one unit in the last place.

The subpackage has one module per job, imported bottom up: :mod:`.format` (numbers as
text) and :mod:`.parsing` (input), :mod:`.certify` (signs and digits by balls),
:mod:`.forms` (exponents), :mod:`.qz` (elements of Q(z)), :mod:`.closed` (the
polynomials a closed form is printed from), :mod:`.domain` (the domain),
:mod:`.rowforms` (the printed exact forms of many elements, made together).
"""

from __future__ import annotations

from .certify import MAX_DIGITS, MAX_PREC_BITS, certified_sign, check_digits
from .domain import ExpDomain, Loss, domain_for, read_structured
from .format import ball_to_decimal, int_str, rat_str
from .forms import LinearForm, check_query_size, linear_form
from .parsing import (  # noqa: F401  (Exact: the type of parse_exact's result)
    MAX_INPUT_DIGITS,
    Exact,
    parse_exact,
    parse_float_field,
    parse_int,
    parse_rational,
)
from .qz import ExactLike, QzElem

__all__ = [
    "ExactLike",
    "parse_exact",
    "parse_float_field",
    "parse_rational",
    "LinearForm",
    "linear_form",
    "QzElem",
    "ExpDomain",
    "Loss",
    "certified_sign",
    "ball_to_decimal",
    "MAX_PREC_BITS",
    "domain_for",
    "int_str",
    "rat_str",
    "check_query_size",
    "check_digits",
    "MAX_DIGITS",
    "MAX_INPUT_DIGITS",
    "parse_int",
    "read_structured",
]
