"""The one registry of output formats (presentation/formats.py).

Compositions (``Composition.write`` and its ``to_*``), the command line's ``--format`` and
the sweeps' output formats read one registry: a new format is one registration, and every
one of them then offers it.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import dpcompose_exact as dx
from dpcompose_exact.cli import main
from dpcompose_exact.errors import InvalidParameterError
from dpcompose_exact.presentation import formats
from dpcompose_exact.presentation.formats import OutputFormat, format_names, output_format
from dpcompose_exact.tools.sweeps import SweepResult, format_for

ROOT = Path(__file__).resolve().parent.parent / "dpcompose_exact"
MECH = dx.Mechanism([("0.3", "0"), ("0.15", "0.02")])


@pytest.fixture
def registry():
    """The registry, restored after the test (a test registers a toy format)."""
    saved = dict(formats._REGISTRY)
    writers = {name: dict(fmt.writers) for name, fmt in saved.items()}
    order = {kind: list(names) for kind, names in formats._ORDER.items()}
    yield formats
    formats._REGISTRY.clear()
    formats._REGISTRY.update(saved)
    for name, fmt in saved.items():
        fmt.writers.clear()
        fmt.writers.update(writers[name])
    formats._ORDER.clear()
    formats._ORDER.update(order)


def test_the_formats_of_each_kind_of_output():
    assert format_names("composition") == ("table", "json", "csv", "latex")
    assert format_names("tidy") == ("csv", "jsonl", "parquet", "latex")
    assert format_names("summary") == ("table", "json")
    assert format_names("formula") == ("table", "latex", "json")
    assert output_format("json", "tidy").name == "jsonl"  # the sweeps' alias
    assert format_for("out.ndjson") == "jsonl" and format_for("out.tex") == "latex"
    with pytest.raises(InvalidParameterError, match="unknown format 'xml'; choose one of csv"):
        format_for(None, "xml")
    with pytest.raises(InvalidParameterError, match="use .csv, .jsonl, .parquet or .tex"):
        format_for("out.xlsx")


def test_the_to_methods_take_one_output_options_value():
    """One OutputOptions, or the methods' keywords: the same bytes either way."""
    c = dx.compose(MECH, 3)
    o = formats.OutputOptions(digits=7, delta_at=["1/2", "1"], rounding="nearest")
    keywords = {"digits": 7, "delta_at": ["1/2", "1"], "rounding": "nearest"}
    assert c.to_json(o) == c.to_json(**keywords) == "".join(c.write("json", o))
    assert c.to_csv(o) == c.to_csv(**keywords)
    assert c.to_table(o) == c.to_table(**keywords)
    assert c.to_latex(o) == c.to_latex(**keywords)
    assert c.to_dict(o) == json.loads(c.to_json(**keywords))
    # the method's own names: to_json(forms=...) and to_table(exact=...) set `shown`
    shown = formats.OutputOptions(shown="never")
    assert c.to_json(forms="never") == c.to_json(shown)
    assert c.to_table(exact="never") == c.to_table(shown)
    assert c.to_table(o, digits=4) == c.to_table(
        digits=4, delta_at=["1/2", "1"], rounding="nearest"
    )
    with pytest.raises(
        TypeError, match="to_csv\\(\\) got unexpected keyword\\(s\\) caption; it takes"
    ):
        c.to_csv(caption="no captions in CSV")


def test_composition_writers_are_the_to_methods():
    c = dx.compose(MECH, 3)
    assert "".join(c.write("json")) == c.to_json()
    assert "".join(c.write("csv", delta_at=["1"])) == c.to_csv(delta_at=["1"])
    assert c.write("table", shown="always") == c.to_table(exact="always")
    assert c.write("latex") == c.to_latex()
    with pytest.raises(InvalidParameterError, match="unknown format 'parquet'; choose one of"):
        c.write("parquet")


def _markdown(c, o):
    """A toy format: a Markdown table of the region (or a curve)."""
    if o.delta_at is not None or o.epsilon_at is not None:
        rows = c.curve_rows(o.delta_at, o.epsilon_at, o.digits_for(MARKDOWN), o.exact, None)
    else:
        rows = c.rows(o.digits_for(MARKDOWN), o.exact, False, None)
    lines = ["| epsilon | delta |", "|---|---|"]
    lines += [f"| {r['epsilon_decimal']} | {r['delta_decimal']} |" for r in rows]
    return "\n".join(lines) + "\n"


def _markdown_tidy(rows, columns, caption=""):
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join("" if r[c] is None else str(r[c]) for c in columns) + " |"
              for r in rows]  # fmt: skip
    return "\n".join(lines) + "\n"


MARKDOWN = OutputFormat("markdown", "Markdown table", suffixes=(".md",), digits=6)


def test_a_new_format_is_one_registration(registry, capsys, tmp_path):
    registry.register(MARKDOWN, composition=_markdown, tidy=_markdown_tidy)
    c = dx.compose(MECH, 3)
    text = c.write("markdown")
    assert text.splitlines()[2] == "| 0 | 0.139637 |"  # six digits: the format's default
    # the command line offers it (choices and output) ...
    assert main(["compose", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "3",
                 "--format", "markdown"]) == 0  # fmt: skip
    assert capsys.readouterr().out == text
    assert main(["delta", "-k", "3", "--eps", "1", "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("| epsilon | delta |\n|---|---|\n| 1 | ")
    # ... and so do the sweeps, by name and by suffix
    table = SweepResult(rows=[{"k": 3, "value": "0.5"}], columns=["k", "value"], cells=1)
    assert format_for("out.md") == "markdown"
    table.write(tmp_path / "out.md")
    assert (tmp_path / "out.md").read_text() == "| k | value |\n|---|---|\n| 3 | 0.5 |\n"


def test_the_registry_is_restored_after_the_toy_format():
    assert "markdown" not in format_names("composition")
    assert main(["compose", "-k", "2", "--format", "markdown"]) == 2


def test_no_other_table_of_format_names():
    """Format names live in the registry only: no ``FORMATS = ("table", ...)`` literal."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if "audit" in path.parts:  # the audit's report formats are its own (not outputs)
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id.endswith("FORMATS") for t in node.targets)
                and isinstance(node.value, (ast.Tuple, ast.List))
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_json_of_the_registry_writers_is_the_api_json():
    c = dx.compose(MECH, 2)
    assert json.loads("".join(c.write("json", digits=10))) == c.to_dict(10)


def test_latex_of_a_noise_composition_names_the_noise(capsys):
    """Regression: the LaTeX caption read (eps, delta) pairs that noise does not have."""
    argv = ["delta", "--mech", "gaussian(2):10", "--mech", "0.3,0+0.15,0.02:20", "--eps", "1"]
    assert main([*argv, "--format", "latex"]) == 0
    out = capsys.readouterr().out
    assert "of 10 uses of gaussian(2); 20 uses of a mechanism satisfying" in out


@pytest.mark.parametrize("k, closed", [(40, True), (40, False), (300, False)])
def test_csv_rows_with_only_their_directed_decimals_print_the_same_bytes(k, closed):
    # the CSV prints the directed decimals in the decimal columns, so its
    # rows no longer make the nearest ones (exact route, and the certified one at k = 300)
    from dpcompose_exact.presentation.render import iter_csv
    from dpcompose_exact.presentation.rows import region_rows

    result = dx.compose(MECH, k, closed_forms=closed).result
    for rounding in ("up", "down", "nearest"):
        old = "".join(iter_csv(region_rows(result, 30, closed, False, rounding), rounding))
        rows = region_rows(result, 30, closed, False, rounding, directed_only=True)
        new = "".join(iter_csv(rows, rounding))
        assert new == old and new.count("\n") > k


def test_long_exact_deltas_carry_no_parts_below_the_limit():
    # a table makes readable forms only of deltas up to READ_LIMIT
    # characters; the longer ones keep no reduced element alive (peak memory)
    from dpcompose_exact.presentation.readable import parts_of
    from dpcompose_exact.presentation.rows import region_rows

    result = dx.compose(dx.Mechanism([("0.5", "1e-12")]), 30).result
    full = list(region_rows(result, 20, True, False, "up"))
    cut = list(region_rows(result, 20, True, False, "up", parts_up_to=11500))
    assert [str(r["delta"]) for r in full] == [str(r["delta"]) for r in cut]
    long = [i for i, r in enumerate(full) if len(r["delta"]) > 11500]
    assert long and len(long) < len(full)
    for i, (a, b) in enumerate(zip(full, cut)):
        assert parts_of(a["delta"]) is not None
        assert (parts_of(b["delta"]) is None) == (i in long)
