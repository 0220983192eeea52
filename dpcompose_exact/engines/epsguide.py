"""The double guesses that place eps(delta)'s certification: a mixed list's, a grid's crossings.

The certified inversion (:func:`~dpcompose_exact.engines.gaussian.certify_epsilon`, docs/
theory.md, section 15 "Deciding, not enclosing") moves outwards from any guess until each
end of the enclosure holds; a good guess only saves its evaluations.  :func:`_guide` finds
one from double estimates of ``delta(eps)`` (a grid part's fold sums,
:class:`~dpcompose_exact.engines.noiseparts.GridPart`): mpmath's Anderson-Bjorck bracketing
solver on the logarithm, in ``log(top - eps)`` near the largest loss, a bisection as the
fallback.  On a certified loss grid (:class:`~dpcompose_exact.engines.gridepsilon.
EpsilonQueries`) the same job is done on the folds' float estimates: the crossing of an
estimate with ``delta`` (:func:`_crossing`, secant steps on ``log est - log d`` with a
bisection fallback, :func:`_narrow_crossing`; :func:`_secant` from a certified bound), and
the parts of an enclosure's width, the discretisation's and the FFT's
(:func:`_width_split`), from which the route of a small delta chooses its next grid.
Nothing here is certified, and nothing needs to be (docs/theory.md, section 15, "Deciding,
not enclosing", "Choosing the route of a small delta").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from ..errors import ResourceLimitError
from ..numbers.convert import log_fraction
from ..numbers.value import Value
from .gridfft import mixed_gain
from .gridfold import _Fold
from .gridmeasure import _frac

__all__: list[str] = []

def _guide(estimate: Callable[[float], float], target: float, a: float, b: float,
           at_b: float, top: float | None = None, above: bool = False) -> float:
    """A double near the root of ``estimate(e) = target`` in ``[a, b]`` (a guess only).

    ``estimate`` decreases, ``estimate(a) > target >= estimate(b) = at_b``.  mpmath's
    Anderson-Bjorck bracketing solver on ``log(estimate / target)`` (a smooth, nearly linear
    function of eps) needs about ten evaluations where bisection to 1e-12 needs forty.  When
    ``top``, the largest loss (delta is 0 from it on), lies above ``a``, the solver runs in
    ``y = log(top - e)`` instead: delta falls to 0 at ``top`` like a power of ``top - e``,
    so its logarithm is nearly linear in ``y`` there, and nearly linear in ``e`` far from
    it.  Where the estimate is 0 at ``b`` (past ``top``), ``b`` first moves to ``top - x``
    with ``x`` bisected on a log scale until the estimate there is positive.  A bisection is
    the fallback when the logarithm is undefined or the solver stops.

    Returns the point evaluated nearest the root on one side: the least with an estimate
    at most the target (an upper end's first try), or (``above``) the largest with an
    estimate above it (a lower end's).  Any guess gives a certified enclosure
    (:func:`~.gaussian.certify_epsilon` moves outwards until each end holds); the guess
    only saves its evaluations.
    """
    import mpmath

    log_target = math.log(target)
    seen: list[tuple[float, float]] = [(a, math.inf), (b, at_b)]

    def est(e: float) -> float:
        value = estimate(e)
        seen.append((e, value))
        return value

    def g(e: Any) -> float:
        value = est(float(e))
        return math.log(value) - log_target if value > 0 else -1e300

    near_top = top is not None and a < top
    if at_b <= 0 and near_top and top <= b:  # type: ignore[operator]
        # the estimate is above the target at top - e^big, 0 at top - e^zero
        big, zero = math.log(top - a), None  # type: ignore[operator]
        y = math.log(top) - 50 * math.log(2)  # type: ignore[arg-type]
        for _ in range(16):
            x = top - math.exp(y)  # type: ignore[operator]
            if not a < x < b:
                break
            value = est(x)
            if 0 < value <= target:
                b, at_b = x, value
                break
            if value > target:
                if zero is None:
                    break  # within 2^-50 of the largest loss
                a, big = x, y
            else:
                zero = y
            y = (zero + big) / 2
    if at_b > 0:
        try:
            if near_top and b < top:  # type: ignore[operator]

                def gy(y: Any) -> float:  # increasing in y (e decreases)
                    value = est(top - math.exp(float(y)))  # type: ignore[operator]
                    return math.log(value) - log_target if value > 0 else -1e300

                mpmath.findroot(gy, (math.log(top - b), math.log(top - a)),  # type: ignore[operator]
                                solver="anderson", tol=1e-12, maxsteps=40, verify=False)
            else:
                mpmath.findroot(g, (a, b), solver="anderson", tol=1e-12, maxsteps=40,
                                verify=False)
        except (ValueError, ZeroDivisionError, OverflowError):
            pass
    # the point whose estimate is nearest the target (on the side asked, when two are as
    # near); bisection of the tightest bracket when the solver found none within 1e-9
    lo = max(e for e, v in seen if v > target)
    hi = min(e for e, v in seen if v <= target)
    found = [(abs(math.log(v) - log_target), e) for e, v in seen if 0 < v < math.inf]
    if found and min(found)[0] <= 1e-9:
        best = min(found)[1]
        if hi - lo <= 1e-12 * hi:
            return lo if above else hi
        return best
    for _ in range(60):
        mid = (lo + hi) / 2
        if mid in (lo, hi) or hi - lo < 1e-12 * hi:  # the certification bisects further
            break
        lo, hi = (mid, hi) if est(mid) > target else (lo, mid)
    return lo if above else hi


#: the float search for eps stops here (a guard: the grid's top loss ends it first)
_SEARCH_CAP = 1e300
#: :func:`~.gridfft.mixed_gain` where the folds do not say their uses (a guess: k = 300)
MIXED_GAIN = 0.02


def _bisect_estimate(fold: _Fold, d: float) -> float:
    """A float eps where the fold's estimate crosses ``d`` (to place the certification)."""
    a, b = 0.0, 1.0
    while fold.estimate(b) > d:
        a, b = b, 2 * b
        if b > _SEARCH_CAP:  # a grid's estimate is 0 above its largest loss: not reached
            raise ResourceLimitError(f"eps({d}) is beyond the grid of this composition")
    for _ in range(50):
        mid = (a + b) / 2
        a, b = (mid, b) if fold.estimate(mid) > d else (a, mid)
    return b


def _width_split(first: Value, folds: dict[str, Any]) -> tuple[float, float] | None:
    """The parts of ``first``'s width, in ``ln delta``: ``(discretisation, FFT error)``.

    ``folds``: the tilted folds (``_Tilted`` per direction, or None) whose certified bounds
    gave ``first = [a, b]``.  With ``u``, ``l`` the float estimates of the tilted direction
    (upper fold; lower fold at the shifted loss), ``up(b) = u(b) (1 + s_u)`` and
    ``lo(a) = l(a) (1 - s_l)`` both equal ``delta``, so ``ln(u(a) / u(b)) = ln(u(a) / l(a))
    + ln((1 + s_u) / (1 - s_l))``: the measures' gap (the discretisation's) plus the bounds'
    error terms, the first taken at the midpoint; less the upper bound's leaked outcomes at
    ``b`` (``ln(1 + leak / u(b))``), the rest is the doubles' FFT error.  None unless one
    direction alone was tilted, with both folds built (the other direction's bound, when
    tilted too, may be what holds an end: ``q = 0.00789``, ``sigma = 1.72``, ``k = 222``,
    ``eps(2.3e-14)``, its reverse direction tilted at ``lam = 691``), or when the estimates
    are not ordered.  Float estimates: they only choose the next grid (docs/theory.md,
    section 15, "Choosing the route of a small delta").
    """
    a, b = (float(_frac(x)) for x in first.ends())
    tilted = [t for t in folds.values() if t is not None]
    if len(tilted) != 1 or tilted[0]._lo is None or not b > a:
        return None
    t = tilted[0]
    mid = (a + b) / 2
    ua, ub, um = t.up.estimate(a), t.up.estimate(b), t.up.estimate(mid)
    lm = t.lo.estimate(mid + float(t.lo.shift))
    if not (ua > ub > 0 and um > 0 and lm > 0):
        return None
    total = math.log(ua / ub)
    disc = min(max(math.log(um / lm), 0.0), total)
    # the upper bound's leaked outcomes at b (not the FFT's: long doubles keep them)
    leak = float(t.up.leak)
    if t.up.tail_bound is not None:
        leak = min(leak, float(_frac(t.up.tail_bound(Fraction(b)).upper())))
    return disc, max(total - disc - math.log1p(leak / ub), 0.0)


def _fold_gain(folds: dict[str, Any]) -> float:
    """:func:`~.gridfft.mixed_gain` at the tilted upper fold's uses and length (a guess)."""
    for t in folds.values():
        if t is None:
            continue
        parts, nfft = getattr(t.up, "parts", None), getattr(t.up, "nfft", None)
        if parts and nfft:
            return mixed_gain(sum(k for _, k in parts), nfft)
    return MIXED_GAIN


def _secant(bound: Any, g: float, d: Fraction, est: Any, margin: float) -> float:
    """A float guess moved from ``g`` to where ``bound`` (a certified delta) crosses ``d``.

    ``log bound(g) - log d`` over the slope of ``log est`` at ``g``, plus ``margin``
    (relative; positive for the upper end, placed just above the crossing, negative for
    the lower one).  A guess only (it places the certification).
    """
    v = float(bound(Fraction(g)))
    step = 1e-4 * max(g, 1.0)
    e0, e1 = est(g), est(g + step)
    if not (v > 0 and e0 > 0 and e1 > 0 and e0 > e1):
        return g
    slope = (math.log(e0) - math.log(e1)) / step
    moved = g + (math.log(v) - log_fraction(d)) / slope + margin * max(g, 1.0)
    return max(moved, 0.0)


def _crossing(est: Any, d: Fraction, near: float | None = None) -> float:
    """A float eps where ``est`` crosses ``d`` (to 2^-32: it places the search).

    ``near``: a guess of the crossing (the untilted folds'): the bracket is grown around it
    (a step of ``2^-20`` relative, 4 times longer each time) instead of from ``[0, 1]``.  A
    tilted fold's estimate is meaningful only near its tilt's saddle point: far below it
    the weights ``e^{C - lam T h}`` blow the FFT's noise up to any sign and size, and a
    bracket from 0 found a crossing there (the lower end of the answer then came back 0).
    """
    if near is not None and near > 0:
        lo = hi = near
        step = 2.0**-20 * max(near, 1.0)
        for _ in range(40):
            if est(hi) <= float(d):
                break
            hi += step
            step *= 4
        step = 2.0**-20 * max(near, 1.0)
        for _ in range(40):
            if lo == 0.0 or est(lo) > float(d):
                break
            lo = max(lo - step, 0.0)
            step *= 4
        if est(hi) <= float(d) and (lo == 0.0 or est(lo) > float(d)):
            return _narrow_crossing(est, d, lo, hi)
    a, b = 0.0, 1.0
    while est(b) > float(d):
        a, b = b, 2 * b
        if b > _SEARCH_CAP:  # a grid's estimate is 0 above its largest loss: not reached
            raise ResourceLimitError(f"eps({d}) is beyond the grid of this composition")
    return _narrow_crossing(est, d, a, b)


def _narrow_crossing(est: Any, d: Fraction, lo: float, hi: float, halvings: int = 32) -> float:
    """The upper end of a bracket ``[lo, hi]`` of a crossing of ``d``, narrowed ``2^halvings``-fold.

    ``est(hi) <= d`` and ``est(lo) > d`` (or ``lo = 0``).  The answer ``b`` has
    ``est(b) <= d`` and, ``w = (hi - lo) / 2^halvings`` after it, ``est(b - w) > d`` (or
    ``b - w <= lo = 0``): what as many bisections give, in a few evaluations where ``log
    est`` is smooth.  Each step is the secant of ``log est - log d`` through the bracket's
    ends (Illinois: an end kept twice has its value halved), held ``w / 2`` inside the
    bracket, or its midpoint when a value is not positive (FFT noise) or when four steps
    have not halved the bracket (from ``lo = 0`` with no value there, the cut is at ``hi /
    16``: a crossing far below ``hi``); every evaluation keeps a bracket, so this is a bisection
    that guesses its cuts (a float guess: it places the certified search only; docs/theory.md,
    section 15, "Choosing the tilt").
    """
    df = float(d)
    w = (hi - lo) * 2.0**-halvings
    ld = math.log(df) if df > 0 else None

    def g(x: float) -> tuple[bool, float | None]:
        v = est(x)
        ok = v > 0 and math.isfinite(v) and ld is not None
        return v > df, (math.log(v) - ld if ok else None)

    g_lo = g(lo)[1] if lo > 0 else None
    g_hi = g(hi)[1]
    side, width, tries = 0, hi - lo, 0
    while hi - lo > w:
        x = (lo + hi) / 2 if lo > 0 or g_lo is not None or tries >= 4 else hi / 16
        if tries < 4 and g_lo is not None and g_hi is not None and g_lo > 0 >= g_hi:
            x = hi - g_hi * (hi - lo) / (g_hi - g_lo)
            if not math.isfinite(x):
                x = (lo + hi) / 2
        x = min(max(x, lo + w / 2), hi - w / 2)
        above, gx = g(x)
        if above:
            lo, g_lo = x, gx
            if side < 0 and g_hi is not None:
                g_hi /= 2
            side = -1
        else:
            hi, g_hi = x, gx
            if side > 0 and g_lo is not None:
                g_lo /= 2
            side = 1
        tries += 1
        if hi - lo <= width / 2:
            width, tries = hi - lo, 0
        elif tries >= 5:
            tries = 0  # the step before bisected (tries = 4 above): start again
    return hi
