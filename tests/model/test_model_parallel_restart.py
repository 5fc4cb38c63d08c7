"""A parallel GTID replica's SQL thread stopped (by STOP SLAVE or at an incident) with several domains in gtid_slave_pos: MariaDB
moves its place back to the start of the relay log in use and reads from there at the next start,
passing over by GTID what each domain committed (handle_slave_sql's exit, sql/slave.cc:
restart_gtid_pos; process_gtid_for_restart_pos, sql/rpl_parallel.cc); MySQL keeps its place."""
from __future__ import annotations

import pytest

from replcheck.properties.core import PASS, VIOLATED

HISTORY = "mdb-parallel-stop-two-domains"


def _after_stop(tr) -> dict:
    stop = tr.first("sql_stop", node="B")
    return next(s for s in tr.all("status", node="B") if s["t"] >= stop["t"])


@pytest.mark.parametrize("system,rewinds", [("model:mariadb-10.11", True), ("model:mysql-5.7", False)])
def test_the_stop_of_a_parallel_replica_with_two_domains(kit, system, rewinds):
    h = kit.history(HISTORY)
    if not rewinds:  # MySQL refuses a session's gtid_domain_id (1193): the same transactions without it
        h = {**h, "ops": [{k: v for k, v in o.items() if k != "domain"} for o in h["ops"]]}
    tr = kit.run(system, h)
    place = _after_stop(tr)["Relay_Log_Pos"]
    assert (place == 4) == rewinds
    passed = [s["trx"] for s in tr.all("skip", node="B") if s.get("reason") == "gtid already executed"]
    assert passed == (["t1", "t2", "t3"] if rewinds else [])
    assert [v["trx"] for v in tr.all("visible", node="B")] == ["t1", "t2", "t3", "t4"]  # nothing applied twice
    assert kit.verdict("WL344.STOP.NO_EXEC", tr).status == (VIOLATED if rewinds else PASS)


def test_one_domain_keeps_its_place(kit):
    h = kit.history(HISTORY)
    for op in h["ops"]:
        op.pop("domain", None)
    tr = kit.run("model:mariadb-10.11", h)
    assert _after_stop(tr)["Relay_Log_Pos"] > 4 and not tr.all("skip", node="B")


@pytest.mark.parametrize("system,rewinds", [("model:mariadb-10.11", True), ("model:mysql-5.7", False)])
def test_a_parallel_replica_with_two_domains_stopped_at_an_incident(kit, system, rewinds):
    tr = kit.run(system, "mdb-parallel-incident-two-domains")
    stop = tr.first("sql_stop", node="B")
    assert stop["errno"] == 1590
    incident = tr.first("relay", node="B", type="INCIDENT_EVENT")
    held = [s["Relay_Log_Pos"] for s in tr.all("status", node="B") if s["t"] > stop["t"]]
    assert held and set(held) == ({4} if rewinds else {incident["pos"]})
    assert kit.verdict("WL3464.HOLD", tr).status == (VIOLATED if rewinds else PASS)


def test_the_skip_counter_is_refused_to_a_parallel_replica_of_two_domains(kit):
    # Measured on 10.11.19 (this History with the SET between the stop and the start): errno 1966,
    # ER_SLAVE_SKIP_NOT_IN_GTID; the start passes over by GTID what it reads again and applies t4
    h = kit.history(HISTORY)
    h["ops"].insert(4, {"at": 3_500_000, "op": "set_global", "node": "B", "variable": "sql_slave_skip_counter", "value": 1})
    tr = kit.run("model:mariadb-10.11", h)
    assert tr.first("stmt", node="B", op="set_global")["errno"] == 1966
    assert not [s for s in tr.all("skip", node="B") if s.get("reason") == "sql_slave_skip_counter"]
    assert [v["trx"] for v in tr.all("visible", node="B")] == ["t1", "t2", "t3", "t4"]
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status != VIOLATED
    # one domain: the counter is taken
    for op in h["ops"]:
        op.pop("domain", None)
    tr = kit.run("model:mariadb-10.11", h)
    assert tr.first("stmt", node="B", op="set_global")["errno"] is None


def reread_history(kit) -> dict:
    """B (two domains, MASTER_DELAY 2) executed t1 and t2; its clock steps 2 s back, so both are
    due again 2 s on, and a rewinding STOP SLAVE SQL_THREAD makes it read them again."""
    workers = {"slave_parallel_threads": 4, "slave_parallel_mode": "conservative"}
    return kit.make_history([{"id": "A", "gtid_mode": True}, {"id": "B", "gtid_mode": True, "variables": workers}], [("A", "B", 2)], [
        {"at": 0, "op": "trx", "node": "A", "trx": "t1", "domain": 1},
        {"at": 500_000, "op": "trx", "node": "A", "trx": "t2"},
        {"at": 3_000_000, "op": "clock_step", "node": "B", "delta_us": -2_000_000},
        {"at": 3_200_000, "op": "stop_slave", "node": "B", "thread": "sql"},
        {"at": 3_200_000, "op": "start_slave", "node": "B", "thread": "sql"}], end_us=6_000_000, sample_every_us=250_000)


def test_a_group_read_again_is_waited_for_before_it_is_passed_over(kit):
    # rpl_parallel::do_event calls sql_delay_event before process_gtid_for_restart_pos: the re-read
    # t1 (due at 2 s on B's clock, which now reads 1.2 s) waits until 4 s, then both are passed over
    tr = kit.run("model:mariadb-10.11", reread_history(kit))
    passed = [(s["trx"], s["t"]) for s in tr.all("skip", node="B") if s.get("reason") == "gtid already executed"]
    assert passed == [("t1", 4_000_000), ("t2", 4_000_000)]
    waiting = [s for s in tr.all("status", node="B") if 3_200_000 <= s["t"] < 4_000_000 and s["Slave_SQL_Running"] == "Yes"]
    assert waiting and all(s["Slave_SQL_Running_State"].startswith("Waiting until MASTER_DELAY") for s in waiting)
    assert [v["trx"] for v in tr.all("visible", node="B")] == ["t1", "t2"]  # nothing applied twice


def test_a_format_description_sent_again_does_not_move_the_lag_back(kit):
    # The real server's Trace of this History (corpus/server) shows Seconds_Behind_Master 0 for the
    # 4 s that t4 executes: t3 was stamped 50 s ahead, and the format description A's dump sends
    # again at B's reconnect, dated its binlog's start, does not take its place.
    from replcheck import io
    from conftest import REPO

    name = REPO / "corpus" / "server" / "fde-sent-again-keeps-a-newer-stamp"
    _, server = io.load_trace(name.with_suffix(".trace.jsonl"))
    model = kit.run("model:mariadb-10.11", io.load_history(name.with_suffix(".jsonl")))

    def lag_while_t4_executes(obs, t4_visible) -> set:
        t3_visible = next(o["t"] for o in obs if o["kind"] == "visible" and o["node"] == "B" and o["trx"] == "t3")
        return {o["Seconds_Behind_Master"] for o in obs if o["kind"] == "status" and o["node"] == "B"
                and t3_visible <= o["t"] < t4_visible}

    server_t4 = next(o["t"] for o in server if o["kind"] == "visible" and o["node"] == "B" and o["trx"] == "t4")
    assert lag_while_t4_executes(server, server_t4) == {0}
    assert lag_while_t4_executes(model.obs, model.first("visible", node="B", trx="t4")["t"]) == {0}
    assert kit.verdict("PARALLEL.SBM.VALUE", model).status == PASS


def test_a_restart_counts_the_lag_from_what_it_reads_after(kit):
    # The process builds its Relay_log_info anew (sql/rpl_rli.cc: last_master_timestamp 0): t1's
    # timestamp, 50 s ahead, is gone with the shutdown, and t2, read after the restart, sets the lag
    # while it executes (3 s to 7 s). Kept, t1's newer one would show 0 throughout.
    workers = {"slave_parallel_threads": 2}
    h = kit.make_history(["A", {"id": "B", "variables": workers}], [{"source": "A", "replica": "B", "latency_us": 1000}], [
        {"at": 0, "op": "trx", "node": "A", "trx": "t1", "timestamp": 1_700_000_050},
        {"at": 1_000_000, "op": "shutdown", "node": "B"},
        {"at": 2_000_000, "op": "restart", "node": "B"},
        {"at": 3_000_000, "op": "trx", "node": "A", "trx": "t2", "statements": [{"duration_us": 1000, "replica_cost_us": 4_000_000}]}],
        end_us=9_000_000, sample_every_us=500_000)
    tr = kit.run("model:mariadb-10.11", h)
    lag = [s["Seconds_Behind_Master"] for s in tr.all("status", node="B") if 5_000_000 <= s["t"] < 7_000_000]
    assert lag and min(lag) >= 1, lag
    assert tr.first("visible", node="B", trx="t2")["t"] >= 7_000_000


def test_a_marked_group_read_again_is_passed_over_not_filtered_again(kit):
    # t1, marked @@skip_replication, is filtered (FILTER_ON_SLAVE) and t3 committed after it in
    # domain 0. The rewinding stop makes B read t1 again: the coordinator passes it over at the
    # restart position (rpl_parallel::do_event) before a worker's Log_event::do_shall_skip would
    # ignore it, so gtid_slave_pos keeps t3's GTID, not t1's again (seed 300064, History 5).
    workers = {"slave_parallel_threads": 4, "replicate_events_marked_for_skip": "FILTER_ON_SLAVE"}
    h = kit.make_history([{"id": "A", "gtid_mode": True}, {"id": "B", "gtid_mode": True, "variables": workers}],
                         [{"source": "A", "replica": "B", "latency_us": 1000}], [
        {"at": 0, "op": "trx", "node": "A", "trx": "t1", "skip_replication": True},
        {"at": 100_000, "op": "trx", "node": "A", "trx": "t2", "domain": 1},
        {"at": 200_000, "op": "trx", "node": "A", "trx": "t3"},
        {"at": 1_000_000, "op": "stop_slave", "node": "B", "thread": "sql"},
        {"at": 1_500_000, "op": "start_slave", "node": "B", "thread": "sql"}], end_us=3_000_000, sample_every_us=250_000)
    tr = kit.run("model:mariadb-10.11", h)
    t3 = tr.first("visible", node="B", trx="t3")["gtid"]
    assert [f["trx"] for f in tr.all("filtered", node="B")] == ["t1"]
    passed = [s["trx"] for s in tr.all("skip", node="B") if s.get("reason") == "gtid already executed"]
    assert passed == ["t1", "t2", "t3"]
    shown = {s["variables"]["gtid_slave_pos"] for s in tr.all("server_status", node="B") if s["t"] >= 1_500_000}
    assert shown == {f"{t3},{tr.first('visible', node='B', trx='t2')['gtid']}"}
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS
