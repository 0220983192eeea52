"""The independent certified reference for the subsampled Gaussian (proofs_checks).

``proofs_checks/subsampled_reference.py`` encloses delta(eps) of k uses of the
Poisson-subsampled Gaussian without the package's engines (floor-rounded one-use laws from
closed-form normal survival functions in ball arithmetic, composed by exact integer
products).  Here: its exact product against a brute-force convolution, its one-use bounds
against the closed form in mpmath, and its quick mode against our enclosure.
"""

from __future__ import annotations

import io
import random
from fractions import Fraction

import flint
import mpmath as mp
import pytest

from proofs_checks import subsampled_reference as ref

pytestmark = pytest.mark.proofs


def _law(masses: list[int], offset: int = 0) -> ref.Law:
    return ref.Law(offset, Fraction(1, 8), ref._chunks(masses), Fraction(0))


def test_exact_product_is_the_convolution_rounded_down():
    rng = random.Random(5)
    one = 1 << ref.FRAC_BITS
    for na, nb in ((1, 1), (7, 3), (40, 55)):
        a = [rng.randrange(one // (2 * na)) for _ in range(na)]
        b = [rng.randrange(one // (2 * nb)) for _ in range(nb)]
        a[0], b[-1] = a[0] or 1, b[-1] or 1  # no zero ends (trim would drop them)
        got = ref.multiply(_law(a, -3), _law(b, 5), tail=0.0)
        brute = [sum(a[i] * b[n - i] for i in range(na) if 0 <= n - i < nb) >> ref.FRAC_BITS
                 for n in range(na + nb - 1)]
        first = next(n for n, v in enumerate(brute) if v)
        last = max(n for n, v in enumerate(brute) if v)
        assert got.offset == 2 + first
        assert ref._ints(got) == brute[first:last + 1]
    with pytest.raises(ValueError, match="0 < q < 1"):
        ref.one_use(Fraction(1), Fraction(1), 10, 1e-30)
    with pytest.raises(ArithmeticError, match="mass 1"):
        ref.multiply(_law([one - 1, 1]), _law([1]), tail=0.0)


def test_coarsening_rounds_down_and_keeps_the_mass():
    law = _law([3, 5, 7, 11, 13], offset=-3)  # indices -3 .. 1
    c = ref.coarsen(law, 2)
    assert c.offset == -2 and c.h == Fraction(1, 4) and c.shift == Fraction(1, 8)
    assert ref._ints(c) == [3, 5 + 7, 11 + 13]  # -3 -> -2, {-2,-1} -> -1, {0,1} -> 0
    assert ref.total(c.chunks) == ref.total(law.chunks)


def _one_use_delta(sigma, q, eps):
    """delta(eps) of one use (the larger direction), in mpmath at 40 digits."""
    with mp.workdps(40):
        sigma, q, eps = (mp.mpf(x.numerator) / x.denominator for x in (sigma, q, eps))
        sf = lambda x: mp.erfc(x / (sigma * mp.sqrt(2))) / 2  # noqa: E731
        xs = lambda y: sigma**2 * mp.log((mp.e**y - 1 + q) / q) + mp.mpf(1) / 2  # noqa: E731
        x = xs(eps)  # remove: {L > eps} = {x > x(eps)} under q N(1) + (1 - q) N(0), vs N(0)
        rem = q * sf(x - 1) + (1 - q) * sf(x) - mp.e**eps * sf(x)
        add = mp.mpf(0)
        if mp.e**-eps > 1 - q:  # add: {-L > eps} = {x < x(-eps)} under N(0), vs the mixture
            x = xs(-eps)
            add = (1 - sf(x)) - mp.e**eps * (q * (1 - sf(x - 1)) + (1 - q) * (1 - sf(x)))
        return max(rem, add)


@pytest.fixture(scope="module")
def one_use_laws():
    """One use of sigma 1 at rate 1/10 on the grid 2^-10 (both directions)."""
    return ref.one_use(Fraction(1), Fraction(1, 10), 10, 1e-30)


def test_one_use_bounds_hold_the_closed_form(one_use_laws):
    sigma, q = Fraction(1), Fraction(1, 10)
    r = ref.Reference(one_use_laws)
    for eps in ("1/20", "1/2", "2"):
        lo, hi = r.delta_bounds(Fraction(eps))
        truth = Fraction(mp.nstr(_one_use_delta(sigma, q, Fraction(eps)), 35))
        lo_f, hi_f = ref._arb_fraction(lo), ref._arb_fraction(hi)
        assert lo_f <= truth <= hi_f, eps
        # first order in the grid: the bracket is about h = 2^-10 in eps, narrow in delta
        assert hi_f - lo_f < Fraction(2, 100) * hi_f, eps


def test_quick_mode_brackets_our_enclosure():
    out = io.StringIO()
    res = ref.run(ref.QUICK["sigma"], ref.QUICK["q"], ref.QUICK["k"], eps=ref.QUICK["eps"],
                  log2_grid=ref.QUICK["log2_grid"], stream=out)
    assert res["T"] == [Fraction(8, 2**11)] * 2  # k h, both directions
    lo, hi = res["ours"]
    assert res["lo"] <= lo <= hi <= res["hi"], out.getvalue()
    assert "inside the reference's bounds" in out.getvalue()
    # the reference is not vacuous: within 2 % of ours
    assert res["hi"] - res["lo"] < Fraction(2, 100) * hi
    # a wrong enclosure (ours moved up by 2 %) falls outside it
    assert not res["lo"] <= hi * Fraction(102, 100) <= res["hi"]


def test_eps_bounds_by_bisection_are_ordered_and_certified(one_use_laws):
    laws = one_use_laws
    r = ref.Reference((ref.power(laws[0], 4, 10**6, 1e-30), ref.power(laws[1], 4, 10**6, 1e-30)))
    delta = Fraction(1, 10**4)
    lo, hi = r.eps_bounds(delta, tol=Fraction(1, 2**12))
    assert 0 < lo < hi < lo + Fraction(1, 10)
    d = flint.arb(delta.numerator) / delta.denominator
    assert r.delta_bounds(lo)[0] >= d and r.delta_bounds(hi)[1] <= d
