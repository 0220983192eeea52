"""The one mechanism protocol: every mechanism says what its privacy-loss pair is.

A mechanism of any kind -- a multi-constraint :class:`~dpcompose_exact.api.Mechanism`,
randomized response, discrete Laplace, a subsampled mechanism, Gaussian or Laplace
noise, subsampled noise -- answers :meth:`MechanismLike.loss_pair` with a
:class:`LossPair` in the strongest form it has (docs/architecture.md, "One mechanism"):

* ``finite``: a symmetric finite pair in the exact field (a
  :class:`~dpcompose_exact.regions.pld.PLD`);
* ``asymmetric``: an asymmetric finite pair with both directions, exact (an exactly
  subsampled mechanism), or ``asymmetric bounds``: a weaker and a stronger such pair;
* ``gaussian``: the Gaussian pair ``G_mu`` (``mu2`` per use), which has a closed form;
* ``noise``: continuous noise with certified distribution functions (Laplace, subsampled
  Gaussian or Laplace), composed on a certified loss grid.

The router (:mod:`dpcompose_exact.engines.routes`) reads only this form; it never asks
which class a mechanism is.  A new mechanism is one class with ``loss_pair``,
``describe`` and ``to_dict`` (docs/adding_a_mechanism.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

__all__ = ["PairForm", "LossPair", "MechanismLike", "is_mechanism"]


class PairForm(str, Enum):
    """The form of a mechanism's privacy-loss pair, from the strongest to the weakest."""

    FINITE = "finite"  #: symmetric finite pair in the exact field (a PLD)
    ASYMMETRIC = "asymmetric"  #: two directions, exact (a SubsampledPair)
    ASYMMETRIC_BOUNDS = "asymmetric bounds"  #: a weaker and a stronger asymmetric pair
    GAUSSIAN = "gaussian"  #: the Gaussian pair G_mu, closed form
    NOISE = "noise"  #: continuous noise with certified distribution functions

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class LossPair:
    """What a mechanism's privacy-loss pair is, in the strongest form it has.

    Attributes:
        form: the :class:`PairForm`.
        payload: the pair itself: a ``PLD`` (finite), a ``SubsampledPair`` (asymmetric),
            ``(lower, upper)`` pairs (asymmetric bounds), or the noise object that the
            loss grid composes (gaussian, noise).
        mu2: ``mu^2`` of one use (gaussian only): ``(sensitivity / sigma)^2``.
        symmetric: True when both directions of the pair have the same loss
            distribution (finite pairs, Gaussian and Laplace noise).
    """

    form: PairForm
    payload: Any
    mu2: Fraction | None = None
    symmetric: bool = True


@runtime_checkable
class MechanismLike(Protocol):
    """What every mechanism speaks: its loss pair, a title, and a JSON description."""

    def loss_pair(self) -> LossPair:
        """The mechanism's privacy-loss pair, in the strongest form it has."""
        ...

    def describe(self) -> str:
        """A short readable title (``(3/10, 0)+(3/20, 1/50)``, ``gaussian sigma=1``)."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """Exact strings describing the mechanism, for JSON."""
        ...


def is_mechanism(obj: Any) -> bool:
    """True when ``obj`` speaks the mechanism protocol (:class:`MechanismLike`).

    >>> is_mechanism(3), is_mechanism("0.3")
    (False, False)
    """
    return isinstance(obj, MechanismLike)
