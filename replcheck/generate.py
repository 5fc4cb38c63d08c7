"""Deterministic History generator: History number `index` of campaign seed `seed`.

A campaign needs millions of Histories that anyone can regenerate from two integers, on any
machine, in any process, in any order. So each History has its own random stream, SplitMix64
seeded from SHA-256 of (seed, index): no global random state, no `hash()` (salted per process),
no dependence on Python's `random` algorithms, and History i never depends on History i-1.

The vocabulary is the Hypothesis state machines' (properties/machines/*.py): one *family* per
machine, with the same topology choices and the same steps (commits, time passing, STOP/START
SLAVE, CHANGE MASTER, RESET SLAVE, crashes, clock steps, log rotation; reads, lost acks, SET
GLOBAL, shutdown, failover; non-transactional statements, binlog failures, incidents, cluster
gaps, skips). A new feature joins by adding a Family to FAMILIES: a topology function and its
weighted steps.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable

# Named in every campaign: bump it when a change makes (seed, index) name another History.
GENERATOR = "replcheck.generate/1"
S = 1_000_000
MS = 1000
MASK64 = (1 << 64) - 1
MAX_STEPS = 20  # as `verify` runs the state machines (stateful_step_count)
TAIL_US = 12 * S  # simulate this long after the last step, so pending waits resolve (HistoryMachine.TAIL_US)


class Rng:
    """SplitMix64 (Steele, Lea, Flood 2014): tiny, fully specified, the same on every platform."""

    def __init__(self, seed: int, index: int):
        digest = hashlib.sha256(f"{GENERATOR}:{seed}:{index}".encode()).digest()
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
    from replcheck.model.delay import DelayRule
    from replcheck.model.sim import simulate

    primary, replicas = b.state["primary"], b.state["replicas"]
    b.op("crash", primary)
    b.now += b.rng.integer(1, S)
    _, obs = simulate(b.history(), DelayRule("wl7318", frozenset()), "generator")
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
