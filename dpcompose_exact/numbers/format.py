"""Numbers as text: the one place where a number becomes a string.

Exact integers and rationals are printed by FLINT (no 4300-digit limit of ``str(int)``);
a ball is printed only when its digits are certified: the decimal returned by
:func:`ball_to_decimal` is within one unit in the last place of every point of the ball
(docs/theory.md, section 13).  Every layer of the package may import this module.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import flint

__all__ = ["int_str", "rat_str", "ball_to_decimal"]


def int_str(n: int | flint.fmpz) -> str:
    """Decimal digits of an integer of any size.

    Python's ``str(int)`` refuses more than 4300 digits unless a process-global limit is
    raised; FLINT's conversion has no limit and is quasi-linear.
    """
    return str(flint.fmpz(n))


def rat_str(q: Fraction) -> str:
    """``"p/q"`` (or ``"p"``) for a rational of any size."""
    if q.denominator == 1:
        return int_str(q.numerator)
    return f"{int_str(q.numerator)}/{int_str(q.denominator)}"


def _short(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:40] + "..." + text[-12:]


def ball_to_decimal(ball: flint.arb, digits: int) -> str | None:
    """Round a ball's midpoint to ``digits`` significant digits, if that is certified.

    Returns the decimal string when the ball is narrow enough that the result is within
    one unit in the last place of every point of the ball, else None (evaluate again at a
    higher precision).
    """
    if not ball.is_finite():
        return None
    mid, rad, exp = ball.mid_rad_10exp(digits)
    mid, rad, exp = int(mid), int(rad), int(exp)
    if mid == 0:
        return None
    # |value - mid*10^exp| <= rad*10^exp; require rad < 1 unit of the digits-th digit.
    ndig = len(int_str(abs(mid)))
    if ndig > digits:
        drop = ndig - digits
        q, r = divmod(abs(mid), 10**drop)
        if 2 * r >= 10**drop:
            q += 1
        # error <= rad * 10^-drop + 1/2 units of the new last place; keep it below 1
        if 2 * rad >= 10**drop:
            return None
        if q == 10**digits:  # rounding carried into a new leading digit
            q //= 10
            exp += 1
        mid = q if mid > 0 else -q
        exp += drop
    elif rad >= 1:
        return None
    return _format_scaled(mid, exp)


def _format_scaled(mid: int, exp: int) -> str:
    """Format ``mid * 10**exp`` as a plain decimal (scientific notation when tiny/huge)."""
    sign = "-" if mid < 0 else ""
    digits = int_str(abs(mid))
    point = len(digits) + exp  # position of the decimal point from the left
    if -6 < point <= 0:
        return f"{sign}0.{'0' * (-point)}{digits}"
    if 0 < point < len(digits):
        return f"{sign}{digits[:point]}.{digits[point:]}"
    if len(digits) <= point <= 21:
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mant}e{point - 1:+d}"


# ---------------------------------------------------------------------------------------
# The domain
# ---------------------------------------------------------------------------------------
