"""Discrete Laplace noise on an integer query: an exact finite pair (the ``dlap`` family).

The pair grows with the square of the shift: :func:`check_discrete_laplace_size` refuses
one too large for the memory budget before anything is allocated.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..errors import InvalidParameterError, ResourceLimitError
from ..limits import BASE_RSS, DEFAULT_MEMORY_LIMIT
from ..numbers import ExpDomain, QzElem, linear_form
from ..regions.pld import PLD
from ..regions.specs import parse_count
from .dp import Mechanism

__all__ = ["discrete_laplace", "check_discrete_laplace_size", "discrete_laplace_pair_bytes"]


# Bytes per (loss, z-power) slot of the discrete Laplace pair in Q(z): shift + 1 losses
# whose masses carry z^-x for x up to the shift, i.e. (shift + 1)^2 polynomial slots.
# Measured (CPython 3.11, python-flint 0.6): 16 per slot to build the mechanism, 50 with its
# canonical pair (the event trees); 56 keeps both below the estimate.
_DLAP_SLOT_BYTES = 56
# Bytes per atom of the pair with a rational e^a (exponent vectors, Python objects).
_DLAP_ATOM_BYTES = 1000


def discrete_laplace_pair_bytes(shift: int, ratio: Fraction | None = None) -> int:
    """Estimated peak bytes of building the exact discrete Laplace pair of ``shift``.

    The pair has ``shift + 1`` distinct losses; the mass of the loss ``a (s - 2x)`` is
    ``(1-q)/(1+q) q^x``, so the sizes grow with the square of the shift.

    Args:
        shift: the shift of the noise (sensitivity, doubled under replace-one).
        ratio: ``e^a`` when it is rational (the masses are rationals of about
            ``x log2(num den)`` bits); None: ``e^a`` is the generator ``z`` of Q(z) (the
            masses are polynomials of z-degree up to ``x``).

    Returns:
        The estimate in bytes, the interpreter included (:data:`BASE_RSS`).
    """
    slots = (shift + 1) ** 2
    if ratio is None:
        return BASE_RSS + _DLAP_SLOT_BYTES * slots
    bits = ratio.numerator.bit_length() + ratio.denominator.bit_length()
    # sum over x of 2 x bits (numerator and denominator of q^x (1-q)/(1+q)), in bytes
    return BASE_RSS + slots * bits // 8 + _DLAP_ATOM_BYTES * (shift + 1)


def check_discrete_laplace_size(
    shift: int,
    max_memory: int | None = DEFAULT_MEMORY_LIMIT,
    ratio: Fraction | None = None,
    what: str = "discrete Laplace",
) -> None:
    """Refuse, before allocating, a discrete Laplace pair too large for ``max_memory``.

    Args:
        shift: the shift of the noise.
        max_memory: bytes the pair may use (None: no limit).
        ratio: ``e^a`` when rational (see :func:`discrete_laplace_pair_bytes`).
        what: the event, for the message.

    Raises:
        ResourceLimitError: the estimate exceeds ``max_memory``; the message gives the
            shift, the estimate, the limit and the largest shift that fits.
    """
    if max_memory is None:
        return
    need = discrete_laplace_pair_bytes(shift, ratio)
    if need <= max_memory:
        return
    lo, hi = 0, shift  # the largest shift that fits, by bisection
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if discrete_laplace_pair_bytes(mid, ratio) <= max_memory:
            lo = mid
        else:
            hi = mid - 1
    raise ResourceLimitError(
        f"{what} with shift {shift}: its exact pair has {shift + 1} distinct losses with "
        f"masses up to q^{shift}, about {need:.3g} bytes to build; the memory limit is "
        f"{max_memory} bytes ({max_memory / 2**30:g} GiB), which fits shifts up to {lo} "
        "(raise the limit, or lower the sensitivity)"
    )


def discrete_laplace(
    a: Any, sensitivity: int = 1, max_memory: int | None = DEFAULT_MEMORY_LIMIT
) -> Mechanism:
    """Discrete Laplace noise ``P(x) ∝ e^(-a|x|)`` on an integer query of the given sensitivity.

    ``a`` is exact (``"1/2"``, ``"log(2)"``: then ``e^a`` is rational and the mechanism
    stays exact under subsampling).  With ``q = e^-a`` and shift ``s`` the loss
    ``a(|x - s| - |x|)`` takes the values ``a s`` (P0-mass ``1/(1+q)``), ``a (s - 2x)``
    for ``0 < x < s`` (mass ``(1-q)/(1+q) q^x``) and ``-a s`` (mass ``q^s/(1+q)``): a
    finite pair in the exact field.

    Args:
        a: the noise parameter, exact and ``> 0``.
        sensitivity: the shift of the noise (an integer ``>= 1``).
        max_memory: bytes the pair may take (:func:`check_discrete_laplace_size`; None:
            no limit); checked before anything is allocated.

    Raises:
        ResourceLimitError: the pair would not fit in ``max_memory``.

    >>> discrete_laplace("log(2)").pairs
    (('log(2)', '0'),)
    """
    form = linear_form(a, "discrete Laplace a")
    if form.sign() <= 0:
        raise InvalidParameterError(f"discrete Laplace a = {form} must be > 0")
    shift = parse_count(sensitivity, "sensitivity", positive=True)
    dom = ExpDomain.for_forms([form])
    unit = dom.loss(form)
    z = dom.exp_loss(unit)  # e^a in the field of the domain
    check_discrete_laplace_size(shift, max_memory, z.as_rational(), "discrete Laplace")
    masses = [(tuple(shift * n for n in unit), z / (z + 1))]  # 1/(1+q) = z/(z+1)
    power = z
    for x in range(1, shift):
        # (1-q)/(1+q) q^x = (z-1)/(z+1) z^-x
        masses.append((tuple((shift - 2 * x) * n for n in unit), (z - 1) / ((z + 1) * power)))
        power = power * z
    masses.append((tuple(-shift * n for n in unit), 1 / ((z + 1) * power / z)))  # q^s/(1+q)
    pld = PLD.from_masses(dom, masses, QzElem.from_rational(0))
    return Mechanism.from_region(pld.to_region())
