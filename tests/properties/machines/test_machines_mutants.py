"""Every mutant of the registry found from scratch by a state machine (issue #20). Each search is
the one verify runs on the mutant: its feature's machine driving the mutant, a catch only where
its base model holds on the same History (verify.run_machine, machine_for), derandomised, in a
fixed budget. A mutant whose feature's test module searches for it (asserting more: its shrunk
steps) is listed with that module. Every mutant is found: one no search found would be a gap in the
steps (replcheck.model.steps) to close, not a mutant to drop."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from replcheck.model.mutants import REGISTRY
from replcheck.properties.machines.base import SEARCH_PHASES, machine_for
from replcheck.properties.machines import DelayMachine, DomainsMachine, GroupIdMachine, IncidentMachine, MultiSourceMachine, SemiSyncMachine
from replcheck.systems import get

pytestmark = pytest.mark.slow  # searches from scratch

SEARCH = settings(deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck), print_blob=False, phases=SEARCH_PHASES)

# (machine, mutant, examples, steps): verify's machine; the budget each needs (verify's: 60 x 20)
SEARCHES = [
    (DelayMachine, "origin-timestamp", 60, 20),
    (DelayMachine, "per-event-wait", 60, 20),
    (SemiSyncMachine, "switch-back-first-ack", 100, 20),  # 60 no longer reach it since restart_as_replica
    (SemiSyncMachine, "no-reack-on-reconnect", 60, 20),  # lose_acks, a commit waiting, the IO thread restarted
    (SemiSyncMachine, "min-ack-last-slot", 60, 20),  # set_wait_for_slave_count past the replicas, then lowered
    (SemiSyncMachine, "recovery-keeps-in-doubt", 60, 20),  # a crash with a commit in flight, restart_as_replica
    (IncidentMachine, "skip-keeps-gtid-position", 60, 20),  # a skip after a commit, then a restart of the replica
    (GroupIdMachine, "halt-strictly-lower", 60, 20),
    (GroupIdMachine, "recovery-ignores-index", 60, 20),
    (GroupIdMachine, "stop-event", 60, 20),
    (GroupIdMachine, "purge-silent-skip", 60, 20),  # purge_while_down rotates once the commit is binlogged
    (GroupIdMachine, "group-id-before-binlog-lock", 300, 12),
    (GroupIdMachine, "send-before-sync", 400, 12),
    (GroupIdMachine, "connect-ignores-server-id", 60, 20),  # a failover, a restore, a reconnect by group ID
    (DomainsMachine, "start-binlog-any-entry", 60, 20),  # a failover, writes and a rotation before the connect
    (MultiSourceMachine, "ignore-duplicates-race", 60, 20),
]
ELSEWHERE = {  # searched for by the feature's own test module
    "stop-applies-waited-event": "test_machines_delay", "start-timestamp": "test_machines_delay",
    "no-clock-compensation": "test_machines_delay", "fake-event-now": "test_machines_delay",
    "delay-change-keeps-fetch-position": "test_machines_delay", "caught-up-kept": "test_machines_delay",
    "shutdown-acks-waiters": "test_machines_semisync",
    "no-incident": "test_machines_incident", "incident-ignored": "test_machines_incident",
    "incident-on-rollback": "test_machines_incident", "skip-mid-group": "test_machines_incident",
    "no-halt-on-lower-id": "test_machines_groupid",
    "gtid-received-at-first-event": "test_machines_partial", "rotate-mid-group": "test_machines_partial",
    "partial-copy-kept": "test_machines_partial", "gtid-state-lags-binlog": "test_machines_recovery",
    "state-file-missing-empty": "test_machines_recovery", "ack-filtered": "test_machines_filter",
    "failed-change-not-logged": "../test_properties_srcerr",
    "commit-order-lost": "test_machines_parallel", "caught-up-with-workers-busy": "test_machines_parallel",
    "mts-gaps-not-filled": "test_machines_parallel", "until-gives-up-queued": "test_machines_parallel",
    "delay-skipped-while-workers-busy": "test_machines_parallel",
}
# Historical bugs added to measure the generic search (bench/historical_search.py, which records
# what verify's searches find of them): no search of their own yet.
UNSEARCHED = {"rli-written-after-commit", "binlog-write-error-ignored", "master-fde-lag", "parallel-lag-from-last-commit",
              "mts-lag-zero-after-idle", "filtered-ddl-gtid-lost", "parallel-exec-pos-not-at-rotate",
              "parallel-restart-past-given-up", "semisync-waits-while-disabled"}


@pytest.mark.parametrize("machine,mutant,examples,steps", SEARCHES, ids=[s[1] for s in SEARCHES])
def test_machine_finds_mutant_from_scratch(machine, mutant, examples, steps):
    system = get(f"mutant:{mutant}")
    with pytest.raises(AssertionError) as info:
        run_state_machine_as_test(machine_for(machine, system, get(system.declares.base)),
                                  settings=settings(SEARCH, max_examples=examples, stateful_step_count=steps))
    assert str(info.value).split(":")[0] in system.declares.kills, str(info.value)


def test_every_mutant_has_a_search():
    searched = {s[1] for s in SEARCHES}
    assert not searched & set(ELSEWHERE)
    assert searched | set(ELSEWHERE) | UNSEARCHED == set(REGISTRY) and not UNSEARCHED & (searched | set(ELSEWHERE))
    here = Path(__file__).parent
    for mutant, module in ELSEWHERE.items():
        assert f'"{mutant}"' in (here / f"{module}.py").read_text() or f"mutant:{mutant}" in (here / f"{module}.py").read_text(), mutant
