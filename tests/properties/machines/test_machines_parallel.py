"""The parallel applier's state machine: finds each of its mutants from scratch (commit order lost
where it is promised, caught up while workers are behind, MTS gaps applied again after a crash, an
UNTIL stop giving up queued groups, a group queued without its MASTER_DELAY wait while workers are
busy), and the same search on the models they mutate finds nothing."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from replcheck import search
from replcheck.properties.core import MACHINES
from replcheck.properties.machines.base import SEARCH_PHASES, machine_for, requirements_of
from replcheck.properties.machines import ParallelMachine
from replcheck.systems import get

pytestmark = pytest.mark.slow  # searches from scratch

# verify's budget (60 examples of 20 steps)
SEARCH = settings(max_examples=60, stateful_step_count=20, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck), print_blob=False, phases=SEARCH_PHASES)
# Each mutant is searched as verify's last pass searches it (replcheck.search.run_machine: seed 0,
# examples of 20 steps, here unshrunk): the gaps need a long group that a shorter one overtakes and a
# crash before the long one commits, on a replica that does not keep commit order (kill_out_of_order
# builds it); the UNTIL stop, an UNTIL past a group conservative mode holds back; the delay, a burst
# 0.5 s apart on a delayed replica.
MUTANTS = ["commit-order-lost", "caught-up-with-workers-busy", "mts-gaps-not-filled", "until-gives-up-queued",
           "delay-skipped-while-workers-busy"]
# Each search judges every requirement and fails on a catch: a violation the base model does not
# show on the same History, which is one of the family's own requirements here, and may be another
# of them than the mutant's kills (commit order lost shows first as a transaction applied twice or
# lost after a crash).
OWN = requirements_of(*ParallelMachine.FAMILY.features)


@pytest.mark.parametrize("mutant", MUTANTS)
def test_finds_the_mutant(mutant):
    machine = next(m for m in MACHINES if m.cls is ParallelMachine)
    _, failure = search.run_machine(machine, get(f"mutant:{mutant}"), 60, seed=0, shrink=False)
    assert failure is not None and failure.message.split(":")[0] in OWN, failure


@pytest.mark.parametrize("model", ["model:mariadb-10.11", "model:mysql-8.0"])
def test_the_models_pass_the_same_search(model):
    machine = machine_for(ParallelMachine, get(model))
    run_state_machine_as_test(machine, settings=SEARCH)
    judged = {r for r, n in machine.exercised.items() if n and r.startswith("PARALLEL.")}
    assert {"PARALLEL.COMMIT.ORDER", "PARALLEL.SBM.PENDING", "PARALLEL.RECOVERY.GAPS"} <= judged, judged
