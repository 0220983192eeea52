"""One use of subsampled Gaussian or Laplace noise: the closed form, certified in Arb.

One use of additive noise on a Poisson subsample of rate ``q`` has the dominating pair
``A = q P + (1 - q) Q``, ``B = Q`` (``Q`` the noise, ``P`` the noise shifted by the
sensitivity ``s``).  Its likelihood ratio ``r = 1 - q + q e^{beta(x)}`` is non-decreasing
in the output ``x``, so each hockey-stick divergence integrates over a half-line and is a
difference of two tails of the noise at the one crossing point (docs/theory.md, section
15, "One use: the closed form"):

* forward, ``t >= 0``, ``w = e^t - 1 + q = q e^beta``:
  ``H_{e^t}(A || B) = q S(x_beta - s) - w S(x_beta)``;
* reverse, ``t >= 0``, ``v = e^-t - 1 + q = q e^gamma`` (0 when ``v <= 0``):
  ``H_{e^t}(B || A) = e^t (v F(x_gamma) - q F(x_gamma - s))``;

``S`` and ``F`` the noise's survival and distribution functions, ``x_beta`` the output
where the base loss is ``beta``.  Both are evaluated in Arb, whose exponents are unbounded
(no underflow at any magnitude), at increasing precision until the ball is as narrow as
asked (:class:`~dpcompose_exact.numbers.value.Value` refines itself): the answer is
certified to any number of digits.  Below 0, ``delta_d(-t) = 1 - e^-t + e^-t delta_d'(t)``
(``d'`` the other direction) reads it from the non-negative side, so the part also serves
the conditioning sum next to finite pairs (section 19).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError
from ..numbers.certify import certified_sign
from ..numbers.convert import ball_end, erfc_ball, rational_ball
from ..numbers.forms import LinearForm
from ..numbers.value import Value
from .mixed import GaussianPart, MixedComposition
from .noiseloss import laplace_use_loss

__all__ = [
    "OneUsePart",
    "one_use_delta",
    "one_use_part",
]

_HALF = flint.arb(1) / 2


def _sf(kind: str, scale: flint.arb, x: flint.arb) -> flint.arb:
    """``Q(X > x)``: Gaussian by ``erfc``; Laplace on the side the caller has decided.

    The Gaussian's ``erfc`` is taken at the ball's two exact ends (``erfc_ball``): Arb's
    erfc of an inexact ball far in the tail has no relative accuracy.
    """
    if kind == "gaussian":
        return erfc_ball(x / (scale * flint.arb(2).sqrt())) / 2
    if x >= 0:
        return (-x / scale).exp() / 2
    if x < 0:
        return 1 - (x / scale).exp() / 2
    return flint.arb(0).union(flint.arb(1))  # undecided at this precision


def _cdf(kind: str, scale: flint.arb, x: flint.arb) -> flint.arb:
    """``Q(X <= x)`` from its own side (no cancellation in the lower tail)."""
    return _sf(kind, scale, -x)


def _x_of_beta(kind: str, shift: flint.arb, scale: flint.arb, beta: flint.arb) -> flint.arb:
    """The output where the base loss ``ln(p/q)`` equals ``beta`` (section 15)."""
    if kind == "gaussian":  # beta = (2 s x - s^2) / (2 sigma^2)
        return beta * scale * scale / shift + shift / 2
    return (beta * scale + shift) / 2  # Laplace, 0 < x < s: beta = (2 x - s) / b


def _undecided() -> flint.arb:
    return flint.arb(0).union(flint.arb(1))


def one_use_delta(noise: Any, q: Fraction, direction: str, t: flint.arb) -> flint.arb:
    """``H_{e^t}`` of one use of ``noise`` on a subsample of rate ``q``, any real ``t``.

    At the caller's working precision.  ``direction``: ``"fwd"`` (``A`` against ``B``) or
    ``"rev"``; ``t`` may be a ball (the divergence is monotone in ``t``: the result then
    contains every value on it, the endpoints evaluated apart).  A comparison the
    precision cannot decide gives the trivial ball ``[0, 1]``, which a higher precision
    narrows.
    """
    if not t.is_exact() and t.rad() > 0:  # monotone: enclose both ends
        lo, hi = t.lower(), t.upper()
        a, b = one_use_delta(noise, q, direction, hi), one_use_delta(noise, q, direction, lo)
        return a.union(b)
    if t < 0:  # delta_d(-s) = 1 - e^-s + e^-s delta_d'(s)
        other = "rev" if direction == "fwd" else "fwd"
        e = t.exp()
        return 1 - e + e * one_use_delta(noise, q, other, -t)
    if not t >= 0:
        return _undecided()
    kind = noise.kind
    s, c, qa = rational_ball(noise.shift), rational_ball(noise.scale), rational_ball(q)
    top = s / c if kind == "laplace" else None  # the base loss's largest value (Laplace)
    if direction == "fwd":
        w = t.expm1() + qa  # q e^beta, beta >= 0
        beta = (w / qa).log()
        if top is not None:
            if beta >= top:
                return flint.arb(0)
            if not beta < top:
                return _undecided()
        x = _x_of_beta(kind, s, c, beta)
        return qa * _sf(kind, c, x - s) - w * _sf(kind, c, x)
    v = (-t).expm1() + qa  # q e^gamma, gamma <= 0
    if v <= 0:
        return flint.arb(0)
    if not v > 0:
        return _undecided()
    gamma = (v / qa).log()
    if top is not None:
        if gamma <= -top:
            return flint.arb(0)
        if not gamma > -top:
            return _undecided()
    x = _x_of_beta(kind, s, c, gamma)
    return t.exp() * (v * _cdf(kind, c, x) - qa * _cdf(kind, c, x - s))


class OneUsePart(GaussianPart):
    """One use of subsampled Gaussian or Laplace noise as the noise part of a composition.

    Like :class:`~dpcompose_exact.engines.mixed.GaussianPart` a closed form evaluated in
    Arb at any precision (kind ``certified``: the answers refine themselves to any number
    of digits), but with two directions (the rate makes the pair asymmetric).  The queries
    (``delta_value``, ``epsilon``) are the Gaussian part's, read through :meth:`ball`; the
    two ends of ``delta_bounds`` are read at a precision where the ball is relatively
    narrow, so a tiny value keeps a positive lower end.

    Args:
        noise: the :class:`~dpcompose_exact.mechanisms.noise.AdditiveNoise`.
        q: the sampling rate in ``(0, 1]``.
    """

    directions = ("fwd", "rev")
    summary = "one use of subsampled noise: the one-use closed form (certified)"

    def __init__(self, noise: Any, q: Fraction) -> None:
        if not 0 < q <= 1:
            raise InvalidParameterError(f"sampling probability q = {q} must lie in (0, 1]")
        self.noise, self.q = noise, Fraction(q)

    def describe(self) -> str:
        """``one use of <noise> subsampled at q``."""
        return f"one use of {self.noise!r} subsampled at {self.q}"

    def ball(self, comp: MixedComposition, eps: flint.arb | Fraction, prec: int) -> flint.arb:
        """``delta(eps)`` of the conditioning sum at ``prec`` bits (the larger direction)."""
        best = None
        for finite_direction, direction in comp.direction_pairs():
            leak, atoms = comp.finite.balls(prec, finite_direction)
            with flint.ctx.workprec(prec):
                at = rational_ball(eps) if isinstance(eps, Fraction) else eps
                total = leak
                for loss, mass in atoms:
                    total += mass * one_use_delta(self.noise, self.q, direction, at - loss)
                best = total if best is None else best.max(total)
        return best  # type: ignore[return-value]

    def delta_value(self, comp: MixedComposition, form: LinearForm) -> Value:
        """``delta(eps)``: exactly 0 at or above the largest loss, else the refining closed form.

        Laplace noise bounds the base loss by ``top = s / b``, so the pair's loss is at most
        ``log(1 - q + q e^top)`` forward and ``-log(1 - q + q e^-top)`` in reverse; at an
        ``eps`` at or above both ``delta`` is 0, which balls never certify: that is decided
        by :func:`~dpcompose_exact.numbers.certify.certified_sign` (the two cannot be
        equal when ``q < 1``: ``e^top`` is transcendental, Lindemann-Weierstrass; docs/theory.md,
        section 15, "One use: the closed form").
        """
        if self.noise.kind == "laplace" and getattr(comp.finite, "region", 0) is None:
            top = Fraction(self.noise.shift) / Fraction(self.noise.scale)

            def gap(prec: int) -> flint.arb:  # eps minus the larger of the two largest losses
                with flint.ctx.workprec(prec + 16):
                    qa, t = rational_ball(self.q), rational_ball(top)
                    fwd = (qa * t.expm1()).log1p()
                    rev = -(qa * (-t).expm1()).log1p()
                    return form.ball(prec + 16) - fwd.max(rev)

            if certified_sign(gap, False, "eps minus the largest loss") >= 0:
                return Value.from_rational(0)
        return super().delta_value(comp, form)

    def largest_loss(self, direction: str) -> Value | None:
        """The largest loss of the use in ``direction``; None for Gaussian noise (unbounded).

        Laplace noise: ``log(1 - q + q e^top)`` forward, ``-log(1 - q + q e^-top)`` in
        reverse, ``top = s / b`` (:func:`~.noiseloss.laplace_use_loss`), refining itself.
        """
        if self.noise.kind != "laplace":
            return None
        top = Fraction(self.noise.shift) / Fraction(self.noise.scale)

        def evaluate(prec: int) -> flint.arb:
            with flint.ctx.workprec(prec + 16):
                ball = laplace_use_loss(top, self.q, direction)
            with flint.ctx.workprec(prec):
                return +ball

        return Value(evaluate, nonnegative=True)

    def _tight(self, comp: MixedComposition, eps: flint.arb | Fraction, bits: int) -> flint.arb:
        """:meth:`ball` at the first precision from 128 bits that is relatively accurate.

        Accurate: at least ``bits`` bits, or the ball is exactly 0; up to ``2^14`` bits.
        """
        prec = 128
        while True:
            ball = self.ball(comp, eps, prec)
            if ball.is_exact() or ball.rel_accuracy_bits() >= bits or prec >= 1 << 14:
                return ball
            prec *= 2

    def delta_bounds(
        self, comp: MixedComposition, eps: Fraction, sides: str = "both"
    ) -> tuple[Fraction, Fraction]:
        """``(lower, upper)`` rationals enclosing ``delta(eps)``, relatively to 2^-60."""
        ball = self._tight(comp, eps, 60)
        return max(Fraction(0), ball_end(ball, up=False)), min(Fraction(1), ball_end(ball))


def one_use_part(pair: Any) -> OneUsePart | None:
    """The closed-form part of a loss pair that is one subsampled noise (rate below 1).

    None for anything else: plain noise (its own routes), a random allocation's epoch.
    """
    from ..regions.protocol import GridEntry, PairForm

    if pair.form is not PairForm.NOISE or pair.grid_entry() is not GridEntry.NOISE:
        return None
    if pair.rate >= 1:
        return None
    return OneUsePart(pair.grid_noise().noise, pair.rate)


#: the far tail: a ``delta`` (or an upper bound of it) below this is answered by the
