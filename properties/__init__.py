"""Trace properties (one module per feature), Hypothesis state machines and z3 proofs."""
