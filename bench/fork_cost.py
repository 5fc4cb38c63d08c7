"""The cost of judging a History after every step: each prefix simulated from scratch (O(steps²))
against one run extended op by op and forked before each finish (model/sim/kernel.py). CPU time
of the simulation alone, no judging; the figure a state machine's search would gain.
Usage: .venv/bin/python bench/fork_cost.py [--histories 200] [--seed 3] [--system model:mariadb-10.11]
"""
from __future__ import annotations

import argparse
import time

import record
from replcheck import systems
from replcheck.generate import generate
from replcheck.model.sim import Simulator, simulate


def from_scratch(system, history: dict) -> None:
    ops = history["ops"]
    for k in range(1, len(ops) + 1):
        simulate({**history, "ops": ops[:k]}, system.config, system.name)


def extended(system, history: dict) -> None:
    run = Simulator({**history, "ops": []}, system.config, system.name)
    for op in history["ops"]:
        run.extend([op])
        run.advance()
        run.fork().finish()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--histories", type=int, default=200)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--system", default="model:mariadb-10.11")
    a = p.parse_args()
    system = systems.get(a.system)
    histories = [generate(a.seed, i) for i in range(a.histories)]
    cpu = {}
    for name, fn in (("from_scratch_cpu_s", from_scratch), ("extended_cpu_s", extended)):
        start = time.process_time()
        for h in histories:
            fn(system, h)
        cpu[name] = round(time.process_time() - start, 3)
    steps = sum(len(h["ops"]) for h in histories)
    out = record.write("fork_cost", {"system": a.system, "seed": a.seed, "histories": a.histories, "ops": steps, **cpu,
                                     "speedup": round(cpu["from_scratch_cpu_s"] / cpu["extended_cpu_s"], 2)})
    print(f"fork cost: {steps} ops; prefixes from scratch {cpu['from_scratch_cpu_s']} s, extended and forked "
          f"{cpu['extended_cpu_s']} s ({out})")


if __name__ == "__main__":
    main()
