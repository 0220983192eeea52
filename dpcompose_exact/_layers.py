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
    # Exact numbers and the one number type handed to users (numbers.value): parsing, Q(z),
    # certified signs and decimals, conversions; the errors, the optional-import guard, the
    # one loader of entry points (plugins) and the resource limits.
    ("exact domain", ("_layers", "errors", "optional", "plugins", "limits", "numbers")),
    # Regions, trade-off functions, mixtures; privacy-loss distributions, dominating pairs;
    # mechanism kinds (a region used a number of times) parsed from specs.
    ("regions and pairs", ("regions",)),
    # Mechanisms, one file per family: what each mechanism is and its privacy-loss pair
    # (regions.protocol); the engines above compose the pairs.
    ("mechanisms", ("mechanisms",)),
    # Composition engines behind one result interface (engines.results), the route choice
    # (engines.routes): exact generating functions, certified balls, two-sided bounds.
    ("composition engines", ("engines",)),
    # The paper's results and what goes beyond: theorems, f-DP approximations, brackets,
    # symbolic formulas.
    ("the paper's results", ("paper",)),
    # Presentation: rows as text (JSON, CSV, tables, LaTeX), figures, exports to other
    # libraries' objects; the front door and the command line print through it.
    ("presentation", ("presentation",)),
    # The Python front door (the package itself re-exports it) and the experts' namespace
    # that gathers the machinery of the layers below.
    ("front door", ("composition", "api", "algebra", "__init__")),
    # Tools on top of the front door: audits, calibration, sweeps; integrations with
    # other libraries (the drop-in accountant for dp_accounting).
    ("tools", ("tools", "integrations")),
    # The command line: a thin shell over the front door and the tools.
    ("command line", ("cli", "__main__")),
)


def layer_of(module: str) -> int | None:
    """Index in :data:`LAYERS` of a module name relative to the package, or None.

    Args:
        module: a dotted name below ``dpcompose_exact`` such as ``"numbers"`` or
            ``"integrations.opacus"``.

    Returns:
        The layer index (0 is the bottom), or None when no layer lists the module.

    >>> layer_of("numbers"), layer_of("cli.app"), layer_of("integrations.opacus")
    (0, 8, 7)
    >>> layer_of("nonexistent") is None
    True
    """
    for index, (_, names) in enumerate(LAYERS):
        for name in names:
            if module == name or module.startswith(name + "."):
                return index
    return None
