"""A server restarted with another configuration (the restart op's `variables` and `log_slave_updates`),
SET GLOBAL of MariaDB's replicate-* rules, and a named connection owning a GTID domain once per group
its workers hold."""
from __future__ import annotations

from collections import Counter

from replcheck import systems
from replcheck.spec.formats import ER_STARTUP_OPTIONS

US = 1_000_000
MARIADB = "model:mariadb-10.11"


def _history(nodes, channels, ops, end_us=8 * US) -> dict:
    nodes = [n if isinstance(n, dict) else {"id": n} for n in nodes]
    return {"header": {"schema": "replcheck.history/1", "name": "restart-config", "sample_every_us": US // 2, "end_us": end_us,
                       "topology": {"nodes": nodes, "channels": channels}}, "ops": ops}


def _run(system: str, history: dict) -> list[dict]:
    return systems.get(system).run(history)[1]


def test_a_restart_takes_its_options_for_good_and_keeps_master_delay():
    ops = [{"at": 0, "op": "stop_slave", "node": "B"}, {"at": 0, "op": "change_master", "node": "B", "delay": 3},
           {"at": 0, "op": "start_slave", "node": "B"},
           {"at": US, "op": "shutdown", "node": "B"},
           {"at": 2 * US, "op": "restart", "node": "B", "variables": {"slave_parallel_threads": 4}},
           {"at": 3 * US, "op": "crash", "node": "B"}, {"at": 4 * US, "op": "restart", "node": "B"}]
    obs = _run(MARIADB, _history(["A", "B"], [{"source": "A", "replica": "B"}], ops))
    restarts = [o for o in obs if o["kind"] == "restart" and o["node"] == "B"]
    assert restarts[0]["variables"] == {"slave_parallel_threads": 4} and "variables" not in restarts[1]
    # workers at each start of the SQL thread after the first restart, the second (plain) one too
    assert [o["workers"] for o in obs if o["kind"] == "parallel" and o["node"] == "B" and o["t"] >= 2 * US][:2] == [4, 4]
    # MASTER_DELAY is master.info's: a restart keeps it
    assert {o["SQL_Delay"] for o in obs if o["kind"] == "status" and o["node"] == "B" and o["t"] > 4 * US} == {3}


def test_a_hierarchical_server_refuses_to_start_without_log_slave_updates():
    nodes = [{"id": n, "rpl_hierarchical": True} for n in ("A", "B")]
    ops = [{"at": US, "op": "shutdown", "node": "B"}, {"at": 2 * US, "op": "restart", "node": "B", "log_slave_updates": False},
           {"at": 3 * US, "op": "restart", "node": "B", "log_slave_updates": True}]
    obs = _run("model:groupid", _history(nodes, [{"source": "A", "replica": "B"}], ops))
    refused = [o for o in obs if o["kind"] == "error" and o.get("op") == "restart" and o["node"] == "B"]
    assert [o["errno"] for o in refused] == [ER_STARTUP_OPTIONS] and refused[0]["t"] == 2 * US
    assert [o["t"] for o in obs if o["kind"] == "restart" and o["node"] == "B"] == [3 * US]


def test_mariadb_sets_a_replicate_rule_only_with_the_threads_stopped_and_mysql_has_none():
    ops = [{"at": 0, "op": "set_global", "node": "B", "variable": "replicate_ignore_table", "value": "rc.m"},
           {"at": 1, "op": "stop_slave", "node": "B"},
           {"at": 2, "op": "set_global", "node": "B", "variable": "replicate_ignore_table", "value": "rc.m"},
           {"at": 3, "op": "start_slave", "node": "B"},
           {"at": US, "op": "trx", "node": "A", "trx": "t1", "engine": "myisam"}]
    h = _history(["A", "B"], [{"source": "A", "replica": "B"}], ops)
    for system, errnos, filtered in ((MARIADB, [1198, None], ["t1"]), ("model:mysql-8.0", [1193, 1193], [])):
        obs = _run(system, h)
        assert [o["errno"] for o in obs if o["kind"] == "stmt" and o["op"] == "set_global"] == errnos, system
        assert [o["trx"] for o in obs if o["kind"] == "filtered" and o["node"] == "B"] == filtered, system


def test_a_connection_whose_workers_hold_a_domain_keeps_it_until_the_last_commits():
    # 'b' starts with t0 and t1 (domain 1) relayed and hands them to two workers; t0 commits first. The
    # domain stays 'b''s until t1 commits too (check_duplicate_gtid's owner_count), so 'c', started
    # meanwhile and waiting on it, then skips t1: D applies each GTID once. Freed at t0's commit, 'c'
    # would apply t1 a second time.
    nodes = [{"id": "A", "variables": {"gtid_domain_id": 1}}, "B", "C",
             {"id": "D", "variables": {"gtid_ignore_duplicates": True, "slave_parallel_threads": 4}}]
    channels = [{"source": "A", "replica": m, "latency_us": 1000} for m in ("B", "C")] + [
        {"source": m, "replica": "D", "connection": m.lower(), "latency_us": 1000} for m in ("B", "C")]
    ops = [{"at": 0, "op": "stop_slave", "node": "D", "connection": "b", "thread": "sql"},
           {"at": 0, "op": "stop_slave", "node": "D", "connection": "c"}]
    ops += [{"at": 1, "op": "trx", "node": "A", "trx": f"t{i}", "statements": [{"replica_cost_us": cost}]}
            for i, cost in enumerate((100_000, 400_000))]
    ops += [{"at": 2 * US, "op": "start_slave", "node": "D", "connection": "b", "thread": "sql"},
            {"at": 2 * US + 50_000, "op": "start_slave", "node": "D", "connection": "c"}]
    obs = _run(MARIADB, _history(nodes, channels, ops))
    applied = Counter(o["gtid"] for o in obs if o["kind"] == "visible" and o["node"] == "D")
    assert len(applied) == 2 and set(applied.values()) == {1}, applied
