"""Certified references of one audit case, for every quantity an adapter can report.

:class:`References` composes a case's ``(mechanism, count)`` list once
(:func:`dpcompose_exact.api.compose`) and answers, as a certified enclosure
``(lower, upper)`` of decimal strings (equal ends when the value is exact; ``"inf"``
when it is infinite), each quantity of
:data:`~dpcompose_exact.tools.audit.adapters.QUANTITIES`:

- ``delta`` at eps and ``epsilon`` at delta: the exact (or certified) privacy curve
  (docs/theory.md, sections 2 and 3); an eps below the leak's delta is ``"inf"``;
- ``renyi`` at an order alpha: the Renyi divergence of the composition, the larger of
  the two directions (:meth:`~dpcompose_exact.composition.Composition.renyi`,
  docs/theory.md, section 20): closed forms for Gaussian and Laplace noise and finite
  pairs, exact binomial sums or a certified integral for the subsampled ones; ``"inf"``
  with a leak;
- ``gdp_mu``: the smallest ``mu`` with ``G_mu`` below the composition's trade-off
  function (:meth:`~dpcompose_exact.composition.Composition.gdp_mu`); ``"inf"`` with a
  proof that none exists (a leak);
- ``beta`` at a type I error alpha: the trade-off function
  (:meth:`~dpcompose_exact.composition.Composition.tradeoff`) of finite compositions,
  and ``Phi(Phi^-1(1 - alpha) - mu)`` in Arb for compositions of Gaussian noise only
  (``G_mu`` with the exact ``mu``).

A quantity without a certified reference for the case gives None, and
:meth:`References.why` says why (the audit's verdict is then ``undecided``).

Bounds of Laplace and subsampled noise come from a loss grid (docs/theory.md, sections 15
and 18) whose enclosure is about as wide as an accountant's own discretization error: a
number that falls inside it is asked again of a grid ten times finer
(:meth:`References.refined`, :data:`FINE_GRID`), and the two enclosures are intersected.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import flint

from ...errors import BelowLeakError, DPComposeError
from ...numbers.convert import rational_ball
from ...numbers.value import Value
from ...regions.protocol import PairForm

__all__ = ["References", "ZcdpReferences", "Enclosure"]

Enclosure = tuple[str, str]
"""``(lower, upper)``: certified decimal ends (30 digits, rounded outward), or ``"inf"``."""

_DIGITS = 30
_INF = ("inf", "inf")
#: the loss-grid width of the second look at an undecided number (the default is 1e-4)
FINE_GRID = "1e-5"


def _as_fraction(text: str) -> Fraction:
    from decimal import Decimal

    return Fraction(Decimal(text))


class References:
    """The certified references of one case (each computed once, on demand).

    Args:
        items: the case's ``(mechanism, count)`` list.
        grid: the loss-grid width of noise bounds (None: the default).
        refine: allow the second look on a finer loss grid (:meth:`refined`); the quick
            suite turns it off (a finer grid of 1000 subsampled steps takes 11 s and
            1.8 GB), leaving such rows ``undecided``.
    """

    def __init__(
        self, items: list[tuple[Any, int]], grid: str | None = None, refine: bool = True
    ) -> None:
        from ... import api

        self.items = items
        self.refine = refine
        self.comp = api.compose(items, grid=grid)
        self._cache: dict[tuple[str, str], Enclosure | None] = {}
        self._why: dict[tuple[str, str], str] = {}
        self._fine: References | None = None

    def _ends(self, value: Value) -> Enclosure:
        if value.exact == "oo":
            return _INF
        if self.comp.is_bounded or not value.is_exact:
            return value.interval(_DIGITS)
        text = value.decimal(_DIGITS)
        return text, text

    def get(self, quantity: str, at: str) -> Enclosure | None:
        """The enclosure of ``quantity`` at ``at`` (an exact decimal; ``""`` for ``gdp_mu``).

        None when there is no certified reference (:meth:`why` says why).
        """
        key = (quantity, at)
        if key not in self._cache:
            make: Callable[[str], Enclosure] = getattr(self, f"_{quantity}")
            try:
                self._cache[key] = make(at)
            except DPComposeError as exc:
                self._cache[key] = None
                self._why[key] = f"no certified reference: {' '.join(str(exc).split())}"
        return self._cache[key]

    def refined(self, quantity: str, at: str) -> Enclosure | None:
        """:meth:`get` on a loss grid of width :data:`FINE_GRID`, met with the first look.

        None when the first look was not on a loss grid (bounds of finite pairs and exact
        or certified values do not narrow this way), when there is no reference, or when
        the second look is off (``refine=False``).
        """
        coarse = self.get(quantity, at)
        if not self.refine or coarse is None or quantity not in ("delta", "epsilon"):
            return None
        if not self.comp.is_bounded:
            return None
        if not any(m.loss_pair().form is PairForm.NOISE for m, _ in self.items):
            return None  # no loss grid in the composition
        if self._fine is None:
            self._fine = References(self.items, grid=FINE_GRID)
        better = self._fine.get(quantity, at)
        if better is None or "inf" in better + coarse:
            return coarse
        lower = max(coarse[0], better[0], key=Fraction)
        upper = min(coarse[1], better[1], key=Fraction)
        return lower, upper

    def why(self, quantity: str, at: str) -> str:
        """Why :meth:`get` gave None (``""`` when it did not)."""
        return self._why.get((quantity, at), "")

    def _delta(self, at: str) -> Enclosure:
        return self._ends(self.comp.delta(at))

    def _epsilon(self, at: str) -> Enclosure:
        if _as_fraction(at) == 0:
            return self._eps_at_zero()
        try:
            return self._ends(self.comp.epsilon(at))
        except BelowLeakError:
            return _INF

    def _eps_at_zero(self) -> Enclosure:
        """eps(0): the largest privacy loss, the sum of the parts' (pure DP; else inf).

        A finite pair's is the eps of its composition's last constraint when that
        constraint's delta is 0 (else a leak: inf); Gaussian noise has unbounded loss
        (inf); Laplace noise ``count * sensitivity / b``.
        """
        from ... import api
        from ...errors import InvalidParameterError
        from .adapters import noise_params

        finite, laplace = [], Fraction(0)
        for m, n in self.items:
            if not n:
                continue
            pair = m.loss_pair()
            if pair.form is PairForm.FINITE:
                finite.append((m, n))
                continue
            noise = noise_params(m, pair)
            if noise is not None and noise.kind == "gaussian":
                return _INF
            if noise is None or noise.rate != 1:
                raise InvalidParameterError(f"eps(0) of {m.describe()} is not computed")
            laplace += n * noise.sensitivity / noise.scale
        if not finite:
            text = Value.from_rational(laplace).decimal(_DIGITS)
            return text, text
        eps, delta = api.compose(finite).constraints[-1]
        if delta.exact != "0":
            return _INF  # a leak: delta stays positive at every finite eps
        if not laplace:
            return self._ends(eps)

        def ev(prec: int) -> flint.arb:
            with flint.ctx.workprec(prec):
                return eps.ball(prec) + rational_ball(laplace)

        return Value(ev, nonnegative=True).interval(_DIGITS)

    def _renyi(self, at: str) -> Enclosure:
        return self._ends(self.comp.renyi(_as_fraction(at)))

    def _gdp_mu(self, at: str) -> Enclosure:
        from ...errors import InvalidParameterError

        try:
            return self._ends(self.comp.gdp_mu())
        except InvalidParameterError as exc:
            if "no finite GDP mu exists" in str(exc):
                return _INF  # proved: a leak puts f(0) below 1
            raise

    def _gaussian_only(self) -> bool:
        return all(m.loss_pair().form is PairForm.GAUSSIAN for m, n in self.items if n)

    def _beta(self, at: str) -> Enclosure:
        alpha = _as_fraction(at)
        if not self._gaussian_only():
            return self._ends(self.comp.tradeoff(alpha))
        mu = self.comp.gdp_mu()
        if alpha >= 1:
            return "0", "0"
        if alpha <= 0:
            return "1", "1"

        def ev(prec: int) -> flint.arb:
            with flint.ctx.workprec(prec):
                r2 = flint.arb(2).sqrt()
                z = r2 * (1 - 2 * rational_ball(alpha)).erfinv()  # Phi^-1(1 - alpha)
                return ((mu.ball(prec) - z) / r2).erfc() / 2  # Phi(z - mu)

        return Value(ev, nonnegative=True).interval(_DIGITS)


class ZcdpReferences(References):
    """The certified bracket of a ``(xi, rho)``-zCDP guarantee (docs/theory.md, section 22).

    The truth of a zCDP guarantee is ``delta*(eps) = sup delta_M(eps)`` over every
    ``(xi, rho)``-zCDP mechanism ``M``; it is bracketed by the Gaussian of ``mu^2 = 2 rho``
    below (one of the mechanisms) and the Canonne-Kamath-Steinke conversion above
    (:func:`~dpcompose_exact.engines.zcdp.zcdp_delta`,
    :func:`~dpcompose_exact.engines.zcdp.zcdp_epsilon`).  A claimed upper bound below the
    lower end is on the wrong side of the truth; one inside the bracket is ``undecided``.
    Only ``delta`` and ``epsilon`` have a reference (the composition of the case's items,
    the guarantee as CKS constraints, is an upper bound, never a reference).

    Args:
        rho, xi: the summed zCDP parameters (exact decimals or fractions).
    """

    def __init__(self, rho: Any, xi: Any = 0) -> None:
        from ...mechanisms.zcdp import zcdp_parameters

        self.rho, self.xi = zcdp_parameters(rho, xi)
        self.items = []
        self.refine = False
        self._cache = {}
        self._why = {}
        self._fine = None

    def refined(self, quantity: str, at: str) -> Enclosure | None:
        """None: the bracket is not a loss grid (a finer one does not narrow it)."""
        return None

    def _delta(self, at: str) -> Enclosure:
        from ...engines.zcdp import zcdp_delta

        return zcdp_delta(self.rho, _as_fraction(at), self.xi).interval(_DIGITS)

    def _epsilon(self, at: str) -> Enclosure:
        from ...engines.zcdp import zcdp_epsilon
        from ...errors import InvalidParameterError

        d = _as_fraction(at)
        if d == 0:
            if self.rho > 0:
                return _INF  # delta(eps) > 0 at every eps for the Gaussian below
            text = Value.from_rational(self.xi).decimal(_DIGITS)
            return text, text
        if d >= 1:
            raise InvalidParameterError(f"delta = {at} is outside the valid range [0, 1)")
        return zcdp_epsilon(self.rho, d, self.xi).interval(_DIGITS)

    def _no_reference(self, at: str) -> Enclosure:
        from ...errors import InvalidParameterError

        raise InvalidParameterError(
            "a zCDP guarantee's bracket gives delta(eps) and eps(delta) only (the Gaussian "
            "below, Canonne-Kamath-Steinke above)"
        )

    _renyi = _gdp_mu = _beta = _no_reference
