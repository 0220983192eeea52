"""Property tests: the log-split sum (dpcompose_exact.engines.logsplit) against two other methods.

Random small mechanisms (1-3 ``(eps, delta)`` constraints whose eps mix rationals and
logarithms), 1-3 kinds with counts 1-6, are composed three ways:

* the exact route (``genfunc.compose_plds`` + ``curves.delta_value/epsilon_value``);
* a brute-force convolution written here: every kind's canonical pair is read as atoms
  ``(loss, P0-mass)`` in mpmath at 60 digits, the atoms are convolved (merged by loss
  rounded to 40 digits) and ``delta(eps) = leak + sum P0(l) (1 - e^(eps - l))_+`` is
  summed directly: no generating function, no suffix sum, no usage-count enumeration;
* the log-split sum, whose certified enclosure must contain both, at the default
  threshold (and then narrow) and at a shallow one (most terms omitted: wide but sound).
"""

from __future__ import annotations

import os
import warnings
from fractions import Fraction

import flint
import mpmath
import pytest
import sympy
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dpcompose_exact.engines.genfunc import compose_plds
from dpcompose_exact.engines.logsplit import PREC, LogSplit, TooLarge
from dpcompose_exact.engines.results import delta_value, epsilon_value
from dpcompose_exact.errors import BelowLeakError, InvalidParameterError
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.tradeoff import dp_region

RATIONAL_EPS = ["0", "1/10", "3/10", "1/2", "1"]
LOG_EPS = ["log(2)", "log(3)-log(2)", "log(2)+1/10"]
DELTAS = ["0", "1/100", "1e-3", "1/10"]
# queries: rationals, logs, and values on the lattice of the losses (the term at the
# query's own grid point is one the ball cannot place)
QUERIES = [
    "0",
    "1/10",
    "1/2",
    "1",
    "log(2)",
    "2*log(2)",
    "2*log(2)-1/10",
    "log(3)-log(2)",
    "log(2)+1/10",
    "log(3)+3/10",
    "5/2",
]
DELTA_QUERIES = ["1e-4", "1e-3", "1/100", "1/10", "1/3"]
MAX_TOTAL = 9  # total count: keeps the exact route and the brute force fast

# 25 examples per property by default; set LOGSPLIT_FUZZ_EXAMPLES for a longer hunt
SETTINGS = settings(
    max_examples=int(os.environ.get("LOGSPLIT_FUZZ_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)



@pytest.fixture(autouse=True)
def _mpmath_60_digits():
    """The references at 60 digits, whatever another test file set in mpmath.mp."""
    with mpmath.workdps(60):
        yield

TOL = mpmath.mpf(10) ** -40


def pair(constraints):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return canonical_pair(dp_region(constraints, warn=False))


def inside(value, enclosure) -> bool:
    with flint.ctx.workprec(400):  # ends at 53 bits would be rounded outward
        b, e = value.ball(400), enclosure.ball()
        return bool(e.lower() <= b.lower() and b.upper() <= e.upper())


def mp_of(ball: flint.arb) -> mpmath.mpf:
    return mpmath.mpf(ball.mid().str(50, radius=False))


def ends(enclosure) -> tuple[mpmath.mpf, mpmath.mpf]:
    e = enclosure.ball()
    return mp_of(e.lower()), mp_of(e.upper())


# half the constraints carry a logarithm (else most mechanisms would be purely rational)
constraint = st.tuples(
    st.one_of(st.sampled_from(LOG_EPS), st.sampled_from(RATIONAL_EPS)), st.sampled_from(DELTAS)
)


def draw_kinds(draw, n_kinds: int, n_cons: int, counts: tuple[int, int]):
    """``[(pair, count), ...]``: up to ``n_kinds`` kinds of up to ``n_cons`` consistent
    constraints, counts in ``counts``."""
    kinds = []
    for _ in range(draw(st.integers(1, n_kinds))):
        cons = draw(st.lists(constraint, min_size=1, max_size=n_cons, unique_by=lambda c: c[0]))
        try:
            p = pair(cons)
        except InvalidParameterError:
            assume(False)
        kinds.append((p, draw(st.integers(*counts))))
    return kinds


@st.composite
def mechanisms(draw):
    """``[(pair, count), ...]``: 1-3 kinds, each from 1-3 consistent constraints."""
    kinds = draw_kinds(draw, 3, 3, (1, 6))
    assume(sum(c for _, c in kinds) <= MAX_TOTAL)
    return kinds


def brute_atoms(kinds):
    """``(leak, {loss key: (loss, P0-mass)})`` of the composition, by direct convolution."""
    survive = mpmath.mpf(1)
    dist = {0: (mpmath.mpf(0), mpmath.mpf(1))}
    for p, count in kinds:
        dom = p.domain
        atoms = [
            (mp_of(dom.loss_ball(loss, 256)), mp_of(dom.elem_ball(m, 256))) for loss, m in p.masses
        ]
        survive *= (1 - mp_of(dom.elem_ball(p.leak, 256))) ** count
        for _ in range(count):
            out = {}
            for _, (l0, m0) in dist.items():
                for l1, m1 in atoms:
                    loss = l0 + l1
                    key = mpmath.nstr(loss, 40)
                    old = out.get(key)
                    out[key] = (loss, m0 * m1 if old is None else old[1] + m0 * m1)
            dist = out
    return 1 - survive, dist


def brute_delta(atoms, eps: mpmath.mpf) -> mpmath.mpf:
    leak, dist = atoms
    total = leak
    for loss, m in dist.values():
        if loss > eps:
            total += m * (1 - mpmath.exp(eps - loss))
    return total


def mp_eps(text: str) -> mpmath.mpf:
    return mpmath.mpf(str(sympy.sympify(text).evalf(60)))


# --------------------------------------------------------------------------------------


@SETTINGS
@given(mechanisms(), st.lists(st.sampled_from(QUERIES), min_size=1, max_size=3, unique=True))
def test_delta_is_enclosed_and_narrow(kinds, queries):
    region = compose_plds(kinds, memory_limit=None)
    split = LogSplit(kinds)
    atoms = brute_atoms(kinds)
    for eps in queries:
        exact = delta_value(region, eps)
        v = split.delta(eps)
        assert inside(exact, v), (eps, exact.ball(100), v.ball())
        lo, hi = ends(v)
        b = brute_delta(atoms, mp_eps(eps))
        assert lo - TOL <= b <= hi + TOL, (eps, b, v.ball())
        assert abs(mp_of(exact.ball(200)) - b) < TOL
        # the default threshold leaves an omitted mass far below 1e-12
        assert hi - lo < mpmath.mpf(10) ** -12


@SETTINGS
@given(mechanisms(), st.lists(st.sampled_from(QUERIES), min_size=1, max_size=3, unique=True))
def test_a_shallow_threshold_is_sound(kinds, queries):
    region = compose_plds(kinds, memory_limit=None)
    split = LogSplit(kinds, tail=-3.0)
    for eps in queries:
        v = split.delta(eps)
        assert inside(delta_value(region, eps), v), (eps, v.ball())


@SETTINGS
@given(mechanisms(), st.lists(st.sampled_from(DELTA_QUERIES), min_size=1, max_size=2))
def test_epsilon_is_enclosed(kinds, deltas):
    region = compose_plds(kinds, memory_limit=None)
    split = LogSplit(kinds)
    shallow = LogSplit(kinds, tail=-3.0)
    for d in deltas:
        try:
            exact = epsilon_value(region, d)
        except InvalidParameterError:  # at or below the composition's leak
            with pytest.raises(BelowLeakError):
                split.epsilon(d)
            continue
        try:
            v = split.epsilon(d)
        except BelowLeakError:
            # refused only when delta is not strictly above the leak (a ball), i.e. d
            # equals the leak: eps(d) is then the largest loss, finite but not sought
            assert not split.leak.upper() < flint.arb(flint.fmpq(*Fraction(d).as_integer_ratio()))
            continue
        assert inside(exact, v), (d, exact.ball(100), v.ball())
        lo, hi = ends(v)
        assert hi - lo <= mpmath.mpf(10) ** -6 * max(hi, 1)
        try:
            w = shallow.epsilon(d)
        except (TooLarge, BelowLeakError):  # omitted mass above d - leak: no upper end
            continue
        assert inside(exact, w), (d, exact.ball(100), w.ball())


@SETTINGS
@given(mechanisms(), st.sampled_from(QUERIES), st.sampled_from([-40, -20, -8]))
def test_delta_ball_at_a_wide_eps_ball(kinds, eps, log2_radius):
    """A ball around eps wider than the grid's tiny margins: the units it cannot place go
    through the positive-part branch of ``_Measure.hockey``; both ends of the ball and
    its centre must be enclosed."""
    region = compose_plds(kinds, memory_limit=None)
    split = LogSplit(kinds)
    atoms = brute_atoms(kinds)
    centre = mp_eps(eps)
    with flint.ctx.workprec(PREC):
        rad = flint.arb(2) ** log2_radius
        c = flint.arb(mpmath.nstr(centre, 55))
        ball = c + flint.arb(0, rad)
        lo, hi = split.delta_ball(ball)
    lo_mp, hi_mp = mp_of(lo), mp_of(hi)
    r = mpmath.mpf(2) ** log2_radius / 2
    for e in (centre, max(centre - r, mpmath.mpf(0)), centre + r):
        b = brute_delta(atoms, e)
        assert lo_mp - TOL <= b <= hi_mp + TOL, (eps, log2_radius, e, b, lo, hi)
    with flint.ctx.workprec(400):  # ends at 53 bits would be rounded outward
        ex = delta_value(region, eps).ball(400)
        assert lo <= ex.lower() and ex.upper() <= hi


# -- regressions found by review --------------------------------------------------------

THREE = [("log(2)", "1e-6"), ("log(3)-log(2)", "1e-4"), ("1/10", "0.01")]


def test_epsilon_just_above_the_leak_does_not_leak_too_large():
    from dpcompose_exact.engines.bounds import epsilon_bounds

    p, k = pair(THREE), 10
    d = 1 - (1 - Fraction(1, 10**6)) ** k + Fraction(1, 10**40)
    exact = epsilon_value(compose_plds([(p, k)]), d)  # 6.93147075109512...
    v = epsilon_bounds([(p, k)], d, width="1e-6", time_limit=10)
    assert inside(exact, v)


def test_epsilon_at_the_leak_is_the_largest_loss():
    p, k = pair(THREE), 3
    leak = 1 - (1 - Fraction(1, 10**6)) ** k
    exact = epsilon_value(compose_plds([(p, k)]), leak)  # 3 log 2
    assert inside(exact, LogSplit([(p, k)]).epsilon(leak))


@st.composite
def larger(draw):
    """One or two kinds of 1-2 constraints at counts 8-16: the thresholds really prune."""
    return draw_kinds(draw, 2, 2, (8, 16))


@SETTINGS
@given(larger(), st.sampled_from([-20.0, -8.0]), st.sampled_from(QUERIES))
def test_larger_counts_against_the_convolution(kinds, tail, eps):
    """No exact route here: the mpmath convolution alone is the reference."""
    v = LogSplit(kinds, tail=tail).delta(eps)
    lo, hi = ends(v)
    b = brute_delta(brute_atoms(kinds), mp_eps(eps))
    assert lo - TOL <= b <= hi + TOL, (eps, tail, b, v.ball())
