"""Every registered property, of every feature, has a trace on which it passes and one on which it
is violated with the right witness (the CASES table in its feature's test module): no property
can be vacuous, and none can be blind."""
from __future__ import annotations

import importlib

import pytest
from conftest import assert_witness

from replcheck.features import FEATURES
from replcheck.properties.core import PASS, PROPERTIES

CASES = {}
for _feature in FEATURES:
    CASES.update(importlib.import_module(f"test_properties_{_feature}").CASES)


@pytest.mark.parametrize("prop", PROPERTIES, ids=lambda p: p.requirement)
def test_property_passes_on_model_trace(kit, prop):
    case = CASES[prop.requirement]  # a new property without a case fails here
    verdict = prop.run(case.passing(kit).view())
    assert verdict.status == PASS and verdict.checked > 0, verdict


@pytest.mark.parametrize("prop", PROPERTIES, ids=lambda p: p.requirement)
def test_property_catches_fault(kit, prop):
    case = CASES[prop.requirement]
    tr, target = case.violating(kit)
    assert_witness(prop.run(tr.view()), tr, target, case.expect)


def test_every_property_has_exactly_one_case():
    assert set(CASES) == {p.requirement for p in PROPERTIES}
