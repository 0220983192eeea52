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
from fractions import Fraction
from typing import Any

from .bounds import table_rows
from .curves import ExactResult, PrivacyResult, listed_result
from .errors import InvalidParameterError
from .genfunc import DEFAULT_MEMORY_LIMIT
from .numbers.convert import parse_delta, parse_eps, parse_t
from .numbers.format import latex_input, readable_exact
from .pld import canonical_pair
from .plot import curve_points, style
from .render import LATEX_DIGITS, to_csv, to_json, to_latex, to_table
from .routes import Method, compose_routed
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
        if listed_result(region).kind != "exact":  # TypeError for what is not a region
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

    def to_dict(self) -> dict[str, Any]:
        """``{"constraints": [[eps, delta], ...]}`` with exact strings."""
        return {"constraints": [list(p) for p in self.pairs]}

    def __repr__(self) -> str:
        return f"Mechanism({[p for p in self.pairs]!r})"

    # -- exports (dpcompose_exact.export) --------------------------------------------------
    def to_dp_accounting(self, value_discretization_interval: float = 1e-4) -> Any:
        """A pessimistic ``dp_accounting`` ``PrivacyLossDistribution`` of this mechanism."""
        from .export import to_dp_accounting

        return to_dp_accounting(ExactResult(self._region), value_discretization_interval)

    def to_prv(self) -> Any:
        """A ``prv_accountant.PrivacyRandomVariable`` of this mechanism's exact pair."""
        from .export import to_prv

        return to_prv(ExactResult(self._region))

    def to_opendp(self) -> Any:
        """An OpenDP ``PrivacyProfile`` whose delta(eps) is never below the exact one."""
        from .export import to_opendp

        return to_opendp(ExactResult(self._region))


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
        kinds = [(mechanisms, parse_count(k, "k", positive=True))]
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
        kinds = [(m, parse_count(n, "count")) for m, n in mechanisms]
    elif isinstance(mechanisms, (list, tuple)):
        if k is None:
            raise InvalidParameterError(
                "compose(pairs, k): k is missing (or pass [(Mechanism, count), ...])"
            )
        kinds = [(Mechanism(mechanisms), parse_count(k, "k", positive=True))]
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


# ---------------------------------------------------------------------------------------
# Compositions
# ---------------------------------------------------------------------------------------


class Composition:
    """The privacy region of a composition, exact, certified or bounded, behind one interface.

    Every query goes to the one result interface
    (:class:`~dpcompose_exact.curves.PrivacyResult`); the query points are parsed here,
    once.  The command line prints through :meth:`to_json`, :meth:`to_csv`,
    :meth:`to_latex` and :meth:`to_table`, so both print the same bytes.

    Attributes:
        kinds: ``((Mechanism, count), ...)`` that were composed (empty for regions that
            the paper's bounds produce without a mechanism list).
        method: the :class:`Method` that computed it (``exact``, ``certified``,
            ``bounds``, ``theorem2``...), or the name of a paper's bound.
        why: one sentence saying why that route was taken.
        command: what made it: ``compose`` or ``heterogeneous`` (the JSON ``command``).
    """

    __slots__ = ("_result", "kinds", "method", "why", "command")

    def __init__(
        self,
        result: PrivacyResult,
        kinds: Sequence[tuple[Mechanism, int]],
        method: Method | str,
        why: str = "asked for",
        command: str = "compose",
    ) -> None:
        self._result = result
        self.kinds = tuple(kinds)
        self.method = method
        self.why = why
        self.command = command

    # -- what it is -----------------------------------------------------------------------
    @property
    def region(self) -> Any:
        """The underlying region object (expert view)."""
        return self._result.region

    @property
    def result(self) -> PrivacyResult:
        """The result object behind the interface (expert view)."""
        return self._result

    @property
    def is_exact(self) -> bool:
        """True when every delta is an exact closed form (False: certified balls or bounds)."""
        return self._result.kind == "exact"

    @property
    def is_bounded(self) -> bool:
        """True when only certified two-sided bounds of delta(eps) and eps(delta) exist."""
        return self._result.kind == "bounds"

    @property
    def constraints(self) -> list[tuple[Value, Value]]:
        """The irredundant ``(eps, delta)`` list as Values, increasing eps.

        The region is the intersection of R(eps, delta) over the list.
        """
        return self._result.constraints()

    # -- queries --------------------------------------------------------------------------
    def delta(self, eps: Any) -> Value | list[Value]:
        """``delta(eps)``: the smallest delta with the composition (eps, delta)-DP.

        Args:
            eps: one exact epsilon (``"1"``, ``"log(3)"``, a Fraction...) or an iterable.
        """
        if _is_many(eps):
            return [self.delta(e) for e in eps]  # type: ignore[misc]
        return self._result.delta(parse_eps(_plain(eps)))

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """``eps(delta)``: the smallest eps with the composition (eps, delta)-DP."""
        if _is_many(delta):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        return self._result.epsilon(parse_delta(_plain(delta)))

    def tradeoff(self, t: Any) -> Value | list[Value]:
        """The trade-off function ``f(t)``: the least type II error at type I error ``t``."""
        if _is_many(t):
            return [self.tradeoff(x) for x in t]
        return self._result.tradeoff(parse_t(t))

    # -- output ---------------------------------------------------------------------------
    def rows(
        self, digits: int = 30, exact: bool = True, structured: bool = True
    ) -> list[dict[str, Any]]:
        """One dict per constraint (``epsilon``, ``delta``, ``..._decimal``), increasing eps.

        Args:
            digits: significant digits of the certified decimals.
            exact: include the closed forms that exist (certified results have exact
                epsilons only).
            structured: with ``exact``, add ``delta_structured`` (machine-readable form).
        """
        return self._result.rows(digits, exact, structured)

    def curve_rows(
        self, delta_at: Any = None, epsilon_at: Any = None, digits: int = 30, exact: bool = True
    ) -> list[dict[str, Any]]:
        """Rows of a privacy curve, as ``dpcompose delta/epsilon`` print them.

        ``delta_at`` (eps values) gives ``delta(eps)``; ``epsilon_at`` (deltas) gives
        ``eps(delta)``; give exactly one of the two.
        """
        command, points = _query(delta_at, epsilon_at)
        if command == "delta":
            parsed = [parse_eps(_plain(e)) for e in points]
        else:
            parsed = [parse_delta(_plain(d)) for d in points]
        return self._result.curve_rows(command, parsed, digits, exact)

    def to_dict(
        self,
        digits: int = 30,
        exact: bool = True,
        *,
        delta_at: Any = None,
        epsilon_at: Any = None,
    ) -> dict[str, Any]:
        """The JSON object ``dpcompose compose|delta|epsilon --format json`` prints.

        ``mechanisms`` lists each kind's constraints in canonical exact form.  With
        ``delta_at`` (eps values) or ``epsilon_at`` (deltas) the object holds that privacy
        curve under ``curve``; otherwise the region under ``region``.
        """
        out: dict[str, Any] = {
            "command": self.command,
            "mechanisms": [{**m.to_dict(), "count": n} for m, n in self.kinds],
            "method": str(self.method),
            "why": self.why,
            "certified": not self.is_exact,
        }
        if delta_at is None and epsilon_at is None:
            out["region"] = self.rows(digits, exact)
        else:
            out["command"] = "delta" if delta_at is not None else "epsilon"
            out["curve"] = self.curve_rows(delta_at, epsilon_at, digits, exact)
        return out

    def to_json(
        self,
        digits: int = 30,
        exact: bool = True,
        *,
        delta_at: Any = None,
        epsilon_at: Any = None,
    ) -> str:
        """:meth:`to_dict` as JSON text."""
        return to_json(self.to_dict(digits, exact, delta_at=delta_at, epsilon_at=epsilon_at)) + "\n"

    def to_csv(
        self,
        digits: int = 30,
        exact: bool = True,
        *,
        delta_at: Any = None,
        epsilon_at: Any = None,
    ) -> str:
        """The region (or a curve) as CSV, one row per constraint or point."""
        if delta_at is None and epsilon_at is None:
            return to_csv(self.rows(digits, exact, structured=False))
        return to_csv(self.curve_rows(delta_at, epsilon_at, digits, exact))

    def to_latex(
        self,
        digits: int = LATEX_DIGITS,
        caption: str | None = None,
        label: str = "",
        exact: str = "auto",
        *,
        delta_at: Any = None,
        epsilon_at: Any = None,
        notes: list[str] | None = None,
    ) -> str:
        r"""The region (or a curve) as a booktabs LaTeX table, as ``--format latex`` prints it.

        Args:
            digits: significant digits of the decimals.
            caption: ``\caption`` text (default: a description of the composition; ``""``
                for none).
            label: ``\label`` key (none when empty).
            exact: the exact column: ``auto``, ``always`` or ``never``.
            delta_at: eps values: print ``delta(eps)`` there instead of the region.
            epsilon_at: deltas: print ``eps(delta)`` there instead of the region.
            notes: a list that receives the notes of the layout (a column left out...).
        """
        curve = delta_at is not None or epsilon_at is not None
        if curve:
            rows = _cells(self.curve_rows(delta_at, epsilon_at, digits, exact != "never"))
            quantity = "\\delta(\\varepsilon)" if delta_at is not None else "\\varepsilon(\\delta)"
            what, head = f"Privacy curve ${quantity}$", "$\\delta$"
        else:
            rows = self.rows(digits, exact != "never", structured=False)
            what, head = "Exact privacy region $\\delta(\\varepsilon)$", "$\\delta(\\varepsilon)$"
        cap = self._caption(what) if caption is None else caption
        return to_latex(
            rows,
            caption=cap,
            label=label,
            exact=exact,
            comment=self._title(delta_at, epsilon_at)[2:],
            notes=notes if notes is not None else [],
            delta_head=head,
        )

    def to_table(
        self,
        digits: int = 30,
        exact: str = "auto",
        *,
        delta_at: Any = None,
        epsilon_at: Any = None,
    ) -> str:
        """The region (or a curve) as an aligned text table, as ``--format table`` prints it."""
        if delta_at is None and epsilon_at is None:
            rows = self.rows(digits, exact != "never", structured=False)
        else:
            rows = _cells(self.curve_rows(delta_at, epsilon_at, digits, exact != "never"))
        return to_table(rows, title=self._title(delta_at, epsilon_at), exact=exact)

    def _title(self, delta_at: Any, epsilon_at: Any) -> str:
        if delta_at is None and epsilon_at is None:
            return (
                f"# composition of {self._label()}; method {self.method}; "
                "region = intersection of R(epsilon, delta) over the rows"
            )
        what = "delta(eps)" if delta_at is not None else "eps(delta)"
        return (
            f"# {what} of the composition of {self._label()}; method {self.method} "
            f"({self._result.describe()})"
        )

    def _caption(self, what: str) -> str:
        def pair(e: str, d: str) -> str:
            return f"$({latex_input(e)}, {latex_input(d)})$"

        parts = []
        for m, n in self.kinds:
            cons = " and ".join(pair(readable_exact(e), readable_exact(d)) for e, d in m.pairs)
            parts.append(f"{n} uses of a mechanism satisfying {cons}-DP")
        if not parts:
            return f"{what} ({self.method})."
        return f"{what} of the composition of " + "; ".join(parts) + "."

    def plot(self, ax: Any = None, label: str | None = None, **kwargs: Any) -> Any:
        """Draw the trade-off curve on a matplotlib ``ax`` (a new figure when None).

        Args:
            ax: matplotlib axes to draw on; None makes a new square figure.
            label: legend label (default: what was composed).
            **kwargs: line keyword arguments (default: the package's palette, first style).

        Returns:
            The axes.
        """
        ts, fs = self._curve_floats()
        if ax is None:
            from .optional import require

            figure = require("matplotlib.figure", "Composition.plot()")
            ax = figure.Figure(figsize=(4, 4)).add_subplot()
            ax.set_xlabel("type I error $t$")
            ax.set_ylabel("type II error $f(t)$")
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
            ax.set_aspect("equal")
        ax.plot(ts, fs, label=label or self._label(), **{**style(0), **kwargs})
        return ax

    def _curve_floats(self) -> tuple[list[float], list[float]]:
        """Points of ``f`` as floats (drawing only): exact vertices, or a fine grid."""
        if self.is_exact:
            return curve_points(self.region)
        return self._result.curve_floats()

    def _label(self) -> str:
        parts = []
        for m, n in self.kinds:
            text = "+".join(f"({readable_exact(e)}, {readable_exact(d)})" for e, d in m.pairs)
            parts.append(f"{n} x {text}")
        return ", ".join(parts) or str(self.method)

    # -- comparisons ----------------------------------------------------------------------
    def __le__(self, other: Composition) -> bool:
        """Inclusion of regions: ``self`` is at least as private as ``other``."""
        if not isinstance(other, Composition):
            return NotImplemented
        if self.is_exact and other.is_exact:
            return self.region <= other.region
        return all(self.delta(e) <= d for e, d in other.constraints)

    def __ge__(self, other: Composition) -> bool:
        if not isinstance(other, Composition):
            return NotImplemented
        return other <= self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Composition):
            return NotImplemented
        if self.is_exact and other.is_exact:
            return self.region == other.region
        return self is other

    def __hash__(self) -> int:
        return hash(self.region) if self.is_exact else id(self)

    def __repr__(self) -> str:
        return f"Composition({self._label()}; method={self.method}, {self._result.describe()})"

    def __str__(self) -> str:
        if self.is_bounded:
            return repr(self)
        return self.to_table(digits=12)

    # -- exports (dpcompose_exact.export) --------------------------------------------------
    def to_dp_accounting(self, value_discretization_interval: float = 1e-4) -> Any:
        """A pessimistic ``dp_accounting`` ``PrivacyLossDistribution`` of this composition.

        Composing it further in dp_accounting (with Gaussian events, say) stays sound.
        """
        from .export import to_dp_accounting

        return to_dp_accounting(self._result, value_discretization_interval)

    def to_prv(self) -> Any:
        """A ``prv_accountant.PrivacyRandomVariable`` of this composition's pair."""
        from .export import to_prv

        return to_prv(self._result)

    def to_opendp(self) -> Any:
        """An OpenDP ``PrivacyProfile`` whose delta(eps) is never below the exact one."""
        from .export import to_opendp

        return to_opendp(self._result)


def _query(delta_at: Any, epsilon_at: Any) -> tuple[str, list[Any]]:
    if (delta_at is None) == (epsilon_at is None):
        raise InvalidParameterError(
            "give exactly one of delta_at (eps values) and epsilon_at (delta values)"
        )
    points = delta_at if delta_at is not None else epsilon_at
    if not _is_many(points):
        points = [points]
    return ("delta" if delta_at is not None else "epsilon"), list(points)


def _cells(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows for a text or LaTeX table: enclosures (bounds) shown as ``[lower, upper]``."""
    if any("epsilon_decimal" not in r or "delta_decimal" not in r for r in rows):
        return table_rows(rows)
    return rows


def _plain(x: Any) -> Any:
    """A query point: exact Values are passed on as their closed form."""
    if isinstance(x, Value):
        if x.exact is None:
            raise TypeError("a certified Value is not an exact query point; pass its .exact")
        return x.exact
    return x


def _is_many(x: Any) -> bool:
    return not isinstance(x, (str, bytes, int, Fraction)) and isinstance(x, Iterable)


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
    progress: Any = None,
) -> Composition:
    """Compose mechanisms: ``compose(m, k)`` or ``compose([(m1, k1), (m2, k2), ...])``.

    Args:
        mechanisms: a :class:`Mechanism` (with ``k``), a list of ``(eps, delta)`` pairs
            (with ``k``), or a list of ``(Mechanism, count)``.
        k: the number of uses when one mechanism is given.
        method: a :class:`Method`: ``auto`` (exact when it fits ``max_memory``, else
            certified, else bounds), ``exact``, ``certified``, ``bounds``, or the paper's
            closed forms ``theorem1`` (two pure-DP kinds), ``theorem2``, ``theorem3``
            (one kind with two constraints); all exact routes agree exactly.
        digits: significant digits the certified route guarantees.
        max_memory: bytes the exact route may use (None: no limit).
        closed_forms: False when only certified decimals are needed: ``auto`` then takes
            the cheapest route that certifies every digit (``dpcompose_exact.routes``).
        width: relative width asked of certified two-sided bounds, when only bounds are
            possible (several incommensurate epsilons, very large lists); default 1e-6.
        progress: a callback ``progress(done, total)`` of the certified route (the
            command line draws a bar on stderr).

    Returns:
        A :class:`Composition`.

    Raises:
        InvalidParameterError: bad parameters (the message names the value and the range).
        ResourceLimitError: the exact route would not fit ``max_memory`` (``method="exact"``).
    """
    how = Method.parse(method)
    kinds = _as_kinds(mechanisms, k)
    if not how.is_route:
        return _closed_form(how, kinds)
    result, route = compose_routed(
        [(canonical_pair(m.region), n) for m, n in kinds],
        how,
        closed_forms=closed_forms is not False,
        digits=digits,
        memory_limit=max_memory,
        progress=progress,
        allow_bounds=how in (Method.AUTO, Method.BOUNDS),
        width=width,
    )
    return Composition(result, kinds, route.method, route.why)


def _closed_form(how: Method, kinds: list[tuple[Mechanism, int]]) -> Composition:
    """The paper's closed forms (Theorems 1-3) as a :class:`Composition`."""
    from . import theorems

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
    method: Method | str = Method.EXACT,
) -> Composition:
    """Compose ``count`` uses of each pure ``eps``-DP mechanism: ``[(eps, count), ...]``.

    ``method`` is ``exact`` (generating functions) or ``theorem1`` (the paper's closed
    form, two kinds).
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
    from . import theorems

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
