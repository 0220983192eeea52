"""Composition engines: exact generating functions, certified balls, bounds.

Each engine returns a result behind the one interface of :mod:`.results`;
:mod:`.routes` chooses the engine (docs/architecture.md).
"""
