"""``python -m dpcompose_exact.cli``: the ``dpcompose`` command."""

from .app import main

raise SystemExit(main())
