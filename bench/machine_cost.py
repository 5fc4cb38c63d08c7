"""What a state machine's search costs, with the system's run followed step by step (a model's
simulator extended and forked: replcheck.spec.contract.Extensible) against run whole after every
step (a plain System, as a real server is), at verify's budget and at longer examples. CPU time
of the whole search (simulation, judging, Hypothesis), per machine on one model.
Usage: .venv/bin/python bench/machine_cost.py [--system model:wl344] [--examples 60] [--steps 20,50] [--machines A,B]
"""
from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass

import record
from replcheck import systems
from replcheck.features import load_features
from replcheck.properties import core
from replcheck.spec.contract import Declarations, Trace
from replcheck.search import run_machine


@dataclass(frozen=True)
class Whole:
    """The same system without its extensible runs: the machine runs it on every prefix whole."""
    inner: object

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def kind(self) -> str:
        return self.inner.kind

    @property
    def declares(self) -> Declarations:
        return self.inner.declares

    @property
    def config(self):
        return self.inner.config

    def run(self, history: dict) -> Trace:
        return self.inner.run(history)


def cpu_of(machine: core.Machine, system, examples: int, steps: int) -> float:
    start = time.process_time()
    run_machine(machine, system, examples, 0, steps)
    return round(time.process_time() - start, 2)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--system", default="model:wl344")
    p.add_argument("--examples", type=int, default=60)
    p.add_argument("--steps", default="20,50")
    p.add_argument("--machines", help="these machines only (comma-separated)")
    a = p.parse_args()
    load_features()
    system = systems.get(a.system)
    chosen = [m for m in core.MACHINES if not a.machines or m.name in a.machines.split(",")]
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    for steps in (int(s) for s in a.steps.split(",")):
        for m in chosen:
            row = {"machine": m.name, "steps": steps, "whole_cpu_s": cpu_of(m, Whole(system), a.examples, steps),
                   "followed_cpu_s": cpu_of(m, system, a.examples, steps)}
            rows.append(row)
            print(f"{m.name:20} {steps:3} steps: whole {row['whole_cpu_s']:6.2f} s, followed {row['followed_cpu_s']:6.2f} s", flush=True)
    out = record.write("machine_cost", {"system": a.system, "examples": a.examples, "rows": rows})
    print(f"load average after: {os.getloadavg()[0]:.2f}; wrote {out}")


if __name__ == "__main__":
    main()
