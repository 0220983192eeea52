"""Certified summaries of a composition: Rényi divergences and the Gaussian-DP ``mu``.

Every mechanism answers :meth:`~dpcompose_exact.regions.protocol.MechanismLike.loss_pair`;
this module reads those pairs (never the mechanisms' classes) and returns
values (:class:`~dpcompose_exact.numbers.value.Value`; docs/theory.md, section 20):

* :func:`renyi`: the Rényi divergence ``D_alpha`` of order ``alpha > 1`` of the composed
  pair (the RDP epsilon), the sum over the composed mechanisms in each direction and the
  larger of the two directions' sums.  Per use: finite pairs exactly
  (``log(sum_l p(l) e^{(alpha - 1) l}) / (alpha - 1)``, an element of the exact field for
  integer ``alpha``, Arb otherwise; infinite when the pair has a leak); Gaussian noise
  ``alpha mu^2 / 2``; Laplace noise in Mironov's closed form; Poisson-subsampled Gaussian
  noise by the binomial expansion (forward, integer ``alpha``) or a certified Arb integral
  with bounded tails; Poisson-subsampled Laplace noise by three pieces, two in closed
  form and one certified Arb integral.  An exactly subsampled finite mechanism
  contributes its two directions; a subsampled mechanism known only by bounds, an
  enclosure.
* :func:`gdp_mu`: the smallest ``mu`` with ``G_mu`` below the composed trade-off
  function, exactly ``sqrt(sum_i k_i mu_i^2)`` for Gaussian noise (Poisson-subsampled
  or not: subsampling leaves ``mu`` where it was), and the largest
  ``Phi^-1(1 - t) - Phi^-1(f(t))`` over the vertices of an exact region of finite pairs,
  a certified enclosure for both together (``sup_tau h(tau)`` over the Neyman-Pearson
  curve of ``G_m (x) F``); for mechanisms of bounded loss (Laplace,
  subsampled Laplace, subsampled finite pairs) a certified enclosure of
  ``sup_eps m(eps)`` from the composition's privacy profile on ``[0, loss cap]``;
  refused with the reason for other kinds (no finite ``mu`` at all when a pair has a
  leak).

An infinite divergence is the Value :data:`INFINITY` (closed form ``oo``), tested by
:func:`is_infinite`.  The divergence of one use is
:mod:`~dpcompose_exact.engines.renyi_use`'s; ``mu`` of finite regions (alone or next to
Gaussian noise) :mod:`~dpcompose_exact.engines.gdp_finite`'s, from the privacy profile
:mod:`~dpcompose_exact.engines.gdp_profile`'s; this module sums and dispatches.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import flint

from ..errors import InvalidParameterError, ResourceLimitError, UnsupportedQueryError
from ..mechanisms.region import RegionMechanism
from ..numbers import parse_rational
from ..numbers.value import Value
from ..regions.protocol import PairForm
from ..regions.tradeoff import Region
from .gdp_finite import _finite_mu, _gaussian_family_mu2, _keyed, _mixed_mu, _sqrt_value
from .gdp_profile import _ENCLOSURE_BITS, _loss_cap, _profile_mu
from .renyi_use import _directions, _Div, _rational_div

__all__ = [
    "INFINITY",
    "DEFAULT_ORDERS",
    "is_infinite",
    "parse_order",
    "renyi",
    "renyi_curve",
    "gdp_mu",
    "region_kinds",
]

#: the orders ``dpcompose summary`` prints by default
DEFAULT_ORDERS: tuple[str, ...] = ("1.5", "2", "3", "4", "5", "8", "16", "32", "64")


class _Infinite(Value):
    """``+oo`` as a Value: closed form ``oo``, decimals ``inf``, floats ``math.inf``."""

    __slots__ = ()

    def decimal(self, digits: int = 30) -> str:
        """``inf``."""
        return "inf"

    def rounded(self, digits: int = 30, rounding: str = "up") -> str:
        """``inf`` (in every direction)."""
        return "inf"

    def interval(self, digits: int = 30) -> tuple[str, str]:
        """``("inf", "inf")``."""
        return "inf", "inf"

    def __float__(self) -> float:
        return math.inf

    def upper(self) -> float:
        """``math.inf``."""
        return math.inf

    def lower(self) -> float:
        """``math.inf``."""
        return math.inf


#: an infinite divergence (a pair with a leak): closed form ``oo``, decimal ``inf``
INFINITY: Value = _Infinite(lambda prec: flint.arb("inf"), closed_form=lambda: "oo", key=("oo",))


def is_infinite(value: Value) -> bool:
    """True when ``value`` is :data:`INFINITY` (an infinite Rényi divergence)."""
    return value.exact == "oo"


def parse_order(alpha: Any) -> Fraction:
    """An order ``alpha > 1`` as an exact rational (floats raise ``TypeError``).

    >>> parse_order("1.5"), parse_order(2)
    (Fraction(3, 2), Fraction(2, 1))
    """
    a = parse_rational(alpha, "alpha")
    if a <= 1:
        raise InvalidParameterError(f"the Rényi order alpha = {a} must be > 1")
    return a


def region_kinds(region: Region) -> list[tuple[Any, int]]:
    """``[(the region's canonical pair as a mechanism, 1)]``: summarise a region itself.

    The Rényi divergences and the GDP mu of a region are those of its canonical pair
    (docs/theory.md, sections 1 and 20).
    """
    return [(RegionMechanism(region), 1)]


# ---------------------------------------------------------------------------------------
# sums over the composed mechanisms


def _exact_sum(terms: Sequence[tuple[int, _Div]]) -> Value:
    """``sum_i k_i D_i`` of exact divergences: a Value certified to any digits."""
    if any(d.infinite for _, d in terms):
        return INFINITY
    rational = sum((n * d.rational for n, d in terms if d.rational is not None), Fraction(0))
    terms = [(n, d) for n, d in terms if not d.zero and d.rational is None]
    if not terms:
        return Value.from_rational(rational)
    if rational:
        terms.append((1, _rational_div(rational)))

    def ev(prec: int) -> flint.arb:
        with flint.ctx.workprec(prec):
            total = flint.arb(0)
            for n, d in terms:
                total += n * d.ev(prec)  # type: ignore[misc]
            return total

    def text() -> str:
        parts = (d.text() if n == 1 else f"{n}*({d.text()})" for n, d in terms)  # type: ignore[misc]
        return " + ".join(parts)

    return _keyed(Value(ev, closed_form=text, is_zero=False))


def _end(d: _Div, upper: bool) -> _Div:
    if not d.enclosed:
        return d
    return d.upper if upper else d.lower  # type: ignore[return-value]


def _direction_total(terms: Sequence[tuple[int, _Div]]) -> Value | tuple[Value, Value]:
    """One direction's sum: a Value, or ``(lower, upper)`` Values when enclosed."""
    if not any(d.enclosed for _, d in terms):
        return _exact_sum(terms)
    return (
        _exact_sum([(n, _end(d, False)) for n, d in terms]),
        _exact_sum([(n, _end(d, True)) for n, d in terms]),
    )


def _max(a: Value, b: Value) -> Value:
    """The larger of two exact values, as an exact value (closed form ``Max(a, b)``)."""
    if is_infinite(a) or is_infinite(b):
        return INFINITY

    def ev(prec: int) -> flint.arb:
        return a.ball(prec).max(b.ball(prec))

    zero = bool(a._zero) and bool(b._zero)  # the exact zero flags of both
    return _keyed(Value(ev, closed_form=lambda: f"Max({a.exact}, {b.exact})", is_zero=zero))


def _interval(lower: Value, upper: Value) -> Value:
    """A certified enclosure ``[lower, upper]`` (an infinite upper end is refused)."""
    if is_infinite(upper):
        if is_infinite(lower):
            return INFINITY
        raise ResourceLimitError(
            "the Rényi divergence lies between a finite value and infinity: the subsampled "
            "mechanism's bounds are too loose to enclose it"
        )
    lo = lower.ball(_ENCLOSURE_BITS)
    hi = upper.ball(_ENCLOSURE_BITS)
    return Value.from_interval(lo, hi, nonnegative=True)


def renyi(kinds: Sequence[tuple[Any, int]], alpha: Any) -> Value:
    """The Rényi divergence of order ``alpha`` of the composition of ``kinds``.

    ``D_alpha`` is additive over the composed mechanisms in each direction; the answer
    is the larger of the two directions' sums (docs/theory.md, section 20).

    Args:
        kinds: ``[(mechanism, count), ...]``: mechanisms speaking the mechanism protocol.
        alpha: the order, an exact rational ``> 1`` (``"1.5"``, ``2``, a Fraction).

    Returns:
        An exact Value (certified to any digits) when every part is exact;
        :data:`INFINITY` when a pair has a leak (mass where the other hypothesis has
        none); a certified enclosure when a subsampled mechanism is known only by bounds.

    Raises:
        InvalidParameterError: ``alpha <= 1``.
        TypeError: a float order.
    """
    a = parse_order(alpha)
    fwd: list[tuple[int, _Div]] = []
    rev: list[tuple[int, _Div]] = []
    for m, n in kinds:
        if not n:
            continue
        d0, d1 = _directions(m.loss_pair(), a)
        fwd.append((int(n), d0))
        rev.append((int(n), d1))
    if all(f is r for (_, f), (_, r) in zip(fwd, rev)):
        return _direction_total(fwd)  # type: ignore[return-value] - never enclosed here
    t0, t1 = _direction_total(fwd), _direction_total(rev)
    if isinstance(t0, Value) and isinstance(t1, Value):
        return _max(t0, t1)
    lo0, hi0 = t0 if isinstance(t0, tuple) else (t0, t0)
    lo1, hi1 = t1 if isinstance(t1, tuple) else (t1, t1)
    return _interval(_max(lo0, lo1), _max(hi0, hi1))


def renyi_curve(
    kinds: Sequence[tuple[Any, int]], orders: Sequence[Any]
) -> list[tuple[Fraction, Value]]:
    """``[(alpha, D_alpha), ...]`` for each order (see :func:`renyi`)."""
    return [(parse_order(a), renyi(kinds, a)) for a in orders]


# ---------------------------------------------------------------------------------------
# Gaussian differential privacy


def gdp_mu(
    kinds: Sequence[tuple[Any, int]],
    region: Region | None = None,
    delta: Callable[[Any], Value] | None = None,
) -> Value:
    """The smallest ``mu`` such that the composition is ``mu``-GDP (``G_mu <= f``).

    Exactly ``sqrt(sum_i k_i mu_i^2)`` when every composed mechanism is Gaussian noise,
    Poisson-subsampled or not; for finite symmetric pairs, from the vertices of the exact
    composed region; for both together, a certified enclosure of ``sup_tau h(tau)``
    over the Neyman-Pearson curve (about 1e-9 wide relative; the bracket
    ``[max(m, mu_F), sqrt(m^2 + mu_F^2)]`` when the Gaussian noise is subsampled); when
    every loss is bounded (Laplace noise, subsampled Laplace noise, subsampled finite
    pairs, finite pairs), a certified
    enclosure of the supremum of ``m(eps)`` over ``[0, loss cap]`` from ``delta``
    (docs/theory.md, section 20).

    Args:
        kinds: ``[(mechanism, count), ...]``.
        region: the exact composed region (a
            :class:`~dpcompose_exact.regions.tradeoff.Region`), needed when the kinds are
            finite pairs; None otherwise.
        delta: the composition's ``delta(eps)``: for bounded losses the profile the
            enclosure is computed from (needed there); unused otherwise.

    Raises:
        InvalidParameterError: when a composed pair has a leak (then ``f(0) < 1`` and no
            finite ``mu`` exists), when finite pairs come without their exact region, or
            for the mixes not computed (Gaussian noise next to Laplace noise or
            subsampled mechanisms other than subsampled Gaussian noise:
            :class:`~dpcompose_exact.errors.UnsupportedQueryError`).
    """
    pairs = [(m.loss_pair(), int(n)) for m, n in kinds if n]
    leaky = [m.describe() for (m, n) in kinds if n and m.loss_pair().has_leak()]
    if leaky:
        raise InvalidParameterError(
            f"no finite GDP mu exists: {leaky[0]} has a leak (mass at privacy loss "
            "+infinity, so the trade-off function has f(0) < 1 while every G_mu has "
            "G_mu(0) = 1)"
        )
    forms = {lp.form for lp, _ in pairs}
    if forms == {PairForm.FINITE}:
        if region is None:
            raise InvalidParameterError(
                "gdp_mu of finite pairs is read from the exact composed region; this "
                "composition has none (compose with method 'exact')"
            )
        return _finite_mu(region)
    noise_part = [(lp, n) for lp, n in pairs if lp.form is not PairForm.FINITE]
    if PairForm.FINITE in forms and _gaussian_family_mu2(noise_part) is not None:
        return _mixed_mu(pairs)  # Gaussian noise (some maybe subsampled) next to finite pairs
    family = _gaussian_family_mu2(pairs)
    if family is not None:  # Gaussian noise, some of it Poisson-subsampled: exact
        return _sqrt_value(family)
    cap = _loss_cap(pairs)
    if cap is not None and delta is not None:  # bounded losses: the profile on [0, cap]
        return _profile_mu(delta, cap)
    others = sorted(
        {
            m.describe()
            for (m, n) in kinds
            if n and m.loss_pair().form not in (PairForm.GAUSSIAN, PairForm.FINITE)
        }
    )
    if others:  # a query not answered for this mix: no parameter is invalid
        raise UnsupportedQueryError(
            "gdp_mu is computed for Gaussian noise (subsampled or not: exact), finite pairs "
            "(exact), both together (an enclosure), and for mechanisms of bounded privacy "
            "loss (Laplace, subsampled Laplace, subsampled finite pairs: an enclosure from "
            f"delta); not for {others[0]} in this mix: Gaussian noise next to Laplace or "
            "subsampled mechanisms has unbounded loss and no certified mu is computed"
        )
    return _sqrt_value(_gaussian_family_mu2(pairs) or Fraction(0))
