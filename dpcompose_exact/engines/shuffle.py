"""Chua et al.'s cube test for shuffled batches, certified (docs/theory.md, section 21).

Shuffle-and-iterate training over ``k`` batches per epoch, with the gradients of every
record but one at ``-1`` and the differing record at ``+1`` in one dataset, has outputs
(centred on the other records' sum, in units of the clipping norm) ``P = MoG(2)``, with
``MoG(m) = (1/k) sum_t N(m e_t, sigma^2 I_k)``; the neighbour whose record is ``-1`` gives
``Q = MoG(0) = N(0, sigma^2 I_k)`` (the replace-one pair) and the one whose record is ``0``
gives ``Q = MoG(1)`` (Chua et al.'s zero-out pair; both are replace-one neighbours).  A test
``E`` bounds ``delta(eps) >= A(E) - e^eps B(E)`` for both orders ``(A, B)`` of a pair, and
then ``eps(delta) >= ln((A(E) - delta) / B(E))`` whenever ``A(E) > delta``.

The tests here (section 21, "Shuffling, the cube test certified"): in each epoch the event
``{max_t y_t > C}`` (forward: ``A = P``) or ``{max_t y_t <= C}`` (reverse: ``A = Q``), whose
masses are closed forms,

    P(max_t y_t <= C) = Phi((C - m) / sigma) Phi(C / sigma)^(k - 1)   under MoG(m),

and over ``E`` epochs (fresh shuffles: independent) the event that at least ``j`` epochs
are in it: seeing only each epoch's indicator is a post-processing, and the count is
binomial.  The test ``(C, j)`` is chosen in floats (a choice only); its two masses are
then Arb balls (the logs of the normal CDFs by ``log1p`` of the smaller tail, the
complement by ``expm1``: no cancellation however deep the tail), and the bounds read their
lower ends.  At ``E = 1``, ``j = 1`` and the forward zero-out pair this is the test of the
authors' code (google-research ``dpsgd_batch_sampler_accounting``), there in float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint

from ..numbers.convert import ball_end, rational_ball

__all__ = ["CubeTest", "PAIRS", "cube_delta", "cube_epsilon", "cube_masses"]

#: the two pairs of datasets: name -> (shift of P, shift of Q), in clipping norms
PAIRS = {"replace-one": (2, 0), "zero-out": (2, 1)}
#: the caps C / sigma scanned in floats: this step, then a finer one around the best
Z_STEP = 0.01
Z_FINE = 1e-5
#: the count thresholds j tried over E epochs: at most this many, spread over 1..E
MAX_COUNTS = 256
_PREC = 128


@dataclass(frozen=True)
class CubeTest:
    """One test: ``j`` of the ``E`` epochs have ``max_t y_t > cap`` (forward) or ``<=``.

    Attributes:
        pair: ``"replace-one"`` or ``"zero-out"`` (:data:`PAIRS`).
        cap: the cap ``C`` (in clipping norms).
        count: the threshold ``j`` on the number of epochs in the event.
        forward: ``A = P = MoG(2)`` and the event above the cap; else ``A = Q``, below.
    """

    pair: str
    cap: Fraction
    count: int
    forward: bool

    def describe(self) -> str:
        """``max_t y_t > 3.1325 in >= 1 of 1 epochs (replace-one pair)``, for reports."""
        op = ">" if self.forward else "<="
        return f"max_t y_t {op} {float(self.cap):.6g} in >= {self.count} epochs ({self.pair} pair)"


def _log_phi(x: flint.arb) -> flint.arb:
    """``ln Phi(x)``, relatively accurate on both sides (from the smaller tail)."""
    r2 = flint.arb(2).sqrt()
    if x.mid() > 0:
        return (-(x / r2).erfc() / 2).log1p()
    return ((-x / r2).erfc() / 2).log()


def _binomial_tail(p: flint.arb, p_not: flint.arb, n: int, j: int) -> flint.arb:
    """``P(Binomial(n, p) >= j)``, with ``p_not = 1 - p`` given as its own ball."""
    if j <= 0:
        return flint.arb(1)
    total = flint.arb(0)
    for i in range(j, n + 1):
        total += math.comb(n, i) * p**i * p_not ** (n - i)
    return total


def cube_masses(
    sigma: Fraction, steps: int, epochs: int, test: CubeTest, prec: int = _PREC
) -> tuple[flint.arb, flint.arb]:
    """``(A(E), B(E))`` of a test, as Arb balls (section 21)."""
    mu_p, mu_q = PAIRS[test.pair]
    with flint.ctx.workprec(prec):
        s, c = rational_ball(sigma), rational_ball(test.cap)
        rest = (steps - 1) * _log_phi(c / s)
        log_in_p = _log_phi((c - mu_p) / s) + rest
        log_in_q = _log_phi((c - mu_q) / s) + rest
        if test.forward:  # A = P, B = Q, the event max > C: 1 - e^L by expm1
            a, a_not = -log_in_p.expm1(), log_in_p.exp()
            b, b_not = -log_in_q.expm1(), log_in_q.exp()
        else:  # A = Q, B = P, the event max <= C
            a, a_not = log_in_q.exp(), -log_in_q.expm1()
            b, b_not = log_in_p.exp(), -log_in_p.expm1()
        return (
            _binomial_tail(a, a_not, epochs, test.count),
            _binomial_tail(b, b_not, epochs, test.count),
        )


def _candidates(
    sigma: float, steps: int, epochs: int, pair: str, z: Any
) -> list[tuple[bool, Any, Any, Any]]:
    """For each direction: the caps, the counts and the log masses ``ln A``, ``ln B``."""
    import numpy as np
    from scipy import special, stats

    mu_p, mu_q = PAIRS[pair]
    caps = sigma * z
    rest = (steps - 1) * special.log_ndtr(z)
    lp = special.log_ndtr((caps - mu_p) / sigma) + rest
    lq = special.log_ndtr((caps - mu_q) / sigma) + rest
    counts = np.unique(np.linspace(1, epochs, min(epochs, MAX_COUNTS)).round().astype(int))
    out = []
    for forward in (True, False):
        if forward:
            a, b = -np.expm1(lp), -np.expm1(lq)
        else:
            a, b = np.exp(lq), np.exp(lp)
        with np.errstate(divide="ignore"):
            la = stats.binom.logsf(counts[None, :] - 1, epochs, a[:, None])
            lb = stats.binom.logsf(counts[None, :] - 1, epochs, b[:, None])
        out.append((forward, caps, counts, (la, lb)))
    return out


def _choose(
    sigma: Fraction, steps: int, epochs: int, pair: str, score: Any
) -> CubeTest | None:
    """The test of the largest float ``score(ln A, ln B)``, the cap refined (a choice)."""
    import numpy as np

    s = float(sigma)
    mu_p = PAIRS[pair][0]
    top = mu_p / s + 12.0
    best: tuple[float, bool, float, int] | None = None
    for z in (np.arange(-12.0, top, Z_STEP), None):
        if z is None:  # refine around the best cap
            if best is None:
                return None
            z0 = best[2] / s
            z = np.arange(z0 - 2 * Z_STEP, z0 + 2 * Z_STEP, Z_FINE)
        for forward, caps, counts, (la, lb) in _candidates(s, steps, epochs, pair, z):
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                val = score(la, lb)
            val = np.where(np.isfinite(val), val, -np.inf)
            i = np.unravel_index(int(np.argmax(val)), val.shape)
            if np.isfinite(val[i]) and (best is None or val[i] > best[0]):
                best = (float(val[i]), forward, float(caps[i[0]]), int(counts[i[1]]))
    if best is None:
        return None
    cap = Fraction(round(best[2] * 10**6), 10**6)
    return CubeTest(pair, cap, best[3], best[1])


def cube_delta(
    sigma: Fraction, steps: int, epochs: int, eps: Any, pair: str = "replace-one"
) -> tuple[Fraction, CubeTest | None]:
    """A certified lower bound on ``delta(eps)`` of shuffled training, and its test.

    ``eps`` is a :class:`~dpcompose_exact.numbers.forms.LinearForm` (or a rational).  The
    bound is the lower end of the ball of ``A(E) - e^eps B(E)`` (0 when no test helps).
    """
    import numpy as np

    e_f = float(eps.ball(64).mid()) if hasattr(eps, "ball") else float(eps)

    def score(la: Any, lb: Any) -> Any:
        return np.exp(la) - np.exp(np.minimum(e_f + lb, 700.0))

    test = _choose(sigma, steps, epochs, pair, score)
    if test is None:
        return Fraction(0), None
    a, b = cube_masses(sigma, steps, epochs, test)
    with flint.ctx.workprec(_PREC):
        e = eps.ball(_PREC) if hasattr(eps, "ball") else rational_ball(Fraction(eps))
        value = ball_end(a - e.exp() * b, up=False)
    return (value, test) if value > 0 else (Fraction(0), None)


def cube_epsilon(
    sigma: Fraction, steps: int, epochs: int, delta: Fraction, pair: str = "replace-one"
) -> tuple[Fraction | None, CubeTest | None]:
    """A certified lower bound on ``eps(delta)`` of shuffled training, and its test.

    The lower end of the ball of ``ln((A(E) - delta) / B(E))`` when ``A(E) > delta`` is
    certified and the bound is positive; ``(None, None)`` when no test gives one.
    """
    import numpy as np

    d_f = float(delta)

    def score(la: Any, lb: Any) -> Any:
        return np.log(np.exp(la) - d_f) - lb

    test = _choose(sigma, steps, epochs, pair, score)
    if test is None:
        return None, None
    a, b = cube_masses(sigma, steps, epochs, test)
    with flint.ctx.workprec(_PREC):
        gap = a - rational_ball(delta)
        if not gap > 0 or not b > 0:
            return None, None
        value = ball_end((gap / b).log(), up=False)
    return (value, test) if value > 0 else (None, None)
