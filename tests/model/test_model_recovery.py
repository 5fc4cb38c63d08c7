"""Crash points and crash recovery (model/recovery.py, in the simulator): what each crash point
leaves durable, the last group ID found again at start (dirty binlog, FDE-only binlog, repeated
crashes during start-up), InnoDB's position overriding relay-log.info, and the halt on a group
whose ID is not above the binlog's last."""
from __future__ import annotations

from replcheck.model import recovery as R
from replcheck.spec import formats as F

M = "model:groupid"
US = 1_000_000


def test_recovered_group_id():
    assert R.recovered_group_id(7, [0, 8, 9]) == 9  # normal case: the last group in the dirty binlog
    assert R.recovered_group_id(7, []) == 7  # only an FDE: the file's index entry
    assert R.recovered_group_id(7, [], ignore_index=True) == 0  # the bug the mutant re-creates
    entries = F.parse_index(b"./bin.000001|5|\n./bin.000002|9|\n")
    assert R.startup_group_id(entries, dirty=False, last_file_group_ids=[]) == 9  # clean: the index
    assert R.startup_group_id(entries, dirty=True, last_file_group_ids=[10, 11]) == 11


def test_sql_restart_position():
    assert R.sql_restart_position(3, 5, True) == 5  # InnoDB's state overrides relay-log.info
    assert R.sql_restart_position(3, 5, False) == 3
    assert R.sql_restart_position(3, None, True) == 3


def test_crash_points_are_the_designs():
    assert R.COMMIT_POINTS == ("before_binlog_write", "after_binlog_write", "after_engine_commit")
    assert set(R.CRASH_POINTS) == set(R.COMMIT_POINTS) | {"recovery_before_new_binlog", "recovery_after_new_binlog"}


def started_with(tr, node):
    """Group_ID SHOW MASTER STATUS showed right after each start-up recovery."""
    out = []
    for r in tr.all("restart", node=node):
        status = [o for o in tr.obs[tr.index(r):] if o["kind"] == "master_status" and o["node"] == node]
        out.append((r["t"], status[0]["Group_ID"]))
    return out


def test_dirty_fde_only_binlog_and_repeated_crashes(kit):
    tr = kit.run(M, "gg-dirty-fde")
    # 3 s: FDE-only dirty binlog -> index entry (2). 6 s: crash during recovery before the new
    # binlog (no status), 6.5 s: the same ID again. 9 s: crash right after the new binlog, 9.5 s:
    # that FDE-only binlog's index entry.
    assert [(t, g) for t, g in started_with(tr, "A") if t in (3 * US, 6_500_000, 9_500_000)] == \
        [(3 * US, 2), (6_500_000, 3), (9_500_000, 4)]
    assert len(tr.all("crash", node="A")) == 5
    ids = [(o["trx"], o["group_id"]) for o in tr.all("binlog", node="A") if o["trx"] and o["idx"] == 0]
    assert ids == [("t1", 1), ("t2", 2), ("t3", 3), ("t4", 4), ("t5", 5)]
    broken = kit.run("mutant:recovery-ignores-index", "gg-dirty-fde")
    assert [(o["trx"], o["group_id"]) for o in broken.all("binlog", node="A") if o["trx"] and o["idx"] == 0][2] == ("t3", 1)


def test_client_commit_crash_points(kit):
    tr = kit.run(M, "rec-crash-points")
    # Before the binlog write: nothing durable, the ID is not consumed.
    assert tr.first("commit", node="A", trx="t1")["errno"] == 2013 and tr.all("binlog", trx="t1") == []
    assert tr.first("commit", node="A", trx="t2")["group_id"] == 1
    # After it: the client sees an error, recovery commits the group, the slave gets it.
    assert tr.first("commit", node="A", trx="t3")["errno"] == 2013
    assert tr.first("visible", node="A", trx="t3")["t"] == 5 * US
    assert tr.first("commit", node="A", trx="t4")["group_id"] == 3
    # A slave crashing before its binlog write rolls the group back and plays it once more.
    assert tr.first("rollback", node="B", trx="t5")["reason"] == "crash"
    assert {n: tr.first("data", node=n)["counts"] for n in "AB"} == dict.fromkeys("AB", {f"t{i}": 1 for i in range(2, 7)})


def test_the_designs_hazard_and_its_halt(kit):
    tr = kit.run(M, "gg-crash-binlog-commit")
    # B crashed between binlog write and engine commit of t3: recovery committed it ...
    assert tr.first("visible", node="B", trx="t3")["t"] == 6 * US
    # ... and the SQL thread, back at t3 by relay-log.info, halts instead of playing it again.
    stop = tr.first("sql_stop", node="B", errno=1643)
    assert stop["message"] == "Slave SQL thread encountered ev->group_id==3 < last processed ID==3. Stopping replication."
    # CHANGE MASTER to what SHOW BINLOG INFO FOR 3 gave resumes with t4: nothing lost or twice.
    info = tr.first("stmt", node="A", op="show_binlog_info", group_id=3)
    cm = tr.first("stmt", node="B", op="change_master")
    assert (cm["master_log_file"], cm["master_log_pos"]) == (info["Log_name"], info["Pos"])
    assert tr.first("data", node="B")["counts"] == {f"t{i}": 1 for i in range(1, 6)}
    # Without the halt, or with the rule worded "lower", t3 is played twice.
    for mutant in ("mutant:no-halt-on-lower-id", "mutant:halt-strictly-lower"):
        assert kit.run(mutant, "gg-crash-binlog-commit").first("data", node="B")["counts"]["t3"] == 2


def test_engine_state_overrides_relay_log_info(kit):
    tr = kit.run(M, "gg-crash-engine-rli")
    # Both crashed after the engine commit of t2; relay-log.info still points before t2.
    assert [o["t"] for o in tr.all("crash")] == [3_001_000, 3_001_000]
    assert tr.all("sql_stop", node="B", errno=1643) == []
    assert tr.first("sql_stop", node="C", errno=1643)
    assert [o["trx"] for o in tr.all("visible", node="B")] == ["t1", "t2", "t3", "t4"]


# -- a semi-sync primary restarted as a replica (#16 mechanism 3, MDEV-21117) ---------------------
def test_in_doubt_cut_follows_the_last_committed_group():
    D, C = R.IN_DOUBT, R.COMMITTED
    assert R.in_doubt_cut([C, C]) is None  # nothing in doubt: nothing cut
    assert R.in_doubt_cut([C, D, D]) == 1  # from the first in doubt
    assert R.in_doubt_cut([D, C, D]) == 2  # log.cc's [g1, G2, g3]: G2 resets the candidate, g1 is committed
    assert R.in_doubt_cut([C, D, None, D]) == 1  # a group with no XID neither sets nor resets it


def test_replica_role_truncates_what_a_master_role_commits(kit):
    # rpl_semi_sync_fail_over case 3: t2 waited for an ack B never sent when A crashed.
    h = kit.history("ss-recover-as-replica")
    tr = kit.run("model:mariadb-10.11", h)
    rec = tr.first("recovery", node="A")
    assert rec["init_rpl_role"] == "SLAVE" and rec["rolled_back"] == ["t2"] and rec["committed"] == []
    assert rec["truncated"] == {"file": "bin.000001", "pos": tr.first("binlog", node="A", trx="t2", idx=0)["pos"]}
    assert tr.first("stmt", node="A", op="set_global", variable="gtid_slave_pos")["value"] == "0-1-1"
    assert tr.first("data", node="A")["counts"] == {"t1": 1}
    next(o for o in h["ops"] if o["op"] == "restart").pop("init_rpl_role")  # as a primary: recovery commits t2 (errant)
    rec = kit.run("model:mariadb-10.11", h).first("recovery", node="A")
    assert rec["committed"] == ["t2"] and rec["truncated"] is None and "init_rpl_role" not in rec


def test_a_truncated_transaction_comes_back_from_the_new_primary(kit):
    # rpl_semi_sync_fail_over case 1: B had t2 (its ack was lost); A truncates it and gets it back once.
    tr = kit.run("model:mariadb-10.11", "ss-recover-acked-returns")
    assert tr.first("recovery", node="A")["rolled_back"] == ["t2"]
    assert tr.first("data", node="A")["counts"] == {"t1": 1, "t2": 1}


def test_relay_log_recovery_fetches_from_the_applier_position_without_gtids(kit):
    # relay_log_recovery throws the relay log away and starts the receiver at relay-log.info's
    # executed position (MySQL recover_relay_log, MariaDB init_recovery): nothing applied comes again.
    # The model used to fetch from the first binlog, which its skip of executed transactions hid.
    h = kit.make_history([{"id": "A", "gtid_mode": False}, {"id": "B", "gtid_mode": False}],
                         [{"source": "A", "replica": "B", "latency_us": 0}], [
        {"at": US, "op": "trx", "node": "A", "trx": "t1", "statements": [{"duration_us": 1000}]},
        {"at": US + 10_000, "op": "trx", "node": "A", "trx": "t2", "statements": [{"duration_us": 1000}]},
        {"at": 3 * US, "op": "crash", "node": "B"},
        {"at": 4 * US, "op": "restart", "node": "B", "relay_log_recovery": True},
        {"at": 5 * US, "op": "trx", "node": "A", "trx": "t3", "statements": [{"duration_us": 1000}]}], end_us=6 * US)
    for system in ("model:mysql-8.0", "model:mariadb-10.11"):
        tr = kit.run(system, h)
        info = tr.first("relay_log_info", node="B", t=4 * US)["content"].split("\n")
        connect = tr.all("connect", node="B")[-1]
        assert (connect["t"], connect["master_log_file"], connect["master_log_pos"]) == (4 * US, info[3], int(info[4]))
        assert int(info[4]) == tr.first("binlog", node="A", trx="t2", type="XID_EVENT")["end"]
        assert [o["trx"] for o in tr.all("relay", node="B") if o["t"] >= 4 * US and o.get("last")] == ["t3"]
        assert not tr.all("skip", node="B") and [o["trx"] for o in tr.all("visible", node="B")] == ["t1", "t2", "t3"]
