"""The real-server runner on a real MariaDB (skipped when there is none): a delayed row, kill -9,
failover, lost acks, purges, failing statements and a recorded incident, nodes down at the end."""
from __future__ import annotations

import copy
import re
import time

import pytest

from replcheck import io
from replcheck.features import load_features
from replcheck.harness import collect as CO
from replcheck.harness import observe as OB
from replcheck.harness import runner as R
from replcheck.spec import formats as F
from replcheck.harness.mariadb import Cluster
from replcheck.properties import core
from conftest import HISTORIES
from test_harness_mariadb import require_server
from test_runner import US, _history


# ---------------------------------------------------------------------------------------------
# With a real server


@pytest.fixture(scope="module")
def server():
    return require_server()


def test_a_delayed_row_on_a_real_server(server, tmp_path, short_tmp):
    load_features()
    h = _history([{"at": 300_000, "op": "trx", "node": "A", "trx": "t'1"},
                  {"at": 400_000, "op": "change_master", "node": "B", "delay_sql": "blah"}],
                 channels=({"source": "A", "replica": "B", "delay": 1},), end_us=1_600_000, sample_every_us=500_000)
    original = copy.deepcopy(h)
    r = R.Runner(h, scale=1.0, tmpdir=short_tmp)
    header, obs = r.run()
    assert h == original
    path = tmp_path / "t.jsonl"
    path.write_text(io.dumps_lines(header, obs))
    io.load_trace(path)  # the trace schema's, like a model's trace
    assert header["system"] == f"mariadb:{server.version}" and header["server_version"] == server.version
    assert header["resolution_us"] >= r.poll_us and header["time_scale"] == 1.0 and "relay" not in header["unobserved"]
    assert header["epoch_us"] % US == 0
    commit = next(o for o in obs if o["kind"] == "commit")
    assert commit["trx"] == "t'1" and re.fullmatch(r"0-1-\d+", commit["gtid"]) and commit["semisync"] is None
    seen_b = next(o for o in obs if o["kind"] == "visible" and o["node"] == "B")
    gtid_event = next(o for o in obs if o["kind"] == "binlog" and o["node"] == "A" and o["type"] == "GTID_LOG_EVENT")
    assert gtid_event["trx"] == "t'1" and gtid_event["when"] * US - header["epoch_us"] <= commit["t"]
    assert seen_b["t"] >= gtid_event["when"] * US - header["epoch_us"] + US  # not before its due time
    stmt = next(o for o in obs if o["kind"] == "stmt")
    assert stmt["op"] == "change_master" and stmt["errno"] == 1064 and stmt["delay"] is None
    assert any(o["kind"] == "error" and o["errno"] == 1064 for o in obs)
    assert {o["node"]: o["counts"] for o in obs if o["kind"] == "data"} == {"A": {"t'1": 1}, "B": {"t'1": 1}}
    status = [o for o in obs if o["kind"] == "status"]
    assert status and all(s["SQL_Delay"] == 1 for s in status)
    assert {o["t"] for o in obs} and [o["t"] for o in obs] == sorted(o["t"] for o in obs)
    verdicts = {v.requirement: v.status for v in core.run_properties(core.TraceView(header, obs))}
    assert verdicts["WL344.WAIT.RULE"] == core.PASS and verdicts["WL344.CM.INVALID"] == core.PASS
    # The relay log, read with mariadb-binlog: t'1's group reached B, and what needs it is judged.
    relayed = [o for o in obs if o["kind"] == "relay" and o["node"] == "B" and o["trx"] == "t'1"]
    assert relayed and relayed[0]["type"] == "GTID_LOG_EVENT" and relayed[-1]["last"]
    assert verdicts["WL344.SSS.REMAINING"] != core.NOT_EXERCISED


@pytest.mark.parametrize("name", ["dur-process-crash", "dur-process-crash-sync-binlog-1"])
def test_kill_9_of_the_source_loses_no_commit_and_reuses_no_gtid(server, short_tmp, name):
    """#16 mechanism 2 on the real server (the conformance scenarios of the same names): a process
    crash (kill -9) keeps what was written, with sync_binlog = 0 (the OS decides) as with 1; a
    machine crash cannot be made here (refused)."""
    load_features()
    h = io.load_history(HISTORIES / f"{name}.jsonl")
    header, obs = R.Runner(h, scale=0.2, tmpdir=short_tmp).run()
    assert [o["node"] for o in obs if o["kind"] in ("crash", "restart")] == ["A", "A"]
    assert {"binlog_sync", "recovery"} <= set(header["unobserved"])
    data = {o["node"]: o["counts"] for o in obs if o["kind"] == "data"}
    assert data == {n: {f"w{i}": 1 for i in range(1, 5)} for n in "AB"}, data
    verdicts = {v.requirement: v.status for v in core.run_properties(core.TraceView(header, obs))}
    assert verdicts["DURABLE.PROCESS_CRASH.NO_LOSS"] == core.PASS and verdicts["DURABLE.GTID.NO_REUSE"] == core.PASS
    assert verdicts["DURABLE.RECOVERY.AGREE"] == verdicts["DURABLE.SEND.SYNCED"] == core.NOT_EXERCISED


def test_the_row_table_shows_a_double_apply_as_two(server, short_tmp):
    """No primary or unique key: the same row event applied twice leaves two rows, not an error."""
    with Cluster({"nodes": [{"id": "A"}]}, server=server, tmpdir=short_tmp) as c:
        c.sql("A", "SET sql_log_bin = 0; " + R.SCHEMA)
        c.sql("A", "INSERT INTO rc.r (k, part) VALUES (5, 0); INSERT INTO rc.r (k, part) VALUES (5, 0); "
                   "INSERT INTO rc.r (k, part) VALUES (5, 1); CREATE TABLE rc.d6 (i INT)")
        r = R.Runner(_history([]))
        assert r.observer._counts(c._client(c._state("A"), OB.POLL)) == {5: 2, 6: 1}


def test_failover_by_gtid_promotes_and_repoints(server, short_tmp):
    """A -> B, A -> C; kill -9 of A; failover electing the most advanced replica (a tie: B, the
    first); C is repointed to B by GTID and gets B's own new transaction and nothing twice."""
    load_features()
    h = _history([{"at": 200_000, "op": "trx", "node": "A", "trx": "t1"},
                  {"at": 600_000, "op": "crash", "node": "A"},
                  {"at": 700_000, "op": "failover", "node": "C", "elect": True},
                  {"at": 1_000_000, "op": "trx", "node": "B", "trx": "t2"},
                  {"at": 1_100_000, "op": "failover", "node": "B"}],  # B is a replica no more
                 channels=({"source": "A", "replica": "B"}, {"source": "A", "replica": "C"}),
                 nodes=({"id": "A"}, {"id": "B"}, {"id": "C"}), end_us=1_800_000)
    header, obs = R.Runner(h, scale=1.0, tmpdir=short_tmp).run()
    assert [(o["kind"], o["node"], o["old"]) for o in obs if o["kind"] in ("failover", "promoted")] == \
        [("failover", "B", "A"), ("promoted", "B", "A")]
    steps = [(o["op"], o.get("thread"), o["errno"]) for o in obs if o["kind"] == "stmt" and o["node"] == "B"]
    assert steps == [("stop_slave", None, None), ("change_master", None, None), ("start_slave", "sql", None)]
    assert any(o["kind"] == "error" and o["node"] == "B" and o["errno"] == F.ER_BAD_SLAVE for o in obs)
    assert {o["node"]: o["counts"] for o in obs if o["kind"] == "data"} == {"B": {"t1": 1, "t2": 1}, "C": {"t1": 1, "t2": 1}}
    t2 = next(o for o in obs if o["kind"] == "commit" and o["trx"] == "t2")
    assert t2.get("errno") is None and t2["gtid"].startswith("0-2-")  # B's own server_id
    applied = [o for o in obs if o["kind"] == "apply" and o["node"] == "C" and o["trx"] == "t2"]
    assert applied and all(o["source"] == "B" for o in applied)
    verdicts = {v.requirement: v.status for v in core.run_properties(core.TraceView(header, obs))}
    assert verdicts["MARIADB.GTID.SLAVE_POS"] == core.PASS


def test_acks_are_lost_on_a_channel_a_failover_repointed(server, short_tmp):
    """A -> B, A -> C, semi-sync on all; A crashes, B is promoted and C repointed to it: C's channel
    keeps its relay, so an ack C sends B is seen (from B) and lose_acks drops the next one."""
    load_features()
    semi = {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": 500, "rpl_semi_sync_slave_enabled": True}
    h = _history([{"at": 200_000, "op": "trx", "node": "A", "trx": "t1"},
                  {"at": 600_000, "op": "crash", "node": "A"},
                  {"at": 700_000, "op": "failover", "node": "B"},
                  {"at": 1_200_000, "op": "trx", "node": "B", "trx": "t2"},
                  {"at": 1_700_000, "op": "lose_acks", "node": "C", "count": 1},
                  {"at": 1_800_000, "op": "trx", "node": "B", "trx": "t3"}],
                 channels=({"source": "A", "replica": "B"}, {"source": "A", "replica": "C"}),
                 nodes=({"id": "A", "variables": semi}, {"id": "B", "variables": semi}, {"id": "C", "variables": semi}),
                 end_us=3_000_000)
    header, obs = R.Runner(h, scale=1.0, tmpdir=short_tmp).run()
    assert "ack" not in header["unobserved"]
    acks_from_b = [o for o in obs if o["kind"] == "ack" and o["node"] == "B" and o["replica"] == "C"]
    t2_end = max(o["end"] for o in obs if o["kind"] == "binlog" and o["node"] == "B" and o["trx"] == "t2")
    assert any(o["pos"] == t2_end for o in acks_from_b)  # C's ack of t2 went to B through the relay
    assert any("dropped C's ack" in n for n in header["notes"])
    commits = {o["trx"]: o for o in obs if o["kind"] == "commit"}
    assert commits["t3"]["semisync"] == "no"  # its one ack lost: the commit waited out the timeout


def _tz_for_local_hour(hour: int) -> str:
    """A POSIX TZ under which the local hour is `hour` now (hours behind UTC: UTC+N is N behind)."""
    behind = (time.gmtime().tm_hour - hour + 12) % 24 - 12
    return f"RCT{behind:+d}"


@pytest.mark.parametrize("local_hour", [3, 15])
def test_lost_acks_on_a_real_server(server, short_tmp, monkeypatch, local_hour):
    """lose_acks: the relay drops B's next ack, so the commit waits out the timeout; the acks that
    pass are observed, and the header says how. The servers run at 03:xx and 15:xx local time (TZ):
    MariaDB space-pads an hour before 10 in its error log, whose lines the runner once missed;
    the log-based verdicts must not depend on the hour."""
    monkeypatch.setenv("TZ", _tz_for_local_hour(local_hour))  # the servers inherit it (Cluster's env)
    load_features()
    h = _history([{"at": 100_000, "op": "lose_acks", "node": "B", "count": 1},
                  {"at": 200_000, "op": "trx", "node": "A", "trx": "t1"},
                  {"at": 1_500_000, "op": "trx", "node": "A", "trx": "t2"}],
                 channels=({"source": "A", "replica": "B"},),
                 nodes=({"id": "A", "variables": {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": 500}},
                        {"id": "B", "variables": {"rpl_semi_sync_slave_enabled": True}}), end_us=2_500_000)
    header, obs = R.Runner(h, scale=1.0, tmpdir=short_tmp).run()
    commits = {o["trx"]: o for o in obs if o["kind"] == "commit"}
    assert commits["t1"]["semisync"] == "no" and commits["t1"].get("errno") is None
    assert any(o["kind"] == "log" and o["node"] == "A" and "Timeout waiting for reply" in o["message"] for o in obs)
    # relay logs read whole (mariadb-binlog), acks seen by the relay: the trace misses neither
    assert not {"relay", "ack"} & set(header["unobserved"]) and any("dropped B's ack" in n for n in header["notes"])
    acks = [o for o in obs if o["kind"] == "ack"]
    assert acks and all(o["node"] == "A" and o["replica"] == "B" for o in acks)
    t2_end = max(o["end"] for o in obs if o["kind"] == "binlog" and o["node"] == "A" and o["trx"] == "t2")
    assert any(o["pos"] == t2_end for o in acks)  # t2's ack passed
    verdicts = {v.requirement: v.status for v in core.run_properties(core.TraceView(header, obs))}
    # Every ack here comes while OFF (t1's timeout) or at t2's switch back ON, where a master asks for
    # replies to any event end (update_sync_header): ACK.LAST_EVENT judges acks only while ON.
    assert verdicts["WL1720.ACK.LAST_EVENT"] != core.VIOLATED and verdicts["WL1720.TIMEOUT.ASYNC"] == core.PASS
    # The servers did write local hours: InnoDB's note of its buffer pool load says when, "YYMMDD HH:MM:SS".
    hours = {int(m.group(1)) for o in obs if o["kind"] == "log"
             and (m := re.search(r"load completed at \d{6} +(\d{1,2}):", o["message"]))}
    assert hours and hours <= {local_hour, (local_hour + 1) % 24}, hours


def test_purged_binlogs_a_stopped_replica_needs_stop_its_io_thread(server, tmp_path, short_tmp):
    """B's IO thread is stopped while A writes t2, rotates and purges the binlog holding it (after
    a refused PURGE TO a file not in the index): START SLAVE IO_THREAD fails with 1236 and B
    applies nothing later from A. The purged binlog's events are still in the trace."""
    load_features()
    h = _history([{"at": 100_000, "op": "trx", "node": "A", "trx": "t1"},
                  {"at": 300_000, "op": "stop_slave", "node": "B", "thread": "io"},
                  {"at": 400_000, "op": "trx", "node": "A", "trx": "t2"},
                  {"at": 500_000, "op": "flush_logs", "node": "A"},
                  {"at": 600_000, "op": "purge_binary_logs", "node": "A", "to": "bin.000009"},
                  {"at": 700_000, "op": "purge_binary_logs", "node": "A", "to": "bin.000002"},
                  {"at": 800_000, "op": "trx", "node": "A", "trx": "t3"},
                  {"at": 900_000, "op": "start_slave", "node": "B", "thread": "io"},
                  {"at": 1_000_000, "op": "trx", "node": "A", "trx": "t4"}],
                 channels=({"source": "A", "replica": "B"},), end_us=1_400_000)
    header, obs = R.Runner(h, scale=1.0, tmpdir=short_tmp).run()
    path = tmp_path / "t.jsonl"
    path.write_text(io.dumps_lines(header, obs))
    io.load_trace(path)
    purges = [(o["to"], o["errno"], o["message"], o["purged"], o["remaining"])
              for o in obs if o["kind"] == "stmt" and o["op"] == "purge_binary_logs"]
    assert purges == [("bin.000009", 1373, "Target log not found in binlog index", [], ["bin.000001", "bin.000002"]),
                      ("bin.000002", None, "", ["bin.000001"], ["bin.000002"])]
    [io_error] = [o for o in obs if o["kind"] == "error" and o.get("thread") == "io"]
    assert io_error["node"] == "B" and io_error["errno"] == 1236 and "have been purged" in io_error["message"]
    start = next(o for o in obs if o["kind"] == "stmt" and o["op"] == "start_slave")
    assert io_error["t"] >= start["t"]
    assert {o["node"]: o["counts"] for o in obs if o["kind"] == "data"} == \
        {"A": {"t1": 1, "t2": 1, "t3": 1, "t4": 1}, "B": {"t1": 1, "t2": 0, "t3": 0, "t4": 0}}
    t2 = [o for o in obs if o["kind"] == "binlog" and o["node"] == "A" and o["trx"] == "t2"]
    assert t2 and {o["file"] for o in t2} == {"bin.000001"}  # read before the purge removed it
    verdicts = {v.requirement: v.status for v in core.run_properties(core.TraceView(header, obs))}
    assert verdicts["GGID.PURGE"] == core.PASS and verdicts["GGID.RECOVERY.EXACTLY_ONCE"] == core.PASS


def test_failing_statements_a_recorded_incident_and_master_status_on_a_real_server(server, short_tmp):
    """What a release build really does: a MyISAM insert failing on a duplicate after its first row
    keeps and replicates that row, an InnoDB one and a DROP of a missing table leave nothing; a
    statement cache overflow records an incident LOST_EVENTS with the server's own message, which
    stops the replica; SHOW MASTER STATUS says where the binlog is."""
    h = _history([{"at": 100_000, "op": "trx", "node": "A", "trx": "dup_myisam", "engine": "myisam",
                   "error": {"errno": 1062, "after_changes": True}},
                  {"at": 200_000, "op": "trx", "node": "A", "trx": "dup_innodb", "error": {"errno": 1062, "after_changes": True}},
                  {"at": 300_000, "op": "trx", "node": "A", "trx": "drop_missing", "ddl": True, "error": {"errno": 1051}},
                  {"at": 400_000, "op": "record_incident", "node": "A", "code": 1, "message": "asked"},
                  {"at": 500_000, "op": "show_master_status", "node": "A"}],
                 channels=({"source": "A", "replica": "B"},), end_us=1_500_000)
    header, obs = R.Runner(h, scale=1.0, tmpdir=short_tmp).run()
    commits = {o["trx"]: o for o in obs if o["kind"] == "commit"}
    assert {t: c["errno"] for t, c in commits.items()} == {"dup_myisam": 1062, "dup_innodb": 1062, "drop_missing": 1051}
    assert commits["dup_myisam"]["gtid"] and not commits["dup_innodb"]["gtid"] and not commits["drop_missing"]["gtid"]
    data = {o["node"]: o["counts"] for o in obs if o["kind"] == "data"}
    assert data["A"]["dup_myisam"] == data["B"]["dup_myisam"] == 1 and data["B"]["dup_innodb"] == 0
    [stmt] = [o for o in obs if o["kind"] == "stmt" and o["op"] == "record_incident"]
    [incident] = [o for o in obs if o["kind"] == "binlog" and o["type"] == "INCIDENT_EVENT"]
    assert stmt["errno"] == CO.ER_STMT_CACHE_FULL
    assert incident["incident"] == 1 and stmt["message"] == incident["message"] and stmt["asked_message"] == "asked"
    assert obs.index(stmt) < obs.index(incident) and stmt["t"] == incident["t"]  # as the models order them
    assert any(o["kind"] == "sql_stop" and o["node"] == "B" and o.get("errno") == 1590 for o in obs)
    [shown] = [o for o in obs if o["kind"] == "master_status"]
    assert shown["File"] == "bin.000002" and shown["Position"] > 4  # the rotation after the statement incident, as the models have it
    # the server's own times as intervals of trace time: nothing it recorded lies after it was read
    logged = [o for o in obs if o["kind"] == "log" and "logged" in o]
    assert logged and all(o["logged"][1] - o["logged"][0] == US and o["logged"][0] <= o["t"] for o in logged)
    written = [o for o in obs if o["kind"] == "binlog" and "written" in o]
    assert written and all(o["written"][0] <= o["t"] for o in written)
    assert incident["written"] == [stmt["t"], stmt["t"] + stmt["duration_us"]]


def test_a_node_down_at_the_end_has_its_binlog_read_from_disk_and_its_sql_thread_stopped(server, short_tmp):
    """A primary that crashed and a replica shut down before the run ended: the primary's binlog is
    still in the trace (read with mariadb-binlog, as the crash left it), and the replica's running SQL
    thread stopped with its server, as the models record it (sql_stop, reason crash)."""
    load_features()
    h = _history([{"at": 100_000, "op": "trx", "node": "A", "trx": "t1"},
                  {"at": 600_000, "op": "shutdown", "node": "B"},
                  {"at": 700_000, "op": "crash", "node": "A"}],
                 channels=({"source": "A", "replica": "B"},), end_us=1_000_000, sample_every_us=200_000)
    header, obs = R.Runner(h, scale=1.0, tmpdir=short_tmp).run()
    events = [o for o in obs if o["kind"] == "binlog" and o["node"] == "A"]
    assert [o["type"] for o in events if o["trx"] == "t1"][:2] == ["GTID_LOG_EVENT", "ANNOTATE_ROWS_EVENT"]
    assert events[0]["type"] == "FORMAT_DESCRIPTION_EVENT" and events[0]["pos"] == 4
    shutdown = next(o for o in obs if o["kind"] == "shutdown")
    stop = next(o for o in obs if o["kind"] == "sql_stop" and o["node"] == "B")
    assert stop["reason"] == "crash" and stop["t"] == shutdown["t"]
    assert not any(o["kind"] == "sql_stop" and o["node"] == "A" for o in obs)  # A replicates from nobody


def test_a_statement_sent_to_a_node_that_is_down_fails_as_the_models_say(server, short_tmp):
    """FLUSH RELAY LOGS on a replica crashed before it: the client's lost connection, as the models
    record it (an error, 2013), and the run goes on; it was the harness's own failure (NodeDown)."""
    load_features()
    h = _history([{"at": 100_000, "op": "crash", "node": "B"},
                  {"at": 200_000, "op": "flush_relay_logs", "node": "B"},
                  {"at": 400_000, "op": "restart", "node": "B"},
                  {"at": 500_000, "op": "trx", "node": "A", "trx": "t1"}],
                 channels=({"source": "A", "replica": "B"},), end_us=1_500_000, sample_every_us=200_000)
    header, obs = R.Runner(h, scale=1.0, tmpdir=short_tmp).run()
    error = next(o for o in obs if o["kind"] == "error" and o["node"] == "B")
    assert (error["op"], error["errno"], error["message"]) == ("flush_relay_logs", 2013, "Lost connection to server (node is down)")
    assert next(o for o in obs if o["kind"] == "data" and o["node"] == "B")["counts"] == {"t1": 1}


def test_a_fault_aimed_at_a_node_that_is_down_fails_as_the_models_say(server, short_tmp):
    """Seed 10's History 15: A crashed, then a shutdown of A before its restart. The harness stopped
    a server that was not running and failed the run (NodeDown, an internal error); the models
    answer it as any op sent to a node that is down, and so must the server's Trace."""
    from replcheck import systems

    load_features()
    h = _history([{"at": 100_000, "op": "crash", "node": "B"},
                  {"at": 200_000, "op": "shutdown", "node": "B"},
                  {"at": 300_000, "op": "crash", "node": "B"},
                  {"at": 400_000, "op": "restart", "node": "B"},
                  {"at": 500_000, "op": "trx", "node": "A", "trx": "t1"}],
                 channels=({"source": "A", "replica": "B"},), end_us=1_500_000, sample_every_us=200_000)
    _, obs = R.Runner(h, scale=1.0, tmpdir=short_tmp).run()
    _, model = systems.get("model:mariadb-10.11").run(h)

    def errors(trace):
        return [(o["op"], o["errno"], o["message"]) for o in trace if o["kind"] == "error" and o["node"] == "B"]
    assert errors(obs) == errors(model) == [(op, 2013, "Lost connection to server (node is down)") for op in ("shutdown", "crash")]
    assert next(o for o in obs if o["kind"] == "data" and o["node"] == "B")["counts"] == {"t1": 1}


@pytest.mark.slow
def test_stop_slave_inside_a_non_transactional_group_cut_mid_relay_waits_for_its_end(server, short_tmp):
    """B's relay is cut after part of t1, a MyISAM write: its SQL thread has changed the table and
    waits for the group's end, and STOP SLAVE SQL_THREAD waits up to 60 s for it (sql_slave_killed,
    SLAVE_WAIT_GROUP_DONE); the harness gave a statement 30 s and failed the run, then sampled no
    node until it returned."""
    load_features()
    h = _history([{"at": 100_000, "op": "cut_io", "node": "B", "after_events": 2, "then": "stop"},
                  {"at": 500_000, "op": "trx", "node": "A", "trx": "t1", "engine": "myisam"},
                  {"at": 1_500_000, "op": "stop_slave", "node": "B", "thread": "sql"}],
                 channels=({"source": "A", "replica": "B"}, {"source": "A", "replica": "C"}),
                 nodes=({"id": "A"}, {"id": "B"}, {"id": "C"}), end_us=2_000_000, sample_every_us=500_000)
    header, obs = R.Runner(h, scale=1.0, tmpdir=short_tmp).run()
    stop = next(o for o in obs if o["kind"] == "stmt" and o["op"] == "stop_slave")
    assert stop["errno"] is None
    # B itself and C, another replica, were sampled while it waited (seed 8's History 95: no node
    # was for 62 s, and the Trace's resolution was the statement's length).
    began = stop["t"] - stop["duration_us"]
    for node in ("B", "C"):
        assert any(began < o["t"] < stop["t"] for o in obs if o["kind"] == "status" and o["node"] == node), node
