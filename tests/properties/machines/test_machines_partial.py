"""Partial groups from scratch: the machines whose families cut a replica's IO thread (cut_io) find
each partial-group mutant, shrunk to a few steps with a cut among them, and name a requirement it
must be caught by."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from replcheck.properties.machines.base import SEARCH_PHASES, machine_for
from replcheck.properties.machines import DelayMachine, SemiSyncMachine
from replcheck.systems import get

pytestmark = pytest.mark.slow  # searches from scratch

SEARCH = settings(max_examples=150, stateful_step_count=12, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck), print_blob=False, phases=SEARCH_PHASES)


def steps_of(error) -> list[str]:
    return [n.split("(")[0] for n in getattr(error, "__notes__", [])
            if n.startswith("state.") and not n.startswith(("state.topology", "state.properties_hold", "state.teardown"))]


@pytest.mark.parametrize("machine,mutant,examples,length,cut,most", [
    (DelayMachine, "mutant:gtid-received-at-first-event", 150, 12, "state.cut_io", 3),  # Bug #69943: a cut inside a group loses it
    (DelayMachine, "mutant:rotate-mid-group", 150, 12, "state.cut_io", 3),  # Bug #72313: a restart resumes inside the group
    # The partial copy must meet its full copy from a new source: a partition cuts one replica off
    # inside a group, the failover elects the other, and the cut one's IO thread starts on it (by
    # GTID, after the new source's format description event). crash_and_failover's partition does
    # that in verify's budget; a cut, a commit and a failover as separate steps took 600 examples
    # of the family's commits, cuts, waits and failovers alone.
    (SemiSyncMachine, "mutant:partial-copy-kept", 60, 20, "state.crash_and_failover", 2),
])
def test_finds_partial_group_mutant_from_scratch(machine, mutant, examples, length, cut, most):
    system = get(mutant)
    with pytest.raises(AssertionError) as info:
        run_state_machine_as_test(machine_for(machine, system, get(system.declares.base)),
                                  settings=settings(SEARCH, max_examples=examples, stateful_step_count=length))
    assert str(info.value).split(":")[0] in system.declares.kills, str(info.value)
    steps = steps_of(info.value)
    assert cut in steps and len(steps) <= most, steps
