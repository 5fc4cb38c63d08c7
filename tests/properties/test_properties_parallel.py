"""Every parallel-applier property passes (the CASES table, run by test_property_cases.py) on an honest trace and catches a realistic fault: a worker
committing ahead of a group its source wrote before (where commit order is kept), Seconds_Behind_Master
0 while a worker still holds an old group, and a group committed twice or never after a crash left
gaps."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, US, assert_witness
from test_properties_incident import Case, pick

from replcheck.io import load_history
from replcheck.model.delay import STATE_EXECUTING, STATE_WAITING
from replcheck.properties.core import NOT_EXERCISED, PASS, VIOLATED

ORDER, SBM, GAPS, UNTIL = "par-commit-order", "par-delayed-sbm", "par-mts-gaps", "par-until"
MARIADB, MYSQL = "model:mariadb-10.11", "model:mysql-8.0"


def swapped_commits(k):
    # t3's worker commits before t2's, the order MySQL without replica_preserve_commit_order allows
    tr = k.run(MARIADB, ORDER)
    t3 = tr.retime(tr.first("visible", node="B", trx="t3"), 3 * US)
    return tr, t3


def zero_while_a_worker_runs(k):
    tr = k.run(MARIADB, SBM)
    s = tr.all("status", node="B", t=4 * US)[-1]
    s["Seconds_Behind_Master"] = 0
    return tr, s


def gap_applied_twice(k):
    tr = k.run(MYSQL, GAPS)
    t1 = tr.first("visible", node="B", trx="t1")
    tr.insert_before(t1, {**tr.first("visible", node="B", trx="t2"), "t": t1["t"]})
    return tr, None


def gap_left_behind(k):
    # t1, below the gaps t2 and t3, never committed after the restart: lost
    tr = k.run(MYSQL, GAPS)
    tr.drop(tr.first("visible", node="B", trx="t1"))
    return tr, tr.first("crash", node="B")


def committed_past_until(k):
    # t3, written after the UNTIL position (the end of t2), committed before the SQL thread starts again
    tr = k.run(MARIADB, UNTIL)
    t2 = tr.first("visible", node="B", trx="t2")
    t3 = {**t2, "trx": "t3", "gtid": "0-1-3"}
    tr.obs.insert(tr.index(t2) + 1, t3)
    return tr, t3


def worker_ahead_of_the_delay(k):
    # t1's worker began 0.5 s after it arrived, MASTER_DELAY 1 not run out
    tr = k.run(MARIADB, SBM)
    t1 = tr.first("visible", node="B", trx="t1")
    t1["start"] = 1_500_000
    return tr, t1


UGAPS = "par-until-mts-gaps"
IDLE, LAST_COMMIT = "par-sbm-after-idle", "mutant:parallel-lag-from-last-commit"


def until_stop_before_the_gaps_filled(k):
    # t1, below the gaps t2 and t3, not committed by the UNTIL SQL_AFTER_MTS_GAPS stop (it commits later)
    tr = k.run(MYSQL, UGAPS)
    stop = tr.first("sql_stop", node="B", reason="until")
    tr.retime(tr.first("visible", node="B", trx="t1"), stop["t"] + 1)
    return tr, stop


CASES: dict[str, Case] = {
    "PARALLEL.COMMIT.ORDER": Case(lambda k: k.run(MARIADB, ORDER), swapped_commits,
                                  "B commits t2 after t3, though its source wrote t3 after it"),
    "PARALLEL.SBM.PENDING": Case(lambda k: k.run(MARIADB, SBM), zero_while_a_worker_runs,
                                 "B at 4 s shows Seconds_Behind_Master 0 but its workers have not committed t1"),
    "PARALLEL.RECOVERY.GAPS": Case(lambda k: k.run(MYSQL, GAPS), gap_left_behind,
                                   "B crashed holding groups past t1, and never commits it"),
    "PARALLEL.UNTIL": Case(lambda k: k.run(MARIADB, UNTIL), committed_past_until,
                           "B commits t3, written after its UNTIL position"),
    "PARALLEL.UNTIL.GAPS": Case(lambda k: k.run(MYSQL, UGAPS), until_stop_before_the_gaps_filled,
                                "B stopped at UNTIL SQL_AFTER_MTS_GAPS without t1, below the gaps its crash left"),
    "PARALLEL.DELAY": Case(lambda k: k.run(MARIADB, SBM), worker_ahead_of_the_delay,
                           "B's worker began t1 at 1.5 s, before its MASTER_DELAY 1 ran out"),
    "PARALLEL.SBM.VALUE": Case(lambda k: k.run(MARIADB, IDLE), lambda k: pick(k.run(LAST_COMMIT, IDLE), "status", node="B", t=5_500_000),
                               "B at 5.5 s shows Seconds_Behind_Master 4, but it committed or read after idling a group written 0.500 s before"),
}


def test_a_group_committed_twice_across_the_crash(kit):
    tr, _ = gap_applied_twice(kit)
    assert_witness(kit.verdict("PARALLEL.RECOVERY.GAPS", tr), tr, None, "B commits t2 2 times across its crash")


def test_commit_order_compares_the_groups_of_one_origin(kit):
    """Seed 810024, History 3 of generator 14's semisync family (kept as a file): C, with workers,
    commits A's t1, then after the failover to B, B's t3; positions in A's binlog and in B's do not
    order them. Had A written t3 there, ahead of t1, C committing it after t1 would break the order."""
    history = json.loads((Path(__file__).parent / "histories" / "gen14-semisync-810024-3.json").read_text())
    tr = kit.run(MARIADB, history)
    assert kit.verdict("PARALLEL.COMMIT.ORDER", tr).status == NOT_EXERCISED  # no pair of one origin to order
    for o in tr.all("binlog", node="B", trx="t3"):
        o["node"] = "A"
    assert_witness(kit.verdict("PARALLEL.COMMIT.ORDER", tr), tr, None, "C commits t3 after t1, though its source wrote t1 after it")


def test_recovery_gaps_owes_only_what_the_source_binlogged(kit):
    """Seed 358651, History 33 of generator 14's domains family (kept as a file): R replicates M, and
    B, its sibling, commits t1 of its own; R restarts with workers after a crash. t1 was never R's
    to apply. Had M binlogged it ahead of what R holds, it would be owed."""
    history = json.loads((Path(__file__).parent / "histories" / "gen14-domains-358651-33.json").read_text())
    # without R's semi-sync master, whose wait for an ack would hold its SQL thread at t2 until the crash
    history["ops"] = [o for o in history["ops"] if o.get("variable") != "rpl_semi_sync_master_enabled"]
    tr = kit.run(MARIADB, history)
    assert not tr.all("visible", node="R", trx="t1") and kit.verdict("PARALLEL.RECOVERY.GAPS", tr).status == PASS
    first = tr.first("binlog", node="M", trx="t2")
    for o in tr.all("binlog", node="B", trx="t1"):
        tr.insert_before(first, {**o, "node": "M", "file": first["file"], "end": first["end"] - 1})
    assert_witness(kit.verdict("PARALLEL.RECOVERY.GAPS", tr), tr, None, "R crashed holding groups past t1, and never commits it")


def test_a_stamp_older_than_the_last_does_not_move_the_lag_back(kit):
    """A's clock steps back an hour after B connected, so t2, read after B idled, is stamped an hour
    before t1. MariaDB's read after idling moves last_master_timestamp only forward (10.11.19 showed
    4 to 7 while t2 executed: corpus/server, older-stamp-read-after-idling): the lag counts on from
    t1's stamp. The property also allows the count from t2's stamp, with the clock difference
    measured at the connect (an hour more); five seconds more than that is a violation."""
    h = kit.history(IDLE)
    h["ops"].insert(1, {"at": 3 * US, "op": "clock_step", "node": "A", "delta_us": -3600 * US})
    tr = kit.run(MARIADB, h)
    assert tr.first("status", node="B", t=6 * US)["Seconds_Behind_Master"] == 5
    v = kit.verdict("PARALLEL.SBM.VALUE", tr)
    assert v.status == PASS and v.checked
    s = tr.first("status", node="B", t=5_500_000)
    s["Seconds_Behind_Master"] = 3605
    assert_witness(kit.verdict("PARALLEL.SBM.VALUE", tr), tr, s, "B at 5.5 s shows Seconds_Behind_Master 3605")


def test_the_masters_format_description_read_at_a_start_leaves_no_floor(kit):
    """Seed 800000, History 11 of generator 14 (kept as a file): B restarts after A's clock stepped
    an hour ahead; the SQL thread reads A's format description (written at the binlog's start, an
    hour before by A's clock) as it starts. MariaDB 10.11.19, running it (corpus/server,
    format-description-read-at-a-start-after-a-clock-step), showed 1 to 3 while t1 and t2 executed,
    not an hour, and so does the model. The property takes no floor from t1's read after that
    format description, so an hour is allowed too; read with no format description since the
    start, t1 gives one, and an hour is a violation."""
    tr = kit.run(MARIADB, json.loads((Path(__file__).parent / "histories" / "gen14-parallel-800000-11.json").read_text()))
    lag = tr.first("status", node="B", t=14 * US)
    assert lag["Seconds_Behind_Master"] == 3
    assert kit.verdict("PARALLEL.SBM.VALUE", tr).status == PASS
    lag["Seconds_Behind_Master"] = 3612
    assert kit.verdict("PARALLEL.SBM.VALUE", tr).status == PASS
    restart = tr.all("restart", node="B")[-1]
    for fde in [o for o in tr.all("apply", node="B", type="FORMAT_DESCRIPTION_EVENT") if tr.index(o) > tr.index(restart)]:
        tr.drop(fde)
    assert_witness(kit.verdict("PARALLEL.SBM.VALUE", tr), tr, lag, "B at 14 s shows Seconds_Behind_Master 3612")


def test_a_refused_change_master_leaves_the_lag_counted_as_before(kit):
    """CHANGE MASTER refused while B's slave runs (1198) changes nothing: the lag still counts from
    the group read after idling. Taken, it would start the count again."""
    h = kit.history(IDLE)
    h["ops"].append({"at": 6 * US, "op": "change_master", "node": "B", "delay": 1})
    tr = kit.run(MARIADB, h)
    change = tr.first("stmt", node="B", op="change_master")
    assert change["errno"] == 1198 and kit.verdict("PARALLEL.SBM.VALUE", tr).status == PASS
    lag = tr.first("status", node="B", t=7 * US)
    lag["Seconds_Behind_Master"] += 2
    assert_witness(kit.verdict("PARALLEL.SBM.VALUE", tr), tr, lag, "B at 7 s shows Seconds_Behind_Master")


def test_a_transaction_of_two_myisam_statements_is_two_groups_each_committed_once(kit):
    """t2 of two MyISAM statements: its source writes each as a group of its own (two GTIDs of one
    trx), committed once each across the crash; a third copy is one too many."""
    h = kit.history(GAPS)
    t2 = next(o for o in h["ops"] if o.get("trx") == "t2")
    t2.update(engine="myisam", statements=[{"duration_us": 1000, "replica_cost_us": 0}] * 2)
    tr = kit.run(MYSQL, h)
    copies = tr.all("visible", node="B", trx="t2")
    assert len(copies) == 2
    assert kit.verdict("PARALLEL.RECOVERY.GAPS", tr).status == PASS
    tr.insert_before(copies[-1], dict(copies[-1]))
    assert_witness(kit.verdict("PARALLEL.RECOVERY.GAPS", tr), tr, None,
                   "B commits t2 3 times across its crash (its source wrote 2 groups of it)")


@pytest.mark.parametrize("requirement,history,system,witness", [
    ("PARALLEL.COMMIT.ORDER", ORDER, "mutant:commit-order-lost", "B commits t2 after t3, though"),
    ("PARALLEL.SBM.PENDING", SBM, "mutant:caught-up-with-workers-busy", "shows Seconds_Behind_Master 0 but its workers"),
    ("PARALLEL.RECOVERY.GAPS", GAPS, "mutant:mts-gaps-not-filled", "B commits t2 2 times across its crash"),
    ("PARALLEL.UNTIL", UNTIL, "mutant:until-gives-up-queued", "B stopped at its UNTIL position"),
    ("PARALLEL.DELAY", "par-delay-queued", "mutant:delay-skipped-while-workers-busy",
     "B's worker began t2 at 3 s, before its MASTER_DELAY 2 ran out at 4 s"),
    ("PARALLEL.SBM.VALUE", IDLE, LAST_COMMIT, "B at 6 s shows Seconds_Behind_Master 5, but it committed or read after idling"),
])
def test_each_mutant_is_caught_by_its_property(kit, requirement, history, system, witness):
    tr = kit.run(system, history)
    assert_witness(kit.verdict(requirement, tr), tr, None, witness)


def test_order_is_not_judged_where_the_server_does_not_keep_it(kit):
    # MySQL with replica_preserve_commit_order OFF commits t2 and t3 before t1: allowed
    tr = kit.run(MYSQL, GAPS)
    assert [o["trx"] for o in tr.all("visible", node="B")][:2] == ["t2", "t3"]
    assert kit.verdict("PARALLEL.COMMIT.ORDER", tr).status == NOT_EXERCISED


def test_a_serial_trace_exercises_none(kit):
    tr = kit.run(MARIADB, "flt-skip-counter")
    assert {kit.verdict(r, tr).status for r in CASES} == {NOT_EXERCISED}


def test_the_groups_workers_gave_up_at_a_stop_are_pending_again(kit):
    # Campaign finding (seed 6014, History 2971): B's coordinator queued t8, t7, t9 and t10; STOP SLAVE
    # gave up those no worker had started, and B started again serially, UNTIL a position inside t10.
    tr = kit.run(MARIADB, load_history(REPO / "corpus" / "finding-queued-groups-pending-after-stop.jsonl"))
    assert [o["trx"] for o in tr.all("rollback", node="B", reason="stop")] == ["t8", "t7", "t9", "t10"]
    assert kit.verdict("WL344.STATE.WAITING", tr).status == PASS
    assert kit.verdict("PARALLEL.UNTIL", tr).status == NOT_EXERCISED  # the UNTIL run is serial
    # at the next sample t7 is in hand, due long ago: a sample that shows B waiting for it is wrong
    start = tr.first("parallel", node="B", workers=0)
    s = next(o for o in tr.obs[tr.index(start):] if o["kind"] == "status" and o["node"] == "B" and o["t"] > start["t"])
    assert s["Slave_SQL_Running_State"] == STATE_EXECUTING
    s.update(Slave_SQL_Running_State=STATE_WAITING, processlist_state=STATE_WAITING)
    assert_witness(kit.verdict("WL344.STATE.WAITING", tr), tr, s, f"B at 2.5 s shows state {STATE_WAITING!r}")
    # the UNTIL run is serial by the `parallel` observation its start logs after the statement;
    # without it the run is the workers', and t10 is committed: begun before the position (inside
    # it), it is finished; had the position been t10's start, t10 is past it
    tr = kit.run(MARIADB, load_history(REPO / "corpus" / "finding-queued-groups-pending-after-stop.jsonl"))
    tr.drop(tr.first("parallel", node="B", workers=0))
    assert kit.verdict("PARALLEL.UNTIL", tr).status != VIOLATED
    until = next(o for o in tr.all("stmt", node="B", op="start_slave") if o.get("until"))
    until["until"] = {**until["until"], "master_log_pos": tr.first("binlog", node="A", trx="t10", idx=0)["pos"]}
    assert_witness(kit.verdict("PARALLEL.UNTIL", tr), tr, None, "B commits t10, written after its UNTIL position")


def test_a_group_read_while_a_worker_is_busy_waits_its_own_delay(kit):
    # par-delay-queued: t1 holds worker 1 from its due time (3 s) to 6 s; t2, written 1 s after it,
    # is read as soon as t1 is queued, and the coordinator waits for t2's own due time (4 s) before
    # worker 2 starts it; both commit at 6 s (in order). PARALLEL.DELAY judges it and holds.
    tr = kit.run(MARIADB, "par-delay-queued")
    assert [(o["trx"], o["start"], o["t"]) for o in tr.all("visible", node="B")] == [("t1", 3 * US, 6 * US), ("t2", 4 * US, 6 * US)]
    v = kit.verdict("PARALLEL.DELAY", tr)
    assert v.status == "pass" and v.checked == 2, v


TWO = "par-two-domains"


def test_commit_order_places_each_group_of_a_myisam_transaction(kit):
    """Seed 400034, History 39: t3 of two MyISAM statements is two groups (0-1-3, 0-1-4) that B's
    workers commit in the source's order; each is placed by its own GTID, not both by t3's first."""
    h = kit.history(ORDER)
    t3 = next(o for o in h["ops"] if o.get("trx") == "t3")
    t3.update(engine="myisam", statements=[{"duration_us": 1000, "replica_cost_us": c} for c in (0, 4 * US)])
    tr = kit.run(MARIADB, h)
    first, second = tr.all("visible", node="B", trx="t3")
    assert (first["gtid"], second["gtid"]) == ("0-1-3", "0-1-4") and first["t"] < second["t"]
    v = kit.verdict("PARALLEL.COMMIT.ORDER", tr)
    assert v.status == PASS and v.checked, v
    tr.retime(first, second["t"] + US)
    assert_witness(kit.verdict("PARALLEL.COMMIT.ORDER", tr), tr, first,
                   "B commits t3 after t3, though its source wrote t3 after it (domain 0)")


def test_commit_order_is_judged_per_domain(kit):
    # MariaDB commits t2 and t3 (domain 0) before t1 (domain 1), written before them: not a
    # violation, each domain's order is kept. t3 committed ahead of t2, both of domain 0, is one.
    tr = kit.run(MARIADB, TWO)
    assert [o["trx"] for o in tr.all("visible", node="B")] == ["t2", "t3", "t1"]
    v = kit.verdict("PARALLEL.COMMIT.ORDER", tr)
    assert v.status == "pass" and v.checked, v
    t3 = tr.retime(tr.first("visible", node="B", trx="t3"), 1_900_000)
    assert_witness(kit.verdict("PARALLEL.COMMIT.ORDER", tr), tr, t3, "B commits t2 after t3, though its source wrote t3 after it (domain 0)")


def test_a_stalled_domain_keeps_the_lag_above_zero(kit):
    # t1, domain 1, still runs at 4 s while domain 0's t2 and t3 committed at 2 s: the replica is
    # behind, Seconds_Behind_Master is never 0 (it is 3 there); a 0 would be a violation naming t1.
    tr = kit.run(MARIADB, TWO)
    s = tr.all("status", node="B", t=4 * US)[-1]
    assert s["Seconds_Behind_Master"] > 0 and kit.verdict("PARALLEL.SBM.PENDING", tr).status == "pass"
    s["Seconds_Behind_Master"] = 0
    assert_witness(kit.verdict("PARALLEL.SBM.PENDING", tr), tr, s,
                   "B at 4 s shows Seconds_Behind_Master 0 but its workers have not committed t1, written 2.999 s ago")


def _crash_in_two_domains(kit, *after_restart):
    # t1 (domain 1, 1 s of work) is still running when B crashes; t2 (domain 0), written after it, had
    # committed: a gap in the binlog's order, not in a domain's. The GTID start at the restart throws
    # the relay log away and fetches t1 again, unless its IO thread is stopped at once.
    variables = {"slave_parallel_threads": 4}
    h = kit.make_history(["A", {"id": "B", "variables": variables}], [{"source": "A", "replica": "B", "latency_us": 1000}], [
        {"at": 0, "op": "trx", "node": "A", "trx": "t1", "domain": 1, "statements": [{"duration_us": 1000, "replica_cost_us": US}]},
        {"at": 100_000, "op": "trx", "node": "A", "trx": "t2", "statements": [{"duration_us": 1000}]},
        {"at": 500_000, "op": "crash", "node": "B"}, {"at": 600_000, "op": "restart", "node": "B"},
        *[{"at": 600_000, "node": "B", **op} for op in after_restart]], end_us=4 * US)
    return kit.run(MARIADB, h)


def test_a_group_thrown_away_with_the_relay_log_is_owed_once_fetched_again(kit):
    tr = _crash_in_two_domains(kit)
    assert tr.first("relay_log_recovery", node="B")["reason"] == "gtid"
    assert [o["trx"] for o in tr.all("visible", node="B")] == ["t2", "t1"]
    v = kit.verdict("PARALLEL.RECOVERY.GAPS", tr)
    assert v.status == "pass" and v.checked, v
    tr.drop(tr.all("visible", node="B", trx="t1")[-1])  # fetched again, never committed
    assert_witness(kit.verdict("PARALLEL.RECOVERY.GAPS", tr), tr, tr.first("crash", node="B"),
                   "B crashed holding groups past t1, and never commits it")
    # seed 1, History 364 of the parallel family (generator 10): STOP SLAVE IO_THREAD at the restart,
    # t1 never fetched again: not the applier's to commit
    stopped = _crash_in_two_domains(kit, {"op": "stop_slave", "thread": "io"})
    assert not stopped.all("visible", node="B", trx="t1")
    assert kit.verdict("PARALLEL.RECOVERY.GAPS", stopped).status == "pass"


def test_until_sql_after_mts_gaps_stops_once_the_gaps_are_filled(kit):
    # MySQL: restarted with its threads stopped, START SLAVE SQL_THREAD UNTIL SQL_AFTER_MTS_GAPS applies
    # t1 and skips the gaps t2 and t3; the coordinator stops before t4 (fetched at START SLAVE
    # IO_THREAD), which commits only once the SQL thread starts again.
    tr = kit.run(MYSQL, UGAPS)
    stop = tr.first("sql_stop", node="B", reason="until")
    assert [s["trx"] for s in tr.all("skip", node="B", reason="mts_recovery")] == ["t2", "t3"]
    assert tr.first("visible", node="B", trx="t1")["t"] <= stop["t"] < tr.first("visible", node="B", trx="t4")["t"]
    v = kit.verdict("PARALLEL.UNTIL.GAPS", tr)
    assert v.status == "pass" and v.checked == 2, v
    t4 = tr.retime(tr.first("visible", node="B", trx="t4"), stop["t"] - 1)  # past the gaps, before the stop
    assert_witness(kit.verdict("PARALLEL.UNTIL.GAPS", tr), tr, t4,
                   "B commits t4 before its UNTIL SQL_AFTER_MTS_GAPS stop, past the gaps")


def test_until_sql_after_mts_gaps_after_relay_log_recovery_finds_the_gaps_filled(kit):
    # Session 12's hand-made History: restarted with relay_log_recovery and --skip-slave-start, B
    # fills the gaps at startup (fill_mts_gaps_and_recover: t1 commits, t2 and t3 are skipped), so a
    # later UNTIL SQL_AFTER_MTS_GAPS owes nothing; the model used to throw the relay log and its gaps
    # away first and stop this UNTIL without t1
    h = kit.history(UGAPS)
    ops = [o for o in h["ops"] if o["op"] != "start_slave"]
    for o in ops:
        if o["op"] == "restart":
            o["relay_log_recovery"] = True
    h["ops"] = ops + [{"at": 10 * US, "op": "start_slave", "node": "B", "thread": "sql", "until": {"sql_after_mts_gaps": True}},
                      {"at": 10_500_000, "op": "start_slave", "node": "B", "thread": "io"},
                      {"at": 13 * US, "op": "start_slave", "node": "B", "thread": "sql"}]
    tr = kit.run(MYSQL, h)
    assert tr.first("visible", node="B", trx="t1")["t"] <= tr.first("relay_log_recovery", node="B")["t"] < 10 * US
    assert tr.first("sql_stop", node="B", reason="until", t=10_500_000)
    v = kit.verdict("PARALLEL.UNTIL.GAPS", tr)
    assert v.status == "pass" and v.checked, v


def test_mariadb_has_no_until_sql_after_mts_gaps(kit):
    # sql_yacc.yy's slave_until takes positions and MASTER_GTID_POS only; 10.11 answers this text (measured)
    stmt = kit.run(MARIADB, UGAPS).all("stmt", node="B", op="start_slave")[0]
    assert (stmt["errno"], stmt["message"]) == (1064, "You have an error in your SQL syntax; check the manual that corresponds "
                                                      "to your MariaDB server version for the right syntax to use near "
                                                      "'SQL_AFTER_MTS_GAPS' at line 1")


# -- what two domains showed the other properties (600 Histories of the parallel family, generator 10) --
def _generated(kit, seed, index):
    """History `index` of seed `seed` as generator 13 drew the parallel family, kept as a file (later
    generators draw other Histories: generator 14 added the shared vocabulary to every family)."""
    return kit.run(MARIADB, json.loads((Path(__file__).parent / "histories" / f"gen13-parallel-{seed}-{index}.json").read_text()))


def test_recovery_gaps_owes_nothing_to_a_replica_not_applying_at_the_end(kit):
    # seed 1, History 1476 (seed 0's History 347 until generator 12's kill_out_of_order moved the
    # parallel family's draws): after the restart START SLAVE SQL_THREAD UNTIL a position before t8
    # stops the thread at once, and nothing starts it again: t8, held past at the crash, is not owed
    tr = _generated(kit, 1, 1476)
    assert kit.verdict("PARALLEL.RECOVERY.GAPS", tr).status == "pass"
    last = tr.all("status", node="B")[-1]
    assert last["Slave_SQL_Running"] == "No"
    last["Slave_SQL_Running"] = "Yes"  # applying at the end: t7 is owed
    assert_witness(kit.verdict("PARALLEL.RECOVERY.GAPS", tr), tr, None, "and never commits it")


def test_a_hole_a_gtid_connect_left_before_the_until_position_is_no_short_stop(kit):
    # seed 1, History 51 (History 225 until generator 12's kill_out_of_order moved the parallel
    # family's draws): after a GTID start B fetched the two domains' groups out of binlog order, a
    # hole before the UNTIL position: the servers test the next event's own start, so the thread
    # stops after t4, at the position for all it could read
    tr = _generated(kit, 1, 51)
    stop = tr.first("sql_stop", node="B", reason="until")
    assert [o["trx"] for o in tr.all("visible", node="B") if o["t"] >= stop["t"] - 1000][:1] == ["t4"]
    for r in ("WL344.P1.UNTIL", "PARALLEL.UNTIL"):
        v = kit.verdict(r, tr)
        assert v.status == "pass" and v.checked, (r, v)


def test_an_incident_after_a_hole_holds_at_the_end_of_the_last_event_before_it(kit):
    # seed 1, History 36 (History 321 until generator 12's kill_out_of_order moved the parallel
    # family's draws): the dump skipped domain 0's groups between the last one executed (ending
    # at 510) and the incident: Exec_Master_Log_Pos 510 is the place; another is a violation
    tr = _generated(kit, 1, 36)
    assert kit.verdict("WL3464.HOLD", tr).status == "pass"
    held = [s for s in tr.all("status", node="B") if s["Exec_Master_Log_Pos"] == 510 and s["Relay_Log_Pos"] == 558]
    held[0]["Exec_Master_Log_Pos"] = 400
    assert_witness(kit.verdict("WL3464.HOLD", tr), tr, held[0], "Exec_Master_Log_Pos 400; the incident is at 558")


def test_a_gap_thrown_away_again_before_it_was_fetched_is_not_owed(kit):
    # Campaign finding (seed 7201, History 531): t2 (domain 1) committed past t1 (domain 0); four crashes,
    # each GTID restart throwing the relay log away; t1 is relayed again once, thrown away again, and
    # never fetched after that (the last START SLAVE is UNTIL, SQL_THREAD only).
    history = load_history(REPO / "corpus" / "finding-gap-thrown-away-again-before-fetched.jsonl")
    tr = kit.run(MARIADB, history)
    assert kit.verdict("PARALLEL.RECOVERY.GAPS", tr).status == PASS
    # without the last discard, the copy relayed after the one before is still there: t1 is owed
    tr.drop(tr.all("relay_log_recovery", node="B")[-1])
    assert_witness(kit.verdict("PARALLEL.RECOVERY.GAPS", tr), tr, None, "B crashed holding groups past t1, and never commits it")


def test_a_marked_group_its_master_never_sent_is_not_owed_after_a_crash(kit):
    # B filters marked events on the master: t4 (marked) never reaches it, t7 does and commits; B crashes
    # and restarts. t4 is no gap B owes; unmarked (the trace edited), it would be one never committed.
    nodes = [{"id": "A"}, {"id": "B", "variables": {"replicate_events_marked_for_skip": "FILTER_ON_MASTER", "slave_parallel_threads": 4,
                                                    "replica_parallel_workers": 4}}]
    ops = [{"at": 0, "op": "trx", "node": "A", "trx": "t4", "skip_replication": True}, {"at": 0, "op": "trx", "node": "A", "trx": "t7"},
           {"at": 4 * US, "op": "crash", "node": "B"},
           {"at": 4 * US, "op": "restart", "node": "B", "variables": {"replicate_do_db": "rc", "replicate_ignore_table": ""}}]
    h = kit.make_history(nodes, [{"source": "A", "replica": "B", "latency_us": 50_000, "delay": 2}], ops,
                         sample_every_us=700_000, end_us=8 * US)
    tr = kit.run("model:wl344", h)
    assert [o["trx"] for o in tr.all("visible", node="B")] == ["t7"]
    assert kit.verdict("PARALLEL.RECOVERY.GAPS", tr).status == PASS
    tr.first("commit", node="A", trx="t4").pop("skip_replication")
    assert_witness(kit.verdict("PARALLEL.RECOVERY.GAPS", tr), tr, tr.first("crash", node="B"), "crashed holding groups past t4")


def test_until_positions_are_those_of_the_replicas_own_source(kit):
    # Campaign finding (seed 500166, History 42): C replicates from B (log_slave_updates) and runs
    # START SLAVE UNTIL bin.000001:246, inside t3 as B wrote it (124..277), A having written t3 in
    # bin.000002: C's commit of t3 is no violation, one of t1 (B's 277..430) is
    history = load_history(REPO / "corpus" / "finding-until-position-in-the-intermediate-masters-binlog.jsonl")
    tr = kit.run(MARIADB, history)
    v = kit.verdict("PARALLEL.UNTIL", tr)
    assert v.status == PASS and v.checked
    t3 = tr.first("visible", node="C", trx="t3")
    t1 = {**t3, "trx": "t1", "gtid": "0-1-2"}
    tr.obs.insert(tr.index(t3) + 1, t1)
    assert_witness(kit.verdict("PARALLEL.UNTIL", tr), tr, t1, "C commits t1, written after its UNTIL position")
