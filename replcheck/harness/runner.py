"""Run a History on real MariaDB servers in real time and record what an observer sees as a Trace.

    header, obs = run_history(history, scale=0.1)

Time scale: the History's times are virtual; the run happens at `scale` seconds of real time per
virtual second. Every time of the History is scaled (the op fields spec/ops.py declares as times:
op times, statement durations, replica costs, semi-sync timeouts, ...; the header's end and
sampling periods and timeouts), and so is MASTER_DELAY, which a server only
takes in whole seconds: a nonzero delay becomes max(1, round(delay * scale)) s. `scaled_history`
returns the History that actually runs, with its real-time µs and whole-second delays; the trace
is in that History's time (µs of real time since the run began), so the properties and the
reference model judge exactly what ran. Run start is aligned to a whole second of the wall clock
(epoch_us), so event timestamps (whole seconds) fall where the scaled History puts them.

Observation is by polling each node (one client session a poll): which client transactions are
present and how often, SHOW SLAVE STATUS with the SQL thread's SHOW PROCESSLIST state, the
semi-sync status variables and the gtid positions, and new lines of the error log. An IO thread
that a sample finds stopped by an error (Last_IO_Errno, e.g. 1236 for a purged binlog) is one
`error` observation with thread io per stop. PURGE BINARY LOGS records SHOW BINARY LOGS before
and after it (purged, remaining); a binlog it removes is read just before, so its events stay
in the trace. The header's resolution_us is the largest gap measured between two polls of one
node: the timing uncertainty of every observed instant. At the end, once replication is quiet:
the binlogs (SHOW BINLOG EVENTS, the header timestamp read from the file at each event's
position) and one `data` observation per node counting each transaction's row.

Each poll of a replica first reads what was written to its relay logs since the last read
(replcheck.harness.relaylog, with mariadb-binlog), as `relay` observations stamped when the read
ended; so do the runner's statements that may purge relay logs, and restarts. What a poll cannot
see is declared in the header's `unobserved` (acks; relay-log writes when a relay log could not be
read whole, the gap in the notes), so the properties that need it report not_exercised.

Multi-source (named connections, MariaDB's connection_name): every channel is a Link, (replica,
connection_name), None for a replica's one unnamed connection, and what belongs to a channel is kept
per Link: its relay proxy, its relay logs (relay-<name>.NNNNNN), its samples (a row of SHOW ALL
SLAVES STATUS each, tagged `connection` as the models' are) and its SQL thread's stops; statements
name the connection they address. How each op runs is the harness's own table (ops.py, RUNS):
an administrative statement (statements.py builds it) or a method of a part of the run. Ops a
real server cannot do (REFUSED, LIMITS) are refused before anything starts (RunnerError, one line
naming the op). No SQL text from a History is executed: statements are built from validated
fields only (integers, whitelisted names and enum words).

Times the servers record themselves are kept as intervals of trace time, with their resolution:
an error-log line's `logged` and an event's `written` (its header timestamp, whole seconds of its
node's clock less that clock's offset; a recorded incident's: its statement's start and return),
[lo, hi).

The run's parts, each a module: ops.py (what each op does on a server), faults.py (crashes,
restarts, cuts, lost acks), observe.py (polling, relay and error logs while it runs), collect.py
(the binlogs, applies and rows after it), stuck.py (a statement the server does not answer: observed,
and the run's ops end there); this Runner holds the state they share and sequences them.
"""
from __future__ import annotations

import copy
import re
import threading
import time
from typing import Callable

from replcheck.spec import vocabulary as V
from replcheck.harness import clock, groups, stuck
from replcheck.harness.collect import Collector
from replcheck.harness.errors import NoAnswer
from replcheck.harness.faults import Faults
from replcheck.harness.binaries import find_server
from replcheck.harness.mariadb import Cluster
from replcheck.harness.observe import Link, Observer
from replcheck.harness.ops import CR_SERVER_LOST, DOWN_MESSAGE, RUNS, Ops, check_server, check_supported
from replcheck.harness.proxy import ChannelProxy, ClockExchange
from replcheck.harness.relaylog import RelayLogs
from replcheck.harness.statements import (CACHE_BUFFER_BYTES, CACHE_BYTES, INCIDENT_TABLE, SENTINEL, RunnerError, admin_statement,
                                          ident, incident_db, trx_statement)
from replcheck.harness.timescale import DEFAULT_EPOCH_US, largest_scale, scale_for, scaled_history
from replcheck.spec import ops as O
from replcheck.spec.formats import SEMISYNC_TIMEOUT_DEFAULT_MS, US

__all__ = ["Runner", "RunnerError", "admin_statement", "check_server", "check_supported", "largest_scale", "run_history",
           "scale_for", "scaled_history", "trx_statement"]

ORDER = {"visible": 0, "binlog": 1, "relay": 1, "apply": 2, "status": 4, "server_status": 5, "log": 6, "data": 7}


# What polling cannot see: acks; relay-log writes when a relay log could not be read whole; binlog
# syncs and what crash recovery cut and resolved (a kill -9 leaves them to the server's own start);
# which groups a replica's SQL thread filtered (it commits nothing, only gtid_slave_pos moves).
UNOBSERVED = ["relay", "ack", "binlog_sync", "recovery", "filtered"]


# Semi-sync in play (settings, lose_acks): the channels' relays then see each ack on its way to the
# source (and lose those lose_acks asks for).
SEMI_SYNC = re.compile(r"^rpl_semi_sync_")


SCHEMA = ("CREATE DATABASE rc; "
          # No primary key: a transaction applied twice shows as two rows, not as an error. u is unique but
          # NULL in every transaction's row: only a row with the sentinel's u collides (ER_DUP_ENTRY).
          "CREATE TABLE rc.r (k INT NOT NULL, part INT NOT NULL, pad VARCHAR(10000) NOT NULL DEFAULT '', u INT NULL, "
          "KEY (k), UNIQUE KEY (u)) ENGINE=InnoDB; "
          "CREATE TABLE rc.m (k INT NOT NULL, part INT NOT NULL, pad VARCHAR(10000) NOT NULL DEFAULT '', u INT NULL, "
          "KEY (k), UNIQUE KEY (u)) ENGINE=MyISAM; "
          f"INSERT INTO rc.r VALUES (-1, -1, '', {SENTINEL}); INSERT INTO rc.m VALUES (-1, -1, '', {SENTINEL}); "
          # What a recorded incident's statement writes (statements.incident_statement): no transaction's rows.
          f"CREATE TABLE rc.x {INCIDENT_TABLE}")


# An op that starts later than this past its time (a slow statement before it, a loaded machine)
# moves every later op by as much: the History's distances between ops are what its scenario needs
# (a commit, then 200 ms for it to wait, then the crash), and squeezing them would test another one.
# Less is the sleep's own jitter, and moves nothing.
SLIP_MIN_US = 20_000

class Runner:
    """One History on one Cluster: the state of the run, shared by its parts (ops, faults, observer,
    collector), which it sequences. `run()` returns (header, observations) of the Trace."""

    def __init__(self, history: dict, *, scale: float = 0.1, basedir: str | None = None, tmpdir: str | None = None,
                 poll_us: int = 40_000, quiet_s: float = 8.0, name: str | None = None,
                 progress: Callable[[str], None] | None = None, verbose: bool = False):
        self.name = name or history["header"].get("name", "history")
        check_supported(history)
        self.original = history
        self.history = scaled_history(history, scale)
        self.scale, self.poll_us, self.quiet_s = scale, poll_us, quiet_s
        self.basedir, self.tmpdir, self.verbose = basedir, tmpdir, verbose
        self.progress = progress or (lambda msg: None)
        topo = self.history["header"]["topology"]
        self.node_ids = [n["id"] for n in topo["nodes"]]
        self.server_ids = {n["id"]: n.get("server_id", i + 1) for i, n in enumerate(topo["nodes"])}
        self.by_server_id = {sid: n for n, sid in self.server_ids.items()}
        # Each channel by its link (replica, connection_name), None for the one unnamed connection: a
        # multi-source replica's connections each have their own relay, relay logs, SQL thread and samples.
        self.sources: dict[Link, str] = {(c["replica"], c.get("connection")): c["source"] for c in topo.get("channels", [])}
        self.named = {r for r, conn in self.sources if conn is not None}  # replicas with named connections
        # when a link's source took effect, for a link repointed (failover, rejoin, CHANGE MASTER TO
        # MASTER_HOST): what the replica held before came from another source
        self.source_since: dict[Link, int] = {}
        self.incident_dbs = {n["id"]: incident_db(n.get("variables") or {}) for n in topo["nodes"]}
        self.delays = {(c["replica"], c.get("connection")): c.get("delay", 0) for c in topo.get("channels", [])}
        # A History that filters: commits say which table they wrote, as the models' do.
        self.filtering = V.filters(topo["nodes"], self.history["ops"])
        self.trx_names: list[str] = []  # k -> the History's name
        self.origin_of: dict[int, str] = {}
        self.gtid_of: dict[int, str] = {}
        self.seen: dict[tuple[str, int], int] = {}  # (node, k) -> first time present
        self.seen_pos: dict[tuple[str, int], tuple[str, int]] = {}
        # (node, k, part) -> first time present and the SQL thread's relay-log place then: the row of
        # a later statement of a MyISAM transaction (a replica with named connections: not followed)
        self.seen_parts: dict[tuple[str, int, int], tuple[int, tuple[str, int]]] = {}
        self.relay_purges: dict[Link, list[int]] = {}  # when each channel's relay logs were thrown away
        self.seen_src: dict[tuple[str, int], str | None] = {}  # the node's source then (failover changes it)
        self.commits: dict[int, dict] = {}  # k -> its commit observation
        self.binlog_pos: dict[str, list[tuple[int, dict[int, str]]]] = {}  # node -> (poll time, gtid_binlog_pos by domain)
        self.returned: dict[int, tuple[int, int | None]] = {}  # k -> (commit return time, errno)
        self.obs: list[tuple[int, int, dict]] = []
        self.workers: list[threading.Thread] = []  # the sessions of client transactions
        self.seq = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.busy: set[str] = set()  # nodes being crashed or restarted: not polled
        self.node_locks = {n: threading.Lock() for n in self.node_ids}  # a sample or a statement at a time
        # a STOP SLAVE of their SQL thread runs, their node sampled meanwhile: the status columns of the threads it stops
        self.stopping: dict[Link, tuple[str, ...]] = {}
        self.last_poll: dict[str, int] = {}
        self.log_offsets: dict[str, int] = {}
        self.io_error: dict[Link, tuple[int, str]] = {}  # the IO thread's error last emitted
        self.binlog_tool = ""  # mariadb-binlog
        self.relay_logs: dict[Link, RelayLogs] = {}  # its relay logs, read as they grow
        self.max_gap = 0
        self.cluster: Cluster | None = None
        self.proxies: dict[Link, ChannelProxy] = {}  # the relay on each channel
        self.acks_seen = False  # semi-sync in play: the relays report the acks
        # (source, replica, exchange in the replica's clock, its offset then in s), as relayed
        self.clock_queries: list[tuple[str, str, ClockExchange, float]] = []
        self.seen_again: dict[tuple[str, int], list[int]] = {}  # on a multi-source replica: when each further copy of a row showed
        self.notes: list[str] = []
        self.t0 = self.wall_t0 = 0.0
        self.epoch_us = 0
        self.binlog_resets: dict[str, list[int]] = {}  # node -> when each RESET MASTER on it began
        self.downs: dict[str, list[int]] = {}  # node -> when each crash or shutdown of it ended
        self.incidents: dict[str, list[dict]] = {}  # node -> each record_incident's statement observation
        self.semi_sync_masters = _semi_sync_masters(self.history)
        self.ack_timeouts_s = _ack_timeouts_s(self.history, self.semi_sync_masters)
        # node -> its clock's offset (µs, scaled) now: the nodes whose clock is offset or stepped run on one of their own
        stepped = {op["node"] for op in self.history["ops"] if op["op"] == "clock_step"}
        self.clock_offsets = {n["id"]: n.get("clock_offset_us", 0) for n in topo["nodes"]
                              if n.get("clock_offset_us") or n["id"] in stepped}
        self.clock_steps: dict[str, list[tuple[int, int]]] = {}  # node -> (trace time, its offset from then on)
        self.set_timestamp: set[str] = set()  # transactions whose events carry SET TIMESTAMP's time, not the clock's
        self.read_seen: dict[tuple[str, int], int] = {}  # (node, trx) -> the first read op that saw its row
        self.sql_started: set[Link] = set()  # a START SLAVE started their SQL thread since their last sample
        self.sql_stopped: dict[Link, int] = {}  # when their SQL thread last stopped (a sql_stop observation)
        self.until: set[Link] = set()  # their SQL thread runs under START SLAVE ... UNTIL
        self.slip_us = 0  # how much later than the History every op from here on starts (SLIP_MIN_US)
        self.slipped: list[list[int]] = []  # [op index in the History, slip_us] where the slip grew
        self.relay_held: dict[str, list[list[int]]] = {}  # replica -> [from, to] where its relay held the stream
        self.cut_short: dict | None = None  # where a statement not answered ended the ops (stuck.py)
        self.ops, self.faults = Ops(self), Faults(self)
        self.observer, self.collector = Observer(self), Collector(self)

    def now(self) -> int:
        return max(0, int((time.monotonic() - self.t0) * US))

    def emit(self, kind: str, node: str, t: int | None = None, **fields) -> dict:
        o = {"t": self.now() if t is None else t, "kind": kind, "node": node, **fields}
        with self.lock:
            self.seq += 1
            self.obs.append((o["t"], self.seq, o))
            if kind == "sql_stop":
                self.sql_stopped[(node, fields.get("connection"))] = o["t"]
        return o

    def run(self) -> tuple[dict, list[dict]]:
        server = find_server(self.basedir)
        check_server(self.original, server)
        self.binlog_tool = server.binlog
        options = []
        if any(op["op"] == "record_incident" or (op["op"] == "trx" and op.get("binlog_failure") == "cache_overflow")
               for op in self.history["ops"]):
            # Small caches, so OVERFLOW_ROWS rows overflow them and one row does not.
            options += [f"--max-binlog-stmt-cache-size={CACHE_BYTES}", f"--max-binlog-cache-size={CACHE_BYTES}",
                        f"--binlog-stmt-cache-size={CACHE_BUFFER_BYTES}", f"--binlog-cache-size={CACHE_BUFFER_BYTES}"]
        for link in self.sources:
            self.add_relay(link)
        self.acks_seen = _semi_sync(self.history)
        try:
            # A connection's source is another for each of a replica's connections: (source, replica) names one relay.
            self.cluster = Cluster(self.history["header"]["topology"], server=server, tmpdir=self.tmpdir, options=options,
                                   verbose=self.verbose, routes={(self.sources[k], k[0]): p.port for k, p in self.proxies.items()},
                                   clocks=dict(self.clock_offsets),
                                   small_disks=sorted({op["node"] for op in self.history["ops"] if op["op"] == "disk_full"}),
                                   repl_users=[op["master_user"] for op in self.history["ops"] if "master_user" in op])
            with self.cluster:
                self._run()
        finally:
            for proxy in self.proxies.values():
                proxy.close()
        self._emit_clock_queries()
        return self._header(server.version), self._ordered()

    def _run(self) -> None:
        self._set_up()
        # Time 0 on a whole second of the wall clock: event timestamps fall where the History puts them.
        time.sleep(1 - (time.time() % 1))
        mono, wall = time.monotonic(), time.time()
        self.wall_t0 = float(int(wall))  # trace time 0 is exactly the epoch, however late the sleep woke
        self.t0 = mono - (wall - self.wall_t0)
        self.epoch_us = int(wall) * US
        self._rebase_timestamps()
        for n in self.node_ids:  # what the servers logged while starting, at time 0
            self.observer.tail_log(n, 0)
        for n in dict.fromkeys(r for r, _ in self.sources):  # the SQL threads the cluster started: with workers or not
            self.ops.workers(n, 0)
        poller = threading.Thread(target=self.observer.poll_loop, name="replcheck-poller", daemon=True)
        poller.start()
        try:
            self._run_ops()
            if self.cut_short is None:
                self._sleep_until(self.history["header"].get("end_us", 0))
            self.faults.free_disks()
            for w in self.workers:
                w.join(timeout=max(1.0, self.quiet_s))
            if self.cut_short is None:  # a stuck node never gets quiet
                self.observer.wait_quiet()
        finally:
            self.stop.set()
            poller.join(timeout=10)
        self.observer.poll_all()
        for link in self.relay_logs:
            self.observer.read_link(link, final=True)
        self.collector.collect_binlogs()
        self.collector.emit_data(self.now())

    def add_relay(self, link: Link) -> ChannelProxy:
        """The channel's relay (proxy.py): every channel runs through one (each connection of a
        multi-source replica), so its clock query is steadied (or made late) whatever the History does,
        a cut falls on its connection alone and its acks are seen. It connects to the channel's source
        at each connect: a failover or a rejoin that repoints the channel keeps it (Cluster.route)."""
        replica = link[0]
        if link in self.proxies:  # a promoted replica rejoining: its relay of before
            self.cluster.route(self.sources[link], replica, self.proxies[link].port)
            return self.proxies[link]
        late = any(c["replica"] == replica and c.get("connection") == link[1] and c.get("clock_reply") == "next_second"
                   for c in self.history["header"]["topology"].get("channels", []))
        self.proxies[link] = proxy = ChannelProxy(
            lambda: self.cluster.port(self.sources[link]), on_ack=lambda f, p: self._ack(link, f, p),
            on_lost=lambda f, p: self.notes.append(f"lose_acks: the relay of {self.sources.get(link)}->{replica} "
                                                   f"dropped {replica}'s ack of ({f}, {p}) at {self.now()} µs"),
            on_clock=lambda x: self._clock_query(self.sources.get(link), replica, x),
            on_cut=lambda x: self.faults.io_cut(self.sources.get(link), link, x), late=late,
            on_hold=lambda s: self._relay_hold(replica, s),
            # the replica's own clock: its IO thread takes clock_diff_with_master by it (clock.py)
            clock=lambda: time.time() + self.clock_offsets.get(replica, 0) / US)
        if self.cluster is not None:
            self.cluster.route(self.sources[link], replica, proxy.port)
        return proxy

    def _relay_hold(self, replica: str, seconds: float) -> None:
        """The replica's relay held part of its stream `seconds` until now (from the History's start on)."""
        if not self.t0:
            return
        to = self.now()
        with self.lock:
            self.relay_held.setdefault(replica, []).append([max(0, to - int(seconds * US)), to])

    def _ack(self, link: Link, file: str, pos: int) -> None:
        """An ack on its way to the source (the relay forwarded it): the source has it no earlier."""
        if self.t0:  # not the acks of the set-up, before time 0
            self.emit("ack", self.sources.get(link), replica=link[0], file=file, pos=pos)

    def _clock_query(self, source: str, replica: str, x: ClockExchange) -> None:
        """The IO thread's clock query at a connect, as its relay passed it: what clock_diff_with_master
        it gives the replica. Kept until the run ends: the set-up's connects come before time 0 (at 0 then)."""
        with self.lock:
            self.clock_queries.append((source, replica, x, self.clock_offsets.get(replica, 0) / US))

    def _emit_clock_queries(self) -> None:
        for source, replica, x, offset in self.clock_queries:  # each time read on the replica's clock
            asked, answered, delivered = (max(0, round((c - offset - self.wall_t0) * US)) for c in (x.asked, x.answered, x.delivered))
            self.emit("clock_query", replica, delivered, source=source, asked=asked, answered=answered,
                      master_unix_timestamp=x.master_unix_timestamp, clock_diff_with_master=x.clock_diff_with_master,
                      held=x.late)

    def _rebase_timestamps(self) -> None:
        """SET TIMESTAMP values are seconds of the History's epoch (scaled_history scaled their
        distance from it): the same distance from this run's epoch. The History that ran records it."""
        hdr = self.history["header"]
        old = hdr.get("epoch_us", DEFAULT_EPOCH_US) // US
        for op in self.history["ops"]:
            for place, key in O.op_times(op, O.UNIX_S):
                place[key] = max(1, self.epoch_us // US + place[key] - old)
        hdr["epoch_us"] = self.epoch_us

    def _set_up(self) -> None:
        c = self.cluster
        for n in self.node_ids:
            # On every node, unlogged: the binlogs then hold only the History's transactions.
            c.sql(n, "SET sql_log_bin = 0; " + SCHEMA)
            if (db := self.incident_dbs.get(n, "rc")) != "rc":  # the database its binlog filters let through
                c.sql(n, f"SET sql_log_bin = 0; CREATE DATABASE IF NOT EXISTS {ident(db)}; CREATE TABLE {ident(db)}.x {INCIDENT_TABLE}")

    def _sleep_until(self, at_us: int) -> bool:
        """Sleeps until at_us plus the slip so far; True when it was already too late (the slip grew)."""
        late = self.now() - (at_us + self.slip_us)
        if late < 0:
            groups.wait(-late / US)
        elif late > SLIP_MIN_US:
            self.slip_us += late
            return True
        return False

    def _run_ops(self) -> None:
        ops = sorted(enumerate(self.history["ops"]), key=lambda x: (x[1]["at"], x[0]))
        for i, op in ops:
            self.ops.await_commits(op)
            if self._sleep_until(op["at"]):
                self.slipped.append([i, self.slip_us])
            self.progress(f"{self.name}: {op['at'] / US:.2f} s {op['op']} on {op['node']}")
            try:
                self._do(op)
            except stuck.Cut as cut:
                self.cut_short = {**cut.record, "op_index": i}
                return

    def _do(self, op: dict) -> None:
        """The op as the harness's table (harness/ops.py, RUNS) says a server runs it."""
        part, method = RUNS[op["op"]].split(".")
        if part == "faults" and not O.OPS[op["op"]].while_down and not self.cluster.is_running(op["node"]):
            # A fault aimed at a node already down fails as the models answer any op sent to one
            # (model/sim/kernel.py, op): seed 10's History 15 shut down A, crashed a moment before.
            # A statement answers so by itself (Ops.statement); a fault would act on no server.
            self.emit("error", op["node"], op=op["op"], errno=CR_SERVER_LOST, message=DOWN_MESSAGE)
            return
        start = self.now()
        try:
            getattr(getattr(self, part), method)(op)
        except NoAnswer as e:  # one of the harness's own statements for the op (a restart's SHOW SLAVE STATUS)
            stuck.not_answered(self, e.node, op["op"], start, {"statement": e.statement[:200]}, e)

    def instant(self, unix_time: str, node: str, within: tuple[int, int] | None = None) -> int:
        """A node's CLOCK reading as trace time: the machine's clock, less the offset the node's clock
        ran at when it was read (clock.py). A transaction's first reading may come before a step its
        commit comes after (the steps are made under the node's lock, which a sample holds, not a
        client's transaction): the offset in force then, not now (seed 2's History 137: A's clock stepped
        an hour ahead while t2 ran, and the current offset put t2's start at 0). After a step back, a
        reading both offsets fit is the one nearest `within`, the trace times the client sent the
        statement and saw its answer (seed 10's History 154: t9 ran from 9.4 to 9.9 s and A's clock
        stepped 2 s back at 9.95 s; taken as the later, its commit returned at 11.9 s); else the later."""
        raw = round((float(unix_time) - self.wall_t0) * US)
        steps = self.clock_steps.get(node, [])
        offsets = [self.history_offset(node)] + [o for _, o in steps]
        bounds = [-2**62] + [t for t, _ in steps] + [2**62]  # the trace times each offset held over
        held = [raw - o for o, a, b in zip(offsets, bounds, bounds[1:]) if a <= raw - o < b]
        if within is not None and len(held) > 1:
            held = [min(held, key=lambda t: (max(within[0] - t, t - within[1], 0), -t))]
        return max(0, held[-1] if held else raw - self.clock_offsets.get(node, 0))

    def server_interval(self, node: str, unix_us: int, resolution_us: int) -> list[int]:
        """A time the server itself recorded (a binlog event's timestamp, an error-log line's) as the
        interval of trace time it lies in, [lo, hi): in whole seconds, a record stamped S was made in
        [S, S + 1 s) of the node's clock, less the offset that clock ran at then. After a step back,
        the same reading came twice: the interval then spans both."""
        steps = self.clock_steps.get(node, [])
        offsets = [self.history_offset(node)] + [o for _, o in steps]
        bounds = [-2**62] + [t for t, _ in steps] + [2**62]  # the trace times each offset held over
        spans = [(unix_us - self.epoch_us - o, unix_us - self.epoch_us - o + resolution_us) for o in offsets]
        held = [(lo, hi) for (lo, hi), a, b in zip(spans, bounds, bounds[1:]) if lo < b and a < hi] or spans[-1:]
        return [min(lo for lo, _ in held), max(hi for _, hi in held)]

    def history_offset(self, node: str) -> int:
        """The node's clock offset at the start of the run, before any step (scaled, as it ran)."""
        return next((n.get("clock_offset_us", 0) for n in self.history["header"]["topology"]["nodes"] if n["id"] == node), 0)

    def _header(self, version: str) -> dict:
        topo = copy.deepcopy(self.history["header"]["topology"])
        for i, n in enumerate(topo["nodes"]):
            n.setdefault("server_id", i + 1)
            n["delay_rule"] = "wl344"
            n["commit_timestamps"] = False
            n.setdefault("clock_offset_us", 0)
        return {"schema": "replcheck.trace/1", "system": f"mariadb:{version}", "history": self.name,
                "epoch_us": self.epoch_us, "resolution_us": max(self.max_gap, self.poll_us), "server_version": version,
                "clock_read_lag_us": clock.read_lag_us(),
                "time_scale": self.scale, "unobserved": self._unobserved(), "topology": topo,
                "notes": self._notes(), **({"slipped": self.slipped} if self.slipped else {}),
                **({"cut_short": self.cut_short} if self.cut_short else {}),
                **({"relay_held": self.relay_held} if self.relay_held else {})}

    def _relay_gaps(self) -> list[str]:
        return [g for logs in self.relay_logs.values() for g in logs.gaps]

    def _unobserved(self) -> list[str]:
        """Acks are seen when semi-sync is in play (every channel runs through its relay all along, a
        repointed one too); relay-log writes when every relay log was read whole."""
        return [k for k in UNOBSERVED if (k != "ack" or not self.acks_seen)
                and (k != "relay" or self._relay_gaps())]

    def _notes(self) -> list[str]:
        """How the run differs from the History's ops as the models do them."""
        notes = []
        notes.append("each channel ran through a loopback relay (replcheck.harness.proxy) that passes the IO thread's "
                     "clock query on inside a second, so its whole-second clock_diff_with_master is 0 unless the History "
                     "asks for a late answer (clock_reply)")
        if self.acks_seen:
            notes.append("semi-sync: an ack is observed when the channel's relay passed it on, so the source processed "
                         "it no earlier")
        notes += [f"relay not observed: {g}" for g in self._relay_gaps()]
        if self.slipped:
            i, slip = self.slipped[-1]
            notes.append(f"ops started late (a slow statement or a loaded machine): every op from op {self.slipped[0][0]} "
                         f"on was moved to keep its distance from the one before, {slip} µs in all by op {i} (header "
                         f"slipped; the History that ran has these times)")
        if self.cut_short:
            notes.append(f"the run ended at op {self.cut_short['op_index']}: {self.cut_short['reason']} (header "
                         f"cut_short); no later op ran, and the binlogs and rows were read then")
        return notes + self.notes

    def _ordered(self) -> list[dict]:
        """Time order; within one instant what happened before the samples that saw it, and a
        record_incident's statement before the incident it wrote."""
        def order(o: dict) -> int:
            return -1 if o["kind"] == "stmt" and o.get("op") == "record_incident" else ORDER.get(o["kind"], 3)
        with self.lock:
            return [o for _, _, o in sorted(self.obs, key=lambda x: (x[0], order(x[2]), x[1]))]



def _semi_sync(history: dict) -> bool:
    """Semi-sync is in play: configured on a node, set during the run, or acks to lose."""
    return (any(SEMI_SYNC.match(name) and value for n in history["header"]["topology"]["nodes"]
                for name, value in n.get("variables", {}).items())
            or any(op["op"] == "lose_acks" or (op["op"] == "set_global" and SEMI_SYNC.match(op["variable"]))
                   for op in history["ops"]))




def _semi_sync_masters(history: dict) -> set[str]:
    """Nodes whose commits may wait for acks: semi-sync master enabled at start or by SET GLOBAL."""
    return ({n["id"] for n in history["header"]["topology"]["nodes"] if n.get("variables", {}).get(O.SEMI_SYNC_MASTER)}
            | {op["node"] for op in history["ops"] if op["op"] == "set_global" and op["variable"] == O.SEMI_SYNC_MASTER})


def _ack_timeouts_s(history: dict, masters: set[str]) -> dict[str, float]:
    """Per semi-sync master, the longest rpl_semi_sync_master_timeout it has during the run (the
    server's default 10 s where none is set), in seconds: how long one of its commits may wait."""
    longest = {node: SEMISYNC_TIMEOUT_DEFAULT_MS for node in masters}
    for n in history["header"]["topology"]["nodes"]:
        if n["id"] in masters and isinstance(ms := n.get("variables", {}).get(O.SEMI_SYNC_TIMEOUT), int):
            longest[n["id"]] = max(longest[n["id"]], ms)
    for op in history["ops"]:
        if op["op"] == "set_global" and op["variable"] == O.SEMI_SYNC_TIMEOUT and op["node"] in masters and isinstance(op["value"], int):
            longest[op["node"]] = max(longest[op["node"]], op["value"])
    return {node: ms / 1000 for node, ms in longest.items()}


def run_history(history: dict, **kwargs) -> tuple[dict, list[dict]]:
    return Runner(history, **kwargs).run()
