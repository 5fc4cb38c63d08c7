"""Where one campaign History's CPU goes, in one process (no Spark): Histories per CPU-second for
each model alone and for the three together, and, from a profile of the three together, the
share of generating the History (with the runs the generator makes to pick its steps), running
each system, judging the properties, and the rest (cross-check, rows); then the functions that
take the most CPU of their own (`functions`: calls, own and cumulative share of the profiled CPU).
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

MODELS = ("model:wl344", "model:wl7318", "model:groupid")
# a part of the work: the function whose cumulative time in the profile it is
PARTS = {"generate": ("generate.py", "generate"), "simulate": ("systems.py", "run"),
         "judge": ("judge.py", "judge_trace")}
ROOT = str(Path(__file__).resolve().parent.parent) + os.sep


def rate(names: tuple[str, ...], n: int, first: int) -> float:
    start = time.process_time()
    for index in range(first, first + n):
        campaign.run_history(1, index, names)
    return round(n / (time.process_time() - start), 1)


def profile(n: int, top: int) -> tuple[dict, list[dict]]:
    """The parts' shares and the `top` functions by own CPU, over n Histories of the three models."""
    prof = cProfile.Profile()
    prof.runcall(lambda: [campaign.run_history(1, i, MODELS) for i in range(n)])
    stats = pstats.Stats(prof).stats
    total = max(ct for (_, _, name), (_, _, _, ct, _) in stats.items() if name == "<lambda>")
    found = {part: sum(ct for (file, _, name), (_, _, _, ct, _) in stats.items() if file.endswith(f) and name == fn) / total
             for part, (f, fn) in PARTS.items()}
    shares = {**{k: round(v, 2) for k, v in found.items()}, "rest": round(1 - sum(found.values()), 2)}
    heavy = sorted(stats.items(), key=lambda kv: -kv[1][2])[:top]
    functions = [{"function": f"{file.removeprefix(ROOT)}:{line}({name})", "calls": nc, "own": round(tt / total, 4),
                  "cumulative": round(ct / total, 4)} for (file, line, name), (_, nc, tt, ct, _) in heavy]
    return shares, functions


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--histories", type=int, default=200, help="Histories per rate")
    p.add_argument("--profiled", type=int, default=500, help="Histories of the three models under the profiler")
    p.add_argument("--top", type=int, default=40, help="functions in the table")
    p.add_argument("--label", default="", help="what this measures (e.g. before or after a change)")
    args = p.parse_args()
    n = args.histories
    load_features()
    campaign.run_history(1, 0, MODELS)  # imports and caches: not a History's cost
    rates = [{"systems": "+".join(names), "histories_per_cpu_s": rate(names, n, 1)} for names in [(m,) for m in MODELS] + [MODELS]]
    shares, functions = profile(args.profiled, args.top)
    figures = {"label": args.label, "histories": n, "profiled": args.profiled, "seed": 1, "rates": rates,
               "shares": [{"part": part, "share": share} for part, share in shares.items()], "functions": functions}
    print(json.dumps(figures, indent=1))
    print(f"wrote {record.write('campaign_profile', figures)}")


if __name__ == "__main__":
    main()
