"""The mixed family: several families' steps on one topology, and the vocabulary no family drew.

A -> B -> C: B is a delayed, filtered, multi-threaded, semi-sync replica of A (each of these drawn,
so a History may have any subset) that logs what it applies; C replicates from B. The steps are
the families' own (delay, filter, parallel, incident, semisync, partial), written once there, and
a few that no family draws: a commit of any statement kind the model has (transactional,
non-transactional, DDL, several statements, one whose binlog write fails, one under SET
TIMESTAMP), FLUSH RELAY LOGS (a relay-log rotation copies the source's format description into the
new relay log), SET GLOBAL of a replication variable while the threads run and while they are
stopped (the server refuses what it refuses while running), and clean and unclean stops of any
server. A COMPOSED family, not a FAMILY: no requirement file is named after it; the generator draws
it by name (replcheck.generate.COMPOSED), and its state machine (MixedMachine) searches mutants.
"""
from __future__ import annotations

from . import MS, US, TIME_PASSES, Builder, Draw, Family, Step, thread_kw
from . import delay as DL
from . import filter as FL
from . import incident as INC
from . import parallel as PAR
from . import semisync as SS
from . import vocabulary as VO
from .partial import CUT_IO

def topology(b: Builder, d: Draw) -> None:
    semi, parallel, delay = d.boolean(), d.choice([0, 2, 4]), d.choice([0, 0, 2, 5])
    a = {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": d.choice([500, 2000])} if semi else {}
    bvars = {**d.choice(FL.RULES), "replicate_events_marked_for_skip": d.choice(FL.MARKED)}
    if parallel:
        bvars.update(slave_parallel_threads=parallel, replica_parallel_workers=parallel)
    if semi:
        bvars["rpl_semi_sync_slave_enabled"] = True
    nodes = [{"id": "A", "variables": a}, {"id": "B", "variables": bvars}, {"id": "C"}]
    channels = [{"source": "A", "replica": "B", "latency_us": d.choice([1000, 50_000]), **({"delay": delay} if delay else {})},
                {"source": "B", "replica": "C", "latency_us": 1000}]
    b.state.update(primary="A", replicas=["B", "C"], source={"B": "A", "C": "B"})
    b.topology(700_000, nodes, channels)
    b.op("trx", "A", trx=b.trx_name(), statements=[{"duration_us": MS, "replica_cost_us": 0}])


def flush_relay_logs(b: Builder, d: Draw) -> None:
    """FLUSH RELAY LOGS on a replica, or rotations at both ends: the source rotates its binlog and
    commits a while later, and once the replica applied that, FLUSH RELAY LOGS and a commit. The new
    relay log opens with a copy of the source's format description, stamped when the source's binlog
    began (before the replica's last group was written), which the replica reads before that commit."""
    both = d.boolean()
    if both:
        b.op("flush_logs", "A")
        b.now += 3 * US
        b.op("trx", "A", trx=b.trx_name())
        b.now += d.choice([3 * US, 8 * US])
    b.op("flush_relay_logs", d.choice(b.state["replicas"]))
    if both:
        b.now += d.choice([1, 300_000])
        b.op("trx", "A", trx=b.trx_name())


def threads(b: Builder, d: Draw) -> None:
    b.op("start_slave" if d.boolean() else "stop_slave", d.choice(b.state["replicas"]), **thread_kw(d.choice([None, "sql", "io"])))


COMPOSED = Family("mixed", topology, (
    TIME_PASSES, Step("commit_any_kind", 3, VO.commit_any_kind), Step("burst", 1, PAR.commit), Step("threads", 1, threads),
    Step("flush_relay_logs", 1, flush_relay_logs), Step("set_runtime", 1, VO.set_runtime), Step("stop_server", 1, VO.stop_server),
    Step("delay_change", 1, DL.delay_change), Step("clock_step", 1, DL.clock_step), Step("flush_logs", 1, DL.flush_logs),
    Step("skip_counter", 1, FL.skip_counter), Step("record_incident", 1, INC.record_incident), Step("lose_acks", 1, SS.lose_acks),
    CUT_IO, VO.step("binlog_statement", "master_delay", "on_the_primary")),
    tail_us=20 * US,
    features=("delay", "filter", "parallel", "semisync", "incident", "partial", "lag", "srcerr", "recovery"))
