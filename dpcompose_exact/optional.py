"""Optional dependencies: one import guard, one message naming the extra that installs them.

The optional parts of the package (figures, exports, the dp_accounting integration, the
audit, parallel sweeps, the documentation) import their library through :func:`require`.
When it is missing, the user gets one line, a
:class:`~dpcompose_exact.errors.MissingDependencyError` that names the feature, the
library and the install command, in both forms: ``pip install "dpcompose-exact[EXTRA]"``
(an installed package: pip adds the extra's libraries) and ``pip install ".[EXTRA]"`` (in a
checkout of the sources).  The command line prints it as one line with exit status 2.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingDependencyError

__all__ = ["CORE", "EXTRAS", "install_hint", "require"]

#: The extra (``[project.optional-dependencies]`` in pyproject.toml) that installs each
#: optional top-level module, and the distribution that provides it.
EXTRAS: dict[str, tuple[str, str]] = {
    "matplotlib": ("plot", "matplotlib"),
    "dp_accounting": ("dp-accounting", "dp-accounting"),
    "attr": ("dp-accounting", "attrs"),
    "prv_accountant": ("audit", "prv-accountant"),
    "opendp": ("opendp", "opendp"),
    "opacus": ("opacus", "opacus"),
    "dask": ("sweep", "dask[distributed]"),
    "distributed": ("sweep", "dask[distributed]"),
    "pyarrow": ("sweep", "pyarrow"),
    "sphinx": ("docs", "sphinx"),
    "myst_parser": ("docs", "myst-parser"),
}

#: Core dependencies (``[project] dependencies``) that are imported lazily, where they are
#: used: missing, they mean a broken install, and the message says so (no extra installs
#: them).
CORE: dict[str, str] = {"numpy": "numpy", "scipy": "scipy", "tqdm": "tqdm"}

#: The distribution name on an index (pip normalizes ``dpcompose_exact`` to this).
PROJECT = "dpcompose-exact"


def install_hint(extra: str) -> str:
    """The install command of an extra, for an installed package and for a checkout.

    >>> install_hint("plot")
    'pip install "dpcompose-exact[plot]" (in a source checkout: pip install ".[plot]")'
    """
    return f'pip install "{PROJECT}[{extra}]" (in a source checkout: pip install ".[{extra}]")'


def require(module: str, feature: str, extra: str | None = None) -> ModuleType:
    """Import ``module`` (dotted names allowed), or raise one line naming the extra.

    Args:
        module: the module to import, e.g. ``"matplotlib.figure"``.
        feature: what needs it, for the message (``"plot"``, ``"to_dp_accounting()"``).
        extra: the extra that installs it (default: from :data:`EXTRAS`).

    Returns:
        The imported module.

    Raises:
        MissingDependencyError: the module (or a library it needs) cannot be imported.

    >>> require("json", "a doctest").__name__
    'json'
    >>> try:
    ...     require("dpcompose_no_such_module", "a figure", extra="plot")
    ... except ImportError as exc:
    ...     print(exc)
    a figure needs dpcompose_no_such_module, which is not installed: pip install "dpcompose-exact[plot]" (in a source checkout: pip install ".[plot]")
    """  # noqa: E501
    top = module.split(".")[0]
    if top in CORE and extra is None:
        try:
            return importlib.import_module(module)
        except ImportError as exc:
            raise MissingDependencyError(
                f"{feature} needs {CORE[top]}, a core dependency of {PROJECT} that cannot be "
                f"imported ({' '.join(str(exc).split())}): pip install {CORE[top]} (or "
                f'reinstall: pip install "{PROJECT}")',
                name=top,
            ) from exc
    extra_name, dist = EXTRAS.get(top, (extra or "all", top))
    extra_name = extra or extra_name
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or top
        if missing.split(".")[0] == top:
            what = f"{dist}, which is not installed"
        else:  # installed, but a library it needs is missing or broken
            why = " ".join(str(exc).split())
            what = f"{dist}, which cannot be imported ({why})"
        raise MissingDependencyError(
            f"{feature} needs {what}: {install_hint(extra_name)}", name=top
        ) from exc
