"""A parallel applier's workers (model/parallel.py holds their queue): started with the settings
read at the SQL thread's start, committing their groups, drained at a stop, and the MTS gaps a
crash leaves.
"""
from __future__ import annotations



from replcheck.spec import formats as F

from .. import domains as DOM
from .. import mechanics as X
from .. import mutants as M
from .. import parallel as PA
from ..delay import US

from .component import Component
from .state import Channel


class Workers(Component):
    """The parallel applier's workers of a channel: what the SQL thread asks of them, answered
    for a serial applier (no workers) too."""

    # -- what the SQL thread asks -----------------------------------------------------------------
    @staticmethod
    def running(ch: Channel) -> bool:
        """The channel's SQL thread hands groups to workers."""
        return ch.par is not None

    @staticmethod
    def busy(ch: Channel) -> bool:
        """A worker holds a group not yet committed."""
        return ch.par is not None and ch.par.pending()

    def idle(self, ch: Channel) -> bool:
        """The workers are done with all they were given: MariaDB sets sql_thread_caught_up only
        once rpl_parallel::workers_idle (MDEV-29639's fix)."""
        return ch.par is None or not ch.par.pending() or M.CAUGHT_UP_WITH_WORKERS_BUSY in self.mutants

    @staticmethod
    def low_water(ch: Channel) -> PA.Group | None:
        """The oldest group a worker holds, queued and not yet committed: the low-water mark."""
        return ch.par.queued[0] if ch.par is not None and ch.par.queued else None

    @staticmethod
    def has_gaps(ch: Channel) -> bool:
        return bool(ch.mts_gaps)

    @staticmethod
    def forget_gaps(ch: Channel) -> None:
        """The relay log MTS recovery would read again is gone."""
        ch.mts_gaps = set()

    @staticmethod
    def is_gap(ch: Channel, at: int) -> bool:
        """The group at this relay index is one a worker committed past the low-water mark before a
        crash (MTS recovery's recovery_groups)."""
        return at in ch.mts_gaps

    @staticmethod
    def gap_passed(ch: Channel, at: int, skipped: bool) -> None:
        ch.mts_gaps.discard(at)
        if skipped:
            ch.mts_gaps_skipped.add(at)

    @staticmethod
    def gaps_filled(ch: Channel) -> bool:
        """Every group of MTS recovery's range gone through (Until_mts_gap: mts_recovery_group_cnt 0)."""
        return not ch.mts_gaps

    @staticmethod
    def take_cost(ch: Channel, cost_us: int) -> bool:
        """A worker spends the event's time, not the coordinator; False: no workers."""
        if ch.par is None:
            return False
        ch.par.cost += cost_us
        return True

    def queue_group(self, ch: Channel, first: int, before: tuple[str, int], ev) -> bool:
        """The group relay[first:sql_pos] goes to a worker, which commits it later (model/parallel.py);
        False: no workers, the SQL thread commits it."""
        if ch.par is None:
            return False
        domain = F.parse_gtid(ev.gtid)[0] if ev.gtid and self.mech.gtid_domains else 0  # MySQL: one stream
        g = ch.par.queue(self.sim.now, first, ch.sql_pos - 1, before, domain, M.COMMIT_ORDER_LOST not in self.mutants)
        self.at(g.commit_at, self.worker_commit, ch, ch.par, g, ch.node.incarnation)
        self.rli.write_relay_log_info(ch)
        return True

    def stop(self, ch: Channel, reason: str) -> None:
        """The SQL thread stops: a crash kills the workers, anything else drains them."""
        par = ch.par
        if reason == "crash":
            # The workers die with the process: what they had not committed is rolled back; what
            # they committed past the low-water mark is in their info for MTS recovery.
            # A gap this run's recovery skipped is one still while the low-water mark is before it:
            # the worker's info that made it one stays until a checkpoint passes it (rpl_rli_pdb.cc,
            # Slave_worker::commit_positions; mts_recovery_groups reads it again at the next start),
            # also where the run had no workers (its recovery not yet finished: mts_finalize_recovery).
            low = par.queued[0].first if par is not None and par.queued else ch.group_start
            ch.mts_gaps = ch.mts_gaps | {i for i in ch.mts_gaps_skipped if i > low} | {
                g.first for g in (par.gaps() if par is not None else ()) if ch.relay[g.last].ev.trx in ch.node.visible}
        if par is None:
            return
        if reason == "crash":
            for g in par.queued:  # the Trace says so, as for the serial thread's group
                if not g.committed:
                    ev = ch.relay[g.last].ev
                    self.emit("rollback", ch.node.id, trx=ev.trx, gtid=ev.gtid, reason=reason)
            par.queued, par.held = [], []  # a held end is lost with the group before it
            return
        # MariaDB gives up the groups no worker began at any stop but UNTIL's: rpl_parallel::wait_for_done
        # (sql/rpl_parallel.cc) sets stop_count to count_committing_event_groups unless rli->stop_for_until, and
        # handle_slave_sql calls it after an error in the driver thread (an incident) as after STOP SLAVE
        gives_up = reason in ("stop", "error") or (reason == "until" and M.UNTIL_GIVES_UP_QUEUED in self.mutants)
        self.drain_workers(ch, gives_up, reason)
        par.cost = 0

    def computes_mts_gaps(self, ch: Channel) -> bool:
        """MTS recovery computes a crash's gaps here: not under GTID_MODE=ON and auto-position on
        MySQL 8.0.26+ (rpl_replica.cc, mts_recovery_groups), where GTID auto-skip passes the groups
        committed past the low-water mark."""
        return self.mech.mts_gaps_under_auto_position or not self.receiver.gtid_replica(ch)

    def start_workers(self, ch: Channel) -> None:
        """The applier the SQL thread starts with: the settings read at its start (MariaDB
        rpl_parallel_change_thread_count from start_slave_threads; MySQL slave_start_workers), the
        groups a crash left committed past the low-water mark kept for MTS recovery, with workers or
        without: slave_start_workers (rpl_replica.cc) starts the recovery with max(n,
        recovery_parallel_workers) and ends it (mts_finalize_recovery) only once
        mts_recovery_group_cnt is 0, so a start with replica_parallel_workers=0 still skips the gaps
        and its UNTIL SQL_AFTER_MTS_GAPS still fills them."""
        node = ch.node
        chosen = PA.settings({**node.variables, **node.runtime}, self.mech.texts == X.MARIADB)
        ch.mts_gaps_skipped = set()
        if not self.computes_mts_gaps(ch):  # the coordinator reads again from the low-water mark
            self.forget_gaps(ch)
        was = ch.par is not None
        ch.par = PA.Applier(chosen) if chosen is not None else None
        if chosen is not None or was:
            self.emit("parallel", node.id, **(chosen.as_fields() if chosen is not None else {"workers": 0}))

    def worker_commit(self, ch: Channel, par: PA.Applier, g: PA.Group, incarnation: int, kick: bool = True) -> None:
        """A worker commits its group (a crash since rolled it back); the low-water mark moves past
        the committed head of the queue and relay-log.info follows it."""
        if g.committed or g.given_up or g.failed or ch.par is not par or ch.node.incarnation != incarnation:
            return
        if refused := self._binlog_refused(ch, par, g):
            if ch.sql_running and kick:  # not while the SQL thread stops: its drain gives the failed groups up
                first = ch.relay[g.first]
                self.applier.stop_sql(ch, "error", statement=False, errno=ch.last_sql_errno, message=refused,
                                      relay_file=first.file, relay_pos=first.pos)
            return
        g.committed = True
        self.applier.commit_group(ch, g.first, g.last + 1, worker=g.worker, start=g.start)
        for done in par.retire():
            ev = ch.relay[done.last].ev
            if ev.when and (ch.last_master_timestamp is None or self._stamp(ch, (ev.when, ev.when_off)) > self._stamp(ch, ch.last_master_timestamp)):
                ch.last_master_timestamp = (ev.when, ev.when_off)
        for passed in par.held_due():
            self.applier.filtered_group_ends(ch.node, passed)
        if M.MTS_LAG_ZERO_AFTER_IDLE in self.mutants and not par.queued:
            ch.last_master_timestamp = None  # Bug #84415: the emptied queue (GAQ) leaves no timestamp
        self.rli.write_relay_log_info(ch)
        if ch.sql_running and kick:  # not while the SQL thread stops (it drains its workers)
            self.applier.kick(ch)

    def _binlog_refused(self, ch: Channel, par: PA.Applier, g: PA.Group) -> str:
        """Why the group's binlog write at its commit fails, or "". gtid_strict_mode is checked as the
        worker begins the group (Gtid_log_event::do_apply_event, sql/log_event_server.cc) and again at
        the binlog write, so a client's commit in the domain meanwhile makes the write fail (measured
        on 10.11.19: "Error writing file ... (errno: 1950)", the SQL thread stopped with 1950). The
        group rolls back, and the later ones of its domain, waiting for its commit, fail with it
        (wakeup_subsequent_commits, sql/rpl_parallel.cc)."""
        ev = ch.relay[g.last].ev
        refused = self.source.refuses_binlogging(ch.node, ev.gtid) if ch.node.log_slave_updates else ""
        if refused:
            for later in par.queued:
                later.failed |= later is g or (later.domain == g.domain and not later.committed and later.first > g.first)
            ch.last_sql_errno, ch.last_sql_error = DOM.ER_GTID_STRICT_OUT_OF_ORDER, refused
        return refused

    @staticmethod
    def _stamp(ch: Channel, stamp: tuple[int, int]) -> int:
        """A timestamp as the lag counts it: the master's clock second where the replica measures the
        clock difference (one difference for every timestamp); the true time of its writing where
        the lag compensates the writer's clock exactly, so that a timestamp written after the
        master's clock stepped back is still the newer one."""
        when, off = stamp
        return when * US if ch.clock_diff_s is not None else when * US - off

    def finished_at(self, ch: Channel) -> int:
        """When MySQL's workers will have committed every group they were given, which a stop at an
        error waits for (slave_stop_workers, rpl_replica.cc); now for MariaDB, whose stop gives up
        the groups not begun (drain_workers)."""
        if ch.par is None or self.mech.texts == X.MARIADB:
            return self.sim.now
        return max((g.commit_at for g in ch.par.queued if not g.committed), default=self.sim.now)

    def drain_workers(self, ch: Channel, gives_up: bool, reason: str) -> None:
        """STOP SLAVE, UNTIL or an error waits for the workers (the model commits their groups at
        the stop, in commit order): every group queued before an UNTIL position is committed. MySQL's
        waits for every group queued (slave_stop_workers); MariaDB's, where `gives_up` (STOP SLAVE,
        an error), for the groups that started, and those not yet started are given up and read
        again at the next start (rpl_parallel.cc, do_gco_wait: "this event group is beyond the point
        where we can safely stop", with force_abort and stop_count from rpl_parallel::wait_for_done)."""
        par = ch.par
        if par is None:
            return
        queued = sorted(par.queued, key=lambda g: (g.commit_at, g.first))
        # Not begun: to start later, or queued in the stop's very instant behind the oldest group (its
        # worker had not taken it up: on 10.11, aggressive mode, t1 committed and t2, queued with it
        # in that instant before an incident, given up: a campaign's History, seed 2's 66)
        oldest = min(queued, key=lambda g: g.first, default=None)
        given_up = [g for g in queued if not g.committed and (g.start > self.sim.now or (g.start == self.sim.now and g is not oldest))] \
            if gives_up and self.mech.texts == X.MARIADB else []
        for g in queued:
            if g not in given_up:
                self.worker_commit(ch, par, g, ch.node.incarnation, kick=False)
        given_up += [g for g in queued if g.failed and g not in given_up]
        for g in sorted(given_up, key=lambda g: g.first):
            g.given_up = True
            ev = ch.relay[g.last].ev
            self.emit("rollback", ch.node.id, trx=ev.trx, gtid=ev.gtid, reason=reason)
        if given_up and M.PARALLEL_RESTART_PAST_GIVEN_UP in self.mutants:  # MDEV-6589: restarts after them
            par.queued = []
            for passed in par.held_due():
                self.applier.filtered_group_ends(ch.node, passed)
        elif given_up:
            first = min(given_up, key=lambda g: g.first)
            for trx, gtid, _, _ in par.held_due(given_up=True):  # filtered behind them: given up, read again too
                self.emit("rollback", ch.node.id, trx=trx, gtid=gtid, reason=reason)
            par.queued = []
            ch.group_start = first.first
            ch.group_master_file, ch.group_master_pos = first.before
            self.rli.write_relay_log_info(ch)
