"""Regenerate the figures of the user guide into docs/img/ (needs matplotlib).

Run from the repository root: ``python examples/make_figures.py``.

* ``docs/img/bracket_column.png``: the column-size bracket of G_1 composed 10 times, as the
  command line draws it: ``dpcompose plot --gaussian 1 -k 10 --approx both --size 3.4x3``.
* ``docs/img/plot_on_axes.png``: ``Composition.plot(ax)`` on axes the user made (the paper's
  double constraint composed 1, 5 and 20 times).
* ``docs/img/formula_n2_k3.png``: ``dpcompose formula -n 2 -k 3 --format latex`` compiled
  with pdflatex (amsmath, one tall page) and rendered with pdftoppm (needs both; no
  matplotlib), the white margin below trimmed with Pillow when it is installed.
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


def formula_latex(path: Path, n: int = 2, k: int = 3) -> None:
    """``dpcompose formula -n N -k K --format latex``, compiled and rendered as a PNG."""
    import contextlib
    import io
    import shutil
    import subprocess
    import tempfile

    from dpcompose_exact.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        if main(["formula", "-n", str(n), "-k", str(k), "--format", "latex"]) != 0:
            raise SystemExit(f"dpcompose formula failed for {path}")
    doc = (
        "\\documentclass[11pt]{article}\n\\usepackage{amsmath}\n"
        "\\usepackage[paperwidth=17cm,paperheight=60cm,margin=8mm]{geometry}\n"
        "\\pagestyle{empty}\n\\begin{document}\n" + buf.getvalue() + "\\end{document}\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "formula.tex"
        src.write_text(doc)
        subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", src.name],
            cwd=tmp,
            check=True,
            capture_output=True,
        )
        out = Path(tmp) / "formula"
        subprocess.run(
            ["pdftoppm", "-png", "-r", "110", "-singlefile", "formula.pdf", str(out)],
            cwd=tmp,
            check=True,
            capture_output=True,
        )
        shutil.copyfile(out.with_suffix(".png"), path)
    try:
        from PIL import Image, ImageChops
    except ImportError:
        return
    with Image.open(path) as img:
        rgb = img.convert("RGB")
        box = ImageChops.difference(rgb, Image.new("RGB", rgb.size, "white")).getbbox()
        if box is not None:
            rgb.crop((0, 0, rgb.width, min(rgb.height, box[3] + 40))).save(path)


if __name__ == "__main__":
    IMG.mkdir(parents=True, exist_ok=True)
    bracket_column(IMG / "bracket_column.png")
    plot_on_axes(IMG / "plot_on_axes.png")
    formula_latex(IMG / "formula_n2_k3.png")
    print(
        f"wrote {IMG / 'bracket_column.png'}, {IMG / 'plot_on_axes.png'} and "
        f"{IMG / 'formula_n2_k3.png'}"
    )
