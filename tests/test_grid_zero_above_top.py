"""delta(eps) of bounded (Laplace) noise on the loss grid is exactly 0 from its largest loss on.

The largest loss of k uses of Laplace noise (eps0 = s / b) on a rate-q subsample is
k log(1 + q (e^eps0 - 1)) (docs/theory.md, section 15); at or above it no outcome has a larger
loss, so delta = 0 exactly, and the answer needs no fold (bench_box seed 2 rows 3 and 12 built
four folds first: 1.3-1.7x PLD's time).
"""

from fractions import Fraction

import mpmath

import dpcompose_exact as dx


def _top(b: str, q: str, k: int) -> mpmath.mpf:
    with mpmath.workdps(40):  # independent: the closed form in mpmath
        return k * mpmath.log1p(mpmath.mpf(Fraction(q).numerator) / Fraction(q).denominator
                                * mpmath.expm1(1 / mpmath.mpf(b)))


def test_delta_above_the_largest_loss_is_zero_without_a_fold() -> None:
    comp = dx.compose(dx.laplace_noise("143/10").subsample("0.00294"), 153)
    assert _top("14.3", "0.00294", 153) < mpmath.mpf("0.609")
    lo, hi = comp.delta(Fraction("0.609")).ends()
    assert lo == 0 and hi == 0
    assert comp.result.folds._built == {}


def test_delta_just_below_the_largest_loss_is_positive() -> None:
    comp = dx.compose(dx.laplace_noise("2").subsample("1/10"), 3)
    top = _top("2", "1/10", 3)
    below = Fraction(str(mpmath.nstr(top * (1 - mpmath.mpf("1e-3")), 20)))
    above = Fraction(str(mpmath.nstr(top * (1 + mpmath.mpf("1e-9")), 20)))
    assert comp.delta(below).ends()[1] > 0
    assert comp.delta(above).ends() == (0, 0)
