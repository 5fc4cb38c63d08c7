"""Run a History on real MariaDB servers in real time and record what an observer sees as a Trace.

    header, obs = run_history(history, scale=0.1)

Time scale: the History's times are virtual; the run happens at `scale` seconds of real time per
virtual second. Every time of the History is scaled (the op fields model/ops.py declares as times:
op times, statement durations, replica costs, semi-sync timeouts, ...; the header's end and
sampling periods and timeouts), and so is MASTER_DELAY, which a server only
takes in whole seconds: a nonzero delay becomes max(1, round(delay * scale)) s. `scaled_history`
returns the History that actually runs, with its real-time µs and whole-second delays; the trace
is in that History's time (µs of real time since the run began), so the properties and the
reference model judge exactly what ran. Run start is aligned to a whole second of the wall clock
(epoch_us), so event timestamps (whole seconds) fall where the scaled History puts them.

Observation is by polling each node (one client session a poll): which client transactions are
present and how often, SHOW SLAVE STATUS with the SQL thread's SHOW PROCESSLIST state, the
semi-sync status variables and the gtid positions, and new lines of the error log. An IO thread
that a sample finds stopped by an error (Last_IO_Errno, e.g. 1236 for a purged binlog) is one
`error` observation with thread io per stop. PURGE BINARY LOGS records SHOW BINARY LOGS before
and after it (purged, remaining); a binlog it removes is read just before, so its events stay
in the trace. The header's resolution_us is the largest gap measured between two polls of one
node: the timing uncertainty of every observed instant. At the end, once replication is quiet:
the binlogs (SHOW BINLOG EVENTS, the header timestamp read from the file at each event's
position) and one `data` observation per node counting each transaction's row.

Each poll of a replica first reads what was written to its relay logs since the last read
(replcheck.harness.relaylog, with mariadb-binlog), as `relay` observations stamped when the read
ended; so do the runner's statements that may purge relay logs, and restarts. What a poll cannot
see is declared in the header's `unobserved` (acks; relay-log writes when a relay log could not be
read whole, the gap in the notes), so the properties that need it report not_exercised.

Multi-source (named connections, MariaDB's connection_name): every channel is a Link, (replica,
connection_name), None for a replica's one unnamed connection, and what belongs to a channel is kept
per Link: its relay proxy, its relay logs (relay-<name>.NNNNNN), its samples (a row of SHOW ALL
SLAVES STATUS each, tagged `connection` as the models' are) and its SQL thread's stops; statements
name the connection they address. How each op runs is model/ops.py's table: the
statement builder or Runner method it names. Ops a real server cannot do (the table's reasons)
are refused before anything starts (RunnerError, one line naming the op). No SQL text from a History is executed:
statements are built from validated fields only (integers, whitelisted names and enum words).
"""
from __future__ import annotations

import copy
import os
import re
import threading
import time
from typing import Any, Callable

from replcheck.harness.proxy import ChannelProxy, ClockExchange, Cut
from replcheck.harness import variables
from replcheck.harness.mariadb import (Cluster, HarnessError, ServerBinaries, SqlError, connection_clause, find_server,
                                       sql_quote)
from replcheck.harness.relaylog import Event, RelayLogs
from replcheck.harness import stream as S
from replcheck.model import filter as FL
from replcheck.model import multisource as MS
from replcheck.model import ops as O
from replcheck.model import parallel as PA
from replcheck.spec import formats as F
from replcheck.spec.formats import US

DEFAULT_EPOCH_US = 1_700_000_000_000_000  # the models' epoch when a History names none
# MASTER_DELAY tokens a History may send to exercise the server's parser: numbers and bare words.
DELAY_SQL = re.compile(r"^(-?[0-9]{1,20}(\.[0-9]{1,6})?|[A-Za-z]{1,16})$")
VARIABLE = re.compile(r"^[a-z_]{1,64}$")
WORD = re.compile(r"^[A-Za-z_]{1,32}$")
LOG_FILE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
ER_STMT_CACHE_FULL = 1705
CR_SERVER_LOST = 2013  # the client's error when the server dies under a statement: no answer came  # a non-transactional statement's changes could not be binlogged: an incident
ORDER = {"visible": 0, "binlog": 1, "relay": 1, "apply": 2, "status": 4, "server_status": 5, "log": 6, "data": 7}
# What polling cannot see: acks; relay-log writes when a relay log could not be read whole; binlog
# syncs and what crash recovery cut and resolved (a kill -9 leaves them to the server's own start);
# which groups a replica's SQL thread filtered (it commits nothing, only gtid_slave_pos moves).
UNOBSERVED = ["relay", "ack", "binlog_sync", "recovery", "filtered"]
# Statements that purge the relay logs when the replica's threads are stopped: START SLAVE with
# MASTER_USE_GTID (start_slave_threads, sql/slave.cc; observed as relay_log_recovery, reason gtid,
# as the models do), RESET SLAVE, CHANGE MASTER (sql_repl.cc).
PURGES_RELAY_LOGS = frozenset({"start_slave", "reset_slave", "change_master"})
ALL_SLAVES = frozenset({"start_all_slaves", "stop_all_slaves"})  # every connection of a multi-source replica
# Semi-sync in play (settings, lose_acks): the channels' relays then see each ack on its way to the
# source (and lose those lose_acks asks for).
SEMI_SYNC = re.compile(r"^rpl_semi_sync_")
NOT_IN_GROUP = frozenset({"Format_desc", "Rotate", "Gtid_list", "Binlog_checkpoint", "Incident", "Stop"})
# A relay log's own framing, written by the replica under its own server id (MYSQL_BIN_LOG::open
# and new_file in sql/log.cc): the FDE that starts each relay log, the Rotate that ends it. Not
# relayed events: the model's relay log holds only what the master sent.
RELAY_FRAMING = frozenset({"Format_desc", "Rotate", "Stop"})
# What the SQL thread executes outside a group without a row to show it: its apply is seen by the
# relay-log place a sample shows past it (an incident stops it or is skipped: the skip is its own).
PASSED_OUTSIDE_GROUPS = frozenset({"Format_desc", "Rotate", "Gtid_list", "Binlog_checkpoint"})
GTID_TEXT = re.compile(r"^GTID (\d+-\d+-\d+)")  # mariadb-binlog's text of a Gtid event: 'GTID 0-1-2 trans'
# The SQL thread's note once SQL_SLAVE_SKIP_COUNTER ran out (handle_slave_sql, sql/slave.cc): where
# it was when the skipping began and where it is now. Every relayed event in between was passed
# over, and those the counter counts were skipped (see _emit_skips).
SKIP_LOG = re.compile(r"^'SQL_SLAVE_SKIP_COUNTER=\d+' executed at relay_log_file='([^']*)', relay_log_pos='(\d+)'"
                      r".* and new position at relay_log_file='([^']*)', relay_log_pos='(\d+)'")
# Passed over without counting (their do_shall_skip ignores them: log_event_server.cc), as the model's
# SKIP_EXEMPT; a Binlog_checkpoint changes nothing on a replica and the model has none.
NOT_SKIPPED = frozenset({"ROTATE_EVENT", "FORMAT_DESCRIPTION_EVENT", "GTID_LIST_EVENT", "BINLOG_CHECKPOINT_EVENT"})
ROTATE_TEXT = re.compile(r"^Rotate to (\S+)\s+pos: (\d+)")  # and of a Rotate: 'Rotate to bin.000001  pos: 4'
# An error-log line's prefix, in every format the servers write. MariaDB's print_buffer_to_file
# (sql/log.cc) writes "%d-%02d-%02d %2d:%02d:%02d %lu [%s] ": the hour is space-padded, so 03:07 is
# "2026-11-23  3:07:01"; handle_fatal_signal (sql/signal_handler.cc) writes "YYMMDD %2d:MM:SS
# [ERROR]" with no thread id. MySQL 8.0 writes ISO 8601 with microseconds and a subsystem
# ("2026-11-23T03:07:01.123456Z 0 [Note] [MY-010116] [Server] ..."). Reading only two-digit hours
# lost every line written before 10:00.
LOG_LINE = re.compile(r"^(?:\d{4}-\d\d-\d\d\s+\d{1,2}:\d\d:\d\d|\d{6}\s+\d{1,2}:\d\d:\d\d"
                      r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d))"
                      r"(?:\s+\d+)?\s+\[(\w+)\]\s+(?:\[MY-\d+\]\s+\[\w+\]\s+)?(.*)$")
DUMP_LOG = re.compile(r"semi-sync binlog_dump to slave \(server_id: (\d+)\)")
STATUS_INTS = ("SQL_Delay", "Relay_Log_Pos", "Exec_Master_Log_Pos", "Read_Master_Log_Pos", "Last_SQL_Errno", "Skip_Counter")
STATUS_NULLABLE_INTS = ("SQL_Remaining_Delay", "Seconds_Behind_Master")
STATUS_STRINGS = ("Slave_IO_Running", "Slave_SQL_Running", "Slave_SQL_Running_State", "Relay_Log_File",
                  "Relay_Master_Log_File", "Master_Log_File", "Last_SQL_Error", "Gtid_IO_Pos")
GTID_VARS = ("gtid_binlog_pos", "gtid_slave_pos", "gtid_current_pos")
SCHEMA = ("CREATE DATABASE rc; "
          # No primary or unique key: a transaction applied twice shows as two rows, not as an error.
          "CREATE TABLE rc.r (k INT NOT NULL, part INT NOT NULL, pad VARCHAR(255) NOT NULL DEFAULT '', KEY (k)) ENGINE=InnoDB; "
          "CREATE TABLE rc.m (k INT NOT NULL, part INT NOT NULL, pad VARCHAR(255) NOT NULL DEFAULT '', KEY (k)) ENGINE=MyISAM")
# The server's clock, not SET TIMESTAMP's: when a statement ran, in the trace's time (see _instant).
CLOCK = "UNIX_TIMESTAMP(SYSDATE(6))"
POLL = (f"SELECT {CLOCK}; SELECT k, COUNT(*) FROM rc.r WHERE part = 0 GROUP BY k; SELECT k, COUNT(*) FROM rc.m WHERE part = 0 GROUP BY k; "
        "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'rc' AND TABLE_NAME LIKE 'd%'; "
        # The SQL thread's state around SHOW SLAVE STATUS, and SHOW SLAVE STATUS again: if both processlist
        # reads agree and both SHOW SLAVE STATUS agree on state and relay-log position (no event read in
        # between: a state that changed and changed back did so by reading one), none changed meanwhile.
        "SELECT STATE FROM information_schema.PROCESSLIST WHERE COMMAND = 'Slave_SQL'; SHOW SLAVE STATUS; "
        "SELECT STATE FROM information_schema.PROCESSLIST WHERE COMMAND = 'Slave_SQL'; SHOW SLAVE STATUS; "
        "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync%'; "
        f"SELECT @@gtid_binlog_pos, @@gtid_slave_pos, @@gtid_current_pos, {CLOCK}")
# A replica with named connections (multi-source): a row per connection, named by Connection_name
# (show_all_master_info, sql/slave.cc: the default connection shows only once configured). Which
# Slave_SQL thread in the processlist is whose is not shown, so its samples carry no processlist state.
POLL_ALL = POLL.replace("SHOW SLAVE STATUS", "SHOW ALL SLAVES STATUS")
# A Gtid event's GTID in its SHOW BINLOG EVENTS Info.
GTID_IN_INFO = re.compile(r"\b\d+-\d+-\d+\b")
# The text of a statement trx_statement built, in a binlog event: the transaction's number.
OWN_TEXT = re.compile(r"INSERT INTO rc\.[rm] \(k, part, pad\) VALUES \((\d+), |CREATE TABLE rc\.d(\d+) ")
# Rows one statement writes to overflow a binlog cache of a few KiB (the History sets the size).
OVERFLOW_ROWS = 64


Link = tuple[str, "str | None"]  # (replica, connection_name): a channel; None for a replica's one unnamed connection


def links_of(sources: dict, node: str) -> list[Link]:
    """The node's channels as a replica, in the topology's order (SHOW ALL SLAVES STATUS's rows)."""
    return [link for link in sources if link[0] == node]


class RunnerError(ValueError):
    """The History cannot run on a real server (an op it cannot do, a value out of range)."""


# ---------------------------------------------------------------------------------------------
# Checking and scaling a History


def check_supported(history: dict) -> None:
    """RunnerError naming the first op (or topology field) a real server cannot do; the caller names the History."""
    for i, op in enumerate(history["ops"]):
        where = f"ops[{i}] (at {op['at']} µs)"
        entry = O.OPS[op["op"]]
        if entry.refused:
            raise RunnerError(f"{where}: op {entry.name} is not supported on a real server: {entry.refused}")
        for limit in entry.limits:
            if limit.applies(op, history["ops"]):
                raise RunnerError(f"{where}: {limit.message}")
        if entry.statement:
            try:  # its statement, built now, refuses the fields that could not reach SQL
                admin_statement(op, DEFAULT_EPOCH_US)
            except RunnerError as e:
                raise RunnerError(f"{where}: {e}") from None
    if any("connection" in c for c in history["header"]["topology"].get("channels", [])):
        # Failover and rejoin repoint a replica's one channel (Cluster.repoint, rejoin): with named
        # connections in the topology which one they mean is the History's to say, and no op says it.
        for i, op in enumerate(history["ops"]):
            if op["op"] == "failover" or (op["op"] == "restart" and op.get("master")):
                raise RunnerError(f"ops[{i}] (at {op['at']} µs): op {op['op']} in a topology with named connections "
                                  f"(multi-source) is not supported on a real server")
    for i, n in enumerate(history["header"]["topology"]["nodes"]):
        for key in ("clock_offset_us", "relay_log_info"):
            if n.get(key):
                raise RunnerError(f"topology.nodes[{i}].{key}: not supported on a real server (node {n['id']})")
        if n.get("commit_timestamps"):
            raise RunnerError(f"topology.nodes[{i}].commit_timestamps: MySQL 8.0's, not a MariaDB feature (node {n['id']})")
        if n.get("gtid_mode") is False:  # refused here, before any server starts, not by the cluster mid-run
            raise RunnerError(f"topology.nodes[{i}].gtid_mode: off is not supported on a real server: the harness's "
                              f"channels all replicate by GTID (node {n['id']})")


def check_server(history: dict, server: ServerBinaries) -> None:
    """RunnerError naming the first variable the History asks for that this build lacks (its
    server would not start, or its SET GLOBAL would fail); HarnessError when the build cannot say."""
    try:
        problem = variables.lacking(history, server)
    except variables.Unreadable as e:
        raise HarnessError(f"MariaDB {server.version}: cannot list its variables: {e}") from None
    if problem:
        raise RunnerError(problem)


def _purge_problem(op: dict) -> str | None:
    """What makes a purge_binary_logs op unusable: exactly one of a file name `to` or a trace time `before_us`."""
    if ("to" in op) == ("before_us" in op):
        return "purge_binary_logs needs exactly one of to and before_us"
    if "to" in op and not (isinstance(op["to"], str) and LOG_FILE.match(op["to"])):
        return f"to {op['to']!r} is not a binlog file name"
    b = op.get("before_us", 0)
    if isinstance(b, bool) or not isinstance(b, int) or b < 0:
        return f"before_us {b!r} is not a nonnegative integer (µs of trace time)"
    return None


def scale_delay(delay: int, scale: float) -> int:
    """MASTER_DELAY in whole seconds: a nonzero delay never becomes 0."""
    return 0 if delay == 0 else min(2**31 - 1, max(1, round(delay * scale)))


# How a time of each unit (model/ops.py) scales: a timeout or a nonzero delay never becomes 0.
# SET TIMESTAMP's seconds are a distance from the History's epoch, scaled by scaled_history and
# moved to the run's epoch by Runner._rebase_timestamps.
SCALE = {O.US: lambda v, scale: round(v * scale), O.MS: lambda v, scale: max(1, round(v * scale)), O.SECONDS: scale_delay}


# A real run's times are read by polling: on a loaded machine samples came 0.2–0.6 s apart. A
# semi-sync timeout scaled below 1.5 s could not be told from a prompt commit (WL1720.TIMEOUT.ASYNC
# is inconclusive past half of it); MariaDB counts MASTER_DELAY in whole seconds against a clock
# difference it also takes in whole seconds (sql_delay_event, get_master_version_and_clock in
# sql/slave.cc), so a delay scaled to 1 s is all truncation: kept at 2 s at least.
TIMEOUT_FLOOR_MS = 1500
DELAY_FLOOR_S = 2
SCALE_RANGE = (0.1, 1.0)  # the quick suite's time budget; no History runs slower than real time
MAX_SCALE = 10.0  # what any run may ask for (conform's retries of an inconclusive run go past SCALE_RANGE)
LOOPBACK_LATENCY_US = 10_000  # a channel latency up to this, once scaled, is loopback's own; none is made
# An op that starts later than this past its time (a slow statement before it, a loaded machine)
# moves every later op by as much: the History's distances between ops are what its scenario needs
# (a commit, then 200 ms for it to wait, then the crash), and squeezing them would test another one.
# Less is the sleep's own jitter, and moves nothing.
SLIP_MIN_US = 20_000
# On a node that never waits for semi-sync acks, an op due after a transaction's planned end waits
# for its COMMIT to return first (at most this long): a model commits it by then, and a loaded
# machine must not let a FLUSH LOGS overtake the incident a slow statement was about to write.
COMMIT_WAIT_S = 10.0


def scale_for(history: dict) -> float:
    """The time scale a History needs: the smallest in SCALE_RANGE that keeps every semi-sync
    timeout and MASTER_DELAY it sets at its floor (or whole, if it is shorter than that), but no
    larger than its channels' latencies allow (a latency cannot be made, only dropped)."""
    floors = {O.MS: TIMEOUT_FLOOR_MS, O.SECONDS: DELAY_FLOOR_S}
    values = [(O.SECONDS, c["delay"]) for c in history["header"]["topology"].get("channels", []) if c.get("delay")]
    values += [(O.MS, n["variables"][O.SEMI_SYNC_TIMEOUT]) for n in history["header"]["topology"]["nodes"]
               if isinstance(n.get("variables", {}).get(O.SEMI_SYNC_TIMEOUT), int)]
    values += [(unit, place[key]) for op in history["ops"] for unit in floors for place, key in O.op_times(op, unit)]
    need = max((min(v, floors[unit]) / v for unit, v in values if v > 0), default=0)
    most = max(SCALE_RANGE[0], min(SCALE_RANGE[1], largest_scale(history)))
    return min(most, max(SCALE_RANGE[0], need))


def largest_scale(history: dict) -> float:
    """The largest time scale a History can run at: the runner's limit (10), or less where a
    channel's latency, once scaled, would be more than loopback's own (it cannot be made)."""
    latency = max((c.get("latency_us", 0) for c in history["header"]["topology"].get("channels", [])), default=0)
    return min(MAX_SCALE, LOOPBACK_LATENCY_US / latency) if latency else MAX_SCALE


def scaled_history(history: dict, scale: float, latency_allowance_us: int = LOOPBACK_LATENCY_US) -> dict:
    """The History that runs: every time multiplied by `scale`, MASTER_DELAY in whole seconds.
    Channel latencies up to `latency_allowance_us` once scaled are loopback's (dropped); larger ones refused."""
    if not (isinstance(scale, (int, float)) and 0 < scale <= MAX_SCALE):
        raise RunnerError(f"time scale {scale!r} is not a number in (0, 10]")
    h = copy.deepcopy(history)
    hdr = h["header"]
    for key in ("end_us", "sample_every_us"):
        if key in hdr:
            hdr[key] = max(1000 if key == "sample_every_us" else 0, round(hdr[key] * scale))
    for i, c in enumerate(hdr["topology"].get("channels", [])):
        if c.get("latency_us", 0) * scale > latency_allowance_us:
            raise RunnerError(f"topology.channels[{i}].latency_us: {c['latency_us']} (x {scale:g}) cannot be made on "
                              f"loopback ({c['source']}->{c['replica']})")
        c.pop("latency_us", None)
        if "delay" in c:
            c["delay"] = scale_delay(c["delay"], scale)
    for n in hdr["topology"]["nodes"]:
        var = n.get("variables", {})
        if O.SEMI_SYNC_TIMEOUT in var:
            var[O.SEMI_SYNC_TIMEOUT] = SCALE[O.MS](var[O.SEMI_SYNC_TIMEOUT], scale)
    epoch_s = hdr.get("epoch_us", DEFAULT_EPOCH_US) // US
    for op in h["ops"]:
        for unit, fn in SCALE.items():
            for place, key in O.op_times(op, unit):
                place[key] = fn(place[key], scale)
        for place, key in O.op_times(op, O.UNIX_S):  # a SET TIMESTAMP 30 s in the future stays 30 s (scaled) ahead
            place[key] = max(1, epoch_s + round((place[key] - epoch_s) * scale))
    hdr["description"] = (hdr.get("description", "") + f" [time scale {scale:g}]").strip()
    return h


# ---------------------------------------------------------------------------------------------
# Statements, built only from validated fields


def sql_value(value: Any) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and WORD.match(value):
        return sql_quote(value)
    raise RunnerError(f"value {value!r} is not a boolean, an integer or a bare word")


def admin_statement(op: dict, epoch_us: int | None = None) -> str:
    """The statement for an administrative op, by the builder model/ops.py names for it. Only
    validated fields reach the text. `epoch_us`: the Unix time (µs) of trace time 0, for a time of
    the trace in a statement (PURGE ... BEFORE)."""
    entry = O.OPS.get(op["op"])
    if entry is None or not entry.statement:
        raise RunnerError(f"op {op['op']} is not an administrative statement")
    return globals()[entry.statement](op, epoch_us)


def _named(op: dict) -> str:
    """The op's connection as the statement names it: ` 'a'` after the keyword, '' for the default
    connection (no `connection`, or '')."""
    try:
        return connection_clause(op.get("connection") or None)
    except HarnessError as e:
        raise RunnerError(str(e)) from None


def change_master_statement(op: dict, epoch_us: int | None) -> str:
    if "delay_sql" in op:
        token = str(op["delay_sql"])
        if not DELAY_SQL.match(token):
            raise RunnerError(f"delay_sql {token!r} is not a number or a bare word")
        sql = f"CHANGE MASTER{_named(op)} TO MASTER_DELAY = {token}"
    else:
        delay = op["delay"]
        if isinstance(delay, bool) or not isinstance(delay, int):
            raise RunnerError(f"MASTER_DELAY {delay!r} is not an integer")
        sql = f"CHANGE MASTER{_named(op)} TO MASTER_DELAY = {delay}"
    if "relay_log_file" in op:  # the relay logs are kept (sql_repl.cc, change_master: need_relay_log_purge= 0)
        f, p = op["relay_log_file"], op["relay_log_pos"]
        if not LOG_FILE.match(f) or isinstance(p, bool) or not isinstance(p, int):
            raise RunnerError(f"relay log place {f!r}, {p!r} is not a file name and an integer position")
        sql += f", RELAY_LOG_FILE = '{f}', RELAY_LOG_POS = {p}"
    return sql


def _thread(op: dict) -> str:
    return {"io": " IO_THREAD", "sql": " SQL_THREAD", None: ""}[op.get("thread")]


def stop_slave_statement(op: dict, epoch_us: int | None) -> str:
    return "STOP SLAVE" + _named(op) + _thread(op)


def start_slave_statement(op: dict, epoch_us: int | None) -> str:
    until = op.get("until")
    if until and until.get("sql_after_mts_gaps") is True:  # MySQL's; MariaDB answers with a syntax error
        return f"START SLAVE{_named(op)}{_thread(op)} UNTIL SQL_AFTER_MTS_GAPS"
    if until:
        f, p = until["master_log_file"], until["master_log_pos"]
        if not LOG_FILE.match(f) or isinstance(p, bool) or not isinstance(p, int):
            raise RunnerError(f"until {until!r} is not a file name and an integer position")
        return f"START SLAVE{_named(op)}{_thread(op)} UNTIL MASTER_LOG_FILE = {sql_quote(f)}, MASTER_LOG_POS = {p}"
    return "START SLAVE" + _named(op) + _thread(op)


def reset_slave_statement(op: dict, epoch_us: int | None) -> str:
    return "RESET SLAVE" + _named(op)


def start_all_slaves_statement(op: dict, epoch_us: int | None) -> str:
    return "START ALL SLAVES"


def stop_all_slaves_statement(op: dict, epoch_us: int | None) -> str:
    return "STOP ALL SLAVES"


def flush_logs_statement(op: dict, epoch_us: int | None) -> str:
    return "FLUSH LOGS"


def flush_status_statement(op: dict, epoch_us: int | None) -> str:
    return "FLUSH NO_WRITE_TO_BINLOG STATUS"


def purge_statement(op: dict, epoch_us: int | None) -> str:
    if problem := _purge_problem(op):
        raise RunnerError(problem)
    if "to" in op:
        return f"PURGE BINARY LOGS TO {sql_quote(op['to'])}"
    if isinstance(epoch_us, bool) or not isinstance(epoch_us, int):
        raise RunnerError(f"epoch {epoch_us!r} is not an integer: no server instant for before_us")
    # The server's instant of that trace time, from integers only (see Runner._instant).
    seconds, micros = divmod(epoch_us + op["before_us"], US)
    return f"PURGE BINARY LOGS BEFORE FROM_UNIXTIME({seconds}.{micros:06d})"


def set_global_statement(op: dict, epoch_us: int | None) -> str:
    name = op["variable"]
    if not VARIABLE.match(name):
        raise RunnerError(f"variable {name!r} is not a variable name")
    # A connection's variable (sql_slave_skip_counter, ...) is the one @@default_master_connection names
    # (sql/sys_vars.cc: Sys_slave_skip_counter, a multi-source variable of the Master_info it names).
    named = f"SET @@default_master_connection = {_named(op).strip()}; " if op.get("connection") else ""
    return f"{named}SET GLOBAL {name} = {sql_value(op['value'])}"


def trx_statement(op: dict, k: int, origin_port: int) -> str:
    """The client transaction of a trx op, as one session's statements. `k` is the transaction's
    number (its rows carry it); the History's name for it never reaches SQL."""
    if isinstance(k, bool) or not isinstance(k, int):
        raise RunnerError(f"transaction number {k!r} is not an integer")
    stmts = op.get("statements") or [{}]
    head = []
    if op.get("timestamp") is not None:
        ts = op["timestamp"]
        if isinstance(ts, bool) or not isinstance(ts, int) or ts < 0:
            raise RunnerError(f"timestamp {ts!r} is not a nonnegative integer")
        head.append(f"SET TIMESTAMP = {ts}")
    if op.get("skip_replication"):  # its events carry LOG_EVENT_SKIP_REPLICATION_F
        head.append("SET SESSION skip_replication = 1")
    if op.get("domain") is not None:
        domain = op["domain"]
        if isinstance(domain, bool) or not isinstance(domain, int) or not 0 <= domain < 2**32:
            raise RunnerError(f"domain {domain!r} is not a gtid_domain_id")
        head.append(f"SET SESSION gtid_domain_id = {domain}")
    if op.get("ddl"):
        return "; ".join(head + [f"CREATE TABLE rc.d{k} (i INT) ENGINE=InnoDB"])
    table = "rc.m" if op.get("engine") == "myisam" else "rc.r"
    if op.get("error"):
        # ER_BAD_NULL_ERROR on the second row (after the first is written) or on the first: with
        # STRICT_ALL_TABLES a later row's error aborts the statement too (a MyISAM table keeps the rows before)
        rows = [f"({k}, 0, '')", f"({k}, NULL, '')"]
        order = rows if op["error"].get("after_changes") else rows[::-1]
        return "; ".join(head + ["SET SESSION sql_mode = 'STRICT_ALL_TABLES'", "BEGIN",
                                 f"INSERT INTO {table} (k, part, pad) VALUES {', '.join(order)}", "COMMIT"])
    cost = any(s.get("replica_cost_us") for s in stmts)
    if cost:
        # The replica's cost needs the statement itself on the replica: SLEEP there, not here. Not
        # told apart by @@server_id: a replica's SQL thread runs with the originating server's.
        head.append("SET SESSION binlog_format = 'STATEMENT'")
    body = ["BEGIN"]
    for i, s in enumerate(stmts):
        if op.get("binlog_failure") == "cache_overflow" and i == 0:
            rows = ", ".join(f"({k}, {j}, REPEAT('x', 200))" for j in range(OVERFLOW_ROWS))
            body.append(f"INSERT INTO {table} (k, part, pad) VALUES {rows}")
        else:
            us = s.get("replica_cost_us", 0)
            pad = f"IF(@@port = {int(origin_port)}, '', SLEEP({us / US:.6f}))" if us else "''"
            body.append(f"INSERT INTO {table} (k, part, pad) VALUES ({k}, {i}, {pad})")
        if s.get("duration_us"):
            body.append(f"DO SLEEP({int(s['duration_us']) / US:.6f})")
    body.append("COMMIT")
    return "; ".join(head + body)


# ---------------------------------------------------------------------------------------------
# The run


def _int(v: Any) -> int | None:
    return int(v) if v is not None and str(v).lstrip("-").isdigit() else None


class Runner:
    """One History on one Cluster. `run()` returns (header, observations) of the Trace."""

    def __init__(self, history: dict, *, scale: float = 0.1, basedir: str | None = None, tmpdir: str | None = None,
                 poll_us: int = 40_000, quiet_s: float = 8.0, name: str | None = None,
                 progress: Callable[[str], None] | None = None, verbose: bool = False):
        self.name = name or history["header"].get("name", "history")
        check_supported(history)
        self.original = history
        self.history = scaled_history(history, scale)
        self.scale, self.poll_us, self.quiet_s = scale, poll_us, quiet_s
        self.basedir, self.tmpdir, self.verbose = basedir, tmpdir, verbose
        self.progress = progress or (lambda msg: None)
        topo = self.history["header"]["topology"]
        self.node_ids = [n["id"] for n in topo["nodes"]]
        self.server_ids = {n["id"]: n.get("server_id", i + 1) for i, n in enumerate(topo["nodes"])}
        self.by_server_id = {sid: n for n, sid in self.server_ids.items()}
        # Each channel by its link (replica, connection_name), None for the one unnamed connection: a
        # multi-source replica's connections each have their own relay, relay logs, SQL thread and samples.
        self.sources: dict[Link, str] = {(c["replica"], c.get("connection")): c["source"] for c in topo.get("channels", [])}
        self.named = {r for r, conn in self.sources if conn is not None}  # replicas with named connections
        self.delays = {(c["replica"], c.get("connection")): c.get("delay", 0) for c in topo.get("channels", [])}
        # A topology with filters: commits say which table they wrote, as the models' do.
        self.filtering = any(FL.configured(n.get("variables") or {}) for n in topo["nodes"])
        self.trx_names: list[str] = []  # k -> the History's name
        self.origin_of: dict[int, str] = {}
        self.gtid_of: dict[int, str] = {}
        self.seen: dict[tuple[str, int], int] = {}  # (node, k) -> first time present
        self.seen_pos: dict[tuple[str, int], tuple[str, int]] = {}
        self.seen_src: dict[tuple[str, int], str | None] = {}  # the node's source then (failover changes it)
        self.commits: dict[int, dict] = {}  # k -> its commit observation
        self.binlog_pos: dict[str, list[tuple[int, dict[str, int]]]] = {}  # node -> (poll time, gtid_binlog_pos)
        self.returned: dict[int, tuple[int, int | None]] = {}  # k -> (commit return time, errno)
        self._last_trx: dict[str, tuple[int, float, int]] = {}  # node -> (k, when started, its `at`) of its last trx
        self.obs: list[tuple[int, int, dict]] = []
        self.workers: list[threading.Thread] = []  # the sessions of client transactions
        self._seq = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._busy: set[str] = set()  # nodes being crashed or restarted: not polled
        self._node_locks = {n: threading.Lock() for n in self.node_ids}  # a sample or a statement at a time
        self._last_poll: dict[str, int] = {}
        self._last_status: dict[Link, dict] = {}
        self._last_server_status: dict[str, dict] = {}
        self._log_offsets: dict[str, int] = {}
        self._io_error: dict[Link, tuple[int, str]] = {}  # the IO thread's error last emitted
        self._binlogs_kept: dict[tuple[str, str], list[dict]] = {}  # (node, file) -> its events, read before a purge
        self.binlog_tool = ""  # mariadb-binlog
        self.relay_logs: dict[Link, RelayLogs] = {}  # its relay logs, read as they grow
        self._relay_group: dict[Link, tuple[list[dict], bool]] = {}  # its open group's relay observations, standalone
        self._relayed: dict[Link, list[dict]] = {}  # its relay observations, in relay order
        self._relay_read_began: dict[Link, int] = {}  # when the last read of its relay logs began
        self._unapplied: dict[Link, list[int]] = {}  # indexes into _relayed of events in no group not yet passed
        self._master_file: dict[Link, str] = {}  # the master's binlog its IO thread reads (its last Rotate)
        self.max_gap = 0
        self.cluster: Cluster | None = None
        self.proxies: dict[Link, ChannelProxy] = {}  # the relay on each channel
        self.repointed = False  # a failover moved a channel off its relay: acks no longer all seen
        self.acks_seen = False  # semi-sync in play: the relays report the acks
        self._clock_queries: list[tuple[str, str, ClockExchange]] = []  # (source, replica, exchange), as relayed
        self.seen_again: dict[tuple[str, int], list[int]] = {}  # on a multi-source replica: when each further copy of a row showed
        self.notes: list[str] = []
        self.t0 = self.wall_t0 = 0.0
        self.epoch_us = 0
        self.downs: dict[str, list[int]] = {}  # node -> when each crash or shutdown of it ended
        self._in_flight: dict[str, list[tuple[int, threading.Thread]]] = {}  # node -> (planned end, session)
        self.semi_sync_masters = _semi_sync_masters(self.history)
        self.read_seen: dict[tuple[str, int], int] = {}  # (node, trx) -> the first read op that saw its row
        self._sql_started: set[Link] = set()  # a START SLAVE started their SQL thread since their last sample
        self._until: set[Link] = set()  # their SQL thread runs under START SLAVE ... UNTIL
        self._with_workers: set[str] = set()  # replicas whose SQL thread ran workers at some start
        self.slip_us = 0  # how much later than the History every op from here on starts (SLIP_MIN_US)
        self.slipped: list[list[int]] = []  # [op index in the History, slip_us] where the slip grew

    # -- observations --------------------------------------------------------------------------

    def now(self) -> int:
        return max(0, int((time.monotonic() - self.t0) * US))

    def emit(self, kind: str, node: str, t: int | None = None, **fields) -> dict:
        o = {"t": self.now() if t is None else t, "kind": kind, "node": node, **fields}
        with self._lock:
            self._seq += 1
            self.obs.append((o["t"], self._seq, o))
        return o

    # -- main ------------------------------------------------------------------------------------

    def run(self) -> tuple[dict, list[dict]]:
        server = find_server(self.basedir)
        check_server(self.original, server)
        self.binlog_tool = server.binlog
        options = []
        if any(op["op"] == "trx" and op.get("binlog_failure") == "cache_overflow" for op in self.history["ops"]):
            # Small caches, so OVERFLOW_ROWS rows overflow them and one row does not.
            options += ["--max-binlog-stmt-cache-size=4096", "--max-binlog-cache-size=4096",
                        "--binlog-stmt-cache-size=4096", "--binlog-cache-size=4096"]
        late = {(c["replica"], c.get("connection")) for c in self.history["header"]["topology"].get("channels", [])
                if c.get("clock_reply") == "next_second"}
        for link, source in self.sources.items():
            # Every channel (each connection of a multi-source replica): its clock query is steadied
            # (or made late) whatever the History does, and a cut falls on its connection alone.
            replica = link[0]
            self.proxies[link] = ChannelProxy(
                lambda s=source: self.cluster.port(s), on_ack=lambda f, p, r=replica, s=source: self._ack(s, r, f, p),
                on_lost=lambda f, p, r=replica, s=source: self.notes.append(
                    f"lose_acks: the relay of {s}->{r} dropped {r}'s ack of ({f}, {p}) at {self.now()} µs"),
                on_clock=lambda x, r=replica, s=source: self._clock_query(s, r, x),
                on_cut=lambda x, k=link, s=source: self._io_cut(s, k, x), late=link in late)
        self.acks_seen = _semi_sync(self.history)
        try:
            # A connection's source is another for each of a replica's connections: (source, replica) names one relay.
            self.cluster = Cluster(self.history["header"]["topology"], server=server, tmpdir=self.tmpdir, options=options,
                                   verbose=self.verbose, routes={(self.sources[k], k[0]): p.port for k, p in self.proxies.items()})
            with self.cluster:
                self._run()
        finally:
            for proxy in self.proxies.values():
                proxy.close()
        self._emit_clock_queries()
        return self._header(server.version), self._ordered()

    def _run(self) -> None:
        self._set_up()
        # Time 0 on a whole second of the wall clock: event timestamps fall where the History puts them.
        time.sleep(1 - (time.time() % 1))
        mono, wall = time.monotonic(), time.time()
        self.wall_t0 = float(int(wall))  # trace time 0 is exactly the epoch, however late the sleep woke
        self.t0 = mono - (wall - self.wall_t0)
        self.epoch_us = int(wall) * US
        self._rebase_timestamps()
        for n in self.node_ids:  # what the servers logged while starting, at time 0
            self._tail_log(n, 0)
        for n in dict.fromkeys(r for r, _ in self.sources):  # the SQL threads the cluster started: with workers or not
            self._workers(n, 0)
        poller = threading.Thread(target=self._poll_loop, name="replcheck-poller", daemon=True)
        poller.start()
        try:
            self._run_ops()
            end = self.history["header"].get("end_us", 0)
            self._sleep_until(end)
            for w in self.workers:
                w.join(timeout=max(1.0, self.quiet_s))
            self._wait_quiet()
        finally:
            self._stop.set()
            poller.join(timeout=10)
        self._poll_all()
        for link in self.relay_logs:
            self._read_link(link, final=True)
        self._collect_binlogs()
        self._emit_data(self.now())

    def _ack(self, source: str, replica: str, file: str, pos: int) -> None:
        """An ack on its way to the source (the relay forwarded it): the source has it no earlier."""
        if self.t0:  # not the acks of the set-up, before time 0
            self.emit("ack", source, replica=replica, file=file, pos=pos)

    def _clock_query(self, source: str, replica: str, x: ClockExchange) -> None:
        """The IO thread's clock query at a connect, as its relay passed it: what clock_diff_with_master
        it gives the replica. Kept until the run ends: the set-up's connects come before time 0 (at 0 then)."""
        with self._lock:
            self._clock_queries.append((source, replica, x))

    def _emit_clock_queries(self) -> None:
        at = lambda wall: max(0, round((wall - self.wall_t0) * US))  # noqa: E731
        for source, replica, x in self._clock_queries:
            self.emit("clock_query", replica, at(x.delivered), source=source, asked=at(x.asked), answered=at(x.answered),
                      master_unix_timestamp=x.master_unix_timestamp, clock_diff_with_master=x.clock_diff_with_master,
                      held=x.late)

    def _rebase_timestamps(self) -> None:
        """SET TIMESTAMP values are seconds of the History's epoch (scaled_history scaled their
        distance from it): the same distance from this run's epoch. The History that ran records it."""
        hdr = self.history["header"]
        old = hdr.get("epoch_us", DEFAULT_EPOCH_US) // US
        for op in self.history["ops"]:
            for place, key in O.op_times(op, O.UNIX_S):
                place[key] = max(1, self.epoch_us // US + place[key] - old)
        hdr["epoch_us"] = self.epoch_us

    def _set_up(self) -> None:
        c = self.cluster
        for n in self.node_ids:
            # On every node, unlogged: the binlogs then hold only the History's transactions.
            c.sql(n, "SET sql_log_bin = 0; " + SCHEMA)

    def _sleep_until(self, at_us: int) -> bool:
        """Sleeps until at_us plus the slip so far; True when it was already too late (the slip grew)."""
        late = self.now() - (at_us + self.slip_us)
        if late < 0:
            time.sleep(-late / US)
        elif late > SLIP_MIN_US:
            self.slip_us += late
            return True
        return False

    def _run_ops(self) -> None:
        ops = sorted(enumerate(self.history["ops"]), key=lambda x: (x[1]["at"], x[0]))
        for i, op in ops:
            self._await_commits(op)
            if self._sleep_until(op["at"]):
                self.slipped.append([i, self.slip_us])
            self.progress(f"{self.name}: {op['at'] / US:.2f} s {op['op']} on {op['node']}")
            self._do(op)

    def _do(self, op: dict) -> None:
        """The op as model/ops.py says a real server runs it: its statement, or a method of ours."""
        entry = O.OPS[op["op"]]
        if entry.statement:
            self._statement(op)
        else:
            getattr(self, entry.runner)(op)

    def _start_trx(self, op: dict) -> None:
        """A client transaction, in a session of its own: the ops after it do not wait for it. When the
        runner is behind its schedule (a loaded machine), the node's previous transaction is given
        the time the History leaves between the two to return first, so that two sessions started
        at once do not commit in the other order."""
        node = op["node"]
        if (prev := self._last_trx.get(node)) is not None:
            pk, started, at = prev
            deadline = started + (op["at"] - at) / US
            while pk not in self.commits and time.monotonic() < deadline:
                time.sleep(0.002)
        k = len(self.trx_names)
        self._last_trx[node] = (k, time.monotonic(), op["at"])
        self.trx_names.append(op.get("trx") or f"{op['node']}-{op['at']}")
        self.origin_of[k] = op["node"]
        w = threading.Thread(target=self._trx, args=(op, k), daemon=True)
        w.start()
        self.workers.append(w)
        end = op["at"] + sum(s.get("duration_us", 0) for s in op.get("statements") or [])
        self._in_flight.setdefault(op["node"], []).append((end, w))

    def _await_commits(self, op: dict) -> None:
        """The transactions planned to end before this op, on any node, have returned, or on the
        op's own node, when it may wait for semi-sync acks, returned or wait for their ack (at most
        COMMIT_WAIT_S each node): by its planned end a model has binlogged a transaction. A loaded
        machine must not let a crash planned while a commit waits come before the commit is written
        (mdb-phantom-after-sync), nor a master's commit reach a replica before the replica's own
        write planned before it (dom-strict-two-domains at load 17: no out-of-order GTID, no 1950).
        A semi-sync master's commits are not waited for by ops on other nodes: each look at its
        status is a client of its own, and at load 25 those looks made ss-lost-ack-reconnect's
        reconnect a second late, within a 3 s timeout."""
        for node, waiting in self._in_flight.items():
            due = [w for end, w in waiting if end <= op["at"]]
            if node in self.semi_sync_masters:
                if node != op["node"]:
                    continue
                deadline = time.monotonic() + COMMIT_WAIT_S
                while (alive := [w for w in due if w.is_alive()]) and time.monotonic() < deadline:
                    if (waits := self._ack_waits(node)) is None or waits >= len(alive):
                        break
                    time.sleep(0.005)
            else:
                for w in due:
                    w.join(timeout=COMMIT_WAIT_S)
            waiting[:] = [(end, w) for end, w in waiting if w.is_alive()]

    def _ack_waits(self, node: str) -> int | None:
        """Sessions of the node waiting for a semi-sync ack (Rpl_semi_sync_master_wait_sessions,
        counted around the wait in Repl_semi_sync_master::commit_trx, sql/semisync_master.cc, at
        either wait point; every commit in flight is the runner's); None when it does not answer
        (down: its sessions end with it)."""
        try:
            return _int(self.cluster.global_status(node, "Rpl_semi_sync_master_wait_sessions").get(
                "Rpl_semi_sync_master_wait_sessions")) or 0
        except HarnessError:
            return None

    def _trx(self, op: dict, k: int) -> None:
        node, trx = op["node"], self.trx_names[k]
        stmt = trx_statement(op, k, self.cluster.port(node))
        probe = "SHOW GLOBAL STATUS WHERE Variable_name IN ('Rpl_semi_sync_master_yes_tx', 'Rpl_semi_sync_master_no_tx')"
        start = self.now()
        try:
            results = self.cluster.results(node, f"{probe}; SELECT {CLOCK}; {stmt}; "
                                                                       f"SELECT {CLOCK}, @@last_gtid; {probe}")
        except SqlError as e:
            o = self.commits[k] = self.emit("commit", node, trx=trx, gtid=None, start=start, errno=e.errno, message=e.message)
            self.returned[k] = (o["t"], e.errno)
            return
        except HarnessError as e:  # the server went away under it (crash, shutdown)
            self.commits[k] = self.emit("commit", node, trx=trx, gtid=None, start=start, errno=CR_SERVER_LOST,
                                        message=str(e).splitlines()[0])
            return
        # The server's clock: the client's start-up and exit are not the commit's.
        start, t = self._instant(results[1][1][0][0]), self._instant(results[-2][1][0][0])
        before, after = dict(results[0][1]), dict(results[-1][1])
        gtid = results[-2][1][0][1]
        self.gtid_of[k] = gtid
        yes = _int(after.get("Rpl_semi_sync_master_yes_tx", 0)) - _int(before.get("Rpl_semi_sync_master_yes_tx", 0))
        no = _int(after.get("Rpl_semi_sync_master_no_tx", 0)) - _int(before.get("Rpl_semi_sync_master_no_tx", 0))
        # Only an unambiguous change of the counters says how this commit's wait ended.
        how = "yes" if (yes, no) == (1, 0) else "no" if (yes, no) == (0, 1) else None
        self.returned[k] = (t, None)
        self.commits[k] = self.emit("commit", node, t, trx=trx, gtid=gtid, start=start, semisync=how,
                                    **FL.commit_fields(op, self.filtering))

    def _crash(self, op: dict) -> None:
        node = op["node"]
        self._poll(node, force=True)  # what it showed just before (a waiting session recovery may truncate)
        self._busy.add(node)
        self.cluster.kill9(node)
        self._until.difference_update(links_of(self.sources, node))  # in memory only: a restart starts the threads without it
        self.downs.setdefault(node, []).append(self.emit("crash", node)["t"])

    def _shutdown(self, op: dict) -> None:
        node = op["node"]
        self._busy.add(node)
        self.cluster.stop(node)
        self._until.difference_update(links_of(self.sources, node))
        self.downs.setdefault(node, []).append(self.emit("shutdown", node)["t"])

    def _remove_state_file(self, op: dict) -> None:
        """Delete the node's `bin.state` (--log-bin=<dir>/bin), which a clean shutdown wrote."""
        node = op["node"]
        path = os.path.join(self.cluster.node_dir(node), "bin.state")
        removed = os.path.exists(path)
        if removed:
            os.remove(path)
        self.emit("state_file", node, removed=removed)

    def _restart(self, op: dict) -> None:
        node, c = op["node"], self.cluster
        self._busy.add(node)
        # What its first sample sees changed after the start began (it was down): the gap's bound.
        self._last_poll[node] = self.now()
        self._read_relay(node, settled=True)  # down: whole, before relay_log_recovery or a GTID start purges them
        role = op.get("init_rpl_role", "MASTER")
        # --init-rpl-role=SLAVE: recovery truncates what the crash left in doubt (MDEV-21117, log.cc
        # Recovery_context); the role is validated by the History schema (MASTER or SLAVE).
        c.restart(node, [f"--init-rpl-role={role}"] if role != "MASTER" else [])
        path = c.error_log(node)
        self._log_offsets[node] = min(self._log_offsets.get(node, 0), os.path.getsize(path))
        if op.get("start_slave") is False and links_of(self.sources, node):
            c.sql(node, "STOP ALL SLAVES" if node in self.named else "STOP SLAVE")
        for link in links_of(self.sources, node):
            self._io_error.pop(link, None)
        self.emit("restart", node, **({"init_rpl_role": role} if role != "MASTER" else {}))
        if op.get("master"):
            pos = c.rejoin(node, op["master"])
            self.emit("stmt", node, op="set_global", variable="gtid_slave_pos", value=pos, errno=None, message="")
            self.emit("stmt", node, op="change_master", master_host=op["master"], master_use_gtid="slave_pos", errno=None, message="")
            self.sources[(node, None)] = op["master"]
        self._busy.discard(node)

    def _lose_acks(self, op: dict) -> None:
        if (op["node"], None) in self.proxies:  # else not a replica: nothing to lose, as in the models
            self.proxies[(op["node"], None)].lose(op["count"])

    def _cut_io(self, op: dict) -> None:
        """Arms the replica's relay: it cuts the connection after the next `after_events` events of
        groups (replcheck/harness/proxy.py); `_io_cut` records it when it falls."""
        node = op["node"]
        link = (node, op.get("connection") or None)
        if link not in self.proxies:
            self.emit("error", node, op="cut_io", errno=F.ER_BAD_SLAVE, message="not a replica")
            return
        self.proxies[link].cut(op["after_events"], op.get("then", "reconnect"))

    def _io_cut(self, source: str, link: Link, cut: Cut) -> None:
        """The relay cut the connection (in its thread). What it knows is what the model's io_cut
        says: the source's binlog place after the last event passed. `stop`: the stream is held
        mid-transfer and STOP SLAVE IO_THREAD stops the IO thread waiting on it; the cut is recorded
        when the statement returned, the IO thread stopped (no statement of the History's: none is
        recorded)."""
        replica = link[0]
        fields = {"source": source, "then": cut.then, "master_log_file": cut.master_log_file,
                  "master_log_pos": cut.master_log_pos}
        if cut.then == "reconnect":
            self.emit("io_cut", replica, **fields)
            return
        try:
            with self._node_locks[replica]:
                self._read_relay(replica)
                self.cluster.sql(replica, f"STOP SLAVE{connection_clause(link[1])} IO_THREAD")
                self.emit("io_cut", replica, **fields)
        except (HarnessError, SqlError) as e:  # down meanwhile: the connection is gone with it
            self.notes.append(f"cut_io: STOP SLAVE IO_THREAD on {replica} after the cut failed: {e}")
            return
        self._poll(replica, force=True)

    def _show_slave_status(self, op: dict) -> None:
        self._poll(op["node"], force=True)

    def _read(self, op: dict) -> None:
        rows = self._present(op["node"])
        o = self.emit("read", op["node"], seen=sorted(self.trx_names[k] for k in rows if k < len(self.trx_names)))
        for k in rows:
            self.read_seen.setdefault((op["node"], k), o["t"])

    def _expect(self, op: dict) -> None:
        """What a client checking the node sees where the History expects something: read from the
        server as the model shows it (properties/expect.py compares)."""
        node = op["node"]
        try:
            with self._node_locks[node]:
                shown = self.cluster.is_running(node) or op["show"] in F.CLIENT_SHOWN
                value = getattr(self, f"_shows_{op['show']}")(node, op) if shown else None
        except (HarnessError, SqlError):  # down, or the statement's error: nothing shown
            value = None
        self.emit("observed", node, expect=F.expect_where(self.history, op), show=op["show"], value=value)

    def _shows_slave_status(self, node: str, op: dict) -> dict | None:
        raw = self.cluster.show_slave_status(node)
        typed = {k: (_int(v) or 0) if k in STATUS_INTS else _int(v) if k in STATUS_NULLABLE_INTS else v
                 for k, v in raw.items()}
        return {k: typed[k] for k in op["fields"] if k in typed} if raw else None

    def _shows_master_status(self, node: str, op: dict) -> dict | None:
        cols, rows = self.cluster.query(node, "SHOW MASTER STATUS")
        if not rows:
            return None
        shown = {c: (_int(v) if _int(v) is not None else v) for c, v in zip(cols, rows[0])}
        return {k: shown[k] for k in op["fields"] if k in shown}

    def _variables(self, node: str, names: list[str], status: bool) -> dict:
        # names are validated identifiers (history.schema.json: expect.fields)
        rows = self.cluster.sql(node, f"SHOW GLOBAL {'STATUS' if status else 'VARIABLES'} WHERE Variable_name IN "
                                      f"({', '.join(sql_quote(n) for n in names)})")
        got = {name.lower(): value for name, value in rows}
        return {n: _int(got[n.lower()]) if _int(got[n.lower()]) is not None else got[n.lower()]
                for n in names if n.lower() in got}

    def _shows_status(self, node: str, op: dict) -> dict:
        return self._variables(node, list(op["fields"]), status=True)

    def _shows_variables(self, node: str, op: dict) -> dict:
        return self._variables(node, list(op["fields"]), status=False)

    def _shows_binary_logs(self, node: str, op: dict) -> list[str]:
        return self._binlog_files(node)

    def _shows_binlog_events(self, node: str, op: dict) -> list[dict] | None:
        files = self._binlog_files(node)
        wanted = F.binlog_number(op["in"]) if "in" in op else None
        name = next((f for f in files if wanted is None or F.binlog_number(f) == wanted), None)
        if name is None:
            return None
        cols, rows = self.cluster.query(node, f"SHOW BINLOG EVENTS IN {sql_quote(name)}")
        shown = [dict(zip(cols, r)) for r in rows]
        return F.after_header([{"Event_type": r["Event_type"], "Info": r["Info"] or ""} for r in shown])

    def _shows_result(self, node: str, op: dict) -> dict | None:
        with self._lock:
            last = next((o for _, _, o in reversed(self.obs) if o["kind"] in ("stmt", "commit") and o["node"] == node), None)
        return None if last is None else {k: last.get(k) for k in ("errno", "warning", "message")}

    def _shows_rows(self, node: str, op: dict) -> list[str]:
        return sorted(self.trx_names[k] for k, n in self._present(node).items() for _ in range(n) if k < len(self.trx_names))

    def _statement(self, op: dict) -> None:
        node, kind = op["node"], op["op"]
        c = self.cluster
        stmt = admin_statement(op, self.epoch_us)
        fields = {k: v for k, v in op.items() if k not in ("at", "op", "node")}
        purge = kind == "purge_binary_logs"
        start = self.now()
        addressed = self._addressed(op)
        with self._node_locks[node]:  # never while a sample of the node is taken: each sees it before or after
            listed = self._keep_binlogs(node) if purge else []
            befores = {k: self._slave_status(k) for k in addressed} if kind in PURGES_RELAY_LOGS | ALL_SLAVES else {}
            for link in self._relay_links(node):
                self._read_link(link, settled=befores.get(link, {}).get("Slave_IO_Running") == "No")
            try:
                # The server's clock around it: the client's start-up and exit are not the statement's.
                results = c.results(node, f"SELECT {CLOCK}; {stmt}; SHOW WARNINGS; SELECT {CLOCK}")
                start, t = self._instant(results[0][1][0][0]), self._instant(results[-1][1][0][0])
                errno, message = None, ""
                warns = results[-2][1]
                warning = _int(warns[0][1]) if warns else None
                if warns:
                    message = warns[0][2] or ""
            except SqlError as e:  # the session ends at the error: the client's clock
                errno, message, warning = e.errno, e.message, None
                t = self.now()
            if purge:  # what it removed, whatever it answered
                remaining = self._binlog_files(node)
                fields.update(purged=[f for f in listed if f not in remaining], remaining=remaining)
            if kind == "change_master" and "delay_sql" in op:
                # What the server made of the token, read back rather than parsed here: MariaDB takes
                # 1.5 as 1 and 1e3 as 1 (ulong_num reads DECIMAL_NUM and FLOAT_NUM with my_strtoll10,
                # up to the first non-digit; measured on 10.11).
                st = self._slave_status(addressed[0]) if errno is None else {}
                fields["delay"] = _int(st.get("SQL_Delay")) if st else None
        self.emit("stmt", node, t, op=kind, errno=errno, warning=warning, message=message, duration_us=max(0, t - start),
                  **fields)
        for link in addressed:
            self._stopped_or_started(op, link, t, errno, warning, befores.get(link, {}))
        if errno is not None:
            self.emit("error", node, t, errno=errno, message=message)
        elif kind in ("start_slave", "start_all_slaves") and op.get("thread") in (None, "sql"):
            self._workers(node, t)
        if node not in self._busy:
            # What it changed (or, refused, left as it was), before anything else can change it again.
            self._poll(node, force=True)

    def _addressed(self, op: dict) -> list[Link]:
        """The channels a statement addresses: its named connection, every connection of the replica
        for START/STOP ALL SLAVES (Master_info_index::start_all_slaves, stop_all_slaves in
        sql/rpl_mi.cc), else the default connection (a replica's one unnamed channel; on a replica
        whose connections are all named, the default Master_info no channel has)."""
        if op["op"] in ALL_SLAVES:
            return links_of(self.sources, op["node"])
        return [(op["node"], op.get("connection") or None)]

    def _stopped_or_started(self, op: dict, link: Link, t: int, errno: int | None, warning: int | None, before: dict) -> None:
        """What a STOP/START SLAVE did to one channel's threads, as its observations. START/STOP ALL
        SLAVES act on each connection as START/STOP SLAVE 'name' would: those not both running start
        (each by start_slave, so a GTID start purges its relay logs), those with a running thread stop."""
        node, kind, tag = link[0], op["op"], MS.tagged(link[1])
        all_slaves = kind in ALL_SLAVES
        if errno is None and op.get("thread") in (None, "sql") and (
                (kind == "stop_slave" and warning is None)
                or (kind == "stop_all_slaves" and before.get("Slave_SQL_Running") == "Yes")):
            self._until.discard(link)
            self.emit("sql_stop", node, t, reason="stop", **tag)
        starts = kind == "start_slave" or (kind == "start_all_slaves" and not (
            before.get("Slave_IO_Running") in ("Yes", "Connecting") and before.get("Slave_SQL_Running") == "Yes"))
        if errno is not None or not starts:
            return
        if op.get("thread") in (None, "io"):
            self._io_error.pop(link, None)  # a new IO thread: its failure is a new error, even the same one
        if _gtid_start_purges(before):  # both were stopped: it started one at least (no ER_SLAVE_WAS_RUNNING)
            self._relay_purged(link, t, before)
        if op.get("thread") in (None, "sql") and (not all_slaves or before.get("Slave_SQL_Running") != "Yes"):
            self._sql_started.add(link)
        if op.get("thread") in (None, "sql") and (warning is None or all_slaves):
            # START SLAVE sets the condition for the thread it starts, or clears it (start_slave, sql/sql_repl.cc).
            (self._until.add if op.get("until") else self._until.discard)(link)

    def _workers(self, node: str, t: int) -> None:
        """The parallel applier the SQL thread started with (read back, as model/parallel.py reads
        it): a `parallel` observation when it runs workers, or ran them at an earlier start."""
        _, rows = self.cluster.query(node, "SELECT @@GLOBAL.slave_parallel_threads, @@GLOBAL.slave_parallel_mode")
        chosen = PA.settings({PA.THREADS: _int(rows[0][0]) or 0, PA.MODE: rows[0][1]}, True)
        if chosen is None and node not in self._with_workers:
            return
        self._with_workers.add(node)
        self.emit("parallel", node, t, **(chosen.as_fields() if chosen is not None else {"workers": 0}))

    def _failover(self, op: dict) -> None:
        """Failover by GTID, the model's steps on the server: the replica stops, applies its relay
        log without delay (STOP SLAVE, MASTER_DELAY = 0 at its relay log place, START SLAVE
        SQL_THREAD, until it executed all it read), is promoted (RESET SLAVE ALL, read_only off), and
        the old source's other replicas are repointed to it (CHANGE MASTER TO ... MASTER_USE_GTID =
        slave_pos)."""
        node, c = op["node"], self.cluster
        old = self.sources.get((node, None))
        if old is None:
            self.emit("error", node, op="failover", errno=F.ER_BAD_SLAVE, message="not a replica")
            return
        if op.get("elect") and (node := self._elect(old)) is None:
            self.emit("error", op["node"], op="failover", errno=F.ER_BAD_SLAVE, message=f"no running replica of {old} to elect")
            return
        self.emit("failover", node, old=old)
        self._statement({"at": op["at"], "node": node, "op": "stop_slave"})
        # MASTER_DELAY = 0 at the SQL thread's relay log place: a bare one would purge the relay logs
        # with both threads stopped, and what they held unapplied would be lost with the old source.
        st = c.show_slave_status(node)
        place = {"relay_log_file": st["Relay_Log_File"], "relay_log_pos": int(st["Relay_Log_Pos"])}
        for step in ({"op": "change_master", "delay": 0, **place}, {"op": "start_slave", "thread": "sql"}):
            self._statement({"at": op["at"], "node": node, **step})
        self._applied_relay_log(node)
        with self._node_locks[node]:
            self._read_relay(node)
            c.promote(node)
        self._until.discard((node, None))
        self.emit("sql_stop", node, reason="promotion")
        del self.sources[(node, None)]
        for link in [k for k, src in self.sources.items() if src == old]:
            r = link[0]  # unnamed: check_supported refuses failover in a topology with named connections
            self.repointed |= link in self.proxies
            if c.is_running(r):
                st = c.show_slave_status(r)
                with self._node_locks[r]:  # "Connecting" (to the dead source) is a running IO thread
                    c.repoint(r, node, io=st.get("Slave_IO_Running") != "No", sql=st.get("Slave_SQL_Running") == "Yes")
                self._io_error.pop(link, None)
            self.sources[link] = node
        self.emit("promoted", node, old=old)
        self._poll(node, force=True)

    def _elect(self, old: str) -> str | None:
        """The most advanced running replica of `old` by SHOW MASTER STATUS (binlog file, position),
        the first in topology order on a tie, as the models elect."""
        c, best = self.cluster, None
        for r in [r for (r, _), src in self.sources.items() if src == old and c.is_running(r)]:
            [[f, pos, *_]] = c.sql(r, "SHOW MASTER STATUS")
            key = (int(f.rsplit(".", 1)[1]), int(pos))
            if best is None or key > best[0]:
                best = (key, r)
        return best[1] if best else None

    def _applied_relay_log(self, node: str) -> None:
        """Until the SQL thread executed everything the IO thread read (or it stopped, or quiet_s)."""
        deadline = time.monotonic() + self.quiet_s
        while time.monotonic() < deadline:
            st = self.cluster.show_slave_status(node)
            if st.get("Slave_SQL_Running") != "Yes" or _executed_all_read(st):
                return
            time.sleep(0.02)

    # -- polling ---------------------------------------------------------------------------------

    def _poll_loop(self) -> None:
        while not self._stop.is_set():
            began = time.monotonic()
            for n in self.node_ids:
                if n not in self._busy:
                    self._poll(n)
            rest = self.poll_us / US - (time.monotonic() - began)
            if rest > 0:
                self._stop.wait(rest)

    def _poll_all(self) -> None:
        for n in self.node_ids:
            if self.cluster.is_running(n):
                self._poll(n, force=True)

    def _present(self, node: str) -> dict[int, int]:
        c = self.cluster
        results = c.results(node, POLL)
        return self._counts(results)

    def _counts(self, results: list) -> dict[int, int]:
        """How many times each transaction's row (or table, for DDL) is present, from a POLL."""
        counts: dict[int, int] = {}
        for _, rows in results[1:3]:
            for k, n in rows:
                counts[int(k)] = counts.get(int(k), 0) + int(n)
        for (name,) in results[3][1]:
            if re.fullmatch(r"d\d+", name):
                counts[int(name[1:])] = counts.get(int(name[1:]), 0) + 1
        return counts

    def _poll(self, node: str, force: bool = False) -> None:
        """One sample of the node, stamped with the server's own clock: the rows and SHOW SLAVE
        STATUS at the instant its first statement began, the status variables and gtid positions
        at the instant its last one did. So everything before a sample in the trace had happened
        when it looked, and the gap between two samples bounds when what changed did."""
        c = self.cluster
        try:
            if not c.is_running(node):
                return
            with self._node_locks[node]:
                self._read_relay(node)  # before the sample: what it finds applied was relayed by then
                results = c.results(node, POLL_ALL if node in self.named else POLL, timeout=10)
        except HarnessError:
            return  # down or going down: nothing to see
        if len(results) != 10:
            return
        t, t_vars = self._instant(results[0][1][0][0]), self._instant(results[9][1][0][3])
        prev = self._last_poll.get(node)
        if prev is not None:
            self.max_gap = max(self.max_gap, t_vars - prev)
        self._last_poll[node] = t
        counts = self._counts(results)
        if node in self.named:
            self._poll_connections(node, t, t_vars, results, counts, force)
        else:
            status_cols, status_rows = results[5]
            status = dict(zip(status_cols, status_rows[0])) if status_rows else None
            before, after = results[4][1], results[6][1]
            again = dict(zip(results[7][0], results[7][1][0])) if results[7][1] else None
            steady = status is None or (again is not None and all(
                status.get(k) == again.get(k) for k in ("Slave_SQL_Running_State", "Relay_Log_File", "Relay_Log_Pos")))
            proc = before if before == after and steady else None  # changed while sampled: no state to compare
            pos = (status or {}).get("Relay_Log_File") or "", _int((status or {}).get("Relay_Log_Pos")) or 0
            for k in sorted(counts):
                if counts[k] > 0 and (node, k) not in self.seen:
                    self.seen[(node, k)] = t
                    self.seen_pos[(node, k)] = pos
                    self.seen_src[(node, k)] = self.sources.get((node, None))
            if status is not None:
                self._status((node, None), t, status, proc, force, until=t_vars)
        variables: dict[str, Any] = {}
        for name, value in results[8][1]:
            variables[name] = _int(value) if _int(value) is not None else value
        variables.update(zip(GTID_VARS, results[9][1][0][:3]))
        self.binlog_pos.setdefault(node, []).append((t_vars, _parse_pos(variables.get("gtid_binlog_pos") or "")))
        if force or variables != self._last_server_status.get(node):
            self._last_server_status[node] = variables
            self.emit("server_status", node, t_vars, variables=variables)
        self._tail_log(node, t_vars)

    def _poll_connections(self, node: str, t: int, t_vars: int, results: list, counts: dict[int, int], force: bool) -> None:
        """A multi-source replica's part of a poll: SHOW ALL SLAVES STATUS, a `status` sample per
        connection (its row, by Connection_name), and when each row first showed, and each further
        copy of it (a GTID two connections applied: seen_again)."""
        rows = [dict(zip(results[5][0], r)) for r in results[5][1]]
        for k in sorted(counts):
            if counts[k] > 0 and (node, k) not in self.seen:
                self.seen[(node, k)] = t
                self.seen_pos[(node, k)] = ("", 0)
                self.seen_src[(node, k)] = ""  # by a connection: placed by _emit_connection_applies
            if counts[k] > 1 + len(self.seen_again.get((node, k), [])):
                self.seen_again.setdefault((node, k), []).extend([t] * (counts[k] - 1 - len(self.seen_again.get((node, k), []))))
        for row in rows:
            link = (node, row.get("Connection_name") or None)
            if link not in self.sources:
                continue  # the default connection, configured by no History op
            self._status(link, t, row, None, force, until=t_vars)  # no processlist state to compare (POLL_ALL)

    def _slave_status(self, link: Link) -> dict:
        try:
            return self.cluster.show_slave_status(*link)
        except HarnessError:
            return {}

    def _relay_purged(self, link: Link, t: int, before: dict) -> None:
        """A START SLAVE threw the relay logs away (_gtid_start_purges): the model's observation of
        it, with what the SQL thread had not passed (the events relayed at or after its place then,
        the latest relay log's: names start again at each purge). What lay there outside groups
        was discarded, not executed: no later sample passes it."""
        place = (os.path.basename(before.get("Relay_Log_File") or ""), _int(before.get("Relay_Log_Pos")) or 0)
        relayed = self._relayed.get(link, [])
        dropped = 0
        while dropped < len(relayed) and (relayed[-1 - dropped]["file"], relayed[-1 - dropped]["pos"]) >= place:
            dropped += 1
        self._unapplied.pop(link, None)
        if dropped:  # as the models emit it: only where something unapplied was thrown away
            self.emit("relay_log_recovery", link[0], t, dropped=dropped, reason="gtid", **MS.tagged(link[1]))

    def _relay_links(self, node: str) -> list[Link]:
        """The node's channels whose relay logs are read: its channels now, and one it had before a
        failover promoted it (what its SQL thread applied last was relayed there)."""
        return list(dict.fromkeys([k for k in self.relay_logs if k[0] == node] + links_of(self.sources, node)))

    def _read_relay(self, node: str, settled: bool = False, final: bool = False) -> None:
        for link in self._relay_links(node):
            self._read_link(link, settled, final)

    def _read_link(self, link: Link, settled: bool = False, final: bool = False) -> None:
        """The events written to the channel's relay logs since the last read, as `relay`
        observations stamped when the read ended: each was relayed no later. Grouped and named as
        _read_binlog_file does the binlog's; the transaction names are set with the binlogs'. A
        named connection's relay logs are relay-<name>.NNNNNN with their own index
        (create_logfile_name_with_suffix, sql/rpl_mi.cc), read on their own."""
        node, conn = link
        if link not in self.relay_logs:
            self.relay_logs[link] = RelayLogs(self.binlog_tool, self.cluster.node_dir(node), basename=MS.relay_base(conn),
                                              label=node if conn is None else f"{node} connection {conn!r}")
        began = self.now()
        events = self.relay_logs[link].read(settled=settled, final=final)
        t = self.now()
        # Not whole when the read before began (it reads every whole event up to the end): written since.
        since, self._relay_read_began[link] = self._relay_read_began.get(link, 0), began
        for name, ev in events:
            self._relay_event(link, t, name, ev, since)

    def _relay_event(self, link: Link, t: int, name: str, ev: Event, since: int | None = None) -> None:
        """`since`: when the read before began (None: only the stamp is known)."""
        node = link[0]
        etype = ev.name
        if ev.server_id == self.server_ids[node] and etype in RELAY_FRAMING:
            return
        # The open group's relay observations: a group is closed by its own last event (an XID, a
        # Query COMMIT, a standalone GTID's one event: stream.ends_group), never by what follows, so
        # a copy a cut left partial stays partial. The Rotate, format description and Gtid_list
        # events the IO thread writes at a reconnect fall inside it, and the rest of the group the
        # source sent again after the skip (queue_event, gtid_reconnect_event_skip_count) goes on
        # from there; a new GTID leaves an open copy partial for good.
        group, alone = self._relay_group.get(link, ([], False))
        fields = {"type": F.SHOWN_EVENT_TYPES.get(etype, etype.upper() + "_EVENT"), "trx": None, "idx": 0, "last": False,
                  "gtid": None, "server_id": ev.server_id, "when": ev.when, "ict": None}
        master_file, master_end = self._master_file.get(link, ""), ev.end
        if etype == "Gtid" and (m := GTID_TEXT.match(ev.text)):
            fields["gtid"] = m.group(1)
            group, alone = [], S.standalone(ev.post)
        elif group and etype not in NOT_IN_GROUP:
            fields.update(gtid=group[0]["gtid"], idx=len(group), last=S.ends_group(ev.code, ev.post, alone))
        else:
            if etype == "Incident":
                fields.update(ev.incident())
            elif etype == "Rotate" and (m := ROTATE_TEXT.match(ev.text)):
                # The dump thread's fake Rotate (end_log_pos 0, sql_repl.cc fake_rotate_event) names
                # where the master starts sending; a real one ends the master's file it is in.
                if not ev.end:
                    master_file, master_end = m.group(1), int(m.group(2))
                self._master_file[link] = m.group(1)
        obs = self.emit("relay", node, t, source=self.sources.get(link), **MS.tagged(link[1]), **fields, file=name, pos=ev.pos,
                        master_file=master_file, master_end=master_end, since=t if since is None else min(since, t))
        relayed = self._relayed.setdefault(link, [])
        if etype in PASSED_OUTSIDE_GROUPS and not obs["gtid"]:
            self._unapplied.setdefault(link, []).append(len(relayed))
        relayed.append(obs)
        if obs["gtid"]:
            group.append(obs)
        self._relay_group[link] = ([], False) if obs["last"] else (group, alone)

    def _instant(self, unix_time: str) -> int:
        """A server's CLOCK reading as trace time (same machine, same clock)."""
        return max(0, round((float(unix_time) - self.wall_t0) * US))

    def _status(self, link: Link, t: int, raw: dict, proc: list | None, force: bool, until: int | None = None) -> None:
        """A SHOW SLAVE STATUS sample of a channel (a row of SHOW ALL SLAVES STATUS for a named
        connection, its observations tagged with it), taken between trace times t and `until` (the
        poll's clock readings around it): SQL_Remaining_Delay counts from a whole second of the
        server's clock in that window."""
        node, tag = link[0], MS.tagged(link[1])
        s: dict[str, Any] = {k: raw.get(k) or "" for k in STATUS_STRINGS}
        for k in STATUS_INTS:
            s[k] = _int(raw.get(k)) or 0
        for k in STATUS_NULLABLE_INTS:
            s[k] = _int(raw.get(k))
        if proc is not None:
            s["processlist_state"] = proc[0][0] if proc and s["Slave_SQL_Running"] == "Yes" else None
        io_error = (_int(raw.get("Last_IO_Errno")) or 0, raw.get("Last_IO_Error") or "")
        if s["Slave_IO_Running"] != "No":
            self._io_error.pop(link, None)  # running (or connecting): a later stop is a new error
        elif io_error[0] and self._io_error.get(link) != io_error:
            # Stopped by an error (not retrying a connection: that is "Connecting"), once per stop.
            self._io_error[link] = io_error
            self.emit("error", node, t, thread="io", errno=io_error[0], message=io_error[1])
        last = self._last_status.get(link)
        # The SQL thread ran since the last sample: it showed running then, or a START SLAVE started
        # it (and it may have stopped again before any sample saw it run, as at an incident).
        ran = last is None or last["Slave_SQL_Running"] == "Yes" or link in self._sql_started
        self._sql_started.discard(link)
        if s["Slave_SQL_Running"] == "Yes" or ran:
            # Before a stop it shows: what the thread passed, it passed before stopping. A stopped
            # thread passes nothing (a relay log of the same name refetched meanwhile is not behind it).
            self._passed(link, t, s["Relay_Log_File"], s["Relay_Log_Pos"])
        if ran and s["Slave_SQL_Running"] == "No" and s["Last_SQL_Errno"]:
            self._until.discard(link)
            self.emit("sql_stop", node, t, reason="error", **tag, errno=s["Last_SQL_Errno"], message=s["Last_SQL_Error"])
            self.emit("error", node, t, errno=s["Last_SQL_Errno"], message=s["Last_SQL_Error"])
        elif ran and s["Slave_SQL_Running"] == "No" and link in self._until:
            # Stopped with no error and no STOP SLAVE: the UNTIL condition stopped it.
            self._until.discard(link)
            self.emit("sql_stop", node, t, reason="until", **tag)
        every = self.history["header"].get("sample_every_us", US)
        if force or last is None or any(last.get(k) != s[k] for k in s) or t - last["_t"] >= every:
            self._last_status[link] = {**s, "_t": t}
            self.emit("status", node, t, **tag, **s, **({} if until is None else {"sampled_until": until}))

    def _passed(self, link: Link, t: int, relay_file: str, relay_pos: int) -> None:
        """The events in no group (the master's fake Rotate, FDE, Gtid_list) that the SQL thread has
        passed by this sample: those relayed before the relay log's place it shows (the latest
        relay log of that name: a purge starts the names again). Executed as the model executes them;
        an apply observation each, as a group's gets at the poll that finds its row."""
        relayed, pending = self._relayed.get(link, []), self._unapplied.get(link, [])
        if not pending:
            return  # nothing to place: no walk of the relay log at every sample
        here = next((i for i in range(len(relayed) - 1, -1, -1)
                     if relayed[i]["file"] == relay_file and relayed[i]["pos"] < relay_pos), None)
        while pending and here is not None and pending[0] <= here:
            r = relayed[pending.pop(0)]
            self.emit("apply", link[0], t, source=r["source"], **MS.tagged(link[1]), **{k: r[k] for k in ("type", "trx", "idx", "last", "gtid", "server_id",
                                                              "when", "ict")},
                      read=None, begin=None, relay_file=r["file"], relay_pos=r["pos"])

    def _tail_log(self, node: str, t: int) -> None:
        path = self.cluster.error_log(node)
        try:
            with open(path, "rb") as f:
                f.seek(self._log_offsets.get(node, 0))
                data = f.read()
        except OSError:
            return
        end = data.rfind(b"\n") + 1
        self._log_offsets[node] = self._log_offsets.get(node, 0) + end
        for line in data[:end].decode("utf-8", "replace").splitlines():
            m = LOG_LINE.match(line)
            if not m:
                continue
            extra = {}
            if (d := DUMP_LOG.search(m.group(2))) and int(d.group(1)) in self.by_server_id:
                extra["replica"] = self.by_server_id[int(d.group(1))]
            self.emit("log", node, t, level=m.group(1), message=m.group(2), **extra)

    def _wait_quiet(self) -> None:
        """Until every running replica has executed what its running source has, or quiet_s."""
        deadline = time.monotonic() + self.quiet_s
        c = self.cluster
        while time.monotonic() < deadline:
            behind = False
            for (replica, conn), source in self.sources.items():
                if not (c.is_running(replica) and c.is_running(source)):
                    continue
                try:
                    [[have]] = c.sql(replica, "SELECT @@gtid_slave_pos")
                    [[want]] = c.sql(source, "SELECT @@gtid_binlog_pos")
                    st = c.show_slave_status(replica, conn)
                except HarnessError:
                    continue
                if st.get("Slave_SQL_Running") != "Yes":
                    continue  # stopped (an error, STOP SLAVE): it will not catch up by itself
                if st.get("Slave_IO_Running") == "No" and _executed_all_read(st):
                    continue  # reads nothing more (an IO error, STOP SLAVE IO_THREAD) and applied what it read
                if not _covers(have or "", want or ""):
                    behind = True
            if not behind:
                return
            time.sleep(0.1)

    # -- after the run ---------------------------------------------------------------------------

    def _collect_binlogs(self) -> None:
        """Every running node's binlog. When each event was written is bounded by the samples:
        after the last poll whose gtid_binlog_pos lacked it, by the first that had it. Each group
        is placed at that first poll, earlier if a replica already had its copy or its client's
        COMMIT returned first, and never after a later event of the same binlog."""
        c = self.cluster
        logs: dict[str, list[dict]] = {}
        for node in self.node_ids:
            if c.is_running(node):
                logs[node] = self._read_binlog(node)
        for events in logs.values():
            for ev in events:
                k = ev.pop("_k", None)
                if (k is not None and k < len(self.trx_names) and k not in self.gtid_of and ev["gtid"]
                        and self.returned.get(k, (0, CR_SERVER_LOST))[1] is not None
                        and self.by_server_id.get(ev["server_id"]) == self.origin_of[k]):
                    # Its COMMIT never returned (the server died under it), or its statement failed after
                    # changing a MyISAM table (binlogged all the same): its origin's binlog has its GTID.
                    self.gtid_of[k] = ev["gtid"]
                    if k in self.commits:
                        self.commits[k]["gtid"] = ev["gtid"]
        trx_of_gtid = {g: self.trx_names[k] for k, g in self.gtid_of.items() if g}
        k_of_gtid = {g: k for k, g in self.gtid_of.items() if g}
        for events in logs.values():
            for ev in events:
                ev["trx"] = trx_of_gtid.get(ev["gtid"]) if ev["gtid"] else None
        with self._lock:
            for _, _, o in self.obs:
                if o["kind"] == "relay" and o["gtid"]:
                    o["trx"] = trx_of_gtid.get(o["gtid"])
        at: dict[tuple[str, str], int] = {}
        for node in sorted(logs, key=self._depth, reverse=True):  # replicas first: a source wrote no later
            replicas = list(dict.fromkeys(r for (r, _), src in self.sources.items() if src == node and r in logs))
            for ev in logs[node]:
                if ev["type"] != "GTID_LOG_EVENT" or (node, ev["gtid"]) in at:
                    continue
                g = ev["gtid"]
                # Visible on the node (a poll's or a read's row) means committed, so binlogged: the
                # binlog write comes before the engine commit (MariaDB's two-phase commit, log.cc).
                k = k_of_gtid.get(g)
                bounds = [self._logged_by(node, g), self.seen.get((node, k)), self.read_seen.get((node, k))]
                bounds += [at.get((r, g)) for r in replicas]
                if self.by_server_id.get(ev["server_id"]) == node and k in self.returned:
                    bounds.append(self.returned[k][0])
                if self.by_server_id.get(ev["server_id"]) == node and k in self.commits:
                    # Still in its binlog after the node went down: written before it did.
                    began, seen = self.commits[k]["start"], bounds[0]
                    bounds.append(next((d for d in self.downs.get(node, []) if began < d and (seen is None or d < seen)), None))
                if any(x is not None for x in bounds):
                    at[(node, g)] = min(x for x in bounds if x is not None)
        for node, events in logs.items():
            failed = sorted(t for k, (t, errno) in self.returned.items()  # where incidents come from, in order
                            if errno == ER_STMT_CACHE_FULL and self.origin_of[k] == node)
            times: list[int | None] = []
            for ev in events:
                if ev["type"] == "INCIDENT_EVENT":  # written by the failing statement before it returned
                    times.append(failed.pop(0) if failed else None)
                elif ev["idx"] == 0:
                    times.append(at.get((node, ev["gtid"])) if ev["gtid"] else None)
                else:
                    times.append(times[-1])
            later = None
            for i in range(len(times) - 1, -1, -1):  # no later than what followed it
                if times[i] is not None and (later is None or times[i] < later):
                    later = times[i]
                times[i] = later
            last = 0
            for t, ev in zip(times, events):
                last = last if t is None else t
                self.emit("binlog", node, last, **ev)
        self._emit_applies()
        self._emit_skips()

    def _binlog_files(self, node: str) -> list[str]:
        return [r[0] for r in self.cluster.sql(node, "SHOW BINARY LOGS")]

    def _keep_binlogs(self, node: str) -> list[str]:
        """Before a purge: the events of every closed binlog file (the active one is never purged),
        so the trace still shows what was written. Returns the files listed."""
        files = self._binlog_files(node)
        for f in files[:-1]:
            if (node, f) not in self._binlogs_kept and LOG_FILE.match(f):
                self._binlogs_kept[(node, f)] = self._read_binlog_file(node, f)
        return files

    def _read_binlog(self, node: str) -> list[dict]:
        """Every binlog file the node wrote, in order: those a purge removed as read before it."""
        files = self._binlog_files(node)
        purged = [f for n, f in self._binlogs_kept if n == node and f not in files]
        events: list[dict] = []
        for f in purged + [f for f in files if LOG_FILE.match(f)]:
            kept = self._binlogs_kept.get((node, f))
            events += self._read_binlog_file(node, f) if kept is None else kept
        return events

    def _read_binlog_file(self, node: str, f: str) -> list[dict]:
        """SHOW BINLOG EVENTS of one binlog file, grouped into transactions. An event whose text
        (Annotate_rows, a statement) is one the runner built carries its transaction number as _k."""
        c = self.cluster
        events: list[dict] = []
        rows = c.sql(node, f"SHOW BINLOG EVENTS IN {sql_quote(f)}")
        path = os.path.join(c.node_dir(node), f)
        whens = _header_timestamps(path, [int(r[1]) for r in rows])
        group: list[dict] = []
        for log, pos, etype, sid, end, info in rows:
            ev = {"type": F.SHOWN_EVENT_TYPES.get(etype, etype.upper() + "_EVENT"), "trx": None, "idx": 0, "last": False,
                  "gtid": None, "server_id": int(sid), "when": whens.get(int(pos), 0), "ict": None,
                  "file": log, "pos": int(pos), "end": int(end)}
            if etype == "Gtid":
                _close_group(group)
                # 'BEGIN GTID 0-1-2' or 'GTID 0-1-2', with more after it in a group commit (not the last word)
                gtid = GTID_IN_INFO.search(info).group(0)
                group = [ev]
                ev.update(gtid=gtid)
            elif group and etype not in NOT_IN_GROUP:
                ev.update(gtid=group[0]["gtid"], idx=len(group))
                if etype in ("Annotate_rows", "Query") and (m := OWN_TEXT.search(info or "")):
                    ev["_k"] = int(m.group(1) or m.group(2))
                group.append(ev)
            else:
                _close_group(group)
                group = []
                if etype == "Incident":
                    ev.update(_incident(path, int(pos)))
            events.append(ev)
        _close_group(group)
        return events

    def _depth(self, node: str) -> int:
        """Hops from the top of its chain (a source's binlog is read before its replicas')."""
        depth, seen = 0, {node}
        while (node := self._source_of(node)) is not None and node not in seen:
            depth, seen = depth + 1, seen | {node}
        return depth

    def _source_of(self, node: str) -> str | None:
        """The node's source; of a multi-source replica, the source of its deepest chain."""
        sources = [src for (r, _), src in self.sources.items() if r == node]
        return max(sources, key=self._depth) if len(sources) > 1 else (sources or [None])[0]

    def _logged_by(self, node: str, gtid: str) -> int | None:
        domain, _, seq = F.parse_gtid(gtid)
        return next((t for t, pos in self.binlog_pos.get(node, []) if pos.get(domain, -1) >= seq), None)

    def _emit_applies(self) -> None:
        """A replica's execution of each transaction, as seen: at the first poll that found its row,
        with the SQL thread's relay-log position at that poll. Events from the origin's binlog."""
        events: dict[str, list[dict]] = {}
        # (replica, connection, gtid, idx) -> its relay observations; (replica, connection) -> when a
        # START SLAVE threw its relay logs away
        relayed: dict[tuple[str, str | None, str, int], list[dict]] = {}
        purged: dict[Link, list[int]] = {}
        samples: dict[Link, list[dict]] = {}  # a named connection's status samples
        with self._lock:
            for _, _, o in sorted(self.obs, key=lambda x: x[:2]):
                if o["kind"] == "binlog" and o.get("gtid") and self.by_server_id.get(o["server_id"]) == o["node"]:
                    events.setdefault(o["gtid"], []).append(o)
                elif o["kind"] == "relay" and o["gtid"]:
                    relayed.setdefault((o["node"], o.get("connection"), o["gtid"], o["idx"]), []).append(o)
                elif o["kind"] == "relay_log_recovery":
                    purged.setdefault((o["node"], o.get("connection")), []).append(o["t"])
                elif o["kind"] == "status" and "connection" in o:
                    samples.setdefault((o["node"], o["connection"]), []).append(o)
        parts = {node: self._rows_by_part(node) for node in {n for n, _ in self.seen}}
        for (node, k), t in sorted(self.seen.items(), key=lambda x: x[1]):
            gtid = self.gtid_of.get(k)
            source = self.seen_src[(node, k)]
            if source is None or gtid is None:
                continue
            relay_file, relay_pos = self.seen_pos[(node, k)]
            self.emit("visible", node, t, trx=self.trx_names[k], gtid=gtid)
            appliers = self._appliers(node, k, t, gtid, relayed) if node in self.named else [((node, None), t)]
            if node in self.named:
                self._duplicate_skips(node, k, gtid, {link for link, _ in appliers}, relayed, samples)
            for link, at in appliers:
                src = self.sources[link] if node in self.named else source  # the unnamed one's then (failover changes it)
                for b in _committed(events.get(gtid, []), parts[node].get(k, {})):
                    # The event's own place in the relay log, where it was read: its latest copy relayed
                    # by then (stamped up to a poll late, so the first one otherwise); else where the
                    # SQL thread was at the sample.
                    copies = relayed.get((node, link[1], gtid, b["idx"]), [])
                    # Not a copy thrown away before the commit: the one fetched again after the purge, read
                    # up to a poll late (inc-cache-overflow on 10.11 at load 8: the first copy was taken).
                    since = max((p for p in purged.get(link, ()) if p <= at), default=None)
                    copies = [c for c in copies if since is None or c["t"] >= since] or copies
                    r = next((c for c in reversed(copies) if c["t"] <= at), copies[0] if copies else None)
                    self.emit("apply", node, at, source=src, **MS.tagged(link[1]), type=b["type"], trx=b["trx"], idx=b["idx"],
                              last=b["last"], gtid=gtid, server_id=b["server_id"], when=b["when"], ict=None, read=None,
                              begin=None, relay_file=r["file"] if r else relay_file, relay_pos=r["pos"] if r else relay_pos)
        for (node, k), t in self.seen.items():
            if self.seen_src[(node, k)] is None:  # no GTID: committed but never binlogged (an incident's lost events)
                # Visible to others by the time its statement returned, if a poll did not see it earlier
                # (not if the server died under it: no answer, and what was recovered shows later).
                back, errno = self.returned.get(k, (t, None))
                t = t if errno == CR_SERVER_LOST else min(t, back)
                self.emit("visible", node, t, trx=self.trx_names[k], gtid=self.gtid_of.get(k))

    def _appliers(self, node: str, k: int, t: int, gtid: str, relayed: dict) -> list[tuple[Link, int]]:
        """Which connection of a multi-source replica applied a transaction, and when: (link, first
        poll that showed the row), and a further one for each further copy of its row (seen_again).
        Polling sees the row, not the connection that committed it; it is the connection that had the
        group due first (relayed, and past its MASTER_DELAY after the event's timestamp: a connection
        applies a group once it is due, rpl_slave_state::check_duplicate_gtid letting the first one
        own the domain, sql/rpl_gtid.cc), and a second copy the next such connection's."""
        due = []
        for link in links_of(self.sources, node):
            copies = relayed.get((node, link[1], gtid, 0), [])
            if copies:
                first = copies[0]
                delay_due = first["when"] * US - self.epoch_us + self.delays.get(link, 0) * US
                due.append((max(first["t"], delay_due), first["t"], link))
        order = [link for *_, link in sorted(due)] or links_of(self.sources, node)[:1]
        times = [t] + self.seen_again.get((node, k), [])
        return [(order[min(i, len(order) - 1)], at) for i, at in enumerate(times)]

    def _duplicate_skips(self, node: str, k: int, gtid: str, appliers: set[Link], relayed: dict, samples: dict) -> None:
        """With gtid_ignore_duplicates, a connection that relayed a group another one applied skipped
        it (rpl_slave_state::check_duplicate_gtid, sql/rpl_gtid.cc): a `skip` at its first sample whose
        SQL thread is past the group in the source's binlog (Relay_Master_Log_File,
        Exec_Master_Log_Pos: a purge renames relay logs, not binlogs), with its relay-log places, as
        the model's skip. Not seen past it (stopped, or the run ended): no skip."""
        if not (self.history["header"]["topology"]["nodes"][self.node_ids.index(node)].get("variables") or {}).get(
                MS.IGNORE_DUPLICATES):
            return
        for link in links_of(self.sources, node):
            group = []
            while copies := relayed.get((node, link[1], gtid, len(group))):
                group.append(copies[-1])  # the copy it skipped: fetched again after a purge, the last
            if link in appliers or not group:
                continue
            end = (group[-1]["master_file"], group[-1]["master_end"])
            past = next((s for s in samples.get(link, []) if s["t"] >= group[-1]["t"]
                         and (s["Relay_Master_Log_File"], s["Exec_Master_Log_Pos"]) >= end), None)
            if past is not None:
                self.emit("skip", node, past["t"], trx=self.trx_names[k], gtid=gtid, reason=MS.SKIP_REASON,
                          events=[[r["file"], r["pos"]] for r in group], **MS.tagged(link[1]))

    def _rows_by_part(self, node: str) -> dict[int, dict[int, int]]:
        """k -> statement (the row's part) -> rows on the node at the end; {} when it cannot be read."""
        try:
            rows = self.cluster.sql(node, "SELECT k, part, COUNT(*) FROM rc.r GROUP BY k, part UNION ALL "
                                          "SELECT k, part, COUNT(*) FROM rc.m GROUP BY k, part")
        except (HarnessError, SqlError):
            return {}
        out: dict[int, dict[int, int]] = {}
        for k, part, n in rows:
            out.setdefault(int(k), {})[int(part)] = out.get(int(k), {}).get(int(part), 0) + int(n)
        return out

    def _emit_skips(self) -> None:
        """The events SQL_SLAVE_SKIP_COUNTER passed over, at the note that says so: the relay
        observations from where the skipping began up to the new position, in the relay log the
        note names. A purge starts the relay logs' names again: walking back from the new position,
        places only decrease within one relay log's life, so the walk ends where they do not."""
        with self._lock:
            obs = [o for _, _, o in sorted(self.obs, key=lambda x: x[:2])]
        # SQL_SLAVE_SKIP_COUNTER of a replica's one unnamed connection (a named one's is @@default_master_connection's)
        for note in [o for o in obs if o["kind"] == "log" and (o["node"], None) in self.relay_logs]:
            if not (m := SKIP_LOG.match(note["message"])):
                continue
            node = note["node"]
            begin = (os.path.basename(m.group(1)), int(m.group(2)))
            end = (os.path.basename(m.group(3)), int(m.group(4)))
            # What was relayed before the relay logs were next purged: after that, names start again.
            # (Not "by the read after the note": the note's time is the error log's whole second, and
            # under load the events it passed over were read at later polls: none were found.)
            # A purge that began after the note was read; the START SLAVE before the skip may return later.
            purge = min((o["t"] - o.get("duration_us", 0) for o in obs if o["kind"] == "stmt" and o["node"] == node
                         and o.get("op") in PURGES_RELAY_LOGS and o.get("errno") is None
                         and o["t"] - o.get("duration_us", 0) > note["t"]), default=None)
            relays = [o for o in obs if o["kind"] == "relay" and o["node"] == node and "connection" not in o
                      and (purge is None or o["t"] < purge)]
            skipped: list[dict] = []
            for r in reversed(relays):
                place = (r["file"], r["pos"])
                if not skipped and place >= end:
                    continue  # after the new position (relayed later, or a purged file of that name)
                if place < begin or (skipped and place >= (skipped[-1]["file"], skipped[-1]["pos"])):
                    break
                skipped.append(r)
            for r in reversed(skipped):
                if r["type"] not in NOT_SKIPPED:
                    self.emit("skip", node, note["t"], trx=r["trx"], gtid=r["gtid"], idx=r["idx"], type=r["type"],
                              reason="sql_slave_skip_counter", relay_file=r["file"], relay_pos=r["pos"])

    def _emit_data(self, t: int) -> None:
        c = self.cluster
        for node in self.node_ids:
            if not c.is_running(node):
                continue
            counts = self._present(node)
            self.emit("data", node, t, counts={name: counts.get(k, 0) for k, name in enumerate(self.trx_names)})

    def _header(self, version: str) -> dict:
        topo = copy.deepcopy(self.history["header"]["topology"])
        for i, n in enumerate(topo["nodes"]):
            n.setdefault("server_id", i + 1)
            n["delay_rule"] = "wl344"
            n["commit_timestamps"] = False
            n["clock_offset_us"] = 0
        return {"schema": "replcheck.trace/1", "system": f"mariadb:{version}", "history": self.name,
                "epoch_us": self.epoch_us, "resolution_us": max(self.max_gap, self.poll_us), "server_version": version,
                "time_scale": self.scale, "unobserved": self._unobserved(), "topology": topo,
                "notes": self._notes(), **({"slipped": self.slipped} if self.slipped else {})}

    def _relay_gaps(self) -> list[str]:
        return [g for logs in self.relay_logs.values() for g in logs.gaps]

    def _unobserved(self) -> list[str]:
        """Acks are seen when every channel ran through its relay all along (each has one, or none
        does); relay-log writes when every relay log was read whole."""
        return [k for k in UNOBSERVED if (k != "ack" or not self.acks_seen or self.repointed)
                and (k != "relay" or self._relay_gaps())]

    def _notes(self) -> list[str]:
        """How the run differs from the History's ops as the models do them."""
        notes = []
        notes.append("each channel ran through a loopback relay (replcheck.harness.proxy) that passes the IO thread's "
                     "clock query on inside a second, so its whole-second clock_diff_with_master is 0 unless the History "
                     "asks for a late answer (clock_reply)")
        if self.acks_seen:
            notes.append("semi-sync: an ack is observed when the channel's relay passed it on, so the source processed "
                         "it no earlier")
        if self.repointed:
            notes.append("failover: repointed channels bypass the relay, so acks after it are not observed")
        notes += [f"relay not observed: {g}" for g in self._relay_gaps()]
        if self.slipped:
            i, slip = self.slipped[-1]
            notes.append(f"ops started late (a slow statement or a loaded machine): every op from op {self.slipped[0][0]} "
                         f"on was moved to keep its distance from the one before, {slip} µs in all by op {i} (header "
                         f"slipped; the History that ran has these times)")
        return notes + self.notes

    def _ordered(self) -> list[dict]:
        """Time order; within one instant what happened before the samples that saw it."""
        with self._lock:
            return [o for _, _, o in sorted(self.obs, key=lambda x: (x[0], ORDER.get(x[2]["kind"], 3), x[1]))]


# What begins a statement of a group in the binlog: its Annotate_rows (ROW format), its Query
# (STATEMENT format), or a Table_map after a Rows event (ROW format without annotations).
STATEMENT_STARTS = frozenset({"ANNOTATE_ROWS_EVENT", "QUERY_EVENT"})
ROWS_EVENTS = frozenset({"WRITE_ROWS_EVENT", "UPDATE_ROWS_EVENT", "DELETE_ROWS_EVENT"})


def _committed(group: list[dict], parts: dict[int, int]) -> list[dict]:
    """The events of a group a replica committed, as its rows show: statement i of a client
    transaction inserts the row (k, i), so a statement whose row the replica has fewer of than the
    first statement's was committed without it (a partial group, PARTIAL.GROUP.WHOLE): its events
    are left out, the commit (the group's last event) is not. The SQL thread's events are not
    observed one by one; this is what its commit left. No rows (DDL, not read): the whole group."""
    if not parts:
        return group
    statements: list[list[dict]] = []
    for e in group[1:-1]:
        if not statements or e["type"] in STATEMENT_STARTS or (e["type"] == "TABLE_MAP_EVENT"
                                                              and statements[-1][-1]["type"] in ROWS_EVENTS):
            statements.append([e])
        else:
            statements[-1].append(e)
    first = parts.get(0, 0)
    return group[:1] + [e for i, st in enumerate(statements) for e in st if parts.get(i, 0) >= first] + group[-1:]


def _close_group(group: list[dict]) -> None:
    if group:
        group[-1]["last"] = True


def _gtid_start_purges(before: dict) -> bool:
    """Whether START SLAVE purges the relay logs, from SHOW SLAVE STATUS just before it: MariaDB's
    start_slave_threads (sql/slave.cc, called by start_slave in sql/sql_repl.cc with the threads to
    start, whichever they are) runs purge_relay_logs "if we are using GTID and both SQL and IO threads
    are stopped" (using_gtid != USE_GTID_NO, neither slave_running), and the IO thread then fetches
    again from the GTID position (rpl_load_gtid_state). "Connecting" is a running IO thread."""
    return (before.get("Using_Gtid") or "No") != "No" and before.get("Slave_IO_Running") == "No" \
        and before.get("Slave_SQL_Running") == "No"


def _executed_all_read(st: dict) -> bool:
    """SHOW SLAVE STATUS: the SQL thread has executed everything the IO thread read."""
    return ((st.get("Relay_Master_Log_File"), st.get("Exec_Master_Log_Pos"))
            == (st.get("Master_Log_File"), st.get("Read_Master_Log_Pos")))


def _parse_pos(s: str) -> dict[int, int]:
    """A gtid position ('0-1-5,1-2-3', spaces allowed) as domain -> sequence number."""
    return {d: F.parse_gtid(g)[2] for d, g in F.parse_pos("".join(s.split())).items()}


def _covers(have: str, want: str) -> bool:
    """gtid position `have` includes every domain's sequence of `want`."""
    h = _parse_pos(have)
    return all(h.get(d, -1) >= seq for d, seq in _parse_pos(want).items())


def _incident(path: str, pos: int) -> dict:
    """An INCIDENT_EVENT's code and message, from its body: 2-byte code, 1-byte length, message
    (SHOW BINLOG EVENTS shows the code's name but not the message)."""
    try:
        with open(path, "rb") as f:
            f.seek(pos + 19)  # past the common header
            body = f.read(3 + 255)
    except OSError:
        return {}
    if len(body) < 3:
        return {}
    return {"incident": int.from_bytes(body[:2], "little"), "message": body[3:3 + body[2]].decode("utf-8", "replace")}


def _header_timestamps(path: str, positions: list[int]) -> dict[int, int]:
    """The 4-byte little-endian timestamp that starts each event header (SHOW BINLOG EVENTS omits it)."""
    out = {}
    try:
        with open(path, "rb") as f:
            for pos in positions:
                f.seek(pos)
                b = f.read(4)
                if len(b) == 4:
                    out[pos] = int.from_bytes(b, "little")
    except OSError:
        pass
    return out


def _semi_sync(history: dict) -> bool:
    """Semi-sync is in play: configured on a node, set during the run, or acks to lose."""
    return (any(SEMI_SYNC.match(name) and value for n in history["header"]["topology"]["nodes"]
                for name, value in n.get("variables", {}).items())
            or any(op["op"] == "lose_acks" or (op["op"] == "set_global" and SEMI_SYNC.match(op["variable"]))
                   for op in history["ops"]))


def _semi_sync_masters(history: dict) -> set[str]:
    """Nodes whose commits may wait for acks: semi-sync master enabled at start or by SET GLOBAL."""
    return ({n["id"] for n in history["header"]["topology"]["nodes"] if n.get("variables", {}).get(O.SEMI_SYNC_MASTER)}
            | {op["node"] for op in history["ops"] if op["op"] == "set_global" and op["variable"] == O.SEMI_SYNC_MASTER})


def run_history(history: dict, **kwargs) -> tuple[dict, list[dict]]:
    return Runner(history, **kwargs).run()

