"""Replication filters' steps: a source A (maybe binlog-do/ignore-db, maybe a semi-sync master) with
two replicas, each with its own replicate_events_marked_for_skip and replicate-* rule, one maybe
delayed and semi-sync; commits on the InnoDB or the MyISAM table (rc.r, rc.m) or a DDL (rc.d), some
from a session with @@skip_replication; STOP/START of the threads, and the skip counter. No dropped connection (cut_io): partial groups
have their families, and a skip counter running out in a partial group is judged there."""
from __future__ import annotations

from . import US, TIME_PASSES, Builder, Draw, Family, Step
from . import vocabulary as VO

MARKED = ("REPLICATE", "FILTER_ON_SLAVE", "FILTER_ON_MASTER")
# One rule at most per replica: each picks out rc.r or rc.m, or all of rc, the way a DBA writes it.
RULES = ({}, {}, {"replicate_ignore_table": "rc.m"}, {"replicate_do_table": "rc.r"}, {"replicate_wild_ignore_table": "rc.r%"},
         {"replicate_wild_do_table": "rc.m%"}, {"replicate_do_db": "rc"}, {"replicate_ignore_db": "rc"})
SOURCE_RULES = ({}, {}, {}, {"binlog_do_db": "rc"}, {"binlog_ignore_db": "rc"}, {"binlog_do_db": "other"})


def topology(b: Builder, d: Draw) -> None:
    semi = d.boolean()
    source = {**d.choice(SOURCE_RULES), **({"rpl_semi_sync_master_enabled": True,
                                           "rpl_semi_sync_master_timeout": d.choice([500, 2000])} if semi else {})}
    nodes, channels = [{"id": "A", "variables": source}], []
    for r, delay in (("B", d.choice([0, 0, 3])), ("C", 0)):
        variables = {"replicate_events_marked_for_skip": d.choice(MARKED), **d.choice(RULES)}
        if semi and d.boolean():
            variables["rpl_semi_sync_slave_enabled"] = True
        nodes.append({"id": r, "variables": variables})
        channels.append({"source": "A", "replica": r, "delay": delay, "latency_us": d.choice([1000, 50_000])})
    b.state.update(primary="A", replicas=["B", "C"])
    b.topology(700_000, nodes, channels)


def commit(b: Builder, d: Draw) -> None:
    """A transaction on rc.r or rc.m, or a DDL statement (CREATE TABLE rc.d), maybe from a session that
    SET skip_replication = 1. A DDL is a group of one Query event without an XID, which the filters
    decide on by its own name: the servers have lost a filtered DDL's GTID (MySQL Bug #91086)."""
    kind, marked = d.choice(["innodb", "innodb", "myisam", "ddl"]), d.boolean()
    b.op("trx", "A", trx=b.trx_name(), **({"engine": kind} if kind == "myisam" else {}),
         **({"ddl": True} if kind == "ddl" else {}), **({"skip_replication": True} if marked else {}))


def sql_thread(b: Builder, d: Draw) -> None:
    b.op("start_slave" if d.boolean() else "stop_slave", d.choice(b.state["replicas"]), thread="sql")


def io_thread(b: Builder, d: Draw) -> None:
    b.op("start_slave" if d.boolean() else "stop_slave", d.choice(b.state["replicas"]), thread="io")


def skip_counter(b: Builder, d: Draw) -> None:
    """STOP SLAVE SQL_THREAD, SET GLOBAL sql_slave_skip_counter = N, START SLAVE SQL_THREAD, with
    marked groups around that the replica may ignore (they are not counted)."""
    r = d.choice(b.state["replicas"])
    b.op("stop_slave", r, thread="sql")
    for _ in range(d.integer(1, 3)):
        commit(b, d)
        b.now += d.choice([1, 300_000])
    b.op("set_global", r, variable="sql_slave_skip_counter", value=d.integer(1, 4))
    b.now += US
    b.op("start_slave", r, thread="sql")


FAMILY = Family("filter", topology, (
    TIME_PASSES, Step("commit", 3, commit), Step("sql_thread", 1, sql_thread), Step("io_thread", 1, io_thread),
    Step("skip_counter", 1, skip_counter), VO.step(*(s for s in VO.EVERY if s != "network"))),  # no cut_io: see above
    tail_us=12 * US,
    features=("filter", "semisync", "delay", "lag"))
