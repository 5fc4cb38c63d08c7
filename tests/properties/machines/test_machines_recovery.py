"""Binlog durability from scratch: the state machines whose families crash a
source find each durability mutant, shrunk to a few steps, by a requirement it must be killed by:
the group-ID machine (sync_binlog = 1, a machine crash before a group's sync) the dump thread
sending unsynced events, the delay machine (kill -9 of the source after commits) the GTID state
that lags the binlog (G6), the group-ID machine (a clean restart whose .state file was deleted) the
empty GTID state of MDEV-6391 (G7). The search judges the requirements the mutant must be caught by: the
delay family's own (a replica that skips a reused GTID shows Seconds_Behind_Master 0 with an event
unapplied) would stop it at a consequence first."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test
from test_machines_partial import steps_of

from replcheck.properties.machines.base import SEARCH_PHASES, machine_for
from replcheck.properties.machines import DelayMachine, GroupIdMachine
from replcheck.systems import get

pytestmark = pytest.mark.slow  # searches from scratch

SEARCH = settings(max_examples=150, stateful_step_count=12, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck), print_blob=False, phases=SEARCH_PHASES)


@pytest.mark.parametrize("machine,mutant,step,most,budget", [
    # generator 7 draws more per topology (durability, options): the search needs more examples.
    # The group-ID machine's search for mutant:send-before-sync is in test_machines_mutants.
    # A kill -9 of the source once its commits returned, and a commit once it is back
    # (crash_and_restart, generator 12): verify's budget, 60 examples of 20 steps (800 of 12 before).
    (DelayMachine, "mutant:gtid-state-lags-binlog", "state.crash_and_restart", 4, (60, 20)),
    # G7 (MDEV-6391): a commit, then a clean restart without the .state file
    (GroupIdMachine, "mutant:state-file-missing-empty", "state.state_file_lost", 4, (400, 12)),
])
def test_finds_durability_mutant_from_scratch(machine, mutant, step, most, budget):
    system = get(mutant)
    search = type(f"{machine.__name__}Kills", (machine,), {"REQUIREMENTS": system.declares.kills})
    examples, length = budget
    with pytest.raises(AssertionError) as info:
        run_state_machine_as_test(machine_for(search, system),
                                  settings=settings(SEARCH, max_examples=examples, stateful_step_count=length))
    assert str(info.value).split(":")[0] in system.declares.kills, str(info.value)
    steps = steps_of(info.value)
    assert step in steps and len(steps) <= most, steps
