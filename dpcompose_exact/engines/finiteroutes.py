"""Which route composes finite pairs: exact, certified or certified bounds, and why.

Three routes give answers of different kinds at very different costs:

* ``exact`` (generating functions, :func:`~dpcompose_exact.engines.genfunc.compose_plds`): closed
  forms of every delta; memory and time grow with the size of the k-fold polynomial
  (paper case, k = 500: about 2 GB and 18 s);
* ``certified`` (:func:`~dpcompose_exact.engines.certified.compose_certified`): the exact structure
  with Arb-ball deltas, every printed digit certified; one generator only; about
  ``W log W`` for ``W`` loss values (paper case, k = 500: 0.2 s);
* ``bounds`` (:mod:`~dpcompose_exact.engines.bounds`): certified lower and upper values for any
  structure (several generators, any k); an interval, not every digit.

:func:`choose_route` picks by what was asked: when closed forms are wanted, the exact route
whenever it fits the memory limit; when only decimals are wanted, the cheapest route that
certifies every printed digit (certified when there is one generator, unless the exact
route is estimated cheaper); bounds when neither exact nor certified can run.  The one
router of any mechanisms, :func:`~dpcompose_exact.engines.routes.compose_mechanisms`, sends
finite symmetric pairs here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Any

from ..errors import InvalidParameterError, ResourceLimitError
from ..regions.pld import PLD
from .bounds import Bounded
from .certified import CERTIFIED_TERM_LIMIT, compose_certified
from .genfunc import (
    DEFAULT_MEMORY_LIMIT,
    MAX_DENSE_DEGREE,
    common_domain,
    compose_plds,
    dense_degree,
    exact_refusal,
    too_big_message,
)
from .memory import estimate_rss, exact_seconds_estimate
from .results import CertifiedResult, ExactResult, PrivacyResult

__all__ = [
    "Route",
    "ComposeOptions",
    "Problem",
    "ROUTES",
    "Method",
    "METHODS",
    "choose_route",
    "compose_routed",
    "certified_width",
    "exact_seconds",
    "certified_seconds",
]

#: the routes that compute a composition (``auto`` chooses among them)
ROUTES = ("exact", "certified", "bounds")
#: decimals only with several generators: above this estimated exact time, the log-split
#: sum is tried first (it certifies every digit when the structure allows it)
SPLIT_AFTER_SECONDS = 1.0


class Method(str, Enum):
    """How a composition is computed: the one vocabulary of the whole package.

    The API, the CLI's ``--method``, the JSON ``method`` key, sweeps and audits all use it
    (strings are accepted wherever a Method is).

    ``auto``, ``exact``, ``certified`` and ``bounds`` are routes (:func:`choose_route`
    picks one for ``auto``); ``theorem1``, ``theorem2`` and ``theorem3`` are the paper's
    closed forms, exact and equal to the ``exact`` route's region.
    """

    AUTO = "auto"  #: the cheapest route that gives what was asked (:func:`choose_route`)
    EXACT = "exact"  #: generating functions (docs/theory.md, section 3); refused when too big
    CERTIFIED = "certified"  #: exact structure, Arb-ball masses (one generator, large k)
    BOUNDS = "bounds"  #: certified two-sided bounds of delta(eps) and eps(delta)
    THEOREM1 = "theorem1"  #: Theorem 1's closed form (two pure-DP kinds)
    THEOREM2 = "theorem2"  #: Theorem 2's mixture form (one kind, two constraints)
    THEOREM3 = "theorem3"  #: Theorem 3's lattice closed form (one kind, two constraints)

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:  # prints as the string it equals ('exact')
        return repr(self.value)

    @property
    def is_route(self) -> bool:
        """True for the generic routes (auto, exact, certified, bounds)."""
        return self in ROUTE_METHODS

    @classmethod
    def parse(cls, value: Method | str) -> Method:
        """A Method from itself or its string (``"pld"`` is an alias of ``"exact"``).

        >>> Method.parse("PLD") is Method.EXACT, Method.parse(Method.BOUNDS)
        (True, 'bounds')
        """
        if isinstance(value, cls):
            return value
        text = str(value).strip().lower()
        try:
            return cls(ALIASES.get(text, text))
        except ValueError:
            raise InvalidParameterError(
                f"unknown method {value!r}; choose one of {', '.join(METHODS)}"
            ) from None


#: the accepted spellings besides the values (``pld`` is the exact route's old name)
ALIASES = {"pld": "exact"}
METHODS = tuple(m.value for m in Method)
ROUTE_METHODS = (Method.AUTO, Method.EXACT, Method.CERTIFIED, Method.BOUNDS)

# Time models (seconds; fitted on the 2-core machine, paper case and mixed lists; they only
# rank the routes, the results do not depend on them).
_CERT_DIRECT = 6.0e-8  # times W^2 (one Arb power; up to 4001 loss values)
_CERT_TILTED = 2.0e-6  # times W log2 W (tilted windows)
_CERT_FIXED = 0.02


@dataclass(frozen=True)
class Route:
    """The route taken (a :class:`Method`) and one sentence saying why."""

    method: Method
    why: str = "asked for"


@dataclass(frozen=True)
class ComposeOptions:
    """How a composition is to be computed: one value, passed through the router.

    Built once by the front door (``dx.compose``'s keywords) and read by
    :func:`compose_mechanisms`, :func:`compose_routed` and the engines they call.

    Attributes:
        method: a :class:`Method` (or its name): ``auto`` chooses among the routes.
        closed_forms: whether the exact closed forms will be printed (False: certified
            decimals only, the cheapest route that certifies every digit); ``"streamed"``:
            written one row at a time (their memory is one row's).
        digits: significant digits the certified route guarantees.
        memory_limit: bytes the exact route may use (None: no limit).
        progress: a callback ``progress(done, total)`` of the certified route.
        allow_bounds: whether certified two-sided bounds may answer when nothing else fits.
        width: relative width asked of such bounds (None: their default).
        grid: the loss-grid width of noise compositions (None: each grid's default).
    """

    method: Method | str = Method.AUTO
    closed_forms: bool | str = True
    digits: int = 30
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT
    progress: Any = None
    allow_bounds: bool = False
    width: Any = None
    grid: Fraction | None = None


class Problem:
    """A composition problem, normalised once, with its sizes and estimates computed once.

    It holds the kinds in one common domain, and what route choice and the engines need
    to know of them.  Built by :meth:`of` from ``[(dominating pair, count), ...]``:
    counts of 0 are dropped and the pairs are re-expressed in the join of their domains
    here and nowhere else (the engines' own
    :func:`~dpcompose_exact.engines.genfunc.common_domain` then finds one domain and returns at
    once).
    """

    __slots__ = ("kinds", "_cache")

    def __init__(self, kinds: Sequence[tuple[PLD, int]]) -> None:
        self.kinds: tuple[tuple[PLD, int], ...] = tuple(kinds)
        self._cache: dict[Any, Any] = {}

    @classmethod
    def of(cls, plds: Problem | Sequence[tuple[PLD, int]]) -> Problem:
        """The problem of ``plds`` (itself when already a Problem)."""
        if isinstance(plds, Problem):
            return plds
        if not plds:
            raise InvalidParameterError("need at least one mechanism")
        kept = [(p, c) for p, c in plds if c]
        if not kept:
            raise InvalidParameterError("nothing to compose: every count is 0")
        return cls(common_domain(kept))

    def _once(self, key: Any, compute: Any) -> Any:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    @property
    def generators(self) -> int:
        """Number of generators of the common domain (1: the certified route can run)."""
        return self.kinds[0][0].domain.dim

    def rss(self, closed_forms: bool | str) -> int:
        """Estimated peak memory of the exact route (:func:`.memory.estimate_rss`)."""
        return self._once(("rss", closed_forms), lambda: estimate_rss(self.kinds, closed_forms))

    def need(self, closed_forms: bool | str, limit: int | None) -> int:
        """The estimate a run is held to: :meth:`rss`, forms held unless that is over ``limit``.

        Closed forms written row by row (``"streamed"``) are estimated as held when that
        fits (the figure, and the route, the same as every output of the same composition
        gets), else as streamed (:func:`.memory.estimate_rss`), which is lower.
        """
        if closed_forms == "streamed":
            held = self.rss(True)
            if limit is None or held <= limit:
                return held
        return self.rss(closed_forms)

    @property
    def certified_width(self) -> int | None:
        """Loss values of the certified route's result, or None with several generators."""

        def width() -> int | None:
            if self.generators != 1:
                return None
            kinds = self.kinds
            half = sum(c * max(abs(loss[0]) for loss, _ in p.masses) for p, c in kinds if p.masses)
            return 2 * half + 1

        return self._once("width", width)

    @property
    def exact_seconds(self) -> float:
        """Estimated time of the exact route (a ranking heuristic)."""
        return self._once("seconds", lambda: exact_seconds_estimate(self.kinds))


def certified_width(plds: Problem | Sequence[tuple[PLD, int]]) -> int | None:
    """Loss values of the certified route's result, or None with several generators."""
    return Problem.of(plds).certified_width


def exact_seconds(plds: Problem | Sequence[tuple[PLD, int]]) -> float:
    """Estimated time of the exact route (a ranking heuristic)."""
    return Problem.of(plds).exact_seconds


def certified_seconds(width: int, digits: int = 30) -> float:
    """Estimated time of the certified route for ``width`` loss values (a heuristic)."""
    scale = max(1.0, digits / 30)
    if width <= 4001:
        return _CERT_FIXED + _CERT_DIRECT * width * width * scale
    return _CERT_FIXED + _CERT_TILTED * width * max(width.bit_length(), 1) * scale


def choose_route(
    plds: Problem | Sequence[tuple[PLD, int]],
    want_closed_forms: bool | str,
    digits: int = 30,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
) -> tuple[str, str]:
    """``(route, why)``: the route to take and one sentence saying why.

    Args:
        plds: ``[(dominating pair, count), ...]``.
        want_closed_forms: True when closed forms will be printed or returned; False
            when only certified decimals are needed (``--decimals-only``, ``delta``,
            ``epsilon``, audits, plots); ``"streamed"``: closed forms written one row at a
            time (:func:`~.memory.estimate_rss`).
        digits: the significant digits to certify.
        memory_limit: bytes the exact route may use (None: no limit).
    """
    problem = Problem.of(plds)
    need = problem.need(want_closed_forms, memory_limit)
    fits = memory_limit is None or need <= memory_limit
    width = problem.certified_width
    cert_ok = width is not None and width <= CERTIFIED_TERM_LIMIT
    mib = f"{need // 2**20} MiB"
    if want_closed_forms and fits:
        return "exact", f"closed forms asked for, and the exact result fits ({mib} estimated)"
    if not fits:
        over = (
            f"the exact result needs about {mib}, over the memory limit of "
            f"{(memory_limit or 0) // 2**20} MiB"
        )
        if cert_ok:
            return "certified", over + "; certified digits instead"
        if width is None:
            return "bounds", over + ", and several generators rule out the certified route"
        return "bounds", (
            over + f", and the certified route's {width} loss values are over its limit "
            f"of {CERTIFIED_TERM_LIMIT}"
        )
    # decimals only, the exact route fits
    if not cert_ok:
        return "exact", f"the exact route fits ({mib} estimated) and certifies every digit"
    t_exact = problem.exact_seconds
    t_cert = certified_seconds(width or 0, digits)
    if t_exact < t_cert:
        return "exact", (
            f"decimals only; the exact route is estimated cheaper ({t_exact:.2g} s against "
            f"{t_cert:.2g} s certified)"
        )
    return "certified", (
        f"decimals only; the certified route gives every printed digit faster (estimated "
        f"{t_cert:.2g} s against {t_exact:.2g} s exact)"
    )


def compose_routed(
    plds: Sequence[tuple[PLD, int]], options: ComposeOptions = ComposeOptions()
) -> tuple[PrivacyResult, Route]:
    """Compose by the route ``options.method`` names (``auto``: :func:`choose_route`).

    Returns:
        ``(result, route)``: a :class:`~dpcompose_exact.engines.results.PrivacyResult`
        (:class:`~dpcompose_exact.engines.results.ExactResult`,
        :class:`~dpcompose_exact.engines.results.CertifiedResult`, or a
        :class:`~dpcompose_exact.engines.bounds.Bounded` only with ``allow_bounds``) and the
        :class:`Route` taken, with its ``why``.

    Raises:
        ResourceLimitError: the exact route does not fit ``memory_limit`` (mode ``exact``),
            or only bounds are possible and ``allow_bounds`` is False.
    """
    method, closed_forms, digits = options.method, options.closed_forms, options.digits
    memory_limit, progress, width = options.memory_limit, options.progress, options.width
    allow_bounds = options.allow_bounds
    mode = Method.parse(method)
    if not mode.is_route:
        raise InvalidParameterError(
            f"method {mode.value} is one of the paper's closed forms, not a route; "
            f"choose one of {', '.join(m.value for m in ROUTE_METHODS)}"
        )
    if not plds:
        raise InvalidParameterError("need at least one mechanism")
    if not any(c for _, c in plds):
        raise InvalidParameterError("nothing to compose: every count is 0")
    plds = [(p, c) for p, c in plds if c]
    if mode is Method.CERTIFIED:  # the certified route converts (or stays sparse) by itself
        region = compose_certified(plds, digits=digits, progress=progress)
        return CertifiedResult(region), Route(Method.CERTIFIED)
    # the degree check needs no conversion; a conversion to a tiny common generator is
    # itself a large allocation, so it comes first, and the problem is normalised after it
    holder: list[Problem] = []

    def rss() -> int:
        holder.append(Problem.of(plds))
        return holder[0].need(closed_forms, memory_limit)

    refusal = exact_refusal(plds, memory_limit, closed_forms, rss)
    if mode is Method.EXACT:
        if refusal is not None:
            raise ResourceLimitError(refusal + " or the certified mode (--certified)")
        return ExactResult(compose_plds(plds, memory_limit=None)), Route(Method.EXACT)
    if mode is Method.AUTO and dense_degree(plds) > MAX_DENSE_DEGREE:
        try:  # a tiny generator next to large losses: the sparse certified route
            region = compose_certified(plds, digits=digits, progress=progress)
            why = (refusal or "the exact route is too large").split(";")[0]
            return CertifiedResult(region), Route(
                Method.CERTIFIED, why + "; certified digits instead"
            )
        except InvalidParameterError:
            if not allow_bounds:
                raise ResourceLimitError(refusal or "the exact route is too large") from None
            # the exact route is refused by its degree alone: no memory estimate (which
            # walks every coefficient slot) is needed to take the bounds
            why = (refusal or "the exact route is too large").split(";")[0]
            problem = Problem.of(plds)
            return Bounded(problem.kinds, width), Route(
                Method.BOUNDS, why + ", and several generators rule out the certified route"
            )
    problem = holder[0] if holder else Problem.of(plds)  # the one normalisation
    kinds = problem.kinds
    if mode is Method.BOUNDS:
        return Bounded(kinds, width), Route(Method.BOUNDS)
    route, why = choose_route(problem, closed_forms, digits, memory_limit)
    if route == "exact" and allow_bounds and not closed_forms and problem.certified_width is None:
        # several generators, decimals only: the log-split sum may certify every digit
        # far faster than the exact route
        t_exact = problem.exact_seconds
        if t_exact > SPLIT_AFTER_SECONDS:
            asked = Fraction(1, 10 ** (digits + 2))
            bounded = Bounded(kinds, min(asked, Fraction(width)) if width else asked)
            if bounded.split_ready():
                return bounded, Route(
                    Method.BOUNDS,
                    f"decimals only; the log-split sum certifies every digit (the exact "
                    f"route is estimated at {t_exact:.2g} s)",
                )
    if route == "exact":
        return ExactResult(compose_plds(kinds, memory_limit=None)), Route(Method.EXACT, why)
    if route == "certified":
        region = compose_certified(kinds, digits=digits, progress=progress)
        return CertifiedResult(region), Route(Method.CERTIFIED, why)
    if not allow_bounds and problem.certified_width is not None:
        compose_certified(kinds, digits=digits)  # raises its own over-the-limit error
    if not allow_bounds:
        raise ResourceLimitError(
            too_big_message(problem.need(closed_forms, memory_limit), memory_limit or 0)
            + "; certified two-sided bounds are available for delta and epsilon "
            "(dpcompose delta/epsilon, or compose(..., method='bounds'))"
        )
    return Bounded(kinds, width), Route(Method.BOUNDS, why)
