"""Partial groups from scratch: the machines whose families cut a replica's IO thread (cut_io) find
each partial-group mutant, shrunk to a few steps with a cut among them, and name a requirement it
must be caught by."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from dataclasses import replace

from replcheck.model.steps import semisync
from replcheck.properties.machines.base import SEARCH_PHASES, family_machine, machine_for
from replcheck.properties.machines.delay import DelayMachine
from replcheck.systems import get

pytestmark = pytest.mark.slow  # searches from scratch

SEARCH = settings(max_examples=150, stateful_step_count=12, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck), print_blob=False, phases=SEARCH_PHASES)


# The partial copy must meet its full copy from a new source: a cut that stops one replica's IO
# thread inside a group, a failover to the other replica, that IO thread started again (by GTID,
# after the new source's format description event). Among the semisync family's ten steps that
# takes about one example in several thousand; its commits, cuts, waits and failovers alone, a few
# hundred (600 since generator 8's draws). The same steps, the same draws: only the rules the
# machine chooses among are fewer.
FAILOVER_CUTS = family_machine(replace(semisync.FAMILY, steps=tuple(
    s for s in semisync.FAMILY.steps if s.name in ("time_passes", "commit", "cut_io", "crash_and_failover"))))


def steps_of(error) -> list[str]:
    return [n.split("(")[0] for n in getattr(error, "__notes__", [])
            if n.startswith("state.") and not n.startswith(("state.topology", "state.properties_hold", "state.teardown"))]


@pytest.mark.parametrize("machine,mutant,examples,most", [
    (DelayMachine, "mutant:gtid-received-at-first-event", 150, 3),  # Bug #69943: a cut inside a group loses it
    (DelayMachine, "mutant:rotate-mid-group", 150, 3),  # Bug #72313: a restart resumes inside the group
    (FAILOVER_CUTS, "mutant:partial-copy-kept", 600, 5),
])
def test_finds_partial_group_mutant_from_scratch(machine, mutant, examples, most):
    system = get(mutant)
    with pytest.raises(AssertionError) as info:
        run_state_machine_as_test(machine_for(machine, system), settings=settings(SEARCH, max_examples=examples))
    assert str(info.value).split(":")[0] in system.declares.kills, str(info.value)
    steps = steps_of(info.value)
    assert "state.cut_io" in steps and len(steps) <= most, steps
