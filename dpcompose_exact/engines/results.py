"""The one result interface (exact, certified, bounded) and the curves delta(eps), eps(delta).

:class:`PrivacyResult` is what every engine returns (docs/architecture.md);
:class:`ExactResult` and :class:`CertifiedResult` share the curve algorithms below, written
once in :class:`ListedResult`.

Between two consecutive loss values ``l_i < l_{i+1}`` of the composed pair no loss lies,
so ``delta(eps) = sum_{l > eps} (P0(l) - e^eps P1(l)) = A - e^eps B`` is affine in
``e^eps`` there, with the region's own deltas at both ends (docs/theory.md, section 3):

* ``B = (delta_i - delta_{i+1}) / (e^{l_{i+1}} - e^{l_i})`` and ``A = delta_{i+1} +
  e^{l_{i+1}} B`` are elements of the region's own field; ``e^eps`` stays one exact factor
  in its own right.  The query never joins the composition's exponent field, so its cost
  does not depend on the query's denominator (``0.123457`` next to losses in steps of
  ``3/20`` would otherwise need polynomials of degree ``10^5`` times larger).
* The segment holding ``eps`` is found by certified comparisons of ``eps`` with the
  region's losses (an exact zero test on their linear forms, then balls).
* ``eps(delta) = log(e^{l_i} + (delta_i - delta) (e^{l_{i+1}} - e^{l_i})
  / (delta_i - delta_{i+1}))`` on the segment where ``delta_{i+1} <= delta < delta_i``:
  the log of an exact element (the rational ``delta`` lies in every field), not a bisection.
* Below the smallest loss ``l_0 > 0`` the maximising point is the vertex ``(c, c)``,
  ``c = (1 - delta_0) / (1 + e^{l_0})``: ``delta(eps) = (1 - c) - e^eps c``.

Exact regions and certified regions (large k, ball deltas) share this one implementation
through a small adapter: only where the deltas and the ``e^{l_i}`` come from differs.
:func:`delta_value` and :func:`epsilon_value` return :class:`~dpcompose_exact.numbers.value.Value`;
:func:`delta_of_eps` and :func:`eps_of_delta` wrap them as printable :class:`CurvePoint`.

The interface is :mod:`~dpcompose_exact.engines.result_interface`, the curve algorithms
:mod:`~dpcompose_exact.engines.curves`, the exact and certified results
:mod:`~dpcompose_exact.engines.listed_results`; this module gathers them under one name
(every name above is importable from here) and holds the functions on regions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..numbers import parse_rational as _parse_rational
from ..numbers.convert import parse_delta, parse_eps
from ..numbers.value import Value
from ..regions.tradeoff import Region
from .certified import CertifiedRegion
from .curves import ListedResult as ListedResult
from .listed_results import CertifiedResult as CertifiedResult
from .listed_results import ExactResult as ExactResult
from .listed_results import listed_result
from .result_interface import CurvesOnly as CurvesOnly
from .result_interface import Exactness as Exactness
from .result_interface import PrivacyResult as PrivacyResult

# the result types imported above (``X as X``) are importable from here too; each is documented
# in its own module
__all__ = [
    "CurvePoint",
    "delta_of_eps",
    "eps_of_delta",
    "delta_value",
    "epsilon_value",
]


def delta_value(region: Region | CertifiedRegion, eps: Any) -> Value:
    """``delta(eps)``: the smallest delta such that the composition is (eps, delta)-DP.

    Args:
        region: an exact :class:`~dpcompose_exact.regions.tradeoff.Region` or a
            :class:`~dpcompose_exact.engines.certified.CertifiedRegion`.
        eps: any exact epsilon >= 0 (``"0.123457"``, ``"log(2)"``, a Fraction, ...).

    Returns:
        An exact :class:`Value` (closed form ``A - exp(eps)*B``, or an element of the
        region's field when ``eps`` lies in it) for an exact region; a certified
        enclosure for a certified region.
    """
    return listed_result(region).delta(parse_eps(eps))


def epsilon_value(region: Region | CertifiedRegion, delta: Any) -> Value:
    """``eps(delta)``: the smallest eps >= 0 such that the composition is (eps, delta)-DP.

    Raises:
        InvalidParameterError: outside ``[0, 1)``, or below the leak (no finite eps).
    """
    return listed_result(region).epsilon(parse_delta(delta))


@dataclass(frozen=True)
class CurvePoint:
    """One point of a privacy curve: exact strings (when known) and certified decimals.

    The strings are computed on demand from the two values: a closed form is never built
    unless asked for (the rows of :func:`~dpcompose_exact.presentation.rows.point_row`
    build none unless asked).
    """

    epsilon_value: Value
    delta_value: Value
    digits: int = 30
    given: str = "epsilon"  # the coordinate the user gave (not repeated as a closed form)

    @property
    def epsilon(self) -> str | None:
        """The exact epsilon, or None when only certified."""
        return self.epsilon_value.exact

    @property
    def delta(self) -> str | None:
        """The exact delta (None when only certified, or when delta was the input)."""
        return None if self.given == "delta" else self.delta_value.exact

    @property
    def epsilon_decimal(self) -> str:
        """Certified decimal of epsilon."""
        return self.epsilon_value.decimal(self.digits)

    @property
    def delta_decimal(self) -> str:
        """Certified decimal of delta."""
        return self.delta_value.decimal(self.digits)


def delta_of_eps(region: Region | CertifiedRegion, eps: Any, digits: int = 30) -> CurvePoint:
    """``delta(eps)`` as a printable point (see :func:`delta_value`)."""
    form = parse_eps(eps)
    return CurvePoint(Value.from_form(form), listed_result(region).delta(form), digits)


def eps_of_delta(region: Region | CertifiedRegion, delta: Any, digits: int = 30) -> CurvePoint:
    """``eps(delta)`` as a printable point (see :func:`epsilon_value`)."""
    value = epsilon_value(region, delta)
    given = Value.from_rational(_parse_rational(delta, "delta"))
    return CurvePoint(value, given, digits, given="delta")
