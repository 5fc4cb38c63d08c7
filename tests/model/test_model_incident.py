"""The incident model (WL#3464) against the peer suites' scenarios (peer-rules.md §3: rpl_incident I1,
rpl_binlog_max_cache_size I3), the seed's three gap scenarios and known-bugs.md §1.3 / §4 (skip counter
by groups BUG#28618, GTID position MariaDB 0b4231e9), plus determinism and schema validity of every
model trace of the inc-* scenarios.

The spec scenarios (spec/histories/inc-*.jsonl) are used where they exist; the rest are small
histories written here so each test shows its input. Expected values are written out here (from the
peer suites and the seed), not read back from the model's own tables.
"""
from __future__ import annotations


import pytest

from replcheck import io
from replcheck.properties.core import VIOLATED
from replcheck.spec import ROOT
from replcheck.systems import get, systems
from conftest import REPO

US = 1_000_000
MODELS = [s.name for s in systems().values() if s.kind == "model"]
INC_HISTORIES = sorted(p.name.removesuffix(".jsonl") for p in ROOT.joinpath("histories").iterdir()
                       if p.name.startswith("inc-") and p.name.endswith(".jsonl"))
M = "model:wl7318"
CORPUS = REPO / "corpus"
# rpl_incident.result, in the seed's (MySQL 5.1) spelling
LOST_NONE = "The incident LOST_EVENTS occured on the master. Message: <none>"


# -- helpers --------------------------------------------------------------------------------------
def status_at(tr, t: int, node: str = "B") -> dict:
    """The last SHOW SLAVE STATUS of node at instant t (after the ops of that instant)."""
    return tr.all("status", node=node, t=t)[-1]


def seen(tr, t: int, node: str) -> list[str]:
    """What a client session on node read at t."""
    return tr.first("read", node=node, t=t)["seen"]


def op(at_us: int, kind: str, node: str, **kw) -> dict:
    return {"at": at_us, "op": kind, "node": node, **kw}


def pair(kit, ops, end_s: int = 10, delay: int = 0) -> dict:
    """A -> B (1 ms latency, MASTER_DELAY delay), sampled every second."""
    return kit.make_history(["A", "B"], [{"source": "A", "replica": "B", "latency_us": 1000, "delay": delay}],
                            ops, sample_every_us=US, end_us=end_s * US)


# -- I1: rpl_incident ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rpl_incident(kit):
    """inc-rpl-incident with client reads of t1: on the master and the stopped replica at 4 s, on
    the replica again at 7 s, after SKIP_COUNTER = 1 and START SLAVE (6 s)."""
    h = kit.history("inc-rpl-incident")
    h["ops"] += [op(4 * US, "read", "A"), op(4 * US, "read", "B"), op(7 * US, "read", "B")]
    return kit.run(M, h)


def test_i1_replica_stops_with_1590_and_the_exact_message(rpl_incident):
    tr = rpl_incident
    [stop] = tr.all("sql_stop", node="B")
    assert (stop["reason"], stop["errno"], stop["message"]) == ("error", 1590, LOST_NONE)  # empty message: <none>
    relayed = tr.first("relay", node="B", type="INCIDENT_EVENT")
    assert (stop["t"], stop["relay_pos"]) == (relayed["t"], relayed["pos"])  # at the incident, at once
    s = status_at(tr, 4 * US)
    assert (s["Slave_IO_Running"], s["Slave_SQL_Running"]) == ("Yes", "No")
    assert (s["Last_SQL_Errno"], s["Last_SQL_Error"], s["Skip_Counter"]) == (1590, LOST_NONE, 0)
    assert s["Relay_Master_Log_File"] == "bin.000001"


def test_i1_held_back_row_until_the_skip(rpl_incident):
    # The master shows 1..4 (ins123, replace4); the stopped replica 1..3; after the skip 1..4.
    tr = rpl_incident
    assert seen(tr, 4 * US, "A") == ["create_t1", "ins123", "replace4"]
    assert seen(tr, 4 * US, "B") == ["create_t1", "ins123"]
    assert seen(tr, 7 * US, "B") == ["create_t1", "ins123", "replace4"]
    assert tr.first("visible", node="B", trx="replace4")["t"] == 6 * US  # at START SLAVE, not before


def test_i1_skip_one_consumes_only_the_incident_then_runs_normally(rpl_incident):
    tr = rpl_incident
    skips = tr.all("skip", node="B")
    assert [(s["type"], s["t"]) for s in skips] == [("INCIDENT_EVENT", 6 * US)]
    s = status_at(tr, 7 * US)
    assert (s["Slave_IO_Running"], s["Slave_SQL_Running"], s["Last_SQL_Errno"], s["Skip_Counter"]) == \
        ("Yes", "Yes", 0, 0)


def test_i1_master_rotated_to_a_fresh_binlog(rpl_incident):
    # "We should also have rotated to a new binary log": INCIDENT, ROTATE, then bin.000002 opens
    # with its FDE, and the replica executes from master-bin.000002 after the skip.
    tr = rpl_incident
    log = [(b["type"], b["file"]) for b in tr.all("binlog", node="A")]
    i = log.index(("INCIDENT_EVENT", "bin.000001"))
    assert log[i:i + 4] == [("INCIDENT_EVENT", "bin.000001"), ("ROTATE_EVENT", "bin.000001"),
                            ("FORMAT_DESCRIPTION_EVENT", "bin.000002"), ("GTID_LOG_EVENT", "bin.000002")]
    inc = tr.first("binlog", node="A", type="INCIDENT_EVENT")
    assert (inc["incident"], inc["message"]) == (1, "")
    assert status_at(tr, 7 * US)["Relay_Master_Log_File"] == "bin.000002"


def test_start_slave_clears_last_sql_error(rpl_incident):
    start = rpl_incident.first("stmt", node="B", op="start_slave")
    after = next(s for s in rpl_incident.all("status", node="B") if rpl_incident.index(s) > rpl_incident.index(start))
    assert (after["t"], after["Last_SQL_Errno"], after["Last_SQL_Error"]) == (6 * US, 0, "")


def test_start_io_thread_keeps_last_sql_error(kit):
    # START SLAVE IO_THREAD does not start the SQL thread, so its error stays.
    ops = [op(1 * US, "record_incident", "A", code=1), op(2 * US, "stop_slave", "B", thread="io"),
           op(3 * US, "start_slave", "B", thread="io")]
    tr = kit.run(M, pair(kit, ops, end_s=4))
    s = status_at(tr, 3 * US)
    assert (s["Slave_IO_Running"], s["Slave_SQL_Running"], s["Last_SQL_Errno"], s["Last_SQL_Error"]) == \
        ("Yes", "No", 1590, LOST_NONE)


# -- I3: rpl_binlog_max_cache_size -----------------------------------------------------------------
def test_i3_innodb_overflow_rolls_back_without_incident(kit):
    tr = kit.run(M, "inc-cache-overflow")
    c = tr.first("commit", node="A", trx="innodb_big")
    assert (c["errno"], c["gtid"]) == (1197, None)  # ER_TRANS_CACHE_FULL
    assert "max_binlog_cache_size" in c["message"]
    assert tr.all("visible", trx="innodb_big") == []  # rolled back
    assert [b for b in tr.all("binlog", node="A") if 2 * US <= b["t"] < 3 * US] == []  # nothing logged
    s = status_at(tr, 3 * US)  # before the MyISAM incident arrives
    assert (s["Slave_SQL_Running"], s["Last_SQL_Errno"]) == ("Yes", 0)


def test_i3_innodb_overflow_alone_never_stops_the_replica(kit):
    ops = [op(1 * US, "trx", "A", trx="big", engine="innodb", binlog_failure="cache_overflow"),
           op(2 * US, "trx", "A", trx="small")]
    tr = kit.run(M, pair(kit, ops, end_s=4))
    assert tr.all("binlog", node="A", type="INCIDENT_EVENT") == [] and tr.all("sql_stop", node="B") == []
    assert all(s["Slave_SQL_Running"] == "Yes" for s in tr.all("status", node="B"))
    assert [v["trx"] for v in tr.all("visible", node="B")] == ["small"]


def test_i3_myisam_overflow_is_an_incident_that_stops_the_replica(kit):
    tr = kit.run(M, "inc-cache-overflow")
    c = tr.first("commit", node="A", trx="myisam_big")
    assert (c["errno"], c["gtid"]) == (1705, None)  # ER_STMT_CACHE_FULL
    assert "max_binlog_stmt_cache_size" in c["message"]
    assert tr.first("visible", node="A", trx="myisam_big")["t"] == 3 * US  # MyISAM: done, cannot be undone
    inc = tr.first("binlog", node="A", type="INCIDENT_EVENT")
    assert (inc["t"], inc["incident"], inc["message"]) == (3 * US, 1, "error writing to the binary log")
    [stop] = tr.all("sql_stop", node="B", errno=1590)
    assert stop["message"] == "The incident LOST_EVENTS occured on the master. Message: error writing to the binary log"
    # Skipped with a counter of 1, the replica then has what followed, never the lost change.
    assert [s["type"] for s in tr.all("skip", node="B")] == ["INCIDENT_EVENT"]
    assert [v["trx"] for v in tr.all("visible", node="B")] == ["create_t1", "after_gap", "later"]


@pytest.mark.parametrize("engine", ["innodb", "myisam"])
def test_binlog_write_error_always_leaves_an_incident(kit, engine):
    # known bugs I5: a commit whose binlog write failed is in the data, so an incident marks it.
    ops = [op(1 * US, "trx", "A", trx="w", engine=engine, binlog_failure="write_error")]
    tr = kit.run(M, pair(kit, ops, end_s=3))
    assert tr.first("commit", node="A", trx="w")["errno"] == 1026  # ER_ERROR_ON_WRITE (binlog_ioerr.inc: --error ER_ERROR_ON_WRITE)
    assert tr.first("visible", node="A", trx="w")["gtid"] is None
    assert tr.first("binlog", node="A", type="INCIDENT_EVENT")["incident"] == 1
    assert tr.first("sql_stop", node="B")["errno"] == 1590


def test_a_binlog_write_error_rolls_an_innodb_transaction_back_on_mariadb(kit):
    # The binlog is MariaDB's transaction coordinator: a failed write rolls the transaction back
    # (ha_commit_trans, sql/handler.cc), so nothing needs an incident and replication goes on; a
    # MyISAM change has happened and still gets one.
    ops = [op(1 * US, "trx", "A", trx="w", engine="innodb", binlog_failure="write_error"),
           op(2 * US, "trx", "A", trx="next")]
    tr = kit.run("model:mariadb-10.11", pair(kit, ops, end_s=4))
    assert tr.first("commit", node="A", trx="w")["errno"] == 1026  # ER_ERROR_ON_WRITE, as binlog_ioerr.result
    assert not tr.all("visible", node="A", trx="w") and not tr.all("binlog", node="A", type="INCIDENT_EVENT")
    assert not tr.all("sql_stop", node="B") and tr.first("visible", node="B", trx="next")
    myisam = kit.run("model:mariadb-10.11", pair(kit, [op(1 * US, "trx", "A", trx="w", engine="myisam",
                                                          binlog_failure="write_error")], end_s=3))
    assert myisam.first("binlog", node="A", type="INCIDENT_EVENT")["incident"] == 1


# -- the seed's gap scenarios, and an unknown code -------------------------------------------------
GAPS = [  # WL#3464 bug scenarios 1-3; messages from the seed (the server-crash one: "mysqld startup", known bugs I1)
    ("lost1", "Cluster did not provide continuous replication log"),
    ("lost3", "mysqld startup: events queued before the crash were lost"),
    ("lost4", "Network outage between NDB node and MySQL server"),
]


def test_each_gap_is_a_lost_events_incident_with_its_message(kit):
    tr = kit.run(M, "inc-gaps")
    incidents = tr.all("binlog", node="A", type="INCIDENT_EVENT")
    assert [(b["incident"], b["message"]) for b in incidents[:3]] == [(1, msg) for _, msg in GAPS]
    stops = tr.all("sql_stop", node="B", errno=1590)
    assert [s["message"] for s in stops[:3]] == [f"The incident LOST_EVENTS occured on the master. Message: {msg}"
                                                 for _, msg in GAPS]
    for (trx, _), inc in zip(GAPS, incidents):
        lost = tr.first("visible", node="A", trx=trx)
        assert lost["gtid"] is None and lost["t"] == inc["t"]  # in the data, not in the binlog
    assert {"lost1", "lost2", "lost3", "lost4"}.isdisjoint(v["trx"] for v in tr.all("visible", node="B"))
    assert [v["trx"] for v in tr.all("visible", node="B")] == ["t1", "t2", "t3"]


def test_unknown_code_stops_with_symbol_unknown(kit):
    tr = kit.run(M, "inc-gaps")
    inc = tr.first("binlog", node="A", type="INCIDENT_EVENT", incident=7)
    stop = tr.all("sql_stop", node="B", errno=1590)[-1]
    assert stop["message"] == "The incident UNKNOWN occured on the master. Message: a code this replica does not know"
    assert stop["t"] == inc["t"] + 1000  # on arrival
    assert tr.first("visible", node="B", trx="t3")["t"] == 10_000_001  # only after the DBA's skip


def test_code_none_also_stops(kit):
    # R3.1: INCIDENT_NONE is a known code too; with no message the stop says <none>.
    tr = kit.run(M, pair(kit, [op(1 * US, "record_incident", "A", code=0)], end_s=2))
    assert tr.first("sql_stop", node="B")["message"] == "The incident NONE occured on the master. Message: <none>"


# -- skip counter: groups, exempt events (BUG#28618) -----------------------------------------------
def test_skip_two_ending_inside_a_group_skips_the_whole_group(kit):
    # inc-delayed-skip-group: counter 2 = the incident + multi's GTID event; the counter runs out
    # inside multi, whose remaining 4 events are skipped too. The ROTATE and FDE between them are
    # executed, not counted. t3 then applies normally.
    tr = kit.run(M, "inc-delayed-skip-group")
    start = tr.first("stmt", node="B", op="start_slave")
    after = [(o["kind"], o["type"], o["trx"]) for o in tr.obs[tr.index(start) + 1:]
             if o["node"] == "B" and o["kind"] in ("skip", "apply")]
    assert after == [
        ("skip", "INCIDENT_EVENT", None),
        ("apply", "ROTATE_EVENT", None), ("apply", "FORMAT_DESCRIPTION_EVENT", None),
        ("skip", "GTID_LOG_EVENT", "multi"), ("skip", "QUERY_EVENT", "multi"), ("skip", "QUERY_EVENT", "multi"),
        ("skip", "QUERY_EVENT", "multi"), ("skip", "XID_EVENT", "multi"),
        ("apply", "GTID_LOG_EVENT", "t3"), ("apply", "QUERY_EVENT", "t3"), ("apply", "XID_EVENT", "t3"),
    ]
    assert [v["trx"] for v in tr.all("visible", node="B")] == ["t1", "t3"]
    assert status_at(tr, 11 * US)["Skip_Counter"] == 0


def test_skip_mid_group_mutant_resumes_inside_the_group(kit):
    # The contrast: BUG#28618 applies multi's statements after skipping its GTID event.
    tr = kit.run("mutant:skip-mid-group", "inc-delayed-skip-group")
    assert [s["type"] for s in tr.all("skip", node="B", trx="multi")] == ["GTID_LOG_EVENT"]
    assert [a["type"] for a in tr.all("apply", node="B", trx="multi")][:1] == ["QUERY_EVENT"]


def test_skip_counter_spans_groups_and_rounds_up_to_a_group_end(kit):
    # rpl_slave_skip: a counter of 4 from a stop covers the incident, t1's 3 events (GTID, QUERY,
    # XID): exactly t1; a counter of 5 enters t2 and so skips all of it.
    for counter, skipped in ((4, ["t1"]), (5, ["t1", "t2"])):
        ops = [op(1 * US, "record_incident", "A", code=1), op(1 * US + 1, "trx", "A", trx="t1"),
               op(1 * US + 2, "trx", "A", trx="t2"), op(1 * US + 3, "trx", "A", trx="t3"),
               op(3 * US, "set_global", "B", variable="sql_slave_skip_counter", value=counter),
               op(4 * US, "start_slave", "B", thread="sql")]
        tr = kit.run(M, pair(kit, ops, end_s=5))
        got = sorted({s["trx"] for s in tr.all("skip", node="B") if s["trx"]})
        assert got == skipped, counter
        assert [v["trx"] for v in tr.all("visible", node="B")] == [t for t in ("t1", "t2", "t3") if t not in skipped]


def test_skip_counter_set_while_running_skips_nothing_until_start_slave(kit):
    ops = [op(1 * US, "set_global", "B", variable="sql_slave_skip_counter", value=1),
           op(2 * US, "trx", "A", trx="t1"), op(3 * US, "trx", "A", trx="t2")]
    tr = kit.run(M, pair(kit, ops, end_s=4))
    assert tr.all("skip", node="B") == []
    assert [v["trx"] for v in tr.all("visible", node="B")] == ["t1", "t2"]


def test_a_crash_forgets_the_skip_counter(kit):
    # sql_slave_skip_counter is a global variable, not persisted: set while the SQL thread stood at
    # the incident, never used (no START SLAVE), it is 0 after the crash, and the restarted SQL
    # thread stops at the incident again instead of skipping it.
    ops = [op(1 * US, "record_incident", "A", code=1),
           op(3 * US, "set_global", "B", variable="sql_slave_skip_counter", value=1),
           op(4 * US, "crash", "B"), op(5 * US, "restart", "B")]
    tr = kit.run(M, pair(kit, ops, end_s=7))
    assert status_at(tr, 3 * US)["Skip_Counter"] == 1
    assert tr.all("skip", node="B") == []
    assert [s["t"] for s in tr.all("sql_stop", node="B", errno=1590)] == [1_001_000, 5 * US]
    assert status_at(tr, 6 * US)["Skip_Counter"] == 0


def test_skipping_a_cut_group_skips_the_incident_a_reconnect_put_inside_it(kit):
    # B's connection drops inside t1 (GTID and a statement in); MariaDB's GTID reconnect sends the
    # incident before t1 again, which lands inside t1's copy. The DBA's SKIP_COUNTER = 1 at the
    # first stop takes the incident; B then stops at its copy inside t1 (with t1's start rolled
    # back); the second SKIP_COUNTER = 1 enters t1 and skips all of it, the incident inside it too,
    # as only a group's last event ends it (Log_event::do_shall_skip: COMMIT/Xid clears OPTION_BEGIN).
    # (the incident of a binlog failure: MariaDB writes it without rotating, so t1 follows it in the
    # same binlog and a GTID reconnect to t1 starts before the incident)
    ops = [op(0, "trx", "A", trx="lost", engine="myisam", binlog_failure="cache_overflow"),
           op(1 * US, "cut_io", "B", after_events=2),
           op(2 * US, "trx", "A", trx="t1", statements=[{}, {}]),
           *[op(t * US, o, "B", **kw) for t in (5, 8) for o, kw in (
               ("stop_slave", {"thread": "sql"}), ("set_global", {"variable": "sql_slave_skip_counter", "value": 1}),
               ("start_slave", {"thread": "sql"}))],
           op(10 * US, "trx", "A", trx="t2")]
    tr = kit.run("model:mariadb-10.11", pair(kit, ops, end_s=12))
    relayed = [(r["type"], r["trx"]) for r in tr.all("relay", node="B") if r["t"] >= 2 * US]
    assert relayed[:6] == [("GTID_LOG_EVENT", "t1"), ("QUERY_EVENT", "t1"), ("ROTATE_EVENT", None),
                           ("FORMAT_DESCRIPTION_EVENT", None), ("INCIDENT_EVENT", None), ("ROTATE_EVENT", None)]
    assert tr.first("rollback", node="B", trx="t1")["t"] == 5 * US
    second = [(s["type"], s["trx"]) for s in tr.all("skip", node="B") if s["t"] == 8 * US]
    assert second == [("GTID_LOG_EVENT", "t1"), ("QUERY_EVENT", "t1"), ("INCIDENT_EVENT", None),
                      ("QUERY_EVENT", "t1"), ("XID_EVENT", "t1")]
    assert [a["trx"] for a in tr.all("apply", node="B") if a["trx"]] == ["t1", "t1", "t2", "t2", "t2"]
    assert tr.first("data", node="B")["counts"] == {"t2": 1}


# -- a delayed replica ------------------------------------------------------------------------------
def test_incident_on_delayed_replica_waits_its_due_time(kit):
    # MASTER_DELAY 5; the incident is written at master time 2 s, so it is due at 7 s. Until then
    # the SQL thread runs (t1 applied at its own due time, 6 s), then stops at 7 s, not on arrival.
    tr = kit.run(M, "inc-delayed-skip-group")
    assert tr.first("relay", node="B", type="INCIDENT_EVENT")["t"] == 2_001_000
    [stop] = tr.all("sql_stop", node="B")
    assert (stop["t"], stop["errno"], stop["message"]) == \
        (7 * US, 1590, "The incident LOST_EVENTS occured on the master. Message: test")
    assert tr.first("visible", node="B", trx="t1")["t"] == 6 * US
    assert all(status_at(tr, t * US)["Slave_SQL_Running"] == "Yes" for t in range(2, 7))
    assert status_at(tr, 8 * US)["Slave_SQL_Running"] == "No"


def test_mariadb_does_not_delay_an_incident(kit):
    # The same History on MariaDB: 10.11's sql_delay_event delays only an event for which
    # Log_event::is_group_event holds, and an incident is in no group. t1 (due at 6 s) is applied
    # as due, and the incident right after it is executed at once: B stops at 6 s, not 7 s.
    tr = kit.run("model:mariadb-10.11", "inc-delayed-skip-group")
    assert tr.first("visible", node="B", trx="t1")["t"] == 6 * US
    assert [(s["t"], s["errno"]) for s in tr.all("sql_stop", node="B")] == [(6 * US, 1590)]
    assert kit.verdict("WL3464.DELAY", tr).status == VIOLATED  # declared on model:mariadb-10.11


# -- GTID mode: the skip moves the GTID position (MariaDB 0b4231e9) --------------------------------
def test_skipped_group_not_reapplied_after_restart_with_relay_log_recovery(kit):
    tr = kit.run(M, "inc-gtid-skip-survives-restart")
    assert [s["type"] for s in tr.all("skip", node="B")] == \
        ["INCIDENT_EVENT", "GTID_LOG_EVENT", "QUERY_EVENT", "XID_EVENT"]
    assert tr.first("relay_log_recovery", node="B")["t"] == 6 * US
    assert [v["trx"] for v in tr.all("visible", node="B")] == ["wanted", "after_restart"]
    # Re-fetched by GTID after the restart: nothing of `unwanted` comes back.
    assert [r for r in tr.all("relay", node="B", trx="unwanted") if r["t"] > 6 * US] == []


def test_skip_keeps_gtid_position_mutant_reapplies_after_restart(kit):
    # The contrast: the skip left 0-1-1 out of the GTID position, so the restart fetches and applies it.
    tr = kit.run("mutant:skip-keeps-gtid-position", "inc-gtid-skip-survives-restart")
    again = [v for v in tr.all("visible", node="B", trx="unwanted") if v["t"] > 6 * US]
    assert [v["t"] for v in again] == [6_001_000]


def test_group_skipped_as_already_executed_is_not_committed_again(kit):
    tr = kit.run("mutant:skip-keeps-gtid-position", "inc-gtid-skip-survives-restart")
    assert tr.first("skip", node="B", trx="wanted", reason="gtid already executed")["t"] == 6_001_000
    assert [v["trx"] for v in tr.all("visible", node="B")] == ["wanted", "unwanted", "after_restart"]
    gtids = [b["gtid"] for b in tr.all("binlog", node="B", type="GTID_LOG_EVENT")]
    assert len(gtids) == len(set(gtids)), gtids


# -- relay_log_recovery, then the IO thread resumes mid-binlog (campaign findings) ----------------
def corpus_run(kit, name: str):
    return kit.run(M, io.load_history(CORPUS / f"{name}.jsonl"))


def test_gtid_dump_starts_at_the_head_of_the_binlog_and_sends_the_incident_again(kit):
    # MariaDB's dump by GTID (sql_repl.cc): a fake Rotate to (file, 4), the FDE with its real end,
    # every event in no group (the incident B skipped), then a fake Gtid_list ending where the last
    # group B had ends; the groups B had are not sent.
    tr = kit.run("model:mariadb-10.11", "inc-skip-then-reconnect")
    connect = tr.all("connect", node="B")[-1]
    assert (connect["by"], connect["master_log_file"], connect["master_log_pos"]) == ("gtid", "bin.000001", 4)
    sent = [r for r in tr.all("relay", node="B") if r["t"] == connect["t"]]
    later = tr.first("binlog", node="A", trx="later", type="XID_EVENT")
    fde = tr.first("binlog", node="A", type="FORMAT_DESCRIPTION_EVENT")
    assert [(r["type"], r["when"] == 0, r["master_end"]) for r in sent] == [
        ("ROTATE_EVENT", True, 4), ("FORMAT_DESCRIPTION_EVENT", False, fde["end"]),
        ("INCIDENT_EVENT", False, tr.first("binlog", node="A", type="INCIDENT_EVENT")["end"]),
        ("GTID_LIST_EVENT", True, later["end"])]
    assert len(tr.all("sql_stop", node="B", errno=1590)) == 2


def test_skip_counter_does_not_count_a_gtid_list(kit):
    # START SLAVE with both threads stopped throws MariaDB's relay log away; the refetch brings a
    # fake Gtid_list before the incident, which the counter passes over (Gtid_list_log_event::do_shall_skip).
    tr = kit.run("model:mariadb-10.11", "inc-cache-overflow")
    assert tr.first("relay_log_recovery", node="B")["reason"] == "gtid"
    [skipped] = tr.all("skip", node="B")
    assert skipped["type"] == "INCIDENT_EVENT"
    assert tr.first("visible", node="B", trx="after_gap")


def test_flavours_differ_in_rotation_and_relay_purge(kit):
    mariadb, mysql = kit.run("model:mariadb-10.11", "inc-cache-overflow"), kit.run(M, "inc-cache-overflow")
    after = [[b["type"] for b in tr.all("binlog", node="A") if b["t"] >= tr.first("binlog", node="A", type="INCIDENT_EVENT")["t"]][1]
             for tr in (mariadb, mysql)]
    assert after == ["GTID_LOG_EVENT", "ROTATE_EVENT"]
    assert mariadb.all("relay_log_recovery", node="B") and not mysql.all("relay_log_recovery", node="B")


def test_relay_log_recovery_points_relay_log_info_at_the_new_relay_log(kit):
    # After recovery relay-log.info names the fresh relay log; a later plain restart resumes there
    # and meets the incident relayed into it, instead of resuming past it. (The recovering restart
    # reads the old one first: recovery starts from the positions it holds.)
    tr = corpus_run(kit, "finding-incident-not-stopped-at")
    infos = [r["content"].split("\n")[1:3] for r in tr.all("relay_log_info", node="B")]
    assert [i[0] for i in infos] == ["./relay.000001", "./relay.000002"] and infos[1] == ["./relay.000002", "4"]
    stop = tr.first("sql_stop", node="B", errno=1590)
    assert (stop["t"], stop["relay_file"], stop["relay_pos"]) == (3_500_000, "relay.000002", 172)


# -- determinism and schema validity ----------------------------------------------------------------
@pytest.mark.parametrize("system", MODELS)
@pytest.mark.parametrize("history", INC_HISTORIES)
def test_same_history_gives_byte_identical_trace(kit, system, history):
    # Two fresh runs (not the kit's cached one) of two copies of the history.
    first = io.dumps_lines(*get(system).run(kit.history(history)))
    second = io.dumps_lines(*get(system).run(kit.history(history)))
    assert first == second and first.count("\n") > 10


@pytest.mark.parametrize("system", MODELS)
@pytest.mark.parametrize("history", INC_HISTORIES)
def test_model_trace_validates_against_schema(kit, tmp_path, system, history):
    header, obs = get(system).run(kit.history(history))
    path = tmp_path / f"{history}.trace.jsonl"
    io.write_atomic(path, io.dumps_lines(header, obs))
    loaded_header, loaded = io.load_trace(path)
    assert loaded_header == header and len(loaded) == len(obs)
    # every inc-* History but the one that shows what is no gap writes an incident
    assert (history == "inc-disk-full") != any(o["kind"] == "binlog" and o["type"] == "INCIDENT_EVENT" for o in loaded)


@pytest.mark.parametrize("value,errno,counter", [(False, 1232, 0), ("x", 1232, 0), (2, None, 2), (-1, None, 0)])
def test_the_skip_counter_takes_a_number_only(value, errno, counter):
    """SET GLOBAL sql_slave_skip_counter: ON/OFF or a string is ER_WRONG_TYPE_FOR_VAR (it once
    reached SHOW SLAVE STATUS as Skip_Counter false); a negative number is truncated to 0."""
    from replcheck.systems import get

    h = {"header": {"schema": "replcheck.history/1", "name": "skip", "sample_every_us": 1_000_000, "end_us": 2_000_000,
                    "topology": {"nodes": [{"id": "A"}, {"id": "B"}], "channels": [{"source": "A", "replica": "B"}]}},
         "ops": [{"at": 0, "op": "stop_slave", "node": "B", "thread": "sql"},
                 {"at": 1, "op": "set_global", "node": "B", "variable": "sql_slave_skip_counter", "value": value}]}
    _, obs = get("model:mariadb-10.11").run(h)
    [stmt] = [o for o in obs if o["kind"] == "stmt" and o["op"] == "set_global"]
    assert stmt["errno"] == errno and (stmt.get("warning") == 1292) == (value == -1)
    assert [o["Skip_Counter"] for o in obs if o["kind"] == "status" and o["node"] == "B"][-1] == counter


def test_flavours_spell_the_incident_error_as_their_servers_do(kit):
    # ER_SLAVE_INCIDENT: MySQL's errmsg text has 'occured', MariaDB's 'occurred' (rpl_incident.result,
    # the suite scenario mdb-rpl_incident)
    stops = {name: kit.run(name, pair(kit, [op(1 * US, "record_incident", "A", code=1)], end_s=2)).first("sql_stop", node="B")
             for name in ("model:mariadb-10.11", M)}
    assert stops["model:mariadb-10.11"]["message"] == "The incident LOST_EVENTS occurred on the master. Message: <none>"
    assert stops[M]["message"] == LOST_NONE


def test_a_myisam_transaction_ends_with_a_commit_query_and_its_overflow_message_is_the_flavours(kit):
    # binlog_commit_flush_stmt_cache (sql/log.cc): no XID without a transactional engine; MariaDB's
    # ER_STMT_CACHE_FULL ends at 'storage.' (binlog_incident.result, suite scenario mdb-binlog_incident)
    ops = [op(1 * US, "trx", "A", trx="m", engine="myisam"), op(2 * US, "trx", "A", trx="big", engine="myisam",
                                                              binlog_failure="cache_overflow")]
    for name, tail in (("model:mariadb-10.11", "storage."), (M, "storage; increase this mysqld variable and try again")):
        tr = kit.run(name, pair(kit, ops, end_s=3))
        assert [(b["type"], b["last"]) for b in tr.all("binlog", node="A", trx="m")] == [
            ("GTID_LOG_EVENT", False), ("QUERY_EVENT", False), ("QUERY_EVENT", True)]
        big = tr.first("commit", node="A", trx="big")
        assert big["errno"] == 1705 and big["message"].endswith(f"bytes of {tail}")


def test_a_skipped_group_moves_gtid_slave_pos(kit):
    """SQL_SLAVE_SKIP_COUNTER = 1 skips after_gap (0-1-2): gtid_slave_pos records it at the group's
    end (MariaDB sql/rpl_gtid.cc, record_and_update_gtid), before the next group is applied."""
    h = kit.history("inc-skip-after-rotation")
    h["ops"].append({"at": 8_500_000, "op": "expect", "node": "B", "show": "variables", "fields": {"gtid_slave_pos": "0-1-2"}})
    h["ops"].sort(key=lambda o: o["at"])
    tr = kit.run("model:mariadb-10.11", h)
    assert tr.first("skip", node="B", gtid="0-1-2")["t"] < 8_500_000 < tr.first("visible", node="B", gtid="0-1-3")["t"]
    assert tr.first("observed", node="B")["value"] == {"gtid_slave_pos": "0-1-2"}


def test_a_statement_incident_rotates_on_every_flavour_a_binlog_failure_only_on_mysql(kit):
    # The debug point incident_database_resync_on_replace writes the incident and then
    # rotate_and_purge(true) (sql_parse.cc) on both servers: rpl_skip_incident.result shows two
    # binlogs on MariaDB as on MySQL (suite scenarios mdb-/my56-rpl_skip_incident). A binlog failure's
    # incident goes through MariaDB's write_incident (sql/log.cc), which rotates only past
    # max_binlog_size: the next group follows in the same binlog.
    ops = [op(1 * US, "record_incident", "A", code=1), op(2 * US, "trx", "A", trx="big", engine="myisam",
                                                          binlog_failure="cache_overflow")]
    for name, after_overflow in (("model:mariadb-10.11", "bin.000002"), (M, "bin.000003")):
        tr = kit.run(name, pair(kit, ops + [op(3 * US, "trx", "A", trx="next")], end_s=4))
        incidents = tr.all("binlog", node="A", type="INCIDENT_EVENT")
        assert [b["file"] for b in incidents] == ["bin.000001", "bin.000002"]
        assert tr.first("binlog", node="A", trx="next")["file"] == after_overflow
