"""The certified Opacus accountant (dpcompose_exact.integrations.opacus).

References are computed independently of the accountant: the front door's composition of
the same steps, Opacus's own RDP accountant (an upper bound: ours must not exceed it), and
the closed form of the full-batch Gaussian (mpmath at 50 digits).
"""

from __future__ import annotations

import math
import warnings

import pytest

opacus = pytest.importorskip("opacus")
torch = pytest.importorskip("torch")

import mpmath  # noqa: E402
from opacus.accountants import RDPAccountant, create_accountant  # noqa: E402
from opacus.accountants.utils import get_noise_multiplier  # noqa: E402

import dpcompose_exact as dx  # noqa: E402
from dpcompose_exact.errors import InvalidParameterError  # noqa: E402
from dpcompose_exact.integrations import opacus as dop  # noqa: E402


def _rdp_epsilon(history: list, delta: float) -> float:
    acct = RDPAccountant()
    acct.history = list(history)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "optimal order is the largest alpha"
        return acct.get_epsilon(delta)


def _front_door_upper(history: list, delta: str) -> float:
    kinds = [(dx.gaussian_noise(repr(s)).subsample(repr(q)), n) for s, q, n in history]
    return dx.compose(kinds).epsilon(delta).upper()


def test_privacy_engine_trains_with_the_certified_accountant() -> None:
    torch.manual_seed(0)
    x = torch.randn(64, 4)
    y = (x[:, 0] > 0).long()
    data = torch.utils.data.TensorDataset(x, y)
    loader = torch.utils.data.DataLoader(data, batch_size=16)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = opacus.PrivacyEngine(accountant="certified")
    assert isinstance(engine.accountant, dop.CertifiedAccountant)
    model, optimizer, loader = engine.make_private(
        module=model,
        optimizer=optimizer,
        data_loader=loader,
        noise_multiplier=1.1,
        max_grad_norm=1.0,
    )
    loss_fn = torch.nn.CrossEntropyLoss()
    steps = 0
    for _ in range(2):  # two epochs of 4 Poisson batches
        for xb, yb in loader:
            optimizer.zero_grad()
            loss_fn(model(xb), yb).backward()
            optimizer.step()
            steps += 1
    history = engine.accountant.history
    assert history == [(1.1, 0.25, steps)]
    eps = engine.get_epsilon(1e-5)
    assert eps == _front_door_upper(history, "1e-5")
    rdp = _rdp_epsilon(history, 1e-5)
    assert eps <= rdp
    print(f"opacus training: {steps} steps, certified eps(1e-5) = {eps!r}, RDP {rdp!r}")


def test_get_noise_multiplier_with_the_certified_accountant() -> None:
    kwargs = dict(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.02, steps=200)
    sigma = get_noise_multiplier(accountant="certified", **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        sigma_rdp = get_noise_multiplier(accountant="rdp", **kwargs)
    history = [(sigma, 0.02, 200)]
    assert _front_door_upper(history, "1e-5") <= 2.0  # the target is met, certified
    assert sigma <= sigma_rdp  # a tighter accountant needs no more noise than RDP
    # the search's tolerance is 0.01 in epsilon: a bit less noise would exceed the target
    assert _front_door_upper([(sigma * 0.9, 0.02, 200)], "1e-5") > 2.0 - 0.01


def test_full_batch_gaussian_matches_the_closed_form() -> None:
    # q = 1: k Gaussian steps are one Gaussian of mu = sqrt(k) / sigma; its delta(eps)
    # is Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Dong, Roth and Su)
    acct = dop.CertifiedAccountant()
    for _ in range(25):
        acct.step(noise_multiplier=5.0, sample_rate=1.0)
    mpmath.mp.dps = 50
    mu = mpmath.sqrt(25) / 5

    def delta(e: mpmath.mpf) -> mpmath.mpf:
        return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)

    exact = mpmath.findroot(lambda e: delta(e) - mpmath.mpf("1e-5"), 4)
    value = acct.epsilon_value("1e-5")
    lo, hi = value.lower(), value.upper()
    assert lo <= exact <= hi
    assert acct.get_epsilon(1e-5) == hi


def test_history_edges() -> None:
    acct = create_accountant("certified")
    assert acct.get_epsilon(1e-5) == 0.0  # nothing spent yet
    acct.step(noise_multiplier=1.0, sample_rate=0.0)  # no record used
    assert acct.get_epsilon(1e-5) == 0.0
    acct.step(noise_multiplier=1.0, sample_rate=0.1)
    acct.step(noise_multiplier=1.0, sample_rate=0.1)
    assert acct.history == [(1.0, 0.0, 1), (1.0, 0.1, 2)] and len(acct) == 2
    assert acct.get_epsilon(0.0) == math.inf  # Gaussian noise: no eps at delta 0
    assert acct.get_epsilon(1.0) == 0.0
    state = acct.state_dict()
    again = create_accountant("certified")
    again.load_state_dict(state)
    assert again.get_epsilon(1e-5) == acct.get_epsilon(1e-5)
    acct.step(noise_multiplier=0.0, sample_rate=0.1)
    assert acct.get_epsilon(1e-5) == math.inf  # a step without noise


@pytest.mark.parametrize(
    ("history", "match"),
    [
        ([(-1.0, 0.1, 3)], r"noise_multiplier = -1\.0 must be >= 0"),
        ([(1.0, 1.5, 3)], r"sample_rate = 1\.5 must lie in \[0, 1\]"),
        ([(1.0, 0.1, -2)], r"steps = -2 must be an integer >= 0"),
    ],
)
def test_invalid_history_is_refused(history: list, match: str) -> None:
    acct = dop.CertifiedAccountant()
    acct.history = history
    with pytest.raises(InvalidParameterError, match=match):
        acct.get_epsilon(1e-5)


def test_invalid_delta_is_refused() -> None:
    acct = dop.CertifiedAccountant()
    acct.step(noise_multiplier=1.0, sample_rate=0.1)
    with pytest.raises(InvalidParameterError, match=r"delta = -0\.1 must be >= 0"):
        acct.get_epsilon(-0.1)
    with pytest.raises(InvalidParameterError, match=r"delta = 1\.0 must lie in \(0, 1\)"):
        acct.epsilon_value(1.0)


def test_register_refuses_a_taken_name_and_accepts_another() -> None:
    assert dop.register() is dop.CertifiedAccountant  # registering again: a no-op
    with pytest.raises(InvalidParameterError, match=r"accountant named 'rdp' already"):
        dop.register("rdp")
    cls = dop.register("certified_test")
    acct = create_accountant("certified_test")
    assert isinstance(acct, cls) and acct.mechanism() == "certified_test"
