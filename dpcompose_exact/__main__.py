"""``python -m dpcompose_exact``: the ``dpcompose`` command."""

from .cli import main

raise SystemExit(main())
