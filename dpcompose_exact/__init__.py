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

from importlib import import_module as _import_module
from typing import Any as _Any

from .errors import (
    CertificationError,
    DPComposeError,
    InactiveConstraintWarning,
    InvalidParameterError,
    MissingDependencyError,
    ResourceLimitError,
    UnsupportedExpressionError,
    UnsupportedQueryError,
)

#: The public names, kept once: each name and the module it lives in.  The front door is
#: imported on first use (a fast command-line start).
_LAZY = {
    "Composition": "composition",
    "Mechanism": "api",
    "randomized_response": "api",
    "discrete_laplace": "api",
    "mechanism_of": "api",
    "register_family": "api",
    "Method": "engines.routes",
    "Value": "numbers.value",
    "compose": "api",
    "formula": "paper.formula",
    "sweep": "tools.sweeps",
    "audit_suite": "tools.audit.suite",
    "calibrate": "tools.calibrate",
    "get_noise_multiplier": "tools.calibrate",
    "shuffling_lower_bound": "tools.shuffling",
    "mixture": "api",
    "heterogeneous_composition": "api",
    "theorem1_closed_form": "api",
    "theorem2_mixture": "api",
    "theorem3_lattice": "api",
    "kov_composition": "api",
    "remark1_bound": "api",
    "remark2_bound": "api",
    "gaussian_noise": "mechanisms.noise",
    "laplace_noise": "mechanisms.noise",
    "random_allocation": "mechanisms.allocation",
    "mixture_of_gaussians": "mechanisms.mixture",
    "truncated_subsampled_gaussian": "mechanisms.truncated",
    "zcdp": "mechanisms.zcdp",
    "zcdp_delta": "engines.zcdp",
    "zcdp_epsilon": "engines.zcdp",
}


def __getattr__(name: str) -> _Any:
    if name in _LAZY:
        value = getattr(_import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names (and the dunders): no helpers of the module itself."""
    names = {n for n in globals() if not n.startswith("_") or n.startswith("__")}
    return sorted(names | set(_LAZY))


__version__ = "0.1.0"

__all__ = [
    *_LAZY,
    "CertificationError",
    "DPComposeError",
    "InactiveConstraintWarning",
    "InvalidParameterError",
    "MissingDependencyError",
    "ResourceLimitError",
    "UnsupportedExpressionError",
    "UnsupportedQueryError",
]
