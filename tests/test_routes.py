"""Route choice (dpcompose_exact.engines.routes): by what was asked, with the reason."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dpcompose_exact.engines.bounds import Bounded
from dpcompose_exact.engines.certified import CertifiedRegion
from dpcompose_exact.engines.finiteroutes import ComposeOptions, choose_route, compose_routed
from dpcompose_exact.engines.genfunc import compose_plds
from dpcompose_exact.engines.results import delta_value, epsilon_value
from dpcompose_exact.errors import ResourceLimitError
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.tradeoff import Region, dp_region

PAPER = [("0.3", "0"), ("0.15", "0.02")]
THREE = [("log(2)", "1e-6"), ("log(3)-log(2)", "1e-4"), ("1/10", "0.01")]


def kinds(constraints, k):
    return [(canonical_pair(dp_region(constraints, warn=False)), k)]


@pytest.mark.parametrize("k", [100, 500, 5000])
def test_decimals_only_takes_the_certified_route(k):
    route, why = choose_route(kinds(PAPER, k), want_closed_forms=False)
    assert route == "certified"
    assert "decimals only" in why or "memory limit" in why


def test_closed_forms_take_the_exact_route_when_it_fits():
    route, why = choose_route(kinds(PAPER, 500), want_closed_forms=True)
    assert route == "exact" and "closed forms" in why
    route, why = choose_route(kinds(PAPER, 500), want_closed_forms=True, memory_limit=2**20)
    assert route == "certified" and "over the memory limit" in why


def test_tiny_problems_stay_exact():
    assert choose_route(kinds(PAPER, 3), want_closed_forms=False)[0] == "exact"


def test_several_generators_too_large_go_to_bounds():
    route, why = choose_route(kinds(THREE, 1000), want_closed_forms=False)
    assert route == "bounds" and "generators" in why
    with pytest.raises(ResourceLimitError, match="certified two-sided bounds"):
        compose_routed(kinds(THREE, 1000), ComposeOptions(closed_forms=False))
    region, used = compose_routed(
        kinds(THREE, 1000), ComposeOptions(closed_forms=False, allow_bounds=True)
    )
    assert isinstance(region, Bounded) and used.method == "bounds" and used.why == why


def test_certified_route_agrees_with_the_exact_route():
    """The decimals-only route prints the same certified digits as the exact region."""
    plds = kinds(PAPER, 150)
    result, used = compose_routed(plds, ComposeOptions(closed_forms=False))
    cert = result.region
    assert used.method == "certified" and isinstance(cert, CertifiedRegion)
    exact = compose_plds(plds)
    assert isinstance(exact, Region)
    for eps in ["0", "1", "5/2"]:
        assert delta_value(cert, eps).decimal(25) == delta_value(exact, eps).decimal(25)
    assert epsilon_value(cert, "1e-5").decimal(25) == epsilon_value(exact, "1e-5").decimal(25)


def run_cli(*args):
    out = subprocess.run(
        [sys.executable, "-m", "dpcompose_exact.cli", *args, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_cli_metadata_carries_method_and_why():
    got = run_cli("compose", "-k", "300", "--decimals-only")
    assert got["method"] == "certified" and "decimals only" in got["why"]
    got = run_cli("compose", "-k", "5")
    assert got["method"] == "exact" and "closed forms" in got["why"]
    got = run_cli("delta", "-k", "300", "--eps", "1")
    assert got["method"] == "certified"


def test_cli_prints_bounds_with_outward_interval():
    got = run_cli(
        "delta",
        *sum((["--dp", f"{e},{d}"] for e, d in THREE), []),
        "-k",
        "60",
        "--eps",
        "2",
        "--width",
        "1e-2",
    )
    assert got["method"] == "bounds"
    row = got["curve"][0]
    assert float(row["delta_lower"]) <= float(row["delta_upper"])
    assert float(row["relative_width"]) <= 1e-2


def test_api_closed_forms_keyword_routes_and_explains():
    from dpcompose_exact.api import compose

    c = compose(PAPER, 300, closed_forms=False)
    assert c.method == "certified" and "decimals only" in c.why
    assert compose(PAPER, 4, closed_forms=True).method == "exact"


def test_cli_table_shows_the_interval(capsys):
    from dpcompose_exact.cli.app import main

    dp = sum((["--dp", f"{e},{d}"] for e, d in THREE), [])
    assert main(["epsilon", *dp, "-k", "100", "--delta", "1/100", "--width", "1e-2"]) == 0
    out = capsys.readouterr().out
    assert "method bounds" in out and "[" in out and "]" in out
