"""Model throughput on one core: histories and events per second, with and without the properties.

Runs every embedded History (delay and semi-sync scenarios) on each model system `--rounds`
times in this one process.
An "event" is one binlog event applied by one replica's SQL thread (an `apply` observation).
Usage: .venv/bin/python bench/model_throughput.py [--rounds N]
"""
from __future__ import annotations

import argparse
import json
import time

from replcheck import io, systems
from replcheck.features import load_features
from replcheck.properties.core import TraceView, run_properties
from replcheck.verify import embedded_histories


def measure(system_name: str, histories: list[dict], rounds: int, with_properties: bool) -> dict:
    system = systems.get(system_name)
    n_hist = n_events = n_obs = 0
    start = time.perf_counter()
    for _ in range(rounds):
        for h in histories:
            header, obs = system.run(h)
            if with_properties:
                run_properties(TraceView(header, obs))
            n_hist += 1
            n_obs += len(obs)
            n_events += sum(1 for o in obs if o["kind"] == "apply")
    seconds = time.perf_counter() - start
    return {"system": system_name, "properties": with_properties, "histories": n_hist, "seconds": round(seconds, 3),
            "histories_per_s": round(n_hist / seconds, 1), "events_per_s": round(n_events / seconds),
            "observations_per_s": round(n_obs / seconds)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=20)
    args = p.parse_args()
    load_features()
    histories = [io.load_history(path) for path in embedded_histories()]
    for name in [s.name for s in systems.systems().values() if s.kind == "model"]:
        for with_properties in (False, True):
            print(json.dumps(measure(name, histories, args.rounds, with_properties)))


if __name__ == "__main__":
    main()
