"""Any mechanism list, spec files, privacy curves and the certified large-k mode."""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest
import sympy
from brute import compose_kinds, compose_pairs_k, region_exact

from dpcompose_exact import InvalidParameterError, ResourceLimitError
from dpcompose_exact.engines.certified import CertifiedRegion, compose_certified
from dpcompose_exact.engines.results import delta_of_eps, eps_of_delta
from dpcompose_exact.paper.theorems import mixture_form
from dpcompose_exact.regions.pld import canonical_pair
from dpcompose_exact.regions.specs import MechanismKind, load_spec, parse_mech_spec
from dpcompose_exact.regions.tradeoff import dp_region

PAPER = (("0.3", "0"), ("0.15", "0.02"))


def _pair_letters(constraints):
    """Independent single-letter distribution of a region (vertices -> RR weights)."""
    region = dp_region(constraints, warn=False)
    dom = region.domain
    p0, p1 = [], []
    verts = region.half_vertices()
    xs = [x.as_rational() for x, _ in verts[1:]]
    c = region.fixed_point().as_rational()
    cons = list(reversed(region.constraints))
    if len(xs) < len(cons):
        xs.append(c)
    left = Fraction(0)
    for (loss, _), right in zip(cons, xs):
        e = dom.exp_loss(loss).as_rational()
        length = right - left
        left = right
        p0 += [e * length, length]
        p1 += [length, e * length]
    leak = 1 - verts[0][1].as_rational()
    p0 += [leak, Fraction(0)]
    p1 += [Fraction(0), leak]
    return list(zip(p0, p1))


def _product(letter_lists):
    pairs = [(Fraction(1), Fraction(1))]
    for letters in letter_lists:
        pairs = [(a * x, b * y) for a, b in pairs for x, y in letters if x or y]
    return pairs


def _exact_list(region):
    dom = region.domain
    return [(dom.exp_loss(l_).as_rational(), d.as_rational()) for l_, d in region.constraints]


def test_parse_mech_spec():
    kind = parse_mech_spec("0.3,0+0.15,0.02:5")
    assert kind == MechanismKind((("0.3", "0"), ("0.15", "0.02")), 5)
    with pytest.raises(InvalidParameterError, match="malformed"):
        parse_mech_spec("0.3,0")
    with pytest.raises(InvalidParameterError, match="must be a non-negative integer"):
        parse_mech_spec("0.3,0:-2")


def test_heterogeneous_multi_constraint_list_matches_enumeration():
    """Two kinds, three and one constraints, composed 2 and 2 times (e^eps rational)."""
    a = (("log(4)", "1/100"), ("log(2)", "1/20"), ("0", "3/10"))
    b = (("log(3)", "1/50"),)
    kinds = [MechanismKind(a, 2), MechanismKind(b, 2)]
    region, method = compose_kinds(kinds)
    assert method == "exact"
    la, lb = _pair_letters(list(a)), _pair_letters(list(b))
    expected = region_exact(_product([la, la, lb, lb]))
    assert _exact_list(region) == expected


@pytest.mark.parametrize(
    "specs",
    [
        ["0.3,0+0.15,0.02:3"],
        ["1,1e-5+0.5,1e-3+0.1,0.05:3"],
        ["0.3,0+0.15,0.02:2", "0.2,0.01:2", "log(2),0:1"],
        ["0.5,0+0,0.2:2", "0.25,0.1:1"],
    ],
)
def test_mixture_form_equals_direct_form(specs):
    kinds = [parse_mech_spec(s) for s in specs]
    direct, _ = compose_kinds(kinds)
    assert mixture_form(kinds) == direct


def test_single_kind_equals_compose():
    region, _ = compose_kinds([MechanismKind(PAPER, 7)])
    assert region == compose_pairs_k(list(PAPER), 7)[0]


def test_spec_files(tmp_path):
    toml = tmp_path / "spec.toml"
    toml.write_text(
        '[[mechanism]]\nconstraints = [["0.3", "0"], ["0.15", "0.02"]]\ncount = 3\n\n'
        '[[mechanism]]\nconstraints = [["1", "1e-6"]]\ncount = 2\n'
    )
    js = tmp_path / "spec.json"
    js.write_text(
        json.dumps(
            {
                "mechanisms": [
                    {"constraints": [["0.3", "0"], ["0.15", "0.02"]], "count": 3},
                    {"constraints": [["1", "1e-6"]], "count": 2},
                ]
            }
        )
    )
    a = load_spec(toml)
    assert a == load_spec(js)
    assert a[1] == MechanismKind((("1", "1e-6"),), 2)
    bad = tmp_path / "bad.toml"
    bad.write_text('[[mechanism]]\nconstraints = [[0.3, "0"]]\ncount = 3\n')
    with pytest.raises(InvalidParameterError, match="is a float; write it as a string"):
        load_spec(bad)
    with pytest.raises(InvalidParameterError, match="cannot read"):
        load_spec(tmp_path / "missing.json")
    (tmp_path / "empty.json").write_text("{}")
    with pytest.raises(InvalidParameterError, match="expected a list 'mechanism'"):
        load_spec(tmp_path / "empty.json")


@pytest.mark.parametrize("k", [1, 3, 40])
def test_certified_contains_exact(k):
    exact, _ = compose_pairs_k(list(PAPER), k)
    cert = compose_certified([(canonical_pair(dp_region(list(PAPER))), k)], digits=30)
    assert cert.losses == exact.losses
    dom = exact.domain
    for d, ball in zip(exact.deltas, cert.deltas):
        ex = dom.elem_ball(d, 400)
        assert ball.overlaps(ex)  # the certified ball contains the exact value
        assert dom.decimal(d, 30) == cert.delta_decimal(exact.deltas.index(d), 30)


def test_certified_multi_kind_and_three_constraints():
    kinds = [parse_mech_spec("1,1e-5+0.5,1e-3+0.1,0.05:6"), parse_mech_spec("0.2,0.01:4")]
    exact, _ = compose_kinds(kinds, mode="exact")
    cert, method = compose_kinds(kinds, mode="certified", digits=25)
    assert method == "certified" and isinstance(cert, CertifiedRegion)
    assert cert.losses == exact.losses
    assert [cert.delta_decimal(i, 25) for i in range(len(cert.losses))] == [
        exact.domain.decimal(d, 25) for d in exact.deltas
    ]


def test_auto_switches_to_certified_for_large_k():
    region, method = compose_kinds([MechanismKind(PAPER, 1000)], memory_limit=2**30)
    assert method == "certified"
    assert len(region.losses) == 2001
    with pytest.raises(ResourceLimitError, match="use a smaller k or the certified mode"):
        compose_kinds([MechanismKind(PAPER, 1000)], mode="exact", memory_limit=2**30)
    with pytest.raises(ResourceLimitError, match="certified-mode limit"):
        compose_kinds([MechanismKind(PAPER, 10**7)])


def test_certified_needs_one_generator():
    with pytest.raises(InvalidParameterError, match="commensurable"):
        compose_kinds([parse_mech_spec("0.3,0:2"), parse_mech_spec("log(2),0:2")], mode="certified")


def _hockey_stick_mp(region, eps):
    """delta(eps) from the exact vertices, in mpmath (independent of curves.py)."""
    dom = region.domain
    e = mpmath.exp(eps)
    best = mpmath.mpf(0)
    for x, y in region.vertices():
        xv, yv = (
            mpmath.mpf(dom.decimal(x, 45)) if not x.is_zero() else 0,
            (mpmath.mpf(dom.decimal(y, 45)) if not y.is_zero() else 0),
        )
        best = max(best, 1 - yv - e * xv)
    return best


@pytest.mark.parametrize("eps", ["0", "0.15", "0.2", "1", "log(2)", "2.9", "10"])
def test_delta_curve(eps):
    mpmath.mp.dps = 50
    region, _ = compose_pairs_k(list(PAPER), 10)
    p = delta_of_eps(region, eps, 30)
    expected = _hockey_stick_mp(
        region, mpmath.mpf(str(sympy.N(sympy.sympify(eps, rational=True), 50)))
    )
    assert abs(mpmath.mpf(p.delta_decimal) - expected) <= abs(expected) * 1e-28 + 1e-40
    back = sympy.sympify(p.delta).evalf(40)
    assert abs(mpmath.mpf(str(back)) - expected) <= abs(expected) * 1e-28 + 1e-40
    cert = compose_certified([(canonical_pair(dp_region(list(PAPER))), 10)])
    assert delta_of_eps(cert, eps, 30).delta_decimal == p.delta_decimal


@pytest.mark.parametrize("delta", ["0.2", "1e-3", "1e-6", "1e-12"])
def test_epsilon_curve_inverts_delta_curve(delta):
    mpmath.mp.dps = 50
    region, _ = compose_pairs_k(list(PAPER), 10)
    p = eps_of_delta(region, delta, 30)
    assert p.epsilon.startswith("log(")
    eps_val = mpmath.mpf(p.epsilon_decimal)
    assert abs(_hockey_stick_mp(region, eps_val) - mpmath.mpf(delta)) < mpmath.mpf(delta) * 1e-25
    exact_eps = sympy.sympify(p.epsilon).evalf(40)
    assert abs(mpmath.mpf(str(exact_eps)) - eps_val) < 1e-27
    cert = compose_certified([(canonical_pair(dp_region(list(PAPER))), 10)])
    assert eps_of_delta(cert, delta, 30).epsilon_decimal == p.epsilon_decimal


def test_certified_curves_below_the_smallest_loss():
    """Regression: odd k with pure constraints has no loss 0; eps in [0, l0) failed."""
    exact, _ = compose_pairs_k([("1", "0")], 3)
    cert = compose_certified([(canonical_pair(dp_region([("1", "0")])), 3)])
    assert exact.losses[0] != exact.domain.zero_loss()
    for eps in ("0", "0.5"):
        assert (
            delta_of_eps(cert, eps, 20).delta_decimal == delta_of_eps(exact, eps, 20).delta_decimal
        )
    for d in ("0.6", "0.9"):
        assert (
            eps_of_delta(cert, d, 20).epsilon_decimal == eps_of_delta(exact, d, 20).epsilon_decimal
        )


def test_epsilon_curve_edges():
    region, _ = compose_pairs_k(list(PAPER), 10)
    assert eps_of_delta(region, "0.9", 10).epsilon == "0"
    assert eps_of_delta(region, "0", 10).epsilon == "3"  # delta 0 from the top loss 10 x 0.3
    leaky, _ = compose_pairs_k([("0.3", "0.01"), ("0.15", "0.02")], 4)
    with pytest.raises(InvalidParameterError, match="below the probability"):
        eps_of_delta(leaky, "0.01", 10)
    with pytest.raises(InvalidParameterError, match="outside the valid range"):
        eps_of_delta(region, "1", 10)
    with pytest.raises(InvalidParameterError, match="negative"):
        delta_of_eps(region, "-1", 10)
