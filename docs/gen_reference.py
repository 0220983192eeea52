"""Regenerate docs/reference.md from the package layout: one section per folder (layer).

Run ``python docs/gen_reference.py`` after adding a module; ``tests/test_docs.py`` checks
that the page lists every public module and that this script would not change it.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "dpcompose_exact"
PAGE = ROOT / "docs" / "reference.md"

#: (heading, folder or module prefixes) in the order of the layers, top (front door) first
SECTIONS = (
    ("The front door", ("api", "composition", "algebra")),
    ("Errors and optional parts", ("errors", "optional")),
    ("The exact number domain (`numbers/`)", ("numbers",)),
    ("Regions and pairs (`regions/`)", ("regions",)),
    ("Composition engines (`engines/`)", ("engines",)),
    ("The paper's results (`paper/`)", ("paper",)),
    ("Presentation (`presentation/`)", ("presentation",)),
    ("Tools (`tools/`)", ("tools",)),
    ("Integrations (`integrations/`)", ("integrations",)),
)

#: modules with no page: the command line (documented in cli.md) and private modules
SKIP_PREFIXES = ("cli",)
NO_MEMBERS = {"algebra"}  # a namespace that gathers names documented elsewhere

INTRO = """# API reference

Generated from the docstrings by `docs/gen_reference.py`, one section per folder of the
package, in the order of the layers ({doc}`architecture`): the front door first, the
integrations with other libraries last.  The command line is described in {doc}`cli`.
"""


def modules() -> list[str]:
    """Public modules of the package, dotted and relative (packages by their own name)."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not parts or any(p.startswith("_") for p in parts):
            continue
        name = ".".join(parts)
        if name.split(".")[0] in SKIP_PREFIXES:
            continue
        out.append(name)
    return out


def title(module: str) -> str:
    """The first line of the module's docstring (without the final full stop)."""
    path = PACKAGE / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = PACKAGE / module.replace(".", "/") / "__init__.py"
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or module
    return doc.strip().splitlines()[0].rstrip(".")


def page() -> str:
    """The text of docs/reference.md."""
    names = modules()
    done: set[str] = set()
    parts = [INTRO]
    for heading, prefixes in SECTIONS:
        members = [
            m for m in names if any(m == p or m.startswith(p + ".") for p in prefixes)
        ]
        # in the order of the prefixes; a package before its modules
        members.sort(key=lambda m: (prefixes.index(m.split(".")[0]), m.count("."), m))
        if not members:
            continue
        parts.append(f"\n## {heading}\n")
        for m in members:
            done.add(m)
            opts = "" if m in NO_MEMBERS else "\n   :members:"
            if m == "errors":
                opts += "\n   :show-inheritance:"
            parts.append(
                f"\n### `{m}`: {title(m)}\n\n```{{eval-rst}}\n"
                f".. automodule:: dpcompose_exact.{m}{opts}\n```\n"
            )
    missing = sorted(set(names) - done)
    if missing:
        raise SystemExit(f"modules in no section of docs/gen_reference.py: {missing}")
    return "".join(parts)


if __name__ == "__main__":
    text = page()
    if "--check" in sys.argv:
        raise SystemExit(0 if PAGE.read_text(encoding="utf-8") == text else 1)
    PAGE.write_text(text, encoding="utf-8")
