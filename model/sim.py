"""Deterministic discrete-event simulation of MySQL-style replication.

A History (topology + timed operations, plain dicts) goes in, a Trace (header + time-ordered
observations, plain dicts) comes out. The clock is virtual (µs of true time); every node's own
clock reads true time + its offset + the history's epoch. There is no wall clock, no global
random state and no I/O: the same History gives the same Trace, byte for byte.

Nodes have a binlog; a node with a source has a replication channel with an IO thread, a relay
log, an SQL thread and a relay-log.info file. A replica with log_slave_updates is a source for
its own replicas, so chains and fan-outs of any depth fall out of the same code.

The ops a History may hold, and the method that carries out each, are model/ops.py's table.
Global group IDs (--rpl-hierarchical) are model/groupid.py's Hierarchy, which the simulator
holds and calls where they change the generic core.
"""
from __future__ import annotations

import heapq
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from itertools import count
from operator import attrgetter
from typing import Any, Callable

from replcheck.spec import formats as F
from replcheck.spec.formats import (BINLOG_START, ER_BAD_SLAVE, FDE_SIZE, GTID_LIST_SIZE, GTID_SIZE, QUERY_SIZE, ROTATE_SIZE,
                                    XID_SIZE)
from replcheck.spec.vocabulary import last_sample

from . import delay as D
from . import domains as DOM
from . import filter as FL
from . import groupid as G
from . import incident as I
from . import mechanics as X
from . import multisource as MS
from . import mutants as M
from . import parallel as PA
from . import partial as P
from . import recovery as R
from . import relayinfo
from . import semisync as SS
from . import srcerr as E
from .delay import US, Event
from .ops import OPS


ER_SLAVE_MUST_STOP = 1198
ER_MASTER_INFO = 1201
ER_SLAVE_WAS_RUNNING = F.ER_SLAVE_WAS_RUNNING
ER_SLAVE_WAS_NOT_RUNNING = 1255
ER_WARN_SQL_AFTER_MTS_GAPS_GAP_NOT_CALCULATED = 4047  # MySQL 8.0.26+
ER_RELAY_LOG_INIT = 1380
ER_WARN_USING_GTID_CHANGED = 4190  # MariaDB's note (measured on 10.11: the failover's CHANGE MASTER)
CR_SERVER_LOST = 2013
ER_NO_FORMAT_DESCRIPTION_EVENT_BEFORE_BINLOG_STATEMENT = 1609
ER_ONLY_FD_AND_RBR_EVENTS_ALLOWED_IN_BINLOG_STATEMENT = 1730

# WL#344: after it, BINLOG can execute only these (WL#5404 later adds ROWS_QUERY_LOG_EVENT).
BINLOG_STATEMENT_EVENTS = frozenset({
    "FORMAT_DESCRIPTION_EVENT", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT", "UPDATE_ROWS_EVENT",
    "DELETE_ROWS_EVENT", "PRE_GA_WRITE_ROWS_EVENT", "PRE_GA_UPDATE_ROWS_EVENT",
    "PRE_GA_DELETE_ROWS_EVENT",
})

NO_GROUP_ID = frozenset({"FORMAT_DESCRIPTION_EVENT", "ROTATE_EVENT"})
SKIP_EXEMPT = D.EXEMPT | {"GTID_LIST_EVENT"}
ER_UNKNOWN_SYSTEM_VARIABLE = 1193
DEFAULT_EPOCH_US = 1_700_000_000 * US


@dataclass(slots=True)  # slots: a long History's logs hold millions
class Entry:
    """An event at a place in a log: a binlog file, or a relay log file."""

    ev: Event
    file: str
    pos: int
    end: int
    master_file: str = ""  # relay log only: where the event stands in the source's binlog
    master_end: int = 0
    source: str = ""  # relay log only: the server it came from
    group_id: int | None = None  # --rpl-hierarchical: the group's ID (0: mixed mode); None: none written
    at: int = 0  # binlog only: when it was written (what a machine crash keeps: model/recovery.py)
    torn: bool = False  # binlog only: partly written, a crash inside the write cut it


@dataclass
class Channel:
    """The replica side of source -> node: IO thread, relay log, SQL thread, relay-log.info."""

    node: "Node"
    source: "Node"
    latency_us: int
    delay: int = 0
    io_running: bool = False
    connected: bool = False
    sql_running: bool = False
    io_gen: int = 0
    sql_gen: int = 0
    fetch: int | None = None  # next index into source.binlog; None: compute by GTID auto-position
    relay: list[Entry] = field(default_factory=list)
    relay_file_no: int = 1
    relay_pos: int = BINLOG_START
    read_master_file: str = ""
    read_master_pos: int = 0
    sql_pos: int = 0  # index into relay of the next event to read
    group_start: int = 0  # index into relay where the current group began
    group_master_file: str = ""
    group_master_pos: int = 0
    state: str = "stopped"  # stopped | idle | waiting | executing
    cur_due: int | None = None
    cur_read: int = 0
    # Seconds_Behind_Master's inputs (rpl_rli.h): (when, when_off) of the last event read that carries a
    # master timestamp, kept across STOP/START (handle_slave_sql); and whether the SQL thread is waiting
    # at the end of the relay log for more events.
    last_master_timestamp: tuple[int, int] | None = None
    sql_thread_caught_up: bool = True
    applied_in_group: int = 0
    until: dict | None = None
    rli_content: str = ""
    semi_sync: bool = False  # this connection asked for semi-sync (BINLOG_DUMP flag)
    skip_counter: int = 0  # SET GLOBAL sql_slave_skip_counter (only while the SQL thread is stopped)
    skipping_group: bool = False  # the counter ran out inside a group: skip to its end
    last_sql_errno: int = 0
    last_sql_error: str = ""
    lost_acks: int = 0  # acks still to be lost on the way to the master
    promote: bool = False  # failover: become the primary once the relay log is applied
    # relay_log_recovery waiting for the startup run that fills the MTS gaps: whether the threads
    # start after it (None: no such run)
    fill_then_start: bool | None = None
    exec_group_id: int = 0  # SHOW SLAVE STATUS Exec_Master_Group_ID: the last group the SQL thread played
    engine_pos: int | None = None  # rpl_transaction_enabled: InnoDB's copy of the group position (relay index)
    engine_master: tuple[str, int] = ("", 0)
    io_gtids: dict = field(default_factory=dict)  # Gtid_IO_Pos: per domain, the last group received whole
    connect_by_id: bool = False  # Connect_Using_Group_ID: the next connect asks for the slave's last group ID
    by_position: bool = False  # CHANGE MASTER TO a binlog position: MASTER_USE_GTID=no from then on
    # per source, the relay indexes of the transactions' last events, in order: what a reconnect
    # acknowledges without rescanning the relay log
    held: dict[str, list[int]] = field(default_factory=dict)
    # (source binlog, executed set, index): every group of that binlog before the index is in that
    # set. Executed only grows, so a GTID request scans on from here, not from the binlog's head.
    gtid_floor: tuple[list, set, int] | None = None
    # cut_io: the connection drops after this many more events arrive, then reconnects or stops
    cut_after: int = 0
    cut_then: str = ""
    # MariaDB's gtid_reconnect_event_skip_count: events of a partial group already queued, which
    # the GTID reconnect sends again and the IO thread does not queue twice
    reconnect_skip: int = 0
    # A GTID dump's slave connection state (MariaDB, send_event_to_slave): per domain, the GTID the
    # groups are skipped up to; and whether the group being sent is skipped
    dump_state: dict = field(default_factory=dict)
    dump_empty: set = field(default_factory=set)  # domains the master had nothing of at the request
    dump_skipping: bool = False
    gtid_request: str = ""  # the GTID position the last GTID connect asked by (MariaDB)
    par: PA.Applier | None = None  # a parallel applier's workers (model/parallel.py); None: serial
    # MariaDB's connection_name (multi-source, model/multisource.py); None: the topology names none
    connection: str | None = None


@dataclass
class Node:
    id: str
    server_id: int
    offset: int
    gtid_mode: bool
    log_slave_updates: bool
    commit_timestamps: bool
    up: bool = True
    incarnation: int = 0
    binlog: list[Entry] = field(default_factory=list)
    binlog_file_no: int = 0
    binlog_pos: int = BINLOG_START
    gtid_seq: dict = field(default_factory=dict)  # per domain, the last sequence number this server issued
    executed: set[str] = field(default_factory=set)
    channel: Channel | None = None  # the default connection (''), or the one an op addresses
    connections: dict[str, Channel] = field(default_factory=dict)  # multi-source: by connection_name
    domain_owner: dict = field(default_factory=dict)  # gtid_ignore_duplicates: per domain, the applying connection
    replicas: list[Channel] = field(default_factory=list)
    variables: dict = field(default_factory=dict)  # configuration (my.cnf): what a restart starts with
    runtime: dict = field(default_factory=dict)  # SET GLOBAL changes, lost at a restart
    semisync: SS.SemiSyncMaster | None = None
    visible: list[str] = field(default_factory=list)  # committed in the engine, in commit order
    prepared: list[tuple[str, str]] = field(default_factory=list)  # binlogged, not yet committed: (trx, gtid)
    log_bin: bool = True
    rpl_hierarchical: bool = False
    rpl_transaction_enabled: bool = True
    group_id: int = 0  # the in-memory group_id: the last one consumed (root) or played (slave)
    index: list[list] = field(default_factory=list)  # binlog index: [file, group_id, server_id] per binlog
    dirty: bool = False  # crashed: the last binlog's FDE still says "in use"
    crash_point: str | None = None  # an armed crash point (model/recovery.py)
    set_ids: dict = field(default_factory=dict)  # binlog file -> (ID, master_server_id) SET BINLOG_GROUP_ID gave it
    binlog_gtids: dict = field(default_factory=dict)  # gtid_binlog_pos: per domain, the last GTID logged
    slave_gtids: dict = field(default_factory=dict)  # gtid_slave_pos: per domain, the last GTID replicated
    purged: set = field(default_factory=set)  # binlog files PURGE BINARY LOGS removed (their entries stay for indexing)
    mtimes: dict = field(default_factory=dict)  # binlog file -> when it was last written (PURGE ... BEFORE)
    file_start: dict = field(default_factory=dict)  # binlog file -> index of its first event, its FDE, where a dump starts
    failed_over: bool = False  # a failover replaced it: no slave replicates from it again (until a restore)
    # binlog durability (model/recovery.py): how many binlog entries are synced, the writes since
    # the last sync, how many the dump threads may read, what the last crash kept of the binlog
    synced: int = 0
    writes_since_sync: int = 0
    published: int = 0
    durable_end: int | None = None
    crash_kind: str = R.PROCESS  # of the armed crash point
    visible_at: list[int] = field(default_factory=list)  # when each `visible` entry was committed
    prepared_at: dict = field(default_factory=dict)  # trx -> when the engine prepared it
    engine_lost: list[str] = field(default_factory=list)  # engine commits a crash lost, until recovery says so
    state_file: bool = False  # MariaDB's <log-bin>.state: written at a clean shutdown, deleted at the next start

    @property
    def binlog_file(self) -> str:
        return sys.intern(f"bin.{self.binlog_file_no:06d}")  # one string per file, not per event


@dataclass(frozen=True)
class Config:
    """What makes one model system: its delay rule, the mutants it carries (model/mutants.py), the
    settings it forces on every node, its server version's defaults, and the mechanics it follows
    where the seeds say nothing or its server departs from them (model/mechanics.py). The Trace
    header records all of it, so a Trace says which system made it."""

    rule: str = D.WL344
    mutants: frozenset[M.Mutant] = frozenset()
    variables: dict = field(default_factory=dict)  # forced on every node, whatever the History says
    defaults: dict = field(default_factory=dict)  # the server version's defaults
    mechanics: X.Mechanics = X.Mechanics()

    def as_dict(self) -> dict:
        return {"rule": self.rule, "mutants": sorted(m.name for m in self.mutants),
                "variables": dict(self.variables), "defaults": dict(self.defaults), "mechanics": self.mechanics.as_dict()}


class Simulator:
    def __init__(self, history: dict, config: Config, system: str = "model"):
        self.history = history
        self.config = config
        mech = config.mechanics
        self.rule = D.DelayRule(config.rule, config.mutants, mech.commit_timestamp_rounding == "up",
                                mech.commit_timestamp_clock == "replica")
        self.mutants = config.mutants
        self.mech = config.mechanics
        self.system = system
        head = history["header"]
        self.epoch = head.get("epoch_us", DEFAULT_EPOCH_US)
        self.sample_every = head.get("sample_every_us", 0)
        self.now = 0
        self.queue: list = []
        self.seq = count()
        self.obs: list[dict] = []
        self.last_stmt: dict[str, dict] = {}  # node -> the outcome of the last statement it completed (an expectation's `result`)
        # A WL#7318 (8.0) server writes commit timestamps unless the History says it is older.
        self.node_defaults = {"commit_timestamps": config.rule == D.WL7318}
        self.forced_variables = config.variables  # a system's own settings, e.g. its wait point
        self.variable_defaults = config.defaults  # a server version's defaults
        self.nodes: dict[str, Node] = {}
        self.hierarchy = G.Hierarchy(self)  # what global group IDs add (model/groupid.py)
        self.initial_variables: dict[str, dict] = {}
        self._build(head["topology"])
        # A topology with filters: commits say which table they wrote, so that a Trace tells what to filter.
        self.filtering = any(FL.configured(n.variables) for n in self.nodes.values())

    # -- set-up -----------------------------------------------------------------------------
    def _build(self, topo: dict) -> None:
        for i, n in enumerate(topo["nodes"]):
            spec = {**self.node_defaults, **n}
            node = Node(
                id=n["id"], server_id=n.get("server_id", i + 1), offset=n.get("clock_offset_us", 0),
                gtid_mode=spec.get("gtid_mode", True), log_slave_updates=spec.get("log_slave_updates", True),
                commit_timestamps=spec["commit_timestamps"],
                variables={**self.variable_defaults, **n.get("variables", {}), **self.forced_variables},
                log_bin=n.get("log_bin", True), rpl_hierarchical=n.get("rpl_hierarchical", False),
                rpl_transaction_enabled=n.get("rpl_transaction_enabled", True),
            )
            self._start_semisync(node)
            sync_binlog, flush_log = self._durability(node)
            self.initial_variables[node.id] = {**node.semisync.vars, R.SYNC_BINLOG: sync_binlog, R.FLUSH_LOG: flush_log,
                                               **FL.configured(node.variables),
                                               **{k: node.variables[k] for k in DOM.VARIABLES
                                                  if k in node.variables and self.mech.gtid_domains},
                                               **{k: node.variables[k] for k in (MS.IGNORE_DUPLICATES,) if k in node.variables}}
            self.nodes[node.id] = node
        for c in topo.get("channels", []):
            replica, source = self.nodes[c["replica"]], self.nodes[c["source"]]
            self._add_channel(replica, source, c.get("latency_us", 0), c.get("delay", 0), c.get("connection"))
        for node in self.nodes.values():
            refused = G.startup_error(node.log_bin, node.log_slave_updates, node.rpl_hierarchical)
            if refused:  # mysqld refuses to start: the node never comes up
                node.up = False
                self.emit("error", node.id, op="startup", errno=F.ER_STARTUP_OPTIONS, message=refused)
                continue
            self._open_binlog(node)
        for n in topo["nodes"]:
            node = self.nodes[n["id"]]
            if not node.up:
                continue
            for ch in MS.channels(node):
                if "relay_log_info" in n and ch is node.channel:
                    ch.rli_content = n["relay_log_info"]
                    if not self._read_relay_log_info(ch, boot=True):
                        continue
                self._write_relay_log_info(ch)
                self._start_io(ch)
                self._start_sql(ch)

    @staticmethod
    def _add_channel(replica: Node, source: Node, latency_us: int, delay: int = 0, connection: str | None = None) -> None:
        ch = Channel(node=replica, source=source, latency_us=latency_us, delay=delay, connection=connection)
        if connection is not None:
            replica.connections[connection] = ch
        if connection in (None, MS.DEFAULT):
            replica.channel = ch
        source.replicas.append(ch)

    def _start_semisync(self, node: Node) -> None:
        """A (re)started server: semi-sync state comes from its configuration, counters from zero."""
        node.runtime = dict(node.variables)
        node.semisync = SS.SemiSyncMaster(node.id, node.variables, self.mutants, lambda: self.now, self.emit, self.at,
                                          self.mech.no_slave_commit)
        # The binlog outlives a restart: a replica catches up (WL#1720's switch back ON) only with
        # all of it. MariaDB's try_switch_on() takes any ack until a commit after the restart.
        node.semisync.binlog_end = max(((e.file, e.end) for e in node.binlog if e.ev.last and e.ev.trx), default=("", 0))

    def header(self) -> dict:
        topo = self.history["header"]["topology"]
        nodes = []
        for n in topo["nodes"]:
            node = self.nodes[n["id"]]
            nodes.append({**n, "server_id": node.server_id, "clock_offset_us": n.get("clock_offset_us", 0),
                          "commit_timestamps": node.commit_timestamps, "gtid_mode": node.gtid_mode,
                          "delay_rule": self.rule.rule, "variables": self.initial_variables[node.id]})
        return {
            "schema": "replcheck.trace/1",
            "system": self.system,
            "config": self.config.as_dict(),
            "history": self.history["header"].get("name", ""),
            "epoch_us": self.epoch,
            "resolution_us": 0,
            "topology": {"nodes": nodes, "channels": topo.get("channels", [])},
        }

    # -- the event loop -----------------------------------------------------------------------
    def at(self, t: int, fn: Callable, *args: Any) -> None:
        heapq.heappush(self.queue, (t, next(self.seq), fn, args))

    def emit(self, kind: str, node: str, **fields: Any) -> None:
        self.obs.append({"t": self.now, "kind": kind, "node": node, **fields})
        if kind in ("stmt", "commit") or (kind == "error" and "op" in fields):  # a statement's answer, or a down node's
            self.last_stmt[node] = fields

    def run(self) -> tuple[dict, list[dict]]:
        ops = self.history["ops"]
        for op in ops:
            self.at(op["at"], self._op, op)
        samples = last_sample(self.history) // self.sample_every if self.sample_every else 0
        # Samples are queued one at a time, each by the one before, so the queue holds the ops and
        # what is under way, never the whole span. Sample k keeps the place in the order it had when
        # all were queued up front: after the ops, before anything the run itself queues.
        first = next(self.seq)
        self.seq = count(first + samples)
        if samples:
            heapq.heappush(self.queue, (self.sample_every, first, self._sample, (1, first, samples)))
        while self.queue:
            t, _, fn, args = heapq.heappop(self.queue)
            self.now = t
            fn(*args)
        self._sample_all()
        for node in self.nodes.values():
            if node.up:  # what a client reads once replication is quiet: each change's copies
                self.emit("data", node.id, counts={t: n for t, n in sorted(Counter(node.visible).items())})
        return self.header(), self.obs

    def _sample(self, k: int, first: int, samples: int) -> None:
        """Sample k of `samples`, whose place in the order is first + k - 1."""
        if k < samples:
            heapq.heappush(self.queue, ((k + 1) * self.sample_every, first + k, self._sample, (k + 1, first, samples)))
        self._sample_all()

    def _sample_all(self) -> None:
        for node in self.nodes.values():
            for ch in MS.channels(node) if node.up else ():  # SHOW ALL SLAVES STATUS: a row per connection
                self._status(ch)
            if node.up and (node.semisync.enabled or any(r.semi_sync for r in node.replicas) or self.filtering
                            or node.runtime.get("rpl_semi_sync_slave_enabled") or node.rpl_hierarchical
                            or len(node.binlog_gtids.keys() | node.slave_gtids.keys()) > 1):  # the positions across domains
                self._server_status(node)
            if node.up and node.rpl_hierarchical:
                self._master_status(node)

    # -- operations of the history ------------------------------------------------------------
    def _op(self, op: dict) -> None:
        node = self.nodes[op["node"]]
        entry = OPS[op["op"]]
        if not node.up and not entry.while_down:
            self.emit("error", node.id, op=entry.name, errno=CR_SERVER_LOST, message="Lost connection to server (node is down)")
            return
        default = node.channel
        if "connection" in op:  # START SLAVE 'name', ...: the statement addresses that connection
            node.channel = node.connections.get(op["connection"])
        try:
            attrgetter(entry.method)(self)(node, op)
            if entry.shows_status and node.channel is not None and node.up:
                self._status(node.channel)  # what SHOW SLAVE STATUS says right after the statement
        finally:
            if "connection" in op:
                node.channel = default

    def _op_trx(self, node: Node, op: dict) -> None:
        if node.rpl_hierarchical:
            self.hierarchy.begin(node, self._trx_name(node, op))
        stmts = op.get("statements") or [{}]
        start = self.now
        t = start
        starts = []
        for s in stmts:
            starts.append(t)
            t += s.get("duration_us", 0)
        self.at(t, self._commit, node, node.incarnation, op, starts)

    def _local(self, node: Node, t: int) -> int:
        return self.epoch + t + node.offset

    @staticmethod
    def _trx_name(node: Node, op: dict) -> str:
        return op.get("trx") or f"{node.id}-{op['at']}"

    def _commit(self, node: Node, incarnation: int, op: dict, starts: list[int]) -> None:
        trx = self._trx_name(node, op)
        if node.incarnation != incarnation or not node.up:
            self.emit("error", node.id, trx=trx, errno=CR_SERVER_LOST, message="Lost connection to server during query")
            return
        if op.get("binlog_failure"):
            self._binlog_failure(node, trx, op, starts[0])
            return
        failed: dict = {}  # the statement's error, returned with its commit (model/srcerr.py)
        code = None
        if op.get("error"):
            err = op["error"]
            failed = {"errno": err["errno"], "message": err.get("message", "")}
            code = E.left_behind(op.get("engine", "innodb"), bool(op.get("ddl")), err.get("after_changes", False), err["errno"])
            if code is None or M.FAILED_CHANGE_NOT_LOGGED in self.mutants:
                if code is not None:  # the bug: the change stays, the binlog never has it
                    self._engine_commit(node, trx, None)
                self.emit("commit", node.id, trx=trx, gtid=None, start=starts[0], **failed)
                return
        stmts = op.get("statements") or [{}]
        table, skip, shown = FL.table_of(op), bool(op.get("skip_replication")), FL.commit_fields(op, self.filtering)
        if not FL.binlogged(node.variables, table):  # binlog-do/ignore-db: committed, never logged
            self._engine_commit(node, trx, None)
            self.emit("commit", node.id, trx=trx, gtid=None, start=starts[0], **shown)
            return
        fixed = op.get("timestamp")  # SET TIMESTAMP: the session's statements carry this time
        whens = [fixed if fixed is not None else self._local(node, s) // US for s in starts]
        commit_when = fixed if fixed is not None else self._local(node, self.now) // US
        ids: dict = {}
        if node.rpl_hierarchical:
            ids = self.hierarchy.issue(node, trx, starts[0])
            if ids is None:
                return
        if self._crash_at(node, R.BEFORE_BINLOG_WRITE):
            self.emit("commit", node.id, trx=trx, gtid=None, start=starts[0], errno=CR_SERVER_LOST,
                      message="Lost connection to server during query")
            return
        domain = op.get("domain", node.variables.get(DOM.GTID_DOMAIN_ID, 0))
        seq = node.gtid_seq[domain] = node.gtid_seq.get(domain, 0) + 1
        gtid = F.gtid(domain, node.server_id, seq)
        if self._strict(node) and (refused := self._strict_refusal(node, gtid)):
            node.gtid_seq[domain] -= 1
            self.emit("commit", node.id, trx=trx, gtid=None, start=starts[0], errno=DOM.ER_GTID_STRICT_OUT_OF_ORDER,
                      message=refused)
            return
        ict = self._local(node, self.now) if node.commit_timestamps else None
        common = dict(trx=trx, server_id=node.server_id, gtid=gtid, when_off=node.offset,
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
        node.executed.add(gtid)
        if node.crash_point in R.WRITE_POINTS:
            self._crash_in_write(node, trx, gtid, events, ids, starts[0])
            return
        self._write_binlog(node, events, ids.get("group_id"))
        if node.crash_point == R.AFTER_BINLOG_WRITE:
            node.prepared.append((trx, gtid))  # binlogged: crash recovery will commit it
            self._crash_at(node, R.AFTER_BINLOG_WRITE)
            self.emit("commit", node.id, trx=trx, gtid=gtid, start=starts[0], errno=CR_SERVER_LOST,
                      message="Lost connection to server during query", **ids)
            return
        pos = (node.binlog_file, node.binlog_pos)
        ss = node.semisync
        if not ss.binlogged(pos):
            self._engine_commit(node, trx, gtid)
            self.emit("commit", node.id, trx=trx, gtid=gtid, start=starts[0], semisync="no" if ss.enabled else None, **ids, **shown, **failed)
            return
        if self._unsent(node, skip):
            # Sent to no semi-sync replica: no ack will come for it, so none is waited for (S3).
            self._engine_commit(node, trx, gtid)
            self.emit("commit", node.id, trx=trx, gtid=gtid, start=starts[0], semisync="unsent", **ids, **shown, **failed)
            return
        after_sync = ss.wait_point == SS.AFTER_SYNC
        if after_sync:
            node.prepared.append((trx, gtid))
        else:
            self._engine_commit(node, trx, gtid)
        incarnation = node.incarnation

        def release(how: str) -> None:
            if node.incarnation != incarnation:
                return
            if how == "shutdown":
                self.emit("commit", node.id, trx=trx, gtid=gtid, start=starts[0], semisync=how,
                          errno=SS.ER_SERVER_SHUTDOWN, message="Server shutdown in progress")
                return
            if after_sync:
                node.prepared.remove((trx, gtid))
                self._engine_commit(node, trx, gtid)
            self.emit("commit", node.id, trx=trx, gtid=gtid, start=starts[0], semisync=how, **ids, **shown, **failed)

        ss.wait(trx, gtid, pos, release)

    def _unsent(self, node: Node, skip: bool) -> bool:
        """A marked transaction whose every semi-sync replica filters it on the master: the dump
        threads send none of it, so no ack can come. Registering it anyway for an ack is S3
        (Bug#15985893; MariaDB 10.11 does, MDEV-38486: log.cc report_binlog_update for every
        transaction, the dump thread dropping the events before update_sync_header)."""
        if M.ACK_FILTERED in self.mutants or self.mech.semisync_waits_unsent:
            return False
        semi = [r.node for r in node.replicas if r.node.variables.get("rpl_semi_sync_slave_enabled")]
        return bool(semi) and not any(FL.sent(r.variables, skip) for r in semi)

    def _strict(self, node: Node) -> bool:
        return self.mech.gtid_domains and bool(node.variables.get(DOM.GTID_STRICT_MODE))

    @staticmethod
    def _strict_refusal(node: Node, gtid: str) -> str | None:
        """gtid_strict_mode: why this GTID may not be binlogged after the domain's last, or None."""
        last = node.binlog_gtids.get(F.parse_gtid(gtid)[0])
        return DOM.strict_out_of_order(last and F.parse_gtid(last), F.parse_gtid(gtid))

    def _crash_in_write(self, node: Node, trx: str, gtid: str, events: list[Event], ids: dict, start: int) -> None:
        """The node dies inside the group's binlog write (its last event torn) or after the write,
        before the sync; the engine has prepared the transaction (two-phase commit). Before the
        sync the dump threads may already read the group (sync_binlog != 1): the node dies once
        what they sent has arrived, as the sync is under way meanwhile."""
        torn = node.crash_point == R.INSIDE_BINLOG_WRITE
        node.crash_point = None
        node.prepared.append((trx, gtid))
        node.prepared_at[trx] = self.now
        self._write_binlog(node, events[:-1] if torn else events, ids.get("group_id"), sync=False,
                           torn=events[-1] if torn else None)
        if torn:  # nothing is written after a torn event: the node dies in the write
            self._crash_during_commit(node, node.incarnation, trx, gtid, start, ids)
            return
        wait = max((ch.latency_us for ch in node.replicas if ch.connected), default=0)
        self.at(self.now + wait, self._crash_during_commit, node, node.incarnation, trx, gtid, start, ids)

    def _crash_during_commit(self, node: Node, incarnation: int, trx: str, gtid: str, start: int, ids: dict) -> None:
        if node.incarnation == incarnation and node.up:  # else it went down meanwhile: the client lost it then
            self._op_crash(node, {"kind": node.crash_kind})
        self.emit("commit", node.id, trx=trx, gtid=gtid, start=start, errno=CR_SERVER_LOST,
                  message="Lost connection to server during query", **ids)

    def _binlog_failure(self, node: Node, trx: str, op: dict, start: int) -> None:
        """The statement's changes could not be binlogged: rolled back, or done and lost from the log."""
        errno, message, committed = I.binlog_failure(op.get("engine", "innodb"), op["binlog_failure"], self.mech.texts == X.MARIADB)
        if committed:
            self._engine_commit(node, trx, None)
        self.emit("commit", node.id, trx=trx, gtid=None, start=start, errno=errno, message=message)
        if committed or M.INCIDENT_ON_ROLLBACK in self.mutants:
            self._record_incident(node, I.INCIDENT_LOST_EVENTS, I.BINLOG_WRITE_MESSAGE)

    def _record_incident(self, node: Node, code: int, message: str, forced: bool = False) -> None:
        """The incident, then a rotation where the server rotates (a debug-injected statement
        incident, `forced`, rotates everywhere): the log after the gap starts clean (WL#3464)."""
        if M.NO_INCIDENT in self.mutants and code == I.INCIDENT_LOST_EVENTS:
            return
        when = self._local(node, self.now) // US
        self._write_binlog(node, [Event("INCIDENT_EVENT", when=when, when_off=node.offset, server_id=node.server_id,
                                        incident=code, message=message, size=40 + len(message))])
        if forced or self.mech.incident_rotates:
            self._op_flush_logs(node, {})

    def _op_record_incident(self, node: Node, op: dict) -> None:
        self.emit("stmt", node.id, op="record_incident", via=op.get("via", "binlog"), code=op["code"],
                  message=op.get("message", ""), errno=None)
        # The statement's incident as the debug point incident_database_resync_on_replace writes it:
        # Incident_log_event, then rotate_and_purge(true) (sql/sql_parse.cc, SQLCOM_REPLACE), in MariaDB
        # as in MySQL (rpl_skip_incident.result: two binlogs after it, on both servers)
        self._record_incident(node, op["code"], op.get("message", ""), forced=op.get("via", "binlog") == "binlog")

    def _op_cluster_gap(self, node: Node, op: dict) -> None:
        """Changes the server never received from the cluster (the seed's three bug scenarios):
        they are in the data, not in the binlog, and an incident marks the gap."""
        for name in op["trxs"]:
            self._engine_commit(node, name, None)
        self._record_incident(node, I.INCIDENT_LOST_EVENTS, I.GAP_MESSAGES[op["cause"]])

    def _engine_commit(self, node: Node, trx: str, gtid: str | None, **worker: Any) -> None:
        node.visible.append(trx)
        node.visible_at.append(self.now)
        self.emit("visible", node.id, trx=trx, gtid=gtid, **worker)

    def _op_read(self, node: Node, op: dict) -> None:
        """A client session reads: which transactions it sees."""
        self.emit("read", node.id, seen=list(node.visible))

    def _op_set_global(self, node: Node, op: dict) -> None:
        name, value = op["variable"], op["value"]
        if name == "sql_slave_skip_counter" and (isinstance(value, bool) or not isinstance(value, int)):
            # A number variable: ON/OFF or a string is refused (sys_var::check_type, ER_WRONG_TYPE_FOR_VAR).
            self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=SS.ER_WRONG_TYPE_FOR_VAR,
                      message=f"Incorrect argument type to variable '{name}'")
            return
        if name == "sql_slave_skip_counter":
            # unsigned: a negative value is truncated to 0 with ER_TRUNCATED_WRONG_VALUE (1292) as a warning
            truncated, value = value < 0, max(0, value)
            ch = node.channel
            if ch is not None and ch.sql_running:  # MariaDB, and MySQL before 5.7, refuse it then
                self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=ER_SLAVE_MUST_STOP,
                          message="This operation cannot be performed as you have a running slave; run STOP SLAVE first")
                return
            self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=None, warning=1292 if truncated else None,
                      message=f"Truncated incorrect {name} value: '{op['value']}'" if truncated else "")
            if ch is not None:
                ch.skip_counter = value
            return
        if name in PA.known(self.mech.texts == X.MARIADB):
            self._set_parallel(node, name, value)
            return
        if name == MS.IGNORE_DUPLICATES and self.mech.gtid_domains:
            self._set_ignore_duplicates(node, value)
            return
        if name not in SS.VARIABLES:
            self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=ER_UNKNOWN_SYSTEM_VARIABLE,
                      message=f"Unknown system variable '{name}'")
            return
        value, errno, message = SS.check_value(name, value)
        if errno is not None:
            self.emit("stmt", node.id, op="set_global", variable=name, value=op["value"], errno=errno, message=message)
            return
        # rpl_semi_sync_slave_enabled takes effect when the IO thread next connects, as on the servers.
        self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=None, message="")
        node.runtime[name] = value
        if name.startswith("rpl_semi_sync_master"):
            node.semisync.set(name, value)
        self._server_status(node)

    def _set_parallel(self, node: Node, name: str, value: Any) -> None:
        """SET GLOBAL of a parallel applier setting: MariaDB's refused while the slave runs
        (ER_SLAVE_MUST_STOP); every one takes effect at the SQL thread's next start."""
        if name in PA.STOPPED_ONLY and self._refused_while_running(node, name, value):
            return
        refused = PA.check(name, value)
        self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=SS.ER_WRONG_VALUE_FOR_VAR if refused else None,
                  message=refused or "")
        if not refused:
            node.runtime[name] = PA.value_of(name, value)

    def _refused_while_running(self, node: Node, name: str, value: Any) -> bool:
        """ER_SLAVE_MUST_STOP while any connection runs, naming it (measured on 10.11 with
        gtid_ignore_duplicates: "... running slave 'b'; run STOP SLAVE 'b' first")."""
        ch = next((c for c in MS.channels(node) if c.sql_running or c.io_running), None)
        if ch is not None:
            conn = ch.connection or MS.DEFAULT
            self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=ER_SLAVE_MUST_STOP,
                      message=f"This operation cannot be performed as you have a running slave '{conn}'; run STOP SLAVE '{conn}' first")
        return ch is not None

    def _set_ignore_duplicates(self, node: Node, value: Any) -> None:
        """SET GLOBAL gtid_ignore_duplicates (MariaDB): a boolean (ON/OFF, 1/0), only with every
        connection stopped; the next group a connection reads is checked by it."""
        name = MS.IGNORE_DUPLICATES
        flag = {True: True, False: False, 1: True, 0: False, "ON": True, "OFF": False}.get(
            value.upper() if isinstance(value, str) else value)
        if flag is None:
            self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=SS.ER_WRONG_VALUE_FOR_VAR,
                      message=f"Variable '{name}' can't be set to the value of '{value}'")
            return
        if self._refused_while_running(node, name, value):
            return
        self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=None, message="")
        node.runtime[name] = flag

    def _op_lose_acks(self, node: Node, op: dict) -> None:
        if node.channel is not None:
            node.channel.lost_acks += op["count"]

    def _op_shutdown(self, node: Node, op: dict) -> None:
        node.semisync.shutdown()
        self.hierarchy.shutdown(node)
        self.emit("shutdown", node.id)
        self._op_crash(node, op, clean=True)
        node.state_file = self.mech.gtid_state_file  # write_state_to_file at the binlog's close

    def _op_remove_state_file(self, node: Node, op: dict) -> None:
        """The .state file is deleted (binlogs copied to a new server without it, MDEV-6391); there
        is none while the server runs, nor after a crash."""
        self.emit("state_file", node.id, removed=node.state_file)
        node.state_file = False

    def _op_failover(self, node: Node, op: dict) -> None:
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
            self._disconnect(r)
        self._op({"at": self.now, "node": node.id, "op": "stop_slave"})
        # MASTER_DELAY = 0 at the SQL thread's own relay log place, so that the relay logs are kept
        # (with both threads stopped a bare MASTER_DELAY purges them: seed P1 and Bug #87102)
        file, pos = self._group_position(ch)
        for step in ({"op": "change_master", "delay": 0, "relay_log_file": file, "relay_log_pos": pos},
                     {"op": "start_slave", "thread": "sql"}):
            self._op({"at": self.now, "node": node.id, **step})
        ch.promote = True
        self._kick(ch)

    def _promote(self, ch: Channel) -> None:
        node, old = ch.node, ch.source
        self._stop_sql(ch, "promotion", statement=False)
        self._disconnect(ch)  # an IO thread started meanwhile goes with the channel
        ch.io_running = False
        old.replicas.remove(ch)
        node.channel = None
        for r in list(old.replicas):
            # This failover supersedes one that elected r and is still applying its relay log:
            # r now replicates from the new primary, so it must not take over when it drains.
            r.promote = False
            if node.rpl_hierarchical and r.node.rpl_hierarchical:
                self.hierarchy.repoint(r, node)
                continue
            old.replicas.remove(r)
            self._disconnect(r)  # its dump thread on the old primary ends: no longer a semi-sync client there
            r.source = node
            r.fetch = None
            node.replicas.append(r)
            if r.io_running and r.node.up:
                self._connect(r)
        self.emit("promoted", node.id, old=old.id)

    def _op_change_master(self, node: Node, op: dict) -> None:
        ch = self._channel_or_error(node, op)
        if ch is None:
            return
        if "delay_sql" in op:
            value, errno, message = D.parse_master_delay(str(op["delay_sql"]), self.mech.master_delay_literal == "ulong_num",
                                                         "MariaDB" if self.mech.texts == X.MARIADB else "MySQL")
        else:
            value, errno, message = op.get("delay", ch.delay), None, ""
        by_id = op.get("connect_using_group_id", False)
        if errno is None and by_id and (refused := self.hierarchy.connect_option_error(node, op)):
            errno, message = refused
        moves = "master_log_file" in op or by_id or "master_use_gtid" in op
        # Refused while either thread runs (MariaDB sql_repl.cc, change_master: thread_mask; measured on
        # 10.11, d1-back-to-zero), or while the thread its options are for runs (MySQL 5.7.4+, WL#6120;
        # rpl_replica.cc, change_master: MASTER_DELAY is the applier's, a new place the receiver's).
        either = self.mech.change_master_refused_while == "either"
        running = (ch.sql_running or ch.io_running) if either else (ch.sql_running or (moves and ch.io_running))
        if errno is None and running:
            errno, message = ER_SLAVE_MUST_STOP, "This operation cannot be performed with a running slave; run STOP SLAVE first"
        resume = self._relay_index(ch, op["relay_log_file"], op["relay_log_pos"]) if "relay_log_file" in op else None
        if errno is None and resume == -1:
            errno, message = ER_RELAY_LOG_INIT, ("Failed initializing relay log position: Could not find target log "
                                                 "during relay log initialization")
        # RELAY_LOG_FILE/RELAY_LOG_POS keep the relay logs (need_relay_log_purge= 0, change_master)
        purge = errno is None and resume is None and not (moves or ch.sql_running or ch.io_running or "master_host" in op)
        if errno is None:
            ch.delay = value
            source = self.nodes[op.get("master_host", ch.source.id)]
            if "master_log_file" in op:
                self._change_source(ch, source, op["master_log_file"], op["master_log_pos"])
            elif by_id:
                self._change_source_by_id(ch, source)
            elif "master_use_gtid" in op:
                self._change_source_by_gtid(ch, source)
            if resume is not None:
                ch.sql_pos = ch.group_start = resume
                if self.mech.relay_log_place_turns_gtid_off and self._gtid_replica(ch):
                    ch.by_position = True
                    errno, message = ER_WARN_USING_GTID_CHANGED, ("CHANGE MASTER TO is implicitly changing the value "
                                                                  "of 'Using_Gtid' from 'Slave_Pos' to 'No'")
            self._write_relay_log_info(ch)
        self._stmt(ch, op, errno, message, warning=errno == ER_WARN_USING_GTID_CHANGED, delay=value)
        if purge:
            self._purge_relay_logs(ch)

    @staticmethod
    def _relay_index(ch: Channel, file: str, pos: int) -> int:
        """The relay log's event at (file, pos), or its end there; -1 if the relay log has no such place."""
        if (file, pos) == (f"{MS.relay_base(ch.connection)}.{ch.relay_file_no:06d}", ch.relay_pos):
            return len(ch.relay)
        return next((i for i, e in enumerate(ch.relay) if (e.file, e.pos) == (file, pos)), -1)

    def _purge_relay_logs(self, ch: Channel) -> None:
        """CHANGE MASTER with both threads stopped and no new place: the relay logs are purged and the
        IO thread fetches again from the SQL thread's executed position, so what was relayed and not
        applied comes again, once (need_relay_log_purge, then the master position set to
        rli's group_master_log_name/pos: MariaDB sql_repl.cc and MySQL rpl_replica.cc, change_master;
        with auto-position MySQL's purge_relay_logs also clears the retrieved GTID set, rpl_rli.cc).
        MySQL 5.7.4 to 5.7.17 rewound only when a receiver option was given: a MASTER_DELAY change kept
        Read_Master_Log_Pos and skipped the purged transactions (Bug #84249, #84375, #87102)."""
        fetched = ch.fetch
        self._drop_relay(ch, "change_master")  # a GTID replica then asks by GTID (MySQL: auto-position)
        if M.DELAY_CHANGE_KEEPS_FETCH_POSITION in self.mutants:
            ch.fetch = fetched
            return
        self._fetch_from_group(ch)

    def _fetch_from_group(self, ch: Channel) -> None:
        """The receiver placed at the applier's group position (MySQL rpl_replica.cc, recover_relay_log
        and change_master; MariaDB sql_repl.cc, change_master)."""
        ch.read_master_file, ch.read_master_pos = ch.group_master_file, ch.group_master_pos
        if ch.group_master_file and not self._gtid_replica(ch):  # else '': the first binlog, as at RESET SLAVE
            ch.fetch = _binlog_index(ch.source, ch.group_master_file, ch.group_master_pos)

    def _op_reset_slave(self, node: Node, op: dict) -> None:
        ch = self._channel_or_error(node, op)
        if ch is None:
            return
        if ch.sql_running or ch.io_running:
            self._stmt(ch, op, ER_SLAVE_MUST_STOP, "This operation cannot be performed with a running slave; run STOP SLAVE first")
            return
        ch.delay = 0
        self._cut_relay(ch, 0)
        ch.relay_file_no += 1
        ch.relay_pos = BINLOG_START
        ch.sql_pos = ch.group_start = 0
        ch.fetch = None
        ch.group_master_file, ch.group_master_pos = "", 0
        ch.read_master_file, ch.read_master_pos = "", 0
        ch.connect_by_id = False
        self._write_relay_log_info(ch)
        self._stmt(ch, op, None, "")

    def _op_stop_slave(self, node: Node, op: dict) -> None:
        ch = self._channel_or_error(node, op)
        if ch is None:
            return
        thread = op.get("thread")
        running = (thread in (None, "sql") and ch.sql_running) or (thread in (None, "io") and ch.io_running)
        self._stop_threads(ch, io=thread in (None, "io"), sql=thread in (None, "sql"))
        self._stmt(ch, op, None if running else ER_SLAVE_WAS_NOT_RUNNING,
                   "" if running else "Slave already has been stopped", warning=not running)

    def _op_start_slave(self, node: Node, op: dict) -> None:
        if (op.get("until") or {}).get("sql_after_mts_gaps") and self.mech.texts == X.MARIADB:
            # MariaDB's grammar knows no SQL_AFTER_MTS_GAPS (sql_yacc.yy, slave_until: log positions and
            # MASTER_GTID_POS only): a syntax error, nothing started
            args = {k: v for k, v in op.items() if k not in ("at", "op", "node")}
            self.emit("stmt", node.id, op="start_slave", errno=D.ER_PARSE_ERROR, warning=None, message=(
                "You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server "
                "version for the right syntax to use near 'SQL_AFTER_MTS_GAPS' at line 1"), **args)
            return
        ch = self._channel_or_error(node, op)
        if ch is None:
            return
        thread = op.get("thread")
        io = thread in (None, "io") and not ch.io_running
        sql = thread in (None, "sql") and not ch.sql_running
        if not (io or sql):
            self._stmt(ch, op, ER_SLAVE_WAS_RUNNING, "Slave is already running", warning=True)
            return
        if sql and (op.get("until") or {}).get("sql_after_mts_gaps") and not self._computes_mts_gaps(ch):
            # start_slave_threads (rpl_replica.cc): no gaps were computed, the UNTIL stops at once
            self._stmt(ch, op, ER_WARN_SQL_AFTER_MTS_GAPS_GAP_NOT_CALCULATED, (
                f"The until clause SQL_AFTER_MTS_GAPS is being used for channel '{ch.connection or ''}' when "
                "GTID_MODE = ON and SOURCE_AUTO_POSITION=1 meaning the server did not compute internally what gaps "
                "may exist in the relay log transaction execution. To close any execution gaps use either the "
                "SQL_BEFORE_GTIDS or SQL_AFTER_GTIDS until clause."), warning=True)
        else:
            self._stmt(ch, op, None, "")
        self._start_threads(ch, io, sql, op.get("until"))

    def _start_threads(self, ch: Channel, io: bool, sql: bool, until: dict | None = None) -> None:
        if sql:
            ch.until = until
            ch.last_sql_errno, ch.last_sql_error = 0, ""
        if io and sql:
            self._start_both(ch)
        elif io:
            self._start_io(ch)
        else:
            self._start_sql(ch)

    def _stop_threads(self, ch: Channel, io: bool, sql: bool) -> None:
        if sql and ch.sql_running:
            self._stop_sql(ch, "stop")
        if io and ch.io_running:
            self._disconnect(ch)
            ch.io_running = False

    def _op_start_all_slaves(self, node: Node, op: dict) -> None:
        """START ALL SLAVES: each connection whose threads are not both running starts, in turn
        (Master_info_index::start_all_slaves, sql/rpl_mi.cc); one statement, one answer."""
        self._all_slaves(node, op, lambda ch: not (ch.io_running and ch.sql_running),
                         lambda ch: self._start_threads(ch, not ch.io_running, not ch.sql_running))

    def _op_stop_all_slaves(self, node: Node, op: dict) -> None:
        """STOP ALL SLAVES: each connection with a running thread stops (Master_info_index::stop_all_slaves)."""
        self._all_slaves(node, op, lambda ch: ch.io_running or ch.sql_running, lambda ch: self._stop_threads(ch, True, True))

    def _all_slaves(self, node: Node, op: dict, acts: Callable[[Channel], bool], do: Callable[[Channel], None]) -> None:
        acting = [c for c in MS.channels(node) if acts(c)]
        warning, message = MS.all_slaves_note(op["op"], [c.connection for c in acting], self.mech.texts == X.MARIADB)
        self.emit("stmt", node.id, op=op["op"], errno=None, warning=warning, message=message)
        for ch in acting:
            do(ch)
            self._status(ch)  # its row of SHOW ALL SLAVES STATUS right after

    def _op_flush_logs(self, node: Node, op: dict) -> None:
        if op:  # the statement, not a rotation the server makes itself
            self.emit("stmt", node.id, op="flush_logs", errno=None, warning=None, message="")
        when = self._local(node, self.now) // US
        self._write_binlog(node, [Event("ROTATE_EVENT", when=when, when_off=node.offset, server_id=node.server_id,
                                        size=ROTATE_SIZE)])
        self._open_binlog(node)

    def _op_flush_status(self, node: Node, op: dict) -> None:
        self.emit("stmt", node.id, op="flush_status", errno=None, warning=None, message="")
        node.semisync.flush_status()

    def _op_crash(self, node: Node, op: dict, clean: bool = False) -> None:
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
            sync_binlog, flush_log = self._durability(node)
            self.emit("crash", node.id, how=kind, sync_binlog=sync_binlog, innodb_flush_log_at_trx_commit=flush_log)
            self._lose_on_crash(node, kind, sync_binlog, flush_log)
        for w in node.semisync.abandon():
            self.emit("commit", node.id, trx=w.trx, gtid=w.gtid, errno=CR_SERVER_LOST, message="Lost connection to server during query")
        for ch in MS.channels(node):
            if ch.sql_running:
                self._stop_sql(ch, "crash", statement=False)
            self._disconnect(ch)
            ch.io_running = False
            # Gone with the process: sql_slave_skip_counter is a global variable, not persisted (0 at
            # start), and the skip of a group the counter ran out in; the SQL thread starts again at
            # that group's first event with nothing to skip.
            ch.skip_counter, ch.skipping_group = 0, False
        node.domain_owner = {}
        for r in node.replicas:
            self._disconnect(r)

    def _lose_on_crash(self, node: Node, kind: str, sync_binlog: int, flush_log: int) -> None:
        """What the disk does not keep (model/recovery.py): a machine crash the binlog's unsynced
        tail that the OS had not written back; either kind the engine commits and prepares its log
        had not flushed."""
        keep = len(node.binlog)
        if kind == R.MACHINE:
            keep = next((i for i in range(node.synced, keep) if not R.binlog_survives(node.binlog[i].at, False, self.now, kind)),
                        keep)
        node.durable_end = keep if node.durable_end is None else min(keep, node.durable_end)
        alive = [R.engine_survives(flush_log, t, self.now, kind) for t in node.visible_at]
        node.engine_lost += [x for x, ok in zip(node.visible, alive) if not ok]
        node.visible = [x for x, ok in zip(node.visible, alive) if ok]
        node.visible_at = [t for t, ok in zip(node.visible_at, alive) if ok]
        node.prepared = [p for p in node.prepared if R.engine_survives(flush_log, node.prepared_at.get(p[0], 0), self.now, kind)]

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
            self._engine_commit(node, trx, gtid)
        node.prepared, node.prepared_at = [], {}
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

    def _op_restart(self, node: Node, op: dict) -> None:
        if node.up:
            self.emit("error", node.id, op="restart", errno=0, message="node is already up")
            return
        refused = G.startup_error(node.log_bin, node.log_slave_updates, node.rpl_hierarchical)
        if refused:
            self.emit("error", node.id, op="restart", errno=F.ER_STARTUP_OPTIONS, message=refused)
            return
        node.up = True
        role = op.get("init_rpl_role", R.MASTER)
        self.emit("restart", node.id, **({"init_rpl_role": role} if role != R.MASTER else {}))
        if node.dirty:
            self._recover(node, role)
        elif R.clean_start_state(self.mech.gtid_state_file, node.state_file,
                                 M.STATE_FILE_MISSING_EMPTY in self.mutants) == R.EMPTY:
            node.binlog_gtids, node.gtid_seq = {}, {}
        self._start_semisync(node)
        if node.semisync.enabled:
            self._server_status(node)
        # After a clean shutdown, what waited for a semi-sync ack is binlogged: committed at start.
        for trx, gtid in node.prepared:
            self._engine_commit(node, trx, gtid)
        node.prepared = []
        if node.rpl_hierarchical and not self.hierarchy.recover(node):
            return
        self._open_binlog(node)
        node.dirty, node.state_file = False, False
        if self._crash_at(node, R.RECOVERY_AFTER_NEW_BINLOG):
            return
        if node.rpl_hierarchical:
            self.hierarchy.resume(node)
        for ch in MS.channels(node):
            # relay-log.info first, then recovery from the positions it holds (rli_init_info: read_info,
            # then init_recovery; MariaDB's init_relay_log_info the same)
            if not self._read_relay_log_info(ch):
                continue
            if op.get("relay_log_recovery") and self._fills_gaps_first(ch):
                self._fill_gaps_then_recover(ch, op.get("start_slave", True))
                continue
            if op.get("relay_log_recovery"):
                self._recover_relay_log(ch)
            if op.get("start_slave", True):
                # The UNTIL condition lives only in memory (Relay_log_info::until_condition, UNTIL_NONE
                # when constructed; sql/rpl_rli.cc): threads a restart starts run without it.
                ch.until = None
                self._start_both(ch)
        for r in node.replicas:
            if r.io_running and r.node.up:
                self._connect(r)
        if op.get("master"):
            self._rejoin(node, self.nodes[op["master"]])

    def _computes_mts_gaps(self, ch: Channel) -> bool:
        """MTS recovery computes a crash's gaps here: not under GTID_MODE=ON and auto-position on
        MySQL 8.0.26+ (rpl_replica.cc, mts_recovery_groups), where GTID auto-skip passes the groups
        committed past the low-water mark."""
        return self.mech.mts_gaps_under_auto_position or not self._gtid_replica(ch)

    def _fills_gaps_first(self, ch: Channel) -> bool:
        """relay_log_recovery finds MTS gaps to fill before it throws the relay log away (init_recovery:
        mts_recovery_groups left mts_recovery_group_cnt set)."""
        return (self.mech.relay_log_recovery_fills_mts_gaps and ch.par is not None and bool(ch.par.recovered)
                and self._computes_mts_gaps(ch))

    def _recover_relay_log(self, ch: Channel) -> None:
        """relay_log_recovery=1: the relay log is not trusted after a crash; the receiver starts again
        at the applier's group position (MySQL recover_relay_log, MariaDB init_recovery)."""
        self._drop_relay(ch, "relay_log_recovery")
        self._fetch_from_group(ch)

    def _fill_gaps_then_recover(self, ch: Channel, start: bool) -> None:
        """fill_mts_gaps_and_recover (rpl_replica.cc): the coordinator runs alone, as START SLAVE
        UNTIL SQL_AFTER_MTS_GAPS, through the relay log from the low-water mark; once it stops there,
        recover_relay_log throws the relay log away and points the receiver at the group position.
        `start`: the threads start after it (no --skip-slave-start)."""
        ch.fill_then_start = start
        self._start_threads(ch, False, True, {"sql_after_mts_gaps": True})

    def _rejoin(self, node: Node, source: Node) -> None:
        """A restarted server replicates from `source` as rpl_semi_sync_fail_over.result has the
        crashed primary rejoin its new primary: SET GLOBAL gtid_slave_pos = @@gtid_binlog_pos, CHANGE
        MASTER TO it with MASTER_USE_GTID = slave_pos, START SLAVE. What recovery truncated is not in
        its GTID position, so the new primary sends it again if it has it: as MariaDB does with
        gtid_strict_mode (rpl_semi_sync_fail_over.cnf sets it; measured on 10.11, without it the IO
        thread skips those events of its own server_id and the server lacks them for good)."""
        if node.channel is None:  # the network's latency is the topology's channel the other way
            back = next((c for c in self.history["header"]["topology"].get("channels", [])
                         if c["source"] == node.id and c["replica"] == source.id), {})
            self._add_channel(node, source, back.get("latency_us", 0))
        node.slave_gtids = dict(node.binlog_gtids)
        self.emit("stmt", node.id, op="set_global", variable="gtid_slave_pos", value=F.format_pos(node.slave_gtids), errno=None, message="")
        self._change_source_by_gtid(node.channel, source)
        self.emit("stmt", node.id, op="change_master", master_host=source.id, master_use_gtid="slave_pos", errno=None, message="")
        self._start_both(node.channel)

    def _op_clock_step(self, node: Node, op: dict) -> None:
        node.offset += op["delta_us"]
        self.emit("clock_step", node.id, delta_us=op["delta_us"])

    def _op_show_slave_status(self, node: Node, op: dict) -> None:
        if node.channel is not None:  # a server that is no replica answers an empty set, no error (10.11, measured)
            self._status(node.channel)

    def _op_binlog_statement(self, node: Node, op: dict) -> None:
        types = op["event_types"]
        errno, message = None, ""
        bad = [t for t in types if t not in BINLOG_STATEMENT_EVENTS]
        if types and types[0] != "FORMAT_DESCRIPTION_EVENT":
            errno = ER_NO_FORMAT_DESCRIPTION_EVENT_BEFORE_BINLOG_STATEMENT
            message = f"The BINLOG statement of type `{types[0]}` was not preceded by a format description BINLOG statement."
        elif bad:
            errno = ER_ONLY_FD_AND_RBR_EVENTS_ALLOWED_IN_BINLOG_STATEMENT
            message = f"Only Format_description_log_event and row events are allowed in BINLOG statements (but {bad[0]} was provided)"
        self.emit("stmt", node.id, op="binlog_statement", event_types=types, errno=errno, message=message)

    def _channel_or_error(self, node: Node, op: dict) -> Channel | None:
        if node.channel is None and node.connections:
            errno, warning, message = MS.unconfigured_default(op["op"], self.mech.texts == X.MARIADB)
            self.emit("stmt", node.id, op=op["op"], errno=errno, warning=warning, message=message)
        elif node.channel is None:
            self.emit("stmt", node.id, op=op["op"], errno=ER_BAD_SLAVE,
                      message="The server is not configured as slave; fix in config file or with CHANGE MASTER TO")
        return node.channel

    def _stmt(self, ch: Channel, op: dict, errno: int | None, message: str, warning: bool = False, **extra) -> None:
        args = {k: v for k, v in op.items() if k not in ("at", "op", "node")}
        fields = {**args, **{k: v for k, v in extra.items() if k not in args}}
        self.emit("stmt", ch.node.id, op=op["op"], errno=None if warning else errno,
                  warning=errno if warning else None, message=message, **fields)

    # -- crash points, SHOW MASTER STATUS, a new source (group IDs: model/groupid.py, Hierarchy) --
    def _crash_at(self, node: Node, point: str) -> bool:
        """An armed crash point fires here: the node crashes at once."""
        if node.crash_point != point or not node.up:
            return False
        node.crash_point = None
        self._op_crash(node, {"kind": node.crash_kind})
        return True

    @staticmethod
    def _master_status_fields(node: Node) -> dict:
        fields = {"File": node.binlog_file, "Position": node.binlog_pos}
        if node.rpl_hierarchical:
            fields["Group_ID"] = node.group_id
        return fields

    def _master_status(self, node: Node, **extra: Any) -> None:
        self.emit("master_status", node.id, **self._master_status_fields(node), **extra)

    def _op_show_master_status(self, node: Node, op: dict) -> None:
        self._master_status(node)

    def _change_source(self, ch: Channel, source: Node, file: str, pos: int) -> None:
        """CHANGE MASTER TO MASTER_HOST, MASTER_LOG_FILE, MASTER_LOG_POS: old relay logs go (as
        after RESET SLAVE), reading resumes at that place of the new source's binlog."""
        if ch.source is not source:
            ch.source.replicas.remove(ch)
            source.replicas.append(ch)
            ch.source = source
        self._cut_relay(ch, 0)
        ch.relay_file_no += 1
        ch.relay_pos = BINLOG_START
        ch.sql_pos = ch.group_start = 0
        ch.engine_pos = None
        ch.connect_by_id = False
        ch.by_position = bool(file)
        ch.fetch = _binlog_index(source, file, pos)
        ch.group_master_file, ch.group_master_pos = file, pos
        ch.read_master_file, ch.read_master_pos = file, pos

    def _change_source_by_id(self, ch: Channel, source: Node) -> None:
        """CHANGE MASTER TO CONNECT_USING_GROUP_ID: where to start is known only once the master has
        looked the slave's last group ID up."""
        self._change_source(ch, source, "", 0)
        ch.fetch, ch.connect_by_id = None, True

    def _change_source_by_gtid(self, ch: Channel, source: Node) -> None:
        """CHANGE MASTER TO [MASTER_HOST,] MASTER_USE_GTID: the relay logs go and the next connect asks
        by GTID (MariaDB sql_repl.cc, change_master: a new master or GTID mode purges the relay logs)."""
        self._change_source(ch, source, "", 0)
        ch.fetch = None

    # -- binlog and IO thread -----------------------------------------------------------------
    def _open_binlog(self, node: Node) -> None:
        self.hierarchy.close_index_entry(node)
        node.binlog_file_no += 1
        node.binlog_pos = BINLOG_START
        self.hierarchy.index_binlog(node)
        when = self._local(node, self.now) // US
        self._write_binlog(node, [Event("FORMAT_DESCRIPTION_EVENT", when=when, when_off=node.offset,
                                        server_id=node.server_id, size=FDE_SIZE)])
        # A rotation syncs (the model's simplification: a machine crash never removes a binlog
        # file, only the unsynced tail of the last one).
        self._sync_binlog(node)
        self._publish(node)

    def _write_binlog(self, node: Node, events: list[Event], group_id: int | None = None, sync: bool = True,
                      torn: Event | None = None) -> None:
        """Write events (and, when a crash falls inside the write, the first bytes of `torn`), then
        flush_and_sync: sync as sync_binlog says (unless a crash falls before the sync), and let the
        dump threads read what they may."""
        if not node.log_bin:
            return
        for ev in events + ([torn] if torn else []):
            # a torn event: its header and part of its body
            end = node.binlog_pos + (ev.size // 2 if ev is torn else ev.size)
            # FDE and Rotate headers are frozen: they carry no group ID.
            gid = None if ev.type in NO_GROUP_ID else group_id
            entry = Entry(ev, node.binlog_file, node.binlog_pos, end, group_id=gid, at=self.now, torn=ev is torn)
            node.binlog.append(entry)
            node.binlog_pos = end
            node.mtimes[entry.file] = self.now
            if ev.type == "FORMAT_DESCRIPTION_EVENT":
                node.file_start.setdefault(entry.file, len(node.binlog) - 1)
            # a torn event does not end its group: what reads the binlog sees no group end there
            self.emit("binlog", node.id, **{**_event_fields(ev, gid), **({"last": False, "torn": True} if ev is torn else {})},
                      file=entry.file, pos=entry.pos, end=end)
            if ev.gtid and ev.last and ev is not torn:
                node.binlog_gtids[F.parse_gtid(ev.gtid)[0]] = ev.gtid
                if self.mech.gtid_seq_follows_domain:  # the domain's next local GTID follows it
                    d, _, n = F.parse_gtid(ev.gtid)
                    node.gtid_seq[d] = max(node.gtid_seq.get(d, 0), n)
        if group_id:  # the in-memory group_id follows the binlog: issued here, or the THD's
            node.group_id = group_id
        node.writes_since_sync += 1
        if sync and R.syncs_now(self._durability(node)[0], node.writes_since_sync):
            self._sync_binlog(node)
        self._publish(node)

    def _durability(self, node: Node) -> tuple[int, int]:
        """sync_binlog and innodb_flush_log_at_trx_commit (my.cnf, or the model's defaults in
        spec/systems.toml); a simulator given neither syncs every group, the safe setting."""
        return (int(node.variables.get(R.SYNC_BINLOG, 1)), int(node.variables.get(R.FLUSH_LOG, 1)))

    def _sync_binlog(self, node: Node) -> None:
        node.writes_since_sync = 0
        if node.synced < len(node.binlog):
            node.synced = len(node.binlog)
            last = node.binlog[-1]
            self.emit("binlog_sync", node.id, file=last.file, end=last.end)

    def _publish(self, node: Node) -> None:
        """The dump threads may read up to the synced end when sync_binlog = 1, up to the written end
        otherwise; never a torn event."""
        end = len(node.binlog)
        if R.dump_reads_synced_only(self._durability(node)[0]) and M.SEND_BEFORE_SYNC not in self.mutants:
            end = node.synced
        if end and node.binlog[end - 1].torn:
            end -= 1
        if end <= node.published:
            return
        first, node.published = node.published, end
        for ch in node.replicas:
            if ch.connected:
                self.at(self.now + ch.latency_us, self._arrive, ch, ch.io_gen, first, end)

    def _start_io(self, ch: Channel) -> None:
        ch.io_running = True
        if ch.source.up:
            self._connect(ch)

    def _disconnect(self, ch: Channel) -> None:
        if ch.connected and ch.source.up:  # a dead master's semi-sync state dies with it
            ch.source.semisync.disconnect(ch.node.id)
        ch.connected = ch.semi_sync = False
        ch.io_gen += 1

    def _connect(self, ch: Channel) -> None:
        if ch.source.failed_over:  # as to a dead master: the IO thread stays Connecting
            return
        if not ch.source.log_bin:
            self._refuse_dump(ch, "position", "Binary log is not open")
            return
        ch.connected = True
        ch.io_gen += 1
        ch.semi_sync = bool(ch.node.runtime.get("rpl_semi_sync_slave_enabled"))
        ch.source.semisync.connect(ch.node.id, ch.semi_sync)
        if ch.semi_sync:  # the master's log line, as MariaDB writes it
            self.emit("log", ch.source.id, level="Note", replica=ch.node.id,
                      message=f"Start semi-sync binlog_dump to slave (server_id: {ch.node.server_id})")
        whole = M.GTID_RECEIVED_AT_FIRST_EVENT not in self.mutants
        ch.dump_state, ch.dump_empty, ch.dump_skipping, ch.gtid_request = {}, set(), False, ""
        if ch.connect_by_id:
            by = "group_id"
        elif self._gtid_replica(ch) and (self.mech.gtid_connect == "every" or ch.fetch is None):
            by = "gtid"
            self._gtid_fetch(ch)
            # MariaDB asks from Gtid_IO_Pos (what it received whole) and skips the events of the
            # partial group it already queued (slave.cc: gtid_reconnect_event_skip_count =
            # events_queued_since_last_gtid; queue_event). MySQL keeps the partial copy: the
            # source's real FDE before the full copy rolls it back (_finish).
            ch.reconnect_skip = P.queued_since_gtid(ch.relay) if self.mech.gtid_reconnect_skips_queued and whole else 0
        else:
            by = "position"
            if ch.fetch is None:  # MASTER_LOG_FILE '': the first binlog the index names (sql_repl.cc)
                src = ch.source
                ch.fetch = next((i for i, e in enumerate(src.binlog) if e.file not in src.purged), len(src.binlog))
        self.at(self.now + ch.latency_us, self._dump_start, ch, ch.io_gen, by)

    @staticmethod
    def _gtid_replica(ch: Channel) -> bool:
        """A GTID replica asks by GTID (on every connect or only its first, Mechanics.gtid_connect).
        A CHANGE MASTER TO a binlog position turns it off (MASTER_USE_GTID=no)."""
        return ch.node.gtid_mode and ch.source.gtid_mode and not ch.node.rpl_hierarchical and not ch.by_position

    def _gtid_fetch(self, ch: Channel) -> None:
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
                                   or not FL.sent(ch.node.variables, binlog[i].ev.skip)):
            i += 1
        ch.gtid_floor = (binlog, executed, i)
        # A group counts as received only once its last event is in (Bug #69943: counting it at
        # its GTID event loses the whole group after a reconnect inside it).
        whole = M.GTID_RECEIVED_AT_FIRST_EVENT not in self.mutants
        relayed = {e.ev.gtid for e in ch.relay[self._held_from(ch, ch.sql_pos):] if e.ev.gtid and (e.ev.last or not whole)}
        ch.fetch = next((k for k in range(i, len(binlog)) if binlog[k].ev.gtid and binlog[k].ev.gtid not in executed
                         and binlog[k].ev.gtid not in relayed), len(binlog))

    @staticmethod
    def _held_from(ch: Channel, read: int) -> int:
        """Where the relay log the replica still needs begins: at the SQL thread's place, or at the
        oldest group a worker holds, queued and not yet committed (model/parallel.py)."""
        return min(read, ch.par.queued[0].first) if ch.par is not None and ch.par.queued else read

    def _dump_place(self, ch: Channel, by: str, gid: int = 0, sid: int = 0) -> tuple[str, str | None]:
        """The master places the dump request in its binlogs (ch.fetch), or says why it cannot:
        (how it was placed, the reason for refusing it or None). What a purge removed is gone: a
        slave that needs it is refused, never moved past it."""
        src = ch.source
        if by == "group_id":
            return by, self.hierarchy.place_dump(ch, gid, sid)
        if by == "gtid" and self.mech.gtid_domains:
            return by, self._domain_place(ch)
        start = src.binlog[ch.fetch] if ch.fetch < len(src.binlog) else None
        if start is None or start.file not in src.purged:
            return by, None
        if by == "position" and self._gtid_replica(ch):
            # Asking by position is the same place as by GTID unless that binlog is gone: then the
            # GTID position decides.
            self._gtid_fetch(ch)
            return self._dump_place(ch, "gtid")
        if M.PURGE_SILENT_SKIP in self.mutants:
            ch.fetch = next((i for i in range(ch.fetch, len(src.binlog)) if src.binlog[i].file not in src.purged),
                            len(src.binlog))
            return by, None
        if by == "gtid":  # no binlog left whose Gtid_list the replica's position contains
            return by, ("Could not find GTID state requested by slave in any binlog files. Probably the slave state "
                        "is too old and required binlog files have been purged.")
        return by, "Could not find first log file name in binary log index file"

    def _domain_place(self, ch: Channel) -> str | None:
        """MariaDB's dump thread placing a GTID request (sql_repl.cc, mysql_binlog_send): the slave
        asks with its GTID per domain (gtid_slave_pos and what its relay log holds whole); the master
        checks it against its binlog state (check_slave_start_position), picks the binlog to start
        from by the Gtid_list events at the binlogs' heads (gtid_find_binlog_file), and skips each
        domain's groups up to the requested GTID (send_event_to_slave), here up to the first group
        it sends (ch.fetch; the rest in _arrive). The reason it refuses, or None."""
        src, node = ch.source, ch.node
        state = {d: F.parse_gtid(g) for d, g in node.slave_gtids.items()}
        whole = M.GTID_RECEIVED_AT_FIRST_EVENT not in self.mutants  # Bug #69943: a group counted at its GTID event
        for e in ch.relay[self._held_from(ch, ch.group_start):]:
            if e.ev.gtid and (e.ev.last or (e.ev.idx == 0 and not whole)):
                state[F.parse_gtid(e.ev.gtid)[0]] = F.parse_gtid(e.ev.gtid)
        ch.gtid_request = F.format_pos({d: F.gtid(*g) for d, g in state.items()})
        files, per = [], {}
        for e in src.binlog:
            if e.ev.type == "FORMAT_DESCRIPTION_EVENT" and e.pos == BINLOG_START and e.file not in src.purged:
                files.append((e.file, DOM.listed(per)))
            if e.ev.gtid and e.ev.last:
                DOM.log_gtid(per, F.parse_gtid(e.ev.gtid))
        binlog_state = DOM.listed(per)
        own_slave_pos = {d: F.parse_gtid(g) for d, g in src.slave_gtids.items()}
        refused, state, empty = DOM.start_position(state, binlog_state, own_slave_pos, src.server_id)
        if refused is not None:
            return refused
        name, state = DOM.find_binlog_file(files, state, M.START_BINLOG_ANY_ENTRY not in self.mutants)
        if name is None:
            return ("Could not find GTID state requested by slave in any binlog files. Probably the slave state "
                    "is too old and required binlog files have been purged.")
        strict = bool(node.variables.get(DOM.GTID_STRICT_MODE))
        i = src.file_start[name]
        while i < len(src.binlog):
            e = src.binlog[i]
            if e.ev.gtid and e.ev.idx == 0:
                g = F.parse_gtid(e.ev.gtid)
                if strict and (hole := DOM.start_hole(state, g)):
                    return hole
                if failed := DOM.empty_domain_error(state, empty, g, binlog_state):
                    return failed
                if not DOM.skips(state, g):
                    break
            i += 1
        ch.fetch, ch.dump_state, ch.dump_empty = i, state, empty
        return None

    @staticmethod
    def _binlog_state(node: Node) -> list[tuple[int, int, int]]:
        return DOM.gtid_list(F.parse_gtid(e.ev.gtid) for e in node.binlog if e.ev.gtid and e.ev.last)

    def _refuse_dump(self, ch: Channel, by: str, reason: str, **request) -> None:
        """The master answers the dump request with error 1236: the IO thread stops."""
        self.emit("connect", ch.node.id, source=ch.source.id, by=by, **request,
                  errno=F.ER_MASTER_FATAL_ERROR_READING_BINLOG, message=reason)
        self._dump_fails(ch, reason)

    def _dump_fails(self, ch: Channel, reason: str) -> None:
        """The dump thread ends with error 1236 (at the request or while sending): the IO thread stops."""
        self._disconnect(ch)
        ch.io_running = False
        self.emit("error", ch.node.id, thread="io", errno=F.ER_MASTER_FATAL_ERROR_READING_BINLOG, message=F.fatal_1236(reason))

    def _dump_start(self, ch: Channel, gen: int, by: str) -> None:
        if gen != ch.io_gen:
            return
        src = ch.source
        asked = {}
        if by == "group_id":  # CONNECT_USING_GROUP_ID
            asked = self.hierarchy.dump_request(ch)
        by, refused = self._dump_place(ch, by, *asked.values())
        shown = {**asked, **({"gtid_pos": ch.gtid_request} if by == "gtid" and ch.gtid_request else {})}
        if refused is not None:
            self._refuse_dump(ch, by, refused, **shown)
            return
        start = src.binlog[ch.fetch] if ch.fetch < len(src.binlog) else None
        if ch.reconnect_skip and (start is None or start.ev.gtid != P.partial_gtid(ch.relay)):
            # The partial group never committed on the source (a crash tore it): nothing is
            # skipped, and the source's format description event that follows rolls the partial
            # copy back (queue_event: "assuming that master has crashed and rolling back").
            ch.reconnect_skip = 0
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
        self._relay(ch, Entry(fake, at[0], 0, at[1]))
        first = src.file_start[file]
        if by == "gtid":
            for e in self._gtid_prefix(src, first, ch.fetch):
                self._relay(ch, e)
        else:
            fde = src.binlog[first]
            # Resuming past the FDE, the dump thread sends it with log_pos 0 (send_format_descriptor_event),
            # so the replica does not take its end for a position: Exec_Master_Log_Pos stays put.
            self._relay(ch, fde if start is fde else replace(fde, end=0))
        held = ch.held.get(src.id)
        if ch.semi_sync and held and by != "gtid" and M.NO_REACK_ON_RECONNECT not in self.mutants:
            # dump_start (semisync_master.cc) takes the place the dump starts for the replica's
            # reply: asked by position, where the replica is, which acknowledges all it holds. By
            # GTID the dump starts at the head of a binlog, which acknowledges nothing (MariaDB logs
            # "pos(bin.000001, 4)" at such a reconnect; measured on 10.11, ss-lost-ack-reconnect).
            last = ch.relay[held[-1]]
            src.semisync.ack(ch.node.id, (last.master_file, last.master_end))
        self._arrive(ch, gen, ch.fetch, src.published)

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

    def _arrive(self, ch: Channel, gen: int, first: int, stop: int) -> None:
        if gen != ch.io_gen or not ch.node.up:
            return
        for i in range(max(first, ch.fetch), stop):
            e = ch.source.binlog[i]
            if ch.dump_state and e.ev.gtid and e.ev.idx == 0:
                g = F.parse_gtid(e.ev.gtid)
                if ch.dump_empty and (failed := DOM.empty_domain_error(ch.dump_state, ch.dump_empty, g,
                                                                      self._binlog_state(ch.source))):
                    self._dump_fails(ch, failed)
                    return
                ch.dump_skipping = DOM.skips(ch.dump_state, g)
            if ch.dump_skipping and e.ev.trx is not None:
                ch.fetch = i + 1
                ch.dump_skipping = not e.ev.last
                continue
            if not FL.sent(ch.node.variables, e.ev.skip):  # the dump thread drops it: nothing arrives
                ch.fetch = i + 1
                continue
            # a cut counts the events of groups the relay log gets: the same place in the group stream
            # whichever way the replica asked (by position the dump also sends the FDE and incidents
            # a GTID request does not; MariaDB's GTID reconnect sends again what it does not queue)
            counted = e.ev.trx is not None and not ch.reconnect_skip
            self._relay(ch, e)
            ch.fetch = i + 1
            if ch.cut_after and counted:
                ch.cut_after -= 1
                if not ch.cut_after:  # the connection drops between two events, maybe inside a group
                    self._cut_io(ch)
                    break
        self._kick(ch)

    def _op_cut_io(self, node: Node, op: dict) -> None:
        """A network drop (or STOP SLAVE IO_THREAD) that falls after the next `after_events`
        events of groups the IO thread queues: events travel one at a time, so it can fall inside
        a group."""
        ch = node.channel
        if ch is None:
            self.emit("error", node.id, op="cut_io", errno=ER_BAD_SLAVE, message="not a replica")
            return
        ch.cut_after, ch.cut_then = op["after_events"], op.get("then", "reconnect")

    def _cut_io(self, ch: Channel) -> None:
        self.emit("io_cut", ch.node.id, source=ch.source.id, then=ch.cut_then, master_log_file=ch.read_master_file,
                  master_log_pos=ch.read_master_pos)
        self._disconnect(ch)
        if ch.cut_then == "stop":
            ch.io_running = False
        elif ch.source.up:  # the IO thread reconnects at once (master-retry-count, connect_to_master)
            self._connect(ch)

    def _relay(self, ch: Channel, src: Entry) -> None:
        ev = src.ev
        if ch.reconnect_skip and ev.trx is not None:
            # already queued before the reconnect (queue_event, gtid_skip_enqueue): not again; once
            # the last one is passed, a fake Rotate names the place the copy goes on from
            ch.reconnect_skip -= 1
            ch.read_master_file, ch.read_master_pos = src.file, src.end
            if not ch.reconnect_skip:
                fake = Event("ROTATE_EVENT", when=0, server_id=ch.source.server_id, size=ROTATE_SIZE)
                self._relay(ch, Entry(fake, src.file, 0, src.end))
            return
        if ch.reconnect_skip and ev.type == "FORMAT_DESCRIPTION_EVENT":
            # the master's FDE inside the group is queued as an artificial copy (log_pos 0), so the
            # SQL thread does not take it for a master crash and roll the first half back
            src = replace(src, end=0)
        if ev.type == "FORMAT_DESCRIPTION_EVENT" and src.pos == BINLOG_START and ch.relay and ch.relay[-1].ev is ev:
            return
        end = ch.relay_pos + ev.size
        entry = Entry(ev, sys.intern(f"{MS.relay_base(ch.connection)}.{ch.relay_file_no:06d}"), ch.relay_pos, end, src.file, src.end, ch.source.id, src.group_id)
        if ev.last and ev.trx is not None:
            ch.held.setdefault(entry.source, []).append(len(ch.relay))
        ch.relay.append(entry)
        ch.relay_pos = end
        if src.end:
            ch.read_master_file, ch.read_master_pos = src.file, src.end
        if ev.gtid and (ev.last or (ev.idx == 0 and M.GTID_RECEIVED_AT_FIRST_EVENT in self.mutants)):
            ch.io_gtids[F.parse_gtid(ev.gtid)[0]] = ev.gtid  # Gtid_IO_Pos moves only once the whole group is in
        self.emit("relay", ch.node.id, source=ch.source.id, **MS.tagged(ch.connection), **_event_fields(ev, src.group_id), file=entry.file, pos=entry.pos,
                  master_file=src.file, master_end=src.end)
        # The sync flag rides in the two reserved header bytes; the replica strips them, queues
        # the event, and only then acknowledges it.
        if ch.semi_sync and src.end and ch.source.semisync.needs_reply(ev.last and ev.trx is not None):
            self._send_ack(ch, (src.file, src.end))

    @staticmethod
    def _cut_relay(ch: Channel, keep: int) -> None:
        """Drop the relay log past its first `keep` entries (RESET SLAVE, a new source, relay_log_recovery)."""
        del ch.relay[keep:]
        for held in ch.held.values():
            while held and held[-1] >= keep:
                held.pop()

    def _send_ack(self, ch: Channel, pos: tuple[str, int]) -> None:
        if ch.lost_acks:
            ch.lost_acks -= 1
            return
        self.at(self.now + ch.latency_us, self._ack_arrives, ch, ch.io_gen, ch.source, pos)

    def _ack_arrives(self, ch: Channel, gen: int, source: Node, pos: tuple[str, int]) -> None:
        if gen == ch.io_gen and source.up and ch.source is source:
            source.semisync.ack(ch.node.id, pos)

    # -- SQL thread ---------------------------------------------------------------------------
    def _start_both(self, ch: Channel) -> None:
        """Both replication threads start (START SLAVE, or the server's own start). With
        MASTER_USE_GTID, MariaDB first throws the relay logs away (start_slave_threads in
        sql/slave.cc): the IO thread fetches again from the GTID position."""
        if self.mech.gtid_start_purges_relay and self._gtid_replica(ch) and ch.sql_pos < len(ch.relay):
            self._drop_relay(ch, "gtid")
        self._start_io(ch)
        self._start_sql(ch)

    def _drop_relay(self, ch: Channel, reason: str) -> None:
        """What was relayed but not applied is discarded and fetched again (by GTID, unless the caller
        places the fetch). The SQL thread starts at a new relay log and relay-log.info says so: left
        naming the discarded log, a later restart would resume past everything relayed meanwhile, an
        incident included."""
        dropped = len(ch.relay) - ch.group_start
        if ch.par is not None:  # the relay log MTS recovery would read again is gone
            ch.par.recovered = set()
        self._cut_relay(ch, ch.group_start)
        ch.sql_pos = ch.group_start
        ch.relay_file_no += 1
        ch.relay_pos = BINLOG_START
        ch.fetch = None
        self._write_relay_log_info(ch)
        self.emit("relay_log_recovery", ch.node.id, dropped=dropped, reason=reason, **MS.tagged(ch.connection))

    def _start_sql(self, ch: Channel) -> None:
        ch.sql_running = True
        ch.state = "idle"
        ch.sql_gen += 1
        self._start_workers(ch)
        self._kick(ch)

    def _start_workers(self, ch: Channel) -> None:
        """The applier the SQL thread starts with: the settings read at its start (MariaDB
        rpl_parallel_change_thread_count from start_slave_threads; MySQL slave_start_workers), the
        groups a crash left committed past the low-water mark carried over for MTS recovery."""
        node = ch.node
        chosen = PA.settings({**node.variables, **node.runtime}, self.mech.texts == X.MARIADB)
        recovered = ch.par.recovered if ch.par is not None else set()
        if not self._computes_mts_gaps(ch):  # the coordinator reads again from the low-water mark
            recovered = set()
        was = ch.par is not None
        ch.par = PA.Applier(chosen, recovered=recovered) if chosen is not None else None
        if chosen is not None or was:
            self.emit("parallel", node.id, **(chosen.as_fields() if chosen is not None else {"workers": 0}))

    def _stop_sql(self, ch: Channel, reason: str, statement: bool = True, **error) -> None:
        if ch.state == "waiting" and M.STOP_APPLIES_WAITED_EVENT in self.mutants and statement:
            while ch.sql_pos < len(ch.relay):  # runs the group out, ignoring the delay
                entry = ch.relay[ch.sql_pos]
                self._finish(ch, ch.sql_gen, entry, ch.cur_read, self.now)
                if entry.ev.last or entry.ev.trx is None:
                    break
        if ch.applied_in_group:
            g = ch.relay[ch.group_start].ev
            self.emit("rollback", ch.node.id, trx=g.trx, gtid=g.gtid, reason=reason)
        if ch.par is not None and reason == "crash":
            # The workers die with the process: what they had not committed is rolled back; what
            # they committed past the low-water mark is in their info for MTS recovery.
            # A gap this run's recovery skipped is one still while the low-water mark is before it:
            # the worker's info that made it one stays until a checkpoint passes it (rpl_rli_pdb.cc,
            # Slave_worker::commit_positions; mts_recovery_groups reads it again at the next start).
            low = ch.par.queued[0].first if ch.par.queued else ch.group_start
            ch.par.recovered = ch.par.recovered | {i for i in ch.par.skipped if i > low} | {
                g.first for g in ch.par.gaps() if ch.relay[g.last].ev.trx in ch.node.visible}
            for g in ch.par.queued:  # the Trace says so, as for the serial thread's group above
                if not g.committed:
                    ev = ch.relay[g.last].ev
                    self.emit("rollback", ch.node.id, trx=ev.trx, gtid=ev.gtid, reason=reason)
            ch.par.queued = []
        elif ch.par is not None:
            self._drain_workers(ch, reason == "stop" or (reason == "until" and M.UNTIL_GIVES_UP_QUEUED in self.mutants))
            ch.par.cost = 0
        ch.sql_pos = ch.group_start
        ch.applied_in_group = 0
        ch.sql_running = False
        ch.state = "stopped"
        ch.cur_due = None
        ch.sql_gen += 1
        self._release_domain(ch)
        self.emit("sql_stop", ch.node.id, reason=reason, **MS.tagged(ch.connection), **error)
        start, ch.fill_then_start = ch.fill_then_start, None
        if start is not None and reason == "until":  # the gaps filled: recover_relay_log, then the server goes on
            # (stopped otherwise, ER_RPL_MTA_AUTOMATIC_RECOVERY_FAILED: the relay log stays)
            self._recover_relay_log(ch)
            ch.until = None
            restart_io = ch.io_running  # started by a client meanwhile, which the starting server would not yet take
            if restart_io:
                self._stop_threads(ch, io=True, sql=False)
            if start:
                self._start_both(ch)
            elif restart_io:
                self._start_io(ch)

    def _kick(self, ch: Channel) -> None:
        """Let the SQL thread read and execute as far as it may now."""
        self._apply_relay(ch)
        if ch.fill_then_start is not None and ch.sql_running and ch.state == "idle" and ch.sql_pos >= len(ch.relay) \
                and not ch.par.recovered and not ch.par.pending():
            # The startup run that fills the gaps meets the relay log the restart opened: the coordinator
            # stops before its first event (Until_mts_gap::check_before_dispatching_event), once the
            # workers are done (slave_stop_workers)
            self._stop_sql(ch, "until", statement=False)
            return
        # waiting at the end of the relay log (next_event, slave.cc), its workers idle: MariaDB sets
        # sql_thread_caught_up only once rpl_parallel::workers_idle (MDEV-29639's fix)
        if ch.sql_running and ch.state == "idle" and (
                ch.par is None or not ch.par.pending() or M.CAUGHT_UP_WITH_WORKERS_BUSY in self.mutants):
            ch.sql_thread_caught_up = True
        if ch.promote and ch.state == "idle" and ch.sql_pos >= len(ch.relay):
            self._promote(ch)

    def _apply_relay(self, ch: Channel) -> None:
        while ch.sql_running and ch.state == "idle" and ch.sql_pos < len(ch.relay) and ch.node.up:
            if ch.sql_pos == ch.group_start and self._until_reached(ch):
                self._stop_sql(ch, "until", statement=False)
                return
            entry = ch.relay[ch.sql_pos]
            ev = entry.ev
            if ev.type in D.TRX_START and FL.replica_filter(ch.node.variables, ev.table, ev.skip) == FL.SKIP_REPLICATION:
                # Ignored before the skip counter counts it: Log_event::do_shall_skip (log_event_server.cc)
                # returns EVENT_SKIP_IGNORE for a marked event ahead of EVENT_SKIP_COUNT.
                if not self._skip_group(ch, FL.SKIP_REPLICATION):
                    return
                continue
            # Rotate, format description and Gtid_list events are neither counted nor skipped: they
            # only move the SQL thread along the logs (Gtid_list_log_event::do_shall_skip turns
            # EVENT_SKIP_COUNT into EVENT_SKIP_NOT, log_event_server.cc).
            gap = ch.par is not None and ch.sql_pos in ch.par.recovered and ev.type in D.TRX_START
            if gap and M.MTS_GAPS_NOT_FILLED not in self.mutants:
                # MTS recovery: a group a worker committed past the low-water mark before the crash
                # is skipped, not applied again (rpl_replica.cc exec_relay_log_event with
                # rli->is_mts_recovery(): the recovery_groups bitmap mts_recovery_groups built)
                first = ch.sql_pos
                if not self._skip_group(ch, reason="mts_recovery"):
                    return
                ch.par.recovered.discard(first)
                ch.par.skipped.add(first)
                continue
            if gap:
                ch.par.recovered.discard(ch.sql_pos)
            if (ch.skip_counter or ch.skipping_group) and ev.type not in SKIP_EXEMPT:
                self._skip_event(ch, entry)
                continue
            if ev.type in D.TRX_START and ch.node.rpl_hierarchical and entry.group_id is not None:
                if self.hierarchy.halts(ch, entry):
                    return
            elif self._checks_duplicates(ch, ev):
                pass  # once it is due, below
            elif ev.type in D.TRX_START and ev.gtid in ch.node.executed and not gap:  # the mutant applies a gap again
                if not self._skip_group(ch):
                    return
                continue
            due = self.rule.due(ev, ch.delay, self.now, ch.node.offset, self.epoch)
            if M.DELAY_SKIPPED_WHILE_WORKERS_BUSY in self.mutants and ch.par is not None and ch.par.pending():
                due = None
            ch.cur_read = self.now
            self._read_timestamp(ch, ev)
            if due is not None and due > self.now:
                ch.state, ch.cur_due = "waiting", due
                self.at(due, self._wake, ch, ch.sql_gen)
                return
            if self._checks_duplicates(ch, ev):
                held = self._duplicate_check(ch, ev.gtid)
                if held is None:  # another connection applies this domain: wait for it
                    return
                if held:
                    if not self._skip_group(ch, **({"reason": MS.SKIP_REASON} if self.mech.gtid_domains else {})):
                        return
                    continue
            self._execute(ch, entry, self.now)

    @staticmethod
    def _checks_duplicates(ch: Channel, ev: Event) -> bool:
        """A named connection decides at a group's GTID, once it is due (after MASTER_DELAY: the
        parallel worker, or the SQL thread past sql_delay_event, calls check_duplicate_gtid; measured
        on 10.11, a connection without delay applies a GTID at once while another holds it in its delay)."""
        return ch.connection is not None and ev.type in D.TRX_START and bool(ev.gtid)

    def _duplicate_check(self, ch: Channel, gtid: str) -> bool | None:
        """A named connection at a group's GTID: True to skip it, False to apply it, None to wait.
        MariaDB without gtid_ignore_duplicates applies what each connection brings (gtid_slave_pos is
        shared, not consulted); with it rpl_slave_state::check_duplicate_gtid (sql/rpl_gtid.cc): skip
        when the domain is at or past the GTID, else wait while another connection owns the domain,
        else own it until the group commits or the SQL thread stops. MySQL's channels always skip a
        GTID in gtid_executed and wait while another thread owns it (sql/rpl_gtid_state.cc,
        Gtid_state::acquire_ownership): the same ownership, per GTID set instead of per domain."""
        node = ch.node
        mariadb = self.mech.gtid_domains
        if mariadb and not node.runtime.get(MS.IGNORE_DUPLICATES):
            return False
        if MS.duplicate(node, gtid) if mariadb else gtid in node.executed:
            return True
        domain = F.parse_gtid(gtid)[0]
        owner = node.domain_owner.get(domain)
        if owner is not None and owner is not ch and M.IGNORE_DUPLICATES_RACE not in self.mutants:
            return None
        node.domain_owner[domain] = ch
        return False

    def _release_domain(self, ch: Channel) -> None:
        """release_domain_owner: the connection's domains are free again; connections waiting for one
        read on."""
        node = ch.node
        mine = [d for d, owner in node.domain_owner.items() if owner is ch]
        for d in mine:
            del node.domain_owner[d]
        if mine:
            for other in MS.channels(node):
                if other is not ch and other.sql_running:
                    self.at(self.now, self._resume, other, other.sql_gen)

    def _resume(self, ch: Channel, gen: int) -> None:
        if gen == ch.sql_gen and ch.state == "idle":
            self._kick(ch)

    def _read_timestamp(self, ch: Channel, ev: Event) -> None:
        """The SQL thread read `ev` (before any MASTER_DELAY wait): its timestamp becomes
        last_master_timestamp unless it has no master time of its own. MariaDB's exec_relay_log_event
        (slave.cc, event_can_update_last_master_timestamp) leaves out artificial events and when == 0
        (the dump thread's fake Rotate and Gtid_list); MySQL's (rpl_replica.cc) also the master's FDE."""
        mysql = self.mech.seconds_behind_master == X.MYSQL
        if ev.when == 0 or (mysql and ev.type == "FORMAT_DESCRIPTION_EVENT"):
            return
        lmt = ch.last_master_timestamp
        if M.CAUGHT_UP_KEPT in self.mutants and lmt is not None and ev.when <= lmt[0]:
            return  # MDEV-32265: only a newer timestamp ends "caught up"
        if ch.par is not None and lmt is not None and not ch.sql_thread_caught_up:
            # With workers the timestamp moves as groups commit (MariaDB rpl_rli.cc, stmt_done: "In
            # the parallel case, we only update the Seconds_Behind_Master at the end of a
            # transaction"; MySQL's checkpoint takes the low-water mark's). A read counts at once
            # only after the applier idled (MDEV-29639, rpl_parallel_sbm).
            return
        ch.last_master_timestamp = (ev.when, ev.when_off)
        ch.sql_thread_caught_up = False

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
                # it and did not already update it in a GTID transaction"; seen on 10.11 under load).
                ch.node.slave_gtids[F.parse_gtid(ev.gtid)[0]] = ev.gtid
            self._advance_group(ch, entry)

    def _incident_stop(self, ch: Channel, entry: Entry) -> None:
        """R3.1/R3.2: the SQL thread stops at any incident, before it; the IO thread goes on."""
        ev = entry.ev
        ch.last_sql_errno, ch.last_sql_error = I.ER_SLAVE_INCIDENT, I.error_message(ev.incident, ev.message, self.mech.texts == X.MARIADB)
        self._stop_sql(ch, "error", statement=False, errno=ch.last_sql_errno, message=ch.last_sql_error,
                       relay_file=entry.file, relay_pos=entry.pos)

    def _wake(self, ch: Channel, gen: int) -> None:
        if gen != ch.sql_gen or ch.state != "waiting":
            return
        ch.state, ch.cur_due = "idle", None
        if not self._checks_duplicates(ch, ch.relay[ch.sql_pos].ev):  # else the loop decides, now that it is due
            self._execute(ch, ch.relay[ch.sql_pos], ch.cur_read)
        self._kick(ch)

    def _execute(self, ch: Channel, entry: Entry, read: int) -> None:
        ev = entry.ev
        if ev.type == "INCIDENT_EVENT" and M.INCIDENT_IGNORED not in self.mutants:
            self._incident_stop(ch, entry)
            return
        if ev.cost_us and ch.par is not None:  # the worker runs it, not the coordinator
            ch.par.cost += ev.cost_us
            self._finish(ch, ch.sql_gen, entry, read, self.now)
        elif ev.cost_us:
            ch.state = "executing"
            self.at(self.now + ev.cost_us, self._finish, ch, ch.sql_gen, entry, read, self.now)
        else:
            self._finish(ch, ch.sql_gen, entry, read, self.now)

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
        self.emit("apply", ch.node.id, source=entry.source, **MS.tagged(ch.connection), **_event_fields(ev, entry.group_id), read=read, begin=begin,
                  relay_file=entry.file, relay_pos=entry.pos)
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
            self._advance_group(ch, entry)
        elif ev.last or (ev.trx is None and not (inside and M.ROTATE_MID_GROUP not in self.mutants)):
            # A fake Rotate, artificial FDE or Gtid_list after a reconnect inside a group moves only
            # the event position, never the group's (Rotate_log_event::do_update_pos: "we don't want
            # to touch the coordinates which correspond to the beginning of the transaction").
            self._end_group(ch, entry)
        elif ev.trx is not None:
            ch.applied_in_group += 1
        if ch.state == "executing":
            ch.state = "idle"
            self._kick(ch)

    def _advance_group(self, ch: Channel, entry: Entry) -> None:
        """The SQL thread is past a group (applied or skipped): the position relay-log.info keeps."""
        ch.group_start = ch.sql_pos
        ch.applied_in_group = 0
        ch.engine_pos = None  # relay-log.info and InnoDB agree again
        if entry.master_end:
            ch.group_master_file, ch.group_master_pos = entry.master_file, entry.master_end
        self._write_relay_log_info(ch)

    def _end_group(self, ch: Channel, entry: Entry) -> None:
        ev = entry.ev
        first = ch.group_start
        if ev.trx is not None and ch.node.log_slave_updates and self._strict(ch.node) and (
                refused := self._strict_refusal(ch.node, ev.gtid)):
            # the group's binlog write fails at its commit: rolled back, the SQL thread stops there
            ch.last_sql_errno, ch.last_sql_error = DOM.ER_GTID_STRICT_OUT_OF_ORDER, refused
            self._stop_sql(ch, "error", statement=False, errno=ch.last_sql_errno, message=refused,
                           relay_file=ch.relay[first].file, relay_pos=ch.relay[first].pos)
            return
        if ev.trx is not None and ch.node.rpl_hierarchical:
            self.hierarchy.commit(ch, entry, first)
            return
        before = (ch.group_master_file, ch.group_master_pos)
        self._advance_group(ch, entry)
        if ev.trx is None:
            return
        node = ch.node
        why = FL.replica_filter(node.variables, ev.table, ev.skip)
        if why:  # applied, with its delay, as a no-op: the rule filtered its table inside the events' apply
            self._filtered(node, ev, why)
            if node.domain_owner:
                self._release_domain(ch)
            return
        if ch.par is not None:  # queued to a worker, which commits it later (model/parallel.py)
            domain = F.parse_gtid(ev.gtid)[0] if ev.gtid and self.mech.gtid_domains else 0  # MySQL: one stream
            g = ch.par.queue(self.now, first, ch.sql_pos - 1, before, domain, M.COMMIT_ORDER_LOST not in self.mutants)
            self.at(g.commit_at, self._worker_commit, ch, ch.par, g, node.incarnation)
            self._write_relay_log_info(ch)
            return
        self._commit_group(ch, first, ch.sql_pos)

    def _commit_group(self, ch: Channel, first: int, stop: int, **worker: Any) -> None:
        """The replica commits the group relay[first:stop]: the GTID position, the engine, its binlog."""
        node, ev = ch.node, ch.relay[stop - 1].ev
        node.slave_gtids[F.parse_gtid(ev.gtid)[0]] = ev.gtid
        node.executed.add(ev.gtid)
        if node.domain_owner:
            self._release_domain(ch)
        self._engine_commit(node, ev.trx, ev.gtid, **worker)
        if node.log_slave_updates:
            ict = self._local(node, self.now) if node.commit_timestamps else None
            group = [replace(e.ev, ict=ict, ict_off=node.offset) for e in P.own_events(ch.relay[first:stop])]
            self._write_binlog(node, group)

    def _worker_commit(self, ch: Channel, par: PA.Applier, g: PA.Group, incarnation: int, kick: bool = True) -> None:
        """A worker commits its group (a crash since rolled it back); the low-water mark moves past
        the committed head of the queue and relay-log.info follows it."""
        if g.committed or g.given_up or ch.par is not par or ch.node.incarnation != incarnation:
            return
        g.committed = True
        self._commit_group(ch, g.first, g.last + 1, worker=g.worker, start=g.start)
        for done in par.retire():
            ev = ch.relay[done.last].ev
            if ev.when and (ch.last_master_timestamp is None or ev.when > ch.last_master_timestamp[0]):
                ch.last_master_timestamp = (ev.when, ev.when_off)
        self._write_relay_log_info(ch)
        if ch.sql_running and kick:  # not while the SQL thread stops (it drains its workers)
            self._kick(ch)

    def _drain_workers(self, ch: Channel, statement: bool) -> None:
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
        given_up = [g for g in queued if g.start > self.now] if statement and self.mech.texts == X.MARIADB else []
        for g in queued:
            if g not in given_up:
                self._worker_commit(ch, par, g, ch.node.incarnation, kick=False)
        for g in sorted(given_up, key=lambda g: g.first):
            g.given_up = True
            ev = ch.relay[g.last].ev
            self.emit("rollback", ch.node.id, trx=ev.trx, gtid=ev.gtid, reason="stop")
        if given_up:
            first = min(given_up, key=lambda g: g.first)
            par.queued = []
            ch.group_start = first.first
            ch.group_master_file, ch.group_master_pos = first.before
            self._write_relay_log_info(ch)

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
            self._filtered(ch.node, ev, filtered)
        else:
            self.emit("skip", ch.node.id, trx=ev.trx, gtid=ev.gtid, reason=reason, events=passed, **MS.tagged(ch.connection))
        self._advance_group(ch, ch.relay[i])
        return True

    def _filtered(self, node: Node, ev: Event, why: str) -> None:
        """The SQL thread passed a group a filter kept from the engine. Its GTID still moves the GTID
        position: the group ends without committing anything, and rpl_slave_state::
        record_and_update_gtid (sql/rpl_gtid.cc) records a GTID its group did not record, from
        Relay_log_info::stmt_done (sql/rpl_rli.cc). Nothing goes to the replica's own binlog: the
        filtered events left its binlog cache empty."""
        self.emit("filtered", node.id, trx=ev.trx, gtid=ev.gtid, reason=why)
        if ev.gtid:
            node.executed.add(ev.gtid)
            node.slave_gtids[F.parse_gtid(ev.gtid)[0]] = ev.gtid

    def _until_reached(self, ch: Channel) -> bool:
        u = ch.until
        if not u:
            return False
        if u.get("sql_after_mts_gaps"):
            # MySQL's Until_mts_gap::check_before_dispatching_event (sql/rpl_replica_until_options.cc):
            # the coordinator stops before the next event once mts_recovery_group_cnt is 0, every
            # group of MTS recovery's range gone through (the gaps skipped, the others applied)
            return ch.par is None or not ch.par.recovered
        here = (ch.group_master_file, ch.group_master_pos)
        e = ch.relay[ch.sql_pos] if ch.sql_pos < len(ch.relay) else None
        if e is not None and e.master_end:
            # The servers test the next event's own start in the master's binlog (exec_relay_log_event:
            # log_pos - data_written outside a transaction): after a GTID connect that skipped another
            # domain's groups the relay log has holes, and the last group's end is not where this one starts.
            here = max(here, (e.master_file, e.master_end - e.ev.size))
        return here >= (u["master_log_file"], u["master_log_pos"])

    # -- relay-log.info -----------------------------------------------------------------------
    def _group_position(self, ch: Channel) -> tuple[str, int]:
        start = ch.par.queued[0].first if ch.par is not None and ch.par.queued else ch.group_start
        if start < len(ch.relay):
            e = ch.relay[start]
            return e.file, e.pos
        return f"{MS.relay_base(ch.connection)}.{ch.relay_file_no:06d}", ch.relay_pos

    @staticmethod
    def _exec_master(ch: Channel) -> tuple[str, int]:
        """Relay_Master_Log_File/Exec_Master_Log_Pos: the end of the last group committed, or on a
        parallel replica the low-water mark (model/parallel.py)."""
        if ch.par is not None and ch.par.queued:
            return ch.par.queued[0].before
        return ch.group_master_file, ch.group_master_pos

    def _write_relay_log_info(self, ch: Channel) -> None:
        file, pos = self._group_position(ch)
        info = relayinfo.RelayLogInfo(f"./{file}", pos, *self._exec_master(ch), ch.delay)
        ch.rli_content = relayinfo.overwrite(ch.rli_content, info)

    def _read_relay_log_info(self, ch: Channel, boot: bool = False) -> bool:
        node = ch.node
        self.emit("relay_log_info", node.id, content=ch.rli_content, **MS.tagged(ch.connection))
        try:
            info = relayinfo.parse(ch.rli_content)
        except relayinfo.RelayLogInfoError as e:
            self.emit("error", node.id, errno=ER_MASTER_INFO, thread="sql", **MS.tagged(ch.connection),
                      message=f"Could not initialize master info structure; relay-log.info {e}")
            return False
        ch.delay = info.delay
        if not boot and ch.par is not None:  # a parallel run's position is the low-water mark, behind the coordinator's
            ch.group_master_file, ch.group_master_pos = info.master_log_name, info.master_log_pos
        if not boot:
            # Everything relayed is durable; the SQL thread resumes at the recorded group.
            ch.sql_pos = ch.group_start = next(
                (i for i, e in enumerate(ch.relay) if f"./{e.file}" == info.relay_log_name and e.pos == info.relay_log_pos),
                len(ch.relay))
        return True

    # -- SHOW SLAVE STATUS --------------------------------------------------------------------
    def _status(self, ch: Channel) -> None:
        # emit's dict, built once: a sample is no statement (emit's bookkeeping) and the most frequent observation
        self.obs.append({"t": self.now, "kind": "status", "node": ch.node.id, **MS.tagged(ch.connection), **self._status_fields(ch)})

    def _status_fields(self, ch: Channel) -> dict:
        waiting = ch.state == "waiting"
        state = {"stopped": "", "idle": D.STATE_IDLE, "waiting": D.STATE_WAITING, "executing": D.STATE_EXECUTING}[ch.state]
        remaining = self.rule.remaining_s(ch.cur_due, self.now) if waiting else None
        io = "Yes" if ch.connected else ("Connecting" if ch.io_running else "No")
        relay_file, relay_pos = self._group_position(ch)
        fields = {
            "Slave_IO_Running": io,
            "Slave_SQL_Running": "Yes" if ch.sql_running else "No",
            "SQL_Delay": ch.delay,
            "SQL_Remaining_Delay": remaining,
            "Slave_SQL_Running_State": state,
            "Relay_Log_File": relay_file,
            "Relay_Log_Pos": relay_pos,
            "Relay_Master_Log_File": self._exec_master(ch)[0],
            "Exec_Master_Log_Pos": self._exec_master(ch)[1],
            "Master_Log_File": ch.read_master_file,
            "Read_Master_Log_Pos": ch.read_master_pos,
            "Seconds_Behind_Master": self._seconds_behind(ch),
            "Last_SQL_Errno": ch.last_sql_errno,
            "Last_SQL_Error": ch.last_sql_error,
            "Skip_Counter": ch.skip_counter,
            "processlist_state": state if ch.sql_running else None,
            "Gtid_IO_Pos": F.format_pos(ch.io_gtids),
        }
        if ch.node.rpl_hierarchical:
            fields["Exec_Master_Group_ID"] = ch.exec_group_id
            fields["Connect_Using_Group_ID"] = "Yes" if ch.connect_by_id else "No"
        if self.rule.rule == D.WL7318:
            # performance_schema.replication_applier_configuration / _status (WL#7318 F4)
            fields["DESIRED_DELAY"] = ch.delay
            fields["REMAINING_DELAY"] = remaining
        return fields

    def _server_status(self, node: Node) -> None:
        ss = node.semisync
        variables = self._server_variables(node)
        hosts = [ss.slave_host(r.node.id, r.node.server_id, r.semi_sync) for r in node.replicas if r.connected]
        self.emit("server_status", node.id, variables=variables, slave_hosts=hosts)

    @staticmethod
    def _server_variables(node: Node) -> dict:
        """SHOW GLOBAL STATUS's semi-sync counters with the variables the properties read."""
        variables = node.semisync.variables()
        ch = node.channel
        variables["Rpl_semi_sync_slave_status"] = "ON" if ch is not None and ch.io_running and ch.semi_sync else "OFF"
        variables.update(gtid_binlog_pos=F.format_pos(node.binlog_gtids), gtid_slave_pos=F.format_pos(node.slave_gtids),
                         gtid_current_pos=F.format_pos(G.current_pos(node.binlog_gtids, node.slave_gtids, node.server_id)))
        return variables

    # -- expectations (an `expect` op): what a client checking the node sees ----------------------
    def _op_expect(self, node: Node, op: dict) -> None:
        value = getattr(self, f"_shows_{op['show']}")(node, op) if node.up or op["show"] in F.CLIENT_SHOWN else None
        self.emit("observed", node.id, expect=F.expect_where(self.history, op), show=op["show"], value=value)

    def _shows_slave_status(self, node: Node, op: dict) -> dict | None:
        if node.channel is None:  # not a replica: an empty set
            return None
        fields = self._status_fields(node.channel)
        return {k: fields[k] for k in op["fields"] if k in fields}

    def _shows_master_status(self, node: Node, op: dict) -> dict | None:
        if not node.log_bin:  # an empty set
            return None
        fields = self._master_status_fields(node)
        return {k: fields[k] for k in op["fields"] if k in fields}

    def _shows_status(self, node: Node, op: dict) -> dict:
        variables = {k: v for k, v in self._server_variables(node).items() if k[0].isupper()}
        return {k: variables[k] for k in op["fields"] if k in variables}

    def _shows_variables(self, node: Node, op: dict) -> dict:
        """As SHOW GLOBAL VARIABLES shows them (a boolean as ON or OFF), a default where none was set."""
        variables = {**SS.VARIABLES, **node.runtime, **{k: v for k, v in self._server_variables(node).items() if not k[0].isupper()}}
        return {k: ("ON" if variables[k] else "OFF") if isinstance(variables[k], bool) else variables[k]
                for k in op["fields"] if k in variables}

    @staticmethod
    def _binlog_files(node: Node) -> list[str] | None:
        if not node.log_bin:  # ER_NO_BINARY_LOGGING
            return None
        return [f for f in dict.fromkeys(e.file for e in node.binlog) if f not in node.purged]

    def _shows_binary_logs(self, node: Node, op: dict) -> list[str] | None:
        return self._binlog_files(node)

    def _shows_binlog_events(self, node: Node, op: dict) -> list[dict] | None:
        files = self._binlog_files(node) or []
        wanted = F.binlog_number(op["in"]) if "in" in op else None
        name = next((f for f in files if wanted is None or F.binlog_number(f) == wanted), None)
        if name is None:  # ER_ERROR_WHEN_EXECUTING_COMMAND: could not find target log
            return None
        entries = [e for e in node.binlog if e.file == name]
        return F.after_header([{"Event_type": F.EVENT_TYPE_SHOWN.get(e.ev.type, e.ev.type),
                                "Info": _event_info(e, entries)} for e in entries])

    def _shows_result(self, node: Node, op: dict) -> dict | None:
        last = self.last_stmt.get(node.id)
        return None if last is None else {k: last.get(k) for k in ("errno", "warning", "message")}

    @staticmethod
    def _shows_rows(node: Node, op: dict) -> list[str]:
        return sorted(node.visible)

    def _seconds_behind(self, ch: Channel) -> int | None:
        """MariaDB (slave.cc, send_show_master_info_data): NULL unless the IO thread is connected and the
        SQL thread runs; 0 while caught up or before any timestamp; else now - last_master_timestamp -
        clock difference, never negative. MySQL (rpl_replica.cc, show_slave_status_send_data): NULL
        unless the SQL thread runs; caught up is Exec_Master_Log_Pos == Read_Master_Log_Pos, 0 with the
        IO thread connected and NULL without; otherwise the same difference, whatever the IO thread.
        The clock difference is the writer's offset, as the delay rule compensates it (model/delay.py)."""
        if not ch.sql_running:
            return None
        if self.mech.seconds_behind_master == X.MARIADB:
            if not ch.connected:
                return None
            if ch.sql_thread_caught_up:
                return 0
        elif (ch.read_master_file, ch.read_master_pos) == self._exec_master(ch):
            return 0 if ch.connected else None
        if ch.last_master_timestamp is None:
            return 0
        when, off = ch.last_master_timestamp
        return max(0, (self.now - (when * US - off - self.epoch)) // US)


def _event_fields(ev: Event, group_id: int | None = None) -> dict:
    fields = {
        "type": ev.type, "trx": ev.trx, "idx": ev.idx, "last": ev.last, "gtid": ev.gtid,
        "server_id": ev.server_id, "when": ev.when, "ict": ev.ict,
    }
    if group_id is not None:
        fields["group_id"] = group_id
    if ev.incident is not None:
        fields.update(incident=ev.incident, message=ev.message)
    if ev.skip:
        fields["skip_replication"] = True
    if ev.error_code:
        fields["error_code"] = ev.error_code
    return fields


def _binlog_index(source: Node, file: str, pos: int) -> int:
    """The index in the source's binlog of the first event at or after (file, pos): where a dump asked
    for by that position starts."""
    return next((i for i, e in enumerate(source.binlog) if (e.file, e.pos) >= (file, pos)), len(source.binlog))


def _event_info(entry: Entry, entries: list[Entry]) -> str:
    """SHOW BINLOG EVENTS' Info column where the model knows it (MariaDB's wording, log_event_server.cc
    Gtid_log_event::pack_info, Incident_log_event::pack_info and Rotate_log_event::pack_info): a
    group's GTID, BEGIN before it unless the group is one DDL statement; an incident's code; a
    Rotate's next binlog. The statements' text is not modelled."""
    ev = entry.ev
    if ev.type == "GTID_LOG_EVENT":
        xid = any(e.ev.gtid == ev.gtid and e.ev.type == "XID_EVENT" for e in entries)
        return f"{'BEGIN ' if xid else ''}GTID {ev.gtid}"
    if ev.type == "INCIDENT_EVENT":  # Incident_log_event::pack_info: "#<code> (<name>)"
        return f"#{ev.incident} ({I.symbol(ev.incident)})"
    if ev.type == "ROTATE_EVENT":
        number = int(F.binlog_number(entry.file)) + 1
        return f"{entry.file.rpartition('.')[0]}.{number:06d};pos={BINLOG_START}"
    return ""


def simulate(history: dict, config: Config = Config(), system: str = "model") -> tuple[dict, list[dict]]:
    return Simulator(history, config, system).run()
