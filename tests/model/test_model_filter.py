"""The filter rules (model/filter.py) and what the simulator does with them: the source's binlog
rules, the dump thread's FILTER_ON_MASTER, the SQL thread's FILTER_ON_SLAVE and replicate-* rules
(before or after the delay), the GTID position past a filtered group, the skip counter, and the
semi-sync wait for a transaction no semi-sync replica is sent (S3)."""
from __future__ import annotations

import pytest
from conftest import US

from replcheck.harness.runner import trx_statement
from replcheck.model import filter as FL


@pytest.mark.parametrize("rules,table,why", [
    ({}, "rc.r", None),
    ({"replicate_ignore_table": "rc.m"}, "rc.m", "replicate_ignore_table"),
    ({"replicate_ignore_table": "rc.m"}, "rc.r", None),
    ({"replicate_do_table": "rc.r"}, "rc.m", "replicate_do_table"),
    ({"replicate_do_table": "rc.r,rc.m"}, "rc.m", None),
    ({"replicate_wild_do_table": "rc.m%"}, "rc.r", "replicate_wild_do_table"),
    ({"replicate_wild_do_table": "rc.m%"}, "rc.m", None),
    ({"replicate_wild_ignore_table": "rc.r%"}, "rc.r", "replicate_wild_ignore_table"),
    ({"replicate_wild_ignore_table": "rc._"}, "rc.d", "replicate_wild_ignore_table"),
    ({"replicate_do_db": "other"}, "rc.r", "replicate_do_db"),
    ({"replicate_ignore_db": "rc"}, "rc.r", "replicate_ignore_db"),
    # the do/ignore table rule that names the table decides before the wild ones (rpl_filter.cc, tables_ok)
    ({"replicate_do_table": "rc.r", "replicate_wild_ignore_table": "rc.%"}, "rc.r", None),
])
def test_replicate_rules(rules, table, why):
    assert FL.replica_filter(rules, table, False) == why


@pytest.mark.parametrize("marked,sent,why", [
    ("REPLICATE", True, None), ("FILTER_ON_SLAVE", True, "skip_replication"), ("FILTER_ON_MASTER", False, "skip_replication"),
])
def test_marked_events(marked, sent, why):
    settings = {"replicate_events_marked_for_skip": marked}
    assert FL.sent(settings, True) is sent and FL.sent(settings, False)
    assert FL.replica_filter(settings, "rc.r", True) == why and FL.replica_filter(settings, "rc.r", False) is None


def test_binlog_rules():
    assert FL.binlogged({}, "rc.r") and FL.binlogged({"binlog_do_db": "rc"}, "rc.m")
    assert not FL.binlogged({"binlog_ignore_db": "rc"}, "rc.r") and not FL.binlogged({"binlog_do_db": "other"}, "rc.r")


def test_replica_side_filters_keep_the_engine_and_move_the_gtid_position(kit):
    tr = kit.run("model:wl344", "flt-replicate-rules")
    assert tr.first("data", node="B")["counts"] == {"t1": 1}
    assert {o["trx"]: o["reason"] for o in tr.all("filtered", node="B")} == {
        "t2": "replicate_ignore_table", "t3": "skip_replication", "t4": "skip_replication"}
    assert tr.all("server_status", node="B")[-1]["variables"]["gtid_slave_pos"] == "0-1-4"
    assert not tr.all("binlog", node="B", trx="t2")  # nothing of a filtered group in the replica's binlog



@pytest.mark.parametrize("system", ["model:wl7318", "model:mariadb-10.11"])
def test_a_group_filtered_while_a_worker_holds_an_earlier_one_stays_the_gtid_position(kit, system):
    # t1 (DDL, applied) with a worker while the coordinator passes t2 (filtered): t1's commit comes
    # last, and records in commit order, so the position stays at t2's GTID
    ops = [{"at": 0, "op": "trx", "node": "A", "trx": "t1", "ddl": True}, {"at": 0, "op": "trx", "node": "A", "trx": "t2"}]
    b = {"replicate_wild_ignore_table": "rc.r%", "slave_parallel_threads": 4, "replica_parallel_workers": 4}
    history = {"header": {"schema": "replcheck.history/1", "name": "flt-parallel", "sample_every_us": 700_000, "end_us": 3 * US,
                          "topology": {"nodes": [{"id": "A"}, {"id": "B", "variables": b}],
                                       "channels": [{"source": "A", "replica": "B", "latency_us": 1000}]}}, "ops": ops}
    tr = kit.run(system, history)
    assert [(o["kind"], o["trx"]) for o in tr.all("filtered", node="B") + tr.all("visible", node="B")] == [("filtered", "t2"), ("visible", "t1")]
    shown = tr.all("server_status", node="B")
    judged = ("FILTER.GTID.ADVANCES", "MARIADB.GTID.SLAVE_POS")  # the position never goes back to t1's
    assert shown[-1]["variables"]["gtid_slave_pos"] == "0-1-2" and {kit.verdict(r, tr).status for r in judged} == {"pass"}
    for s in shown:
        s["variables"]["gtid_slave_pos"] = "0-1-1"  # t1's commit recorded over t2's
    assert {kit.verdict(r, tr).status for r in judged} == {"violated"}

def test_filter_on_master_sends_nothing_and_filter_on_slave_waits_no_delay(kit):
    # A marked group ignored on the replica is passed at once; one a replicate-* rule filters
    # waits its MASTER_DELAY like any other, then commits nothing.
    h = kit.make_history(["A", {"id": "B", "variables": {"replicate_events_marked_for_skip": "FILTER_ON_SLAVE",
                                                       "replicate_ignore_table": "rc.m"}}],
                         [("A", "B", 5)],
                         [{"at": 1 * US, "op": "trx", "node": "A", "trx": "t1", "skip_replication": True},
                          {"at": 1 * US, "op": "trx", "node": "A", "trx": "t2", "engine": "myisam"}], end_us=10 * US)
    tr = kit.run("model:wl344", h)
    assert tr.first("filtered", node="B", trx="t1")["t"] == 1 * US
    assert tr.first("filtered", node="B", trx="t2")["t"] == 6 * US
    on_master = kit.make_history(["A", {"id": "B", "variables": {"replicate_events_marked_for_skip": "FILTER_ON_MASTER"}}],
                                 [("A", "B", 0)], [{"at": 1 * US, "op": "trx", "node": "A", "trx": "t1", "skip_replication": True},
                                                   {"at": 2 * US, "op": "trx", "node": "A", "trx": "t2"}], end_us=3 * US)
    tr = kit.run("model:wl344", on_master)
    assert not tr.all("relay", node="B", trx="t1") and tr.all("relay", node="B", trx="t2")
    assert not tr.all("filtered", node="B")  # never sent, so never filtered there: its GTID is not in gtid_slave_pos


def test_the_skip_counter_does_not_count_ignored_marked_groups(kit):
    tr = kit.run("model:wl344", "flt-skip-counter")
    assert tr.first("data", node="B")["counts"] == {"t3": 1}
    assert {o["trx"] for o in tr.all("skip", node="B", reason="sql_slave_skip_counter")} == {"t2"}


def test_binlog_ignore_db_commits_without_a_gtid(kit):
    tr = kit.run("model:wl344", "flt-binlog-db")
    assert [c["gtid"] for c in tr.all("commit", node="A")] == [None, None]
    assert not tr.all("binlog", node="A", trx="t1") and not tr.all("relay", node="B", trx="t1")
    assert tr.first("data", node="A")["counts"] == {"t1": 1, "t2": 1}


@pytest.mark.parametrize("system,semisync", [("model:wl344", "unsent"), ("mutant:ack-filtered", "no"), ("model:mariadb-10.11", "no")])
def test_a_transaction_sent_to_no_semi_sync_replica(kit, system, semisync):
    # t2 is marked and B, the only semi-sync replica, filters marked events on the master. The
    # seed models do not wait (S3's fix); the mutant and MariaDB (MDEV-38486) wait for an ack that
    # never comes and time out after 2 s, before t3's ack would have covered t2's position.
    tr = kit.run(system, "flt-semisync-unsent")
    c = tr.first("commit", node="A", trx="t2")
    assert c["semisync"] == semisync and c["skip_replication"] is True and c["table"] == "rc.r"
    assert c["t"] - 1_500_000 == {"unsent": 0, "no": 2_000_000}[semisync]


def test_the_harness_marks_the_session():
    assert trx_statement({"skip_replication": True}, 3, 1).startswith("SET SESSION skip_replication = 1; BEGIN")
    assert "skip_replication" not in trx_statement({}, 3, 1)


def test_marked_events_setting_changes_at_run_time_with_the_slave_stopped(kit):
    # MariaDB rpl_skip_replication.result: refused while the slave runs (ER_SLAVE_MUST_STOP naming
    # the connection), taken once it is stopped; FILTER_ON_MASTER then holds from the next connect.
    # Back to REPLICATE, the next START SLAVE (by GTID: its relay log purged, slave.cc) asks again
    # from gtid_slave_pos, before t1, and t1 now arrives and is applied. A value of no name is refused (1231).
    h = kit.make_history(["A", "B"], [("A", "B", 0)], [
        {"at": 1 * US, "op": "set_global", "node": "B", "variable": "replicate_events_marked_for_skip", "value": "FILTER_ON_SLAVE"},
        {"at": 2 * US, "op": "stop_slave", "node": "B"},
        {"at": 3 * US, "op": "set_global", "node": "B", "variable": "replicate_events_marked_for_skip", "value": "nonsense"},
        {"at": 3 * US + 1, "op": "set_global", "node": "B", "variable": "replicate_events_marked_for_skip", "value": "filter_on_master"},
        {"at": 4 * US, "op": "start_slave", "node": "B"},
        {"at": 5 * US, "op": "trx", "node": "A", "trx": "t1", "skip_replication": True},
        {"at": 6 * US, "op": "stop_slave", "node": "B"},
        {"at": 7 * US, "op": "set_global", "node": "B", "variable": "replicate_events_marked_for_skip", "value": 0},
        {"at": 8 * US, "op": "start_slave", "node": "B"},
        {"at": 9 * US, "op": "trx", "node": "A", "trx": "t2", "skip_replication": True}], end_us=10 * US)
    tr = kit.run("model:mariadb-10.11", h)
    answers = [(s["errno"], s["message"]) for s in tr.all("stmt", node="B", op="set_global")]
    assert answers == [(1198, "This operation cannot be performed as you have a running slave ''; run STOP SLAVE '' first"),
                       (1231, "Variable 'replicate_events_marked_for_skip' can't be set to the value of 'nonsense'"),
                       (None, ""), (None, "")]
    assert [r["t"] for r in tr.all("relay", node="B", trx="t1") if r["t"] < 8 * US] == []
    assert tr.first("visible", node="B", trx="t1")["t"] >= 8 * US and tr.first("visible", node="B", trx="t2")
    for name in ("FILTER.MASTER.NOT_SENT", "FILTER.REPLICA.NOT_APPLIED"):
        assert kit.verdict(name, tr).status == "pass", name
    # the same relay event of t1, had it arrived while B filtered on the master, is a violation
    t2 = tr.first("relay", node="B", trx="t2")
    tr.insert_before(tr.first("stmt", node="B", op="stop_slave", t=6 * US), dict(t2, trx="t1", t=5 * US))
    assert kit.verdict("FILTER.MASTER.NOT_SENT", tr).status == "violated"
