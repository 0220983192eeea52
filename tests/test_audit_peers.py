"""Adapters of other projects' accountants (dpcompose_exact/tools/audit/peers/).

Each adapter runs its library on one case and is checked against an independent reference
(mpmath closed forms, scipy, dp_accounting at a fine grid); the verdict mechanics (crash,
time limit, invalid and non-monotone values, numbers a library does not report) are tested
with toy adapters that need no library.
"""

from __future__ import annotations

import importlib
import math
import time
from typing import Any

import mpmath as mp
import pytest

from dpcompose_exact import api
from dpcompose_exact.mechanisms.noise import gaussian_noise, laplace_noise
from dpcompose_exact.tools.audit import ACCOUNTANTS, Claim, Job, Series, adapters, register
from dpcompose_exact.tools.audit.compare import run_adapter
from dpcompose_exact.tools.audit.peers import PeerAdapter, run_with_time_limit
from dpcompose_exact.tools.audit.suite import SuiteCase, audit_suite, non_monotone

PEERS = (
    "opendp_zcdp",
    "opendp_pure",
    "opake",
    "autodp_rdp",
    "autodp_kov",
    "autodp_afa",
    "gdpnum",
    "fourier",
    "dp_accelerator",
)




def gaussian_delta(mu: Any, eps: Any) -> mp.mpf:
    """delta(eps) of mu-GDP at 30 digits (the analytic Gaussian, independent reference)."""
    with mp.workdps(30):
        mu, eps = mp.mpf(mu), mp.mpf(eps)
        return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


def bisect(f: Any, lo: Any, hi: Any) -> mp.mpf:
    """The root of a decreasing ``f`` in ``[lo, hi]`` (bisection at 30 digits)."""
    with mp.workdps(30):
        lo, hi = mp.mpf(lo), mp.mpf(hi)
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        return hi


def gaussian_eps(mu: Any, delta: Any) -> mp.mpf:
    """eps(delta) of mu-GDP (root of the analytic curve)."""
    return bisect(lambda e: gaussian_delta(mu, e) - mp.mpf(delta), 0, 20 * mu + 20)


def rr_delta(eps0: Any, k: int, eps: Any) -> mp.mpf:
    """delta(eps) of k uses of an eps0-DP randomized response (binomial sum)."""
    with mp.workdps(30):
        e0, eps = mp.mpf(eps0), mp.mpf(eps)
        p = mp.exp(e0) / (1 + mp.exp(e0))
        total = mp.mpf(0)
        for j in range(k + 1):
            loss = (2 * j - k) * e0
            if loss > eps:
                total += mp.binomial(k, j) * p**j * (1 - p) ** (k - j) * (1 - mp.exp(eps - loss))
        return total


def _job(items, eps=(), deltas=()):
    return Job(items, [float(e) for e in eps], [float(d) for d in deltas], {})


def _peer(name: str) -> Any:
    return adapters.registry()[name]


def _need(module: str) -> None:
    """Skip when ``module`` is missing or fails to import (opake on some Pythons)."""
    try:
        importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001 - any import failure means: cannot test here
        pytest.skip(f"{module} does not import: {type(exc).__name__}: {exc}")


# ---- the registry ------------------------------------------------------------------------


def test_the_registry_lists_every_peer_but_the_builtin_names_stay():
    reg = adapters.registry()
    assert set(PEERS) <= set(reg)
    assert ACCOUNTANTS == ("pld_pessimistic", "pld_optimistic", "rdp", "prv")
    assert all(reg[n].peer for n in PEERS) and not any(reg[n].peer for n in ACCOUNTANTS)
    for n in PEERS:
        a = reg[n]
        assert a.library and a.distribution and a.series and a.forms
        for s in a.series:  # every claim says what the library presents its number as
            assert set(s.quantities()) & {"delta", "epsilon"}  # None: not reported
            assert {s.claim(q) for q in s.quantities()} <= set(Claim)


def test_the_audit_of_kinds_runs_peers_only_when_named():
    from dpcompose_exact.regions.specs import MechanismKind
    from dpcompose_exact.tools.audit import audit

    kind = MechanismKind((("0.5", "0"),), 3)
    r = audit([kind], eps_grid=("0.5",), deltas=("1e-3",))
    assert not {row.series for row in r.rows} & set(PEERS)


# ---- each adapter against an independent reference --------------------------------------


def test_opendp_zcdp_gaussian_is_between_the_truth_and_the_classical_conversion():
    _need("opendp")
    got = run_adapter(_peer("opendp_zcdp"), _job([(gaussian_noise(1), 100)], ["10"], ["1e-3"]))
    (d,), (e,), notes = got["opendp_zcdp"]
    assert not notes
    rho = 100 / 2  # 100 uses of sigma = 1: rho = k / (2 sigma^2)
    assert float(gaussian_delta(10, 10)) <= d <= 1
    assert float(gaussian_eps(10, "1e-3")) <= e <= rho + 2 * math.sqrt(rho * math.log(1e3))


def test_opendp_pure_laplace_is_k_over_b():
    _need("opendp")
    got = run_adapter(_peer("opendp_pure"), _job([(laplace_noise(2), 10)], ["1"], ["1e-3"]))
    assert got["opendp_pure"][1] == [pytest.approx(10 / 2, rel=1e-12)]


def test_opendp_randomized_response_computes_its_own_eps():
    _need("opendp")
    got = run_adapter(
        _peer("opendp_pure"), _job([(api.randomized_response("1/2"), 10)], ["1"], ["1e-3"])
    )
    assert got["opendp_pure"][1][0] == pytest.approx(10 * math.log(3), rel=1e-9)


def test_opake_gaussian_against_the_analytic_gaussian():
    # driven through its extension module: opake.accounting does not import on 3.11
    _need("dpcompose_exact.tools.audit.peers.opake_adapter")
    from dpcompose_exact.tools.audit.peers.opake_adapter import native

    try:
        native()
    except ImportError as exc:
        pytest.skip(f"opake-accounting's extension is not installed: {exc}")
    got = run_adapter(_peer("opake"), _job([(gaussian_noise(1), 100)], ["10"], ["1e-3"]))
    (d,), (e,), _ = got["opake"]
    assert d == pytest.approx(float(gaussian_delta(10, 10)), rel=1e-4)
    assert e == pytest.approx(float(gaussian_eps(10, "1e-3")), rel=1e-4)


def test_opake_runs_although_its_python_package_fails_to_import():
    """Regression: 78 crashed rows on Python 3.11 (the package's import raises TypeError)."""
    try:
        importlib.import_module("opake.accounting")
    except ImportError:
        pytest.skip("opake-accounting is not installed")
    except Exception:  # noqa: BLE001 - the case under test: installed, fails to import
        from dpcompose_exact.tools.audit.failures import classify

        got = run_adapter(_peer("opake"), _job([(gaussian_noise(1), 2)], ["1"], ["1e-3"]))
        assert math.isfinite(got["opake"][0][0]) and not got["opake"][2]
        # the failure of the import itself is classified, with a reproduction exiting 1
        f = classify("opake_accounting", "TypeError: __weakref__ slot disallowed")
        assert f is not None and f.key == "opake-import"
        return
    pytest.skip("opake.accounting imports here")


def test_autodp_rdp_gaussian_is_between_the_truth_and_the_rdp_bound():
    _need("autodp")
    got = run_adapter(_peer("autodp_rdp"), _job([(gaussian_noise(1), 100)], ["30"], ["1e-3"]))
    (d,), (e,), _ = got["autodp_rdp"]
    # the classical RDP bound: min over alpha of k alpha / (2 sigma^2) + log(1/delta)/(alpha-1)
    classic = min(
        100 * a / 2 + math.log(1e3) / (a - 1) for a in (1 + i / 100 for i in range(1, 2000))
    )
    assert float(gaussian_eps(10, "1e-3")) <= e <= classic
    assert float(gaussian_delta(10, 30)) <= d <= 1


def test_autodp_kov_is_above_the_exact_composition_and_below_k_eps():
    _need("autodp")
    mech = api.Mechanism([("0.1", "0")])
    got = run_adapter(_peer("autodp_kov"), _job([(mech, 100)], ["1"], ["1e-3"]))
    (e,) = got["autodp_kov"][1]
    # the exact composition: eps where the binomial delta reaches 1e-3
    exact = bisect(lambda x: rr_delta("0.1", 100, x) - mp.mpf("1e-3"), 0, 10)
    assert float(exact) <= e <= 10.0 + 1e-12


def test_autodp_afa_gaussian_matches_at_moderate_eps():
    _need("autodp")
    got = run_adapter(_peer("autodp_afa"), _job([(gaussian_noise(1), 100)], ["10"], []))
    assert got["autodp_afa"][0][0] == pytest.approx(float(gaussian_delta(10, 10)), rel=1e-6)


def test_gdpnum_mu_curve_and_its_closed_form():
    from scipy.stats import norm

    from dpcompose_exact.tools.audit.peers.gdpnum_adapter import gdp_delta, gdp_epsilon

    # our mpmath closed form against scipy's floats, and the inverse
    want = norm.cdf(-0.5 / 1.3 + 0.65) - math.exp(0.5) * norm.cdf(-0.5 / 1.3 - 0.65)
    assert gdp_delta(1.3, 0.5) == pytest.approx(want, rel=1e-12)
    assert gdp_delta(1.3, gdp_epsilon(1.3, 1e-5)) <= 1e-5
    _need("gdpnum")
    got = run_adapter(_peer("gdpnum"), _job([(gaussian_noise(1), 100)], ["10"], ["1e-3"]))
    mu = float(got["gdpnum_mu"][2][0].split()[2].rstrip(","))
    assert mu == pytest.approx(10.0, rel=1e-4)  # 100 uses of sigma = 1: exactly 10-GDP
    assert got["gdpnum"][1][0] == pytest.approx(float(gaussian_eps(10, "1e-3")), rel=1e-4)


def test_fourier_subsampled_gaussian_against_dp_accounting_at_a_fine_grid():
    _need("fourier_accountant")
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    mech = gaussian_noise(2).subsample("0.05")
    got = run_adapter(_peer("fourier"), _job([(mech, 50)], ["0.5"], []))
    ref = pld.from_gaussian_mechanism(
        2.0, sampling_prob=0.05, value_discretization_interval=1e-4
    ).self_compose(50)
    assert got["fourier"][0][0] == pytest.approx(ref.get_delta_for_epsilon(0.5), rel=2e-2)


def test_fourier_without_subsampling_is_a_crashed_row():
    _need("fourier_accountant")
    got = run_adapter(_peer("fourier"), _job([(gaussian_noise(1), 10)], ["0", "1"], ["1e-3"]))
    # each query keeps its own exception: eps = 0 is refused, q = 1 overflows
    assert got["fourier"][2][0].startswith("delta at eps=0: ValueError: target_eps")
    assert got["fourier"][2][1].startswith("delta at eps=1: OverflowError")
    r = audit_suite("standard", accountants=("fourier",), cases=["gaussian sigma=0.5 x1"])
    assert {x.verdict for x in r.rows} == {"crashed"}
    keys = {x.note.rsplit("[library failure ", 1)[-1] for x in r.rows}
    assert keys == {"fourier-eps-zero]", "fourier-no-subsampling]"}


def test_dp_accelerator_is_above_an_optimistic_pld():
    _need("dp_accelerator")
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    mech = gaussian_noise(1).subsample("0.01")
    got = run_adapter(_peer("dp_accelerator"), _job([(mech, 1000)], ["1"], ["1e-5"]))
    (e,) = got["dp_accelerator"][1]
    low = pld.from_gaussian_mechanism(
        1.0, sampling_prob=0.01, pessimistic_estimate=False, value_discretization_interval=1e-4
    ).self_compose(1000)
    assert low.get_epsilon_for_delta(1e-5) <= e <= 1.5 * low.get_epsilon_for_delta(1e-5)


# ---- verdict mechanics with toy adapters ------------------------------------------------


class Toy(PeerAdapter):
    """Reports what ``behaviour`` gives: the analytic Gaussian of G_10 by default."""

    name = "toy_peer"
    library = "math"
    distribution = "pytest"  # installed wherever the tests run
    forms = frozenset({"gaussian"})
    series = (Series("toy_peer", Claim.UPPER, None),)

    def __init__(self, behaviour: str = "good") -> None:
        self.behaviour = behaviour

    def compute(self, job: Job) -> dict[str, Any]:
        if self.behaviour == "raise":
            raise ZeroDivisionError("boom")
        if self.behaviour == "hang":
            time.sleep(3)
        ds = [float(gaussian_delta(10, e)) * 1.001 for e in job.eps]
        if self.behaviour == "nan":
            ds[0] = math.nan
        elif self.behaviour == "negative":
            ds[0] = -0.5
        elif self.behaviour == "above1":
            ds[0] = 1.5
        elif self.behaviour == "rising":
            ds[-1] = 0.99999
        return {"toy_peer": (ds, [math.nan] * len(job.deltas), [])}


CASE = SuiteCase("gaussian sigma=1 x100", lambda: [(gaussian_noise(1), 100)], ("10", "30", "60"))


@pytest.mark.parametrize(
    "behaviour, verdict",
    [
        ("good", "sound"),
        ("raise", "crashed"),
        ("nan", "invalid value"),
        ("negative", "UNSOUND"),  # an upper bound below the truth (and no delta)
        ("above1", "invalid value"),
        ("rising", "invalid value"),
    ],
)
def test_a_peer_row_has_a_verdict_never_a_crash(clean_registry, behaviour, verdict):
    register(Toy(behaviour), replace=True)
    r = audit_suite(accountants=("toy_peer",), cases=[CASE])
    assert {row.quantity for row in r.rows} == {"delta"}  # eps(delta): not reported, no rows
    verdicts = [row.verdict for row in r.rows]
    assert verdict in verdicts and (verdict in ("sound", "UNSOUND") or "UNSOUND" not in verdicts)
    if behaviour == "rising":  # the library's number stays in the row, the note says why
        assert r.rows[-1].reported == 0.99999 and "non-monotone, delta(60)" in r.rows[-1].note


class RisingToy(Toy):
    """The rising toy with a reproduction: its library call is the number it computes."""

    fixed = False  # True: the library no longer rises (its script must then exit 0)

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        good = Toy().compute(job)["toy_peer"][0] if self.fixed else None
        ds = good or self.compute(job)["toy_peer"][0]
        return [f"reported = {ds[job.eps.index(at)]!r}"]


@pytest.mark.parametrize("fixed", [False, True])
def test_a_non_monotone_findings_script_exits_1_while_the_curve_rises(
    clean_registry, tmp_path, fixed
):
    """The script asks for both points of a rising curve, not one number (which is valid)."""
    import subprocess
    import sys

    from dpcompose_exact.tools.audit.repro import write_repros

    toy = RisingToy("rising")
    register(toy, replace=True)
    r = audit_suite(accountants=("toy_peer",), cases=[CASE])
    (row,) = [x for x in r.findings() if "non-monotone" in x.note]
    toy.fixed = fixed
    paths = write_repros(r, tmp_path, {}, cases=[CASE])
    script = paths[r.findings().index(row)]
    text = script.read_text()
    assert "earlier = float(reported)" in text and "dpcompose" not in text.split('"""', 2)[2]
    out = subprocess.run([sys.executable, "-I", str(script)], capture_output=True, text=True)
    assert "delta(30) =" in out.stdout and "delta(60) =" in out.stdout, out.stderr
    if fixed:  # the library's curve no longer rises: the script passes
        assert out.returncode == 0 and "does not rise" in out.stdout
    else:  # 0.99999 is a valid delta alone; above delta(30) it is a curve no mechanism has
        assert out.returncode == 1 and "NON-MONOTONE: the curve rises" in out.stdout


def test_a_peer_past_its_time_limit_is_a_crashed_row(clean_registry):
    toy = Toy("hang")  # sleeps 3 s: past the wall-clock ceiling, 30 times the limit
    toy.time_limit = 0.05
    register(toy, replace=True)
    r = audit_suite(accountants=("toy_peer",), cases=[CASE])
    assert {row.verdict for row in r.rows} == {"crashed"}
    assert "time limit" in r.rows[0].note


class Spinning(adapters.Adapter):
    """A built-in-like adapter (not a peer) that computes without end, as a slow library."""

    name = "spinning"
    library = "math"
    distribution = "pytest"
    forms = frozenset({"gaussian"})
    series = (Series("spinning", Claim.UPPER, None),)
    time_limit = 0.3
    stop = False  # set by the test: a thread past its limit is never stopped by the audit

    def run(self, job: Job) -> Any:
        while not Spinning.stop:
            pass

    def repro_source(self, job: Job, series: str, quantity: str, at: str) -> str | None:
        return "while True:\n    pass\nreported = 1.0\n"


def test_a_built_in_adapter_has_the_time_limit_too(clean_registry, tmp_path):
    """A non-peer adapter past its CPU-time limit is a classified crashed row, reproduced."""
    import subprocess
    import sys

    from dpcompose_exact.tools.audit.repro import write_repros

    register(Spinning(), replace=True)
    start = time.process_time()
    try:
        r = audit_suite(accountants=("spinning",), cases=[CASE])
    finally:
        Spinning.stop = True
    assert time.process_time() - start < 30  # the suite goes on (the thread is left behind)
    assert {row.verdict for row in r.rows} == {"crashed"}
    note = r.rows[0].note
    assert "did not answer within 0.3 s of CPU time" in note, note
    assert note.endswith("time limit) [library failure time-limit]")
    written = write_repros(r, tmp_path, {}, cases=[CASE])
    paths = [p for p in written if p.name.startswith("timeout_")]
    assert [p.name for p in paths] == ["timeout_spinning_gaussian-sigma-1-x100.py"]
    out = subprocess.run([sys.executable, "-I", str(paths[0])], capture_output=True, text=True)
    assert out.returncode == 1 and "no answer within 0.3 s of CPU time" in out.stdout


def test_the_time_limit_counts_cpu_time_not_waiting():
    """A library that waits (a loaded machine, I/O) is not stopped at its CPU limit."""
    assert run_with_time_limit(lambda: (time.sleep(0.3), 7)[1], 0.1, "waiting") == 7
    stop: list[bool] = []

    def spin() -> None:
        while not stop:  # a thread past its limit is left running: this one stops
            pass

    try:
        with pytest.raises(TimeoutError, match=r"within 0.1 s of CPU time .*time limit"):
            run_with_time_limit(spin, 0.1, "spinning")
    finally:
        stop.append(True)
    with pytest.raises(TimeoutError, match=r"within 0.02 s of wall-clock time"):
        run_with_time_limit(lambda: time.sleep(2), 0.02, "sleepy")  # the ceiling, 30 times


def test_a_missing_peer_library_is_skipped_with_the_extra(clean_registry):
    toy = Toy()
    toy.distribution = "no-such-accountant-xyz"
    register(toy, replace=True)
    r = audit_suite(accountants=("toy_peer", "rdp"), cases=[CASE])
    why = dict(r.skipped)["toy_peer"]
    assert why.startswith("no-such-accountant-xyz is not installed") and "[audit-peers]" in why


def test_time_limit_and_monotone_helpers():
    assert run_with_time_limit(lambda: 7, 1.0, "x") == 7
    with pytest.raises(ZeroDivisionError, match="division"):
        run_with_time_limit(lambda: 1 / 0, 1.0, "x")
    with pytest.raises(TimeoutError, match="within 0.05 s"):
        run_with_time_limit(lambda: time.sleep(2), 0.05, "sleepy")
    bad = non_monotone([0.5, 0.2, 0.3], ["1", "2", "3"], "delta")
    assert list(bad) == [2] and "delta(3) = 0.3 above delta(2) = 0.2" in bad[2]
    # the order of the queries is by value, not by position; float rounding is tolerated
    assert non_monotone([0.2, 0.5], ["2", "1"], "delta") == {}
    assert non_monotone([0.5, 0.5 * (1 + 2**-52)], ["1", "2"], "delta") == {}
    assert list(non_monotone([0.5, 0.5 * (1 + 2**-40)], ["1", "2"], "delta")) == [1]


# ---- the other quantities: RDP curves, GDP mu, beta(alpha) ------------------------------


def subsampled_gaussian_rdp(q: Any, sigma: Any, order: int) -> mp.mpf:
    """D_order of the Poisson-subsampled Gaussian, integer order (binomial expansion)."""
    with mp.workdps(30):
        q, s = mp.mpf(q), mp.mpf(sigma)
        total = sum(
            mp.binomial(order, j)
            * (1 - q) ** (order - j)
            * q**j
            * mp.exp((j * j - j) / (2 * s * s))
            for j in range(order + 1)
        )
        return mp.log(total) / (order - 1)


def test_series_claims_of_the_other_quantities_default_to_not_reported():
    s = Series("x", Claim.UPPER, None)
    assert [s.claim(q) for q in adapters.QUANTITIES] == [Claim.UPPER, None, None, None, None]
    assert s.quantities() == ("delta",) and s.extra_quantities() == ()
    assert adapters.registry()["pld_pessimistic"].run_quantities(_job([])) == {}


def test_rdp_curves_against_closed_forms():
    _need("autodp")
    _need("opendp")
    plain = Job([(gaussian_noise(2), 100)], [], [], {}, orders=[2.0, 8.0])
    for name in ("autodp_rdp", "opendp_zcdp"):
        got = _peer(name).run_quantities(plain)[name]["renyi"]
        # 100 uses of sigma = 2: alpha * k / (2 sigma^2) = 12.5 alpha (exact for the Gaussian)
        assert got == [(2.0, pytest.approx(25.0, rel=1e-9)), (8.0, pytest.approx(100.0, rel=1e-9))]
    sub = Job([(gaussian_noise(1).subsample("0.01"), 1000)], [], [], {}, orders=[2.0, 3.0])
    got = _peer("autodp_rdp").run_quantities(sub)["autodp_rdp"]["renyi"]
    for order, value in got:
        exact = 1000 * float(subsampled_gaussian_rdp("0.01", 1, int(order)))
        # tight: autodp computes the same expansion in doubles (below it by ~1e-13, rounding)
        assert value == pytest.approx(exact, rel=1e-9)


def test_gdpnum_mu_and_beta_against_the_gaussian_trade_off():
    from scipy.stats import norm

    _need("gdpnum")
    job = Job([(gaussian_noise(2), 4)], [], [], {}, alphas=[1e-3, 0.1])  # exactly 1-GDP
    got = _peer("gdpnum").run_quantities(job)
    assert got["gdpnum_mu"]["gdp_mu"][0][1] == pytest.approx(1.0, rel=1e-4)
    for alpha, beta in got["gdpnum"]["beta"]:
        truth = norm.cdf(norm.isf(alpha) - 1.0)  # G_1(alpha)
        assert beta == pytest.approx(truth, rel=1e-3)


# ---- failures to import, reproduction scripts ---------------------------------------------


def test_a_peer_that_fails_to_import_is_a_crashed_row(clean_registry, tmp_path, monkeypatch):
    # an installed library whose import raises (opake-accounting on Python 3.11 and 3.12)
    (tmp_path / "broken_peer_lib.py").write_text(
        "raise TypeError('__weakref__ slot disallowed')\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    toy = Toy()
    toy.library = "broken_peer_lib"
    register(toy, replace=True)
    r = audit_suite(accountants=("toy_peer",), cases=[CASE])
    assert {row.verdict for row in r.rows} == {"crashed"} and r.skipped == ()
    assert r.rows[0].note == (
        "crashed: ImportError: broken_peer_lib failed to import: "
        "TypeError: __weakref__ slot disallowed [unclassified crash]"
    )


def _cheap_case(name: str) -> list[tuple[Any, int]]:
    """A small case each peer accepts (its findings of the quick suite have the same kinds)."""
    if name in ("opendp_pure", "autodp_kov"):
        return [(api.Mechanism([("0.1", "0")]), 20)]
    if name == "dp_accelerator":
        return [(gaussian_noise(1).subsample("0.01"), 100)]
    if name == "fourier":
        return [(gaussian_noise(2).subsample("0.05"), 10)]
    return [(gaussian_noise(2), 10)]


@pytest.mark.parametrize("name", PEERS)
def test_repro_source_recomputes_the_adapters_numbers(name):
    """Each number's script source, run here, binds the number the adapter reported."""
    adapter = _peer(name)
    try:
        adapter.imported()
    except ImportError as exc:
        pytest.skip(str(exc))
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
                pairs = [("" if q == "gdp_mu" else repr(a), v) for a, v in extra[s.name][q]]
            for at, want in pairs:
                source = adapter.repro_source(job, s.name, q, at.removesuffix(".0"))
                assert source is not None and "dpcompose" not in source
                scope: dict[str, Any] = {}
                exec(compile(source, f"<{name} {q}>", "exec"), scope)  # noqa: S102
                assert float(scope["reported"]) == pytest.approx(want, rel=1e-12, nan_ok=True)
                checked += 1
    assert checked


def test_repro_scripts_of_peer_findings_run_isolated(tmp_path):
    """``--repro``: a finding's script runs with ``python -I`` and prints the audit's number."""
    import subprocess
    import sys

    from dpcompose_exact.tools.audit.repro import write_repros

    _need("gdpnum")
    r = audit_suite(accountants=("gdpnum",), cases=["gaussian sigma=1 x100"])
    mu = [row for row in r.findings() if row.quantity == "gdp_mu"]
    assert mu and mu[0].verdict == "UNSOUND"  # 100 uses of sigma = 1 are exactly 10-GDP
    paths = write_repros(r, tmp_path, {})
    script = paths[r.findings().index(mu[0])]
    out = subprocess.run(
        [sys.executable, "-I", str(script)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 1, out.stderr  # exits 1 while the library is on the wrong side
    assert "ON THE WRONG SIDE" in out.stdout
    assert f"reports gdp_mu = {mu[0].reported!r}" in out.stdout
    assert "certified true value in [ 10" in out.stdout
