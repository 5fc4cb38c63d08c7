"""What MariaDB 10.11's source does with a replica of several sources (multi-source replication).

A replica holds one Master_info per connection_name, each with its own IO thread, relay log,
relay-log.info, MASTER_DELAY and SQL thread (sql/rpl_mi.cc, Master_info_index; the default
connection is '', which `default_master_connection` names). A statement without a name addresses
the default connection; START ALL SLAVES and STOP ALL SLAVES address every one
(Master_info_index::start_all_slaves, stop_all_slaves). All connections share one GTID slave
state, gtid_slave_pos (sql/rpl_gtid.cc, rpl_slave_state: one entry per domain), so each
connection's GTID connect asks by the same position. With gtid_ignore_duplicates a group whose
domain already reached its sequence number is skipped, and only one connection at a time applies
groups of a domain, its owner (rpl_slave_state::check_duplicate_gtid, release_domain_owner).
"""
from __future__ import annotations

from replcheck.spec import formats as F
# A connection's fields and files are the Trace's vocabulary, shared with the harness.
from replcheck.spec.vocabulary import IGNORE_DUPLICATES, SKIP_REASON, relay_base, tagged  # noqa: F401

DEFAULT = ""  # the default connection's name
ER_SLAVE_WAS_NOT_RUNNING = 1255
ER_SLAVE_STARTED, ER_SLAVE_STOPPED = 1937, 1938  # notes of START/STOP ALL SLAVES, one per connection


def all_slaves_note(op: str, acting: list, mariadb: bool) -> tuple[int | None, str]:
    """(warning, message) of START/STOP ALL SLAVES: MariaDB notes each connection it started or
    stopped, "SLAVE 'a' started" (Master_info_index::start_all_slaves, stop_all_slaves, sql/rpl_mi.cc:
    push_warning_printf ER_SLAVE_STARTED / ER_SLAVE_STOPPED; measured on 10.11); the trace keeps the
    first. None when none acted (or not MariaDB's texts)."""
    if not acting or not mariadb:
        return None, ""
    started = op == "start_all_slaves"
    return (ER_SLAVE_STARTED if started else ER_SLAVE_STOPPED), f"SLAVE '{acting[0]}' {'started' if started else 'stopped'}"


def unconfigured_default(op: str, mariadb: bool) -> tuple[int | None, int | None, str]:
    """(errno, warning, message) of a statement for the default connection of a replica whose
    connections are all named: the server always has a default Master_info, never configured
    (measured on 10.11: STOP SLAVE notes 1255, START SLAVE fails with 1200, CHANGE MASTER TO
    MASTER_DELAY, RESET SLAVE and SET GLOBAL sql_slave_skip_counter succeed and change nothing a
    named connection shows). A named connection the replica lacks would be 1617 ("There is no
    master connection 'x'"); a History naming one is refused as bad input."""
    if op == "stop_slave":
        return None, ER_SLAVE_WAS_NOT_RUNNING, "Slave already has been stopped"
    if op == "start_slave":
        return F.ER_BAD_SLAVE, None, ("Misconfigured slave: MASTER_HOST was not set; Fix in config file or with CHANGE MASTER TO"
                                    if mariadb else "The server is not configured as slave; fix in config file or with CHANGE MASTER TO")
    return None, None, ""


def channels(node) -> list:
    """Every connection of the node, in the topology's order (SHOW ALL SLAVES STATUS's rows)."""
    if node.connections:
        return list(node.connections.values())
    return [node.channel] if node.channel is not None else []


def duplicate(node, gtid: str) -> bool:
    """check_duplicate_gtid's first test: the domain's highest applied sequence number (gtid_slave_pos)
    is at or past this GTID's."""
    domain, _, seq = F.parse_gtid(gtid)
    have = node.slave_gtids.get(domain)
    return have is not None and F.parse_gtid(have)[2] >= seq
