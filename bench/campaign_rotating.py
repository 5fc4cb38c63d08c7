"""The models against their own seeds at scale: N generated Histories over rotating seeds, every
History on the three models, every property and every cross-check (campaign.run_history, the row
a Spark task writes), counting undeclared violations and unexpected differences.

Seeds rotate: History i of the run uses seed `first + i // per_seed`, index `i % per_seed`, so a
long run covers many seeds and each finding names its (seed, index) for `replcheck replay`.
Worker processes (`--jobs`) split the work; the figures do not depend on how it is split.
`--families` draws from some of the generator's families only, as `replcheck campaign --families`
does; each finding's command passes them on to `replay` and `explain`.
With `--per-seed 60` each seed is one commit's draw of tests/engine/test_campaign_rotating.py, and
`seeds_with_a_finding` over `seeds_run` is how often a commit's rotating test fails.
Usage: .venv/bin/python bench/campaign_rotating.py [--histories 100000] [--first-seed 100] [--per-seed 5000] [--jobs 2]
       [--systems model:mariadb-10.11,...] [--families delay,semisync,incident] [--record]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import record

from replcheck import campaign

MODELS = ("model:mariadb-10.11", "model:wl7318", "model:groupid")
BATCH = 200


def scan(task: tuple[int, int, int, tuple[str, ...], tuple[str, ...] | None]) -> tuple[int, list[tuple]]:
    """One batch of one seed: (Histories run, the finding rows)."""
    from replcheck.features import load_features

    load_features()
    seed, start, end, systems, families = task
    found = []
    for index in range(start, end):
        found += [r for r in campaign.run_history(seed, index, systems, families=families) if r[campaign.FINDING]]
    return end - start, found


def tasks(histories: int, first: int, per_seed: int, systems: tuple[str, ...], families: tuple[str, ...] | None = None) -> list[tuple]:
    out, i = [], 0
    while i < histories:  # a batch ends at its seed's last History: a seed shorter than a batch is not skipped past
        seed, index = first + i // per_seed, i % per_seed
        end = min(index + BATCH, per_seed, index + histories - i)
        out.append((seed, index, end, systems, families))
        i += end - index
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--histories", type=int, default=100_000)
    p.add_argument("--first-seed", type=int, default=100)
    p.add_argument("--per-seed", type=int, default=5_000)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--systems", default=",".join(MODELS))
    p.add_argument("--families", help="draw from these of the generator's families only (comma-separated)")
    p.add_argument("--out", help="also write every finding row here (JSON Lines)")
    p.add_argument("--record", action="store_true", help="write the figures to bench/results/")
    a = p.parse_args()
    systems = tuple(a.systems.split(","))
    families = tuple(a.families.split(",")) if a.families else None
    done, findings, start = 0, [], time.perf_counter()
    # each finding is shown (and written to --out) as its batch ends: a long run that is stopped
    # still names every finding it made
    out = open(a.out, "w", encoding="utf-8") if a.out else None
    with ProcessPoolExecutor(a.jobs) as pool:
        for n, rows in pool.map(scan, tasks(a.histories, a.first_seed, a.per_seed, systems, families)):
            done += n
            findings += rows
            for r in rows:
                print(f"[campaign_rotating] finding: {r[12] or r[4]} ({r[6]}): {r[11][:200]}", file=sys.stderr, flush=True)
                if out:
                    out.write(json.dumps(dict(zip((c for c, _ in campaign.COLUMNS), r))) + "\n")
                    out.flush()
            if done % 5_000 < BATCH:
                print(f"[campaign_rotating] {done}/{a.histories} Histories, {len(findings)} findings, "
                      f"{done / (time.perf_counter() - start):.1f}/s", file=sys.stderr, flush=True)
    if out:
        out.close()
    seconds = time.perf_counter() - start
    by = Counter((r[3], r[4], r[6]) for r in findings)
    seeds_run = len({t[0] for t in tasks(done, a.first_seed, a.per_seed, systems, families)})
    figures = {
        "histories": done, "systems": systems, "families": families, "generator": campaign.GENERATOR, "seeds": [a.first_seed, a.first_seed + (a.histories - 1) // a.per_seed],
        "per_seed": a.per_seed, "seeds_run": seeds_run, "seeds_with_a_finding": len({r[1] for r in findings}),
        "seconds": round(seconds), "histories_per_s": round(done / seconds, 1), "jobs": a.jobs, "load": os.getloadavg()[0],
        "findings": len(findings), "by_kind_system_requirement": {" ".join(filter(None, k)): n for k, n in by.most_common()},
        "first": [{"seed": r[1], "index": r[0], "system": r[4], "requirement": r[6], "witness": r[11][:200],
                   "reproduce": r[12]} for r in findings[:20]]}
    print(json.dumps(figures, indent=1))
    if a.record:
        print(f"wrote {record.write('campaign_rotating', figures)}")

if __name__ == "__main__":
    main()
