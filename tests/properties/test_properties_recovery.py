"""Every crash-recovery property passes on an honest trace and catches a realistic fault: a group
played twice after a crash between binlog write and engine commit (the design's own hazard, with
the halt rule off or worded as "lower"), an ID lost by recovery, a group missing on a running
slave. Exactly-once is judged on `data` observations (what a real server shows) and, without them,
on the engine commits of the trace."""
from __future__ import annotations

from conftest import assert_witness
from test_properties_incident import Case, pick

from replcheck.properties.core import PASS, PROPERTIES

M = "model:groupid"
CRASH = "gg-crash-binlog-commit"


def model(history: str):
    return lambda k: k.run(M, history)


def replay_without_halt(k):
    return pick(k.run("mutant:no-halt-on-lower-id", CRASH), "data", node="B")


def replay_past_strict_rule(k):
    # The rule as the design words it lets the replay (same ID, not lower) through.
    tr = k.run("mutant:halt-strictly-lower", CRASH)
    return tr, tr.all("apply", node="B", trx="t3", idx=0)[1]


CASES: dict[str, Case] = {
    "GGID.RECOVERY.EXACTLY_ONCE": Case(model(CRASH), replay_without_halt, "B holds t3 2 times"),
    "GGID.RECOVERY.HALT": Case(model(CRASH), replay_past_strict_rule, "B played group 3 (t3) after 3 was in its binlog"),
    "GGID.RECOVERY.LAST_ID": Case(
        model("gg-dirty-fde"), lambda k: pick(k.run("mutant:recovery-ignores-index", "gg-dirty-fde"), "restart", node="A", t=3_000_000),
        "A restarted with group ID 0, its binlog ends at 2"),
}


def test_every_recovery_property_has_a_case():
    assert set(CASES) == {p.requirement for p in PROPERTIES if p.feature == "recovery"}


def test_exactly_once_without_data_counts_engine_commits(kit):
    # An older trace with no `data` lines: the engine commits (`visible`) are counted instead.
    for system, status in ((M, PASS), ("mutant:no-halt-on-lower-id", "violated")):
        tr = kit.run(system, CRASH)
        for o in tr.all("data"):
            tr.drop(o)
        v = kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr)
        assert v.status == status and v.checked > 0, v


def test_exactly_once_catches_a_lost_group(kit):
    # B replicates from A at the end, but its data lacks t5: lost, not merely late.
    tr = kit.run(M, CRASH)
    data = tr.first("data", node="B")
    del data["counts"]["t5"]
    assert_witness(kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr), tr, data, "B replicates from A but lacks t5")


def test_halted_slave_lags_without_diverging(kit):
    # gg-crash-engine-rli: C stops with 1643 and misses t3, t4: allowed; B, whose InnoDB state
    # overrode relay-log.info, has everything once.
    tr = kit.run(M, "gg-crash-engine-rli")
    assert tr.first("sql_stop", node="C", errno=1643)["message"] == \
        "Slave SQL thread encountered ev->group_id==2 < last processed ID==2. Stopping replication."
    assert tr.first("data", node="C")["counts"] == {"t1": 1, "t2": 1}
    assert tr.first("data", node="B")["counts"] == {"t1": 1, "t2": 1, "t3": 1, "t4": 1}
    v = kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr)
    assert v.status == PASS and v.checked > 0, v


def test_halt_message_must_name_the_last_id(kit):
    tr = kit.run(M, CRASH)
    stop = tr.first("sql_stop", node="B", errno=1643)
    stop["message"] = "Slave SQL thread encountered ev->group_id==3 < last processed ID==2. Stopping replication."
    assert_witness(kit.verdict("GGID.RECOVERY.HALT", tr), tr, stop, "B stopped with 1643")


def test_groups_before_a_place_the_dba_chose_are_not_owed(kit):
    # rpl_gtid_deleted_binlog_fail_to_connect (suite scenario my80-...): ins1 is only in a purged
    # binlog; the slave, pointed at the start of the remaining one, holds ins2 only, as the test
    # asserts; what follows the place it was pointed at it still owes.
    US = 1_000_000

    def o(t, kind, node, **kw):
        return {"at": int(t * US), "op": kind, "node": node, **kw}
    ops = [o(0.1, "trx", "A", trx="create_t1", ddl=True), o(1, "stop_slave", "B"), o(2, "trx", "A", trx="ins1"),
           o(2.1, "flush_logs", "A"), o(2.2, "trx", "A", trx="ins2"), o(2.3, "purge_binary_logs", "A", to="bin.000002"),
           o(3, "change_master", "B", master_log_file="bin.000002", master_log_pos=4), o(3, "start_slave", "B")]
    h = kit.make_history(["A", "B"], [{"source": "A", "replica": "B", "latency_us": 1000}], ops, end_us=5 * US)
    tr = kit.run("model:wl7318", h)
    assert tr.all("data", node="B")[-1]["counts"] == {"create_t1": 1, "ins2": 1}
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status == PASS
    # a slave that lost ins2, after the place it was pointed at, still violates it
    tr.all("data", node="B")[-1]["counts"]["ins2"] = 0
    v = kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr)
    assert v.status != PASS and "lacks ins2" in v.witnesses[0].message
