"""`replcheck verify`: every check replcheck has, on its embedded defaults, into a report directory.

Sources of evidence: each embedded History run on each system and judged by the properties;
the z3 proofs; the Hypothesis state machine of each feature against each model system; TLC on
the small configurations of spec/tla/manifest.toml. A finding is anything that differs from what
the spec says to expect: a model violating a requirement it is not declared to violate, a mutant
that no check kills, a proof with another outcome than its claim, a TLC result other than the
manifest pins (or none: TLC failed), a requirement with no evidence at all, a conformance scenario's History
on which the reference model does not show what the scenario claims (its requirements are
`inconclusive` there, replcheck.scenarios).
"""
from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Callable

from replcheck import catalogue, io, outdir, report, scenarios, search, suites, systems, tlc
from replcheck.features import load_features
from replcheck.properties import core
from replcheck.properties.judge import Judgement, asking, judge
from replcheck.properties.proofs import RLIMIT, UNKNOWN
from replcheck.progress import Progress
from replcheck.results import Finding, FindingKind, Results, catches, findings_of, summarised
from replcheck.spec import ROOT as SPEC


def embedded_histories() -> list[Path]:
    return sorted(Path(str(p)) for p in SPEC.joinpath("histories").iterdir() if p.name.endswith(".jsonl"))


class Judged(dict):
    """A History's Judgements by system, each made once. A model runs noting the mutants its run
    asks about (replcheck.properties.judge.Asked: its code asks at a mutant's seam); a mutant of it
    whose seam the run never reached has the model's Trace (under its own name and config) and its
    verdicts, without a run of its own: most mutants on most Histories."""

    def __init__(self, history: dict):
        super().__init__()
        self.history, self.asked = history, {}

    def __missing__(self, name: str) -> Judgement:
        system = systems.get(name)
        simulated = isinstance(system, systems.ModelSystem)  # another System (a server, a test's) only runs
        base = systems.get(system.declares.base) if simulated and system.kind == "mutant" and system.declares.base else None
        if isinstance(base, systems.ModelSystem) and base.kind == "model" and self.runs_as(system, base):
            j = self[base.name].of(system, config=system.config.as_dict())
        elif twin := next((n for n in list(self) if systems.same_runs(systems.get(n), system)), None):
            # a model of another's Config (model:groupid, model:wl344) is that run renamed
            j = self[twin].of(system)
            self.asked[name] = self.asked.get(twin, set())
        elif simulated and system.kind == "model":
            noting = asking(system)
            j = judge(noting, self.history)
            self.asked[name] = noting.config.mutants.asked
        else:
            j = judge(system, self.history)
        self[name] = j
        return j

    def runs_as(self, mutant, base) -> bool:
        """The mutant's run is its base model's: it differs by mutants the base's run never asked about."""
        if replace(mutant.config, mutants=base.config.mutants) != base.config:
            return False
        asked = self.asked.get(base.name)
        if asked is None:
            self.__missing__(base.name)  # the base's run notes what it asks
            asked = self.asked[base.name]
        return not (mutant.config.mutants - base.config.mutants) & asked


def run_histories(paths: list[Path], names: list[str], results: Results, traces: Path | None,
                  progress: Callable[[str], None]) -> None:
    for path in paths:
        history = io.load_history(path)
        scenario = scenarios.for_history(path)
        progress(f"History {path.stem}")
        judged = Judged(history)
        here = suites.systems_for(history, path, names)
        for name in here:
            system = systems.get(name)
            j = judged[name]
            if traces is not None:
                io.write_atomic(traces / name.replace(":", "-") / f"{path.stem}.jsonl", io.dumps_lines(*j.trace))
            if system.kind == "model":
                collect_figures(results.figures, path.stem, name, core.TraceView(*j.trace))
            verdicts = j.verdicts
            if scenario and name == scenarios.REFERENCE:  # a History that no longer tests what its scenario claims
                verdicts, _ = scenarios.conclude(scenario, j)
                results.findings += scenarios.inconclusive(scenario, verdicts, name, f"traces/{name.replace(':', '-')}/{path.stem}.jsonl")
            results.add_judgement("history", path.stem, j, verdicts=verdicts, history=history)
            if system.kind == "model":
                results.findings += findings_of(j, FindingKind.MODEL_VIOLATES_SEED, path.stem)
        for name in here:
            if base := systems.get(name).declares.base:  # a mutant is caught where its base, on the same History, holds
                results.add_catches(name, path.stem, judged[name], judged[base])


def collect_figures(figures: dict[str, list], history: str, system: str, view: core.TraceView) -> None:
    """Data for the report's pictures: due against applied time per delayed transaction, and a
    semi-sync master's status and waiting sessions over time."""
    from replcheck.properties import delay

    ix = delay.index(view)
    for a in view.kind("apply"):
        if a["type"] in delay.TRX_START and (due := ix.due(a)) is not None and ix.delay_at(a["node"], a["t"]):
            figures["delay"].append({"history": history, "system": system, "node": a["node"], "trx": a["trx"],
                                     "due_us": due, "applied_us": delay.begin_of(a), "delay_s": ix.delay_at(a["node"], a["t"])})
    for o in view.kind("server_status"):
        var = o["variables"]
        if history.startswith("ss-") and "Rpl_semi_sync_master_yes_tx" in var and view.nodes[o["node"]].get(
                "variables", {}).get("rpl_semi_sync_master_enabled"):
            figures["semisync"].append({"history": history, "system": system, "node": o["node"], "t_us": o["t"],
                                        "status": var["Rpl_semi_sync_master_status"],
                                        "wait_sessions": var["Rpl_semi_sync_master_wait_sessions"],
                                        "yes_tx": var["Rpl_semi_sync_master_yes_tx"], "no_tx": var["Rpl_semi_sync_master_no_tx"]})


def check_mutants(results: Results, names: list[str]) -> None:
    for name in names:
        system = systems.get(name)
        if system.kind == "mutant" and not results.caught.get(name):
            results.findings.append(Finding(FindingKind.MUTANT_SURVIVED, system=name, bug=system.declares.bug,
                                            requirement=", ".join(system.declares.kills),
                                            witness="no History made any of its killing requirements fail where its base model holds"))


def run_proofs(results: Results, progress: Callable[[str], None]) -> None:
    for proof in core.PROOFS:
        progress(f"z3: {proof.name}")
        r = proof.run()
        for verdict in r.verdicts():
            results.add("z3", "z3", r.name, verdict, r.expected == core.COUNTEREXAMPLE)
        if r.outcome == r.expected:
            continue
        # An `unknown` is z3 reaching its deterministic resource limit: inconclusive, never a verdict.
        kind, why = ((FindingKind.PROOF_INCONCLUSIVE, f"z3 reached its resource limit (rlimit {RLIMIT}) without an answer")
                     if r.outcome == UNKNOWN else (FindingKind.PROOF_OUTCOME, f"expected {r.expected}, got {r.outcome}: {r.detail}"))
        results.findings.append(Finding(kind, system="z3", requirement=", ".join(r.requirements), witness=f"{r.name}: {why}"))


def tlc_system(check: tlc.Check) -> str:
    """The system a TLC check's verdicts belong to: its mutant, as for the Python model's mutants
    (their violations are expected, and evidence about the checks only), else its configuration."""
    return f"mutant:{'+'.join(check.mutants)}" if check.mutants else check.config.removesuffix(".cfg")


def run_tlc(results: Results, size: str, progress: Callable[[str], None]) -> None:
    """Each manifest check of `size` run by TLC: a verdict per requirement it checks, with the
    state counts, and a violation's counterexample as numbered steps. What the manifest pins
    violated is expected; a result the manifest does not pin, or TLC failing, is a finding."""
    checks = tlc.select(size=size)
    mapping = tlc.manifest().requirements
    for c in checks:
        progress(f"TLC {c.name}")
        r = tlc.run(c.path, c.config_text())
        if r.status == "error":  # not a verdict: no rows, and the finding says why
            results.findings.append(Finding(FindingKind.TLC_FAILED, system=f"tlc:{c.name}", requirement="",
                                            witness=f"{c.module} {c.config}: {r.errors[0].splitlines()[0]}"))
            continue
        if diffs := tlc.differences(c, r):
            results.findings.append(Finding(FindingKind.TLC_MANIFEST, system=f"tlc:{c.name}",
                                            requirement=mapping.get(r.violated or "", ""),
                                            witness=f"{c.module} {c.config}: {'; '.join(diffs)}"))
        states = {"check": c.name, "module": c.module, "config": c.config, "distinct_states": r.distinct, "depth": r.depth}
        status = {"holds": core.PASS, "violated": core.VIOLATED, "not finished": core.NOT_EXERCISED}
        for name, rid, verdict in tlc.verdicts(c, r, mapping):
            witnesses = ((core.Witness(f"TLC: {name} violated after {len(r.trace) - 1} steps ({c.name}: {c.note})"),)
                         if verdict == "violated" else ())
            judged = r.distinct if verdict != "not finished" else 0  # the states TLC checked it on
            v = core.Verdict(rid, status[verdict], judged, witnesses, f"tlc:{c.module}:{name}")
            results.add("tlc", tlc_system(c), c.name, v, c.expect == "violated" and name == c.violated, tlc=states)
            if witnesses:
                results.rows[-1]["witnesses"][0]["steps"] = tlc.steps(r.trace)


def record_searches(results: Results, task: search.Task, answers: list[dict]) -> None:
    """A task's searches into results: a model's failure is a finding; a mutant's search is listed
    with what it failed on and the length it shrank to; every machine's verdict per requirement."""
    system = systems.get(task.system)
    for a in answers:
        failure = core.Witness(a["failure"]) if a["failure"] else None
        failed_on = a["failure"].split(":")[0] if a["failure"] else None
        if system.kind == "model" and failure:
            results.findings.append(Finding(FindingKind.STATE_MACHINE, system=task.system, requirement=failed_on,
                                            witness=a["failure"]))
        if system.kind == "mutant":
            results.searches.append({"system": task.system, "machine": a["machine"], "examples": a["examples"],
                                     "seed": task.seed, "found": failure is not None, "requirement": failed_on,
                                     "a_kill": failed_on in system.declares.kills, "shrunk_steps": a["shrunk_steps"]})
        # A model's verdict per requirement; a mutant's search, its catch only (the search list
        # says what it ran): a cell per requirement and mutant would be noise in the report.
        judged_here = next(m for m in core.MACHINES if m.name == a["machine"]).requirements
        for req in judged_here if system.kind != "mutant" else [r for r in judged_here if r == failed_on]:
            failed, judged = failed_on == req, a["exercised"].get(req, 0)
            verdict = core.Verdict(req, core.VIOLATED if failed else (core.PASS if judged else core.NOT_EXERCISED),
                                   judged, (failure,) if failed else (), f"state-machine:{a['machine']}")
            results.add("state-machine", task.system, a["machine"], verdict)


def summarise(results: Results) -> None:
    """A requirement that nothing can judge is a finding."""
    evidence = catalogue.evidence()
    for req in catalogue.load():
        if not evidence.get(req.id):
            results.findings.append(Finding(FindingKind.NO_EVIDENCE, requirement=req.id, witness="no property, proof or state machine"))


def _shown_path(path: Path) -> str:
    """How to name a History in a command a user can paste: relative to here when it can be."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def workers() -> int:
    """The processes the searches run in: one per CPU this process may use."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def verify(out: Path, names: list[str] | None = None, histories: list[Path] | None = None,
           budget: search.Budget = search.DEFAULT, seed: int = 0, tlc_size: str | None = "small",
           full: bool = False, processes: int | None = None) -> Results:
    """Every check into `out`. The state machines' searches run in `processes` worker processes
    (by default one per CPU) while this one runs the Histories, the proofs and TLC; each search is
    derandomised by `seed`, and its results are taken in the order the searches were listed, so
    the results do not depend on which process ran what. `full`: results.json keeps a row per
    History and requirement (by default, the passing and unexercised ones are counted per cell)."""
    load_features()
    names = names or list(systems.systems())
    for name in names:
        systems.get(name)
    paths = histories if histories is not None else embedded_histories() + suites.histories()
    checks = tlc.select(size=tlc_size) if tlc_size else []
    models = [t for t in search.tasks(names, budget, seed) if systems.get(t.system).kind != "mutant"]
    run_as = search.shared(models)  # each search run once, its answers each task's
    distinct = list(dict.fromkeys(run_as.values()))
    mutants = [n for n in names if systems.get(n).kind == "mutant"]
    results = Results()
    out = Path(out)
    total = len(paths) + len(core.PROOFS) + len(distinct) + len(search.tasks(mutants, budget, seed)) + len(checks)
    with outdir.staged(out) as staging, Progress("verify", total) as bar:
        def tick(what: str) -> None:
            bar.now(what)
            bar.done()
        # The pool is made before any thread of this process starts (tqdm's, the pool's own): a
        # forked worker holds no lock another thread had.
        processes = processes or workers()
        with search.pool(processes) as pool:
            queue = search.Queue(pool, processes, bar.done)
            # the models' searches run while the Histories are judged; a mutant's search starts with
            # the machines of what caught it on them (search.machines_of)
            queue.models(distinct)
            run_histories(paths, names, results, staging / "traces", tick)
            mutant_tasks = search.tasks(mutants, budget, seed, results.caught)
            queue.mutants(mutant_tasks)
            check_mutants(results, names)
            run_proofs(results, tick)
            if tlc_size:
                run_tlc(results, tlc_size, tick)
            bar.now("state-machine searches")
            for task in models + mutant_tasks:
                record_searches(results, task, queue.answer(run_as.get(task, task)))
        summarise(results)
        document = results.document(seed=seed, examples=budget.model_examples, mutant_examples=budget.mutant_examples,
                                    systems=names, history_files={p.stem: _shown_path(p) for p in paths},
                                    mutants=catches(results), searches=results.searches, figures=results.figures)
        if not full:
            document["rows"] = summarised(document["rows"])
        io.write_atomic(staging / "results.json", json.dumps(document, indent=1))
        bar.now("writing the report (HTML, JSON, JUnit XML, Markdown)")
        report.write_reports(report.build_report([{**document, "_path": str(out / "results.json")}]), staging)
    bar.say(f"wrote {out}/ ({len(results.rows)} verdicts, {len(results.findings)} findings)")
    return results
