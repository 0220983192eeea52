r"""Closed forms for reading: polynomials in one named quantity ``x = e^{g}``.

The exact deltas of the JSON output are written for machines (``sympy.sympify`` parses
them: ``exp(3/10)`` for each power, ``Add(...)`` past 50 terms).  A reader prefers

    (31250x^3 + 93750x^2 - 86325x - 31176) / (31250 (x + 1)^3),   x = e^{3/20}

This module reads such a closed form back exactly (:func:`parse_closed`: integers,
``+ - * / **``, ``Add``/``Mul`` calls and ``exp`` of rationals), writes it over
``x = e^{g}`` with integer coefficients (``g`` the gcd of the exponents of every form shown
together, :func:`common_generator`) and factors the denominator: irreducible factors
(FLINT), cyclotomic ones gathered into binomials ``x^n - 1`` and ``x^n + 1`` where that is
shorter (a missing ``x - 1`` or ``x + 1`` then multiplies the numerator), and the
numerator factored when that is shorter.  :class:`Readable` prints the result as text
(tables) or LaTeX (``\frac{...}{...}``, powers ``x^{3}``; long forms in a breakable
layout).  An exact ``eps(delta) = log(...)`` reads ``k g + \log(...)`` with the powers of
``x`` taken out of the logarithm.  Nothing is rounded: the printed form equals the exact
value (tests evaluate both at high precision and compare).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction

import flint

from ..numbers.format import int_str, rat_str

__all__ = [
    "Readable",
    "common_generator",
    "parse_closed",
    "readable_form",
    "readable_many",
    "x_definition",
]

_TOKENS = re.compile(r"\d+|\*\*|[-+*/(),]|[A-Za-z_]\w*|\S")
_EXP_ARG = re.compile(r"exp\(([^()]*)\)")
_FACTOR_DEGREE = 60  # numerators up to this degree are also tried factored
MAX_DEGREE = 20000  # forms of a higher degree in x are not rewritten (printed as they are)
_FACTOR_CACHE: dict[tuple, list[tuple[flint.fmpz_poly, int]]] = {}


class NotAClosedForm(ValueError):
    """The text is outside the language of closed forms read here."""


def common_generator(texts: Iterable[str]) -> Fraction | None:
    """The gcd ``g > 0`` of every ``exp(r)`` argument in some closed forms (None: no exp).

    >>> common_generator(["exp(3/10) - 1", "(1 + exp(9/20))/2"])
    Fraction(3, 20)
    """
    g = Fraction(0)
    for text in texts:
        for arg in _EXP_ARG.findall(text):
            try:
                r = Fraction(arg.replace(" ", ""))
            except (ValueError, ZeroDivisionError):
                raise NotAClosedForm(f"exp({arg})") from None
            if r:
                num = math.gcd(g.numerator * r.denominator, abs(r.numerator) * g.denominator)
                g = Fraction(num, g.denominator * r.denominator)
    return g or None


# ---------------------------------------------------------------------------------------
# exact rational functions in x, with the denominator kept as a product of factors
# ---------------------------------------------------------------------------------------


def _key(p: flint.fmpz_poly) -> tuple[int, ...]:
    return tuple(int(c) for c in p.coeffs())


@dataclass
class _RF:
    """``x^xpow * num(x) / prod f^e`` with ``num`` over Q and primitive factors ``f``."""

    num: flint.fmpq_poly
    xpow: int = 0
    den: dict[tuple[int, ...], int] = field(default_factory=dict)

    @staticmethod
    def const(c: Fraction | int) -> _RF:
        c = Fraction(c)
        return _RF(flint.fmpq_poly([flint.fmpq(c.numerator, c.denominator)]))

    def is_const(self) -> Fraction | None:
        if self.den or self.num.degree() > 0 or (self.xpow and not self.num.is_zero()):
            return None
        c = self.num.coeffs()[0] if not self.num.is_zero() else flint.fmpq(0)
        return Fraction(int(c.p), int(c.q))

    def neg(self) -> _RF:
        return _RF(-self.num, self.xpow, dict(self.den))

    def mul(self, other: _RF) -> _RF:
        den = dict(self.den)
        for k, e in other.den.items():
            den[k] = den.get(k, 0) + e
        return _RF(self.num * other.num, self.xpow + other.xpow, den)

    def inv(self) -> _RF:
        if self.num.is_zero():
            raise NotAClosedForm("division by zero")
        num = flint.fmpq_poly([1])
        for k, e in self.den.items():
            num *= flint.fmpq_poly(list(k)) ** e
        out = _RF(num, -self.xpow)
        # the old numerator becomes a factor of the denominator: x^j c p(x), p primitive
        coeffs = self.num.coeffs()
        low = next(i for i, c in enumerate(coeffs) if c)
        out.xpow -= low
        p = flint.fmpq_poly(coeffs[low:])
        if p.degree() == 0:
            return _RF(out.num / p.coeffs()[0], out.xpow, out.den)
        lead = p.coeffs()[-1]
        d = int(p.denom())
        zp = p.numer()
        content = zp.content()
        zp = flint.fmpz_poly([c // content for c in zp.coeffs()])
        scale = flint.fmpq(int(content), d)  # p = scale * zp
        if lead < 0:
            zp, scale = -zp, -scale
        out.den[_key(zp)] = out.den.get(_key(zp), 0) + 1
        out.num = out.num / scale
        return out

    def pow(self, n: int) -> _RF:
        base = self if n >= 0 else self.inv()
        n = abs(n)
        return _RF(
            base.num**n, base.xpow * n, {k: e * n for k, e in base.den.items()} if n else {}
        )


def _add_all(terms: list[_RF]) -> _RF:
    """A sum of many terms: the polynomial ones added coefficient by coefficient."""
    coeffs: dict[int, flint.fmpq] = {}
    rest: list[_RF] = []
    for t in terms:
        if t.den:
            rest.append(t)
            continue
        for i, c in enumerate(t.num.coeffs()):
            if c:
                coeffs[i + t.xpow] = coeffs.get(i + t.xpow, flint.fmpq(0)) + c
    low = min(coeffs, default=0)
    top = max(coeffs, default=0)
    acc = _RF(flint.fmpq_poly([coeffs.get(i, 0) for i in range(low, top + 1)]), low)
    for t in rest:
        acc = _add2(acc, t)
    return acc


def _add2(a: _RF, b: _RF) -> _RF:
    den = dict(a.den)
    for k, e in b.den.items():
        den[k] = max(den.get(k, 0), e)

    def lift(t: _RF) -> flint.fmpq_poly:
        out = t.num
        for k, e in den.items():
            extra = e - t.den.get(k, 0)
            if extra:
                out = out * flint.fmpq_poly(list(k)) ** extra
        return out

    m = min(a.xpow, b.xpow)
    shift = flint.fmpq_poly([0, 1])
    na = lift(a) * shift ** (a.xpow - m)
    nb = lift(b) * shift ** (b.xpow - m)
    return _RF(na + nb, m, den)


@dataclass(frozen=True)
class _Q:
    """A rational as read (not reduced: only ``p * gq / (q * gp)`` is taken)."""

    numerator: int
    denominator: int


class _Parser:
    """Recursive descent over ``+ - * / **``, integers, ``exp/Add/Mul`` calls."""

    def __init__(self, text: str, g: Fraction | None) -> None:
        self.tokens = _TOKENS.findall(text)
        for tok in self.tokens:
            if len(tok) == 1 and not tok.isalnum() and tok not in "+-*/(),":
                raise NotAClosedForm(f"unexpected {tok!r}")
        self.i = 0
        self.g = g

    def _monomial(self) -> tuple[int, int] | None:
        """A term ``c*exp(p/q)``, ``exp(p/q)`` or ``c`` at the cursor, read fast (or None)."""
        t, i = self.tokens, self.i
        n = len(t)
        c = 1
        if i < n and t[i].isdigit():
            if i + 1 < n and t[i + 1] == "*" and i + 2 < n and t[i + 2] == "exp":
                c = int(t[i])
                i += 2
            elif i + 1 >= n or t[i + 1] in "+-,)":
                self.i = i + 1
                return int(t[i]), 0
            else:
                return None
        if not (i + 2 < n and t[i] == "exp" and t[i + 1] == "(" and t[i + 2].isdigit()):
            return None
        if i + 4 < n and t[i + 3] == "/" and t[i + 4].isdigit() and i + 5 < n and t[i + 5] == ")":
            r, end = _Q(int(t[i + 2]), int(t[i + 4])), i + 6
        elif i + 3 < n and t[i + 3] == ")":
            r, end = _Q(int(t[i + 2]), 1), i + 4
        else:
            return None
        if end < n and t[end] not in "+-,)":
            return None
        if self.g is None:
            raise NotAClosedForm("exp without a generator")
        k, rem = divmod(r.numerator * self.g.denominator, r.denominator * self.g.numerator)
        if rem:
            raise NotAClosedForm("exp of a non-multiple of g")
        self.i = end
        return c, k

    def _sum(self, sep: str) -> _RF:
        """Terms joined by ``+``/``-`` (``sep = "+"``) or the arguments of ``Add`` (``","``).

        Monomials ``c*exp(p/q)`` are added into one coefficient table (a sum of thousands
        of terms costs one polynomial), other terms as rational functions.
        """
        coeffs: dict[int, int] = {}
        rest: list[_RF] = []
        while True:
            sign = 1
            while self.peek() in ("+", "-"):
                if self.take() == "-":
                    sign = -sign
            mono = self._monomial()
            if mono is not None:
                coeffs[mono[1]] = coeffs.get(mono[1], 0) + sign * mono[0]
            else:
                t = self.term()
                rest.append(t.neg() if sign < 0 else t)
            tok = self.peek()
            if tok in ("+", "-") or (sep == "," and tok == ","):
                if tok == ",":
                    self.take()
                continue
            break
        if coeffs:
            low, top = min(coeffs), max(coeffs)
            poly = _RF(flint.fmpq_poly([coeffs.get(i, 0) for i in range(low, top + 1)]), low)
            rest.insert(0, poly)
        return rest[0] if len(rest) == 1 else _add_all(rest)

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise NotAClosedForm(f"expected {want or 'more'}, found {tok}")
        self.i += 1
        return tok

    def parse(self) -> _RF:
        out = self.expr()
        if self.peek() is not None:
            raise NotAClosedForm(f"trailing {self.peek()!r}")
        return out

    def expr(self) -> _RF:
        return self._sum("+")

    def term(self) -> _RF:
        out = self.unary()
        while self.peek() in ("*", "/"):
            op = self.take()
            rhs = self.unary()
            out = out.mul(rhs) if op == "*" else out.mul(rhs.inv())
        return out

    def unary(self) -> _RF:
        if self.peek() == "-":
            self.take()
            return self.unary().neg()
        if self.peek() == "+":
            self.take()
            return self.unary()
        return self.power()

    def power(self) -> _RF:
        base = self.atom()
        if self.peek() == "**":
            self.take()
            n = self.unary().is_const()
            if n is None or n.denominator != 1:
                raise NotAClosedForm("non-integer power")
            return base.pow(int(n))
        return base

    def atom(self) -> _RF:
        tok = self.take()
        if tok.isdigit():
            return _RF.const(int(tok))
        if tok == "(":
            out = self.expr()
            self.take(")")
            return out
        if tok == "Add":
            self.take("(")
            out = self._sum(",")
            self.take(")")
            return out
        if tok in ("exp", "Mul"):
            self.take("(")
            args = [self.expr()]
            while self.peek() == ",":
                self.take()
                args.append(self.expr())
            self.take(")")
            if tok == "Mul":
                out = args[0]
                for a in args[1:]:
                    out = out.mul(a)
                return out
            r = args[0].is_const() if len(args) == 1 else None
            if r is None or self.g is None or (r / self.g).denominator != 1:
                raise NotAClosedForm("exp of a non-multiple of g")
            return _RF(flint.fmpq_poly([1]), int(r / self.g))
        raise NotAClosedForm(f"unexpected {tok!r}")


def parse_closed(text: str, g: Fraction | None) -> _RF:
    """An exact closed form as a rational function of ``x = e^{g}`` (raises NotAClosedForm)."""
    return _Parser(text, g).parse()


# ---------------------------------------------------------------------------------------
# the readable form: integer numerator, factored denominator
# ---------------------------------------------------------------------------------------


def _factor(p: flint.fmpz_poly) -> list[tuple[flint.fmpz_poly, int]]:
    """Irreducible factors of a primitive polynomial, leading coefficients positive."""
    key = _key(p)
    out = _FACTOR_CACHE.get(key)
    if out is None:
        if p.degree() == 1:
            out = [(p, 1)]
        else:
            _, facs = p.factor()
            out = [(-f if f.coeffs()[-1] < 0 else f, e) for f, e in facs]
        if len(_FACTOR_CACHE) > 256:
            _FACTOR_CACHE.clear()
        _FACTOR_CACHE[key] = out
    return out


@dataclass
class Readable:
    """``x^xpow * (num_scale * num_factors) / (den_const * prod den_factors)``, printable.

    Attributes:
        g: the generator (``x = e^{g}``), None for a rational number.
        num: factors of the numerator, ``(polynomial, exponent)``, times ``num_const``.
        den: factors of the denominator (positive leading coefficients), ``(poly, exp)``.
        den_const: the positive integer constant of the denominator.
        log_shift: for ``log`` forms, the rational ``k g`` taken out of the logarithm
            (None: not a log form).
    """

    g: Fraction | None
    num: list[tuple[flint.fmpz_poly, int]]
    num_const: int
    den: list[tuple[flint.fmpz_poly, int]]
    den_const: int
    log_shift: Fraction | None = None

    # -- text ---------------------------------------------------------------------------
    def text(self) -> str:
        """Plain text for tables: ``(31250x^3 - 31176)/(31250 (x + 1)^3)``."""
        return self._render(_PLAIN)

    def latex(self, breakable: bool | None = None, frac_short: int = 48) -> str:
        r"""LaTeX math: ``\frac{...}{...}``, or a layout that wraps in a ``p`` column.

        Args:
            breakable: the wrapping layout (``\frac{1}{den}\bigl(num\bigr)``: TeX may
                break the line after any ``+`` or ``-`` of the numerator); None chooses it
                when the numerator or the denominator is longer than ``frac_short``
                characters of plain text.
            frac_short: see ``breakable``.
        """
        if breakable is None:
            breakable = self.is_long(frac_short)
        return self._render(_LATEX, breakable)

    def is_long(self, frac_short: int = 48) -> bool:
        """Whether the numerator or the denominator has more than ``frac_short`` characters."""
        num = _product(self.num, self.num_const, _PLAIN)[0]
        den = _product(self.den, self.den_const, _PLAIN)[0]
        return max(len(num), len(den)) > frac_short

    def _render(self, sty: _Style, breakable: bool = False) -> str:
        num, num_atomic = _product(self.num, self.num_const, sty)
        has_den = bool(self.den) or self.den_const != 1
        den, den_atomic = _product(self.den, self.den_const, sty) if has_den else ("", True)
        latex = sty is _LATEX
        if not has_den:
            body, atomic = num, num_atomic
        elif latex and not breakable:
            body, atomic = f"\\frac{{{num}}}{{{den}}}", True
        elif latex:
            body = f"\\frac{{1}}{{{den}}}" if len(den) <= 60 else ""
            if body:
                body += num if num_atomic else f"\\bigl({num}\\bigr)"
            else:
                body = f"\\bigl({num}\\bigr) \\big/\\allowbreak \\bigl({den}\\bigr)"
            atomic = False
        else:
            n = num if num_atomic else f"({num})"
            d = den if den_atomic else f"({den})"
            body, atomic = f"{n}/{d}", False
        if self.log_shift is None:
            return body
        if not latex:
            log = f"log({body})"
            return f"{rat_str(self.log_shift)} + {log}" if self.log_shift else log
        if atomic and not body.startswith("\\frac"):
            log = f"\\log {body}" if not body.startswith("-") else f"\\log({body})"
        elif breakable:
            log = f"\\log\\Bigl({body}\\Bigr)"
        else:
            log = f"\\log\\left({body}\\right)"
        return f"{_latex_rat(self.log_shift)} + {log}" if self.log_shift else log


@dataclass(frozen=True)
class _Style:
    pow: str  # format of x^n
    mul: str  # between the factors of a product
    coef: str  # between a coefficient and a power of x
    tens: str  # an integer m * 10^k with many trailing zeros ("" : all digits)


_PLAIN = _Style("x^{n}", " ", "", "")
_LATEX = _Style("x^{{{n}}}", "\\,", "", "{{{m} \\cdot 10^{{{k}}}}}")  # a group: no break
_ZEROS = 6  # LaTeX writes an integer with more trailing zeros than this as m 10^k


def _int_text(n: int, sty: _Style) -> str:
    r"""An integer; in LaTeX ``m \cdot 10^{k}`` when it ends in many zeros.

    Exact, shorter, and TeX cannot break a long number across lines.
    """
    text = int_str(n)
    if sty.tens:
        stripped = text.rstrip("0")
        k = len(text) - len(stripped)
        if k > _ZEROS:
            return sty.tens.format(m=stripped, k=k)
    return text


def _poly(p: flint.fmpz_poly, sty: _Style) -> str:
    """A polynomial in x, descending powers."""
    out = []
    coeffs = p.coeffs()
    for i in range(len(coeffs) - 1, -1, -1):
        c = int(coeffs[i])
        if not c:
            continue
        mag = abs(c)
        xs = "" if i == 0 else "x" if i == 1 else sty.pow.format(n=i)
        digits = _int_text(mag, sty)
        sep = sty.mul if "cdot" in digits else sty.coef
        term = digits if not xs else xs if mag == 1 else f"{digits}{sep}{xs}"
        if not out:
            out.append(f"-{term}" if c < 0 else term)
        else:
            out.append(f"- {term}" if c < 0 else f"+ {term}")
    return " ".join(out) or "0"


def _product(
    factors: list[tuple[flint.fmpz_poly, int]], const: int, sty: _Style
) -> tuple[str, bool]:
    """A product as text, and whether it needs no parentheses next to ``/``."""
    c = const
    xs = 0
    parts: list[tuple[flint.fmpz_poly, int]] = []
    for p, e in factors:
        if p.degree() == 0:
            c *= int(p.coeffs()[0]) ** e
            continue
        nz = [int(v) for v in p.coeffs() if v]
        if len(nz) == 1 and nz[0] == 1:  # x^j
            xs += p.degree() * e
            continue
        parts.append((p, e))
    items = [] if abs(c) == 1 and (parts or xs) else [_int_text(abs(c), sty)]
    if xs:
        items.append("x" if xs == 1 else sty.pow.format(n=xs))
    alone = not items and len(parts) == 1 and c > 0
    bare_sum = False
    for p, e in parts:
        text = _poly(p, sty)
        is_sum = len([v for v in p.coeffs() if v]) > 1
        if e != 1 or not alone:
            if is_sum or e != 1:
                text = f"({text})"
        else:
            bare_sum = is_sum
        if e != 1:
            text = f"{text}^{e}" if sty is _PLAIN else f"{text}^{{{e}}}"
        items.append(text)
    out = sty.mul.join(items)
    if c < 0:
        out = f"-{out}"
        bare_sum = bare_sum or len(items) > 1
    return out, len(items) == 1 and not bare_sum


def _latex_rat(q: Fraction) -> str:
    if q.denominator == 1:
        return str(q.numerator)
    sign = "-" if q < 0 else ""
    return f"{sign}\\frac{{{abs(q.numerator)}}}{{{q.denominator}}}"


def readable_form(text: str, g: Fraction | None) -> Readable | None:
    """The readable form of an exact closed form (or ``log(...)`` of one) over ``x = e^{g}``.

    Returns None when the text is not a closed form of this language (e.g. an epsilon
    ``1/2 + log(3)``, printed by its own writer).
    """
    body = text.strip()
    is_log = body.startswith("log(") and body.endswith(")") and _balanced(body[4:-1])
    if is_log:
        body = body[4:-1]
    try:
        rf = parse_closed(body, g)
        return _normalise(rf, g, is_log)
    except (NotAClosedForm, ArithmeticError, RecursionError, KeyError, ValueError):
        return None  # printed as it is: a layout never stops the output


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def _normalise(rf: _RF, g: Fraction | None, is_log: bool) -> Readable:
    """Irreducible denominator, cancelled, constants integer; then the shortest layout."""
    # numerator over Z: value = x^xpow * (a/b) * N / D
    num = rf.num
    if num.is_zero():
        return Readable(g, [], 0, [], 1, Fraction(0) if is_log else None)
    d = int(num.denom())
    zn = num.numer()
    coeffs = zn.coeffs()
    low = next(i for i, c in enumerate(coeffs) if c)
    zn = flint.fmpz_poly(coeffs[low:])
    xpow = rf.xpow + low
    den_const = d
    irreducible: dict[tuple[int, ...], int] = {}
    for k, e in rf.den.items():
        for f, m in _factor(flint.fmpz_poly(list(k))):
            if f.degree() == 1 and f.coeffs()[0] == 0:  # x itself
                xpow -= m * e
                continue
            irreducible[_key(f)] = irreducible.get(_key(f), 0) + m * e
    for k in list(irreducible):  # cancel common factors (forms are usually in lowest terms)
        f = flint.fmpz_poly(list(k))
        while irreducible[k] and zn.degree() >= f.degree():
            q, r = divmod(zn, f)
            if not r.is_zero():
                break
            zn = q
            irreducible[k] -= 1
        if not irreducible[k]:
            del irreducible[k]
    content = zn.content()
    common = math.gcd(int(content), den_const)
    if common > 1:
        zn = flint.fmpz_poly([c // common for c in zn.coeffs()])
        den_const //= common
    log_shift = None
    if is_log:  # log(x^k y) = k g + log y
        log_shift = xpow * g if g is not None else Fraction(0)
        xpow = 0
    best: Readable | None = None
    for grouped in (False, True):
        den, extra = _group_cyclotomic(irreducible, grouped)
        if xpow < 0:
            den = [(flint.fmpz_poly([0, 1]), -xpow)] + den
        for num_factors in _numerators(zn, extra, max(xpow, 0)):
            cand = Readable(g, num_factors, 1, den, den_const, log_shift)
            if best is None or len(cand.text()) < len(best.text()):
                best = cand
    assert best is not None
    return best


def _numerators(
    zn: flint.fmpz_poly, extra: list[tuple[flint.fmpz_poly, int]], xpow: int
) -> list[list[tuple[flint.fmpz_poly, int]]]:
    """Ways to write ``x^xpow * zn * prod extra``: expanded, with factors kept, factored."""
    shift = flint.fmpz_poly([0] * xpow + [1])
    full = zn * shift
    for p, e in extra:
        full *= p**e
    out = [[(full, 1)]]
    kept = [(zn * shift, 1)] + extra if extra else None
    if kept is not None:
        out.append(kept)
    if 0 < full.degree() <= _FACTOR_DEGREE and len([c for c in full.coeffs() if c]) > 1:
        content, facs = full.factor()
        if len(facs) > 1 or (facs and facs[0][1] > 1):
            lead = [(flint.fmpz_poly([int(content)]), 1)] if content != 1 else []
            out.append(lead + [(f, e) for f, e in facs])
    return out


def _group_cyclotomic(
    irreducible: dict[tuple[int, ...], int], grouped: bool
) -> tuple[list[tuple[flint.fmpz_poly, int]], list[tuple[flint.fmpz_poly, int]]]:
    """The denominator's factors, cyclotomic ones gathered into ``x^n -+ 1`` (greedily).

    Returns ``(den factors, extra numerator factors)``: a binomial that needs an ``x - 1``
    or ``x + 1`` the denominator lacks takes it, and the numerator is multiplied by it.
    """
    polys = {k: flint.fmpz_poly(list(k)) for k in irreducible}
    mult = dict(irreducible)
    cyc: dict[int, tuple[int, ...]] = {}
    if grouped:
        for k, p in polys.items():
            n = int(p.is_cyclotomic())
            if n:
                cyc[n] = k
    den: list[tuple[flint.fmpz_poly, int]] = []
    extra: dict[int, int] = {}

    def have(n: int) -> int:
        return mult.get(cyc[n], 0) if n in cyc else 0

    def terms(n: int) -> int:
        return len([c for c in flint.fmpz_poly.cyclotomic(n).coeffs() if c])

    while grouped:
        best = None
        for n in sorted(cyc, reverse=True):
            if not have(n):
                continue
            options = [(n, -1)] + ([(n // 2, 1)] if n % 2 == 0 else [])
            for m, sign in options:  # x^m - 1 = prod_{d | m} Phi_d; x^m + 1: d | 2m, d ! | m
                ds = [d for d in _divisors(2 * m if sign > 0 else m) if sign < 0 or m % d]
                big = [d for d in ds if d > 2]
                if not big or any(not have(d) for d in big):
                    continue
                e = min(have(d) for d in big)
                small = [d for d in ds if d <= 2]
                lack = sum(max(e - have(d), 0) for d in small)
                cost_before = sum(terms(d) for d in ds if have(d))
                if 2 + 2 * (1 if lack else 0) >= cost_before:
                    continue
                if best is None or m > best[0]:
                    best = (m, sign, ds, e)
        if best is None:
            break
        m, sign, ds, e = best
        for d in ds:
            short = e - have(d)
            if short > 0:  # only x - 1 and x + 1 may be missing (taken by the numerator)
                extra[d] = extra.get(d, 0) + short
                if d in cyc:
                    mult[cyc[d]] = 0
            else:
                mult[cyc[d]] -= e
        den.append((flint.fmpz_poly([sign] + [0] * (m - 1) + [1]), e))
    rest = [(polys[k], e) for k, e in mult.items() if e]
    rest.sort(key=lambda t: (t[0].degree(), _key(t[0])))
    den = rest + sorted(den, key=lambda t: t[0].degree())
    extra_list = [(flint.fmpz_poly.cyclotomic(d), e) for d, e in sorted(extra.items())]
    return den, extra_list


def _divisors(n: int) -> list[int]:
    out = []
    i = 1
    while i * i <= n:
        if n % i == 0:
            out.append(i)
            if i * i != n:
                out.append(n // i)
        i += 1
    return sorted(out)


def x_definition(g: Fraction, latex: bool = False) -> str:
    r"""``x = exp(3/20)`` (text) or ``x = e^{3/20}`` (LaTeX).

    >>> x_definition(Fraction(3, 20)), x_definition(Fraction(1), latex=True)
    ('x = exp(3/20)', 'x = e')
    """
    if latex:
        return "x = e" if g == 1 else f"x = e^{{{rat_str(g)}}}"
    return f"x = exp({rat_str(g)})"


def readable_many(
    texts: list[str | None], max_len: int | None = None
) -> tuple[Fraction | None, list[Readable | None]]:
    """Readable forms of closed forms shown together, over one ``x = e^{g}``.

    ``g`` is the gcd of the exponents of the texts of at most ``max_len`` characters (all
    when None); longer texts, texts outside the language and texts of a degree in ``x``
    over :data:`MAX_DEGREE` (e.g. ``delta(0.123457)`` next to multiples of ``1/20``: the
    grid ``1/1000000``) give None, and so does every text when one ``x`` for all would
    need such degrees.
    """
    good: dict[int, Fraction | None] = {}
    for i, t in enumerate(texts):
        if t and (max_len is None or len(t) <= max_len):
            try:
                g = common_generator([t])
            except NotAClosedForm:
                continue
            if g is None or _degree(t, g) <= MAX_DEGREE:
                good[i] = g
    g = common_generator(texts[i] or "" for i in good)
    if g is not None and max(_degree(texts[i] or "", g) for i in good) > MAX_DEGREE:
        return g, [None] * len(texts)  # one x for all would need polynomials too long
    return g, [readable_form(t, g) if i in good and t else None for i, t in enumerate(texts)]


def _degree(text: str, g: Fraction) -> int:
    """The largest ``|r| / g`` over the ``exp(r)`` of a text (its degree in ``x = e^g``)."""
    return max((abs(Fraction(a.replace(" ", ""))) / g for a in _EXP_ARG.findall(text)), default=0)
