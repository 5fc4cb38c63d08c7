"""The parallel applier: a replica's SQL thread as a coordinator that hands
whole groups to worker threads.

What the servers do, and so what the simulator does with a parallel replica:
- The coordinator (MariaDB's SQL driver thread, MySQL's coordinator) reads the relay log as the
  serial SQL thread does: it takes the MASTER_DELAY wait, the skip counter, UNTIL and an incident
  itself, before a group is queued (MariaDB sql/slave.cc, exec_relay_log_event: sql_delay_event,
  then apply_event_and_update_pos -> rpl_parallel::do_event; MySQL sql/rpl_replica.cc, the same
  function, before the event is assigned to a worker in Mts_submode_logical_clock::schedule_next_event).
- A worker executes the group (its statements' replica cost) and commits it. Where the server
  preserves commit order, the commit waits for the group before it: MariaDB within a domain always
  (sql/rpl_parallel.cc, register_wait_for_prior_event_group_commit, then
  finish_event_group -> wait_for_prior_commit), MySQL with replica_preserve_commit_order=ON
  (sql/rpl_replica_commit_order_manager.cc, Commit_order_manager::wait). Otherwise (MySQL with it
  OFF) a group commits when its worker is done: later groups may commit before earlier ones.
- MariaDB's conservative mode starts a group only once the group before it in its domain reached
  its commit (do_gco_wait: a new group-commit id waits for the prior ones to start committing; the
  model's source gives every transaction a group-commit id of its own); optimistic and aggressive
  start it at once (and roll back and retry on a conflict: the harness's transactions write distinct
  rows, so none conflict and no retry happens).
- MariaDB runs each GTID domain as a stream of its own: rpl_parallel::find(domain_id)
  (sql/rpl_parallel.cc) gives every domain an rpl_parallel_entry with its own threads
  (slave_domain_parallel_threads), its own group-commit orderer (current_gco) and its own prior
  commit to wait for, so a long group in one domain holds back neither the start nor the commit of
  another domain's groups; commit order and conservative mode's wait hold within a domain. MySQL
  has no domains: its order is the source's binlog order (the model's streams are then all 0).
- The position relay-log.info and Exec_Master_Log_Pos keep is the low-water mark: the start of the
  oldest group not committed (MariaDB handle_queued_pos_update moves it only forwards, in queue
  order; MySQL's checkpoint, Relay_log_info::mts_checkpoint_routine, to the lowest worker's
  position). Groups committed past it are MySQL's gaps; its workers' info (the worker's
  group_executed bitmap, rpl_rli_pdb.cc Slave_worker::commit_positions) says which they are, and
  crash recovery (rpl_replica.cc mts_recovery_groups) makes the coordinator skip them when it
  reads the relay log again from the low-water mark.
- STOP SLAVE waits for the workers to finish what was queued (MariaDB rpl_parallel::wait_for_done,
  MySQL slave_stop_workers): the model commits the queued groups at the stop; a crash leaves the
  uncommitted ones rolled back.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# The variables' names are the Trace's vocabulary, shared with the harness and the cross-check.
from replcheck.spec.vocabulary import MARIADB_VARIABLES, MODE, MYSQL_VARIABLES, PRESERVE, THREADS, WORKERS

MODES = ("none", "minimal", "conservative", "optimistic", "aggressive")
CONSERVATIVE = "conservative"
MAX_THREADS = 16383  # MariaDB's slave_parallel_threads range (sys_vars.cc); MySQL's workers: 1024
# The variables MariaDB refuses to change while a slave runs: sys_vars.cc check_slave_parallel_threads
# and the slave_parallel_mode check both call give_error_if_slave_running (ER_SLAVE_MUST_STOP).
STOPPED_ONLY = (THREADS, MODE)


@dataclass(frozen=True)
class Settings:
    workers: int
    mode: str  # MariaDB's slave_parallel_mode; "logical_clock" for MySQL
    preserve: bool  # commit order preserved (per domain)

    def as_fields(self) -> dict:
        return {"workers": self.workers, "mode": self.mode, "preserve_commit_order": self.preserve}


def known(mariadb: bool) -> tuple[str, ...]:
    """The settings a server knows by name: each server only its own (the other's are unknown)."""
    return MARIADB_VARIABLES if mariadb else MYSQL_VARIABLES


def settings(variables: dict, mariadb: bool) -> Settings | None:
    """The applier a replica starts with these variables (None: the serial SQL thread), read by
    the server's own names. MariaDB's mode defaults to optimistic (10.5 on) and always keeps commit
    order within a domain; MySQL's is LOGICAL_CLOCK with replica_preserve_commit_order (ON from 8.0.27)."""
    if mariadb:
        threads = int(variables.get(THREADS) or 0)
        mode = str(variables.get(MODE) or "optimistic").lower()
        return Settings(threads, mode, True) if threads and mode != "none" else None
    workers = int(variables.get(WORKERS) or 0)
    if workers:
        return Settings(workers, "logical_clock", bool(variables.get(PRESERVE, True)))
    return None


def check(name: str, value) -> str | None:
    """Why SET GLOBAL refuses this value (None: accepted)."""
    if name in (THREADS, WORKERS):
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_THREADS
        return None if ok else f"Variable '{name}' can't be set to the value of '{value}'"
    if name == MODE:
        return None if str(value).lower() in MODES else f"Variable '{name}' can't be set to the value of '{value}'"
    return None if isinstance(value, bool) or value in (0, 1, "ON", "OFF") else f"Variable '{name}' can't be set to the value of '{value}'"


def value_of(name: str, value):
    return value in (True, 1, "ON") if name == PRESERVE else str(value).lower() if name == MODE else value


@dataclass
class Group:
    """A group the coordinator queued to a worker."""

    first: int  # relay index of its first event
    last: int  # relay index of its last event
    before: tuple[str, int]  # Exec_Master_Log_Pos before it (the source's binlog file and position)
    domain: int
    worker: int
    start: int
    end: int
    commit_at: int
    committed: bool = False
    given_up: bool = False  # a STOP SLAVE gave it up before it started: read again at the next start
    failed: bool = False  # its binlog write was refused (or one it waited for was): rolled back at the stop


@dataclass
class Applier:
    """A parallel replica's workers: who is free when, and the groups queued and not yet retired."""

    settings: Settings
    free: list[int] = field(default_factory=list)
    queued: list[Group] = field(default_factory=list)
    last_commit: dict = field(default_factory=dict)  # domain -> when its last queued group commits
    last_end: dict = field(default_factory=dict)  # domain -> when its last queued group reaches its commit (conservative mode)
    cost: int = 0  # the replica cost of the group the coordinator is reading
    # ends of groups a filter passed while a worker still held an earlier group: each ends once the
    # group queued last before it retires (the worker's record_gtid commits in commit order)
    held: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.free = self.free or [0] * self.settings.workers

    def queue(self, now: int, first: int, last: int, before: tuple[str, int], domain: int, in_order: bool = True) -> Group:
        """Hand a whole group to the worker free first (the lowest numbered among equals:
        deterministic). `in_order` False is the commit-order mutant's seam."""
        w = min(range(len(self.free)), key=lambda i: (self.free[i], i))
        start = max(now, self.free[w])
        if self.settings.mode == CONSERVATIVE:
            start = max(start, self.last_end.get(domain, 0))
        end = start + self.cost
        commit = max(end, self.last_commit.get(domain, 0)) if self.settings.preserve and in_order else end
        self.free[w] = commit  # a worker waiting for a prior commit holds its group till then
        self.last_commit[domain] = max(commit, self.last_commit.get(domain, 0))
        self.last_end[domain] = max(self.last_end.get(domain, 0), end)
        self.cost = 0
        g = Group(first, last, before, domain, w + 1, start, end, commit)
        self.queued.append(g)
        return g

    def retire(self) -> list[Group]:
        """Drop the committed groups at the head of the queue: the low-water mark moves past them."""
        done = []
        while self.queued and self.queued[0].committed:
            done.append(self.queued.pop(0))
        return done

    def end_after(self, passed) -> bool:
        """Hold the end of a group a filter passed behind the group queued last while a worker
        holds an uncommitted one; False: nothing earlier is pending, it ends now."""
        if not self.pending():
            return False
        self.held.append((self.queued[-1], passed))
        return True

    def held_due(self, given_up: bool = False) -> list:
        """The held ends whose group before them is retired, in order (taken off the list); or, a
        stop having given up groups, every one left."""
        due = [h for h in self.held if given_up or h[0] not in self.queued]
        self.held = [h for h in self.held if h not in due]
        return [passed for _, passed in due]

    def pending(self) -> bool:
        return any(not g.committed for g in self.queued)

    def gaps(self) -> list[Group]:
        """Groups committed past the low-water mark (the oldest uncommitted group)."""
        return [g for g in self.queued if g.committed]
