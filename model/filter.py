"""Replication filters: which transactions a source binlogs and sends, and which
a replica applies.

A transaction writes one table (the harness's `rc.r`, or `rc.m` for MyISAM; a DDL creates `rc.d`),
so the database and table rules decide on that one name. The simulator asks three things: does the
source binlog it (binlog-do/ignore-db), does the dump thread send it to this replica (a
@@skip_replication transaction to a replica with replicate_events_marked_for_skip=FILTER_ON_MASTER),
and does the replica's SQL thread apply or filter it (FILTER_ON_SLAVE, the replicate-* rules).
"""
from __future__ import annotations

from fnmatch import fnmatchcase

# The tables, the commit's fields and the variables' names are the Trace's vocabulary, shared with
# the harness; the simulator reads them here with the rules.
from replcheck.spec.vocabulary import MARKED, REPLICA_RULES, commit_fields, configured, table_of  # noqa: F401

REPLICATE, FILTER_ON_SLAVE, FILTER_ON_MASTER = "REPLICATE", "FILTER_ON_SLAVE", "FILTER_ON_MASTER"
SKIP_REPLICATION = "skip_replication"  # why a replica ignores a marked event


def _names(variables: dict, name: str) -> list[str]:
    return [x.strip() for x in str(variables.get(name) or "").split(",") if x.strip()]


def _db_ok(db: str, do: list[str], ignore: list[str]) -> bool:
    """Rpl_filter::db_ok (sql/rpl_filter.cc): a do list admits only its names; else an ignore
    list refuses its names; else all pass."""
    if do:
        return db in do
    return db not in ignore


def binlogged(variables: dict, table: str) -> bool:
    """binlog-do-db / binlog-ignore-db on the source: row events of a table in a filtered database
    are not written (sql/handler.cc, check_table_binlog_row_based: binlog_filter->db_ok(table's
    db)), so the transaction leaves nothing in the binlog and takes no GTID."""
    return _db_ok(table.split(".")[0], _names(variables, "binlog_do_db"), _names(variables, "binlog_ignore_db"))


def marked(variables: dict) -> str:
    return str(variables.get(MARKED) or REPLICATE).upper()


def marked_value(value: object) -> str | None:
    """What SET GLOBAL replicate_events_marked_for_skip = value sets: an enum's name in any case or
    its number (Sys_var_enum); None when it is neither."""
    names = (REPLICATE, FILTER_ON_SLAVE, FILTER_ON_MASTER)
    if isinstance(value, int) and not isinstance(value, bool):
        return names[value] if 0 <= value < len(names) else None
    return str(value).upper() if str(value).upper() in names else None


def sent(variables: dict, skip: bool) -> bool:
    """Does the dump thread send a replica with these variables an event so marked? With
    FILTER_ON_MASTER the replica's IO thread asks `SET skip_replication=1` on its connection
    (sql/slave.cc, get_master_version_and_clock) and the dump thread drops marked events
    (sql/sql_repl.cc, send_event_to_slave: LOG_EVENT_SKIP_REPLICATION_F), before the semi-sync
    header is filled, so no ack is asked for them (update_sync_header is not reached)."""
    return not (skip and marked(variables) == FILTER_ON_MASTER)


def replica_filter(variables: dict, table: str, skip: bool) -> str | None:
    """Why the replica's SQL thread does not apply a transaction: None when it applies it.
    "skip_replication": a marked event with FILTER_ON_SLAVE (or FILTER_ON_MASTER, should the
    master send it) is ignored by Log_event::do_shall_skip (sql/log_event_server.cc,
    EVENT_SKIP_IGNORE), before any MASTER_DELAY wait (slave.cc, sql_delay_event runs only for
    EVENT_SKIP_NOT). The name of a replicate-* rule: Table_map_log_event's check_table_map
    (sql/log_event_server.cc) finds the table filtered out, inside the event's apply, after the
    delay (rpl_filter.cc: db_ok, then tables_ok: do_table and ignore_table by exact name, then the
    wild rules by LIKE pattern; with a do rule and no match the table is filtered)."""
    if skip and marked(variables) != REPLICATE:
        return SKIP_REPLICATION
    if variables.keys().isdisjoint(REPLICA_RULES):  # no rule set, as on most replicas: every table applies
        return None
    db, name = table.split(".")[0], table
    if not _db_ok(db, _names(variables, "replicate_do_db"), _names(variables, "replicate_ignore_db")):
        return "replicate_do_db" if _names(variables, "replicate_do_db") else "replicate_ignore_db"
    do, ignore = _names(variables, "replicate_do_table"), _names(variables, "replicate_ignore_table")
    wild_do, wild_ignore = _names(variables, "replicate_wild_do_table"), _names(variables, "replicate_wild_ignore_table")
    if name in do:
        return None
    if name in ignore:
        return "replicate_ignore_table"
    if any(fnmatchcase(name, _like(p)) for p in wild_do):
        return None
    if any(fnmatchcase(name, _like(p)) for p in wild_ignore):
        return "replicate_wild_ignore_table"
    if do or wild_do:
        return "replicate_do_table" if do else "replicate_wild_do_table"
    return None


def _like(pattern: str) -> str:
    """A wild table rule is a LIKE pattern (% any run, _ one character); as an fnmatch pattern."""
    return "".join("*" if c == "%" else "?" if c == "_" else f"[{c}]" if c in "*?[" else c for c in pattern)
