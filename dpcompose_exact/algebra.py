"""The expert layer in one namespace: the exact domain, regions and privacy-loss pairs.

Users of :mod:`dpcompose_exact` never need these names; they are here for readers who
want the machinery behind :class:`~dpcompose_exact.composition.Composition`:
:class:`ExpDomain` (exponent generators and the field Q(z)), :class:`QzElem` (its
elements), loss vectors (integer tuples over the generators), :class:`Region` (an exact
privacy region as its irredundant constraint list), :class:`PLD` (a finite dominating pair)
and the generating-function composition (docs/theory.md, sections 1-3).
"""

from .engines.certified import CertifiedRegion, compose_certified
from .engines.genfunc import compose_plds
from .numbers import (
    ExpDomain,
    Loss,
    QzElem,
    certified_sign,
    domain_for,
    parse_exact,
    parse_rational,
)
from .numbers.value import Value
from .regions.pld import PLD, canonical_pair
from .regions.tradeoff import (
    Region,
    dp_region,
    mixture_conjugate,
    mixture_minkowski,
    trivial_region,
)

__all__ = [
    "CertifiedRegion",
    "ExpDomain",
    "Loss",
    "PLD",
    "QzElem",
    "Region",
    "Value",
    "canonical_pair",
    "certified_sign",
    "compose_certified",
    "compose_plds",
    "domain_for",
    "dp_region",
    "mixture_conjugate",
    "mixture_minkowski",
    "parse_exact",
    "parse_rational",
    "trivial_region",
]
