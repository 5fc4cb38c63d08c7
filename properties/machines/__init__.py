"""Hypothesis state machines, one module per feature."""
