"""LaTeX output compiles in a plain one-column article without overfull boxes.

The compile tests need pdflatex with booktabs; they are skipped only when it is absent
and the run is not CI (with CI=true a missing pdflatex fails, and ``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from dpcompose_exact.cli.app import main
from dpcompose_exact.numbers.format import latex_decimal, latex_epsilon
from dpcompose_exact.presentation.render import to_latex

PDFLATEX = shutil.which("pdflatex")
IN_CI = os.environ.get("CI", "").lower() == "true"
needs_tex = pytest.mark.skipif(
    PDFLATEX is None and not IN_CI, reason="pdflatex is not installed (CI installs it)"
)

PREAMBLE = (
    "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{array}\n"
    "\\usepackage{longtable}\n"
    "\\begin{document}\nSome text before the table.\n"
)

PAPER = ["compose", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "20", "--format", "latex"]
LOG = ["compose", "--dp", "log(2),0", "--dp", "log(3)-log(2),0.1", "-k", "3", "--format", "latex"]


def latex_of(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


def compile_tex(tmp_path, body: str, name: str = "doc", packages: str = "") -> str:
    """Compile ``body`` in a one-column article (``packages``: more preamble lines)."""
    assert PDFLATEX is not None, "pdflatex is missing (CI must install it: see .ci/run)"
    src = tmp_path / f"{name}.tex"
    preamble = PREAMBLE.replace("\\begin{document}", packages + "\\begin{document}")
    src.write_text(preamble + body + "\n\\end{document}\n")
    proc = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", src.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    log = (tmp_path / f"{name}.log").read_text(errors="replace")
    assert proc.returncode == 0, log[-2000:]
    assert (tmp_path / f"{name}.pdf").exists()
    return log


@needs_tex
@pytest.mark.parametrize("argv", [PAPER, LOG], ids=["paper", "log"])
def test_compiles_without_overfull_boxes(capsys, tmp_path, argv):
    tex, _ = latex_of(capsys, argv)
    log = compile_tex(tmp_path, tex)
    assert "Overfull \\hbox" not in log
    assert "Float too large" not in log


@needs_tex
def test_delta_epsilon_and_exact_always_compile(capsys, tmp_path):
    d, _ = latex_of(capsys, ["delta", "-k", "5", "--eps", "0.5,1,log(2)", "--format", "latex"])
    e, _ = latex_of(capsys, ["epsilon", "-k", "5", "--delta", "1e-3,1e-5", "--format", "latex"])
    a, _ = latex_of(capsys, ["compose", "-k", "2", "--format", "latex", "--exact", "always"])
    log = compile_tex(tmp_path, d + e + a)
    assert "Overfull \\hbox" not in log


# --exact always with forms too long for one page: 41 rows of up to 2,096 characters and
# integers of up to 44 digits (PAPER), and two kinds of mechanism (like examples/paper.toml)
LONG_FORMS = [
    [*PAPER, "--exact", "always"],
    ["compose", "--mech", "0.3,0+0.15,0.02:6", "--mech", "1,1e-6:2", "--format", "latex",
     "--exact", "always"],
    # a form of degree over 20,000 in x = e^{1/20}: printed as it is, e^{...} (a double
    # superscript e^{3/20}^{9} stopped pdflatex)
    ["delta", "-k", "20", "--eps", "0.123457,1", "--format", "latex", "--exact", "always"],
]


@needs_tex
@pytest.mark.parametrize("argv", LONG_FORMS, ids=["paper", "two-kinds", "raw"])
def test_long_exact_forms_compile_in_a_longtable(capsys, tmp_path, argv):
    """Regression: every form went into one float (pdflatex: "Float too large", lines past
    the margin; for --spec examples/paper.toml "TeX capacity exceeded", no PDF at all).
    Now a longtable, the long forms listed after it in paragraphs TeX can break."""
    tex, _ = latex_of(capsys, argv)
    log = compile_tex(tmp_path, tex)
    assert "Overfull \\hbox" not in log
    assert "Float too large" not in log
    assert "\\begin{longtable}" in tex and "\\begin{table}" not in tex
    assert "% needs \\usepackage{longtable}" in tex
    assert re.search(r"& see \(\d+\) \\\\$", tex, re.M)  # a cell refers to a listed form
    assert "Decimals rounded up: never below the exact values." in tex  # the footnote stays


def test_paper_case_is_a_booktabs_table(capsys):
    tex, err = latex_of(capsys, [*PAPER, "--caption", "Paper case.", "--label", "tab:paper"])
    assert tex.count("\\begin{table}") == 1 and "\\toprule" in tex and "\\bottomrule" in tex
    assert "\\hline" not in tex
    assert "\\caption{Paper case.}" in tex and "\\label{tab:paper}" in tex
    # delta(63/20) = 9.1346...e-5: 3 significant digits, rounded up (never understated)
    assert "$9.14 \\times 10^{-5}$" in tex and "Decimals rounded up" in tex
    assert "\\frac{3}{20}" in tex and "0.150000" not in tex
    # the exact delta column is left out by --exact auto, and the output says so
    assert "exact deltas left out" in tex and "exact deltas left out" in err
    always, _ = latex_of(capsys, [*PAPER, "--exact", "always", "-k", "2"])
    assert ", exact" in always and "e^{3/20}" in always
    never, err = latex_of(capsys, ["compose", "-k", "2", "--format", "latex", "--exact", "never"])
    assert ", exact" not in never and err == ""


def test_decimals_only_differs_from_default(capsys):
    a, _ = latex_of(capsys, ["compose", "-k", "2", "--format", "latex"])
    b, _ = latex_of(capsys, ["compose", "-k", "2", "--format", "latex", "--decimals-only"])
    assert "\\frac{3}{20}" in a and "\\frac" not in b and "$0.15$" in b  # exact: not bumped


def test_log_epsilons_are_clean(capsys):
    tex, _ = latex_of(capsys, LOG)
    assert "$2\\log 3 - 3\\log 2$" in tex and "\\left(" not in tex
    assert latex_epsilon("1/2 + log(2)") == "\\log 2 + \\frac{1}{2}"
    assert latex_epsilon("exp(1)") is None


def test_latex_decimal_rules():
    assert latex_decimal("0.0123") == "0.0123"
    assert latex_decimal("0.00123") == "1.23 \\times 10^{-3}"
    assert latex_decimal("12345.6", 3) == "1.23 \\times 10^{4}"
    assert latex_decimal("0") == "0"


def test_to_latex_refuses_unknown_exact_choice():
    with pytest.raises(ValueError, match="choose one of auto, always, never"):
        to_latex([], exact="sometimes")


MIXED_EPS = ["epsilon", "--dp", "0.3,0.02", "-k", "1", "--delta", "0.02,0.05", "--format", "latex"]


@needs_tex
@pytest.mark.parametrize("exact", ["always", "auto"])
def test_eps_of_delta_with_a_rational_row_keeps_the_exact_column(capsys, tmp_path, exact):
    """Regression: one rational epsilon (a delta on a vertex: eps(0.02) = 3/10) dropped the
    whole exact eps(delta) column, with a note calling forms of 27 characters "too long for
    a table"; the text table prints them (3/10, log((95x - 3)/98))."""
    tex, err = latex_of(capsys, [*MIXED_EPS, "--exact", exact])
    assert "too long" not in tex and "too long" not in err
    assert "$\\varepsilon(\\delta)$, exact" in tex
    assert "& $\\frac{3}{10}$ \\\\" in tex  # the rational row, exactly
    assert "& $\\log\\left(\\frac{95x - 3}{98}\\right)$ \\\\" in tex
    assert "Exact forms in $x = e^{3/10}$." in tex
    assert tex.count("\\frac{3}{10}") == 1  # one exact column, not two
    log = compile_tex(tmp_path, tex)
    assert "Overfull \\hbox" not in log
    text, _ = latex_of(capsys, MIXED_EPS[:-2])  # the text table agrees
    assert "3/10" in text and "log((95x - 3)/98)" in text
    never, _ = latex_of(capsys, [*MIXED_EPS, "--exact", "never"])
    assert ", exact" not in never and "\\log" not in never
