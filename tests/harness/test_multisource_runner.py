"""The conformance runner on multi-source Histories (#17 item 2): named connections keyed by
(replica, connection_name) in the statements, the harness's topology and the attribution of a
row to a connection (no server); then ms-two-sources and ms-diamond-ignore-duplicates run on a
real MariaDB (server tier): a sample, relay log and SQL thread stop per connection, and the
MULTISOURCE.* verdicts ci/mariadb.toml pins (the diamond's, outside --quick, pinned here)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib

import pytest
from test_harness_mariadb import require_server

from conftest import HANG_GUARD_S, REPO
from replcheck import conform, io
from replcheck.harness import observe as OB
from replcheck.harness import runner as R
from replcheck.harness.errors import HarnessError, TopologyError
from replcheck.harness.mariadb import Cluster
from replcheck.harness.sqlclient import connection_clause
from replcheck.harness.topology import Topology
from replcheck.harness.relaylog import Event
from replcheck.model import multisource as MS

US = 1_000_000
HISTORIES = REPO / "spec" / "histories"


def _diamond() -> dict:
    return io.load_history(HISTORIES / "ms-diamond-ignore-duplicates.jsonl")


# ---------------------------------------------------------------------------------------------
# Without a server


def test_a_connection_is_named_after_the_keyword_and_only_as_a_quoted_word():
    assert connection_clause(None) == ""
    assert connection_clause("a_1") == " 'a_1'"
    assert connection_clause("") == " ''"  # the default connection, named among the others
    for bad in ("a'b", "a b", "x" * 65, 1):
        with pytest.raises(HarnessError):
            connection_clause(bad)


@pytest.mark.parametrize("op, sql", [
    ({"op": "stop_slave", "connection": "a"}, "STOP SLAVE 'a'"),
    ({"op": "stop_slave", "connection": "a", "thread": "io"}, "STOP SLAVE 'a' IO_THREAD"),
    ({"op": "start_slave", "connection": "b", "thread": "sql"}, "START SLAVE 'b' SQL_THREAD"),
    ({"op": "start_slave", "connection": "b", "until": {"master_log_file": "bin.000001", "master_log_pos": 4}},
     "START SLAVE 'b' UNTIL MASTER_LOG_FILE = 'bin.000001', MASTER_LOG_POS = 4"),
    ({"op": "change_master", "connection": "a", "delay": 3}, "CHANGE MASTER 'a' TO MASTER_DELAY = 3"),
    ({"op": "reset_slave", "connection": "a"}, "RESET SLAVE 'a'"),
    ({"op": "set_global", "connection": "a", "variable": "sql_slave_skip_counter", "value": 1},
     "SET @@default_master_connection = 'a'; SET GLOBAL sql_slave_skip_counter = 1"),
    ({"op": "start_all_slaves"}, "START ALL SLAVES"),
    ({"op": "stop_all_slaves"}, "STOP ALL SLAVES"),
    # the default connection: the statement as a single-source History has it
    ({"op": "stop_slave"}, "STOP SLAVE"), ({"op": "stop_slave", "connection": ""}, "STOP SLAVE"),
    ({"op": "reset_slave"}, "RESET SLAVE"),
])
def test_statements_name_the_connection_they_address(op, sql):
    assert R.admin_statement({"at": 0, "node": "R", **op}) == sql


def test_a_connection_name_that_is_no_word_never_reaches_sql():
    with pytest.raises(R.RunnerError, match="connection"):
        R.admin_statement({"at": 0, "node": "R", "op": "stop_slave", "connection": "a'; DROP"})


def test_the_harness_topology_takes_named_connections_each_for_another_source():
    t = Topology.from_history({"nodes": [{"id": "A"}, {"id": "B"}, {"id": "R"}],
                               "channels": [{"source": "A", "replica": "R", "connection": "a", "delay": 2},
                                            {"source": "B", "replica": "R", "connection": "b"}]})
    assert [(c.source, c.connection, c.delay) for c in t.channels] == [("A", "a", 2), ("B", "b", 0)]
    for channels in ([{"source": "A", "replica": "R"}, {"source": "B", "replica": "R"}],  # two unnamed
                     [{"source": "A", "replica": "R", "connection": "a"}, {"source": "B", "replica": "R"}],
                     [{"source": "A", "replica": "R", "connection": "a"}, {"source": "B", "replica": "R", "connection": "a"}],
                     [{"source": "A", "replica": "R", "connection": "a"}, {"source": "A", "replica": "R", "connection": "b"}],
                     [{"source": "A", "replica": "R", "connection": "a-b"}]):
        with pytest.raises(TopologyError):
            Topology.from_history({"nodes": [{"id": "A"}, {"id": "B"}, {"id": "R"}], "channels": channels})


def test_a_multi_source_history_runs_but_failover_in_it_is_refused():
    h = _diamond()
    R.check_supported(h)
    bad = {**h, "ops": h["ops"] + [{"at": 5 * US, "op": "failover", "node": "B"}]}
    with pytest.raises(R.RunnerError, match=r"ops\[5\].*failover in a topology with named connections"):
        R.check_supported(bad)


def test_channels_are_keyed_by_replica_and_connection():
    r = R.Runner(_diamond())
    assert r.sources == {("B", None): "A", ("C", None): "A", ("D", "b"): "B", ("D", "c"): "C"}
    assert r.named == {"D"}
    assert OB.links_of(r.sources, "D") == [("D", "b"), ("D", "c")]
    assert r.ops._addressed({"op": "start_all_slaves", "node": "D"}) == [("D", "b"), ("D", "c")]
    assert r.ops._addressed({"op": "stop_slave", "node": "D", "connection": "c"}) == [("D", "c")]
    assert r.ops._addressed({"op": "stop_slave", "node": "B"}) == [("B", None)]
    assert r.collector._depth("D") == 2 and r.collector._depth("B") == 1 and r.collector._depth("A") == 0


def _relayed(r: R.Runner, conn: str, t: int, gtid: str = "1-1-1") -> None:
    r.observer._relay_event(("D", conn), t, f"{MS.relay_base(conn)}.000002", Event(615, 42, r.epoch_us // US, 162, 1, 300, f"GTID {gtid} trans"))


def test_a_row_is_applied_by_the_connection_that_had_it_due_first_and_a_second_copy_by_the_other():
    """Polling sees D's row, not which connection committed it: the one whose copy was relayed (and
    past its MASTER_DELAY) first. A second copy of the row (applied twice, MDEV-8354) is the other's."""
    r = R.Runner(_diamond())
    r.epoch_us = 1_700_000_000 * US
    _relayed(r, "c", 10_000)
    _relayed(r, "b", 20_000)
    obs = [o for _, _, o in r.obs]
    assert [(o["connection"], o["file"]) for o in obs] == [("c", "relay-c.000002"), ("b", "relay-b.000002")]
    relayed = {(o["node"], o["connection"], o["gtid"], o["idx"]): [o] for o in obs}
    assert r.collector._appliers("D", 0, 50_000, "1-1-1", relayed) == [(("D", "c"), 50_000)]
    r.seen_again[("D", 0)] = [90_000]
    assert r.collector._appliers("D", 0, 50_000, "1-1-1", relayed) == [(("D", "c"), 50_000), (("D", "b"), 90_000)]
    r.delays[("D", "c")] = 2  # c holds it in its delay: b, relayed later, has it due first
    assert r.collector._appliers("D", 0, 50_000, "1-1-1", relayed)[0][0] == ("D", "b")


def test_the_connection_that_did_not_apply_a_gtid_skipped_it_once_its_sql_thread_passed_it():
    """gtid_ignore_duplicates: c relayed t1, b applied it; c's skip is its first sample past the group
    in A's binlog (Exec_Master_Log_Pos), with the relay-log places of its copy. Not past it: no skip."""
    r = R.Runner(_diamond())
    r.epoch_us = 1_700_000_000 * US
    r.trx_names = ["t1"]
    copy = [{"t": 10_000, "file": "relay-c.000002", "pos": 615, "master_file": "bin.000001", "master_end": 300},
            {"t": 10_000, "file": "relay-c.000002", "pos": 657, "master_file": "bin.000001", "master_end": 377}]
    relayed = {("D", "c", "1-1-1", i): [o] for i, o in enumerate(copy)}
    behind = {"t": 20_000, "Relay_Master_Log_File": "bin.000001", "Exec_Master_Log_Pos": 300}
    past = {"t": 60_000, "Relay_Master_Log_File": "bin.000001", "Exec_Master_Log_Pos": 377}
    r.collector._duplicate_skips("D", 0, "1-1-1", {("D", "b")}, relayed, {("D", "c"): [behind]})
    assert not r.obs
    r.collector._duplicate_skips("D", 0, "1-1-1", {("D", "b")}, relayed, {("D", "c"): [behind, past]})
    [(_, _, skip)] = r.obs
    assert skip == {"t": 60_000, "kind": "skip", "node": "D", "trx": "t1", "gtid": "1-1-1", "reason": "gtid_ignore_duplicates",
                    "events": [["relay-c.000002", 615], ["relay-c.000002", 657]], "connection": "c"}
    r.history["header"]["topology"]["nodes"][3]["variables"] = {}  # without gtid_ignore_duplicates c applies its copy too
    r.obs.clear()
    r.collector._duplicate_skips("D", 0, "1-1-1", {("D", "b")}, relayed, {("D", "c"): [behind, past]})
    assert not r.obs


def test_start_all_slaves_starts_each_connection_not_running_and_stop_all_stops_each_running():
    r = R.Runner(_diamond())
    stopped = {"Using_Gtid": "Slave_Pos", "Slave_IO_Running": "No", "Slave_SQL_Running": "No", "Relay_Log_File": "relay-b.000002",
               "Relay_Log_Pos": "4"}
    running = {**stopped, "Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes"}
    op = {"at": 0, "op": "stop_all_slaves", "node": "D"}
    for link, before in ((("D", "b"), running), (("D", "c"), stopped)):
        r.ops._stopped_or_started(op, link, 7, None, 1938, before)
    assert [(o["kind"], o.get("connection")) for _, _, o in r.obs] == [("sql_stop", "b")]
    op = {"at": 0, "op": "start_all_slaves", "node": "D"}
    for link, before in ((("D", "b"), stopped), (("D", "c"), running)):
        r.ops._stopped_or_started(op, link, 8, None, 1937, before)
    assert r.sql_started == {("D", "b")}


def test_the_model_notes_each_connection_start_all_slaves_started():
    assert MS.all_slaves_note("start_all_slaves", ["a", "b"], True) == (1937, "SLAVE 'a' started")
    assert MS.all_slaves_note("stop_all_slaves", ["b"], True) == (1938, "SLAVE 'b' stopped")
    assert MS.all_slaves_note("stop_all_slaves", [], True) == (None, "")
    assert MS.all_slaves_note("start_all_slaves", ["a"], False) == (None, "")


# ---------------------------------------------------------------------------------------------
# With a real server


@pytest.fixture(scope="module")
def server():
    return require_server()


def _conform(name: str, out) -> tuple[dict, list[dict], dict]:
    """One scenario by `replcheck conform`: its trace (header, observations) and results."""
    r = subprocess.run([sys.executable, "-m", "replcheck.cli", "conform", "--server", "mariadb", "--history",
                        str(HISTORIES / f"{name}.jsonl"), "--out", str(out)], cwd=REPO, capture_output=True, text=True,
                       timeout=HANG_GUARD_S, env=os.environ)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads((out / "results.json").read_text())
    last = doc["attempts"][-1]["trace"]
    lines = [json.loads(line) for line in (out / last).read_text().splitlines()]
    return lines[0], lines[1:], doc


def _verdicts(doc: dict, requirements) -> dict[str, str]:
    return {row["requirement"]: row["status"] for row in doc["rows"] if row["requirement"] in requirements}


@pytest.mark.server
def test_two_sources_run_per_connection_and_meet_the_gate(server, tmp_path):
    header, obs, doc = _conform("ms-two-sources", tmp_path / "out")
    assert [(c["replica"], c["connection"]) for c in header["topology"]["channels"]] == [("R", "a"), ("R", "b")]
    of = lambda kind: [o for o in obs if o["kind"] == kind and o["node"] == "R"]  # noqa: E731
    for conn in ("a", "b"):  # a sample per connection, its relay log named after it (SHOW ALL SLAVES STATUS)
        samples = [s for s in of("status") if s.get("connection") == conn]
        assert samples and all(s["Relay_Log_File"].startswith(f"relay-{conn}.") for s in samples)
        relays = [o for o in of("relay") if o.get("connection") == conn]
        assert relays and all(o["file"].startswith(f"relay-{conn}.") for o in relays)
    assert not [s for s in of("status") if "connection" not in s]  # the default connection is never configured
    # b applies t3 while a is stopped; a's t1 is applied by a, once, after START SLAVE 'a'
    applies = {(o["trx"], o["connection"]) for o in of("apply") if o.get("idx") == 0 and o.get("trx")}
    assert applies == {("t1", "a"), ("t2", "b"), ("t3", "b"), ("t4", "a"), ("t5", "b")}
    stop_a = next(o for o in of("stmt") if o["op"] == "stop_slave")
    assert stop_a["connection"] == "a" and stop_a["errno"] is None
    stop_all = next(o for o in of("stmt") if o["op"] == "stop_all_slaves")
    assert (stop_all["warning"], stop_all["message"]) == (1938, "SLAVE 'a' stopped")  # as the model has it
    assert {o["connection"] for o in of("sql_stop") if o["t"] == stop_all["t"]} == {"a", "b"}
    # gtid_slave_pos is the server's, both domains in it
    assert of("server_status")[-1]["variables"]["gtid_slave_pos"] == "1-1-2,2-2-3"
    scenario = next(s for s in conform.load_scenarios() if s.name == "ms-two-sources")
    with open(REPO / "ci" / "mariadb.toml", "rb") as f:
        pinned = tomllib.load(f)["verdicts"][f"conformance:{conform.column(server.version)}"]
    assert _verdicts(doc, scenario.exercises) == {req: pinned[req] for req in scenario.exercises}, doc["findings"]
    assert not doc["findings"]


@pytest.mark.server
def test_a_diamond_with_gtid_ignore_duplicates_applies_each_gtid_once(server, tmp_path):
    """Outside --quick, so its verdicts are pinned here: D applies t1, t2 and t3 once each."""
    header, obs, doc = _conform("ms-diamond-ignore-duplicates", tmp_path / "out")
    data = next(o for o in obs if o["kind"] == "data" and o["node"] == "D")
    assert data["counts"] == {"t1": 1, "t2": 1, "t3": 1}
    applied = [o for o in obs if o["kind"] == "apply" and o["node"] == "D" and o.get("last") and o.get("trx")]
    assert sorted(o["trx"] for o in applied) == ["t1", "t2", "t3"] and {o["connection"] for o in applied} <= {"b", "c"}
    assert {o.get("connection") for o in obs if o["kind"] == "status" and o["node"] == "D"} == {"b", "c"}
    by = {o["gtid"]: o["connection"] for o in applied}
    skips = [o for o in obs if o["kind"] == "skip" and o["node"] == "D"]
    assert all(o["reason"] == "gtid_ignore_duplicates" and by[o["gtid"]] != o["connection"] for o in skips)  # the other's copy
    assert _verdicts(doc, {"MULTISOURCE.IGNORE_DUPLICATES.ONCE", "MULTISOURCE.INDEPENDENT"}) == {
        "MULTISOURCE.IGNORE_DUPLICATES.ONCE": "pass", "MULTISOURCE.INDEPENDENT": "pass"}
    assert not doc["findings"]


@pytest.mark.server
def test_statements_naming_a_connection_act_on_it_alone(server):
    """The runner's statements on MariaDB 10.11: STOP SLAVE 'a', SET GLOBAL sql_slave_skip_counter
    for 'a' (through @@default_master_connection), CHANGE MASTER 'a' TO MASTER_DELAY: connection 'b' is untouched."""
    topology = {"nodes": [{"id": "A"}, {"id": "B"}, {"id": "R"}],
                "channels": [{"source": "A", "replica": "R", "connection": "a"}, {"source": "B", "replica": "R", "connection": "b"}]}
    with Cluster(topology, server=server) as c:
        for op in ({"op": "stop_slave", "connection": "a"}, {"op": "change_master", "connection": "a", "delay": 7},
                   {"op": "set_global", "connection": "a", "variable": "sql_slave_skip_counter", "value": 2}):
            c.sql("R", R.admin_statement({"at": 0, "node": "R", **op}))
        a, b = c.show_slave_status("R", "a"), c.show_slave_status("R", "b")
        assert (a["Slave_SQL_Running"], a["SQL_Delay"], a["Skip_Counter"]) == ("No", "7", "2")
        assert (b["Slave_SQL_Running"], b["SQL_Delay"], b["Skip_Counter"]) == ("Yes", "0", "0")
        assert c.show_slave_status("R") == {}  # the default connection: never configured
