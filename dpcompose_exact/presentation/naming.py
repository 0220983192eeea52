"""One naming of mechanisms for every output, and header blocks sized for a person.

Every output that names what was composed (table titles, LaTeX comments and captions,
summaries, plot legends) names it here, from the protocol's ``to_dict()``
(:class:`~dpcompose_exact.regions.protocol.MechanismLike`), in the spelling of the
command line's ``--mech``:

* a list of constraints: ``(0.3, 0)``, or ``{(0.3, 0), (0.15, 0.02)}`` for several, in
  the order given (the braces keep ``20 x`` bound to the whole list); a mechanism a family
  built (randomized response) by the family's name, ``rr(1/2,2)``;
* additive noise: ``gaussian(24/25)``, ``laplace(1)`` (``gaussian(1, sensitivity 2)``
  when the sensitivity is not 1);
* subsampled at rate ``q``: ``@1/100`` appended, as in ``gaussian(24/25)@1/100``.

Anything else is named by its own ``describe()``.  Header lines are wrapped at
:data:`TITLE_WIDTH` characters (:func:`comment_block`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from typing import Any

from ..numbers.format import compact_exact, readable_exact

__all__ = ["TITLE_WIDTH", "mechanism_name", "composition_name", "comment_block"]

#: the longest header line of a table (the title's first line and every line after it)
TITLE_WIDTH = 100

#: constraint lists longer than this are named by their ends and their length
_MAX_PAIRS = 4


def mechanism_name(m: Any) -> str:
    """The name of a mechanism in every output (the ``--mech`` spelling, see above).

    >>> import dpcompose_exact as dx
    >>> mechanism_name(dx.Mechanism([("0.3", "0"), ("0.15", "0.02")]))
    '{(0.3, 0), (0.15, 0.02)}'
    >>> mechanism_name(dx.randomized_response("1/2", 3))
    'rr(1/2,3)'
    >>> mechanism_name(dx.randomized_response("1/2", 2).subsample("1/10"))
    'rr(1/2,2)@1/10'
    >>> mechanism_name(dx.gaussian_noise("24/25").subsample("1/100"))
    'gaussian(24/25)@1/100'
    >>> mechanism_name(dx.gaussian_noise("1e-400").subsample("1e-30"))
    'gaussian(1e-400)@1e-30'
    """
    try:
        d = m.to_dict()
    except Exception:  # noqa: BLE001 - a mechanism without a dict is named by itself
        return str(m.describe())
    if "noise" in d:
        sens = compact_exact(str(d.get("sensitivity", "1")))
        scale = compact_exact(str(d["scale"]))  # 1e-400, not 1/1000...0
        body = f"{d['noise']}({scale}" + ("" if sens == "1" else f", sensitivity {sens}")
        body += ")"
    elif getattr(m, "label", None):  # a family's own name: rr(1/2,2)
        body = str(m.label)
    elif "constraints" in d:
        given = getattr(m, "given_pairs", None) or d["constraints"]  # the order given
        pairs = [f"({readable_exact(str(e))}, {readable_exact(str(x))})" for e, x in given]
        if len(pairs) > _MAX_PAIRS:
            pairs = [pairs[0], f"... {len(pairs) - 2} more ...", pairs[-1]]
        body = pairs[0] if len(pairs) == 1 else "{" + ", ".join(pairs) + "}"
    else:
        return str(m.describe())
    q = d.get("subsample")
    return body if q in (None, "1") else f"{body}@{compact_exact(str(q))}"


def composition_name(kinds: Iterable[tuple[Any, int]]) -> str:
    """``20 x {(0.3, 0), (0.15, 0.02)}, 5 x gaussian(2)``: each kind with its count."""
    return ", ".join(f"{n} x {mechanism_name(m)}" for m, n in kinds)


def comment_block(text: str, width: int = TITLE_WIDTH, prefix: str = "# ") -> list[str]:
    """``text`` (lines starting ``prefix`` or not) as comment lines of at most ``width``.

    Long lines break at spaces; their continuation is indented by two spaces.

    >>> comment_block("# a b c d e f", width=7)
    ['# a b c', '#   d e', '#   f']
    """
    out: list[str] = []
    for line in text.splitlines():
        body = line[len(prefix) :] if line.startswith(prefix) else line
        wrapped = textwrap.wrap(
            body,
            width=width,
            initial_indent=prefix,
            subsequent_indent=prefix + "  ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        out.extend(wrapped or [prefix.rstrip()])
    return out
