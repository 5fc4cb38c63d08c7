"""A server's configuration over a Trace: the header's variables, changed by the options a restart
started it with (the `restart` observation's `variables`: my.cnf edited while it was down), which hold
through later restarts; SET GLOBAL changes are each feature's to follow, and end at a restart."""
from __future__ import annotations

from bisect import bisect_right

from .core import TraceView


def _after_restarts(v: TraceView, node: str) -> tuple[list[int], list[dict]]:
    """The lines of the node's restarts (after a -1 for its start) and its configuration from each on."""
    def build() -> tuple[list[int], list[dict]]:
        lines, configs = [-1], [dict(v.nodes.get(node, {}).get("variables", {}))]
        for o in v.of_node(node, "restart"):
            lines.append(o["_line"])
            configs.append({**configs[-1], **(o.get("variables") or {})})
        return lines, configs
    return v.memo(("configuration", node), build)


def configured(v: TraceView, node: str, line: int) -> dict:
    """The node's configuration once every restart up to this trace line (included) started it (shared:
    not to be changed)."""
    lines, configs = _after_restarts(v, node)
    return configs[bisect_right(lines, line) - 1]


def reconfigured(v: TraceView, node: str) -> bool:
    """Whether a restart changed the node's configuration."""
    _, configs = _after_restarts(v, node)
    return any(c != configs[0] for c in configs[1:])


def with_workers(v: TraceView, s: dict) -> bool:
    """Whether the sample's SQL thread runs workers (its last `parallel` observation): its
    Seconds_Behind_Master follows the groups the workers commit, not the event in hand (the
    parallel applier's requirements judge it, properties/parallel.py)."""
    # most Traces run no workers: the nodes that ever do, found once, spare the bisect per sample
    starts = v.memo("configuration.workers", lambda: {o["node"] for o in v.kind("parallel") if o.get("workers")})
    if s["node"] not in starts:
        return False
    last = v.of_node(s["node"], "parallel").last_before(s["_line"])
    return last is not None and bool(last.get("workers"))
