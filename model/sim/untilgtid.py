"""START SLAVE UNTIL master_gtid_pos (MariaDB): the statement's checks, the dump that sends only the
domains listed up to their GTIDs, and both threads stopping there. A feature on the core's hooks.

What the server does, from mysql-test/suite/rpl/r/rpl_gtid_until.result and the source it runs:
start_slave (sql/sql_repl.cc) refuses the UNTIL with a thread named (ER_BAD_SLAVE_UNTIL_COND), with a
thread running (ER_SLAVE_WAS_RUNNING, an error here), or by position (ER_UNTIL_REQUIRES_USING_GTID),
and parses the list as slave_connection_state::load does (ER_DUPLICATE_GTID_DOMAIN). The slave sends
the condition with its dump request; the master's dump thread (send_event_to_slave, until_gtid_state,
GTID_UNTIL_STOP_AFTER_TRANSACTION) sends no group of a domain not listed or already reached, and ends
the dump after the group that reaches the last domain, so the IO thread stops; the SQL thread stops
once every listed domain is reached in its gtid_slave_pos (Relay_log_info::is_until_satisfied for
UNTIL_GTID, until_gtid_pos emptied as groups commit), at once when it is at the start.
"""
from __future__ import annotations

from replcheck.spec import formats as F

from .. import domains as DOM

from .component import Feature
from .state import Channel, Entry

ER_SLAVE_WAS_RUNNING = 1254
ER_BAD_SLAVE_UNTIL_COND = 1277

GTID_POS = "master_gtid_pos"


def condition(ch: Channel) -> dict[int, DOM.Gtid] | None:
    """The channel's UNTIL master_gtid_pos by domain, or None when it has none (checked at START SLAVE)."""
    text = (ch.until or {}).get(GTID_POS)
    if text is None:
        return None
    parsed = DOM.parse_gtid_list(text)
    return parsed if isinstance(parsed, dict) else {}


def slave_pos(ch: Channel) -> dict[int, DOM.Gtid]:
    return {d: F.parse_gtid(g) for d, g in ch.node.slave_gtids.items()}


class UntilGtid(Feature):
    """START SLAVE UNTIL master_gtid_pos."""

    def refusal(self, ch: Channel, op: dict) -> tuple[int, str] | None:
        """(errno, message) the statement fails with, or None: it starts both threads."""
        text = (op.get("until") or {}).get(GTID_POS)
        if text is None:
            return None
        if op.get("thread"):
            return ER_BAD_SLAVE_UNTIL_COND, "Incorrect parameter or combination of parameters for START SLAVE UNTIL"
        if ch.io_running or ch.sql_running:
            return ER_SLAVE_WAS_RUNNING, "Slave is already running"
        if not self.receiver.gtid_replica(ch):
            return DOM.ER_UNTIL_REQUIRES_USING_GTID, "START SLAVE UNTIL master_gtid_pos requires that slave is using GTID"
        parsed = DOM.parse_gtid_list(text)
        return parsed if isinstance(parsed, tuple) else None

    def reached(self, ch: Channel) -> bool:
        """The SQL thread's condition: every listed domain reached in gtid_slave_pos."""
        until = condition(ch)
        return until is not None and not DOM.until_reached(until, slave_pos(ch))

    @staticmethod
    def on_connect(ch: Channel) -> None:
        ch.until_io = None  # set once the dump starts, from the position it was asked from

    def on_dump_start(self, ch: Channel, by: str) -> None:
        until = condition(ch)
        if until is None or by != "gtid":
            return
        asked = DOM.parse_gtid_list(ch.gtid_request)
        ch.until_io = DOM.until_reached(until, asked if isinstance(asked, dict) else slave_pos(ch))
        if not ch.until_io:  # every domain reached already: the dump ends before sending a group
            self.at(self.sim.now, self._io_stops, ch, ch.io_gen)

    def sends(self, ch: Channel, ev) -> bool:
        return ch.until_io is None or ev.gtid is None or F.parse_gtid(ev.gtid)[0] in ch.until_io

    def on_event_queued(self, ch: Channel, src: Entry) -> None:
        if not ch.until_io or not (src.ev.gtid and src.ev.last):
            return
        d, _, seq = F.parse_gtid(src.ev.gtid)
        if d in ch.until_io and seq >= ch.until_io[d][2]:
            del ch.until_io[d]
            if not ch.until_io:  # the dump ends after this group: the IO thread stops
                self.at(self.sim.now, self._io_stops, ch, ch.io_gen)

    def _io_stops(self, ch: Channel, gen: int) -> None:
        """"Slave I/O thread stops because it reached its UNTIL master_gtid_pos" (handle_slave_io)."""
        if gen == ch.io_gen and ch.io_running:
            self.admin.stop_threads(ch, io=True, sql=False)
            self.applier.kick(ch)

