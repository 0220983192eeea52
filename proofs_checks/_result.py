"""The result record shared by all checks."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CheckResult:
    """Outcome of one symbolic check.

    Attributes:
        name: the check's registry name.
        passed: True when every identity in scope was verified.
        scope: what was verified (k range, number of chambers, ...); always printed.
        counterexample: report lines describing the first failures (empty on success).
        seconds: wall time, filled in by the runner.
    """

    name: str
    passed: bool
    scope: str
    counterexample: list[str] = field(default_factory=list)
    seconds: float = 0.0


MAX_REPORTED = 3
"""At most this many failing instances are described in a counterexample."""
