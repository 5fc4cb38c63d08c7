"""The filter state machine: finds S3 (mutant:ack-filtered, a semi-sync master waiting for an ack of
a transaction it sends to no semi-sync replica) from scratch, and the same search on the model it
mutates finds nothing."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from replcheck.properties.machines.base import SEARCH_PHASES, machine_for
from replcheck.properties.machines import FilterMachine
from replcheck.systems import get

from conftest import unshrunk_phases

pytestmark = pytest.mark.slow  # searches from scratch

SEARCH = settings(max_examples=200, stateful_step_count=12, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck), print_blob=False, phases=SEARCH_PHASES)


def test_finds_the_s3_mutant():
    machine = machine_for(FilterMachine, get("mutant:ack-filtered"), get("model:wl7318"))
    with pytest.raises(AssertionError) as info:
        run_state_machine_as_test(machine, settings=settings(SEARCH, phases=unshrunk_phases()))  # the requirement, not the steps
    assert str(info.value).startswith("FILTER.SEMISYNC.UNSENT"), info.value


def test_the_model_passes_the_same_search():
    machine = machine_for(FilterMachine, get("model:wl7318"))
    run_state_machine_as_test(machine, settings=SEARCH)
    judged = {r for r, n in machine.exercised.items() if n and r.startswith("FILTER.")}
    assert {"FILTER.REPLICA.NOT_APPLIED", "FILTER.GTID.ADVANCES", "FILTER.SEMISYNC.UNSENT"} <= judged, judged
