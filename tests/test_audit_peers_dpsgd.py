"""The DP-SGD peers of the audit (Opacus, pld-accounting, random-allocation, riskcal, ...).

The peers: Opacus, pld-accounting, random-allocation, riskcal and pld-subsampling.

Each adapter is run on a small case and checked against an independent reference: the
analytic Gaussian curve and the Gaussian Renyi divergence (mpmath closed forms), the
trade-off function of mu-GDP (scipy), and the certified composition as a bracket where
no closed form exists (subsampled noise).
"""

from __future__ import annotations

import importlib
import math
import warnings
from typing import Any

import mpmath as mp
import pytest

import dpcompose_exact as dx
from dpcompose_exact.mechanisms.noise import gaussian_noise, laplace_noise
from dpcompose_exact.tools.audit import Claim, Job, Series, adapters, register
from dpcompose_exact.tools.audit.compare import run_adapter
from dpcompose_exact.tools.audit.peers import PeerAdapter
from dpcompose_exact.tools.audit.suite import audit_suite

NEW_PEERS = (
    "opacus",
    "pld_accounting_allocation",
    "pld_accounting_subsample",
    "random_allocation_local",
    "random_allocation_poisson",
    "riskcal",
    "pld_subsampling",
)


def _peer(name: str) -> Any:
    adapter = adapters.registry()[name]
    try:
        adapter.imported()
    except ImportError as exc:
        pytest.skip(str(exc))
    return adapter


def _job(items: list, eps=(), deltas=(), **kw: Any) -> Job:
    return Job(items, [float(e) for e in eps], [float(d) for d in deltas], {}, **kw)


def gaussian_delta(mu: Any, eps: Any) -> mp.mpf:
    """delta(eps) of mu-GDP at 30 digits (Dong, Roth and Su; independent of the package)."""
    with mp.workdps(30):
        mu, eps = mp.mpf(mu), mp.mpf(eps)
        return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


def gaussian_eps(mu: Any, delta: Any) -> mp.mpf:
    """eps(delta) of mu-GDP: the root of the decreasing analytic curve (bisection, mpmath)."""
    with mp.workdps(30):
        lo, hi = mp.mpf(0), mp.mpf(20) * mp.mpf(mu) + 20
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if gaussian_delta(mu, mid) > mp.mpf(delta) else (lo, mid)
        return hi


def _certified(items: list, delta: str) -> tuple[float, float]:
    value = dx.compose(items).epsilon(delta)
    return value.lower(), value.upper()


# ---- the registry -----------------------------------------------------------------------


def test_the_new_peers_are_registered_with_their_claims():
    reg = adapters.registry()
    assert set(NEW_PEERS) <= set(reg)
    claims = {s.name: (s.delta, s.epsilon) for n in NEW_PEERS for s in reg[n].series}
    assert claims["opacus_rdp"] == (None, Claim.UPPER)
    assert claims["opacus_prv"] == (None, Claim.UPPER)
    assert claims["opacus_gdp"] == (None, Claim.ESTIMATE)  # "can underestimate"
    assert claims["pld_accounting_allocation_lower"] == (None, Claim.LOWER)
    assert claims["riskcal"] == (None, Claim.UPPER)
    assert all(reg[n].peer for n in NEW_PEERS)


# ---- each adapter against an independent reference --------------------------------------


def test_opacus_full_batch_gaussian_against_the_analytic_curve_and_renyi():
    adapter = _peer("opacus")
    job = _job([(gaussian_noise(2), 10)], deltas=("1e-5",), orders=[2.0, 8.0])
    got = run_adapter(adapter, job)
    truth = gaussian_eps(mp.sqrt(10) / 2, "1e-5")
    rdp, prv = got["opacus_rdp"][1][0], got["opacus_prv"][1][0]
    assert truth <= prv <= rdp <= truth * 1.3  # both upper bounds, PRV the tighter
    # the Renyi divergence of 10 Gaussians of sigma 2 is 10 alpha / (2 sigma^2) exactly
    curve = dict(adapter.run_quantities(job)["opacus_rdp"]["renyi"])
    assert curve[2.0] == pytest.approx(10 * 2 / 8, rel=1e-12)
    assert curve[8.0] == pytest.approx(10 * 8 / 8, rel=1e-12)


def test_opacus_subsampled_gaussian_brackets_the_certified_value():
    adapter = _peer("opacus")
    item = gaussian_noise(1).subsample("0.01")
    got = run_adapter(adapter, _job([(item, 1000)], deltas=("1e-5",)))
    lo, hi = _certified([(item, 1000)], "1e-5")
    assert got["opacus_rdp"][1][0] > hi * 1.1  # RDP: sound and 15 % loose here
    assert hi <= got["opacus_prv"][1][0] <= hi * 1.01
    assert got["opacus_gdp"][1][0] < lo * 0.9  # the CLT estimate is 11.5 % short


def test_opacus_calibration_check_finds_the_gdp_calibration_short():
    pytest.importorskip("opacus")
    from dpcompose_exact.tools.audit.peers.opacus_adapter import calibration_check

    prv = calibration_check(1.0, 1e-5, 0.01, 1000, accountant="prv")
    gdp = calibration_check(1.0, 1e-5, 0.01, 1000, accountant="gdp")
    assert prv["meets"] and prv["certified"].upper() <= 1.0
    assert not gdp["meets"] and gdp["certified"].lower() > 1.05  # target 1.0, 5 % over
    assert gdp["sigma"] < prv["sigma"]


def test_pld_accounting_allocation_brackets_the_analytic_gaussian():
    adapter = _peer("pld_accounting_allocation")
    got = run_adapter(adapter, _job([(gaussian_noise(2), 10)], deltas=("1e-5",)))
    truth = gaussian_eps(mp.sqrt(10) / 2, "1e-5")
    assert got["pld_accounting_allocation_lower"][1][0] <= truth
    assert truth <= got["pld_accounting_allocation"][1][0] <= truth * 1.1


@pytest.mark.parametrize("name", ["pld_accounting_subsample", "pld_subsampling"])
@pytest.mark.parametrize("noise", [gaussian_noise(1), laplace_noise(1)])
def test_subsampled_plds_are_above_the_certified_lower_end(name, noise):
    adapter = _peer(name)
    item = noise.subsample("0.05")
    got = run_adapter(adapter, _job([(item, 20)], eps=("1",), deltas=("1e-5",)))
    lo, hi = _certified([(item, 20)], "1e-5")
    assert lo <= got[name][1][0] <= hi * 1.2
    dlo = dx.compose([(item, 20)]).delta("1").lower()
    assert got[name][0][0] >= dlo


def test_random_allocation_local_is_the_analytic_gaussian():
    adapter = _peer("random_allocation_local")
    got = run_adapter(adapter, _job([(gaussian_noise(2), 10)], eps=("1",), deltas=("1e-5",)))
    mu = mp.sqrt(10) / 2
    assert got["random_allocation_local"][0][0] == pytest.approx(
        float(gaussian_delta(mu, 1)), rel=1e-9
    )
    truth = gaussian_eps(mu, "1e-5")
    assert truth <= got["random_allocation_local"][1][0] <= truth + 1e-3  # its tolerance


def test_random_allocation_poisson_pld_and_rdp_bracket():
    adapter = _peer("random_allocation_poisson")
    item = gaussian_noise(1).subsample("0.01")
    got = run_adapter(adapter, _job([(item, 1000)], eps=("1",), deltas=("1e-5",)))
    lo, hi = _certified([(item, 1000)], "1e-5")
    pld = got["random_allocation_poisson_pld"][1][0]
    rdp = got["random_allocation_poisson_rdp"][1][0]
    assert lo <= pld <= hi * 1.001 and rdp > hi
    assert got["random_allocation_poisson_rdp"][0][0] >= got["random_allocation_poisson_pld"][0][0]


def test_random_allocation_poisson_rdp_needs_a_whole_number_of_selections():
    """Its delta(eps) takes the rate as num_selected / num_steps: a rate it cannot state is
    unsupported there (not a crash), and its PLD and eps(delta) still answer."""
    adapter = _peer("random_allocation_poisson")
    item = gaussian_noise(1).subsample("0.013")
    got = adapter.compute(_job([(item, 100)], eps=("1",), deltas=("1e-5",)))
    ds, es, notes = got["random_allocation_poisson_rdp"]
    assert math.isnan(ds[0]) and es[0] > 0
    assert notes[0].startswith("unsupported: Poisson_delta_RDP takes the rate")
    assert "q = 0.013 is not a multiple of 1/100" in notes[0]
    assert got["random_allocation_poisson_pld"][0][0] > 0


def test_riskcal_gaussian_eps_and_beta_against_closed_forms():
    from scipy.stats import norm

    adapter = _peer("riskcal")
    job = _job([(gaussian_noise(2), 10)], deltas=("1e-5",), alphas=[0.01, 0.1])
    got = run_adapter(adapter, job)
    truth = gaussian_eps(mp.sqrt(10) / 2, "1e-5")
    assert truth <= got["riskcal"][1][0] <= truth * 1.01
    mu = math.sqrt(10) / 2
    for alpha, beta in adapter.run_quantities(job)["riskcal"]["beta"]:
        exact = norm.cdf(norm.ppf(1 - alpha) - mu)  # G_mu(alpha)
        # close to G_mu; which side of it is the suite's verdict (a lower bound is claimed)
        assert beta == pytest.approx(exact, rel=1e-5)


# ---- reproductions ------------------------------------------------------------------------


def _cheap_case(name: str) -> list:
    if name in ("pld_accounting_subsample", "pld_subsampling", "random_allocation_poisson"):
        return [(gaussian_noise(1).subsample("0.01"), 100)]
    if name == "opacus":
        return [(gaussian_noise(1).subsample("0.01"), 100)]
    return [(gaussian_noise(2), 10)]


@pytest.mark.parametrize("name", NEW_PEERS)
def test_repro_source_recomputes_the_adapters_numbers(name):
    """Each number's script source, run here, binds the number the adapter reported."""
    adapter = _peer(name)
    job = Job(_cheap_case(name), [1.0], [1e-5], {}, orders=[2.0], alphas=[0.01])
    got = run_adapter(adapter, job)
    extra = adapter.run_quantities(job)
    checked = 0
    for s in adapter.series:
        numbers = {"delta": got[s.name][0], "epsilon": got[s.name][1]}
        for q in s.quantities():
            if q in numbers:
                pairs = list(zip(("1" if q == "delta" else "1e-5",), numbers[q]))
            else:
                pairs = [(repr(a), v) for a, v in extra[s.name][q]]
            for at, want in pairs:
                source = adapter.repro_source(job, s.name, q, at.removesuffix(".0"))
                assert source is not None and "dpcompose" not in source
                scope: dict[str, Any] = {}
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    exec(compile(source, f"<{name} {q}>", "exec"), scope)  # noqa: S102
                assert float(scope["reported"]) == pytest.approx(want, rel=1e-12)
                checked += 1
    assert checked


def test_peer_modules_are_one_file_each():
    peers = importlib.import_module("dpcompose_exact.tools.audit.peers")
    for module in (
        "opacus_adapter",
        "pld_accounting_adapter",
        "random_allocation_adapter",
        "riskcal_adapter",
        "pld_subsampling_adapter",
    ):
        assert module in peers.PEER_MODULES


class _SlowToy(PeerAdapter):
    """A peer marked ``quick = False`` that reports the analytic Gaussian (no library)."""

    name = "slow_toy"
    library = "math"
    distribution = "pytest"
    series = (Series("slow_toy", Claim.UPPER, None, "toy"),)
    forms = frozenset({"gaussian"})
    quick = False

    def compute(self, job: Job) -> Any:
        ds = [float(gaussian_delta(10, e)) for e in job.eps]
        return {"slow_toy": (ds, [math.nan] * len(job.deltas), [])}


def test_the_quick_suite_leaves_out_a_costly_peer_unless_named(clean_registry):
    for name in list(adapters.registry()):
        if name != "rdp":
            adapters.unregister(name)
    register(_SlowToy())
    r = audit_suite("quick", cases=["gaussian sigma=1 x100"])
    assert "slow_toy" not in r.accountants()
    assert dict(r.skipped)["slow_toy"].startswith("slow_toy is left out of the quick suite")
    named = audit_suite("quick", accountants=("slow_toy",), cases=["gaussian sigma=1 x100"])
    assert {row.verdict for row in named.rows} <= {"sound", "sound up to float rounding"}
    standard = audit_suite("standard", cases=["gaussian sigma=1 x100"])
    assert "slow_toy" in standard.accountants() and not standard.skipped
