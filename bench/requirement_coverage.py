"""Requirement coverage of the generator: N Histories of each family (the generator
drawing from that family only), judged on the models, counted by replcheck.coverage: per
requirement the share of its families' Histories that exercise it, the weakly covered, those
under the floor of 1 in 100, and how often each distinct condition of a check was reached.
Usage: .venv/bin/python bench/requirement_coverage.py [--histories 1000] [--seed 0] [--families delay,...]
       [--systems model:wl344,model:wl7318,model:groupid] [--all]
"""
from __future__ import annotations

import argparse
import time

from replcheck import coverage, systems
from replcheck.features import load_features
from replcheck.generate import FAMILIES, generate
from replcheck.properties.judge import judge

MODELS = ("model:wl344", "model:wl7318", "model:groupid")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--histories", type=int, default=1000, help="per family")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--systems", default=",".join(MODELS))
    p.add_argument("--all", action="store_true", help="print every requirement's rate, not only the low ones")
    a = p.parse_args()
    load_features()
    chosen = [systems.get(n) for n in a.systems.split(",")]
    cov = coverage.Coverage()
    start = time.perf_counter()
    for family in a.families.split(","):
        for index in range(a.histories):
            history = generate(a.seed, index, (family,))
            cov.add(family, [v for s in chosen for v in judge(s, history).verdicts])
    report = cov.as_dict()
    print("\n".join(coverage.lines(report)))
    if a.all:
        for x in sorted(report["requirements"], key=lambda x: (x["family_rate"] is None, x["family_rate"] or 0)):
            rate = "-" if x["family_rate"] is None else f"{x['family_rate']:.2%}"
            print(f"  {x['requirement']:<32} {','.join(x['families']) or '-':<26} {rate:>8}  {x['histories']}")
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
