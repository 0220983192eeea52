"""Bridges to other differential-privacy libraries (optional dependencies).

* :mod:`dpcompose_exact.integrations.dp_accounting`: ``ExactAccountant``, a drop-in
  ``dp_accounting.PrivacyAccountant`` that composes exactly, and ``DpConstraintsEvent``,
  a ``DpEvent`` for a mechanism with several (eps, delta) constraints
  (the ``dp-accounting`` extra: ``pip install ".[dp-accounting]"`` in a checkout; importing
  it without dp_accounting raises one line naming the extra).

Exports of a single mechanism or a composition to dp_accounting, prv_accountant and
OpenDP are methods of :class:`~dpcompose_exact.api.Mechanism` and
:class:`~dpcompose_exact.composition.Composition` (implemented in
:mod:`dpcompose_exact.presentation.export`).
The submodules import their library when they are imported, not this package.
"""
