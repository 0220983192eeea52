"""Certified signs and digits: Arb balls at increasing precision, after exact zero tests.

A nonzero element of the exact field does not vanish at the transcendental point where it
is evaluated (docs/theory.md, section 3), so its sign is decided by ball arithmetic at
increasing precision (:func:`certified_sign`), never by a float comparison; a decimal is
printed only once a ball certifies its digits to one unit in the last place
(docs/theory.md, section 13).  The working precision is at most :data:`MAX_PREC_BITS`.
"""

from __future__ import annotations

from collections.abc import Callable

import flint

from ..errors import CertificationError, InvalidParameterError
from .format import ball_to_decimal

__all__ = ["MAX_PREC_BITS", "MAX_DIGITS", "certified_sign", "check_digits"]

MAX_PREC_BITS = 1 << 20


def certified_sign(
    evaluate: Callable[[int], flint.arb],
    is_zero: bool,
    what: str = "quantity",
    *,
    zero_test: Callable[[], bool] | None = None,
    max_bits: int = MAX_PREC_BITS,
) -> int:
    """Sign of a real number known exactly but evaluated by balls.

    This is the one routine through which every sign decision goes (the one
    precision-doubling loop of the package).

    Args:
        evaluate: returns a ball containing the number at the given working precision
            (bits); called at increasing precision until the ball excludes 0.
        is_zero: the result of the exact zero test (then no evaluation happens).
        what: description used if the sign cannot be decided.
        zero_test: a costlier exact zero test, tried once when balls at 256 bits do not
            decide (a number that is exactly 0 never gets a ball excluding 0).
        max_bits: the largest working precision tried.

    Returns:
        -1, 0 or 1.

    Raises:
        CertificationError: if the sign is not decided by ``max_bits`` bits.
    """
    if is_zero:
        return 0
    prec = 64
    while prec <= max_bits:
        ball = evaluate(prec)
        if ball > 0:
            return 1
        if ball < 0:
            return -1
        if ball.is_exact() and ball.is_zero():
            return 0  # a radius-0 enclosure of 0
        if prec == 256 and zero_test is not None and zero_test():
            return 0
        prec *= 2
    raise CertificationError(
        f"could not decide the sign of {what} with {max_bits} bits of precision"
    )


MAX_DIGITS = 100_000  # significant digits of a printed decimal (about 332,000 bits)


def check_digits(digits: int) -> int:
    """Validate a number of significant digits (1 to :data:`MAX_DIGITS`)."""
    if isinstance(digits, bool) or not isinstance(digits, int) or not 1 <= digits <= MAX_DIGITS:
        raise InvalidParameterError(
            f"digits = {digits!r} must be an integer from 1 to {MAX_DIGITS}"
        )
    return digits


def _decimal_from(evaluate: Callable[[int], flint.arb], digits: int, prec: int) -> str:
    check_digits(digits)
    while prec <= MAX_PREC_BITS:
        out = ball_to_decimal(evaluate(prec), digits)
        if out is not None:
            return out
        prec *= 2
    raise CertificationError(f"could not certify {digits} digits with {MAX_PREC_BITS} bits")
