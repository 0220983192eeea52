"""``dpcompose calibrate``: the largest k, or the largest grid parameter, with a certificate.

Hook into ``dpcompose`` with :func:`add_parser` (in ``build_parser``) and :func:`handle`
(in ``main``); ``python -m dpcompose_exact.cli.calibrate ...`` runs it standalone.

* Largest k: ``dpcompose calibrate --dp 0.3,0 --dp 0.15,0.02 --target 10,1e-5`` prints the
  largest k whose k-fold composition is (10, 1e-5)-DP, with delta(10) at k (<= 1e-5) and
  at k + 1 (> 1e-5).
* Largest parameter on a grid: ``dpcompose calibrate --dp "x,0" --dp "x/2,0.02" --param x
  --grid 1/1000 -k 100 --target 5,1e-5`` substitutes ``x = n/1000`` into the constraints
  (any exact expression of ``x``) and prints the largest grid point that meets the target
  with the next one proven to fail.
* Noise (DP-SGD): ``dpcompose calibrate --noise gaussian --sampling-rate 0.01 -k 1000
  --target 2,1e-5`` prints the smallest noise multiplier sigma on a grid (``--step``,
  default about sigma/1000) that meets the target, with the grid point below proven to
  fail; ``--solve k`` (with ``--sigma``) the largest number of steps, ``--solve q`` the
  largest sampling rate (:func:`~dpcompose_exact.tools.calibrate.calibrate_noise`).

``--format json`` prints the answer with its certificate.  Exit status 0 on success, 2 on
bad input or when no candidate (or every candidate up to the limit) meets the target.
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from fractions import Fraction
from typing import Any

from ..api import Mechanism
from ..errors import DPComposeError, InactiveConstraintWarning, InvalidParameterError
from ..presentation.render import to_json
from ..regions.specs import parse_count, parse_dp_pair
from ..tools.calibrate import (
    MAX_DOUBLINGS,
    SOLVES,
    Calibration,
    calibrate_noise,
    largest_k,
    largest_parameter,
)
from .common import EXACT_INPUT_HELP, MAX_DIGITS, add_subcommand, bounded_int

__all__ = ["add_parser", "handle", "calibrate_from_args"]

_RESERVED = {"log", "ln", "exp", "e", "E", "pi", "sqrt", "oo", "inf", "nan"}


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``calibrate`` subcommand to an ``argparse`` subparsers object."""
    p = add_subcommand(
        subparsers,
        "calibrate",
        "largest k, or largest grid parameter, meeting an (eps, delta) target, certified",
        "Find the largest number of compositions k (or, with --param, the largest grid value "
        "of a parameter) for which the composition meets --target EPS,DELTA.\nThe answer is "
        "certified: delta(EPS) is proven <= DELTA there and > DELTA at the next candidate.\n\n"
        + EXACT_INPUT_HELP,
        [
            "dpcompose calibrate --dp 0.3,0 --dp 0.15,0.02 --target 10,1e-5",
            'dpcompose calibrate --dp "x,0" --dp "x/2,0.02" --param x --grid 1/1000 -k 100 '
            "--target 5,1e-5 --format json",
            "dpcompose calibrate --noise gaussian --sampling-rate 0.01 -k 1000 --target 2,1e-5",
            "dpcompose calibrate --noise gaussian --sigma 1 --sampling-rate 0.01 --solve k "
            "--target 2,1e-5",
        ],
    )
    p.add_argument(
        "--dp",
        action="append",
        metavar="EPS,DELTA",
        help="a constraint of one use (repeat); with --param, EPS and DELTA may use it "
        "(default: none; needed unless --noise)",
    )
    p.add_argument(
        "--noise",
        choices=("gaussian", "laplace"),
        help="calibrate a noise mechanism instead (DP-SGD: with --sampling-rate) "
        "(default: none)",
    )
    p.add_argument(
        "--solve",
        choices=SOLVES,
        default="sigma",
        help="with --noise: the smallest noise scale (sigma, or b for Laplace), the largest "
        "number of steps k, or the largest sampling rate q (default %(default)s)",
    )
    p.add_argument(
        "--sampling-rate", metavar="Q", help="with --noise: Poisson sampling rate (default: none)"
    )
    p.add_argument(
        "--sigma",
        metavar="SCALE",
        help="with --noise and --solve k or q: the noise scale (default: none)",
    )
    p.add_argument(
        "--sensitivity", default="1", help="with --noise: the sensitivity (default %(default)s)"
    )
    p.add_argument(
        "--step",
        metavar="STEP",
        help="with --noise: the grid of the answer (default: about sigma/1000 for sigma, "
        "1/1000 for q)",
    )
    p.add_argument("--target", required=True, metavar="EPS,DELTA", help="the privacy target")
    p.add_argument(
        "--param",
        metavar="NAME",
        help="a parameter in the --dp values, e.g. x (default: none; calibrate k)",
    )
    p.add_argument(
        "--grid", metavar="STEP", help="grid step of the parameter, e.g. 1/1000 (default: none)"
    )
    p.add_argument("-k", default=None, help="number of compositions, with --param (default: none)")
    p.add_argument(
        "--k-max",
        type=bounded_int("--k-max", 1, 10**12),
        default=10**6,
        help="largest k tried (default %(default)s)",
    )
    p.add_argument(
        "--max-doublings",
        type=bounded_int("--max-doublings", 1, 1000),
        default=MAX_DOUBLINGS,
        help="doublings of the parameter tried (default %(default)s)",
    )
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="output format (default %(default)s)",
    )
    p.add_argument(
        "--digits",
        type=bounded_int("--digits", 1, MAX_DIGITS),
        default=20,
        help=f"certified digits of the deltas, 1..{MAX_DIGITS} (default %(default)s)",
    )
    return p


def _substitute(text: str, name: str, value: Fraction) -> str:
    return re.sub(rf"\b{re.escape(name)}\b", f"({value})", text)


def _calibrate_noise(args: argparse.Namespace, target: tuple[str, str]) -> Calibration:
    if args.dp or args.param is not None or args.grid is not None:
        raise InvalidParameterError(
            "--noise calibrates a noise mechanism: do not combine it with --dp, --param or --grid"
        )
    k = parse_count(args.k, "-k", positive=True) if args.k is not None else None
    if args.solve != "k" and k is None:
        raise InvalidParameterError(f"--solve {args.solve} needs -k (the number of steps)")
    if args.solve != "sigma" and args.sigma is None:
        raise InvalidParameterError(f"--solve {args.solve} needs --sigma (the noise scale)")
    return calibrate_noise(
        *target,
        noise=args.noise,
        solve=args.solve,
        k=k,
        sampling_rate=args.sampling_rate,
        scale=args.sigma,
        sensitivity=args.sensitivity,
        step=args.step,
        k_max=args.k_max,
    )


def calibrate_from_args(args: argparse.Namespace) -> Calibration:
    """Run the calibration the parsed options describe."""
    target = parse_dp_pair(args.target, "--target")
    if args.noise is not None:
        return _calibrate_noise(args, target)
    if not args.dp:
        raise InvalidParameterError("give the mechanism: --dp EPS,DELTA (repeat) or --noise")
    pairs = [parse_dp_pair(t) for t in args.dp]
    if args.param is None:
        if args.grid is not None or args.k is not None:
            raise InvalidParameterError("--grid and -k go with --param (the largest parameter)")
        return largest_k(Mechanism(pairs), *target, k_max=args.k_max)
    name = args.param.strip()
    if not name.isidentifier() or name in _RESERVED:
        raise InvalidParameterError(
            f"--param {args.param!r} must be a name such as x (not {', '.join(sorted(_RESERVED))})"
        )
    if not any(re.search(rf"\b{re.escape(name)}\b", e + "," + d) for e, d in pairs):
        raise InvalidParameterError(f"--param {name}: no --dp value uses {name}")
    if args.grid is None or args.k is None:
        raise InvalidParameterError("--param needs --grid STEP and -k K")
    try:
        k = int(args.k)
    except ValueError:
        raise InvalidParameterError(f"k = {args.k!r} must be a positive integer (k >= 1)") from None

    def family(x: Fraction) -> Mechanism:
        return Mechanism([(_substitute(e, name, x), _substitute(d, name, x)) for e, d in pairs])

    return largest_parameter(family, k, *target, args.grid, max_doublings=args.max_doublings)


def handle(args: argparse.Namespace) -> tuple[str, int]:
    """Run ``dpcompose calibrate``; returns ``(stdout text, exit status)``.

    Errors go to stderr as one line with status 2.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InactiveConstraintWarning)
            result = calibrate_from_args(args)
        digits = args.digits
        if not 1 <= digits <= 1000:
            raise InvalidParameterError(f"--digits {digits} is outside the valid range 1..1000")
    except DPComposeError as exc:
        sys.stderr.write(f"dpcompose: error: {exc}\n")
        return "", 2
    if not result.monotone_at_certificate:
        sys.stderr.write(
            "dpcompose: warning: the family is not monotone at the answer; the grid point "
            "meets the target but may not be the largest one\n"
        )
    if args.format == "json":
        return to_json(result.to_dict(digits)) + "\n", 0
    return result.summary(digits), 0
