"""The long bad-input fuzz run: N mutated real inputs and arguments through every reader.

Case i of a run is made from `random.Random(f"{seed}:{i}")` alone (tests/engine/fuzzing.py says
why), the targets taken in turn, so any case can be made again from (seed, i) and the figures do
not depend on --jobs. Per target: cases, exit codes, and the defects: tracebacks (exit 3 or an
exception out of main), hangs (over --timeout s), bad messages, half-written outputs. The first
case of each distinct defect signature is saved with a reproducer in --crashes:
`bench/fuzz.py --replay DIR/case.json` runs it again.

Usage: nice .venv/bin/python bench/fuzz.py [--inputs 100000] [--seed 0] [--jobs 2] [--timeout 10] [--crashes DIR] [--executable]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "engine"))
import fuzzing  # noqa: E402  (the shared machinery, also the tests')

TARGETS = sorted(fuzzing.TARGETS)


def one(job: tuple[int, int, float, bool]) -> tuple[int, str, str, str, str | None]:
    """Case `number`: (number, target, exit code, outcome kind, signature); the case itself when a defect.
    With `executable`, through the real `python -m replcheck` where the case can be (fuzzing.runs_as_a_process)."""
    seed, number, timeout, executable = job
    target = TARGETS[number % len(TARGETS)]
    case = fuzzing.case_from(target, fuzzing.case_rng(seed, number))
    outcome = (fuzzing.run_case_exec(case, timeout) if executable and fuzzing.runs_as_a_process(case)
               else fuzzing.run_case(case, timeout))
    defect = outcome.kind in fuzzing.DEFECTS
    return (number, target, str(outcome.code), outcome.kind,
            json.dumps({"signature": outcome.signature, "stderr": outcome.stderr[-4000:], "case": case.to_json()}) if defect else None)


def save(crashes: Path, seed: int, number: int, kind: str, detail: dict) -> Path:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{kind}-{detail['signature']}")[:80].strip("-")
    d = crashes / f"{len(list(crashes.iterdir())):03d}-{slug}"
    d.mkdir()
    (d / "case.json").write_text(detail["case"])
    (d / "stderr.txt").write_text(detail["stderr"], errors="backslashreplace")  # argv may hold surrogates
    (d / "README").write_text(f"{kind}: {detail['signature']}\nseed {seed}, case {number}\n"
                              f"replay: .venv/bin/python bench/fuzz.py --replay {d / 'case.json'}\n")
    return d


def run(inputs: int, seed: int, jobs: int, timeout: float, crashes: Path, executable: bool = False) -> dict:
    crashes.mkdir(parents=True, exist_ok=True)
    fuzzing.seeds()  # made once, before the workers fork
    per: dict[str, Counter] = defaultdict(Counter)
    signatures: dict[tuple[str, str], dict] = {}
    start = last = time.monotonic()
    work = ((seed, n, timeout, executable) for n in range(inputs))
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        results = pool.imap_unordered(one, work, chunksize=16) if jobs > 1 else map(one, work)
        for done, (number, target, code, kind, detail) in enumerate(results, 1):
            c = per[target]
            c["cases"] += 1
            c[f"exit {code}"] += 1
            c[kind] += 1
            if detail:
                d = json.loads(detail)
                key = (kind, d["signature"])
                if key not in signatures:
                    signatures[key] = {"kind": kind, "signature": d["signature"], "target": target, "case": number,
                                       "count": 0, "reproducer": str(save(crashes, seed, number, kind, d))}
                    print(f"[fuzz] new {kind}: {d['signature']} (case {number})", file=sys.stderr, flush=True)
                signatures[key]["count"] += 1
            if time.monotonic() - last >= 10 or done == inputs:
                last = time.monotonic()
                print(f"[fuzz] {done}/{inputs} cases, {done / (last - start):.0f}/s, "
                      f"{len(signatures)} distinct defects", file=sys.stderr, flush=True)
    seconds = time.monotonic() - start
    totals = Counter()
    for c in per.values():
        totals.update(c)
    return {"inputs": inputs, "seed": seed, "jobs": jobs, "seconds": round(seconds, 1), "inputs_per_s": round(inputs / seconds, 1),
            "load_average": os.getloadavg(), "defect_counts": {kind: totals[kind] for kind in fuzzing.DEFECTS},
            "per_target": {t: dict(sorted(per[t].items())) for t in sorted(per)},
            "defects": sorted(signatures.values(), key=lambda s: (s["kind"], s["signature"]))}


def replay(path: Path, timeout: float) -> int:
    case = fuzzing.Case.from_json(path.read_text())
    outcome = fuzzing.run_case(case, timeout)
    print(f"{case.target}: argv {case.argv}\n{outcome.kind} (exit {outcome.code}) {outcome.signature}\n{outcome.stderr}")
    return 1 if outcome.kind in fuzzing.DEFECTS else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--inputs", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=1, help="worker processes (the figures do not depend on it)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds before a case counts as a hang")
    p.add_argument("--crashes", type=Path, default=Path("fuzz-crashes"), help="where each distinct defect's reproducer goes")
    p.add_argument("--replay", type=Path, help="run one saved case.json again")
    p.add_argument("--executable", action="store_true", help="each case that can, through the real executable (about 0.3 CPU-s a case)")
    args = p.parse_args()
    if args.replay:
        return replay(args.replay, args.timeout)
    summary = run(args.inputs, args.seed, args.jobs, args.timeout, args.crashes, args.executable)
    print(json.dumps(summary, indent=1))
    return 1 if summary["defects"] else 0


if __name__ == "__main__":
    sys.exit(main())
