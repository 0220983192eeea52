"""Directed roundings are the exact value's own on the certified and bounds routes.

The certified route rounded each delta from its ball's upper end read at 53 bits
(``arb.upper()``): about 16 of 30 digits were right.  Every rounding is now decided by the
ball, or by the region recomputed once at a higher precision for the rows the balls leave
open, and checked against independent methods: the exact route, exact rationals, and the
same region at twice the digits.

The bounds route printed its nearest certified decimal whatever ``--rounding`` said: it
now prints the directed rounding when its enclosure decides it, else the enclosure's
outward end, marked as such.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction

import flint
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rounding import brute_directed

from dpcompose_exact.cli import main
from dpcompose_exact.engines.certified import compose_certified
from dpcompose_exact.engines.results import CertifiedResult, Exactness
from dpcompose_exact.errors import CertificationError
from dpcompose_exact.numbers.format import (
    directed_ends,
    directed_rational,
)
from dpcompose_exact.numbers.value import Value
from dpcompose_exact.presentation.rows import bounded_rows, region_rows, table_rows
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.tradeoff import dp_region

PAPER = [("0.3", "0"), ("0.15", "0.02")]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def run_json(capsys, *argv):
    return json.loads(run(capsys, *argv, "--format", "json"))


def csv_rows(text):
    lines = text.strip().splitlines()
    return [line.split(",") for line in lines[1:]]


def q(text: str) -> Fraction:
    return Fraction(Decimal(text))


# -- directed_ends: the one reading of a ball's directed roundings ------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.fractions(min_value=Fraction(-(10**6)), max_value=Fraction(10**6)).filter(lambda x: x != 0),
    st.integers(1, 25),
    st.integers(-400, 400),
)
def test_directed_ends_of_an_exact_point_is_the_exact_rounding(x, digits, shift):
    value = x * Fraction(2) ** shift
    with flint.ctx.workprec(2000):
        ball = flint.arb(flint.fmpq(value.numerator, value.denominator))
    for down in (False, True):
        a, b = directed_ends(ball, digits, down)
        expected = directed_rational(flint.fmpq(value.numerator, value.denominator), digits, down)
        if ball.is_exact():  # a dyadic point: decided, and the exact rounding
            assert a == b == expected
        else:  # a 2000-bit ball: decided unless it straddles a decimal (not here)
            assert q(a) <= q(expected) <= q(b)
        assert q(a) == brute_directed(q(a), digits, not down)  # a decimal of `digits` digits


def test_directed_ends_never_reads_53_bits():
    # delta(0) of k = 100 (certified ball, 142 bits): arb.upper() is 0.6779819869551775290...
    with flint.ctx.workprec(200):
        ball = flint.arb("0.6779819869551774925999741152376") + flint.arb(0, 1e-36)
    assert directed_ends(ball, 30, down=False) == ("0.677981986955177492599974115238",) * 2
    assert directed_ends(ball, 30, down=True) == ("0.677981986955177492599974115237",) * 2


def test_a_ball_straddling_a_decimal_is_not_decided():
    with flint.ctx.workprec(200):
        wide = Value.from_ball(flint.arb("0.3335") + flint.arb(0, 0.001))
    assert wide.directed(3, "up") == ("0.335", False)  # the outward end, marked undecided
    assert wide.directed(3, "down") == ("0.332", False)
    assert wide.directed(2, "up") == ("0.34", True)


def test_a_delta_just_below_one_rounds_without_an_impossible_precision():
    # the ball of 1 - 1e-877 straddles 1 at any affordable precision
    with flint.ctx.workprec(150):
        ball = 1 - flint.arb(0, 1e-38)
    assert Value.from_ball(ball, nonnegative=True).directed(30, "up")[1] is False
    near_one = Value.from_ball(ball, nonnegative=True, below_one=True)
    assert near_one.directed(30, "up") == ("1.00000000000000000000000000000", True)
    assert near_one.directed(30, "down") == ("0." + "9" * 30, True)


# -- the certified route against independent methods --------------------------------------


@pytest.mark.parametrize("rounding", ["up", "down"])
def test_certified_k100_rounds_as_the_exact_route(capsys, rounding):
    # regression: delta(0) rounded up was 0.677981986955177529097227306921 (200 of 201 wrong)
    args = ["compose", "-k", "100", "--decimals-only", "--rounding", rounding]
    cert = run_json(capsys, *args)
    exact = run_json(capsys, *args, "--method", "exact")
    assert cert["method"] == "certified" and exact["method"] == "exact"
    assert len(cert["region"]) == len(exact["region"]) == 201
    assert cert["region"] == exact["region"]  # every decimal and every rounding
    first = cert["region"][0]["delta_rounded"]
    assert first == {"up": "0.677981986955177492599974115238"}.get(
        rounding, "0.677981986955177492599974115237"
    )


@pytest.mark.parametrize("rounding", ["up", "down"])
def test_certified_curve_queries_round_as_the_exact_route(capsys, rounding):
    # delta(1) (between two losses) and eps(1e-3) (a log on a segment) at k = 100
    for query in (["delta", "--eps", "1,0.4"], ["epsilon", "--delta", "1e-3,0.5"]):
        args = [*query, "-k", "100", "--decimals-only", "--rounding", rounding]
        cert = run_json(capsys, *args, "--method", "certified")
        exact = run_json(capsys, *args, "--method", "exact")
        assert cert["curve"] == exact["curve"], query
    up = run_json(capsys, "delta", "-k", "100", "--eps", "1", "--method", "certified")
    assert up["curve"][0]["delta_rounded"] == "0.503361390311404094641135541335"


def test_certified_k1000_csv_rounds_as_sixty_digits_say(capsys):
    # the k = 1000 CSV, against the same certified route at 60 digits (nearest, within one
    # unit of the 60th digit): the ceiling at 30 digits follows whenever the 60-digit
    # decimal is not within one unit of a 30-digit decimal
    rows = csv_rows(run(capsys, "compose", "-k", "1000", "--format", "csv", "--decimals-only"))
    fine = run_json(capsys, "compose", "-k", "1000", "--decimals-only", "--digits", "60")
    assert fine["method"] == "certified" and len(rows) == len(fine["region"]) == 2001
    checked = 0
    for row, ref in zip(rows, fine["region"]):
        assert row[2] == "up"
        x = q(ref["delta_decimal"])
        if x == 0:
            assert row[1] == "0"
            continue
        ulp60 = brute_directed(x, 60, True) - brute_directed(x, 60, False) or x / 10**59
        lo, hi = brute_directed(x - ulp60, 30, True), brute_directed(x + ulp60, 30, True)
        if lo == hi:
            assert q(row[1]) == lo, row
            checked += 1
    assert checked > 1990


def test_certified_leak_is_rounded_from_the_exact_rational(capsys):
    # regression: 1 - (1 - 10^-6)^2000 = 0.00199800233066959674796601679543... was printed
    # rounded up as 0.00199800233066959676345164531597
    out = run(capsys, "compose", "--dp", "0.1,1e-6", "-k", "2000", "--decimals-only",
              "--format", "csv")  # fmt: skip
    rows = csv_rows(out)
    leak = 1 - (1 - Fraction(1, 10**6)) ** 2000
    assert rows[-1][1] == "0.00199800233066959674796601679544"
    assert q(rows[-1][1]) == brute_directed(leak, 30, True)
    assert all(q(r[1]) >= q(rows[-1][1]) for r in rows)  # the deltas decrease to the leak


def test_deltas_next_to_one_round_to_one_up_and_to_nines_down(capsys):
    # (1, 1/2)-DP 500 times: every delta lies within 1e-150 of 1, the balls straddle 1
    for rounding, text in (("up", "1.00000000000000000000000000000"), ("down", "0." + "9" * 30)):
        args = ["compose", "--dp", "1,0.5", "-k", "500", "--decimals-only", "--rounding", rounding]
        cert = run_json(capsys, *args, "--method", "certified")
        exact = run_json(capsys, *args, "--method", "exact")
        assert cert["region"] == exact["region"]
        assert {r["delta_rounded"] for r in cert["region"]} == {text}


def _paper_region(k: int, digits: int = 30):
    return compose_certified([(canonical_pair(dp_region(PAPER)), k)], digits=digits)


def test_rows_the_balls_leave_open_are_decided_by_one_sharper_region():
    # balls widened to 1e-31 (relative): many straddle a 30-digit decimal; each row's
    # rounding must still be the exact one, from one recomputation at a higher precision
    region = _paper_region(60)
    with flint.ctx.workprec(region.prec):
        wide = tuple(b + b * flint.arb(0, 1e-31) for b in region.deltas)
    result = CertifiedResult(replace(region, deltas=wide))
    open_rows = sum(
        len(set(directed_ends(b, 30, False, True))) > 1 for b in wide[:-1]
    )  # (the last row, the leak, has an exact value)
    assert open_rows >= 5
    exact = CertifiedResult(region)
    for rounding in ("up", "down"):
        got = [r["delta_rounded"] for r in region_rows(result, 30, False, rounding=rounding)]
        want = [r["delta_rounded"] for r in region_rows(exact, 30, False, rounding=rounding)]
        assert got == want
    assert isinstance(result._sharp, CertifiedResult)  # one sharper region, made once
    assert result._sharp._sharp is False  # and it decided every row


def test_without_the_composed_kinds_the_outward_end_is_printed():
    region = _paper_region(20)
    with flint.ctx.workprec(region.prec):
        wide = tuple(b + flint.arb(0, 1e-3) for b in region.deltas)
    result = CertifiedResult(replace(region, deltas=wide, kinds=(), exact_leak=None))
    value = result.listed_delta(0)  # delta(0) = 0.342327..., known to +-1e-3 only
    assert value.directed(3, "up") == (directed_ends(wide[0], 3, False)[1], False)
    assert value.directed(3, "down") == (directed_ends(wide[0], 3, True)[0], False)
    assert q(value.rounded(3, "up")) >= Fraction("0.343327")
    assert q(value.rounded(3, "down")) <= Fraction("0.341327")
    with pytest.raises(CertificationError, match="certified to"):
        value.decimal(30)


def test_a_sharper_region_that_cannot_be_made_leaves_the_outward_end(monkeypatch):
    import dpcompose_exact.engines.listed_results as results

    def refuse(*args, **kwargs):
        raise CertificationError("could not certify (test)")

    region = _paper_region(20)
    with flint.ctx.workprec(region.prec):
        wide = tuple(b + flint.arb(0, 1e-3) for b in region.deltas)
    result = CertifiedResult(replace(region, deltas=wide))
    monkeypatch.setattr(results, "compose_certified", refuse)
    assert result.listed_delta(0).directed(3, "up") == (directed_ends(wide[0], 3, False)[1], False)
    assert result.sharper() is None


def test_certified_rows_stay_fast():
    # regression: rounding each delta from an exact rational end (20000 digits at k = 10^5)
    # made the paper's k = 10^5 CSV take 448 s of CPU; rows are ~50 us each now
    region = _paper_region(20000)
    t0 = time.process_time()  # CPU time: a loaded machine does not fail it
    rows = sum(1 for _ in region_rows(CertifiedResult(region), 30, False, rounding="up"))
    assert rows == len(region.losses) == 40001
    assert time.process_time() - t0 < 8


# -- the bounds route honours --rounding ------------------------------------------------


BOUNDS = ["delta", "--dp", "log(2),1e-6", "--dp", "log(3)-log(2),1e-4", "--dp", "1/10,0.01",
          "-k", "12", "--eps", "0,0.5", "--decimals-only"]  # fmt: skip


@pytest.mark.parametrize("rounding", ["up", "down"])
def test_bounds_route_rounds_in_the_direction_asked(capsys, rounding):
    # regression: the nearest decimal 0.189255546563532154712423529035 was printed for
    # delta(0) = 0.18925554656353215471242352903541... with "rounding": "up", and with
    # --rounding down delta(1/2) was printed above the exact value
    bounds = run_json(capsys, *BOUNDS, "--method", "bounds", "--rounding", rounding)
    exact = run_json(capsys, *BOUNDS, "--method", "exact", "--rounding", rounding)
    assert bounds["rounding"] == rounding
    for b, e in zip(bounds["curve"], exact["curve"]):
        assert b["delta_decimal"] == e["delta_decimal"]
        assert b["delta_rounded"] == e["delta_rounded"]
        assert b["delta_rounded_by"] == "value"  # the enclosure decides the rounding
    want = {"up": "0.189255546563532154712423529036", "down": "0.189255546563532154712423529035"}
    assert bounds["curve"][0]["delta_rounded"] == want[rounding]
    if rounding == "down":
        assert bounds["curve"][1]["delta_rounded"] == "0.0482024262274485794978951199350"


def test_bounds_table_and_csv_print_the_directed_decimals(capsys):
    table = run(capsys, *BOUNDS, "--method", "bounds", "--digits", "30")
    assert "0.189255546563532154712423529036" in table and "rounded up" in table
    short = run(capsys, *BOUNDS, "--method", "bounds")  # tables: 10 digits by default
    assert "0.1892555466" in short and "0.18925554656" not in short
    down = run(capsys, *BOUNDS, "--method", "bounds", "--rounding", "down", "--format", "csv")
    rows = csv_rows(down)
    assert rows[1][1] == "0.0482024262274485794978951199350" and rows[1][-1] == "down"


def test_bounds_enclosure_too_wide_to_decide_prints_its_outward_end_marked():
    with flint.ctx.workprec(200):  # three digits certified (0.188), straddling 0.188
        v = Value.from_interval(flint.arb("0.187995"), flint.arb("0.188005"), nonnegative=True)
    assert v.decimal(3) == "0.188"
    assert v.directed(3, "up") == ("0.189", False)  # the upper end, rounded up
    assert v.directed(3, "down") == ("0.187", False)  # the lower end, rounded down
    assert v.directed(2, "up") == ("0.19", True) and v.directed(2, "down") == ("0.18", True)

    class Stub:  # a bounds result whose one answer is that enclosure
        kind = Exactness.BOUNDS

        def delta(self, eps):
            return v

    rows = bounded_rows(Stub(), "delta", ["1"], digits=3, rounding="up")
    assert rows == [
        {"epsilon": "1", "delta_decimal": "0.188", "delta_rounded": "0.189",
         "delta_rounded_by": "enclosure"}
    ]  # fmt: skip
    assert table_rows(rows)[0]["delta_rounded"] == "0.189 (outward end)"
    decided = bounded_rows(Stub(), "delta", ["1"], digits=2, rounding="down")
    assert decided[0]["delta_rounded"] == "0.18" and decided[0]["delta_rounded_by"] == "value"
    assert table_rows(decided)[0]["delta_rounded"] == "0.18"
    assert "delta_rounded" not in bounded_rows(Stub(), "delta", ["1"], 3, "nearest")[0]
