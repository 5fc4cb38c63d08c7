"""The applier (the SQL thread): reads the relay log, waits for MASTER_DELAY, skips what it must
(skip counter, filters, executed GTIDs, MTS recovery's gaps), stops at an incident or an UNTIL
place, executes and ends groups. With workers it queues a group's commit to them (workers.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replcheck.spec import formats as F

from .. import delay as D
from .. import domains as DOM
from .. import incident as I
from .. import mechanics as X
from .. import multisource as MS
from .. import mutants as M
from .. import partial as P
from ..delay import Event

from .component import Component
from .state import (SKIP_EXEMPT, Entry, Channel, Node, event_fields, logged_again)


@dataclass
class HeldCommit:
    """An applier's group, binlogged, whose commit a feature may hold (a semi-sync master waiting for
    an ack): the engine commit not yet made, the GTID position and, for the SQL thread's own commit,
    the group's position move at its release. A value rather than a closure, so that a forked run
    copies it with the rest of its state."""

    part: "Applier"
    ch: Channel
    incarnation: int
    first: int
    stop: int
    worker: dict = field(default_factory=dict)
    waits_on: Any = None  # what holds it, told when the thread waiting is killed
    visible: bool = False
    done: bool = False
    killed: bool = False  # its thread was killed: it stops once the commit returns

    @property
    def ev(self) -> Event:
        return self.ch.relay[self.stop - 1].ev

    def engine_commit(self) -> None:
        if not self.visible:
            self.visible = True
            if (self.ev.trx, self.ev.gtid) in self.ch.node.prepared:
                self.ch.node.prepared.remove((self.ev.trx, self.ev.gtid))
            self.part.source.engine_commit(self.ch.node, self.ev.trx, self.ev.gtid, **self.worker)

    def kill(self) -> None:
        self.killed = True
        if self.waits_on is not None:
            self.waits_on.kill(self)

    def __call__(self, how: str) -> None:
        self.part.group_end_released(self)


class Applier(Component):
    """The SQL thread of each channel: its read loop, delay wait, skips, UNTIL and group ends."""

    def __init__(self, sim: Any):
        super().__init__(sim)
        # (node, connection) -> where a rewinding stop left off: the groups before it are read again
        # and passed over as committed before anything else sees them (restart_gtid_pos)
        self._rewound: dict[tuple[str, str | None], int] = {}

    def start_sql(self, ch: Channel) -> None:
        ch.sql_running = True
        ch.state = "idle"
        ch.sql_gen += 1
        self.workers.start_workers(ch)
        self.kick(ch)

    def stop_sql(self, ch: Channel, reason: str, statement: bool = True, **error) -> None:
        if ch.state == "waiting" and M.STOP_APPLIES_WAITED_EVENT in self.mutants and statement:
            while ch.sql_pos < len(ch.relay):  # runs the group out, ignoring the delay
                entry = ch.relay[ch.sql_pos]
                self._finish(ch, ch.sql_gen, entry, ch.cur_read, self.sim.now)
                if entry.ev.last or entry.ev.trx is None:
                    break
        held, ch.held_end = ch.held_end, None
        if held is not None and reason != "crash":
            # STOP SLAVE kills the SQL thread inside its commit's wait for an ack: the wait ends
            # unacknowledged and the commit returns (Repl_semi_sync_master::commit_trx leaves its loop
            # on thd_killed, sql/semisync_master.cc), so the group's position moves before the stop
            held.kill()
        elif held is not None and held.visible:
            # a crash in the wait: the group's mysql.gtid_slave_pos row committed with it (do_record_gtid
            # inside the transaction), which the restart reads
            self._record_gtid(held)
        elif held is not None:
            # prepared (AFTER_SYNC): the row is prepared with the group, and recovery commits or rolls
            # back both (TC_LOG_BINLOG::recover, sql/log.cc)
            ch.node.prepared_slave[held.ev.trx] = held.ev.gtid
        if ch.applied_in_group:
            g = ch.relay[ch.group_start].ev
            self.emit("rollback", ch.node.id, trx=g.trx, gtid=g.gtid, reason=reason)
        parallel = self.workers.running(ch)
        self.workers.stop(ch, reason)
        # after the drain, whose commits register waits too
        waits, ch.worker_waits = ch.worker_waits, []
        for end in waits if reason != "crash" else ():
            # the stop returns once every worker's commit returned (rpl_parallel::wait_for_done waits
            # for the workers, sql/rpl_parallel.cc), so their waits ended by then; the model, holding no
            # worker, ends them at the stop
            end.kill()
        ch.sql_pos = ch.group_start
        if parallel and reason != "crash" and self.mech.parallel_stop_rewinds and self.receiver.gtid_replica(ch) \
                and len(ch.node.slave_gtids) > 1:
            # "we may stop with different domains at different positions in the relay log": the place
            # becomes the start of the relay log in use, and the next start passes over by GTID what
            # is committed (handle_slave_sql's exit, sql/slave.cc; process_gtid_for_restart_pos)
            file = ch.relay[min(ch.group_start, len(ch.relay) - 1)].file if ch.relay else None
            key = (ch.node.id, ch.connection)
            self._rewound[key] = max(self._rewound.get(key, -1), ch.group_start)  # a second stop before it: the first's
            ch.sql_pos = ch.group_start = next((i for i, e in enumerate(ch.relay) if e.file == file), ch.group_start)
        ch.applied_in_group = 0
        ch.sql_running = False
        ch.state = "stopped"
        ch.cur_due = None
        ch.sql_gen += 1
        self._released(ch)
        self.emit("sql_stop", ch.node.id, reason=reason, **MS.tagged(ch.connection), **error)
        start, ch.fill_then_start = ch.fill_then_start, None
        if start is not None and reason == "until":  # the gaps filled: recover_relay_log, then the server goes on
            # (stopped otherwise, ER_RPL_MTA_AUTOMATIC_RECOVERY_FAILED: the relay log stays)
            self.lifecycle.recover_relay_log(ch)
            ch.until = None
            restart_io = ch.io_running  # started by a client meanwhile, which the starting server would not yet take
            if restart_io:
                self.admin.stop_threads(ch, io=True, sql=False)
            if start:
                self.admin.start_both(ch)
            elif restart_io:
                self.receiver.start_io(ch)

    def kick(self, ch: Channel) -> None:
        """Let the SQL thread read and execute as far as it may now."""
        self._apply_relay(ch)
        if ch.fill_then_start is not None and ch.sql_running and ch.state == "idle" and ch.sql_pos >= len(ch.relay) \
                and self.workers.gaps_filled(ch) and not self.workers.busy(ch):
            # The startup run that fills the gaps meets the relay log the restart opened: the coordinator
            # stops before its first event (Until_mts_gap::check_before_dispatching_event), once the
            # workers are done (slave_stop_workers)
            self.stop_sql(ch, "until", statement=False)
            return
        # waiting at the end of the relay log (next_event, slave.cc), its workers idle: MariaDB sets
        # sql_thread_caught_up only once rpl_parallel::workers_idle (MDEV-29639's fix)
        if ch.sql_running and ch.state == "idle" and self.workers.idle(ch):
            ch.sql_thread_caught_up = True
        if ch.promote and ch.state == "idle" and ch.sql_pos >= len(ch.relay):
            self.lifecycle.promote(ch)

    def _apply_relay(self, ch: Channel) -> None:
        while ch.sql_running and ch.state == "idle" and ch.sql_pos < len(ch.relay) and ch.node.up:
            if ch.sql_pos == ch.group_start and self._until_reached(ch):
                self.stop_sql(ch, "until", statement=False)
                return
            entry = ch.relay[ch.sql_pos]
            ev = entry.ev
            # Rotate, format description and Gtid_list events are neither counted nor skipped: they
            # only move the SQL thread along the logs (Gtid_list_log_event::do_shall_skip turns
            # EVENT_SKIP_COUNT into EVENT_SKIP_NOT, log_event_server.cc).
            gap = ev.type in D.TRX_START and self.workers.is_gap(ch, ch.sql_pos)
            if gap and M.MTS_GAPS_NOT_FILLED not in self.mutants:
                # MTS recovery: a group a worker committed past the low-water mark before the crash
                # is skipped, not applied again (rpl_replica.cc exec_relay_log_event with
                # rli->is_mts_recovery(): the recovery_groups bitmap mts_recovery_groups built)
                first = ch.sql_pos
                if not self._skip_group(ch, reason="mts_recovery"):
                    return
                self.workers.gap_passed(ch, first, skipped=True)
                continue
            if gap:
                self.workers.gap_passed(ch, ch.sql_pos, skipped=False)
            if ch.sql_pos >= self._rewound.get((ch.node.id, ch.connection), -1):
                self._rewound.pop((ch.node.id, ch.connection), None)
            elif ev.type in D.TRX_START and ev.gtid in ch.node.executed:
                # read again after a rewinding stop: passed over, not counted, but waited for first as
                # any event read (rpl_parallel::do_event calls sql_delay_event before
                # process_gtid_for_restart_pos): a wait only where it is not yet due (a clock stepped back)
                if self._waits_for(ch, ev, self._wake_to_read):
                    return
                if not self._skip_group(ch):
                    return
                continue
            if ev.type in D.TRX_START and (ignored := self._first(self.hooks.ignores_group, ch, ev)):
                # ignored before the skip counter counts it, but after the pass-over above: the
                # coordinator drops a group behind the restart position before any worker reads it,
                # where Log_event::do_shall_skip ignores a marked one (rpl_parallel::do_event returns
                # at process_gtid_for_restart_pos, before choose_thread), so gtid_slave_pos keeps
                # the later GTID the domain had reached
                if not self._skip_group(ch, ignored):
                    return
                continue
            if (ch.skip_counter or ch.skipping_group) and ev.type not in SKIP_EXEMPT:
                self._skip_event(ch, entry)
                continue
            if ev.type in D.TRX_START and (stopped := self._feature_reads(ch, entry)) is not None:
                if stopped:
                    return
            elif self._decides_when_due(ch, ev):
                pass  # once it is due, below
            elif ev.type in D.TRX_START and ev.gtid in ch.node.executed and not gap and not self._applies_every_group(ch):
                if not self._skip_group(ch):  # (a gap: the mutant applies it again)
                    return
                continue
            busy = M.DELAY_SKIPPED_WHILE_WORKERS_BUSY in self.mutants and self.workers.busy(ch)
            ch.cur_read = self.sim.now
            self._read_timestamp(ch, ev)
            if not busy and self._waits_for(ch, ev, self._wake):
                return
            said = self._due(ch, ev)
            if said == "wait":  # another connection applies this domain: wait for it
                return
            if said is not None:
                if not self._skip_group(ch, reason=said):
                    return
                continue
            self._execute(ch, entry, self.sim.now)

    def _feature_reads(self, ch: Channel, entry: Entry) -> bool | None:
        """What the first feature that takes a group's first event answers (HOOKS on_group_read)."""
        for hook in self.hooks.on_group_read:
            if (stopped := hook(ch, entry)) is not None:
                return stopped
        return None

    def _decides_when_due(self, ch: Channel, ev: Event) -> bool:
        """A feature decides at this group once it is due (HOOKS on_group_due), not at its read."""
        return any(hook(ch, ev) for hook in self.hooks.decides_when_due)

    def _due(self, ch: Channel, ev: Event) -> str | None:
        """What the first feature that decides a due group says: "wait", a reason to skip it, or None."""
        for hook in self.hooks.on_group_due:
            if (said := hook(ch, ev)) is not None:
                return said
        return None

    @staticmethod
    def _first(hooks: tuple, ch: Channel, ev: Event) -> str:
        """The first reason a feature's hook gives, or ""."""
        for hook in hooks:
            if why := hook(ch, ev):
                return why
        return ""

    def _released(self, ch: Channel, gtid: str | None = None) -> None:
        for hook in self.hooks.on_group_released:
            hook(ch, gtid)

    def _read_timestamp(self, ch: Channel, ev: Event) -> None:
        """The SQL thread read `ev` (before any MASTER_DELAY wait): its timestamp becomes
        last_master_timestamp unless it has no master time of its own. MariaDB's exec_relay_log_event
        (slave.cc, event_can_update_last_master_timestamp) leaves out artificial events, the relay
        log's own (is_relay_log_event: a rotation's Rotate and format descriptions) and when == 0
        (the dump thread's fake Rotate and Gtid_list); MySQL's (rpl_replica.cc) also the master's FDE."""
        mysql = self.mech.seconds_behind_master == X.MYSQL
        master_fde = ev.type == "FORMAT_DESCRIPTION_EVENT" and ev.server_id != ch.node.server_id
        if M.MASTER_FDE_LAG in self.mutants and master_fde and ev.when:
            pass  # Bug #66921: the master's FDE, also its verbatim copy a relay-log rotation writes, feeds the lag
        elif ev.when == 0 or ev.relay_log or (mysql and master_fde):
            return
        lmt = ch.last_master_timestamp
        if M.CAUGHT_UP_KEPT in self.mutants and lmt is not None and ev.when <= lmt[0]:
            return  # MDEV-32265: only a newer timestamp ends "caught up"
        parallel = self.workers.running(ch)
        if parallel and lmt is not None and M.PARALLEL_LAG_FROM_LAST_COMMIT in self.mutants:
            ch.sql_thread_caught_up = False  # MDEV-17516: read, but the lag still counts from the last commit
            return
        if parallel and ((lmt is not None and not ch.sql_thread_caught_up) or M.MTS_LAG_ZERO_AFTER_IDLE in self.mutants):
            # With workers the timestamp moves as groups commit (MariaDB rpl_rli.cc, stmt_done: "In
            # the parallel case, we only update the Seconds_Behind_Master at the end of a
            # transaction"; MySQL's checkpoint takes the low-water mark's). A read counts at once
            # only after the applier idled (MDEV-29639, rpl_parallel_sbm).
            return
        ch.sql_thread_caught_up = False
        if parallel and not mysql and lmt is not None and ev.when <= lmt[0]:
            # MariaDB's read after idling moves the timestamp only forward (MDEV-30619's condition
            # `last_master_timestamp < ev->when`; MDEV-32265 took the caught-up flag out of it).
            # Measured on 10.11.19: a format description sent again at a reconnect, older than a
            # group stamped ahead, left Seconds_Behind_Master at 0 (corpus/server, fde-sent-again-
            # keeps-a-newer-stamp).
            return
        ch.last_master_timestamp = (ev.when, ev.when_off)

    def _skip_event(self, ch: Channel, entry: Entry) -> None:
        """sql_slave_skip_counter: skip one event; once it runs out, finish skipping the group."""
        ev = entry.ev
        # Only a group's last event ends it: an event in no group that a GTID reconnect put inside a
        # partial copy (an incident sent again) leaves the group open, as it leaves OPTION_BEGIN
        # set (log_event.cc, Log_event::do_shall_skip: "BEGIN will set OPTION_BEGIN and COMMIT/Xid
        # will clear it"; with the counter at 1 in a group, events are ignored, not counted).
        ends_group = ev.last or (ev.trx is None and ch.sql_pos == ch.group_start)
        if ch.skip_counter:
            ch.skip_counter -= 1
        ch.skipping_group = not ends_group and (ch.skip_counter > 0 or M.SKIP_MID_GROUP not in self.mutants)
        self.emit("skip", ch.node.id, trx=ev.trx, gtid=ev.gtid, idx=ev.idx, type=ev.type, reason="sql_slave_skip_counter",
                  relay_file=entry.file, relay_pos=entry.pos)
        ch.sql_pos += 1
        if ends_group:
            ch.skipping_group = False
            if ev.gtid and M.SKIP_KEEPS_GTID_POSITION not in self.mutants:
                ch.node.executed.add(ev.gtid)  # the GTID position moves past what was skipped
                # gtid_slave_pos too: a group that ends without committing records its GTID at its
                # end (MariaDB sql/rpl_gtid.cc, rpl_slave_state::record_and_update_gtid, "if we have
                # it and did not already update it in a GTID transaction"; seen on 10.11 under load),
                # and its record_gtid bumps the domain's counter as for a group applied
                ch.node.record_slave_gtid(ev.gtid, self.mech.gtid_seq_follows_domain)
            self.advance_group(ch, entry)

    def _incident_stop(self, ch: Channel, entry: Entry, gen: int | None = None) -> None:
        """R3.1/R3.2: the SQL thread stops at any incident, before it; the IO thread goes on."""
        if gen is not None and gen != ch.sql_gen:
            return  # stopped or crashed while its workers finished
        if (done := self.workers.finished_at(ch)) > self.sim.now:
            # The coordinator reads no further; its workers commit what they were given, each at
            # its own time, and the thread stops after them (slave_stop_workers, rpl_replica.cc)
            ch.state = "executing"
            self.at(done, self._incident_stop, ch, entry, ch.sql_gen)
            return
        ev = entry.ev
        ch.last_sql_errno, ch.last_sql_error = I.ER_SLAVE_INCIDENT, I.error_message(ev.incident, ev.message, self.mech.texts == X.MARIADB)
        self.stop_sql(ch, "error", statement=False, errno=ch.last_sql_errno, message=ch.last_sql_error,
                       relay_file=entry.file, relay_pos=entry.pos)

    def _waits_for(self, ch: Channel, ev: Event, wake) -> bool:
        """MASTER_DELAY: an event not yet due puts the SQL thread to sleep until it is; `wake` then."""
        if self.mech.delay_group_events_only and ev.type in D.NOT_GROUP_EVENTS - D.EXEMPT:  # the seed's three: the rule's
            return False  # MariaDB 10.11's sql_delay_event: if (sql_delay && Log_event::is_group_event(type))
        due = self.rule.due(ev, ch.delay, self.sim.now, ch.node.offset, self.sim.epoch, ch.clock_diff_s)
        if due is None or due <= self.sim.now:
            return False
        ch.state, ch.cur_due, ch.cur_due_offset = "waiting", due, ch.node.offset
        self.at(due, wake, ch, ch.sql_gen)
        return True

    def _wake_to_read(self, ch: Channel, gen: int) -> None:
        """A group read again is due: the loop passes it over now."""
        if gen != ch.sql_gen or ch.state != "waiting":
            return
        ch.state, ch.cur_due = "idle", None
        self.kick(ch)

    def _wake(self, ch: Channel, gen: int) -> None:
        if gen != ch.sql_gen or ch.state != "waiting":
            return
        ch.state, ch.cur_due = "idle", None
        if not self._decides_when_due(ch, ch.relay[ch.sql_pos].ev):  # else the loop decides, now that it is due
            self._execute(ch, ch.relay[ch.sql_pos], ch.cur_read)
        self.kick(ch)

    def _execute(self, ch: Channel, entry: Entry, read: int) -> None:
        ev = entry.ev
        if ev.type == "INCIDENT_EVENT" and M.INCIDENT_IGNORED not in self.mutants:
            self._incident_stop(ch, entry)
            return
        if ev.cost_us and self.workers.take_cost(ch, ev.cost_us):  # the worker runs it, not the coordinator
            self._finish(ch, ch.sql_gen, entry, read, self.sim.now)
        elif ev.cost_us:
            ch.state = "executing"
            self.at(self.sim.now + ev.cost_us, self._finish, ch, ch.sql_gen, entry, read, self.sim.now)
        else:
            self._finish(ch, ch.sql_gen, entry, read, self.sim.now)

    def _finish(self, ch: Channel, gen: int, entry: Entry, read: int, begin: int) -> None:
        if gen != ch.sql_gen:
            return
        ev = entry.ev
        if ev.trx is not None and ev.idx == 0 and ch.sql_pos > ch.group_start and M.PARTIAL_COPY_KEPT not in self.mutants:
            # A group's first event while another is open: the open one is a partial copy whose end
            # never comes (a reconnect by position, mid-binlog, sends an artificial FDE that rolls
            # nothing back). MySQL's Gtid_log_event::do_apply_event rolls it back: "Rolling back
            # unfinished transaction (no COMMIT or ROLLBACK in relay log). A probable cause is partial
            # transaction left on relay log because of restarting IO thread with auto-positioning".
            g = ch.relay[ch.group_start].ev
            self.emit("rollback", ch.node.id, trx=g.trx, gtid=g.gtid, reason="partial_group")
            ch.group_start, ch.applied_in_group = ch.sql_pos, 0
        # the server that sent the event: a failover may have repointed the channel since it was relayed
        # (emit's dict, built at once: an event applied is no statement, emit's bookkeeping, and frequent)
        self.sim.obs.append({"t": self.sim.now, "kind": "apply", "node": ch.node.id, "source": entry.source,
                             **MS.tagged(ch.connection), **event_fields(ev, entry.group_id), "read": read,
                             "begin": begin, "relay_file": entry.file, "relay_pos": entry.pos})
        if ev.gtid and ev.idx == 0:
            ch.node.read_sub[ev.gtid] = ch.node.take_sub_id()
        inside = ev.trx is None and ch.sql_pos > ch.group_start  # between the events of a cut group
        ch.sql_pos += 1
        if inside and ev.type == "FORMAT_DESCRIPTION_EVENT" and entry.master_end and M.PARTIAL_COPY_KEPT not in self.mutants:
            # A real (not artificial) FDE inside a group: the group before it is a partial copy that
            # never gets its end here (the source crashed while writing it, or a MySQL GTID reconnect
            # sends the whole group after it). Format_description_log_event::do_apply_event rolls it
            # back: "Rolling back unfinished transaction (no COMMIT or ROLLBACK in relay log)".
            g = ch.relay[ch.group_start].ev
            self.emit("rollback", ch.node.id, trx=g.trx, gtid=g.gtid, reason="partial_group")
            ch.skipping_group = False
            self.advance_group(ch, entry)
        elif ev.last or (ev.trx is None and not (inside and M.ROTATE_MID_GROUP not in self.mutants)):
            # A fake Rotate, artificial FDE or Gtid_list after a reconnect inside a group moves only
            # the event position, never the group's (Rotate_log_event::do_update_pos: "we don't want
            # to touch the coordinates which correspond to the beginning of the transaction").
            self._end_group(ch, entry)
        elif ev.trx is not None:
            ch.applied_in_group += 1
        if ch.state == "executing":
            ch.state = "idle"
            self.kick(ch)

    def advance_group(self, ch: Channel, entry: Entry) -> None:
        """The SQL thread is past a group (applied or skipped): the position relay-log.info keeps."""
        ch.group_start = ch.sql_pos
        ch.applied_in_group = 0
        ch.engine_pos = None  # relay-log.info and InnoDB agree again
        # MDEV-5938: a parallel applier left the master's Rotate out of Exec_Master_Log_Pos
        stuck = entry.ev.trx is None and self.workers.running(ch) and M.PARALLEL_EXEC_POS_NOT_AT_ROTATE in self.mutants
        if entry.master_end and not stuck:
            ch.group_master_file, ch.group_master_pos = entry.master_file, entry.master_end
        self.rli.write_relay_log_info(ch)

    def _end_group(self, ch: Channel, entry: Entry) -> None:
        ev = entry.ev
        first = ch.group_start
        if ev.trx is not None and ch.node.log_slave_updates and (refused := self.source.refuses_binlogging(ch.node, ev.gtid)):
            # the group's binlog write fails at its commit: rolled back, the SQL thread stops there
            ch.last_sql_errno, ch.last_sql_error = DOM.ER_GTID_STRICT_OUT_OF_ORDER, refused
            self.stop_sql(ch, "error", statement=False, errno=ch.last_sql_errno, message=refused,
                           relay_file=ch.relay[first].file, relay_pos=ch.relay[first].pos)
            return
        if ev.trx is not None and any(hook(ch, entry, first) for hook in self.hooks.on_group_end):
            return
        before = (ch.group_master_file, ch.group_master_pos)
        why = self._first(self.hooks.filters_group, ch, ev) if ev.trx is not None else ""
        if ev.trx is not None and not why and not self.workers.running(ch):
            # the SQL thread commits it: the group's position moves once the commit returns
            self.commit_group(ch, first, ch.sql_pos)
            return
        self.advance_group(ch, entry)
        if ev.trx is None:
            return
        if why:  # applied, with its delay, as a no-op: a filter kept it from the engine
            self._filtered(ch, ev, why, ev)
            self._released(ch, ev.gtid)
            return
        self.workers.queue_group(ch, first, before, ev)  # a worker commits it later

    def commit_group(self, ch: Channel, first: int, stop: int, **worker: Any) -> None:
        """The replica commits the group relay[first:stop]: its binlog, the engine, the GTID position
        and (the SQL thread's own commit) the group's position. A feature may hold its end
        (HOOKS on_group_binlogged): a semi-sync master's wait for an ack holds the SQL thread."""
        node, ev = ch.node, ch.relay[stop - 1].ev
        node.executed.add(ev.gtid)
        end = HeldCommit(self, ch, node.incarnation, first, stop, worker)
        if node.log_slave_updates:
            ict = self.sim.local(node, self.sim.now) if node.commit_timestamps else None
            self.source.write_binlog(node, logged_again(P.own_events(ch.relay[first:stop]), ict, node.offset))
            if self.holds(ch, end):
                return
        elif self.mech.gtid_seq_follows_domain:  # not binlogged (--log-slave-updates=0)
            node.follow_seq(ev.gtid)
        if not end.done:
            self._end_commit(end)

    def holds(self, ch: Channel, end: HeldCommit) -> bool:
        """A feature holds the binlogged group's end (HOOKS on_group_binlogged): the SQL thread waits
        in its commit until end(how). A worker's wait is not modelled: only the counters wait, until
        the release or the SQL thread's stop."""
        if not any(hook(ch, end) for hook in self.hooks.on_group_binlogged) or end.done:
            return False
        if end.worker:
            ch.worker_waits.append(end)
            return False
        ch.state, ch.held_end = "acking", end
        return True

    def holds_committed(self, ch: Channel, first: int, stop: int) -> bool:
        """holds() for a group the SQL thread already committed in the engine in its own order
        (hierarchy.py); False: its position moves now."""
        return self.holds(ch, HeldCommit(self, ch, ch.node.incarnation, first, stop, visible=True))

    def group_end_released(self, end: HeldCommit) -> None:
        """A held group's commit returns (acknowledged, timed out, or its thread killed): the SQL
        thread reads on. Xid_apply_log_event::do_apply_event (MariaDB sql/log_event_server.cc)
        updates the in-memory GTID state (@@gtid_slave_pos) only after do_commit returns, and the
        group's relay-log position moves after do_apply_event."""
        ch = end.ch
        if end.done or ch.node.incarnation != end.incarnation:
            return
        self._end_commit(end)
        if ch.held_end is end and not end.killed:
            ch.held_end, ch.state = None, "idle"
            self.kick(ch)

    def _end_commit(self, end: HeldCommit) -> None:
        ch, ev = end.ch, end.ev
        end.done = True
        if not end.worker:
            self.advance_group(ch, ch.relay[end.stop - 1])
        self._record_gtid(end)
        self._released(ch, ev.gtid)
        end.engine_commit()

    @staticmethod
    def _record_gtid(end: HeldCommit) -> None:
        node, ev = end.ch.node, end.ev
        domain, _, seq = F.parse_gtid(ev.gtid)
        held = node.slave_gtids.get(domain)
        # A worker's group may commit after the coordinator passed a later group a filter kept out,
        # whose GTID is recorded at once here; the servers filter in the worker and record in commit
        # order (MariaDB rpl_parallel.cc, wait_for_prior_commit), so the later GTID stays.
        if node.loaded_since_read(domain, ev.gtid):
            return
        if not (end.worker and held is not None and held == node.filter_recorded.get(domain) and F.parse_gtid(held)[2] > seq):
            node.slave_gtids[domain] = ev.gtid

    def _applies_every_group(self, ch: Channel) -> bool:
        """A MariaDB slave replicating by position (Using_Gtid=No) applies each group it reads: its SQL
        thread skips by GTID only past a GTID restart position (rpl_parallel.cc, gtid_skip_flag) and under
        gtid_ignore_duplicates (rpl_gtid.cc, check_duplicate_gtid), so the GTIDs a RESET MASTER issues again
        are applied again (rpl_semi_sync_after_sync_row.result: after RESET MASTER and RESET SLAVE the
        slave holds the new rows 1, 2, 3). MySQL skips every GTID in gtid_executed."""
        return self.mech.gtid_domains and ch.by_position

    def _skip_group(self, ch: Channel, filtered: str = "", reason: str = "gtid already executed") -> bool:
        """Skip a group whose GTID this server already executed, or whose events a filter ignores
        (`filtered`, the filter's name); False until all of it arrived."""
        i = ch.sql_pos
        while i < len(ch.relay) and not ch.relay[i].ev.last:
            i += 1
        if i == len(ch.relay):
            return False
        ev = ch.relay[ch.sql_pos].ev
        if filtered:  # each event ignored in turn (EVENT_SKIP_IGNORE), as the skip counter's are skipped
            for e in ch.relay[ch.sql_pos:i + 1]:
                self.emit("skip", ch.node.id, trx=e.ev.trx, gtid=e.ev.gtid, idx=e.ev.idx, type=e.ev.type, reason=filtered,
                          relay_file=e.file, relay_pos=e.pos)
        # The relay-log places it passed over, as a status sample then shows them passed.
        passed = [[e.file, e.pos] for e in ch.relay[ch.sql_pos:i + 1]]
        ch.sql_pos = i + 1
        if filtered:
            self._filtered(ch, ev, filtered, ch.relay[i].ev)
        else:
            self.emit("skip", ch.node.id, trx=ev.trx, gtid=ev.gtid, reason=reason, events=passed, **MS.tagged(ch.connection))
        self.advance_group(ch, ch.relay[i])
        return True

    def _filtered(self, ch: Channel, ev: Event, why: str, last: Event) -> None:
        """The SQL thread passed a group a filter kept from the engine. On a parallel replica a
        worker ends it in commit order, after the groups queued before it: record_gtid commits its
        mysql.gtid_slave_pos row through ha_commit_trans, which waits for the prior commit
        (sql/rpl_gtid.cc, suspend_subsequent_commits around it), so a crash before an earlier
        group's commit loses it with that group."""
        ddl = last.type == "QUERY_EVENT" and last.idx == 1  # one statement, no XID: Bug #91086 loses its GTID
        recorded = ev.gtid if ev.gtid and not (ddl and M.FILTERED_DDL_GTID_LOST in self.mutants) else None
        passed = (ev.trx, ev.gtid, why, recorded)
        if ch.par is None or not ch.par.end_after(passed):
            self.filtered_group_ends(ch.node, passed)

    def filtered_group_ends(self, node: Node, passed: tuple) -> None:
        """A filtered group ends (trx, gtid, the filter, the GTID it records). Its GTID still moves the
        GTID position: the group ends without committing anything, and rpl_slave_state::
        record_and_update_gtid (sql/rpl_gtid.cc) records a GTID its group did not record, from
        Relay_log_info::stmt_done (sql/rpl_rli.cc). Nothing goes to the replica's own binlog: the
        filtered events left its binlog cache empty."""
        trx, gtid, why, recorded = passed
        self.emit("filtered", node.id, trx=trx, gtid=gtid, reason=why)
        if recorded:
            node.executed.add(recorded)
            node.record_slave_gtid(recorded, self.mech.gtid_seq_follows_domain)
            node.filter_recorded[F.parse_gtid(recorded)[0]] = recorded

    def _until_reached(self, ch: Channel) -> bool:
        u = ch.until
        if not u:
            return False
        if "master_gtid_pos" in u:
            # Gtid_list_log_event::do_apply_event with FLAG_UNTIL_REACHED (log_event_server.cc): the SQL
            # thread passes the dump's last event and stops
            e = ch.relay[ch.sql_pos]
            if e.ev.until_reached:
                ch.sql_pos += 1
                self.advance_group(ch, e)
            return e.ev.until_reached
        if u.get("sql_after_mts_gaps"):
            # MySQL's Until_mts_gap::check_before_dispatching_event (sql/rpl_replica_until_options.cc):
            # the coordinator stops before the next event once mts_recovery_group_cnt is 0, every
            # group of MTS recovery's range gone through (the gaps skipped, the others applied)
            return self.workers.gaps_filled(ch)
        here = (ch.group_master_file, ch.group_master_pos)
        e = ch.relay[ch.sql_pos] if ch.sql_pos < len(ch.relay) else None
        if e is not None and e.master_end:
            # The servers test the next event's own start in the master's binlog (exec_relay_log_event:
            # log_pos - data_written outside a transaction): after a GTID connect that skipped another
            # domain's groups the relay log has holes, and the last group's end is not where this one starts.
            here = max(here, (e.master_file, e.master_end - e.ev.size))
        return here >= (u["master_log_file"], u["master_log_pos"])
