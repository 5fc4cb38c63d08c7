"""START SLAVE UNTIL master_gtid_pos (MariaDB): the statement's checks, and the dump that sends
only the domains listed, each up to its GTID, then ends with a Gtid_list event flagged
FLAG_UNTIL_REACHED, at which the IO thread and later the SQL thread stop. A feature on the core's
hooks.

What the server does (mysql-test/suite/rpl/r/rpl_gtid_until.result; sql/sql_repl.cc): START SLAVE
refuses the UNTIL with a thread named (ER_BAD_SLAVE_UNTIL_COND), with a thread running
(ER_SLAVE_WAS_RUNNING, an error here), by position (ER_UNTIL_REQUIRES_USING_GTID), and parses the
list as slave_connection_state::load does (ER_DUPLICATE_GTID_DOMAIN). The slave sends the condition
with its dump request. The master's dump (init_binlog_sender, gtid_find_binlog_file) takes a domain
whose GTID the start position already holds, same server_id, as reached; while sending
(send_event_to_slave) it skips every group of a domain not listed or reached, takes a domain as
reached at a group of the same server_id and a sequence number at least the GTID's (skipping that
group too when above it), and after the group that reached the last domain sends the flagged
Gtid_list (is_until_reached).
"""
from __future__ import annotations

from replcheck.spec import formats as F
from replcheck.spec.formats import GTID_LIST_SIZE

from .. import domains as DOM
from ..delay import Event

from .component import Feature
from .state import Channel, Entry

ER_SLAVE_WAS_RUNNING = 1254
ER_BAD_SLAVE_UNTIL_COND = 1277

GTID_POS = "master_gtid_pos"


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

    @staticmethod
    def on_connect(ch: Channel) -> None:
        ch.until_io, ch.until_sent = None, None  # set once the dump starts, from the position asked

    def on_dump_start(self, ch: Channel, by: str) -> None:
        text = (ch.until or {}).get(GTID_POS)
        if text is None or by != "gtid" or not isinstance(until := DOM.parse_gtid_list(text), dict):
            return
        asked = DOM.parse_gtid_list(ch.gtid_request)
        asked = asked if isinstance(asked, dict) else {}
        ch.until_io = {d: g for d, g in until.items() if not (d in asked and asked[d][1] == g[1] and asked[d][2] >= g[2])}
        if not ch.until_io:
            self._reached(ch)

    def on_dump_event(self, ch: Channel, e: Entry) -> str:
        if ch.until_io and e.ev.gtid and e.ev.idx == 0:
            d, server, seq = F.parse_gtid(e.ev.gtid)
            g = ch.until_io.get(d)
            if g is not None and server == g[1] and seq >= g[2]:
                del ch.until_io[d]
                if seq == g[2]:
                    ch.until_sent = e.ev.gtid
                elif not ch.until_io:  # past the GTID, which the binlog lacks: stop before this group
                    self._reached(ch)
        return ""

    @staticmethod
    def sends(ch: Channel, ev: Event) -> bool:
        if ch.until_io is None:
            return True
        if ev.gtid is not None and ev.gtid == ch.until_sent:
            return True
        return bool(ch.until_io) and (ev.gtid is None or F.parse_gtid(ev.gtid)[0] in ch.until_io)

    def on_event_queued(self, ch: Channel, src: Entry) -> None:
        if ch.until_sent is not None and src.ev.gtid == ch.until_sent and src.ev.last:
            ch.until_sent = None
            if not ch.until_io:
                self._reached(ch)

    def _reached(self, ch: Channel) -> None:
        """The flagged Gtid_list ends the dump (is_until_reached); the IO thread stops on it ("Slave
        I/O thread stops because it reached its UNTIL master_gtid_pos", handle_slave_io)."""
        ch.until_io, ch.until_sent = {}, None
        fake = Event("GTID_LIST_EVENT", when=0, server_id=ch.source.server_id, size=GTID_LIST_SIZE, until_reached=True)
        self.receiver.relay(ch, Entry(fake, ch.read_master_file, ch.read_master_pos, ch.read_master_pos))
        self.at(self.sim.now, self._io_stops, ch, ch.io_gen)

    def _io_stops(self, ch: Channel, gen: int) -> None:
        if gen == ch.io_gen and ch.io_running:
            self.admin.stop_threads(ch, io=True, sql=False)
