"""A parallel applier's workers (model/parallel.py holds their queue): started with the settings
read at the SQL thread's start, committing their groups, drained at a stop, and the MTS gaps a
crash leaves.
"""
from __future__ import annotations



from .. import mechanics as X
from .. import parallel as PA

from .component import Component
from .state import Channel


class Workers(Component):
    """The parallel applier's workers of a channel."""

    def computes_mts_gaps(self, ch: Channel) -> bool:
        """MTS recovery computes a crash's gaps here: not under GTID_MODE=ON and auto-position on
        MySQL 8.0.26+ (rpl_replica.cc, mts_recovery_groups), where GTID auto-skip passes the groups
        committed past the low-water mark."""
        return self.mech.mts_gaps_under_auto_position or not self.receiver.gtid_replica(ch)

    def start_workers(self, ch: Channel) -> None:
        """The applier the SQL thread starts with: the settings read at its start (MariaDB
        rpl_parallel_change_thread_count from start_slave_threads; MySQL slave_start_workers), the
        groups a crash left committed past the low-water mark carried over for MTS recovery."""
        node = ch.node
        chosen = PA.settings({**node.variables, **node.runtime}, self.mech.texts == X.MARIADB)
        recovered = ch.par.recovered if ch.par is not None else set()
        if not self.computes_mts_gaps(ch):  # the coordinator reads again from the low-water mark
            recovered = set()
        was = ch.par is not None
        ch.par = PA.Applier(chosen, recovered=recovered) if chosen is not None else None
        if chosen is not None or was:
            self.emit("parallel", node.id, **(chosen.as_fields() if chosen is not None else {"workers": 0}))

    def worker_commit(self, ch: Channel, par: PA.Applier, g: PA.Group, incarnation: int, kick: bool = True) -> None:
        """A worker commits its group (a crash since rolled it back); the low-water mark moves past
        the committed head of the queue and relay-log.info follows it."""
        if g.committed or g.given_up or ch.par is not par or ch.node.incarnation != incarnation:
            return
        g.committed = True
        self.applier.commit_group(ch, g.first, g.last + 1, worker=g.worker, start=g.start)
        for done in par.retire():
            ev = ch.relay[done.last].ev
            if ev.when and (ch.last_master_timestamp is None or ev.when > ch.last_master_timestamp[0]):
                ch.last_master_timestamp = (ev.when, ev.when_off)
        self.rli.write_relay_log_info(ch)
        if ch.sql_running and kick:  # not while the SQL thread stops (it drains its workers)
            self.applier.kick(ch)

    def drain_workers(self, ch: Channel, statement: bool) -> None:
        """STOP SLAVE, UNTIL or an error waits for the workers (the model commits their groups at
        the stop, in commit order): every group queued before an UNTIL position or an error is
        committed. On STOP SLAVE MySQL's waits for every group queued (slave_stop_workers);
        MariaDB's for the groups that started, and those not yet started are given up and read
        again at the next start (rpl_parallel.cc, do_gco_wait: "this event group is beyond the point
        where we can safely stop", with force_abort and stop_count from rpl_parallel::wait_for_done)."""
        par = ch.par
        if par is None:
            return
        queued = sorted(par.queued, key=lambda g: (g.commit_at, g.first))
        given_up = [g for g in queued if g.start > self.sim.now] if statement and self.mech.texts == X.MARIADB else []
        for g in queued:
            if g not in given_up:
                self.worker_commit(ch, par, g, ch.node.incarnation, kick=False)
        for g in sorted(given_up, key=lambda g: g.first):
            g.given_up = True
            ev = ch.relay[g.last].ev
            self.emit("rollback", ch.node.id, trx=ev.trx, gtid=ev.gtid, reason="stop")
        if given_up:
            first = min(given_up, key=lambda g: g.first)
            par.queued = []
            ch.group_start = first.first
            ch.group_master_file, ch.group_master_pos = first.before
            self.rli.write_relay_log_info(ch)
