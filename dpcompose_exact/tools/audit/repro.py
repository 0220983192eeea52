"""Standalone reproduction scripts for the audit suite's findings (``--repro DIR``).

For every ``UNSOUND`` or ``invalid value`` row of a
:class:`~dpcompose_exact.tools.audit.suite.SuiteReport`, :func:`write_repros` writes a
Python script that a library's maintainers can run without dpcompose_exact: the library
call comes from the adapter (:meth:`~dpcompose_exact.tools.audit.adapters.Adapter.repro_source`,
which binds ``reported``), the certified reference is embedded as decimal text, and the
script prints the library's number next to it (and, for a guarantee on the wrong side, by
how much) and exits 1 while the number is on the wrong side of the certified value (an
upper bound below its lower end beyond float rounding, a lower bound on beta above its
upper end, or no valid value: nan, a negative number, a probability above 1), 0 once it is
not, so that a maintainer can run it as a test.  A finding that is a non-monotone curve
(an ``invalid value`` whose number alone is valid: delta(eps) or eps(delta) rising between
two query points, :func:`~dpcompose_exact.tools.audit.suite.non_monotone`) asks the library
for both points and exits 1 while the later one is above the earlier one beyond float
rounding (the same rule as the suite's).  An adapter that cannot write its call gets a
script that prints the number the audit received and the case's inputs.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...errors import InvalidParameterError
from .adapters import get
from .compare import FLOAT_ULPS
from .suite import SUITES, SuiteCase, SuiteReport, SuiteRow, _job, rising_from

__all__ = ["repro_name", "repro_script", "timeout_script", "write_repros"]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")[:60] or "x"


def repro_name(index: int, row: SuiteRow) -> str:
    """The file name of the script of the ``index``-th finding (from 1, severity order)."""
    name = f"{index:03d}_{_slug(row.accountant)}_{_slug(row.case)}_{row.quantity}_{_slug(row.at)}"
    return f"{name}.py"


def repro_script(
    row: SuiteRow,
    source: str | None,
    inputs: str = "",
    rising: tuple[str, str | None, float] | None = None,
) -> str:
    """The text of one reproduction script.

    Args:
        row: the finding (its library, case, query, number and certified enclosure).
        source: the adapter's library call binding ``reported`` (None: not available).
        inputs: the case's mechanisms in words (a comment when ``source`` is None).
        rising: for a point of a non-monotone curve, ``(earlier point, its library call
            binding reported or None, the number the audit received there)``: the script
            computes both points and exits 1 while the curve rises (the value at ``row.at``
            above the one at the earlier point by more than float rounding).
    """
    at = f" at {row.at}" if row.at else ""
    lo = "None" if row.exact_lower is None else repr(row.exact_lower)
    hi = "None" if row.exact_upper is None else repr(row.exact_upper)
    head = [
        "#!/usr/bin/env python3",
        f'"""{row.library} {row.version}: {row.quantity}{at} on {row.case}.',
        "",
        f"The library presents this number as {row.claim} (series {row.accountant}).",
        "The certified reference below was computed by dpcompose_exact in exact and ball",
        "arithmetic and is embedded as decimal text; this script imports only the library.",
        f"Audit verdict: {row.verdict}.",
        '"""',
        "",
    ]
    if source is None:
        body = [
            f"# {inputs}" if inputs else "# (inputs not recorded)",
            "# the adapter cannot write its library call: the number the audit received",
            f"reported = float({str(row.reported)!r})",
        ]
    else:
        body = source.rstrip("\n").splitlines()
    label = "delta" if row.quantity == "delta" else "eps"
    if rising is not None:
        before, before_source, before_value = rising
        first = (
            before_source.rstrip("\n").splitlines()
            if before_source is not None
            else [f"reported = float({str(before_value)!r})  # the number the audit received"]
        )
        body = [
            f"# first the earlier point the curve rises from: {label}({before})",
            *first,
            "earlier = float(reported)",
            "",
            f"# then the point of the finding: {label}({row.at})",
            *body,
        ]
    tail = [
        "",
        "import sys",
        "from decimal import Decimal",
        "",
        "reported = float(reported)",
        "",
        f"LOWER, UPPER = {lo}, {hi}  # the certified enclosure of the true value",
        f"CLAIM, QUANTITY = {row.claim!r}, {row.quantity!r}",
        f"SLACK = Decimal({FLOAT_ULPS}) / 2**52  # float rounding: {FLOAT_ULPS} ulps, relative",
        f'print("{row.library} {row.version} reports {row.quantity}{at} =", repr(reported))',
        'print("certified true value in [", LOWER, ",", UPPER, "]")',
        "wrong = reported != reported  # nan is no value",
        "if not wrong and QUANTITY in ('delta', 'beta'):",
        "    wrong = not 0 <= reported <= 1  # a probability",
        "elif not wrong:",
        "    wrong = reported < 0",
        "if not wrong and LOWER is not None and CLAIM == 'upper bound' and QUANTITY != 'beta':",
        "    low = Decimal(LOWER)  # an upper bound must not be below the truth",
        "    wrong = Decimal(reported) < (low - abs(low) * SLACK if low.is_finite() else low)",
        "    if low.is_finite() and low != 0:",
        '        print("relative error against the lower end:", (Decimal(reported) - low) / low)',
        "if not wrong and UPPER is not None and CLAIM == 'lower bound' and QUANTITY == 'beta':",
        "    high = Decimal(UPPER)  # a lower bound must not be above the truth",
        "    wrong = Decimal(reported) > high + abs(high) * SLACK",
        "    if high != 0:",
        '        print("relative error against the upper end:", (Decimal(reported) - high) / high)',
        'print("ON THE WRONG SIDE of the certified value" if wrong else "consistent with it")',
    ]
    if rising is not None:  # the rule of suite.non_monotone: above by more than float rounding
        tail += [
            f"# a {row.quantity} curve never rises: {label}({row.at}) must not exceed "
            f"{label}({rising[0]})",
            f'print("{label}({rising[0]}) =", repr(earlier), "and {label}({row.at}) =", '
            "repr(reported))",
            "rises = reported > earlier and reported - earlier > float(SLACK) * abs(earlier)",
            'print("NON-MONOTONE: the curve rises" if rises else "the curve does not rise here")',
            "wrong = wrong or rises",
        ]
    tail.append("sys.exit(1 if wrong else 0)")
    return "\n".join(head + body + tail) + "\n"


def _source(job: Any, row: SuiteRow, at: str) -> str | None:
    """The adapter's library call for ``row``'s series and quantity at ``at`` (or None)."""
    try:
        return get(row.adapter).repro_source(job, row.accountant, row.quantity, at)
    except Exception:  # noqa: BLE001 - a script without the call is still written
        return None


def write_repros(
    report: SuiteReport,
    directory: str | Path,
    options: dict[str, Any],
    cases: Sequence[SuiteCase] = (),
) -> list[Path]:
    """Write a script per ``UNSOUND`` or ``invalid value`` row of ``report`` into ``directory``.

    Args:
        report: the suite's report.
        directory: created if missing.
        options: the library settings the suite ran with (``pld_grid``, ...).
        cases: cases of one's own the report ran (the suite's are found by name).

    Returns:
        The paths written, in the order of the findings (severity order), then one
        ``crash_KEY.py`` per classified library failure met (:mod:`.failures`).

    Raises:
        InvalidParameterError: ``directory`` cannot be created.
    """
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidParameterError(f"--repro {str(directory)!r}: {exc.strerror or exc}") from None
    known = {c.name: c for c in SUITES[report.suite]()} if report.suite in SUITES else {}
    known.update((c.name, c) for c in cases)
    paths = []
    jobs: dict[str, Any] = {}
    for i, row in enumerate(report.findings(), start=1):
        source = None
        inputs = row.case
        case = known.get(row.case)
        if case is not None:
            if row.case not in jobs:
                jobs[row.case] = _job(case, case.build(), dict(options))
            job = jobs[row.case]
            inputs = ", ".join(f"{m.describe()} x{n}" for m, n in job.items)
            source = _source(job, row, row.at)
        rising = None
        if row.verdict == "invalid value" and (found := rising_from(row.note)) is not None:
            before, value = found
            rising = (before, _source(job, row, before) if case is not None else None, value)
            if source is None or rising[1] is None:  # both numbers as the audit received
                source, rising = None, (before, None, value)
        path = out / repro_name(i, row)
        path.write_text(repro_script(row, source, inputs, rising), encoding="utf-8")
        paths.append(path)
    from .failures import classify

    seen = {}
    timed_out: dict[tuple[str, str], SuiteRow] = {}
    for row in report.rows:
        if row.verdict == "crashed" and (f := classify(row.library, row.note)) is not None:
            if not f.repro:  # past the time limit: a script per case, with the library call
                timed_out.setdefault((row.accountant, row.case), row)
            else:
                seen.setdefault(f.key, f)
    for key, f in seen.items():
        path = out / f"crash_{key}.py"
        head = f'"""{f.library}: {f.exception}\n\n{f.verdict}\n"""\n'
        path.write_text(head + f.repro, encoding="utf-8")
        paths.append(path)
    for (series, case_name), row in timed_out.items():
        case = known.get(case_name)
        source = None
        if case is not None:
            if case_name not in jobs:
                jobs[case_name] = _job(case, case.build(), dict(options))
            quantity, at = (row.quantity, row.at) if row.at else ("delta", case.eps[0])
            source = _source(jobs[case_name], dataclasses.replace(row, quantity=quantity), at)
        path = out / f"timeout_{_slug(series)}_{_slug(case_name)}.py"
        path.write_text(timeout_script(row, source), encoding="utf-8")
        paths.append(path)
    return paths


def timeout_script(row: SuiteRow, source: str | None) -> str:
    """The script of a case the library did not answer within its CPU-time limit.

    It runs the library's call (``source``; None: the adapter cannot write it, the script
    says so and exits 1) under the same limit of CPU time, the process's, through
    ``SIGPROF`` (Unix), and exits 1 while the call does not finish within it.
    """
    found = re.search(r"within (\S+) s", row.note)
    limit = float(found[1]) if found else 60.0
    head = [
        "#!/usr/bin/env python3",
        f'"""{row.library} {row.version}: {row.accountant} on {row.case} past the time limit.',
        "",
        f"The audit gave the library {limit:g} s of CPU time on this case; its note:",
        f"{row.note}",
        "This script runs the same call under the same limit and exits 1 while it does not",
        'finish within it (0 once it does).  It imports only the library."""',
        "",
        "import signal",
        "import sys",
        "import time",
        "",
        f"LIMIT = {limit!r}  # seconds of CPU time",
        "",
        "",
        "def _stop(signum, frame):",
        '    raise TimeoutError(f"no answer within {LIMIT:g} s of CPU time")',
        "",
        "",
        "signal.signal(signal.SIGPROF, _stop)",
        "signal.setitimer(signal.ITIMER_PROF, LIMIT)",
        "start = time.process_time()",
        "try:",
    ]
    if source is None:
        body = ['    raise TimeoutError("the adapter cannot write its call; see the note")']
    else:
        body = ["    " + line if line else "" for line in source.rstrip("\n").splitlines()]
    tail = [
        "except TimeoutError as error:",
        '    print("fails:", error)',
        "    sys.exit(1)",
        "signal.setitimer(signal.ITIMER_PROF, 0)",
        'print("answered in", round(time.process_time() - start, 2), "s of CPU time:", reported)',
        "sys.exit(0)",
    ]
    return "\n".join(head + body + tail) + "\n"
