r"""Figures of trade-off curves: the paper's Figures 1-3 and the bracket (theory, section 9).

:func:`plot_regions` overlays several trade-off curves (type II error f(t) against type I
error t) in one PNG, PDF or SVG file, with a legend.  Every figure of the package (CLI and
notebooks) uses the one :data:`PALETTE` with distinct line styles, so curves stay apart in
greyscale print; labels may use matplotlib mathtext (``"$G_1^{\otimes 10}$"``).  A curve
may be

* an exact :class:`~dpcompose_exact.regions.tradeoff.Region` -- it is affine between its exact
  vertices, so it is drawn as the polyline of its vertices, converted to certified
  decimals only here, at the last step;
* an :class:`~dpcompose_exact.paper.approx.Approximation` -- drawn as the region of its exact
  (eps, delta) constraints;
* a :class:`~dpcompose_exact.paper.approx.SmoothTradeoff` (e.g. G_mu) or any callable
  t -> f(t) -- sampled with mpmath on a grid refined near t = 0, where G_mu is steep.

matplotlib is imported lazily inside :func:`plot_regions` and only through its
object-oriented API (``Figure`` + the Agg canvas), so the core package never needs it and
the global pyplot backend is left alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mpmath import mp

from ..engines.results import ListedResult
from ..errors import InvalidParameterError
from ..optional import require
from ..paper.approx import Approximation, SmoothTradeoff
from ..regions.tradeoff import Region, dp_region

__all__ = [
    "listed_points",
    "SUPPORTED_SUFFIXES",
    "PALETTE",
    "LINESTYLES",
    "curve_points",
    "plot_regions",
    "style",
    "plain_label",
    "visible_limit",
    "AXIS_LABELS",
    "PROFILE_LABELS",
    "profile_band",
    "draw_profile_band",
    "plot_profiles",
]

#: the axis labels of every trade-off figure (CLI, plot_regions, Composition.plot).
AXIS_LABELS = ("type I error $t$", "type II error $f(t)$")

#: file types :func:`plot_regions` writes (chosen by the suffix of the path).
SUPPORTED_SUFFIXES = (".png", ".pdf", ".svg")

#: the colours of every figure (Okabe-Ito, distinguishable with colour-vision deficiencies).
PALETTE = ("#000000", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")

#: zoom when every knee is this close to the origin (see :func:`auto_limits`).
ZOOM_KNEE = 0.15

#: line styles cycled with the colours, so that curves differ in greyscale too.
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)), (0, (1, 2)))

Curve = Region | Approximation | SmoothTradeoff | Callable[[Any], Any]

#: significant digits of the vertex decimals used for drawing.
_PLOT_DIGITS = 10


def _sample_ts(samples: int) -> list[Any]:
    """A grid of [0, 1], uniform plus a geometric refinement towards 0 and 1."""
    uniform = [mp.mpf(j) / samples for j in range(samples + 1)]
    geometric = [mp.mpf(10) ** (-j / mp.mpf(4)) for j in range(4, 49)]  # 1e-1 .. 1e-12
    pts = set(uniform) | set(geometric) | {1 - g for g in geometric}
    return sorted(p for p in pts if 0 <= p <= 1)


def listed_points(result: Any, n: int = 4000) -> tuple[list[float], list[float]]:
    """Points of the trade-off curve of a result as floats (drawing only).

    ``f(t) = max(0, 1 - d - e^l t, e^-l (1 - d - t))`` over the result's ``(l, d)`` list,
    on ``n + 1`` points of ``t`` (a certified region: no exact vertices).  A result with
    no constraint list refuses in one line.
    """
    if not isinstance(result, ListedResult):  # curves only: no list to draw
        raise result.refuse("a drawing of the region")
    # eps beyond 700 would overflow exp(); its line is vertical at t = 0 anyway
    cons = [(min(float(e), 700.0), float(d)) for e, d in result.constraints()]

    def f(t: float) -> float:
        best = 0.0
        for e, d in cons:
            best = max(best, 1 - d - math.exp(e) * t, math.exp(-e) * (1 - d - t))
        return best

    ts = [i / n for i in range(n + 1)]
    return ts, [f(t) for t in ts]


def curve_points(curve: Curve, samples: int = 400) -> tuple[list[float], list[float]]:
    """The points (t, f(t)) drawn for a curve, as floats (for plotting only).

    Args:
        curve: A Region (or an exact Composition or Mechanism of the front door), an
            Approximation, a SmoothTradeoff or a callable t -> f(t) taking and returning
            mpmath numbers (or numbers mpmath accepts).
        samples: Number of uniform sample intervals for smooth curves.

    Returns:
        Lists of t values and f(t) values.

    Raises:
        InvalidParameterError: for an object that is not a curve.
    """
    if hasattr(curve, "region") and hasattr(curve.region, "vertices"):
        curve = curve.region  # a front-door Mechanism or exact Composition
    if isinstance(curve, Approximation):
        curve = dp_region(list(curve.constraints), warn=False)
    if hasattr(curve, "vertices"):  # an exact region: its vertices, exactly
        dom = curve.domain
        ts, fs = [], []
        for x, y in curve.vertices():
            ts.append(float(dom.decimal(x, _PLOT_DIGITS)))
            fs.append(float(dom.decimal(y, _PLOT_DIGITS)))
        return ts, fs
    if isinstance(curve, SmoothTradeoff):
        fn: Callable[[Any], Any] = curve.f
    elif callable(curve):
        fn = curve
    else:
        raise InvalidParameterError(
            f"cannot plot {type(curve).__name__}: expected a Region, an Approximation, "
            "a SmoothTradeoff or a callable t -> f(t)"
        )
    with mp.workdps(20):
        ts = _sample_ts(samples)
        fs = [fn(t) for t in ts]
        return [float(t) for t in ts], [float(v) for v in fs]


def _as_items(curves: Mapping[str, Curve] | Iterable[tuple[str, Curve]]) -> list[tuple[str, Curve]]:
    items = list(curves.items()) if isinstance(curves, Mapping) else list(curves)
    if not items:
        raise InvalidParameterError("nothing to plot: no curves given")
    for item in items:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
            raise InvalidParameterError(
                f"curves must be (label, curve) pairs or a mapping label -> curve, got {item!r}"
            )
    return items


def style(i: int) -> dict[str, Any]:
    """Line keyword arguments of the i-th curve of a figure (colour and line style).

    >>> style(0)["color"], style(1)["linestyle"]
    ('#000000', '--')
    """
    return {
        "color": PALETTE[i % len(PALETTE)],
        "linestyle": LINESTYLES[i % len(LINESTYLES)],
        "linewidth": 1.6 if i == 0 else 1.3,
    }


def auto_limits(points: Sequence[tuple[list[float], list[float]]]) -> tuple[float, float]:
    """Common limits of both axes that show where the curves bend.

    Strongly composed curves hug the axes: most of [0, 1]^2 then shows nothing but two
    nearly straight lines along t = 0 and f = 0.  When every curve's knee (the point
    where f(t) + t is smallest) lies within ``ZOOM_KNEE`` of the origin, the axes are
    cut to a round value about 2.5 times the farthest knee; otherwise they are [0, 1].
    """
    far = 0.0
    for ts, fs in points:
        if ts:
            j = min(range(len(ts)), key=lambda i: ts[i] + fs[i])
            far = max(far, ts[j], fs[j])
    if far <= 0 or far > ZOOM_KNEE:
        return 0.0, 1.0
    nice = (0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
    return 0.0, next(x for x in nice if x >= 2.5 * far)


_NICE = (0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)


def visible_limit(points: Sequence[tuple[list[float], list[float]]], lim: float) -> float:
    """The least round limit ``>= lim`` at which every curve shows inside ``[0, L]^2``.

    A curve shows when one of its points lies within 85% of the limit on both axes
    (a zoom cut for composed curves can hide the uncomposed one entirely).

    >>> visible_limit([([0.0, 0.5, 1.0], [1.0, 0.3, 0.0])], 0.2)
    0.6
    """
    for cand in (x for x in _NICE if x >= lim):
        if all(
            any(t <= 0.85 * cand and f <= 0.85 * cand for t, f in zip(ts, fs)) for ts, fs in points
        ):
            return cand
    return 1.0


def plain_label(label: str) -> str:
    r"""A mathtext label as plain text for messages (no ``$``, no backslashes).

    >>> plain_label("$G_{1}^{\\otimes 10} = G_{\\sqrt{10}}$")
    'G_1^(x10) = G_sqrt(10)'
    >>> plain_label("2-piece approx. from below, composed $10$ times")
    '2-piece approx. from below, composed 10 times'
    """
    import re

    text = label.replace("$", "")
    text = re.sub(r"\\otimes\s*", "x", text)
    text = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", text)
    text = re.sub(r"\^\{([^{}]*)\}", r"^(\1)", text)
    text = re.sub(r"_\{([^{}]*)\}", r"_\1", text)
    text = re.sub(r"\\([A-Za-z]+)", r"\1", text)
    return text.replace("{", "").replace("}", "")


def plot_regions(
    curves: Mapping[str, Curve] | Sequence[tuple[str, Curve]],
    path: str | Path | None = None,
    title: str = "",
    *,
    styles: Mapping[str, Mapping[str, Any]] | None = None,
    diagonal: bool = True,
    zoom: tuple[float, float, float, float] | None = None,
    xlim: tuple[float, float] | None = None,
    ylim: tuple[float, float] | None = None,
    auto_zoom: bool = True,
    size: tuple[float, float] = (4.5, 4.0),
    dpi: int = 200,
    ax: Any = None,
) -> Any:
    r"""Draw overlaid trade-off curves; write them to ``path`` (PNG, PDF or SVG by suffix).

    Args:
        curves: ``{label: curve}`` or ``[(label, curve), ...]``; see :func:`curve_points`.
            Labels may use mathtext (``"$G_1^{\otimes 10}$"``).
        path: Output file; the suffix (``.png``, ``.pdf`` or ``.svg``) chooses the format.
            Its directory must exist.  ``None``: draw only (into ``ax`` or a new figure).
        title: Figure title.
        styles: Optional matplotlib line keyword arguments per label, on top of
            :func:`style` (``{"$G_1$": {"color": "k"}}``).
        diagonal: Draw the line f(t) = 1 - t (perfect privacy) in light grey.
        zoom: Axis limits ``(t_min, t_max, f_min, f_max)`` (overrides xlim/ylim).
        xlim: Type I error axis limits; default :func:`auto_limits` ([0, 1] without
            auto_zoom).
        ylim: Type II error axis limits (default as ``xlim``).
        auto_zoom: Zoom on where composed curves bend when no limits are given.
        size: Figure size in inches (4.5 x 4 by default; 3.4 x 3 fits a paper column).
        dpi: Resolution of a PNG.
        ax: A matplotlib Axes to draw into (notebooks); ``path`` may then be None.

    Returns:
        The path written, or the matplotlib Figure when ``path`` is None.

    Raises:
        InvalidParameterError: for an unsupported suffix, a missing directory, no curves,
            or a non-curve.
    """
    out = Path(path) if path is not None else None
    suffix = out.suffix.lower() if out is not None else ""
    if out is not None:
        if suffix not in SUPPORTED_SUFFIXES:
            raise InvalidParameterError(
                f"unsupported file type {out.suffix or '(none)'!r} for {str(out)!r}; "
                f"use one of {', '.join(SUPPORTED_SUFFIXES)}"
            )
        if not out.parent.is_dir():
            raise InvalidParameterError(
                f"cannot write {str(out)!r}: the directory {str(out.parent)!r} does not exist"
            )
    items = _as_items(curves)
    points = [(label, curve_points(curve)) for label, curve in items]

    own = ax is None
    if own:
        figure = require("matplotlib.figure", "plot")
        agg = require("matplotlib.backends.backend_agg", "plot")

        # constrained layout keeps every label and the legend (below the axes) inside
        fig = figure.Figure(figsize=size, layout="constrained")
        agg.FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
    else:
        fig = ax.figure
    if diagonal:
        ax.plot([0, 1], [1, 0], color="0.85", linewidth=0.8, zorder=0)
    for i, (label, (ts, fs)) in enumerate(points):
        kw = style(i)
        kw.update((styles or {}).get(label, {}))
        ax.plot(ts, fs, label=label, **kw)
    if zoom is not None:
        xlim, ylim = (zoom[0], zoom[1]), (zoom[2], zoom[3])
    if xlim is None and ylim is None:
        lim = auto_limits([p for _, p in points]) if auto_zoom else (0.0, 1.0)
        xlim = ylim = lim
    ax.set_xlim(*(xlim or (0.0, 1.0)))
    ax.set_ylim(*(ylim or (0.0, 1.0)))
    if xlim == ylim:
        ax.set_aspect("equal", adjustable="box")
    small = size[0] < 4.0  # a paper column: smaller text
    ax.set_xlabel(AXIS_LABELS[0], fontsize=8 if small else None)
    ax.set_ylabel(AXIS_LABELS[1], fontsize=8 if small else None)
    if small:
        ax.tick_params(labelsize=7)
    if title:
        ax.set_title(title, fontsize=8 if small else 9)
    ax.grid(True, linewidth=0.3, alpha=0.5)
    if own:  # below the axes, inside the figure: never over the curves, never cut
        fig.legend(
            loc="outside lower center",
            fontsize=6.5 if small else 7,
            ncols=1,
            frameon=False,
            handlelength=2.6,
        )
    else:
        ax.legend(fontsize=7, loc="best", framealpha=0.9)
    if out is None:
        return fig
    fig.savefig(out, format=suffix[1:], dpi=dpi)
    return out


# ---------------------------------------------------------------------------------------
# privacy profiles as certified bands (compositions without a constraint list: noise)
# ---------------------------------------------------------------------------------------

#: the axis labels of a privacy-profile figure
PROFILE_LABELS = (r"$\varepsilon$", r"$\delta(\varepsilon)$")


def profile_band(
    result: Any, eps_max: Any, points: int = 32
) -> tuple[list[float], list[float], list[float]]:
    r"""A certified band of ``delta(eps)`` on ``[0, eps_max]``, as doubles for drawing.

    At each grid point ``eps_i`` the result's certified enclosure ``[lo_i, hi_i]``
    (``Value.lower()`` / ``upper()``: doubles never inside-out).  ``delta`` decreases in
    ``eps``, so between ``eps_i`` and ``eps_{i+1}`` the curve lies between ``lo_{i+1}``
    and ``hi_i``: the band returned, ``(xs, lower, upper)`` as steps, contains the true
    curve everywhere on the interval, not only at the grid points.
    """
    from fractions import Fraction

    top = Fraction(eps_max)
    grid = [top * i / (points - 1) for i in range(points)]
    ends = []
    for e in grid:
        v = result.delta(e)
        ends.append((max(v.lower(), 0.0), min(v.upper(), 1.0)))
    xs: list[float] = []
    lower: list[float] = []
    upper: list[float] = []
    for i in range(points - 1):
        a, b = float(grid[i]), float(grid[i + 1])
        xs += [a, b]
        upper += [ends[i][1]] * 2
        lower += [ends[i + 1][0]] * 2
    return xs, lower, upper


def draw_profile_band(ax: Any, band: tuple[list, list, list], label: str, index: int = 0) -> Any:
    """Draw a :func:`profile_band` on ``ax`` (log-scaled delta), in the package's palette."""
    xs, lower, upper = band
    kw = style(index)
    floor = min((y for y in lower if y > 0), default=1e-300)
    ax.fill_between(
        xs,
        [max(y, floor) for y in lower],
        upper,
        color=kw["color"],
        alpha=0.35,
        linewidth=0,
        label=f"{label} (certified band)",
    )
    ax.plot(xs, upper, color=kw["color"], linewidth=0.8, linestyle=kw["linestyle"])
    ax.set_yscale("log")
    if not ax.get_xlabel():
        ax.set_xlabel(PROFILE_LABELS[0])
    if not ax.get_ylabel():
        ax.set_ylabel(PROFILE_LABELS[1])
    ax.grid(True, which="major", linewidth=0.3, alpha=0.5)
    return ax


def plot_profiles(
    bands: Sequence[tuple[str, tuple[list, list, list]]],
    path: str | Path,
    title: str = "",
    size: tuple[float, float] = (4.5, 4.0),
    dpi: int = 200,
) -> Path:
    """Write certified ``delta(eps)`` bands (:func:`profile_band`) to a PNG, PDF or SVG."""
    out = Path(path)
    suffix = out.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise InvalidParameterError(
            f"unsupported file type {out.suffix or '(none)'!r} for {str(out)!r}; "
            f"use one of {', '.join(SUPPORTED_SUFFIXES)}"
        )
    figure = require("matplotlib.figure", "plot")
    agg = require("matplotlib.backends.backend_agg", "plot")
    fig = figure.Figure(figsize=size, layout="constrained")
    agg.FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for i, (label, band) in enumerate(bands):
        draw_profile_band(ax, band, label, i)
    small = size[0] < 4.0
    if title:
        ax.set_title(title, fontsize=8 if small else 9)
    fig.legend(loc="outside lower center", fontsize=6.5 if small else 7, frameon=False)
    fig.savefig(out, format=suffix[1:], dpi=dpi)
    return out
