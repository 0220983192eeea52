"""The one loader of entry points (dpcompose_exact.plugins) and the registries calling it."""

from __future__ import annotations

import ast
import importlib.metadata
from pathlib import Path
from typing import Any

import pytest

from dpcompose_exact import plugins

ROOT = Path(__file__).resolve().parents[1] / "dpcompose_exact"
REGISTRIES = (
    "mechanisms/families.py",
    "presentation/formats.py",
    "tools/audit/adapters.py",
)


def _fake(monkeypatch: pytest.MonkeyPatch, found: Any) -> None:
    def entry_points(group: str) -> Any:
        if isinstance(found, Exception):
            raise found
        return [ep for ep in found if ep.group == group]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)


def test_each_plugin_is_accepted_skipped_or_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    ep = importlib.metadata.EntryPoint
    _fake(
        monkeypatch,
        [
            ep("good", "math:pi", "g"),
            ep("missing", "no_such_module_xyz:thing", "g"),
            ep("refused", "math:e", "g"),
            ep("known", "math:tau", "g"),
            ep("other", "math:inf", "h"),
        ],
    )
    seen: list[tuple[str, Any]] = []

    def accept(name: str, obj: Any) -> None:
        if name == "refused":
            raise TypeError(f"expected a family, got {obj!r}")
        seen.append((name, obj))

    errors: dict[str, str] = {}
    plugins.load_entry_points("g", accept, errors, skip=lambda n: n == "known")
    assert [n for n, _ in seen] == ["good"] and seen[0][1] == pytest.approx(3.14159265)
    assert set(errors) == {"missing", "refused"}
    assert errors["missing"].startswith("no_such_module_xyz:thing: ModuleNotFoundError")
    assert errors["refused"] == "math:e: TypeError: expected a family, got 2.718281828459045"
    worded: dict[str, str] = {}
    plugins.load_entry_points("g", accept, worded, message=lambda e, x: f"{e.name} broke")
    assert worded == {"missing": "missing broke", "refused": "refused broke"}


def test_unreadable_metadata_is_recorded_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, OSError("broken METADATA"))
    errors: dict[str, str] = {}
    plugins.load_entry_points("g", lambda n, o: None, errors)
    assert errors == {plugins.READ_FAILED: "reading the entry points failed: broken METADATA"}


@pytest.mark.parametrize("path", REGISTRIES)
def test_the_registries_read_entry_points_only_through_the_loader(path: str) -> None:
    """No registry loops over ``importlib.metadata.entry_points`` itself any more."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    names = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert "entry_points" not in names, path
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "load_group"
    ]
    assert len(calls) == 1, path
