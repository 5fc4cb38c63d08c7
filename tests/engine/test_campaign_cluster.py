"""The campaign as a user with a cluster runs it: replcheck from its wheel, in a fresh virtual
environment outside the checkout; executors in their own JVMs (`local-cluster`) whose Python
has replcheck's dependencies but not replcheck, so that they run only what the driver ships;
a standalone cluster on 127.0.0.1 whose Workers cannot see the checkout at all
(spark_standalone.py); --out as file:// and s3:// (a moto server on 127.0.0.1); an executor,
and a Worker, killed mid-run; the cluster's failures as one line and exit 3. Every table must
equal the local[2] run's.

The wheel's venvs reuse this one's site-packages through a .pth file (replcheck's dependencies without
a download); this venv's replcheck is an editable install whose finder such a path does not run.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import pytest
from spark_standalone import bare_venv, free_port

pytestmark = [pytest.mark.spark, pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")]
CHECKOUT = Path(__file__).resolve().parents[2]
ARGS = ("--histories", "12", "--chunk", "3", "--seed", "0", "--systems", "model:wl7318,mutant:start-timestamp")
CLUSTER = "local-cluster[2,1,1024]"  # a master and two workers in the driver's JVM, each executor a JVM of its own
S3_KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


def _venv(path: Path) -> Path:
    python, site = bare_venv(path)
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    """The wheel, a driver venv with it installed, a node venv without replcheck, a directory to work in."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"  # a copy: a build in the checkout leaves build/ and *.egg-info there
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "replcheck", "model", "properties", "spec"):
        copy = shutil.copytree if (CHECKOUT / name).is_dir() else shutil.copy
        copy(CHECKOUT / name, source / name, **({"ignore": shutil.ignore_patterns("__pycache__")} if copy is shutil.copytree else {}))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(root / "dist"), str(source)],
                   check=True, capture_output=True)
    wheel = next((root / "dist").glob("replcheck-*.whl"))
    driver = _venv(root / "driver")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(driver), "install", "-q", "--no-deps", str(wheel)],
                   check=True, capture_output=True)
    node = _venv(root / "node")
    work = root / "work"
    work.mkdir()
    return {"wheel": wheel, "replcheck": driver.parent / "replcheck", "node": node, "work": work}


def campaign(kit, *argv: str, env: dict | None = None, wait: bool = True):
    """`replcheck campaign` of the wheel's venv, from a directory outside the checkout."""
    args = [str(kit["replcheck"]), "campaign", *ARGS, *argv]
    proc = subprocess.Popen(args, cwd=kit["work"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, **(env or {})})
    if not wait:
        return proc
    out, err = proc.communicate()
    return proc.returncode, out, err


def rows(table: str | Path, filesystem=None) -> list[str]:
    """The table's rows, each as JSON, sorted: a table's equality whatever its files' order."""
    import pyarrow.parquet as pq

    return sorted(json.dumps(r, sort_keys=True, default=str) for r in pq.read_table(str(table), filesystem=filesystem).to_pylist())


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


@pytest.fixture(scope="module")
def reference(kit):
    """The local[2] campaign of the wheel's replcheck: what every other run must equal."""
    code, out, err = campaign(kit, "--master", "local[2]", "--out", "local2")
    assert code == 1, err  # 1: the mutant's bug is found
    return rows(kit["work"] / "local2" / "table")


def _executors(session: int) -> list[int]:
    """The executor JVMs a campaign's process group started (local-cluster's workers fork them)."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and os.getsid(int(proc.name)) == session and \
                    b"CoarseGrainedExecutorBackend" in (proc / "cmdline").read_bytes():
                pids.append(int(proc.name))
        except (OSError, ProcessLookupError):  # gone meanwhile
            continue
    return pids


def _wait_for_a_chunk(done, proc) -> None:
    while not done() and proc.poll() is None:  # the campaign ends by itself: no clock needed
        time.sleep(0.05)


def _forget_app(summary: dict) -> None:
    """local-cluster's executors work under SPARK_HOME/work/APP (the Worker has no other setting)."""
    shutil.rmtree(spark_home() / "work" / summary["campaign"]["spark"]["application"], ignore_errors=True)


def test_the_wheel_holds_every_file_of_spec(kit):
    names = set(zipfile.ZipFile(kit["wheel"]).namelist())
    wanted = {f"replcheck/spec/{p.relative_to(CHECKOUT / 'spec')}" for p in (CHECKOUT / "spec").rglob("*")
              if p.is_file() and "__pycache__" not in p.parts}
    assert wanted - names == set()


def test_the_wheel_runs_verify_and_a_campaign_outside_the_checkout(kit, reference):
    histories = kit["work"] / "histories"
    histories.mkdir()
    shutil.copy(CHECKOUT / "spec" / "histories" / "d1-normal-setup.jsonl", histories)
    verify = subprocess.run([str(kit["replcheck"]), "verify", "--systems", "model:wl344", "--no-tlc", "--examples", "1",
                             "--histories", str(histories), "--out", "verify"], cwd=kit["work"], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stderr
    assert "0 findings" in verify.stderr and (kit["work"] / "verify" / "results.json").is_file()
    summary = json.loads((kit["work"] / "local2" / "summary.json").read_text())
    assert len(reference) == summary["campaign"]["rows"] and summary["findings"]


def test_executors_that_cannot_see_the_checkout_run_the_shipped_code_to_the_same_table(kit, reference):
    """The node venv has no replcheck: the executors import the zip the driver ships. --out as a
    file:// URI; the UI on, at the port --conf sets."""
    port = free_port()
    out = kit["work"] / "cluster"
    code, stdout, err = campaign(kit, "--master", CLUSTER, "--out", out.as_uri(), "--ui", "--conf", f"spark.ui.port={port}",
                                 "--conf", f"spark.pyspark.python={kit['node']}")
    assert code == 1, err
    assert rows(out / "table") == reference
    summary = json.loads((out / "summary.json").read_text())
    _forget_app(summary)
    assert summary["campaign"]["spark"]["ui"].endswith(f":{port}") and f"Spark UI: {summary['campaign']['spark']['ui']}" in err


def test_a_killed_executor_changes_nothing(kit, reference):
    """SIGKILL an executor's JVM once a chunk is written: its running task is redone elsewhere."""
    out = kit["work"] / "killed-executor"
    proc = campaign(kit, "--master", CLUSTER, "--out", str(out), "--conf", f"spark.pyspark.python={kit['node']}", wait=False)
    _wait_for_a_chunk(lambda: any(out.glob("table/chunk=*/*.parquet")), proc)
    executors = _executors(proc.pid)
    written = len(list(out.glob("table/chunk=*/*.parquet")))
    assert executors and proc.poll() is None and written < 4, f"not killed mid-run: {written} of 4 chunks"
    os.kill(executors[0], signal.SIGKILL)
    _, err = proc.communicate()
    assert proc.returncode == 1, err
    assert rows(out / "table") == reference
    _forget_app(json.loads((out / "summary.json").read_text()))


@pytest.fixture(scope="module")
def s3(kit):
    """A moto S3 server on 127.0.0.1 with a bucket: the URI of a campaign directory in it, and its filesystem."""
    pytest.importorskip("moto.server")
    from moto.server import ThreadedMotoServer
    from pyarrow import fs

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    try:
        filesystem = fs.S3FileSystem(access_key="testing", secret_key="testing", endpoint_override=f"127.0.0.1:{port}",
                                     scheme="http", allow_bucket_creation=True)
        filesystem.create_dir("campaigns")
        yield f"s3://campaigns/c?endpoint_override=127.0.0.1:{port}&scheme=http", filesystem
    finally:
        server.stop()


def test_a_campaign_killed_on_s3_resumes_to_the_same_table(kit, reference, s3):
    """SIGKILL the whole campaign (driver and its workers) once a chunk is in the bucket, re-run it."""
    uri, filesystem = s3
    from pyarrow.fs import FileSelector

    def chunks() -> int:
        found = filesystem.get_file_info(FileSelector("campaigns/c/table", recursive=True, allow_not_found=True))
        return sum(f.path.endswith(".parquet") for f in found)

    proc = campaign(kit, "--master", "local[1]", "--out", uri, env=S3_KEYS, wait=False)
    _wait_for_a_chunk(chunks, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = chunks()
    assert 0 < done < 4, f"not killed mid-run: {done} of 4 chunks"
    code, _, err = campaign(kit, "--master", "local[2]", "--out", uri, env=S3_KEYS)
    assert code == 1 and f"resuming: {done} of 4 chunks already in" in err, err
    assert rows("campaigns/c/table", filesystem) == reference
    summary = json.loads(filesystem.open_input_stream("campaigns/c/summary.json").read())
    assert summary["campaign"]["table"] == uri + "/table"


def test_executors_without_replcheck_are_one_line_and_exit_3(kit):
    """--ship installed on nodes where it is not installed: the cause, not a Java traceback."""
    code, _, err = campaign(kit, "--master", "local[1]", "--ship", "installed", "--out", "not-installed",
                            "--conf", "spark.task.maxFailures=1", env={"PYSPARK_PYTHON": str(kit["node"])})
    assert code == 3, err
    assert err.splitlines()[-1].startswith("replcheck: error: campaign: an executor's Python cannot import")
    assert "No module named 'replcheck'" in err.splitlines()[-1] and "Traceback" not in err


def test_an_unreachable_master_is_one_line_and_exit_3(kit):
    port = free_port()  # nothing listens there
    code, _, err = campaign(kit, "--master", f"spark://127.0.0.1:{port}", "--out", "unreachable")
    assert code == 3
    assert err.splitlines()[-1].startswith(f"replcheck: error: campaign: --master spark://127.0.0.1:{port}: unreachable")
    assert "Traceback" not in err


def test_a_cluster_without_the_resources_asked_for_is_one_line_and_exit_3(kit):
    """Executors of 2 cores on a worker of 1: none can start, and the job would wait for ever."""
    code, _, err = campaign(kit, "--master", "local-cluster[1,1,1024]", "--out", "no-resources", "--conf",
                            "spark.executor.cores=2", "--conf", "spark.replcheck.executorWait=5")
    assert code == 3, err
    assert err.splitlines()[-1].startswith("replcheck: error: campaign: no executor in 5 s: the cluster has not the free cores")
    assert "Traceback" not in err


@pytest.fixture(scope="module")
def standalone(kit, tmp_path_factory):
    """A standalone cluster on 127.0.0.1 (spark_standalone.py): a Master, two Workers each in a mount
    namespace where the checkout, the wheel's venvs and the driver's scratch directory (its zip
    of replcheck) are empty; the executors' Python a venv with the dependencies only. --out's
    directory (the kit's work) stays visible, as a shared mount would be."""
    from replcheck.spark import _scratch
    from spark_standalone import namespaces_refused, node_venv, standalone as cluster

    if reason := namespaces_refused(CHECKOUT):
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("standalone")
    python, site = node_venv(root / "node")
    hidden = [CHECKOUT, _scratch(), *(p for p in kit["work"].parent.iterdir() if p != kit["work"])]
    (root / "cluster").mkdir()
    try:  # the Workers' Spark is the node venv's pyspark: the checkout's is hidden from them
        with cluster(site / "pyspark", root / "cluster", hidden) as running:
            running.python, running.hidden = python, hidden
            yield running
    finally:  # a copied node venv is most of a GB (hard links, where it could link, cost nothing)
        shutil.rmtree(root, ignore_errors=True)


def test_a_standalone_cluster_whose_workers_cannot_see_the_checkout_gives_the_same_table(kit, reference, standalone):
    """docs/cluster.md's standalone command, on Workers that see neither the checkout nor the
    driver's venv nor its zip: the executors' Python gets replcheck only from what the driver ships."""
    from spark_standalone import in_namespace_of

    worker = standalone.workers[0]
    for path in standalone.hidden:  # what the executors see: nothing of the driver's files
        assert in_namespace_of(worker, "ls", "-A", str(path)).stdout == "", path
    imports = in_namespace_of(worker, str(standalone.python), "-c", "import pyarrow, pyspark, z3, hypothesis; import replcheck")
    assert "No module named 'replcheck'" in imports.stderr, imports.stderr
    out = kit["work"] / "standalone"
    code, _, err = campaign(kit, "--master", standalone.master, "--out", out.as_uri(),
                            "--conf", f"spark.pyspark.python={standalone.python}", "--conf", "spark.driver.host=127.0.0.1")
    assert code == 1, err + standalone.log()
    assert rows(out / "table") == reference
    summary = json.loads((out / "summary.json").read_text())
    assert summary["campaign"]["spark"]["master"] == standalone.master
    app = summary["campaign"]["spark"]["application"]
    ran = [w for w in standalone.dirs if (w / app).is_dir()]  # each executor's directory
    assert ran, standalone.log()


def _running_task(workers: list[Path], before: set[Path]):
    """The index of a Worker whose executor of the app started since `before` runs a task now
    (its log has more tasks begun than ended), or None."""
    for i, worker in enumerate(workers):
        for log in (p for app in worker.glob("app-*") if app not in before for p in app.glob("*/stderr")):
            text = log.read_text(errors="replace")
            if text.count("Running task") > text.count("Finished task"):
                return i
    return None


def test_a_worker_killed_mid_run_on_a_standalone_cluster_changes_nothing(kit, reference, standalone):
    """SIGKILL a Worker and its executor, one running a task, once a chunk is written: the other
    Worker's executor redoes what was lost."""
    out = kit["work"] / "standalone-killed"
    before = {app for w in standalone.dirs for app in w.glob("app-*")}
    proc = campaign(kit, "--master", standalone.master, "--out", str(out), "--conf", f"spark.pyspark.python={standalone.python}",
                    "--conf", "spark.driver.host=127.0.0.1", wait=False)
    _wait_for_a_chunk(lambda: any(out.glob("table/chunk=*/*.parquet")), proc)
    busy: list[int | None] = [None]

    def a_task_runs() -> bool:
        busy[0] = _running_task(standalone.dirs, before)
        return busy[0] is not None
    _wait_for_a_chunk(a_task_runs, proc)
    busy = busy[0]
    written = len(list(out.glob("table/chunk=*/*.parquet")))
    assert busy is not None and proc.poll() is None and written < 4, f"not killed mid-run: {written} of 4 chunks"
    os.killpg(standalone.workers[busy].pid, signal.SIGKILL)
    _, err = proc.communicate()
    assert proc.returncode == 1, err + standalone.log()
    assert rows(out / "table") == reference
    assert all(line.startswith("[campaign]") for line in err.splitlines()), err  # the lost Worker is no noise
