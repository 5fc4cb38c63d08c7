"""What the collector reads once a run is over (collect.py): the skips SQL_SLAVE_SKIP_COUNTER made,
from the server's note or, when the counter had not run out by the end, from the last sample (a
restart whose GTID start threw the relay logs away begins their names again, whether or not it
threw anything unapplied away); which poll first shows a GTID in a node's binlog; the timestamp
a replica's execution of an event carries; and where a node's own group is placed in its binlog."""
from __future__ import annotations

from replcheck.harness import runner as R

B = ("B", None)


def _history() -> dict:
    return {"header": {"schema": "replcheck.history/1", "name": "t",
                       "topology": {"nodes": [{"id": "A"}, {"id": "B"}], "channels": [{"source": "A", "replica": "B"}]}},
            "ops": []}


def test_a_restart_that_purged_nothing_unapplied_still_begins_the_relay_log_names_again():
    # a campaign's parallel History: t11 skipped by a counter of 3, then B restarted by GTID and
    # fetched again into relay.000001
    r = R.Runner(_history())
    r.relay_logs[B] = object()

    def relay(t, file, pos, etype, trx=None):
        r.emit("relay", "B", t, source="A", type=etype, trx=trx, idx=0, last=etype == "XID_EVENT", gtid="0-1-1" if trx else None,
               server_id=1, when=1, ict=None, file=file, pos=pos, master_file="bin.000001", master_end=pos)
    relay(20, "relay.000002", 3697, "XID_EVENT", "t10")
    for pos, etype in [(3728, "GTID_LOG_EVENT"), (3770, "QUERY_EVENT"), (3920, "XID_EVENT")]:
        relay(21, "relay.000002", pos, etype, "t11")
    r.emit("log", "B", 39, level="Note", message="'SQL_SLAVE_SKIP_COUNTER=3' executed at relay_log_file='./relay.000002', "
           "relay_log_pos='3728', master_log_name='bin.000001', master_log_pos='3628', GTID '1-1-10';  and new position at "
           "relay_log_file='./relay.000002', relay_log_pos='3951', master_log_name='bin.000001', master_log_pos='3851', GTID '0-1-1'")
    r.emit("restart", "B", 42)
    r.observer.relay_purged(B, 42, {"Relay_Log_File": "relay.000002", "Relay_Log_Pos": "3951"})  # nothing unapplied
    relay(43, "relay.000001", 256, "ROTATE_EVENT")  # the next life of the names
    r.collector._emit_skips()
    assert [(o["type"], o["trx"]) for _, _, o in r.obs if o["kind"] == "skip"] == [
        ("GTID_LOG_EVENT", "t11"), ("QUERY_EVENT", "t11"), ("XID_EVENT", "t11")]


def test_a_skip_is_placed_before_the_first_apply_of_what_follows_it():
    # seed 0's History 130 (incident family): the counter passed t1's first statement group, and the
    # poll that found the next group's row came before the one that read the note
    r = R.Runner(_history())
    r.relay_logs[B] = object()
    for pos, etype, trx in [(652, "GTID_LOG_EVENT", "g1"), (857, "QUERY_EVENT", "g1"), (926, "GTID_LOG_EVENT", "g2")]:
        r.emit("relay", "B", 10, source="A", type=etype, trx=trx, idx=0, last=etype == "QUERY_EVENT", gtid="0-1-1",
               server_id=1, when=1, ict=None, file="relay.000004", pos=pos, master_file="bin.000002", master_end=pos)
    r.emit("apply", "B", 30, source="A", type="GTID_LOG_EVENT", trx="g2", idx=0, last=False, gtid="0-1-2", server_id=1, when=1,
           ict=None, read=None, begin=None, relay_file="relay.000004", relay_pos=926)
    r.emit("log", "B", 39, level="Note", message="'SQL_SLAVE_SKIP_COUNTER=1' executed at relay_log_file='./relay.000004', "
           "relay_log_pos='652', master_log_name='bin.000002', master_log_pos='359', GTID '0-1-0';  and new position at "
           "relay_log_file='./relay.000004', relay_log_pos='926', master_log_name='bin.000002', master_log_pos='633', GTID '0-1-1'")
    r.collector._emit_skips()
    assert [(o["t"], o["relay_pos"]) for _, _, o in r.obs if o["kind"] == "skip"] == [(29, 652), (29, 857)]


def _status(r, t, pos, counter):
    r.emit("status", "B", t, Slave_IO_Running="Yes", Slave_SQL_Running="Yes", Slave_SQL_Running_State="",
           Relay_Log_File="relay.000002", Relay_Master_Log_File="bin.000001", Master_Log_File="bin.000001",
           Last_SQL_Error="", Gtid_IO_Pos="", SQL_Delay=0, Relay_Log_Pos=pos, Exec_Master_Log_Pos=pos,
           Read_Master_Log_Pos=pos, Last_SQL_Errno=0, Skip_Counter=counter, SQL_Remaining_Delay=None, Seconds_Behind_Master=0)


def _counter_set_and_started(at: int, trx: str, gtid: str, events: list[tuple[int, str]]) -> R.Runner:
    """B sampled at `at` with its counter 0, then sql_slave_skip_counter = 3 and START SLAVE
    SQL_THREAD, with trx's events relayed at those places (the last one ends the group)."""
    r = R.Runner(_history())
    r.relay_logs[B] = object()
    _status(r, 10, at, 0)
    r.emit("stmt", "B", 11, op="set_global", variable="sql_slave_skip_counter", value=3, errno=None, message="")
    r.emit("stmt", "B", 12, op="start_slave", thread="sql", errno=None, warning=None, message="")
    for i, (pos, etype) in enumerate(events):
        r.emit("relay", "B", 13, source="A", type=etype, trx=trx, idx=i, last=i == len(events) - 1, gtid=gtid,
               server_id=1, when=1, ict=None, file="relay.000002", pos=pos, master_file="bin.000001", master_end=pos)
    return r


def test_a_counter_still_running_at_the_end_skipped_what_the_last_sample_is_past():
    # a campaign's incident History: sql_slave_skip_counter = 3 passed t2's events, and the run
    # ended before the counter ran out, so MariaDB wrote no note
    r = _counter_set_and_started(400, "t2", "0-1-2", [(400, "GTID_LOG_EVENT"), (442, "QUERY_EVENT"), (520, "XID_EVENT")])
    _status(r, 16, 551, 1)
    _status(r, 20, 551, 1)
    r.collector._emit_skips()
    # as of the first sample past them: the later ones show the same place (seed 1's History 4)
    assert [(o["t"], o["type"]) for _, _, o in r.obs if o["kind"] == "skip"] == [
        (16, "GTID_LOG_EVENT"), (16, "QUERY_EVENT"), (16, "XID_EVENT")]
    r = _counter_set_and_started(400, "t2", "0-1-2", [])  # the counter set and the thread started, but nothing passed yet
    _status(r, 20, 400, 3)
    r.collector._emit_skips()
    assert not [o for _, _, o in r.obs if o["kind"] == "skip"]


def test_a_counter_a_change_master_reset_skipped_what_the_last_sample_before_it_is_past():
    # seed 9's History 46: C's counter of 3 passed t3's two events, then STOP SLAVE and CHANGE MASTER
    # set it to 0 (no note), and the relay logs were fetched again by GTID into other places
    r = _counter_set_and_started(808, "t3", "0-1-3", [(808, "GTID_LOG_EVENT"), (850, "QUERY_EVENT")])
    _status(r, 16, 964, 1)
    _status(r, 20, 964, 1)
    r.emit("stmt", "B", 22, op="change_master", delay=0, errno=None, warning=None, message="", duration_us=1)
    _status(r, 24, 4, 0)
    r.emit("relay_log_recovery", "B", 25, dropped=2, reason="gtid")
    _status(r, 30, 931, 0)
    r.collector._emit_skips()
    assert [(o["t"], o["type"]) for _, _, o in r.obs if o["kind"] == "skip"] == [(16, "GTID_LOG_EVENT"), (16, "QUERY_EVENT")]


def test_a_gtid_is_logged_by_a_poll_only_where_its_own_server_s_gtid_shows():
    # seed 1's History 27: C's own 0-3-2 in domain 0 is no proof that 0-1-1 was in C's binlog
    r = R.Runner(_history())
    r.binlog_pos["C"] = [(10, {0: "0-3-2"}), (20, {0: "0-1-1"}), (30, {0: "0-3-3"})]
    assert r.collector._logged_by("C", "0-1-1") == 20
    assert r.collector._logged_by("C", "0-1-2") is None
    assert r.collector._logged_by("C", "0-3-1") == 10


def test_a_chain_hop_executes_the_timestamp_of_its_own_relay_copy():
    # seed 2's History 38: A's GTID event of t9 carries its COMMIT's second (906), B's binlog copy its
    # row events' (903); C read B's copy and waited MASTER_DELAY from 903, not from A's 906
    chain = {"header": {"schema": "replcheck.history/1", "name": "t", "topology": {
        "nodes": [{"id": "A"}, {"id": "B"}, {"id": "C"}],
        "channels": [{"source": "A", "replica": "B"}, {"source": "B", "replica": "C"}]}}, "ops": []}
    r = R.Runner(chain)
    r.collector._rows_by_part = lambda node: {}  # no server to count rows on: the whole group
    r.trx_names, r.gtid_of = ["t9"], {0: "0-1-3"}
    r.seen[("C", 0)], r.seen_src[("C", 0)], r.seen_pos[("C", 0)] = 50, "B", ("relay.000002", 1087)
    for node, when, kind, place in [("A", 906, "binlog", {}), ("B", 903, "binlog", {}),
                                    ("C", 903, "relay", {"source": "B", "master_file": "bin.000001", "master_end": 836})]:
        r.emit(kind, node, 10, type="GTID_LOG_EVENT", trx="t9", idx=0, last=False, gtid="0-1-3", server_id=1,
               when=when, ict=None, file="relay.000002" if kind == "relay" else "bin.000001", pos=1087, **place)
    r.collector._emit_applies()
    assert [(o["node"], o["when"]) for _, _, o in r.obs if o["kind"] == "apply"] == [("C", 903)]


def test_a_chain_hop_executes_the_events_of_its_own_relay_copy():
    # seed 2's History 75: A logged t6 as statements, B (binlog_format ROW) as row events; C executed
    # B's copy, so its applies are B's events at their own relay places, the last one its XID
    chain = {"header": {"schema": "replcheck.history/1", "name": "t", "topology": {
        "nodes": [{"id": "A"}, {"id": "B"}, {"id": "C"}],
        "channels": [{"source": "A", "replica": "B"}, {"source": "B", "replica": "C"}]}}, "ops": []}
    r = R.Runner(chain)
    r.collector._rows_by_part = lambda node: {}
    r.trx_names, r.gtid_of = ["t6"], {0: "0-1-6"}
    r.seen[("C", 0)], r.seen_src[("C", 0)], r.seen_pos[("C", 0)] = 50, "B", ("relay.000004", 1878)
    origin = ["GTID_LOG_EVENT", "QUERY_EVENT", "XID_EVENT"]
    copy = ["GTID_LOG_EVENT", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT", "XID_EVENT"]
    for node, kind, types in [("A", "binlog", origin), ("C", "relay", copy)]:
        for i, t in enumerate(types):
            place = {"source": "B", "master_file": "bin.000003", "master_end": 1500 + i} if kind == "relay" else {}
            r.emit(kind, node, 10, type=t, trx="t6", idx=i, last=i == len(types) - 1, gtid="0-1-6", server_id=1,
                   when=354, ict=None, file="relay.000004" if kind == "relay" else "bin.000002", pos=1529 + 50 * i, **place)
    r.collector._emit_applies()
    applies = [o for _, _, o in r.obs if o["kind"] == "apply"]
    assert [(o["type"], o["relay_pos"], o["last"]) for o in applies] == [(t, 1529 + 50 * i, i == 3) for i, t in enumerate(copy)]


def test_a_node_s_own_group_is_not_placed_before_its_commit_began():
    # seed 2's History 137: a poll that showed the GTID before t3's commit began (an earlier holder of
    # 0-1-2) placed t3's events, and the FLUSH LOGS rotation before them, ahead of the commit
    r = R.Runner(_history())
    r.trx_names, r.origin_of, r.gtid_of = ["t3"], {0: "A"}, {0: "0-1-2"}
    r.commits[0], r.returned[0] = {"start": 50}, (60, None)
    r.binlog_pos["A"] = [(10, {0: "0-1-2"})]
    events = [{"type": t, "gtid": "0-1-2", "idx": i, "last": i == 1, "server_id": 1, "when": 0, "ict": None,
               "file": "bin.000003", "pos": 4 + i, "end": 5 + i, "_k": 0} for i, t in enumerate(["GTID_LOG_EVENT", "XID_EVENT"])]
    r.collector._read_binlog = lambda node: [dict(e) for e in events] if node == "A" else []
    for name in ("_emit_applies", "_emit_statement_applies", "_emit_skips"):
        setattr(r.collector, name, lambda *a: None)
    r.collector.collect_binlogs()
    assert [(o["type"], o["t"]) for _, _, o in r.obs if o["kind"] == "binlog"] == [("GTID_LOG_EVENT", 60), ("XID_EVENT", 60)]


def _group(gtid: str, k: int, sid: int, file: str, h: int | None = None) -> list[dict]:
    return [{"type": t, "gtid": gtid, "idx": i, "last": i == 1, "server_id": sid, "when": 0, "ict": None, "file": file,
             "pos": 4 + i, "end": 5 + i, **({"_k": k} if i else {}), **({} if h is None else {"_h": h})}
            for i, t in enumerate(["GTID_LOG_EVENT", "QUERY_EVENT"])]


def test_a_gtid_names_a_group_only_within_one_binlog_history():
    # mdb-rpl_semi_sync-reset-master: create_t1 took 0-1-1, RESET MASTER on A, then create_t1b took
    # 0-1-1 again; B holds a copy of create_t1 only. Named by GTID alone they were one group, placed
    # at the poll that showed the first one
    r = R.Runner(_history())
    r.trx_names, r.origin_of, r.gtid_of = ["create_t1", "create_t1b"], {0: "A", 1: "A"}, {0: "0-1-1", 1: "0-1-1"}
    r.commits[0], r.commits[1] = {"start": 10, "gtid": "0-1-1"}, {"start": 200, "gtid": "0-1-1"}
    r.returned[0], r.returned[1] = (20, None), (210, None)
    r.binlog_resets["A"] = [100]
    r.binlog_pos["A"] = [(15, {0: "0-1-1"}), (150, {}), (220, {0: "0-1-1"})]
    logs = {"A": _group("0-1-1", 0, 1, "bin.000001", 0) + _group("0-1-1", 1, 1, "bin.000001"),
            "B": _group("0-1-1", 0, 1, "bin.000001")}
    r.collector._read_binlog = lambda node: [dict(e) for e in logs[node]]
    for name in ("_emit_applies", "_emit_statement_applies", "_emit_skips"):
        setattr(r.collector, name, lambda *a: None)
    r.collector.collect_binlogs()
    binlogs = [(o["node"], o["trx"], o["gtid"], o["t"]) for _, _, o in r.obs if o["kind"] == "binlog" and o["idx"] == 0]
    assert binlogs == [("A", "create_t1", "0-1-1", 15), ("A", "create_t1b", "0-1-1", 210), ("B", "create_t1", "0-1-1", 0)]
    assert r.gtid_of == {0: "0-1-1", 1: "0-1-1"}


def test_a_reset_master_keeps_the_binlogs_it_deletes():
    r = R.Runner(_history())
    files = {"A": ["bin.000001", "bin.000002"]}
    r.collector.binlog_files = lambda node: files[node]
    r.collector._read_binlog_file = lambda node, f: _group("0-1-1" if f == "bin.000001" else "0-1-2", 0, 1, f)
    r.collector.keep_binlogs("A", every=True)
    r.binlog_resets["A"], files["A"] = [100], ["bin.000001"]
    read = [(ev["file"], ev["gtid"], ev["_h"]) for ev in r.collector._read_binlog("A") if ev["idx"] == 0]
    assert read == [("bin.000001", "0-1-1", 0), ("bin.000002", "0-1-2", 0), ("bin.000001", "0-1-1", 1)]


def test_a_poll_proves_a_gtid_of_its_own_binlog_history_only():
    r = R.Runner(_history())
    r.binlog_resets["A"] = [100]
    r.binlog_pos["A"] = [(50, {}), (150, {0: "0-1-3"}), (250, {})]
    assert r.collector._logged_by("A", "0-1-1") is None  # 0-1-3 at 150 is the next history's
    assert r.collector._logged_by("A", "0-1-1#1") == 150
    assert r.collector._logged_by("B", "0-1-1#1") is None


def test_a_replica_s_copy_bounds_its_source_s_write_only_from_when_it_was_pointed_at_it():
    # seed 11's History 23: R held t6 (0-1-4) from M at 100; a failover then pointed R at B, whose
    # delayed SQL thread applied t6 only at 500. R's copy placed B's binlog write at 100.
    r = R.Runner({**_history(), "header": {**_history()["header"], "topology": {
        "nodes": [{"id": "M"}, {"id": "B"}, {"id": "R"}],
        "channels": [{"source": "M", "replica": "B"}, {"source": "M", "replica": "R"}]}}})
    r.trx_names, r.origin_of, r.gtid_of = ["t6"], {0: "M"}, {0: "0-1-4"}
    r.commits[0], r.returned[0] = {"start": 50, "gtid": "0-1-4"}, (60, None)
    r.binlog_pos.update({"M": [(70, {0: "0-1-4"})], "R": [(100, {0: "0-1-4"})], "B": [(500, {0: "0-1-4"})]})
    del r.sources[("B", None)]  # promoted
    r.sources[("R", None)], r.source_since[("R", None)] = "B", 300
    r.collector._read_binlog = lambda node: [dict(e) for e in _group("0-1-4", 0, 1, "bin.000001")]
    for name in ("_emit_applies", "_emit_statement_applies", "_emit_skips"):
        setattr(r.collector, name, lambda *a: None)
    r.collector.collect_binlogs()
    binlogs = {o["node"]: o["t"] for _, _, o in r.obs if o["kind"] == "binlog" and o["idx"] == 0}
    assert binlogs == {"M": 60, "R": 100, "B": 500}
    r.source_since[("R", None)] = 0  # pointed at B all along: its copy came from B, no later than B wrote it
    r.obs.clear()
    r.collector.collect_binlogs()
    assert {o["node"]: o["t"] for _, _, o in r.obs if o["kind"] == "binlog" and o["idx"] == 0}["B"] == 100


def test_a_group_a_recovery_cut_and_the_node_fetched_back_is_placed_after_its_restart():
    # ss-recover-acked-returns under load: A binlogged t2 (0-1-2) and crashed waiting for its ack;
    # restarted as a replica at 1.3 s, it truncated t2 and applied B's copy into bin.000002 (seen at
    # 1.9 s). The copy shares the GTID, server id and timestamp of the group cut: the polls before
    # the crash placed it before the restart, whose start showed only 0-1-1.
    r = R.Runner(_history())
    r.epoch_us = 1_000_000 * 10**6
    r.trx_names, r.origin_of, r.gtid_of = ["t1", "t2"], {0: "A", 1: "A"}, {0: "0-1-1", 1: "0-1-2"}
    r.commits[0], r.returned[0] = {"start": 100_000, "gtid": "0-1-1"}, (200_000, None)
    r.commits[1], r.returned[1] = {"start": 600_000, "gtid": "0-1-2"}, (800_000, 2013)
    r.downs["A"] = [800_000]
    r.seen[("A", 1)] = 1_900_000
    r.binlog_pos["A"] = [(300_000, {0: "0-1-1"}), (700_000, {0: "0-1-2"}), (1_400_000, {0: "0-1-1"}), (1_900_000, {0: "0-1-2"})]
    r.collector.binlog_files = lambda node: ["bin.000001"]
    r.collector.note_start("A", 1_300_000)
    when = r.epoch_us // 10**6  # both stamped in the run's first second, by A's clock
    logs = {"A": [{**e, "when": when} for e in _group("0-1-1", 0, 1, "bin.000001") + _group("0-1-2", 1, 1, "bin.000002")]}
    r.collector._read_binlog = lambda node: [dict(e) for e in logs.get(node, [])]
    for name in ("_emit_applies", "_emit_statement_applies", "_emit_skips"):
        setattr(r.collector, name, lambda *a: None)
    r.collector.collect_binlogs()
    binlogs = [(o["trx"], o["file"], o["t"], o.get("written")) for _, _, o in r.obs if o["kind"] == "binlog" and o["idx"] == 0]
    assert binlogs == [("t1", "bin.000001", 200_000, [0, 1_000_000]), ("t2", "bin.000002", 1_900_000, None)]
