"""Exponents: Q-linear combinations of 1 and logarithms, ``eps = r + sum_b c_b log b``.

An epsilon (a privacy-loss value) is a Q-linear combination of 1 and logarithms of
pairwise coprime integers (docs/theory.md, sections 1 and 3).  The numbers
``1, log 2, log 3, ...`` are linearly independent over Q (Lindemann, unique
factorisation), so two epsilons are equal exactly when their coefficients are over a
common coprime base: the zero test is exact, and costs gcds only (nothing is factored).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint

from ..errors import UnsupportedExpressionError
from .certify import certified_sign
from .format import int_str, rat_str
from .parsing import _MAX_INPUT_BITS, Exact, _too_big

__all__ = ["LinearForm", "linear_form", "check_query_size"]


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
