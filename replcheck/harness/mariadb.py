"""Private MariaDB servers for real-server runs: find, start, wire for replication, tear down.

    with Cluster(Topology(["primary", "replica"], [("primary", "replica")])) as c:
        c.sql("primary", "CREATE DATABASE d")
        c.show_slave_status("replica")["Slave_SQL_Running"]

Each Cluster owns one temporary root (mode 0700) holding a data directory per node. Servers
listen on 127.0.0.1 only, on ports the kernel picked, with a random root password and a
random password for the replication user `repl`, both in the data directory before any server
starts (none ever accepts a password-less root). SQL goes through the `mariadb` command-line
client (no client library needed), its XML output parsed so NULL and the string 'NULL' differ.

Nothing outlives the harness: `close()` runs on `__exit__`, at exit and on SIGTERM/SIGINT;
servers run in their own process groups with PR_SET_PDEATHSIG, so a `kill -9` of the harness
kills them too, and a small watchdog process removes the temporary root in that case.
Start, stop, kill and restart a Cluster from one thread (the one that started it; see _preexec);
its SQL methods (sql, query, results, ...) may be called from any thread.
"""
from __future__ import annotations

import atexit
import ctypes
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from replcheck.harness import clock, errlog, service
from replcheck.io import progress
from replcheck.spec.formats import MAX_MASTER_DELAY

BASEDIR_ENV = "REPLCHECK_MARIADB_BASEDIR"
TMPDIR_ENV = "REPLCHECK_TMPDIR"
TOOLS = ("mariadbd", "mariadb-install-db", "mariadb", "mariadb-binlog")  # mariadb-binlog reads relay logs
NODE_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")  # the History schema's id: also a safe directory name
# A multi-source replica's connection_name (the History schema's connection_name, '' excluded: a named
# channel is never the default connection): it reaches SQL quoted and names relay-<name>.NNNNNN.
CONNECTION_NAME = re.compile(r"^[A-Za-z0-9_]{1,64}$")
MAX_SERVER_ID = 2**32 - 1
REPL_USER = "repl"
# The default redo log (96 MiB) would be most of each node's disk use and install time.
FOOTPRINT_OPTIONS = ("--innodb-log-file-size=8M",)
_BIND_ERROR = re.compile(r"Address already in use|Bind on TCP/IP port")
_CLIENT_ERROR = re.compile(r"^ERROR (\d+) \(([0-9A-Za-z]{5})\)(?: at line \d+)?: (.*)", re.M | re.S)
_XSI_NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"
# XML 1.0 cannot carry these (and folds \r), so they travel as private-use characters.
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0d\x0e-\x1f]")
_UNCTRL = re.compile(r"[\ue000-\ue01f]")
_PR_SET_PDEATHSIG = 1


class HarnessError(Exception):
    """A server could not be found, started, stopped or reached."""


class ServerNotFound(HarnessError):
    pass


class TopologyError(HarnessError, ValueError):
    pass


class ServerStartError(HarnessError):
    """A server would not start (the machine's or the build's problem, not the History's): the
    message's first line has the server's own [ERROR] line and `log`, the kept error log."""

    def __init__(self, message: str, log: str):
        super().__init__(message)
        self.log = log


class SqlError(HarnessError):
    """A statement failed: the MariaDB error number, SQLSTATE and message (client errors too, e.g. 2003)."""

    def __init__(self, node: str, errno: int, sqlstate: str, message: str, statement: str = ""):
        self.node, self.errno, self.sqlstate, self.message, self.statement = node, errno, sqlstate, message, statement
        super().__init__(f"node {node}: ERROR {errno} ({sqlstate}): {message}")


# ---------------------------------------------------------------------------------------------
# Binaries


@dataclass(frozen=True)
class ServerBinaries:
    mariadbd: str
    install_db: str
    client: str
    binlog: str  # mariadb-binlog, the server's own reader of binlog and relay-log files
    basedir: str | None  # a user's own build, passed on as --basedir; None for a system install
    version: str  # e.g. '10.11.19-MariaDB-0+deb12u1'
    version_line: str  # the whole `mariadbd --version` line

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", self.version.split("-")[0])[:3])


def find_server(basedir: str | None = None, *, timeout: float = 10.0) -> ServerBinaries:
    """mariadbd, mariadb-install-db, mariadb and mariadb-binlog from `basedir` (its bin/ or sbin/), else from
    $REPLCHECK_MARIADB_BASEDIR, else from PATH and /usr/sbin. ServerNotFound says what is missing."""
    from_env = False
    if basedir is None and os.environ.get(BASEDIR_ENV):
        basedir, from_env = os.environ[BASEDIR_ENV], True
    found: dict[str, str] = {}
    if basedir is not None:
        basedir = os.path.abspath(basedir)
        for tool in TOOLS:
            for sub in ("bin", "sbin"):
                path = os.path.join(basedir, sub, tool)
                if os.path.isfile(path) and os.access(path, os.X_OK):
                    found[tool] = path
                    break
        where = f"{basedir}/bin or {basedir}/sbin" + (f" (from {BASEDIR_ENV})" if from_env else "")
    else:
        search = os.pathsep.join([os.environ.get("PATH", os.defpath), "/usr/sbin"])
        for tool in TOOLS:
            path = shutil.which(tool, path=search)
            if path:
                found[tool] = path
        where = "PATH or /usr/sbin"
    missing = [t for t in TOOLS if t not in found]
    if missing:
        raise ServerNotFound(
            f"MariaDB not found: no {', '.join(missing)} in {where}; install mariadb-server and "
            f"mariadb-client, or set {BASEDIR_ENV} to a build's base directory")
    try:
        out = subprocess.run([found["mariadbd"], "--no-defaults", "--version"], stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ServerNotFound(f"MariaDB not usable: {found['mariadbd']} --version failed: {e}") from None
    line = next((ln.strip() for ln in (out.stdout + out.stderr).splitlines() if ln.strip()), "")
    m = re.search(r"\bVer\s+(\S+)", line)
    if out.returncode != 0 or not m:
        raise ServerNotFound(f"MariaDB not usable: {found['mariadbd']} --version exited {out.returncode}: {line!r}")
    return ServerBinaries(found["mariadbd"], found["mariadb-install-db"], found["mariadb"], found["mariadb-binlog"], basedir,
                          m.group(1), line)


def free_port(exclude: Iterable[int] = ()) -> int:
    """A TCP port on 127.0.0.1 that nothing uses now (the kernel picks it: bind to port 0).
    Someone may still take it before the server binds it; Cluster retries on that collision."""
    exclude = set(exclude)
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in exclude:
            return port
    raise HarnessError("no free TCP port on 127.0.0.1")


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    """Poll until predicate() is truthy and return its value; HarnessError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise HarnessError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


# ---------------------------------------------------------------------------------------------
# Topology


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
            if c.connection is not None and not (isinstance(c.connection, str) and CONNECTION_NAME.match(c.connection)):
                raise TopologyError(f"topology: {name}: connection {c.connection!r} is not 1 to 64 letters, digits or _")
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


# ---------------------------------------------------------------------------------------------
# Helpers


def connection_clause(connection: str | None) -> str:
    """What names a multi-source connection in CHANGE MASTER, START/STOP/RESET SLAVE and SHOW SLAVE
    STATUS (MariaDB's `'name'` after the keyword, sql/sql_yacc.yy optional_connection_name); '' for the
    default connection. Refuses a name that is not CONNECTION_NAME's."""
    if connection is None:
        return ""
    if not (isinstance(connection, str) and CONNECTION_NAME.match(connection)):
        raise HarnessError(f"connection {connection!r} is not 1 to 64 letters, digits or _")
    return f" {sql_quote(connection)}"


def sql_quote(s: str) -> str:
    """A string literal (the default sql_mode: backslash escapes are on)."""
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'").replace("\0", "\\0") + "'"


def parse_xml_results(out: bytes) -> list[tuple[list[str], list[list[str | None]]]]:
    """The `mariadb --xml` output of one or more statements: (columns, rows) per result set.
    NULL is None. The client itself prints NUL bytes as spaces; bytes that are not UTF-8 are
    replaced (select HEX(col) to see raw bytes)."""
    text = _CTRL.sub(lambda m: chr(0xE000 + ord(m.group())), out.decode("utf-8", "replace"))
    results = []
    for doc in text.split('<?xml version="1.0"?>'):
        if not doc.strip():
            continue
        columns: list[str] = []
        rows = []
        for row in ET.fromstring(doc.strip()).iter("row"):
            fields = row.findall("field")
            if not columns:
                columns = [f.get("name", "") for f in fields]
            rows.append([None if f.get(_XSI_NIL) == "true" else
                         _UNCTRL.sub(lambda m: chr(ord(m.group()) - 0xE000), f.text or "") for f in fields])
        results.append((columns, rows))
    return results


def _tail(path: str, lines: int = 25, head: bool = False) -> str:
    try:
        with open(path, "rb") as f:
            if not head:
                f.seek(max(0, os.path.getsize(path) - 8192))
            text = f.read(8192).decode("utf-8", "replace").splitlines()
    except OSError as e:
        return f"(cannot read {path}: {e})"
    return "\n".join(text[:lines] if head else text[-lines:]) or "(empty)"


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting for a parent to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True


def _prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()


def _preexec(parent: int) -> Callable[[], None]:
    """Runs in the child before exec. PR_SET_PDEATHSIG: the kernel SIGKILLs the child when the
    thread that forked it ends (so spawn from a long-lived thread, as the main thread is)."""
    prctl = _PRCTL

    def setup() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the harness died before the prctl: do not run orphaned
            os._exit(1)
    return setup


# Outlives an abruptly killed harness: at EOF on stdin (the harness is gone or done) it SIGKILLs
# the process groups still registered and removes the temporary root.
_WATCHDOG = r"""
import os, shutil, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
root, groups = sys.argv[1], set()
for line in sys.stdin:
    cmd, _, pid = line.strip().partition(" ")
    if cmd == "add":
        groups.add(int(pid))
    elif cmd == "del":
        groups.discard(int(pid))
def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False
for g in groups:
    try:
        os.killpg(g, signal.SIGKILL)
    except OSError:
        pass
deadline = time.monotonic() + 10
while any(alive(g) for g in groups) and time.monotonic() < deadline:
    time.sleep(0.05)
shutil.rmtree(root, ignore_errors=True)
"""


# ---------------------------------------------------------------------------------------------
# Cluster


class _State:
    def __init__(self, node: Node, directory: str):
        self.node, self.dir = node, directory
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.log_offset = 0  # where this start's lines begin in err.log
        self.ready = False  # said "ready for connections" (before that SIGTERM may be lost)

    # The node's directory holds the data directory, its own tmpdir, the logs and the socket.
    @property
    def data(self) -> str:
        return os.path.join(self.dir, "data")

    @property
    def tmp(self) -> str:
        return os.path.join(self.dir, "tmp")

    @property
    def errlog(self) -> str:
        return os.path.join(self.dir, "err.log")

    @property
    def sock(self) -> str:
        return os.path.join(self.dir, "sock")


class Cluster:
    """Servers for a topology, replication set up on every channel; a context manager.

    Options: `server` (from find_server) or `basedir`; `tmpdir` for the temporary root (else
    $REPLCHECK_TMPDIR, else the system's; a tmpfs such as /dev/shm makes start-up faster);
    `options` extra mariadbd options for every node; `verbose` progress on stderr; timeouts in s;
    `routes` {(source, replica): port}: that channel connects to a loopback port of the caller's
    (a relay to the source, e.g. one that loses acks) instead of the source's own; `clocks`
    {node: offset µs}: those servers run on a clock of their own (harness/clock.py), set_clock steps it.
    """

    def __init__(self, topology: Topology | Mapping, *, server: ServerBinaries | None = None,
                 basedir: str | None = None, tmpdir: str | None = None, options: Sequence[str] = (),
                 verbose: bool = False, start_timeout: float = 10.0, stop_grace: float = 5.0,
                 sql_timeout: float = 30.0, install_timeout: float = 60.0,
                 routes: Mapping[tuple[str, str], int] | None = None, clocks: Mapping[str, int] | None = None):
        self.topology = topology if isinstance(topology, Topology) else Topology.from_history(topology)
        self.server = server
        self._basedir, self._tmpdir, self._options = basedir, tmpdir, tuple(options)
        self._routes = dict(routes or {})
        self._clocks = dict(clocks or {})  # node -> its clock's offset (µs) at start: libfaketime (clock.py)
        self.verbose = verbose
        self.start_timeout, self.stop_grace = start_timeout, stop_grace
        self.sql_timeout, self.install_timeout = sql_timeout, install_timeout
        self.root: str | None = None
        self.root_password = secrets.token_hex(16)
        self.repl_password = secrets.token_hex(16)
        self._states: dict[str, _State] = {}
        self._aux: set[subprocess.Popen] = set()  # mariadb-install-db while it runs
        self._ports: set[int] = set()
        self._watchdog: subprocess.Popen | None = None
        self._prev_signals: dict[int, Any] = {}
        self._pending_signal: int | None = None
        self._lock = threading.RLock()
        self._started = self._closed = self._closing = False
        self._owner = os.getpid()
        self._env = {k: v for k, v in os.environ.items() if not k.startswith(("MYSQL_", "MARIADB_"))}

    # -- lifecycle ------------------------------------------------------------------------------

    def __enter__(self) -> "Cluster":
        return self.start()

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def start(self) -> "Cluster":
        if self._started:
            raise HarnessError("this Cluster was already started")
        self._started = True
        self._owner = os.getpid()
        atexit.register(self._atexit)
        self._install_signals()
        try:
            self.server = self.server or find_server(self._basedir)
            self._log(f"MariaDB {self.server.version} ({self.server.mariadbd})")
            self.root = tempfile.mkdtemp(prefix="replcheck-mariadb-", dir=self._tmpdir or os.environ.get(TMPDIR_ENV) or None)
            try:
                service.open_to_it(self.root, TMPDIR_ENV)
            except service.Refused as e:
                raise HarnessError(str(e)) from None
            self._start_watchdog()
            with open(os.path.join(self.root, "client.cnf"), "w", opener=lambda p, f: os.open(p, f, 0o600)) as f:
                f.write(f"[client]\nuser=root\npassword={self.root_password}\n")
            self._install()
            for node, offset in self._clocks.items():
                clock.write(self._clock_file(node), offset)
            for st in self._states.values():
                self._spawn_server(st)
            for st in self._states.values():
                self._await_server(st, first=True)
                self._check_identity(st)
            self._setup_replication()
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Stop every server (SIGTERM, SIGKILL after the grace), remove the temporary root.
        Idempotent; never acts in a forked child (it does not own the servers)."""
        if os.getpid() != self._owner:
            return
        with self._lock:
            if self._closed or self._closing:
                return
            self._closing = True
            try:
                self._stop_all()
                self._remove_root()
                self._end_watchdog()
            finally:
                self._closed, self._closing = True, False
                atexit.unregister(self._atexit)
                self._restore_signals()
        pending, self._pending_signal = self._pending_signal, None
        if pending is not None:  # a signal came in during teardown: deliver it now
            self._redeliver(pending, None)

    def _atexit(self) -> None:
        self.close()

    def _install_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # Python only lets the main thread set handlers; atexit and __exit__ still clean up
        for sig in (signal.SIGTERM, signal.SIGINT):
            prev = signal.getsignal(sig)
            if prev in (signal.SIG_IGN, None):
                continue  # ignored on purpose (or set outside Python): leave it so
            self._prev_signals[sig] = prev
            signal.signal(sig, self._on_signal)

    def _restore_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig, prev in self._prev_signals.items():
            if signal.getsignal(sig) == self._on_signal:  # unless someone replaced ours since
                signal.signal(sig, prev)

    def _on_signal(self, signum: int, frame) -> None:
        if self._closing:
            self._pending_signal = signum
            return
        self._log(f"signal {signal.Signals(signum).name}: tearing down")
        self.close()
        self._redeliver(signum, frame)

    def _redeliver(self, signum: int, frame) -> None:
        prev = self._prev_signals.get(signum, signal.SIG_DFL)
        if callable(prev):
            prev(signum, frame)  # for SIGINT: default_int_handler raises KeyboardInterrupt
        elif prev == signal.SIG_DFL:
            try:
                signal.signal(signum, signal.SIG_DFL)
            except ValueError:  # not the main thread: our handler gets it there and does this
                pass
            os.kill(os.getpid(), signum)  # end as the signal would have ended us

    # -- processes ------------------------------------------------------------------------------

    def _spawn(self, args: list[str], log_path: str, env: Mapping[str, str] | None = None) -> subprocess.Popen:
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    env={**self._env, **(env or {})}, close_fds=True, start_new_session=True,
                                    preexec_fn=_preexec(os.getpid()))
        self._watch("add", proc.pid)
        return proc

    def _signal(self, proc: subprocess.Popen, sig: int) -> None:
        # Only while not yet reaped: a reaped pid (and its group id) may belong to someone else.
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, sig)  # start_new_session: the pid is the group id
            except ProcessLookupError:
                pass

    def _reap(self, proc: subprocess.Popen, timeout: float) -> bool:
        try:
            proc.wait(timeout=max(0.0, timeout))
        except subprocess.TimeoutExpired:
            return False
        self._watch("del", proc.pid)
        return True

    def _terminate(self, procs: list[tuple[subprocess.Popen, bool]]) -> None:
        """SIGTERM the ready ones (SIGKILL the others: SIGTERM early in start-up can be lost),
        SIGKILL whatever is left after the grace, reap all (bounded)."""
        live = [(p, ready) for p, ready in procs if p.poll() is None]
        for p, ready in live:
            self._signal(p, signal.SIGTERM if ready else signal.SIGKILL)
        deadline = time.monotonic() + self.stop_grace
        for p, _ in live:
            if not self._reap(p, deadline - time.monotonic()):
                self._log(f"pid {p.pid} still running after {self.stop_grace:g} s: SIGKILL")
                self._signal(p, signal.SIGKILL)
                if not self._reap(p, 10):
                    warnings.warn(f"replcheck.harness: pid {p.pid} survived SIGKILL for 10 s", RuntimeWarning)
        for p, _ in procs:  # exited by themselves earlier
            if p.returncode is not None:
                self._watch("del", p.pid)

    def _stop_all(self) -> None:
        procs = [(st.proc, st.ready) for st in self._states.values() if st.proc is not None]
        procs += [(p, False) for p in self._aux]
        self._terminate(procs)
        self._aux.clear()

    def _remove_root(self) -> None:
        if self.root and os.path.exists(self.root):
            for _ in range(3):
                shutil.rmtree(self.root, ignore_errors=True)
                if not os.path.exists(self.root):
                    break
                time.sleep(0.1)
            else:
                warnings.warn(f"replcheck.harness: could not remove {self.root}", RuntimeWarning)
            self._log(f"removed {self.root}")

    def _start_watchdog(self) -> None:
        try:
            self._watchdog = subprocess.Popen([sys.executable, "-I", "-c", _WATCHDOG, self.root],
                                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True)
        except OSError as e:  # PR_SET_PDEATHSIG still covers the servers
            self._log(f"no watchdog: {e}")

    def _watch(self, cmd: str, pid: int) -> None:
        wd = self._watchdog
        if wd is not None and wd.stdin is not None:
            try:
                wd.stdin.write(f"{cmd} {pid}\n".encode())
                wd.stdin.flush()
            except (OSError, ValueError):
                pass

    def _end_watchdog(self) -> None:
        wd, self._watchdog = self._watchdog, None
        if wd is None:
            return
        try:
            wd.stdin.close()
        except OSError:
            pass
        try:
            wd.wait(timeout=5)
        except subprocess.TimeoutExpired:
            wd.kill()
            wd.wait(timeout=5)

    # -- start-up -------------------------------------------------------------------------------

    def _basedir_args(self) -> list[str]:
        return [f"--basedir={self.server.basedir}"] if self.server.basedir else []

    def _install(self) -> None:
        # One mariadb-install-db per cluster (the slow step, ~1-4 s), copied for each node.
        # Every server gets its own --tmpdir: at start-up mariadbd deletes all #sql* files in its
        # tmpdir, so servers sharing /tmp delete each other's temporary tables (install-db fails).
        # No --user: with it, mariadb-install-db run as root chowns the system's
        # plugin/auth_pam_tool_dir to that user (Debian gives it to mysql), breaking PAM there.
        # The accounts are set up here, in the template, so that no server ever listens on TCP
        # with a password-less root: --extra-file runs in the same `mariadbd --bootstrap` as the
        # system tables, which opens neither a port nor a socket. The file holds the passwords:
        # 0600 in the 0700 root, and removed as soon as mariadb-install-db is done with it.
        template, tmp = os.path.join(self.root, "template"), os.path.join(self.root, "tmp")
        accounts = os.path.join(self.root, "accounts.sql")
        os.mkdir(tmp, 0o700)
        with open(accounts, "w", opener=lambda p, f: os.open(p, f, 0o600)) as f:
            f.write(self._accounts_sql())
        args = [self.server.install_db, "--no-defaults", f"--datadir={template}", f"--tmpdir={tmp}",
                "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve",
                f"--extra-file={accounts}", *self._basedir_args(), *FOOTPRINT_OPTIONS]
        log = os.path.join(self.root, "install.log")
        self._log("mariadb-install-db")
        try:
            proc = self._spawn(args, log)
            self._aux.add(proc)
            if not self._reap(proc, self.install_timeout):
                self._terminate([(proc, False)])
                self._aux.discard(proc)
                raise HarnessError(f"mariadb-install-db did not finish within {self.install_timeout:g} s; "
                                   f"last lines of {log}:\n{self._redact(_tail(log))}")
        finally:
            os.remove(accounts)
        self._aux.discard(proc)
        if proc.returncode != 0:
            raise HarnessError(f"mariadb-install-db failed (exit {proc.returncode}); first lines of {log}:\n"
                               f"{self._redact(_tail(log, 12, head=True))}")
        for n in self.topology.nodes:
            st = _State(n, os.path.join(self.root, n.id))
            if len(st.sock) > 100:
                raise HarnessError(f"socket path {st.sock} is too long for a Unix socket; set {TMPDIR_ENV} to a shorter directory")
            os.mkdir(st.dir, 0o700)
            os.mkdir(st.tmp, 0o700)
            shutil.copytree(template, st.data, symlinks=True)
            os.chmod(st.data, 0o700)
            open(st.errlog, "ab").close()  # mariadbd opens its --log-error itself, as the service user
            try:
                service.give(st.dir)
            except service.Refused as e:
                raise HarnessError(str(e)) from None
            self._states[n.id] = st
        shutil.rmtree(template)
        shutil.rmtree(tmp)

    def _server_args(self, st: _State, options: Sequence[str] = ()) -> list[str]:
        d = st.dir
        return [self.server.mariadbd, "--no-defaults", *service.user_args(), *self._basedir_args(),
                f"--datadir={st.data}", f"--tmpdir={st.tmp}", f"--port={st.port}", f"--socket={st.sock}",
                f"--pid-file={d}/mariadbd.pid",
                f"--log-bin={d}/bin", f"--relay-log={d}/relay", "--log-slave-updates=1", "--binlog-format=ROW",
                f"--server-id={st.node.server_id}", "--bind-address=127.0.0.1", "--skip-name-resolve",
                f"--log-error={st.errlog}", "--gtid-strict-mode=0", *FOOTPRINT_OPTIONS,
                *self._options, *st.node.options, *options]

    def _spawn_server(self, st: _State, options: Sequence[str] = ()) -> None:
        if st.port is None:
            st.port = free_port(self._ports)
            self._ports.add(st.port)
        st.log_offset = os.path.getsize(st.errlog) if os.path.exists(st.errlog) else 0
        st.ready = False
        self._log(f"node {st.node.id}: mariadbd on 127.0.0.1:{st.port}, server_id {st.node.server_id}, in {st.dir}")
        try:
            env = clock.environment(self._clock_file(st.node.id)) if st.node.id in self._clocks else {}
        except clock.Missing as e:
            raise HarnessError(str(e)) from None
        st.proc = self._spawn(self._server_args(st, options), st.errlog, env)

    def _await_server(self, st: _State, first: bool) -> None:
        """Until it says 'ready for connections'. A port taken meanwhile by someone else: on the
        first start, a new port and again (a restart keeps its port, so it fails)."""
        for attempt in range(5 if first else 1):
            if attempt:
                st.port = free_port(self._ports)
                self._ports.add(st.port)
                self._spawn_server(st)
            deadline = time.monotonic() + self.start_timeout
            while True:
                rc = st.proc.poll()
                text = self._log_since(st)
                if rc is not None:
                    self._watch("del", st.proc.pid)
                    if _BIND_ERROR.search(text):
                        self._log(f"node {st.node.id}: port {st.port} taken by another process")
                        break
                    raise self._start_failed(st, f"mariadbd exited with code {rc} while starting", text)
                if "ready for connections" in text:
                    st.ready = True
                    return
                if time.monotonic() >= deadline:
                    self._terminate([(st.proc, False)])
                    raise self._start_failed(st, f"mariadbd not ready for connections within {self.start_timeout:g} s",
                                             self._log_since(st))
                time.sleep(0.02)
        raise HarnessError(f"node {st.node.id}: port {st.port} is in use by another process"
                           + ("" if first else " (a restart keeps its port)"))

    def _start_failed(self, st: _State, what: str, text: str) -> "ServerStartError":
        """Why the node did not start, in its first line: the server's own [ERROR] line, and where
        its whole error log is kept (the temporary root is removed on close); the log's end after."""
        why = errlog.first_error(text)
        kept = errlog.keep(st.errlog, st.node.id, self._tmpdir or os.environ.get(TMPDIR_ENV) or None)
        return ServerStartError(f"node {st.node.id}: {what} (error log kept in {kept}): "
                                + (why or "it wrote no [ERROR] line") + f"\nits last lines:\n{_tail(st.errlog)}", kept)

    def _log_since(self, st: _State) -> str:
        try:
            with open(st.errlog, "rb") as f:
                f.seek(st.log_offset)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def _accounts_sql(self) -> str:
        """Passwords for root, no anonymous accounts, the replication user: for --extra-file.
        `mariadbd --bootstrap` runs without grant tables (as --skip-grant-tables: account
        statements fail with 1290) until FLUSH PRIVILEGES loads them. It writes no binlog (no
        --log-bin), so replicas have no set-up to replay and every node's GTID state starts empty."""
        loopback = "('localhost', '127.0.0.1', '::1')"
        repl = f"{sql_quote(REPL_USER)}@'127.0.0.1'"
        # Accounts for the machine's host name (root@<hostname>) are not loaded under
        # --skip-name-resolve, so ALTER/DROP USER cannot see them: remove their rows, and the
        # anonymous ones with them, before the grant tables are loaded.
        stmts = [f"DELETE FROM mysql.global_priv WHERE user = '' OR (user = 'root' AND host NOT IN {loopback})",
                 f"DELETE FROM mysql.proxies_priv WHERE host NOT IN {loopback}",
                 "FLUSH PRIVILEGES",
                 "ALTER USER IF EXISTS " + ", ".join(f"'root'@'{host}' IDENTIFIED BY {sql_quote(self.root_password)}"
                                                     for host in ("localhost", "127.0.0.1", "::1")),
                 f"CREATE USER {repl} IDENTIFIED BY {sql_quote(self.repl_password)}",
                 f"GRANT REPLICATION SLAVE ON *.* TO {repl}"]
        return "".join(f"{stmt};\n" for stmt in stmts)

    def _check_identity(self, st: _State) -> None:
        # Over TCP with the password: proves the port is ours and the credentials work.
        [[server_id]] = self.sql(st.node.id, "SELECT @@server_id")
        if server_id != str(st.node.server_id):
            raise HarnessError(f"node {st.node.id}: port {st.port} answered with server_id {server_id}, "
                               f"not {st.node.server_id}")

    def _setup_replication(self) -> None:
        for ch in self.topology.channels:
            stmt = self._change_master(ch.source, ch.replica, ch.connection) + (f", MASTER_DELAY={ch.delay}" if ch.delay else "")
            self._log(f"channel {ch.source}->{ch.replica}" + (f", MASTER_DELAY={ch.delay}" if ch.delay else ""))
            self.sql(ch.replica, stmt + ";\nSTART SLAVE" + connection_clause(ch.connection))
        for ch in self.topology.channels:
            last: dict = {}

            def running() -> bool:
                last.update(self.show_slave_status(ch.replica, ch.connection))
                return last.get("Slave_IO_Running") == "Yes" and last.get("Slave_SQL_Running") == "Yes"
            try:
                wait_for(running, self.start_timeout, "replication threads")
            except HarnessError:
                raise HarnessError(
                    f"channel {ch.source}->{ch.replica}: replication threads not running within "
                    f"{self.start_timeout:g} s: IO {last.get('Slave_IO_Running')} {last.get('Last_IO_Error')!r}, "
                    f"SQL {last.get('Slave_SQL_Running')} {last.get('Last_SQL_Error')!r}") from None

    # -- SQL --------------------------------------------------------------------------------

    def _client(self, st: _State, statement: str, *,
                timeout: float | None = None) -> list[tuple[list[str], list[list[str | None]]]]:
        if st.proc is None or st.proc.poll() is not None:
            raise HarnessError(f"node {st.node.id} is not running")
        timeout = self.sql_timeout if timeout is None else timeout
        # The option file keeps the password out of the process list.
        args = [self.server.client, f"--defaults-file={os.path.join(self.root, 'client.cnf')}", "--protocol=TCP",
                "--host=127.0.0.1", f"--port={st.port}", "--batch", "--xml", "--default-character-set=utf8mb4",
                f"--connect-timeout={max(1, int(min(timeout, 10)))}"]
        try:  # the statement on stdin, not argv: it may hold a password
            out = subprocess.run(args, input=statement.encode(), capture_output=True, timeout=timeout, env=self._env)
        except subprocess.TimeoutExpired:
            raise HarnessError(f"node {st.node.id}: statement did not finish within {timeout:g} s: "
                               f"{self._redact(statement)[:200]}") from None
        if out.returncode != 0:
            err = out.stderr.decode("utf-8", "replace")
            m = _CLIENT_ERROR.search(err)
            if m:
                raise SqlError(st.node.id, int(m.group(1)), m.group(2), self._redact(m.group(3).strip()),
                               self._redact(statement))
            raise HarnessError(f"node {st.node.id}: mariadb client exited {out.returncode}: {self._redact(err.strip())}")
        try:
            return parse_xml_results(out.stdout)
        except ET.ParseError as e:
            raise HarnessError(f"node {st.node.id}: unreadable client output ({e}): {self._redact(statement)[:200]}") from None

    def _redact(self, text: str) -> str:
        return text.replace(self.root_password, "***").replace(self.repl_password, "***")

    def results(self, node: str, statement: str, *,
                timeout: float | None = None) -> list[tuple[list[str], list[list[str | None]]]]:
        """Every result set of the statements (one session, separated by ';'), in order. Safe from
        any thread: each call is a client process of its own and only reads the node's port."""
        return self._client(self._state(node), statement, timeout=timeout)

    def query(self, node: str, statement: str, *, timeout: float | None = None) -> tuple[list[str], list[list[str | None]]]:
        """Columns and rows of the statement's (last) result set; ([], []) when it has none."""
        results = self.results(node, statement, timeout=timeout)
        return results[-1] if results else ([], [])

    def sql(self, node: str, statement: str, *, timeout: float | None = None) -> list[list[str | None]]:
        """Rows (lists of strings, None for NULL) of the statement's result set, [] if none.
        Several statements separated by ';' run in one session; the last result set is returned.
        A failure raises SqlError with the MariaDB error number and message."""
        return self.query(node, statement, timeout=timeout)[1]

    def show_slave_status(self, node: str, connection: str | None = None) -> dict[str, str | None]:
        """SHOW SLAVE ['name'] STATUS as a dict; {} when the node is not a replica (or has no such connection)."""
        columns, rows = self.query(node, f"SHOW SLAVE{connection_clause(connection)} STATUS")
        return dict(zip(columns, rows[0])) if rows else {}

    def global_status(self, node: str, like: str = "%") -> dict[str, str | None]:
        return {name: value for name, value in self.sql(node, f"SHOW GLOBAL STATUS LIKE {sql_quote(like)}")}

    def _change_master(self, source: str, replica: str, connection: str | None = None) -> str:
        """CHANGE MASTER ['name'] TO `source` by GTID auto-position (the replica's gtid_slave_pos,
        one for all of its connections)."""
        port = int(self._routes.get((source, replica)) or self._state(source).port)
        # MASTER_CONNECT_RETRY=1: reconnect to a restarted source within a second, not 60.
        return (f"CHANGE MASTER{connection_clause(connection)} TO MASTER_HOST='127.0.0.1', MASTER_PORT={port}, "
                f"MASTER_USER={sql_quote(REPL_USER)}, MASTER_PASSWORD={sql_quote(self.repl_password)}, "
                f"MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1")

    def route(self, source: str, replica: str, port: int) -> None:
        """From now on, the channel source -> replica connects to this loopback port of the caller's
        (its relay), as `routes` says for the channels at start: a failover or a rejoin keeps its relay."""
        self._routes[(source, replica)] = port

    def rejoin(self, node: str, source: str) -> str:
        """A restarted server replicates from `source` as rpl_semi_sync_fail_over.test has the
        crashed primary rejoin: gtid_slave_pos from its own binlog, CHANGE MASTER TO by GTID, START
        SLAVE. Returns the gtid_slave_pos it set."""
        self._log(f"{node}: rejoins as a replica of {source}")
        self.sql(node, "SET GLOBAL gtid_slave_pos = @@GLOBAL.gtid_binlog_pos;\n" + self._change_master(source, node) + ";\nSTART SLAVE")
        [[pos]] = self.sql(node, "SELECT @@GLOBAL.gtid_slave_pos")
        return pos or ""

    def repoint(self, replica: str, source: str, *, io: bool = True, sql: bool = True) -> None:
        """Failover by GTID: the replica now replicates from `source`, resuming at its gtid_slave_pos;
        the threads that ran before run again."""
        self._log(f"{replica}: repointed to {source}")
        start = {(True, True): ";\nSTART SLAVE", (True, False): ";\nSTART SLAVE IO_THREAD",
                 (False, True): ";\nSTART SLAVE SQL_THREAD", (False, False): ""}[(io, sql)]
        self.sql(replica, "STOP SLAVE;\n" + self._change_master(source, replica) + start)

    def promote(self, node: str) -> None:
        """Failover: the replica forgets its source and takes writes (RESET SLAVE ALL, read_only off)."""
        self._log(f"node {node}: promoted")
        self.sql(node, "STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = OFF")

    # -- node operations ------------------------------------------------------------------------

    def _state(self, node: str) -> _State:
        if node not in self._states:
            self.topology.node(node)  # unknown node: says which exist
            raise HarnessError(f"node {node} has not been created (is the cluster started?)")
        return self._states[node]

    def is_running(self, node: str) -> bool:
        st = self._state(node)
        return st.proc is not None and st.proc.poll() is None

    def kill9(self, node: str) -> None:
        """SIGKILL: a crash, without shutdown."""
        st = self._state(node)
        if not self.is_running(node):
            raise HarnessError(f"node {node} is not running")
        self._log(f"node {node}: kill -9 {st.proc.pid}")
        self._signal(st.proc, signal.SIGKILL)
        if not self._reap(st.proc, 10):
            raise HarnessError(f"node {node}: pid {st.proc.pid} survived SIGKILL for 10 s")
        st.ready = False

    def stop(self, node: str) -> None:
        """A clean shutdown (SIGTERM; SIGKILL after the grace)."""
        st = self._state(node)
        if not self.is_running(node):
            raise HarnessError(f"node {node} is not running")
        self._log(f"node {node}: shutdown")
        self._terminate([(st.proc, st.ready)])
        st.ready = False

    def restart(self, node: str, options: Sequence[str] = ()) -> None:
        """Start the node again, with the same options and port (a clean stop first if it runs),
        and `options` for this start only. Its replication threads start by themselves: the server
        remembers CHANGE MASTER."""
        st = self._state(node)
        if self.is_running(node):
            self.stop(node)
        self._spawn_server(st, options)
        self._await_server(st, first=False)
        self._check_identity(st)

    def _clock_file(self, node: str) -> str:
        return os.path.join(self._state(node).dir, clock.FILE)

    def set_clock(self, node: str, offset_us: int) -> None:
        """The node's clock, from now on `offset_us` from the machine's (a step, while it runs): only
        for a node started with a clock of its own (`clocks`)."""
        if node not in self._clocks:
            raise HarnessError(f"node {node} was not started with a clock of its own")
        self._log(f"node {node}: clock offset {offset_us} µs")
        clock.write(self._clock_file(node), offset_us)

    # -- facts ----------------------------------------------------------------------------------

    @property
    def version(self) -> str:
        return self.server.version if self.server else ""

    @property
    def nodes(self) -> list[str]:
        return [n.id for n in self.topology.nodes]

    def pid(self, node: str) -> int | None:
        st = self._state(node)
        return st.proc.pid if self.is_running(node) else None

    def pids(self) -> dict[str, int]:
        return {n: p for n in self._states if (p := self.pid(n)) is not None}

    def port(self, node: str) -> int:
        return self._state(node).port

    def node_dir(self, node: str) -> str:
        """The node's private directory (mode 0700): data/, tmp/, bin.*, relay.*, err.log, sock."""
        return self._state(node).dir

    def datadir(self, node: str) -> str:
        return self._state(node).data

    def error_log(self, node: str) -> str:
        return self._state(node).errlog

    def credentials(self, node: str) -> dict[str, Any]:
        """For another client (e.g. a binlog reader): host, port, user, password."""
        return {"host": "127.0.0.1", "port": self.port(node), "user": "root", "password": self.root_password}

    def _log(self, msg: str) -> None:
        if self.verbose:
            progress("harness")(msg)
