"""Figures of trade-off curves: the paper's Figures 1-3 and the bracket (docs/theory.md, 9).

:func:`plot_regions` overlays several trade-off curves (type II error f(t) against type I
error t) in one PNG or PDF file, with a legend. A curve may be

* an exact :class:`~dpcompose_exact.tradeoff.Region` -- it is affine between its exact
  vertices, so it is drawn as the polyline of its vertices, converted to certified
  decimals only here, at the last step;
* an :class:`~dpcompose_exact.approx.Approximation` -- drawn as the region of its exact
  (eps, delta) constraints;
* a :class:`~dpcompose_exact.approx.SmoothTradeoff` (e.g. G_mu) or any callable
  t -> f(t) -- sampled with mpmath on a grid refined near t = 0, where G_mu is steep.

matplotlib is imported lazily inside :func:`plot_regions` and only through its
object-oriented API (``Figure`` + the Agg canvas), so the core package never needs it and
the global pyplot backend is left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mpmath import mp

from .approx import Approximation, SmoothTradeoff
from .errors import InvalidParameterError
from .tradeoff import Region, dp_region

__all__ = ["SUPPORTED_SUFFIXES", "curve_points", "plot_regions"]

#: file types :func:`plot_regions` writes (chosen by the suffix of the path).
SUPPORTED_SUFFIXES = (".png", ".pdf")

Curve = Region | Approximation | SmoothTradeoff | Callable[[Any], Any]

#: significant digits of the vertex decimals used for drawing.
_PLOT_DIGITS = 10


def _sample_ts(samples: int) -> list[Any]:
    """A grid of [0, 1], uniform plus a geometric refinement towards 0 and 1."""
    uniform = [mp.mpf(j) / samples for j in range(samples + 1)]
    geometric = [mp.mpf(10) ** (-j / mp.mpf(4)) for j in range(4, 49)]  # 1e-1 .. 1e-12
    pts = set(uniform) | set(geometric) | {1 - g for g in geometric}
    return sorted(p for p in pts if 0 <= p <= 1)


def curve_points(curve: Curve, samples: int = 400) -> tuple[list[float], list[float]]:
    """The points (t, f(t)) drawn for a curve, as floats (for plotting only).

    Args:
        curve: A Region, an Approximation, a SmoothTradeoff or a callable t -> f(t)
            taking and returning mpmath numbers (or numbers mpmath accepts).
        samples: Number of uniform sample intervals for smooth curves.

    Returns:
        Lists of t values and f(t) values.

    Raises:
        InvalidParameterError: for an object that is not a curve.
    """
    if isinstance(curve, Approximation):
        curve = dp_region(list(curve.constraints), warn=False)
    if isinstance(curve, Region):
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


def plot_regions(
    curves: Mapping[str, Curve] | Sequence[tuple[str, Curve]],
    path: str | Path,
    title: str = "",
    *,
    styles: Mapping[str, Mapping[str, Any]] | None = None,
    diagonal: bool = True,
    zoom: tuple[float, float, float, float] | None = None,
    size: tuple[float, float] = (5.5, 5.0),
    dpi: int = 150,
) -> Path:
    """Write overlaid trade-off curves to a PNG or PDF file (by the suffix of ``path``).

    Args:
        curves: ``{label: curve}`` or ``[(label, curve), ...]``; see :func:`curve_points`.
        path: Output file; the suffix (``.png`` or ``.pdf``) chooses the format.
        title: Figure title.
        styles: Optional matplotlib line keyword arguments per label (``{"G_1":
            {"color": "k", "linestyle": "--"}}``).
        diagonal: Draw the line f(t) = 1 - t (perfect privacy) in light grey.
        zoom: Optional axis limits ``(t_min, t_max, f_min, f_max)``.
        size: Figure size in inches.
        dpi: Resolution of a PNG.

    Returns:
        The path written.

    Raises:
        InvalidParameterError: for an unsupported suffix, no curves, or a non-curve.
    """
    out = Path(path)
    suffix = out.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise InvalidParameterError(
            f"unsupported file type {out.suffix or '(none)'!r} for {str(out)!r}; "
            f"use one of {', '.join(SUPPORTED_SUFFIXES)}"
        )
    items = _as_items(curves)
    points = [(label, curve_points(curve)) for label, curve in items]

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    if diagonal:
        ax.plot([0, 1], [1, 0], color="0.85", linewidth=0.8, zorder=0)
    for label, (ts, fs) in points:
        style = dict((styles or {}).get(label, {}))
        style.setdefault("linewidth", 1.4)
        ax.plot(ts, fs, label=label, **style)
    if zoom is not None:
        ax.set_xlim(zoom[0], zoom[1])
        ax.set_ylim(zoom[2], zoom[3])
    else:
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("type I error t")
    ax.set_ylabel("type II error f(t)")
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(True, linewidth=0.3, alpha=0.5)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format=suffix[1:], dpi=dpi)
    return out
