"""Certified composition for large k: exact structure, ball-arithmetic values.

When the exact k-fold polynomial would not fit in memory, the same region is computed with
Arb balls (docs/theory.md, section 3 with a different evaluation strategy):

* **Structure, exactly.** The loss values of the composed pair are the k-fold sumsets of
  the one-step supports, computed with integers (binary powering of 0/1 polynomials,
  clamped after each product); the output has one constraint per loss value >= 0, as in
  the exact route.
* **Masses, with relative accuracy.** With one generator each one-step generating
  polynomial ``f_j(w)`` (shifted to start at ``w^0``) becomes an Arb polynomial and
  ``F = prod_j f_j^{k_j}``.  Only the masses at losses <= 0 are needed (``P0(l) = e^l
  P0(-l)`` gives the others), each to a fixed relative accuracy.

  - Small results (up to ``_DIRECT_WIDTH`` loss values): ``F`` by Arb binary powering.
    Arb multiplies blockwise (coefficients of similar magnitude together), so every
    coefficient keeps its own relative accuracy although they span thousands of orders
    of magnitude, but the cost grows like the square of the width.
  - Large results: **exponential tilting**.  For an exact dyadic ``t > 0`` the steps
    ``g_j(w) = f_j(t w) / f_j(t)`` are probability vectors and ``prod_j g_j^{k_j}`` has
    coefficients ``c_n t^n / Z`` (``Z = prod_j f_j(t)^{k_j}``), a distribution
    concentrated within O(sqrt(k)) of its mean: on that window the ``c_n`` are all of
    comparable size once tilted.  The power is computed by Arb on a window only: after
    every product the coefficients below ``2^-W`` at both ends are dropped and the l1 norm
    of what was dropped is carried as a rigorous bound ``rho`` (``||x*y - v*w||_1 <=
    ||x - v|| ||y|| + ||v|| ||y - w||`` with ``||x|| = ||y|| = 1``), added to every
    radius at the end.  A window certifies the masses whose widened balls have the
    required relative accuracy; tilts are placed (saddle point; low-precision mpmath,
    a heuristic only) until every loss <= 0 in the support is certified.  Cost: O(sqrt(k)) tilts of
    O(sqrt(k))-long products, about k log k instead of k^2.
  - All coefficients are positive, so nothing cancels.  (J.C.P. Miller's O(k) recurrence
    for ``f^k`` was tried first: it is unstable here, losing about 5 bits per step.)
* **Deltas without cancellation.** ``delta(l) = leak + S0(l) - e^l S1(l)`` with suffix sums
  ``S0 = sum_{l'>l} P0(l')`` and ``S1 = sum_{l'>l} P0(-l')``; since ``l' >= l + g`` the
  subtraction loses at most ``-log2(1 - e^{-g})`` bits.

Every ball is checked at the end: if any delta has fewer correct bits than the requested
digits need, the whole computation is repeated at twice the precision.  The printed digits
are then guaranteed (one unit in the last place), like the exact route's.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import flint
import mpmath

from ..errors import CertificationError, InvalidParameterError, ResourceLimitError
from ..numbers import MAX_PREC_BITS, ExpDomain, Loss, QzElem, ball_to_decimal, check_digits
from ..numbers.certify import refine
from ..numbers.convert import digits_to_bits
from ..regions.pld import PLD, suffix_deltas

__all__ = [
    "CertifiedRegion",
    "compose_certified",
    "sumset_support",
    "CERTIFIED_TERM_LIMIT",
    "SPARSE_TERM_LIMIT",
]

CERTIFIED_TERM_LIMIT = 500_001  # loss values; time grows ~k log k (k = 10^5: ~15 s)
SPARSE_TERM_LIMIT = 2_000  # distinct loss values the sparse route handles (products ~ n^2)
SPARSE_AFTER = 20_001  # lattice width from which a small support goes the sparse route

Progress = Callable[[float], None]


@dataclass(frozen=True)
class CertifiedRegion:
    """A composed region with exact losses and certified ball deltas.

    Attributes:
        domain: the exact domain (one generator).
        losses: the loss values >= 0 (exact), increasing.
        deltas: Arb balls containing the exact deltas, aligned with ``losses``.
        prec: the working precision (bits) that certified them.
        exact_leak: the last delta (the leak ``1 - prod (1 - lambda)^k``) as an exact
            element, when known: a query at that delta is decided exactly.
        kinds: the ``(pair, count)`` composed, when known: a query that ties a vertex
            delta to every bit of its ball is decided on the exact region when that is
            affordable (:mod:`~dpcompose_exact.engines.results`).
    """

    domain: ExpDomain
    losses: tuple[Loss, ...]
    deltas: tuple[flint.arb, ...]
    prec: int
    exact_leak: QzElem | None = None
    kinds: tuple[tuple[PLD, int], ...] = ()

    def delta_decimal(self, i: int, digits: int) -> str:
        """The i-th delta to ``digits`` significant digits (certified)."""
        ball = self.deltas[i]
        if ball.is_zero():
            return "0"
        out = ball_to_decimal(ball, digits)
        if out is None:
            raise CertificationError(
                f"delta #{i} is known to {ball.rel_accuracy_bits()} bits only; "
                f"recompute with more digits"
            )
        return out


def _kind_poly(pld: PLD) -> tuple[int, list[QzElem]]:
    """(lowest loss in units, dense coefficient list) of a one-generator PLD."""
    units = [loss[0] for loss, _ in pld.masses]
    lo, hi = min(units), max(units)
    coeffs = [QzElem.from_rational(0)] * (hi - lo + 1)
    for loss, m in pld.masses:
        coeffs[loss[0] - lo] = coeffs[loss[0] - lo] + m
    return lo, coeffs


def sumset_support(kinds: Sequence[tuple[list[int], int]]) -> bytes:
    """Indicator (one byte per offset from the lowest total) of the k-fold sumset.

    Exact: binary powering of 0/1 integer polynomials, each product clamped back to 0/1
    (coefficients are counts of ways, so nonzero exactly on the sumset).
    """

    def clamp(p: flint.fmpz_poly) -> flint.fmpz_poly:
        return flint.fmpz_poly([1 if c else 0 for c in p.coeffs()])

    total = flint.fmpz_poly([1])
    for offsets, count in kinds:
        on = set(offsets)
        base = flint.fmpz_poly([1 if i in on else 0 for i in range(max(on) + 1)])
        while count:
            if count & 1:
                total = clamp(total * base)
            count >>= 1
            if count:
                base = clamp(base * base)
    return bytes(1 if c else 0 for c in total.coeffs())


def compose_certified(
    kinds: Sequence[tuple[PLD, int]],
    digits: int = 30,
    progress: Progress | None = None,
) -> CertifiedRegion:
    """Certified region of the composition of ``count`` copies of each pair.

    Args:
        kinds: ``[(pld, count), ...]``; every pair must be symmetric (a dominating pair
            of a symmetric region) and all losses multiples of one generator.
        digits: significant digits every delta must be certified to.
        progress: optional callback receiving the fraction done (0..1).
    """
    check_digits(digits)
    kinds = [(p, c) for p, c in kinds if c]
    if not kinds:
        raise InvalidParameterError("nothing to compose: every count is 0")
    dom = kinds[0][0].domain
    for p, _ in kinds[1:]:
        dom = dom.join(p.domain)
    if dom.dim != 1:
        raise InvalidParameterError(
            "certified mode needs commensurable epsilons (all rational, or all integer "
            f"multiples of one log p); this problem has {dom.dim} generators"
        )
    # lattice width from the supports alone (no dense arrays yet)
    total_lo = 0
    spans = []  # loss values one use adds, per kind (the width grows linearly in k)
    for pld, count in kinds:
        units = [pld.domain.convert_loss(loss, dom)[0] for loss, _ in pld.masses]
        if min(units) != -max(units):
            raise InvalidParameterError("certified mode needs symmetric pairs (P1(l) = P0(-l))")
        total_lo += count * min(units)
        spans.append(-2 * min(units))
    width = -2 * total_lo + 1
    if width > SPARSE_AFTER:
        # a wide lattice with few points (tiny generator next to large losses): follow the
        # support, not the degree; decided before any large allocation
        support_set = _sparse_support(kinds, dom)
        if support_set is not None:
            sparse = _compose_sparse(kinds, dom, support_set, digits)
            return replace(sparse, exact_leak=_exact_leak(kinds, dom), kinds=tuple(kinds))
    if width > CERTIFIED_TERM_LIMIT:
        # width = 1 + sum_i k_i span_i: the largest k of this route, for one kind
        widest = max(range(len(spans)), key=lambda i: kinds[i][1] * spans[i])
        k_max = (CERTIFIED_TERM_LIMIT - 1) // max(spans[widest], 1)
        which = "" if len(kinds) == 1 else " of its widest kind alone"
        raise ResourceLimitError(
            f"the composed pair has {width} loss values, over the certified-mode limit of "
            f"{CERTIFIED_TERM_LIMIT}: this route composes at most k = {k_max} uses{which}; "
            "use a smaller k"
        )
    kinds = [(p.in_domain(dom), c) for p, c in kinds]
    polys = []
    for pld, count in kinds:
        lo, coeffs = _kind_poly(pld)
        polys.append((coeffs, count))
    support = sumset_support(
        [([i for i, c in enumerate(coeffs) if not c.is_zero()], count) for coeffs, count in polys]
    )
    leak = 1 - _prod_pow([(1 - p.leak, c) for p, c in kinds])
    center = -total_lo  # index of loss 0
    need_bits = digits_to_bits(digits, 10)
    region = refine(
        lambda prec: _run(dom, polys, leak, center, support, prec, need_bits, progress),
        start_prec=need_bits + 32,
        failure=f"could not certify {digits} digits with {MAX_PREC_BITS} bits",
    )
    return replace(region, exact_leak=leak, kinds=tuple(kinds))


def _exact_leak(kinds: Sequence[tuple[PLD, int]], dom: ExpDomain) -> QzElem:
    """``1 - prod (1 - lambda)^k`` exactly, in ``dom`` (each leak converted to it)."""
    survive = QzElem.from_rational(1)
    for pld, count in kinds:
        survive = survive * (1 - pld.domain.convert_elem(pld.leak, dom)) ** count
    return 1 - survive


def _sparse_support(kinds: Sequence[tuple[PLD, int]], dom: ExpDomain) -> list[int] | None:
    """The composed loss values (units of the common generator) when there are few.

    Exact integer sumsets by binary powering of sets; None as soon as an intermediate set
    exceeds :data:`SPARSE_TERM_LIMIT` (then the dense routes decide).
    """
    total = {0}
    for pld, count in kinds:
        base = {pld.domain.convert_loss(loss, dom)[0] for loss, _ in pld.masses}
        while count:
            if count & 1:
                total = {a + b for a in total for b in base}
                if len(total) > SPARSE_TERM_LIMIT:
                    return None
            count >>= 1
            if count:
                if len(base) ** 2 > 16 * SPARSE_TERM_LIMIT**2:
                    return None
                base = {a + b for a in base for b in base}
                if len(base) > SPARSE_TERM_LIMIT:
                    return None
    return sorted(total)


def _sparse_power(
    base: dict[int, flint.arb], count: int, out: dict[int, flint.arb]
) -> dict[int, flint.arb]:
    """``out * base**count`` for sparse ball polynomials (keys are loss units)."""

    def mul(x: dict[int, flint.arb], y: dict[int, flint.arb]) -> dict[int, flint.arb]:
        acc: dict[int, flint.arb] = {}
        for a, ca in x.items():
            for b, cb in y.items():
                acc[a + b] = acc[a + b] + ca * cb if a + b in acc else ca * cb
        return acc

    while count:
        if count & 1:
            out = mul(out, base)
        count >>= 1
        if count:
            base = mul(base, base)
    return out


def _compose_sparse(
    kinds: Sequence[tuple[PLD, int]], dom: ExpDomain, support: list[int], digits: int
) -> CertifiedRegion:
    """Certified composition over the distinct loss values only (sparse in the exponents).

    Masses are balls evaluated in each pair's own field (small degrees there) and
    multiplied as sparse polynomials; the deltas come from the two suffix sums
    (:func:`~.pld.suffix_deltas`), ``delta(l) = leak + S0(l) - e^l S1(l)``.  Since
    ``delta(l) - leak >= (1 - e^{-gap}) S0(l)`` for the smallest gap between loss values,
    the subtraction loses at most ``-log2(1 - e^{-gap})`` bits: added to the precision.
    """
    need_bits = digits_to_bits(digits, 10)
    gap = min((b - a for a, b in zip(support, support[1:])), default=1)
    with flint.ctx.workprec(64):
        lost = -math.log2(-math.expm1(-gap * float(dom.loss_ball((1,), 64))))

    def attempt(prec: int) -> CertifiedRegion | None:
        with flint.ctx.workprec(prec):
            dist: dict[int, flint.arb] = {0: flint.arb(1)}
            for pld, count in kinds:
                base: dict[int, flint.arb] = {}
                for loss, m in pld.masses:
                    u = pld.domain.convert_loss(loss, dom)[0]
                    b = pld.domain.elem_ball(m, prec)
                    base[u] = base[u] + b if u in base else b
                dist = _sparse_power(base, count, dist)
            survive = flint.arb(1)
            for pld, count in kinds:  # each leak in its own field
                survive *= (1 - pld.domain.elem_ball(pld.leak, prec)) ** count
            leak = 1 - survive
            g = dom.loss_ball((1,), prec)
            pos = [u for u in reversed(support) if u >= 0]
            exps = [(u * g).exp() for u in pos]
            rows = suffix_deltas(
                pos,
                (dist[u] for u in pos),
                (dist[u] / e for u, e in zip(pos, exps)),  # P1(l) = e^{-l} P0(l)
                exps,
                leak,
                flint.arb(0),
            )
            if not all(v.is_zero() or v.rel_accuracy_bits() >= need_bits for _, v in rows):
                return None
            deltas = [val for _, val in reversed(rows)]
            pos.reverse()
            if not pos:
                return CertifiedRegion(dom, (dom.zero_loss(),), (leak,), prec)
            return CertifiedRegion(dom, tuple((u,) for u in pos), tuple(deltas), prec)

    return refine(
        attempt,
        start_prec=need_bits + 32 + max(c for _, c in kinds).bit_length() + max(0, math.ceil(lost)),
        failure=f"could not certify {digits} digits with {MAX_PREC_BITS} bits",
    )


def _prod_pow(items: list[tuple[QzElem, int]]) -> QzElem:
    out = QzElem.from_rational(1)
    for x, n in items:
        out = out * x**n
    return out


def _run(
    dom: ExpDomain,
    polys: list[tuple[list[QzElem], int]],
    leak: QzElem,
    center: int,
    support: bytes,
    prec: int,
    need_bits: int,
    progress: Progress | None,
) -> CertifiedRegion | None:
    with flint.ctx.workprec(prec):
        leak_b = dom.elem_ball(leak, prec)
        if 2 * center + 1 > _DIRECT_WIDTH:
            # binary powering and blockwise products lose ~log2(k) + 8 bits: compensate
            wprec = prec + sum(count for _, count in polys).bit_length() + 16
            balls = [([dom.elem_ball(c, wprec) for c in cs], count) for cs, count in polys]
            left = _tilted_masses(balls, center, support, prec, wprec, need_bits, progress)
        else:
            balls = [([dom.elem_ball(c, prec) for c in cs], count) for cs, count in polys]
            left = _direct_masses(balls, center, support, progress)
        if left is None:
            return None
        zero = flint.arb(0)
        e_g = dom.elem_ball(dom.exp_loss((1,)), prec)
        # P0(l) = e^{l} P0(-l) (symmetric pair); suffix sums from the top loss down to 0
        # over the support (elsewhere the masses are exactly 0 and change no sum)
        e_pows = [flint.arb(1)] * (center + 1)
        for i in range(1, center + 1):
            e_pows[i] = e_pows[i - 1] * e_g
        top = [u for u in range(center, -1, -1) if support[center + u]]
        p1 = [left[center - u] for u in top]  # P0(-l) = P1(l)
        rows = suffix_deltas(
            top,
            [e_pows[u] * m for u, m in zip(top, p1)],
            p1,
            (e_pows[u] for u in top),
            leak_b,
            zero,
        )
        for _, val in rows:
            if not val.is_zero() and val.rel_accuracy_bits() < need_bits:
                return None
        losses = [(u,) for u, _ in rows]
        deltas = [val for _, val in rows]
        if progress is not None:
            progress(1.0)
        deltas.reverse()
        losses.reverse()
        return CertifiedRegion(dom, tuple(losses), tuple(deltas), prec)


def _direct_masses(
    balls: list[tuple[list[flint.arb], int]],
    center: int,
    support: bytes,
    progress: Progress | None,
) -> list[flint.arb] | None:
    """P0-masses at the losses <= 0 (indices 0..center) from one Arb power product."""
    big_f = flint.arb_poly([1])
    for i, (coeffs, count) in enumerate(balls):
        big_f = big_f * flint.arb_poly(coeffs) ** count
        if progress is not None:
            progress(0.9 * (i + 1) / len(balls))
    coeffs_f = big_f.coeffs()
    zero = flint.arb(0)
    # exact structure: coefficients outside the support are exactly zero
    left = []
    for n in range(center + 1):
        if not support[n]:
            left.append(zero)
        elif not coeffs_f[n] > 0:
            return None  # a mass in the support is not yet certified positive
        else:
            left.append(coeffs_f[n])
    return left


# Tilted windowed powering: the large-k route (see the module docstring).
_DIRECT_WIDTH = 4001  # up to this many loss values (k = 1000 here) one Arb power is faster
_TRIM_EXTRA = 150  # bits below the working precision at which window tails are dropped


# Tilts are placed by a heuristic in low-precision mpmath (its own context, so the global
# mpmath precision is untouched); any exact t > 0 gives correct enclosures.
_H = mpmath.MPContext()
_H.dps = 20
Heur = Any  # an mpf of the heuristic context


def _log_weights(
    balls: list[tuple[list[flint.arb], int]],
) -> list[tuple[list[tuple[int, Heur]], int]] | None:
    """Per kind, (exponent, approximate log of the coefficient); only used to choose tilts."""
    out = []
    for coeffs, count in balls:
        items = []
        for s, c in enumerate(coeffs):
            if c.is_zero():
                continue
            if not c > 0:
                return None
            man, exp = c.log().mid().man_exp()
            items.append((s, _H.mpf((int(man), int(exp)))))
        out.append((items, count))
    return out


def _moments(kinds: list[tuple[list[tuple[int, Heur]], int]], u: Heur) -> tuple[Heur, Heur]:
    """Mean and variance of the exponent under the product tilted by e^u (heuristic)."""
    mean = var = _H.mpf(0)
    for items, count in kinds:
        top = max(lc + s * u for s, lc in items)
        w0 = w1 = w2 = _H.mpf(0)
        for s, lc in items:
            w = _H.exp(lc + s * u - top)
            w0 += w
            w1 += s * w
            w2 += s * s * w
        e = w1 / w0
        mean += count * e
        var += count * max(w2 / w0 - e * e, _H.mpf(0))
    return mean, var


def _solve_tilt(kinds: list[tuple[list[tuple[int, Heur]], int]], target: Heur) -> Heur:
    """Log t such that the tilted product has mean ``target`` (bisection, heuristic)."""
    lo, hi = _H.mpf(-1), _H.mpf(1)
    while _moments(kinds, lo)[0] > target and lo > -(10**7):
        lo *= 2
    while _moments(kinds, hi)[0] < target and hi < 10**7:
        hi *= 2
    for _ in range(70):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if _moments(kinds, mid)[0] < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _exact_tilt(u: Heur) -> flint.arb:
    """An exact dyadic number close to e^u (any exact t > 0 is valid)."""
    man, exp = _H.exp(u).man_exp
    # exact, but only for accuracy: a ball t would still give enclosures (every step
    # encloses the values at each point of it)
    return flint.arb(int(man)) * flint.arb(2) ** int(exp)


def _tilted_power(
    steps: list[tuple[flint.arb_poly, int]], thr: flint.arb
) -> tuple[int, list[flint.arb], flint.arb]:
    """Window of ``prod_j g_j^{k_j}`` for normalized step polynomials ``g_j`` (``g_j(1) = 1``).

    Returns ``(lo, balls, rho)``: for the exact product ``x`` there is a vector ``v`` with
    ``v_n`` in ``balls[n - lo]`` on the window and 0 outside, and ``||x - v||_1 <= rho``; so
    ``x_n`` lies in ``balls[n - lo] +- rho``.  Proof sketch of the invariant: the exact
    ``x``, ``y`` have ``||x||_1 = ||y||_1 = 1``; ``||x*y - v*w||_1 <= ||x - v|| ||y|| +
    ||v|| ||y - w||``, Arb's product contains ``v*w``, and coefficients dropped from the
    ends (each below ``thr`` in absolute value) add their absolute values to ``rho``.
    """
    nbits = max(count for _, count in steps).bit_length()
    big = flint.arb_poly([1])
    lo = 0
    rho = flint.arb(0)
    started = False

    def trim(
        poly: flint.arb_poly, lo: int, rho: flint.arb
    ) -> tuple[flint.arb_poly, int, flint.arb]:
        cs = poly.coeffs()
        a, b = 0, len(cs)
        dropped = flint.arb(0)
        while a < b - 1:
            u = cs[a].abs_upper()
            if not u < thr:
                break
            dropped += u
            a += 1
        while b - 1 > a:
            u = cs[b - 1].abs_upper()
            if not u < thr:
                break
            dropped += u
            b -= 1
        if a or b < len(cs):
            poly = flint.arb_poly(cs[a:b])
        return poly, lo + a, (rho + dropped).upper()

    for bit in range(nbits - 1, -1, -1):
        if started:
            big = big * big
            lo *= 2
            rho = (2 * rho + rho * rho).upper()  # ||v|| <= 1 + rho
            big, lo, rho = trim(big, lo, rho)
        for g, count in steps:
            if (count >> bit) & 1:
                big = big * g  # g holds the exact step in its balls: rho is unchanged
                started = True
                big, lo, rho = trim(big, lo, rho)
    return lo, big.coeffs(), rho


def _tilted_masses(
    balls: list[tuple[list[flint.arb], int]],
    center: int,
    support: bytes,
    prec: int,
    wprec: int,
    need_bits: int,
    progress: Progress | None,
) -> list[flint.arb] | None:
    """P0-masses at indices 0..center (losses <= 0) by exponentially tilted windows.

    For an exact dyadic ``t > 0`` the tilted steps ``g_j(w) = f_j(t w) / f_j(t)`` are
    probability vectors and ``prod_j g_j^{k_j}`` has coefficients ``c_n t^n / Z`` with
    ``Z = prod_j f_j(t)^{k_j}``: near its mean ``n0`` they are within a modest factor of
    the largest, so the power is computed on a window around ``n0`` (tails below
    ``2^-W`` dropped, their mass carried as a rigorous l1 bound ``rho``) by Arb at a
    fixed precision, costing O(sqrt(k)) coefficients per multiplication instead of O(k).
    Each window certifies the coefficients whose ball (widened by ``rho``) has the
    required relative accuracy; tilts are chosen (saddle point in low-precision mpmath:
    only a heuristic)
    until every index in the support up to ``center`` is certified.
    """
    kinds = _log_weights(balls)
    if kinds is None:
        return None
    acc = need_bits + 16  # relative accuracy asked of every mass
    trim_bits = 2 * prec - need_bits + _TRIM_EXTRA - 32
    left: list[flint.arb | None] = [None] * (center + 1)
    zero = flint.arb(0)
    current = 0
    reach = _H.sqrt(2 * _H.ln2 * max(trim_bits - acc - 20, 8))  # in std deviations
    retried = False
    with flint.ctx.workprec(wprec):
        thr = flint.arb(2) ** (-trim_bits)
        while True:
            while current <= center and (not support[current] or left[current] is not None):
                if not support[current]:
                    left[current] = zero
                current += 1
            if current > center:
                break
            if progress is not None:
                progress(0.9 * current / (center + 1))
            half = _H.mpf(1) / 2
            if retried:
                target = current + half
            else:
                var = _moments(kinds, _solve_tilt(kinds, current + half))[1]
                target = current + _H.mpf(1) / 2 + _H.mpf(9) / 10 * reach * _H.sqrt(var)
            u = _solve_tilt(kinds, min(target, center + half))
            t = _exact_tilt(u)
            steps = []
            zk = flint.arb(1)
            for coeffs, count in balls:
                tp = [c * t**s for s, c in enumerate(coeffs)]
                z = sum(tp, flint.arb(0))
                steps.append((flint.arb_poly([c / z for c in tp]), count))
                zk *= z**count
            lo, cs, rho = _tilted_power(steps, thr)
            widen = flint.arb(0, rho)
            hi = min(lo + len(cs) - 1, center)
            got_current = False
            last = current - 1
            for n in range(max(lo, current), hi + 1):
                if left[n] is not None or not support[n]:
                    continue
                x = cs[n - lo] + widen
                if x.rel_accuracy_bits() < acc:
                    if last >= current:
                        break
                    continue
                left[n] = x * zk * t ** (-n)
                got_current = got_current or n == current
                last = n
            if not got_current:
                if retried:
                    return None  # even a window centred on it is not accurate enough
                retried = True
                continue
            retried = False
            mean, var = _moments(kinds, u)
            if last < hi and var > 0:  # observed reach (right side) in std deviations
                reach = max((last - mean) / _H.sqrt(var), _H.mpf(1))
    return left  # type: ignore[return-value]


def stderr_progress(label: str) -> Progress | None:
    """A progress bar on stderr when it is a terminal, else None (silent)."""
    if not sys.stderr.isatty():
        return None

    def report(frac: float) -> None:
        width = 30
        done = int(frac * width)
        sys.stderr.write(f"\r{label} [{'#' * done}{' ' * (width - done)}] {frac * 100:5.1f}%")
        if frac >= 1.0:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return report
