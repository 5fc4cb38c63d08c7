"""Delayed replication's steps: commits, time passing, STOP/START SLAVE [SQL_THREAD [UNTIL]], CHANGE
MASTER (alone, on a stopped replica with unapplied events, or on every hop in turn), RESET SLAVE, crashes, clock steps,
log rotation, BINLOG statements and dropped connections (cut_io), on a pair, a chain or a fan-out
with clock offsets, maybe without GTIDs, a replica maybe finding a relay-log.info at its start."""
from __future__ import annotations

from ..sim import DEFAULT_EPOCH_US
from . import US, TIME_PASSES, Builder, Draw, Family, Step, thread_kw
from . import vocabulary as VO
from .partial import CUT_IO

TOPOLOGIES = {
    "pair": (["A", "B"], [("A", "B")]),
    "chain": (["A", "B", "C"], [("A", "B"), ("B", "C")]),
    "fan-out": (["A", "B", "C"], [("A", "B"), ("A", "C")]),
}
# CHANGE MASTER TO MASTER_DELAY = these must be refused
BAD_DELAYS = ["-1", "2147483648", "x", "2147483647"]
# relay-log.info a replica may find at its first start (WL#344's reading of it; the embedded
# rli-* Histories): none (most), the old format, the new one with a garbage tail. Not one with too
# few fields: the model then starts the slave on a later START SLAVE (an open question, README)
RELAY_LOG_INFOS = (None,) * 8 + ("./relay.000001\n4\nbin.000001\n4\n", "5\n./relay.000001\n4\nbin.000001\n4\n7\n./relay.000009\n98765\n")


def topology(b: Builder, d: Draw) -> None:
    names, links = TOPOLOGIES[d.choice(sorted(TOPOLOGIES))]
    delays = [d.integer(-1, 8) for _ in range(2)]  # -1: configured without MASTER_DELAY (WL344.CM.DEFAULT)
    offsets = [d.choice([0, 0, -3 * US, 2 * US + 400_000, 3600 * US]) for _ in range(3)]
    latency = d.choice([0, 1000, 300_000])
    nodes = [{"id": n, "clock_offset_us": off} for n, off in zip(names, offsets)]
    if d.boolean():
        nodes[0]["commit_timestamps"] = False  # an old master
    if d.integer(0, 9) == 0:  # servers without GTIDs: WL#7318 waits at the anonymous GTID event
        for n in nodes:
            n["gtid_mode"] = False
    if info := d.choice(RELAY_LOG_INFOS):
        nodes[1]["relay_log_info"] = info
    channels = [{"source": s, "replica": r, "latency_us": latency, **({"delay": delay} if delay >= 0 else {})}
                for (s, r), delay in zip(links, delays)]
    b.state["replicas"] = [r for _, r in links]
    b.state["source"] = dict((r, s) for s, r in links)
    b.topology(1_300_000, nodes, channels)
    # Every History starts with a commit, so every hop has an event to delay whatever steps are
    # drawn: without it, chain coverage (WL344.CHAIN.IMMEDIATE, WL7318.F1) hung on the draw order
    # and fell to nothing when unrelated modules shifted it. (The state machine's; the generator
    # of version 3 had no opening commit.)
    b.op("trx", "A", trx=b.trx_name(), statements=[{"duration_us": 1000, "replica_cost_us": 0}])


def commit(b: Builder, d: Draw) -> None:
    statements = [{"duration_us": d.integer(0, 3 * US), "replica_cost_us": d.choice([0, 0, 2 * US])}
                  for _ in range(d.integer(1, 3))]
    kw: dict = {"trx": b.trx_name(), "statements": statements}
    if d.boolean():
        kw["ddl"] = True
        kw["statements"] = statements[:1]
    timestamp = d.choice([None, None, None, 1_700_000_000, 1_700_000_050])
    if timestamp is not None:
        kw["timestamp"] = timestamp
    b.op("trx", "A", **kw)


def stop_slave(b: Builder, d: Draw) -> None:
    thread = d.choice([None, "sql", "io"])
    b.op("stop_slave", d.choice(b.state["replicas"]), **thread_kw(thread))


def start_slave(b: Builder, d: Draw) -> None:
    """START SLAVE, its SQL thread, or its SQL thread UNTIL the end of an event its source has
    binlogged so far (the reference model's Trace says where), as WL#344's use case P1 does."""
    thread = d.choice([None, "sql", "until"])
    node = d.choice(b.state["replicas"])
    if thread != "until":
        b.op("start_slave", node, **thread_kw(thread))
        return
    source = b.state["source"][node]
    _, obs = b.trace()
    ends = [(o["file"], o["end"]) for o in obs if o["kind"] == "binlog" and o["node"] == source] or [("bin.000001", 4)]
    file, pos = d.choice(ends)
    b.op("start_slave", node, thread="sql", until={"master_log_file": file, "master_log_pos": pos})


def change_master(b: Builder, d: Draw) -> None:
    node = d.choice(b.state["replicas"])
    delay = d.choice([*range(11), *BAD_DELAYS])  # 0..10 seconds, or a value to refuse
    b.op("change_master", node, **({"delay": delay} if isinstance(delay, int) else {"delay_sql": delay}))


def delay_change(b: Builder, d: Draw) -> None:
    """Known bugs D7's trigger: a commit the replica holds unapplied (relayed within the latency,
    delayed for at least a second), STOP SLAVE SQL_THREAD then IO_THREAD, CHANGE MASTER TO
    MASTER_DELAY, START SLAVE: with both threads stopped the relay logs are purged."""
    node = d.choice(b.state["replicas"])
    b.op("trx", "A", trx=b.trx_name())
    b.now += d.choice([400_000, 900_000])
    b.op("stop_slave", node, thread="sql")
    b.op("stop_slave", node, thread="io")
    b.op("change_master", node, delay=d.integer(0, 10))
    b.op("start_slave", node)


def set_delays(b: Builder, d: Draw) -> None:
    """A DBA delays every hop of the running topology, the last first, as a delayed chain is built:
    STOP SLAVE SQL_THREAD, CHANGE MASTER TO MASTER_DELAY = n, START SLAVE on each replica
    (WL#6120: the IO thread may keep fetching). Then a client commits a transaction of several
    statements, maybe under SET TIMESTAMP ahead of the master's clock (a binlog replayed through
    mysqlbinlog | mysql sets each statement's). WL#7318 F1's trigger: both hops of a chain delayed,
    the second waiting from the first's commit; F3's: a transaction whose events are dated after its
    commit, each of which would wait for its own. (Left to the topology's draws, a search of 60
    examples drew one chain delayed twice and one such commit, neither showing the bug.)"""
    for node in reversed(b.state["replicas"]):
        b.op("stop_slave", node, thread="sql")
        b.op("change_master", node, delay=d.integer(1, 6))  # two hops and the commit end within the tail
        b.op("start_slave", node)  # both threads: an IO thread stopped before starts too
    statements = [{"duration_us": d.integer(0, 2 * US), "replica_cost_us": 0} for _ in range(d.integer(2, 3))]
    kw: dict = {"trx": b.trx_name(), "statements": statements}
    if d.boolean():
        clock_s = (DEFAULT_EPOCH_US + b.now + b.header["topology"]["nodes"][0]["clock_offset_us"]) // US
        kw["timestamp"] = clock_s + d.integer(2, 30)
    b.op("trx", "A", **kw)


def reset_slave(b: Builder, d: Draw) -> None:
    b.op("reset_slave", d.choice(b.state["replicas"]))


def crash_and_restart(b: Builder, d: Draw) -> None:
    """kill -9 of a server and a start, maybe while its commits are in flight. Maybe it is the
    source, killed right after its clients' COMMITs returned (the reference model's Trace says
    when), and a client commits again once it is back: Bug #113489's trigger, a GTID of the binlog
    written since the last rotation issued again. Left to a commit, time passing, the kill and a
    commit in that order (a kill during a commit rolls it back: no GTID to reuse), a search of 60
    examples drew none."""
    node = d.choice(b.state["replicas"] + ["A"])
    after_commits = node == "A" and d.boolean()
    if after_commits:
        _, obs = b.trace()
        b.now = max([b.now] + [o["t"] + 1 for o in obs if o["kind"] == "commit" and o["node"] == "A"])
    b.op("crash", node)
    b.now += d.integer(0, 3 * US)
    b.op("restart", node)
    if after_commits:
        commit(b, d)


def clock_step(b: Builder, d: Draw) -> None:
    delta = d.choice([-2 * US, US + 250_000, 3600 * US])
    b.op("clock_step", d.choice(b.state["replicas"] + ["A"]), delta_us=delta)


def flush_logs(b: Builder, d: Draw) -> None:
    b.op("flush_logs", "A")


FAMILY = Family("delay", topology, (
    TIME_PASSES, Step("commit", 1, commit), Step("stop_slave", 1, stop_slave), Step("start_slave", 1, start_slave),
    Step("change_master", 1, change_master), Step("delay_change", 1, delay_change),
    Step("set_delays", 1, set_delays), Step("reset_slave", 1, reset_slave),
    Step("crash_and_restart", 1, crash_and_restart), Step("clock_step", 1, clock_step), Step("flush_logs", 1, flush_logs), Step("binlog_statement", 1, VO.binlog_statement), CUT_IO,
    VO.step("commit_any_kind", "set_runtime", "flush_relay_logs", "on_the_primary", "stop_server")),
    # Long enough for both hops of a chain to wait out their largest delays (8 s each, D4: the
    # end-to-end delay is their sum): a shorter tail leaves C nothing applied to judge. (The
    # state machine's; the generator of version 3 stopped 12 s after the last step.)
    tail_us=2 * 8 * US + 4 * US,
    features=("delay", "lag", "partial", "recovery"))  # recovery: kill -9 of a source
