"""GDP mu of Laplace, subsampled and subsampled-Gaussian compositions (docs/theory.md, 20).

References are independent of the code under test: mu* = sup_eps m(eps), m(eps) the mu
with delta_{G_mu}(eps) = delta(eps), computed in mpmath from closed-form or enumerated
privacy profiles, maximised over a dense grid refined around its best point.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction as F

import mpmath as mp
import pytest

import dpcompose_exact as dx


def _dg(eps, mu):
    return mp.ncdf(-eps / mu + mu / 2) - mp.e**eps * mp.ncdf(-eps / mu - mu / 2)


def _m(eps, d):
    """The mu with delta_{G_mu}(eps) = d (bisection in mpmath)."""
    if d <= 0:
        return mp.mpf(0)
    lo, hi = mp.mpf("1e-12"), mp.mpf(8)
    for _ in range(90):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _dg(eps, mid) < d else (lo, mid)
    return lo


def _sup(profile, top):
    """sup over [0, top] of m(eps, profile(eps)): a grid of 100, then a golden search."""
    grid = [top * i / 100 for i in range(100)]
    vals = [_m(e, profile(e)) for e in grid]
    i = max(range(len(vals)), key=lambda j: vals[j])
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    g = (mp.sqrt(5) - 1) / 2
    for _ in range(50):
        c, d = b - g * (b - a), a + g * (b - a)
        if _m(c, profile(c)) > _m(d, profile(d)):
            b = d
        else:
            a = c
    return max(max(vals), _m((a + b) / 2, profile((a + b) / 2)))


def _ends(v):
    lo, hi = v.interval(25)
    return mp.mpf(lo), mp.mpf(hi)


def test_laplace_once_against_its_closed_form_profile():
    # one Laplace use with b = 1: delta(eps) = 1 - e^((eps - 1)/2) on [0, 1], 0 after
    with mp.workdps(30):
        want = _sup(lambda e: 1 - mp.e ** ((e - 1) / 2) if e < 1 else mp.mpf(0), mp.mpf(1))
        lo, hi = _ends(dx.compose(dx.laplace_noise("1"), 1).gdp_mu())
        assert lo - mp.mpf(10) ** -15 <= want <= hi + mp.mpf(10) ** -15
        assert hi - lo < mp.mpf(10) ** -8 * hi


def test_subsampled_pure_dp_against_the_enumerated_profile():
    # log(3)-DP subsampled at 1/10, k = 5: both directions' binomial loss distributions
    k = 5
    a, b = (mp.mpf(3) / 10, mp.mpf(7) / 10), (mp.mpf(1) / 4, mp.mpf(3) / 4)

    def profile(eps):
        best = mp.mpf(0)
        for p, r in ((a, b), (b, a)):
            l0, l1 = mp.log(p[0] / r[0]), mp.log(p[1] / r[1])
            s = mp.fsum(
                mp.binomial(k, j)
                * p[0] ** j
                * p[1] ** (k - j)
                * max(mp.mpf(0), 1 - mp.e ** (eps - j * l0 - (k - j) * l1))
                for j in range(k + 1)
            )
            best = max(best, s)
        return best

    with mp.workdps(30):
        want = _sup(profile, k * mp.log(mp.mpf(6) / 5) + mp.mpf("0.01"))
        c = dx.compose(dx.Mechanism.dp("log(3)").subsample("1/10"), k)
        lo, hi = _ends(c.gdp_mu())
        assert lo - mp.mpf(10) ** -12 <= want <= hi + mp.mpf(10) ** -12
        assert hi - lo < mp.mpf(10) ** -8 * hi


def test_laplace_three_times_brackets_dp_accounting():
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pldm

    plds = {
        pess: pldm.from_laplace_mechanism(
            1.0, pessimistic_estimate=pess, value_discretization_interval=1e-4
        ).self_compose(3)
        for pess in (True, False)
    }
    with mp.workdps(20):
        ref = {
            pess: _sup(lambda e, p=p: mp.mpf(p.get_delta_for_epsilon(float(e))), mp.mpf(3))
            for pess, p in plds.items()
        }
    lo, hi = _ends(dx.compose(dx.laplace_noise("1"), 3).gdp_mu())
    assert ref[False] - mp.mpf("1e-5") <= hi and lo <= ref[True] + mp.mpf("1e-5")
    assert ref[True] - ref[False] < mp.mpf("1e-3")  # the reference is informative
    assert hi - lo < mp.mpf(10) ** -7 * hi


def test_subsampled_gaussian_mu_is_the_gaussians_and_its_profile_approaches_it():
    c = dx.compose(dx.gaussian_noise("1").subsample("1/10"), 3)
    assert c.gdp_mu().exact == "sqrt(3)"
    mixed = dx.compose(
        [(dx.gaussian_noise("2").subsample("1/100"), 8), (dx.gaussian_noise("1"), 1)]
    )
    assert mixed.gdp_mu().exact == "sqrt(3)"  # 8/4 + 1
    # k = 1, sigma = 1, q = 1/10: the remove direction's profile in closed form
    # (A = q N(1,1) + (1-q) N(0,1), B = N(0,1)); m(eps) stays below 1 and climbs to it
    q = mp.mpf(1) / 10
    with mp.workdps(60):

        def profile(eps):
            x = mp.log((mp.e**eps - 1 + q) / q) + mp.mpf(1) / 2
            return q * mp.ncdf(1 - x) + (1 - q) * mp.ncdf(-x) - mp.e**eps * mp.ncdf(-x)

        ms = [_m(mp.mpf(e), profile(mp.mpf(e))) for e in (1, 4, 16, 64)]
        assert all(x < y for x, y in zip(ms, ms[1:])) and ms[-1] < 1
        assert ms[-1] > mp.mpf("0.96")


def test_gdp_mu_refusals_say_why():
    with pytest.raises(dx.errors.UnsupportedQueryError, match="unbounded loss"):
        dx.compose(
            [(dx.laplace_noise("1"), 1), (dx.gaussian_noise("1").subsample("1/10"), 1)]
        ).gdp_mu()


def test_cli_summary_json_equals_the_api():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpcompose_exact.cli",
            "summary",
            "--mech",
            "laplace(1):3",
            "--orders",
            "2",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    api = dx.compose(dx.laplace_noise("1"), 3).gdp_mu()
    lo, hi = (F(x) for x in api.interval(20))
    got = data["gdp_mu"]["decimal"].strip("[]").split(", ")
    assert F(got[0]) <= hi and F(got[1]) >= lo and data["gdp_mu"]["exact"] is None


def test_subsampled_gaussian_next_to_finite_pairs_is_enclosed():
    # [max(m, mu_F), sqrt(m^2 + mu_F^2)] with m = 10 (100 uses of sigma = 1, any rate)
    c = dx.compose([(dx.gaussian_noise("1").subsample("1/100"), 100), (dx.Mechanism.dp("1"), 2)])
    lo, hi = _ends(c.gdp_mu())
    mu_f = mp.mpf(dx.compose(dx.Mechanism.dp("1"), 2).gdp_mu().decimal(30))
    assert lo == 10 and abs(hi - mp.sqrt(100 + mu_f**2)) < mp.mpf(10) ** -15


def test_laplace_queries_below_the_mean_share_one_tilt():
    """100 uses of b = 1: queries at eps < 12 (tilt clamped at 1/2) reuse one power."""
    import time

    from dpcompose_exact.engines.pldgrid import LaplaceGrid

    grid = LaplaceGrid(F(1), 100)
    grid.delta(F(0))
    start = time.process_time()
    points = [F(i, 2) for i in range(1, 21)]
    ends = [grid.delta(e).interval(12) for e in points]
    assert time.process_time() - start < 4  # one FFT each before: about 0.3 s a query
    for e, (lo, hi) in zip(points[::7], ends[::7]):  # a fresh grid per query agrees
        flo, fhi = LaplaceGrid(F(1), 100).delta(e).interval(12)
        assert F(lo) <= F(fhi) and F(flo) <= F(hi)
