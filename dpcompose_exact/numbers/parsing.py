"""Parsing at the boundary: user input to exact numbers, within documented limits.

Every privacy parameter the engine touches is exact (docs/theory.md, sections 1 and 3).
Floats are rejected at the boundary (:func:`parse_exact`): ``"0.3"`` means 3/10.  Plain
decimals and fractions are read by :class:`fractions.Fraction`; expressions such as
``log(2)`` by a small arithmetic language (:func:`_parse_expression`) that never evaluates
Python code.  Every integer written or built in an input has at most
:data:`MAX_INPUT_DIGITS` digits, checked before it is built.
"""

from __future__ import annotations

import math
import numbers
import operator
import re
import sys
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Union

import flint

from ..errors import InvalidParameterError, UnsupportedExpressionError
from .format import _short

if TYPE_CHECKING:
    import sympy


__all__ = [
    "parse_exact",
    "parse_float_field",
    "parse_rational",
    "parse_int",
    "MAX_INPUT_DIGITS",
]

Exact = Union[Fraction, "sympy.Expr"]

# Documented input limits, checked before any computation: every integer written or built
# in an input (numerators, denominators, powers of ten) has at most this many digits.
MAX_INPUT_DIGITS = 10_000
_MAX_INPUT_BITS = int(MAX_INPUT_DIGITS * 3.3219280948873626) + 1
_LITERAL_RE = re.compile(r"^[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$")
_TOKEN_RE = re.compile(r"^[0-9a-zA-Z_.+\-*/() ]+$")
# Functions and constants whose values are (in general) outside the exact field: named
# as such rather than as unknown.
_OUTSIDE_FIELD = frozenset(
    "sqrt cbrt root sin cos tan sinh cosh tanh asin acos atan asinh acosh atanh erf erfc "
    "gamma log2 log10 pi".split()
)
_FIELD = (
    "the exact field holds rationals and rational combinations of logs of rationals "
    "(e.g. '0.3', 'log(2)', '1/2 + log(3/2)')"
)
_FLOAT_HINT = (
    "floats are not exact; pass the decimal as a string ('0.3' means 3/10), "
    "a decimal.Decimal, a fractions.Fraction, or a sympy expression such as sympy.log(2)"
)


def parse_exact(value: Any, what: str = "value") -> Exact:
    """Convert user input to an exact number.

    Plain decimals and fractions are parsed by :class:`fractions.Fraction` (sympy is
    imported only for expressions such as ``log(2)``, which keeps the CLI's error path fast).

    Args:
        value: a string (``"0.3"``, ``"1e-5"``, ``"3/10"``, ``"log(2)"``, ``"ln(3/2)"``),
            an ``int`` (numpy integers and 0-d integer arrays too), a ``decimal.Decimal``
            (exact: ``Decimal("0.3")`` is 3/10), a ``Fraction`` or a sympy expression.
            Floats, numpy's included, are refused (docs/api.md, "Exact inputs and floats").
        what: name of the parameter, used in error messages.

    Returns:
        A ``Fraction`` for rational values, else an exact sympy expression.

    Raises:
        TypeError: for floats (with a hint how to pass the exact value) and other types.
        InvalidParameterError: for strings that do not parse or are not finite reals.

    >>> parse_exact("0.3"), parse_exact(Decimal("1e-5"))
    (Fraction(3, 10), Fraction(1, 100000))
    >>> parse_exact("ln(2)")
    log(2)
    """
    if isinstance(value, bool):
        raise TypeError(f"{what}: got bool {value!r}; pass a number")
    if isinstance(value, float):
        raise TypeError(f"{what}: got float {value!r}; {_FLOAT_HINT}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, Fraction):
        return value
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InvalidParameterError(f"{what}: {value!r} is not finite; expected a finite real")
        # through its text, so that the limit on the digits of an input applies
        return parse_exact(str(value), what)
    if isinstance(value, str):
        text = value.strip()
        if text.lower().lstrip("+-") in {"inf", "infinity", "nan", "oo"}:
            raise InvalidParameterError(f"{what}: {value!r} is not finite; expected a finite real")
        if not text or not _TOKEN_RE.match(text):
            wrong = sorted({ch for ch in text if not _TOKEN_RE.match(ch)})
            detail = f" (the character(s) {' '.join(map(repr, wrong))} are not allowed)"
            raise InvalidParameterError(
                f"{what}: cannot parse {_short(value)}{detail if wrong else ''}; expected a "
                "decimal ('0.3', '1e-5'), a fraction ('3/10') or an expression of + - * / ** "
                "and log, ln, exp such as 'log(2)'"
            )
        if "/" in text and text.count("/") == 1:
            for part in text.split("/"):
                _check_literal(part.strip(), value, what)
        else:
            _check_literal(text, value, what)
        try:
            return Fraction(text)
        except (ValueError, ZeroDivisionError):
            pass
        return _check_expr(_parse_expression(text, value, what), value, what)
    sympy_mod = sys.modules.get("sympy")
    if sympy_mod is not None and isinstance(value, sympy_mod.Basic):
        if value.has(sympy_mod.Float):
            raise TypeError(f"{what}: sympy expression {value} contains a Float; {_FLOAT_HINT}")
        return _check_expr(value, value, what)
    if getattr(value, "shape", None) == () and hasattr(value, "item"):  # a 0-d numpy array
        return parse_exact(value.item(), what)
    if isinstance(value, numbers.Integral):  # numpy integers: exact
        return Fraction(operator.index(value))
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Rational):
        # numpy's float32 and float16 are no Python floats: the same refusal
        raise TypeError(f"{what}: got float {value!r}; {_FLOAT_HINT}")
    raise TypeError(
        f"{what}: unsupported type {type(value).__name__}; pass a str, int, "
        "decimal.Decimal, fractions.Fraction or sympy expression"
    )


def parse_float_field(value: Any, what: str = "value") -> Fraction:
    """A parameter that another library's interface defines as a float, as an exact rational.

    The one place where a float is accepted: the parameters of dp_accounting's events
    (``noise_multiplier``, ``epsilon``, ...) and an accountant's targets are floats by that
    library's design.  A float is read as the shortest decimal that reads back to it
    (``repr``): ``0.1`` is 1/10, what a person typed.  Everything else is read as by
    :func:`parse_rational` (strings, ints, Decimals, Fractions); numpy ints by their
    Python value, and numpy floats (``float16``, ``float32``, ``longdouble``) by their repr's
    value: numpy's shortest decimal that reads back to them at their own precision.

    >>> parse_float_field(0.1), parse_float_field(1e-5), parse_float_field("3/20")
    (Fraction(1, 10), Fraction(1, 100000), Fraction(3, 20))

    Raises:
        InvalidParameterError: a NaN or an infinity, or a string that does not parse.
    """
    if isinstance(value, float):
        # the repr of the Python float: numpy 2's np.float64 (a float subclass) has the
        # repr 'np.float64(1.1)'; float.__repr__ gives '1.1' for both
        if not math.isfinite(value):
            raise InvalidParameterError(f"{what} = {float(value)!r} is not finite")
        return Fraction(float.__repr__(value))
    if hasattr(value, "item") and not isinstance(value, (str, bytes, Decimal)):  # numpy
        if getattr(getattr(value, "dtype", None), "kind", None) != "f":
            return parse_float_field(value.item(), what)  # numpy ints and bools
        # numpy floats other than float64 (a float subclass, read above): numpy's shortest
        # decimal that reads back to the value at its own precision, its repr's value
        # (``str``: '1.1' for np.float32(1.1), whose double is 1.100000023841858; and for
        # np.longdouble, which no Python number holds, '1.1000000000000000888')
        text = str(value)
        if text.lstrip("+-") in ("inf", "nan"):
            raise InvalidParameterError(f"{what} = {text} is not finite")
        return parse_rational(text, what)
    return parse_rational(value, what)


_MAX_POWER = 64  # exponents of ** in user input (keeps parsing cheap and bounded)


def _too_big(value: Any, what: str, digits: int | str) -> InvalidParameterError:
    return InvalidParameterError(
        f"{what}: {_short(value)} would have {digits} digits; numbers in the input are "
        f"limited to {MAX_INPUT_DIGITS} digits in numerator and denominator "
        f"(e.g. 1e-{MAX_INPUT_DIGITS} is the smallest power of ten)"
    )


def _check_literal(text: str, value: Any, what: str) -> None:
    """Refuse a decimal literal whose exact value has too many digits, before building it."""
    m = _LITERAL_RE.match(text)
    if m is None:
        return  # not a plain literal: the expression parser checks its pieces
    whole, frac, exp = m.group(1) or "", m.group(2) or "", m.group(3)
    if exp is not None and len(exp.lstrip("+-")) > 9:
        raise _too_big(value, what, f"more than 10^{len(exp.lstrip('+-')) - 1}")
    size = len(whole) + len(frac) + (abs(int(exp)) if exp is not None else 0)
    if size > MAX_INPUT_DIGITS:
        raise _too_big(value, what, size)


def _rational_bits(q: Any) -> int:
    return max(int(q.p).bit_length(), int(q.q).bit_length())


def _parse_expression(text: str, value: str, what: str) -> Any:
    """Parse a small arithmetic language without evaluating any Python code.

    Allowed: decimal and integer literals (exact), ``+ - * /``, ``**`` with an integer
    exponent of at most 64 in absolute value, parentheses, ``log(x)``, ``ln(x)``,
    ``exp(x)`` and ``E``.
    """
    import ast

    import sympy

    def bad(detail: str) -> InvalidParameterError:
        return InvalidParameterError(
            f"{what}: cannot parse {value!r} ({detail}); expected a decimal, a fraction or "
            "an expression of +, -, *, /, **, log, ln, exp"
        )

    def outside(piece: str) -> UnsupportedExpressionError:
        return UnsupportedExpressionError(
            f"{what}: {value!r} uses {piece}, which is outside the exact field: {_FIELD}; "
            "if a value near it will do, write that value as a decimal or a fraction"
        )

    def piece_of(node: ast.AST) -> str:
        return ast.get_source_segment(text, node) or ""

    def build(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return build(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            segment = ast.get_source_segment(text, node) or ""
            _check_literal(segment, value, what)
            try:
                q = Fraction(segment)  # the literal's text, so "0.3" is 3/10
            except ValueError:  # Python's other literals: 0x10, 0o7, 0b1
                raise bad(f"{segment!r} is not a decimal literal") from None
            return sympy.Rational(q.numerator, q.denominator)
        if isinstance(node, ast.Name) and node.id == "E":
            return sympy.E
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = build(node.operand)
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BinOp):
            left, right = build(node.left), build(node.right)
            out = None
            if isinstance(node.op, ast.Add):
                out = left + right
            elif isinstance(node.op, ast.Sub):
                out = left - right
            elif isinstance(node.op, ast.Mult):
                out = left * right
            elif isinstance(node.op, ast.Div):
                if right == 0:
                    raise bad("division by zero")
                out = left / right
            if out is not None:
                # operands are within the limit, so this result is at most twice as long
                if out.is_Rational and _rational_bits(out) > _MAX_INPUT_BITS:
                    raise _too_big(value, what, f"about {int(_rational_bits(out) / 3.3219)}")
                return out
            if isinstance(node.op, ast.Pow):
                if right.is_Rational and not right.is_Integer:
                    raise outside(f"the fractional power {_short(piece_of(node))}")
                if not (right.is_Integer and abs(int(right)) <= _MAX_POWER):
                    raise bad(
                        f"the exponent {_short(right)} after ** is not allowed: exponents "
                        f"must be integers from -{_MAX_POWER} to {_MAX_POWER}"
                    )
                if left.is_Rational:
                    # decided before computing: the size multiplies through every nesting
                    bits = _rational_bits(left) * abs(int(right))
                    if bits > _MAX_INPUT_BITS:
                        raise _too_big(value, what, f"about {int(bits / 3.3219)}")
                elif not (left == sympy.E or isinstance(left, sympy.exp)):
                    raise bad(
                        f"power of {_short(left)}: only numbers and exp(...) may be raised "
                        "to a power (epsilons are sums of rationals and rational multiples "
                        "of logs)"
                    )
                return left**right
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("log", "ln", "exp")
            and len(node.args) == 1
            and not node.keywords
        ):
            arg = build(node.args[0])
            if node.func.id == "exp":
                return sympy.exp(arg)
            if arg.is_positive is not True:
                raise bad(f"log of {_short(arg)}, which is not positive")
            return sympy.log(arg)
        piece = piece_of(node)
        if isinstance(node, ast.Name):
            if node.id in _OUTSIDE_FIELD:
                raise outside(node.id)
            raise bad(f"unknown name {node.id!r}; the only constant is E")
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else _short(piece)
            if name in ("log", "ln", "exp"):
                raise bad(f"{name}(...) takes exactly one argument")
            if name in _OUTSIDE_FIELD:
                raise outside(f"{name}(...)")
            raise bad(f"unknown function {name!r}; the functions are log, ln and exp")
        if isinstance(node, ast.BinOp):
            raise bad(f"the operator in {_short(piece)!r} is not one of + - * / **")
        raise bad(f"{_short(piece)!r} is not a number or an allowed expression")

    if len(text) > 4 * MAX_INPUT_DIGITS:
        raise InvalidParameterError(
            f"{what}: the input has {len(text)} characters; at most {4 * MAX_INPUT_DIGITS} "
            "are accepted"
        )
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise bad("invalid syntax") from None
    except (RecursionError, MemoryError):
        raise bad("nested too deeply") from None
    try:
        return build(tree)
    except RecursionError:
        raise bad("nested too deeply") from None


def _check_expr(expr: Any, value: Any, what: str) -> Exact:
    import sympy

    if not isinstance(expr, sympy.Expr) or expr.free_symbols:
        raise InvalidParameterError(f"{what}: {value!r} is not a number")
    if expr.has(sympy.zoo, sympy.oo, -sympy.oo, sympy.nan):
        raise InvalidParameterError(f"{what}: {value!r} is not finite; expected a finite real")
    if expr.is_real is False:
        raise InvalidParameterError(f"{what}: {value!r} is not real")
    if expr.is_Rational:
        return Fraction(int(expr.p), int(expr.q))
    return expr


def parse_rational(value: Any, what: str = "value") -> Fraction:
    """Parse an exact rational number (decimals, fractions, integers).

    >>> parse_rational("1e-5")
    Fraction(1, 100000)
    """
    expr = parse_exact(value, what)
    if not isinstance(expr, Fraction):
        raise UnsupportedExpressionError(
            f"{what}: {value!r} must be rational (a decimal or a fraction), got {expr}"
        )
    return expr


def parse_int(text: str) -> int:
    """An integer from its decimal digits, of any length (no 4300-digit limit)."""
    return int(flint.fmpz(text.strip()))
