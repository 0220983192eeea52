"""Presentation of exact regions: rows, JSON, CSV, aligned tables and LaTeX tabulars.

Nothing here computes privacy: it turns a :class:`~dpcompose_exact.tradeoff.Region` into
text.  Exact values are written as strings that ``sympy.sympify`` parses back (rationals,
``exp`` and ``log`` only, no floating-point numbers); decimals come from the domain's
certified evaluation (correct to one unit in the last place).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from .certified import CertifiedRegion
from .numbers import ExpDomain, QzElem
from .tradeoff import Region

__all__ = ["region_rows", "elem_closed_form", "to_json", "to_csv", "to_table", "to_latex"]

SHORT = 48  # closed forms up to this many characters are shown in tables


def elem_closed_form(domain: ExpDomain, x: QzElem) -> str:
    """Exact string of an element; the denominator is written factored (FLINT factor)."""
    return domain.elem_closed_form(x)


def region_rows(
    region: Region | CertifiedRegion,
    digits: int = 30,
    exact: bool = True,
    structured: bool = True,
) -> list[dict[str, str]]:
    """One dict per constraint, increasing epsilon.

    Keys: ``epsilon``, ``delta`` (exact; only when ``exact``), ``epsilon_decimal``,
    ``delta_decimal`` (``digits`` significant digits) and, when ``exact`` and
    ``structured``, ``delta_structured``: ``{"g", "num", "den"}``, the delta as two
    coefficient/exponent lists in ``z = exp(g)`` that stay machine-readable at any
    length (:func:`~dpcompose_exact.numbers.read_structured`).  A certified region has
    no closed form for delta: its rows carry the exact epsilon and both certified decimals.
    """
    dom = region.domain
    if isinstance(region, CertifiedRegion):
        return [
            {
                **({"epsilon": dom.loss_str(loss)} if exact else {}),
                "epsilon_decimal": dom.loss_decimal(loss, digits),
                "delta_decimal": region.delta_decimal(i, digits),
            }
            for i, loss in enumerate(region.losses)
        ]
    rows = []
    for loss, d in region.constraints:
        row: dict[str, str] = {}
        if exact:
            row["epsilon"] = dom.loss_str(loss)
            row["delta"] = elem_closed_form(dom, d)
        row["epsilon_decimal"] = dom.loss_decimal(loss, digits)
        row["delta_decimal"] = dom.decimal(d, digits)
        if exact and structured:  # exact at any length (numbers.read_structured reads it)
            row["delta_structured"] = dom.structured(d)  # type: ignore[assignment]
        rows.append(row)
    return rows


def to_json(payload: dict[str, Any]) -> str:
    """Serialize a result payload (one JSON object)."""
    return json.dumps(payload, indent=1)


def to_csv(rows: Sequence[dict[str, str]]) -> str:
    """CSV with a header line."""
    buf = io.StringIO()
    if rows:
        fields = [k for k, v in rows[0].items() if isinstance(v, str)]  # flat columns only
        writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return buf.getvalue()


def to_table(rows: Sequence[dict[str, str]], title: str = "") -> str:
    """An aligned plain-text table: decimals, and closed forms when they are short."""
    head = ["#", "epsilon", "delta", "epsilon (exact)", "delta (exact)"]
    body = []
    for i, r in enumerate(rows):
        eps_x = r.get("epsilon", "")
        del_x = r.get("delta", "")
        body.append(
            [
                str(i),
                r["epsilon_decimal"],
                r["delta_decimal"],
                eps_x if len(eps_x) <= SHORT else "(long)",
                del_x if len(del_x) <= SHORT else f"({len(del_x)} chars, see --format json)",
            ]
        )
    if not any(r.get("epsilon") for r in rows):
        head, body = head[:3], [b[:3] for b in body]
    widths = [max(len(h), *(len(b[j]) for b in body)) for j, h in enumerate(head)]
    lines = [title] if title else []
    lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    for b in body:
        lines.append("  ".join(c.ljust(w) for c, w in zip(b, widths)).rstrip())
    return "\n".join(lines) + "\n"


def _latex_decimal(text: str) -> str:
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant} \\times 10^{{{int(exp)}}}"
    return text


def to_latex(region: Region | CertifiedRegion, digits: int = 12, caption: str = "") -> str:
    """A ``tabular`` (no extra packages) with exact epsilons and certified decimals.

    Exact deltas get their own column when every one of them is short.
    """
    import sympy

    dom = region.domain
    eps_tex = [sympy.latex(dom.to_sympy(loss)) for loss in region.losses]
    if isinstance(region, CertifiedRegion):
        deltas = [region.delta_decimal(i, digits) for i in range(len(region.losses))]
        exact = []
    else:
        deltas = [dom.decimal(d, digits) for d in region.deltas]
        exact = [elem_closed_form(dom, d) for d in region.deltas]
    show_exact = bool(exact) and all(len(e) <= SHORT for e in exact)
    cols = "rll" + ("l" if show_exact else "")
    lines = []
    if caption:
        lines.append(f"% {caption}")
    lines.append(f"\\begin{{tabular}}{{{cols}}}")
    lines.append("\\hline")
    head = "$\\varepsilon$ & $\\varepsilon$ (decimal) & $\\delta$ (decimal)"
    if show_exact:
        head += " & $\\delta$ (exact)"
    lines.append(head + " \\\\")
    lines.append("\\hline")
    for i, loss in enumerate(region.losses):
        row = (
            f"${eps_tex[i]}$ & ${_latex_decimal(dom.loss_decimal(loss, digits))}$ & "
            f"${_latex_decimal(deltas[i])}$"
        )
        if show_exact:
            row += f" & ${sympy.latex(sympy.sympify(exact[i]))}$"
        lines.append(row + " \\\\")
    lines.append("\\hline")
    lines.append("\\end{tabular}")
    return "\n".join(lines) + "\n"
