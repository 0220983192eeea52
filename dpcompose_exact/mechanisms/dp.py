"""Mechanisms given by (eps, delta)-DP constraints: the ``dp`` family.

:class:`Mechanism` satisfies every given constraint at once; its privacy region is the
intersection of the constraints' regions, kept in canonical form, and its privacy-loss
pair the region's canonical pair (docs/theory.md, section 1): finite, symmetric, exact
(a :class:`~dpcompose_exact.regions.protocol.FinitePair`).  Randomized response and
discrete Laplace build one (:mod:`.randomized_response`, :mod:`.discrete_laplace`).

>>> m = Mechanism([("0.3", "0"), ("0.15", "0.02")])
>>> m.pairs
(('3/20', '1/50'), ('3/10', '0'))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import DPComposeError, InvalidParameterError, MissingDependencyError
from ..numbers.convert import parse_eps
from ..numbers.format import readable_exact
from ..numbers.value import Value
from ..regions.pld import canonical_pair
from ..regions.protocol import FinitePair, LossPair
from ..regions.tradeoff import Region, dp_region, exact_region
from .subsampled import SubsampledMechanism, subsample_region

__all__ = ["Mechanism", "EXPORTERS"]


class Mechanism:
    """A mechanism that satisfies every given (eps, delta)-DP constraint at once.

    Values are exact: strings (``"0.3"`` is 3/10, ``"1e-5"``, ``"3/20"``, ``"log(2)"``),
    ints, Fractions or sympy expressions; floats are refused with a TypeError.  The
    constraints are kept in canonical form (the active ones, by increasing eps), so equal
    mechanisms compare and hash equal.

    >>> m = Mechanism([("0.3", "0"), ("0.15", "0.02")])
    >>> m == Mechanism.dp("3/20", "1/50") & Mechanism.dp("3/10")
    True
    """

    __slots__ = ("_region", "_given", "_label")

    def __init__(self, constraints: Iterable[tuple[Any, Any]]) -> None:
        pairs = list(constraints)
        if pairs and not isinstance(pairs[0], (tuple, list)) and len(pairs) == 2:
            raise InvalidParameterError(
                f"Mechanism takes a list of (eps, delta) pairs, got {pairs!r}; for one pair "
                "write Mechanism.dp(eps, delta)"
            )
        self._region = dp_region(pairs)
        self._given: tuple[Any, ...] | None = tuple(e for e, _ in pairs)  # for the name
        self._label: str | None = None

    @classmethod
    def dp(cls, eps: Any, delta: Any = 0) -> Mechanism:
        """A mechanism with one (eps, delta)-DP constraint (pure DP when delta is 0)."""
        return cls([(eps, delta)])

    @classmethod
    def coerce(cls, m: Any) -> Mechanism:
        """``m`` itself, or the mechanism of one ``(eps, delta)`` pair or of a list of them.

        Raises:
            TypeError: ``m`` is neither (another family's mechanism, say).
        """
        if isinstance(m, Mechanism):
            return m
        if isinstance(m, (list, tuple)) and len(m) == 2 and not isinstance(m[0], (list, tuple)):
            return cls.dp(*m)  # one (eps, delta) pair
        if isinstance(m, (list, tuple)):
            return cls(m)
        raise TypeError(
            f"expected a Mechanism or a list of (eps, delta) pairs, got {type(m).__name__}"
        )

    @classmethod
    def from_region(cls, region: Region) -> Mechanism:
        """The mechanism whose privacy region is ``region`` (for experts)."""
        out = cls.__new__(cls)
        out._region = exact_region(region, "from_region")
        out._given = out._label = None
        return out

    @property
    def region(self) -> Region:
        """The exact privacy region (expert view)."""
        return self._region

    @property
    def constraints(self) -> list[tuple[Value, Value]]:
        """The active constraints as exact ``(eps, delta)`` Values, increasing eps."""
        dom = self._region.domain
        return [
            (Value.from_loss(dom, loss), Value.from_element(dom, d))
            for loss, d in self._region.constraints
        ]

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        """The active constraints as exact strings ``(eps, delta)``."""
        dom = self._region.domain
        return tuple((dom.loss_str(l_), dom.elem_str(d)) for l_, d in self._region.constraints)

    def __and__(self, other: Mechanism) -> Mechanism:
        """The mechanism satisfying the constraints of both (intersection of regions)."""
        if not isinstance(other, Mechanism):
            return NotImplemented
        return Mechanism.from_region(self._region.intersect(other._region))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mechanism):
            return NotImplemented
        return self._region == other._region

    def __hash__(self) -> int:
        return hash(self._region)

    def loss_pair(self) -> LossPair:
        """The canonical dominating pair of the region: finite, symmetric, exact."""
        return FinitePair(canonical_pair(self._region))

    def to_dict(self) -> dict[str, Any]:
        """``{"constraints": [[eps, delta], ...]}`` with exact strings."""
        return {"constraints": [list(p) for p in self.pairs]}

    def __repr__(self) -> str:
        return f"Mechanism({[p for p in self.pairs]!r})"

    @property
    def label(self) -> str | None:
        """The name a family gave the mechanism (``rr(1/2,2)``), for titles; else None."""
        return self._label

    @property
    def given_pairs(self) -> tuple[tuple[str, str], ...]:
        """:attr:`pairs` in the order the constraints were given (for titles).

        Outputs name a mechanism as it was written (``--dp 0.3,0 --dp 0.15,0.02`` is
        ``{(0.3, 0), (0.15, 0.02)}``); the canonical order (increasing eps) stays that of
        :attr:`pairs`, the JSON and equality.
        """
        pairs = self.pairs
        if not self._given or len(pairs) < 2:
            return pairs
        try:
            given = [parse_eps(e, "epsilon") for e in self._given]
        except (DPComposeError, TypeError):  # pragma: no cover - parsed before
            return pairs

        def position(pair: tuple[str, str]) -> int:
            form = parse_eps(pair[0], "epsilon")
            return next((i for i, g in enumerate(given) if g == form), len(given))

        return tuple(sorted(pairs, key=position))

    def describe(self) -> str:
        """``(eps, delta)+...`` with readable exact strings, for titles."""
        return "+".join(f"({readable_exact(e)}, {readable_exact(d)})" for e, d in self.pairs)

    def subsample(self, q: Any) -> SubsampledMechanism:
        """The mechanism run on a random subsample of rate ``q`` (exact, asymmetric pair).

        Poisson sampling of rate ``q`` under add/remove, or ``m`` of ``n`` records without
        replacement under replace-one (``q = m/n``), the constraints being for that
        relation (docs/theory.md, section 15).  Exact when every eps is the log of a
        rational (``"log(3)"``), else certified two-sided bounds (eps rounded to logs of
        rationals both ways).  Compose the result with ``dx.compose``, which then returns
        a :class:`~dpcompose_exact.engines.subsample.SubsampledComposition` (or
        :class:`~dpcompose_exact.engines.subsample.SubsampledBounds`).

        >>> import dpcompose_exact as dx
        >>> m = Mechanism.dp("log(3)").subsample("1/10")
        >>> dx.compose(m, 10).delta("0.5").decimal(20)
        '0.021458838640290929750'
        """
        out = subsample_region(self._region, q, repr(self))
        out.pairs = self.pairs
        return out

    # -- exports (dpcompose_exact.presentation.export registers them) -----------------------
    def to_dp_accounting(self, value_discretization_interval: float = 1e-4) -> Any:
        """A pessimistic ``dp_accounting`` ``PrivacyLossDistribution`` of this mechanism."""
        return _export("to_dp_accounting", self._region, value_discretization_interval)

    def to_prv(self) -> Any:
        """A ``prv_accountant.PrivacyRandomVariable`` of this mechanism's exact pair."""
        return _export("to_prv", self._region)

    def to_opendp(self) -> Any:
        """An OpenDP ``PrivacyProfile`` whose delta(eps) is never below the exact one."""
        return _export("to_opendp", self._region)


#: the exports of an exact region to other libraries' objects, by method name; the
#: presentation layer, which writes them, registers them here when it is imported (the
#: front door imports it), so that this layer needs nothing above it
EXPORTERS: dict[str, Callable[..., Any]] = {}


def _export(name: str, region: Region, *args: Any) -> Any:
    try:
        write = EXPORTERS[name]
    except KeyError:
        raise MissingDependencyError(
            f"{name}() is written by dpcompose_exact.presentation.export; import "
            "dpcompose_exact.api (or use dx.Mechanism) so that it registers"
        ) from None
    return write(region, *args)
