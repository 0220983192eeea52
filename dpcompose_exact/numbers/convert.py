"""Conversions between exact numbers and Arb balls, digits and bits: one place for each.

* :func:`rational_ball` -- an exact rational as an Arb ball (exact when the working
  precision holds it; else the tightest enclosure Arb gives);
* :func:`ball_end` -- the upper or lower end of a ball as an exact rational (a dyadic
  number), the one way back from a ball to the exact field;
* :func:`binary_power` -- ``acc * base^n`` by repeated squaring, for any product;
* :func:`digits_to_bits` / :func:`bits_to_digits` -- ``log2(10)`` bits per decimal digit,
  rounded so that the bits always hold the digits (plus a guard the caller names);
* :func:`parse_eps`, :func:`parse_delta`, :func:`parse_t` -- the one validation of a query
  point each: an exact epsilon ``>= 0`` (a linear form), a delta in ``[0, 1)``, a type I
  error in ``[0, 1]``.  The front door parses every query once, with these.

>>> from fractions import Fraction
>>> rational_ball(Fraction(1, 4))
0.250000000000000
>>> digits_to_bits(30), bits_to_digits(100)
(100, 30)
>>> parse_delta("1e-5"), parse_t("1/2")
(Fraction(1, 100000), Fraction(1, 2))
>>> str(parse_eps("log(2) + 1/2"))
'log(2) + 1/2'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any, TypeVar

import flint

from ..errors import InvalidParameterError
from .format import _short
from .forms import LinearForm, check_query_size, linear_form
from .parsing import parse_exact, parse_rational

__all__ = [
    "rational_ball",
    "erfc_halves",
    "ball_end",
    "binary_power",
    "digits_to_bits",
    "bits_to_digits",
    "parse_eps",
    "parse_delta",
    "parse_t",
    "LOG2_10",
]

#: bits per decimal digit
LOG2_10 = math.log2(10)


def log_fraction(x: Fraction) -> float:
    """``log x`` of a positive rational as a float, for any size (-inf for 0).

    ``math.log(float(x))`` fails for ``x`` below the doubles' range (``1e-4000`` is 0.0);
    the logarithms of its numerator and denominator are always finite.

    >>> round(log_fraction(Fraction(1, 10**4000)), 3)
    -9210.34
    """
    if x <= 0:
        return -math.inf
    return math.log(x.numerator) - math.log(x.denominator)


def rational_ball(q: Fraction | int) -> flint.arb:
    """The rational ``q`` as an Arb ball at the current working precision."""
    q = Fraction(q)
    return flint.arb(flint.fmpq(q.numerator, q.denominator))


def erfc_ball(x: flint.arb) -> flint.arb:
    """``erfc`` of a ball as the union of its values at the ball's two exact ends.

    erfc is decreasing, so this contains erfc of every point of the ball.  Arb's erfc of an
    inexact ball far in the tail (x ~ 5e8, radius 4e-22) returns [0 +/- e^-(x^2)], with no
    relative accuracy (which a factor e^t then blows up); at exact points it is accurate.
    """
    if x.rad() == 0:
        return x.erfc()
    return x.upper().erfc().union(x.lower().erfc())


def erfc_halves(v: flint.arb) -> tuple[flint.arb, flint.arb]:
    """``(erfc(v)/2, erfc(-v)/2)``: the two normal tails at ``-v sqrt 2`` and ``v sqrt 2``.

    The smaller one is computed from its own tail (relatively accurate however small it is),
    the other as 1 minus it; which one is smaller is a choice of accuracy only (both
    formulas enclose the same numbers), so the midpoint's sign decides it.
    """
    if v.mid() > 0:
        f = erfc_ball(v) / 2
        return f, 1 - f
    g = erfc_ball(-v) / 2
    return 1 - g, g


def ball_end(ball: flint.arb, up: bool = True) -> Fraction:
    """The upper (``up``) or lower end of an Arb ball, exactly: a dyadic rational.

    Every point of the ball lies at or below ``ball_end(ball)`` and at or above
    ``ball_end(ball, up=False)``.

    >>> ball_end(flint.arb(3) / 4)
    Fraction(3, 4)
    >>> ball_end(flint.arb(1, 0.25)) >= Fraction(5, 4) >= 1 >= ball_end(flint.arb(1, 0.25), False)
    True
    """
    end = ball.upper() if up else ball.lower()
    man, exp = (int(v) for v in end.mid().man_exp())
    return Fraction(man) * Fraction(2) ** exp


T = TypeVar("T")


def binary_power(base: T, n: int, mul: Callable[[T, T], T], acc: T | None = None) -> T | None:
    """``acc * base^n`` by repeated squaring with the product ``mul`` (``acc`` None: 1).

    About ``2 log2(n)`` products; ``n = 0`` returns ``acc``.  The products are taken in
    the order of the bits of ``n``, lowest first, so a caller can check a deadline or a
    budget in ``mul``.

    >>> binary_power(3, 5, lambda a, b: a * b), binary_power(3, 0, lambda a, b: a * b, 7)
    (243, 7)
    """
    while n:
        if n & 1:
            acc = base if acc is None else mul(acc, base)
        n >>= 1
        if n:
            base = mul(base, base)
    return acc


def digits_to_bits(digits: int, guard: int = 0) -> int:
    """Bits that hold ``digits`` significant decimal digits, plus ``guard`` bits."""
    return math.ceil(digits * LOG2_10) + guard


def bits_to_digits(bits: int) -> int:
    """Decimal digits that ``bits`` bits hold in full."""
    return math.floor(bits / LOG2_10)


def parse_eps(value: Any, what: str = "eps") -> LinearForm:
    """An epsilon parsed exactly (a linear form in 1 and logarithms), checked ``>= 0``.

    A :class:`~dpcompose_exact.numbers.forms.LinearForm` (a query already parsed at the
    front door) is returned as it is: the engines read either.

    Raises:
        InvalidParameterError: not an exact epsilon of the field, too large, or negative.
    """
    if isinstance(value, LinearForm):
        return value
    form = linear_form(parse_exact(value, what), what)
    check_query_size(form, what, value)
    if form.sign() < 0:
        raise InvalidParameterError(f"{what} = {value!r} is negative; valid range: {what} >= 0")
    return form


def parse_t(value: Any, what: str = "t") -> Fraction:
    """A type I error parsed exactly and checked to lie in ``[0, 1]``."""
    q = parse_rational(value, what)
    if not 0 <= q <= 1:
        raise InvalidParameterError(f"{what} = {value!r} is outside the valid range [0, 1]")
    return q


def parse_delta(value: Any, what: str = "delta") -> Fraction:
    """A delta parsed exactly and checked to lie in ``[0, 1)`` (the one such check).

    Raises:
        InvalidParameterError: not a number, or outside ``[0, 1)`` (the message shows the
            value and the range).
    """
    d = parse_rational(value, what)
    if not 0 <= d < 1:
        raise InvalidParameterError(f"{what} = {_short(value)} is outside the valid range [0, 1)")
    check_query_size(LinearForm(d), what, value)
    return d

