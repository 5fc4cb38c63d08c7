"""The kernel's hook protocol: a feature joins by a hook's name, a misspelt one is refused, every hook
is called by the core and defined by some feature, and the components see no private part of
each other."""
from __future__ import annotations

import ast
import re

import pytest

from replcheck.model.sim.component import HOOKS, Feature
from replcheck.model.sim.kernel import PARTS
from conftest import REPO

SIM = REPO / "model" / "sim"


def test_a_misspelt_hook_is_refused_when_the_feature_is_made():
    with pytest.raises(TypeError, match="no hook named on_comit"):
        type("Typo", (Feature,), {"on_comit": lambda self, node: None})


def test_every_hook_is_called_by_the_core_and_defined_by_a_feature():
    core = "".join(p.read_text() for p in SIM.glob("*.py"))
    called = set(re.findall(r"\bself\.hooks\.(\w+)", core))
    defined = {name for cls in PARTS.values() if issubclass(cls, Feature) for name in vars(cls) if name in HOOKS}
    assert set(HOOKS) == called, sorted(set(HOOKS) ^ called)
    assert set(HOOKS) == defined, sorted(set(HOOKS) - defined)


def test_no_component_reaches_into_another_ones_private_parts():
    for path in SIM.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                owner = node.value
                assert isinstance(owner, ast.Name) and owner.id in ("self", "cls"), \
                    f"{path.name}:{node.lineno}: .{node.attr} of something other than self"


def test_a_model_without_mutants_still_lets_its_mutants_note_what_it_asks():
    """The kernel holds no mutants as an empty tuple (no hashing per test), but a set that notes each
    mutant asked about (verify's, properties/judge.py Asked) is kept even when empty."""
    from replcheck import systems
    from replcheck.generate import generate
    from replcheck.properties.judge import asking

    system = asking(systems.get("model:wl344"))
    assert not system.config.mutants
    system.run(generate(11, 4, ("delay",)))
    asked = {m.name for m in system.config.mutants.asked}
    assert {"disk-full-fails-write", "gtid-received-at-first-event", "min-ack-last-slot"} <= asked  # the source's, receiver's, semi-sync's
