"""The models gate derived from the declarations: it passes on verdicts that match what every
system declares, and fails when a mutant stops being killed or a model gains a violation."""
from __future__ import annotations

import pytest

from replcheck import report, systems, tlc
from replcheck.io import InputError
from replcheck.spec import ROOT



def _row(system: str, requirement: str, status: str, expected: str = "") -> dict:
    row = {"source": "history", "system": system, "history": "h", "requirement": requirement, "status": status,
           "checked": 1, "witnesses": [{"message": "seen", "lines": [2]}] if status == "violated" else []}
    return {**row, "expected": expected} if expected else row


def _results(change=None, survivors=()) -> dict:
    """Verdicts exactly as every system declares them, every mutant caught but `survivors`;
    `change(rows)` edits the verdicts."""
    rows, caught = [], {}
    for name, s in systems.systems().items():
        rows.append(_row(name, "WL344.WAIT.RULE", "pass"))
        if s.kind == "mutant":
            rows.append(_row(name, s.declares.kills[0], "violated"))
            caught[name] = [] if name in survivors else [["h", s.declares.kills[0]]]
        for r in s.declares.expected_violations:
            rows.append(_row(name, r, "violated", "violated"))
    mapping = tlc.manifest().requirements
    for c in tlc.select(size="small"):  # TLC's verdicts as the manifest pins them
        state = {"check": c.name, "module": c.module, "config": c.config, "distinct_states": c.distinct, "depth": c.depth}
        system = f"mutant:{c.mutants[0]}" if c.mutants else c.config.removesuffix(".cfg")
        req = mapping[c.violated or next(p for p in c.properties() if p in mapping)]
        row = _row(system, req, "violated", "violated") if c.violated else _row(system, req, "pass")
        rows.append({**row, "source": "tlc", "history": c.name, "tlc": state})
    if change:
        change(rows)
    return {"schema": "replcheck.results/1", "rows": rows, "findings": [], "mutants": caught}


def _differences(results: dict, exceptions=()) -> list[str]:
    return report.derived_differences(report.build_report([results]), list(exceptions))


def test_verdicts_that_match_the_declarations_pass():
    assert _differences(_results()) == []


def test_a_mutant_that_stops_being_killed_fails_the_gate():
    def survive(rows):
        for r in rows:
            if r["system"] == "mutant:stop-event" and r["status"] == "violated":
                r.update(status="pass", witnesses=[])
    [diff] = _differences(_results(survive, survivors=["mutant:stop-event"]))
    assert diff.startswith("mutant:stop-event") and "survives" in diff and "GGID.NO_STOP_EVENT" in diff


def test_the_gate_reads_the_catches_not_the_cells():
    """A mutant whose kill is violated on a History but caught nowhere (its base model violates it
    there too) survives: the cells alone, the gate's rule before, would have let it pass."""
    [diff] = _differences(_results(survivors=["mutant:stop-event"]))
    assert diff == ("mutant:stop-event (hierarchical-replication design: Stop_log_event under --rpl-hierarchical) survives: "
                    "none of GGID.NO_STOP_EVENT "
                    "is violated on a History where model:groupid holds it")


def test_a_model_gaining_an_undeclared_violation_fails_the_gate():
    diffs = _differences(_results(lambda rows: rows.append(_row("model:wl7318", "WL7318.F2", "violated"))))
    assert diffs == ["WL7318.F2 on history:model:wl7318: violated, and model:wl7318 does not declare it (seen)"]


def test_a_declared_violation_no_history_shows_fails_the_gate():
    def hold(rows):
        for r in rows:
            if r["system"] == "model:wl344" and r["requirement"] == "WL344.CHAIN.IMMEDIATE":
                r.update(status="pass", witnesses=[], expected="")
    [diff] = _differences(_results(hold))
    assert "WL344.CHAIN.IMMEDIATE on history:model:wl344: declared violated" in diff


@pytest.mark.parametrize("requirement,fails", [
    ("WL3464.ROTATE", True),  # MariaDB's own departure from the seed: its Histories must show it
    ("WL344.CHAIN.IMMEDIATE", False),  # inherited from model:wl344, which shows it
])
def test_a_flavour_model_must_show_what_it_adds_to_its_seed(requirement, fails):
    def hold(rows):
        for r in rows:
            if r["system"] == "model:mariadb-10.11" and r["requirement"] == requirement:
                r.update(status="pass", witnesses=[], expected="")
    diffs = _differences(_results(hold))
    assert diffs == ([f"{requirement} on history:model:mariadb-10.11: declared violated "
                      f"({systems.get('model:mariadb-10.11').declares.expected_violations[requirement]}), "
                      "but no History shows it"] if fails else [])


def test_a_partial_run_and_gated_findings_fail_and_an_exception_excuses():
    partial = _results(lambda rows: rows.__setitem__(slice(None), [r for r in rows if r["system"] != "model:groupid"]))
    assert any(d.startswith("model:groupid: no verdicts") for d in _differences(partial))
    results = _results()
    results["findings"] = [{"kind": "proof inconclusive", "system": "z3", "requirement": "WL7169.N_DISTINCT",
                            "witness": "ack_counting: z3 reached its resource limit"}]
    assert _differences(results) == ["proof inconclusive: z3 WL7169.N_DISTINCT: ack_counting: z3 reached its resource limit"]
    assert _differences(results, [{"system": "z3", "requirement": "WL7169.N_DISTINCT", "reason": "r"}]) == []


def test_tlc_results_other_than_the_manifest_pins_fail_the_gate():
    def drop(rows):
        rows[:] = [r for r in rows if r.get("history") != "incident-ignored"]
    assert _differences(_results(drop)) == ["tlc:incident-ignored: no verdicts from TLC (run verify with TLC)"]
    results = _results()
    results["findings"] = [{"kind": "tlc manifest", "system": "tlc:incident", "requirement": "WL3464.R3.1",
                            "witness": "Incident Incident_small.cfg: expected holds, TLC says violated (WL3464_R3_1)"}]
    assert _differences(results) == ["tlc manifest: tlc:incident WL3464.R3.1: Incident Incident_small.cfg: "
                                     "expected holds, TLC says violated (WL3464_R3_1)"]


def test_the_committed_models_gate_is_derived_and_short(tmp_path):
    text = (ROOT.parent / "ci" / "models.toml").read_text()
    gate = report.load_gate(ROOT.parent / "ci" / "models.toml")
    assert gate["gate"]["derive"] == "declarations" and len(text.splitlines()) < 60
    bad = tmp_path / "g.toml"
    bad.write_text('[gate]\nderive = "declarations"\n[[exception]]\nsystem = "model:wl344"\n')
    with pytest.raises(InputError, match="exception\\[0\\]"):
        report.load_gate(bad)


# -- expectations (EXPECT <file>:<line>): apart from the catalogue, in the same results and gates --
def _expectation(system: str, status: str, reason: str = "") -> dict:
    row = _row(system, "EXPECT s.jsonl:3", status, "violated" if reason else "")
    return {**row, "text": "SHOW SLAVE STATUS on B at 3 s: SQL_Delay = 5", **({"reason": reason} if reason else {})}


@pytest.mark.parametrize("status,reason,differs", [
    ("pass", "", False), ("violated", "", True), ("violated", "a documented flavour difference", False),
    ("pass", "a documented flavour difference", True),
])
def test_the_derived_gate_counts_expectations(status, reason, differs):
    diffs = _differences(_results(lambda rows: rows.append(_expectation("model:wl344", status, reason))))
    assert bool(diffs) == differs and all(d.startswith("EXPECT s.jsonl:3 on history:model:wl344") for d in diffs)


def test_expectations_reach_every_output_and_the_pinned_gate(tmp_path):
    results = _results(lambda rows: rows.append(_expectation("model:wl344", "violated")))
    doc = report.build_report([results])
    [x] = doc["expectations"]
    assert (x["id"], x["text"], x["verdicts"]["history:model:wl344"]["status"]) == (
        "EXPECT s.jsonl:3", "SHOW SLAVE STATUS on B at 3 s: SQL_Delay = 5", "violated")
    assert doc["summary"]["expectations"] == 1 and doc["summary"]["expectations_violated"] == 1
    [w] = x["verdicts"]["history:model:wl344"]["witnesses"]  # reproduced by what the system showed there
    assert w["reproduce"] == "replcheck simulate h.jsonl --system model:wl344 | grep -F '\"expect\": \"s.jsonl:3\"'"
    assert 'name="EXPECT s.jsonl:3"><failure' in report.junit(doc)
    assert "| EXPECT s.jsonl:3 | history:model:wl344 | violated | seen |" in report.markdown(doc)
    from replcheck.html import render_html
    assert 'id="EXPECT s.jsonl:3"' in render_html(doc) and "rc-expectations" in render_html(doc)
    gate = tmp_path / "g.toml"
    gate.write_text(report.gate_snapshot(doc, "g", "d"))
    assert '"EXPECT s.jsonl:3" = "violated"' in gate.read_text()
    assert report.gate_differences(report.load_gate(gate), doc) == []
    fixed = report.build_report([_results(lambda rows: rows.append(_expectation("model:wl344", "pass")))])
    assert report.gate_differences(report.load_gate(gate), fixed) == [
        "EXPECT s.jsonl:3 on history:model:wl344: pinned violated, now pass"]
