"""The ``dpcompose`` command line: a thin shell over the front door.

It parses, builds :class:`~dpcompose_exact.api.Mechanism` objects, calls
:func:`dpcompose_exact.compose` (and the other public functions) and prints through
``Composition.to_*``.  :mod:`.main` holds the parser and the composition commands;
each other module adds the subcommands of one tool.
"""

from .app import build_parser, main

__all__ = ["build_parser", "main"]
