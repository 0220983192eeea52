"""The exact number domain: parsing, the field Q(z), certified signs and decimals."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import mpmath
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcompose_exact.errors import InvalidParameterError, UnsupportedExpressionError
from dpcompose_exact.numbers import (
    ExpDomain,
    QzElem,
    ball_to_decimal,
    domain_for,
    linear_form,
    parse_exact,
    parse_float_field,
    parse_rational,
)


def test_decimal_strings_are_exact():
    assert parse_exact("0.3") == sympy.Rational(3, 10)
    assert parse_rational("1e-5") == Fraction(1, 100000)
    assert parse_rational("3/10") == Fraction(3, 10)
    assert parse_exact("ln(2)") == sympy.log(2)
    assert parse_exact(Fraction(1, 3)) == sympy.Rational(1, 3)


def test_decimals_are_exact_like_their_strings():
    # regression: Decimal("0.3") was refused though a Decimal is exact
    for text in ("0.3", "1E-5", "-2.50", "123456789.000000000000000000001", "0", "7E+3"):
        assert parse_exact(Decimal(text)) == Fraction(text)
        assert parse_rational(Decimal(text)) == parse_rational(text)
    assert parse_exact(Decimal("1e-5")) == Fraction(1, 10**5)  # not the double 1e-5
    for bad in ("NaN", "Infinity", "-Infinity", "sNaN"):
        with pytest.raises(InvalidParameterError, match="not finite"):
            parse_exact(Decimal(bad), "eps")
    # the digit limit of an input applies to a Decimal as to its string
    with pytest.raises(InvalidParameterError, match="digits"):
        parse_exact(Decimal("1E+99999999"), "eps")


def test_float_fields_of_other_libraries_are_read_by_repr():
    # the one exception to "floats are refused": a field another library types as float
    assert parse_float_field(0.1) == Fraction(1, 10)
    assert parse_float_field(1e-5) == Fraction(1, 10**5)
    assert parse_float_field(0.1 + 0.2) == Fraction("0.30000000000000004")
    assert parse_float_field(Decimal("0.25")) == Fraction(1, 4)
    assert parse_float_field("3/20") == Fraction(3, 20)
    with pytest.raises(InvalidParameterError, match="not finite"):
        parse_float_field(float("inf"), "noise")


def test_float_is_refused_with_a_hint():
    with pytest.raises(TypeError, match=r"pass the decimal as a string \('0.3' means 3/10\)"):
        parse_exact(0.3, "eps")
    with pytest.raises(TypeError, match="contains a Float"):
        parse_exact(sympy.Float(0.3))


@pytest.mark.parametrize(
    "text,msg",
    [
        ("", "cannot parse"),
        ("0.3;import os", "cannot parse"),
        ("x + 1", "unknown name 'x'"),
        ("1/0", "division by zero"),
        ("nan", "not finite"),
        ("-inf", "not finite"),
        ("Infinity", "not finite"),
        ("zoo", "unknown name 'zoo'"),
    ],
)
def test_bad_strings(text, msg):
    with pytest.raises(InvalidParameterError, match=msg):
        parse_exact(text)


@pytest.mark.parametrize(
    ("text", "piece"),
    [
        ("sqrt(2)", r"sqrt\(\.\.\.\)"),
        ("1 + cos(1/2)", r"cos\(\.\.\.\)"),
        ("pi/4", "pi"),
        ("2**(1/2)", r"the fractional power '2\*\*\(1/2\)'"),
    ],
)
def test_values_outside_the_exact_field_are_named_as_such(text, piece):
    # before: "unknown function 'sqrt'", as if the input were a typo
    with pytest.raises(
        UnsupportedExpressionError,
        match=rf"eps: .* uses {piece}, which is outside the exact field: the exact field holds "
        r"rationals and rational combinations of logs of rationals",
    ):
        parse_exact(text, "eps")
    with pytest.raises(InvalidParameterError, match="unknown function 'sqrtt'"):
        parse_exact("sqrtt(2)", "eps")


def test_linear_forms_split_logs_into_primes():
    f = linear_form(sympy.sympify("1/2 + log(12) - log(3)/1"))
    assert f.rational == Fraction(1, 2)
    assert dict(f.logs) == {2: Fraction(2)}
    with pytest.raises(UnsupportedExpressionError, match="outside the supported exact field"):
        linear_form(sympy.sqrt(2))


def test_expression_parser_evaluates_no_python():
    """Regression: sympy.parse_expr ran builtins (print, chr, eval) from user strings."""
    with pytest.raises(InvalidParameterError, match="unknown function 'print'"):
        parse_exact("print(chr(72)+chr(105))")
    with pytest.raises(InvalidParameterError, match="is not a number or an allowed expression"):
        parse_exact("(1).__class__")
    assert parse_exact("2*log(3/2) + 0.1") == sympy.Rational(1, 10) + 2 * sympy.log(
        sympy.Rational(3, 2)
    )
    assert parse_exact("(1/3)**2 - 1e-1") == Fraction(1, 9) - Fraction(1, 10)


def test_qzelem_hash_agrees_with_fraction():
    assert QzElem.from_rational(Fraction(1, 2)) == Fraction(1, 2)
    assert hash(QzElem.from_rational(Fraction(1, 2))) == hash(Fraction(1, 2))
    assert {QzElem.from_rational(1): "x"}.get(1) == "x"


def test_domain_generators_and_losses():
    dom = domain_for([sympy.Rational(3, 10), sympy.Rational(3, 20), sympy.log(6)])
    assert dom.g0 == Fraction(3, 20) and dom.primes == (2, 3)
    assert dom.loss_of(sympy.Rational(3, 10) + sympy.log(6)) == (2, 1, 1)
    assert dom.to_sympy((2, 1, 1)) == sympy.Rational(3, 10) + sympy.log(2) + sympy.log(3)
    assert dom.exp_loss((0, 1, -1)) == Fraction(2, 3)
    with pytest.raises(UnsupportedExpressionError, match="irrational algebraic"):
        domain_for([sympy.log(2) / 2])


def test_loss_order_is_exact_across_generators():
    dom = domain_for([sympy.Rational(7, 10), sympy.log(2)])
    # 0.7 > log 2 = 0.6931..., by 0.0069
    assert dom.compare_loss(dom.loss_of(sympy.Rational(7, 10)), dom.loss_of(sympy.log(2))) == 1
    assert dom.loss_sign((0, 0)) == 0


def test_arithmetic_and_zero_test():
    z = QzElem.monomial(1, 1)
    a = (z**2 - 1) / (z - 1)
    assert a == z + 1
    assert (a - z - 1).is_zero()
    assert hash(a) == hash(z + 1)
    assert QzElem.monomial(Fraction(1, 2), -2) * z**2 == Fraction(1, 2)


def test_certified_sign_near_cancellation():
    # e^{1/10} - 1105170918/10^9 > 0 only in the 10th digit
    dom = ExpDomain(Fraction(1, 10))
    x = QzElem.monomial(1, 1) - Fraction(1105170918, 10**9)
    assert dom.sign(x) == 1
    assert dom.sign(-x) == -1
    assert dom.sign(x - x) == 0


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(-(10**6), 10**6), min_size=1, max_size=6),
    st.integers(1, 40),
)
def test_decimals_correct_to_one_ulp(coeffs, digits):
    dom = ExpDomain(Fraction(3, 20))
    import flint

    x = QzElem(flint.fmpz_poly(coeffs), flint.fmpz_poly([7, 0, 1]))
    mpmath.mp.dps = digits + 40
    z = mpmath.exp(mpmath.mpf(3) / 20)
    exact = sum(c * z**i for i, c in enumerate(coeffs)) / (7 + z**2)
    text = dom.decimal(x, digits)
    if exact == 0:
        assert text == "0"
        return
    got = mpmath.mpf(text)
    ulp = mpmath.mpf(10) ** (mpmath.floor(mpmath.log10(abs(got))) - digits + 1)
    assert abs(got - exact) <= ulp
    mant = text.replace("-", "").split("e")[0]
    sig = mant.replace(".", "").lstrip("0") if "." in mant else mant.strip("0")
    assert len(sig) <= digits


def test_decimal_format():
    dom = ExpDomain(None)
    assert dom.decimal(QzElem.from_rational(Fraction(1, 3)), 5) == "0.33333"
    assert dom.decimal(QzElem.from_rational(Fraction(-1, 3 * 10**9)), 3) == "-3.33e-10"
    assert dom.decimal(QzElem.from_rational(123456), 3) == "123000"
    with pytest.raises(InvalidParameterError, match="must be an integer from 1 to 100000"):
        dom.decimal(QzElem.from_rational(1), 0)


def test_ball_to_decimal_refuses_wide_balls():
    import flint

    wide = flint.arb(1, 0.1)  # 1 +/- 0.1
    assert ball_to_decimal(wide, 10) is None


def test_elem_string_round_trips_through_sympify():
    dom = ExpDomain(Fraction(3, 20))
    z = QzElem.monomial(1, 1)
    x = (3 * z**3 - Fraction(1, 7)) / (z**2 + 2)
    text = dom.elem_str(x)
    back = sympy.sympify(text)
    assert abs(back.evalf(50) - sympy.Float(dom.decimal(x, 45), 50)) < sympy.Float(10) ** -40


def test_regions_canonicalise_or_refuse():
    """Regression: a reversed constraint list was accepted and compared unequal."""
    from dpcompose_exact.regions.tradeoff import Region, dp_region

    r = dp_region([("0.3", "0"), ("0.15", "0.02"), ("0", "0.05")], warn=False)
    assert len(r.constraints) == 3
    back = Region(r.domain, tuple(reversed(r.constraints)))
    assert back == r and back.constraints == r.constraints and hash(back) == hash(r)
    with pytest.raises(InvalidParameterError, match="two constraints with eps"):
        Region(r.domain, (r.constraints[0], r.constraints[0]))
    with pytest.raises(InvalidParameterError, match="must be >= 0"):
        Region(r.domain, (((-1,), QzElem.from_rational(0)),))


def test_elements_know_their_field():
    """Regression: e^0.3 of one domain compared equal to e^0.2 of another (both 'z')."""
    a = ExpDomain(Fraction(3, 10))
    b = ExpDomain(Fraction(1, 5))
    za, zb = a.exp_loss((1,)), b.exp_loss((1,))
    with pytest.raises(InvalidParameterError, match="different fields"):
        _ = za == zb
    with pytest.raises(InvalidParameterError, match="different fields"):
        _ = za + zb
    with pytest.raises(InvalidParameterError, match="evaluated in the domain"):
        b.decimal(za, 10)
    # they unify through a common domain: e^0.3 = z^3, e^0.2 = z^2 with z = e^0.1
    c = a.join(b)
    assert a.convert_elem(za, c) == c.exp_loss((3,))
    assert b.convert_elem(zb, c) == c.exp_loss((2,))
    assert a.convert_elem(za, c) != b.convert_elem(zb, c)
    # constants belong to every field
    assert za * 2 / 2 == za and QzElem.from_rational(1) == 1


def test_a_delta_with_more_digits_than_python_prints_is_refused_in_one_line():
    # Regression (long property run): the leak of RR(1e-6) x 10^4 has about 60,000 digits;
    # the refusal's message used str() on it, which CPython refuses past 4,300 digits.
    from dpcompose_exact.errors import InvalidParameterError
    from dpcompose_exact.numbers.convert import parse_delta

    leak = 1 - (1 - Fraction(1, 10**6)) ** 10_000
    with pytest.raises(InvalidParameterError, match=r"<a number of about \d+ digits>") as err:
        parse_delta(leak)
    assert "\n" not in str(err.value) and len(str(err.value)) < 300


def test_values_of_two_fields_compare_without_their_canonical_forms():
    """Equality of plain elements of Q(e^(1/4)) and Q(e^(1/6)) by cross-multiplication
    over the common Q(e^(1/12)) (no gcd), checked against the canonical keys and against
    the certified sign of the difference."""
    from dpcompose_exact.numbers.value import Value, _same_field_equal

    d4 = ExpDomain(Fraction(1, 4), ())
    d6 = ExpDomain(Fraction(1, 6), ())
    z4 = d4.exp_loss((1,))  # e^(1/4)
    z6 = d6.exp_loss((1,))  # e^(1/6)
    # e^(1/2) / (1 + e^(1/2)) written in each field, unreduced on one side
    a = Value.from_qz(d4, (z4**2 * (z4 + 1)) / ((1 + z4**2) * (z4 + 1)))
    b = Value.from_qz(d6, z6**3 / (1 + z6**3))
    c = Value.from_qz(d6, z6**2 / (1 + z6**3))  # e^(1/3) / (1 + e^(1/2)): different
    assert _same_field_equal(a, b) is True and _same_field_equal(a, c) is False
    assert a == b and a != c and b != c
    assert a._key == b._key and a._key != c._key  # the canonical path agrees
    assert Value.from_qz(d4, z4 - z4) == 0 and Value.from_rational(Fraction(1, 3)) != a
