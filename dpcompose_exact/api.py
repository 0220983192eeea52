"""The front door: compose mechanisms and query the result, exactly or certified.

A user needs three names: :class:`Mechanism` (a mechanism that satisfies one or several
(eps, delta)-DP constraints at once), :func:`compose` (k uses of it, or any list of
kinds), and the :class:`Composition` it returns, whose queries answer with
:class:`~dpcompose_exact.value.Value` objects -- exact where the composition is exact,
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

from collections.abc import Iterable, Sequence
from enum import Enum
from fractions import Fraction
from typing import Any

import flint

from .bounds import Bounded
from .certified import CertifiedRegion
from .curves import delta_value, epsilon_value
from .errors import InvalidParameterError, ResourceLimitError
from .genfunc import DEFAULT_MEMORY_LIMIT
from .mechanisms import compose_pairs
from .numbers import parse_rational
from .pld import canonical_pair
from .plot import curve_points, style
from .render import (
    LATEX_DIGITS,
    elem_closed_form,
    region_rows,
    to_csv,
    to_json,
    to_latex,
    to_table,
)
from .specs import parse_count
from .tradeoff import Region, dp_region, mixture_minkowski
from .value import Value

__all__ = [
    "Mechanism",
    "Composition",
    "Method",
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

#: Theorems 2 and 3 enumerate O(k^3) terms; above this k use the exact route (same region).
THEOREM_K_LIMIT = 60


class Method(str, Enum):
    """How a composition is computed (the CLI's ``--method`` strings are accepted too)."""

    AUTO = "auto"  #: exact when it fits the memory limit, else certified
    EXACT = "exact"  #: generating functions (docs/theory.md, section 3); refuse when too big
    CERTIFIED = "certified"  #: exact structure, Arb-ball masses (large k)
    THEOREM2 = "theorem2"  #: Theorem 2's mixture form (two constraints)
    THEOREM3 = "theorem3"  #: Theorem 3's lattice closed form (two constraints)
    BOUNDS = "bounds"  #: certified two-sided bounds of delta(eps), eps(delta) (any structure)

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value: Method | str) -> Method:
        """A Method from itself or its string (``"pld"`` is an alias of ``"exact"``)."""
        if isinstance(value, cls):
            return value
        text = str(value).strip().lower()
        if text == "pld":
            return cls.EXACT
        try:
            return cls(text)
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise InvalidParameterError(
                f"unknown method {value!r}; choose one of {names}"
            ) from None


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
        if not isinstance(region, Region):
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
        return _region_constraints(self._region)

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

    def to_dict(self) -> dict[str, Any]:
        """``{"constraints": [[eps, delta], ...]}`` with exact strings."""
        return {"constraints": [list(p) for p in self.pairs]}

    def __repr__(self) -> str:
        return f"Mechanism({[p for p in self.pairs]!r})"

    # -- exports (dpcompose_exact.export) --------------------------------------------------
    def to_dp_accounting(self, value_discretization_interval: float = 1e-4) -> Any:
        """A pessimistic ``dp_accounting`` ``PrivacyLossDistribution`` of this mechanism."""
        from .export import to_dp_accounting

        return to_dp_accounting(self._region, value_discretization_interval)

    def to_prv(self) -> Any:
        """A ``prv_accountant.PrivacyRandomVariable`` of this mechanism's exact pair."""
        from .export import to_prv

        return to_prv(self._region)

    def to_opendp(self) -> Any:
        """An OpenDP ``PrivacyProfile`` whose delta(eps) is never below the exact one."""
        from .export import to_opendp

        return to_opendp(self._region)


def _region_constraints(region: Region | CertifiedRegion) -> list[tuple[Value, Value]]:
    dom = region.domain
    out = []
    if isinstance(region, CertifiedRegion):
        for loss, ball in zip(region.losses, region.deltas):
            out.append((Value.from_loss(dom, loss), Value.from_ball(ball)))
        return out
    for loss, d in region.constraints:
        out.append(
            (
                Value.from_loss(dom, loss),
                Value.from_qz(dom, d, closed_form=lambda d=d: elem_closed_form(dom, d)),
            )
        )
    return out


def _as_mechanism(m: Any) -> Mechanism:
    if isinstance(m, Mechanism):
        return m
    if isinstance(m, (list, tuple)) and len(m) == 2 and not isinstance(m[0], (list, tuple)):
        return Mechanism.dp(*m)  # one (eps, delta) pair
    if isinstance(m, (list, tuple)):
        return Mechanism(m)
    raise TypeError(f"expected a Mechanism or a list of (eps, delta) pairs, got {type(m).__name__}")


def _as_kinds(mechanisms: Any, k: Any) -> list[tuple[Mechanism, int]]:
    """Normalise the inputs of :func:`compose` into merged ``(Mechanism, count)`` kinds."""
    if isinstance(mechanisms, Mechanism):
        if k is None:
            raise InvalidParameterError("compose(mechanism, k): k is missing")
        kinds = [(mechanisms, _count(k, "k", positive=True))]
    elif (
        isinstance(mechanisms, (list, tuple))
        and mechanisms
        and all(
            isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], Mechanism)
            for item in mechanisms
        )
    ):
        if k is not None:
            raise InvalidParameterError(
                "compose([(mechanism, count), ...]) gives each kind its own count; "
                "do not pass k as well"
            )
        kinds = [(m, _count(n, "count")) for m, n in mechanisms]
    elif isinstance(mechanisms, (list, tuple)):
        if k is None:
            raise InvalidParameterError(
                "compose(pairs, k): k is missing (or pass [(Mechanism, count), ...])"
            )
        kinds = [(Mechanism(mechanisms), _count(k, "k", positive=True))]
    else:
        raise TypeError(
            "compose takes a Mechanism and k, a list of (eps, delta) pairs and k, or a list "
            f"of (Mechanism, count); got {type(mechanisms).__name__}"
        )
    merged: dict[Mechanism, int] = {}
    for m, n in kinds:
        merged[m] = merged.get(m, 0) + n
    out = [(m, n) for m, n in merged.items() if n]
    if not out:
        raise InvalidParameterError("nothing to compose: every count is 0")
    return out


def _count(value: Any, what: str, positive: bool = False) -> int:
    if isinstance(value, float):
        raise TypeError(f"{what} = {value!r} is a float; pass an int")
    n = parse_count(value, what)
    if positive and n < 1:
        raise InvalidParameterError(f"{what} = {n} must be a positive integer (k >= 1)")
    return n


# ---------------------------------------------------------------------------------------
# Compositions
# ---------------------------------------------------------------------------------------


class Composition:
    """The privacy region of a composition, exact or certified, behind one interface.

    Attributes:
        kinds: ``((Mechanism, count), ...)`` that were composed (empty for regions that
            the paper's bounds produce without a mechanism list).
        method: the route that computed it (``"exact"``, ``"certified"``, ``"theorem2"``...).
        why: one sentence saying why that route was taken.
    """

    __slots__ = ("_region", "kinds", "method", "why", "_cache")

    def __init__(
        self,
        region: Region | CertifiedRegion,
        kinds: Sequence[tuple[Mechanism, int]],
        method: str,
        why: str = "",
    ) -> None:
        self._region = region
        self.kinds = tuple(kinds)
        self.method = method
        self.why = why
        self._cache: dict[Any, Any] = {}

    # -- what it is -----------------------------------------------------------------------
    @property
    def region(self) -> Region | CertifiedRegion:
        """The underlying region object (expert view)."""
        return self._region

    @property
    def is_exact(self) -> bool:
        """True when every delta is an exact closed form (False: certified balls or bounds)."""
        return isinstance(self._region, Region)

    @property
    def is_bounded(self) -> bool:
        """True when only certified two-sided bounds of delta(eps) and eps(delta) exist."""
        return isinstance(self._region, Bounded)

    def _listed(self) -> Region | CertifiedRegion:
        """The region with its constraint list (refused when only bounds exist)."""
        if isinstance(self._region, Bounded):
            raise ResourceLimitError(
                "this composition is known by certified two-sided bounds only (its exact "
                "structure is too large): ask for delta(eps) or epsilon(delta)"
            )
        return self._region

    @property
    def constraints(self) -> list[tuple[Value, Value]]:
        """The irredundant ``(eps, delta)`` list as Values, increasing eps.

        The region is the intersection of R(eps, delta) over the list.
        """
        if "constraints" not in self._cache:
            self._cache["constraints"] = _region_constraints(self._listed())
        return self._cache["constraints"]

    # -- queries --------------------------------------------------------------------------
    def delta(self, eps: Any) -> Value | list[Value]:
        """``delta(eps)``: the smallest delta with the composition (eps, delta)-DP.

        Args:
            eps: one exact epsilon (``"1"``, ``"log(3)"``, a Fraction...) or an iterable.
        """
        if _is_many(eps):
            return [self.delta(e) for e in eps]  # type: ignore[misc]
        if isinstance(self._region, Bounded):
            return self._region.delta(_plain(eps))
        return delta_value(self._region, _plain(eps))

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """``eps(delta)``: the smallest eps with the composition (eps, delta)-DP."""
        if _is_many(delta):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        if isinstance(self._region, Bounded):
            return self._region.epsilon(_plain(delta))
        return epsilon_value(self._region, _plain(delta))

    def tradeoff(self, t: Any) -> Value | list[Value]:
        """The trade-off function ``f(t)``: the least type II error at type I error ``t``."""
        if _is_many(t):
            return [self.tradeoff(x) for x in t]
        q = parse_rational(t, "t")
        if not 0 <= q <= 1:
            raise InvalidParameterError(f"t = {t!r} is outside the valid range [0, 1]")
        region = self._listed()
        if isinstance(region, Region):
            return Value.from_qz(region.domain, region(q))
        return Value.from_ball(_certified_tradeoff(region, q))

    # -- output ---------------------------------------------------------------------------
    def rows(
        self, digits: int = 30, exact: bool | None = None, rounding: str | None = "up"
    ) -> list[dict[str, Any]]:
        """One dict per constraint (``epsilon``, ``delta``, ``..._decimal``), increasing eps.

        Args:
            digits: significant digits of the certified decimals.
            exact: include the closed forms (default: when the composition is exact).
            rounding: the direction of the ``..._rounded`` decimals: ``"up"`` (never below
                the exact value), ``"nearest"`` or ``"down"``; None leaves them out.
        """
        exact = self.is_exact if exact is None else exact
        return region_rows(self._listed(), digits=digits, exact=exact, rounding=rounding)

    def to_dict(
        self, digits: int = 30, exact: bool | None = None, rounding: str = "up"
    ) -> dict[str, Any]:
        """The JSON object ``dpcompose compose --format json`` prints for this composition.

        ``mechanisms`` lists each kind's constraints in canonical exact form; ``rounding``
        the direction of the rows' ``..._rounded`` decimals (the ``..._decimal`` ones keep
        every certified digit).
        """
        out: dict[str, Any] = {
            "command": "compose",
            "mechanisms": [{**m.to_dict(), "count": n} for m, n in self.kinds],
            "method": self.method,
            "certified": not self.is_exact,
            "rounding": rounding,
        }
        out["region"] = self.rows(digits, exact, rounding)
        return out

    def to_json(self, digits: int = 30, exact: bool | None = None, rounding: str = "up") -> str:
        """:meth:`to_dict` as JSON text."""
        return to_json(self.to_dict(digits, exact, rounding)) + "\n"

    def to_csv(self, digits: int = 30, exact: bool | None = None, rounding: str = "up") -> str:
        """The region as CSV (one row per constraint), as ``--format csv`` prints it.

        The decimal columns are rounded in the direction ``rounding`` (default up: never
        below the exact values), named in the last column.
        """
        return to_csv(self.rows(digits, exact, rounding), rounding=rounding)

    def to_latex(
        self,
        digits: int = LATEX_DIGITS,
        caption: str = "",
        label: str = "",
        exact: str = "auto",
        rounding: str = "up",
    ) -> str:
        r"""The region as a booktabs LaTeX table, as ``--format latex`` prints it.

        Args:
            digits: significant digits of the decimals.
            caption: ``\caption`` text (none when empty).
            label: ``\label`` key (none when empty).
            exact: the exact-delta column: ``auto``, ``always`` or ``never``.
            rounding: direction of the printed decimals (default ``up``: never below the
                exact values; a footnote line says so).
        """
        return to_latex(
            self.rows(digits, rounding=rounding),
            caption=caption,
            label=label,
            exact=exact,
            rounding=rounding,
        )

    def to_table(self, digits: int = 30, exact: str = "auto", rounding: str = "up") -> str:
        """The region as an aligned text table, as the default ``--format table`` prints it.

        The decimals are rounded in the direction ``rounding`` (default up), and a note
        under the title says so.
        """
        return to_table(
            self.rows(digits, rounding=rounding),
            title=f"# {self._label()}; method {self.method}",
            exact=exact if self.is_exact else "never",
            rounding=rounding,
        )

    def plot(self, ax: Any = None, label: str | None = None, **kwargs: Any) -> Any:
        """Draw the trade-off curve on a matplotlib ``ax`` (a new figure when None).

        Args:
            ax: matplotlib axes to draw on; None makes a new square figure.
            label: legend label (default: what was composed).
            **kwargs: line keyword arguments (default: the package's palette, first style).

        Returns:
            The axes.
        """
        from .plot import AXIS_LABELS

        ts, fs = self._curve_floats()
        if ax is None:
            from matplotlib.figure import Figure

            # constrained layout: savefig keeps the axis labels (nothing clipped)
            ax = Figure(figsize=(4, 4), layout="constrained").add_subplot()
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
            ax.set_aspect("equal")
        if not ax.get_xlabel():  # label the axes as the CLI does, unless the caller did
            ax.set_xlabel(AXIS_LABELS[0])
        if not ax.get_ylabel():
            ax.set_ylabel(AXIS_LABELS[1])
        index = len(ax.get_lines())  # the next colour and line style of the palette
        ax.plot(ts, fs, label=label or self._label(), **{**style(index), **kwargs})
        ax.legend(fontsize=7, loc="best", framealpha=0.9)
        return ax

    def _curve_floats(self) -> tuple[list[float], list[float]]:
        """Points of ``f`` as floats (drawing only): exact vertices, or a fine grid."""
        if self.is_exact:
            return curve_points(self._region)
        import math

        # eps beyond 700 would overflow exp(); its line is vertical at t = 0 anyway
        cons = [(min(float(e), 700.0), float(d)) for e, d in self.constraints]

        def f(t: float) -> float:
            best = 0.0
            for e, d in cons:
                best = max(best, 1 - d - math.exp(e) * t, math.exp(-e) * (1 - d - t))
            return best

        n = 4000
        ts = [i / n for i in range(n + 1)]
        return ts, [f(t) for t in ts]

    def _label(self) -> str:
        parts = [f"{n} x {m!r}" for m, n in self.kinds]
        return ", ".join(parts) or self.method

    # -- comparisons ----------------------------------------------------------------------
    def __le__(self, other: Composition) -> bool:
        """Inclusion of regions: ``self`` is at least as private as ``other``."""
        if not isinstance(other, Composition):
            return NotImplemented
        if self.is_exact and other.is_exact:
            return self._region <= other._region
        return all(self.delta(e) <= d for e, d in other.constraints)

    def __ge__(self, other: Composition) -> bool:
        if not isinstance(other, Composition):
            return NotImplemented
        return other <= self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Composition):
            return NotImplemented
        if self.is_exact and other.is_exact:
            return self._region == other._region
        return self is other

    def __hash__(self) -> int:
        return hash(self._region) if self.is_exact else id(self)

    def __repr__(self) -> str:
        if isinstance(self._region, Bounded):
            return f"Composition({self._label()}; method={self.method}, certified bounds)"
        kind = "exact" if self.is_exact else "certified"
        n = len(self._region.losses)
        return f"Composition({self._label()}; method={self.method}, {kind}, {n} constraints)"

    def __str__(self) -> str:
        if isinstance(self._region, Bounded):
            return repr(self)
        return self.to_table(digits=12)

    # -- exports (dpcompose_exact.export) --------------------------------------------------
    def to_dp_accounting(self, value_discretization_interval: float = 1e-4) -> Any:
        """A pessimistic ``dp_accounting`` ``PrivacyLossDistribution`` of this composition.

        Composing it further in dp_accounting (with Gaussian events, say) stays sound.
        """
        from .export import to_dp_accounting

        return to_dp_accounting(self._region, value_discretization_interval)

    def to_prv(self) -> Any:
        """A ``prv_accountant.PrivacyRandomVariable`` of this composition's pair."""
        from .export import to_prv

        return to_prv(self._region)

    def to_opendp(self) -> Any:
        """An OpenDP ``PrivacyProfile`` whose delta(eps) is never below the exact one."""
        from .export import to_opendp

        return to_opendp(self._region)


def _plain(x: Any) -> Any:
    """A query point: exact Values are passed on as their closed form."""
    if isinstance(x, Value):
        if x.exact is None:
            raise TypeError("a certified Value is not an exact query point; pass its .exact")
        return x.exact
    return x


def _is_many(x: Any) -> bool:
    return not isinstance(x, (str, bytes, int, Fraction)) and isinstance(x, Iterable)


def _certified_tradeoff(region: CertifiedRegion, t: Fraction) -> flint.arb:
    """An enclosure of ``f(t) = max(0, 1 - d - e^l t, e^-l (1 - d - t))`` over the list."""
    dom = region.domain
    with flint.ctx.workprec(region.prec):
        tb = flint.arb(flint.fmpq(t.numerator, t.denominator))
        lo = hi = flint.arb(0)
        for loss, d in zip(region.losses, region.deltas):
            e = dom.loss_ball(loss, region.prec).exp()
            for val in (1 - d - e * tb, (1 - d - tb) / e):
                if val.lower() > lo:
                    lo = val.lower()
                if val.upper() > hi:
                    hi = val.upper()
        return lo.union(hi)


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
    closed_forms: bool | None = None,
    width: Any = None,
) -> Composition:
    """Compose mechanisms: ``compose(m, k)`` or ``compose([(m1, k1), (m2, k2), ...])``.

    Args:
        mechanisms: a :class:`Mechanism` (with ``k``), a list of ``(eps, delta)`` pairs
            (with ``k``), or a list of ``(Mechanism, count)``.
        k: the number of uses when one mechanism is given.
        method: ``auto`` (exact when it fits ``max_memory``, else certified), ``exact``,
            ``certified``, ``theorem2`` or ``theorem3`` (all exact routes agree exactly).
        digits: significant digits the certified route guarantees.
        max_memory: bytes the exact route may use (None: no limit).
        closed_forms: False when only certified decimals are needed: ``auto`` then takes
            the cheapest route that certifies every digit (``dpcompose_exact.routes``).
        width: relative width asked of certified two-sided bounds, when only bounds are
            possible (several incommensurate epsilons, very large lists); default 1e-6.

    Returns:
        A :class:`Composition`.

    Raises:
        InvalidParameterError: bad parameters (the message names the value and the range).
        ResourceLimitError: the exact route would not fit ``max_memory`` (``method="exact"``).
    """
    how = Method.parse(method)
    kinds = _as_kinds(mechanisms, k)
    if how in (Method.THEOREM2, Method.THEOREM3):
        if len(kinds) != 1:
            raise InvalidParameterError(f"method {how.value} composes one mechanism k times")
        m, n = kinds[0]
        if n > THEOREM_K_LIMIT:
            raise InvalidParameterError(
                f"method {how.value} enumerates O(k^3) terms; k = {n} is over its limit "
                f"{THEOREM_K_LIMIT}: use method='exact' (the same exact region)"
            )
        from . import theorems

        eps = [e for e, _ in m.pairs]
        delta = [d for _, d in m.pairs]
        fn = theorems.theorem2_mixture if how is Method.THEOREM2 else theorems.theorem3_lattice
        return Composition(fn(eps, delta, n), kinds, how.value, "asked for")
    region, used = compose_pairs(
        [(canonical_pair(m.region), n) for m, n in kinds],
        mode="exact" if how is Method.EXACT else how.value,
        digits=digits,
        memory_limit=max_memory,
        closed_forms=closed_forms is not False,
        allow_bounds=how in (Method.AUTO, Method.BOUNDS),
        width=width,
    )
    name = "exact" if used == "pld" else str(used)
    return Composition(region, kinds, name, getattr(used, "why", "") or "asked for")


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
    mechs: Sequence[tuple[Any, int]], max_memory: int | None = DEFAULT_MEMORY_LIMIT
) -> Composition:
    """Compose ``count`` uses of each pure ``eps``-DP mechanism: ``[(eps, count), ...]``."""
    if not mechs:
        raise InvalidParameterError("need at least one (eps, count) mechanism")
    kinds = [(Mechanism.dp(e), _count(n, "count")) for e, n in mechs]
    return compose(kinds, max_memory=max_memory, method=Method.EXACT)


def theorem1_closed_form(eps1: Any, x: int, eps2: Any, y: int) -> Composition:
    """Theorem 1 (Algorithm 1): ``x`` eps1-DP and ``y`` eps2-DP mechanisms, closed form."""
    from . import theorems

    region = theorems.theorem1_closed_form(eps1, x, eps2, y)
    kinds = [(Mechanism.dp(eps1), x), (Mechanism.dp(eps2), y)]
    return Composition(region, [(m, n) for m, n in kinds if n], "theorem1", "asked for")


def theorem2_mixture(mechanism: Any, k: int) -> Composition:
    """Theorem 2: the mixture form of the k-fold composition (two constraints)."""
    return compose(_as_mechanism(mechanism), k, method=Method.THEOREM2)


def theorem3_lattice(mechanism: Any, k: int) -> Composition:
    """Theorem 3: the closed form on the (u, v) lattice (two constraints)."""
    return compose(_as_mechanism(mechanism), k, method=Method.THEOREM3)


def _paper_bound(name: str, mechanism: Any, k: int) -> Composition:
    from . import theorems

    m = _as_mechanism(mechanism)
    fn = getattr(theorems, name)
    if name == "kov_composition":
        if len(m.pairs) != 1:
            raise InvalidParameterError(
                f"kov_composition composes one (eps, delta) constraint; got {len(m.pairs)}"
            )
        region = fn(m.pairs[0][0], m.pairs[0][1], _count(k, "k", positive=True))
    else:
        eps = [e for e, _ in m.pairs]
        delta = [d for _, d in m.pairs]
        region = fn(eps, delta, _count(k, "k", positive=True))
    return Composition(region, [(m, _count(k, "k", positive=True))], name, "asked for")


def kov_composition(mechanism: Any, k: int) -> Composition:
    """Kairouz-Oh-Viswanath: the exact k-fold composition of one (eps, delta) constraint."""
    return _paper_bound("kov_composition", mechanism, k)


def remark1_bound(mechanism: Any, k: int) -> Composition:
    """Remark 1: the intersection of the two KOV compositions (an outer bound)."""
    return _paper_bound("remark1_bound", mechanism, k)


def remark2_bound(mechanism: Any, k: int) -> Composition:
    """Remark 2 (Ghazi-Issa): a total-variation-based outer bound."""
    return _paper_bound("remark2_bound", mechanism, k)
