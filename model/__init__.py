"""Reference models: deterministic simulations with a virtual clock. Imports nothing of the engine."""
