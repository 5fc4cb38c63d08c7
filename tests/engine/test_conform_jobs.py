"""`conform --jobs N`: scenarios run at once give a serial run's report; a failure in one tears
the others down; a suite scenario runs at its own times. No server: the reference model stands in
for MariaDB's harness (test_conform_attempts.Loaded). Which run ends first is forced by events,
never by timing."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

import pytest

from replcheck import conform, io
from replcheck.harness import groups
from replcheck.harness.errors import HarnessError
from replcheck.harness.timescale import scale_for
from replcheck.spec import ROOT as SPEC
from replcheck.spec.contract import Trace

from conftest import HANG_GUARD_S, REPO
from test_conform_attempts import PHANTOM, Loaded
from test_conform import _processes_mentioning
from test_harness_mariadb import require_server

SUITES = SPEC / "histories" / "suites"
FIRST, SECOND = "mdb-binlog_index-purge-to", "mdb-rpl_semi_sync_wait_no_slave"
FILES = [SUITES / f"{FIRST}.jsonl", SUITES / f"{SECOND}.jsonl", SPEC / "histories" / f"{PHANTOM}.jsonl"]


@dataclass
class Ordered(Loaded):
    """The first scenario's run ends only after the second's: the runs end out of order."""
    second_done: threading.Event | None = None

    def run(self, history: dict) -> Trace:
        name = history["header"]["name"]
        if name == FIRST:
            assert self.second_done.wait(60), "the second scenario never ran beside the first"
        trace = super().run(history)
        if name == SECOND:
            self.second_done.set()
        return trace


def _conform(out, jobs: int, server) -> dict:
    return conform.conform(out, history_files=FILES, server=server, progress=lambda _: None, jobs=jobs)


def _files(out) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file() and "report" not in p.name}


def test_scenarios_run_at_once_give_the_serial_runs_report(tmp_path):
    serial = _conform(tmp_path / "serial", 1, Loaded())
    at_once = _conform(tmp_path / "jobs", 2, Ordered(second_done=threading.Event()))
    assert at_once == serial
    assert [a["history"] for a in at_once["attempts"]] == [FIRST, SECOND, PHANTOM]
    assert _files(tmp_path / "jobs") == _files(tmp_path / "serial")


@dataclass
class Failing(Loaded):
    """The first scenario's run sleeps as a runner does; the second's server fails."""
    asleep: threading.Event | None = None
    ended: list | None = None

    def run(self, history: dict) -> Trace:
        if history["header"]["name"] == FIRST:
            self.asleep.set()
            try:
                groups.wait(600)
            except groups.Abandoned as e:
                self.ended.append(e)
                raise
        if history["header"]["name"] == SECOND:
            assert self.asleep.wait(60)
            raise HarnessError("mariadbd would not start")
        return super().run(history)


def test_a_failed_run_abandons_the_others_and_writes_nothing(tmp_path):
    ended: list = []
    with pytest.raises(HarnessError, match="would not start"):
        _conform(tmp_path / "out", 2, Failing(asleep=threading.Event(), ended=ended))
    assert len(ended) == 1  # the sleeping run was woken and torn down, not waited out
    assert not (tmp_path / "out").exists()
    groups.wait(0)  # the next run is not abandoned


def test_a_suite_scenario_runs_at_its_own_times_unless_a_scale_is_given(tmp_path):
    suite, generated = (io.load_history(p) for p in (FILES[0], FILES[2]))
    assert scale_for(suite) == 1 and scale_for(generated) == 0.15  # (the phantom scenario names its own, 0.2)
    assert conform.attempt_scales(1, suite, 3) == [1]  # a retry would not stretch a .result's times
    assert conform.attempt_scales(0.1, suite, 3) == [0.1, 0.2, 0.4]
    assert conform.attempt_scales(0.6, suite, 3) == [0.6, 1]
    doc = conform.conform(tmp_path / "own", history_files=FILES[:2] + FILES[2:], server=Loaded(), progress=lambda _: None)
    assert [a["time_scale"] for a in doc["attempts"]] == [1, 1, 0.2]
    assert all(r["reproduce"].endswith("--scale 1") for r in doc["rows"] if r["history"] != PHANTOM)
    given = conform.conform(tmp_path / "given", history_files=FILES[:1], server=Loaded(), progress=lambda _: None, scale=0.1)
    assert [a["time_scale"] for a in given["attempts"]] == [0.1]


# With a real server


@pytest.fixture(scope="module")
def server():
    return require_server()


def _start(out, short_tmp, *files):
    return subprocess.Popen([sys.executable, "-m", "replcheck.cli", "conform", "--server", "mariadb", "--jobs", "2",
                             *(a for f in files for a in ("--history", str(f))), "--out", str(out)],
                            cwd=REPO, env={**os.environ, "REPLCHECK_TMPDIR": short_tmp},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_two_groups_on_real_servers_then_a_sigterm_leaves_none_behind(server, tmp_path, short_tmp):
    proc = _start(tmp_path / "out", short_tmp, *FILES[:2])
    _, err = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode in (0, 1), err[-2000:]
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [(a["history"], a["time_scale"]) for a in doc["attempts"]] == [(FIRST, 1), (SECOND, 1)]
    assert os.listdir(short_tmp) == []
    # Both groups' servers up, then SIGTERM: every one of them stopped, nothing written.
    longer = [SUITES / "mdb-rpl_delayed_slave-natural-lag.jsonl", SUITES / "mdb-rpl_semi_sync-whole.jsonl"]
    proc = _start(tmp_path / "killed", short_tmp, *longer)
    try:
        # no clock: the loop ends when both groups' server directories exist, or (failing) when conform ends
        while len(os.listdir(short_tmp)) < 2:
            assert proc.poll() is None, "conform ended before both groups' servers started"
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=HANG_GUARD_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143
    assert _processes_mentioning(f"{short_tmp}/") == [] and os.listdir(short_tmp) == []
    assert not (tmp_path / "killed").exists()
