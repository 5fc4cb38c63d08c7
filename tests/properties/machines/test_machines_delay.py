"""The delay state machine: silent on the models, finds the known bugs from scratch, shrinks them short."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from replcheck.properties.core import MACHINES
from replcheck.properties.machines.base import SEARCH_PHASES, machine_for, requirements_of

from conftest import model_system
from replcheck.properties.machines import DelayMachine

pytestmark = pytest.mark.slow  # searches from scratch

# A hand-made model declares none of the seed models' known violations of other features: judged
# on its family's own requirements, as these searches were written for.
OWN = requirements_of(*DelayMachine.FAMILY.features)


CI = settings(max_examples=60, stateful_step_count=12, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), print_blob=False, phases=SEARCH_PHASES)


def failure(rule, mutants, examples=200, expected=()):
    with pytest.raises(AssertionError) as info:
        run_state_machine_as_test(machine_for(DelayMachine, model_system(rule, mutants, expected), requirements=OWN),
                                  settings=settings(CI, max_examples=examples))
    # the steps taken, not Hypothesis's notes of the topology, the invariant checks and teardown
    steps = [n for n in getattr(info.value, "__notes__", []) if n.startswith("state.")
             and not n.startswith(("state.topology", "state.properties_hold", "state.teardown"))]
    return str(info.value), steps


@pytest.mark.parametrize("rule,expected", [("wl7318", ()), ("wl344", ("WL344.CHAIN.IMMEDIATE",))])
def test_models_hold_every_delay_property(rule, expected):
    machine = machine_for(DelayMachine, model_system(rule, (), expected), requirements=OWN)
    run_state_machine_as_test(machine, settings=CI)
    # The run judged the central requirements, so passing means something.
    assert machine.exercised["WL344.WAIT.EXEMPT"] > 0 and machine.exercised["WL344.SSS.SQL_DELAY"] > 0
    assert machine.exercised["WL7318.F2" if rule == "wl7318" else "WL344.WAIT.RULE"] > 0
    # Chains too: this coverage once fell to nothing unnoticed when the draw order shifted.
    assert machine.exercised["WL7318.F1" if rule == "wl7318" else "WL344.CLOCK.COMPENSATE"] > 0


@pytest.mark.parametrize("rule,mutant", [
    ("wl344", "stop-applies-waited-event"),
    ("wl344", "fake-event-now"),
    ("wl7318", "start-timestamp"),
    ("wl344", "no-clock-compensation"),
])
def test_finds_known_bug_and_shrinks_it(rule, mutant):
    message, steps = failure(rule, [mutant])
    assert message.split(":")[0].startswith(("WL344.", "WL7318."))
    assert len(steps) <= 3, steps  # some need no step but the topology's opening commit


def test_finds_mdev_32265_as_a_lag_violation():
    # The delay machine judges the lag properties too: 'caught up' kept across a restart (D8).
    # (the seed's declared chain rule aside, as for the model)
    message, steps = failure("wl344", ["caught-up-kept"], expected=("WL344.CHAIN.IMMEDIATE",))
    assert message.split(":")[0] in ("SBM.PENDING", "SBM.RESTART", "SBM.DELAY", "SBM.VALUE"), message
    assert 1 <= len(steps) <= 3, steps


def test_finds_known_bugs_d7_as_a_lost_transaction():
    # A delay change on a stopped replica with unapplied events (the delay_change step): the relay
    # logs are purged and the mutant fetches again from the IO thread's position.
    # The machine judges the recovery properties too (the delay family's kill -9 of a source): the
    # transaction the mutant never fetches again is lost to either.
    message, steps = failure("wl7318", ["delay-change-keeps-fetch-position"])
    assert message.startswith("WL344.CM.NO_LOSS") or (
        message.startswith("GGID.RECOVERY.EXACTLY_ONCE") and "lacks t1" in message), message
    assert any("delay_change" in s for s in steps) and 1 <= len(steps) <= 8, steps


def test_wl344_chain_rule_is_found_when_not_declared_expected():
    # The seed's own note (BUG#52308): WL#344 measures chains from the originating master.
    message, steps = failure("wl344", [], examples=300)
    assert message.startswith("WL344.CHAIN.IMMEDIATE"), message
    assert len(steps) <= 3, steps


def test_machine_is_registered_with_the_delay_requirements():
    registered = [m for m in MACHINES if m.cls is DelayMachine]
    assert registered and "WL344.STOP.NO_EXEC" in registered[0].requirements
