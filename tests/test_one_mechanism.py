"""One mechanism protocol, one router: every kind of mechanism composes with every other.

The references are independent of the package: mpmath's normal CDF at 50 digits, the
loss distribution of the six-letter pair (tests/brute.py) convolved in mpmath, and
dp_accounting's PLD accountant (pessimistic and optimistic).
"""

from __future__ import annotations

import ast
from pathlib import Path

import mpmath
import pytest

import dpcompose_exact as dx
from dpcompose_exact.errors import InvalidParameterError
from dpcompose_exact.regions.protocol import PairForm, is_mechanism
from dpcompose_exact.regions.specs import load_spec, parse_mech_spec

ROOT = Path(__file__).resolve().parents[1]
PAPER = dx.Mechanism([("0.3", "0"), ("0.15", "0.02")])


def dg(mu, x):
    """delta(x) of G_mu, any real x (mpmath)."""
    return mpmath.ncdf(mu / 2 - x / mu) - mpmath.exp(x) * mpmath.ncdf(-mu / 2 - x / mu)


def interval(value, digits=40):
    lo, hi = value.interval(digits)
    return mpmath.mpf(lo), mpmath.mpf(hi)


def test_every_constructor_speaks_the_protocol():
    mechanisms = [
        PAPER,
        dx.Mechanism.dp("1", "1e-5"),
        dx.randomized_response("1/2", 4),
        dx.discrete_laplace("log(2)", 2),
        dx.gaussian_noise("1"),
        dx.laplace_noise("2"),
        dx.gaussian_noise("1").subsample("1/100"),
        dx.Mechanism.dp("log(3)").subsample("1/10"),
    ]
    forms = [m.loss_pair().form for m in mechanisms]
    assert forms == [PairForm.FINITE] * 4 + [
        PairForm.GAUSSIAN,
        PairForm.NOISE,
        PairForm.NOISE,
        PairForm.ASYMMETRIC,
    ]
    assert all(is_mechanism(m) for m in mechanisms)
    assert not is_mechanism(("0.3", "0"))
    # the JSON description of each is a spec-file item that reads back the same mechanism
    for m in mechanisms[4:7]:
        item = {**m.to_dict(), "count": 3}
        (kind,) = _spec_items([item])
        assert dx.mechanism_of(kind) == m


def _spec_items(items):
    import json
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"mechanisms": items}, f)
    return load_spec(f.name)


def test_gaussian_alone_is_the_analytic_value_to_30_digits():
    c = dx.compose(dx.gaussian_noise("1"), 10)
    assert "closed form" in c.why
    with mpmath.workdps(60):
        mu = mpmath.sqrt(10)
        truth = mpmath.ncdf(-1 / mu + mu / 2) - mpmath.e * mpmath.ncdf(-1 / mu - mu / 2)
        lo, hi = interval(c.delta("1"), 45)
        assert lo <= truth <= hi and hi - lo <= truth * mpmath.mpf(10) ** -30
        assert c.delta("1").decimal(30) == mpmath.nstr(truth, 30)
        lo, hi = interval(c.epsilon("1e-5"), 40)
        assert dg(mu, lo) > mpmath.mpf("1e-5") >= dg(mu, hi) and hi - lo < hi * 10**-30


def _paper_loss_distribution(k):
    """P-masses of the k-fold loss of the paper's pair, by convolution in mpmath.

    Losses are multiples of 0.15 (the six letters of tests/brute.py: +-0.3, +-0.15 and the
    leak); returns ({j: mass at 0.15 j}, leak).
    """
    from brute import double_dp_letters

    mp = mpmath.mpf
    p0, p1 = double_dp_letters(mpmath.exp(mp("0.3")), mpmath.exp(mp("0.15")), 0, mp("0.02"), mp(1))
    one = {}
    leak1 = mp(0)
    for x in p0:
        if p0[x] == 0:
            continue
        if p1[x] == 0:
            leak1 += p0[x]
            continue
        j = int(mpmath.nint(mpmath.log(p0[x] / p1[x]) / mp("0.15")))
        one[j] = one.get(j, mp(0)) + p0[x]
    dist = {0: mp(1)}
    for _ in range(k):
        nxt = {}
        for a, pa in dist.items():
            for b, pb in one.items():
                nxt[a + b] = nxt.get(a + b, mp(0)) + pa * pb
        dist = nxt
    return dist, 1 - (1 - leak1) ** k


def test_gaussian_next_to_a_multi_constraint_mechanism_is_exact_up_to_balls():
    c = dx.compose([(dx.gaussian_noise("2"), 10), (PAPER, 20)])
    assert "conditioned on the exact loss" in c.why
    with mpmath.workdps(50):
        dist, leak = _paper_loss_distribution(20)
        mu = mpmath.sqrt(mpmath.mpf(10) / 4)

        def truth(eps):
            return leak + sum(m * dg(mu, eps - j * mpmath.mpf("0.15")) for j, m in dist.items())

        lo, hi = interval(c.delta("2"))
        assert lo <= truth(mpmath.mpf(2)) <= hi and (hi - lo) <= 1e-9 * hi
        lo, hi = interval(c.epsilon("1e-5"))
        assert truth(lo) > mpmath.mpf("1e-5") >= truth(hi) and (hi - lo) <= 1e-9 * hi


def test_the_dp_sgd_list_answers_with_a_certified_enclosure():
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pldm

    step = dx.gaussian_noise("1").subsample("1/100")
    c = dx.compose([(step, 100), (PAPER, 20)])
    assert c.is_bounded and "loss grid" in c.why
    lo, hi = (float(x) for x in c.delta("2").interval(17))
    assert 0 < lo <= hi and hi - lo <= 1e-3 * hi
    # dp_accounting, pessimistic on both parts, is an upper bound of the truth: our lower
    # end is below it; its optimistic Gaussian next to our exact pair (pessimistic
    # export) bounds nothing, so only the one side is checked here
    gauss = pldm.from_gaussian_mechanism(
        1.0, sampling_prob=0.01, value_discretization_interval=1e-4
    ).self_compose(100)
    pess = gauss.compose(PAPER.to_dp_accounting(1e-4).self_compose(20))
    assert lo <= pess.get_delta_for_epsilon(2.0)
    e_lo, e_hi = (float(x) for x in c.epsilon("1e-5").interval(17))
    assert e_lo <= pess.get_epsilon_for_delta(1e-5) and e_hi - e_lo <= 1e-3 * e_hi


def test_laplace_next_to_randomized_response_brackets_the_truth():
    # Laplace b = 1 (eps0 = 1) x 2 next to RR(1/2, 2 buckets) x 1, checked against a
    # direct quadrature of the hockey-stick divergence (mpmath), independent of the grids
    c = dx.compose([(dx.laplace_noise("1"), 2), (dx.randomized_response("1/2"), 1)])
    with mpmath.workdps(30):
        mp = mpmath.mpf

        def lap2(t):
            # delta of Lap(0,1) x 2 vs shift 1 at t: integrate over x1, the inner closed form
            def loss(x):
                return abs(x - 1) - abs(x)

            def one(t1):  # delta of one Laplace at t1 (any real t1), closed form
                if t1 >= 1:
                    return mp(0)
                if t1 <= -1:
                    return 1 - mpmath.exp(t1)
                return 1 - mpmath.exp((t1 - 1) / 2)

            # break the range at the kinks: x = 0, 1 and where t - loss(x) = +-1
            kinks = {(2 - t) / 2, -t / 2}
            pts = sorted({-mpmath.inf, mp(0), mp(1), mpmath.inf} | {x for x in kinks if 0 < x < 1})
            return mpmath.quad(lambda x: mpmath.exp(-abs(x)) / 2 * one(t - loss(x)), pts)

        l3 = mpmath.log(3)
        for eps in ("0.5", "2"):
            e = mp(eps)
            truth = 3 * lap2(e - l3) / 4 + lap2(e + l3) / 4
            lo, hi = interval(c.delta(eps), 20)
            assert lo <= truth * (1 + mp(10) ** -15) and truth <= hi * (1 + mp(10) ** -15)
            assert hi - lo <= 1e-6 * hi


def test_gaussian_and_laplace_together_bracket_dp_accounting():
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pldm

    c = dx.compose([(dx.gaussian_noise("2"), 5), (dx.laplace_noise("1"), 3)])
    plds = {
        b: pldm.from_gaussian_mechanism(
            2.0, value_discretization_interval=1e-4, pessimistic_estimate=b
        )
        .self_compose(5)
        .compose(
            pldm.from_laplace_mechanism(
                1.0, value_discretization_interval=1e-4, pessimistic_estimate=b
            ).self_compose(3)
        )
        for b in (True, False)
    }
    for eps in (0.5, 2.0):
        lo, hi = (float(x) for x in c.delta(repr(eps)).interval(17))
        assert lo <= plds[True].get_delta_for_epsilon(eps) * (1 + 1e-12)
        assert hi >= plds[False].get_delta_for_epsilon(eps) * (1 - 1e-12)


def test_subsampled_finite_pairs_next_to_noise_compose_and_bad_methods_are_refused():
    c = dx.compose([(dx.gaussian_noise(1), 1), (dx.Mechanism.dp("log(3)").subsample("1/2"), 1)])
    assert c.method == "certified" and "both directions" in c.why
    with pytest.raises(InvalidParameterError, match="no exact composition; use method 'auto'"):
        dx.compose(dx.gaussian_noise(1), 2, method="exact")
    with pytest.raises(InvalidParameterError, match="for \\(eps, delta\\) mechanisms only"):
        dx.compose(dx.gaussian_noise(1), 2, method="theorem3")


def test_command_line_spellings(tmp_path):
    assert parse_mech_spec("rr(1/2,4):3").family == "randomized_response"
    assert parse_mech_spec("dlap(log(2),2)@1/10:3").params == ("log(2)", "2")
    with pytest.raises(InvalidParameterError, match=r"gaussian takes 1 to 2 parameter"):
        parse_mech_spec("gaussian():3")
    with pytest.raises(InvalidParameterError, match="missing '\\)'"):
        parse_mech_spec("laplace(1:3")
    spec = tmp_path / "mixed.toml"
    spec.write_text(
        '[[mechanism]]\nnoise = "gaussian"\nscale = "1"\nsubsample = "1/100"\ncount = 100\n\n'
        '[[mechanism]]\nconstraints = [["0.3", "0"], ["0.15", "0.02"]]\ncount = 20\n\n'
        '[[mechanism]]\nrandomized_response = {p = "1/2", buckets = 2}\ncount = 3\n'
    )
    kinds = load_spec(spec)
    assert [k.family for k in kinds] == ["gaussian", "dp", "randomized_response"]
    assert dx.mechanism_of(kinds[2]) == dx.randomized_response("1/2")
    with pytest.raises(InvalidParameterError, match="is a float"):
        spec.write_text('[[mechanism]]\nnoise = "laplace"\nscale = 1.5\ncount = 2\n')
        load_spec(spec)


def test_discrete_laplace_huge_sensitivity_is_refused_before_allocating():
    import time

    start = time.process_time()
    with pytest.raises(
        dx.ResourceLimitError, match=r"shift 1000000000: .*which fits shifts up to \d+"
    ):
        dx.discrete_laplace("1", 10**9)
    assert time.process_time() - start < 5


MECHANISM_TYPES = {
    "Mechanism": "dp.py",
    "SubsampledMechanism": "subsampled.py",
    "AdditiveNoise": "noise.py",
    "SubsampledNoise": "noise.py",
}


def _isinstance_on_mechanisms(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
            if len(node.args) != 2:
                continue
            names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
            for name in names & set(MECHANISM_TYPES):
                if path.name != MECHANISM_TYPES[name]:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} isinstance on {name}")
    return found


def _reads_events(path: Path) -> list[str]:
    """Places that compare something with a DpEvent class name (reading an event tree)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                if sub.value.endswith("DpEvent") and sub.value[:1].isupper():
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {sub.value}")
    return found


def test_no_isinstance_on_mechanism_classes_and_one_reader_of_events():
    bad, readers = [], set()
    for path in sorted((ROOT / "dpcompose_exact").rglob("*.py")):
        bad += _isinstance_on_mechanisms(path)
        if _reads_events(path):
            readers.add(path.relative_to(ROOT).as_posix())
    assert bad == []
    assert readers == {"dpcompose_exact/integrations/events.py"}


def test_the_mechanism_ast_checks_can_fail(tmp_path):
    bad = tmp_path / "probe.py"
    bad.write_text('def f(x):\n    return isinstance(x, AdditiveNoise) or x == "GaussianDpEvent"\n')
    probe = ROOT / "dpcompose_exact" / "_probe_mechanism_check.py"
    try:
        probe.write_text(bad.read_text())
        assert _isinstance_on_mechanisms(probe) and _reads_events(probe)
    finally:
        probe.unlink()


def test_a_counted_float_is_refused():
    with pytest.raises(TypeError, match="float"):
        dx.compose(dx.gaussian_noise("1"), 2.0)


def test_a_trillion_gaussians_keep_full_precision():
    # before: the accountant answered 1.5e-4 above the truth at mu = 10^6 (and the
    # search for eps stopped at 1.7e7); the closed form is exact at any mu
    pytest.importorskip("dp_accounting")
    from dp_accounting import GaussianDpEvent, SelfComposedDpEvent

    from dpcompose_exact.integrations.dp_accounting import ExactAccountant

    acc = ExactAccountant().compose(SelfComposedDpEvent(GaussianDpEvent(1.0), 10**12))
    with mpmath.workdps(60):
        mu = mpmath.mpf(10) ** 6
        truth = mpmath.findroot(
            lambda x: dg(mu, x) - mpmath.mpf("1e-5"), mpmath.mpf("500004264000")
        )
        lo, hi = interval(acc.epsilon_value("1e-5"), 25)
        assert lo <= truth <= hi and hi - lo < truth * mpmath.mpf(10) ** -20
        got = acc.get_epsilon(1e-5)
        assert truth <= got <= truth * (1 + mpmath.mpf(10) ** -15)
