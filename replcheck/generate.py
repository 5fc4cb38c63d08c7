"""Deterministic History generator: History number `index` of campaign seed `seed`.

A campaign needs millions of Histories that anyone can regenerate from two integers, on any
machine, in any process, in any order. So each History has its own random stream, SplitMix64
seeded from SHA-256 of (seed, index): no global random state, no `hash()` (salted per process),
no dependence on Python's `random` algorithms, and History i never depends on History i-1.

The vocabulary is the Hypothesis state machines' (properties/machines/*.py): one *family* per
machine, with the same topology choices and the same steps (commits, time passing, STOP/START
SLAVE, CHANGE MASTER, RESET SLAVE, crashes, clock steps, log rotation; reads, lost acks, SET
GLOBAL, shutdown, failover; non-transactional statements, binlog failures, incidents, cluster
gaps, skips; filtered slave writes, crash points, SET BINLOG_GROUP_ID, elected failover,
restores). A new feature joins by adding a Family to FAMILIES: a topology function and its
weighted steps.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable

from replcheck.model.recovery import COMMIT_POINTS, CRASH_POINTS

# Named in every campaign: bump it when a change makes (seed, index) name another History.
# Version 3 added two group-ID steps; the other families draw the same Histories as version 2,
# because the random stream stays the one version 2 seeded.
GENERATOR = "replcheck.generate/3"
STREAM = "replcheck.generate/2"
S = 1_000_000
MS = 1000
MASK64 = (1 << 64) - 1
MAX_STEPS = 20  # as `verify` runs the state machines (stateful_step_count)
TAIL_US = 12 * S  # simulate this long after the last step, so pending waits resolve (HistoryMachine.TAIL_US)


class Rng:
    """SplitMix64 (Steele, Lea, Flood 2014): tiny, fully specified, the same on every platform."""

    def __init__(self, seed: int, index: int):
        digest = hashlib.sha256(f"{STREAM}:{seed}:{index}".encode()).digest()
        self.state = int.from_bytes(digest[:8], "little")

    def next64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        return self.next64() % n  # the modulo bias is below 2^-50 for the small n used here

    def integer(self, lo: int, hi: int) -> int:
        return lo + self.below(hi - lo + 1)

    def choice(self, seq):
        return seq[self.below(len(seq))]

    def boolean(self) -> bool:
        return self.next64() >> 63 == 1


@dataclass
class Builder:
    """A History being grown one step at a time, as HistoryMachine grows it."""

    rng: Rng
    now: int = 0
    ops: list[dict] = field(default_factory=list)
    header: dict = field(default_factory=dict)
    n: int = 0
    state: dict = field(default_factory=dict)  # the family's own (replicas, primary, ...)

    def op(self, op: str, node: str, **kw) -> None:
        self.ops.append({"at": self.now, "op": op, "node": node, **kw})

    def trx_name(self) -> str:
        self.n += 1
        return f"t{self.n}"

    def history(self) -> dict:
        return {"header": {**self.header, "end_us": self.now + TAIL_US}, "ops": self.ops}

    def trace(self, rule: str = "wl344") -> tuple[dict, list[dict]]:
        """The reference model's Trace so far, for steps that choose as an operator would."""
        from replcheck.model.sim import Config, simulate

        return simulate(self.history(), Config(rule), "generator")


Step = Callable[[Builder], None]


@dataclass(frozen=True)
class Family:
    name: str
    topology: Step
    steps: tuple[tuple[str, int, Step], ...]  # (name, weight, step)
    precondition: dict[str, Callable[[Builder], bool]] = field(default_factory=dict)


def time_passes(b: Builder) -> None:
    b.now += b.rng.integer(0, 12) * S + b.rng.choice([0, 1, 499_999, 999_999])


def _header(b: Builder, family: str, sample_every_us: int, nodes: list, channels: list) -> None:
    b.header = {"schema": "replcheck.history/1", "name": f"gen-{family}", "sample_every_us": sample_every_us,
                "topology": {"nodes": nodes, "channels": channels}}


# -- delay (properties/machines/delay.py) ---------------------------------------------------------
TOPOLOGIES = {
    "pair": (["A", "B"], [("A", "B")]),
    "chain": (["A", "B", "C"], [("A", "B"), ("B", "C")]),
    "fan-out": (["A", "B", "C"], [("A", "B"), ("A", "C")]),
}


def delay_topology(b: Builder) -> None:
    r = b.rng
    names, links = TOPOLOGIES[r.choice(sorted(TOPOLOGIES))]
    delays = [r.integer(0, 8) for _ in range(2)]
    offsets = [r.choice([0, 0, -3 * S, 2 * S + 400_000, 3600 * S]) for _ in range(3)]
    latency = r.choice([0, 1000, 300_000])
    nodes = [{"id": n, "clock_offset_us": off} for n, off in zip(names, offsets)]
    if r.boolean():
        nodes[0]["commit_timestamps"] = False
    channels = [{"source": s, "replica": rep, "delay": d, "latency_us": latency} for (s, rep), d in zip(links, delays)]
    b.state["replicas"] = [rep for _, rep in links]
    _header(b, "delay", 1_300_000, nodes, channels)


def delay_commit(b: Builder) -> None:
    r = b.rng
    statements = [{"duration_us": r.integer(0, 3 * S), "replica_cost_us": r.choice([0, 0, 2 * S])}
                  for _ in range(r.integer(1, 3))]
    kw: dict = {"trx": b.trx_name(), "statements": statements}
    if r.boolean():
        kw["ddl"] = True
        kw["statements"] = statements[:1]
    timestamp = r.choice([None, None, None, 1_700_000_000, 1_700_000_050])
    if timestamp is not None:
        kw["timestamp"] = timestamp
    b.op("trx", "A", **kw)


def delay_stop_slave(b: Builder) -> None:
    thread = b.rng.choice([None, "sql", "io"])
    b.op("stop_slave", b.rng.choice(b.state["replicas"]), **({"thread": thread} if thread else {}))


def delay_start_slave(b: Builder) -> None:
    thread = b.rng.choice([None, "sql"])
    b.op("start_slave", b.rng.choice(b.state["replicas"]), **({"thread": thread} if thread else {}))


def delay_change_master(b: Builder) -> None:
    node = b.rng.choice(b.state["replicas"])
    if b.rng.below(15) < 11:  # st.one_of(integers(0, 10), 4 bad strings): 11 of 15 values are integers
        b.op("change_master", node, delay=b.rng.integer(0, 10))
    else:
        b.op("change_master", node, delay_sql=b.rng.choice(["-1", "2147483648", "x", "2147483647"]))


def delay_reset_slave(b: Builder) -> None:
    b.op("reset_slave", b.rng.choice(b.state["replicas"]))


def delay_crash_and_restart(b: Builder) -> None:
    node = b.rng.choice(b.state["replicas"] + ["A"])
    b.op("crash", node)
    b.now += b.rng.integer(0, 3 * S)
    b.op("restart", node)


def delay_clock_step(b: Builder) -> None:
    delta = b.rng.choice([-2 * S, S + 250_000, 3600 * S])
    b.op("clock_step", b.rng.choice(b.state["replicas"] + ["A"]), delta_us=delta)


def delay_flush_logs(b: Builder) -> None:
    b.op("flush_logs", "A")


# -- semi-sync (properties/machines/semisync.py) --------------------------------------------------
def semisync_topology(b: Builder) -> None:
    r = b.rng
    master = {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": r.choice([500, 2000, 5000]),
              "rpl_semi_sync_master_wait_for_slave_count": r.integer(1, 2), "rpl_semi_sync_master_wait_no_slave": r.boolean()}
    delay = r.choice([0, 0, 5])
    latencies = [r.choice([1 * MS, 50 * MS, 400 * MS]) for _ in range(2)]
    nodes = [{"id": "A", "variables": master},
             {"id": "B", "variables": {"rpl_semi_sync_slave_enabled": True}},
             {"id": "C", "variables": {"rpl_semi_sync_slave_enabled": r.boolean()}}]
    channels = [{"source": "A", "replica": "B", "delay": delay, "latency_us": latencies[0]},
                {"source": "A", "replica": "C", "latency_us": latencies[1]}]
    b.state.update(primary="A", replicas=["B", "C"], failed_over=False)
    _header(b, "semisync", 700_000, nodes, channels)


def semisync_commit(b: Builder) -> None:
    b.op("trx", b.state["primary"], trx=b.trx_name(), statements=[{}] * b.rng.integer(1, 2))


def semisync_read(b: Builder) -> None:
    b.now += b.rng.choice([1, 10 * MS, 300 * MS])
    b.op("read", b.state["primary"])


def semisync_io_thread(b: Builder) -> None:
    start = b.rng.boolean()
    b.op("start_slave" if start else "stop_slave", b.rng.choice(b.state["replicas"]), thread="io")


def semisync_lose_acks(b: Builder) -> None:
    b.op("lose_acks", b.rng.choice(b.state["replicas"]), count=b.rng.integer(1, 2))


def semisync_set_enabled(b: Builder) -> None:
    b.op("set_global", b.state["primary"], variable="rpl_semi_sync_master_enabled", value=b.rng.boolean())


def semisync_set_wait_for_slave_count(b: Builder) -> None:
    b.op("set_global", b.state["primary"], variable="rpl_semi_sync_master_wait_for_slave_count", value=b.rng.integer(1, 3))


def semisync_shutdown_and_restart(b: Builder) -> None:
    b.op("shutdown", b.state["primary"])
    b.now += b.rng.integer(0, 2 * S)
    b.op("restart", b.state["primary"])


def semisync_crash_and_failover(b: Builder) -> None:
    """A dies; the replica holding most of A's binlog takes over, as an operator (and the state
    machine) would choose: read from the reference model's trace so far."""
    primary, replicas = b.state["primary"], b.state["replicas"]
    b.op("crash", primary)
    b.now += b.rng.integer(1, S)
    _, obs = b.trace("wl7318")
    relayed = {rep: sum(1 for o in obs if o["kind"] == "relay" and o["node"] == rep and o.get("source") == primary)
               for rep in replicas}
    new = max(replicas, key=lambda rep: (relayed[rep], rep == "B"))
    b.op("failover", new)
    b.state.update(primary=new, replicas=[rep for rep in replicas if rep != new], failed_over=True)


def _not_failed_over(b: Builder) -> bool:
    return not b.state["failed_over"]


# -- incident (properties/machines/incident.py) ---------------------------------------------------
def incident_topology(b: Builder) -> None:
    delay, latency = b.rng.choice([0, 0, 3]), b.rng.choice([0, 1000, 200_000])
    _header(b, "incident", 900_000, [{"id": "A"}, {"id": "B"}],
            [{"source": "A", "replica": "B", "delay": delay, "latency_us": latency}])


def incident_commit(b: Builder) -> None:
    r = b.rng
    kw: dict = {"trx": b.trx_name(), "engine": r.choice(["innodb", "myisam"]), "statements": [{}] * r.integer(1, 3)}
    failure = r.choice([None, None, "cache_overflow", "write_error"])
    if failure:
        kw["binlog_failure"] = failure
    b.op("trx", "A", **kw)


def incident_record(b: Builder) -> None:
    code = b.rng.choice([0, 1, 1, 9])
    b.op("record_incident", "A", code=code, message="" if code == 0 else "recorded by the test",
         via=b.rng.choice(["binlog", "injector"]))


def incident_cluster_gap(b: Builder) -> None:
    cause = b.rng.choice(["cluster_node_crash", "server_crash", "network_outage"])
    b.op("cluster_gap", "A", cause=cause, trxs=[b.trx_name() for _ in range(b.rng.integer(1, 2))])


def incident_skip_and_start(b: Builder) -> None:
    count = b.rng.integer(1, 3)
    b.op("stop_slave", "B", thread="sql")
    b.op("set_global", "B", variable="sql_slave_skip_counter", value=count)
    b.op("start_slave", "B", thread="sql")


def incident_slave_threads(b: Builder) -> None:
    thread, start = b.rng.choice([None, "sql", "io"]), b.rng.boolean()
    b.op("start_slave" if start else "stop_slave", "B", **({"thread": thread} if thread else {}))


def incident_replica_crash(b: Builder) -> None:
    b.op("crash", "B")
    b.now += b.rng.integer(0, S)
    b.op("restart", "B", relay_log_recovery=b.rng.boolean())


# -- group IDs and crash recovery (properties/machines/groupid.py) --------------------------------
class GroupIds:
    """The group-ID vocabulary, one method per step, shared by the state machine (which draws the
    arguments with Hypothesis) and the generator (with Rng). `h` grows the History: `now`,
    `op(op, node, **kw)`, `trx_name()` and `trace()` (the Trace so far, to choose as an operator would).

    Three --rpl-hierarchical servers, a root master A with slaves B and C side by side (fan-out)
    or chained A -> B -> C. A step that does not apply does nothing, so that deleting a step
    while shrinking leaves the meaning of the steps after it alone."""

    SERVERS = ("A", "B", "C")
    LATENCIES = (0, 1000, 200_000)
    # rpl_transaction_enabled of A, B, C: whether InnoDB's copy of the SQL thread's position
    # overrides relay-log.info at crash recovery (off on one slave: recovery trusts the file)
    TRANSACTIONAL = ((True, True, True), (True, False, True), (True, True, False))

    def __init__(self, h, name: str, chain: bool, latency: int, transactional: tuple[bool, ...]):
        links = [("A", "B"), ("B", "C")] if chain else [("A", "B"), ("A", "C")]
        nodes = [{"id": n, "rpl_hierarchical": True, "rpl_transaction_enabled": t} for n, t in zip(self.SERVERS, transactional)]
        h.header = {"schema": "replcheck.history/1", "name": name, "sample_every_us": 900_000,
                    "topology": {"nodes": nodes, "channels": [{"source": s, "replica": r, "latency_us": latency}
                                                              for s, r in links]}}
        self.h = h
        self.root = "A"
        self.source = {r: s for s, r in links}
        self.failed: set[str] = set()  # failed masters: out of the system until restored

    def in_system(self, node: str) -> str:
        """The node, or the root if the node is a failed master awaiting its restore."""
        return self.root if node in self.failed else node

    def commit(self, statements: int, ddl: bool) -> None:
        self.h.op("trx", self.root, trx=self.h.trx_name(), statements=[{}] * statements, **({"ddl": True} if ddl else {}))

    def local_write_on_slave(self, node: str) -> None:
        """A write on a slave itself: the slave's group IDs must filter it out."""
        if node != self.root and node not in self.failed:
            self.h.op("trx", node, trx=self.h.trx_name())

    def crash_at_point(self, node: str, point: str, pause: int) -> None:
        """Arm a crash point, drive a server through it (a commit on the root reaches every
        server's commit points; a kill reaches the recovery points), then restart it."""
        h, node = self.h, self.in_system(node)
        h.op("crash", node, point=point)
        if point in COMMIT_POINTS:
            h.op("trx", self.root, trx=h.trx_name())
        else:
            h.op("crash", node)
        for _ in range(1 if point in COMMIT_POINTS else 2):  # a crash during recovery needs a second start
            h.now += pause
            h.op("restart", node)

    def crash_and_restart(self, node: str, pause: int, clean: bool) -> None:
        """kill -9 (or a clean shutdown), then start again."""
        node = self.in_system(node)
        self.h.op("shutdown" if clean else "crash", node)
        self.h.now += pause
        self.h.op("restart", node)

    def restart(self, node: str) -> None:
        self.h.op("restart", self.in_system(node))

    def flush_logs(self, node: str) -> None:
        self.h.op("flush_logs", self.in_system(node))

    def set_group_id(self, step: int) -> None:
        """SHOW MASTER STATUS, then SET BINLOG_GROUP_ID above the ID it showed."""
        self.h.op("show_master_status", self.root)
        _, obs = self.h.trace()
        ids = [o["Group_ID"] for o in obs if o["kind"] == "master_status" and o["node"] == self.root and "Group_ID" in o]
        self.h.op("set_binlog_group_id", self.root, group_id=(ids[-1] if ids else 0) + step)

    def purge(self, node: str) -> None:
        """PURGE BINARY LOGS BEFORE now: every binlog but the active one, unless a slave reads it.
        A slave that was down meanwhile and needs what went must be refused, not skip it."""
        self.h.op("purge_binary_logs", self.in_system(node), before_us=self.h.now)

    def connect_by_group_id(self, node: str) -> None:
        """A slave reconnects by its last group ID: STOP SLAVE, CHANGE MASTER TO
        CONNECT_USING_GROUP_ID, START SLAVE."""
        if node == self.root or node in self.failed:
            return
        for op, kw in (("stop_slave", {}), ("change_master", {"connect_using_group_id": True}), ("start_slave", {})):
            self.h.op(op, node, **kw)
        # A slave elected by a failover that could not finish (its SQL thread halted) is promoted
        # once the reconnect empties its relay log.
        self.h.now += 1
        self._follow_promotion()

    def failover(self, pause: int) -> None:
        """The root dies; the slaves elect the most advanced of them (the model decides which)."""
        if self.failed:  # one failed master at a time: it is restored before the next failover
            return
        h = self.h
        slaves = sorted(r for r, s in self.source.items() if s == self.root)
        h.op("crash", self.root)
        h.now += pause
        h.op("failover", slaves[0], elect=True)
        h.now += 1
        self._follow_promotion()

    def _follow_promotion(self) -> None:
        """The root is the server the model promoted, once it has (an operator would look)."""
        _, obs = self.h.trace()
        promoted = [o for o in obs if o["kind"] == "promoted"]
        if promoted and promoted[-1]["old"] == self.root:
            new = promoted[-1]["node"]
            self.failed.add(self.root)
            del self.source[new]
            self.source = {r: (new if s == self.root else s) for r, s in self.source.items()}
            self.root = new

    def restore(self, donor: str) -> None:
        """The failed master comes back as a slave of the new root, from a donor's backup."""
        if not self.failed:
            return
        node = sorted(self.failed)[0]
        self.h.op("restore", node, **{"from": self.in_system(donor), "source": self.root})
        self.failed.discard(node)
        self.source[node] = self.root


def groupid_topology(b: Builder) -> None:
    r = b.rng
    b.state["g"] = GroupIds(b, "gen-groupid", r.boolean(), r.choice(GroupIds.LATENCIES), r.choice(GroupIds.TRANSACTIONAL))


def _g(step: Callable[..., None], *draws: Callable[[Rng], object]) -> Step:
    """A generator step: draw the arguments, then take the shared GroupIds step."""
    return lambda b: step(b.state["g"], *(draw(b.rng) for draw in draws))


def _server(r: Rng) -> str:
    return r.choice(GroupIds.SERVERS)


def _pause(r: Rng) -> int:
    return r.integer(300_000, 2 * S)


def _groupid_failed(b: Builder) -> bool:
    return bool(b.state["g"].failed)


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("delay", delay_topology, (
        ("time_passes", 1, time_passes), ("commit", 1, delay_commit), ("stop_slave", 1, delay_stop_slave),
        ("start_slave", 1, delay_start_slave), ("change_master", 1, delay_change_master),
        ("reset_slave", 1, delay_reset_slave), ("crash_and_restart", 1, delay_crash_and_restart),
        ("clock_step", 1, delay_clock_step), ("flush_logs", 1, delay_flush_logs))),
    Family("semisync", semisync_topology, (
        ("time_passes", 1, time_passes), ("commit", 1, semisync_commit), ("another_session_reads", 1, semisync_read),
        ("io_thread", 1, semisync_io_thread), ("lose_acks", 1, semisync_lose_acks), ("set_enabled", 1, semisync_set_enabled),
        ("set_wait_for_slave_count", 1, semisync_set_wait_for_slave_count),
        ("shutdown_and_restart", 1, semisync_shutdown_and_restart), ("crash_and_failover", 1, semisync_crash_and_failover)),
        {"shutdown_and_restart": _not_failed_over, "crash_and_failover": _not_failed_over}),
    Family("incident", incident_topology, (
        ("time_passes", 1, time_passes), ("commit", 1, incident_commit), ("record_incident", 1, incident_record),
        ("cluster_gap", 1, incident_cluster_gap), ("skip_and_start", 1, incident_skip_and_start),
        ("slave_threads", 1, incident_slave_threads), ("replica_crash", 1, incident_replica_crash))),
    Family("groupid", groupid_topology, (
        ("time_passes", 1, time_passes),
        ("commit", 1, _g(GroupIds.commit, lambda r: r.integer(1, 3), Rng.boolean)),
        ("local_write_on_slave", 1, _g(GroupIds.local_write_on_slave, _server)),
        # twice as often: the design's hazards sit at its crash points
        ("crash_at_point", 2, _g(GroupIds.crash_at_point, _server, lambda r: r.choice(CRASH_POINTS), _pause)),
        ("crash_and_restart", 1, _g(GroupIds.crash_and_restart, _server, lambda r: r.integer(0, 2 * S), Rng.boolean)),
        ("restart", 1, _g(GroupIds.restart, _server)),
        ("flush_logs", 1, _g(GroupIds.flush_logs, _server)),
        ("set_group_id", 1, _g(GroupIds.set_group_id, lambda r: r.integer(1, 1000))),
        ("purge", 1, _g(GroupIds.purge, _server)),
        ("connect_by_group_id", 1, _g(GroupIds.connect_by_group_id, _server)),
        ("failover", 1, _g(GroupIds.failover, lambda r: r.integer(0, S))),
        ("restore", 1, _g(GroupIds.restore, _server))),
        # the machine's failover and restore do nothing when they do not apply; here they are not drawn
        {"failover": lambda b: not _groupid_failed(b), "restore": _groupid_failed}),
)}


def generate(seed: int, index: int, families: tuple[str, ...] | None = None) -> dict:
    """History `index` of campaign `seed`: a family, its topology, then 1..MAX_STEPS steps."""
    names = families or tuple(FAMILIES)
    b = Builder(Rng(seed, index))
    family = FAMILIES[b.rng.choice(names)]
    family.topology(b)
    b.header["seed"] = seed
    b.header["name"] = f"{b.header['name']}-{seed}-{index}"
    for _ in range(b.rng.integer(1, MAX_STEPS)):
        allowed = [(w, fn) for name, w, fn in family.steps if family.precondition.get(name, _always)(b)]
        pick = b.rng.below(sum(w for w, _ in allowed))
        for w, fn in allowed:
            if pick < w:
                fn(b)
                break
            pick -= w
    return b.history()


def _always(b: Builder) -> bool:
    return True
