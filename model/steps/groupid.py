"""Global group IDs' and crash recovery's steps: three --rpl-hierarchical servers, commits on the
root (some failing part-way), local writes on slaves (filtered), crashes armed at every crash point of the design and inside
or after a binlog write before its sync, kill -9 or a machine crash (with the durable settings
only: sync_binlog = 1, innodb_flush_log_at_trx_commit = 1), clean restarts (one with its .state file
deleted while down), FLUSH LOGS, SET BINLOG_GROUP_ID, PURGE BINARY LOGS, reconnects by group ID,
failover to the most advanced slave and restores of the failed master."""
from __future__ import annotations

from typing import Callable

from ..recovery import COMMIT_POINTS, CRASH_POINTS, FLUSH_LOG, MACHINE, SYNC_BINLOG, WRITE_POINTS
from . import US, TAIL_US, TIME_PASSES, Builder, Draw, Family, Step, StepFn
from . import vocabulary as VO


class GroupIds:
    """The group-ID steps once their arguments are drawn: `h` is the Builder growing the History.

    Three --rpl-hierarchical servers, a root master A with slaves B and C side by side (fan-out)
    or chained A -> B -> C. A step that does not apply does nothing, so that deleting a step
    while shrinking leaves the meaning of the steps after it alone."""

    SERVERS = ("A", "B", "C")
    LATENCIES = (0, 1000, 200_000)
    # rpl_transaction_enabled of A, B, C: whether InnoDB's copy of the SQL thread's position
    # overrides relay-log.info at crash recovery (off on one slave: recovery trusts the file)
    TRANSACTIONAL = ((True, True, True), (True, False, True), (True, True, False))
    # (sync_binlog, innodb_flush_log_at_trx_commit) of every server. A machine crash is drawn only
    # with (1, 1): with the others it loses what slaves already hold (or, for the engine, what
    # they applied), which the servers do not promise to survive and the model does not repair.
    DURABILITY = ((0, 1), (1, 1), (1, 1), (2, 1), (0, 2), (1, 2))

    # Most Histories run three --rpl-hierarchical servers; a few have a slave started without
    # --log-slave-updates, which --rpl-hierarchical needs (refused at start, GGID.STARTUP.OPTIONS).
    # Not a root without --rpl-hierarchical (GGID.MIXED_MODE): its group IDs are 0, so the crash
    # steps replay groups in every mixed topology (README), and that requirement has its Histories.
    OPTIONS = ("hierarchical",) * 19 + ("slave-without-log-slave-updates",)

    def __init__(self, h: Builder, chain: bool, latency: int, transactional: tuple[bool, ...],
                 durability: tuple[int, int], options: str = "hierarchical"):
        links = [("A", "B"), ("B", "C")] if chain else [("A", "B"), ("A", "C")]
        settings = {SYNC_BINLOG: durability[0], FLUSH_LOG: durability[1]}
        nodes = [{"id": n, "rpl_hierarchical": True, "rpl_transaction_enabled": t, "variables": settings}
                 for n, t in zip(self.SERVERS, transactional)]
        if options == "slave-without-log-slave-updates":
            nodes[2]["log_slave_updates"] = False
        self.durable = durability == (1, 1)
        h.topology(900_000, nodes, [{"source": s, "replica": r, "latency_us": latency} for s, r in links])
        self.h = h
        self.root = h.state["primary"] = "A"  # the primary the shared steps commit on (model/steps/vocabulary.py)
        self.source = {r: s for s, r in links}
        self.failed: set[str] = set()  # failed masters: out of the system until restored

    def in_system(self, node: str) -> str:
        """The node, or the root if the node is a failed master awaiting its restore."""
        return self.root if node in self.failed else node

    def commit(self, statements: int, ddl: bool, lasts_us: int = 0) -> None:
        """A client transaction on the root. One whose statements last a while overlaps the commits
        drawn before it ends: one that began later commits first, and IDs must follow the binlog
        (GGID.MONOTONIC; gg-overlapping-commits)."""
        stmt = {"duration_us": lasts_us} if lasts_us else {}
        self.h.op("trx", self.root, trx=self.h.trx_name(), statements=[stmt] * statements, **({"ddl": True} if ddl else {}))

    def failing_statement(self, kind: str, after_changes: bool) -> None:
        """A statement on the root fails (a duplicate key, an unknown table), before changing anything
        or after changing rows of a MyISAM table or part of a DDL's work (model/srcerr.py); an InnoDB
        one is rolled back either way."""
        kw = {"engine": "myisam"} if kind == "myisam" else {"ddl": True} if kind == "ddl" else {}
        errno = 1051 if kind == "ddl" else 1062  # ER_BAD_TABLE_ERROR, ER_DUP_ENTRY
        self.h.op("trx", self.root, trx=self.h.trx_name(), error={"errno": errno, "after_changes": after_changes}, **kw)

    def local_write_on_slave(self, node: str) -> None:
        """A write on a slave itself: the slave's group IDs must filter it out."""
        if node != self.root and node not in self.failed:
            self.h.op("trx", node, trx=self.h.trx_name())

    def kind(self, machine: bool) -> dict:
        """A machine crash where the settings promise to survive one, else kill -9."""
        return {"kind": MACHINE} if machine and self.durable else {}

    def crash_at_point(self, node: str, point: str, pause: int, machine: bool = False) -> None:
        """Arm a crash point, drive a server through it (a commit on the root reaches every
        server's commit points, the root's own commit its binlog write's; a kill reaches the
        recovery points), then restart it."""
        h, node = self.h, self.root if point in WRITE_POINTS else self.in_system(node)
        h.op("crash", node, point=point, **self.kind(machine))
        if point in COMMIT_POINTS + WRITE_POINTS:
            h.op("trx", self.root, trx=h.trx_name())
        else:
            h.op("crash", node, **self.kind(machine))
        for _ in range(1 if point in COMMIT_POINTS + WRITE_POINTS else 2):  # a crash during recovery needs a second start
            h.now += pause
            h.op("restart", node)

    def crash_and_restart(self, node: str, pause: int, clean: bool, machine: bool = False) -> None:
        """kill -9, a machine crash (or a clean shutdown), then start again."""
        node = self.in_system(node)
        if clean:
            self.h.op("shutdown", node)
        else:
            self.h.op("crash", node, **self.kind(machine))
        self.h.now += pause
        self.h.op("restart", node)

    def state_file_lost(self, node: str, pause: int) -> None:
        """A clean shutdown, the binlog's .state file deleted while the server is down (binlogs
        copied without it, MDEV-6391), a start, and a status sample before anything else: the GTID
        state must be rebuilt from the binlog. A server that keeps no such file loses nothing."""
        node = self.in_system(node)
        self.h.op("shutdown", node)
        self.h.op("remove_state_file", node)
        self.h.now += pause
        self.h.op("restart", node)
        self.h.now += US  # past the next status sample (every 0.9 s)

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

    def purge_while_down(self, node: str, pause: int) -> None:
        """A slave is down while its master commits, rotates and purges what it lacks; then it
        starts and the master commits again: it must be refused (1236), not skip the purged group.
        The DBA rotates once the commit is in the master's binlog (SHOW MASTER STATUS; the reference
        model's Trace says when): a FLUSH LOGS at the commit's instant came first and the group went
        to the binlog kept, so no search purged what a slave lacked (known bugs §1.2's trigger)."""
        node = self.in_system(node)
        if node == self.root:
            return
        h, source = self.h, self.source[node]
        h.op("crash", node)
        self.commit(1, False)
        trx = h.ops[-1]["trx"]
        _, obs = h.trace()
        h.now = next((o["t"] + 1 for o in obs if o["kind"] == "binlog" and o["node"] == source and o.get("trx") == trx
                      and o["last"]), h.now)
        h.op("flush_logs", source)
        h.now += pause
        h.op("purge_binary_logs", source, before_us=h.now)
        h.op("restart", node)
        self.commit(1, False)

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

    def failover(self, pause: int, restore: bool = False) -> None:
        """The root dies; the slaves elect the most advanced of them (the model decides which). Maybe
        the design's failover test goes on (rpl_hier steps 8-9): the failed master is restored from
        a backup of the new root and reconnected by group ID (restore)."""
        if self.failed:  # one failed master at a time: it is restored before the next failover
            return
        h = self.h
        slaves = sorted(r for r, s in self.source.items() if s == self.root)
        h.op("crash", self.root)
        h.now += pause
        h.op("failover", slaves[0], elect=True)
        h.now += 1
        self._follow_promotion()
        if restore and self.failed:
            self.restore(self.root, by_group_id=True)

    def _follow_promotion(self) -> None:
        """The root is the server the model promoted, once it has (an operator would look)."""
        _, obs = self.h.trace()
        promoted = [o for o in obs if o["kind"] == "promoted"]
        if promoted and promoted[-1]["old"] == self.root:
            new = promoted[-1]["node"]
            self.failed.add(self.root)
            del self.source[new]
            self.source = {r: (new if s == self.root else s) for r, s in self.source.items()}
            self.root = self.h.state["primary"] = new

    def restore(self, donor: str, by_group_id: bool = False) -> None:
        """The failed master comes back as a slave of the new root, from a donor's backup; maybe then
        reconnected by its group ID, as the design's failover test has the restored server
        replicate from the new master (rpl_hier step 9), after a restore that took a while: the new
        root logged a group in its own name meanwhile. The master must place the slave after the
        group with its last ID and server_id, or refuse it (step 12: an alternate future,
        GGID.CONNECT_BY_ID); left to a failover, a commit, a restore and a reconnect step in that
        order, no state machine reached it."""
        if not self.failed:
            return
        node = sorted(self.failed)[0]
        if by_group_id:
            self.commit(1, False)
            self.h.now += US  # the backup is taken after it
        self.h.op("restore", node, **{"from": self.in_system(donor), "source": self.root})
        self.failed.discard(node)
        self.source[node] = self.root
        if by_group_id:
            self.connect_by_group_id(node)


def topology(b: Builder, d: Draw) -> None:
    b.state["g"] = GroupIds(b, d.boolean(), d.choice(GroupIds.LATENCIES), d.choice(GroupIds.TRANSACTIONAL),
                            d.choice(GroupIds.DURABILITY), d.choice(GroupIds.OPTIONS))


def _g(name: str, method: Callable[..., None], *draws: Callable[[Draw], object], weight: int = 1) -> Step:
    """The step `name`: draw the arguments, then take GroupIds' step. No preconditions: a step
    that does not apply does nothing (GroupIds says why)."""
    fn: StepFn = lambda b, d: method(b.state["g"], *(draw(d) for draw in draws))
    return Step(name, weight, fn)


def _server(d: Draw) -> str:
    return d.choice(GroupIds.SERVERS)


def _pause(d: Draw) -> int:
    return d.integer(300_000, 2 * US)


FAMILY = Family("groupid", topology, (
    TIME_PASSES,
    _g("commit", GroupIds.commit, lambda d: d.integer(1, 3), lambda d: d.boolean(), lambda d: d.choice([0, 0, 0, 2 * US])),
    _g("local_write_on_slave", GroupIds.local_write_on_slave, _server),
    _g("failing_statement", GroupIds.failing_statement, lambda d: d.choice(("innodb", "myisam", "ddl")), lambda d: d.boolean()),
    # twice as often: the design's hazards sit at its crash points
    _g("crash_at_point", GroupIds.crash_at_point, _server, lambda d: d.choice(CRASH_POINTS + WRITE_POINTS), _pause,
       lambda d: d.boolean(), weight=2),
    _g("crash_and_restart", GroupIds.crash_and_restart, _server, lambda d: d.integer(0, 2 * US), lambda d: d.boolean(),
       lambda d: d.boolean()),
    _g("restart", GroupIds.restart, _server),
    _g("state_file_lost", GroupIds.state_file_lost, _server, _pause),
    _g("flush_logs", GroupIds.flush_logs, _server),
    _g("set_group_id", GroupIds.set_group_id, lambda d: d.integer(1, 1000)),
    _g("purge", GroupIds.purge, _server),
    _g("purge_while_down", GroupIds.purge_while_down, _server, _pause),
    _g("connect_by_group_id", GroupIds.connect_by_group_id, _server),
    # The state machine's failover and restore, which do nothing when they do not apply; the
    # generator of version 3 had preconditions instead and did not draw them.
    _g("failover", GroupIds.failover, lambda d: d.integer(0, US), lambda d: d.boolean()),
    _g("restore", GroupIds.restore, _server),
    # no master_delay (MASTER_DELAY came with 5.6): the design's servers are 5.0's
    VO.step("commit_portable", "binlog_statement", "set_runtime", "flush_relay_logs", "clock_step", "on_the_primary",
              "network", "stop_server")),
    tail_us=TAIL_US,
    features=("groupid", "recovery", "srcerr"))
