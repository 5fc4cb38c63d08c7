"""A server's lifecycle: crashes (process or machine, at armed crash points), what the disk keeps,
crash recovery of binlog and engine, restarts (with relay_log_recovery and MTS gap filling),
clean shutdown, clock steps, failover and promotion.
"""
from __future__ import annotations


from replcheck.spec import formats as F
from replcheck.spec.formats import ER_BAD_SLAVE

from .. import domains as DOM
from .. import groupid as G
from .. import multisource as MS
from .. import mutants as M
from .. import recovery as R

from .component import Component
from .state import (CR_CONN_HOST_ERROR, Channel, Node)


class Lifecycle(Component):
    """Crash, recovery, restart, shutdown and failover of a node."""

    def start_server(self, node: Node) -> None:
        """A (re)started server runs with its configuration: SET GLOBAL changes are gone."""
        node.runtime = dict(node.variables)
        for hook in self.hooks.on_server_start:
            hook(node)

    def op_shutdown(self, node: Node, op: dict) -> None:
        for hook in self.hooks.on_shutdown:
            hook(node)
        self.emit("shutdown", node.id)
        self.op_crash(node, op, clean=True)
        node.state_file = self.mech.gtid_state_file  # write_state_to_file at the binlog's close

    def op_remove_state_file(self, node: Node, op: dict) -> None:
        """The .state file is deleted (binlogs copied to a new server without it, MDEV-6391); there
        is none while the server runs, nor after a crash."""
        self.emit("state_file", node.id, removed=node.state_file)
        node.state_file = False

    def op_failover(self, node: Node, op: dict) -> None:
        """Promote this replica (with `elect`: the most advanced slave of its master by SHOW MASTER
        STATUS): stop fetching, apply its whole relay log without delay, then take over the old
        primary's other replicas, which reconnect by GTID auto-position, or, between
        --rpl-hierarchical servers, by SHOW BINLOG INFO FOR and CHANGE MASTER."""
        ch = node.channel
        if ch is None:
            self.emit("error", node.id, op="failover", errno=ER_BAD_SLAVE, message="not a replica")
            return
        if op.get("elect"):
            node = self.hierarchy.elect(ch.source)
            ch = node.channel
        self.emit("failover", node.id, old=ch.source.id)
        # The old primary is out of the system: its slaves, failed over too, pull nothing more from
        # it even if it is still (or again) up, so that no group reaches them from both it and the
        # new primary (the hierarchical design's failover: "RESET SLAVE or similar action").
        ch.source.failed_over = True
        for r in ch.source.replicas:
            self.receiver.disconnect(r)
        self.sim.op({"at": self.sim.now, "node": node.id, "op": "stop_slave"})
        # MASTER_DELAY = 0 at the SQL thread's own relay log place, so that the relay logs are kept
        # (with both threads stopped a bare MASTER_DELAY purges them: seed P1 and Bug #87102)
        file, pos = self.rli.group_position(ch)
        for step in ({"op": "change_master", "delay": 0, "relay_log_file": file, "relay_log_pos": pos},
                     {"op": "start_slave", "thread": "sql"}):
            self.sim.op({"at": self.sim.now, "node": node.id, **step})
        ch.promote = True
        self.applier.kick(ch)

    def promote(self, ch: Channel) -> None:
        node, old = ch.node, ch.source
        self.applier.stop_sql(ch, "promotion", statement=False)
        self.receiver.disconnect(ch)  # an IO thread started meanwhile goes with the channel
        ch.io_running = False
        old.replicas.remove(ch)
        node.channel = None
        for r in list(old.replicas):
            # This failover supersedes one that elected r and is still applying its relay log:
            # r now replicates from the new primary, so it must not take over when it drains.
            r.promote = False
            if any(hook(r, node) for hook in self.hooks.on_promote_replica):
                continue
            old.replicas.remove(r)
            self.receiver.disconnect(r)  # its dump thread on the old primary ends: no longer a semi-sync client there
            r.source = node
            r.fetch = None
            node.replicas.append(r)
            if r.io_running and r.node.up:
                self.receiver.connect(r)
        self.emit("promoted", node.id, old=old.id)

    def op_crash(self, node: Node, op: dict, clean: bool = False) -> None:
        kind = op.get("kind", R.PROCESS)
        if op.get("point"):  # armed: fires when the node next passes that point
            node.crash_point, node.crash_kind = op["point"], kind
            self.emit("stmt", node.id, op="crash", point=op["point"], errno=None, message="",
                      **({"how": kind} if kind != R.PROCESS else {}))
            return
        node.up = False
        node.dirty = not clean
        node.incarnation += 1
        if not clean:
            sync_binlog, flush_log = self.source.durability(node)
            self.emit("crash", node.id, how=kind, sync_binlog=sync_binlog, innodb_flush_log_at_trx_commit=flush_log)
            self._lose_on_crash(node, kind, sync_binlog, flush_log)
        for hook in self.hooks.on_crash:
            hook(node)
        for ch in MS.channels(node):
            if ch.sql_running:
                self.applier.stop_sql(ch, "crash", statement=False)
            if not clean:
                self.rli.crash(ch)
            self.receiver.disconnect(ch)
            ch.io_running = False
            # Gone with the process: sql_slave_skip_counter is a global variable, not persisted (0 at
            # start), and the skip of a group the counter ran out in; the SQL thread starts again at
            # that group's first event with nothing to skip.
            ch.skip_counter, ch.skipping_group = 0, False
        for r in node.replicas:
            self.receiver.disconnect(r)
            if r.io_running:  # its reconnects fail while the master is down (slave.cc, connect_to_master: mi->report)
                r.last_io_errno, r.last_io_error = CR_CONN_HOST_ERROR, "error reconnecting to master: Can't connect to server"

    def _lose_on_crash(self, node: Node, kind: str, sync_binlog: int, flush_log: int) -> None:
        """What the disk does not keep (model/recovery.py): a machine crash the binlog's unsynced
        tail that the OS had not written back; either kind the engine commits and prepares its log
        had not flushed."""
        keep = len(node.binlog)
        if kind == R.MACHINE:
            keep = next((i for i in range(node.synced, keep) if not R.binlog_survives(node.binlog[i].at, False, self.sim.now, kind)),
                        keep)
        node.durable_end = keep if node.durable_end is None else min(keep, node.durable_end)
        alive = [R.engine_survives(flush_log, t, self.sim.now, kind) for t in node.visible_at]
        node.engine_lost += [x for x, ok in zip(node.visible, alive) if not ok]
        node.visible = [x for x, ok in zip(node.visible, alive) if ok]
        node.visible_at = [t for t, ok in zip(node.visible_at, alive) if ok]
        node.prepared = [p for p in node.prepared if R.engine_survives(flush_log, node.prepared_at.get(p[0], 0), self.sim.now, kind)]

    def _recover(self, node: Node, role: str = R.MASTER) -> None:
        """Crash recovery of the binlog and the engine: cut the binlog after its last whole group
        (a torn event, a group the crash cut, what a machine crash lost), and, started as a replica,
        at its first group left in doubt after the last one the engine committed (MDEV-21117); rebuild
        the GTID state from it, and commit the prepared transactions whose group it holds, rolling
        back the others."""
        keep = len(node.binlog) if node.durable_end is None else node.durable_end
        if keep:
            start = node.file_start[node.binlog[keep - 1].file]
            keep = start + R.valid_end([(e.ev, e.torn) for e in node.binlog[start:keep]])
        if role == R.SLAVE and M.RECOVERY_KEEPS_IN_DOUBT not in self.mutants:
            keep = self._in_doubt_cut(node, keep)
        removed = node.binlog[keep:]
        del node.binlog[keep:]
        node.durable_end = None
        node.synced, node.published = min(node.synced, keep), keep
        if removed:
            node.binlog_pos = node.binlog[-1].end
            node.executed -= {e.ev.gtid for e in removed if e.ev.gtid}
            node.binlog_gtids = {}
            for e in node.binlog:
                if e.ev.gtid and e.ev.last:
                    node.binlog_gtids[F.parse_gtid(e.ev.gtid)[0]] = e.ev.gtid
            for ch in node.replicas:  # asked from past the cut, a dump starts at the binlog's end
                ch.gtid_floor = None
                if ch.fetch is not None:
                    ch.fetch = min(ch.fetch, keep)
        # The GTID state: the binlog's own GTIDs (G6's bug: the state saved at the last rotation)
        files = None if M.GTID_STATE_LAGS_BINLOG not in self.mutants else {node.binlog_file}
        own = [F.parse_gtid(e.ev.gtid)[::2] for e in node.binlog if e.ev.gtid and e.ev.server_id == node.server_id
               and (files is None or e.file not in files)]
        if removed or files is not None:
            node.gtid_seq = {d: R.next_seq([n for e, n in own if e == d]) for d, _ in own}
        binlogged = {e.ev.gtid for e in node.binlog if e.ev.gtid and e.ev.last}
        committed, rolled_back = R.resolve_prepared(node.prepared, binlogged)
        for trx, gtid in committed:
            self.source.engine_commit(node, trx, gtid)
            domain = F.parse_gtid(gtid)[0]
            if node.prepared_slave.get(trx) == gtid and not node.loaded_since_read(domain, gtid):
                node.slave_gtids[domain] = gtid  # its mysql.gtid_slave_pos row, which the start loads
        node.prepared, node.prepared_at, node.prepared_slave = [], {}, {}
        self.emit("recovery", node.id, truncated={"file": removed[0].file, "pos": removed[0].pos} if removed else None,
                  committed=[t for t, _ in committed], rolled_back=[t for t, _ in rolled_back], engine_lost=node.engine_lost,
                  **({"init_rpl_role": role} if role != R.MASTER else {}))
        node.engine_lost = []

    @staticmethod
    def _in_doubt_cut(node: Node, keep: int) -> int:
        """The binlog's first `keep` entries, cut at the first group in doubt after the last group
        the engine committed (model/recovery.py in_doubt_cut)."""
        doubt = set(node.prepared)
        starts, states = [], []
        for i, e in enumerate(node.binlog[:keep]):
            if e.ev.trx is None or not e.ev.last:
                continue
            first = i - e.ev.idx
            starts.append(first)
            if (e.ev.trx, e.ev.gtid) in doubt:
                states.append(R.IN_DOUBT)
            else:
                states.append(R.COMMITTED if e.ev.type == "XID_EVENT" else None)
        cut = R.in_doubt_cut(states)
        return keep if cut is None else starts[cut]

    def op_restart(self, node: Node, op: dict) -> None:
        if node.up:
            self.emit("error", node.id, op="restart", errno=0, message="node is already up")
            return
        changed = self._reconfigure(node, op)
        refused = G.startup_error(node.log_bin, node.log_slave_updates, node.rpl_hierarchical)
        if refused:
            self.emit("error", node.id, op="restart", errno=F.ER_STARTUP_OPTIONS, message=refused)
            return
        node.up = True
        role = op.get("init_rpl_role", R.MASTER)
        self.emit("restart", node.id, **({"init_rpl_role": role} if role != R.MASTER else {}), **changed)
        if node.dirty:
            self._recover(node, role)
        elif R.clean_start_state(self.mech.gtid_state_file, node.state_file,
                                 M.STATE_FILE_MISSING_EMPTY in self.mutants) == R.EMPTY:
            node.binlog_gtids, node.gtid_seq = {}, {}
        self.start_server(node)
        for hook in self.hooks.on_restart:
            hook(node)
        # After a clean shutdown, what waited for a semi-sync ack is binlogged: committed at start.
        for trx, gtid in node.prepared:
            self.source.engine_commit(node, trx, gtid)
        node.prepared = []
        if not all(hook(node) for hook in self.hooks.on_recover):
            return
        self.source.open_binlog(node)
        node.dirty, node.state_file = False, False
        if self.crash_at(node, R.RECOVERY_AFTER_NEW_BINLOG):
            return
        for hook in self.hooks.on_resume:
            hook(node)
        for ch in MS.channels(node):
            # the process builds its Relay_log_info anew: no timestamp, caught up (sql/rpl_rli.cc, the
            # constructor: last_master_timestamp(0), sql_thread_caught_up(true)); STOP/START keeps them
            ch.last_master_timestamp, ch.sql_thread_caught_up = None, True
            # relay-log.info first, then recovery from the positions it holds (rli_init_info: read_info,
            # then init_recovery; MariaDB's init_relay_log_info the same)
            if not self.rli.read_relay_log_info(ch):
                continue
            if op.get("relay_log_recovery") and self._fills_gaps_first(ch):
                self._fill_gaps_then_recover(ch, op.get("start_slave", True))
                continue
            if op.get("relay_log_recovery"):
                self.recover_relay_log(ch)
            if op.get("start_slave", True):
                # The UNTIL condition lives only in memory (Relay_log_info::until_condition, UNTIL_NONE
                # when constructed; sql/rpl_rli.cc): threads a restart starts run without it.
                ch.until = None
                self.admin.start_both(ch)
        for r in node.replicas:
            if r.io_running and r.node.up:
                self.receiver.connect(r)
        if op.get("master"):
            self._rejoin(node, self.nodes[op["master"]])

    def _reconfigure(self, node: Node, op: dict) -> dict:
        """A start with another configuration (my.cnf edited while the server was down): its options
        hold from now on, through later restarts, as SET GLOBAL's do not (a system's forced settings
        still win). MASTER_DELAY is master.info's, not an option: kept as it was (CHANGE MASTER's).
        What changed, for the restart's observation (the properties read the configuration there)."""
        changed: dict = {}
        if op.get("variables"):
            node.variables = {**node.variables, **op["variables"], **self.sim.forced_variables}
            # as the Trace header shows a configuration: without the GTID domains' variables on a server
            # that has none (each server reads its own names only)
            changed["variables"] = {k: node.variables[k] for k in op["variables"] if self.mech.gtid_domains or k not in DOM.VARIABLES}
        if "log_slave_updates" in op:
            node.log_slave_updates = changed["log_slave_updates"] = op["log_slave_updates"]
        return changed

    def _fills_gaps_first(self, ch: Channel) -> bool:
        """relay_log_recovery finds MTS gaps to fill before it throws the relay log away (init_recovery:
        mts_recovery_groups left mts_recovery_group_cnt set)."""
        return (self.mech.relay_log_recovery_fills_mts_gaps and self.workers.has_gaps(ch)
                and self.workers.computes_mts_gaps(ch))

    def recover_relay_log(self, ch: Channel) -> None:
        """relay_log_recovery=1: the relay log is not trusted after a crash; the receiver starts again
        at the applier's group position (MySQL recover_relay_log, MariaDB init_recovery)."""
        self.receiver.drop_relay(ch, "relay_log_recovery")
        self.receiver.fetch_from_group(ch)

    def _fill_gaps_then_recover(self, ch: Channel, start: bool) -> None:
        """fill_mts_gaps_and_recover (rpl_replica.cc): the coordinator runs alone, as START SLAVE
        UNTIL SQL_AFTER_MTS_GAPS, through the relay log from the low-water mark; once it stops there,
        recover_relay_log throws the relay log away and points the receiver at the group position.
        `start`: the threads start after it (no --skip-slave-start)."""
        ch.fill_then_start = start
        self.admin.start_threads(ch, False, True, {"sql_after_mts_gaps": True})

    def _rejoin(self, node: Node, source: Node) -> None:
        """A restarted server replicates from `source` as rpl_semi_sync_fail_over.result has the
        crashed primary rejoin its new primary: SET GLOBAL gtid_slave_pos = @@gtid_binlog_pos, CHANGE
        MASTER TO it with MASTER_USE_GTID = slave_pos, START SLAVE. What recovery truncated is not in
        its GTID position, so the new primary sends it again if it has it: as MariaDB does with
        gtid_strict_mode (rpl_semi_sync_fail_over.cnf sets it; measured on 10.11, without it the IO
        thread skips those events of its own server_id and the server lacks them for good)."""
        if node.channel is None:  # the network's latency is the topology's channel the other way
            back = next((c for c in self.sim.history["header"]["topology"].get("channels", [])
                         if c["source"] == node.id and c["replica"] == source.id), {})
            self.sim.add_channel(node, source, back.get("latency_us", 0))
        node.slave_gtids = dict(node.binlog_gtids)
        self.emit("stmt", node.id, op="set_global", variable="gtid_slave_pos", value=F.format_pos(node.slave_gtids), errno=None, message="")
        self.admin.change_source_by_gtid(node.channel, source)
        self.emit("stmt", node.id, op="change_master", master_host=source.id, master_use_gtid="slave_pos", errno=None, message="")
        self.admin.start_both(node.channel)

    def op_clock_step(self, node: Node, op: dict) -> None:
        node.offset += op["delta_us"]
        self.emit("clock_step", node.id, delta_us=op["delta_us"])

    def crash_at(self, node: Node, point: str) -> bool:
        """An armed crash point fires here: the node crashes at once."""
        if node.crash_point != point or not node.up:
            return False
        node.crash_point = None
        self.op_crash(node, {"kind": node.crash_kind})
        return True
