"""One number type for every answer: an exact value, or a certified enclosure of one.

A :class:`Value` is what the front door (:mod:`dpcompose_exact.api`) hands to users for
a delta, an epsilon or a point of a trade-off curve.  It wraps

* an **exact** number: a closed form (a string that ``sympy.sympify`` parses back), an
  exact zero test, and a ball evaluator that can be called at any precision, so that any
  number of digits can be certified; or
* a **certified enclosure**: a ball (or interval) known to contain the true value, from
  the certified routes for large compositions.  Its digits are certified as far as the
  enclosure allows; asking for more raises :class:`~dpcompose_exact.errors.CertificationError`
  instead of printing an uncertified digit.

Comparisons go through the certified sign routine (balls at increasing precision; an
exact zero test when both sides are exact).  Conversions to Python floats are explicit
about their direction: ``float(v)`` is the nearest double, ``v.upper()`` a double that is
never below the true value and ``v.lower()`` one that is never above it.

>>> from fractions import Fraction
>>> v = Value.from_rational(Fraction(1, 3))
>>> v.decimal(5), v.exact, v.upper() >= 1 / 3 >= v.lower()
('0.33333', '1/3', True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import flint

from ..errors import (
    CertificationError,
    InvalidParameterError,
    ResourceLimitError,
    UnsupportedExpressionError,
)
from . import (
    MAX_PREC_BITS,
    ExpDomain,
    LinearForm,
    Loss,
    QzElem,
    ball_to_decimal,
    certified_sign,
    parse_exact,
)
from .certify import _decimal_from, refine
from .closed import ClosedParts, ClosedTerm, elem_parts
from .convert import digits_to_bits, rational_ball
from .domain import _start_prec
from .format import (
    check_rounding,
    decimal_or_interval,
    directed_ends,
    directed_rational,
    outward_decimal,
    rat_str,
)

if TYPE_CHECKING:
    import sympy

__all__ = ["Value", "ball_ends"]

Evaluate = Callable[[int], flint.arb]
#: ``(domain, x, y, form)``: the value ``x - e^form y`` (``form`` None: just ``x``).
Lin = tuple[ExpDomain, QzElem, QzElem, "LinearForm | None"]


MAX_TESTED_EXPONENT = 10**5
"""The largest decimal exponent of a decimal tested for exact equality with a value."""

_LEAST_DOUBLE = flint.arb(2) ** -1074  # 5e-324, the least positive double (exact)


def _qz_key(domain: ExpDomain, x: QzElem) -> Hashable:
    """A domain-independent canonical key of an element of Q(z) (equal numbers, equal keys)."""
    num, den = x.canonical
    q = x.as_rational()
    if q is not None:  # constants (every element when the domain has no z)
        return ("q", q.numerator, q.denominator)
    g = 0
    for p in (num, den):
        for i, c in enumerate(p.coeffs()):
            if c:
                g = math.gcd(g, i)
    if g > 1:
        num, den = num.deflate(g), den.deflate(g)
    step = domain.g0 * g
    return ("z", step, tuple(int(c) for c in num.coeffs()), tuple(int(c) for c in den.coeffs()))


class Value:
    """An exact real number or a certified enclosure of one.

    Build values with the class methods; users receive them from
    :class:`~dpcompose_exact.composition.Composition`.

    Attributes:
        is_exact: True when the number is known exactly (a closed form exists).
    """

    __slots__ = (
        "_evaluate",
        "_closed",
        "_key_made",
        "_key_make",
        "_zero",
        "_fixed",
        "_lin",
        "_ends",
        "_nonneg",
        "is_exact",
        "_cache",
        "_start",
        "_memo",
        "_sharper",
        "_below_one",
        "_parts",
        "_unit",
    )

    @property
    def _key(self) -> Hashable | None:
        """The canonical key of an exact value, made on first use.

        A large element's canonical form costs more than its decimal, and most printed
        values are never compared.
        """
        if self._key_make is not None:
            self._key_made, self._key_make = self._key_make(), None
        return self._key_made

    def __init__(
        self,
        evaluate: Evaluate,
        *,
        closed_form: Callable[[], str] | None = None,
        key: Hashable | None = None,
        is_zero: bool | None = None,
        fixed: flint.arb | None = None,
        lin: Lin | None = None,
        ends: tuple[flint.arb, flint.arb] | None = None,
        nonnegative: bool = False,
        sharper: Callable[[], Value | None] | None = None,
        below_one: bool = False,
        parts: Callable[[], ClosedParts] | None = None,
    ) -> None:
        self._evaluate = evaluate
        self._parts = parts
        self._sharper = sharper
        self._below_one = below_one
        self._unit = False
        self._lin = lin
        self._ends = ends
        self._nonneg = nonnegative
        self._closed = closed_form
        self._key_make: Callable[[], Hashable] | None = None
        self._key_made: Hashable | None = key
        self._zero = is_zero
        self._fixed = fixed
        self.is_exact = closed_form is not None
        self._cache: dict[Any, Any] = {}
        # the first working precision for ``digits`` digits (an exact value whose
        # evaluation cancels many bits starts higher), and the last ball made
        self._start: Callable[[int], int] | None = None
        self._memo: tuple[int, flint.arb] | None = None

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def from_rational(cls, q: Fraction | int) -> Value:
        """An exact rational number."""
        q = Fraction(q)

        def ev(prec: int) -> flint.arb:
            with flint.ctx.workprec(prec):
                return rational_ball(q)

        return cls(
            ev,
            closed_form=lambda: rat_str(q),
            key=("q", q.numerator, q.denominator),
            is_zero=q == 0,
            lin=(ExpDomain(None), QzElem.from_rational(q), QzElem.from_rational(0), None),
            parts=lambda: elem_parts(None, QzElem.from_rational(q)),
        )

    @classmethod
    def from_qz(
        cls,
        domain: ExpDomain,
        x: QzElem,
        closed_form: Callable[[], str] | None = None,
        start: Callable[[int], int] | None = None,
        parts: Callable[[], ClosedParts] | None = None,
    ) -> Value:
        """An exact element of Q(z); ``closed_form`` overrides the default string.

        ``start(digits)``: the first working precision of its decimals (default: enough
        for a cancellation of as many bits as the coefficients have); a caller that knows
        better (the rows of a region cancel about as much as their neighbours,
        :meth:`precision_lost`) saves the doubling or the excess.
        """
        out = cls(
            lambda prec: domain.elem_ball(x, prec),
            closed_form=closed_form or (lambda: domain.elem_str(x)),
            is_zero=x.is_zero(),
            lin=(domain, x, QzElem.from_rational(0), None),
            parts=parts or (lambda: _expanded_parts(domain, x)),
        )
        out._key_make = lambda: _qz_key(domain, x)
        out._start = start or (lambda digits: _start_prec(x, digits))
        return out

    @classmethod
    def from_element(cls, domain: ExpDomain, x: QzElem) -> Value:
        """An exact element of a region's field, with its readable closed form and parts.

        The deltas of an exact region (and of a mechanism's constraints) are these.
        """
        g0 = domain.g0
        return cls.from_qz(
            domain,
            x,
            closed_form=lambda: domain.elem_closed_form(x),
            parts=lambda: elem_parts(g0, x),
        )

    @classmethod
    def from_loss(cls, domain: ExpDomain, loss: Loss) -> Value:
        """An exact epsilon (a privacy-loss value)."""
        form = domain.form(loss)
        return cls(
            lambda prec: domain.loss_ball(loss, prec),
            closed_form=lambda: domain.loss_str(loss),
            key=_form_key(form),
            is_zero=not any(loss),
            lin=_form_lin(form),
        )

    @classmethod
    def from_form(cls, form: LinearForm) -> Value:
        """An exact epsilon given as a linear form (no domain needed)."""
        return cls(
            form.ball,
            closed_form=lambda: str(form),
            key=_form_key(form),
            is_zero=form.is_zero(),
            lin=_form_lin(form),
        )

    @classmethod
    def from_log_qz(
        cls,
        domain: ExpDomain,
        x: QzElem,
        closed_form: Callable[[], str] | None = None,
        parts: Callable[[], ClosedParts] | None = None,
    ) -> Value:
        """The exact number ``log(x)`` for a positive element ``x`` of Q(z)."""

        def ev(prec: int) -> flint.arb:
            with flint.ctx.workprec(prec):
                return domain.elem_ball(x, prec).log()

        out = cls(
            ev,
            closed_form=closed_form or (lambda: f"log({domain.elem_str(x)})"),
            key=("log", _qz_key(domain, x)),
            is_zero=(x - 1).is_zero(),
            parts=parts or (lambda: _expanded_parts(domain, x, log=True)),
        )
        out._cache["log_of"] = (domain, x)  # for the exact test of rounded()
        return out

    @classmethod
    def from_ball(
        cls,
        ball: flint.arb,
        nonnegative: bool = False,
        sharper: Callable[[], Value | None] | None = None,
        below_one: bool = False,
    ) -> Value:
        """A certified enclosure: the true value lies in ``ball`` (no closed form).

        ``nonnegative``: the value is known to be >= 0 (a delta, an epsilon): the lower
        end read by :meth:`ends` and :meth:`interval` never goes below 0.
        ``sharper``: makes (on demand) the same number known more sharply (a narrower
        enclosure, or the exact value), or None when there is none; :meth:`rounded` asks
        for it when ``ball`` does not decide a directed rounding.  ``below_one``: the
        value is known to be < 1 (a delta of a composition whose leak is < 1): the
        directed roundings read an upper end at or above 1 as just below 1.
        """
        return cls(
            lambda prec: ball,
            fixed=ball,
            nonnegative=nonnegative,
            sharper=sharper,
            below_one=below_one,
        )

    @classmethod
    def from_interval(cls, lower: flint.arb, upper: flint.arb, nonnegative: bool = False) -> Value:
        """A certified two-sided bound: the true value lies in ``[lower, upper]``.

        The two ends are kept as given (read back by :meth:`ends` and :meth:`interval`):
        the ball that also represents the value has a rounded radius, whose lower end may
        lie a little below ``lower`` (below 0 for ``lower = 0``).
        """
        lo, hi = ball_ends(lower)[0], ball_ends(upper)[1]
        # the union rounds to the working precision: keep every bit of both ends
        with flint.ctx.workprec(max(lo.bits(), hi.bits(), 53) + 8):
            ball = lo.union(hi)
        return cls(lambda prec: ball, fixed=ball, ends=(lo, hi), nonnegative=nonnegative)

    def probability(self) -> Value:
        """The same number, known to be a probability: it lies in ``[0, 1]``.

        A delta, a point of a trade-off curve.  Its printed forms never leave ``[0, 1]``
        (docs/theory.md, section 13: a printed digit is certified, and a bound is safe):
        rounded up, a value whose enclosure reaches past 1 prints as 1 (the least decimal
        at or above any number of ``[0, 1]`` is at most 1); rounded down, one reaching
        below 0 prints as 0; :meth:`ends`, :meth:`interval` and :meth:`upper` clip to
        ``[0, 1]`` the same way.  The value itself (its balls, closed form and
        comparisons) is unchanged.

        >>> with flint.ctx.workprec(200):
        ...     v = Value.from_ball(1 - flint.arb("1e-40") + flint.arb(0, 1e-30))
        >>> v.rounded(5), v.probability().rounded(5), v.probability().interval(5)[1]
        ('1.0001', '1.0000', '1')
        """
        if self._unit:
            return self
        out = Value.__new__(Value)
        for name in Value.__slots__:
            setattr(out, name, getattr(self, name))
        out._unit = True
        out._nonneg = True
        return out

    def known_rational(self) -> Fraction | None:
        """The value as a Fraction when that is known without building its closed form.

        Made from a rational, or an element ``x`` of Q(z) whose numerator and denominator
        are constants (nothing is reduced or printed: a long closed form costs more than
        its decimal); None otherwise, also for a rational not written as one.

        >>> Value.from_rational(Fraction(3, 20)).known_rational()
        Fraction(3, 20)
        """
        known = self._key_made if self._key_make is None else None
        if known is not None and known[0] == "q":
            return Fraction(known[1], known[2])
        lin = self._lin
        if lin is None:
            return None
        _, x, y, form = lin
        if form is not None and not y.num.is_zero():
            return None
        num, den = x.num, x.den
        if num.degree() > 0 or den.degree() != 0:
            return None
        n = int(num.coeffs()[0]) if not num.is_zero() else 0
        return Fraction(n, int(den.coeffs()[0]))

    # -- reading --------------------------------------------------------------------------
    @property
    def exact(self) -> str | None:
        """The closed form (``sympy.sympify`` parses it), or None when only certified."""
        if self._closed is None:
            return None
        if "closed" not in self._cache:
            self._cache["closed"] = self._closed()
        return self._cache["closed"]

    def parts(self) -> ClosedParts | None:
        """The polynomials the closed form :attr:`exact` is written from, or None.

        None when the value is only certified, or its closed form is not a rational
        function of exponentials (an epsilon ``log(2)``); the readable forms of the
        presentation layer are made from these parts (:mod:`~dpcompose_exact.numbers.closed`).
        """
        if self._parts is None:
            return None
        if "parts" not in self._cache:
            self._cache["parts"] = self._parts()
        return self._cache["parts"]

    def ball(self, prec: int = 128) -> flint.arb:
        """A ball containing the value (at working precision ``prec`` bits when exact)."""
        return self._evaluate(prec)

    def _ball_at(self, prec: int) -> flint.arb:
        """:meth:`ball`, the last one kept: :meth:`decimal` and :meth:`rounded` share it."""
        memo = self._memo
        if memo is not None and memo[0] == prec:
            return memo[1]
        ball = self._evaluate(prec)
        self._memo = (prec, ball)
        return ball

    def precision_lost(self) -> int | None:
        """Bits the last evaluation lost (working precision minus relative accuracy).

        None before any evaluation, or when the last ball was not finite or was zero.
        """
        memo = self._memo
        if memo is None or not memo[1].is_finite() or memo[1].is_zero():
            return None
        if memo[1].is_exact():
            return 0
        return max(memo[0] - memo[1].rel_accuracy_bits(), 0)

    def _start_bits(self, digits: int, base: int) -> int:
        """The first working precision for ``digits`` digits: ``base``, or the value's own."""
        return base if self._start is None else max(base, self._start(digits))

    def decimal(self, digits: int = 30) -> str:
        """The value to ``digits`` significant digits, every digit certified (1 ulp).

        Raises:
            CertificationError: when the value is an enclosure too wide for ``digits``.
        """
        if self._unit:
            return _unit_clip(self._decimal(digits), digits)
        return self._decimal(digits)

    def _decimal(self, digits: int) -> str:
        """:meth:`decimal`, as the value's enclosure gives it (not clipped to ``[0, 1]``)."""
        if self._zero:
            return "0"
        if self._fixed is not None:
            if self._fixed.is_exact() and self._fixed.is_zero():
                return "0"
            out = ball_to_decimal(self._fixed, digits)
            if out is None:
                raise CertificationError(
                    f"this value is certified to {self.certified_digits()} significant digits "
                    f"only, fewer than the {digits} asked for; use interval() for its bounds"
                )
            return out
        key = ("dec", digits)
        if key not in self._cache:
            start = self._start_bits(digits, digits_to_bits(digits, 64))
            self._cache[key] = _decimal_from(self._ball_at, digits, start)
        return self._cache[key]

    def rounded(self, digits: int = 30, rounding: str = "up") -> str:
        """The value to ``digits`` significant digits, rounded in a certified direction.

        ``up`` gives the least decimal with ``digits`` significant digits that is >= the
        value (a printed delta or epsilon never understates privacy loss), ``down`` the
        greatest that is <=, ``nearest`` is :meth:`decimal`.  The direction is certified:
        balls at increasing precision until both ends round to the same decimal; a value
        that is exactly such a decimal (``1/50`` at 3 digits) is printed as itself, by an
        exact test, not bumped to the next one.  A certified enclosure that does not decide
        the rounding is made sharper when it can be (``sharper``, :meth:`from_ball`), and
        is otherwise rounded outward from its upper (``up``) or lower (``down``) end:
        :meth:`directed` says which of the two happened.

        >>> third, fiftieth = (Value.from_rational(Fraction(1, n)) for n in (3, 50))
        >>> third.rounded(3), third.rounded(3, "down"), fiftieth.rounded(3)
        ('0.334', '0.333', '0.0200')
        """
        return self.directed(digits, rounding)[0]

    def directed(self, digits: int = 30, rounding: str = "up") -> tuple[str, bool]:
        """:meth:`rounded`, and whether it is the exact value's own directed rounding.

        Returns ``(text, decided)``.  ``decided`` is True when ``text`` is the least
        decimal of ``digits`` significant digits >= the value (``up``; the greatest <= it
        for ``down``; the certified decimal for ``nearest``), False when the enclosure
        known is too wide to decide it and ``text`` is the rounding of its outward end:
        still on the safe side of the value, but perhaps one unit in the last place
        further out than the value's own rounding.

        >>> with flint.ctx.workprec(200):
        ...     wide = Value.from_ball(flint.arb("0.3335") + flint.arb(0, 0.001))
        >>> wide.directed(3, "up"), wide.directed(2, "up")
        (('0.335', False), ('0.34', True))
        """
        out = self._directed(digits, rounding)
        if self._unit and rounding != "nearest":
            text = _unit_clip(out[0], digits)
            if text != out[0]:
                # up, past 1: the value's own rounding is 1 when its lower end is above the
                # greatest decimal of ``digits`` digits below 1 (0.99...9); down, below 0: 0
                below = flint.arb(1) - flint.arb(10) ** (-digits)
                return text, text != "0" and bool(self.ends(64)[0] > below)
        return out

    def _directed(self, digits: int, rounding: str) -> tuple[str, bool]:
        """:meth:`directed`, as the value's enclosure gives it (not clipped to ``[0, 1]``)."""
        from .certify import check_digits

        check_digits(digits)
        if check_rounding(rounding) == "nearest":
            return self.decimal(digits), True
        if self._zero:
            return "0", True
        down = rounding == "down"
        if self._fixed is not None:
            if not self._fixed.is_finite():
                raise CertificationError("this certified value has no finite enclosure")
            if self._ends is not None:  # a two-sided bound: its own ends, at every bit
                lo, hi = self._ends
                a = directed_ends(lo, digits, down, self._nonneg, self._below_one)[0]
                b = directed_ends(hi, digits, down, self._nonneg, self._below_one)[1]
            else:
                a, b = directed_ends(self._fixed, digits, down, self._nonneg, self._below_one)
            if a == b:  # the enclosure decides the rounding
                return a, True
            if self._sharper is not None:
                key = ("sharper",)
                if key not in self._cache:
                    self._cache[key] = self._sharper()
                sharp = self._cache[key]
                if sharp is not None:
                    return sharp.directed(digits, rounding)
            return (a if down else b), False  # outward from the enclosure's end
        key = ("rounded", digits, rounding)
        if key in self._cache:
            return self._cache[key]
        known = self._key_made if self._key_make is None else None  # no canonical form made
        if known is not None and known[0] == "q":  # a rational: exact arithmetic
            return directed_rational(flint.fmpq(known[1], known[2]), digits, down), True
        # an exact element of Q(z) starts at the precision its decimal starts at (its
        # evaluation cancels about as many bits as its coefficients have): one ball serves both
        start = self._start_bits(digits, int(3.4 * digits) + 64)
        last: list[str] = []
        tested: dict[str, bool] = {}

        def attempt(prec: int) -> str | None:
            ball = self._ball_at(prec)
            if not ball.is_finite():
                return None
            lo, hi = directed_ends(ball, digits, down)
            last[:] = [hi if not down else lo]  # the safe end, if nothing better is found
            if lo == hi:
                return lo
            if prec >= 4 * start:  # a ball straddling a decimal: is the value that decimal?
                cand = lo if not down else hi
                if cand not in tested:
                    tested[cand] = self._equals_decimal(cand)
                if tested[cand]:
                    return cand
            return None

        # the ceiling covers the bits the evaluation loses (a Gaussian delta near
        # e^(-5e11) loses ~5400 bits at every precision: 4096 bits never decided it)
        ceiling = min(max(16 * start, 4096, 2 * (self._bits_lost(start) + start)), MAX_PREC_BITS)
        try:
            out = refine(attempt, start_prec=start, ceiling=ceiling), True
        except CertificationError:
            if not last:
                raise
            out = last[0], False  # outward from the ball's end: safe, perhaps one unit wide
        self._cache[key] = out
        return out

    def _bits_lost(self, prec: int) -> int:
        """Bits the evaluation at ``prec`` loses (0 when its ball is not finite or exact)."""
        ball = self._ball_at(prec)
        if not ball.is_finite() or ball.is_exact():
            return 0
        return max(prec - ball.rel_accuracy_bits(), 0)

    def _equals_decimal(self, text: str) -> bool:
        """Exact test: whether this value is the rational number written ``text``.

        The rational is built only for the values that can be compared with it (a value
        with no exact form is never tested), and not past a decimal exponent of
        :data:`MAX_TESTED_EXPONENT` (``1e-217147241087`` would be a Fraction of 10^11
        digits): False then means "not known to be equal", which is always safe (the
        caller prints the outward end).
        """
        from decimal import Decimal

        key = self._key_made if self._key_make is None else None  # no canonical form made
        log_of = self._cache.get("log_of")
        if not (key is not None and key[0] == "q") and self._lin is None and log_of is None:
            return False
        exponent = Decimal(text).as_tuple().exponent
        if not isinstance(exponent, int) or abs(exponent) > MAX_TESTED_EXPONENT:
            return False
        q = Fraction(Decimal(text))
        if key is not None and key[0] == "q":
            return key == ("q", q.numerator, q.denominator)
        if self._lin is not None:
            return _exactly_equal(self, Value.from_rational(q))
        if log_of is not None:  # log(x) = q  iff  x = e^q, when e^q lies in x's field
            domain, x = log_of
            try:
                from . import LinearForm

                e_q = domain.exp_loss(domain.loss(LinearForm(q, ())))
            except (InvalidParameterError, UnsupportedExpressionError, ValueError, TypeError):
                return False
            return (x - e_q).is_zero()
        return False

    def certified_digits(self) -> int:
        """How many significant digits :meth:`decimal` can certify (exact: unlimited -> 10**9)."""
        if self._fixed is None:
            return 10**9
        bits = self._fixed.rel_accuracy_bits()
        return max(0, int(bits * 0.30103) - 1)

    def ends(self, bits: int = 128) -> tuple[flint.arb, flint.arb]:
        """Exact points ``(lower, upper)`` enclosing the value.

        Read at the precision of the ball (never at the 53 bits of the default context),
        rounded outward; a two-sided bound gives back its own ends; the lower end of a
        value known to be >= 0 is never below 0.  ``bits``: relative accuracy asked of an
        exact value's evaluation.
        """
        if self._zero:
            return flint.arb(0), flint.arb(0)
        if self._ends is not None:
            lo, hi = self._ends
        else:
            lo, hi = ball_ends(self._tight(bits))
        if self._nonneg and lo < 0:
            lo = flint.arb(0)
        if self._unit and hi > 1:
            hi = flint.arb(1)
        if self._unit and lo > 1:  # (an enclosure wholly above 1 of a probability: 1)
            lo = flint.arb(1)
        return lo, hi

    def interval(self, digits: int = 30) -> tuple[str, str]:
        """Decimal strings ``(lower, upper)`` rounded outward, enclosing the value.

        Both ends are read at the precision of the ball and rounded outward to ``digits``
        significant digits, so an enclosure of width ``1e-20`` prints that width.
        """
        lo, hi = self.ends(int(3.4 * digits) + 8)
        return outward_decimal(lo, digits, down=True), outward_decimal(hi, digits, down=False)

    def _tight(self, bits: int) -> flint.arb:
        """A finite ball with ``bits`` bits of relative accuracy, or the enclosure itself.

        Exact values are evaluated at increasing precision; a certified value's enclosure
        is refused when it is not finite.
        """
        if self._zero:
            return flint.arb(0)
        if self._fixed is not None:
            if not self._fixed.is_finite():
                raise CertificationError("this certified value has no finite enclosure")
            return self._fixed
        return refine(
            self._evaluate,
            lambda ball: ball.is_finite() and (ball.is_exact() or ball.rel_accuracy_bits() >= bits),
            bits + 64,
            failure=lambda: f"could not evaluate {self.describe()} to {bits} bits",
        )

    def __float__(self) -> float:
        """The nearest double (from 20 certified digits; the midpoint of a wide enclosure)."""
        try:
            return float(self.decimal(20))
        except CertificationError:
            return float(self._tight(64).mid())

    def upper(self) -> float:
        """A double guaranteed to be >= the value (safe to hand to float code as a bound).

        A value whose first ball already lies below the least positive double needs no
        sharper one: its bound is that double (the delta of ``gaussian(1e6)`` at eps 100,
        about ``e^(-5e15)``, is not certified to 60 bits at any affordable precision, but
        its first ball shows it below ``5e-324``).
        """
        if self._fixed is None and not self._zero:
            first = self._ball_at(64)
            if first.is_finite() and first.upper() < _LEAST_DOUBLE:
                return float(_LEAST_DOUBLE)
        hi = self.ends(60)[1]
        x = float(hi)
        if flint.arb(x) < hi:
            x = math.nextafter(x, math.inf)
        return x

    def lower(self) -> float:
        """A double guaranteed to be <= the value."""
        lo = self.ends(60)[0]
        x = float(lo)
        if flint.arb(x) > lo:
            x = math.nextafter(x, -math.inf)
        return x

    def sympy(self) -> sympy.Basic:
        """The exact value as a sympy expression, or a sympy ``Interval`` enclosing it."""
        import sympy

        if self.exact is not None:
            return sympy.sympify(self.exact)
        lo, hi = self.interval(40)
        return sympy.Interval(sympy.Rational(lo), sympy.Rational(hi))

    def latex(self, digits: int = 6) -> str:
        """LaTeX: the closed form when it is short, else certified decimals."""
        import sympy

        text = self.exact
        if text is not None and len(text) <= 200:
            return sympy.latex(sympy.sympify(text))
        return decimal_or_interval(self, digits)

    # -- comparisons ----------------------------------------------------------------------
    def _sign_minus(self, other: Any) -> int:
        o = _as_value(other)
        if self is o or (self._key is not None and o._key is not None and self._key == o._key):
            return 0

        def diff(prec: int) -> flint.arb:
            with flint.ctx.workprec(prec):
                return self._evaluate(prec) - o._evaluate(prec)

        fixed = self._fixed is not None or o._fixed is not None
        try:
            return certified_sign(
                diff,
                False,
                "a difference of values",
                zero_test=lambda: _exactly_equal(self, o),
                max_bits=8192 if fixed else MAX_PREC_BITS,
            )
        except CertificationError:
            raise CertificationError(
                f"cannot decide the order of {self.describe()} and {o.describe()}: their "
                "enclosures overlap (certified values)"
            ) from None

    def __eq__(self, other: object) -> bool:
        try:
            o = _as_value(other)
        except TypeError:
            return NotImplemented
        same = _same_field_equal(self, o)
        if same is not None:
            return same
        if self._key is not None and o._key is not None:
            if self._key == o._key:
                return True
            if self._key[0] == o._key[0] and self._key[0] in ("q", "eps", "z"):
                return False  # canonical keys of the same kind are unique
        return self._sign_minus(o) == 0

    def __hash__(self) -> int:
        if self._key is not None:
            return hash(self._key)
        raise TypeError("a certified Value (no exact key) is not hashable")

    def __lt__(self, other: Any) -> bool:
        return self._sign_minus(other) < 0

    def __le__(self, other: Any) -> bool:
        return self._sign_minus(other) <= 0

    def __gt__(self, other: Any) -> bool:
        return self._sign_minus(other) > 0

    def __ge__(self, other: Any) -> bool:
        return self._sign_minus(other) >= 0

    def describe(self) -> str:
        """Short text for messages: the closed form when short, else a decimal or interval."""
        text = self.exact
        if text is not None and len(text) <= 60:
            return text
        try:
            return self.decimal(12)
        except CertificationError:
            lo, hi = self.interval(6)
            return f"[{lo}, {hi}]"

    def __repr__(self) -> str:
        kind = "exact" if self.is_exact else "certified"
        return f"Value({self.describe()}, {kind})"

    def __str__(self) -> str:
        return self.describe()


def _unit_clip(text: str, digits: int) -> str:
    """A decimal of a probability, clipped to ``[0, 1]``: ``1`` keeps ``digits`` digits."""
    from decimal import Decimal, InvalidOperation

    try:
        x = Decimal(text)
    except InvalidOperation:
        return text
    if x > 1:
        return "1." + "0" * (digits - 1) if digits > 1 else "1"
    if x < 0:
        return "0"
    return text


def ball_ends(ball: flint.arb) -> tuple[flint.arb, flint.arb]:
    """The ends of a ball as exact points, rounded outward at the ball's own precision.

    ``arb.lower()`` and ``arb.upper()`` round to the context precision (53 bits by
    default), which would print a 1e-20-wide enclosure 1e-16 wide; here the precision
    covers every bit of the midpoint and the radius.
    """
    if ball.is_exact():
        return ball, ball
    mid_bits = ball.mid().bits()
    rel = ball.rel_accuracy_bits()
    prec = max(mid_bits, min(max(rel, 0), MAX_PREC_BITS) + 64, 53) + 8
    with flint.ctx.workprec(prec):
        return ball.lower(), ball.upper()


def _form_key(form: LinearForm) -> Hashable:
    """The canonical key of an exact epsilon: a rational's key when it has no logs."""
    if not form.logs:
        q = form.rational
        return ("q", q.numerator, q.denominator)
    return ("eps", form)


def _expanded_parts(domain: ExpDomain, x: QzElem, log: bool = False) -> ClosedParts:
    """The parts of :meth:`~.domain.ExpDomain.elem_str` (the denominator expanded)."""
    num, den = x.canonical
    factors = () if den.is_one() else ((den, 1),)
    return ClosedParts(domain.g0, (ClosedTerm(1, Fraction(0), num, 1, factors),), log)


def _form_lin(form: LinearForm) -> Lin | None:
    """A rational epsilon as a constant of Q(z) (for the exact zero test), else None."""
    if form.logs:
        return None
    return (ExpDomain(None), QzElem.from_rational(form.rational), QzElem.from_rational(0), None)


def _exactly_equal(a: Value, b: Value) -> bool:
    """Exact zero test of ``a - b`` for values ``x - e^eps y`` over fields Q(z) (or False).

    Both sides are brought into one joined field, whatever the degree growth: this runs
    only when balls at a moderate precision could not separate the two.
    """
    if a._lin is None or b._lin is None:
        return False
    try:
        dom = a._lin[0].join(b._lin[0])
        for lin in (a._lin, b._lin):
            if lin[3] is not None:
                dom = dom.join(ExpDomain.for_forms([lin[3]]))

        def term(lin: Lin) -> QzElem:
            d, x, y, form = lin
            out = d.convert_elem(x, dom)
            if form is not None:
                out = out - dom.exp_loss(dom.loss(form)) * d.convert_elem(y, dom)
            return out

        return (term(a._lin) - term(b._lin)).is_zero()
    except (ResourceLimitError, UnsupportedExpressionError):
        return False


def _same_field_equal(a: Value, b: Value) -> bool | None:
    """Equality of two elements of Q(z) without their canonical forms, or None.

    When both values are plain elements (no ``e^form y`` part) of domains with one rational
    generator and the same primes, both are re-expressed over the common ``g0`` and
    compared by cross-multiplication (``p/q = r/s`` iff ``p s = r q``, z transcendental):
    two products instead of two polynomial gcds, which dominate for large elements.
    """
    if a._lin is None or b._lin is None or a._key_make is None or b._key_make is None:
        return None  # (a key already made is cheaper to compare)
    (da, xa, ya, fa), (db, xb, yb, fb) = a._lin, b._lin
    if fa is not None or fb is not None or not ya.is_zero() or not yb.is_zero():
        return None
    if da.primes != db.primes or da.g0 is None or db.g0 is None:
        return None
    try:
        common = da.join(db)
        xa, xb = da.convert_elem(xa, common), db.convert_elem(xb, common)
    except (ResourceLimitError, UnsupportedExpressionError):
        return None
    return xa == xb


def _as_value(x: Any) -> Value:
    if isinstance(x, Value):
        return x
    if isinstance(x, float):
        raise TypeError(
            "floats are not exact; compare with a string ('0.3' means 3/10), a Fraction or an int"
        )
    if isinstance(x, (int, Fraction, str)):
        e = parse_exact(x, "value")
        if isinstance(e, Fraction):
            return Value.from_rational(e)
        from . import domain_for

        dom = domain_for([e])
        return Value.from_loss(dom, dom.loss_of(e))
    raise TypeError(f"cannot compare a Value with {type(x).__name__}")
