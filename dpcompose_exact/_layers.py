"""The one import direction of the package, stated once.

Every module of ``dpcompose_exact`` belongs to exactly one layer of :data:`LAYERS`, listed
from the bottom (the exact number domain) to the top (presentation and command line).  A
module may import modules of its own layer and of the layers below it, never of a layer
above.  ``tests/test_layers.py`` parses every module (imports inside functions included)
and fails on an upward import or on a module that is missing here; the architecture page
of the documentation shows this file.

Names of modules that do not exist yet are listed too, so that the layer a new module
belongs to is decided here, before it is written.  A name stands for the module and, if
it is a subpackage, for every module inside it (``integrations`` covers
``integrations.foo``).
"""

from __future__ import annotations

__all__ = ["LAYERS", "layer_of"]

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # Exact numbers and the one result type: parsing, Q(z), certified signs and decimals.
    ("exact domain", ("_layers", "errors", "numbers", "value")),
    # Regions, trade-off functions, mixtures; privacy-loss distributions, dominating pairs;
    # mechanism kinds (a region used a number of times) parsed from specs.
    ("regions and pairs", ("tradeoff", "pld", "specs")),
    # Composition: exact generating functions, certified ball arithmetic for large k, the
    # certified loss grid of additive noise (Gaussian closed form, Laplace FFT).
    ("composition engines", ("memory", "genfunc", "certified", "pldgrid")),
    # The paper's results and what goes beyond: theorems, composing lists of mechanisms,
    # privacy curves, f-DP approximations and their composed bracket, two-sided bounds.
    (
        "results",
        ("theorems", "logsplit", "bounds", "routes", "mechanisms", "curves", "approx", "bracket"),
    ),
    # Presentation: numbers and regions as text (JSON, CSV, tables, LaTeX), figures, and
    # exports to other libraries' objects; the front door and the command line share them.
    ("presentation", ("render", "plot", "export")),
    # The Python front door (the package itself re-exports it) and the experts' namespace
    # that gathers the machinery of the layers below.
    ("front door", ("api", "algebra", "__init__")),
    # Tools on top of the front door: audits, command line, integrations, sweeps.
    (
        "tools",
        (
            "audit",
            "cli",
            "cli_approx",
            "cli_audit",
            "cli_common",
            "cli_calibrate",
            "cli_sweep",
            "__main__",
            "integrations",
            "sweeps",
            "calibrate",
        ),
    ),
)


def layer_of(module: str) -> int | None:
    """Index in :data:`LAYERS` of a module name relative to the package, or None.

    Args:
        module: a dotted name below ``dpcompose_exact`` such as ``"numbers"`` or
            ``"integrations.opacus"``.

    Returns:
        The layer index (0 is the bottom), or None when no layer lists the module.

    >>> layer_of("numbers"), layer_of("cli"), layer_of("integrations.opacus")
    (0, 6, 6)
    >>> layer_of("nonexistent") is None
    True
    """
    for index, (_, names) in enumerate(LAYERS):
        for name in names:
            if module == name or module.startswith(name + "."):
                return index
    return None
