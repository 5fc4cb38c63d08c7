"""The mutant registry: every known bug the models can re-create, each a named seam.

A mutant is switched on by the system that runs it (`mutant:<name>`, derived from this registry;
spec/systems.toml may combine mutants into a system of its own). The model code tests the
constant, never a string (`if STOP_EVENT in self.mutants`), so a misspelt name is a NameError at
import, and an unknown name in spec/systems.toml is refused when it loads. Each entry says which
feature it belongs to, the bug it re-creates (../shared/knowledge/known-bugs.md), the model it
changes (`base`, whose declarations it inherits), where its seam is (`seam`: the model module,
then the place), and the requirements that must catch it (`kills`).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    name: str
    feature: str
    base: str
    bug: str
    seam: str
    what: str
    kills: tuple[str, ...]

    @property
    def module(self) -> str:
        """The model module whose code holds the seam."""
        return self.seam.split(":", 1)[0]


REGISTRY: dict[str, Mutant] = {}


def mutant(name: str, **fields) -> Mutant:
    if name in REGISTRY:
        raise ValueError(f"mutant {name!r} registered twice")
    REGISTRY[name] = m = Mutant(name, **fields)
    return m


def lookup(names) -> frozenset[Mutant]:
    """The registered mutants of these names; KeyError names the first unknown one."""
    out = set()
    for n in names:
        if n not in REGISTRY:
            raise KeyError(n)
        out.add(REGISTRY[n])
    return frozenset(out)


# -- delayed replication ---------------------------------------------------------------------
STOP_APPLIES_WAITED_EVENT = mutant(
    "stop-applies-waited-event", feature="delay", base="model:wl344", bug="BUG#56442", seam="sim/applier: STOP SLAVE while the SQL thread waits",
    what="STOP SLAVE during the delay executes the waited-for event",
    kills=("WL344.STOP.NO_EXEC", "WL344.WAIT.RULE"))
ORIGIN_TIMESTAMP = mutant(
    "origin-timestamp", feature="delay", base="model:wl7318", bug="WL#7318 drawback 1 (BUG#57514)", seam="delay: DelayRule.due",
    what="Delay measured from the originating master's commit",
    kills=("WL7318.F1",))
START_TIMESTAMP = mutant(
    "start-timestamp", feature="delay", base="model:wl7318", bug="WL#7318 drawback 2", seam="delay: DelayRule.due",
    what="Delay measured from the transaction's start, not its commit",
    kills=("WL7318.F2",))
PER_EVENT_WAIT = mutant(
    "per-event-wait", feature="delay", base="model:wl7318", bug="WL#7318 drawback 3", seam="delay: DelayRule.due",
    what="Every event of a transaction waits for its own timestamp",
    kills=("WL7318.F3",))
NO_CLOCK_COMPENSATION = mutant(
    "no-clock-compensation", feature="delay", base="model:wl344", bug="BUG#52308", seam="delay: DelayRule.due",
    what="The replica ignores the clock difference with the master",
    kills=("WL344.CLOCK.COMPENSATE", "WL344.WAIT.RULE"))
FAKE_EVENT_NOW = mutant(
    "fake-event-now", feature="delay", base="model:mariadb-10.11", bug="MDEV-13895", seam="delay: DelayRule.due",
    what="An event with timestamp 0 gets 'now' and waits a whole delay",
    kills=("WL344.WAIT.EXEMPT",))
DELAY_CHANGE_KEEPS_FETCH_POSITION = mutant(
    "delay-change-keeps-fetch-position", feature="delay", base="model:wl7318", bug="Bug #84249, #84375, #87102 (MySQL 5.7.4-5.7.17)",
    seam="sim/admin: CHANGE MASTER purging the relay logs",
    what="CHANGE MASTER TO MASTER_DELAY with both threads stopped purges the relay logs but keeps the IO thread's "
         "fetch position (Read_Master_Log_Pos), not the SQL thread's executed one: what was relayed and not applied is lost",
    kills=("WL344.CM.NO_LOSS", "GGID.RECOVERY.EXACTLY_ONCE"))

# -- replication lag (Seconds_Behind_Master) --------------------------------------------------------
CAUGHT_UP_KEPT = mutant(
    "caught-up-kept", feature="lag", base="model:mariadb-10.11", bug="MDEV-32265", seam="sim/applier: the SQL thread reading an event's timestamp",
    what="'Caught up' ends only with a newer timestamp: a transaction read again after STOP/START during its delay shows Seconds_Behind_Master 0",
    kills=("SBM.PENDING", "SBM.RESTART"))

# -- semi-synchronous replication ---------------------------------------------------------------
SWITCH_BACK_FIRST_ACK = mutant(
    "switch-back-first-ack", feature="semisync", base="model:wl7318", bug="MDEV-37116", seam="semisync: switching back ON",
    what="Status switches back ON at the first ack, whatever wait_for_slave_count",
    kills=("WL7169.SWITCH_BACK_N",))
MIN_ACK_LAST_SLOT = mutant(
    "min-ack-last-slot", feature="semisync", base="model:wl7318", bug="Bug #109829", seam="semisync: the ack table",
    what="A full ack table evicts the last slot below the new ack, not the minimum",
    kills=("WL7169.N_DISTINCT",))
SHUTDOWN_ACKS_WAITERS = mutant(
    "shutdown-acks-waiters", feature="semisync", base="model:wl7318", bug="MDEV-11853", seam="semisync: shutdown",
    what="Shutdown releases waiting sessions as if acknowledged",
    kills=("WL1720.ACK.WAIT", "MARIADB.SEMISYNC.SHUTDOWN"))
ACK_FILTERED = mutant(
    "ack-filtered", feature="filter", base="model:wl7318", bug="Bug#15985893 (S3; on MariaDB MDEV-38486)",
    seam="sim/semisync: the commit of a transaction its semi-sync replicas filter on the master",
    what="Every binlogged transaction waits for an ack, even one the dump threads send to no semi-sync replica",
    kills=("FILTER.SEMISYNC.UNSENT",))
NO_REACK_ON_RECONNECT = mutant(
    "no-reack-on-reconnect", feature="semisync", base="model:wl7318", bug="Bug #104015", seam="sim/semisync: the IO thread's reconnect",
    what="A reconnecting replica never acknowledges what it already holds",
    kills=("WL1720.LIVE.RELEASE",))

# -- incident events and the skip counter -------------------------------------------------------
NO_INCIDENT = mutant(
    "no-incident", feature="incident", base="model:wl7318", bug="BUG#21494, Bug #43929", seam="sim/source: a binlog failure",
    what="Lost changes are not marked by an incident",
    kills=("WL3464.GAP",))
INCIDENT_IGNORED = mutant(
    "incident-ignored", feature="incident", base="model:wl7318", bug="BUG#21494 (replica side)", seam="sim/applier: the SQL thread reading an incident",
    what="The replica treats an incident as a no-op",
    kills=("WL3464.R3.1", "WL3464.R3.2"))
INCIDENT_ON_ROLLBACK = mutant(
    "incident-on-rollback", feature="incident", base="model:wl7318", bug="MDEV-21443", seam="sim/source: a binlog failure",
    what="An incident for a transactional change that was rolled back",
    kills=("WL3464.NO_FALSE",))
SKIP_MID_GROUP = mutant(
    "skip-mid-group", feature="incident", base="model:wl7318", bug="BUG#28618", seam="sim/applier: the skip counter",
    what="The skip counter resumes in the middle of an event group",
    kills=("WL3464.SKIP_GROUP",))
SKIP_KEEPS_GTID_POSITION = mutant(
    "skip-keeps-gtid-position", feature="incident", base="model:wl7318", bug="MariaDB 0b4231e9", seam="sim/applier: the skip counter",
    what="A skipped group's GTID is not recorded, so it comes back",
    kills=("WL3464.GTID_SKIP",))

# -- global group IDs and crash recovery --------------------------------------------------------
NO_HALT_ON_LOWER_ID = mutant(
    "no-halt-on-lower-id", feature="groupid", base="model:groupid", bug="hierarchical-replication design: replay after a crash between binlog write and engine commit", seam="sim/hierarchy: the halt rule",
    what="The halt-on-lower-ID rule switched off: a slave that crashed between binlog write and engine commit plays the recovered group again",
    kills=("GGID.RECOVERY.EXACTLY_ONCE", "GGID.RECOVERY.HALT"))
HALT_STRICTLY_LOWER = mutant(
    "halt-strictly-lower", feature="groupid", base="model:groupid", bug="hierarchical-replication design: halt rule worded as 'a lower group_id'", seam="sim/hierarchy: the halt rule",
    what="The halt rule as the design words it (a lower ID): the replayed group carries the same ID as the binlog's last, so it is played twice",
    kills=("GGID.RECOVERY.EXACTLY_ONCE", "GGID.RECOVERY.HALT"))
RECOVERY_IGNORES_INDEX = mutant(
    "recovery-ignores-index", feature="recovery", base="model:groupid", bug="Bug #113489, MDEV-6391 (analogue)", seam="sim/hierarchy: start-up recovery of the group ID",
    what="Recovery of a dirty binlog holding only its FDE starts from group ID 0 instead of the file's index entry, so IDs are issued again",
    kills=("GGID.UNIQUE", "GGID.RECOVERY.LAST_ID"))
STOP_EVENT = mutant(
    "stop-event", feature="groupid", base="model:groupid", bug="hierarchical-replication design: Stop_log_event under --rpl-hierarchical", seam="sim/hierarchy: shutdown",
    what="A Stop event at shutdown under --rpl-hierarchical consumes a group ID (the design stopped writing it)",
    kills=("GGID.NO_STOP_EVENT",))
GROUP_ID_BEFORE_BINLOG_LOCK = mutant(
    "group-id-before-binlog-lock", feature="groupid", base="model:groupid",
    bug="MDEV-35570 (analogue: a GTID binlogged out of its order); the design takes IDs under LOCK_log so that they are sequential",
    seam="sim/hierarchy: issuing a client commit's ID",
    what="The root master takes a transaction's group ID when it begins, outside the binlog lock: one that began earlier and commits later writes a lower ID after a higher one",
    kills=("GGID.MONOTONIC",))
PURGE_SILENT_SKIP = mutant(
    "purge-silent-skip", feature="groupid", base="model:groupid", bug="known bugs §1.2 (exact diff on connect): a dump that resumes at the oldest remaining binlog", seam="sim/dump: where the dump thread starts",
    what="A slave whose next event is in a purged binlog is not refused: the dump thread starts at the oldest binlog left, and the purged groups are never applied",
    kills=("GGID.PURGE.NO_SKIP", "GGID.RECOVERY.EXACTLY_ONCE"))
CONNECT_IGNORES_SERVER_ID = mutant(
    "connect-ignores-server-id", feature="groupid", base="model:groupid", bug="rpl_hier step 12: a slave with an alternate future", seam="sim/hierarchy: a connect by group ID",
    what="CONNECT_USING_GROUP_ID matches the group ID only: a slave whose last group came from another server is placed after the master's group with that ID, and diverges silently",
    kills=("GGID.CONNECT_BY_ID",))

# -- GTID domains: where a GTID connect starts ---------------------------------------------------
START_BINLOG_ANY_ENTRY = mutant(
    "start-binlog-any-entry", feature="domains", base="model:mariadb-10.11", bug="MDEV-4473",
    seam="sim/domains: where a GTID dump starts (contains_all_slave_gtid)",
    what="A GTID connect starts at the binlog whose Gtid_list holds the requested GTID anywhere in its "
         "domain, not only as the domain's last: the later GTIDs of another server in that domain, in "
         "the binlog before, are never sent",
    kills=("DOMAIN.CONNECT.NO_LOSS",))

# -- events one at a time: partial groups in the relay log --------------------------------------
GTID_RECEIVED_AT_FIRST_EVENT = mutant(
    "gtid-received-at-first-event", feature="partial", base="model:mariadb-10.11", bug="Bug #69943 (dup. #69758)", seam="sim/receiver: the IO thread's received set",
    what="A group counts as received at its GTID event: a reconnect inside it asks past it, and the whole group is lost",
    kills=("PARTIAL.IO_POS.WHOLE", "GGID.RECOVERY.EXACTLY_ONCE"))
ROTATE_MID_GROUP = mutant(
    "rotate-mid-group", feature="partial", base="model:wl7318", bug="Bug #72313", seam="sim/applier: the SQL thread passing an event in no group",
    what="A Rotate (or other event in no group) inside a group moves the group position: a restart resumes in the middle of the group",
    kills=("PARTIAL.GROUP.WHOLE",))
PARTIAL_COPY_KEPT = mutant(
    "partial-copy-kept", feature="partial", base="model:wl7318", bug="known bugs §1.2 (complete transactions only): the partial copy a GTID reconnect leaves, which MySQL's FDE rollback handles", seam="sim/applier: the SQL thread reading a format description event inside a group",
    what="The partial copy of a group is not rolled back at the source's format description event: the full copy is applied on top of it",
    kills=("PARTIAL.GROUP.WHOLE",))

# -- binlog durability and crash kinds --------------------------------
GTID_STATE_LAGS_BINLOG = mutant(
    "gtid-state-lags-binlog", feature="recovery", base="model:wl7318", bug="Bug #113489 (+ #90137, #80393)", seam="sim/lifecycle: crash recovery's GTID state",
    what="After a crash the GTID allocator starts from the state saved at the last binlog rotation, ignoring the newest binlog's GTIDs, so their numbers are issued again",
    kills=("DURABLE.GTID.NO_REUSE",))
SEND_BEFORE_SYNC = mutant(
    "send-before-sync", feature="recovery", base="model:wl7318", bug="sync_binlog = 1 promise (MySQL binlog.cc update_binlog_end_pos_after_sync)", seam="sim/source: what the dump threads may read",
    what="With sync_binlog = 1 the dump thread sends a group written but not yet synced: a machine crash then loses on the source what a replica holds",
    kills=("DURABLE.SEND.SYNCED",))

# -- GTID state durability ---------------------------------------------
STATE_FILE_MISSING_EMPTY = mutant(
    "state-file-missing-empty", feature="recovery", base="model:mariadb-10.11", bug="MDEV-6391", seam="sim/lifecycle: start-up after a clean shutdown",
    what="After a clean shutdown whose .state file is gone, the binlog GTID state starts empty instead of being rebuilt from the last binlog: gtid_binlog_pos is wrong and sequence numbers are issued again",
    kills=("DURABLE.GTID.STATE_AT_START", "DURABLE.GTID.NO_REUSE"))

# -- errors on the source ----------------------------------------------
FAILED_CHANGE_NOT_LOGGED = mutant(
    "failed-change-not-logged", feature="srcerr", base="model:groupid", bug="Bug #13270, Bug #23333 (MariaDB sql_update.cc: 'The query has to binlog because there's a modified non-transactional table')", seam="sim/srcerr: a statement that fails part-way",
    what="A statement that fails after changing a non-transactional table (or a DDL after part of its work) is not binlogged: its change stays on the source and never reaches a replica",
    kills=("SRCERR.BINLOG.CHANGES",))

# -- recovery of a semi-sync primary ------------------------------------
RECOVERY_KEEPS_IN_DOUBT = mutant(
    "recovery-keeps-in-doubt", feature="semisync", base="model:wl7318", bug="MDEV-21117", seam="sim/lifecycle: crash recovery as a replica",
    what="A crashed semi-sync primary restarted as a replica (--init-rpl-role=SLAVE) recovers as a primary: it commits the "
         "transactions binlogged but never acknowledged, which its new primary never had (errant transactions)",
    kills=("MARIADB.SEMISYNC.RECOVERY.NO_ERRANT",))


# -- the parallel applier (model/parallel.py) ---------------------------------------------------
COMMIT_ORDER_LOST = mutant(
    "commit-order-lost", feature="parallel", base="model:mariadb-10.11",
    bug="commit order not kept by a parallel applier that promises it (MariaDB rpl_parallel.cc wait_for_prior_commit; "
        "MySQL replica_preserve_commit_order, Commit_order_manager)",
    seam="sim/workers: a group queued to a worker",
    what="A worker commits its group as soon as it is done, before the groups queued ahead of it in its domain",
    kills=("PARALLEL.COMMIT.ORDER",))
CAUGHT_UP_WITH_WORKERS_BUSY = mutant(
    "caught-up-with-workers-busy", feature="parallel", base="model:mariadb-10.11", bug="MDEV-29639 / MDEV-32265 (D8, parallel form)",
    seam="sim/workers: the coordinator at the end of the relay log",
    what="The SQL driver thread reports caught up once it has read the relay log out, while workers still execute and commit groups",
    kills=("PARALLEL.SBM.PENDING",))
MTS_GAPS_NOT_FILLED = mutant(
    # on 5.7, the bug's release line: 8.0.26+ computes no gaps under GTID auto-position (mechanics
    # mts_gaps_under_auto_position), where the bug has nothing to act on
    "mts-gaps-not-filled", feature="parallel", base="model:mysql-5.7", bug="Bug #77496 (MTS recovery of gaps after a crash)",
    seam="sim/applier: the coordinator reading a group MTS recovery marked",
    what="After a crash, the coordinator restarts from the low-water mark and applies again the groups workers had committed past it",
    kills=("PARALLEL.RECOVERY.GAPS", "GGID.RECOVERY.EXACTLY_ONCE"))
UNTIL_GIVES_UP_QUEUED = mutant(
    "until-gives-up-queued", feature="parallel", base="model:mariadb-10.11",
    bug="stop_for_until ignored (MariaDB rpl_parallel.cc: handle_queued_pos_update and do_gco_wait treat an UNTIL stop apart from STOP SLAVE)",
    seam="sim/workers: the workers drained at an UNTIL stop",
    what="The UNTIL stop gives up the groups queued before the position and not yet started, as STOP SLAVE does",
    kills=("PARALLEL.UNTIL",))

DELAY_SKIPPED_WHILE_WORKERS_BUSY = mutant(
    "delay-skipped-while-workers-busy", feature="parallel", base="model:mariadb-10.11",
    bug="MASTER_DELAY taken only by an idle parallel applier: the wait put in the branch for the first group "
        "after the applier idled (where MDEV-17516/MDEV-29639 read the lag, sql/slave.cc exec_relay_log_event), not "
        "before every group is queued (sql_delay_event before rpl_parallel::do_event; MySQL apply_event_and_update_pos)",
    seam="sim/applier: the coordinator's MASTER_DELAY wait",
    what="A group the coordinator reads while workers still hold earlier ones is queued at once, without its MASTER_DELAY wait",
    kills=("PARALLEL.DELAY",))

# -- multi-source replication (model/multisource.py) ---------------------------------------------
IGNORE_DUPLICATES_RACE = mutant(
    "ignore-duplicates-race", feature="multisource", base="model:mariadb-10.11",
    bug="MDEV-8354 (out-of-order error with --gtid-ignore-duplicates: another multi-source connection re-applied the same GTID)",
    seam="sim/duplicates: a named connection at a group's GTID (rpl_slave_state::check_duplicate_gtid)",
    what="With gtid_ignore_duplicates a connection does not wait while another connection applies a group of "
         "the same domain: both apply the GTID that is not yet in gtid_slave_pos",
    kills=("MULTISOURCE.IGNORE_DUPLICATES.ONCE",))

# -- historical bugs added to measure the generic search on bugs no step was written for ----------
RLI_WRITTEN_AFTER_COMMIT = mutant(
    "rli-written-after-commit", feature="recovery", base="model:mysql-5.7",
    bug="Bug #26540 (G1: relay-log.info out of sync after a crash; MySQL 5.0, fixed by crash-safe replication in 5.6)",
    seam="sim/rli: relay-log.info written after the engine commit",
    what="The applier commits a group in the engine and only then writes relay-log.info: a crash between the two "
         "loses the write, and the restarted SQL thread applies the group again",
    kills=("GGID.RECOVERY.EXACTLY_ONCE",))
BINLOG_WRITE_ERROR_IGNORED = mutant(
    "binlog-write-error-ignored", feature="incident", base="model:mysql-5.7",
    bug="Bug #68953 (I5: an error of MYSQL_BIN_LOG::do_write_cache ignored; MySQL 5.5.43, 5.6.10-5.6.12)",
    seam="sim/source: a binlog failure",
    what="A statement whose binlog write fails commits and returns OK: the binlog lacks it and no incident marks the gap",
    kills=("WL3464.GAP",))
DISK_FULL_FAILS_WRITE = mutant(
    "disk-full-fails-write", feature="incident", base="model:mariadb-10.11",
    bug="FB8-136 (facebook/mysql-5.6 pull request 964: a binlog cache write on a full disk failed the commit where the binlog's "
        "own write waited; Percona PS-1107, Bug #72457: the same failure could corrupt the binlog)",
    seam="sim/source: a binlog write on a full disk",
    what="A binlog write that meets a full disk fails as a write error instead of waiting for space: a transactional "
         "commit is rolled back with ER_ERROR_ON_WRITE, a non-transactional one kept and marked by an incident",
    kills=("WL3464.DISK_FULL",))
MASTER_FDE_LAG = mutant(
    "master-fde-lag", feature="lag", base="model:mysql-5.7",
    bug="Bug #66921 (Seconds_behind_master distorted because of verbatim master's FDE in relaylog)",
    seam="sim/applier: the SQL thread reading an event's timestamp",
    what="The master's format description event, stamped when its binlog began, becomes last_master_timestamp, "
         "also its copy at the start of each new relay log: Seconds_Behind_Master jumps back to the binlog's start",
    kills=("SBM.NO_JUMP", "PARALLEL.SBM.VALUE"))
PARALLEL_LAG_FROM_LAST_COMMIT = mutant(
    "parallel-lag-from-last-commit", feature="parallel", base="model:mariadb-10.11",
    bug="MDEV-17516 (replication lag spikes with parallel replication after an idle period)",
    seam="sim/applier: the SQL thread reading an event's timestamp",
    what="A parallel replica takes an event's timestamp only when its group commits, also for the first group after "
         "it idled: the lag is counted from the last commit before the idle period",
    kills=("PARALLEL.SBM.VALUE",))
MTS_LAG_ZERO_AFTER_IDLE = mutant(
    "mts-lag-zero-after-idle", feature="parallel", base="model:mysql-5.7",
    bug="Bug #84415 (slave don't report Seconds_Behind_Master when running slave_parallel_workers > 0)",
    seam="sim/workers: the checkpoint that retires committed groups",
    what="When the last queued group commits, last_master_timestamp is reset to 0, and a group read afterwards "
         "does not set it: Seconds_Behind_Master shows 0 while a worker executes that group",
    kills=("PARALLEL.SBM.PENDING",))
FILTERED_DDL_GTID_LOST = mutant(
    "filtered-ddl-gtid-lost", feature="filter", base="model:wl7318",
    bug="Bug #91086 (CREATE DATABASE filtered by replicate-wild-do-table leaves its GTID out of gtid_executed)",
    seam="sim/applier: the SQL thread passing a filtered group",
    what="A filtered group that is one DDL statement is passed without recording its GTID",
    kills=("FILTER.GTID.ADVANCES",))
PARALLEL_EXEC_POS_NOT_AT_ROTATE = mutant(
    "parallel-exec-pos-not-at-rotate", feature="parallel", base="model:mariadb-10.11",
    bug="MDEV-5938 (Exec_master_log_pos not updated at log rotate in parallel replication)",
    seam="sim/applier: the SQL thread passing an event in no group",
    what="With workers, the master's Rotate does not move Relay_Master_Log_File/Exec_Master_Log_Pos",
    kills=("WL3464.HOLD",))
PARALLEL_RESTART_PAST_GIVEN_UP = mutant(
    "parallel-restart-past-given-up", feature="parallel", base="model:mariadb-10.11",
    bug="MDEV-6589 (incorrect relay log start position when restarting the SQL thread after an error in parallel replication)",
    seam="sim/workers: the workers drained at a stop",
    what="The groups the workers gave up at a stop are not read again: the SQL thread restarts after them",
    kills=("GGID.RECOVERY.EXACTLY_ONCE",))
SEMISYNC_WAITS_WHILE_DISABLED = mutant(
    "semisync-waits-while-disabled", feature="semisync", base="model:wl7318",
    bug="Bug #80122 (semi-sync is ON, or partially so, when the slaves are ON but the master is OFF)",
    seam="semisync: a commit's wait",
    what="A master with rpl_semi_sync_master_enabled OFF still makes commits wait for acks while a semi-sync replica is connected",
    kills=("WL1720.OFF.NO_WAIT",))
