"""The parallel applier (model/parallel.py) and what the simulator does with it: the settings per
server, SET GLOBAL refused while a slave thread runs, workers running groups at once with commit
order kept per domain (or not, MySQL without replica_preserve_commit_order), the low-water mark in
relay-log.info and Exec_Master_Log_Pos, MTS recovery skipping the gaps after a crash."""
from __future__ import annotations

import pytest
from conftest import REPO, US

from replcheck.io import load_history
from replcheck.model import parallel as PA
from replcheck.properties.core import PASS, VIOLATED


@pytest.mark.parametrize("variables,mariadb,expected", [
    ({}, True, None),
    ({"slave_parallel_threads": 4}, True, PA.Settings(4, "optimistic", True)),
    ({"slave_parallel_threads": 2, "slave_parallel_mode": "CONSERVATIVE"}, True, PA.Settings(2, "conservative", True)),
    ({"slave_parallel_threads": 2, "slave_parallel_mode": "none"}, True, None),
    ({"replica_parallel_workers": 4}, True, None),  # each server reads its own names only
    ({"slave_parallel_threads": 4}, False, None),
    ({"replica_parallel_workers": 4}, False, PA.Settings(4, "logical_clock", True)),
    ({"replica_parallel_workers": 4, "replica_preserve_commit_order": False}, False, PA.Settings(4, "logical_clock", False)),
])
def test_settings(variables, mariadb, expected):
    assert PA.settings(variables, mariadb) == expected


def test_workers_overlap_and_commit_in_order(kit):
    tr = kit.run("model:mariadb-10.11", "par-commit-order")
    p = tr.first("parallel", node="B")
    assert (p["workers"], p["mode"], p["preserve_commit_order"]) == (4, "optimistic", True)
    commits = tr.all("visible", node="B")
    assert [(c["trx"], c["worker"], c["t"]) for c in commits] == [("t1", 1, 4_001_000), ("t2", 2, 4_001_000), ("t3", 3, 4_001_000)]
    assert [c["start"] for c in commits] == [1_001_000, 1_011_000, 1_021_000]  # all three at once
    # Exec_Master_Log_Pos stays at the low-water mark until t1, the oldest, commits
    at_2s = tr.all("status", node="B", t=2 * US)[-1]
    at_5s = tr.all("status", node="B", t=5 * US)[-1]
    assert at_2s["Exec_Master_Log_Pos"] < at_2s["Read_Master_Log_Pos"] == at_5s["Exec_Master_Log_Pos"]
    assert at_2s["Seconds_Behind_Master"] > 0 and at_5s["Seconds_Behind_Master"] == 0


def test_the_serial_applier_stays_the_default(kit):
    tr = kit.run("model:mariadb-10.11", "flt-skip-counter")
    assert not tr.all("parallel") and all("worker" not in o for o in tr.all("visible"))


def test_conservative_mode_and_the_refusal_while_running(kit):
    tr = kit.run("model:mariadb-10.11", "par-delayed-sbm")
    refused, *accepted = [o for o in tr.all("stmt", node="B", op="set_global")]
    assert refused["errno"] == 1198 and all(o["errno"] is None for o in accepted)
    assert tr.first("parallel", node="B")["mode"] == "conservative"
    # the coordinator takes MASTER_DELAY (1 s) before it queues t1; t1's worker runs 4 s
    t1 = tr.first("visible", node="B", trx="t1")
    assert (t1["start"], t1["t"]) == (2 * US, 6 * US)


def test_a_bad_value_is_refused(kit):
    h = kit.make_history(["A", "B"], [("A", "B", 0)], [
        {"at": 1 * US, "op": "stop_slave", "node": "B"},
        {"at": 2 * US, "op": "set_global", "node": "B", "variable": "slave_parallel_mode", "value": "fastest"}], end_us=3 * US)
    assert kit.run("model:mariadb-10.11", h).first("stmt", node="B", op="set_global")["errno"] == 1231


def test_mts_recovery_skips_the_gaps(kit):
    tr = kit.run("model:mysql-8.0", "par-mts-gaps")
    assert [o["trx"] for o in tr.all("visible", node="B")] == ["t2", "t3", "t1"]
    assert tr.first("relay_log_info", node="B")["content"].split("\n")[4] == "124"  # before t1: the low-water mark
    assert {o["trx"] for o in tr.all("skip", node="B", reason="mts_recovery")} == {"t2", "t3"}
    # the crash rolls back what the workers had not committed, and the Trace says so (as for the
    # serial thread's group); the gaps t2 and t3 committed before it are not rolled back
    assert [(o["trx"], o["t"]) for o in tr.all("rollback", node="B")] == [("t1", tr.first("crash", node="B")["t"])]
    again = kit.run("mutant:mts-gaps-not-filled", "par-mts-gaps")
    assert [o["trx"] for o in again.all("visible", node="B")] == ["t2", "t3", "t2", "t3", "t1"]


def _with(kit, name: str, gtid: bool = False, **restart) -> dict:
    """A spec History of the MTS gaps, on GTID auto-position or with options on B's restart."""
    h = kit.history(name)
    for n in h["header"]["topology"]["nodes"]:
        n["gtid_mode"] = gtid
    for op in h["ops"]:
        if op["op"] == "restart":
            op.update(restart)
    return h


def test_relay_log_recovery_fills_the_gaps_before_it_throws_the_relay_log_away(kit):
    # MySQL 5.7.13+ (Bug#21507981): init_recovery returns while gaps are counted, and
    # fill_mts_gaps_and_recover runs the coordinator as UNTIL SQL_AFTER_MTS_GAPS through the old relay
    # log (t1 applied, t2 and t3 skipped), then recover_relay_log throws it away and places the
    # receiver at the group position: past t3, nothing fetched twice
    tr = kit.run("model:mysql-8.0", _with(kit, "par-mts-gaps", relay_log_recovery=True))
    assert [o["trx"] for o in tr.all("skip", node="B", reason="mts_recovery")] == ["t2", "t3"]
    recovery = tr.first("relay_log_recovery", node="B")
    assert [(o["kind"], o.get("trx") or o.get("reason")) for o in tr.obs if o.get("node") == "B" and o["t"] == 9 * US
            and o["kind"] in ("visible", "sql_stop", "relay_log_recovery")] == [
        ("visible", "t1"), ("sql_stop", "until"), ("relay_log_recovery", "relay_log_recovery")]
    connect = tr.all("connect", node="B")[-1]
    t3 = tr.first("binlog", node="A", trx="t3", type="XID_EVENT")
    assert (connect["t"], connect["master_log_pos"]) == (9 * US, t3["end"])
    assert not [o for o in tr.all("relay", node="B") if o["t"] > recovery["t"]]
    assert [o["trx"] for o in tr.all("visible", node="B")] == ["t2", "t3", "t1"]
    assert tr.all("status", node="B")[-1]["Slave_SQL_Running"] == "Yes"
    # --skip-slave-start: the startup run still fills the gaps; the threads stay stopped after it
    kept = kit.run("model:mysql-8.0", _with(kit, "par-mts-gaps", relay_log_recovery=True, start_slave=False))
    assert [o["trx"] for o in kept.all("visible", node="B")] == ["t2", "t3", "t1"]
    assert kept.all("status", node="B")[-1]["Slave_SQL_Running"] == "No" and kept.all("connect", node="B")[-1]["t"] < US
    # an IO thread a client starts while the startup run fills the gaps (which the starting server
    # would not yet take) starts again once the relay log is thrown away: t4 is fetched after it
    early = kit.run("model:mysql-8.0", _with(kit, "par-until-mts-gaps", relay_log_recovery=True))
    recovery = early.first("relay_log_recovery", node="B")
    assert [o["t"] for o in early.all("relay", node="B", trx="t4") if o.get("last")][-1] >= recovery["t"]
    assert [o["trx"] for o in early.all("visible", node="B")] == ["t2", "t3", "t1", "t4"]


def test_a_fill_run_without_workers_still_fills_the_gaps(kit):
    # The workers came from SET GLOBAL, lost at the restart: MTS recovery still runs, as
    # slave_start_workers (rpl_replica.cc) starts it with max(n, recovery_parallel_workers) and ends it
    # only once mts_recovery_group_cnt is 0: the startup run applies t1, skips the gaps t2 and t3,
    # stops, and the relay log goes; the receiver fetches again past t3
    h = _with(kit, "par-mts-gaps", relay_log_recovery=True)
    b = h["header"]["topology"]["nodes"][1]
    del b["variables"]["replica_parallel_workers"]
    h["ops"] = [{"at": 0, "op": "stop_slave", "node": "B"},
                {"at": 0, "op": "set_global", "node": "B", "variable": "replica_parallel_workers", "value": 4},
                {"at": 0, "op": "start_slave", "node": "B"}] + h["ops"]
    tr = kit.run("model:mysql-8.0", h)
    assert [o["trx"] for o in tr.all("skip", node="B", reason="mts_recovery")] == ["t2", "t3"]
    assert tr.first("sql_stop", node="B", reason="until")["t"] == tr.first("relay_log_recovery", node="B")["t"] == 9 * US
    assert [o["trx"] for o in tr.all("visible", node="B")] == ["t2", "t3", "t1"]


@pytest.mark.parametrize("system", ["model:mysql-8.0", "model:wl7318", "model:groupid"])
def test_a_start_without_workers_goes_through_the_gaps(kit, system):
    # B restarts with replica_parallel_workers=0 after the crash that left the gaps t2 and t3: the
    # recovery runs all the same (slave_start_workers, rpl_replica.cc: no mts_finalize_recovery while
    # mts_recovery_group_cnt is set), so UNTIL SQL_AFTER_MTS_GAPS applies t1 and skips the gaps before
    # it stops, and t4 waits for the next start
    h = _with(kit, "par-until-mts-gaps", variables={"replica_parallel_workers": 0})
    tr = kit.run(system, h)
    assert tr.all("parallel", node="B")[-1]["workers"] == 0
    assert [o["trx"] for o in tr.all("skip", node="B", reason="mts_recovery")] == ["t2", "t3"]
    stop = tr.first("sql_stop", node="B", reason="until")
    assert stop["t"] == tr.first("visible", node="B", trx="t1")["t"] == 9_500_000
    assert [o["trx"] for o in tr.all("visible", node="B")] == ["t2", "t3", "t1", "t4"]
    assert kit.verdict("PARALLEL.UNTIL.GAPS", tr).status == PASS
    assert kit.verdict("PARALLEL.RECOVERY.GAPS", tr).status == PASS


def test_mysql_8_0_26_leaves_the_gaps_to_gtid_auto_skip(kit):
    # Under GTID_MODE=ON and SOURCE_AUTO_POSITION=1 MySQL 8.0.26+ computes no gaps (mts_recovery_groups
    # returns at once): START SLAVE UNTIL SQL_AFTER_MTS_GAPS warns 4047 and stops before the first
    # group; the next start skips t2 and t3 as executed GTIDs and applies t1
    tr = kit.run("model:mysql-8.0", _with(kit, "par-until-mts-gaps", gtid=True))
    start = tr.first("stmt", node="B", op="start_slave")
    assert (start["errno"], start["warning"]) == (None, 4047)
    assert start["message"].startswith("The until clause SQL_AFTER_MTS_GAPS is being used for channel '' when GTID_MODE = ON")
    assert tr.first("sql_stop", node="B", reason="until")["t"] == start["t"]
    assert not tr.all("skip", node="B", reason="mts_recovery")
    assert [o["trx"] for o in tr.all("skip", node="B")] == ["t2", "t3"]
    assert [o["trx"] for o in tr.all("visible", node="B")] == ["t2", "t3", "t4", "t1"]
    # MySQL 5.7 computes them also under auto-position: the UNTIL run fills them, no warning
    old = kit.run("model:mysql-5.7", _with(kit, "par-until-mts-gaps", gtid=True))
    assert old.first("stmt", node="B", op="start_slave")["warning"] is None
    assert [o["trx"] for o in old.all("skip", node="B", reason="mts_recovery")] == ["t2", "t3"]


def test_stop_waits_for_the_workers(kit):
    h = kit.make_history(["A", {"id": "B", "variables": {"slave_parallel_threads": 2}}], [("A", "B", 0)], [
        {"at": 1 * US, "op": "trx", "node": "A", "trx": "t1", "statements": [{"duration_us": 1000, "replica_cost_us": 3 * US}]},
        {"at": 2 * US, "op": "stop_slave", "node": "B"}], end_us=5 * US)
    tr = kit.run("model:mariadb-10.11", h)
    assert tr.first("visible", node="B", trx="t1")["t"] == 2 * US
    assert not tr.all("rollback", node="B")


def test_until_lets_the_queued_groups_finish(kit):
    # conservative: t2 cannot start before t1 (2 s of work) reaches its commit; the UNTIL stop at
    # t2's end waits for both (stop_for_until), STOP SLAVE would give t2 up
    tr = kit.run("model:mariadb-10.11", "par-until")
    assert [o["trx"] for o in tr.all("visible", node="B")] == ["t1", "t2"]
    assert tr.first("sql_stop", node="B", reason="until")["t"] == 2 * US
    mutant = kit.run("mutant:until-gives-up-queued", "par-until")
    assert [o["trx"] for o in mutant.all("visible", node="B")] == ["t1"]
    assert mutant.first("rollback", node="B", trx="t2")["reason"] == "until"


def test_an_incident_gives_up_the_groups_no_worker_began(kit):
    # conservative: t2 waits for t1 (1 s of work) to reach its commit; the SQL thread reads the
    # incident meanwhile and stops, and MariaDB's stop (rpl_parallel::wait_for_done) gives t2 up:
    # the place shown is before t2, which is read again at the next start. A real server showed it
    # (WL3464.HOLD, a campaign's Histories 66 and 108); MySQL waits for every queued group.
    workers = {"slave_parallel_threads": 2, "slave_parallel_mode": "conservative", "replica_parallel_workers": 2}
    h = kit.make_history(["A", {"id": "B", "variables": workers}], [("A", "B", 0)], [
        {"at": 0, "op": "trx", "node": "A", "trx": "t1", "statements": [{"duration_us": 1000, "replica_cost_us": US}]},
        {"at": 10_000, "op": "trx", "node": "A", "trx": "t2"},
        {"at": 100_000, "op": "record_incident", "node": "A", "code": 1, "message": "m", "via": "binlog"},
        {"at": 2 * US, "op": "set_global", "node": "B", "variable": "sql_slave_skip_counter", "value": 1},
        {"at": 2 * US, "op": "start_slave", "node": "B", "thread": "sql"}], end_us=4 * US, sample_every_us=250_000)
    tr = kit.run("model:mariadb-10.11", h)
    stop = tr.first("sql_stop", node="B")
    assert stop["errno"] == 1590 and tr.first("rollback", node="B", trx="t2")["reason"] == "error"
    t2 = tr.first("binlog", node="A", trx="t2", type="GTID_LOG_EVENT")
    held = {s["Exec_Master_Log_Pos"] for s in tr.all("status", node="B") if stop["t"] < s["t"] < 2 * US}
    assert held == {t2["pos"]}  # before t2, not before the incident
    # the counter skips t2, read again before the incident: it stops there once more
    assert [v["trx"] for v in tr.all("visible", node="B")] == ["t1"]
    assert len(tr.all("sql_stop", node="B", errno=1590)) == 2
    assert kit.verdict("WL3464.HOLD", tr).status == VIOLATED  # declared on model:mariadb-10.11
    mysql = kit.run("model:mysql-8.0", h)
    assert not mysql.all("rollback", node="B") and kit.verdict("WL3464.HOLD", mysql).status == PASS


def test_mysqls_workers_finish_their_groups_in_their_time_before_an_incident_stop(kit):
    # t1 holds a worker 1 s; the coordinator reads the incident meanwhile, reads no further, and
    # stops once its workers committed what they were given (slave_stop_workers): t1 at its own
    # time, not at the incident's read.
    workers = {"replica_parallel_workers": 2, "replica_preserve_commit_order": False}
    h = kit.make_history(["A", {"id": "B", "variables": workers}], [("A", "B", 0)], [
        {"at": 0, "op": "trx", "node": "A", "trx": "t1", "statements": [{"duration_us": 1000, "replica_cost_us": US}]},
        {"at": 100_000, "op": "record_incident", "node": "A", "code": 1, "message": "m", "via": "binlog"}],
        end_us=3 * US, sample_every_us=250_000)
    tr = kit.run("model:mysql-8.0", h)
    t1, stop = tr.first("visible", node="B", trx="t1"), tr.first("sql_stop", node="B")
    assert t1["t"] == t1["start"] + US and stop["errno"] == 1590 and stop["t"] == t1["t"] and tr.index(stop) > tr.index(t1)
    assert {s["Slave_SQL_Running"] for s in tr.all("status", node="B") if s["t"] < t1["t"]} == {"Yes"}


def test_groups_queued_in_the_instant_of_an_incident_stop_behind_the_oldest_are_given_up(kit):
    # MASTER_DELAY 2: t1, t2 and the incident are all due at 2 s and read in that instant. On 10.11
    # (aggressive mode, a campaign's History) t1 was committed and t2 given up: the place shown is
    # between them.
    workers = {"slave_parallel_threads": 4, "slave_parallel_mode": "aggressive"}
    h = kit.make_history([{"id": "A", "gtid_mode": True}, {"id": "B", "gtid_mode": True, "variables": workers}], [("A", "B", 2)], [
        {"at": 0, "op": "trx", "node": "A", "trx": "t1", "domain": 1},
        {"at": 10_000, "op": "trx", "node": "A", "trx": "t2", "domain": 1},
        {"at": 20_000, "op": "record_incident", "node": "A", "code": 1, "message": "m", "via": "binlog"}],
        end_us=4 * US, sample_every_us=500_000)
    tr = kit.run("model:mariadb-10.11", h)
    stop = tr.first("sql_stop", node="B")
    assert stop["errno"] == 1590 and [v["trx"] for v in tr.all("visible", node="B")] == ["t1"]
    assert [(r["trx"], r["t"]) for r in tr.all("rollback", node="B")] == [("t2", stop["t"])]
    t2 = tr.first("binlog", node="A", trx="t2", type="GTID_LOG_EVENT")
    assert {s["Exec_Master_Log_Pos"] for s in tr.all("status", node="B") if s["t"] > stop["t"]} == {t2["pos"]}


def test_each_gtid_domain_is_a_stream_of_its_own_on_mariadb(kit):
    # par-two-domains: t1 (domain 1) holds a worker 4 s; t2 and t3 (domain 0), written after it,
    # neither wait for it to start (conservative mode orders a domain's groups: current_gco of its
    # rpl_parallel_entry) nor to commit (wait_for_prior_commit within the domain): they commit at 2 s.
    tr = kit.run("model:mariadb-10.11", "par-two-domains")
    got = [(c["trx"], c["start"], c["t"]) for c in tr.all("visible", node="B")]
    assert got == [("t2", 1_502_000, 2_002_000), ("t3", 2_002_000, 2_002_000), ("t1", 1_002_000, 5_002_000)]
    # MySQL has no domains (a session's gtid_domain_id is refused, 1193): the same transactions in one
    # stream, with replica_preserve_commit_order its workers commit in the source's order
    h = kit.history("par-two-domains")
    mysql = kit.run("model:mysql-8.0", {**h, "ops": [{k: v for k, v in o.items() if k != "domain"} for o in h["ops"]]})
    assert [(c["trx"], c["t"]) for c in mysql.all("visible", node="B")] == [("t1", 5_002_000), ("t2", 5_002_000), ("t3", 5_002_000)]


def test_a_domain_s_conservative_wait_is_its_own():
    # The Applier alone: conservative mode holds a group until the one before it in its domain
    # reaches its commit, not one of another domain.
    a = PA.Applier(PA.Settings(4, "conservative", True))
    a.cost = 4 * US
    a.queue(0, 0, 2, ("bin.000001", 4), domain=1)
    other = a.queue(10, 3, 5, ("bin.000001", 100), domain=0)
    a.cost = US
    same = a.queue(20, 6, 8, ("bin.000001", 200), domain=1)
    assert (other.start, other.commit_at) == (10, 10) and (same.start, same.commit_at) == (4 * US, 5 * US)


def test_a_filtered_groups_gtid_waits_for_the_commit_of_the_group_before_it(kit):
    # Mixed-family finding (seed 17001, History 297): B (4 workers) skips A's incident and t6, a
    # worker takes t7, the coordinator passes t9 (@@skip_replication, filtered) and B crashes before
    # t7 commits. t9's GTID is recorded only in commit order (record_gtid waits for the prior
    # commit), so the crash loses it with t7: B fetches t7 again by GTID and applies it once.
    tr = kit.run("model:mariadb-10.11", load_history(REPO / "corpus" / "finding-filtered-gtid-recorded-before-an-earlier-commit.jsonl"))
    crash = tr.first("crash", node="B")
    assert tr.first("skip", node="B", trx="t9")["t"] == crash["t"] == tr.first("rollback", node="B", trx="t7")["t"]
    assert tr.first("filtered", node="B", trx="t9")["t"] > crash["t"]  # its end waited for t7's commit, lost with it
    assert [o["t"] > crash["t"] for o in tr.all("visible", node="B", trx="t7")] == [True]
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status == PASS


def test_a_workers_binlog_write_refused_by_strict_mode_stops_the_sql_thread(kit):
    # gtid_strict_mode on both; R's worker takes t1 (0-1-1, 4 s of work) and t2 behind it in domain
    # 0, t3 in domain 7. A client's t4 on R binlogs 0-2-1 meanwhile, so t1's binlog write at its
    # commit is out of order: on 10.11.19 the SQL thread stopped there with 1950, before t1
    # (corpus/finding-strict-mode-at-a-workers-commit). t2, waiting for t1's commit, is rolled back
    # with it; t3, of another domain, was committed.
    strict = {"gtid_strict_mode": True}
    h = kit.make_history([{"id": "M", "variables": strict}, {"id": "R", "variables": {**strict, "slave_parallel_threads": 4}}],
                         [("M", "R", 0)], [
        {"at": US, "op": "trx", "node": "M", "trx": "t1", "statements": [{"duration_us": 1000, "replica_cost_us": 4 * US}]},
        {"at": 1_010_000, "op": "trx", "node": "M", "trx": "t2"},
        {"at": 1_020_000, "op": "trx", "node": "M", "trx": "t3", "domain": 7},
        {"at": 2_500_000, "op": "trx", "node": "R", "trx": "t4"}], end_us=8 * US, sample_every_us=US)
    tr = kit.run("model:mariadb-10.11", h)
    stop = tr.first("sql_stop", node="R")
    assert (stop["reason"], stop["errno"], stop["t"]) == ("error", 1950, 5_001_000)
    assert stop["message"].startswith("An attempt was made to binlog GTID 0-1-1 ")
    assert [r["trx"] for r in tr.all("rollback", node="R")] == ["t1", "t2"]
    assert [v["trx"] for v in tr.all("visible", node="R")] == ["t3", "t4"]
    t1 = tr.first("binlog", node="M", trx="t1", type="GTID_LOG_EVENT")
    after = [s for s in tr.all("status", node="R") if s["t"] > stop["t"]]
    assert {(s["Exec_Master_Log_Pos"], s["Last_SQL_Errno"]) for s in after} == {(t1["pos"], 1950)}
    assert kit.verdict("DOMAIN.STRICT", tr).status == PASS
