"""Certified calibration: the largest k, or the largest grid parameter, that meets a target.

Numerical calibration (``dp_accounting.calibrate_dp_mechanism``) runs Brent's method on
float epsilons and returns a parameter within a tolerance of the root; whether that
parameter meets the target depends on float rounding and on the accountant.  Here the
answer comes with a **certificate**: two neighbouring candidates, one proven to meet the
target and the next proven to fail it, each decided by an exact or certified comparison
(:class:`~dpcompose_exact.numbers.value.Value`) of ``delta(target_epsilon)`` with ``target_delta``.

* :func:`largest_k` -- the largest number of uses ``k`` of a mechanism whose composition is
  ``(target_epsilon, target_delta)``-DP; ``delta`` at ``k`` is ``<= target_delta`` and at
  ``k + 1`` it is ``> target_delta``.  Composing one more mechanism never helps, so the
  delta is non-decreasing in ``k`` and the answer is the largest such ``k``.
* :func:`largest_parameter` -- for a family ``x -> Mechanism`` (an exact ``Fraction`` in),
  the largest grid point ``x = n * step`` whose ``k``-fold composition meets the target,
  with ``x + step`` proven to fail.  *Assumption*: the family is monotone (a larger ``x``
  gives a less private mechanism); it is checked at the two certificate points (the region
  at ``x`` lies inside the region at ``x + step``) and reported.

Both search exponentially (1, 2, 4, ...) for a failing candidate and then bisect, so the
number of compositions is about ``2 log2(answer)``.

>>> from dpcompose_exact import Mechanism
>>> r = largest_k(Mechanism([("0.3", "0"), ("0.15", "0.02")]), "1", "0.1")
>>> r.answer, r.meets.delta.decimal(6), r.fails.delta.decimal(6)
(21, '0.0956998', '0.102732')
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..api import Mechanism, compose
from ..composition import Composition
from ..engines.bounds import Bounded
from ..engines.certified import CERTIFIED_TERM_LIMIT
from ..engines.finiteroutes import certified_width
from ..engines.genfunc import DEFAULT_MEMORY_LIMIT
from ..errors import (
    CertificationError,
    DPComposeError,
    InactiveConstraintWarning,
    InvalidParameterError,
    ResourceLimitError,
)
from ..numbers import parse_rational
from ..numbers.convert import parse_delta, parse_eps
from ..numbers.format import decimal_or_interval, float_text
from ..numbers.value import Value
from ..presentation.export import delta_upper
from ..regions.protocol import PairForm, is_mechanism

__all__ = [
    "Calibration",
    "Probe",
    "largest_k",
    "largest_parameter",
    "calibrate_noise",
    "calibrate",
    "get_noise_multiplier",
    "SOLVES",
]

#: the exponential search stops (with an error) beyond this many doublings
MAX_DOUBLINGS = 60


@dataclass(frozen=True)
class Probe:
    """One candidate and its certified verdict.

    Attributes:
        candidate: ``k`` (an int) or the parameter (an exact Fraction).
        delta: ``delta(target_epsilon)`` of the composition (a certified Value).
        meets: ``delta <= target_delta``, decided exactly or with certified balls.
    """

    candidate: int | Fraction
    delta: Value
    meets: bool

    def as_dict(self, digits: int = 20) -> dict[str, Any]:
        """JSON-friendly: the candidate, delta as certified decimals, the verdict."""
        lo, hi = self.delta.interval(digits)
        return {
            "candidate": str(self.candidate),
            "delta": decimal_or_interval(self.delta, digits),
            "delta_interval": [lo, hi],
            "meets_target": self.meets,
        }


@dataclass(frozen=True)
class Calibration:
    """A calibrated answer with its certificate.

    Attributes:
        quantity: ``"k"`` or ``"parameter"``.
        answer: the largest candidate proven to meet the target.
        target_epsilon: exact target epsilon.
        target_delta: exact target delta.
        meets: the probe at ``answer`` (meets the target).
        fails: the probe at the next candidate (fails the target).
        evaluations: number of compositions computed.
        seconds: wall time of the search.
        assumption: the monotonicity the answer relies on, in words.
        monotone_at_certificate: the assumption checked at the two certificate points
            (always True for ``k``).
        k: the number of uses (for ``"parameter"``).
        step: the grid step (for ``"parameter"``).
    """

    quantity: str
    answer: int | Fraction
    target_epsilon: Fraction
    target_delta: Fraction
    meets: Probe
    fails: Probe
    evaluations: int
    seconds: float
    assumption: str
    monotone_at_certificate: bool
    k: int | None = None
    step: Fraction | None = None
    probes: tuple[Probe, ...] = field(default=(), repr=False)
    #: eps(target_delta) at the two certificate points (noise calibrations), certified
    epsilons: tuple[Value, Value] | None = None

    def to_dict(self, digits: int = 20) -> dict[str, Any]:
        """The JSON object the CLI prints."""
        out: dict[str, Any] = {
            "quantity": self.quantity,
            "answer": str(self.answer),
            "target": {"epsilon": str(self.target_epsilon), "delta": str(self.target_delta)},
        }
        if self.k is not None:
            out["k"] = self.k
        if self.step is not None:
            out["grid"] = str(self.step)
        out["certificate"] = {
            "meets": self.meets.as_dict(digits),
            "fails": self.fails.as_dict(digits),
            "assumption": self.assumption,
            "monotone_at_certificate": self.monotone_at_certificate,
        }
        if self.epsilons is not None:
            for key, value in zip(("meets", "fails"), self.epsilons):
                lo, hi = value.interval(digits)
                out["certificate"][key]["epsilon"] = decimal_or_interval(value, digits)
                out["certificate"][key]["epsilon_interval"] = [lo, hi]
        out["evaluations"] = self.evaluations
        out["seconds"] = round(self.seconds, 3)
        return out

    def summary(self, digits: int = 12) -> str:
        """A few lines of text: the answer and its certificate."""
        name = self.quantity if self.quantity in ("k", "sigma", "b", "q") else "x"
        tgt = f"({self.target_epsilon}, {self.target_delta})-DP"
        which = "smallest" if self.quantity in ("sigma", "b") else "largest"
        head = f"{which} {name} = {self.answer}"
        if self.step is not None:
            head += f" on the grid {self.step} Z (k = {self.k})"
        lines = [f"{head}: the composition is {tgt}"]
        for i, (p, word, rel) in enumerate(
            ((self.meets, "meets", "<="), (self.fails, "fails", "> "))
        ):
            lines.append(
                f"  {name} = {p.candidate}: delta({self.target_epsilon}) = "
                f"{decimal_or_interval(p.delta, digits)} {rel} {self.target_delta}  ({word})"
            )
            if self.epsilons is not None:
                e_rel = "<=" if word == "meets" else "> "
                lines.append(
                    f"    eps({self.target_delta}) = "
                    f"{decimal_or_interval(self.epsilons[i], digits)} {e_rel} "
                    f"{self.target_epsilon}"
                )
        if self.quantity == "parameter":
            check = "checked" if self.monotone_at_certificate else "VIOLATED"
            lines.append(f"  assumption: {self.assumption} ({check} at the two points)")
        else:
            lines.append(f"  assumption: {self.assumption}")
        lines.append(f"  {self.evaluations} compositions, {self.seconds:.2f} s")
        return "\n".join(lines) + "\n"


def _targets(target_epsilon: Any, target_delta: Any) -> tuple[Fraction, Fraction]:
    eps = parse_rational(target_epsilon, "target epsilon")
    delta = parse_delta(target_delta, "target delta")
    if eps < 0:
        raise InvalidParameterError(f"target epsilon = {eps} must be >= 0")
    return eps, delta


#: relative widths asked of certified two-sided bounds (the ``bounds`` route) in turn, when
#: an enclosure of ``delta(eps)`` straddles the target delta
_BOUND_WIDTHS = (Fraction(1, 10**6), Fraction(1, 10**12), Fraction(1, 10**24))


def _verdict(comp: Composition, eps: Fraction, delta: Fraction) -> tuple[Value, bool]:
    """``delta(eps)`` of a composition and whether it is ``<= delta`` (certified).

    Exact and certified regions answer through :func:`~.export.delta_upper` (an exact
    comparison when a ball straddles the target); a composition known by two-sided bounds
    only is asked for narrower enclosures until one lies on one side of the target, and
    is refused in one line when even the narrowest cannot decide.
    """
    if comp.is_bounded:
        if all(m.loss_pair().form is PairForm.FINITE for m, _ in comp.kinds):
            return _bounded_verdict(comp, eps, delta)
        return _enclosure_verdict(comp, eps, delta)
    value = delta_upper(comp.result, eps)
    try:
        return value, value <= delta
    except CertificationError:  # the ball straddles the target: decide exactly
        exact = comp.delta(eps)
        return exact, exact <= delta  # type: ignore[return-value]


def _enclosure_verdict(comp: Composition, eps: Fraction, delta: Fraction) -> tuple[Value, bool]:
    """A composition with noise: its certified ``delta(eps)`` on one side of the target.

    The engine is asked for a decision only (``delta_decision``: a loss grid stops refining
    once its enclosure is on one side); the Gaussian closed form refines itself until it
    decides; a grid enclosure that still contains the target is refused in one line (the
    grid cannot say more).
    """
    # a decision only: an engine may stop refining once its enclosure is on one side
    result: Any = comp.result  # every bounded result is CurvesOnly: it answers the decision
    value = result.delta_decision(parse_eps(eps), delta).probability()
    assert isinstance(value, Value)
    try:
        return value, value <= delta
    except CertificationError:
        lo, hi = value.interval(12)
        raise CertificationError(
            f"undecided: the certified enclosure [{lo}, {hi}] of delta({eps}) contains the "
            f"target {delta} (noise on a loss grid); move the target or the grid point"
        ) from None


def _bounded_verdict(comp: Composition, eps: Fraction, delta: Fraction) -> tuple[Value, bool]:
    kinds = comp.region.kinds  # type: ignore[attr-defined]
    value: Value | None = None
    for width in _BOUND_WIDTHS:
        value = Bounded(kinds, width=width).delta(eps) if value is not None else comp.delta(eps)
        assert isinstance(value, Value)
        try:
            return value, value <= delta
        except CertificationError:
            continue
    assert value is not None
    lo, hi = value.interval(12)
    raise CertificationError(
        f"cannot decide whether delta({eps}) <= {delta}: the certified bounds [{lo}, {hi}] "
        "of this composition (known by two-sided bounds only) still contain the target; "
        "change the target delta slightly"
    )


def _search(probe: Callable[[int], Probe], limit: int, what: str) -> tuple[int, dict[int, Probe]]:
    """Largest ``n >= 1`` with ``probe(n).meets`` (monotone), and the probes computed."""
    seen: dict[int, Probe] = {}

    def at(n: int) -> Probe:
        if n not in seen:
            seen[n] = probe(n)
        return seen[n]

    if not at(1).meets:
        raise InvalidParameterError(
            f"no {what} meets the target: the smallest, {seen[1].candidate}, already has "
            f"delta = {decimal_or_interval(seen[1].delta, 8)}"
        )
    if limit < 2:  # nothing to search: 1 meets, and 2 is beyond the limit
        raise InvalidParameterError(
            f"every {what} up to {seen[1].candidate} meets the target; raise the limit "
            f"({limit} candidates) or check the family"
        )
    # doubling, the last step clipped to the limit so that every candidate up to it is
    # searched (a limit of 120 tries 64 and then 120, not 128)
    lo, hi = 1, 2
    while at(hi).meets:
        if hi >= limit:
            raise InvalidParameterError(
                f"every {what} up to {seen[hi].candidate} meets the target; raise the limit "
                f"({limit} candidates) or check the family"
            )
        lo, hi = hi, min(2 * hi, limit)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if at(mid).meets:
            lo = mid
        else:
            hi = mid
    return lo, seen


#: the far end (the first k past the certified route's limit) is checked, by certified
#: bounds (about a second), before any probe of more than 1/FAR_END_CHECK of the limit
FAR_END_CHECK = 8


def _certified_cap(m: Any) -> int | None:
    """The largest ``k`` whose composition the certified route can compute, or None.

    From the route's own size estimate (:func:`~dpcompose_exact.engines.finiteroutes.
    certified_width`, linear in ``k``) and :data:`~dpcompose_exact.engines.certified.
    CERTIFIED_TERM_LIMIT`; None when no such cap applies (several generators, noise).
    """
    pair = m.loss_pair()
    if pair.form is not PairForm.FINITE:
        return None
    try:
        width = certified_width([(pair.directions()[0], 1)])  # type: ignore[index]
    except (DPComposeError, TypeError, ValueError):
        return None
    if width is None or width <= 1:
        return None
    return (CERTIFIED_TERM_LIMIT - 1) // (width - 1)


def _beyond_cap(cap: int, eps: Fraction, delta: Fraction, end: Probe) -> str:
    """The one-line refusal when every k up to the certified route's limit meets."""
    _, hi = end.delta.interval(8)
    return (
        f"the largest k is at least {cap + 1}: delta({eps}) at k = {cap + 1} is at most {hi} "
        f"<= {delta} (certified bounds), and the certified route composes at most "
        f"{CERTIFIED_TERM_LIMIT} loss values, k <= {cap} for this mechanism; ask for a "
        "stricter target (a smaller epsilon or delta)"
    )


def largest_k(
    mechanism: Mechanism | Any,
    target_epsilon: Any,
    target_delta: Any,
    *,
    k_max: int = 10**6,
    max_memory: int | None = DEFAULT_MEMORY_LIMIT,
) -> Calibration:
    """The largest ``k`` whose k-fold composition of ``mechanism`` meets the target.

    Args:
        mechanism: a :class:`~dpcompose_exact.api.Mechanism` (or a list of (eps, delta)).
        target_epsilon: exact target epsilon (``"10"``, ``"0.5"``, a Fraction...).
        target_delta: exact target delta (``"1e-5"``...).
        k_max: give up (an error) when every ``k`` up to this meets the target.
        max_memory: bytes the exact route may use per composition (then certified).

    Returns:
        A :class:`Calibration` with ``meets`` at ``k`` and ``fails`` at ``k + 1``.

    Raises:
        InvalidParameterError: no ``k >= 1`` meets the target, or every ``k <= k_max`` does.
        ResourceLimitError: the answer is past the largest ``k`` the certified route can
            compose; found before the costly probes, by certified bounds at that ``k + 1``.
    """
    m = mechanism if is_mechanism(mechanism) else Mechanism(mechanism)
    eps, delta = _targets(target_epsilon, target_delta)
    start = time.perf_counter()
    cap = _certified_cap(m)  # the largest k the certified route composes (None: no cap)
    if cap is not None and cap >= k_max:
        cap = None
    far: dict[int, Probe | None] = {}

    def far_end() -> Probe | None:
        """``cap + 1`` by certified bounds (once); None when they cannot decide."""
        assert cap is not None
        if cap + 1 not in far:
            comp = compose(m, cap + 1, method="bounds", closed_forms=False)
            try:
                far[cap + 1] = Probe(cap + 1, *_verdict(comp, eps, delta))
            except CertificationError:
                far[cap + 1] = None
        return far[cap + 1]

    def probe(k: int) -> Probe:
        if cap is not None and k > cap // FAR_END_CHECK:
            # before the probes that cost seconds: can the answer be certified at all?
            end = far_end()
            if end is not None and end.meets:
                raise ResourceLimitError(_beyond_cap(cap, eps, delta, end))
            if k > cap and end is not None:
                return end
        comp = compose(m, k, max_memory=max_memory, closed_forms=False)
        value, ok = _verdict(comp, eps, delta)
        return Probe(k, value, ok)

    k, seen = _search(probe, k_max if cap is None else cap + 1, "k")
    return Calibration(
        quantity="k",
        answer=k,
        target_epsilon=eps,
        target_delta=delta,
        meets=seen[k],
        fails=seen[k + 1],
        evaluations=len(seen),
        seconds=time.perf_counter() - start,
        assumption="delta(eps) of a composition never decreases when a mechanism is added",
        monotone_at_certificate=True,
        probes=tuple(seen[n] for n in sorted(seen)),
    )


def largest_parameter(
    family: Callable[[Fraction], Mechanism],
    k: int,
    target_epsilon: Any,
    target_delta: Any,
    step: Any,
    *,
    max_doublings: int = MAX_DOUBLINGS,
    max_memory: int | None = DEFAULT_MEMORY_LIMIT,
) -> Calibration:
    """The largest grid point ``x = n * step`` whose ``k``-fold composition meets the target.

    Args:
        family: a callable from an exact ``Fraction`` ``x > 0`` to a Mechanism, less
            private as ``x`` grows (checked at the answer).
        k: number of uses of the mechanism.
        target_epsilon: exact target epsilon.
        target_delta: exact target delta.
        step: the grid step (exact, > 0): candidates are ``step, 2 step, 3 step, ...``.
        max_doublings: give up after this many doublings of ``x`` that all meet the target.
        max_memory: bytes the exact route may use per composition.

    Returns:
        A :class:`Calibration` with ``meets`` at ``x`` and ``fails`` at ``x + step``.

    Raises:
        InvalidParameterError: no grid point meets the target, or none fails up to the limit.
        TypeError: ``family`` does not return a Mechanism.
    """
    eps, delta = _targets(target_epsilon, target_delta)
    h = parse_rational(step, "grid step")
    if h <= 0:
        raise InvalidParameterError(f"grid step = {h} must be > 0")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidParameterError(f"k = {k!r} must be a positive integer (k >= 1)")
    start = time.perf_counter()
    mechanisms: dict[int, Mechanism] = {}

    def member(n: int) -> Mechanism:
        if n not in mechanisms:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", InactiveConstraintWarning)
                m = family(n * h)
            if not is_mechanism(m):
                raise TypeError(
                    f"the family returned {type(m).__name__}, not a Mechanism (or another "
                    "mechanism of the package)"
                )
            mechanisms[n] = m
        return mechanisms[n]

    def probe(n: int) -> Probe:
        comp = compose(member(n), k, max_memory=max_memory, closed_forms=False)
        value, ok = _verdict(comp, eps, delta)
        return Probe(n * h, value, ok)

    n, seen = _search(probe, 2**max_doublings, "grid point")
    monotone = member(n).region <= member(n + 1).region
    return Calibration(
        quantity="parameter",
        answer=n * h,
        target_epsilon=eps,
        target_delta=delta,
        meets=seen[n],
        fails=seen[n + 1],
        evaluations=len(seen),
        seconds=time.perf_counter() - start,
        assumption="the family is monotone: a larger x gives a less private mechanism",
        monotone_at_certificate=monotone,
        k=k,
        step=h,
        probes=tuple(seen[i] for i in sorted(seen)),
    )


#: what :func:`calibrate_noise` solves for
SOLVES = ("sigma", "k", "q")


def _noise_step(scale: Fraction) -> Fraction:
    """The default grid of a noise scale: the power of ten at about ``scale / 1000``."""
    exponent = 0
    x = scale / 1000
    while x >= 10:
        x /= 10
        exponent += 1
    while x < 1:
        x *= 10
        exponent -= 1
    return Fraction(10) ** exponent


def calibrate_noise(
    target_epsilon: Any,
    target_delta: Any,
    *,
    noise: str = "gaussian",
    solve: str = "sigma",
    k: int | None = None,
    sampling_rate: Any = None,
    scale: Any = None,
    sensitivity: Any = 1,
    step: Any = None,
    others: Any = (),
    k_max: int = 10**7,
    max_doublings: int = 40,
) -> Calibration:
    """Certified calibration of a noise mechanism (DP-SGD): sigma, the steps k, or the rate q.

    The composition is ``k`` uses of ``noise`` (Gaussian of standard deviation ``sigma``,
    or Laplace of scale ``b``) of the given sensitivity, each on a Poisson subsample of
    rate ``q`` when ``sampling_rate`` is given, next to ``others`` (``[(mechanism, count),
    ...]``, composed as they are).  It is composed through the one router (the Gaussian
    closed form without subsampling, certified loss grids with it; docs/theory.md,
    sections 15, 18, 19) and the verdict at each candidate is a certified comparison of
    ``delta(target_epsilon)`` with ``target_delta``.

    * ``solve="sigma"``: the **smallest** scale on the grid ``step`` (default: the power of
      ten at about 1/1000 of the answer) that meets the target, with the grid point below
      proven to fail; a larger scale is more private (the pair of a larger scale is a
      post-processing of the smaller one's).
    * ``solve="k"``: the largest number of steps, with ``k + 1`` proven to fail.
    * ``solve="q"``: the largest rate on the grid ``step`` (default 1/1000), with the next
      one proven to fail; a larger rate is less private (assumed, as every accountant
      does, and not checked).

    Returns:
        A :class:`Calibration`; ``meets`` and ``fails`` hold the certified delta at the
        two certificate points, :attr:`Calibration.epsilons` their certified
        ``eps(target_delta)``.

    Raises:
        InvalidParameterError: bad parameters, or no candidate meets the target.
        CertificationError: a grid enclosure contains the target at a candidate.
    """
    from ..api import compose as front_compose
    from ..mechanisms.noise import gaussian_noise, laplace_noise

    eps, delta = _targets(target_epsilon, target_delta)
    if noise not in ("gaussian", "laplace"):
        raise InvalidParameterError(f"noise = {noise!r}: choose gaussian or laplace")
    if solve not in SOLVES:
        raise InvalidParameterError(f"solve = {solve!r}: choose one of {', '.join(SOLVES)}")
    if noise == "gaussian" and delta == 0:
        # every candidate fails (no search could end): delta(eps) > 0 at every eps of any
        # Gaussian, subsampled or not, whatever is composed next to it (docs/theory.md,
        # section 18), while Laplace noise reaches 0 at eps >= k sensitivity / b
        raise InvalidParameterError(
            f"target delta = {delta}: Gaussian noise never reaches delta = 0 (its delta(eps) "
            f"is > 0 at every eps, here eps = {eps}, for every sigma, k and rate); give a "
            "target delta in (0, 1), or use --noise laplace for pure DP"
        )
    make = gaussian_noise if noise == "gaussian" else laplace_noise
    name = "sigma" if noise == "gaussian" else "b"
    extra = [(m, n) for m, n in others]
    start = time.perf_counter()

    def mechanism(x: Fraction, q: Any) -> Any:
        m = make(x, sensitivity)
        return m if q is None else m.subsample(q)

    comps: dict[Any, Composition] = {}

    def probe_at(x: Fraction, q: Any, kk: int, cand: Any) -> Probe:
        comp = front_compose([(mechanism(x, q), kk), *extra])
        comps[cand] = comp
        value, ok = _verdict(comp, eps, delta)
        return Probe(cand, value, ok)

    def epsilons(a: Any, b: Any) -> tuple[Value, Value]:
        out = []
        for cand in (a, b):
            value = comps[cand].epsilon(delta)
            assert isinstance(value, Value)
            out.append(value)
        return out[0], out[1]

    def result(
        quantity: str,
        answer: Any,
        fails: Any,
        seen: dict[Any, Probe],
        assumption: str,
        step: Fraction | None = None,
    ) -> Calibration:
        """The calibration with its certificate: ``answer`` meets, ``fails`` does not."""
        return Calibration(
            quantity=quantity,
            answer=answer,
            target_epsilon=eps,
            target_delta=delta,
            meets=seen[answer],
            fails=seen[fails],
            evaluations=len(seen),
            seconds=time.perf_counter() - start,
            assumption=assumption,
            monotone_at_certificate=True,
            k=None if quantity == "k" else k,
            step=step,
            probes=tuple(seen[x] for x in sorted(seen)),
            epsilons=epsilons(answer, fails),
        )

    if solve == "k":
        if scale is None:
            raise InvalidParameterError(f"solve k needs the noise scale ({name})")
        x = parse_rational(scale, name)
        kk, seen = _search(lambda n: probe_at(x, sampling_rate, n, n), k_max, "k")
        return result(
            "k",
            kk,
            kk + 1,
            seen,
            "delta(eps) of a composition never decreases when a mechanism is added",
        )
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidParameterError(f"k = {k!r} must be a positive integer (the steps)")
    if solve == "q":
        if scale is None:
            raise InvalidParameterError(f"solve q needs the noise scale ({name})")
        x = parse_rational(scale, name)
        h = parse_rational(step if step is not None else "1/1000", "grid step")
        if not 0 < h <= 1:
            raise InvalidParameterError(f"grid step = {h} must lie in (0, 1] for a rate")
        top = int(1 / h)

        def probe_q(n: int) -> Probe:
            return probe_at(x, n * h, k, n * h)

        n, seen = _search(probe_q, top, "sampling rate")
        by_rate = {i * h: p for i, p in seen.items()}
        return result(
            "q",
            n * h,
            (n + 1) * h,
            by_rate,
            "a larger sampling rate gives a less private mechanism (not checked)",
            step=h,
        )
    # solve sigma: the smallest scale; first bracket it on powers of two
    seen_x: dict[Fraction, Probe] = {}

    def at(x: Fraction) -> Probe:
        if x not in seen_x:
            seen_x[x] = probe_at(x, sampling_rate, k, x)
        return seen_x[x]

    hi = Fraction(1)
    for _ in range(max_doublings):
        if at(hi).meets:
            break
        hi *= 2
    else:
        raise InvalidParameterError(
            f"no {name} up to {hi} meets the target ({max_doublings} doublings)"
        )
    lo = hi / 2
    for _ in range(max_doublings):
        if not at(lo).meets:
            break
        hi, lo = lo, lo / 2
    else:
        raise InvalidParameterError(f"every {name} down to {lo} meets the target")
    h = parse_rational(step, "grid step") if step is not None else _noise_step(hi)
    if h <= 0:
        raise InvalidParameterError(f"grid step = {h} must be > 0")
    # on the grid: the smallest n with n h meeting; lo fails, hi meets
    n_lo = int(lo / h)  # n_lo h <= lo: fails (a smaller scale is less private)
    n_hi = -(-hi // h)  # n_hi h >= hi: meets
    n_lo, n_hi = int(n_lo), int(n_hi)
    if n_lo < 1:
        n_lo = 0
    while n_hi - n_lo > 1:
        mid = (n_lo + n_hi) // 2
        if at(mid * h).meets:
            n_hi = mid
        else:
            n_lo = mid
    if n_lo == 0:
        raise InvalidParameterError(
            f"the smallest grid point {h} already meets the target: use a finer --step"
        )
    at(n_hi * h), at(n_lo * h)  # both certificate points are probed (cached)
    return result(
        name,
        n_hi * h,
        n_lo * h,
        seen_x,
        f"a larger {name} gives a more private mechanism (post-processing)",
        step=h,
    )


def calibrate(
    target_epsilon: Any,
    target_delta: Any,
    *,
    mechanism: Any = None,
    noise: str | None = None,
    **options: Any,
) -> Calibration:
    """The one entry of certified calibration (``dx.calibrate``).

    With ``mechanism``: the largest ``k`` (:func:`largest_k`, options ``k_max``,
    ``max_memory``).  Otherwise a noise mechanism, ``noise="gaussian"`` by default
    (:func:`calibrate_noise`: ``solve="sigma"|"k"|"q"``, ``k``, ``sampling_rate``,
    ``scale``, ``sensitivity``, ``step``, ``others``).

    >>> calibrate("2", "1e-5", k=10).answer  # the smallest sigma on the grid 1/1000
    Fraction(1261, 200)
    """
    if mechanism is not None:
        if noise is not None:
            raise InvalidParameterError("calibrate takes a mechanism or a noise, not both")
        return largest_k(mechanism, target_epsilon, target_delta, **options)
    return calibrate_noise(target_epsilon, target_delta, noise=noise or "gaussian", **options)


def get_noise_multiplier(
    *,
    target_epsilon: Any,
    target_delta: Any,
    sample_rate: Any,
    epochs: Any = None,
    steps: Any = None,
    accountant: str = "certified",
    epsilon_tolerance: Any = None,
    step: Any = None,
) -> Fraction:
    """Opacus's ``get_noise_multiplier``, certified: the smallest sigma of DP-SGD.

    The call of ``opacus.accountants.utils.get_noise_multiplier`` (the same keywords), for
    ``steps`` steps of the Poisson-subsampled Gaussian mechanism of sensitivity 1 at rate
    ``sample_rate`` (or ``epochs``: ``steps = int(epochs / sample_rate)``, as Opacus
    counts them), answered by :func:`calibrate_noise` (``solve="sigma"``): the smallest
    noise multiplier on the grid ``step`` (default: about 1/1000 of the answer) whose
    composition is proven ``(target_epsilon, target_delta)``-DP, the grid point below
    proven to fail.

    Floats are accepted, as :class:`~dpcompose_exact.integrations.dp_accounting.ExactAccountant`
    accepts them: read as the shortest decimal that round-trips (``repr``), so ``1e-5`` is
    1/100000 and ``0.01`` is 1/100 (the decimal typed; strings, ints and Fractions are
    exact as always).  ``accountant`` and ``epsilon_tolerance`` are accepted for the
    shape of the call and not used: the answer is certified, not within a tolerance.

    Returns:
        The noise multiplier sigma, exact (``float(sigma)`` for Opacus's optimizer).

    Raises:
        InvalidParameterError: neither or both of ``epochs`` and ``steps``, or a bad value.
    """
    del accountant, epsilon_tolerance  # the shape of Opacus's call: certified instead
    if (epochs is None) == (steps is None):
        raise InvalidParameterError(
            f"give exactly one of epochs and steps (got epochs={epochs!r}, steps={steps!r})"
        )
    rate = parse_rational(float_text(sample_rate), "sample_rate")
    if steps is None:
        n_epochs = parse_rational(float_text(epochs), "epochs")
        if not 0 < rate <= 1 or n_epochs <= 0:
            raise InvalidParameterError(
                f"epochs = {n_epochs} and sample_rate = {rate}: need epochs > 0 and "
                "0 < sample_rate <= 1"
            )
        steps = int(n_epochs / rate)  # Opacus: int(epochs / sample_rate)
    result = calibrate_noise(
        float_text(target_epsilon),
        float_text(target_delta),
        noise="gaussian",
        solve="sigma",
        k=steps if isinstance(steps, int) else float_text(steps),
        sampling_rate=rate,
        step=None if step is None else float_text(step),
    )
    return Fraction(result.answer)
