"""The mutant registry: every mutant is a named seam that its model module really tests, with a
bug, a feature, a base model and requirements that exist; an unknown name is refused in one line."""
from __future__ import annotations

import re

import pytest

from replcheck import catalogue, systems
from replcheck.io import InputError
from replcheck.model import mutants as M
from replcheck.spec import ROOT

from conftest import REPO


def _constant(m: M.Mutant) -> str:
    return m.name.upper().replace("-", "_")


@pytest.mark.parametrize("mutant", sorted(M.REGISTRY.values(), key=lambda m: m.name), ids=lambda m: m.name)
def test_each_mutant_is_a_seam_its_module_tests(mutant):
    assert getattr(M, _constant(mutant)) is mutant  # the constant the model code names
    source = (REPO / "model" / f"{mutant.module}.py").read_text()
    assert re.search(rf"\bM\.{_constant(mutant)}\b", source), f"{mutant.seam}: model/{mutant.module}.py never tests it"
    known = catalogue.by_id()
    assert mutant.bug and mutant.what and mutant.kills and all(r in known for r in mutant.kills)
    assert systems.get(mutant.base).kind == "model" and mutant.feature in {r.feature for r in known.values()}


def test_no_model_code_tests_a_mutant_by_string():
    for path in (REPO / "model").rglob("*.py"):
        for name in M.REGISTRY:
            assert f'"{name}" in' not in path.read_text(), f"{path.name} tests {name!r} as a string"


def test_a_misspelt_mutant_is_refused_naming_file_line_and_field():
    text = ROOT.joinpath("systems.toml").read_text() + '\n[[system]]\nname = "model:buggy"\nrule = "wl344"\nmutants = ["stop-aplies-waited-event"]\n'
    with pytest.raises(InputError) as info:
        systems.load(text)
    line = text.splitlines().index('mutants = ["stop-aplies-waited-event"]') + 1
    assert str(info.value).startswith(f"spec/systems.toml:{line}: system[") and "unknown mutant 'stop-aplies-waited-event'" in str(info.value)


def test_a_mutant_inherits_its_base_models_declarations_and_settings():
    for m in M.REGISTRY.values():
        mutant, base = systems.get(f"mutant:{m.name}"), systems.get(m.base)
        assert mutant.declares.expected_violations == base.declares.expected_violations
        assert mutant.config.mutants == base.config.mutants | {m} and mutant.config.rule == base.config.rule
        assert mutant.declares.kills == m.kills and mutant.declares.base == m.base
