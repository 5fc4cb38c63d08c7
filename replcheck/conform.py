"""`replcheck conform --server mariadb`: the conformance suite on a real server.

Each scenario of spec/conformance.toml is a History run on private MariaDB servers by the
harness (replcheck.harness.runner) at the scenario's time scale. Its Trace is judged by the same
properties as the models' traces, giving per-requirement verdicts for the source
`conformance:MariaDB <major.minor>` (the exact version is in every row and finding). The
reference model (model:wl344, MariaDB's semantics) runs the very History that ran, and the two
traces are cross-checked: verdicts, commit outcomes, statement errors, how often each
transaction ended up on each node, and when it became visible (with a timing tolerance). Every
difference is a finding with its evidence; none is smoothed over.
"""
from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from replcheck import io, report, systems
from replcheck.features import load_features
from replcheck.harness.runner import Runner, RunnerError
from replcheck.properties import core
from replcheck.spec import ROOT as SPEC
from replcheck.verify import Results, _replace_dir, _shown_path

SOURCE = "conformance"
REFERENCE = "model:wl344"
# MariaDB's SQL thread sleeps MASTER_DELAY in whole seconds from the instant it read the event
# (sql_delay_event), not until the due second: up to 1 s later than a model that wakes exactly
# at the due time. Differences of visibility times within this plus the resolution are timing.
TIMING_TOLERANCE_US = 1_000_000


@dataclass(frozen=True)
class Scenario:
    name: str
    history: Path
    quick: bool
    scale: float
    exercises: tuple[str, ...]
    description: str = ""


def load_scenarios(path: Path | None = None) -> list[Scenario]:
    path = Path(path or SPEC.joinpath("conformance.toml"))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise io.InputError(path, None, "", f"cannot read: {e}") from None
    out = []
    for i, s in enumerate(data.get("scenario", [])):
        where = f"scenario[{i}]"
        for key in ("name", "history", "exercises"):
            if key not in s:
                raise io.InputError(path, None, where, f"missing {key}")
        scale = s.get("scale", 0.1)
        if not isinstance(scale, (int, float)) or not 0 < scale <= 10:
            raise io.InputError(path, None, f"{where}.scale", f"{scale!r} is not a number in (0, 10]")
        out.append(Scenario(s["name"], SPEC.joinpath("histories", s["history"]), bool(s.get("quick", False)), float(scale),
                            tuple(s["exercises"]), s.get("description", "")))
    return out


def column(version: str) -> str:
    """The report's system name: major.minor, so a patch release keeps the gate's column."""
    m = re.match(r"(\d+)\.(\d+)", version)
    return f"MariaDB {m.group(1)}.{m.group(2)}" if m else f"MariaDB {version}"


# -- cross-check --------------------------------------------------------------------------------
def _by(obs: list[dict], kind: str) -> list[dict]:
    return [o for o in obs if o["kind"] == kind]


def cross_check(history: str, real: tuple[dict, list[dict]], model: tuple[dict, list[dict]],
                tolerance_us: int) -> list[dict]:
    """Differences between the real server's trace and the reference model's on one History."""
    (rh, ro), (_, mo) = real, model
    version = rh.get("server_version", "")
    out = []

    def finding(what: str, witness: str, requirement: str = "") -> None:
        out.append({"kind": "cross-check", "system": f"MariaDB {version}", "history": history, "requirement": requirement,
                    "witness": f"{what}: {witness}", "server_version": version})

    mc = {c["trx"]: c for c in _by(mo, "commit")}
    for c in _by(ro, "commit"):
        m = mc.get(c["trx"])
        if m is not None and (c.get("errno") is None) != (m.get("errno") is None):
            finding("commit outcome", f"{c['trx']} on {c['node']}: MariaDB errno {c.get('errno')} "
                    f"({c.get('message', '')!r}), model errno {m.get('errno')}")
    ms = {}
    for s in _by(mo, "stmt"):
        ms.setdefault((s["node"], s["op"]), []).append(s)
    seen: dict[tuple[str, str], int] = {}
    for s in _by(ro, "stmt"):
        i = seen[(s["node"], s["op"])] = seen.get((s["node"], s["op"]), -1) + 1
        m = (ms.get((s["node"], s["op"])) or [None] * (i + 1))[i] if i < len(ms.get((s["node"], s["op"]), [])) else None
        if m is not None and (s.get("errno"), s.get("warning")) != (m.get("errno"), m.get("warning")):
            finding("statement result", f"{s['op']} #{i + 1} on {s['node']} {_detail(s)}: MariaDB errno {s.get('errno')} "
                    f"warning {s.get('warning')} ({s.get('message', '')!r}), model errno {m.get('errno')} "
                    f"warning {m.get('warning')} ({m.get('message', '')!r})")
    model_vis: dict[tuple[str, str], int] = {}
    for v in _by(mo, "visible"):
        model_vis.setdefault((v["node"], v["trx"]), v["t"])
    for d in _by(ro, "data"):
        for trx, n in sorted(d["counts"].items()):
            want = 1 if (d["node"], trx) in model_vis else 0
            if n != want:
                finding("data", f"{trx} is on {d['node']} {n} time(s), the model has it {want} time(s)")
    real_vis = {(v["node"], v["trx"]): v["t"] for v in reversed(_by(ro, "visible"))}
    for key, t in sorted(real_vis.items()):
        m = model_vis.get(key)
        if m is not None and abs(t - m) > tolerance_us:
            finding("timing", f"{key[1]} became visible on {key[0]} at {t} µs, the model at {m} µs "
                    f"(tolerance {tolerance_us} µs)")
    return out


def _detail(s: dict) -> str:
    for key in ("delay_sql", "delay", "variable", "thread"):
        if s.get(key) is not None:
            return f"({key} {s[key]})"
    return ""


# -- the suite ------------------------------------------------------------------------------------
def conform(out: Path, *, quick: bool = False, history_files: list[Path] | None = None, basedir: str | None = None,
            tmpdir: str | None = None, scale: float | None = None,
            progress: Callable[[str], None] | None = None) -> dict:
    """Run the scenarios (or the given History files), write the report directory, return the results document."""
    progress = progress or (lambda msg: print(f"[conform] {msg}", file=sys.stderr, flush=True))
    load_features()
    if history_files:
        scenarios = [Scenario(Path(p).stem, Path(p), True, scale or 0.1, ()) for p in history_files]
    else:
        scenarios = [s for s in load_scenarios() if s.quick or not quick]
        if scale is not None:
            scenarios = [Scenario(s.name, s.history, s.quick, scale, s.exercises, s.description) for s in scenarios]
    # Load and check every History first: a bad one fails the run before any server starts.
    loaded = []
    for s in scenarios:
        h = io.load_history(s.history)
        Runner(h, scale=s.scale, name=s.name)  # RunnerError for an op a real server cannot do
        loaded.append((s, h))
    results = Results()
    out = Path(out)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent if out.parent.exists() else None))
    version = ""
    try:
        for i, (s, h) in enumerate(loaded, 1):
            progress(f"scenario {i}/{len(loaded)}: {s.name} (time scale {s.scale:g})")
            runner = Runner(h, scale=s.scale, basedir=basedir, tmpdir=tmpdir, name=s.name, progress=progress)
            header, obs = runner.run()
            version = header["server_version"]
            ran = runner.history
            io.write_atomic(staging / "traces" / "mariadb" / f"{s.name}.jsonl", io.dumps_lines(header, obs))
            io.write_atomic(staging / "histories" / f"{s.name}.jsonl", io.dumps_history(ran))
            view = core.TraceView(header, obs)
            verdicts = core.run_properties(view)
            try:
                mh, mobs = systems.get(REFERENCE).run(ran)
            except Exception as e:  # the reference failing is itself a finding, not a crash of the suite
                mh, mobs = None, []
                results.findings.append({"kind": "reference model failed", "system": REFERENCE, "history": s.name,
                                         "requirement": "", "witness": f"{type(e).__name__}: {e}"})
            model_verdicts = {v.requirement: v for v in core.run_properties(core.TraceView(mh, mobs))} if mh else {}
            shown = _shown_path(s.history)
            predicted = systems.get(REFERENCE).declares.expected_violations
            for v in verdicts:
                results.add(SOURCE, column(version), s.name, v,
                            "violated" if v.status == core.VIOLATED and v.requirement in predicted else "")
                results.rows[-1].update(server_version=version,
                                        reproduce=f"replcheck conform --server mariadb --history {shown}")
                if v.status == core.VIOLATED:
                    mv = model_verdicts.get(v.requirement)
                    results.findings.append({
                        "kind": "MariaDB differs from the seed", "system": f"MariaDB {version}", "history": s.name,
                        "requirement": v.requirement, "server_version": version,
                        "predicted": predicted.get(v.requirement, ""),
                        "witness": f"{v.witnesses[0].message} [traces/mariadb/{s.name}.jsonl:{list(v.witnesses[0].lines)}]"
                                   + (f"; the reference model: {mv.status}" if mv else "")})
            if mh:
                tol = TIMING_TOLERANCE_US + header["resolution_us"]
                results.findings.extend(cross_check(s.name, (header, obs), (mh, mobs), tol))
        document = {"schema": "replcheck.results/1", "server": "mariadb", "server_version": version,
                    "systems": [column(version)] if version else [],
                    "history_files": {s.name: _shown_path(s.history) for s, _ in loaded},
                    "findings": results.findings, "figures": {}, "rows": results.rows}
        io.write_atomic(staging / "results.json", json.dumps(document, indent=1))
        report.write_reports(report.build_report([{**document, "_path": str(out / "results.json")}],
                                                 title=f"replcheck conformance: MariaDB {version}"), staging)
        _replace_dir(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    progress(f"wrote {out}/ ({len(results.rows)} verdicts, {len(results.findings)} findings)")
    return document


__all__ = ["conform", "cross_check", "load_scenarios", "Scenario", "RunnerError", "column"]
