"""`replcheck verify`: every check replcheck has, on its embedded defaults, into a report directory.

Sources of evidence: each embedded History run on each system and judged by the properties;
the z3 proofs; the Hypothesis state machine of each feature against each model system. A
finding is anything that differs from what the spec says to expect: a model violating a
requirement it is not declared to violate, a mutant that no check kills, a proof with another
outcome than its claim, a requirement with no evidence at all.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from replcheck import catalogue, io, report, systems
from replcheck.features import load_features
from replcheck.properties import core
from replcheck.spec import ROOT as SPEC


@dataclass
class Results:
    rows: list[dict] = field(default_factory=list)  # one per (source, system, history, requirement)
    findings: list[dict] = field(default_factory=list)
    figures: dict[str, list] = field(default_factory=lambda: {"delay": [], "semisync": []})

    def add(self, source: str, system: str, history: str, verdict: core.Verdict, expected: str = "") -> None:
        row = {"source": source, "system": system, "history": history, **verdict.as_dict()}
        if expected:
            row["expected"] = expected
        self.rows.append(row)


def embedded_histories() -> list[Path]:
    return sorted(Path(str(p)) for p in SPEC.joinpath("histories").iterdir() if p.name.endswith(".jsonl"))


def run_histories(paths: list[Path], names: list[str], results: Results, traces: Path | None,
                  progress: Callable[[str], None]) -> None:
    for i, path in enumerate(paths, 1):
        history = io.load_history(path)
        progress(f"histories {i}/{len(paths)}: {path.stem}")
        for name in names:
            system = systems.get(name)
            header, obs = system.run(history)
            if traces is not None:
                io.write_atomic(traces / name.replace(":", "-") / f"{path.stem}.jsonl", io.dumps_lines(header, obs))
            view = core.TraceView(header, obs)
            if system.kind == "model":
                collect_figures(results.figures, path.stem, name, view)
            for verdict in core.run_properties(view):
                expected = system.declares.expected_violations.get(verdict.requirement, "")
                results.add("history", name, path.stem, verdict, "violated" if expected else "")
                if verdict.status == core.VIOLATED and system.kind == "model" and not expected:
                    results.findings.append({"kind": "model violates its seed", "system": name, "history": path.stem,
                                             "requirement": verdict.requirement, "witness": verdict.witnesses[0].message})


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
        if system.kind != "mutant":
            continue
        killed = [r for r in results.rows if r["system"] == name and r["requirement"] in system.declares.kills
                  and r["status"] == core.VIOLATED]
        if not killed:
            results.findings.append({"kind": "mutant survived", "system": name, "bug": system.declares.bug,
                                     "requirement": ", ".join(system.declares.kills),
                                     "witness": "no history made any of its killing requirements fail"})


def run_proofs(results: Results, progress: Callable[[str], None]) -> None:
    for proof in core.PROOFS:
        progress(f"z3: {proof.name}")
        r = proof.run()
        for verdict in r.verdicts():
            expected = "violated" if r.expected == core.COUNTEREXAMPLE else "pass"
            results.add("z3", "z3", r.name, verdict, expected)
        if r.outcome != r.expected:
            results.findings.append({"kind": "proof outcome", "system": "z3", "requirement": ", ".join(r.requirements),
                                     "witness": f"{r.name}: expected {r.expected}, got {r.outcome}: {r.detail}"})


def run_machines(results: Results, names: list[str], examples: int, seed: int, progress: Callable[[str], None]) -> None:
    from hypothesis import HealthCheck, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis.stateful import run_state_machine_as_test

    from replcheck.properties.machines.base import machine_for

    for name in names:
        system = systems.get(name)
        if system.kind != "model":
            continue
        for m in core.MACHINES:
            progress(f"state machine {m.name}: {name}, {examples} examples")
            machine = hypothesis_seed(seed)(machine_for(m.cls, system))
            try:
                # From the registered default, not the current profile: a caller's profile must
                # not change verify's results (the gate pins them).
                run_state_machine_as_test(machine, settings=settings(
                    settings.get_profile("default"), max_examples=examples, stateful_step_count=20, deadline=None,
                    database=None, suppress_health_check=list(HealthCheck), print_blob=False))
                failure = None
            except AssertionError as e:
                failure = core.Witness(str(e).splitlines()[0])
                results.findings.append({"kind": "state machine", "system": name, "requirement": failure.message.split(":")[0],
                                         "witness": failure.message})
            for req in m.requirements:
                failed = failure is not None and failure.message.startswith(req + ":")
                judged = machine.exercised[req]
                verdict = core.Verdict(req, core.VIOLATED if failed else (core.PASS if judged else core.NOT_EXERCISED),
                                       judged, (failure,) if failed else (), f"state-machine:{m.name}")
                results.add("state-machine", name, m.name, verdict)


def summarise(results: Results) -> None:
    """A requirement that nothing can judge is a finding."""
    evidence = catalogue.evidence()
    for req in catalogue.load():
        if not evidence.get(req.id):
            results.findings.append({"kind": "no evidence", "requirement": req.id, "witness": "no property, proof or state machine"})


def _shown_path(path: Path) -> str:
    """How to name a History in a command a user can paste: relative to here when it can be."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def verify(out: Path, names: list[str] | None = None, histories: list[Path] | None = None, examples: int = 60,
           seed: int = 0, progress: Callable[[str], None] | None = None) -> Results:
    progress = progress or (lambda msg: print(f"[verify] {msg}", file=sys.stderr, flush=True))
    load_features()
    names = names or list(systems.systems())
    for name in names:
        systems.get(name)
    paths = histories if histories is not None else embedded_histories()
    results = Results()
    out = Path(out)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent if out.parent.exists() else None))
    try:
        run_histories(paths, names, results, staging / "traces", progress)
        check_mutants(results, names)
        run_proofs(results, progress)
        run_machines(results, names, examples, seed, progress)
        summarise(results)
        document = {"schema": "replcheck.results/1", "seed": seed, "examples": examples, "systems": names,
                    "history_files": {p.stem: _shown_path(p) for p in paths}, "findings": results.findings,
                    "figures": results.figures, "rows": results.rows}
        io.write_atomic(staging / "results.json", json.dumps(document, indent=1))
        progress("writing the report (HTML, JSON, JUnit XML, Markdown)")
        report.write_reports(report.build_report([{**document, "_path": str(out / "results.json")}]), staging)
        _replace_dir(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    progress(f"wrote {out}/ ({len(results.rows)} verdicts, {len(results.findings)} findings)")
    return results


def _replace_dir(new: Path, target: Path) -> None:
    """Swap the finished report in, so an interrupted run never leaves a half-written one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
        os.replace(target, old / "report")
    shutil.move(str(new), str(target))
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
