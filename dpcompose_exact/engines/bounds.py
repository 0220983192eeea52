"""Certified two-sided bounds on delta(eps) and eps(delta) for any structure.

When the exact structure is too large (several incommensurable generators such as
``log 2``, ``log 3 - log 2`` and ``1/10``, many kinds, huge k) the region is still enclosed
(docs/theory.md, section 14), by the first of two schemes that reaches the relative width
asked:

0. near the largest loss, ``delta(eps)`` summed over every outcome above ``eps``
   (:mod:`~dpcompose_exact.engines.toploss`): complete, no omitted mass;
1. the log-split sum (:mod:`~dpcompose_exact.engines.logsplit`): logarithmic losses kept exact,
   their usage counts enumerated above a threshold, the omitted mass bounded;
2. the grid enclosure below, the fallback when the sum would need too many terms: each
   kind's dominating pair is replaced by a pair on a one-generator grid ``h Z`` that is
   *weaker* (a lower pair) and one that is *stronger* (an upper pair), both are composed
   on the grid, and the true ``delta(eps)`` lies between theirs.  The width shrinks as
   ``h`` is refined.

**The pairs.**  A symmetric dominating pair (docs/theory.md, section 1) is a leak ``lambda``
plus a mixture, with revealed component, of randomized responses: weight ``w_r`` on
``RR(l_r)``, the pair ``P = (e^l, 1) / (1 + e^l)``, ``Q = (1, e^l) / (1 + e^l)`` with losses
``+-l``.  For ``l >= 0`` write ``a = h floor(l / h)``, ``b = a + h`` and
``s(x) = 1 / (1 + e^x)``.

* Lower pair: ``RR(l)`` becomes ``RR(a)``.
* Upper pair: ``RR(l)`` becomes ``alpha RR(b) + (1 - alpha) RR(a)`` (revealed component) with
  ``alpha = (s(a) - s(l)) / (s(a) - s(b))`` in ``[0, 1]`` (the "connect the dots" pair).
* Losses already on the grid (``l = a``) are kept; the leak and weights are kept exactly.

**Why the bounds hold.**  Write ``H_t(P || Q) = sum (P - t Q)_+`` for the hockey-stick
divergence, so ``delta(eps) = H_{e^eps}``.  For ``RR(x)``, ``t = e^eps`` and ``eps >= 0``:
``H_t(RR(x)) = (e^x - t)_+ / (1 + e^x) = (1 - (1 + t) s(x))_+``.

1. *Lower.*  ``H_t(RR(x))`` is non-decreasing in ``x`` (``s`` decreases), so
   ``H_t(RR(a)) <= H_t(RR(l))`` for every ``t >= 1``.
2. *Upper.*  Let ``M = alpha RR(b) + (1 - alpha) RR(a)``; with the component revealed,
   ``H_t(M) = alpha H_t(RR(b)) + (1 - alpha) H_t(RR(a))``.  By the choice of ``alpha``,
   ``alpha s(b) + (1 - alpha) s(a) = s(l)``.  If ``t <= e^a`` all three terms are positive
   parts of non-negative numbers and ``H_t(M) - H_t(RR(l)) = (1 + t)(s(l) - alpha s(b) -
   (1 - alpha) s(a)) = 0``.  If ``e^a < t <= e^l``, ``H_t(RR(a)) = 0`` and
   ``alpha (1 - (1 + t) s(b)) - (1 - (1 + t) s(l)) = (1 - alpha)((1 + t) s(a) - 1) >= 0``
   since ``(1 + t) s(a) >= 1``.  If ``t > e^l``, ``H_t(RR(l)) = 0 <= H_t(M)``.  So
   ``H_t(M) >= H_t(RR(l))`` for every ``t >= 1``.
3. A revealed-component mixture adds the divergences with the same weights, and the leak
   adds ``lambda`` to all three.  Hence, per kind, ``H_t(lower) <= H_t(true) <= H_t(upper)``
   for every ``t >= 1``; all three pairs are symmetric, and for a symmetric pair
   ``H_t = 1 - t + t H_{1/t}`` covers ``t < 1``, so the inequalities hold for every
   ``t >= 0``.  That is the order of trade-off functions (``f_lower >= f_true >=
   f_upper``), i.e. by Blackwell's theorem each weaker pair is a post-processing of the
   stronger one.  Post-processing commutes with composition (apply the kernels
   coordinatewise), and the hockey-stick divergence does not increase under
   post-processing (data processing inequality).  So for the k-fold compositions,
   ``delta_lower(eps) <= delta(eps) <= delta_upper(eps)`` for every ``eps``.
4. ``eps(delta)`` is the smallest eps with ``delta(eps) <= delta`` and every curve is
   non-increasing, so ``eps_lower(delta) <= eps(delta) <= eps_upper(delta)``.

**Composing the grid pairs.**  Only one curve value is needed per query, to an absolute
accuracy far below the width, so the grid masses are composed in fixed point
(:class:`~dpcompose_exact.engines.grid.GridCurve`): every one-step mass and every exact
FLINT integer product is rounded down to a multiple of ``2^-bits``, so the lower pair's
computed masses stay below its exact masses; the upper pair's lost mass is put on an atom
at ``+infinity``, which adds its whole mass to ``delta`` at every eps, so its computed
curve stays above.  ``delta(eps) = leak + sum_{l > eps} P0(l) (1 - e^(eps - l))`` has
non-negative weights, so the sums (Arb balls) keep the sides, and the masses below
``2^-bits`` (exact zeros) are dropped: the composed grids hold a few standard deviations
of the loss.  (The certified route, :mod:`~dpcompose_exact.engines.certified`, certifies
every mass to a relative accuracy: on these grids it is 10-30 times slower and is not
needed.)  The reported interval is ``[lower end of the lower ball, upper end of the upper
ball]``: a rigorous enclosure, never presented as more (the
:class:`~dpcompose_exact.numbers.value.Value` holds the interval and prints only certified
digits; :meth:`~dpcompose_exact.numbers.value.Value.interval` rounds outward).

**Accuracy.**  Each use of ``RR(l)`` moves the lower pair's loss by ``l - a`` and the upper
pair's (at second order) by less, so the relative width grows like k times the rounding
error of the lower pair.  Rational parts of the epsilons stay exact (``h`` divides the
rational generator); only logarithms are rounded, and ``h = g / N`` is chosen (a heuristic
search over ``N``; any
choice is sound) so that they fall just above grid points.  Cost: about log k integer
polynomial products of at most ``2 k max(l) / h`` coefficients of ``bits`` bits each
(in practice the support of the masses above ``2^-bits``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import flint

from ..errors import BelowLeakError, CertificationError, InvalidParameterError, ResourceLimitError
from ..numbers import (
    parse_rational,
)
from ..numbers.convert import parse_delta, rational_ball
from ..numbers.format import outward_decimal
from ..numbers.value import Value
from ..regions.pld import PLD
from .genfunc import common_domain
from .grid import (
    MAX_TERMS,
    START_TERMS,
    Enclosure,
    _choose_refine,
    _exact_leak,
    _exp2,
    _grid_terms,
    _nd,
    _top_loss,
    enclose,
)
from .logsplit import (
    PREC,
    LogSplit,
    OutOfTime,
    TooLarge,
    _eps_ball,
    at_or_above,
    short_text,
)
from .results import CurvesOnly, Exactness
from .toploss import top_delta, top_epsilon

__all__ = [
    "delta_bounds",
    "epsilon_bounds",
    "relative_width",
    "reported_width",
    "ABSOLUTE_FLOOR",
    "Bounded",
    "DEFAULT_WIDTH",
    "USELESS_WIDTH",
    "UselessEnclosureError",
]

DEFAULT_WIDTH = Fraction(1, 10**6)  # relative width asked by default


ABSOLUTE_FLOOR = Fraction(1, 10**300)


def relative_width(v: Value) -> flint.arb:
    """``(upper - lower) / max(lower, ABSOLUTE_FLOOR)`` of an enclosure (an upper bound on it).

    An exact value, an exact zero included, has width 0; an enclosure reaching down to 0
    (or below :data:`ABSOLUTE_FLOOR`) is measured against the floor instead of its lower
    end, so the width is finite and shrinks with the enclosure.
    """
    ends = _ends_or_width(v)
    if not isinstance(ends, tuple):
        return ends
    return _width_up(*ends, floor=True)


def _ends_or_width(v: Value) -> tuple[flint.arb, flint.arb] | flint.arb:
    """The two exact ends of an enclosure, or its width when that is known at once.

    0 for an exact value (a closed form is known to every digit) or a point, ``inf`` for
    an enclosure with no finite end.
    """
    if v.is_exact:
        return flint.arb(0)
    try:
        lo, hi = v.ends()
    except CertificationError:  # no finite enclosure
        return flint.arb("inf")
    if lo == hi:
        return flint.arb(0)
    return lo, hi


def _width_up(lo: flint.arb, hi: flint.arb, floor: bool) -> flint.arb:
    """``(hi - lo) / base`` rounded up, ``base`` = ``lo`` (or the floor, when asked and above)."""
    # enough bits that the difference of the two exact points is exact
    span = max(lo.mid().bits(), hi.mid().bits(), 53)
    top = max(_exp2(lo), _exp2(hi))
    bottom = min(_exp2(lo, low=True), _exp2(hi, low=True))
    with flint.ctx.workprec(min(max(span, top - bottom + 8), 1 << 20) + 16):
        base = lo
        if floor:
            bound = flint.arb(flint.fmpq(*_nd(ABSOLUTE_FLOOR)))
            base = lo if lo > bound else bound.lower()
        return ((hi - lo) / base).upper()


def reported_width(v: Value) -> flint.arb | None:
    """The relative width a user reads: ``(upper - lower) / lower``, rounded up; None if lower is 0.

    Unlike :func:`relative_width` (a measure for steering refinement, which divides by
    ``max(lower, ABSOLUTE_FLOOR)`` so that it stays finite), this is the width of the
    enclosure against its own lower end, an upper bound on ``(upper - lower) / lower``
    (docs/theory.md, section 14): meaningful only when the lower end is positive.  An
    enclosure reaching down to 0 (or below) has no relative width: None.  An exact value
    has width 0; an enclosure with no finite end, ``inf``.
    """
    ends = _ends_or_width(v)
    if not isinstance(ends, tuple):
        return ends
    if not ends[0] > 0:  # the lower end is an exact point: 0 (or below) has no relative width
        return None
    return _width_up(*ends, floor=False)


def _refined(
    plds: Sequence[tuple[PLD, int]],
    read: Any,
    target: Fraction,
    deadline: float | None,
    max_terms: int,
    grids: dict[str, Any] | None = None,
    stops: set[str] | None = None,
) -> tuple[Value, Enclosure] | None:
    """The narrowest grid answer within the deadline (None when no grid was finished).

    ``stops`` receives ``"time"`` when the deadline ended the refinement early.
    ``grids`` keeps the finest composed grid (``"enc"``) with its refinement (``"n"``)
    and the budget that chose it (``"terms"``): a :class:`Bounded` composes each grid
    once, every later query starts from the finest, and a coarser grid is dropped when a
    finer one is built (at most one grid pair is held between queries).
    """
    if target <= 0:
        raise InvalidParameterError(f"width = {target} must be > 0 (a relative width)")
    kinds = common_domain([(p, c) for p, c in plds if c])
    grids = {} if grids is None else grids
    terms = grids.get("terms", START_TERMS)
    best: tuple[Value, Enclosure] | None = None
    goal = flint.arb(flint.fmpq(*_nd(target)))
    last_n = None
    while True:
        n = grids["n"] if grids.get("terms") == terms else _choose_refine(kinds, terms)
        enc = grids.get("enc") if grids.get("n") == n else None
        if n != last_n:
            last_n = n
            t0 = time.process_time()
            if enc is None:
                try:
                    enc = enclose(kinds, refine=n, deadline=deadline)
                except OutOfTime:
                    _stopped(stops)
                    return best
                grids.update(enc=enc, terms=terms, n=n)  # supersedes the coarser grid
            val = read(enc)
            if best is None or relative_width(val) < relative_width(best[0]):
                best = (val, enc)
            if relative_width(val) <= goal:
                return best
            # the next grid costs about 4-5 times this one: stop when it would overrun
            now = time.process_time()
            if deadline is not None and now + 5 * (now - t0) > deadline:
                _stopped(stops)
                return best
        if terms >= max_terms:
            return best
        terms = min(terms * 4, max_terms)


def _split_read(
    plds: Sequence[tuple[PLD, int]],
    read: Any,
    target: Fraction,
    deadline: float | None,
    cache: dict[float, LogSplit] | None = None,
    stops: set[str] | None = None,
) -> Value | None:
    """The answer of the log-split sum (:mod:`~dpcompose_exact.engines.logsplit`), or None.

    ``stops`` receives ``"time"`` when the deadline ended the refinement early.

    The enumeration threshold starts at ``target e^-16`` and is lowered, by as much as
    the width still missing, until the enclosure is as narrow as asked or the time is
    spent; None when the structure is too large for the sum.  A structure found too
    large (or too slow) is remembered in ``cache`` (under the key ``"too large"``).
    """
    start = time.process_time()
    left = None if deadline is None else deadline - start
    goal = flint.arb(flint.fmpq(*_nd(target)))
    prec = _split_prec(target)
    tail = _first_tail(target)
    best: Value | None = None
    if cache is not None and cache.get("too large"):  # type: ignore[call-overload]
        return None
    if cache is not None:  # start from the finest sum built so far (no coarser rebuild)
        built = [t for t, sp in cache.items() if isinstance(t, float) and sp.prec >= prec]
        tail = min([tail, *built])
    while True:
        split = cache.get(tail) if cache is not None else None
        if split is None or split.prec < prec:
            try:
                split = LogSplit(plds, tail=tail, deadline=deadline, prec=prec)
            except (TooLarge, OutOfTime) as exc:
                if best is None and cache is not None:
                    cache["too large"] = True  # type: ignore[index]
                if isinstance(exc, OutOfTime):
                    _stopped(stops)
                return best
            if cache is not None:
                cache[tail] = split
        try:
            val = read(split, deadline)
        except OutOfTime:
            _stopped(stops)
            return best
        except TooLarge:  # the omitted mass is too large for this query: lower the threshold
            if left is not None and 4 * (time.process_time() - start) > left:
                _stopped(stops)
                return best
            tail -= 16
            continue
        width = relative_width(val)
        if best is not None and not width < relative_width(best) / 2:
            # no progress: the omitted mass no longer dominates the width (the balls do)
            return best if width >= relative_width(best) else val
        if best is None or width < relative_width(best):
            best = val
        spent = time.process_time() - start
        if width <= goal:
            return best
        if left is not None and 4 * spent > left:
            _stopped(stops)
            return best
        # the omitted mass scales like e^tail: lower it by the factor still missing
        # (an enclosure reaching down to 0 is measured against the absolute floor, a huge
        # width that says nothing about the factor missing: the former fixed step)
        measurable = width.is_finite() and val.ends()[0] > 0
        missing = float((width / goal).log().upper()) if measurable else 16.0
        tail -= max(4.0, min(missing + 4.0, 64.0))


def _stopped(stops: set[str] | None) -> None:
    """Record that the deadline ended a refinement before its goal."""
    if stops is not None:
        stops.add("time")


#: An enclosure whose relative width ``(hi - lo) / lo`` is at least this, when the time
#: limit stopped its refinement, says less than the value itself (its lower end is at
#: most half its upper end): it is refused rather than given as an answer.
USELESS_WIDTH = 1


class UselessEnclosureError(ResourceLimitError):
    """The time limit stopped the refinement of one answer at an enclosure wider than it.

    A refusal of that query, not of the composition: a :class:`Bounded` answers later
    queries (unlike a structure too large for the time limit, refused again at once).
    """


def _refuse_useless(val: Value, what: str, time_limit: Any) -> None:
    """Raise when the time limit left ``val`` wider than the value it encloses.

    Raises:
        ResourceLimitError: ``relative_width(val) >= USELESS_WIDTH`` (one line: the
            enclosure, its width, what to change).
    """
    w = relative_width(val)
    if w.is_finite() and w < USELESS_WIDTH:
        return
    lo, hi = val.interval(3)
    width = outward_decimal(w.upper(), 2, down=False) if w.is_finite() else "inf"
    raise UselessEnclosureError(
        f"no useful bounds on {what} within the time limit of {time_limit} CPU s: refinement "
        f"stopped at [{lo}, {hi}] (relative width {width}, wider than the value); give "
        "more time (time_limit) or use smaller counts"
    )


def _split_prec(target: Fraction) -> int:
    """Bits of the log-split's balls for a relative width ``target`` (192 at least)."""
    return max(PREC, math.ceil(math.log2(target.denominator / target.numerator)) + 64)


def _first_tail(target: Fraction) -> float:
    """The first enumeration threshold tried for a relative width ``target`` (heuristic)."""
    return math.log(float(target)) - 16


def _answer(
    plds: Sequence[tuple[PLD, int]],
    split_read: Any,
    grid_read: Any,
    target: Fraction,
    time_limit: Any,
    max_terms: int,
    cache: dict[float, LogSplit] | None = None,
    grids: dict[str, Any] | None = None,
    what: str = "the answer",
) -> Value:
    """The log-split answer, or the grid enclosure's when the sum is too large.

    The log-split sum may spend 3/4 of ``time_limit`` (its build checks the deadline
    inside its loops), the grid the rest (each product's time is predicted first).

    Raises:
        ResourceLimitError: neither finished within ``time_limit`` seconds, or the time
            limit stopped the refinement at an enclosure wider than the value
            (:data:`USELESS_WIDTH`; one line, saying what to change).
    """
    start = time.process_time()
    limit = None if time_limit is None else float(time_limit)
    split_deadline = None if limit is None else start + 0.75 * limit
    stops: set[str] = set()
    val = _split_read(plds, split_read, target, split_deadline, cache, stops)
    if val is not None:
        if stops:
            _refuse_useless(val, what, time_limit)
        return val
    stops.clear()
    out = _refined(
        plds, grid_read, target, None if limit is None else start + limit, max_terms, grids, stops
    )
    if out is None:
        kinds = common_domain([(p, c) for p, c in plds if c])
        need = _grid_terms(kinds, _choose_refine(kinds, START_TERMS))
        counts = ", ".join(str(c) for _, c in kinds)
        raise ResourceLimitError(
            f"no certified bounds within the time limit of {time_limit} CPU s: the log-split sum "
            f"is too large for counts {counts} and the grid enclosure ({need} loss values) "
            "is too slow; use smaller counts or fewer incommensurable epsilons (or a larger "
            "time_limit)"
        )
    if stops:
        _refuse_useless(out[0], what, time_limit)
    return out[0]


def delta_bounds(
    plds: Sequence[tuple[PLD, int]],
    eps: Any,
    width: Any = DEFAULT_WIDTH,
    time_limit: Any = 30,
    max_terms: int = MAX_TERMS,
    cache: dict[float, LogSplit] | None = None,
    grids: dict[str, Any] | None = None,
) -> Value:
    """A certified enclosure of ``delta(eps)`` of relative width <= ``width`` where possible.

    The log-split sum (exact logarithmic losses, certified tail) is tried first; when the
    structure is too large for it, the grid enclosure is refined until its relative width
    is ``width``, ``max_terms`` loss values are reached, or the next grid would likely
    overrun ``time_limit`` CPU seconds (``time.process_time``: a loaded
    machine gives the same answers).  The enclosure returned may then be wider than asked
    (read its width with :func:`relative_width`; it is never presented as more than it
    is), but not wider than the value: when the time limit stopped the refinement at a
    relative width of :data:`USELESS_WIDTH` or more, the query is refused.  ``cache`` and
    ``grids`` keep the log-split sums and the composed grids for later queries
    (:class:`Bounded`).

    Raises:
        ResourceLimitError: no enclosure within ``time_limit`` seconds, one wider than the
            value when the time limit stopped it, or a grid over :data:`MAX_TERMS` loss
            values.
    """
    target = _width(width)
    kinds = common_domain([(p, c) for p, c in plds if c])
    dom = kinds[0][0].domain
    if at_or_above(dom, _top_loss(kinds), eps):  # no loss above eps: the leak, exactly
        return Value.from_qz(dom, _exact_leak(kinds))
    try:  # near the largest loss: every outcome above eps, summed completely
        return top_delta(plds, _eps_ball(eps), deadline=_top_deadline(time_limit))
    except (TooLarge, OutOfTime):
        pass
    return _answer(
        plds,
        lambda split, _deadline: split.delta(eps),
        lambda enc: enc.delta(eps),
        target,
        time_limit,
        max_terms,
        cache,
        grids,
        f"delta({short_text(eps)})",
    )


def epsilon_bounds(
    plds: Sequence[tuple[PLD, int]],
    delta: Any,
    width: Any = DEFAULT_WIDTH,
    time_limit: Any = 30,
    max_terms: int = MAX_TERMS,
    cache: dict[float, LogSplit] | None = None,
    grids: dict[str, Any] | None = None,
) -> Value:
    """A certified enclosure of ``eps(delta)`` (see :func:`delta_bounds`).

    A ``delta`` below the composition's leak (computed from the exact leaks at once) is
    refused before anything is built.
    """
    target = _width(width)
    _refuse_below_leak(plds, delta)
    try:  # a delta met near the largest loss: every outcome above eps summed completely
        d = parse_rational(delta, "delta")
        return top_epsilon(plds, d, target / 2, deadline=_top_deadline(time_limit))
    except (TooLarge, OutOfTime):
        pass
    return _answer(
        plds,
        lambda split, deadline: split.epsilon(delta, width=target / 2, deadline=deadline),
        lambda enc: enc.epsilon(delta),
        target,
        time_limit,
        max_terms,
        cache,
        grids,
        f"eps({short_text(delta)})",
    )


def _top_deadline(time_limit: Any) -> float | None:
    """The sum near the largest loss may spend a tenth of the time limit (at most 2 s)."""
    if time_limit is None:
        return time.process_time() + 2.0
    return time.process_time() + min(2.0, float(time_limit) / 10)


def _refuse_below_leak(plds: Sequence[tuple[PLD, int]], delta: Any) -> None:
    """Raise :class:`BelowLeakError` when ``delta`` is surely below the leak.

    The leak ``1 - prod (1 - lambda_kappa)^k_kappa`` is read as a ball from the exact
    leaks; a ball that cannot decide (``delta`` at the leak) is left to the routes,
    which decide it exactly.
    """
    d = parse_delta(delta)
    with flint.ctx.workprec(128):
        survive = flint.arb(1)
        for pld, count in plds:
            if count:
                survive *= (1 - pld.domain.elem_ball(pld.leak, 128)) ** count
        leak = 1 - survive
        if leak.lower() > rational_ball(d):
            raise BelowLeakError(
                f"delta = {short_text(delta)} is below the leak {float(leak.mid()):.6g} (the "
                "probability that the composition reveals the input outright): no finite eps "
                "achieves it"
            )


def _width(width: Any) -> Fraction:
    if isinstance(width, float):
        raise TypeError("width: got a float; pass a str or Fraction such as '1e-6'")
    try:
        out = Fraction(width)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"width = {width!r} is not a number; pass a relative width such as '1e-6'"
        ) from None
    if out <= 0:
        raise InvalidParameterError(f"width = {width} must be > 0 (a relative width)")
    return out


class EnclosureRows(CurvesOnly):
    """The results that answer curves only, with Values.

    The bounds route, subsampled compositions, noise grids, finite pairs next to noise:
    they answer ``delta`` and ``epsilon`` with Values, and their exactness field
    (``kind``) tells the presentation layer how to lay them out
    (:func:`dpcompose_exact.presentation.rows.curve_rows`: enclosures for ``bounds``,
    certified points otherwise).
    """


class Bounded(EnclosureRows):
    """A composition known by certified two-sided bounds only (the ``bounds`` route).

    Each query refines the grid until its enclosure has relative width ``width`` or the
    refinement limit is reached (:func:`delta_bounds`); results are cached, and so are
    the log-split sums and the composed grids (built once per composition, read by every
    query) and a refusal for lack of time (given again at once).

    Attributes:
        kinds: ``((pair, count), ...)`` composed.
        width: the relative width asked for each answer.
    """

    kind = Exactness.BOUNDS

    def __init__(self, kinds: Sequence[tuple[PLD, int]], width: Any = None) -> None:
        self.kinds = tuple(kinds)
        self.width = _width(width if width is not None else DEFAULT_WIDTH)
        self._cache: dict[Any, Value] = {}
        self._splits: dict[float, LogSplit] = {}  # log-split sums, by threshold
        self._grids: dict[str, Any] = {}  # the finest composed grid and its budget
        self._refusal: ResourceLimitError | None = None

    def split_ready(self, time_limit: Any = 15) -> bool:
        """Build the log-split sum for :attr:`width` now; False when it is too large."""
        tail = _first_tail(self.width)
        if self._splits.get("too large"):  # type: ignore[call-overload]
            return False
        if tail not in self._splits:
            deadline = None if time_limit is None else time.process_time() + float(time_limit)
            try:
                self._splits[tail] = LogSplit(
                    self.kinds, tail=tail, deadline=deadline, prec=_split_prec(self.width)
                )
            except (TooLarge, OutOfTime):
                self._splits["too large"] = True  # type: ignore[index]
                return False
        return True

    # -- the one result interface (dpcompose_exact.engines.results.PrivacyResult) ------------------
    no_list = (
        "this composition is known by certified two-sided bounds only (its exact "
        "structure is too large)"
    )

    def describe(self) -> str:
        """``"certified bounds"``."""
        return "certified bounds"

    def _query(self, name: str, query: Any, compute: Any, time_limit: Any) -> Value:
        # a rational is its own key (str of one with > 4300 digits raises)
        key = (name, query if isinstance(query, (Fraction, int)) else str(query))
        if key in self._cache:
            return self._cache[key]
        if self._refusal is not None:
            raise self._refusal
        try:
            val = compute(
                self.kinds,
                query,
                self.width,
                time_limit,
                cache=self._splits,
                grids=self._grids,
            )
        except UselessEnclosureError:  # this query ran out of time: refuse it alone
            raise
        except ResourceLimitError as exc:  # the structure, not the query: refuse again
            self._refusal = exc
            raise
        self._cache[key] = val
        return val

    def delta(self, eps: Any, time_limit: Any = 30) -> Value:
        """Certified enclosure of ``delta(eps)``."""
        return self._query("d", eps, delta_bounds, time_limit)

    def epsilon(self, delta: Any, time_limit: Any = 30) -> Value:
        """Certified enclosure of ``eps(delta)``."""
        return self._query("e", delta, epsilon_bounds, time_limit)
