"""Global group IDs of the hierarchical-replication design (Justin Tolmer's 5.0 design doc, the
Google 5.0/5.1 `--rpl-hierarchical` patch) and their MariaDB-GTID view.

The pure rules the simulator and the properties share: start-up option consistency, the
binlog index file format (`full_path|group_id|`, old one-path-per-line files still read),
SET BINLOG_GROUP_ID, SHOW BINLOG INFO FOR, the slave's halt-on-lower-ID rule, and how a
group ID reads as a MariaDB GTID (domain-server_id-sequence).
"""
from __future__ import annotations

from dataclasses import dataclass

MAX_GROUP_ID = 2**64 - 1  # an unsigned 64-bit integer; 0 means "none" (mixed mode)

# Errors as the rpl_hier test of the Google branch shows them.
ER_SPECIFIC_ACCESS_DENIED = 1227
ER_ERROR_WHEN_EXECUTING_COMMAND = 1220
ER_MASTER_FATAL_ERROR_READING_BINLOG = 1236
ER_SLAVE_GROUP_ID_LOWER = 1643
ER_STATEMENT_REQUIRES_OPTION = 1644
ER_OPTION_PREVENTS_STATEMENT = 1290
ER_STARTUP_OPTIONS = 1  # mysqld exits with status 1 (unireg_abort) on inconsistent options
ER_SYNTAX_ERROR = 1149  # SQLSTATE 42000: rpl_hier step 16
ER_UNKNOWN_TARGET_BINLOG = 1373
ER_WARN_PURGE_LOG_IN_USE = 1867

BINLOG_INFO_NOT_FOUND = "Error when executing command SHOW BINLOG INFO FOR: Failed to find matching binlog group."
REQUIRES_RESET = "This operation requires the WITH RESET option."
NEEDS_SUPER = "Access denied; you need (at least one of) the SUPER privilege(s) for this operation"
TARGET_NOT_FOUND = "Target log not found in binlog index"
# CONNECT_USING_GROUP_ID with a log file or position names two places to start: a syntax error.
SYNTAX_ERROR = "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use"
NOT_HIERARCHICAL = "The MySQL server is running without the --rpl-hierarchical option so it cannot execute this statement"

# Halting on a lower ID: the seed's wording ("a lower group_id") and the rule that catches its
# own hazard. A group replayed after a crash between binlog write and engine commit carries the
# *same* ID as the last one in the slave's binlog, so only "not higher" halts on it.
HALT_NOT_HIGHER, HALT_LOWER, HALT_NEVER = "not-higher", "lower", "never"


def startup_error(log_bin: bool, log_slave_updates: bool, rpl_hierarchical: bool) -> str | None:
    """init_server_components: --rpl-hierarchical needs --log-slave-updates needs --log-bin."""
    if log_slave_updates and not log_bin:
        return "You need to use --log-bin to make --log-slave-updates work."
    if rpl_hierarchical and not log_slave_updates:
        return "You need to use --log-slave-updates to make --rpl-hierarchical work."
    return None


def halt_message(incoming: int, last: int) -> str:
    return f"Slave SQL thread encountered ev->group_id=={incoming} < last processed ID=={last}. Stopping replication."


def must_halt(incoming: int, last: int, rule: str = HALT_NOT_HIGHER) -> bool:
    """The SQL thread halts instead of playing a group whose ID does not follow its binlog's."""
    if incoming == 0 or rule == HALT_NEVER:  # 0: a mixed-mode group, no ID to compare
        return False
    return incoming < last if rule == HALT_LOWER else incoming <= last


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


def last_group_id(entries: list[IndexEntry]) -> int:
    """After a clean shutdown: the group ID of the last entry (0 for an old-format index)."""
    return entries[-1].group_id if entries else 0


# -- SET BINLOG_GROUP_ID, SHOW BINLOG INFO FOR ------------------------------------------------------
def check_set_group_id(hierarchical: bool, privileged: bool, current: int, new: int,
                       with_reset: bool) -> tuple[int | None, str]:
    """(errno, message); errno None when the statement is accepted."""
    if not hierarchical:
        return ER_OPTION_PREVENTS_STATEMENT, NOT_HIERARCHICAL
    if not privileged:
        return ER_SPECIFIC_ACCESS_DENIED, NEEDS_SUPER
    if new < current and not with_reset:
        return ER_STATEMENT_REQUIRES_OPTION, REQUIRES_RESET
    return None, ""


@dataclass(frozen=True)
class GroupEnd:
    """Where a group ends in a server's binlog: what SHOW BINLOG INFO FOR answers."""

    group_id: int
    log_name: str
    pos: int
    server_id: int


def binlog_info(ends: list[GroupEnd], group_id: int) -> GroupEnd | None:
    """The last group with this ID in the (unpurged) binlogs, or None: "Failed to find matching
    binlog group". ID 0 is never found (it marks mixed-mode groups, not one group)."""
    if group_id == 0:
        return None
    return next((e for e in reversed(ends) if e.group_id == group_id), None)


def fatal_1236(reason: str) -> str:
    """Last_IO_Error of a slave whose dump request the master refused."""
    return f"Got fatal error 1236 from master when reading data from binary log: '{reason}'"


def id_not_found(group_id: int) -> str:
    """The master's answer to a slave whose last group ID its binlogs do not hold."""
    return f"Slave trying to connect using group_id = {group_id} which couldn't be found in the bin logs."


def connect_by_id_error(ends: list[GroupEnd], group_id: int, server_id: int) -> str | None:
    """CONNECT_USING_GROUP_ID: the master looks up the slave's last group ID in its (unpurged)
    binlogs and refuses a slave it cannot place: an ID it does not hold (the slave is ahead, or the
    group was purged), or one it holds from another server (the slave has an alternate future)."""
    found = binlog_info(ends, group_id)
    if found is None:
        return id_not_found(group_id)
    if found.server_id != server_id:
        return (f"Slave trying to connect using group_id = {group_id}, but server_id from the slave doesn't match "
                "that found in the bin log. Slave appears to have alternate future.")
    return None


def purge_candidates(files: list[str], to: str | None = None, before_us: int | None = None,
                     mtimes: dict[str, int] | None = None) -> list[str]:
    """The binlogs PURGE BINARY LOGS removes, oldest first, before in-use checks: those before
    `to`, or those last written before `before_us`, stopping at the first that is not; never the
    active (last) binlog."""
    out = []
    for f in files[:-1]:
        if (to is not None and f == to) or (before_us is not None and (mtimes or {}).get(f, 0) >= before_us):
            break
        out.append(f)
    return out


# -- the MariaDB-GTID view ---------------------------------------------------------------------------
def gtid(domain: int, server_id: int, seq: int) -> str:
    return f"{domain}-{server_id}-{seq}"


def parse_gtid(text: str) -> tuple[int, int, int]:
    d, s, n = text.split("-")
    return int(d), int(s), int(n)


def parse_pos(text: str) -> dict[int, str]:
    """A GTID position ('0-1-5,1-2-7'): its GTID per domain."""
    return {parse_gtid(g)[0]: g for g in text.split(",") if g}


def format_pos(per_domain: dict[int, str]) -> str:
    return ",".join(per_domain[d] for d in sorted(per_domain))


def current_pos(binlog_pos: dict[int, str], slave_pos: dict[int, str], server_id: int) -> dict[int, str]:
    """gtid_current_pos: gtid_slave_pos, except a domain whose binlog holds a later GTID this
    server originated itself (it was a master there)."""
    out = dict(slave_pos)
    for d, g in binlog_pos.items():
        _, sid, seq = parse_gtid(g)
        if sid == server_id and (d not in out or seq > parse_gtid(out[d])[2]):
            out[d] = g
    return out
