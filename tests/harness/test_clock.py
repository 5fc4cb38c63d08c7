"""A server's own clock (libfaketime, harness/clock.py): offset at its start, stepped while it runs."""
from __future__ import annotations

import os

import pytest

from replcheck.harness import clock
from replcheck.harness.mariadb import Cluster
from replcheck.harness.topology import Topology
from test_harness_mariadb import require_server

US = 1_000_000


def test_an_offset_is_written_whole_as_signed_seconds(tmp_path):
    assert clock.offset_text(3600 * US) == "+3600.000000\n"
    assert clock.offset_text(-2_500_001) == "-2.500001\n"
    path = str(tmp_path / clock.FILE)
    clock.write(path, -7 * US)
    clock.write(path, 1_800_250_000)
    assert open(path).read() == "+1800.250000\n" and os.listdir(tmp_path) == [clock.FILE]  # renamed over, nothing left


def test_a_missing_library_says_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setenv(clock.LIBRARY_ENV, str(tmp_path / "nowhere.so"))
    with pytest.raises(clock.Missing, match="is not a file"):
        clock.environment("x")


@pytest.fixture(scope="module")
def server():
    return require_server()


def test_a_servers_clock_runs_at_its_offset_and_steps_at_once(server, short_tmp):
    try:
        clock.library()
    except clock.Missing as e:
        pytest.skip(str(e))

    def now(c: Cluster, node: str) -> float:
        [[t]] = c.sql(node, "SELECT UNIX_TIMESTAMP(SYSDATE(6))")
        return float(t)

    def bracketed(c: Cluster, offset_s: float) -> bool:
        """a's clock read between two reads of b's (the machine's): a's reading less its offset
        falls between them, however long the calls took on a loaded machine."""
        before, a, after = now(c, "b"), now(c, "a"), now(c, "b")
        return before - 0.001 <= a - offset_s <= after + 0.001
    with Cluster(Topology(["a", "b"]), server=server, tmpdir=short_tmp, clocks={"a": 3600 * US}) as c:
        assert bracketed(c, 3600)
        c.set_clock("a", -7200 * US)
        assert bracketed(c, -7200)  # read again at the next call: no cache (FAKETIME_NO_CACHE)


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="libfaketime's shared memory lives in /dev/shm")
def test_what_libfaketime_leaves_of_a_killed_server_is_removed_when_it_is_reaped():
    pid = 4_194_399  # above Linux's largest pid_max: no process of anyone's
    names = [name.format(pid=pid) for name in clock.SHARED]
    for name in names:
        with open(name, "w") as f:
            f.write("x")
    clock.remove_shared(pid)
    assert not any(os.path.exists(name) for name in names)
    clock.remove_shared(pid)  # already gone: nothing to do


def test_what_libfaketime_leaves_of_a_server_the_watchdog_killed_is_removed(tmp_path):
    # The watchdog outlives a run killed with kill -9 (its servers die by PR_SET_PDEATHSIG or its
    # SIGKILL, libfaketime's destructor unrun): it removes their shared memory as it ends.
    from replcheck.harness.processes import Processes
    pid = 4_194_398  # above Linux's largest pid_max: no process of anyone's
    names = [name.format(pid=pid) for name in clock.SHARED]
    for name in names:
        with open(name, "w") as f:
            f.write("x")
    procs = Processes({}, 1.0, lambda _: None)
    procs.start_watchdog(str(tmp_path / "root"))
    procs._watchdog.stdin.write(f"add {pid}\n".encode())
    procs._watchdog.stdin.flush()
    procs.end_watchdog()
    assert not any(os.path.exists(name) for name in names)
