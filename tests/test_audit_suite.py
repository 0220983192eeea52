"""The audit suite (dpcompose_exact.tools.audit.suite): verdicts against certified references."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from dpcompose_exact.cli import audit as cli_audit
from dpcompose_exact.errors import InvalidParameterError
from dpcompose_exact.tools.audit import Adapter, Claim, Job, Series, register
from dpcompose_exact.tools.audit.matrix import format_matrix
from dpcompose_exact.tools.audit.suite import SuiteCase, audit_suite, judge

FAST = ("gaussian sigma=1 x100", "pure dp eps=0.1 x100")




def _gaussian_delta(mu: float, eps: float) -> float:
    """delta(eps) of G_mu in floats (the closed form; an independent reference)."""

    def phi(x: float) -> float:
        return 0.5 * math.erfc(-x / math.sqrt(2))

    return phi(-eps / mu + mu / 2) - math.exp(eps) * phi(-eps / mu - mu / 2)


class Shrunk(Adapter):
    """Reports the float closed form of G_10 (100 uses of sigma = 1) times 0.99."""

    name = "shrunk"
    library = "math"
    distribution = "shrunk-accountant"
    forms = frozenset({"gaussian"})
    series = (Series("shrunk", Claim.UPPER, Claim.ESTIMATE),)

    def run(self, job: Job) -> dict[str, Any]:
        ds = [0.99 * _gaussian_delta(10.0, e) for e in job.eps]
        return {"shrunk": (ds, [1.0] * len(job.deltas), [])}


class Broken(Adapter):
    name = "broken"
    library = "math"
    distribution = "broken-accountant"
    forms = frozenset({"gaussian", "finite"})
    series = (Series("broken", Claim.UPPER, Claim.UPPER),)

    def run(self, job: Job) -> dict[str, Any]:
        raise ZeroDivisionError("boom")


def test_judge_against_an_enclosure() -> None:
    up = Claim.UPPER
    assert judge(0.5, "0.4", "0.45", up, "delta") == ("sound", pytest.approx(1 / 9))
    assert judge(0.42, "0.4", "0.45", up, "delta") == ("undecided", 0.0)
    verdict, rel = judge(0.36, "0.4", "0.45", up, "delta")
    assert verdict == "UNSOUND" and rel == pytest.approx(-0.1)
    assert judge(0.3, "0.3", "0.3", up, "delta")[0] == "sound up to float rounding"
    assert judge(0.36, "0.4", "0.45", Claim.LOWER, "delta")[0] == "not checked"
    assert judge(math.nan, "0.4", "0.45", up, "delta")[0] == "invalid value"
    assert judge(1.5, "0.4", "0.45", up, "delta")[0] == "invalid value"
    assert judge(-0.1, "0.4", "0.45", up, "delta")[0] == "UNSOUND"
    assert judge(math.inf, "inf", "inf", up, "epsilon")[0] == "sound"


class ZeroLowerEnd:
    """References whose delta enclosure starts at 0 (as delta(0.1) of 10^4 steps at q = 1e-5:
    [0, 3.1e-19]), so that the grading path is tested without the 3 GB reference."""

    def get(self, quantity: str, at: str) -> tuple[str, str] | None:
        return ("0", "3.1e-19") if quantity == "delta" else None

    def refined(self, quantity: str, at: str) -> None:
        return None

    def why(self, quantity: str, at: str) -> str:
        return "no reference"


class Tiny(Adapter):
    """Reports fixed deltas, falling with eps: above the upper end, below it, 0."""

    name = "tiny"
    library = "math"
    distribution = "tiny-accountant"
    forms = frozenset({"gaussian", "noise"})
    series = (Series("tiny", Claim.UPPER, None),)

    def run(self, job: Job) -> dict[str, Any]:
        return {"tiny": ([3.2e-19, 1e-19, 0.0], [math.nan] * len(job.deltas), [])}


def test_a_lower_end_of_zero_is_never_sound_below_the_upper_end() -> None:
    """At q = 1e-5 the certified lower end is 0: a shortfall cannot be seen, so a number
    below the upper end is undecided with a note, never sound; above it, sound."""
    from dpcompose_exact.mechanisms.noise import gaussian_noise
    from dpcompose_exact.tools.audit.suite import ZERO_LOWER_END, case_rows

    up = Claim.UPPER
    assert judge(0.0, "0", "3.1e-19", up, "delta")[0] == "undecided"
    assert judge(1e-19, "0", "3.1e-19", up, "delta")[0] == "undecided"
    assert judge(3.2e-19, "0", "3.1e-19", up, "delta")[0] == "sound"
    assert judge(-1e-30, "0", "3.1e-19", up, "delta")[0] == "UNSOUND"  # below any delta
    items = [(gaussian_noise(1).subsample("0.00001"), 10_000)]
    case = SuiteCase("q=1e-5", lambda: items, ("0.1", "0.2", "0.3"), ())
    rows = case_rows(Tiny(), case, items, ZeroLowerEnd(), {})  # type: ignore[arg-type]
    assert [r.verdict for r in rows] == ["sound", "undecided", "undecided"]
    assert [r.note for r in rows] == ["", ZERO_LOWER_END, ZERO_LOWER_END]
    assert "not checked for a shortfall" in ZERO_LOWER_END


def test_toy_below_the_truth_is_unsound_in_the_matrix(clean_registry) -> None:
    register(Shrunk())
    register(Broken())
    r = audit_suite(accountants=("shrunk", "broken"), cases=FAST)
    assert not r.sound
    cell = r.cell("shrunk", "gaussian sigma=1 x100")
    assert cell[0] == "UNSOUND" and cell[1] == pytest.approx(-0.01, rel=1e-6)
    assert r.cell("shrunk", "pure dp eps=0.1 x100")[0] == "unsupported"
    assert r.cell("broken", "gaussian sigma=1 x100")[0] == "crashed"
    text = format_matrix(r)
    # the compact matrix: an accountant per line, a family per column, the grade's count
    assert "MAT -1%" in text and "crash" in text and "unsupported" in text  # (legend)
    assert max(map(len, text.split(" finding(s)")[0].splitlines())) <= 120
    row = next(x for x in r.rows if x.verdict == "UNSOUND").as_dict()
    assert row["severity"] == "material"
    assert list(row)[:12] == [
        "accountant",
        "library",
        "version",
        "case",
        "quantity",
        "at",
        "reported",
        "exact_lower",
        "exact_upper",
        "claim",
        "verdict",
        "relative_error",
    ]


def test_cli_suite_exit_status_and_json(clean_registry, capsys) -> None:
    import argparse

    register(Shrunk())
    parser = argparse.ArgumentParser()
    cli_audit.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["audit", "--suite", "quick", "--accountant", "shrunk"])
    args_json = parser.parse_args(
        ["audit", "--suite", "quick", "--accountant", "shrunk", "--format", "json"]
    )
    out, code = cli_audit.handle(args_json)
    assert code == 1
    data = json.loads(out)
    assert data["sound"] is False and data["matrix"]["shrunk"]["gaussian sigma=1 x100"] == "UNSOUND"
    out, code = cli_audit.handle(args)
    assert code == 1 and "UNSOUND" in out
    bad = parser.parse_args(["audit", "--suite", "quick", "-k", "3"])
    assert cli_audit.handle(bad) == ("", 2)
    assert "do not combine it with -k" in capsys.readouterr().err
    bad = parser.parse_args(["audit", "--suite", "slow"])
    assert cli_audit.handle(bad) == ("", 2)
    assert "unknown suite 'slow'" in capsys.readouterr().err


def test_unknown_case_and_accountant() -> None:
    with pytest.raises(InvalidParameterError, match="unknown case.*'nope'"):
        audit_suite(cases=("nope",))
    with pytest.raises(InvalidParameterError, match="unknown accountant.*'nope'"):
        audit_suite(accountants=("nope",))


def test_libraries_on_native_noise_and_finite_pairs() -> None:
    pytest.importorskip("dp_accounting", reason="dp-accounting not installed (audit extra)")
    r = audit_suite(accountants=("pld_pessimistic", "rdp"), cases=FAST)
    assert r.sound
    for case in FAST:
        assert r.cell("pld_pessimistic", case)[0] == "sound"
        assert r.cell("rdp", case)[0] == "sound"
    # the reference is the Gaussian closed form (checked here in floats)
    row = next(
        x
        for x in r.rows
        if x.case == "gaussian sigma=1 x100" and x.quantity == "delta" and x.at == "30"
    )
    assert float(row.exact_lower) == pytest.approx(_gaussian_delta(10.0, 30.0), rel=1e-9)
    assert 0 < row.relative_error < 0.01  # the pessimistic PLD is a close upper bound


def test_rdp_on_subsampled_gaussian_and_laplace_is_sound_and_loose() -> None:
    pytest.importorskip("dp_accounting", reason="dp-accounting not installed (audit extra)")
    cases = ("poisson-subsampled gaussian q=0.01 sigma=1 x1000", "laplace b=1 x10")
    r = audit_suite(accountants=("rdp",), cases=cases)
    curve = [x for x in r.rows if x.quantity in ("delta", "epsilon")]
    assert curve and all(x.verdict == "sound" for x in curve)
    # the Renyi divergences it composes: the Laplace closed form rounded to the nearest
    # double (so some a few ulps low), the subsampled Gaussian's above the truth
    renyi = [x for x in r.rows if x.quantity == "renyi"]
    assert {x.at for x in renyi} >= {"1.5", "2", "256"}
    assert all(x.verdict in ("sound", "sound up to float rounding") for x in renyi)
    # RDP's conversion is loose: every delta it reports is above the enclosure's upper end
    deltas = [x for x in r.rows if x.quantity == "delta"]
    assert deltas and all(x.relative_error > 0.1 for x in deltas)


def test_a_case_of_ones_own(clean_registry) -> None:
    import dpcompose_exact as dx

    register(Shrunk())
    case = SuiteCase("g_sigma_half_x25", lambda: [(dx.gaussian_noise("1/2"), 25)], ("30",), ())
    r = audit_suite(accountants=("shrunk",), cases=[case])
    # 25 uses of sigma = 1/2 is G_10 as well: the toy's 0.99 * delta is 1% short
    assert r.cases == ("g_sigma_half_x25",)
    assert r.cell("shrunk", "g_sigma_half_x25") == ("UNSOUND", pytest.approx(-0.01, rel=1e-6))


class Inside(Adapter):
    """Reports, as an upper bound, the midpoint of the default loss grid's enclosure."""

    name = "inside"
    library = "math"
    distribution = "inside-accountant"
    forms = frozenset({"noise", "gaussian"})
    series = (Series("inside", Claim.UPPER, Claim.ESTIMATE),)

    def run(self, job: Job) -> dict[str, Any]:
        import dpcompose_exact as dx

        comp = dx.compose([(m, n) for m, n in job.items])
        mids = []
        for e in job.eps:
            lo, hi = (float(v) for v in comp.delta(repr(e)).interval(17))
            mids.append((lo + hi) / 2)
        return {"inside": (mids, [1.0] * len(job.deltas), [])}


def test_a_number_inside_the_grid_enclosure_gets_a_second_look(clean_registry) -> None:
    """Undecided on the default grid, decided on the finer one (either verdict)."""
    import dpcompose_exact as dx

    register(Inside())
    items = [(dx.gaussian_noise("1").subsample("1/10"), 3)]
    case = SuiteCase("subsampled gaussian q=1/10 x3", lambda: items, ("0.5",), ())
    r = audit_suite(accountants=("inside",), cases=[case])
    (row,) = [x for x in r.rows if x.quantity == "delta"]
    assert row.verdict in ("sound", "UNSOUND"), row
    # the midpoint of the first enclosure is outside the second (narrower) one
    assert not float(row.exact_lower) <= row.reported <= float(row.exact_upper)
    # the default grid alone could not decide it
    lo, hi = (float(v) for v in dx.compose(items).delta("0.5").interval(17))
    assert lo < row.reported < hi
