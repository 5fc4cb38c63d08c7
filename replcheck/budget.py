"""What a History may cost in memory: its Trace, held whole while it is simulated and judged.

A Trace is held as one dict per observation (about 0.6 KB each), and its text as much again when
it is written; nearly all of it follows from the binlog events the History's transactions make
and the servers each event reaches (its source, then every replica downstream relays, applies
and may binlog it again). So the cost of a History is counted in event copies: per op, the
events it writes (a transaction: its statements, its GTID and its commit; FLUSH LOGS and an
incident: a rotation), times the servers its node's binlog reaches. bench/check_cost.py measures
about 3 KB per copy for `simulate` (the Trace and its text) and 2.5 KB for `verify`'s judging
(the Trace and the properties' indexes): MAX_EVENT_COPIES keeps either near 3 GB.
"""
from __future__ import annotations

from typing import Iterable

MAX_EVENT_COPIES = 1_000_000
ROTATES = ("flush_logs", "record_incident")


def reach(topology: dict) -> dict[str, int]:
    """Per node, the servers its binlog reaches: itself and every replica downstream of it."""
    below: dict[str, set[str]] = {}
    for c in topology.get("channels", []):
        below.setdefault(c["source"], set()).add(c["replica"])

    def downstream(node: str) -> set[str]:
        seen, todo = set(), [node]
        while todo:
            for r in below.get(todo.pop(), ()):
                if r not in seen:
                    seen.add(r)
                    todo.append(r)
        return seen - {node}
    return {n["id"]: 1 + len(downstream(n["id"])) for n in topology["nodes"]}


def over(topology: dict, ops: Iterable[tuple[int, dict]]) -> tuple[int, int] | None:
    """(the line of the op at which the event copies pass MAX_EVENT_COPIES, the copies up to it), or None."""
    servers, copies = reach(topology), 0
    for line, op in ops:
        if op["op"] == "trx":
            events = len(op.get("statements", ())) or 1
            copies += (events + 2) * servers.get(op.get("node"), 1)
        elif op["op"] in ROTATES:
            copies += 2 * servers.get(op.get("node"), 1)
        if copies > MAX_EVENT_COPIES:
            return line, copies
    return None
