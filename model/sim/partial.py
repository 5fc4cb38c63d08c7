"""A group whose transfer was cut, as MariaDB's GTID reconnect handles it (the rules are
model/partial.py's): the reconnect asks from Gtid_IO_Pos, which moves only with whole groups, and
the IO thread does not queue again the events of the partial group it already holds (slave.cc:
gtid_reconnect_event_skip_count = events_queued_since_last_gtid; queue_event). A feature on the
core's hooks, for the systems whose mechanics skip them; elsewhere the source's format description
before the full copy rolls the partial copy back (the applier's rule).
"""
from __future__ import annotations

from dataclasses import replace

from replcheck.spec.formats import ROTATE_SIZE

from .. import mutants as M
from .. import partial as P
from ..delay import Event
from .component import Feature
from .state import Channel, Entry


class PartialTransfers(Feature):
    """The events of a partial group a GTID reconnect sends again, not queued twice."""

    def on_gtid_connect(self, ch: Channel) -> None:
        whole = M.GTID_RECEIVED_AT_FIRST_EVENT not in self.mutants
        ch.reconnect_skip = P.queued_since_gtid(ch.relay) if self.mech.gtid_reconnect_skips_queued and whole else 0

    @staticmethod
    def on_dump_start_at(ch: Channel, start: Entry | None) -> None:
        if ch.reconnect_skip and (start is None or start.ev.gtid != P.partial_gtid(ch.relay)):
            # The partial group never committed on the source (a crash tore it): nothing is
            # skipped, and the source's format description event that follows rolls the partial
            # copy back (queue_event: "assuming that master has crashed and rolling back").
            ch.reconnect_skip = 0

    @staticmethod
    def counts_for_cut(ch: Channel) -> bool:
        """The event arriving is one the relay log gets (not one skipped as queued already)."""
        return not ch.reconnect_skip

    def queues(self, ch: Channel, src: Entry) -> Entry | None:
        """What the IO thread queues of an arriving event: None when it was queued before the
        reconnect; the master's FDE inside the group as an artificial copy (log_pos 0), so the SQL
        thread does not take it for a master crash and roll the first half back."""
        ev = src.ev
        if ch.reconnect_skip and ev.trx is not None:
            # already queued (queue_event, gtid_skip_enqueue): once the last one is passed, a fake
            # Rotate names the place the copy goes on from
            ch.reconnect_skip -= 1
            ch.read_master_file, ch.read_master_pos = src.file, src.end
            if not ch.reconnect_skip:
                fake = Event("ROTATE_EVENT", when=0, server_id=ch.source.server_id, size=ROTATE_SIZE)
                self.receiver.relay(ch, Entry(fake, src.file, 0, src.end))
            return None
        if ch.reconnect_skip and ev.type == "FORMAT_DESCRIPTION_EVENT":
            return replace(src, end=0)
        return src
