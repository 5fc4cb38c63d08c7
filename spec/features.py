"""The features replcheck knows: one per requirement file, spec/requirements/<feature>.toml.

The file is what makes a feature: its `[feature]` table names it, titles it and, when the feature
has a History family of its own (replcheck.model.steps), names the state machine that family is
searched by (`machine`: the name verify's rows, the catalogue and the tests' ids give it). Every
layer finds the features here rather than in a list of its own: the trace properties
(properties/<feature>.py), the state machines (properties/machines/), and the engine's record of
every layer a feature has (replcheck/features.py). Read from files only: spec imports nothing of
replcheck.
"""
from __future__ import annotations

import tomllib
from functools import lru_cache

from . import ROOT


@lru_cache(maxsize=None)
def feature_names() -> tuple[str, ...]:
    """Every feature, in the order of its requirement file's name (the order properties register in)."""
    return tuple(sorted(f.name.removesuffix(".toml") for f in ROOT.joinpath("requirements").iterdir()
                        if f.name.endswith(".toml")))


@lru_cache(maxsize=None)
def feature_table(name: str) -> dict:
    """The `[feature]` table of the feature's requirement file (name, title, seeds, maybe machine)."""
    return tomllib.loads(ROOT.joinpath("requirements", f"{name}.toml").read_text())["feature"]
