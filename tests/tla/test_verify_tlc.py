"""TLC as a source of `replcheck verify`: a verdict per requirement per manifest check, with the
state counts; what the manifest pins violated is expected; a result other than the pin is a
finding the models gate fails on; the report shows TLC's counts and counterexample steps."""
from __future__ import annotations

import os
import shutil

import pytest
from jsonschema import Draft202012Validator

from replcheck import io, report, tlc, verify
from replcheck.html import render_html
from replcheck.results import FindingKind

from conftest import tlc_once

pytestmark = [pytest.mark.tlc, pytest.mark.skipif(not (shutil.which("java") or os.environ.get("JAVA_HOME")),
                                                  reason="TLC needs Java (ci/setup installs it)")]


def _incident_results(monkeypatch) -> verify.Results:
    """run_tlc on the Incident module's small checks only (the others run in test_tlc_run)."""
    every = tlc.select
    monkeypatch.setattr(tlc, "select", lambda **kw: [c for c in every(**kw) if c.module == "Incident"])
    results = verify.Results()
    verify.run_tlc(results, "small", lambda _: None)
    return results


@pytest.fixture(scope="module")
def incident() -> verify.Results:
    with pytest.MonkeyPatch.context() as monkeypatch, tlc_once():  # the checks test_tlc_run runs
        return _incident_results(monkeypatch)


def _document(results: verify.Results) -> dict:
    doc = results.document()
    io.validate_document("results", doc, "results.json")
    return doc


def test_verify_gives_a_tlc_row_per_requirement_and_check(incident):
    results = incident
    assert results.findings == []
    rows = {(r["history"], r["requirement"]): r for r in results.rows}
    holds = rows[("incident", "WL3464.GAP")]
    assert (holds["source"], holds["system"], holds["status"]) == ("tlc", "Incident_small", "pass")
    assert holds["tlc"] == {"check": "incident", "module": "Incident", "config": "Incident_small.cfg",
                            "distinct_states": 2985, "depth": 22}
    caught = rows[("incident-ignored", "WL3464.R3.1")]
    assert (caught["system"], caught["status"], caught["expected"]) == ("mutant:incident-ignored", "violated", "violated")
    assert caught["witnesses"][0]["steps"][0].startswith("1. Initial predicate: ")
    assert [s.split(":")[0] for s in caught["witnesses"][0]["steps"][1:]] == ["2. Lose", "3. WriteIncident", "4. Apply"]
    # TLC stopped at the first violation: the mutant's other properties were not judged
    assert rows[("incident-ignored", "WL3464.GAP")]["status"] == "not_exercised"
    _document(results)


def test_a_result_the_manifest_does_not_pin_is_a_finding_and_fails_the_gate(tla_copy, monkeypatch):
    f = tla_copy / "Incident.tla"
    f.write_text(f.read_text().replace('ELSE IF skip > 0 \\/ "incident-ignored" \\in MUTANTS', "ELSE IF TRUE", 1))
    results = _incident_results(monkeypatch)
    [finding] = [x for x in results.findings if x.system == "tlc:incident"]
    assert finding.kind is FindingKind.TLC_MANIFEST and finding.requirement == "WL3464.R3.1"
    assert "expected holds, TLC says violated (WL3464_R3_1)" in finding.witness
    rep = report.build_report([_document(results)])
    cell = next(r for r in rep["requirements"] if r["id"] == "WL3464.R3.1")["verdicts"]["tlc:Incident_small"]
    assert cell["status"] == "violated" and cell["expected"] is None  # an unexpected violation, not a pinned one
    assert rep["summary"]["violated"] >= 1
    assert any(d.startswith("tlc manifest: tlc:incident WL3464.R3.1:") for d in report.derived_differences(rep, []))


def test_a_spec_tlc_cannot_parse_is_a_finding_not_a_verdict(tla_copy, monkeypatch):
    f = tla_copy / "Incident.tla"
    f.write_text(f.read_text().replace("SkipAndStart(n) ==", "SkipAndStart(n) == == ", 1))
    results = _incident_results(monkeypatch)
    assert results.rows == []
    # the six small Incident checks (Incident_small's four, Incident_idle's two)
    assert {x.kind for x in results.findings} == {FindingKind.TLC_FAILED} and len(results.findings) == 6


def test_the_report_shows_tlc_counts_and_a_counterexample(incident):
    rep = report.build_report([_document(incident)])
    Draft202012Validator(io.schema("report")).validate(rep)
    assert rep["counts"]["evidence"]["tlc"] == 4  # Incident_small judges its 4 requirements; mutants count for none
    assert "TLC 4" in report.headline(rep)
    gap = next(r for r in rep["requirements"] if r["id"] == "WL3464.GAP")["verdicts"]
    assert gap["tlc:Incident_small"]["tlc"] == [{"check": "incident", "distinct_states": 2985, "depth": 22}]
    [w] = gap["tlc:mutant:no-incident"]["witnesses"]
    assert w["reproduce"] == "replcheck tlc --spec Incident --config Incident_small --mutant no-incident"
    page = render_html(rep)
    assert "incident: 2,985 distinct states, depth 22" in page
    assert '<ol class="steps"><li>Initial predicate: ' in page and "<li>Lose: " in page
