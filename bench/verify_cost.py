"""What `replcheck verify` costs as a user runs it: wall time, CPU time (its own and its worker
processes' and TLC's), the size of results.json and of the HTML report, its findings and
searches, and whether ci/models.toml's gate holds on it, with the load average before and after
(a figure on a loaded machine is not a quiet one's).
Usage: .venv/bin/python bench/verify_cost.py [--thorough] [-- more verify options]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import record

MODELS_GATE = Path(__file__).resolve().parent.parent / "ci" / "models.toml"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--thorough", action="store_true")
    p.add_argument("rest", nargs="*", help="more verify options, after --")
    a = p.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r"
        argv = [sys.executable, "-m", "replcheck", "verify", "--out", str(out)] + (["--thorough"] if a.thorough else []) + a.rest
        start = time.monotonic()
        run = subprocess.run(argv, capture_output=True, text=True)
        wall = time.monotonic() - start
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        results = json.loads((out / "results.json").read_text())
        gate = subprocess.run([sys.executable, "-m", "replcheck", "gate", str(MODELS_GATE), str(out / "results.json")],
                              capture_output=True, text=True)
        searches = results.get("searches", [])
        figures = {"argv": argv[3:], "exit": run.returncode, "wall_s": round(wall, 1),
                   "cpu_s": round(children.ru_utime + children.ru_stime, 1),
                   "results_mb": round((out / "results.json").stat().st_size / 1e6, 2),
                   "report_html_mb": round((out / "report.html").stat().st_size / 1e6, 2),
                   "rows": len(results["rows"]), "findings": [f"{f['kind']}: {f.get('system', '')} {f.get('requirement', '')}"
                                                              for f in results["findings"]],
                   "mutants_found": sum(1 for s in searches if s["found"]),
                   "shrunk_steps_max": max((s["shrunk_steps"] for s in searches if s["found"]), default=None),
                   "mutants_not_found": sorted({s["system"] for s in searches} - {s["system"] for s in searches if s["found"]}),
                   # per mutant, the machine that found it and its steps: a cheaper verify finds the same
                   "found_by": {s["system"]: f"{s['machine']} {s['shrunk_steps']}" for s in searches if s["found"]},
                   "models_gate_exit": gate.returncode,
                   "load_before": load_before, "load_after": os.getloadavg()}
    path = record.write("verify_cost", figures)
    print(json.dumps(figures, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
