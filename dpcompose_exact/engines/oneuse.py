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

import math
from fractions import Fraction
from math import comb
from typing import Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers.certify import certified_sign
from ..numbers.convert import ball_end, erfc_ball, parse_delta, parse_eps, rational_ball
from ..numbers.forms import LinearForm
from ..numbers.value import Value
from .bounds import EnclosureRows
from .mixed import GaussianPart, MixedComposition
from .noiseparts import gaussian_delta_at, laplace_use_loss, largest_noise_loss
from .result_interface import Exactness

__all__ = [
    "FarTails",
    "HoeffdingEnds",
    "OneUsePart",
    "far_tails",
    "hoeffding_ends",
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
        reverse, ``top = s / b`` (:func:`~.noiseparts.laplace_use_loss`), refining itself.
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
#: bracket of :class:`FarTails` (the loss grid's doubles end near ``1e-308``)
FAR_TAIL = Fraction(1, 10**300)
#: below this crude bound the bracket answers whatever its width: the grid's split resolves
#: values down to about 1e-12000 (tighter than the bracket) but overflows far below
_BEYOND_GRID = flint.arb(10) ** -1000000
#: below this crude bound the bracket itself is computed to decide (a few ms per query)
_MAYBE_FAR = Fraction(1, 10**100)
#: ``(s / sigma)^2`` above this: one use's loss saturates (no loss grid holds it)
SATURATED_MU2 = Fraction(10**300)
#: ``(s / sigma)^2`` below this: the grid's doubles cannot resolve one use's loss
TINY_MU2 = Fraction(1, 10**200)
#: the bracket sums one term per number of sampled uses, up to this many
FAR_TERMS = 4096
#: ... and the bracket replaces the grid only within this relative width (the delta goal)
_TIGHT = flint.arb(1) / 1000
#: a far-tail query (the bracket below :data:`FAR_TAIL`) goes to the bracket whatever its
#: width when one use's deep grid holds more cells than this: the grid's deep folds then
#: take minutes (``gaussian(1)@1e-3:10`` at eps 100: 316328 cells, no answer in 90 s)
DEEP_CELLS = 100_000
#: the integer Renyi orders of the bracket's moment bound
_ORDERS = sorted({int(2 ** (i / 2)) + 1 for i in range(2, 21)})


class FarTails(EnclosureRows):
    """``k >= 2`` uses of subsampled Gaussian noise: the far tails and saturated losses.

    Of ``k`` uses at rate ``q < 1`` and ``mu = s / sigma``, ``A = q P + (1 - q) Q`` and
    ``B = Q`` per use, ``A^k`` mixes over the set ``S`` of sampled uses, ``|S| = m`` with
    weight ``w_m = C(k, m) q^m (1 - q)^(k - m)``; on ``S`` the outputs follow ``P``, the
    others ``Q`` (docs/theory.md, section 15, "One use: the closed form"):

    * upper: the hockey-stick divergence is convex in its first argument, and ``P^S Q^S'``
      against ``Q^k`` is ``G_{mu sqrt m}``: ``delta_fwd(eps) <= sum_{m>=1} w_m
      delta_G(eps; m mu^2)``; the terms past :data:`FAR_TERMS` are at most their weights;
      in reverse the same sum (the divergence is jointly convex and ``G`` symmetric), and
      every loss is at least ``log(1 - q)``: ``delta_rev(eps) <= (1 - e^eps (1 - q)^k)_+``;
      forward also the moment bound of integer Renyi orders (:meth:`_chernoff`);
    * lower: a use's loss ``log(1 - q + q e^beta)`` is at least ``log q + beta`` and at
      least ``log(1 - q)``, and ``(1 - e^(eps - L))_+`` increases in ``L``; given ``S``,
      the ``beta`` of ``S`` sum to the loss of ``G_{mu sqrt m}``:
      ``delta(eps) >= sum_m w_m delta_G(eps - c_m; m mu^2)``,
      ``c_m = m log q + (k - m) log(1 - q)``.

    The two ends differ only by the shift ``c_m``: far in the tail (a ``delta`` below
    :data:`FAR_TAIL`, where the grid's doubles end) they share the leading exponent, and
    when the loss saturates (``mu^2`` past :data:`SATURATED_MU2`, where no grid holds one
    use) both are ``1 - (1 - q)^k`` to within ``e^(-mu^2/8)``.  Below :data:`TINY_MU2`
    (where the grid's doubles cannot resolve one use) the bracket answers too, its lower
    end also at least one use's closed form (:func:`one_use_delta`: the other uses'
    outputs dropped) and the bound of the sum of the outputs (:meth:`_sum_lower`).  A
    loss grid refused for its size leaves every query to the bracket.  Elsewhere the
    loss grid answers (built on first use).

    Args:
        grid: builds the loss grid's result (called at most once).
        noise: the Gaussian :class:`~dpcompose_exact.mechanisms.noise.AdditiveNoise`.
        q: the rate, in ``(0, 1)``.
        k: the number of uses, at least 2.
        label: what was composed, for ``repr``.
    """

    kind = Exactness.BOUNDS
    no_list = "a composition with noise mechanisms has no single constraint list"

    def __init__(self, grid: Any, noise: Any, q: Fraction, k: int, label: str = "") -> None:
        self._make_grid, self._grid = grid, None
        self.noise, self.q, self.k, self.label = noise, Fraction(q), int(k), label
        self.mu2 = (Fraction(noise.shift) / Fraction(noise.scale)) ** 2
        self.saturated = self.mu2 > SATURATED_MU2
        self._cache: dict[Fraction, tuple[flint.arb, flint.arb]] = {}
        self._moments: dict[int, list[tuple[int, flint.arb]]] = {}
        self._refused = False
        self._answered: set[str] = set()  # "bracket", "grid", "both": who answered

    @property
    def grid(self) -> Any:
        """The loss grid's result, built on first use."""
        if self._grid is None:
            self._grid = self._make_grid()
        return self._grid

    def _grid_or_none(self) -> Any:
        """The loss grid's result, or None when it is refused for its size.

        The bracket then answers every query: a certified enclosure rather than a refusal.
        """
        if self._refused:
            return None
        try:
            return self.grid
        except ResourceLimitError:
            self._refused = True
            return None

    def _bracket_at(self, eps: Fraction, prec: int) -> tuple[flint.arb, flint.arb]:
        k, top = self.k, min(self.k, FAR_TERMS)
        with flint.ctx.workprec(prec):
            qa, ee = rational_ball(self.q), rational_ball(eps)
            log_q, log_1q = qa.log(), (-qa).log1p()
            w0 = (log_1q * k).exp()
            w, upper, lower, weights = w0, flint.arb(0), flint.arb(0), flint.arb(0)
            ratio = qa / (1 - qa)
            cut = flint.arb(2) ** -70
            rest = None  # a bound on the weights of the terms left out
            levels: list[tuple[int, flint.arb]] = []  # (m, w_m) of the terms summed
            for m in range(1, top + 1):
                w = w * ratio * (k - m + 1) / m
                weights += w
                levels.append((m, w))
                upper += w * gaussian_delta_at(m * self.mu2, ee)
                shift = m * log_q + (k - m) * log_1q
                lower += w * gaussian_delta_at(m * self.mu2, ee - shift)
                if m < k and ratio * (k - m - 1) / (m + 2) < _HALF:
                    # the weights after m fall by half or more at each step: their sum is
                    # at most twice the next one; stop once that is negligible here
                    tail = 2 * w * ratio * (k - m) / (m + 1)
                    if tail < upper.lower() * cut:
                        rest = tail
                        break
            if rest is None and top < k:  # the other terms: at most their weights
                rest = (1 - w0 - weights).max(flint.arb(0))
            if rest is not None:
                upper += rest
            fwd = upper if self.saturated else upper.min(self._chernoff(ee, qa, log_1q))
            split = self._split_upper(ee, w0, levels)
            if split is not None:
                fwd = fwd.min(split + (rest if rest is not None else 0))
            # k uses give at least what one gives (the others' outputs dropped)
            lower = lower.max(one_use_delta(self.noise, self.q, "fwd", ee))
            if self.mu2 < TINY_MU2 and k <= FAR_TERMS:
                lower = lower.max(self._sum_lower(ee, qa))
            return lower, fwd.max(upper.min(1 - ee.exp() * w0))

    def _split_upper(
        self, ee: flint.arb, w0: flint.arb, levels: list[tuple[int, flint.arb]]
    ) -> flint.arb | None:
        """The convex bound with ``Q^k`` split unevenly over the sets of sampled uses.

        For any ``C_m >= 0`` with ``C_0 + sum_m C_m <= 1``, ``Q^k = sum_S c_S Q^k + rest``
        (``c_S = C_m / C(k, m)`` on each set of ``m`` uses), and ``(a + b)_+ <= a_+ + b_+``
        gives ``delta_fwd(eps) <= (w_0 - e^eps C_0)_+ + sum_m w_m delta_G(eps + log(C_m /
        w_m); m mu^2)`` (``C_m = w_m`` is the plain convex bound).  The best split meets
        ``e^eps Phibar(z_m) = lambda`` (``z_m = (eps_m + v_m/2)/sqrt v_m``, ``v_m = m mu^2``)
        at every ``m``: one ``z`` for all, found in doubles (a guide only: any feasible
        split is a bound), ``C_0 = w_0 e^-eps``; far in the tail the most likely set then
        pays ``log(1/w_m)`` in ``eps``, as the lower end's shift ``c_m`` does
        (docs/theory.md, section 15, "One use: the closed form").  None when the split's
        sum is not certified at most 1.  The terms left out (``m`` past the sum) are
        added by the caller at their weights (``C_m = 0``).
        """
        import numpy as np

        if not levels or not TINY_MU2 <= self.mu2 <= SATURATED_MU2:
            return None  # (no double holds mu^2 there; the other bounds answer)
        # a little above w_0 e^-eps: its term (w_0 - e^eps C_0)_+ is certified 0
        c0 = (w0 * (-ee).exp() * (1 + flint.arb(2) ** -40)).upper()
        budget = float((1 - c0).mid()) * (1 - 1e-9)
        if not budget > 0:
            return None
        mu2 = float(self.mu2)
        ms = np.array([m for m, _ in levels], dtype=float)
        log_w = np.array([float(w.log().mid()) for _, w in levels])
        if not np.all(np.isfinite(log_w)):
            return None
        rv = np.sqrt(ms * mu2)
        base = log_w - ms * mu2 / 2 - float(ee.mid())

        def log_total(z: float) -> float:  # log sum_m C_m at the common z
            x = base + z * rv
            top = float(x.max())
            return top + math.log(float(np.exp(x - top).sum()))

        goal = math.log(budget)
        lo_z, hi_z = -1.0, 1.0
        while log_total(lo_z) > goal and lo_z > -1e12:
            lo_z *= 2
        while log_total(hi_z) < goal and hi_z < 1e12:
            hi_z *= 2
        for _ in range(80):
            mid_z = (lo_z + hi_z) / 2
            lo_z, hi_z = (mid_z, hi_z) if log_total(mid_z) < goal else (lo_z, mid_z)
        x = base + lo_z * rv
        shift = math.log(budget) - log_total(lo_z)
        logs_c = [flint.arb(float(v + shift)) for v in x]  # exact doubles: the split chosen
        cs = [lc.exp().mid() for lc in logs_c]
        if not sum(cs, c0) <= 1:
            return None
        total = (w0 - ee.exp() * c0).max(flint.arb(0))
        for (m, w), c in zip(levels, cs, strict=True):
            if c > 0:
                total += w * gaussian_delta_at(m * self.mu2, ee + c.log() - w.log())
            else:
                total += w
        return total

    def _sum_lower(self, ee: flint.arb, qa: flint.arb) -> flint.arb:
        """A lower bound on ``delta_fwd(eps)`` from the sum of the ``k`` outputs.

        Post-processing by ``sum x > t`` (``t = tau sigma sqrt k``): ``A^k`` gives it the
        mass ``sum_m w_m Phibar(tau - m mu / sqrt k)`` (``m`` sampled uses shift the sum by
        ``m s``) and ``B^k`` the mass ``Phibar(tau)``; ``delta(eps)`` is at least the first
        minus ``e^eps`` times the second, for every ``tau``.  Three
        thresholds around the tilt of ``G`` with ``mu' = q mu sqrt k`` (where the sum's
        loss is about ``eps``): ``tau = eps/mu' + mu'/2`` and ``tau +- 1/4``.  At the
        caller's precision (the difference cancels about ``log2(1/mu')`` bits).
        """
        k = self.k
        rk, r2 = flint.arb(k).sqrt(), flint.arb(2).sqrt()
        mu = rational_ball(self.mu2).sqrt()
        shift = qa * mu * rk
        centre = (ee / shift + shift / 2).mid()
        ratio = qa / (1 - qa)
        best = flint.arb(0)
        for tau in (centre - flint.arb(1) / 4, centre, centre + flint.arb(1) / 4):
            w = ((-qa).log1p() * k).exp()
            mass = flint.arb(0)
            for m in range(k + 1):
                mass += w * erfc_ball((tau - m * mu / rk) / r2) / 2
                w = w * ratio * (k - m) / (m + 1)
            best = best.max(mass - ee.exp() * erfc_ball(tau / r2) / 2)
        return best

    def _chernoff(self, ee: flint.arb, qa: flint.arb, log_1q: flint.arb) -> flint.arb:
        """The moment bound on ``delta_fwd(eps)``, the least over integer orders ``alpha``.

        With ``lambda = alpha - 1``, ``delta(eps) <= E_A[e^(lambda (L - eps))] lambda^lambda /
        (lambda + 1)^(lambda + 1)`` (the largest of ``(1 - e^-x) e^(-lambda x)``), and one
        use's moment is the binomial sum ``sum_j C(alpha, j) (1 - q)^(alpha - j) q^j
        e^(j (j - 1) mu^2 / 2)`` (docs/theory.md, section 20).  At the caller's precision.
        """
        prec = flint.ctx.prec
        if prec not in self._moments:  # one use's log moments: the same at every eps
            mu2 = rational_ball(self.mu2)
            logs = []
            for alpha in _ORDERS:
                lam = alpha - 1
                terms = [
                    comb(alpha, j)
                    * ((alpha - j) * log_1q + j * qa.log() + j * (j - 1) * mu2 / 2).exp()
                    for j in range(alpha + 1)
                ]
                moment = sum(terms, flint.arb(0)).log()
                factor = lam * flint.arb(lam).log() - (lam + 1) * flint.arb(lam + 1).log()
                logs.append((lam, self.k * moment + factor))
            self._moments[prec] = logs
        best = flint.arb(1)
        for lam, log_moment in self._moments[prec]:
            best = best.min((log_moment - lam * ee).exp())
        return best

    def bracket(self, eps: Fraction) -> tuple[flint.arb, flint.arb]:
        """Exact arb ends ``(lower, upper)`` enclosing ``delta(eps)`` (the class's bounds).

        From 128 bits, doubled until both sums are relatively accurate to ``2^-60`` (or
        the lower one is not positive), up to 4096 bits.
        """
        if eps not in self._cache:
            prec = 128
            while True:
                lower, upper = self._bracket_at(eps, prec)
                sharp = upper.rel_accuracy_bits() >= 60 and (
                    lower.rel_accuracy_bits() >= 60 or not lower > 0
                )
                if sharp or prec >= 4096:
                    break
                prec *= 2
            with flint.ctx.workprec(prec):  # exact ends, clipped to [0, 1]
                lo, hi = lower.lower(), upper.upper()
            lo = lo if lo > 0 else flint.arb(0)
            hi = hi if hi < 1 else flint.arb(1)
            self._cache[eps] = (lo, hi if hi >= lo else lo)
        return self._cache[eps]

    def _far(self, eps: Fraction) -> bool:
        """Whether ``eps`` is answered by the bracket.

        Yes when the loss saturates or is too small for a grid, when ``delta_G(eps; k mu^2)``
        (at least the upper bound: ``delta_G`` grows with ``m``) is below
        :data:`_BEYOND_GRID`, when the bracket is below :data:`FAR_TAIL` and within the delta
        goal (relative width 1e-3), or when the loss grid is refused for its size.  The
        bracket's ends may be orders of magnitude apart where the grid is tight: a choice of
        route only, both are certified.
        """
        if not self.on_grid:
            return True
        with flint.ctx.workprec(128):
            bound = gaussian_delta_at(self.k * self.mu2, rational_ball(eps))
            if bound < _BEYOND_GRID:  # the grid's split overflows there (eps 1e6 at q 1e-6)
                return True
            near = not bound < rational_ball(_MAYBE_FAR)
        if not near and (self.k <= FAR_TERMS or bound < rational_ball(FAR_TAIL)):
            lo, hi = self.bracket(eps)
            # the bracket answers in place of the grid only when it meets the grid's goal:
            # its ends may be orders apart (two uses at 3e-822: 1544 relative), where the
            # grid's split is tight
            if hi < rational_ball(FAR_TAIL) and lo > 0:
                if hi <= lo * (1 + _TIGHT) or self._deep_cells() > DEEP_CELLS:
                    return True
        return self._grid_or_none() is None

    def _deep_cells(self) -> int:
        """The cells of one use's deep grid (what a tiny delta on the grid costs); 0 if none."""
        from .gridsteps import DEEP_TAIL_LOG, _loss_index_range

        grid = self._grid_or_none()
        if grid is None:
            return 0
        lo, hi, _, _ = _loss_index_range(grid.kinds[0][0], grid.h_deep, DEEP_TAIL_LOG)
        return int(hi - lo)

    def _eps_ends(self, eps: Any) -> tuple[Fraction, Fraction]:
        """Rationals ``(lo, hi)`` around the parsed ``eps`` (equal when it is rational)."""
        form = parse_eps(eps)
        if form.logs:
            ball = form.ball(128)
            return max(Fraction(0), ball_end(ball.lower())), ball_end(ball.upper())
        return form.rational, form.rational

    def _from_bracket(self, e_lo: Fraction, e_hi: Fraction) -> Value:
        """The bracket's enclosure of ``delta`` at every eps in ``[e_lo, e_hi]``."""
        self._answered.add("bracket")
        lo, hi = self.bracket(e_hi)[0], self.bracket(e_lo)[1]
        return Value.from_interval(lo, hi, nonnegative=True)

    def _narrowed(self, value: Value, e_lo: Fraction, e_hi: Fraction) -> Value:
        """The grid's enclosure intersected with the bracket's (both certified).

        The bracket (a few ms to a few tenths of a second) is built only when the grid's
        enclosure misses the delta goal (relative width over 1e-3, or a lower end of 0):
        the far tails, where the grid's lower end falls short and the bracket's lower sum
        is near the value (bench_widths seed 2026, q 0.00399 eps 0.0629 sigma 14.7 k 11:
        the grid's lower end 3.67e-395, the bracket's 3.44e-388).
        """
        lo, hi = value.ends()
        if not (hi > 0 and (lo <= 0 or hi - lo > _TIGHT * lo)) or self.k > FAR_TERMS:
            self._answered.add("grid")
            return value
        b_lo, b_hi = self.bracket(e_hi)[0], self.bracket(e_lo)[1]
        raise_lo, lower_hi = b_lo > lo, b_hi < hi
        new_lo, new_hi = (b_lo if raise_lo else lo), (b_hi if lower_hi else hi)
        if new_lo > new_hi or not (raise_lo or lower_hi):  # (disjoint: impossible)
            self._answered.add("grid")
            return value
        self._answered.add("both")
        return Value.from_interval(new_lo, new_hi, nonnegative=True)

    def delta(self, eps: Any) -> Value | list[Value]:
        """A certified enclosure of ``delta(eps)``."""
        if isinstance(eps, (list, tuple)):
            return [self.delta(e) for e in eps]  # type: ignore[misc]
        e_lo, e_hi = self._eps_ends(eps)
        if not self._far(e_lo):
            return self._narrowed(self.grid.delta(eps), e_lo, e_hi)
        return self._from_bracket(e_lo, e_hi)

    def delta_decision(self, eps: Fraction, target: Fraction) -> Value:
        """An enclosure of ``delta(eps)`` for deciding ``delta(eps) <= target``.

        The bracket's where it answers :meth:`delta`; else the grid's decision (which stops
        refining once its enclosure is on one side), narrowed by the bracket.
        """
        e_lo, e_hi = self._eps_ends(eps)
        if not self._far(e_lo):
            return self._narrowed(self.grid.delta_decision(eps, target), e_lo, e_hi)
        return self._from_bracket(e_lo, e_hi)

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """A certified enclosure of ``eps(delta)``: bisections on the bracket's two ends.

        The upper end ``b`` has ``upper delta(b) <= delta``; the lower end ``a`` has
        ``lower delta(a) > delta`` (or is 0).
        """
        if isinstance(delta, (list, tuple)):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        d = parse_delta(delta) if not isinstance(delta, Fraction) else delta
        if self.on_grid and not 0 < d < FAR_TAIL and self._grid_or_none() is not None:
            self._answered.add("grid")
            return self.grid.epsilon(d)  # type: ignore[no-any-return]
        self._answered.add("bracket")
        if not 0 < d < 1:
            raise InvalidParameterError(
                f"delta = {d} must lie in (0, 1): Gaussian noise never reaches delta = 0"
            )
        dd = rational_ball(d)
        if self.bracket(Fraction(0))[1] <= dd:
            return Value.from_rational(0)
        b = Fraction(1)
        while not self.bracket(b)[1] <= dd:  # the upper delta decreases to 0
            b *= 2
        hi = self._bisect(Fraction(0), b, lambda e: bool(self.bracket(e)[1] <= dd))
        a = Fraction(0)
        if self.bracket(Fraction(0))[0] > dd:
            a = self._bisect(Fraction(0), hi, lambda e: not self.bracket(e)[0] > dd, low=True)
        return Value.from_interval(rational_ball(a), rational_ball(hi), nonnegative=True)

    @staticmethod
    def _bisect(a: Fraction, b: Fraction, right: Any, low: bool = False) -> Fraction:
        """Bisect ``[a, b]`` (``right(b)`` true) to relative ``2^-12``: ``b``, or ``a`` if low."""
        while b - a > b * Fraction(1, 1 << 12):
            m = (a + b) / 2
            if right(m):
                b = m
            else:
                a = m
        return a if low else b

    @property
    def on_grid(self) -> bool:
        """Whether the loss grid answers all but the far tails (else the bracket answers all)."""
        return not (self.saturated or self.mu2 < TINY_MU2)

    def answered_note(self) -> str:
        """What answered the queries so far, for the route's ``why`` ('' for the grid alone).

        The route is chosen per query: the loss grid, the grid narrowed by the bracket of
        the sampled uses' Gaussians, or the bracket alone (far tails).
        """
        if not self.on_grid or self._answered <= {"grid"}:
            return ""
        parts = []
        if "bracket" in self._answered:
            parts.append("the far tail answered by it alone")
        if "both" in self._answered:
            parts.append("the loss grid's enclosure intersected with it (both certified)")
        return (
            "; the bracket of the sampled uses' Gaussians (docs/theory.md, section 15): "
            + ", ".join(parts)
        )

    def describe(self) -> str:
        """How the answer was computed, in a few words (the grid's, when it answers)."""
        if self.on_grid:
            if self._answered - {"grid"}:
                return "certified bounds (loss grid and the sampled uses' bracket)"
            return "certified bounds (loss grid), two directions"
        what = "saturated" if self.saturated else "too small for a loss grid"
        return (
            f"certified bounds: one use's loss {what}, k uses bracketed by the sampled "
            "uses' Gaussians"
        )

    def __repr__(self) -> str:
        return f"FarTails({self.label or 'subsampled Gaussian'}; certified bounds)"


def far_tails(pair: Any, count: int, grid: Any, label: str = "") -> FarTails | None:
    """:class:`FarTails` over the loss grid ``grid()``, or None.

    For ``count >= 2`` uses of one subsampled Gaussian noise (rate below 1); None for
    anything else.
    """
    one = one_use_part(pair)
    if one is None or one.noise.kind != "gaussian" or count < 2:
        return None
    return FarTails(grid, one.noise, one.q, count, label)


#: subsampled Laplace uses past this count: the loss grid's lower ends (which lose about
#: ``k h`` of loss to the grid's rounding) are raised by Hoeffding's bound
HOEFFDING_USES = 10**6


class HoeffdingEnds(EnclosureRows):
    """``k`` uses of subsampled Laplace noise: the loss grid's answers met with Hoeffding's.

    One use at rate ``q < 1`` (``A = q P + (1 - q) Q`` against ``B = Q``, ``eps0 = s / b``)
    has the loss ``l = log(1 + u)``, ``u = q (e^beta - 1)``, ``beta`` in ``[-eps0, eps0]``:
    ``l`` lies in an interval of length ``R = log((1 - q + q e^eps0) / (1 - q + q
    e^-eps0))``, and its mean under ``A`` is the divergence ``KL``.  Hoeffding's
    inequality gives ``A^k(L <= k KL - t) <= e^(-2 t^2 / (k R^2))``, and
    ``(1 - e^(eps - L))_+ >= (1 - e^(eps - tau)) 1{L > tau}``, so with ``tau = k KL - t``
    and ``p_t = 1 - e^(-2 t^2 / (k R^2))``:

    * ``delta(eps) >= p_t (1 - e^(eps - tau))`` for every ``0 < t < k KL - eps``;
    * ``eps(d) >= tau + log(1 - d / p_t)``, taken at ``p_t = 2 d``: ``k KL - t - log 2``;
    * from above, in each direction ``delta_d(eps) <= P_d(L > eps) <= e^(-2 (eps - k
      KL_d)^2 / (k R^2))`` past ``k KL_d`` (``KL_d`` from above: ``log(1 + u) <= u - u^2/2 +
      u^3/3``; in reverse ``-log(1 + u) <= -u + u^2 / (2 (1 - u_0))``, ``E_Q[u] = 0``), so
      ``eps(d) <= max_d k KL_d + R sqrt(k log(1/d) / 2)``.

    ``KL`` from below: on the range of ``u`` (``u >= -q (1 - e^-eps0) =: -u_0``),
    ``log(1 + u) >= u - u^2 / (2 (1 - u_0))`` and ``>= u - u^2/2 + u^3/3 - u^4 / (4 (1 -
    u_0))`` (for ``u >= 0`` the derivative of the difference is ``u^4 / (1 + u) >= 0``; for
    ``u < 0`` the dropped terms are ``-|u|^n / n``, summed geometrically), and ``E_A[u^n]
    = q^n sum_i C(n, i) (-1)^(n - i) (q M_(i+1) + (1 - q) M_i)`` with the closed forms
    ``M_j = E_Q[e^(j beta)] = e^(-j eps0)/2 + e^((j - 1) eps0)/2 + e^(-j eps0)
    (e^((2j - 1) eps0) - 1) / (2 (2j - 1))`` (docs/theory.md, section 15).  The grid's
    lower end loses about ``k h`` (``h`` its width): at ``k = 10^10`` it is 0 where the
    value is near ``k KL``; this bound is within ``t`` of ``k KL``, the centre of the loss.
    Each end is the better of the grid's and Hoeffding's (all certified).

    Args:
        grid: builds the loss grid's result (called at most once; refused: Hoeffding's
            bounds answer alone).
        noise: the Laplace :class:`~dpcompose_exact.mechanisms.noise.AdditiveNoise`.
        q: the rate, in ``(0, 1)``.
        k: the number of uses.
        label: what was composed, for ``repr``.
        pair: its loss pair (for ``eps(0)``, the largest loss, when the grid is refused).
    """

    kind = Exactness.BOUNDS
    no_list = "a composition with noise mechanisms has no single constraint list"

    def __init__(
        self, grid: Any, noise: Any, q: Fraction, k: int, label: str = "", pair: Any = None
    ) -> None:
        self._make_grid, self._grid, self._refused = grid, None, False
        self.noise, self.q, self.k, self.label = noise, Fraction(q), int(k), label
        self.pair = pair
        self.eps0 = Fraction(noise.shift) / Fraction(noise.scale)
        self._parts: tuple[flint.arb, flint.arb] | None = None
        self._tops: tuple[flint.arb, flint.arb] = (flint.arb(0), flint.arb(0))

    @property
    def grid(self) -> Any:
        """The loss grid's result (built on first use), or None when refused for its size.

        Hoeffding's bounds then answer alone: a certified enclosure rather than a refusal
        (``laplace(1)@1/100`` at ``k = 10^12`` needs 1.2e8 grid points).
        """
        if self._grid is None and not self._refused:
            try:
                self._grid = self._make_grid()
            except ResourceLimitError:
                self._refused = True
        return self._grid

    def _kl_range(self) -> tuple[flint.arb, flint.arb]:
        """``(k KL from below, R)`` (256 bits: the moments' alternating sums cancel)."""
        if self._parts is None:
            with flint.ctx.workprec(256):
                q, e0 = rational_ball(self.q), rational_ball(self.eps0)

                def moment(j: int) -> flint.arb:  # M_j = E_Q[e^(j beta)]
                    return (
                        (-j * e0).exp() / 2
                        + ((j - 1) * e0).exp() / 2
                        + (-j * e0).exp() * ((2 * j - 1) * e0).expm1() / (2 * (2 * j - 1))
                    )

                m = [moment(j) for j in range(6)]

                def mean_u(n: int) -> flint.arb:  # E_A[u^n], u = q (e^beta - 1)
                    total = flint.arb(0)
                    for i in range(n + 1):
                        e_a = q * m[i + 1] + (1 - q) * m[i]  # E_A[e^(i beta)]
                        total += comb(n, i) * (-1) ** (n - i) * e_a
                    return q**n * total

                u = [flint.arb(0)] + [mean_u(n) for n in range(1, 5)]
                shrink = 1 + q * (-e0).expm1()  # 1 - |u_min|
                second = u[1] - u[2] / (2 * shrink)
                fourth = u[1] - u[2] / 2 + u[3] / 3 - u[4] / (4 * shrink)
                kl = second.max(fourth).max(flint.arb(0))
                top = (q * e0.expm1()).log1p()
                bottom = (q * (-e0).expm1()).log1p()
                self._parts = (self.k * kl, top - bottom)
                # from above: log(1 + u) <= u - u^2/2 + u^3/3 (forward, under A);
                # -log(1 + u) <= -u + u^2 / (2 (1 - u_0)) with E_Q[u] = 0 (reverse, under Q)
                fwd_up = u[1] - u[2] / 2 + u[3] / 3
                rev_up = q * q * (m[2] - 1) / (2 * shrink)
                self._tops = (self.k * fwd_up.upper(), self.k * rev_up.upper())
        return self._parts

    def _upper_mean(self) -> flint.arb:
        """``k`` times the larger direction's divergence, from above (an exact point)."""
        self._kl_range()
        fwd, rev = self._tops
        return fwd.max(rev).upper()

    def _delta_upper(self, eps: Fraction) -> flint.arb:
        """``e^(-2 (eps - k KL)^2 / (k R^2))`` above both directions' ``k KL`` (else 1).

        ``delta_d(eps) <= P_d(L > eps)`` and Hoeffding's upper tail, in each direction
        (the loss lies in an interval of length ``R`` both ways).
        """
        _, r = self._kl_range()
        with flint.ctx.workprec(128):
            gap = rational_ball(eps) - self._upper_mean()
            if not gap > 0:
                return flint.arb(1)
            return (-2 * gap * gap / (self.k * r * r)).exp().upper()

    def _eps_upper(self, d: Fraction) -> flint.arb:
        """``k KL + R sqrt(k log(1/d) / 2)``, the larger direction's (an exact point)."""
        _, r = self._kl_range()
        with flint.ctx.workprec(128):
            t = r * (self.k * -rational_ball(d).log() / 2).sqrt()
            return (self._upper_mean() + t).upper()

    def _delta_lower(self, eps: Fraction) -> flint.arb:
        """``max_t p_t (1 - e^(eps - k KL + t))`` (0 when ``k KL <= eps``), at 128 bits."""
        kkl, r = self._kl_range()
        with flint.ctx.workprec(128):
            gap = kkl - rational_ball(eps)
            if not gap > 0:
                return flint.arb(0)
            g, a = float(gap.lower()), 2 / (self.k * float(r.upper()) ** 2)

            def bound(t: float) -> float:
                return -math.expm1(-a * t * t) * -math.expm1(t - g)

            best = max((g * j / 64 for j in range(1, 64)), key=bound)
            for _ in range(40):  # golden refinement of the guide (any t is a bound)
                lo_t, hi_t = best * 0.98, min(g, best * 1.02)
                m1, m2 = lo_t + (hi_t - lo_t) / 3, hi_t - (hi_t - lo_t) / 3
                best = m1 if bound(m1) > bound(m2) else m2
            t = flint.arb(best)
            p = -(-2 * t * t / (self.k * r * r)).expm1()
            value = p * -(t - gap).expm1()
            return value.lower() if value > 0 else flint.arb(0)

    def _eps_lower(self, d: Fraction) -> flint.arb:
        """``k KL - t - log 2`` at ``p_t = 2 d`` (``d < 1/2``), at 128 bits; may be negative."""
        kkl, r = self._kl_range()
        with flint.ctx.workprec(128):
            dd = rational_ball(d)
            t = r * (self.k * -(-2 * dd).log1p() / 2).sqrt()
            return (kkl - t - flint.arb(2).log()).lower()

    def _raised(self, value: Value, lower: flint.arb, upper: flint.arb | None = None) -> Value:
        """``value`` met with ``[lower, upper]`` (all certified): the better of each end."""
        lo, hi = value.ends()
        new_lo = lower if lower > lo else lo
        new_hi = upper if upper is not None and upper < hi else hi
        if new_lo > new_hi or (new_lo is lo and new_hi is hi):  # (disjoint: impossible)
            return value
        return Value.from_interval(new_lo, new_hi, nonnegative=True)

    def delta(self, eps: Any) -> Value | list[Value]:
        """The grid's enclosure of ``delta(eps)``, its lower end raised by Hoeffding's bound."""
        if isinstance(eps, (list, tuple)):
            return [self.delta(e) for e in eps]  # type: ignore[misc]
        e_lo, e_hi = _eps_ends(eps)
        lower, upper = self._delta_lower(e_hi), self._delta_upper(e_lo)
        value = self._ask(lambda g: g.delta(eps))
        if value is None:
            return Value.from_interval(lower, upper, nonnegative=True)
        return self._raised(value, lower, upper)

    def _ask(self, query: Any) -> Any:
        """``query(grid)``, or None when the grid is (or turns out) refused for its size."""
        if self.grid is None:
            return None
        try:
            return query(self.grid)
        except ResourceLimitError:  # its folds are too long: Hoeffding's bounds alone
            self._refused, self._grid = True, None
            return None

    def delta_decision(self, eps: Fraction, target: Fraction) -> Value:
        """The grid's decision enclosure, met with Hoeffding's as in :meth:`delta`."""
        e_lo, e_hi = _eps_ends(eps)
        lower, upper = self._delta_lower(e_hi), self._delta_upper(e_lo)
        value = self._ask(lambda g: g.delta_decision(eps, target))
        if value is None:
            return Value.from_interval(lower, upper, nonnegative=True)
        return self._raised(value, lower, upper)

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """The grid's enclosure of ``eps(delta)``, its lower end raised by Hoeffding's bound."""
        if isinstance(delta, (list, tuple)):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        d = parse_delta(delta) if not isinstance(delta, Fraction) else delta
        value = self._ask(lambda g: g.epsilon(delta))
        if value is None:  # Hoeffding's bounds alone (the grid refused for its size)
            if d == 0 and self.pair is not None:
                top = largest_noise_loss([(self.pair, self.k)], "fwd")
                if top is not None:
                    return top
            if not 0 < d < 1:
                raise InvalidParameterError(f"delta = {d} must lie in (0, 1)")
            low = self._eps_lower(d) if d < Fraction(1, 2) else flint.arb(0)
            low = low if low > 0 else flint.arb(0)
            return Value.from_interval(low, self._eps_upper(d), nonnegative=True)
        if not 0 < d < Fraction(1, 2):
            return value  # type: ignore[no-any-return]
        return self._raised(value, self._eps_lower(d), self._eps_upper(d))

    def describe(self) -> str:
        """The grid's words, and Hoeffding's bounds."""
        if self.grid is None:
            return "certified bounds (Hoeffding's, the loss grid refused for its size)"
        return f"{self.grid.describe()}; each end also by Hoeffding's bounds"

    def __repr__(self) -> str:
        return f"HoeffdingEnds({self.label or 'subsampled Laplace'}; certified bounds)"


def _eps_ends(eps: Any) -> tuple[Fraction, Fraction]:
    """Rationals ``(lo, hi)`` around the parsed ``eps`` (equal when it is rational)."""
    form = parse_eps(eps)
    if not form.logs:
        return form.rational, form.rational
    ball = form.ball(128)
    return max(Fraction(0), ball_end(ball.lower())), ball_end(ball.upper())


def hoeffding_ends(pair: Any, count: int, grid: Any, label: str = "") -> HoeffdingEnds | None:
    """:class:`HoeffdingEnds` over the loss grid's result ``grid``, or None.

    For more than :data:`HOEFFDING_USES` uses of one subsampled Laplace noise (rate below
    1); None for anything else.
    """
    one = one_use_part(pair)
    if one is None or one.noise.kind != "laplace" or count <= HOEFFDING_USES:
        return None
    return HoeffdingEnds(grid, one.noise, one.q, count, label, pair)
