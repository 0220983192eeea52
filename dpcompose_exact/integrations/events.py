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
  (``REPLACE_ONE``; of noise events also ``ADD_OR_REMOVE_ONE``, the same pair, section 23)
  of any of these: the subsampled mechanism; ``PoissonSampledDpEvent`` of
  a Gaussian under ``REPLACE_ONE``: dp_accounting's replace pair (section 23);
* ``MixtureOfGaussiansDpEvent`` (``ADD_OR_REMOVE_ONE``): the
  :func:`~dpcompose_exact.mixture_of_gaussians`, and ``SampledWithReplacementDpEvent`` of a
  Gaussian (``ADD_OR_REMOVE_ONE``): its binomial mixture (section 23);
* ``TruncatedSubsampledGaussianDpEvent`` (``ADD_OR_REMOVE_ONE``): the public-coin mixture
  :func:`~dpcompose_exact.truncated_subsampled_gaussian` (section 23);
* ``RandomAllocationDpEvent`` (the package's own, ``ADD_OR_REMOVE_ONE``):
  :func:`~dpcompose_exact.random_allocation` of Gaussian noise.
* ``ZCDpEvent``: the parameters of all of them added, then
  :func:`~dpcompose_exact.mechanisms.zcdp.zcdp` once (an upper bound; section 22);
* ``SingleEpochTreeAggregationDpEvent`` (``REPLACE_SPECIAL``): ``depth`` uses of
  Gaussian noise (section 22);
* a sampled ``ComposedDpEvent``/``SelfComposedDpEvent`` of Gaussian events: one
  subsampled Gaussian (section 22).
* ``RepeatAndSelectDpEvent`` of a pure-DP event: a certified pure-DP bound; of an event
  with certified Rényi divergences: Papernot and Steinke's Rényi bounds as constraints, an
  upper bound (section 22).

Events are recognised by their class names (:class:`DpConstraintsEvent` is this package's
own), so a look-alike with the same names and fields reads the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import flint

from ..api import Composition, Mechanism, compose, discrete_laplace, randomized_response
from ..engines.genfunc import DEFAULT_MEMORY_LIMIT
from ..errors import (
    DPComposeError,
    InvalidParameterError,
    UnsupportedExpressionError,
    UnsupportedQueryError,
)
from ..mechanisms.allocation import random_allocation
from ..mechanisms.mixture import (
    MAX_COMPONENTS,
    ReplaceSubsampledGaussian,
    binomial_mixture,
    mixture_of_gaussians,
)
from ..mechanisms.noise import gaussian_noise, laplace_noise
from ..mechanisms.subsampled import SubsampledMechanism, subsample_pld, subsample_region
from ..mechanisms.truncated import truncated_subsampled_gaussian
from ..mechanisms.zcdp import rdp_curve_bound, scaled_cks_bound, zcdp
from ..numbers import ExpDomain, QzElem, linear_form, parse_float_field
from ..numbers.convert import ball_end, rational_ball
from ..regions.pld import PLD
from ..regions.protocol import GridEntry, PairForm

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
    :func:`~dpcompose_exact.numbers.parsing.parse_float_field`.  numpy floats are read by
    their repr's value (``np.float64(1.1)`` and ``np.float32(1.1)`` are 11/10, like
    ``1.1``), numpy ints by their value.

    >>> import numpy as np
    >>> exact_number(0.1), exact_number("1e-5"), exact_number(2), exact_number(np.float32(1.1))
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
        rho, xi: the zCDP parameters of every ``ZCDpEvent`` of the tree, added (``k`` uses
            of ``(xi, rho)``-zCDP are ``(k xi, k rho)``-zCDP); when either is positive,
            ``items`` ends with :attr:`zcdp_mechanism` once.
        zcdp_mechanism: :func:`~dpcompose_exact.mechanisms.zcdp.zcdp` of ``(rho, xi)``
            (points of the Canonne-Kamath-Steinke curve as constraints: an upper bound),
            or None.
        lower: mechanisms of ``items`` that bound from above, each with the mechanism that
            bounds from below (see :meth:`lower_items`).
    """

    items: list[tuple[Any, int]] = field(default_factory=list)
    non_private: bool = False
    notes: list[str] = field(default_factory=list)
    rho: Fraction = Fraction(0)
    xi: Fraction = Fraction(0)
    zcdp_mechanism: Any = None
    lower: dict[Any, Any] = field(default_factory=dict)

    def lower_items(self) -> list[tuple[Any, int]]:
        """:attr:`items` with each mechanism of :attr:`lower` swapped for its lower one.

        A sampled composition of Gaussians whose ``mu`` is irrational is read as the
        rational ``mu`` just above it (in :attr:`items`: an upper bound) and just below it
        (here: a lower bound); privacy profiles are monotone in ``mu`` (docs/theory.md,
        section 22).
        """
        return [(self.lower.get(m, m), n) for m, n in self.items]

    def without_zcdp(self) -> list[tuple[Any, int]]:
        """:attr:`items` but the zCDP mechanism (whose parameters a caller adds itself)."""
        return [(m, n) for m, n in self.items if m is not self.zcdp_mechanism]

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
    or ``REPLACE_SPECIAL``, as dp_accounting reads it (docs/theory.md, section 23).
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
    """``SampledWithReplacementDpEvent`` of a Gaussian: the binomial mixture (section 23).

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


def _truncated(event: Any, relation: str) -> Any:
    """``TruncatedSubsampledGaussianDpEvent``: a public-coin mixture of two subsampled Gaussians.

    Read under ``ADD_OR_REMOVE_ONE`` (``dataset_size`` counts the larger dataset, as
    dp_accounting reads it; :func:`~dpcompose_exact.truncated_subsampled_gaussian`,
    docs/theory.md, section 23); None when nothing is sampled (``q``, ``n`` or the batch
    size 0, as dp_accounting).
    """
    name = "TruncatedSubsampledGaussianDpEvent"
    n = _int(event.dataset_size, f"{name} dataset_size", 0)
    b = _int(event.truncated_batch_size, f"{name} truncated_batch_size", 0)
    q = exact_number(event.sampling_probability, f"{name} sampling_probability")
    if not 0 <= q <= 1:
        raise EventParameterError(
            f"{name} sampling_probability = {q} is outside the valid range [0, 1]"
        )
    if q == 0 or n == 0 or b == 0:
        return None
    if relation != ADD_OR_REMOVE:
        raise EventTreeError(
            f"{name} is composed under ADD_OR_REMOVE_ONE (its pair: the untruncated batch's "
            "subsampled Gaussian and, when the other records fill the batch, the record "
            "replacing one of them, docs/theory.md, section 23); under "
            f"{relation} the pair is not derived here; found {relation}"
        )
    sigma = exact_number(event.noise_multiplier, f"{name} noise_multiplier")
    if sigma <= 0:
        raise EventParameterError(f"{name} noise_multiplier = {sigma}; valid range > 0")
    return truncated_subsampled_gaussian(sigma, n, q, b)


#: inner events whose replace-one pair comes from their noise (sampling without replacement
#: is read under add/remove through it)
_REPLACE_BY_NOISE = (
    "GaussianDpEvent",
    "LaplaceDpEvent",
    "DiscreteLaplaceDpEvent",
    "ComposedDpEvent",
    "SelfComposedDpEvent",
    "NoOpDpEvent",
    "NonPrivateDpEvent",
)


def _check_without_replacement(inner: Any, relation: str) -> None:
    """``SampledWithoutReplacementDpEvent`` under add/remove: the replace-one pair's inner.

    A batch of ``m`` of ``n`` records (``n`` the larger dataset) given the batch ``T`` of the
    smaller one and a record ``y`` of it holds the record in place of ``y`` with probability
    ``m/n``, else ``T``: the subsampled pair of the inner mechanism's replace-one pair at
    ``m/n``, the pair read under ``REPLACE_ONE`` (docs/theory.md, section 23).  That needs
    the inner event's replace-one pair, which noise events give (sensitivity 2); a
    guarantee event's is not given.
    """
    name = type(inner).__name__
    if relation != ADD_OR_REMOVE:
        raise EventTreeError(
            "SampledWithoutReplacementDpEvent is composed under REPLACE_ONE and "
            f"ADD_OR_REMOVE_ONE (a batch of fixed size); found {relation}"
        )
    if name not in _REPLACE_BY_NOISE:
        raise EventTreeError(
            f"SampledWithoutReplacementDpEvent of {name} under ADD_OR_REMOVE_ONE: the batch "
            "then holds the record in place of another, so the pair is the subsampled pair of "
            "the inner event's replace-one pair, which Gaussian, Laplace and discrete Laplace "
            f"events give (their noise at sensitivity 2) and {name} does not (its guarantee "
            "is for the accountant's relation); compose it under REPLACE_ONE"
        )


def _replace_poisson(inner: Any, q: Fraction, out: EventKinds) -> Any:
    """``PoissonSampledDpEvent`` under ``REPLACE_ONE``: of a Gaussian, dp_accounting's pair.

    ``q N(1, sigma^2) + (1 - q) N(0, sigma^2)`` against ``q N(-1, sigma^2) + (1 - q) N(0,
    sigma^2)`` (:class:`~dpcompose_exact.mechanisms.mixture.ReplaceSubsampledGaussian`,
    docs/theory.md, section 23); other inner events are refused with the reason.
    """
    name = type(inner).__name__
    decided, pair = _sampled_trivially(q, inner, out)
    if decided:
        return pair
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
    if name in ("GaussianDpEvent", "LaplaceDpEvent", "SingleEpochTreeAggregationDpEvent"):
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
        return _truncated(event, relation)
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
    raise EventTreeError(f"unsupported DpEvent {name}: the composition covers {SUPPORTED_EVENTS}")


SUPPORTED_EVENTS = (
    "NoOp, NonPrivate, SelfComposed, Composed, DpConstraints, EpsilonDelta, "
    "RandomizedResponse, DiscreteLaplace, Gaussian, Laplace, MixtureOfGaussians, "
    "TruncatedSubsampledGaussian (add/remove), RandomAllocation, ZCDp, "
    "SingleEpochTreeAggregation, RepeatAndSelect (of pure DP), "
    "PoissonSampled, SampledWithoutReplacement and SampledWithReplacement events"
)
"""The event kinds :func:`event_kinds` reads (named in every refusal)."""

_REPEAT_AND_SELECT = (
    "RepeatAndSelectDpEvent is composed when its event is pure DP (a certified pure-DP "
    "bound), and when its event has certified Renyi divergences (Gaussian noise, subsampled "
    "or not, zCDP events: Papernot and Steinke's Renyi bound, an upper bound; docs/theory.md, "
    "section 22); events without certified Renyi divergences (mixtures of Gaussians, random "
    "allocation, the truncated sampler) are not: account it with dp_accounting's "
    "RdpAccountant, or give its (eps, delta) guarantee as a DpConstraintsEvent"
)

_SAMPLED_PARTS = (
    "a sampled ComposedDpEvent or SelfComposedDpEvent is read when every part is a "
    "GaussianDpEvent (one Gaussian, mu^2 = sum of 1/sigma_i^2, exact): under one sample "
    "the parts see the same records, so the pair is the subsampled pair of the composed "
    "pair, not a composition of subsampled pairs"
)


def _note(mechanism: Any) -> str | None:
    form = mechanism.loss_pair().form
    if form is PairForm.GAUSSIAN:
        return "Gaussian: G_mu in closed form, a certified enclosure (Arb)"
    if form is PairForm.NOISE and mechanism.loss_pair().grid_entry() is GridEntry.PUBLIC_MIXTURE:
        return (
            f"{mechanism.describe()}: certified loss grid of a dominating pair (a public-coin "
            "mixture, docs/theory.md, section 23): two-sided bounds of the pair, whose upper "
            "end bounds the mechanism"
        )
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
        self.rho = Fraction(0)
        self.xi = Fraction(0)

    def finish(self) -> EventKinds:
        """The kinds read, the zCDP events' sum (one mechanism) last."""
        out = self.out
        out.rho, out.xi = self.rho, self.xi
        if self.rho or self.xi:
            out.zcdp_mechanism = zcdp(self.rho, self.xi)
            out.items.append((out.zcdp_mechanism, 1))
            if ZCDP_NOTE not in out.notes:
                out.notes.append(ZCDP_NOTE)
        return out

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
        if name == "ZCDpEvent":
            rho, xi = _zcdp_parameters(event)
            self.rho += count * rho
            self.xi += count * xi
            return
        if name == "SingleEpochTreeAggregationDpEvent":
            self.add(*_tree_aggregation(event, self.relation, count))
            return
        if name == "RepeatAndSelectDpEvent":
            shape = event.shape
            if not (isinstance(shape, float) and math.isinf(shape)) and exact_number(
                event.mean, "RepeatAndSelectDpEvent mean"
            ) == 1:  # a truncated negative binomial of mean 1 is K = 1: the event itself
                self.visit(event.event, count)
                return
            inner = event_kinds(event.event, self.relation, self.max_memory)
            if inner.non_private:
                self.out.non_private = self.out.non_private or count > 0
                return
            selected = _repeat_and_select(event, inner, self.max_memory)
            self.add(selected, count)
            label = str(getattr(selected, "label", ""))
            if "Papernot-Steinke" in label and label not in self.out.notes:
                self.out.notes.append(f"{label}: (eps, delta) constraints, an upper bound")
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
                _check_without_replacement(event.event, self.relation)
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


ZCDP_NOTE = (
    "ZCDp: an upper bound (points of the Canonne-Kamath-Steinke curve of the summed rho as "
    "(eps, delta) constraints, composed exactly; alone: the bracket [Gaussian, CKS])"
)


def _zcdp_parameters(event: Any) -> tuple[Fraction, Fraction]:
    """``(rho, xi)`` of a ``ZCDpEvent``, exact, both ``>= 0``."""
    rho = exact_number(event.rho, "ZCDpEvent rho")
    xi = exact_number(getattr(event, "xi", 0), "ZCDpEvent xi")
    for what, v in (("rho", rho), ("xi", xi)):
        if v < 0:
            raise EventParameterError(f"ZCDpEvent {what} = {v} is negative; valid range: >= 0")
    return rho, xi


def tree_depth(step_counts: Any) -> int:
    """The depth of the deepest tree, ``ceil(log2(max steps + 1))``, exactly.

    dp_accounting's reading of ``SingleEpochTreeAggregationDpEvent.step_counts``: a
    scalar (one tree) or a list; a record sits in one leaf and changes one node per level
    of its tree, ``depth`` nodes, and in no other tree.  ``ceil(log2(m + 1))`` is the
    number of binary digits of ``m``.

    >>> [tree_depth(m) for m in (1, 2, 3, 4, 7, 8)], tree_depth([3, 100])
    ([1, 2, 2, 3, 3, 4], 7)

    Raises:
        EventParameterError: no steps (0 or an empty list) or a negative count.
    """
    counts = list(step_counts) if isinstance(step_counts, (list, tuple)) else [step_counts]
    steps = [_int(c, "SingleEpochTreeAggregationDpEvent step_counts", 0) for c in counts]
    if not steps or not any(steps) and not isinstance(step_counts, (list, tuple)):
        raise EventParameterError(
            f"SingleEpochTreeAggregationDpEvent step_counts = {step_counts!r}: need a "
            "positive count or a non-empty list of counts >= 0"
        )
    return max(steps).bit_length()


def _tree_aggregation(event: Any, relation: str, count: int) -> tuple[Any, int]:
    """One epoch of tree aggregation: ``depth`` uses of Gaussian noise of sensitivity 1.

    Gaussian noise of ``noise_multiplier`` on every node; a record changes at most
    ``depth`` nodes by at most 1 (``REPLACE_SPECIAL``, dp_accounting's relation for it),
    so the epoch is the Gaussian pair of ``mu^2 = depth / sigma^2``, which is ``depth``
    compositions of ``G_{1/sigma}`` exactly (docs/theory.md, section 22).
    """
    if relation != "REPLACE_SPECIAL":
        raise EventTreeError(
            "SingleEpochTreeAggregationDpEvent is composed under REPLACE_SPECIAL (a record "
            f"replaced by a zero record changes one node per level); found {relation}"
        )
    sigma = exact_number(
        event.noise_multiplier, "SingleEpochTreeAggregationDpEvent noise_multiplier"
    )
    if sigma < 0:
        raise EventParameterError(
            f"SingleEpochTreeAggregationDpEvent noise_multiplier = {sigma} is negative; "
            "valid range: > 0"
        )
    return gaussian_noise(sigma), count * tree_depth(event.step_counts)


def _pure_epsilon(kinds: EventKinds, max_memory: int | None) -> tuple[str, Fraction] | None:
    """The pure eps of the kinds composed: exact text and a rational upper bound (None: none).

    The sum over kinds of each kind's eps at delta 0 (the largest loss of its
    composition); None when a kind has none (noise with unbounded loss, delta > 0).
    """
    texts, upper = [], Fraction(0)
    for mechanism, n in kinds.items:
        try:
            value = compose([(mechanism, n)], max_memory=max_memory).epsilon(0)
        except (InvalidParameterError, UnsupportedQueryError):
            return None
        hi = ball_end(value.ends()[1])
        upper += _round_up(hi)
        texts.append(f"({value.exact})" if value.exact is not None else str(_round_up(hi)))
    return " + ".join(texts), upper


def _round_up(x: Fraction, digits: int = 6) -> Fraction:
    """A decimal ``>= x`` with ``digits`` significant digits (``x`` itself when shorter)."""
    if x <= 0:
        return Fraction(0)
    scale = Fraction(10) ** (digits - 1 - math.floor(math.log10(x)))
    return Fraction(math.ceil(x * scale)) / scale


def _repeat_and_select(event: Any, inner: EventKinds, max_memory: int | None) -> Any:
    """A pure-DP bound of repeat-and-select of a pure ``eps``-DP event (None: nothing).

    The event runs ``K`` times and the best output is kept.  With ``g`` the probability
    generating function of ``K``, the best output has density ``q(y) g'(F(y))`` (ties
    broken by an independent uniform, a post-processing), so the ratio of two neighbours is
    at most ``e^eps g'(F)/g'(F')`` (docs/theory.md, section 22):

    * ``shape = eta`` in ``[0, inf)`` (truncated negative binomial; 0 logarithmic, 1
      geometric): ``g'(x)`` is proportional to ``(1 - (1 - gamma) x)^(-eta - 1)`` and
      ``1 - (1 - gamma)F >= e^-eps (1 - (1 - gamma)F')``: ``(2 + eta) eps``-DP, whatever
      the mean (Liu and Talwar's ``3 eps`` for the geometric);
    * ``shape = inf`` (Poisson of mean ``mu``, ``K = 0`` printing a fixed output):
      ``g'(x) = mu e^(mu (x - 1))`` and ``F - F' <= tanh(eps/2)`` (total variation):
      ``eps + mu tanh(eps/2)``-DP, rounded up to a 6-digit decimal.

    Raises:
        EventTreeError: the event has no pure eps (the message says what is covered).
        EventParameterError: ``mean < 1`` or ``shape < 0``, dp_accounting's ranges.
    """
    if not inner.items:
        return None
    shape_raw = event.shape
    poisson = isinstance(shape_raw, float) and math.isinf(shape_raw) and shape_raw > 0
    mean = exact_number(event.mean, "RepeatAndSelectDpEvent mean")
    eta = None if poisson else exact_number(shape_raw, "RepeatAndSelectDpEvent shape")
    if mean < 1 or (eta is not None and eta < 0):
        raise EventParameterError(
            f"RepeatAndSelectDpEvent mean = {mean}, shape = {shape_raw!r}: valid ranges "
            "mean >= 1, shape >= 0 (inf: Poisson)"
        )
    pure = _pure_epsilon(inner, max_memory)
    if pure is None:
        return _repeat_and_select_rdp(inner, mean, eta, shape_raw)
    text, upper = pure
    if eta is not None:
        try:
            return Mechanism.dp(f"{2 + eta}*({text})")
        except UnsupportedExpressionError:  # e^eps irrational algebraic: a decimal above
            return Mechanism.dp(_round_up((2 + eta) * upper))
    with flint.ctx.workprec(128):
        e = rational_ball(upper)
        bound = e + rational_ball(mean) * (e / 2).tanh()
    return Mechanism.dp(_round_up(ball_end(bound)))


def _tnb_mean(gamma: Any, eta: Any) -> Any:
    """``E[K]`` of the truncated negative binomial of shape ``eta``, parameter ``gamma``."""
    if eta == 0:  # logarithmic
        return (1 / gamma - 1) / (-gamma.log() if hasattr(gamma, "rad") else -math.log(gamma))
    pw = gamma**eta
    return eta * (1 - gamma) / (gamma * (1 - pw))


def _tnb_gamma(mean: Fraction, eta: Fraction) -> Fraction:
    """A rational ``gamma`` at or below the one whose mean is ``mean`` (certified in Arb).

    The mean decreases in ``gamma`` (from infinity at 0 to 1 at 1), so a ``gamma`` whose
    mean is certainly ``>= mean`` lies at or below the true one; ``log(1/gamma)`` is then an
    upper bound of the true one, which is the safe side of Papernot and Steinke's bound.
    """
    lo, hi = 1e-300, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if _tnb_mean(mid, float(eta)) > float(mean):
            lo = mid
        else:
            hi = mid
    g = Fraction(lo).limit_denominator(10**15)
    with flint.ctx.workprec(128):
        for _ in range(60):
            m = _tnb_mean(rational_ball(g), rational_ball(eta) if eta else 0)
            if m >= rational_ball(mean):
                return g
            g = g * Fraction(999, 1000)
    raise EventParameterError(f"RepeatAndSelectDpEvent mean = {mean}, shape = {eta}: no "
                              "certified gamma of the truncated negative binomial")


def _zcdp_of(inner: EventKinds) -> tuple[Fraction, Fraction] | None:
    """``(rho, xi)``: a zCDP guarantee of the inner kinds (None: a kind without one).

    A kind dominated by the Gaussian ``G_mu`` (``gaussian_mu2``: Gaussian noise, subsampled
    or not, random allocation's epochs, mixtures of Gaussians) has Rényi divergences at
    most ``alpha mu^2 / 2`` (post-processing), so ``mu^2/2``-zCDP; zCDP events add theirs.
    """
    rho, xi = Fraction(inner.rho), Fraction(inner.xi)
    for mechanism, n in inner.items:
        if mechanism is inner.zcdp_mechanism:
            continue
        mu2 = mechanism.loss_pair().gaussian_mu2()
        if mu2 is None:
            return None
        rho += n * mu2 / 2
    return rho, xi


def _repeat_and_select_rdp(inner: EventKinds, mean: Fraction, eta: Fraction | None,
                           shape_raw: Any) -> Any:
    """Repeat-and-select of a ``(xi, rho)``-zCDP event: Papernot and Steinke's Rényi bound.

    Truncated negative binomial ``K`` (Papernot and Steinke 2022, Theorem 2): for every
    ``alpha > 1`` and ``alpha_hat >= 1`` the selection is ``(alpha, eps')``-RDP with
    ``eps' = eps(alpha) + (1 + eta)((1 - 1/alpha_hat) eps(alpha_hat) + log(1/gamma) /
    alpha_hat) + log(mean)/(alpha - 1)``.  With ``eps(alpha) = xi + rho alpha`` the middle
    term is a constant ``c`` (one ``alpha_hat`` for all orders), so ``eps' = (xi + c) + rho
    alpha + log(mean)/(alpha - 1)``, and the conversion of Canonne, Kamath and Steinke gives
    ``mean`` times that of ``(xi + c, rho)``-zCDP at every order: an upper bound composed
    as constraints (docs/theory.md, section 22).
    """
    if eta is None:
        return _repeat_and_select_poisson(inner, mean)
    zc = _zcdp_of(inner)
    gaussian = all(m.loss_pair().form is PairForm.GAUSSIAN or m is inner.zcdp_mechanism
                   for m, _ in inner.items)
    if zc is None or not gaussian:
        curve = _renyi_orders(inner)
        if curve is None:
            raise EventTreeError(_REPEAT_AND_SELECT)
        return _repeat_and_select_orders(curve, mean, eta)
    rho, xi = zc
    if rho == 0:  # xi-DP: handled as pure DP before; nothing else reaches here
        raise EventTreeError(_REPEAT_AND_SELECT)
    gamma = _tnb_gamma(mean, eta)
    with flint.ctx.workprec(128):
        big_l = -rational_ball(gamma).log()  # >= log(1/gamma_true)
        lf = float(big_l.mid())
        guess = math.sqrt(max(lf - float(xi), 0.0) / float(rho))
        a_hat = max(Fraction(1), Fraction(guess).limit_denominator(10**6))
        a = rational_ball(a_hat)
        f = (1 - 1 / a) * (rational_ball(xi) + rational_ball(rho) * a) + big_l / a
        c = ball_end((1 + rational_ball(eta)) * f)
    c = _round_up(c)
    name = "RepeatAndSelect"
    label = (f"{name}(mean {mean}, shape {eta}) of {rho}-zCDP [Papernot-Steinke RDP upper "
             "bound]")
    return scaled_cks_bound(rho, xi + c, mean, label)


#: the Rényi orders at which a repeated event's divergences are certified (as dp_accounting's
#: RDP accountant: its default orders' integer part and a few large ones)
RENYI_ORDERS = (*range(2, 41), 48, 56, 64, 80, 96, 128, 192, 256)


def _renyi_orders(inner: EventKinds) -> list[tuple[Fraction, Fraction]] | None:
    """``[(alpha, upper end of D_alpha)]`` of the inner kinds' composition (None: unknown).

    Certified Rényi divergences (:func:`~dpcompose_exact.engines.summaries.renyi`, both
    directions, docs/theory.md, section 20); zCDP events add ``xi + rho alpha``.
    """
    from ..engines.summaries import renyi

    items = [(m, n) for m, n in inner.items if m is not inner.zcdp_mechanism]
    out = []
    for a in RENYI_ORDERS:
        try:
            value = renyi(items, a) if items else None
        except DPComposeError:
            return None
        hi = ball_end(value.ends()[1]) if value is not None else Fraction(0)
        if not math.isfinite(float(hi)):
            return None
        out.append((Fraction(a), hi + inner.xi + inner.rho * a))
    return out


def _repeat_and_select_orders(
    curve: list[tuple[Fraction, Fraction]], mean: Fraction, eta: Fraction
) -> Any:
    """Papernot and Steinke's Theorem 2 at the certified orders (see the zCDP form above).

    ``c = (1 + eta) min_j ((1 - 1/alpha_j) eps_j + log(1/gamma)/alpha_j)``, then ``eps'_i =
    eps_i + c + log(mean)/(alpha_i - 1)``, every term rounded up; the curve is converted to
    (eps, delta) constraints (an upper bound, docs/theory.md, section 22).
    """
    gamma = _tnb_gamma(mean, eta)
    with flint.ctx.workprec(128):
        big_l = -rational_ball(gamma).log()
        c = min(
            ball_end((1 - 1 / rational_ball(a)) * rational_ball(e) + big_l / rational_ball(a))
            for a, e in curve
        )
        c = ball_end((1 + rational_ball(eta)) * rational_ball(c))
        log_mean = rational_ball(mean).log()
        rdp = [(a, ball_end(rational_ball(e + c) + log_mean / (rational_ball(a) - 1)))
               for a, e in curve]
    label = (f"RepeatAndSelect(mean {mean}, shape {eta}) [Papernot-Steinke RDP upper bound "
             "at integer orders]")
    return rdp_curve_bound([(a, _round_up(e)) for a, e in rdp], label)


def _repeat_and_select_poisson(inner: EventKinds, mean: Fraction) -> Any:
    """Papernot and Steinke's Theorem 6 (Poisson count) at the certified orders.

    If the event is ``(alpha, eps_alpha)``-RDP and ``(eps_hat, delta_hat)``-DP with
    ``e^eps_hat <= 1 + 1/(alpha - 1)``, the selection is ``(alpha, eps_alpha + mean
    delta_hat + log(mean)/(alpha - 1))``-RDP: ``eps_hat = log(alpha/(alpha - 1))`` exactly,
    ``delta_hat`` the upper end of the event's own certified ``delta(eps_hat)`` (its
    composition, not a conversion); then as for the truncated negative binomial.
    """
    curve = _renyi_orders(inner)
    if curve is None or mean < 1:
        raise EventTreeError(_REPEAT_AND_SELECT)
    comp = compose(list(inner.items))
    rdp = []
    with flint.ctx.workprec(128):
        log_mean = rational_ball(mean).log()
        for a, e in curve:
            d_hat = ball_end(comp.delta(f"log({a}/{a - 1})").ends()[1])
            bound = rational_ball(e) + rational_ball(mean * d_hat) + log_mean / (
                rational_ball(a) - 1)
            rdp.append((a, _round_up(ball_end(bound))))
    label = (f"RepeatAndSelect(Poisson mean {mean}) [Papernot-Steinke RDP upper bound at "
             "integer orders]")
    return rdp_curve_bound(rdp, label)


def _gaussian_parts(inner: Any, relation: str) -> Fraction | None:
    """``mu^2`` of a composition of Gaussian events (None: a part of another kind)."""
    name = type(inner).__name__
    if name == "NoOpDpEvent":
        return Fraction(0)
    if name == "GaussianDpEvent":
        if _is_zero_noise(inner):
            return None
        return _noise(inner, relation).loss_pair().gaussian_mu2()
    if name == "SelfComposedDpEvent":
        part = _gaussian_parts(inner.event, relation)
        n = _int(inner.count, "SelfComposedDpEvent count", 0)
        return None if part is None else n * part
    if name == "ComposedDpEvent":
        total = Fraction(0)
        for e in inner.events:
            part = _gaussian_parts(e, relation)
            if part is None:
                return None
            total += part
        return total
    return None


def _rational_sqrt(x: Fraction) -> Fraction | None:
    """``sqrt(x)`` when it is rational, else None."""
    a, b = math.isqrt(x.numerator), math.isqrt(x.denominator)
    return Fraction(a, b) if a * a == x.numerator and b * b == x.denominator else None


def _sampled_gaussians(inner: Any, relation: str) -> Any:
    """The one Gaussian of a sampled composition of Gaussian events (None: nothing).

    Under one sample, a composition of Gaussian noises on the same batch is one Gaussian
    of ``mu^2 = sum mu_i^2`` (the product of ``N(mu_i, 1)`` against ``N(0, 1)`` is
    ``N(mu, 1)`` against ``N(0, 1)`` after a rotation): sigma ``1/mu`` at sensitivity 1.

    Returns:
        The Gaussian noise of ``mu`` when ``mu`` is rational, else the pair of noises of
        the rational ``mu`` just above and just below it (:func:`sqrt_bracket`; the loss
        grid takes a rational ``sensitivity / sigma``).

    Raises:
        EventTreeError: a part that is not Gaussian.
    """
    mu2 = _gaussian_parts(inner, relation)
    if mu2 is None:
        raise EventTreeError(f"{_SAMPLED_PARTS}; found a part of another kind: {inner!r}")
    if mu2 == 0:
        return None
    mu = _rational_sqrt(mu2)
    if mu is not None:
        return gaussian_noise(1 / mu)
    lo, hi = sqrt_bracket(mu2)
    return gaussian_noise(1 / hi), gaussian_noise(1 / lo)


def sqrt_bracket(x: Fraction, digits: int = 17) -> tuple[Fraction, Fraction]:
    """Rationals ``lo < sqrt(x) < hi``, ``hi - lo = 10^-k``: ``digits`` significant digits or more.

    For ``x`` not the square of a rational (exact integer square roots:
    ``floor(sqrt(y)) = isqrt(floor(y))``).

    >>> lo, hi = sqrt_bracket(Fraction(5, 4), 6)
    >>> lo, hi, lo**2 < Fraction(5, 4) < hi**2
    (Fraction(11180339, 10000000), Fraction(559017, 500000), True)
    """
    k = digits + max(0, (len(str(x.denominator)) - len(str(x.numerator))) // 2 + 1)
    scale = 10**k
    n = math.isqrt(x.numerator * scale * scale // x.denominator)
    return Fraction(n, scale), Fraction(n + 1, scale)


def _subsampled(
    inner: Any, q: Fraction, relation: str, out: EventKinds, max_memory: int | None
) -> Any:
    """The subsampled mechanism of a sampled leaf (None: nothing is revealed).

    A non-private leaf sampled at a rate ``q < 1`` is the subsampled pair of a pair with
    leak 1 (docs/theory.md, section 15): exactly ``delta(eps) = q`` at every eps for one
    use (``1 - (1 - q)^k`` for ``k``), not a non-private event.
    """
    name = type(inner).__name__
    decided, pair = _sampled_trivially(q, inner, out)
    if decided:
        return pair
    if name in ("ComposedDpEvent", "SelfComposedDpEvent"):
        base = _sampled_gaussians(inner, relation)
        if isinstance(base, tuple):  # mu irrational: bracketed by two rational ones
            upper, lower = (b.subsample(q) for b in base)
            out.lower[upper] = lower
            note = (
                f"{upper.describe()}: a sampled composition of Gaussians with irrational mu, "
                "answered between the rational mu just below and just above (17 digits)"
            )
            if note not in out.notes:
                out.notes.append(note)
            return upper
    elif name == "ZCDpEvent":
        raise EventTreeError(
            "a sampled ZCDpEvent is not composed: a zCDP guarantee is not amplified by "
            "subsampling in closed form (dp_accounting's accountants refuse it too), and its "
            "subsampled constraints are too many to compose; give the sampled mechanism "
            "itself (a Gaussian: PoissonSampledDpEvent of a GaussianDpEvent)"
        )
    else:
        base = _leaf(inner, relation, max_memory)
    if base is None:
        return None
    if base.loss_pair().form is PairForm.FINITE:
        try:
            return subsample_region(base.region, q, name)
        except UnsupportedExpressionError as exc:
            raise EventTreeError(str(exc)) from None
    return base.subsample(q)


def _sampled_trivially(q: Fraction, inner: Any, out: Any) -> tuple[bool, Any]:
    """``(True, pair)`` when sampling ``inner`` at ``q`` needs no mechanism of its own.

    ``q`` outside [0, 1] is refused; ``q = 0`` and a no-op inner event add nothing
    (``None``); a non-private (or zero-noise) inner event is non-private at ``q = 1`` and the
    exact subsampled non-private pair below it.  Otherwise ``(False, None)``.
    """
    if not 0 <= q <= 1:
        raise EventParameterError(f"sampling probability {q} is outside [0, 1], its valid range")
    name = type(inner).__name__
    if q == 0 or name == "NoOpDpEvent":
        return True, None
    if name == "NonPrivateDpEvent" or _is_zero_noise(inner):
        if q == 1:
            out.non_private = True
            return True, None
        return True, _subsampled_non_private(q, name)
    return False, None


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
    return reader.finish()


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
        mechanism.  A sampled composition of Gaussians with an irrational ``mu`` is
        composed with the rational ``mu`` just above it (17 digits): its upper ends are
        upper bounds, its lower ends may sit above the truth by about ``1e-17``
        relatively (:class:`~dpcompose_exact.integrations.dp_accounting.ExactAccountant`
        composes both sides); a ``ZCDpEvent`` is an upper bound (section 22).

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
