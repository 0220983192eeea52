"""The one mechanism protocol: every mechanism says what its privacy-loss pair is.

A mechanism of any kind -- a multi-constraint mechanism, randomized response, discrete
Laplace, a subsampled mechanism, Gaussian or Laplace noise, subsampled noise (all in
:mod:`dpcompose_exact.mechanisms`) -- answers :meth:`MechanismLike.loss_pair` with a
:class:`LossPair` in the strongest form it has (docs/architecture.md, "One mechanism").
A loss pair is a tagged union: one frozen variant per form, each holding typed fields,

* :class:`FinitePair` (``finite``): a symmetric finite pair in the exact field (a
  :class:`~dpcompose_exact.regions.pld.PLD`);
* :class:`DirectedPair` (``asymmetric``): an asymmetric finite pair with both directions,
  exact (``forward``: the loss ``ln(A/B)`` under ``A``; ``reverse``: ``ln(B/A)`` under
  ``B``), such as an exactly subsampled mechanism (docs/theory.md, section 15);
* :class:`BoundedPair` (``asymmetric bounds``): a stronger and a weaker directed pair,
  whose compositions bound the mechanism's from both sides;
* :class:`GaussianPair` (``gaussian``): the Gaussian pair ``G_mu`` (``mu2`` per use), which
  has a closed form;
* :class:`NoisePair` (``noise``): continuous noise of a :class:`NoiseKind` with certified
  distribution functions (Laplace, subsampled Gaussian or Laplace), composed on a
  certified loss grid.

The router (:mod:`dpcompose_exact.engines.routes`) decides by ``form`` alone and never
asks which class a mechanism is; a consumer takes a variant's fields apart with a class
pattern (``match pair: case DirectedPair(forward, reverse): ...``) or asks the questions
every variant answers (:meth:`LossPair.has_leak`, :meth:`LossPair.loss_cap`,
:meth:`LossPair.gaussian_mu2`, :meth:`LossPair.sides`, :meth:`LossPair.directions`,
:meth:`LossPair.grid_noise`).
``tests/test_types.py`` checks by AST that nothing reads a pair by shape.  A new
mechanism is one class with ``loss_pair``, ``describe`` and ``to_dict``
(docs/adding_a_mechanism.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Any, ClassVar, Protocol, runtime_checkable

from ..errors import InvalidParameterError
from ..numbers.convert import ball_end
from .pld import PLD

__all__ = [
    "PairForm",
    "NoiseKind",
    "GridEntry",
    "LossPair",
    "FinitePair",
    "DirectedPair",
    "BoundedPair",
    "GaussianPair",
    "NoisePair",
    "MechanismLike",
    "is_mechanism",
]


class PairForm(str, Enum):
    """The form of a mechanism's privacy-loss pair, from the strongest to the weakest."""

    FINITE = "finite"  #: symmetric finite pair in the exact field (a PLD)
    ASYMMETRIC = "asymmetric"  #: two directions, exact (a DirectedPair)
    ASYMMETRIC_BOUNDS = "asymmetric bounds"  #: a weaker and a stronger directed pair
    GAUSSIAN = "gaussian"  #: the Gaussian pair G_mu, closed form
    NOISE = "noise"  #: continuous noise with certified distribution functions

    def __str__(self) -> str:
        return self.value


class NoiseKind(str, Enum):
    """The noise of a :class:`NoisePair` (and of additive noise mechanisms)."""

    GAUSSIAN = "gaussian"  #: N(0, sigma^2)
    LAPLACE = "laplace"  #: Lap(b)

    def __str__(self) -> str:
        return self.value


class GridEntry(str, Enum):
    """What the certified loss grid composes for a noise pair (its :meth:`LossPair.grid_entry`).

    The noise itself enters the loss grid of docs/theory.md, section 15; one epoch of random
    allocation enters it through measures of its own (section 21).
    """

    NOISE = "noise"  #: the noise mechanism, Poisson-subsampled at the pair's rate
    ALLOCATION = "random allocation"  #: one epoch of random allocation
    #: a pair with its own distribution functions (a mixture of Gaussians, the replace-one
    #: subsampled Gaussian; section 23): ``rate`` is not a Poisson rate
    MIXTURE = "mixture of Gaussians"
    #: the Poisson-subsampled Gaussian under replace-one (its own distribution functions;
    #: its GDP mu* is not stated exactly)
    REPLACE = "replace-one subsampled Gaussian"
    #: a public-coin mixture of subsampled Gaussians with their own distribution functions
    #: (truncated Poisson sampling, section 23): its GDP mu* is not stated exactly
    PUBLIC_MIXTURE = "public-coin mixture of subsampled Gaussians"

    def __str__(self) -> str:
        return self.value


def _pld_cap(pld: PLD) -> Fraction:
    """A rational at or above every finite loss of a pair (0 without one)."""
    if not pld.masses:
        return Fraction(0)
    return max(Fraction(0), ball_end(pld.domain.loss_ball(pld.masses[-1][0], 128)))


class LossPair:
    """What a mechanism's privacy-loss pair is, in the strongest form it has.

    The base of the variants :class:`FinitePair`, :class:`DirectedPair`,
    :class:`BoundedPair`, :class:`GaussianPair` and :class:`NoisePair`; ``form`` names
    the variant for the router, and the methods below answer what every variant knows.
    """

    __slots__ = ()

    form: ClassVar[PairForm]

    @property
    def symmetric(self) -> bool:
        """True when both directions of the pair have the same loss distribution."""
        return True

    def has_leak(self) -> bool:
        """True when the pair puts mass where the other hypothesis has none (either way)."""
        return False

    def loss_cap(self) -> Fraction | None:
        """A rational at or above every loss of one use, both directions (None: unbounded)."""
        return None

    def gaussian_mu2(self) -> Fraction | None:
        """``mu^2`` of one use when the pair is Gaussian noise, subsampled or not; else None.

        Poisson subsampling leaves ``mu*`` where it was (docs/theory.md, section 20).
        """
        return None

    def sides(self) -> tuple[LossPair, LossPair]:
        """A stronger and a weaker pair: the pair itself twice, except for bounds."""
        return self, self

    def directions(self) -> tuple[PLD, PLD] | None:
        """``(forward, reverse)`` of an exact finite pair (the PLD twice when symmetric).

        None for the other forms (bounds: ask each of :meth:`sides`; noise).
        """
        return None

    def grid_noise(self) -> MechanismLike:
        """The noise mechanism that the certified loss grid composes (noise pairs only)."""
        raise InvalidParameterError(f"a loss pair of form {self.form} is not noise on a grid")

    def grid_entry(self) -> GridEntry:
        """How the certified loss grid composes the pair (noise pairs only)."""
        raise InvalidParameterError(f"a loss pair of form {self.form} is not noise on a grid")

    def laplace_eps0(self) -> Fraction | None:
        """``eps0`` when the pair is Laplace noise at rate 1, else None.

        The uses of one such pair compose on the certified Laplace grid (docs/theory.md,
        section 18).
        """
        return None


@dataclass(frozen=True)
class FinitePair(LossPair):
    """A symmetric finite pair in the exact field.

    Attributes:
        pld: its privacy-loss distribution (both directions alike).
    """

    form: ClassVar[PairForm] = PairForm.FINITE
    pld: PLD

    def has_leak(self) -> bool:
        """True when the PLD has mass at loss ``+inf``."""
        return not self.pld.leak.is_zero()

    def loss_cap(self) -> Fraction:
        """The largest finite loss, rounded up to a rational (0 without one)."""
        return _pld_cap(self.pld)

    def directions(self) -> tuple[PLD, PLD]:
        """The PLD in both directions."""
        return self.pld, self.pld


@dataclass(frozen=True)
class DirectedPair(LossPair):
    """An asymmetric finite pair ``(A, B)`` as two privacy-loss distributions.

    Attributes:
        forward: the loss ``ln(A/B)`` under ``A`` (the "remove" direction).
        reverse: the loss ``ln(B/A)`` under ``B`` (the "add" direction).
    """

    form: ClassVar[PairForm] = PairForm.ASYMMETRIC
    forward: PLD
    reverse: PLD

    @property
    def symmetric(self) -> bool:
        """False: the two directions differ."""
        return False

    def has_leak(self) -> bool:
        """True when either direction has mass at loss ``+inf``."""
        return not (self.forward.leak.is_zero() and self.reverse.leak.is_zero())

    def loss_cap(self) -> Fraction:
        """The larger of the two directions' largest finite losses."""
        return max(_pld_cap(self.forward), _pld_cap(self.reverse))

    def directions(self) -> tuple[PLD, PLD]:
        """``(forward, reverse)``."""
        return self.forward, self.reverse


@dataclass(frozen=True)
class BoundedPair(LossPair):
    """A stronger and a weaker directed pair around a mechanism that left the exact field.

    Composition keeps the order of trade-off functions, so the compositions with
    ``lower`` and ``upper`` bound the mechanism's from both sides (docs/theory.md, section
    15).

    Attributes:
        lower: the directed pair of a stronger mechanism.
        upper: the directed pair of a weaker mechanism.
    """

    form: ClassVar[PairForm] = PairForm.ASYMMETRIC_BOUNDS
    lower: DirectedPair
    upper: DirectedPair

    @property
    def symmetric(self) -> bool:
        """False: the two directions differ."""
        return False

    def has_leak(self) -> bool:
        """The stronger mechanism's leak is a leak."""
        return self.lower.has_leak()

    def loss_cap(self) -> Fraction:
        """The largest loss of either pair, either direction."""
        return max(self.lower.loss_cap(), self.upper.loss_cap())

    def sides(self) -> tuple[LossPair, LossPair]:
        """``(lower, upper)``."""
        return self.lower, self.upper


@dataclass(frozen=True)
class GaussianPair(LossPair):
    """The Gaussian pair ``G_mu``: ``N(mu, 1)`` against ``N(0, 1)``.

    Attributes:
        mu2: ``mu^2`` of one use: ``(sensitivity / sigma)^2``.
        noise: the noise mechanism on the loss grid at rate 1, for mixes the closed form
            does not cover.
    """

    form: ClassVar[PairForm] = PairForm.GAUSSIAN
    mu2: Fraction
    noise: MechanismLike

    def gaussian_mu2(self) -> Fraction:
        """``mu^2``."""
        return self.mu2

    def grid_noise(self) -> MechanismLike:
        """The Gaussian noise at rate 1."""
        return self.noise

    def grid_entry(self) -> GridEntry:
        """The noise itself."""
        return GridEntry.NOISE


@dataclass(frozen=True)
class NoisePair(LossPair):
    """Continuous noise, maybe Poisson-subsampled, composed on a certified loss grid.

    Attributes:
        kind: Gaussian or Laplace noise.
        mu: ``sensitivity / scale``: the Gaussian ``mu``, or the Laplace ``eps0``.
        rate: the Poisson sampling rate in ``(0, 1]`` (1: not subsampled).
        noise: the noise mechanism the loss grid composes.
        entry: how the loss grid composes it: the noise at ``rate``, or (``ALLOCATION``)
            one epoch of random allocation of ``1/rate`` steps, which ``noise`` is.
    """

    form: ClassVar[PairForm] = PairForm.NOISE
    kind: NoiseKind
    mu: Fraction
    rate: Fraction
    noise: MechanismLike
    entry: GridEntry = GridEntry.NOISE

    @property
    def symmetric(self) -> bool:
        """True without subsampling (the rate makes the pair asymmetric); mixtures: False."""
        return self.rate == 1 and self.entry is GridEntry.NOISE

    def loss_cap(self) -> Fraction | None:
        """Laplace: ``eps0`` (subsampling keeps both directions' losses below it)."""
        return self.mu if self.kind is NoiseKind.LAPLACE else None

    def gaussian_mu2(self) -> Fraction | None:
        """Gaussian: ``mu^2`` at any rate (docs/theory.md, section 20); replace-one: None.

        A public-coin mixture (truncated Poisson sampling): None too.
        """
        if self.entry in (GridEntry.REPLACE, GridEntry.PUBLIC_MIXTURE):
            return None
        return self.mu * self.mu if self.kind is NoiseKind.GAUSSIAN else None

    def grid_noise(self) -> MechanismLike:
        """The noise mechanism."""
        return self.noise

    def grid_entry(self) -> GridEntry:
        """The noise at its rate, or the epoch of a random allocation."""
        return self.entry

    def laplace_eps0(self) -> Fraction | None:
        """Laplace noise at rate 1: ``eps0 = sensitivity / b``."""
        plain = self.rate == 1 and self.entry is GridEntry.NOISE
        return self.mu if plain and self.kind is NoiseKind.LAPLACE else None


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
