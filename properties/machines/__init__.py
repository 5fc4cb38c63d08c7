"""Hypothesis state machines: one per History family of replcheck.model.steps, made here in one loop.

A family's machine takes the family's steps as its rules (base.family_machine) and judges after
every step every property replcheck has, not only those of the features its family exercises: a
requirement of another feature may be what a step breaks. It is registered under the name
its feature's requirement file gives it (spec/requirements/<feature>.toml, `machine`: what verify's
rows, the catalogue and the tests' ids call it) and is this module's attribute of that name, so
`from replcheck.properties.machines import DelayMachine` finds it. A new family gets its machine
by being written; tests/engine/test_features.py holds each family to one. A composed family
(model.steps.composed: the families' steps on one topology) has no requirement file to name its
machine: it is named after the family (MixedMachine), and verify runs it in mutants' searches.
The operator vocabulary every family shares (model/steps/vocabulary.py) is one step, so one rule.
"""
from __future__ import annotations

import sys

from replcheck.model.steps import Family, composed, families
from replcheck.spec.features import feature_table

from ..core import machine
from .base import HistoryMachine, family_machine


def _generated(family: Family, name: str) -> type[HistoryMachine]:
    steps = (sys.modules[family.topology.__module__].__doc__ or "").strip()
    doc = f"{steps}\n\nEvery property holds after every step (the steps exercise {', '.join(family.features)})."
    cls = type(name, (family_machine(family),), {"__doc__": doc, "__module__": __name__, "__qualname__": name})
    return machine(*cls.REQUIREMENTS)(cls)


BY_FAMILY: dict[str, type[HistoryMachine]] = {f.name: _generated(f, feature_table(f.name)["machine"]) for f in families().values()}
BY_COMPOSED: dict[str, type[HistoryMachine]] = {f.name: _generated(f, f"{f.name.capitalize()}Machine") for f in composed().values()}
globals().update({cls.__name__: cls for cls in (*BY_FAMILY.values(), *BY_COMPOSED.values())})
