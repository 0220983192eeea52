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
  (:mod:`dpcompose_exact.integrations.event_tree`, docs/theory.md, section 15);
* the same sampled events of ``GaussianDpEvent`` and ``LaplaceDpEvent``: certified
  two-sided bounds from a loss grid (:mod:`dpcompose_exact.engines.subsample_grid`),
  when only subsampled noise events were composed (next to other events: refused).

``supports()`` is False for every other event (the dp_accounting convention).  Randomized
response under ``REPLACE_SPECIAL`` is an asymmetric pair, which this accountant does not
compose; it is refused with a message.  The factor 2 under ``REPLACE_ONE`` for additive
noise is dp_accounting's own convention (its ``REPLACE`` adjacency shifts both
distributions by the sensitivity); its PLD accountant applies it to Gaussian events and
refuses Laplace events under ``REPLACE_ONE``.

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

from ..api import Mechanism, compose
from ..composition import Composition
from ..engines.genfunc import DEFAULT_MEMORY_LIMIT
from ..engines.pldgrid import LaplaceGrid, gaussian_delta, gaussian_delta_ball, gaussian_epsilon
from ..errors import BelowLeakError, DPComposeError, InvalidParameterError, ResourceLimitError
from ..numbers.value import Value
from ..paper.approx import approx_from_below, gaussian_from_mu2, laplace
from ..presentation.export import float_upper
from ..regions.tradeoff import dp_region
from .dp_events import (
    DpConstraintsEvent,
    discrete_laplace_mechanism,
    exact_number,
    randomized_response_mechanism,
)

__all__ = [
    "DpConstraintsEvent",
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

    Args:
        neighboring_relation: dp_accounting's ``NeighboringRelation``.
        pieces: number of (eps, delta) constraints approximating a Gaussian or a Laplace
            mechanism from below (more pieces: a tighter bound, a slower composition).
        gaussian_tail_deltas: deltas at which the Gaussian also gets its own tangent
            constraint ``(eps, delta_G(eps))`` (eps rounded up to 1/1000, delta a certified
            upper bound): the ``pieces`` constraints alone never reach a delta below their
            smallest one, so without these ``get_epsilon(1e-5)`` would be infinite.
        eps_grid: the epsilons of these approximations are multiples of ``1/eps_grid``
            (rounded up: still valid).  The exact engine works in ``z = e^(1/eps_grid)``,
            so a finer grid means longer polynomials (1000: about 30x slower than 100).
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
        self._pieces = pieces
        if isinstance(eps_grid, bool) or not isinstance(eps_grid, int) or eps_grid < 1:
            raise InvalidParameterError(f"eps_grid = {eps_grid!r} must be a positive integer")
        self._eps_grid = eps_grid
        self._tail_deltas = tuple(
            exact_number(t, "gaussian_tail_deltas") for t in gaussian_tail_deltas
        )
        if any(not 0 < t < 1 for t in self._tail_deltas):
            raise InvalidParameterError("gaussian_tail_deltas must lie in (0, 1)")
        self._max_memory = max_memory
        self._kinds: dict[Mechanism, int] = {}
        self._gauss_mu2 = Fraction(0)
        self._laplace: dict[Fraction, int] = {}  # eps0 -> count
        self._approximated: list[str] = []
        self._non_private = False
        self._cache: dict[str, Any] = {}
        self._subsampled: dict[Any, int] = {}  # SubsampledMechanism -> count

    # -- what was composed ------------------------------------------------------------
    @property
    def is_exact(self) -> bool:
        """False when a Gaussian or Laplace event was accounted by its approximation."""
        return not self._approximated

    @property
    def bound_notes(self) -> tuple[str, ...]:
        """One line per approximated event kind (empty when the accounting is exact)."""
        fast = self._engine() is not None
        notes = {
            "Gaussian": "Gaussian: G_mu in closed form, a certified enclosure (Arb)"
            if fast
            else f"Gaussian: G_mu approximated from below by {self._pieces} constraints",
            "Laplace": "Laplace: certified loss grid, two-sided enclosure"
            if fast
            else f"Laplace: approximated from below by {self._pieces} constraints",
        }
        return tuple(notes.get(kind, kind) for kind in dict.fromkeys(self._approximated))

    @property
    def is_non_private(self) -> bool:
        """True once a non-private event was composed (epsilon is infinite)."""
        return self._non_private

    @property
    def composition(self) -> Composition | Any:
        """The exact (or certified) composition of everything accounted so far.

        A :class:`~dpcompose_exact.api.Composition`; with subsampled events a
        :class:`~dpcompose_exact.engines.subsample.SubsampledComposition` (or ``SubsampledBounds``).
        None when nothing private was composed or when a non-private event was.
        """
        if self._non_private:
            return None
        if self._subsampled:
            return self._subsampled_composition()
        if "composition" not in self._cache:
            kinds = list(self._kinds.items())
            for eps0, count in self._laplace.items():
                kinds.append((self._laplace_mechanism(eps0), count))
            if self._gauss_mu2:
                kinds.append((self._gaussian_mechanism(self._gauss_mu2), 1))
            self._cache["composition"] = (
                compose(kinds, max_memory=self._max_memory) if kinds else None
            )
        return self._cache["composition"]

    # -- dp_accounting interface --------------------------------------------------------
    def _maybe_compose(
        self, event: dp_event.DpEvent, count: int, do_compose: bool
    ) -> _Details | None:
        try:
            return self._visit(event, count, do_compose)
        except DPComposeError as exc:
            return _Details(invalid_event=event, error_message=str(exc))

    def _visit(self, event: dp_event.DpEvent, count: int, do_compose: bool) -> _Details | None:
        if isinstance(event, dp_event.NoOpDpEvent):
            return None
        if isinstance(event, dp_event.NonPrivateDpEvent):
            if do_compose and count:
                self._non_private = True
            return None
        if isinstance(event, dp_event.SelfComposedDpEvent):
            n = event.count
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                return _Details(event, f"count = {n!r} must be a non-negative integer")
            return self._maybe_compose(event.event, count * n, do_compose)
        if isinstance(event, dp_event.ComposedDpEvent):
            for e in event.events:
                error = self._maybe_compose(e, count, do_compose)
                if error is not None:
                    return error
            return None
        if isinstance(event, DpConstraintsEvent):
            self._add(Mechanism(list(event.constraints)), count, do_compose)
            return None
        if isinstance(event, dp_event.RandomizedResponseDpEvent):
            return self._randomized_response(event, count, do_compose)
        if isinstance(event, dp_event.DiscreteLaplaceDpEvent):
            return self._discrete_laplace(event, count, do_compose)
        if isinstance(event, dp_event.GaussianDpEvent):
            sigma = exact_number(event.noise_multiplier, "GaussianDpEvent noise_multiplier")
            if sigma < 0:
                return _Details(event, f"noise_multiplier = {sigma} must be >= 0")
            if do_compose and count:
                if sigma == 0:
                    self._non_private = True
                else:
                    c = 2 if self.neighboring_relation is NeighboringRelation.REPLACE_ONE else 1
                    self._gauss_mu2 += count * Fraction(c) ** 2 / sigma**2
                    self._approximated.append("Gaussian")
                    self._cache.clear()
            return None
        if isinstance(event, dp_event.LaplaceDpEvent):
            b = exact_number(event.noise_multiplier, "LaplaceDpEvent noise_multiplier")
            if b < 0:
                return _Details(event, f"noise_multiplier = {b} must be >= 0")
            if do_compose and count:
                if b == 0:
                    self._non_private = True
                else:
                    c = 2 if self.neighboring_relation is NeighboringRelation.REPLACE_ONE else 1
                    eps0 = c / b
                    self._laplace[eps0] = self._laplace.get(eps0, 0) + count
                    self._approximated.append("Laplace")
                    self._cache.clear()
            return None
        if isinstance(
            event, (dp_event.PoissonSampledDpEvent, dp_event.SampledWithoutReplacementDpEvent)
        ):
            return self._subsampled_event(event, count, do_compose)
        return _Details(invalid_event=event, error_message="Unsupported event.")

    # -- subsampled events (integrations.event_tree, dpcompose_exact.engines.subsample) -----------
    def _subsampled_event(
        self, event: dp_event.DpEvent, count: int, do_compose: bool
    ) -> _Details | None:
        """Poisson / without-replacement sampling of an exact pair: composed exactly."""
        from ..engines.subsample_grid import SubsampledNoise
        from .event_tree import subsampled_mechanism

        sub = subsampled_mechanism(event, self.neighboring_relation)
        if sub is not None and do_compose and count:
            self._subsampled[sub] = self._subsampled.get(sub, 0) + count
            if isinstance(sub, SubsampledNoise):
                self._approximated.append(f"{sub!r}: certified loss grid, two-sided bounds")
            elif not sub.is_exact:
                self._approximated.append(
                    f"{sub!r}: bounded (eps rounded to logarithms of rationals)"
                )
            self._cache.clear()
        return None

    def _subsampled_composition(self) -> Any:
        """The exact composition with subsampled events (None when there are none)."""
        subs = self._subsampled
        if not subs or self._non_private:
            return None
        if "subsampled" not in self._cache:
            from ..engines.subsample import compose_subsampled_mechanisms
            from ..engines.subsample_grid import SubsampledNoise
            from ..regions.pld import canonical_pair

            if any(isinstance(m, SubsampledNoise) for m in subs) and (
                self._kinds
                or self._gauss_mu2
                or self._laplace
                or not all(isinstance(m, SubsampledNoise) for m in subs)
            ):
                raise InvalidParameterError(
                    "subsampled Gaussian/Laplace events compose with other subsampled "
                    "Gaussian/Laplace events only (certified loss grid); found other events"
                )

            kinds: list[tuple[Any, int]] = [
                (canonical_pair(m.region), n) for m, n in self._kinds.items()
            ]
            if self._gauss_mu2:
                gauss = self._gaussian_mechanism(self._gauss_mu2)
                kinds.append((canonical_pair(gauss.region), 1))
            kinds += list(subs.items())
            try:
                comp = compose_subsampled_mechanisms(kinds, memory_limit=self._max_memory)
            except ResourceLimitError as exc:
                raise ResourceLimitError(
                    f"subsampled events composed with the other events: {exc} (a Gaussian or "
                    "Laplace approximation next to subsampled pairs multiplies the losses)"
                ) from None
            self._cache["subsampled"] = comp
        return self._cache["subsampled"]

    def _add(self, mechanism: Mechanism, count: int, do_compose: bool) -> None:
        if do_compose and count:
            self._kinds[mechanism] = self._kinds.get(mechanism, 0) + count
            self._cache.clear()

    def _randomized_response(
        self, event: dp_event.RandomizedResponseDpEvent, count: int, do_compose: bool
    ) -> _Details | None:
        if self.neighboring_relation is not NeighboringRelation.REPLACE_ONE:
            return _Details(
                event,
                "RandomizedResponseDpEvent is composed exactly under REPLACE_ONE only (under "
                f"REPLACE_SPECIAL its pair is asymmetric); found {self.neighboring_relation}",
            )
        k = event.num_buckets
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            return _Details(event, f"num_buckets = {k!r} must be a positive integer")
        p = exact_number(event.noise_parameter, "noise_parameter")
        if not 0 <= p <= 1:
            return _Details(event, f"noise_parameter = {p} is outside [0, 1]")
        if k == 1:
            return None  # one bucket: nothing is revealed
        if p == 0:
            if do_compose and count:
                self._non_private = True
            return None
        self._add(randomized_response_mechanism(p, k), count, do_compose)
        return None

    def _discrete_laplace(
        self, event: dp_event.DiscreteLaplaceDpEvent, count: int, do_compose: bool
    ) -> _Details | None:
        s = event.sensitivity
        if isinstance(s, bool) or not isinstance(s, int) or s < 0:
            return _Details(event, f"sensitivity = {s!r} must be a non-negative integer")
        a = exact_number(event.noise_parameter, "noise_parameter")
        if a < 0:
            return _Details(event, f"noise_parameter = {a} must be >= 0")
        shift = s if self.neighboring_relation in _ADDITIVE_ONE else 2 * s
        if shift == 0:
            return None
        if a == 0:
            if do_compose and count:
                self._non_private = True
            return None
        self._add(discrete_laplace_mechanism(a, shift), count, do_compose)
        return None

    # -- approximations -----------------------------------------------------------------
    def _gaussian_mechanism(self, mu2: Fraction) -> Mechanism:
        approx = approx_from_below(
            gaussian_from_mu2(mu2, "G"), self._pieces, eps_denominator=self._eps_grid
        )
        tails = [gaussian_constraint(mu2, t, self._eps_grid) for t in self._tail_deltas]
        return Mechanism.from_region(
            dp_region([*approx.constraints, *(c for c in tails if c is not None)], warn=False)
        )

    def _laplace_mechanism(self, eps: Fraction) -> Mechanism:
        approx = approx_from_below(laplace(eps), self._pieces, eps_denominator=self._eps_grid)
        return Mechanism.from_region(dp_region([(eps, 0), *approx.constraints], warn=False))

    # -- the fast engines (docs/theory.md, section 18) ---------------------------------------
    def _engine(self) -> tuple[str, Any] | None:
        """The Gaussian closed form or the Laplace grid when only that was composed."""
        if self._non_private or self._kinds:
            return None
        if "engine" not in self._cache:
            engine: tuple[str, Any] | None = None
            if self._gauss_mu2 and not self._laplace:
                engine = ("gaussian", self._gauss_mu2)
            elif not self._gauss_mu2 and len(self._laplace) == 1:
                ((eps0, count),) = self._laplace.items()
                engine = ("laplace", LaplaceGrid(eps0, count))
            self._cache["engine"] = engine
        return self._cache["engine"]

    def delta_value(self, eps: Any) -> Value:
        """``delta(eps)`` as a :class:`Value`: exact, or a certified two-sided enclosure.

        ``eps`` is read exactly (strings, Fractions; floats as their ``repr`` decimal).
        """
        e = exact_number(eps, "eps")
        if e < 0:
            raise InvalidParameterError(f"eps = {e} is negative; valid range: eps >= 0")
        if self._non_private:
            return Value.from_rational(1)
        engine = self._engine()
        if engine is not None:
            kind, arg = engine
            return gaussian_delta(arg, e) if kind == "gaussian" else arg.delta(e)
        comp = self.composition
        if comp is None:
            return Value.from_rational(0)
        value = comp.delta(e)
        assert isinstance(value, Value)
        return value

    def epsilon_value(self, delta: Any) -> Value:
        """``eps(delta)`` as a :class:`Value` (exact or a certified two-sided enclosure).

        Raises:
            InvalidParameterError: ``delta`` outside ``(0, 1)``, or below the leak (no eps).
        """
        d = exact_number(delta, "delta")
        if not 0 < d < 1:
            raise InvalidParameterError(f"delta = {d} must lie in (0, 1)")
        if self._non_private:
            raise InvalidParameterError("a non-private event was composed: eps is infinite")
        engine = self._engine()
        if engine is not None:
            kind, arg = engine
            return gaussian_epsilon(arg, d) if kind == "gaussian" else arg.epsilon(d)
        comp = self.composition
        if comp is None:
            return Value.from_rational(0)
        value = comp.epsilon(d)
        assert isinstance(value, Value)
        return value

    # -- queries --------------------------------------------------------------------------
    def get_delta(self, target_epsilon: float) -> float:
        """Delta at ``target_epsilon``, rounded up (never below the exact value)."""
        if isinstance(target_epsilon, float) and math.isnan(target_epsilon):
            raise ValueError("target_epsilon is nan")
        if target_epsilon < 0:
            raise ValueError(f"target_epsilon = {target_epsilon!r} must be >= 0")
        if self._non_private:
            return 1.0
        if self._engine() is not None:  # Gaussian or Laplace only: no leak
            if math.isinf(target_epsilon):
                return 0.0
            return min(1.0, self.delta_value(target_epsilon).upper())
        sub = self._subsampled_composition()
        if sub is not None:
            if math.isinf(target_epsilon) and hasattr(sub, "leak_upper"):
                return sub.leak_upper()  # subsampled noise: the grid's tails
            if math.isinf(target_epsilon):
                top = getattr(sub, "upper", sub)  # bounds: the upper side
                leaks = (r.constraints[-1][1] for r in (top.forward, top.reverse))
                # the leaks: delta at eps = inf
                return max(Value.from_qz(top.forward.domain, x).upper() for x in leaks)
            return min(1.0, sub.delta(exact_number(target_epsilon, "target_epsilon")).upper())
        comp = self.composition
        if comp is None:
            return 0.0
        if math.isinf(target_epsilon):
            return min(1.0, _leak_upper(comp))  # the leak: delta at infinite eps
        eps = exact_number(target_epsilon, "target_epsilon")
        # the Composition's public query: exact, certified or bounded regions alike
        value = comp.delta(eps)
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
        if self._engine() is not None and 0 < target_delta < 1:
            return self.epsilon_value(target_delta).upper()
        sub = self._subsampled_composition()
        if sub is not None:
            if target_delta >= 1:
                return 0.0
            try:
                return sub.epsilon(exact_number(target_delta, "target_delta")).upper()
            except BelowLeakError:
                return math.inf
        comp = self.composition
        if comp is None or target_delta >= 1:
            return 0.0
        delta = exact_number(target_delta, "target_delta")
        try:
            eps = comp.epsilon(delta)
        except InvalidParameterError as exc:
            if "below" in str(exc):
                return math.inf
            raise
        return float_upper(eps)


def _leak_upper(comp: Composition) -> float:
    """A double >= the composition's delta at infinite eps: ``1 - prod (1 - leak_i)^k_i``.

    Read from the composed kinds (each mechanism's last constraint is its leak), so it works
    for regions known only by bounds too.
    """
    prec = 128
    with flint.ctx.workprec(prec):
        keep = flint.arb(1)
        for mechanism, count in comp.kinds:
            leak = mechanism.constraints[-1][1].ball(prec)
            keep *= (1 - leak) ** count
        return float_upper(Value.from_ball(1 - keep))


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
