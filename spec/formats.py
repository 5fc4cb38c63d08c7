"""Formats and vocabulary the model (which writes them) and the properties (which read them) share:
the binlog index line `full_path|group_id|`, MariaDB GTID text, and the error numbers and message
texts the hierarchical-replication server gives. Pure codecs and constants: no decisions, so a
property that reads a trace with them judges nothing by the model's rules.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

US = 1_000_000  # History and Trace times are µs of true time; one second is US
# CHANGE MASTER TO MASTER_DELAY = N takes 0 <= N <= 2^31 - 1 seconds (WL#344; larger: error 1729)
MAX_MASTER_DELAY = 2**31 - 1
# Binlog files: the magic number precedes the first event; sizes of the events as the model writes them.
BINLOG_START = 4
FDE_SIZE, ROTATE_SIZE, GTID_SIZE, QUERY_SIZE, XID_SIZE = 120, 48, 42, 80, 31
# A dump's fake Gtid_list event for one domain: header 19, count 4, one GTID 16, checksum 4.
GTID_LIST_SIZE = 43
ER_BAD_SLAVE = 1200  # the slave's configuration (or, here, a restore's conditions) does not allow it
MAX_GROUP_ID = 2**64 - 1  # an unsigned 64-bit integer; 0 means "none" (mixed mode)

# Errors as the rpl_hier test of the Google branch shows them.
ER_SPECIFIC_ACCESS_DENIED = 1227
# START SLAVE with the threads already running: a note, and nothing else of the statement (its UNTIL) applies
ER_SLAVE_WAS_RUNNING = 1254
ER_ERROR_WHEN_EXECUTING_COMMAND = 1220
ER_MASTER_FATAL_ERROR_READING_BINLOG = 1236
ER_SLAVE_GROUP_ID_LOWER = 1643
ER_STATEMENT_REQUIRES_OPTION = 1644
ER_OPTION_PREVENTS_STATEMENT = 1290
# What the client gets when the binlog write fails: ER_ERROR_ON_WRITE, "Error writing file '%s'
# (errno: %d)" (MariaDB sql/log.cc: my_error(ER_ERROR_ON_WRITE, MYF(ME_ERROR_LOG), name, errno); its
# binlog_ioerr.inc expects `--error ER_ERROR_ON_WRITE`, MySQL's binlog_inject_error.inc likewise).
# Not mysys's EE_WRITE (3), which only numbers the OS-level write failure.
ER_ERROR_ON_WRITE = 1026
# A binlog write on a full disk is tried again this long after it failed: MY_WAIT_FOR_USER_TO_FIX_PANIC
# (include/my_sys.h), slept by wait_for_free_space (mysys/errors.c)
DISK_FULL_RETRY_US = 60 * US
ER_DISK_FULL = 1021
EE_WRITE = 3
ER_STMT_CACHE_FULL = 1705  # a statement's changes to a non-transactional table overflowed max_binlog_stmt_cache_size
ER_STARTUP_OPTIONS = 1  # mysqld exits with status 1 (unireg_abort) on inconsistent options
ER_SYNTAX_ERROR = 1149  # SQLSTATE 42000: rpl_hier step 16
# The client lost its commit's answer: the server died (2013) or shut down (1053) while it ran;
# what the commit left is crash recovery's to decide, not the statement's error.
CR_SERVER_LOST = 2013
ER_SERVER_SHUTDOWN = 1053
SERVER_GONE = (CR_SERVER_LOST, ER_SERVER_SHUTDOWN)
ER_UNKNOWN_TARGET_BINLOG = 1373
ER_WARN_PURGE_LOG_IN_USE = 1867

BINLOG_INFO_NOT_FOUND = "Error when executing command SHOW BINLOG INFO FOR: Failed to find matching binlog group."
REQUIRES_RESET = "This operation requires the WITH RESET option."
NEEDS_SUPER = "Access denied; you need (at least one of) the SUPER privilege(s) for this operation"
TARGET_NOT_FOUND = "Target log not found in binlog index"
# CONNECT_USING_GROUP_ID with a log file or position names two places to start: a syntax error.
SYNTAX_ERROR = "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use"
# ER_OPTION_PREVENTS_STATEMENT's text with the option the patch names: my_error(..., "--skip-rpl-hierarchical")
# (the Google patch's sql_repl.cc, change_master; its rpl_hier_off test expects 1290 of SHOW BINLOG INFO FOR,
# CHANGE MASTER TO CONNECT_USING_GROUP_ID and SET BINLOG_GROUP_ID alike)
NOT_HIERARCHICAL = "The MySQL server is running with the --skip-rpl-hierarchical option so it cannot execute this statement"
# init_server_components refusing inconsistent options (the seed's "Filtering non-master events").
NEEDS_LOG_BIN = "You need to use --log-bin to make --log-slave-updates work."
NEEDS_LOG_SLAVE_UPDATES = "You need to use --log-slave-updates to make --rpl-hierarchical work."

# rpl_semi_sync_master_timeout's default, in ms (semisync_master.cc): a server's where its
# configuration names none (a server Trace's topology holds only the History's variables).
SEMISYNC_TIMEOUT_DEFAULT_MS = 10000

# A semi-sync master's error-log line when a commit's wait for an ack times out (semisync_master.cc).
SEMISYNC_TIMEOUT_LOG = re.compile(r"Timeout waiting for reply of binlog \(file: (\S+), pos: (\d+)\)")

# A replica's error-log line as its IO thread connects by GTID (sql/slave.cc, handle_slave_io): the
# position the source's dump starts from.
CONNECTED_AT_GTID_LOG = re.compile(r"Slave I/O thread: connected to master '[^']*',replication starts at GTID position '([^']*)'")

_HALT = "Slave SQL thread encountered ev->group_id=={} < last processed ID=={}. Stopping replication."
_HALT_RE = re.compile(re.escape(_HALT).replace(r"\{\}", r"(\d+)"))


def halt_message(incoming: int, last: int) -> str:
    return _HALT.format(incoming, last)


def parse_halt_message(text: str) -> tuple[int, int] | None:
    """(incoming, last) from the SQL thread's 1643 message, or None when it is not that message."""
    said = _HALT_RE.fullmatch(text)
    return None if said is None else (int(said[1]), int(said[2]))


def fatal_1236(reason: str) -> str:
    """Last_IO_Error of a slave whose dump request the master refused."""
    return f"Got fatal error 1236 from master when reading data from binary log: '{reason}'"


def id_not_found(group_id: int) -> str:
    """The master's answer to a slave whose last group ID its binlogs do not hold."""
    return f"Slave trying to connect using group_id = {group_id} which couldn't be found in the bin logs."


def alternate_future(group_id: int) -> str:
    """The master's answer to a slave whose last group ID it holds from another server."""
    return (f"Slave trying to connect using group_id = {group_id}, but server_id from the slave doesn't match "
            "that found in the bin log. Slave appears to have alternate future.")


# -- the binlog index file ---------------------------------------------------------------------
class IndexLineError(ValueError):
    """A line of an index file that cannot be written (a path the line format cannot hold)."""


@dataclass(frozen=True)
class IndexEntry:
    path: bytes
    group_id: int = 0
    old_format: bool = False  # read from a pre-group-ID line: the group ID is assumed 0


def _canonical_decimal(b: bytes) -> int | None:
    """A group ID as MySQL writes it: ASCII digits, no sign, no leading zero, at most 2^64-1."""
    if not b or not b.isdigit() or (len(b) > 1 and b[:1] == b"0"):
        return None
    value = int(b)
    return value if value <= MAX_GROUP_ID else None


def parse_index_line(line: bytes) -> IndexEntry:
    """One line without its newline. The group ID is the last field, so a path may contain '|'.

    A new-format line ends `|<digits>|`: the last '|' closes the ID and the '|' before the digits
    opens it, and digits hold no '|', so the split is the only one. A line without that suffix is
    the old format (a server-made binlog name ends `.NNNNNN`, never with '|')."""
    if line.endswith(b"|"):
        path, sep, digits = line[:-1].rpartition(b"|")
        gid = _canonical_decimal(digits)
        if sep and gid is not None:
            return IndexEntry(path, gid)
    return IndexEntry(line, 0, old_format=True)


def format_index_line(path: bytes, group_id: int | None) -> bytes:
    """`full_path|group_id|` for the binlog index, `full_path` for the relay-log index (None)."""
    if b"\n" in path or not path:
        raise IndexLineError(f"cannot write index line for path {path!r}: empty or contains a newline")
    if group_id is None:
        return path
    if not 0 <= group_id <= MAX_GROUP_ID:
        raise IndexLineError(f"group ID {group_id} out of range 0..{MAX_GROUP_ID}")
    return b"%s|%d|" % (path, group_id)


def parse_index(data: bytes) -> list[IndexEntry]:
    """An index file: one entry per newline-terminated line (a torn last line counts as a line)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [parse_index_line(line) for line in lines]


def format_index(entries: list[tuple[bytes, int | None]]) -> bytes:
    return b"".join(format_index_line(p, g) + b"\n" for p, g in entries)


# -- MariaDB GTIDs ---------------------------------------------------------------------------------
def gtid(domain: int, server_id: int, seq: int) -> str:
    return f"{domain}-{server_id}-{seq}"


def parse_gtid(text: str) -> tuple[int, int, int]:
    d, s, n = text.split("-")
    return int(d), int(s), int(n)


def parse_pos(text: str) -> dict[int, str]:
    """A GTID position ('0-1-5,1-2-7'): its GTID per domain."""
    return {parse_gtid(g)[0]: g for g in text.split(",") if g}


def format_pos(per_domain: dict[int, str]) -> str:
    if len(per_domain) < 2:  # one domain, as nearly always: every sample shows three positions
        return next(iter(per_domain.values()), "")
    return ",".join(per_domain[d] for d in sorted(per_domain))


# -- SHOW BINLOG EVENTS and expectations ----------------------------------------------------------
# Event_type as SHOW BINLOG EVENTS and mariadb-binlog name them -> the Trace's event type.
SHOWN_EVENT_TYPES = {
    "Gtid": "GTID_LOG_EVENT", "Anonymous_Gtid": "ANONYMOUS_GTID_LOG_EVENT", "Query": "QUERY_EVENT", "Xid": "XID_EVENT",
    "Format_desc": "FORMAT_DESCRIPTION_EVENT", "Rotate": "ROTATE_EVENT", "Incident": "INCIDENT_EVENT",
    "Table_map": "TABLE_MAP_EVENT", "Write_rows_v1": "WRITE_ROWS_EVENT", "Update_rows_v1": "UPDATE_ROWS_EVENT",
    "Delete_rows_v1": "DELETE_ROWS_EVENT", "Annotate_rows": "ANNOTATE_ROWS_EVENT", "Gtid_list": "GTID_LIST_EVENT",
    "Binlog_checkpoint": "BINLOG_CHECKPOINT_EVENT", "Previous_gtids": "PREVIOUS_GTIDS_LOG_EVENT", "Stop": "STOP_EVENT",
}
EVENT_TYPE_SHOWN = {v: k for k, v in SHOWN_EVENT_TYPES.items()}
# What opens every binlog before its first group; include/show_binlog_events.inc starts after it.
BINLOG_HEADER_EVENTS = frozenset({"Format_desc", "Gtid_list", "Binlog_checkpoint", "Previous_gtids"})


def binlog_number(name: str) -> str:
    """A binlog's sequence number, its extension: what names it whatever the server's --log-bin base name."""
    return name.rpartition(".")[2]


def after_header(rows: list[dict]) -> list[dict]:
    """SHOW BINLOG EVENTS rows of one binlog without the header events that open it."""
    i = 0
    while i < len(rows) and rows[i]["Event_type"] in BINLOG_HEADER_EVENTS:
        i += 1
    return rows[i:]


# What an expectation reads from the client's own record rather than from the server: a statement's
# outcome, which the client keeps when the server went down under it (a crash point's 2013).
CLIENT_SHOWN = frozenset({"result"})


def expect_where(history: dict, op: dict) -> str:
    """An expectation's name, `<file>:<line>`: the loader's, or for a History made in memory its
    place as a file would have it (line 1 the header)."""
    if "_where" in op:
        return op["_where"]
    line = next(i for i, o in enumerate(history["ops"]) if o is op) + 2
    return f"{history['header'].get('name', 'history')}.jsonl:{line}"
