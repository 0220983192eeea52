"""Calibrated memory estimate of the exact route (peak resident set size of a run).

The exact route (:func:`~dpcompose_exact.engines.genfunc.compose_plds`) holds, at its peak, the
k-fold polynomial ``N(w, z)`` (FLINT), its terms converted to Python objects, the region's
deltas (one polynomial of about the same degree and coefficient size per loss value) and,
when closed forms are printed, their decimal strings.  All scale with two sizes:

* ``terms``: distinct loss values times (z-degree + 1), the coefficient slots of ``N``.
  The k-fold sumset of the one-step supports is counted exactly (a 0/1 polynomial power)
  when the product of the spans is moderate, else the product is used (an overcount, so
  the estimate errs towards refusing);
* ``coef_bytes``: ``terms`` times the bytes of the largest coefficient (from the one-step
  l1 norms, ``k log2 ||N_1||_1`` bits);
* the z-density ``rho`` (:func:`z_density`): the fraction of z-slots that can be nonzero
  (the k-fold sumset of the one-step z-exponents).  Empty slots cost a fixed few bytes and
  no coefficient; it matters for a tiny generator beside a large loss (``z^500`` and ``z``).

With one generator and a narrow one-step support (:func:`uses_recurrence`: the paper
case) the route makes only the blocks of losses >= 0 by the power recurrence, keeps one
numerator per row with its denominator factored and writes the rows one at a time
(docs/theory.md, section 16): the peak is the region itself, modelled as
``BASE + a coef_bytes + 40 terms`` times 1.25, with ``a = 0.36`` for decimals only and
``a = 0.75`` with closed forms held (a table, LaTeX or a forms file holds every row's
strings).  Fitted on the paper case, k = 50..500; a sparse z-field (``rho < 1``) adds
``1 - rho`` per coefficient byte (fitted on ``--dp 0.25,0.999 --dp 1,0.99``, k = 600 to
2000, where it costs about 1 byte of RSS per coefficient byte).  JSON and CSV are written row by row
(``closed_forms="streamed"``): the decimals-only figure plus one row's forms
(:func:`row_form_bytes`, twice, and the sympy import of the command line), docs/theory.md
section 16; the JSON output past its forms budget makes no more forms at all.  Measured
on the paper case (``benchmarks/bench_compose.py``): 0.45-0.6 of that estimate from
k = 100 to 1000.  Otherwise:

The model ``BASE + a * rho * coef_bytes + (rho * b + (1 - rho) * empty) * terms`` (``a``
larger when closed forms are printed) was fitted by least squares on the max RSS of
``dpcompose compose ... --format json`` runs in fresh processes
(``benchmarks/bench_memory.py`` prints estimate against measurement: the paper case
k = 50..700, a five-kind list, two and three generators, a sparse field), then multiplied
by a safety factor so that every measured run lies below its estimate (between 0.67 and 1
times it).  The estimate refuses runs over ``--max-memory`` up front; figures were
measured on Linux x86-64 with CPython 3.11 and python-flint 0.6.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import flint

from ..limits import BASE_RSS
from ..regions.pld import PLD
from .certified import sumset_support

__all__ = [
    "problem_sizes",
    "row_form_bytes",
    "estimate_rss",
    "uses_recurrence",
    "z_density",
    "BASE_RSS",
]

# BASE_RSS (dpcompose_exact.limits): the interpreter, FLINT and the package at start
_BASE_LOGS = 78 * 2**20  # the same with sympy, imported to parse logarithms (76-81 MiB)
# (bytes per coefficient slot, per coefficient byte with decimals only, with closed forms),
# fitted by least squares; several generators cost more per coefficient byte (longer
# closed forms and exponent vectors).
_ONE = (86.0, 1.29, 2.71)
_SEVERAL = (48.0, 2.4, 5.83)
_A_DEC_THREE = 5.0  # three or more generators: decimals-only runs cost nearly as much
# Scale so that every measured run lies below its estimate.
_SCALE_ONE = 1.40
_SCALE_SEVERAL = 1.25
_SUMSET_LIMIT = 3_000_000  # count the sumset exactly up to this product of spans
# Bytes of a z-slot that is always zero (sparse fields): fitted on the sparse cases of
# benchmarks/bench_memory.py (a word in FLINT plus conversion overhead: 6-15 measured).
_EMPTY_SLOT = 16.0
# The exact route with one generator and a narrow one-step support makes the blocks by the
# power recurrence (genfunc._top_blocks), keeps one numerator per row with its denominator
# factored and prints row by row: the peak is about the region itself.  Fitted on the paper
# case (k = 50..500): bytes per coefficient byte (decimals only or JSON and CSV, which are
# written row by row; closed forms in a table or LaTeX, which hold every row's strings) and
# per coefficient slot.
RECURRENCE_MAX_SPAN = 16
_RECURRENCE = (0.36, 0.75, 40.0)
_SCALE_RECURRENCE = 1.25
# A sparse z-field on the recurrence route (z-density rho < 1, e.g. eps = (1/4, 1):
# only every fourth z-power can be nonzero) costs more per coefficient byte than the
# paper case: measured with JSON (max RSS, MiB) at k = 600, 1000: 305, 1071 for
# coefficient bytes 217, 985 MiB (and about 7.8 GB at k = 2000 for 7756 MiB), a table
# 423 at k = 600; the paper case's 0.36 per coefficient byte gave 280, 766 and 4466
# MiB for the JSON runs (k = 2000 was accepted under a 6 GiB limit and took 7.8 GB).
# Added per coefficient byte: this times (1 - rho), to decimals only and closed forms.
_SPARSE_RECURRENCE = 1.0


def _den_and_nums(pld: PLD) -> tuple[flint.fmpz_poly, list[flint.fmpz_poly]]:
    """Common denominator of the masses and the numerators over it."""
    den = flint.fmpz_poly([1])
    for _, m in pld.masses:
        den = den * (m.den // den.gcd(m.den))
    return den, [m.num * (den // m.den) for _, m in pld.masses]


def _distinct_losses(kinds: Sequence[tuple[PLD, int]], dim: int) -> int:
    spans = []
    for i in range(dim):
        span = 1
        for pld, count in kinds:
            vals = {loss[i] for loss, _ in pld.masses}
            span += count * (max(vals) - min(vals) if vals else 0)
        spans.append(span)
    product = 1
    for s in spans:
        product *= s
    if product > _SUMSET_LIMIT and dim == 1:
        return product
    if product > _SUMSET_LIMIT:
        # many generators (e.g. subsampled pairs: one prime per loss): the box of the
        # lattice is huge, the support is at most the number of multisets of the letters
        multisets = 1
        for pld, count in kinds:
            multisets *= math.comb(count + len(pld.masses) - 1, max(len(pld.masses) - 1, 0))
        return min(product, multisets)
    if dim == 1:
        return _sumset_size_1d(kinds)
    ctx = flint.fmpz_mpoly_ctx.get(tuple(f"w{i}" for i in range(dim)), "lex")
    total = ctx.from_dict({(0,) * dim: 1})
    for pld, count in kinds:
        low = [min(loss[i] for loss, _ in pld.masses) for i in range(dim)]
        step = ctx.from_dict(
            {tuple(loss[i] - low[i] for i in range(dim)): 1 for loss, _ in pld.masses}
        )
        total = total * step**count
    return len(total)


def _sumset_size_1d(kinds: Sequence[tuple[PLD, int]]) -> int:
    """Distinct loss values of the k-fold composition with one generator, counted exactly.

    The support is the k-fold sumset of the one-step supports
    (:func:`~dpcompose_exact.engines.certified.sumset_support`): sparse steps such as ``{+-500,
    +-1}`` have far fewer values than their span.
    """
    steps = []
    for pld, count in kinds:
        units = [loss[0] for loss, _ in pld.masses]
        steps.append(([u - min(units) for u in units], count))
    return sum(sumset_support(steps))


def _degree_and_bits(kinds: Sequence[tuple[PLD, int]]) -> tuple[int, int]:
    """``(z-degree, coefficient bits)`` bounding the k-fold polynomial's coefficients."""
    zdeg, bits = 0, 0
    for pld, count in kinds:
        den, nums = _den_and_nums(pld)
        zdeg += count * max([p.degree() for p in nums] + [den.degree(), 0])
        norm1 = sum(abs(int(c)) for p in nums for c in p.coeffs())
        bits += count * max(norm1.bit_length(), 1)
    return zdeg, bits


def problem_sizes(kinds: Sequence[tuple[PLD, int]]) -> tuple[int, int]:
    """``(terms, coef_bytes)`` of the exact k-fold polynomial (see the module docstring).

    ``kinds`` must share one domain (:func:`~dpcompose_exact.engines.genfunc.common_domain`).
    """
    kinds = [(p, c) for p, c in kinds if c and p.masses]
    if not kinds:
        return 0, 0
    dim = kinds[0][0].domain.dim
    zdeg, bits = _degree_and_bits(kinds)
    terms = _distinct_losses(kinds, dim) * (zdeg + 1)
    return terms, terms * (bits // 8 + 8)


def row_form_bytes(kinds: Sequence[tuple[PLD, int]]) -> int:
    """Bytes of the printed forms of one row, at most: closed and structured, as Python objects.

    A row's delta has at most ``z-degree + 1`` numerator and denominator coefficients of
    at most the k-fold coefficient bits; each is printed twice (in the closed form and as
    a ``[decimal string, exponent]`` pair of the structured form, about 150 bytes of
    Python objects beside its digits).  Rows written one at a time (JSON, CSV) hold one
    row's forms at a time.
    """
    kinds = [(p, c) for p, c in kinds if c and p.masses]
    if not kinds:
        return 0
    zdeg, bits = _degree_and_bits(kinds)
    digits = bits * 0.302 + 2
    return int(2 * (zdeg + 1) * (2 * digits + 150))


def z_density(kinds: Sequence[tuple[PLD, int]]) -> float:
    """Fraction of the z-coefficient slots of the k-fold polynomials that can be nonzero.

    The z-exponents of the result lie in the k-fold sumset of each kind's numerator and
    denominator exponents (:func:`~dpcompose_exact.engines.certified.sumset_support`).  Dense
    fields give 1; a tiny generator next to a large loss (``z^500`` beside ``z``) gives
    a sparse one, whose empty slots cost about two machine words each.
    """
    steps = []
    for pld, count in kinds:
        if not count or not pld.masses:
            continue
        den, nums = _den_and_nums(pld)
        exps = {i for p in [den, *nums] for i, c in enumerate(p.coeffs()) if c}
        steps.append((sorted(exps), count))
    if not steps or sum(max(e) * c for e, c in steps) > _SUMSET_LIMIT:
        return 1.0
    mask = sumset_support(steps)
    return sum(mask) / len(mask)


def uses_recurrence(kinds: Sequence[tuple[PLD, int]]) -> bool:
    """Whether the exact route makes the blocks by the power recurrence.

    That is one generator and one-step supports spanning at most
    :data:`RECURRENCE_MAX_SPAN` units in all (``kinds`` in one domain).
    """
    live = [p for p, c in kinds if c and p.masses]
    if not live or live[0].domain.dim != 1 or len(live) < len([p for p, c in kinds if c]):
        return False
    span = sum(
        max(loss[0] for loss, _ in p.masses) - min(loss[0] for loss, _ in p.masses) for p in live
    )
    return span <= RECURRENCE_MAX_SPAN


def estimate_rss(kinds: Sequence[tuple[PLD, int]], closed_forms: bool | str = True) -> int:
    """Estimated peak RSS in bytes of an exact-route run (calibrated, see module docstring).

    Args:
        kinds: ``[(pair, count), ...]`` in one domain.
        closed_forms: whether the run prints the closed forms (their decimal strings cost
            about as much again as the region, when every row's strings are held: a table,
            LaTeX, a forms file); ``"streamed"``: closed forms written one row at a time
            (JSON, CSV), whose peak is the decimals-only figure plus one row's forms
            (:func:`row_form_bytes`).
    """
    if closed_forms == "streamed":  # the command line imports sympy for closed forms
        extra = _BASE_LOGS - BASE_RSS if not any(p.domain.primes for p, _ in kinds) else 0
        return estimate_rss(kinds, False) + int(_SCALE_ONE * (extra + 2 * row_form_bytes(kinds)))
    terms, coef_bytes = problem_sizes(kinds)
    live = [p for p, c in kinds if c]
    if uses_recurrence(kinds):
        per_dec, per_closed, per_slot = _RECURRENCE
        per_coef_byte = per_closed if closed_forms else per_dec
        per_coef_byte += _SPARSE_RECURRENCE * (1.0 - z_density(kinds))
        # closed forms in LaTeX import sympy (to typeset the short ones), as logs do
        base = _BASE_LOGS if live[0].domain.primes or closed_forms else BASE_RSS
        return int(_SCALE_RECURRENCE * (base + per_coef_byte * coef_bytes + per_slot * terms))
    several = bool(live) and live[0].domain.dim > 1
    per_term, a_dec, a_closed = _SEVERAL if several else _ONE
    if several and live[0].domain.dim > 2:
        a_dec = _A_DEC_THREE
    a = a_closed if closed_forms else a_dec
    scale = _SCALE_SEVERAL if several else _SCALE_ONE
    base = _BASE_LOGS if live and live[0].domain.primes else BASE_RSS
    rho = z_density(kinds)  # empty slots cost _EMPTY_SLOT bytes, no coefficient bytes
    slots = terms * (_EMPTY_SLOT + (per_term - _EMPTY_SLOT) * rho)
    return int(scale * (base + a * coef_bytes * rho + slots))


# Time model of the exact route (seconds; fitted on the 2-core machine, paper case and mixed
# lists): it only ranks routes and decides whether a tie is worth the exact region.
_EXACT_PER_COEF_BYTE = 2.0e-8
_EXACT_FIXED = 0.01


def exact_seconds_estimate(kinds: Sequence[tuple[PLD, int]]) -> float:
    """Estimated time of the exact route for kinds in one common domain (a heuristic)."""
    _, coef_bytes = problem_sizes(kinds)
    return _EXACT_FIXED + _EXACT_PER_COEF_BYTE * coef_bytes
