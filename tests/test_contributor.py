"""The contributor test: a mechanism of one's own, in one file, plugged in by an entry point.

``examples/asymmetric_rr.py`` (asymmetric randomized response, ``P = (p, 1-p)``,
``Q = (q, 1-q)``) imports nothing above ``regions/`` and ``numbers/``.  A distribution
installed for the test (a ``.dist-info`` folder on ``sys.path``, as pip would leave it)
names its builder in the entry-point group ``dpcompose_exact.mechanisms``; then it
composes with a Gaussian through ``dx.compose``, the command line (``--mech``) and the
audit (``--mech``).  Its values are checked by brute force over the outcomes: exact
rationals alone, mpmath at 50 digits next to the Gaussian.
"""

from __future__ import annotations

import ast
import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stdout
from fractions import Fraction
from itertools import product
from math import comb
from pathlib import Path

import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.cli.app import main
from dpcompose_exact.mechanisms import families
from dpcompose_exact.regions import specs

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "asymmetric_rr.py"
P, Q = Fraction(1, 4), Fraction(1, 2)


def _install(where: Path) -> None:
    """A distribution whose only content is the entry point (``pip install`` leaves this)."""
    info = where / "toy_rr-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-rr\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[dpcompose_exact.mechanisms]\nasym_rr = asymmetric_rr:asymmetric_rr\n"
    )


@pytest.fixture
def plugged(tmp_path, monkeypatch):
    """The toy family installed and read from its entry point; forgotten afterwards."""
    _install(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    families.load_entry_points()
    yield tmp_path
    families._BUILDERS.pop("asym_rr", None)
    specs.FAMILIES.pop("asym_rr", None)
    sys.modules.pop("asymmetric_rr", None)


def _toy():
    from asymmetric_rr import asymmetric_rr

    return asymmetric_rr(str(P), str(Q))


# -- brute force -------------------------------------------------------------------------


def _outcomes(k: int) -> list[tuple[Fraction, Fraction]]:
    """``(P^k, Q^k)`` masses of each number of ones in k uses (the letters' counts)."""
    return [
        (comb(k, j) * P**j * (1 - P) ** (k - j), comb(k, j) * Q**j * (1 - Q) ** (k - j))
        for j in range(k + 1)
    ]


def _brute_delta(k: int, ratio: Fraction) -> Fraction:
    """``max(H_r(P^k || Q^k), H_r(Q^k || P^k))`` at ``e^eps = ratio``, exactly."""
    out = _outcomes(k)
    fwd = sum((max(Fraction(0), a - ratio * b) for a, b in out), Fraction(0))
    rev = sum((max(Fraction(0), b - ratio * a) for a, b in out), Fraction(0))
    return max(fwd, rev)


def _gauss_delta(mu, t):
    """``H_{e^t}(N(mu, 1) || N(0, 1))`` for any real t (mpmath)."""
    return mpmath.ncdf(mu / 2 - t / mu) - mpmath.exp(t) * mpmath.ncdf(-mu / 2 - t / mu)


def _brute_mixed(k: int, mu2: Fraction, eps) -> mpmath.mpf:
    """The toy k times next to ``G_mu``: conditioning on the toy's outcome, both ways.

    ``H_g(A x N1 || B x N0) = sum_x a_x H_{g b_x / a_x}(N1 || N0)`` over the toy's outcomes.
    """
    mu = mpmath.sqrt(mpmath.mpf(mu2.numerator) / mu2.denominator)
    fwd = rev = mpmath.mpf(0)
    for a, b in _outcomes(k):
        loss = mpmath.log(mpmath.mpf(a.numerator) / a.denominator) - mpmath.log(
            mpmath.mpf(b.numerator) / b.denominator
        )
        fwd += mpmath.mpf(a.numerator) / a.denominator * _gauss_delta(mu, eps - loss)
        rev += mpmath.mpf(b.numerator) / b.denominator * _gauss_delta(mu, eps + loss)
    return max(fwd, rev)


# -- the checks --------------------------------------------------------------------------


def test_the_example_imports_nothing_above_regions_and_numbers():
    tree = ast.parse(EXAMPLE.read_text())
    imported = [
        n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
    ] + [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    ours = [m for m in imported if m.startswith("dpcompose_exact")]
    assert ours and all(
        m.split(".")[1] in ("regions", "numbers", "errors") for m in ours
    ), ours


def test_alone_it_is_exact_and_equals_the_brute_force(plugged):
    m = _toy()
    for k in (1, 3):
        c = dx.compose(m, k)
        assert c.is_exact
        for ratio in (Fraction(1), Fraction(3, 2), Fraction(2), Fraction(5)):
            eps = f"log({ratio.numerator}/{ratio.denominator})"
            assert Fraction(c.delta(eps).exact) == _brute_delta(k, ratio), (k, ratio)


def test_next_to_a_gaussian_it_equals_the_brute_force_to_40_digits(plugged):
    mpmath.mp.dps = 60
    c = dx.compose([(_toy(), 3), (dx.gaussian_noise("2"), 2)])  # mu^2 = 2/4
    assert "closed form" in c.why
    for eps in ("0", "1/2", "1", "3"):
        lo, hi = c.delta(eps).interval(40)
        e = Fraction(eps)
        truth = _brute_mixed(3, Fraction(1, 2), mpmath.mpf(e.numerator) / e.denominator)
        assert mpmath.mpf(lo) <= truth <= mpmath.mpf(hi), eps
        assert mpmath.mpf(hi) - mpmath.mpf(lo) < mpmath.mpf(10) ** -35


def test_the_command_line_takes_it_by_its_entry_point(plugged):
    argv = ["delta", "--mech", "asym_rr(1/4,1/2):3", "--mech", "gaussian(2):2", "--eps", "1"]
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main([*argv, "--format", "json"]) == 0
    api = dx.compose([(_toy(), 3), (dx.gaussian_noise("2"), 2)], closed_forms=False)
    assert buf.getvalue() == api.to_json(delta_at=["1"])
    # a fresh process finds the family through the installed distribution alone
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(plugged), str(ROOT / "examples")])
    out = subprocess.run(
        [sys.executable, "-m", "dpcompose_exact", *argv, "--format", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=True,
    )
    assert out.stdout == buf.getvalue()
    first = json.loads(out.stdout)["mechanisms"][0]
    assert first == {"asym_rr": {"p": "1/4", "q": "1/2"}, "count": 3}


def test_the_audit_takes_it_by_its_entry_point(plugged):
    pytest.importorskip("dp_accounting")
    from dpcompose_exact.regions.specs import parse_mech_spec
    from dpcompose_exact.tools.audit.compare import audit

    kinds = [parse_mech_spec("asym_rr(1/4,1/2):3"), parse_mech_spec("gaussian(2):2")]
    report = audit(kinds, eps_grid=("1",), deltas=("1e-3",), accountants=("pld_pessimistic",))
    assert report.sound and not report.skipped
    mpmath.mp.dps = 60
    truth = _brute_mixed(3, Fraction(1, 2), mpmath.mpf(1))
    assert abs(mpmath.mpf(report.exact_delta[0]) - truth) < mpmath.mpf(10) ** -25
    reported = [r for r in report.rows if r.quantity == "delta"]
    assert reported and all(r.reported >= float(truth) for r in reported)  # an upper bound
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(
            [
                *("audit", "--mech", "asym_rr(1/4,1/2):3", "--mech", "gaussian(2):2"),
                *("--eps", "1", "--delta", "1e-3", "--accountant", "pld_pessimistic"),
            ]
        )
    assert code == 0 and "3 x asym_rr(1/4,1/2)" in buf.getvalue()


def test_a_broken_entry_point_is_recorded_not_raised(tmp_path, monkeypatch):
    info = tmp_path / "broken_rr-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-rr\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[dpcompose_exact.mechanisms]\nbroken_rr = no_such_module:build\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    families.load_entry_points()
    try:
        assert "no_such_module" in families.load_errors()["broken_rr"]
        with pytest.raises(dx.InvalidParameterError, match="unknown mechanism family 'broken_rr'"):
            families.builder("broken_rr")
    finally:
        families._LOAD_ERRORS.pop("broken_rr", None)


def test_every_letter_pair_is_a_valid_toy():
    for p, q in product(("1/3", "1/2", "9/10"), repeat=2):
        sys.path.insert(0, str(ROOT / "examples"))
        try:
            from asymmetric_rr import asymmetric_rr

            pair = asymmetric_rr(p, q).loss_pair()
        finally:
            sys.path.remove(str(ROOT / "examples"))
        fwd, rev = pair.directions()
        # both directions are distributions: masses sum to 1, no leak
        assert sum(Fraction(m.as_rational()) for _, m in fwd.masses) == 1
        assert sum(Fraction(m.as_rational()) for _, m in rev.masses) == 1
    with pytest.raises(dx.InvalidParameterError, match=r"q = 1 is outside \(0, 1\)"):
        asymmetric_rr("1/2", "1")


def test_an_output_format_plugs_in_by_its_entry_point(tmp_path, monkeypatch):
    from dpcompose_exact.presentation import formats

    (tmp_path / "toy_format.py").write_text(
        "from dpcompose_exact.presentation.formats import OutputFormat\n\n"
        "def _write(comp, options):\n"
        "    return f'{len(comp.constraints)} constraints\\n'\n\n"
        "FORMAT = OutputFormat('count', 'the number of constraints', "
        "writers={'composition': _write})\n"
    )
    info = tmp_path / "toy_format-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-format\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[dpcompose_exact.formats]\ncount = toy_format:FORMAT\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    formats.load_entry_points(force=True)
    try:
        assert "count" in formats.format_names("composition")
        buf = io.StringIO()
        with redirect_stdout(buf):
            assert main(["compose", "--dp", "0.3,0", "-k", "3", "--format", "count"]) == 0
        # the losses of three 0.3-DP uses are 0.3 (3 - 2j), j = 0..3: two of them >= 0
        assert buf.getvalue() == "2 constraints\n"
    finally:
        formats._REGISTRY.pop("count", None)
        formats._ORDER["composition"].remove("count")
        sys.modules.pop("toy_format", None)
