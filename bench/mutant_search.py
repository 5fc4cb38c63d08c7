"""Finding power per mutant: how many generated Histories, and how many seconds, until
the first History that catches each mutant of the registry, and how short that History shrinks.

For every mutant, the Histories of its feature's families (replcheck.generate.families_for: the
generator drawing from those families only) are judged in order on the mutant, in one process,
no Spark, until one violates a `kills` requirement that the base model holds on the same History
(replcheck.results.caught: a base's own violation shows no bug). That History is then shrunk
(replcheck.investigate.shrink) keeping the same catch, and its operations counted. `--machines`
also runs verify's state-machine search on each mutant (replcheck.search: the machines reaching
its seam, the machines of what caught it on the embedded Histories leading, until one finds it), with the machine, requirement, shrunk steps and CPU seconds, and
lists the mutants no machine finds; `--limit 0` runs that search only. Goal: every mutant within 10,000 Histories, median
under 2 s, shrunk to at most 8 steps. Timings depend on the machine's load: it is printed, and
kept with the rows in bench/results/mutant_search-<date>.json (docs/gen.py shows it on the figures page).
Usage: .venv/bin/python bench/mutant_search.py [--seed 0] [--limit 10000] [--mutants a,b] [--machines [--thorough]] [--markdown]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import record
from replcheck import systems
from replcheck.features import load_features
from replcheck.generate import families_for, generate
from replcheck.investigate import shrink
from replcheck.model.mutants import REGISTRY, Mutant
from replcheck.properties.judge import judge
from replcheck.results import caught


def catches(mutant, base, history: dict, kills) -> tuple[str, ...]:
    """The kills that catch the mutant on this History (the base judged only when the mutant violates one)."""
    j = judge(mutant, history, kills)
    return caught(j, judge(base, history, kills)) if j.violations else ()


def search(m: Mutant, seed: int, limit: int, families: tuple[str, ...] | None = None, every: bool = False) -> dict:
    """The first of `limit` Histories (of `families`, by default the feature's) that catches the mutant:
    by one of its kills, or with `every` by any requirement (the anti-join over all of them)."""
    mutant, base = systems.get(f"mutant:{m.name}"), systems.get(m.base)
    families = families_for(m.feature) if families is None else families
    kills = None if every else m.kills
    start = time.perf_counter()
    for index in range(limit):
        history = generate(seed, index, families)
        if got := catches(mutant, base, history, kills):
            seconds = time.perf_counter() - start
            small, _ = shrink(history, lambda h: got[0] in catches(mutant, base, h, (got[0],)))
            return {"mutant": m.name, "families": families, "histories": index + 1, "seconds": seconds,
                    "requirement": got[0], "index": index, "steps": len(history["ops"]), "shrunk": len(small["ops"])}
    return {"mutant": m.name, "families": families, "histories": None, "seconds": time.perf_counter() - start,
            "requirement": "", "index": None, "steps": None, "shrunk": None}


def machines(m: Mutant, examples: int, seed: int, thorough: bool = False) -> dict:
    """verify's search on this mutant (replcheck.search), as the default verify runs it or, with
    `thorough`, as --thorough does: the machines it ran, the one that found it, what it failed on,
    the steps of its witness, and its CPU seconds (the seam probes included; the embedded Histories'
    run that names the leading machines, also counted, are given apart)."""
    from replcheck import suites, verify
    from replcheck.results import Results
    from replcheck.search import DEFAULT, THOROUGH, machines_of, search as machine_search

    budget = THOROUGH if thorough else DEFAULT
    start, ran, found = time.process_time(), [], None
    # what caught it on verify's embedded Histories leads its search, as in verify (CPU counted)
    embedded = Results()
    verify.run_histories(verify.embedded_histories() + suites.histories(), [f"mutant:{m.name}", m.base], embedded, None,
                         lambda _: None)
    first = machines_of(r for _, r in embedded.caught.get(f"mutant:{m.name}", ()))
    embedded_cpu = time.process_time() - start  # verify runs these once for every search: shown apart
    for machine, cls, failure in machine_search(systems.get(f"mutant:{m.name}"), examples, seed, budget.mutant_steps,
                                                shrink=budget.shrink, first=first):
        ran.append(machine.name)
        if failure is not None:
            found = {"machine": machine.name, "machine_requirement": failure.message.split(":")[0],
                     "machine_steps": cls.last_steps}
    return {"machines_run": ",".join(ran), "machine_cpu_s": round(time.process_time() - start, 2),
            "embedded_cpu_s": round(embedded_cpu, 2),
            **(found or {"machine": "-", "machine_requirement": "-", "machine_steps": None})}


def arguments(description: str, limit: int) -> argparse.ArgumentParser:
    """The options a search over mutants takes (this bench's and historical_search's)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=limit)
    p.add_argument("--mutants", help="these mutants only (comma-separated registry names)")
    p.add_argument("--machines", action="store_true", help="also run verify's state-machine search on each mutant")
    p.add_argument("--examples", type=int, default=60, help="the state machines' budget (verify's default)")
    p.add_argument("--thorough", action="store_true", help="the machines' search as verify --thorough runs it")
    return p


def main() -> None:
    p = arguments(__doc__.splitlines()[0], 10_000)
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    a = p.parse_args()
    load_features()
    chosen = [REGISTRY[n] for n in a.mutants.split(",")] if a.mutants else list(REGISTRY.values())
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    rows, unfound = [], []
    for m in chosen:
        r = search(m, a.seed, a.limit)
        if a.machines:
            r.update(machines(m, a.examples, a.seed, a.thorough))
            if r["machine"] == "-":
                unfound.append(m.name)
        rows.append(r)
        print(_line(r, a.markdown), flush=True)
    times = [r["seconds"] for r in rows if r["histories"]]
    found = sum(1 for r in rows if r["histories"])
    print(f"found {found}/{len(rows)} within {a.limit} Histories of seed {a.seed}; "
          f"median {statistics.median(times) if times else 0:.2f} s, max {max(times, default=0):.2f} s; "
          f"shrunk at most {max((r['shrunk'] for r in rows if r['shrunk'] is not None), default=0)} steps; "
          f"load average after: {os.getloadavg()[0]:.2f}")
    if a.machines:
        print(f"not found by a state machine ({a.examples} examples, seed {a.seed}): {', '.join(unfound) or 'none'}")
    out = record.write("mutant_search", {"seed": a.seed, "limit": a.limit, "examples": a.examples if a.machines else None,
                                         "thorough": a.thorough,
                                         "mutants": [{**r, "families": ",".join(r["families"])} for r in rows]})
    print(f"wrote {out}")


def _line(r: dict, markdown: bool) -> str:
    cells = [f"`{r['mutant']}`", ",".join(r["families"]),
             str(r["histories"] or "not found"), f"{r['seconds']:.2f}", r["requirement"] or "-",
             str(r["shrunk"] if r["shrunk"] is not None else "-")] + (
        [r["machine"], r["machine_requirement"], str(r["machine_steps"]), f"{r['machine_cpu_s']:.1f}",
         f"(embedded {r['embedded_cpu_s']:.1f})", r["machines_run"]]
        if "machine" in r else [])
    return "| " + " | ".join(cells) + " |" if markdown else "  ".join(cells)


if __name__ == "__main__":
    main()
