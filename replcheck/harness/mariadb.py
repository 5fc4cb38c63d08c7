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
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from typing import Any, Mapping, Sequence

from replcheck.harness import clock, disk, errlog, service, sqlclient
from replcheck.harness.binaries import ServerBinaries, find_server
from replcheck.harness.errors import HarnessError, NodeDown, ServerStartError
from replcheck.harness.processes import Processes, free_port, tail, wait_for
from replcheck.harness.sqlclient import Results, connection_clause, sql_quote
from replcheck.harness.topology import Node, Topology
from replcheck.io import progress

TMPDIR_ENV = "REPLCHECK_TMPDIR"
REPL_USER = "repl"
# The default redo log (96 MiB) would be most of each node's disk use and install time.
FOOTPRINT_OPTIONS = ("--innodb-log-file-size=8M",)
# A first start as mysql-test-run's servers (the suites' .result files): --skip-slave-start, as the
# set-up starts the slave threads itself. Without it START SLAVE UNTIL warns 1278, ER_MISSING_SKIP_SLAVE
# (start_slave, sql/sql_repl.cc: an UNTIL condition and !opt_skip_slave_start). A restart keeps the
# History's own choice (faults.py).
FIRST_START_OPTIONS = ("--skip-slave-start",)
_BIND_ERROR = re.compile(r"Address already in use|Bind on TCP/IP port")


class _State:
    def __init__(self, node: Node, directory: str, small_disk: bool = False):
        self.node, self.dir, self.small_disk = node, directory, small_disk
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.log_offset = 0  # where this start's lines begin in err.log
        self.ready = False  # said "ready for connections" (before that SIGTERM may be lost)

    # The node's directory holds the data directory, its own tmpdir, the logs and the socket.
    @property
    def data(self) -> str:
        return os.path.join(self.dir, "data")

    @property
    def binlog_dir(self) -> str:
        """Where --log-bin writes: a small filesystem of its own when the node's disk is to fill (disk.py)."""
        return os.path.join(self.dir, "binlog") if self.small_disk else self.dir

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
    {node: offset µs}: those servers run on a clock of their own (harness/clock.py), set_clock steps it;
    `small_disks`: those nodes' binlogs are on a small filesystem of their own, which fill_disk fills (disk.py);
    `repl_users`: more users with REPLICATION SLAVE on every node, which a CHANGE MASTER TO MASTER_USER may name.
    """

    def __init__(self, topology: Topology | Mapping, *, server: ServerBinaries | None = None,
                 basedir: str | None = None, tmpdir: str | None = None, options: Sequence[str] = (),
                 verbose: bool = False, start_timeout: float = 10.0, stop_grace: float = 5.0,
                 sql_timeout: float = 30.0, install_timeout: float = 60.0,
                 routes: Mapping[tuple[str, str], int] | None = None, clocks: Mapping[str, int] | None = None,
                 small_disks: Sequence[str] = (), repl_users: Sequence[str] = ()):
        self.topology = topology if isinstance(topology, Topology) else Topology.from_history(topology)
        self.server = server
        self._basedir, self._tmpdir, self._options = basedir, tmpdir, tuple(options)
        self._routes = dict(routes or {})
        self._clocks = dict(clocks or {})  # node -> its clock's offset (µs) at start: libfaketime (clock.py)
        self._small_disks = frozenset(small_disks)
        self._repl_users = tuple(dict.fromkeys(u for u in repl_users if u not in (REPL_USER, "root")))
        self.verbose = verbose
        self.start_timeout = start_timeout
        self.sql_timeout, self.install_timeout = sql_timeout, install_timeout
        self.root: str | None = None
        self.root_password = secrets.token_hex(16)
        self.repl_password = secrets.token_hex(16)
        self._states: dict[str, _State] = {}
        self._aux: set[subprocess.Popen] = set()  # mariadb-install-db while it runs
        self._ports: set[int] = set()
        self._prev_signals: dict[int, Any] = {}
        self._pending_signal: int | None = None
        self._lock = threading.RLock()
        self._started = self._closed = self._closing = False
        self._owner = os.getpid()
        self._env = {k: v for k, v in os.environ.items() if not k.startswith(("MYSQL_", "MARIADB_"))}
        self._procs = Processes(self._env, stop_grace, self._log)

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
            where = self._tmpdir or os.environ.get(TMPDIR_ENV) or None
            try:
                self.root = tempfile.mkdtemp(prefix="replcheck-mariadb-", dir=where)
            except OSError as e:  # a folder that is not there, or not writable: the machine's, not the input's
                raise HarnessError(f"cannot make the servers' folder in {where or tempfile.gettempdir()} "
                                   f"({TMPDIR_ENV}): {e.strerror}") from None
            try:
                service.open_to_it(self.root, TMPDIR_ENV)
            except service.Refused as e:
                raise HarnessError(str(e)) from None
            self._procs.start_watchdog(self.root)
            with open(os.path.join(self.root, "client.cnf"), "w", opener=lambda p, f: os.open(p, f, 0o600)) as f:
                f.write(f"[client]\nuser=root\npassword={self.root_password}\n")
            self._install()
            for node, offset in self._clocks.items():
                clock.write(self._clock_file(node), offset)
            for st in self._states.values():
                self._spawn_server(st, FIRST_START_OPTIONS)
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
                self._procs.remove_root(self.root)
                self._procs.end_watchdog()
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

    def _stop_all(self) -> None:
        procs = [(st.proc, st.ready) for st in self._states.values() if st.proc is not None]
        procs += [(p, False) for p in self._aux]
        self._procs.terminate(procs)
        self._aux.clear()

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
            proc = self._procs.spawn(args, log)
            self._aux.add(proc)
            if not self._procs.reap(proc, self.install_timeout):
                self._procs.terminate([(proc, False)])
                self._aux.discard(proc)
                raise HarnessError(f"mariadb-install-db did not finish within {self.install_timeout:g} s; "
                                   f"last lines of {log}:\n{self.redact(tail(log))}")
        finally:
            os.remove(accounts)
        self._aux.discard(proc)
        if proc.returncode != 0:
            raise HarnessError(f"mariadb-install-db failed (exit {proc.returncode}); first lines of {log}:\n"
                               f"{self.redact(tail(log, 12, head=True))}")
        for n in self.topology.nodes:
            st = _State(n, os.path.join(self.root, n.id), n.id in self._small_disks)
            if len(st.sock) > 100:
                raise HarnessError(f"socket path {st.sock} is too long for a Unix socket; set {TMPDIR_ENV} to a shorter directory")
            os.mkdir(st.dir, 0o700)
            os.mkdir(st.tmp, 0o700)
            if st.small_disk:
                os.mkdir(st.binlog_dir, 0o700)
                try:
                    disk.mount(st.binlog_dir)
                except disk.Unavailable as e:
                    raise HarnessError(str(e)) from None
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
                f"--log-bin={st.binlog_dir}/bin", f"--relay-log={d}/relay", "--log-slave-updates=1", "--binlog-format=ROW",
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
        st.proc = self._procs.spawn(self._server_args(st, options), st.errlog, env)

    def _await_server(self, st: _State, first: bool) -> None:
        """Until it says 'ready for connections'. A port taken meanwhile by someone else: on the
        first start, a new port and again (a restart keeps its port, so it fails)."""
        for attempt in range(5 if first else 1):
            if attempt:
                st.port = free_port(self._ports)
                self._ports.add(st.port)
                self._spawn_server(st, FIRST_START_OPTIONS)
            deadline = time.monotonic() + self.start_timeout
            while True:
                rc = st.proc.poll()
                text = self._log_since(st)
                if rc is not None:
                    self._procs.watch("del", st.proc.pid)
                    if _BIND_ERROR.search(text):
                        self._log(f"node {st.node.id}: port {st.port} taken by another process")
                        break
                    raise self._start_failed(st, f"mariadbd exited with code {rc} while starting", text)
                if "ready for connections" in text:
                    st.ready = True
                    return
                if time.monotonic() >= deadline:
                    self._procs.terminate([(st.proc, False)])
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
                                + (why or "it wrote no [ERROR] line") + f"\nits last lines:\n{tail(st.errlog)}", kept)

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
        # Accounts for the machine's host name (root@<hostname>) are not loaded under
        # --skip-name-resolve, so ALTER/DROP USER cannot see them: remove their rows, and the
        # anonymous ones with them, before the grant tables are loaded.
        stmts = [f"DELETE FROM mysql.global_priv WHERE user = '' OR (user = 'root' AND host NOT IN {loopback})",
                 f"DELETE FROM mysql.proxies_priv WHERE host NOT IN {loopback}",
                 "FLUSH PRIVILEGES",
                 "ALTER USER IF EXISTS " + ", ".join(f"'root'@'{host}' IDENTIFIED BY {sql_quote(self.root_password)}"
                                                     for host in ("localhost", "127.0.0.1", "::1")),
                 *(stmt for user in (REPL_USER, *self._repl_users) for stmt in (
                     f"CREATE USER {sql_quote(user)}@'127.0.0.1' IDENTIFIED BY {sql_quote(self.repl_password)}",
                     f"GRANT REPLICATION SLAVE ON *.* TO {sql_quote(user)}@'127.0.0.1'"))]
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

    def _client(self, st: _State, statement: str, *, timeout: float | None = None) -> Results:
        if st.proc is None or st.proc.poll() is not None:
            raise NodeDown(f"node {st.node.id} is not running")
        return sqlclient.run(self.server.client, os.path.join(self.root, "client.cnf"), st.port, statement, node=st.node.id,
                             timeout=self.sql_timeout if timeout is None else timeout, env=self._env, redact=self.redact)

    def redact(self, text: str) -> str:
        return text.replace(self.root_password, "***").replace(self.repl_password, "***")

    def results(self, node: str, statement: str, *, timeout: float | None = None) -> Results:
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
        return (f"CHANGE MASTER{connection_clause(connection)} TO " + ", ".join(self.source_clauses(port, REPL_USER))
                + ", MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1")

    def source_clauses(self, port: int | None, user: str | None) -> tuple[str, ...]:
        """The clauses of a CHANGE MASTER TO that point a channel at a loopback port (MASTER_HOST,
        MASTER_PORT) and connect it as a user (MASTER_USER, MASTER_PASSWORD: root's, or the one every
        replication user has), each when given."""
        password = self.root_password if user == "root" else self.repl_password
        return ((f"MASTER_HOST='127.0.0.1', MASTER_PORT={int(port)}",) if port is not None else ()) + \
            ((f"MASTER_USER={sql_quote(user)}, MASTER_PASSWORD={sql_quote(password)}",) if user is not None else ())

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
            raise NodeDown(f"node {node} is not running")
        self._log(f"node {node}: kill -9 {st.proc.pid}")
        self._procs.send(st.proc, signal.SIGKILL)
        if not self._procs.reap(st.proc, 10):
            raise HarnessError(f"node {node}: pid {st.proc.pid} survived SIGKILL for 10 s")
        st.ready = False

    def stop(self, node: str) -> None:
        """A clean shutdown (SIGTERM; SIGKILL after the grace)."""
        st = self._state(node)
        if not self.is_running(node):
            raise NodeDown(f"node {node} is not running")
        self._log(f"node {node}: shutdown")
        self._procs.terminate([(st.proc, st.ready)])
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

    def binlog_dir(self, node: str) -> str:
        """Where the node's binlogs, their index and bin.state are."""
        return self._state(node).binlog_dir

    def fill_disk(self, node: str) -> None:
        """The filesystem of the node's binlog, full (a node started with it in small_disks)."""
        st = self._state(node)
        if not st.small_disk:
            raise HarnessError(f"node {node}'s binlog is not on a small filesystem of its own: it cannot be filled")
        disk.fill(st.binlog_dir)

    def free_disk(self, node: str) -> None:
        disk.free(self._state(node).binlog_dir)

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
