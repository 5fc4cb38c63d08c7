"""Semi-synchronous replication: WL#1720, with AFTER_SYNC (WL#6355) and wait_for_slave_count
(WL#7169) as MySQL and MariaDB added them.

The master side lives here: its status, the sessions waiting for acknowledgements, the acks
received per replica, the counters SHOW STATUS shows, and what SHOW SLAVE HOSTS says of each
replica. The simulator tells it when a transaction is binlogged, when an ack arrives and when a
replica connects or goes away; it answers whether a commit must wait and calls back when the
wait ends (ack, timeout, shutdown).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from . import mutants as M

AFTER_COMMIT, AFTER_SYNC = "AFTER_COMMIT", "AFTER_SYNC"
BINLOG_SEMI_SYNC = 0x02  # the BINLOG_DUMP flag a semi-sync replica sets
STATE_ACK_WAIT = "Waiting for semi-sync ACK from slave"  # a committing thread's state (the SQL thread's too)
SYNC_MAGIC = 0xEF  # first of the two header bytes the master reserves; the second is the sync flag
ER_SERVER_SHUTDOWN = 1053

VARIABLES = {  # name: default (MariaDB 10.11)
    "rpl_semi_sync_master_enabled": False,
    "rpl_semi_sync_master_timeout": 10000,  # ms
    "rpl_semi_sync_master_wait_point": AFTER_COMMIT,
    "rpl_semi_sync_master_wait_no_slave": True,
    "rpl_semi_sync_master_wait_for_slave_count": 1,
    "rpl_semi_sync_slave_enabled": False,
}

ER_WRONG_VALUE_FOR_VAR, ER_WRONG_TYPE_FOR_VAR = 1231, 1232


def check_value(name: str, value) -> tuple[object, int | None, str]:
    """(value as the server stores it, errno, message) for SET GLOBAL name = value."""
    default = VARIABLES[name]
    if isinstance(default, bool):
        if value in (True, False, 0, 1, "ON", "OFF"):
            return value in (True, 1, "ON"), None, ""
    elif isinstance(default, int):
        if not isinstance(value, int) or isinstance(value, bool):
            return None, ER_WRONG_TYPE_FOR_VAR, f"Incorrect argument type to variable '{name}'"
        if value >= (1 if name.endswith("wait_for_slave_count") else 0):
            return value, None, ""
    elif value in (AFTER_COMMIT, AFTER_SYNC):
        return value, None, ""
    return None, ER_WRONG_VALUE_FOR_VAR, f"Variable '{name}' can't be set to the value of '{value}'"


Pos = tuple[str, int]  # (binlog file, end position of the event)


@dataclass
class Waiter:
    trx: str
    gtid: str
    pos: Pos
    since: int
    release: Callable[[str], None]  # called with "yes", "no" or "shutdown"


@dataclass
class AckTable:
    """The acks received. Correct servers release a position once N distinct replicas acked at or
    past it: the per-replica maximum says exactly that (the z3 proof shows MySQL's N-1 slot table,
    evicting the minimum, computes the same). Bug #109829's table evicts the wrong slot; it is
    kept here as that mutant."""

    n: int
    buggy: bool = False
    maxack: dict[str, Pos] = field(default_factory=dict)
    slots: dict[str, Pos] = field(default_factory=dict)
    slot_released: Pos = ("", 0)

    def ack(self, replica: str, pos: Pos) -> None:
        self.maxack[replica] = max(self.maxack.get(replica, ("", 0)), pos)
        if self.buggy:
            self._slot_ack(replica, pos)

    def _slot_ack(self, replica: str, pos: Pos) -> None:
        if self.n <= 1:
            self.slot_released = max(self.slot_released, pos)
        elif replica in self.slots:
            self.slots[replica] = max(self.slots[replica], pos)
        elif len(self.slots) < self.n - 1:
            self.slots[replica] = pos
        else:  # full: release up to the minimum of the N acks, then evict a slot
            candidates = {**self.slots, replica: pos}
            below = [r for r, p in self.slots.items() if p < pos]
            victim = below[-1] if below else min(candidates, key=lambda r: (candidates[r], r))
            self.slot_released = max(self.slot_released, min(candidates.values()))
            candidates.pop(victim)
            self.slots = candidates

    @property
    def released(self) -> Pos:
        """The greatest position N distinct replicas have reached."""
        if self.buggy:
            return self.slot_released
        ranked = sorted(self.maxack.values(), reverse=True)
        return ranked[self.n - 1] if len(ranked) >= self.n else ("", 0)

    def reached(self, pos: Pos) -> bool:
        return self.released >= pos


class SemiSyncMaster:
    def __init__(self, node: str, variables: dict, mutants: frozenset[M.Mutant], now: Callable[[], int],
                 emit: Callable[..., None], at: Callable[..., None], no_slave_commit: str = "switches"):
        self.node, self.mutants, self.now, self.emit, self.at = node, mutants, now, emit, at
        self.no_slave_commit = no_slave_commit  # Mechanics.no_slave_commit
        self.vars = {k: variables.get(k, v) for k, v in VARIABLES.items()}
        self.on = bool(self.vars["rpl_semi_sync_master_enabled"])
        self.off_reason = ""
        self.clients: set[str] = set()
        self.yes_tx = self.no_tx = 0
        self.waiters: list[Waiter] = []
        self.acks = self._table()
        self.binlog_end: Pos = ("", 0)

    def _table(self) -> AckTable:
        return AckTable(int(self.vars["rpl_semi_sync_master_wait_for_slave_count"]), M.MIN_ACK_LAST_SLOT in self.mutants)

    @property
    def enabled(self) -> bool:
        return bool(self.vars["rpl_semi_sync_master_enabled"])

    @property
    def wait_point(self) -> str:
        return self.vars["rpl_semi_sync_master_wait_point"]

    # -- configuration on the fly ---------------------------------------------------------------
    def set(self, name: str, value) -> None:
        was = self.enabled
        self.vars[name] = value
        if name == "rpl_semi_sync_master_enabled":
            if value and not was:
                self._switch(True, "enabled by the DBA")
            elif not value and was:
                self._switch(False, "disabled by the DBA")
                self._release_all("no")
        elif name == "rpl_semi_sync_master_wait_for_slave_count":
            self.acks.n = int(value)  # the acks already received count against the new N
            self._release_ready()

    # -- the commit path ------------------------------------------------------------------------
    def binlogged(self, pos: Pos) -> bool:
        """A transaction ending at pos was binlogged: must its commit wait for acknowledgements?"""
        self.binlog_end = max(self.binlog_end, pos)
        # Bug #80122: the master's OFF ignored while semi-sync replicas are connected
        ignores_off = M.SEMISYNC_WAITS_WHILE_DISABLED in self.mutants and bool(self.clients)
        if not self.enabled and not ignores_off:
            return False
        if self.on and not self.clients and not self.vars["rpl_semi_sync_master_wait_no_slave"]:
            if self.no_slave_commit == "keeps":  # returns unacknowledged, the status untouched
                self.no_tx += 1
                return False
            self._switch(False, "no semi-sync slave connected and rpl_semi_sync_master_wait_no_slave is OFF")
        if not self.on and not ignores_off:
            self.no_tx += 1
            return False
        return True

    def wait(self, trx: str, gtid: str, pos: Pos, release: Callable[[str], None]) -> None:
        w = Waiter(trx, gtid, pos, self.now(), release)
        if self.acks.reached(pos):  # acknowledged before the session started to wait
            self._release(w, "yes")
            return
        self.waiters.append(w)
        self.at(self.now() + int(self.vars["rpl_semi_sync_master_timeout"]) * 1000, self._timeout, w)

    def _timeout(self, w: Waiter) -> None:
        if w not in self.waiters:
            return
        file, pos = w.pos
        ack_file, ack_pos = self.acks.released
        self.emit("log", self.node, level="Warning", message=(
            f"Timeout waiting for reply of binlog (file: {file}, pos: {pos}), "
            f"semi-sync up to file {ack_file}, position {ack_pos}."))
        self._switch(False, f"timeout waiting for binlog {file} position {pos}")
        self._release_all("no")

    def _release(self, w: Waiter, how: str) -> None:
        if w in self.waiters:
            self.waiters.remove(w)
        if how == "yes":
            self.yes_tx += 1
        elif how == "no":
            self.no_tx += 1
        w.release(how)

    def _release_all(self, how: str) -> None:
        for w in list(self.waiters):
            self._release(w, how)

    def _release_ready(self) -> None:
        for w in list(self.waiters):
            if self.acks.reached(w.pos):
                self._release(w, "yes")

    # -- acknowledgements and replicas ----------------------------------------------------------
    def ack(self, replica: str, pos: Pos, connection: str | None = None) -> None:
        """A replica's reply; a named connection's (multi-source) says which, as that connection's
        other observations do (its relay log is that connection's own)."""
        self.emit("ack", self.node, replica=replica, file=pos[0], pos=pos[1], **({"connection": connection} if connection else {}))
        self.acks.ack(replica, pos)
        self._release_ready()
        if self.enabled and not self.on:
            caught_up = (self.acks.released >= self.binlog_end) or (
                M.SWITCH_BACK_FIRST_ACK in self.mutants and pos >= self.binlog_end)
            if caught_up:
                self._switch(True, f"semi-sync slave caught up at ({self.binlog_end[0]}, {self.binlog_end[1]})")

    def connect(self, replica: str, requested: bool) -> None:
        if requested:
            self.clients.add(replica)

    def disconnect(self, replica: str) -> None:
        self.clients.discard(replica)
        if self.enabled and self.on and not self.clients and not self.vars["rpl_semi_sync_master_wait_no_slave"]:
            self._switch(False, "no semi-sync slave connected and rpl_semi_sync_master_wait_no_slave is OFF")
            self._release_all("no")

    def needs_reply(self, last_of_group: bool) -> bool:
        """The sync flag of an event sent to a semi-sync replica: its transaction's last event only."""
        return self.enabled and last_of_group

    def kill(self, release: Callable[[str], None]) -> None:
        """The thread waiting with this release was killed: its wait ends unacknowledged, counted
        in no_tx (Repl_semi_sync_master::commit_trx leaves its loop on thd_killed and counts the
        transaction as not acknowledged, MariaDB sql/semisync_master.cc)."""
        for w in self.waiters:
            if w.release is release:
                self._release(w, "no")
                return

    def abandon(self) -> list[Waiter]:
        """The server died: its sessions are gone, and their waits with them."""
        gone, self.waiters = self.waiters, []
        return gone

    def shutdown(self) -> None:
        """Waiting sessions get an error; their transactions were not acknowledged (MDEV-11853)."""
        self._release_all("yes" if M.SHUTDOWN_ACKS_WAITERS in self.mutants else "shutdown")

    def _switch(self, on: bool, why: str) -> None:
        if on == self.on:
            return
        self.on = on
        self.off_reason = "" if on else why
        self.emit("log", self.node, level="Note", message=f"Semi-sync replication switched {'ON' if on else 'OFF'}: {why}")
        self.emit("server_status", self.node, variables=self.variables())

    def reset_master(self) -> None:
        """RESET MASTER (MariaDB semisync_master.cc, after_reset_master): the status is ON again if
        enabled, the counters and the positions waited for and acknowledged start again
        (rpl_semi_sync.result, '[ test reset master ]': ON, no_tx 0, yes_tx 0). The state and the
        counters change under one lock: the status the switch shows has them at 0."""
        self.yes_tx = self.no_tx = 0
        self._switch(self.enabled, "reset master")
        self.acks, self.binlog_end = self._table(), ("", 0)

    def flush_status(self) -> None:
        """FLUSH STATUS: the transaction counters start again; the status and the clients stay
        (MariaDB's rpl_semi_sync.result: no_tx 12 and yes_tx 15 before it, 0 and 0 after)."""
        self.yes_tx = self.no_tx = 0

    # -- what SHOW STATUS and SHOW SLAVE HOSTS say ----------------------------------------------
    def variables(self) -> dict:
        return {
            "Rpl_semi_sync_master_status": "ON" if self.enabled and self.on else "OFF",
            "Rpl_semi_sync_master_clients": len(self.clients),
            "Rpl_semi_sync_master_yes_tx": self.yes_tx,
            "Rpl_semi_sync_master_no_tx": self.no_tx,
            "Rpl_semi_sync_master_wait_sessions": len(self.waiters),
            "rpl_semi_sync_master_wait_for_slave_count": int(self.vars["rpl_semi_sync_master_wait_for_slave_count"]),
            "rpl_semi_sync_master_wait_point": self.wait_point,
        }

    def slave_host(self, replica: str, server_id: int, requested: bool) -> dict:
        if not requested:
            mode, why = "async", "the replica did not request semi-sync"
        elif not self.enabled:
            mode, why = "async", "semi-sync disabled on the master by the DBA"
        elif not self.on:
            mode, why = "async", self.off_reason
        else:
            mode, why = "semi-sync", "acknowledges every transaction"
        return {"Server_id": server_id, "replica": replica, "mode": mode, "reason": why}
