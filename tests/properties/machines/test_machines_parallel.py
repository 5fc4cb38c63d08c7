"""The parallel applier's state machine: finds each of its mutants from scratch (commit order lost
where it is promised, caught up while workers are behind, MTS gaps applied again after a crash, an
UNTIL stop giving up queued groups, a group queued without its MASTER_DELAY wait while workers are
busy), and the same search on the models they mutate finds nothing."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from replcheck.properties.machines.base import SEARCH_PHASES, machine_for, requirements_of
from replcheck.properties.machines import ParallelMachine
from replcheck.systems import get

from conftest import unshrunk_phases

pytestmark = pytest.mark.slow  # searches from scratch

# verify's budget (60 examples of 20 steps)
SEARCH = settings(max_examples=60, stateful_step_count=20, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck), print_blob=False, phases=SEARCH_PHASES)
FIND = settings(SEARCH, phases=unshrunk_phases())  # a find test reads the requirement, not the steps
# (mutant, examples): the gaps need a long group that a shorter one overtakes and a crash before the
# long one commits, on a replica that does not keep commit order: kill_out_of_order builds it (200
# examples of bursts, time passing and crashes in that order until generator 12's last change)
MUTANTS = [("commit-order-lost", 60), ("caught-up-with-workers-busy", 60), ("mts-gaps-not-filled", 60),
           ("until-gives-up-queued", 200),  # an UNTIL past a group conservative mode holds back
           ("delay-skipped-while-workers-busy", 60)]  # a burst 0.5 s apart on a delayed replica
# Each search judges the family's own requirements and fails on a catch: a violation the base model
# holds on the same History, which may be another of them than the mutant's kills (commit order
# lost shows first as a transaction applied twice or lost after a crash).
OWN = requirements_of(*ParallelMachine.FAMILY.features)


@pytest.mark.parametrize("mutant,examples", MUTANTS, ids=[m for m, _ in MUTANTS])
def test_finds_the_mutant(mutant, examples):
    system = get(f"mutant:{mutant}")
    with pytest.raises(AssertionError) as info:
        run_state_machine_as_test(machine_for(ParallelMachine, system, get(system.declares.base), requirements=OWN),
                                  settings=settings(FIND, max_examples=examples))
    assert str(info.value).split(":")[0] in OWN, info.value


@pytest.mark.parametrize("model", ["model:mariadb-10.11", "model:mysql-8.0"])
def test_the_models_pass_the_same_search(model):
    machine = machine_for(ParallelMachine, get(model))
    run_state_machine_as_test(machine, settings=SEARCH)
    judged = {r for r, n in machine.exercised.items() if n and r.startswith("PARALLEL.")}
    assert {"PARALLEL.COMMIT.ORDER", "PARALLEL.SBM.PENDING", "PARALLEL.RECOVERY.GAPS"} <= judged, judged
