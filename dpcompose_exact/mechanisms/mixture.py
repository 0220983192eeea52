"""Mixtures of Gaussians: Gaussian noise whose sensitivity is a random variable.

``MixtureOfGaussians(sigma, sensitivities, probs)`` is the pair ``A = sum_i p_i N(c_i,
sigma^2)`` against ``B = N(0, sigma^2)`` (dp_accounting's ``MixtureOfGaussiansDpEvent``;
remove: the loss ``ln(A/B)`` under ``A``, add: ``ln(B/A)`` under ``B``).  The
Poisson-subsampled Gaussian is the mixture ``c in {0, s}``, ``p = (1 - q, q)``; sampling
with replacement a binomial mixture; the matrix mechanism's amplification a mixture of
norms (docs/theory.md, section 23).  The likelihood ratio ``r(x) = sum_i p_i
e^{(2 c_i x - c_i^2) / (2 sigma^2)}`` is increasing in the output ``x`` when every
sensitivity has one sign (a sum of non-decreasing exponentials), which the certified loss
grid needs (its cells are intervals of ``x``); sensitivities of both signs are refused
with that reason, all non-positive ones reflected (``x -> -x`` leaves the pair's privacy
where it was).  The class knows its distribution functions in Arb (``x_of_excess``,
``cdf_pairs``) and its float placement helpers; the loss grid that composes it is
:mod:`dpcompose_exact.engines.gridcells`.
"""

from __future__ import annotations

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

__all__ = [
    "MixtureOfGaussians",
    "ReplaceSubsampledGaussian",
    "mixture_of_gaussians",
    "binomial_mixture",
]

#: most components of one mixture (each costs an erfc per grid point)
MAX_COMPONENTS = 4096


def _items(value: Any, what: str) -> list[Any]:
    """A list of exact numbers: a list/tuple, or a string ``"0,1,2"`` / ``"(0;1;2)"``."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in "([" and text[-1:] in ")]":
            text = text[1:-1]
        parts = [p.strip() for p in text.replace(";", ",").split(",")]
        if not all(parts):
            raise InvalidParameterError(f"{what} {value!r}: an empty entry; write 0,1,2")
        return parts
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _log_sf(u: float) -> float:
    """``ln Phi_bar(u)`` in floats, also far beyond the smallest double (asymptotic there)."""
    if u < 30:
        return math.log(math.erfc(u / math.sqrt(2)) / 2)
    return -u * u / 2 - math.log(u) - 0.5 * math.log(2 * math.pi)


def _log(p: Fraction) -> float:
    """``ln p`` of a positive rational in floats, also below the smallest double."""
    return math.log(p.numerator) - math.log(p.denominator)


@dataclass(frozen=True)
class MixtureOfGaussians:
    """Gaussian noise of scale ``sigma`` whose sensitivity is ``c_i`` with probability ``p_i``.

    Canonical form: the sensitivities distinct, non-negative and increasing, each with a
    positive probability, the probabilities summing to exactly 1 (build it with
    :func:`mixture_of_gaussians`).
    """

    sigma: Fraction
    sensitivities: tuple[Fraction, ...]
    probs: tuple[Fraction, ...]

    def __post_init__(self) -> None:
        if self.sigma <= 0:
            raise InvalidParameterError(f"sigma = {self.sigma} must be > 0")
        if len(self.sensitivities) != len(self.probs) or not self.probs:
            raise InvalidParameterError(
                f"{len(self.sensitivities)} sensitivities and {len(self.probs)} probabilities: "
                "give one probability per sensitivity (at least one)"
            )
        if len(self.probs) > MAX_COMPONENTS:
            raise ResourceLimitError(
                f"a mixture of {len(self.probs)} Gaussians: over the limit of {MAX_COMPONENTS}"
                " components (each costs an erfc per grid point)"
            )
        c = self.sensitivities
        if any(x < 0 for x in c) or any(b <= a for a, b in zip(c, c[1:])):
            raise InvalidParameterError(
                f"sensitivities {[str(x) for x in c]}: not in canonical form (distinct, "
                ">= 0, increasing); build it with mixture_of_gaussians(...)"
            )
        if any(not 0 < p <= 1 for p in self.probs) or sum(self.probs) != 1:
            raise InvalidParameterError(
                f"probabilities {[str(p) for p in self.probs]} must lie in (0, 1] and sum to "
                f"exactly 1 (they sum to {sum(self.probs)})"
            )
        if c[-1] == 0:
            raise InvalidParameterError(
                "every sensitivity is 0: the mixture is the noise against itself (no privacy "
                "loss); give at least one nonzero sensitivity"
            )

    # -- what it is ----------------------------------------------------------------------
    @property
    def p0(self) -> Fraction:
        """The probability of sensitivity 0 (the likelihood ratio's infimum)."""
        return self.probs[0] if self.sensitivities[0] == 0 else Fraction(0)

    @property
    def c_max(self) -> Fraction:
        """The largest sensitivity."""
        return self.sensitivities[-1]

    def positive(self) -> list[tuple[Fraction, Fraction]]:
        """``(c_i, p_i)`` of the positive sensitivities."""
        return [(c, p) for c, p in zip(self.sensitivities, self.probs) if c > 0]

    def loss_pair(self) -> LossPair:
        """One sensitivity: the Gaussian; ``{0, c}``: the subsampled Gaussian; else grid noise.

        The pair's GDP ``mu*`` is that of its largest sensitivity (it is dominated by
        ``N(c_max, sigma^2)`` against ``N(0, sigma^2)`` by joint convexity, and its loss's
        tail is that component's; docs/theory.md, section 23).
        """
        if len(self.probs) == 1:
            return AdditiveNoise("gaussian", self.sigma, self.c_max).loss_pair()
        if len(self.probs) == 2 and self.p0 > 0:
            return SubsampledNoise(
                AdditiveNoise("gaussian", self.sigma, self.c_max), self.probs[1]
            ).loss_pair()
        return NoisePair(
            NoiseKind.GAUSSIAN, self.c_max / self.sigma, 1 - self.p0, self, GridEntry.MIXTURE
        )

    def subsample(self, q: Any) -> MixtureOfGaussians:
        """Poisson subsampling at rate ``q``: the mixture with sensitivity 0 added.

        Unsampled (probability ``1 - q``) the record shifts nothing, so the pair is the
        mixture ``(1 - q) N(0) + q sum_i p_i N(c_i)`` against ``N(0)``, exactly
        (docs/theory.md, section 23).
        """
        rate = parse_rational(q, "sampling probability")
        if not 0 < rate <= 1:
            raise InvalidParameterError(
                f"sampling probability q = {rate} is outside the valid range (0, 1]"
            )
        probs = [1 - rate, *(rate * p for p in self.probs)]
        return mixture_of_gaussians(self.sigma, [Fraction(0), *self.sensitivities], probs)

    def describe(self) -> str:
        """``gaussian sigma=1, sensitivity 0 (p=81/100), 1 (p=9/50), 2 (p=1/100)``."""
        parts = ", ".join(f"{c} (p={p})" for c, p in zip(self.sensitivities, self.probs))
        return f"mixture of gaussians sigma={self.sigma}, sensitivity {parts}"

    @property
    def label(self) -> str:
        """The ``--mech`` spelling: ``mog(1,(0,1,2),(81/100,9/50,1/100))``."""
        c = ",".join(str(x) for x in self.sensitivities)
        p = ",".join(str(x) for x in self.probs)
        return f"mog({self.sigma},({c}),({p}))"

    def to_dict(self) -> dict[str, Any]:
        """Its spec-file item: ``{"mixture_of_gaussians": {sigma, sensitivities, probs}}``."""
        return {
            "mixture_of_gaussians": {
                "sigma": str(self.sigma),
                "sensitivities": [str(c) for c in self.sensitivities],
                "probs": [str(p) for p in self.probs],
            }
        }

    def __repr__(self) -> str:
        c = [str(x) for x in self.sensitivities]
        p = [str(x) for x in self.probs]
        return f"mixture_of_gaussians({str(self.sigma)!r}, {c!r}, {p!r})"

    # -- floats, to place the grid only --------------------------------------------------
    def x_top(self, z: float) -> float:
        """An output above which ``A``'s mass is at most ``Phi_bar(z)`` (a float estimate).

        ``c_max + z sigma`` has it; a bisection finds a lower one when the large
        sensitivities are rare (a binomial mixture's far components), so that the grid ends
        where the mass does (what lies beyond goes to the leak, computed in Arb).
        """
        sig = float(self.sigma)
        hi = float(self.c_max) + z * sig
        target = _log_sf(z)
        lo = -z * sig

        def log_tail(x: float) -> float:
            terms = [_log(p) + _log_sf((x - float(c)) / sig)
                     for c, p in zip(self.sensitivities, self.probs)]
            top = max(terms)
            return top + math.log(sum(math.exp(t - top) for t in terms))

        top = hi
        if log_tail(lo) <= target:
            return lo
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if log_tail(mid) > target else (lo, mid)
        # within a sigma of c_max + z sigma: that point, where the subsampled Gaussian's
        # grid ends too (the mixture {0, c} then has its grid, bound for bound)
        return top if top - hi < sig else hi

    def x_bottom(self, z: float) -> float:
        """An output below which ``B`` (and so ``A``, whose shifts are ``>= 0``) is a tail."""
        return -z * float(self.sigma)

    def loss_floor(self) -> float:
        """``ln p0``, the infimum of the loss (``-inf`` without a zero sensitivity)."""
        return _log(self.p0) if self.p0 > 0 else -math.inf

    def _terms(self, x: float) -> list[float]:
        s2 = float(self.sigma) ** 2
        return [
            _log(p) + (2 * float(c) * x - float(c) ** 2) / (2 * s2) for c, p in self.positive()
        ]

    def loss_float(self, x: float) -> float:
        """``ln r(x)`` in floats."""
        terms = self._terms(x)
        if self.p0 > 0:
            terms.append(_log(self.p0))
        top = max(terms)
        return top + math.log(sum(math.exp(t - top) for t in terms))

    def x_of_excess_float(self, log_t: float) -> float:
        """The ``x`` where ``ln sum_{c_i > 0} p_i e^{(2 c_i x - c_i^2)/(2 sigma^2)} = log_t``.

        Newton's method on a convex increasing function from a point on its right (the
        largest term alone), so the iterates decrease to the root.
        """
        s2 = float(self.sigma) ** 2
        pos = [(float(c), float(p)) for c, p in self.positive()]
        c = pos[-1][0]
        x = (log_t - _log(self.positive()[-1][1])) * s2 / c + c / 2
        for _ in range(100):
            terms = self._terms(x)
            top = max(terms)
            w = [math.exp(t - top) for t in terms]
            g = top + math.log(sum(w)) - log_t
            slope = sum(wi * ci for wi, (ci, _) in zip(w, pos)) / sum(w) / s2
            step = g / slope
            x -= step
            if abs(step) <= 1e-15 * (1 + abs(x)):
                break
        return x

    def x_of_loss_float(self, loss: float) -> float:
        """The ``x`` where ``ln r(x) = loss`` (``-inf`` at or below ``ln p0``)."""
        if self.p0 > 0:
            lp0 = _log(self.p0)
            if loss <= lp0:
                return -math.inf
            excess = lp0 + math.log(math.expm1(loss - lp0))
        else:
            excess = loss
        return self.x_of_excess_float(excess)

    def a_tail_float(self, x: float) -> float:
        """``A(X > x)`` in floats."""
        sig = float(self.sigma)
        return sum(
            float(p) * math.erfc((x - float(c)) / sig / math.sqrt(2)) / 2
            for c, p in zip(self.sensitivities, self.probs)
        )

    def spread_float(self) -> float:
        """A float scale of one use's loss under ``B``: the std of ``r(X)``, at most ``c/s``.

        ``E_B[r^2] = sum_ij p_i p_j e^{c_i c_j / sigma^2}``, so ``Var_B r = sum_ij p_i p_j
        (e^{c_i c_j / sigma^2} - 1)``; a subsampled Gaussian's is ``q^2 (e^{mu^2} - 1)``.
        Components of probability below 1e-9 are left out (a choice: any grid is certified).
        """
        s2 = float(self.sigma) ** 2
        # rare components (a binomial mixture's far ones) make r's variance huge while the
        # loss's bulk, which the grid must resolve, does not see them: left out here
        cs = [(float(c), float(p)) for c, p in zip(self.sensitivities, self.probs) if p > 1e-9]
        var = sum(
            pi * pj * math.expm1(min(ci * cj / s2, 700.0)) for ci, pi in cs for cj, pj in cs
        )
        return min(math.sqrt(var), float(self.c_max / self.sigma))

    # -- Arb -----------------------------------------------------------------------------
    def x_of_ratio(self, r: flint.arb) -> flint.arb | None:
        """A ball holding the ``x`` with ``r(x) = r``; None when ``r <= p0`` (no output).

        Raises:
            ResourceLimitError: ``r`` is too close to ``p0`` to decide.
        """
        t = r - rational_ball(self.p0)
        if t > 0:
            return self.x_of_excess(t)
        if t <= 0:
            return None
        raise ResourceLimitError(f"undecided likelihood ratio {r} of {self!r}")

    def x_of_excess(self, t: flint.arb) -> flint.arb:
        """A ball holding the ``x`` where ``sum_{c_i > 0} p_i e^{(2 c_i x - c_i^2)/(2 s^2)} = t``.

        ``t > 0`` (the ratio minus ``p0``).  One positive sensitivity: the closed form.
        Else ``G(x) = ln sum ...`` is increasing with slope at least ``c_min / s^2``
        (``c_min`` the smallest positive sensitivity): a float Newton point, two Newton
        steps in Arb, then a bracket ``[x - e, x + e]`` with ``G(x - e) < ln t < G(x + e)``
        certified (each ball comparison is certain), widened until it holds.

        Raises:
            ResourceLimitError: no bracket was certified.
        """
        pos = self.positive()
        s2 = rational_ball(self.sigma * self.sigma)
        log_t = t.log()
        if len(pos) == 1:
            c, p = (rational_ball(v) for v in pos[0])
            return (log_t - p.log()) * s2 / c + c / 2
        lp = [(rational_ball(c) / s2, rational_ball(c * c) / (2 * s2), rational_ball(p).log())
              for c, p in pos]

        def big_g(x: flint.arb) -> flint.arb:
            return sum(((a * x - b + lgp).exp() for a, b, lgp in lp), flint.arb(0)).log()

        def newton(x: flint.arb) -> flint.arb:
            terms = [(a * x - b + lgp).exp() for a, b, lgp in lp]
            total = sum(terms, flint.arb(0))
            slope = sum((tm * a for tm, (a, _, _) in zip(terms, lp)), flint.arb(0)) / total
            return flint.arb((x - (total.log() - log_t.mid()) / slope).mid())

        x = flint.arb(self.x_of_excess_float(float(log_t.mid())))
        x = newton(newton(x))
        a_min = lp[0][0]
        e = flint.arb(2) ** -100 * (1 + abs(x)) + 2 * log_t.rad() / a_min
        e = flint.arb(e.upper())
        for _ in range(40):
            if big_g(x - e) < log_t and big_g(x + e) > log_t:
                return x + flint.arb(0, e.upper())
            e = e * 16
        raise ResourceLimitError(f"no certified output for the loss ratio {t} of {self!r}")

    def cdf_pairs(self, x: flint.arb) -> tuple[Any, Any, Any, Any]:
        """``(FA, FB, SA, SB)`` at ``x``: ``A(X <= x)``, ``B(X <= x)`` and their complements.

        ``Phi`` and ``1 - Phi`` each computed from its own tail (erfc), so both are
        relatively accurate where they are small.
        """
        root2 = flint.arb(2).sqrt()
        sc = rational_ball(self.sigma) * root2


        u = -x / sc
        fq, sq = erfc_halves(u)
        fa, sa = flint.arb(0), flint.arb(0)
        for c, p in zip(self.sensitivities, self.probs):
            fp, sp = (fq, sq) if c == 0 else erfc_halves(u + rational_ball(c) / sc)
            pb = rational_ball(p)
            fa += pb * fp
            sa += pb * sp
        return fa, fq, sa, sq


def mixture_of_gaussians(sigma: Any, sensitivities: Any, probs: Any) -> MixtureOfGaussians:
    """Gaussian noise ``N(0, sigma^2)`` whose sensitivity is ``c_i`` with probability ``p_i``.

    Exact inputs (strings, fractions, integers); the probabilities must sum to exactly 1.
    Equal sensitivities are merged and zero probabilities dropped; sensitivities that are
    all ``<= 0`` are reflected (the same privacy); both signs are refused (the likelihood
    ratio is then not monotone in the output, which the certified loss grid needs).

    >>> import dpcompose_exact as dx
    >>> dx.mixture_of_gaussians("1", ["0", "1", "2"], ["81/100", "18/100", "1/100"])
    mixture_of_gaussians('1', ['0', '1', '2'], ['81/100', '9/50', '1/100'])
    """
    cs = [parse_rational(c, "sensitivity") for c in _items(sensitivities, "sensitivities")]
    ps = [parse_rational(p, "probability") for p in _items(probs, "probabilities")]
    if len(cs) != len(ps):
        raise InvalidParameterError(
            f"{len(cs)} sensitivities and {len(ps)} probabilities: give one probability per "
            "sensitivity"
        )
    bad = [str(p) for p in ps if not 0 <= p <= 1]
    if bad:
        raise InvalidParameterError(f"probabilities {bad} are outside the valid range [0, 1]")
    if any(c > 0 for c in cs) and any(c < 0 for c in cs):
        raise InvalidParameterError(
            f"sensitivities {[str(c) for c in cs]} have both signs: the likelihood ratio of "
            "such a mixture is not monotone in the output, and the certified loss grid needs "
            "it monotone; give sensitivities of one sign (a vector mechanism: their norms)"
        )
    merged: dict[Fraction, Fraction] = {}
    for c, p in zip(cs, ps):
        if p:
            merged[abs(c)] = merged.get(abs(c), Fraction(0)) + p
    keys = sorted(merged)
    return MixtureOfGaussians(
        parse_rational(sigma, "sigma"), tuple(keys), tuple(merged[c] for c in keys)
    )


def binomial_mixture(
    sigma: Any, trials: int, p: Fraction, sensitivity: Any = 1
) -> MixtureOfGaussians:
    """Gaussian noise whose sensitivity is ``sensitivity * Binomial(trials, p)`` (exact).

    Sampling ``trials`` records with replacement from ``n`` gives the differing record
    ``Binomial(trials, 1/n)`` copies (docs/theory.md, section 23).
    """
    from math import comb

    p = Fraction(p)
    s = parse_rational(sensitivity, "sensitivity")
    probs = [comb(trials, j) * p**j * (1 - p) ** (trials - j) for j in range(trials + 1)]
    return mixture_of_gaussians(sigma, [s * j for j in range(trials + 1)], probs)


@dataclass(frozen=True)
class ReplaceSubsampledGaussian:
    """Poisson-subsampled Gaussian noise under replace-one (dp_accounting's ``REPLACE``).

    The pair ``A = q N(s, sigma^2) + (1 - q) N(0, sigma^2)`` against ``B = q N(-s, sigma^2)
    + (1 - q) N(0, sigma^2)``: the record is sampled with probability ``q`` and then
    contributes ``+s`` on one side, ``-s`` on the other (dp_accounting's
    ``GaussianPrivacyLoss`` with ``AdjacencyType.REPLACE``, reflected so that the loss
    increases with the output; docs/theory.md, section 23).  The reflection ``x -> -x``
    swaps ``A`` and ``B``: both directions have one loss distribution.
    """

    sigma: Fraction
    q: Fraction
    shift: Fraction = Fraction(1)

    def __post_init__(self) -> None:
        if self.sigma <= 0 or self.shift <= 0:
            raise InvalidParameterError(
                f"sigma = {self.sigma} and sensitivity = {self.shift} must be > 0"
            )
        if not 0 < self.q <= 1:
            raise InvalidParameterError(
                f"sampling probability q = {self.q} is outside the valid range (0, 1]"
            )

    def loss_pair(self) -> LossPair:
        """``q = 1``: the Gaussian of sensitivity ``2 s``; else grid noise (``REPLACE``)."""
        if self.q == 1:
            return AdditiveNoise("gaussian", self.sigma, 2 * self.shift).loss_pair()
        return NoisePair(
            NoiseKind.GAUSSIAN, 2 * self.shift / self.sigma, self.q, self, GridEntry.REPLACE
        )

    def describe(self) -> str:
        """``gaussian sigma=1 Poisson-subsampled at 1/100 under replace-one``."""
        extra = "" if self.shift == 1 else f" sensitivity={self.shift}"
        return (
            f"gaussian sigma={self.sigma}{extra} Poisson-subsampled at {self.q} under "
            "replace-one"
        )

    def to_dict(self) -> dict[str, Any]:
        """Exact strings: the noise, the rate and the relation."""
        return {
            "replace_one_subsampled_gaussian": {
                "sigma": str(self.sigma),
                "sensitivity": str(self.shift),
                "q": str(self.q),
            }
        }

    def __repr__(self) -> str:
        return f"ReplaceSubsampledGaussian({str(self.sigma)!r}, q={str(self.q)!r})"

    # -- floats, to place the grid only --------------------------------------------------
    def x_top(self, z: float) -> float:
        """An output above which ``A`` is a tail (``z`` sigmas above ``s``)."""
        return float(self.shift) + z * float(self.sigma)

    def x_bottom(self, z: float) -> float:
        """An output below which ``B`` is a tail (``z`` sigmas below ``-s``)."""
        return -float(self.shift) - z * float(self.sigma)

    def loss_floor(self) -> float:
        """The loss is unbounded below."""
        return -math.inf

    def loss_float(self, x: float) -> float:
        """``ln r(x)`` in floats."""
        s2, s, q = float(self.sigma) ** 2, float(self.shift), float(self.q)
        lq, lw = math.log(q), math.log1p(-q)

        def lse(a: float, b: float) -> float:
            top = max(a, b)
            return top + math.log(math.exp(a - top) + math.exp(b - top))

        return lse(lq + (2 * s * x - s * s) / (2 * s2), lw) - lse(
            lq + (-2 * s * x - s * s) / (2 * s2), lw
        )

    def x_of_loss_float(self, loss: float) -> float:
        """The ``x`` with ``ln r(x) = loss`` (bisection: ``ln r`` is increasing)."""
        lo, hi = self.x_bottom(60.0), self.x_top(60.0)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.loss_float(mid) < loss else (lo, mid)
            if hi - lo <= 1e-15 * (1 + abs(mid)):
                break
        return (lo + hi) / 2

    def a_tail_float(self, x: float) -> float:
        """``A(X > x)`` in floats."""
        sig, s, q = float(self.sigma), float(self.shift), float(self.q)
        return (q * math.erfc((x - s) / sig / math.sqrt(2)) + (1 - q) * math.erfc(
            x / sig / math.sqrt(2))) / 2

    def spread_float(self) -> float:
        """A float scale of one use's loss: about twice the add/remove pair's."""
        mu = float(self.shift / self.sigma)
        return min(2 * float(self.q) * math.sqrt(math.expm1(min(mu * mu, 700.0))), 2 * mu)

    # -- Arb -----------------------------------------------------------------------------
    def x_of_ratio(self, r: flint.arb) -> flint.arb:
        """The ``x`` with ``r(x) = r``: ``y = e^{s x / sigma^2}`` solves a quadratic.

        With ``k = q e^{-s^2/(2 sigma^2)}`` and ``w = 1 - q``, ``r (k/y + w) = k y + w``, so
        ``k y^2 + w (1 - r) y - r k = 0`` and ``y = (w (r - 1) + sqrt(D)) / (2k) = 2 k r /
        (sqrt(D) - w (r - 1))``, ``D = w^2 (r - 1)^2 + 4 k^2 r`` (the form without
        cancellation is taken; both are exact).
        """
        s, s2 = rational_ball(self.shift), rational_ball(self.sigma * self.sigma)
        w = rational_ball(1 - self.q)
        k = rational_ball(self.q) * (-s * s / (2 * s2)).exp()
        d = (w * (r - 1)) ** 2 + 4 * k * k * r
        root = d.sqrt()
        if r.mid() >= 1:
            y = (w * (r - 1) + root) / (2 * k)
        else:
            y = 2 * k * r / (root - w * (r - 1))
        return y.log() * s2 / s

    def cdf_pairs(self, x: flint.arb) -> tuple[Any, Any, Any, Any]:
        """``(FA, FB, SA, SB)`` at ``x``, each side from its own tail (erfc)."""
        sc = rational_ball(self.sigma) * flint.arb(2).sqrt()
        sh = rational_ball(self.shift) / sc
        q, w = rational_ball(self.q), rational_ball(1 - self.q)


        u = -x / sc
        f0, s0 = erfc_halves(u)
        fp, sp = erfc_halves(u + sh)  # N(s)
        fm, sm = erfc_halves(u - sh)  # N(-s)
        return q * fp + w * f0, q * fm + w * f0, q * sp + w * s0, q * sm + w * s0
