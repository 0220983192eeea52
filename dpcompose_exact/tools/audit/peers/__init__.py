"""Adapters for the accountants of other projects (the ``audit-peers`` extra).

Each module here is one adapter file on the registry of
:mod:`~dpcompose_exact.tools.audit.adapters`: OpenDP's privacy maps
(:mod:`.opendp_adapter`), dp_accounting driven through its own ``DpEvent`` trees
(:mod:`.dp_accounting_events_adapter`), opake-accounting (:mod:`.opake_adapter`), autodp's
RDP, KOV and characteristic-function accountants (:mod:`.autodp_adapter`), gdpnum
(:mod:`.gdpnum_adapter`), fourier-accountant (:mod:`.fourier_adapter`), dp-accelerator
(:mod:`.dp_accelerator_adapter`), Opacus's RDP, PRV and GDP accountants
(:mod:`.opacus_adapter`), pld-accounting (:mod:`.pld_accounting_adapter`), random-allocation
(:mod:`.random_allocation_adapter`), riskcal (:mod:`.riskcal_adapter`), pld-subsampling
(:mod:`.pld_subsampling_adapter`) and prv_accountant through its own mechanism classes
(:mod:`.prv_mechanisms_adapter`).  They are loaded with the built-in adapters but are not
among :data:`~dpcompose_exact.tools.audit.ACCOUNTANTS` (the built-in names), and the audit
of ``--dp``/``--mech`` kinds runs them only when named (``peer = True``); the suite
(:func:`~dpcompose_exact.tools.audit.suite.audit_suite`) runs every registered adapter.

Each library is handed the mechanisms it models natively (Gaussian, Poisson-subsampled
Gaussian, Laplace, pure DP and randomized response, (eps, delta)-DP), with the parameter
conventions its documentation states; what it presents each number as (the
:class:`~dpcompose_exact.tools.audit.adapters.Claim` per quantity) is justified from its
docstrings in each adapter.  :class:`PeerAdapter` adds what an outside library needs:

* the import inside the time limit every adapter has
  (:func:`~dpcompose_exact.tools.audit.adapters.run_with_time_limit`:
  :data:`DEFAULT_TIME_LIMIT` seconds of CPU time, option ``time_limit`` or its old name
  ``peer_time_limit``): the library runs in a daemon thread; one that has not answered in
  time is reported as crashed (``TimeoutError``) and the audit goes on (Python cannot stop
  the thread: it finishes or dies with the process);
* per query failures become ``nan`` with a note, like the built-in adapters (all queries
  failing: the library crashed);
* the other quantities a library reports (an RDP curve, a GDP mu, beta(alpha);
  :meth:`~dpcompose_exact.tools.audit.adapters.Adapter.run_quantities`) under the same limit;
* :meth:`~dpcompose_exact.tools.audit.adapters.Adapter.repro_source`: the library call of
  one number as a standalone script (:meth:`PeerAdapter.repro_call`);
* :attr:`PeerAdapter.quick`: False leaves a costly library out of the quick suite unless
  named (``accountants=``, ``--accountant``); the standard suite runs it.

The library's numbers are passed on as they are: a negative value, a delta above 1 or a
curve that rises is judged by the suite (``invalid value``,
:func:`~dpcompose_exact.tools.audit.suite.non_monotone`), with the number in its row.

The library's numbers are floats; they are judged against the certified references by
:mod:`~dpcompose_exact.tools.audit.suite` (docs/theory.md, section 3).
"""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from ....optional import install_hint as _install_hint
from ....regions.protocol import LossPair, PairForm
from ..adapters import (
    DEFAULT_TIME_LIMIT,
    Adapter,
    Job,
    NoiseParams,
    Quantities,
    noise_params,
    run_with_time_limit,
)
from ..boundary import Numbers

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "LibraryUnsupported",
    "PeerAdapter",
    "PEER_MODULES",
    "single_constraint",
    "run_with_time_limit",
    "RDP_ORDERS",
]

RDP_ORDERS = (1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0)
"""Renyi orders where an adapter reports an RDP curve when the job names none."""

PEER_MODULES = (
    "dp_accounting_events_adapter",
    "opendp_adapter",
    "opake_adapter",
    "autodp_adapter",
    "gdpnum_adapter",
    "fourier_adapter",
    "dp_accelerator_adapter",
    "opacus_adapter",
    "pld_accounting_adapter",
    "random_allocation_adapter",
    "riskcal_adapter",
    "pld_subsampling_adapter",
    "prv_mechanisms_adapter",
)
"""The adapter modules of this package, loaded by the registry after the built-in ones."""


class LibraryUnsupported(Exception):
    """The library itself refuses the case as outside what it supports (its own words).

    Raised by an adapter's :meth:`PeerAdapter.compute` when the library's refusal is a
    documented limit, not a failure (OpenDP composes measurements of one input domain
    only); :meth:`PeerAdapter.run` turns it into ``unsupported`` rows with the message.
    """


def single_constraint(mechanism: Any, pair: LossPair) -> tuple[Fraction, Fraction] | None:
    """``(eps, delta)`` of a finite mechanism with one constraint of rational values (or None).

    A ``log(r)`` eps (randomized response) is not rational: see :func:`log_ratio`.
    """
    if pair.form is not PairForm.FINITE:
        return None
    cons = mechanism.to_dict().get("constraints")
    if not cons or len(cons) != 1:
        return None
    eps_text, delta_text = cons[0]
    try:
        return Fraction(eps_text), Fraction(delta_text)
    except ValueError:
        return None


def eps_float(mechanism: Any) -> float:
    """The first constraint's eps of a finite mechanism as the nearest double."""
    return float(mechanism.constraints[0][0].ball(64).mid())


def log_ratio(mechanism: Any) -> Fraction | None:
    """``r`` when the mechanism is one pure constraint ``eps = log(r)`` (randomized response)."""
    cons = mechanism.to_dict().get("constraints")
    if not cons or len(cons) != 1 or Fraction(cons[0][1]) != 0:
        return None
    text = str(cons[0][0]).strip()
    if text.startswith("log(") and text.endswith(")"):
        try:
            return Fraction(text[4:-1])
        except ValueError:
            return None
    return None


def pure_eps(mechanism: Any, pair: LossPair) -> float | None:
    """Eps (a double) of a finite mechanism with the one constraint ``(eps, 0)``."""
    if pair.form is not PairForm.FINITE:
        return None
    cons = mechanism.to_dict().get("constraints")
    if not cons or len(cons) != 1 or Fraction(cons[0][1]) != 0:
        return None
    return eps_float(mechanism)


class PeerAdapter(Adapter):
    """An adapter for another project's accountant: time limit, import failures as crashes.

    Subclasses set the class attributes of :class:`Adapter`, override :meth:`accepts`
    and implement :meth:`compute` (the library call, same return as :meth:`Adapter.run`),
    :meth:`compute_quantities` for the other quantities its series claim and
    :meth:`repro_call` for the ``--repro`` scripts.
    """

    peer = True
    install_hint = _install_hint("audit-peers")
    quick: bool = True  #: False: the quick suite leaves it out unless named (CPU time)

    def unavailable(self) -> str | None:
        """None when the distribution is installed (an import that fails is a crashed row)."""
        from importlib.metadata import PackageNotFoundError, version

        try:
            version(self.distribution)
        except PackageNotFoundError:
            return f"{self.distribution} is not installed; install it with {self.install_hint}"
        return None

    def compute(self, job: Job) -> Numbers:
        """Run the library (no time limit, no checks): per series ``(deltas, eps, notes)``."""
        raise NotImplementedError

    def compute_quantities(self, job: Job) -> Quantities:
        """The library's other quantities (no time limit): as :meth:`Adapter.run_quantities`."""
        return {}

    def repro_call(self, job: Job, series: str, quantity: str, at: float) -> list[str] | None:
        """Source lines of :meth:`compute` (or :meth:`compute_quantities`) for one number.

        They import only the library (numpy or mpmath where the adapter uses them too)
        and bind ``reported`` to what the series reports for ``quantity`` at ``at`` (a
        double; ``nan`` for ``gdp_mu``).  None: no script (the default).
        """
        return None

    def repro_source(self, job: Job, series: str, quantity: str, at: str) -> str | None:
        """:meth:`repro_call` for a series and quantity the adapter reports (else None)."""
        spec = next((s for s in self.series if s.name == series), None)
        if spec is None or spec.claim(quantity) is None:
            return None
        lines = self.repro_call(job, series, quantity, float(at) if at else math.nan)
        return None if lines is None else "\n".join(lines) + "\n"

    def imported(self) -> Any:
        """:meth:`load`; a library that is installed but fails to import raises ``ImportError``.

        The message names the library and the original error (the row's note:
        ``crashed: ImportError: opake.accounting failed to import: TypeError: ...``).
        """
        try:
            return self.load()
        except Exception as exc:  # noqa: BLE001 - any import failure is the library's crash
            what = f"{type(exc).__name__}: {exc}".splitlines()[0]
            raise ImportError(f"{self.library} failed to import: {what}") from exc

    def run_quantities(self, job: Job) -> Quantities:
        """:meth:`compute_quantities` under the time limit (raises as :meth:`run` does)."""
        limit = self.limit(job.options)

        def call() -> Quantities:
            self.imported()
            return self.compute_quantities(job)

        with contextlib.redirect_stdout(io.StringIO()):
            try:
                return run_with_time_limit(call, limit, self.name)
            except LibraryUnsupported:
                return {}  # the curve's rows say why (run)

    def settings(self, options: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """The time limit."""
        return [("peer_time_limit", self.limit(options))]

    def run_timed(self, job: Job) -> Numbers:
        """:meth:`run`, which applies the time limit itself (around the import too)."""
        return self.run(job)

    def quantities_timed(self, job: Job) -> Quantities:
        """:meth:`run_quantities`, which applies the time limit itself."""
        return self.run_quantities(job)

    def run(self, job: Job) -> Numbers:
        """:meth:`compute` under the time limit (the library's output silenced)."""
        limit = self.limit(job.options)

        def call() -> Numbers:
            self.imported()
            return self.compute(job)

        with contextlib.redirect_stdout(io.StringIO()):  # some libraries print progress
            try:
                return run_with_time_limit(call, limit, self.name)
            except LibraryUnsupported as exc:
                note = [f"unsupported: {exc}"]
                nan_d, nan_e = [math.nan] * len(job.eps), [math.nan] * len(job.deltas)
                return {s.name: (list(nan_d), list(nan_e), note) for s in self.series}


def noise_of(mechanism: Any, pair: LossPair) -> NoiseParams | None:
    """:func:`~dpcompose_exact.tools.audit.adapters.noise_params` (re-exported for peers)."""
    return noise_params(mechanism, pair)


def per_query(
    fn: Callable[[float], Any],
    values: list[float],
    label: str,
    notes: list[str],
    raise_all: bool = True,
) -> list[float]:
    """``[float(fn(v)) for v in values]``; a query that raises is ``nan`` with a note.

    When every query raises, the first exception is raised (the library crashed), unless
    ``raise_all`` is false: then every query keeps its own exception in its note (for a
    library whose queries fail for different reasons).
    """
    out = []
    first: Exception | None = None
    for v in values:
        try:
            out.append(float(fn(v)))
        except Exception as exc:  # noqa: BLE001 - a library failure on one query is a row
            first = first or exc
            notes.append(f"{label}={v:g}: {type(exc).__name__}: {exc}".splitlines()[0])
            out.append(math.nan)
    if raise_all and values and first is not None and all(math.isnan(x) for x in out):
        raise first
    return out
