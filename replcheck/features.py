"""The features replcheck knows, and the layers each has: one Feature record per feature, found
rather than listed.

A feature is a requirement file, spec/requirements/<feature>.toml (replcheck.spec.features). Its
layers are the modules named after it that exist: its History family (model/steps/<feature>.py,
with the state machine made from it, properties/machines/), its trace properties
(properties/<feature>.py, which may import its parts properties/<feature>_<part>.py), its z3 proofs
(properties/proofs/<feature>.py) and its TLA+ trace validation (replcheck/tla/<feature>.py). Importing a layer's module registers its checks with
properties.core; `load_features` imports every one.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import lru_cache

from replcheck.spec.features import feature_names, feature_table

FEATURES = feature_names()


@dataclass(frozen=True)
class Feature:
    name: str
    title: str
    properties: str  # its trace properties' module
    family: str | None  # its History family's module (model/steps), with a state machine
    machine: str | None  # that machine's name
    proofs: str | None  # its z3 proofs' module
    tla: str | None  # its TLA+ trace validation's module

    @property
    def modules(self) -> tuple[str, ...]:
        return tuple(m for m in (self.properties, self.family, self.proofs, self.tla) if m)


def _modules(package: str) -> set[str]:
    """The names of a package's modules, found without importing them (a family is a steps module
    with a FAMILY: model.steps.families)."""
    return {m.name for m in pkgutil.iter_modules(importlib.import_module(package).__path__)}


@lru_cache(maxsize=None)
def features() -> dict[str, Feature]:
    """Every feature by name, in its requirement file's order."""
    from replcheck.model.steps import families

    proofs, tla = _modules("replcheck.properties.proofs"), _modules("replcheck.tla")
    out = {}
    for name in FEATURES:
        table = feature_table(name)
        out[name] = Feature(name, table["title"], f"replcheck.properties.{name}",
                            f"replcheck.model.steps.{name}" if name in families() else None, table.get("machine"),
                            f"replcheck.properties.proofs.{name}" if name in proofs else None,
                            f"replcheck.tla.{name}" if name in tla else None)
    return out


def load_features() -> None:
    """Every layer of every feature that registers checks: the trace properties (properties.judge
    imports them all), the state machines (made together, properties.machines) and the z3 proofs."""
    importlib.import_module("replcheck.properties.judge")
    importlib.import_module("replcheck.properties.machines")
    for f in features().values():
        if f.proofs:
            importlib.import_module(f.proofs)
