"""The group-ID rules (model/groupid.py) and the simulator carrying them: IDs issued on the root
only, carried unchanged down a chain, 0 in mixed mode, filtered local writes, the index file read
and written byte for byte (old format too, '|' in paths), start-up option checks, SET
BINLOG_GROUP_ID, SHOW BINLOG INFO FOR, failover to the most advanced slave, restore."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replcheck.model import groupid as G
from replcheck.model import recovery as R
from replcheck.spec import formats as F

M = "model:groupid"
US = 1_000_000
# Any Linux path: bytes but NUL (and newline, which no line-based index can hold), '|' included.
paths = st.binary(min_size=1, max_size=40).filter(lambda b: b"\0" not in b and b"\n" not in b)
ids = st.integers(0, F.MAX_GROUP_ID)


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.tuples(paths, ids), max_size=6))
def test_index_round_trips_byte_for_byte(entries):
    data = F.format_index(entries)
    parsed = F.parse_index(data)
    assert [(e.path, e.group_id, e.old_format) for e in parsed] == [(p, g, False) for p, g in entries]
    assert F.format_index([(e.path, e.group_id) for e in parsed]) == data


def test_index_line_with_bars_in_the_path():
    line = F.format_index_line(b"/var/lib/my|sql/bin|7|.000003", 2657)
    assert line == b"/var/lib/my|sql/bin|7|.000003|2657|"
    assert F.parse_index_line(line) == F.IndexEntry(b"/var/lib/my|sql/bin|7|.000003", 2657)
    assert F.parse_index_line(b"./bin.000001|18446744073709551615|").group_id == F.MAX_GROUP_ID


def test_old_format_reads_with_group_id_zero():
    entries = F.parse_index(b"./master-bin.000001\n./master-bin.000002\n")
    assert entries == [F.IndexEntry(b"./master-bin.000001", 0, True), F.IndexEntry(b"./master-bin.000002", 0, True)]
    assert R.last_group_id(entries) == 0
    # Not a group ID: a sign, a leading zero, 2^64: the whole line is an (old-format) path.
    for line in (b"a|-1|", b"a|007|", b"a|18446744073709551616|", b"a||"):
        assert F.parse_index_line(line) == F.IndexEntry(line, 0, True)


def test_relay_log_index_has_no_group_ids_and_bad_lines_are_refused():
    assert F.format_index([(b"./relay.000001", None), (b"./relay.000002", None)]) == b"./relay.000001\n./relay.000002\n"
    with pytest.raises(F.IndexLineError):
        F.format_index_line(b"a\nb", 1)
    with pytest.raises(F.IndexLineError):
        F.format_index_line(b"a", 2**64)


@pytest.mark.parametrize("log_bin,log_slave_updates,hier,error", [
    (True, True, True, None), (True, False, False, None), (False, False, False, None),
    (True, False, True, "You need to use --log-slave-updates to make --rpl-hierarchical work."),
    (False, True, False, "You need to use --log-bin to make --log-slave-updates work."),
    (False, True, True, "You need to use --log-bin to make --log-slave-updates work."),
])
def test_startup_option_consistency(log_bin, log_slave_updates, hier, error):
    assert G.startup_error(log_bin, log_slave_updates, hier) == error


def test_set_group_id_rules():
    assert G.check_set_group_id(True, True, 1056, 2000, False) == (None, "")
    assert G.check_set_group_id(True, True, 1056, 19, False) == (F.ER_STATEMENT_REQUIRES_OPTION, F.REQUIRES_RESET)
    assert G.check_set_group_id(True, True, 1056, 19, True) == (None, "")
    assert G.check_set_group_id(True, False, 0, 5, False)[0] == F.ER_SPECIFIC_ACCESS_DENIED
    assert G.check_set_group_id(False, True, 0, 5, False)[0] == F.ER_OPTION_PREVENTS_STATEMENT


def test_halt_rules():
    assert G.must_halt(3, 3) and G.must_halt(2, 3) and not G.must_halt(4, 3) and not G.must_halt(0, 3)
    assert not G.must_halt(3, 3, G.HALT_LOWER) and G.must_halt(2, 3, G.HALT_LOWER)
    assert not G.must_halt(1, 3, G.HALT_NEVER)


def test_mariadb_positions():
    assert F.format_pos(F.parse_pos("1-2-20,0-3-30")) == "0-3-30,1-2-20"
    # Current position: the slave's, except a domain where this server (id 1) logged later itself.
    assert G.current_pos({0: "0-1-9", 1: "1-2-4"}, {0: "0-2-5", 1: "1-2-7"}, 1) == {0: "0-1-9", 1: "1-2-7"}
    assert G.current_pos({0: "0-2-9"}, {0: "0-2-5"}, 1) == {0: "0-2-5"}


# -- the simulator ---------------------------------------------------------------------------
def ids_in_binlog(tr, node):
    return [(o["trx"], o["group_id"]) for o in tr.all("binlog", node=node) if o["trx"] and o["idx"] == 0]


def test_root_issues_slaves_keep(kit):
    tr = kit.run(M, "gg-hier-basic")
    want = [("t1", 1008), ("t2", 1009), ("t3", 1010), ("t4", 1011), ("t5", 1012)]
    assert ids_in_binlog(tr, "A") == ids_in_binlog(tr, "B") == ids_in_binlog(tr, "C") == want
    # Every event of t2 (a cached transaction) has the group's ID; FDE and Rotate have none.
    assert {o["group_id"] for o in tr.all("binlog", node="A", trx="t2")} == {1009}
    assert all("group_id" not in o for o in tr.all("binlog", node="A") if o["type"] in ("FORMAT_DESCRIPTION_EVENT", "ROTATE_EVENT"))
    # B's own changes are committed but not binlogged.
    assert tr.first("commit", node="B", trx="b-local-1")["binlogged"] is False
    assert tr.all("binlog", node="B", trx="b-local-1") == [] and "b-local-1" in tr.first("data", node="B")["counts"]


def test_index_and_restart(kit):
    tr = kit.run(M, "gg-hier-basic")
    assert tr.first("binlog_index", node="A")["content"] == "bin.000001|0|\nbin.000002|1010|\nbin.000003|1011|\n"
    after = [o["Group_ID"] for o in tr.all("master_status", node="A") if o["t"] == 8 * US]
    assert after[0] == 1011 and tr.all("binlog", node="A", type="STOP_EVENT") == []


def test_set_and_binlog_info_answers(kit):
    tr = kit.run(M, "gg-hier-basic")
    answers = {o["group_id"]: (o["errno"], o.get("Log_name"), o.get("Pos"), o.get("Server_ID"))
               for o in tr.all("stmt", node="A", op="show_binlog_info")}
    assert answers[1007] == (None, "bin.000002", 124, 1)  # the SET ID: where its binlog's FDE ends
    end_t2 = tr.first("binlog", node="A", trx="t2", last=True)
    assert answers[1009] == (None, end_t2["file"], end_t2["end"], 1)
    sets = [(o["group_id"], o["errno"]) for o in tr.all("stmt", node="A", op="set_binlog_group_id")]
    assert sets == [(1007, None), (19, 1644), (5000, 1227)]


def test_group_id_statements_are_refused_alike_without_the_option(kit):
    # The patch's rpl_hier_off test: SHOW BINLOG INFO FOR, CHANGE MASTER TO CONNECT_USING_GROUP_ID and
    # SET BINLOG_GROUP_ID all fail with 1290, the server "running with the --skip-rpl-hierarchical option"
    topo = {"nodes": [{"id": "A"}, {"id": "B"}], "channels": [{"source": "A", "replica": "B"}]}
    ops = [{"at": US, "op": "show_binlog_info", "node": "A", "group_id": 1},
           {"at": US, "op": "set_binlog_group_id", "node": "A", "group_id": 1000, "master_server_id": 1},
           {"at": 2 * US, "op": "stop_slave", "node": "B"},
           {"at": 2 * US, "op": "change_master", "node": "B", "connect_using_group_id": True}]
    h = {"header": {"schema": "replcheck.history/1", "name": "hier-off", "end_us": 3 * US, "topology": topo}, "ops": ops}
    tr = kit.run(M, h)
    refused = [(o["op"], o["errno"], o["message"]) for o in tr.all("stmt") if o["op"] != "stop_slave"]
    text = "The MySQL server is running with the --skip-rpl-hierarchical option so it cannot execute this statement"
    assert refused == [("show_binlog_info", 1290, text), ("set_binlog_group_id", 1290, text), ("change_master", 1290, text)]


def test_mixed_mode_logs_zero(kit):
    tr = kit.run(M, "gg-mixed-mode")
    assert all("group_id" not in o for o in tr.all("binlog", node="A"))  # A has no group IDs at all
    assert ids_in_binlog(tr, "B") == ids_in_binlog(tr, "C") == [("t1", 0), ("t2", 0)]
    assert {o["Exec_Master_Group_ID"] for o in tr.all("status", node="C")} == {0}


def test_inconsistent_options_refuse_start(kit):
    tr = kit.run(M, "gg-startup-options")
    refused = [(o["node"], o["message"]) for o in tr.all("error", errno=1)]
    assert refused == [("A", "You need to use --log-slave-updates to make --rpl-hierarchical work."),
                       ("B", "You need to use --log-bin to make --log-slave-updates work."),
                       ("A", "You need to use --log-slave-updates to make --rpl-hierarchical work.")]
    assert tr.all("binlog", node="A") == tr.all("binlog", node="B") == tr.all("binlog", node="C") == []
    assert tr.first("data", node="C")["counts"] == {"t1": 1}  # no binlog, still a slave


def test_failover_elects_repoints_continues_and_restores(kit):
    tr = kit.run(M, "gg-failover")
    polled = {o["node"]: o["Group_ID"] for o in tr.all("master_status", election="A")}
    assert polled == {"B": 4, "C": 2, "D": 2} and tr.first("promoted")["node"] == "B"
    # C and D: SHOW BINLOG INFO FOR their last group on B, and CHANGE MASTER to the answer.
    repoint = {o["node"]: (o["master_log_file"], o["master_log_pos"]) for o in tr.all("stmt", op="change_master")
               if o.get("master_host") == "B"}
    end2 = tr.first("binlog", node="B", trx="t2", last=True)
    assert repoint["C"] == repoint["D"] == (end2["file"], end2["end"])
    assert ids_in_binlog(tr, "B")[-3:] == [("t5", 5), ("t6", 6), ("t7", 7)]
    # A, restored from C's backup and SET to C's ID, replays only what C lacked, once.
    want = {f"t{i}": 1 for i in (1, 2, 3, 4, 5, 6, 7)}
    assert {n: tr.first("data", node=n)["counts"] for n in "ABCD"} == dict.fromkeys("ABCD", want)


def _fan_out(kit, ops, transactional=(True, True, True), end_s=12):
    nodes = [{"id": n, "rpl_hierarchical": True, "rpl_transaction_enabled": t} for n, t in zip("ABC", transactional)]
    channels = [{"source": "A", "replica": r, "latency_us": 1000} for r in "BC"]
    ops = [{"at": at, "op": o, "node": n, **kw} for at, o, n, kw in ops]
    return kit.make_history(nodes, channels, ops, end_us=end_s * US, sample_every_us=US)


def test_failed_over_master_feeds_no_slave(kit):
    # B replays t1 after a crash between engine commit and the relay-log.info flush and halts
    # (1643), so the failover that elects it waits. A, the old master, is still up and logs t2:
    # C, failed over with B, must not get it, or B, promoted, would issue t2's ID 2 again to t3.
    h = _fan_out(kit, [(0, "crash", "B", {"point": "after_engine_commit"}), (0, "trx", "A", {"trx": "t1"}),
                       (US, "restart", "B", {}), (2 * US, "failover", "C", {"elect": True}),
                       (3 * US, "trx", "A", {"trx": "t2"}),
                       (4 * US, "change_master", "B", {"connect_using_group_id": True}),
                       (4 * US, "start_slave", "B", {}), (5 * US, "trx", "B", {"trx": "t3"})],
                 transactional=(True, False, True))
    tr = kit.run(M, h)
    failover, promoted = tr.first("failover", node="B", old="A"), tr.first("promoted", node="B")
    assert promoted["t"] == 4 * US
    assert not [o for o in tr.all("relay", node="C", source="A") if o["t"] >= failover["t"]]
    waiting = [o["Slave_IO_Running"] for o in tr.all("status", node="C") if failover["t"] < o["t"] < promoted["t"]]
    assert waiting and set(waiting) == {"Connecting"}  # as to a dead master
    assert ids_in_binlog(tr, "C") == [("t1", 1), ("t3", 2)]
    assert kit.verdict("GGID.UNIQUE", tr).status == "pass"


def test_failover_that_cannot_place_a_slave_resets_it_to_connect_by_group_id(kit):
    # C, down since t1, is failed over to B, then to A, restored from B's backup: SET to group 2,
    # A's binlog holds no group 1, so SHOW BINLOG INFO FOR 1 fails on A. C must not resume at a
    # position in its old master's binlog.
    h = _fan_out(kit, [(0, "trx", "A", {"trx": "t1"}), (US, "crash", "C", {}), (US, "trx", "A", {"trx": "t2"}),
                       (2 * US, "crash", "A", {}), (2 * US, "failover", "B", {"elect": True}),
                       (3 * US, "restore", "A", {"from": "B", "source": "B"}), (4 * US, "crash", "B", {}),
                       (4 * US, "failover", "A", {"elect": True}), (5 * US, "trx", "A", {"trx": "t3"}),
                       (6 * US, "restart", "C", {})])
    tr = kit.run(M, h)
    assert tr.first("promoted", node="A")["old"] == "B"
    change = tr.first("stmt", node="C", op="change_master", master_host="A")
    assert change["connect_using_group_id"] and "master_log_file" not in change
    [refused] = [o for o in tr.all("connect", node="C", source="A") if o["t"] > change["t"]]
    assert (refused["by"], refused["group_id"], refused["errno"]) == ("group_id", 1, F.ER_MASTER_FATAL_ERROR_READING_BINLOG)
    assert not [o for o in tr.all("relay", node="C") if o["t"] > change["t"]]
    assert tr.first("data", node="C")["counts"] == {"t1": 1}
    assert tr.all("status", node="C")[-1]["Connect_Using_Group_ID"] == "Yes"


def test_change_master_use_gtid_repoints_a_replica_by_gtid(kit):
    # rpl_gtid_basic (suite scenario mdb-rpl_gtid_basic-repoint): C, stopped behind B, is pointed at
    # A with MASTER_USE_GTID; its relay log goes and it asks A from what it executed, so it gets t2
    # once; then A's t3 reaches C directly although B is stopped.
    def o(t, kind, node, **kw):
        return {"at": t * US, "op": kind, "node": node, **kw}
    chain = [{"source": "A", "replica": "B", "latency_us": 1000}, {"source": "B", "replica": "C", "latency_us": 1000}]
    ops = [o(1, "trx", "A", trx="t1"), o(2, "stop_slave", "C"), o(3, "trx", "A", trx="t2"),
           o(4, "change_master", "C", master_host="A", master_use_gtid="slave_pos"), o(4, "start_slave", "C"),
           o(5, "stop_slave", "B"), o(6, "trx", "A", trx="t3")]
    tr = kit.run("model:wl344", kit.make_history(["A", "B", "C"], chain, ops, end_us=8 * US))
    assert tr.first("stmt", node="C", op="change_master")["errno"] is None
    assert tr.all("data", node="C")[-1]["counts"] == {"t1": 1, "t2": 1, "t3": 1}
    assert "t3" not in tr.all("data", node="B")[-1]["counts"]


def test_a_mariadb_server_numbers_its_own_transaction_after_every_gtid_it_logged(kit):
    # rpl_gtid_basic's out-of-order case (suite scenario mdb-rpl_gtid_basic-out-of-order): B logs
    # A's 0-1-1 and 0-1-2, then its own transaction takes 0-2-3 (rpl_gtid.cc: the domain's
    # seq_no_counter follows every GTID logged); MySQL numbers each server's own: 0-2-1.
    def o(t, node, trx):
        return {"at": t * US, "op": "trx", "node": node, "trx": trx}
    h = kit.make_history(["A", "B"], [{"source": "A", "replica": "B", "latency_us": 1000}],
                         [o(1, "A", "a1"), o(2, "A", "a2"), o(3, "B", "b1"), o(4, "A", "a3")], end_us=5 * US)
    for system, own in (("model:mariadb-10.11", "0-2-3"), ("model:wl7318", "0-2-1")):
        tr = kit.run(system, h)
        assert tr.first("commit", node="B", trx="b1")["gtid"] == own
        assert tr.first("commit", node="A", trx="a3")["gtid"] == "0-1-3"


@pytest.mark.parametrize("system", ["model:mariadb-10.11", "model:wl7318", "model:groupid"])
def test_a_purge_before_the_dump_request_arrives_is_not_stopped_by_it(kit, system):
    # START SLAVE at 3 s; the dump request reaches A 1 ms later. A PURGE in between finds no dump
    # thread reading bin.000001 (mysql_binlog_send sets current_linfo, which log_in_use checks, only
    # once the request arrives): it purges bin.000001, and B, which lacks t2 there, is refused (1236)
    nodes = [{"id": "A", "gtid_mode": True}, {"id": "B", "gtid_mode": True}]
    h = kit.make_history(nodes, [{"source": "A", "replica": "B", "latency_us": 1000}], [
        {"at": 0, "op": "trx", "node": "A", "trx": "t1"},
        {"at": 1 * US, "op": "stop_slave", "node": "B"},
        {"at": 1 * US, "op": "trx", "node": "A", "trx": "t2"},
        {"at": 2 * US, "op": "flush_logs", "node": "A"},
        {"at": 3 * US, "op": "start_slave", "node": "B"},
        {"at": 3 * US + 1, "op": "purge_binary_logs", "node": "A", "to": "bin.000002"}], end_us=5 * US)
    tr = kit.run(system, h)
    purge = tr.first("stmt", node="A", op="purge_binary_logs")
    assert (purge["warning"], purge["purged"]) == (None, ["bin.000001"])
    connect = tr.all("connect", node="B")[-1]
    assert (connect["t"], connect["errno"]) == (3 * US + 1000, 1236)
    assert [o["trx"] for o in tr.all("visible", node="B")] == ["t1"]
