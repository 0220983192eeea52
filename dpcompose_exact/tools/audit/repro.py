"""Standalone reproduction scripts for the audit suite's findings (``--repro DIR``).

For every ``UNSOUND`` or ``invalid value`` row of a
:class:`~dpcompose_exact.tools.audit.suite.SuiteReport`, :func:`write_repros` writes a
Python script that a library's maintainers can run without dpcompose_exact: the library
call comes from the adapter (:meth:`~dpcompose_exact.tools.audit.adapters.Adapter.repro_source`,
which binds ``reported``), the certified reference is embedded as decimal text, and the
script prints the library's number next to it (and, for a guarantee on the wrong side, by
how much).  An adapter that cannot write its call gets a script that prints the number the
audit received and the case's inputs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...errors import InvalidParameterError
from .adapters import get
from .suite import SUITES, SuiteCase, SuiteReport, SuiteRow, _job

__all__ = ["repro_script", "write_repros"]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")[:60] or "x"


def repro_script(row: SuiteRow, source: str | None, inputs: str = "") -> str:
    """The text of one reproduction script.

    Args:
        row: the finding (its library, case, query, number and certified enclosure).
        source: the adapter's library call binding ``reported`` (None: not available).
        inputs: the case's mechanisms in words (a comment when ``source`` is None).
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
    tail = [
        "",
        "from decimal import Decimal",
        "",
        "reported = float(reported)",
        "",
        f"LOWER, UPPER = {lo}, {hi}  # the certified enclosure of the true value",
        f'print("{row.library} {row.version} reports {row.quantity}{at} =", repr(reported))',
        'print("certified true value in [", LOWER, ",", UPPER, "]")',
        "if LOWER not in (None, 'inf') and reported == reported:",
        "    low = Decimal(LOWER)",
        "    if low != 0:",
        '        print("relative error against the lower end:", (Decimal(reported) - low) / low)',
    ]
    return "\n".join(head + body + tail) + "\n"


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
        The paths written, in the order of the rows.

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
            try:
                source = get(row.adapter).repro_source(job, row.accountant, row.quantity, row.at)
            except Exception:  # noqa: BLE001 - a script without the call is still written
                source = None
        name = f"{i:03d}_{_slug(row.accountant)}_{_slug(row.case)}_{row.quantity}_{_slug(row.at)}"
        path = out / f"{name}.py"
        path.write_text(repro_script(row, source, inputs), encoding="utf-8")
        paths.append(path)
    return paths
