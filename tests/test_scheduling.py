"""ci/test's own scheduling (tests/conftest.py): with three workers, the last takes the real
servers' tests first, and the other two, niced, the rest."""
from __future__ import annotations

import json
import os

import pytest

from conftest import CPU_WORKERS_NICE, REPO

TESTS = """
import json, os, pytest

def ran(name):
    with open(os.path.join({out!r}, name), "w") as f:
        json.dump([os.environ["PYTEST_XDIST_WORKER"], os.getpriority(os.PRIO_PROCESS, 0)], f)

@pytest.mark.server
def test_waits_first(): ran("waits_first")

@pytest.mark.server
def test_waits_second(): ran("waits_second")
""" + "".join(f"\ndef test_computes_{i}(): ran('computes_{i}')\n" for i in range(4))


@pytest.mark.slow  # four processes importing replcheck: 11 CPU-s
def test_the_last_of_three_workers_takes_the_servers_tests_and_the_others_are_niced(pytester, monkeypatch):
    tmp = pytester.mkdir("tmp")
    monkeypatch.setenv("TMPDIR", str(tmp))  # where the controller's list of waiting units goes
    pytester.makeconftest((REPO / "tests" / "conftest.py").read_text())
    out = pytester.mkdir("ran")
    pytester.makepyfile(test_work=TESTS.format(out=str(out)))
    result = pytester.runpytest_subprocess("-n", "3", "--dist", "loadgroup", "--no-loadscope-reorder", "-p", "no:randomly")
    result.assert_outcomes(passed=6)
    ran = {name: json.loads((out / name).read_text()) for name in os.listdir(out)}
    base = os.getpriority(os.PRIO_PROCESS, 0)
    # the initial distribution: each worker its first unit of its kind, then one more (xdist's prefetch)
    assert {n: w for n, (w, _) in ran.items() if n.startswith("waits")} == {"waits_first": "gw2", "waits_second": "gw2"}
    assert {w for n, (w, _) in ran.items() if n.startswith("computes")} == {"gw0", "gw1"}
    assert {w: nice for w, nice in ran.values()} == {"gw0": min(base + CPU_WORKERS_NICE, 19),
                                                    "gw1": min(base + CPU_WORKERS_NICE, 19), "gw2": base}
    assert not [f for f in os.listdir(tmp) if f.startswith("replcheck-waiting-")]  # removed at the end
