"""The MariaDB harness: lookup, ports and topology checks always; the rest against a real server
(skipped, with the reason, when mariadbd cannot be found)."""
from __future__ import annotations

import json
import os
import pathlib
import selectors
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from replcheck.harness import mariadb, processes, service
from replcheck.harness.binaries import BASEDIR_ENV, find_server
from replcheck.harness.errors import HarnessError, ServerNotFound, SqlError, TopologyError
from replcheck.harness.mariadb import Cluster
from replcheck.harness.processes import free_port, wait_for
from replcheck.harness.proxy import STEADY_FROM, STEADY_UNTIL, ChannelProxy, query_wait
from replcheck.harness.sqlclient import parse_xml_results, sql_quote
from replcheck.harness.topology import Channel, Node, Topology

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------------------------------------
# Without a server


def test_find_server_bogus_basedir_names_what_is_missing(tmp_path):
    with pytest.raises(ServerNotFound) as e:
        find_server(str(tmp_path / "nowhere"))
    msg = str(e.value)
    assert "\n" not in msg
    assert "no mariadbd, mariadb-install-db, mariadb, mariadb-binlog in" in msg and str(tmp_path / "nowhere") in msg


def test_find_server_uses_the_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv(BASEDIR_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(ServerNotFound, match=f"from {BASEDIR_ENV}"):
        find_server()


def _fake_tool(path, body="exit 0"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def test_find_server_in_a_build_reports_the_version(tmp_path):
    _fake_tool(tmp_path / "sbin" / "mariadbd", "echo 'mariadbd  Ver 10.11.99-MariaDB-log for Linux on x86_64 (Source)'")
    with pytest.raises(ServerNotFound) as e:
        find_server(str(tmp_path))
    assert "no mariadb-install-db, mariadb, mariadb-binlog in" in str(e.value)  # mariadbd itself was found
    for tool in ("mariadb-install-db", "mariadb", "mariadb-binlog"):
        _fake_tool(tmp_path / "bin" / tool)
    found = find_server(str(tmp_path))
    assert found.mariadbd == str(tmp_path / "sbin" / "mariadbd") and found.client == str(tmp_path / "bin" / "mariadb")
    assert found.binlog == str(tmp_path / "bin" / "mariadb-binlog")
    assert found.basedir == str(tmp_path)
    assert found.version == "10.11.99-MariaDB-log" and found.version_tuple == (10, 11, 99)


def test_find_server_rejects_a_server_that_does_not_run(tmp_path):
    for tool in ("mariadbd", "mariadb-install-db", "mariadb", "mariadb-binlog"):
        _fake_tool(tmp_path / "bin" / tool, "echo broken >&2; exit 1")
    with pytest.raises(ServerNotFound, match="--version exited 1"):
        find_server(str(tmp_path))


def test_free_port_is_bindable_and_avoids_excluded_ports():
    port = free_port()
    assert 1024 <= port <= 65535
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
    assert free_port(exclude={port}) != port


@pytest.mark.parametrize("nodes, channels, message", [
    ([], [], "no nodes"),
    (["a", "b"], [("a", "x")], "channel a->x: unknown node 'x'"),
    (["a", "b", "c"], [("a", "c"), ("b", "c")], "node 'c' has two sources ('a' and 'b')"),
    (["a"], [("a", "a")], "cannot replicate from itself"),
    (["a", "a"], [], "node 'a' appears twice"),
    ([Node("a", 7), Node("b", 7)], [], "share server_id 7"),
    ([Node("a", 0)], [], "server_id 0 is not an integer"),
    (["1a"], [], "node id '1a' is not"),
    (["a/b"], [], "node id 'a/b' is not"),
    (["a", "b"], [("a", "b", -1)], "MASTER_DELAY -1 is not an integer"),
    ([Node("a", 1, ("innodb=OFF",))], [], "does not start with --"),
])
def test_topology_errors(nodes, channels, message):
    with pytest.raises(TopologyError) as e:
        Topology(nodes, channels)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_topology_forms_and_history_topology():
    t = Topology(["a", {"id": "b", "server_id": 20}, Node("c", 30)], [("a", "b", 2), {"source": "b", "replica": "c"}])
    assert [(n.id, n.server_id) for n in t.nodes] == [("a", 1), ("b", 20), ("c", 30)]
    assert t.channels == (Channel("a", "b", 2), Channel("b", "c", 0)) and t.source_of("c").source == "b"
    h = Topology.from_history({"nodes": [{"id": "p", "variables": {"rpl_semi_sync_master_enabled": True}},
                                         {"id": "r", "server_id": 9, "log_slave_updates": False}],
                               "channels": [{"source": "p", "replica": "r", "delay": 5}]})
    assert h.nodes == (Node("p", 1, ("--rpl-semi-sync-master-enabled=ON",)), Node("r", 9, ("--log-slave-updates=0",)))
    assert h.channels == (Channel("p", "r", 5),)
    assert Topology.from_history({"nodes": [{"id": "p", "clock_offset_us": 5}]}).nodes == (Node("p", 1),)  # Cluster's clocks run it
    with pytest.raises(TopologyError, match="commit_timestamps not supported"):
        Topology.from_history({"nodes": [{"id": "p", "commit_timestamps": True}]})


def test_cluster_rejects_a_bad_topology_before_touching_anything(tmp_path):
    with pytest.raises(TopologyError, match="unknown node 'x'"):
        Cluster({"nodes": [{"id": "a"}], "channels": [{"source": "a", "replica": "x"}]}, tmpdir=str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def _packet(seq: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "little") + bytes([seq]) + payload


def _ack(pos: int, file: bytes = b"bin.000001") -> bytes:
    return _packet(0, b"\xef" + pos.to_bytes(8, "little") + file + b"\0")


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, f"connection closed after {data!r}"
        data += chunk
    return data


def test_ack_proxy_loses_exactly_the_acks_asked_for():
    """Replica-to-source packets pass byte for byte, except pending acks after COM_BINLOG_DUMP; an
    0xEF packet before the dump, or one that is not a command (sequence number 1), is no ack."""
    source = socket.create_server(("127.0.0.1", 0))
    forwarded, lost = [], []
    proxy = ChannelProxy(lambda: source.getsockname()[1], on_ack=lambda f, p: forwarded.append((f, p)),
                     on_lost=lambda f, p: lost.append((f, p)))
    try:
        replica = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
        source.settimeout(10)
        upstream, _ = source.accept()
        upstream.settimeout(10)
        early = _packet(0, b"\xef" + bytes(9))  # before the dump: not an ack
        handshake = _packet(1, b"\xef" + bytes(20))
        dump = _packet(0, b"\x12" + bytes(10))
        proxy.lose(2)
        replica.sendall(early + handshake)
        assert _recv_exactly(upstream, len(early + handshake)) == early + handshake
        replica.sendall(dump + _ack(300) + _ack(400)[:5])  # the second ack split across sends
        replica.sendall(_ack(400)[5:] + _ack(500, b"bin.000002"))
        assert _recv_exactly(upstream, len(dump + _ack(500, b"bin.000002"))) == dump + _ack(500, b"bin.000002")
        assert lost == proxy.lost == [("bin.000001", 300), ("bin.000001", 400)]
        assert forwarded == [("bin.000002", 500)] and proxy.pending == 0
        upstream.sendall(_packet(1, b"\x00binlog event"))  # the other way: untouched
        assert _recv_exactly(replica, 17) == _packet(1, b"\x00binlog event")
        replica.close()
        assert upstream.recv(10) == b""  # a hang-up is passed on
    finally:
        proxy.close()
        source.close()


def test_the_clock_query_is_passed_on_inside_a_second():
    # Held only near a second's turn, and then until STEADY_FROM into the next second.
    for now, wait in ((100.5, 0.0), (100.0 + STEADY_FROM, 0.0), (100.0, STEADY_FROM), (100.995, 0.005 + STEADY_FROM),
                      (100.999, 0.001 + STEADY_FROM)):
        assert abs(query_wait(now) - wait) < 1e-6, (now, query_wait(now), wait)
        assert STEADY_FROM - 1e-9 <= (now + query_wait(now)) % 1 < STEADY_UNTIL  # float: 100.02 % 1 < 0.02


class _Clock:
    """A wall clock that moves only when slept on, or when told."""
    def __init__(self, now: float):
        self.now, self.slept = now, []

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.slept.append(round(s, 6))
        self.now += s


@pytest.mark.parametrize("late, asked_at, estimate", [(False, 1_795_437_350.9, 0), (True, 1_795_437_350.3, 1), (True, 1_795_437_350.9, 1)])
def test_the_clock_answer_makes_the_estimate_asked_for(late, asked_at, estimate):
    """The replica's SELECT UNIX_TIMESTAMP() before the dump: passed on in the steady part of a
    second; its answer passed on at once (estimate 0) or, on a late channel, held into the next
    second (estimate 1). Both reported with the master's answer."""
    source = socket.create_server(("127.0.0.1", 0))
    clock, seen = _Clock(asked_at), []
    proxy = ChannelProxy(lambda: source.getsockname()[1], on_clock=seen.append, late=late, clock=clock, sleep=clock.sleep)
    try:
        replica = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
        source.settimeout(10)
        upstream, _ = source.accept()
        upstream.settimeout(10)
        query = _packet(0, b"\x03SELECT UNIX_TIMESTAMP()")
        replica.sendall(query)
        assert _recv_exactly(upstream, len(query)) == query
        sent = clock.now
        assert STEADY_FROM - 1e-6 <= sent % 1 < STEADY_UNTIL
        answer = (_packet(1, b"\x01") + _packet(2, b"\x03def\x00\x00\x00\x10UNIX_TIMESTAMP()") +
                  _packet(3, b"\x0a" + str(int(sent)).encode()) + _packet(4, b"\xfe\x00\x00\x02\x00"))
        upstream.sendall(answer)
        assert _recv_exactly(replica, len(answer)) == answer  # byte for byte, whenever
        [x] = seen
        assert (x.master_unix_timestamp, x.clock_diff_with_master, x.late) == (int(sent), estimate, late)
        assert int(x.delivered) == int(sent) + estimate
    finally:
        proxy.close()
        source.close()


def test_client_xml_parsing_keeps_null_apart_from_the_string():
    out = (b'<?xml version="1.0"?>\n\n<resultset statement="select 1" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
           b'  <row>\n\t<field name="a">1</field>\n\t<field name="b" xsi:nil="true" />\n\t<field name="c">NULL</field>\n'
           b'\t<field name="d">x&lt;\x01\r\n\ty</field>\n\t<field name="e"></field>\n  </row>\n</resultset>\n'
           b'<?xml version="1.0"?>\n\n<resultset statement="select 2" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
           b'</resultset>\n')
    assert parse_xml_results(out) == [(["a", "b", "c", "d", "e"], [["1", None, "NULL", "x<\x01\r\n\ty", ""]]), ([], [])]
    assert parse_xml_results(b"") == []
    assert sql_quote("it's a \\") == "'it\\'s a \\\\'"


# ---------------------------------------------------------------------------------------------
# With a real server


def require_server():
    """The installed MariaDB, or skip the test saying why (shared by the real-server tests)."""
    try:
        return find_server()
    except ServerNotFound as e:
        pytest.skip(f"real-server tests need MariaDB: {e}")


@pytest.fixture(scope="module")
def server():
    return require_server()


def _wait_rows(c: Cluster, node: str, query: str, want: list, timeout: float = 10.0) -> None:
    def arrived():
        try:
            return c.sql(node, query) == want
        except SqlError as e:
            if e.errno in (1049, 1146):  # database or table not replicated yet
                return False
            raise
    wait_for(arrived, timeout, f"{want} from {query!r} on {node}")


def _alive(pid: int) -> bool:
    return processes.alive(pid)


PAM_TOOL_DIR = "/usr/lib/mysql/plugin/auth_pam_tool_dir"


def test_primary_and_replica(server):
    # mariadb-install-db --user=root would chown this system directory (Debian: owned by mysql).
    pam_owner = os.stat(PAM_TOOL_DIR).st_uid if os.path.isdir(PAM_TOOL_DIR) else None
    with Cluster(Topology(["primary", "replica"], [("primary", "replica")]), server=server) as c:
        assert c.version == server.version
        c.sql("primary", "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(8)); "
                         "INSERT INTO d.t VALUES (1, NULL), (2, 'NULL')")
        _wait_rows(c, "replica", "SELECT id, v FROM d.t ORDER BY id", [["1", None], ["2", "NULL"]], timeout=5)
        s = c.show_slave_status("replica")
        assert (s["Slave_IO_Running"], s["Slave_SQL_Running"], s["Using_Gtid"]) == ("Yes", "Yes", "Slave_Pos")
        assert s["Master_Port"] == str(c.port("primary")) and s["Master_User"] == "repl"
        assert c.show_slave_status("primary") == {}
        assert c.global_status("primary", "Slaves_connected") == {"Slaves_connected": "1"}
        # Security: no anonymous account; root over TCP needs the password.
        assert c.sql("primary", "SELECT COUNT(*) FROM mysql.user WHERE user = ''") == [["0"]]
        anonymous = subprocess.run([server.client, "--no-defaults", "--protocol=TCP", "--host=127.0.0.1",
                                    f"--port={c.port('primary')}", "--user=root", "-e", "SELECT 1"],
                                   capture_output=True, text=True, timeout=10)
        assert anonymous.returncode != 0 and "ERROR 1045" in anonymous.stderr
        with pytest.raises(SqlError) as e:
            c.sql("replica", "SELECT * FROM d.nosuch")
        assert (e.value.errno, e.value.sqlstate, e.value.node) == (1146, "42S02", "replica")
        assert "d.nosuch" in e.value.message
    if pam_owner is not None:
        assert os.stat(PAM_TOOL_DIR).st_uid == pam_owner


@pytest.mark.skipif(os.geteuid() != 0, reason="what replcheck does when it runs as root")
def test_as_root_the_servers_run_as_the_unprivileged_service_user(server):
    import pwd

    user = pwd.getpwnam(service.SERVICE_USER)
    with Cluster(Topology(["primary", "replica"], [("primary", "replica")]), server=server) as c:
        c.sql("primary", "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY); INSERT INTO d.t VALUES (1)")
        _wait_rows(c, "replica", "SELECT id FROM d.t", [["1"]], timeout=5)
        pids = c.pids()
        assert len(pids) == 2
        for pid in pids.values():
            with open(f"/proc/{pid}/status") as f:
                uids = next(line for line in f if line.startswith("Uid:")).split()[1:]
            assert set(map(int, uids)) == {user.pw_uid}
        for node in ("primary", "replica"):
            for where, dirs, files in os.walk(os.path.join(c.root, node)):
                for name in [where, *(os.path.join(where, n) for n in dirs + files)]:
                    assert os.lstat(name).st_uid == user.pw_uid, name
        assert stat.S_IMODE(os.stat(os.path.join(c.root, "client.cnf")).st_mode) == 0o600
        assert os.stat(os.path.join(c.root, "client.cnf")).st_uid == 0  # the password stays root's


def test_chain_and_fan_out(server):
    topology = Topology(["a", "b", "c", "d"], [("a", "b"), ("b", "c"), ("a", "d")])
    with Cluster(topology, server=server) as c:
        c.sql("a", "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY); INSERT INTO d.t VALUES (7)")
        for node in ("b", "c", "d"):
            _wait_rows(c, node, "SELECT id FROM d.t", [["7"]], timeout=5)
        s = c.show_slave_status("c")
        assert s["Master_Port"] == str(c.port("b")) and s["Slave_SQL_Running"] == "Yes"
        # Every event on c went through b's binlog (log-slave-updates) but keeps a's server id.
        assert c.sql("c", "SELECT @@gtid_slave_pos") == c.sql("a", "SELECT @@gtid_binlog_pos")


def test_kill9_and_restart_resume_replication(server):
    with Cluster(Topology(["p", "r"], [("p", "r")]), server=server) as c:
        c.sql("p", "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY); INSERT INTO d.t VALUES (1)")
        _wait_rows(c, "r", "SELECT id FROM d.t", [["1"]], timeout=5)
        old_pid, port = c.pid("r"), c.port("r")
        c.kill9("r")
        assert not c.is_running("r") and not _alive(old_pid) and c.pid("r") is None
        with pytest.raises(HarnessError, match="node r is not running"):
            c.sql("r", "SELECT 1")
        c.sql("p", "INSERT INTO d.t VALUES (2)")  # while the replica is down
        c.restart("r")
        assert c.port("r") == port and c.pid("r") != old_pid
        _wait_rows(c, "r", "SELECT id FROM d.t ORDER BY id", [["1"], ["2"]], timeout=5)
        s = c.show_slave_status("r")
        assert (s["Slave_IO_Running"], s["Slave_SQL_Running"]) == ("Yes", "Yes")
        c.stop("r")
        assert not c.is_running("r")


def _root_without_password(port: int) -> bool | None:
    """One password-less login as root over TCP, by the protocol's handshake (quicker than the
    client, so the poll below is dense): True if the server lets it in, False if it refuses,
    None if no server answered (not listening yet, or gone)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            _read_packet(s)  # the server's greeting
            # HandshakeResponse41: LONG_PASSWORD | PROTOCOL_41 | SECURE_CONNECTION | PLUGIN_AUTH,
            # max packet, utf8mb4, filler, user, an empty auth response, its plugin.
            s.sendall(_packet(1, (0x88201).to_bytes(4, "little") + (1 << 24).to_bytes(4, "little") + b"\x2d"
                              + bytes(23) + b"root\0" + b"\0" + b"mysql_native_password\0"))
            while True:
                seq, reply = _read_packet(s)
                if reply[0] != 0xFE:  # 0x00 OK, 0xFF ERR
                    return reply[0] == 0x00
                s.sendall(_packet(seq + 1, b""))  # auth switch: the empty password again
    except (OSError, AssertionError):
        return None


def _read_packet(sock: socket.socket) -> tuple[int, bytes]:
    header = _recv_exactly(sock, 4)
    return header[3], _recv_exactly(sock, int.from_bytes(header[:3], "little"))


def test_no_password_less_root_at_any_time(server, monkeypatch):
    # Issue 14: each server once accepted root without a password from "ready for connections"
    # until the harness set the passwords. Poll every port from the moment it is chosen (just
    # before its server is spawned) until start() returns, then once more.
    ports: list[int] = []
    real = mariadb.free_port

    def chosen(exclude=()):
        ports.append(real(exclude))
        return ports[-1]
    monkeypatch.setattr(mariadb, "free_port", chosen)
    done = threading.Event()
    answers: list[bool] = []

    def poll():
        while not done.wait(0.001):  # a breath between rounds: the servers share the CPU
            answers.extend(a for a in map(_root_without_password, list(ports)) if a is not None)
    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    c = Cluster(Topology(["a", "b", "c"], [("a", "b"), ("a", "c")]), server=server)
    try:
        c.start()
        done.set()
        poller.join()
        assert answers and not any(answers), f"{answers.count(True)} of {len(answers)} logins let in"
        assert [_root_without_password(c.port(n)) for n in c.nodes] == [False] * 3
        # The set-up never reached a binlog, and the passwords are in no file of the root but
        # the client's option file.
        assert c.sql("a", "SELECT @@gtid_binlog_pos") == [[""]]
        secret = c.root_password.encode()
        holders = [e.name for e in os.scandir(c.root) if e.is_file() and secret in pathlib.Path(e.path).read_bytes()]
        assert holders == ["client.cnf"]
    finally:
        done.set()
        c.close()


class _Boom(Exception):
    pass


@pytest.mark.parametrize("body_raises", [False, True], ids=["clean-exit", "body-raises"])
def test_teardown_leaves_no_process_and_no_directory(server, body_raises):
    seen: dict = {}
    try:
        with Cluster(Topology(["a", "b"], [("a", "b")]), server=server) as c:
            seen.update(pids=list(c.pids().values()), root=c.root)
            assert len(seen["pids"]) == 2 and all(_alive(p) for p in seen["pids"])
            # as root the service user passes through the root to its node's directory, and lists nothing
            assert stat.S_IMODE(os.stat(c.root).st_mode) == (0o711 if os.geteuid() == 0 else 0o700)
            for path in (c.node_dir("a"), c.datadir("a"), c.node_dir("b"), c.datadir("b")):
                assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
            if body_raises:
                raise _Boom()
    except _Boom:
        assert body_raises
    assert not any(_alive(p) for p in seen["pids"])
    assert not os.path.exists(seen["root"])


def test_port_collision_is_retried(server, monkeypatch):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    ports = iter([taken.getsockname()[1]])
    real = mariadb.free_port
    monkeypatch.setattr(mariadb, "free_port", lambda exclude=(): next(ports, None) or real(exclude))
    try:
        with Cluster(Topology(["a"]), server=server) as c:
            assert c.port("a") != taken.getsockname()[1]
            assert c.sql("a", "SELECT @@port") == [[str(c.port("a"))]]
    finally:
        taken.close()


def test_master_delay(server):
    with Cluster(Topology(["p", "r"], [("p", "r", 2)]), server=server) as c:
        assert c.show_slave_status("r")["SQL_Delay"] == "2"
        c.sql("p", "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY); INSERT INTO d.t VALUES (1)")
        committed = time.monotonic()
        states = set()

        def visible():
            try:
                return c.sql("r", "SELECT id FROM d.t") == [["1"]]
            except SqlError as e:
                if e.errno not in (1049, 1146):
                    raise
                states.add(c.show_slave_status("r")["Slave_SQL_Running_State"])
                return False
        wait_for(visible, 10, "the delayed row", interval=0.1)
        elapsed = time.monotonic() - committed  # 2.0 s seen: the delay has sub-second precision
        assert 1.5 <= elapsed <= 8, elapsed
        assert "Waiting until MASTER_DELAY seconds after master executed event" in states, states


# -- the harness killed from outside: run it in a subprocess

_SCRIPT = textwrap.dedent("""
    import json, signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from replcheck.harness.mariadb import Cluster
    from replcheck.harness.topology import Topology
    try:
        with Cluster(Topology(["a", "b"], [("a", "b")])) as c:
            print(json.dumps({"pids": list(c.pids().values()), "root": c.root}), flush=True)
            time.sleep(60)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", signal.getsignal(signal.SIGINT) is signal.default_int_handler, flush=True)
        sys.exit(3)
""")


def _start_harness() -> tuple[subprocess.Popen, dict]:
    proc = subprocess.Popen([sys.executable, "-c", _SCRIPT], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    if not sel.select(timeout=30):
        proc.kill()
        proc.wait()
        pytest.fail("the harness subprocess printed nothing within 30 s")
    line = proc.stdout.readline()
    if not line:
        proc.wait()
        pytest.fail(f"the harness subprocess exited with {proc.returncode} before printing its servers")
    return proc, json.loads(line)


def _cleanup(proc: subprocess.Popen, info: dict) -> None:
    # Only if the test failed: do not leave our servers on the machine.
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for pid in info["pids"]:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if info["root"].encode() in f.read():
                    os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _gone(info: dict) -> None:
    wait_for(lambda: not any(_alive(p) for p in info["pids"]), 10, f"servers {info['pids']} to be gone")
    wait_for(lambda: not os.path.exists(info["root"]), 10, f"{info['root']} to be removed")


def test_killing_the_harness_leaves_no_server_behind(server):
    proc, info = _start_harness()
    try:
        assert len(info["pids"]) == 2 and all(_alive(p) for p in info["pids"])
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        _gone(info)
    finally:
        _cleanup(proc, info)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signals_tear_down_and_keep_their_meaning(server, sig):
    proc, info = _start_harness()
    try:
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=20)
        if sig == signal.SIGTERM:
            assert proc.returncode == -signal.SIGTERM  # the default action, after the teardown
        else:  # KeyboardInterrupt reached the program, with its handler restored
            assert (proc.returncode, out.strip()) == (3, "KeyboardInterrupt True")
        assert not any(_alive(p) for p in info["pids"]) and not os.path.exists(info["root"])
    finally:
        _cleanup(proc, info)
