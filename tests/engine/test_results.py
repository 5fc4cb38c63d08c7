"""The one results module: typed findings whose kind says whether the gate fails on it, findings
that survive results.json unchanged, a misspelt kind that cannot exist, and the models gate
reading `caught` (a mutant killed only where its base model holds), not the verdict cells."""
from __future__ import annotations

import json

import pytest

from replcheck import io, report, systems, verify
from replcheck.cli import main
from replcheck.properties import core
from replcheck.results import BadFinding, Finding, FindingKind, Results, catches
from test_accounting import HISTORY, MUTANT, buggy_base
from test_gate import _differences, _results
from conftest import REPO

# One finding of each kind with the fields its producer gives it, as results files held them.
AS_WRITTEN = [
    {"kind": "model violates its seed", "system": "model:wl344", "history": "d1", "requirement": "WL344.WAIT.RULE", "witness": "w"},
    {"kind": "state machine", "system": "model:wl344", "requirement": "WL344.WAIT.RULE", "witness": "w"},
    {"kind": "mutant survived", "system": MUTANT, "bug": "b", "requirement": "WL344.STOP.NO_EXEC", "witness": "w"},
    {"kind": "proof outcome", "system": "z3", "requirement": "WL7169.N_DISTINCT", "witness": "w"},
    {"kind": "proof inconclusive", "system": "z3", "requirement": "WL7169.N_DISTINCT", "witness": "w"},
    {"kind": "no evidence", "requirement": "WL344.WAIT.RULE", "witness": "w"},
    {"kind": "scenario inconclusive", "system": "MariaDB 10.11.6", "history": "d1", "requirement": "WL344.CM.SET",
     "server_version": "10.11.6", "witness": "w", "attempt": 2},
    {"kind": "tlc manifest", "system": "tlc:incident", "requirement": "WL3464.R3.1", "witness": "w"},
    {"kind": "tlc failed", "system": "tlc:incident", "requirement": "", "witness": "w"},
    {"kind": "MariaDB differs from the seed", "system": "MariaDB 10.11.6", "history": "d1", "requirement": "WL344.CM.SET",
     "server_version": "10.11.6", "predicted": "", "seed": "WL#344 (HLS): text", "witness": "w", "attempt": 1},
    {"kind": "expectation", "system": "MariaDB 10.11.6", "history": "d1", "requirement": "EXPECT s.jsonl:3",
     "server_version": "10.11.6", "witness": "w", "attempt": 1},
    {"kind": "cross-check", "system": "MariaDB 10.11.6", "history": "d1", "requirement": "crosscheck:apply",
     "server_version": "10.11.6", "witness": "w", "attempt": 1},
    {"kind": "unexpected cross-check difference", "system": "model:wl344 vs model:wl7318", "requirement": "crosscheck:apply",
     "histories": 3, "first_index": 7, "witness": "w", "reproduce": "replcheck explain 0 7"},
    {"kind": "mutant found", "system": MUTANT, "requirement": "WL344.STOP.NO_EXEC", "histories": 1, "first_index": 0,
     "witness": "w", "reproduce": "replcheck replay 0 0"},
]


def test_every_kind_is_written_as_before():
    assert {d["kind"] for d in AS_WRITTEN} == {k.value for k in FindingKind}
    for d in AS_WRITTEN:
        assert Finding.from_dict(d).as_dict() == d


@pytest.mark.parametrize("make", [
    lambda: Finding("mutant survivd", witness="w"),
    lambda: Finding.from_dict({"kind": "mutant survivd", "witness": "w"}),
    lambda: FindingKind.of("mutant survivd"),
])
def test_a_misspelt_kind_cannot_exist(make):
    with pytest.raises(BadFinding, match="unknown finding kind 'mutant survivd'") as e:
        make()
    assert e.value.field == "kind"


@pytest.mark.parametrize("bad,field", [
    ({"kind": "no evidence", "witness": "w", "requirment": "R"}, "requirment"),
    ({"kind": "no evidence"}, "witness"),
    ({"kind": "mutant found", "witness": "w", "histories": "3"}, "histories"),
])
def test_a_finding_with_a_wrong_field_cannot_exist(bad, field):
    with pytest.raises(BadFinding) as e:
        Finding.from_dict(bad)
    assert e.value.field == field


@pytest.mark.parametrize("kind", list(FindingKind), ids=lambda k: k.value)
def test_the_derived_gate_fails_on_a_gated_kind_only(kind):
    results = _results()
    results["findings"] = [Finding(kind, system="z3", requirement="R", witness="w").as_dict()]
    assert _differences(results) == ([f"{kind.value}: z3 R: w"] if kind.gated else [])


def test_findings_round_trip_through_results_json(tmp_path):
    results = Results(findings=[Finding.from_dict(d) for d in AS_WRITTEN])
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results.document(seed=0), indent=1))
    [loaded] = report.load_results([path])
    assert [Finding.from_dict(f) for f in loaded["findings"]] == results.findings
    assert report.build_report([loaded])["findings"] == AS_WRITTEN


@pytest.mark.parametrize("finding,where", [
    ({"kind": "mutant survivd", "witness": "w"}, "findings[1].kind: unknown finding kind 'mutant survivd'"),
    ({"kind": "no evidence", "witness": "w", "requirment": "R"}, "findings[1].requirment: unknown field"),
])
def test_a_bad_finding_in_a_results_file_is_bad_input(tmp_path, capsys, finding, where):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"schema": "replcheck.results/1", "rows": [], "findings": [AS_WRITTEN[0], finding]}))
    out = tmp_path / "report"
    assert main(["report", str(path), "--out", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("replcheck: error: ") and f"{path}: {where}" in lines[0]
    assert not out.exists()


def test_the_gate_uses_caught_where_the_cells_show_the_kill(monkeypatch):
    """verify on a History where the mutant violates its kill and its base model does too: the
    cells show the kill violated (the gate's rule before passed it), `caught` records no catch,
    and the gate says the mutant survives. With the real base, the same run catches it."""
    def gate_on(base) -> list[str]:
        real = systems.get
        monkeypatch.setattr(systems, "get", lambda name, *a: base if name == base.name else real(name, *a))
        monkeypatch.setattr(io, "load_history", lambda path: HISTORY)
        results = Results()
        verify.run_histories([REPO / "corpus" / "h.jsonl"], [MUTANT], results, None, lambda _: None)
        monkeypatch.undo()
        kill = next(r for r in results.rows if r["requirement"] == "WL344.STOP.NO_EXEC")
        assert kill["status"] == "violated"  # what the cells show, either way
        doc = report.build_report([results.document(mutants=catches(results))])
        return [d for d in report.derived_differences(doc, []) if d.startswith(MUTANT)]

    assert gate_on(systems.get(systems.get(MUTANT).declares.base)) == []
    [survives] = gate_on(buggy_base())
    assert "survives" in survives and "where model:wl344 holds it" in survives


@pytest.mark.parametrize("expected,outcome,unexpected", [
    (core.PROVED, core.COUNTEREXAMPLE, 1),  # a proof that should hold and does not: an unexpected violation
    (core.COUNTEREXAMPLE, core.COUNTEREXAMPLE, 0),  # the seed's promise shown not to hold, as claimed
    (core.COUNTEREXAMPLE, core.PROVED, 0),
])
def test_a_row_is_expected_only_where_a_predicted_violation_shows(monkeypatch, expected, outcome, unexpected):
    """A proof's row was `expected: pass` where it should hold, which the report read as an
    expected violation; a row says `expected` only where it is violated as predicted."""
    monkeypatch.setattr(core, "PROOFS", [core.Proof("p", ("WL344.WAIT.RULE",), "c", expected, lambda: (outcome, {}))])
    results = Results()
    verify.run_proofs(results, lambda _: None)
    [row] = results.rows
    assert row.get("expected") == ("violated" if outcome == expected == core.COUNTEREXAMPLE else None)
    assert report.build_report([results.document()])["summary"]["violated"] == unexpected


def test_summarised_rows_give_the_report_the_same_cells():
    """results.json sized for CI: a violated row kept whole, passing and unexercised rows counted
    per cell; the report reads the same statuses, counts and witnesses from either."""
    from replcheck.results import SUMMARISED, summarised

    results = Results()
    paths = [REPO / "corpus" / "bug-56442-stop-applies-waited-event.jsonl", REPO / "spec" / "histories" / "d1-stop-start-ddl.jsonl"]
    verify.run_histories(paths, ["model:wl344", MUTANT], results, None, lambda _: None)
    rows = summarised([dict(r) for r in results.rows])
    violated = [r for r in results.rows if r["status"] == core.VIOLATED]
    assert violated and all(r in rows for r in violated)  # whole, witnesses and History
    assert len(rows) < len(results.rows) and all(r["history"] == SUMMARISED for r in rows if r not in violated
                                                  and "text" not in r)

    def cells(rs):
        doc = report.build_report([{"schema": "replcheck.results/1", "rows": rs, "history_files": {}}])
        return {(q["id"], s): (v["status"], v["counts"], v["witnesses"]) for q in doc["requirements"]
                for s, v in q["verdicts"].items()}
    assert cells(rows) == cells(results.rows)
