"""Correct accounting of mutants: a mutant counts as found on a History only by a `kills`
requirement its base model holds on that same History. Each test gives the mutant a base that
shows the same bug (it runs the mutant's code under the base's name and declarations): every path
that counts mutants (the judge's `caught`, a campaign row, a state machine's search) must then
count nothing, and with the real base it must count the catch."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from replcheck import campaign, io, systems
from replcheck.properties.judge import judge
from replcheck.properties.machines import DelayMachine
from replcheck.results import caught
from replcheck.spec.contract import Declarations
from replcheck.properties.machines.base import machine_for
from conftest import REPO

MUTANT = "mutant:stop-applies-waited-event"
REQUIREMENT = "WL344.STOP.NO_EXEC"
HISTORY = io.load_history(REPO / "corpus" / "bug-56442-stop-applies-waited-event.jsonl")


@dataclass(frozen=True)
class BuggyBase:
    """The mutant's base model under its own name and declarations, running the mutant's code."""
    name: str
    kind: str
    declares: Declarations
    mutant: object

    def run(self, history):
        return self.mutant.run(history)


def buggy_base() -> BuggyBase:
    mutant = systems.get(MUTANT)
    base = systems.get(mutant.declares.base)
    return BuggyBase(base.name, base.kind, base.declares, mutant)


def test_the_judge_counts_a_catch_only_where_the_base_holds():
    mutant = systems.get(MUTANT)
    j = judge(mutant, HISTORY)
    assert j.violated(REQUIREMENT) and REQUIREMENT in {v.requirement for v in j.findings}
    assert REQUIREMENT in caught(j, judge(systems.get(mutant.declares.base), HISTORY))
    assert caught(j, judge(buggy_base(), HISTORY)) == ()


@pytest.mark.parametrize("base_shows_it", [False, True])
def test_a_campaign_row_is_a_finding_only_where_the_base_holds(monkeypatch, base_shows_it):
    monkeypatch.setattr(campaign, "generate", lambda *args: HISTORY)
    if base_shows_it:
        real, shows = systems.get, buggy_base()
        monkeypatch.setattr(systems, "get", lambda name, *a: shows if name == shows.name else real(name, *a))
    rows = campaign.run_history(0, 0, (MUTANT,))
    (row,) = [r for r in rows if r[campaign.COLUMN["kind"]] == "violation" and r[campaign.COLUMN["requirement"]] == REQUIREMENT]
    assert row[7] == "violated"
    assert row[10] is (not base_shows_it)  # the finding column
    assert ("violates it too on this History" in row[9]) is base_shows_it  # expected: why it is no finding


def machine_on(mutant, base, history: dict):
    """verify's search on the mutant (the delay machine with its base model), grown to `history`."""
    machine = machine_for(DelayMachine, mutant, base)()
    machine.b.header, machine.b.ops, machine.b.now = history["header"], history["ops"], history["ops"][-1]["at"]
    machine.b.tail_us = history["header"]["end_us"] - machine.b.now
    assert machine.b.history() == history
    return machine


@pytest.mark.parametrize("base_shows_it", [False, True])
def test_a_state_machine_fails_on_a_mutant_only_where_the_base_holds(base_shows_it):
    """verify's search (machine_for with the base model) fails only on a kill the base holds."""
    mutant = systems.get(MUTANT)
    base = buggy_base() if base_shows_it else systems.get(mutant.declares.base)
    machine = machine_on(mutant, base, HISTORY)
    if base_shows_it:
        machine.properties_hold()
    else:
        with pytest.raises(AssertionError, match=r"WL344\.(STOP\.NO_EXEC|WAIT\.RULE): "):  # both kill it
            machine.properties_hold()


def test_a_state_machine_on_a_mutant_fails_on_what_its_base_holds_whichever_requirement():
    """WL#7318 drawback 1 breaks WL344.CHAIN.IMMEDIATE before WL7318.F1, its kill: the search fails
    on the first requirement the mutant violates and its base model holds on the same History
    (replcheck.results.search_failures), whatever the mutant's labels say."""
    mutant = systems.get("mutant:origin-timestamp")
    base = systems.get(mutant.declares.base)
    history = io.load_history(REPO / "corpus" / "wl7318-drawback-1-origin-timestamp.jsonl")
    assert [v.requirement for v in judge(mutant, history).findings][0] == "WL344.CHAIN.IMMEDIATE"
    assert "WL344.CHAIN.IMMEDIATE" not in {v.requirement for v in judge(base, history).verdicts if v.status == "violated"}
    machine = machine_on(mutant, base, history)
    with pytest.raises(AssertionError, match=r"^WL344\.CHAIN\.IMMEDIATE: "):
        machine.properties_hold()


def test_a_violation_its_base_declares_is_a_catch_where_the_base_holds_it():
    # WL3464.HOLD is declared on model:mariadb-10.11 (a parallel stop with several domains rewinds);
    # on this History the base holds it and only the mutant's stale position at the Rotate breaks it
    mutant = systems.get("mutant:parallel-exec-pos-not-at-rotate")
    history = io.load_history(REPO / "spec" / "histories" / "hist-parallel-exec-pos-not-at-rotate.jsonl")
    j, base = judge(mutant, history), judge(systems.get(mutant.declares.base), history)
    assert "WL3464.HOLD" in mutant.declares.expected_violations and not base.violated("WL3464.HOLD")
    assert caught(j, base) == ("WL3464.HOLD",)
    assert caught(j, judge(BuggyBase(base.system, "model", mutant.declares, mutant), history)) == ()
