"""Reports, gates and the pytest plugin: what a release manager reads and what CI enforces."""
from __future__ import annotations

import copy
import json
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from jsonschema import Draft202012Validator

from replcheck import io, report
from replcheck.cli import main
from replcheck.model.mutants import REGISTRY
from conftest import HANG_GUARD_S, REPO, proofs_once

ROOT = REPO
HISTORIES = ROOT / "spec" / "histories"


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """A small verify run: two histories, a model and the mutant they kill."""
    d = tmp_path_factory.mktemp("verify")
    hist = d / "hist"
    hist.mkdir()
    for name in ("d1-stop-start-ddl", "inc-rpl-incident"):
        shutil.copy(HISTORIES / f"{name}.jsonl", hist)
    with proofs_once():
        assert main(["verify", "--out", str(d / "out"), "--histories", str(hist), "--examples", "3",
                     "--systems", "model:wl7318,mutant:stop-applies-waited-event", "--no-tlc"]) == 0
    return d / "out" / "results.json"


def test_verify_writes_every_report_format(results):
    out = results.parent
    doc = json.loads((out / "report.json").read_text())
    Draft202012Validator(io.schema("report")).validate(doc)
    assert doc["schema"] == "replcheck.report/1" and doc["summary"]["requirements"] == len(doc["requirements"]) >= 70
    html = (out / "report.html").read_text()
    assert all(f'id="{r["id"]}"' in html for r in doc["requirements"])
    assert "unexpected violations" in (out / "summary.md").read_text()
    suites = ET.parse(out / "junit.xml").getroot()
    cases = suites.findall(".//testcase")
    assert len(cases) == sum(len(r["verdicts"]) for r in doc["requirements"])
    # The mutant's violation of what it is meant to violate is expected: no JUnit failure for it.
    assert not suites.findall(".//failure")
    killed = next(r for r in doc["requirements"] if r["id"] == "WL344.STOP.NO_EXEC")["verdicts"]["history:mutant:stop-applies-waited-event"]
    assert killed["status"] == "violated" and killed["expected"] == "violated"
    assert "replcheck simulate" in killed["witnesses"][0]["reproduce"] and "d1-stop-start-ddl" in killed["witnesses"][0]["reproduce"]


def test_unexpected_violation_fails_junit_and_counts(results):
    data = json.loads(results.read_text())
    row = next(r for r in data["rows"] if r["system"] == "model:wl7318" and r["requirement"] == "WL344.WAIT.EXEMPT"
               and r["status"] == "pass")
    row.update(status="violated", witnesses=[{"message": "B waited before ROTATE_EVENT <&>", "lines": [9]}])
    doc = report.build_report([data])
    assert doc["summary"]["violated"] == 1
    failure = ET.fromstring(report.junit(doc)).find(".//failure")
    assert failure is not None and "B waited before ROTATE_EVENT <&>" in failure.text
    assert "WL344.WAIT.EXEMPT" in report.markdown(doc)


def test_gate_fails_on_a_changed_verdict_and_passes_when_restored(results, tmp_path, capsys):
    gate = tmp_path / "models.toml"
    assert main(["gate", str(gate), str(results), "--write"]) == 0
    assert main(["gate", str(gate), str(results)]) == 0
    data = json.loads(results.read_text())
    changed = copy.deepcopy(data)
    row = next(r for r in changed["rows"] if r["system"] == "model:wl7318" and r["requirement"] == "WL3464.R3.1")
    row.update(status="violated", witnesses=[{"message": "B did not stop at incident 1", "lines": [40]}])
    bad = tmp_path / "changed.json"
    bad.write_text(json.dumps(changed))
    capsys.readouterr()
    assert main(["gate", str(gate), str(bad)]) == 1
    out = capsys.readouterr().out
    assert "WL3464.R3.1 on history:model:wl7318: pinned pass, now violated (B did not stop at incident 1)" in out
    bad.write_text(json.dumps(data))
    assert main(["gate", str(gate), str(bad)]) == 0


def test_gate_sees_an_unexpected_pass_of_a_known_divergence(results, tmp_path, capsys):
    gate = tmp_path / "g.toml"
    main(["gate", str(gate), str(results), "--write"])
    data = json.loads(results.read_text())
    for r in data["rows"]:
        if r["system"] == "mutant:stop-applies-waited-event" and r["requirement"] == "WL344.STOP.NO_EXEC":
            r.update(status="pass", witnesses=[])
    fixed = tmp_path / "fixed.json"
    fixed.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["gate", str(gate), str(fixed)]) == 1
    assert "WL344.STOP.NO_EXEC on history:mutant:stop-applies-waited-event: pinned violated, now pass" in capsys.readouterr().out


def test_a_gate_may_pin_either_of_two_verdicts_and_nothing_else(results, tmp_path, capsys):
    """A real server that races with itself: either verdict passes, a third fails the gate."""
    gate = tmp_path / "g.toml"
    gate.write_text('[verdicts."history:model:wl7318"]\n"WL3464.R3.1" = ["pass", "violated"]\n')
    data = json.loads(results.read_text())
    row = next(r for r in data["rows"] if r["system"] == "model:wl7318" and r["requirement"] == "WL3464.R3.1")
    out = tmp_path / "r.json"
    for status, code in (("pass", 0), ("violated", 0), ("not_exercised", 1)):
        row.update(status=status, witnesses=[])
        out.write_text(json.dumps({**data, "rows": [row]}))
        capsys.readouterr()
        assert main(["gate", str(gate), str(out)]) == code, status
    assert "WL3464.R3.1 on history:model:wl7318: pinned pass or violated, now not_exercised" in capsys.readouterr().out


@pytest.mark.parametrize("content,where", [
    ("{", "not valid JSON"), ('{"schema": "x"}', "not a replcheck results file"),
    ('{"schema": "replcheck.results/1", "rows": [{"source": "z3"}]}', "rows[0]"),
])
def test_bad_results_file_is_one_line(tmp_path, capsys, content, where):
    f = tmp_path / "r.json"
    f.write_text(content)
    assert main(["report", str(f), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and where in err[0] and not (tmp_path / "out").exists()


def test_bad_gate_file_is_one_line(results, tmp_path, capsys):
    gate = tmp_path / "g.toml"
    gate.write_text('[verdicts."history:model:wl7318"]\n"WL344.WAIT.RULE" = "maybe"\n')
    assert main(["gate", str(gate), str(results)]) == 2
    assert "unknown verdict 'maybe'" in capsys.readouterr().err
    gate.write_text('[verdicts."history:model:wl7318"]\n"WL344.WAIT.RULE" = []\n')
    assert main(["gate", str(gate), str(results)]) == 2


@pytest.mark.slow
def test_committed_models_gate_holds_on_the_default_verify(tmp_path):
    """The CI gate itself: `replcheck verify` on its embedded defaults, as users run it (a process
    of its own), gives exactly the verdicts pinned in ci/models.toml. The suite's one default
    verify: what else needs one reads it here (a report it replaces whole, its progress line)."""
    out = tmp_path / "r"
    out.mkdir()
    (out / "stale.txt").write_text("from an earlier run")
    (out / ".replcheck-output").write_text('{"schema": "replcheck.output/1", "kind": "report"}')  # an earlier report
    run = subprocess.run([sys.executable, "-m", "replcheck.cli", "verify", "--out", str(out)],
                         capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert run.returncode == 0, run.stdout + run.stderr[-2000:]
    assert main(["gate", str(ROOT / "ci" / "models.toml"), str(out / "results.json")]) == 0
    results = json.loads((out / "results.json").read_text())
    # every mutant of the registry found by verify's own state-machine search (the one place it
    # runs in the suite), in at most 8 steps
    found = {s["system"]: s["shrunk_steps"] for s in results["searches"] if s["found"]}
    # every one: master-fde-lag and filtered-ddl-gtid-lost only by the mixed family's machine
    assert sorted(f"mutant:{m}" for m in REGISTRY if f"mutant:{m}" not in found) == []
    assert {m: n for m, n in found.items() if n > 8} == {}
    # the earlier report replaced whole, one progress line (done/total, time left), no finding, the
    # Traces written and a declared violation kept with its History
    assert not (out / "stale.txt").exists() and results["findings"] == []
    assert re.search(r"\[verify\] \d+/\d+ checks, .* left", run.stderr)
    chain = [r for r in results["rows"] if r["system"] == "model:wl344" and r["requirement"] == "WL344.CHAIN.IMMEDIATE"
             and r["history"] == "chain-hop-lag"]
    assert chain[0]["status"] == "violated" and chain[0]["expected"] == "violated"
    assert (out / "traces" / "model-wl344" / "chain-hop-lag.jsonl").exists()


def test_pytest_plugin_counts_marked_tests(pytester):
    pytester.makepyfile("""
        import pytest
        @pytest.mark.requirement("WL344.WAIT.RULE", "WL7318.F2")
        def test_delays(): assert True
        @pytest.mark.requirement("WL1720.ACK.WAIT")
        def test_acks(): assert 1 == 2, "commit returned before the ack"
        @pytest.mark.requirement("WL3464.R3.1")
        @pytest.mark.skip(reason="no server here")
        def test_incident(): pass
        def test_unmarked(): pass
    """)
    out = pytester.path / "results.json"
    result = pytester.runpytest("--replcheck-results", str(out), "--replcheck-system", "my-server", "-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=1, skipped=1)
    rows = {(r["requirement"], r["status"]) for r in json.loads(out.read_text())["rows"]}
    assert rows == {("WL344.WAIT.RULE", "pass"), ("WL7318.F2", "pass"), ("WL1720.ACK.WAIT", "violated"),
                    ("WL3464.R3.1", "not_exercised")}
    doc = report.build_report(report.load_results([out]))
    ack = next(r for r in doc["requirements"] if r["id"] == "WL1720.ACK.WAIT")["verdicts"]["pytest:my-server"]
    assert ack["status"] == "violated" and "commit returned before the ack" in ack["witnesses"][0]["message"]


def test_pytest_plugin_refuses_an_unknown_requirement(pytester):
    pytester.makepyfile("""
        import pytest
        @pytest.mark.requirement("WL344.NO_SUCH_THING")
        def test_x(): pass
    """)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown requirement 'WL344.NO_SUCH_THING'*"])


def test_hypothesis_profiles_are_registered(pytester):
    pytester.makepyfile("""
        from hypothesis import settings
        def test_profile(): assert settings().derandomize and settings().max_examples == 100
    """)
    # In a subprocess: loading a profile changes Hypothesis's default for the whole process.
    pytester.runpytest_subprocess("--replcheck-profile", "replcheck-ci").assert_outcomes(passed=1)


def test_summary_md_carries_no_raw_html_and_reproduce_commands_quote_paths():
    """summary.md is pasted into CI comments: text from traces must not become HTML or break its
    table; a History path with spaces or quotes must survive being pasted into a shell."""
    rows = [{"source": "history", "system": "model:wl344", "history": "h", "requirement": "WL344.WAIT.RULE",
             "status": "violated", "witnesses": [{"message": "<img src=x onerror=alert(1)> | `x`", "lines": [2]}]}]
    doc = report.build_report([{"schema": "replcheck.results/1", "rows": rows, "history_files": {"h": "my dir/h's.jsonl"},
                                "findings": [{"kind": "model violates its seed", "system": "<b>", "requirement": "r", "witness": "<script>"}]}])
    md = report.markdown(doc)
    assert "<img" not in md and "<script>" not in md and "<b>" not in md and "&lt;img" in md and "\\|" in md
    [cell] = [v for req in doc["requirements"] for v in req["verdicts"].values() if v["status"] == "violated"]
    assert shlex.split(cell["witnesses"][0]["reproduce"])[2] == "my dir/h's.jsonl"


# -- inconclusive runs and the honest counts -------------------------------------------------------
def _rows(*cells) -> dict:
    """A results document from (source, system, requirement, status) tuples."""
    rows = [{"source": src, "system": system, "history": "h", "requirement": req, "status": status, "checked": 1,
             "witnesses": [{"message": f"{status} here", "lines": [7]}] if status in ("violated", "inconclusive") else [],
             **({"tlc": {"check": "h", "module": "M", "config": "M.cfg", "distinct_states": 9, "depth": 3}} if src == "tlc" else {})}
            for src, system, req, status in cells]
    return {"schema": "replcheck.results/1", "rows": rows, "findings": []}


MARIADB = ("conformance", "MariaDB 10.11")


def test_one_inconclusive_run_outranks_the_passes_of_others():
    doc = _rows((*MARIADB, "WL344.CM.SET", "pass"), (*MARIADB, "WL344.CM.SET", "inconclusive"),
                (*MARIADB, "WL344.CM.SET", "pass"))
    [v] = next(r for r in report.build_report([doc])["requirements"] if r["id"] == "WL344.CM.SET")["verdicts"].values()
    assert v["status"] == "inconclusive" and v["counts"] == {"pass": 2, "inconclusive": 1}
    assert [w["message"] for w in v["witnesses"]] == ["inconclusive here"]


def test_the_gate_fails_an_inconclusive_verdict_and_refuses_to_pin_one(tmp_path, capsys):
    gate = tmp_path / "g.toml"
    gate.write_text('[verdicts."conformance:MariaDB 10.11"]\n"WL344.CM.SET" = ["pass", "violated"]\n')
    out = tmp_path / "r.json"
    out.write_text(json.dumps(_rows((*MARIADB, "WL344.CM.SET", "inconclusive"))))
    capsys.readouterr()
    assert main(["gate", str(gate), str(out)]) == 1
    assert ("WL344.CM.SET on conformance:MariaDB 10.11: pinned pass or violated, now inconclusive: a scenario's run "
            "did not test it; investigate the run (h: inconclusive here)") in capsys.readouterr().out
    gate.write_text('[verdicts."conformance:MariaDB 10.11"]\n"WL344.CM.SET" = "inconclusive"\n')
    assert main(["gate", str(gate), str(out)]) == 2
    assert "inconclusive cannot be pinned" in capsys.readouterr().err


def test_a_scenario_inconclusive_on_the_reference_model_fails_the_models_gate():
    f = {"kind": "scenario inconclusive", "system": "model:wl344", "history": "d1-back-to-zero", "requirement": "WL344.CM.SET",
         "witness": "precondition not observed: every change_master on B succeeded"}
    rep = report.build_report([{**_rows(), "findings": [f]}])
    assert any(d.startswith("scenario inconclusive: model:wl344 WL344.CM.SET: precondition not observed")
               for d in report.derived_differences(rep, []))


def test_the_headline_counts_evidence_by_kind_and_each_real_servers_verdicts():
    doc = _rows(("history", "model:wl344", "WL344.CM.SET", "pass"), ("history", "model:wl344", "WL344.CM.RANGE", "violated"),
                ("history", "model:wl344", "WL344.CM.DEFAULT", "not_exercised"),
                ("history", "mutant:stop-event", "GGID.UNIQUE", "violated"),  # about the checks: no evidence
                ("campaign", "model:wl7318", "WL7318.F1", "pass"),
                ("z3", "z3", "WL344.CM.SET", "pass"), ("z3", "z3", "WL344.CM.INVALID", "not_exercised"),
                ("state-machine", "model:wl344", "WL344.CM.SET", "pass"),
                ("tlc", "Incident_small", "WL3464.GAP", "pass"), ("tlc", "Incident_small", "WL3464.HOLD", "not_exercised"),
                ("tlc", "mutant:no-incident", "WL3464.R3.1", "violated"),  # about the check: no evidence
                (*MARIADB, "WL344.CM.SET", "pass"), (*MARIADB, "WL344.CM.RANGE", "violated"),
                (*MARIADB, "WL344.CM.INVALID", "inconclusive"), (*MARIADB, "WL344.CM.DEFAULT", "not_exercised"))
    rep = report.build_report([doc])
    total = rep["summary"]["requirements"]
    assert rep["counts"] == {"evidence": {"model": 3, "proof": 1, "machine": 1, "tlc": 1, "server": 2},
                             "servers": {"conformance:MariaDB 10.11": {"judged": 2, "inconclusive": 1, "not_exercised": total - 3}}}
    assert rep["summary"]["inconclusive"] == 1
    Draft202012Validator(io.schema("report")).validate(rep)
    words = (f"{total} requirements; with evidence from a property on a model 3, a proof 1, a state machine 1, TLC 1, "
             f"a real server 2; MariaDB 10.11: 2 judged, 1 inconclusive, {total - 3} not exercised")
    assert report.headline(rep) == words
    md = report.markdown(rep)
    assert words in md and "**1 inconclusive**" in md and "| WL344.CM.INVALID | conformance:MariaDB 10.11 | inconclusive |" in md
    suite = next(s for s in ET.fromstring(report.junit(rep)) if s.get("name") == "conformance:MariaDB 10.11")
    assert suite.get("errors") == "1" and suite.get("failures") == "1"
    from replcheck.html import render_html
    page = render_html(rep)
    assert "<th>inconclusive</th>" in page and 's-inconclusive' in page
