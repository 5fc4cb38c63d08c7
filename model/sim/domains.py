"""GTID domains as MariaDB has them, as a component: its dump thread placing a GTID request per
domain (the rules are model/domains.py's) and skipping each domain's groups up to the requested
GTID as it sends, and gtid_strict_mode refusing a GTID out of its domain's order. A feature on the
core's hooks, for the systems whose mechanics have GTID domains.
"""
from __future__ import annotations

from typing import Any

from replcheck.spec import formats as F
from replcheck.spec.formats import BINLOG_START

from .. import domains as DOM
from .. import multisource as MS
from .. import mutants as M
from ..mechanics import MARIADB
from .admin import on_off
from .component import Feature
from .state import ER_FLUSH_MASTER_BINLOG_CLOSED, ER_SLAVE_MUST_STOP, Channel, Entry, Node

SKIP = "skip"  # on_dump_event: the dump thread passes the event over
ER_PARSE_ERROR = 1064


class Domains(Feature):
    """MariaDB's GTID domains: the dump thread's per-domain request, gtid_strict_mode."""

    def place_gtid_request(self, ch: Channel) -> tuple[bool, str | None]:
        """(whether the feature places it, the reason it refuses or None)."""
        if not self.mech.gtid_domains:
            return False, None
        return True, self._place(ch)

    def _place(self, ch: Channel) -> str | None:
        """MariaDB's dump thread placing a GTID request (sql_repl.cc, mysql_binlog_send): the slave
        asks with its GTID per domain (gtid_slave_pos and what its relay log holds whole); the master
        checks it against its binlog state (check_slave_start_position), picks the binlog to start
        from by the Gtid_list events at the binlogs' heads (gtid_find_binlog_file), and skips each
        domain's groups up to the requested GTID (send_event_to_slave), here up to the first group
        it sends (ch.fetch; the rest in on_dump_event). The reason it refuses, or None."""
        src, node = ch.source, ch.node
        state = {d: F.parse_gtid(g) for d, g in node.slave_gtids.items()}
        whole = M.GTID_RECEIVED_AT_FIRST_EVENT not in self.mutants  # Bug #69943: a group counted at its GTID event
        for e in ch.relay[self.receiver.held_from(ch, ch.group_start):]:
            if e.ev.gtid and (e.ev.last or (e.ev.idx == 0 and not whole)):
                state[F.parse_gtid(e.ev.gtid)[0]] = F.parse_gtid(e.ev.gtid)
        ch.gtid_request = F.format_pos({d: F.gtid(*g) for d, g in state.items()})
        files, per = self.gtid_lists(src)
        binlog_state = DOM.listed(per)
        own_slave_pos = {d: F.parse_gtid(g) for d, g in src.slave_gtids.items()}
        # check_slave_start_position: a request at the master's own slave position is flagged
        # START_OWN_SLAVE_POS, which spares it the strict slave's hole error (it may be in no binlog)
        own = {d for d, g in state.items() if own_slave_pos.get(d) == g}
        reached = self._until_before_start(ch, state, binlog_state, own_slave_pos) | self._ahead_by_choice(node, state, binlog_state,
                                                                                                          own_slave_pos)
        refused, kept, empty = DOM.start_position({d: g for d, g in state.items() if d not in reached}, binlog_state,
                                                  own_slave_pos, src.server_id)
        if refused is not None:
            return refused
        state = {**kept, **{d: state[d] for d in reached}}
        name, state = DOM.find_binlog_file(files, state, M.START_BINLOG_ANY_ENTRY not in self.mutants)
        if name is None:
            return ("Could not find GTID state requested by slave in any binlog files. Probably the slave state "
                    "is too old and required binlog files have been purged.")
        strict = bool(node.runtime.get(DOM.GTID_STRICT_MODE))
        i = src.file_start[name]
        while i < len(src.binlog):
            e = src.binlog[i]
            if e.ev.gtid and e.ev.idx == 0:
                g = F.parse_gtid(e.ev.gtid)
                if strict and g[0] not in own and (hole := DOM.start_hole(state, g)):
                    return hole
                if failed := DOM.empty_domain_error(state, empty, g, binlog_state):
                    return failed
                if not DOM.skips(state, g):
                    break
            i += 1
        ch.fetch, ch.dump_state, ch.dump_empty, ch.dump_own = i, state, empty, own
        return None

    @staticmethod
    def _until_before_start(ch: Channel, state: dict, binlog_state: list, own_slave_pos: dict) -> set[int]:
        """The domains whose requested GTID the master's binlog lacks but whose START SLAVE UNTIL
        master_gtid_pos stop is before it: the UNTIL leaves the domain out, or names a GTID the binlog
        state holds. sql_repl.cc, check_slave_start_position: "the stop position is before the start
        position", no error; the domain has reached its UNTIL (rpl_gtid_master_promote.result: a slave
        past another slave in a domain pulls from it UNTIL that slave's gtid_slave_pos)."""
        until = DOM.parse_gtid_list((ch.until or {}).get("master_gtid_pos", "-"))
        if not isinstance(until, dict):
            return set()
        def holds(g) -> bool:
            return any(x[0] == g[0] and x[1] == g[1] and x[2] >= g[2] for x in binlog_state)
        return {d for d, want in state.items()
                if not holds(want) and own_slave_pos.get(d) != want and any(x[0] == d for x in binlog_state)
                and (d not in until or holds(until[d]))}

    @staticmethod
    def _ahead_by_choice(node: Node, state: dict, binlog_state: list, own_slave_pos: dict) -> set[int]:
        """With the slave's gtid_ignore_duplicates (sent as @slave_gtid_ignore_duplicates, slave.cc),
        a requested GTID above the domain's last in the master's binlog is no error: the slave may have
        had it by another path (sql_repl.cc, check_slave_start_position; rpl_gtid_slave_filtering.result:
        a position filtered on the new master, so never binlogged there)."""
        if not node.runtime.get(MS.IGNORE_DUPLICATES):
            return set()
        last = {}
        for g in binlog_state:
            last[g[0]] = g  # the binlog state lists a domain's most recent GTID last
        return {d for d, want in state.items() if d in last and last[d][2] < want[2] and own_slave_pos.get(d) != want}

    def on_dump_event(self, ch: Channel, e: Entry) -> str:
        """As the dump sends: a group of a domain the request is past is skipped (SKIP); a group of a
        domain the master had nothing of fails the dump (the reason); else "" (sent)."""
        if ch.dump_state and e.ev.gtid and e.ev.idx == 0:
            g = F.parse_gtid(e.ev.gtid)
            if ch.dump_empty and (failed := DOM.empty_domain_error(ch.dump_state, ch.dump_empty, g,
                                                                  self._binlog_state(ch.source))):
                return failed
            # the strict slave's hole check runs on every group still searched for, also one that
            # comes after the connect (send_event_to_slave, ER_GTID_START_FROM_BINLOG_HOLE; the
            # slave's gtid_strict_mode as the dump reads it now, not as it was sent at the connect)
            if (ch.node.runtime.get(DOM.GTID_STRICT_MODE) and g[0] not in ch.dump_own
                    and (hole := DOM.start_hole(ch.dump_state, g))):
                return hole
            ch.dump_skipping = DOM.skips(ch.dump_state, g)
        if ch.dump_skipping and e.ev.trx is not None:
            ch.dump_skipping = not e.ev.last
            return SKIP
        return ""

    @staticmethod
    def on_connect(ch: Channel) -> None:
        ch.dump_state, ch.dump_empty, ch.dump_own, ch.dump_skipping, ch.gtid_request = {}, set(), set(), False, ""

    def refuses_binlogging(self, node: Node, gtid: str) -> str:
        """gtid_strict_mode: why this GTID may not be binlogged after its domain's last, or ""."""
        if not (self.mech.gtid_domains and node.runtime.get(DOM.GTID_STRICT_MODE)):
            return ""
        last = node.binlog_gtids.get(F.parse_gtid(gtid)[0])
        return DOM.strict_out_of_order(last and F.parse_gtid(last), F.parse_gtid(gtid)) or ""

    def on_set_global(self, node: Node, name: str, value: Any, op: dict) -> bool:
        if name == DOM.GTID_SLAVE_POS and self.mech.gtid_domains:
            self._set_slave_pos(node, value)
            return True
        if name == DOM.GTID_BINLOG_STATE and self.mech.gtid_domains:
            self._set_binlog_state(node, value)
            return True
        return self._set_strict_mode(node, name, value)

    def _set_slave_pos(self, node: Node, value: Any) -> None:
        """SET GLOBAL gtid_slave_pos (sys_vars.cc, Sys_var_gtid_slave_pos::do_check, global_update):
        refused while any slave thread of any connection runs (give_error_if_slave_running:
        ER_SLAVE_MUST_STOP), then the list parsed and checked against the binlog (rpl_gtid_pos_check),
        then the slave's position replaced by it, every domain (rpl_gtid_pos_update)."""
        def answer(errno: int | None, warning: int | None = None, message: str = "") -> None:
            self.emit("stmt", node.id, op="set_global", variable=DOM.GTID_SLAVE_POS, value=value, errno=errno,
                      warning=warning, message=message)
        running = next((c for c in MS.channels(node) if c.io_running or c.sql_running), None)
        if running is not None:
            name = running.connection or ""
            return answer(ER_SLAVE_MUST_STOP, message=f"This operation cannot be performed as you have a running "
                                                      f"slave '{name}'; run STOP SLAVE '{name}' first")
        wanted = DOM.parse_gtid_list(str(value))
        if isinstance(wanted, tuple):
            return answer(wanted[0], message=wanted[1])
        last = [F.parse_gtid(g) for g in node.binlog_gtids.values()]
        errno, warning, message = DOM.slave_pos_conflict(wanted, last, node.server_id,
                                                         bool(node.runtime.get(DOM.GTID_STRICT_MODE)))
        if errno is not None:
            return answer(errno, message=message)
        node.slave_gtids = {d: F.gtid(*g) for d, g in wanted.items()}
        node.filter_recorded = {}
        # A MariaDB slave knows what it applied only by this position: a group after it comes and
        # is applied again, whatever ran before (rpl_gtid.cc, the slave state is per domain only)
        node.executed = {g for g in node.executed if (p := F.parse_gtid(g))[0] in wanted and p[2] <= wanted[p[0]][2]}
        for g in wanted.values():  # each GTID recorded bumps the binlog's counter
            node.follow_seq(F.gtid(*g))
        answer(None, warning, message)

    def _set_binlog_state(self, node: Node, value: Any) -> None:
        """SET GLOBAL gtid_binlog_state (sys_vars.cc, Sys_var_gtid_binlog_state): only with the binlog
        open and no GTID logged since RESET MASTER (ER_BINLOG_MUST_BE_EMPTY); then a RESET MASTER
        whose new binlog starts with this state (reset_master with init_state): gtid_binlog_pos and
        the next local GTIDs follow it, and the first binlog's Gtid_list holds it."""
        def answer(errno: int | None, message: str = "") -> None:
            self.emit("stmt", node.id, op="set_global", variable=DOM.GTID_BINLOG_STATE, value=value, errno=errno,
                      warning=None, message=message)
        if not node.log_bin:
            return answer(ER_FLUSH_MASTER_BINLOG_CLOSED, "Binlog closed, cannot RESET MASTER")
        if node.binlog_gtids or node.base_gtids:
            return answer(DOM.ER_BINLOG_MUST_BE_EMPTY, "This operation is not allowed if any GTID has been logged to "
                                                       "the binary log. Run RESET MASTER first to erase the log")
        state = DOM.parse_gtid_state(str(value))
        if state is None:
            return answer(DOM.ER_INCORRECT_GTID_STATE, "Could not parse GTID list")
        self.admin.reset_binlog(node)
        # rpl_binlog_state::load: per domain the GTID listed last is its most recent, the counter its highest
        node.base_gtids = state
        node.binlog_gtids = {g[0]: F.gtid(*g) for g in state}
        node.gtid_seq = {d: max(g[2] for g in state if g[0] == d) for d in node.binlog_gtids}
        answer(None)

    def _set_strict_mode(self, node: Node, name: str, value: Any) -> bool:
        """SET GLOBAL gtid_strict_mode: a plain global boolean, settable whatever runs (sys_vars.cc,
        Sys_gtid_strict_mode: GLOBAL_VAR(opt_gtid_strict_mode), no ON_CHECK), read by the next
        binlog write and the next dump request (rpl_gtid_strict.test sets it off and on around
        START SLAVE). Measured on 10.11.19: 1 taken, 'maybe' refused with 1231."""
        if name != DOM.GTID_STRICT_MODE or not self.mech.gtid_domains:
            return False
        self.admin.take_global(node, name, value, on_off(value))
        return True

    def _binlog_state(self, node: Node) -> list[tuple[int, int, int]]:
        return DOM.listed(self.gtid_lists(node)[1])

    def on_dump_start(self, ch: Channel, by: str) -> None:
        """An IO thread connecting by position asks its master for the GTID position of that place
        (SELECT binlog_gtid_pos(file, pos)) and loads it into gtid_slave_pos, each domain it names
        taking it (get_master_version_and_clock, sql/slave.cc: "request the corresponding GTID
        position from the master, so that the user can reconnect the next time" by GTID;
        rpl_slave_state::load with reset false). Seen on 10.11.19 (rpl_gtid_startpos's MDEV-4483
        steps): gtid_slave_pos 0-42-42 became 0-1-2 at START SLAVE from bin.000002:4."""
        if by != "position" or not self.mech.gtid_domains:
            return
        state = self.gtid_lists(ch.source, until=ch.fetch)[1]
        # A place inside a group (an IO thread cut mid-group reconnects there): the master reads
        # every event before it, the group's GTID event too (gtid_state_from_pos, sql/sql_repl.cc)
        begun = next((e.ev for e in reversed(ch.source.binlog[:ch.fetch]) if e.ev.gtid), None)
        if begun is not None and not begun.last:
            DOM.log_gtid(state, F.parse_gtid(begun.gtid))
        for g in DOM.listed(state):  # each by record_gtid (rpl_slave_state::load)
            ch.node.record_slave_gtid(F.gtid(*g), self.mech.gtid_seq_follows_domain)
            ch.node.loaded_sub[g[0]] = ch.node.take_sub_id()

    @staticmethod
    def gtid_lists(node: Node, torn: bool = True, until: int | None = None) -> tuple[list[tuple[str, list[DOM.Gtid]]], dict]:
        """The Gtid_list at the head of each binlog kept, and the binlog state after the last group
        (by DOM.log_gtid), or before the binlog entry `until`; a domain DELETE_DOMAIN_ID deleted is
        gone from the binlog it opened on. `torn`: with the groups a crash cut."""
        files: list[tuple[str, list[DOM.Gtid]]] = []
        per: dict = {}
        for g in node.base_gtids:
            DOM.log_gtid(per, g)
        for i, e in enumerate(node.binlog[:until]):
            for d in node.dropped.get(i, ()):
                per.pop(d, None)
            if e.ev.type == "FORMAT_DESCRIPTION_EVENT" and e.pos == BINLOG_START and e.file not in node.purged:
                files.append((e.file, DOM.listed(per)))
            if e.ev.gtid and e.ev.last and (torn or not e.torn):
                DOM.log_gtid(per, F.parse_gtid(e.ev.gtid))
        return files, per

    def flush_delete_domain(self, node: Node, op: dict) -> bool:
        """FLUSH BINARY LOGS DELETE_DOMAIN_ID = (...) (MariaDB 10.1.8+; sql_reload.cc reload_acl_and_cache
        calls MYSQL_BIN_LOG::do_delete_gtid_domain, log.cc, with the Gtid_list of the oldest binlog
        kept, then rotates): DOM.drop_domains' error refuses it whole, ER_BINLOG_CANT_DELETE_GTID_DOMAIN;
        with no domain of the list in the state it only warns and does not rotate; an empty list is
        a plain rotation (binlog_flush_binlogs_delete_domain.result). MySQL's grammar has no such
        clause (a syntax error). False: not this statement, a plain FLUSH LOGS."""
        ids = op.get("delete_domain_id")
        if ids is None or (self.mech.gtid_domains and not ids):
            return False

        def answer(errno: int | None, warning: int | None = None, message: str = "") -> None:
            self.emit("stmt", node.id, op="flush_logs", delete_domain_id=ids, errno=errno, warning=warning, message=message)
        if not self.mech.gtid_domains:
            answer(ER_PARSE_ERROR, None, DOM.syntax_error(
                "MariaDB" if self.mech.texts == MARIADB else "MySQL", f"DELETE_DOMAIN_ID = ({', '.join(map(str, ids))})"))
            return True
        files, per = self.gtid_lists(node, torn=False)
        reason, warnings = DOM.drop_domains(ids, per, files[0][1] if files else [])
        if reason:
            answer(DOM.ER_BINLOG_CANT_DELETE_GTID_DOMAIN, None, f"Could not delete gtid domain. Reason: {reason}.")
            return True
        deleted = {d for d in ids if d in per}
        answer(None, DOM.ER_BINLOG_CANT_DELETE_GTID_DOMAIN if warnings else None, warnings[0] if warnings else "")
        if deleted:
            for d in deleted:
                node.binlog_gtids.pop(d, None)
                node.gtid_seq.pop(d, None)  # the domain's next GTID is numbered from 1 again
            self.source.op_flush_logs(node, {})
            node.dropped[node.file_start[node.binlog_file]] = frozenset(deleted)
        return True

