"""Far tails and saturated losses of ``k >= 2`` subsampled Gaussian uses: a certified bracket.

Of ``k`` uses at rate ``q`` and ``mu = s / sigma``, the product mixes over the number
``m`` of sampled uses, each number with its binomial weight; given ``m``, the sampled uses
are one Gaussian mechanism ``G_{mu sqrt m}``.  :class:`FarTails` brackets ``delta(eps)``
between ``sum_m w_m delta_G(eps - c_m; m mu^2)`` and ``sum_m w_m delta_G(eps; m mu^2)``
(joint convexity of the hockey-stick divergence; ``c_m`` the least loss of the unsampled
uses), with a moment bound over integer Renyi orders and the reverse direction's
``(1 - e^eps (1 - q)^k)_+``; it answers where the loss grid cannot (saturated or tiny
losses, a far tail beyond the grid's doubles) and is met with the grid's enclosure
elsewhere (docs/theory.md, section 15, "Far tails and saturated losses of k >= 2 uses").
"""

from __future__ import annotations

import math
from fractions import Fraction
from math import comb
from typing import Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers.convert import ball_end, erfc_ball, parse_delta, parse_eps, rational_ball
from ..numbers.value import Value
from .bounds import EnclosureRows
from .noiseparts import gaussian_delta_at
from .oneuse import _HALF, one_use_delta, one_use_part
from .result_interface import Exactness

__all__ = ["FAR_TAIL", "FarTails", "far_tails"]

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


def _eps_ends(eps: Any) -> tuple[Fraction, Fraction]:
    """Rationals ``(lo, hi)`` around the parsed ``eps`` (equal when it is rational)."""
    form = parse_eps(eps)
    if not form.logs:
        return form.rational, form.rational
    ball = form.ball(128)
    return max(Fraction(0), ball_end(ball.lower())), ball_end(ball.upper())
