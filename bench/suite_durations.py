"""Where the test suite's time goes: one tier run as ci/test runs it (`-n 3`, its scheduler, niced),
with pytest's `--durations=0`, each test's setup, call and teardown summed and grouped by file and
by what it costs (the expensive fixtures and marks it has: a real MariaDB, a Spark session, a
verify, a headless Chromium, TLC, a state machine search), beside the tier's wall and CPU seconds
(pytest and its workers, once reaped) and the load average before and after.
A run's saved output can be grouped again without running it (`--saved FILE`).
Usage: .venv/bin/python bench/suite_durations.py --tier slow [--workers N] [--nice N] [--keep OUT] [--saved OUT --wall-s S --cpu-s S]
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

import record

REPO = Path(__file__).resolve().parent.parent
TIERS = {"fast": "not (server or spark or browser or slow)", "slow": "server or spark or browser or slow"}
DURATION = re.compile(r"^([0-9.]+)s (setup|call|teardown)\s+(\S+)$")
# What a test costs, by the first of these it has: a fixture it uses, a mark (tests/conftest.py's tiers),
# where it is, or a word of its name
COSTS = (("fixture", "mutant_campaign", "Spark campaign"), ("fixture", "spark", "Spark session"),
         ("fixture", "results", "small verify (results)"), ("fixture", "browser_dir", "Chromium"),
         ("fixture", "server", "real MariaDB"), ("mark", "server", "real MariaDB"), ("mark", "spark", "Spark"),
         ("path", "tests/properties/machines/", "state machine search"), ("mark", "tlc", "TLC"),
         ("name", "verify", "verify run of its own"), ("name", "real_executable", "CLI processes"),
         ("mark", "slow", "slow, other"))


class _Costs:
    """A collection-only plugin: each test's cost class."""

    def __init__(self) -> None:
        self.by_test: dict[str, str] = {}

    def pytest_collection_finish(self, session) -> None:
        for item in session.items:
            self.by_test[item.nodeid] = next(
                (name for how, what, name in COSTS if (how == "fixture" and what in item.fixturenames)
                 or (how == "mark" and item.get_closest_marker(what)) or (how == "path" and item.nodeid.startswith(what))
                 or (how == "name" and what in item.name)),
                "other")


def costs(marks: str) -> dict[str, str]:
    plugin = _Costs()
    os.chdir(REPO)
    pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-m", marks], plugins=[plugin])
    return plugin.by_test


def run(marks: str, workers: int, nice: int) -> tuple[str, float, float]:
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    done = subprocess.run(["nice", "-n", str(nice), sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(workers),
                           "--dist", "loadgroup", "--no-loadscope-reorder", "--replcheck-profile", "replcheck-ci",
                           "--durations=0", "-m", marks], cwd=REPO, capture_output=True, text=True,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as bench/suite_schedule.py
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done.stdout, time.monotonic() - start, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def grouped(output: str, cost_of: dict[str, str]) -> dict:
    per_test: dict[str, float] = defaultdict(float)
    for line in output.splitlines():
        if m := DURATION.match(line.strip()):
            per_test[m.group(3)] += float(m.group(1))
    total = sum(per_test.values()) or 1.0

    def table(key) -> list[dict]:
        groups: dict[str, list[float]] = defaultdict(list)
        for test, s in per_test.items():
            groups[key(test)].append(s)
        return [{"group": g, "tests": len(v), "seconds": round(sum(v), 1), "share": round(sum(v) / total, 3),
                 "longest_s": round(max(v), 1)} for g, v in sorted(groups.items(), key=lambda kv: -sum(kv[1]))]
    by_file = table(lambda t: t.split("::")[0])
    return {"test_seconds": round(total, 1), "by_cost": table(lambda t: cost_of.get(t, "other")),
            "by_file": [r for r in by_file if r["seconds"] >= 5],
            "longest_tests": [{"test": t, "seconds": round(s, 1), "cost": cost_of.get(t, "other")}
                              for t, s in sorted(per_test.items(), key=lambda kv: -kv[1])[:30]]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tier", choices=TIERS, required=True)
    p.add_argument("--workers", type=int, default=3, help="pytest-xdist workers (default 3, as ci/test)")
    p.add_argument("--nice", type=int, default=10, help="the run's niceness (default 10; ci/test's own workers "
                   "but the waiting one add 10 to it, up to 19)")
    p.add_argument("--saved", type=Path, help="a run's saved stdout, grouped instead of running the tier")
    p.add_argument("--wall-s", type=float, help="the saved run's wall seconds")
    p.add_argument("--cpu-s", type=float, help="the saved run's CPU seconds, workers included")
    p.add_argument("--load", default="", help="the saved run's load average before and after, as measured")
    p.add_argument("--keep", type=Path, help="where to write the run's whole output (a failure's traceback; --saved reads it)")
    a = p.parse_args()
    load_before = os.getloadavg()
    if a.saved:
        output, wall, cpu, load = a.saved.read_text(), a.wall_s, a.cpu_s, a.load
    else:
        output, wall, cpu = run(TIERS[a.tier], a.workers, a.nice)
        if a.keep:
            a.keep.write_text(output)
        load = f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after"
    outcome = next((line for line in reversed(output.splitlines()) if " in " in line and ("passed" in line or "failed" in line)), "")
    # pytest's short summary (-r fE by default): which tests failed, and their first line, beside the figures
    failed = [line for line in output.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    figures = {"tier": a.tier, "marks": TIERS[a.tier], "workers": a.workers, "nice": a.nice, "outcome": outcome.strip("= "),
               "failed": failed, "wall_s": wall,
               "cpu_s": cpu and round(cpu, 1), "load_during": load, **grouped(output, costs(TIERS[a.tier]))}
    print({k: v for k, v in figures.items() if k not in ("by_file", "longest_tests")}, flush=True)
    print(f"wrote {record.write('suite_durations', figures)}")


if __name__ == "__main__":
    main()
