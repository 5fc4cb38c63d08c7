"""Crash points and crash recovery of a hierarchical slave (the design's "Interaction with
rpl_transaction_enabled" and "Bin Log Processing at Server Start").

On the replication SQL thread a COMMIT, with the binlog on, does: write the group to the binlog,
commit it in InnoDB (which updates InnoDB's replication state when rpl_transaction_enabled is
on), flush relay-log.info. A crash can fall before, between or after these steps; at start,
TC_LOG_BINLOG::recover commits what the last binlog holds but the engine had only prepared,
the last issued group ID is found again, and the SQL thread resumes from relay-log.info, or
from InnoDB's state when rpl_transaction_enabled overrides it.
"""
from __future__ import annotations

from replcheck.spec import formats as F


# Where an armed crash fires (mysql-test's debug crash points), in the order a commit passes them.
BEFORE_BINLOG_WRITE = "before_binlog_write"
AFTER_BINLOG_WRITE = "after_binlog_write"  # binlogged, not committed in the engine: the seed's hazard
AFTER_ENGINE_COMMIT = "after_engine_commit"  # committed, relay-log.info not flushed (Bug #26540)
COMMIT_POINTS = (BEFORE_BINLOG_WRITE, AFTER_BINLOG_WRITE, AFTER_ENGINE_COMMIT)
# At start: during recovery, before or after the new binlog (and its index entry) is created.
RECOVERY_BEFORE_NEW_BINLOG = "recovery_before_new_binlog"
RECOVERY_AFTER_NEW_BINLOG = "recovery_after_new_binlog"
RECOVERY_POINTS = (RECOVERY_BEFORE_NEW_BINLOG, RECOVERY_AFTER_NEW_BINLOG)
CRASH_POINTS = COMMIT_POINTS + RECOVERY_POINTS


def recovered_group_id(index_group_id: int, dirty_file_group_ids: list[int], ignore_index: bool = False) -> int:
    """The last issued group ID after a crash: the last one in the dirty (most recent) binlog, or,
    when that file holds only its FDE, the group ID of its index entry, written when the file
    was created from the then-known correct value. `ignore_index` is the bug that starts from 0."""
    ids = [g for g in dirty_file_group_ids if g]
    if ids:
        return ids[-1]
    return 0 if ignore_index else index_group_id


def last_group_id(entries: list[F.IndexEntry]) -> int:
    """After a clean shutdown: the group ID of the last entry (0 for an old-format index)."""
    return entries[-1].group_id if entries else 0


def startup_group_id(entries: list[F.IndexEntry], dirty: bool, last_file_group_ids: list[int],
                     ignore_index: bool = False) -> int:
    """Clean shutdown: the last index entry (fixed at close). Crash: recover the last binlog only."""
    if not dirty:
        return last_group_id(entries)
    return recovered_group_id(last_group_id(entries), last_file_group_ids, ignore_index)


def sql_restart_position(relay_log_info_pos: int, engine_pos: int | None, rpl_transaction_enabled: bool) -> int:
    """Where the SQL thread resumes: InnoDB's replication state overrides relay-log.info when
    rpl_transaction_enabled is on and InnoDB knows a position."""
    if rpl_transaction_enabled and engine_pos is not None:
        return engine_pos
    return relay_log_info_pos
