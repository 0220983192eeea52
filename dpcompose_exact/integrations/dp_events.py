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
from ..engines.genfunc import DEFAULT_MEMORY_LIMIT  # noqa: E402
from ..engines.memory import BASE_RSS  # noqa: E402
from ..errors import InvalidParameterError, ResourceLimitError  # noqa: E402
from ..numbers import ExpDomain, QzElem, parse_exact, parse_float_field  # noqa: E402
from ..regions.pld import PLD  # noqa: E402

__all__ = [
    "DpConstraintsEvent",
    "exact_number",
    "randomized_response_mechanism",
    "discrete_laplace_mechanism",
    "discrete_laplace_pair_bytes",
    "check_discrete_laplace_size",
]

# Bytes per (loss, z-power) slot of the discrete Laplace pair in Q(z): shift + 1 losses
# whose masses carry z^-x for x up to the shift, i.e. (shift + 1)^2 polynomial slots.
# Measured (CPython 3.11, python-flint 0.6): 16 per slot to build the mechanism, 50 with its
# canonical pair (the event trees); 56 keeps both below the estimate.
_DLAP_SLOT_BYTES = 56
# Bytes per atom of the pair with a rational e^a (exponent vectors, Python objects).
_DLAP_ATOM_BYTES = 1000


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


def discrete_laplace_pair_bytes(shift: int, ratio: Fraction | None = None) -> int:
    """Estimated peak bytes of building the exact discrete Laplace pair of ``shift``.

    The pair has ``shift + 1`` distinct losses; the mass of the loss ``a (s - 2x)`` is
    ``(1-q)/(1+q) q^x``, so the sizes grow with the square of the shift.

    Args:
        shift: the shift of the noise (sensitivity, doubled under replace-one).
        ratio: ``e^a`` when it is rational (the masses are rationals of about
            ``x log2(num den)`` bits); None: ``e^a`` is the generator ``z`` of Q(z) (the
            masses are polynomials of z-degree up to ``x``).

    Returns:
        The estimate in bytes, the interpreter included (:data:`BASE_RSS`).
    """
    slots = (shift + 1) ** 2
    if ratio is None:
        return BASE_RSS + _DLAP_SLOT_BYTES * slots
    bits = ratio.numerator.bit_length() + ratio.denominator.bit_length()
    # sum over x of 2 x bits (numerator and denominator of q^x (1-q)/(1+q)), in bytes
    return BASE_RSS + slots * bits // 8 + _DLAP_ATOM_BYTES * (shift + 1)


def check_discrete_laplace_size(
    shift: int,
    max_memory: int | None = DEFAULT_MEMORY_LIMIT,
    ratio: Fraction | None = None,
    what: str = "discrete Laplace",
) -> None:
    """Refuse, before allocating, a discrete Laplace pair too large for ``max_memory``.

    Args:
        shift: the shift of the noise.
        max_memory: bytes the pair may use (None: no limit).
        ratio: ``e^a`` when rational (see :func:`discrete_laplace_pair_bytes`).
        what: the event, for the message.

    Raises:
        ResourceLimitError: the estimate exceeds ``max_memory``; the message gives the
            shift, the estimate, the limit and the largest shift that fits.
    """
    if max_memory is None:
        return
    need = discrete_laplace_pair_bytes(shift, ratio)
    if need <= max_memory:
        return
    lo, hi = 0, shift  # the largest shift that fits, by bisection
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if discrete_laplace_pair_bytes(mid, ratio) <= max_memory:
            lo = mid
        else:
            hi = mid - 1
    raise ResourceLimitError(
        f"{what} with shift {shift}: its exact pair has {shift + 1} distinct losses with "
        f"masses up to q^{shift}, about {need:.3g} bytes to build; the memory limit is "
        f"{max_memory} bytes ({max_memory / 2**30:g} GiB), which fits shifts up to {lo} "
        "(raise the limit, or lower the sensitivity)"
    )


def discrete_laplace_mechanism(
    a: Fraction, shift: int, max_memory: int | None = DEFAULT_MEMORY_LIMIT
) -> Mechanism:
    """The exact mechanism of discrete Laplace noise ``P(x) ∝ e^(-a|x|)``, shifted by ``shift``.

    With ``q = e^-a`` the loss ``a(|x - s| - |x|)`` takes the values ``a s`` (mass
    ``1/(1+q)`` under P0), ``a (s - 2x)`` for ``0 < x < s`` (mass ``(1-q)/(1+q) q^x``) and
    ``-a s`` (mass ``q^s/(1+q)``): a finite pair in Q(z), z = e^a.

    Args:
        a: the noise parameter (``a > 0``).
        shift: the shift (``>= 1``).
        max_memory: bytes the pair may take (:func:`check_discrete_laplace_size`; None: no
            limit).

    Raises:
        ResourceLimitError: the pair would not fit in ``max_memory`` (checked before
            anything is allocated).
    """
    check_discrete_laplace_size(shift, max_memory, what="DiscreteLaplaceDpEvent")
    dom = ExpDomain(Fraction(a))
    z = QzElem.monomial(1, 1)
    masses = [((shift,), z / (z + 1))]  # 1/(1+q) = z/(z+1)
    for x in range(1, shift):
        # (1-q)/(1+q) q^x = (z-1)/(z+1) z^-x
        masses.append(((shift - 2 * x,), (z - 1) / ((z + 1) * QzElem.monomial(1, x))))
    masses.append(((-shift,), 1 / ((z + 1) * QzElem.monomial(1, shift - 1))))  # q^s/(1+q)
    pld = PLD.from_masses(dom, masses, QzElem.from_rational(0))
    return Mechanism.from_region(pld.to_region())
