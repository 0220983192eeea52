"""dp_accounting events as exact mechanisms: the dictionary both integrations share.

:class:`DpConstraintsEvent` (a mechanism given by its (eps, delta) constraints),
:func:`randomized_response_mechanism` and :func:`discrete_laplace_mechanism` (the exact
pairs of dp_accounting's events of those names) and :func:`exact_number` (the one reading
of an event's float field) are used by the drop-in accountant
(:mod:`dpcompose_exact.integrations.dp_accounting`) and by the event trees
(:mod:`dpcompose_exact.integrations.event_tree`); they live here so
that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal  # noqa: F401 - the docstrings' examples
from fractions import Fraction
from typing import Any

from ..optional import require

require("dp_accounting", "the dp_accounting integration")

import attr  # noqa: E402  (after the one-line guard above)
from dp_accounting import dp_event  # noqa: E402

from ..api import Mechanism  # noqa: E402
from ..errors import InvalidParameterError  # noqa: E402
from ..numbers import ExpDomain, QzElem, parse_exact, parse_float_field  # noqa: E402
from ..regions.pld import PLD  # noqa: E402

__all__ = [
    "DpConstraintsEvent",
    "exact_number",
    "randomized_response_mechanism",
    "discrete_laplace_mechanism",
]


def exact_number(value: Any, what: str = "value") -> Fraction:
    """A parameter dp_accounting defines as a float, exactly (a float: its ``repr`` decimal).

    The one rule for floats (docs/api_guide.md, "Exact inputs and floats"):
    :func:`~dpcompose_exact.numbers.parsing.parse_float_field`.

    >>> exact_number(0.1), exact_number("1e-5"), exact_number(2)
    (Fraction(1, 10), Fraction(1, 100000), Fraction(2, 1))
    """
    return parse_float_field(value, what)


def _as_constraints(constraints: Iterable[Any]) -> tuple[tuple[Any, Any], ...]:
    out = []
    for c in constraints:
        if not isinstance(c, (tuple, list)) or len(c) != 2:
            raise InvalidParameterError(
                f"DpConstraintsEvent: expected (eps, delta) pairs, got {c!r}"
            )
        # an event of this package: exact values as everywhere in it, floats refused
        parse_exact(c[0], "DpConstraintsEvent eps")
        parse_exact(c[1], "DpConstraintsEvent delta")
        out.append((c[0], c[1]))
    if not out:
        raise InvalidParameterError("DpConstraintsEvent needs at least one (eps, delta) pair")
    return tuple(out)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class DpConstraintsEvent(dp_event.DpEvent):
    """A mechanism that satisfies every listed (eps, delta)-DP constraint at once.

    dp_accounting 0.6 has no event for an (eps, delta) guarantee.  Values are exact, as
    everywhere in this package: strings (``"0.3"``, ``"1e-5"``, ``"3/20"``, ``"log(2)"``),
    ints, Decimals, Fractions; floats are refused with a TypeError (the event is not one of
    dp_accounting's, whose fields are floats by design).  The constraints refer to the
    accountant's neighboring relation.

    >>> DpConstraintsEvent([("0.3", "0"), (Decimal("0.15"), "0.02")]).constraints
    (('0.3', '0'), (Decimal('0.15'), '0.02'))
    """

    constraints: tuple[tuple[Any, Any], ...] = attr.ib(converter=_as_constraints)


def randomized_response_mechanism(p: Fraction, k: int) -> Mechanism:
    """The exact mechanism of randomized response over ``k`` buckets, noise ``p`` (REPLACE_ONE).

    Two inputs ``x != x'``: ``P(x|x) = 1 - p + p/k``, ``P(x|x') = p/k``, the other buckets
    ``p/k`` under both, so the pair is ``ln((k(1-p) + p)/p)``-DP together with total
    variation ``1 - p`` (implied when ``k = 2``).  ``p`` in ``(0, 1]``, ``k >= 2``.
    """
    ratio = (k * (1 - p) + p) / p
    cons: list[tuple[Any, Any]] = [(f"log({ratio.numerator}/{ratio.denominator})", 0)]
    if k > 2:
        cons.append((0, 1 - p))
    return Mechanism(cons)


def discrete_laplace_mechanism(a: Fraction, shift: int) -> Mechanism:
    """The exact mechanism of discrete Laplace noise ``P(x) ∝ e^(-a|x|)``, shifted by ``shift``.

    With ``q = e^-a`` the loss ``a(|x - s| - |x|)`` takes the values ``a s`` (mass
    ``1/(1+q)`` under P0), ``a (s - 2x)`` for ``0 < x < s`` (mass ``(1-q)/(1+q) q^x``) and
    ``-a s`` (mass ``q^s/(1+q)``): a finite pair in Q(z), z = e^a.
    """
    dom = ExpDomain(Fraction(a))
    z = QzElem.monomial(1, 1)
    masses = [((shift,), z / (z + 1))]  # 1/(1+q) = z/(z+1)
    for x in range(1, shift):
        # (1-q)/(1+q) q^x = (z-1)/(z+1) z^-x
        masses.append(((shift - 2 * x,), (z - 1) / ((z + 1) * QzElem.monomial(1, x))))
    masses.append(((-shift,), 1 / ((z + 1) * QzElem.monomial(1, shift - 1))))  # q^s/(1+q)
    pld = PLD.from_masses(dom, masses, QzElem.from_rational(0))
    return Mechanism.from_region(pld.to_region())
