"""Whether ci/test's hand-written xdist scheduling pays: the same tests run under each scheduler
(`-n 2`), one after the other, with the CPU seconds of pytest and its workers (their rusage once
reaped) and the wall seconds of each run, the load average before and after beside them.
Schedulers: `loadgroup` (ci/test: tests/conftest.py's units and order, --no-loadscope-reorder),
`load`, `worksteal`, `loadscope` (xdist's own). A run that fails is reported as failed, not timed.
Usage: .venv/bin/python bench/suite_schedule.py [--schedulers loadgroup,load] [pytest arguments...]
       e.g. bench/suite_schedule.py -- -m "not (server or spark or browser or slow)" tests/tla
"""
from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import record

REPO = Path(__file__).resolve().parent.parent
FLAGS = {"loadgroup": ["--dist", "loadgroup", "--no-loadscope-reorder"], "load": ["--dist", "load"],
         "worksteal": ["--dist", "worksteal"], "loadscope": ["--dist", "loadscope"]}


def run(scheduler: str, args: list[str]) -> dict:
    before, load, start = resource.getrusage(resource.RUSAGE_CHILDREN), os.getloadavg(), time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", *FLAGS[scheduler],
                           "--replcheck-profile", "replcheck-ci", *args], cwd=REPO, capture_output=True, text=True,
                          # SIGINT as from a terminal: a bench started as a background job has it ignored,
                          # which its children keep (the stopped-verify test's SIGINT then did nothing)
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    wall, after = time.monotonic() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    lines = done.stdout.strip().splitlines() or [""]
    return {"scheduler": scheduler, "rc": done.returncode, "cpu_s": round(cpu, 1), "wall_s": round(wall, 1),
            "outcome": lines[-1], "failed": [line for line in lines if line.startswith(("FAILED", "ERROR"))], "load_before": round(load[0], 2), "load_after": round(os.getloadavg()[0], 2)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--schedulers", default="loadgroup,load,worksteal")
    p.add_argument("pytest_args", nargs="*")
    a = p.parse_args()
    rows = []
    for scheduler in a.schedulers.split(","):
        rows.append(run(scheduler, a.pytest_args))
        print(rows[-1], flush=True)
    print(f"wrote {record.write('suite_schedule', {'pytest_args': ' '.join(a.pytest_args), 'runs': rows})}")


if __name__ == "__main__":
    main()
