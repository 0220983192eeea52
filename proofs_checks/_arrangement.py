"""Every cell of the tie arrangement of three privacy parameters, exactly (Fractions).

Mathematics (docs/theory.md, sections 3 and 10).  With three generators
``eps = (eps1, eps2, eps3)`` a composed privacy loss is ``a . eps`` with an integer vector
``a``; two losses tie on the plane ``(a - a') . eps = 0`` and a loss vanishes on
``a . eps = 0``.  These planes pass through the origin, so the arrangement they cut out of
the cone ``eps1 > eps2 > eps3 > 0`` is a cone over its slice ``eps1 = 1``: the open triangle
``T = {(y, z) : 1 > y > z > 0}`` with ``(eps2, eps3) = (y, z)``, cut by the lines
``d1 + d2 y + d3 z = 0``.  A cell of dimension ``m`` of the slice is a cone cell of dimension
``m + 1`` (faces: open 3-d chambers; edges: 2-d walls; vertices: critical rays).

Cells are the classes of points with equal *sign vector* (the signs of ``d . eps`` for every
line); each class is an intersection of open half-planes and lines, hence convex, so a sign
vector identifies one cell.  Enumeration:

* vertices: pairwise intersections of the lines inside ``T``;
* edges: each line inside ``T`` is cut by the vertices on it; one midpoint per piece;
* faces: vertical slabs between consecutive abscissae of vertices and boundary crossings;
  in each slab one midpoint between consecutive lines; deduplicated by sign vector.

The census (:func:`census`) recounts the cells from the lines alone: with ``L`` lines
crossing ``T`` and ``m_v`` lines through vertex ``v``, there are ``#v`` vertices,
``L + sum m_v`` edges and ``1 + L + sum (m_v - 1)`` faces (insert the lines one by one; a
line crossing ``c`` earlier lines at new points adds ``c + 1`` faces).  A list of cells with
pairwise distinct sign vectors and these counts is *all* the cells.

The boundary facet ``eps3 = 0`` (``eps1 > eps2 > 0``: the smallest constraint is a
total-variation one) is the open segment ``z = 0, 0 < y < 1``; its cells are the points
where lines cross it and the open intervals between them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import gcd, lcm

Vec = tuple[int, ...]
Point = tuple[Fraction, Fraction]

FACET_NORMAL: Vec = (0, 0, 1)
"""Normal of the boundary facet ``eps3 = 0``."""


@dataclass(frozen=True)
class Cell:
    """One cell of the slice ``eps1 = 1``.

    Attributes:
        dim: dimension in the slice (0 vertex, 1 edge, 2 face); the cone cell has ``dim + 1``.
        point: an exact representative ``(eps2, eps3)`` in the relative interior.
        signs: signs of ``d . (1, eps2, eps3)`` for every line of the arrangement.
        facet: True for a cell of the boundary facet ``eps3 = 0``.
    """

    dim: int
    point: Point
    signs: tuple[int, ...]
    facet: bool = False

    @property
    def eps(self) -> tuple[Fraction, Fraction, Fraction]:
        """The representative ``(1, eps2, eps3)``."""
        return (Fraction(1), self.point[0], self.point[1])

    def integer_rep(self) -> Vec:
        """The primitive positive integer vector on the ray of the representative."""
        m = lcm(*(f.denominator for f in self.eps))
        ints = [int(f * m) for f in self.eps]
        g = 0
        for v in ints:
            g = gcd(g, v)
        return tuple(v // g for v in ints)

    def zero_normals(self, normals: Sequence[Vec]) -> list[Vec]:
        """Normals of the planes containing the cell (the zeros of its sign vector)."""
        out = [d for d, s in zip(normals, self.signs, strict=True) if s == 0]
        return [*out, FACET_NORMAL] if self.facet else out


def primitive(d: Sequence[int]) -> Vec:
    """Divide by the gcd and make the first nonzero entry positive."""
    g = 0
    for v in d:
        g = gcd(g, v)
    out = tuple(v // g for v in d)
    first = next(v for v in out if v)
    return out if first > 0 else tuple(-v for v in out)


def tie_normals(vectors: Iterable[Vec]) -> list[Vec]:
    """Primitive normals of the planes ``(a - a') . eps = 0`` and ``a . eps = 0``."""
    vecs = sorted(set(vectors) | {(0, 0, 0)})
    out: set[Vec] = set()
    for a, b in itertools.combinations(vecs, 2):
        d = tuple(x - y for x, y in zip(a, b, strict=True))
        out.add(primitive(d))
    return sorted(out)


def _value(d: Vec, y: Fraction, z: Fraction) -> Fraction:
    return d[0] + d[1] * y + d[2] * z


CORNERS: tuple[Point, ...] = (
    (Fraction(0), Fraction(0)),
    (Fraction(1), Fraction(0)),
    (Fraction(1), Fraction(1)),
)


def inside(p: Point) -> bool:
    """True when ``p`` is in the open triangle ``1 > y > z > 0``."""
    return 1 > p[0] > p[1] > 0


def crossing_lines(normals: Iterable[Vec]) -> list[Vec]:
    """Normals whose line meets the open triangle (values of both signs at the corners)."""
    out = []
    for d in normals:
        vals = [_value(d, y, z) for y, z in CORNERS]
        if min(vals) < 0 < max(vals):
            out.append(d)
    return out


def intersect(p: Vec, q: Vec) -> Point | None:
    """Intersection of two slice lines, or None if parallel."""
    det = p[1] * q[2] - p[2] * q[1]
    if det == 0:
        return None
    y = Fraction(-p[0] * q[2] + p[2] * q[0], det)
    z = Fraction(-p[1] * q[0] + p[0] * q[1], det)
    return (y, z)


def vertex_multiplicities(lines: Sequence[Vec]) -> dict[Point, set[Vec]]:
    """Every intersection point inside the open triangle with the lines through it."""
    pts: dict[Point, set[Vec]] = {}
    for p, q in itertools.combinations(lines, 2):
        x = intersect(p, q)
        if x is not None and inside(x):
            pts.setdefault(x, set()).update((p, q))
    return pts


def signs_at(lines: Sequence[Vec], p: Point) -> tuple[int, ...]:
    """Sign vector of the point ``p`` (integer arithmetic on a common denominator)."""
    q = lcm(p[0].denominator, p[1].denominator)
    a, b = int(p[0] * q), int(p[1] * q)
    out = []
    for d in lines:
        v = d[0] * q + d[1] * a + d[2] * b
        out.append((v > 0) - (v < 0))
    return tuple(out)


def _boundary_crossings(d: Vec) -> list[Point]:
    """Points where the line meets the closed triangle's boundary."""
    sides: list[Vec] = [(0, 0, 1), (-1, 1, 0), (0, 1, -1)]  # z = 0, y = 1, y = z
    out = []
    for s in sides:
        x = intersect(d, s)
        if x is not None and 1 >= x[0] >= x[1] >= 0:
            out.append(x)
    return out


def _along(d: Vec, p: Point) -> Fraction:
    """A parameter along the line (y, or z for a line y = const)."""
    return p[0] if d[2] != 0 else p[1]


def slice_cells(normals: Sequence[Vec]) -> tuple[list[Vec], list[Cell]]:
    """All cells of the open triangle cut by the lines of ``normals`` that cross it.

    Returns:
        ``(lines, cells)``: the crossing lines (the coordinates of every sign vector) and the
        cells, vertices first, then edges, then faces.
    """
    lines = crossing_lines(normals)
    verts = vertex_multiplicities(lines)
    cells: dict[tuple[int, ...], Cell] = {}

    def add(dim: int, p: Point) -> None:
        s = signs_at(lines, p)
        if s not in cells:
            cells[s] = Cell(dim, p, s)

    for p in sorted(verts):
        add(0, p)
    for d in lines:
        pts = _boundary_crossings(d) + [p for p, ls in verts.items() if d in ls]
        ordered = sorted({_along(d, p): p for p in pts}.items())
        for (_, p), (_, q) in itertools.pairwise(ordered):
            add(1, ((p[0] + q[0]) / 2, (p[1] + q[1]) / 2))
    xs = {Fraction(0), Fraction(1)} | {p[0] for p in verts}
    for d in lines:
        xs |= {p[0] for p in _boundary_crossings(d)}
    for a, b in itertools.pairwise(sorted(xs)):
        y = (a + b) / 2
        zs = {Fraction(0), y}
        for d in lines:
            if d[2] != 0:
                z = -(d[0] + d[1] * y) / d[2]
                if 0 < z < y:
                    zs.add(z)
        for z0, z1 in itertools.pairwise(sorted(zs)):
            add(2, (y, (z0 + z1) / 2))
    return lines, sorted(cells.values(), key=lambda c: (c.dim, c.point))


def facet_cells(normals: Sequence[Vec]) -> tuple[list[Vec], list[Cell]]:
    """All cells of the open segment ``eps3 = 0, 0 < eps2 < 1`` of the slice.

    Returns:
        ``(lines, cells)`` with the lines that cross the segment at one point.
    """
    lines = [d for d in normals if d[1] != 0 and 0 < Fraction(-d[0], d[1]) < 1]
    pts = sorted({Fraction(-d[0], d[1]) for d in lines})
    cells = [Cell(0, (y, Fraction(0)), signs_at(lines, (y, Fraction(0))), True) for y in pts]
    bounds = [Fraction(0), *pts, Fraction(1)]
    for a, b in itertools.pairwise(bounds):
        p = ((a + b) / 2, Fraction(0))
        cells.append(Cell(1, p, signs_at(lines, p), True))
    return lines, cells


def census(lines: Sequence[Vec], cells: Sequence[Cell], facet: bool = False) -> list[str]:
    """Recount the cells from the lines alone and compare (see the module docstring).

    Args:
        lines: the lines of the arrangement (coordinates of the sign vectors).
        cells: the enumerated cells.
        facet: True for the facet ``eps3 = 0`` (a 1-d arrangement of points).

    Returns:
        Messages for every discrepancy (empty when the list is exactly the set of cells).
    """
    bad: list[str] = []
    where = "facet eps3=0" if facet else "open cone"
    if facet:
        pts = {Fraction(-d[0], d[1]) for d in lines}
        expected = {0: len(pts), 1: len(pts) + 1}
    else:
        verts = vertex_multiplicities(lines)
        mult = sum(len(ls) for ls in verts.values())
        nl = len(lines)
        expected = {0: len(verts), 1: nl + mult, 2: 1 + nl + mult - len(verts)}
    got = {dim: sum(1 for c in cells if c.dim == dim) for dim in expected}
    if got != expected:
        bad.append(f"{where}: cell counts by dimension {got} != census {expected}")
    if len({c.signs for c in cells}) != len(cells):
        bad.append(f"{where}: two listed cells have the same sign vector")
    for c in cells:
        cone_dim = len(span_basis(c.zero_normals(lines)))
        in_place = c.point[1] == 0 if facet else inside(c.point)
        if cone_dim != c.dim + 1 or not in_place:
            bad.append(f"{where}: cell at {c.point} is not a cell of dimension {c.dim}")
    return bad


def span_basis(normals: Sequence[Vec], dim: int = 3) -> list[Vec]:
    """An integer basis of ``{v : d . v = 0 for all d in normals}`` (exact elimination)."""
    rows = [[Fraction(x) for x in d] for d in normals]
    pivots: list[int] = []
    r = 0
    for col in range(dim):
        piv = next((i for i in range(r, len(rows)) if rows[i][col] != 0), None)
        if piv is None:
            continue
        rows[r], rows[piv] = rows[piv], rows[r]
        pv = rows[r][col]
        rows[r] = [v / pv for v in rows[r]]
        for i in range(len(rows)):
            if i != r and rows[i][col] != 0:
                f = rows[i][col]
                rows[i] = [a - f * b for a, b in zip(rows[i], rows[r], strict=True)]
        pivots.append(col)
        r += 1
    basis: list[Vec] = []
    for free in (c for c in range(dim) if c not in pivots):
        v = [Fraction(0)] * dim
        v[free] = Fraction(1)
        for i, col in enumerate(pivots):
            v[col] = -rows[i][free]
        m = lcm(*(f.denominator for f in v))
        basis.append(primitive([int(f * m) for f in v]))
    return basis
