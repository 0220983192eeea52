"""The audit's adapter registry (dpcompose_exact.tools.audit.adapters): toy accountants.

The toy adapters need no third-party library: they report the exact value (computed by
dx.compose, an independent route from the audit's own exact curve) scaled by a factor.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

import dpcompose_exact as dx
from dpcompose_exact.cli import audit as cli_audit
from dpcompose_exact.errors import InvalidParameterError
from dpcompose_exact.regions.specs import MechanismKind
from dpcompose_exact.tools.audit import (
    ACCOUNTANTS,
    LIBRARY,
    SERIES,
    UPPER_BOUND_SERIES,
    Adapter,
    Claim,
    Job,
    Series,
    adapters,
    audit,
    register,
)

PAPER = (("0.3", "0"), ("0.15", "0.02"))
KINDS = [MechanismKind(PAPER, 5)]
# delta(0.3) and eps(1e-3) of five uses of the paper's mechanism (checked independently
# by dx.compose in test_toy_reports_scaled_exact_values)
DELTA_03 = 0.075027721047584443125
EPS_1E3 = 1.0454822917365165522




class Scaled(Adapter):
    """Reports the exact delta(eps) and eps(delta) times ``factor`` as an upper bound."""

    library = "math"
    distribution = "toy-accountant"

    def __init__(self, name: str = "toy", factor: float = 0.99, claim: Claim = Claim.UPPER):
        self.name = name
        self.factor = factor
        self.series = (Series(name, claim, claim, "a toy"),)

    def run(self, job: Job) -> dict[str, Any]:
        comp = dx.compose(list(job.items))
        ds = [float(comp.delta(repr(e)).decimal(20)) * self.factor for e in job.eps]
        es = [float(comp.epsilon(repr(d)).decimal(20)) * self.factor for d in job.deltas]
        return {self.name: (ds, es, [])}


class Crashing(Adapter):
    name = "crashing"
    library = "math"
    distribution = "crashing-accountant"
    series = (Series("crashing", Claim.UPPER, Claim.UPPER),)

    def run(self, job: Job) -> dict[str, Any]:
        raise RuntimeError("the library fell over\nsecond line")


class Garbage(Adapter):
    name = "garbage"
    library = "math"
    distribution = "garbage-accountant"
    series = (Series("garbage", Claim.UPPER, Claim.ESTIMATE),)

    def run(self, job: Job) -> dict[str, Any]:
        return {"garbage": ([math.nan, -0.5, 1.5], [math.nan], [])}


def _run(name: str) -> Any:
    return audit(KINDS, eps_grid=("0.3", "1", "2"), deltas=("1e-3",), accountants=(name,))


def test_builtin_names_come_from_the_registry() -> None:
    assert ACCOUNTANTS == ("pld_pessimistic", "pld_optimistic", "rdp", "prv")
    assert SERIES == {
        "pld_pessimistic": ("pld_pessimistic",),
        "pld_optimistic": ("pld_optimistic",),
        "rdp": ("rdp",),
        "prv": ("prv_lower", "prv_estimate", "prv_upper"),
    }
    assert UPPER_BOUND_SERIES == {"pld_pessimistic", "rdp", "prv_upper"}
    assert LIBRARY == {
        "pld_pessimistic": "dp_accounting",
        "pld_optimistic": "dp_accounting",
        "rdp": "dp_accounting",
        "prv": "prv_accountant",
    }
    reg = adapters.registry()
    assert reg["prv"].distribution == "prv-accountant"
    assert reg["pld_optimistic"].series[0].delta is Claim.ESTIMATE
    assert [a.tree_name for a in reg.values() if not a.peer] == ["pld", None, "rdp", "prv"]


def test_toy_reports_scaled_exact_values(clean_registry) -> None:
    register(Scaled("exact_toy", factor=1.0))
    r = audit(KINDS, eps_grid=("0.3",), deltas=("1e-3",), accountants=("exact_toy",))
    reported = {row.quantity: row.reported for row in r.rows}
    assert reported == pytest.approx({"delta": DELTA_03, "epsilon": EPS_1E3}, rel=1e-15)
    assert r.sound and {row.verdict for row in r.rows} <= {"sound", "sound up to float rounding"}


def test_registered_toy_upper_bound_below_the_truth_is_unsound(clean_registry, capsys) -> None:
    register(Scaled())
    r = _run("toy")
    assert not r.sound
    bad = r.unsound_rows()
    assert {x.verdict for x in bad} == {"UNSOUND"}
    # delta(0.3), delta(1) and eps(1e-3) are 1% short; delta(2) is 0 (eps above the
    # largest loss, 5 * 0.3 = 1.5), and 0.99 * 0 is still an upper bound
    assert [(x.quantity, x.at) for x in bad] == [
        ("delta", "0.3"),
        ("delta", "1"),
        ("epsilon", "1e-3"),
    ]
    assert [x.verdict for x in r.rows if x.at == "2"] == ["sound"]
    for row in bad:
        assert row.rel_error == pytest.approx(-0.01, rel=1e-9)
    assert r.versions == (("math", "unknown"),)
    # the CLI takes a registered name and exits 1
    parser = __import__("argparse").ArgumentParser()
    cli_audit.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["audit", "-k", "5", "--eps", "0.3", "--accountant", "toy"])
    out, code = cli_audit.handle(args)
    assert code == 1 and "UNSOUND" in out


def test_estimates_below_the_truth_are_not_checked(clean_registry) -> None:
    register(Scaled("toy_estimate", claim=Claim.ESTIMATE))
    r = _run("toy_estimate")
    assert r.sound and {x.verdict for x in r.rows} == {"not checked"}


def test_entry_point_adapter_is_loaded_and_judged(clean_registry, monkeypatch) -> None:
    import importlib.metadata as md

    class FakeEntryPoint:
        def __init__(self, name: str, value: str, obj: Any) -> None:
            self.name, self.value, self._obj = name, value, obj

        def load(self) -> Any:
            if isinstance(self._obj, Exception):
                raise self._obj
            return self._obj

    points = [
        FakeEntryPoint("plugged", "toy_pkg:Plugged", lambda: Scaled("plugged")),
        FakeEntryPoint("broken", "broken_pkg:adapter", ImportError("no module broken_pkg")),
    ]

    def entry_points(**kw: Any) -> list[FakeEntryPoint]:
        assert kw == {"group": "dpcompose_exact.accountants"}
        return points

    monkeypatch.setattr(md, "entry_points", entry_points)
    adapters.load_entry_points(force=True)
    assert "plugged" in adapters.names()
    assert "broken_pkg" in adapters.load_errors()["broken"]
    r = _run("plugged")
    assert not r.sound and {x.series for x in r.unsound_rows()} == {"plugged"}
    # by default every registered adapter runs; the broken entry point is a skipped row
    r = audit(KINDS, eps_grid=("0.3",), deltas=("1e-3",), accountants=("plugged", "broken"))
    assert "failed to load" in dict(r.skipped)["broken"]


def test_a_crash_is_a_row_not_an_exception(clean_registry) -> None:
    register(Crashing())
    r = _run("crashing")
    assert len(r.rows) == 4 and all(math.isnan(x.reported) for x in r.rows)
    assert {x.verdict for x in r.rows} == {"crashed"}
    assert r.rows[0].note == "crashed: RuntimeError: the library fell over"
    assert r.sound  # nothing was claimed


def test_invalid_values_are_rows(clean_registry) -> None:
    register(Garbage())
    r = _run("garbage")
    verdicts = [(x.quantity, x.at, x.verdict) for x in r.rows]
    assert verdicts == [
        ("delta", "0.3", "invalid value"),
        ("delta", "1", "UNSOUND"),  # a negative upper bound is below the truth
        ("delta", "2", "invalid value"),
        ("epsilon", "1e-3", "invalid value"),
    ]
    assert r.rows[0].note == "invalid value: nan"


def test_register_refuses_clashes(clean_registry) -> None:
    with pytest.raises(InvalidParameterError, match="'rdp' is registered already"):
        register(Scaled("rdp"))
    toy = Scaled("other")
    toy.series = (Series("prv_upper", Claim.UPPER, Claim.UPPER),)
    with pytest.raises(InvalidParameterError, match="series prv_upper of 'other' belong to 'prv'"):
        register(toy)
    with pytest.raises(InvalidParameterError, match="is not an Adapter"):
        register(object())  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="unknown accountant 'nope'"):
        adapters.get("nope")


class CrashingTree(Crashing):
    name = "crashing_tree"
    tree_name = "crashing_tree"
    series = (Series("crashing_tree", Claim.UPPER, Claim.UPPER),)

    def run_tree(self, job: Any) -> Any:
        raise FloatingPointError("overflow in the tree")


def test_a_tree_adapter_that_raises_gives_crashed_rows(clean_registry) -> None:
    d = pytest.importorskip("dp_accounting.dp_event")
    from dpcompose_exact.tools.audit import audit_events

    register(CrashingTree())
    tree = d.SelfComposedDpEvent(d.RandomizedResponseDpEvent(0.5, 2), 3)
    r = audit_events(tree, eps_grid=("1",), deltas=("1e-3",), accountants=("crashing_tree",))
    assert [x.verdict for x in r.rows] == ["crashed", "crashed"]
    assert r.rows[0].note == "crashed: FloatingPointError: overflow in the tree"
