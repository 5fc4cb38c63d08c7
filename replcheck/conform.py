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
from dataclasses import replace
from pathlib import Path
from typing import Callable

from replcheck import catalogue, crosscheck, io, outdir, report, systems
from replcheck.scenarios import REFERENCE, Scenario, conclude, for_history, inconclusive, load_scenarios
from replcheck.features import load_features
from replcheck.harness.runner import Runner, RunnerError, largest_scale, scale_for
from replcheck.harness.groups import in_groups
from replcheck.harness.timescale import own_scale
from replcheck.properties import core
from replcheck.progress import Progress
from replcheck.properties.judge import judge
from replcheck.results import Finding, FindingKind, Results, findings_of
from replcheck.spec import ROOT as SPEC
from replcheck.spec.contract import NOTHING
from replcheck.verify import _shown_path

SOURCE = "conformance"


def column(version: str) -> str:
    """The report's system name: major.minor, so a patch release keeps the gate's column."""
    m = re.match(r"(\d+)\.(\d+)", version)
    return f"MariaDB {m.group(1)}.{m.group(2)}" if m else f"MariaDB {version}"


# -- attempts -------------------------------------------------------------------------------------
# A run on a loaded machine is sampled coarsely and its ops start late: a property then judges
# `inconclusive` where its resolution is too coarse for the comparison it makes, and a scenario's
# precondition (a commit waiting when the master crashed) may not be observed. Such a run is run
# again at a larger time scale, where the same load is a smaller part of every distance, up to
# ATTEMPTS runs in all. Each verdict is one run's own (merge_attempts).
ATTEMPTS = 3
RETRY_FACTOR = 2.0  # each retry's time scale, times the one before (within what the History allows)
# Which attempt's row a requirement keeps: a violation in any (a coarse sample never gives a false
# one: it gives inconclusive), else a pass in any (that run showed what the scenario needs), else
# inconclusive (it is never hidden behind a not_exercised), else not_exercised.
KEEP = {core.VIOLATED: 0, core.PASS: 1, core.INCONCLUSIVE: 2, core.NOT_EXERCISED: 3}


def attempt_scales(scale: float, history: dict, attempts: int) -> list[float]:
    """The time scale of each attempt: the scenario's own first, then RETRY_FACTOR times the one
    before, no larger than the History can run at (runner.largest_scale). A suite scenario's go
    no larger than its own times (a `.result`'s delays do not grow with the scale), and none runs
    again at the scale it ran at (measured at scale 1: such retries resolved no inconclusive verdict)."""
    suite = own_scale(history)
    most = max(scale, min(1.0, largest_scale(history)) if suite else largest_scale(history))
    out = [scale]
    while len(out) < attempts and not (suite and out[-1] >= most):
        out.append(min(most, round(out[-1] * RETRY_FACTOR, 6)))
    return out


def merge_attempts(attempts: list[list[dict]]) -> list[dict]:
    """Per requirement, the row of one attempt (KEEP's order; the first of equals, but the last
    inconclusive, whose run was the slowest): every verdict comes from one run's own trace."""
    chosen: dict[str, dict] = {}
    for rows in attempts:
        for row in rows:
            old = chosen.get(row["requirement"])
            if old is None or KEEP[row["status"]] < KEEP[old["status"]] or row["status"] == old["status"] == core.INCONCLUSIVE:
                chosen[row["requirement"]] = row
    return list(chosen.values())


def _trace_name(name: str, attempt: int) -> str:
    return name if attempt == 1 else f"{name}.attempt-{attempt}"


# -- the suite ------------------------------------------------------------------------------------
def conform(out: Path, *, quick: bool = False, history_files: list[Path] | None = None, basedir: str | None = None,
            tmpdir: str | None = None, scale: float | None = None, attempts: int = ATTEMPTS, jobs: int = 1,
            progress: Callable[[str], None] | None = None, server=None, gate: tuple[str, dict] | None = None) -> dict:
    """Run the scenarios (or the given History files), write the report directory, return the
    results document. `server`: the System that runs them (by default the registry's server of the
    build in `basedir`); `jobs`: scenarios run at once, each on servers of its own (the report is
    a serial run's); `gate`: run for the report's release summary."""
    progress = progress or io.progress("conform")
    load_features()
    if history_files:
        scenarios = [for_history(p) or Scenario(Path(p).stem, Path(p), True, None, ()) for p in history_files]
    else:
        scenarios = [s for s in load_scenarios() if s.quick or not quick]
    if scale is not None:
        scenarios = [replace(s, scale=scale) for s in scenarios]
    # Load and check every History at every scale it may run at: a bad one fails the run before any
    # server starts, and what no real server can run before the build is even looked for.
    loaded = []
    for s in scenarios:
        h = io.load_history(s.history)
        s = s if s.scale is not None else replace(s, scale=scale_for(h))
        scales = attempt_scales(s.scale, h, attempts)
        for x in sorted(set(scales)):
            _refuse_bad(s, lambda: Runner(h, scale=x, name=s.name))
        loaded.append((s, h, scales))
    # The registry's server (named by its build's version), judged against the seeds alone: every
    # violation is a finding, what its flavour model declares is shown beside it as predicted.
    server = server or replace(systems.server_at(basedir), declares=NOTHING, tmpdir=tmpdir, progress=progress)
    for s, h, scales in loaded:
        for x in sorted(set(scales)):
            _refuse_bad(s, lambda: replace(server, scale=x).check(h, s.name))
    results = Results()
    tried: list[dict] = []  # every attempt of every scenario, for the report
    out = Path(out)
    version = ""
    with outdir.staged(out) as staging, Progress("conform", len(loaded), "scenario") as bar:
        def scenario(item: tuple[Scenario, dict, list[float]]) -> tuple[list[dict], list[Finding], list[dict]]:
            rows, findings, records = _scenario(server, *item, staging, bar, progress)
            bar.done()
            return rows, findings, records
        for rows, findings, records in in_groups(scenario, loaded, jobs):
            results.rows += rows
            results.findings += findings
            tried += records
            for record in records:
                version = record.pop("server_version")
        for record in tried:
            record["kept"] = sorted(r["requirement"] for r in results.rows
                                    if r["history"] == record["history"] and r["attempt"] == record["attempt"])
        document = results.document(server="mariadb", server_version=version, systems=[column(version)] if version else [],
                                    history_files={s.name: _shown_path(s.history) for s, _, _ in loaded},
                                    figures={}, attempts=tried)
        io.write_atomic(staging / "results.json", json.dumps(document, indent=1))
        report.write_reports(report.build_report([{**document, "_path": str(out / "results.json")}],
                                                 title=f"replcheck conformance: MariaDB {version}"), staging, gate)
    retried = sum(1 for r in tried if r["attempt"] > 1)
    progress(f"wrote {out}/ ({len(results.rows)} verdicts, {len(results.findings)} findings"
             + (f", {retried} runs again at a larger time scale)" if retried else ")"))
    return document


def _scenario(server, s: Scenario, h: dict, scales: list[float], staging: Path, bar: Progress,
              progress: Callable[[str], None]) -> tuple[list[dict], list[Finding], list[dict]]:
    """A scenario's attempts (until none is inconclusive): the rows kept, their findings, each attempt's record."""
    runs: list[Results] = []
    records: list[dict] = []
    for n, x in enumerate(scales, 1):
        bar.now(f"{s.name} (time scale {x:g}" + (f", attempt {n} of at most {len(scales)})" if n > 1 else ")"))
        run, record = _attempt(replace(server, scale=x), replace(s, scale=x), h, n, staging)
        runs.append(run)
        records.append(record)
        merged = merge_attempts([r.rows for r in runs])
        if not any(row["status"] == core.INCONCLUSIVE for row in merged):
            break
        progress(f"{s.name}: inconclusive at time scale {x:g}: "
                 + ", ".join(sorted(row["requirement"] for row in merged if row["status"] == core.INCONCLUSIVE)))
    # A finding about a requirement is the attempt's whose row it kept; the cross-check's are
    # the last attempt's (an earlier one's differences may be its coarse timing: its record lists them).
    kept = {(row["requirement"], row["attempt"]) for row in merged}
    findings = [f for n, run in enumerate(runs, 1) for f in run.findings
                if (f.requirement, n) in kept or (n == len(runs) and f.kind is FindingKind.CROSS_CHECK)]
    return merged, findings, records


def _refuse_bad(s: Scenario, check: Callable[[], object]) -> None:
    """A History the server cannot run is the input's: one line naming its file (exit 2)."""
    try:
        check()
    except RunnerError as e:
        raise io.InputError(s.history, None, "", str(e)) from None


def _attempt(mariadb, s: Scenario, h: dict, n: int, staging: Path) -> tuple[Results, dict]:
    """One run of a scenario at `s.scale`: its rows (each with its attempt, trace and the command
    that reproduces it at that scale) and findings, and the attempt's record."""
    reference = systems.get(REFERENCE)
    seeds = catalogue.by_id()
    results = Results()
    h = {**h, "header": {**h["header"], "name": s.name}}
    real = judge(mariadb, h)
    ran = mariadb.as_run(h, real.trace)  # what ran: the reference model runs the very same History
    model = judge(reference, ran)
    version = real.trace.header["server_version"]
    trace = f"traces/mariadb/{_trace_name(s.name, n)}.jsonl"
    io.write_atomic(staging / trace, io.dumps_lines(*real.trace))
    io.write_atomic(staging / "histories" / f"{_trace_name(s.name, n)}.jsonl", io.dumps_history(ran))
    shown = _shown_path(s.history)
    predicted = reference.declares.expected_violations
    verdicts, unmet = conclude(s, real)
    # a suite scenario's .result gives the History's expectations
    results.add_judgement(SOURCE, s.name, real, system=column(version), verdicts=verdicts, history=h, predicted=predicted)
    reproduce = f"replcheck conform --server mariadb --history {shlex.quote(shown)} --scale {s.scale:g}"
    for row in results.rows:
        row.update(server_version=version, attempt=n, trace=trace, reproduce=reproduce)
    server = f"MariaDB {version}"

    def where(v: core.Verdict) -> str:
        return f"{v.witnesses[0].message} [{trace}:{list(v.witnesses[0].lines)}]"

    for v in real.expectations:  # the server does not show what the suite's .result records
        if v.status == core.VIOLATED:
            results.findings.append(Finding(FindingKind.EXPECTATION, system=server, history=s.name,
                                            requirement=v.requirement, witness=where(v)))
    results.findings += inconclusive(s, verdicts, server, trace)

    def against_seed(v: core.Verdict) -> dict:
        req = seeds.get(v.requirement)
        # the seed's sentence the server departs from, so each finding is stated against it
        return {"predicted": predicted.get(v.requirement, ""), "seed": f"{req.seed} ({req.section}): {req.text}" if req else "",
                "witness": f"{where(v)}; the reference model: {'violated' if model.violated(v.requirement) else 'holds'}"}
    results.findings += findings_of(real, FindingKind.SERVER_DIFFERS, s.name, server, against_seed)
    differences = []
    for d in crosscheck.compare(crosscheck.facts(*real.trace), crosscheck.facts(*model.trace)):
        if not d.expected:
            differences.append(f"{d.aspect} on {d.node}, {d.subject}: MariaDB {d.left}; {REFERENCE} {d.right}"
                               + (f" (+{d.knock_on} later)" if d.knock_on else ""))
            results.findings.append(Finding(FindingKind.CROSS_CHECK, system=server, history=s.name,
                                            requirement=f"crosscheck:{d.aspect}", witness=differences[-1]))
    results.findings[:] = [replace(f, server_version=version, attempt=n) for f in results.findings]
    header = real.trace.header
    record = {"history": s.name, "attempt": n, "time_scale": s.scale, "trace": trace, "reproduce": reproduce,
              "server_version": version, "resolution_us": header.get("resolution_us", 0),
              "slipped_us": header["slipped"][-1][1] if header.get("slipped") else 0,
              "inconclusive": sorted(r["requirement"] for r in results.rows if r["status"] == core.INCONCLUSIVE),
              "violated": sorted(r["requirement"] for r in results.rows if r["status"] == core.VIOLATED),
              "unmet": [u.message for u in unmet], "crosscheck": differences}
    return results, record


__all__ = ["conform", "load_scenarios", "Scenario", "RunnerError", "column", "attempt_scales", "merge_attempts"]
