"""The package's own dp_accounting events: constraints, any mechanism, random allocation.

A mechanism given by its (eps, delta) constraints, as a ``DpEvent`` (it subclasses
dp_accounting's, so this module needs dp_accounting).  Events of every kind are read in
one place, :mod:`dpcompose_exact.integrations.events`, which also holds the exact pairs of
randomized response and discrete Laplace (re-exported here).
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal  # noqa: F401 - the docstrings' examples
from typing import Any

from ..optional import require

require("dp_accounting", "the dp_accounting integration")

import attr  # noqa: E402  (after the one-line guard above)
from dp_accounting import dp_event  # noqa: E402

from ..errors import InvalidParameterError  # noqa: E402
from ..numbers import parse_exact  # noqa: E402
from ..regions.protocol import is_mechanism  # noqa: E402
from .events import (  # noqa: E402
    discrete_laplace_mechanism,
    exact_number,
    randomized_response_mechanism,
)

__all__ = [
    "DpConstraintsEvent",
    "MechanismDpEvent",
    "RandomAllocationDpEvent",
    "exact_number",
    "randomized_response_mechanism",
    "discrete_laplace_mechanism",
]


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


def _as_mechanism(value: Any) -> Any:
    if not is_mechanism(value):
        raise TypeError(
            f"MechanismDpEvent takes a mechanism of this package (dx.Mechanism, "
            f"dx.gaussian_noise(...), ...), got {type(value).__name__}"
        )
    return value


@attr.s(frozen=True, slots=True, auto_attribs=True)
class MechanismDpEvent(dp_event.DpEvent):
    """Any mechanism of this package as a ``DpEvent`` (one use of it).

    The mechanism speaks the package's mechanism protocol
    (:class:`~dpcompose_exact.regions.protocol.MechanismLike`), so a mechanism defined
    outside the package composes in :class:`~dpcompose_exact.integrations.dp_accounting.
    ExactAccountant` too (docs/adding_a_mechanism.md).  Its pair refers to the
    accountant's neighboring relation.
    """

    mechanism: Any = attr.ib(converter=_as_mechanism)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class RandomAllocationDpEvent(dp_event.DpEvent):
    """One epoch of Gaussian random allocation (each record in some of ``num_steps`` steps).

    Each record takes part in ``num_selected`` of the ``num_steps`` steps, drawn at random;
    each step adds Gaussian noise of ``noise_multiplier``.  dp_accounting 0.6 has no
    event for it.  Read under ``ADD_OR_REMOVE_ONE`` as
    :func:`dpcompose_exact.random_allocation` (docs/theory.md, section 21);
    ``num_selected > 1`` gets two-sided bounds from two simpler pairs (section 21).  Its
    fields are read as the other events' are (a float by its repr).

    >>> RandomAllocationDpEvent("1", 100).num_steps
    100
    """

    noise_multiplier: Any
    num_steps: int
    num_selected: int = 1
