"""Privacy curves of a composed region: delta(eps) and eps(delta), exactly.

Between two consecutive loss values ``l_i < l_{i+1}`` of the composed pair no loss lies,
so ``delta(eps) = sum_{l > eps} (P0(l) - e^eps P1(l)) = A - e^eps B`` is affine in
``e^eps`` there, with the region's own deltas at both ends (docs/theory.md, section 3).  Hence

* ``delta(eps) = delta_i + (delta_{i+1} - delta_i) (e^eps - e^{l_i})
  / (e^{l_{i+1}} - e^{l_i})``,
  an element of the exact field (joined with the generators of ``eps``);
* ``eps(delta) = log(e^{l_i} + (delta - delta_i) (e^{l_{i+1}} - e^{l_i})
  / (delta_{i+1} - delta_i))``
  on the segment where ``delta_{i+1} <= delta < delta_i``: the log of an exact expression,
  not a bisection.

Certified regions (large k) use the same formulas on balls.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint

from .certified import CertifiedRegion
from .errors import CertificationError, InvalidParameterError
from .numbers import ExpDomain, Loss, QzElem, _prec, domain_for, parse_exact
from .numbers import parse_rational as _parse_rational
from .tradeoff import Region, exact_sign
from .value import Value

__all__ = ["CurvePoint", "delta_of_eps", "eps_of_delta", "delta_value", "epsilon_value"]


@dataclass(frozen=True)
class CurvePoint:
    """One point of a privacy curve: exact strings (when known) and certified decimals."""

    epsilon: str | None
    delta: str | None
    epsilon_decimal: str
    delta_decimal: str

    def as_dict(self, exact: bool = True) -> dict[str, str]:
        """JSON row."""
        out = {}
        if exact and self.epsilon is not None:
            out["epsilon"] = self.epsilon
        if exact and self.delta is not None:
            out["delta"] = self.delta
        out["epsilon_decimal"] = self.epsilon_decimal
        out["delta_decimal"] = self.delta_decimal
        return out


def delta_value(region: Region | CertifiedRegion, eps: Any) -> Value:
    """``delta(eps)`` as a :class:`~dpcompose_exact.value.Value` (exact or certified)."""
    from .render import elem_closed_form

    e = parse_exact(eps, "eps")
    if exact_sign(e) < 0:
        raise InvalidParameterError(f"eps = {eps!r} is negative; valid range: eps >= 0")
    dom = region.domain.join(domain_for([e]))
    loss = dom.loss_of(e)
    if isinstance(region, CertifiedRegion):
        return Value.from_ball(_delta_ball(region, dom, loss))
    d = region.in_domain(dom).delta_at(loss)
    return Value.from_qz(dom, d, closed_form=lambda: elem_closed_form(dom, d))


def delta_of_eps(region: Region | CertifiedRegion, eps: Any, digits: int = 30) -> CurvePoint:
    """``delta(eps)``: the smallest delta such that the composition is (eps, delta)-DP."""
    from .render import elem_closed_form

    e = parse_exact(eps, "eps")
    if exact_sign(e) < 0:
        raise InvalidParameterError(f"eps = {eps!r} is negative; valid range: eps >= 0")
    dom = region.domain.join(domain_for([e]))
    if isinstance(region, CertifiedRegion):
        return _delta_certified(region, dom, dom.loss_of(e), digits)
    r = region.in_domain(dom)
    loss = dom.loss_of(e)
    d = r.delta_at(loss)  # exact interpolation in e^eps (Region.delta_at)
    return CurvePoint(
        dom.loss_str(loss),
        elem_closed_form(dom, d),
        dom.loss_decimal(loss, digits),
        dom.decimal(d, digits),
    )


def eps_of_delta(region: Region | CertifiedRegion, delta: Any, digits: int = 30) -> CurvePoint:
    """``eps(delta)``: the smallest eps such that the composition is (eps, delta)-DP."""
    v = epsilon_value(region, delta)
    d = _parse_rational(delta, "delta")
    return CurvePoint(v.exact, None, v.decimal(digits), _rat_decimal(d, digits))


def epsilon_value(region: Region | CertifiedRegion, delta: Any) -> Value:
    """``eps(delta)`` as a :class:`~dpcompose_exact.value.Value` (exact or certified)."""
    from .render import elem_closed_form

    d = _parse_rational(delta, "delta")
    if not 0 <= d < 1:
        raise InvalidParameterError(f"delta = {delta!r} is outside the valid range [0, 1)")
    if isinstance(region, CertifiedRegion):
        return _eps_certified(region, d)
    dom = region.domain
    dq = QzElem.from_rational(d)
    losses, deltas = region.losses, region.deltas
    zero = dom.zero_loss()
    if dom.compare(dq, deltas[-1]) < 0:
        raise InvalidParameterError(
            f"delta = {delta} is below the probability {dom.decimal(deltas[-1], 10)} that the "
            "composition reveals the input outright (the leak): no finite eps achieves it"
        )
    # ends of the segments, with eps = 0 prepended when 0 is not a loss value
    pts = list(zip(losses, deltas))
    if pts[0][0] != zero:
        pts.insert(0, (zero, region.delta_at(zero)))
    if dom.compare(dq, pts[0][1]) >= 0:
        return Value.from_rational(0)
    j = 0  # last index with deltas[j] > d
    while j + 1 < len(pts) and dom.compare(pts[j + 1][1], dq) > 0:
        j += 1
    (la, da), (lb, db) = pts[j], pts[j + 1]
    if dom.compare(db, dq) == 0:
        return Value.from_loss(dom, lb)
    ea, eb = dom.exp_loss(la), dom.exp_loss(lb)
    val = ea + (dq - da) * (eb - ea) / (db - da)  # e^eps, exact
    return Value.from_log_qz(dom, val, closed_form=lambda: f"log({elem_closed_form(dom, val)})")


def _rat_decimal(d: Fraction, digits: int) -> str:
    return ExpDomain(None).decimal(QzElem.from_rational(d), digits)


def _delta_certified(
    region: CertifiedRegion, dom: ExpDomain, loss: Loss, digits: int
) -> CurvePoint:
    d = _delta_ball(region, dom, loss)
    return CurvePoint(
        dom.loss_str(loss), None, dom.loss_decimal(loss, digits), _ball_decimal(d, digits)
    )


def _delta_ball(region: CertifiedRegion, dom: ExpDomain, loss: Loss) -> flint.arb:
    losses = tuple(region.domain.convert_loss(x, dom) for x in region.losses)
    i = dom.bisect_losses(losses, loss)
    prec = region.prec
    with _prec(prec):
        if i == len(losses) - 1:
            d = region.deltas[-1]
        elif i < 0:  # below every edge slope: the vertex (c, c), c = (1 - d0)/(1 + e^l0)
            e0 = dom.elem_ball(dom.exp_loss(losses[0]), prec)
            c = (1 - region.deltas[0]) / (1 + e0)
            d = 1 - c * (1 + dom.elem_ball(dom.exp_loss(loss), prec))
        else:
            ea = dom.elem_ball(dom.exp_loss(losses[i]), prec)
            eb = dom.elem_ball(dom.exp_loss(losses[i + 1]), prec)
            ee = dom.elem_ball(dom.exp_loss(loss), prec)
            da, db = region.deltas[i], region.deltas[i + 1]
            d = da + (db - da) * (ee - ea) / (eb - ea)
    return d


def _eps_certified(region: CertifiedRegion, d: Fraction) -> Value:
    dom = region.domain
    prec = region.prec
    with _prec(prec):
        db_ = flint.arb(flint.fmpq(d.numerator, d.denominator))
        deltas = region.deltas
        if deltas[-1] > db_:
            raise InvalidParameterError(f"delta = {d} is below the leak: no finite eps achieves it")
        if region.losses[0] != dom.zero_loss():
            # on [0, l0] delta(eps) = 1 - c (1 + e^eps) with c = (1 - d0) / (1 + e^l0)
            e0 = dom.elem_ball(dom.exp_loss(region.losses[0]), prec)
            c = (1 - deltas[0]) / (1 + e0)
            if 1 - 2 * c <= db_:
                return Value.from_rational(0)
            if deltas[0] <= db_:
                val = ((1 - db_) / c - 1).log()
                return Value.from_ball(val)
        elif deltas[0] <= db_:
            return Value.from_rational(0)
        j = 0
        while j + 1 < len(deltas) and deltas[j + 1] > db_:
            j += 1
        if not (deltas[j] > db_ and (j + 1 == len(deltas) or deltas[j + 1] <= db_)):
            raise CertificationError(
                f"delta = {d} is too close to a vertex to place it with {prec} bits"
            )
        ea = dom.elem_ball(dom.exp_loss(region.losses[j]), prec)
        eb = dom.elem_ball(dom.exp_loss(region.losses[j + 1]), prec)
        val = (ea + (db_ - deltas[j]) * (eb - ea) / (deltas[j + 1] - deltas[j])).log()
    return Value.from_ball(val)


def _ball_decimal(ball: flint.arb, digits: int) -> str:
    from .numbers import ball_to_decimal

    if ball.is_zero():
        return "0"
    out = ball_to_decimal(ball, digits)
    if out is None:
        raise CertificationError(f"only {ball.rel_accuracy_bits()} bits are certified")
    return out
