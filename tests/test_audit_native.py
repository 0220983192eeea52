"""The audit through the libraries' own entry points, graded, classified and reproducible.

dp_accounting driven through its ``DpEvent``s (the self-composed randomized
response bug), autodp's ``get_eps`` at delta = 0, severity grades sorted, a matrix that
fits 120 columns, crashed rows classified with reproductions that exit 1, and the crashes
fixed in the adapters (opake's extension module, prv_accountant's ``PureDPMechanism``,
OpenDP's domain mismatch as unsupported).  References are closed forms computed here
with mpmath (never the code under test).
"""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
from typing import Any

import mpmath as mp
import pytest

from dpcompose_exact.tools.audit.failures import FAILURES, classify
from dpcompose_exact.tools.audit.matrix import WIDTH, maintainer_reports, matrix_table
from dpcompose_exact.tools.audit.suite import (
    SEVERITIES,
    SuiteReport,
    SuiteRow,
    audit_suite,
    family_of,
    severity,
)

RR = "randomized response p=0.5 x10"
PURE = "pure dp eps=1 x10"


def _rows(report: SuiteReport, series: str, quantity: str) -> dict[str, SuiteRow]:
    return {r.at: r for r in report.rows if r.accountant == series and r.quantity == quantity}


def rr_eps0(k: int, eps0: Any) -> mp.mpf:
    """eps(0) of k uses of an eps0-DP randomized response: k * eps0 (pure composition)."""
    with mp.workdps(30):
        return k * mp.mpf(eps0)


def test_dp_accounting_self_composed_randomized_response_is_flagged() -> None:
    """PLDAccountant ignores the count of SelfComposedDpEvent(RandomizedResponseDpEvent)."""
    pytest.importorskip("dp_accounting")
    r = audit_suite("standard", accountants=("dp_accounting_events",), cases=(RR,))
    pld = _rows(r, "pld_events", "epsilon")
    truth = rr_eps0(10, mp.log(3))  # 10 log 3 = 10.986...
    assert float(mp.mpf(pld["0"].exact_lower)) == pytest.approx(float(truth), rel=1e-12)
    # the library answers for one use, log 3: a tenth of the truth
    assert pld["0"].reported == pytest.approx(math.log(3), rel=1e-3)
    assert pld["0"].verdict == "UNSOUND" and pld["0"].severity == "material"
    assert pld["1e-5"].relative_error == pytest.approx(-0.9, abs=1e-3)
    # its RDP accountant reads the same tree and is sound
    assert {x.verdict for x in r.rows if x.accountant == "rdp_events"} == {"sound"}
    # the bug is the count: ten events composed one by one give the truth
    from dp_accounting import dp_event, privacy_accountant
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

    rel = privacy_accountant.NeighboringRelation.REPLACE_ONE
    acc = PLDAccountant(rel, value_discretization_interval=1e-4)
    acc.compose(dp_event.ComposedDpEvent([dp_event.RandomizedResponseDpEvent(0.5, 2)] * 10))
    assert acc.get_epsilon(1e-5) == pytest.approx(float(truth), rel=1e-3)


def test_dp_accounting_events_refusal_is_unsupported_with_the_librarys_words() -> None:
    pytest.importorskip("dp_accounting")
    case = "laplace b=1 x10 with randomized response p=0.5 x10"
    r = audit_suite("standard", accountants=("dp_accounting_events",), cases=(case,))
    pld = [x for x in r.rows if x.accountant == "pld_events"]
    assert {x.verdict for x in pld} == {"unsupported"}
    assert "`ADD_OR_REMOVE_ONE` or `REPLACE_SPECIAL` for `LaplaceDpEvent`" in pld[0].note


def test_autodp_get_eps_at_delta_zero_is_judged() -> None:
    """``DP_acct.get_eps(0)`` ("asking for pure DP") returns 0 for ten 1-DP mechanisms."""
    pytest.importorskip("autodp")
    r = audit_suite("standard", accountants=("autodp_kov",), cases=(PURE,))
    eps = _rows(r, "autodp_kov", "epsilon")
    assert mp.mpf(eps["0"].exact_lower) == rr_eps0(10, 1)
    assert eps["0"].reported == 0.0 and eps["0"].verdict == "UNSOUND"
    assert eps["0"].severity == "material" and eps["0"].relative_error == -1.0
    # the wrong eps(0) is not held against the later points (they are sound, not invalid)
    assert eps["1e-3"].verdict == "sound" and eps["1e-5"].verdict == "sound"


def test_severity_grades_and_their_order() -> None:
    assert severity("UNSOUND", -1.0) == "material"
    assert severity("UNSOUND", -1.01e-6) == "material"
    assert severity("UNSOUND", -1e-6) == "small"
    assert severity("UNSOUND", 2e-10) == "small"  # a lower bound too high: positive
    assert severity("UNSOUND", -5e-14) == "float accumulation"
    assert severity("UNSOUND", math.nan) == "material"  # the truth is 0 or infinite
    assert severity("sound up to float rounding", -1e-16) == "float rounding"
    assert severity("sound", 3.0) == "" and severity("crashed", math.nan) == ""
    assert SEVERITIES[:3] == ("material", "small", "float accumulation")


def _row(series: str, case: str, verdict: str, rel: float, claim: str = "upper bound") -> SuiteRow:
    return SuiteRow(
        series, series, "lib", "1", case, "delta", "1", 0.5, "1", "1", claim, verdict, rel
    )


def test_findings_are_sorted_by_severity_and_the_sign_is_explained() -> None:
    rows = (
        _row("a", "gaussian sigma=1 x100", "UNSOUND", -5e-14),
        _row("b", "gaussian sigma=1 x100", "invalid value", math.nan),
        _row("c", "gaussian sigma=1 x100", "UNSOUND", -1e-8),
        _row("d", "gaussian sigma=1 x100", "UNSOUND", -0.5),
        _row("e", "gaussian sigma=1 x100", "UNSOUND", 0.9, claim="lower bound"),
    )
    r = SuiteReport("custom", ("gaussian sigma=1 x100",), rows)
    assert [x.accountant for x in r.findings()] == ["e", "d", "c", "a", "b"]
    assert "positive is too high" in rows[4].sign_note
    assert "negative is a shortfall" in rows[3].sign_note


def test_the_matrix_fits_120_columns_for_every_standard_case_and_many_series() -> None:
    from dpcompose_exact.tools.audit.suite import SUITES

    cases = tuple(c.name for c in SUITES["standard"]())
    verdicts = ("UNSOUND", "sound", "crashed", "unsupported", "not checked")
    rows = tuple(
        _row(f"some_long_series_{i}", c, verdicts[(i + j) % 5], -0.123456 * 10 ** -(i % 12))
        for i in range(25)
        for j, c in enumerate(cases)
    )
    report = SuiteReport("standard", cases, rows)
    text = matrix_table(report)
    matrix = text.split("\n\n")[1].splitlines()
    assert len(matrix) == 2 + 25 and max(map(len, matrix)) <= WIDTH
    # everything above the findings fits, the header's long version list too
    long = [(f"library_with_a_long_name_{i}", "1.2.3") for i in range(12)]
    rows2 = tuple(dataclasses.replace(r, library=long[i % 12][0]) for i, r in enumerate(rows))
    text = matrix_table(dataclasses.replace(report, rows=rows2))
    assert max(map(len, text.split(" finding(s):")[0].splitlines())) <= WIDTH
    assert {family_of(c) for c in cases} >= {"gauss", "sub-gauss", "pure/rr", "mixed"}


def test_every_library_failure_reproduces_and_exits_1() -> None:
    """Each classified crash's script imports only its library and exits 1 while it fails."""
    for f in FAILURES:
        module = {"opake_accounting": "importlib.metadata"}.get(f.library, f.library)
        pytest.importorskip(module)
        out = subprocess.run(
            [sys.executable, "-I", "-c", f.repro], capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 1, (f.key, out.stdout, out.stderr[-1000:])
        assert "dpcompose_exact" not in f.repro
        assert classify(f.library, f.exception) is f, f.key


def test_crashed_rows_are_classified_in_the_suite() -> None:
    pytest.importorskip("prv_accountant")
    r = audit_suite("standard", accountants=("prv",), cases=("gaussian sigma=1 x100",))
    crashed = [x for x in r.rows if x.verdict == "crashed"]
    assert crashed and all(x.note.endswith("[library failure prv-small-delta]") for x in crashed)
    assert {x.at for x in crashed} == {"1e-10"}
    text = "\n".join(maintainer_reports(r, scripts=False))
    assert "**Crash `prv-small-delta`** (3 row(s))" in text


def test_prv_pure_dp_among_noise_uses_the_librarys_class() -> None:
    """Regression: Laplace with randomized response crashed (atoms failed the mean check)."""
    pytest.importorskip("prv_accountant")
    case = "laplace b=1 x10 with randomized response p=0.5 x10"
    r = audit_suite("standard", accountants=("prv",), cases=(case,))
    upper = [x for x in r.rows if x.accountant == "prv_upper"]
    assert upper and {x.verdict for x in upper} == {"sound"}


def test_opendp_mixed_domains_are_unsupported_with_its_words() -> None:
    pytest.importorskip("opendp")
    case = "laplace b=1 x10 with randomized response p=0.5 x10"
    r = audit_suite("standard", accountants=("opendp_zcdp", "opendp_pure"), cases=(case,))
    assert {x.verdict for x in r.rows} == {"unsupported"}
    assert all("All input domains must be the same" in x.note for x in r.rows)


# ---- the entry points named only by the libraries ----------------------------------------


def pure_delta(k: int, eps0: Any, eps: Any) -> mp.mpf:
    """delta(eps) of k uses of the eps0-DP randomized-response pair (binomial closed form)."""
    with mp.workdps(40):
        e0, e = mp.mpf(eps0), mp.mpf(eps)
        return (
            mp.fsum(
                mp.binomial(k, i) * max(0, mp.exp(e0 * (k - i)) - mp.exp(e + e0 * i))
                for i in range(k + 1)
            )
            / (1 + mp.exp(e0)) ** k
        )


def test_dp_accounting_discrete_laplace_event_is_judged() -> None:
    """``DiscreteLaplaceDpEvent`` through PLDAccountant; RdpAccountant refuses it itself."""
    pytest.importorskip("dp_accounting")
    from dpcompose_exact.tools.audit.adapters import get
    from dpcompose_exact.tools.audit.suite import SUITES, _job

    name = "discrete laplace a=1 sensitivity=1 x10"
    r = audit_suite("standard", accountants=("dp_accounting_events",), cases=(name,))
    pld = _rows(r, "pld_events", "delta")
    assert set(pld) == {"0.01", "3", "9"} and {x.verdict for x in pld.values()} == {"sound"}
    for at, row in pld.items():  # shift 1: the pair of the a-DP randomized response
        assert float(row.exact_lower) == pytest.approx(float(pure_delta(10, 1, at)), rel=1e-12)
    rdp = [x for x in r.rows if x.accountant == "rdp_events"]
    assert rdp and all(x.verdict == "unsupported" and "Unsupported event" in x.note for x in rdp)
    (case,) = [c for c in SUITES["standard"]() if c.name == name]
    source = get("dp_accounting_events").repro_source(
        _job(case, case.build(), {"pld_grid": 1e-4}), "pld_events", "delta", "3"
    )
    assert "dp_event.DiscreteLaplaceDpEvent(1.0, 1), 10)" in source


def test_dp_accounting_sampling_without_replacement_is_judged() -> None:
    """``SampledWithoutReplacementDpEvent`` under REPLACE_ONE: RdpAccountant's number is the
    library's own on that event (asked here directly), judged; PLDAccountant refuses it."""
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event
    from dp_accounting.privacy_accountant import NeighboringRelation
    from dp_accounting.rdp import RdpAccountant

    from dpcompose_exact.tools.audit.suite import SuiteCase, _gauss_shift

    native = ((("sampler", "without replacement"), ("n", "1000"), ("m", "10")),)
    name = "sampled-without-replacement gaussian m/n=10/1000 sigma=2 shift=2 x100"
    build = _gauss_shift("2", "2", 100, "1/100")
    case = SuiteCase(name, build, ("1",), ("1e-5",), native=native)
    r = audit_suite(accountants=("dp_accounting_events",), cases=[case])
    event = dp_event.SelfComposedDpEvent(
        dp_event.SampledWithoutReplacementDpEvent(1000, 10, dp_event.GaussianDpEvent(1.0)), 100
    )
    acc = RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE).compose(event)
    (eps,) = _rows(r, "rdp_events", "epsilon").values()
    assert eps.reported == acc.get_epsilon(1e-5) and eps.verdict == "sound"
    assert float(eps.exact_upper) < eps.reported  # a Renyi bound: sound and loose
    pld = [x for x in r.rows if x.accountant == "pld_events"]
    assert pld and all(x.verdict == "unsupported" and "REPLACE_ONE" in x.note for x in pld)


def test_prv_accountant_through_its_mechanism_classes() -> None:
    """``GaussianMechanism`` and ``ApproximateDPMechanism``: judged, with their scripts."""
    pytest.importorskip("prv_accountant")
    from dpcompose_exact.tools.audit.adapters import get
    from dpcompose_exact.tools.audit.suite import SUITES, _job

    cases = ("gaussian sigma=1 x100", "approximate dp eps=1 delta=1e-5 x50")
    r = audit_suite("standard", accountants=("prv_mechanisms",), cases=cases)
    gauss = {x.at: x for x in r.rows if x.case == cases[0] and x.quantity == "delta"}
    for at, row in gauss.items():  # mu = 10: the analytic Gaussian (eps_error 0.01 around it)
        with mp.workdps(30):
            mu, e = mp.mpf(10), mp.mpf(at)
            truth = mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2)
        assert row.verdict == "sound" and row.reported >= float(truth)
    approx = [x for x in r.rows if x.case == cases[1]]
    assert approx and "unsupported" not in {x.verdict for x in approx}
    adapter = get("prv_mechanisms")
    for case in (c for c in SUITES["standard"]() if c.name in cases):
        job = _job(case, case.build(), {"prv_eps_error": 1e-2, "prv_delta_error": 1e-9})
        source = adapter.repro_source(job, "prv_classes", "epsilon", "1e-3")
        gaussian = "prv.GaussianMechanism(noise_multiplier=1.0, l2_sensitivity=1.0)"
        approximate = "prv.ApproximateDPMechanism(epsilon=1.0, delta=1e-05)"
        want = gaussian if case.name == cases[0] else approximate
        assert want in source and "dpcompose" not in source


def test_a_stored_crash_note_keeps_its_classification() -> None:
    """Regression: a note read back from the store ends in ``[library failure KEY]``; the
    pattern of gdpnum's empty AssertionError was anchored at the end and missed it."""
    for f in FAILURES:
        assert classify(f.library, f"crashed: {f.exception} [library failure {f.key}]") is f
    assert classify("gdpnum", "crashed: AssertionError:  [library failure x]").key == (
        "gdpnum-tradeoff-order"
    )


# ---- the crashes of the standard matrix traced to the libraries ---------------------------

RR_1000 = "randomized response p=0.5 x1000"


def test_prv_crash_on_a_thousand_randomized_responses_is_the_librarys_truncated_mean() -> None:
    """prv_accountant's truncated mean of a step cdf misses the atoms on a wide domain.

    The mean of the eps = log 3 randomized-response pair is (3/4 - 1/4) log 3 (mpmath);
    the library's ``PrivacyRandomVariableTruncated.mean()`` on the domain its
    ``compute_safe_domain_size`` gives this pair is nowhere near it, hence its
    "Discrete mean differs from continuous mean" on the suite's case: 21 rows, each
    classified ``prv-truncated-mean``.
    """
    pytest.importorskip("prv_accountant")
    from prv_accountant.accountant import compute_safe_domain_size
    from prv_accountant.privacy_random_variables import PrivacyRandomVariableTruncated

    from dpcompose_exact.presentation.export import prv_from_atoms

    with mp.workdps(30):
        log3 = mp.log(3)
        mean = float((mp.mpf(3) / 4 - mp.mpf(1) / 4) * log3)
    pair = prv_from_atoms([str(-log3), str(log3)], ["0.25", "0.75"], 0.0)
    width = compute_safe_domain_size([pair], [1000], eps_error=0.01, delta_error=1e-9)
    assert 700 < width < 800  # the certified eps(1e-10) of the case is 731.56
    truncated = PrivacyRandomVariableTruncated(pair, -width, width)
    assert abs(truncated.mean() - mean) > 0.4  # quad misses the jump at -log 3
    assert pair.mean() == pytest.approx(mean, rel=1e-12)  # the pair's own mean is right
    r = audit_suite("standard", accountants=("prv",), cases=(RR_1000,))
    crashed = [x for x in r.rows if x.verdict == "crashed"]
    assert len(crashed) == 21 and len(r.rows) == 21
    assert all(x.note.endswith("[library failure prv-truncated-mean]") for x in crashed)
    assert all("Discrete mean differs from continuous mean" in x.note for x in crashed)


def test_opacus_prv_small_delta_refusal_is_classified_as_opacus_own() -> None:
    """Opacus vendors prv_accountant's code: its refusal of delta = 1e-15 is classified
    (the rule of prv_accountant's copy names that library only)."""
    note = (
        "crashed: eps at delta=1e-15: ValueError: Floating point errors will dominate for "
        "such small values of delta. Increase delta or reduce domain size."
    )
    found = classify("opacus", note)
    assert found is not None and found.key == "opacus-prv-small-delta"
    assert "from opacus" in found.repro and "prv_accountant" not in found.repro
    assert classify("prv_accountant", note).key == "prv-small-delta"
    assert classify("gdpnum", note) is None  # each library its own rule


def test_random_allocation_eps_zero_refusal_is_classified() -> None:
    """random-allocation's ``PrivacyParams`` refuses eps = 0: delta(0) of its local scheme."""
    pytest.importorskip("random_allocation")
    r = audit_suite("standard", accountants=("random_allocation_local",),
                    cases=("gaussian sigma=0.5 x1",))  # fmt: skip
    crashed = [x for x in r.rows if x.verdict == "crashed"]
    assert [(x.quantity, x.at) for x in crashed] == [("delta", "0")]
    assert crashed[0].note.endswith("[library failure random-allocation-eps-zero]")
    assert "epsilon must be positive, got 0.0" in crashed[0].note
    others = [x for x in r.rows if x.verdict != "crashed"]
    assert others and all(x.verdict in ("sound", "sound up to float rounding") for x in others)


def test_a_crash_stored_unclassified_is_classified_on_reading() -> None:
    """A cell computed before its failure was traced is classified when read back."""
    from dpcompose_exact.tools.audit.suite import _stored_row

    note = (
        "crashed: RuntimeError: Discrete mean differs from continuous mean significantly. "
        "[unclassified crash]"
    )
    record = dataclasses.asdict(_row("prv_upper", RR_1000, "crashed", math.nan))
    record.update(library="prv_accountant", note=note)
    row = _stored_row(record)
    assert row.note == note.replace("[unclassified crash]", "[library failure prv-truncated-mean]")
    record.update(library="some_library")  # still no rule: it stays unclassified
    assert _stored_row(record).note == note
    record.update(verdict="sound", note="")
    assert _stored_row(record) == SuiteRow(**record)


def test_the_conformance_page_has_no_unclassified_crash() -> None:
    """docs/conformance.md (the standard matrix): every crashed row has a reason."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "conformance.md").read_text("utf-8")
    assert "| accountant |" in page and "**Crash `prv-small-delta`**" in page
    assert "not yet classified" not in page and "[unclassified crash]" not in page
