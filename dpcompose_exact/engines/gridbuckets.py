"""The lower bound's buckets: cells of a loss grid swept into buckets centred on grid points.

A lower lattice measure of one use is the pair seen through a bucket index, with shares of
cells drawn at random: a post-processing of the true pair, so every composition of it is
dominated by the true one (docs/theory.md, section 15, "Gaussian and Laplace noise: a
certified loss grid").  A sweep (:func:`_sweep`) fills each bucket so that its loss
``ln(a / b)`` is a grid point up to float rounding (the rest of a cell and the share of
the next one that lands it there; Laplace atoms are cells of their own, the top one swept
downwards; where two sweeps meet, their unfinished buckets are merged and landed by a share
of a finished bucket above, :func:`_land`).  A certified deviation of a bucket's loss
from its centre is covered by a shift ``tau`` (``k tau`` in all) or the bucket is rounded
to the grid point below (forward) or above (reverse) its loss (:func:`_lower_measure`,
:func:`_choose_tau`); the tail is dropped.  One use loses only the information inside
the buckets, second order in ``h``.
"""

from __future__ import annotations

import math
from array import array
from fractions import Fraction
from typing import Any

import flint

from ..mechanisms.noise import SubsampledNoise
from .gridmeasure import _arb, _log_end, _numpy

__all__: list[str] = []


class _Buckets:
    """The certified buckets of one use, kept as columns of numbers (not as Arb balls).

    Each bucket ``(a, b, i_lo, i_hi, centre)`` of a sweep is certified when it is appended
    and only what the lower measures read is kept (peak memory: a deep grid has hundreds of
    thousands of buckets): the centre, ``i_lo``, ``i_hi``, the ends of its certified loss
    minus the base (:func:`_certified_buckets`), the masses' lower ends as doubles rounded
    down (:func:`~.gridmeasure._down`) and, when ``logs``, their natural logs rounded down
    (:func:`~.gridmeasure._log_end`; -inf where a lower end is not positive).  Appending
    in the order of the sweeps keeps the order of the sums of :func:`_lower_measure`.
    """

    def __init__(self, h: Fraction, logs: bool = False) -> None:
        self.hb, self.logs = _arb(h), logs
        self.centre, self.i_lo, self.i_hi = array("q"), array("q"), array("q")
        self.has_centre, self.has_ends = array("b"), array("b")
        self.e0, self.e1 = array("d"), array("d")
        self.down_a, self.down_b = array("d"), array("d")
        self.log_a, self.log_b = array("d"), array("d")

    def append(self, bucket: tuple) -> None:
        """Certify one bucket ``(a, b, i_lo, i_hi, centre)`` and keep its columns."""
        a, b, i_lo, i_hi, c = bucket
        e0 = e1 = math.nan
        a_lo, b_lo = a.lower(), b.lower()
        if a_lo > 0 and b_lo > 0:
            d = (a / b).log() - self.hb * (i_lo if c is None else c)  # l - base h
            e0, e1 = float(d.lower()), float(d.upper())
        self.centre.append(0 if c is None else c)
        self.has_centre.append(c is not None)
        self.i_lo.append(i_lo)
        self.i_hi.append(i_hi)
        self.has_ends.append(not math.isnan(e0))
        self.e0.append(e0)
        self.e1.append(e1)
        for end, col in ((a_lo, self.down_a), (b_lo, self.down_b)):  # _down, inline
            v = float(end)
            col.append(max(math.nextafter(v, -math.inf), 0.0) if math.isfinite(v) else 0.0)
        if self.logs:  # the lower ends as the lower measures sum them (0 + the end)
            self.log_a.append(_log_end(0 + a_lo, False))
            self.log_b.append(_log_end(0 + b_lo, False))

    def __len__(self) -> int:
        return len(self.i_lo)

    def __iadd__(self, more: Any) -> _Buckets:
        for bucket in more:
            self.append(bucket)
        return self


def _certified_buckets(
    sub: SubsampledNoise, h: Fraction, pts: list[int], fa: Any, cells: list,
    span: int | None = None, logs: bool = False,
) -> _Buckets:
    """The buckets (:func:`_lower_buckets`) with their certified loss minus the base.

    Columns (:class:`_Buckets`): the ends are floats enclosing ``l - base h`` (base the
    centre, else ``i_lo``), or absent (NaN) when a mass may be 0: then only ``l`` in
    ``(i_lo h, i_hi h]`` is known.  ``fa``: see :func:`_lower_buckets`; ``span``: see
    :func:`_sweep`; ``logs``: keep the logs of the masses' lower ends too.
    """
    return _lower_buckets(sub, h, pts, fa, cells, True, span, _Buckets(h, logs))


def _lower_measure(
    buckets: _Buckets, h: Fraction, up: bool, lo: int, n: int, logs: bool = False
) -> tuple[Any, ...]:
    """The forward (``up``: A-masses) or reverse (B-masses) lower lattice measure and its shift.

    A bucket whose certified loss is on the wrong side of its centre by at most ``tau`` is
    put at the centre (all losses then shift by at most ``tau``); the others at the grid
    point below (forward) or above (reverse) their loss.  ``logs``: also the logs of the
    masses (lower ends of their Arb sums, rounded down: masses below the doubles' range
    are kept), as a third item.  Vectorised over the columns of :class:`_Buckets`; a point
    that several buckets share sums their masses in the same order as one by one, and the
    exponentials of their logs' lower ends in Arb (each at most its lower end).
    """
    np = _numpy()
    hf = float(h)
    m = np.frombuffer(buckets.down_a if up else buckets.down_b, dtype=np.float64)
    centre = np.frombuffer(buckets.centre, dtype=np.int64)
    i_lo = np.frombuffer(buckets.i_lo, dtype=np.int64)
    i_hi = np.frombuffer(buckets.i_hi, dtype=np.int64)
    has_c = np.frombuffer(buckets.has_centre, dtype=np.int8).astype(bool)
    has_e = np.frombuffer(buckets.has_ends, dtype=np.int8).astype(bool)
    e0 = np.frombuffer(buckets.e0, dtype=np.float64)
    e1 = np.frombuffer(buckets.e1, dtype=np.float64)
    lg = None
    if logs:
        lg = np.frombuffer(buckets.log_a if up else buckets.log_b, dtype=np.float64)
        keep = (m != 0) | (lg > -math.inf)
    else:
        keep = m != 0
    # forward needs l >= c h - tau, reverse l <= c h + tau
    dev = np.full(m.size, math.inf)
    sure = has_c & has_e
    with np.errstate(invalid="ignore"):
        dev[sure] = np.maximum(0.0, -e0[sure] if up else e1[sure]) * (1 + 1e-12)
    tau = _choose_tau_arrays(dev[keep], m[keep], hf)
    at = np.empty(m.size, dtype=np.int64)
    near = dev <= tau
    at[near] = centre[near]
    bare = ~near & ~has_e  # only l in (i_lo h, i_hi h] is known
    at[bare] = (i_lo if up else i_hi)[bare]
    far = ~near & has_e  # the grid point below l (forward) or above it (reverse), margins
    base = np.where(has_c, centre, i_lo)[far]
    if up:
        at[far] = np.maximum(i_lo[far], base + np.floor(e0[far] / hf - 1e-9).astype(np.int64))
    else:
        at[far] = np.minimum(i_hi[far], base + np.ceil(e1[far] / hf + 1e-9).astype(np.int64))
    at, m = at[keep] - lo, m[keep]
    out = np.zeros(n + 1)
    np.add.at(out, at, m)  # in the buckets' order, as one by one
    if not logs:
        return out, tau
    assert lg is not None
    lg = lg[keep]
    log_out = np.full(n + 1, -math.inf)
    log_out[at] = lg  # a point with one bucket: its log
    counts = np.bincount(at, minlength=n + 1)
    for p in np.nonzero(counts > 1)[0]:  # several: the sum of their lower ends, in Arb
        total = flint.arb(0)
        for x in lg[at == p]:
            total += flint.arb(float(x)).exp().lower()
        log_out[p] = _log_end(total, False)
    return out, tau, log_out


class _Ranges:
    """The grid ranges ``(pts[j], pts[j + 1])`` of the cells, made when read (no list)."""

    def __init__(self, pts: list[int]) -> None:
        self.pts = pts

    def __getitem__(self, j: int) -> tuple[int, int]:
        return self.pts[j], self.pts[j + 1]


def _lower_buckets(
    sub: SubsampledNoise, h: Fraction, pts: list[int], fa: Any, cells: list, up: bool,
    span: int | None = None, out: Any = None,
) -> Any:
    """Buckets of the lower bound: ``(a, b, i_lo, i_hi, centre)``, loss in ``(i_lo h, i_hi h]``.

    Each bucket is a set of outputs (cells, and shares of cells drawn at random: a
    post-processing) whose loss is the grid point ``centre`` up to float rounding (certified
    by the caller; None: no centre, the bucket is rounded).  A sweep (:func:`_sweep`) goes
    up the cells: the bucket being filled aims at the first grid point at or above its
    loss and takes the share of the next cell (loss above that point) that lifts it there
    exactly; the rest of that cell starts the next bucket.  So every bucket but the last
    sits on its grid point, however steep the density (a Gaussian's losses pile up just
    above ``ln(1 - q)``): one use loses only the information inside the buckets, ``O(h^2)``.
    Laplace noise has an atom at each end of its loss range: the top one is swept
    downwards (aiming at the grid point at or below), the two sweeps meet in the middle,
    where their two unfinished buckets are left without centre.  The same buckets serve
    both directions (``up`` is kept for the signature).

    ``fa``: ``F_A`` at the grid points (Laplace's atoms are found where it is exactly 0 and
    1), as balls, or as the pair of lists of the indices where it is exactly 0 and exactly
    1.  ``out``: where the buckets go, in order (an object with ``append``, e.g.
    :class:`_Buckets`, which certifies each as it comes: no list of balls); None: a list.
    """
    hf = float(h)
    out = [] if out is None else out
    laplace = getattr(getattr(sub, "noise", None), "kind", None) == "laplace"  # not a mixture
    if laplace:  # the atoms become cells of their own (same ranges)
        ranges = [(pts[j], pts[j + 1]) for j in range(len(cells))]
        cells = list(cells)
        zeros, ones = _exact_ends(fa)
        q, e = _arb(sub.q), (-_arb(sub.noise.shift) / _arb(sub.noise.scale)).exp()
        top = (q / 2 + (1 - q) * e / 2, e / 2)  # A- and B-masses of x >= s
        bottom = (q * e / 2 + (1 - q) / 2, flint.arb(1) / 2)  # and of x <= 0
        j_top = min(j - 1 for j in ones if 1 <= j <= len(cells))
        j_bot = max(j for j in zeros if j < len(cells))
        if j_top > j_bot:
            (at, bt), (ab, bb) = cells[j_top], cells[j_bot]
            cells[j_top:j_top + 1] = [(at - top[0], bt - top[1]), top]
            ranges[j_top:j_top + 1] = [ranges[j_top]] * 2
            cells[j_bot:j_bot + 1] = [bottom, (ab - bottom[0], bb - bottom[1])]
            ranges[j_bot:j_bot + 1] = [ranges[j_bot]] * 2
        n = len(cells)
        mid = n // 2
        _, rest_up = _sweep(cells, ranges, hf, range(mid), +1, None, out)
        held = _Held(out)
        _, rest_down = _sweep(cells, ranges, hf, range(n - 1, mid - 1, -1), -1, None, held)
        for bucket in _land(list(held.held), [rest_up, rest_down], hf):
            out.append(bucket)
        return out
    ranges = _Ranges(pts)
    if span is not None and cells:  # the deep grid: up to the fullest cell, down to it
        # from the top (a thin upper tail is steep: each bucket aims at the grid point at
        # or below its loss and takes a share of the fuller cell below it)
        mid = max(range(len(cells)), key=lambda j: float(cells[j][0].mid()))
        _, rest_up = _sweep(cells, ranges, hf, range(mid), +1, span, out)
        held = _Held(out)
        _, rest_down = _sweep(cells, ranges, hf, range(len(cells) - 1, mid - 1, -1), -1, None, held)
        for bucket in _land(list(held.held), [rest_up, rest_down], hf):
            out.append(bucket)
        return out
    _, rest = _sweep(cells, ranges, hf, range(len(cells)), +1, span, out)
    if rest is not None:
        out.append(rest)
    return out


def _exact_ends(fa: Any) -> tuple[list[int], list[int]]:
    """The indices where ``F_A`` is exactly 0 and exactly 1 (``fa``: balls, or that pair)."""
    if isinstance(fa, tuple):
        return fa
    zeros = [j for j, x in enumerate(fa) if x == 0 and x.is_exact()]
    ones = [j for j, x in enumerate(fa) if x == 1 and x.is_exact()]
    return zeros, ones


def _sweep(
    cells: list, ranges: Any, hf: float, order: Any, step: int,
    span: int | None = None, out: Any = None,
) -> tuple[Any, tuple | None]:
    """Buckets centred on grid points, and the unfinished last one (None when empty).

    The cells are taken along ``order`` (going up, ``step = 1``, or down, ``-1``); the
    buckets are appended to ``out`` (None: a new list), which is returned.

    The bucket being filled has the loss ``l`` (float, from the balls' midpoints) and aims
    at ``c``: the first grid index with ``c h >= l`` going up (``<= l`` going down), or at
    ``l``'s own index when it is within ``1e-9`` of it.  The next cell's loss is on the far
    side of ``c h`` (cells are ordered), so the share ``theta`` of it with
    ``(a + theta a_c) = e^{c h} (b + theta b_c)`` is positive; it is a double (exact), taken
    only when below what is left of the cell (else the whole rest is taken and the sweep
    goes on).  Shares are exact dyadic numbers, what is left of a cell is ``1`` minus those
    taken (a ball containing it), so the buckets partition the outputs.

    ``span`` (going up only): a bucket that the whole of a cell starting ``span`` or more
    grid steps above its aim cannot lift there is closed without a centre (rounded to the
    grid point below its loss, :func:`_lower_measure`) and the cell starts the next one.
    Otherwise, where one use's loss piles up below a grid point and only a thin tail lies
    above it (a small rate), one bucket would swallow the whole tail and its information
    (docs/theory.md, section 15, "A relative tail bound").
    """
    out = [] if out is None else out
    acc: list | None = None  # [a, b, i_lo, i_hi, target]

    def target(a: Any, b: Any) -> tuple[int | None, bool]:
        """The aim and whether the loss is on it already (:func:`_on_target`, one ratio).

        The loss is within ``1e-9`` steps of the aim only when the aim is its nearest index
        (a ceiling or floor that is not the nearest index is half a step away or more).
        """
        x = _loss_steps(a, b, hf)
        if x is None:
            return None, False
        r = round(x)
        if abs(x - r) < 1e-9:
            return r, True
        return (math.ceil(x) if step > 0 else math.floor(x)), False

    for j in order:
        a_c, b_c = cells[j]
        if a_c.lower() <= 0 and b_c.lower() <= 0:  # (nearly) empty: dropped, which only
            continue  # lowers the lower measure (its terms are >= 0)
        left = flint.arb(1)  # the share of cell j not yet in a bucket
        while True:
            if acc is None:
                a, b = left * a_c, left * b_c
                c, on = target(a, b)
                acc = [a, b, *ranges[j], c]
                if on:
                    out.append((a, b, *ranges[j], acc[4]))
                    acc = None
                break
            a, b, i_lo, i_hi, c = acc
            lo_new, hi_new = min(i_lo, ranges[j][0]), max(i_hi, ranges[j][1])
            theta = _share(a, b, a_c, b_c, c, hf)
            if theta < 0:  # past its aim (or no loss yet): aim again
                c, on = target(a, b)
                if on:
                    out.append((a, b, i_lo, i_hi, c))
                    acc = None
                    continue
                theta = _share(a, b, a_c, b_c, c, hf)
            if not 0 <= theta < float(left.mid()) * (1 - 1e-9):
                if span is not None and c is not None and ranges[j][0] >= c + span:
                    out.append((a, b, i_lo, i_hi, None))  # closed, rounded: see above
                    acc = None
                    continue
                a, b = a + left * a_c, b + left * b_c  # the whole rest: not there yet
                acc = [a, b, lo_new, hi_new, c]
                break
            t = flint.arb(theta)  # a double: exact
            out.append((a + t * a_c, b + t * b_c, lo_new, hi_new, c))
            left = left - t
            acc = None
    if acc is None:
        return out, None
    a, b, i_lo, i_hi, _ = acc  # unfinished: centred on the nearest grid point, certified
    x = _loss_steps(a, b, hf)  # by the caller (shifted or rounded)
    c = round(x) if x is not None else None
    return out, (a, b, i_lo, i_hi, c if c is not None and i_lo <= c <= i_hi else None)



class _Held:
    """A sweep's buckets passed on to ``out``, all but the last ``keep`` (held back).

    The last buckets of a downward sweep are the finished ones nearest to where it meets
    the upward one: :func:`_land` may take a share of them; the rest go to ``out`` as
    they come (no list of balls: peak memory).
    """

    def __init__(self, out: Any, keep: int = 256) -> None:
        from collections import deque

        self.out, self.keep, self.held = out, keep, deque()

    def append(self, bucket: tuple) -> None:
        self.held.append(bucket)
        if len(self.held) > self.keep:
            self.out.append(self.held.popleft())

def _land(
    done: list[tuple[Any, Any, int, int, int | None]], rests: list[tuple | None], hf: float
) -> list[tuple[Any, Any, int, int, int | None]]:
    """The buckets of two sweeps that meet, their unfinished ones landed on a grid point.

    ``done``: the finished buckets of both sweeps; ``rests``: their unfinished ones (None
    when empty).  Left alone, each unfinished bucket is rounded to the grid point next to
    its loss (up to ``h / 2`` of loss on its mass, on every use: first order in ``h``
    times the count, the lower end of a small rate's answer).  Instead they are merged (a
    coarser bucket: a post-processing) and lifted to the first grid point ``c h`` at or above
    their loss by a share ``theta`` of a finished bucket centred above ``c`` (the nearest
    first; whole ones taken while not enough): ``(a + theta a_F) = e^{c h} (b + theta
    b_F)``, the share a double (exact) and the rest of that bucket keeping its centre, as
    in :func:`_sweep` (docs/theory.md, section 15, "Where the sweeps meet").  When no
    finished bucket can lift them, the unfinished ones are returned as they were (each
    centred on its nearest grid point, certified by the caller).
    """
    rests = [r for r in rests if r is not None]
    fallback = done + rests
    if not rests:
        return done
    a = sum((r[0] for r in rests), flint.arb(0))
    b = sum((r[1] for r in rests), flint.arb(0))
    i_lo, i_hi = min(r[2] for r in rests), max(r[3] for r in rests)
    x = _loss_steps(a, b, hf)
    if x is None:
        return fallback
    c = round(x) if abs(x - round(x)) < 1e-9 else math.ceil(x)
    if _on_target(a, b, c, hf):
        return done + [(a, b, i_lo, i_hi, c)]
    above = sorted((j for j, f in enumerate(done) if f[4] is not None and f[4] > c),
                   key=lambda j: done[j][4])
    out = list(done)
    taken = []
    for j in above:
        a_f, b_f, lo_f, hi_f, c_f = done[j]
        theta = _share(a, b, a_f, b_f, c, hf)
        if not theta >= 0:
            return fallback
        i_lo, i_hi = min(i_lo, lo_f), max(i_hi, hi_f)
        if theta < 1 - 1e-9:
            t = flint.arb(theta)  # a double: exact
            out[j] = ((1 - t) * a_f, (1 - t) * b_f, lo_f, hi_f, c_f)
            drop = set(taken)
            return [f for i, f in enumerate(out) if i not in drop] + [
                (a + t * a_f, b + t * b_f, i_lo, i_hi, c)
            ]
        a, b = a + a_f, b + b_f  # the whole bucket: not there yet
        taken.append(j)
    return fallback


def _share(a: Any, b: Any, a_c: Any, b_c: Any, c: int | None, hf: float) -> float:
    """The float share ``theta`` of ``(a_c, b_c)`` that brings the loss of ``(a, b)`` to ``c h``.

    Negative when there is none (no aim, or the loss is past it); ``inf`` when the cell's
    loss is ``c h`` itself.
    """
    if c is None or not a.mid() > 0:
        return -1.0
    g = math.exp(c * hf)
    # in units of a (the masses of a deep tail are far below the doubles' range)
    rb, rac, rbc = (float((x / a).mid()) for x in (b, a_c, b_c))
    den = rac - g * rbc  # > 0 going up, < 0 going down
    if den == 0:
        return math.inf
    return (g * rb - 1.0) / den


def _on_target(a: Any, b: Any, c: int, hf: float) -> bool:
    """Whether the float loss of ``(a, b)`` is within ``1e-9`` grid steps of ``c h``."""
    x = _loss_steps(a, b, hf)
    return x is not None and abs(x - c) < 1e-9


def _loss_steps(a: Any, b: Any, hf: float) -> float | None:
    """The float loss ``ln(a / b) / h`` of a bucket (None unless both masses are > 0).

    The ratio is taken in Arb: the masses of a deep tail are far below the doubles' range.
    """
    if not (a.mid() > 0 and b.mid() > 0):
        return None
    r = float((a / b).mid())
    return math.log(r) / hf if 0 < r < math.inf else None


def _choose_tau(devs_masses: list[tuple[float, float]], h: float) -> float:
    """The shift ``tau`` of one direction: buckets within ``tau`` of their centre stay there.

    (Within: on the wrong side by at most ``tau``.)  The others are rounded to the grid
    point below (forward) or above (reverse), which costs them up to ``h`` each; a shift
    ``tau`` costs every use ``tau``.  The ``tau`` that minimises ``tau + h/2 x (share of
    the mass rounded)`` is taken (:func:`_choose_tau_arrays`, on the pairs' columns).
    """
    np = _numpy()
    if not devs_masses:
        return 0.0
    devs, masses = (np.array(c, dtype=np.float64) for c in zip(*devs_masses))
    return _choose_tau_arrays(devs, masses, h)


def _choose_tau_arrays(devs: Any, masses: Any, h: float) -> float:
    """:func:`_choose_tau` of the deviations and masses as arrays (a choice: any is sound).

    The candidates in increasing deviation (ties by mass); the first least cost below
    ``h / 2`` (the cost of ``tau = 0`` with every bucket rounded), else 0.
    """
    np = _numpy()
    total = math.fsum(masses.tolist()) if masses.size else 0.0
    if not masses.size or total <= 0:
        return 0.0
    order = np.lexsort((masses, devs))
    d, m = devs[order], masses[order]
    finite = d < math.inf
    d, m = d[finite], m[finite]
    if not d.size:
        return 0.0
    remaining = np.maximum(total - np.cumsum(m), 0.0)
    cost = d + h / 2 * remaining / total
    best = int(np.argmin(cost))
    return float(d[best]) if cost[best] < h / 2 else 0.0
