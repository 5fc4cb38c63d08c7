"""Features are found, not listed: each requirement file has its trace properties, each History
family its state machine, and every module named after a feature belongs to one."""
from __future__ import annotations

import importlib

import pytest
from conftest import REPO

from replcheck.features import FEATURES, features, load_features
from replcheck.model.steps import families
from replcheck.properties import core
from replcheck.spec.features import feature_table

load_features()


@pytest.mark.parametrize("name", FEATURES)
def test_every_requirement_file_has_its_property_module(name):
    assert feature_table(name)["name"] == name  # the file is named after its feature
    assert (REPO / "properties" / f"{name}.py").is_file(), f"spec/requirements/{name}.toml has no properties/{name}.py"
    assert any(p.feature == name for p in core.PROPERTIES), f"properties/{name}.py registers no property"


def test_a_property_in_a_part_of_a_feature_belongs_to_the_feature():
    # properties/delay.py imports its parts, properties/delay_<part>.py, which register the checks
    from replcheck.properties import delay_wait

    assert {p.feature for p in core.PROPERTIES if p.fn.__module__ == delay_wait.__name__} == {"delay"}


@pytest.mark.parametrize("name", sorted(families()))
def test_every_family_has_its_machine(name):
    from replcheck import properties

    family, feature = families()[name], features().get(name)
    assert feature is not None and feature.family == f"replcheck.model.steps.{name}", f"model/steps/{name}.py has no requirement file"
    assert family.name == name  # a family is named after its module
    [registered] = [m for m in core.MACHINES if m.cls.FAMILY is family]
    assert registered.name == feature.machine == getattr(properties.machines, feature.machine).__name__
    assert set(registered.requirements) == {p.requirement for p in core.PROPERTIES}  # every machine judges everything


def test_a_machine_is_named_only_for_a_family():
    assert {f.name for f in features().values() if f.machine} == set(families())


def test_every_module_named_after_a_feature_is_one_of_its_layers():
    """A proof or TLA+ module of a name no requirement file has would be left out of every run."""
    layered = {m for f in features().values() for m in f.modules}
    # model/steps: partial's steps are shared, mixed composes the families' (replcheck.generate.COMPOSED)
    for package, skip in (("properties.proofs", ()), ("tla", ()), ("model.steps", ("partial", "mixed", "vocabulary"))):
        folder = REPO / ("replcheck" if package == "tla" else "") / package.replace(".", "/")
        for path in folder.glob("*.py"):
            if path.stem != "__init__" and path.stem not in skip:
                assert f"replcheck.{package}.{path.stem}" in layered, f"{path.relative_to(REPO)} is no feature's"
    for f in features().values():
        for module in f.modules:
            importlib.import_module(module)
