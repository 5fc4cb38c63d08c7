"""The mechanics a model follows where its seed is silent, or where a server departs from it: one
named switch each, set per model system in spec/systems.toml (`[system.mechanics]`). A flavour
model (`seed = "model:..."`) inherits its seed model's switches and sets those its server sets
otherwise, so a new server flavour is a systems.toml entry.

The defaults are the seed models' neutral choice: the seeds are MySQL worklogs, so where they say
nothing the seed models do what the MySQL server of the seeds' line does (the incident's rotation
of WL#3464 as written, MySQL's texts and SHOW SLAVE STATUS), with two exceptions where the seed
itself is explicit: a MASTER_DELAY is a non-negative integer (WL#344), and WL#7318's
`immediate_commit_timestamp / 1000000` is an integer division, rounded down.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

MYSQL, MARIADB = "mysql", "mariadb"


@dataclass(frozen=True)
class Mechanics:
    # An incident is followed by a rotation (WL#3464 as written; MySQL's rpl_incident.result numbers the
    # binlogs so, suite scenario my56-rpl_incident). MariaDB 10.11 goes on in the same binlog after a
    # cache overflow's incident (measured: conformance inc-cache-overflow; log.cc write_incident rotates
    # only past max_binlog_size), but rotates after its debug-injected statement incident
    # (sql_parse.cc: rotate_and_purge(true); binlog_incident.result), which rotates everywhere.
    incident_rotates: bool = True
    # A server's own next GTID in a domain follows every GTID it logged there, replicated ones too
    # (MariaDB rpl_gtid.cc: rpl_binlog_state::update_nolock bumps seq_no_counter, which
    # update_with_next_gtid allocates from), or counts only its own transactions (MySQL).
    gtid_seq_follows_domain: bool = False
    # Whose error texts: ER_SLAVE_INCIDENT 'occured' (MySQL 5.1-8.0 errmsg) or 'occurred' (MariaDB
    # errmsg-utf8.txt), ER_STMT_CACHE_FULL's tail, the server ER_PARSE_ERROR names.
    texts: str = MYSQL
    # MASTER_DELAY's literal: "integer" (the seed: a non-negative integer) or "ulong_num" (MariaDB's
    # sql_yacc.yy: decimal and float literals read up to their first non-digit, model/delay.py).
    master_delay_literal: str = "integer"
    # CHANGE MASTER is refused (ER_SLAVE_MUST_STOP) while "either" thread runs (MariaDB sql_repl.cc,
    # change_master: thread_mask), or only while the thread its options are for runs, "own-thread"
    # (MySQL 5.7.4+, WL#6120; rpl_replica.cc, change_master: MASTER_DELAY is the applier's).
    change_master_refused_while: str = "own-thread"
    # A GTID replica asks by GTID on "every" connect (MariaDB: connect_to_master sends
    # @slave_connect_state each time) or on its "first" connect and after relay-log recovery, then by
    # position (the seeds' server).
    gtid_connect: str = "first"
    # A GTID reconnect skips the events of a partial group already queued (MariaDB slave.cc,
    # gtid_reconnect_event_skip_count = events_queued_since_last_gtid); without it the partial copy
    # stays and the source's FDE before the full copy rolls it back (MySQL, exec_relay_log_event).
    gtid_reconnect_skips_queued: bool = False
    # MariaDB's GTID domains: a GTID connect is placed by the slave's position, one GTID per domain
    # (sql_repl.cc: check_slave_start_position, gtid_find_binlog_file by the binlogs' Gtid_list
    # events, send_event_to_slave skipping up to each domain's GTID; model/domains.py), and
    # gtid_strict_mode refuses out-of-order GTIDs (rpl_gtid.cc, check_strict_sequence). Without:
    # MySQL's auto-position, the source's set minus the replica's, and no strict mode.
    gtid_domains: bool = False
    # START SLAVE of both threads with GTID throws the relay logs away first (MariaDB slave.cc,
    # start_slave_threads).
    gtid_start_purges_relay: bool = False
    # CHANGE MASTER TO RELAY_LOG_FILE/POS turns GTID off, with note 4190 (MariaDB sql_repl.cc,
    # change_master: relay_log_name sets MASTER_USE_GTID=no).
    relay_log_place_turns_gtid_off: bool = False
    # Seconds_Behind_Master as "mysql" computes it (rpl_replica.cc, show_slave_status_send_data: caught
    # up is Exec == Read position; the master's FDE leaves last_master_timestamp alone,
    # exec_relay_log_event) or "mariadb" (slave.cc, send_show_master_info_data: NULL without the IO
    # thread connected, 0 while sql_thread_caught_up).
    seconds_behind_master: str = MYSQL
    # WL#7318's immediate_commit_timestamp in whole seconds, rounded "down" (the seed's integer
    # division) or "up" (MySQL 8.0 rpl_replica.cc, sql_delay_event: ceil(ict / 1000000.00)).
    commit_timestamp_rounding: str = "down"
    # Whose clock WL#7318's due time is on: the immediate master's, "compensated" by the clock difference
    # as WL#344 does for its timestamps, or the replica's own, "replica" (MySQL 8.0 rpl_replica.cc,
    # sql_delay_event compares ceil(ict) + sql_delay with time(nullptr), no clock_diff_with_master; the
    # seed's formula, WL#7318 L3, has none either).
    commit_timestamp_clock: str = "compensated"
    # A semi-sync master waits for an ack of a transaction it sends to no semi-sync replica (all of
    # them filter @@skip_replication on the master): MariaDB's log.cc registers every transaction
    # (report_binlog_update) and the dump thread drops the events before update_sync_header asks
    # for a reply (sql_repl.cc, send_event_to_slave), so the commit waits out the timeout
    # (MDEV-38486, open: MariaDB/server pull request 4978).
    semisync_waits_unsent: bool = False
    # A semi-sync replica's reconnect acknowledges what it holds: its dump starts where it asks, and
    # dump_start takes that place for its reply (WL#1720; the fix of Bug #104015: a reconnected replica
    # releases every waiter at or below its position), by GTID as by position. MariaDB's dump by GTID
    # starts at a binlog's head (gtid_find_binlog_file), and dump_start (semisync_master.cc) takes
    # that head: nothing held is acknowledged again (measured on 10.11: ss-lost-ack-reconnect).
    gtid_reconnect_acks: bool = True
    # With no semi-sync slave connected and rpl_semi_sync_master_wait_no_slave OFF, a commit "switches"
    # the master OFF (the seed: asynchronous at once; MySQL) or returns at once, counted in no_tx, with
    # the status left as it is, "keeps" (MariaDB semisync_master.cc, commit_trx: returns before any
    # wait when !rpl_semi_sync_master_clients && !rpl_semi_sync_master_wait_no_slave; measured on
    # 10.11, conformance ss-wait-no-slave: Rpl_semi_sync_master_status stays ON).
    no_slave_commit: str = "switches"
    # A statement that failed after its change was binlogged (a MyISAM write cut by a duplicate key)
    # waits for its ack before its error is answered, as any transaction's end (the seed: the master
    # waits at the end of each transaction), or answers at once and waits only when its session ends
    # the transaction, unseen by the client (MariaDB: report_binlog_update registers the group at its
    # write; the wait is wait_after_rollback's in ha_rollback_trans, sql/handler.cc, which waits only
    # at a real transaction's end, is_real_trans in wait_after_commit, sql/semisync_master.cc;
    # measured on 10.11.19: the error at once, the timeout naming its end a full timeout later).
    # AFTER_SYNC waits at the binlog sync either way.
    failed_statement_waits_at_session_end: bool = False
    # After a clean shutdown the binlog GTID state is read from the `<log-bin>.state` file written at
    # the shutdown, and rebuilt by scanning the last binlog when the file is missing (MariaDB log.cc,
    # MYSQL_BIN_LOG::do_binlog_recovery; the file is deleted once the new binlog is open,
    # MYSQL_BIN_LOG::open), or always taken from the binlogs (MySQL: gtid_executed from the last
    # binlog's Previous_gtids and GTIDs, binlog.cc MYSQL_BIN_LOG::init_gtid_sets).
    gtid_state_file: bool = False
    # A parallel GTID replica whose gtid_slave_pos has several domains stops its SQL thread at the
    # start of its oldest relay log still in use, and its next start reads from there again, passing
    # over by GTID what each domain already committed (MariaDB slave.cc, handle_slave_sql's exit:
    # restart_gtid_pos, group_relay_log_pos = BIN_LOG_HEADER_SIZE; rpl_parallel.cc,
    # process_gtid_for_restart_pos), or keeps the place of its last group (MySQL).
    parallel_stop_rewinds: bool = False
    # MTS recovery computes the gaps of a crash also under GTID_MODE=ON with auto-position (MySQL
    # 5.7 to 8.0.25, the seeds' line), or leaves them to GTID auto-skip (8.0.26+: rpl_replica.cc,
    # mts_recovery_groups returns at once "as applied transactions will be skipped due to GTIDs auto
    # skip feature", and START REPLICA UNTIL SQL_AFTER_MTS_GAPS warns 4047 from start_slave_threads).
    mts_gaps_under_auto_position: bool = True
    # A restart with relay_log_recovery after a crash that left MTS gaps fills them first, from the
    # relay log it is about to throw away: an implicit START SLAVE UNTIL SQL_AFTER_MTS_GAPS at startup,
    # then the relay log goes (MySQL 5.7.13+, Bug#21507981: rpl_replica.cc init_recovery returns while
    # mts_recovery_group_cnt is set, load_mi_and_rli_from_repositories calls fill_mts_gaps_and_recover).
    # MariaDB has no MTS recovery: its relay-log recovery throws the relay log away (rpl_rli.cc).
    relay_log_recovery_fills_mts_gaps: bool = True
    # What the replica subtracts for the master's clock: the "exact" difference (the seed, WL#344: "the
    # delay time shall be independent of any unsynchronized clocks"), or the one its IO thread
    # "measured_at_connect" in whole seconds, its time() minus the master's SELECT UNIX_TIMESTAMP(),
    # kept until the next connect (get_master_version_and_clock, MariaDB sql/slave.cc and MySQL
    # rpl_replica.cc alike; sql_delay_event counts to when + clock_diff_with_master + sql_delay, and
    # Seconds_Behind_Master subtracts it): off by up to a second with fractional clocks or a late
    # answer, and stale after either clock steps.
    clock_difference: str = "exact"
    # START SLAVE, STOP SLAVE and RESET SLAVE warn ER_WARN_DEPRECATED_SYNTAX (1287, "'RESET SLAVE' is
    # deprecated and will be removed in a future release. Please use RESET REPLICA instead"): MySQL
    # 8.0.22+, whose grammar pushes it as it parses the SLAVE spelling (sql_yacc.yy, start_replica_stmt:
    # push_deprecated_warn(YYTHD, "START SLAVE", "START REPLICA"); rpl_gtid/r/rpl_delayed_slave.result
    # shows it after RESET SLAVE). A History's ops are the SLAVE statements.
    deprecated_slave_syntax: bool = False
    # A client sets its transaction's GTID parts, gtid_domain_id, server_id and gtid_seq_no, as
    # session variables (MariaDB 10.0+ sys_vars.cc), or MySQL refuses each SET SESSION: no such
    # variable (1193), server_id global only (1229). True where the seeds are silent: the seed models
    # run the Histories of GTID domains.
    session_gtid_variables: bool = True
    # MASTER_DELAY waits only for the events of a group: an event outside any (an incident, a stop,
    # a Binlog_checkpoint, a Gtid_list) executes at once (MariaDB 10.11.19's sql_delay_event tests
    # Log_event::is_group_event, read from its build: types 1 3 4 7 15 26 27 161 163 164 exempt), or
    # every event but the seed's three exempt types waits (WL#344, MySQL).
    delay_group_events_only: bool = False

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


# The values each switch may take (a bool switch: True or False).
CHOICES: dict[str, tuple] = {
    "texts": (MYSQL, MARIADB),
    "master_delay_literal": ("integer", "ulong_num"),
    "change_master_refused_while": ("either", "own-thread"),
    "gtid_connect": ("every", "first"),
    "seconds_behind_master": (MYSQL, MARIADB),
    "commit_timestamp_rounding": ("down", "up"),
    "commit_timestamp_clock": ("compensated", "replica"),
    "no_slave_commit": ("switches", "keeps"),
    "clock_difference": ("exact", "measured_at_connect"),
}


def problem(name: str, value: object) -> str | None:
    """Why `name = value` is no mechanics setting; None when it is one."""
    known = {f.name: f for f in fields(Mechanics)}
    if name not in known:
        return f"unknown mechanic {name!r}; known: {', '.join(sorted(known))}"
    allowed = CHOICES.get(name, (True, False))
    if type(value) is not type(allowed[0]) or value not in allowed:
        return f"{value!r} is not one of {', '.join(map(repr, allowed))}"
    return None
