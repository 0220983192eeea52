"""Output sized for a person: short header lines, tables that fit 120 columns,
10 significant digits by default, enclosures printed with the digits they certify, no
padded zeros on exact inputs, one naming of mechanisms in the order given.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_readme import COMMANDS, SLOW  # noqa: I001 - tests/ is on sys.path (rootdir)

from dpcompose_exact.cli.app import main
from dpcompose_exact.numbers.format import short_enclosure

ENCLOSURE = re.compile(r"\[([-0-9.e+]+), ([-0-9.e+]+)\]")


def run(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    assert code == 0, err.getvalue()
    return out.getvalue()


def widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def test_the_main_job_fits_a_terminal():
    out = run("compose")
    lines = out.splitlines()
    assert widest(out) <= 100  # was 166 (the title line)
    assert all(len(line) <= 100 for line in lines if line.startswith("#"))
    # 10 significant digits by default (was 30): delta(0) = 0.34232732338460745...
    assert lines[5].split()[2] == "0.3423273234"


def _table_commands() -> list:
    out = []
    for line in COMMANDS:
        argv = shlex.split(line, comments=True)[1:]
        if line.startswith(SLOW) or argv[0] in ("plot", "verify", "audit", "sweep"):
            continue
        if "--format" in argv and argv[argv.index("--format") + 1] != "table":
            continue
        out.append(pytest.param(argv, id=" ".join(argv)[:60]))
    return out


@pytest.mark.parametrize("argv", _table_commands())
def test_no_table_line_of_the_readme_commands_exceeds_120_characters(argv, tmp_path):
    assert widest(run(*argv)) <= 120


def _json_ends(argv: list[str]) -> tuple[str, str]:
    (row,) = json.loads(run(*argv, "--format", "json"))["curve"]
    return row["epsilon_lower"], row["epsilon_upper"]


@pytest.mark.parametrize(
    "argv",
    [
        # DP-SGD (was [1.99585109787666903358172021398, 1.9958757171253700413160458993])
        ["epsilon", "--mech", "gaussian(0.96)@0.01:1000", "--delta", "1e-5"],
        # a mixed list: subsampled Gaussian steps and randomized response
        ["epsilon", "--mech", "gaussian(1)@1/100:100", "--mech", "rr(1/2,2):5", "--delta", "1e-5"],
    ],
)
def test_an_enclosure_prints_only_certified_digits(argv):
    table = run(*argv)
    assert widest(table) <= 100
    (lo, hi), = ENCLOSURE.findall(table)
    full_lo, full_hi = _json_ends(argv)  # the enclosure at 30 digits (JSON keeps them)
    # the printed ends contain the certified enclosure (rounded outward) ...
    assert Fraction(Decimal(lo)) <= Fraction(Decimal(full_lo))
    assert Fraction(Decimal(hi)) >= Fraction(Decimal(full_hi))
    # ... and stop one digit after the first digit where the ends differ
    a, b = lo.replace(".", ""), hi.replace(".", "")
    assert len(a) == len(b) and a[:-1] != b[:-1]
    first = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    assert len(a) == first + 2, (lo, hi)
    # the given delta is printed exactly, without padded zeros (was 0.0000100000...0)
    assert table.splitlines()[-1].split()[-1] == "0.00001"


def test_mechanisms_keep_their_order_and_one_name():
    out = run("delta", "--mech", "gaussian(2):10", "--mech", "0.3,0+0.15,0.02:20", "--eps", "2")
    assert out.startswith(
        "# delta(eps) of the composition of 10 x gaussian(2), 20 x {(0.3, 0), (0.15, 0.02)};"
    )
    summary = run("summary", "--mech", "gaussian(0.96)@0.01:1000", "--orders", "2")
    assert summary.startswith("# certified summary of 1000 x gaussian(24/25)@1/100\n")
    rr = run("delta", "--mech", "rr(1/2,2):5", "--eps", "1")
    assert "5 x rr(1/2,2)" in rr.splitlines()[0]


def test_a_long_list_of_mechanisms_moves_below_a_short_title():
    argv = ["delta", "--eps", "3"]
    for i in range(1, 9):
        argv += ["--mech", f"gaussian({i + 1})@1/{10 * i}:{100 * i}"]
    out = run(*argv)
    lines = out.splitlines()
    assert all(len(line) <= 100 for line in lines)
    assert lines[0].startswith("# delta(eps) of the composition of 3600 mechanisms (8 kinds)")
    assert lines[1].startswith("# mechanisms: 100 x gaussian(2)@1/10, 200 x gaussian(3)@1/20")


def test_digits_option_still_gives_more():
    out = run("compose", "-k", "2", "--digits", "25")
    assert out.splitlines()[5].split()[2] == "0.1072404837320730482956363"


numbers = st.fractions(
    min_value=Fraction(-(10**6)), max_value=Fraction(10**6), max_denominator=10**12
)


@settings(max_examples=300, deadline=None)
@given(numbers, numbers, st.integers(min_value=1, max_value=40))
def test_short_enclosure_contains_and_stops_after_the_first_difference(x, y, digits):
    lo, hi = sorted((x, y))
    lo_s, hi_s = (f"{Decimal(v.numerator) / Decimal(v.denominator):.30g}" for v in (lo, hi))
    a, b = short_enclosure(lo_s, hi_s, digits)
    assert Fraction(Decimal(a)) <= Fraction(Decimal(lo_s))
    assert Fraction(Decimal(b)) >= Fraction(Decimal(hi_s))
    # never more significant digits than asked for
    for text in (a, b):
        mant = text.split("e")[0].replace("-", "").replace(".", "").lstrip("0")
        assert len(mant.rstrip("0") or "0") <= digits + 1


@settings(max_examples=100, deadline=None)
@given(numbers, numbers, st.integers(min_value=1, max_value=12), st.integers(-4000, 4000))
def test_short_enclosure_beyond_the_doubles_range(x, y, digits, shift):
    """Ends far below (or above) the doubles' range: the same digits, shifted (no float)."""
    lo, hi = sorted((abs(x), abs(y)))
    scale = Fraction(10) ** shift
    plain = short_enclosure(*(f"{Decimal(v.numerator) / Decimal(v.denominator):.30g}"
                              for v in (lo, hi)), digits)
    lo_s, hi_s = (str((Decimal(v.numerator) / Decimal(v.denominator)).scaleb(shift))
                  for v in (lo, hi))
    a, b = short_enclosure(lo_s, hi_s, digits)
    assert Fraction(Decimal(a)) <= Fraction(Decimal(lo_s))
    assert Fraction(Decimal(b)) >= Fraction(Decimal(hi_s))
    assert Fraction(Decimal(a)) == Fraction(Decimal(plain[0])) * scale
    assert Fraction(Decimal(b)) == Fraction(Decimal(plain[1])) * scale


def test_short_enclosure_of_a_value_below_the_doubles_range():
    # the box's gau(9.98)@0.000197 x125002 delta(2.94): math.log10 of the fraction raised
    assert short_enclosure("1.0039300e-2806", "1.1529900e-2806", 7) == ("1.00e-2806", "1.16e-2806")


# -- the four hostile inputs: one line that says what to do ------------


def fails(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    assert code == 2 and out.getvalue() == ""
    text = err.getvalue()
    assert text.count("\n") == 1 and text.startswith("dpcompose: error: ")
    return text


def test_a_spec_without_its_count_says_so():
    # was: "0.3,0: = '' must be a non-negative integer; write it in digits ..."
    err = fails("epsilon", "--mech", "0.3,0:", "--delta", "1e-5")
    assert "--mech '0.3,0:' has no count after ':'" in err and "such as 0.3,0:5" in err


def test_an_unknown_family_lists_the_kinds():
    # was: "--mech 'foo(1)' is malformed; expected EPS,DELTA such as 0.3,1e-5"
    err = fails("epsilon", "--mech", "foo(1):3", "--delta", "1e-5")
    assert "unknown mechanism 'foo'" in err
    for kind in ("EPS,DELTA", "gaussian(SIGMA", "laplace(B", "rr(P", "dlap(A"):
        assert kind in err


def test_a_count_over_the_lattice_limit_says_the_largest_k():
    # was: "the composed pair has 4000000001 loss values, over the certified-mode limit of
    # 500001; use a smaller k": each use of the paper's pair adds 4 loss values, so the
    # largest k is (500001 - 1) / 4 = 125000 (computed here from the pair, not the code)
    err = fails("epsilon", "-k", "1e9", "--delta", "1e-5")
    assert "at most k = 125000 uses" in err


def test_an_eps_above_a_million_is_searched_on_the_grid():
    # laplace(1)@1/100 x 10^10 uses was refused: "eps(1/100000) is beyond the grid of this
    # composition" (the float search stopped at 1e6; a grid's estimate is 0 above its top)
    from dpcompose_exact.engines.epsguide import _bisect_estimate

    class Fold:  # an estimate that crosses 1e-5 at eps = 3e6
        def estimate(self, e: float) -> float:
            return 1e-5 * 2.0 ** ((3e6 - e) / 1e5)

    assert abs(_bisect_estimate(Fold(), 1e-5) - 3e6) < 1
