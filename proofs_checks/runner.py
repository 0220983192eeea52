"""Run the symbolic checks and print one line per check (``dpcompose verify``).

Each check proves identities of the paper (docs/theory.md) for symbolic parameters in a stated
scope; see the module docstring of each check for the mathematics and exact scope.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from proofs_checks import conjecture, kov, mixture, pair, remark2, rotation, thm1, thm2_thm3
from proofs_checks._result import CheckResult

CheckFn = Callable[..., CheckResult]

CHECKS: list[tuple[str, str, CheckFn]] = [
    (pair.NAME, pair.CLAIM, pair.check_pair),
    (thm2_thm3.NAME, thm2_thm3.CLAIM, thm2_thm3.check_thm2_thm3),
    (kov.NAME, kov.CLAIM, kov.check_kov),
    (remark2.NAME, remark2.CLAIM, remark2.check_remark2),
    (mixture.NAME, mixture.CLAIM, mixture.check_mixture),
    (thm1.NAME, thm1.CLAIM, thm1.check_thm1),
    (rotation.NAME, rotation.CLAIM, rotation.check_rotation),
    (conjecture.NAME, conjecture.CLAIM, conjecture.check_conjecture),
]
"""Registry: (name, one-line claim, check function) in the order of the issue."""


def list_checks() -> list[tuple[str, str]]:
    """Return ``(name, one-line claim)`` for every registered check."""
    return [(name, claim) for name, claim, _ in CHECKS]


def run_check(name: str, quick: bool = False) -> CheckResult:
    """Run one check by name and return its result with the elapsed time filled in.

    Raises:
        KeyError: if ``name`` is not a registered check.
    """
    fns = {n: fn for n, _, fn in CHECKS}
    if name not in fns:
        raise KeyError(f"unknown check {name!r}; known: {', '.join(fns)}")
    t0 = time.perf_counter()
    res = fns[name](quick=quick)
    res.seconds = time.perf_counter() - t0
    return res


def run(names: list[str] | None = None, stream: TextIO = sys.stdout, quick: bool = False) -> int:
    """Run checks, print ``STATUS name scope time`` per check and counterexamples.

    Args:
        names: checks to run (default: all, in registry order).
        stream: where to print.
        quick: lower the scopes (for fast test runs); the printed scope says so.

    Returns:
        0 if every check passed, 1 otherwise.

    Raises:
        KeyError: for an unknown check name.
    """
    selected = names if names else [n for n, _, _ in CHECKS]
    known = {n for n, _, _ in CHECKS}
    unknown = [n for n in selected if n not in known]
    if unknown:
        raise KeyError(f"unknown check(s) {unknown}; known: {sorted(known)}")
    status = 0
    total = 0.0
    for name in selected:
        res = run_check(name, quick=quick)
        total += res.seconds
        tag = "PASS" if res.passed else "FAIL"
        print(f"{tag} {name} [{res.scope}] {res.seconds:.2f}s", file=stream, flush=True)
        if not res.passed:
            status = 1
            for line in res.counterexample:
                print(f"    {line}", file=stream)
    print(
        f"{'ALL PASS' if status == 0 else 'FAILURES'}: {len(selected)} checks, "
        f"{total:.2f}s{' (quick scopes)' if quick else ''}",
        file=stream,
        flush=True,
    )
    return status
