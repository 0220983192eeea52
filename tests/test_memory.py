"""Memory estimate of the exact route (engines.memory) and the --max-memory promise."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dpcompose_exact.engines.memory import BASE_RSS, estimate_rss, problem_sizes, row_form_bytes
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.tradeoff import dp_region

PAPER = [("0.3", "0"), ("0.15", "0.02")]

_CHILD = (
    "import resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, r.returncode)\n"
    "sys.stderr.write(r.stderr)\n"
)


def run_limited(args, limit_mib):
    """(max RSS bytes, exit status, stderr) of a CLI run in a fresh child process."""
    cmd = [sys.executable, "-m", "dpcompose_exact.cli", *args]
    cmd += ["--max-memory", str(limit_mib / 1024)]
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, *cmd], capture_output=True, text=True, timeout=600
    )
    rss, rc = out.stdout.split()
    return int(rss), int(rc), out.stderr


def paper(k):
    return [(canonical_pair(dp_region(PAPER)), k)]


def test_estimate_grows_with_k_and_has_a_floor():
    sizes = [estimate_rss(paper(k)) for k in (10, 50, 100, 200)]
    assert sizes == sorted(sizes) and sizes[0] >= BASE_RSS
    terms, coef = problem_sizes(paper(100))
    assert terms > 0 and coef > terms


@pytest.mark.parametrize(
    "k, fmt",
    [(40, "table"), (120, "table"), (120, "json"), (120, "csv"), (120, "latex"), (120, "always")],
)
def test_accepted_runs_stay_under_the_limit(k, fmt):
    """Every output format of the exact route (JSON and CSV are written row by row and
    estimated so, a table and LaTeX hold every row) stays under the tightest limit that
    accepts it."""
    streamed = fmt in ("json", "csv", "always")
    # the tightest limit that accepts the run
    limit = estimate_rss(paper(k), "streamed" if streamed else True) // 2**20 + 1
    args = ["compose", "-k", str(k), "--method", "pld", "--format", fmt]
    if fmt == "always":
        args[-1:] = ["json", "--exact", "always"]
    rss, rc, err = run_limited(args, limit)
    assert rc == 0, err
    assert rss <= limit * 2**20


def test_runs_over_the_limit_are_refused_up_front():
    rss, rc, err = run_limited(["compose", "-k", "400", "--method", "pld"], 300)
    assert rc == 2 and "over the limit" in err and len(err.strip().splitlines()) == 1
    assert rss < 300 * 2**20


def test_sparse_fields_are_estimated_by_their_nonzero_slots():
    """Regression: a tiny generator beside a large loss (z^500 next to z) was estimated
    as if every z-slot held a full coefficient (about 3-4 times the measured RSS, and
    12.8 GB before the sumset count); the estimate must still hold the run."""
    sparse = [("5", "0"), ("0.01", "0.3")]
    kinds = [(canonical_pair(dp_region(sparse)), 24)]
    dense_equivalent = estimate_rss(paper(24))
    est = estimate_rss(kinds, closed_forms=False)
    assert est < 400 * 2**20 and est > dense_equivalent
    limit = est // 2**20 + 1
    args = ["compose", "--dp", "5,0", "--dp", "0.01,0.3", "-k", "24", "--method", "pld"]
    rss, rc, err = run_limited([*args, "--decimals-only", "--format", "json"], limit)
    assert rc == 0, err
    assert rss <= limit * 2**20


def test_streamed_forms_are_estimated_between_decimals_and_held_forms():
    """Forms written row by row cost one row's forms over the decimals-only run (plus
    sympy, which the command line imports for closed forms), far less than every row's."""
    for k in (50, 300, 1000):
        dec, streamed, held = (estimate_rss(paper(k), c) for c in (False, "streamed", True))
        assert dec < streamed and (k < 300 or streamed < held / 1.4)
        assert streamed - dec < 64 * 2**20 + 3 * row_form_bytes(paper(k))
    # the paper case at k = 1000 fits the default limit when its forms are streamed
    from dpcompose_exact.engines.genfunc import DEFAULT_MEMORY_LIMIT

    assert estimate_rss(paper(1000), "streamed") <= DEFAULT_MEMORY_LIMIT < estimate_rss(paper(1000))


def test_streamed_runs_are_held_to_the_held_estimate_when_it_fits():
    """JSON and CSV (streamed forms) are held to the held-forms estimate when it fits, so
    that every output of a composition names the same figure and takes the same route;
    past the limit the lower streamed estimate decides (the paper case at k = 1000 is
    then exact under the default limit, where held forms would go certified)."""
    from dpcompose_exact.engines.finiteroutes import Problem, choose_route
    from dpcompose_exact.engines.genfunc import DEFAULT_MEMORY_LIMIT

    p = Problem.of(paper(300))
    held, streamed = p.rss(True), p.rss("streamed")
    assert p.need("streamed", None) == held == p.need("streamed", held)
    assert p.need("streamed", held - 1) == streamed < held
    big = Problem.of(paper(1000))
    route, why = choose_route(big, "streamed", 30, DEFAULT_MEMORY_LIMIT)
    assert route == "exact" and f"({big.rss('streamed') // 2**20} MiB estimated)" in why
    assert choose_route(big, True, 30, DEFAULT_MEMORY_LIMIT)[0] == "certified"


def _two_constraints(k):
    """``--dp 0.25,0.999 --dp 1,0.99``: a sparse z-field (every fourth z-power) on the
    recurrence route."""
    return [(canonical_pair(dp_region([("0.25", "0.999"), ("1", "0.99")])), k)]


def test_a_sparse_field_on_the_recurrence_route_stays_under_its_estimate():
    """Was: ``--dp 0.25,0.999 --dp 1,0.99 -k 2000 --format json`` took 7.8 GB under the
    default 6 GiB limit (estimated 4466 MiB streamed); at k = 600 the run took 305 MiB
    against a streamed estimate of 280 MiB.  The tightest limit that accepts the run at
    k = 600 now holds it, and k = 2000 is not given to the exact route."""
    from dpcompose_exact.engines.finiteroutes import Problem, choose_route
    from dpcompose_exact.engines.genfunc import DEFAULT_MEMORY_LIMIT

    limit = estimate_rss(_two_constraints(600), "streamed") // 2**20 + 1
    args = ["compose", "--dp", "0.25,0.999", "--dp", "1,0.99", "-k", "600"]
    rss, rc, err = run_limited([*args, "--format", "json", "--digits", "40"], limit)
    assert rc == 0, err
    assert rss <= limit * 2**20
    big = Problem.of(_two_constraints(2000))
    route, why = choose_route(big, "streamed", 40, DEFAULT_MEMORY_LIMIT)
    assert route != "exact" and "over the memory limit" in why


def test_small_decimals_only_runs_stay_under_their_estimate():
    """Was: the base figure (42 MiB) left out sympy, which the command line imports at
    start; the paper case at k = 50, decimals only, took 76 MiB against 55 MiB."""
    limit = estimate_rss(paper(50), False) // 2**20 + 1
    args = ["compose", "-k", "50", "--method", "pld", "--decimals-only", "--format", "json"]
    rss, rc, err = run_limited(args, limit)
    assert rc == 0, err
    assert rss <= limit * 2**20
