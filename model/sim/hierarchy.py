"""Global group IDs (--rpl-hierarchical) as a component: the rules are model/groupid.py's; this is
where they act on the simulation's nodes and channels.
"""
from __future__ import annotations

from itertools import takewhile
from replcheck.spec import formats as F

from .. import mutants as M
from .. import partial as P
from .. import recovery as R
from ..delay import US, Event
from ..groupid import (HALT_LOWER, HALT_NEVER, HALT_NOT_HIGHER, GroupEnd, binlog_info, check_set_group_id, connect_by_id_error,
                       must_halt, purge_candidates)
from .component import Feature, Kernel
from .state import Channel, Entry, Node, logged_again


class Hierarchy(Feature):
    """Global group IDs on the simulation's servers and channels.

    Issuing an ID at the root's binlog write and carrying the master's on a slave, the halt rule,
    the binlog index, start-up recovery of the ID, SHOW BINLOG INFO FOR, SET BINLOG_GROUP_ID, PURGE
    BINARY LOGS, CONNECT_USING_GROUP_ID, failover to the most advanced slave and restore."""

    def __init__(self, sim: Kernel):
        super().__init__(sim)
        # group-id-before-binlog-lock: the IDs taken at BEGIN, per (server, transaction), and the
        # last taken per server
        self.early: dict[tuple[str, str], int] = {}
        self.taken: dict[str, int] = {}

    # -- binlog write and commit -----------------------------------------------------------------
    def on_trx_begin(self, node: Node, trx: str) -> None:
        """A client transaction begins on a root master: group-id-before-binlog-lock takes its ID
        now, outside LOCK_log (the design takes it at the binlog write, so that IDs are sequential)."""
        if node.rpl_hierarchical and M.GROUP_ID_BEFORE_BINLOG_LOCK in self.mutants and node.channel is None:
            self.taken[node.id] = self.early[(node.id, trx)] = max(node.group_id, self.taken.get(node.id, 0)) + 1

    def on_commit(self, node: Node, trx: str, start: int, op: dict) -> dict | None:
        """The group ID a client commit on this server gets ({"group_id": ID}), or None when the
        commit is done without one (a slave's own write) or refused (no ID left)."""
        if not node.rpl_hierarchical:
            return {}
        if node.channel is not None:
            # A slave does not binlog what originated on itself (the design's have_master check).
            self.source.engine_commit(node, trx, None)
            self.emit("commit", node.id, trx=trx, gtid=None, start=start, binlogged=False)
            return None
        if node.group_id >= F.MAX_GROUP_ID:
            self.emit("commit", node.id, trx=trx, gtid=None, start=start, errno=F.ER_ERROR_WHEN_EXECUTING_COMMAND,
                     message=f"group_id {node.group_id} is the largest there is; SET BINLOG_GROUP_ID ... WITH RESET")
            return None
        # The root master issues the next ID under the binlog lock; the MariaDB view's
        # sequence number is the same number.
        node.gtid_seq[0] = node.group_id
        return {"group_id": self.early.pop((node.id, trx), node.group_id + 1)}

    def on_group_read(self, ch: Channel, entry: Entry) -> bool | None:
        """The halt rule: the SQL thread stops instead of playing a group whose ID does not follow
        its binlog's (a group with an ID, on a --rpl-hierarchical slave)."""
        if not ch.node.rpl_hierarchical or entry.group_id is None:
            return None
        if M.NO_HALT_ON_LOWER_ID in self.mutants:
            rule = HALT_NEVER
        else:
            rule = HALT_LOWER if M.HALT_STRICTLY_LOWER in self.mutants else HALT_NOT_HIGHER
        if not must_halt(entry.group_id, ch.node.group_id, rule):
            return False
        ch.last_sql_errno, ch.last_sql_error = F.ER_SLAVE_GROUP_ID_LOWER, F.halt_message(entry.group_id, ch.node.group_id)
        self.applier.stop_sql(ch, "error", statement=False, errno=ch.last_sql_errno, message=ch.last_sql_error,
                           relay_file=entry.file, relay_pos=entry.pos)
        return True

    def on_group_end(self, ch: Channel, entry: Entry, first: int) -> bool:
        """The SQL thread's COMMIT in the design's order: binlog write, engine commit (InnoDB's
        replication state with it), relay-log.info flush; a crash point may fall between any two."""
        if not ch.node.rpl_hierarchical:
            return False
        self._commit(ch, entry, first)
        return True

    def _commit(self, ch: Channel, entry: Entry, first: int) -> None:
        sim = self.sim
        node, ev = ch.node, entry.ev
        group = P.own_events(ch.relay[first:ch.sql_pos])
        if node.crash_point == R.BEFORE_BINLOG_WRITE:
            ch.applied_in_group = max(ch.applied_in_group, 1)  # the crash rolls the group back
            self.lifecycle.crash_at(node, R.BEFORE_BINLOG_WRITE)
            return
        # The THD carries the master's group ID into this binlog; a master without the option
        # sent none, and mixed mode logs 0.
        gid = group[0].group_id if group[0].group_id is not None else 0
        ict = sim.local(node, sim.now) if node.commit_timestamps else None
        self.source.write_binlog(node, logged_again(group, ict, node.offset), gid)
        ch.exec_group_id = gid or ch.exec_group_id
        ch.applied_in_group = 0
        if not node.loaded_since_read(F.parse_gtid(ev.gtid)[0], ev.gtid):
            node.slave_gtids[F.parse_gtid(ev.gtid)[0]] = ev.gtid  # mysql.gtid_slave_pos commits with the group
        if node.crash_point == R.AFTER_BINLOG_WRITE:
            node.prepared.append((ev.trx, ev.gtid))  # an XID in the binlog: recovery commits it
            self.lifecycle.crash_at(node, R.AFTER_BINLOG_WRITE)
            return
        node.executed.add(ev.gtid)
        self.source.engine_commit(node, ev.trx, ev.gtid)
        if node.rpl_transaction_enabled:
            ch.engine_pos, ch.engine_master = ch.sql_pos, (entry.master_file, entry.master_end)
        if self.lifecycle.crash_at(node, R.AFTER_ENGINE_COMMIT):
            return
        # committed in the engine: a semi-sync master's wait for an ack (AFTER_COMMIT) holds the
        # SQL thread before relay-log.info moves, as the applier's own commit does
        if not self.applier.holds_committed(ch, first, ch.sql_pos):
            self.applier.advance_group(ch, entry)

    # -- the binlog index, shutdown and start-up -----------------------------------------------------
    def on_binlog_open(self, node: Node) -> None:
        """A new binlog's index entry: the last group ID so far (its FDE has none)."""
        last_sid = node.index[-1][2] if node.index else node.server_id
        node.index.append([node.binlog_file, node.group_id, last_sid])

    @staticmethod
    def on_binlog_close(node: Node) -> None:
        """MYSQL_LOG::close: the closed file's index entry gets the ID of its last group."""
        # The binlog only grows and the open file is its tail: look no further back than that file.
        last = next((e for e in takewhile(lambda e: e.file == node.binlog_file, reversed(node.binlog)) if e.group_id), None)
        if node.index and last is not None:
            node.index[-1][1:] = [last.group_id, last.ev.server_id]

    def on_shutdown(self, node: Node) -> None:
        sim = self.sim
        if node.rpl_hierarchical and M.STOP_EVENT in self.mutants:
            # The design drops Stop events under --rpl-hierarchical: one would consume an ID.
            when = sim.local(node, sim.now) // US
            self.source.write_binlog(node, [Event("STOP_EVENT", when=when, when_off=node.offset, server_id=node.server_id,
                                           size=F.QUERY_SIZE)], node.group_id + 1)
        self.on_binlog_close(node)

    def emit_index(self, node: Node) -> None:
        self.emit("binlog_index", node.id, content=F.format_index([(f.encode(), g) for f, g, _ in node.index]).decode())

    def on_recover(self, node: Node) -> bool:
        """At start: the last issued group ID again (clean: the index; crash: the last binlog).
        False when an armed crash point kills the start before the new binlog exists."""
        if not node.rpl_hierarchical:
            return True
        entries = [F.IndexEntry(f.encode(), g) for f, g, _ in node.index]
        last_file = [e.group_id for e in node.binlog if e.file == node.binlog_file and e.group_id is not None]
        node.group_id = R.startup_group_id(entries, node.dirty, last_file, M.RECOVERY_IGNORES_INDEX in self.mutants)
        self.emit_index(node)
        return not self.lifecycle.crash_at(node, R.RECOVERY_BEFORE_NEW_BINLOG)

    def on_resume(self, node: Node) -> None:
        """After start-up recovery, before replication resumes: what it found, and (with
        rpl_transaction_enabled) InnoDB's replication state overriding relay-log.info."""
        if not node.rpl_hierarchical:
            return
        self.status.master_status(node)
        ch = node.channel
        if ch is None:
            return
        at = R.sql_restart_position(ch.group_start, ch.engine_pos, node.rpl_transaction_enabled)
        if at != ch.group_start:
            ch.sql_pos = ch.group_start = at
            ch.group_master_file, ch.group_master_pos = ch.engine_master
            self.rli.write_relay_log_info(ch)
        ch.engine_pos = None

    @staticmethod
    def status_fields(ch: Channel, fields: dict) -> None:
        if ch.node.rpl_hierarchical:
            fields["Exec_Master_Group_ID"] = ch.exec_group_id
            fields["Connect_Using_Group_ID"] = "Yes" if ch.connect_by_id else "No"

    @staticmethod
    def master_status_fields(node: Node, fields: dict) -> None:
        if node.rpl_hierarchical:
            fields["Group_ID"] = node.group_id

    # -- SHOW BINLOG INFO FOR, SET BINLOG_GROUP_ID, PURGE BINARY LOGS ----------------------------------
    @staticmethod
    def binlog_ends(node: Node, purged_too: bool = False) -> list[GroupEnd]:
        """Where each group ends in the node's (unpurged) binlogs, with the IDs SET BINLOG_GROUP_ID
        gave a new binlog (they end where that file's FDE ends)."""
        ends = []
        for e in node.binlog:
            if e.file in node.purged and not purged_too:
                continue
            if e.ev.type == "FORMAT_DESCRIPTION_EVENT" and e.file in node.set_ids:
                ends.append(GroupEnd(*node.set_ids[e.file][:1], e.file, e.end, node.set_ids[e.file][1]))
            elif e.group_id and (e.ev.last or e.ev.trx is None):
                ends.append(GroupEnd(e.group_id, e.file, e.end, e.ev.server_id))
        return ends

    def binlog_info(self, node: Node, group_id: int, asker: Node | None = None) -> GroupEnd | None:
        found = binlog_info(self.binlog_ends(node), group_id)
        answer = {"Log_name": found.log_name, "Pos": found.pos, "Server_ID": found.server_id} if found else {}
        self.emit("stmt", node.id, op="show_binlog_info", group_id=group_id,
                      errno=None if found else F.ER_ERROR_WHEN_EXECUTING_COMMAND,
                      message="" if found else F.BINLOG_INFO_NOT_FOUND, **answer, **({"for": asker.id} if asker else {}))
        return found

    def show_binlog_info(self, node: Node, op: dict) -> None:
        if not node.rpl_hierarchical:  # refused like the patch's other statements (rpl_hier_off: --error 1290)
            self.emit("stmt", node.id, op="show_binlog_info", group_id=op["group_id"], errno=F.ER_OPTION_PREVENTS_STATEMENT,
                      message=F.NOT_HIERARCHICAL)
            return
        self.binlog_info(node, op["group_id"])

    def set_binlog_group_id(self, node: Node, op: dict) -> None:
        new = op["group_id"]
        errno, message = check_set_group_id(node.rpl_hierarchical, op.get("privileged", True), node.group_id, new,
                                            op.get("with_reset", False))
        args = {k: v for k, v in op.items() if k not in ("at", "op", "node")}
        self.emit("stmt", node.id, op="set_binlog_group_id", **args, errno=errno, message=message)
        if errno is not None:
            return
        # Persisted at once: a new binlog whose index entry holds the ID, relay-log.info flushed.
        self.source.op_flush_logs(node, {})
        node.group_id = new
        node.index[-1][1:] = [new, op.get("master_server_id", node.server_id)]
        node.set_ids[node.binlog_file] = tuple(node.index[-1][1:])
        if node.channel is not None:
            node.channel.exec_group_id = new
            self.rli.write_relay_log_info(node.channel)
        self.status.master_status(node)

    def purge_binary_logs(self, node: Node, op: dict) -> None:
        """PURGE BINARY LOGS TO / BEFORE: the oldest binlogs go, from the index and from disk. Never
        the active one; the purge stops at a file a slave's dump thread still reads (with a warning)."""
        files = [f for f, _, _ in node.index]
        args = {k: v for k, v in op.items() if k not in ("at", "op", "node")}
        if "to" in op and op["to"] not in files:
            self.emit("stmt", node.id, op="purge_binary_logs", **args, errno=F.ER_UNKNOWN_TARGET_BINLOG,
                     message=F.TARGET_NOT_FOUND, warning=None, purged=[], remaining=files)
            return
        wanted = purge_candidates(files, op.get("to"), op.get("before_us"), node.mtimes)
        # only a dump thread whose request arrived reads a binlog: it sets thd->current_linfo as it
        # starts (sql/sql_repl.cc, mysql_binlog_send), and that is what log_in_use checks; a replica
        # whose connect is still on its way (START SLAVE, the channel's latency) holds nothing yet
        reading = {self._reading(r) for r in node.replicas if r.dump_running}
        purged = list(takewhile(lambda f: f not in reading, wanted))
        warning, message = None, ""
        if len(purged) < len(wanted):
            warning = F.ER_WARN_PURGE_LOG_IN_USE
            message = (f"file {wanted[len(purged)]} was not purged because it was being read by a thread, "
                       f"purged only {len(purged)} out of {len(wanted)} files.")
        node.purged |= set(purged)
        node.index = [e for e in node.index if e[0] not in node.purged]
        for f in purged:
            node.set_ids.pop(f, None)
        self.emit("stmt", node.id, op="purge_binary_logs", **args, errno=None, message=message, warning=warning,
                 purged=purged, remaining=[f for f, _, _ in node.index])
        if node.rpl_hierarchical:
            self.emit_index(node)

    @staticmethod
    def _reading(ch: Channel) -> str:
        """The master's binlog a connected slave's dump thread reads next."""
        src = ch.source
        return src.binlog[ch.fetch].file if ch.fetch is not None and ch.fetch < len(src.binlog) else src.binlog_file

    # -- CONNECT_USING_GROUP_ID --------------------------------------------------------------------
    @staticmethod
    def connect_option_error(node: Node, op: dict) -> tuple[int, str] | None:
        """CHANGE MASTER TO CONNECT_USING_GROUP_ID: with a log file or position it names two places
        to start; without --rpl-hierarchical there is no group ID to ask by."""
        if "master_log_file" in op:
            return F.ER_SYNTAX_ERROR, F.SYNTAX_ERROR
        if not node.rpl_hierarchical:
            return F.ER_OPTION_PREVENTS_STATEMENT, F.NOT_HIERARCHICAL
        return None

    def dump_request(self, ch: Channel) -> dict:
        """What the slave's dump request asks by: its last group ID and that group's server_id
        (read as the master gets them: the model has no time between sending and reading)."""
        last = self.binlog_ends(ch.node, purged_too=True)
        return {"group_id": ch.node.group_id, "server_id": last[-1].server_id if last else ch.node.server_id}

    def place_dump(self, ch: Channel, gid: int, sid: int) -> str | None:
        """The master places a dump request by group ID (ch.fetch and the positions), or says why
        it cannot."""
        src = ch.source
        ends = self.binlog_ends(src)
        found = binlog_info(ends, gid)
        refused = connect_by_id_error(ends, gid, sid)
        if refused is not None and found is not None and M.CONNECT_IGNORES_SERVER_ID in self.mutants:
            refused = None  # the alternate future goes unnoticed
        if refused is None:
            ch.fetch = next((i for i, e in enumerate(src.binlog) if (e.file, e.pos) >= (found.log_name, found.pos)),
                            len(src.binlog))
            ch.read_master_file, ch.read_master_pos = found.log_name, found.pos
            ch.group_master_file, ch.group_master_pos = found.log_name, found.pos
        return refused

    # -- failover and restore ------------------------------------------------------------------------
    def elect(self, old: Node) -> Node:
        """The most advanced slave of the failed master by SHOW MASTER STATUS (Group_ID, then
        binlog position for servers without group IDs)."""
        candidates = [r.node for r in old.replicas if r.node.up]
        for c in candidates:
            self.status.master_status(c, election=old.id)
        return max(candidates, key=lambda c: (c.group_id, c.binlog_file_no, c.binlog_pos))

    def _place_by_group_id(self, source: Node, gid: int, asker: Node) -> tuple[str, int] | None:
        """Where a slave that played up to `gid` continues in `source`'s binlogs: after that group
        (SHOW BINLOG INFO FOR), or at the start of its first binlog when it played nothing (if
        that was purged, the dump request is refused); None when the ID is not there."""
        if gid:
            found = self.binlog_info(source, gid, asker)
            return (found.log_name, found.pos) if found else None
        return self._first_binlog(source), F.BINLOG_START

    @staticmethod
    def _first_binlog(node: Node) -> str:
        return node.binlog[0].file if node.binlog else node.binlog_file

    def on_promote_replica(self, r: Channel, new: Node) -> bool:
        """Failover between --rpl-hierarchical servers: SHOW SLAVE STATUS on the slave, SHOW BINLOG
        INFO FOR its ID on the new master, CHANGE MASTER to the answer (from the start when it
        played nothing yet)."""
        if not (new.rpl_hierarchical and r.node.rpl_hierarchical):
            return False
        self._repoint(r, new)
        return True

    def _repoint(self, r: Channel, new: Node) -> None:
        was_io, was_sql = r.io_running, r.sql_running
        if r.sql_running:
            self.applier.stop_sql(r, "failover", statement=False)
        self.receiver.disconnect(r)
        r.io_running = False
        place = self._place_by_group_id(new, r.exec_group_id, r.node)
        if place is None:
            # The new master does not hold the slave's last group (the slave is ahead of it): no
            # position to give, so the slave asks by its group ID at every connect, refused (1236)
            # while the master lacks it. Its relay log from the old master goes all the same:
            # played after a restart it would pass for the new master's, and the new master's
            # binlog would be read from the old one's position.
            self.admin.change_source_by_id(r, new)
            at = {"connect_using_group_id": True}
        else:
            self.admin.change_source(r, new, *place)
            at = {"master_log_file": place[0], "master_log_pos": place[1]}
        self.rli.write_relay_log_info(r)
        self.emit("stmt", r.node.id, op="change_master", master_host=new.id, **at, errno=None, message="")
        if was_sql and r.node.up:
            self.applier.start_sql(r)
        if was_io and r.node.up:
            self.receiver.start_io(r)

    def restore(self, node: Node, op: dict) -> None:
        """A failed server rebuilt from a backup of another and put back as a slave of `source`:
        the backup has the data, not the binlog index, so the saved group ID is SET by hand."""
        sim = self.sim
        donor, source = sim.nodes[op["from"]], sim.nodes[op.get("source", op["from"])]
        # A down donor cannot be backed up: crashed between its binlog write and engine commit,
        # its group ID would already count a group its data lacks (SET past it, never replayed).
        if node.up or node.replicas or source is node or donor is node or not source.up or not donor.up:
            self.emit("stmt", node.id, op="restore", errno=F.ER_BAD_SLAVE,
                     message="restore needs a stopped server without slaves, and a running source and donor")
            return
        # The backup's data holds what the donor's engine committed: a group binlogged and only
        # prepared (AFTER_SYNC waiting for its ack) is not in it, so the ID set is the last one before
        # such groups (SET past them, the restored slave would never be sent them).
        waiting = {trx for trx, _ in donor.prepared}
        held_back = [e.group_id for e in donor.binlog if e.group_id and e.ev.trx in waiting]
        saved = min(held_back) - 1 if held_back else donor.group_id
        node.visible, node.executed, node.prepared = list(donor.visible), set(donor.executed), []
        node.slave_gtids, node.binlog_gtids = dict(donor.slave_gtids), {}
        node.binlog, node.index, node.set_ids, node.group_id, node.dirty, node.crash_point = [], [], {}, 0, False, None
        node.purged, node.mtimes = set(), {}
        node.visible_at, node.prepared_at, node.prepared_slave, node.engine_lost = [sim.now] * len(node.visible), {}, {}, []
        node.synced = node.published = node.writes_since_sync = 0
        node.durable_end = None
        node.up, node.failed_over = True, False
        node.incarnation += 1
        self.emit("restore", node.id, donor=donor.id, source=source.id)
        self.lifecycle.start_server(node)
        for hook in self.hooks.on_restart:  # a server started again, from its configuration, as at a restart
            hook(node)
        self.source.open_binlog(node)
        if node.channel is None:
            sim.add_channel(node, source, op.get("latency_us", 0))
        ch = node.channel
        if op.get("set_group_id", True):
            self.set_binlog_group_id(node, {"op": "set_binlog_group_id", "group_id": saved, "with_reset": True})
        place = self._place_by_group_id(source, node.group_id, node)
        file, pos = place or (self._first_binlog(source), F.BINLOG_START)
        self.admin.change_source(ch, source, file, pos)
        ch.exec_group_id = node.group_id
        self.rli.write_relay_log_info(ch)
        self.receiver.start_io(ch)
        self.applier.start_sql(ch)
