"""A loopback standalone Spark cluster whose Workers cannot see the driver's files: a Master and
Workers started with pyspark's bin/spark-class (pip's pyspark has no sbin/start-*.sh), every
Worker in a mount namespace of its own where the checkout and the driver's venv are empty
tmpfs mounts. Only the network and --out's directory join the driver to the executors, as on
machines of their own.

The Workers' Spark and the executors' Python come from a node venv outside the checkout that
has replcheck's dependencies and not replcheck: their installed files (each distribution's
RECORD) hard-linked from this venv's site-packages, copied where the two are on different
filesystems. A .pth pointing at this venv would not do: the tmpfs hides it.
"""
from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from importlib.metadata import distribution
from pathlib import Path

from packaging.requirements import Requirement


def namespaces_refused(hidden: Path) -> str | None:
    """Why this machine cannot hide `hidden` from a process (None: it can)."""
    if os.geteuid() != 0:
        return "hiding the checkout from the Workers needs root (a mount namespace with a tmpfs over it)"
    if shutil.which("unshare") is None:
        return "hiding the checkout from the Workers needs unshare (util-linux)"
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            'mount -t tmpfs replcheck-hidden "$1" && [ -z "$(ls -A "$1")" ]', "sh", str(hidden)],
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else f"no mount namespace here: {probe.stderr.strip() or probe.returncode}"


def dependencies(name: str = "replcheck") -> list:
    """The installed distributions `name` needs (its requirements' closure, extras followed), not itself."""
    found: dict[str, object] = {}
    todo = [(name, frozenset())]
    while todo:
        wanted, extras = todo.pop()
        dist = distribution(wanted)
        key = re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower()
        if key in found:
            continue
        found[key] = dist
        for line in dist.requires or ():
            req = Requirement(line)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras | {""}):
                todo.append((req.name, frozenset(req.extras)))
    return [d for key, d in found.items() if key != name]


def bare_venv(path: Path) -> tuple[Path, Path]:
    """A venv of this interpreter without pip: its python and its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    return python, Path(site)


def node_venv(path: Path) -> tuple[Path, Path]:
    """A venv at `path` holding replcheck's dependencies' files and no path of this one: its
    python and its site-packages."""
    python, site = bare_venv(path)
    for dist in dependencies():
        for file in dist.files or ():
            if ".." in file.parts:  # a console script in bin/: not what an executor runs
                continue
            source, target = Path(dist.locate_file(file)), site / file
            if not source.is_file():  # a .pyc in RECORD that was never written
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, target)
            except OSError:  # another filesystem
                shutil.copy2(source, target)
    return python, site


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A running Master and its Workers: `master` is its spark:// URL, `workers` their processes,
    `dirs` their --work-dir (an application's executors work in APP/EXECUTOR there)."""

    def __init__(self, master: str, workers: list[subprocess.Popen], dirs: list[Path], logs: Path):
        self.master, self.workers, self.dirs, self.logs = master, workers, dirs, logs

    def log(self) -> str:
        """Every daemon's log, for a failed assertion's message."""
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-4000:]}" for p in sorted(self.logs.glob("*.log")))


def _die_with_parent() -> None:
    """SIGKILL when pytest dies (even by SIGKILL, when no finally runs): it lasts through exec, so the
    JVM that unshare, sh and spark-class exec into has it; its executors end on losing their Worker."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _daemon(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    """A process group of its own (spark-class execs the JVM, which forks the executors): killpg ends it all."""
    with open(log, "wb") as out:
        return subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=_die_with_parent)


def _wait_for(text: str, log: Path, proc: subprocess.Popen) -> None:
    # A daemon never exits by itself: a bounded number of looks (ten minutes of them, far above any
    # start) keeps a broken one from hanging the suite; no verdict depends on how long it took.
    for _ in range(3000):
        if proc.poll() is not None:
            break
        if text in log.read_text(errors="replace"):
            return
        time.sleep(0.2)
    raise AssertionError(f"{log.name}: no {text!r} (exit {proc.poll()}):\n{log.read_text(errors='replace')[-4000:]}")


@contextmanager
def standalone(spark_home: Path, work: Path, hidden: list[Path], workers: int = 2):
    """A Master on 127.0.0.1 and `workers` Workers of 1 core and 1 GB each, every Worker (and so
    its executors) in a mount namespace where each of `hidden` is an empty tmpfs; all of it
    killed at the end, whatever happened."""
    path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if not any(Path(d).is_relative_to(h) for h in hidden))
    env = {"PATH": path, "HOME": str(work), "SPARK_HOME": str(spark_home), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_DAEMON_MEMORY": "256m", "SPARK_LOG_DIR": str(work / "logs"),
           "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false"}  # its fixed port 6066: one cluster per machine
    env.update({k: os.environ[k] for k in ("JAVA_HOME", "LANG") if k in os.environ})
    spark_class = str(spark_home / "bin" / "spark-class")
    procs: list[subprocess.Popen] = []
    try:
        port = free_port()
        master = _daemon([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                          "--port", str(port), "--webui-port", str(free_port())], env, work / "master.log")
        procs.append(master)
        _wait_for("I have been elected leader", work / "master.log", master)
        url = f"spark://127.0.0.1:{port}"
        hide = 'while [ "$1" != -- ]; do mount -t tmpfs replcheck-hidden "$1" || exit 97; shift; done; shift; exec "$@"'
        started = []
        for i in range(workers):
            worker_dir = work / f"worker-{i}"
            worker_dir.mkdir()
            started.append(_daemon(
                ["unshare", "--mount", "--propagation", "private", "sh", "-c", hide, "sh", *map(str, hidden), "--",
                 spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "1",
                 "--memory", "1g", "--work-dir", str(worker_dir), "--webui-port", str(free_port())],
                env, work / f"worker-{i}.log"))
            procs.append(started[-1])
        for i, proc in enumerate(started):
            _wait_for("Successfully registered with master", work / f"worker-{i}.log", proc)
        yield Cluster(url, started, [work / f"worker-{i}" for i in range(workers)], work)
    finally:
        for proc in reversed(procs):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


def in_namespace_of(worker: subprocess.Popen, *argv: str) -> subprocess.CompletedProcess:
    """`argv` run in `worker`'s mount namespace (what its executors see)."""
    return subprocess.run(["nsenter", "--target", str(worker.pid), "--mount", *argv], capture_output=True, text=True)
