"""The receiver (the IO thread): connects to its source, queues what arrives in the relay log,
acknowledges semi-sync events, and is cut, reconnected or thrown away (relay-log recovery).
"""
from __future__ import annotations

from dataclasses import replace

from replcheck.spec import formats as F
from replcheck.spec.formats import BINLOG_START, ER_BAD_SLAVE, FDE_SIZE, ROTATE_SIZE

from .. import multisource as MS
from .. import mutants as M
from ..delay import US, Event

from .component import Component
from .state import (MAX_RELAY_LOG_SIZE, Entry, Channel, Node, event_fields, binlog_index)


class Receiver(Component):
    """The IO thread of each channel and its relay log."""

    @staticmethod
    def relay_index(ch: Channel, file: str, pos: int) -> int:
        """The relay log's event at (file, pos), or its end there; -1 if the relay log has no such place."""
        if (file, pos) == (ch.relay_file, ch.relay_pos):
            return len(ch.relay)
        return next((i for i, e in enumerate(ch.relay) if (e.file, e.pos) == (file, pos)), -1)

    def fetch_from_group(self, ch: Channel) -> None:
        """The receiver placed at the applier's group position (MySQL rpl_replica.cc, recover_relay_log
        and change_master; MariaDB sql_repl.cc, change_master)."""
        ch.read_master_file, ch.read_master_pos = ch.group_master_file, ch.group_master_pos
        if ch.group_master_file and not self.gtid_replica(ch):  # else '': the first binlog, as at RESET SLAVE
            ch.fetch = binlog_index(ch.source, ch.group_master_file, ch.group_master_pos)

    def start_io(self, ch: Channel) -> None:
        ch.io_running = True
        ch.last_io_errno, ch.last_io_error = 0, ""
        if ch.source.up:
            self.connect(ch)

    def disconnect(self, ch: Channel) -> None:
        for hook in self.hooks.on_disconnect:
            hook(ch)
        ch.connected = False
        ch.io_gen += 1

    def connect(self, ch: Channel) -> None:
        if ch.source.failed_over:  # as to a dead master: the IO thread stays Connecting
            return
        if not ch.source.log_bin:
            self.dump.refuse_dump(ch, "position", "Binary log is not open")
            return
        ch.connected = True
        ch.last_io_errno, ch.last_io_error = 0, ""  # connected: slave.cc connect_to_master, mi->clear_error()
        ch.io_gen += 1
        for hook in self.hooks.on_connect:
            hook(ch)
        if ch.connect_by_id:
            by = "group_id"
        elif self.gtid_replica(ch) and (self.mech.gtid_connect == "every" or ch.fetch is None):
            by = "gtid"
            self.dump.gtid_fetch(ch)
            for hook in self.hooks.on_gtid_connect:
                hook(ch)
        else:
            by = "position"
            if ch.fetch is None:  # MASTER_LOG_FILE '': the first binlog the index names (sql_repl.cc)
                src = ch.source
                ch.fetch = next((i for i, e in enumerate(src.binlog) if e.file not in src.purged), len(src.binlog))
        self.at(self.sim.now + ch.latency_us, self.dump.dump_start, ch, ch.io_gen, by)

    @staticmethod
    def gtid_replica(ch: Channel) -> bool:
        """A GTID replica asks by GTID (on every connect or only its first, Mechanics.gtid_connect).
        A CHANGE MASTER TO a binlog position turns it off (MASTER_USE_GTID=no)."""
        return ch.node.gtid_mode and ch.source.gtid_mode and not ch.node.rpl_hierarchical and not ch.by_position

    @staticmethod
    def using_gtid(ch: Channel) -> str:
        """SHOW SLAVE STATUS's Using_Gtid (MariaDB, Master_info::using_gtid_astext in rpl_mi.cc): No for
        a replica by position or of a master without GTIDs, else what MASTER_USE_GTID last named."""
        if ch.by_position or not (ch.source.gtid_mode and ch.node.gtid_mode):
            return "No"
        return "Current_Pos" if ch.current_pos else "Slave_Pos"

    def held_from(self, ch: Channel, read: int) -> int:
        """Where the relay log the replica still needs begins: at the SQL thread's place, or at the
        oldest group a worker holds, queued and not yet committed (model/parallel.py)."""
        low = self.workers.low_water(ch)
        return min(read, low.first) if low else read

    def op_cut_io(self, node: Node, op: dict) -> None:
        """A network drop (or STOP SLAVE IO_THREAD) that falls after the next `after_events`
        events of groups the IO thread queues: events travel one at a time, so it can fall inside
        a group."""
        ch = node.channel
        if ch is None:
            self.emit("error", node.id, op="cut_io", errno=ER_BAD_SLAVE, message="not a replica")
            return
        ch.cut_after, ch.cut_then = op["after_events"], op.get("then", "reconnect")

    def cut_io(self, ch: Channel) -> None:
        self.emit("io_cut", ch.node.id, source=ch.source.id, then=ch.cut_then, master_log_file=ch.read_master_file,
                  master_log_pos=ch.read_master_pos)
        self.disconnect(ch)
        if ch.cut_then == "stop":
            ch.io_running = False
        elif ch.source.up:  # the IO thread reconnects at once (master-retry-count, connect_to_master)
            self.connect(ch)

    def relay(self, ch: Channel, src: Entry) -> None:
        for hook in self.hooks.queues:
            if (src := hook(ch, src)) is None:
                return
        ev = src.ev
        if ev.type == "FORMAT_DESCRIPTION_EVENT" and src.pos == BINLOG_START and ch.relay and ch.relay[-1].ev is ev:
            return
        end = ch.relay_pos + ev.size
        entry = Entry(ev, ch.relay_file, ch.relay_pos, end, src.file, src.end, ch.source.id, src.group_id)
        if ev.last and ev.trx is not None:
            ch.held.setdefault(entry.source, []).append(len(ch.relay))
        ch.relay.append(entry)
        ch.relay_pos = end
        if src.end:
            ch.read_master_file, ch.read_master_pos = src.file, src.end
        if ev.gtid and (ev.last or (ev.idx == 0 and M.GTID_RECEIVED_AT_FIRST_EVENT in self.mutants)):
            ch.io_gtids[F.parse_gtid(ev.gtid)[0]] = ev.gtid  # Gtid_IO_Pos moves only once the whole group is in
        # emit's dict, built at once: an event queued is no statement (emit's bookkeeping), and frequent
        self.sim.obs.append({"t": self.sim.now, "kind": "relay", "node": ch.node.id, "source": ch.source.id,
                             **MS.tagged(ch.connection), **event_fields(ev, src.group_id), "file": entry.file,
                             "pos": entry.pos, "master_file": src.file, "master_end": src.end})
        for hook in self.hooks.on_event_queued:
            hook(ch, src)
        limit = ch.node.runtime.get(MAX_RELAY_LOG_SIZE, 0)  # 0: max_binlog_size, which no History reaches
        if limit and ch.relay_pos >= limit:
            self.rotate_relay(ch)

    def op_flush_relay_logs(self, node: Node, op: dict) -> None:
        """FLUSH RELAY LOGS: the channel's relay log rotates (rotate_relay_log, sql/slave.cc); a server
        that is no replica answers OK."""
        self.emit("stmt", node.id, op="flush_relay_logs", errno=None, warning=None, message="")
        if node.channel is not None:
            self.rotate_relay(node.channel)

    def rotate_relay(self, ch: Channel) -> None:
        """The relay log moves to its next file: MYSQL_BIN_LOG::new_file (sql/log.cc, through
        rotate_relay_log in sql/slave.cc for FLUSH RELAY LOGS, or after queue_event once the file
        reaches max_relay_log_size) ends the file with a Rotate naming the next, and opens the next
        with the replica's own format description and a copy of the source's, artificial (log_pos 0)
        and with `created` 0, so that reading it rolls nothing back. Measured on 10.11 with SHOW
        RELAYLOG EVENTS: Rotate (the replica's server_id) at the old file's end, then Format_desc
        (the replica's) and Format_desc (the source's, End_log_pos 0); max_relay_log_size rotates
        after any event that reaches it, inside a group too."""
        node = ch.node
        own = {"when": self.sim.local(node, self.sim.now) // US, "when_off": node.offset, "server_id": node.server_id,
               "relay_log": True}
        fde = next((e for e in reversed(ch.relay) if e.ev.type == "FORMAT_DESCRIPTION_EVENT" and not e.ev.relay_log
                    and e.source == ch.source.id), None)
        self._write_own(ch, Event("ROTATE_EVENT", size=ROTATE_SIZE, **own))
        ch.relay_file_no += 1
        ch.relay_pos = BINLOG_START
        self._write_own(ch, Event("FORMAT_DESCRIPTION_EVENT", size=FDE_SIZE, **own))
        if fde is not None:
            self._write_own(ch, replace(fde.ev, relay_log=True), fde.master_file)

    def _write_own(self, ch: Channel, ev: Event, master_file: str = "") -> None:
        """An event the relay log writes itself: it moves no place in the source's binlog."""
        entry = Entry(ev, ch.relay_file, ch.relay_pos,
                      ch.relay_pos + ev.size, master_file, 0, ch.source.id)
        ch.relay.append(entry)
        ch.relay_pos = entry.end
        self.emit("relay", ch.node.id, source=ch.source.id, **MS.tagged(ch.connection), **event_fields(ev), file=entry.file,
                  pos=entry.pos, master_file=master_file, master_end=0)

    @staticmethod
    def cut_relay(ch: Channel, keep: int) -> None:
        """Drop the relay log past its first `keep` entries (RESET SLAVE, a new source, relay_log_recovery)."""
        del ch.relay[keep:]
        for held in ch.held.values():
            while held and held[-1] >= keep:
                held.pop()

    def drop_relay(self, ch: Channel, reason: str) -> None:
        """What was relayed but not applied is discarded and fetched again (by GTID, unless the caller
        places the fetch). The SQL thread starts at a new relay log and relay-log.info says so: left
        naming the discarded log, a later restart would resume past everything relayed meanwhile, an
        incident included."""
        dropped = len(ch.relay) - ch.group_start
        self.workers.forget_gaps(ch)
        self.cut_relay(ch, ch.group_start)
        ch.sql_pos = ch.group_start
        ch.relay_file_no += 1
        ch.relay_pos = BINLOG_START
        ch.fetch = None
        self.rli.write_relay_log_info(ch)
        self.emit("relay_log_recovery", ch.node.id, dropped=dropped, reason=reason, **MS.tagged(ch.connection))
