"""Semi-synchronous replication's steps, with a delayed replica: commits, reads by other sessions,
replicas stopping and starting their IO threads, lost acks, settings changed on the fly, a commit
timing out until the replicas catch up, a shutdown, a crash of the primary followed by failover to the most advanced replica (and
the crashed primary coming back as a replica of the new one, MDEV-21117), and a replica's connection dropping (cut_io), whose
partial copy may meet its full copy from the new primary."""
from __future__ import annotations

from . import MS, US, TAIL_US, TIME_PASSES, Builder, Draw, Family, Step
from . import vocabulary as VO
from .partial import CUT_IO


def topology(b: Builder, d: Draw) -> None:
    timeout_ms, count = d.choice([500, 2000, 5000]), d.integer(1, 2)
    delay = d.choice([0, 0, 5])
    latencies = [d.choice([1 * MS, 50 * MS, 400 * MS]) for _ in range(2)]
    c_semi, wait_no_slave = d.boolean(), d.boolean()
    # configured as a semi-sync slave too, as every server of a failover pair is: it may come back as one
    master = {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": timeout_ms,
              "rpl_semi_sync_master_wait_for_slave_count": count, "rpl_semi_sync_master_wait_no_slave": wait_no_slave,
              "rpl_semi_sync_slave_enabled": True}
    nodes = [{"id": "A", "variables": master},
             {"id": "B", "variables": {"rpl_semi_sync_slave_enabled": True}},
             {"id": "C", "variables": {"rpl_semi_sync_slave_enabled": c_semi}}]
    channels = [{"source": "A", "replica": "B", "delay": delay, "latency_us": latencies[0]},
                {"source": "A", "replica": "C", "latency_us": latencies[1]}]
    b.state.update(primary="A", replicas=["B", "C"], failed_over=False, wait_for_slave_count=count)
    b.topology(700_000, nodes, channels)


def commit(b: Builder, d: Draw) -> None:
    """A client's transaction; maybe its client waits for COMMIT to return (acknowledged, timed out
    or switched OFF: the reference model's Trace says when) before the next step, as a session
    does. Left to time passing, a commit rarely returned before a crash: the AFTER_SYNC search
    reached no failover with something to keep (WL6355.FAILOVER.NO_LOSS)."""
    trx = b.trx_name()
    b.op("trx", b.state["primary"], trx=trx, statements=[{}] * d.integer(1, 2))
    if d.boolean():
        _, obs = b.trace("wl7318")
        b.now = next((o["t"] + 1 for o in obs if o["kind"] == "commit" and o.get("trx") == trx), b.now)


def another_session_reads(b: Builder, d: Draw) -> None:
    b.now += d.choice([1, 10 * MS, 300 * MS])
    b.op("read", b.state["primary"])


def io_thread(b: Builder, d: Draw) -> None:
    """STOP or START SLAVE IO_THREAD, or both: a reconnect, which must acknowledge what the
    replica already holds (WL1720.LIVE.RELEASE, Bug #104015) when its ack was lost before."""
    action, replica = d.choice(["stop", "start", "restart"]), d.choice(b.state["replicas"])
    if action != "start":
        b.op("stop_slave", replica, thread="io")
    if action != "stop":
        b.op("start_slave", replica, thread="io")


def lose_acks(b: Builder, d: Draw) -> None:
    """A replica's next acks are lost on the way back. Maybe a client then commits and, its COMMIT
    still waiting once that replica holds the transaction (Rpl_semi_sync_master_wait_sessions; the
    reference model's Trace says when), the DBA restarts the replica's IO thread: the reconnect
    must acknowledge what the replica holds (WL1720.LIVE.RELEASE; Bug #104015's trigger). Left to
    a lost ack, a commit and a reconnect in that order within one timeout, a search needed 300
    examples."""
    primary, replica = b.state["primary"], d.choice(b.state["replicas"])
    b.op("lose_acks", replica, count=d.integer(1, 2))
    if not d.boolean():
        return
    trx = b.trx_name()
    b.op("trx", primary, trx=trx, statements=[{}])
    _, obs = b.trace("wl7318")
    held = next((o["t"] for o in obs if o["kind"] == "relay" and o["node"] == replica and o.get("trx") == trx and o.get("last")), None)
    returned = next((o["t"] for o in obs if o["kind"] == "commit" and o.get("trx") == trx), None)
    if held is None or (returned is not None and returned <= held):
        return  # no session waits once the replica holds it
    b.now = held + 1
    b.op("stop_slave", replica, thread="io")
    b.op("start_slave", replica, thread="io")


def set_enabled(b: Builder, d: Draw) -> None:
    b.op("set_global", b.state["primary"], variable="rpl_semi_sync_master_enabled", value=d.boolean())


def set_wait_for_slave_count(b: Builder, d: Draw) -> None:
    """SET GLOBAL rpl_semi_sync_master_wait_for_slave_count. Raised past the replicas there are (3),
    the next commit hangs; maybe the DBA then lowers it to the replicas that acknowledged it, as
    SHOW STATUS shows them once their acks have come (the reference model's Trace says when): the
    acks already received count against the new N, so the commit returns (WL7169.N_DISTINCT; Bug
    #109829's N-1 slot table, sized for the old N, missed them). Left to single steps, which had to
    take a commit and the SET inside one timeout in that order, no state machine reached it."""
    primary, count = b.state["primary"], d.integer(1, 3)
    b.op("set_global", primary, variable="rpl_semi_sync_master_wait_for_slave_count", value=count)
    if count < 3 or not d.boolean():
        return
    trx, start = b.trx_name(), b.now
    b.op("trx", primary, trx=trx, statements=[{}])
    _, obs = b.trace("wl7318")
    returned = next((o["t"] for o in obs if o["kind"] == "commit" and o.get("trx") == trx), None)
    acks = [o for o in obs if o["kind"] == "ack" and o["node"] == primary and o["t"] >= start
            and (returned is None or o["t"] < returned)]
    b.now = max((o["t"] for o in acks), default=b.now) + 1
    b.op("set_global", primary, variable="rpl_semi_sync_master_wait_for_slave_count",
         value=max(1, len({o["replica"] for o in acks})))


def timeout_then_catch_up(b: Builder, d: Draw) -> None:
    """Every replica's IO thread stops, a commit times out (the status switches OFF), and after a
    while they start again and catch up: the status must switch back ON by itself (WL1720.SWITCH_BACK,
    with wait_for_slave_count WL7169.SWITCH_BACK_N). Left to single steps, 6 in 1,000 Histories did this."""
    for r in b.state["replicas"]:
        b.op("stop_slave", r, thread="io")
    commit(b, d)
    b.now += d.choice([1, 3, 6]) * US
    for r in b.state["replicas"]:
        b.op("start_slave", r, thread="io")


def shutdown_and_restart(b: Builder, d: Draw) -> None:
    """A clean shutdown and a start, a moment after the last step: at once, or while a commit
    still waits for its ack (MDEV-11853: what shutdown does to waiting sessions). Maybe the DBA
    shuts down a busy primary: a client's COMMIT binlogged and waiting for its ack, which no
    replica (1 ms away at least) has sent yet. Left to a commit step just before, a search of 60
    examples drew none with a session waiting."""
    primary = b.state["primary"]
    b.now += d.choice([0, 1, 10 * MS])
    if d.boolean():
        b.op("trx", primary, trx=b.trx_name(), statements=[{}])
        b.now += 1  # past its binlog write
    b.op("shutdown", primary)
    b.now += d.integer(0, 2 * US)
    b.op("restart", primary)


def crash_and_failover(b: Builder, d: Draw) -> None:
    """The primary dies, maybe after a partition cut one replica off inside a group (partition),
    maybe with a client's COMMIT in flight: binlogged, sent to no replica yet,
    cut off by the crash (MDEV-21117's in-doubt transaction, which the primary's recovery as a
    replica must roll back; left to a commit step just before, few searches had one). The replica
    holding most of its binlog takes over, as an operator would choose (the reference model's Trace
    so far says which): most of its groups whole, as Gtid_IO_Pos counts them. Counting relayed
    events chose a replica whose reconnects had relayed fake Rotates and format descriptions again,
    or the start of a group cut in transfer."""
    primary, replicas = b.state["primary"], b.state["replicas"]
    if d.boolean():
        partition(b, d)
    if d.boolean():
        b.op("trx", primary, trx=b.trx_name(), statements=[{}])
        b.now += 1  # past its binlog write, before any replica (1 ms away at least) has it
    b.op("crash", primary)
    b.now += d.integer(1, US)
    _, obs = b.trace("wl7318")
    relayed = {r: len({o["gtid"] for o in obs if o["kind"] == "relay" and o["node"] == r and o.get("source") == primary
                       and o.get("last")}) for r in replicas}
    new = max(replicas, key=lambda r: (relayed[r], r == "B"))
    b.op("failover", new)
    # The new primary takes the old one's semi-sync settings (a failover tool's SET GLOBALs): left
    # to set_enabled after the failover, few searches reached a semi-sync primary B (S9's trigger).
    b.op("set_global", new, variable="rpl_semi_sync_master_enabled", value=True)
    b.op("set_global", new, variable="rpl_semi_sync_master_wait_for_slave_count", value=b.state["wait_for_slave_count"])
    rest = [r for r in replicas if r != new]
    for r in rest:  # the operator starts the IO thread of each other replica (a STOP or a cut may have stopped it)
        b.op("start_slave", r, thread="io")
    # drawn without the wait, a commit came within the drain in 2 of 600 Histories
    b.wait_for_promotion(new, "wl7318")
    b.state.update(primary=new, replicas=rest, failed_over=True, crashed=primary)


def partition(b: Builder, d: Draw) -> None:
    """The network to one replica drops while the primary sends it a client's commit, and stays
    down (cut_io inside the group, then stop). The primary dies once that COMMIT returned and the
    replicas still connected hold the group (the reference model's Trace says when; a commit that
    returned at once, the status OFF, would die with the primary). The failover elects a replica
    that holds it, and the partitioned one, started on the new primary, gets the whole group by
    GTID on top of the partial copy in its relay log, which must be rolled back (known bugs §1.2;
    MySQL at the new source's format description event). Left to a cut, a commit and a failover in
    that order with no START between, a search of 600 examples of the semisync family's four
    steps reached it."""
    primary, node, statements = b.state["primary"], d.choice(b.state["replicas"]), d.integer(1, 2)
    b.op("cut_io", node, after_events=d.integer(1, statements + 1), then="stop")  # a group: GTID, statements, XID
    trx = b.trx_name()
    b.op("trx", primary, trx=trx, statements=[{}] * statements)
    _, obs = b.trace("wl7318")
    b.now = 1 + max([b.now] + [o["t"] for o in obs if o.get("trx") == trx and (
        o["kind"] == "commit" or (o["kind"] == "relay" and o["node"] != node and o["last"]))])


def restart_as_replica(b: Builder, d: Draw) -> None:
    """The crashed primary starts again with --init-rpl-role=SLAVE, so that its recovery rolls back
    and truncates what its crash left in doubt (MDEV-21117), and rejoins the new primary by GTID."""
    b.now += d.integer(1, 2 * US)
    b.op("restart", b.state["crashed"], init_rpl_role="SLAVE", master=b.state["primary"])
    b.state["crashed"] = None


def crashed_primary_down(b: Builder) -> bool:
    return bool(b.state.get("crashed"))


def not_failed_over(b: Builder) -> bool:
    """One failover per History: after it the old primary is gone for good."""
    return not b.state["failed_over"]


FAMILY = Family("semisync", topology, (
    TIME_PASSES, Step("commit", 1, commit), Step("another_session_reads", 1, another_session_reads),
    Step("io_thread", 1, io_thread), Step("lose_acks", 1, lose_acks), Step("set_enabled", 1, set_enabled),
    Step("set_wait_for_slave_count", 1, set_wait_for_slave_count), Step("timeout_then_catch_up", 1, timeout_then_catch_up),
    Step("shutdown_and_restart", 1, shutdown_and_restart, not_failed_over),
    Step("crash_and_failover", 1, crash_and_failover, not_failed_over),
    Step("restart_as_replica", 1, restart_as_replica, crashed_primary_down), CUT_IO,
    # not stop_server: the family's own shutdown, crash and failover keep its state (who is primary, who is down)
    VO.step("commit_any_kind", "binlog_statement", "set_runtime", "master_delay", "flush_relay_logs", "clock_step", "on_the_primary")),
    tail_us=TAIL_US,
    features=("semisync", "delay", "partial"))
