"""Fixtures shared by the test files."""

from __future__ import annotations

from collections.abc import Iterator

import mpmath
import pytest


@pytest.fixture(autouse=True)
def _mpmath_precision_restored() -> Iterator[None]:
    """Whatever precision a test sets in mpmath.mp, the next test starts from the same one."""
    dps = mpmath.mp.dps
    yield
    mpmath.mp.dps = dps


@pytest.fixture
def clean_registry() -> Iterator[None]:
    """Restore the audit's adapter registry (adapters, entry-point state) after the test."""
    from dpcompose_exact.tools.audit import adapters

    adapters.registry()  # the built-in ones are loaded
    saved = (dict(adapters._REGISTRY), dict(adapters._LOAD_ERRORS), dict(adapters._LOADED))
    yield
    adapters._REGISTRY.clear()
    adapters._REGISTRY.update(saved[0])
    adapters._LOAD_ERRORS.clear()
    adapters._LOAD_ERRORS.update(saved[1])
    adapters._LOADED.clear()
    adapters._LOADED.update(saved[2])
