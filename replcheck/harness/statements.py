"""The statements the harness sends a server for a History's ops, built from validated fields only:
integers, whitelisted names and enum words reach the SQL text, never a History's own text."""
from __future__ import annotations

import re
from typing import Any

from replcheck.harness.errors import HarnessError
from replcheck.harness.sqlclient import connection_clause, sql_quote
from replcheck.spec.formats import US, binlog_number

# MASTER_DELAY tokens a History may send to exercise the server's parser: numbers and bare words.
DELAY_SQL = re.compile(r"^(-?[0-9]{1,20}(\.[0-9]{1,6})?|[A-Za-z]{1,16})$")


VARIABLE = re.compile(r"^[a-z_]{1,64}$")


WORD = re.compile(r"^[A-Za-z_]{1,32}$")
# a MariaDB GTID position as SET GLOBAL gtid_slave_pos / gtid_binlog_state take it ('' too)
GTID_LIST = re.compile(r"\A(\d{1,10}-\d{1,10}-\d{1,20}(,\d{1,10}-\d{1,10}-\d{1,20})*)?\Z")


LOG_FILE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
USER = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]{0,31}\Z")  # a replication user's name (the History schema's pattern)
USE_GTID = ("slave_pos", "current_pos", "no")  # MASTER_USE_GTID's values (sql_yacc.yy)
SERVER_BINLOG = "bin"  # the base name of the harness's binlogs (Cluster: --log-bin=<dir>/bin)


# The binlog caches of a run that overflows one (a buffer of CACHE_BUFFER_BYTES, at most CACHE_BYTES
# more in a file): OVERFLOW_ROWS rows of 200 bytes overflow them, one row does not, nor the row of
# PAD_BYTES a commit on a full disk writes (disk.py). Measured on 10.11: 160 rows give 1705 and 1197.
CACHE_BUFFER_BYTES, CACHE_BYTES = 4096, 16384
OVERFLOW_ROWS = 160
ER_BAD_NULL, ER_DUP_ENTRY, ER_BAD_TABLE = 1048, 1062, 1051  # the failing statements the harness makes
SENTINEL = -1  # u of the one row of rc.r and rc.m every node has from the start (part -1: no transaction's)


class RunnerError(ValueError):
    """The History cannot run on a real server (an op it cannot do, a value out of range)."""


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


def sql_value(value: Any) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and (WORD.match(value) or GTID_LIST.match(value)):
        return sql_quote(value)
    raise RunnerError(f"value {value!r} is not a boolean, an integer, a bare word or a GTID list")


def admin_statement(op: dict, epoch_us: int | None = None) -> str:
    """The statement for an administrative op, by its builder (BUILDERS). Only validated fields
    reach the text. `epoch_us`: the Unix time (µs) of trace time 0, for a time of the trace in a
    statement (PURGE ... BEFORE)."""
    if op["op"] not in BUILDERS:
        raise RunnerError(f"op {op['op']} is not an administrative statement")
    return BUILDERS[op["op"]](op, epoch_us)


def _named(op: dict) -> str:
    """The op's connection as the statement names it: ` 'a'` after the keyword, '' for the default
    connection (no `connection`, or '')."""
    try:
        return connection_clause(op.get("connection") or None)
    except HarnessError as e:
        raise RunnerError(str(e)) from None


def change_master_statement(op: dict, epoch_us: int | None, connect: tuple[str, ...] = ()) -> str:
    """CHANGE MASTER TO with the op's clauses; `connect`: the MASTER_HOST/PORT and MASTER_USER/PASSWORD
    clauses the cluster makes for the op's master_host and master_user (a loopback port and a
    password: nothing of the History's own text but the user's validated name)."""
    clauses = list(connect)
    if "delay_sql" in op:
        token = str(op["delay_sql"])
        if not DELAY_SQL.match(token):
            raise RunnerError(f"delay_sql {token!r} is not a number or a bare word")
        clauses.append(f"MASTER_DELAY = {token}")
    elif "delay" in op:
        delay = op["delay"]
        if isinstance(delay, bool) or not isinstance(delay, int):
            raise RunnerError(f"MASTER_DELAY {delay!r} is not an integer")
        clauses.append(f"MASTER_DELAY = {delay}")
    if "master_user" in op and not (isinstance(op["master_user"], str) and USER.match(op["master_user"])):
        raise RunnerError(f"master_user {op['master_user']!r} is not a user name")
    if "master_log_file" in op:  # a new place: MariaDB turns Using_Gtid to No unless MASTER_USE_GTID is given
        # The History names a binlog as its test does (master-bin.000001); the server's is named by
        # the same sequence number after its own --log-bin base name (names compare by number).
        clauses.append(_place("MASTER", op["master_log_file"], op.get("master_log_pos"), SERVER_BINLOG))
    if "master_use_gtid" in op:
        if op["master_use_gtid"] not in USE_GTID:
            raise RunnerError(f"master_use_gtid {op['master_use_gtid']!r} is not one of {', '.join(USE_GTID)}")
        clauses.append(f"MASTER_USE_GTID = {op['master_use_gtid']}")
    for key in ("do_domain_ids", "ignore_domain_ids"):  # Domain_id_filter's lists (sql_yacc.yy, master_def)
        if key in op:
            ids = op[key]
            if not isinstance(ids, list) or any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 2**32 for i in ids):
                raise RunnerError(f"{key} {ids!r} is not a list of domain ids")
            clauses.append(f"{key.upper()} = ({', '.join(map(str, ids))})")
    if "relay_log_file" in op:  # the relay logs are kept (sql_repl.cc, change_master: need_relay_log_purge= 0)
        clauses.append(_place("RELAY", op["relay_log_file"], op.get("relay_log_pos")))
    return f"CHANGE MASTER{_named(op)} TO " + ", ".join(clauses)


def _place(kind: str, f: object, p: object, base: str | None = None) -> str:
    """`<kind>_LOG_FILE = 'f', <kind>_LOG_POS = p` of a validated file name and position; with
    `base`, the file of f's sequence number after that base name."""
    if not (isinstance(f, str) and LOG_FILE.match(f)) or isinstance(p, bool) or not isinstance(p, int):
        raise RunnerError(f"{kind.lower()} log place {f!r}, {p!r} is not a file name and an integer position")
    if base is not None:
        f = f"{base}.{binlog_number(f)}"
    return f"{kind}_LOG_FILE = '{f}', {kind}_LOG_POS = {p}"


def _thread(op: dict) -> str:
    return {"io": " IO_THREAD", "sql": " SQL_THREAD", None: ""}[op.get("thread")]


def stop_slave_statement(op: dict, epoch_us: int | None) -> str:
    return "STOP SLAVE" + _named(op) + _thread(op)


def start_slave_statement(op: dict, epoch_us: int | None) -> str:
    until = op.get("until")
    if until and until.get("sql_after_mts_gaps") is True:  # MySQL's; MariaDB answers with a syntax error
        return f"START SLAVE{_named(op)}{_thread(op)} UNTIL SQL_AFTER_MTS_GAPS"
    if until and "master_gtid_pos" in until:  # MariaDB's; MySQL answers with a syntax error
        pos = until["master_gtid_pos"]
        if not isinstance(pos, str) or not GTID_LIST.match(pos):
            raise RunnerError(f"until {until!r} is not a GTID list")
        return f"START SLAVE{_named(op)}{_thread(op)} UNTIL master_gtid_pos = '{pos}'"
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
    domains = op.get("delete_domain_id")
    if domains is None:
        return "FLUSH LOGS"
    if not isinstance(domains, list) or any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in domains):
        raise RunnerError(f"delete_domain_id {domains!r} is not a list of domain ids")
    return f"FLUSH BINARY LOGS DELETE_DOMAIN_ID = ({', '.join(map(str, domains))})"


def flush_relay_logs_statement(op: dict, epoch_us: int | None) -> str:
    return "FLUSH RELAY LOGS"


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


# The database of a node's incident table where its binlog filters keep rc out (rc.x otherwise).
INCIDENT_DB = "rc_incident"
INCIDENT_TABLE = "(k INT NOT NULL, pad VARCHAR(255) NOT NULL DEFAULT '') ENGINE=MyISAM"


def incident_db(variables: dict) -> str:
    """The database of a node's incident table: one its binlog filters let through, or the
    statement's rows never reach the statement cache and no incident is written (seed 11's History
    6: binlog_do_db = other). binlog_do_db / binlog_ignore_db judge a row event by its table's
    database and a statement by the session's default one (MYSQL_BIN_LOG::write and
    check_table_binlog_row_based, sql/log.cc and sql/handler.cc): the statement runs in its table's."""
    def names(name: str) -> list[str]:
        return [d.strip() for d in str(variables.get(name) or "").split(",") if d.strip()]
    do = names("binlog_do_db")
    if do:
        return do[0]
    return "rc" if "rc" not in names("binlog_ignore_db") else INCIDENT_DB


def incident_statement(n: int, db: str = "rc") -> str:
    """A record_incident op's statement, the way MariaDB's own tests make an incident on a release
    build (mysql-test/suite/rpl/include/rpl_binlog_max_cache_size.test): one multi-row statement on a
    non-transactional table that overflows max_binlog_stmt_cache_size (the run sets it small). Its
    changes cannot be binlogged and stay: it fails with ER_STMT_CACHE_FULL and the binlog gets an
    Incident event LOST_EVENTS in their place (sql/log.cc, binlog_cache_data overflow ->
    write_incident). `n`: the statement's number, its rows' k (in `db`.x, which no transaction reads:
    incident_db)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise RunnerError(f"incident number {n!r} is not an integer")
    q = ident(db)
    return f"USE {q}; INSERT INTO {q}.x (k, pad) VALUES " + ", ".join(f"({n}, REPEAT('x', 200))" for _ in range(OVERFLOW_ROWS))


def ident(name: str) -> str:
    """A quoted SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


# A statement logged as a statement (a DDL, a STATEMENT-format transaction) is filtered by the
# session's default database, not its table's: binlog-do/ignore-db (MYSQL_BIN_LOG::write, sql/log.cc:
# binlog_filter->db_ok of the event's db, a Query_log_event's being thd->db) and replicate-do/ignore-db
# on the replica (the Query event's db). Row events are filtered by their table's database
# (check_table_binlog_row_based), as the models filter every transaction. So a transaction's statements
# run in rc, the database its tables are in: with no default database, binlog_ignore_db = rc logged
# a CREATE TABLE rc.d3 that the models keep out (a campaign's History 4 of seed 1, FILTER.BINLOG.DB).
USE_RC = "USE rc"


def trx_statement(op: dict, k: int, origin_port: int, pad_bytes: int = 0) -> str:
    """The client transaction of a trx op, as one session's statements. `k` is the transaction's
    number (its rows carry it); the History's name for it never reaches SQL. `pad_bytes`: its first
    row that long (a binlog write that needs more than a page: harness/disk.py)."""
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
    # the GTID's own parts (MariaDB session variables; gtid_seq_no is reset after the group it numbers)
    for field, name, low, high in (("domain", "gtid_domain_id", 0, 2**32), ("server_id", "server_id", 1, 2**32),
                                   ("gtid_seq_no", "gtid_seq_no", 1, 2**64)):
        value = op.get(field)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value < high:
            raise RunnerError(f"{field} {value!r} is not a {name}")
        head.append(f"SET SESSION {name} = {value}")
    if op.get("ddl") and op.get("error"):  # ER_BAD_TABLE_ERROR before any change (check_supported: no other)
        return "; ".join(head + [USE_RC, f"DROP TABLE rc.nosuch{k}"])
    if op.get("ddl"):
        return "; ".join(head + [USE_RC, f"CREATE TABLE rc.d{k} (i INT) ENGINE=InnoDB"])
    table = "rc.m" if op.get("engine") == "myisam" else "rc.r"
    if op.get("error"):
        # The failing row second (after the first is written) or first: with STRICT_ALL_TABLES a later
        # row's error aborts the statement too (a MyISAM table keeps the rows before). ER_BAD_NULL_ERROR:
        # a NULL part; ER_DUP_ENTRY: the unique u of the row every node holds from the start (SCHEMA).
        bad = {ER_BAD_NULL: f"({k}, NULL, '', NULL)", ER_DUP_ENTRY: f"({k}, 1, '', {SENTINEL})"}[op["error"]["errno"]]
        rows = [f"({k}, 0, '', NULL)", bad]
        order = rows if op["error"].get("after_changes") else rows[::-1]
        return "; ".join(head + ["SET SESSION sql_mode = 'STRICT_ALL_TABLES'", "BEGIN",
                                 f"INSERT INTO {table} (k, part, pad, u) VALUES {', '.join(order)}", "COMMIT"])
    # A statement-logged INSERT is a short text that overflows no binlog cache: a transaction whose
    # cache must overflow keeps row format (it fails before any replica runs it, so costs it nothing).
    cost = any(s.get("replica_cost_us") for s in stmts) and op.get("binlog_failure") != "cache_overflow"
    if cost:
        # The replica's cost needs the statement itself on the replica: SLEEP there, not here. Not
        # told apart by @@server_id: a replica's SQL thread runs with the originating server's.
        head += ["SET SESSION binlog_format = 'STATEMENT'", USE_RC]
    body = ["BEGIN"]
    for i, s in enumerate(stmts):
        if op.get("binlog_failure") == "cache_overflow" and i == 0:
            rows = ", ".join(f"({k}, {j}, REPEAT('x', 200))" for j in range(OVERFLOW_ROWS))
            body.append(f"INSERT INTO {table} (k, part, pad) VALUES {rows}")
        else:
            us = s.get("replica_cost_us", 0)
            pad = (f"IF(@@port = {int(origin_port)}, '', SLEEP({us / US:.6f}))" if us
                   else f"REPEAT('x', {int(pad_bytes)})" if pad_bytes and i == 0 else "''")
            body.append(f"INSERT INTO {table} (k, part, pad) VALUES ({k}, {i}, {pad})")
        if s.get("duration_us"):
            body.append(f"DO SLEEP({int(s['duration_us']) / US:.6f})")
    body.append("COMMIT")
    return "; ".join(head + body)


def reset_master_statement(op: dict, epoch_us: int | None) -> str:
    return "RESET MASTER"


BUILDERS = {"change_master": change_master_statement, "stop_slave": stop_slave_statement,
            "start_slave": start_slave_statement, "reset_slave": reset_slave_statement,
            "start_all_slaves": start_all_slaves_statement, "stop_all_slaves": stop_all_slaves_statement,
            "flush_logs": flush_logs_statement, "flush_relay_logs": flush_relay_logs_statement,
            "flush_status": flush_status_statement,
            "purge_binary_logs": purge_statement, "set_global": set_global_statement,
            "reset_master": reset_master_statement}
