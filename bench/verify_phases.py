"""Where `replcheck verify`'s CPU goes, phase by phase: the embedded Histories (on the models alone,
then the mutants' share), the z3 proofs, TLC's small checks (its JVMs' CPU), the state machines'
searches on the models and on the mutants (each task's CPU in its worker, summed), and writing
results.json and the reports. Phases run one after the other, the searches in a pool as verify
runs them; the load average is kept beside the figures.
Usage: .venv/bin/python bench/verify_phases.py [--thorough] [--skip tlc,histories,...]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from collections import Counter
from pathlib import Path

import record
from replcheck import report, search, suites, systems, tlc, verify
from replcheck.features import load_features
from replcheck.results import Results, catches, summarised


def _cpu(who: int = resource.RUSAGE_SELF) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _timed_task(task: search.Task) -> tuple[list[dict], float]:
    start = time.process_time()
    answers = search.run_task(task)
    return answers, time.process_time() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--thorough", action="store_true")
    p.add_argument("--skip", default="", help="phases not run, by first word (histories, z3, tlc, model, mutant, writing)")
    a = p.parse_args()
    skip = set(filter(None, a.skip.split(",")))
    load_features()
    budget = search.THOROUGH if a.thorough else search.DEFAULT
    names = list(systems.systems())
    models = [n for n in names if systems.get(n).kind == "model"]
    paths = verify.embedded_histories() + suites.histories()
    load_before, phases, results = os.getloadavg(), {}, Results()

    def phase(name: str, fn, children: bool = False) -> None:
        if name.split()[0] in skip:
            return
        start, kids, wall = _cpu(), _cpu(resource.RUSAGE_CHILDREN), time.monotonic()
        fn()
        phases[name] = {"cpu_s": round(_cpu() - start + (_cpu(resource.RUSAGE_CHILDREN) - kids if children else 0), 1),
                        "wall_s": round(time.monotonic() - wall, 1)}
        print(name, phases[name], flush=True)

    searched: dict[str, list] = {}
    machines: Counter = Counter()

    def searches(kind: str) -> None:
        # a mutant's search starts with what caught it on the Histories, as in verify
        mine = [t for t in search.tasks(names, budget, 0, results.caught) if systems.get(t.system).kind == kind]
        with search.pool(verify.workers()) as pool:
            done = pool.map(_timed_task, mine, chunksize=1)
        searched[kind] = [{"system": t.system, "machine": t.machine, "cpu_s": round(cpu, 2),
                           "ran": [x["machine"] for x in answers], "found": next((x["machine"] for x in answers if x["failure"]), None),
                           "steps": next((x["shrunk_steps"] for x in answers if x["failure"]), None)}
                          for t, (answers, cpu) in zip(mine, done)]
        for row in searched[kind]:
            machines[row["machine"] or row["found"] or "-"] += row["cpu_s"]
        phases[f"{kind} searches (worker CPU)"] = {"cpu_s": round(sum(r["cpu_s"] for r in searched[kind]), 1)}
        for t, (answers, _) in zip(mine, done):
            verify.record_searches(results, t, answers)

    phase("histories on the models", lambda: verify.run_histories(paths, models, Results(), None, lambda _: None))
    phase("histories on every system", lambda: verify.run_histories(paths, names, results, None, lambda _: None))
    phase("z3 proofs", lambda: verify.run_proofs(results, lambda _: None))
    phase("tlc", lambda: verify.run_tlc(results, "small", lambda _: None), children=True)
    phase("model", lambda: searches("model"), children=True)
    phase("mutant", lambda: searches("mutant"), children=True)

    def write() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            document = results.document(seed=0, examples=budget.model_examples, mutant_examples=budget.mutant_examples,
                                        systems=names, history_files={p.stem: str(p) for p in paths},
                                        mutants=catches(results), searches=results.searches, figures=results.figures)
            document["rows"] = summarised(document["rows"])
            (Path(tmp) / "results.json").write_text(json.dumps(document, indent=1))
            report.write_reports(report.build_report([{**document, "_path": str(Path(tmp) / "results.json")}]), Path(tmp))
    phase("writing results and reports", write)
    mutants = searched.get("mutant", [])
    # lists of rows, which docs/gen.py shows as tables
    figures = {**{f"budget_{k}": v for k, v in vars(budget).items()},
               "phases": [{"phase": k, **v} for k, v in phases.items()],
               "search_cpu_by_machine": [{"machine": k, "cpu_s": round(v, 1)} for k, v in machines.most_common()],
               "mutants_found": sum(1 for r in mutants if r["found"]),
               "mutants_not_found": [r["system"] for r in mutants if not r["found"]],
               "steps_max": max((r["steps"] for r in mutants if r["found"]), default=None),
               "load_before": load_before, "load_after": os.getloadavg(),
               **{f"{kind}_searches": [{**r, "ran": ",".join(r["ran"])} for r in rows] for kind, rows in searched.items()}}
    print(json.dumps({k: v for k, v in figures.items() if not k.endswith("_searches")}, indent=1))
    print(f"wrote {record.write('verify_phases', figures)}")


if __name__ == "__main__":
    main()
