"""Mechanisms as typed as results: loss pairs are a tagged union read by form and variant.

AST checks over the package:

* every loss-pair variant of ``regions/protocol.py`` is a frozen dataclass with typed
  fields, none of them ``Any``; there is no ``payload``;
* no module reads a loss pair's fields by attribute name outside the variant's own class
  (consumers take a variant apart with a class pattern, or ask the methods every variant
  answers), reads ``.payload``, or compares a form with a string (``form.value``,
  ``form == "finite"``);
* no ``isinstance`` on the engine parts inside ``engines/mixed.py`` and the modules of its
  parts (``engines/finiteparts.py``, ``engines/noiseparts.py``: the parts carry the
  methods), and no shape test there either: no ``hasattr``, and no ``getattr`` of a named
  attribute (the typed loss pair says what a grid item is: ``LossPair.grid_entry``,
  ``LossPair.laplace_eps0``).

Each check is shown to fail on a snippet that breaks it.
"""

from __future__ import annotations

import ast
import dataclasses
from fractions import Fraction
from pathlib import Path

import pytest

import dpcompose_exact as dx
from dpcompose_exact.errors import InvalidParameterError
from dpcompose_exact.regions import protocol
from dpcompose_exact.regions.protocol import (
    BoundedPair,
    DirectedPair,
    FinitePair,
    GaussianPair,
    GridEntry,
    LossPair,
    NoiseKind,
    NoisePair,
    PairForm,
)

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dpcompose_exact"
VARIANTS = (FinitePair, DirectedPair, BoundedPair, GaussianPair, NoisePair)
#: the variants' own field names: a read of one of these on a loss pair is a read by shape
FIELDS = {f.name for cls in VARIANTS for f in dataclasses.fields(cls)}


def test_every_variant_is_a_frozen_typed_dataclass_with_its_own_form():
    assert {cls.form for cls in VARIANTS} == set(PairForm)
    assert not dataclasses.is_dataclass(LossPair)  # no shared payload field
    assert not hasattr(LossPair, "payload")
    for cls in VARIANTS:
        assert issubclass(cls, LossPair)
        assert cls.__dataclass_params__.frozen, cls
        for f in dataclasses.fields(cls):
            assert "Any" not in str(f.type) and str(f.type) != "object", (cls, f.name, f.type)
    pair = dx.Mechanism.dp("1").loss_pair()
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign"):
        pair.pld = None  # type: ignore[misc]


def _annotation_names(node: ast.AST | None) -> set[str]:
    if node is None:
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    } | {
        n.value
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


_PAIR_TYPES = {"LossPair", *(cls.__name__ for cls in VARIANTS)}


def _mentions_pair(annotation: ast.AST | None) -> bool:
    names = _annotation_names(annotation)
    return any(t in name for name in names for t in _PAIR_TYPES)


def _is_loss_pair_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("loss_pair", "loss_pairs")
    )


def _first_name(target: ast.AST) -> str | None:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name):
        return target.elts[0].id
    return None


def _pair_names(func: ast.AST) -> set[str]:
    """Names bound to loss pairs in one function (or module): annotated, made, iterated."""
    pairs: set[str] = set()
    lists: set[str] = set()
    args = getattr(func, "args", None)
    if args is not None:
        for a in args.args + args.kwonlyargs + args.posonlyargs:
            if _mentions_pair(a.annotation):
                container = any(
                    n in _annotation_names(a.annotation)
                    for n in ("Sequence", "list", "tuple", "Iterable")
                )
                (lists if container else pairs).add(a.arg)
    for _ in range(3):  # a small fixed point: pairs made from lists of pairs
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
                if isinstance(target, ast.Name) and _is_loss_pair_call(value):
                    pairs.add(target.id)
                if isinstance(target, ast.Name) and isinstance(
                    value, (ast.ListComp, ast.GeneratorExp)
                ):
                    elt = value.elt
                    first = elt.elts[0] if isinstance(elt, ast.Tuple) and elt.elts else elt
                    if _is_loss_pair_call(first) or (
                        isinstance(first, ast.Name) and first.id in pairs
                    ):
                        lists.add(target.id)
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if _mentions_pair(node.annotation):
                    pairs.add(node.target.id)
            loops = []
            if isinstance(node, (ast.For, ast.AsyncFor)):
                loops.append((node.target, node.iter))
            if isinstance(node, ast.comprehension):
                loops.append((node.target, node.iter))
            for target, it in loops:
                name = _first_name(target)
                if name is None:
                    continue
                if (isinstance(it, ast.Name) and it.id in lists) or _is_loss_pair_call(it):
                    pairs.add(name)
    return pairs


def shape_reads(path: Path) -> list[str]:
    """Reads of a loss pair by shape in one module (empty: none)."""
    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "payload":
            found.append(f"{rel}:{node.lineno} reads .payload")
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "value"
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "form"
        ):
            found.append(f"{rel}:{node.lineno} compares a form by its string (.form.value)")
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr == "form" for s in sides) and any(
                isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides
            ):
                found.append(f"{rel}:{node.lineno} compares a form with a string")
        if (
            isinstance(node, ast.Attribute)
            and node.attr in FIELDS
            and _is_loss_pair_call(node.value)
        ):
            found.append(f"{rel}:{node.lineno} reads .{node.attr} of a loss pair")
    scopes = [tree] + [
        n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    for scope in scopes:
        names = _pair_names(scope)
        for node in ast.walk(scope):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in FIELDS
                and isinstance(node.value, ast.Name)
                and node.value.id in names
            ):
                found.append(f"{rel}:{node.lineno} reads .{node.attr} of loss pair {node.value.id}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "getattr"
                and node.args
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in names
            ):
                found.append(f"{rel}:{node.lineno} getattr on loss pair {node.args[0].id}")
    return sorted(set(found))


def _modules() -> list[Path]:
    own = PACKAGE / "regions" / "protocol.py"  # the variants read their own fields
    return [p for p in sorted(PACKAGE.rglob("*.py")) if p != own]


def test_no_module_reads_a_loss_pair_by_shape():
    found = [line for path in _modules() for line in shape_reads(path)]
    assert not found, "\n".join(found)


def test_the_shape_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def f(m, lp: LossPair, kinds: Sequence[tuple[LossPair, int]]):\n"
        "    a = m.loss_pair().pld\n"
        "    b = lp.forward\n"
        "    pair = m.loss_pair()\n"
        "    c = pair.noise.kind\n"
        "    d = [x.mu2 for x, n in kinds]\n"
        "    e = pair.form.value == 'finite'\n"
        "    g = getattr(pair, 'noise', None)\n"
        "    h = pair.payload\n"
        "    i = pair.form == 'noise'\n"
        "    pairs = [(k.loss_pair(), n) for k, n in kinds]\n"
        "    for p, n in pairs:\n"
        "        p.lower\n"
    )
    found = shape_reads(bad)
    lines = sorted(int(line.split(":")[1].split()[0]) for line in found)
    assert lines == [2, 3, 5, 6, 7, 8, 9, 10, 13], found
    good = tmp_path / "good.py"
    good.write_text(
        "def f(lp: LossPair):\n"
        "    match lp:\n"
        "        case DirectedPair(forward, reverse):\n"
        "            return forward, reverse\n"
        "    return lp.sides(), lp.form is PairForm.FINITE, lp.directions()\n"
    )
    assert shape_reads(good) == []


#: the composition of a mixed list and the modules of its parts: one rule for all three
MIXED_MODULES = tuple(
    PACKAGE / "engines" / f"{name}.py" for name in ("mixed", "finiteparts", "noiseparts")
)


def _mixed_parts() -> set[str]:
    return {
        n.name
        for path in MIXED_MODULES
        for n in ast.parse(path.read_text()).body
        if isinstance(n, ast.ClassDef) and n.name.endswith("Part")
    }


def isinstance_on_parts(path: Path, parts: set[str]) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
            names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            for name in sorted(names & parts):
                found.append(f"{path.name}:{node.lineno} isinstance on {name}")
    return found


def test_no_isinstance_on_engine_parts_in_mixed():
    parts = _mixed_parts()
    assert {"GaussianPart", "GridPart", "FinitePart", "DirectedFinitePart"} <= parts
    found = [line for path in MIXED_MODULES for line in isinstance_on_parts(path, parts)]
    assert not found, "\n".join(found)


def test_the_parts_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(noise):\n    return isinstance(noise, GaussianPart)\n")
    assert isinstance_on_parts(bad, _mixed_parts()) == ["bad.py:2 isinstance on GaussianPart"]


def shape_tests(path: Path) -> list[str]:
    """``hasattr(x, ...)`` and ``getattr(x, "name", ...)`` calls: tests of an object's shape."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        named = len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
        if node.func.id == "hasattr" or (node.func.id == "getattr" and named):
            found.append(f"{path.name}:{node.lineno} {node.func.id}")
    return found


def test_no_shape_tests_in_mixed():
    found = [line for path in MIXED_MODULES for line in shape_tests(path)]
    assert not found, "\n".join(found)


def test_the_shape_test_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def f(noise, m):\n"
        "    if getattr(noise, 'loss_grid', None) == 'random allocation':\n"
        "        return hasattr(m, 'q')\n"
        "    return getattr(m, name)\n"
    )
    assert shape_tests(bad) == ["bad.py:2 getattr", "bad.py:3 hasattr"]


def test_grid_entries_and_the_laplace_grid_come_from_the_pair():
    """The allocation epoch and plain Laplace noise are told by the pair, not by shape."""
    sigma = dx.gaussian_noise("1")
    epoch = dx.random_allocation(sigma, 10).loss_pair()
    assert epoch.grid_entry() is GridEntry.ALLOCATION and epoch.laplace_eps0() is None
    assert sigma.loss_pair().grid_entry() is GridEntry.NOISE
    assert sigma.subsample("1/10").loss_pair().grid_entry() is GridEntry.NOISE
    lap = dx.laplace_noise("1/2")
    assert lap.loss_pair().laplace_eps0() == 2  # eps0 = sensitivity / b
    assert lap.subsample("1/10").loss_pair().laplace_eps0() is None
    assert sigma.loss_pair().laplace_eps0() is None
    with pytest.raises(InvalidParameterError, match="form finite is not noise on a grid"):
        dx.Mechanism.dp("1", "0").loss_pair().grid_entry()


# -- the variants' answers, against independent references -------------------------------


def test_variant_answers_match_closed_forms():
    g = dx.gaussian_noise("2", "3").loss_pair()
    assert g.form is PairForm.GAUSSIAN and g.gaussian_mu2() == Fraction(9, 4)
    assert g.loss_cap() is None and not g.has_leak() and g.symmetric
    lap = dx.laplace_noise("1/2").subsample("1/10").loss_pair()
    assert lap.form is PairForm.NOISE and not lap.symmetric
    assert lap.loss_cap() == 2 and lap.gaussian_mu2() is None  # eps0 = sensitivity / b
    match lap:
        case NoisePair(kind, mu, rate):
            assert (kind, mu, rate) == (NoiseKind.LAPLACE, 2, Fraction(1, 10))
    sub = dx.Mechanism.dp("log(3)", "1/10").subsample("1/2").loss_pair()
    assert sub.form is PairForm.ASYMMETRIC and sub.has_leak()  # delta > 0: mass at +inf
    # forward leak: q * delta = 1/20 (docs/theory.md, section 15)
    assert sub.directions()[0].leak.as_rational() == Fraction(1, 20)
    bounded = dx.Mechanism.dp("0.3").subsample("1/2").loss_pair()
    assert bounded.form is PairForm.ASYMMETRIC_BOUNDS and bounded.directions() is None
    lower, upper = bounded.sides()
    assert lower.form is upper.form is PairForm.ASYMMETRIC
    # ln(q e^eps + 1 - q) at eps = 0.3, q = 1/2: the weaker pair's cap is above it
    import math

    assert float(upper.loss_cap()) >= math.log(0.5 * math.exp(0.3) + 0.5)
    assert float(lower.loss_cap()) <= math.log(0.5 * math.exp(0.3) + 0.5)


def test_the_protocol_module_names_its_variants():
    assert set(protocol.__all__) >= {cls.__name__ for cls in VARIANTS} | {"NoiseKind"}


def test_every_noise_part_speaks_the_noise_part_protocol():
    """The conditioning sum asks every noise part the same questions, ``largest_loss`` too."""
    from dpcompose_exact.engines.noiseparts import GaussianPart, GridPart, NoisePart
    from dpcompose_exact.engines.oneuse import OneUsePart

    methods = {n for n, v in vars(NoisePart).items() if callable(v) and not n.startswith("_")}
    assert {"largest_loss", "delta_value", "delta_bounds", "epsilon", "describe"} <= methods
    for cls in (GaussianPart, GridPart, OneUsePart):
        missing = sorted(n for n in methods if not callable(getattr(cls, n, None)))
        assert not missing, (cls.__name__, missing)
    assert GaussianPart(Fraction(1)).largest_loss("both") is None  # unbounded
