"""Conversions between exact numbers and Arb balls, digits and bits: one place for each.

* :func:`ball` -- an exact rational as an Arb ball (exact when the working precision holds
  it; else the tightest enclosure Arb gives);
* :func:`digits_to_bits` / :func:`bits_to_digits` -- ``log2(10)`` bits per decimal digit,
  rounded so that the bits always hold the digits (plus a guard the caller names);
* :func:`parse_delta` -- the one validation of a delta, exact and in ``[0, 1)``.

>>> from fractions import Fraction
>>> ball(Fraction(1, 4))
0.250000000000000
>>> digits_to_bits(30), bits_to_digits(100)
(100, 30)
>>> parse_delta("1e-5")
Fraction(1, 100000)
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError
from .parsing import parse_rational

__all__ = ["ball", "digits_to_bits", "bits_to_digits", "parse_delta", "LOG2_10"]

#: bits per decimal digit
LOG2_10 = math.log2(10)


def ball(q: Fraction | int) -> flint.arb:
    """The rational ``q`` as an Arb ball at the current working precision."""
    q = Fraction(q)
    return flint.arb(flint.fmpq(q.numerator, q.denominator))


def digits_to_bits(digits: int, guard: int = 0) -> int:
    """Bits that hold ``digits`` significant decimal digits, plus ``guard`` bits."""
    return math.ceil(digits * LOG2_10) + guard


def bits_to_digits(bits: int) -> int:
    """Decimal digits that ``bits`` bits hold in full."""
    return math.floor(bits / LOG2_10)


def parse_delta(value: Any, what: str = "delta") -> Fraction:
    """A delta parsed exactly and checked to lie in ``[0, 1)`` (the one such check).

    Raises:
        InvalidParameterError: not a number, or outside ``[0, 1)`` (the message shows the
            value and the range).
    """
    d = parse_rational(value, what)
    if not 0 <= d < 1:
        raise InvalidParameterError(f"{what} = {value!r} is outside the valid range [0, 1)")
    return d
