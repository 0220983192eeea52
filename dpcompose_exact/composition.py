"""The one result type of the front door: :class:`Composition`.

A :class:`Composition` holds a result behind the one interface
(:class:`~dpcompose_exact.engines.results.PrivacyResult`: exact, certified or bounded) and answers
every query through it, parsing each query point once
(:mod:`dpcompose_exact.numbers.convert`).  The command line prints through its
``to_json``, ``to_csv``, ``to_latex`` and ``to_table``, so both print the same bytes; each
of them takes one :class:`~dpcompose_exact.presentation.formats.OutputOptions` (or its
fields as keywords) and hands it to the format's writer in :mod:`.presentation`.
:func:`dpcompose_exact.compose` and the paper's named results return it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

from .engines import summaries
from .engines.finiteroutes import Method
from .engines.results import Exactness, PrivacyResult
from .errors import InvalidParameterError, UnsupportedQueryError
from .numbers.convert import parse_delta, parse_eps, parse_t
from .numbers.value import Value
from .presentation.formats import OutputOptions, method_options, output_format
from .presentation.naming import composition_name
from .presentation.plot import (
    AXIS_LABELS,
    curve_points,
    draw_profile_band,
    listed_points,
    profile_band,
    style,
)
from .presentation.rows import curve_rows, region_rows

__all__ = ["Composition"]


class Composition:
    """The privacy region of a composition, exact, certified or bounded, behind one interface.

    Every query goes to the one result interface
    (:class:`~dpcompose_exact.engines.results.PrivacyResult`); the query points are parsed here,
    once.  The command line prints through :meth:`to_json`, :meth:`to_csv`,
    :meth:`to_latex` and :meth:`to_table`, so both print the same bytes.

    Attributes:
        kinds: ``((Mechanism, count), ...)`` that were composed (empty for regions that
            the paper's bounds produce without a mechanism list).
        method: the :class:`Method` that computed it (``exact``, ``certified``,
            ``bounds``, ``theorem2``...), or the name of a paper's bound.
        command: what made it: ``compose`` or ``heterogeneous`` (the JSON ``command``).
    """

    __slots__ = ("_result", "kinds", "method", "_why", "command")

    def __init__(
        self,
        result: PrivacyResult,
        kinds: Sequence[tuple[Any, int]],
        method: Method | str,
        why: str = "asked for",
        command: str = "compose",
    ) -> None:
        self._result = result
        self.kinds = tuple(kinds)
        self.method = method
        self._why = why
        self.command = command

    @property
    def why(self) -> str:
        """One sentence saying why the route was taken, and what answered the queries so far.

        A result that chooses its route per query (the far tails of a subsampled Gaussian:
        the loss grid or the bracket) adds what answered (its ``answered_note``).
        """
        note = getattr(self._result, "answered_note", None)
        return self._why + (note() if note is not None else "")

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
        return self._result.kind is Exactness.EXACT

    @property
    def has_region(self) -> bool:
        """Whether the result has a constraint list (False: curves only, e.g. noise)."""
        try:
            self._result.constraints()
        except UnsupportedQueryError:
            return False
        return True

    @property
    def is_bounded(self) -> bool:
        """True when only certified two-sided bounds of delta(eps) and eps(delta) exist."""
        return self._result.kind is Exactness.BOUNDS

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
        return self._result.delta(parse_eps(_plain(eps))).probability()

    def epsilon(self, delta: Any) -> Value | list[Value]:
        """``eps(delta)``: the smallest eps with the composition (eps, delta)-DP."""
        if _is_many(delta):
            return [self.epsilon(d) for d in delta]  # type: ignore[misc]
        return self._result.epsilon(parse_delta(_plain(delta)))

    def tradeoff(self, t: Any) -> Value | list[Value]:
        """The trade-off function ``f(t)``: the least type II error at type I error ``t``."""
        if _is_many(t):
            return [self.tradeoff(x) for x in t]
        return self._result.tradeoff(parse_t(t)).probability()

    # -- summaries (engines.summaries; docs/theory.md, section 20) ------------------------
    def renyi(self, alpha: Any) -> Value:
        """The Rényi divergence of order ``alpha > 1`` (the RDP epsilon), certified.

        Exact for finite pairs, Gaussian and Laplace noise; ``summaries.INFINITY``
        (closed form ``oo``) when a pair has a leak.  A paper's outer bound is summarised
        through its own region.  See :func:`~dpcompose_exact.engines.summaries.renyi`.
        """
        return summaries.renyi(self._summary_kinds(), alpha)

    def renyi_curve(self, orders: Iterable[Any]) -> list[tuple[Fraction, Value]]:
        """``[(alpha, renyi(alpha)), ...]`` for each order."""
        return summaries.renyi_curve(self._summary_kinds(), list(orders))

    def gdp_mu(self) -> Value:
        """The smallest ``mu`` with the composition ``mu``-GDP, certified.

        Gaussian noise, Poisson-subsampled or not: exactly ``sqrt(sum k_i mu_i^2)``;
        finite pairs: from the vertices of the exact region; both together, and
        mechanisms of bounded loss (Laplace, subsampled Laplace, subsampled finite
        pairs): a certified enclosure (docs/theory.md, section 20).  Raises
        ``InvalidParameterError`` when no finite ``mu`` exists (a leak) or for the kinds
        not computed (see :func:`~dpcompose_exact.engines.summaries.gdp_mu`).
        """
        region = self.region if self.is_exact else None
        return summaries.gdp_mu(self._summary_kinds(), region, self.delta)  # type: ignore[arg-type]

    def advantage(self) -> Value:
        """The largest membership-inference advantage: ``delta(0)``."""
        return self.delta(0)  # type: ignore[return-value]

    def _summary_kinds(self) -> tuple[tuple[Any, int], ...]:
        if self.is_exact and not isinstance(self.method, Method):
            # a paper's bound: its region is not the composition of its kinds
            return tuple(summaries.region_kinds(self.region))
        if not self.kinds:
            raise InvalidParameterError(
                f"this region ({self.method}) has no mechanism list to summarise"
            )
        return self.kinds

    # -- output ---------------------------------------------------------------------------
    def rows(
        self,
        digits: int = 30,
        exact: bool = True,
        structured: bool = True,
        rounding: str | None = "up",
    ) -> list[dict[str, Any]]:
        """One dict per constraint (``epsilon``, ``delta``, ``..._decimal``), increasing eps.

        Args:
            digits: significant digits of the certified decimals.
            exact: include the closed forms that exist (certified results have exact
                epsilons only).
            structured: with ``exact``, add ``delta_structured`` (machine-readable form).
            rounding: the direction of the ``..._rounded`` decimals: ``"up"`` (never below
                the exact value), ``"nearest"`` or ``"down"``; None leaves them out.
        """
        return list(region_rows(self._result, digits, exact, structured, rounding))

    def curve_rows(
        self,
        delta_at: Any = None,
        epsilon_at: Any = None,
        digits: int = 30,
        exact: bool = True,
        rounding: str | None = "up",
    ) -> list[dict[str, Any]]:
        """Rows of a privacy curve, as ``dpcompose delta/epsilon`` print them.

        ``delta_at`` (eps values) gives ``delta(eps)``; ``epsilon_at`` (deltas) gives
        ``eps(delta)``; give exactly one of the two.  ``rounding`` as in :meth:`rows`.
        """
        command, points = _query(delta_at, epsilon_at)
        if command == "delta":
            parsed = [parse_eps(_plain(e)) for e in points]
        else:
            parsed = [parse_delta(_plain(d)) for d in points]
        return curve_rows(self._result, command, parsed, digits, exact, rounding)

    def to_dict(self, options: OutputOptions | int | None = None, /, **keywords: Any) -> dict:
        """The JSON object ``dpcompose compose|delta|epsilon --format json`` prints.

        ``mechanisms`` lists each kind's constraints in canonical exact form.  With
        ``delta_at`` (eps values) or ``epsilon_at`` (deltas) the object holds that privacy
        curve under ``curve``; otherwise the region under ``region``.  The rows keep every
        certified digit (``..._decimal``) and add the decimals rounded in the direction
        ``rounding`` (``..._rounded``; ``up`` never understates privacy loss).  The exact
        deltas of a region are kept inline while they total under
        :data:`~dpcompose_exact.presentation.forms_file.JSON_FORMS_BUDGET` bytes
        (``forms="auto"``); ``"always"`` keeps them, ``"never"`` leaves them out, and
        ``forms_file`` writes them to a file the rows refer to.

        Args:
            options: an :class:`~dpcompose_exact.presentation.formats.OutputOptions`, or the
                significant digits (default 30).
            **keywords: ``digits``, ``exact`` (False: decimals only), ``delta_at``,
                ``epsilon_at``, ``rounding``, ``forms`` (the ``shown`` option) and
                ``forms_file``, as in :class:`OutputOptions`.
        """
        return json.loads(self.to_json(options, **keywords))

    def write(
        self, fmt: str, options: OutputOptions | None = None, /, **keywords: Any
    ) -> str | Iterator[str]:
        """The composition (or a curve) in a registered output format.

        ``fmt`` names a format of :mod:`dpcompose_exact.presentation.formats` (``table``,
        ``json``, ``csv``, ``latex``, and any format registered there); ``options`` is an
        :class:`~dpcompose_exact.presentation.formats.OutputOptions`, or its fields are
        given as keywords.  JSON and CSV come in pieces (a large exact region is written
        row by row).
        """
        options = OutputOptions(**keywords) if options is None else replace(options, **keywords)
        return output_format(fmt).writer("composition")(self, options)

    def iter_json(
        self, options: OutputOptions | int | None = None, /, **keywords: Any
    ) -> Iterator[str]:
        """:meth:`to_json` in pieces: a region's rows are made and written one at a time.

        A large exact region prints hundreds of megabytes of closed forms; written this
        way only one row's strings exist at a time.  Curves are computed first (an error
        then prints nothing).  Arguments as in :meth:`to_dict`.
        """
        return self.write("json", method_options("json", options, keywords))  # type: ignore[return-value]

    def iter_csv(
        self, options: OutputOptions | int | None = None, /, **keywords: Any
    ) -> Iterator[str]:
        """:meth:`to_csv` in pieces (a region's rows made one at a time)."""
        return self.write("csv", method_options("csv", options, keywords))  # type: ignore[return-value]

    def to_json(self, options: OutputOptions | int | None = None, /, **keywords: Any) -> str:
        """:meth:`to_dict` as JSON text (arguments as in :meth:`to_dict`)."""
        return "".join(self.iter_json(options, **keywords))

    def to_csv(self, options: OutputOptions | int | None = None, /, **keywords: Any) -> str:
        """The region (or a curve) as CSV, one row per constraint or point.

        The decimal columns are rounded in the direction ``rounding`` (default up: never
        below the exact values), named in the last column.  Arguments: an
        :class:`~dpcompose_exact.presentation.formats.OutputOptions` or the digits
        (default 30), and the keywords ``digits``, ``exact``, ``delta_at``, ``epsilon_at``
        and ``rounding``.
        """
        return "".join(self.iter_csv(options, **keywords))

    def to_latex(self, options: OutputOptions | int | None = None, /, **keywords: Any) -> str:
        r"""The region (or a curve) as a booktabs LaTeX table, as ``--format latex`` prints it.

        Args:
            options: an :class:`~dpcompose_exact.presentation.formats.OutputOptions`, or the
                significant digits of the decimals (default
                :data:`~dpcompose_exact.presentation.render.LATEX_DIGITS`).
            **keywords: ``digits``; ``caption`` (``\caption`` text, default: a description
                of the composition, ``""`` for none); ``label`` (``\label`` key, none when
                empty); ``exact`` (the exact column: ``auto``, ``always`` or ``never``);
                ``delta_at`` / ``epsilon_at`` (print that curve instead of the region);
                ``rounding`` (default ``up``: never below the exact values; a footnote line
                says so); ``notes`` (a list that receives the notes of the layout).
        """
        return self.write("latex", method_options("latex", options, keywords))  # type: ignore[return-value]

    def to_table(self, options: OutputOptions | int | None = None, /, **keywords: Any) -> str:
        """The region (or a curve) as an aligned text table, as ``--format table`` prints it.

        Args:
            options: an :class:`~dpcompose_exact.presentation.formats.OutputOptions`, or the
                significant digits of the decimals (default: the table's 10; JSON and CSV
                keep 30).
            **keywords: ``digits``; ``exact`` (the exact column: ``auto``, ``always`` or
                ``never``); ``delta_at`` / ``epsilon_at``; ``rounding`` (default up, and
                the header says so); ``forms_file`` (the exact deltas go to that file, the
                rows refer to it); ``notes``.
        """
        return self.write("table", method_options("table", options, keywords))  # type: ignore[return-value]

    def plot(self, ax: Any = None, label: str | None = None, **kwargs: Any) -> Any:
        """Draw the trade-off curve on a matplotlib ``ax`` (a new figure when None).

        A composition without a constraint list (noise, subsampled mechanisms) is drawn
        as its privacy profile ``delta(eps)``, a certified band on a log scale
        (:meth:`profile_band`).

        The axes are labelled as the command line labels them (unless the caller did), the
        line takes the next style of the package's palette, and a legend names it.

        Args:
            ax: matplotlib axes to draw on; None makes a new square figure.
            label: legend label (default: what was composed).
            **kwargs: line keyword arguments (default: the package's palette).

        Returns:
            The axes.
        """
        if not self.has_region:  # noise: the privacy profile, as a certified band
            return self._plot_profile(ax, label)
        ts, fs = self._curve_floats()
        if ax is None:
            from .optional import require

            figure = require("matplotlib.figure", "Composition.plot()")
            # constrained layout: savefig keeps the axis labels (nothing clipped)
            ax = figure.Figure(figsize=(4, 4), layout="constrained").add_subplot()
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

    def profile_band(self, eps_max: Any = None, points: int = 32) -> tuple[list, list, list]:
        """A certified band of ``delta(eps)`` on ``[0, eps_max]`` (doubles, for drawing).

        ``eps_max`` defaults to the upper end of ``epsilon(1e-8)``; see
        :func:`~dpcompose_exact.presentation.plot.profile_band`.
        """
        if eps_max is None:
            eps_max = Fraction(self.epsilon("1e-8").upper()).limit_denominator(1000) + 1
        return profile_band(self._result, eps_max, points)

    def _plot_profile(self, ax: Any, label: str | None) -> Any:
        if ax is None:
            from .optional import require

            figure = require("matplotlib.figure", "Composition.plot()")
            ax = figure.Figure(figsize=(4.5, 4), layout="constrained").add_subplot()
        index = len(ax.collections)
        draw_profile_band(ax, self.profile_band(), label or self._label(), index)
        ax.legend(fontsize=7, loc="best", framealpha=0.9)
        return ax

    def _curve_floats(self) -> tuple[list[float], list[float]]:
        """Points of ``f`` as floats (drawing only): exact vertices, or a fine grid."""
        if self.is_exact:
            return curve_points(self.region)
        return listed_points(self._result)

    def _label(self) -> str:
        return composition_name(self.kinds) or str(self.method)

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

    # -- exports (dpcompose_exact.presentation.export) -----------------------------------
    def to_dp_accounting(self, value_discretization_interval: float = 1e-4) -> Any:
        """A pessimistic ``dp_accounting`` ``PrivacyLossDistribution`` of this composition.

        Composing it further in dp_accounting (with Gaussian events, say) stays sound.
        """
        from .presentation.export import to_dp_accounting

        return to_dp_accounting(self._result, value_discretization_interval)

    def to_prv(self) -> Any:
        """A ``prv_accountant.PrivacyRandomVariable`` of this composition's pair."""
        from .presentation.export import to_prv

        return to_prv(self._result)

    def to_opendp(self) -> Any:
        """An OpenDP ``PrivacyProfile`` whose delta(eps) is never below the exact one."""
        from .presentation.export import to_opendp

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


def _plain(x: Any) -> Any:
    """A query point: exact Values are passed on as their closed form."""
    if isinstance(x, Value):
        if x.exact is None:
            raise TypeError("a certified Value is not an exact query point; pass its .exact")
        return x.exact
    return x


def _is_many(x: Any) -> bool:
    if getattr(x, "shape", None) == ():  # a 0-d numpy array is one point
        return False
    return not isinstance(x, (str, bytes, int, Fraction)) and isinstance(x, Iterable)
