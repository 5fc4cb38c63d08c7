"""GTID domains' steps: a primary M with replicas B and R, gtid_strict_mode on all or none;
commits in domain 0 or 1 (SET SESSION gtid_domain_id), local writes on a replica (with strict
mode, the next replicated GTID of that domain is out of order there), STOP/START SLAVE, FLUSH LOGS
and a failover to B, after which R asks B by its GTID position (at once, or once B has written
in its own name in a later binlog): the connect the dump thread places by the binlogs'
Gtid_lists (MDEV-4473) or refuses (1236)."""
from __future__ import annotations

from . import US, TAIL_US, TIME_PASSES, Builder, Draw, Family, Step, thread_kw
from . import vocabulary as VO

DOMAINS = (0, 0, 1)  # the primary's domains: mostly 0


def topology(b: Builder, d: Draw) -> None:
    strict, latency = d.boolean(), d.choice([0, 1000, 200_000])
    variables = {"variables": {"gtid_strict_mode": True}} if strict else {}
    b.state.update(primary="M", replicas=["B", "R"], strict=strict)
    b.topology(900_000, [{"id": n, **variables} for n in ("M", "B", "R")],
               [{"source": "M", "replica": r, "latency_us": latency} for r in ("B", "R")])


def commit(b: Builder, d: Draw) -> None:
    """1..3 commits on the primary, a second apart, in one domain."""
    domain, n = d.choice(DOMAINS), d.integer(1, 3)
    for i in range(n):
        b.op("trx", b.state["primary"], trx=b.trx_name(), **({"domain": domain} if domain else {}))
        if i + 1 < n:
            b.now += US


def local_write(b: Builder, d: Draw) -> None:
    """A write on a replica itself: its own GTID, next in that domain there. Without strict mode in
    a domain of its own (2), as MariaDB asks of writes on a replica: in a replicated domain it
    would be an errant transaction, which a GTID connect placed after a later GTID of that domain
    skips by design (send_event_to_slave), and strict mode is what refuses it."""
    domain = d.choice(DOMAINS) if b.state["strict"] else 2
    b.op("trx", d.choice(b.state["replicas"]), trx=b.trx_name(), **({"domain": domain} if domain else {}))


def slave_threads(b: Builder, d: Draw) -> None:
    node, thread, start = d.choice(b.state["replicas"]), d.choice([None, None, "io", "sql"]), d.boolean()
    b.op("start_slave" if start else "stop_slave", node, **thread_kw(thread))


def flush_logs(b: Builder, d: Draw) -> None:
    b.op("flush_logs", d.choice([b.state["primary"], b.state["primary"], *b.state["replicas"]]))


def failover(b: Builder, d: Draw) -> None:
    """M fails over to B (once). R, repointed, connects to B by its GTID position: at once, or
    (stopped first, in half the draws) once B has taken the writes and rotated its binlog (FLUSH
    BINARY LOGS) in its own name: R then asks by a GTID that B's newest Gtid_list holds, maybe not
    as its domain's last, and must get B's groups of the binlog before (MDEV-4473,
    DOMAIN.CONNECT.NO_LOSS). Left to commit, flush_logs and slave_threads steps after the failover
    in that order, no state machine reached it."""
    stopped = d.boolean()
    if stopped:
        b.op("stop_slave", "R")
    b.op("failover", "B")
    # without the wait, a commit or a crash within the drain came in 2 of 2,800 Histories of all families
    b.wait_for_promotion("B")
    b.state.update(primary="B", replicas=["R"])
    if stopped:
        b.now += US
        commit(b, d)
        b.op("flush_logs", "B")
        commit(b, d)
        b.now += US
        b.op("start_slave", "R")


def may_fail_over(b: Builder) -> bool:
    """Once, and after M took writes: a failover before any leaves R nothing to ask by (half the
    state machine's failovers came first)."""
    return b.state["primary"] == "M" and any(o["op"] == "trx" and o["node"] == "M" for o in b.ops)


FAMILY = Family("domains", topology, (
    TIME_PASSES, Step("commit", 3, commit), Step("local_write", 1, local_write),
    Step("slave_threads", 2, slave_threads), Step("flush_logs", 2, flush_logs),
    Step("failover", 1, failover, precondition=may_fail_over), VO.step(*VO.EVERY)),
    tail_us=TAIL_US,
    features=("domains",))
