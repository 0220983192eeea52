"""The front door: compose mechanisms and query the result, exactly or certified.

A user needs three names: :class:`Mechanism` (a mechanism that satisfies one or several
(eps, delta)-DP constraints at once), :func:`compose` (k uses of it, or any list of
kinds), and the :class:`Composition` it returns, whose queries answer with
:class:`~dpcompose_exact.numbers.value.Value` objects -- exact where the composition is exact,
certified enclosures where it was computed with balls (large k).  Domains, loss vectors
and Q(z) elements stay in the expert modules (:mod:`dpcompose_exact.algebra`).

The paper's named results (Theorems 1-3, KOV, Remarks 1-2, mixtures) are here too, with
the same inputs as :func:`compose` and the same result type (docs/theory.md, sections 2-8).

>>> import dpcompose_exact as dx
>>> m = dx.Mechanism([("0.3", "0"), ("0.15", "0.02")])
>>> c = dx.compose(m, k=20)
>>> c.delta("1").decimal(12)
'0.0886640230933'
>>> c.epsilon("1e-5").decimal(6)
'3.56978'
>>> eps, delta = c.constraints[0]
>>> eps.exact, delta.decimal(6)
('0', '0.342327')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import Any

from .composition import Composition
from .engines.genfunc import DEFAULT_MEMORY_LIMIT
from .engines.memory import BASE_RSS
from .engines.results import Exactness, ExactResult, listed_result
from .engines.routes import Method, compose_mechanisms
from .errors import InvalidParameterError, ResourceLimitError
from .numbers import ExpDomain, QzElem, linear_form, parse_rational
from .numbers.format import readable_exact
from .numbers.value import Value
from .regions.pld import PLD, canonical_pair
from .regions.protocol import LossPair, PairForm, is_mechanism
from .regions.specs import Family, MechanismKind, add_family, parse_count
from .regions.tradeoff import Region, dp_region, mixture_minkowski

__all__ = [
    "Mechanism",
    "randomized_response",
    "discrete_laplace",
    "mechanism_of",
    "register_family",
    "check_discrete_laplace_size",
    "compose",
    "mixture",
    "heterogeneous_composition",
    "theorem1_closed_form",
    "theorem2_mixture",
    "theorem3_lattice",
    "kov_composition",
    "remark1_bound",
    "remark2_bound",
]

# ---------------------------------------------------------------------------------------
# Mechanisms
# ---------------------------------------------------------------------------------------


class Mechanism:
    """A mechanism that satisfies every given (eps, delta)-DP constraint at once.

    Values are exact: strings (``"0.3"`` is 3/10, ``"1e-5"``, ``"3/20"``, ``"log(2)"``),
    ints, Fractions or sympy expressions; floats are refused with a TypeError.  The
    constraints are kept in canonical form (the active ones, by increasing eps), so equal
    mechanisms compare and hash equal.

    >>> m = Mechanism([("0.3", "0"), ("0.15", "0.02")])
    >>> m == Mechanism.dp("3/20", "1/50") & Mechanism.dp("3/10")
    True
    """

    __slots__ = ("_region",)

    def __init__(self, constraints: Iterable[tuple[Any, Any]]) -> None:
        pairs = list(constraints)
        if pairs and not isinstance(pairs[0], (tuple, list)) and len(pairs) == 2:
            raise InvalidParameterError(
                f"Mechanism takes a list of (eps, delta) pairs, got {pairs!r}; for one pair "
                "write Mechanism.dp(eps, delta)"
            )
        self._region = dp_region(pairs)

    @classmethod
    def dp(cls, eps: Any, delta: Any = 0) -> Mechanism:
        """A mechanism with one (eps, delta)-DP constraint (pure DP when delta is 0)."""
        return cls([(eps, delta)])

    @classmethod
    def from_region(cls, region: Region) -> Mechanism:
        """The mechanism whose privacy region is ``region`` (for experts)."""
        if listed_result(region).kind is not Exactness.EXACT:  # TypeError for a non-region
            raise TypeError(f"from_region needs an exact Region, got {type(region).__name__}")
        out = cls.__new__(cls)
        out._region = region
        return out

    @property
    def region(self) -> Region:
        """The exact privacy region (expert view)."""
        return self._region

    @property
    def constraints(self) -> list[tuple[Value, Value]]:
        """The active constraints as exact ``(eps, delta)`` Values, increasing eps."""
        return ExactResult(self._region).constraints()

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        """The active constraints as exact strings ``(eps, delta)``."""
        dom = self._region.domain
        return tuple((dom.loss_str(l_), dom.elem_str(d)) for l_, d in self._region.constraints)

    def __and__(self, other: Mechanism) -> Mechanism:
        """The mechanism satisfying the constraints of both (intersection of regions)."""
        if not isinstance(other, Mechanism):
            return NotImplemented
        return Mechanism.from_region(self._region.intersect(other._region))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mechanism):
            return NotImplemented
        return self._region == other._region

    def __hash__(self) -> int:
        return hash(self._region)

    def loss_pair(self) -> LossPair:
        """The canonical dominating pair of the region: finite, symmetric, exact."""
        return LossPair(PairForm.FINITE, canonical_pair(self._region))

    def to_dict(self) -> dict[str, Any]:
        """``{"constraints": [[eps, delta], ...]}`` with exact strings."""
        return {"constraints": [list(p) for p in self.pairs]}

    def __repr__(self) -> str:
        return f"Mechanism({[p for p in self.pairs]!r})"

    def describe(self) -> str:
        """``(eps, delta)+...`` with readable exact strings, for titles."""
        return "+".join(f"({readable_exact(e)}, {readable_exact(d)})" for e, d in self.pairs)

    def subsample(self, q: Any) -> Any:
        """The mechanism run on a random subsample of rate ``q`` (exact, asymmetric pair).

        Poisson sampling of rate ``q`` under add/remove, or ``m`` of ``n`` records without
        replacement under replace-one (``q = m/n``), the constraints being for that
        relation (docs/theory.md, section 15).  Exact when every eps is the log of a
        rational (``"log(3)"``), else certified two-sided bounds (eps rounded to logs of
        rationals both ways).  Compose the result with :func:`compose`, which then returns
        a :class:`~dpcompose_exact.engines.subsample.SubsampledComposition` (or
        :class:`~dpcompose_exact.engines.subsample.SubsampledBounds`).

        >>> m = Mechanism.dp("log(3)").subsample("1/10")
        >>> compose(m, 10).delta("0.5").decimal(20)
        '0.021458838640290929750'
        """
        from .engines.subsample import subsample_region

        out = subsample_region(self._region, q, repr(self))
        out.pairs = self.pairs
        return out

    # -- exports (dpcompose_exact.presentation.export) -----------------------------------
    def to_dp_accounting(self, value_discretization_interval: float = 1e-4) -> Any:
        """A pessimistic ``dp_accounting`` ``PrivacyLossDistribution`` of this mechanism."""
        from .presentation.export import to_dp_accounting

        return to_dp_accounting(ExactResult(self._region), value_discretization_interval)

    def to_prv(self) -> Any:
        """A ``prv_accountant.PrivacyRandomVariable`` of this mechanism's exact pair."""
        from .presentation.export import to_prv

        return to_prv(ExactResult(self._region))

    def to_opendp(self) -> Any:
        """An OpenDP ``PrivacyProfile`` whose delta(eps) is never below the exact one."""
        from .presentation.export import to_opendp

        return to_opendp(ExactResult(self._region))


def randomized_response(p: Any, buckets: int = 2) -> Mechanism:
    """Randomized response over ``buckets`` values, keeping the input w.p. ``1 - p``.

    With probability ``p`` the output is uniform over the buckets.  Two inputs
    ``x != x'`` (replace-one): ``P(x|x) = 1 - p + p/k``, ``P(x|x') = p/k``, the other
    buckets ``p/k`` under both, so the mechanism is ``ln((k(1-p) + p)/p)``-DP together
    with total variation ``1 - p`` (implied when ``k = 2``); ``p`` in ``(0, 1]``.

    >>> randomized_response("1/2").pairs
    (('log(3)', '0'),)
    """
    rate = parse_rational(p, "randomized response p")
    k = parse_count(buckets, "buckets", positive=True)
    if not 0 < rate <= 1 or k < 2:
        raise InvalidParameterError(
            f"randomized_response(p = {rate}, buckets = {k}): need 0 < p <= 1 and buckets >= 2"
        )
    ratio = (k * (1 - rate) + rate) / rate
    cons: list[tuple[Any, Any]] = [(f"log({ratio.numerator}/{ratio.denominator})", 0)]
    if k > 2:
        cons.append((0, 1 - rate))
    return Mechanism(cons)


# Bytes per (loss, z-power) slot of the discrete Laplace pair in Q(z): shift + 1 losses
# whose masses carry z^-x for x up to the shift, i.e. (shift + 1)^2 polynomial slots.
# Measured (CPython 3.11, python-flint 0.6): 16 per slot to build the mechanism, 50 with its
# canonical pair (the event trees); 56 keeps both below the estimate.
_DLAP_SLOT_BYTES = 56
# Bytes per atom of the pair with a rational e^a (exponent vectors, Python objects).
_DLAP_ATOM_BYTES = 1000


def discrete_laplace_pair_bytes(shift: int, ratio: Fraction | None = None) -> int:
    """Estimated peak bytes of building the exact discrete Laplace pair of ``shift``.

    The pair has ``shift + 1`` distinct losses; the mass of the loss ``a (s - 2x)`` is
    ``(1-q)/(1+q) q^x``, so the sizes grow with the square of the shift.

    Args:
        shift: the shift of the noise (sensitivity, doubled under replace-one).
        ratio: ``e^a`` when it is rational (the masses are rationals of about
            ``x log2(num den)`` bits); None: ``e^a`` is the generator ``z`` of Q(z) (the
            masses are polynomials of z-degree up to ``x``).

    Returns:
        The estimate in bytes, the interpreter included (:data:`BASE_RSS`).
    """
    slots = (shift + 1) ** 2
    if ratio is None:
        return BASE_RSS + _DLAP_SLOT_BYTES * slots
    bits = ratio.numerator.bit_length() + ratio.denominator.bit_length()
    # sum over x of 2 x bits (numerator and denominator of q^x (1-q)/(1+q)), in bytes
    return BASE_RSS + slots * bits // 8 + _DLAP_ATOM_BYTES * (shift + 1)


def check_discrete_laplace_size(
    shift: int,
    max_memory: int | None = DEFAULT_MEMORY_LIMIT,
    ratio: Fraction | None = None,
    what: str = "discrete Laplace",
) -> None:
    """Refuse, before allocating, a discrete Laplace pair too large for ``max_memory``.

    Args:
        shift: the shift of the noise.
        max_memory: bytes the pair may use (None: no limit).
        ratio: ``e^a`` when rational (see :func:`discrete_laplace_pair_bytes`).
        what: the event, for the message.

    Raises:
        ResourceLimitError: the estimate exceeds ``max_memory``; the message gives the
            shift, the estimate, the limit and the largest shift that fits.
    """
    if max_memory is None:
        return
    need = discrete_laplace_pair_bytes(shift, ratio)
    if need <= max_memory:
        return
    lo, hi = 0, shift  # the largest shift that fits, by bisection
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if discrete_laplace_pair_bytes(mid, ratio) <= max_memory:
            lo = mid
        else:
            hi = mid - 1
    raise ResourceLimitError(
        f"{what} with shift {shift}: its exact pair has {shift + 1} distinct losses with "
        f"masses up to q^{shift}, about {need:.3g} bytes to build; the memory limit is "
        f"{max_memory} bytes ({max_memory / 2**30:g} GiB), which fits shifts up to {lo} "
        "(raise the limit, or lower the sensitivity)"
    )


def discrete_laplace(
    a: Any, sensitivity: int = 1, max_memory: int | None = DEFAULT_MEMORY_LIMIT
) -> Mechanism:
    """Discrete Laplace noise ``P(x) ∝ e^(-a|x|)`` on an integer query of the given sensitivity.

    ``a`` is exact (``"1/2"``, ``"log(2)"``: then ``e^a`` is rational and the mechanism
    stays exact under subsampling).  With ``q = e^-a`` and shift ``s`` the loss
    ``a(|x - s| - |x|)`` takes the values ``a s`` (P0-mass ``1/(1+q)``), ``a (s - 2x)``
    for ``0 < x < s`` (mass ``(1-q)/(1+q) q^x``) and ``-a s`` (mass ``q^s/(1+q)``): a
    finite pair in the exact field.

    Args:
        a: the noise parameter, exact and ``> 0``.
        sensitivity: the shift of the noise (an integer ``>= 1``).
        max_memory: bytes the pair may take (:func:`check_discrete_laplace_size`; None:
            no limit); checked before anything is allocated.

    Raises:
        ResourceLimitError: the pair would not fit in ``max_memory``.

    >>> discrete_laplace("log(2)").pairs
    (('log(2)', '0'),)
    """
    form = linear_form(a, "discrete Laplace a")
    if form.sign() <= 0:
        raise InvalidParameterError(f"discrete Laplace a = {form} must be > 0")
    shift = parse_count(sensitivity, "sensitivity", positive=True)
    dom = ExpDomain.for_forms([form])
    unit = dom.loss(form)
    z = dom.exp_loss(unit)  # e^a in the field of the domain
    check_discrete_laplace_size(shift, max_memory, z.as_rational(), "discrete Laplace")
    masses = [(tuple(shift * n for n in unit), z / (z + 1))]  # 1/(1+q) = z/(z+1)
    power = z
    for x in range(1, shift):
        # (1-q)/(1+q) q^x = (z-1)/(z+1) z^-x
        masses.append((tuple((shift - 2 * x) * n for n in unit), (z - 1) / ((z + 1) * power)))
        power = power * z
    masses.append((tuple(-shift * n for n in unit), 1 / ((z + 1) * power / z)))  # q^s/(1+q)
    pld = PLD.from_masses(dom, masses, QzElem.from_rational(0))
    return Mechanism.from_region(pld.to_region())


#: how each family of :data:`~dpcompose_exact.regions.specs.FAMILIES` is built from its
#: parameters (exact strings, defaults filled in); :func:`register_family` adds one
_BUILDERS: dict[str, Callable[..., Any]] = {}


def register_family(
    name: str,
    params: Sequence[str],
    build: Callable[..., Any],
    defaults: Sequence[str] = (),
    short: str | None = None,
) -> None:
    """Give a mechanism a spec spelling: ``name(P1,P2)`` on the CLI, ``[name]`` in spec files.

    ``build(*params)`` receives the parameters as exact strings (the defaults filled in)
    and returns a mechanism (:class:`~dpcompose_exact.regions.protocol.MechanismLike`);
    ``@Q`` subsamples it (its ``subsample(q)``).  Nothing else needs to know the family:
    :func:`compose` routes it by its loss pair (docs/adding_a_mechanism.md).

    Raises:
        InvalidParameterError: the name or short name is taken by another family.
    """
    add_family(Family(name, tuple(params), tuple(defaults), short))
    _BUILDERS[name] = build


def mechanism_of(kind: MechanismKind) -> Any:
    """The mechanism a spec describes (``--mech``, spec files; docs/cli.md, "Mechanisms").

    >>> from dpcompose_exact.regions.specs import parse_mech_spec
    >>> mechanism_of(parse_mech_spec("gaussian(2)@1/10:5")).describe()
    "gaussian_noise('2') subsampled at 1/10"
    """
    if kind.family == "dp":
        out: Any = Mechanism(list(kind.constraints))
    else:
        build = _BUILDERS.get(kind.family)
        if build is None:
            raise InvalidParameterError(
                f"unknown mechanism family {kind.family!r}; known: dp, {', '.join(_BUILDERS)}"
            )
        out = build(*kind.params)
    return out if kind.subsample is None else out.subsample(kind.subsample)


def _builtin_families() -> None:
    from .mechanisms.noise import gaussian_noise, laplace_noise

    for name, build in (
        ("gaussian", gaussian_noise),
        ("laplace", laplace_noise),
        ("randomized_response", randomized_response),
        ("discrete_laplace", discrete_laplace),
    ):
        _BUILDERS[name] = build


_builtin_families()


def _as_mechanism(m: Any) -> Mechanism:
    if isinstance(m, Mechanism):
        return m
    if isinstance(m, (list, tuple)) and len(m) == 2 and not isinstance(m[0], (list, tuple)):
        return Mechanism.dp(*m)  # one (eps, delta) pair
    if isinstance(m, (list, tuple)):
        return Mechanism(m)
    raise TypeError(f"expected a Mechanism or a list of (eps, delta) pairs, got {type(m).__name__}")


def _as_kinds(mechanisms: Any, k: Any) -> list[tuple[Any, int]]:
    """Normalise the inputs of :func:`compose` into merged ``(mechanism, count)`` kinds.

    A mechanism is anything that speaks the mechanism protocol
    (:class:`~dpcompose_exact.regions.protocol.MechanismLike`): :class:`Mechanism`,
    subsampled mechanisms, Gaussian and Laplace noise, subsampled noise.
    """
    if is_mechanism(mechanisms):
        if k is None:
            raise InvalidParameterError("compose(mechanism, k): k is missing")
        kinds = [(mechanisms, parse_count(k, "k", positive=True))]
    elif (
        isinstance(mechanisms, (list, tuple))
        and mechanisms
        and all(
            isinstance(item, (list, tuple)) and len(item) == 2 and is_mechanism(item[0])
            for item in mechanisms
        )
    ):
        if k is not None:
            raise InvalidParameterError(
                "compose([(mechanism, count), ...]) gives each kind its own count; "
                "do not pass k as well"
            )
        kinds = [(m, parse_count(n, "count")) for m, n in mechanisms]
    elif isinstance(mechanisms, (list, tuple)) and not any(
        isinstance(item, (list, tuple)) and item and is_mechanism(item[0]) for item in mechanisms
    ):
        if k is None:
            raise InvalidParameterError(
                "compose(pairs, k): k is missing (or pass [(Mechanism, count), ...])"
            )
        kinds = [(Mechanism(mechanisms), parse_count(k, "k", positive=True))]
    else:
        raise TypeError(
            "compose takes a mechanism and k, a list of (eps, delta) pairs and k, or a list "
            "of (mechanism, count) where every mechanism is a dx.Mechanism, "
            "dx.gaussian_noise(...), dx.laplace_noise(...) or one of their .subsample(q); "
            f"got {type(mechanisms).__name__}"
        )
    merged: dict[Any, int] = {}
    for m, n in kinds:
        merged[m] = merged.get(m, 0) + n
    out = [(m, n) for m, n in merged.items() if n]
    if not out:
        raise InvalidParameterError("nothing to compose: every count is 0")
    return out


# ---------------------------------------------------------------------------------------
# compose and the paper's results
# ---------------------------------------------------------------------------------------


def compose(
    mechanisms: Any,
    k: Any = None,
    *,
    method: Method | str = Method.AUTO,
    digits: int = 30,
    max_memory: int | None = DEFAULT_MEMORY_LIMIT,
    closed_forms: bool | str | None = None,
    width: Any = None,
    progress: Any = None,
    grid: Any = None,
) -> Composition:
    """Compose mechanisms: ``compose(m, k)`` or ``compose([(m1, k1), (m2, k2), ...])``.

    Args:
        mechanisms: a mechanism (with ``k``): :class:`Mechanism`,
            :func:`randomized_response`, :func:`discrete_laplace`, ``gaussian_noise``,
            ``laplace_noise``, any of them ``.subsample(q)``, or a class of one's own that
            speaks :class:`~dpcompose_exact.regions.protocol.MechanismLike`; a list of
            ``(eps, delta)`` pairs (with ``k``); or a list of ``(mechanism, count)`` of
            any kinds.
        k: the number of uses when one mechanism is given: an int or the exact text of a
            whole number (``"20"``, ``"1e9"``); ``"20.5"`` and floats are refused.
        method: a :class:`Method`: ``auto`` (exact when it fits ``max_memory``, else
            certified, else bounds), ``exact``, ``certified``, ``bounds``, or the paper's
            closed forms ``theorem1`` (two pure-DP kinds), ``theorem2``, ``theorem3``
            (one kind with two constraints); all exact routes agree exactly.
        digits: significant digits the certified route guarantees.
        max_memory: bytes the exact route may use (None: no limit).
        closed_forms: False when only certified decimals are needed: ``auto`` then takes
            the cheapest route that certifies every digit (``dpcompose_exact.engines.routes``);
            ``"streamed"``: closed forms that will be written one row at a time (JSON, CSV),
            whose memory estimate is the region's plus one row's forms.
        width: relative width asked of certified two-sided bounds, when only bounds are
            possible (several incommensurate epsilons, very large lists); default 1e-6.
        progress: a callback ``progress(done, total)`` of the certified route (the
            command line draws a bar on stderr).
        grid: the loss-grid width of the certified bounds of Laplace and subsampled noise
            (exact text such as ``"1e-5"``, in ``(0, 1/10]``; default: the grids' own,
            about 1e-4).  A finer grid gives a narrower enclosure and costs more time
            (docs/theory.md, sections 15 and 18).

    Returns:
        A :class:`Composition`, routed by the one router
        (:func:`~dpcompose_exact.engines.routes.compose_mechanisms`; ``why`` says which
        route and why).  With subsampled or noise mechanisms its result answers
        ``delta(eps)`` and ``epsilon(delta)`` only: exact for exactly subsampled finite
        pairs, certified to any digits for Gaussian noise (next to finite pairs too),
        certified two-sided bounds otherwise (docs/theory.md, sections 15, 18, 19).

    Raises:
        InvalidParameterError: bad parameters (the message names the value and the range).
        ResourceLimitError: the exact route would not fit ``max_memory`` (``method="exact"``).
    """
    how = Method.parse(method)
    kinds = _as_kinds(mechanisms, k)
    if not how.is_route:
        return _closed_form(how, kinds)
    result, route = compose_mechanisms(
        kinds,
        how,
        closed_forms="streamed" if closed_forms == "streamed" else closed_forms is not False,
        digits=digits,
        memory_limit=max_memory,
        progress=progress,
        allow_bounds=how in (Method.AUTO, Method.BOUNDS),
        width=width,
        grid=_grid_width(grid),
    )
    return Composition(result, kinds, route.method, route.why)


def _grid_width(grid: Any) -> Fraction | None:
    """``compose(..., grid=)`` as an exact width in ``(0, 1/10]`` (None: the default)."""
    if grid is None:
        return None
    h = parse_rational(grid, "grid")
    if not 0 < h <= Fraction(1, 10):
        raise InvalidParameterError(f"grid = {h} is outside the valid range (0, 1/10]")
    return h


def _closed_form(how: Method, kinds: list[tuple[Mechanism, int]]) -> Composition:
    """The paper's closed forms (Theorems 1-3) as a :class:`Composition`."""
    from .paper import theorems

    others = [m for m, _ in kinds if not isinstance(m, Mechanism)]
    if others:
        raise InvalidParameterError(
            f"method {how.value} is one of the paper's closed forms, for (eps, delta) "
            f"mechanisms only; got {others[0].describe()}: use method 'auto'"
        )
    if how is Method.THEOREM1:
        if len(kinds) != 2 or any(len(m.pairs) != 1 or m.pairs[0][1] != "0" for m, _ in kinds):
            raise InvalidParameterError(
                "method theorem1 composes two kinds of pure-DP mechanisms (eps, 0); got "
                f"{len(kinds)} kind(s): {[m.pairs for m, _ in kinds]}"
            )
        (m1, x), (m2, y) = kinds
        region = theorems.theorem1_closed_form(m1.pairs[0][0], x, m2.pairs[0][0], y)
        return Composition(ExactResult(region), kinds, how)
    if len(kinds) != 1:
        raise InvalidParameterError(f"method {how.value} composes one mechanism k times")
    m, n = kinds[0]
    if n > theorems.THEOREM_K_LIMIT:
        raise InvalidParameterError(
            f"method {how.value} enumerates O(k^3) terms; k = {n} is over its limit "
            f"{theorems.THEOREM_K_LIMIT}: use method exact (the same exact region)"
        )
    eps = [e for e, _ in m.pairs]
    delta = [d for _, d in m.pairs]
    fn = theorems.theorem2_mixture if how is Method.THEOREM2 else theorems.theorem3_lattice
    return Composition(ExactResult(fn(eps, delta, n)), kinds, how)


def mixture(weighted: Sequence[tuple[Any, Any]]) -> Mechanism:
    """The mechanism that runs mechanism ``i`` with probability ``w_i`` (Lemma 1).

    Args:
        weighted: ``[(weight, Mechanism or pairs), ...]`` with exact weights summing to 1.
    """
    if not weighted:
        raise InvalidParameterError("mixture needs at least one (weight, mechanism)")
    weights = [w for w, _ in weighted]
    regions = [_as_mechanism(m).region for _, m in weighted]
    return Mechanism.from_region(mixture_minkowski(weights, regions))


def heterogeneous_composition(
    mechs: Sequence[tuple[Any, int]],
    max_memory: int | None = DEFAULT_MEMORY_LIMIT,
    method: Method | str = Method.AUTO,
) -> Composition:
    """Compose ``count`` uses of each pure ``eps``-DP mechanism: ``[(eps, count), ...]``.

    ``method`` is any route of :func:`compose` (``auto``: exact when it fits
    ``max_memory``) or ``theorem1`` (the paper's closed form, two kinds).
    """
    if not mechs:
        raise InvalidParameterError("need at least one (eps, count) mechanism")
    kinds = [(Mechanism.dp(e), parse_count(n, "count")) for e, n in mechs]
    how = Method.parse(method)
    if how is Method.THEOREM1:
        out = _closed_form(how, kinds)
    else:
        out = compose(kinds, max_memory=max_memory, method=how)
    out.command = "heterogeneous"
    return out


def theorem1_closed_form(eps1: Any, x: int, eps2: Any, y: int) -> Composition:
    """Theorem 1 (Algorithm 1): ``x`` eps1-DP and ``y`` eps2-DP mechanisms, closed form."""
    return heterogeneous_composition([(eps1, x), (eps2, y)], method=Method.THEOREM1)


def theorem2_mixture(mechanism: Any, k: int) -> Composition:
    """Theorem 2: the mixture form of the k-fold composition (two constraints)."""
    return compose(_as_mechanism(mechanism), k, method=Method.THEOREM2)


def theorem3_lattice(mechanism: Any, k: int) -> Composition:
    """Theorem 3: the closed form on the (u, v) lattice (two constraints)."""
    return compose(_as_mechanism(mechanism), k, method=Method.THEOREM3)


def _paper_bound(name: str, mechanism: Any, k: int) -> Composition:
    from .paper import theorems

    m = _as_mechanism(mechanism)
    n = parse_count(k, "k", positive=True)
    fn = getattr(theorems, name)
    if name == "kov_composition":
        if len(m.pairs) != 1:
            raise InvalidParameterError(
                f"kov_composition composes one (eps, delta) constraint; got {len(m.pairs)}"
            )
        region = fn(m.pairs[0][0], m.pairs[0][1], n)
    else:
        eps = [e for e, _ in m.pairs]
        delta = [d for _, d in m.pairs]
        region = fn(eps, delta, n)
    return Composition(ExactResult(region), [(m, n)], name)


def kov_composition(mechanism: Any, k: int) -> Composition:
    """Kairouz-Oh-Viswanath: the exact k-fold composition of one (eps, delta) constraint."""
    return _paper_bound("kov_composition", mechanism, k)


def remark1_bound(mechanism: Any, k: int) -> Composition:
    """Remark 1: the intersection of the two KOV compositions (an outer bound)."""
    return _paper_bound("remark1_bound", mechanism, k)


def remark2_bound(mechanism: Any, k: int) -> Composition:
    """Remark 2 (Ghazi-Issa): a total-variation-based outer bound."""
    return _paper_bound("remark2_bound", mechanism, k)
