"""Whether a real server's verdicts depend on the phase of a sample: each History runs N times on
MariaDB (`conform --history H --attempts 1`, one process a run) and every requirement whose status
was not the same in all runs is printed with its statuses' counts; exit 1 when a verdict flipped
(pass in one run, violated in another). Defaults: the scenarios whose
verdicts depend on timing (incidents, the late clock reply, the chain).
Usage: .venv/bin/python bench/verdict_stability.py [--runs 50] [HISTORY ...]
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import record

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["inc-cache-overflow", "inc-skip-then-reconnect", "inc-skip-after-rotation", "clock-reply-late", "chain-per-hop"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("histories", nargs="*", default=[str(ROOT / "spec" / "histories" / f"{n}.jsonl") for n in DEFAULT])
    args = p.parse_args(argv)
    unstable, figures = 0, {}
    for history in args.histories:
        verdicts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        failed, began = 0, time.monotonic()
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="rc-stability-") as d:
                out = Path(d) / "out"
                r = subprocess.run([sys.executable, "-m", "replcheck.cli", "conform", "--server", "mariadb", "--history",
                                    history, "--out", str(out), "--attempts", "1"], cwd=ROOT, capture_output=True, text=True,
                                   env={**os.environ})
                if r.returncode not in (0, 1):
                    failed += 1
                    print(f"  run failed (exit {r.returncode}): {r.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
                    continue
                for row in json.loads((out / "results.json").read_text())["rows"]:
                    verdicts[row["requirement"]][row["status"]] += 1
        changing = {req: c for req, c in verdicts.items() if len(c) > 1}
        # a verdict that flipped: passed in one run and was violated in another (a run that did not
        # exercise a requirement, or could not tell, changed no verdict)
        flipped = {req for req, c in changing.items() if {"pass", "violated"} <= set(c)}
        unstable += len(flipped)
        print(f"{Path(history).stem}: {args.runs - failed} runs in {time.monotonic() - began:.0f} s, "
              f"{len(verdicts)} requirements, {len(changing)} with a status that changed, {len(flipped)} flipped"
              + (f", {failed} runs failed" if failed else ""))
        for req, c in sorted(changing.items()):
            print(f"  {req}: " + ", ".join(f"{s} {n}" for s, n in c.most_common()) + (" (flipped)" if req in flipped else ""))
        figures[Path(history).stem] = {"runs": args.runs - failed, "failed": failed, "seconds": round(time.monotonic() - began),
                                       "changing": {req: dict(c) for req, c in sorted(changing.items())}, "flipped": sorted(flipped)}
    print(f"wrote {record.write('verdict_stability', {'histories': figures})}")
    return 1 if unstable else 0


if __name__ == "__main__":
    sys.exit(main())
