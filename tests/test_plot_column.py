"""Figures at a paper's column size: every text inside the figure, every curve visible."""

from __future__ import annotations

import pytest

matplotlib = pytest.importorskip("matplotlib")

import dpcompose_exact as dx  # noqa: E402
from dpcompose_exact.cli import main  # noqa: E402
from dpcompose_exact.paper.approx import gaussian, gaussian_composition  # noqa: E402
from dpcompose_exact.presentation.plot import (  # noqa: E402
    AXIS_LABELS,
    auto_limits,
    curve_points,
    plain_label,
    plot_regions,
    visible_limit,
)


def _texts_inside(fig) -> list[str]:
    """The texts (and the legend) whose box leaves the figure: clipped in a saved file."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    out = []
    for t in fig.findobj(matplotlib.text.Text):
        if not t.get_visible() or not t.get_text():
            continue
        bb = t.get_window_extent(renderer)
        if (
            bb.x0 < box.x0 - 0.5
            or bb.x1 > box.x1 + 0.5
            or bb.y0 < box.y0 - 0.5
            or bb.y1 > box.y1 + 0.5
        ):
            out.append(t.get_text())
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes)]:
        if legend is None:
            continue
        bb = legend.get_window_extent(renderer)
        if bb.x0 < box.x0 or bb.x1 > box.x1 or bb.y0 < box.y0 or bb.y1 > box.y1:
            out.append("legend")
    return out


def _curves():
    g1 = gaussian(1)
    ten = dx.compose(dx.Mechanism([("1", "1/100"), ("1/2", "1/20")]), 10)
    return [
        ("$G_{1}$", g1),
        ("$G_{1}^{\\otimes 10} = G_{\\sqrt{10}}$", gaussian_composition(1, 10)),
        ("2-piece approx. from below, composed $10$ times", ten.region),
        ("2-piece approx. from above, composed $10$ times (a long label)", ten.region),
    ]


def test_column_figure_keeps_every_text_inside():
    curves = _curves()
    points = [curve_points(c) for _, c in curves]
    lim = visible_limit(points, auto_limits(points[1:])[1])
    fig = plot_regions(
        curves,
        None,
        title="Trade-off curves: $G_1$, $k = 10$",
        size=(3.4, 3.0),
        xlim=(0, lim),
        ylim=(0, lim),
    )
    assert _texts_inside(fig) == []
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == AXIS_LABELS
    # every curve in the legend has a point inside the axes
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    for line in ax.get_lines():
        if line.get_label() in labels:
            xs, ys = line.get_xdata(), line.get_ydata()
            assert any(0 <= x <= lim and 0 <= y <= lim for x, y in zip(xs, ys)), line.get_label()


def test_visible_limit_widens_a_zoom_that_hides_a_curve():
    g1 = curve_points(gaussian(1))
    steep = ([0.0, 0.01, 0.05, 1.0], [1.0, 0.05, 0.01, 0.0])
    assert auto_limits([steep])[1] <= 0.15
    lim = visible_limit([g1, steep], auto_limits([steep])[1])
    assert any(t <= lim and f <= lim for t, f in zip(*g1))  # G_1 shows
    assert lim < 1.0  # still a zoom


def test_composition_plot_labels_its_axes_and_line(tmp_path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    c = dx.compose(dx.Mechanism([("0.3", 0), ("0.15", "0.02")]), 3)
    fig = Figure(figsize=(3.4, 3), layout="constrained")
    FigureCanvasAgg(fig)
    ax = c.plot(fig.add_subplot())
    assert (ax.get_xlabel(), ax.get_ylabel()) == AXIS_LABELS
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [c._label()]
    c.plot(ax, label="second")  # the next colour of the palette, both in the legend
    lines = ax.get_lines()
    assert lines[0].get_color() != lines[1].get_color()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [c._label(), "second"]
    own = c.plot()
    FigureCanvasAgg(own.figure)
    assert _texts_inside(own.figure) == []
    own.figure.savefig(tmp_path / "c.png")


def test_plot_message_is_plain_text(capsys, tmp_path):
    out = tmp_path / "g.png"
    assert main(["plot", "--gaussian", "1", "-k", "4", "--size", "3.4x3", "-o", str(out)]) == 0
    msg = capsys.readouterr().out
    assert "$" not in msg and "\\" not in msg and "G_1^(x4) = G_sqrt(4)" in msg
    assert plain_label("$G_{1}$") == "G_1"
