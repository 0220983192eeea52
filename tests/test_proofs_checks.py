"""Tests of proofs_checks: the full symbolic suite passes and every check catches a perturbation."""

from __future__ import annotations

import io
from fractions import Fraction

import pytest
import sympy

from proofs_checks import runner
from proofs_checks.__main__ import main
from proofs_checks._arrangement import Cell, facet_cells, signs_at, slice_cells, tie_normals
from proofs_checks._regions import theorem1_summand
from proofs_checks.conjecture import _cell_chamber, check_conjecture, loss_vectors3, multinomial
from proofs_checks.kov import check_kov, kov_delta
from proofs_checks.mixture import check_mixture
from proofs_checks.pair import canonical_weights, check_pair
from proofs_checks.remark2 import check_remark2
from proofs_checks.rotation import check_rotation
from proofs_checks.thm1 import check_thm1
from proofs_checks.thm2_thm3 import check_thm2_thm3, theorem3_term

pytestmark = pytest.mark.proofs


def _bump_top(counts, a):
    """Theorem 1 summand with the coefficient of the top outcome off by one."""
    coef, p0, p1 = theorem1_summand(counts, a)
    return coef + (1 if tuple(a) == tuple(counts) else 0), p0, p1


def _swap_cd(k, a, b, c, d):
    """Theorem 3 summand with c and d swapped in the subtracted monomial."""
    coef, i, loss, p0, _ = theorem3_term(k, a, b, c, d)
    return coef, i, loss, p0, (c, d)


def test_full_suite_passes():
    buf = io.StringIO()
    assert runner.run(stream=buf) == 0
    out = buf.getvalue()
    assert "ALL PASS" in out
    for name, _ in runner.list_checks():
        assert f"PASS {name} [" in out


def test_quick_suite_passes():
    buf = io.StringIO()
    assert runner.run(stream=buf, quick=True) == 0
    assert "(quick scopes)" in buf.getvalue()


def test_list_checks_and_cli(capsys):
    names = [n for n, _ in runner.list_checks()]
    assert len(names) == 8 and len(set(names)) == 8
    assert main(["--list"]) == 0
    assert "thm2_equals_thm3" in capsys.readouterr().out


def test_unknown_check_name_raises():
    with pytest.raises(KeyError, match="unknown check"):
        runner.run(["no_such_check"], stream=io.StringIO())


def test_runner_reports_failure_with_counterexample(monkeypatch):
    def perturbed(quick=False):
        return check_kov(max_k=3, formula=lambda k, i, x, d: kov_delta(k, i, x, d) + d)

    monkeypatch.setattr(runner, "CHECKS", [("kov_closed_form", "claim", perturbed)])
    buf = io.StringIO()
    assert runner.run(stream=buf) == 1
    lines = buf.getvalue().splitlines()
    assert lines[0].startswith("FAIL kov_closed_form [k<=3")
    assert lines[1].startswith("    k=1, i=0")
    assert lines[-1].startswith("FAILURES")


def test_pair_catches_wrong_alpha():
    res = check_pair(alpha=lambda x1, x2, d1, d2: 1 - (d2 - d1) * (1 + x2) / ((1 - d1) * (x1 - x2)))
    assert not res.passed
    text = "\n".join(res.counterexample)
    assert "chamber x1 > x2 > 1: vertex 1 beta_I" in text
    assert "-1/80" in text  # value of the difference at x1=3, x2=2, delta=(1/20, 1/10)


def test_thm2_thm3_catches_wrong_theorem3():
    res = check_thm2_thm3(max_k=3, theorem3=_swap_cd)
    assert not res.passed
    text = "\n".join(res.counterexample)
    assert "(Theorem 2 - Theorem 3)" in text
    assert "k=2, chamber eps1/eps2 in (1, 3)" in text


def test_thm2_thm3_catches_wrong_theorem1():
    res = check_thm2_thm3(max_k=2, theorem1=_bump_top)
    assert not res.passed
    assert "(Theorem 2 - Theorem 3)" in "\n".join(res.counterexample)


def test_kov_catches_wrong_formula():
    def bad(k, i, x, d):
        return kov_delta(k, i, x, d) + (d * 0 if i == 0 else (x - 1) / (1 + x) ** k)

    res = check_kov(max_k=4, formula=bad)
    assert not res.passed
    assert res.counterexample[0].startswith("k=2, i=1 (eps_i = 0*eps)")
    assert res.counterexample[0].endswith(": 2/25")


def test_remark2_catches_wrong_eta_and_lattice():
    res = check_remark2(max_k=2, eta=lambda y, d2: d2 + (1 - d2) * (y - 1) / (y + 2))
    assert not res.passed
    assert res.counterexample[0].startswith("(a) delta(0) of R(eps2, delta2) - eta")
    res2 = check_remark2(max_k=3, theorem3=_swap_cd)
    assert not res2.passed
    assert any(line.startswith("(c) k=") for line in res2.counterexample)


def test_mixture_catches_unweighted_conjugate_sum():
    res = check_mixture(quick=True, combine=lambda w, v: sum(v[1:], v[0]))
    assert not res.passed
    assert res.counterexample[0].startswith("n=2, chamber eps1 > eps2: vertex 0 beta_II")


def test_thm1_catches_wrong_summand():
    res = check_thm1(max_total=3, summand=_bump_top)
    assert not res.passed
    text = "\n".join(res.counterexample)
    assert "(Theorem 1 - enumeration)" in text
    assert "difference of deltas" in text


def test_rotation_catches_wrong_formulas():
    res = check_rotation(
        formulas={
            "g2": lambda fp, fpp: 2 * sympy.sqrt(2) * fpp / (1 - fp) ** 2,
            "delta": lambda a, b: 1 - b / (1 + a),
        }
    )
    assert not res.passed
    assert res.counterexample[0].startswith("g'': derivative - formula")
    assert res.counterexample[1].startswith("line conversion delta")


def test_conjecture_catches_wrong_heterogeneous_closed_form():
    res = check_conjecture(quick=True, parts="C", summand=_bump_top)
    assert not res.passed
    text = "\n".join(res.counterexample)
    assert "(mixture - direct)" in text
    assert text.startswith("(C) k=2")  # k=1: the bumped term never enters an edge


def test_conjecture_scope_is_exhaustive_with_cell_counts():
    buf = io.StringIO()
    assert runner.run(["conjecture"], stream=buf, quick=True) == 0
    line = buf.getvalue().splitlines()[0]
    assert line.startswith("PASS conjecture [")
    assert "(C) exhaustive n=3, every cell of eps1>eps2>eps3>0 sliced at eps1=1" in line
    # Counts from a separate hand count: six lines cross the triangle at k = 2, meeting in
    # four points (two of multiplicity 3); the facet eps3 = 0 is cut at eps2 = 1/3, 1/2.
    assert "k=1: 1/0/0 + facet 1/0; k=2: 12/15/4 + facet 3/2" in line


@pytest.mark.parametrize("k", [2, 3, 4])
def test_cell_enumeration_is_complete(k):
    """Euler characteristic of the open triangle, and every sign vector seen on a grid."""
    normals = tie_normals(loss_vectors3(k))
    lines, cells = slice_cells(normals)
    nv, ne, nf = (sum(1 for c in cells if c.dim == d) for d in (0, 1, 2))
    assert nv - ne + nf == 1
    flines, fcells = facet_cells(normals)
    assert sum(1 for c in fcells if c.dim == 1) - sum(1 for c in fcells if c.dim == 0) == 1
    listed = {c.signs for c in cells}
    steps = 97  # a prime, so grid points avoid the rational vertices' denominators
    seen = set()
    for a in range(1, steps):
        for b in range(1, a):
            seen.add(signs_at(lines, (Fraction(a, steps), Fraction(b, steps))))
    assert seen <= listed


def test_cell_chamber_merges_tied_losses():
    normals = tie_normals(loss_vectors3(2))
    lines, cells = slice_cells(normals)
    wall = next(c for c in cells if c.dim == 1)
    ch = _cell_chamber(wall, lines, 2)
    assert ch.nvars == 2
    d = next(n for n, s in zip(lines, wall.signs) if s == 0)
    a = tuple(max(v, 0) for v in d)
    b = tuple(max(-v, 0) for v in d)  # a - b = d: the two losses tie on the wall
    assert ch.value(a) == ch.value(b) and ch.exp(a) == ch.exp(b)
    assert ch.exp((1, 0, 0)) != ch.exp((0, 1, 0))


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_conjecture_catches_dropped_cell(dim):
    def drop_one(normals):
        lines, cells = slice_cells(normals)
        victim = next((c for c in cells if c.dim == dim), None)  # k = 1 has one face only
        return lines, [c for c in cells if c is not victim]

    res = check_conjecture(quick=True, parts="C", cells=drop_one)
    assert not res.passed
    assert res.counterexample[0].startswith("(C) census open cone: cell counts by dimension")


def test_conjecture_catches_duplicated_cell():
    def duplicate(normals):
        lines, cells = slice_cells(normals)
        faces = [c for c in cells if c.dim == 2]
        if len(faces) < 2:  # k = 1: nothing to duplicate
            return lines, cells
        twin = Cell(2, faces[0].point, faces[0].signs)
        return lines, [c for c in cells if c is not faces[1]] + [twin]

    res = check_conjecture(quick=True, parts="C", cells=duplicate)
    assert not res.passed
    assert "same sign vector" in "\n".join(res.counterexample)


def test_conjecture_catches_wrong_mixture_weight():
    def weight(k, j):
        return multinomial(k, j) + (1 if j == (1, 1, 0) else 0)

    res = check_conjecture(quick=True, parts="C", weight=weight)
    assert not res.passed
    text = "\n".join(res.counterexample)
    assert text.startswith("(C) k=2, ray eps ~ (9, 3, 1), j=(1, 1, 0), l in (")
    assert "(mixture - direct)" in text


def test_conjecture_catches_wrong_regrouping_weight():
    def weight(k, j):
        return multinomial(k, j) * (2 if j == (0, 1, 1, 0) else 1)

    res = check_conjecture(quick=True, parts="B", weight=weight)
    assert not res.passed
    assert res.counterexample[0].startswith("(B) n=3, k=2, P0: sequence expansion")


@pytest.mark.slow
def test_conjecture_catches_wrong_canonical_weight():
    def swapped(xs, ds):
        w = canonical_weights(xs, ds)
        return [w[1], w[0], *w[2:]]

    res = check_conjecture(quick=True, parts="A", pair_weights=swapped)
    assert not res.passed
    text = "\n".join(res.counterexample)
    assert "(A) n=3, delta1 > 0, eps3 > 0: vertex 2 beta_I" in text


@pytest.mark.slow
def test_conjecture_exhaustive_k5():
    """Every cell up to k = 5 (the default verify scope stops at k = 4)."""
    res = check_conjecture(parts="C", exhaustive_k=5)
    assert res.passed, res.counterexample
    # Face/edge/vertex counts of k = 5 from a separate count by the line-arrangement formulas.
    assert "k=5: 1597/2511/915 + facet " in res.scope


def test_inactive_constraint_weights_agree_with_the_exact_engine():
    """The proof page's example: e^eps = (4, 2, 1), delta = (1/100, 1/5, 1/4)."""
    from dpcompose_exact.errors import InactiveConstraintWarning
    from dpcompose_exact.regions.pld import canonical_pair
    from dpcompose_exact.regions.specs import MechanismKind

    kind = MechanismKind((("log(4)", "1/100"), ("log(2)", "1/5"), ("0", "1/4")), 1)
    with pytest.warns(InactiveConstraintWarning, match="log\\(2\\), 1/5"):
        region = kind.region()
    pld = canonical_pair(region)
    dom = pld.domain
    weights: dict[Fraction, Fraction] = {}
    for loss, mass in pld.masses:
        x = dom.exp_loss(loss).as_rational()
        key = max(x, 1 / x)
        weights[key] = weights.get(key, Fraction(0)) + mass.as_rational()
    assert pld.leak.as_rational() == Fraction(1, 100)
    rat = sympy.Rational
    active = canonical_weights([4, 1], [rat(1, 100), rat(1, 4)])
    assert weights == {4: Fraction(str(active[0])), 1: Fraction(str(active[1]))}
    naive = canonical_weights([4, 2, 1], [rat(1, 100), rat(1, 5), rat(1, 4)])
    assert naive[1] == rat(-27, 200)  # the inactive constraint gets a negative weight
