"""The release summary (replcheck/release.py) on hand-made report documents: per kind of evidence,
new against known violations and why, findings once per (requirement, scenario), the gate's verdict."""
from __future__ import annotations

import re

import pytest

from replcheck import cli, io, release
from replcheck.html import render_html

SERVER = "conformance:MariaDB 10.11"


def cell(status: str, expected: str | None = None, history: str = "scn") -> dict:
    ws = [{"message": "m", "history": history, "lines": [1], "reproduce": "r"}] if status == "violated" else []
    return {"status": status, "expected": expected, "counts": {status: 1}, "witnesses": ws}


def doc(verdicts: dict[str, dict], findings: list | None = None) -> dict:
    reqs = [{"id": rid, "feature": "delay", "text": "t", "verdicts": v} for rid, v in verdicts.items()]
    sources = sorted({s for v in verdicts.values() for s in v})
    return {"requirements": reqs, "sources": sources, "findings": findings or []}


def gate(pins: dict, why: dict | None = None) -> tuple[str, dict]:
    return "g.toml", {"verdicts": {SERVER: pins}, **({"why": {SERVER: why}} if why else {})}


def test_a_violation_is_new_unless_declared_or_pinned_and_each_known_one_says_why():
    d = doc({"WL344.WAIT.RULE": {SERVER: cell("violated")},            # neither: new
             "FILTER.SEMISYNC.UNSENT": {SERVER: cell("violated", "violated")},  # the reference model declares it
             "SBM.VALUE": {SERVER: cell("violated")},                   # pinned, with the gate's reason
             "SBM.NULL": {SERVER: cell("pass")}})
    s = release.summary(d, gate({"SBM.VALUE": "violated", "WL344.WAIT.RULE": "pass", "FILTER.SEMISYNC.UNSENT": "violated",
                                 "SBM.NULL": "pass"}, {"SBM.VALUE": "a deliberate late clock reply"}))
    by = {v["requirement"]: v for v in s["violations"]}
    assert not by["WL344.WAIT.RULE"]["known"] and by["SBM.VALUE"]["known"] and by["FILTER.SEMISYNC.UNSENT"]["known"]
    assert "MDEV-38486" in by["FILTER.SEMISYNC.UNSENT"]["why"] and by["SBM.VALUE"]["why"] == "a deliberate late clock reply"
    assert s["kinds"]["server"] | {"label": "", "sources": []} == {"label": "", "sources": [], "passed": 1, "violated_new": 1,
                                                                   "violated_known": 2, "inconclusive": 0, "not_exercised": 0}
    assert (s["new"], s["known"]) == (1, 2)
    assert s["gate"]["passed"] is False and any("WL344.WAIT.RULE" in x for x in s["gate"]["differences"])


def test_a_gate_that_holds_passes_and_no_gate_is_said_so():
    d = doc({"SBM.NULL": {SERVER: cell("pass")}, "SBM.VALUE": {SERVER: cell("inconclusive")}})
    s = release.summary(d, gate({"SBM.NULL": "pass"}))
    assert s["kinds"]["server"]["inconclusive"] == 1 and s["gate"] == {"name": "g.toml", "passed": False,
                                                                       "differences": s["gate"]["differences"]}
    assert release.summary(doc({"SBM.NULL": {SERVER: cell("pass")}}), gate({"SBM.NULL": "pass"}))["gate"]["passed"] is True
    page = render_html(doc({"SBM.NULL": {SERVER: cell("pass")}}))
    assert "Gate: not run" in page and 'id="rc-release"' in page


def test_findings_count_once_per_requirement_and_scenario():
    f = [{"kind": "MariaDB differs from the seed", "requirement": "A", "history": "s1"},
         {"kind": "MariaDB differs from the seed", "requirement": "A", "history": "s1"},  # a second attempt's
         {"kind": "MariaDB differs from the seed", "requirement": "A", "history": "s2"},
         {"kind": "scenario inconclusive", "requirement": "B", "history": "s1"}]
    got = release.summary(doc({"A": {SERVER: cell("pass")}}, f))["findings"]
    assert (got["distinct"], got["inconclusive_scenarios"], got["reports"]) == (2, 1, 4)


def test_a_model_s_declared_violation_is_known_with_its_declaration():
    d = doc({"WL344.CHAIN.IMMEDIATE": {"history:model:wl344": cell("violated", "violated")},
             "WL344.WAIT.RULE": {"history:mutant:stop-applies-waited-event": cell("violated", "violated")}})
    s = release.summary(d)
    assert [v["requirement"] for v in s["violations"]] == ["WL344.CHAIN.IMMEDIATE"]  # a mutant is evidence about the checks
    assert "BUG#52308" in s["violations"][0]["why"] and s["kinds"]["model"]["violated_known"] == 1


def test_a_bad_reason_in_a_gate_is_bad_input_naming_the_field(tmp_path, capsys):
    with pytest.raises(io.InputError, match=r"why\.conformance:MariaDB 10\.11\.SBM\.VALUE"):
        release.reasons({"why": {SERVER: {"SBM.VALUE": 3}}}, "g.toml")
    g = tmp_path / "g.toml"
    g.write_text('[verdicts."conformance:MariaDB 10.11"]\n"SBM.VALUE" = "violated"\n[why."conformance:MariaDB 10.11"]\n"SBM.VALUE" = 3\n')
    results = tmp_path / "r.json"
    results.write_text('{"schema": "replcheck.results/1", "rows": []}')
    assert cli.main(["report", str(results), "--gate", str(g), "--out", str(tmp_path / "out")]) == 2
    assert "g.toml: why." in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # refused before any work


def test_gate_write_keeps_the_reasons_the_gate_gave(tmp_path):
    import shutil
    from pathlib import Path

    g = tmp_path / "mariadb.toml"
    shutil.copy(Path(__file__).resolve().parents[2] / "ci" / "mariadb.toml", g)
    with g.open("a") as f:  # a pinned violation no system declares, with its reason
        f.write('\n[why."conformance:MariaDB 10.11"]\n"WL6355.FAILOVER.NO_LOSS" = "AFTER_COMMIT is the default"\n')
    before = release.reasons(io.parse_toml(g.read_text(), g), g)
    assert before
    results = Path(__file__).parent / "results" / "conform-mariadb-10.11.json"
    assert cli.main(["gate", str(g), str(results), "--write"]) == 0
    assert release.reasons(io.parse_toml(g.read_text(), g), g) == before
    assert cli.main(["gate", str(g), str(results)]) == 0  # and the pins still load and hold


def test_the_tiles_count_each_requirement_once_as_the_release_section_classifies_it():
    d = doc({"WL344.WAIT.RULE": {SERVER: cell("violated"), "history:model:wl344": cell("pass")},       # new on the server
             "FILTER.SEMISYNC.UNSENT": {SERVER: cell("violated", "violated"), "history:model:wl344": cell("violated", "violated")},
             "SBM.VALUE": {SERVER: cell("inconclusive"), "history:model:wl344": cell("pass")},
             "SBM.NULL": {"history:model:wl344": cell("pass")},
             "WL344.CHAIN.IMMEDIATE": {"history:mutant:stop-applies-waited-event": cell("violated", "violated")}})
    s = release.summary(d)
    assert s["all"] == {"passed": 1, "violated_new": 1, "violated_known": 1, "inconclusive": 1, "not_exercised": 1}
    assert s["requirements"] == 5 and (s["new"], s["known"]) == (1, 2)  # violations: one per (requirement, source)
    summary = {"requirements": 5, "violated": 2, "inconclusive": 1, "expected_violations": 2, "findings": 0, "sources": 3}
    tiles = dict(re.findall(r'data-tile="(\w+)"><b>(\d+)</b>', render_html({**d, "release": s, "summary": summary})))
    # the document's own summary counts verdicts per source: none of its tiles tells that story again
    assert tiles == {"requirements": "5", "passed": "1", "violated_new": "1", "violated_known": "1", "inconclusive": "1",
                     "not_exercised": "1", "findings": "0", "sources": "3"}
