"""Certified bounds by exact usage counts of the logarithmic losses (the "log-split" sum).

The grid enclosure of :mod:`~dpcompose_exact.engines.bounds` rounds every logarithmic loss onto a
grid, and its width grows like ``k`` times the rounding.  When the logarithmic components
are few, this module keeps them exact instead and sums over *how many times* each is used,
with a certified bound on the mass it does not enumerate (docs/theory.md, section 14).

**The sum.**  Every kind ``kappa`` (a symmetric dominating pair composed ``k_kappa``
times) is a leak ``lambda_kappa`` plus a revealed-component mixture of randomized responses
``RR(x)`` (P0-masses ``e^x / (1 + e^x)`` at ``+x`` and ``1 / (1 + e^x)`` at ``-x``).  Split
its components into *rational* ones (``x`` a multiple of the rational generator ``g0``)
and *logarithmic* ones ``RR(l_i)`` of weights ``w_{kappa,i}``; write ``R_kappa`` for the
P0-measure of its rational components (on the grid ``g0 Z``, total mass ``W_kappa``).  The
finite part of the composition's P0-measure is the multinomial sum::

    sum over n_{kappa,i}, m_kappa = k_kappa - sum_i n_{kappa,i} >= 0 of
        prod_kappa multinomial(k_kappa; n_{kappa,.}, m_kappa) prod_i w_{kappa,i}^n_{kappa,i}
        * (convolution over i of RR(l_i)^{*n_i}) * (convolution over kappa of R_kappa^{*m_kappa})

with ``n_i = sum_kappa n_{kappa,i}``, and ``RR(l)^{*n}`` puts the binomial mass
``C(n, j) p^j (1 - p)^(n - j)`` (``p = e^l / (1 + e^l)``) on the loss ``(2 j - n) l``.  The
leak of the composition is ``1 - prod_kappa (1 - lambda_kappa)^k_kappa``.  For one term,
with logarithmic shift ``s = sum_i (2 j_i - n_i) l_i`` and rational measure ``P`` on
``g0 Z``, the hockey-stick part at ``eps`` is::

    T_P(eps - s) = sum_{c g0 > eps - s} P(c) (1 - e^(eps - s - c g0)) = S0(c*) - e^(eps - s) S1(c*)

with the suffix sums ``S0(c) = sum_{c' >= c} P(c')``, ``S1(c) = sum_{c' >= c} P(c')
e^(-c' g0)`` and ``c*`` the first unit above ``eps - s``.  Each term lies in ``[0, its
mass]``.

**The bound.**  The terms whose mass is below a threshold are not enumerated (the choice
is a floating-point heuristic; nothing below depends on it).  Every enumerated term is
evaluated in Arb ball arithmetic from exact inputs, so with ``L`` the leak and ``E`` the
sum of the enumerated terms, ``delta(eps) >= L + E``; the omitted terms add at most their
total mass ``O = (1 - L) - (mass of the enumerated terms)``, computed in balls as well, so
``delta(eps) <= L + E + O``.  ``eps(delta)`` follows from the monotonicity of ``delta``:
if ``delta_lower(e1) > d`` then ``eps(d) > e1``, and if ``delta_upper(e2) <= d`` then
``eps(d) <= e2``.

**Cost.**  The enumerated terms are the lattice points of a near-Gaussian of dimension
(number of logarithmic losses + number of log-bearing kinds) above the threshold: a few
thousand to a few hundred thousand.  Rational measures are needed once per vector of
``m_kappa`` over the kinds that mix rational and logarithmic components; a structure that
would need too many of them, or too many terms, raises :class:`TooLarge` and the caller
falls back to the grid enclosure.  A rational measure wider than
:data:`MAX_MEASURE_UNITS` grid units (a tiny ``g0`` next to large rational losses) is not
built: the non-zero rational losses are then enumerated like the logarithmic ones.  Every
loop of the build checks an optional deadline (:class:`OutOfTime`), and the search for
``eps(delta)`` runs in logarithms (no overflow beyond ``eps = 709``, no underflow of tiny
deltas).

The pieces the sum is built from (the rational measures with their suffix sums, the
randomized-response polynomials, the windows of usage counts, the deadlines) are
:mod:`~dpcompose_exact.engines.logmeasures`; this module is the sum, :class:`LogSplit`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any

import flint

from ..errors import BelowLeakError
from ..numbers import ExpDomain, Loss, QzElem
from ..numbers.convert import parse_delta, rational_ball
from ..numbers.value import Value
from ..regions.pld import PLD
from .genfunc import common_domain
from .logmeasures import (
    _BOX_FACTOR,
    MAX_MEASURE_UNITS,
    MAX_MEASURES,
    MAX_TERMS,
    PREC,
    TooLarge,
    _add,
    _check_symmetric,
    _eps_ball,
    _flog,
    _frac_ball,
    _Kind,
    _logaddexp,
    _Measure,
    _mid_fraction,
    _Poly,
    _poly_pow,
    _rr_poly,
    _window,
    at_or_above,
    check_deadline,
    short_text,
)
from .logmeasures import (
    OutOfTime as OutOfTime,
)

__all__ = ["LogSplit"]


class LogSplit:
    """Certified two-sided bounds on ``delta(eps)`` and ``eps(delta)`` by the log-split sum.

    Args:
        kinds: ``[(symmetric pair, count), ...]`` in any domains (joined here).
        tail: log of the float threshold below which terms are not enumerated (natural
            logarithm; only the width depends on it).
        max_terms: raise :class:`TooLarge` beyond this many enumerated terms.
        deadline: a ``time.process_time()`` instant; the build raises :class:`OutOfTime`
            when it passes (checked inside every enumeration loop).
        prec: bits of every ball (at least :data:`PREC`; a relative width ``w`` needs
            about ``log2(1/w)`` bits plus guard bits).

    Raises:
        TooLarge: when the sum would need more than ``max_terms`` terms or
            :data:`MAX_MEASURES` rational measures.
    """

    def __init__(
        self,
        kinds: Sequence[tuple[PLD, int]],
        tail: float = -46.0,
        max_terms: int = MAX_TERMS,
        deadline: float | None = None,
        prec: int = PREC,
    ) -> None:
        kinds = [(p, c) for p, c in kinds if c]
        for pld, _ in kinds:  # in each pair's own domain: the common one is larger
            _check_symmetric(pld)
        kinds = common_domain(kinds)
        dom = kinds[0][0].domain
        self.domain: ExpDomain = dom
        g0 = dom.g0 if dom.g0 is not None else Fraction(1)
        self.g0 = g0
        self._deadline = deadline
        self._ticks = 0
        self.prec = max(PREC, int(prec))
        with flint.ctx.workprec(self.prec):
            self._step = rational_ball(g0)
            self._build(dom, kinds, tail, max_terms)

    # -- set-up -----------------------------------------------------------------------

    def _build(
        self, dom: ExpDomain, kinds: list[tuple[PLD, int]], tail: float, max_terms: int
    ) -> None:
        logs: dict[Loss, int] = {}
        log_balls: list[flint.arb] = []
        parsed: list[_Kind] = []
        survive = flint.arb(1)
        base: _Poly = (0, flint.arb_poly([1]))
        self._leaks = tuple((pld.leak, count) for pld, count in kinds)
        top = dom.zero_loss()
        # the span of the largest rational measure, in grid units, before anything is
        # allocated: too wide, and every non-zero rational loss is enumerated instead
        span = 0
        for pld, count in kinds:
            forms = [dom.form(loss) for loss, _ in pld.masses]
            units = [abs(f.rational / self.g0) for f in forms if not f.logs]
            span += 2 * count * int(max(units, default=0))
        self.rational_enumerated = span > MAX_MEASURE_UNITS
        for pld, count in kinds:
            comps: dict[Loss, Any] = {}
            for loss, m in pld.masses:
                key = loss if dom.loss_sign(loss) >= 0 else tuple(-n for n in loss)
                comps[key] = comps[key] + m if key in comps else m
            if comps:  # the largest loss of the composition: the sum of each kind's
                high = dom.sort_losses(comps)[-1]
                top = tuple(a + count * b for a, b in zip(top, high))
            idx, ws = [], []
            rational: _Poly | None = None
            for loss, w in comps.items():
                form = dom.form(loss)
                wb = dom.elem_ball(w, self.prec)
                if form.logs or (self.rational_enumerated and form.rational != 0):
                    if loss not in logs:
                        logs[loss] = len(logs)
                        log_balls.append(dom.loss_ball(loss, self.prec))
                    idx.append(logs[loss])
                    ws.append(wb)
                else:
                    units = form.rational / self.g0
                    if units.denominator != 1:  # the domain's g0 divides every rational
                        raise TooLarge("rational loss off the grid")
                    piece = _rr_poly(wb, int(units), dom.loss_ball(loss, self.prec).exp())
                    rational = piece if rational is None else _add(rational, piece)
            survive *= (1 - dom.elem_ball(pld.leak, self.prec)) ** count
            rf = float(rational[1](flint.arb(1)).mid()) if rational is not None else 0.0
            kind = _Kind(
                count, tuple(idx), tuple(ws), tuple(float(w.mid()) for w in ws), rational, rf
            )
            if not idx:
                if rational is not None:  # purely rational: a fixed factor
                    power = _poly_pow(rational[1], count, self._deadline)
                    base = (base[0] + count * rational[0], base[1] * power)
                continue
            parsed.append(kind)
        self.leak = 1 - survive
        self._top = top
        self._logs = tuple(log_balls)
        self._p = tuple((lb.exp() / (1 + lb.exp())) for lb in log_balls)
        self._base = base
        self._kinds = tuple(parsed)
        self._mixed = tuple(i for i, kd in enumerate(parsed) if kd.rational is not None)
        self._measures: dict[tuple[int, ...], _Measure] = {}
        self._enumerate(tail, max_terms)

    def _tick(self) -> None:
        """Count one step of an enumeration; every 64 steps, check the deadline."""
        self._ticks += 1
        if not self._ticks & 63:
            check_deadline(self._deadline)

    def _kind_counts(self, kd: _Kind, tail: float) -> list[tuple[tuple[int, ...], int, float]]:
        """``(n per log component, m, log mass)`` of one kind above ``tail``."""
        weights = list(kd.log_wf) + ([kd.rational_wf] if kd.rational is not None else [])
        total = sum(weights)
        out: list[tuple[tuple[int, ...], int, float]] = []

        def walk(i: int, left: int, rest: float, acc: float, ns: list[int]) -> None:
            self._tick()
            if len(out) > self._max_terms:
                raise TooLarge("too many usage counts of one kind")
            if i == len(weights) - 1:  # the last category takes what is left
                if kd.rational is None and i == len(kd.log_wf) - 1:
                    out.append((tuple(ns + [left]), 0, acc))
                elif kd.rational is not None:
                    out.append((tuple(ns), left, acc))
                return
            p = weights[i] / rest if rest > 0 else 0.0
            for n, lm in _window(left, min(p, 1.0), acc, tail):
                walk(i + 1, left - n, rest - weights[i], lm, ns + [n])

        # a cheap estimate first: the product of the windows along the modal path (a box
        # around the near-Gaussian ellipsoid of counts, at most a few times its volume);
        # far beyond the limit, refuse before walking (heuristic: only the route changes)
        box, left, rest, acc = 1, kd.count, total, 0.0
        for i in range(len(weights) - 1):
            p = weights[i] / rest if rest > 0 else 0.0
            win = _window(left, min(p, 1.0), acc, tail)
            if not win:
                break
            box *= len(win)
            if box > _BOX_FACTOR * self._max_terms:
                raise TooLarge("too many usage counts of one kind")
            n, acc = max(win, key=lambda t: t[1])
            left, rest = left - n, rest - weights[i]
        walk(0, kd.count, total, 0.0, [])
        return out

    def _enumerate(self, tail: float, max_terms: int) -> None:
        self._max_terms = max_terms
        per_kind = [self._kind_counts(kd, tail) for kd in self._kinds]
        nlogs = len(self._logs)
        groups: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[flint.arb, float]] = {}

        def combine(i: int, ns: list[int], ms: list[int], coef: flint.arb, acc: float) -> None:
            self._tick()
            if i == len(self._kinds):
                key = (tuple(ns), tuple(ms))
                old = groups.get(key)
                groups[key] = (coef, acc) if old is None else (old[0] + coef, max(old[1], acc))
                if len(groups) > max_terms:
                    raise TooLarge("too many count vectors")
                return
            kd = self._kinds[i]
            for counts, m, lm in per_kind[i]:
                if acc + lm < tail:
                    continue
                # multinomial(k; n_1, ..., m) prod w^n as a product of binomials
                c, left = flint.arb(1), kd.count
                for n, w in zip(counts, kd.log_w):
                    c = c * flint.arb(left).bin(n) * w**n
                    left -= n
                ns2 = list(ns)
                for n, j in zip(counts, kd.log_index):
                    ns2[j] += n
                ms2 = ms + [m] if kd.rational is not None else ms
                combine(i + 1, ns2, ms2, coef * c, acc + lm)

        combine(0, [0] * nlogs, [], flint.arb(1), 0.0)
        if len({ms for _, ms in groups}) > MAX_MEASURES:
            raise TooLarge("too many rational measures")
        pf = [float(p.mid()) for p in self._p]
        # a cheap count first (independent windows per loss: an overestimate)
        combos = 0
        for (ns, _), (_, acc) in groups.items():
            size = 1
            for n, p in zip(ns, pf):
                if n:
                    size *= len(_window(n, p, acc, tail))
            combos += size
            if combos > 8 * max_terms:
                raise TooLarge("too many terms")
        # terms with the same rational measure and the same net uses a_i = 2 j_i - n_i of
        # every logarithmic loss share their shift: their weights are added
        merged: dict[tuple[tuple[int, ...], tuple[int, ...]], flint.arb] = {}
        per_measure: dict[tuple[int, ...], flint.arb] = {}
        factor: dict[tuple[int, int, int], flint.arb] = {}
        for (ns, ms), (coef, acc) in groups.items():
            check_deadline(self._deadline)
            self._measure(ms)
            for js, _ in self._binomials(ns, pf, tail - acc):
                self._tick()
                wgt = coef
                for i, (n, j) in enumerate(zip(ns, js)):
                    if n:
                        f = factor.get((i, n, j))
                        if f is None:
                            p = self._p[i]
                            f = flint.arb(n).bin(j) * p**j * (1 - p) ** (n - j)
                            factor[(i, n, j)] = f
                        wgt = wgt * f
                key = (ms, tuple(2 * j - n for n, j in zip(ns, js)))
                old = merged.get(key)
                merged[key] = wgt if old is None else old + wgt
                old = per_measure.get(ms)
                per_measure[ms] = wgt if old is None else old + wgt
                if len(merged) > max_terms:
                    raise TooLarge("too many terms")
        terms = []
        for (ms, a), wgt in merged.items():
            self._tick()
            shift = flint.arb(0)
            for ai, lb in zip(a, self._logs):
                if ai:
                    shift += ai * lb
            terms.append((ms, wgt, shift, (-shift).exp()))
        mass = flint.arb(0)
        for ms, wgt in per_measure.items():
            mass += wgt * self._measures[ms].total
        self._terms = tuple(terms)
        self.omitted = (1 - self.leak - mass).nonnegative_part()

    def _binomials(
        self, ns: tuple[int, ...], pf: list[float], tail: float
    ) -> Iterator[tuple[tuple[int, ...], float]]:
        def walk(i: int, acc: float, js: tuple[int, ...]) -> Iterator[Any]:
            if i == len(ns):
                yield js, acc
                return
            if ns[i] == 0:
                yield from walk(i + 1, acc, js + (0,))
                return
            for j, lm in _window(ns[i], pf[i], acc, tail):
                yield from walk(i + 1, lm, js + (j,))

        yield from walk(0, 0.0, ())

    def _measure(self, ms: tuple[int, ...]) -> _Measure:
        if ms not in self._measures:
            lo, poly = self._base
            for i, m in zip(self._mixed, ms):
                r = self._kinds[i].rational
                assert r is not None
                lo, poly = lo + m * r[0], poly * _poly_pow(r[1], m, self._deadline)
            self._measures[ms] = _Measure.of(lo, poly, self._step)
        return self._measures[ms]

    @property
    def terms(self) -> int:
        """Number of enumerated terms."""
        return len(self._terms)

    # -- queries ----------------------------------------------------------------------

    def _sums(self, eps: flint.arb) -> tuple[flint.arb, flint.arb]:
        """``(E, -dE/deps)``: the enumerated terms at ``eps`` and minus their derivative."""
        e_eps = eps.exp()
        total = flint.arb(0)
        slope = flint.arb(0)
        for ms, wgt, shift, eshift in self._terms:
            meas = self._measures[ms]
            x = eps - shift
            ex = e_eps * eshift
            value, i = meas.hockey(x, ex, self._step)
            total += wgt * value
            slope += wgt * ex * meas.s1[i]
        return total, slope

    def delta_ball(self, eps: flint.arb) -> tuple[flint.arb, flint.arb]:
        """``(lower, upper)`` ends (exact points) of ``delta`` at a ball ``eps``."""
        with flint.ctx.workprec(self.prec):
            e, _ = self._sums(eps)
            lo = (self.leak + e).lower()
            hi = (self.leak + e + self.omitted).upper()
        # a delta lies in [0, 1]: ends outside carry no information
        return (lo if lo > 0 else flint.arb(0)), (hi if hi < 1 else flint.arb(1))

    def delta(self, eps: Any) -> Value:
        """A certified enclosure of ``delta(eps)`` (exactly the leak from the largest loss on)."""
        ball = _eps_ball(eps, self.prec)
        if at_or_above(self.domain, self._top, eps):  # no loss above eps: the leak, exactly
            return Value.from_qz(self.domain, self._exact_leak())
        lo, hi = self.delta_ball(ball)
        return Value.from_interval(lo, hi, nonnegative=True)

    def epsilon(
        self, delta: Any, width: Fraction = Fraction(1, 10**7), deadline: float | None = None
    ) -> Value:
        """A certified enclosure of ``eps(delta)`` of relative width about ``width``.

        A floating-point search (heuristic) proposes ``e``; the enclosure ``[e1, e2]``
        around it is certified by ``delta_lower(e1) > delta`` and ``delta_upper(e2) <=
        delta`` (module docstring), widened until both hold.
        """
        d = parse_delta(delta)
        with flint.ctx.workprec(self.prec):
            db = rational_ball(d)
            below = self.leak.lower() > db
            if not below and not self.leak.upper() < db:  # within a ball: decide exactly
                gap = QzElem.from_rational(d) - self._exact_leak()
                if gap.is_zero():  # delta(eps) = leak exactly from the largest loss on
                    return Value.from_loss(self.domain, self._top)  # an exact point
                below = self.domain.sign(gap) < 0
            if below:
                raise BelowLeakError(
                    f"delta = {short_text(delta)} is below the leak "
                    f"{float(self.leak.mid()):.6g} (the "
                    "probability that the composition reveals the input outright): no "
                    "finite eps achieves it"
                )
            if self.delta_ball(flint.arb(0))[1] <= db:
                return Value.from_interval(flint.arb(0), flint.arb(0), nonnegative=True)
            guess = self._newton(self._search(db, deadline), db, width, deadline)
            eta = guess * width / 4 if guess > 0 else width
            for _ in range(60):
                check_deadline(deadline)  # OutOfTime: each step sums every term twice
                e1, e2 = max(guess - eta, Fraction(0)), guess + eta
                left = e1 == 0 or self.delta_ball(_frac_ball(e1))[0] > db
                if left and self.delta_ball(_frac_ball(e2))[1] <= db:
                    return Value.from_interval(_frac_ball(e1), _frac_ball(e2), nonnegative=True)
                eta *= 4
        # the omitted mass hides where delta crosses (delta just above the leak): the
        # caller lowers the threshold or falls back to the grid
        raise TooLarge("eps(delta) could not be enclosed")

    def _exact_leak(self) -> QzElem:
        """``1 - prod (1 - lambda_kappa)^k_kappa`` exactly (only near a tie with a query)."""
        survive = QzElem.from_rational(1)
        for leak, count in self._leaks:
            survive = survive * (1 - leak) ** count
        return 1 - survive

    def _newton(
        self, guess: Fraction, db: flint.arb, width: Fraction, deadline: float | None = None
    ) -> Fraction:
        """Newton steps in balls from the double-precision guess (a heuristic as well).

        Each step roughly doubles the correct digits, so a few reach any width asked.
        """
        for _ in range(8):
            check_deadline(deadline)  # each step sums every term
            e, slope = self._sums(_frac_ball(guess))
            f = self.leak + e + self.omitted / 2
            if not slope > 0:
                break
            step = _mid_fraction((f - db) / slope)
            guess = max(guess + step, Fraction(0))
            if abs(step) <= guess * width / 16:
                break
        return guess

    def _log_terms(self) -> list[tuple[float, float, tuple[float, ...], tuple[float, ...], int]]:
        """The terms in doubles, for the heuristic search only: ``log`` of each weight."""
        out = []
        for ms, wgt, shift, _ in self._terms:
            meas = self._measures[ms]
            out.append((_flog(wgt), float(shift.mid()), meas.ls0, meas.ls1, meas.lo))
        return out

    def _search(self, db: flint.arb, deadline: float | None = None) -> Fraction:
        """Where the enumerated curve crosses ``db``, in doubles (a heuristic guess).

        The curve is searched in logarithms, ``log(delta - leak)`` against
        ``log(db - leak)``, so neither an eps beyond 709 (``e^eps`` overflows) nor a tiny
        delta (underflows) leaves the range of doubles.  Safeguarded Newton: the curve is
        decreasing, so a bracket is kept and bisection takes over whenever a Newton step
        leaves it.
        """
        terms = self._log_terms()
        g0 = float(self.g0)
        rest = db - self.leak - self.omitted / 2
        target = _flog(rest) if rest > 0 else _flog(db - self.leak) - 8.0
        if target == -math.inf:
            target = _flog(db) - 8.0

        def curve(e: float) -> tuple[float, float]:
            """``(log F, log G)``: ``F`` the enumerated sum at ``e``, ``G = -dF/de``."""
            lf = lg = -math.inf
            for lw, shift, ls0, ls1, lo in terms:
                x = e - shift
                i = min(len(ls0) - 1, max(0, math.floor(x / g0) + 1 - lo))
                la, lb = ls0[i], x + ls1[i]
                if la == -math.inf:
                    continue
                r = lb - la
                if r < 0:
                    lf = _logaddexp(lf, lw + la + math.log(-math.expm1(r)))
                lg = _logaddexp(lg, lw + lb)
            return lf, lg

        lo, hi = 0.0, math.inf
        e = 0.0
        for _ in range(300):
            check_deadline(deadline)  # each step sums every term (a long search overran)
            f, g = curve(e)
            if f > target:
                lo = e
            else:
                hi = e
            nxt = math.nan
            if f > -math.inf and g > -math.inf:
                nxt = e + (f - target) * math.exp(min(f - g, 700.0))
            if hi == math.inf:  # no point below the target yet: at most double
                nxt = min(nxt, 2 * lo + 1)
            if not lo < nxt < hi:
                nxt = (lo + hi) / 2 if hi < math.inf else 2 * lo + 1
            done = abs(nxt - e) <= 1e-14 * max(1.0, e) or hi - lo <= 1e-14 * max(1.0, lo)
            e = nxt
            if done:
                break
        return Fraction(e).limit_denominator(10**15)
