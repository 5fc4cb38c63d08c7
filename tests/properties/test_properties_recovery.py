"""Every crash-recovery property passes on an honest trace and catches a realistic fault: a group
played twice after a crash between binlog write and engine commit (the design's own hazard, with
the halt rule off or worded as "lower"), an ID lost by recovery, a group missing on a running
slave. Exactly-once is judged on `data` observations (what a real server shows) and, without them,
on the engine commits of the trace."""
from __future__ import annotations

import pytest
from conftest import REPO, Trace, assert_witness
from test_properties_incident import Case, pick

from replcheck import io
from replcheck.generate import generate
from replcheck.properties.delay_timing import STATE_WAITING
from replcheck.properties.core import PASS, PROPERTIES
from replcheck.properties.judge import judge
from replcheck.results import caught
from replcheck.systems import get

M = "model:groupid"
CRASH = "gg-crash-binlog-commit"
PROCESS, BEFORE_SYNC, TORN = "dur-process-crash", "dur-machine-crash-before-sync", "dur-torn-write"
STATE_FILE = "mdb-state-file-missing"  # a clean shutdown whose .state file is deleted, then two kill -9 in a row


def model(history: str):
    return lambda k: k.run(M, history)


def replay_without_halt(k):
    return pick(k.run("mutant:no-halt-on-lower-id", CRASH), "data", node="B")


def replay_past_strict_rule(k):
    # The rule as the design words it lets the replay (same ID, not lower) through.
    tr = k.run("mutant:halt-strictly-lower", CRASH)
    return tr, tr.all("apply", node="B", trx="t3", idx=0)[1]


def lose(k, history: str, trx: str):
    # A's data at the end lacks a transaction whose commit returned before the crash.
    tr = k.run(M, history)
    del tr.first("data", node="A")["counts"][trx]
    return tr, tr.first("commit", node="A", trx=trx)


def engine_lacks_binlogged(k):
    # Recovery left w2's group in the binlog but rolled it back in the engine.
    tr = k.run(M, PROCESS)
    tr.drop(tr.first("visible", node="A", trx="w2"))
    return tr, tr.first("recovery", node="A")


def torn_tail_kept(k):
    # Recovery did not cut the torn event away.
    tr = k.run(M, TORN)
    rec = tr.first("recovery", node="A")
    rec["truncated"] = None
    return tr, rec


CASES: dict[str, Case] = {
    "GGID.RECOVERY.EXACTLY_ONCE": Case(model(CRASH), replay_without_halt, "B holds t3 2 times"),
    "GGID.RECOVERY.HALT": Case(model(CRASH), replay_past_strict_rule, "B played group 3 (t3) after 3 was in its binlog"),
    "GGID.RECOVERY.LAST_ID": Case(
        model("gg-dirty-fde"), lambda k: pick(k.run("mutant:recovery-ignores-index", "gg-dirty-fde"), "restart", node="A", t=3_000_000),
        "A restarted with group ID 0, its binlog ends at 2"),
    # binlog durability and crash kinds
    "DURABLE.PROCESS_CRASH.NO_LOSS": Case(model(PROCESS), lambda k: lose(k, PROCESS, "w1"), "A lost w1, whose commit returned before a process crash"),
    "DURABLE.MACHINE_CRASH.NO_LOSS": Case(model(BEFORE_SYNC), lambda k: lose(k, BEFORE_SYNC, "w1"), "A lost w1, whose commit returned before a machine crash"),
    "DURABLE.RECOVERY.AGREE": Case(model(TORN), engine_lacks_binlogged, "A recovered with w2 in its binlog, not its engine"),
    "DURABLE.RECOVERY.NO_TORN": Case(model(TORN), torn_tail_kept, "A recovered with a torn event or a partial group at the end of bin.000001"),
    "DURABLE.GTID.NO_REUSE": Case(
        model(PROCESS), lambda k: pick(k.run("mutant:gtid-state-lags-binlog", PROCESS), "binlog", node="A", trx="w3", idx=0),
        "A issued 0-1-1 again for w3 (first for w1)"),
    # GTID state durability: MDEV-6391's empty state after a clean shutdown without the .state file
    "DURABLE.GTID.STATE_AT_START": Case(
        lambda k: k.run("model:mariadb-10.11", STATE_FILE),
        lambda k: pick(k.run("mutant:state-file-missing-empty", STATE_FILE), "observed", node="A", t=5_000_000),
        "A started (a clean start without its state file) with gtid_binlog_pos '', its binlogs end with '0-1-2'"),
    "DURABLE.SEND.SYNCED": Case(
        model(BEFORE_SYNC), lambda k: pick(k.run("mutant:send-before-sync", BEFORE_SYNC), "relay", node="B", trx="w2"),
        "B relayed w2 up to bin.000001:319 while A had synced only up to bin.000001:277"),
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


def test_a_replica_still_waiting_out_its_delay_at_the_end_lags_without_diverging(kit):
    # A real server's Trace (corpus/server): B waits for t4 (its timestamp set in the future) past the
    # History's end; its last SHOW SLAVE STATUS says so. Had it shown itself idle, t4 would be lost.
    tr = Trace(*io.load_trace(REPO / "corpus" / "server" / "delayed-replica-waits-past-the-end.trace.jsonl"))
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status == PASS
    last = tr.all("status", node="B")[-1]
    assert (last["Slave_SQL_Running_State"], last["SQL_Remaining_Delay"]) == (STATE_WAITING, 8)
    last.update(Slave_SQL_Running_State="Slave has read all relay log; waiting for more updates", SQL_Remaining_Delay=None)
    assert_witness(kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr), tr, tr.first("data", node="B"), "B replicates from A but lacks t4")


def test_a_new_sources_own_group_before_the_replicas_gtid_is_not_owed(kit):
    # A real server's Trace (corpus/server): C, a replica of A, wrote its own t3 (0-3-1) before A's
    # t5 (0-1-1) reached it; after the failover B connected to C at 0-1-1, and C's dump skipped the
    # domain's groups until 0-1-1, t3 among them (send_event_to_slave).
    tr = Trace(*io.load_trace(REPO / "corpus" / "server" / "own-group-before-the-new-source-start.trace.jsonl"))
    assert tr.first("data", node="B")["counts"]["t3"] == 0
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status == PASS
    connects = [o for o in tr.all("log", node="B") if "replication starts at GTID position '0-1-1'" in o["message"]]
    assert connects and all(tr.index(o) > tr.index(tr.first("promoted", node="C")) for o in connects)
    # a model's `connect` says the same
    for o in connects:
        t = o["t"]
        o.clear()
        o.update(t=t, kind="connect", node="B", source="C", by="gtid", gtid_pos="0-1-1", errno=None)
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status == PASS
    # had B asked with no GTID of the domain, C would have sent t3 from the start of its binlog: lost
    connects[0]["gtid_pos"] = ""
    assert_witness(kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr), tr, tr.first("data", node="B"), "B replicates from C but lacks t3")


def test_a_connect_at_a_gtid_the_new_source_has_not_written_owes_nothing_before_it(kit):
    # where the dump starts lies past the source's binlog then: compared by binlog number and place
    # (the number as a number: an internal error before), t3 lies before it as at 0-1-1
    tr = Trace(*io.load_trace(REPO / "corpus" / "server" / "own-group-before-the-new-source-start.trace.jsonl"))
    for o in [o for o in tr.all("log", node="B") if "replication starts at GTID position '0-1-1'" in o["message"]]:
        t = o["t"]
        o.clear()
        o.update(t=t, kind="connect", node="B", source="C", by="gtid", gtid_pos="0-1-99", errno=None)
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status == PASS


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


@pytest.mark.parametrize("index,family,mutant", [
    (45, "groupid", "mutant:send-before-sync"),  # the groupid family's crash before a sync, with sync_binlog = 1 (12 until generator 14)
    # a kill -9 of the source after commits (History 132 until generator 12's set_delays moved the delay family's draws)
    (2, "delay", "mutant:gtid-state-lags-binlog"),
    (11, "groupid", "mutant:state-file-missing-empty"),  # a clean restart without the .state file (G7; 9 until generator 14)
])
def test_generated_histories_catch_each_durability_mutant(index, family, mutant):
    # generator 14, seed 0, its family's History: caught by a requirement it must be killed by, where its
    # base model holds
    system = get(mutant)
    history = generate(0, index, (family,))
    j = judge(system, history, system.declares.kills)
    assert caught(j, judge(get(system.declares.base), history, system.declares.kills)), j.violations


def test_a_machine_crash_without_sync_loses_the_unsynced_tail_and_may_reuse_its_gtids(kit):
    # sync_binlog = 0: what the OS had not written back is gone from the binlog with a machine
    # crash, while InnoDB (flushed at each commit) keeps w1 and w2: engine and binlog disagree,
    # which these settings do not promise against (not judged), and the GTIDs may be issued again.
    h = kit.history(PROCESS)
    h["ops"][2]["kind"] = "machine"
    tr = kit.run(M, h)
    rec = tr.first("recovery", node="A")
    assert rec["truncated"] == {"file": "bin.000001", "pos": tr.first("binlog", node="A", trx="w1", idx=0)["pos"]}
    assert tr.first("data", node="A")["counts"] == {"w1": 1, "w2": 1, "w3": 1, "w4": 1}
    assert tr.first("binlog", node="A", trx="w3", idx=0)["gtid"] == "0-1-1"
    for r in ("DURABLE.MACHINE_CRASH.NO_LOSS", "DURABLE.RECOVERY.AGREE"):
        assert kit.verdict(r, tr).status == "not_exercised", r
    assert kit.verdict("DURABLE.GTID.NO_REUSE", tr).status == PASS


def test_innodb_flush_log_0_loses_the_last_second_in_a_process_crash(kit):
    h = kit.history(PROCESS)
    h["header"]["topology"]["nodes"][0]["variables"]["innodb_flush_log_at_trx_commit"] = 0
    h["ops"][2]["at"] = 2_500_000  # half a second after w2's commit
    tr = kit.run(M, h)
    assert tr.first("recovery", node="A")["engine_lost"] == ["w2"]  # w1 was a second older
    assert kit.verdict("DURABLE.PROCESS_CRASH.NO_LOSS", tr).status == "not_exercised"


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


def test_gtid_state_at_start_after_each_kind_of_start(kit):
    # MariaDB rebuilds the state from the last binlog when the .state file is gone, and after two
    # kill -9 in a row; the next commits get new sequence numbers
    tr = kit.run("model:mariadb-10.11", STATE_FILE)
    assert tr.first("state_file", node="A")["removed"] is True
    assert [o["value"]["gtid_binlog_pos"] for o in tr.all("observed", node="A")] == ["0-1-2", "0-1-3"]
    assert [tr.first("binlog", node="A", trx=t, idx=0)["gtid"] for t in ("w3", "w4")] == ["0-1-3", "0-1-4"]
    v = kit.verdict("DURABLE.GTID.STATE_AT_START", tr)
    assert v.status == PASS and v.conditions == ("a clean start without its state file", "a start after two crashes in a row"), v
    # the mutant starts empty and issues 0-1-1 again
    bad = kit.run("mutant:state-file-missing-empty", STATE_FILE)
    assert bad.first("binlog", node="A", trx="w3", idx=0)["gtid"] == "0-1-1"
    assert kit.verdict("DURABLE.GTID.NO_REUSE", bad).status == "violated"


def test_a_server_without_a_state_file_loses_nothing_when_it_is_deleted(kit):
    # MySQL keeps no .state file: gtid_executed comes from the binlogs at every start
    tr = kit.run("model:wl7318", STATE_FILE)
    assert tr.first("state_file", node="A")["removed"] is False
    assert kit.verdict("DURABLE.GTID.STATE_AT_START", tr).status == PASS
    # a MariaDB server that is up has none either: its start deleted it
    h = kit.history(STATE_FILE)
    h["ops"] = [o for o in h["ops"] if o["op"] != "shutdown"]
    assert kit.run("model:mariadb-10.11", h).first("state_file", node="A")["removed"] is False
