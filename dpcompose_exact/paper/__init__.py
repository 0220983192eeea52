"""The paper's results and what goes beyond: Theorems 1-3, baselines, f-DP.

docs/theory.md states the mathematics; docs/architecture.md the layers.
"""
