"""Mechanisms: what a mechanism is and what its privacy-loss pair is (one file per family).

A mechanism speaks the one protocol of :mod:`dpcompose_exact.regions.protocol`
(``loss_pair``, ``describe``, ``to_dict``); the engines compose the pairs.  This layer sits
between the regions and pairs (below) and the composition engines (above):
docs/architecture.md, "The layout is the architecture".
"""
