"""Wall time of `replcheck conform --server mariadb --quick` (what CI runs), per scenario (all its
attempts) and in all, the scenarios that ran more than once, and the machine's load average: on a
shared machine the figures move with it.
Usage: .venv/bin/python bench/conform_quick.py [--tmpdir DIR]   (a tmpfs such as /dev/shm is faster)
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import record
from replcheck import conform


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tmpdir", help="where the servers' directories go")
    args = ap.parse_args()
    marks: list[tuple[float, str]] = []
    start = time.perf_counter()

    def progress(msg: str) -> None:
        if msg.startswith("scenario "):
            marks.append((time.perf_counter(), msg.split(": ", 1)[1].split(" (")[0]))

    with tempfile.TemporaryDirectory() as out:
        doc = conform.conform(Path(out) / "conform", quick=True, tmpdir=args.tmpdir, progress=progress)
    end = time.perf_counter()
    per: dict[str, float] = {}  # a scenario's runs in all: one with an inconclusive verdict runs again
    for (t, name), (nxt, _) in zip(marks, marks[1:] + [(end, "")]):
        per[name] = round(per.get(name, 0) + nxt - t, 1)
    runs = {a["history"]: a["attempt"] for a in doc["attempts"]}
    figures = {"server_version": doc["server_version"], "seconds": round(end - start, 1),
               "scenarios": [{"scenario": name, "seconds": t, "attempts": runs.get(name, 1)} for name, t in per.items()]}
    print(json.dumps({**figures, "load": os.getloadavg()[0]}, indent=1))
    print(f"wrote {record.write('conform_quick', figures)}")


if __name__ == "__main__":
    main()
