"""The one registry of mechanism families: a spec spelling, and how a mechanism is built.

A family is what ``--mech NAME(P1,P2)@Q:COUNT`` and ``[[mechanism]] NAME = ...`` in spec
files name (docs/cli.md, "Mechanisms"): its parameters (:class:`~dpcompose_exact.
regions.specs.Family`) and a builder, ``build(*params)`` with the parameters as exact
strings, which returns a mechanism (:class:`~dpcompose_exact.regions.protocol.
MechanismLike`).  The built-in families (``dp``, ``gaussian``, ``laplace``,
``randomized_response``, ``discrete_laplace``, ``random_allocation``, ``zcdp``,
``mixture_of_gaussians``, ``truncated_subsampled_gaussian``; one file each in this package) are
registered here, another of this package's with :func:`register_family`; a third-party
family needs no code of ours: its distribution names its builder in the entry-point
group :data:`ENTRY_POINT_GROUP`, as the audit's adapters do in
``dpcompose_exact.accountants``::

    [project.entry-points."dpcompose_exact.mechanisms"]
    asym_rr = "toy_rr:asymmetric_rr"

The entry point's name is the family's name, the builder's signature gives its
parameters (a default, written as an exact string, makes one optional) and an attribute
``short`` a shorter CLI name.  Entry points are read once, before the first lookup of a
family; one that fails to load is recorded (:func:`load_errors`), never raised.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import InvalidParameterError
from ..regions.specs import Family, MechanismKind, add_family, families, on_first_lookup
from .allocation import random_allocation
from .discrete_laplace import discrete_laplace
from .dp import Mechanism
from .mixture import mixture_of_gaussians
from .noise import gaussian_noise, laplace_noise
from .randomized_response import randomized_response
from .truncated import truncated_subsampled_gaussian
from .zcdp import zcdp

__all__ = [
    "ENTRY_POINT_GROUP",
    "register_family",
    "register_builder",
    "builder",
    "build",
    "load_entry_points",
    "load_errors",
]

ENTRY_POINT_GROUP = "dpcompose_exact.mechanisms"
"""The ``importlib.metadata`` entry-point group of third-party mechanism families."""

_BUILDERS: dict[str, Callable[..., Any]] = {}
_LOAD_ERRORS: dict[str, str] = {}


def register_family(
    name: str,
    params: Sequence[str],
    build: Callable[..., Any],
    defaults: Sequence[str] = (),
    short: str | None = None,
) -> None:
    """Give a mechanism a spec spelling: ``name(P1,P2)`` on the CLI, ``[name]`` in spec files.

    ``build(*params)`` receives the parameters as exact strings (the defaults filled in)
    and returns a mechanism; ``@Q`` subsamples it (its ``subsample(q)``).  Nothing else
    needs to know the family: the router reads its loss pair (docs/adding_a_mechanism.md).

    Raises:
        InvalidParameterError: the name or short name is taken by another family.
    """
    add_family(Family(name, tuple(params), tuple(defaults), short))
    _BUILDERS[name] = build


def register_builder(name: str, build: Callable[..., Any]) -> None:
    """The builder of a family the spec parser knows already (``dp`` and the built-ins).

    ``dp``'s builder receives the ``(eps, delta)`` constraints, the others their
    parameters as exact strings.
    """
    _BUILDERS[name] = build


def _signature_family(name: str, build: Callable[..., Any]) -> tuple[list[str], list[str]]:
    """The parameters of a builder and the defaults of its optional ones, exact strings."""
    params, defaults = [], []
    for p in inspect.signature(build).parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            continue
        params.append(p.name)
        if p.default is not p.empty:
            if isinstance(p.default, float):
                raise InvalidParameterError(
                    f"family {name}: the default {p.name} = {p.default!r} is a float; "
                    f'write it as a string ("{p.default}") so it is exact'
                )
            defaults.append(str(p.default))
        elif defaults:
            raise InvalidParameterError(f"family {name}: a required parameter after a default")
    return params, defaults


def load_entry_points() -> None:
    """Register the families of the entry-point group :data:`ENTRY_POINT_GROUP`.

    Run once by the spec parser before its first lookup (:func:`~dpcompose_exact.
    regions.specs.families`); run it again to read entry points installed since.
    """
    from ..plugins import load_entry_points as load_group

    def accept(name: str, build: Any) -> None:
        params, defaults = _signature_family(name, build)
        register_family(name, params, build, defaults, getattr(build, "short", None))

    load_group(ENTRY_POINT_GROUP, accept, _LOAD_ERRORS, skip=_BUILDERS.__contains__)


def load_errors() -> dict[str, str]:
    """Entry points that failed to load: ``{entry point name: reason}``."""
    families()
    return dict(_LOAD_ERRORS)


def builder(family: str) -> Callable[..., Any]:
    """The builder of a family (its parameters as exact strings -> a mechanism).

    Raises:
        InvalidParameterError: no family of that name, naming those there are.
    """
    families()  # the entry points' families are read before the first lookup
    build = _BUILDERS.get(family)
    if build is None:
        failed = _LOAD_ERRORS.get(family)
        why = f" (its entry point failed: {failed})" if failed else ""
        raise InvalidParameterError(
            f"unknown mechanism family {family!r}{why}; known: {', '.join(_BUILDERS)}"
        )
    return build


def build(kind: MechanismKind) -> Any:
    """The mechanism a spec describes (``--mech``, spec files; docs/cli.md, "Mechanisms").

    >>> from dpcompose_exact.regions.specs import parse_mech_spec
    >>> build(parse_mech_spec("gaussian(2)@1/10:5")).describe()
    "gaussian_noise('2') subsampled at 1/10"
    """
    out = builder(kind.family)(*(kind.constraints if kind.family == "dp" else kind.params))
    return out if kind.subsample is None else out.subsample(kind.subsample)


def _constraints(*pairs: tuple[Any, Any]) -> Mechanism:
    return Mechanism(list(pairs))


def _random_allocation(sigma: Any, steps: Any, t: Any = 1, sensitivity: Any = 1) -> Any:
    return random_allocation(gaussian_noise(sigma, sensitivity), steps, t)


for _name, _build in (
    ("dp", _constraints),
    ("gaussian", gaussian_noise),
    ("laplace", laplace_noise),
    ("randomized_response", randomized_response),
    ("discrete_laplace", discrete_laplace),
    ("random_allocation", _random_allocation),
    ("mixture_of_gaussians", mixture_of_gaussians),
):
    register_builder(_name, _build)
register_family("zcdp", ("rho", "xi"), zcdp, ("0",))
register_family(
    "truncated_subsampled_gaussian",
    ("sigma", "dataset_size", "q", "batch_size"),
    truncated_subsampled_gaussian,
    short="trunc",
)
on_first_lookup(load_entry_points)
