"""Many uses of subsampled Laplace noise: the loss grid's ends met with Hoeffding's bounds.

One subsampled Laplace use has a bounded loss ``l = log(1 - q + q e^beta)``, ``beta`` in
``[-eps0, eps0]``, in an interval of length ``R``, with mean the divergence ``KL``;
Hoeffding's inequality bounds the tails of the sum of ``k`` such losses around ``k KL``
(``KL`` bounded above and below by closed-form moments), which raises the loss grid's
lower ends past :data:`HOEFFDING_USES` uses, where the grid's rounding loses about ``k h``
of loss (docs/theory.md, section 15, "Many uses of subsampled Laplace noise").
"""

from __future__ import annotations

import math
from fractions import Fraction
from math import comb
from typing import Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers.convert import parse_delta, rational_ball
from ..numbers.value import Value
from .bounds import EnclosureRows
from .fartails import _eps_ends
from .noiseloss import largest_noise_loss
from .oneuse import one_use_part
from .result_interface import Exactness

__all__ = ["HOEFFDING_USES", "HoeffdingEnds", "hoeffding_ends"]

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


def hoeffding_ends(pair: Any, count: int, grid: Any, label: str = "") -> HoeffdingEnds | None:
    """:class:`HoeffdingEnds` over the loss grid's result ``grid``, or None.

    For more than :data:`HOEFFDING_USES` uses of one subsampled Laplace noise (rate below
    1); None for anything else.
    """
    one = one_use_part(pair)
    if one is None or one.noise.kind != "laplace" or count <= HOEFFDING_USES:
        return None
    return HoeffdingEnds(grid, one.noise, one.q, count, label, pair)
