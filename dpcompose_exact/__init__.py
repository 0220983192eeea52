"""dpcompose_exact: exact composition of mechanisms with several (eps, delta)-DP constraints.

The front door (:mod:`dpcompose_exact.api`) is all a user needs:

>>> import dpcompose_exact as dx
>>> m = dx.Mechanism([("0.3", "0"), ("0.15", "0.02")])
>>> c = dx.compose(m, k=3)
>>> [eps.exact for eps, _ in c.constraints]
['0', '3/20', '3/10', '9/20', '3/5', '3/4', '9/10']
>>> c.delta("1/2").decimal(8)
'0.013151198'

Experts find the exact domain, regions and privacy-loss pairs in
:mod:`dpcompose_exact.algebra`; the layers and their one import direction are described
in docs/architecture.md.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .errors import (
    CertificationError,
    DPComposeError,
    InactiveConstraintWarning,
    InvalidParameterError,
    ResourceLimitError,
    UnsupportedExpressionError,
)

if TYPE_CHECKING:  # the front door is imported on first use (a fast CLI start)
    from .api import (
        Composition,
        Mechanism,
        Method,
        compose,
        heterogeneous_composition,
        kov_composition,
        mixture,
        remark1_bound,
        remark2_bound,
        theorem1_closed_form,
        theorem2_mixture,
        theorem3_lattice,
    )
    from .formula import formula
    from .sweeps import sweep
    from .value import Value

_LAZY = {
    "Value": "value",
    "sweep": "sweeps",
    "formula": "formula",
    **{
        name: "api"
        for name in (
            "Composition",
            "Mechanism",
            "Method",
            "compose",
            "heterogeneous_composition",
            "kov_composition",
            "mixture",
            "remark1_bound",
            "remark2_bound",
            "theorem1_closed_form",
            "theorem2_mixture",
            "theorem3_lattice",
        )
    },
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    "Composition",
    "Mechanism",
    "Method",
    "Value",
    "compose",
    "sweep",
    "formula",
    "mixture",
    "heterogeneous_composition",
    "theorem1_closed_form",
    "theorem2_mixture",
    "theorem3_lattice",
    "kov_composition",
    "remark1_bound",
    "remark2_bound",
    "CertificationError",
    "DPComposeError",
    "InactiveConstraintWarning",
    "InvalidParameterError",
    "ResourceLimitError",
    "UnsupportedExpressionError",
]
