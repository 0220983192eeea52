"""Edges of every route: intervals at full precision, exact points decided exactly, no crash.

Each test is a regression test for one reported example; values are checked against
independent mpmath computations at 50+ digits (or exact rationals).
"""

from __future__ import annotations

import json
from fractions import Fraction

import flint
import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.cli.app import main
from dpcompose_exact.engines.bounds import ABSOLUTE_FLOOR, Bounded, relative_width
from dpcompose_exact.engines.grid import enclose
from dpcompose_exact.engines.results import epsilon_value
from dpcompose_exact.errors import BelowLeakError, InvalidParameterError
from dpcompose_exact.numbers.value import Value
from dpcompose_exact.presentation.render import to_csv, to_json
from dpcompose_exact.presentation.rows import bounded_rows
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.tradeoff import dp_region
from dpcompose_exact.tools.calibrate import largest_k

THREE = [("log(2)", "1e-6"), ("log(3)-log(2)", "1e-4"), ("1/10", "0.01")]
MP = mpmath.MPContext()
MP.dps = 60


def _pair(constraints):
    return canonical_pair(dp_region(constraints, warn=False))


def _frac(text: str) -> Fraction:
    return Fraction(text)


def _mp_frac(x) -> Fraction:
    """An mpf of the 60-digit context as an exact Fraction."""
    man, exp = x.man_exp
    return Fraction(int(man)) * Fraction(2) ** int(exp)


# ---------------------------------------------------------------------------------------
# Intervals read at the precision of the ball (not 53 bits), outward, never below 0
# ---------------------------------------------------------------------------------------


def test_interval_of_one_third_has_thirty_correct_digits_at_both_ends():
    lo, hi = Value.from_rational(Fraction(1, 3)).interval(30)
    third = MP.mpf(1) / 3
    assert _frac(lo) <= Fraction(1, 3) <= _frac(hi)
    # the outward 30-digit ends: floor and ceiling of 10^30 / 3, from mpmath
    assert _frac(lo) == Fraction(int(MP.floor(third * MP.mpf(10) ** 30)), 10**30)
    assert _frac(hi) == Fraction(int(MP.ceil(third * MP.mpf(10) ** 30)), 10**30)


def test_an_enclosure_of_width_1e_20_prints_that_width():
    with flint.ctx.workprec(200):
        a = flint.arb(1) / 7
        b = a + flint.arb(10) ** -20
        a, b = a.lower(), b.upper()  # exact points, read at 200 bits
    v = Value.from_interval(a, b)
    lo, hi = v.interval(30)
    assert _frac(lo) <= Fraction(1, 7) <= _frac(hi)
    width = _frac(hi) - _frac(lo)
    assert Fraction(1, 10**20) <= width <= Fraction(1, 10**20) + Fraction(3, 10**30)
    w = relative_width(v)  # 1e-20 / (1/7) = 7e-20, not 1e-16
    assert w < flint.arb(flint.fmpq(71, 10**21)) and w > flint.arb(flint.fmpq(69, 10**21))


def test_lower_end_of_an_interval_from_zero_is_zero_not_negative():
    """The union's rounded radius gave -5.3e-21 where the truth is 0."""
    with flint.ctx.workprec(128):
        hi = flint.arb(57) / 10**13
    v = Value.from_interval(flint.arb(0), hi.upper(), nonnegative=True)
    assert v.ball().lower() < 0  # the ball alone would dip below 0
    lo, up = v.interval(10)
    assert lo == "0" and Fraction(57, 10**13) <= _frac(up) <= Fraction(57001, 10**16)
    assert v.lower() == 0.0 and v.ends()[0] == 0


def test_nonnegative_ball_is_clamped_at_zero():
    v = Value.from_ball(flint.arb(0, Fraction(1, 10**9).__float__()), nonnegative=True)
    assert v.interval(5)[0] == "0"


# ---------------------------------------------------------------------------------------
# Relative width of exact zeros and tiny values (absolute floor)
# ---------------------------------------------------------------------------------------


def test_relative_width_of_zero_and_of_tiny_enclosures_is_finite():
    assert relative_width(Value.from_rational(0)) == 0
    assert relative_width(Value.from_interval(flint.arb(0), flint.arb(0))) == 0
    tiny = Value.from_interval(flint.arb(0), flint.arb(2) ** -1100, nonnegative=True)
    w = relative_width(tiny)
    assert w.is_finite() and w < 1  # 2^-1100 against the floor 1e-300
    floor = _mp_frac(MP.mpf(2) ** -1100) / ABSOLUTE_FLOOR
    assert w >= flint.arb(flint.fmpq(floor.numerator, floor.denominator)).lower()


def test_epsilon_zero_on_the_bounds_route_does_not_overflow():
    """eps(0.999) = 0 (delta(0) is about 0.52 < 0.999): was OverflowError."""
    b = Bounded([(_pair(THREE), 100)])
    v = b.epsilon("0.999")
    assert v.decimal(30) == "0" and relative_width(v) == 0
    # delta(0) is about 0.5169: an independent check that 0.999 is above it
    assert b.delta("0") < Fraction(999, 1000)


def test_cli_epsilon_zero_on_the_bounds_route(capsys):
    dp = sum((["--dp", f"{e},{d}"] for e, d in THREE), [])
    assert main(["epsilon", *dp, "-k", "100", "--delta", "0.999", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["method"] == "bounds" and got["curve"][0]["epsilon_decimal"] == "0"


# ---------------------------------------------------------------------------------------
# Exact points: delta = leak on the grid route, delta = 0 and vertex deltas (certified)
# ---------------------------------------------------------------------------------------


def test_grid_route_delta_equal_to_the_leak_gives_the_largest_loss():
    k = 100
    enc = enclose([(_pair(THREE), k)])
    leak = 1 - (1 - Fraction(1, 10**6)) ** k  # the largest-eps constraint's delta, k uses
    v = enc.epsilon(leak)
    assert v.is_exact and v.exact == "100*log(2)" and relative_width(v) == 0
    assert v.decimal(50) == MP.nstr(100 * MP.log(2), 50)
    with pytest.raises(BelowLeakError, match="below the leak"):
        enc.epsilon(leak - Fraction(1, 10**700))


def test_log_split_delta_at_the_leak_and_at_zero_are_exact_largest_losses():
    """The bounds route's first scheme: the largest loss as an exact value, not a ball."""
    k = 100
    leak = 1 - (1 - Fraction(1, 10**6)) ** k
    v = Bounded([(_pair(THREE), k)]).epsilon(leak)
    assert v.is_exact and v.decimal(50) == MP.nstr(k * MP.log(2), 50)
    pure = [("log(2)", "0"), ("log(3)-log(2)", "1e-4"), ("1/10", "0.01")]  # no leak
    v = Bounded([(_pair(pure), 50)]).epsilon("0")
    assert v.is_exact and v.decimal(50) == MP.nstr(50 * MP.log(2), 50)


@pytest.mark.parametrize("eps", ["100*log(2)", "70", "1000"])
def test_delta_from_the_largest_loss_on_is_the_exact_leak_on_both_schemes(eps):
    k = 100
    leak = 1 - (1 - Fraction(1, 10**6)) ** k
    p = _pair(THREE)
    for v in (Bounded([(p, k)]).delta(eps), enclose([(p, k)]).delta(eps)):
        assert v.is_exact and Fraction(v.exact) == leak
    # just below the largest loss (k log 2 = 69.3147180559945...): still an enclosure
    v = Bounded([(p, k)]).delta("69.3147")
    assert not v.is_exact and Fraction(v.interval(40)[1]) >= leak  # never below the truth


def test_bounds_route_delta_ends_are_read_at_full_precision():
    """One generator on the grid: the two curves agree far below 1e-16 relative."""
    p = _pair([("0.3", "0"), ("0.15", "0.02")])
    v = enclose([(p, 10)], refine=20).delta("1")  # every loss (multiples of 3/20) on 1/200
    exact = dx.compose(dx.Mechanism([("0.3", "0"), ("0.15", "0.02")]), 10).delta("1")
    lo, hi = (Fraction(x) for x in v.interval(40))
    ref = Fraction(exact.decimal(60))
    assert lo - Fraction(1, 10**58) <= ref <= hi + Fraction(1, 10**58)
    assert relative_width(v) < flint.arb(2) ** -100  # 53-bit ends would give ~1e-16


@pytest.mark.parametrize("extra", [[], ["--certified"], ["--method", "pld"]])
def test_epsilon_at_delta_zero_k60_is_the_largest_loss(extra, capsys):
    """Was "too close to a vertex of the certified region ... with 141 bits"."""
    args = ["epsilon", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "60", "--delta", "0"]
    assert main([*args, *extra, "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)["curve"][0]
    assert Fraction(row["epsilon"]) == 60 * Fraction(3, 10)  # no leak: 60 * 0.3


def _vertex_delta_reference(k: int, units: int) -> Fraction:
    """delta(units log 2) of k uses of (log 4, 0) + (log 2, 1/10), independently.

    One use: the six-letter pair of docs/theory.md, section 1 (as in tests/brute.py)
    with z1 = 4, z2 = 2, d1 = 0, d2 = 1/10; every ratio is a power of 2, so the product
    distribution is enumerated exactly by the multinomial counts of the letters.
    """
    from brute import double_dp_letters

    p0, p1 = double_dp_letters(Fraction(4), Fraction(2), Fraction(0), Fraction(1, 10))
    letters = [y for y in p0 if p0[y] or p1[y]]
    # distribution of the log2 likelihood ratio of the k-fold product under P0 and P1
    step = {}
    for y in letters:
        ratio = p0[y] / p1[y]
        n = ratio.numerator.bit_length() - ratio.denominator.bit_length()
        assert Fraction(2) ** n == ratio
        a, b = step.get(n, (0, 0))
        step[n] = (a + p0[y], b + p1[y])
    dist = {0: (Fraction(1), Fraction(1))}
    for _ in range(k):
        new: dict[int, tuple[Fraction, Fraction]] = {}
        for n, (a, b) in dist.items():
            for m, (c, d) in step.items():
                x, y = new.get(n + m, (0, 0))
                new[n + m] = (x + a * c, y + b * d)
        dist = new
    t = Fraction(2) ** units
    return sum(max(Fraction(0), a - t * b) for a, b in dist.values())


def test_certified_vertex_delta_is_decided_exactly():
    """A delta equal to a vertex delta ties the balls to every bit: decide it exactly."""
    k, units = 30, 25
    d = _vertex_delta_reference(k, units)
    comp = dx.compose(dx.Mechanism([("log(4)", "0"), ("log(2)", "1/10")]), k, method="certified")
    assert comp.method == "certified"
    v = epsilon_value(comp.region, d)
    assert v.exact == f"{units}*log(2)"
    # just above and below the vertex: on the two neighbouring segments
    assert epsilon_value(comp.region, d + Fraction(1, 10**60)) < f"{units}*log(2)"
    assert epsilon_value(comp.region, d - Fraction(1, 10**60)) > f"{units}*log(2)"


def test_certified_vertex_tie_without_an_affordable_exact_region_is_one_line(monkeypatch):
    import dpcompose_exact.engines.listed_results as curves

    monkeypatch.setattr(curves, "_TIE_SECONDS", -1.0)  # as if the exact region were huge
    k, units = 30, 25
    d = _vertex_delta_reference(k, units)
    comp = dx.compose(dx.Mechanism([("log(4)", "0"), ("log(2)", "1/10")]), k, method="certified")
    with pytest.raises(dx.CertificationError, match=r"too close to a vertex .* too large") as e:
        epsilon_value(comp.region, d)
    assert "\n" not in str(e.value) and len(str(e.value)) < 300


def test_certified_region_delta_equal_to_its_leak():
    """The last vertex delta is the leak, decided on its exact value."""
    k = 200
    comp = dx.compose(dx.Mechanism([("1", "1e-6")]), k, method="certified")
    leak = 1 - (1 - Fraction(1, 10**6)) ** k
    assert epsilon_value(comp.region, leak).exact == str(k)
    with pytest.raises(BelowLeakError, match="below the probability"):
        epsilon_value(comp.region, leak - Fraction(1, 10**80))


# ---------------------------------------------------------------------------------------
# Calibrate: --k-max searched up to its value, bounded compositions, logs in templates
# ---------------------------------------------------------------------------------------


def _two_dp_delta_mp(eps1, d1, eps2, d2, k: int, eps) -> mpmath.mpf:
    """delta(eps) of k uses of the (eps1, d1) + (eps2, d2) mechanism, in 60-digit mpmath.

    The six-letter pair of docs/theory.md, section 1 (tests/brute.py).  Outcomes with the
    leak letter (P1 = 0) give ``1 - (1 - d1)^k``; the rest are counted by how many uses
    fall on the outer letters {0, 3} (loss +-eps1) and the inner ones {1, 2} (+-eps2):
    for ``s`` outer uses, ``a0`` of them letter 0, the inner count ``a1`` must exceed a
    threshold for the loss to exceed eps, and binomial suffix sums give the rest.
    """
    from brute import double_dp_letters

    z1, z2 = MP.exp(eps1), MP.exp(eps2)
    p0, p1 = double_dp_letters(z1, z2, d1, d2, one=MP.mpf(1))
    m, n = [p0[y] for y in range(4)], [p1[y] for y in range(4)]
    l0, l1 = MP.log(m[0] / n[0]), MP.log(m[1] / n[1])  # eps1 and eps2
    binom = [[MP.binomial(t, a) for a in range(t + 1)] for t in range(k + 1)]

    def suffix(t: int, x, y) -> list:
        out = [MP.mpf(0)] * (t + 2)
        for a in range(t, -1, -1):
            out[a] = out[a + 1] + binom[t][a] * x**a * y ** (t - a)
        return out

    s0 = [suffix(t, m[1], m[2]) for t in range(k + 1)]
    s1 = [suffix(t, n[1], n[2]) for t in range(k + 1)]
    big_e = MP.exp(eps)
    total = 1 - (1 - d1) ** k
    for s in range(k + 1):
        t = k - s
        for a0 in range(s + 1):
            outer = l0 * (2 * a0 - s)
            # loss = outer + l1 (2 a1 - t) > eps  <=>  a1 > (eps - outer) / (2 l1) + t / 2
            amin = int(MP.floor((eps - outer) / (2 * l1) + MP.mpf(t) / 2)) + 1
            amin = min(max(amin, 0), t + 1)
            o0 = binom[s][a0] * m[0] ** a0 * m[3] ** (s - a0)
            o1 = binom[s][a0] * n[0] ** a0 * n[3] ** (s - a0)
            total += binom[k][s] * (o0 * s0[t][amin] - big_e * o1 * s1[t][amin])
    return total


def test_k_max_is_searched_up_to_its_value():
    """Was "every k up to 64 meets the target; raise the limit" with --k-max 120."""
    r = largest_k(dx.Mechanism([("0.3", "0"), ("0.15", "0.02")]), "10", "1e-5", k_max=120)
    assert r.answer == 104
    target = MP.mpf(1) / 10**5
    paper = (MP.mpf(3) / 10, MP.mpf(0), MP.mpf(15) / 100, MP.mpf(2) / 100)
    d104, d105 = (_two_dp_delta_mp(*paper, k, MP.mpf(10)) for k in (104, 105))
    assert d104 <= target < d105
    for probe, ref in ((r.meets, d104), (r.fails, d105)):
        lo, hi = (Fraction(x) for x in probe.as_dict(30)["delta_interval"])
        assert lo <= _mp_frac(ref) <= hi and hi - lo <= Fraction(1, 10**34)
    with pytest.raises(InvalidParameterError, match="every k up to 100 meets"):
        largest_k(dx.Mechanism([("0.3", "0"), ("0.15", "0.02")]), "10", "1e-5", k_max=100)


def test_calibrate_with_a_log_and_a_rational_answers(capsys):
    """Was AttributeError: 'Bounded' object has no attribute 'domain' (a traceback)."""
    args = ["calibrate", "--dp", "log(2),1e-6", "--dp", "1/10,0.01", "--target", "5,1e-3"]
    assert main([*args, "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    k = int(got["answer"])
    meets = got["certificate"]["meets"]["delta_interval"]
    fails = got["certificate"]["fails"]["delta_interval"]
    assert Fraction(meets[1]) <= Fraction(1, 1000) < Fraction(fails[0])
    # independently: delta(5) at k and k + 1 around the target
    mech = (MP.log(2), MP.mpf(1) / 10**6, MP.mpf(1) / 10, MP.mpf(1) / 100)
    d_k, d_next = (_two_dp_delta_mp(*mech, n, MP.mpf(5)) for n in (k, k + 1))
    assert d_k <= MP.mpf(1) / 1000 < d_next
    assert Fraction(meets[0]) <= _mp_frac(d_k) <= Fraction(meets[1])
    assert Fraction(fails[0]) <= _mp_frac(d_next) <= Fraction(fails[1])


def test_calibrate_param_with_a_log_in_the_template(capsys):
    args = ["calibrate", "--dp", "log(1+x),1e-6", "--dp", "1/10,0.01", "--param", "x"]
    args += ["--grid", "1/10", "-k", "10", "--target", "5,1e-3", "--format", "json"]
    assert main(args) == 0
    got = json.loads(capsys.readouterr().out)
    x = Fraction(got["answer"])
    lo, hi = (Fraction(v) for v in got["certificate"]["meets"]["delta_interval"])
    assert lo >= 0 and hi <= Fraction(1, 1000)
    # independently: x meets the target and x + 1/10 fails it (eps1 = log(1 + x))
    for xx, ok in ((x, True), (x + Fraction(1, 10), False)):
        e1 = MP.log(1 + MP.mpf(xx.numerator) / xx.denominator)
        d = _two_dp_delta_mp(e1, MP.mpf(1) / 10**6, MP.mpf(1) / 10, MP.mpf(1) / 100, 10, 5)
        assert (d <= MP.mpf(1) / 1000) is ok


# ---------------------------------------------------------------------------------------
# The relative width users read: (upper - lower) / lower, none when the lower end is 0
# ---------------------------------------------------------------------------------------


class _Enclosed:
    """A stand-in for a bounds result: every delta is the one enclosure ``[lo, hi]``."""

    def __init__(self, lo: flint.arb, hi: flint.arb) -> None:
        self.v = Value.from_interval(lo, hi, nonnegative=True)

    def delta(self, _eps):
        return self.v


def test_reported_relative_width_is_null_when_the_lower_end_is_0():
    """[0, 1.9e-8] printed a relative_width of 1.9e+292 (measured against 1e-300)."""
    rows = bounded_rows(_Enclosed(flint.arb(0), flint.arb("1.9e-8").upper()), "delta", ["1"])
    assert rows[0]["delta_lower"] == "0" and rows[0]["relative_width"] is None
    assert json.loads(to_json({"curve": rows}))["curve"][0]["relative_width"] is None
    head, line = to_csv(rows).splitlines()
    assert head == "epsilon,delta_lower,delta_upper,relative_width"
    assert line.endswith(",")  # an empty cell, not a number


def test_reported_relative_width_is_upper_minus_lower_over_lower_rounded_up():
    lo, hi = Fraction(9, 10**15), Fraction(22, 10**10)  # a positive lower end
    rows = bounded_rows(
        _Enclosed(flint.arb(flint.fmpq(9, 10**15)), flint.arb(flint.fmpq(22, 10**10))),
        "delta",
        ["1"],
    )
    printed = Fraction(rows[0]["relative_width"])
    truth = (hi - lo) / lo  # 244443.44...: rounded up to 3 digits, 245000
    assert truth <= printed <= truth * Fraction(1001, 1000) + 1000
    assert printed == 245000
    tiny = flint.arb(2) ** -1100  # below the refinement floor 1e-300: still against itself
    rows = bounded_rows(_Enclosed(tiny, 3 * tiny), "delta", ["1"])
    assert Fraction(rows[0]["relative_width"]) == 2
