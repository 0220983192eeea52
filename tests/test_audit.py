"""Audit of numeric accountants against the exact composition (dpcompose_exact.tools.audit)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import pytest

from dpcompose_exact.cli import audit as cli_audit
from dpcompose_exact.errors import InvalidParameterError
from dpcompose_exact.regions.specs import MechanismKind
from dpcompose_exact.tools.audit import (
    AccountantsMissingError,
    AuditReport,
    accountants,
    audit,
    audit_events,
    compare,
    events_to_kinds,
    pld_adapter,
)

PAPER = (("0.3", "0"), ("0.15", "0.02"))
EPS = ("0", "0.45", "1.5", "2.3", "3")
DELTAS = ("1e-3", "1e-5")


@pytest.fixture(scope="module")
def libs():
    pytest.importorskip("dp_accounting", reason="dp-accounting not installed (audit extra)")
    pytest.importorskip("prv_accountant", reason="prv-accountant not installed (audit extra)")


@pytest.fixture(scope="module")
def paper20(libs) -> AuditReport:
    return audit([MechanismKind(PAPER, 20)], eps_grid=EPS, deltas=DELTAS)


def _args(*argv: str):
    import argparse

    parser = argparse.ArgumentParser()
    cli_audit.add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["audit", *argv])


def test_paper_parameters_soundness(paper20: AuditReport) -> None:
    r = paper20
    assert r.method == "exact"
    assert r.sound
    assert set(r.series()) == {
        "pld_pessimistic",
        "pld_optimistic",
        "rdp",
        "prv_lower",
        "prv_estimate",
        "prv_upper",
    }
    for row in r.rows:
        assert row.upper_bound == (row.series in ("pld_pessimistic", "rdp", "prv_upper"))
        assert (row.sound is None) == (not row.upper_bound)
    # the pessimistic PLD is an upper bound with a small but nonzero error
    for q in ("delta", "epsilon"):
        err = r.max_rel_error("pld_pessimistic", q)
        assert 0 < err < 0.02
    pess = [x for x in r.rows if x.series == "pld_pessimistic"]
    assert all(x.abs_error > 0 and x.sound for x in pess)
    # the optimistic PLD lies below (reported, not an upper bound)
    assert all(x.abs_error < 0 for x in r.rows if x.series == "pld_optimistic")
    # RDP is sound but loose
    assert r.max_rel_error("rdp", "delta") > 0.1
    # exact values are the certified decimals of the exact curve
    assert r.exact_delta[0].startswith("0.342327")
    assert r.exact_eps[0].startswith("2.62213487")


def test_report_serializes(paper20: AuditReport) -> None:
    d = json.loads(json.dumps(paper20.as_dict()))
    assert d["sound"] is True
    assert d["versions"]["dp_accounting"]
    assert len(d["rows"]) == 6 * (len(EPS) + len(DELTAS))


def test_unsound_fake_accountant_is_flagged(libs, monkeypatch, capsys) -> None:
    real = pld_adapter.run_pld

    def shrunk(pairs, q, grid, pessimistic):
        d, e, notes = real(pairs, q, grid, pessimistic)
        return [x * 0.9 for x in d], [x * 0.9 for x in e], notes

    monkeypatch.setattr(pld_adapter, "run_pld", shrunk)
    r = audit(
        [MechanismKind(PAPER, 5)],
        eps_grid=("0.3",),
        deltas=("1e-3",),
        accountants=("pld_pessimistic",),
    )
    assert not r.sound
    assert {x.series for x in r.unsound_rows()} == {"pld_pessimistic"}
    out, code = cli_audit.handle(
        _args("-k", "5", "--eps", "0.3", "--delta", "1e-3", "--accountant", "pld_pessimistic")
    )
    assert code == 1
    assert "UNSOUND" in out


def test_lower_estimates_never_fail_the_audit(libs, monkeypatch) -> None:
    real = pld_adapter.run_pld

    def shrunk(pairs, q, grid, pessimistic):
        d, e, notes = real(pairs, q, grid, pessimistic)
        return [x * 0.5 for x in d], e, notes

    monkeypatch.setattr(pld_adapter, "run_pld", shrunk)
    r = audit(
        [MechanismKind(PAPER, 5)],
        eps_grid=("0.3",),
        deltas=("1e-3",),
        accountants=("pld_optimistic",),
    )
    assert r.sound and r.rows[0].rel_error < -0.4


def test_cli_table_json_plot(libs, tmp_path, capsys) -> None:
    fig = tmp_path / "audit.png"
    out, code = cli_audit.handle(
        _args(
            "--dp",
            "0.3,0",
            "--dp",
            "0.15,0.02",
            "-k",
            "5",
            "--eps",
            "0,0.6",
            "--delta",
            "1e-4",
            "--plot",
            str(fig),
        )
    )
    assert code == 0
    assert "pld_pessimistic" in out and "every number presented as an upper bound" in out
    assert fig.stat().st_size > 1000
    out, code = cli_audit.handle(
        _args(
            "--mech",
            "0.3,0+0.15,0.02:3",
            "--eps",
            "0.6",
            "--delta",
            "1e-4",
            "--accountant",
            "rdp",
            "--format",
            "json",
        )
    )
    assert code == 0
    data = json.loads(out)
    assert data["sound"] is True and {r["series"] for r in data["rows"]} == {"rdp"}


def test_cli_bad_input_exit_2(libs, capsys) -> None:
    out, code = cli_audit.handle(_args("--dp", "0.3,0", "-k", "0"))
    assert (out, code) == ("", 2)
    assert "positive integer" in capsys.readouterr().err
    out, code = cli_audit.handle(_args("--mech", "0.3,0:2", "-k", "3"))
    assert code == 2 and "do not combine" in capsys.readouterr().err


def test_dp_events_conversion(libs) -> None:
    from dp_accounting import NeighboringRelation, dp_event
    from dp_accounting.rdp import RdpAccountant

    ev = dp_event.SelfComposedDpEvent(
        dp_event.ComposedDpEvent(
            [
                dp_event.RandomizedResponseDpEvent(0.5, 2),
                dp_event.RandomizedResponseDpEvent(0.2, 4),
                dp_event.NoOpDpEvent(),
                dp_event.RandomizedResponseDpEvent(0.5, 2),
            ]
        ),
        3,
    )
    kinds = events_to_kinds(ev)
    assert kinds == [
        MechanismKind((("log(3)", "0"),), 6),
        MechanismKind((("0", "4/5"), ("log(17)", "0")), 3),
    ]
    # our RDP of the mapped pairs equals the library's RDP of the RR events (REPLACE_ONE)
    r = audit_events(ev, eps_grid=("1", "12"), deltas=("1e-5",), accountants=("rdp",))
    acc = RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    acc.compose(ev)
    want = [acc.get_delta(1.0), acc.get_delta(12.0), acc.get_epsilon(1e-5)]
    assert [x.reported for x in r.rows] == pytest.approx(want, rel=1e-9)
    assert r.sound


def test_epsilon_delta_event_duck_typed() -> None:
    # dp_accounting 0.6.0 has no EpsilonDeltaDpEvent; newer versions and look-alikes map
    @dataclass(frozen=True)
    class EpsilonDeltaDpEvent:
        epsilon: float
        delta: float

    @dataclass(frozen=True)
    class SelfComposedDpEvent:
        event: object
        count: int

    kinds = events_to_kinds(SelfComposedDpEvent(EpsilonDeltaDpEvent(0.3, 1e-5), 4))
    assert kinds == [MechanismKind((("3/10", "1/100000"),), 4)]  # the decimals, exactly


def test_unsupported_event_named(libs) -> None:
    from dp_accounting import dp_event

    with pytest.raises(InvalidParameterError, match="unsupported DpEvent UnsupportedDpEvent"):
        events_to_kinds(dp_event.ComposedDpEvent([dp_event.UnsupportedDpEvent()]))
    with pytest.raises(InvalidParameterError, match=r"sigma=1 .*has no \(eps, delta\) constraint"):
        events_to_kinds(dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(1.0)]))
    with pytest.raises(InvalidParameterError, match="composes no private mechanism"):
        events_to_kinds(dp_event.NoOpDpEvent())
    with pytest.raises(InvalidParameterError, match="non-private event"):
        events_to_kinds(dp_event.RandomizedResponseDpEvent(0.0, 2))


def test_unknown_accountant() -> None:
    with pytest.raises(InvalidParameterError, match="unknown accountant.*'lol'"):
        audit([MechanismKind(PAPER, 2)], accountants=("lol",))


def test_missing_extra_message(monkeypatch, capsys) -> None:
    def missing():
        raise ImportError("No module named 'dp_accounting'")

    monkeypatch.setitem(accountants._IMPORTERS, "dp_accounting", missing)
    monkeypatch.setitem(accountants._IMPORTERS, "prv_accountant", missing)
    with pytest.raises(AccountantsMissingError, match=r'pip install "\.\[audit\]"'):
        audit([MechanismKind(PAPER, 2)])
    out, code = cli_audit.handle(_args("-k", "2"))
    assert (out, code) == ("", 2)
    assert 'pip install ".[audit]"' in capsys.readouterr().err


def test_one_library_missing_is_skipped(libs, monkeypatch) -> None:
    def missing():
        raise ImportError("No module named 'prv_accountant'")

    monkeypatch.setitem(accountants._IMPORTERS, "prv_accountant", missing)
    r = audit([MechanismKind(PAPER, 2)], eps_grid=("0.3",), deltas=("1e-3",))
    assert dict(r.skipped)["prv"].startswith("prv-accountant is not installed")
    assert "prv_upper" not in r.series() and r.sound
    with pytest.raises(AccountantsMissingError, match="needs prv-accountant, which is not"):
        audit([MechanismKind(PAPER, 2)], eps_grid=("0.3",), strict=True)


def test_compare_edge_cases() -> None:
    cmp = compare._compare
    assert cmp(0.0, "0", True, 0.0) == (0.0, 0.0, True, False)
    assert cmp(math.inf, "inf", True, 0.0)[2] is True
    assert cmp(40.0, "inf", True, 0.0)[2] is False
    a, r, s, fr = cmp(0.1, "0.1", True, 0.0)  # the double 0.1 is above 1/10
    assert s is True and 0 < r < 1e-16 and not fr
    # the double 0.3 is below 3/10 by float rounding only: sound up to it, unsound if strict
    assert cmp(0.3, "0.3", True, 0.0)[2:] == (True, True)
    assert cmp(0.3, "0.3", True, 0.0, strict=True)[2:] == (False, True)
    assert cmp(0.29, "0.3", True, 0.0)[2] is False
    assert cmp(0.29, "0.3", True, 0.05)[2] is True
    assert cmp(math.nan, "0.3", True, 0.0)[2] is None


def test_float_rounding_is_not_unsound() -> None:
    cmp = compare._compare
    exact = "1.49999585363094102303729197544"
    below = 1.499995853630941  # the double just below (relative -7.5e-18)
    assert cmp(below, exact, True, 0.0)[2:] == (True, True)
    # 5 ulps below is more than float rounding: unsound
    far = below
    for _ in range(8):
        far = math.nextafter(far, 0.0)
    assert cmp(far, exact, True, 0.0)[2:] == (False, False)
    assert cmp(1.4999, exact, True, 0.0)[2:] == (False, False)


def test_cli_float_rounding_and_strict(libs, capsys) -> None:
    from dpcompose_exact.cli.app import main

    argv = ["audit", "--mech", "0.5,0:3", "--accountant", "pld_pessimistic"]
    code = main(argv)
    out = capsys.readouterr().out
    rounding = [ln for ln in out.splitlines() if "up to float rounding" in ln]
    if rounding:  # dp_accounting's PLD lands a few ulps below exact on this case
        assert code == 0 and "UNSOUND" not in out
        assert main([*argv, "--strict"]) == 1
        strict = capsys.readouterr().out
        assert "UNSOUND" in strict and "NO (float rounding)" in strict
        flagged = [ln.split() for ln in strict.splitlines() if "NO (float" in ln]
        assert all(f[3] != f[4] for f in flagged)  # reported and exact visibly differ
    else:
        assert code == 0
