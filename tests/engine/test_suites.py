"""The suite scenarios (spec/histories/suites/, spec/suites.toml): each names its mysql-test source,
runs on the model of its flavour, and every expectation of its .result file holds there or is a
documented flavour difference that still shows; verify carries them into results, reports and gates."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replcheck import io, report, suites, systems, verify
from replcheck.properties import expect
from replcheck.properties.core import PASS, VIOLATED
from replcheck.properties.judge import judge
from conftest import HANG_GUARD_S, REPO
from test_harness_mariadb import require_server

SCENARIOS = suites.histories()
REPOS = {"MariaDB/server", "mysql/mysql-server", "google/mysql"}


def test_the_corpus_has_its_scenarios_each_naming_its_source():
    assert len(SCENARIOS) >= 40
    for path in SCENARIOS:
        h = io.load_history(path)
        suite = h["header"]["suite"]
        assert h["header"]["name"] == path.stem
        assert suite["repo"] in REPOS and suite["test"].endswith(".test") and suite["result"].endswith(".result")
        assert suite["flavour"] in suites.flavours()
        assert expect.expectations(h), f"{path.name}: no expectation"


def test_every_flavour_maps_to_its_flavour_model():
    assert suites.flavours() == {"mariadb-10": "model:mariadb-10.11", "mysql-5.6": "model:mysql-5.7",
                                 "mysql-5.7": "model:mysql-5.7", "mysql-8.0": "model:mysql-8.0",
                                 "google-5.0": "model:google-5.0"}
    assert all(systems.get(s).seed for s in suites.flavours().values())


@pytest.mark.parametrize("history,runs_on", [
    # an embedded History: every seed model, and the flavour models whose `histories` name it
    ("gg-hier-basic", {"model:wl344", "model:wl7318", "model:groupid", "model:google-5.0"}),
    ("clock-offsets", {"model:wl344", "model:wl7318", "model:groupid", "model:mysql-8.0"}),
    # a conformance History: conform's reference too
    ("ss-counters", {"model:wl344", "model:wl7318", "model:groupid", "model:mariadb-10.11"}),
])
def test_flavour_models_run_what_concerns_them(history, runs_on):
    from replcheck.spec import ROOT
    path = ROOT.joinpath("histories", f"{history}.jsonl")
    names = ["model:wl344", "model:wl7318", "model:groupid", "model:mariadb-10.11", "model:mysql-8.0",
             "model:mysql-5.7", "model:google-5.0"]
    assert set(suites.systems_for(io.load_history(path), path, names)) == runs_on


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_each_scenario_holds_on_its_flavour_model(path):
    h = io.load_history(path)
    [name] = suites.systems_for(h, path, list(systems.systems()))
    j = judge(systems.get(name), h)
    differs = expect.declared(h, name)
    for v in j.expectations:
        if v.requirement in differs:  # documented, and still showing: never silenced
            assert v.status == VIOLATED, f"{v.requirement}: documented as differing on {name}, but {v.status}"
        else:
            assert v.status == PASS, f"{v.requirement}: {v.status} {[w.message for w in v.witnesses]}"
    assert not j.findings, [(v.requirement, v.witnesses[0].message) for v in j.findings]


def test_an_unknown_flavour_is_bad_input(tmp_path):
    path = tmp_path / "s.jsonl"
    text = SCENARIOS[0].read_text().replace('"flavour": "', '"flavour": "x', 1)
    path.write_text(text)
    with pytest.raises(io.InputError, match=r"s.jsonl:1: suite.flavour: unknown flavour"):
        suites.systems_for(io.load_history(path), path, ["model:wl344"])


def test_verify_runs_a_scenario_on_its_flavour_only_and_reports_its_expectations():
    path = next(p for p in SCENARIOS if p.stem == "mdb-rpl_delayed_slave-natural-lag")
    results = verify.Results()
    verify.run_histories([path], ["model:wl344", "model:mariadb-10.11", "model:wl7318", "mutant:stop-applies-waited-event"],
                         results, None, lambda _: None)
    assert {r["system"] for r in results.rows} == {"model:mariadb-10.11"}
    rows = [r for r in results.rows if expect.is_expectation(r["requirement"])]
    assert len(rows) == len(expect.expectations(io.load_history(path)))
    [differs] = [r for r in rows if r.get("expected")]
    assert differs["status"] == VIOLATED and "User sleep" in differs["reason"] and differs["text"].startswith("SHOW SLAVE STATUS")
    doc = report.build_report([results.document()])
    assert doc["summary"]["expectations"] == len(rows) and doc["summary"]["expectations_violated"] == 0
    assert doc["summary"]["expectations_differ"] == 1
    assert not [d for d in report.derived_differences(doc, []) if "EXPECT" in d]


@pytest.fixture(scope="module")
def server():
    return require_server()


def test_a_suite_scenario_reads_as_its_result_on_mariadb(server, tmp_path, short_tmp):
    # conform runs the scenario's expectations on the real server: the runner reads the rows each
    # node holds and gtid_slave_pos where the .result does (rpl_gtid_basic's skip counter: a count
    # ending inside a group skips the rest of it), and reports them as rows of their own
    path = next(p for p in SCENARIOS if p.stem == "mdb-rpl_gtid_basic-skip-counter")
    r = subprocess.run([sys.executable, "-m", "replcheck.cli", "conform", "--server", "mariadb", "--history", str(path),
                        "--out", str(tmp_path / "out")], cwd=REPO, capture_output=True, text=True,
                       timeout=HANG_GUARD_S, env={**os.environ, "REPLCHECK_TMPDIR": short_tmp})
    assert r.returncode in (0, 1), r.stderr[-2000:]
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    rows = {row["requirement"]: row for row in doc["rows"] if expect.is_expectation(row["requirement"])}
    assert set(rows) == {eid for eid, _ in expect.expectations(io.load_history(path))}
    assert {(row["source"], row["status"]) for row in rows.values()} == {("conformance", PASS)}, \
        [f["witness"] for f in doc["findings"] if f["kind"] == "expectation"]
    trace = [json.loads(line) for line in (tmp_path / "out" / "traces" / "mariadb" / f"{path.stem}.jsonl").open()][1:]
    seen = {o["expect"]: o["value"] for o in trace if o["kind"] == "observed"}
    assert seen[f"{path.name}:23"] == ["create_t1", "ins11", "ins13", "ins15", "ins16"]
    assert seen[f"{path.name}:24"]["gtid_slave_pos"] == "0-1-1,2-1-1022"  # the .result looks for 2-1-1022 in it
