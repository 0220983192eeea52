"""Finite pairs composed with noise: ``delta = leak + sum_l p(l) delta_N(eps - l)``.

The privacy loss of a composition is the sum of the losses of its parts, independent
under the first hypothesis.  Split the parts into a finite symmetric part ``F`` (every
pair in the exact field, composed exactly: its canonical pair has P-mass ``p(l)`` at each
loss ``l`` and a leak at ``+inf``) and a noise part ``N`` (Gaussian, Laplace, subsampled
noise).  Conditioning on the loss of ``F`` gives, in each direction of ``N``
(docs/theory.md, section 19):

    ``delta(eps) = leak_F + sum_l p(l) delta_N(eps - l)``,

with ``delta_N(t)`` for every real ``t``; below 0 the identity
``delta_N(-t) = 1 - e^-t + e^-t delta_N'(t)`` (``N'`` the other direction) reads it from
the non-negative side.  When ``N`` is Gaussian, ``delta_N`` is the closed form of ``G_mu``
(``mu^2 = sum_i k_i (s_i / sigma_i)^2``), evaluated in Arb at any precision: the sum is
exact up to ball rounding, and the answer refines itself to any number of digits.
Otherwise ``N`` is composed on a certified loss grid (two-sided bounds of ``delta_N``;
the sum is monotone in each of them, so the bounds carry through).

A symmetric finite part has the same loss distribution in both directions, so the answer
is the larger of the two directions of ``N``.

The finite parts are :mod:`~dpcompose_exact.engines.finiteparts`, the noise parts (one
protocol, :class:`~dpcompose_exact.engines.noiseparts.NoisePart`)
:mod:`~dpcompose_exact.engines.noiseparts`; this module composes them
(:class:`MixedComposition`), says when the finite part goes on the loss grid instead
(:func:`finite_on_grid`) and builds the noise part on a grid (:func:`grid_part`).  At
``delta = 0`` the answer is the largest loss: the finite part's plus the noise's, in the
direction where the sum is largest (the losses of independent parts add; none when the
finite part has a leak or the noise is Gaussian).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import flint

from ..errors import BelowLeakError, InvalidParameterError
from ..numbers.convert import ball_end, parse_delta, parse_eps, rational_ball
from ..numbers.forms import LinearForm
from ..numbers.value import Value
from ..regions.protocol import GridEntry, LossPair
from .bounds import EnclosureRows
from .finiteparts import DirectedFinitePart as DirectedFinitePart
from .finiteparts import FinitePart as FinitePart
from .noiseloss import largest_noise_loss
from .noiseparts import GaussianPart as GaussianPart
from .noiseparts import GridPart as GridPart
from .noiseparts import NoisePart as NoisePart
from .noiseparts import gaussian_delta_at as gaussian_delta_at
from .results import Exactness

# the parts imported above (``X as X``) are importable from here too; each is documented
# in its own module
__all__ = [
    "MixedComposition",
    "grid_part",
    "LaplaceAlone",
    "finite_on_grid",
]


#: the exact finite part is enumerated next to the noise while its composition has at most
#: this many loss values (an upper bound, :func:`~.gridfinite.exact_size`): next to Gaussian
#: noise (the closed form refines to any digits) and next to noise on a loss grid; beyond,
#: the finite part goes on the loss grid with the noise (section 19)
EXACT_FINITE_GAUSSIAN = 1024
EXACT_FINITE_GRID = 64
#: ... and for ``eps(delta)`` next to noise on a loss grid, up to this many (a list whose
#: finite part went on the grid asks ``eps(delta)`` of the exact part: measured on the box's
#: mixed rows, 2 to 5 times faster there, above all at small deltas; ``delta(eps)`` stays
#: on the grid, which is faster for it from about 200 loss values on)
EXACT_FINITE_EPS = 512


def finite_on_grid(finite: Sequence[tuple[Any, int]], gaussian: bool) -> bool:
    """Whether the finite kinds go on the loss grid instead of being enumerated.

    ``finite``: ``[(kind, count), ...]``, a symmetric pair's PLD or an asymmetric pair's
    ``(forward, reverse)`` (each direction enumerated on its own).  ``gaussian``: every
    noise is Gaussian (the exact sum is then the closed form's).
    """
    from .gridfinite import exact_size

    limit = EXACT_FINITE_GAUSSIAN if gaussian else EXACT_FINITE_GRID
    return exact_size(finite) > limit


class MixedComposition(EnclosureRows):
    """A finite symmetric part composed with a noise part (Gaussian or a loss grid).

    ``delta(eps)`` and ``epsilon(delta)`` answer with certified Values: with a Gaussian
    noise part a ball that refines itself to any number of digits, with a grid part a
    two-sided enclosure (docs/theory.md, section 19).

    Args:
        finite: the :class:`FinitePart`.
        noise: a :class:`GaussianPart` or :class:`GridPart`.
        label: what was composed, for ``repr``.
    """

    no_list = "a composition with noise mechanisms has no single constraint list"

    def __init__(
        self,
        finite: FinitePart | DirectedFinitePart,
        noise: NoisePart,
        label: str = "",
    ) -> None:
        self.finite = finite
        self.noise = noise
        self.label = label
        # the Gaussian sum refines itself to any digits; a grid gives an enclosure
        self.kind = noise.kind

    def direction_pairs(self) -> list[tuple[str, str]]:
        """``(finite direction, noise direction)`` pairs whose sums are maximised over.

        A symmetric finite part meets each direction of the noise; an asymmetric one meets
        the noise's same direction (the composition's pair in one direction is the product
        of the parts' pairs in that direction), or its one direction when it is symmetric.
        """
        noise_dirs = self.noise.directions
        if self.finite.directions == ("both",):
            return [("both", d) for d in noise_dirs]
        return [(d, d if d in noise_dirs else "both") for d in self.finite.directions]

    def heavy(
        self, direction: str, prec: int
    ) -> tuple[flint.arb, list[tuple[Fraction, Fraction, flint.arb, flint.arb]], flint.arb]:
        """``(leak, atoms, light)`` of a finite direction, prepared for the grid sums.

        ``atoms``: ``(loss lower, loss upper, mass lower, mass upper)`` for the atoms whose
        masses are not negligible; ``light``: an upper bound of the total mass of the
        others (the smallest masses, summing to at most ``2^-80``).  Their terms lie in
        ``[0, mass]`` (``0 <= delta_N <= 1``): the upper sum adds ``light``, the lower sum
        leaves them out.
        """
        key = (direction, prec)
        cache = self.__dict__.setdefault("_heavy_cache", {})
        if key not in cache:
            leak, atoms = self.finite.balls(prec, direction)
            order = sorted(range(len(atoms)), key=lambda i: float(atoms[i][1].upper().mid()))
            light = flint.arb(0)
            cut = flint.arb(2) ** -80
            skip = set()
            for i in order:
                nxt = light + atoms[i][1].upper()
                if not nxt.upper() <= cut:
                    break
                light = nxt.upper()
                skip.add(i)
            zero = flint.arb(0)
            kept = []
            for i, (loss, mass) in enumerate(atoms):
                if i in skip:
                    continue
                m_lo = mass.lower()
                kept.append(
                    (
                        ball_end(loss.lower()),
                        ball_end(loss.upper()),
                        m_lo if m_lo > 0 else zero,
                        mass.upper(),
                    )
                )
            for other in [k for k in cache if k[1] != prec]:  # one precision kept
                del cache[other]
            cache[key] = (leak, kept, light)
        return cache[key]

    def heavy_arrays(self, direction: str) -> tuple[Any, Any, Any, Any]:
        """The atoms of :meth:`heavy` as arrays of doubles rounded outwards (kept per direction).

        ``(loss lower, loss upper, mass lower, mass upper)``: each loss end a double at or
        below (at or above) the rational end, each mass end at or below (at or above) the
        ball's end, clipped at 0.
        """
        cache = self.__dict__.setdefault("_heavy_arrays", {})
        if direction not in cache:
            import numpy as np

            from .gridmeasure import _down, _up
            from .gridsums import down_double, up_double

            _, atoms, _ = self.heavy(direction, 128)
            cache[direction] = (
                np.array([down_double(a[0]) for a in atoms], dtype=np.float64),
                np.array([up_double(a[1]) for a in atoms], dtype=np.float64),
                np.array([_down(a[2]) for a in atoms], dtype=np.float64),
                np.array([_up(a[3]) for a in atoms], dtype=np.float64),
            )
        return cache[direction]  # type: ignore[no-any-return]

    def _delta_value(self, form: LinearForm) -> Value:
        return self.noise.delta_value(self, form)

    def delta_bounds(self, eps: Fraction, sides: str = "both") -> tuple[Fraction, Fraction]:
        """``(lower, upper)`` rationals enclosing ``delta(eps)``.

        ``sides``: ``"upper"`` or ``"lower"`` computes only that end on a grid (the other
        is the trivial bound).
        """
        return self.noise.delta_bounds(self, eps, sides)

    def delta(self, eps: Any) -> Value | list[Value]:
        """A certified enclosure of ``delta(eps)``."""
        if isinstance(eps, (list, tuple)):
            return [self.delta(e) for e in eps]  # type: ignore[misc]
        form = parse_eps(eps)
        return self._delta_value(form)

    # -- epsilon ----------------------------------------------------------------------------
    def epsilon(self, delta: Any) -> Value | list[Value]:
        """A certified enclosure of ``eps(delta)`` (0 when ``delta(0) <= delta``).

        The noise part searches (:meth:`GaussianPart.epsilon`, :meth:`GridPart.epsilon`).

        Raises:
            BelowLeakError: ``delta`` is below the finite part's leak (no finite eps).
        """
        if isinstance(delta, (list, tuple)):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        d = parse_delta(delta) if not isinstance(delta, Fraction) else delta
        if d == 0:
            return self._pure_epsilon()
        if not 0 < d < 1:
            raise InvalidParameterError(f"delta = {d} must lie in (0, 1)")
        if self.finite.leak_at_least(d):
            leak = max(self.finite.leak_lower(), d)
            raise BelowLeakError(
                f"delta = {d} is at or below the probability {float(leak):.6g} that the "
                "composition reveals the input outright (the leak): no finite eps achieves it"
            )
        if self.delta_bounds(Fraction(0))[1] <= d:
            return Value.from_rational(0)
        return self.noise.epsilon(self, d)

    def _pure_epsilon(self) -> Value:
        """``eps(0)``: the largest loss of the composition (docs/theory.md, sections 15, 19).

        The losses of the finite part and of the noise are independent and each reaches
        its largest value with positive probability, so the largest total loss in a
        direction is the sum of the two parts' largest losses there
        (:meth:`~.noiseparts.NoisePart.largest_loss`); ``eps(0)`` is the larger over the
        directions.  Exact when the noise's largest losses are rational (no subsampling),
        else a certified Value that refines itself.

        Raises:
            InvalidParameterError: the noise's loss is unbounded (Gaussian noise).
            BelowLeakError: the finite part has a leak (mass at loss ``+inf``).
        """
        sums = []
        for finite_direction, direction in self.direction_pairs():
            noise = self.noise.largest_loss(direction)
            if noise is None:
                raise InvalidParameterError(
                    "delta = 0: the noise's privacy loss is unbounded (Gaussian noise never "
                    "reaches delta = 0; eps(0) is infinite); give a delta in (0, 1)"
                )
            finite = self.finite.largest_loss(finite_direction)
            if finite is None:
                raise BelowLeakError(
                    f"delta = 0 is below the probability {float(self.finite.leak_lower()):.6g} "
                    "that the composition reveals the input outright (the leak): no finite "
                    "eps achieves it"
                )
            sums.append((finite, noise))
        return largest_sum(sums)

    def describe(self) -> str:
        """How the answer was computed, in a few words."""
        return self.noise.summary

    def __repr__(self) -> str:
        return f"MixedComposition({self.label or 'finite and noise'}; {self.describe()})"


def largest_sum(sums: Sequence[tuple[LinearForm, Value]]) -> Value:
    """``max_d (f_d + n_d)``: ``eps(0)`` from each direction's finite and noise largest losses.

    Exact (a linear form, certified comparisons) when every noise loss is rational (no
    subsampling), else a certified Value that refines itself.
    """
    rationals = [noise.known_rational() for _, noise in sums]
    if all(r is not None for r in rationals):  # exact: the largest of the exact sums
        forms = [f + LinearForm(r) for (f, _), r in zip(sums, rationals)]  # type: ignore[arg-type]
        best = forms[0]
        for form in forms[1:]:
            if (form - best).sign() > 0:
                best = form
        return Value.from_form(best)

    def evaluate(prec: int) -> flint.arb:
        work = prec + 16
        with flint.ctx.workprec(work):
            balls = [f.ball(work) + noise.ball(work) for f, noise in sums]
            best = balls[0]
            for ball in balls[1:]:
                best = best.max(ball)
        with flint.ctx.workprec(prec):
            return +best

    return Value(evaluate, nonnegative=True)


def _ends(value: Value) -> tuple[Fraction, Fraction]:
    lo, hi = value.ends()
    return ball_end(lo), ball_end(hi)


class LaplaceAlone(EnclosureRows):
    """One Laplace mechanism composed with itself: the Laplace grid's own answers.

    Its ``epsilon`` places one tilt at the estimate and bisects on it (docs/theory.md,
    section 18), far cheaper than a search through the conditioning sum.
    """

    kind = Exactness.BOUNDS
    no_list = "a composition with noise mechanisms has no single constraint list"

    def __init__(self, grid: Any, label: str = "") -> None:
        self.grid = grid
        self.label = label

    def delta(self, eps: Any) -> Value | list[Value]:
        """A certified enclosure of ``delta(eps)``."""
        if isinstance(eps, (list, tuple)):
            return [self.delta(e) for e in eps]  # type: ignore[misc]
        form = parse_eps(eps)
        if not form.logs:
            return self.grid.delta(form.rational)
        ball = form.ball(128)  # eps = r + c log b: delta is decreasing, take both ends
        lo, hi = max(Fraction(0), ball_end(ball.lower())), ball_end(ball.upper())
        low, high = _ends(self.grid.delta(hi))[0], _ends(self.grid.delta(lo))[1]
        return Value.from_interval(rational_ball(low), rational_ball(high), nonnegative=True)

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """A certified enclosure of ``eps(delta)``."""
        if isinstance(delta, (list, tuple)):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        d = parse_delta(delta) if not isinstance(delta, Fraction) else delta
        return self.grid.epsilon(d)

    def describe(self) -> str:
        """``"certified Laplace grid"``."""
        return "certified Laplace grid (two-sided bounds)"

    def __repr__(self) -> str:
        return f"LaplaceAlone({self.label or 'Laplace'}; certified bounds)"


def _grid_item(lp: LossPair) -> Any:
    """What the loss grid composes for a noise pair: its noise, or a random allocation's epoch."""
    if lp.grid_entry() is GridEntry.ALLOCATION:
        from .allocation import AllocationGrid

        return AllocationGrid(lp.grid_noise())  # builds its own measures on the grid
    return lp.grid_noise()


def plain_laplace_eps0(noise: Sequence[tuple[Any, int]]) -> Fraction | None:
    """``eps0`` of the noise when it is one Laplace mechanism (any count), else None.

    That noise has a grid of its own (docs/theory.md, section 18: :func:`grid_part`).
    """
    laplace = {lp.laplace_eps0() for lp, _ in noise}
    return next(iter(laplace)) if len(laplace) == 1 and None not in laplace else None


def grid_part(
    noise: Sequence[tuple[Any, int]], h: Fraction | None = None
) -> tuple[GridPart, str, Any]:
    """The noise part on a certified grid, a few words saying which, and the grid alone.

    Args:
        noise: ``[(loss pair, count), ...]`` of the forms ``gaussian`` and ``noise``.
        h: the grid width (None: the grid's default); a finer grid, a narrower enclosure
            (the Laplace grid then sums in long doubles: its float error is the larger part).

    Returns:
        ``(part, how, alone)``: ``part`` for the conditioning sum next to finite pairs;
        ``alone`` the result that answers when there are none (the grid's own queries).

    One Laplace mechanism (any count) is the Laplace grid of docs/theory.md, section 18;
    anything else is the loss grid of section 15 (Gaussian and Laplace noise enter it
    with sampling rate 1).
    """
    from .pldgrid import LaplaceGrid
    from .subsample_grid import NoiseGridComposition

    subs: list[tuple[Any, int]] = [(_grid_item(lp), n) for lp, n in noise]
    eps0 = plain_laplace_eps0(noise)
    if eps0 is not None:
        count = sum(n for _, n in subs)
        if h is None:
            grid = LaplaceGrid(eps0, count)
        else:  # a grid asked for is a second look: long doubles, whose error is smaller
            import numpy as np

            grid = LaplaceGrid(eps0, count, h=h, dtype=np.longdouble)
        cache: dict[Fraction, tuple[Fraction, Fraction]] = {}

        def ends(t: Fraction) -> tuple[Fraction, Fraction]:
            if t not in cache:
                cache[t] = _ends(grid.delta(t))
            return cache[t]

        part = GridPart(
            lambda d, t: ends(t)[1],
            lambda d, t: ends(t)[0],
            ("both",),
            "Laplace grid",
            lambda d: largest_noise_loss(noise, d),
        )
        alone = LaplaceAlone(grid)
        return part, "one Laplace mechanism on the certified Laplace grid", alone
    comp = (
        NoiseGridComposition(subs, label="noise")
        if h is None
        else NoiseGridComposition(subs, h=h, label="noise")
    )
    folds = comp.folds
    symmetric = all(lp.symmetric for lp, _ in noise)

    def upper(direction: str, t: Fraction) -> Fraction:
        return folds[("rev" if direction == "rev" else "fwd") + "_up"].bound(t, True)

    def lower(direction: str, t: Fraction) -> Fraction:
        return folds[("rev" if direction == "rev" else "fwd") + "_lo"].bound(t, False)

    sums: dict[str, Any] = {}

    def many(direction: str, t: Any, up: bool) -> Any:
        name = ("rev" if direction == "rev" else "fwd") + ("_up" if up else "_lo")
        if name not in sums:  # the fold's suffix sums, once (section 19)
            from .gridsums import FoldSums

            fold = folds[name]
            sums[name] = FoldSums(fold) if FoldSums.usable(fold) else None
        return None if sums[name] is None else sums[name].bounds(t, up)

    directions = ("both",) if symmetric else ("fwd", "rev")
    how = "certified two-sided bounds on a loss grid (both directions)"
    part = GridPart(
        upper, lower, directions, "loss grid", lambda d: largest_noise_loss(noise, d), many
    )
    return part, how, comp
