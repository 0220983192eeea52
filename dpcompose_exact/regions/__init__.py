"""Regions and dominating pairs: trade-off regions, privacy-loss pairs, kinds.

The layer above the exact number domain (docs/architecture.md).
"""
