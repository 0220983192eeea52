"""Certified lower bounds on the privacy of shuffled training (docs/theory.md, section 21).

Shuffle-and-iterate DP-SGD (one pass over the shuffled data in ``k`` batches per epoch,
Gaussian noise of multiplier ``sigma``, fresh shuffles each epoch) has no known tight
analysis; explicit pairs of neighbouring datasets bound its ``eps`` and ``delta`` from
below under replace-one.  :func:`shuffling_lower_bound` answers each query with the largest
of three certified lower bounds, and says which one gave it:

* ``"replace-one pair, enclosure"``: the lower end of the certified enclosure of the exact
  ``delta(eps)`` / ``eps(delta)`` of the replace-one pair, random allocation of a query of
  sensitivity 2 (:func:`~dpcompose_exact.mechanisms.allocation.random_allocation`, composed
  over the epochs); out of reach below ``sigma`` about 1 (``a = 2 / sigma`` above 2);
* ``"replace-one pair, cube test"``: one test of that pair (Chua et al.'s cube test, its
  two masses in Arb; :mod:`dpcompose_exact.engines.shuffle`);
* ``"zero-out pair, cube test"``: Chua et al.'s own pair and test, certified.

The test can beat the enclosure's lower end deep in the tail (by less than the enclosure's
width); the enclosure wins elsewhere (every test at once).

>>> import dpcompose_exact as dx
>>> b = dx.shuffling_lower_bound("1", steps=100).epsilon("1e-5", enclosure=False)
>>> b.text(6), b.source
('5.39658', 'replace-one pair, cube test')
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..api import compose
from ..engines.shuffle import CubeTest, cube_delta, cube_epsilon
from ..errors import ResourceLimitError
from ..mechanisms.allocation import random_allocation
from ..mechanisms.noise import gaussian_noise
from ..numbers.convert import ball_end, parse_delta, parse_eps
from ..numbers.value import Value
from ..regions.specs import parse_count

__all__ = ["ShuffleBound", "ShufflingLowerBound", "shuffling_lower_bound"]

ENCLOSURE = "replace-one pair, enclosure"
CUBE = "replace-one pair, cube test"
ZERO_OUT = "zero-out pair, cube test"


@dataclass(frozen=True)
class ShuffleBound:
    """A certified lower bound on ``eps(delta)`` or ``delta(eps)`` of shuffled training.

    Attributes:
        value: the bound, an exact rational (the true quantity is at least it).
        source: which candidate gave it (:data:`ENCLOSURE`, :data:`CUBE`, :data:`ZERO_OUT`).
        candidates: every candidate's bound (None: out of reach, with ``notes``).
        tests: the cube test behind each cube candidate.
        notes: why a candidate is missing.
    """

    value: Value
    source: str
    candidates: dict[str, Fraction | None]
    tests: dict[str, CubeTest]
    notes: dict[str, str]

    def text(self, digits: int = 6) -> str:
        """The bound rounded down to ``digits`` significant digits (still a lower bound)."""
        return self.value.rounded(digits, "down")


@dataclass(frozen=True)
class ShufflingLowerBound:
    """Shuffled training of ``epochs`` epochs of ``steps`` batches, Gaussian ``sigma``.

    Queries take ``grid`` (the loss grid of the enclosure: ``compose(..., grid=...)``) and
    ``enclosure`` (False: the cube tests only, a fraction of a second).
    """

    sigma: Fraction
    steps: int
    epochs: int

    def _pair(self) -> Any:
        return random_allocation(gaussian_noise(self.sigma, 2), steps=self.steps)

    def _collect(self, query: str, x: Any, enclosure: bool, grid: Any) -> ShuffleBound:
        cands: dict[str, Fraction | None] = {}
        tests: dict[str, CubeTest] = {}
        notes: dict[str, str] = {}
        if enclosure:
            try:
                kw = {} if grid is None else {"grid": grid}
                comp = compose(self._pair(), self.epochs, **kw)
                value = comp.epsilon(x) if query == "epsilon" else comp.delta(x)
                cands[ENCLOSURE] = ball_end(value.ends()[0], up=False)
            except ResourceLimitError as err:
                cands[ENCLOSURE] = None
                notes[ENCLOSURE] = str(err)
        else:
            notes[ENCLOSURE] = "not asked (enclosure=False)"
        for name, pair in ((CUBE, "replace-one"), (ZERO_OUT, "zero-out")):
            run = cube_epsilon if query == "epsilon" else cube_delta
            bound, test = run(self.sigma, self.steps, self.epochs, x, pair)
            cands[name] = bound
            if test is not None:
                tests[name] = test
            elif bound is None:
                notes[name] = f"no test of the {pair} pair gives eps > 0 at delta = {x}"
        known = {k: v for k, v in cands.items() if v is not None}
        if not known:
            source, best = "none", Fraction(0)
        else:
            source = max(known, key=lambda k: known[k])
            best = known[source]
        return ShuffleBound(Value.from_rational(best), source, cands, tests, notes)

    def epsilon(self, delta: Any, enclosure: bool = True, grid: Any = None) -> ShuffleBound:
        """A certified lower bound on ``eps(delta)``: the largest of the candidates."""
        return self._collect("epsilon", parse_delta(delta), enclosure, grid)

    def delta(self, eps: Any, enclosure: bool = True, grid: Any = None) -> ShuffleBound:
        """A certified lower bound on ``delta(eps)``: the largest of the candidates."""
        return self._collect("delta", parse_eps(eps), enclosure, grid)


def shuffling_lower_bound(sigma: Any, steps: Any, epochs: Any = 1) -> ShufflingLowerBound:
    """Lower bounds on the privacy of shuffled training (replace-one; section 21).

    ``sigma`` is the noise multiplier (noise ``N(0, sigma^2)`` per coordinate on gradients
    clipped to norm 1), ``steps`` the batches per epoch (``n / b``), ``epochs`` the passes,
    each over a fresh shuffle.
    """
    noise = gaussian_noise(sigma, 2)
    steps = random_allocation(noise, steps=steps).steps
    return ShufflingLowerBound(noise.scale, steps, parse_count(epochs, "epochs", positive=True))
