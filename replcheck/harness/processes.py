"""The processes a Cluster starts: each in a process group of its own, tied to the harness's life
(PR_SET_PDEATHSIG), stopped with a grace and reaped, and registered with a watchdog that kills them and
removes the temporary root if the harness itself is killed."""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
from typing import Any, Callable, Iterable, Mapping

from replcheck.harness import clock, disk
from replcheck.harness.errors import HarnessError

_PR_SET_PDEATHSIG = 1


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



def tail(path: str, lines: int = 25, head: bool = False) -> str:
    try:
        with open(path, "rb") as f:
            if not head:
                f.seek(max(0, os.path.getsize(path) - 8192))
            text = f.read(8192).decode("utf-8", "replace").splitlines()
    except OSError as e:
        return f"(cannot read {path}: {e})"
    return "\n".join(text[:lines] if head else text[-lines:]) or "(empty)"


def alive(pid: int) -> bool:
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


def preexec(parent: int) -> Callable[[], None]:
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
for g in groups:  # what libfaketime left of them in /dev/shm (killed: its destructor did not run)
    for name in sys.argv[2:]:
        try:
            os.unlink(name.format(pid=g))
        except OSError:
            pass
# a node's small binlog filesystem (disk.py, which this isolated interpreter does not import) first
import subprocess
with open("/proc/self/mounts") as f:
    points = [line.split()[1] for line in f]
for p in sorted((p for p in points if p == root or p.startswith(root + "/")), key=len, reverse=True):
    subprocess.run(["umount", "-l", p], capture_output=True)
shutil.rmtree(root, ignore_errors=True)
"""


# ---------------------------------------------------------------------------------------------
# Cluster


class Processes:
    """One Cluster's processes: `env` for each, `stop_grace` s between SIGTERM and SIGKILL, `log` for progress."""

    def __init__(self, env: Mapping[str, str], stop_grace: float, log: Callable[[str], None]):
        self._env, self.stop_grace, self._log = dict(env), stop_grace, log
        self._watchdog: subprocess.Popen | None = None

    def spawn(self, args: list[str], log_path: str, env: Mapping[str, str] | None = None) -> subprocess.Popen:
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    env={**self._env, **(env or {})}, close_fds=True, start_new_session=True,
                                    preexec_fn=preexec(os.getpid()))
        self.watch("add", proc.pid)
        return proc

    def send(self, proc: subprocess.Popen, sig: int) -> None:
        # Only while not yet reaped: a reaped pid (and its group id) may belong to someone else.
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, sig)  # start_new_session: the pid is the group id
            except ProcessLookupError:
                pass

    def reap(self, proc: subprocess.Popen, timeout: float) -> bool:
        try:
            proc.wait(timeout=max(0.0, timeout))
        except subprocess.TimeoutExpired:
            return False
        self.watch("del", proc.pid)
        return True

    def terminate(self, procs: list[tuple[subprocess.Popen, bool]]) -> None:
        """SIGTERM the ready ones (SIGKILL the others: SIGTERM early in start-up can be lost),
        SIGKILL whatever is left after the grace, reap all (bounded)."""
        live = [(p, ready) for p, ready in procs if p.poll() is None]
        for p, ready in live:
            self.send(p, signal.SIGTERM if ready else signal.SIGKILL)
        deadline = time.monotonic() + self.stop_grace
        for p, _ in live:
            if not self.reap(p, deadline - time.monotonic()):
                self._log(f"pid {p.pid} still running after {self.stop_grace:g} s: SIGKILL")
                self.send(p, signal.SIGKILL)
                if not self.reap(p, 10):
                    warnings.warn(f"replcheck.harness: pid {p.pid} survived SIGKILL for 10 s", RuntimeWarning)
        for p, _ in procs:  # exited by themselves earlier
            if p.returncode is not None:
                self.watch("del", p.pid)

    def remove_root(self, root: str | None) -> None:
        if root and os.path.exists(root):
            for failed in disk.unmount_under(root):
                warnings.warn(f"replcheck.harness: could not unmount {failed}", RuntimeWarning)
            for _ in range(3):
                shutil.rmtree(root, ignore_errors=True)
                if not os.path.exists(root):
                    break
                time.sleep(0.1)
            else:
                warnings.warn(f"replcheck.harness: could not remove {root}", RuntimeWarning)
            self._log(f"removed {root}")

    def start_watchdog(self, root: str) -> None:
        try:
            self._watchdog = subprocess.Popen([sys.executable, "-I", "-c", _WATCHDOG, root, *clock.SHARED],
                                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True)
        except OSError as e:  # PR_SET_PDEATHSIG still covers the servers
            self._log(f"no watchdog: {e}")

    def watch(self, cmd: str, pid: int) -> None:
        if cmd == "del":  # reaped: what libfaketime left of it, if it died without its destructor (kill -9)
            clock.remove_shared(pid)
        wd = self._watchdog
        if wd is not None and wd.stdin is not None:
            try:
                wd.stdin.write(f"{cmd} {pid}\n".encode())
                wd.stdin.flush()
            except (OSError, ValueError):
                pass

    def end_watchdog(self) -> None:
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
