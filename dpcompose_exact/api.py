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

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from .composition import Composition
from .engines.finiteroutes import ComposeOptions, Method
from .engines.genfunc import DEFAULT_MEMORY_LIMIT
from .engines.results import ExactResult
from .engines.routes import compose_mechanisms
from .errors import InvalidParameterError
from .mechanisms import families

# the mechanisms live in dpcompose_exact.mechanisms, one file per family; the front door
# hands them out under their old names (dx.Mechanism, api.Mechanism, ...)
from .mechanisms.discrete_laplace import check_discrete_laplace_size, discrete_laplace
from .mechanisms.dp import Mechanism
from .mechanisms.families import register_family
from .mechanisms.randomized_response import randomized_response
from .numbers import parse_rational

# the exports of a Mechanism (to_dp_accounting, to_prv, to_opendp) register on import
from .presentation import export as _exports  # noqa: F401
from .regions.protocol import is_mechanism
from .regions.specs import MechanismKind, parse_count
from .regions.tradeoff import mixture_minkowski

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
# specs and inputs
# ---------------------------------------------------------------------------------------


def mechanism_of(kind: MechanismKind) -> Any:
    """The mechanism a spec describes (``--mech``, spec files; docs/cli.md, "Mechanisms").

    One call to the one registry of families, :func:`dpcompose_exact.mechanisms.families.
    build`.

    >>> from dpcompose_exact.regions.specs import parse_mech_spec
    >>> mechanism_of(parse_mech_spec("gaussian(2)@1/10:5")).describe()
    "gaussian_noise('2') subsampled at 1/10"
    """
    return families.build(kind)


def _as_kinds(mechanisms: Any, k: Any) -> list[tuple[Any, int]]:
    """Normalise the inputs of :func:`compose` into merged ``(mechanism, count)`` kinds.

    A mechanism is anything that speaks the mechanism protocol
    (:class:`~dpcompose_exact.regions.protocol.MechanismLike`): :class:`Mechanism`,
    subsampled mechanisms, Gaussian and Laplace noise, subsampled noise.
    """
    if (
        isinstance(mechanisms, (list, tuple))
        and mechanisms
        and all(isinstance(item, MechanismKind) for item in mechanisms)
    ):
        if k is not None:
            raise InvalidParameterError("compose(kinds): each kind has its own count; no k")
        kinds = [(families.build(kind), kind.count) for kind in mechanisms]  # specs: one call
    elif is_mechanism(mechanisms):
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
            ``(eps, delta)`` pairs (with ``k``); a list of ``(mechanism, count)`` of
            any kinds; or a list of parsed specs
            (:class:`~dpcompose_exact.regions.specs.MechanismKind`, each with its count),
            each built by its family in one call
            (:func:`dpcompose_exact.mechanisms.families.build`).
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
    options = ComposeOptions(
        how,
        closed_forms="streamed" if closed_forms == "streamed" else closed_forms is not False,
        digits=digits,
        memory_limit=max_memory,
        progress=progress,
        allow_bounds=how in (Method.AUTO, Method.BOUNDS),
        width=width,
        grid=_grid_width(grid),
    )
    result, route = compose_mechanisms(kinds, options)
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

    for m, _ in kinds:
        try:
            Mechanism.coerce(m)
        except TypeError:
            raise InvalidParameterError(
                f"method {how.value} is one of the paper's closed forms, for (eps, delta) "
                f"mechanisms only; got {m.describe()}: use method 'auto'"
            ) from None
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
    regions = [Mechanism.coerce(m).region for _, m in weighted]
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
    return compose(Mechanism.coerce(mechanism), k, method=Method.THEOREM2)


def theorem3_lattice(mechanism: Any, k: int) -> Composition:
    """Theorem 3: the closed form on the (u, v) lattice (two constraints)."""
    return compose(Mechanism.coerce(mechanism), k, method=Method.THEOREM3)


def _paper_bound(name: str, mechanism: Any, k: int) -> Composition:
    from .paper import theorems

    m = Mechanism.coerce(mechanism)
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
