"""Compositions with noise can be drawn and tabulated, refusals carry
the right class, and the summary says which GDP mu is which."""

from __future__ import annotations

import math
import subprocess

import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.cli.summary import clt_mu
from dpcompose_exact.errors import (
    InvalidParameterError,
    ResourceLimitError,
    UnsupportedQueryError,
)

LAPLACE = dx.compose(dx.laplace_noise("1"), 3)


def test_a_list_refusal_is_an_unsupported_query_not_a_resource_limit():
    with pytest.raises(UnsupportedQueryError, match="ask for delta\\(eps\\) or epsilon") as e:
        LAPLACE.constraints  # noqa: B018
    assert not isinstance(e.value, ResourceLimitError)  # nothing ran out
    mix = dx.compose([(dx.gaussian_noise("1"), 2), (dx.laplace_noise("1"), 2)])
    with pytest.raises(UnsupportedQueryError, match="gdp_mu is computed for") as e:
        mix.gdp_mu()
    assert not isinstance(e.value, InvalidParameterError)  # no parameter is invalid


def test_to_latex_of_noise_tabulates_eps_of_delta(tmp_path):
    tex = LAPLACE.to_latex(label="tab:lap")
    assert "Privacy curve $\\varepsilon(\\delta)$" in tex and "1 \\times 10^{-8}" in tex
    # Laplace b = 1, 3 uses: eps(delta) <= 3 always (pure 3-DP), and eps(1e-3) well above 1
    values = [float(line.split("$")[1]) for line in tex.splitlines() if "times 10^{-" in line]
    assert len(values) == 6 and all(1 < v <= 3 for v in values) and values == sorted(values)
    if subprocess.run(["which", "pdflatex"], capture_output=True).returncode == 0:
        doc = tmp_path / "t.tex"
        doc.write_text(
            "\\documentclass{article}\\usepackage{booktabs}\\begin{document}"
            + tex
            + "\\end{document}"
        )
        done = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", doc.name],
            cwd=tmp_path,
            capture_output=True,
            timeout=120,
        )
        assert done.returncode == 0 and (tmp_path / "t.pdf").exists()


def test_the_profile_band_contains_the_exact_laplace_profile():
    # one use of Laplace(b = 1), sensitivity 1: delta(eps) = 1 - e^((eps - 1)/2) on [0, 1]
    # (the closed form of the Laplace profile), a reference independent of the loss grid;
    # the band is certified on each whole step, so it holds at the ends and the middle
    one = dx.compose(dx.laplace_noise("1"), 1)
    xs, lower, upper = one.profile_band(eps_max=1, points=6)
    for i in range(0, len(xs), 2):
        for e in (xs[i], (xs[i] + xs[i + 1]) / 2, xs[i + 1]):
            ref = float(1 - mpmath.exp((mpmath.mpf(e) - 1) / 2))
            assert lower[i] <= ref * (1 + 1e-9) + 1e-15 and ref <= upper[i] * (1 + 1e-9), e


def test_plot_of_noise_draws_a_band(tmp_path):
    pytest.importorskip("matplotlib")
    ax = LAPLACE.plot()
    assert ax.get_yscale() == "log" and len(ax.collections) == 1
    assert "certified band" in ax.get_legend().get_texts()[0].get_text()


def test_the_central_limit_mu_is_the_formula_of_bu_et_al():
    # mu_CLT = q sqrt(T (e^(1/sigma^2) - 1)), computed here with mpmath
    c = dx.compose(dx.gaussian_noise("24/25").subsample("1/100"), 1000)
    mpmath.mp.dps = 30
    ref = mpmath.mpf(1) / 100 * mpmath.sqrt(1000 * (mpmath.exp(1 / mpmath.mpf("0.96") ** 2) - 1))
    assert math.isclose(float(clt_mu(c.kinds)), float(ref), rel_tol=1e-3)
    assert clt_mu(dx.compose(dx.gaussian_noise("1"), 4).kinds) is None  # no sampling
    assert clt_mu(LAPLACE.kinds) is None
