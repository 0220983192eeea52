"""Truncated Poisson sampling: a Poisson batch cut down to a largest size, then Gaussian noise.

``TruncatedSubsampledGaussian(sigma, dataset_size=n, q=q, batch_size=b)`` is dp_accounting's
``TruncatedSubsampledGaussianDpEvent``: each of the ``n`` records is sampled with
probability ``q``, a batch larger than ``b`` is cut to a uniformly drawn subset of ``b``
records, and the batch's sum (each record of norm at most 1) gets ``N(0, sigma^2 I)``
noise.  Under add/remove (``n`` records with the differing one, ``n - 1`` without) its
dominating pair is a public-coin mixture of two Poisson-subsampled Gaussians
(docs/theory.md, section 23, "Truncated Poisson sampling"):

* with probability ``1 - t``, ``t = P(Binomial(n - 1, q) >= b)`` (the other records fill
  the batch or not), the subsampled Gaussian of rate ``q`` and sensitivity 1;
* with probability ``t``, the subsampled Gaussian of rate ``p' = (b/n) P(Binomial(n, q) >=
  b + 1) / t`` and sensitivity 2 (the record replaces one of the batch).

``t`` and ``p'`` are regularized incomplete beta functions, certified in Arb.  The loss of
each part increases with its output, so the mixture's distribution functions at a loss
``l`` are the weighted sums of the parts' at their outputs of loss ``l``: this class speaks
the certified loss grid's interface of a pair item with the loss itself as the output
parameter (``x_of_ratio``, ``cdf_pairs`` in Arb; float helpers that only place the grid),
and :mod:`dpcompose_exact.engines.gridcells` composes it next to every other kind.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers import parse_rational
from ..numbers.convert import erfc_halves, rational_ball
from ..regions.protocol import GridEntry, LossPair, NoiseKind, NoisePair
from .noise import AdditiveNoise, SubsampledNoise

__all__ = ["TruncatedSubsampledGaussian", "truncated_subsampled_gaussian", "truncation_weights"]

#: the precision (bits) of the binomial tails
_PREC = 192


def _count(value: Any, what: str, low: int) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InvalidParameterError(f"{what} = {value!r} must be an integer >= {low}")
    return value


def _sf(u: float) -> float:
    """``P(N(0, 1) > u)`` in floats."""
    return math.erfc(u / math.sqrt(2)) / 2


def _ball(q: Fraction) -> flint.arb:
    return rational_ball(q)


@functools.lru_cache(maxsize=64)
def truncation_weights(n: int, q: Fraction, b: int) -> tuple[flint.arb, flint.arb, flint.arb]:
    """``(1 - t, t, p')``: Arb balls of the truncation probability and the truncated rate.

    ``t = P(Bin(n - 1, q) >= b) = I_q(b, n - b)`` and ``1 - t = I_{1-q}(n - b, b)`` (each from
    its own regularized incomplete beta function, so both are relatively accurate however
    small), ``t p' = (b/n) P(Bin(n, q) >= b + 1) = (b/n) I_q(b + 1, n - b)``
    (docs/theory.md, section 23).  Needs ``0 < q < 1`` and ``1 <= b <= n - 1``.

    Raises:
        ResourceLimitError: a ball is not finite or not certainly positive.
    """
    with flint.ctx.workprec(_PREC):
        z, w = _ball(q), _ball(1 - q)
        t = z.beta_lower(b, n - b, 1)
        one_t = w.beta_lower(n - b, b, 1)
        tp = z.beta_lower(b + 1, n - b, 1) * b / n
        p = tp / t
    for what, v in (("1 - t", one_t), ("t", t), ("p'", p)):
        if not (v.is_finite() and v > 0):
            raise ResourceLimitError(
                f"the truncation probabilities of n = {n}, q = {q}, b = {b}: {what} = {v} is "
                "not certified positive"
            )
    return one_t, t, p


@dataclass(frozen=True)
class _Part:
    """One part of the mixture: ``rho N(c, s^2) + (1 - rho) N(0, s^2)`` against ``N(0, s^2)``.

    ``rho`` is an Arb ball (its float for placing the grid); the loss ``ln(1 - rho + rho
    e^{(2 c x - c^2)/(2 s^2)})`` increases with the output ``x`` from ``ln(1 - rho)``.
    """

    rho: Any
    rho_f: float
    c: Fraction
    sigma: Fraction

    # floats
    def loss_at(self, x: float) -> float:
        s2, c = float(self.sigma) ** 2, float(self.c)
        e = (2 * c * x - c * c) / (2 * s2)
        if self.rho_f <= 0:
            return math.log1p(-self.rho_f) if e < 700 else math.inf
        top = max(math.log1p(-self.rho_f), math.log(self.rho_f) + e)
        return top + math.log(
            math.exp(math.log1p(-self.rho_f) - top) + math.exp(math.log(self.rho_f) + e - top)
        )

    def x_at(self, loss: float) -> float:
        """The output of loss ``loss`` (``-inf`` at or below the floor)."""
        excess = math.expm1(min(loss, 700.0)) + self.rho_f
        if excess <= 0 or self.rho_f <= 0:
            return -math.inf
        s2, c = float(self.sigma) ** 2, float(self.c)
        return (math.log(excess) - math.log(self.rho_f)) * s2 / c + c / 2

    def a_tail(self, loss: float) -> float:
        """``A(L > loss)`` in floats."""
        x = self.x_at(loss)
        if x == -math.inf:
            return 1.0
        sig, c = float(self.sigma), float(self.c)
        return self.rho_f * _sf((x - c) / sig) + (1 - self.rho_f) * _sf(x / sig)

    # Arb
    def cdfs(self, loss: flint.arb) -> tuple[Any, Any, Any, Any]:
        """``(FA, FB, SA, SB)`` of the loss at most ``loss`` (the output of that loss)."""
        zero, one = flint.arb(0), flint.arb(1)
        excess = loss.exp() - 1 + self.rho
        if excess <= 0:
            return zero, zero, one, one
        if not excess > 0:
            raise ResourceLimitError(f"undecided loss {loss} at the floor of a part of rate "
                                     f"{self.rho}")
        c, s2 = rational_ball(self.c), rational_ball(self.sigma * self.sigma)
        x = (excess.log() - self.rho.log()) * s2 / c + c / 2
        sc = rational_ball(self.sigma) * flint.arb(2).sqrt()
        u = -x / sc
        fq, sq = erfc_halves(u)
        fp, sp = erfc_halves(u + c / sc)
        return self.rho * fp + (1 - self.rho) * fq, fq, self.rho * sp + (1 - self.rho) * sq, sq


@dataclass(frozen=True)
class TruncatedSubsampledGaussian:
    """Gaussian noise on a Poisson batch of rate ``q`` from ``n`` records, cut to ``b`` records.

    Add/remove, sensitivity 1 per record (dp_accounting's ``TruncatedSubsampledGaussianDpEvent``;
    ``dataset_size`` counts the records of the larger dataset, as dp_accounting reads it).
    Build it with :func:`truncated_subsampled_gaussian`.
    """

    sigma: Fraction
    dataset_size: int
    q: Fraction
    batch_size: int

    def __post_init__(self) -> None:
        if self.sigma <= 0:
            raise InvalidParameterError(f"sigma = {self.sigma} must be > 0")
        if not 0 < self.q <= 1:
            raise InvalidParameterError(
                f"sampling probability q = {self.q} is outside the valid range (0, 1]"
            )
        if self.dataset_size < 1 or self.batch_size < 1:
            raise InvalidParameterError(
                f"dataset_size = {self.dataset_size} and batch_size = {self.batch_size} must "
                "be >= 1"
            )

    @property
    def truncates(self) -> bool:
        """True when a batch can be cut: ``b <= n - 1`` others can fill it."""
        return self.batch_size <= self.dataset_size - 1

    def _plain(self) -> Any:
        """The pair when it is one subsampled Gaussian (no truncation, or ``q = 1``)."""
        if not self.truncates:
            noise = AdditiveNoise("gaussian", self.sigma, Fraction(1))
            return noise if self.q == 1 else SubsampledNoise(noise, self.q)
        if self.q == 1:  # always truncated: a fixed-size batch of b of n records
            return SubsampledNoise(
                AdditiveNoise("gaussian", self.sigma, Fraction(2)),
                Fraction(self.batch_size, self.dataset_size),
            )
        return None

    def loss_pair(self) -> LossPair:
        """No truncation or ``q = 1``: one subsampled Gaussian; else grid noise (mixture).

        The pair's GDP ``mu*`` is not stated exactly (``gaussian_mu2`` None): it is at most
        ``2/sigma``, the larger part's (joint convexity).
        """
        plain = self._plain()
        if plain is not None:
            return plain.loss_pair()
        return NoisePair(
            NoiseKind.GAUSSIAN, 2 / self.sigma, self.q, self, GridEntry.PUBLIC_MIXTURE
        )

    def subsample(self, q: Any) -> Any:
        """Refused: the truncated Poisson batch is itself the sampling."""
        raise InvalidParameterError(
            f"a truncated Poisson-subsampled Gaussian subsampled at {q}: it is itself the "
            "sampling (give its rate q instead)"
        )

    def describe(self) -> str:
        """``gaussian sigma=1 on a Poisson batch of rate 1/100 of 60000 records cut to 700``."""
        return (
            f"gaussian sigma={self.sigma} on a Poisson batch of rate {self.q} of "
            f"{self.dataset_size} records cut to {self.batch_size}"
        )

    @property
    def label(self) -> str:
        """The ``--mech`` spelling: ``trunc(1,60000,1/100,700)``."""
        return f"trunc({self.sigma},{self.dataset_size},{self.q},{self.batch_size})"

    def to_dict(self) -> dict[str, Any]:
        """Its spec-file item: ``{"truncated_subsampled_gaussian": {...}}``."""
        return {
            "truncated_subsampled_gaussian": {
                "sigma": str(self.sigma),
                "dataset_size": str(self.dataset_size),
                "q": str(self.q),
                "batch_size": str(self.batch_size),
            }
        }

    def __repr__(self) -> str:
        return (
            f"truncated_subsampled_gaussian({str(self.sigma)!r}, {self.dataset_size}, "
            f"{str(self.q)!r}, {self.batch_size})"
        )

    # -- the two parts -------------------------------------------------------------------
    @functools.cached_property
    def parts(self) -> tuple[tuple[Any, _Part], ...]:
        """``((1 - t, untruncated part), (t, truncated part))``, weights as Arb balls."""
        one_t, t, p = truncation_weights(self.dataset_size, self.q, self.batch_size)
        with flint.ctx.workprec(_PREC):
            q = _ball(self.q)
        return (
            (one_t, _Part(q, float(self.q), Fraction(1), self.sigma)),
            (t, _Part(p, float(p.mid()), Fraction(2), self.sigma)),
        )

    @functools.cached_property
    def _weights_f(self) -> tuple[float, float]:
        return tuple(float(w.mid()) for w, _ in self.parts)  # type: ignore[return-value]

    # -- floats, to place the grid only (the output parameter is the loss) ---------------
    def x_top(self, z: float) -> float:
        """A loss above which each part's ``A``-mass is at most ``Phi_bar(z)``."""
        return max(p.loss_at(float(p.c) + z * float(self.sigma)) for _, p in self.parts)

    def x_bottom(self, z: float) -> float:
        """A loss below which each part's ``B``-mass is at most ``Phi_bar(z)``."""
        return min(p.loss_at(-z * float(self.sigma)) for _, p in self.parts)

    def loss_floor(self) -> float:
        """``ln(1 - q)``: the untruncated part's floor, below the truncated one's."""
        return math.log1p(-float(self.q))

    def loss_float(self, x: float) -> float:
        """The loss itself (the output parameter)."""
        return x

    def x_of_loss_float(self, loss: float) -> float:
        """The loss itself."""
        return loss

    def a_tail_float(self, x: float) -> float:
        """``A(L > x)`` of the mixture, in floats."""
        return sum(w * p.a_tail(x) for w, (_, p) in zip(self._weights_f, self.parts))

    def spread_float(self) -> float:
        """A float scale of one use's loss: the std of the ratio under ``B``, mixed."""
        var = sum(
            w * p.rho_f**2 * math.expm1(min(float(p.c / self.sigma) ** 2, 700.0))
            for w, (_, p) in zip(self._weights_f, self.parts)
        )
        return min(math.sqrt(var), float(2 / self.sigma))

    # -- Arb -----------------------------------------------------------------------------
    def x_of_ratio(self, r: flint.arb) -> flint.arb | None:
        """The loss ``ln r`` (the output parameter); None at or below ``1 - q`` (no output)."""
        floor = r - _ball(1 - self.q)
        if floor <= 0:
            return None
        if not floor > 0:
            raise ResourceLimitError(f"undecided likelihood ratio {r} of {self!r}")
        return r.log()

    def cdf_pairs(self, x: flint.arb) -> tuple[Any, Any, Any, Any]:
        """``(FA, FB, SA, SB)`` of the loss at most ``x``: the parts' weighted sums.

        A public-coin mixture's loss law is the mixture of the parts' (the coin is part of
        the output), so each distribution function is ``(1 - t) F_1 + t F_2`` with the
        parts' functions at their outputs of loss ``x`` (docs/theory.md, section 23).
        """
        out = [flint.arb(0)] * 4
        for w, part in self.parts:
            for i, v in enumerate(part.cdfs(x)):
                out[i] = out[i] + w * v
        return out[0], out[1], out[2], out[3]


def truncated_subsampled_gaussian(
    sigma: Any, dataset_size: Any, q: Any, batch_size: Any
) -> TruncatedSubsampledGaussian:
    """Gaussian noise on a Poisson batch of rate ``q`` of ``dataset_size`` records cut to ``b``.

    >>> import dpcompose_exact as dx
    >>> dx.truncated_subsampled_gaussian("1", 60000, "1/100", 700)
    truncated_subsampled_gaussian('1', 60000, '1/100', 700)
    """
    return TruncatedSubsampledGaussian(
        parse_rational(sigma, "sigma"),
        _count(dataset_size, "dataset_size", 1),
        parse_rational(q, "sampling probability"),
        _count(batch_size, "batch_size", 1),
    )
