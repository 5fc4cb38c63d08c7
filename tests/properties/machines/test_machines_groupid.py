"""The group-ID state machine: silent on the model, and from scratch it finds the design's own
hazard (a slave crashing between binlog write and engine commit replays the group) when the
halt-on-lower-ID rule is off, shrunk to a short step list."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from replcheck.properties.core import MACHINES
from replcheck.properties.machines.base import SEARCH_PHASES, machine_for, requirements_of

from conftest import model_system
from replcheck.properties.machines import GroupIdMachine

pytestmark = pytest.mark.slow  # searches from scratch

# A hand-made model declares none of the seed models' known violations of other features: judged
# on its family's own requirements, as these searches were written for.
OWN = requirements_of(*GroupIdMachine.FAMILY.features)


SEARCH = settings(max_examples=150, stateful_step_count=10, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck), print_blob=False, phases=SEARCH_PHASES)
# What a replayed group violates: it is logged again with the same ID, applied twice, played past the halt.
REPLAY = ("GGID.MONOTONIC", "GGID.RECOVERY.EXACTLY_ONCE", "GGID.RECOVERY.HALT")


def steps_of(error) -> list[str]:
    """The shrunk steps, each with the values it drew (Hypothesis notes a step's draws before it)."""
    steps, draws = [], []
    for n in getattr(error, "__notes__", []):
        if n.startswith("Draw "):
            draws.append(n)
        elif n.startswith("state."):
            if not n.startswith(("state.topology", "state.properties_hold", "state.teardown")):
                steps.append(" ".join([n, *draws]))
            draws = []
    return steps


def test_model_holds_every_groupid_and_recovery_property():
    machine = machine_for(GroupIdMachine, model_system("wl344"), requirements=OWN)
    run_state_machine_as_test(machine, settings=SEARCH)
    for r in ("GGID.RECOVERY.EXACTLY_ONCE", "GGID.RECOVERY.HALT", "GGID.RECOVERY.LAST_ID", "GGID.UNIQUE",
              "GGID.FAILOVER.ELECT", "GGID.FAILOVER.CONTINUE", "GGID.CHANGE_MASTER", "MARIADB.GTID.SLAVE_POS"):
        assert machine.exercised[r] > 0, r


def test_finds_the_designs_hazard_from_scratch():
    # The halt-on-lower-ID rule switched off (mutant:halt-strictly-lower is killed by gg-* histories).
    with pytest.raises(AssertionError) as info:
        # 300 examples since generator 8's draws (a commit's length; no literals of local modules)
        run_state_machine_as_test(machine_for(GroupIdMachine, model_system("wl344", ["no-halt-on-lower-id"]), requirements=OWN),
                                  settings=settings(SEARCH, max_examples=300))
    assert str(info.value).startswith(REPLAY), str(info.value)
    steps = steps_of(info.value)
    assert 1 <= len(steps) <= 3, steps
    assert any("crash_at_point" in s and ("after_binlog_write" in s or "after_engine_commit" in s) for s in steps), steps


def test_machine_is_registered_with_groupid_and_recovery_requirements():
    [registered] = [m for m in MACHINES if m.cls is GroupIdMachine]
    assert {"GGID.UNIQUE", "GGID.RECOVERY.EXACTLY_ONCE", "MARIADB.GTID.BINLOG_POS"} <= set(registered.requirements)
