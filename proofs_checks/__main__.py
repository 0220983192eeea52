"""``python -m proofs_checks [--quick] [--list] [NAME ...]``: run the symbolic checks."""

from __future__ import annotations

import argparse
import sys

from proofs_checks.runner import list_checks, run


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(prog="python -m proofs_checks", description=__doc__)
    parser.add_argument("names", nargs="*", help="checks to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="lower the scopes")
    parser.add_argument("--list", action="store_true", help="list the checks and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name, claim in list_checks():
            print(f"{name}: {claim}")
        return 0
    return run(args.names or None, quick=args.quick)


if __name__ == "__main__":
    sys.exit(main())
