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
"""

from __future__ import annotations

import functools
import math
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Union

import flint

from .errors import (
    CertificationError,
    InvalidParameterError,
    ResourceLimitError,
    UnsupportedExpressionError,
)

if TYPE_CHECKING:
    import sympy

__all__ = [
    "ExactLike",
    "parse_exact",
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

ExactLike = Union[str, int, Fraction, "sympy.Basic", "QzElem"]
Exact = Union[Fraction, "sympy.Expr"]
Loss = tuple[int, ...]

MAX_PREC_BITS = 1 << 20
# Documented input limits, checked before any computation: every integer written or built
# in an input (numerators, denominators, powers of ten) has at most this many digits.
MAX_INPUT_DIGITS = 10_000
_MAX_INPUT_BITS = int(MAX_INPUT_DIGITS * 3.3219280948873626) + 1
_LITERAL_RE = re.compile(r"^[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$")
_TOKEN_RE = re.compile(r"^[0-9a-zA-Z_.+\-*/() ]+$")
_FLOAT_HINT = (
    "floats are not exact; pass the decimal as a string ('0.3' means 3/10), "
    "a fractions.Fraction, or a sympy expression such as sympy.log(2)"
)


# ---------------------------------------------------------------------------------------
# Parsing at the boundary
# ---------------------------------------------------------------------------------------


def parse_exact(value: Any, what: str = "value") -> Exact:
    """Convert user input to an exact number.

    Plain decimals and fractions are parsed by :class:`fractions.Fraction` (sympy is
    imported only for expressions such as ``log(2)``, which keeps the CLI's error path fast).

    Args:
        value: a string (``"0.3"``, ``"1e-5"``, ``"3/10"``, ``"log(2)"``, ``"ln(3/2)"``),
            an ``int``, a ``Fraction`` or a sympy expression.  Floats are refused.
        what: name of the parameter, used in error messages.

    Returns:
        A ``Fraction`` for rational values, else an exact sympy expression.

    Raises:
        TypeError: for floats (with a hint how to pass the exact value) and other types.
        InvalidParameterError: for strings that do not parse or are not finite reals.

    >>> parse_exact("0.3")
    Fraction(3, 10)
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
    raise TypeError(
        f"{what}: unsupported type {type(value).__name__}; pass a str, int, "
        "fractions.Fraction or sympy expression"
    )


_MAX_POWER = 64  # exponents of ** in user input (keeps parsing cheap and bounded)


def _too_big(value: Any, what: str, digits: int | str) -> InvalidParameterError:
    return InvalidParameterError(
        f"{what}: {_short(value)} would have {digits} digits; numbers in the input are "
        f"limited to {MAX_INPUT_DIGITS} digits in numerator and denominator "
        f"(e.g. 1e-{MAX_INPUT_DIGITS} is the smallest power of ten)"
    )


def _short(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:40] + "..." + text[-12:]


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

    def build(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return build(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            segment = ast.get_source_segment(text, node) or ""
            _check_literal(segment, value, what)
            q = Fraction(segment)  # the literal's text, so "0.3" is 3/10
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
        piece = ast.get_source_segment(text, node) or ""
        if isinstance(node, ast.Name):
            raise bad(f"unknown name {node.id!r}; the only constant is E")
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else _short(piece)
            if name in ("log", "ln", "exp"):
                raise bad(f"{name}(...) takes exactly one argument")
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


# ---------------------------------------------------------------------------------------
# Exponents: Q-linear combinations of 1 and log p
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LinearForm:
    """``rational + sum_b coeff_b log b`` over a pairwise coprime base, zero terms dropped.

    The base elements ``b > 1`` are pairwise coprime and not perfect powers: primes when
    they are small, possibly composite when large (nothing is factored: the logs of
    pairwise coprime integers are linearly independent over Q all the same, by unique
    factorisation).  Two forms over different bases are compared over their common
    refinement (gcd-based), so equality stays exact and costs polynomial time.
    """

    rational: Fraction
    logs: tuple[tuple[int, Fraction], ...] = ()

    def __add__(self, other: LinearForm) -> LinearForm:
        acc = dict(self.logs)
        for p, c in other.logs:
            acc[p] = acc.get(p, Fraction(0)) + c
        return LinearForm(self.rational + other.rational, _refined_logs(acc))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LinearForm):
            return NotImplemented
        if self.rational != other.rational:
            return False
        if self.logs == other.logs:
            return True
        return (self - other).is_zero()

    def __hash__(self) -> int:
        return hash(self.rational)  # the log part has no canonical base to hash

    def scale(self, c: Fraction) -> LinearForm:
        """Multiply by a rational."""
        if c == 0:
            return LinearForm(Fraction(0))
        return LinearForm(self.rational * c, tuple((p, v * c) for p, v in self.logs))

    def __sub__(self, other: LinearForm) -> LinearForm:
        return self + other.scale(Fraction(-1))

    def is_zero(self) -> bool:
        """Exact zero test (1 and the logs of distinct primes are independent over Q)."""
        return self.rational == 0 and not self.logs

    def ball(self, prec: int) -> flint.arb:
        """A ball containing the real value, at working precision ``prec`` bits."""
        with flint.ctx.workprec(prec):
            out = flint.arb(flint.fmpq(self.rational.numerator, self.rational.denominator))
            for p, c in self.logs:
                out += flint.arb(flint.fmpq(c.numerator, c.denominator)) * flint.arb(p).log()
            return out

    def exp_ball(self, prec: int) -> flint.arb:
        """A ball containing ``e`` to the power of this form."""
        with flint.ctx.workprec(prec):
            return self.ball(prec + 16).exp()

    def sign(self) -> int:
        """Certified sign (exact zero test, then balls)."""
        if not self.logs:
            return (self.rational > 0) - (self.rational < 0)
        return certified_sign(self.ball, self.is_zero(), f"epsilon {self}")

    def __str__(self) -> str:
        """A string that ``sympy.sympify`` parses back (rationals and ``log``)."""
        parts = []
        for p, c in self.logs:
            coef = "" if c == 1 else "-" if c == -1 else f"{rat_str(c)}*"
            parts.append(f"{coef}log({int_str(p)})")
        if self.rational or not parts:
            parts.append(rat_str(self.rational))
        return " + ".join(parts).replace("+ -", "- ")


_SMALL_PRIMES = tuple(p for p in range(2, 1000) if all(p % d for d in range(2, int(p**0.5) + 1)))


def _perfect_root(n: int) -> tuple[int, int]:
    """``(r, k)`` with ``n = r**k`` and ``k`` maximal (FLINT; no factoring)."""
    k_best, r_best = 1, n
    k = 2
    while (1 << k) <= n:
        r = int(flint.fmpz(n).root(k))
        if r**k == n:
            k_best, r_best = k, r
        k += 1
    if k_best > 1:
        r, k2 = _perfect_root(r_best)
        return r, k_best * k2
    return n, 1


def _refined_logs(acc: dict[int, Fraction]) -> tuple[tuple[int, Fraction], ...]:
    """Rewrite ``sum c_b log b`` over a pairwise coprime base (gcd-based factor refinement).

    Each element is kept as an exponent vector over the current base; whenever two base
    elements share a factor ``g``, both are divided by ``g`` and ``g`` joins the base.
    Every step only takes gcds and exact quotients, so the cost is polynomial in the
    bit sizes; the result is pairwise coprime and free of perfect powers.
    """
    items = {b: c for b, c in acc.items() if c and b != 1}
    if len(items) <= 1 and all(b in _SMALL_PRIMES for b in items):
        return tuple(sorted(items.items()))
    # base: element -> exponent vectors of the inputs are tracked by rewriting coefficients
    coef: dict[int, Fraction] = {}
    work = list(items.items())
    while work:
        b, c = work.pop()
        if b == 1 or not c:
            continue
        if b in coef:
            coef[b] += c
            continue
        r, k = _perfect_root(b)
        if k > 1:
            work.append((r, c * k))
            continue
        for base in list(coef):
            g = math.gcd(base, b)
            if g == 1:
                continue
            # base = g * (base / g), b = g * (b / g): split both over g
            cb = coef.pop(base)
            work.extend([(g, cb), (base // g, cb), (g, c), (b // g, c)])
            break
        else:
            coef[b] = coef.get(b, Fraction(0)) + c
    return tuple(sorted((b, c) for b, c in coef.items() if c))


def _coprime_base(elements: Iterable[int]) -> tuple[int, ...]:
    """The pairwise coprime, perfect-power-free refinement of some integers > 1."""
    return tuple(b for b, _ in _refined_logs(dict.fromkeys(elements, Fraction(1))))


def _log_of_rational(q: Any) -> LinearForm:
    """``log q`` over a coprime base: small primes split off, the cofactors kept whole."""
    if q <= 0:
        raise UnsupportedExpressionError(f"log({q}) is not real")
    acc: dict[int, Fraction] = {}
    for n, sign in ((int(q.p), 1), (int(q.q), -1)):
        for p in _SMALL_PRIMES:
            if n == 1 or p * p > n:
                break
            while n % p == 0:
                n //= p
                acc[p] = acc.get(p, Fraction(0)) + sign
        if n > 1:
            acc[n] = acc.get(n, Fraction(0)) + sign
    return LinearForm(Fraction(0), _refined_logs(acc))


def linear_form(expr: Exact, what: str = "eps") -> LinearForm:
    """Write ``expr`` as ``r + sum_p c_p log p`` with rationals r, c_p.

    Raises:
        UnsupportedExpressionError: when ``expr`` is not of that form (e.g. ``sqrt(2)``),
            because equality of such numbers is not decidable by this engine.
    """
    if isinstance(expr, Fraction):
        return LinearForm(expr)
    import sympy

    expr = sympy.expand(expr)
    terms = sympy.Add.make_args(expr)
    out = LinearForm(Fraction(0))
    for term in terms:
        coeff, rest = term.as_coeff_Mul()
        if not coeff.is_Rational:
            raise UnsupportedExpressionError(f"{what}: {expr} has a non-rational coefficient")
        c = Fraction(int(coeff.p), int(coeff.q))
        if rest == 1:
            out = out + LinearForm(c)
        elif isinstance(rest, sympy.log) and rest.args[0].is_Rational:
            out = out + _log_of_rational(rest.args[0]).scale(c)
        else:
            raise UnsupportedExpressionError(
                f"{what}: {expr} is outside the supported exact field; epsilons must be "
                "rational combinations of rationals and logs of rationals "
                "(e.g. '0.3', 'log(2)', '1/2 + log(3/2)')"
            )
    return out


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


def parse_int(text: str) -> int:
    """An integer from its decimal digits, of any length (no 4300-digit limit)."""
    return int(flint.fmpz(text.strip()))


def check_query_size(form: LinearForm, what: str, value: Any) -> None:
    """Refuse a query whose exact numbers exceed :data:`MAX_INPUT_DIGITS` (built by code)."""
    for q in (form.rational, *(c for _, c in form.logs)):
        bits = max(q.numerator.bit_length(), q.denominator.bit_length())
        if bits > _MAX_INPUT_BITS:
            raise _too_big(value, what, f"about {int(bits / 3.3219)}")


def _frac_gcd(a: Fraction, b: Fraction) -> Fraction:
    if a == 0:
        return abs(b)
    if b == 0:
        return abs(a)
    num = math.gcd(a.numerator * b.denominator, b.numerator * a.denominator)
    return Fraction(num, a.denominator * b.denominator)


# ---------------------------------------------------------------------------------------
# Elements of Q(z)
# ---------------------------------------------------------------------------------------

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


class QzElem:
    """An element ``num(z) / den(z)`` of Q(z), both integer polynomials.

    Elements are light and immutable: arithmetic returns new elements and does not
    reduce (a gcd per operation would dominate the hot paths); :attr:`canonical` computes
    the reduced form once, on demand, for hashing and printing.  Equality is exact
    (cross multiplication).  What ``z`` stands for is the business of an
    :class:`ExpDomain`, which owns conversion to sympy, signs and decimals.
    """

    __slots__ = ("num", "den", "_canon", "den_factors", "_hint", "field")

    def __init__(
        self,
        num: flint.fmpz_poly,
        den: flint.fmpz_poly = _ONE_POLY,
        field: Fraction | None = None,
    ) -> None:
        if den.is_zero():
            raise ZeroDivisionError("QzElem with zero denominator")
        self.num = num
        self.den = den
        # the generator g of z = e^g when known (elements built by a domain carry it);
        # None: not tagged (constants belong to every field)
        self.field = field
        self._canon: tuple[flint.fmpz_poly, flint.fmpz_poly] | None = None
        # (content, [(irreducible, multiplicity), ...]) of the canonical denominator, when
        # known from how the element was built (saves a factorisation when printing)
        self.den_factors: tuple[int, list[tuple[flint.fmpz_poly, int]]] | None = None
        self._hint: tuple | None = None  # arguments of reduced(), for a lazy canonical form

    @classmethod
    def with_known_denominator(
        cls,
        num: flint.fmpz_poly,
        den: flint.fmpz_poly,
        parts: tuple[int, int, Sequence[tuple[flint.fmpz_poly, int]]],
        cache: dict | None = None,
    ) -> QzElem:
        """``num / den`` where ``den = const z^zpow prod f^e`` (``parts``).

        The canonical form is computed as :meth:`reduced` does, only when asked for.
        """
        out = cls(num, den)
        const, zpow, factors = parts
        out._hint = (num, const, zpow, factors, cache)
        return out

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
        of two large polynomials.  ``cache`` (a dict) keeps denominators between calls
        that share ``factors``.
        """
        if num.is_zero():
            return cls(_ZERO_POLY)
        low = 0
        while low < zpow and not num[low]:  # indexing: no copy of the coefficients
            low += 1
        t = min(low, zpow)
        if t:
            num, zpow = num.right_shift(t), zpow - t
        left: list[tuple[flint.fmpz_poly, int]] = []
        for f, e in factors:
            while e:
                q, r = divmod(num, f)
                if not r.is_zero():
                    break
                num, e = q, e - 1
            if e:
                left.append((f, e))
        g = math.gcd(int(num.content()), const)
        if g > 1:
            num, const = num // g, const // g
        key = tuple((id(f), e) for f, e in left)  # rows of one region share the factors
        prod = cache.get(key) if cache is not None else None
        if prod is None:
            prod = _ONE_POLY
            for f, e in left:
                prod = prod * f**e
            if cache is not None:
                cache[key] = prod
        den = (prod * const).left_shift(zpow)
        if den.leading_coefficient() < 0:
            num, den, const = -num, -den, -const
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


# ---------------------------------------------------------------------------------------
# Certified sign and decimals
# ---------------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class ExpDomain:
    """Generators of the exponents of a problem and the field Q(z), ``z = e^{g0}``.

    Attributes:
        g0: the rational generator (gcd of the rational parts of all epsilons), or None
            when every epsilon is a combination of logarithms only.
        primes: the primes whose logarithms occur.

    A loss (epsilon) is a tuple of integers ``(n_0, n_1, ...)`` meaning
    ``n_0 g0 + sum_i n_i log primes[i]`` (``n_0`` is absent when ``g0`` is None).
    """

    g0: Fraction | None
    primes: tuple[int, ...] = ()
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    # -- construction -----------------------------------------------------------------
    @classmethod
    def for_forms(cls, forms: Iterable[LinearForm]) -> ExpDomain:
        """The coarsest domain in which every form has an integer vector.

        Raises:
            ResourceLimitError: when some epsilon is more than ``MAX_Z_DEGREE`` times the
                generator (e.g. 0.3 next to 1e-9): its ``e^eps`` would be a polynomial of
                that degree.
        """
        forms = list(forms)
        g = Fraction(0)
        elements: set[int] = set()
        for f in forms:
            g = _frac_gcd(g, f.rational)
            elements.update(p for p, _ in f.logs)
        primes = _coprime_base(elements)
        dom = cls(g if g != 0 else None, primes)
        for f in forms:  # integer coefficients over the joint base (raises otherwise)
            dom.loss(f)
        if g:
            _check_degree(max(abs(f.rational) for f in forms) / g, g)
        return dom

    def join(self, other: ExpDomain) -> ExpDomain:
        """The smallest domain containing both."""
        if self == other:
            return self
        g = _frac_gcd(self.g0 or Fraction(0), other.g0 or Fraction(0))
        for old in (self.g0, other.g0):
            if old is not None:
                _check_degree(old / g, g)  # polynomials in the old z get inflated by this
        return ExpDomain(g if g != 0 else None, _coprime_base(set(self.primes) | set(other.primes)))

    @property
    def dim(self) -> int:
        """Length of a loss vector."""
        return (1 if self.g0 is not None else 0) + len(self.primes)

    def zero_loss(self) -> Loss:
        """The loss vector of epsilon = 0."""
        return (0,) * self.dim

    def loss(self, form: LinearForm) -> Loss:
        """The integer vector of a linear form."""
        vec: list[int] = []
        if self.g0 is not None:
            q = form.rational / self.g0
            if q.denominator != 1:
                raise UnsupportedExpressionError(f"{form} is not a multiple of g0 = {self.g0}")
            vec.append(int(q))
        elif form.rational != 0:
            raise UnsupportedExpressionError(f"{form} has a rational part but g0 is None")
        coeffs = dict.fromkeys(self.primes, Fraction(0))
        for b, c in form.logs:
            if b in coeffs:
                coeffs[b] += c
                continue
            # b is a product of base elements (the base refines it): divide them out
            rest = b
            for p in self.primes:
                k = 0
                while rest % p == 0:
                    rest //= p
                    k += 1
                if k:
                    coeffs[p] += c * k
            if rest != 1:
                raise UnsupportedExpressionError(f"{form} uses logs outside the base {self.primes}")
        for p in self.primes:
            c = coeffs[p]
            if c.denominator != 1:
                raise UnsupportedExpressionError(
                    f"epsilon with {c} * log({p}): e^eps would be irrational algebraic; "
                    "only integer multiples of log p are supported"
                )
            vec.append(int(c))
        return tuple(vec)

    def loss_of(self, expr: Exact) -> Loss:
        """The integer vector of an exact epsilon expression."""
        return self.loss(linear_form(expr))

    def convert_loss(self, loss: Loss, target: ExpDomain) -> Loss:
        """Re-express a loss of this domain in a finer domain ``target``."""
        return target.loss(self.form(loss))

    def convert_elem(self, x: QzElem, target: ExpDomain) -> QzElem:
        """Re-express an element of Q(z) when ``target.g0`` divides ``self.g0``."""
        if self.g0 is None or target.g0 == self.g0:
            return x
        assert target.g0 is not None
        m = self.g0 / target.g0
        if m.denominator != 1:
            raise UnsupportedExpressionError("target domain is not finer than this domain")
        out = x.inflate(int(m))
        out.field = target.g0
        return out

    # -- values -------------------------------------------------------------------------
    def form(self, loss: Loss) -> LinearForm:
        """The linear form of a loss vector."""
        rational = Fraction(0)
        it = iter(loss)
        if self.g0 is not None:
            rational = next(it) * self.g0
        logs = tuple((p, Fraction(n)) for p, n in zip(self.primes, it) if n)
        return LinearForm(rational, logs)

    def to_sympy(self, loss: Loss) -> Any:
        """Epsilon as an exact sympy expression."""
        import sympy

        f = self.form(loss)
        out = sympy.Rational(f.rational.numerator, f.rational.denominator)
        for p, c in f.logs:
            out += sympy.Integer(int(c)) * sympy.log(p)
        return out

    def exp_loss(self, loss: Loss) -> QzElem:
        """``e^eps`` as an element of Q(z)."""
        c = Fraction(1)
        n0 = 0
        it = iter(loss)
        if self.g0 is not None:
            n0 = next(it)
        for p, n in zip(self.primes, it):
            c *= Fraction(p) ** n
        out = QzElem.monomial(c, n0)
        out.field = self.g0
        return out

    def loss_ball(self, loss: Loss, prec: int) -> flint.arb:
        """Ball containing the real value of a loss."""
        with flint.ctx.workprec(prec):
            out = flint.arb(0)
            it = iter(loss)
            if self.g0 is not None:
                out += next(it) * flint.arb(flint.fmpq(self.g0.numerator, self.g0.denominator))
            for p, n in zip(self.primes, it):
                if n:
                    out += n * flint.arb(p).log()
            return out

    def z_ball(self, prec: int) -> flint.arb:
        """Ball containing ``z = e^{g0}``."""
        key = ("z", prec)
        if key not in self._cache:
            with flint.ctx.workprec(prec):
                if self.g0 is None:
                    self._cache[key] = flint.arb(1)
                else:
                    self._cache[key] = flint.arb(
                        flint.fmpq(self.g0.numerator, self.g0.denominator)
                    ).exp()
        return self._cache[key]

    def elem_ball(self, x: QzElem, prec: int) -> flint.arb:
        """Ball containing the real value of ``x``."""
        if (
            x.field is not None
            and x.field != self.g0
            and (x.num.degree() > 0 or x.den.degree() > 0)
        ):
            raise InvalidParameterError(
                f"an element of the field z = e^({x.field}) evaluated in the domain with "
                f"g0 = {self.g0}; convert it with convert_elem first"
            )
        z = self.z_ball(prec)
        with flint.ctx.workprec(prec):
            return flint.arb_poly(x.num)(z) / flint.arb_poly(x.den)(z)

    # -- certified decisions --------------------------------------------------------------
    def sign(self, x: QzElem) -> int:
        """Certified sign of an element of Q(z)."""
        return certified_sign(lambda prec: self.elem_ball(x, prec), x.is_zero(), "element")

    def compare(self, a: QzElem, b: QzElem) -> int:
        """Certified comparison: -1, 0, 1 as a <, =, > b."""
        return self.sign(a - b)

    def loss_sign(self, loss: Loss) -> int:
        """Certified sign of a loss value."""
        if not any(loss):
            return 0
        if self.dim == 1:
            return 1 if loss[0] > 0 else -1
        return certified_sign(lambda prec: self.loss_ball(loss, prec), False, "loss")

    def compare_loss(self, a: Loss, b: Loss) -> int:
        """Certified comparison of two losses."""
        return self.loss_sign(tuple(x - y for x, y in zip(a, b)))

    def bisect_losses(self, losses: Sequence[Loss], target: Loss) -> int:
        """Largest i with ``losses[i] <= target`` (-1 when below all); losses increasing."""
        lo, hi = -1, len(losses) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.compare_loss(losses[mid], target) <= 0:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def loss_key(self, loss: Loss) -> Any:
        """Sort key ordering losses by real value (integers in one dimension)."""
        if self.dim <= 1:
            return loss
        return functools.cmp_to_key(self.compare_loss)(loss)

    def sort_losses(self, losses: Iterable[Loss]) -> list[Loss]:
        """Sort distinct losses by increasing real value (exactly)."""
        return sorted(set(losses), key=self.loss_key)

    # -- decimals -------------------------------------------------------------------------
    def decimal(self, x: QzElem, digits: int = 30) -> str:
        """``x`` to ``digits`` significant digits, within one unit in the last place."""
        if x.is_zero():
            return "0"
        return _decimal_from(lambda prec: self.elem_ball(x, prec), digits, _start_prec(x, digits))

    def loss_decimal(self, loss: Loss, digits: int = 30) -> str:
        """A loss value to ``digits`` significant digits."""
        if not any(loss):
            return "0"
        return _decimal_from(lambda prec: self.loss_ball(loss, prec), digits, 4 * digits + 64)

    # -- presentation -----------------------------------------------------------------------
    def elem_str(self, x: QzElem) -> str:
        """A string that ``sympy.sympify`` parses back to ``x`` (rationals, exp only)."""
        num, den = x.canonical
        ns = self._poly_str(num)
        if den.is_one():
            return ns
        ds = self._poly_str(den)
        if num.degree() > 0:
            ns = f"({ns})"
        if den.degree() > 0 or num.degree() <= 0:
            ds = f"({ds})" if den.degree() > 0 else ds
        return f"{ns}/{ds}"

    def _poly_str(self, p: flint.fmpz_poly) -> str:
        if p.is_zero():
            return "0"
        parts: list[str] = []
        for i, c in enumerate(p.coeffs()):  # fmpz: str() has no digit limit
            if not c:
                continue
            sign = "-" if c < 0 else "+"
            mag = abs(c)
            if i == 0:
                term = str(mag)
            else:
                assert self.g0 is not None
                zs = f"exp({rat_str(self.g0 * i)})"
                term = zs if mag == 1 else f"{mag}*{zs}"
            parts.append(f"{sign} {term}")
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]

    def loss_str(self, loss: Loss) -> str:
        """Epsilon as a string that sympify parses."""
        return str(self.form(loss))

    def elem_closed_form(self, x: QzElem) -> str:
        """Exact string of an element; the denominator is written factored (FLINT factor).

        Like :meth:`elem_str`, ``sympy.sympify`` parses it back (while its integers have
        at most 4300 digits, sympy's own limit); any length prints.
        """
        num, den = x.canonical
        if den.is_one():
            return self.elem_str(x)
        content, factors = x.den_factors if x.den_factors is not None else den.factor()
        parts = [] if content == 1 else [int_str(content)]
        for poly, e in factors:
            text = self.elem_str(QzElem(poly))
            if poly.degree() > 0 and len([c for c in poly.coeffs() if c]) > 1:
                text = f"({text})"
            parts.append(text if e == 1 else f"{text}**{e}")
        ns = self.elem_str(QzElem(num))
        if len([c for c in num.coeffs() if c]) > 1 or ns.startswith("-"):
            ns = f"({ns})"
        den_str = "*".join(parts)
        return f"{ns}/({den_str})" if len(parts) > 1 else f"{ns}/{den_str}"

    def structured(self, x: QzElem) -> dict[str, Any]:
        """A machine-readable exact form of any size (see :func:`read_structured`).

        ``{"g": g0, "num": [[coef, exponent], ...], "den": [...]}`` means
        ``sum coef z^exponent / sum coef z^exponent`` with ``z = exp(g)``; coefficients are
        decimal strings (exact at any length), zero coefficients are left out.
        """
        num, den = x.canonical

        def terms(p: flint.fmpz_poly) -> list[list[Any]]:
            return [[str(c), i] for i, c in enumerate(p.coeffs()) if c]

        g = rat_str(self.g0) if self.g0 is not None else "0"
        return {"g": g, "num": terms(num), "den": terms(den)}


MAX_Z_DEGREE = 10**6


def _check_degree(ratio: Fraction, g: Fraction) -> None:
    if ratio > MAX_Z_DEGREE:
        raise ResourceLimitError(
            f"the epsilons need the common grid g = {g}, and one of them is {int(ratio)} "
            f"times g (limit {MAX_Z_DEGREE}): the exact field would hold polynomials of "
            "that degree; round the epsilons to a coarser grid (e.g. 3 decimals)"
        )


def _start_prec(x: QzElem, digits: int) -> int:
    bits = max(x.num.height_bits() if not x.num.is_zero() else 0, x.den.height_bits())
    return int(digits * 3.33) + bits + 64


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


def domain_for(values: Sequence[Exact]) -> ExpDomain:
    """The domain generated by some exact epsilons."""
    return ExpDomain.for_forms(linear_form(v) for v in values)


def read_structured(data: dict[str, Any]) -> tuple[ExpDomain, QzElem]:
    """Read :meth:`ExpDomain.structured` back: the domain (of ``g``) and the exact element.

    ``sympy`` users: ``dom.elem_str(x)`` or ``sympy.exp(g)`` substituted for ``z`` in the
    two polynomials give the same number.
    """
    try:
        g = Fraction(data["g"])
        polys = []
        for key in ("num", "den"):
            coeffs: dict[int, int] = {}
            for c, e in data[key]:
                if isinstance(e, bool) or not isinstance(e, int) or e < 0:
                    raise ValueError(f"exponent {e!r}")
                coeffs[e] = coeffs.get(e, 0) + parse_int(str(c))
            top = max(coeffs, default=-1)
            polys.append(flint.fmpz_poly([coeffs.get(i, 0) for i in range(top + 1)]))
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise InvalidParameterError(f"not a structured exact form: {exc}") from None
    if polys[1].is_zero():
        raise InvalidParameterError("not a structured exact form: zero denominator")
    return ExpDomain(g if g else None), QzElem(polys[0], polys[1])
