"""Additive noise mechanisms: Gaussian and Laplace noise, and noise on a subsample.

``AdditiveNoise`` is the pair (noise + sensitivity, noise) of Gaussian noise
``N(0, sigma^2)`` or Laplace noise ``Lap(b)``; ``SubsampledNoise`` is the same mechanism
run on a Poisson subsample of rate ``q`` (add/remove), whose dominating pair is
``A = q P + (1 - q) Q``, ``B = Q`` (docs/theory.md, section 15).  The classes know their
distribution functions in Arb (``cdf``, ``sf``, ``x_of_beta``) and say what their
privacy-loss pair is (``loss_pair``); the loss grid that composes them lives in
:mod:`dpcompose_exact.engines.subsample_grid`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers import parse_rational
from ..numbers.convert import erfc_ball, rational_ball
from ..numbers.format import compact_exact, rat_str
from ..regions.protocol import GaussianPair, LossPair, NoiseKind, NoisePair

__all__ = ["AdditiveNoise", "SubsampledNoise", "gaussian_noise", "laplace_noise", "parse_rate"]


def parse_rate(q: Any) -> Fraction:
    """A sampling rate as an exact rational in ``(0, 1]``.

    A float is refused, the rule of every exact input (dp_accounting's events are read by
    their integration, which takes their floats as written).
    """
    rate = parse_rational(q, "sampling probability")
    if not 0 < rate <= 1:
        raise InvalidParameterError(
            f"sampling probability q = {rate} is outside the valid range (0, 1]"
        )
    return rate


@dataclass(frozen=True)
class AdditiveNoise:
    """Gaussian (``kind="gaussian"``, ``scale`` = sigma) or Laplace (``scale`` = b) noise.

    ``shift`` is the sensitivity: the pair is (noise + shift, noise).
    """

    kind: str
    scale: Fraction
    shift: Fraction = Fraction(1)

    def __post_init__(self) -> None:
        if self.kind not in ("gaussian", "laplace"):
            raise InvalidParameterError(f"noise kind {self.kind!r}: use gaussian or laplace")
        if self.scale <= 0:
            name = "sigma" if self.kind == "gaussian" else "b"
            raise InvalidParameterError(f"{name} = {self.scale} must be > 0")
        if self.shift <= 0:
            raise InvalidParameterError(f"sensitivity = {self.shift} must be > 0")

    def subsample(self, q: Any) -> SubsampledNoise:
        """The mechanism run on a subsample of rate ``q`` in ``(0, 1]`` (section 15)."""
        return SubsampledNoise(self, parse_rate(q))

    def loss_pair(self) -> LossPair:
        """Gaussian: ``G_mu`` with ``mu = sensitivity / sigma``; Laplace: grid noise."""
        on_grid = SubsampledNoise(self, Fraction(1))
        if self.kind == "gaussian":
            return GaussianPair((self.shift / self.scale) ** 2, on_grid)
        return NoisePair(NoiseKind(self.kind), self.shift / self.scale, Fraction(1), on_grid)

    @property
    def eps0(self) -> Fraction | None:
        """Laplace: the largest loss ``sensitivity / b`` (None for the Gaussian)."""
        return None if self.kind == "gaussian" else self.shift / self.scale

    def describe(self) -> str:
        """``gaussian sigma=1`` or ``laplace b=1`` (with the sensitivity when not 1)."""
        name = "sigma" if self.kind == "gaussian" else "b"
        extra = "" if self.shift == 1 else f" sensitivity={compact_exact(rat_str(self.shift))}"
        return f"{self.kind} {name}={compact_exact(rat_str(self.scale))}{extra}"  # 1e4000

    def to_dict(self) -> dict[str, Any]:
        """The noise, its scale and sensitivity, exact strings."""
        scale, shift = rat_str(self.scale), rat_str(self.shift)  # any size (1e4000)
        return {"noise": self.kind, "scale": scale, "sensitivity": shift}

    def __repr__(self) -> str:
        name = "gaussian_noise" if self.kind == "gaussian" else "laplace_noise"
        # 1e-400, not 1/1000...0: short and still exact (the repr builds an equal noise)
        extra = "" if self.shift == 1 else f", sensitivity={compact_exact(rat_str(self.shift))!r}"
        return f"{name}({compact_exact(rat_str(self.scale))!r}{extra})"

    # -- the base pair, in Arb ---------------------------------------------------------
    def x_of_beta(self, beta: flint.arb) -> flint.arb:
        """The output ``x`` where the base loss ``ln(p(x)/q(x))`` equals ``beta``."""
        s, c = rational_ball(self.shift), rational_ball(self.scale)
        if self.kind == "gaussian":  # beta = (2 s x - s^2) / (2 sigma^2)
            return beta * c * c / s + s / 2
        return (beta * c + s) / 2  # Laplace, on 0 <= x <= s: beta = (2x - s) / b

    def cdf(self, x: flint.arb) -> flint.arb:
        """``Q(X <= x)`` of the noise (Gaussian: erfc; Laplace: closed form)."""
        c = rational_ball(self.scale)
        if self.kind == "gaussian":
            return erfc_ball(-x / (c * flint.arb(2).sqrt())) / 2
        if x < 0:
            return (x / c).exp() / 2
        if x >= 0:
            return 1 - (-x / c).exp() / 2
        raise ResourceLimitError("the Laplace distribution function at an undecided point")

    def sf(self, x: flint.arb) -> flint.arb:
        """``Q(X > x)`` (no cancellation in the upper tail)."""
        c = rational_ball(self.scale)
        if self.kind == "gaussian":
            return erfc_ball(x / (c * flint.arb(2).sqrt())) / 2
        return self.cdf(-x)

    def beta_range(self) -> tuple[Fraction, Fraction] | None:
        """The base loss's range ``[-s/b, s/b]`` (Laplace), None when unbounded (Gaussian)."""
        if self.kind == "gaussian":
            return None
        return (-self.shift / self.scale, self.shift / self.scale)


def gaussian_noise(sigma: Any, sensitivity: Any = 1) -> AdditiveNoise:
    """Gaussian noise ``N(0, sigma^2)`` of a query of the given sensitivity (exact inputs)."""
    return AdditiveNoise(
        "gaussian", parse_rational(sigma, "sigma"), parse_rational(sensitivity, "sensitivity")
    )


def laplace_noise(b: Any, sensitivity: Any = 1) -> AdditiveNoise:
    """Laplace noise of scale ``b`` of a query of the given sensitivity (exact inputs)."""
    return AdditiveNoise(
        "laplace", parse_rational(b, "b"), parse_rational(sensitivity, "sensitivity")
    )


@dataclass(frozen=True)
class SubsampledNoise:
    """Additive noise run on a subsample of rate ``q``: compose it with ``compose(m, k)``."""

    noise: AdditiveNoise
    q: Fraction

    def loss_pair(self) -> LossPair:
        """Grid noise with two directions (the rate makes the pair asymmetric)."""
        if self.q == 1:
            return self.noise.loss_pair()
        noise = self.noise
        return NoisePair(NoiseKind(noise.kind), noise.shift / noise.scale, self.q, self)

    def describe(self) -> str:
        """``gaussian_noise('1') subsampled at 1/100``, for titles."""
        return f"{self.noise!r} subsampled at {self.q}"

    def to_dict(self) -> dict[str, Any]:
        """The noise, its scale, sensitivity and the rate, exact strings."""
        return {
            "noise": self.noise.kind,
            "scale": rat_str(self.noise.scale),
            "sensitivity": rat_str(self.noise.shift),
            "subsample": rat_str(self.q),
        }

    def __repr__(self) -> str:
        return f"{self.noise!r}.subsample({compact_exact(rat_str(self.q))!r})"
