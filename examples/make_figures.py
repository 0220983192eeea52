"""Regenerate the figures of the user guide into docs/img/ (needs matplotlib).

Run from the repository root: ``python examples/make_figures.py``.

* ``docs/img/bracket_column.png``: the column-size bracket of G_1 composed 10 times, as the
  command line draws it: ``dpcompose plot --gaussian 1 -k 10 --approx both --size 3.4x3``.
* ``docs/img/plot_on_axes.png``: ``Composition.plot(ax)`` on axes the user made (the paper's
  double constraint composed 1, 5 and 20 times).
"""

from __future__ import annotations

from pathlib import Path

IMG = Path(__file__).resolve().parent.parent / "docs" / "img"


def bracket_column(path: Path) -> None:
    """The column-size bracket plot, through the command line."""
    from dpcompose_exact.cli import main

    argv = ["plot", "--gaussian", "1", "-k", "10", "--approx", "both", "--size", "3.4x3"]
    if main([*argv, "-o", str(path)]) != 0:
        raise SystemExit(f"dpcompose plot failed for {path}")


def plot_on_axes(path: Path) -> None:
    """``Composition.plot(ax)`` three times on one pair of user axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import dpcompose_exact as dx

    m = dx.Mechanism([("0.3", "0"), ("0.15", "0.02")])
    fig, ax = plt.subplots(figsize=(3.4, 3), layout="constrained")
    for k in (1, 5, 20):
        dx.compose(m, k).plot(ax)  # labels, palette and legend come from the package
    ax.set_title("Composition.plot(ax) on user axes", fontsize=9)
    fig.savefig(path, dpi=200)
    plt.close(fig)


if __name__ == "__main__":
    IMG.mkdir(parents=True, exist_ok=True)
    bracket_column(IMG / "bracket_column.png")
    plot_on_axes(IMG / "plot_on_axes.png")
    print(f"wrote {IMG / 'bracket_column.png'} and {IMG / 'plot_on_axes.png'}")
