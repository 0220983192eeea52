"""What every ``dpcompose`` subcommand shares: the parser class, help texts, list options.

* :class:`OneLineParser`: argparse errors as one line on stderr, exit status 2.
* :func:`add_subcommand`: a subcommand with a description and an ``Examples`` epilog.
* :data:`EXACT_INPUT_HELP` and :data:`SPEC_HELP`: the input syntax, shown in every help.
* :func:`split_values`: ``--eps 0.5,1`` and ``--eps 0.5 --eps 1`` mean the same.
* :func:`bounded_int`: integer options with a stated range (a bounded-size refusal).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from ..engines.finiteroutes import METHODS, Method
from ..errors import DPComposeError, InvalidParameterError
from ..numbers import MAX_DIGITS as _ENGINE_MAX_DIGITS

__all__ = [
    "OneLineParser",
    "add_subcommand",
    "split_values",
    "bounded_int",
    "check_output",
    "EXACT_INPUT_HELP",
    "SPEC_HELP",
    "MAX_DIGITS",
]

#: largest --digits accepted: the exact engine's documented limit (numbers.MAX_DIGITS).
MAX_DIGITS = _ENGINE_MAX_DIGITS

EXACT_INPUT_HELP = """\
exact inputs (eps, delta, mu, ...; never rounded):
  0.3 = 3/10   1e-5 = 1/100000   3/20   log(2)   ln(3/2)   1/2 + log(2)   2*log(3) - log(5)
  eps may be any rational combination of rationals and logs of rationals;
  delta must be rational (0 <= delta < 1).  A list option (--eps, --delta) takes
  repeated options or comma-separated values: --eps 0.5,1 is --eps 0.5 --eps 1."""

SPEC_HELP = """\
spec file (--spec FILE; TOML, or JSON {"mechanisms": [...]}; values as strings stay exact):
  [[mechanism]]
  constraints = [["0.3", "0"], ["0.15", "0.02"]]   # all hold at once
  count = 20                                       # uses of this kind
  [[mechanism]]
  constraints = [["1", "1e-6"]]
  count = 5"""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        """Print ``prog: error: message`` and exit with status 2."""
        message = " ".join(message.split())
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def add_subcommand(
    subparsers: Any, name: str, summary: str, description: str, examples: Sequence[str]
) -> argparse.ArgumentParser:
    """A subcommand with a description and an ``examples:`` epilog (shown by ``--help``).

    Args:
        subparsers: The object returned by ``add_subparsers``.
        name: Subcommand name.
        summary: One line for the main ``--help``.
        description: The subcommand's description (free text, kept as written).
        examples: Command lines shown under ``examples:``.

    Returns:
        The subcommand's parser.
    """
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
    return subparsers.add_parser(
        name,
        help=summary,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def split_values(values: Sequence[str] | None, option: str) -> list[str] | None:
    """Flatten repeated and comma-separated values (``["0.5,1", "2"]`` -> three values).

    Raises:
        InvalidParameterError: for an empty item (``--eps 0.5,,1``).
    """
    if not values:
        return None
    out = []
    for text in values:
        for item in text.split(","):
            item = item.strip()
            if not item:
                raise InvalidParameterError(
                    f"{option} {text!r} has an empty item; give values such as 0.5,1"
                )
            out.append(item)
    return out


def bounded_int(name: str, minimum: int, maximum: int) -> Any:
    """An argparse ``type`` for an integer in ``[minimum, maximum]``."""

    def parse(text: str) -> int:
        t = text.strip()
        if not (t.lstrip("+").isdigit() and len(t) <= 12):
            raise argparse.ArgumentTypeError(
                f"{name} {text!r} is not an integer in [{minimum}, {maximum}]"
            )
        value = int(t)
        if not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(
                f"{name} {value} is outside the valid range [{minimum}, {maximum}]"
            )
        return value

    return parse


def check_output(path: str, suffixes: tuple[str, ...], option: str = "-o") -> None:
    """Refuse an unsupported suffix or a missing directory (never create one silently)."""
    if not any(str(path).lower().endswith(s) for s in suffixes):
        raise InvalidParameterError(
            f"{option} {path!r}: unsupported file type; use one of {', '.join(suffixes)}"
        )
    parent = Path(path).parent
    if not parent.is_dir():
        raise InvalidParameterError(
            f"{option} {path!r}: the directory {str(parent)!r} does not exist (create it first)"
        )


def method_type(text: str) -> str:
    """``--method`` text to the enum's value (``pld`` is an alias of ``exact``)."""
    try:
        return Method.parse(text).value
    except DPComposeError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_method_option(
    p: argparse.ArgumentParser,
    help_text: str,
    choices: Sequence[str] = METHODS,
    default: str = "auto",
) -> None:
    """``--method`` with the enum's values as choices, and ``--certified`` as an alias."""
    p.add_argument(
        "--method",
        default=default,
        type=method_type,
        choices=tuple(choices),
        metavar="{" + ",".join(choices) + "}",
        help=help_text,
    )
    p.add_argument(
        "--certified",
        dest="method",
        action="store_const",
        const="certified",
        help="an alias of --method certified (default: off)",
    )
