"""z3 proofs, one module per feature; each registers itself with properties.core.proof."""
