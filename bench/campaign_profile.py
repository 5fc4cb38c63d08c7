"""Where one campaign History's CPU goes, in one process (no Spark): Histories per CPU-second for
each model alone and for the three together, and, from a profile of the three together, the
share of generating the History (with the runs the generator makes to pick its steps), running
each system, judging the properties, and the rest (cross-check, rows).
Usage: .venv/bin/python bench/campaign_profile.py [--histories N]
"""
from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time

import record
from replcheck import campaign
from replcheck.features import load_features

MODELS = ("model:wl344", "model:wl7318", "model:groupid")
# a part of the work: the function whose cumulative time in the profile it is
PARTS = {"generate": ("generate.py", "generate"), "simulate": ("systems.py", "run"),
         "judge": ("judge.py", "judge_trace")}


def rate(names: tuple[str, ...], n: int, first: int) -> float:
    start = time.process_time()
    for index in range(first, first + n):
        campaign.run_history(1, index, names)
    return round(n / (time.process_time() - start), 1)


def shares(n: int) -> dict:
    profile = cProfile.Profile()
    profile.runcall(lambda: [campaign.run_history(1, i, MODELS) for i in range(n)])
    stats = pstats.Stats(profile).stats
    total = max(ct for (_, _, name), (_, _, _, ct, _) in stats.items() if name == "<lambda>")
    found = {part: sum(ct for (file, _, name), (_, _, _, ct, _) in stats.items() if file.endswith(f) and name == fn) / total
             for part, (f, fn) in PARTS.items()}
    return {**{k: round(v, 2) for k, v in found.items()}, "rest": round(1 - sum(found.values()), 2)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--histories", type=int, default=200)
    n = p.parse_args().histories
    load_features()
    campaign.run_history(1, 0, MODELS)  # imports and caches: not a History's cost
    figures = {"histories": n, "seed": 1,
               "rates": [{"systems": "+".join(names), "histories_per_cpu_s": rate(names, n, 1)}
                         for names in [(m,) for m in MODELS] + [MODELS]],
               "shares": [{"part": part, "share": share} for part, share in shares(n // 2).items()]}
    print(json.dumps(figures, indent=1))
    print(f"wrote {record.write('campaign_profile', figures)}")


if __name__ == "__main__":
    main()
