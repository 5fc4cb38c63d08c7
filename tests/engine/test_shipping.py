"""What a campaign ships to its executors: replcheck's packages as one zip, which runs from
sys.path alone (its spec data read as package data, not by path); and the one-line causes of a
cluster's failures. No Spark started."""
from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from replcheck import outfs, spark

CHECKOUT = Path(__file__).resolve().parents[2]


def test_the_zip_holds_the_packages_pyproject_declares():
    declared = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert sorted(spark.PACKAGES) == sorted(declared)


def test_every_package_of_the_checkout_is_declared():
    """A package left out of pyproject.toml is left out of the wheel and the zip: found by walking
    the folders its package-dir maps, every one with an __init__.py."""
    setup = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = set()
    for name, folder in setup["package-dir"].items():
        for init in (CHECKOUT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(CHECKOUT / folder)
            found.add(".".join([name, *rel.parts]))
    assert found <= set(setup["packages"]), sorted(found - set(setup["packages"]))


def test_replcheck_runs_a_chunk_from_the_zip_alone(tmp_path):
    """First on sys.path, as an executor's worker puts it: the chunk's rows and every spec file."""
    zipped = spark.package_zip(tmp_path)
    assert spark.package_zip(tmp_path) == zipped  # named by its content: built again, the same
    names = zipfile.ZipFile(zipped).namelist()
    assert "replcheck/spec/crosscheck.toml" in names and "replcheck/model/sim/kernel.py" in names
    script = f"""
import sys
sys.path.insert(0, {str(zipped)!r})
import replcheck, replcheck.crosscheck, replcheck.suites, replcheck.scenarios, replcheck.campaign as c
assert replcheck.__file__.startswith({str(zipped)!r}), replcheck.__file__
assert replcheck.crosscheck.rules() and replcheck.suites.flavours() and replcheck.scenarios.load_scenarios()
rows = list(c.run_chunk(c.Plan(2, 7, ("model:wl7318", "mutant:start-timestamp"), 2), (0, 0, 2)))
print(len(rows))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 4


@pytest.mark.parametrize("text, url", [
    ("s3a://bucket/c?region=us-east-1", "s3://bucket/c?region=us-east-1"),  # Hadoop's spelling: the same bucket and key
    ("relative/c", None),
])
def test_out_urls_are_what_every_process_opens(text, url, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = outfs.open_out(text)
    assert out.uri == text and out.url == (url or str(tmp_path / text))  # a task runs elsewhere: no relative path


def test_a_python_failure_in_a_task_is_replchecks_but_a_lost_executor_the_clusters():
    from py4j.protocol import Py4JError

    bug = Py4JError("Job aborted due to stage failure: ... PythonException: Traceback (most recent call last):\n  ...\nKeyError: 'x'")
    assert spark.cluster_cause(bug) is None
    lost = Py4JError("An error occurred\n: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 1.0 "
                     "failed 4 times, most recent failure: Lost task 0.3 (executor 2): ExecutorLostFailure (executor 2 exited)\n\tat x")
    assert spark.cluster_cause(lost).startswith("Task 0 in stage 1.0 failed 4 times") and "\n" not in spark.cluster_cause(lost)
    assert spark.cluster_cause(KeyError("x")) is None


def test_a_tasks_traceback_is_cut_to_its_last_frames_without_the_jvms_stack():
    from py4j.protocol import Py4JError

    frames = [f'  File "replcheck/campaign.py", line {n}, in f{n}\n    g({n})' for n in range(5)]
    bug = Py4JError("Job aborted due to stage failure: ... PythonException: Traceback (most recent call last):\n"
                    + "\n".join(frames) + "\nKeyError: 'x'\n\tat org.apache.spark.api.python.X.y(X.scala:1)\n\t... 3 more")
    cause = spark.task_failure(bug)
    assert cause.splitlines()[-1] == "KeyError: 'x'" and 'in f4' in cause and 'in f0' not in cause
    assert len(cause.splitlines()) == spark.TASK_TRACEBACK_LINES
    assert spark.task_failure(Py4JError("Job aborted due to stage failure: Lost task 0.3")) is None


def test_a_java_failure_is_named_by_its_exception_not_by_py4js_call():
    from py4j.protocol import Py4JError

    failed = Py4JError("An error occurred while calling None.org.apache.spark.api.java.JavaSparkContext.\n"
                       ": org.apache.spark.SparkException: Asked to launch cluster with 1024 MiB/worker\n\tat x")
    assert spark.cluster_cause(failed) == "org.apache.spark.SparkException: Asked to launch cluster with 1024 MiB/worker"


def _tb(error: str, head: str = "Traceback (most recent call last):") -> list[str]:
    return [head, '  File "daemon.py", line 93, in worker', "    outfile.flush()", error]


def test_a_workers_traceback_of_a_socket_the_jvm_closed_is_dropped_any_other_kept():
    """A job aborted on a local master: pyspark's daemon prints the failed write to its closed
    socket on the JVM's stderr; the user's one line must stay the only one. A real error stays."""
    flush = ["PySpark daemon failed to flush the output to the worker process:",
             *_tb("BrokenPipeError: [Errno 32] Broken pipe"), ""]
    chain = [*_tb("ConnectionResetError: [Errno 104] reset"), "",
             "During handling of the above exception, another exception occurred:", "", *_tb("OSError: closed")]
    real = _tb("ValueError: a bug")
    lines = ["[campaign] one", *flush, *chain, "WARNING: Using incubator modules: x", *real, "",
             *_tb("BrokenPipeError: again"), "", *_tb("KeyError: 'after a dropped one, not chained'"), "[campaign] two"]
    out = [b.decode().rstrip("\n") for b in spark.quiet(f"{line}\n".encode() for line in lines)]
    assert out == ["[campaign] one", *real, "", *_tb("KeyError: 'after a dropped one, not chained'"), "[campaign] two"]
    cut = _tb("x")[:2]  # a traceback the process did not finish printing: shown, as it is not known to be noise
    assert [b.decode() for b in spark.quiet(line.encode() for line in cut)] == cut
