"""Global group IDs of the hierarchical-replication design (Justin Tolmer's 5.0 design doc, the
Google 5.0/5.1 `--rpl-hierarchical` patch) and their MariaDB-GTID view.

The simulator's rules: start-up option consistency, the last group ID an index gives,
SET BINLOG_GROUP_ID, SHOW BINLOG INFO FOR, connecting by group ID, PURGE BINARY LOGS, the slave's
halt-on-lower-ID rule, and gtid_current_pos. The formats and messages they write are in
replcheck.spec.formats, which the properties read with.
"""
from __future__ import annotations

from dataclasses import dataclass



from replcheck.spec import formats as F

# Halting on a lower ID: the seed's wording ("a lower group_id") and the rule that catches its
# own hazard. A group replayed after a crash between binlog write and engine commit carries the
# *same* ID as the last one in the slave's binlog, so only "not higher" halts on it.
HALT_NOT_HIGHER, HALT_LOWER, HALT_NEVER = "not-higher", "lower", "never"


def startup_error(log_bin: bool, log_slave_updates: bool, rpl_hierarchical: bool) -> str | None:
    """init_server_components: --rpl-hierarchical needs --log-slave-updates needs --log-bin."""
    if log_slave_updates and not log_bin:
        return F.NEEDS_LOG_BIN
    if rpl_hierarchical and not log_slave_updates:
        return F.NEEDS_LOG_SLAVE_UPDATES
    return None


def must_halt(incoming: int, last: int, rule: str = HALT_NOT_HIGHER) -> bool:
    """The SQL thread halts instead of playing a group whose ID does not follow its binlog's."""
    if incoming == 0 or rule == HALT_NEVER:  # 0: a mixed-mode group, no ID to compare
        return False
    return incoming < last if rule == HALT_LOWER else incoming <= last


# -- the binlog index file ---------------------------------------------------------------------
# -- SET BINLOG_GROUP_ID, SHOW BINLOG INFO FOR ------------------------------------------------------
def check_set_group_id(hierarchical: bool, privileged: bool, current: int, new: int,
                       with_reset: bool) -> tuple[int | None, str]:
    """(errno, message); errno None when the statement is accepted."""
    if not hierarchical:
        return F.ER_OPTION_PREVENTS_STATEMENT, F.NOT_HIERARCHICAL
    if not privileged:
        return F.ER_SPECIFIC_ACCESS_DENIED, F.NEEDS_SUPER
    if new < current and not with_reset:
        return F.ER_STATEMENT_REQUIRES_OPTION, F.REQUIRES_RESET
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


def connect_by_id_error(ends: list[GroupEnd], group_id: int, server_id: int) -> str | None:
    """CONNECT_USING_GROUP_ID: the master looks up the slave's last group ID in its (unpurged)
    binlogs and refuses a slave it cannot place: an ID it does not hold (the slave is ahead, or the
    group was purged), or one it holds from another server (the slave has an alternate future)."""
    found = binlog_info(ends, group_id)
    if found is None:
        return F.id_not_found(group_id)
    if found.server_id != server_id:
        return F.alternate_future(group_id)
    return None


def written_before(mtime_us: int, before_us: int) -> bool:
    """Whether PURGE BINARY LOGS BEFORE a time removes a binlog last written at `mtime_us`: in whole
    seconds, as the server compares them. MariaDB's purge_logs_before_date (sql/log.cc) keeps a
    binlog once `stat_area.st_mtime >= purge_time`, both time_t: the file's mtime truncated, and the
    statement's time UNIX_TIMESTAMP(...)->val_int(), which my_decimal2int rounds half up
    (decimal_round(..., 0, HALF_UP)), so BEFORE s.5 or later is BEFORE s+1 (checked on 10.11.19).
    Trace time 0 is a whole second (the harness's and the models' epochs are), so trace times
    round as the server's instants do."""
    return mtime_us // F.US < (before_us + F.US // 2) // F.US


def purge_candidates(files: list[str], to: str | None = None, before_us: int | None = None,
                     mtimes: dict[str, int] | None = None) -> list[str]:
    """The binlogs PURGE BINARY LOGS removes, oldest first, before in-use checks: those before
    `to`, or those last written before `before_us` (written_before), stopping at the first that
    is not; never the active (last) binlog."""
    out = []
    for f in files[:-1]:
        if (to is not None and f == to) or (before_us is not None and not written_before((mtimes or {}).get(f, 0), before_us)):
            break
        out.append(f)
    return out


# -- the MariaDB-GTID view ---------------------------------------------------------------------------
def current_pos(binlog_pos: dict[int, str], slave_pos: dict[int, str], server_id: int) -> dict[int, str]:
    """gtid_current_pos: gtid_slave_pos, except a domain whose binlog holds a later GTID this
    server originated itself (it was a master there)."""
    out = dict(slave_pos)
    for d, g in binlog_pos.items():
        _, sid, seq = F.parse_gtid(g)
        if sid == server_id and (d not in out or seq > F.parse_gtid(out[d])[2]):
            out[d] = g
    return out
