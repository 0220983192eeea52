"""A privacy region read as a mechanism: its canonical pair (docs/theory.md, section 1).

A region that is not the composition of its kinds (the paper's outer bounds, a region
loaded from a file) is summarised through the mechanism whose privacy region it is: the
canonical pair of :func:`~dpcompose_exact.regions.pld.canonical_pair` has the region's
trade-off function, which is all a composition, a Rényi divergence or a GDP ``mu``
depends on.
"""

from __future__ import annotations

from typing import Any

from ..regions.pld import canonical_pair
from ..regions.protocol import FinitePair, LossPair
from ..regions.tradeoff import Region

__all__ = ["RegionMechanism"]


class RegionMechanism:
    """A region as a mechanism: the finite symmetric pair of its canonical pair.

    Attributes:
        region: the exact privacy region.
    """

    __slots__ = ("region",)

    def __init__(self, region: Region) -> None:
        self.region = region

    def loss_pair(self) -> LossPair:
        """The canonical pair of the region: finite, symmetric, exact."""
        return FinitePair(canonical_pair(self.region))

    def describe(self) -> str:
        """``"the region"``."""
        return "the region"

    def to_dict(self) -> dict[str, Any]:
        """``{"region": [[eps, delta], ...]}`` with exact strings."""
        return {"region": [[str(e), str(d)] for e, d in self.region.constraints]}
