"""The skip counter inside a group (WL3464.SKIP_GROUP, WL3464.GTID_SKIP): a skip that never reached
its group's end skipped nothing, and the group's next copy is another one."""
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
