"""Numbers as text: the one place where a number becomes a string.

Exact integers and rationals are printed by FLINT (no 4300-digit limit of ``str(int)``);
a ball is printed only when its digits are certified: the decimal returned by
:func:`ball_to_decimal` is within one unit in the last place of every point of the ball
(docs/theory.md, section 13).  Every layer of the package may import this module.
"""

from __future__ import annotations

import math
import re
from decimal import (
    MAX_EMAX,
    MIN_EMIN,
    ROUND_CEILING,
    ROUND_FLOOR,
    Decimal,
    Inexact,
    InvalidOperation,
    localcontext,
)
from fractions import Fraction
from typing import Any

import flint

from ..errors import CertificationError

__all__ = [
    "short_enclosure",
    "exact_decimal",
    "readable_exact",
    "compact_exact",
    "sum_text",
    "FLAT_SUM_TERMS",
    "int_str",
    "rat_str",
    "ball_to_decimal",
    "fraction_decimal",
    "round_decimal",
    "exact_or_rounded",
    "float_str",
    "float_text",
    "mpf_str",
    "distinct_decimals",
    "outward_decimal",
    "directed_digits",
    "directed_ends",
    "directed_rational",
    "ROUNDINGS",
    "check_rounding",
    "directed_decimal",
    "rounding_note",
    "decimal_or_interval",
    "latex_decimal",
    "latex_input",
    "latex_epsilon",
]


def int_str(n: int | flint.fmpz) -> str:
    """Decimal digits of an integer of any size.

    Python's ``str(int)`` refuses more than 4300 digits unless a process-global limit is
    raised; FLINT's conversion has no limit and is quasi-linear.  Integers of up to 1000
    digits (every printed decimal's digits, millions of times in a large region's rows)
    go through ``str`` directly, without a conversion to ``fmpz``.

    >>> int_str(10**5000 + 1)[-3:], int_str(-42)
    ('001', '-42')
    """
    if type(n) is int and n.bit_length() <= 3300:  # at most 994 digits
        return str(n)
    return str(flint.fmpz(n))


def rat_str(q: Fraction) -> str:
    """``"p/q"`` (or ``"p"``) for a rational of any size."""
    if q.denominator == 1:
        return int_str(q.numerator)
    return f"{int_str(q.numerator)}/{int_str(q.denominator)}"


#: sums of more terms than this are written ``Add(t1, t2, ...)`` (see :func:`sum_text`).
FLAT_SUM_TERMS = 50


def sum_text(terms: list[tuple[bool, str]]) -> str:
    """A sum of signed terms ``(negative, magnitude)`` as text that ``sympy.sympify`` parses.

    Up to :data:`FLAT_SUM_TERMS` terms it reads as written by hand (``1 - 2*exp(1/5)``);
    longer sums are one call ``Add(1, -2*exp(1/5), ...)``.  Python parses ``a + b + c + ...``
    into a tree as deep as the number of terms: sympify then fails on thousands of terms
    (RecursionError) and takes time quadratic in their number, while a call with many
    arguments is flat (docs/cli.md, "The JSON contract").

    >>> sum_text([(False, "1"), (True, "2*exp(1/5)")])
    '1 - 2*exp(1/5)'
    >>> sum_text([(False, str(i)) for i in range(1, 52)])[:16]
    'Add(1, 2, 3, 4, '
    """
    if not terms:
        return "0"
    if len(terms) > FLAT_SUM_TERMS:
        return "Add(" + ", ".join(f"-{t}" if neg else t for neg, t in terms) + ")"
    text = " ".join(f"- {t}" if neg else f"+ {t}" for neg, t in terms)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]


def _short(value: Any) -> str:
    """A value for a message: its text when short, else its first and last characters."""
    try:
        text = repr(value) if isinstance(value, str) else str(value)
    except ValueError:  # an integer of more than 4300 digits has no str (CPython's limit)
        num = getattr(value, "numerator", value)
        bits = num.bit_length() if isinstance(num, int) else 0
        return f"<a number of about {bits * 3 // 10} digits>"
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
    power = point - 1  # of any size: a delta below 10^-(10^4300) has a 4300-digit exponent
    return f"{sign}{mant}e{'-' if power < 0 else '+'}{int_str(abs(power))}"


# ---------------------------------------------------------------------------------------
# Decimals of rationals, floats, mpmath numbers and balls
# ---------------------------------------------------------------------------------------


def fraction_decimal(q: Fraction, digits: int) -> str:
    """A rational rounded to ``digits`` significant digits (correctly rounded).

    >>> fraction_decimal(Fraction(2, 3), 5)
    '0.66667'
    """
    if q == 0:
        return "0"
    with localcontext() as ctx:
        ctx.prec = digits
        sign, digs, exp = (Decimal(q.numerator) / Decimal(q.denominator)).as_tuple()
    mid = int("".join(map(str, digs)))
    return _format_scaled(-mid if sign else mid, int(exp))


def readable_exact(text: str) -> str:
    """An exact string for titles and captions: terminating rationals as plain decimals.

    Canonical forms write 0.15 as ``3/20``; a reader of a table title prefers ``0.15``.
    Other values (``1/3``, ``log(2)``, ``1e-12`` written ``1/1000000000000``) come back
    as they are, or in scientific form for powers of ten below ``1e-4``.

    >>> readable_exact("3/20"), readable_exact("1/3"), readable_exact("log(2)")
    ('0.15', '1/3', 'log(2)')
    >>> readable_exact("1/1000000"), readable_exact("7")
    ('1e-6', '7')
    """
    try:
        q = Fraction(text)
    except (ValueError, ZeroDivisionError):
        return text
    if not _terminating(q):
        return text
    if q.numerator == 1 and q.denominator > 10**4 and str(q.denominator).rstrip("0") == "1":
        return f"1e-{len(str(q.denominator)) - 1}"
    return _terminating_text(q)


def compact_exact(text: str, longest: int = 24) -> str:
    """An exact number's text, shortened to exact scientific form when it is long.

    Canonical forms write ``1e-400`` as ``1/1`` followed by 400 zeros: a header shows
    ``1e-400`` instead.  Only texts longer than ``longest`` characters that are terminating
    decimals change, and the result is exact (``Fraction(result) == Fraction(text)``);
    every other text comes back as it is.

    >>> compact_exact("1/" + "1" + "0" * 400), compact_exact("25" + "0" * 30)
    ('1e-400', '2.5e31')
    >>> compact_exact("3/20"), compact_exact("1/3" + "0" * 30)
    ('3/20', '1/3000000000000000000000000000000')
    """
    if len(text) <= longest:
        return text
    try:
        q = Fraction(text)
    except (ValueError, ZeroDivisionError):
        return text
    if q == 0 or not _terminating(q):
        return text
    den = q.denominator
    twos = (den & -den).bit_length() - 1
    places = max(twos, _strip(den, 5)[1])  # q * 10^places is an integer
    m = abs(q.numerator) * 10**places // den
    m, zeros = _strip(m, 10)
    digs = str(m)
    exp = zeros - places + len(digs) - 1
    mant = digs[0] + (f".{digs[1:]}" if len(digs) > 1 else "")
    out = f"{'-' if q < 0 else ''}{mant}e{exp}"
    return out if len(out) < len(text) else text


def _terminating_text(q: Fraction) -> str:
    """The full decimal of a terminating rational, without trailing zeros.

    Division and ``normalize`` both run at a precision that holds every digit:
    ``Decimal.normalize`` rounds to the context precision (28 digits by default), which
    printed ``0.6000000000000000000000000000002`` as ``0.6``.

    >>> _terminating_text(Fraction(3000000000000000000000000000001, 5 * 10**30))
    '0.6000000000000000000000000000002'
    """
    with localcontext() as ctx:
        ctx.prec = len(str(q.numerator)) + len(str(q.denominator)) + 8
        d = Decimal(q.numerator) / Decimal(q.denominator)
        text = format(d.normalize(), "f")
    return "0" if text in ("-0", "0") else text


def _strip(n: int, p: int) -> tuple[int, int]:
    """``n`` without its factors ``p``, and their number: ``O(log v)`` divisions.

    A long denominator has thousands of factors 2 and 5 (``20^k``); dividing them out one
    at a time was quadratic in its length.

    >>> _strip(2**10 * 5**7 * 3, 5), _strip(7, 5)
    ((3072, 7), (7, 0))
    """
    if n % p:
        return n, 0
    powers = [p]  # p^(2^i) while it divides n
    while n % (powers[-1] * powers[-1]) == 0:
        powers.append(powers[-1] * powers[-1])
    count = 0
    for i in range(len(powers) - 1, -1, -1):  # each power divides at most once
        if n % powers[i] == 0:
            n //= powers[i]
            count += 1 << i
    return n, count


def _terminating(q: Fraction) -> bool:
    den = q.denominator
    den >>= (den & -den).bit_length() - 1  # every factor 2 at once
    return _strip(den, 5)[0] == 1


def exact_decimal(q: Fraction, digits: int) -> str | None:
    """A rational's full decimal when it terminates within ``digits`` significant digits.

    Exact values are printed without padded zeros: ``3/20`` is ``0.15`` at any number of
    digits (not ``0.150000000000000000000000000000``); None when the decimal does not
    terminate or needs more digits.

    >>> exact_decimal(Fraction(3, 20), 30), exact_decimal(Fraction(1, 3), 30)
    ('0.15', None)
    """
    if q == 0:
        return "0"
    if not _terminating(q):
        return None
    den = q.denominator
    twos = (den & -den).bit_length() - 1
    fives = _strip(den, 5)[1]
    n = max(twos, fives)  # q = m / 10^n, m an integer
    # m = numerator * 2^(n - twos) * 5^(n - fives) has no trailing zero (the numerator is
    # prime to the denominator): at least this many digits, decided before m is made
    if (n - twos) * 0.30103 + (n - fives) * 0.69897 > digits + 1:
        return None
    m = q.numerator * (10**n // q.denominator)
    if abs(m).bit_length() > int(3.33 * digits) + 40 + 4 * n:  # surely too many digits
        return None
    while m and m % 10 == 0:
        m //= 10
        n -= 1
    if len(int_str(abs(m))) > digits:
        return None
    return _format_scaled(m, -n)


def round_decimal(text: str, digits: int) -> str:
    """Shorten a certified decimal string to ``digits`` significant digits.

    The input is within one unit of its last place; rounding it to fewer digits keeps
    the result within one unit of the new last place.  Non-numeric text is returned as is.

    >>> round_decimal("0.693147180559945309417232121458", 6)
    '0.693147'
    """
    try:
        value = Decimal(text)
    except InvalidOperation:
        return text
    if not value.is_finite() or value == 0 or len(value.as_tuple().digits) <= digits:
        return text
    sign, digs, exp = value.as_tuple()
    mid = int("".join(map(str, digs)))
    drop = len(digs) - digits
    q, r = divmod(mid, 10**drop)
    if 2 * r > 10**drop or (2 * r == 10**drop and q % 2):
        q += 1
    return _format_scaled(-q if sign else q, int(exp) + drop)


def exact_or_rounded(exact: str | None, decimal: str, digits: int) -> str:
    """A terminating rational exact value as its full decimal, anything else rounded.

    ``"3/20"`` gives ``"0.15"`` (exact, no trailing zeros); ``"log(2)"`` gives the certified
    decimal shortened to ``digits`` significant digits; a full decimal longer than 40
    characters is written in exact scientific form when that is shorter.

    >>> exact_or_rounded("3/20", "", 5), exact_or_rounded("1/" + "1" + "0" * 40, "", 5)
    ('0.15', '1e-40')
    """
    if exact is not None:
        try:
            q = Fraction(exact.replace(" ", ""))
        except (ValueError, ZeroDivisionError):
            q = None
        if q is not None and _terminating(q):  # 1e-40 stays short (exact either way)
            return compact_exact(_terminating_text(q), longest=40)
    return round_decimal(decimal, digits)


def float_str(v: float, digits: int = 6) -> str:
    """A float for a report: ``digits`` significant digits, ``n/a`` for NaN.

    >>> float_str(1.4999959123), float_str(float("nan")), float_str(0.0)
    ('1.5', 'n/a', '0')
    """
    if math.isnan(v):
        return "n/a"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{digits}g}" if v else "0"


def mpf_str(x: Any, digits: int = 8) -> str:
    """An mpmath number (or a rational) to ``digits`` significant digits.

    >>> mpf_str(Fraction(1, 3), 12)
    '0.333333333333'
    """
    from mpmath import mp

    if isinstance(x, (Fraction, int)):
        q = Fraction(x)
        with mp.workdps(digits + 5):
            x = mp.mpf(q.numerator) / q.denominator
    return str(mp.nstr(x, digits))


def distinct_decimals(reported: float, exact: str, digits: int = 8) -> tuple[str, str]:
    """The reported float and the exact decimal, with enough digits to tell them apart."""
    if math.isnan(reported) or math.isinf(reported) or exact in ("inf", "0"):
        return float_str(reported, digits), exact
    rep = round_decimal(repr(reported), 17)
    if Fraction(reported) == Fraction(Decimal(exact)):
        return float_str(reported, digits), round_decimal(exact, digits)
    for n in range(digits, 31):
        a, b = round_decimal(rep, n), round_decimal(exact, n)
        if Decimal(a) != Decimal(b):
            return a, b
    return rep, exact


EXACT_EXPONENT_BITS = 1 << 20
"""Binary exponents past which an exact endpoint ``m 2^e`` is not made a rational: its
``2^e`` would hold ``|e|`` bits (a subsampled Gaussian's delta near ``1e-4.8e9`` has
``e ~ -1.6e10``: two gigabytes).  Such an endpoint is read as a decimal enclosure of
``digits + 12`` digits and rounded outward from it: still on its safe side, at worst one
unit in the last place further out than its own rounding."""


def outward_decimal(x: flint.arb, digits: int, down: bool) -> str:
    """An exact ball endpoint rounded outward to ``digits`` significant digits.

    Past :data:`EXACT_EXPONENT_BITS` the endpoint is read as a decimal enclosure and
    rounded outward from it (no exact power of two is built).

    >>> outward_decimal(flint.arb(1) / 3, 3, down=False)
    '0.334'
    """
    man, exp = x.mid().man_exp()
    if man == 0:
        return "0"
    if abs(int(exp)) > EXACT_EXPONENT_BITS:  # 2^exp exactly would be gigabytes: read it
        mid, rad, e10 = (int(v) for v in x.mid().mid_rad_10exp(digits + 12))
        m, e = _directed_int(mid - rad if down else mid + rad, e10, digits, down)
    else:
        m, e = _directed_fmpq(flint.fmpq(man) * _pow(2, int(exp)), digits, down)
    while m % 10 == 0:
        m //= 10
        e += 1
    return _format_scaled(int(m), e)


ROUNDINGS = ("up", "nearest", "down")
"""Directions of printed decimals: ``up`` (the default: a printed delta or epsilon is never
below the exact value, so it never understates privacy loss), ``nearest`` (within one unit
in the last place, either side) and ``down``."""


def check_rounding(rounding: str) -> str:
    """Validate a rounding direction (one of :data:`ROUNDINGS`)."""
    if rounding not in ROUNDINGS:
        from ..errors import InvalidParameterError

        raise InvalidParameterError(
            f"rounding = {rounding!r}; choose one of {', '.join(ROUNDINGS)}"
        )
    return rounding


def rounding_note(rounding: str) -> str:
    """The sentence that says how the printed decimals are rounded.

    >>> rounding_note("up")
    'decimals rounded up: never below the exact values'
    """
    return {
        "up": "decimals rounded up: never below the exact values",
        "down": "decimals rounded down: never above the exact values (they can understate "
        "privacy loss)",
        "nearest": "decimals rounded to nearest (within one unit in the last place, either "
        "side: they can understate privacy loss)",
    }[check_rounding(rounding)]


def directed_decimal(text: str, digits: int, rounding: str) -> str:
    """Shorten a decimal string to ``digits`` significant digits in a fixed direction.

    ``up`` gives the least decimal with ``digits`` significant digits that is >= the
    decimal ``text`` (``down``: the greatest that is <=); ``nearest`` is
    :func:`round_decimal`.  Applied to a decimal that is itself rounded in the same
    direction, the result keeps that direction with respect to the exact value (a printed
    delta stays an upper bound).  Non-numeric text is returned as is.

    >>> directed_decimal("0.342327", 3, "up"), directed_decimal("0.342327", 3, "down")
    ('0.343', '0.342')
    >>> directed_decimal("0.15", 3, "up"), directed_decimal("0.6931471805599", 12, "up")
    ('0.15', '0.693147180560')
    """
    if check_rounding(rounding) == "nearest":
        return round_decimal(text, digits)
    try:
        value = Decimal(text)
    except InvalidOperation:
        return text
    if not value.is_finite() or value == 0 or len(value.as_tuple().digits) <= digits:
        return text
    sign, digs, exp = value.as_tuple()
    mid = flint.fmpz("".join(map(str, digs)))  # no 4300-digit limit
    drop = len(digs) - digits
    q, r = divmod(mid, 10**drop)
    # away from zero for the magnitude when the direction and the sign agree
    if r and ((rounding == "up") != bool(sign)):
        q += 1
    e = int(exp) + drop
    if q == 10**digits:  # rounding carried into a new leading digit
        q //= 10
        e += 1
    return _format_scaled(-q if sign else q, e)


def directed_digits(x: flint.arb, digits: int, down: bool) -> str:
    """An exact number (a radius-0 ball) rounded up or down to ``digits`` significant digits.

    Unlike :func:`outward_decimal` the result keeps ``digits`` significant digits
    (trailing zeros included, as :func:`ball_to_decimal` prints them).

    >>> directed_digits(flint.arb(1) / 3, 3, down=False), directed_digits(flint.arb(3) / 4, 3, True)
    ('0.334', '0.750')
    """
    man, exp = x.mid().man_exp()
    if man != 0 and abs(int(exp)) > EXACT_EXPONENT_BITS:  # outward from a decimal reading
        mid, rad, e10 = (int(v) for v in x.mid().mid_rad_10exp(digits + 12))
        return _format_scaled(*_directed_int(mid - rad if down else mid + rad, e10, digits, down))
    return directed_rational(flint.fmpq(man) * _pow(2, int(exp)), digits, down)


def directed_ends(
    ball: flint.arb,
    digits: int,
    down: bool,
    nonnegative: bool = False,
    below_one: bool = False,
) -> tuple[str, str]:
    """The directed roundings of a ball's two ends, from one decimal enclosure of it.

    Returns ``(a, b)``: ``a`` is the rounding (up, or down when ``down``) to ``digits``
    significant digits of a decimal at or below the ball's lower end, ``b`` that of one
    at or above its upper end.  Rounding in a fixed direction is monotone, so the exact
    value's directed rounding lies between them: when ``a == b`` it *is* ``a`` (the ball
    decides it); otherwise ``b`` (up) or ``a`` (down) is the safe outward answer, and a
    sharper ball is needed for the exact value's own rounding.

    Both ends are read from ``ball.mid_rad_10exp`` with six digits beyond ``digits``:
    integers of about ``digits`` digits whatever the exponent (an exact rational of a
    ``1e-20000`` end would have 20000 digits), never the 53-bit ``ball.upper()``; when
    that reading does not decide, again with every digit the ball holds.
    ``nonnegative``: the value is known to be >= 0, a lower end below 0 reads as 0.
    ``below_one``: the value is known to be < 1 (a delta), an end at or above 1 reads as
    just below 1 (the ball of a delta ``1 - 1e-877`` straddles 1 at any affordable
    precision, but its roundings are ``1.00...`` up and ``0.99...9`` down).

    >>> third = flint.arb(1) / 3
    >>> directed_ends(third, 3, down=False), directed_ends(third, 3, down=True)
    (('0.334', '0.334'), ('0.333', '0.333'))
    >>> directed_ends(flint.arb("0.3335") + flint.arb(0, 0.001), 3, down=False)
    ('0.333', '0.335')
    >>> directed_ends(1 - flint.arb(0, 1e-9), 3, down=True, below_one=True)
    ('0.999', '0.999')
    """
    if not ball.is_finite():
        raise CertificationError("this certified value has no finite enclosure")
    out = _directed_ends(ball, digits, down, nonnegative, below_one, digits + 6)
    if out[0] == out[1]:
        return out
    if ball.is_exact():  # an exact point within 1e-6 units of a decimal: exact arithmetic
        if (below_one and ball >= 1) or (nonnegative and ball < 0):
            return out  # (outside what is known of the value: no better than the reading)
        one = directed_digits(ball, digits, down)
        return one, one
    # a value within 1e-6 units of a decimal (1 - 1e-178 next to 1): read every digit
    # the ball holds before calling it undecided.  The digits its midpoint carries bound
    # what a reading can tell: past them the ends read as mid -/+ a radius below the last
    # digit (the ball 1 +/- 1e-10^80 of a delta 1 - e^{-10^800/8} holds 10^80 digits of
    # accuracy, but its midpoint is 1: reading them all would ask for memory no machine has)
    held = int(max(ball.rel_accuracy_bits(), 0) * 0.30103) + 6
    carried = int(int(ball.mid().man_exp()[0]).bit_length() * 0.30103) + digits + 12
    held = min(held, carried)
    if held > digits + 6:
        out = _directed_ends(ball, digits, down, nonnegative, below_one, held)
    return out


def _directed_ends(
    ball: flint.arb, digits: int, down: bool, nonnegative: bool, below_one: bool, read: int
) -> tuple[str, str]:
    """:func:`directed_ends` from a decimal enclosure of ``read`` digits."""
    mid, rad, exp = (int(v) for v in ball.mid_rad_10exp(read))
    lo, hi = mid - rad, mid + rad
    if nonnegative and lo < 0:
        lo = 0

    def end(m: int) -> str:
        # m 10^exp >= 1 (for m of n digits: n + exp >= 1), without the power 10^-exp
        if below_one and m > 0 and len(int_str(m)) + exp >= 1:
            # just below 1: up gives 1 (with ``digits`` digits), down the greatest
            # decimal of ``digits`` digits below 1, 0.99...9
            if down:
                return _directed_scaled(10**digits - 1, -digits, digits, down)
            return _directed_scaled(1, 0, digits, down)
        return _directed_scaled(m, exp, digits, down)

    return end(lo), end(hi)


def _directed_scaled(m: int, exp: int, digits: int, down: bool) -> str:
    """``m * 10**exp`` rounded up (or down) to ``digits`` significant digits (exact)."""
    if m == 0:
        return "0"
    return _format_scaled(*_directed_int(m, exp, digits, down))


def _directed_int(m: int, exp: int, digits: int, down: bool) -> tuple[int, int]:
    """``m * 10**exp`` rounded up (or down) to ``(n, e)``, ``n`` of ``digits`` digits (or 0)."""
    if m == 0:
        return 0, 0
    a = abs(m)
    n = len(int_str(a))
    if n <= digits:  # already short: pad with zeros to ``digits`` digits
        return m * 10 ** (digits - n), exp - (digits - n)
    drop = n - digits
    q, r = divmod(a, 10**drop)
    if r and (down == (m < 0)):  # away from zero: up for a positive m, down for a negative
        q += 1
    exp += drop
    if q == 10**digits:  # rounding carried into a new leading digit
        q //= 10
        exp += 1
    return (-q if m < 0 else q), exp


def directed_rational(q: flint.fmpq, digits: int, down: bool) -> str:
    """An exact rational rounded up or down to ``digits`` significant digits.

    >>> directed_rational(flint.fmpq(-1, 3), 2, down=True)
    '-0.34'
    >>> directed_rational(flint.fmpq(999), 2, down=False)
    '1000'
    """
    if q == 0:
        return "0"
    m, e = _directed_fmpq(q, digits, down)
    return _format_scaled(int(m), e)


def _directed_fmpq(q: flint.fmpq, digits: int, down: bool) -> tuple[flint.fmpz, int]:
    """A nonzero rational rounded up or down to ``m * 10**e``, ``m`` of ``digits`` digits.

    Exact rational arithmetic in FLINT (GMP): the powers of 10 are FLINT integers, and the
    decimal exponent of the leading digit is estimated from the bit lengths and corrected
    exactly, so that a value near ``1e-21714736`` (a Gaussian delta at sigma 5000) costs
    two GMP powers, never Python's quadratic ``10**n`` or a string of millions of digits.
    """
    with flint.ctx.workprec(int(3.33 * digits) + 96):  # a cheap decimal enclosure first
        ball = flint.arb(q)
    mid, rad, exp = (int(v) for v in ball.mid_rad_10exp(digits + 6))
    lo = _directed_int(mid - rad, exp, digits, down)
    hi = _directed_int(mid + rad, exp, digits, down)
    if lo == hi and lo[0] != 0:  # it decides the rounding
        return flint.fmpz(lo[0]), lo[1]
    a = abs(q)
    lead = ((a.p.bit_length() - a.q.bit_length()) * 30102999566) // 10**11
    while _pow(10, lead) > a:  # corrected to be exact: 10^lead <= a < 10^(lead + 1)
        lead -= 1
    while _pow(10, lead + 1) <= a:
        lead += 1
    e = lead + 1 - digits
    n = q / _pow(10, e)
    m = n.floor() if down else n.ceil()
    if abs(m) == _pow(10, digits):  # rounding carried into a new leading digit
        m = m // 10
        e += 1
    return m, e


def _pow(base: int, n: int) -> flint.fmpq:
    """``base ** n`` as an exact FLINT rational (n of any sign; a GMP power)."""
    return flint.fmpq(flint.fmpz(base) ** n) if n >= 0 else flint.fmpq(1, flint.fmpz(base) ** -n)


def short_enclosure(lower: str, upper: str, digits: int) -> tuple[str, str]:
    """An enclosure's ends printed with the digits it certifies, rounded outward.

    The ends keep their digits up to the first place where they differ, plus one
    (``[1.99585109787, 1.99587571712]`` -> ``[1.995851, 1.995876]``), at most ``digits``
    significant digits; ``lower`` is rounded down and ``upper`` up, so the printed
    interval contains the given one (docs/theory.md, section 13: certified decimals).
    Non-numeric ends are returned as they are.

    >>> short_enclosure("1.99585109787666903358", "1.99587571712537004131", 10)
    ('1.995851', '1.995876')
    >>> short_enclosure("0.999", "1.001", 10)
    ('0.9', '1.1')
    >>> short_enclosure("3.629138261e-7", "3.629138302e-7", 30)
    ('3.62913826e-7', '3.62913831e-7')
    >>> short_enclosure("1.0039300e-2806", "1.1529900e-2806", 7)
    ('1.00e-2806', '1.16e-2806')
    """
    # in Decimal, whose exponent is kept apart: a Fraction of 1e-216936156 would build an
    # integer of 216936156 digits (minutes); every quotient below has at most digits + 1
    # digits before the point, so the context's precision keeps it exact
    try:
        with localcontext() as ctx:
            ctx.prec = max(len(lower), len(upper)) + digits + 10
            ctx.Emax, ctx.Emin = MAX_EMAX, MIN_EMIN
            ctx.traps[Inexact] = True
            lo, hi = Decimal(lower), Decimal(upper)
            if not (lo.is_finite() and hi.is_finite()) or lo > hi:
                return lower, upper
            top = max(abs(lo), abs(hi))
            lead = top.adjusted() if top else 0  # the exponent of the leading digit
            place = lead - digits + 1  # the last place of ``digits`` significant digits
            p = lead  # the largest place where the ends' truncations differ

            def cut(x: Decimal, at: int, down: bool) -> int:
                how = ROUND_FLOOR if down else ROUND_CEILING
                return int(x.scaleb(-at).to_integral_value(rounding=how))

            while p > place and cut(lo, p, True) == cut(hi, p, True):
                p -= 1
            place = max(p - 1, place)
            ends = [cut(lo, place, True), cut(hi, place, False)]
    except (InvalidOperation, ValueError):  # also Inexact, Overflow: not a plain decimal
        return lower, upper
    lo_m, hi_m = ends
    if not lo_m and 0 < lo and lead - lo.adjusted() > 300:
        # a positive lower end 300 orders or more below the upper end (far tails, where
        # the enclosure's gap is in the exponent): its own 2 digits, not 0
        own = lo.adjusted() - 1
        with localcontext() as ctx:
            ctx.prec, ctx.Emax, ctx.Emin = len(lower) + 10, MAX_EMAX, MIN_EMIN
            return _format_scaled(cut(lo, own, True), own), _format_scaled(hi_m, place)
    return (
        _format_scaled(lo_m, place) if lo_m else "0",
        _format_scaled(hi_m, place) if hi_m else "0",
    )


def decimal_or_interval(value: Any, digits: int) -> str:
    """A value's certified decimal, or ``[lo, hi]`` when its enclosure is too wide.

    ``value`` is a :class:`~dpcompose_exact.numbers.value.Value` (any object with ``decimal`` and
    ``interval``): the certified decimal when it exists, else the outward-rounded
    endpoints of the enclosure.
    """
    try:
        return value.decimal(digits)
    except CertificationError:
        lo, hi = value.interval(digits)
        return f"[{lo}, {hi}]"


def float_text(value: Any) -> Any:
    """A float as the shortest decimal that reads back to it (``repr``); others unchanged.

    >>> float_text(0.1), float_text("1/3")
    ('0.1', '1/3')
    """
    return repr(value) if isinstance(value, float) else value


# ---------------------------------------------------------------------------------------
# LaTeX
# ---------------------------------------------------------------------------------------


def latex_decimal(text: str, digits: int | None = None) -> str:
    r"""A certified decimal as LaTeX math (scientific notation below 0.01 or from 10^4).

    >>> latex_decimal("0.0000913466605568116057385429945224", 3)
    '9.13 \\times 10^{-5}'
    >>> latex_decimal("0.342327323385", 3)
    '0.342'
    """
    if digits is not None:
        text = round_decimal(text, digits)
    try:
        value = Decimal(text)
    except InvalidOperation:
        return text
    if value == 0:
        return "0"
    sign, digs, exp = value.as_tuple()
    ndig = len(digs)
    lead = ndig + int(exp) - 1  # decimal exponent of the leading digit
    if lead >= 4 and "." not in text and "e" not in text.lower():
        with localcontext() as ctx:  # normalize rounds to the context precision
            ctx.prec = max(ndig, 28)
            sign, digs, exp = value.normalize().as_tuple()  # 12300: zeros only place the point
        ndig = len(digs)
    if -2 <= lead < 4:
        return text if "e" not in text.lower() else format(value, "f")
    mant = "".join(map(str, digs))
    mant = mant[0] + ("." + mant[1:] if ndig > 1 else "")
    return f"{'-' if sign else ''}{mant} \\times 10^{{{lead}}}"


_PLAIN_DECIMAL = re.compile(r"^\d+(\.\d+)?$")
_SCI = re.compile(r"^(\d+(?:\.\d+)?)[eE]([-+]?\d+)$")


def latex_input(text: str) -> str:
    r"""A value as the user wrote it, in LaTeX math (for captions).

    >>> latex_input("0.3"), latex_input("1e-6"), latex_input("2.5e-3"), latex_input("log(2)")
    ('0.3', '10^{-6}', '2.5 \\times 10^{-3}', '\\log 2')
    """
    t = text.strip()
    if _PLAIN_DECIMAL.match(t):
        return t
    m = _SCI.match(t)
    if m:
        mant, exp = m.group(1), int(m.group(2))
        return f"10^{{{exp}}}" if mant == "1" else f"{mant} \\times 10^{{{exp}}}"
    tex = latex_epsilon(t)
    if tex is not None:
        return tex
    return "\\text{" + re.sub(r"([\\{}$&#^_%~])", r"\\\1", t) + "}"


def _latex_rational(q: Fraction) -> str:
    if q.denominator == 1:
        return str(q.numerator)
    sign = "-" if q < 0 else ""
    return f"{sign}\\frac{{{abs(q.numerator)}}}{{{q.denominator}}}"


def latex_epsilon(text: str) -> str | None:
    r"""An exact epsilon (``r + sum c log p``) as clean LaTeX; None if it is not of that form.

    >>> latex_epsilon("3/20"), latex_epsilon("-3*log(2) + 2*log(3)")
    ('\\frac{3}{20}', '2\\log 3 - 3\\log 2')
    """
    import sympy

    try:
        expr = sympy.sympify(text, rational=True)
    except (sympy.SympifyError, SyntaxError, TypeError, ValueError):
        return None
    terms: list[tuple[Fraction, str]] = []
    for term in sympy.Add.make_args(expr):
        coeff, rest = term.as_coeff_Mul()
        if not coeff.is_Rational:
            return None
        c = Fraction(int(coeff.p), int(coeff.q))
        if rest == 1:
            terms.append((c, ""))
        elif isinstance(rest, sympy.log) and rest.args[0].is_Rational and rest.args[0] > 0:
            arg = Fraction(int(rest.args[0].p), int(rest.args[0].q))
            terms.append(
                (c, "\\log " + (str(arg) if arg.denominator == 1 else _latex_rational(arg)))
            )
        else:
            return None
    terms.sort(key=lambda t: (t[0] < 0, t[1] == ""))  # positive terms first, constant last
    out = ""
    for c, log in terms:
        mag = abs(c)
        if log:
            body = ("" if mag == 1 else _latex_rational(mag)) + log
        else:
            body = _latex_rational(mag)
        if not out:
            out = ("-" if c < 0 else "") + body
        else:
            out += (" - " if c < 0 else " + ") + body
    return out or "0"


_EXP_RE = re.compile(r"exp\((-?\d+)(?:/(\d+))?\)")


def _latex_closed_form(text: str) -> str:
    """A closed form as breakable inline LaTeX (e^{3/20}; no fractions, so long ones wrap)."""
    out = _EXP_RE.sub(
        lambda m: f"e^{{{m.group(1)}/{m.group(2)}}}" if m.group(2) else f"e^{{{m.group(1)}}}", text
    )
    out = re.sub(r"\*\*(\d+)", r"^{\1}", out)
    return out.replace("*", "\\,")
