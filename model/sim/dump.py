"""The dump thread on a source: places a replica's request in the binlogs (by position, by GTID,
MariaDB's per-domain GTID state, or by group ID), refuses what a purge removed, and sends what
the binlog publishes to the replica's receiver.
"""
from __future__ import annotations

from dataclasses import replace

from replcheck.spec import formats as F
from replcheck.spec.formats import (BINLOG_START, GTID_LIST_SIZE, ROTATE_SIZE)

from .. import mutants as M
from ..delay import Event

from .component import Component
from .domains import SKIP
from .state import (Entry, Channel, Node)


class Dump(Component):
    """A source's dump threads: request placement and sending."""

    def _sends(self, ch: Channel, ev: Event) -> bool:
        """Whether the dump thread sends the event to this replica (HOOKS sends)."""
        return all(hook(ch, ev) for hook in self.hooks.sends)

    def gtid_fetch(self, ch: Channel) -> None:
        """Where a GTID request starts: the first group the replica lacks (what it executed and what
        its relay log still holds). MariaDB's gtid_find_binlog_file picks the binlog that group is
        in; the groups before it there are not sent (send_event_to_slave), events that are in no
        group are (_dump_start)."""
        binlog, executed = ch.source.binlog, ch.node.executed
        floor = ch.gtid_floor
        i = floor[2] if floor and floor[0] is binlog and floor[1] is executed else 0
        # A group the dump thread never sends this replica (FILTER_ON_MASTER) is not waited for: the
        # replica's position in its domain is past it once a later group arrives (MariaDB asks by
        # position per domain, sql_repl.cc gtid_find_binlog_file and send_event_to_slave's skip).
        while i < len(binlog) and (binlog[i].ev.gtid is None or binlog[i].ev.gtid in executed
                                   or not self._sends(ch, binlog[i].ev)):
            i += 1
        ch.gtid_floor = (binlog, executed, i)
        # A group counts as received only once its last event is in (Bug #69943: counting it at
        # its GTID event loses the whole group after a reconnect inside it).
        whole = M.GTID_RECEIVED_AT_FIRST_EVENT not in self.mutants
        relayed = {e.ev.gtid for e in ch.relay[self.receiver.held_from(ch, ch.sql_pos):] if e.ev.gtid and (e.ev.last or not whole)}
        ch.fetch = next((k for k in range(i, len(binlog)) if binlog[k].ev.gtid and binlog[k].ev.gtid not in executed
                         and binlog[k].ev.gtid not in relayed), len(binlog))

    def _dump_place(self, ch: Channel, by: str, gid: int = 0, sid: int = 0) -> tuple[str, str | None]:
        """The master places the dump request in its binlogs (ch.fetch), or says why it cannot:
        (how it was placed, the reason for refusing it or None). What a purge removed is gone: a
        slave that needs it is refused, never moved past it."""
        src = ch.source
        if by == "group_id":
            return by, self.hierarchy.place_dump(ch, gid, sid)
        for hook in self.hooks.place_gtid_request if by == "gtid" else ():
            placed, refused = hook(ch)
            if placed:
                return by, refused
        start = src.binlog[ch.fetch] if ch.fetch < len(src.binlog) else None
        if start is None or start.file not in src.purged:
            return by, None
        if by == "position" and self.receiver.gtid_replica(ch):
            # Asking by position is the same place as by GTID unless that binlog is gone: then the
            # GTID position decides.
            self.gtid_fetch(ch)
            return self._dump_place(ch, "gtid")
        if M.PURGE_SILENT_SKIP in self.mutants:
            ch.fetch = next((i for i in range(ch.fetch, len(src.binlog)) if src.binlog[i].file not in src.purged),
                            len(src.binlog))
            return by, None
        if by == "gtid":  # no binlog left whose Gtid_list the replica's position contains
            return by, ("Could not find GTID state requested by slave in any binlog files. Probably the slave state "
                        "is too old and required binlog files have been purged.")
        return by, "Could not find first log file name in binary log index file"

    def refuse_dump(self, ch: Channel, by: str, reason: str, **request) -> None:
        """The master answers the dump request with error 1236: the IO thread stops."""
        self.emit("connect", ch.node.id, source=ch.source.id, by=by, **request,
                  errno=F.ER_MASTER_FATAL_ERROR_READING_BINLOG, message=reason)
        self._dump_fails(ch, reason)

    def _dump_fails(self, ch: Channel, reason: str) -> None:
        """The dump thread ends with error 1236 (at the request or while sending): the IO thread stops."""
        self.receiver.disconnect(ch)
        ch.io_running = False
        ch.last_io_errno, ch.last_io_error = F.ER_MASTER_FATAL_ERROR_READING_BINLOG, F.fatal_1236(reason)
        self.emit("error", ch.node.id, thread="io", errno=F.ER_MASTER_FATAL_ERROR_READING_BINLOG, message=F.fatal_1236(reason))

    def dump_start(self, ch: Channel, gen: int, by: str) -> None:
        if gen != ch.io_gen:
            return
        src = ch.source
        asked = {}
        if by == "group_id":  # CONNECT_USING_GROUP_ID
            asked = self.hierarchy.dump_request(ch)
        by, refused = self._dump_place(ch, by, *asked.values())
        shown = {**asked, **({"gtid_pos": ch.gtid_request} if by == "gtid" and ch.gtid_request else {})}
        if refused is not None:
            self.refuse_dump(ch, by, refused, **shown)
            return
        ch.dumping = gen
        start = src.binlog[ch.fetch] if ch.fetch < len(src.binlog) else None
        for hook in self.hooks.on_dump_start_at:
            hook(ch, start)
        file = start.file if start else src.binlog_file
        # By GTID the dump starts at the head of the binlog the first missing group is in (init_binlog_sender:
        # "start from beginning of binlog file"). By group ID the master answers with the place it
        # looked up (the end of that group), which may be the end of a binlog that a crash left
        # without a Rotate event.
        at = ((ch.read_master_file, ch.read_master_pos) if asked else (file, BINLOG_START) if by == "gtid" else
              (file, start.pos if start else src.binlog_pos))
        self.emit("connect", ch.node.id, source=src.id, by=by, **shown, master_log_file=at[0],
                  master_log_pos=at[1], errno=None, message="")
        ch.connect_by_id = False  # a successful connect turns Connect_Using_Group_ID off
        # mysql_binlog_send opens with a fake Rotate (timestamp 0) naming that place: the replica's IO
        # thread reads from there, and its SQL thread, outside a group, takes it as its executed
        # position (Rotate_log_event::do_update_pos).
        fake = Event("ROTATE_EVENT", when=0, server_id=src.server_id, size=ROTATE_SIZE)
        self.receiver.relay(ch, Entry(fake, at[0], 0, at[1]))
        first = src.file_start[file]
        if by == "gtid":
            for e in self._gtid_prefix(src, first, ch.fetch):
                self.receiver.relay(ch, e)
        else:
            fde = src.binlog[first]
            # Resuming past the FDE, the dump thread sends it with log_pos 0 (send_format_descriptor_event),
            # so the replica does not take its end for a position: Exec_Master_Log_Pos stays put.
            self.receiver.relay(ch, fde if start is fde else replace(fde, end=0))
        for hook in self.hooks.on_dump_start:
            hook(ch, by)
        self.arrive(ch, gen, ch.fetch, src.published)

    @staticmethod
    def _gtid_prefix(src: Node, first: int, fetch: int) -> list[Entry]:
        """What a GTID dump sends of its binlog before the first missing group (sql_repl.cc,
        send_event_to_slave): every event that is in no group (the FDE with its real end, since
        the dump starts at 4; incidents, which carry no GTID, so a replica that already skipped one
        gets it again), and after the last group it skipped there, a fake Gtid_list whose end is
        that group's, which moves the replica's positions past the skipped groups."""
        last = max((i for i in range(first, fetch) if src.binlog[i].ev.gtid and src.binlog[i].ev.last), default=None)
        sent = []
        for i in range(first, fetch):
            e = src.binlog[i]
            if e.ev.gtid is None:
                sent.append(e)
            if i == last:
                # timestamp 0 (fake_event_header), yet waited for like any event (sql_delay_event
                # exempts by type only), compensated by the master's clock like the rest
                glist = Event("GTID_LIST_EVENT", when=0, when_off=src.offset, server_id=src.server_id, size=GTID_LIST_SIZE)
                sent.append(Entry(glist, e.file, e.end, e.end))
        return sent

    def arrive(self, ch: Channel, gen: int, first: int, stop: int) -> None:
        if gen != ch.io_gen or not ch.node.up:
            return
        for i in range(max(first, ch.fetch), stop):
            e = ch.source.binlog[i]
            said = next((s for hook in self.hooks.on_dump_event if (s := hook(ch, e))), "")
            if said == SKIP:
                ch.fetch = i + 1
                continue
            if said:
                self._dump_fails(ch, said)
                return
            if not self._sends(ch, e.ev):  # the dump thread drops it: nothing arrives
                ch.fetch = i + 1
                continue
            # a cut counts the events of groups the relay log gets: the same place in the group stream
            # whichever way the replica asked (by position the dump also sends the FDE and incidents
            # a GTID request does not; MariaDB's GTID reconnect sends again what it does not queue)
            counted = e.ev.trx is not None and all(hook(ch) for hook in self.hooks.counts_for_cut)
            self.receiver.relay(ch, e)
            ch.fetch = i + 1
            if ch.cut_after and counted:
                ch.cut_after -= 1
                if not ch.cut_after:  # the connection drops between two events, maybe inside a group
                    self.receiver.cut_io(ch)
                    break
        self.applier.kick(ch)
