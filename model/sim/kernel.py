"""The simulator's kernel: the virtual clock, the event queue, observations, status sampling, the
dispatch of a History's ops (spec/ops.py) to the component methods model/ops.py names, and a run
that can be extended with ops and forked.
"""
from __future__ import annotations

import heapq
import io
import pickle
import struct
from operator import attrgetter
from collections import Counter
from typing import Any, Callable

from replcheck.spec import formats as F
from replcheck.spec import vocabulary as V
from replcheck.spec.vocabulary import last_sample

from .. import delay as D
from .. import domains as DOM
from .. import filter as FL
from .. import groupid as G
from .. import multisource as MS
from .. import recovery as R
from replcheck.spec.ops import OPS

from ..ops import METHODS
from .component import Hooks
from .state import (CR_SERVER_LOST, DEFAULT_EPOCH_US, Channel, Node, Config)
from .source import Source
from .dump import Dump
from .receiver import Receiver
from .applier import Applier
from .workers import Workers
from .rli import Rli
from .lifecycle import Lifecycle
from .admin import Admin
from .status import Status
from .hierarchy import Hierarchy
from .semisync import SemiSync
from .duplicates import Duplicates
from .filters import Filters
from .domains import Domains
from .srcerr import SourceErrors
from .partial import PartialTransfers
from .clockdiff import ClockDiff
from .diskfull import DiskFull
from .untilgtid import UntilGtid
from .domainfilter import DomainFilter


# An event's place among those at the same time: what the set-up queued, the History's ops in their
# order, the status sample, then what the run queues, each in the order queued.
BUILD, OP, SAMPLE, RUN = range(4)

# The components, by the name each is known by to the others.
PARTS = {"source": Source, "dump": Dump, "receiver": Receiver, "applier": Applier, "workers": Workers, "rli": Rli,
         "lifecycle": Lifecycle, "admin": Admin, "status": Status,
         # the features, in the order their hooks are called
         "partial": PartialTransfers, "srcerr": SourceErrors, "domains": Domains, "filters": Filters,
         "duplicates": Duplicates, "semisync": SemiSync, "hierarchy": Hierarchy, "clockdiff": ClockDiff,
         "diskfull": DiskFull, "untilgtid": UntilGtid, "domainfilter": DomainFilter}


def _copy_sharing(obj, shared: list):
    """A copy of obj made by pickling, but for the `shared` objects, which the copy holds themselves.
    They are in the pickler's memo before it starts, so it writes each as a reference to its place
    there; the loader first loads a stream that puts each in the same place (each fetched by its
    place, with C calls alone), and then the copy. A persistent_id, a Python call for every object
    pickled, had been half of a fork's CPU. (Setting an Unpickler's memo from a dict leaves it
    empty in CPython 3.11, and from another's memo does not count the places taken.)"""
    data = io.BytesIO()
    data.write(_placing(len(shared)))
    pickler = pickle.Pickler(data, pickle.HIGHEST_PROTOCOL)
    pickler.memo = {id(x): (i, x) for i, x in enumerate(shared)}
    pickler.dump(obj)
    data.seek(0)
    loader = pickle.Unpickler(data)
    loader.persistent_load = shared.__getitem__
    loader.load()  # the shared objects into the memo
    return loader.load()


_PLACE = 12  # bytes per shared object in _placing's stream
_places = bytearray()


def _placing(n: int) -> bytes:
    """A pickle that puts persistent object i in memo place i for i < n: push i, load it as a
    persistent id, put it in place i, pop it; then None, the load's value."""
    while len(_places) < n * _PLACE:
        i = len(_places) // _PLACE
        _places.extend(b"J" + struct.pack("<i", i) + b"Qr" + struct.pack("<I", i) + b"0")
    return b"\x80\x02" + bytes(_places[:n * _PLACE]) + b"N."


# Each op's component method (model/ops.py), as a getter made once.
METHOD_OF = {name: attrgetter(method) for name, method in METHODS.items()}

# The kinds of observation a status sample takes (SHOW SLAVE STATUS, SHOW GLOBAL STATUS/VARIABLES,
# SHOW MASTER STATUS): a run's reader that reads only some of them has the others left out.
SAMPLED = frozenset({"status", "server_status", "master_status"})


class Simulator:
    def __init__(self, history: dict, config: Config, system: str = "model", sampled: frozenset[str] = SAMPLED):
        # The ops are queued by run() or extend(); the History here holds those queued so far.
        self.given = history["ops"]
        self.history = {**history, "ops": []}
        self.config = config
        mech = config.mechanics
        self.rule = D.DelayRule(config.rule, config.mutants, mech.commit_timestamp_rounding == "up",
                                mech.commit_timestamp_clock == "replica")
        # What the components test with `in`; none as an empty tuple, which answers at once where an
        # empty set first hashes the Mutant (a frozen dataclass's hash, in Python, on every test). A
        # set of another type is kept: it may note what is asked.
        self.mutants = () if type(config.mutants) is frozenset and not config.mutants else config.mutants
        self.mech = config.mechanics
        self.system = system
        head = history["header"]
        self.epoch = head.get("epoch_us", DEFAULT_EPOCH_US)
        self.sample_every = head.get("sample_every_us", 0)
        self.sampling = sampled  # what each sample takes; one taking nothing still moves the clock to its time
        self.now = 0
        self.queue: list = []
        self.phase, self.seq = BUILD, 0
        self.samples = self.sampled = self.sample_queued = 0
        # The events run so far but samples, and the last sample's rows (each observation with its
        # channel, None for a server's) as of then: a sample after no other event shows the same.
        self.events = 0
        self.shown: tuple[int, list[tuple[dict, Channel | None]]] = (-1, [])
        self.obs: list[dict] = []
        self.last_stmt: dict[str, dict] = {}  # node -> the outcome of the last statement it completed (an expectation's `result`)
        # A WL#7318 (8.0) server writes commit timestamps unless the History says it is older.
        self.node_defaults = {"commit_timestamps": config.rule == D.WL7318}
        self.forced_variables = config.variables  # a system's own settings, e.g. its wait point
        self.variable_defaults = config.defaults  # a server version's defaults
        self.nodes: dict[str, Node] = {}
        parts = {name: part(self) for name, part in PARTS.items()}
        self.hooks = Hooks(list(parts.values()))
        for name, part in parts.items():
            part.wire(name, parts, self.hooks)
            setattr(self, name, part)
        self.initial_variables: dict[str, dict] = {}
        self._build(head["topology"])
        # A topology with filters, or a History setting one: commits say which table they wrote, so
        # that a Trace tells what to filter.
        self.filtering = any(FL.configured(n.variables) for n in self.nodes.values()) or V.filters([], self.given)

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
            self.lifecycle.start_server(node)
            sync_binlog, flush_log = self.source.durability(node)
            variables: dict = {}
            for hook in self.hooks.initial_variables:
                hook(node, variables)
            self.initial_variables[node.id] = {**variables, R.SYNC_BINLOG: sync_binlog, R.FLUSH_LOG: flush_log,
                                               **FL.configured(node.variables),
                                               **{k: node.variables[k] for k in DOM.VARIABLES
                                                  if k in node.variables and self.mech.gtid_domains},
                                               **{k: node.variables[k] for k in (MS.IGNORE_DUPLICATES,) if k in node.variables}}
            self.nodes[node.id] = node
        for c in topo.get("channels", []):
            replica, source = self.nodes[c["replica"]], self.nodes[c["source"]]
            self.add_channel(replica, source, c.get("latency_us", 0), c.get("delay", 0), c.get("connection"),
                             c.get("clock_reply", ""))
        for node in self.nodes.values():
            refused = G.startup_error(node.log_bin, node.log_slave_updates, node.rpl_hierarchical)
            if refused:  # mysqld refuses to start: the node never comes up
                node.up = False
                self.emit("error", node.id, op="startup", errno=F.ER_STARTUP_OPTIONS, message=refused)
                continue
            self.source.open_binlog(node)
        for n in topo["nodes"]:
            node = self.nodes[n["id"]]
            if not node.up:
                continue
            for ch in MS.channels(node):
                if "relay_log_info" in n and ch is node.channel:
                    ch.rli_content = n["relay_log_info"]
                    if not self.rli.read_relay_log_info(ch, boot=True):
                        continue
                self.rli.write_relay_log_info(ch)
                self.receiver.start_io(ch)
                self.applier.start_sql(ch)

    @staticmethod
    def add_channel(replica: Node, source: Node, latency_us: int, delay: int = 0, connection: str | None = None,
                    clock_reply: str = "") -> None:
        ch = Channel(node=replica, source=source, latency_us=latency_us, delay=delay, connection=connection,
                     clock_reply=clock_reply)
        if connection is not None:
            replica.connections[connection] = ch
        if connection in (None, MS.DEFAULT):
            replica.channel = ch
        source.replicas.append(ch)

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

    def clock(self) -> int:
        return self.now

    def at(self, t: int, fn: Callable, *args: Any) -> None:
        self.seq += 1
        heapq.heappush(self.queue, (t, self.phase, self.seq, fn, args))

    def emit(self, kind: str, node: str, **fields: Any) -> None:
        self.obs.append({"t": self.now, "kind": kind, "node": node, **fields})
        if kind in ("stmt", "commit") or (kind == "error" and "op" in fields):  # a statement's answer, or a down node's
            self.last_stmt[node] = fields

    # -- a run: all at once, or extended op by op and forked --------------------------------------
    def run(self) -> tuple[dict, list[dict]]:
        self.extend(self.given)
        return self.finish()

    def extend(self, ops: list[dict]) -> None:
        """Queue more of the History's ops, none before the last queued."""
        for op in ops:
            heapq.heappush(self.queue, (op["at"], OP, len(self.history["ops"]), self.op, (op,)))
            self.history["ops"].append(op)
        self.phase = RUN
        if not self.sample_every:
            return
        # Samples are queued one at a time, each by the one before, so the queue holds the ops and
        # what is under way, never the whole span. More ops may sample further: the chain goes on.
        was, self.samples = self.samples, last_sample(self.history) // self.sample_every
        if self.samples > was and self.sampled == self.sample_queued:
            self._queue_sample(self.sampled + 1)

    def advance(self) -> None:
        """Run everything that comes before any op still to be added (one at or after the last)."""
        ops = self.history["ops"]
        if not ops:
            return
        until = (ops[-1]["at"], OP, len(ops))
        queue = self.queue
        while queue and queue[0][:3] < until:
            self._step()

    def fork(self) -> "Simulator":
        """A copy of this run that goes on by itself: what finish() of the copy gives is what a run
        of the whole History from the start gives, and this one can still be extended."""
        # What the run never changes once made is shared, not copied: the system's settings, the
        # observations emitted, the ops, and the log entries (a log is cut or grown, its entries
        # never altered).
        shared = [self.config, self.mutants, self.mech, self.rule, *self.obs, *self.history["ops"]]
        for node in self.nodes.values():
            shared += node.binlog
            for ch in node.replicas:
                shared += ch.relay
        # Pickled and loaded rather than deep-copied, the shared objects by reference: the same copy
        # for a quarter less CPU (bench/fork_cost.py), a fifth of a search's.
        return _copy_sharing(self, list({id(x): x for x in shared}.values()))

    def __getstate__(self) -> dict:
        return {k: v for k, v in vars(self).items() if k != "hooks"}

    def __setstate__(self, state: dict) -> None:
        """A fork's copy: its components are loaded (their state is part of this one's), and get
        the hooks of their copies (component.Component.__getstate__)."""
        vars(self).update(state)
        parts = [getattr(self, name) for name in PARTS]
        self.hooks = Hooks(parts)
        for part in parts:
            part.hooks = self.hooks

    def finish(self) -> tuple[dict, list[dict]]:
        """Run to the end, with the last sample and what each node finally holds: the Trace."""
        while self.queue:
            self._step()
        self._sample_all()
        for node in self.nodes.values():
            if node.up:  # what a client reads once replication is quiet: each change's copies
                self.emit("data", node.id, counts={t: n for t, n in sorted(Counter(node.visible).items())})
        return self.header(), self.obs

    def dismantle(self) -> None:
        """Breaks the run's cycles (each component and the simulator, a node and its channels) once
        its Trace is out, so that it is freed at once instead of by the garbage collector."""
        channels = [ch for node in self.nodes.values() for ch in (*node.replicas, *MS.channels(node))]
        for obj in (*channels, *self.nodes.values(), *(getattr(self, name) for name in PARTS)):
            vars(obj).clear()
        vars(self).clear()

    def _step(self) -> None:
        t, phase, _, fn, args = heapq.heappop(self.queue)
        self.now = t
        if phase != SAMPLE:
            self.events += 1
        fn(*args)

    def _queue_sample(self, k: int) -> None:
        self.sample_queued = k
        heapq.heappush(self.queue, (k * self.sample_every, SAMPLE, k, self._sample, (k,)))

    def _sample(self, k: int) -> None:
        self.sampled = k
        if k < self.samples:
            self._queue_sample(k + 1)
        self._sample_all()

    def _sample_all(self) -> None:
        events, rows = self.shown
        if events == self.events:  # nothing ran since the last sample: its rows again, as of now
            self.obs += [self.status.shown_again(row, ch) for row, ch in rows]
            return
        rows = []
        kinds = self.sampling
        for node in self.nodes.values():
            if not node.up:
                continue
            if "status" in kinds:
                for ch in MS.channels(node):  # SHOW ALL SLAVES STATUS: a row per connection
                    rows.append((self.status.status(ch), ch))
            if "server_status" in kinds and (self.filtering or node.rpl_hierarchical
                                             or any(hook(node) for hook in self.hooks.samples_server_status)
                                             or len(node.binlog_gtids.keys() | node.slave_gtids.keys()) > 1):  # the positions across domains
                rows.append((self.status.server_status(node), None))
            if "master_status" in kinds and node.rpl_hierarchical:
                rows.append((self.status.master_status(node), None))
        self.shown = (self.events, rows)

    def op(self, op: dict) -> None:
        node = self.nodes[op["node"]]
        entry = OPS[op["op"]]
        if not node.up and not entry.while_down:
            self.emit("error", node.id, op=entry.name, errno=CR_SERVER_LOST, message="Lost connection to server (node is down)")
            return
        default = node.channel
        if "connection" in op:  # START SLAVE 'name', ...: the statement addresses that connection
            node.channel = node.connections.get(op["connection"])
        try:
            METHOD_OF[entry.name](self)(node, op)
            if entry.shows_status and node.channel is not None and node.up:
                self.status.status(node.channel)  # what SHOW SLAVE STATUS says right after the statement
        finally:
            if "connection" in op:
                node.channel = default

    def local(self, node: Node, t: int) -> int:
        return self.epoch + t + node.offset


def simulate(history: dict, config: Config = Config(), system: str = "model",
             sampled: frozenset[str] = SAMPLED) -> tuple[dict, list[dict]]:
    """The run's Trace; `sampled`: the kinds of status sample it takes (a sample changes nothing in
    the run, so a run taking fewer has the same observations but those samples)."""
    sim = Simulator(history, config, system, sampled)
    header, obs = sim.run()
    sim.dismantle()
    return header, obs
