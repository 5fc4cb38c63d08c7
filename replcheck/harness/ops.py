"""What each op of a History does on a real server: its statement, or the client sessions and
steps the harness carries it out with; which ops (and uses of them) a real server cannot do."""
from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from replcheck.spec import vocabulary as V
from replcheck.harness import disk, stuck, variables
from replcheck.harness.binaries import ServerBinaries
from replcheck.harness.errors import HarnessError, NoAnswer, NodeDown, SqlError, TopologyError
from replcheck.harness.sqlclient import sql_quote
from replcheck.harness.topology import Topology
from replcheck.harness.observe import (CLOCK, STATUS_INTS, STATUS_NULLABLE_INTS, Link, executed_all_read,
                                       gtid_start_purges, _int, links_of)
from replcheck.harness.statements import (ER_BAD_NULL, ER_BAD_TABLE, ER_DUP_ENTRY, RunnerError, admin_statement,
                                          change_master_statement, incident_statement, trx_statement)
from replcheck.harness.timescale import DEFAULT_EPOCH_US
from replcheck.spec import formats as F
from replcheck.spec.formats import ER_STMT_CACHE_FULL, US

if TYPE_CHECKING:
    from replcheck.harness.runner import Runner

CR_SERVER_LOST = 2013  # the client's error when the server dies under a statement: no answer came
# STOP SLAVE of an SQL thread inside a group that changed a non-transactional table waits up to
# SLAVE_WAIT_GROUP_DONE (60 s) for the group's end (sql_slave_killed, sql/slave.cc): a relay log cut
# mid-group never brings it, and the statement returns only then.
GROUP_DONE_S = 60
DOWN_MESSAGE = "Lost connection to server (node is down)"  # the models' text for a statement sent to a node down
# Statements that purge the relay logs when the replica's threads are stopped: START SLAVE with
# MASTER_USE_GTID (start_slave_threads, sql/slave.cc; observed as relay_log_recovery, reason gtid,
# as the models do), RESET SLAVE, CHANGE MASTER (sql_repl.cc).
PURGES_RELAY_LOGS = frozenset({"start_slave", "reset_slave", "change_master"})
ALL_SLAVES = frozenset({"start_all_slaves", "stop_all_slaves"})  # every connection of a multi-source replica
# On a node that never waits for semi-sync acks, an op due after a transaction's planned end waits
# for its COMMIT to return first (at most this long): a model commits it by then, and a loaded
# machine must not let a FLUSH LOGS overtake the incident a slow statement was about to write.
COMMIT_WAIT_S = 10.0


# ---------------------------------------------------------------------------------------------
# The harness's own table of the History's ops (spec/ops.py lists them): how each runs on a real
# server, as "<part of the Runner>.<method>" (an administrative statement: Ops.statement, built by
# statements.BUILDERS), or why a real server cannot run it; and the uses of a runnable op it cannot do.

STATEMENT = "ops.statement"
RUNS: dict[str, str] = {
    "trx": "ops.start_trx", "change_master": STATEMENT, "stop_slave": STATEMENT, "start_slave": STATEMENT,
    "reset_slave": STATEMENT, "flush_logs": STATEMENT, "flush_relay_logs": STATEMENT, "flush_status": STATEMENT, "crash": "faults.crash",
    "restart": "faults.restart", "show_slave_status": "ops.show_slave_status", "set_global": STATEMENT,
    "read": "ops.read", "lose_acks": "faults.lose_acks", "shutdown": "faults.shutdown", "failover": "ops.failover",
    "purge_binary_logs": STATEMENT, "cut_io": "faults.cut_io", "remove_state_file": "faults.remove_state_file",
    "expect": "ops.expect", "start_all_slaves": STATEMENT, "stop_all_slaves": STATEMENT, "clock_step": "faults.clock_step",
    "disk_full": "faults.disk_full",
    "record_incident": "ops.record_incident", "show_master_status": "ops.show_master_status",
    "reset_master": STATEMENT,
}
REFUSED: dict[str, str] = {
    "binlog_statement": "BINLOG statements would be SQL text taken from the History",
    "cluster_gap": "there is no cluster behind the server to lose changes",
    "show_binlog_info": "SHOW BINLOG INFO FOR is a statement of the --rpl-hierarchical patch, not of MariaDB",
    "set_binlog_group_id": "SET BINLOG_GROUP_ID is a statement of the --rpl-hierarchical patch, not of MariaDB",
    "restore": "a server rebuilt from a backup needs SET BINLOG_GROUP_ID (the --rpl-hierarchical patch)",
}


@dataclass(frozen=True)
class Limit:
    """A use of a runnable op that a real server cannot do: `applies(op, ops)` with the History's
    ops, and the message that says why."""

    applies: Callable[[dict, list[dict]], bool]
    message: str


LIMITS: dict[str, tuple[Limit, ...]] = {
    "trx": (Limit(lambda op, ops: op.get("binlog_failure") == "write_error",
                  "op trx with binlog_failure write_error: a real binlog write error cannot be caused (on a full disk "
                  "MariaDB waits for space, docs/server-coverage.md)"),
            Limit(lambda op, ops: "error" in op and not _failing_statement_made(op),
                  "op trx with error: the harness makes a one-statement INSERT fail with ER_BAD_NULL_ERROR (1048) or "
                  "ER_DUP_ENTRY (1062), before or after its first row, and a DDL fail with ER_BAD_TABLE_ERROR (1051) "
                  "before any change")),
    "change_master": (Limit(lambda op, ops: "connect_using_group_id" in op,
                            "op change_master with connect_using_group_id: CONNECT_USING_GROUP_ID is a clause of the "
                            "--rpl-hierarchical patch, not of MariaDB"),),
    "record_incident": (Limit(lambda op, ops: op["code"] != 1 or op.get("via", "binlog") != "binlog",
                              "op record_incident other than LOST_EVENTS (code 1) in the binlog: a release build records "
                              "only that one, when a statement's changes cannot be binlogged"),),
    "crash": (Limit(lambda op, ops: bool(op.get("point")),
                    "op crash with a crash point is not supported: a release server has none to arm"),
              Limit(lambda op, ops: op.get("kind") == "machine",
                    "op crash of kind machine is not supported: the harness can kill the server process (kill -9), "
                    "not the machine under it")),
}


def _failing_statement_made(op: dict) -> bool:
    """The failing statements statements.trx_statement makes (a DDL's part done, as DROP TABLE of a
    table that exists and one that does not, needs the table on every node first: not made)."""
    if op.get("ddl"):
        return op["error"]["errno"] == ER_BAD_TABLE and not op["error"].get("after_changes")
    return op["error"]["errno"] in (ER_BAD_NULL, ER_DUP_ENTRY) and len(op.get("statements") or [{}]) == 1


def check_supported(history: dict) -> None:
    """RunnerError naming the first op (or topology field) a real server cannot do; the caller names the History."""
    for i, op in enumerate(history["ops"]):
        where = f"ops[{i}] (at {op['at']} µs)"
        name = op["op"]
        if name in REFUSED:
            raise RunnerError(f"{where}: op {name} is not supported on a real server: {REFUSED[name]}")
        for limit in LIMITS.get(name, ()):
            if limit.applies(op, history["ops"]):
                raise RunnerError(f"{where}: {limit.message}")
        if RUNS[name] == STATEMENT:
            try:  # its statement, built now, refuses the fields that could not reach SQL
                admin_statement(op, DEFAULT_EPOCH_US)
            except RunnerError as e:
                raise RunnerError(f"{where}: {e}") from None
    if any("connection" in c for c in history["header"]["topology"].get("channels", [])):
        # Failover and rejoin repoint a replica's one channel (Cluster.repoint, rejoin): with named
        # connections in the topology which one they mean is the History's to say, and no op says it.
        for i, op in enumerate(history["ops"]):
            if op["op"] == "failover" or (op["op"] == "restart" and op.get("master")):
                raise RunnerError(f"ops[{i}] (at {op['at']} µs): op {op['op']} in a topology with named connections "
                                  f"(multi-source) is not supported on a real server")
    for i, n in enumerate(history["header"]["topology"]["nodes"]):
        if n.get("relay_log_info"):
            raise RunnerError(f"topology.nodes[{i}].relay_log_info: not supported on a real server (node {n['id']})")
        if n.get("commit_timestamps"):
            raise RunnerError(f"topology.nodes[{i}].commit_timestamps: MySQL 8.0's, not a MariaDB feature (node {n['id']})")
        if n.get("gtid_mode") is False:  # refused here, before any server starts, not by the cluster mid-run
            raise RunnerError(f"topology.nodes[{i}].gtid_mode: off is not supported on a real server: the harness's "
                              f"channels all replicate by GTID (node {n['id']})")
    topology = history["header"]["topology"]
    links = {(c["replica"], c.get("connection") or None) for c in topology.get("channels", [])}
    for i, op in enumerate(history["ops"]):
        if op["op"] == "change_master" and "master_host" in op and (op["node"], op.get("connection") or None) not in links:
            # Every channel runs through a relay made at the start (Runner.add_relay); the models answer 1200 here.
            raise RunnerError(f"ops[{i}] (at {op['at']} µs): op change_master with master_host on a connection the "
                              f"topology does not give node {op['node']} is not supported on a real server")
    try:  # the fields the Cluster cannot honour, refused now rather than when it starts (latencies: timescale's)
        Topology.from_history({**topology, "channels": [{k: v for k, v in c.items() if k != "latency_us"}
                                                        for c in topology.get("channels", [])]})
    except TopologyError as e:
        raise RunnerError(str(e)) from None


def check_server(history: dict, server: ServerBinaries) -> None:
    """RunnerError naming the first variable the History asks for that this build lacks (its
    server would not start); HarnessError when the build cannot say."""
    try:
        problem = variables.lacking(history, server)
    except variables.Unreadable as e:
        raise HarnessError(f"MariaDB {server.version}: cannot list its variables: {e}") from None
    if problem:
        raise RunnerError(problem)


class Ops:
    """Carries out the ops that are not faults."""

    def __init__(self, run: "Runner"):
        self.run = run
        self._last_trx: dict[str, tuple[int, float, int]] = {}  # node -> (k, when started, its `at`) of its last trx
        self._in_flight: dict[str, list[tuple[int, threading.Thread]]] = {}  # node -> (planned end, session)
        self._with_workers: set[str] = set()  # replicas whose SQL thread ran workers at some start

    def start_trx(self, op: dict) -> None:
        """A client transaction, in a session of its own: the ops after it do not wait for it. When the
        runner is behind its schedule (a loaded machine), the node's previous transaction is given
        the time the History leaves between the two to return first, so that two sessions started
        at once do not commit in the other order."""
        node = op["node"]
        if (prev := self._last_trx.get(node)) is not None:
            pk, started, at = prev
            deadline = started + (op["at"] - at) / US
            while pk not in self.run.commits and time.monotonic() < deadline:
                time.sleep(0.002)
        k = len(self.run.trx_names)
        self._last_trx[node] = (k, time.monotonic(), op["at"])
        self.run.trx_names.append(op.get("trx") or f"{op['node']}-{op['at']}")
        if op.get("timestamp") is not None:
            self.run.set_timestamp.add(self.run.trx_names[-1])
        self.run.origin_of[k] = op["node"]
        # on a full disk a row big enough that its binlog write needs space (disk.py)
        pad = disk.PAD_BYTES if node in self.run.faults.full else 0
        w = threading.Thread(target=self._trx, args=(op, k, pad, self._commit_timeout(node)), daemon=True)
        w.start()
        self.run.workers.append(w)
        end = op["at"] + sum(s.get("duration_us", 0) for s in op.get("statements") or [])
        self._in_flight.setdefault(op["node"], []).append((end, w))

    def await_commits(self, op: dict) -> None:
        """The transactions planned to end before this op, on any node, have returned, or on the
        op's own node, when it may wait for semi-sync acks, returned or wait for their ack (at most
        COMMIT_WAIT_S each node): by its planned end a model has binlogged a transaction. A loaded
        machine must not let a crash planned while a commit waits come before the commit is written
        (mdb-phantom-after-sync), nor a master's commit reach a replica before the replica's own
        write planned before it (dom-strict-two-domains at load 17: no out-of-order GTID, no 1950).
        A semi-sync master's commits are not waited for by ops on other nodes: each look at its
        status is a client of its own, and at load 25 those looks made ss-lost-ack-reconnect's
        reconnect a second late, within a 3 s timeout."""
        for node, waiting in self._in_flight.items():
            due = [w for end, w in waiting if end <= op["at"]]
            if node in self.run.semi_sync_masters:
                if node != op["node"]:
                    continue
                deadline = time.monotonic() + COMMIT_WAIT_S
                while (alive := [w for w in due if w.is_alive()]) and time.monotonic() < deadline:
                    if (waits := self._ack_waits(node)) is None or waits >= len(alive):
                        break
                    time.sleep(0.005)
            else:
                for w in due:
                    w.join(timeout=COMMIT_WAIT_S)
            waiting[:] = [(end, w) for end, w in waiting if w.is_alive()]

    def _ack_waits(self, node: str) -> int | None:
        """Sessions of the node waiting for a semi-sync ack (Rpl_semi_sync_master_wait_sessions,
        counted around the wait in Repl_semi_sync_master::commit_trx, sql/semisync_master.cc, at
        either wait point; every commit in flight is the runner's); None when it does not answer
        (down: its sessions end with it)."""
        try:
            return _int(self.run.cluster.global_status(node, "Rpl_semi_sync_master_wait_sessions").get(
                "Rpl_semi_sync_master_wait_sessions")) or 0
        except HarnessError:
            return None

    def _commit_timeout(self, node: str) -> float | None:
        """How long a commit may take: the client's usual timeout (None), longer by the ack timeout
        on a semi-sync master, and, where the node's disk is or was just full, by the wait for space
        plus the server's retry after it. A commit waits up to the ack timeout, and the commits behind
        it wait with it: in mdb-rpl_semi_sync_after_sync_row (timeout 60 s) the usual 30 s gave up
        create_t1 and three commits behind it as lost connections, which the server committed when
        the wait ended at 61 s (their status probes, SHOW GLOBAL STATUS, waited as long)."""
        extra = self.run.ack_timeouts_s.get(node, 0)
        freed = self.run.faults.freed_at(node)
        if freed is not None:
            extra += max(0, freed - self.run.now()) / US + F.DISK_FULL_RETRY_US / US
        return self.run.cluster.sql_timeout + extra if extra else None

    def _trx(self, op: dict, k: int, pad: int, timeout: float | None) -> None:
        node, trx = op["node"], self.run.trx_names[k]
        stmt = trx_statement(op, k, self.run.cluster.port(node), pad)
        probe = "SHOW GLOBAL STATUS WHERE Variable_name IN ('Rpl_semi_sync_master_yes_tx', 'Rpl_semi_sync_master_no_tx')"
        start = self.run.now()
        try:
            results = self.run.cluster.results(node, f"{probe}; SELECT {CLOCK}; {stmt}; "
                                                     f"SELECT {CLOCK}, @@last_gtid; {probe}", timeout=timeout)
        except SqlError as e:
            o = self.run.commits[k] = self.run.emit("commit", node, trx=trx, gtid=None, start=start, errno=e.errno, message=e.message)
            self.run.returned[k] = (o["t"], e.errno)
            return
        except HarnessError as e:  # the server went away under it (crash, shutdown)
            self.run.commits[k] = self.run.emit("commit", node, trx=trx, gtid=None, start=start, errno=CR_SERVER_LOST,
                                        message=str(e).splitlines()[0])
            return
        # The server's clock: the client's start-up and exit are not the commit's.
        sent = (start, self.run.now())
        start, t = self.run.instant(results[1][1][0][0], node, sent), self.run.instant(results[-2][1][0][0], node, sent)
        before, after = dict(results[0][1]), dict(results[-1][1])
        gtid = results[-2][1][0][1]
        self.run.gtid_of[k] = gtid
        yes = _int(after.get("Rpl_semi_sync_master_yes_tx", 0)) - _int(before.get("Rpl_semi_sync_master_yes_tx", 0))
        no = _int(after.get("Rpl_semi_sync_master_no_tx", 0)) - _int(before.get("Rpl_semi_sync_master_no_tx", 0))
        # Only an unambiguous change of the counters says how this commit's wait ended.
        how = "yes" if (yes, no) == (1, 0) else "no" if (yes, no) == (0, 1) else None
        self.run.returned[k] = (t, None)
        self.run.commits[k] = self.run.emit("commit", node, t, trx=trx, gtid=gtid, start=start, semisync=how,
                                    **V.commit_fields(op, self.run.filtering))

    def show_slave_status(self, op: dict) -> None:
        self.run.observer.poll(op["node"], force=True)

    def read(self, op: dict) -> None:
        rows = self.run.observer.present(op["node"])
        o = self.run.emit("read", op["node"], seen=sorted(self.run.trx_names[k] for k in rows if k < len(self.run.trx_names)))
        for k in rows:
            self.run.read_seen.setdefault((op["node"], k), o["t"])

    def expect(self, op: dict) -> None:
        """What a client checking the node sees where the History expects something: read from the
        server as the model shows it (properties/expect.py compares)."""
        node = op["node"]
        try:
            with self.run.node_locks[node]:
                shown = self.run.cluster.is_running(node) or op["show"] in F.CLIENT_SHOWN
                value = getattr(self, f"_shows_{op['show']}")(node, op) if shown else None
        except (HarnessError, SqlError):  # down, or the statement's error: nothing shown
            value = None
        self.run.emit("observed", node, expect=F.expect_where(self.run.history, op), show=op["show"], value=value)

    def _shows_slave_status(self, node: str, op: dict) -> dict | None:
        raw = self.run.cluster.show_slave_status(node, op.get("connection"))
        typed = {k: (_int(v) or 0) if k in STATUS_INTS else _int(v) if k in STATUS_NULLABLE_INTS else v
                 for k, v in raw.items()}
        return {k: typed[k] for k in op["fields"] if k in typed} if raw else None

    def _shows_master_status(self, node: str, op: dict) -> dict | None:
        cols, rows = self.run.cluster.query(node, "SHOW MASTER STATUS")
        if not rows:
            return None
        shown = {c: (_int(v) if _int(v) is not None else v) for c, v in zip(cols, rows[0])}
        return {k: shown[k] for k in op["fields"] if k in shown}

    def _variables(self, node: str, names: list[str], status: bool) -> dict:
        # names are validated identifiers (history.schema.json: expect.fields)
        rows = self.run.cluster.sql(node, f"SHOW GLOBAL {'STATUS' if status else 'VARIABLES'} WHERE Variable_name IN "
                                      f"({', '.join(sql_quote(n) for n in names)})")
        got = {name.lower(): value for name, value in rows}
        return {n: _int(got[n.lower()]) if _int(got[n.lower()]) is not None else got[n.lower()]
                for n in names if n.lower() in got}

    def _shows_status(self, node: str, op: dict) -> dict:
        return self._variables(node, list(op["fields"]), status=True)

    def _shows_variables(self, node: str, op: dict) -> dict:
        return self._variables(node, list(op["fields"]), status=False)

    def _shows_binary_logs(self, node: str, op: dict) -> list[str]:
        return self.run.collector.binlog_files(node)

    def _shows_binlog_events(self, node: str, op: dict) -> list[dict] | None:
        files = self.run.collector.binlog_files(node)
        wanted = F.binlog_number(op["in"]) if "in" in op else None
        name = next((f for f in files if wanted is None or F.binlog_number(f) == wanted), None)
        if name is None:
            return None
        cols, rows = self.run.cluster.query(node, f"SHOW BINLOG EVENTS IN {sql_quote(name)}")
        shown = [dict(zip(cols, r)) for r in rows]
        return F.after_header([{"Event_type": r["Event_type"], "Info": r["Info"] or ""} for r in shown])

    def _shows_result(self, node: str, op: dict) -> dict | None:
        with self.run.lock:
            last = next((o for _, _, o in reversed(self.run.obs) if o["kind"] in ("stmt", "commit") and o["node"] == node), None)
        return None if last is None else {k: last.get(k) for k in ("errno", "warning", "message")}

    def _shows_rows(self, node: str, op: dict) -> list[str]:
        names = self.run.trx_names
        return sorted(names[k] for k, n in self.run.observer.present(node).items() for _ in range(n) if k < len(names))

    def show_master_status(self, op: dict) -> None:
        """SHOW MASTER STATUS as a client sees it: the binlog file and position it writes at (the
        model's master_status); nothing from a server that is down or logs no binlog."""
        node = op["node"]
        try:
            cols, rows = self.run.cluster.query(node, "SHOW MASTER STATUS")
        except (HarnessError, SqlError):
            return
        if rows:
            shown = dict(zip(cols, rows[0]))
            self.run.emit("master_status", node, File=shown["File"], Position=_int(shown["Position"]) or 0)

    def record_incident(self, op: dict) -> None:
        """An incident LOST_EVENTS, recorded by a statement that really causes one (incident_statement):
        observed as the model's statement, with the error the client got."""
        node = op["node"]
        n = sum(map(len, self.run.incidents.values()))
        start = self.run.now()
        try:
            self.run.cluster.sql(node, incident_statement(n, self.run.incident_dbs.get(node, "rc")))
            errno, message = None, ""
        except SqlError as e:
            errno, message = e.errno, e.message
        except HarnessError as e:  # the server went away under it
            errno, message = CR_SERVER_LOST, str(e).splitlines()[0]
        if errno in (None, ER_STMT_CACHE_FULL):
            # The op is the statement incident the models write as the debug point
            # incident_database_resync_on_replace does: the incident, then rotate_and_purge(true)
            # (sql/sql_parse.cc). A cache overflow's incident is not followed by one (sql/log.cc,
            # write_incident rotates only past max_binlog_size): the rotation is made here, at once.
            try:
                self.run.cluster.sql(node, "FLUSH BINARY LOGS")
            except HarnessError:
                pass  # the server went away: what the incident left is what the run observes
        t = self.run.now()
        # The message is the server's own (Collector sets it from the incident found in the binlog):
        # a release build records no message of the History's; asked_message keeps it. Stamped when it
        # was sent, as is the incident it wrote before it returned (no earlier: Collector), after it.
        o = self.run.emit("stmt", node, start, op="record_incident", via="binlog", code=op["code"], message="",
                          asked_message=op.get("message", ""), errno=errno, error=message, duration_us=max(0, t - start))
        self.run.incidents.setdefault(node, []).append(o)

    def statement(self, op: dict) -> None:
        node, kind = op["node"], op["op"]
        c = self.run.cluster
        stmt = self._change_master(op) if kind == "change_master" else admin_statement(op, self.run.epoch_us)
        fields = {k: v for k, v in op.items() if k not in ("at", "op", "node")}
        purge = kind == "purge_binary_logs"
        start = self.run.now()
        addressed = self._addressed(op)
        with self.run.node_locks[node]:  # never while a sample of the node is taken: each sees it before or after
            listed = self.run.collector.keep_binlogs(node) if purge else []
            if kind == "reset_master":  # it deletes every binlog: their events as they were
                self.run.collector.keep_binlogs(node, every=True)
            befores = {k: self.run.observer.slave_status(k) for k in addressed} if kind in PURGES_RELAY_LOGS | ALL_SLAVES else {}
            for link in self.run.observer.relay_links(node):
                self.run.observer.read_link(link, settled=befores.get(link, {}).get("Slave_IO_Running") == "No")
            try:
                # The server's clock around it: the client's start-up and exit are not the statement's.
                stops_sql = kind in ("stop_slave", "stop_all_slaves") and op.get("thread") in (None, "sql")
                with self._sampled_meanwhile(node, addressed, op.get("thread")) if stops_sql else contextlib.nullcontext():
                    results = c.results(node, f"SELECT {CLOCK}; {stmt}; SHOW WARNINGS; SELECT {CLOCK}",
                                        timeout=c.sql_timeout + GROUP_DONE_S if stops_sql else None)
                sent = (start, self.run.now())
                start, t = self.run.instant(results[0][1][0][0], node, sent), self.run.instant(results[-1][1][0][0], node, sent)
                errno, message = None, ""
                warns = results[-2][1]
                warning = _int(warns[0][1]) if warns else None
                if warns:
                    message = warns[0][2] or ""
            except NoAnswer as e:  # stuck (or only slow): observed, and the run ends here
                stuck.not_answered(self.run, node, kind, start, fields, e)
            except NodeDown:  # sent to a node that is down: as the models answer it (model/sim/kernel.py, op)
                self.run.emit("error", node, self.run.now(), op=kind, errno=CR_SERVER_LOST, message=DOWN_MESSAGE)
                return
            except SqlError as e:  # the session ends at the error: the client's clock
                errno, message, warning = e.errno, e.message, None
                t = self.run.now()
            if kind == "reset_master" and errno is None:  # a new binlog history: GTIDs begin again
                self.run.binlog_resets.setdefault(node, []).append(start)
            if purge:  # what it removed, whatever it answered
                remaining = self.run.collector.binlog_files(node)
                fields.update(purged=[f for f in listed if f not in remaining], remaining=remaining)
            if kind == "change_master" and "delay_sql" in op:
                # What the server made of the token, read back rather than parsed here: MariaDB takes
                # 1.5 as 1 and 1e3 as 1 (ulong_num reads DECIMAL_NUM and FLOAT_NUM with my_strtoll10,
                # up to the first non-digit; measured on 10.11).
                st = self.run.observer.slave_status(addressed[0]) if errno is None else {}
                fields["delay"] = _int(st.get("SQL_Delay")) if st else None
            if kind == "change_master" and "master_host" in op and errno is None:
                self._repointed(addressed[0], op["master_host"])
        self.run.emit("stmt", node, t, op=kind, errno=errno, warning=warning, message=message, duration_us=max(0, t - start),
                  **fields)
        for link in addressed:
            self._stopped_or_started(op, link, t, errno, warning, befores.get(link, {}))
        if errno is not None:
            self.run.emit("error", node, t, errno=errno, message=message)
        elif kind in ("start_slave", "start_all_slaves") and op.get("thread") in (None, "sql"):
            self.workers(node, t)
        if node not in self.run.busy:
            # What it changed (or, refused, left as it was), before anything else can change it again.
            self.run.observer.poll(node, force=True)

    @contextlib.contextmanager
    def _sampled_meanwhile(self, node: str, links: list[Link], thread: str | None):
        """A STOP SLAVE of an SQL thread may wait up to GROUP_DONE_S for a group's end: the node's
        lock is let go meanwhile, so its samples go on (its SQL thread still running, applying)
        and the resolution stays the polling's (seed 8's History 95: 62 s of no sample, every
        node's, and a relay seen 62 s late). A sample that finds the thread already stopped
        before the statement returned is not the node's status (Observer.record_status): the stop is
        the statement's, observed at its return."""
        lock = self.run.node_locks[node]
        threads = ("Slave_SQL_Running",) if thread == "sql" else ("Slave_SQL_Running", "Slave_IO_Running")
        self.run.stopping.update(dict.fromkeys(links, threads))
        lock.release()
        try:
            yield
        finally:
            lock.acquire()
            for link in links:
                self.run.stopping.pop(link, None)

    def _change_master(self, op: dict) -> str:
        """CHANGE MASTER TO as the op says: MASTER_HOST and MASTER_PORT are the channel's relay (it
        connects to the named node once the server took the statement: _repointed), MASTER_USER
        comes with that user's password (Cluster.source_clauses). The relay keeps its port, so the
        server sees the same host and port for a new source: sql_repl.cc, change_master, then
        keeps Master_Log_File/Pos, which matters only to a channel by position given no new place."""
        port = self.run.proxies[self._addressed(op)[0]].port if "master_host" in op else None
        return change_master_statement(op, self.run.epoch_us, self.run.cluster.source_clauses(port, op.get("master_user")))

    def _repointed(self, link: Link, source: str) -> None:
        """The channel's relay connects to its new source from its next connect on (as failover's)."""
        self.run.sources[link] = source
        self.run.source_since[link] = self.run.now()
        self.run.cluster.route(source, link[0], self.run.proxies[link].port)

    def _addressed(self, op: dict) -> list[Link]:
        """The channels a statement addresses: its named connection, every connection of the replica
        for START/STOP ALL SLAVES (Master_info_index::start_all_slaves, stop_all_slaves in
        sql/rpl_mi.cc), else the default connection (a replica's one unnamed channel; on a replica
        whose connections are all named, the default Master_info no channel has)."""
        if op["op"] in ALL_SLAVES:
            return links_of(self.run.sources, op["node"])
        return [(op["node"], op.get("connection") or None)]

    def _stopped_or_started(self, op: dict, link: Link, t: int, errno: int | None, warning: int | None, before: dict) -> None:
        """What a STOP/START SLAVE did to one channel's threads, as its observations. START/STOP ALL
        SLAVES act on each connection as START/STOP SLAVE 'name' would: those not both running start
        (each by start_slave, so a GTID start purges its relay logs), those with a running thread stop."""
        node, kind, tag = link[0], op["op"], V.tagged(link[1])
        all_slaves = kind in ALL_SLAVES
        if errno is None and op.get("thread") in (None, "sql") and (
                (kind == "stop_slave" and warning is None)
                or (kind == "stop_all_slaves" and before.get("Slave_SQL_Running") == "Yes")):
            self.run.until.discard(link)
            self.run.emit("sql_stop", node, t, reason="stop", **tag)
        starts = kind == "start_slave" or (kind == "start_all_slaves" and not (
            before.get("Slave_IO_Running") in ("Yes", "Connecting") and before.get("Slave_SQL_Running") == "Yes"))
        if errno is not None or not starts:
            return
        if op.get("thread") in (None, "io"):
            self.run.io_error.pop(link, None)  # a new IO thread: its failure is a new error, even the same one
        if gtid_start_purges(before):  # both were stopped: it started one at least (no ER_SLAVE_WAS_RUNNING)
            self.run.observer.relay_purged(link, t, before)
        if op.get("thread") in (None, "sql") and (not all_slaves or before.get("Slave_SQL_Running") != "Yes"):
            self.run.sql_started.add(link)
        if op.get("thread") in (None, "sql") and (warning != F.ER_SLAVE_WAS_RUNNING or all_slaves):
            # START SLAVE sets the condition for the thread it starts, or clears it (start_slave, sql/sql_repl.cc);
            # only ER_SLAVE_WAS_RUNNING says it started none: an UNTIL also warns ER_MISSING_SKIP_SLAVE (1278)
            # when the server runs without --skip-slave-start, and still sets the condition.
            (self.run.until.add if op.get("until") else self.run.until.discard)(link)

    def workers(self, node: str, t: int) -> None:
        """The parallel applier the SQL thread started with, as the server says it: a `parallel`
        observation with @@slave_parallel_threads and @@slave_parallel_mode when it runs workers (or
        ran them at an earlier start). No worker runs with mode none: the SQL thread applies serially
        (sql/rpl_mi.h, Master_info::using_parallel: threads above 0 and parallel_mode above
        SLAVE_PARALLEL_NONE). Commit order within a domain is always kept
        (sql/rpl_parallel.cc, register_wait_for_prior_event_group_commit): MariaDB has no variable for it."""
        _, rows = self.run.cluster.query(node, "SELECT @@GLOBAL.slave_parallel_threads, @@GLOBAL.slave_parallel_mode")
        threads, mode = _int(rows[0][0]) or 0, (rows[0][1] or "").lower()
        running = threads > 0 and mode != "none"
        if not running and node not in self._with_workers:
            return
        self._with_workers.add(node)
        self.run.emit("parallel", node, t, **({"workers": threads, "mode": mode, "preserve_commit_order": True}
                                              if running else {"workers": 0}))

    def failover(self, op: dict) -> None:
        """Failover by GTID, the model's steps on the server: the replica stops, applies its relay
        log without delay (STOP SLAVE, MASTER_DELAY = 0 at its relay log place, START SLAVE
        SQL_THREAD, until it executed all it read), is promoted (RESET SLAVE ALL, read_only off), and
        the old source's other replicas are repointed to it (CHANGE MASTER TO ... MASTER_USE_GTID =
        slave_pos)."""
        node, c = op["node"], self.run.cluster
        old = self.run.sources.get((node, None))
        if old is None:
            self.run.emit("error", node, op="failover", errno=F.ER_BAD_SLAVE, message="not a replica")
            return
        if op.get("elect") and (node := self._elect(old)) is None:
            self.run.emit("error", op["node"], op="failover", errno=F.ER_BAD_SLAVE, message=f"no running replica of {old} to elect")
            return
        self.run.emit("failover", node, old=old)
        self.statement({"at": op["at"], "node": node, "op": "stop_slave"})
        # MASTER_DELAY = 0 at the SQL thread's relay log place: a bare one would purge the relay logs
        # with both threads stopped, and what they held unapplied would be lost with the old source.
        st = c.show_slave_status(node)
        place = {"relay_log_file": st["Relay_Log_File"], "relay_log_pos": int(st["Relay_Log_Pos"])}
        for step in ({"op": "change_master", "delay": 0, **place}, {"op": "start_slave", "thread": "sql"}):
            self.statement({"at": op["at"], "node": node, **step})
        self._applied_relay_log(node)
        with self.run.node_locks[node]:
            self.run.observer.read_relay(node)
            c.promote(node)
        self.run.until.discard((node, None))
        self.run.emit("sql_stop", node, reason="promotion")
        del self.run.sources[(node, None)]
        for link in [k for k, src in self.run.sources.items() if src == old]:
            r = link[0]  # unnamed: check_supported refuses failover in a topology with named connections
            self._repointed(link, node)
            if c.is_running(r):
                st = c.show_slave_status(r)
                with self.run.node_locks[r]:  # "Connecting" (to the dead source) is a running IO thread
                    c.repoint(r, node, io=st.get("Slave_IO_Running") != "No", sql=st.get("Slave_SQL_Running") == "Yes")
                self.run.io_error.pop(link, None)
        self.run.emit("promoted", node, old=old)
        self.run.observer.poll(node, force=True)

    def _elect(self, old: str) -> str | None:
        """The most advanced running replica of `old` by SHOW MASTER STATUS (binlog file, position),
        the first in topology order on a tie, as the models elect."""
        c, best = self.run.cluster, None
        for r in [r for (r, _), src in self.run.sources.items() if src == old and c.is_running(r)]:
            [[f, pos, *_]] = c.sql(r, "SHOW MASTER STATUS")
            key = (int(f.rsplit(".", 1)[1]), int(pos))
            if best is None or key > best[0]:
                best = (key, r)
        return best[1] if best else None

    def _applied_relay_log(self, node: str) -> None:
        """Until the SQL thread executed everything the IO thread read (or it stopped, or quiet_s)."""
        deadline = time.monotonic() + self.run.quiet_s
        while time.monotonic() < deadline:
            st = self.run.cluster.show_slave_status(node)
            if st.get("Slave_SQL_Running") != "Yes" or executed_all_read(st):
                return
            time.sleep(0.02)
