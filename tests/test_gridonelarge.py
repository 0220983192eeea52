"""The part with one large use through its closed-form tail (engines.gridonelarge).

References are computed apart from the package in mpmath: the one-use tail ``G_theta(c)``
as an integral of the two densities beyond the crossing output, and two uses' forward
``delta(eps)`` as the first use's output integrated against the one-use closed form of the
second.  The split's measures are made small here (a coarse probe) so that each test takes
well under a second; the benchmark ``bench_widths.py`` runs the package's own settings.
"""

from __future__ import annotations

from fractions import Fraction

import flint
import mpmath as mp
import pytest
from quadrature import two_uses as _two_uses

import dpcompose_exact as dx
from dpcompose_exact.engines import gridonelarge, gridsplit


def _sub(sigma: str, q: str):
    return dx.gaussian_noise(sigma).subsample(q).loss_pair().grid_noise()


def _g_ref(q: str, sigma: str, eps: str, c: Fraction, theta: Fraction) -> mp.mpf:
    """``E_A[(1 - e^{eps - c - L})_+; L > theta]`` by quadrature of the densities."""
    with mp.workdps(30):
        q_, s, e = mp.mpf(q), mp.mpf(sigma), mp.mpf(eps)
        cc, th = mp.mpf(c.numerator) / c.denominator, mp.mpf(theta.numerator) / theta.denominator
        t = max(e - cc, th)
        xt = mp.log((mp.exp(t) - 1 + q_) / q_) * s**2 + mp.mpf(1) / 2
        k = mp.exp(e - cc)

        def f(x):
            return (1 - q_) * mp.npdf(x, 0, s) + q_ * mp.npdf(x, 1, s) - k * mp.npdf(x, 0, s)

        # pieces closest where the integrand starts (at 0, from the crossing output)
        return mp.quad(f, [xt + s * (mp.mpf(i) / 20) ** 2 for i in range(61)])


@pytest.mark.parametrize(
    ("q", "sigma", "eps", "c", "theta"),
    [
        ("0.01", "1", "1", Fraction(1, 5), Fraction(3, 10)),  # t = eps - c
        ("0.01", "1", "1", Fraction(9, 10), Fraction(3, 10)),  # t = theta
        ("0.00001", "3", "1", Fraction(-1, 100), Fraction(1, 2)),  # far: about 1e-290
        ("0.001", "2", "3", Fraction(2, 1000), Fraction(1)),  # about 1e-130
    ],
)
def test_the_tail_of_one_use_matches_a_quadrature(q, sigma, eps, c, theta):
    """``G_theta(c)`` in Arb meets the quadrature (1e-11 relatively), within 1e-8 itself."""
    g = gridonelarge._Tail(_sub(sigma, q), Fraction(eps)).at(c, theta)
    ref = _g_ref(q, sigma, eps, c, theta)
    with mp.workdps(40):
        ball = flint.arb(mp.nstr(ref, 35), mp.nstr(abs(ref) * mp.mpf("1e-11"), 5))
    assert g.overlaps(ball), (g, mp.nstr(ref, 20))
    assert g.rad() < g.mid() * flint.arb("1e-8")



@pytest.fixture
def coarse(monkeypatch):
    """A coarse split (a probe of 8 fine steps, few fine cells) and the route's answers."""
    monkeypatch.setattr(gridsplit, "SPLIT_PROBE", 8)
    monkeypatch.setattr(gridsplit, "SPLIT_FINE", 4096)
    monkeypatch.setattr(gridsplit, "SPLIT_RATIO", 8)  # no finer pass for the route's tilt
    got: list = []
    real = gridonelarge.one_large_delta

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        got.append(out)
        return out

    monkeypatch.setattr(gridsplit, "one_large_delta", spy)
    return got


@pytest.mark.parametrize(("q", "eps", "sigma"), [("0.0001", "3", "2")])
def test_two_uses_far_in_the_tail_enclose_the_quadrature(coarse, q, eps, sigma):
    """delta(eps) ~ 1.0827521e-133: the closed-form route encloses the reference.

    And is relatively at most 1e-4 wide with a positive lower end, on the coarse split.
    The quadrature is taken as a ball of relative radius 2e-6 (it moved by 8e-7 between
    pieces of one and of a quarter standard deviation).
    """
    ref = _two_uses(q, eps, sigma)
    gridsplit.split_delta(_sub(sigma, q), 2, Fraction(eps), Fraction(1, 1000))
    assert coarse and coarse[0] is not None
    lo, hi = coarse[0]
    assert lo > 0
    with mp.workdps(30):
        ball = flint.arb(mp.nstr(ref, 25), mp.nstr(ref * mp.mpf("2e-6"), 5))
    ends = [flint.arb(x.numerator) / x.denominator for x in (lo, hi)]
    assert ball.overlaps(ends[0].union(ends[1])), (mp.nstr(ref, 12), float(lo), float(hi))
    assert (hi - lo) / lo < Fraction(1, 10**4)


def test_a_value_of_1e_minus_7158_carried_by_one_large_use_is_enclosed(coarse):
    """The sweep's q 1.96e-6, sigma 13.2, eps 1.04 (seed 2026): 3 uses were [1e-12334, 1e-7071].

    The folded parts' lower end was 2.9e-12334 and their upper end 8.6e-7072 (the part with
    one large use bounded by its Chernoff bound); the closed-form route gives 1.21898e-7158
    within 1e-3 on the coarse split (2.6e-6 at the package's), inside the folded parts'
    enclosure (an independent method).  Two uses likewise (8.1266e-7159).
    """
    for k in (2, 3):
        coarse.clear()
        sub = _sub("13.2", "0.00000196")
        got = gridsplit.split_delta(sub, k, Fraction("1.04"), Fraction(1, 1000))
        lo, hi = coarse[0]
        assert lo > 0 and (hi - lo) / lo < Fraction(1, 10**3)  # 2.6e-6 at the package's split
        assert got == (lo, hi)
    # k = 3: inside the parts' own enclosure at the package's split (measured on main:
    # [2.9176e-12334, 8.616e-7072]); the value, from a finer run: 1.218984e-7158
    assert Fraction("2.9e-12334") < lo and hi < Fraction("8.7e-7072")
    assert lo <= Fraction("1.2189841e-7158") <= hi


def test_the_route_declines_when_other_parts_matter():
    """With no part with one large use, or another part near it, the route gives None."""
    import numpy as np

    from dpcompose_exact.engines.gridmeasure import _Measure

    sub = _sub("1", "0.001")
    up = _Measure(np.array([0.5, 0.5]), 0, Fraction(0))
    est = [(-10.0, 0, 1.0), (-10.5, 1, 2.0)]
    assert gridonelarge.one_large_delta(sub, 5, Fraction(1), Fraction(1, 100), up, up, 1, 1,
                                        est) is None
    assert gridonelarge.one_large_delta(sub, 5, Fraction(1), Fraction(1, 100), up, up, 1, 1,
                                        [(-10.0, 0, 1.0)]) is None


@pytest.mark.parametrize(
    ("q", "eps", "sigma", "per", "width"),
    [
        # the route's fold was tilted at the part's lattice saddle point (5020 where the sum
        # wants 4400; bench_widths seed 2026 had [3.67e-395, 1.09e-363] at 11 uses): was
        # [3.6e-386, 1.2e-379]
        ("0.00399", "0.0629", "14.7", 4, Fraction(1, 1000)),
        # eps below the deep grid's widest cell: the cut's cell was taken that wide, past
        # eps (bench_widths seed 11 had [2.6e-139, 2.6e-94] at 9 uses): was [6e-141, 5e-95]
        ("0.00000276", "0.000326", "4.29", 1, Fraction(1, 10000)),
    ],
)
def test_the_route_is_tilted_for_its_own_sum(coarse, monkeypatch, q, eps, sigma, per, width):
    """Two uses: the closed-form route encloses the quadrature within 2e-3 (coarse split).

    The quadrature (``per`` pieces per standard deviation) taken as a ball of relative
    radius 1e-5 (four pieces agree with twelve within 4e-9 at the first setting; one with
    four within 3e-6 at the second).
    """
    monkeypatch.setattr(gridsplit, "SPLIT_RATIO", 1 << 16)  # the route's finer pass too
    ref = _two_uses(q, eps, sigma, per)
    lo, hi = gridsplit.split_delta(_sub(sigma, q), 2, Fraction(eps), width)
    assert lo > 0 and (hi - lo) / lo < Fraction(2, 1000)
    with mp.workdps(30):
        ball = flint.arb(mp.nstr(ref, 25), mp.nstr(ref * mp.mpf("1e-5"), 5))
    ends = [flint.arb(x.numerator) / x.denominator for x in (lo, hi)]
    assert ball.overlaps(ends[0].union(ends[1])), (mp.nstr(ref, 12), lo, hi)


@pytest.mark.parametrize("upper", [True, False])
def test_block_weights_bound_every_entry_weighed_alone(upper):
    """``V e^{i l}`` of each block lies above (upper) or below every entry's own weight.

    The entries' weights ``e^{C - lam c} G_theta(c)`` are computed one by one in Arb, apart
    from the blocks' derivative bounds (``G' = e^{eps - c} S(x_t)``); both branches of
    ``t = max(eps - c, theta)`` are crossed (``theta`` lies inside the window).
    """
    sub = _sub("2", "0.001")
    eps, theta, hf = Fraction(3), Fraction(28, 10), Fraction(1, 2000)
    g = gridonelarge._Tail(sub, eps)
    lam, logc, c0 = 40.0, 1.5, Fraction(1, 10)
    blocks = gridonelarge._weights(g, theta, lam, logc, c0, hf, 512, 32, upper)
    assert sum(m for _, m, _, _ in blocks) == 512 and any(m > 1 for _, m, _, _ in blocks)
    for a, m, v, ell in blocks:
        for i in range(m):
            c = c0 + (a + i) * hf
            w = (flint.arb(logc) - flint.arb(lam) * (flint.arb(c.numerator) / c.denominator)).exp()
            exact = w * g.at(c, theta)
            bound = v * flint.arb(i * ell).exp()
            if upper:
                assert bound >= exact.upper(), (a, i)
            else:
                assert bound <= exact.lower() or exact.lower() <= 0, (a, i)


def test_the_bulk_lattice_route_answers_alone_below_the_doubles(monkeypatch):
    """Far below 1e-308 the bulk-lattice route's narrow enclosure is the answer: no parts folded.

    Its test ``hi - lo <= 1e-4 lo`` multiplied a double by the rational lower end (about
    1e-7158), a double 0: the route never answered alone there and every query also folded
    the parts (a second, slower enclosure).  q 1.96e-6, sigma 13.2, eps 1.04, k = 3, in the
    folded parts' own enclosure at the package's split (measured on main: [2.9176e-12334,
    8.616e-7072]) and around the value 1.218984e-7158 (a finer run).
    """
    folded = []
    real = gridsplit._parts
    monkeypatch.setattr(gridsplit, "_parts", lambda *a: folded.append(1) or real(*a))
    sub = _sub("13.2", "0.00000196")
    lo, hi = gridsplit.split_delta(sub, 3, Fraction("1.04"), Fraction(1, 1000))
    assert not folded
    assert 0 < lo <= Fraction("1.2189841e-7158") <= hi
    assert (hi - lo) / lo < Fraction(5, 10**4)


def test_two_uses_in_blocks_enclose_the_quadrature(monkeypatch):
    """Blocks of many entries (``lam m h`` up to 0.05) still enclose the quadrature.

    q 1e-4, sigma 2, eps 3, two uses (delta ~ 1.0827521e-133), the reference a ball of
    relative radius 2e-6 (tests/quadrature.py).
    """
    monkeypatch.setattr(gridsplit, "ONE_BLOCK_LH", 0.05)
    got = []
    real = gridonelarge._sum_part
    monkeypatch.setattr(gridonelarge, "_sum_part",
                        lambda *a: got.append(a[-1]) or real(*a))
    ref = _two_uses("0.0001", "3", "2")
    lo, hi = gridsplit.split_delta(_sub("2", "0.0001"), 2, Fraction(3), Fraction(1, 1000))
    assert got and max(got) > 1  # weighed in blocks
    with mp.workdps(30):
        ball = flint.arb(mp.nstr(ref, 25), mp.nstr(ref * mp.mpf("2e-6"), 5))
    ends = [flint.arb(x.numerator) / x.denominator for x in (lo, hi)]
    assert ball.overlaps(ends[0].union(ends[1])), (mp.nstr(ref, 12), float(lo), float(hi))
    assert 0 < lo and (hi - lo) / lo < Fraction(1, 10**3)


def test_the_sums_tilt_is_tried_below_the_splits_goal(monkeypatch):
    """At a tiny rate the part's own tilt leaves the fold's error, weighed, near 1e-3 wide.

    q 5.11e-6, sigma 8.16, eps 0.0241, two uses (delta about 2.0e-1046): at the part's
    tilt (about 4100, the sum's is larger) the weights grow across the window and the
    fold's Cauchy-Schwarz error alone left the route 2e-4 wide, above the width at which
    the split takes it alone; the sum's own tilt was tried only past 1e-2, so the parts
    were folded as well (24 s, no narrower).  Now the route answers alone, within 1.5e-4
    (bench_widths seed 7 at four uses: 1.06e-3 in 45 s, now 6e-5 in about 1 s).  The
    reference: tests/quadrature.py with four pieces per standard deviation (twelve agree
    within 2e-9), a ball of relative radius 1e-5.
    """

    def folded(*args):
        raise AssertionError("the parts were folded: the closed-form route was too wide")

    monkeypatch.setattr(gridsplit, "_parts", folded)
    ref = _two_uses("0.00000511", "0.0241", "8.16", 4)
    lo, hi = gridsplit.split_delta(
        _sub("8.16", "0.00000511"), 2, Fraction("0.0241"), Fraction(1, 10000)
    )
    with mp.workdps(30):
        ball = flint.arb(mp.nstr(ref, 25), mp.nstr(ref * mp.mpf("1e-5"), 5))
    ends = [flint.arb(x.numerator) / x.denominator for x in (lo, hi)]
    assert ball.overlaps(ends[0].union(ends[1])), (mp.nstr(ref, 12), lo, hi)
    assert 0 < lo and (hi - lo) / lo < Fraction(15, 10**5)
