"""A dp_accounting ``DpEvent`` tree composed exactly, subsampled events included.

:func:`event_composition` walks a tree of ``NoOpDpEvent``, ``SelfComposedDpEvent``,
``ComposedDpEvent``, ``RandomizedResponseDpEvent``, ``DiscreteLaplaceDpEvent``,
:class:`~dpcompose_exact.integrations.dp_accounting.DpConstraintsEvent`,
``PoissonSampledDpEvent`` and ``SampledWithoutReplacementDpEvent`` (of the three leaves)
and returns the exact composition (:class:`~dpcompose_exact.api.Composition`, or
:class:`~dpcompose_exact.engines.subsample.SubsampledComposition` when a subsampled event occurs),
or certified two-sided bounds (:class:`~dpcompose_exact.engines.subsample.SubsampledBounds`) when
a subsampled pair's losses leave the exact field (``e^eps`` irrational: a float discrete
Laplace parameter, ``eps = 0.3``; docs/theory.md, section 15).

Neighbouring relations, as dp_accounting defines them:

* randomized response: ``REPLACE_ONE`` (its pair changes one input);
* discrete Laplace of sensitivity ``s``: a shift of ``s`` (``ADD_OR_REMOVE_ONE``,
  ``REPLACE_SPECIAL``) or ``2 s`` (``REPLACE_ONE``);
* ``PoissonSampledDpEvent(q, E)``: ``ADD_OR_REMOVE_ONE`` (or ``REPLACE_SPECIAL``); the pair
  is ``(q P + (1 - q) Q, Q)`` for removal and its reverse for addition, ``(P, Q)`` the pair
  of ``E`` under add/remove (docs/theory.md, section 15);
* ``SampledWithoutReplacementDpEvent(n, m, E)``: ``REPLACE_ONE``, the same pair with
  ``q = m/n``, ``(P, Q)`` the pair of ``E`` under replace-one.

Parameters are exact: floats are read as their ``repr`` decimal (``0.5`` is 1/2), and a
discrete Laplace ``noise_parameter`` may be a string such as ``"log(2)"``, which keeps
``e^a`` rational so that its subsampled losses stay exact (a float gives bounds).
Gaussian and Laplace events have no exact composition here (their losses are
transcendental and continuous): alone they are refused with a message naming
:class:`~dpcompose_exact.integrations.dp_accounting.ExactAccountant`, which bounds them;
subsampled (``PoissonSampledDpEvent`` / ``SampledWithoutReplacementDpEvent`` of a
``GaussianDpEvent`` or ``LaplaceDpEvent``) they get certified two-sided bounds from a loss
grid (:class:`~dpcompose_exact.engines.subsample_grid.NoiseGridComposition`, docs/theory.md,
section 15), composed with other subsampled noise only.  The shift of the noise is 1
(add/remove) or 2 (replace-one), dp_accounting's convention.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..api import Composition, Mechanism, compose
from ..engines.genfunc import DEFAULT_MEMORY_LIMIT
from ..engines.subsample import (
    SubsampledBounds,
    SubsampledComposition,
    SubsampledMechanism,
    compose_subsampled_mechanisms,
    subsample_region,
)
from ..engines.subsample_grid import (
    NoiseGridComposition,
    SubsampledNoise,
    compose_noise,
    gaussian_noise,
    laplace_noise,
)
from ..errors import InvalidParameterError, UnsupportedExpressionError
from ..numbers import ExpDomain, QzElem, linear_form
from ..regions.pld import PLD, canonical_pair
from . import check_event_depth
from .dp_events import (
    DpConstraintsEvent,
    check_discrete_laplace_size,
    discrete_laplace_mechanism,
    exact_number,
    randomized_response_mechanism,
)

__all__ = [
    "event_composition",
    "subsampled_mechanism",
    "EventTreeError",
    "ADD_OR_REMOVE",
    "REPLACE_ONE",
]

ADD_OR_REMOVE = "ADD_OR_REMOVE_ONE"
REPLACE_ONE = "REPLACE_ONE"
_ADDITIVE = (ADD_OR_REMOVE, "REPLACE_SPECIAL")


class EventTreeError(InvalidParameterError):
    """An event the exact composition does not cover (the message says why)."""


def _relation_name(relation: Any) -> str:
    name = getattr(relation, "name", relation)
    name = str(name).upper()
    if name not in (ADD_OR_REMOVE, REPLACE_ONE, "REPLACE_SPECIAL"):
        raise InvalidParameterError(
            f"neighboring relation {relation!r}: use ADD_OR_REMOVE_ONE, REPLACE_ONE or "
            "REPLACE_SPECIAL"
        )
    return name


def _int(value: Any, what: str, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise EventTreeError(f"{what} = {value!r} must be an integer >= {lo}")
    return value


def _dlap_pld(
    event: Any, relation: str, max_memory: int | None = DEFAULT_MEMORY_LIMIT
) -> PLD | None:
    """The discrete Laplace pair, or None when the event reveals nothing (shift 0).

    Raises:
        ResourceLimitError: the pair (``shift + 1`` losses, masses up to ``q^shift``) would
            not fit in ``max_memory``; refused before it is built.
    """
    s = _int(event.sensitivity, "DiscreteLaplaceDpEvent sensitivity", 0)
    shift = s if relation in _ADDITIVE else 2 * s
    a_raw = event.noise_parameter
    if shift == 0:
        return None
    if isinstance(a_raw, str) and "log" in a_raw:
        form = linear_form(a_raw, "noise_parameter")
        if form.rational != 0 or not form.logs:
            raise EventTreeError(f"noise_parameter = {a_raw!r} is not the log of a rational")
        dom = ExpDomain.for_forms([form])
        r = dom.exp_loss(dom.loss(form)).as_rational()  # e^a, rational
        assert r is not None
        if r <= 1:
            raise EventTreeError(f"noise_parameter = {a_raw!r} must be > 0")
        check_discrete_laplace_size(shift, max_memory, r, "DiscreteLaplaceDpEvent")
        one = dom.loss(form)
        # P(x) prop. to r^-|x|: loss a(|x - s| - |x|), masses as in discrete_laplace_mechanism
        masses = [(tuple(shift * n for n in one), QzElem.from_rational(r / (r + 1)))]
        for x in range(1, shift):
            m = (r - 1) / (r + 1) / r**x
            masses.append((tuple((shift - 2 * x) * n for n in one), QzElem.from_rational(m)))
        masses.append(
            (tuple(-shift * n for n in one), QzElem.from_rational(1 / ((r + 1) * r ** (shift - 1))))
        )
        return PLD.from_masses(dom, masses, QzElem.from_rational(0))
    a = exact_number(a_raw, "DiscreteLaplaceDpEvent noise_parameter")
    if a <= 0:
        raise EventTreeError(f"DiscreteLaplaceDpEvent noise_parameter = {a} must be > 0")
    return canonical_pair(discrete_laplace_mechanism(a, shift, max_memory).region)


def _rr_mechanism(event: Any) -> Mechanism | None:
    k = _int(event.num_buckets, "RandomizedResponseDpEvent num_buckets", 1)
    p = exact_number(event.noise_parameter, "RandomizedResponseDpEvent noise_parameter")
    if not 0 < p <= 1:
        raise EventTreeError(
            f"RandomizedResponseDpEvent noise_parameter = {p} is outside (0, 1] (0 is not private)"
        )
    if k == 1 or p == 1:
        return None
    return randomized_response_mechanism(p, k)


class _Walker:
    def __init__(self, relation: str, max_memory: int | None = DEFAULT_MEMORY_LIMIT) -> None:
        self.relation = relation
        self.max_memory = max_memory
        self.kinds: dict[Any, int] = {}
        self.subsampled = False
        self.non_private = False

    def add(self, item: Any, count: int) -> None:
        if count:
            self.kinds[item] = self.kinds.get(item, 0) + count

    def leaf_pld(self, event: Any, relation: str) -> PLD | None:
        """The pair of a leaf event under ``relation`` (None: the event reveals nothing)."""
        name = type(event).__name__
        if isinstance(event, DpConstraintsEvent):
            return canonical_pair(Mechanism(list(event.constraints)).region)
        if name == "RandomizedResponseDpEvent":
            if relation != REPLACE_ONE:
                raise EventTreeError(
                    "RandomizedResponseDpEvent is defined under REPLACE_ONE (as in "
                    f"dp_accounting); found {relation}"
                )
            m = _rr_mechanism(event)
            return None if m is None else canonical_pair(m.region)
        if name == "DiscreteLaplaceDpEvent":
            return _dlap_pld(event, relation, self.max_memory)
        if name in ("GaussianDpEvent", "LaplaceDpEvent"):
            raise EventTreeError(
                f"{name} has no exact composition (its losses are transcendental); "
                "ExactAccountant bounds it without subsampling"
            )
        raise EventTreeError(
            f"unsupported DpEvent {name}: the exact tree composition covers NoOp, "
            "SelfComposed, Composed, RandomizedResponse, DiscreteLaplace, DpConstraints, "
            "PoissonSampled and SampledWithoutReplacement events"
        )

    def visit(self, event: Any, count: int) -> None:
        name = type(event).__name__
        if name == "NoOpDpEvent":
            return
        if name == "NonPrivateDpEvent":
            self.non_private = self.non_private or count > 0
            return
        if name == "SelfComposedDpEvent":
            self.visit(event.event, count * _int(event.count, "SelfComposedDpEvent count", 0))
            return
        if name == "ComposedDpEvent":
            for e in event.events:
                self.visit(e, count)
            return
        if name == "PoissonSampledDpEvent":
            if self.relation not in _ADDITIVE:
                raise EventTreeError(
                    "PoissonSampledDpEvent is composed under ADD_OR_REMOVE_ONE (its pair "
                    f"(qP + (1-q)Q, Q) is the removal of one record); found {self.relation}"
                )
            q = exact_number(event.sampling_probability, "sampling_probability")
            self._subsampled(event.event, q, ADD_OR_REMOVE, count)
            return
        if name == "SampledWithoutReplacementDpEvent":
            if self.relation != REPLACE_ONE:
                raise EventTreeError(
                    "SampledWithoutReplacementDpEvent is composed under REPLACE_ONE (a batch "
                    f"of fixed size); found {self.relation}"
                )
            n = _int(event.source_dataset_size, "source_dataset_size", 1)
            m = _int(event.sample_size, "sample_size", 0)
            if m > n:
                raise EventTreeError(f"sample_size = {m} exceeds source_dataset_size = {n}")
            self._subsampled(event.event, Fraction(m, n), REPLACE_ONE, count)
            return
        pld = self.leaf_pld(event, self.relation)
        if pld is not None:
            self.add(pld, count)

    def _subsampled(self, inner: Any, q: Fraction, relation: str, count: int) -> None:
        if not 0 <= q <= 1:
            raise EventTreeError(f"sampling probability {q} is outside [0, 1]")
        if q == 0 or not count:
            return
        if type(inner).__name__ == "NonPrivateDpEvent":
            self.non_private = True
            return
        if type(inner).__name__ == "NoOpDpEvent":
            return
        if type(inner).__name__ in ("GaussianDpEvent", "LaplaceDpEvent"):
            self.subsampled = True
            self.add(_noise(inner, relation).subsample(q), count)
            return
        base = self.leaf_pld(inner, relation)
        if base is None:
            return
        try:
            sub = subsample_region(base.to_region(), q, type(inner).__name__)
        except UnsupportedExpressionError as exc:
            raise EventTreeError(str(exc)) from None
        self.subsampled = True
        self.add(sub, count)


def _noise(event: Any, relation: str) -> Any:
    """The additive noise of a Gaussian or Laplace event (shift 2 under replace-one)."""
    name = type(event).__name__
    scale = exact_number(event.noise_multiplier, f"{name} noise_multiplier")
    if scale <= 0:
        raise EventTreeError(
            f"{name} noise_multiplier = {scale} must be > 0 (0 is not private)"
        )
    shift = 1 if relation in _ADDITIVE else 2
    make = gaussian_noise if name == "GaussianDpEvent" else laplace_noise
    return make(scale, shift)


def subsampled_mechanism(
    event: Any, neighboring_relation: Any
) -> SubsampledMechanism | SubsampledNoise | None:
    """The subsampled mechanism of one Poisson or without-replacement sampled event.

    Its exact pair, or two-sided bounds
    (:func:`~dpcompose_exact.engines.subsample.subsample_region`).

    None when the event reveals nothing (rate 0, a no-op inside).

    Raises:
        EventTreeError: the relation does not fit the sampling, the inner event has no
            exact pair, or the inner event is non-private.
        InvalidParameterError: the tree is nested deeper than
            :data:`~dpcompose_exact.integrations.MAX_EVENT_DEPTH` levels.
    """
    check_event_depth(event)
    walker = _Walker(_relation_name(neighboring_relation))
    walker.visit(event, 1)
    if walker.non_private:
        raise EventTreeError(f"{type(event).__name__} of a non-private event")
    subs = [m for m in walker.kinds if isinstance(m, (SubsampledMechanism, SubsampledNoise))]
    return subs[0] if subs else None


def event_composition(
    event: Any,
    neighboring_relation: Any = ADD_OR_REMOVE,
    max_memory: int | None = DEFAULT_MEMORY_LIMIT,
) -> Composition | SubsampledComposition | SubsampledBounds | NoiseGridComposition | None:
    """The exact composition of a ``DpEvent`` tree (see the module docstring).

    Args:
        event: a dp_accounting ``DpEvent`` (or a look-alike with the same class names).
        neighboring_relation: dp_accounting's ``NeighboringRelation`` or its name.
        max_memory: bytes the exact route may use.

    Returns:
        The composition, or None when the tree composes no private mechanism.

    Raises:
        EventTreeError: an event the exact composition does not cover, or a non-private
            event (infinite epsilon: nothing to compose).
        InvalidParameterError: the tree is nested deeper than
            :data:`~dpcompose_exact.integrations.MAX_EVENT_DEPTH` levels (the
            walk is recursive).
    """
    check_event_depth(event)
    walker = _Walker(_relation_name(neighboring_relation), max_memory)
    walker.visit(event, 1)
    if walker.non_private:
        raise EventTreeError("the tree contains a non-private event: epsilon is infinite")
    if not walker.kinds:
        return None
    items = list(walker.kinds.items())
    if any(isinstance(m, SubsampledNoise) for m, _ in items):
        return compose_noise(items, label=type(event).__name__)
    if walker.subsampled:
        return compose_subsampled_mechanisms(
            items, memory_limit=max_memory, label=type(event).__name__
        )
    mechs = [(Mechanism.from_region(pld.to_region()), n) for pld, n in items]
    return compose(mechs, max_memory=max_memory)
