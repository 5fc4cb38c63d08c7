"""Determinism: the same generated Histories simulated in separate processes with different
PYTHONHASHSEED give byte-identical Traces.

Each worker process (its own interpreter, its own hash seed) generates Histories over rotating
seeds, runs each on the three models and hashes every Trace (JSON Lines, as written); the parent
compares the digests per (seed, index, system) across the workers' runs.
Usage: .venv/bin/python bench/determinism.py [--histories 100000] [--first-seed 300] [--per-seed 5000] [--hash-seeds 0,4242]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

MODELS = ("model:mariadb-10.11", "model:wl7318", "model:groupid")


def worker(histories: int, first: int, per_seed: int, out: str) -> None:
    from replcheck import io, systems
    from replcheck.generate import generate

    with open(out, "w", encoding="utf-8") as f:
        for i in range(histories):
            seed, index = first + i // per_seed, i % per_seed
            history = generate(seed, index)
            for name in MODELS:
                digest = hashlib.sha256(io.dumps_lines(*systems.get(name).run(history)).encode()).hexdigest()[:16]
                f.write(f"{seed} {index} {name} {digest}\n")
            if (i + 1) % 10_000 == 0:
                print(f"[determinism] PYTHONHASHSEED={os.environ.get('PYTHONHASHSEED')}: {i + 1}/{histories}",
                      file=sys.stderr, flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--histories", type=int, default=100_000)
    p.add_argument("--first-seed", type=int, default=300)
    p.add_argument("--per-seed", type=int, default=5_000)
    p.add_argument("--hash-seeds", default="0,4242")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        worker(a.histories, a.first_seed, a.per_seed, a.worker)
        return
    start = time.perf_counter()
    outs, procs = [], []
    for hs in a.hash_seeds.split(","):
        out = f"/tmp/replcheck-determinism-{os.getpid()}-{hs}.txt"
        outs.append(out)
        procs.append(subprocess.Popen([sys.executable, __file__, "--histories", str(a.histories), "--first-seed",
                                       str(a.first_seed), "--per-seed", str(a.per_seed), "--worker", out],
                                      env={**os.environ, "PYTHONHASHSEED": hs}))
    if any(p.wait() for p in procs):
        sys.exit("determinism: a worker failed")
    runs = [open(o, encoding="utf-8").read().splitlines() for o in outs]
    differ = [lines for lines in zip(*runs) if len(set(lines)) > 1]
    print(json.dumps({"histories": a.histories, "traces": len(runs[0]), "hash_seeds": a.hash_seeds.split(","),
                      "differing": len(differ), "first": differ[:5], "seconds": round(time.perf_counter() - start),
                      "load": os.getloadavg()[0]}, indent=1))
    for o in outs:
        os.unlink(o)


if __name__ == "__main__":
    main()
