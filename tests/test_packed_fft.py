"""The long-double folds' packed real FFT: exactness within its bound, memory, the error term.

docs/theory.md, section 15, "The packed real FFT": a long-double fold transforms its
``n`` real masses as ``n / 2`` complex ones in their own buffer, untangles the half
spectrum in place, and inverts the same way; its 2-norm error bound ``err2`` must hold
the distance to the exact circular convolution power.  References are independent of
the code under test: the exact circular convolution of dyadic masses in Python integers,
``numpy.roll`` for the rotation, ``tracemalloc`` for the bytes.
"""

from __future__ import annotations

import math
import tracemalloc
from fractions import Fraction as F

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcompose_exact as dx
from dpcompose_exact.engines.gridfft import _mixed_power, _real_power
from dpcompose_exact.engines.gridfold import _doubles_in_place, _Fold, _packed_power
from dpcompose_exact.engines.gridmeasure import _Measure

BITS = 30  # masses are integers / 2^BITS: exact doubles, exact integer convolutions


def _circular_power(parts: list[tuple[list[int], int]], n: int) -> list[F]:
    """``prod_m x_m^{*k_m}`` modulo ``x^n - 1``, exactly (integer masses / 2^BITS)."""
    acc = [0] * n
    acc[0] = 1
    scale = 0
    for ints, k in parts:
        for _ in range(k):
            out = [0] * n
            for i, a in enumerate(acc):
                if a:
                    for j, b in enumerate(ints):
                        if b:
                            out[(i + j) % n] += a * b
            acc = out
            scale += BITS
    return [F(a, 2**scale) for a in acc]


def _measure(ints: list[int]) -> _Measure:
    return _Measure(np.array([float(F(v, 2**BITS)) for v in ints]), 0, F(0))


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.integers(0, 2**BITS), min_size=1, max_size=40), st.integers(1, 6)
        ),
        min_size=1, max_size=2,
    ),
    st.integers(4, 160),
)
def test_the_packed_power_is_within_its_bound_of_the_exact_circular_power(parts, half):
    """``||y~ - y||_2 <= err2`` against the exact circular convolution power, folded or
    not (a measure longer than ``n`` wraps), one or two measures, any even length."""
    n = 2 * half
    measures = [(_measure(ints), k) for ints, k in parts]
    y, err2 = _packed_power(measures, n)
    assert y.dtype == np.longdouble and y.size == n
    exact = _circular_power(parts, n)
    dist = math.sqrt(sum(float((F(*a.as_integer_ratio()) - b) ** 2) for a, b in zip(y, exact)))
    assert dist <= err2 * (1 + 1e-9)


def test_the_spectral_error_term_keeps_e1_below_an_ulp():
    """A point mass: every frequency is 1, so each is off by about ``k e1`` after the k-th
    power, ``e1 >= 40 u`` (the componentwise bound, ``u`` the long doubles' unit
    roundoff): the output's 2-norm error bound is at least ``k 40 u``.  With ``log(g +
    e1)`` taken in doubles, ``e1 ~ 1e-17`` vanished next to ``g = 1`` and the bound was
    about ``8 k u``, the products' rounding alone."""
    u = float(np.finfo(np.longdouble).eps) / 2
    k = 300
    m = _Measure(np.array([1.0]), 0, F(0))
    _, err2 = _packed_power([(m, k)], 64)
    assert err2 >= k * 40 * u


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3000), st.data())
def test_the_doubles_in_place_are_the_rotated_window(n, data):
    """``_doubles_in_place`` against ``numpy.roll``: the window ``size`` from ``start``."""
    start = data.draw(st.integers(0, n - 1))
    size = data.draw(st.integers(1, n))
    rng = np.random.default_rng(n * 7919 + start)
    y = rng.random(n).astype(np.longdouble) * np.longdouble(3) ** 40
    ref = np.roll(y.astype(np.float64), -start)[:size]
    got = _doubles_in_place(y.copy(), start, size)
    assert got.dtype == np.float64 and np.array_equal(got, ref)


def _sub(sigma: str, q: str):
    return dx.gaussian_noise(sigma).subsample(q).loss_pair().grid_noise()


def _traced_fold(parts, h, **precision):
    """A fold built under tracemalloc (after one untraced build for the imports): the fold,
    the bytes it holds and the peak while it was built."""
    _Fold(parts, h, **precision)  # imports
    tracemalloc.start()
    try:
        fold = _Fold(parts, h, **precision)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return fold, held, peak


def test_a_long_fold_peaks_at_one_buffer():
    """A long-double fold of one measure peaks at about one buffer of ``nfft`` long doubles
    (16 bytes per point, plus chunks; the real FFT's input, output and inverse, and the
    folding's index arrays, made it about 74), and keeps its window as doubles (8 bytes
    per entry); its bounds and those of the fold in doubles enclose the same value."""
    h = F(1, 1000)
    m = _Measure(np.full(4000, 2.0**-12), -2000, F(0))  # uniform: exact doubles
    parts = [(m, 600)]
    fold, held, peak = _traced_fold(parts, h, long=True)
    assert fold.nfft > 400_000
    assert peak <= 16 * fold.nfft + 2 * 2**20  # the buffer, and chunks of 2^12 to 2^14
    assert held <= 8 * fold.y.size * 1.1 + 200_000
    dbl = _Fold(parts, h)
    for eps in (F(1, 2), F(5)):
        up_l, up_d = fold.bound(eps, True), dbl.bound(eps, True)
        lo_l, lo_d = fold.bound(eps, False), dbl.bound(eps, False)
        assert 0 < max(lo_l, lo_d) <= min(up_l, up_d)  # both enclose the same value


def test_long_folds_get_even_lengths():
    """The packed transform needs an even length: a long fold's is even, whatever its
    window (widths 16 to 2^12 and odd ones among them); it covers the window."""
    for support in (3, 17, 101, 1001):
        m = _Measure(np.full(support, 1.0 / 1024), 0, F(0))
        for k in (1, 3, 7):
            fold = _Fold([(m, k)], F(1, 100), long=True)
            assert fold.nfft % 2 == 0
            assert fold.y.size == fold.w_hi - fold.w_lo + 1 <= fold.nfft


#: masses of a wide dynamic range: ``a 2^e / 2^WIDE`` (exact doubles, ``a < 2^20``)
WIDE = 70
_wide_ints = st.lists(
    st.one_of(
        st.just(0),
        st.builds(lambda a, e: a << e, st.integers(1, 2**20), st.integers(0, WIDE - 20)),
    ),
    min_size=1, max_size=30,
)


def _wide_power(parts: list[tuple[list[int], int]], n: int) -> list[F]:
    """:func:`_circular_power` of the masses ``ints / 2^WIDE``, exactly."""
    acc = [F(1)] + [F(0)] * (n - 1)
    for ints, k in parts:
        for _ in range(k):
            out = [F(0)] * n
            for i, a in enumerate(acc):
                if a:
                    for j, b in enumerate(ints):
                        if b:
                            out[(i + j) % n] += a * F(b, 2**WIDE)
            acc = out
    return acc


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(_wide_ints, st.integers(1, 5)), min_size=1, max_size=2),
    st.integers(4, 120),
)
def test_the_mixed_power_is_within_its_bound_of_the_exact_circular_power(parts, half):
    """Long-double forward transforms, the powers and the inverse in doubles
    (:func:`_mixed_power`, docs/theory.md, section 15, "Long-double forward transforms"):
    ``||y~ - y||_2 <= err2`` against the exact circular convolution power in fractions, for
    masses spread over 2^-70 to 1 (a dominant atom next to tiny ones: the dynamic range
    where each frequency's error is far below the doubles' ``phi ||x||_1``), folded or not,
    one or two measures."""
    n = 2 * half
    measures = [(_Measure(np.array([float(F(v, 2**WIDE)) for v in ints]), 0, F(0)), k)
                for ints, k in parts]
    y, err2 = _mixed_power(measures, n)
    assert y.dtype == np.float64 and y.size == n
    exact = _wide_power(parts, n)
    dist = math.sqrt(sum(float((F(a) - b) ** 2) for a, b in zip(y.tolist(), exact)))
    assert dist <= err2 * (1 + 1e-9)


def test_the_mixed_bound_is_far_below_the_doubles_one_and_holds():
    """An atom of mass ``1 - 10^-4`` next to a spread tail, ``k = 3000`` (one use of a small
    rate, many uses: the forward transforms' a priori error, ``k phi ||x||_1``, dominated
    the doubles' bound): the mixed bound is over 20 times smaller, and both hold the long
    doubles' power (within its own bound)."""
    x = np.zeros(4000)
    x[0], x[1:] = 1 - 1e-4, 1e-4 / 3999
    parts = [(_Measure(x, 0, F(0)), 3000)]
    n = 1 << 15
    yd, ed = _real_power(parts, n)
    ym, em = _mixed_power(parts, n)
    yl, el = _packed_power(parts, n)
    assert em < ed / 20
    for y, e in ((yd, ed), (ym, em)):
        assert float(np.linalg.norm((y.astype(np.longdouble) - yl).astype(np.float64))) <= e + el


def test_a_mixed_fold_encloses_what_the_doubles_fold_does():
    """A fold with ``mixed`` gets an even length and bounds enclosing the same value as the
    fold in doubles, narrower."""
    h = F(1, 1000)
    m = _Measure(np.full(4000, 2.0**-12), -2000, F(0))
    parts = [(m, 600)]
    mixed, dbl = _Fold(parts, h, mixed=True), _Fold(parts, h)
    assert mixed.nfft % 2 == 0 and mixed.err2 < dbl.err2
    for eps in (F(1, 2), F(5)):
        lo_m, up_m = mixed.bound(eps, False), mixed.bound(eps, True)
        lo_d, up_d = dbl.bound(eps, False), dbl.bound(eps, True)
        assert 0 < max(lo_m, lo_d) <= min(up_m, up_d)
        assert up_m - lo_m <= up_d - lo_d


def test_a_mixed_fold_peaks_at_one_buffer():
    """A fold with long-double forward transforms peaks at about one buffer of ``nfft`` long
    doubles too: the spectrum is rounded to complex doubles in the buffer itself, which is
    then shrunk to them (a separate array of them made it 24 bytes per point)."""
    h = F(1, 1000)
    m = _Measure(np.full(4000, 2.0**-12), -2000, F(0))
    parts = [(m, 600)]
    fold, _, peak = _traced_fold(parts, h, mixed=True)
    assert fold.nfft > 400_000
    assert peak <= 16 * fold.nfft + 2 * 2**20
