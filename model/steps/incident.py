"""Incident events' steps: a primary A and a replica B, possibly delayed; transactional and
non-transactional statements, binlog cache overflows and write errors, incidents recorded
directly or through the injector (known and unknown codes), the seed's cluster gaps, skip
counters (maybe followed by a restart of the replica), STOP/START SLAVE, crashes of the replica,
its connection dropping (cut_io), maybe inside a group that a GTID reconnect then puts an
incident in again, and a full disk under the primary's binlog, which is no gap."""
from __future__ import annotations

from ..sim import diskfull as DF
from . import US, TAIL_US, TIME_PASSES, Builder, Draw, Family, Step, thread_kw
from . import vocabulary as VO
from .partial import CUT_IO


def topology(b: Builder, d: Draw) -> None:
    delay, latency = d.choice([0, 0, 3]), d.choice([0, 1000, 200_000])
    b.state["replicas"] = ["B"]
    b.state["disk_may_fill"] = d.choice([False, False, False, True])  # a quarter: each costs a server a minute
    b.topology(900_000, [{"id": "A"}, {"id": "B"}], [{"source": "A", "replica": "B", "delay": delay, "latency_us": latency}])


def commit(b: Builder, d: Draw) -> None:
    kw: dict = {"trx": b.trx_name(), "engine": d.choice(["innodb", "myisam"]), "statements": [{}] * d.integer(1, 3)}
    failure = d.choice([None, None, "cache_overflow", "write_error"])
    if failure:
        kw["binlog_failure"] = failure
    b.op("trx", "A", **kw)


def record_incident(b: Builder, d: Draw) -> None:
    code = d.choice([0, 1, 1, 9])
    b.op("record_incident", "A", code=code, message="" if code == 0 else "recorded by the test",
         via=d.choice(["binlog", "injector"]))


def cluster_gap(b: Builder, d: Draw) -> None:
    cause = d.choice(["cluster_node_crash", "server_crash", "network_outage"])
    b.op("cluster_gap", "A", cause=cause, trxs=[b.trx_name() for _ in range(d.integer(1, 2))])


def skip_and_start(b: Builder, d: Draw) -> None:
    """STOP SLAVE SQL_THREAD, SET GLOBAL sql_slave_skip_counter, START SLAVE SQL_THREAD, as a DBA
    does it: once B's SQL thread has stopped on an error, if the reference model's Trace foresees
    one, else at once. Skipping only at the instant of the step left WL3464.R4 (skip the incident,
    resume after it) to the luck of time passing between an incident and a skip.

    Or the DBA comes a while after the stop, the primary having committed meanwhile (a count of 2
    or more then skips the group after the incident too), and afterwards restarts B's server (a
    clean shutdown and a start with relay_log_recovery=1, as a crash-safe replica runs): the relay
    log is thrown away and fetched again from B's GTID position, and the skipped group must not
    come back (I8, MariaDB 0b4231e9: WL3464.GTID_SKIP). Left to a commit step before the skip and
    a replica crash after it, no state machine reached that."""
    count, later = d.integer(1, 3), d.boolean()
    _, obs = b.trace("wl7318")
    b.now = next((o["t"] + 1 for o in obs if o["kind"] == "sql_stop" and o["node"] == "B" and o.get("reason") == "error"
                  and o["t"] >= b.now), b.now)
    if later:
        b.now += US
        b.op("trx", "A", trx=b.trx_name())
        b.now += US  # relayed by then (the latency is at most 0.2 s)
    b.op("stop_slave", "B", thread="sql")
    b.op("set_global", "B", variable="sql_slave_skip_counter", value=count)
    b.op("start_slave", "B", thread="sql")
    if later:
        b.op("shutdown", "B")
        b.op("restart", "B", relay_log_recovery=True)


def disk_full(b: Builder, d: Draw) -> None:
    """The primary's binlog disk fills for a few seconds and one or two commits meet it: they wait
    for space and are written at the server's retry after it is freed (model/sim/diskfull.py), a
    minute after the first met it; the family goes on once they are. At most once, in a quarter of
    the Histories (the topology draws which): each costs a real server that minute."""
    b.state["disk_full"] = True
    duration = d.integer(1, 4) * US
    b.now += 1  # after what this instant's ops began: a commit asked to fail its write fails by itself, not for the disk
    b.op("disk_full", "A", duration_us=duration)
    first = b.now
    for _ in range(d.integer(1, 2)):
        b.now += d.integer(1, duration // 2)
        b.op("trx", "A", trx=b.trx_name())
    b.now = first + DF.RETRY_US + duration + US


def slave_threads(b: Builder, d: Draw) -> None:
    thread, start = d.choice([None, "sql", "io"]), d.boolean()
    b.op("start_slave" if start else "stop_slave", "B", **thread_kw(thread))


def replica_crash(b: Builder, d: Draw) -> None:
    b.op("crash", "B")
    b.now += d.integer(0, US)
    b.op("restart", "B", relay_log_recovery=d.boolean())


FAMILY = Family("incident", topology, (
    TIME_PASSES, Step("commit", 1, commit), Step("record_incident", 1, record_incident),
    Step("cluster_gap", 1, cluster_gap), Step("skip_and_start", 1, skip_and_start),
    Step("slave_threads", 1, slave_threads), Step("replica_crash", 1, replica_crash), CUT_IO,
    Step("disk_full", 1, disk_full, lambda b: b.state["disk_may_fill"] and not b.state.get("disk_full")),
    VO.step(*VO.EVERY)),
    tail_us=TAIL_US,
    features=("incident", "delay", "partial"))
