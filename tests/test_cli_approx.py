"""Tests of the ``approx`` and ``plot`` subcommands (dpcompose_exact.cli.approx)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from mpmath import mp

from dpcompose_exact import cli
from dpcompose_exact.cli import approx as cli_approx
from dpcompose_exact.errors import InvalidParameterError


def run(*argv: str) -> str:
    """Parse with the main parser (which hooks the two subcommands) and call the handler."""
    parser = cli.build_parser()
    args = parser.parse_args(list(argv))
    assert args.command in cli_approx.COMMANDS
    return cli_approx.handle(args)


def _mp(q: Fraction) -> mp.mpf:
    return mp.mpf(q.numerator) / q.denominator


def g1(t: Fraction) -> mp.mpf:
    """G_1(t) = Phi(Phi^-1(1 - t) - 1), written out independently."""
    tt = mp.mpf(t.numerator) / t.denominator
    return mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * tt - 1) - 1)


@pytest.fixture(scope="module")
def approx_json():
    return json.loads(run("approx", "--gaussian", "1", "--format", "json", "--digits", "12"))


def test_json_shape(approx_json):
    assert approx_json["tradeoff"] == "G_1" and approx_json["pieces"] == 2
    for side in ("below", "above"):
        entry = approx_json[side]
        assert entry["certified"] is True
        assert "region" not in entry
        rows = entry["constraints"]
        assert len(rows) == 2
        for row in rows:
            assert set(row) == {
                "epsilon",
                "delta",
                "epsilon_decimal",
                "delta_decimal",
            }
            assert abs(float(Fraction(row["epsilon"])) - float(row["epsilon_decimal"])) < 1e-11
            assert abs(float(Fraction(row["delta"])) - float(row["delta_decimal"])) < 1e-11
        eps = [Fraction(r["epsilon"]) for r in rows]
        assert eps == sorted(eps)
        assert all((e * 1000).denominator == 1 for e in eps)  # the 1/1000 grid


def test_below_is_a_valid_guarantee_and_above_is_not(approx_json):
    # each lower line 1 - delta - e^eps t stays under G_1; the first upper chord starts at
    # (0, 1) (delta = 0, Proposition 2) and overshoots G_1 near t = 0.01
    with mp.workdps(30):
        for row in approx_json["below"]["constraints"]:
            e, d = Fraction(row["epsilon"]), Fraction(row["delta"])
            for j in range(1, 100):
                t = Fraction(j, 200)
                line = 1 - _mp(d) - mp.exp(_mp(e)) * _mp(t)
                assert line <= g1(t)
        steep = approx_json["above"]["constraints"][-1]
        assert Fraction(steep["delta"]) == 0
        e = Fraction(steep["epsilon"])
        t = Fraction(1, 100)
        assert 1 - mp.exp(_mp(e)) * _mp(t) > g1(t)


def test_json_with_k_has_composed_regions():
    data = json.loads(
        run("approx", "--gaussian", "1", "-k", "2", "--side", "below", "--format", "json")
    )
    assert "above" not in data and data["k"] == 2
    region = data["below"]["region"]
    assert set(region[0]) == {
        "epsilon",
        "delta",
        "epsilon_decimal",
        "delta_decimal",
        "delta_structured",
    }
    # composing two copies adds the eps: the largest composed eps is twice the largest one
    eps1 = max(Fraction(r["epsilon"]) for r in data["below"]["constraints"])
    assert max(Fraction(r["epsilon"]) for r in region) == 2 * eps1
    # delta at eps = 0 (total variation) of the composition exceeds that of one copy
    assert Fraction(region[0]["epsilon"]) == 0


def test_k1_region_equals_the_constraints():
    data = json.loads(
        run("approx", "--gaussian", "1", "-k", "1", "--side", "above", "--format", "json")
    )
    cons = data["above"]["constraints"]
    region = data["above"]["region"]
    assert [Fraction(r["epsilon"]) for r in region] == [Fraction(r["epsilon"]) for r in cons]
    for r, c in zip(region, cons):
        assert abs(float(r["delta_decimal"]) - float(Fraction(c["delta"]))) < 1e-15


def test_table_output_names_both_sides():
    text = run("approx", "--laplace", "1", "--pieces", "3")
    assert "3-piece approximation of Laplace_1 from below" in text
    assert "from above" in text


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (("approx", "--gaussian", "0"), "mu = 0 must be > 0"),
        (("approx", "--gaussian", "-1"), "must be > 0"),
        (("approx", "--laplace", "0"), "eps = 0 must be > 0"),
        (("approx", "--gaussian", "1", "-k", "0"), "k = 0"),
        (("approx", "--gaussian", "1", "-k", "x"), "k = 'x' must be a positive integer"),
        (("approx",), "--gaussian MU or --laplace EPS"),
        (("plot", "-o", "x.png"), "nothing to plot"),
        (("plot", "--dp", "0.3,0", "-o", "x.gif"), "unsupported file type"),
        (("plot", "--dp", "0.3,0", "--remarks", "-o", "x.png"), "--remarks needs exactly two"),
        (("plot", "--dp", "0.3", "-o", "x.png"), "malformed"),
        (("plot", "--dp", "1,0", "--approx", "both", "-o", "x.png"), "--approx needs"),
        (("plot", "--dp", "1,0", "-o", "/nonexistent/x.png"), "does not exist"),
        (("plot", "--dp", "1,0", "--xlim", "0.5,0.1", "-o", "x.png"), "--xlim '0.5,0.1'"),
        (("plot", "--dp", "1,0", "--size", "3", "-o", "x.png"), "expected WxH"),
    ],
)
def test_bad_input(argv, match):
    with pytest.raises(InvalidParameterError, match=match):
        run(*argv)


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (("approx", "--gaussian", "1", "--pieces", "0"), "--pieces 0 is outside the valid range"),
        (("approx", "--gaussian", "1", "--pieces", "two"), "--pieces 'two' is not an integer"),
        (("approx", "--gaussian", "1", "--side", "left"), "invalid choice: 'left'"),
        (("approx", "--gaussian", "1", "--rule", "best"), "invalid choice: 'best'"),
        (("approx", "--gaussian", "1", "--format", "xml"), "invalid choice: 'xml'"),
        (("plot", "--dp", "1,0", "--dpi", "5", "-o", "x.png"), "--dpi 5 is outside"),
    ],
)
def test_bad_options_one_line_exit_2(capsys, argv, match):
    assert cli.main(list(argv)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err


def test_plot_never_creates_directories(tmp_path, capsys):
    target = tmp_path / "missing" / "x.png"
    assert cli.main(["plot", "--dp", "1,0", "-o", str(target)]) == 2
    assert not target.parent.exists()
    assert "does not exist" in capsys.readouterr().err


def test_plot_svg_pdf_and_options(tmp_path):
    svg = tmp_path / "f.svg"
    out = run(
        "plot",
        "--gaussian",
        "1",
        "-k",
        "4",
        "--title",
        "Four uses",
        "--size",
        "3.4x3",
        "--xlim",
        "0,0.5",
        "--ylim",
        "0,0.5",
        "-o",
        str(svg),
    )
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "Four uses" in text
    assert "G_1^(x4) = G_sqrt(4)" in out and "$" not in out  # plain text, not mathtext


def test_gaussian_and_laplace_are_exclusive(capsys):
    with pytest.raises(SystemExit) as exc:
        run("approx", "--gaussian", "1", "--laplace", "1")
    assert exc.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_plot_writes_png_and_pdf(tmp_path):
    png = tmp_path / "fig2.png"
    out = run("plot", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "3", "--remarks", "-o", str(png))
    assert "4 curves" in out and "Remark 2 bound, k = 3" in out  # plain text
    assert png.read_bytes()[:4] == b"\x89PNG"
    pdf = tmp_path / "fig3.pdf"
    out = run("plot", "--gaussian", "1", "-k", "3", "--approx", "both", "-o", str(pdf))
    assert "composed 3 times" in out and "4 curves" in out
    assert pdf.read_bytes()[:5] == b"%PDF-"
