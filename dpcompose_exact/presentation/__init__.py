"""Presentation: numbers and regions as text, figures, exports.

Nothing here computes privacy (docs/architecture.md).
"""
