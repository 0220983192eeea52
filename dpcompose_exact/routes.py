"""Which route computes a composition: exact, certified or certified bounds, and why.

Three routes give answers of different kinds at very different costs:

* ``exact`` (generating functions, :func:`~dpcompose_exact.genfunc.compose_plds`): closed
  forms of every delta; memory and time grow with the size of the k-fold polynomial
  (paper case, k = 500: about 2 GB and 18 s);
* ``certified`` (:func:`~dpcompose_exact.certified.compose_certified`): the exact structure
  with Arb-ball deltas, every printed digit certified; one generator only; about
  ``W log W`` for ``W`` loss values (paper case, k = 500: 0.2 s);
* ``bounds`` (:mod:`~dpcompose_exact.bounds`): certified lower and upper values for any
  structure (several generators, any k); an interval, not every digit.

:func:`choose_route` picks by what was asked: when closed forms are wanted, the exact route
whenever it fits the memory limit; when only decimals are wanted, the cheapest route that
certifies every printed digit (certified when there is one generator, unless the exact
route is estimated cheaper); bounds when neither exact nor certified can run.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from fractions import Fraction
from typing import Any

from .bounds import Bounded
from .certified import CERTIFIED_TERM_LIMIT, compose_certified
from .errors import InvalidParameterError, ResourceLimitError
from .genfunc import (
    DEFAULT_MEMORY_LIMIT,
    MAX_DENSE_DEGREE,
    common_domain,
    compose_plds,
    dense_degree,
    exact_refusal,
    too_big_message,
)
from .memory import estimate_rss, problem_sizes
from .pld import PLD

__all__ = [
    "Route",
    "ROUTES",
    "Mode",
    "MODES",
    "choose_route",
    "compose_routed",
    "certified_width",
    "exact_seconds",
    "certified_seconds",
]

ROUTES = ("exact", "certified", "bounds")
#: decimals only with several generators: above this estimated exact time, the log-split
#: sum is tried first (it certifies every digit when the structure allows it)
SPLIT_AFTER_SECONDS = 1.0


class Mode(str, Enum):
    """How to choose the route (the strings are accepted wherever a Mode is)."""

    AUTO = "auto"  #: the cheapest route that gives what was asked (:func:`choose_route`)
    EXACT = "exact"  #: generating functions; refused when over the memory limit
    CERTIFIED = "certified"  #: exact structure, Arb-ball masses (one generator)
    BOUNDS = "bounds"  #: certified two-sided bounds of delta(eps) and eps(delta)

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value: Mode | str) -> Mode:
        """A Mode from itself or its string (``"pld"`` is an alias of ``"exact"``).

        >>> Mode.parse("PLD"), Mode.parse(Mode.BOUNDS)
        (<Mode.EXACT: 'exact'>, <Mode.BOUNDS: 'bounds'>)
        """
        if isinstance(value, cls):
            return value
        text = str(value).strip().lower()
        try:
            return cls("exact" if text == "pld" else text)
        except ValueError:
            raise InvalidParameterError(
                f"unknown mode {value!r}; choose one of {', '.join(MODES)}"
            ) from None


MODES = tuple(m.value for m in Mode)

# Time models (seconds; fitted on the 2-core machine, paper case and mixed lists; they only
# rank the routes, the results do not depend on them).
_EXACT_PER_COEF_BYTE = 2.0e-8
_EXACT_FIXED = 0.01
_CERT_DIRECT = 6.0e-8  # times W^2 (one Arb power; up to 4001 loss values)
_CERT_TILTED = 2.0e-6  # times W log2 W (tilted windows)
_CERT_FIXED = 0.02


class Route(str):
    """The route taken: a ``str`` (``"pld"``, ``"certified"``, ``"bounds"``) with ``why``.

    ``why`` is one sentence saying why the route was taken.
    """

    why: str

    def __new__(cls, name: str, why: str = "") -> Route:  # noqa: D102
        obj = super().__new__(cls, name)
        obj.why = why
        return obj


def certified_width(plds: Sequence[tuple[PLD, int]]) -> int | None:
    """Loss values of the certified route's result, or None with several generators."""
    kinds = common_domain([(p, c) for p, c in plds if c])
    if kinds[0][0].domain.dim != 1:
        return None
    half = sum(c * max(abs(loss[0]) for loss, _ in p.masses) for p, c in kinds if p.masses)
    return 2 * half + 1


def exact_seconds(plds: Sequence[tuple[PLD, int]]) -> float:
    """Estimated time of the exact route (a ranking heuristic)."""
    _, coef_bytes = problem_sizes(common_domain([(p, c) for p, c in plds if c]))
    return _EXACT_FIXED + _EXACT_PER_COEF_BYTE * coef_bytes


def certified_seconds(width: int, digits: int = 30) -> float:
    """Estimated time of the certified route for ``width`` loss values (a heuristic)."""
    scale = max(1.0, digits / 30)
    if width <= 4001:
        return _CERT_FIXED + _CERT_DIRECT * width * width * scale
    return _CERT_FIXED + _CERT_TILTED * width * max(width.bit_length(), 1) * scale


def choose_route(
    plds: Sequence[tuple[PLD, int]],
    want_closed_forms: bool,
    digits: int = 30,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
) -> tuple[str, str]:
    """``(route, why)``: the route to take and one sentence saying why.

    Args:
        plds: ``[(dominating pair, count), ...]``.
        want_closed_forms: True when closed forms will be printed or returned; False
            when only certified decimals are needed (``--decimals-only``, ``delta``,
            ``epsilon``, audits, plots).
        digits: the significant digits to certify.
        memory_limit: bytes the exact route may use (None: no limit).
    """
    kinds = common_domain([(p, c) for p, c in plds if c])
    need = estimate_rss(kinds, closed_forms=want_closed_forms)
    fits = memory_limit is None or need <= memory_limit
    width = certified_width(kinds)
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
    t_exact = exact_seconds(kinds)
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
    plds: Sequence[tuple[PLD, int]],
    mode: Mode | str = "auto",
    closed_forms: bool = True,
    digits: int = 30,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    progress: Any = None,
    allow_bounds: bool = False,
    width: Any = None,
) -> tuple[Any, Route]:
    """Compose by the route ``mode`` names (``auto``: :func:`choose_route`).

    Returns:
        ``(region, method)``; the method (a :class:`Route`, also its ``why``) is ``"pld"``
        (exact), ``"certified"`` or ``"bounds"`` (the region is then a
        :class:`~dpcompose_exact.bounds.Bounded`, only with ``allow_bounds``).

    Raises:
        ResourceLimitError: the exact route does not fit ``memory_limit`` (mode ``exact``),
            or only bounds are possible and ``allow_bounds`` is False.
    """
    mode = Mode.parse(mode)
    if not plds:
        raise InvalidParameterError("need at least one mechanism")
    if not any(c for _, c in plds):
        raise InvalidParameterError("nothing to compose: every count is 0")
    plds = [(p, c) for p, c in plds if c]
    if mode is Mode.CERTIFIED:  # the certified route converts (or stays sparse) by itself
        region = compose_certified(plds, digits=digits, progress=progress)
        return region, Route("certified", "asked for")
    # the degree check needs no conversion; a conversion to a tiny common generator is
    # itself a large allocation, so it comes first
    refusal = exact_refusal(plds, memory_limit, closed_forms)
    if mode is Mode.EXACT:
        if refusal is not None:
            raise ResourceLimitError(refusal + " or the certified mode (--certified)")
        return compose_plds(plds, memory_limit=None), Route("pld", "asked for")
    if mode is Mode.AUTO and dense_degree(plds) > MAX_DENSE_DEGREE:
        try:  # a tiny generator next to large losses: the sparse certified route
            region = compose_certified(plds, digits=digits, progress=progress)
            why = (refusal or "the exact route is too large").split(";")[0]
            return region, Route("certified", why + "; certified digits instead")
        except InvalidParameterError:
            if not allow_bounds:
                raise ResourceLimitError(refusal or "the exact route is too large") from None
            # the exact route is refused by its degree alone: no memory estimate (which
            # walks every coefficient slot) is needed to take the bounds
            why = (refusal or "the exact route is too large").split(";")[0]
            return Bounded(tuple(common_domain(plds)), width), Route(
                "bounds", why + ", and several generators rule out the certified route"
            )
    kinds = common_domain(plds)
    if mode is Mode.BOUNDS:
        return Bounded(tuple(kinds), width), Route("bounds", "asked for")
    route, why = choose_route(kinds, closed_forms, digits, memory_limit)
    if route == "exact" and allow_bounds and not closed_forms and certified_width(kinds) is None:
        # several generators, decimals only: the log-split sum may certify every digit
        # far faster than the exact route
        t_exact = exact_seconds(kinds)
        if t_exact > SPLIT_AFTER_SECONDS:
            asked = Fraction(1, 10 ** (digits + 2))
            bounded = Bounded(tuple(kinds), min(asked, Fraction(width)) if width else asked)
            if bounded.split_ready():
                return bounded, Route(
                    "bounds",
                    f"decimals only; the log-split sum certifies every digit (the exact "
                    f"route is estimated at {t_exact:.2g} s)",
                )
    if route == "exact":
        return compose_plds(kinds, memory_limit=None), Route("pld", why)
    if route == "certified":
        region = compose_certified(kinds, digits=digits, progress=progress)
        return region, Route("certified", why)
    if not allow_bounds and certified_width(kinds) is not None:
        compose_certified(kinds, digits=digits)  # raises its own over-the-limit error
    if not allow_bounds:
        need = estimate_rss(kinds, closed_forms)
        raise ResourceLimitError(
            too_big_message(need, memory_limit or 0)
            + "; certified two-sided bounds are available for delta and epsilon "
            "(dpcompose delta/epsilon, or compose(..., method='bounds'))"
        )
    return Bounded(tuple(kinds), width), Route("bounds", why)
