"""An intermediate semi-sync master's SQL thread (log_slave_updates, its own semi-sync master
enabled) waits for an ack after committing a replicated group, as a client's commit does: held in
"Waiting for semi-sync ACK from slave", counted in yes_tx/no_tx, and gtid_slave_pos and the group's
position move only once the wait ends (the ack, the timeout, a STOP SLAVE, a shutdown)."""
from __future__ import annotations

import pytest

from replcheck.properties.core import PASS, VIOLATED

US, MS = 1_000_000, 1_000
MDB = "model:mariadb-10.11"
WAITING = "Waiting for semi-sync ACK from slave"


def history(kit, ops=(), replica_of_c=False, hierarchical=False, **c_variables):
    """A -> C (50 ms); C's semi-sync master enabled, 1 s timeout; with a semi-sync replica D of C
    (10 ms) or none (wait_no_slave ON, the default). t1 at 0, t2 at 0.5 s."""
    c = {"id": "C", "variables": {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": 1000, **c_variables}}
    nodes = [{"id": "A"}, c] + ([{"id": "D", "variables": {"rpl_semi_sync_slave_enabled": True}}] if replica_of_c else [])
    for n in nodes if hierarchical else ():
        n["rpl_hierarchical"] = True
    channels = [{"source": "A", "replica": "C", "latency_us": 50 * MS}]
    channels += [{"source": "C", "replica": "D", "latency_us": 10 * MS}] if replica_of_c else []
    trxs = [{"at": 0, "op": "trx", "node": "A", "trx": "t1"}, {"at": 500 * MS, "op": "trx", "node": "A", "trx": "t2"}]
    return kit.make_history(nodes, channels, sorted([*trxs, *ops], key=lambda o: o["at"]), sample_every_us=250 * MS, end_us=3 * US)


def at(tr, kind: str, node: str, t: int) -> dict:
    return [o for o in tr.all(kind, node=node) if o["t"] == t][-1]


def counters(tr, t: int) -> tuple[int, int, str]:
    v = at(tr, "server_status", "C", t)["variables"]
    return v["Rpl_semi_sync_master_yes_tx"], v["Rpl_semi_sync_master_no_tx"], v["gtid_slave_pos"]


def test_the_sql_thread_waits_out_the_timeout_and_reads_on_after_it(kit):
    tr = kit.run(MDB, history(kit))
    s = at(tr, "status", "C", 750 * MS)  # t1 committed at 50 ms, t2 relayed at 550 ms
    assert s["Slave_SQL_Running_State"] == WAITING and s["Exec_Master_Log_Pos"] < tr.first("binlog", node="A", trx="t1", last=True)["end"]
    assert tr.first("visible", node="C", trx="t1")["t"] == 50 * MS  # AFTER_COMMIT: visible while it waits
    assert counters(tr, 750 * MS) == (0, 0, "")
    timeout = tr.first("log", node="C", level="Warning")
    assert timeout["t"] == 1050 * MS and "Timeout waiting for reply of binlog" in timeout["message"]
    # released with no_tx; t2, read only now, commits while OFF: no_tx again
    assert tr.first("visible", node="C", trx="t2")["t"] == 1050 * MS
    assert counters(tr, 1250 * MS) == (0, 2, "0-1-2")
    assert at(tr, "status", "C", 1250 * MS)["Slave_SQL_Running_State"] != WAITING
    for requirement in ("WL1720.COUNT.TX", "MARIADB.GTID.SLAVE_POS"):
        assert kit.verdict(requirement, tr).status == PASS


def test_an_ack_of_its_replica_releases_it_as_yes(kit):
    tr = kit.run(MDB, history(kit, replica_of_c=True))
    assert not [o for o in tr.all("log", node="C") if "Timeout" in o["message"]]
    assert counters(tr, 250 * MS) == (1, 0, "0-1-1") and counters(tr, 3 * US)[:2] == (2, 0)
    assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS


@pytest.mark.parametrize("stop", [{"op": "stop_slave", "node": "C"}, {"op": "shutdown", "node": "C"}])
def test_a_stop_ends_the_wait_unacknowledged(kit, stop):
    tr = kit.run(MDB, history(kit, [{"at": 250 * MS, **stop}]))
    assert not [o for o in tr.all("log", node="C") if "Timeout" in o["message"]]
    if stop["op"] == "stop_slave":  # the kill: no_tx, the position moved, the status still ON
        assert counters(tr, 500 * MS) == (0, 1, "0-1-1")
        assert at(tr, "server_status", "C", 500 * MS)["variables"]["Rpl_semi_sync_master_status"] == "ON"
        assert at(tr, "status", "C", 500 * MS)["Slave_SQL_Running"] == "No"
    for requirement in ("WL1720.COUNT.TX", "MARIADB.GTID.SLAVE_POS"):
        assert kit.verdict(requirement, tr).status != VIOLATED


def test_a_stop_ends_a_workers_wait(kit):
    """A parallel replica's worker is not held, but a STOP SLAVE returns only once the workers'
    commits did (rpl_parallel::wait_for_done, MariaDB sql/rpl_parallel.cc): their waits ended by then,
    as WL1720.COUNT.TX takes it (a rotating campaign's seed 95741, History 13: the wait ran on to the
    timeout after the stop)."""
    tr = kit.run(MDB, history(kit, [{"at": 250 * MS, "op": "stop_slave", "node": "C"}], slave_parallel_threads=2))
    assert counters(tr, 250 * MS) == (0, 1, "0-1-1")
    assert not [o for o in tr.all("log", node="C") if "Timeout" in o["message"]]
    assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS


def test_after_sync_keeps_the_group_invisible_until_its_release(kit):
    tr = kit.run(MDB, history(kit, rpl_semi_sync_master_wait_point="AFTER_SYNC"))
    assert tr.first("visible", node="C", trx="t1")["t"] == 1050 * MS
    assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS


def test_the_seeds_server_and_mysql_wait_alike(kit):
    # MySQL's observer tests no slave thread either (repl_semi_report_commit / _binlog_sync)
    for system in ("model:wl344", "model:mysql-8.0"):
        tr = kit.run(system, history(kit))
        assert at(tr, "status", "C", 750 * MS)["Slave_SQL_Running_State"] == WAITING, system
        assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS, system


def test_a_crash_in_the_wait_keeps_the_groups_gtid_recorded(kit):
    # the GTID's mysql.gtid_slave_pos row committed with the group: the restart starts after it, and
    # t1 is applied once (t2, fetched after the restart, waits in its turn)
    tr = kit.run(MDB, history(kit, [{"at": 250 * MS, "op": "crash", "node": "C"}, {"at": 400 * MS, "op": "restart", "node": "C"}]))
    assert counters(tr, 750 * MS)[2] == "0-1-1"
    assert [o["t"] for o in tr.all("visible", node="C", trx="t1")] == [50 * MS]
    assert at(tr, "status", "C", 750 * MS)["Slave_SQL_Running_State"] == WAITING


@pytest.mark.parametrize("system", [MDB, "model:wl7318"])
def test_a_crash_in_an_after_sync_wait_records_the_gtid_recovery_commits(kit, system):
    # AFTER_SYNC: the group and its mysql.gtid_slave_pos row are prepared; recovery commits both, and
    # the restarted server shows the GTID (seed 200071, History 5)
    crash = [{"at": 250 * MS, "op": "crash", "node": "C"}, {"at": 400 * MS, "op": "restart", "node": "C"}]
    tr = kit.run(system, history(kit, crash, rpl_semi_sync_master_wait_point="AFTER_SYNC"))
    assert tr.first("recovery", node="C")["committed"] == ["t1"]
    assert at(tr, "server_status", "C", 500 * MS)["variables"]["gtid_slave_pos"] == "0-1-1"
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS


def test_the_hierarchical_designs_commit_waits_too(kit):
    # the design's own commit order (binlog, engine, relay-log.info): held before relay-log.info moves
    tr = kit.run("model:groupid", history(kit, hierarchical=True))
    assert at(tr, "status", "C", 750 * MS)["Slave_SQL_Running_State"] == WAITING
    assert tr.first("visible", node="C", trx="t2")["t"] == 1050 * MS
    assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS


@pytest.mark.parametrize("stop", [{"at": 250 * MS, "op": "stop_slave", "node": "C", "thread": "sql"},
                                  {"at": 200 * MS, "op": "record_incident", "node": "A", "code": 0, "message": "", "via": "injector"}])
def test_a_stop_ends_the_wait_of_a_group_its_drain_commits(kit, stop):
    """A worker still executing t1 (1 s on C) when the SQL thread stops (STOP SLAVE, or the incident
    after t1 as an error of the coordinator): the stop's drain commits t1, whose wait the stop ends
    too (rpl_parallel::wait_for_done). The waits registered by the drain were left to run out the
    timeout after the stop (seed 20261130's History 2985, seed 77's History 1217)."""
    ops = [{"at": 0, "op": "trx", "node": "A", "trx": "t1", "statements": [{"replica_cost_us": US}]}, stop]
    h = kit.make_history([{"id": "A"}, {"id": "C", "variables": {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": 1000,
                                                                "slave_parallel_threads": 2}}],
                         [{"source": "A", "replica": "C", "latency_us": 50 * MS}], ops, sample_every_us=250 * MS, end_us=3 * US)
    tr = kit.run(MDB, h)
    stopped = tr.first("sql_stop", node="C")
    assert tr.first("binlog", node="C", trx="t1", last=True)["t"] == stopped["t"] == stop["at"] + (50 * MS if "code" in stop else 0)
    assert counters(tr, 500 * MS)[:2] == (0, 1)
    assert at(tr, "server_status", "C", 500 * MS)["variables"]["Rpl_semi_sync_master_wait_sessions"] == 0
    assert not [o for o in tr.all("log", node="C") if "Timeout" in o["message"]]
    assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS
