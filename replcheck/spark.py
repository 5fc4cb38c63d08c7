"""The campaign's Spark session: its logging, the code it ships to the executors, its settings
(--conf, the UI) and the one-line causes of a cluster's failures.

Nothing the executors need is a path of the driver's machine: replcheck goes to them as a zip of
its packages (`--ship zip`, through Spark's file server, as `--py-files` would), their
interpreter is the cluster's (`spark.pyspark.python`, else `python3` on the nodes), and the
logging configuration written here is the driver's alone.
"""
from __future__ import annotations

import hashlib
import io as _bytes
import itertools
import os
import re
import shutil
import socket
import sys
import tempfile
import threading
import time
import zipfile
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path
from typing import Callable, Iterable, Iterator

from replcheck import io

# How replcheck reaches the executors: `zip`, its packages shipped with the application (the
# nodes need Python and replcheck's dependencies); `installed`, nothing shipped (it is installed
# on every node, or in an archive given by --conf spark.archives).
SHIPS = ("zip", "installed")
# replcheck's import packages (pyproject.toml's [tool.setuptools] packages): what the zip holds
PACKAGES = ("replcheck", "replcheck.harness", "replcheck.tla", "replcheck.model", "replcheck.model.sim", "replcheck.model.steps",
            "replcheck.properties", "replcheck.properties.proofs", "replcheck.properties.machines", "replcheck.spec")

LOG4J = """\
# replcheck campaign: Spark's own logging to stderr, at the level --verbose chooses
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
"""
# What the JVM prints at start on stderr whatever the logging configuration says (PySpark counts
# as a shell, and Spark announces the shell's log level).
JVM_NOISE = (b"WARNING: Using incubator modules", b'Setting default log level to "WARN"',
             b"To adjust logging level use sc.setLogLevel")
# On a local master the Python workers write to the JVM's stderr. When a job is aborted (a task
# failed beyond spark.task.maxFailures) or the application stops, the JVM closes their sockets
# first, and pyspark's daemon prints the traceback of the write that failed: noise of the
# shutdown, not a cause (the cause is cluster_cause's one line), so dropped as JVM_NOISE is.
LOST_SOCKET = (b"BrokenPipeError", b"ConnectionResetError")
TRACEBACK_HEADS = (b"Traceback (most recent call last)", b"PySpark daemon failed to flush")
CHAIN = (b"During handling of the above exception", b"The above exception was the direct cause")


EXECUTOR_WAIT = "spark.replcheck.executorWait"  # seconds, a setting of ours among Spark's (--conf)


class ClusterError(Exception):
    """Spark, the cluster or its nodes failed (not the user's input, not replcheck): exit 3."""


class TaskFailed(Exception):
    """replcheck's own code failed in a task (a bug, an internal error: exit 3); the message is the
    end of the task's traceback, which the driver's PythonException alone does not show."""


def _filter_jvm_stderr() -> Callable[[], None]:
    """Give the JVM about to start a stderr that drops JVM_NOISE and passes everything else on;
    returns what restores ours once it has started (it keeps the filtered one)."""
    read, write = os.pipe()
    ours = os.dup(2)
    os.dup2(write, 2)
    os.close(write)

    def pump():
        with os.fdopen(read, "rb") as jvm:
            for line in quiet(jvm):
                os.write(ours, line)
    threading.Thread(target=pump, daemon=True).start()
    return lambda: os.dup2(ours, 2)


def quiet(lines: Iterable[bytes]) -> Iterator[bytes]:
    """`lines` without JVM_NOISE and without the Python tracebacks that end in LOST_SOCKET (with
    what chains to them); any other traceback whole, once its exception's line is read."""
    held: list[bytes] = []  # a traceback up to its exception's line, which decides
    inherited = False  # the held traceback chains to a dropped one
    dropped = chained = False  # the last traceback was dropped and only blank lines (chained: and a chain line) since
    for line in lines:
        if held:
            if line.startswith((b" ", b"\t") + TRACEBACK_HEADS):
                held.append(line)
                continue
            lost = inherited or line.startswith(LOST_SOCKET)
            if not lost:
                yield from held
                yield line
            held, dropped, chained = [], lost, False
        elif line.startswith(TRACEBACK_HEADS):
            held, inherited = [line], dropped and chained
        elif dropped and (not line.strip() or line.startswith(CHAIN)):
            chained = chained or line.startswith(CHAIN)
        else:
            dropped = False
            if not line.startswith(JVM_NOISE):
                yield line
    yield from held  # cut short: not known to be noise


def _scratch() -> Path:
    """The driver's own files (logging configuration, the zip before Spark serves it)."""
    path = Path(os.environ.get("TMPDIR", tempfile.gettempdir())) / f"replcheck-spark-{os.getuid()}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _is_local(master: str | None) -> bool:
    return master is not None and (master == "local" or master.startswith("local["))


def check_master(master: str | None) -> None:
    """A standalone master that takes no connection: said now, not after Spark's minute of retries."""
    if not master or not master.startswith("spark://"):
        return
    problems = []
    for address in master[len("spark://"):].split(","):  # several for a master with standby ones
        host, _, port = address.rpartition(":")
        try:
            socket.create_connection((host, int(port)), timeout=10).close()
            return
        except (OSError, ValueError) as e:
            problems.append(f"{address}: {getattr(e, 'strerror', None) or e}")
    raise ClusterError(f"--master {master}: unreachable ({'; '.join(problems)})")


SCRATCH_PREFIX = "replcheck-spark-run-"  # then the owning process's pid: a killed run's is found by the next
SCRATCH_MARK = ".replcheck-spark-run"  # in each: only a directory holding it is ever removed as an orphan


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _remove_orphans(root: Path) -> None:
    """The scratch directories of runs that were killed (kill -9 runs no clean-up): their process is gone."""
    for d in root.glob(f"{SCRATCH_PREFIX}*-*"):
        pid = d.name[len(SCRATCH_PREFIX):].split("-")[0]
        if (pid.isdigit() and (d / SCRATCH_MARK).is_file() and d.stat().st_uid == os.getuid()
                and not _alive(int(pid))):
            shutil.rmtree(d, ignore_errors=True)


@contextmanager
def own_session(master: str | None, verbose: bool = False, app: str = "replcheck campaign",
                conf: tuple[tuple[str, str], ...] = (), ui: bool = False, ship: str = "zip") -> Iterator:
    """A session (as `session` makes it) whose driver writes only in a directory of its own:
    Spark's spark.local.dir (its spark-*, blockmgr-* directories) and the JVM's java.io.tmpdir
    (artifacts-*, the liblz4 library it unpacks), left in the system's temporary directory by
    hundreds otherwise. At the end the session and its JVM stop and the directory goes; a killed
    run's is removed by the next."""
    root = Path(tempfile.gettempdir())
    _remove_orphans(root)
    scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=root))
    (scratch / SCRATCH_MARK).touch()
    spark = None
    try:
        spark = session(master, verbose, app, conf, ui, ship, scratch=scratch)
        yield spark
    finally:
        if spark is not None:
            stop(spark)
        shutil.rmtree(scratch, ignore_errors=True)


def stop(spark) -> None:
    """Stop the session and the JVM PySpark started for it: until the JVM exits it keeps writing
    where its java.io.tmpdir says, and a later session in this process starts a JVM of its own.
    A JVM this process did not start (spark-submit's) is left running."""
    from pyspark import SparkContext

    spark.stop()
    # PySpark has no public way to end the JVM it launched: its gateway and the process it keeps
    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if proc is None:
        return
    gateway.shutdown()
    proc.stdin.close()  # the JVM exits when its stdin closes (pyspark.java_gateway.launch_gateway)
    proc.wait()
    SparkContext._gateway = SparkContext._jvm = None


def session(master: str | None, verbose: bool = False, app: str = "replcheck campaign",
            conf: tuple[tuple[str, str], ...] = (), ui: bool = False, ship: str = "zip", scratch: Path | None = None):
    """A session whose JVM logs nothing (INFO with verbose) and draws no progress bar, with
    the user's settings last (they win), and replcheck shipped as `ship` says. `scratch`: the
    directory the driver's Spark and JVM write in (own_session), else their defaults."""
    from pyspark.sql import SparkSession

    check_master(master)
    # without --verbose nothing: a failure reaches the user as one line naming its cause (cluster_cause)
    level = "info" if verbose else "off"
    log4j = (scratch or _scratch()) / f"log4j2-{level}.properties"
    if not log4j.exists():
        io.write_atomic(log4j, LOG4J.format(level=level))
    settings = dict(conf)
    if "spark.pyspark.python" in settings:  # PySpark reads it from the environment (spark-submit sets it so)
        os.environ["PYSPARK_PYTHON"] = settings["spark.pyspark.python"]
    elif _is_local(master):  # the executors run on this machine: this interpreter has replcheck's dependencies
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    java = f"-Dlog4j2.configurationFile=file:{log4j}" + (f" -Djava.io.tmpdir={scratch}" if scratch else "")
    builder = (SparkSession.builder.appName(app)
               .config("spark.driver.extraJavaOptions", java)
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.ui.enabled", "true" if ui else "false")
               .config("spark.sql.shuffle.partitions", "8"))
    if scratch and _is_local(master):  # a cluster's executors have their nodes' own (SPARK_LOCAL_DIRS)
        builder = builder.config("spark.local.dir", str(scratch))
    for key, value in settings.items():
        builder = builder.config(key, value)
    if master:
        builder = builder.master(master)
    restore = (lambda: None) if verbose else _filter_jvm_stderr()
    try:
        spark = builder.getOrCreate()
    except Exception as e:  # the JVM's reason, on one line
        raise ClusterError(f"--master {master or 'of spark-submit'}: Spark did not start: {cluster_cause(e) or first_line(str(e))}") from None
    finally:
        restore()
    spark.sparkContext.setLogLevel(level.upper())
    if ship == "zip":
        spark.sparkContext.addPyFile(str(package_zip(scratch or _scratch())))
    return spark


def await_executors(sc) -> None:
    """On a cluster, the first executor or a ClusterError: a cluster without the cores or memory
    the application asks for would leave its first job waiting for ever, with no word of why."""
    if _is_local(sc.master) or sc.getConf().get("spark.dynamicAllocation.enabled") == "true":
        return  # local: the driver is the executor; dynamic allocation asks for executors only once a job waits
    wait = float(sc.getConf().get(EXECUTOR_WAIT, "300"))
    deadline = time.monotonic() + wait
    while not sc._jsc.sc().getExecutorIds().size():
        if time.monotonic() > deadline:
            raise ClusterError(f"no executor in {wait:g} s: the cluster has not the free cores or memory this application "
                               f"asks for (spark.executor.cores, spark.executor.memory; {EXECUTOR_WAIT} sets the wait)")
        time.sleep(0.5)


def package_zip(into: Path) -> Path:
    """replcheck's packages, code and spec data, as one zip for sys.path, read from wherever this
    replcheck is imported from (a checkout, a wheel, a zip); named by its content."""
    buf = _bytes.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for package in PACKAGES:
            _add(z, files(package), package.replace(".", "/"))
    data = buf.getvalue()
    path = into / f"replcheck-{hashlib.sha256(data).hexdigest()[:16]}.zip"
    if not path.exists():
        fd, tmp = tempfile.mkstemp(dir=into, prefix=".zip.")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    return path


def _add(z: zipfile.ZipFile, node, arc: str) -> None:
    """A package's files and data folders; a subpackage is PACKAGES' own entry (its folder may be elsewhere)."""
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.is_dir():
            if child.name != "__pycache__" and not child.joinpath("__init__.py").is_file():
                _add(z, child, f"{arc}/{child.name}")
        elif not child.name.endswith(".pyc"):
            info = zipfile.ZipInfo(f"{arc}/{child.name}", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, child.read_bytes(), zipfile.ZIP_DEFLATED)


def first_line(text: str) -> str:
    return io.printable(text.strip().splitlines()[0] if text.strip() else "no message")[:300]


TASK_TRACEBACK_LINES = 6  # the last frames and the exception: where in replcheck and what


def _text(e: BaseException) -> str:
    try:
        return str(e)
    except Exception:  # a captured exception whose JVM is gone cannot format itself; its description can
        return str(getattr(e, "desc", "") or type(e).__name__)


def task_failure(e: BaseException) -> str | None:
    """The last lines of the Python traceback a failed task sent back in a captured exception (its
    last frames and the exception line, the JVM's stack after it left out); None without one."""
    text = _text(e)
    at = text.rfind("Traceback (most recent call last):")
    if at < 0:
        return None
    lines = [line for line in text[at:].splitlines()[1:] if line.strip()]
    lines = list(itertools.takewhile(lambda line: not line.startswith(("\tat ", "\t... ")), lines))
    return "\n".join(lines[-TASK_TRACEBACK_LINES:]) or None


def cluster_cause(e: BaseException) -> str | None:
    """The one-line cause of a failure of Spark, the cluster or its nodes; None for a failure of
    replcheck's own code in a task (a bug: its traceback is what to report)."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    if not isinstance(e, (Py4JError, PySparkException)):
        return None
    text = _text(e)
    if m := re.search(r"(?:ModuleNotFoundError|ImportError): ([^\n]*)", text):
        return (f"an executor's Python cannot import what a task needs ({m.group(1).strip()}): with --ship zip the "
                "nodes need replcheck's dependencies, with --ship installed replcheck too (docs/cluster.md)")
    if m := re.search(r"\n(?:OSError|PermissionError|FileNotFoundError|ConnectionError|TimeoutError): ([^\n]*)", text):
        return f"a task could not write or read --out: {m.group(1).strip()}"
    if "Traceback (most recent call last)" in text:
        return None
    if m := re.search(r"Job aborted due to stage failure: ([^\n]*)", text):
        return first_line(m.group(1))
    if re.search(r"SparkContext (was shut down|has been shutdown)|stopped SparkContext", text):
        return "the cluster stopped this application (its master or every executor was lost)"
    if m := re.search(r"\n: ([^\n]+)", text):  # Py4J's "calling X.\n: the Java exception: its message"
        return first_line(m.group(1))
    return first_line(text)
