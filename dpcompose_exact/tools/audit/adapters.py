"""One adapter interface for the audit: an accountant library behind a registry.

An :class:`Adapter` is everything the audit needs to know about one numeric accountant:
its name (``pld_pessimistic``), the library and pip distribution behind it and the
installed version, which mechanisms it accepts (by the form of their
:class:`~dpcompose_exact.regions.protocol.LossPair`, and optionally a predicate), the
series of numbers it reports with what the library *claims* each one is (a
:class:`Claim` per quantity: an upper bound, a lower bound or an estimate), and how to run
the library on a list of ``(mechanism, count)`` items (:meth:`Adapter.run`, given a
:class:`Job`) and, optionally, on a ``DpEvent`` tree (:meth:`Adapter.run_tree`).

A new adapter is one file: a subclass of :class:`Adapter` and a call to :func:`register`.
The built-in ones (:mod:`~dpcompose_exact.tools.audit.pld_adapter`,
:mod:`~dpcompose_exact.tools.audit.rdp_adapter`,
:mod:`~dpcompose_exact.tools.audit.prv_adapter`) are loaded on first use; a third-party
package adds its own through the entry-point group :data:`ENTRY_POINT_GROUP`
(``dpcompose_exact.accountants``), whose objects are adapters, adapter classes, or
callables returning an adapter or a list of them.  An entry point that fails to load is
recorded (:func:`load_errors`) and reported by the audit, never raised.

Every adapter runs under a time limit (:data:`DEFAULT_TIME_LIMIT` seconds of CPU time per
case, option ``time_limit``; :meth:`Adapter.run_timed`): the library runs in a daemon
thread, and one that has not answered in time is a crashed row (``TimeoutError``, its note
ending in ``(time limit)``), not a suite that never ends.

The numbers an adapter returns are floats: they cross the float boundary
(:mod:`~dpcompose_exact.tools.audit.boundary`) and are judged against the exact, certified
values by :mod:`~dpcompose_exact.tools.audit.compare`.
"""

from __future__ import annotations

import importlib
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from typing import Any

from ...errors import InvalidParameterError
from ...regions.protocol import LossPair, PairForm
from .boundary import FloatPair, Numbers

__all__ = [
    "ENTRY_POINT_GROUP",
    "DEFAULT_TIME_LIMIT",
    "WALL_CEILING",
    "run_with_time_limit",
    "Claim",
    "Series",
    "QUANTITIES",
    "Quantities",
    "Job",
    "TreeJob",
    "NoiseParams",
    "noise_params",
    "Adapter",
    "register",
    "unregister",
    "get",
    "registry",
    "names",
    "load_errors",
]

ENTRY_POINT_GROUP = "dpcompose_exact.accountants"
"""The ``importlib.metadata`` entry-point group third-party adapters register under."""

DEFAULT_TIME_LIMIT = 60.0
"""Seconds of CPU time one adapter may take on one case before it counts as crashed."""
WALL_CEILING = 30.0
"""A library whose thread waits instead of computing (sleeps, or works in threads of its
own) is stopped after this many times its limit of wall-clock time."""


def _thread_cpu(worker: threading.Thread) -> Callable[[], float] | None:
    """A clock of ``worker``'s CPU seconds (None where the platform has no thread clocks)."""
    try:
        clock = time.pthread_getcpuclockid(worker.ident)  # type: ignore[arg-type]
        time.clock_gettime(clock)
    except (AttributeError, OSError, TypeError):
        return None
    return lambda: time.clock_gettime(clock)


class _Worker:
    """One daemon thread that runs the libraries' calls, one at a time.

    One thread for every call, not one per call: the C allocator gives each new thread an
    arena of its own, and a fresh thread per adapter raised the quick suite's peak memory
    by about 180 MB.  A worker whose call passed its limit is abandoned (Python cannot stop
    it) and the next call gets a new one.
    """

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="audit library", daemon=True)
        self.thread.start()
        self.clock = _thread_cpu(self.thread)

    def _loop(self) -> None:
        while True:
            fn, box, done = self.jobs.get()
            try:
                box["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                box["error"] = exc
            done.set()


_WORKER: list[_Worker] = []  # the current worker (none yet, or abandoned)


def run_with_time_limit(fn: Callable[[], Any], seconds: float, what: str) -> Any:
    """``fn()`` in the audit's worker thread; its result, or ``TimeoutError`` past the limit.

    The limit is ``seconds`` of the worker's CPU time (wall-clock time where the platform
    has no per-thread clock), so that a loaded machine does not turn a slow answer into a
    crash; a call that has used less CPU but waited :data:`WALL_CEILING` times ``seconds``
    is stopped too.  An exception of ``fn`` is raised again here.  Python cannot stop a
    thread: one past its limit finishes or dies with the process (a daemon thread), and
    the next call gets a new worker.  Called from the worker itself (a limited call
    inside another), ``fn`` runs there under the outer limit.
    """
    if _WORKER and threading.current_thread() is _WORKER[0].thread:
        return fn()
    if not _WORKER:
        _WORKER.append(_Worker())
    worker = _WORKER[0]
    box: dict[str, Any] = {}
    done = threading.Event()
    start = time.monotonic()
    cpu0 = worker.clock() if worker.clock is not None else 0.0
    worker.jobs.put((fn, box, done))
    ceiling = seconds * (WALL_CEILING if worker.clock is not None else 1.0)
    while not done.is_set():
        waited = time.monotonic() - start
        used = worker.clock() - cpu0 if worker.clock is not None else waited
        if used >= seconds or waited >= ceiling:
            _WORKER.clear()  # abandoned: it finishes or dies with the process
            cpu = worker.clock is not None and used >= seconds
            kind, spent = ("of CPU time", used) if cpu else ("of wall-clock time", waited)
            raise TimeoutError(
                f"{what} did not answer within {seconds:g} s {kind} ({spent:.3g} s spent; "
                "time limit)"
            )
        done.wait(min(0.25, max(0.01, (seconds - used) / 2)))
    if "error" in box:
        raise box["error"]
    return box["value"]


_BUILTIN_MODULES = ("pld_adapter", "rdp_adapter", "prv_adapter")
_PEERS_PACKAGE = "peers"  # the adapters of other projects' accountants (peers/__init__.py)


class Claim(str, Enum):
    """What a library presents a reported number as."""

    UPPER = "upper bound"  #: at least the true value; the audit checks it
    LOWER = "lower bound"  #: at most the true value
    ESTIMATE = "estimate"  #: no direction promised

    def __str__(self) -> str:
        return self.value


QUANTITIES = ("delta", "epsilon", "renyi", "gdp_mu", "beta")
"""The quantities an adapter can report: delta(eps), eps(delta), the Renyi divergence of
order ``alpha`` (an RDP curve), the GDP ``mu`` and the trade-off ``beta(alpha)``."""


@dataclass(frozen=True)
class Series:
    """One series of numbers an adapter reports.

    Attributes:
        name: the series name in the rows (``prv_upper``).
        delta: what the library claims delta(eps) of this series is; None: the series
            reports no delta(eps) (its numbers are ``nan`` and give no rows).
        epsilon: what the library claims eps(delta) of this series is; None: no eps(delta).
        label: a readable origin for messages (``dp_accounting PLDAccountant``).
        renyi: what the library claims its Renyi divergences (RDP curve) are; None: the
            series reports none.
        gdp_mu: what the library claims its GDP ``mu`` is (an upper bound when it says the
            composition is ``mu``-GDP); None: none reported.
        beta: what the library claims its trade-off values ``beta(alpha)`` are (a *lower*
            bound when it says the composition is ``f``-DP); None: none reported.
        quote: the library's own words the claims rest on (a docstring, quoted; shown in
            the maintainer reports of ``--format markdown``); empty: none recorded.

    The last three are reported by :meth:`Adapter.run_quantities`.  One convention for
    all five quantities: a :class:`Claim` when the series reports the quantity, None when
    it does not (no rows, not even ``unsupported`` ones).
    """

    name: str
    delta: Claim | None
    epsilon: Claim | None
    label: str = ""
    renyi: Claim | None = None
    gdp_mu: Claim | None = None
    beta: Claim | None = None
    quote: str = ""

    def claim(self, quantity: str) -> Claim | None:
        """The claim on ``quantity`` (one of :data:`QUANTITIES`; None: not reported)."""
        if quantity == "delta":
            return self.delta
        if quantity == "epsilon":
            return self.epsilon
        return getattr(self, quantity, None)

    def quantities(self) -> tuple[str, ...]:
        """Every quantity of :data:`QUANTITIES` this series reports (its claim is not None)."""
        return tuple(q for q in QUANTITIES if self.claim(q) is not None)

    def extra_quantities(self) -> tuple[str, ...]:
        """The quantities besides delta and eps this series reports."""
        return tuple(q for q in QUANTITIES[2:] if getattr(self, q) is not None)


Quantities = dict[str, dict[str, list[tuple[float, float]]]]
"""series -> quantity (``renyi``, ``gdp_mu``, ``beta``) -> ``[(at, value), ...]``: ``at``
is the order alpha (``renyi``), the type I error alpha (``beta``), ``nan`` (``gdp_mu``)."""


@dataclass
class Job:
    """What an adapter runs on: mechanisms with counts, the queries and the options.

    Attributes:
        items: ``(mechanism, count)`` pairs; every mechanism answers ``loss_pair()``.
        eps: the eps values (doubles) where delta(eps) is asked.
        deltas: the delta values (doubles) where eps(delta) is asked.
        options: library settings by name (``pld_grid``, ``prv_eps_error``,
            ``prv_delta_error``, and any an adapter of its own reads).
        orders: the Renyi orders (doubles) where an RDP curve is asked; an adapter whose
            library has fixed orders reports at its own.
        alphas: the type I errors (doubles) where ``beta(alpha)`` is asked.

    The loss pairs and their float roundings are computed once and shared by the
    adapters of one audit.
    """

    items: Sequence[tuple[Any, int]]
    eps: list[float]
    deltas: list[float]
    options: Mapping[str, Any] = field(default_factory=dict)
    orders: list[float] = field(default_factory=list)
    alphas: list[float] = field(default_factory=list)
    _loss: list[LossPair] | None = field(default=None, repr=False)
    _floats: list[FloatPair | None] | None = field(default=None, repr=False)

    def loss_pairs(self) -> list[LossPair]:
        """The items' loss pairs (``mechanism.loss_pair()``), in order."""
        if self._loss is None:
            self._loss = [m.loss_pair() for m, _ in self.items]
        return self._loss

    def float_pairs(self) -> list[FloatPair | None]:
        """Per item, its exact dominating pair rounded to doubles (None: not finite).

        Asymmetric finite pairs (directed pairs) keep both directions' leaks.
        """
        if self._floats is None:
            from .boundary import float_pair

            self._floats = [
                None
                if (both := p.directions()) is None
                else float_pair(both[0], None if p.symmetric else both[1])
                for p in self.loss_pairs()
            ]
        return self._floats

    def all_finite(self) -> bool:
        """Every item has a finite dominating pair."""
        return all(p.form is PairForm.FINITE for p in self.loss_pairs())

    def pairs(self) -> list[tuple[FloatPair, int]]:
        """The exact dominating pairs of finite items rounded to doubles, with counts.

        Raises:
            InvalidParameterError: an item whose loss pair is not finite.
        """
        out = []
        for fp, (m, c) in zip(self.float_pairs(), self.items):
            if fp is None:
                raise InvalidParameterError(f"{m.describe()} has no finite dominating pair")
            out.append((fp, c))
        return out


@dataclass
class TreeJob:
    """What an adapter runs on for the tree audit: a ``DpEvent`` tree and the queries.

    Attributes:
        event: the dp_accounting ``DpEvent`` tree.
        relation: the neighbouring relation's name (``REPLACE_ONE``).
        eps: the eps values (doubles) where delta(eps) is asked.
        deltas: the delta values (doubles) where eps(delta) is asked.
        options: library settings by name (as :attr:`Job.options`).
    """

    event: Any
    relation: str
    eps: list[float]
    deltas: list[float]
    options: Mapping[str, Any] = field(default_factory=dict)

    def items(self) -> list[tuple[Any, int]]:
        """The tree's mechanisms with counts (read by the one reader of events)."""
        from ...integrations.events import event_kinds

        return list(event_kinds(self.event, self.relation).items)


@dataclass(frozen=True)
class NoiseParams:
    """Additive noise as the libraries take it; exact values, rounded once by ``float()``.

    Attributes:
        kind: ``gaussian`` or ``laplace``.
        scale: sigma or b.
        sensitivity: the shift of the pair.
        rate: the Poisson subsampling rate (1: none).
    """

    kind: str
    scale: Fraction
    sensitivity: Fraction
    rate: Fraction

    @property
    def multiplier(self) -> float:
        """``scale / sensitivity`` (the libraries' noise multiplier) as the nearest double."""
        return float(self.scale / self.sensitivity)


def noise_params(mechanism: Any, pair: LossPair) -> NoiseParams | None:
    """The noise of a ``gaussian`` or ``noise`` mechanism (None for any other)."""
    if pair.form not in (PairForm.GAUSSIAN, PairForm.NOISE):
        return None
    desc = mechanism.to_dict()
    if desc.get("noise") not in ("gaussian", "laplace"):
        return None
    return NoiseParams(
        desc["noise"],
        Fraction(desc["scale"]),
        Fraction(desc["sensitivity"]),
        Fraction(desc.get("subsample", "1")),
    )


class Adapter:
    """One numeric accountant: override the class attributes and :meth:`run`.

    Attributes:
        name: the accountant's name (``--accountant NAME``).
        library: the module imported to run it (``dp_accounting``).
        distribution: its pip distribution (``dp-accounting``).
        series: the :class:`Series` it reports, in order.
        forms: the loss-pair forms it accepts (``finite``, ``gaussian``, ``noise``, ...).
        tree_name: its name in the tree audit, None when it cannot read ``DpEvent`` trees.
        install_hint: how to install the library (default ``pip install DISTRIBUTION``).
        peer: another project's accountant (:mod:`~dpcompose_exact.tools.audit.peers`):
            the audit of mechanism kinds runs it only when named; the suite runs it.
    """

    name: str = ""
    library: str = ""
    distribution: str = ""
    series: tuple[Series, ...] = ()
    forms: frozenset[str] = frozenset({"finite"})
    tree_name: str | None = None
    install_hint: str = ""
    peer: bool = False
    time_limit: float = DEFAULT_TIME_LIMIT  #: CPU seconds per case (option ``time_limit``)

    def load(self) -> Any:
        """Import the library (raises ``ImportError`` when it is missing)."""
        return importlib.import_module(self.library)

    def version(self) -> str:
        """The installed version of :attr:`distribution` (``unknown`` when not found)."""
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version(self.distribution)
        except PackageNotFoundError:
            return "unknown"

    def unavailable(self) -> str | None:
        """None when the library imports, else why not (one line, with how to install)."""
        try:
            self.load()
        except ImportError as exc:
            hint = self.install_hint or f"pip install {self.distribution}"
            return f"{self.distribution} is not installed ({exc}); install it with {hint}"
        return None

    def accepts(self, mechanism: Any, pair: LossPair) -> str | None:
        """None when :meth:`run` takes ``mechanism`` (whose loss pair is ``pair``), else why not.

        The default accepts the loss-pair forms in :attr:`forms`; override it to add a
        predicate (a parameter range, a subsampling rate the library supports).
        """
        if pair.form not in {PairForm(f) for f in self.forms}:
            return f"{self.name} does not take {pair.form} mechanisms ({mechanism.describe()})"
        return None

    def settings(self, options: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """The settings it ran with, as ``(name, value)`` for the report."""
        return []

    def limit(self, options: Mapping[str, Any]) -> float:
        """The time limit on one case, in CPU seconds.

        The option ``time_limit``, else its old name ``peer_time_limit``, else
        :attr:`time_limit`.
        """
        return float(options.get("time_limit", options.get("peer_time_limit", self.time_limit)))

    def run_timed(self, job: Job) -> Numbers:
        """:meth:`run` under :meth:`limit`: what the audit and the suite call.

        Raises ``TimeoutError`` past the limit (:func:`run_with_time_limit`).
        """
        return run_with_time_limit(lambda: self.run(job), self.limit(job.options), self.name)

    def quantities_timed(self, job: Job) -> Quantities:
        """:meth:`run_quantities` under :meth:`limit`."""
        return run_with_time_limit(
            lambda: self.run_quantities(job), self.limit(job.options), self.name
        )

    def run(self, job: Job) -> Numbers:
        """Run the library: per series name, ``(deltas, epsilons, notes)``.

        ``deltas[i]`` answers ``job.eps[i]``, ``epsilons[j]`` answers ``job.deltas[j]``;
        a query the library fails on is ``nan`` with a note.
        """
        raise NotImplementedError

    def run_quantities(self, job: Job) -> Quantities:
        """The other quantities the series report (:meth:`Series.extra_quantities`).

        Returns ``{series: {quantity: [(at, value), ...]}}``: the Renyi divergence of the
        composition at each order (``job.orders``, or the library's own), the GDP ``mu``
        (one pair, ``at`` = ``nan``), ``beta`` at each of ``job.alphas``.  The default
        reports nothing; a series or quantity left out gives no rows.
        """
        return {}

    def repro_source(self, job: Job, series: str, quantity: str, at: str) -> str | None:
        """Python source that recomputes one reported number with the library alone.

        The source imports only the library (and the standard library) and binds the
        name ``reported`` to the number the series reports for ``quantity`` at ``at`` (the
        query as an exact decimal; the library gets ``float(at)``).  The audit's
        ``--repro`` wraps it in a script that prints it next to the certified reference.
        The default, None, says the adapter cannot write one (the script then lists the
        inputs only).
        """
        return None

    def run_tree(
        self, job: TreeJob
    ) -> tuple[dict[str, tuple[list[float], list[float]]], str | None]:
        """Run the library on a ``DpEvent`` tree: ``({series: (deltas, epsilons)}, None)``.

        Returns ``({}, reason)`` when the library does not support the tree.
        """
        raise NotImplementedError(f"{self.name} does not read DpEvent trees")


_REGISTRY: dict[str, Adapter] = {}
_LOAD_ERRORS: dict[str, str] = {}
_LOADED = {"builtins": False, "entry_points": False}


def register(adapter: Adapter, replace: bool = False) -> Adapter:
    """Add ``adapter`` to the registry (under ``adapter.name``) and return it.

    Raises:
        InvalidParameterError: not an :class:`Adapter`, no name or series, or the name
            (or one of its series) is taken and ``replace`` is false.
    """
    if not isinstance(adapter, Adapter):
        raise InvalidParameterError(f"{adapter!r} is not an Adapter")
    if not adapter.name or not adapter.series:
        raise InvalidParameterError(f"adapter {adapter!r} needs a name and at least one series")
    if adapter.name in _REGISTRY and not replace:
        raise InvalidParameterError(f"an accountant named {adapter.name!r} is registered already")
    taken = {s.name: a.name for a in _REGISTRY.values() if a.name != adapter.name for s in a.series}
    clash = [s.name for s in adapter.series if s.name in taken]
    if clash:
        raise InvalidParameterError(
            f"series {', '.join(clash)} of {adapter.name!r} belong to {taken[clash[0]]!r}"
        )
    _REGISTRY[adapter.name] = adapter
    return adapter


def unregister(name: str) -> None:
    """Remove the adapter ``name`` (no error when absent)."""
    _REGISTRY.pop(name, None)


def _load_builtins() -> None:
    if not _LOADED["builtins"]:
        _LOADED["builtins"] = True
        for module in _BUILTIN_MODULES:
            importlib.import_module(f"{__package__}.{module}")
        peers = importlib.import_module(f"{__package__}.{_PEERS_PACKAGE}")
        for module in peers.PEER_MODULES:
            importlib.import_module(f"{__package__}.{_PEERS_PACKAGE}.{module}")


def _adapters_of(obj: Any) -> list[Adapter]:
    if isinstance(obj, type) and issubclass(obj, Adapter):
        obj = obj()
    elif callable(obj) and not isinstance(obj, Adapter):
        obj = obj()
    if isinstance(obj, Adapter):
        return [obj]
    if isinstance(obj, Iterable) and not isinstance(obj, (str, bytes)):
        out = list(obj)
        if out and all(isinstance(a, Adapter) for a in out):
            return out
    raise TypeError(f"expected an Adapter, an Adapter class or a list of adapters, got {obj!r}")


def load_entry_points(force: bool = False) -> None:
    """Register the adapters of the entry-point group :data:`ENTRY_POINT_GROUP` (once).

    An entry point that fails to load (import error, exception, not an adapter, a name
    clash) is recorded in :func:`load_errors` under its name and skipped.
    """
    if _LOADED["entry_points"] and not force:
        return
    _LOADED["entry_points"] = True
    from ...plugins import load_entry_points as load_group

    def accept(name: str, obj: Any) -> None:
        for adapter in _adapters_of(obj):
            if _REGISTRY.get(adapter.name) is not adapter:
                register(adapter)

    def message(ep: Any, exc: BaseException) -> str:  # a broken plugin is a reported row
        return f"the entry point {ep.name} = {ep.value} failed to load: {type(exc).__name__}: {exc}"

    load_group(ENTRY_POINT_GROUP, accept, _LOAD_ERRORS, message=message)


def registry() -> dict[str, Adapter]:
    """The registered adapters by name: the built-in ones first, then the entry points'."""
    _load_builtins()
    load_entry_points()
    return dict(_REGISTRY)


def names() -> tuple[str, ...]:
    """The names of the registered adapters, in registration order."""
    return tuple(registry())


def get(name: str) -> Adapter:
    """The adapter registered as ``name``.

    Raises:
        InvalidParameterError: no such adapter (the message lists the known ones).
    """
    reg = registry()
    if name not in reg:
        raise InvalidParameterError(f"unknown accountant {name!r}; choose from {', '.join(reg)}")
    return reg[name]


def load_errors() -> dict[str, str]:
    """Entry points that failed to load: ``{entry point name: reason}``."""
    load_entry_points()
    return dict(_LOAD_ERRORS)


def builtin_registry() -> dict[str, Adapter]:
    """The built-in adapters only (what :data:`~dpcompose_exact.tools.audit.ACCOUNTANTS` names)."""
    _load_builtins()
    peers = f"{__package__}.{_PEERS_PACKAGE}"
    return {
        n: a
        for n, a in _REGISTRY.items()
        if type(a).__module__.startswith(__package__) and not type(a).__module__.startswith(peers)
    }
