"""dp_accounting driven through its own ``DpEvent``s (``pld_events`` and ``rdp_events``).

The built-in adapters hand dp_accounting a finite mechanism as its exact dominating pair
(:mod:`~dpcompose_exact.tools.audit.pld_adapter`); this one describes every mechanism of a
case the way a user of the library does, as a ``DpEvent`` tree, and asks the library's
own accountants, ``PLDAccountant`` and ``RdpAccountant``, which read the tree
(``privacy_accountant.PrivacyAccountant.compose``).  That is where bugs of the library's
event handling live: ``SelfComposedDpEvent(RandomizedResponseDpEvent(...), k)`` is
composed by ``PLDAccountant`` once, whatever ``k`` (its ``_maybe_compose`` passes the count
on but the randomized-response branch never reads it).

Events, one per item of the case (docs/theory.md, section 1 for the pairs):

* Gaussian noise: ``GaussianDpEvent(sigma / sensitivity)``; Poisson subsampled:
  ``PoissonSampledDpEvent(q, GaussianDpEvent(...))``;
* Laplace noise: ``LaplaceDpEvent(b / sensitivity)`` (and ``PoissonSampledDpEvent`` of it;
  the accountants say themselves whether they support it);
* a pure ``eps``-DP mechanism (one constraint ``(eps, 0)``; randomized response among
  them): ``RandomizedResponseDpEvent(noise_parameter=2 / (1 + e^eps), num_buckets=2)``,
  whose pair is the dominating pair of every ``eps``-DP mechanism (the truth is output
  with probability ``1 - p + p/2 = e^eps / (1 + e^eps)``, the library's docstring:
  "With probability 1 - p, it simply outputs the input bucket. Otherwise, with
  probability p, it outputs a bucket drawn uniformly at random from the k buckets");
* what the case names natively (``job.options["native"]``, per item:
  :attr:`~dpcompose_exact.tools.audit.suite.SuiteCase.native`): a discrete Laplace
  mechanism, ``DiscreteLaplaceDpEvent(noise_parameter=a, sensitivity=s)`` (the library's
  docstring: "The probability mass function of the discrete Laplace distribution DLap(a)
  with noise parameter `a` is given as exp(-a|x|) * tanh(a/2)"; the loss pair of
  ``discrete_laplace(a, s)``); Gaussian noise on ``m`` of ``n`` records drawn
  without replacement, ``SampledWithoutReplacementDpEvent(n, m,
  GaussianDpEvent(sigma / shift))`` under ``REPLACE_ONE`` (the shift is the replace-one
  sensitivity; the pair is section 15's at ``q = m/n``);
* the library's own event, when the case names it (``native`` ``event``: a literal spec,
  with the relation it is read under and the uses of the item one event stands for):
  ``MixtureOfGaussiansDpEvent``, ``SampledWithReplacementDpEvent``,
  ``PoissonSampledDpEvent`` under ``REPLACE_ONE``, ``ZCDpEvent``,
  ``SingleEpochTreeAggregationDpEvent`` (``REPLACE_SPECIAL``; one epoch of a depth-``d``
  tree is ``d`` Gaussian uses), a ``PoissonSampledDpEvent`` of a ``ComposedDpEvent`` of
  Gaussians (docs/theory.md, sections 22 and 23 for their pairs);
* each item ``count`` times: ``SelfComposedDpEvent(event, count)``; the items together:
  ``ComposedDpEvent([...])``.

The neighbouring relation is the one the case names, else ``ADD_OR_REMOVE_ONE`` (the
library's default) unless a
randomized response or a sample without replacement is among the events: the library
takes them only under ``REPLACE_ONE`` (its own error messages: "neighboring_relation must
be `REPLACE_ONE` or `REPLACE_SPECIAL` for `RandomizedResponseDpEvent`", "neighboring_relation
must be `REPLACE_ONE` for `SampledWithoutReplacementDpEvent`").  A tree the accountant
does not support under that relation is ``unsupported`` with the library's reason
(``PrivacyAccountant.supports`` and its ``CompositionErrorDetails``).

Claims.  ``pld_events``: upper bounds.  ``PLDAccountant`` builds its PLDs with
``pessimistic_estimate=True``, which the library documents as "the rounding is done in
such a way that the resulting epsilon-hockey stick divergence computation gives an upper
estimate to the real value" (``privacy_loss_distribution.from_gaussian_mechanism``).
``rdp_events``: upper bounds; ``RdpAccountant`` composes "RDP guarantees" and converts them
with ``compute_epsilon`` ("Returns: 2-tuple containing optimal epsilon and the optimal
order"), a conversion theorem applied to a guarantee.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ....regions.protocol import LossPair
from ..adapters import Claim, Job, Series, register
from ..boundary import Numbers
from . import PeerAdapter, noise_of, per_query, pure_eps

__all__ = ["DpAccountingEventsAdapter", "event_spec", "render_spec", "build_spec"]

Spec = tuple[str, tuple[Any, ...]]
"""A ``DpEvent`` as ``(class name in dp_accounting.dp_event, positional arguments)``; an
argument may be a spec or a list of specs."""


def _rr_noise(eps: float) -> float:
    """dp_accounting's ``noise_parameter`` of the 2-bucket randomized response of ``eps``."""
    return 2.0 / (1.0 + math.exp(eps))


def event_spec(
    mechanism: Any, pair: LossPair, native: Mapping[str, str] | None = None
) -> Spec | None:
    """The ``DpEvent`` spec of one use of ``mechanism`` (None: the library has no event).

    ``native``: what the case calls the item (:attr:`SuiteCase.native
    <dpcompose_exact.tools.audit.suite.SuiteCase.native>`; module docstring).
    """
    native = native or {}
    if "event" in native:  # the case names the library's own event (a literal spec)
        return ast.literal_eval(native["event"])
    if native.get("family") == "discrete_laplace":
        a, shift = float(Fraction(native["a"])), int(native["sensitivity"])
        return ("DiscreteLaplaceDpEvent", (a, shift))
    noise = noise_of(mechanism, pair)
    if noise is not None:
        name = "GaussianDpEvent" if noise.kind == "gaussian" else "LaplaceDpEvent"
        spec: Spec = (name, (noise.multiplier,))
        if native.get("sampler") == "without replacement":
            n, m = int(native["n"]), int(native["m"])
            if Fraction(m, n) != noise.rate:
                raise ValueError(f"sample {m} of {n} is not the rate {noise.rate} of {name}")
            return ("SampledWithoutReplacementDpEvent", (n, m, spec))
        if noise.rate != 1:
            spec = ("PoissonSampledDpEvent", (float(noise.rate), spec))
        return spec
    eps = pure_eps(mechanism, pair)
    if eps is not None:
        return ("RandomizedResponseDpEvent", (_rr_noise(eps), 2))
    return None


def _job_spec(job: Job) -> tuple[Spec, str]:
    """``(the case as one ComposedDpEvent spec, the neighbouring relation's name)``."""
    parts: list[Spec] = []
    natives = list(job.options.get("native", ())) or [{}] * len(job.items)
    relations = {n["relation"] for n in natives if "relation" in n}
    for (m, c), p, native in zip(job.items, job.loss_pairs(), natives):
        uses = int(native.get("uses", 1))
        if c % uses:
            raise ValueError(f"count {c} is not a multiple of the {uses} uses of one event")
        if c:
            one = event_spec(m, p, native)
            assert one is not None  # accepts() refused the others
            parts.append(("SelfComposedDpEvent", (one, c // uses)) if c > uses else one)
    if len(relations) > 1:
        raise ValueError(f"the case's events name different relations: {sorted(relations)}")
    if relations:
        return ("ComposedDpEvent", (parts,)), relations.pop()
    text = " ".join(render_spec(s) for s in parts)
    replace = "RandomizedResponse" in text or "SampledWithoutReplacement" in text
    return ("ComposedDpEvent", (parts,)), ("REPLACE_ONE" if replace else "ADD_OR_REMOVE_ONE")


def render_spec(spec: Any) -> str:
    """Python source of a spec (``dp_event.GaussianDpEvent(1.0)``)."""
    if isinstance(spec, list):
        return "[" + ", ".join(render_spec(s) for s in spec) + "]"
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        return f"dp_event.{spec[0]}({', '.join(render_spec(a) for a in spec[1])})"
    return repr(spec)


def build_spec(spec: Any) -> Any:
    """The ``DpEvent`` of a spec."""
    from dp_accounting import dp_event

    if isinstance(spec, list):
        return [build_spec(s) for s in spec]
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        return getattr(dp_event, spec[0])(*(build_spec(a) for a in spec[1]))
    return spec


_PLD_QUOTE = (
    "PLDAccountant builds its privacy loss distributions with pessimistic_estimate=True: "
    '"a value indicating whether the rounding is done in such a way that the resulting '
    'epsilon-hockey stick divergence computation gives an upper estimate to the real value" '
    "(dp_accounting.pld.privacy_loss_distribution.from_gaussian_mechanism)"
)
_RDP_QUOTE = (
    'RdpAccountant: "Privacy accountant that uses Renyi differential privacy"; '
    'compute_epsilon "Computes epsilon given a list of RDP values and target delta" '
    "(a conversion theorem applied to RDP guarantees)"
)

_ACCOUNTANTS = {
    "pld_events": (
        "dp_accounting.pld.pld_privacy_accountant",
        "PLDAccountant",
        "value_discretization_interval={grid!r}",
    ),
    "rdp_events": ("dp_accounting.rdp.rdp_privacy_accountant", "RdpAccountant", ""),
}


class DpAccountingEventsAdapter(PeerAdapter):
    """dp_accounting's ``PLDAccountant`` and ``RdpAccountant`` on the case as a ``DpEvent`` tree."""

    name = "dp_accounting_events"
    library = "dp_accounting"
    distribution = "dp-accounting"
    series = (
        Series(
            "pld_events",
            Claim.UPPER,
            Claim.UPPER,
            "dp_accounting PLDAccountant (DpEvents)",
            quote=_PLD_QUOTE,
        ),
        Series(
            "rdp_events",
            Claim.UPPER,
            Claim.UPPER,
            "dp_accounting RdpAccountant (DpEvents)",
            quote=_RDP_QUOTE,
        ),
    )
    forms = frozenset({"finite", "gaussian", "noise"})

    def load(self) -> Any:
        """Import dp_accounting's event module and both accountants."""
        import importlib

        for module, _, _ in _ACCOUNTANTS.values():
            importlib.import_module(module)
        return importlib.import_module("dp_accounting.dp_event")

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """Gaussian and Laplace noise (Poisson subsampled or not), pure eps-DP mechanisms."""
        if event_spec(mechanism, pair) is not None:
            return None
        return f"dp_accounting has no DpEvent for {mechanism.describe()}"

    def _accountant(self, series: str, relation: str, grid: float) -> Any:
        import importlib

        from dp_accounting import privacy_accountant

        module, cls, _ = _ACCOUNTANTS[series]
        rel = privacy_accountant.NeighboringRelation[relation]
        acc_cls = getattr(importlib.import_module(module), cls)
        if series == "pld_events":
            return acc_cls(rel, value_discretization_interval=grid)
        return acc_cls(neighboring_relation=rel)

    def compute(self, job: Job) -> Numbers:
        """Each accountant composes the tree once and answers every query."""
        spec, relation = _job_spec(job)
        event = build_spec(spec)
        out: Numbers = {}
        for s in self.series:
            acc = self._accountant(s.name, relation, job.options["pld_grid"])
            if not acc.supports(event):
                detail = acc._maybe_compose(event, 1, False)  # the library's own reason
                why = getattr(detail, "error_message", "") or "unsupported event"
                note = f"unsupported: {type(acc).__name__} under {relation}: {why}"
                nan = [math.nan]
                out[s.name] = (nan * len(job.eps), nan * len(job.deltas), [note])
                continue
            acc.compose(event)
            notes: list[str] = []
            ds = per_query(acc.get_delta, job.eps, "delta at eps", notes)
            es = per_query(acc.get_epsilon, job.deltas, "eps at delta", notes)
            out[s.name] = (ds, es, notes)
        return out

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """The event tree, the accountant, ``compose`` and the query, as source lines."""
        spec, relation = _job_spec(job)
        module, cls, kw = _ACCOUNTANTS[series]
        kw = kw.format(grid=job.options["pld_grid"])
        rel = f"privacy_accountant.NeighboringRelation.{relation}"
        args = f"{rel}, {kw}" if kw else f"neighboring_relation={rel}"
        lines = [
            "from dp_accounting import dp_event, privacy_accountant",
            f"from {module} import {cls}",
            "",
            f"event = {render_spec(spec)}",
            f"accountant = {cls}({args})",
            "accountant.compose(event)",
        ]
        call = "get_delta" if quantity == "delta" else "get_epsilon"
        return [*lines, f"reported = accountant.{call}({at!r})"]


register(DpAccountingEventsAdapter())
