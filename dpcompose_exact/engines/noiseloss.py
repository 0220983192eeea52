"""The largest privacy loss of noise: ``eps(0)`` of Laplace uses, subsampled or not.

The losses of independent uses add, and each use's largest loss is reached with positive
probability, so ``k_i`` uses of pairs whose largest losses are ``l_i`` have the largest loss
``sum_i k_i l_i`` (docs/theory.md, section 15; section 19 for ``eps(0)`` of a mixed list,
the finite part's largest loss plus this).  Gaussian noise has none (its loss is unbounded).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import flint

from ..numbers.convert import rational_ball
from ..numbers.value import Value
from ..regions.protocol import GridEntry, NoiseKind, NoisePair

__all__ = ["laplace_use_loss", "largest_noise_loss"]


def laplace_use_loss(eps0: Fraction, q: Fraction, direction: str) -> flint.arb:
    """The largest loss of one use of Laplace noise (``eps0 = s / b``) on a rate-``q`` subsample.

    At the caller's working precision.  The pair is ``A = q P + (1 - q) Q`` against
    ``B = Q``, and the base loss ``ln(P/Q)`` lies in ``[-eps0, eps0]`` and takes both ends
    with positive probability (on half-lines; docs/theory.md, section 15), so the largest loss
    is ``log(1 - q + q e^eps0)`` forward (``"fwd"``, also ``"both"``) and
    ``-log(1 - q + q e^-eps0)`` in reverse; the forward one is the larger (their
    arguments multiply to ``1 + q (1 - q)(x + 1/x - 2) >= 1``, ``x = e^eps0``), both
    ``eps0`` at ``q = 1``.
    """
    qa, t = rational_ball(q), rational_ball(eps0)
    if direction == "rev":
        return -(qa * (-t).expm1()).log1p()
    return (qa * t.expm1()).log1p()


def largest_noise_loss(noise: Sequence[tuple[Any, int]], direction: str) -> Value | None:
    """``sum_i k_i l_i``: the largest loss of ``k_i`` uses of each noise pair, or None.

    ``noise``: ``[(loss pair, count), ...]``.  The losses of independent uses add, and each
    use's largest loss is reached with positive probability, so the sum is the largest
    loss of the composition in ``direction`` (:func:`laplace_use_loss`: Laplace noise on
    a Poisson subsample, any rate).  None when a pair's loss is unbounded (Gaussian noise)
    or not known here (a random allocation, a mixture).  Exact (a rational, ``sum k_i
    eps0_i``) without subsampling, else a certified Value that refines itself.
    """
    rational = Fraction(0)
    subsampled: list[tuple[int, Fraction, Fraction]] = []
    for lp, n in noise:
        match lp:
            case NoisePair(kind=NoiseKind.LAPLACE, mu=eps0, rate=q, entry=GridEntry.NOISE):
                if q == 1:
                    rational += n * eps0
                else:
                    subsampled.append((n, eps0, q))
            case _:
                return None
    if not subsampled:
        return Value.from_rational(rational)

    def evaluate(prec: int) -> flint.arb:
        work = prec + 32
        with flint.ctx.workprec(work):
            total = rational_ball(rational)
            for n, eps0, q in subsampled:
                total += n * laplace_use_loss(eps0, q, direction)
        with flint.ctx.workprec(prec):
            return +total

    return Value(evaluate, nonnegative=True)
