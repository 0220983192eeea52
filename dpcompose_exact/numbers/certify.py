"""Certified signs and digits: Arb balls at increasing precision, after exact zero tests.

A nonzero element of the exact field does not vanish at the transcendental point where it
is evaluated (docs/theory.md, section 3), so its sign is decided by ball arithmetic at
increasing precision (:func:`certified_sign`), never by a float comparison; a decimal is
printed only once a ball certifies its digits to one unit in the last place
(docs/theory.md, section 13).  The working precision is at most :data:`MAX_PREC_BITS`.

Every such search goes through :func:`refine`, the one precision-doubling loop of the
package: evaluate at a working precision, accept the result or double the precision, and
give up with a :class:`~dpcompose_exact.errors.CertificationError` past a ceiling.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import flint

from ..errors import CertificationError, InvalidParameterError
from .format import ball_to_decimal

__all__ = ["MAX_PREC_BITS", "MAX_DIGITS", "certified_sign", "check_digits", "refine"]

MAX_PREC_BITS = 1 << 20

T = TypeVar("T")


def refine(
    evaluate: Callable[[int], T | None],
    accept: Callable[[T], bool] | None = None,
    start_prec: int = 64,
    *,
    ceiling: int = MAX_PREC_BITS,
    failure: str | Callable[[], str] = "could not certify a result",
    set_prec: bool = True,
) -> T:
    """Evaluate at increasing working precision until the result is accepted.

    The one precision-doubling loop of the package: ``evaluate(prec)`` runs under
    ``flint.ctx.workprec(prec)`` for ``prec = start_prec, 2 start_prec, ...`` up to
    ``ceiling`` bits, and the first result that ``accept`` takes is returned.

    Args:
        evaluate: computes a candidate at the given working precision (bits).
        accept: whether a candidate is good enough; by default, whether it is not None
            (then ``evaluate`` returns None for "not yet").
        start_prec: the first working precision.
        ceiling: the largest working precision tried.
        failure: the message (or a function returning it) of the error at the ceiling.
        set_prec: whether to set the working precision around ``evaluate``; False for
            evaluators that set it themselves from their argument (the sign decisions:
            entering ``workprec`` costs more than a cheap evaluation).

    Raises:
        CertificationError: when no precision up to ``ceiling`` gives an accepted result.

    >>> refine(lambda prec: prec if prec >= 200 else None)
    256
    """
    prec = start_prec
    while prec <= ceiling:
        if set_prec:
            with flint.ctx.workprec(prec):
                out = evaluate(prec)
                ok = out is not None if accept is None else accept(out)  # type: ignore[arg-type]
        else:
            out = evaluate(prec)
            ok = out is not None if accept is None else accept(out)  # type: ignore[arg-type]
        if ok:
            return out  # type: ignore[return-value]
        prec *= 2
    raise CertificationError(failure if isinstance(failure, str) else failure())


def certified_sign(
    evaluate: Callable[[int], flint.arb],
    is_zero: bool,
    what: str = "quantity",
    *,
    zero_test: Callable[[], bool] | None = None,
    max_bits: int = MAX_PREC_BITS,
) -> int:
    """Sign of a real number known exactly but evaluated by balls.

    This is the one routine through which every sign decision goes (by :func:`refine`).

    Args:
        evaluate: returns a ball containing the number at the given working precision
            (bits); called at increasing precision until the ball excludes 0.
        is_zero: the result of the exact zero test (then no evaluation happens).
        what: description used if the sign cannot be decided.
        zero_test: a costlier exact zero test, tried once when balls at 256 bits do not
            decide (a number that is exactly 0 never gets a ball excluding 0).
        max_bits: the largest working precision tried.

    Returns:
        -1, 0 or 1.

    Raises:
        CertificationError: if the sign is not decided by ``max_bits`` bits.
    """
    if is_zero:
        return 0

    def decide(prec: int) -> int | None:
        ball = evaluate(prec)
        if ball > 0:
            return 1
        if ball < 0:
            return -1
        if ball.is_exact() and ball.is_zero():
            return 0  # a radius-0 enclosure of 0
        if prec == 256 and zero_test is not None and zero_test():
            return 0
        return None

    return refine(
        decide,
        start_prec=64,
        ceiling=max_bits,
        failure=lambda: f"could not decide the sign of {what} with {max_bits} bits of precision",
        set_prec=False,  # evaluate sets it; the hot path of every comparison
    )


MAX_DIGITS = 100_000  # significant digits of a printed decimal (about 332,000 bits)


def check_digits(digits: int) -> int:
    """Validate a number of significant digits (1 to :data:`MAX_DIGITS`)."""
    if isinstance(digits, bool) or not isinstance(digits, int) or not 1 <= digits <= MAX_DIGITS:
        raise InvalidParameterError(
            f"digits = {digits!r} must be an integer from 1 to {MAX_DIGITS}"
        )
    return digits


def _decimal_from(evaluate: Callable[[int], flint.arb], digits: int, prec: int) -> str:
    check_digits(digits)
    return refine(
        lambda p: ball_to_decimal(evaluate(p), digits),
        start_prec=prec,
        failure=lambda: f"could not certify {digits} digits with {MAX_PREC_BITS} bits",
    )
