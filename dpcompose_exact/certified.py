"""Certified composition for large k: exact structure, ball-arithmetic values.

When the exact k-fold polynomial would not fit in memory, the same region is computed with
Arb balls (MATH.md section 3 with a different evaluation strategy):

* **Structure, exactly.** The loss values of the composed pair are the k-fold sumsets of
  the one-step supports, computed with integers (a bitset per shift); the output has one
  constraint per loss value >= 0, as in the exact route.
* **Masses, with relative accuracy.** With one generator each one-step generating
  polynomial ``f_j(w)`` (shifted to start at ``w^0``) becomes an Arb polynomial and
  ``F = prod_j f_j^{k_j}`` is computed by binary powering.  Arb multiplies polynomials
  blockwise (coefficients of similar magnitude together), so every coefficient keeps its
  own relative accuracy even though they span thousands of orders of magnitude; all
  coefficients are positive, so nothing cancels.  (J.C.P. Miller's O(k) recurrence for
  ``f^k`` was tried first: it is unstable here, losing about 5 bits per step.)
* **Deltas without cancellation.** ``delta(l) = leak + S0(l) - e^l S1(l)`` with suffix sums
  ``S0 = sum_{l'>l} P0(l')`` and ``S1 = sum_{l'>l} P0(-l')``; since ``l' >= l + g`` the
  subtraction loses at most ``-log2(1 - e^{-g})`` bits.

Every ball is checked at the end: if any delta has fewer correct bits than the requested
digits need, the whole computation is repeated at twice the precision.  The printed digits
are then guaranteed (one unit in the last place), like the exact route's.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import flint

from .errors import CertificationError, InvalidParameterError, ResourceLimitError
from .numbers import MAX_PREC_BITS, ExpDomain, Loss, QzElem, _prec, ball_to_decimal
from .pld import PLD

__all__ = ["CertifiedRegion", "compose_certified", "CERTIFIED_TERM_LIMIT"]

CERTIFIED_TERM_LIMIT = 500_001  # loss values; time grows ~quadratically (k = 10^5: ~8 min)

Progress = Callable[[float], None]


@dataclass(frozen=True)
class CertifiedRegion:
    """A composed region with exact losses and certified ball deltas.

    Attributes:
        domain: the exact domain (one generator).
        losses: the loss values >= 0 (exact), increasing.
        deltas: Arb balls containing the exact deltas, aligned with ``losses``.
        prec: the working precision (bits) that certified them.
    """

    domain: ExpDomain
    losses: tuple[Loss, ...]
    deltas: tuple[flint.arb, ...]
    prec: int

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


def _support(kinds: Sequence[tuple[list[int], int]]) -> int:
    """Bitset of the k-fold sumset (offsets from the lowest total), exact integers."""
    reach = 1
    for offsets, count in kinds:
        for _ in range(count):
            acc = 0
            for s in offsets:
                acc |= reach << s
            reach = acc
    return reach


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
    kinds = [(p.in_domain(dom), c) for p, c in kinds]
    polys = []
    total_lo = 0
    for pld, count in kinds:
        lo, coeffs = _kind_poly(pld)
        if lo != -(lo + len(coeffs) - 1):
            raise InvalidParameterError("certified mode needs symmetric pairs (P1(l) = P0(-l))")
        polys.append((coeffs, count))
        total_lo += count * lo
    width = -2 * total_lo + 1
    if width > CERTIFIED_TERM_LIMIT:
        raise ResourceLimitError(
            f"the composed pair has {width} loss values, over the certified-mode limit of "
            f"{CERTIFIED_TERM_LIMIT}; use a smaller k"
        )
    support = _support(
        [([i for i, c in enumerate(coeffs) if not c.is_zero()], count) for coeffs, count in polys]
    )
    leak = 1 - _prod_pow([(1 - p.leak, c) for p, c in kinds])
    center = -total_lo  # index of loss 0
    need_bits = int(digits * 3.33) + 10
    prec = need_bits + 32
    while prec <= MAX_PREC_BITS:
        result = _run(dom, polys, leak, center, support, prec, need_bits, progress)
        if result is not None:
            return result
        prec *= 2
    raise CertificationError(f"could not certify {digits} digits with {MAX_PREC_BITS} bits")


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
    support: int,
    prec: int,
    need_bits: int,
    progress: Progress | None,
) -> CertifiedRegion | None:
    with _prec(prec):
        leak_b = dom.elem_ball(leak, prec)
        big_f = flint.arb_poly([1])
        for i, (coeffs, count) in enumerate(polys):
            f = flint.arb_poly([dom.elem_ball(c, prec) for c in coeffs])
            big_f = big_f * f**count
            if progress is not None:
                progress(0.9 * (i + 1) / len(polys))
        coeffs_f = big_f.coeffs()
        zero = flint.arb(0)
        # exact structure: coefficients outside the support are exactly zero
        left = []
        for n in range(center + 1):
            if not (support >> n) & 1:
                left.append(zero)
            elif not coeffs_f[n] > 0:
                return None  # a mass in the support is not yet certified positive
            else:
                left.append(coeffs_f[n])
        e_g = dom.elem_ball(dom.exp_loss((1,)), prec)
        # P0(l) = e^{l} P0(-l) (symmetric pair); suffix sums from the top loss down to 0
        e_pows = [flint.arb(1)] * (center + 1)
        for i in range(1, center + 1):
            e_pows[i] = e_pows[i - 1] * e_g
        s0 = s1 = zero
        deltas: list[flint.arb] = []
        losses: list[Loss] = []
        for l_units in range(center, -1, -1):
            p0_minus = left[center - l_units]  # P0(-l) = P1(l)
            if (support >> (center + l_units)) & 1:
                val = leak_b + s0 - e_pows[l_units] * s1
                if not val.is_zero() and val.rel_accuracy_bits() < need_bits:
                    return None
                deltas.append(val)
                losses.append((l_units,))
            s0 += e_pows[l_units] * p0_minus
            s1 += p0_minus
        if progress is not None:
            progress(1.0)
        deltas.reverse()
        losses.reverse()
        return CertifiedRegion(dom, tuple(losses), tuple(deltas), prec)


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
