"""Attempts: a conformance run with an inconclusive verdict runs again at a larger time
scale, and each verdict is one run's own. No server and no clock: the reference model stands in
for MariaDB's harness, and what load does to a run (a precondition not observed, a coarse
sample, a violation) is injected per time scale."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

import pytest

from replcheck import conform, io, report, systems
from replcheck.harness.runner import scaled_history
from replcheck.harness.system import MariaDB
from replcheck.properties.core import INCONCLUSIVE, NOT_EXERCISED, PASS, VIOLATED
from replcheck.spec.contract import Trace
from replcheck.scenarios import REFERENCE
from replcheck.spec import ROOT as SPEC

PHANTOM = "mdb-phantom-after-sync"  # scale 0.2; requires A crashed with a commit waiting, and B promoted
EXERCISED = ("WL6355.FAILOVER.NO_LOSS", "MARIADB.GTID.SLAVE_POS", "WL1720.ACK.LAST_EVENT")


@dataclass
class Loaded(MariaDB):
    """The harness's System with the reference model's trace of the scaled History as the server's
    (a polled trace's header), and `load(scale, trace)` doing to it what load did at that scale."""
    load: Callable[[float, Trace], None] = lambda scale, trace: None

    def run(self, history: dict) -> Trace:
        trace = Trace(*systems.get(REFERENCE).run(scaled_history(history, self.scale)))
        trace.header.update(system="mariadb:10.11.99", server_version="10.11.99-MariaDB", resolution_us=40_000,
                            time_scale=self.scale, unobserved=[])
        self.load(self.scale, trace)
        return trace


def _unpromoted(trace: Trace) -> None:
    """A run whose failover was not seen (a slow machine): the scenario's precondition is unmet."""
    trace.observations[:] = [o for o in trace.observations if o["kind"] != "promoted"]


def _applied_twice(trace: Trace) -> None:
    """B shows t0's row twice: GGID.RECOVERY.EXACTLY_ONCE violated, whatever the timing."""
    for o in trace.observations:
        if o["kind"] == "data" and o["node"] == "B":
            o["counts"]["t0"] = 2


def _conform(tmp_path, load, **kw) -> dict:
    return conform.conform(tmp_path / "out", history_files=[SPEC.joinpath("histories", f"{PHANTOM}.jsonl")],
                           server=Loaded(load=load), progress=lambda _: None, **kw)


def _rows(doc: dict) -> dict[str, dict]:
    return {r["requirement"]: r for r in doc["rows"]}


def test_a_run_whose_precondition_was_not_observed_runs_again_at_twice_the_scale(tmp_path):
    doc = _conform(tmp_path, lambda scale, trace: _unpromoted(trace) if scale == 0.2 else None)
    assert [(a["attempt"], a["time_scale"]) for a in doc["attempts"]] == [(1, 0.2), (2, 0.4)]
    first, second = doc["attempts"]
    assert sorted(first["inconclusive"]) == sorted(EXERCISED) and "promoted" in first["unmet"][0]
    assert second["inconclusive"] == [] and second["unmet"] == []
    rows = _rows(doc)
    for req in EXERCISED:  # from the second run, which showed what the scenario needs, at the scale that ran
        assert rows[req]["status"] == PASS and rows[req]["attempt"] == 2
        assert rows[req]["reproduce"].endswith("--scale 0.4")
        assert rows[req]["trace"] == f"traces/mariadb/{PHANTOM}.attempt-2.jsonl"
    # a requirement the first run judged keeps that run's verdict
    assert rows["DURABLE.GTID.NO_REUSE"]["attempt"] == 1 and rows["DURABLE.GTID.NO_REUSE"]["reproduce"].endswith("--scale 0.2")
    assert len(doc["rows"]) == len({r["requirement"] for r in doc["rows"]})  # one verdict per requirement
    assert not [f for f in doc["findings"] if f["kind"] == "scenario inconclusive"]
    assert sorted(second["kept"]) == sorted(EXERCISED) and len(first["kept"]) == len(doc["rows"]) - len(EXERCISED)
    out = tmp_path / "out"
    for name in (PHANTOM, f"{PHANTOM}.attempt-2"):  # every run's trace and History are kept
        assert (out / "traces" / "mariadb" / f"{name}.jsonl").exists() and (out / "histories" / f"{name}.jsonl").exists()
    rep = json.loads((out / "report.json").read_text())
    assert [a["time_scale"] for a in rep["attempts"]] == [0.2, 0.4]
    io.validate_document("results", json.loads((out / "results.json").read_text()), out / "results.json")
    io.validate_document("report", rep, out / "report.json")
    with pytest.raises(io.InputError, match="attempts"):  # the schema holds every record to its fields
        io.validate_document("results", {**doc, "attempts": [{**first, "attempt": 0}]}, out / "results.json")
    assert f"{PHANTOM}: attempt 1 at time scale 0.2" in (out / "summary.md").read_text()
    assert "Conformance attempts" in (out / "report.html").read_text()
    assert report.pinned_differences({"verdicts": {"conformance:MariaDB 10.11": {r: PASS for r in EXERCISED}}},
                                     report.build_report([doc])) == [
        f"{r} on conformance:MariaDB 10.11: not pinned, now {s['status']}" for r, s in sorted(rows.items())
        if r not in EXERCISED]


def test_a_run_inconclusive_at_every_scale_stays_inconclusive(tmp_path):
    doc = _conform(tmp_path, lambda scale, trace: _unpromoted(trace))
    assert [a["time_scale"] for a in doc["attempts"]] == [0.2, 0.4, 0.8]
    rows = _rows(doc)
    assert all(rows[r]["status"] == INCONCLUSIVE and rows[r]["attempt"] == 3 for r in EXERCISED)
    found = [f for f in doc["findings"] if f["kind"] == "scenario inconclusive"]
    assert sorted(f["requirement"] for f in found) == sorted(EXERCISED) and {f["attempt"] for f in found} == {3}
    [diff] = report.pinned_differences({"verdicts": {"conformance:MariaDB 10.11": {"WL6355.FAILOVER.NO_LOSS": PASS}}},
                                       report.build_report([doc]))[:1]
    assert "now inconclusive: a scenario's run did not test it after 3 attempts (time scales 0.2, 0.4, 0.8)" in diff
    one = _conform(tmp_path, lambda scale, trace: _unpromoted(trace), attempts=1)
    assert [a["time_scale"] for a in one["attempts"]] == [0.2]


def test_a_violation_in_any_attempt_stands(tmp_path):
    """A coarse sample gives inconclusive, never a false violation: a violation is real, and a
    later run that did not show it takes nothing away."""
    def load(scale, trace):
        if scale == 0.2:
            _unpromoted(trace)
            _applied_twice(trace)
    doc = _conform(tmp_path, load)
    rows = _rows(doc)
    assert len(doc["attempts"]) == 2
    assert rows["GGID.RECOVERY.EXACTLY_ONCE"]["status"] == VIOLATED and rows["GGID.RECOVERY.EXACTLY_ONCE"]["attempt"] == 1
    [f] = [f for f in doc["findings"] if f["requirement"] == "GGID.RECOVERY.EXACTLY_ONCE"]
    assert f["attempt"] == 1 and f"traces/mariadb/{PHANTOM}.jsonl" in f["witness"]
    assert all(rows[r]["status"] == PASS for r in EXERCISED)
    # a violation on the second run, after a pass on the first, stands as well
    doc = _conform(tmp_path, lambda scale, trace: _unpromoted(trace) if scale == 0.2 else _applied_twice(trace))
    assert _rows(doc)["GGID.RECOVERY.EXACTLY_ONCE"]["status"] == VIOLATED and _rows(doc)["GGID.RECOVERY.EXACTLY_ONCE"]["attempt"] == 2


def test_a_conclusive_first_run_is_the_only_one(tmp_path):
    doc = _conform(tmp_path, lambda scale, trace: None)
    assert [a["attempt"] for a in doc["attempts"]] == [1]
    assert all(r["attempt"] == 1 and r["reproduce"].endswith("--scale 0.2") for r in doc["rows"])
    assert not (tmp_path / "out" / "traces" / "mariadb" / f"{PHANTOM}.attempt-2.jsonl").exists()


@pytest.mark.parametrize("rows, kept", [
    ([[PASS], [INCONCLUSIVE]], (PASS, 1)),  # a later run's coarser sample takes nothing away
    ([[INCONCLUSIVE], [PASS]], (PASS, 2)),
    ([[INCONCLUSIVE], [VIOLATED]], (VIOLATED, 2)),
    ([[VIOLATED], [PASS]], (VIOLATED, 1)),
    ([[PASS], [VIOLATED]], (VIOLATED, 2)),
    ([[INCONCLUSIVE], [INCONCLUSIVE]], (INCONCLUSIVE, 2)),  # the slowest run's reasons
    ([[INCONCLUSIVE], [NOT_EXERCISED]], (INCONCLUSIVE, 1)),  # never hidden behind a not_exercised
    ([[NOT_EXERCISED], [PASS]], (PASS, 2)),
])
def test_each_requirement_keeps_one_attempt_s_row(rows, kept):
    attempts = [[{"requirement": "R", "status": st, "attempt": n} for st in statuses] for n, statuses in enumerate(rows, 1)]
    [row] = conform.merge_attempts(attempts)
    assert (row["status"], row["attempt"]) == kept


def _latency(us: int) -> dict:
    return {"header": {"topology": {"nodes": [{"id": "A"}, {"id": "B"}],
                                    "channels": [{"source": "A", "replica": "B", "latency_us": us}]}}, "ops": []}


@pytest.mark.parametrize("scale, latency, scales", [
    (0.2, 0, [0.2, 0.4, 0.8]),
    (1.0, 0, [1.0, 2.0, 4.0]),  # past real time: a retry may run slower than the History's own time
    (4.0, 0, [4.0, 8.0, 10.0]),  # the runner's limit
    (0.1, 50_000, [0.1, 0.2, 0.2]),  # 50 ms of latency is loopback's only up to 0.2: the same scale again
])
def test_each_retry_doubles_the_scale_within_what_the_history_allows(scale, latency, scales):
    assert conform.attempt_scales(scale, _latency(latency), 3) == pytest.approx(scales)


def test_every_quick_scenario_runs_at_each_of_its_attempts_scales():
    for s in conform.load_scenarios():
        h = io.load_history(s.history)
        for x in conform.attempt_scales(s.scale or conform.scale_for(h), h, conform.ATTEMPTS):
            MariaDB(scale=x).check(h, s.name)  # nothing a real server cannot do at that scale
