"""A full disk under a server's binlog. The servers do not fail the write: the binlog is opened
with MY_WAIT_IF_FULL (MYSQL_BIN_LOG::open, sql/log.cc), so my_write (mysys/my_write.c) meets
ENOSPC by calling wait_for_free_space (mysys/errors.c), which logs "Disk is full writing ...
Waiting for someone to free space..." and sleeps MY_WAIT_FOR_USER_TO_FIX_PANIC (60 s) before it
tries again. The writer holds LOCK_log meanwhile, so every binlog write behind it waits too, and
its client's COMMIT returns once the retry after the space is freed succeeds: no error, no
incident. Seen on MariaDB 10.11.19 with the binlog on a 1 MiB tmpfs: a commit that met the full
disk at 14:43:11, space freed at 14:43:29, both it and the commit queued behind it returned at
14:44:11.99; the GTID was in @@gtid_binlog_pos while it waited.
"""
from __future__ import annotations

from replcheck.spec import formats as F
from .component import Feature
from .state import Node

RETRY_US = F.DISK_FULL_RETRY_US


class DiskFull(Feature):
    """The `disk_full` op and the binlog writes it holds back."""

    def op_disk_full(self, node: Node, op: dict) -> None:
        node.disk_full = (self.sim.now, self.sim.now + op["duration_us"])
        self.emit("disk_full", node.id, until=node.disk_full[1])
        self.at(node.disk_full[1], self._freed, node)

    def _freed(self, node: Node) -> None:
        self.emit("disk_freed", node.id)

    def full(self, node: Node) -> bool:
        """Whether the node's binlog disk is full now."""
        full_from, freed = node.disk_full or (0, 0)
        return full_from <= self.sim.now < freed

    def binlog_write_at(self, node: Node) -> int:
        """When a binlog write the node starts now is done: now, or, while its disk is full, at the
        first retry after the space is freed; a write behind a waiting one goes once it is done."""
        now = self.sim.now
        if node.binlog_waits_until > now:
            return node.binlog_waits_until
        if not self.full(node):
            return now
        freed = node.disk_full[1]
        node.binlog_waits_until = now + -(-(freed - now) // RETRY_US) * RETRY_US
        self.emit("binlog_wait", node.id, file=node.binlog_file, until=node.binlog_waits_until)
        return node.binlog_waits_until
