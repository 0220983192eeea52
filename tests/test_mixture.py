"""Mixtures of Gaussians (and sampling with replacement): certified, cross-checked.

References independent of the package: the hockey-stick divergence of one use from its
crossing point in mpmath at 40 digits (the likelihood ratio is monotone, so
``H_g(A || B) = A(X > x*) - g B(X > x*)`` at the one ``x*`` where it equals ``g``), checked
against ``mpmath.quad`` of ``(A - g B)_+``; dp_accounting's pessimistic and optimistic PLDs
of the same mixture (k uses) as a bracket; the Poisson-subsampled Gaussian (the mixture
``{0, 1}``) on the same grid, bound for bound; binomial probabilities from mpmath.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcompose_exact as dx
from dpcompose_exact.engines.gridcells import cell_masses
from dpcompose_exact.engines.subsample_grid import NoiseGridComposition
from dpcompose_exact.mechanisms.mixture import MixtureOfGaussians
from dpcompose_exact.regions.protocol import GridEntry, PairForm

THREE = ("1", ["0", "1", "2"], ["81/100", "18/100", "1/100"])


def _mp(x):
    x = Fraction(x)
    return mpmath.mpf(x.numerator) / x.denominator


def _reference_delta(sigma, cs, ps, eps):
    """``max(H(A||B), H(B||A))`` at ``e^eps`` of one use, mpmath (40 digits)."""
    with mpmath.workdps(40):
        s = _mp(sigma)
        cs = [_mp(c) for c in cs]
        ps = [_mp(p) for p in ps]
        g = mpmath.exp(_mp(eps))

        def ratio(x):
            return mpmath.fsum(p * mpmath.exp((2 * c * x - c * c) / (2 * s * s)) for c, p in
                               zip(cs, ps))

        def big_a(x):  # A(X > x)
            return mpmath.fsum(p * mpmath.erfc((x - c) / (s * mpmath.sqrt(2))) / 2
                               for c, p in zip(cs, ps))

        def big_b(x):  # B(X > x)
            return mpmath.erfc(x / (s * mpmath.sqrt(2))) / 2

        def cross(level):
            lo, hi = mpmath.mpf(-200), mpmath.mpf(200)
            for _ in range(200):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if ratio(mid) < level else (lo, mid)
            return (lo + hi) / 2

        x1 = cross(g)
        fwd = big_a(x1) - g * big_b(x1)
        p0 = sum(p for c, p in zip(cs, ps) if c == 0)
        rev = mpmath.mpf(0)
        if 1 / g > p0:
            x2 = cross(1 / g)
            rev = (1 - big_b(x2)) - g * (1 - big_a(x2))
        # the crossing-point formula against a quadrature of (A - g B)_+ (forward)
        dens = lambda x, c: mpmath.npdf(x, c, s)  # noqa: E731
        quad = mpmath.quad(
            lambda x: max(mpmath.fsum(p * dens(x, c) for c, p in zip(cs, ps))
                          - g * dens(x, 0), 0),
            [x1, x1 + 10, x1 + 40],
        )
        assert abs(quad - fwd) < mpmath.mpf(10) ** -25
        return max(fwd, rev)


@pytest.mark.parametrize(
    ("cs", "ps"),
    [
        (["0", "1", "2"], ["81/100", "18/100", "1/100"]),
        (["1/2", "1", "3/2"], ["1/4", "1/2", "1/4"]),  # no zero sensitivity: both tails cut
    ],
)
@pytest.mark.parametrize("eps", ["1/2", "2"])
def test_one_use_encloses_the_mpmath_hockey_stick(cs, ps, eps):
    m = dx.mixture_of_gaussians("1", cs, ps)
    ref = _reference_delta("1", cs, ps, eps)
    lo, hi = dx.compose(m, 1).delta(eps).interval(30)
    assert _mp(lo) <= ref <= _mp(hi)
    assert _mp(hi) - _mp(lo) <= mpmath.mpf("1e-3") * ref


def test_the_mixture_zero_one_is_the_subsampled_gaussian_bound_for_bound():
    """Through the mixture's own path (its Newton-free closed form) on the same grid."""
    q = Fraction(1, 10)
    mix = MixtureOfGaussians(Fraction(1), (Fraction(0), Fraction(1)), (1 - q, q))
    sub = dx.gaussian_noise("1").subsample(q)
    a, b = NoiseGridComposition([(mix, 30)]), NoiseGridComposition([(sub, 30)])
    assert a.h == b.h
    for eps in (Fraction(1, 2), Fraction(2)):
        assert a.delta_bounds(eps) == b.delta_bounds(eps)
    # and the spelling {0, c} routes to the subsampled Gaussian itself
    assert dx.mixture_of_gaussians("1", ["0", "1"], ["9/10", "1/10"]).loss_pair() == (
        sub.loss_pair()
    )


def test_a_mixture_without_zero_encloses_the_reference():
    """Sensitivities {1, 2}: no closed form (Newton and a certified bracket), no floor."""
    m = dx.mixture_of_gaussians("1", ["1", "2"], ["1/2", "1/2"])
    cells = cell_masses(m, Fraction(1, 1000))
    assert cells["fwd_up"].leak > 0  # both tails cut: masses go to the leak
    ref = _reference_delta("1", ["1", "2"], ["1/2", "1/2"], "1")
    lo, hi = dx.compose(m, 1).delta("1").interval(30)
    assert _mp(lo) <= ref <= _mp(hi)


def test_k_uses_lie_in_dp_accountings_pld_bracket():
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    k, eps = 20, Fraction(1)
    ours = dx.compose(dx.mixture_of_gaussians(*THREE), k).delta(eps).interval(20)
    ends = []
    for pessimistic in (True, False):
        one = pld.from_mixture_gaussian_mechanism(
            1.0, [0.0, 1.0, 2.0], [0.81, 0.18, 0.01], pessimistic_estimate=pessimistic,
            value_discretization_interval=1e-3, use_connect_dots=pessimistic,
        )
        ends.append(one.self_compose(k).get_delta_for_epsilon(float(eps)))
    upper, lower = ends
    assert float(ours[0]) <= upper * (1 + 1e-12)
    assert float(ours[1]) >= lower * (1 - 1e-12)
    assert float(ours[1]) - float(ours[0]) < (upper - lower) / 10  # far tighter


def test_composes_next_to_every_kind():
    m = dx.mixture_of_gaussians(*THREE)
    one = dx.compose(m, 2).epsilon("1e-5")
    for other in (
        dx.Mechanism.dp("1/10"),
        dx.gaussian_noise("3"),
        dx.gaussian_noise("2").subsample("1/100"),
        dx.laplace_noise("20"),
        dx.random_allocation(dx.gaussian_noise("1"), steps=10),
    ):
        both = dx.compose([(m, 2), (other, 1)]).epsilon("1e-5")
        assert float(both.interval(10)[1]) >= float(one.interval(10)[0])


def test_canonical_form_and_refusals():
    a = dx.mixture_of_gaussians("1", ["2", "0", "1", "1"], ["1/100", "81/100", "9/100", "9/100"])
    assert a == dx.mixture_of_gaussians(*THREE)
    assert dx.mixture_of_gaussians("1", ["-1", "-2"], ["1/2", "1/2"]) == (
        dx.mixture_of_gaussians("1", ["1", "2"], ["1/2", "1/2"])
    )
    assert dx.mixture_of_gaussians("2", "(0;1)", "(1/2;1/2)").sensitivities == (0, 1)
    one = dx.mixture_of_gaussians("2", ["3"], ["1"]).loss_pair()
    assert one.form is PairForm.GAUSSIAN and one.gaussian_mu2() == Fraction(9, 4)
    lp = dx.mixture_of_gaussians(*THREE).loss_pair()
    assert lp.grid_entry() is GridEntry.MIXTURE and not lp.symmetric
    assert lp.gaussian_mu2() == 4
    with pytest.raises(dx.InvalidParameterError, match="have both signs: the likelihood ratio"):
        dx.mixture_of_gaussians("1", ["-1", "1"], ["1/2", "1/2"])
    with pytest.raises(dx.InvalidParameterError, match="sum to exactly 1"):
        dx.mixture_of_gaussians("1", ["0", "1"], ["1/2", "1/3"])
    with pytest.raises(dx.InvalidParameterError, match="every sensitivity is 0"):
        dx.mixture_of_gaussians("1", ["0"], ["1"])
    with pytest.raises(dx.InvalidParameterError, match="outside the valid range"):
        dx.mixture_of_gaussians("1", ["0", "1"], ["3/2", "-1/2"])
    with pytest.raises(dx.InvalidParameterError, match="one probability per sensitivity"):
        dx.mixture_of_gaussians("1", ["0", "1"], ["1"])
    with pytest.raises(TypeError, match="float"):
        dx.mixture_of_gaussians(1.0, ["0", "1"], ["1/2", "1/2"])
    with pytest.raises(dx.ResourceLimitError, match="Rényi divergence"):
        dx.compose(dx.mixture_of_gaussians(*THREE), 2).renyi(2)


def test_cli_spelling_and_spec_item_read_back(tmp_path):
    import json
    import subprocess
    import sys

    from dpcompose_exact.regions.specs import load_spec

    out = subprocess.run(
        [sys.executable, "-m", "dpcompose_exact", "epsilon", "--mech",
         "mog(1,(0,1,2),(81/100,18/100,1/100)):2", "--mech", "0.1,0:1", "--delta", "1e-5",
         "--format", "json"],
        capture_output=True, text=True, check=True,
    )
    doc = json.loads(out.stdout)
    item = doc["mechanisms"][0]
    assert item["mixture_of_gaussians"]["probs"] == ["81/100", "9/50", "1/100"]
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"mechanisms": [item]}))
    (kind,) = load_spec(path)
    assert dx.mechanism_of(kind) == dx.mixture_of_gaussians(*THREE)


def _events():
    return pytest.importorskip("dp_accounting").dp_event


def test_exact_accountant_reads_the_mixture_event():
    de = _events()
    from dpcompose_exact.integrations.dp_accounting import ExactAccountant

    event = de.ComposedDpEvent([
        de.SelfComposedDpEvent(de.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0, 2.0],
                                                            [0.81, 0.18, 0.01]), 3),
        de.GaussianDpEvent(4.0),
    ])
    acc = ExactAccountant()
    assert acc.supports(event)
    acc.compose(event)
    ours = dx.compose([(dx.mixture_of_gaussians(*THREE), 3), (dx.gaussian_noise("4"), 1)])
    assert acc.epsilon_value("1e-5").interval(12) == ours.epsilon("1e-5").interval(12)
    # every sensitivity 0: nothing revealed (as dp_accounting); sigma 0: not private
    nothing = ExactAccountant()
    nothing.compose(de.MixtureOfGaussiansDpEvent(1.0, [0.0], [1.0]))
    assert nothing.get_epsilon(1e-5) == 0
    leak = ExactAccountant()
    leak.compose(de.MixtureOfGaussiansDpEvent(0.0, [1.0], [1.0]))
    assert leak.get_epsilon(1e-5) == float("inf")
    with pytest.raises(ValueError, match="not exactly 1"):
        ExactAccountant().compose(de.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.7, 0.2]))
    from dp_accounting.privacy_accountant import NeighboringRelation, UnsupportedEventError

    replace = ExactAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    with pytest.raises(UnsupportedEventError, match="ADD_OR_REMOVE_ONE or REPLACE_SPECIAL"):
        replace.compose(de.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.5, 0.5]))


def test_sampling_with_replacement_is_the_binomial_mixture():
    de = _events()
    from dpcompose_exact.integrations.dp_accounting import ExactAccountant
    from dpcompose_exact.integrations.events import event_kinds

    event = de.SampledWithReplacementDpEvent(50, 3, de.GaussianDpEvent(1.0))
    ((m, n),) = event_kinds(event).items
    assert n == 1
    with mpmath.workdps(30):  # Binomial(3, 1/50), independently
        for j, p in enumerate(m.probs):
            ref = mpmath.binomial(3, j) * mpmath.mpf(1 / mpmath.mpf(50)) ** j * (
                mpmath.mpf(49) / 50) ** (3 - j)
            assert abs(_mp(p) - ref) < mpmath.mpf(10) ** -28
    assert m.sensitivities == (0, 1, 2, 3)
    acc = ExactAccountant()
    acc.compose(event, 2)
    ref = _reference_delta("1", m.sensitivities, m.probs, "1/2")  # one use
    lo, hi = dx.compose(m, 1).delta("1/2").interval(30)
    assert _mp(lo) <= ref <= _mp(hi)
    assert acc.delta_value("1/2").interval(12) == dx.compose(m, 2).delta("1/2").interval(12)
    from dp_accounting.privacy_accountant import NeighboringRelation, UnsupportedEventError

    replace = ExactAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    with pytest.raises(UnsupportedEventError, match="a pair not certified here"):
        replace.compose(event)
    with pytest.raises(UnsupportedEventError, match="only a GaussianDpEvent"):
        ExactAccountant().compose(
            de.SampledWithReplacementDpEvent(50, 3, de.LaplaceDpEvent(1.0))
        )



def _replace_reference(sigma, q, eps):
    """``H(A||B)`` of the replace-one pair at ``e^eps`` (symmetric), mpmath crossing point."""
    with mpmath.workdps(40):
        s, q, g = _mp(sigma), _mp(q), mpmath.exp(_mp(eps))

        def dens(x, c):
            return mpmath.npdf(x, c, s)

        def ratio(x):
            a = q * dens(x, 1) + (1 - q) * dens(x, 0)
            return a / (q * dens(x, -1) + (1 - q) * dens(x, 0))

        lo, hi = mpmath.mpf(-200), mpmath.mpf(200)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if ratio(mid) < g else (lo, mid)
        x = (lo + hi) / 2
        tail = lambda c: mpmath.erfc((x - c) / (s * mpmath.sqrt(2))) / 2  # noqa: E731
        return q * tail(1) + (1 - q) * tail(0) - g * (q * tail(-1) + (1 - q) * tail(0))


def test_replace_one_poisson_gaussian_encloses_mpmath_and_dp_accountings_pld():
    from dpcompose_exact.mechanisms.mixture import ReplaceSubsampledGaussian

    m = ReplaceSubsampledGaussian(Fraction(1), Fraction(1, 10))
    lo, hi = dx.compose(m, 1).delta("1").interval(30)
    ref = _replace_reference(1, Fraction(1, 10), 1)
    assert _mp(lo) <= ref <= _mp(hi)
    # q = 1: the Gaussian of sensitivity 2, in closed form
    assert ReplaceSubsampledGaussian(Fraction(1), Fraction(1)).loss_pair() == (
        dx.gaussian_noise("1", "2").loss_pair()
    )
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pld

    from dpcompose_exact.integrations.dp_accounting import ExactAccountant

    rel = dpa.NeighboringRelation.REPLACE_ONE
    event = dpa.dp_event.PoissonSampledDpEvent(0.01, dpa.dp_event.GaussianDpEvent(1.0))
    acc = ExactAccountant(neighboring_relation=rel)
    acc.compose(event, 100)
    ours = acc.delta_value("1").interval(20)
    pess = pld.from_gaussian_mechanism(
        1.0, sampling_prob=0.01, neighboring_relation=rel, value_discretization_interval=1e-3
    ).self_compose(100).get_delta_for_epsilon(1.0)
    assert float(ours[0]) <= pess * (1 + 1e-12)
    assert float(ours[1]) >= pess * (1 - 1e-2)  # the pessimistic PLD is close above
    direct = dx.compose(ReplaceSubsampledGaussian(Fraction(1), Fraction(1, 100)), 100)
    assert direct.delta("1").interval(12) == acc.delta_value("1").interval(12)
    with pytest.raises(dpa.UnsupportedEventError, match="for a GaussianDpEvent only"):
        ExactAccountant(neighboring_relation=rel).compose(
            dpa.dp_event.PoissonSampledDpEvent(0.01, dpa.dp_event.LaplaceDpEvent(1.0))
        )


def test_a_poisson_sampled_mixture_is_the_mixture_with_zero_added():
    de = _events()
    from dpcompose_exact.integrations.events import event_kinds

    event = de.PoissonSampledDpEvent(0.1, de.MixtureOfGaussiansDpEvent(1.0, [0, 1], [0.5, 0.5]))
    ((m, _),) = event_kinds(event).items
    assert m == dx.mixture_of_gaussians("1", ["0", "1"], ["19/20", "1/20"])
    assert m.loss_pair() == dx.gaussian_noise("1").subsample("1/20").loss_pair()
    three = dx.mixture_of_gaussians(*THREE).subsample("1/2")
    assert three.probs == (Fraction(181, 200), Fraction(9, 100), Fraction(1, 200))


def test_a_component_below_the_smallest_double_is_placed_and_counted():
    """A probability of 10^-400 (a binomial mixture's far components): its float log was
    ``log(0)`` before; the grid now ends where the mass does and the rest is leak."""
    tiny = Fraction(1, 10**400)
    ps = [Fraction(9, 10) - tiny, Fraction(1, 10), tiny]
    m = dx.mixture_of_gaussians("1", ["0", "1", "3"], ps)
    assert m.x_top(10.0) < 1 + 10.0 + 1e-9
    lo, hi = dx.compose(m, 1).delta("1").interval(30)
    ref = _reference_delta("1", ["0", "1", "3"], ps, "1")
    assert _mp(lo) <= ref <= _mp(hi)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(1, 8), min_size=2, max_size=4, unique=True),
    st.lists(st.integers(1, 9), min_size=4, max_size=4),
    st.integers(-300, 300),
)
def test_the_certified_output_of_a_loss_holds_the_mpmath_root(cs, weights, loss_cents):
    """``x_of_ratio``'s ball holds the root of ``r(x) = e^l`` found by mpmath bisection."""
    import flint

    ws = weights[: len(cs)]
    ps = [Fraction(w, sum(ws)) for w in ws]
    m = dx.mixture_of_gaussians("1", [Fraction(c, 4) for c in cs], ps)
    loss = Fraction(loss_cents, 100)
    with flint.ctx.workprec(128):
        ball = m.x_of_ratio((flint.arb(loss.numerator) / loss.denominator).exp())
        ends = ball.lower().str(45, radius=False), ball.upper().str(45, radius=False)
    with mpmath.workdps(50):
        lo, hi = (mpmath.mpf(e) for e in ends)

        def ratio(x):
            return mpmath.fsum(_mp(p) * mpmath.exp((2 * _mp(c) * x - _mp(c) ** 2) / 2)
                               for c, p in zip(m.sensitivities, m.probs))
        target = mpmath.exp(_mp(loss))
        assert ratio(lo) <= target * (1 + mpmath.mpf(10) ** -35)
        assert ratio(hi) >= target * (1 - mpmath.mpf(10) ** -35)
