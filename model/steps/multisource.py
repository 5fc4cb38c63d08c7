"""Multi-source steps: a replica with two named connections (MariaDB's connection_name), in one of
two shapes. Two sources: A (domain 1) and B (domain 2) feed R through connections 'a' and 'b',
each with a MASTER_DELAY of its own. A diamond: A feeds B and C, which both feed D through 'b'
and 'c', so D receives every GTID twice and applies it once (gtid_ignore_duplicates,
rpl_slave_state::check_duplicate_gtid; where the two copies race, MDEV-8354). Commits (some slow
to apply, so that one connection applies a group while the other brings it), STOP/START SLAVE
'name' of either thread, STOP/START ALL SLAVES, CHANGE MASTER 'name' TO MASTER_DELAY (stopped
first: MariaDB refuses it while the connection runs), STOP/START SLAVE on a middle server of the
diamond (one path lags), and a crash of the multi-source replica with its restart."""
from __future__ import annotations

from . import MS, TAIL_US, TIME_PASSES, US, Builder, Draw, Family, Step, thread_kw
from . import delay as DL
from . import vocabulary as VO

DELAYS = (0, 0, 1, 2)  # MASTER_DELAY seconds a connection is drawn with


def topology(b: Builder, d: Draw) -> None:
    latency = d.choice([0, 1000, 200_000])
    if d.boolean():
        b.state.update(replica="R", sources={"a": "A", "b": "B"}, middle=[])
        b.topology(500_000, [{"id": "A", "variables": {"gtid_domain_id": 1}}, {"id": "B", "variables": {"gtid_domain_id": 2}},
                             {"id": "R"}],
                   [{"source": s, "replica": "R", "connection": c, "latency_us": latency, "delay": d.choice(DELAYS)}
                    for c, s in (("a", "A"), ("b", "B"))])
        return
    b.state.update(replica="D", sources={"b": "A", "c": "A"}, middle=["B", "C"])
    b.topology(500_000, [{"id": "A", "variables": {"gtid_domain_id": 1}}, {"id": "B"}, {"id": "C"},
                         {"id": "D", "variables": {"gtid_ignore_duplicates": True}}],
               [{"source": "A", "replica": m, "latency_us": latency} for m in ("B", "C")]
               + [{"source": m, "replica": "D", "connection": c, "latency_us": latency, "delay": d.choice(DELAYS)}
                  for c, m in (("b", "B"), ("c", "C"))])


def commit(b: Builder, d: Draw) -> None:
    """1..3 commits on a source, 100 ms apart; a slow one keeps the applying connection owning its
    domain while the other connection brings the same group."""
    source = d.choice(sorted(set(b.state["sources"].values())))
    for i in range(d.integer(1, 3)):
        cost = d.choice([0, 0, 50 * MS, 300 * MS])
        b.op("trx", source, trx=b.trx_name(), **({"statements": [{"replica_cost_us": cost}]} if cost else {}))
        b.now += 100 * MS


def connection_threads(b: Builder, d: Draw) -> None:
    conn, thread, start = d.choice(sorted(b.state["sources"])), d.choice([None, None, "io", "sql"]), d.boolean()
    b.op("start_slave" if start else "stop_slave", b.state["replica"], connection=conn, **thread_kw(thread))


def all_slaves(b: Builder, d: Draw) -> None:
    b.op("start_all_slaves" if d.boolean() else "stop_all_slaves", b.state["replica"])


def change_delay(b: Builder, d: Draw) -> None:
    """STOP SLAVE 'x'; CHANGE MASTER 'x' TO MASTER_DELAY = n; START SLAVE 'x' (the relay log is
    purged and fetched again from where its SQL thread stopped)."""
    conn, replica = d.choice(sorted(b.state["sources"])), b.state["replica"]
    b.op("stop_slave", replica, connection=conn)
    b.op("change_master", replica, connection=conn, delay=d.choice(DELAYS))
    b.op("start_slave", replica, connection=conn)


def middle_threads(b: Builder, d: Draw) -> None:
    """The diamond: one path stops or starts, so that the other connection brings its groups first."""
    b.op("start_slave" if d.boolean() else "stop_slave", d.choice(b.state["middle"]))


def crash(b: Builder, d: Draw) -> None:
    """The multi-source replica crashes and restarts: every connection starts again from its own
    relay-log.info."""
    b.op("crash", b.state["replica"])
    b.now += d.integer(0, 2) * US
    b.op("restart", b.state["replica"])


FAMILY = Family("multisource", topology, (
    TIME_PASSES, Step("commit", 4, commit), Step("connection_threads", 3, connection_threads),
    Step("all_slaves", 1, all_slaves), Step("change_delay", 1, change_delay),
    Step("middle_threads", 1, middle_threads, precondition=lambda b: bool(b.state["middle"])),
    Step("crash", 1, crash), Step("flush_logs", 1, DL.flush_logs), VO.step(*VO.EVERY)),
    tail_us=TAIL_US,
    features=("multisource",))
