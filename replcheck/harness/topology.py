"""The servers of a run and the replication channels between them, checked before anything starts."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from replcheck.harness.errors import HarnessError, TopologyError
from replcheck.spec.formats import MAX_MASTER_DELAY

NODE_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")  # the History schema's id: also a safe directory name
# A multi-source replica's connection_name (the History schema's connection_name): it reaches SQL
# quoted and names relay-<name>.NNNNNN; '' is the default connection (valid_connection).
CONNECTION_NAME = re.compile(r"^[A-Za-z0-9_]{1,64}$")


def valid_connection(connection: object) -> bool:
    """A connection name CONNECTION_NAME allows, or '' (the default connection, named as such)."""
    return connection == "" or (isinstance(connection, str) and bool(CONNECTION_NAME.match(connection)))


MAX_SERVER_ID = 2**32 - 1


@dataclass(frozen=True)
class Node:
    id: str
    server_id: int
    options: tuple[str, ...] = ()  # extra mariadbd options, after the harness's own (so they win)


@dataclass(frozen=True)
class Channel:
    source: str
    replica: str
    delay: int = 0  # MASTER_DELAY, seconds
    connection: str | None = None  # MariaDB's connection_name (multi-source); None: the default connection


class Topology:
    """Nodes (ids, server ids) and channels source -> replica. Nodes may be given as ids (server
    id = position + 1), Node or dicts; channels as Channel, (source, replica[, delay]) or dicts."""

    def __init__(self, nodes: Sequence[Node | str | Mapping], channels: Sequence[Channel | tuple | Mapping] = ()):
        self.nodes = tuple(_as_node(n, i) for i, n in enumerate(nodes))
        self.channels = tuple(_as_channel(c) for c in channels)
        self._validate()

    @classmethod
    def from_history(cls, topology: Mapping) -> "Topology":
        """A History header's topology. Fields a real server cannot honour here raise TopologyError."""
        nodes = []
        for i, n in enumerate(topology.get("nodes") or []):
            if not isinstance(n, Mapping) or "id" not in n:
                raise TopologyError(f"topology: nodes[{i}] has no id")
            bad = [k for k in n if k not in ("id", "server_id", "variables", "log_slave_updates", "gtid_mode",
                                             "clock_offset_us", "commit_timestamps")]
            # clock_offset_us: the caller's `clocks` (the runner's) run it
            bad += [k for k, off in (("gtid_mode", True), ("commit_timestamps", False))
                    if k in n and n[k] != off]
            if bad:
                raise TopologyError(f"topology: node {n['id']!r}: {', '.join(bad)} not supported by the MariaDB harness")
            opts = ["--log-slave-updates=0"] if n.get("log_slave_updates") is False else []
            opts += [f"--{k.replace('_', '-')}={_option_value(v)}" for k, v in sorted((n.get("variables") or {}).items())]
            nodes.append(Node(n["id"], n.get("server_id", i + 1), tuple(opts)))
        channels = []
        for i, c in enumerate(topology.get("channels") or []):
            if not isinstance(c, Mapping) or "source" not in c or "replica" not in c:
                raise TopologyError(f"topology: channels[{i}] needs a source and a replica")
            # clock_reply: the runner's channel relay (replcheck/harness/proxy.py) does it
            bad = [k for k in c if k not in ("source", "replica", "delay", "latency_us", "clock_reply", "connection")]
            bad += ["latency_us"] if c.get("latency_us", 0) != 0 else []
            if bad:
                raise TopologyError(f"topology: channel {c['source']}->{c['replica']}: {', '.join(bad)} "
                                    "not supported by the MariaDB harness")
            channels.append(Channel(c["source"], c["replica"], c.get("delay", 0), c.get("connection")))
        return cls(nodes, channels)

    def node(self, node_id: str) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise HarnessError(f"unknown node {node_id!r} (nodes: {', '.join(n.id for n in self.nodes)})")

    def source_of(self, replica: str) -> Channel | None:
        return next((c for c in self.channels if c.replica == replica), None)

    def _validate(self) -> None:
        if not self.nodes:
            raise TopologyError("topology: no nodes")
        ids: set[str] = set()
        server_ids: dict[int, str] = {}
        for n in self.nodes:
            if not isinstance(n.id, str) or not NODE_ID.match(n.id):
                raise TopologyError(f"topology: node id {n.id!r} is not a letter followed by up to 31 letters, digits, _ or -")
            if n.id in ids:
                raise TopologyError(f"topology: node {n.id!r} appears twice")
            ids.add(n.id)
            if isinstance(n.server_id, bool) or not isinstance(n.server_id, int) or not 1 <= n.server_id <= MAX_SERVER_ID:
                raise TopologyError(f"topology: node {n.id!r}: server_id {n.server_id!r} is not an integer in 1..{MAX_SERVER_ID}")
            if n.server_id in server_ids:
                raise TopologyError(f"topology: nodes {server_ids[n.server_id]!r} and {n.id!r} share server_id {n.server_id}")
            server_ids[n.server_id] = n.id
            for o in n.options:
                if not isinstance(o, str) or not o.startswith("--"):
                    raise TopologyError(f"topology: node {n.id!r}: option {o!r} does not start with --")
        sources: dict[str, dict[str | None, str]] = {}  # replica -> connection name -> source
        for c in self.channels:
            name = f"channel {c.source}->{c.replica}"
            for end in (c.source, c.replica):
                if end not in ids:
                    raise TopologyError(f"topology: {name}: unknown node {end!r}")
            if c.source == c.replica:
                raise TopologyError(f"topology: {name}: a node cannot replicate from itself")
            if isinstance(c.delay, bool) or not isinstance(c.delay, int) or not 0 <= c.delay <= MAX_MASTER_DELAY:
                raise TopologyError(f"topology: {name}: MASTER_DELAY {c.delay!r} is not an integer in 0..{MAX_MASTER_DELAY}")
            if c.connection is not None and not valid_connection(c.connection):
                raise TopologyError(f"topology: {name}: connection {c.connection!r} is not '' or 1 to 64 letters, digits or _")
            named = sources.setdefault(c.replica, {})
            # Several sources only as named connections (multi-source), each its own (sql/rpl_mi.cc, Master_info_index).
            if named and (c.connection is None or None in named or c.connection in named or c.source in named.values()):
                raise TopologyError(f"topology: node {c.replica!r} has two sources ({', '.join(map(repr, named.values()))} and "
                                    f"{c.source!r}): several sources need a connection name each, each for another source")
            named[c.connection] = c.source

    def __repr__(self) -> str:
        return f"Topology(nodes={list(self.nodes)!r}, channels={list(self.channels)!r})"


def _as_node(n: Node | str | Mapping, i: int) -> Node:
    if isinstance(n, Node):
        return n
    if isinstance(n, str):
        return Node(n, i + 1)
    if isinstance(n, Mapping) and "id" in n:
        return Node(n["id"], n.get("server_id", i + 1), tuple(n.get("options", ())))
    raise TopologyError(f"topology: nodes[{i}] is not a node id, Node or dict with an id: {n!r}")


def _as_channel(c: Channel | tuple | Mapping) -> Channel:
    if isinstance(c, Channel):
        return c
    if isinstance(c, (tuple, list)) and len(c) in (2, 3):
        return Channel(*c)
    if isinstance(c, Mapping) and "source" in c and "replica" in c:
        return Channel(c["source"], c["replica"], c.get("delay", 0), c.get("connection"))
    raise TopologyError(f"topology: channel {c!r} is not (source, replica[, delay]), Channel or dict")


def _option_value(v: Any) -> str:
    return ("ON" if v else "OFF") if isinstance(v, bool) else str(v)
