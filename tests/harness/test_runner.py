"""The real-server runner without a server: what it refuses, how it scales a History, that
statements are built from validated fields only, how it reads the error log. Its runs on a real
MariaDB are in test_runner_server.py, what it makes of its observations in test_runner_observe.py."""
from __future__ import annotations

import re

import pytest

from replcheck.harness import errlog
from replcheck.harness import binlog_events as BE, collect as CO
from replcheck.harness import observe as OB
from replcheck.harness import runner as R
from replcheck.harness import statements as ST
from replcheck.harness import timescale as TS

US = 1_000_000
B = ("B", None)  # the replica's one unnamed channel: the runner keys its channels by (replica, connection)


def _history(ops, channels=({"source": "A", "replica": "B", "delay": 20},), nodes=({"id": "A"}, {"id": "B"}), **header):
    return {"header": {"schema": "replcheck.history/1", "name": "t",
                       "topology": {"nodes": [dict(n) for n in nodes], "channels": [dict(c) for c in channels]}, **header},
            "ops": [dict(o) for o in ops]}


# ---------------------------------------------------------------------------------------------
# Without a server


@pytest.mark.parametrize("op", [
    {"at": 5, "op": "cluster_gap", "node": "A", "cause": "server_crash", "trxs": ["x"]},
    {"at": 5, "op": "show_binlog_info", "node": "A"},
    {"at": 5, "op": "binlog_statement", "node": "A", "event_types": ["FORMAT_DESCRIPTION_EVENT"]},
])
def test_unsupported_ops_are_refused_naming_the_op(op):
    with pytest.raises(R.RunnerError) as e:
        R.Runner(_history([{"at": 1, "op": "trx", "node": "A", "trx": "t1"}, op]))
    msg = str(e.value)
    assert "\n" not in msg and f"op {op['op']} is not supported on a real server" in msg and "ops[1]" in msg


def test_what_a_real_server_cannot_do_is_refused():
    R.check_supported(_history([{"at": 1, "op": "lose_acks", "node": "B", "count": 2}, {"at": 2, "op": "failover", "node": "B"}]))
    R.check_supported(_history([{"at": 1, "op": "cut_io", "node": "B", "after_events": 2, "then": "stop"}]))  # the relay cuts
    # after a failover too: the repointed channel keeps its relay (Runner.add_relay, Cluster.route)
    R.check_supported(_history([{"at": 1, "op": "failover", "node": "B"}, {"at": 2, "op": "lose_acks", "node": "B", "count": 1}]))
    R.check_supported(_history([{"at": 1, "op": "failover", "node": "B"}, {"at": 2, "op": "cut_io", "node": "B", "after_events": 1}]))
    with pytest.raises(R.RunnerError, match=r"ops\[0\].*op crash of kind machine is not supported"):
        R.check_supported(_history([{"at": 1, "op": "crash", "node": "A", "kind": "machine"}]))
    R.check_supported(_history([{"at": 1, "op": "crash", "node": "A", "kind": "process"}]))  # kill -9
    R.check_supported(_history([{"at": 1, "op": "restart", "node": "B", "relay_log_recovery": True}]))  # --relay-log-recovery
    R.check_supported(_history([{"at": 1, "op": "record_incident", "node": "A", "code": 1}]))  # a statement cache overflow
    with pytest.raises(R.RunnerError, match="other than LOST_EVENTS"):
        R.check_supported(_history([{"at": 1, "op": "record_incident", "node": "A", "code": 9}]))
    with pytest.raises(R.RunnerError, match="write_error"):
        R.check_supported(_history([{"at": 1, "op": "trx", "node": "A", "trx": "x", "binlog_failure": "write_error"}]))
    R.check_supported(_history([{"at": 1, "op": "clock_step", "node": "B", "delta_us": -5}],
                               nodes=({"id": "A", "clock_offset_us": 5}, {"id": "B"})))  # libfaketime (harness/clock.py)
    with pytest.raises(R.RunnerError, match=r"topology.nodes\[1\].gtid_mode: off"):  # before any server starts
        R.check_supported(_history([], nodes=({"id": "A"}, {"id": "B", "gtid_mode": False})))
    with pytest.raises(R.RunnerError, match=r"topology.channels\[0\].latency_us: 400000"):
        R.scaled_history(_history([], channels=({"source": "A", "replica": "B", "latency_us": 400000},)), 1.0)
    for scale in (0, -1, 11, "x"):
        with pytest.raises(R.RunnerError, match="time scale"):
            R.scaled_history(_history([]), scale)


def test_scaling_keeps_master_delay_in_whole_seconds():
    h = _history([{"at": 2 * US, "op": "trx", "node": "A", "trx": "t", "statements": [{"duration_us": US, "replica_cost_us": 3 * US}]},
                  {"at": 3 * US, "op": "change_master", "node": "B", "delay": 3},
                  {"at": 4 * US, "op": "set_global", "node": "A", "variable": "rpl_semi_sync_master_timeout", "value": 5000}],
                 nodes=({"id": "A", "variables": {"rpl_semi_sync_master_timeout": 2000}}, {"id": "B"}),
                 channels=({"source": "A", "replica": "B", "delay": 20, "latency_us": 1000},), end_us=30 * US)
    s = R.scaled_history(h, 0.1)
    assert s["header"]["topology"]["channels"] == [{"source": "A", "replica": "B", "delay": 2}]  # latency: loopback's
    assert s["header"]["end_us"] == 3 * US
    assert [o["at"] for o in s["ops"]] == [200_000, 300_000, 400_000]
    assert s["ops"][0]["statements"] == [{"duration_us": 100_000, "replica_cost_us": 300_000}]
    assert s["ops"][1]["delay"] == 1  # 0.3 s would be 0: a nonzero delay stays at least 1 s
    assert s["ops"][2]["value"] == 500 and s["header"]["topology"]["nodes"][0]["variables"]["rpl_semi_sync_master_timeout"] == 200
    assert h["ops"][1]["delay"] == 3  # the caller's History is untouched
    assert [TS.scale_delay(d, 0.1) for d in (0, 1, 5, 14, 15, 2**31 - 1)] == [0, 1, 1, 1, 2, 214748365]


def test_scaling_keeps_a_set_timestamp_as_far_ahead_in_scaled_time():
    """The reference model runs the History as it ran (MariaDB.as_run): a timestamp 30 s ahead of
    the epoch runs 12 s ahead at scale 0.4, in both."""
    epoch = TS.DEFAULT_EPOCH_US // US
    h = _history([{"at": US, "op": "trx", "node": "A", "trx": "future", "timestamp": epoch + 30},
                  {"at": 2 * US, "op": "trx", "node": "A", "trx": "past", "timestamp": epoch - 10_000}])
    assert [o["timestamp"] for o in R.scaled_history(h, 0.4)["ops"]] == [epoch + 12, epoch - 4000]


@pytest.mark.parametrize("token", ["1; DROP DATABASE rc", "1 OR 1", "'", "1e5", "0x10", "--", "a" * 17])
def test_master_delay_text_outside_the_whitelist_never_reaches_sql(token):
    op = {"at": 1, "op": "change_master", "node": "B", "delay_sql": token}
    with pytest.raises(R.RunnerError, match="delay_sql"):
        R.check_supported(_history([op]))
    with pytest.raises(R.RunnerError):
        R.admin_statement(op)


def test_until_master_gtid_pos_and_delete_domain_id_are_built_from_validated_fields():
    assert R.admin_statement({"op": "start_slave", "until": {"master_gtid_pos": "1-1-3,2-1-4"}}) == \
        "START SLAVE UNTIL master_gtid_pos = '1-1-3,2-1-4'"  # MariaDB's; MySQL answers 1064 (the model does too)
    assert R.admin_statement({"op": "start_slave", "until": {"master_gtid_pos": ""}}) == "START SLAVE UNTIL master_gtid_pos = ''"
    assert R.admin_statement({"op": "flush_logs", "delete_domain_id": [11, 0]}) == \
        "FLUSH BINARY LOGS DELETE_DOMAIN_ID = (11, 0)"
    assert R.admin_statement({"op": "flush_logs", "delete_domain_id": []}) == "FLUSH BINARY LOGS DELETE_DOMAIN_ID = ()"
    assert R.admin_statement({"op": "flush_logs"}) == "FLUSH LOGS"
    for bad in ({"op": "start_slave", "until": {"master_gtid_pos": "1-1-3'; --"}},
                {"op": "flush_logs", "delete_domain_id": ["1); DROP"]}, {"op": "flush_logs", "delete_domain_id": [True]}):
        with pytest.raises(R.RunnerError):
            R.admin_statement(bad)


def test_admin_statements_are_built_from_validated_fields():
    assert R.admin_statement({"op": "change_master", "delay_sql": "-1"}) == "CHANGE MASTER TO MASTER_DELAY = -1"
    assert R.admin_statement({"op": "change_master", "delay_sql": "blah"}) == "CHANGE MASTER TO MASTER_DELAY = blah"
    assert R.admin_statement({"op": "change_master", "delay": 7}) == "CHANGE MASTER TO MASTER_DELAY = 7"
    assert R.admin_statement({"op": "stop_slave", "thread": "io"}) == "STOP SLAVE IO_THREAD"
    assert R.admin_statement({"op": "set_global", "variable": "rpl_semi_sync_master_enabled", "value": True}) == \
        "SET GLOBAL rpl_semi_sync_master_enabled = ON"
    assert R.admin_statement({"op": "set_global", "variable": "rpl_semi_sync_master_wait_point", "value": "AFTER_SYNC"}) == \
        "SET GLOBAL rpl_semi_sync_master_wait_point = 'AFTER_SYNC'"
    assert R.admin_statement({"op": "start_slave", "thread": "sql", "until": {"master_log_file": "bin.000001",
                                                                             "master_log_pos": 300}}) == \
        "START SLAVE SQL_THREAD UNTIL MASTER_LOG_FILE = 'bin.000001', MASTER_LOG_POS = 300"
    assert R.admin_statement({"op": "start_slave", "thread": "sql", "until": {"sql_after_mts_gaps": True}}) == \
        "START SLAVE SQL_THREAD UNTIL SQL_AFTER_MTS_GAPS"  # MySQL's; MariaDB answers 1064 (the model does too)
    assert R.admin_statement({"op": "change_master", "delay": 0, "relay_log_file": "relay.000002", "relay_log_pos": 849}) == \
        "CHANGE MASTER TO MASTER_DELAY = 0, RELAY_LOG_FILE = 'relay.000002', RELAY_LOG_POS = 849"
    for bad in ({"op": "set_global", "variable": "x; DROP", "value": 1},
                {"op": "change_master", "delay": 0, "relay_log_file": "r'; --", "relay_log_pos": 4},
                {"op": "change_master", "delay": 0, "relay_log_file": "relay.000001", "relay_log_pos": "4"},
                {"op": "set_global", "variable": "x", "value": "a'b"},
                {"op": "set_global", "variable": "x", "value": 1.5},
                {"op": "change_master", "delay": "5"},
                {"op": "start_slave", "until": {"master_log_file": "b'; --", "master_log_pos": 4}},
                {"op": "trx"}):
        with pytest.raises(R.RunnerError):
            R.admin_statement(bad)
    with pytest.raises(R.RunnerError, match="bare word"):
        R.check_supported(_history([{"at": 1, "op": "set_global", "node": "A", "variable": "x", "value": "a b"}]))
    # a GTID position is quoted as it is; anything else shaped like one is refused
    assert R.admin_statement({"op": "set_global", "variable": "gtid_slave_pos", "value": "0-1-4,1-2-3"}) == \
        "SET GLOBAL gtid_slave_pos = '0-1-4,1-2-3'"
    assert R.admin_statement({"op": "set_global", "variable": "gtid_slave_pos", "value": ""}) == "SET GLOBAL gtid_slave_pos = ''"
    assert R.admin_statement({"op": "reset_master"}) == "RESET MASTER"
    with pytest.raises(R.RunnerError, match="GTID list"):
        R.admin_statement({"op": "set_global", "variable": "gtid_slave_pos", "value": "0-1-4'; DROP"})


@pytest.mark.parametrize("fields, problem", [
    ({"to": "bin.000003'; DROP DATABASE rc; --"}, "to \"bin.000003'; DROP DATABASE rc; --\" is not a binlog file name"),
    ({"to": ""}, "to '' is not a binlog file name"),
    ({"to": "a" * 65}, "is not a binlog file name"),
    ({"to": 3}, "to 3 is not a binlog file name"),
    ({"before_us": -1}, "before_us -1 is not a nonnegative integer"),
    ({"before_us": True}, "before_us True is not a nonnegative integer"),
    ({"before_us": "NOW()"}, "before_us 'NOW()' is not a nonnegative integer"),
    ({"before_us": 1.5}, "before_us 1.5 is not a nonnegative integer"),
    ({}, "needs exactly one of to and before_us"),
    ({"to": "bin.000002", "before_us": 5}, "needs exactly one of to and before_us"),
])
def test_a_bad_purge_is_refused_in_one_line(fields, problem):
    op = {"at": 7, "op": "purge_binary_logs", "node": "A", **fields}
    with pytest.raises(R.RunnerError) as e:
        R.check_supported(_history([{"at": 1, "op": "trx", "node": "A", "trx": "t1"}, op]))
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("ops[1] (at 7 µs): ") and problem in msg
    with pytest.raises(R.RunnerError, match=re.escape(problem)):
        R.admin_statement(op, 1_700_000_000_000_000)


def test_purge_statements_are_built_from_validated_fields():
    assert R.admin_statement({"op": "purge_binary_logs", "to": "bin.000003"}) == "PURGE BINARY LOGS TO 'bin.000003'"
    # BEFORE: the server's instant of that trace time, the run's epoch plus before_us, from integers only.
    epoch = 1_795_266_603 * US
    assert R.admin_statement({"op": "purge_binary_logs", "before_us": 2_300_000}, epoch) == \
        "PURGE BINARY LOGS BEFORE FROM_UNIXTIME(1795266605.300000)"
    assert R.admin_statement({"op": "purge_binary_logs", "before_us": 7}, epoch) == \
        "PURGE BINARY LOGS BEFORE FROM_UNIXTIME(1795266603.000007)"
    for bad_epoch in (None, "1795266603", 1.5e15, True):
        with pytest.raises(R.RunnerError, match="epoch"):
            R.admin_statement({"op": "purge_binary_logs", "before_us": 7}, bad_epoch)
    # before_us is a trace time: scaled with the History; a file name is not.
    h = _history([{"at": 4 * US, "op": "purge_binary_logs", "node": "A", "before_us": 9_200_000},
                  {"at": 5 * US, "op": "purge_binary_logs", "node": "A", "to": "bin.000002"}])
    s = R.scaled_history(h, 0.25)
    assert s["ops"] == [{"at": US, "op": "purge_binary_logs", "node": "A", "before_us": 2_300_000},
                        {"at": 1_250_000, "op": "purge_binary_logs", "node": "A", "to": "bin.000002"}]


def test_an_io_thread_error_is_observed_once_per_stop():
    r = R.Runner(_history([]))
    fatal = "Got fatal error 1236 from master when reading data from binary log: 'Could not find GTID state ...'"

    def poll(t, io, errno=0, message=""):
        r.observer.record_status(B, t, {"Slave_IO_Running": io, "Slave_SQL_Running": "Yes", "Last_IO_Errno": str(errno),
                           "Last_IO_Error": message}, None, False)
    poll(1, "Yes")
    poll(2, "Connecting", 2003, "error reconnecting to master")  # retrying: the thread has not stopped
    poll(3, "No", 1236, fatal)
    poll(4, "No", 1236, fatal)  # the same stop, seen again
    poll(5, "Yes")
    poll(6, "No", 1236, fatal)  # started again, failed again: a new error
    poll(7, "No", 1236, fatal)
    r.io_error.pop(B)  # what a successful START SLAVE does: its failure between two polls is new
    poll(8, "No", 1236, fatal)
    errors = [(o["t"], o["thread"], o["errno"], o["message"]) for _, _, o in r.obs if o["kind"] == "error"]
    assert errors == [(3, "io", 1236, fatal), (6, "io", 1236, fatal), (8, "io", 1236, fatal)]


class _Answers:
    """What a server answers the runner's reads for an expectation (SHOW SLAVE STATUS, SHOW GLOBAL
    STATUS/VARIABLES, SHOW BINARY LOGS, SHOW BINLOG EVENTS), and the statements it was asked."""

    def __init__(self):
        self.asked = []

    def is_running(self, node):
        return node != "down"

    def show_slave_status(self, node, connection=None):
        return {"SQL_Delay": "20", "SQL_Remaining_Delay": None, "Slave_SQL_Running_State": "x"} if node == "B" else {}

    def sql(self, node, statement):
        self.asked.append(statement)
        if statement == "SHOW BINARY LOGS":
            return [["master-bin.000001", "500"], ["master-bin.000002", "300"]]
        return [["Rpl_semi_sync_master_yes_tx", "3"], ["GTID_SLAVE_POS", "0-1-2"]]

    def query(self, node, statement):
        self.asked.append(statement)
        rows = [["Format_desc", "v"], ["Gtid_list", "[]"], ["Binlog_checkpoint", "m"], ["Gtid", "BEGIN GTID 0-1-1"],
                ["Query", "use `rc`; INSERT"], ["Xid", None]]
        return ["Event_type", "Info"], rows


def test_expectations_are_read_from_the_server_as_the_model_shows_them():
    ops = [{"at": 1, "op": "expect", "node": "B", "show": "slave_status", "fields": {"SQL_Delay": 20, "SQL_Remaining_Delay": None, "Gone": 1}},
           {"at": 1, "op": "expect", "node": "A", "show": "status", "fields": {"Rpl_semi_sync_master_yes_tx": 3}},
           {"at": 1, "op": "expect", "node": "B", "show": "variables", "fields": {"gtid_slave_pos": "0-1-2"}},
           {"at": 1, "op": "expect", "node": "A", "show": "binary_logs", "rows": ["master-bin.000002"]},
           {"at": 1, "op": "expect", "node": "A", "show": "binlog_events", "in": "x.000002", "rows": [{"Event_type": "Gtid"}]},
           {"at": 1, "op": "expect", "node": "A", "show": "slave_status", "fields": {"SQL_Delay": 0}},
           {"at": 1, "op": "expect", "node": "B", "show": "result", "result": {"errno": None}}]
    r = R.Runner(_history(ops))
    r.cluster = _Answers()
    r.emit("stmt", "B", 0, op="stop_slave", errno=None, warning=1255, message="Slave already has been stopped")
    for op in r.history["ops"]:
        r.ops.expect(op)
    seen = [(o["expect"], o["value"]) for _, _, o in r.obs if o["kind"] == "observed"]
    assert seen == [
        ("t.jsonl:2", {"SQL_Delay": 20, "SQL_Remaining_Delay": None}), ("t.jsonl:3", {"Rpl_semi_sync_master_yes_tx": 3}),
        ("t.jsonl:4", {"gtid_slave_pos": "0-1-2"}), ("t.jsonl:5", ["master-bin.000001", "master-bin.000002"]),
        ("t.jsonl:6", [{"Event_type": "Gtid", "Info": "BEGIN GTID 0-1-1"}, {"Event_type": "Query", "Info": "use `rc`; INSERT"},
                       {"Event_type": "Xid", "Info": ""}]),
        ("t.jsonl:7", None), ("t.jsonl:8", {"errno": None, "warning": 1255, "message": "Slave already has been stopped"})]
    # names reach SQL quoted, and only as the schema's identifiers; a binlog by its number on the server
    assert "SHOW GLOBAL STATUS WHERE Variable_name IN ('Rpl_semi_sync_master_yes_tx')" in r.cluster.asked
    assert "SHOW BINLOG EVENTS IN 'master-bin.000002'" in r.cluster.asked


def test_transaction_names_never_reach_sql():
    name = "x'); DROP DATABASE rc; --"
    op = {"op": "trx", "node": "A", "trx": name, "timestamp": 1700000030,
          "statements": [{"duration_us": 250_000}, {"replica_cost_us": 2 * US}]}
    sql = R.trx_statement(op, 7, 3306)
    assert "DROP" not in sql and name not in sql
    assert sql.startswith("SET TIMESTAMP = 1700000030; SET SESSION binlog_format = 'STATEMENT'; USE rc; BEGIN; ")
    assert "INSERT INTO rc.r (k, part, pad) VALUES (7, 0, '')" in sql and "DO SLEEP(0.250000)" in sql
    assert "VALUES (7, 1, IF(@@port = 3306, '', SLEEP(2.000000)))" in sql and sql.endswith("COMMIT")
    assert R.trx_statement({"op": "trx", "ddl": True}, 3, 1) == "USE rc; CREATE TABLE rc.d3 (i INT) ENGINE=InnoDB"
    big = R.trx_statement({"op": "trx", "engine": "myisam", "binlog_failure": "cache_overflow"}, 4, 1)
    assert big.count("(4, ") == ST.OVERFLOW_ROWS and "INTO rc.m" in big
    # with a replica's cost too: still row format, or the statement's text overflows nothing
    costly = R.trx_statement({"op": "trx", "binlog_failure": "cache_overflow", "statements": [{"replica_cost_us": US}]}, 4, 1)
    assert "binlog_format" not in costly and costly.count("(4, ") == ST.OVERFLOW_ROWS
    for k in ("1", True, 1.0):
        with pytest.raises(R.RunnerError):
            R.trx_statement({"op": "trx"}, k, 1)
    with pytest.raises(R.RunnerError):
        R.trx_statement({"op": "trx", "timestamp": "NOW()"}, 1, 1)


def test_a_transactions_domain_is_its_sessions_gtid_domain_id():
    assert R.trx_statement({"op": "trx", "domain": 7}, 2, 1).startswith("SET SESSION gtid_domain_id = 7; BEGIN; ")
    for bad in ("1; DROP DATABASE rc", True, -1, 2**32):
        with pytest.raises(R.RunnerError):
            R.trx_statement({"op": "trx", "domain": bad}, 1, 1)


def test_a_transactions_own_seq_no_and_server_id_are_set_before_it():
    op = {"op": "trx", "domain": 1, "server_id": 5, "gtid_seq_no": 10}
    assert R.trx_statement(op, 2, 1).startswith(
        "SET SESSION gtid_domain_id = 1; SET SESSION server_id = 5; SET SESSION gtid_seq_no = 10; BEGIN; ")
    for field, bad in (("server_id", 0), ("server_id", "5"), ("gtid_seq_no", 0), ("gtid_seq_no", 2**64)):
        with pytest.raises(R.RunnerError, match=field):
            R.trx_statement({"op": "trx", field: bad}, 1, 1)


def test_a_failing_insert_fails_after_or_before_its_first_row():
    # #16 mechanism 4: the failing row second (the first is kept on MyISAM) or first
    after = R.trx_statement({"op": "trx", "engine": "myisam", "error": {"errno": 1048, "after_changes": True}}, 5, 1)
    assert after == ("SET SESSION sql_mode = 'STRICT_ALL_TABLES'; BEGIN; "
                     "INSERT INTO rc.m (k, part, pad, u) VALUES (5, 0, '', NULL), (5, NULL, '', NULL); COMMIT")
    before = R.trx_statement({"op": "trx", "error": {"errno": 1048}}, 6, 1)
    assert "INSERT INTO rc.r (k, part, pad, u) VALUES (6, NULL, '', NULL), (6, 0, '', NULL)" in before
    dup = R.trx_statement({"op": "trx", "engine": "myisam", "error": {"errno": 1062, "after_changes": True}}, 7, 1)
    assert f"VALUES (7, 0, '', NULL), (7, 1, '', {ST.SENTINEL})" in dup  # the sentinel's unique u: ER_DUP_ENTRY
    assert R.trx_statement({"op": "trx", "ddl": True, "error": {"errno": 1051}}, 8, 1) == "USE rc; DROP TABLE rc.nosuch8"
    assert all(CO.OWN_TEXT.search(sql) for sql in (after, before, dup))  # its binlogged group is found as its own
    for op in ({"errno": 1213}, {"errno": 1048, "ddl": True}, {"errno": 1051, "ddl": True, "after_changes": True}):
        h = {"header": {"topology": {"nodes": [{"id": "A"}]}},
             "ops": [{"at": 0, "op": "trx", "node": "A", "error": {k: v for k, v in op.items() if k != "ddl"},
                      **({"ddl": True} if "ddl" in op else {})}]}
        with pytest.raises(R.RunnerError, match="the harness makes a one-statement INSERT fail"):
            R.check_supported(h)


@pytest.mark.parametrize("hour", range(24))
def test_error_log_lines_are_read_at_every_hour(hour):
    """MariaDB pads the hour with a space before 10:00 (sql/log.cc print_buffer_to_file): a
    line written at 03:07 must be read like one written at 15:07."""
    lines = [f"2026-11-23 {hour:2d}:07:01 12 [Note] Start semi-sync binlog_dump to slave (server_id: 2), pos(b.000001, 4)",
             f"261123 {hour:2d}:07:01 [ERROR] mariadbd got signal 6 ;",
             f"2026-11-23T{hour:02d}:07:01.123456Z 12 [Warning] [MY-010897] [Repl] Storing MySQL user name"]
    got = [errlog.LOG_LINE.match(line) for line in lines]
    assert [m and m["level"] for m in got] == ["Note", "ERROR", "Warning"]
    assert got[0]["message"].startswith("Start semi-sync binlog_dump") and got[2]["message"].startswith("Storing")


def test_a_line_without_a_time_stamp_is_not_a_log_line():
    assert errlog.LOG_LINE.match("  at line 12 of a stack trace [Note]") is None


def test_gtid_positions_and_binlog_bytes(tmp_path):
    assert OB._covers("0-1-5,1-2-3", "0-1-5") and OB._covers("0-1-6", "0-1-5") and not OB._covers("0-1-4", "0-1-5")
    assert not OB._covers("", "0-1-1") and OB._covers("", "")
    # An INCIDENT_EVENT: 19-byte header (timestamp first), code 1, message of 31 bytes.
    msg = b"error writing to the binary log"
    header = (1795257742).to_bytes(4, "little") + bytes([26]) + bytes(14)
    f = tmp_path / "bin.000001"
    f.write_bytes(b"\xfebin" + header + (1).to_bytes(2, "little") + bytes([len(msg)]) + msg)
    assert BE.header_timestamps(str(f), [4, 999]) == {4: 1795257742}
    assert BE.incident_body(str(f), 4) == {"incident": 1, "message": msg.decode()}
    assert BE.incident_body(str(tmp_path / "missing"), 4) == {}
