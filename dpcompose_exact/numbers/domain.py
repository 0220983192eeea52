"""The domain of a problem: generators of its exponents and the field Q(z), ``z = e^{g0}``.

Given the epsilons of a problem, :class:`ExpDomain` picks generators ``g0 = gcd`` of the
rational parts and the (coprime) logarithms that occur, and writes each epsilon as an
integer vector ``n`` with ``eps = n_0 g0 + sum_i n_i log p_i`` (docs/theory.md, sections
1 and 3).  Then ``e^eps = (prod_i p_i^{n_i}) z^{n_0}`` is an element of Q(z); the domain
owns conversion to sympy, certified signs and decimals (:meth:`ExpDomain.decimal` is
correct to one unit in the last place) and the exact structured form
(:func:`read_structured`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError, UnsupportedExpressionError
from .certify import _decimal_from, certified_sign
from .convert import rational_ball
from .format import int_str, rat_str, sum_text
from .forms import LinearForm, _coprime_base, _frac_gcd, linear_form
from .parsing import Exact, parse_int
from .qz import QzElem

__all__ = ["ExpDomain", "Loss", "domain_for", "read_structured"]

Loss = tuple[int, ...]


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
                out += next(it) * rational_ball(self.g0)
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
        parts = x.factored()
        with flint.ctx.workprec(prec):
            if parts is None:
                return flint.arb_poly(x.num)(z) / flint.arb_poly(x.den)(z)
            # a factored denominator is evaluated factor by factor (never expanded)
            num, const, zpow, factors = parts
            den = flint.arb(const) * z**zpow
            for f, e in factors:
                den *= flint.arb_poly(f)(z) ** e
            return flint.arb_poly(num)(z) / den

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
        parts: list[tuple[bool, str]] = []
        for i, c in enumerate(p.coeffs()):  # fmpz: str() has no digit limit
            if not c:
                continue
            mag = abs(c)
            if i == 0:
                term = str(mag)
            else:
                assert self.g0 is not None
                zs = f"exp({rat_str(self.g0 * i)})"
                term = zs if mag == 1 else f"{mag}*{zs}"
            parts.append((c < 0, term))
        return sum_text(parts)

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
    bits = max(x.num.height_bits() if not x.num.is_zero() else 0, x.den_height_bits())
    return int(digits * 3.33) + bits + 64


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
