"""A fold's bounds at many arguments at once (engines.gridsums) and the array sums of a mixed list.

References are computed independently: the fold's certified quantity summed term by term
in Arb at 256 bits from its exact doubles (the masses, the FFT's error bound against the
weights' exact 2-norm, the Chernoff masses and the leak), and the Gaussian closed form of
a finite part next to Gaussian noise (engines.noiseparts.GaussianPart, refined in Arb),
which the grid's enclosure must contain.
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
import pytest

import dpcompose_exact as dx
from dpcompose_exact.engines.gridsums import FoldSums, down_double, up_double
from dpcompose_exact.engines.mixed import GaussianPart, GridPart, MixedComposition, grid_part
from dpcompose_exact.engines.noiseparts import Conditioned

PREC = 256


def _arb(x: float | Fraction) -> flint.arb:
    q = Fraction(x)
    return flint.arb(flint.fmpq(q.numerator, q.denominator))


def _reference(fold, t: Fraction, upper: bool) -> tuple[flint.arb, flint.arb]:
    """``(S(t), err2 ||w(t)||_2)`` of the fold at the exact ``t``, term by term in Arb."""
    first = (t / fold.h).__floor__() + 1
    with flint.ctx.workprec(PREC):
        s, w2 = flint.arb(0), flint.arb(0)
        hb, tb = _arb(fold.h), _arb(t)
        for i in range(max(first - fold.w_lo, 0), fold.y.size):
            w = 1 - (tb - (fold.w_lo + i) * hb).exp()
            s += _arb(float(fold.y[i])) * w
            w2 += w * w
        return s, _arb(fold.err2) * w2.sqrt()


@pytest.fixture(scope="module")
def folds():
    noise = dx.gaussian_noise("1").subsample("1/10")
    _, _, comp = grid_part([(noise.loss_pair(), 3)], Fraction(1, 500))  # a short window
    return comp.folds


@pytest.mark.parametrize("name", ["fwd_up", "fwd_lo"])
def test_fold_sums_hold_the_folds_certified_quantity_tightly(folds, name: str) -> None:
    fold = folds[name]
    upper = name.endswith("_up")
    assert FoldSums.usable(fold)
    hf = float(fold.h)
    ts = [
        (fold.w_lo - 3) * hf,  # below the window: every mass, and the Chernoff mass below
        float((fold.w_lo + fold.y.size // 3) * fold.h),  # within rounding of a grid point
        (fold.w_lo + fold.y.size // 2 + 0.37) * hf,
        (fold.w_lo + fold.y.size - 40.5) * hf,  # a few terms left: the tail
        (fold.smax + 2) * hf,  # above every lattice loss
    ]
    got = FoldSums(fold).bounds(np.array(ts), upper)
    for t, g in zip(ts, got):
        at = Fraction(t) + (0 if upper else fold.shift)
        first = (at / fold.h).__floor__() + 1
        if first > fold.smax:
            assert g == (up_double(Fraction(fold.leak)) if upper and fold.leak else 0.0)
            continue
        s, slack = _reference(fold, at, upper)
        with flint.ctx.workprec(PREC):
            if upper:
                extra = _arb(fold.p_hi) + (_arb(fold.p_lo) if first < fold.w_lo else 0)
                ref = s + slack + extra + _arb(fold.leak)
                assert _arb(g) >= ref.upper(), (t, g, ref)
                assert _arb(g) <= ref.upper() * (1 + flint.arb(10) ** -9) + 1e-300
            else:
                ref = s - slack - _arb(fold.p_hi) - _arb(fold.p_lo)
                assert _arb(g) <= ref.lower().max(0), (t, g, ref)
                assert _arb(g) >= ref.lower() - (s.abs_upper() + slack) * 1e-9


def test_directed_doubles_of_rationals() -> None:
    third = Fraction(1, 3)
    assert Fraction(down_double(third)) < third < Fraction(up_double(third))
    assert down_double(Fraction(1, 2)) == up_double(Fraction(1, 2)) == 0.5


@pytest.fixture(scope="module")
def mixed():
    """Randomized response x5 next to Gaussian noise x3 (sigma 2): on a grid and closed."""
    comp = dx.compose([(dx.gaussian_noise("2").subsample("1/100"), 10),
                       (dx.randomized_response("7/10", 3), 5)])
    finite = comp.result.finite
    part, _, _ = grid_part([(dx.gaussian_noise("2").loss_pair(), 3)], Fraction(1, 500))
    part.arrays_after, part.arrays_atoms = 0, 1  # the arrays from the first call, any size
    loop = GridPart(part._upper, part._lower, part.directions, part.what)  # one atom at a time
    return (
        MixedComposition(finite, part),
        MixedComposition(finite, loop),
        MixedComposition(finite, GaussianPart(Fraction(3, 4))),  # mu^2 = 3 (1/2)^2
    )


@pytest.mark.parametrize("eps", [Fraction(-1), Fraction(0), Fraction(1, 2), Fraction(4)])
def test_array_sums_contain_the_gaussian_closed_form(mixed, eps: Fraction) -> None:
    arrays, loop, closed = mixed
    lo, hi = arrays.delta_bounds(eps)
    c_lo, c_hi = closed.delta_bounds(eps)
    assert lo <= c_lo and c_hi <= hi  # negative arguments: the reflection below 0 too
    l_lo, l_hi = loop.delta_bounds(eps)  # the per-atom sums: the same enclosure
    assert abs(lo - l_lo) <= Fraction(1, 10**8) * l_hi
    assert abs(hi - l_hi) <= Fraction(1, 10**8) * l_hi


def test_epsilon_search_contains_the_closed_form_in_few_evaluations(mixed) -> None:
    arrays, _, closed = mixed
    calls = []
    noise = arrays.noise
    ends = noise.ends

    def counted(*args, **kwargs):
        calls.append(args[1])
        return ends(*args, **kwargs)

    noise.ends = counted  # type: ignore[method-assign]
    try:
        lo, hi = arrays.epsilon(Fraction(1, 10**6)).ends()
    finally:
        del noise.ends
    c_lo, c_hi = closed.epsilon(Fraction(1, 10**6)).ends()
    assert lo <= c_lo and c_hi <= hi
    assert (hi - lo) / hi < 1e-4
    # the guides on each bound and the certification's short bisections (it was 70)
    assert len(calls) <= 40, len(calls)


def test_conditioned_protocol_names_the_arrays() -> None:
    assert hasattr(Conditioned, "heavy_arrays")
