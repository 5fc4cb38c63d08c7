"""Every filter property passes on an honest trace and catches a realistic fault: a binlog-ignore-db
transaction binlogged anyway, a marked event sent to a FILTER_ON_MASTER replica, a filtered
transaction committed on the replica, gtid_slave_pos left behind a filtered group, a semi-sync
master waiting for an ack of a transaction it never sends (S3), the skip counter counting an
ignored marked event."""
from __future__ import annotations

import pytest
from conftest import Trace, assert_witness
from test_properties_incident import Case, pick

from replcheck.properties.core import PASS, PROPERTIES

RULES, UNSENT, SKIP, BINLOG_DB = "flt-replicate-rules", "flt-semisync-unsent", "flt-skip-counter", "flt-binlog-db"
M = "model:wl344"


def model(history):
    return lambda k: k.run(M, history)


def binlogged_anyway(k):
    tr = k.run(M, BINLOG_DB)
    c = tr.first("commit", node="A", trx="t1")
    fake = {"t": c["t"], "kind": "binlog", "node": "A", "type": "XID_EVENT", "trx": "t1", "idx": 2, "last": True,
            "gtid": "0-1-1", "file": "bin.000001", "pos": 200, "end": 231}
    tr.insert_before(c, fake)
    return tr, c


def marked_event_sent(k):
    tr = k.run(M, UNSENT)
    b = tr.first("binlog", node="A", trx="t2", idx=0)
    relay = {**b, "kind": "relay", "node": "B", "source": "A", "file": "relay.000001", "master_file": b["file"], "master_end": b["end"]}
    tr.obs.insert(tr.index(b) + 1, relay)
    return tr, b


def filtered_committed(k):
    tr = k.run(M, RULES)
    f = tr.first("filtered", node="B", trx="t2")
    v = tr.insert_before(f, {"t": f["t"], "kind": "visible", "node": "B", "trx": "t2", "gtid": f["gtid"]})
    return tr, v


def slave_pos_left_behind(k):
    tr = k.run(M, RULES)
    f = tr.first("filtered", node="B", trx="t4")
    for s in tr.all("server_status", node="B"):
        if tr.index(s) > tr.index(f):
            s["variables"]["gtid_slave_pos"] = "0-1-1"
    return tr, f


def counter_counts_marked(k):
    tr = k.run(M, SKIP)
    s = tr.first("skip", node="B", trx="t1", idx=0)
    s["reason"] = "sql_slave_skip_counter"
    return tr, s


CASES: dict[str, Case] = {
    "FILTER.BINLOG.DB": Case(model(BINLOG_DB), binlogged_anyway, "A binlogged t1 on rc.r"),
    "FILTER.MASTER.NOT_SENT": Case(model(UNSENT), marked_event_sent,
                                   "A sent event 0 of marked t2 to B, which filters marked events on the master"),
    "FILTER.REPLICA.NOT_APPLIED": Case(model(RULES), filtered_committed, "B committed t2 on rc.m, which its filters exclude"),
    "FILTER.GTID.ADVANCES": Case(model(RULES), slave_pos_left_behind, "B filtered t4 (0-1-4), then showed gtid_slave_pos '0-1-1'"),
    "FILTER.SEMISYNC.UNSENT": Case(
        model(UNSENT), lambda k: pick(k.run("mutant:ack-filtered", UNSENT), "commit", node="A", trx="t2"),
        "A held the commit of t2, sent to no semi-sync replica, 2 s until the semi-sync timeout"),
    "FILTER.SKIP_COUNTER": Case(model(SKIP), counter_counts_marked,
                                "B's sql_slave_skip_counter counted event 0 of marked t1, which it ignores anyway"),
}


def test_every_filter_property_has_a_case():
    assert set(CASES) == {p.requirement for p in PROPERTIES if p.feature == "filter"}


@pytest.mark.parametrize("requirement", sorted(CASES))
def test_passes_on_the_model(kit, requirement):
    verdict = kit.verdict(requirement, CASES[requirement].passing(kit))
    assert verdict.status == PASS and verdict.checked, verdict


@pytest.mark.parametrize("requirement", sorted(CASES))
def test_catches_the_fault(kit, requirement):
    case = CASES[requirement]
    tr, target = case.violating(kit)
    assert_witness(kit.verdict(requirement, tr), tr, target, case.expect)


def test_mariadb_waits_for_the_unsent_transaction_as_declared(kit):
    # MDEV-38486: the reference model of MariaDB 10.11 waits out the timeout, semi-sync goes OFF;
    # the semi-sync properties take that wait as any other (no finding there).
    tr = kit.run("model:mariadb-10.11", UNSENT)
    assert tr.first("commit", node="A", trx="t2")["semisync"] == "no"
    assert any("Timeout waiting for reply" in o["message"] for o in tr.all("log", node="A"))
    assert kit.verdict("WL1720.ACK.WAIT", tr).status == PASS
    honest = kit.run(M, UNSENT)
    assert honest.first("commit", node="A", trx="t2")["semisync"] == "unsent"
    assert all(kit.verdict(r, honest).status != "violated" for r in ("WL1720.ACK.WAIT", "WL1720.COUNT.TX", "WL1720.LIVE.RELEASE"))


def test_a_real_trace_may_show_a_filtered_group_in_gtid_slave_pos(kit):
    # A polled server's trace cannot show the SQL thread filtering (runner UNOBSERVED): B's
    # gtid_slave_pos names t4's GTID (measured on 10.11: flt-replicate-rules), which only the
    # filter explains. Without that blind spot the same trace lacks its `filtered` lines: a violation.
    tr = kit.run(M, RULES)
    for f in tr.all("filtered"):
        tr.drop(f)
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == "violated"
    tr.header["unobserved"] = ["filtered"]
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS


def test_a_rule_set_at_run_time_or_by_a_restart_is_the_replicas_from_then_on(kit):
    # B takes replicate_ignore_table = rc.m by SET GLOBAL (its threads stopped), then a restart with
    # replicate_do_db = other: t1 (rc.m) and t2 (rc.r) are kept out, t0 (before both) applied.
    ops = [{"at": 0, "op": "trx", "node": "A", "trx": "t0", "engine": "myisam"},
           {"at": 500_000, "op": "stop_slave", "node": "B"},
           {"at": 500_000, "op": "set_global", "node": "B", "variable": "replicate_ignore_table", "value": "rc.m"},
           {"at": 500_000, "op": "start_slave", "node": "B"},
           {"at": 1_000_000, "op": "trx", "node": "A", "trx": "t1", "engine": "myisam"},
           {"at": 1_500_000, "op": "shutdown", "node": "B"},
           {"at": 2_000_000, "op": "restart", "node": "B", "variables": {"replicate_do_db": "other"}},
           {"at": 2_500_000, "op": "trx", "node": "A", "trx": "t2"}]
    nodes = [{"id": "A"}, {"id": "B", "variables": {"replicate_events_marked_for_skip": "REPLICATE"}}]
    h = kit.make_history(nodes, [{"source": "A", "replica": "B", "latency_us": 1000}], ops, sample_every_us=500_000, end_us=4_000_000)
    tr = kit.run("model:mariadb-10.11", h)
    assert [o["trx"] for o in tr.all("visible", node="B")] == ["t0"]
    assert kit.verdict("FILTER.REPLICA.NOT_APPLIED", tr).status == PASS
    for trx in ("t1", "t2"):  # B committing either is what its rules in force then exclude
        bad = Trace(tr.header, [dict(o) for o in tr.obs])
        f = bad.first("filtered", node="B", trx=trx)
        f["kind"] = "visible"
        assert_witness(kit.verdict("FILTER.REPLICA.NOT_APPLIED", bad), bad, f, f"B committed {trx}")


def test_a_marked_commit_that_waited_for_want_of_any_semi_sync_replica_is_not_the_filters(kit):
    # A rotating campaign's seed 658843, History 3: A's marked t1 was written at 0 s, when no replica
    # was semi-sync (wait_no_slave); B restarted semi-sync (filtering on the master) at 1.9 s, and t1
    # returned then. The replicas stood as they were at the binlog write, not at the return.
    from replcheck.generate import generate

    h = generate(658843, 3)
    tr = kit.run("model:wl7318", h)
    assert kit.verdict("FILTER.SEMISYNC.UNSENT", tr).status == PASS
    # B semi-sync from the start: the filter alone left t1 unsent, and its wait is a violation.
    b = next(n for n in h["header"]["topology"]["nodes"] if n["id"] == "B")
    b["variables"]["rpl_semi_sync_slave_enabled"] = True
    tr.header = {**tr.header, "topology": h["header"]["topology"]}
    assert_witness(kit.verdict("FILTER.SEMISYNC.UNSENT", tr), tr, tr.first("commit", node="A", trx="t1"),
                   "A held the commit of t1, sent to no semi-sync replica")
