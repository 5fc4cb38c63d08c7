"""Semi-synchronous replication (WL#1720) as a component: each server's semi-sync master (the
rules are model/semisync.py's SemiSyncMaster), the commit that waits for an ack, the replica's
reply once it queued an event, and what the servers' status shows of it. It joins the core
through hooks only.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import filter as FL
from .. import mechanics as X
from .. import mutants as M
from .. import semisync as SS
from .component import Feature
from .state import CR_SERVER_LOST, Channel, Entry, Node

SLAVE_ENABLED = "rpl_semi_sync_slave_enabled"


@dataclass
class Release:
    """A client's COMMIT waiting for a semi-sync ack, released: a value rather than a closure, so
    that a forked run copies it with the rest of its state."""

    part: "SemiSync"
    node: Node
    incarnation: int
    trx: str
    gtid: str
    start: int
    after_sync: bool
    fields: dict  # what the commit's answer shows: group IDs, the table, the statement's error

    def __call__(self, how: str) -> None:
        node = self.node
        if node.incarnation != self.incarnation:
            return
        emit = self.part.emit
        if how == "shutdown":
            # MariaDB's shutdown closes the client connections while the commit waits in
            # Repl_semi_sync_master::commit_trx (close_connections, sql/mysqld.cc): the client sees
            # the connection lost (2013, measured on 10.11). Elsewhere the waiter's error is the
            # one MDEV-11853 reports, ER_SERVER_SHUTDOWN.
            lost = self.part.mech.texts == X.MARIADB
            emit("commit", node.id, trx=self.trx, gtid=self.gtid, start=self.start, semisync=how,
                 errno=CR_SERVER_LOST if lost else SS.ER_SERVER_SHUTDOWN,
                 message="Lost connection to server during query" if lost else "Server shutdown in progress", **_named(self))
            return
        if self.after_sync:
            node.prepared.remove((self.trx, self.gtid))
            self.part.source.engine_commit(node, self.trx, self.gtid)
        emit("commit", node.id, trx=self.trx, gtid=self.gtid, start=self.start, semisync=how, **self.fields)


@dataclass
class SessionEnd:
    """The wait of a failed statement's binlogged group, whose client already has its error: the
    session waits when it ends the transaction (its disconnect), and nobody sees the wait end."""

    node: Node

    def __call__(self, how: str) -> None:
        pass  # counted by the master (yes_tx or no_tx); nothing is answered

    def kill(self) -> None:
        # a shutdown kills the session in its wait: commit_trx counts it in no_tx (thd_killed)
        self.node.semisync.kill(self)


def _named(release) -> dict:
    """What an error answer to a waiting commit still names: binlogged, the transaction replicates,
    and filters judge it by its table and its @@skip_replication."""
    fields = getattr(release, "fields", {})
    return {k: v for k, v in fields.items() if k in ("table", "skip_replication")}


class SemiSync(Feature):
    """The semi-sync master of each server and the replies of its replicas."""

    # -- a server's start and end ---------------------------------------------------------------
    def on_server_start(self, node: Node) -> None:
        """A (re)started server: semi-sync state comes from its configuration, counters from zero."""
        node.semisync = SS.SemiSyncMaster(node.id, node.variables, self.mutants, self.sim.clock, self.emit, self.at,
                                          self.mech.no_slave_commit)
        # The binlog outlives a restart: a replica catches up (WL#1720's switch back ON) only with
        # all of it. MariaDB's try_switch_on() takes any ack until a commit after the restart.
        node.semisync.binlog_end = max(((e.file, e.end) for e in node.binlog if e.ev.last and e.ev.trx), default=("", 0))

    def on_restart(self, node: Node) -> None:
        if node.semisync.enabled:
            self.status.server_status(node)

    def on_crash(self, node: Node) -> None:
        for w in node.semisync.abandon():
            if not isinstance(w.release, Release):
                continue  # an applier's group or a session's end: nobody waits for an answer
            self.emit("commit", node.id, trx=w.trx, gtid=w.gtid, errno=CR_SERVER_LOST, message="Lost connection to server during query",
                      **_named(w.release))

    @staticmethod
    def on_shutdown(node: Node) -> None:
        for w in list(node.semisync.waiters):
            if not isinstance(w.release, Release):
                # the shutdown kills the slave threads first: an SQL thread's wait ends as at STOP SLAVE;
                # a session's at its end (SessionEnd) is killed alike
                w.release.kill()
        node.semisync.shutdown()

    # -- the commit -------------------------------------------------------------------------------
    def on_commit_written(self, node: Node, trx: str, gtid: str, start: int, skip: bool, fields: dict) -> bool:
        """The commit's group is in the binlog: it waits for an ack where the master waits, and the
        client gets its answer when released (Release)."""
        pos = (node.binlog_file, node.binlog_pos)
        ss = node.semisync
        if ss.enabled and ss.wait_point != SS.AFTER_SYNC and self.source.ends_statement(gtid):
            # AFTER_COMMIT waits at a transaction's end only (is_real_trans in Repl_semi_sync_master::
            # wait_after_commit, sql/semisync_master.cc): a statement's own group in a multi-statement
            # transaction returns at once, counted in neither yes_tx nor no_tx; its COMMIT waits for the last
            ss.binlog_end = max(ss.binlog_end, pos)
            self.source.engine_commit(node, trx, gtid)
            self.emit("commit", node.id, trx=trx, gtid=gtid, start=start, semisync="statement", **fields)
            return True
        if not ss.binlogged(pos):
            self.source.engine_commit(node, trx, gtid)
            self.emit("commit", node.id, trx=trx, gtid=gtid, start=start, semisync="no" if ss.enabled else None, **fields)
            return True
        if self._unsent(node, skip):
            # Sent to no semi-sync replica: no ack will come for it, so none is waited for (S3).
            self.source.engine_commit(node, trx, gtid)
            self.emit("commit", node.id, trx=trx, gtid=gtid, start=start, semisync="unsent", **fields)
            return True
        after_sync = ss.wait_point == SS.AFTER_SYNC
        if fields.get("errno") is not None and not after_sync and self.mech.failed_statement_waits_at_session_end:
            # MariaDB answers the statement's error at once; its session waits for the ack registered
            # at the write when it ends the transaction (Mechanics.failed_statement_waits_at_session_end)
            self.source.engine_commit(node, trx, gtid)
            self.emit("commit", node.id, trx=trx, gtid=gtid, start=start, semisync="later", **fields)
            ss.wait(trx, gtid, pos, SessionEnd(node))
            return True
        if after_sync:
            node.prepared.append((trx, gtid))
        else:
            self.source.engine_commit(node, trx, gtid)
        ss.wait(trx, gtid, pos, Release(self, node, node.incarnation, trx, gtid, start, after_sync, fields))
        return True

    def on_group_binlogged(self, ch: Channel, end) -> bool:
        """An applier's group in a semi-sync master's binlog waits for an ack as a client's commit
        does: Repl_semi_sync_master::report_binlog_update registers it with no test of whose THD
        commits, and ha_commit_trans (sql/handler.cc) waits in wait_after_commit for any THD
        (MariaDB sql/semisync_master.cc); MySQL's observer alike (repl_semi_report_commit and
        repl_semi_report_binlog_sync, plugin/semisync/semisync_source_plugin.cc, test no slave
        thread). A replicated group is a real transaction: no statement's own group here."""
        node, ss, ev = ch.node, ch.node.semisync, end.ev
        pos = (node.binlog_file, node.binlog_pos)
        if not ss.binlogged(pos) or self._unsent(node, ev.skip):
            return False
        if ss.wait_point == SS.AFTER_SYNC and not end.visible:
            node.prepared.append((ev.trx, ev.gtid))  # binlogged: crash recovery commits it
        else:
            end.engine_commit()
        end.waits_on = ss
        ss.wait(ev.trx, ev.gtid, pos, end)
        return True

    def _unsent(self, node: Node, skip: bool) -> bool:
        """A marked transaction whose every semi-sync replica filters it on the master: the dump
        threads send none of it, so no ack can come. Registering it anyway for an ack is S3
        (Bug#15985893; MariaDB 10.11 does, MDEV-38486: log.cc report_binlog_update for every
        transaction, the dump thread dropping the events before update_sync_header)."""
        if M.ACK_FILTERED in self.mutants or self.mech.semisync_waits_unsent:
            return False
        semi = [r.node for r in node.replicas if r.node.variables.get(SLAVE_ENABLED)]
        # the filter a replica runs with (node.runtime): a SET GLOBAL while its threads are stopped
        # is what its next connection asks the master for, and that connection acks what it is sent
        return bool(semi) and not any(FL.sent(r.runtime, skip) for r in semi)

    # -- the replica's connection and replies -----------------------------------------------------
    @staticmethod
    def on_connect(ch: Channel) -> None:
        ch.semi_sync = bool(ch.node.runtime.get(SLAVE_ENABLED))

    @staticmethod
    def on_disconnect(ch: Channel) -> None:
        # a dead master's semi-sync state dies with it; a request still on its way was never counted
        if ch.dump_running and ch.source.up:
            ch.source.semisync.disconnect(ch.node.id)
        ch.semi_sync = False

    def on_event_queued(self, ch: Channel, src: Entry) -> None:
        """The sync flag rides in the two reserved header bytes; the replica strips them, queues
        the event, and only then acknowledges it."""
        ev = src.ev
        if ch.semi_sync and src.end and ch.source.semisync.needs_reply(ev.last and ev.trx is not None):
            if ch.lost_acks:
                ch.lost_acks -= 1
                return
            self.at(self.sim.now + ch.latency_us, self._ack_arrives, ch, ch.io_gen, ch.source, (src.file, src.end))

    @staticmethod
    def _ack_arrives(ch: Channel, gen: int, source: Node, pos: tuple[str, int]) -> None:
        if gen == ch.io_gen and source.up and ch.source is source:
            source.semisync.ack(ch.node.id, pos, ch.connection)

    def on_dump_start(self, ch: Channel, by: str) -> None:
        # the master counts a semi-sync client (add_slave) and logs it in the dump thread, once the
        # request has arrived and been placed: mysql_binlog_send (sql/sql_repl.cc) calls
        # Repl_semi_sync_master::dump_start (sql/semisync_master.cc) after init_binlog_sender
        ch.source.semisync.connect(ch.node.id, ch.semi_sync)
        if ch.semi_sync:
            self.emit("log", ch.source.id, level="Note", replica=ch.node.id,
                      message=f"Start semi-sync binlog_dump to slave (server_id: {ch.node.server_id})")
        held = ch.held.get(ch.source.id)
        if ch.semi_sync and held and (by != "gtid" or self.mech.gtid_reconnect_acks) and M.NO_REACK_ON_RECONNECT not in self.mutants:
            # dump_start (semisync_master.cc) takes the place the dump starts for the replica's
            # reply: asked by position, where the replica is, which acknowledges all it holds. By
            # GTID MariaDB's dump starts at the head of a binlog, which acknowledges nothing (it logs
            # "pos(bin.000001, 4)" at such a reconnect; measured on 10.11, ss-lost-ack-reconnect);
            # the seeds' server acknowledges the replica's place either way (Mechanics.gtid_reconnect_acks).
            last = ch.relay[held[-1]]
            ch.source.semisync.ack(ch.node.id, (last.master_file, last.master_end), ch.connection)

    @staticmethod
    def op_lose_acks(node: Node, op: dict) -> None:
        if node.channel is not None:
            node.channel.lost_acks += op["count"]

    # -- statements and status --------------------------------------------------------------------
    def on_set_global(self, node: Node, name: str, value, op: dict) -> bool:
        if name not in SS.VARIABLES:
            return False
        value, errno, message = SS.check_value(name, value)
        if errno is not None:
            self.emit("stmt", node.id, op="set_global", variable=name, value=op["value"], errno=errno, message=message)
            return True
        # rpl_semi_sync_slave_enabled takes effect when the IO thread next connects, as on the servers.
        self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=None, message="")
        node.runtime[name] = value
        if name.startswith("rpl_semi_sync_master"):
            node.semisync.set(name, value)
        self.status.server_status(node)
        return True

    @staticmethod
    def on_flush_status(node: Node) -> None:
        node.semisync.flush_status()

    @staticmethod
    def on_reset_master(node: Node) -> None:
        node.semisync.reset_master()

    @staticmethod
    def initial_variables(node: Node, variables: dict) -> None:
        variables.update(node.semisync.vars)

    @staticmethod
    def samples_server_status(node: Node) -> bool:
        return node.semisync.enabled or any(r.semi_sync for r in node.replicas) or bool(node.runtime.get(SLAVE_ENABLED))

    @staticmethod
    def status_variables(node: Node, variables: dict) -> None:
        """SHOW GLOBAL STATUS's semi-sync counters with the variables the properties read."""
        variables.update(node.semisync.variables())
        ch = node.channel
        variables["Rpl_semi_sync_slave_status"] = "ON" if ch is not None and ch.io_running and ch.semi_sync else "OFF"

    @staticmethod
    def slave_hosts(node: Node, hosts: list) -> None:
        # a replica registers (COM_REGISTER_SLAVE, slave.cc register_slave_on_master) right before
        # its dump request: one with a request still on its way is not listed yet
        ss = node.semisync
        hosts += [ss.slave_host(r.node.id, r.node.server_id, r.semi_sync) for r in node.replicas if r.dump_running]
