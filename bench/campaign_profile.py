"""Where one campaign History's CPU goes, in one process (no Spark): Histories per CPU-second for
each model alone and for the three together, and, from a profile of the three together, the
share of each part of the work (`shares`): generating the History, the runs the generator makes to
pick its steps, running each system (of which the status samples), judging the properties (of which
the `--top` properties' own shares, `properties`), the cross-check, the rows' digests and the rest (building
the rows); then the functions that take the most CPU of their own (`functions`: calls, own and
cumulative share of the profiled CPU).
The profiler slows a call-heavy History several times over: the shares are its view, the rates
are measured without it.
Usage: .venv/bin/python bench/campaign_profile.py [--histories N] [--profiled N] [--label TEXT]
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import time
from pathlib import Path

import record
from replcheck import campaign
from replcheck.features import load_features
from replcheck.properties.core import PROPERTIES

MODELS = ("model:wl344", "model:wl7318", "model:groupid")
# a part of the work: the functions (file, name) whose cumulative time in the profile it is, and,
# for a function called by two parts, the caller (file, name) whose share of its time is this part's
GENERATE = ("generate.py", "generate")
PARTS = {"generate": ([GENERATE], None),
         "generator's runs": ([("kernel.py", "simulate")], ("steps/__init__.py", "trace")),
         "simulate": ([("kernel.py", "simulate")], ("systems.py", "run")),
         "status samples": ([("kernel.py", "_sample_all")], None),
         "judge": ([("judge.py", "judge_trace")], None),
         "crosscheck": ([("crosscheck.py", "facts"), ("crosscheck.py", "compare")], None),
         "digests": ([("io.py", "dumps_lines")], None)}
NESTED = {"generator's runs": "generate", "status samples": "simulate, generator's runs"}  # a part within others
ROOT = str(Path(__file__).resolve().parent.parent) + os.sep


def rate(names: tuple[str, ...], n: int, first: int) -> float:
    start = time.process_time()
    for index in range(first, first + n):
        campaign.run_history(1, index, names)
    return round(n / (time.process_time() - start), 1)


def _matches(key: tuple, where: tuple[str, str]) -> bool:
    return key[0].endswith(where[0]) and key[2] == where[1]


def _part(stats: dict, functions: list[tuple[str, str]], caller: tuple[str, str] | None) -> float:
    """The CPU of these functions, or only of their calls from `caller`."""
    total = 0.0
    for key, (_, _, _, ct, callers) in stats.items():
        if any(_matches(key, f) for f in functions):
            total += ct if caller is None else sum(c[3] for k, c in callers.items() if _matches(k, caller))
    return total


def profile(n: int, top: int) -> tuple[dict, list[dict], list[dict]]:
    """The parts' shares, each property's and the `top` functions by own CPU, over n Histories of the three models."""
    prof = cProfile.Profile()
    prof.runcall(lambda: [campaign.run_history(1, i, MODELS) for i in range(n)])
    stats = pstats.Stats(prof).stats
    total = max(ct for (_, _, name), (_, _, _, ct, _) in stats.items() if name == "<lambda>")
    found = {part: _part(stats, functions, caller) / total for part, (functions, caller) in PARTS.items()}
    shares = {**{k: round(v, 3) for k, v in found.items()},
              "rest": round(1 - sum(v for k, v in found.items() if k not in NESTED), 3)}
    where = {(p.fn.__code__.co_filename, p.fn.__code__.co_firstlineno, p.fn.__name__): p for p in PROPERTIES}
    properties = sorted(({"requirement": where[key].requirement, "property": where[key].name, "calls": nc,
                          "share": round(ct / total, 4)} for key, (_, nc, _, ct, _) in stats.items() if key in where),
                        key=lambda p: -p["share"])[:top]
    heavy = sorted(stats.items(), key=lambda kv: -kv[1][2])[:top]
    functions = [{"function": f"{file.removeprefix(ROOT)}:{line}({name})", "calls": nc, "own": round(tt / total, 4),
                  "cumulative": round(ct / total, 4)} for (file, line, name), (_, nc, tt, ct, _) in heavy]
    return shares, properties, functions


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--histories", type=int, default=200, help="Histories per rate")
    p.add_argument("--profiled", type=int, default=500, help="Histories of the three models under the profiler")
    p.add_argument("--top", type=int, default=30, help="properties and functions in the tables")
    p.add_argument("--label", default="", help="what this measures (e.g. before or after a change)")
    args = p.parse_args()
    n = args.histories
    load_features()
    campaign.run_history(1, 0, MODELS)  # imports and caches: not a History's cost
    rates = [{"systems": "+".join(names), "histories_per_cpu_s": rate(names, n, 1)} for names in [(m,) for m in MODELS] + [MODELS]]
    shares, properties, functions = profile(args.profiled, args.top)
    figures = {"label": args.label, "histories": n, "profiled": args.profiled, "seed": 1, "rates": rates,
               "shares": [{"part": part, "share": share, **({"within": NESTED[part]} if part in NESTED else {})}
                          for part, share in shares.items()],
               "properties": properties, "functions": functions}
    print(json.dumps({k: v for k, v in figures.items() if k not in ("properties", "functions")}, indent=1))
    print(f"wrote {record.write('campaign_profile', figures)}")


if __name__ == "__main__":
    main()
