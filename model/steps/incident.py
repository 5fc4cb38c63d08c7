"""Incident events' steps: a primary A and a replica B, possibly delayed; transactional and
non-transactional statements, binlog cache overflows and write errors, incidents recorded
directly or through the injector (known and unknown codes), the seed's cluster gaps, skip
counters, STOP/START SLAVE, and crashes of the replica."""
from __future__ import annotations

from . import S, TAIL_US, TIME_PASSES, Builder, Draw, Family, Step, thread_kw


def topology(b: Builder, d: Draw) -> None:
    delay, latency = d.choice([0, 0, 3]), d.choice([0, 1000, 200_000])
    b.topology(900_000, [{"id": "A"}, {"id": "B"}], [{"source": "A", "replica": "B", "delay": delay, "latency_us": latency}])
    # Every History starts with a commit, so an incident always has an event after it for the
    # replica to resume at (WL3464.R4): without it, R4's coverage hung on the draw order and fell
    # to nothing when an unrelated change shifted it.
    b.op("trx", "A", trx=b.trx_name(), engine="innodb", statements=[{}])


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
    count = d.integer(1, 3)
    b.op("stop_slave", "B", thread="sql")
    b.op("set_global", "B", variable="sql_slave_skip_counter", value=count)
    b.op("start_slave", "B", thread="sql")


def slave_threads(b: Builder, d: Draw) -> None:
    thread, start = d.choice([None, "sql", "io"]), d.boolean()
    b.op("start_slave" if start else "stop_slave", "B", **thread_kw(thread))


def replica_crash(b: Builder, d: Draw) -> None:
    b.op("crash", "B")
    b.now += d.integer(0, S)
    b.op("restart", "B", relay_log_recovery=d.boolean())


FAMILY = Family("incident", topology, (
    TIME_PASSES, Step("commit", 1, commit), Step("record_incident", 1, record_incident),
    Step("cluster_gap", 1, cluster_gap), Step("skip_and_start", 1, skip_and_start),
    Step("slave_threads", 1, slave_threads), Step("replica_crash", 1, replica_crash)),
    tail_us=TAIL_US,
    features=("incident", "delay"))
