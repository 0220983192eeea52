"""An independent certified reference for the Poisson-subsampled Gaussian, k uses.

``python -m proofs_checks.subsampled_reference [--quick] [--sigma S --q Q -k K --delta D |
--eps E] [--log2-grid B] [--cap N]``: encloses ``delta(eps)`` (or ``eps(delta)``) of ``k``
uses of the Gaussian mechanism (sensitivity 1, noise ``sigma``) under Poisson subsampling at
rate ``q``, add/remove neighbours, without any of ``dpcompose_exact``'s engines, and
compares the enclosure with the package's own (through its front door, ``dx.compose``).

Mathematics (docs/theory.md: section 3, the privacy-loss view of a composition; section
15, subsampling; section 18, the loss grid of additive noise, which this replaces by exact
integer arithmetic).  One use in the remove direction is the pair
``P = q N(1, s^2) + (1 - q) N(0, s^2)``, ``Q = N(0, s^2)``, with loss
``L(x) = log(1 - q + q e^((2x - 1) / (2 s^2)))``, increasing in ``x`` from ``log(1 - q)``;
the add direction is ``(Q, P)``, with loss ``-L(x)`` under ``Q``.  For either direction,
``k`` uses give ``delta(eps) = E[(1 - e^(eps - S))_+]`` with ``S`` the sum of ``k``
independent copies of the one-use loss under the first measure, and the composition's
``delta(eps)`` is the larger of the two directions.  The function ``(1 - e^(eps - s))_+``
increases in ``s``; everything below follows from that and from positivity:

1. *Discretisation, floor.*  Each use's loss is rounded down to the grid ``h Z``
   (``h = 2^-B``): the bin ``[i h, (i + 1) h)`` gets the mass of ``{x : L(x) in it}``,
   a difference of closed-form normal survival functions at ``x(l) = s^2 log((e^l - 1 +
   q) / q) + 1/2``, evaluated in ball arithmetic (python-flint's arb, 200 bits).  The
   rounded sum ``S''`` satisfies ``S - T <= S'' <= S`` with ``T = k h`` (each use moves down
   by less than ``h``).
2. *Coarsening, floor.*  A law on the grid ``g`` is moved to the grid ``r g`` by rounding
   down again (at most ``(r - 1) g`` more per copy); ``T`` is the exact sum of every
   rounding's largest step over the copies it reaches, tracked as a fraction.
3. *Composition, exact.*  Masses are fixed-point integers ``floor(m 2^128)``; the ``k``-th
   power is taken by repeated squaring, each product an exact integer polynomial product
   (Kronecker substitution: one GMP multiplication of packed 256-bit slots; a slot cannot
   overflow as both factors' total masses are below 1), rounded down to 128 bits again.
   Far tails of each power whose mass is below ``--tail`` are dropped.  Every step only
   lowers masses, so the computed masses ``m_i`` lie below those of the exact law of
   ``S''`` bin by bin, and their deficit is ``E = 1 - sum m_i`` (that law has mass 1).
4. *Bounds.*  ``sum_i m_i (1 - e^(eps - l_i))_+ <= delta(eps)`` and
   ``delta(eps) <= sum_i m_i (1 - e^(eps - l_i - T))_+ + E`` (the missing mass counted with
   the largest weight, 1), per direction, in arb.  ``eps(delta)`` is enclosed by bisection
   on these two certified functions (each decreases in ``eps``).

The reference is as sharp as ``T = k h`` allows (first order in ``h``): it settles which of
two enclosures far apart is right, not the last digits of ours.  It shares no code with
the package: its grids, transforms and error bounds are the engines' (numpy FFTs with a
posteriori error bounds); here everything is exact integers but the closed forms.

What it settled (the default run, ``benchmarks/bench_box.py --seed 0`` row 9: sigma 1.7,
q 0.0542, k 78610, eps(8e-14)): on the grid 2^-18 (``T = 0.3022``; laws of at most 2.5
million bins; 227 CPU seconds) eps(8e-14) lies in [118.3858967, 118.6881161] (on 2^-17:
[118.2365475, 118.8374653], 186 CPU seconds); ours, [118.536768372, 118.537133242], is
inside, while dp_accounting's PLD (grid 1e-4) gives 119.83 optimistic: above the truth by
at least 1.13, not the lower bound it is meant to be (its delta at our upper end, 5.7e-13,
is above the certified upper bound there, 1.003e-13 on the grid 2^-17: its FFT round-off
at this delta).  Likewise ``--sigma 1.09 --q 0.0375 -k 68624 --delta 1.9e-15 --log2-grid 17``
(``--seed 2`` row 17; 167 CPU seconds): eps in [149.2344723, 149.7601280]; ours,
[149.496476567, 149.49767819], is inside; PLD's optimistic 153.20 is above the truth by at
least 3.43 (its delta at our upper end, 6.0e-14, against the certified upper bound 2.271e-15).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from fractions import Fraction

import flint
import gmpy2
import numpy as np

FRAC_BITS = 128
"""Fixed point: a mass ``m`` is stored as ``floor(m 2^128)`` in four 32-bit chunks."""

PREC = 200
"""Working precision (bits) of the closed-form masses."""

_MASK = np.uint64(0xFFFFFFFF)


@dataclass
class Law:
    """A sub-probability law on the grid ``h Z``: bin ``offset + i`` has mass ``chunks[i]``.

    Attributes:
        offset: the grid index of the first bin (the loss ``offset * h``).
        h: the grid step (a power of 2).
        chunks: ``(n, 4)`` uint64, the mass ``floor(m 2^128)`` in 32-bit chunks (little end).
        shift: the largest amount by which the rounding moved a loss down (``T``).
    """

    offset: int
    h: Fraction
    chunks: np.ndarray
    shift: Fraction

    def __len__(self) -> int:
        return len(self.chunks)


def _normalize(c: np.ndarray) -> np.ndarray:
    """Carry every chunk above 32 bits into the next (the value is below 2^128)."""
    for j in range(3):
        carry = c[:, j] >> np.uint64(32)
        c[:, j] &= _MASK
        c[:, j + 1] += carry
    if np.any(c[:, 3] >> np.uint64(32)):
        raise ArithmeticError("a mass reached 1 in fixed point")
    return c


def total(c: np.ndarray) -> int:
    """The exact sum of the fixed-point masses (an integer; 2^128 is mass 1)."""
    if len(c) >= 2**32:
        raise ValueError("too many bins for exact chunk sums")
    return sum(int(c[:, j].sum(dtype=np.uint64)) << (32 * j) for j in range(4))


def _as_floats(c: np.ndarray) -> np.ndarray:
    """Approximate masses (doubles), only to choose where to trim."""
    f = c.astype(np.float64)
    return (f[:, 0] + f[:, 1] * 2.0**32 + f[:, 2] * 2.0**64 + f[:, 3] * 2.0**96) * 2.0**-128


def trim(law: Law, tail: float) -> Law:
    """Drop the bins at either end whose summed mass is below ``tail`` (and zero bins).

    Dropping only lowers masses; the mass dropped is counted in ``E = 1 - sum m_i``.
    """
    f = _as_floats(law.chunks)
    cut = tail * (1 - 1e-9)
    lo = int(np.searchsorted(np.cumsum(f), cut, side="right"))
    hi = len(f) - int(np.searchsorted(np.cumsum(f[::-1]), cut, side="right"))
    nz = np.flatnonzero(f[lo:hi])
    if len(nz) == 0:
        raise ValueError("the whole law is below the tail budget")
    lo, hi = lo + int(nz[0]), lo + int(nz[-1]) + 1
    return Law(law.offset + lo, law.h, law.chunks[lo:hi].copy(), law.shift)


def coarsen(law: Law, r: int) -> Law:
    """The law on the grid ``r h``, each loss rounded down to it.

    The rounding moves the sum this law is the law of by at most ``(r - 1) h`` more.
    """
    if r == 1:
        return law
    idx = law.offset + np.arange(len(law), dtype=np.int64)
    new = idx // r  # floor division: rounds down for negative losses too
    starts = np.concatenate(([0], np.flatnonzero(np.diff(new)) + 1))
    sums = np.add.reduceat(law.chunks, starts, axis=0)  # at most r chunks < 2^32 per sum
    return Law(int(new[0]), law.h * r, _normalize(sums), law.shift + (r - 1) * law.h)


def _pack(c: np.ndarray) -> gmpy2.mpz:
    """The masses as one integer: slot ``i`` (256 bits) holds mass ``i`` (128 bits)."""
    limbs = np.zeros((len(c), 4), dtype=np.uint64)
    limbs[:, 0] = c[:, 0] | (c[:, 1] << np.uint64(32))
    limbs[:, 1] = c[:, 2] | (c[:, 3] << np.uint64(32))
    return _from_bytes(limbs.tobytes())


def _from_bytes(data: bytes) -> gmpy2.mpz:
    """A little-endian integer (gmpy2 >= 2.2 reads it directly; else through Python's int)."""
    if hasattr(gmpy2.mpz, "from_bytes"):
        return gmpy2.mpz.from_bytes(data, "little")
    return gmpy2.mpz(int.from_bytes(data, "little"))  # pragma: no cover


def multiply(a: Law, b: Law, tail: float) -> Law:
    """The law of the sum of independent ``a`` and ``b`` (exact product, masses floored).

    Slot ``n`` of the packed product is ``sum_i a_i b_(n-i) < (sum a)(sum b) < 2^256``: no
    carry between slots, so the product's slots are the exact convolution; each is then
    divided by ``2^128`` rounding down (the upper two 64-bit limbs).
    """
    if a.h != b.h:
        raise ValueError("laws on different grids")
    one = 1 << FRAC_BITS
    if total(a.chunks) >= one or total(b.chunks) >= one:
        raise ArithmeticError("a law of mass 1 in fixed point: the slots could overflow")
    pa = _pack(a.chunks)
    prod = gmpy2.square(pa) if a is b else pa * _pack(b.chunks)
    n = len(a) + len(b) - 1
    data = prod.to_bytes(32 * n, "little") if hasattr(prod, "to_bytes") else (
        int(prod).to_bytes(32 * n, "little")
    )
    limbs = np.frombuffer(data, dtype=np.uint64).reshape(n, 4)
    c = np.empty((n, 4), dtype=np.uint64)
    c[:, 0] = limbs[:, 2] & _MASK
    c[:, 1] = limbs[:, 2] >> np.uint64(32)
    c[:, 2] = limbs[:, 3] & _MASK
    c[:, 3] = limbs[:, 3] >> np.uint64(32)
    return trim(Law(a.offset + b.offset, a.h, c, a.shift + b.shift), tail)


def _fixed(m: flint.arb) -> int:
    """``floor(lower(m) 2^128)``, at least 0: a fixed-point mass never above ``m``."""
    lo = (m * (1 << FRAC_BITS)).lower()
    man, exp = (int(t) for t in lo.mid().man_exp())
    v = man << exp if exp >= 0 else man >> -exp
    return max(v, 0)


def _chunks(values: list[int]) -> np.ndarray:
    c = np.zeros((len(values), 4), dtype=np.uint64)
    for j in range(4):
        c[:, j] = np.array([(v >> (32 * j)) & 0xFFFFFFFF for v in values], dtype=np.uint64)
    return c


def one_use(sigma: Fraction, q: Fraction, log2_grid: int, tail: float) -> tuple[Law, Law]:
    """The floor-rounded loss laws of one use, remove and add directions (masses certified).

    Grid points ``l_i = i h``, ``h = 2^-log2_grid``; ``x_i = x(l_i)`` (``-inf`` for
    ``l_i <= log(1 - q)``).  Remove: bin ``i`` is ``{x_i <= x < x_(i+1)}`` under ``P``;
    add: bin ``j`` (``-L in [j h, (j + 1) h)``) is ``{x_(-j-1) < x <= x_(-j)}`` under
    ``Q``.  The grid runs up to where both survival functions are below ``tail``.

    Raises:
        ValueError: unless ``0 < q < 1`` and ``sigma > 0``.
    """
    if not (0 < q < 1 and sigma > 0):
        raise ValueError(f"q = {q}, sigma = {sigma}: the reference takes 0 < q < 1, sigma > 0")
    with flint.ctx.workprec(PREC):
        h = flint.arb(2) ** -log2_grid
        s = flint.arb(sigma.numerator) / sigma.denominator
        qq = flint.arb(q.numerator) / q.denominator
        omq, s2 = 1 - qq, s * s
        c = 1 / (s * flint.arb(2).sqrt())
        half = flint.arb(1) / 2
        i_min = int(float((omq.log() / h).mid()) // 1)
        while not (flint.arb(i_min) * h).exp() < omq:
            i_min -= 1
        while not omq < (flint.arb(i_min + 1) * h).exp():
            i_min += 1  # now i_min h < log(1 - q) < (i_min + 1) h, certified
        sf0_list, sf1_list = [flint.arb(1)], [flint.arb(1)]  # x_(i_min) = -inf
        i = i_min + 1
        while True:
            t = (flint.arb(i) * h).exp() - omq
            x = s2 * (t / qq).log() + half
            sf0, sf1 = (x * c).erfc() / 2, ((x - 1) * c).erfc() / 2
            sf0_list.append(sf0)
            sf1_list.append(sf1)
            if (qq * sf1 + omq * sf0).upper() < tail and sf0.upper() < tail:
                break
            i += 1
        i_max = i
        # remove: bins i_min .. i_max - 1
        mix = [qq * a + omq * b for a, b in zip(sf1_list, sf0_list, strict=True)]
        rem = [_fixed(mix[n] - mix[n + 1]) for n in range(len(mix) - 1)]
        # add: bin j holds x in (x_(-j-1), x_(-j)], j from -i_max .. -i_min - 1
        add = [_fixed(sf0_list[n] - sf0_list[n + 1]) for n in range(len(sf0_list) - 1)]
    hq = Fraction(1, 2**log2_grid)
    remove = Law(i_min, hq, _chunks(rem), hq)
    add_law = Law(-i_max, hq, _chunks(add[::-1]), hq)
    return remove, add_law


def power(
    base: Law, k: int, cap: int, tail: float, log: list[str] | None = None, name: str = ""
) -> Law:
    """The law of ``k`` independent copies by repeated squaring, coarsened to ``cap`` bins.

    ``shift`` of the result is the exact bound ``T``: each law's ``shift`` is per copy of
    what it represents, and adds up under products.
    """
    result: Law | None = None
    kk, level = k, 0
    while True:
        if kk & 1:
            if result is None:
                result = base
            else:
                r = int(base.h / result.h)
                if r < 1:
                    raise ValueError("the accumulator is coarser than the base")
                result = multiply(coarsen(result, r), base, tail)
            while len(result) > cap:
                result = coarsen(result, 2)
        kk >>= 1
        if not kk:
            break
        base = multiply(base, base, tail)
        while len(base) > cap:
            base = coarsen(base, 2)
        level += 1
        if log is not None:
            log.append(f"  {name} 2^{level} uses: {len(base)} bins, grid {base.h}")
    assert result is not None
    return result


def _ints(law: Law) -> list[int]:
    """The fixed-point masses as Python integers."""
    c = law.chunks
    return [int(a) | int(b) << 32 | int(d) << 64 | int(e) << 96 for a, b, d, e in c.tolist()]


class Tail:
    """Suffix sums of one law for ``delta(eps) = sum_(l_i > eps) m_i (1 - e^(eps - l_i))``.

    With ``l_i = i h``: the sum is ``M_i0 - e^eps Z_i0``, ``M_i0 = sum_(i >= i0) m_i`` (exact
    integers) and ``Z_i0 = sum_(i >= i0) m_i e^(-i h)`` (arb, 200 bits: positive terms), so
    that each query costs O(1) after one pass.  Only losses above ``-floor`` are kept (the
    queries are at ``eps >= 0`` with losses moved up by at most ``floor``).
    """

    def __init__(self, law: Law, floor: Fraction) -> None:
        self.law = law
        ints = _ints(law)
        first = max(0, int(-floor / law.h) - law.offset - 1)
        self.first = first
        n = len(ints)
        self.mass = [0] * (n - first + 1)
        self.z = [flint.arb(0)] * (n - first + 1)
        with flint.ctx.workprec(PREC):
            eh = flint.arb(law.h.numerator) / law.h.denominator  # exact: h is a power of 2
            up = eh.exp()
            zi = (-(law.offset + n - 1) * eh).exp()  # e^(-l) at the top bin
            m, z = 0, flint.arb(0)
            for j in range(n - 1, first - 1, -1):
                v = ints[j]
                m += v
                if v:
                    z += v * zi
                self.mass[j - first], self.z[j - first] = m, z
                zi *= up

    def delta(self, eps: Fraction, up: Fraction) -> flint.arb:
        """``sum_i m_i (1 - e^(eps - l_i - up))_+`` (masses in units of 2^-128), in arb."""
        law = self.law
        i0 = (eps - up) // law.h + 1  # the first grid index with l_i + up > eps
        j = int(i0) - law.offset - self.first
        if j < 0 and self.first == 0:
            j = 0  # every bin is above eps
        elif j < 0:
            raise ValueError(f"eps = {eps} below the losses kept")
        if j >= len(self.mass) - 1:
            return flint.arb(0)
        with flint.ctx.workprec(PREC):
            d = eps - up
            scale = flint.arb(2) ** -FRAC_BITS
            e = (flint.arb(d.numerator) / d.denominator).exp()
            return (flint.arb(self.mass[j]) - e * self.z[j]) * scale


@dataclass
class Reference:
    """The composed laws of both directions and what bounds delta(eps)."""

    laws: tuple[Law, Law]  # remove, add

    def __post_init__(self) -> None:
        self._tails = [Tail(law, law.shift + law.h) for law in self.laws]

    def deficit(self, law: Law) -> flint.arb:
        """``E = 1 - sum m_i``, exact."""
        one = 1 << FRAC_BITS
        return flint.arb(one - total(law.chunks)) * flint.arb(2) ** -FRAC_BITS

    def delta_bounds(self, eps: Fraction) -> tuple[flint.arb, flint.arb]:
        """Certified ``(lower, upper)`` of the composition's ``delta(eps)`` (floats never)."""
        lows, highs = [], []
        for law, tail in zip(self.laws, self._tails, strict=True):
            lows.append(tail.delta(eps, Fraction(0)).lower())
            highs.append((tail.delta(eps, law.shift) + self.deficit(law)).upper())
        return max(lows), max(highs)

    def eps_bounds(self, delta: Fraction, tol: Fraction = Fraction(1, 10**6)) -> tuple:
        """``(lo, hi)`` with ``lo <= eps(delta) <= hi``, by bisection on the two bounds."""
        d = flint.arb(delta.numerator) / delta.denominator

        def below(e: Fraction) -> bool:  # certified: delta(e) >= delta, so e <= eps(delta)
            return self.delta_bounds(e)[0] >= d

        def above(e: Fraction) -> bool:  # certified: delta(e) <= delta, so eps(delta) <= e
            return self.delta_bounds(e)[1] <= d

        return _bisect(below, True, tol), _bisect(above, False, tol)


def _bisect(pred, lower: bool, tol: Fraction) -> Fraction:
    """The largest ``e`` with ``pred`` (``lower``) or the smallest (else), within ``tol``."""
    a, b = Fraction(0), Fraction(1)
    if lower and not pred(a):
        return Fraction(0)
    while pred(b) == lower:
        a, b = b, 2 * b
    # pred(a) == lower (or a = 0), pred(b) != lower
    while b - a > tol:
        m = (a + b) / 2
        if pred(m) == lower:
            a = m
        else:
            b = m
    return a if lower else b


def reference(
    sigma: Fraction, q: Fraction, k: int, log2_grid: int, cap: int, tail: float,
    log: list[str] | None = None,
) -> Reference:
    """Build the composed laws of both directions (see the module docstring)."""
    remove, add = one_use(sigma, q, log2_grid, tail / k)
    if log is not None:
        log.append(f"  one use: remove {len(remove)} bins, add {len(add)} bins, grid {remove.h}")
    laws = (power(remove, k, cap, tail, log, "remove"), power(add, k, cap, tail, log, "add"))
    return Reference(laws)


#: the box's row (bench_box --seed 0 -n 12, row 9) and what each side said of it
ROW9 = {"sigma": "17/10", "q": "271/5000", "k": 78610, "delta": "8e-14"}
ROW9_PLD = Fraction("119.8")
"""dp_accounting's PLD (grid 1e-4), pessimistic and optimistic alike: about 119.8."""

QUICK = {"sigma": "1", "q": "1/10", "k": 8, "eps": "1", "log2_grid": 11}
"""The quick mode's setting (a few CPU seconds; the test suite runs it)."""


def ours(sigma: str, q: str, k: int, query: str, at: str) -> tuple[Fraction, Fraction]:
    """The package's certified enclosure, through its front door (to compare only)."""
    import dpcompose_exact as dx

    comp = dx.compose([(dx.gaussian_noise(sigma).subsample(q), k)])
    value = comp.epsilon(at) if query == "eps" else comp.delta(at)
    lo, hi = value.interval(12)
    return Fraction(lo), Fraction(hi)


def run(
    sigma: str, q: str, k: int, *, delta: str | None = None, eps: str | None = None,
    log2_grid: int = 18, cap: int = 2_500_000, tail: float = 1e-24, compare: bool = True,
    stream=sys.stdout,
) -> dict:
    """Build the reference, print it next to ours, and return the figures.

    Returns:
        A dict with the reference's bounds (``lo``, ``hi``: of eps(delta) or delta(eps)),
        ours (``ours``: ``(lo, hi)`` or None), ``T``, the deficits, CPU seconds, and
        ``consistent`` (the two enclosures meet).
    """
    t0 = time.process_time()
    log: list[str] = []
    ref = reference(Fraction(sigma), Fraction(q), k, log2_grid, cap, tail, log)
    built = time.process_time() - t0
    out: dict = {"T": [law.shift for law in ref.laws], "build_cpu": built}
    out["deficit"] = [ref.deficit(law).upper() for law in ref.laws]
    pr = lambda text: print(text, file=stream, flush=True)  # noqa: E731
    pr(f"# reference: Poisson-subsampled Gaussian sigma={sigma} q={q} k={k}, grid 2^-{log2_grid}"
       f", cap {cap} bins, tail {tail:g}")
    for line in log:
        pr(line)
    pr(f"  T (largest total rounding) remove {float(ref.laws[0].shift):.6g}, add "
       f"{float(ref.laws[1].shift):.6g}; missing mass E remove {out['deficit'][0]}, add "
       f"{out['deficit'][1]}; built in {built:.1f} CPU s")
    if delta is not None:
        lo, hi = ref.eps_bounds(Fraction(delta))
        out.update(lo=lo, hi=hi)
        pr(f"  eps({delta}) in [{float(lo):.7f}, {float(hi):.7f}] (reference, certified)")
        query, at = "eps", delta
    else:
        assert eps is not None
        dlo, dhi = ref.delta_bounds(Fraction(eps))
        lo, hi = _arb_fraction(dlo), _arb_fraction(dhi)
        out.update(lo=lo, hi=hi)
        pr(f"  delta({eps}) in [{dlo}, {dhi}] (reference, certified)")
        query, at = "delta", eps
    out["ours"] = None
    if compare:
        o = ours(sigma, q, k, query, at)
        out["ours"] = o
        out["consistent"] = o[0] <= hi and lo <= o[1]
        pr(f"  ours [{float(o[0]):.12g}, {float(o[1]):.12g}]: "
           + ("inside the reference's bounds" if lo <= o[0] and o[1] <= hi else
              "meets the reference's bounds" if out["consistent"] else "OUTSIDE (unsound)"))
        if query == "eps":
            d = Fraction(delta)
            for name, e in (("our lower end", o[0]), ("our upper end", o[1])):
                b = ref.delta_bounds(e)
                pr(f"  delta at {name} {float(e):.10g}: [{b[0]}, {b[1]}] vs {float(d):.3g}")
    out["cpu"] = time.process_time() - t0
    pr(f"  total {out['cpu']:.1f} CPU s")
    return out


def _arb_fraction(x: flint.arb) -> Fraction:
    """An exact arb (an endpoint) as a fraction."""
    man, exp = (int(t) for t in x.mid().man_exp())
    return Fraction(man) * Fraction(2) ** exp


def main(argv: list[str] | None = None) -> int:
    """Command line: the box's row 9 by default, ``--quick`` a small setting."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a small setting (seconds)")
    ap.add_argument("--sigma", default=ROW9["sigma"])
    ap.add_argument("--q", default=ROW9["q"])
    ap.add_argument("-k", type=int, default=ROW9["k"])
    ap.add_argument("--delta", default=None, help="eps(delta) (default: the row's 8e-14)")
    ap.add_argument("--eps", default=None, help="delta(eps) instead")
    ap.add_argument("--log2-grid", type=int, default=18, help="grid step 2^-B (default 18)")
    ap.add_argument("--cap", type=int, default=2_500_000, help="most bins of a law")
    ap.add_argument("--tail", type=float, default=1e-24, help="mass dropped per trim")
    ap.add_argument("--no-compare", action="store_true", help="skip the package's enclosure")
    a = ap.parse_args(argv)
    if a.quick:
        res = run(QUICK["sigma"], QUICK["q"], QUICK["k"], eps=QUICK["eps"],
                  log2_grid=QUICK["log2_grid"], compare=not a.no_compare)
    else:
        delta = a.delta if a.delta is not None or a.eps is not None else ROW9["delta"]
        res = run(a.sigma, a.q, a.k, delta=delta, eps=a.eps, log2_grid=a.log2_grid, cap=a.cap,
                  tail=a.tail, compare=not a.no_compare)
        if delta == ROW9["delta"] and (a.sigma, a.q, a.k) == (ROW9["sigma"], ROW9["q"], ROW9["k"]):
            verdict = "above" if ROW9_PLD > res["hi"] else "not above"
            print(f"  dp_accounting's PLD value {float(ROW9_PLD)} is {verdict} the reference's "
                  f"upper bound {float(res['hi']):.7f}"
                  + (" (PLD's optimistic value is not a lower bound here)"
                     if ROW9_PLD > res["hi"] else ""))
    return 0 if res.get("consistent", True) else 1


if __name__ == "__main__":
    raise SystemExit(main())
