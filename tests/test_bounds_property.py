"""Property test: the bounds route answers every valid query, or refuses it in one line.

Random mixed rational/logarithmic mechanisms (1-3 kinds of 1-3 ``(eps, delta)``
constraints) with counts from 1 up to 10^5 are queried at the edges: ``eps`` = 0, 1e-30,
each constraint's eps, the largest loss and just below it, 800 (beyond ``e^709``);
``delta`` = 0, 1e-30, the exact leak, each constraint's delta (a vertex of the region),
1e-5, 1/2.  Each query must

* return an enclosure, or raise a :class:`~dpcompose_exact.errors.DPComposeError` whose
  message is one line, within its time limit (plus a margin for the work done between
  two deadline checks) and under the default memory limit;
* contain the truth: where the total count is small, a brute-force mpmath convolution of
  the pairs' atoms (60 digits, nothing of the package but the pairs' exact atoms) gives
  ``delta(eps)``, and an ``eps(delta)`` enclosure ``[lo, hi]`` must satisfy
  ``delta(hi) <= delta`` and ``delta(lo) >= delta`` (or ``lo = 0``).

Profiles (``HYPOTHESIS_PROFILE``): ``ci`` (default: 60 compositions, 1-4 queries each,
about 150 queries in about a minute) and ``long`` (5,000 compositions, for a local hunt,
e.g.
``HYPOTHESIS_PROFILE=long pytest tests/test_bounds_property.py``).
"""

from __future__ import annotations

import os
import resource
import time
import warnings
from fractions import Fraction

import flint
import mpmath
import pytest
import sympy
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dpcompose_exact.engines.bounds import Bounded
from dpcompose_exact.engines.genfunc import DEFAULT_MEMORY_LIMIT
from dpcompose_exact.errors import BelowLeakError, DPComposeError, InvalidParameterError
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.tradeoff import dp_region

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.filter_too_much],
    "derandomize": False,
}
settings.register_profile("ci", max_examples=60, **_COMMON)
settings.register_profile("long", max_examples=5000, **_COMMON)
PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

MP = mpmath.MPContext()
MP.dps = 60
TOL = MP.mpf(10) ** -40
TIME_LIMIT = 3  # seconds per query given to the route
SLACK = 6  # seconds: work between two deadline checks, and a loaded machine
BRUTE_TOTAL = 7  # total count up to which the mpmath convolution is the reference
QUERIES_PER_EXAMPLE = 4  # edge queries drawn per composition (about 2.5 on average)

RATIONAL_EPS = ["1/10", "3/10", "1/2", "1", "2"]
LOG_EPS = ["log(2)", "log(3)-log(2)", "log(2)+1/10", "log(31/3)"]
DELTAS = ["0", "1e-6", "1/100", "1/10"]

constraint = st.tuples(
    st.one_of(st.sampled_from(LOG_EPS), st.sampled_from(RATIONAL_EPS)), st.sampled_from(DELTAS)
)
count = st.one_of(
    st.integers(1, 4),  # small: the brute force is the reference
    st.integers(5, 400),
    st.sampled_from([1000, 10_000, 100_000]),
)


def pair(constraints):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return canonical_pair(dp_region(constraints, warn=False))


@st.composite
def compositions(draw):
    """``(kinds, constraints per kind)``: 1-3 kinds, each from 1-3 consistent constraints."""
    kinds, cons_all = [], []
    for _ in range(draw(st.integers(1, 3))):
        cons = draw(st.lists(constraint, min_size=1, max_size=3, unique_by=lambda c: c[0]))
        try:
            p = pair(cons)
        except InvalidParameterError:
            assume(False)
        kinds.append((p, draw(count)))
        cons_all.append(cons)
    return kinds, cons_all


def mp_exact(query) -> mpmath.mpf:
    if "log" in str(query):
        return MP.mpf(str(sympy.sympify(query).evalf(70)))
    q = as_fraction(query)  # decimals exactly (a sympy Float would round them to binary)
    return MP.mpf(q.numerator) / q.denominator


def as_fraction(query) -> Fraction:
    return query if isinstance(query, Fraction) else Fraction(str(sympy.Rational(query)))


def mp_ball(ball) -> mpmath.mpf:
    return MP.mpf(ball.mid().str(65, radius=False))


def exact_leak(kinds) -> Fraction:
    """``1 - prod (1 - lambda)^k`` from the exact leaks (rational: the deltas are)."""
    survive = Fraction(1)
    for p, k in kinds:
        lam = p.leak
        survive *= (1 - Fraction(int(lam.num(1)), int(lam.den(1)))) ** k
    return 1 - survive


def top_loss(kinds) -> mpmath.mpf:
    total = MP.mpf(0)
    for p, k in kinds:
        if p.masses:
            total += k * max(mp_ball(p.domain.loss_ball(loss, 256)) for loss, _ in p.masses)
    return total


def brute(kinds):
    """``(leak, [(loss, P0-mass)])`` of the composition by direct convolution in mpmath."""
    survive = MP.mpf(1)
    dist = {"0": (MP.mpf(0), MP.mpf(1))}
    for p, k in kinds:
        dom = p.domain
        atoms = [
            (mp_ball(dom.loss_ball(loss, 256)), mp_ball(dom.elem_ball(m, 256)))
            for loss, m in p.masses
        ]
        survive *= (1 - mp_ball(dom.elem_ball(p.leak, 256))) ** k
        for _ in range(k):
            out: dict = {}
            for l0, m0 in dist.values():
                for l1, m1 in atoms:
                    key = MP.nstr(l0 + l1, 40)
                    old = out.get(key)
                    out[key] = (l0 + l1, m0 * m1 if old is None else old[1] + m0 * m1)
            dist = out
    return 1 - survive, list(dist.values())


def brute_delta(atoms, eps) -> mpmath.mpf:
    leak, dist = atoms
    return leak + sum((m * (1 - MP.exp(eps - loss)) for loss, m in dist if loss > eps), MP.mpf(0))


def one_line(exc: Exception) -> None:
    text = str(exc)
    assert text and "\n" not in text, repr(text)


def ends(value):
    with flint.ctx.workprec(400):  # lower() and upper() round to the context's precision
        b = value.ball()
        return mp_ball(b.lower()), mp_ball(b.upper())


@PROFILE
@given(compositions(), st.data())
def test_every_edge_query_answers_or_refuses_in_one_line(comp, data):
    kinds, cons = comp
    total = sum(k for _, k in kinds)
    atoms = brute(kinds) if total <= BRUTE_TOTAL else None
    top = top_loss(kinds)
    leak = exact_leak(kinds)
    eps_edges = ["0", "1e-30", "800"] + [e for c in cons for e, _ in c]
    eps_edges += [MP.nstr(top, 30), MP.nstr(top * (1 - MP.mpf(10) ** -6), 30)]
    delta_edges = ["0", "1e-30", "1e-5", "1/2", "leak"] + [d for c in cons for _, d in c]
    bounded = Bounded(kinds)  # shared by the queries: each one reuses what is built
    for _ in range(data.draw(st.integers(1, QUERIES_PER_EXAMPLE))):
        which = data.draw(st.sampled_from(["delta", "epsilon"]))
        query = data.draw(st.sampled_from(eps_edges if which == "delta" else delta_edges))
        if query == "leak":  # drawn by name: its digits can be too many to print
            query = leak
        check_query(bounded, which, query, atoms, leak)


def check_query(bounded, which, query, atoms, leak) -> None:
    """One query: an answer or a one-line refusal, in time, containing the truth."""
    t0 = time.monotonic()
    try:
        if which == "delta":
            value = bounded.delta(query, time_limit=TIME_LIMIT)
        else:
            value = bounded.epsilon(query, time_limit=TIME_LIMIT)
    except DPComposeError as exc:
        one_line(exc)
        if which == "epsilon" and isinstance(exc, BelowLeakError):
            # refused as below the leak only when it is not above it
            assert as_fraction(query) <= leak, (query, leak)
        value = None
    elapsed = time.monotonic() - t0
    assert elapsed < TIME_LIMIT + SLACK, (which, query, elapsed)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 < DEFAULT_MEMORY_LIMIT
    if value is None or atoms is None:
        return
    lo, hi = ends(value)
    assert lo <= hi
    if which == "delta":
        truth = brute_delta(atoms, mp_exact(query))
        assert lo - TOL <= truth <= hi + TOL, (query, truth, lo, hi)
    else:
        d = mp_exact(query)
        assert brute_delta(atoms, hi) <= d + TOL, (query, lo, hi)
        if lo > 0:
            assert brute_delta(atoms, lo) >= d - TOL, (query, lo, hi)


@pytest.mark.parametrize("profile", ["ci", "long"])
def test_profiles_are_registered(profile):
    assert settings.get_profile(profile).deadline is None
    assert settings.get_profile("long").max_examples >= 5000
