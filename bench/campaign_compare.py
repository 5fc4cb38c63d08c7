"""Histories per CPU-second of two versions of replcheck on the same Histories, in one process each
(no Spark), alternated `--rounds` times in fresh processes so that a shared machine's load moves
both alike: each model of the throughput goal alone and the three together, the median of the
rounds per version, and the factor between them. A version is a git revision (its tree exported
to a temporary directory) or the working tree; both import through this checkout's virtualenv.
Usage: .venv/bin/python bench/campaign_compare.py BASE [--head REV] [--histories N] [--rounds N] [--label TEXT]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

import record

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("model:wl344", "model:wl7318", "model:groupid")
# One measurement in a process of its own: the editable install's packages pointed at the version's tree.
CHILD = """
import sys, time
import __editable___replcheck_0_2_0_finder as finder
root, names, n = sys.argv[1], tuple(sys.argv[2].split(",")), int(sys.argv[3])
for package, path in list(finder.MAPPING.items()):
    finder.MAPPING[package] = root + "/" + path.rstrip("/").rsplit("/", 1)[1]
from replcheck import campaign
from replcheck.features import load_features
load_features()
campaign.run_history(1, 0, names)  # imports and caches: not a History's cost
start = time.process_time()
for index in range(1, n + 1):
    campaign.run_history(1, index, names)
print(n / (time.process_time() - start))
"""


def tree(rev: str | None, into: Path) -> str:
    """The version's source root: the working tree, or the revision exported under `into`."""
    if rev is None:
        return str(ROOT)
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return str(into)


def rate(root: str, names: tuple[str, ...], n: int) -> float:
    # run in the version's root: `-c` puts the working directory first on the path
    out = subprocess.run([sys.executable, "-c", CHILD, root, ",".join(names), str(n)], capture_output=True, text=True, cwd=root)
    if out.returncode:
        sys.exit(f"the measurement in {root} failed: {out.stderr.strip().splitlines()[-1:]}")
    return float(out.stdout.strip())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("base", help="the version before (a git revision)")
    p.add_argument("--head", help="the version after (a git revision; default the working tree)")
    p.add_argument("--histories", type=int, default=200, help="Histories per measurement")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--label", default="")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="replcheck-compare-") as tmp:
        roots = {"before": tree(args.base, Path(tmp) / "base"), "after": tree(args.head, Path(tmp) / "head")}
        rates = []
        for names in [(m,) for m in MODELS] + [MODELS]:
            seen: dict[str, list[float]] = {"before": [], "after": []}
            for _ in range(args.rounds):
                for version, root in roots.items():
                    seen[version].append(rate(root, names, args.histories))
            before, after = statistics.median(seen["before"]), statistics.median(seen["after"])
            rates.append({"systems": "+".join(names), "before": round(before, 1), "after": round(after, 1),
                          "factor": round(after / before, 3), "rounds_before": [round(r, 1) for r in seen["before"]],
                          "rounds_after": [round(r, 1) for r in seen["after"]]})
            print(json.dumps(rates[-1]), flush=True)
    head = args.head or "working tree at " + subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                                                           capture_output=True, text=True).stdout.strip()
    print(f"wrote {record.write('campaign_compare', {'label': args.label, 'base': args.base, 'head': head, 'histories': args.histories, 'rounds': args.rounds, 'seed': 1, 'rates': rates})}")


if __name__ == "__main__":
    main()
