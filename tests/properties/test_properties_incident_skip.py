"""The skip counter inside a group (WL3464.SKIP_GROUP, WL3464.GTID_SKIP): a skip that never reached
its group's end skipped nothing, and the group's next copy is another one. The skip at an incident
(WL3464.R4) after a CHANGE MASTER threw the relay log holding it away."""
from __future__ import annotations

from conftest import assert_witness

from replcheck.properties.core import PASS

US = 1_000_000


def test_a_skip_whose_partial_copy_was_rolled_back_skipped_nothing(kit):
    # The cut leaves only t1's GTID event in C's relay log, and SKIP_COUNTER = 1 enters t1. After
    # a failover C's IO thread relays B's binlog: B's format description rolls the partial copy
    # back, and the skip with it; t1 then comes whole from B and is applied, as it must be.
    nodes = ["A", "B", "C"]
    channels = [{"source": "A", "replica": "B", "delay": 5, "latency_us": 400_000}, {"source": "A", "replica": "C", "latency_us": 400_000}]
    ops = [{"at": 0, "op": "stop_slave", "node": "C"},
           {"at": 0, "op": "set_global", "node": "C", "variable": "sql_slave_skip_counter", "value": 1},
           {"at": 0, "op": "start_slave", "node": "C"}, {"at": 0, "op": "cut_io", "node": "C", "after_events": 1, "then": "stop"},
           {"at": 0, "op": "trx", "node": "A", "trx": "t1", "statements": [{}, {}]},
           {"at": 443_761, "op": "failover", "node": "B"}, {"at": 443_761, "op": "start_slave", "node": "C", "thread": "io"}]
    tr = kit.run("model:wl7318", kit.make_history(nodes, channels, ops, sample_every_us=700_000, end_us=20 * US))
    assert [s["type"] for s in tr.all("skip", node="C", trx="t1")] == ["GTID_LOG_EVENT"]
    rollback = tr.first("rollback", node="C", trx="t1")
    assert rollback["reason"] == "partial_group" and [a["idx"] for a in tr.all("apply", node="C", trx="t1")] == [0, 1, 2, 3]
    for requirement in ("WL3464.SKIP_GROUP", "WL3464.GTID_SKIP"):
        assert kit.verdict(requirement, tr).status in (PASS, "not_exercised"), requirement
    assert kit.verdict("WL3464.SKIP_GROUP", tr).checked > 0
    # Without the rollback the skip was still inside t1 when its next copy came: applying it is
    # applying a skipped group.
    tr.drop(rollback)
    assert_witness(kit.verdict("WL3464.GTID_SKIP", tr), tr, tr.first("visible", node="C", trx="t1"), "C skipped t1 (0-1-1) at 0.4 s but applied it")
    assert_witness(kit.verdict("WL3464.SKIP_GROUP", tr), tr, tr.first("apply", node="C", trx="t1", idx=0),
                   "C skipped GTID_LOG_EVENT of t1 but applied its GTID_LOG_EVENT")


def _skip_after_change_master(kit, gtid: bool):
    # B stops at A's incident (t1's failed binlog write); the DBA changes MASTER_DELAY while stopped,
    # which throws the relay log away, sets the skip counter to 1 and starts both threads
    nodes = [{"id": "A", "gtid_mode": gtid}, {"id": "B", "gtid_mode": gtid}]
    ops = [{"at": 0, "op": "trx", "node": "A", "trx": "t1", "binlog_failure": "write_error"},
           {"at": US, "op": "trx", "node": "A", "trx": "t2"},
           {"at": 2 * US, "op": "stop_slave", "node": "B"}, {"at": 2 * US, "op": "change_master", "node": "B", "delay": 1},
           {"at": 2 * US, "op": "set_global", "node": "B", "variable": "sql_slave_skip_counter", "value": 1},
           {"at": 2 * US, "op": "start_slave", "node": "B"}, {"at": 3 * US, "op": "trx", "node": "A", "trx": "t3"}]
    history = kit.make_history(nodes, [{"source": "A", "replica": "B", "latency_us": 1000}], ops, sample_every_us=500_000, end_us=8 * US)
    tr = kit.run("model:wl7318", history)
    assert tr.first("relay_log_recovery", node="B")["reason"] == "change_master"
    return tr


def test_a_skip_after_the_incident_was_fetched_again_is_judged(kit):
    # by position: the dump starts at the incident again, and the skip takes it
    tr = _skip_after_change_master(kit, gtid=False)
    assert kit.verdict("WL3464.R4", tr).status == PASS
    tr.drop(tr.first("skip", node="B", type="INCIDENT_EVENT"))  # the incident not skipped
    assert_witness(kit.verdict("WL3464.R4", tr), tr, tr.first("stmt", node="B", op="start_slave"),
                   "B: skip 1 after the incident skipped [], then applied")


def test_a_skip_after_the_incident_was_thrown_away_is_not_judged(kit):
    # by GTID (seed 200097, History 59): the connect starts at t2, past the incident, which B never
    # gets again; the counter skips t2, as it skips any next group
    tr = _skip_after_change_master(kit, gtid=True)
    assert [s["trx"] for s in tr.all("skip", node="B")] == ["t2"] * 3
    assert kit.verdict("WL3464.R4", tr).status == "not_exercised"
    # had the relay log kept the incident, the skip of t2 would have passed over it
    tr.drop(tr.first("relay_log_recovery", node="B"))
    assert_witness(kit.verdict("WL3464.R4", tr), tr, tr.first("stmt", node="B", op="start_slave"),
                   "B: skip 1 after the incident skipped [('GTID_LOG_EVENT', 't2')")
