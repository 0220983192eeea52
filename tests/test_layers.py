"""The import direction of dpcompose_exact/_layers.py holds for every module of the package.

Each module is parsed with ``ast`` (nothing is imported), so imports inside functions and
under ``if TYPE_CHECKING:`` count as well.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dpcompose_exact._layers import LAYERS, layer_of

PACKAGE = "dpcompose_exact"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

# Upward imports that exist today and are to be removed by their modules' owners; each
# entry is (importing module, imported module).  Remove an entry once it is fixed: the
# test then also fails if the import comes back.
KNOWN_EXCEPTIONS: set[tuple[str, str]] = set()


def module_name(path: Path) -> str:
    """Dotted name of a file of the package, relative to the package.

    A subpackage's ``__init__.py`` is named after the subpackage (``numbers``), so that
    ``from .numbers import x`` is seen as an import of it; the package's own
    ``__init__.py`` stays ``__init__``.
    """
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if len(parts) > 1 and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def package_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _package_of(module: str, path: Path) -> list[str]:
    """The package (as a list of names, relative) that contains ``module``."""
    parts = module.split(".")
    return parts if path.name == "__init__.py" else parts[:-1]


def imported_modules(module: str, path: Path, known: set[str]) -> set[str]:
    """Modules of the package that ``module`` imports, relative to the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = _package_of(module, path)
    found: set[str] = set()

    def add(dotted: str) -> None:
        # "pkg.sub.name" may be a module or a name inside pkg.sub: keep the longest known
        # module prefix; a name imported from the package root comes from __init__
        parts = dotted.split(".") if dotted else []
        for cut in range(len(parts), 0, -1):
            if ".".join(parts[:cut]) in known:
                found.add(".".join(parts[:cut]))
                return
        found.add("__init__")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    add(alias.name[len(PACKAGE) + 1 :])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                target = base + (node.module.split(".") if node.module else [])
            elif node.module and (node.module == PACKAGE or node.module.startswith(PACKAGE + ".")):
                target = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:
                # "from . import cli_approx" imports a module; "from .x import f" a name
                candidate = ".".join([*target, alias.name])
                add(candidate if candidate in known else ".".join(target))
    found.discard(module)
    return found


MODULES = package_modules()


def test_every_module_has_a_layer():
    missing = sorted(m for m in MODULES if layer_of(m) is None)
    assert not missing, f"add these modules to dpcompose_exact/_layers.py: {missing}"


def test_layers_list_each_name_once():
    names = [name for _, layer in LAYERS for name in layer]
    assert len(names) == len(set(names)), names


# The modules of the numbers subpackage, bottom up: each imports only modules before it.
NUMBERS_ORDER = (
    "numbers.format",
    "numbers.parsing",
    "numbers.certify",
    "numbers.forms",
    "numbers.convert",
    "numbers.qz",
    "numbers.closed",
    "numbers.domain",
    "numbers.rowforms",
    "numbers",
    "numbers.value",
)


def test_the_numbers_subpackage_imports_bottom_up():
    assert set(NUMBERS_ORDER) == {m for m in MODULES if m.split(".")[0] == "numbers"}
    for i, module in enumerate(NUMBERS_ORDER):
        inside = {
            t for t in imported_modules(module, MODULES[module], set(MODULES)) if t in NUMBERS_ORDER
        }
        assert inside <= set(NUMBERS_ORDER[:i]), (
            f"{module} imports {inside - set(NUMBERS_ORDER[:i])}"
        )


def upward_imports(module: str, path: Path, known: set[str]) -> list[tuple[str, str]]:
    """(imported module, its layer's name) for each import of a higher layer."""
    here = layer_of(module)
    assert here is not None
    return sorted(
        (target, LAYERS[layer_of(target)][0])
        for target in imported_modules(module, path, known)
        if layer_of(target) is not None
        and layer_of(target) > here
        and (module, target) not in KNOWN_EXCEPTIONS
    )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_upward_import(module):
    upward = upward_imports(module, MODULES[module], set(MODULES))
    layer = LAYERS[layer_of(module)][0]
    assert not upward, f"{module} (layer {layer!r}) imports from a higher layer: {upward}"


def test_known_exceptions_are_still_real():
    """An exception that no longer occurs must be removed, so that it cannot come back."""
    for module, target in sorted(KNOWN_EXCEPTIONS):
        if module not in MODULES:
            continue  # not (yet) in this checkout
        assert target in imported_modules(module, MODULES[module], set(MODULES)), (
            f"{module} no longer imports {target}: remove it from KNOWN_EXCEPTIONS"
        )


def test_the_checker_sees_imports_inside_functions(tmp_path):
    """The parser is not fooled by function-level, relative or absolute imports."""
    pkg = tmp_path / PACKAGE
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from .b import x\n"
        "import dpcompose_exact.c\n"
        "def f():\n"
        "    from . import d\n"
        "    from dpcompose_exact import e, thing\n"
    )
    known = {"__init__", "a", "b", "c", "d", "e"}
    assert imported_modules("a", pkg / "a.py", known) == {"b", "c", "d", "e", "__init__"}


def test_an_upward_import_is_detected(tmp_path):
    """A bottom-layer module importing the command line, even lazily, is reported."""
    pkg = tmp_path / PACKAGE
    pkg.mkdir()
    (pkg / "numbers.py").write_text("def f():\n    from .cli import main\n")
    (pkg / "cli.py").write_text("from .numbers import f\n")
    known = {"numbers", "cli"}
    assert upward_imports("numbers", pkg / "numbers.py", known) == [("cli", "command line")]
    assert upward_imports("cli", pkg / "cli.py", known) == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_no_import_circle():
    """No two modules import each other, directly or through others (imports in functions
    included): the layers are a partial order of modules, not only of folders."""
    graph = {m: imported_modules(m, p, set(MODULES)) for m, p in MODULES.items()}
    # a package's __init__ that re-exports its modules is not a circle with them
    for m in graph:
        graph[m] = {t for t in graph[m] if not m.startswith(t + ".")}
    assert _cycles(graph) == []


def test_the_circle_check_can_fail():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# -- no string parser of deltas in the presentation layer ---------------------------------
#
# Readable forms are made from the polynomials a closed form was printed from
# (numbers.closed.ClosedParts), never by reading the printed string back.  Concretely, no
# module of presentation/ may (1) define a function or class whose name says it parses or
# tokenizes (parse, parser, token, lexer), nor (2) hold a regular expression over the
# engine's closed-form text: a pattern given to the re module that names its tokens
# (exp(, log(, Add(, Mul(, **), nor (3) import re in the module of the readable forms.

_PARSER_WORDS = ("parse", "token", "lexer")
_CLOSED_FORM_TOKENS = ("exp", "log\\(", "log(", "Add", "Mul", "\\*\\*")
_RE_FUNCTIONS = {"compile", "findall", "finditer", "sub", "subn", "search", "match", "split"}


def delta_parsers(folder: Path) -> list[str]:
    """What in the modules of ``folder`` reads closed-form strings back (empty: nothing)."""
    found = []
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if any(w in node.name.lower() for w in _PARSER_WORDS):
                    found.append(f"{path.name}: {node.name} (a parser by its name)")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.func.attr in _RE_FUNCTIONS
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and any(t in node.args[0].value for t in _CLOSED_FORM_TOKENS)
            ):
                found.append(f"{path.name}:{node.lineno}: a pattern over closed forms")
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and any(t in node.value for t in ("exp\\(", "Add\\(", "log\\("))
            ):  # a regex piece for later (an escaped parenthesis after a token)
                found.append(f"{path.name}:{node.lineno}: a pattern piece over closed forms")
            elif path.name == "readable.py" and isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names]
                if "re" in names or getattr(node, "module", None) == "re":
                    found.append(f"{path.name}: imports re")
    return found


def test_no_string_parser_of_deltas_in_the_presentation_layer():
    assert delta_parsers(ROOT / "presentation") == []


def test_the_delta_parser_check_can_fail(tmp_path):
    """The old reader of readable.py (a regex over exp(...) and a recursive descent)."""
    (tmp_path / "readable.py").write_text(
        "import re\n"
        '_EXP_ARG = re.compile(r"exp\\(([^()]*)\\)")\n'
        '_MONO = r"(?:\\d+\\*exp\\(\\d+(?:/\\d+)?\\)|\\d+)"\n'
        'RUN = re.compile(rf"\\bAdd\\(\\s*({_MONO})\\s*\\)")\n'
        "class _Parser:\n    pass\n"
        "def parse_closed(text, g):\n    return _Parser()\n"
    )
    found = " ".join(delta_parsers(tmp_path))
    for what in ("imports re", "_Parser", "parse_closed", "a pattern over", "a pattern piece"):
        assert what in found
