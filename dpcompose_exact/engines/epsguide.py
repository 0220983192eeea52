"""The double guess that places eps(delta)'s certification on a loss grid.

The certified inversion (:func:`~dpcompose_exact.engines.gaussian.certify_epsilon`, docs/
theory.md, section 15 "Deciding, not enclosing") moves outwards from any guess until each
end of the enclosure holds; a good guess only saves its evaluations.  :func:`_guide` finds
one from double estimates of ``delta(eps)`` (a grid part's fold sums,
:class:`~dpcompose_exact.engines.noiseparts.GridPart`): mpmath's Anderson-Bjorck bracketing
solver on the logarithm, in ``log(top - eps)`` near the largest loss, a bisection as the
fallback.  Nothing here is certified, and nothing needs to be.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

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
