"""dp_accounting ``DpEvent`` trees as ``(mechanism, count)`` lists: events read once.

:func:`event_kinds` is the one reading of an event tree.  The drop-in accountant
(:class:`~dpcompose_exact.integrations.dp_accounting.ExactAccountant`), the exact tree
composition (:func:`~dpcompose_exact.integrations.events.event_composition`) and the
audit of event trees all call it and compose what it returns with
:func:`dpcompose_exact.compose`, whose router decides how.

Each leaf becomes one mechanism of the package (docs/theory.md, sections 15 and 18):

* ``DpConstraintsEvent``: a :class:`~dpcompose_exact.api.Mechanism` with its constraints;
* ``RandomizedResponseDpEvent`` (``REPLACE_ONE``) and ``DiscreteLaplaceDpEvent`` (shift =
  sensitivity, or twice it under ``REPLACE_ONE``): their exact finite pairs;
* ``GaussianDpEvent`` and ``LaplaceDpEvent``: :func:`~dpcompose_exact.gaussian_noise` and
  :func:`~dpcompose_exact.laplace_noise` with sensitivity 1 (2 under ``REPLACE_ONE``,
  dp_accounting's convention);
* ``PoissonSampledDpEvent`` (``ADD_OR_REMOVE_ONE``) and ``SampledWithoutReplacementDpEvent``
  (``REPLACE_ONE``) of any of these: the subsampled mechanism; ``PoissonSampledDpEvent`` of
  a Gaussian under ``REPLACE_ONE``: dp_accounting's replace pair (section 22);
* ``MixtureOfGaussiansDpEvent`` (``ADD_OR_REMOVE_ONE``): the
  :func:`~dpcompose_exact.mixture_of_gaussians`, and ``SampledWithReplacementDpEvent`` of a
  Gaussian (``ADD_OR_REMOVE_ONE``): its binomial mixture (section 22);
* ``RandomAllocationDpEvent`` (the package's own, ``ADD_OR_REMOVE_ONE``):
  :func:`~dpcompose_exact.random_allocation` of Gaussian noise.

Events are recognised by their class names (:class:`DpConstraintsEvent` is this package's
own), so a look-alike with the same names and fields reads the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..api import Composition, Mechanism, compose, discrete_laplace, randomized_response
from ..engines.genfunc import DEFAULT_MEMORY_LIMIT
from ..errors import DPComposeError, InvalidParameterError, UnsupportedExpressionError
from ..mechanisms.allocation import random_allocation
from ..mechanisms.mixture import (
    MAX_COMPONENTS,
    ReplaceSubsampledGaussian,
    binomial_mixture,
    mixture_of_gaussians,
)
from ..mechanisms.noise import gaussian_noise, laplace_noise
from ..mechanisms.subsampled import SubsampledMechanism, subsample_pld, subsample_region
from ..numbers import ExpDomain, QzElem, linear_form, parse_float_field
from ..regions.pld import PLD
from ..regions.protocol import PairForm

__all__ = [
    "ADD_OR_REMOVE",
    "REPLACE_ONE",
    "EventKinds",
    "EventTreeError",
    "EventParameterError",
    "event_kinds",
    "event_composition",
    "infer_relation",
    "MAX_EVENT_DEPTH",
    "check_event_depth",
    "check_json_depth",
    "subsampled_mechanism",
    "exact_number",
    "randomized_response_mechanism",
    "discrete_laplace_mechanism",
]


def exact_number(value: Any, what: str = "value") -> Fraction:
    """A parameter dp_accounting defines as a float, exactly (a float: its ``repr`` decimal).

    The one rule for floats (docs/api_guide.md, "Exact inputs and floats"):
    :func:`~dpcompose_exact.numbers.parsing.parse_float_field`.  numpy scalars are read by
    the value of the Python number they convert to (``np.float64(1.1)`` is 11/10, like
    ``1.1``; ``np.float32(1.1)`` is the double nearest to the float32, read by its repr).

    >>> import numpy as np
    >>> exact_number(0.1), exact_number("1e-5"), exact_number(2), exact_number(np.float64(1.1))
    (Fraction(1, 10), Fraction(1, 100000), Fraction(2, 1), Fraction(11, 10))

    Raises:
        EventParameterError: not a number, a NaN or an infinity (also a ``ValueError``).
    """
    try:
        return parse_float_field(value, what)
    except EventParameterError:
        raise
    except InvalidParameterError as exc:
        raise EventParameterError(str(exc)) from None


def randomized_response_mechanism(p: Fraction, k: int) -> Mechanism:
    """dp_accounting's randomized response: :func:`dpcompose_exact.api.randomized_response`."""
    return randomized_response(p, k)


def discrete_laplace_mechanism(
    a: Any, shift: int, max_memory: int | None = DEFAULT_MEMORY_LIMIT
) -> Mechanism:
    """dp_accounting's discrete Laplace: :func:`dpcompose_exact.api.discrete_laplace`."""
    return discrete_laplace(a, shift, max_memory)


MAX_EVENT_DEPTH = 200
"""Most levels of a ``DpEvent`` tree (a leaf alone is one level).

Real trees (DP-SGD steps, a few composed mechanisms) are a handful of levels deep; 200
leaves room under Python's default recursion limit (1000) for walkers that take up to
three frames per level and for their callers."""

_HINT = (
    "flatten nested ComposedDpEvent lists into one list, and write repetitions as "
    "SelfComposedDpEvent(event, count)"
)


def _refuse(what: str, limit: int) -> InvalidParameterError:
    return InvalidParameterError(
        f"{what} is nested more than {limit} levels deep; the valid range is 1 to {limit} "
        f"levels: {_HINT}"
    )


def _event_children(event: Any) -> list[Any]:
    out = []
    inner = getattr(event, "event", None)
    if inner is not None and not isinstance(inner, (str, bytes)):
        out.append(inner)
    events = getattr(event, "events", None)
    if events is not None and not isinstance(events, (str, bytes)):
        try:
            out.extend(events)
        except TypeError:
            pass
    return out


def check_event_depth(event: Any, limit: int = MAX_EVENT_DEPTH) -> int:
    """The depth of a ``DpEvent`` tree; refused beyond ``limit`` levels.

    Children are an event's ``event`` field (sampled and self-composed events) and the
    items of its ``events`` field (composed events).  The walk uses an explicit stack and
    stops at the first level beyond the limit.

    Args:
        event: the root of the tree.
        limit: the most levels allowed.

    Returns:
        The depth (a leaf alone: 1).

    Raises:
        InvalidParameterError: the tree is deeper than ``limit``; the message states the
            limit and how to flatten the tree.

    >>> class Leaf: pass
    >>> check_event_depth(Leaf())
    1
    """
    deepest = 0
    stack = [(event, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise _refuse(f"the DpEvent tree {type(event).__name__}(...)", limit)
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in _event_children(node))
    return deepest


def check_json_depth(data: Any, limit: int = MAX_EVENT_DEPTH, what: str = "the event") -> int:
    """The depth of the JSON form of an event tree (objects nested in objects or arrays).

    Each event is one level (an array of events is not one more).

    Args:
        data: the decoded JSON (dicts, lists, scalars).
        limit: the most event levels allowed.
        what: the input's name, for the message.

    Returns:
        The number of nested event objects on the longest path.

    Raises:
        InvalidParameterError: deeper than ``limit`` events.

    >>> check_json_depth({"class_name": "ComposedDpEvent", "events": [{"class_name": "X"}]})
    2
    """
    deepest = 0
    stack = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            depth += 1
            if depth > limit:
                raise _refuse(what, limit)
            deepest = max(deepest, depth)
            stack.extend((v, depth) for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, depth) for v in node if isinstance(v, (dict, list)))
    return deepest


ADD_OR_REMOVE = "ADD_OR_REMOVE_ONE"
REPLACE_ONE = "REPLACE_ONE"
_ADDITIVE = (ADD_OR_REMOVE, "REPLACE_SPECIAL")


class EventTreeError(InvalidParameterError):
    """An event the exact composition does not cover (the message says why)."""


class EventParameterError(EventTreeError):
    """An event's parameter outside its valid range (the message shows both).

    A ``ValueError`` (through :class:`~dpcompose_exact.errors.InvalidParameterError`), as
    dp_accounting's accountants raise for invalid parameters: the drop-in accountant
    raises it from ``compose`` instead of calling the event unsupported.
    """


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
    if hasattr(value, "item") and not isinstance(value, (bool, int, float)):  # numpy ints
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise EventParameterError(f"{what} = {value!r} must be an integer >= {lo}")
    return value


def _dlap_mechanism(
    event: Any, relation: str, max_memory: int | None = DEFAULT_MEMORY_LIMIT
) -> Mechanism | None:
    """The discrete Laplace mechanism, or None when the event reveals nothing (shift 0).

    ``noise_parameter`` may be a string such as ``"log(2)"`` (``e^a`` rational: its
    subsampled losses stay exact); a float is read as its ``repr`` decimal.
    """
    s = _int(event.sensitivity, "DiscreteLaplaceDpEvent sensitivity", 0)
    shift = s if relation in _ADDITIVE else 2 * s
    if shift == 0:
        return None
    a_raw = event.noise_parameter
    if isinstance(a_raw, str) and "log" in a_raw:
        form = linear_form(a_raw, "noise_parameter")
        if form.rational != 0 or not form.logs:
            raise EventTreeError(f"noise_parameter = {a_raw!r} is not the log of a rational")
        if form.sign() <= 0:
            raise EventParameterError(f"noise_parameter = {a_raw!r} must be > 0")
        return discrete_laplace(a_raw, shift, max_memory)
    a = exact_number(a_raw, "DiscreteLaplaceDpEvent noise_parameter")
    if a < 0:
        raise EventParameterError(
            f"DiscreteLaplaceDpEvent noise_parameter = {a} is negative; valid range: >= 0 "
            "(0: no noise, not private)"
        )
    return discrete_laplace(a, shift, max_memory)


def _rr_parameters(event: Any) -> tuple[Fraction, int]:
    """``(p, k)`` of randomized response, checked: ``p`` in ``[0, 1]``, ``k >= 1``."""
    k = _int(event.num_buckets, "RandomizedResponseDpEvent num_buckets", 1)
    p = exact_number(event.noise_parameter, "RandomizedResponseDpEvent noise_parameter")
    if not 0 <= p <= 1:
        raise EventParameterError(
            f"RandomizedResponseDpEvent noise_parameter = {p} is outside the valid range "
            "[0, 1] (the probability of answering at random)"
        )
    return p, k


def _rr_mechanism(event: Any) -> Mechanism | None:
    """Randomized response, or None when it reveals nothing.

    One bucket is a constant output, and ``p = 1`` a uniformly random one: both
    distributions are equal, ``(0, 0)``-DP, whatever the other parameter (``p = 0`` with
    one bucket included).  ``p = 0`` with two buckets or more is non-private (read by
    :func:`_is_zero_noise` before this).
    """
    p, k = _rr_parameters(event)
    if k == 1 or p == 1:
        return None
    return randomized_response(p, k)


def _noise(event: Any, relation: str) -> Any:
    """The additive noise of a Gaussian or Laplace event (shift 2 under replace-one)."""
    name = type(event).__name__
    scale = exact_number(event.noise_multiplier, f"{name} noise_multiplier")
    if scale < 0:
        raise EventParameterError(
            f"{name} noise_multiplier = {scale} is negative; valid range: noise_multiplier "
            ">= 0 (0: no noise, not private)"
        )
    shift = 1 if relation in _ADDITIVE else 2
    make = gaussian_noise if name == "GaussianDpEvent" else laplace_noise
    return make(scale, shift)


@dataclass
class EventKinds:
    """What an event tree composes.

    Attributes:
        items: ``[(mechanism, count), ...]``, equal mechanisms merged.
        non_private: True when a non-private event occurs with a positive count.
        notes: one line per leaf kind answered by a certified enclosure, not exactly.
    """

    items: list[tuple[Any, int]] = field(default_factory=list)
    non_private: bool = False
    notes: list[str] = field(default_factory=list)

    def add(self, mechanism: Any, count: int) -> None:
        """Add ``count`` uses of ``mechanism`` (merged with an equal one)."""
        if not count:
            return
        for i, (m, n) in enumerate(self.items):
            if m == mechanism:
                self.items[i] = (m, n + count)
                return
        self.items.append((mechanism, count))


def _mixture(event: Any, relation: str) -> Any:
    """``MixtureOfGaussiansDpEvent``: :func:`~dpcompose_exact.mixture_of_gaussians`.

    None when every sensitivity is 0 (nothing revealed); read under ``ADD_OR_REMOVE_ONE``
    or ``REPLACE_SPECIAL``, as dp_accounting reads it (docs/theory.md, section 22).
    """
    name = "MixtureOfGaussiansDpEvent"
    if relation not in _ADDITIVE:
        raise EventTreeError(
            f"{name} is composed under ADD_OR_REMOVE_ONE or REPLACE_SPECIAL (its pair is the "
            f"mixture against the noise alone, as in dp_accounting); found {relation}"
        )
    sens = [exact_number(c, f"{name} sensitivities") for c in event.sensitivities]
    probs = [exact_number(p, f"{name} sampling_probs") for p in event.sampling_probs]
    if len(sens) != len(probs):
        raise EventParameterError(
            f"{name}: {len(sens)} sensitivities and {len(probs)} sampling_probs; give one "
            "probability per sensitivity"
        )
    if any(c < 0 for c in sens):
        raise EventParameterError(
            f"{name} sensitivities {[str(c) for c in sens]}: a negative one; valid range "
            "sensitivities >= 0 (dp_accounting's)"
        )
    if all(c == 0 or p == 0 for c, p in zip(sens, probs)):
        return None
    total = sum(probs, Fraction(0))
    if total != 1:
        raise EventParameterError(
            f"{name} sampling_probs {[str(p) for p in probs]} (read as written) sum to "
            f"{total}, not exactly 1; a certified answer needs a probability distribution: "
            "give probabilities whose decimals sum to 1"
        )
    sigma = exact_number(event.standard_deviation, f"{name} standard_deviation")
    if sigma <= 0:
        raise EventParameterError(
            f"{name} standard_deviation = {sigma}; valid range > 0 (0: not private)"
        )
    return mixture_of_gaussians(sigma, sens, probs)


def _with_replacement(event: Any, relation: str) -> Any:
    """``SampledWithReplacementDpEvent`` of a Gaussian: the binomial mixture (section 22).

    A batch of ``m`` records drawn with replacement from ``n`` holds the record that
    differs ``K ~ Binomial(m, 1/n)`` times; zeroing it (``REPLACE_SPECIAL``, or removing it
    from the batch's sum under ``ADD_OR_REMOVE_ONE`` with ``n`` fixed) shifts the sum by
    ``K`` times its sensitivity 1: the mixture ``sum_k P(K = k) N(k, sigma^2)`` against
    ``N(0, sigma^2)``.
    """
    name = "SampledWithReplacementDpEvent"
    if relation not in _ADDITIVE:
        raise EventTreeError(
            f"{name} is composed under ADD_OR_REMOVE_ONE or REPLACE_SPECIAL (the record's "
            "copies in the batch zeroed: a binomial mixture of Gaussians against the noise); "
            f"under {relation} the two datasets' copies shift both sides, a pair not certified "
            "here"
        )
    n = _int(event.source_dataset_size, f"{name} source_dataset_size", 1)
    m = _int(event.sample_size, f"{name} sample_size", 0)
    inner = event.event
    kind = type(inner).__name__
    if m == 0 or kind == "NoOpDpEvent":
        return None
    if kind != "GaussianDpEvent":
        raise EventTreeError(
            f"{name} of {kind}: only a GaussianDpEvent is read (its binomial mixture of "
            "Gaussians)"
        )
    sigma = exact_number(inner.noise_multiplier, "GaussianDpEvent noise_multiplier")
    if sigma <= 0:
        raise EventParameterError(
            f"GaussianDpEvent noise_multiplier = {sigma} inside {name}; valid range > 0"
        )
    if m > MAX_COMPONENTS - 1:
        raise EventParameterError(
            f"{name} sample_size = {m}: over {MAX_COMPONENTS - 1}, the most components of a "
            "certified mixture"
        )
    return binomial_mixture(sigma, m, Fraction(1, n))


def _replace_poisson(inner: Any, q: Fraction, out: EventKinds) -> Any:
    """``PoissonSampledDpEvent`` under ``REPLACE_ONE``: of a Gaussian, dp_accounting's pair.

    ``q N(1, sigma^2) + (1 - q) N(0, sigma^2)`` against ``q N(-1, sigma^2) + (1 - q) N(0,
    sigma^2)`` (:class:`~dpcompose_exact.mechanisms.mixture.ReplaceSubsampledGaussian`,
    docs/theory.md, section 22); other inner events are refused with the reason.
    """
    name = type(inner).__name__
    if not 0 <= q <= 1:
        raise EventParameterError(f"sampling probability {q} is outside [0, 1], its valid range")
    if q == 0 or name == "NoOpDpEvent":
        return None
    if name == "NonPrivateDpEvent" or _is_zero_noise(inner):
        if q == 1:
            out.non_private = True
            return None
        return _subsampled_non_private(q, name)
    if name != "GaussianDpEvent":
        raise EventTreeError(
            "PoissonSampledDpEvent is composed under ADD_OR_REMOVE_ONE (its pair (qP + (1-q)Q, "
            "Q) is the removal of one record), and under REPLACE_ONE for a GaussianDpEvent only "
            "(the pair q N(1) + (1-q) N(0) against q N(-1) + (1-q) N(0), as in dp_accounting); "
            f"found {name} under REPLACE_ONE"
        )
    sigma = exact_number(inner.noise_multiplier, "GaussianDpEvent noise_multiplier")
    if sigma < 0:
        raise EventParameterError(
            f"GaussianDpEvent noise_multiplier = {sigma} is negative; valid range >= 0"
        )
    return ReplaceSubsampledGaussian(sigma, q)


def _is_zero_noise(event: Any) -> bool:
    name = type(event).__name__
    if name in ("GaussianDpEvent", "LaplaceDpEvent"):
        return exact_number(event.noise_multiplier, f"{name} noise_multiplier") == 0
    if name == "MixtureOfGaussiansDpEvent":
        sigma = exact_number(event.standard_deviation, f"{name} standard_deviation")
        return sigma == 0 and any(
            exact_number(c, f"{name} sensitivities") != 0 for c in event.sensitivities
        )
    if name == "RandomizedResponseDpEvent":
        return exact_number(event.noise_parameter, f"{name} noise_parameter") == 0 and (
            _int(event.num_buckets, f"{name} num_buckets", 1) > 1
        )
    if name == "DiscreteLaplaceDpEvent":
        if isinstance(event.noise_parameter, str) and "log" in event.noise_parameter:
            return False  # log(r): read by _dlap_mechanism
        return exact_number(event.noise_parameter, f"{name} noise_parameter") == 0 and (
            _int(event.sensitivity, f"{name} sensitivity", 0) > 0
        )
    return False


def _leaf(event: Any, relation: str, max_memory: int | None = DEFAULT_MEMORY_LIMIT) -> Any:
    """The mechanism of a leaf event (None: it reveals nothing)."""
    name = type(event).__name__
    if name == "DpConstraintsEvent":
        return Mechanism(list(event.constraints))
    if name == "MechanismDpEvent":
        return event.mechanism  # any mechanism of the package's protocol
    if name == "EpsilonDeltaDpEvent":
        eps = exact_number(event.epsilon, "EpsilonDeltaDpEvent epsilon")
        delta = exact_number(event.delta, "EpsilonDeltaDpEvent delta")
        return Mechanism.dp(eps, delta)
    if name == "RandomizedResponseDpEvent":
        if relation != REPLACE_ONE:
            p, k = _rr_parameters(event)
            if k == 1 or p == 1:  # equal distributions: symmetric under any relation
                return None
            raise EventTreeError(
                "RandomizedResponseDpEvent is composed exactly under REPLACE_ONE only (under "
                f"{relation} its pair is asymmetric); found {relation}"
            )
        return _rr_mechanism(event)
    if name == "DiscreteLaplaceDpEvent":
        return _dlap_mechanism(event, relation, max_memory)
    if name in ("GaussianDpEvent", "LaplaceDpEvent"):
        return _noise(event, relation)
    if name == "MixtureOfGaussiansDpEvent":
        return _mixture(event, relation)
    if name == "TruncatedSubsampledGaussianDpEvent":
        raise EventTreeError(
            "TruncatedSubsampledGaussianDpEvent is not certified here: dp_accounting accounts "
            "it as a public-coin mixture of two loss distributions (the subsampled Gaussian "
            "and, with the truncation probability, a replace-one one at half the noise), which "
            "the loss grid does not mix yet (docs/theory.md, section 22)"
        )
    if name == "RandomAllocationDpEvent":
        if relation not in _ADDITIVE:
            raise EventTreeError(
                "RandomAllocationDpEvent is composed under ADD_OR_REMOVE_ONE (each record "
                f"in one of the steps, added or removed); found {relation}"
            )
        scale = exact_number(event.noise_multiplier, f"{name} noise_multiplier")
        if scale <= 0:
            raise EventTreeError(f"{name} noise_multiplier = {scale} must be > 0")
        return random_allocation(gaussian_noise(scale), event.num_steps, event.num_selected)
    raise EventTreeError(
        f"unsupported DpEvent {name}: the composition covers NoOp, NonPrivate, "
        "SelfComposed, Composed, DpConstraints, EpsilonDelta, RandomizedResponse, "
        "DiscreteLaplace, "
        "Gaussian, Laplace, MixtureOfGaussians, RandomAllocation, PoissonSampled, "
        "SampledWithoutReplacement and SampledWithReplacement events"
    )


def _note(mechanism: Any) -> str | None:
    form = mechanism.loss_pair().form
    if form is PairForm.GAUSSIAN:
        return "Gaussian: G_mu in closed form, a certified enclosure (Arb)"
    if form is PairForm.NOISE:
        return f"{mechanism.describe()}: certified loss grid, two-sided bounds"
    if form is PairForm.ASYMMETRIC_BOUNDS:
        return f"{mechanism.describe()}: bounded (eps rounded to logarithms of rationals)"
    return None


class _Reader:
    def __init__(self, relation: str, max_memory: int | None) -> None:
        self.relation = relation
        self.max_memory = max_memory
        self.out = EventKinds()

    def add(self, mechanism: Any, count: int) -> None:
        if mechanism is None or not count:
            return
        self.out.add(mechanism, count)
        note = _note(mechanism)
        if note is not None and note not in self.out.notes:
            self.out.notes.append(note)

    def visit(self, event: Any, count: int) -> None:
        try:
            self._visit(event, count)
        except DPComposeError as exc:
            if getattr(exc, "event", None) is None:
                exc.event = event  # type: ignore[attr-defined]  # the innermost event
            raise

    def _visit(self, event: Any, count: int) -> None:
        name = type(event).__name__
        if name == "NoOpDpEvent":
            return
        if name == "NonPrivateDpEvent" or _is_zero_noise(event):
            self.out.non_private = self.out.non_private or count > 0
            return
        if name == "SelfComposedDpEvent":
            self.visit(event.event, count * _int(event.count, "SelfComposedDpEvent count", 0))
            return
        if name == "ComposedDpEvent":
            for e in event.events:
                self.visit(e, count)
            return
        if name == "PoissonSampledDpEvent":
            q = exact_number(event.sampling_probability, "sampling_probability")
            if self.relation not in _ADDITIVE:
                self.add(_replace_poisson(event.event, q, self.out), count)
                return
            self.add(_subsampled(event.event, q, ADD_OR_REMOVE, self.out, self.max_memory), count)
            return
        if name == "SampledWithReplacementDpEvent":
            self.add(_with_replacement(event, self.relation), count)
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
            self.add(
                _subsampled(event.event, Fraction(m, n), REPLACE_ONE, self.out, self.max_memory),
                count,
            )
            return
        self.add(_leaf(event, self.relation, self.max_memory), count)


def _subsampled(
    inner: Any, q: Fraction, relation: str, out: EventKinds, max_memory: int | None
) -> Any:
    """The subsampled mechanism of a sampled leaf (None: nothing is revealed).

    A non-private leaf sampled at a rate ``q < 1`` is the subsampled pair of a pair with
    leak 1 (docs/theory.md, section 15): exactly ``delta(eps) = q`` at every eps for one
    use (``1 - (1 - q)^k`` for ``k``), not a non-private event.
    """
    if not 0 <= q <= 1:
        raise EventParameterError(f"sampling probability {q} is outside [0, 1], its valid range")
    name = type(inner).__name__
    if q == 0 or name == "NoOpDpEvent":
        return None
    if name == "NonPrivateDpEvent" or _is_zero_noise(inner):
        if q == 1:
            out.non_private = True
            return None
        return _subsampled_non_private(q, name)
    base = _leaf(inner, relation, max_memory)
    if base is None:
        return None
    if base.loss_pair().form is PairForm.FINITE:
        try:
            return subsample_region(base.region, q, name)
        except UnsupportedExpressionError as exc:
            raise EventTreeError(str(exc)) from None
    return base.subsample(q)


def _subsampled_non_private(q: Fraction, name: str) -> Any:
    """The exact subsampled pair of a non-private mechanism (``P``, ``Q`` disjoint).

    The base pair has no finite loss and leak 1; subsampled at ``q`` the forward
    direction leaks ``q`` and loses ``log(1 - q)`` otherwise (:func:`subsample_pld`).
    """
    base = PLD.from_masses(ExpDomain(None, ()), [], QzElem.from_rational(1))
    pair = subsample_pld(base, q, name)
    return SubsampledMechanism(pair, q, f"{name} (non-private)", pairs=(("0", "1"),))


def event_kinds(
    event: Any,
    neighboring_relation: Any = ADD_OR_REMOVE,
    max_memory: int | None = DEFAULT_MEMORY_LIMIT,
) -> EventKinds:
    """The ``(mechanism, count)`` list of a ``DpEvent`` tree (see the module docstring).

    Args:
        event: a dp_accounting ``DpEvent`` (or a look-alike with the same class names).
        neighboring_relation: dp_accounting's ``NeighboringRelation`` or its name.
        max_memory: bytes a leaf's exact pair may take (a discrete Laplace pair is
            quadratic in its shift; None: no limit).

    Raises:
        ResourceLimitError: a leaf's exact pair would not fit in ``max_memory``.
        EventTreeError: an event this reading does not cover, or bad parameters (the
            message names the event and the valid range); its ``event`` attribute is the
            innermost event at fault.
        InvalidParameterError: the tree is nested deeper than :data:`MAX_EVENT_DEPTH`
            levels (checked by an explicit stack before the recursive reading).
    """
    check_event_depth(event)
    reader = _Reader(_relation_name(neighboring_relation), max_memory)
    reader.visit(event, 1)
    return reader.out


def _names(event: Any) -> set[str]:
    out = {type(event).__name__}
    inner = getattr(event, "event", None)
    if inner is not None:
        out |= _names(inner)
    for e in getattr(event, "events", None) or ():
        out |= _names(e)
    return out


def infer_relation(event: Any) -> str:
    """REPLACE_ONE for randomized response and fixed-size batches, else ADD_OR_REMOVE_ONE."""
    names = _names(event)
    replace = names & {"RandomizedResponseDpEvent", "SampledWithoutReplacementDpEvent"}
    if replace and "PoissonSampledDpEvent" in names:
        raise InvalidParameterError(
            "the tree mixes REPLACE_ONE events (randomized response, fixed-size batches) with "
            "Poisson sampling (ADD_OR_REMOVE_ONE): give the neighbouring relation"
        )
    return "REPLACE_ONE" if replace else "ADD_OR_REMOVE_ONE"


def subsampled_mechanism(event: Any, neighboring_relation: Any) -> Any:
    """The subsampled mechanism of one Poisson or without-replacement sampled event.

    None when the event reveals nothing (rate 0, a no-op inside).

    Raises:
        EventTreeError: the relation does not fit the sampling, the inner event has no
            pair, or the inner event is non-private.
    """
    kinds = event_kinds(event, neighboring_relation)
    if kinds.non_private:
        raise EventTreeError(f"{type(event).__name__} of a non-private event")
    return kinds.items[0][0] if kinds.items else None


def event_composition(
    event: Any,
    neighboring_relation: Any = ADD_OR_REMOVE,
    max_memory: int | None = DEFAULT_MEMORY_LIMIT,
) -> Composition | None:
    """The composition of a ``DpEvent`` tree: :func:`event_kinds`, then the front door.

    Args:
        event: a dp_accounting ``DpEvent`` (or a look-alike with the same class names).
        neighboring_relation: dp_accounting's ``NeighboringRelation`` or its name.
        max_memory: bytes the exact route may use.

    Returns:
        The :class:`~dpcompose_exact.composition.Composition` (exact where every pair is
        finite, certified where noise occurs), or None when the tree composes no private
        mechanism.

    Raises:
        EventTreeError: an event the composition does not cover, or a non-private event
            (infinite epsilon: nothing to compose).
    """
    kinds = event_kinds(event, neighboring_relation, max_memory)
    if kinds.non_private:
        raise EventTreeError("the tree contains a non-private event: epsilon is infinite")
    if not kinds.items:
        return None
    return compose(kinds.items, max_memory=max_memory)
