"""A mechanism defined outside the package composes through every door, router untouched.

The toy is docs/adding_a_mechanism.md's clamped geometric mechanism: a query in {0, 1},
the output ``x`` in ``{-n, ..., n + 1}`` with probability proportional to ``alpha^|x - d|``.
It is one class in this file; nothing in the package names it.  Its k-fold composition is
checked against tests/brute.py's enumeration of the product distribution, exactly.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from fractions import Fraction
from typing import Any

import pytest
from brute import product, region_exact

import dpcompose_exact as dx
from dpcompose_exact.algebra import PLD, ExpDomain, QzElem
from dpcompose_exact.cli.app import main
from dpcompose_exact.numbers import linear_form
from dpcompose_exact.regions.protocol import FinitePair, LossPair


class ClampedGeometric:
    """``P_d(x)`` proportional to ``alpha^|x - d|`` on ``{-n, ..., n + 1}``, d in {0, 1}."""

    def __init__(self, alpha: Any, n: Any) -> None:
        self.alpha = Fraction(str(alpha))
        self.n = int(n)
        if not 0 < self.alpha < 1 or self.n < 0:
            raise dx.InvalidParameterError(f"need 0 < alpha < 1 and n >= 0, got {alpha}, {n}")

    def letters(self) -> tuple[dict[int, Fraction], dict[int, Fraction]]:
        """The two distributions, exactly (the map x -> 1 - x swaps them: symmetric)."""
        xs = range(-self.n, self.n + 2)
        z = sum(self.alpha ** abs(x) for x in xs)
        p0 = {x: self.alpha ** abs(x) / z for x in xs}
        p1 = {x: self.alpha ** abs(x - 1) / z for x in xs}
        return p0, p1

    # -- the mechanism protocol --------------------------------------------------------
    def loss_pair(self) -> LossPair:
        p0, p1 = self.letters()
        r = 1 / self.alpha
        form = linear_form(f"log({r.numerator}/{r.denominator})")
        dom = ExpDomain.for_forms([form])
        unit = dom.loss(form)
        masses = []
        for x in p0:  # loss log(p0/p1) = (|x - 1| - |x|) log(1/alpha): +-1 unit
            sign = abs(x - 1) - abs(x)
            masses.append((tuple(sign * c for c in unit), QzElem.from_rational(p0[x])))
        return FinitePair(PLD.from_masses(dom, masses, QzElem.from_rational(0)))

    def describe(self) -> str:
        return f"clamped geometric alpha={self.alpha} n={self.n}"

    def to_dict(self) -> dict[str, Any]:
        return {"clamped_geometric": {"alpha": str(self.alpha), "n": str(self.n)}}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClampedGeometric) and (self.alpha, self.n) == (
            other.alpha,
            other.n,
        )

    def __hash__(self) -> int:
        return hash((self.alpha, self.n))


TOY = ClampedGeometric("1/2", 2)


def _brute_region(k: int) -> list[tuple[Fraction, Fraction]]:
    p0, p1 = TOY.letters()
    return region_exact(list(product(p0, p1, k)))


def test_the_toy_composes_through_the_front_door_exactly():
    c = dx.compose(TOY, 3)
    assert c.is_exact and len(c.constraints) == len(_brute_region(3))
    for ratio, delta in _brute_region(3):  # (e^eps, delta) of every likelihood ratio >= 1
        assert Fraction(c.delta(f"log({ratio.numerator}/{ratio.denominator})").exact) == delta


def test_the_toy_composes_next_to_noise():
    c = dx.compose([(TOY, 3), (dx.gaussian_noise("2"), 4)])
    assert "conditioned on the exact loss" in c.why
    alone = dx.compose(dx.gaussian_noise("2"), 4)
    # a 3 log 2-DP pair added to the loss: delta(eps) lies between the Gaussian's own
    # delta at eps + 3 log 2 and at eps - 3 log 2
    lo, hi = c.delta("3").interval(20)
    assert Fraction(alone.delta("3 + 3*log(2)").interval(20)[0]) <= Fraction(lo)
    assert Fraction(hi) <= Fraction(alone.delta("3 - 3*log(2)").interval(20)[1])


def test_the_toy_composes_from_a_spec_file(tmp_path):
    dx.register_family("clamped_geometric", ("alpha", "n"), ClampedGeometric)
    spec = tmp_path / "toy.toml"
    spec.write_text(
        '[[mechanism]]\nclamped_geometric = {alpha = "1/2", n = "2"}\ncount = 3\n\n'
        '[[mechanism]]\nconstraints = [["0.3", "0"]]\ncount = 2\n'
    )
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["delta", "--spec", str(spec), "--eps", "1", "--format", "json"]) == 0
    api = dx.compose([(TOY, 3), (dx.Mechanism.dp("0.3"), 2)], closed_forms=False)
    assert buf.getvalue() == api.to_json(delta_at=["1"])
    assert json.loads(buf.getvalue())["mechanisms"][0]["clamped_geometric"]["n"] == "2"
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(["delta", "--mech", "clamped_geometric(1/2,2):3", "--eps", "1"])
    assert code == 0 and "clamped geometric" in buf.getvalue()


def test_the_toy_composes_in_the_exact_accountant():
    pytest.importorskip("dp_accounting")
    from dp_accounting import SelfComposedDpEvent

    from dpcompose_exact.integrations.dp_accounting import ExactAccountant, MechanismDpEvent

    acc = ExactAccountant().compose(SelfComposedDpEvent(MechanismDpEvent(TOY), 3))
    exact = dx.compose(TOY, 3)
    assert acc.is_exact and acc.composition.to_json() == exact.to_json()
    for ratio, delta in _brute_region(3):
        eps = f"log({ratio.numerator}/{ratio.denominator})"
        assert Fraction(acc.composition.delta(eps).exact) == delta
    with pytest.raises(TypeError, match="MechanismDpEvent takes a mechanism"):
        MechanismDpEvent(3)
