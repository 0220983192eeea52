"""Exception hierarchy of dpcompose_exact.

Every error the package raises on bad input derives from :class:`DPComposeError`, so a
script can catch one class; the CLI turns each into one line on stderr and exit status 2.
Messages name the offending value and the valid range.
"""

from __future__ import annotations

__all__ = [
    "DPComposeError",
    "InvalidParameterError",
    "BelowLeakError",
    "UnsupportedExpressionError",
    "ResourceLimitError",
    "CertificationError",
    "SolverError",
    "MissingDependencyError",
    "InactiveConstraintWarning",
]


class DPComposeError(Exception):
    """Base class of every error raised by dpcompose_exact."""


class InvalidParameterError(DPComposeError, ValueError):
    """A parameter is outside its valid range (negative eps, delta >= 1, k < 1, ...)."""


class BelowLeakError(InvalidParameterError):
    """A delta below the leak (the probability of revealing the input): no finite eps."""


class UnsupportedExpressionError(DPComposeError, ValueError):
    """An exact value lies outside the field the exact engine can decide."""


class ResourceLimitError(DPComposeError):
    """The exact result would not fit in the configured memory budget."""


class CertificationError(DPComposeError, ArithmeticError):
    """A numerical claim (a rounding, an inequality) could not be certified."""


class SolverError(DPComposeError, ArithmeticError):
    """A system of optimality equations could not be solved to the requested precision."""


class MissingDependencyError(DPComposeError, ImportError):
    """An optional dependency is not installed; the message names the extra that installs it.

    Also an ``ImportError``, so ``except ImportError`` keeps working.  Raised by
    :func:`dpcompose_exact.optional.require`.
    """


class InactiveConstraintWarning(UserWarning):
    """A given (eps, delta) constraint never touches the region's boundary and was dropped."""


class UnsupportedQueryError(DPComposeError, NotImplementedError):
    """A result (or a mix of mechanisms) does not answer this query; nothing ran out.

    The message says what to ask instead (a composition with noise has no constraint
    list: ask ``delta(eps)`` or ``epsilon(delta)``; ``gdp_mu`` is not computed for Gaussian
    noise next to Laplace noise).
    """
