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


# -- binlog durability --------------------------------------------------
# What a crash leaves on disk. A process crash (kill -9) loses the process's memory: what was
# written to the binlog file is in the OS page cache and stays; the InnoDB log buffer is lost with
# innodb_flush_log_at_trx_commit = 0. A machine crash (power, kernel) loses what was not synced.
PROCESS, MACHINE = "process", "machine"
CRASH_KINDS = (PROCESS, MACHINE)
# Inside a group's binlog write (the last event only partly written: a torn event), and after the
# write but before its sync (MariaDB log.cc trx_group_commit_leader: write_transaction_or_stmt for
# every transaction of the group, then flush_and_sync; MySQL binlog.cc ordered_commit: the flush
# stage, then the sync stage). Both fall after the engine's prepare (two-phase commit).
INSIDE_BINLOG_WRITE = "inside_binlog_write"
BEFORE_BINLOG_SYNC = "before_binlog_sync"
WRITE_POINTS = (INSIDE_BINLOG_WRITE, BEFORE_BINLOG_SYNC)
# The server variables and each flavour's default (MariaDB 10.11 sys_vars.cc Sys_sync_binlog_period
# DEFAULT(0); MySQL 8.0 sys_vars.cc Sys_sync_binlog_period DEFAULT(1); innodb_flush_log_at_trx_commit
# defaults to 1 in both).
SYNC_BINLOG = "sync_binlog"
FLUSH_LOG = "innodb_flush_log_at_trx_commit"
# With sync_binlog = 0 the OS decides: Linux writes dirty pages back once they are
# vm.dirty_expire_centisecs (default 3000) old. With innodb_flush_log_at_trx_commit 0 or 2 InnoDB
# flushes its log once per innodb_flush_log_at_timeout (default 1 s). The model takes the latest
# each allows, on the virtual clock, so what a crash loses is a function of the History.
OS_WRITEBACK_US = 30_000_000
REDO_FLUSH_US = 1_000_000


def syncs_now(sync_binlog: int, writes_since_sync: int) -> bool:
    """Whether flush_and_sync syncs after this write: every write with 1, every Nth with N (the
    server's sync_binlog_counter), never with 0 (the OS decides)."""
    return sync_binlog > 0 and writes_since_sync >= sync_binlog


def dump_reads_synced_only(sync_binlog: int) -> bool:
    """The dump thread sees a group only once it is synced when sync_binlog = 1: MySQL binlog.cc
    ordered_commit moves binlog_end_pos after the sync stage then (update_binlog_end_pos_after_sync
    = get_sync_period() == 1), after the flush stage otherwise; MariaDB log.cc
    trx_group_commit_leader signals the dump threads after flush_and_sync, which syncs only every
    sync_binlog-th group."""
    return sync_binlog == 1


def binlog_survives(written_at: int, synced: bool, crash_at: int, kind: str) -> bool:
    """A binlog event survives a process crash once written; a machine crash once synced, or
    written back by the OS (OS_WRITEBACK_US)."""
    return kind == PROCESS or synced or written_at <= crash_at - OS_WRITEBACK_US


def engine_survives(flush_log: int, committed_at: int, crash_at: int, kind: str) -> bool:
    """An engine commit (or prepare) survives: with innodb_flush_log_at_trx_commit = 1 (and
    MariaDB's 3) it is flushed at commit; with 2 it is written to the OS at commit, flushed once a
    second; with 0 both happen once a second (lost by a process crash too)."""
    if flush_log in (1, 3) or (flush_log == 2 and kind == PROCESS):
        return True
    return committed_at <= crash_at - REDO_FLUSH_US


def promises_no_loss(kind: str, sync_binlog: int, flush_log: int) -> bool:
    """The settings under which the servers promise that a crash of this kind loses no commit
    that returned: a process crash unless innodb_flush_log_at_trx_commit = 0; a machine crash only
    with sync_binlog = 1 and innodb_flush_log_at_trx_commit = 1."""
    if kind == PROCESS:
        return flush_log != 0
    return sync_binlog == 1 and flush_log in (1, 3)


def valid_end(events: list) -> int:
    """How many of a crashed binlog's events recovery keeps: up to the end of the last whole group
    (MySQL binlog.cc binlog_recover's valid_pos, then truncate_update_log_file: the file is cut
    there, "Crashed binlog file ... trimmed"; MariaDB log.cc TC_LOG_BINLOG::recover stops reading at
    the first invalid event, so a torn tail is never taken for a group). `events` are the crashed
    file's (ev, torn) pairs, in order."""
    keep = 0
    for i, (ev, torn) in enumerate(events):
        if torn:
            break
        if ev.trx is None or ev.last:
            keep = i + 1
    return keep


def resolve_prepared(prepared: list[tuple[str, str]], binlogged: set[str]) -> tuple[list, list]:
    """Two-phase commit recovery: an engine transaction left prepared is committed when its group
    (its XID) is in the binlog and rolled back otherwise (MariaDB log.cc TC_LOG_BINLOG::recover
    collects the XIDs of the binlog, then ha_recover(&xids); MySQL binlog.cc binlog_recover the
    same). Returns (committed, rolled back)."""
    committed = [p for p in prepared if p[1] in binlogged]
    return committed, [p for p in prepared if p[1] not in binlogged]


def next_seq(own_seqs: list[int]) -> int:
    """The last GTID sequence number a restarted server issued: the greatest of its own in the
    binlog it recovered (MariaDB rebuilds gtid_binlog_state from the last binlog's Gtid_list and
    the GTIDs after it, TC_LOG_BINLOG::recover; MySQL's gtid_executed = the table plus every binlog
    not yet saved in it, known bugs G6)."""
    return max(own_seqs, default=0)


# -- GTID state durability ---------------------------------------------
# Where a starting server takes its binlog GTID state from. MariaDB (log.cc,
# MYSQL_BIN_LOG::do_binlog_recovery): after a crash (the last binlog's format description still
# says LOG_EVENT_BINLOG_IN_USE_F) TC_LOG_BINLOG::recover scans the last binlog, loading its
# Gtid_list and then every GTID after it; after a clean shutdown read_state_from_file reads
# `<log-bin>.state`, written at the shutdown, and when that file is missing (error 2: copied
# binlogs without it, MDEV-6391) the last binlog is scanned the same way, without XA recovery.
# MYSQL_BIN_LOG::open deletes the file once the new binlog with its Gtid_list is synced, so a crash
# never finds a stale one. MySQL keeps no such file: gtid_executed is rebuilt from the binlogs.
STATE_FILE, SCAN, EMPTY = "state_file", "scan", "empty"


def clean_start_state(uses_state_file: bool, state_file_there: bool, missing_is_empty: bool = False) -> str:
    """After a clean shutdown: the .state file when there is one, else a scan of the last binlog;
    `missing_is_empty` is MDEV-6391's bug, an empty state when the file is gone."""
    if not uses_state_file:
        return SCAN
    if state_file_there:
        return STATE_FILE
    return EMPTY if missing_is_empty else SCAN


# -- recovery of a semi-sync primary restarted as a replica (MDEV-21117) --
# MariaDB's TC_LOG_BINLOG::recover (sql/log.cc) truncates only when the server starts as a replica:
# Recovery_context::do_truncate is `rpl_status == RPL_IDLE_SLAVE`, which --init-rpl-role=SLAVE sets
# (rpl_semi_sync_fail_over.test restarts the crashed primary with --rpl-semi-sync-slave-enabled=1
# --init-rpl-role=SLAVE). The role the server actually starts in decides, not how it ran before.
MASTER, SLAVE = "MASTER", "SLAVE"
IN_DOUBT, COMMITTED = "in_doubt", "committed"


def in_doubt_cut(groups: list[str | None]) -> int | None:
    """Where a replica-role recovery cuts the binlog: the first group in doubt (binlogged, prepared
    in the engine, not committed: an AFTER_SYNC commit waiting for its ack) after the last group the
    engine committed; None when no group is in doubt after it. `groups`: each binlog group's state in
    order, IN_DOUBT, COMMITTED, or None for a group with no XID (DDL, a non-transactional table),
    which neither sets nor resets the place. Recovery_context::decide_or_assess: at each Xid event
    an in-doubt transaction becomes the candidate (set_truncate_coord) unless one is set, a committed
    one resets it (reset_truncate_coord: the cut lies after it); complete() then rolls back what lies
    at or after the cut (ha_recover_complete with binlog_truncate_coord), commits the in-doubt ones
    before it, and truncate_and_remove_binlogs cuts the file ("Successfully truncated binlog file ...
    to remove transactions starting from GTID ...")."""
    cut = None
    for i, state in enumerate(groups):
        if state == COMMITTED:
            cut = None
        elif state == IN_DOUBT and cut is None:
            cut = i
    return cut
