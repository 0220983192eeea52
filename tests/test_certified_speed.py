"""The tilted-window route of the certified mode (large k) against the exact route.

The route is only taken for wide results; here it is forced at small k (``_DIRECT_WIDTH``
set to 0) so that every certified decimal can be compared with the exact closed forms.
"""

from __future__ import annotations

import pytest
from brute import compose_kinds

import dpcompose_exact.engines.certified as certified
from dpcompose_exact.engines.certified import compose_certified
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.specs import parse_mech_spec
from dpcompose_exact.regions.tradeoff import dp_region

PAPER = [("0.3", "0"), ("0.15", "0.02")]


@pytest.fixture
def tilted(monkeypatch):
    monkeypatch.setattr(certified, "_DIRECT_WIDTH", 0)
    calls = []
    orig = certified._tilted_power

    def counting(*args):
        calls.append(1)
        return orig(*args)

    monkeypatch.setattr(certified, "_tilted_power", counting)
    return calls


def _check_against_exact(specs, digits=30):
    kinds = [parse_mech_spec(s) for s in specs]
    exact, _ = compose_kinds(kinds, mode="exact")
    cert, method = compose_kinds(kinds, mode="certified", digits=digits)
    assert method == "certified"
    assert cert.losses == exact.losses
    dom = exact.domain
    for i, (d, ball) in enumerate(zip(exact.deltas, cert.deltas)):
        assert ball.overlaps(dom.elem_ball(d, 400))  # the ball contains the exact value
        assert cert.delta_decimal(i, digits) == dom.decimal(d, digits)
    return cert


@pytest.mark.parametrize(
    "specs",
    [
        ["0.3,0+0.15,0.02:1"],
        ["0.3,0+0.15,0.02:40"],
        ["0.3,0:25"],  # pure eps-DP: every other loss value is missing (parity gaps)
        ["0.3,0.01:30"],  # a leak
        ["0.5,0+0,0.1:12"],  # an eps = 0 (total variation) constraint
        ["1,1e-5+0.5,1e-3+0.1,0.05:6", "0.2,0.01:4"],  # several kinds, 3 constraints
        ["0.3,0+0.15,0.02:17", "0.45,1e-4:5", "0.15,0:9"],
    ],
)
def test_tilted_route_matches_exact(tilted, specs):
    _check_against_exact(specs)
    assert tilted  # the tilted route was taken


def test_many_narrow_windows_and_precision_doubling(tilted, monkeypatch):
    # very narrow windows: many tilts, some retries, and possibly a doubled precision
    monkeypatch.setattr(certified, "_TRIM_EXTRA", -12)
    _check_against_exact(["0.3,0+0.15,0.02:60"])
    assert len(tilted) > 3


def test_tilted_route_agrees_with_direct_route(tilted, monkeypatch):
    pld = canonical_pair(dp_region(PAPER))
    fast = compose_certified([(pld, 500)], digits=30)
    monkeypatch.setattr(certified, "_DIRECT_WIDTH", 10**9)
    slow = compose_certified([(pld, 500)], digits=30)
    assert fast.losses == slow.losses
    for i, (a, b) in enumerate(zip(fast.deltas, slow.deltas)):
        assert a.overlaps(b)
        assert fast.delta_decimal(i, 30) == slow.delta_decimal(i, 30)


def test_support_is_the_exact_sumset():
    # offsets {0, 1, 3, 4} (the paper's four atoms), 3 copies, and {0, 2} twice
    got = certified.sumset_support([([0, 1, 3, 4], 3), ([0, 2], 2)])
    a = {0}
    for offs, count in [([0, 1, 3, 4], 3), ([0, 2], 2)]:
        for _ in range(count):
            a = {x + s for x in a for s in offs}
    assert [n for n, b in enumerate(got) if b] == sorted(a)
    assert len(got) == max(a) + 1
