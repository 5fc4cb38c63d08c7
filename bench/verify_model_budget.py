"""The model searches' budget: which requirements each machine exercises on each seed model
(replcheck.search: a requirement is exercised where at least one Trace judged it) at verify's default
budget, and at fewer examples or fewer steps per example, with the CPU seconds of each. A smaller
budget is safe to take where it exercises every requirement the default does, on every model and
machine; the rows it loses are printed. Timings depend on the load: it is printed and kept with the
rows in bench/results/verify_model_budget-<date>.json.
Usage: .venv/bin/python bench/verify_model_budget.py [--seed 0] [--budgets 15x20,10x20,15x12]
"""
from __future__ import annotations

import argparse
import os
import time

import record
from replcheck import search, systems
from replcheck.features import load_features


def exercised(system: str, machine, examples: int, steps: int, seed: int) -> tuple[set[str], float]:
    """The requirements one machine's search on the model judged on some Trace, and its CPU seconds."""
    start = time.process_time()
    cls, _ = search.run_machine(machine, systems.get(system), examples, seed, steps)
    return {r for r, n in cls.exercised.items() if n}, time.process_time() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budgets", default="15x20,10x20,8x20,15x12,10x12",
                   help="examples x steps per example; the first is the reference")
    a = p.parse_args()
    load_features()
    budgets = [tuple(int(x) for x in b.split("x")) for b in a.budgets.split(",")]
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    tasks = search.tasks(list(systems.systems()), search.DEFAULT, a.seed)
    machines = {m.name: m for m in search.model_machines()}
    rows, cpu, lost = [], {b: 0.0 for b in budgets}, {b: [] for b in budgets}
    for task in (t for t in tasks if t.machine is not None):
        got = {}
        for b in budgets:
            got[b], seconds = exercised(task.system, machines[task.machine], *b, a.seed)
            cpu[b] += seconds
            rows.append({"system": task.system, "machine": task.machine, "examples": b[0], "steps": b[1],
                         "cpu_s": round(seconds, 2), "exercised": len(got[b])})
        for b in budgets[1:]:
            if missing := got[budgets[0]] - got[b]:
                lost[b].append(f"{task.system} {task.machine}: {','.join(sorted(missing))}")
        print(task.system, task.machine, "  ".join(f"{b[0]}x{b[1]}:{len(got[b])}" for b in budgets), flush=True)
    for b in budgets:
        print(f"{b[0]} examples x {b[1]} steps: {cpu[b]:.1f} CPU-s; requirements lost against "
              f"{budgets[0][0]}x{budgets[0][1]}: {len(lost[b])} rows", *lost[b], sep="\n  ")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    out = record.write("verify_model_budget", {"seed": a.seed, "budgets": a.budgets, "rows": rows,
                                               "lost": {f"{b[0]}x{b[1]}": lost[b] for b in budgets}})
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
