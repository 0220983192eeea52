"""Random allocation: each example in exactly ``t`` of the ``k`` steps of an epoch.

``RandomAllocation(noise, steps=k, t=1)`` is one epoch of ``k`` Gaussian steps in which
an example takes part in one step drawn uniformly at random ("balls in bins"; Feldman
and Shenfeld), under add/remove (``t`` steps drawn at random: bounds from a reduction, see
below).  With ``R_i = exp(a Z_i - a^2/2)`` the likelihood ratio
of one step (``a = sensitivity / sigma``, ``Z_i`` standard normal under the null), the
epoch's dominating pair has likelihood ratio ``T = (R_1 + ... + R_k) / k`` under the
null: ``A = T B`` with ``B`` the law of the outputs without the example (remove
direction forward, add direction reverse; docs/theory.md, section 21).  The loss grid of
:mod:`dpcompose_exact.engines.allocation` composes it, next to every other kind and over
epochs (``compose(m, epochs)``); one step (``k = 1``) is the Gaussian pair itself, with its
closed form.  With ``t > 1`` the upper bound is the product of ``t`` epochs of 1 of
``k/t`` steps (revealing a random partition into blocks) and the lower bound is the
Gaussian pair of the sum of all outputs, ``mu^2 = t^2 a^2 / k`` (section 21).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..errors import InvalidParameterError
from ..regions.protocol import GridEntry, LossPair, NoiseKind, NoisePair
from .noise import AdditiveNoise

__all__ = ["AllocationPair", "RandomAllocation", "random_allocation", "MAX_STEPS"]

#: the largest number of steps per epoch (the loss grid's window grows with it)
MAX_STEPS = 10**6


def _count(value: Any, what: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        else:
            raise InvalidParameterError(
                f"{what} = {value!r} must be an integer in [{low}, {MAX_STEPS}]"
            )
    if not low <= value <= MAX_STEPS:
        raise InvalidParameterError(f"{what} = {value} must be an integer in [{low}, {MAX_STEPS}]")
    return value


@dataclass(frozen=True)
class AllocationPair(NoisePair):
    """The loss pair of one epoch: Gaussian steps of ``mu = a``, each record in ``t``.

    ``gaussian_mu2`` is the GDP ``mu*^2 = t a^2`` of the epoch (docs/theory.md, section
    21: dominated by ``G_{a sqrt t}``, the pair of each ``t``-subset, by joint convexity;
    and ``A >= P_S / C(k, t)`` as measures).
    """

    t: int = 1

    def gaussian_mu2(self) -> Fraction | None:
        """``t a^2``."""
        return self.t * self.mu * self.mu


@dataclass(frozen=True)
class RandomAllocation:
    """Gaussian noise on ``t`` of ``steps`` steps drawn at random, one epoch (add/remove).

    Attributes:
        noise: Gaussian noise (``dx.gaussian_noise(sigma, sensitivity)``).
        steps: the number ``k`` of steps of the epoch.
        t: the number of steps each example takes part in (``t > 1``: certified bounds
            from two simpler pairs, the upper one by a reduction to ``t`` epochs of 1 of
            ``k/t`` steps; docs/theory.md, section 21).
    """

    noise: AdditiveNoise
    steps: int
    t: int = 1
    #: the loss grid that composes this pair (read by engines.subsample_grid.cell_masses)
    loss_grid = "random allocation"

    def __post_init__(self) -> None:
        if getattr(self.noise, "kind", None) != "gaussian":
            raise InvalidParameterError(
                f"random allocation of {self.noise!r}: only Gaussian noise is allocated "
                "(dx.gaussian_noise(sigma))"
            )
        object.__setattr__(self, "steps", _count(self.steps, "steps", 1))
        object.__setattr__(self, "t", _count(self.t, "t", 1))
        if self.t > self.steps:
            raise InvalidParameterError(f"t = {self.t} must lie in [1, steps = {self.steps}]")

    @property
    def mu2(self) -> Fraction:
        """``a^2 = (sensitivity / sigma)^2`` of one step."""
        return (self.noise.shift / self.noise.scale) ** 2

    def loss_pair(self) -> LossPair:
        """One step: the Gaussian pair (closed form); else noise on the allocation grid."""
        if self.steps == 1:
            return self.noise.loss_pair()
        # noise on the grid: the Gaussian kind and mu of a step (the GDP mu* of an epoch is
        # that of its step, section 21); the rate 1/k only marks the pair asymmetric, the
        # loss grid reads the epoch itself (engines.allocation)
        return AllocationPair(
            NoiseKind.GAUSSIAN,
            self.noise.shift / self.noise.scale,
            Fraction(1, self.steps),
            self,
            GridEntry.ALLOCATION,
            self.t,
        )

    def describe(self) -> str:
        """``gaussian sigma=1 randomly allocated to 1 of 100 steps``, for titles."""
        return f"{self.noise.describe()} randomly allocated to {self.t} of {self.steps} steps"

    def to_dict(self) -> dict[str, Any]:
        """Its spec-file item: ``{"random_allocation": {sigma, steps, t, sensitivity}}``."""
        return {
            "random_allocation": {
                "sigma": str(self.noise.scale),
                "steps": str(self.steps),
                "t": str(self.t),
                "sensitivity": str(self.noise.shift),
            }
        }

    def subsample(self, q: Any) -> Any:
        """Refused: random allocation is itself the sampling (one epoch)."""
        raise InvalidParameterError(
            f"random allocation subsampled at {q}: the allocation is itself the sampling "
            "(compose epochs with a count instead)"
        )

    def __repr__(self) -> str:
        return f"random_allocation({self.noise!r}, steps={self.steps}, t={self.t})"


def random_allocation(noise: AdditiveNoise, steps: Any, t: Any = 1) -> RandomAllocation:
    """Gaussian ``noise`` run on ``t`` of ``steps`` steps drawn at random (one epoch).

    >>> import dpcompose_exact as dx
    >>> dx.random_allocation(dx.gaussian_noise("1"), steps=100)
    random_allocation(gaussian_noise('1'), steps=100, t=1)
    """
    return RandomAllocation(noise, steps, t)
