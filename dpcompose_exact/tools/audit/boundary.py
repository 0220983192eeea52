"""The exact dominating pair rounded to doubles: the float boundary of the audit.

The mechanism each library is given is the exact dominating pair of docs/theory.md,
section 1 (the leak plus randomized responses, :func:`dpcompose_exact.regions.pld.canonical_pair`):
every mechanism with the given constraints is a post-processing of it, so its composition
is the exact (tight, adaptive) composition.  Following docs/theory.md, section 3, the pair
is a finite privacy-loss distribution: P0-masses at finite losses ``L = ln(P0/P1)`` plus a
leak (loss +inf).

Floats appear only at this boundary (:func:`float_pair`) and in the accountant adapters:
the exact masses and losses are printed as certified decimals (40 digits) and rounded to
the nearest double here.  The Renyi divergences are computed from the decimals by
:func:`dpcompose_exact.presentation.export.renyi_from_atoms` and rounded up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...presentation.export import renyi_from_atoms
from ...regions.pld import PLD

__all__ = ["FloatPair", "float_pair", "Queries", "Numbers"]

_DIGITS = 40  # digits of the decimals handed to the float libraries


@dataclass(frozen=True)
class FloatPair:
    """A dominating pair rounded to doubles (THE FLOAT BOUNDARY).

    ``losses[i]``, ``p0[i]``, ``p1[i]``: loss and masses of finite letter i; ``leak``: the
    P0-mass at loss +inf; ``loss_decimals`` and ``p0_decimals``: the 40-digit decimals the
    doubles were rounded from (the Renyi divergences and the PRV are computed from them).
    An asymmetric pair (``symmetric`` False: a directed pair, docs/theory.md, section 15)
    has the letters of its forward direction and ``reverse_leak``, the P1-mass where P0
    has none.
    """

    losses: tuple[float, ...]
    p0: tuple[float, ...]
    p1: tuple[float, ...]
    leak: float
    loss_decimals: tuple[str, ...]
    p0_decimals: tuple[str, ...]
    reverse_leak: float = 0.0
    symmetric: bool = True

    def log_masses(self) -> tuple[dict[Any, float], dict[Any, float]]:
        """``(lower, upper)``: the logs of the P1- and P0-masses of each letter, by letter.

        The leak is a letter of P0 only (``"leak"``), the reverse leak one of P1 only
        (``"reverse leak"``): dp_accounting's ``from_two_probability_mass_functions``.
        """
        upper: dict[Any, float] = {i: math.log(p) for i, p in enumerate(self.p0) if p > 0}
        lower: dict[Any, float] = {i: math.log(p) for i, p in enumerate(self.p1) if p > 0}
        if self.leak > 0:
            upper["leak"] = math.log(self.leak)
        if self.reverse_leak > 0:
            lower["reverse leak"] = math.log(self.reverse_leak)
        return lower, upper

    def renyi(self, order: float, conditional: bool = False) -> float:
        """``D_order(P0 || P1)`` rounded up to a double (``inf`` with a leak unless conditional).

        With ``conditional`` the pair is restricted to its finite letters and renormalized
        (the PRV library's convention).
        """
        if self.leak > 0 and not conditional:
            return math.inf
        return renyi_from_atoms(self.loss_decimals, self.p0_decimals, order, conditional)


def float_pair(pld: PLD, reverse: PLD | None = None) -> FloatPair:
    """Round an exact pair to doubles (the float boundary).

    ``reverse``: the reverse direction of an asymmetric pair whose forward direction is
    ``pld`` (None: a symmetric pair).
    """
    dom = pld.domain
    losses, p0, p1, ml, mp0 = [], [], [], [], []
    for loss, m in pld.masses:
        ls = dom.loss_decimal(loss, _DIGITS)
        ps = dom.decimal(m, _DIGITS)
        ml.append(ls)
        mp0.append(ps)
        losses.append(float(ls))
        p0.append(float(ps))
        p1.append(float(dom.decimal(pld.p1_mass(loss, m), _DIGITS)))
    leak = float(dom.decimal(pld.leak, _DIGITS))
    if reverse is not None:
        back = float(reverse.domain.decimal(reverse.leak, _DIGITS))
        return FloatPair(
            tuple(losses), tuple(p0), tuple(p1), leak, tuple(ml), tuple(mp0), back, False
        )
    return FloatPair(tuple(losses), tuple(p0), tuple(p1), leak, tuple(ml), tuple(mp0))


@dataclass
class Queries:
    """The grid handed to the libraries: delta at each ``eps``, eps at each of ``deltas``."""

    eps: list[float]
    deltas: list[float]


Numbers = dict[str, tuple[list[float], list[float], list[str]]]
"""series -> (delta at each eps, eps at each delta, notes)."""
