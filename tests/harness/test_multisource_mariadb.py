"""Multi-source replication on a real MariaDB 10.11, side by side with the model: what the model's
multi-source rules say (model/multisource.py) for the statements a History can hold, checked
against the server, with the connections set up by hand on the harness's servers (the conformance
runner's own multi-source runs: test_multisource_runner.py)."""
from __future__ import annotations

import pytest
from test_harness_mariadb import _wait_rows, require_server

from replcheck.harness.errors import SqlError
from replcheck.harness.mariadb import REPL_USER, Cluster
from replcheck.model.multisource import unconfigured_default
from replcheck.systems import get

pytestmark = pytest.mark.server
MDB = get("model:mariadb-10.11")


@pytest.fixture(scope="module")
def server():
    return require_server()


def _change_master(c: Cluster, name: str, source: str, delay: int = 0) -> str:
    return (f"CHANGE MASTER '{name}' TO MASTER_HOST='127.0.0.1', MASTER_PORT={c.port(source)}, MASTER_USER='{REPL_USER}', "
            f"MASTER_PASSWORD='{c.repl_password}', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1, MASTER_DELAY={delay}")


def _connections(c: Cluster, node: str) -> dict[str, dict]:
    cols, rows = c.query(node, "SHOW ALL SLAVES STATUS")
    return {r[cols.index("Connection_name")]: dict(zip(cols, r)) for r in rows}


def _model(ops: list[dict]) -> dict[str, list[dict]]:
    """The model's trace of two sources (A domain 1, B domain 2) and R with connections 'a' (MASTER_DELAY 2) and 'b'."""
    history = {"header": {"schema": "replcheck.history/1", "name": "ms", "sample_every_us": 500_000, "topology": {
        "nodes": [{"id": "A", "variables": {"gtid_domain_id": 1}}, {"id": "B", "variables": {"gtid_domain_id": 2}}, {"id": "R"}],
        "channels": [{"source": "A", "replica": "R", "connection": "a", "latency_us": 1000, "delay": 2},
                     {"source": "B", "replica": "R", "connection": "b", "latency_us": 1000}]}}, "ops": ops}
    header, obs = MDB.run(history)
    out: dict[str, list[dict]] = {}
    for o in obs:
        out.setdefault(o["kind"], []).append(o)
    return out


def test_two_sources_each_connection_on_its_own(server):
    model = _model([{"at": 100_000, "op": "trx", "node": "A", "trx": "t1"},
                    {"at": 300_000, "op": "stop_slave", "node": "R", "connection": "a"},
                    {"at": 400_000, "op": "trx", "node": "B", "trx": "t2"},
                    {"at": 3_000_000, "op": "start_slave", "node": "R", "connection": "a"}])
    topology = {"nodes": [{"id": "A", "variables": {"gtid_domain_id": 1}}, {"id": "B", "variables": {"gtid_domain_id": 2}},
                          {"id": "R"}], "channels": []}
    with Cluster(topology, server=server) as c:
        for n in "ABR":
            c.sql(n, "SET SESSION sql_log_bin=0; CREATE DATABASE d; CREATE TABLE d.t (k INT PRIMARY KEY) ENGINE=InnoDB")
        c.sql("R", _change_master(c, "a", "A", 2) + ";\n" + _change_master(c, "b", "B") + ";\nSTART ALL SLAVES")
        c.sql("A", "INSERT INTO d.t VALUES (1)")
        c.sql("R", "STOP SLAVE 'a'")
        c.sql("B", "INSERT INTO d.t VALUES (2)")
        _wait_rows(c, "R", "SELECT k FROM d.t WHERE k = 2", [["2"]])  # b applies while a is stopped
        rows = _connections(c, "R")
        assert {n: (r["Slave_IO_Running"], r["Slave_SQL_Running"], r["SQL_Delay"]) for n, r in rows.items()} == {
            "a": ("No", "No", "2"), "b": ("Yes", "Yes", "0")}
        model_rows = {s["connection"]: (s["Slave_IO_Running"], s["Slave_SQL_Running"], str(s["SQL_Delay"]))
                      for s in model["status"] if 1_000_000 <= s["t"] < 3_000_000}
        assert model_rows == {n: (r["Slave_IO_Running"], r["Slave_SQL_Running"], r["SQL_Delay"]) for n, r in rows.items()}
        # one relay log per connection, named after it (sql/rpl_mi.cc), as in the model
        assert {n: r["Relay_Log_File"].split(".")[0] for n, r in rows.items()} == {"a": "relay-a", "b": "relay-b"}
        assert {r["file"].split(".")[0] for r in model["relay"]} == {"relay-a", "relay-b"}
        c.sql("R", "START SLAVE 'a'")
        _wait_rows(c, "R", "SELECT k FROM d.t ORDER BY k", [["1"], ["2"]])
        # gtid_slave_pos is the server's, shared by every connection: one GTID per domain
        assert {r["Gtid_Slave_Pos"] for r in _connections(c, "R").values()} == {"1-1-1,2-2-1"}
        assert model["server_status"][-1]["variables"]["gtid_slave_pos"] == "1-1-1,2-2-1"


def test_the_default_connection_of_a_replica_with_named_ones(server):
    ops = ["stop_slave", "start_slave", "reset_slave"]
    with Cluster({"nodes": [{"id": "A"}, {"id": "R"}], "channels": []}, server=server) as c:
        c.sql("R", _change_master(c, "a", "A") + ";\nSTART SLAVE 'a'")
        for op in ops:
            statement = {"stop_slave": "STOP SLAVE", "start_slave": "START SLAVE", "reset_slave": "RESET SLAVE"}[op]
            errno, warning, message = unconfigured_default(op, mariadb=True)
            try:
                cols, rows = c.query("R", f"{statement}; SHOW WARNINGS")
                got = (None, int(rows[0][1]) if rows else None, rows[0][2] if rows else "")
            except SqlError as e:
                got = (e.errno, None, e.message)
            assert got == (errno, warning, message), statement
        assert set(_connections(c, "R")) == {"a"}  # the default connection never shows


def test_a_diamond_with_gtid_ignore_duplicates_applies_each_gtid_once(server):
    topology = {"nodes": [{"id": "A", "variables": {"gtid_domain_id": 1}}, {"id": "B"}, {"id": "C"},
                          {"id": "D", "variables": {"gtid_ignore_duplicates": True}}],
                "channels": [{"source": "A", "replica": "B"}, {"source": "A", "replica": "C"}]}
    with Cluster(topology, server=server) as c:
        c.sql("A", "CREATE DATABASE d; CREATE TABLE d.t (k INT PRIMARY KEY) ENGINE=InnoDB")
        _wait_rows(c, "B", "SHOW TABLES FROM d", [["t"]])
        _wait_rows(c, "C", "SHOW TABLES FROM d", [["t"]])
        c.sql("D", _change_master(c, "b", "B") + ";\n" + _change_master(c, "c", "C") + ";\nSTART ALL SLAVES")
        c.sql("A", "INSERT INTO d.t VALUES (1); INSERT INTO d.t VALUES (2)")
        _wait_rows(c, "D", "SELECT k FROM d.t ORDER BY k", [["1"], ["2"]])
        logged = {}
        for node in ("A", "D"):
            cols, rows = c.query(node, "SHOW BINLOG EVENTS")
            logged[node] = [r[cols.index("Info")].split("GTID ")[-1] for r in rows if r[cols.index("Event_type")] == "Gtid"]
        assert logged["D"] == logged["A"] and len(logged["A"]) == 4  # CREATE DATABASE, CREATE TABLE, two inserts: each once
