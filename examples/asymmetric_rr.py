"""A contributor's mechanism in one file: asymmetric randomized response.

The mechanism answers 1 with probability ``p`` on one input and ``q`` on its neighbour:
``P = (p, 1 - p)``, ``Q = (q, 1 - q)``.  Its privacy-loss pair is asymmetric (a
:class:`~dpcompose_exact.regions.protocol.DirectedPair`, docs/theory.md, section 15): the
forward loss ``ln(P/Q)`` under ``P`` takes ``ln(p/q)`` with mass ``p`` and
``ln((1-p)/(1-q))`` with mass ``1 - p``; the reverse loss ``ln(Q/P)`` under ``Q`` the
negated values with masses ``q`` and ``1 - q``.  Both are logarithms of rationals, so the
composition is exact, and next to noise it is certified (docs/adding_a_mechanism.md).

It imports nothing above ``regions/`` and ``numbers/``.  A distribution ships it by
naming its builder in the entry-point group of mechanism families::

    [project.entry-points."dpcompose_exact.mechanisms"]
    asym_rr = "asymmetric_rr:asymmetric_rr"

after which ``dx.compose``, ``dpcompose delta --mech "asym_rr(1/4,1/2):3"`` and
``dpcompose audit --mech ...`` take it (tests/test_contributor.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dpcompose_exact.errors import InvalidParameterError
from dpcompose_exact.numbers import ExpDomain, QzElem, linear_form, parse_rational
from dpcompose_exact.regions.pld import PLD
from dpcompose_exact.regions.protocol import DirectedPair, LossPair

__all__ = ["AsymmetricRR", "asymmetric_rr"]


def _log(r: Fraction) -> Any:
    return linear_form(f"log({r.numerator}/{r.denominator})")


@dataclass(frozen=True)
class AsymmetricRR:
    """Randomized response that says 1 w.p. ``p`` on one input and ``q`` on the other.

    Attributes:
        p: the probability of 1 under ``P``, in ``(0, 1)``.
        q: the probability of 1 under ``Q``, in ``(0, 1)``.
    """

    p: Fraction
    q: Fraction

    def __post_init__(self) -> None:
        for name, v in (("p", self.p), ("q", self.q)):
            if not 0 < v < 1:
                raise InvalidParameterError(
                    f"asymmetric randomized response {name} = {v} is outside (0, 1)"
                )

    def loss_pair(self) -> LossPair:
        """Both directions of ``(P, Q)``, exact."""
        letters = [(self.p, self.q), (1 - self.p, 1 - self.q)]  # (P-mass, Q-mass)
        forms = [_log(a / b) for a, b in letters] + [_log(b / a) for a, b in letters]
        dom = ExpDomain.for_forms(forms)
        zero = QzElem.from_rational(0)

        def direction(masses: list[Fraction], losses: list[Any]) -> PLD:
            atoms = [(dom.loss(f), QzElem.from_rational(m)) for f, m in zip(losses, masses)]
            return PLD.from_masses(dom, atoms, zero)

        forward = direction([a for a, _ in letters], forms[:2])
        reverse = direction([b for _, b in letters], forms[2:])
        return DirectedPair(forward, reverse)

    def describe(self) -> str:
        """``asymmetric RR p=1/4 q=1/2``."""
        return f"asymmetric RR p={self.p} q={self.q}"

    def to_dict(self) -> dict[str, Any]:
        """The two probabilities, exact strings."""
        return {"asym_rr": {"p": str(self.p), "q": str(self.q)}}


def asymmetric_rr(p: Any, q: Any) -> AsymmetricRR:
    """The family's builder: ``asym_rr(P,Q)`` on the command line, exact inputs."""
    return AsymmetricRR(parse_rational(p, "p"), parse_rational(q, "q"))
