"""The one result interface: what every composition result answers, and how it knows it.

Every engine returns a :class:`PrivacyResult` (docs/architecture.md, "One vocabulary, one
interface"): ``delta(eps)``, ``epsilon(delta)``, the trade-off function ``f(t)``, the
irredundant constraint list ``(eps_i, delta_i)`` and an exact region containing the
result, each answered with :class:`~dpcompose_exact.numbers.value.Value`s.  How a result
knows its numbers is its one :class:`Exactness` field: closed forms in the exact field
(docs/theory.md, section 3), certified balls (section 13), or certified two-sided bounds
(section 14).  Results that answer the curves only share :class:`CurvesOnly`, which
refuses the rest in one line.
"""

from __future__ import annotations

from enum import Enum
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

from ..errors import UnsupportedQueryError
from ..numbers import LinearForm
from ..numbers.value import Value
from ..regions.tradeoff import Region

__all__ = ["Exactness", "PrivacyResult", "CurvesOnly"]


class Exactness(str, Enum):
    """How a result knows its numbers: the one exactness field of every result.

    It compares equal to its string (``Exactness.EXACT == "exact"``).
    """

    EXACT = "exact"  #: closed forms (elements of the exact field)
    CERTIFIED = "certified"  #: certified balls, every printed digit certified
    BOUNDS = "bounds"  #: certified two-sided enclosures (an interval, not every digit)

    def __str__(self) -> str:
        return self.value


@runtime_checkable
class PrivacyResult(Protocol):
    """What every composition result answers, whatever route computed it.

    Implemented by :class:`ExactResult` (closed forms), :class:`CertifiedResult` (exact
    structure, ball deltas) and :class:`~dpcompose_exact.engines.bounds.Bounded` (two-sided bounds
    only), as dp_accounting's dense and sparse PMFs share one interface.  Queries arrive
    parsed (:mod:`dpcompose_exact.numbers.convert`): the front door parses once.
    A result that cannot answer a query (bounds have no constraint list) raises
    :class:`~dpcompose_exact.errors.ResourceLimitError` with what to ask instead.
    """

    kind: Exactness  #: the one exactness field: exact, certified or bounds

    @property
    def region(self) -> Any:
        """The underlying expert object (Region, CertifiedRegion or Bounded)."""

    def delta(self, eps: LinearForm) -> Value:
        """``delta(eps)`` at a parsed epsilon."""

    def epsilon(self, delta: Fraction) -> Value:
        """``eps(delta)`` at a parsed delta in ``[0, 1)``."""

    def tradeoff(self, t: Fraction) -> Value:
        """The trade-off function at ``t`` in ``[0, 1]``."""

    def constraints(self) -> list[tuple[Value, Value]]:
        """The irredundant ``(eps, delta)`` list, increasing eps."""

    def describe(self) -> str:
        """A few words for ``repr``: the kind and the size."""

    def upper_region(self) -> Region:
        """An exact region containing this one (itself when exact), for exports."""


class CurvesOnly:
    """The part of the interface shared by results that answer curves only.

    Certified two-sided bounds and compositions with subsampled mechanisms answer
    ``delta(eps)`` and ``epsilon(delta)`` but have no constraint list: the calls that need
    one refuse in one line (:class:`~dpcompose_exact.errors.UnsupportedQueryError`), saying
    why (:attr:`no_list`) and what to ask instead.
    """

    #: why there is no constraint list (the start of every refusal)
    no_list = "this composition has no constraint list"

    @property
    def region(self) -> Any:
        """The result itself (there is no region object)."""
        return self

    def refuse(self, what: str) -> UnsupportedQueryError:
        """The one-line refusal of ``what`` (raise it)."""
        return self._refuse(what)

    def _refuse(self, what: str) -> UnsupportedQueryError:
        return UnsupportedQueryError(
            f"{self.no_list}: {what} is not available; ask for delta(eps) or epsilon(delta)"
        )

    def delta_decision(self, eps: Fraction, target: Fraction) -> Value:
        """An enclosure of ``delta(eps)`` for deciding whether ``delta(eps) <= target``.

        Certified like :meth:`delta`, but an engine may stop refining as soon as the
        enclosure lies on one side of ``target`` (a calibration needs only the side); this
        default is :meth:`delta`.
        """
        return self.delta(eps)  # type: ignore[attr-defined, no-any-return]

    def constraints(self) -> list[tuple[Value, Value]]:
        """Refused: no constraint list."""
        raise self._refuse("the constraint list")

    def upper_region(self) -> Any:
        """Refused: exports need one exact region."""
        raise self._refuse("an exact region for export")

    def tradeoff(self, t: Fraction) -> Value:
        """Refused: the trade-off function needs the constraint list."""
        raise self._refuse("the trade-off function")
