"""What judging only the steps whose run reached a mutant's seam saves (replcheck.properties.machines
.base.HistoryMachine.seam): each mutant's default search (as verify runs it, without the embedded
Histories' hint) with every step judged and with those steps alone, one after the other in one
process so that both meet the same load; CPU seconds of each and whether the searches ran the same
machines and failed on the same requirement in as many steps.
Usage: .venv/bin/python bench/seam_judging.py [--mutants a,b,...]
"""
from __future__ import annotations

import argparse
import json
import os
import time

import record
from replcheck import search, systems
from replcheck.features import load_features
from replcheck.properties.machines import base


def _searched(task: search.Task) -> tuple[list, float]:
    start = time.process_time()
    answers = search.run_task(task)
    return [(a["machine"], a["failure"], a["shrunk_steps"]) for a in answers], time.process_time() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mutants", help="comma-separated registry names (default: every mutant)")
    a = p.parse_args()
    load_features()
    names = ([f"mutant:{m}" for m in a.mutants.split(",")] if a.mutants
             else [n for n in systems.systems() if systems.get(n).kind == "mutant" and not systems.get(n).seed])
    seam, every = base._seam, (lambda system, model: frozenset())
    load_before, rows = os.getloadavg(), []
    for task in search.tasks(names, search.DEFAULT, 0):
        search.machines_for(systems.get(task.system))  # the probes, outside both figures
        base._seam = every
        judging, judging_s = _searched(task)
        base._seam = seam
        skipping, skipping_s = _searched(task)
        rows.append({"system": task.system, "every_step_cpu_s": round(judging_s, 2), "seam_steps_cpu_s": round(skipping_s, 2),
                     "same": judging == skipping, "found": skipping[-1][0] if skipping[-1][1] else None})
        print(json.dumps(rows[-1]), flush=True)
    every_s, seam_s = sum(r["every_step_cpu_s"] for r in rows), sum(r["seam_steps_cpu_s"] for r in rows)
    figures = {"mutants": len(rows), "every_step_cpu_s": round(every_s, 1), "seam_steps_cpu_s": round(seam_s, 1),
               "saved": round(1 - seam_s / every_s, 3) if every_s else None,
               "all_same": all(r["same"] for r in rows), "load_before": load_before, "load_after": os.getloadavg(),
               "searches": rows}
    print(json.dumps({k: v for k, v in figures.items() if k != "searches"}, indent=1))
    print(f"wrote {record.write('seam_judging', figures)}")


if __name__ == "__main__":
    main()
