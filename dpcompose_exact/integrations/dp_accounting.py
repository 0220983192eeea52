"""An exact ``dp_accounting.PrivacyAccountant`` and a DpEvent for several (eps, delta) constraints.

:class:`ExactAccountant` is a drop-in accountant for Google's ``dp_accounting`` (0.6):
anything that takes a ``PrivacyAccountant`` -- ``calibrate_dp_mechanism``, a training
loop's ledger -- can use it.  It composes the privacy-loss distributions of the events
**exactly** (docs/theory.md, section 3) where they are finite:

* ``NoOpDpEvent``: nothing;
* ``NonPrivateDpEvent``: infinite epsilon, delta 1;
* ``ComposedDpEvent``, ``SelfComposedDpEvent``: their parts, with counts;
* :class:`DpConstraintsEvent`: every listed (eps, delta) constraint at once (exact);
* ``RandomizedResponseDpEvent``: its exact pair (``REPLACE_ONE``); exact;
* ``DiscreteLaplaceDpEvent``: its exact pair, shift = sensitivity (``ADD_OR_REMOVE_ONE``,
  ``REPLACE_SPECIAL``) or 2 x sensitivity (``REPLACE_ONE``); exact;
* ``GaussianDpEvent``: all Gaussian events together are one Gaussian G_mu,
  mu^2 = sum count_i / sigma_i^2 (x 4 for ``REPLACE_ONE``).  When only Gaussian events
  were composed, delta and eps come from its closed form in Arb, a certified enclosure of
  the exact value (docs/theory.md, section 18); next to other events, G_mu is approximated
  **from below** by ``pieces`` (eps, delta) constraints (section 9): sound, not exact;
* ``LaplaceDpEvent``: loss bound eps0 = 1/b (x 2 for ``REPLACE_ONE``).  When only Laplace
  events of one noise level were composed, the certified loss grid of section 18 encloses
  delta and eps from both sides (at least as tight as dp_accounting's pessimistic PLD at
  its default grid); otherwise eps0-DP together with its approximation from below.

:meth:`ExactAccountant.delta_value` and :meth:`ExactAccountant.epsilon_value` return the
two-sided :class:`~dpcompose_exact.numbers.value.Value`; ``get_delta``/``get_epsilon`` its upper
end.

* ``PoissonSampledDpEvent`` (``ADD_OR_REMOVE_ONE``) and ``SampledWithoutReplacementDpEvent``
  (``REPLACE_ONE``) of randomized response, discrete Laplace and :class:`DpConstraintsEvent`:
  both directions of the subsampled pair, exact when the losses stay logarithms of
  rationals, else bounded from both sides (the upper end is returned)
  (:mod:`dpcompose_exact.integrations.events`, docs/theory.md, section 15);
* the same sampled events of ``GaussianDpEvent`` and ``LaplaceDpEvent``: certified
  two-sided bounds from a loss grid (:mod:`dpcompose_exact.engines.subsample_grid`),
  alone or next to other events (the finite ones, subsampled or not, composed exactly
  and conditioned on, docs/theory.md, section 19);
* ``MixtureOfGaussiansDpEvent`` and ``SampledWithReplacementDpEvent`` of a Gaussian (a
  binomial mixture), under ``ADD_OR_REMOVE_ONE``, and ``PoissonSampledDpEvent`` of a
  Gaussian under ``REPLACE_ONE``: certified two-sided bounds from the loss grid
  (docs/theory.md, section 23);
* ``TruncatedSubsampledGaussianDpEvent`` (``ADD_OR_REMOVE_ONE``): a public-coin mixture of
  two subsampled Gaussians (the batch cut or not; certified binomial tails), two-sided
  bounds from the loss grid, below dp_accounting's own reading; and
  ``SampledWithoutReplacementDpEvent`` of Gaussian, Laplace and discrete Laplace events
  under ``ADD_OR_REMOVE_ONE`` too: the pair read under ``REPLACE_ONE`` (the record takes
  the place of another in the batch; docs/theory.md, section 23);
* :class:`RandomAllocationDpEvent` (this package's own, ``ADD_OR_REMOVE_ONE``): one
  epoch of Gaussian random allocation, certified two-sided bounds from its loss grid
  (docs/theory.md, section 21), composed with every other event and over epochs.
* ``ZCDpEvent``: the ``rho`` and ``xi`` of every zCDP event added first; when only zCDP
  events were composed, ``delta_value``/``epsilon_value`` are the certified bracket
  between the Gaussian of ``mu^2 = 2 rho`` and the Canonne-Kamath-Steinke conversion
  (:mod:`dpcompose_exact.engines.zcdp`; ``get_*`` its upper end); next to other events,
  the conversion's points as (eps, delta) constraints
  (:func:`dpcompose_exact.mechanisms.zcdp.zcdp`), composed exactly: an **upper bound**
  (``bound_notes`` says so; docs/theory.md, section 22);
* ``SingleEpochTreeAggregationDpEvent`` (``REPLACE_SPECIAL``, as dp_accounting): the
  Gaussian of ``mu^2 = depth / sigma^2``, ``depth = ceil(log2(max steps + 1))``;
* ``PoissonSampledDpEvent`` of a ``ComposedDpEvent`` or ``SelfComposedDpEvent`` of
  Gaussian events: one subsampled Gaussian of ``mu^2 = sum 1/sigma_i^2``; an irrational
  ``mu`` is composed twice, with the rational ``mu`` just above and just below it, and
  ``delta_value``/``epsilon_value`` keep the outer ends (``get_*`` and :attr:`composition`:
  the one above, an upper bound); with parts of another kind it is refused with the
  reason;
* ``RepeatAndSelectDpEvent`` of a pure eps-DP event: ``(2 + shape) eps``-DP (truncated
  negative binomial), ``eps + mean tanh(eps/2)``-DP (Poisson), a certified bound composed
  as one constraint (docs/theory.md, section 22); of an event with certified Rényi
  divergences (Gaussian noise, subsampled or not; zCDP), Papernot and Steinke's Rényi
  bounds as (eps, delta) constraints, an **upper bound** (``bound_notes`` says so); other
  events are refused with the reason.

``supports()`` is False for every other event (the dp_accounting convention).  Randomized
response under ``REPLACE_SPECIAL`` is an asymmetric pair, which this accountant does not
compose; it is refused with a message, unless it reveals nothing (one bucket or ``p = 1``:
(0, 0) under every relation).  A parameter outside its range raises a ``ValueError``
(:class:`~dpcompose_exact.integrations.events.EventParameterError`) from ``compose``, as
dp_accounting's accountants do; ``supports()`` looks at the kind of event only.  The
factor 2 under ``REPLACE_ONE`` for additive noise is dp_accounting's own convention (its
``REPLACE`` adjacency shifts both distributions by the sensitivity); its PLD accountant
applies it to Gaussian events and refuses Laplace events under ``REPLACE_ONE``.

**Floats.**  dp_accounting passes parameters and targets as Python floats.  Following the
package's one rule for floats (docs/api_guide.md, "Exact inputs and floats"), a float
where dp_accounting defines one -- its events' parameters, the targets of ``get_delta``
and ``get_epsilon`` -- is read as the shortest decimal that round-trips (``repr``):
``0.1`` means 1/10, what a person typed; :class:`DpConstraintsEvent`, this package's own
event, takes exact values only (strings, ints, Decimals, Fractions) and refuses floats.
The guarantee is therefore about the decimal the user wrote.  A float that came out of a
computation (``0.1 + 0.2``) is read as ``0.30000000000000004``, which is also exact; to
account for the exact binary value of a double instead, put ``fractions.Fraction(x)``,
``decimal.Decimal(x)`` or a string in the event (attrs does not check the types).  The
difference between the decimal and the double is below 1e-16 relatively; for noise
parameters it is far below the error of any float noise sampler, so this reading does not
weaken a guarantee in practice, but it is a statement about the decimal, not about the
double.

**Results.**  ``get_delta`` and ``get_epsilon`` return doubles that are never below the exact
value (``Value.upper()``: certified rounding up); :attr:`ExactAccountant.composition` is the
exact :class:`~dpcompose_exact.composition.Composition`, whose queries answer with exact or
certified :class:`~dpcompose_exact.numbers.value.Value` objects; :attr:`ExactAccountant.is_exact`
says whether an approximation (Gaussian, Laplace) was used.

Epsilons of different events must be commensurable for the exact engine (rational
multiples of one generator, plus logarithms of rationals): an event family with a float
parameter from a numerical search composes fine with itself, but ``0.3`` next to
``0.30000000000000004`` needs a generator of 1e-17 and is refused with
:class:`~dpcompose_exact.errors.ResourceLimitError`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import Decimal  # noqa: F401 - the docstrings' examples
from fractions import Fraction
from typing import Any

from ..optional import require

# one line naming the extra when dp_accounting (or attrs, which it brings) is missing
require("dp_accounting", "ExactAccountant (dpcompose_exact.integrations.dp_accounting)")

import dp_accounting
import flint
from dp_accounting import dp_event
from dp_accounting.privacy_accountant import NeighboringRelation
from mpmath import mp

from ..api import compose
from ..composition import Composition
from ..engines.gaussian import gaussian_delta_ball
from ..engines.genfunc import DEFAULT_MEMORY_LIMIT
from ..engines.zcdp import zcdp_delta, zcdp_epsilon
from ..errors import (
    BelowLeakError,
    DPComposeError,
    InvalidParameterError,
    ResourceLimitError,
    UnsupportedQueryError,
)
from ..mechanisms.zcdp import zcdp
from ..numbers.value import Value
from ..presentation.export import float_upper
from ..regions.protocol import LossPair, PairForm
from .dp_events import (
    DpConstraintsEvent,
    MechanismDpEvent,
    RandomAllocationDpEvent,
    discrete_laplace_mechanism,
    exact_number,
    randomized_response_mechanism,
)
from .events import EventParameterError, event_kinds

__all__ = [
    "DpConstraintsEvent",
    "MechanismDpEvent",
    "RandomAllocationDpEvent",
    "ExactAccountant",
    "discrete_laplace_mechanism",
    "exact_number",
    "gaussian_constraint",
    "gaussian_delta_ball",
    "randomized_response_mechanism",
]

_Details = dp_accounting.PrivacyAccountant.CompositionErrorDetails
#: deltas at which a Gaussian gets an exact tangent constraint (see ExactAccountant)
DEFAULT_TAIL_DELTAS = (
    *("0.1", "0.05", "0.02", "0.01", "0.005", "0.002", "0.001"),
    *("1e-4", "1e-5", "1e-6", "1e-7", "1e-8", "1e-9", "1e-10", "1e-12"),
)
_ADDITIVE_ONE = (NeighboringRelation.ADD_OR_REMOVE_ONE, NeighboringRelation.REPLACE_SPECIAL)


class ExactAccountant(dp_accounting.PrivacyAccountant):
    """A dp_accounting accountant that composes exactly (see the module docstring).

    Every event becomes a ``(mechanism, count)`` kind and the kinds are composed by the
    front door, :func:`dpcompose_exact.compose`, through the one router: exact where
    every pair is finite, the Gaussian closed form (conditioned on the exact loss of the
    finite part) where the noise is Gaussian, certified loss grids otherwise.

    Args:
        neighboring_relation: dp_accounting's ``NeighboringRelation``.
        pieces: kept for compatibility (Gaussian and Laplace events were once approximated
            by this many (eps, delta) constraints; they are now composed by certified
            closed forms and grids); must be a positive integer.
        gaussian_tail_deltas: kept for compatibility (see ``pieces``); deltas in (0, 1).
        eps_grid: kept for compatibility (see ``pieces``); a positive integer.
        max_memory: bytes the exact composition may use before it switches to the
            certified route (ball arithmetic, same structure).

    >>> from dp_accounting import SelfComposedDpEvent
    >>> acc = ExactAccountant().compose(
    ...     SelfComposedDpEvent(DpConstraintsEvent([("0.3", "0"), ("0.15", "0.02")]), 20))
    >>> acc.get_delta(1.0)  # delta(1) = 0.0886640230933366154..., rounded up
    0.08866402309333662
    >>> acc.composition.delta("1").decimal(12)
    '0.0886640230933'
    """

    def __init__(
        self,
        neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE,
        pieces: int = 4,
        max_memory: int | None = DEFAULT_MEMORY_LIMIT,
        gaussian_tail_deltas: Iterable[Any] = DEFAULT_TAIL_DELTAS,
        eps_grid: int = 100,
    ) -> None:
        super().__init__(neighboring_relation)
        if isinstance(pieces, bool) or not isinstance(pieces, int) or pieces < 1:
            raise InvalidParameterError(f"pieces = {pieces!r} must be a positive integer")
        if isinstance(eps_grid, bool) or not isinstance(eps_grid, int) or eps_grid < 1:
            raise InvalidParameterError(f"eps_grid = {eps_grid!r} must be a positive integer")
        tails = tuple(exact_number(t, "gaussian_tail_deltas") for t in gaussian_tail_deltas)
        if any(not 0 < t < 1 for t in tails):
            raise InvalidParameterError("gaussian_tail_deltas must lie in (0, 1)")
        self._max_memory = max_memory
        self._kinds: dict[Any, int] = {}  # every mechanism (any kind) -> count
        self._zcdp = (Fraction(0), Fraction(0))  # (rho, xi) of every ZCDpEvent, added
        self._lower: dict[Any, Any] = {}  # an upper-bounding mechanism -> its lower one
        self._notes: list[str] = []
        self._non_private = False
        self._cache: dict[str, Any] = {}

    # -- what was composed ------------------------------------------------------------
    @property
    def is_exact(self) -> bool:
        """False when the answers are certified enclosures (noise, bounded subsampling)."""
        comp = self.composition
        return comp is None or comp.is_exact

    @property
    def bound_notes(self) -> tuple[str, ...]:
        """One line per event kind answered by a certified enclosure (empty when exact)."""
        return tuple(dict.fromkeys(self._notes))

    @property
    def is_non_private(self) -> bool:
        """True once a non-private event was composed (epsilon is infinite)."""
        return self._non_private

    @property
    def composition(self) -> Composition | None:
        """The composition of everything accounted so far (:func:`dpcompose_exact.compose`).

        None when nothing private was composed or when a non-private event was.
        """
        if self._non_private or not (self._kinds or any(self._zcdp)):
            return None
        if "composition" not in self._cache:
            kinds = list(self._kinds.items())
            if any(self._zcdp):  # the summed guarantee, once (an upper bound)
                kinds.append((zcdp(*self._zcdp), 1))
            self._cache["composition"] = compose(kinds, max_memory=self._max_memory)
        return self._cache["composition"]

    def _lower_composition(self) -> Composition | None:
        """The composition with each upper-bounding mechanism swapped for its lower one.

        None when no mechanism was bracketed (a sampled composition of Gaussians with an
        irrational mu is read between the rational mu just below and just above it).
        """
        comp = self.composition
        if comp is None or not self._lower:
            return None
        if "lower" not in self._cache:
            kinds = [(self._lower.get(m, m), n) for m, n in comp.kinds]
            self._cache["lower"] = compose(kinds, max_memory=self._max_memory)
        return self._cache["lower"]

    def _bracketed(self, upper: Value, query: str, point: Any) -> Value:
        """``upper``, or the bracket from the lower composition's lower end to its upper end."""
        lower = self._lower_composition()
        if lower is None:
            return upper
        below = getattr(lower, query)(point)
        return Value.from_interval(below.ends()[0], upper.ends()[1], nonnegative=True)

    @property
    def zcdp_only(self) -> bool:
        """True when only ``ZCDpEvent`` events were composed (answers: the zCDP bracket).

        Their ``(xi, rho)`` add up; ``delta``/``eps`` are then the certified bracket of
        :mod:`dpcompose_exact.engines.zcdp` (the Gaussian below, the Canonne-Kamath-Steinke
        conversion above), not the composition of the constraints.
        """
        return not self._non_private and not self._kinds and any(self._zcdp)

    # -- dp_accounting interface --------------------------------------------------------
    def compose(self, event: dp_event.DpEvent, count: int = 1) -> ExactAccountant:
        """dp_accounting's ``compose``, with a count that is not a Python int refused first.

        dp_accounting's event ledger (``DpEventBuilder``), which every accountant shares,
        takes Python ints only as counts (``count``, and the count of each ``SelfComposedDpEvent``
        it unrolls): its own accountants refuse ``np.int64(3)`` with this ``TypeError``, and
        so does this one, keeping their contract; the message says why and what to pass.
        """
        for n in _ledger_counts(event, count):
            if not isinstance(n, int):
                raise TypeError(
                    f"`count` must be an integer. Found {type(n)}: {n!r} is refused by "
                    "dp_accounting's event ledger (DpEventBuilder), as by every dp_accounting "
                    f"accountant (PLDAccountant, RdpAccountant); pass int({n!r})"
                )
        super().compose(event, count)
        return self

    def _maybe_compose(
        self, event: dp_event.DpEvent, count: int, do_compose: bool
    ) -> _Details | None:
        try:
            kinds = event_kinds(event, self.neighboring_relation, self._pair_limit())
        except ResourceLimitError:
            raise  # a supported event too large to compose: say so, not "unsupported"
        except EventParameterError:
            # a supported event with a parameter outside its range: a ValueError from
            # compose, as dp_accounting's accountants raise (supports() looks at the kind
            # of event only, as theirs do)
            if do_compose:
                raise
            return None
        except DPComposeError as exc:
            return _Details(invalid_event=getattr(exc, "event", event), error_message=str(exc))
        if do_compose and count:
            if kinds.non_private:
                self._non_private = True
            for mechanism, n in kinds.without_zcdp():
                self._kinds[mechanism] = self._kinds.get(mechanism, 0) + count * n
            self._lower.update(kinds.lower)
            rho, xi = self._zcdp
            self._zcdp = (rho + count * kinds.rho, xi + count * kinds.xi)
            self._notes.extend(kinds.notes)
            self._cache.clear()
        return None

    def _pair_limit(self) -> int | None:
        """Bytes one event's exact pair may take.

        ``max_memory`` chooses the route of the composition, so a pair is refused only
        past the larger of it and the default.
        """
        if self._max_memory is None:
            return None
        return max(self._max_memory, DEFAULT_MEMORY_LIMIT)

    def delta_value(self, eps: Any) -> Value:
        """``delta(eps)`` as a :class:`Value`: exact, or a certified two-sided enclosure.

        ``eps`` is read exactly (strings, Fractions; floats as their ``repr`` decimal).
        """
        e = exact_number(eps, "eps")
        if e < 0:
            raise InvalidParameterError(f"eps = {e} is negative; valid range: eps >= 0")
        if self._non_private:
            return Value.from_rational(1)
        if self.zcdp_only:
            return zcdp_delta(self._zcdp[0], e, self._zcdp[1])
        comp = self.composition
        if comp is None:
            return Value.from_rational(0)
        value = comp.delta(e)
        assert isinstance(value, Value)
        return self._bracketed(value, "delta", e)

    def epsilon_value(self, delta: Any) -> Value:
        """``eps(delta)`` as a :class:`Value` (exact or a certified two-sided enclosure).

        ``delta = 0`` gives the pure-DP epsilon where there is one (the largest loss).

        Raises:
            InvalidParameterError: ``delta`` outside ``[0, 1)``, or below the leak (no eps).
        """
        d = exact_number(delta, "delta")
        if not 0 <= d < 1:
            raise InvalidParameterError(f"delta = {d} is outside the valid range [0, 1)")
        if self._non_private:
            raise InvalidParameterError("a non-private event was composed: eps is infinite")
        if self.zcdp_only and self._zcdp[0] > 0:
            if d == 0:
                raise BelowLeakError(
                    f"delta = 0 is below every delta of rho = {self._zcdp[0]}-zCDP: the "
                    "Gaussian of mu^2 = 2 rho is one such mechanism, and it has no finite eps "
                    "at delta = 0; ask at a delta > 0"
                )
            return zcdp_epsilon(self._zcdp[0], d, self._zcdp[1])
        comp = self.composition
        if comp is None:
            return Value.from_rational(0)
        value = comp.epsilon(d)
        assert isinstance(value, Value)
        return self._bracketed(value, "epsilon", d)

    # -- queries --------------------------------------------------------------------------
    def get_delta(self, target_epsilon: float) -> float:
        """Delta at ``target_epsilon``, rounded up (never below the exact value)."""
        if isinstance(target_epsilon, float) and math.isnan(target_epsilon):
            raise ValueError("target_epsilon is nan")
        if target_epsilon < 0:
            raise ValueError(f"target_epsilon = {target_epsilon!r} must be >= 0")
        if self._non_private:
            return 1.0
        comp = self.composition
        if comp is None:
            return 0.0
        if math.isinf(target_epsilon):
            if self.zcdp_only:  # the conversion tends to 0 (the constraints stop at 1e-13)
                return 0.0
            return min(1.0, _leak_upper(comp))  # the leak: delta at infinite eps
        eps = exact_number(target_epsilon, "target_epsilon")
        value = zcdp_delta(self._zcdp[0], eps, self._zcdp[1]) if self.zcdp_only else comp.delta(eps)
        assert isinstance(value, Value)
        return min(1.0, value.upper())

    def get_epsilon(self, target_delta: float) -> float:
        """Epsilon at ``target_delta``, rounded up (``inf`` when delta is below the leak)."""
        if isinstance(target_delta, float) and math.isnan(target_delta):
            raise ValueError("target_delta is nan")
        if target_delta < 0:
            raise ValueError(f"target_delta = {target_delta!r} must be >= 0")
        if self._non_private:
            return math.inf
        comp = self.composition
        if comp is None or target_delta >= 1:
            return 0.0
        delta = exact_number(target_delta, "target_delta")
        if self.zcdp_only and delta > 0:
            return float_upper(zcdp_epsilon(self._zcdp[0], delta, self._zcdp[1]))
        if delta == 0 and not comp.is_exact:
            if _leak_upper(comp) > 0:
                return math.inf
            if self._has_noise():
                # Laplace noise has a pure eps (its largest loss, what epsilon_value(0)
                # answers); Gaussian noise has none and is refused: no finite eps
                try:
                    return float_upper(comp.epsilon(delta))
                except (InvalidParameterError, UnsupportedQueryError):
                    return math.inf
            return 0.0
        try:
            eps = comp.epsilon(delta)
        except BelowLeakError:
            return math.inf
        return float_upper(eps)

    def _has_noise(self) -> bool:
        return any(m.loss_pair().form in _NOISE for m in self._kinds)


_NOISE = (PairForm.GAUSSIAN, PairForm.NOISE)


def _ledger_counts(event: dp_event.DpEvent, count: Any) -> Iterable[Any]:
    """The counts dp_accounting's ledger checks: ``count``, then each one it unrolls.

    ``DpEventBuilder.compose`` multiplies ``count`` by the count of a
    ``SelfComposedDpEvent`` and recurses into its event; other events are stored whole.
    """
    yield count
    while isinstance(event, dp_event.SelfComposedDpEvent):
        yield event.count
        event = event.event


def _leak_upper(comp: Composition) -> float:
    """A double >= the composition's delta at infinite eps: ``1 - prod (1 - leak_i)^k_i``.

    Read from the composed kinds' loss pairs (the mass at loss +inf of each; 0 for
    Gaussian and Laplace noise, whose losses are finite), per direction for asymmetric
    pairs, so it works for results known only by bounds too.
    """
    prec = 128
    with flint.ctx.workprec(prec):
        keep = {"fwd": flint.arb(1), "rev": flint.arb(1)}
        for mechanism, count in comp.kinds:
            for direction, leak in _leaks(mechanism.loss_pair(), prec).items():
                keep[direction] *= (1 - leak) ** count
        worst = max((1 - k).upper() for k in keep.values())
        return float_upper(Value.from_ball(worst))


def _leaks(pair: LossPair, prec: int) -> dict[str, flint.arb]:
    """The mass at loss +inf of one use, per direction (an upper ball)."""
    both = pair.sides()[1].directions()  # the weaker side of bounds
    if both is None:  # Gaussian and Laplace noise: no leak
        zero = flint.arb(0)
        return {"fwd": zero, "rev": zero}
    fwd, rev = both
    return {
        "fwd": fwd.domain.elem_ball(fwd.leak, prec),
        "rev": rev.domain.elem_ball(rev.leak, prec),
    }


def gaussian_constraint(
    mu2: Fraction, target: Fraction, grid: int = 100
) -> tuple[Fraction, Fraction] | None:
    """A constraint ``(eps, delta)`` that G_mu satisfies, with ``delta`` just above ``target``.

    ``eps`` solves ``delta_G(eps) = target`` numerically and is rounded up to 1/grid;
    ``delta`` is a certified upper bound of ``delta_G(eps)`` rounded up to 12 significant
    digits, so the constraint is a valid guarantee however the solve went.  None when
    ``delta_G(0) <= target`` (the mechanism is already (0, target)-DP: no tangent needed).
    """
    m = mp.sqrt(mp.mpf(mu2.numerator) / mu2.denominator)
    with mp.workdps(30):

        def delta(x: Any) -> Any:
            return mp.ncdf(-x / m + m / 2) - mp.exp(x) * mp.ncdf(-x / m - m / 2)

        t = mp.mpf(target.numerator) / target.denominator
        if delta(mp.mpf(0)) <= t:
            return None
        lo, hi = mp.mpf(0), mp.mpf(1)
        while delta(hi) > t:
            lo, hi = hi, 2 * hi
        for _ in range(80):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if delta(mid) > t else (lo, mid)
        eps = Fraction(math.ceil(hi * grid), grid)
    # Not numbers.certify.refine: this loop never fails; past 2^14 bits it keeps the last
    # ball, whose upper end is a valid bound however wide the ball is.
    bits = 128
    while True:
        ball = gaussian_delta_ball(mu2, eps, bits)
        if ball.rel_accuracy_bits() >= 60 or bits > 1 << 14:
            break
        bits *= 2
    hi_ = ball.upper()
    man, exp = (int(v) for v in hi_.mid().man_exp())
    upper = Fraction(man) * Fraction(2) ** exp
    if upper <= 0:
        return None
    scale = Fraction(10) ** (11 - math.floor(math.log10(upper)))
    return eps, min(Fraction(math.ceil(upper * scale)) / scale, Fraction(1))
