"""Tests of presentation.plot (Figures 1-3 of the paper, docs/theory.md, section 9)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dpcompose_exact.algebra import dp_region
from dpcompose_exact.errors import InvalidParameterError
from dpcompose_exact.paper.approx import gaussian
from dpcompose_exact.presentation.plot import curve_points, plot_regions


@pytest.fixture(scope="module")
def curves():
    return [
        ("(0.3, 0), (0.15, 0.02)-DP", dp_region([("0.3", "0"), ("0.15", "0.02")])),
        ("G_1", gaussian(1)),
        ("1 - t^2", lambda t: 1 - t * t),
    ]


def test_png_is_written(tmp_path, curves):
    out = plot_regions(curves, tmp_path / "fig.png", title="test")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 5000


def test_pdf_is_written_from_a_mapping(tmp_path, curves):
    out = plot_regions(dict(curves), tmp_path / "fig.PDF")
    data = out.read_bytes()
    assert data[:5] == b"%PDF-"
    assert len(data) > 1000


def test_svg_is_written(tmp_path, curves):
    out = plot_regions(curves, tmp_path / "fig.svg", title="an SVG")
    assert "<svg" in out.read_text() and "an SVG" in out.read_text()


def test_missing_directory_is_refused_not_created(tmp_path, curves):
    with pytest.raises(InvalidParameterError, match="does not exist"):
        plot_regions(curves, tmp_path / "sub" / "fig.png")
    assert not (tmp_path / "sub").exists()


def test_one_palette_distinct_styles():
    from dpcompose_exact.presentation.plot import LINESTYLES, PALETTE, style

    styles = [style(i) for i in range(len(PALETTE))]
    assert len({s["color"] for s in styles}) == len(PALETTE)
    assert len({str(s["linestyle"]) for s in styles}) == len(LINESTYLES)


def test_auto_zoom_on_composed_curves():
    from dpcompose_exact.paper.approx import gaussian_composition
    from dpcompose_exact.presentation.plot import auto_limits, curve_points

    one = curve_points(dp_region([("1", "0")]))
    assert auto_limits([one]) == (0.0, 1.0)  # a single use spans the square
    ts, fs = curve_points(gaussian_composition(1, 10))  # G_sqrt(10) hugs the axes
    lo, hi = auto_limits([(ts, fs), one])
    assert (lo, hi) == (0.0, 1.0)  # one curve using the square keeps it
    lo, hi = auto_limits([(ts, fs)])
    assert lo == 0.0 and hi <= 0.2
    knee = min(range(len(ts)), key=lambda i: ts[i] + fs[i])
    assert ts[knee] < hi and fs[knee] < hi  # the bend stays in view


def test_unsupported_suffix(tmp_path, curves):
    with pytest.raises(InvalidParameterError, match=r"unsupported file type '\.gif'"):
        plot_regions(curves, tmp_path / "fig.gif")
    with pytest.raises(InvalidParameterError, match=r"unsupported file type '\(none\)'"):
        plot_regions(curves, tmp_path / "fig")
    assert not list(tmp_path.iterdir())


def test_bad_curves(tmp_path):
    with pytest.raises(InvalidParameterError, match="nothing to plot"):
        plot_regions([], tmp_path / "a.png")
    with pytest.raises(InvalidParameterError, match="cannot plot int"):
        plot_regions([("x", 3)], tmp_path / "a.png")
    with pytest.raises(InvalidParameterError, match="label, curve"):
        plot_regions([dp_region([("1", "0")])], tmp_path / "a.png")


def test_region_points_are_its_vertices():
    # f_{1,0}: vertices (0, 1), (c, c) with c = 1/(1 + e), (1, 0)
    ts, fs = curve_points(dp_region([("1", "0")]))
    assert ts[0] == 0 and fs[0] == 1 and ts[-1] == 1 and fs[-1] == 0
    c = 1 / (1 + 2.718281828459045)
    assert len(ts) == 3
    assert abs(ts[1] - c) < 1e-9 and abs(fs[1] - c) < 1e-9


def test_smooth_points_are_decreasing_and_symmetric():
    ts, fs = curve_points(gaussian(1), samples=50)
    assert ts[0] == 0 and fs[0] == 1 and fs[-1] == 0
    assert all(a >= b for a, b in zip(fs, fs[1:]))
    # G_1 is symmetric: f(f(t)) = t at t = 0.3
    g = gaussian(1)
    assert abs(float(g.value(g.value("0.3"))) - 0.3) < 1e-12


def test_core_does_not_import_matplotlib():
    code = (
        "import sys, dpcompose_exact, dpcompose_exact.presentation.plot, "
        "dpcompose_exact.paper.bracket, "
        "dpcompose_exact.cli.approx; print('matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_show_figures_and_write_no_tracked_files(path):
    nb = json.loads(path.read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert 'Path("figures")' not in code and '"figures/' not in code  # no tracked output
    if "savefig" not in code and "plot" not in code:
        return  # a notebook without figures (e.g. 06_ecosystem: tables only)
    assert "DPCOMPOSE_FIGDIR" in code
    images = [
        o
        for c in nb["cells"]
        if c["cell_type"] == "code"
        for o in c.get("outputs", [])
        if "image/png" in o.get("data", {})
    ]
    assert images, "committed with its figures inline"
    last = nb["cells"][-1]
    assert last["cell_type"] == "markdown" and "What the figure" in "".join(last["source"])


def test_cli_plot_mech_draws_the_certified_band(tmp_path, monkeypatch, capsys):
    """``plot --mech`` of a mixed list draws Composition.plot()'s delta(eps) band."""
    import dpcompose_exact as api
    from dpcompose_exact.cli.app import main
    from dpcompose_exact.presentation import plot as plot_module

    drawn = []
    real = plot_module.plot_profiles

    def spy(bands, *a, **kw):
        drawn.extend(bands)
        return real(bands, *a, **kw)

    monkeypatch.setattr(plot_module, "plot_profiles", spy)
    out = tmp_path / "mixed.png"
    assert main(["plot", "--mech", "gaussian(2):3", "--mech", "0.5,0:2", "-o", str(out)]) == 0
    assert "certified delta(eps) band: 3 x gaussian(2), 2 x (0.5, 0)" in capsys.readouterr().out
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    kinds = [(api.gaussian_noise("2"), 3), (api.Mechanism([("1/2", "0")]), 2)]
    band = api.compose(kinds).profile_band()
    assert len(drawn) == 1 and drawn[0][1] == band
    xs, lower, upper = band
    assert all(lo <= up for lo, up in zip(lower, upper, strict=True)) and xs[0] == 0


def test_cli_plot_mech_of_a_constraint_list_is_its_tradeoff_curve(tmp_path, capsys):
    from dpcompose_exact.cli.app import main

    out = tmp_path / "pure.svg"
    assert main(["plot", "--mech", "0.5,0:2", "-o", str(out)]) == 0
    assert "(1 curve: 2 x (0.5, 0))" in capsys.readouterr().out
    assert out.stat().st_size > 1000


def test_cli_plot_mech_alone(tmp_path, capsys):
    from dpcompose_exact.cli.app import main

    code = main(["plot", "--mech", "0.5,0:2", "--dp", "1,0", "-o", str(tmp_path / "x.png")])
    err = capsys.readouterr().err
    assert code == 2 and "do not combine them with --dp" in err and err.count("\n") == 1
    with pytest.raises(InvalidParameterError, match="--xlim/--ylim set the trade-off axes"):
        from argparse import Namespace

        from dpcompose_exact.cli.approx import _plot_kinds

        args = Namespace(
            dp=None,
            k=None,
            remarks=False,
            gaussian=None,
            laplace=None,
            approx=None,
            mech=["gaussian(2):1"],
            spec=None,
            title=None,
            output=str(tmp_path / "y.png"),
            dpi=50,
        )
        _plot_kinds(args, (4.0, 4.0), (0.0, 0.5), None)
