"""What every component of the simulator shares: the kernel it runs in, its parts, and the hooks
by which a feature joins the replication core.

A component is one mechanism of a server with the rules that drive it (the source's binlog
writes, the receiver, the applier, ...). It reads the clock and queues and emits through the
kernel, and calls the other components through their public methods only, by the names the
kernel gives them (`self.receiver`, `self.applier`, ...).

A feature (a `Feature` component) changes the core at named moments instead of inline branches:
it defines a method of a hook's name, and the core calls every such method there, in the order
of the kernel's parts.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Protocol


# The moments a feature joins the core at, with what each method is given and answers.
HOOKS = {
    "on_server_start": "(node): a server starts, at set-up or a restart, from its configuration",
    "on_restart": "(node): a restarted (or restored) server has recovered, before its binlog reopens",
    "on_crash": "(node): the server's process or machine dies",
    "on_trx_begin": "(node, trx): a client transaction begins",
    "statement_error": "(node, trx, start, op) -> (fields, code) | None: a client statement's error: the fields "
                       "its answer carries and the error code its event does; None once the feature answered",
    "on_commit": "(node, trx, start, op) -> fields | None: a client commit reaches its binlog write; the fields its "
                 "answer carries, or None once the feature has answered it",
    "on_commit_written": "(node, trx, gtid, start, skip, fields) -> bool: the commit's group is in the binlog; "
                         "True: the feature answers the client",
    "on_connect": "(ch): the IO thread connected to its source",
    "on_disconnect": "(ch): the IO thread's connection ends",
    "on_event_queued": "(ch, entry): the IO thread queued an event from its source in the relay log",
    "place_gtid_request": "(ch) -> (placed, reason | None): the dump thread places a request by GTID; placed: "
                          "the feature did, refusing it for the reason or not",
    "on_dump_event": "(ch, entry) -> str: as the dump thread sends an event: \"skip\" it, a reason the dump "
                     "fails, or \"\" to send it",
    "binlog_write_at": "(node) -> t: when a binlog write the node starts now is done (later while its disk is full)",
    "refuses_binlogging": "(node, gtid) -> str: why a GTID may not be binlogged now, or \"\"",
    "on_gtid_connect": "(ch): the IO thread connects asking by GTID",
    "on_dump_start_at": "(ch, entry | None): the dump thread starts at this binlog entry (None: the end)",
    "counts_for_cut": "(ch) -> bool: the event arriving counts as one the relay log gets",
    "queues": "(ch, entry) -> entry | None: what the IO thread queues of an arriving event; None: nothing",
    "on_dump_start": "(ch, by): the source's dump thread starts sending, asked by position, GTID or group ID",
    "on_set_global": "(node, name, value, op) -> bool: SET GLOBAL of a variable; True: the feature's, answered",
    "on_flush_status": "(node): FLUSH STATUS",
    "on_reset_master": "(node): RESET MASTER (or SET GLOBAL gtid_binlog_state) emptied the node's binlog",
    "initial_variables": "(node, variables): what a server starts with, for the Trace's header",
    "samples_server_status": "(node) -> bool: a status sample reads the server's global status",
    "status_variables": "(node, variables): SHOW GLOBAL STATUS and VARIABLES, values to add",
    "slave_hosts": "(node, hosts): SHOW SLAVE HOSTS, rows to add",
    "on_group_read": "(ch, entry) -> bool | None: the SQL thread reads a group's first event; True: it stopped, "
                     "False: the feature let the group through, None: not the feature's",
    "decides_when_due": "(ch, event) -> bool: the feature decides this group once it is due, not when read",
    "sends": "(ch, event) -> bool: the source's dump thread sends the event to this replica",
    "ignores_group": "(ch, event) -> str: a reason to ignore the group the SQL thread reads, before any skip "
                     "counts it, or \"\"",
    "filters_group": "(ch, event) -> str: a reason the group just read is kept from the engine, or \"\"",
    "on_group_due": "(ch, event) -> str | None: a group's first event is due (past MASTER_DELAY); \"wait\", a "
                    "reason to skip the group, or None to apply it",
    "on_group_released": "(ch, gtid): the channel's group of this GTID committed or was filtered; gtid None: its SQL thread stopped",
    "on_group_binlogged": "(ch, end) -> bool: an applier's group is in its node's binlog; True: the feature holds "
                          "its end (applier.py HeldCommit) and calls end(how) to release it",
    "on_group_end": "(ch, entry, first) -> bool: the SQL thread ends a group; True: the feature committed it",
    "on_binlog_close": "(node): the open binlog closes",
    "on_binlog_open": "(node): a new binlog opens",
    "on_shutdown": "(node): a clean shutdown begins",
    "on_recover": "(node) -> bool: start-up recovery; False: the start ends there",
    "on_resume": "(node): recovery is done, replication not yet started",
    "on_promote_replica": "(ch, primary) -> bool: a failover moves a replica to the new primary; True: done",
    "status_fields": "(ch, fields): SHOW SLAVE STATUS of a channel, fields to add",
    "master_status_fields": "(node, fields): SHOW MASTER STATUS, fields to add",
}


class Kernel(Protocol):
    """What a component may use of the kernel it runs in (kernel.py's Simulator)."""

    now: int  # the virtual clock: µs of true time
    epoch: int
    nodes: dict
    history: dict  # the History's header, and its ops queued so far
    obs: list[dict]
    last_stmt: dict[str, dict]
    filtering: bool
    mutants: frozenset | tuple  # (an empty tuple: none)
    mech: Any
    rule: Any

    def emit(self, kind: str, node: str, **fields: Any) -> None: ...

    def at(self, t: int, fn: Callable, *args: Any) -> None: ...

    def clock(self) -> int: ...

    def local(self, node: Any, t: int) -> int: ...

    def op(self, op: dict) -> None: ...

    def add_channel(self, replica: Any, source: Any, latency_us: int, delay: int = 0, connection: str | None = None,
                    clock_reply: str = "") -> None: ...


class Hooks:
    """Each hook's methods, in the order of the parts."""

    def __init__(self, parts: "list[Component]"):
        for name, places in _hook_places(tuple(type(p) for p in parts)).items():
            setattr(self, name, tuple(getattr(parts[i], name) for i in places))


@lru_cache(maxsize=None)
def _hook_places(classes: tuple[type, ...]) -> dict[str, tuple[int, ...]]:
    """Each hook's parts (their places), found once per set of classes rather than on every run's parts."""
    return {name: tuple(i for i, c in enumerate(classes) if issubclass(c, Feature) and hasattr(c, name)) for name in HOOKS}


class Component:
    def __init__(self, sim: Kernel):
        self.sim = sim
        self.mutants, self.mech, self.rule, self.nodes = sim.mutants, sim.mech, sim.rule, sim.nodes
        self.emit, self.at = sim.emit, sim.at

    def wire(self, name: str, parts: dict[str, "Component"], hooks: Hooks) -> None:
        """The other components, each by its name (this one's is `name`), and the features' hooks."""
        own = vars(self)
        own.update(parts)  # all at once, in C, then its own name taken back out: a fifth of a run's set-up
        del own[name]
        self.hooks = hooks

    # A fork (kernel.Simulator.fork) copies a component without its bound methods of the kernel and
    # the hooks, which the copy binds again (the kernel's __setstate__ makes the hooks): a fifth of
    # a fork's CPU was pickling and loading them.
    def __getstate__(self) -> dict:
        return {k: v for k, v in vars(self).items() if k not in ("emit", "at", "hooks")}

    def __setstate__(self, state: dict) -> None:
        vars(self).update(state)
        self.emit, self.at = self.sim.emit, self.sim.at


class Feature(Component):
    """A feature's component: it joins the core through the hooks it defines (HOOKS), and may have
    state and statements of its own."""

    def __init_subclass__(cls) -> None:
        unknown = [n for n in vars(cls) if n.startswith("on_") and n not in HOOKS]
        if unknown:
            raise TypeError(f"{cls.__name__}: no hook named {unknown[0]}")
