"""The DP-SGD-shaped entry: ``dx.get_noise_multiplier`` takes Opacus's
keywords and floats (by their repr, as ExactAccountant does); the namespace is clean."""

from __future__ import annotations

from fractions import Fraction

import pytest

import dpcompose_exact as dx
from dpcompose_exact.errors import InvalidParameterError


def test_get_noise_multiplier_takes_opacus_keywords_and_floats():
    sigma = dx.get_noise_multiplier(
        target_epsilon=2.0, target_delta=1e-5, sample_rate=0.01, steps=1000
    )
    assert sigma == Fraction(24, 25)  # sigma = 0.96, the usual DP-SGD example
    # the certificate: sigma meets the target and the grid point below fails (certified)
    c = dx.compose(dx.gaussian_noise(str(sigma)).subsample("1/100"), 1000)
    assert c.delta("2").upper() <= 1e-5
    below = dx.compose(dx.gaussian_noise("0.959").subsample("1/100"), 1000)
    assert below.delta("2").lower() > 1e-5
    # an independent accountant as a bracket: dp_accounting's PLD epsilon at sigma
    pld = pytest.importorskip("dp_accounting.pld.pld_privacy_accountant")
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    acc = pld.PLDAccountant()
    acc.compose(
        dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(0.96)), 1000
    )
    assert 1.97 < acc.get_epsilon(1e-5) < 2.03


def test_epochs_are_counted_as_opacus_counts_them():
    # Opacus: steps = int(epochs / sample_rate); 0.5 epochs at rate 0.05 -> 10 steps
    by_epochs = dx.get_noise_multiplier(
        target_epsilon=1.0, target_delta=1e-5, sample_rate=0.05, epochs=0.5
    )
    by_steps = dx.calibrate("1", "1e-5", k=10, sampling_rate="1/20").answer
    assert by_epochs == by_steps


def test_epochs_or_steps_exactly_one():
    with pytest.raises(InvalidParameterError, match="exactly one of epochs and steps"):
        dx.get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sample_rate=0.01)
    with pytest.raises(InvalidParameterError, match="exactly one of epochs and steps"):
        dx.get_noise_multiplier(
            target_epsilon=1.0, target_delta=1e-5, sample_rate=0.01, steps=10, epochs=1
        )


def test_the_namespace_has_no_helpers():
    names = set(dir(dx)) | set(dx.__all__)
    assert not names & {"Any", "import_module", "_Any", "_import_module"}
    assert "get_noise_multiplier" in dx.__all__ and "calibrate" in dx.__all__
