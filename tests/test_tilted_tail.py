"""A tilted fold's far tail bounded by its cached suffix sums (docs/theory.md, section 15).

:meth:`~dpcompose_exact.engines.gridfold._Fold._tilted_bound` computes the terms ``y_T v_T``
only up to the first index past which the suffix sum of ``|y| g`` is at most
``TAIL_SHARE`` of the one from the query, and bounds the rest by the cached suffix sums of
``|y| g`` and ``g^2`` (``0 <= v <= g``), on both sides.  Checked against the sum itself, in
long doubles and ``math.fsum``, for one measure (the fold of one use is the measure), with
the default share and with a share so large that the tail's terms are a visible part of
the sum (the bounds must still hold it).
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest

from dpcompose_exact.engines import gridfold
from dpcompose_exact.engines.gridfold import _Fold
from dpcompose_exact.engines.gridmeasure import _Measure

H = F(1, 10**4)
N = 200_000
LAM, LOGC = 2.0, 1.5
DEFAULT = gridfold.TAIL_SHARE


def _masses() -> np.ndarray:
    i = np.arange(N)
    x = np.exp(-0.5 * ((i - 60_000) / 15_000.0) ** 2)
    return x / x.sum()


def _reference(x: np.ndarray, eps: F) -> float:
    """``sum_{T h > eps} x_T e^{C - lam T h} (1 - e^{eps - T h})``, long-double terms."""
    ld = np.longdouble
    j = math.floor(eps / H) + 1
    t = np.arange(j, N).astype(ld) * ld(1) / ld(H.denominator)
    terms = x[j:].astype(ld) * np.exp(ld(LOGC) - ld(LAM) * t) * -np.expm1(ld(float(eps)) - t)
    return math.fsum(float(a) for a in terms)


@pytest.mark.parametrize("share", [DEFAULT, 2.0**-8])
def test_the_far_tail_is_bounded_on_both_sides(
    monkeypatch: pytest.MonkeyPatch, share: float
) -> None:
    """Both bounds hold the sum (to the reference's own rounding, 1e-14 relative); with the
    default share they are within 2e-9 of it (the tail costs nothing), with ``2^-8`` the
    tail's bound is what widens them (over 1e-3 below: its terms are counted, not lost)."""
    monkeypatch.setattr(gridfold, "TAIL_SHARE", share)
    x = _masses()
    fold = _Fold([(_Measure(x, 0, F(0)), 1)], H)
    fold.lam, fold.logc = LAM, LOGC
    assert fold.y.size > gridfold.TAIL_MIN
    for eps in (F(5), F(6), F(9)):
        ref = _reference(x, eps)
        lo, up = float(fold.bound(eps, False)), float(fold.bound(eps, True))
        assert lo <= ref * (1 + 1e-14) and ref * (1 - 1e-14) <= up
        if share == DEFAULT:
            assert up - lo <= 2e-9 * ref
        else:
            assert lo < ref * (1 - 1e-3)
