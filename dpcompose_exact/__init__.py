"""dpcompose_exact: exact composition of mechanisms with several (eps, delta)-DP constraints.

Layers (imports only go down this list): ``errors``/``numbers`` (the exact domain) ->
``tradeoff``/``pld`` (regions, dominating pairs, mixtures) -> ``compose`` (generating
functions) -> ``theorems`` (the paper's results) -> ``render``/``cli``.

>>> from dpcompose_exact import compose
>>> region, method = compose([("0.3", "0"), ("0.15", "0.02")], k=3)
>>> [region.domain.loss_str(l) for l in region.losses]
['0', '3/20', '3/10', '9/20', '3/5', '3/4', '9/10']
"""

from .errors import (
    CertificationError,
    DPComposeError,
    InactiveConstraintWarning,
    InvalidParameterError,
    ResourceLimitError,
    UnsupportedExpressionError,
)
from .numbers import ExpDomain, QzElem, parse_exact, parse_rational
from .pld import PLD, canonical_pair
from .theorems import (
    compose,
    double_dp,
    heterogeneous_composition,
    kov_composition,
    pld_composition,
    remark1_bound,
    remark2_bound,
    theorem1_closed_form,
    theorem2_mixture,
    theorem3_lattice,
)
from .tradeoff import Region, dp_region, mixture_conjugate, mixture_minkowski, trivial_region

__version__ = "0.1.0"

__all__ = [
    "CertificationError",
    "DPComposeError",
    "InactiveConstraintWarning",
    "InvalidParameterError",
    "ResourceLimitError",
    "UnsupportedExpressionError",
    "ExpDomain",
    "QzElem",
    "parse_exact",
    "parse_rational",
    "PLD",
    "canonical_pair",
    "compose",
    "double_dp",
    "heterogeneous_composition",
    "kov_composition",
    "pld_composition",
    "remark1_bound",
    "remark2_bound",
    "theorem1_closed_form",
    "theorem2_mixture",
    "theorem3_lattice",
    "Region",
    "dp_region",
    "mixture_conjugate",
    "mixture_minkowski",
    "trivial_region",
]
