r"""Closed forms for reading: polynomials in one named quantity ``x = e^{g}``.

The exact deltas of the JSON output are written for machines (``sympy.sympify`` parses
them: ``exp(3/10)`` for each power, ``Add(...)`` past 50 terms).  A reader prefers

    (31250x^3 + 93750x^2 - 86325x - 31176) / (31250 (x + 1)^3),   x = e^{3/20}

This module writes such a form from the polynomials it was printed from (the
:class:`~dpcompose_exact.numbers.closed.ClosedParts` an :class:`ExactText` carries; the
string itself is never read back) over ``x = e^{g}`` with integer coefficients (``g`` the
gcd of the exponents of every form shown together, :func:`readable_many`) and factors
the denominator: irreducible factors
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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import flint

from ..numbers.closed import ClosedParts
from ..numbers.format import int_str, rat_str

__all__ = [
    "Readable",
    "ExactText",
    "parts_of",
    "rational_function",
    "readable_form",
    "readable_many",
    "x_definition",
]

_FACTOR_DEGREE = 60  # numerators up to this degree are also tried factored
MAX_DEGREE = 20000  # forms of a higher degree in x are not rewritten (printed as they are)
_FACTOR_CACHE: dict[tuple, list[tuple[flint.fmpz_poly, int]]] = {}
_KNOWN_FACTORS: list[flint.fmpz_poly] = []  # irreducible factors (degree > 1) met lately
_KNOWN_MAX = 32


class NotAClosedForm(ValueError):
    """The parts are outside the rational functions of one exponential read here."""


def _gcd_of(args: Iterable[Fraction]) -> Fraction | None:
    """The gcd ``g > 0`` of some rationals (their nonzero ones; None when there is none)."""
    g = Fraction(0)
    for r in args:
        if r:
            num = math.gcd(g.numerator * r.denominator, abs(r.numerator) * g.denominator)
            g = Fraction(num, g.denominator * r.denominator)
    return g or None


# ---------------------------------------------------------------------------------------
# exact rational functions in x, with the denominator kept as a product of factors
# ---------------------------------------------------------------------------------------


_Key = tuple[flint.fmpz, ...]  # a polynomial as a dictionary key (its coefficients)


def _key(p: flint.fmpz_poly) -> _Key:
    """A dictionary key of a polynomial: its coefficients (FLINT integers, hashable)."""
    return tuple(p.coeffs())


def _valuation(p: flint.fmpz_poly) -> int:
    """The power of x dividing a nonzero polynomial (its lowest nonzero coefficient)."""
    low = 0
    while not p[low]:
        low += 1
    return low


@dataclass
class _RF:
    """``x^xpow * num(x) / prod f^e`` with ``num`` over Q and primitive factors ``f``."""

    num: flint.fmpq_poly
    xpow: int = 0
    den: dict[_Key, int] = field(default_factory=dict)


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


def _inflate(p: flint.fmpz_poly, m: Fraction | None) -> flint.fmpz_poly:
    """``p(z)`` as a polynomial in ``x`` where ``z = x^m`` (every power of it an integer)."""
    coeffs = p.coeffs()
    if len(coeffs) <= 1:
        return p
    if m is None:
        raise NotAClosedForm("a power of z without a generator")
    if m == 1:
        return p
    out: dict[int, flint.fmpz] = {}
    for i, c in enumerate(coeffs):
        if c:
            k = i * m
            if k.denominator != 1:
                raise NotAClosedForm("a power of z that is not a power of x")
            out[int(k)] = c
    return flint.fmpz_poly([out.get(k, 0) for k in range(max(out) + 1)])


def rational_function(parts: ClosedParts, g: Fraction | None) -> _RF:
    """The value of closed-form parts as a rational function of ``x = e^{g}``.

    Made from the polynomials the closed form was printed from (raises NotAClosedForm
    when a term is not a rational function of ``x``: a logarithm in an exponent).
    """
    m = parts.g0 / g if parts.g0 is not None and g is not None else None
    rfs = []
    for t in parts.terms:
        if t.shift is None:
            raise NotAClosedForm("an exponent with a logarithm")
        scale = flint.fmpq(1, 1) / t.const
        xpow = 0
        den: dict[_Key, int] = {}
        for f, e in t.factors:
            fx = _inflate(f, m)
            if fx.degree() <= 0:
                scale /= flint.fmpq(int(fx[0])) ** e
                continue
            low = _valuation(fx)
            if low:
                xpow -= low * e
                fx = fx.right_shift(low)
                if fx.degree() == 0:
                    scale /= flint.fmpq(int(fx[0])) ** e
                    continue
            content = fx.content()
            if fx.leading_coefficient() < 0:
                content = -content
            if content != 1:
                fx = fx // content
                scale /= flint.fmpq(int(content)) ** e
            den[_key(fx)] = den.get(_key(fx), 0) + e
        if t.shift:
            if g is None or (t.shift / g).denominator != 1:
                raise NotAClosedForm("an exponential that is not a power of x")
            xpow += int(t.shift / g)
        num = flint.fmpq_poly(_inflate(t.num, m)) * scale * t.sign
        rfs.append(_RF(num, xpow, den))
    if len(rfs) == 1:
        return rfs[0]
    return _add_all(rfs)


# ---------------------------------------------------------------------------------------
# the readable form: integer numerator, factored denominator
# ---------------------------------------------------------------------------------------


def _factor(p: flint.fmpz_poly) -> list[tuple[flint.fmpz_poly, int]]:
    """Irreducible factors of a primitive polynomial, leading coefficients positive.

    The forms of one table share their denominators up to powers (of ``x^n - 1``, ``x + 1``,
    ...): the irreducible factors found before are divided out first (FLINT division),
    and only what remains is factored, so a table factors its common denominator once.
    """
    key = _key(p)
    out = _FACTOR_CACHE.get(key)
    if out is None:
        found: dict[int, list] = {}  # id -> [factor, exponent], in the order found
        rest = p
        for f in _KNOWN_FACTORS:
            while rest.degree() >= f.degree():
                q, r = divmod(rest, f)
                if not r.is_zero():
                    break
                rest = q
                found.setdefault(id(f), [f, 0])[1] += 1
        if rest.degree() == 1 or (rest.degree() > 1 and rest.is_cyclotomic()):
            new = [(rest, 1)]  # irreducible as it is
        elif rest.degree() > 1:
            _, facs = rest.factor()
            new = [(-f if f.coeffs()[-1] < 0 else f, e) for f, e in facs]
        else:  # rest = 1 (p is primitive, its known factors too)
            new = []
        for f, _ in new:
            if f.degree() > 1 and not any(f == k for k in _KNOWN_FACTORS):
                _KNOWN_FACTORS.append(f)
        if len(_KNOWN_FACTORS) > _KNOWN_MAX:
            del _KNOWN_FACTORS[: len(_KNOWN_FACTORS) - _KNOWN_MAX]
        out = [(f, e) for f, e in found.values()] + new
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
    _texts: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def _parts(self, sty: _Style) -> tuple[str, bool, str, bool, bool]:
        """Numerator and denominator as text in a style (made once per style)."""
        out = self._texts.get(sty)
        if out is None:
            num, num_atomic = _product(self.num, self.num_const, sty)
            has_den = bool(self.den) or self.den_const != 1
            den, den_atomic = _product(self.den, self.den_const, sty) if has_den else ("", True)
            out = self._texts[sty] = (num, num_atomic, den, den_atomic, has_den)
        return out

    # -- text ---------------------------------------------------------------------------
    def text(self) -> str:
        """Plain text for tables: ``(31250x^3 - 31176)/(31250 (x + 1)^3)``."""
        out = self._texts.get("text")
        if out is None:
            out = self._texts["text"] = self._render(_PLAIN)
        return out

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
        num, _, den, _, _ = self._parts(_PLAIN)
        return max(len(num), len(den or "1")) > frac_short  # no denominator: 1

    def _render(self, sty: _Style, breakable: bool = False) -> str:
        num, num_atomic, den, den_atomic, has_den = self._parts(sty)
        latex = sty is _LATEX
        if not has_den:
            body, atomic = num, num_atomic
        elif latex and not breakable:
            body, atomic = f"\\frac{{{num}}}{{{den}}}", True
        elif latex:
            body = f"\\frac{{1}}{{{den}}}" if len(den) <= 60 else ""
            if body:
                body += "\\allowbreak "  # a long factor may need the line after the fraction
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
_LONG_DIGITS = 40  # LaTeX: a longer integer may be broken every _LONG_DIGITS // 2 digits
DIGIT_BREAK = "\\discretionary{\\hbox{$\\hookleftarrow$}}{}{}"  # shown only at a break


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
        if len(text) > _LONG_DIGITS:  # TeX may break it, with a mark at the break
            step = _LONG_DIGITS // 2
            return DIGIT_BREAK.join(text[i : i + step] for i in range(0, len(text), step))
    return text


_POLY_TEXTS: list[tuple[flint.fmpz_poly, _Style, str]] = []  # the last texts of _poly
_POLY_MEMO = 8  # how many are kept (the layouts of one form repeat their polynomials)
_POLY_MEMO_DEGREE = 50  # polynomials of a lower degree are not worth remembering


def _poly(p: flint.fmpz_poly, sty: _Style) -> str:
    """A polynomial in x, descending powers (long ones remembered: layouts share them)."""
    if p.degree() < _POLY_MEMO_DEGREE:
        return _poly_text(p, sty)
    for q, qsty, text in _POLY_TEXTS:
        if qsty is sty and q == p:
            return text
    text = _poly_text(p, sty)
    _POLY_TEXTS.append((p, sty, text))
    if len(_POLY_TEXTS) > _POLY_MEMO:
        del _POLY_TEXTS[0]
    return text


def _poly_text(p: flint.fmpz_poly, sty: _Style) -> str:
    coeffs = p.coeffs()
    n = len(coeffs)
    pows = _powers(sty, n)
    tens = sty.tens
    out: list[str] = []
    for i in range(n - 1, -1, -1):
        c = coeffs[i]
        if not c:
            continue
        neg = c < 0
        mag = -c if neg else c
        if i and mag == 1:
            term = pows[i]
        else:
            digits = _int_text(mag, sty) if tens else str(mag)  # fmpz: any number of digits
            if i:
                sep = sty.mul if tens and "cdot" in digits else sty.coef
                term = f"{digits}{sep}{pows[i]}"
            else:
                term = digits
        if out:
            out.append(f"- {term}" if neg else f"+ {term}")
        else:
            out.append(f"-{term}" if neg else term)
    return " ".join(out) or "0"


_POWERS: dict[_Style, list[str]] = {}


def _powers(sty: _Style, n: int) -> list[str]:
    """``["", "x", "x^2", ...]`` (at least ``n`` of them) in a style."""
    pows = _POWERS.setdefault(sty, ["", "x"])
    if len(pows) < n:
        pows.extend(sty.pow.format(n=i) for i in range(len(pows), max(n, 2 * len(pows))))
    return pows


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
        coeffs = p.coeffs()
        if coeffs[-1] == 1 and not any(coeffs[:-1]):  # x^j
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
        is_sum = any(p.coeffs()[:-1])  # more than the leading term
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


def readable_form(parts: ClosedParts | None, g: Fraction | None) -> Readable | None:
    """The readable form of closed-form parts (``log(...)`` of them) over ``x = e^{g}``.

    Returns None when there are no parts, or they are not a rational function of ``x``
    (an exponent with a logarithm: the closed form is printed as it is).
    """
    if parts is None or not parts.readable:
        return None
    try:
        return _normalise(rational_function(parts, g), g, parts.log)
    except (NotAClosedForm, ArithmeticError, RecursionError, KeyError, ValueError):
        return None  # printed as it is: a layout never stops the output


def _normalise(rf: _RF, g: Fraction | None, is_log: bool) -> Readable:
    """Irreducible denominator, cancelled, constants integer; then the shortest layout."""
    # numerator over Z: value = x^xpow * (a/b) * N / D
    num = rf.num
    if num.is_zero():
        return Readable(g, [], 0, [], 1, Fraction(0) if is_log else None)
    d = int(num.denom())
    zn = num.numer()
    low = _valuation(zn)
    zn = zn.right_shift(low) if low else zn
    xpow = rf.xpow + low
    den_const = d
    irreducible: dict[_Key, int] = {}
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
    irreducible: dict[_Key, int], grouped: bool
) -> tuple[list[tuple[flint.fmpz_poly, int]], list[tuple[flint.fmpz_poly, int]]]:
    """The denominator's factors, cyclotomic ones gathered into ``x^n -+ 1`` (greedily).

    Returns ``(den factors, extra numerator factors)``: a binomial that needs an ``x - 1``
    or ``x + 1`` the denominator lacks takes it, and the numerator is multiplied by it.
    """
    polys = {k: flint.fmpz_poly(list(k)) for k in irreducible}
    mult = dict(irreducible)
    cyc: dict[int, _Key] = {}
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


class ExactText(str):
    """An exact string together with the parts it was printed from (:class:`ClosedParts`).

    Rows carry their closed forms as these: JSON, CSV and tables write the string; the
    readable forms are made from :attr:`parts` (never from the string).
    """

    _make: Callable[[], ClosedParts | None] | ClosedParts | None

    def __new__(
        cls, text: str, parts: Callable[[], ClosedParts | None] | ClosedParts | None
    ) -> ExactText:
        """``text`` with its ``parts`` (or a function that makes them)."""
        out = super().__new__(cls, text)
        out._make = parts
        return out

    @property
    def parts(self) -> ClosedParts | None:
        """The parts (made on first use when given as a function)."""
        make = self._make
        if callable(make):
            make = self._make = make()
        return make

    def __reduce__(self) -> tuple:  # pickled (sweeps' stores) as the plain string
        return (str, (str(self),))


def parts_of(text: object) -> ClosedParts | None:
    """The parts of an :class:`ExactText` (None for any other object)."""
    return text.parts if isinstance(text, ExactText) else None


def readable_many(
    texts: Sequence[str | None], max_len: int | None = None
) -> tuple[Fraction | None, list[Readable | None]]:
    """Readable forms of closed forms shown together, over one ``x = e^{g}``.

    The forms are :class:`ExactText` (others have none).  ``g`` is the gcd of the
    exponents of the forms of at most ``max_len`` characters (all when None); longer
    forms, forms outside the rational functions of ``x`` and forms of a degree in ``x``
    over :data:`MAX_DEGREE` (e.g. ``delta(0.123457)`` next to multiples of ``1/20``: the
    grid ``1/1000000``) give None, and so does every form when one ``x`` for all would
    need such degrees.
    """
    spans: dict[int, tuple[Fraction | None, Fraction]] = {}  # (gcd, top) of exponents
    for i, t in enumerate(texts):
        parts = parts_of(t)
        if parts is not None and t and (max_len is None or len(t) <= max_len):
            span = parts.exponents()
            if span[0] is None or span[1] / span[0] <= MAX_DEGREE:
                spans[i] = span
    g = _gcd_of(s[0] for s in spans.values() if s[0] is not None)
    if g is not None and max(s[1] / g for s in spans.values()) > MAX_DEGREE:
        return g, [None] * len(texts)  # one x for all would need polynomials too long
    return g, [
        readable_form(parts_of(t), g) if i in spans else None for i, t in enumerate(texts)
    ]
