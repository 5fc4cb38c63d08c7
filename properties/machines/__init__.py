"""Hypothesis state machines: one per History family of replcheck.model.steps, made here in one loop.

A family's machine takes the family's steps as its rules (base.family_machine) and judges after
every step every property replcheck has, not only those of the features its family exercises: a
requirement of another feature may be what a step breaks. It is registered under the name
its feature's requirement file gives it (spec/requirements/<feature>.toml, `machine`: what verify's
rows, the catalogue and the tests' ids call it) and is this module's attribute of that name, so
`from replcheck.properties.machines import DelayMachine` finds it. A new family gets its machine
by being written; tests/engine/test_features.py holds each family to one.
"""
from __future__ import annotations

import sys

from replcheck.model.steps import Family, families
from replcheck.spec.features import feature_table

from ..core import machine
from .base import HistoryMachine, family_machine


def _generated(family: Family) -> type[HistoryMachine]:
    name = feature_table(family.name)["machine"]
    steps = (sys.modules[family.topology.__module__].__doc__ or "").strip()
    doc = f"{steps}\n\nEvery property holds after every step (the steps exercise {', '.join(family.features)})."
    cls = type(name, (family_machine(family),), {"__doc__": doc, "__module__": __name__, "__qualname__": name})
    return machine(*cls.REQUIREMENTS)(cls)


BY_FAMILY: dict[str, type[HistoryMachine]] = {f.name: _generated(f) for f in families().values()}
globals().update({cls.__name__: cls for cls in BY_FAMILY.values()})
