"""The GDP ``mu`` of exact finite regions, and of Gaussian noise next to them.

``G_mu`` lies below a trade-off function ``f`` iff ``mu >= Phi^-1(1 - t) - Phi^-1(f(t))``
at every ``t`` (docs/theory.md, section 20):

* finite symmetric pairs without a leak (:func:`_finite_mu`): ``G_mu`` is convex and the
  exact composed ``f`` linear between its vertices, so ``mu*`` is the largest
  ``Phi^-1(1 - t) - Phi^-1(f(t))`` over the vertices ``(t, f(t))``, an exact value;
* Gaussian noise ``G_m`` (``m^2 = sum_i k_i mu_i^2``) next to finite pairs ``F``
  (:func:`_mixed_mu`): ``mu* = sup_tau h(tau)``, ``h = Psi(alpha) - Psi(bbar)`` over the
  Neyman-Pearson tests of ``G_m (x) F`` (:class:`_NoisyFinite`), enclosed by cells on a
  scan range and a certified walk of the tail (:func:`_tail_walk`); with some of the
  Gaussian noise Poisson-subsampled, the bracket ``[max(m, mu_F), sqrt(m^2 + mu_F^2)]``;
* Gaussian noise alone, subsampled or not: exactly ``sqrt(m^2)`` (:func:`_sqrt_value`,
  :func:`_gaussian_family_mu2`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from math import isqrt
from typing import Any

import flint

from ..numbers.convert import ball_end, rational_ball
from ..numbers.format import rat_str
from ..numbers.value import Value
from ..regions.pld import canonical_pair
from ..regions.protocol import LossPair, PairForm
from ..regions.tradeoff import Region
from .gdp_profile import _ENCLOSURE_BITS, GDP_REL_WIDTH, weighted_sum

__all__: list[str] = []


def _keyed(value: Value) -> Value:
    """``value`` with its closed form as its key: equal forms are equal without a ball.

    (Different forms may still be equal; those are compared by certified signs.)
    """
    value._key_make = lambda: ("form", value.exact)
    return value


def _sqrt_value(x: Fraction) -> Value:
    """``sqrt(x)`` for a rational ``x >= 0``: rational when it is a square, else exact."""
    rn, rd = isqrt(x.numerator), isqrt(x.denominator)
    if rn * rn == x.numerator and rd * rd == x.denominator:
        return Value.from_rational(Fraction(rn, rd))

    def ev(prec: int) -> flint.arb:
        with flint.ctx.workprec(prec):
            return rational_ball(x).sqrt()

    key = ("sqrt", x.numerator, x.denominator)
    return Value(ev, closed_form=lambda: f"sqrt({rat_str(x)})", key=key, is_zero=False)


def _vertex_mu(region: Region, t: Any, f: Any) -> tuple[Callable[[int], flint.arb], str]:
    """``mu`` with ``G_mu`` through the vertex ``(t, f)``: ``Phi^-1(1 - t) - Phi^-1(f)``."""
    dom = region.domain

    def ev(prec: int) -> flint.arb:
        with flint.ctx.workprec(prec + 10):
            tb, fb = dom.elem_ball(t, prec + 10), dom.elem_ball(f, prec + 10)
            return flint.arb(2).sqrt() * ((1 - 2 * tb).erfinv() + (1 - 2 * fb).erfinv())

    text = f"sqrt(2)*(erfinv(1 - 2*({dom.elem_str(t)})) + erfinv(1 - 2*({dom.elem_str(f)})))"
    return ev, text


def _finite_mu(region: Region) -> Value:
    """The smallest ``mu`` with ``G_mu <= f`` for a piecewise-linear ``f`` without a leak.

    ``G_mu`` is convex and ``f`` linear between its vertices, so ``G_mu <= f`` holds iff it
    holds at every vertex; the vertex ``(t, f(t))`` asks ``mu >= Phi^-1(1 - t) -
    Phi^-1(f(t))``.  Vertices certified below another (balls up to 2048 bits) are dropped;
    the value is the largest of the others (one closed form when one is left).
    """
    verts = [(t, f) for t, f in region.half_vertices() if not t.is_zero()]
    if not verts:
        return Value.from_rational(0)
    parts = [_vertex_mu(region, t, f) for t, f in verts]
    kept = parts
    for prec in (128, 256, 512, 1024, 2048):  # drop the vertices certified below another
        balls = [ev(prec) for ev, _ in kept]
        if not all(b.is_finite() for b in balls):
            continue
        top = max((b.lower() for b in balls), key=float)  # the largest lower end (a ball)
        kept = [p for p, b in zip(kept, balls) if not b.upper() < top]
        if len(kept) == 1:
            break
    if len(kept) == 1:
        ev, text = kept[0]
        return _keyed(Value(ev, closed_form=lambda: text, is_zero=False))

    def ev_max(prec: int) -> flint.arb:
        out = kept[0][0](prec)
        for e, _ in kept[1:]:
            out = out.max(e(prec))
        return out

    text = "Max(" + ", ".join(t for _, t in kept) + ")"
    return _keyed(Value(ev_max, closed_form=lambda: text, is_zero=False))


class _NoisyFinite:
    """The trade-off curve of ``G_m (x) F``, ``F`` finite and symmetric, without a leak.

    With the canonical pair of ``F`` (P-masses ``p_j`` at the losses ``l_j``, Q-masses
    ``q_j = p_j e^{-l_j}``) and ``x_j = (tau - l_j)/m``, the Neyman-Pearson tests that
    reject when the loss exceeds ``tau`` have errors ``alpha(tau) = sum_j q_j
    Phi_bar(x_j + m/2)`` and ``beta(tau) = 1 - bbar(tau)``, ``bbar(tau) = sum_j p_j
    Phi_bar(x_j - m/2)``, and ``G_mu <= f`` iff ``mu >= h(tau) = Psi(alpha) - Psi(bbar)``
    at every ``tau`` (``Psi`` the inverse of ``Phi_bar``; docs/theory.md, section 20).
    Both sums have positive terms only: no cancellation, however far in the tail.
    """

    def __init__(self, m2: Fraction, region: Region) -> None:
        pld = canonical_pair(region)
        self.m2 = m2
        self.dom = pld.domain
        self.masses = pld.masses  # ascending losses
        self._atoms: dict[int, tuple[flint.arb, list[tuple[flint.arb, flint.arb, flint.arb]]]] = {}

    def atoms(self, prec: int) -> tuple[flint.arb, list[tuple[flint.arb, flint.arb, flint.arb]]]:
        """``(m, [(l_j, p_j, q_j), ...])`` as balls at ``prec`` bits."""
        if prec not in self._atoms:
            with flint.ctx.workprec(prec):
                out = []
                for loss, mass in self.masses:
                    lb = self.dom.loss_ball(loss, prec)
                    pb = self.dom.elem_ball(mass, prec)
                    out.append((lb, pb, pb * (-lb).exp()))
                self._atoms[prec] = (rational_ball(self.m2).sqrt(), out)
        return self._atoms[prec]

    def _sums(self, tau: flint.arb, prec: int) -> tuple[flint.arb, flint.arb]:
        """``(2 alpha(tau), 2 bbar(tau))`` in Arb: sums of positive terms."""
        m, atoms = self.atoms(prec)
        with flint.ctx.workprec(prec):
            r2 = flint.arb(2).sqrt()
            half = m / 2
            a = b = flint.arb(0)
            for lb, pb, qb in atoms:
                x = (tau - lb) / m
                a += qb * ((x + half) / r2).erfc()
                b += pb * ((x - half) / r2).erfc()
            return a, b

    def h(self, tau: flint.arb, prec: int) -> flint.arb:
        """``h(tau) = Psi(alpha) - Psi(bbar)`` in Arb at ``prec`` bits."""
        a, b = self._sums(tau, prec)
        with flint.ctx.workprec(prec):
            return flint.arb(2).sqrt() * (a.erfcinv() - b.erfcinv())

    def _derivatives(
        self, tau: flint.arb, za: flint.arb, zb: flint.arb, prec: int
    ) -> tuple[flint.arb, flint.arb]:
        """``(h', h'')`` at ``tau`` (a point or a cell), ``za``, ``zb`` enclosing ``Psi``'s.

        With ``U = sum_j q_j phi(x_j + m/2)``, ``V = sum_j p_j phi(x_j - m/2)`` and
        ``Psi'(u) = -1/phi(Psi(u))``: ``h' = (U/phi(za) - V/phi(zb))/m``, and from
        ``phi'(z) = -z phi(z)``, ``za' = U/(m phi(za))``, ``U' = -(1/m) sum_j q_j (x_j +
        m/2) phi(x_j + m/2)``: ``h'' = ((U' + za U^2/(m phi(za)))/phi(za) - (V' + zb
        V^2/(m phi(zb)))/phi(zb))/m``; every ``phi`` here is computed without its factor
        ``1/sqrt(2 pi)``, which cancels in each ratio.
        """
        m, atoms = self.atoms(prec)
        with flint.ctx.workprec(prec):
            half = m / 2
            u = v = du = dv = flint.arb(0)
            for lb, pb, qb in atoms:
                x = (tau - lb) / m
                eu = qb * (-((x + half) ** 2) / 2).exp()
                ev = pb * (-((x - half) ** 2) / 2).exp()
                u, v = u + eu, v + ev
                du, dv = du - (x + half) * eu / m, dv - (x - half) * ev / m
            pa, pb_ = (-(za**2) / 2).exp(), (-(zb**2) / 2).exp()
            first = (u / pa - v / pb_) / m
            second = ((du + za * u * u / (m * pa)) / pa - (dv + zb * v * v / (m * pb_)) / pb_) / m
            return first, second

    def cell(
        self, lo: flint.arb, hi: flint.arb, c: flint.arb, prec: int
    ) -> tuple[flint.arb, flint.arb, flint.arb, flint.arb]:
        """``(h'(c), h' on the cell, h'' on the cell, top)`` for the cell ``[lo, hi]``.

        ``alpha`` and ``bbar`` decrease with ``tau`` and ``Psi`` decreases, so both
        ``Psi(alpha)`` and ``Psi(bbar)`` increase: on the cell they lie between their
        values at the ends (a ball evaluation of ``erfc`` over a wide cell would lose every
        digit), and ``top = Psi(alpha(hi)) - Psi(bbar(lo))`` bounds ``h`` there.
        """
        a_lo, b_lo = self._sums(lo, prec)
        a_hi, b_hi = self._sums(hi, prec)
        a_c, b_c = self._sums(c, prec)
        with flint.ctx.workprec(prec):
            r2 = flint.arb(2).sqrt()
            za_lo, za_hi = r2 * a_lo.erfcinv(), r2 * a_hi.erfcinv()
            zb_lo, zb_hi = r2 * b_lo.erfcinv(), r2 * b_hi.erfcinv()
            za, zb = za_lo.union(za_hi), zb_lo.union(zb_hi)
            at_c = self._derivatives(c, r2 * a_c.erfcinv(), r2 * b_c.erfcinv(), prec)[0]
            slope, curv = self._derivatives(lo.union(hi), za, zb, prec)
            return at_c, slope, curv, za_hi - zb_lo


def _tail_walk(
    curve: _NoisyFinite, d: flint.arb, y0: Fraction, prec: int
) -> tuple[list[tuple[Fraction, Fraction]], bool]:
    """Certify ``h <= m + d`` for ``y(tau) >= y0``, but on the ranges returned.

    ``y(tau) = (tau - E)/m + m/2``, ``E`` the largest loss of ``F`` (Q-mass ``q_E``),
    ``s_j = (E - l_j)/m >= 0`` and ``u = y - m``: ``alpha = sum_j q_j Phi_bar(y + s_j)`` and
    ``bbar = sum_j p_j Phi_bar(u + s_j)``.  ``Phi_bar`` is log-concave, so ``R_s(y) =
    Phi_bar(y + s)/Phi_bar(y)`` and ``T_c(y) = Psi(c Phi_bar(y)) - y`` (``0 < c <= 1``) do
    not increase with ``y``.  On ``[y_1, y_2]``: ``alpha >= q'' Phi_bar(y)`` with ``q'' =
    sum_j q_j R_{s_j}(y_2)``, ``bbar <= p' Phi_bar(u)`` with ``p' = sum_j p_j
    R_{s_j}(u_1)``, so ``h = Psi(alpha) - Psi(bbar) <= m + T_{q''}(y_1) - T_{p'}(u_2)``.
    Beyond a ``y`` with ``T_{q_E}(y) <= d`` (one term of ``alpha``; ``bbar <= Phi_bar(u)``
    gives ``Psi(bbar) >= u``), ``h <= m + d`` holds for good.  The walk steps ``y`` up by
    1/32 of itself (at least 1/16; shorter steps tried when one fails) and returns the
    ``y`` ranges where a step failed (for the cells), and whether it reached the end
    (docs/theory.md, section 20).
    """
    m, atoms = curve.atoms(prec)
    e_loss, q_e = atoms[-1][0], atoms[-1][2]
    left: list[tuple[Fraction, Fraction]] = []
    with flint.ctx.workprec(prec):
        r2 = flint.arb(2).sqrt()
        gaps = [((e_loss - lb) / m, pb, qb) for lb, pb, qb in atoms]

        def t_of(c: flint.arb, x: flint.arb) -> flint.arb:  # Psi(c Phi_bar(x)) - x
            return r2 * (c * (x / r2).erfc()).erfcinv() - x

        def mix(x: flint.arb, forward: bool) -> flint.arb:  # sum_j w_j R_{s_j}(x)
            base = (x / r2).erfc()
            out = flint.arb(0)
            for s, pb, qb in gaps:
                out += (qb if forward else pb) * ((x + s) / r2).erfc()
            return (out / base).min(flint.arb(1))

        y = y0
        for _ in range(4000):
            yb = rational_ball(y)
            if t_of(q_e, yb) <= d:
                return left, True
            full = step = max(abs(y) / 32, Fraction(1, 16))
            p1 = mix(yb - m, False)
            ok = False
            for _ in range(4):
                y2 = rational_ball(y + step)
                bound = t_of(mix(y2, True), yb) - t_of(p1, y2 - m)
                if bound.is_finite() and bound <= d:
                    ok = True
                    break
                step /= 4
            if not ok:
                step = full
                if left and left[-1][1] == y:
                    left[-1] = (left[-1][0], y + step)
                else:
                    left.append((y, y + step))
            y += step
    return left, False


def _lower_fraction(ball: flint.arb) -> Fraction:
    """A rational at or below every point of ``ball``."""
    return ball_end(ball, up=False)


#: the most cells :func:`_gaussian_finite_mu` evaluates, and the most cell-atom terms
_GAUSS_FINITE_CELLS = 1000
_GAUSS_FINITE_TERMS = 50_000


def _gaussian_finite_mu(m2: Fraction, region: Region, nu: Value) -> Value:
    """``mu*`` of ``G_m (x) F`` (``m^2 = m2``, ``F`` the exact region, ``nu`` its own mu).

    ``mu* = sup_tau h(tau)`` (:class:`_NoisyFinite`); ``h`` is even (``F`` is symmetric),
    so ``tau >= 0`` suffices.  Lower end: ``h`` at points, certified in Arb, and
    ``max(m, nu)``.  Upper end: the scan range ``[0, E + m(m/2 + 4)]`` is cut into
    cells, on each the smallest of ``Psi(alpha(b)) - Psi(bbar(a))``, the mean value
    bound ``h(c) + max|h'| w/2`` and Taylor's ``h(c) + |h'(c)| w/2 + max(sup h'', 0)
    w^2/8`` (``c`` the midpoint, ``w`` the length, ``h'`` and ``h''`` enclosed on the
    whole cell: second order in ``w`` near the maximiser); beyond it the walk of
    :func:`_tail_walk` (its failed ranges become cells too).  Cells above the lower end
    are halved until the enclosure is :data:`GDP_REL_WIDTH` wide; the upper end never
    exceeds ``sqrt(m^2 + nu^2)`` (docs/theory.md, section 20).
    """
    curve = _NoisyFinite(m2, region)
    prec = 128
    with flint.ctx.workprec(_ENCLOSURE_BITS):
        m_ball = rational_ball(m2).sqrt()
        nu_ball = nu.ball(_ENCLOSURE_BITS)
        loose = ball_end((rational_ball(m2) + nu_ball * nu_ball).sqrt())
    lower = max(_lower_fraction(m_ball), _lower_fraction(nu_ball), Fraction(0))
    if not curve.masses or curve.dom.loss_sign(curve.masses[-1][0]) <= 0:
        return _sqrt_value(m2)  # F is the identity pair: G_m (x) F = G_m
    if loose - lower <= GDP_REL_WIDTH * loose:  # [max(m, nu), sqrt(m^2 + nu^2)] is narrow
        with flint.ctx.workprec(_ENCLOSURE_BITS):
            return Value.from_interval(
                rational_ball(lower), rational_ball(loose), nonnegative=True
            )

    def bound(a: Fraction, b: Fraction) -> Fraction | None:
        nonlocal lower
        c = (a + b) / 2
        work = prec
        for work in (prec, 2 * prec, 4 * prec):
            hv = curve.h(rational_ball(c), work)
            if hv.is_finite() and hv.rad() < abs(hv.mid()) * 2.0**-80:
                break
        if hv.is_finite():
            lower = max(lower, _lower_fraction(hv))
        with flint.ctx.workprec(work):
            cb = rational_ball(c)
            at_c, slope, curv, top = curve.cell(rational_ball(a), rational_ball(b), cb, work)
            half = rational_ball((b - a) / 2)
            mean = hv + abs(slope) * half  # the mean value theorem
            # Taylor: h(c + s) = h(c) + h'(c) s + h''(xi) s^2 / 2, |s| <= w/2
            taylor = hv + abs(at_c) * half + curv.upper().max(0) * half * half / 2
        tops = [ball_end(t) for t in (mean, taylor, top) if t.is_finite()]
        return min(tops) if tops else None

    with flint.ctx.workprec(prec):  # y = m + 4 there (in Arb: m may be past the doubles)
        e_top = curve.atoms(prec)[1][-1][0]
        scan = Fraction(math.ceil(ball_end((e_top + m_ball * (m_ball / 2 + 4)) * 64)), 64)
    n0 = 64
    cells = [(scan * i / n0, scan * (i + 1) / n0) for i in range(n0)]
    bounds = [bound(a, b) for a, b in cells]
    # the tail: h <= m + d beyond the scan, d a hair above lower - m; the ranges where
    # the walk fails join the cells
    with flint.ctx.workprec(prec):
        e_ball = curve.atoms(prec)[1][-1][0]
        d = rational_ball(lower) - m_ball + rational_ball(lower * GDP_REL_WIDTH / 4)
        y0 = _lower_fraction((rational_ball(scan) - e_ball) / m_ball + m_ball / 2)
        left, reached = _tail_walk(curve, d, y0, prec)
        tail = ball_end(m_ball + d) if reached else None
        for ya, yb in left:  # tau = E + m (y - m/2), rounded outwards
            t0 = max(scan, _lower_fraction(e_ball + m_ball * (rational_ball(ya) - m_ball / 2)))
            t1 = ball_end(e_ball + m_ball * (rational_ball(yb) - m_ball / 2))
            cells.append((t0, t1))
            bounds.append(bound(t0, t1))
    upper = loose
    budget = min(_GAUSS_FINITE_CELLS, max(256, _GAUSS_FINITE_TERMS // len(curve.masses)))
    while tail is not None:
        known = [x for x in bounds if x is not None]
        top = max(known + [tail])
        if len(known) == len(bounds):
            upper = min(loose, top)
            if top == tail and upper - lower > GDP_REL_WIDTH * upper:
                break  # the tail decides: halving cells cannot lower the upper end
        if upper - lower <= GDP_REL_WIDTH * upper or len(cells) >= budget:
            break
        order = sorted(
            (i for i, x in enumerate(bounds) if x is None or x > lower),
            key=lambda i: -math.inf if bounds[i] is None else -float(bounds[i]),  # type: ignore[arg-type]
        )[:16]
        if not order:
            break
        for i in sorted(order, reverse=True):
            a, b = cells.pop(i)
            bounds.pop(i)
            c = (a + b) / 2
            cells += [(a, c), (c, b)]
            bounds += [bound(a, c), bound(c, b)]
    with flint.ctx.workprec(_ENCLOSURE_BITS):
        return Value.from_interval(rational_ball(lower), rational_ball(upper), nonnegative=True)


def _mixed_mu(pairs: Sequence[tuple[LossPair, int]]) -> Value:
    """Gaussian noise ``G_m`` next to finite pairs ``F`` (``mu_F`` their own ``mu``).

    Plain Gaussian noise: the enclosure of :func:`_gaussian_finite_mu`, to
    :data:`GDP_REL_WIDTH`.  Some of the Gaussian noise Poisson-subsampled:
    ``G_m (x) F >= G_m (x) G_{mu_F} = G_sqrt(m^2 + mu_F^2)``, and ``G_m (x) F`` is below
    both ``G_m`` and ``F``: ``mu*`` lies in ``[max(m, mu_F), sqrt(m^2 + mu_F^2)]`` (its
    ``mu*`` is still ``m`` and it is above ``G_m``, so the same enclosure holds;
    docs/theory.md, section 20).
    """
    from .finiteroutes import ComposeOptions, Method, compose_routed

    noise = [(lp, n) for lp, n in pairs if lp.form is not PairForm.FINITE]
    m2 = _gaussian_family_mu2(noise)
    assert m2 is not None
    finite = [(lp.directions()[0], n) for lp, n in pairs if lp.form is PairForm.FINITE]
    result, _ = compose_routed(finite, ComposeOptions(Method.EXACT, closed_forms=False))
    nu = _finite_mu(result.region)
    if all(lp.form is PairForm.GAUSSIAN for lp, _ in noise):
        return _gaussian_finite_mu(m2, result.region, nu)
    with flint.ctx.workprec(_ENCLOSURE_BITS):
        g, f = rational_ball(m2).sqrt(), nu.ball(_ENCLOSURE_BITS)
        return Value.from_interval(g.max(f), (rational_ball(m2) + f * f).sqrt(), nonnegative=True)


def _gaussian_family_mu2(pairs: Sequence[tuple[LossPair, int]]) -> Fraction | None:
    """``sum_i k_i mu_i^2`` when every pair is Gaussian noise, subsampled or not; else None.

    Poisson subsampling at any rate leaves ``mu*`` where it was (docs/theory.md, section
    20): each subsampled Gaussian is dominated by its Gaussian, and far in the tail the
    composition's trade-off function falls below every ``G_mu`` with a smaller ``mu``.
    """
    return weighted_sum(pairs, lambda lp: lp.gaussian_mu2())
