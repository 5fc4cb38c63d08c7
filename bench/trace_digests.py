"""Trace digests: every Trace the models and mutants give, by digest, to show that a change of the
simulator's structure changed no behaviour; with `--verdicts`, the digest is of the Trace and every
verdict judged on it (status, count, witnesses, conditions), to show that a change of the
properties' structure changed no verdict.

Runs every embedded History (spec/histories, the suite scenarios among them) and every corpus entry
on every model and mutant, and `--generated` Histories of seed 0 (every family) on the nine models;
writes one line per (History, system): its name, the system and the sha256 of the Trace as written
(or of the error a run raised). `--check FILE` compares against a file written before and names
every line that differs.
Usage: .venv/bin/python bench/trace_digests.py --out FILE [--generated 10000] [--verdicts] [--systems A,B]
       .venv/bin/python bench/trace_digests.py --check FILE [--generated 10000] [--verdicts] [--systems A,B]
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent


def _histories() -> Iterator[tuple[str, dict]]:
    from replcheck import io
    for path in sorted((ROOT / "spec" / "histories").rglob("*.jsonl")):
        yield str(path.relative_to(ROOT)), io.load_history(path)
    for path in sorted((ROOT / "corpus").glob("*.jsonl")):
        yield str(path.relative_to(ROOT)), io.load_history(path)


def _digest(system, history: dict, verdicts: bool) -> str:
    from replcheck import io
    from replcheck.properties.judge import judge
    try:
        if verdicts:
            j = judge(system, history)
            text = io.dumps_lines(*j.trace) + repr([(v.as_dict(), v.conditions) for v in j.verdicts + j.expectations])
        else:
            text = io.dumps_lines(*system.run(history))
    except Exception as e:  # a refusal is behaviour too: it must stay the same refusal
        text = f"{type(e).__name__}: {e}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def digests(generated: int, verdicts: bool = False, only: list[str] | None = None) -> Iterator[str]:
    from replcheck import systems
    from replcheck.generate import generate
    every = {name: s for name, s in systems.systems().items() if not only or name in only}
    models = [s for name, s in every.items() if name.startswith("model:")]
    start = time.perf_counter()
    for name, history in _histories():
        for system in every.values():
            yield f"{name} {system.name} {_digest(system, history, verdicts)}"
    for i in range(generated):
        history = generate(0, i)
        for system in models:
            yield f"gen-0-{i} {system.name} {_digest(system, history, verdicts)}"
        if (i + 1) % 1000 == 0:
            spent = time.perf_counter() - start
            print(f"[trace-digests] {i + 1}/{generated} generated, {spent:.0f} s", file=sys.stderr, flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--out", type=Path)
    g.add_argument("--check", type=Path)
    p.add_argument("--generated", type=int, default=10_000)
    p.add_argument("--verdicts", action="store_true", help="digest each Trace with its verdicts")
    p.add_argument("--systems", default="", help="only these systems (comma-separated)")
    a = p.parse_args()
    lines = list(digests(a.generated, a.verdicts, [n for n in a.systems.split(",") if n]))
    if a.out:
        a.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"trace digests: {len(lines)} written to {a.out}")
        return
    before = dict(line.rsplit(" ", 1) for line in a.check.read_text(encoding="utf-8").splitlines())
    now = dict(line.rsplit(" ", 1) for line in lines)
    differ = sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))
    for k in differ[:50]:
        print(f"differs: {k}: {before.get(k, '-')} -> {now.get(k, '-')}")
    print(f"trace digests: {len(now)} compared, {len(differ)} differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
