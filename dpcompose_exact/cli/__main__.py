"""``python -m dpcompose_exact.cli``: the ``dpcompose`` command."""

from .main import main

raise SystemExit(main())
