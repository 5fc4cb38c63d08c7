"""The vocabulary is written once: each family of replcheck.model.steps is both the state machine's
rules and the generator's steps, and the same choices give the same History through either."""
from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RULE_MARKER

from replcheck import generate as G
from replcheck.properties.machines import BY_COMPOSED, BY_FAMILY

MACHINES = {**BY_FAMILY, **BY_COMPOSED}  # a composed family's machine is made as a family's
EVERY = {**G.FAMILIES, **G.COMPOSED}


def machine_rules(cls) -> set[str]:
    """The names of a state machine's @rule methods (Hypothesis marks them with RULE_MARKER)."""
    return {name for name in dir(cls) if hasattr(getattr(cls, name), RULE_MARKER)}


class Recording(G.Rng):
    """The generator's stream, noting each choice a topology or step makes as the strategy the
    state machine would draw it from."""

    calls: list | None = None  # the draws of the step being taken; None between steps

    def _keep(self, strategy, value):
        if self.calls is not None:
            self.calls.append((strategy, value))
        return value

    def integer(self, lo, hi):
        return self._keep(st.integers(lo, hi), super().integer(lo, hi))

    def choice(self, seq):
        return self._keep(st.sampled_from(seq), super().choice(seq))

    def boolean(self):
        return self._keep(st.booleans(), super().boolean())


class Scripted:
    """Hypothesis's `data` for a replay: each draw must ask for the strategy the generator's
    choice stood for, and gets the generator's value."""

    def __init__(self, calls):
        self.calls = list(calls)

    def draw(self, strategy):
        expected, value = self.calls.pop(0)
        assert repr(strategy) == repr(expected)
        return value


def test_machines_are_their_families():
    assert set(BY_FAMILY) == set(G.FAMILIES) and set(BY_COMPOSED) == set(G.COMPOSED)
    for name, cls in MACHINES.items():
        family = EVERY[name]
        assert cls.FAMILY is family
        assert machine_rules(cls) == {s.name for s in family.steps}


@pytest.mark.parametrize("family", sorted(EVERY))
def test_the_same_choices_give_the_same_history_in_the_generator_and_the_machine(family, monkeypatch):
    taken: list[tuple[str, list]] = []

    def recorded(name, fn):
        def take(b, d):
            d.calls = []
            fn(b, d)
            taken.append((name, d.calls))
            d.calls = None
        return take

    table = G.FAMILIES if family in G.FAMILIES else G.COMPOSED
    f = table[family]
    monkeypatch.setitem(table, family, replace(f, topology=recorded("topology", f.topology),
                                                    steps=tuple(replace(s, fn=recorded(s.name, s.fn)) for s in f.steps)))
    monkeypatch.setattr(G, "Rng", Recording)
    for index in range(8):
        taken.clear()
        history = G.generate(2, index, (family,))
        machine = MACHINES[family]()
        for name, calls in taken:
            data = Scripted(calls)
            getattr(machine, name)(data)
            assert not data.calls, name
        assert machine.steps == len(taken) - 1 == type(machine).last_steps > 0
        mine = machine.b.history()
        assert mine["ops"] == history["ops"]
        assert {**mine["header"], "name": "", "seed": 0} == {**history["header"], "name": "", "seed": 0}
