"""A server's configuration over a Trace: the header's variables, changed by the options a restart
started it with (the `restart` observation's `variables`: my.cnf edited while it was down), which hold
through later restarts; SET GLOBAL changes are each feature's to follow, and end at a restart."""
from __future__ import annotations

from .core import TraceView


def configured(v: TraceView, node: str, line: int) -> dict:
    """The node's configuration once every restart up to this trace line (included) started it."""
    settings = dict(v.nodes.get(node, {}).get("variables", {}))
    for o in v.of_node(node, "restart"):
        if o["_line"] > line:
            break
        settings.update(o.get("variables") or {})
    return settings


def reconfigured(v: TraceView, node: str) -> bool:
    """Whether a restart changed the node's configuration."""
    return any(o.get("variables") for o in v.of_node(node, "restart"))
