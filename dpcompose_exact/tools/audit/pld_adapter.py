"""Adapter for dp_accounting's PLD accountant (``pld_pessimistic`` and ``pld_optimistic``).

The exact dominating pair (rounded to doubles by :mod:`dpcompose_exact.tools.audit.boundary`) is
handed to ``dp_accounting.pld.privacy_loss_distribution.from_two_probability_mass_functions``
(upper = P0, lower = P1, the leak as an extra letter of P0), self-composed ``count`` times
per kind and composed across kinds, with a pessimistic or an optimistic rounding on the
library's grid; its ``get_delta_for_epsilon`` and ``get_epsilon_for_delta`` are the
reported numbers.  The audit (:mod:`dpcompose_exact.tools.audit.compare`, docs/theory.md,
section 3) compares them with the exact curve.
"""

from __future__ import annotations

import math

from .accountants import _import_dp_accounting
from .boundary import FloatPair, Queries

__all__ = ["run_pld"]


def run_pld(
    pairs: list[tuple[FloatPair, int]], q: Queries, grid: float, pessimistic: bool
) -> tuple[list[float], list[float], list[str]]:
    """``(delta at each q.eps, eps at each q.deltas, notes)`` of the composed dp_accounting PLD.

    ``pairs`` holds each kind's pair with its count, ``grid`` is the library's
    ``value_discretization_interval``.
    """
    pld_mod, _ = _import_dp_accounting()
    total = None
    for pair, count in pairs:
        if count == 0:
            continue
        upper = {i: math.log(p) for i, p in enumerate(pair.p0) if p > 0}
        lower = {i: math.log(p) for i, p in enumerate(pair.p1) if p > 0}
        if pair.leak > 0:
            upper["leak"] = math.log(pair.leak)
        one = pld_mod.from_two_probability_mass_functions(
            lower,
            upper,
            pessimistic_estimate=pessimistic,
            value_discretization_interval=grid,
        )
        many = one.self_compose(count) if count > 1 else one
        total = many if total is None else total.compose(many)
    assert total is not None
    d = [float(total.get_delta_for_epsilon(e)) for e in q.eps]
    e = [float(total.get_epsilon_for_delta(x)) for x in q.deltas]
    return d, e, []
