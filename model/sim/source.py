"""The source side of a server: a client's transaction committed (statement errors, filters,
group IDs, GTIDs, crash points inside the write, binlog failures and incidents, the semi-sync
wait), the binlog written, synced, rotated and published to the dump threads.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from replcheck.spec import formats as F
from replcheck.spec import vocabulary as V
from replcheck.spec.formats import (BINLOG_START, FDE_SIZE, GTID_SIZE, QUERY_SIZE, ROTATE_SIZE, XID_SIZE)

from .. import domains as DOM
from .. import incident as I
from .. import mechanics as X
from .. import mutants as M
from .. import recovery as R
from ..delay import US, Event

from .component import Component, Kernel
from .state import (CR_SERVER_LOST, ER_GLOBAL_VARIABLE, ER_UNKNOWN_SYSTEM_VARIABLE, NO_GROUP_ID, Entry, Node, event_fields)


def non_transactional(op: dict) -> bool:
    """A client transaction that changes a non-transactional (MyISAM) table only, and commits."""
    return op.get("engine") == "myisam" and not (op.get("ddl") or op.get("error") or op.get("binlog_failure"))


class Source(Component):
    """A server's commits and its binlog."""

    def __init__(self, sim: Kernel):
        super().__init__(sim)
        # The groups of a non-transactional transaction's later statements: each becomes visible,
        # but the copy of the transaction a client counts is its first statement's row.
        self._later_parts: set[str] = set()
        self._statements: set[str] = set()  # the groups of all but its last statement

    def ends_statement(self, gtid: str) -> bool:
        """The group is a statement's of a non-transactional transaction that has more to come: its
        client's COMMIT is still ahead."""
        return gtid in self._statements

    def op_trx(self, node: Node, op: dict) -> None:
        if node.up and (refused := self._session_refusal(op)):
            # The client's SET SESSION before it fails, so the transaction never runs
            self.emit("commit", node.id, trx=self._trx_name(node, op), gtid=None, start=self.sim.now,
                      errno=refused[0], message=refused[1])
            return
        for hook in self.hooks.on_trx_begin:
            hook(node, self._trx_name(node, op))
        stmts = op.get("statements") or [{}]
        start = self.sim.now
        t = start
        starts = []
        for s in stmts:
            starts.append(t)
            t += s.get("duration_us", 0)
        if len(stmts) > 1 and non_transactional(op):
            # Each statement's changes go to the statement cache (use_trans_cache: ROW format, or an
            # empty trx cache in STATEMENT format), which binlog_commit flushes at the statement's end
            # as a GTID group of its own (binlog_commit_flush_stmt_cache, MariaDB sql/log.cc; MySQL's
            # sql/binlog.cc alike); the COMMIT then has nothing to write.
            for part, (s, at) in enumerate(zip(stmts, starts)):
                self.at(at, self._commit, node, node.incarnation, {**op, "statements": [s]}, [at], part, part < len(stmts) - 1)
            return
        self.at(t, self._commit, node, node.incarnation, op, starts)

    def _session_refusal(self, op: dict) -> tuple[int, str] | None:
        """A transaction's own GTID parts are MariaDB session variables (sys_vars.cc: gtid_domain_id,
        gtid_seq_no, and server_id made SESSION_VAR in 10.0). MySQL has no gtid_domain_id or
        gtid_seq_no (ER_UNKNOWN_SYSTEM_VARIABLE) and a GLOBAL_VAR(server_id) only (sys_vars.cc,
        Sys_server_id: ER_GLOBAL_VARIABLE); the harness sets them in this order, the first refused
        stops the rest."""
        if self.mech.session_gtid_variables:
            return None
        for field, name in (("domain", DOM.GTID_DOMAIN_ID), ("server_id", "server_id"), ("gtid_seq_no", "gtid_seq_no")):
            if op.get(field) is None:
                continue
            if field == "server_id":
                return ER_GLOBAL_VARIABLE, f"Variable '{name}' is a GLOBAL variable and should be set with SET GLOBAL"
            return ER_UNKNOWN_SYSTEM_VARIABLE, f"Unknown system variable '{name}'"
        return None

    @staticmethod
    def _trx_name(node: Node, op: dict) -> str:
        return op.get("trx") or f"{node.id}-{op['at']}"

    def _commit(self, node: Node, incarnation: int, op: dict, starts: list[int], part: int = 0, more: bool = False) -> None:
        """The transaction's commit; `part`, the statement of a non-transactional transaction whose
        own group this is (its later statements never run once the session is gone), `more` if
        statements follow it."""
        trx = self._trx_name(node, op)
        if node.incarnation != incarnation or not node.up:
            if not part:  # a later statement never runs once its session is gone: nothing to answer
                self.emit("error", node.id, trx=trx, errno=CR_SERVER_LOST, message="Lost connection to server during query")
            return
        if op.get("binlog_failure"):
            self._binlog_failure(node, trx, op, starts[0])
            return
        if M.DISK_FULL_FAILS_WRITE in self.mutants and self.diskfull.full(node):
            self._binlog_failure(node, trx, {**op, "binlog_failure": "write_error"}, starts[0])
            return
        failed: dict = {}  # the statement's error, returned with its commit, and the code its event carries
        code = None
        for hook in self.hooks.statement_error:
            answer = hook(node, trx, starts[0], op)
            if answer is None:
                return
            failed.update(answer[0])
            code = answer[1] if answer[1] is not None else code
        stmts = op.get("statements") or [{}]
        table, skip, shown = V.table_of(op), bool(op.get("skip_replication")), V.commit_fields(op, self.sim.filtering)
        ids: dict = {}
        for hook in self.hooks.on_commit:
            fields = hook(node, trx, starts[0], op)
            if fields is None:
                return
            ids.update(fields)
        fixed = op.get("timestamp")  # SET TIMESTAMP: the session's statements carry this time
        whens = [fixed if fixed is not None else self.sim.local(node, s) // US for s in starts]
        commit_when = fixed if fixed is not None else self.sim.local(node, self.sim.now) // US
        if self.lifecycle.crash_at(node, R.BEFORE_BINLOG_WRITE):
            self.emit("commit", node.id, trx=trx, gtid=None, start=starts[0], errno=CR_SERVER_LOST,
                      message="Lost connection to server during query")
            return
        # The session's gtid_domain_id, server_id and gtid_seq_no number the group (MariaDB sql/log.cc,
        # MYSQL_BIN_LOG::write_gtid_event); a seq_no of its own leaves the domain's counter at the
        # highest seen (rpl_gtid.cc, rpl_binlog_state::update_nolock), else the next one is taken.
        domain = op.get("domain", node.variables.get(DOM.GTID_DOMAIN_ID, 0))
        server_id = op.get("server_id", node.server_id)
        counter = node.gtid_seq.get(domain, 0)
        seq = op.get("gtid_seq_no") or counter + 1
        node.gtid_seq[domain] = max(counter, seq)
        gtid = F.gtid(domain, server_id, seq)
        if part:
            self._later_parts.add(gtid)
        if more:
            self._statements.add(gtid)
        if refused := self.refuses_binlogging(node, gtid):
            node.gtid_seq[domain] = counter
            self.emit("commit", node.id, trx=trx, gtid=None, start=starts[0], errno=DOM.ER_GTID_STRICT_OUT_OF_ORDER,
                      message=refused)
            return
        ict = self.sim.local(node, self.sim.now) if node.commit_timestamps else None
        common = dict(trx=trx, server_id=server_id, gtid=gtid, when_off=node.offset,
                      ict=ict, ict_off=node.offset, oct=ict, oct_off=node.offset, table=table, skip=skip)
        gtid_type = "GTID_LOG_EVENT" if node.gtid_mode else "ANONYMOUS_GTID_LOG_EVENT"
        events = [Event(gtid_type, idx=0, when=whens[0], size=GTID_SIZE, **common)]
        for i, s in enumerate(stmts):
            events.append(Event("QUERY_EVENT", idx=i + 1, when=whens[i], cost_us=s.get("replica_cost_us", 0),
                                size=QUERY_SIZE, error_code=(code or 0) if i == len(stmts) - 1 else 0, **common))
        if op.get("ddl"):
            events[-1] = replace(events[-1], last=True)
        elif op.get("engine") == "myisam":
            # no XID without a transactional engine: the statement cache ends with a Query "COMMIT"
            # (binlog_commit_flush_stmt_cache in sql/log.cc; MariaDB's binlog_incident.result shows it)
            events.append(Event("QUERY_EVENT", idx=len(events), when=commit_when, last=True, size=QUERY_SIZE, **common))
        else:
            events.append(Event("XID_EVENT", idx=len(events), when=commit_when, last=True, size=XID_SIZE, **common))
        # the GTID is taken before the write, which may wait for space (MariaDB shows it in
        # @@gtid_binlog_pos meanwhile); the group's events keep their statements' times
        write = (node, node.incarnation, trx, gtid, events, ids, {**ids, **shown, **failed}, starts[0], skip)
        if not self.waits_for_binlog(node, self._write_group, *write):
            self._write_group(*write)

    def _write_group(self, node: Node, incarnation: int, trx: str, gtid: str, events: list[Event], ids: dict,
                     fields: dict, start: int, skip: bool) -> None:
        if node.incarnation != incarnation or not node.up:  # it went down while the write waited
            self.emit("commit", node.id, trx=trx, gtid=None, start=start, errno=CR_SERVER_LOST,
                      message="Lost connection to server during query")
            return
        if events[0].ict is not None and (ict := self.sim.local(node, self.sim.now)) != events[0].ict:
            # its write waited for space: the commit timestamps are the write's (WL7318.ICT)
            events = [replace(e, ict=ict, oct=ict) for e in events]
        node.executed.add(gtid)
        if node.crash_point in R.WRITE_POINTS:
            self._crash_in_write(node, trx, gtid, events, ids, start)
            return
        self.write_binlog(node, events, ids.get("group_id"))
        if node.crash_point == R.AFTER_BINLOG_WRITE:
            node.prepared.append((trx, gtid))  # binlogged: crash recovery will commit it
            self.lifecycle.crash_at(node, R.AFTER_BINLOG_WRITE)
            self.emit("commit", node.id, trx=trx, gtid=gtid, start=start, errno=CR_SERVER_LOST,
                      message="Lost connection to server during query", **ids)
            return
        if not any(hook(node, trx, gtid, start, skip, fields) for hook in self.hooks.on_commit_written):
            self.engine_commit(node, trx, gtid)
            self.emit("commit", node.id, trx=trx, gtid=gtid, start=start, **fields)

    def waits_for_binlog(self, node: Node, then: Callable, *args: Any) -> bool:
        """Whether a binlog write the node starts now must wait (HOOKS binlog_write_at: its disk is
        full); if so `then(*args)` is queued for when it can go, behind the writes already waiting."""
        done = max((hook(node) for hook in self.hooks.binlog_write_at), default=self.sim.now)
        if done <= self.sim.now:
            return False
        self.at(done, then, *args)
        return True

    def refuses_binlogging(self, node: Node, gtid: str) -> str:
        """Why a feature keeps this GTID out of the binlog (HOOKS refuses_binlogging), or ""."""
        return next((why for hook in self.hooks.refuses_binlogging if (why := hook(node, gtid))), "")

    def _crash_in_write(self, node: Node, trx: str, gtid: str, events: list[Event], ids: dict, start: int) -> None:
        """The node dies inside the group's binlog write (its last event torn) or after the write,
        before the sync; the engine has prepared the transaction (two-phase commit). Before the
        sync the dump threads may already read the group (sync_binlog != 1): the node dies once
        what they sent has arrived, as the sync is under way meanwhile."""
        torn = node.crash_point == R.INSIDE_BINLOG_WRITE
        node.crash_point = None
        node.prepared.append((trx, gtid))
        node.prepared_at[trx] = self.sim.now
        self.write_binlog(node, events[:-1] if torn else events, ids.get("group_id"), sync=False,
                           torn=events[-1] if torn else None)
        if torn:  # nothing is written after a torn event: the node dies in the write
            self._crash_during_commit(node, node.incarnation, trx, gtid, start, ids)
            return
        wait = max((ch.latency_us for ch in node.replicas if ch.connected), default=0)
        self.at(self.sim.now + wait, self._crash_during_commit, node, node.incarnation, trx, gtid, start, ids)

    def _crash_during_commit(self, node: Node, incarnation: int, trx: str, gtid: str, start: int, ids: dict) -> None:
        if node.incarnation == incarnation and node.up:  # else it went down meanwhile: the client lost it then
            self.lifecycle.op_crash(node, {"kind": node.crash_kind})
        self.emit("commit", node.id, trx=trx, gtid=gtid, start=start, errno=CR_SERVER_LOST,
                  message="Lost connection to server during query", **ids)

    def _binlog_failure(self, node: Node, trx: str, op: dict, start: int) -> None:
        """The statement's changes could not be binlogged: rolled back, or done and lost from the log."""
        errno, message, committed = I.binlog_failure(op.get("engine", "innodb"), op["binlog_failure"], self.mech.texts == X.MARIADB)
        if M.BINLOG_WRITE_ERROR_IGNORED in self.mutants:  # Bug #68953: do_write_cache's error dropped
            self.engine_commit(node, trx, None)
            self.emit("commit", node.id, trx=trx, gtid=None, start=start, errno=None)
            return
        if committed:
            self.engine_commit(node, trx, None)
        self.emit("commit", node.id, trx=trx, gtid=None, start=start, errno=errno, message=message)
        if committed or M.INCIDENT_ON_ROLLBACK in self.mutants:
            self._record_incident(node, I.INCIDENT_LOST_EVENTS, I.BINLOG_WRITE_MESSAGE)

    def _record_incident(self, node: Node, code: int, message: str, forced: bool = False) -> None:
        """The incident, then a rotation where the server rotates (a debug-injected statement
        incident, `forced`, rotates everywhere): the log after the gap starts clean (WL#3464)."""
        if M.NO_INCIDENT in self.mutants and code == I.INCIDENT_LOST_EVENTS:
            return
        when = self.sim.local(node, self.sim.now) // US
        self.write_binlog(node, [Event("INCIDENT_EVENT", when=when, when_off=node.offset, server_id=node.server_id,
                                        incident=code, message=message, size=40 + len(message))])
        if forced or self.mech.incident_rotates:
            self.op_flush_logs(node, {})

    def op_record_incident(self, node: Node, op: dict) -> None:
        if self.waits_for_binlog(node, self.op_record_incident, node, op):
            return
        self.emit("stmt", node.id, op="record_incident", via=op.get("via", "binlog"), code=op["code"],
                  message=op.get("message", ""), errno=None)
        # The statement's incident as the debug point incident_database_resync_on_replace writes it:
        # Incident_log_event, then rotate_and_purge(true) (sql/sql_parse.cc, SQLCOM_REPLACE), in MariaDB
        # as in MySQL (rpl_skip_incident.result: two binlogs after it, on both servers)
        self._record_incident(node, op["code"], op.get("message", ""), forced=op.get("via", "binlog") == "binlog")

    def op_cluster_gap(self, node: Node, op: dict) -> None:
        """Changes the server never received from the cluster (the seed's three bug scenarios):
        they are in the data, not in the binlog, and an incident marks the gap."""
        for name in op["trxs"]:
            self.engine_commit(node, name, None)
        self._record_incident(node, I.INCIDENT_LOST_EVENTS, I.GAP_MESSAGES[op["cause"]])

    def engine_commit(self, node: Node, trx: str, gtid: str | None, **worker: Any) -> None:
        if gtid not in self._later_parts:  # one copy of the transaction: its first statement's row
            node.visible.append(trx)
            node.visible_at.append(self.sim.now)
        self.emit("visible", node.id, trx=trx, gtid=gtid, **worker)

    def op_flush_logs(self, node: Node, op: dict) -> None:
        if op and self.waits_for_binlog(node, self.op_flush_logs, node, op):
            return
        if op and self.domains.flush_delete_domain(node, op):
            return
        if op:  # the statement, not a rotation the server makes itself
            self.emit("stmt", node.id, op="flush_logs", errno=None, warning=None, message="")
            # FLUSH LOGS rotates the relay log of every connection too (REFRESH_LOG takes in the relay
            # logs; MDEV-9544, multi_source/mdev-9544.result: each connection's relay log rotated)
            for ch in list(node.connections.values()) or [c for c in [node.channel] if c is not None]:
                self.receiver.rotate_relay(ch)
        when = self.sim.local(node, self.sim.now) // US
        self.write_binlog(node, [Event("ROTATE_EVENT", when=when, when_off=node.offset, server_id=node.server_id,
                                        size=ROTATE_SIZE)])
        self.open_binlog(node)

    def open_binlog(self, node: Node) -> None:
        for hook in self.hooks.on_binlog_close:
            hook(node)
        node.binlog_file_no += 1
        node.binlog_pos = BINLOG_START
        for hook in self.hooks.on_binlog_open:
            hook(node)
        when = self.sim.local(node, self.sim.now) // US
        self.write_binlog(node, [Event("FORMAT_DESCRIPTION_EVENT", when=when, when_off=node.offset,
                                        server_id=node.server_id, size=FDE_SIZE)])
        # A rotation syncs (the model's simplification: a machine crash never removes a binlog
        # file, only the unsynced tail of the last one).
        self._sync_binlog(node)
        self._publish(node, self.durability(node)[0])

    def write_binlog(self, node: Node, events: list[Event], group_id: int | None = None, sync: bool = True,
                      torn: Event | None = None) -> None:
        """Write events (and, when a crash falls inside the write, the first bytes of `torn`), then
        flush_and_sync: sync as sync_binlog says (unless a crash falls before the sync), and let the
        dump threads read what they may."""
        if not node.log_bin:
            return
        now, file, obs = self.sim.now, node.binlog_file, self.sim.obs  # the file: it rotates only between writes
        for ev in events + ([torn] if torn else []):
            # a torn event: its header and part of its body
            end = node.binlog_pos + (ev.size // 2 if ev is torn else ev.size)
            # FDE and Rotate headers are frozen: they carry no group ID.
            gid = None if ev.type in NO_GROUP_ID else group_id
            entry = Entry(ev, file, node.binlog_pos, end, group_id=gid, at=now, torn=ev is torn)
            node.binlog.append(entry)
            node.binlog_pos = end
            node.mtimes[file] = now
            if ev.type == "FORMAT_DESCRIPTION_EVENT":
                node.file_start.setdefault(file, len(node.binlog) - 1)
            # a torn event does not end its group: what reads the binlog sees no group end there. (emit's
            # dict, built at once: an event written is no statement, emit's bookkeeping, and frequent)
            obs.append({"t": now, "kind": "binlog", "node": node.id, **event_fields(ev, gid),
                        **({"last": False, "torn": True} if ev is torn else {}), "file": file, "pos": entry.pos, "end": end})
            if ev.gtid and ev.last and ev is not torn:
                d, _, n = F.parse_gtid(ev.gtid)
                node.binlog_gtids[d] = ev.gtid
                if self.mech.gtid_seq_follows_domain:  # the domain's next local GTID follows it
                    node.gtid_seq[d] = max(node.gtid_seq.get(d, 0), n)
        if group_id:  # the in-memory group_id follows the binlog: issued here, or the THD's
            node.group_id = group_id
        node.writes_since_sync += 1
        sync_binlog = self.durability(node)[0]  # read once: the sync and the publish both follow it
        if sync and R.syncs_now(sync_binlog, node.writes_since_sync):
            self._sync_binlog(node)
        self._publish(node, sync_binlog)

    def durability(self, node: Node) -> tuple[int, int]:
        """sync_binlog and innodb_flush_log_at_trx_commit (my.cnf, or the model's defaults in
        spec/systems.toml); a simulator given neither syncs every group, the safe setting."""
        return (int(node.variables.get(R.SYNC_BINLOG, 1)), int(node.variables.get(R.FLUSH_LOG, 1)))

    def _sync_binlog(self, node: Node) -> None:
        node.writes_since_sync = 0
        if node.synced < len(node.binlog):
            node.synced = len(node.binlog)
            last = node.binlog[-1]
            self.emit("binlog_sync", node.id, file=last.file, end=last.end)

    def _publish(self, node: Node, sync_binlog: int) -> None:
        """The dump threads may read up to the synced end when sync_binlog = 1, up to the written end
        otherwise; never a torn event."""
        end = len(node.binlog)
        if R.dump_reads_synced_only(sync_binlog) and M.SEND_BEFORE_SYNC not in self.mutants:
            end = node.synced
        if end and node.binlog[end - 1].torn:
            end -= 1
        if end <= node.published:
            return
        first, node.published = node.published, end
        for ch in node.replicas:
            if ch.connected:
                self.at(self.sim.now + ch.latency_us, self.dump.arrive, ch, ch.io_gen, first, end)
