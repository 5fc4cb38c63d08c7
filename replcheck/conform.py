"""`replcheck conform --server mariadb`: the conformance suite on a real server.

Each scenario of spec/conformance.toml is a History run on private MariaDB servers by the
harness (replcheck.harness.runner) at the scenario's time scale. Its Trace is judged by the same
properties as the models' traces, giving per-requirement verdicts for the source
`conformance:MariaDB <major.minor>` (the exact version is in every row and finding). The
reference model (model:mariadb-10.11, the MariaDB flavour model) runs the very History that ran, and the two
traces are cross-checked by replcheck.crosscheck, the comparison campaigns use between models,
with the server's sampling resolution as its time tolerance and the written rules of
spec/crosscheck.toml. Every unexplained difference is a finding with its evidence. A run that
did not show the scenario's preconditions leaves the requirements it exercises `inconclusive`
(replcheck.scenarios), never `pass`.
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Callable

from replcheck import catalogue, crosscheck, io, report, systems
from replcheck.scenarios import REFERENCE, Scenario, conclude, for_history, inconclusive, load_scenarios
from replcheck.features import load_features
from replcheck.harness.runner import RunnerError, scale_for
from replcheck.harness.system import MariaDB
from replcheck.properties import core
from replcheck.properties.judge import judge
from replcheck.spec import ROOT as SPEC
from replcheck.verify import Results, _shown_path, add_expectations

SOURCE = "conformance"


def column(version: str) -> str:
    """The report's system name: major.minor, so a patch release keeps the gate's column."""
    m = re.match(r"(\d+)\.(\d+)", version)
    return f"MariaDB {m.group(1)}.{m.group(2)}" if m else f"MariaDB {version}"


# -- the suite ------------------------------------------------------------------------------------
def conform(out: Path, *, quick: bool = False, history_files: list[Path] | None = None, basedir: str | None = None,
            tmpdir: str | None = None, scale: float | None = None,
            progress: Callable[[str], None] | None = None) -> dict:
    """Run the scenarios (or the given History files), write the report directory, return the results document."""
    progress = progress or io.progress("conform")
    load_features()
    if history_files:
        scenarios = [for_history(p) or Scenario(Path(p).stem, Path(p), True, None, ()) for p in history_files]
    else:
        scenarios = [s for s in load_scenarios() if s.quick or not quick]
    if scale is not None:
        scenarios = [replace(s, scale=scale) for s in scenarios]
    server = MariaDB(basedir=basedir, tmpdir=tmpdir, progress=progress)
    reference = systems.get(REFERENCE)
    seeds = catalogue.by_id()
    # Load and check every History first: a bad one fails the run before any server starts.
    loaded = []
    for s in scenarios:
        h = io.load_history(s.history)
        s = s if s.scale is not None else replace(s, scale=scale_for(h))
        try:
            replace(server, scale=s.scale).check(h, s.name)
        except RunnerError as e:
            raise io.InputError(s.history, None, "", str(e)) from None
        loaded.append((s, h))
    results = Results()
    out = Path(out)
    staging = io.staging_dir(out)
    version = ""
    try:
        for i, (s, h) in enumerate(loaded, 1):
            progress(f"scenario {i}/{len(loaded)}: {s.name} (time scale {s.scale:g})")
            mariadb = replace(server, scale=s.scale)
            h = {**h, "header": {**h["header"], "name": s.name}}
            real = judge(mariadb, h)
            ran = mariadb.as_run(h, real.trace)  # what ran: the reference model runs the very same History
            model = judge(reference, ran)
            version = real.trace.header["server_version"]
            io.write_atomic(staging / "traces" / "mariadb" / f"{s.name}.jsonl", io.dumps_lines(*real.trace))
            io.write_atomic(staging / "histories" / f"{s.name}.jsonl", io.dumps_history(ran))
            shown = _shown_path(s.history)
            predicted = reference.declares.expected_violations
            verdicts, _ = conclude(s, real)
            trace = f"traces/mariadb/{s.name}.jsonl"
            first = len(results.rows)
            for v in verdicts:
                results.add(SOURCE, column(version), s.name, v,
                            "violated" if v.status == core.VIOLATED and v.requirement in predicted else "")
            add_expectations(results, column(version), s.name, h, real, source=SOURCE)  # a suite scenario's .result
            for row in results.rows[first:]:
                row.update(server_version=version,
                           reproduce=f"replcheck conform --server mariadb --history {shlex.quote(shown)} --scale {s.scale:g}")
            for v in real.expectations:  # the server does not show what the suite's .result records
                if v.status == core.VIOLATED:
                    results.findings.append({
                        "kind": "expectation", "system": f"MariaDB {version}", "history": s.name,
                        "requirement": v.requirement, "server_version": version,
                        "witness": f"{v.witnesses[0].message} [{trace}:{list(v.witnesses[0].lines)}]"})
            for f in inconclusive(s, verdicts, f"MariaDB {version}", trace):
                results.findings.append({**f, "server_version": version})
            for v in real.findings:
                req = seeds.get(v.requirement)
                results.findings.append({
                    "kind": "MariaDB differs from the seed", "system": f"MariaDB {version}", "history": s.name,
                    "requirement": v.requirement, "server_version": version, "predicted": predicted.get(v.requirement, ""),
                    # the seed's sentence the server departs from, so each finding is stated against it
                    "seed": f"{req.seed} ({req.section}): {req.text}" if req else "",
                    "witness": f"{v.witnesses[0].message} [{trace}:{list(v.witnesses[0].lines)}]"
                               f"; the reference model: {'violated' if model.violated(v.requirement) else 'holds'}"})
            for d in crosscheck.compare(crosscheck.facts(*real.trace), crosscheck.facts(*model.trace)):
                if not d.expected:
                    results.findings.append({
                        "kind": "cross-check", "system": f"MariaDB {version}", "history": s.name,
                        "requirement": f"crosscheck:{d.aspect}", "server_version": version,
                        "witness": f"{d.aspect} on {d.node}, {d.subject}: MariaDB {d.left}; {REFERENCE} {d.right}"
                                   + (f" (+{d.knock_on} later)" if d.knock_on else "")})
        document = {"schema": "replcheck.results/1", "server": "mariadb", "server_version": version,
                    "systems": [column(version)] if version else [],
                    "history_files": {s.name: _shown_path(s.history) for s, _ in loaded},
                    "findings": results.findings, "figures": {}, "rows": results.rows}
        io.write_atomic(staging / "results.json", json.dumps(document, indent=1))
        report.write_reports(report.build_report([{**document, "_path": str(out / "results.json")}],
                                                 title=f"replcheck conformance: MariaDB {version}"), staging)
        io.replace_dir(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    progress(f"wrote {out}/ ({len(results.rows)} verdicts, {len(results.findings)} findings)")
    return document


__all__ = ["conform", "load_scenarios", "Scenario", "RunnerError", "column"]
