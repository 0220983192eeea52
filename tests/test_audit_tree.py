"""``dpcompose audit --events`` and ``audit.audit_events``: the accountants' own accounting
of a DpEvent tree against its exact composition (dpcompose_exact.tools.audit.tree_audit)."""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import time
from pathlib import Path

import mpmath
import pytest

from dpcompose_exact.cli.app import main
from dpcompose_exact.errors import InvalidParameterError

pytest.importorskip("dp_accounting")
from dp_accounting import dp_event as d  # noqa: E402

from dpcompose_exact.integrations.dp_accounting import DpConstraintsEvent  # noqa: E402
from dpcompose_exact.tools.audit import (  # noqa: E402
    audit_events,
    event_from_json,
    event_to_json,
    format_event_table,
    load_events,
)


@pytest.fixture(autouse=True)
def _precision():
    with mpmath.workdps(50):
        yield


ROOT = Path(__file__).resolve().parent.parent
RR_EXAMPLE = ROOT / "examples" / "rr_selfcomposed.json"


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _rr_exact_eps(delta: str) -> mpmath.mpf:
    """eps(delta) of 10 x RR(noise 1/2, 2 buckets), by hand: only the top loss 10 ln 3 is
    above eps near the top, so delta(eps) = (3/4)^10 - e^eps (1/4)^10."""
    return mpmath.log(3**10 - mpmath.mpf(delta) * 4**10)


def test_rr_selfcomposed_example_default_command():
    code, out, _ = _run(["audit", "--events", str(RR_EXAMPLE)])
    assert code == 1
    eps_rows = [x.split() for x in out.splitlines() if x.startswith("pld_pessimistic  epsilon")]
    assert len(eps_rows) == 3 and all(r[-1] == "NO" for r in eps_rows)
    assert "#   pld_pessimistic (dp_accounting PLDAccountant): eps(delta = 1e-3)" in out


def test_rr_selfcomposed_example_is_flagged_unsound():
    event, relation = load_events(str(RR_EXAMPLE))
    assert event == d.SelfComposedDpEvent(d.RandomizedResponseDpEvent(0.5, 2), 10)
    assert relation is None
    code, out, _ = _run(["audit", "--events", str(RR_EXAMPLE), "--delta", "1e-5"])
    assert code == 1
    assert "UNSOUND" in out
    line = next(x for x in out.splitlines() if x.startswith("#   pld_pessimistic"))
    assert "PLDAccountant" in line and "eps(delta = 1e-5) reported 1.09869" in line
    exact = line.split("exact ")[1]
    assert abs(mpmath.mpf(exact) - _rr_exact_eps("1e-5")) < mpmath.mpf(10) ** -25
    # the RDP and PRV upper bounds on the same tree are sound
    code, out, _ = _run(
        ["audit", "--events", str(RR_EXAMPLE), "--accountant", "rdp", "--delta", "1e-5"]
    )
    assert code == 0 and "every number presented as an upper bound is one" in out


def test_rr_selfcomposed_json_report():
    code, out, _ = _run(
        [
            "audit",
            "--events",
            str(RR_EXAMPLE),
            "--format",
            "json",
            "--eps",
            "0",
            "--delta",
            "1e-5",
            "--accountant",
            "pld_pessimistic",
        ]
    )
    assert code == 1
    data = json.loads(out)
    assert data["sound"] is False and data["unsound"] == ["pld_pessimistic"]
    assert data["neighboring_relation"] == "REPLACE_ONE"
    rows = {(r["quantity"], r["at"]): r for r in data["rows"]}
    # delta(0) of the composition is its total variation: 1 - P(Binomial(10, 1/2) <= 5)
    # terms... computed here from the two product distributions (3/4, 1/4)^10, (1/4, 3/4)^10
    tv = sum(
        mpmath.binomial(10, j) * abs(mpmath.mpf(3) ** j - mpmath.mpf(3) ** (10 - j))
        for j in range(11)
    ) / (2 * 4**10)
    assert abs(mpmath.mpf(rows[("delta", "0")]["exact"]) - tv) < mpmath.mpf(10) ** -25
    assert rows[("delta", "0")]["reported"] == pytest.approx(0.5, abs=1e-3)  # one use's TV


def test_sound_tree_discrete_laplace():
    tree = d.ComposedDpEvent(
        [d.SelfComposedDpEvent(d.DiscreteLaplaceDpEvent(1.0, 1), 5), d.NoOpDpEvent()]
    )
    r = audit_events(tree, eps_grid=("0.5", "2"), deltas=("1e-5",), accountants=("pld", "rdp"))
    assert r.relation == "ADD_OR_REMOVE_ONE"
    assert {x.series for x in r.rows} == {"pld_pessimistic"}
    assert r.skipped == (("rdp", "RdpAccountant does not support the tree: Unsupported event."),)
    assert r.sound and all(x.sound for x in r.rows)


def test_sound_tree_without_self_composed_rr():
    # each RR event composed once: the PLD accountant's RR branch is right then
    tree = d.ComposedDpEvent(
        [d.RandomizedResponseDpEvent(0.5, 2), d.RandomizedResponseDpEvent(0.5, 2)]
    )
    r = audit_events(tree, eps_grid=("0", "1"), deltas=("1e-3",))
    assert {x.series for x in r.rows} >= {"pld_pessimistic", "rdp", "prv_upper"}
    assert r.sound and all(x.sound is not False for x in r.rows)


def test_versions_name_every_library_that_ran():
    pytest.importorskip("prv_accountant")
    tree = d.SelfComposedDpEvent(d.RandomizedResponseDpEvent(0.5, 2), 3)
    r = audit_events(tree, eps_grid=("1",), deltas=("1e-3",), accountants=("rdp", "prv"))
    assert [lib for lib, _ in r.versions] == ["dp_accounting", "prv_accountant"]
    assert {x.series for x in r.rows} == {"rdp", "prv_lower", "prv_estimate", "prv_upper"}


def test_unsupported_accountant_is_skipped_with_the_libraries_reason():
    tree = d.SelfComposedDpEvent(
        d.PoissonSampledDpEvent(0.1, DpConstraintsEvent([("log(3)", "0")])), 4
    )
    r = audit_events(tree, eps_grid=("0.5",), deltas=("1e-5",), accountants=("pld",))
    assert r.rows == ()
    assert r.skipped and "does not support the tree" in r.skipped[0][1]


def test_json_round_trip_of_a_tree():
    tree = d.ComposedDpEvent(
        [
            d.SelfComposedDpEvent(d.RandomizedResponseDpEvent(0.25, 4), 3),
            d.SampledWithoutReplacementDpEvent(
                100, 10, DpConstraintsEvent([("log(3)", "0"), ("log(2)", "1/100")])
            ),
        ]
    )
    data = json.loads(json.dumps(event_to_json(tree)))
    assert event_from_json(data) == tree


def test_json_reads_only_event_modules(tmp_path):
    with pytest.raises(InvalidParameterError, match="module_name 'os' is not read"):
        event_from_json({"module_name": "os", "class_name": "system"})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, out, err = _run(["audit", "--events", str(bad)])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "not JSON" in err
    code, _, err = _run(["audit", "--events", str(RR_EXAMPLE), "--dp", "1,0"])
    assert code == 2 and "do not combine it with --dp" in err


def test_huge_discrete_laplace_tree_is_one_line_on_stderr(tmp_path):
    # before: the exact pair of sensitivity 10^9 aborted the process inside FLINT
    tree = tmp_path / "dlap.json"
    event = d.SelfComposedDpEvent(d.DiscreteLaplaceDpEvent(1.0, 10**9), 3)
    tree.write_text(json.dumps(event_to_json(event)))
    start = time.process_time()
    code, out, err = _run(["audit", "--events", str(tree)])
    assert time.process_time() - start < 2.0
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert re.search(r"shift 1000000000: .*memory limit .*fits shifts up to \d+", err), err


def _nested(depth: int) -> object:
    """A randomized response inside ``depth`` nested one-item ComposedDpEvents."""
    event = d.RandomizedResponseDpEvent(0.5, 2)
    for _ in range(depth):
        event = d.ComposedDpEvent([event])
    return event


def test_a_tree_ten_thousand_levels_deep_is_refused_with_the_depth_limit():
    # before: the recursive walkers ended in "maximum recursion depth exceeded"
    from dpcompose_exact.integrations.events import (
        MAX_EVENT_DEPTH,
        event_composition,
        subsampled_mechanism,
    )
    from dpcompose_exact.tools.audit import events_to_kinds

    deep = _nested(10_000)
    sampled = d.SampledWithoutReplacementDpEvent(10, 1, deep)
    limit = rf"nested more than {MAX_EVENT_DEPTH} levels deep; the valid range is 1 to "
    start = time.process_time()
    for walk in (
        lambda: event_composition(deep, "REPLACE_ONE"),
        lambda: subsampled_mechanism(sampled, "REPLACE_ONE"),
        lambda: events_to_kinds(deep),
        lambda: audit_events(deep),
        lambda: event_to_json(deep),
    ):
        with pytest.raises(InvalidParameterError, match=limit + r"200 levels: flatten"):
            walk()
    assert time.process_time() - start < 2.0
    # at the limit the tree is still composed and audited (dp_accounting's walkers too)
    ok = _nested(MAX_EVENT_DEPTH - 1)
    assert event_composition(ok, "REPLACE_ONE").epsilon(0).decimal(6) == "1.09861"  # ln 3
    assert audit_events(ok, eps_grid=("1",), deltas=("1e-3",), accountants=("rdp",)).sound


def test_deep_event_files_are_one_line_on_stderr(tmp_path):
    leaf = '{"class_name": "RandomizedResponseDpEvent", "noise_parameter": 0.5, "num_buckets": 2}'
    for depth, why in (
        (300, r"the event is nested more than 200 levels deep"),
        (10_000, r"nested too deep for the JSON reader; an event tree may be 1 to 200 levels"),
    ):
        path = tmp_path / f"deep{depth}.json"
        head = '{"class_name": "ComposedDpEvent", "events": ['
        path.write_text(head * depth + leaf + "]}" * depth)
        code, out, err = _run(["audit", "--events", str(path)])
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert re.search(why, err), err


def test_gaussian_tree_against_the_analytic_curve():
    # all-Gaussian trees are audited against G_mu, mu^2 = 10 / 2^2, in ball arithmetic
    # (the front door's closed form); checked here with mpmath's normal cdf
    tree = d.SelfComposedDpEvent(d.GaussianDpEvent(2.0), 10)
    r = audit_events(tree, eps_grid=("0.5",), deltas=("1e-5",), accountants=("pld", "rdp"))
    assert r.method == "certified" and r.sound
    mu = mpmath.sqrt(mpmath.mpf(10) / 4)

    def delta(eps: mpmath.mpf) -> mpmath.mpf:
        return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)

    want = delta(mpmath.mpf("0.5"))
    assert abs(mpmath.mpf(r.exact_delta[0]) - want) < want * mpmath.mpf(10) ** -28
    eps = mpmath.mpf(r.exact_eps[0])
    assert abs(delta(eps) - mpmath.mpf("1e-5")) < mpmath.mpf(10) ** -30
    pld_eps = next(x for x in r.rows if x.series == "pld_pessimistic" and x.quantity == "epsilon")
    assert pld_eps.reported >= float(eps) and pld_eps.sound


def test_subsampled_tree_is_audited_against_certified_bounds():
    """A Poisson-subsampled Gaussian tree goes through the noise grid: the report holds
    two-sided bounds, RDP is sound, and no PLD row is called unsound while it lies in the
    bracket.  Independent check: every bracket meets dp_accounting's own optimistic and
    pessimistic PLD values (the truth lies between those two)."""
    from dp_accounting.pld import privacy_loss_distribution as pl

    tree = d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.1, d.GaussianDpEvent(1.0)), 20)
    r = audit_events(tree, eps_grid=("0.5", "1"), deltas=("1e-5",), accountants=("pld", "rdp"))
    assert r.method == "bounds" and r.relation == "ADD_OR_REMOVE_ONE" and r.sound
    assert all(x.sound is True for x in r.rows if x.series == "rdp")
    assert all(x.sound is not False for x in r.rows)
    brackets = {}
    for x in r.rows:
        if x.series == "pld_pessimistic":
            lo, hi = (float(v) for v in re.findall(r"\[(\S+), (\S+)\]", x.note)[0])
            assert float(x.exact) == lo <= hi < lo * (1 + 1e-4)
            brackets[(x.quantity, x.at)] = (lo, hi)
    assert len(brackets) == 3
    for pessimistic in (True, False):
        pld = pl.from_gaussian_mechanism(
            1.0,
            sampling_prob=0.1,
            pessimistic_estimate=pessimistic,
            value_discretization_interval=1e-4,
        ).self_compose(20)
        for eps in ("0.5", "1"):
            lo, hi = brackets[("delta", eps)]
            value = pld.get_delta_for_epsilon(float(eps))
            assert value >= lo * (1 - 1e-9) if pessimistic else value <= hi * (1 + 1e-9)


def test_prv_reads_a_laplace_event_with_its_loss_bound():
    # before: LaplaceMechanism(mu) got the scale b where prv_accountant's mu is the loss
    # bound sensitivity / b; its estimate of a Laplace tree was twice the true delta
    pytest.importorskip("prv_accountant")
    tree = d.ComposedDpEvent(
        [d.SelfComposedDpEvent(d.GaussianDpEvent(2.0), 5), d.LaplaceDpEvent(3.0)]
    )
    r = audit_events(tree, eps_grid=("1",), deltas=("1e-5",), accountants=("prv",))
    for row in r.rows:
        if row.series == "prv_estimate":
            assert abs(row.rel_error) < 1e-2, row


def _subsampled_gaussian_delta(q: str, eps: str) -> mpmath.mpf:
    """delta(eps) of a Poisson-subsampled Gaussian (sigma 1, add or remove one), by quadrature
    free closed form: the remove direction, whose loss is increasing in the outcome (the add
    direction gives 0 for eps > -log(1 - q))."""
    qq, e = mpmath.mpf(q), mpmath.mpf(eps)
    x = mpmath.mpf(1) / 2 + mpmath.log((mpmath.exp(e) - (1 - qq)) / qq)
    tail = lambda t: mpmath.erfc(t / mpmath.sqrt(2)) / 2  # noqa: E731
    return (1 - qq) * tail(x) + qq * tail(x - 1) - mpmath.exp(e) * tail(x)


def test_one_use_is_audited_against_its_certified_closed_form():
    tree = d.PoissonSampledDpEvent(0.01, d.GaussianDpEvent(1.0))
    truth = _subsampled_gaussian_delta("0.01", "2")
    r = audit_events(tree, eps_grid=("2",), deltas=("1e-5",), accountants=("pld",))
    assert r.method == "certified"
    assert mpmath.almosteq(mpmath.mpf(r.exact_delta[0]), truth, rel_eps=1e-25)


def test_enclosure_is_printed_as_an_enclosure_not_as_the_exact_value(monkeypatch):
    # before: the lower end 1.59359842e-12 of the enclosure was printed as "exact" (30
    # digits) for a true delta(2) = 1.72484212e-12, and the PLD number was "off" by 8%.
    # The tiny delta(2) now comes back with a small relative width (tilted folds), so PLD's
    # pessimistic value is judged against it; at eps = 0.01 PLD's value lies inside the
    # enclosure: undecided.  One use has a closed form now: the loss grid is asked for here
    # (the route of more uses), to check how an enclosure is printed
    from dpcompose_exact.engines import oneuse

    monkeypatch.setattr(oneuse, "one_use_part", lambda pair: None)
    tree = d.PoissonSampledDpEvent(0.01, d.GaussianDpEvent(1.0))
    truth = _subsampled_gaussian_delta("0.01", "2")
    assert abs(truth - mpmath.mpf("1.72484212e-12")) < mpmath.mpf("1e-20")
    r = audit_events(tree, eps_grid=("0.01", "2"), deltas=("1e-5",), accountants=("pld", "rdp"))
    assert r.method == "bounds"
    lo, hi = mpmath.mpf(r.exact_delta[1]), mpmath.mpf(r.exact_delta_upper[1])
    assert lo <= truth <= hi and lo < hi and (hi - lo) / truth < 1e-3
    data = r.as_dict()
    entry = data["exact"]["delta"][0]
    assert entry["delta"] is None and (entry["delta_lower"], entry["delta_upper"]) == (
        r.exact_delta[0],
        r.exact_delta_upper[0],
    )
    lo0, hi0 = mpmath.mpf(r.exact_delta[0]), mpmath.mpf(r.exact_delta_upper[0])

    def row_at(series: str, at: str):
        return next(
            x for x in r.rows if x.series == series and x.quantity == "delta" and x.at == at
        )

    pld = row_at("pld_pessimistic", "0.01")
    assert pld.is_enclosure and lo0 <= pld.reported <= hi0
    assert pld.verdict == "undecided" and math.isnan(pld.rel_error)
    pld2 = row_at("pld_pessimistic", "2")  # above the enclosure: sound
    assert pld2.verdict == "sound" and pld2.reported >= hi
    row = next(x for x in data["rows"] if x["series"] == "pld_pessimistic")
    assert row["exact"] is None and row["verdict"] == "undecided"
    assert row["exact_lower"] == r.exact_delta[0] and row["exact_upper"] == r.exact_delta_upper[0]
    rdp = row_at("rdp", "2")
    # far above the enclosure: sound, its error measured against the upper end
    assert rdp.verdict == "sound"
    assert rdp.rel_error == pytest.approx(float(rdp.reported / hi - 1), rel=1e-9)
    assert data["undecided"] == ["pld_pessimistic"]
    table = format_event_table(r)
    assert r.exact_delta[0] not in table  # not the 30-digit lower end as "exact"
    assert re.search(r"\[0\.0019002\d*, 0\.0019002\d*\]", table) and "undecided" in table
    # (an enclosure within the delta goal, 1e-3 relative: its digits are the route's)
    assert re.search(r"\[1\.72\d*e-12, 1\.72\d*e-12\]", table)


@pytest.mark.parametrize(
    ("reported", "verdict", "rel"),
    [
        (0.9, "UNSOUND", 0.9 / 1.0 - 1),  # below the lower end
        (1.5, "undecided", math.nan),  # inside the enclosure
        (2.0, "sound", 0.0),  # at the upper end
        (3.0, "sound", 0.5),  # above it: error against the upper end
    ],
)
def test_an_upper_bound_is_judged_against_both_ends(reported, verdict, rel):
    from dpcompose_exact.tools.audit.tree_audit import _row

    row = _row("x", "epsilon", "1e-5", reported, ("1", "2"), True, 0.0, False, "")
    assert row.verdict == verdict and row.exact_upper == "2"
    if math.isnan(rel):
        assert math.isnan(row.rel_error)
    else:
        assert row.rel_error == pytest.approx(rel)
