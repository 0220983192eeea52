"""Randomized response: keep the input, or answer uniformly at random (the ``rr`` family)."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidParameterError
from ..numbers import parse_rational
from ..regions.specs import parse_count
from .dp import Mechanism

__all__ = ["randomized_response"]


def randomized_response(p: Any, buckets: int = 2) -> Mechanism:
    """Randomized response over ``buckets`` values, keeping the input w.p. ``1 - p``.

    With probability ``p`` the output is uniform over the buckets.  Two inputs
    ``x != x'`` (replace-one): ``P(x|x) = 1 - p + p/k``, ``P(x|x') = p/k``, the other
    buckets ``p/k`` under both, so the mechanism is ``ln((k(1-p) + p)/p)``-DP together
    with total variation ``1 - p`` (implied when ``k = 2``); ``p`` in ``(0, 1]``.

    >>> randomized_response("1/2").pairs
    (('log(3)', '0'),)
    """
    rate = parse_rational(p, "randomized response p")
    k = parse_count(buckets, "buckets", positive=True)
    if not 0 < rate <= 1 or k < 2:
        raise InvalidParameterError(
            f"randomized_response(p = {rate}, buckets = {k}): need 0 < p <= 1 and buckets >= 2"
        )
    ratio = (k * (1 - rate) + rate) / rate
    cons: list[tuple[Any, Any]] = [(f"log({ratio.numerator}/{ratio.denominator})", 0)]
    if k > 2:
        cons.append((0, 1 - rate))
    out = Mechanism(cons)
    out._label = f"rr({rate},{k})"  # its name in titles
    return out
