"""What the runner makes of its observations, without a server: the applies of events in no group,
the SQL thread's stops, the order of late ops, the skip counter's note, cut groups, relay logs
thrown away, and a server's own time as an interval of trace time."""
from __future__ import annotations

import pytest

from replcheck.harness import binlog_events
from replcheck.harness import ops as OP
from replcheck.harness import runner as R
from replcheck.spec import formats as F
from replcheck.properties import core
from test_runner import B, US, _history


def test_events_in_no_group_are_applied_once_a_sample_shows_the_sql_thread_past_them():
    """The master's fake Rotate, FDE and Gtid_list get an apply at the first sample whose relay-log
    place is past them, as the models execute them (WL344.STATE.WAITING takes the first relayed
    event without one for the SQL thread's); an incident never does (it stops the thread, or a
    skip passes it)."""
    from replcheck.harness.relaylog import Event

    r = R.Runner(_history([]))
    r.sources[B] = "A"
    for name, ev in [("relay.000002", Event(4, 48, 0, 4, 1, 0, "Rotate to bin.000001  pos: 4")),
                     ("relay.000002", Event(52, 256, 1700000000, 15, 1, 0)),
                     ("relay.000002", Event(308, 60, 1700000001, 26, 1, 400)),  # an incident
                     ("relay.000002", Event(368, 38, 1700000002, 162, 1, 438, "GTID 0-1-1 trans"))]:
        r.observer._relay_event(B, 10, name, ev)

    def sample(t, file, pos):
        r.observer.record_status(B, t, {"Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes", "Relay_Log_File": file,
                           "Relay_Log_Pos": str(pos)}, None, False)
        return [(o["t"], o["type"], o["relay_pos"]) for _, _, o in r.obs if o["kind"] == "apply"]
    assert sample(20, "relay.000001", 900) == []  # an older relay log of another name: nothing passed yet
    assert sample(30, "relay.000002", 52) == [(30, "ROTATE_EVENT", 4)]
    assert sample(40, "relay.000002", 368) == [(30, "ROTATE_EVENT", 4), (40, "FORMAT_DESCRIPTION_EVENT", 52)]
    assert sample(50, "relay.000002", 406) == [(30, "ROTATE_EVENT", 4), (40, "FORMAT_DESCRIPTION_EVENT", 52)]


def test_an_sql_thread_stopped_by_an_error_before_any_sample_saw_it_run_is_a_stop():
    """Under load the first sample of B, or the first after a START SLAVE, can come after its SQL
    thread already stopped at an incident: that is still the stop (WL3464.R3.1 judges it)."""
    r = R.Runner(_history([]))
    error = {"Slave_IO_Running": "Yes", "Slave_SQL_Running": "No", "Last_SQL_Errno": "1590",
             "Last_SQL_Error": "The incident LOST_EVENTS occurred on the master."}
    stops = lambda: [(o["t"], o["reason"]) for _, _, o in r.obs if o["kind"] == "sql_stop"]  # noqa: E731
    r.observer.record_status(B, 10, error, None, False)
    assert stops() == [(10, "error")]
    r.observer.record_status(B, 20, error, None, False)  # still stopped: no new stop
    assert stops() == [(10, "error")]
    r.sql_started.add(B)  # START SLAVE (what _statement does), then it stopped again before a sample
    r.observer.record_status(B, 30, error, None, False)
    assert stops() == [(10, "error"), (30, "error")]


def test_an_sql_thread_stopped_without_an_error_after_start_until_is_the_until_stop():
    """WL344.P1.UNTIL judges where the UNTIL stop left the thread: on a real server it is the first
    sample showing the thread stopped, with no error and no STOP SLAVE since START SLAVE UNTIL."""
    r = R.Runner(_history([]))
    stopped = {"Slave_IO_Running": "Yes", "Slave_SQL_Running": "No"}
    stops = lambda: [(o["t"], o["reason"]) for _, _, o in r.obs if o["kind"] == "sql_stop"]  # noqa: E731
    r.observer.record_status(B, 10, {"Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes"}, None, False)
    r.sql_started.add(B)
    r.until.add(B)  # what _statement does for a START SLAVE ... UNTIL it started the thread with
    r.observer.record_status(B, 20, stopped, None, False)
    r.observer.record_status(B, 30, stopped, None, False)
    assert stops() == [(20, "until")]
    r.sql_started.add(B)  # started again without UNTIL: a stop is no longer the condition's
    r.observer.record_status(B, 40, stopped, None, False)
    assert stops() == [(20, "until")]


@pytest.mark.parametrize("warning, until", [(None, True), (1278, True), (1254, False)])
def test_start_slave_until_sets_the_condition_unless_the_thread_was_running(warning, until):
    """MariaDB warns ER_MISSING_SKIP_SLAVE (1278) on START SLAVE UNTIL in a server started without
    --skip-slave-start and still sets the condition; only ER_SLAVE_WAS_RUNNING (1254) says it started no thread."""
    r = R.Runner(_history([]))
    op = {"at": 0, "op": "start_slave", "node": "B", "thread": "sql", "until": {"master_log_file": "bin.000001", "master_log_pos": 4}}
    r.ops._stopped_or_started(op, B, 10, None, warning, {"Slave_IO_Running": "Yes", "Slave_SQL_Running": "No"})
    assert (B in r.until) == until


def test_a_late_op_moves_every_later_op_and_the_history_that_ran_says_so(tmp_path):
    """A slow statement or a loaded machine makes an op start late: every later op keeps its
    distance from it (a commit, then 200 ms for it to wait, then the crash), and the History the
    reference model runs has the times they ran at."""
    from replcheck.harness.system import MariaDB
    from replcheck.spec.contract import Trace
    r = R.Runner(_history([]))
    r.now = lambda: 1_000_000  # 1 s into the run, whatever the machine's clock does
    assert r._sleep_until(400_000) and r.slip_us == 600_000  # 0.6 s late: everything moves
    assert not r._sleep_until(400_000 - R.SLIP_MIN_US // 2)  # late by less than the jitter: nothing moves
    assert r.slip_us == 600_000
    h = _history([{"at": 100_000, "op": "trx", "node": "A"}, {"at": 300_000, "op": "stop_slave", "node": "B"},
                  {"at": 400_000, "op": "trx", "node": "A"}, {"at": 600_000, "op": "crash", "node": "A"}], end_us=900_000)
    ran = MariaDB(scale=1.0).as_run(h, Trace({"slipped": [[2, 250_000]]}, []))
    assert [op["at"] for op in ran["ops"]] == [100_000, 300_000, 650_000, 850_000] and ran["header"]["end_us"] == 1_150_000
    assert [op["at"] for op in MariaDB(scale=1.0).as_run(h)["ops"]] == [100_000, 300_000, 400_000, 600_000]


def test_an_op_due_after_a_commit_waits_for_it_unless_its_node_may_wait_for_acks():
    """A loaded run of inc-skip-after-rotation: the FLUSH LOGS planned 180 ms after a failing
    statement overtook it, and its incident landed after the rotation the scenario puts after it.
    An op due after a transaction's planned end, on a node that never waits for semi-sync acks,
    waits for that COMMIT to return; one due before it, or on a semi-sync master, does not."""
    import threading
    r = R.Runner(_history([]))
    held = threading.Event()
    quick, slow = threading.Thread(target=lambda: None), threading.Thread(target=held.wait)
    quick.start(), slow.start()
    r.ops._in_flight["A"] = [(100, quick), (500, slow)]
    r.ops.await_commits({"at": 200, "op": "flush_logs", "node": "A"})  # after quick's end, before slow's
    assert not quick.is_alive() and slow.is_alive() and r.ops._in_flight["A"] == [(500, slow)]
    held.set()
    slow.join()
    h = _history([{"at": 1, "op": "set_global", "node": "B", "variable": "rpl_semi_sync_master_enabled", "value": True}],
                 nodes=({"id": "A", "variables": {"rpl_semi_sync_master_enabled": True}}, {"id": "B"}, {"id": "C"}))
    assert R._semi_sync_masters(h) == {"A", "B"}


def test_an_op_due_after_a_commit_on_a_semi_sync_master_waits_until_it_returned_or_waits_for_its_ack():
    """A loaded run of mdb-phantom-after-sync: the kill -9 planned 200 ms after t1 came before t1
    was binlogged, so no commit waited when the master crashed (the scenario's precondition). On a
    node that may wait for acks, an op due after a transaction's planned end waits until the server
    shows it waiting for its ack (or it returned); not for the ack itself, which may never come."""
    import threading
    h = _history([], nodes=({"id": "A", "variables": {"rpl_semi_sync_master_enabled": True}}, {"id": "B"}, {"id": "C"}))
    r = R.Runner(h)
    held = threading.Event()
    answers = iter(["0", "0", "1"])  # the server: t1 not yet in its wait, then waiting for its ack

    class Cluster:
        asked = 0

        def global_status(self, node, like):
            assert (node, like) == ("A", "Rpl_semi_sync_master_wait_sessions")
            Cluster.asked += 1
            return {like: next(answers)}
    r.cluster = Cluster()
    t1, t2 = threading.Thread(target=held.wait), threading.Thread(target=held.wait)
    t1.start(), t2.start()
    r.ops._in_flight["A"] = [(100, t1), (500, t2)]
    r.ops.await_commits({"at": 200, "op": "crash", "node": "A"})  # after t1's planned end, before t2's
    assert Cluster.asked == 3 and t1.is_alive()  # it went on once the server showed t1 waiting
    r.ops.await_commits({"at": 300, "op": "stop_slave", "node": "B"})  # another node's op does not look
    assert Cluster.asked == 3
    r.ops.await_commits({"at": 50, "op": "read", "node": "A"})  # due before both ends: nothing asked
    assert Cluster.asked == 3
    held.set()
    t1.join(), t2.join()
    r.ops.await_commits({"at": 600, "op": "crash", "node": "A"})  # both returned: nothing to ask
    assert Cluster.asked == 3 and r.ops._in_flight["A"] == []


def test_an_op_waits_for_a_commit_planned_before_it_on_another_node():
    """dom-strict-two-domains at load 17: R's local write t3 (planned 0.4 s, scale 0.1) returned at
    0.87 s, after M's t4 (planned 0.5 s) had reached R: no out-of-order GTID, no error 1950, the
    scenario's precondition unmet. An op waits for every transaction planned to end before it,
    whichever node it is on."""
    class Session:  # a client session that returns once joined
        def __init__(self):
            self.joined = None

        def join(self, timeout=None):
            self.joined = timeout

        def is_alive(self):
            return self.joined is None
    r = R.Runner(_history([]))
    t3, later = Session(), Session()
    r.ops._in_flight["B"] = [(400, t3), (900, later)]
    r.ops.await_commits({"at": 500, "op": "trx", "node": "A"})
    assert t3.joined == OP.COMMIT_WAIT_S and later.joined is None and r.ops._in_flight["B"] == [(900, later)]


def test_skipped_events_are_read_in_the_relay_log_the_note_names_not_an_older_one_of_that_name():
    """inc-skip-after-rotation on MariaDB: START SLAVE purged the relay logs and the new relay.000002
    reuses the name; walking back from the note's new position must not cross into the old one."""
    r = R.Runner(_history([]))
    r.relay_logs[B] = object()  # read: the note is about a relay log the runner read

    def relay(t, pos, etype, trx=None):
        r.emit("relay", "B", t, source="A", type=etype, trx=trx, idx=0, last=False, gtid=None, server_id=1, when=1,
               ict=None, file="relay.000002", pos=pos, master_file="bin.000001", master_end=pos)
    for pos, etype, trx in [(615, "GTID_LOG_EVENT", "create_t1"), (769, "INCIDENT_EVENT", None),
                            (829, "GTID_LOG_EVENT", "after_gap")]:
        relay(10, pos, etype, trx)  # the first life of relay.000002
    for pos, etype in [(256, "ROTATE_EVENT"), (297, "FORMAT_DESCRIPTION_EVENT"), (615, "GTID_LIST_EVENT"),
                       (658, "INCIDENT_EVENT")]:
        relay(20, pos, etype)  # after the purge: the master sends again from the head of its binlog
    relay(20, 715, "GTID_LOG_EVENT", "after_gap")
    r.emit("log", "B", 25, level="Note", message="'SQL_SLAVE_SKIP_COUNTER=1' executed at relay_log_file='./relay.000002', "
           "relay_log_pos='256', master_log_name='bin.000001', master_log_pos='4', GTID '0-1-1'; and new position at "
           "relay_log_file='./relay.000002', relay_log_pos='715', master_log_name='bin.000001', master_log_pos='533', GTID '0-1-1'; ")
    r.collector._emit_skips()
    assert [(o["type"], o["relay_pos"]) for _, _, o in r.obs if o["kind"] == "skip"] == [("INCIDENT_EVENT", 658)]


def test_skipped_events_read_at_a_later_poll_than_the_note_are_found():
    """inc-skip-after-rotation on a loaded machine: the note was tailed before the poll that read the
    events it passed over (the incident came at a later read than the one after the note). What is
    relayed up to the next purge counts; a later life of the same relay-log name does not."""
    r = R.Runner(_history([]))
    r.relay_logs[B] = object()

    def relay(t, pos, etype, trx=None):
        r.emit("relay", "B", t, source="A", type=etype, trx=trx, idx=0, last=False, gtid=None, server_id=1, when=1,
               ict=None, file="relay.000002", pos=pos, master_file="bin.000001", master_end=pos)
    relay(20, 256, "ROTATE_EVENT")
    relay(20, 297, "FORMAT_DESCRIPTION_EVENT")
    r.emit("log", "B", 25, level="Note", message="'SQL_SLAVE_SKIP_COUNTER=1' executed at relay_log_file='./relay.000002', "
           "relay_log_pos='256', master_log_name='bin.000001', master_log_pos='4', GTID '0-1-1'; and new position at "
           "relay_log_file='./relay.000002', relay_log_pos='715', master_log_name='bin.000001', master_log_pos='533', GTID '0-1-1'; ")
    relay(27, 615, "GTID_LIST_EVENT")
    relay(30, 658, "INCIDENT_EVENT")
    relay(30, 715, "GTID_LOG_EVENT", "after_gap")
    r.emit("stmt", "B", 41, op="start_slave", errno=None, warning=None, message="", duration_us=1)  # purges again
    relay(45, 658, "INCIDENT_EVENT")  # the next life of relay.000002: not what the note passed over
    r.collector._emit_skips()
    assert [(o["t"], o["type"], o["relay_pos"]) for _, _, o in r.obs if o["kind"] == "skip"] == [(25, "INCIDENT_EVENT", 658)]


def test_a_stopped_sql_thread_passes_nothing_and_what_it_passed_comes_before_its_stop():
    """inc-skip-then-reconnect on MariaDB: stopped at an incident, B's IO thread fetched a relay log
    of the same name again; its fake Rotate, at a place before the stopped thread's, was taken
    for passed, an apply 'while stopped at an incident' (WL3464.HOLD)."""
    from replcheck.harness.relaylog import Event

    r = R.Runner(_history([]))
    r.sources[B] = "A"
    r.observer._relay_event(B, 10, "relay.000002", Event(256, 41, 0, 4, 1, 0, "Rotate to bin.000001  pos: 4"))
    r.observer._relay_event(B, 10, "relay.000002", Event(615, 60, 1700000001, 26, 1, 533))  # an incident

    def sample(t, running, errno=0):
        r.observer.record_status(B, t, {"Slave_IO_Running": "Yes", "Slave_SQL_Running": running, "Relay_Log_File": "relay.000002",
                           "Relay_Log_Pos": "615", "Last_SQL_Errno": str(errno), "Last_SQL_Error": "incident"}, None, False)
    sample(20, "Yes")
    sample(30, "No", 1590)
    r.observer._relay_event(B, 40, "relay.000002", Event(256, 41, 0, 4, 1, 0, "Rotate to bin.000001  pos: 4"))  # refetched
    sample(50, "No", 1590)
    kinds = [(o["t"], o["kind"]) for _, _, o in r.obs if o["kind"] in ("apply", "sql_stop")]
    assert kinds == [(20, "apply"), (30, "sql_stop")]


def test_a_group_cut_in_transfer_stays_partial_in_the_relay_observations():
    """cut-mid-group-reconnect on MariaDB 10.11 (B's relay logs, positions as read): the cut left t2's
    GTID and first statement in relay.000002; after the reconnect the IO thread wrote the dump's
    Rotate, FDE, Gtid_list events and its own Rotate, then the rest of t2 (it skipped the 4 events
    it held). The copy is one group: its events numbered on across the reconnect, the XID its last;
    a GTID that follows an open copy leaves it partial (never marked last)."""
    from replcheck.harness.relaylog import Event

    r = R.Runner(_history([]))
    r.sources[B] = "A"
    stmt_end = bytes(6) + (1).to_bytes(2, "little")
    log = [("relay.000002", Event(849, 42, 1, 162, 1, 598, "GTID 0-1-2 trans", bytes(13))),
           ("relay.000002", Event(891, 72, 1, 160, 1, 670)), ("relay.000002", Event(963, 46, 1, 19, 1, 716)),
           ("relay.000002", Event(1009, 43, 1, 23, 1, 759, "", stmt_end)),
           ("relay.000003", Event(256, 41, 0, 4, 1, 0, "Rotate to bin.000001  pos: 4")),
           ("relay.000003", Event(297, 252, 1, 15, 1, 0)), ("relay.000003", Event(549, 29, 1, 163, 1, 285)),
           ("relay.000003", Event(615, 43, 0, 163, 1, 556)), ("relay.000003", Event(658, 41, 1, 4, 1, 699, "Rotate to bin.000001  pos: 759")),
           ("relay.000003", Event(699, 72, 1, 160, 1, 831)), ("relay.000003", Event(771, 46, 1, 19, 1, 877)),
           ("relay.000003", Event(817, 43, 1, 23, 1, 920, "", stmt_end)), ("relay.000003", Event(1021, 31, 1, 16, 1, 1112)),
           ("relay.000003", Event(1052, 42, 1, 162, 1, 1154, "GTID 0-1-3 trans", bytes(13))),
           ("relay.000003", Event(1094, 72, 1, 160, 1, 1226)),
           ("relay.000003", Event(1166, 42, 1, 162, 1, 1268, "GTID 0-1-4 ddl", bytes(12) + b"\x01")),
           ("relay.000003", Event(1208, 80, 1, 2, 1, 1348, "", bytes(13) + b"rc\0CREATE TABLE rc.d5 (i INT)"))]
    for name, ev in log:
        r.observer._relay_event(B, 10, name, ev)
    got = [(o["gtid"], o["idx"], o["last"]) for _, _, o in r.obs if o["kind"] == "relay" and o["gtid"]]
    assert got == [("0-1-2", i, i == 7) for i in range(8)] + [("0-1-3", 0, False), ("0-1-3", 1, False),
                                                                ("0-1-4", 0, False), ("0-1-4", 1, True)]
    # The reconnect's events inside the copy are in no group and passed as such (the SQL thread's).
    assert [o["type"] for _, _, o in r.obs if o["kind"] == "relay" and not o["gtid"]] == [
        "ROTATE_EVENT", "FORMAT_DESCRIPTION_EVENT", "GTID_LIST_EVENT", "GTID_LIST_EVENT", "ROTATE_EVENT"]
    assert len(r.observer._unapplied[B]) == 5


@pytest.mark.parametrize("parts, kept", [
    ({0: 1, 1: 1, 2: 1}, list(range(11))),  # every statement's row: the whole group
    ({0: 1, 2: 1}, [0, 1, 2, 3, 7, 8, 9, 10]),  # committed without its second statement
    ({0: 2, 1: 1, 2: 1}, [0, 1, 2, 3, 10]),  # the first statement twice (a partial copy committed, then the whole)
    ({}, list(range(11))),  # no rows read (DDL, or the node could not be asked): as the binlog has it
])
def test_what_a_replica_committed_of_a_group_is_read_from_its_rows(parts, kept):
    """A three-statement group in ROW format (GTID; Annotate_rows, Table_map, Write_rows each; XID):
    the applies the runner records are those its rows show committed, so PARTIAL.GROUP.WHOLE sees
    a partial commit."""
    types = ["GTID_LOG_EVENT"] + ["ANNOTATE_ROWS_EVENT", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT"] * 3 + ["XID_EVENT"]
    group = [{"type": t, "idx": i, "last": i == 10} for i, t in enumerate(types)]
    committed = binlog_events.committed(group, parts)
    assert [e["idx"] for e in committed] == kept
    obs = [{"t": 1, "kind": "apply", "node": "B", "trx": "t2", "gtid": "0-1-2", **e} for e in committed]
    header = {"schema": "replcheck.trace/1", "system": "mariadb:10.11", "topology": {"nodes": [{"id": "A"}, {"id": "B"}]}}
    [v] = [v for v in core.run_properties(core.TraceView(header, obs), "partial") if v.requirement == "PARTIAL.GROUP.WHOLE"]
    assert v.status == (core.PASS if kept == list(range(11)) else core.VIOLATED), v


def test_cut_io_arms_the_replica_s_relay_and_records_where_it_cut():
    """cut_io is the relay's (replcheck/harness/proxy.py): armed on the replica's channel; not a
    replica, the models' error; a reconnect cut is recorded as the relay made it, with the source's
    place after the last event passed."""
    from replcheck.harness.proxy import Cut

    class Relay:
        armed: list = []

        def cut(self, after_events, then):
            self.armed.append((after_events, then))

    r = R.Runner(_history([]))
    r.proxies[B] = Relay()
    r.faults.cut_io({"at": 1, "op": "cut_io", "node": "B", "after_events": 3})
    r.faults.cut_io({"at": 1, "op": "cut_io", "node": "A", "after_events": 1, "then": "stop"})
    assert Relay.armed == [(3, "reconnect")]
    r.faults.io_cut("A", "B", Cut("reconnect", "bin.000001", 759, "0-1-2"))
    got = [{k: v for k, v in o.items() if k != "t"} for _, _, o in r.obs]
    assert got == [{"kind": "error", "node": "A", "op": "cut_io", "errno": F.ER_BAD_SLAVE, "message": "not a replica"},
                   {"kind": "io_cut", "node": "B", "source": "A", "then": "reconnect", "master_log_file": "bin.000001",
                    "master_log_pos": 759}]


class _StoppedReplica:
    """B as MariaDB 10.11 answers a START SLAVE: SHOW SLAVE STATUS before it, the statement's clock
    readings (no warning), its parallel settings; down for the poll after it."""

    def __init__(self, **status):
        self.status = {"Using_Gtid": "Slave_Pos", "Slave_IO_Running": "No", "Slave_SQL_Running": "No",
                       "Relay_Log_File": "relay.000001", "Relay_Log_Pos": "697", **status}

    def show_slave_status(self, node, connection=None):
        return dict(self.status)

    def results(self, node, statement, timeout=None):
        return [(["now"], [["1700000009.821699"]]), ([], []), (["Level", "Code", "Message"], []), (["now"], [["1700000009.856423"]])]

    def query(self, node, statement):
        return ["threads", "mode"], [["2", "conservative"]]

    def is_running(self, node):
        return False


@pytest.mark.parametrize("thread,status,dropped", [
    (None, {}, 4),
    ("sql", {}, 4),  # start_slave_threads purges whichever thread START SLAVE starts, both being stopped
    (None, {"Relay_Log_Pos": "1200"}, 0),  # purged, but the SQL thread had passed all of it: not observed
    (None, {"Using_Gtid": "No"}, None),
    ("sql", {"Slave_IO_Running": "Yes"}, None),  # the IO thread runs: the relay log is in use
    ("sql", {"Slave_IO_Running": "Connecting"}, None),
])
def test_a_gtid_start_slave_with_both_threads_stopped_is_observed_as_the_relay_log_thrown_away(thread, status, dropped):
    """par-delayed-sbm-gtid-start on MariaDB 10.11: STOP SLAVE and START SLAVE during t2's delay. With
    MASTER_USE_GTID and both threads stopped, start_slave_threads (sql/slave.cc) purges the relay
    logs and the IO thread fetches t2 again; without the observation the pending-event index took
    the first copy of t2 for never applied (SBM.PENDING violated, an artefact). The observation is
    the models': relay_log_recovery, reason gtid, after the statement, with the events the SQL
    thread had not passed (none: no observation, as the models)."""
    from replcheck.harness.relaylog import Event

    r = R.Runner(_history([]))
    r.sources[B] = "A"
    r.wall_t0 = 1_700_000_000.0
    r.relay_logs[B] = type("Read", (), {"read": lambda self, settled=False, final=False: []})()
    r.cluster = _StoppedReplica(**{"Relay_Log_Pos": "372", **status})  # stopped before the Rotate and t2
    stmt_end = bytes(6) + (1).to_bytes(2, "little")
    for pos, size, code, text, post in [(256, 42, 162, "GTID 0-1-1 trans", bytes(13)), (298, 43, 23, "", stmt_end),
                                        (341, 31, 16, "", b""),  # t1, applied
                                        (372, 41, 4, "Rotate to bin.000001  pos: 4", b""),  # in no group
                                        (413, 42, 162, "GTID 0-1-2 trans", bytes(13)), (455, 43, 23, "", stmt_end),
                                        (498, 31, 16, "", b"")]:  # t2, waiting for its delay
        r.observer._relay_event(B, 10, "relay.000001", Event(pos, size, 1_700_000_009, code, 1, pos + size, text, post))
    r.ops.statement({"at": 9_700_000, "op": "start_slave", "node": "B", **({"thread": thread} if thread else {})})
    seen = [(o["kind"], o.get("dropped"), o.get("reason")) for _, _, o in r.obs if o["kind"] in ("stmt", "relay_log_recovery", "parallel")]
    assert seen == [("stmt", None, None)] + ([("relay_log_recovery", dropped, "gtid")] if dropped else []) + [("parallel", None, None)]
    assert all(o["t"] == 9_856_423 for _, _, o in r.obs if o["kind"] != "relay")
    # What lay outside groups was thrown away with the relay log, not passed: no later sample executes it.
    r.observer.record_status(B, 10_000_000, {"Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes", "Relay_Log_File": "relay.000001",
                                "Relay_Log_Pos": "900"}, None, False)
    assert [o["type"] for _, _, o in r.obs if o["kind"] == "apply"] == (["ROTATE_EVENT"] if dropped is None else [])


def test_a_commit_after_a_gtid_start_is_applied_from_the_copy_fetched_again():
    """inc-cache-overflow on 10.11 at load 8: START SLAVE threw the relay log holding after_gap away
    (relay_log_recovery) and fetched it again, read at a poll after the one that found its row. Its
    apply names the copy fetched again, not the one thrown away (which left the new copy unapplied:
    SBM.PENDING violated, an artefact)."""
    r = R.Runner(_history([]))
    r.cluster = type("Down", (), {"sql": lambda self, node, statement: (_ for _ in ()).throw(OP.HarnessError("down"))})()
    r.trx_names, r.gtid_of = ["after_gap"], {0: "0-1-3"}
    r.seen, r.seen_pos, r.seen_src = {("B", 0): 1_757_000}, {("B", 0): ("relay.000002", 949)}, {("B", 0): "A"}
    r.emit("binlog", "A", 900_000, type="GTID_LOG_EVENT", trx="after_gap", idx=0, last=False, gtid="0-1-3", server_id=1, when=1)
    r.emit("binlog", "A", 900_000, type="XID_EVENT", trx="after_gap", idx=1, last=True, gtid="0-1-3", server_id=1, when=1)
    for t, pos in ((836_000, 826), (1_809_000, 715)):  # the first copy, then the one fetched again (a later read)
        for idx, typ in enumerate(("GTID_LOG_EVENT", "XID_EVENT")):
            r.emit("relay", "B", t, type=typ, trx="after_gap", idx=idx, last=bool(idx), gtid="0-1-3", file="relay.000002",
                   pos=pos + 100 * idx, when=1)
    r.emit("relay_log_recovery", "B", 1_631_000, dropped=6, reason="gtid")
    r.collector._emit_applies()
    assert [(o["t"], o["relay_pos"]) for _, _, o in r.obs if o["kind"] == "apply"] == [(1_757_000, 715), (1_757_000, 815)]


def test_a_clock_reading_before_a_step_is_trace_time_by_the_offset_then():
    # seed 2's History 137: t2 began at 17.9 s on A's clock, which stepped an hour ahead at 18.97 s
    # before t2's commit; by the offset of now its start was an hour earlier (0)
    r = R.Runner(_history([{"at": 5 * US, "op": "clock_step", "node": "A", "delta_us": 3600 * US}]), scale=1.0)
    r.wall_t0 = 1_700_000_000.0
    r.clock_steps["A"] = [(19 * US, 3600 * US)]
    r.clock_offsets["A"] = 3600 * US
    assert r.instant("1700000017.9", "A") == 17_900_000  # read before the step
    assert r.instant("1700003620.5", "A") == 20_500_000  # after it, an hour ahead


def test_a_clock_reading_both_offsets_fit_after_a_step_back_is_the_one_the_client_saw():
    # seed 10's History 154: t9 ran on A from 9.4 to 9.9 s and A's clock stepped 2 s back at 9.95 s;
    # both readings fit the offset after the step too, which put its return at 11.9 s
    r = R.Runner(_history([{"at": 5 * US, "op": "clock_step", "node": "A", "delta_us": -2 * US}]), scale=1.0)
    r.wall_t0 = 1_700_000_000.0
    r.clock_steps["A"] = [(9_950_000, -2 * US)]
    r.clock_offsets["A"] = -2 * US
    sent = (9_400_000, 9_945_000)
    assert r.instant("1700000009.43", "A", sent) == 9_430_000
    assert r.instant("1700000009.94", "A", sent) == 9_940_000
    assert r.instant("1700000008.1", "A", (10_000_000, 10_200_000)) == 10_100_000  # read after the step
    assert r.instant("1700000009.94", "A") == 11_940_000  # nothing to tell by: the later


def test_a_servers_own_time_is_an_interval_of_trace_time_less_its_clock_offset_then():
    r = R.Runner(_history([{"at": 5 * US, "op": "clock_step", "node": "B", "delta_us": -2 * US}],
                          nodes=({"id": "A"}, {"id": "B", "clock_offset_us": 3600 * US})), scale=1.0)
    r.epoch_us = 1_700_000_000 * US
    assert r.server_interval("A", r.epoch_us + 7 * US, US) == [7 * US, 8 * US]  # the machine's clock
    assert r.server_interval("B", r.epoch_us + 3604 * US, US) == [4 * US, 5 * US]  # an hour ahead
    r.clock_steps["B"] = [(5 * US, 3598 * US)]  # stepped back 2 s at 5 s: its 3603rd to 3604th second came twice
    assert r.server_interval("B", r.epoch_us + 3602 * US, US) == [2 * US, 3 * US]  # only before the step
    assert r.server_interval("B", r.epoch_us + 3604 * US, US) == [4 * US, 7 * US]  # before it or after: both
    assert r.server_interval("B", r.epoch_us + 3606 * US, US) == [8 * US, 9 * US]  # only after it


def test_a_shutdown_samples_the_node_just_before_it_as_a_crash_does():
    # seed 1's History 4: A switched semi-sync back ON at B's ack 90 ms before its shutdown, between
    # two polls; only a sample taken just before the shutdown shows it
    r = R.Runner(_history([]))
    done: list[tuple] = []

    class Cluster:
        def stop(self, node):
            done.append(("stop", node))

        def kill9(self, node):
            done.append(("kill9", node))

    r.cluster = Cluster()
    r.observer.poll = lambda node, force=False: done.append(("poll", node, force))
    r.faults.shutdown({"at": 1, "op": "shutdown", "node": "A"})
    r.faults.crash({"at": 2, "op": "crash", "node": "B"})
    assert done == [("poll", "A", True), ("stop", "A"), ("poll", "B", True), ("kill9", "B")]
