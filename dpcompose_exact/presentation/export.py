"""Hand an exact privacy region to float code: dp_accounting, prv_accountant, OpenDP.

Every function here crosses the float boundary in the safe direction where the target
format allows it:

* :func:`to_dp_accounting` builds a pessimistic
  ``dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution`` of the region's
  dominating pair (docs/theory.md, section 1): every privacy loss is rounded **up** to the
  library's grid by an exact comparison, every mass and the mass at +inf are rounded **up**
  to doubles.  The hockey-stick divergence ``inf_mass + sum_l p(l) (1 - e^(eps - l))_+``
  only grows when a loss or a mass grows, and so does that of any composition, so the
  result stays an upper bound when it is composed further in dp_accounting (with Gaussian
  events, say).  The pair is built with ``PrivacyLossDistribution.create_from_rounded_probability``
  rather than ``from_two_probability_mass_functions``: the latter recomputes each loss as a
  difference of two float logarithms, which can land just below a grid point that the
  exact loss exceeds and then rounds it down.
* :func:`to_prv` builds a ``prv_accountant.PrivacyRandomVariable`` with the pair's atoms
  (nearest doubles) and the leak as ``pm_inf``.  prv_accountant discretizes it on its own
  grid and reports its own error bounds; this is not a pessimistic format.  The class is
  built by :func:`prv_from_atoms` from decimal losses and masses, which the audit of
  prv_accountant (:mod:`dpcompose_exact.tools.audit.prv_adapter`) uses as well.
* :func:`to_opendp` builds an OpenDP ``PrivacyProfile`` (``opendp.prelude.new_privacy_profile``,
  OpenDP 0.16): a callback ``delta(eps)`` that returns a double never below the exact
  delta at the exact binary value of ``eps``.  OpenDP marks the constructor
  ``honest-but-curious``: enable ``dp.enable_features("contrib", "honest-but-curious")``
  first.  OpenDP 0.16 neither composes such profiles nor lets a Python privacy map return
  one (its FFI does not convert a ``PrivacyProfile``); for a measurement, fix delta and map
  to ``(float_upper(composition.epsilon(delta)), delta)`` under
  ``dp.approximate(dp.max_divergence())``.

:func:`delta_upper` evaluates ``delta(eps)`` at any rational eps (the query never joins the
region's exponent field, so ``0.30000000000000004`` costs nothing extra); it is what float
callers (the dp_accounting accountant, OpenDP) use.

The third-party libraries are imported inside the functions (optional dependencies).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from ..engines.results import PrivacyResult
from ..errors import InvalidParameterError
from ..numbers import ExpDomain, LinearForm, Loss
from ..numbers.certify import refine
from ..numbers.convert import rational_ball
from ..numbers.value import Value
from ..optional import require
from ..regions.pld import PLD, canonical_pair
from ..regions.tradeoff import Region

__all__ = [
    "delta_upper",
    "float_upper",
    "exact_region",
    "pair_of",
    "to_dp_accounting",
    "to_opendp",
    "to_prv",
    "prv_from_atoms",
    "renyi_from_atoms",
]

_MAX_BITS = 1 << 14
_DIGITS = 40  # digits of the decimals handed to float code


# ---------------------------------------------------------------------------------------
# exact objects


def exact_region(result: PrivacyResult) -> Region:
    """An exact region that contains the result's region (itself when exact).

    A certified region's delta balls are replaced by rationals at their upper ends
    (:meth:`~dpcompose_exact.engines.results.CertifiedResult.upper_region`): a sound, slightly
    looser region.  Bounds have no region and are refused.
    """
    return result.upper_region()


def pair_of(result: PrivacyResult) -> PLD:
    """The exact dominating pair (leak + randomized responses) of a result's region."""
    return canonical_pair(exact_region(result))


def float_upper(value: Value) -> float:
    """A double >= ``value`` (:meth:`Value.upper`, kept under this name for callers)."""
    return value.upper()


def _loss_ceil(domain: ExpDomain, loss: Loss, step: Fraction) -> int:
    """``ceil(loss / step)`` decided exactly (rational loss) or by balls (logs are irrational)."""
    form = domain.form(loss)
    if not form.logs:
        q = form.rational / step
        return -((-q.numerator) // q.denominator)
    s = rational_ball(step)

    def ceil_at(bits: int) -> int | None:
        ratio = domain.loss_ball(loss, bits) / s
        lo, hi = ratio.lower().floor(), ratio.upper().floor()
        if lo == hi:  # the ball lies strictly inside one unit interval (irrational)
            return int(lo.unique_fmpz()) + 1
        return None

    return refine(
        ceil_at,
        start_prec=128,
        ceiling=_MAX_BITS,
        failure=lambda: f"cannot place the loss {domain.loss_str(loss)} on the grid {step}",
    )


# ---------------------------------------------------------------------------------------
# delta(eps) at any rational eps


def delta_upper(result: PrivacyResult, eps: Fraction) -> Value:
    """``delta(eps)`` at any rational ``eps >= 0``: exact, a ball, or an enclosure (bounds).

    The one implementation, the result's own ``delta``: the query never joins the
    region's exponent field, so a float-derived eps costs nothing extra.
    """
    if not isinstance(eps, Fraction):
        raise TypeError(f"eps must be a Fraction, got {type(eps).__name__}")
    if eps < 0:
        raise InvalidParameterError(f"eps = {eps} is negative; valid range: eps >= 0")
    return result.delta(LinearForm(eps))


def to_dp_accounting(result: PrivacyResult, value_discretization_interval: float = 1e-4) -> Any:
    """A pessimistic dp_accounting ``PrivacyLossDistribution`` of the region's pair.

    Args:
        result: an exact or certified result (a certified one is first enlarged to the
            upper ends of its delta balls, :func:`exact_region`).
        value_discretization_interval: the library's loss grid (a float > 0); losses are
            rounded up to it, masses up to doubles.

    Returns:
        A symmetric ``PrivacyLossDistribution`` whose ``get_delta_for_epsilon`` is never
        below the exact delta (up to the library's own float summation).
    """
    pld_mod = require("dp_accounting.pld.privacy_loss_distribution", "to_dp_accounting()")

    if not (
        isinstance(value_discretization_interval, (int, float))
        and math.isfinite(value_discretization_interval)
        and value_discretization_interval > 0
    ):
        raise InvalidParameterError(
            f"value_discretization_interval = {value_discretization_interval!r} must be a "
            "positive float"
        )
    pair = pair_of(result)
    dom = pair.domain
    step = Fraction(value_discretization_interval)  # the double, exactly
    pmf: dict[int, float] = {}
    for loss, mass in pair.masses:
        index = _loss_ceil(dom, loss, step)
        pmf[index] = pmf.get(index, 0.0) + float_upper(Value.from_qz(dom, mass))
    leak = float_upper(Value.from_qz(dom, pair.leak)) if not pair.leak.is_zero() else 0.0
    return pld_mod.PrivacyLossDistribution.create_from_rounded_probability(
        pmf, leak, value_discretization_interval, pessimistic_estimate=True
    )


# ---------------------------------------------------------------------------------------
# prv_accountant


def to_prv(result: PrivacyResult) -> Any:
    """A ``prv_accountant.PrivacyRandomVariable`` with the atoms of the region's pair.

    The losses are the atoms (nearest doubles), the P0-masses conditioned on a finite loss
    their weights, the leak ``pm_inf``; ``rdp(alpha)`` (conditioned on a finite loss, the
    library's convention) is computed at 40 digits and rounded up.  Use it with
    ``prv_accountant.PRVAccountant(prvs=[...], max_self_compositions=[...], ...)``.
    """
    pair = pair_of(result)
    dom = pair.domain
    losses = [dom.loss_decimal(loss, _DIGITS) for loss, _ in pair.masses]
    masses = [dom.decimal(m, _DIGITS) for _, m in pair.masses]
    leak = float(dom.decimal(pair.leak, _DIGITS)) if not pair.leak.is_zero() else 0.0
    return prv_from_atoms(losses, masses, leak)


def prv_from_atoms(losses: Sequence[str], masses: Sequence[str], leak: float) -> Any:
    """A ``prv_accountant.PrivacyRandomVariable`` of a finite pair given by decimals.

    The one implementation behind :func:`to_prv` and the audit's prv_accountant adapter.

    Args:
        losses: the finite losses ``ln(P0/P1)`` of the pair's letters, as decimal strings.
        masses: their P0-masses, as decimal strings.
        leak: the P0-mass at loss +inf (a double), the variable's ``pm_inf``.

    Returns:
        A discrete privacy random variable: atoms at the losses (nearest doubles, sorted),
        weights the masses conditioned on a finite loss, ``rdp`` by
        :func:`renyi_from_atoms` (rounded up).
    """
    require("prv_accountant", "to_prv()")  # each call: the class below is cached
    return _prv_class()(losses, masses, leak)


@functools.cache
def _prv_class() -> type:
    """The PRV class (defined once, on first use: prv_accountant is optional)."""
    np = require("numpy", "to_prv()", extra="audit")
    PrivacyRandomVariable = require(  # noqa: N806 - a class
        "prv_accountant", "to_prv()"
    ).PrivacyRandomVariable

    class ExactPairPRV(PrivacyRandomVariable):
        """Discrete PRV of a finite pair (atoms at the losses; the leak as ``pm_inf``)."""

        def __init__(self, losses: Sequence[str], masses: Sequence[str], leak: float) -> None:
            self.losses = tuple(losses)
            self.masses = tuple(masses)
            self.leak = leak
            atoms = np.asarray([float(x) for x in self.losses], dtype=float)
            weights = np.asarray([float(m) for m in self.masses], dtype=float)
            order = np.argsort(atoms)
            self.atoms = atoms[order]
            self.weights = weights[order] / math.fsum(weights)
            self.cum = np.concatenate([[0.0], np.cumsum(self.weights)])
            self.cum[-1] = 1.0

        def cdf(self, t: Any) -> Any:
            return self.cum[np.searchsorted(self.atoms, t, side="right")]

        def mean(self) -> float:
            return float(np.dot(self.atoms, self.weights))

        def rdp(self, alpha: float) -> float:
            return renyi_from_atoms(self.losses, self.masses, float(alpha))

        @property
        def pm_inf(self) -> float:
            return self.leak

    return ExactPairPRV


def renyi_from_atoms(
    losses: Sequence[str], masses: Sequence[str], order: float, conditional: bool = True
) -> float:
    """``D_order(P0 || P1)`` of the finite letters of a pair, rounded up to a double.

    ``log(sum_i p_i e^((order - 1) l_i)) / (order - 1)`` at 40 digits from the decimals
    ``losses`` (``l_i``) and ``masses`` (``p_i``), with the masses renormalized to a finite
    loss when ``conditional`` (prv_accountant's convention); the result is rounded up (an
    upper bound stays one) and at least 0.  The leak is the caller's: with a leak the
    unconditional divergence is infinite.
    """
    import mpmath

    with mpmath.workdps(_DIGITS):
        a = mpmath.mpf(order)
        ps = [mpmath.mpf(m) for m in masses]
        total = mpmath.fsum(p * mpmath.exp((a - 1) * mpmath.mpf(x)) for x, p in zip(losses, ps))
        if conditional:
            total /= mpmath.fsum(ps)
        value = mpmath.log(total) / (a - 1)
        out = float(value)
        if mpmath.mpf(out) < value:  # round up: an upper bound stays one
            out = math.nextafter(out, math.inf)
    return max(out, 0.0)


# ---------------------------------------------------------------------------------------
# OpenDP


def to_opendp(result: PrivacyResult) -> Any:
    """An OpenDP ``PrivacyProfile`` whose ``delta(eps)`` is never below the exact delta.

    Needs OpenDP >= 0.16 with ``dp.enable_features("contrib", "honest-but-curious")``
    (OpenDP's condition for a user-defined curve).
    """
    dp = require("opendp.prelude", "to_opendp()")

    def curve(eps: float) -> float:
        if math.isnan(eps) or eps < 0:
            raise ValueError(f"epsilon = {eps!r} must be >= 0")
        if math.isinf(eps):
            return _leak_up(result)
        return min(1.0, float_upper(delta_upper(result, Fraction(eps))))

    try:
        return dp.new_privacy_profile(curve)
    except dp.OpenDPException as exc:
        raise InvalidParameterError(
            f"OpenDP refused the privacy profile ({exc}); enable its features first: "
            'dp.enable_features("contrib", "honest-but-curious")'
        ) from None


def _leak_up(result: PrivacyResult) -> float:
    """The probability of an infinite loss (delta at eps = +inf), rounded up."""
    return float_upper(result.constraints()[-1][1])


def _register_mechanism_exports() -> None:
    """``Mechanism.to_dp_accounting``, ``to_prv`` and ``to_opendp`` write through here.

    The mechanisms sit below this layer and keep a registry of exporters
    (:data:`dpcompose_exact.mechanisms.dp.EXPORTERS`), filled here.
    """
    from ..engines.results import ExactResult
    from ..mechanisms.dp import EXPORTERS

    EXPORTERS["to_dp_accounting"] = lambda region, *a: to_dp_accounting(ExactResult(region), *a)
    EXPORTERS["to_prv"] = lambda region: to_prv(ExactResult(region))
    EXPORTERS["to_opendp"] = lambda region: to_opendp(ExactResult(region))


_register_mechanism_exports()
