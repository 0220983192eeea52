"""A certified accountant for Opacus: ``PrivacyEngine(accountant="certified")``.

Importing this module registers :class:`CertifiedAccountant` with Opacus's
``opacus.accountants.register_accountant`` under the name :data:`NAME` (``"certified"``),
so that everything in Opacus that creates an accountant by name can use it::

    import dpcompose_exact.integrations.opacus  # noqa: F401 - registers "certified"
    from opacus import PrivacyEngine
    from opacus.accountants.utils import get_noise_multiplier

    engine = PrivacyEngine(accountant="certified")
    sigma = get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sample_rate=0.01,
                                 steps=1000, accountant="certified")

**What it accounts for.**  Opacus's accountants keep a history of
``(noise_multiplier, sample_rate, steps)``, one entry per run of equal steps (the
optimizer's hook calls :meth:`CertifiedAccountant.step` once per step;
``get_noise_multiplier`` sets ``history`` directly).  Each step of DP-SGD is the Gaussian
mechanism of sensitivity 1 (the clipping norm) and noise ``sigma = noise_multiplier``,
run on a Poisson subsample of rate ``q = sample_rate`` under the add/remove relation:
``dpcompose_exact.gaussian_noise(sigma).subsample(q)``, whose dominating pair in both
directions is ``(q N(1, sigma^2) + (1 - q) N(0, sigma^2), N(0, sigma^2))`` and its swap
(docs/theory.md, section 15).  :meth:`CertifiedAccountant.get_epsilon` composes the whole
history through the front door, :func:`dpcompose_exact.compose`, and returns the upper end
of the certified enclosure of ``eps(delta)`` (docs/theory.md, sections 14 and 18): a
double that is never below the exact epsilon of the composed steps.  Opacus's own
accountants are estimates (RDP: an upper bound, loose; PRV: an estimate with an error
bar; GDP: the central-limit approximation); this one is a certified upper bound with the
width of its enclosure in :meth:`CertifiedAccountant.epsilon_value`.

**Floats.**  Opacus passes the noise multiplier, the sample rate and ``delta`` as Python
floats.  As everywhere a library defines a parameter as a float, each is read as the
shortest decimal that reads back to it (``repr``: ``0.01`` is 1/100;
:func:`~dpcompose_exact.numbers.parsing.parse_float_field`).  A noise multiplier of 0
(no noise) makes epsilon infinite.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..optional import require

require("opacus", "the certified Opacus accountant (dpcompose_exact.integrations.opacus)")

from opacus.accountants import IAccountant, create_accountant, register_accountant

from ..api import compose
from ..composition import Composition
from ..errors import BelowLeakError, InvalidParameterError
from ..mechanisms.noise import gaussian_noise
from ..numbers.parsing import parse_float_field
from ..numbers.value import Value

__all__ = ["NAME", "CertifiedAccountant", "register"]

NAME = "certified"
"""The name the accountant is registered under (``PrivacyEngine(accountant=NAME)``)."""


class CertifiedAccountant(IAccountant):
    """Opacus's accountant interface on the certified composition of the history.

    ``history`` is Opacus's list of ``(noise_multiplier, sample_rate, steps)``; it may be
    set directly (``get_noise_multiplier`` does).  The composition of a history is cached
    until the history changes.
    """

    def __init__(self) -> None:
        """An empty history (no step taken)."""
        self.history: list[tuple[Any, Any, int]] = []
        self._cached: tuple[tuple[Any, ...], Composition | None] | None = None

    @classmethod
    def mechanism(cls) -> str:
        """The name Opacus knows this accountant by (:data:`NAME`)."""
        return NAME

    def __len__(self) -> int:
        """The number of history entries, as Opacus's accountants count them."""
        return len(self.history)

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """One optimizer step: a run of equal steps grows by one, else a new entry."""
        if self.history:
            sigma, q, n = self.history[-1]
            if sigma == noise_multiplier and q == sample_rate:
                self.history[-1] = (sigma, q, n + 1)
                return
        self.history.append((noise_multiplier, sample_rate, 1))

    # -- the composition -----------------------------------------------------------------
    def kinds(self) -> list[tuple[Any, int]]:
        """The history as ``(mechanism, count)`` kinds (exact parameters; None: no noise).

        Raises:
            InvalidParameterError: a negative noise multiplier, a sample rate outside
                ``[0, 1]`` or a negative step count (the value and the range in the message).
        """
        out: list[tuple[Any, int]] = []
        for sigma_in, q_in, steps in self.history:
            sigma = parse_float_field(sigma_in, "noise_multiplier")
            q = parse_float_field(q_in, "sample_rate")
            count = int(steps)
            if count != steps or count < 0:
                raise InvalidParameterError(f"steps = {steps!r} must be an integer >= 0")
            if sigma < 0:
                raise InvalidParameterError(f"noise_multiplier = {sigma_in!r} must be >= 0")
            if not 0 <= q <= 1:
                raise InvalidParameterError(f"sample_rate = {q_in!r} must lie in [0, 1]")
            if count == 0 or q == 0:
                continue  # no step, or no record ever used: no privacy loss
            if sigma == 0:
                raise _NoNoise
            base = gaussian_noise(sigma)
            out.append((base if q == 1 else base.subsample(q), count))
        return out

    @property
    def composition(self) -> Composition | None:
        """:func:`dpcompose_exact.compose` of the history (None: no privacy loss yet).

        Raises:
            InvalidParameterError: a step without noise (epsilon is infinite), or an
                invalid history entry.
        """
        key = tuple(tuple(entry) for entry in self.history)
        if self._cached is None or self._cached[0] != key:
            try:
                kinds = self.kinds()
            except _NoNoise:
                raise InvalidParameterError(
                    "a step with noise_multiplier = 0 was taken: epsilon is infinite"
                ) from None
            self._cached = (key, compose(kinds) if kinds else None)
        return self._cached[1]

    def epsilon_value(self, delta: Any) -> Value:
        """``eps(delta)`` of the history as a certified two-sided :class:`Value`.

        ``delta`` is read exactly (strings, Fractions; floats by their ``repr`` decimal).

        Raises:
            InvalidParameterError: ``delta`` outside ``(0, 1)``, a step without noise.
            BelowLeakError: no finite epsilon reaches ``delta``.
        """
        d = parse_float_field(delta, "delta")
        if not 0 < d < 1:
            raise InvalidParameterError(f"delta = {delta!r} must lie in (0, 1)")
        comp = self.composition
        if comp is None:
            return Value.from_rational(Fraction(0))
        value = comp.epsilon(d)
        assert isinstance(value, Value)
        return value

    def get_epsilon(self, delta: float, *args: Any, **kwargs: Any) -> float:
        """The certified upper end of ``eps(delta)``: a double never below the exact value.

        Opacus's interface passes accountant-specific arguments (``alphas``, ``eps_error``)
        through ``*args, **kwargs``; this accountant has no tuning knob and ignores them.
        Returns ``inf`` when a step had no noise or no finite epsilon reaches ``delta``, 0
        before the first step or for ``delta >= 1``.

        Raises:
            InvalidParameterError: ``delta`` negative or not a number, an invalid history.
        """
        d = parse_float_field(delta, "delta")
        if d < 0:
            raise InvalidParameterError(f"delta = {delta!r} must be >= 0")
        if d >= 1:
            return 0.0
        if any(_is_zero(s) and q and n for s, q, n in self.history):
            return math.inf  # a step without noise: no finite epsilon
        comp = self.composition
        if comp is None:
            return 0.0
        if d == 0:
            return math.inf  # Gaussian noise has no finite epsilon at delta = 0
        try:
            value = comp.epsilon(d)
        except BelowLeakError:
            return math.inf
        assert isinstance(value, Value)
        return value.upper()


class _NoNoise(Exception):
    """A history entry with noise multiplier 0 (internal: turned into inf or an error)."""


def _is_zero(x: Any) -> bool:
    try:
        return parse_float_field(x, "noise_multiplier") == 0
    except InvalidParameterError:
        return False


def register(name: str = NAME, force: bool = False) -> type[CertifiedAccountant]:
    """Register :class:`CertifiedAccountant` with Opacus under ``name``; return the class.

    Another name gives a subclass whose ``mechanism()`` is that name (Opacus's
    ``make_private_with_epsilon`` looks the accountant up again by ``mechanism()``).
    Registering the same class again is a no-op.

    Raises:
        InvalidParameterError: ``name`` is taken by another accountant and ``force`` is
            false.
    """
    cls = CertifiedAccountant
    if name != NAME:
        cls = type(f"CertifiedAccountant_{name}", (CertifiedAccountant,), {})
        cls.mechanism = classmethod(lambda _cls: name)  # type: ignore[method-assign]
    try:
        existing = create_accountant(mechanism=name)
    except ValueError:
        existing = None
    if existing is not None and not force:
        if type(existing).__name__ == cls.__name__ and isinstance(existing, CertifiedAccountant):
            return type(existing)
        raise InvalidParameterError(
            f"Opacus has an accountant named {name!r} already ({type(existing).__name__}); "
            "pass force=True to replace it, or choose another name"
        )
    register_accountant(name, cls, force=True)
    return cls


register()
