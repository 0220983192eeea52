"""The documentation builds without warnings, and the repository cites only itself.

The pages' code blocks are executed by pytest itself (``--doctest-glob='*.md'`` on
``docs/``); this file checks the build and the references.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpcompose_exact._layers import layer_of

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

# Built from pieces so that this file does not match its own patterns.
FORBIDDEN_NAME = "MATH" + ".md"
ABSOLUTE_PATHS = re.compile("|".join(re.escape(p) for p in ["/" + "work/", "/" + "home/"]))
# The word issue(s) followed by a number (with or without "#"), or a bare GitHub
# reference: a hash sign followed by a number (see test_issue_pattern for examples).
ISSUE_NUMBER = re.compile(r"\bissues?\s*#?\s*\d+|(?<![\w&/#])#\d{1,4}\b", re.IGNORECASE)
SKIP_DIRS = {".git", "_build", "build", "dist", "__pycache__", ".venv", ".ci-venv", "node_modules"}
SKIP_SUFFIXES = {".png", ".pdf", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".whl", ".gz"}

# Modules deliberately left out of docs/reference.md: the command line is documented as a
# user guide (docs/cli.md) and the layer list on the architecture page.
NOT_IN_REFERENCE = {
    "cli",
    "cli.app",
    "cli.approx",
    "cli.audit",
    "cli.common",
    "cli.calibrate",
    "cli.sweep",
    "cli.formula",
    "cli.summary",
    "cli.progress",
    "cli.__main__",
    "cli.__init__",
    "__main__",
    "__init__",
    "_layers",
}


def repository_files() -> list[Path]:
    """Files git tracks or would track, or every file outside build/cache folders."""
    if shutil.which("git") and (ROOT / ".git").exists():
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=False,
        )
        if out.returncode == 0:
            names = [n for n in out.stdout.decode().split("\0") if n]
            return [ROOT / n for n in names if (ROOT / n).is_file()]
    files = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")]
        files.extend(Path(folder) / n for n in names)
    return files


def text_files() -> list[tuple[str, str]]:
    """(path relative to the repository, text) of every text file."""
    out = []
    for path in repository_files():
        if path.suffix.lower() in SKIP_SUFFIXES:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        out.append((path.relative_to(ROOT).as_posix(), text))
    return out


def offending_lines(pattern: re.Pattern[str] | str) -> list[str]:
    hits = []
    for name, text in text_files():
        for number, line in enumerate(text.splitlines(), 1):
            found = pattern.search(line) if isinstance(pattern, re.Pattern) else pattern in line
            if found:
                hits.append(f"{name}:{number}: {line.strip()[:120]}")
    return hits


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
        + ["-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "html")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (tmp_path / "html" / "theory.html").exists()


def test_the_file_scan_sees_the_repository():
    names = {name for name, _ in text_files()}
    assert {"README.md", "docs/theory.md", "dpcompose_exact/numbers/__init__.py"} <= names


def test_no_reference_to_the_external_maths_notes():
    assert offending_lines(FORBIDDEN_NAME) == []


def test_no_absolute_paths():
    assert offending_lines(ABSOLUTE_PATHS) == []


def test_no_issue_numbers():
    # this file holds examples of the pattern (test_issue_pattern), nothing else may
    hits = [h for h in offending_lines(ISSUE_NUMBER) if not h.startswith("tests/test_docs.py:")]
    assert hits == []


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("see issue 9", True),
        ("Issues 3 and 4", True),
        ("fixed in #12.", True),
        ("(issue #7)", True),
        ("color #1f77b4 and #000000", False),
        ("delta #{i} is known", False),
        ("an issue with 3 numbers", False),
        ("# 1. a comment", False),
    ],
)
def test_issue_pattern(text, hit):
    assert bool(ISSUE_NUMBER.search(text)) is hit


CITATION = re.compile(r"docs/theory\.md,\s*sections?\s+([0-9][0-9 ,\-]*(?:(?:and|to)\s+[0-9]+)?)")


def cited_numbers(text: str) -> list[int]:
    """Section numbers of "1, 3", "5-7", "1 and 3" or "4 to 8"."""
    numbers = []
    for part in re.split(r",|\band\b", text):
        bounds = [int(n) for n in re.findall(r"\d+", part)]
        if len(bounds) == 2:
            numbers.extend(range(bounds[0], bounds[1] + 1))
        else:
            numbers.extend(bounds)
    return numbers


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("1", [1]),
        ("1, 3, 4", [1, 3, 4]),
        ("5-7", [5, 6, 7]),
        ("1 and 3", [1, 3]),
        ("4 to 8", [4, 5, 6, 7, 8]),
        ("1, 6-8", [1, 6, 7, 8]),
    ],
)
def test_cited_numbers(text, numbers):
    assert cited_numbers(text) == numbers


def theory_sections() -> list[int]:
    text = (DOCS / "theory.md").read_text(encoding="utf-8")
    return [int(n) for n in re.findall(r"^## (\d+)\. ", text, flags=re.MULTILINE)]


def test_theory_sections_are_numbered_in_order():
    numbers = theory_sections()
    assert numbers == list(range(1, len(numbers) + 1))
    assert len(numbers) >= 10  # sections 1-10 follow the paper


def test_every_cited_theory_section_exists():
    sections = set(theory_sections())
    cited = {}
    for name, text in text_files():
        for match in CITATION.finditer(text):
            for n in cited_numbers(match.group(1)):
                cited.setdefault(n, name)
    assert cited, "no citation of docs/theory.md found: the pattern is broken"
    missing = {n: name for n, name in cited.items() if n not in sections}
    assert not missing, f"cited sections missing from docs/theory.md: {missing}"


def test_reference_covers_the_public_modules():
    """Every public module is in docs/reference.md (add new ones there)."""
    reference = (DOCS / "reference.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"automodule:: dpcompose_exact\.([\w.]+)", reference))
    modules = {
        p.relative_to(ROOT / "dpcompose_exact").with_suffix("").as_posix().replace("/", ".")
        for p in (ROOT / "dpcompose_exact").rglob("*.py")
    }
    public = {m for m in modules if not m.split(".")[-1].startswith("_")} - NOT_IN_REFERENCE
    assert public - documented == set()
    # a subpackage (numbers) is documented under its own name, that of its __init__.py
    packages = {m.removesuffix(".__init__") for m in modules if m.endswith(".__init__")}
    assert documented <= modules | packages  # no page for a module that does not exist
    assert all(layer_of(m) is not None for m in documented)


def test_reference_and_module_map_follow_the_layout():
    """docs/reference.md and the module map of docs/architecture.md are generated."""
    proc = subprocess.run(
        [sys.executable, str(DOCS / "gen_reference.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def test_doc_examples_are_collected():
    """pytest runs the pages' examples: the option and the test path are configured."""
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "--doctest-glob='*.md'" in config
    testpaths = ast.literal_eval(re.search(r"^testpaths = (\[.*\])$", config, re.M).group(1))
    assert "docs" in testpaths
    pages = [p.name for p in DOCS.glob("*.md")]
    assert {"index.md", "theory.md", "architecture.md", "cli.md", "reference.md"} <= set(pages)
    assert any(">>> " in (DOCS / p).read_text(encoding="utf-8") for p in pages)
