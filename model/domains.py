"""MariaDB GTID domains: per-domain sequence numbers, gtid_strict_mode, and where a master's dump
thread starts for a slave that connects by GTID position (one GTID per domain).

Pure functions over GTID tuples (domain, server_id, seq_no); the simulator (model/sim/dump.py, source.py) calls
them. Each follows the MariaDB 10.11 source named in its docstring.
"""
from __future__ import annotations

from typing import Iterable

Gtid = tuple[int, int, int]  # (domain_id, server_id, seq_no)

ER_GTID_STRICT_OUT_OF_ORDER = 1950
ER_INCORRECT_GTID_STATE = 1941  # "Could not parse GTID list"
ER_DUPLICATE_GTID_DOMAIN = 1943
ER_MASTER_GTID_POS_CONFLICTS_WITH_BINLOG = 1947
ER_MASTER_GTID_POS_MISSING_DOMAIN = 1948
GTID_SLAVE_POS, GTID_BINLOG_STATE = "gtid_slave_pos", "gtid_binlog_state"
ER_BINLOG_MUST_BE_EMPTY = 1956
ER_BINLOG_CANT_DELETE_GTID_DOMAIN = 1076  # its error and its warnings alike
ER_UNTIL_REQUIRES_USING_GTID = 1949
GTID_DOMAIN_ID, GTID_STRICT_MODE = "gtid_domain_id", "gtid_strict_mode"  # server variables
VARIABLES = (GTID_DOMAIN_ID, GTID_STRICT_MODE)


def gtid_list(logged: Iterable[Gtid]) -> list[Gtid]:
    """The binlog state as a Gtid_list event holds it, from the GTIDs logged so far in order: per
    domain (sorted by domain) the last GTID of each server_id, the domain's last logged GTID last
    (rpl_binlog_state::get_gtid_list; contains_all_slave_gtid relies on that order)."""
    per: dict[int, dict[int, Gtid]] = {}
    for g in logged:
        log_gtid(per, g)
    return listed(per)


def log_gtid(per: dict[int, dict[int, Gtid]], g: Gtid) -> None:
    """One GTID logged into a binlog state kept per domain and server_id (gtid_list's, built as the
    binlog grows: a dump thread reads the state at each binlog's head without starting over)."""
    servers = per.setdefault(g[0], {})
    servers.pop(g[1], None)  # re-inserted: the domain's most recent one goes last
    servers[g[1]] = g


def listed(per: dict[int, dict[int, Gtid]]) -> list[Gtid]:
    """The Gtid_list of a binlog state kept by log_gtid."""
    return [g for d in sorted(per) for g in per[d].values()]


def parse_gtid_state(text: str) -> list[Gtid] | None:
    """A GTID list as gtid_parse_string_to_list reads it (rpl_gtid.cc, gtid_parser_helper: unsigned
    numbers joined by '-', GTIDs by ',', spaces allowed around each), several per domain allowed
    (SET GLOBAL gtid_binlog_state); None when it cannot be parsed (ER_INCORRECT_GTID_STATE)."""
    out: list[Gtid] = []
    for item in ([] if not text.strip() else text.split(",")):
        parts = item.strip().split("-")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            return None
        out.append((int(parts[0]), int(parts[1]), int(parts[2])))
    return out


def parse_gtid_list(text: str) -> dict[int, Gtid] | tuple[int, str]:
    """SET GLOBAL gtid_slave_pos's value as slave_connection_state::load reads it: its GTID per
    domain, or (errno, message) for a list it cannot parse (ER_INCORRECT_GTID_STATE) or one naming a
    domain twice (ER_DUPLICATE_GTID_DOMAIN)."""
    gtids = parse_gtid_state(text)
    if gtids is None:
        return ER_INCORRECT_GTID_STATE, "Could not parse GTID list"
    out: dict[int, Gtid] = {}
    for g in gtids:
        if g[0] in out:
            return ER_DUPLICATE_GTID_DOMAIN, (f"GTID {g[0]}-{g[1]}-{g[2]} and {g[0]}-{out[g[0]][1]}-{out[g[0]][2]} "
                                              f"conflict (duplicate domain id {g[0]})")
        out[g[0]] = g
    return out


def slave_pos_conflict(wanted: dict[int, Gtid], binlog_last: Iterable[Gtid], server_id: int,
                       strict: bool) -> tuple[int | None, int | None, str]:
    """rpl_gtid_pos_check (sql_repl.cc), SET GLOBAL gtid_slave_pos against the server's own binlog:
    per domain its most recent binlogged GTID, when this server wrote it, must not be newer than the
    position asked for, nor its domain missing from it (an out-of-order binlog for anyone replicating
    from here). Under gtid_strict_mode the first such domain is an error, else a warning (the first of
    each kind; the answer carries one). (errno, warning, message)."""
    suffix = ". If MASTER_GTID_POS=CURRENT_POS is used, the binlog position will override the new value of @@gtid_slave_pos"
    notes: list[tuple[int, str]] = []
    for b in binlog_last:
        if b[1] != server_id:
            continue
        s = wanted.get(b[0])
        if s is None:
            notes.append((ER_MASTER_GTID_POS_MISSING_DOMAIN,
                          f"Specified value for @@gtid_slave_pos contains no value for replication domain {b[0]}. "
                          f"This conflicts with the binary log which contains GTID {b[0]}-{b[1]}-{b[2]}" + suffix))
        elif s[2] < b[2]:
            notes.append((ER_MASTER_GTID_POS_CONFLICTS_WITH_BINLOG,
                          f"Specified GTID {s[0]}-{s[1]}-{s[2]} conflicts with the binary log which contains a more "
                          f"recent GTID {b[0]}-{b[1]}-{b[2]}" + suffix))
        else:
            continue
        if strict:
            return notes[-1][0], None, notes[-1][1]
    return (None, notes[0][0], notes[0][1]) if notes else (None, None, "")


def contains_all_slave_gtid(state: dict[int, Gtid], glist: list[Gtid], last_only: bool = True) -> bool:
    """sql_repl.cc, contains_all_slave_gtid: whether the slave's position lies in or after the
    binlog that starts with this Gtid_list. Not if a domain of the list is missing from the
    position (the slave needs it from its first GTID), or the position's GTID of a domain is
    before the list's entry of the same server_id; equal only if that entry is the domain's last
    (last_only: MDEV-4473's fix; without it, a later GTID of another server in the same domain,
    logged in an earlier binlog, is skipped)."""
    for i, (d, s, n) in enumerate(glist):
        want = state.get(d)
        if want is None:
            return False
        if want[1] == s and want[2] <= n:
            if want[2] < n:
                return False
            if last_only and i + 1 < len(glist) and glist[i + 1][0] == d:
                return False
    return True


def find_binlog_file(files: list[tuple[str, list[Gtid]]], state: dict[int, Gtid],
                     last_only: bool = True) -> tuple[str | None, dict[int, Gtid]]:
    """sql_repl.cc, gtid_find_binlog_file: from the newest binlog back, the first whose Gtid_list
    contains the slave's position; a domain whose requested GTID is that list's entry is dropped
    from the state (nothing to skip there). (None, state) when no binlog does: the slave's
    position is too old, its binlogs purged."""
    for name, glist in reversed(files):
        if contains_all_slave_gtid(state, glist, last_only):
            kept = dict(state)
            for g in glist:
                if kept.get(g[0]) == g:
                    del kept[g[0]]
            return name, kept
    return None, state


def _not_in_binlog(want: Gtid, have: dict[int, Gtid]) -> str:
    """mysql_binlog_send's text for ER_GTID_POSITION_NOT_FOUND_IN_BINLOG (...2 when the master's binlog
    has a higher sequence number in the domain: give_error_start_pos_missing_in_binlog)."""
    text = (f"Error: connecting slave requested to start from GTID {want[0]}-{want[1]}-{want[2]}, "
            "which is not in the master's binlog")
    if have and max(g[2] for g in have.values()) >= want[2]:
        text += (". Since the master's binlog contains GTIDs with higher sequence numbers, it probably "
                 "means that the slave has diverged due to executing extra erroneous transactions")
    return text


def start_position(state: dict[int, Gtid], binlog_state: list[Gtid], own_slave_pos: dict[int, Gtid],
                   master_id: int) -> tuple[str | None, dict[int, Gtid], set[int]]:
    """sql_repl.cc, check_slave_start_position: the master refuses a requested GTID its binlog state
    lacks (no GTID of that server_id with that seq_no or later in the domain), unless the domain is
    empty on the master (served by another master: checked again when a group of it comes,
    START_ON_EMPTY_DOMAIN) or the GTID is the master's own gtid_slave_pos (it replicated it without
    logging it): then it starts after its own first later GTID, or after the domain's last, or
    anywhere in a domain it has nothing of. The error text, else the state to skip by and the
    domains to check again."""
    out, empty = dict(state), set()
    for d in sorted(state):
        want = state[d]
        have = {g[1]: g for g in binlog_state if g[0] == d}
        if want[1] in have and have[want[1]][2] >= want[2]:
            continue
        if own_slave_pos.get(d) != want:
            if not have:
                empty.add(d)
                continue
            return _not_in_binlog(want, have), state, empty
        if master_id in have and have[master_id][2] > want[2]:
            out[d] = (d, master_id, want[2])
        elif have:
            out[d] = [g for g in binlog_state if g[0] == d][-1]
        else:
            del out[d]
    return None, out, empty


def empty_domain_error(state: dict[int, Gtid], empty: set[int], g: Gtid, binlog_state: list[Gtid]) -> str | None:
    """sql_repl.cc, send_event_to_slave: the first group of a domain the master had nothing of when the
    slave connected: the requested GTID must now be in its binlog state, else the dump fails as
    check_slave_start_position would have. Mutates `empty`."""
    if g[0] not in empty:
        return None
    empty.discard(g[0])
    want = state.get(g[0])
    have = {x[1]: x for x in binlog_state if x[0] == g[0]}
    if want is None or (want[1] in have and have[want[1]][2] >= want[2]):
        return None
    return _not_in_binlog(want, have)


def start_hole(state: dict[int, Gtid], g: Gtid) -> str | None:
    """sql_repl.cc, send_event_to_slave: with the slave's gtid_strict_mode, the requested GTID's
    server logged a later seq_no in the domain but not the requested one (ER_GTID_START_FROM_BINLOG_HOLE)."""
    want = state.get(g[0])
    if want is None or g[1] != want[1] or g[2] <= want[2]:
        return None
    return (f"The binlog on the master is missing the GTID {want[0]}-{want[1]}-{want[2]} requested by the slave "
            "(even though both a prior and a subsequent sequence number does exist), and GTID strict mode is enabled")


def skips(state: dict[int, Gtid], g: Gtid) -> bool:
    """sql_repl.cc, send_event_to_slave: a group of a domain still in the slave's state is skipped
    unless it is of the requested server_id and after the requested seq_no; reaching that server's
    requested seq_no (or passing it) takes the domain out of the state. Mutates `state`."""
    want = state.get(g[0])
    if want is None:
        return False
    skip = g[1] != want[1] or g[2] <= want[2]
    if g[1] == want[1] and g[2] >= want[2]:
        del state[g[0]]
    return skip


def strict_out_of_order(last: Gtid | None, g: Gtid) -> str | None:
    """rpl_gtid.cc, rpl_binlog_state::check_strict_sequence: with gtid_strict_mode a GTID whose
    seq_no is not above the last one logged in its domain is refused (ER_GTID_STRICT_OUT_OF_ORDER)."""
    if last is None or last[2] < g[2]:
        return None
    return (f"An attempt was made to binlog GTID {g[0]}-{g[1]}-{g[2]} which would create an out-of-order sequence "
            f"number with existing GTID {last[0]}-{last[1]}-{last[2]}, and gtid strict mode is enabled")


def syntax_error(server: str, near: str) -> str:
    """ER_PARSE_ERROR's text (errmsg-utf8.txt: ER_SYNTAX_ERROR's, then "near '%-.80s' at line %d")."""
    return (f"You have an error in your SQL syntax; check the manual that corresponds to your {server} server "
            f"version for the right syntax to use near '{near[:80]}' at line 1")


def drop_domains(ids: Iterable[int], state: dict[int, dict[int, Gtid]], earliest: list[Gtid]) -> tuple[str, list[str]]:
    """FLUSH BINARY LOGS DELETE_DOMAIN_ID (rpl_binlog_state::drop_domain, rpl_gtid.cc, called by
    MYSQL_BIN_LOG::do_delete_gtid_domain, log.cc): (the error's reason or "", the warnings). `state`
    is the binlog state by log_gtid, `earliest` the Gtid_list at the head of the oldest binlog kept.
    First each GTID of that list the state lost or lowered is warned of; then a domain the state
    lacks is warned of and passed over, and one with a GTID the earliest list does not hold (so some
    binlog kept may hold it) refuses the whole statement, nothing deleted
    (binlog_flush_binlogs_delete_domain.result)."""
    warnings = []
    for g in earliest:
        now = state.get(g[0], {}).get(g[1])
        if now is None:
            warnings.append(f"The current gtid binlog state is incompatible with a former one missing gtids from the "
                            f"'{g[0]}-{g[1]}' domain-server pair which is referred to in the gtid list describing an "
                            f"earlier state. Ignore if the domain ('{g[0]}') was already explicitly deleted.")
        elif now[2] < g[2]:
            warnings.append(f"The current gtid binlog state is incompatible with a former one having a gtid "
                            f"'{now[0]}-{now[1]}-{now[2]}' which is less than the '{g[0]}-{g[1]}-{g[2]}' of the gtid "
                            "list describing an earlier state. The state may have been affected by manually "
                            "injecting a lower sequence number gtid or via replication.")
    for d in ids:
        if d not in state:
            warnings.append(f"The gtid domain being deleted ('{d}') is not in the current binlog state")
        elif any(g not in earliest for g in state[d].values()):
            return (f"binlog files may contain gtids from the domain ('{d}') being deleted. Make sure to first purge "
                    "those files"), warnings
    return "", warnings

