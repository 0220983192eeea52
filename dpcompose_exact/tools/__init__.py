"""Tools on top of the front door: audits, calibration, sweeps.

docs/architecture.md shows the layers.
"""
