"""The conformance suite: every verdict kind against independent references.

The toy adapters below report numbers computed here from independent references (mpmath
closed forms of the Gaussian, brute-force sums over the outcomes of randomized
response), shifted on purpose; the suite must judge them as the rules of
dpcompose_exact.tools.audit.suite say.  The float-rounding rule is checked on both sides
of its tolerance with exact rational arithmetic.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from fractions import Fraction
from typing import Any

import mpmath as mp
import pytest

from dpcompose_exact.cli import audit as cli_audit
from dpcompose_exact.tools.audit import Adapter, Claim, Job, Series, adapters, register
from dpcompose_exact.tools.audit.compare import FLOAT_ULPS
from dpcompose_exact.tools.audit.matrix import MATRIX_FORMATS
from dpcompose_exact.tools.audit.repro import write_repros
from dpcompose_exact.tools.audit.suite import JSON_ROW_KEYS, audit_suite, judge


@pytest.fixture(autouse=True)
def _mpmath_50_digits():
    """The references at 50 digits, whatever another test file set in mpmath.mp."""
    with mp.workdps(50):
        yield

GAUSS = "gaussian sigma=1 x100"  # G_10
RR = "randomized response p=0.5 x10"
LAPLACE = "laplace b=1 x10"
APPROX = "approximate dp eps=1 delta=1e-5 x50"




def phi(x: Any) -> Any:
    return mp.ncdf(x)


def gauss_delta(mu: Any, eps: Any) -> Any:
    """delta(eps) of G_mu (the analytic Gaussian mechanism, mpmath)."""
    return phi(-eps / mu + mu / 2) - mp.e**eps * phi(-eps / mu - mu / 2)


def gauss_beta(mu: Any, alpha: Any) -> Any:
    """The trade-off function of G_mu: Phi(Phi^-1(1 - alpha) - mu)."""
    return phi(mp.sqrt(2) * mp.erfinv(1 - 2 * alpha) - mu)


def rr_outcomes(k: int) -> list[tuple[Any, Any]]:
    """(P0, P1) of each count j of flipped answers of k-fold randomized response p = 1/2."""
    a, b = mp.mpf(3) / 4, mp.mpf(1) / 4
    return [
        (mp.binomial(k, j) * a ** (k - j) * b**j, mp.binomial(k, j) * b ** (k - j) * a**j)
        for j in range(k + 1)
    ]


def rr_delta(k: int, eps: Any) -> Any:
    """Brute force: sum over outcomes of max(0, P0 - e^eps P1)."""
    return mp.fsum(max(0, p0 - mp.e**eps * p1) for p0, p1 in rr_outcomes(k))


def rr_beta(k: int, alpha: Any) -> Any:
    """Brute-force Neyman-Pearson: reject where P1/P0 is largest, randomize the last."""
    out = sorted(rr_outcomes(k), key=lambda o: o[1] / o[0], reverse=True)
    left, power = mp.mpf(alpha), mp.mpf(0)
    for p0, p1 in out:
        take = min(mp.mpf(1), left / p0)
        power += take * p1
        left -= take * p0
        if left <= 0:
            break
    return 1 - power


class Toy(Adapter):
    """Reports ``factor`` times an independent reference for each quantity it declares."""

    library = "math"
    distribution = "toy-accountant"
    forms = frozenset({"gaussian", "finite"})

    def __init__(self, name: str, factor: float = 1.0, **claims: Any) -> None:
        self.name = name
        self.factor = factor
        self.series = (Series(name, Claim.UPPER, Claim.ESTIMATE, **claims),)
        self.last: Job | None = None

    def _mu_k(self, job: Job) -> tuple[str, int]:
        ((m, k),) = job.items
        return m.loss_pair().form.value, k

    def run(self, job: Job) -> dict[str, Any]:
        self.last = job
        form, k = self._mu_k(job)
        f = gauss_delta if form == "gaussian" else (lambda _, e: rr_delta(k, e))
        ds = [float(f(mp.mpf(10), mp.mpf(e)) * self.factor) for e in job.eps]
        return {self.name: (ds, [1.0] * len(job.deltas), [])}

    def run_quantities(self, job: Job) -> dict[str, Any]:
        form, k = self._mu_k(job)
        out: dict[str, Any] = {}
        if form == "gaussian":  # sigma = 1: D_a = a k / 2, mu = sqrt(k)
            out["renyi"] = [(a, float(a * k / 2 * self.factor)) for a in job.orders]
            out["gdp_mu"] = [(math.nan, math.sqrt(k) * self.factor)]
            out["beta"] = [(a, float(gauss_beta(mp.sqrt(k), mp.mpf(a)) * self.factor))
                           for a in job.alphas]  # fmt: skip
        else:
            out["gdp_mu"] = [(math.nan, 100.0)]
            out["beta"] = [(a, float(rr_beta(k, mp.mpf(a)) * self.factor)) for a in job.alphas]
        return {self.name: out}

    def repro_source(self, job: Job, series: str, quantity: str, at: str) -> str | None:
        return f"import math\nreported = {self.factor!r} * 0 + {float(at)!r} * 0 + 1e-300\n"


def _rows(r: Any, quantity: str) -> list[Any]:
    return [x for x in r.rows if x.quantity == quantity]


def test_float_rounding_rule_on_both_sides() -> None:
    """Just inside the tolerance: sound up to float rounding; just outside: UNSOUND."""
    exact = Fraction(3, 10)
    tol = Fraction(FLOAT_ULPS, 2**52) * exact + exact / 10**28  # rounding + certificate ulp
    x, seen = 0.3, []
    for _ in range(40):  # walk down from the nearest double, one ulp at a time
        x = math.nextafter(x, 0)
        inside = exact - Fraction(x) <= tol
        verdict = judge(x, "0.3", "0.3", Claim.UPPER, "delta")[0]
        assert verdict == ("sound up to float rounding" if inside else "UNSOUND"), x
        seen.append(inside)
    assert True in seen and False in seen  # both sides were visited
    # the mirror rule for beta, a lower bound: just above the truth is float rounding
    y, seen = 0.3, []
    for _ in range(40):
        y = math.nextafter(y, 1)
        inside = Fraction(y) - exact <= tol
        verdict = judge(y, "0.3", "0.3", Claim.LOWER, "beta")[0]
        assert verdict == ("sound up to float rounding" if inside else "UNSOUND"), y
        seen.append(inside)
    assert True in seen and False in seen


def test_judge_enclosures_and_references() -> None:
    up, low = Claim.UPPER, Claim.LOWER
    assert judge(0.42, "0.4", "0.45", up, "delta")[0] == "undecided"
    assert judge(0.42, None, None, up, "gdp_mu")[0] == "undecided"
    assert judge(0.5, "0.4", "0.45", low, "beta") == ("UNSOUND", pytest.approx(1 / 9))
    assert judge(0.3, "0.4", "0.45", low, "beta")[0] == "sound"
    assert judge(1.5, "0.4", "0.45", low, "beta")[0] == "UNSOUND"
    assert judge(0.3, "0.4", "0.45", low, "delta")[0] == "not checked"
    assert judge(-0.5, "0", "0", low, "beta")[0] == "invalid value"
    assert judge(100.0, "inf", "inf", up, "gdp_mu")[0] == "UNSOUND"
    assert judge(-1.0, None, None, up, "renyi")[0] == "invalid value"


def test_every_verdict_kind_against_independent_references(clean_registry) -> None:
    claims = {"renyi": Claim.UPPER, "gdp_mu": Claim.UPPER, "beta": Claim.LOWER}
    register(Toy("above", 1 + 1e-6, **claims))
    register(Toy("below", 0.99, **claims))
    register(Toy("nearest", 1.0, **claims))
    r = audit_suite("standard", accountants=("above", "below", "nearest"),
                    cases=(GAUSS, RR, LAPLACE, APPROX))  # fmt: skip
    cell = {(a, c): r.cell(a, c)[0] for a in ("above", "below", "nearest") for c in r.cases}
    # a guarantee 1e-6 on the safe side: sound (beta is a lower bound: 1e-6 above is not)
    # (eps(delta) is reported as an estimate, 1.0: not checked)
    assert {x.verdict for x in _rows(r, "epsilon") if x.case != LAPLACE} == {"not checked"}
    rows = [x for x in r.rows if x.quantity != "epsilon"]
    above = [x for x in rows if x.accountant == "above" and x.case in (GAUSS, RR)]
    for x in above:
        want = "UNSOUND" if x.quantity == "beta" else "sound"
        if x.quantity == "gdp_mu" and x.case == RR:
            want = "sound"  # 100 is above the exact mu
        if x.quantity == "delta" and x.reported > 1:
            want = "invalid value"  # 1e-6 above a delta near 1 (G_10 at eps = 0.01)
        assert x.verdict == want, x
    # 1 % short of the truth: UNSOUND with that shortfall (beta: 1 % below is safe)
    below = [x for x in rows if x.accountant == "below" and x.case == GAUSS]
    for x in below:
        if x.quantity == "beta":
            assert x.verdict == "sound", x
        elif x.quantity == "delta" and float(x.exact_lower) > 1e-300:
            assert x.verdict == "UNSOUND" and x.relative_error == pytest.approx(-0.01, rel=1e-6)
    assert {x.quantity for x in below if x.verdict == "UNSOUND"} >= {"delta", "renyi", "gdp_mu"}
    # the exact value in floats: sound, or below it by float rounding only
    nearest = [x for x in rows if x.accountant == "nearest" and x.case in (GAUSS, RR)]
    kinds = {x.verdict for x in nearest if x.quantity != "gdp_mu" or x.case == GAUSS}
    assert kinds <= {"sound", "sound up to float rounding"} and kinds, kinds
    assert "sound up to float rounding" in {x.verdict for x in r.rows}
    # the toys take no Laplace noise: unsupported
    assert cell["above", LAPLACE] == "unsupported"
    # no finite mu with a leak: a reported mu of 100 is unsound (proof: f(0) < 1)
    mu = next(x for x in _rows(r, "gdp_mu") if x.case == APPROX and x.accountant == "above")
    assert mu.exact_lower == "inf" and mu.verdict == "UNSOUND"
    assert not r.sound
    text = MATRIX_FORMATS["table"](r)
    assert "MAT -1%" in text and "unsupported" in text


class Odd(Adapter):
    """Crashes on the curve, or returns impossible numbers, or has no reference."""

    library = "math"
    distribution = "odd-accountant"
    forms = frozenset({"gaussian", "noise", "finite"})

    def __init__(self, name: str, mode: str) -> None:
        self.name, self.mode = name, mode
        self.series = (
            Series(name, Claim.UPPER, Claim.UPPER, gdp_mu=Claim.UPPER, beta=Claim.LOWER),
        )

    def run(self, job: Job) -> dict[str, Any]:
        if self.mode == "crash":
            raise ZeroDivisionError("boom")
        ds = [math.nan, -0.1, 1.5][: len(job.eps)]
        return {self.name: (ds + [0.5] * (len(job.eps) - len(ds)), [1e9] * len(job.deltas), [])}

    def run_quantities(self, job: Job) -> dict[str, Any]:
        if self.mode == "crash":
            raise RuntimeError("no mu")
        return {self.name: {"gdp_mu": [(math.nan, 3.0)], "beta": [(0.5, 0.0)]}}


def test_crashed_invalid_and_undecided_rows(clean_registry) -> None:
    register(Odd("crashes", "crash"))
    register(Odd("odd", "odd"))
    r = audit_suite("standard", accountants=("crashes", "odd"), cases=(LAPLACE,))
    crashed = [x for x in r.rows if x.accountant == "crashes"]
    assert crashed and all(x.verdict == "crashed" for x in crashed)
    assert any("no mu" in x.note for x in crashed if x.quantity == "gdp_mu")
    odd = {(x.quantity, x.at): x for x in r.rows if x.accountant == "odd"}
    assert odd["delta", "0.01"].verdict == "invalid value"  # nan
    assert odd["delta", "1"].verdict == "UNSOUND"  # negative delta: below the truth
    assert odd["delta", "3"].verdict == "invalid value"  # delta above 1
    # no certified beta(alpha) of Laplace noise is computed: undecided, with the reason
    beta = odd["beta", "0.5"]
    assert beta.verdict == "undecided" and beta.exact_lower is None
    assert "no certified" in beta.note
    # its GDP mu is certified (docs/theory.md, section 20): mu = 3 is judged against it
    assert odd["gdp_mu", ""].exact_lower is not None
    assert len(r.findings()) == 3


def test_json_rows_schema_and_entry_point_adapter(clean_registry, monkeypatch) -> None:
    """A third-party adapter from the entry-point group appears in the matrix and JSON."""
    import importlib.metadata as md

    jsonschema = pytest.importorskip("jsonschema")
    from importlib import resources

    class FakeEntryPoint:
        name, value = "plugged", "toy_pkg:make"

        def load(self) -> Any:
            return lambda: Toy("plugged", 0.99, gdp_mu=Claim.UPPER)

    monkeypatch.setattr(md, "entry_points", lambda **kw: [FakeEntryPoint()])
    adapters.load_entry_points(force=True)
    r = audit_suite("standard", cases=("gaussian sigma=0.5 x1",), accountants=("plugged",))
    data = json.loads(MATRIX_FORMATS["json"](r))
    assert data["matrix"]["plugged"]["gaussian sigma=0.5 x1"] == "UNSOUND"
    assert all(tuple(row) == JSON_ROW_KEYS for row in data["rows"])
    schema = json.loads(
        resources.files("dpcompose_exact").joinpath("schema/output.schema.json").read_text()
    )
    jsonschema.Draft202012Validator(schema).validate(data)
    csv = MATRIX_FORMATS["csv"](r).splitlines()
    assert csv[0] == ",".join(JSON_ROW_KEYS) and len(csv) == len(r.rows) + 1
    md_text = MATRIX_FORMATS["markdown"](r)
    assert "| plugged |" in md_text and "UNSOUND" in md_text
    assert "\\begin{tabular}" in MATRIX_FORMATS["latex"](r)


def test_store_resumes_and_repro_scripts(clean_registry, tmp_path) -> None:
    register(Toy("short", 0.5))
    store = str(tmp_path / "suite.sqlite")
    cases = ("gaussian sigma=0.5 x1", "pure dp eps=1 x10")
    first = audit_suite("standard", accountants=("short",), cases=cases, store=store)
    again = audit_suite("standard", accountants=("short",), cases=cases, store=store)
    assert first.resumed == 0 and again.resumed == 2
    assert again.rows == first.rows
    fresh = audit_suite("standard", accountants=("short",), cases=cases, store=store,
                        resume=False)  # fmt: skip
    assert fresh.resumed == 0
    paths = write_repros(first, tmp_path / "repro", {"pld_grid": 1e-4})
    assert len(paths) == len(first.findings()) > 0
    text = paths[0].read_text()
    assert "dpcompose_exact" not in text.split('"""', 2)[2]  # the library only
    out = subprocess.run([sys.executable, "-I", str(paths[0])], capture_output=True, text=True)
    # the toy is below the truth: the script exits 1 while it is on the wrong side
    assert out.returncode == 1 and "certified true value in [" in out.stdout
    assert "ON THE WRONG SIDE" in out.stdout


def test_library_repro_script_prints_the_librarys_number(tmp_path) -> None:
    """The dp_accounting PLD's script, run alone, prints the number the audit received."""
    pytest.importorskip("dp_accounting", reason="dp-accounting not installed (audit extra)")
    import dataclasses

    from dpcompose_exact.tools.audit.suite import SUITES

    r = audit_suite("standard", accountants=("pld_pessimistic",), cases=(RR,))
    row = next(x for x in r.rows if x.quantity == "delta" and x.at == "1")
    fake = dataclasses.replace(r, rows=(dataclasses.replace(row, verdict="UNSOUND"),))
    (path,) = write_repros(fake, tmp_path, {"pld_grid": 1e-4})
    assert {c.name for c in SUITES["standard"]()} >= {RR}
    out = subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert repr(row.reported) in out.stdout and row.exact_lower in out.stdout


def _parser() -> argparse.ArgumentParser:
    from dpcompose_exact.cli.common import OneLineParser

    parser = OneLineParser(prog="dpcompose")
    cli_audit.add_parser(parser.add_subparsers(dest="command"))
    return parser


def test_cli_formats_repro_and_bad_input(clean_registry, capsys, tmp_path) -> None:
    register(Toy("short", 0.5))
    p = _parser()
    base = ["audit", "--suite", "quick", "--accountant", "short"]
    out, code = cli_audit.handle(p.parse_args([*base, "--format", "markdown",
                                               "--repro", str(tmp_path)]))  # fmt: skip
    assert code == 1 and "| accountant |" in out and "| short |" in out
    assert "## Reports for the maintainers" in out and "`001_short_" in out
    assert "reproduction script" in capsys.readouterr().err
    assert list(tmp_path.glob("*.py"))
    out, code = cli_audit.handle(p.parse_args([*base, "--format", "csv"]))
    assert code == 1 and out.startswith(",".join(JSON_ROW_KEYS))
    # bad input: one line on stderr, exit status 2
    assert cli_audit.handle(p.parse_args(["audit", "--suite", "quick", "--accountant", "nope"]))\
        == ("", 2)  # fmt: skip
    err = capsys.readouterr().err
    assert "unknown accountant(s) 'nope'" in err and err.count("\n") == 1
    assert cli_audit.handle(p.parse_args(["audit", "--format", "latex"])) == ("", 2)
    err = capsys.readouterr().err
    assert "--format latex needs --suite" in err and err.count("\n") == 1
    with pytest.raises(SystemExit, match="2"):
        p.parse_args([*base, "--format", "yaml"])
    err = capsys.readouterr().err
    assert "invalid choice: 'yaml'" in err and err.count("\n") == 1
